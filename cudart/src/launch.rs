//! Launches: `<<<…>>>` (pushed configuration, then the stub's launch), `cudaLaunchKernel` and
//! friends. Each runs on the emulator with every checker on; its findings name the kernel's
//! lines and the host line of the launch.

use std::ffi::{c_int, c_uint, c_void};

use ptx_emu::{KernelArg, LaunchConfig, RunReport};

use crate::abi::{self, Dim3};
use crate::errors;
use crate::memory::{self, Place};
use crate::register;
use crate::report::{self, LaunchName};
use crate::runtime::{ApiResult, CallConfig, Failure, Runtime, api};
use crate::site::{Site, caller};
use crate::streams::{before_op, stream_index};

/// The limits of the emulated device (an H100's), which a launch must keep to.
const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
const MAX_THREADS: u64 = 1024;
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];
pub const MAX_SHARED: usize = 48 * 1024;
/// What a kernel may have once it opts in (sm_90: 227 KiB).
pub const OPT_IN_SHARED: usize = 227 * 1024;

thread_local! {
    /// `<<<…>>>` configurations pushed and not yet popped. Each host thread has its own, as in
    /// CUDA's runtime: two threads launching at once (simpleCallback's workers) must each get the
    /// stream they named.
    static CONFIGS: std::cell::RefCell<Vec<CallConfig>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The `<<<…>>>` site of the launch whose configuration this thread just popped.
    static LAUNCH_SITE: std::cell::Cell<Option<Site>> = const { std::cell::Cell::new(None) };
}

/// The `<<<…>>>` site of this thread's launch in progress, or the site of a direct call.
fn launch_site(direct: Option<Site>) -> Option<Site> {
    LAUNCH_SITE.take().or(direct)
}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: *mut c_void,
) -> c_uint {
    let site = caller();
    crate::runtime::query(1, |_| {
        CONFIGS.with_borrow_mut(|configs| {
            configs.push(CallConfig {
                grid,
                block,
                shared,
                stream: stream as usize,
                site,
            })
        });
        0
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cudaPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared: *mut usize,
    stream: *mut *mut c_void,
) -> i32 {
    crate::runtime::query(errors::MISSING_CONFIGURATION, |_| {
        let Some(config) = CONFIGS.with_borrow_mut(Vec::pop) else {
            return errors::MISSING_CONFIGURATION;
        };
        LAUNCH_SITE.set(config.site);
        // SAFETY: nvcc's stub passes four locals to fill.
        unsafe {
            *grid = config.grid;
            *block = config.block;
            *shared = config.shared;
            *stream = config.stream as *mut c_void;
        }
        errors::SUCCESS
    })
}

/// Whether each parameter of a kernel is a pointer, from its C++ signature (`None` for an
/// `extern "C"` kernel, whose PTX name carries none).
fn pointer_params(name: &str) -> Option<Vec<bool>> {
    let text = demangled(name)?;
    let open = text.rfind('(')?;
    let inner = text.get(open + 1..text.rfind(')')?)?;
    let mut params = Vec::new();
    let (mut depth, mut current) = (0i32, String::new());
    for c in inner.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                params.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        params.push(current);
    }
    Some(params.iter().map(|p| p.trim_end().ends_with('*')).collect())
}

fn demangled(name: &str) -> Option<String> {
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    let options = cpp_demangle::DemangleOptions::new().no_return_type();
    symbol.demangle_with_options(&options).ok()
}

/// How reports name a kernel: `histogram`, `reduce<float, 256>` (the emulator names the kernels
/// its device-side launches run the same way).
pub fn display_name(name: &str) -> String {
    ptx_emu::function_display_name(name)
}

fn check_shape(grid: Dim3, block: Dim3, shared: usize, max_shared: usize) -> ApiResult {
    let (g, b) = (grid.array(), block.array());
    let threads: u64 = b.iter().map(|&d| d as u64).product();
    // CUDA 13's launch path answers every shape a device cannot run with "invalid argument"
    // (older runtimes said cudaErrorInvalidConfiguration), as an H100 did when asked.
    let bad = |why: String| {
        Failure::host(
            errors::INVALID_VALUE,
            "launch the device cannot run",
            format!("{why}; the launch returns cudaErrorInvalidValue, as on a GPU"),
        )
    };
    if g.contains(&0) || b.contains(&0) {
        return Err(bad(format!(
            "a grid of {g:?} blocks of {b:?} threads has a zero dimension"
        )));
    }
    for axis in 0..3 {
        if b[axis] > MAX_BLOCK[axis] {
            return Err(bad(format!(
                "a block {} threads wide in {} (at most {})",
                b[axis],
                ["x", "y", "z"][axis],
                MAX_BLOCK[axis]
            )));
        }
        if g[axis] > MAX_GRID[axis] {
            return Err(bad(format!(
                "a grid {} blocks wide in {} (at most {})",
                g[axis],
                ["x", "y", "z"][axis],
                MAX_GRID[axis]
            )));
        }
    }
    if threads > MAX_THREADS {
        return Err(bad(format!(
            "a block of {threads} threads ({}×{}×{}; at most {MAX_THREADS})",
            b[0], b[1], b[2]
        )));
    }
    if shared > max_shared {
        let how = if max_shared == MAX_SHARED {
            " without cudaFuncSetAttribute(…, cudaFuncAttributeMaxDynamicSharedMemorySize, …)"
        } else {
            ", as cudaFuncSetAttribute set it"
        };
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "launch the device cannot run",
            format!("{shared} bytes of dynamic shared memory (at most {max_shared}{how})"),
        ));
    }
    Ok(())
}

