//! One device, either a real GPU (cudarc) or the PTX emulator, behind the same verbs:
//! upload, zeros, download, load, launch, time.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, CudaView, DevicePtr as _,
    LaunchConfig, PushKernelArg, sys,
};
use cudarc::nvrtc::Ptx;

use crate::backend::{BackendChoice, BackendKind, cuda_driver_present};
use crate::emu_backend::EmuBackend;
use crate::error::{HarnessError, Result};
use crate::kernel::KernelSource;
use crate::launch::{DeviceLimits, Dim3, LaunchShape};
use crate::variant::Variant;

pub use gpus::{GpuEvent, GpuStream, Gpus};
#[cfg(feature = "vendor")]
pub use nccl::nccl_library;
pub use ptx_emu::{Finding, FindingKind, Schedule, WarpSyncProblem};
pub use stream::{HostBuffer, Stream};

mod gpus;
#[cfg(feature = "vendor")]
mod nccl;
mod printf_capture;
mod stream;
#[cfg(feature = "vendor")]
mod vendor;

/// What a learner without cuBLAS should do.
/// What a learner without NCCL (chapter 8's vendor row) should do.
pub const NCCL_HOW_TO_GET: &str = "`pip install nvidia-nccl-cu13==2.32.3` (or install NCCL 2.x), and Racetrack finds libnccl.so.2 in LD_LIBRARY_PATH, CUDA_PATH, /usr/local/cuda or a pip-installed nvidia/nccl/lib";
pub const CUBLAS_HOW_TO_GET: &str = "install the CUDA toolkit, or `pip install nvidia-cublas`, and Racetrack finds libcublas.so.13 in LD_LIBRARY_PATH, CUDA_PATH, /usr/local/cuda or a pip-installed nvidia/cu13/lib";

/// A vendor reference: its time, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum VendorTiming {
    /// Mean milliseconds per call, timed like [`Device::time_ms`].
    Ms(f64),
    /// One sentence for the table: no cuBLAS here and how to get it, or the emulator.
    Unavailable(String),
}

impl VendorTiming {
    pub fn ms(&self) -> Option<f64> {
        match self {
            Self::Ms(ms) => Some(*ms),
            Self::Unavailable(_) => None,
        }
    }
}

/// What [`Device::time_within`] measured: milliseconds per call, and over how many calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    pub ms: f64,
    pub calls: u32,
}

/// Plain data that can live in a device buffer.
pub trait Element: bytemuck::Pod + fmt::Debug + Send + Sync + 'static {}
impl Element for u8 {}
impl Element for i8 {}
impl Element for u16 {}
impl Element for i16 {}
impl Element for half::f16 {}
impl Element for half::bf16 {}
impl Element for u32 {}
impl Element for i32 {}
impl Element for u64 {}
impl Element for i64 {}
impl Element for f32 {}
impl Element for f64 {}

/// Device memory holding `len` values of `T`.
#[derive(Debug)]
pub struct Buffer<T> {
    raw: RawBuffer,
    len: usize,
    _element: PhantomData<T>,
}

#[derive(Debug)]
pub enum RawBuffer {
    Cuda(CudaSlice<u8>),
    Emu(ptx_emu::DevicePtr),
}

