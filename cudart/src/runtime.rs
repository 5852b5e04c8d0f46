//! The runtime's state, one per process, and the wrapper every API entry point goes through:
//! it takes the state's lock, turns a panic into `cudaErrorUnknown` with a line saying so,
//! and keeps `cudaGetLastError`'s error and the sticky errors a lost context gives.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use ptx_emu::{Emulator, EventId, Module, RunOptions, Schedule, StreamId};

use crate::errors;
use crate::fatbin;
use crate::out::Output;
use crate::site::{Place, Site};

pub use ptx_emu::run_env::{
    CHECKS_OFF as CHECKS_OFF_ENV, DEVICES as DEVICES_ENV, SCHEDULE as SCHEDULE_ENV,
    STEP_BUDGET as STEP_BUDGET_ENV,
};

/// A failed call: the CUDA error it returns, and, for a host-side bug, the finding to report.
#[derive(Debug)]
pub struct Failure {
    pub code: i32,
    pub finding: Option<Box<HostFinding>>,
    /// Where to report it, when not at the call itself (a launch's `<<<…>>>`).
    pub site: Option<Box<Site>>,
}

impl Failure {
    pub fn code(code: i32) -> Failure {
        Failure {
            code,
            finding: None,
            site: None,
        }
    }

    /// A host-side bug: reported at the call's line, and the call returns `code`.
    pub fn host(code: i32, kind: &'static str, text: String) -> Failure {
        Failure {
            code,
            finding: Some(Box::new(HostFinding { kind, text })),
            site: None,
        }
    }
}

/// A bug only the host side can make (a copy past an allocation's end, a freed pointer).
#[derive(Debug)]
pub struct HostFinding {
    pub kind: &'static str,
    pub text: String,
}

pub type ApiResult<T = ()> = Result<T, Failure>;

/// One registered fatbinary: its images, and its PTX parsed the first time a kernel or variable
/// of it is used.
#[derive(Debug)]
pub struct Fatbin {
    /// The images of each translation unit: one unit, or with `-rdc=true` every unit the
    /// device link joined (see [`fatbin::units_from_wrapper`]).
    pub units: Result<Vec<Vec<fatbin::Image>>, String>,
    pub module: Option<Result<Arc<Module>, String>>,
    /// What ptxas says each kernel takes, by PTX name: counted on the first question that
    /// needs it (see `resources.rs`); empty when no ptxas could count them.
    pub resources: Option<HashMap<String, crate::resources::Resources>>,
}

#[derive(Debug)]
pub struct Function {
    pub fatbin: usize,
    /// The PTX name (`_Z9histogramPKhiPj`).
    pub name: String,
    /// Dynamic shared memory a launch may ask for: 48 KiB until the program opts in to more
    /// (`cudaFuncSetAttribute(…, cudaFuncAttributeMaxDynamicSharedMemorySize, …)`).
    pub max_dynamic_shared: usize,
    /// `cudaFuncAttributes::ptxVersion`, found on the first query (the unit's PTX is searched).
    pub ptx_version: std::cell::OnceCell<u32>,
    /// Its `__launch_bounds__` in threads, found in its PTX on the first launch.
    pub launch_bound: std::cell::OnceCell<Option<u32>>,
}

#[derive(Debug)]
pub struct Variable {
    pub fatbin: usize,
    pub name: String,
    pub size: usize,
    /// For a `__managed__` variable: the host's copy, which the program reaches through the
    /// pointer the runtime wrote at registration.
    pub managed_host: Option<usize>,
}

