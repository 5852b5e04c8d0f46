//! One emulated device: its memory, the PTX modules loaded on it, and launches.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use ptx_emu::{
    DevicePtr, EmuError, EventId, KernelArg, LaunchConfig, Module, RunOptions, RunReport, StreamId,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::EmulatorError;
use crate::args::kernel_arg;
use crate::findings::Finding;
use crate::options::Options;

fn emulator_error(error: EmuError) -> PyErr {
    EmulatorError::new_err(error.to_string())
}

/// PTX parsed once, to be launched any number of times on any [`Emulator`].
#[pyclass(module = "racetrack._native", frozen)]
#[derive(Debug)]
pub struct PtxModule {
    module: Arc<Module>,
    /// What errors call it (the `.py` or `.cu` file it came from).
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    entries: Vec<String>,
    /// The text, for ptxas to count its kernels' registers on the first question.
    ptx: String,
    counted: std::sync::OnceLock<Option<HashMap<String, ptx_emu::ptxas::Resources>>>,
}

#[pymethods]
impl PtxModule {
    /// Parses `ptx`; `name` is how errors refer to it. Raises `EmulatorError` naming the PTX
    /// line the emulator cannot read. `as_compiled` is the PTX a GPU's driver would compile,
    /// where `ptx` was changed for the emulator (Numba's grid group calls): ptxas counts it.
    /// `linked` are more PTX units whose functions `ptx` calls (`.extern .func`), linked with
    /// it as a device link would (Numba's `declare_device(…, link=…)`).
    #[new]
    #[pyo3(signature = (ptx, name = "<ptx>".to_string(), as_compiled = None, linked = Vec::new()))]
    fn new(
        py: Python<'_>,
        ptx: String,
        name: String,
        as_compiled: Option<String>,
        linked: Vec<String>,
    ) -> PyResult<Self> {
        let module = py
            .detach(|| {
                let units: Vec<&str> = std::iter::once(ptx.as_str())
                    .chain(linked.iter().map(String::as_str))
                    .collect();
                Module::parse_linked(&units)
            })
            .map_err(|error| EmulatorError::new_err(format!("{name}: {error}")))?;
        let entries = module.entries().map(str::to_string).collect();
        Ok(Self {
            module: Arc::new(module),
            name,
            entries,
            ptx: as_compiled.unwrap_or(ptx),
            counted: std::sync::OnceLock::new(),
        })
    }

    /// What ptxas allots kernel `entry` on an sm_90 GPU, as (registers a thread, bytes of
    /// static shared memory), as a GPU's driver compiles it; `None` where no ptxas is found
    /// (`RACETRACK_PTXAS`, else nvcc's toolchain: a CUDA toolkit, a pip install, or the one
    /// `racetrack run` fetched) or it cannot compile the PTX. The module is counted once.
    fn resources(&self, py: Python<'_>, entry: &str) -> Option<(u32, u32)> {
        let counted = self.counted.get_or_init(|| {
            py.detach(|| {
                let ptxas = ptxas()?;
                ptx_emu::ptxas::count_unit(ptxas, &self.ptx, None).ok()
            })
        });
        let found = counted.as_ref()?.get(entry)?;
        Some((found.registers, found.static_shared))
    }

    fn __repr__(&self) -> String {
        format!("PtxModule({:?}, entries={:?})", self.name, self.entries)
    }
}

/// What one launch left besides memory: the checkers' findings and the kernel's `printf`.
#[pyclass(module = "racetrack._native", frozen, get_all)]
#[derive(Debug)]
pub struct LaunchResult {
    pub findings: Vec<Py<Finding>>,
    /// Device `printf` output, as standard output shows it.
    pub printf: String,
    /// Every thread ran to its end (no deadlock, budget stop, failed assert or trap).
    pub completed: bool,
    /// Instructions executed, counted once per thread.
    pub thread_instructions: u64,
    /// Milliseconds the emulator took to run it.
    pub elapsed_ms: f64,
}