impl<T: Element> Buffer<T> {
    /// The untyped allocation, for a struct argument that points to it.
    pub fn raw(&self) -> &RawBuffer {
        &self.raw
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

/// One kernel argument: a buffer's device address or a scalar, in the kernel's parameter order.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// A pointer this many bytes into a buffer (0: its start).
    Buffer(&'a RawBuffer, usize),
    /// One byte: `u8`, `i8` (as bits), `char`, `bool`.
    U8(u8),
    /// Two bytes: `u16`, and `i16`, `__half`, `__nv_bfloat16` as bits.
    U16(u16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    /// A struct passed by value.
    Struct(&'a StructArg<'a>),
}

/// A struct argument: its bytes as C lays them out, with each pointer field still to be filled
/// with its buffer's device address by the backend that launches.
#[derive(Debug)]
pub struct StructArg<'a> {
    pub bytes: Vec<u8>,
    /// (byte offset of the field in the struct, the buffer, bytes into the buffer).
    pub pointers: Vec<(usize, &'a RawBuffer, usize)>,
}

impl<'a> StructArg<'a> {
    /// The struct's bytes with every pointer field set from `address`, or `None` when a buffer
    /// belongs to another backend.
    pub(crate) fn with_addresses(
        &self,
        mut address: impl FnMut(&'a RawBuffer) -> Option<u64>,
    ) -> Option<Vec<u8>> {
        let mut bytes = self.bytes.clone();
        for &(at, buffer, offset) in &self.pointers {
            let pointer = address(buffer)? + offset as u64;
            bytes[at..at + 8].copy_from_slice(&pointer.to_le_bytes());
        }
        Some(bytes)
    }
}

/// The largest struct a kernel may take by value here (CUDA's classic 4 KiB parameter limit).
pub const MAX_STRUCT_ARG_BYTES: usize = 4096;

/// A struct argument's bytes as the CUDA driver reads them: it copies as many bytes as the
/// kernel's parameter declares, so a buffer at least that large, aligned for any field, serves
/// every struct.
#[repr(C, align(16))]
struct StructParam([u8; MAX_STRUCT_ARG_BYTES]);

// SAFETY: plain bytes, with no pointers the host must keep alive; the driver copies them at
// launch.
unsafe impl cudarc::driver::DeviceRepr for StructParam {}

impl<'a, T> From<&'a Buffer<T>> for Arg<'a> {
    fn from(buffer: &'a Buffer<T>) -> Self {
        Arg::Buffer(&buffer.raw, 0)
    }
}

impl<'a> Arg<'a> {
    /// A pointer `bytes` into `buffer`, as a host passes `d_in + n` (`bytes` is `n` times the
    /// element size).
    pub fn at<T>(buffer: &'a Buffer<T>, bytes: usize) -> Self {
        Arg::Buffer(&buffer.raw, bytes)
    }
}

macro_rules! scalar_args {
    ($($ty:ty => $variant:ident),*) => {
        $(impl From<$ty> for Arg<'_> {
            fn from(value: $ty) -> Self {
                Arg::$variant(value)
            }
        })*
    };
}
scalar_args!(u32 => U32, i32 => I32, u64 => U64, i64 => I64, f32 => F32, f64 => F64);

/// What a launch left behind besides its outputs: the emulator's checker findings and what the
/// kernel printed.
#[derive(Debug, Default)]
pub struct LaunchReport {
    pub findings: Vec<Finding>,
    /// Device `printf` output (and failed-assert messages), as a program's standard output
    /// shows it. The emulator's order is deterministic; a GPU's is not.
    pub printf: String,
    /// `printf` calls the emulator dropped because its printf buffer was full.
    pub printf_dropped: u64,
    /// Shared-memory bank conflicts per `.cu` line, from the emulator when
    /// [`EmuSettings::bank_conflicts`] asks for them; empty otherwise, and on a GPU.
    pub bank_conflicts: Vec<ptx_emu::BankConflicts>,
    /// Buffers the kernel knows by another name than the host's label: `(host label, kernel
    /// parameter)`, as findings name them (`(board_a, in)`). From the emulator; empty on a GPU.
    pub received_as: Vec<(String, String)>,
}

impl LaunchReport {
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// Adds what later work reported, as one report of both.
    pub(crate) fn append(&mut self, later: LaunchReport) {
        self.findings.extend(later.findings);
        self.printf.push_str(&later.printf);
        self.printf_dropped += later.printf_dropped;
        self.bank_conflicts.extend(later.bank_conflicts);
        // A buffer two kernels name differently keeps the host's label.
        for (host, kernel) in later.received_as {
            match self
                .received_as
                .iter_mut()
                .find(|(known, _)| *known == host)
            {
                Some((_, named)) if *named != kernel => *named = host,
                Some(_) => {}
                None => self.received_as.push((host, kernel)),
            }
        }
    }
}

/// Variants that could hang a real GPU (emulator-only) refused on the cuda backend.
fn refuse_on_gpus<K>(kind: BackendKind, variant: &Variant<K>) -> Result<()> {
    if kind.is_cuda() && variant.expect.is_emulator_only() {
        return Err(HarnessError::EmulatorOnly {
            variant: variant.name.to_string(),
        });
    }
    Ok(())
}

/// How the emulator runs kernels; ignored by the cuda backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmuSettings {
    pub schedule: Schedule,
    pub racecheck: bool,
    pub synccheck: bool,
    pub memcheck: bool,
    /// Reads of shared memory no thread of the block wrote, and of buffers uploaded
    /// uninitialized that nothing wrote.
    pub initcheck: bool,
    /// Hard cap on thread-instructions: a kernel still running then is stopped and reported.
    /// The emulator's watchdog stops a stuck kernel long before.
    pub step_budget: u64,
    /// Count shared-memory bank conflicts into [`LaunchReport::bank_conflicts`].
    pub bank_conflicts: bool,
    /// What racecheck reports.
    pub memory_model: ptx_emu::MemoryModel,
    /// Cores a launch may use (`--threads`, `RACETRACK_THREADS`); 0 is every core. Findings and
    /// results are the same for every value.
    pub threads: u32,
    /// The interpreter or the compiled tier (`--engine`, `RACETRACK_ENGINE`); `Auto` lets the
    /// emulator choose. Findings and results are the same for every engine.
    pub engine: ptx_emu::Engine,
}

impl Default for EmuSettings {
    fn default() -> Self {
        Self {
            schedule: Schedule::Hardware,
            racecheck: true,
            synccheck: true,
            memcheck: true,
            initcheck: true,
            step_budget: ptx_emu::RunOptions::default().step_budget,
            bank_conflicts: false,
            memory_model: ptx_emu::MemoryModel::Racecheck,
            threads: 0,
            engine: ptx_emu::Engine::Auto,
        }
    }
}

pub struct Device {
    kind: BackendKind,
    name: String,
    limits: DeviceLimits,
    inner: Inner,
}

enum Inner {
    Cuda(CudaBackend),
    Emu(Box<EmuBackend>),
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

struct CudaBackend {
    /// First, so that it is destroyed while the context still exists.
    #[cfg(feature = "vendor")]
    blas: Option<vendor::Blas>,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: String,
    /// Loaded modules, and whether each calls `vprintf` or `__assertfail` (then its launches
    /// capture standard output, where the driver writes device printf).
    modules: HashMap<&'static str, (Arc<CudaModule>, bool)>,
}

impl Device {
    /// Opens the backend the user chose; `auto` takes the GPU when a driver and a device exist.
    pub fn open(choice: BackendChoice) -> Result<Self> {
        match choice {
            BackendChoice::Cuda => Self::open_cuda(),
            BackendChoice::Emu => Ok(Self::open_emu(None)),
            BackendChoice::Auto => match Self::open_cuda() {
                Ok(device) => Ok(device),
                Err(HarnessError::NoDriver) => Ok(Self::open_emu(Some("no NVIDIA driver found"))),
                Err(HarnessError::NoDevice(why)) => {
                    Ok(Self::open_emu(Some(&format!("no CUDA device: {why}"))))
                }
                Err(other) => Err(other),
            },
        }
    }