/// `<<<grid, block, shared, stream>>>` between `__cudaPushCallConfiguration` and the launch.
#[derive(Clone, Copy, Debug)]
pub struct CallConfig {
    pub grid: crate::abi::Dim3,
    pub block: crate::abi::Dim3,
    pub shared: usize,
    pub stream: usize,
    pub site: Option<Site>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocKind {
    Device,
    /// `cudaMallocHost`, `cudaHostAlloc`: host memory the device reaches at the same address.
    PinnedHost,
    Managed,
    /// `cudaHostRegister`'d memory, at the address the device reaches it (`host_register.rs`).
    Registered,
}

#[derive(Clone, Debug)]
pub struct Allocation {
    pub size: usize,
    pub label: String,
    pub kind: AllocKind,
    pub device: u32,
    pub site: Option<Site>,
}

#[derive(Clone, Debug)]
pub struct Freed {
    pub base: u64,
    pub size: usize,
    pub label: String,
    pub freed_at: Option<Site>,
}

#[derive(Debug)]
pub struct StreamEntry {
    pub id: StreamId,
    pub device: u32,
    /// Waits for the legacy default stream, and it for this one (not `cudaStreamNonBlocking`).
    pub blocking: bool,
    pub destroyed: bool,
    /// Operations queued so far; the legacy stream's implicit waits skip streams with nothing new.
    pub ops: u64,
    /// `ops` when the host last waited for the stream: everything up to there has finished.
    pub host_waited: u64,
    /// As created, for `cudaStreamGetFlags` and `cudaStreamGetPriority`.
    pub flags: u32,
    pub priority: i32,
}

#[derive(Debug)]
pub struct EventEntry {
    pub recorded: Option<EventId>,
    /// The stream its last record was queued on.
    pub stream: Option<usize>,
    pub at: Option<Instant>,
    pub timing: bool,
    pub destroyed: bool,
}

pub struct Runtime {
    pub emu: Emulator,
    pub options: RunOptions,
    pub out: Output,
    pub fatbins: Vec<Fatbin>,
    pub functions: HashMap<usize, Function>,
    /// `__cudaGetKernel`'s handles: index + 1 into this list.
    pub kernel_handles: Vec<usize>,
    pub variables: HashMap<usize, Variable>,
    /// Where the API call being run came from (the first frame outside the runtime).
    pub call_site: Option<Site>,
    /// The host lines stream operations were queued at, as the marks in their names refer to
    /// them (`report::op_label`), resolved only when a report shows one.
    pub op_sites: Vec<Site>,
    pub last_error: i32,
    pub sticky: i32,
    /// The launch a signal stopped (`interrupt.rs`), as `kernel<<<grid, block>>> at file:line`.
    pub interrupted_launch: Option<String>,
    pub allocations: BTreeMap<u64, Allocation>,
    pub freed: Vec<Freed>,
    pub streams: Vec<StreamEntry>,
    /// Per device: the index in `streams` of its legacy default stream.
    pub legacy: Vec<usize>,
    /// Per host thread and device: the index in `streams` of the thread's default stream
    /// (`cudaStreamPerThread`, and stream 0 of a program built with `--default-stream
    /// per-thread`), made on its first use.
    pub per_thread: HashMap<(std::thread::ThreadId, u32), usize>,
    /// The last op count of stream `b` that the legacy stream of its device waited for, and of
    /// the legacy stream that `b` waited for.
    pub joined: HashMap<(usize, usize), u64>,
    pub events: Vec<EventEntry>,
    /// Device `printf` output held until the host next synchronizes, as a GPU delivers it.
    pub printf: String,
    /// Failed asserts' messages, held with `printf`'s output and delivered to stderr, where a
    /// GPU's driver writes them.
    pub assert_messages: String,
    pub findings: usize,
    pub started: Instant,
    pub host_window_next: u64,
    /// Sites resolved so far, by all their frames: CUDA's C++ wrappers share their innermost
    /// frame among every call of them.
    pub places: HashMap<Site, Place>,
    /// Set by a launch while managed memory exists, until the host synchronizes: the launch's
    /// site (see `managed.rs`).
    pub managed_launch: Option<Option<Site>>,
    /// Graphs, instantiated graphs, captures, conditional handles and the graph memory pool.
    pub graphs: crate::graphs::Graphs,
    /// `cudaHostRegister`'d ranges, by the program's address.
    pub registered: crate::host_register::Registrations,
    /// Set by `cudaLaunchCooperativeKernel` around its launch.
    pub cooperative: bool,
    /// What `cudaDeviceSetLimit` set, by `cudaLimit` number, for `cudaDeviceGetLimit`.
    pub limits: HashMap<i32, usize>,
    /// What `cudaDeviceSetCacheConfig` set, for `cudaDeviceGetCacheConfig`.
    pub cache_config: i32,
    /// Whether the runtime has said that kernels' registers are unknown (no ptxas).
    pub said_registers_unknown: bool,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

/// Pinned and managed memory is mapped here, where it can have the same address in the
/// emulator: above its device allocations, below the windows it keeps for module variables,
/// the device heap and shared and local memory.
pub const HOST_WINDOW: u64 = 0x0000_4000_0000_0000;

fn options_from_env() -> RunOptions {
    let mut options = RunOptions {
        // The launch path checks what a kernel opted in to; the emulator holds what sm_90 can.
        shared_limit: crate::launch::OPT_IN_SHARED as u32,
        ..RunOptions::default()
    };
    if let Ok(schedule) = std::env::var(SCHEDULE_ENV) {
        let (name, seed) = schedule.split_once(':').unwrap_or((&schedule, "0"));
        let seed = seed.parse().unwrap_or(0);
        options.schedule = match name {
            "random" => Schedule::Random { seed },
            "adversarial" => Schedule::Adversarial { seed },
            "lanes" => Schedule::Lanes { seed },
            _ => Schedule::Hardware,
        };
    }
    if let Some(budget) = std::env::var(STEP_BUDGET_ENV)
        .ok()
        .and_then(|b| b.parse().ok())
    {
        options.step_budget = budget;
    }
    if let Ok(off) = std::env::var(CHECKS_OFF_ENV) {
        for check in off.split(',') {
            match check.trim() {
                "race" => options.racecheck = false,
                "sync" => options.synccheck = false,
                "mem" => options.memcheck = false,
                "init" => options.initcheck = false,
                _ => {}
            }
        }
    }
    options
}

impl Runtime {
    fn new() -> Runtime {
        let mut emu = Emulator::new();
        let devices = std::env::var(DEVICES_ENV)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1u32)
            .clamp(1, 64);
        let _ = emu.set_device_count(devices);
        let mut streams = Vec::new();
        let mut legacy = Vec::new();
        for device in 0..devices {
            let _ = emu.set_device(device);
            legacy.push(streams.len());
            streams.push(StreamEntry {
                id: emu.create_stream(),
                device,
                blocking: true,
                destroyed: false,
                ops: 0,
                host_waited: 0,
                flags: 0,
                priority: 0,
            });
        }
        let _ = emu.set_device(0);
        Runtime {
            emu,
            options: options_from_env(),
            out: Output::from_env(),
            fatbins: Vec::new(),
            functions: HashMap::new(),
            kernel_handles: Vec::new(),
            limits: HashMap::new(),
            cache_config: 0,
            per_thread: HashMap::new(),
            said_registers_unknown: false,
            variables: HashMap::new(),
            call_site: None,
            op_sites: Vec::new(),
            last_error: errors::SUCCESS,
            sticky: errors::SUCCESS,
            interrupted_launch: None,
            allocations: BTreeMap::new(),
            freed: Vec::new(),
            streams,
            legacy,
            joined: HashMap::new(),
            events: Vec::new(),
            printf: String::new(),
            assert_messages: String::new(),
            findings: 0,
            started: Instant::now(),
            host_window_next: HOST_WINDOW,
            places: HashMap::new(),
            managed_launch: None,
            graphs: crate::graphs::Graphs::default(),
            registered: Default::default(),
            cooperative: false,
        }
    }