#[pymethods]
impl LaunchResult {
    fn __repr__(&self) -> String {
        format!(
            "LaunchResult(findings={}, completed={}, thread_instructions={}, elapsed_ms={:.3})",
            self.findings.len(),
            if self.completed { "True" } else { "False" },
            self.thread_instructions,
            self.elapsed_ms
        )
    }
}

/// The emulator: global memory, launches, and the clock that streams' events read.
///
/// Addresses are plain integers, as a device pointer is in C. Every launch runs to its end
/// before `launch` returns (the emulator has no asynchronous work), so copies and events are
/// ordered exactly as the host issues them.
#[pyclass(module = "racetrack._native")]
#[derive(Debug)]
pub struct Emulator {
    emulator: ptx_emu::Emulator,
    /// Time spent running launches: the clock events record.
    busy: Duration,
    /// The emulator's streams, by the number Python holds (the emulator's ids are its own).
    streams: Vec<StreamId>,
    /// The emulator's events, likewise by number.
    events: Vec<EventId>,
    /// The grid workspaces of cooperative launches queued on streams, freed once the host has
    /// waited for every stream: a stream may hold a launch back until a wait is met, and its
    /// workspace must outlive it. (Each launch has its own, as the CUDA runtime gives it, so
    /// that two grids on unordered streams share no memory.)
    queued_workspaces: Vec<DevicePtr>,
}

/// The emulator's devices when `RACETRACK_DEVICES` names no other number: chapter 8's ring
/// needs two, as `cargo run -p ch8-many-gpus` emulates by default (`--devices 2`).
const DEFAULT_DEVICES: u32 = 2;

/// `RACETRACK_DEVICES`, or [`DEFAULT_DEVICES`]; a value that is not a number from 1 to 64 is an
/// error naming it.
fn device_count_from_env() -> PyResult<u32> {
    match std::env::var("RACETRACK_DEVICES") {
        Err(_) => Ok(DEFAULT_DEVICES),
        Ok(text) => text
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|count| (1..=64).contains(count))
            .ok_or_else(|| {
                EmulatorError::new_err(format!(
                    "RACETRACK_DEVICES={text:?}: the emulator holds from 1 to 64 devices"
                ))
            }),
    }
}

/// A launch's arguments from Python's list, and its options (the defaults when none are given).
fn launch_args(
    args: &Bound<'_, PyList>,
    options: Option<PyRef<'_, Options>>,
) -> PyResult<(Vec<KernelArg>, RunOptions)> {
    let args = args
        .iter()
        .enumerate()
        .map(|(index, arg)| kernel_arg(index, &arg))
        .collect::<PyResult<Vec<_>>>()?;
    let run_options = match options {
        Some(options) => options.run_options()?,
        None => Options::default().run_options()?,
    };
    Ok((args, run_options))
}

fn launch_config(grid: (u32, u32, u32), block: (u32, u32, u32), shared_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid.0, grid.1, grid.2],
        block: [block.0, block.1, block.2],
        dynamic_shared_bytes: shared_bytes,
    }
}

/// The most blocks a cooperative launch of `block` threads with `shared_bytes` of shared
/// memory (static and dynamic) may have: every block resident at once, as a grid sync needs
/// and as `cudaLaunchCooperativeKernel` checks. `registers` (a thread's, from
/// [`kernel_resources`]) limit it too when given.
#[pyfunction]
#[pyo3(signature = (block, shared_bytes = 0, registers = None))]
pub fn cooperative_grid_limit(
    block: (u32, u32, u32),
    shared_bytes: u32,
    registers: Option<u32>,
) -> u64 {
    ptx_emu::occupancy::cooperative_grid_limit(
        [block.0, block.1, block.2],
        shared_bytes as usize,
        registers,
    )
}

/// The ptxas that counts kernels' registers, looked for once.
fn ptxas() -> Option<&'static std::path::Path> {
    static PTXAS: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    PTXAS
        .get_or_init(|| {
            std::env::var_os(ptx_emu::run_env::PTXAS)
                .filter(|p| !p.is_empty())
                .map(std::path::PathBuf::from)
                .or_else(|| harness::nvcc::find_nvcc().ok()?.ptxas())
        })
        .as_deref()
}