    /// Opens what `RACETRACK_BACKEND` names, as the tests do.
    pub fn from_env() -> Result<Self> {
        Self::open(BackendChoice::from_env()?)
    }

    fn open_cuda() -> Result<Self> {
        if cuda_device_count()? < 1 {
            return Err(HarnessError::NoDevice("the device count is 0".into()));
        }
        Self::open_cuda_ordinal(0)
    }

    /// GPU number `ordinal` (as `cudaSetDevice` numbers them), once the driver is known to be there.
    fn open_cuda_ordinal(ordinal: usize) -> Result<Self> {
        let no_device =
            |error: cudarc::driver::DriverError| HarnessError::NoDevice(error.to_string());
        let context = CudaContext::new(ordinal).map_err(no_device)?;
        let (major, minor) = context.compute_capability()?;
        let attribute = |attribute| -> Result<u32> {
            Ok(u32::try_from(context.attribute(attribute)?).unwrap_or(0))
        };
        use sys::CUdevice_attribute as A;
        let limits = DeviceLimits {
            max_threads_per_block: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block: Dim3 {
                x: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                y: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                z: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            },
            max_grid: Dim3 {
                x: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                y: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                z: attribute(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            },
            // Kernels here use the default 48 KiB; more needs an explicit opt-in per kernel.
            max_shared_bytes_per_block: attribute(
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )?,
        };
        let name = format!("{} (sm_{major}{minor})", context.name()?);
        let stream = context.default_stream();
        Ok(Self {
            kind: BackendKind::Cuda,
            name,
            limits,
            inner: Inner::Cuda(CudaBackend {
                #[cfg(feature = "vendor")]
                blas: None,
                context,
                stream,
                arch: format!("compute_{major}{minor}"),
                modules: HashMap::new(),
            }),
        })
    }

    fn open_emu(fallback_reason: Option<&str>) -> Self {
        let name = match fallback_reason {
            Some(reason) => format!("ptx-emu, Racetrack's PTX emulator ({reason})"),
            None => "ptx-emu, Racetrack's PTX emulator".to_string(),
        };
        Self {
            kind: BackendKind::Emu,
            name,
            limits: DeviceLimits::CUDA_DEFAULT,
            inner: Inner::Emu(Box::new(EmuBackend::new())),
        }
    }

    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first line every binary prints: which backend, which device.
    pub fn banner(&self) -> String {
        format!("backend: {} — {}", self.kind, self.name)
    }

    pub fn limits(&self) -> DeviceLimits {
        self.limits
    }

    /// Settings for the emulator's schedule and checkers; no effect on a GPU.
    pub fn set_emu_settings(&mut self, settings: EmuSettings) {
        if let Inner::Emu(emu) = &mut self.inner {
            emu.settings = settings;
        }
    }

    pub fn emu_settings(&self) -> Option<EmuSettings> {
        match &self.inner {
            Inner::Emu(emu) => Some(emu.settings),
            Inner::Cuda(_) => None,
        }
    }

    /// Runs `work` under another emulator schedule and then restores the settings, so a step
    /// or a test can show a second interleaving without changing what later launches see.
    /// A GPU keeps its own order: there `work` simply runs.
    pub fn with_schedule<T>(&mut self, schedule: Schedule, work: impl FnOnce(&mut Self) -> T) -> T {
        self.with_emu_settings(|s| EmuSettings { schedule, ..s }, work)
    }

    /// Runs `work` with racecheck reporting what `model` calls a race, then restores the
    /// settings. A GPU has no race checker: there `work` simply runs.
    pub fn with_memory_model<T>(
        &mut self,
        memory_model: ptx_emu::MemoryModel,
        work: impl FnOnce(&mut Self) -> T,
    ) -> T {
        self.with_emu_settings(|s| EmuSettings { memory_model, ..s }, work)
    }

    fn with_emu_settings<T>(
        &mut self,
        change: impl FnOnce(EmuSettings) -> EmuSettings,
        work: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved = self.emu_settings();
        if let Some(settings) = saved {
            self.set_emu_settings(change(settings));
        }
        let result = work(self);
        if let Some(settings) = saved {
            self.set_emu_settings(settings);
        }
        result
    }

    pub fn upload<T: Element>(&mut self, data: &[T], label: &str) -> Result<Buffer<T>> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let raw = match &mut self.inner {
            // The driver refuses zero-byte allocations; an empty input still needs an address.
            Inner::Cuda(cuda) if bytes.is_empty() => {
                RawBuffer::Cuda(cuda.stream.alloc_zeros::<u8>(1)?)
            }
            Inner::Cuda(cuda) => RawBuffer::Cuda(cuda.stream.clone_htod(bytes)?),
            Inner::Emu(emu) => RawBuffer::Emu(emu.upload(bytes, label)?),
        };
        Ok(Buffer {
            raw,
            len: data.len(),
            _element: PhantomData,
        })
    }