    /// Where `site` is in the program, resolved once.
    pub fn place(&mut self, site: Option<Site>) -> Place {
        let Some(site) = site else {
            return Place::default();
        };
        self.places
            .entry(site)
            .or_insert_with(|| site.resolve())
            .clone()
    }
}

static RUNTIME: Mutex<Option<Runtime>> = Mutex::new(None);

pub fn lock() -> MutexGuard<'static, Option<Runtime>> {
    RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs one API call on the runtime: `name` is the C function's, for the lines that name it.
/// Returns the CUDA error code.
pub fn api(name: &str, call: impl FnOnce(&mut Runtime) -> ApiResult) -> i32 {
    let site = crate::site::caller();
    let _in_call = crate::interrupt::InCall::enter();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut guard = lock();
        let rt = guard.get_or_insert_with(|| {
            crate::exit::install();
            Runtime::new()
        });
        crate::device::enter_thread(rt);
        crate::managed::open(rt);
        rt.call_site = site;
        let result = if rt.sticky != errors::SUCCESS && !name.starts_with("cudaGetError") {
            Err(Failure::code(rt.sticky))
        } else {
            call(rt)
        };
        crate::managed::close(rt);
        crate::interrupt::end_if_asked(rt, name, site);
        match result {
            Ok(()) => errors::SUCCESS,
            Err(failure) => {
                if let Some(mut finding) = failure.finding {
                    // A program that goes on after the call must know the call did nothing.
                    if failure.code != errors::SUCCESS {
                        let (error, _) = errors::name_and_message(failure.code);
                        finding.text += &format!("; {name} did nothing and returned {error}");
                    }
                    let at = failure.site.map(|s| *s).or(site);
                    crate::report::host_finding(rt, name, at, *finding);
                }
                rt.last_error = failure.code;
                failure.code
            }
        }
    }));
    match outcome {
        Ok(code) => code,
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!(
                    "{}{name} failed inside Racetrack's runtime ({why}): a bug in Racetrack, please report it\n",
                    crate::out::PREFIX
                )
                .as_bytes(),
            );
            errors::UNKNOWN
        }
    }
}

/// Like [`api`] for calls that return something other than an error code: runs `call` on the
/// runtime, `fallback` if the runtime panicked.
pub fn query<T>(fallback: T, call: impl FnOnce(&mut Runtime) -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut guard = lock();
        let rt = guard.get_or_insert_with(|| {
            crate::exit::install();
            Runtime::new()
        });
        crate::device::enter_thread(rt);
        crate::managed::open(rt);
        let answer = call(rt);
        crate::managed::close(rt);
        answer
    }))
    .unwrap_or(fallback)
}

/// The state without waiting: for a crash handler, which must not wait for a lock its own
/// thread may hold.
pub fn try_lock() -> Option<MutexGuard<'static, Option<Runtime>>> {
    match RUNTIME.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

/// Writes a call's answer through the program's out-pointer: `cudaErrorInvalidValue` for a null one.
///
/// # Safety
/// `out` is null or points to a `T` the program owns, as the C API requires.
pub unsafe fn put<T>(out: *mut T, value: T) -> ApiResult {
    if out.is_null() {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    // SAFETY: the caller's contract above.
    unsafe { out.write(value) };
    Ok(())
}