/// A cooperative launch larger than can be resident at once is refused, with CUDA's error.
fn check_cooperative_grid(
    py: Python<'_>,
    config: &LaunchConfig,
    module: &PtxModule,
    entry: &str,
) -> PyResult<()> {
    let blocks = config.grid.iter().map(|&d| d as u64).product::<u64>();
    let (registers, static_shared) = module
        .resources(py, entry)
        .map_or((None, 0), |(registers, shared)| (Some(registers), shared));
    let most = ptx_emu::occupancy::cooperative_grid_limit(
        config.block,
        (static_shared + config.dynamic_shared_bytes) as usize,
        registers,
    );
    if blocks > most {
        return Err(PyValueError::new_err(format!(
            "cudaErrorCooperativeLaunchTooLarge: a cooperative launch of {blocks} blocks, where at most {most} can be resident at once"
        )));
    }
    Ok(())
}

fn findings_of(py: Python<'_>, report: &RunReport) -> PyResult<Vec<Py<Finding>>> {
    report
        .findings
        .iter()
        .map(|finding| Py::new(py, Finding::from(finding)))
        .collect()
}

impl Emulator {
    fn stream(&self, stream: usize) -> PyResult<StreamId> {
        self.streams
            .get(stream)
            .copied()
            .ok_or_else(|| EmulatorError::new_err(format!("stream {stream} was never created")))
    }

    fn event(&self, event: usize) -> PyResult<EventId> {
        self.events
            .get(event)
            .copied()
            .ok_or_else(|| EmulatorError::new_err(format!("event {event} was never recorded")))
    }

    /// Runs `run` with the Python thread state released, adding its time to the clock. Ctrl-C
    /// stops it at its next round and raises `KeyboardInterrupt` (see `interrupt.rs`).
    fn timed<T: Send>(
        &mut self,
        py: Python<'_>,
        run: impl FnOnce(&mut ptx_emu::Emulator) -> T + Send,
    ) -> PyResult<(T, Duration)> {
        let emulator = &mut self.emulator;
        let (ran, elapsed) = {
            let _interruptible = crate::interrupt::Interruptible::during_launch();
            // A Ctrl-C that came before the handler above was in place reached only Python's,
            // which the launch would not hear of until its end: raise it now, before it runs.
            py.check_signals()?;
            py.detach(|| {
                let start = Instant::now();
                let ran = run(emulator);
                (ran, start.elapsed())
            })
        };
        self.busy += elapsed;
        if ptx_emu::interrupt::requested() {
            ptx_emu::interrupt::clear();
            // Python's handler noted the signal: its `KeyboardInterrupt` comes out here.
            py.check_signals()?;
        }
        Ok((ran, elapsed))
    }

    /// Runs `entry` of `module` on `shape` (grid, block, dynamic shared bytes) with `args`:
    /// queued on `stream`, or as [`ptx_emu::Emulator::launch`] runs a launch without one.
    #[allow(clippy::too_many_arguments)] // a launch's parts, as `launch` and `launch_on` take them
    fn run_kernel(
        &mut self,
        py: Python<'_>,
        stream: Option<(StreamId, Option<&str>)>,
        module: &PtxModule,
        entry: &str,
        (grid, block, shared_bytes): ((u32, u32, u32), (u32, u32, u32), u32),
        args: &Bound<'_, PyList>,
        options: Option<PyRef<'_, Options>>,
        cooperative: bool,
    ) -> PyResult<LaunchResult> {
        let (args, mut run_options) = launch_args(args, options)?;
        let config = launch_config(grid, block, shared_bytes);
        if cooperative {
            check_cooperative_grid(py, &config, module, entry)?;
        }
        let module = Arc::clone(&module.module);
        // A cooperative launch's grid workspace, where a grid sync counts the blocks in, on
        // the launch's device, as `cudaLaunchCooperativeKernel` sets it up.
        let workspace = if cooperative {
            let device = match stream {
                Some((stream, _)) => self.emulator.stream_device(stream),
                None => self.emulator.current_device(),
            };
            Some(self.grid_workspace(device)?)
        } else {
            None
        };
        run_options.grid_workspace = workspace.map(|w| w.0);
        let (ran, elapsed) = self.timed(py, |emulator| match stream {
            Some((stream, label)) => emulator.launch_on_labelled(
                stream,
                &module,
                entry,
                &config,
                &args,
                &run_options,
                label,
            ),
            None => emulator.launch(&module, entry, &config, &args, &run_options),
        })?;
        if let Some(workspace) = workspace {
            match stream {
                Some(_) => self.queued_workspaces.push(workspace),
                // A launch without a stream has run to its end.
                None => self.emulator.free(workspace).map_err(emulator_error)?,
            }
        }
        Self::launch_result(py, ran.map_err(emulator_error)?, elapsed)
    }