    /// `len` elements nothing has written. On the emulator, initcheck reports a kernel's read
    /// of any element it did not write first. On a GPU there is no such check, and the buffer is
    /// zeroed so that a run does not depend on what the allocator hands back.
    pub fn uninit<T: Element>(&mut self, len: usize, label: &str) -> Result<Buffer<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let raw = match &mut self.inner {
            Inner::Cuda(cuda) => RawBuffer::Cuda(cuda.stream.alloc_zeros::<u8>(bytes.max(1))?),
            Inner::Emu(emu) => RawBuffer::Emu(emu.upload_uninit(bytes, label)),
        };
        Ok(Buffer {
            raw,
            len,
            _element: PhantomData,
        })
    }

    /// Tells the emulator's reports that `buffer` holds a grid row after row, `width` elements
    /// a row, as a kernel that indexes it `y * width + x` sees it: a finding on it names the
    /// cell too (`board[20] (cell x 0, y 20)`). Nothing changes on a GPU.
    pub fn name_cells<T: Element>(&mut self, buffer: &Buffer<T>, width: usize) {
        if let (Inner::Emu(emu), RawBuffer::Emu(start)) = (&mut self.inner, &buffer.raw) {
            emu.name_cells(*start, buffer.bytes(), std::mem::size_of::<T>(), width);
        }
    }