/// A block larger than the kernel's launch bounds (`cudaErrorInvalidValue`), or than the
/// register file holds at the kernel's registers per thread (`cudaErrorLaunchOutOfResources`),
/// fails to launch as on an H100.
fn check_resources(rt: &mut Runtime, function: usize, block: Dim3) -> ApiResult {
    let b = block.array();
    let threads: u64 = b.iter().map(|&d| d as u64).product();
    if let Some(bound) = crate::resources::launch_bound_of(rt, function)
        && threads > bound as u64
    {
        // An H100 answers this one as it answers any shape it cannot run.
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "launch the device cannot run",
            format!(
                "a block of {threads} threads, where the kernel's __launch_bounds__ allow {bound}; the launch returns cudaErrorInvalidValue, as on a GPU"
            ),
        ));
    }
    // 255 registers a thread, the most there are, still fit 256 threads in the register file.
    if threads > 256 {
        let needs = crate::resources::of(rt, function);
        let most = needs.max_threads_per_block();
        if threads > most as u64 {
            let registers = needs.registers().unwrap_or_default();
            return Err(Failure::host(
                errors::LAUNCH_OUT_OF_RESOURCES,
                "launch the device cannot run",
                format!(
                    "a block of {threads} threads, where at {registers} registers a thread the register file holds {most}; the launch returns cudaErrorLaunchOutOfResources (too many resources requested for launch), as on a GPU"
                ),
            ));
        }
    }
    Ok(())
}

/// The launch itself: `function` is the kernel's host stub. Host-side findings are reported
/// at `site`, the `<<<…>>>`.
#[allow(clippy::too_many_arguments)]
pub fn launch(
    rt: &mut Runtime,
    function: usize,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: usize,
    site: Option<Site>,
) -> ApiResult {
    launch_at(rt, function, grid, block, args, shared, stream, site).map_err(|mut failure| {
        failure.site = failure.site.or(site.map(Box::new));
        failure
    })
}