    /// A new grid workspace on `device`: 8 zeroed bytes of its memory, `{ size, barrier }`.
    fn grid_workspace(&mut self, device: u32) -> PyResult<DevicePtr> {
        let current = self.emulator.current_device();
        self.emulator.set_device(device).map_err(emulator_error)?;
        let workspace = self.emulator.alloc(8, "grid barrier");
        self.emulator.set_device(current).map_err(emulator_error)?;
        Ok(workspace)
    }

    fn launch_result(
        py: Python<'_>,
        report: RunReport,
        elapsed: Duration,
    ) -> PyResult<LaunchResult> {
        Ok(LaunchResult {
            findings: findings_of(py, &report)?,
            printf: report.printf_output(),
            completed: report.completed,
            thread_instructions: report.thread_instructions,
            elapsed_ms: elapsed.as_secs_f64() * 1e3,
        })
    }
}

#[pymethods]
impl Emulator {
    /// An emulator holding `devices` devices (`RACETRACK_DEVICES`, else 2), device 0 current.
    #[new]
    #[pyo3(signature = (devices = None))]
    fn new(devices: Option<u32>) -> PyResult<Self> {
        let mut emulator = ptx_emu::Emulator::new();
        let count = match devices {
            Some(count) => count,
            None => device_count_from_env()?,
        };
        emulator.set_device_count(count).map_err(emulator_error)?;
        Ok(Self {
            emulator,
            busy: Duration::ZERO,
            streams: Vec::new(),
            events: Vec::new(),
            queued_workspaces: Vec::new(),
        })
    }

    /// Allocates `nbytes` of global memory and returns its address. `label` names it in
    /// reports (`x[3]`). Zeroed; with `uninit=True` it holds garbage as `cudaMalloc`'s does,
    /// and initcheck reports a kernel's read of any byte nothing wrote. Raises `MemoryError`
    /// where this machine cannot hold it (the faces raise their library's own error).
    #[pyo3(signature = (nbytes, label, uninit = false))]
    fn alloc(&mut self, nbytes: usize, label: &str, uninit: bool) -> PyResult<u64> {
        let allocated = if uninit {
            self.emulator.try_alloc_uninit(nbytes, label)
        } else {
            self.emulator.try_alloc(nbytes, label)
        };
        allocated
            .map(|ptr| ptr.0)
            .map_err(|error| pyo3::exceptions::PyMemoryError::new_err(error.to_string()))
    }

    /// Names the allocation at `address` `label` in later reports.
    fn relabel(&mut self, address: u64, label: &str) -> PyResult<()> {
        self.emulator
            .relabel(DevicePtr(address), label)
            .map_err(emulator_error)
    }

    fn free(&mut self, address: u64) -> PyResult<()> {
        self.emulator
            .free(DevicePtr(address))
            .map_err(emulator_error)
    }