    pub fn zeros<T: Element>(&mut self, len: usize, label: &str) -> Result<Buffer<T>> {
        let bytes = len * std::mem::size_of::<T>();
        let raw = match &mut self.inner {
            Inner::Cuda(cuda) => RawBuffer::Cuda(cuda.stream.alloc_zeros::<u8>(bytes.max(1))?),
            Inner::Emu(emu) => RawBuffer::Emu(emu.zeros(bytes, label)),
        };
        Ok(Buffer {
            raw,
            len,
            _element: PhantomData,
        })
    }

    /// Sets every byte of `buffer` to zero, e.g. between repeated histogram launches.
    pub fn clear<T: Element>(&mut self, buffer: &mut Buffer<T>) -> Result<()> {
        match (&mut self.inner, &mut buffer.raw) {
            (Inner::Cuda(cuda), RawBuffer::Cuda(slice)) => Ok(cuda.stream.memset_zeros(slice)?),
            (Inner::Emu(emu), RawBuffer::Emu(ptr)) => emu.write(*ptr, &vec![0; buffer.bytes()]),
            _ => Err(foreign_buffer()),
        }
    }

    pub fn download<T: Element>(&mut self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        let mut values = bytemuck::zeroed_vec(buffer.len());
        self.download_into(buffer, &mut values)?;
        Ok(values)
    }