#[allow(clippy::too_many_arguments)]
fn launch_at(
    rt: &mut Runtime,
    function: usize,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: usize,
    site: Option<Site>,
) -> ApiResult {
    let Some(f) = rt.functions.get(&function) else {
        return Err(Failure::host(
            errors::INVALID_DEVICE_FUNCTION,
            "not a kernel",
            format!("{function:#x} is not a __global__ function of the program"),
        ));
    };
    let (fatbin, name, max_shared) = (f.fatbin, f.name.clone(), f.max_dynamic_shared);
    check_shape(grid, block, shared, max_shared)?;
    check_resources(rt, function, block)?;
    let index = stream_index(rt, stream)?;
    let module = register::module(rt, fatbin)?;
    let Some(sizes) = module.param_sizes(&name) else {
        return Err(Failure::host(
            errors::INVALID_DEVICE_FUNCTION,
            "kernel not in the device code",
            format!("the device code has no kernel {name}"),
        ));
    };
    if !sizes.is_empty() && args.is_null() {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    let mut kernel_args = Vec::with_capacity(sizes.len());
    for (i, &size) in sizes.iter().enumerate() {
        // SAFETY: nvcc's stub (or the program, for cudaLaunchKernel) passes one pointer per
        // parameter, each to a value of the parameter's size.
        let bytes = unsafe {
            let p = *args.add(i) as *const u8;
            std::slice::from_raw_parts(p, size as usize).to_vec()
        };
        kernel_args.push(KernelArg::Bytes(bytes));
    }
    if crate::graphs::capturing(rt, index).is_some() {
        let args = kernel_args
            .iter()
            .map(|a| match a {
                KernelArg::Bytes(b) => b.clone(),
                _ => Vec::new(),
            })
            .collect();
        let node = crate::graphs::Node::Kernel {
            function,
            grid,
            block,
            shared,
            args,
        };
        crate::graphs::capture(rt, index, node);
        return Ok(());
    }
    let shown = display_name(&name);
    if let Some(finding) = check_pointer_args(rt, &name, &shown, &kernel_args)? {
        // On a GPU the launch succeeds, the kernel faults at its first access through the
        // pointer, and the host's next wait returns the error, which sticks.
        report::host_finding(rt, "cudaLaunchKernel", site, finding);
        if rt.sticky == errors::SUCCESS {
            rt.sticky = errors::ILLEGAL_ADDRESS;
        }
        return Ok(());
    }
    let config = LaunchConfig {
        grid: grid.array(),
        block: block.array(),
        dynamic_shared_bytes: shared as u32,
    };
    let id = before_op(rt, index)?;
    let host_views = memory::push_host_views(rt);
    managed_variables(rt, true);
    let mut options = rt.options;
    // A cooperative launch's grid workspace, where cooperative groups' grid sync counts blocks.
    let workspace = rt.cooperative.then(|| rt.emu.alloc(8, "grid barrier"));
    options.grid_workspace = workspace.map(|w| w.0);
    let label = report::op_label(rt, &shown, site);
    let launch = LaunchName {
        kernel: shown,
        grid: config.grid,
        block: config.block,
        site,
    };
    let progress = crate::progress::launch(|| launch.describe(rt));
    let result = rt.emu.launch_on_labelled(
        id,
        &module,
        &name,
        &config,
        &kernel_args,
        &options,
        label.as_deref(),
    );
    drop(progress);
    if let Some(w) = workspace {
        let _ = rt.emu.free(w);
    }
    memory::pull_host_views(rt, host_views);
    managed_variables(rt, false);
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            return Err(Failure::host(
                errors::LAUNCH_FAILURE,
                "launch the emulator cannot run",
                format!("{}: {error}", launch.kernel),
            ));
        }
    };
    take_report(rt, Some(&launch), report);
    if ptx_emu::interrupt::requested() && rt.interrupted_launch.is_none() {
        rt.interrupted_launch = Some(launch.describe(rt));
    }
    crate::managed::launched(rt, site);
    Ok(())
}

/// Pointer arguments that are not device memory: a host pointer, or a freed allocation.
fn check_pointer_args(
    rt: &mut Runtime,
    name: &str,
    shown: &str,
    args: &[KernelArg],
) -> ApiResult<Option<crate::runtime::HostFinding>> {
    let Some(pointers) = pointer_params(name) else {
        return Ok(None);
    };
    for (i, (arg, is_pointer)) in args.iter().zip(pointers).enumerate() {
        let KernelArg::Bytes(bytes) = arg else {
            continue;
        };
        if !is_pointer || bytes.len() != 8 {
            continue;
        }
        let value = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        if value == 0 || rt.emu.allocation_of(ptx_emu::DevicePtr(value)).is_some() {
            continue;
        }
        let text = match memory::find(rt, value, 1) {
            Place::Freed(f) => {
                let (label, at) = (f.label.clone(), f.freed_at);
                let at = rt.place(at);
                Some((
                    "use after free",
                    format!(
                        "argument {} of {shown} is {label}, freed by cudaFree at {at}",
                        i + 1
                    ),
                ))
            }
            Place::Host if crate::host_register::registered_at(rt, value).is_some() => Some((
                "host pointer passed to a kernel",
                format!(
                    "argument {} of {shown} is {value:#x}, memory registered with cudaHostRegister, by its host address: the emulated device (cudaDevAttrCanUseHostPointerForRegisteredMem 0) reaches it at the address cudaHostGetDevicePointer gives",
                    i + 1
                ),
            )),
            Place::Host if is_host_memory(value) => Some((
                "host pointer passed to a kernel",
                format!(
                    "argument {} of {shown} is {value:#x}, host memory, which a kernel cannot reach: pass the pointer cudaMalloc gave and copy the data with cudaMemcpy",
                    i + 1
                ),
            )),
            _ => None,
        };
        if let Some((kind, text)) = text {
            return Ok(Some(crate::runtime::HostFinding { kind, text }));
        }
    }
    Ok(None)
}

/// Whether `address` is in a mapping of this process: memory the host can read.
fn is_host_memory(address: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    maps.lines().any(|line| {
        let Some((range, _)) = line.split_once(' ') else {
            return false;
        };
        let Some((lo, hi)) = range.split_once('-') else {
            return false;
        };
        match (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) {
            (Ok(lo), Ok(hi)) => (lo..hi).contains(&address),
            _ => false,
        }
    })
}