    /// Copies bytes to `address`: a `bytes`, or a one-dimensional `uint8` NumPy array (a
    /// contiguous array of any type is `numpy.ravel(a, order="K").view(numpy.uint8)`, no copy).
    fn write(&mut self, address: u64, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let written = if let Ok(bytes) = data.cast::<PyBytes>() {
            self.emulator.write(DevicePtr(address), bytes.as_bytes())
        } else {
            let array: PyReadonlyArray1<'_, u8> = data.extract().map_err(|_| {
                PyTypeError::new_err("write takes bytes or a one-dimensional uint8 NumPy array")
            })?;
            self.emulator.write(DevicePtr(address), array.as_slice()?)
        };
        written.map_err(emulator_error)
    }

    /// Fills a contiguous, writeable one-dimensional `uint8` NumPy array (a view of the
    /// destination) from device memory at `address`.
    fn read_into(&self, address: u64, mut out: PyReadwriteArray1<'_, u8>) -> PyResult<()> {
        self.emulator
            .read(DevicePtr(address), out.as_slice_mut()?)
            .map_err(emulator_error)
    }

    /// `nbytes` of device memory at `address`.
    fn read<'py>(
        &self,
        py: Python<'py>,
        address: u64,
        nbytes: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut bytes = vec![0; nbytes];
        self.emulator
            .read(DevicePtr(address), &mut bytes)
            .map_err(emulator_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Copies `nbytes` from `source` to `destination` on the device.
    fn copy(&mut self, destination: u64, source: u64, nbytes: usize) -> PyResult<()> {
        let mut bytes = vec![0; nbytes];
        self.emulator
            .read(DevicePtr(source), &mut bytes)
            .map_err(emulator_error)?;
        self.emulator
            .write(DevicePtr(destination), &bytes)
            .map_err(emulator_error)
    }

    /// The address and size of `module`'s `__constant__` or `__device__` variable `name` (its
    /// PTX name), or `None`.
    fn symbol(&mut self, module: &PtxModule, name: &str) -> Option<(u64, usize)> {
        self.emulator
            .symbol(&module.module, name)
            .map(|(pointer, size)| (pointer.0, size))
    }

    /// Runs `entry` of `module` to its end with `args`, a list of `(type, value)` pairs (see
    /// python/README.md), on a `grid` of `block`s (each a 3-tuple). Raises `EmulatorError` when
    /// the launch cannot run; what the checkers find is in the result. `cooperative` launches
    /// it as `cudaLaunchCooperativeKernel` does: every block resident at once (more raise
    /// `ValueError`), with the grid workspace a grid sync needs.
    #[pyo3(signature = (module, entry, grid, block, args, shared_bytes = 0, options = None, cooperative = false))]
    #[allow(clippy::too_many_arguments)] // a launch's parts, as `<<<…>>>` and the argument list
    fn launch(
        &mut self,
        py: Python<'_>,
        module: &PtxModule,
        entry: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &Bound<'_, PyList>,
        shared_bytes: u32,
        options: Option<PyRef<'_, Options>>,
        cooperative: bool,
    ) -> PyResult<LaunchResult> {
        let shape = (grid, block, shared_bytes);
        self.run_kernel(py, None, module, entry, shape, args, options, cooperative)
    }

    /// The emulator's clock in milliseconds: the time it has spent running launches. Events
    /// record it, so `elapsed_time` measures the emulator's work between them.
    #[getter]
    fn clock_ms(&self) -> f64 {
        self.busy.as_secs_f64() * 1e3
    }

    // ---- several devices: chapter 8 ----

    /// How many devices the emulator holds.
    #[getter]
    fn device_count(&self) -> u32 {
        self.emulator.device_count()
    }

    /// The device later allocations and launches without a stream go to (`cudaSetDevice`).
    #[getter]
    fn current_device(&self) -> u32 {
        self.emulator.current_device()
    }

    fn set_device(&mut self, device: u32) -> PyResult<()> {
        self.emulator.set_device(device).map_err(emulator_error)
    }

    /// The device whose memory holds `address`, or `None` outside every allocation.
    fn device_of(&self, address: u64) -> Option<u32> {
        self.emulator.device_of(DevicePtr(address))
    }

    /// Lets kernels on the current device load and store `peer`'s memory
    /// (`cudaDeviceEnablePeerAccess(peer)`); without it such an access is a finding.
    fn enable_peer_access(&mut self, peer: u32) -> PyResult<()> {
        self.emulator
            .enable_peer_access(peer)
            .map_err(emulator_error)
    }

    fn peer_access_enabled(&self, from: u32, to: u32) -> bool {
        self.emulator.peer_access_enabled(from, to)
    }

    /// A new stream on the current device; returns its number.
    fn create_stream(&mut self) -> usize {
        self.streams.push(self.emulator.create_stream());
        self.streams.len() - 1
    }

    /// The device whose work `stream` queues.
    fn stream_device(&self, stream: usize) -> PyResult<u32> {
        Ok(self.emulator.stream_device(self.stream(stream)?))
    }

    /// Records an event on `stream` (`cudaEventRecord`) and returns its number: a stream that
    /// waits for it waits for everything queued on `stream` so far.
    fn record_event(&mut self, stream: usize) -> PyResult<usize> {
        let stream = self.stream(stream)?;
        let event = self.emulator.record_event(stream).map_err(emulator_error)?;
        self.events.push(event);
        Ok(self.events.len() - 1)
    }

    /// Makes `stream`'s later work wait for `event` (`cudaStreamWaitEvent`), on any device.
    fn wait_event(&mut self, stream: usize, event: usize) -> PyResult<()> {
        let (stream, event) = (self.stream(stream)?, self.event(event)?);
        self.emulator
            .wait_event(stream, event)
            .map_err(emulator_error)
    }

    /// The host waits for everything queued on `stream` (`cudaStreamSynchronize`).
    fn synchronize_stream(&mut self, stream: usize) -> PyResult<()> {
        let stream = self.stream(stream)?;
        self.emulator
            .synchronize_stream(stream)
            .map_err(emulator_error)
    }

    /// The host waits for every stream of every device (`cudaDeviceSynchronize` on each).
    /// Returns what held work found when it ran, and streams stuck behind waits no work can meet.
    fn synchronize(&mut self, py: Python<'_>) -> PyResult<Vec<Py<Finding>>> {
        let report = self.emulator.synchronize().map_err(emulator_error)?;
        for workspace in std::mem::take(&mut self.queued_workspaces) {
            self.emulator.free(workspace).map_err(emulator_error)?;
        }
        findings_of(py, &report)
    }

    /// [`Emulator::launch`] queued on `stream`, on the stream's device: besides the launch's own
    /// findings, its accesses that race with earlier work on other streams that no stream order,
    /// event wait or synchronization orders before it. `label` names the launch in such reports
    /// (`add at streams.py:16`), else its entry does.
    #[pyo3(signature = (stream, module, entry, grid, block, args, shared_bytes = 0, options = None, label = None, cooperative = false))]
    #[allow(clippy::too_many_arguments)] // a launch's parts, as `<<<…>>>` and the argument list
    fn launch_on(
        &mut self,
        py: Python<'_>,
        stream: usize,
        module: &PtxModule,
        entry: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &Bound<'_, PyList>,
        shared_bytes: u32,
        options: Option<PyRef<'_, Options>>,
        label: Option<&str>,
        cooperative: bool,
    ) -> PyResult<LaunchResult> {
        let stream = self.stream(stream)?;
        let shape = (grid, block, shared_bytes);
        self.run_kernel(
            py,
            Some((stream, label)),
            module,
            entry,
            shape,
            args,
            options,
            cooperative,
        )
    }

    /// Copies `nbytes` from `source` to `destination` queued on `stream` (`cudaMemcpyAsync`, or
    /// `cudaMemcpyPeerAsync` across devices: a copy needs no peer access). Returns the copy's
    /// races with earlier unordered work on other streams. `label` names the copy in such
    /// reports (`the copy to the device at streams.py:15`).
    #[pyo3(signature = (stream, destination, source, nbytes, racecheck = true, label = None))]
    #[allow(clippy::too_many_arguments)] // a copy's parts, as `cudaMemcpyAsync` and a report's name
    fn copy_on(
        &mut self,
        py: Python<'_>,
        stream: usize,
        destination: u64,
        source: u64,
        nbytes: usize,
        racecheck: bool,
        label: Option<&str>,
    ) -> PyResult<Vec<Py<Finding>>> {
        let stream = self.stream(stream)?;
        let report = self
            .emulator
            .copy_on_labelled(
                stream,
                DevicePtr(destination),
                DevicePtr(source),
                nbytes,
                racecheck,
                label,
            )
            .map_err(emulator_error)?;
        findings_of(py, &report)
    }
}