    /// [`Device::download`] into memory the caller keeps: a GPU walk-through that checks many
    /// results of a GiB reuses one host array, instead of faulting in a new one each time.
    /// `host` must hold exactly the buffer's elements.
    pub fn download_into<T: Element>(&mut self, buffer: &Buffer<T>, host: &mut [T]) -> Result<()> {
        if host.len() != buffer.len() {
            return Err(HarnessError::Invalid(format!(
                "a download of {} elements into room for {}",
                buffer.len(),
                host.len()
            )));
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(host);
        match (&mut self.inner, &buffer.raw) {
            // Zero-byte buffers hold a one-byte allocation (see `upload`): nothing to copy.
            (Inner::Cuda(_), RawBuffer::Cuda(_)) if bytes.is_empty() => Ok(()),
            (Inner::Cuda(cuda), RawBuffer::Cuda(slice)) => {
                let view = slice.slice(0..bytes.len());
                cuda.stream.memcpy_dtoh(&view, bytes)?;
                Ok(cuda.stream.synchronize()?)
            }
            (Inner::Emu(emu), RawBuffer::Emu(ptr)) => emu.read_into(*ptr, bytes),
            _ => Err(foreign_buffer()),
        }
    }

    /// Writes `bytes` to the start of `kernel`'s module variable `name` (its PTX name), as
    /// `cudaMemcpyToSymbol` does for a `__constant__` or `__device__` variable.
    pub fn write_symbol(&mut self, kernel: &KernelSource, name: &str, bytes: &[u8]) -> Result<()> {
        match &mut self.inner {
            Inner::Cuda(cuda) => {
                cuda.function(kernel)?;
                let (module, _) = cuda.modules.get(kernel.path).ok_or_else(|| {
                    HarnessError::Invalid(format!("{} was not loaded", kernel.path))
                })?;
                let module = module.clone();
                let mut symbol = module.get_global(name, &cuda.stream)?;
                if bytes.len() > symbol.len() {
                    return Err(HarnessError::Invalid(format!(
                        "{name} holds {} bytes, not {}",
                        symbol.len(),
                        bytes.len()
                    )));
                }
                let mut start = symbol.slice_mut(0..bytes.len());
                cuda.stream.memcpy_htod(bytes, &mut start)?;
                Ok(cuda.stream.synchronize()?)
            }
            Inner::Emu(emu) => emu.write_symbol(kernel, name, bytes),
        }
    }

    /// Refuses variants that could hang a real GPU before they reach one.
    pub fn ensure_can_run<K>(&self, variant: &Variant<K>) -> Result<()> {
        refuse_on_gpus(self.kind, variant)
    }

    /// Whether `variant` runs here: emulator-only variants do not run on a GPU.
    pub fn runs<K>(&self, variant: &Variant<K>) -> bool {
        self.ensure_can_run(variant).is_ok()
    }

    /// Compiles (once per process) and launches `kernel`, waits for it, and returns the
    /// emulator's findings. Shapes the device cannot run are refused before launching.
    pub fn launch(
        &mut self,
        kernel: &KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<LaunchReport> {
        match &mut self.inner {
            Inner::Cuda(cuda) => {
                let function = cuda.function(kernel)?;
                check_shape_for_function(&self.limits, kernel, &shape, &function)?;
                if !cuda.prints(kernel) {
                    cuda.launch(&function, shape, args)?;
                    cuda.stream.synchronize()?;
                    return Ok(LaunchReport::default());
                }
                let (ran, printf) = printf_capture::capture_stdout(|| -> Result<()> {
                    cuda.launch(&function, shape, args)?;
                    Ok(cuda.stream.synchronize()?)
                });
                if let Err(error) = ran {
                    // A failed assert ends the launch with an error: the GPU's messages are
                    // what explain it, so they go out as the kernel printed them.
                    print!("{printf}");
                    let assert = sys::cudaError_enum::CUDA_ERROR_ASSERT;
                    if matches!(&error, HarnessError::Driver(driver) if driver.0 == assert) {
                        return Err(HarnessError::DeviceAssert {
                            entry: kernel.entry.to_string(),
                        });
                    }
                    return Err(error);
                }
                Ok(LaunchReport {
                    printf,
                    ..LaunchReport::default()
                })
            }
            Inner::Emu(emu) => {
                self.limits
                    .check(kernel.entry, &shape, 0, self.limits.max_threads_per_block)?;
                emu.launch(kernel, shape, args)
            }
        }
    }

    /// Mean milliseconds per call of `work`, measured with CUDA events around `repetitions`
    /// calls after one warm-up call; `None` on the emulator, which models no time.
    pub fn time_ms(
        &mut self,
        repetitions: u32,
        mut work: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<Option<f64>> {
        let (context, stream) = match &self.inner {
            Inner::Cuda(cuda) => (cuda.context.clone(), cuda.stream.clone()),
            Inner::Emu(_) => return Ok(None),
        };
        work(self)?;
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, stop) = (context.new_event(flags)?, context.new_event(flags)?);
        start.record(&stream)?;
        for _ in 0..repetitions.max(1) {
            work(self)?;
        }
        stop.record(&stream)?;
        stop.synchronize()?;
        let total = f64::from(start.elapsed_ms(&stop)?);
        Ok(Some(total / f64::from(repetitions.max(1))))
    }

    /// [`Device::time_ms`] for work whose length is not known beforehand, such as a sweep that
    /// starts from one block: as many timed calls as fit in `budget_ms` at the warm-up's pace,
    /// at least one and at most `most`. A warm-up that alone takes `budget_ms` or longer is the
    /// measurement: what a warm-up absorbs (loading a module, cold caches and TLBs) is well
    /// under a millisecond, far below 1% of such a call, and timing it again would only double
    /// the wait. Run `work` once before (as the walk-throughs do, checking its result): a first
    /// call that compiles and loads the kernel would be timed with it. `None` on the emulator.
    pub fn time_within(
        &mut self,
        most: u32,
        budget_ms: f64,
        mut work: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<Option<Timing>> {
        let (context, stream) = match &self.inner {
            Inner::Cuda(cuda) => (cuda.context.clone(), cuda.stream.clone()),
            Inner::Emu(_) => return Ok(None),
        };
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, stop) = (context.new_event(flags)?, context.new_event(flags)?);
        start.record(&stream)?;
        work(self)?;
        stop.record(&stream)?;
        stop.synchronize()?;
        let warm_up_ms = f64::from(start.elapsed_ms(&stop)?);
        if warm_up_ms >= budget_ms {
            return Ok(Some(Timing {
                ms: warm_up_ms,
                calls: 1,
            }));
        }
        let fit = (budget_ms / warm_up_ms.max(1e-3)).floor();
        let calls = fit.clamp(1.0, f64::from(most.max(1))) as u32;
        start.record(&stream)?;
        for _ in 0..calls {
            work(self)?;
        }
        stop.record(&stream)?;
        stop.synchronize()?;
        let total = f64::from(start.elapsed_ms(&stop)?);
        Ok(Some(Timing {
            ms: total / f64::from(calls),
            calls,
        }))
    }

    /// Launches without waiting: for timing loops, where [`Device::time_ms`] synchronizes.
    pub fn launch_async(
        &mut self,
        kernel: &KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<()> {
        match &mut self.inner {
            Inner::Cuda(cuda) => {
                let function = cuda.function(kernel)?;
                check_shape_for_function(&self.limits, kernel, &shape, &function)?;
                cuda.launch(&function, shape, args)
            }
            Inner::Emu(_) => self.launch(kernel, shape, args).map(drop),
        }
    }
    /// How many blocks of `threads_per_block` threads (and `dynamic_shared_bytes`) of `kernel`
    /// the GPU runs at once: its multiprocessors times the blocks each one holds, by the driver's
    /// occupancy calculator. A grid of exactly this many blocks fills the GPU in one wave.
    /// `None` on the emulator, which has no multiprocessors to fill.
    pub fn resident_blocks(
        &mut self,
        kernel: &KernelSource,
        threads_per_block: u32,
        dynamic_shared_bytes: u32,
    ) -> Result<Option<u32>> {
        let Inner::Cuda(cuda) = &mut self.inner else {
            return Ok(None);
        };
        let function = cuda.function(kernel)?;
        let per_multiprocessor = function.occupancy_max_active_blocks_per_multiprocessor(
            threads_per_block,
            dynamic_shared_bytes as usize,
            None,
        )?;
        let multiprocessors = u32::try_from(
            cuda.context
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        )
        .unwrap_or(0);
        if per_multiprocessor == 0 {
            return Err(HarnessError::Invalid(format!(
                "{} cannot run a single block of {threads_per_block} threads on this GPU",
                kernel.entry
            )));
        }
        Ok(Some(per_multiprocessor * multiprocessors))
    }

    /// Milliseconds of one device-to-device copy of `bytes` bytes: the bandwidth reference every
    /// timing table compares against, measured in the same run. `None` on the emulator.
    pub fn time_device_copy_ms(&mut self, bytes: usize, repetitions: u32) -> Result<Option<f64>> {
        let Inner::Cuda(cuda) = &self.inner else {
            return Ok(None);
        };
        let source = cuda.stream.alloc_zeros::<u8>(bytes)?;
        let mut destination = cuda.stream.alloc_zeros::<u8>(bytes)?;
        let stream = cuda.stream.clone();
        self.time_ms(repetitions, |_| {
            Ok(stream.memcpy_dtod(&source, &mut destination)?)
        })
    }
}

/// How many GPUs the driver sees; an error when there is no driver.
fn cuda_device_count() -> Result<usize> {
    if !cuda_driver_present() {
        return Err(HarnessError::NoDriver);
    }
    let no_device = |error: cudarc::driver::DriverError| HarnessError::NoDevice(error.to_string());
    cudarc::driver::result::init().map_err(no_device)?;
    let count = cudarc::driver::result::device::get_count().map_err(no_device)?;
    Ok(usize::try_from(count).unwrap_or(0))
}

fn foreign_buffer() -> HarnessError {
    HarnessError::Invalid("a buffer was used with a device of another backend".into())
}

fn check_shape_for_function(
    limits: &DeviceLimits,
    kernel: &KernelSource,
    shape: &LaunchShape,
    function: &CudaFunction,
) -> Result<()> {
    use sys::CUfunction_attribute as F;
    let attribute = |attribute| -> Result<u32> {
        // SAFETY: the function handle comes from a module that `CudaBackend` keeps loaded.
        let value = unsafe {
            cudarc::driver::result::function::get_function_attribute(
                function.cu_function(),
                attribute,
            )
        }?;
        Ok(u32::try_from(value).unwrap_or(0))
    };
    let static_shared = attribute(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
    let max_threads = attribute(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
    limits.check(kernel.entry, shape, static_shared, max_threads)
}

impl CudaBackend {
    fn function(&mut self, kernel: &KernelSource) -> Result<CudaFunction> {
        let module = match self.modules.get(kernel.path) {
            Some((module, _)) => module.clone(),
            None => {
                let ptx = kernel.ptx_for(&self.arch)?;
                let prints = ptx.contains("vprintf") || ptx.contains("__assertfail");
                let module = crate::timings::time(crate::timings::Phase::Load, || {
                    self.context.load_module(Ptx::from_src(ptx))
                })?;
                self.modules.insert(kernel.path, (module.clone(), prints));
                module
            }
        };
        module.load_function(kernel.symbol()).map_err(|error| {
            HarnessError::Invalid(format!(
                "{} has no kernel named {}: {error}",
                kernel.path, kernel.entry
            ))
        })
    }

    /// Whether `kernel`'s module (loaded by [`CudaBackend::function`]) can print.
    fn prints(&self, kernel: &KernelSource) -> bool {
        self.modules
            .get(kernel.path)
            .is_some_and(|(_, prints)| *prints)
    }

    fn launch(&self, function: &CudaFunction, shape: LaunchShape, args: &[Arg<'_>]) -> Result<()> {
        self.launch_on(&self.stream, function, shape, args)
    }

    fn launch_on(
        &self,
        stream: &Arc<CudaStream>,
        function: &CudaFunction,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<()> {
        // A pointer into a buffer is a view of it, which must outlive the builder.
        let views: Vec<Option<CudaView<'_, u8>>> = args
            .iter()
            .map(|arg| match arg {
                Arg::Buffer(RawBuffer::Cuda(slice), offset) if *offset > 0 => {
                    Some(slice.slice(*offset..))
                }
                _ => None,
            })
            .collect();
        // A struct's pointer fields hold device addresses, which the buffers' guards keep valid
        // (and ordered on this stream) until after the launch.
        let mut guards = Vec::new();
        let structs: Vec<Option<Box<StructParam>>> = args
            .iter()
            .map(|arg| {
                let Arg::Struct(fields) = arg else {
                    return Ok(None);
                };
                let bytes = fields
                    .with_addresses(|buffer| match buffer {
                        RawBuffer::Cuda(slice) => {
                            let (address, guard) = slice.device_ptr(stream);
                            guards.push(guard);
                            Some(address)
                        }
                        RawBuffer::Emu(_) => None,
                    })
                    .ok_or_else(foreign_buffer)?;
                let mut param = Box::new(StructParam([0; MAX_STRUCT_ARG_BYTES]));
                param.0[..bytes.len()].copy_from_slice(&bytes);
                Ok(Some(param))
            })
            .collect::<Result<_>>()?;
        let mut builder = stream.launch_builder(function);
        for ((arg, view), param) in args.iter().zip(&views).zip(&structs) {
            if let Some(param) = param {
                builder.arg(param.as_ref());
                continue;
            }
            if let Some(view) = view {
                builder.arg(view);
                continue;
            }
            match arg {
                Arg::Buffer(RawBuffer::Cuda(slice), _) => builder.arg(slice),
                Arg::Buffer(RawBuffer::Emu(_), _) => return Err(foreign_buffer()),
                Arg::U8(value) => builder.arg(value),
                Arg::U16(value) => builder.arg(value),
                Arg::U32(value) => builder.arg(value),
                Arg::I32(value) => builder.arg(value),
                Arg::U64(value) => builder.arg(value),
                Arg::I64(value) => builder.arg(value),
                Arg::F32(value) => builder.arg(value),
                Arg::F64(value) => builder.arg(value),
                Arg::Struct(_) => unreachable!("struct arguments were pushed above"),
            };
        }
        let config = LaunchConfig {
            grid_dim: (shape.grid.x, shape.grid.y, shape.grid.z),
            block_dim: (shape.block.x, shape.block.y, shape.block.z),
            shared_mem_bytes: shape.dynamic_shared_bytes,
        };
        // SAFETY: the shape was checked against the device and kernel limits, and every
        // chapter passes arguments in its kernel's parameter order and types (its tests check
        // results against the CPU, which a mismatch would break).
        unsafe { builder.launch(config) }?;
        drop(guards);
        Ok(())
    }
}