/// `__managed__` variables: the host's copy goes to the device variable before a launch and
/// comes back after it.
fn managed_variables(rt: &mut Runtime, to_device: bool) {
    let managed: Vec<(usize, String, usize, usize)> = rt
        .variables
        .values()
        .filter_map(|v| Some((v.fatbin, v.name.clone(), v.size, v.managed_host?)))
        .collect();
    for (fatbin, name, size, host) in managed {
        let Ok(module) = register::module(rt, fatbin) else {
            continue;
        };
        let Some((ptr, _)) = rt.emu.symbol(&module, &name) else {
            continue;
        };
        // SAFETY: the host copy `__cudaRegisterManagedVar` leaked, `size` bytes long.
        unsafe {
            if to_device {
                let _ = rt
                    .emu
                    .write(ptr, std::slice::from_raw_parts(host as *const u8, size));
            } else {
                let _ = rt
                    .emu
                    .read(ptr, std::slice::from_raw_parts_mut(host as *mut u8, size));
            }
        }
    }
}

/// What a launch (or other work) found: printf output waits for the host's next
/// synchronization; a failed assert or a stopped kernel makes the context's error sticky.
pub fn take_report(rt: &mut Runtime, launch: Option<&LaunchName>, report: RunReport) {
    for record in &report.printf {
        match record.stream {
            ptx_emu::OutputStream::Stdout => rt.printf.push_str(&record.text),
            ptx_emu::OutputStream::Stderr => rt.assert_messages.push_str(&record.text),
        }
    }
    crate::graphs::set_conditions(rt, &report.conditions);
    use ptx_emu::FindingKind as K;
    for finding in &report.findings {
        let sticky = match finding.kind {
            K::AssertionFailed => errors::ASSERT,
            K::Trap | K::Deadlock | K::Stuck | K::StepBudgetExhausted | K::StackOverflow => {
                errors::LAUNCH_FAILURE
            }
            _ => errors::SUCCESS,
        };
        if sticky != errors::SUCCESS && rt.sticky == errors::SUCCESS {
            rt.sticky = sticky;
        }
    }
    report::launch_findings(rt, launch, &report);
}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaLaunchKernel(
    kernel: *mut c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> i32 {
    let direct = caller();
    api("cudaLaunchKernel", |rt| {
        let function = register::kernel_function(rt, kernel)?;
        let site = launch_site(direct);
        launch(
            rt,
            function,
            grid,
            block,
            args,
            shared,
            stream as usize,
            site,
        )
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn __cudaLaunchKernel_ptsz(
    kernel: *mut c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> i32 {
    crate::streams::with_per_thread_default(|| {
        __cudaLaunchKernel(kernel, grid, block, args, shared, stream)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaLaunchKernel(
    function: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> i32 {
    let direct = caller();
    api("cudaLaunchKernel", |rt| {
        let site = launch_site(direct);
        launch(
            rt,
            function as usize,
            grid,
            block,
            args,
            shared,
            stream as usize,
            site,
        )
    })
}

/// A cooperative launch may sync its whole grid, so every block must be resident at once.
#[unsafe(no_mangle)]
pub extern "C" fn cudaLaunchCooperativeKernel(
    function: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> i32 {
    let direct = caller();
    api("cudaLaunchCooperativeKernel", |rt| {
        let blocks = grid.array().iter().map(|&d| d as u64).product::<u64>();
        let needs = crate::resources::of(rt, function as usize);
        let most = ptx_emu::occupancy::cooperative_grid_limit(
            block.array(),
            shared + needs.static_shared(),
            needs.registers(),
        );
        if blocks > most {
            return Err(Failure::host(
                errors::COOPERATIVE_LAUNCH_TOO_LARGE,
                "launch the device cannot run",
                format!(
                    "a cooperative launch of {blocks} blocks, where at most {most} can be resident at once"
                ),
            ));
        }
        let site = launch_site(direct);
        rt.cooperative = true;
        let launched = launch(
            rt,
            function as usize,
            grid,
            block,
            args,
            shared,
            stream as usize,
            site,
        );
        rt.cooperative = false;
        launched
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaLaunchKernelExC(
    config: *const abi::LaunchConfigEx,
    function: *const c_void,
    args: *mut *mut c_void,
) -> i32 {
    let direct = caller();
    api("cudaLaunchKernelExC", |rt| {
        if config.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        // SAFETY: the program passes its launch configuration.
        let c = unsafe { &*config };
        launch(
            rt,
            function as usize,
            c.grid_dim,
            c.block_dim,
            args,
            c.dynamic_smem_bytes,
            c.stream as usize,
            direct,
        )
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaConfigureCall(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: *mut c_void,
) -> c_int {
    __cudaPushCallConfiguration(grid, block, shared, stream) as c_int
}
