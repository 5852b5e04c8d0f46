//! The emulator side of [`crate::Device`].

use std::collections::HashMap;

use ptx_emu::{DevicePtr, Emulator, KernelArg, LaunchConfig, Module, RunOptions, StreamId};

use crate::device::{Arg, EmuSettings, LaunchReport, RawBuffer};
use crate::error::{HarnessError, Result};
use crate::kernel::KernelSource;
use crate::launch::LaunchShape;

pub(crate) struct EmuBackend {
    emulator: Emulator,
    modules: HashMap<&'static str, Module>,
    /// Each kernel's C++ parameters, by its file and symbol ([`EmuBackend::receivers`]).
    params: HashMap<(&'static str, &'static str), Vec<String>>,
    /// Buffers that hold a 2D grid row after row ([`EmuBackend::name_cells`]).
    grids: Vec<Grid>,
    pub(crate) settings: EmuSettings,
}

/// A buffer of rows `width` elements long: where a finding lands in it, by cell.
struct Grid {
    start: u64,
    bytes: u64,
    element_bytes: u64,
    width: u64,
}

impl EmuBackend {
    pub(crate) fn new() -> Self {
        Self {
            emulator: Emulator::new(),
            modules: HashMap::new(),
            params: HashMap::new(),
            grids: Vec::new(),
            settings: EmuSettings::default(),
        }
    }

    /// A new allocation holding `bytes`, copied on every core ([`crate::cores::copy`]).
    pub(crate) fn upload(&mut self, bytes: &[u8], label: &str) -> Result<DevicePtr> {
        let ptr = self.emulator.alloc(bytes.len(), label);
        crate::cores::copy(self.emulator.host_bytes_mut(ptr, bytes.len())?, bytes);
        Ok(ptr)
    }

    /// A new allocation of `bytes` zeros: the emulator's allocations start zeroed.
    pub(crate) fn zeros(&mut self, bytes: usize, label: &str) -> DevicePtr {
        self.emulator.alloc(bytes, label)
    }

    /// Reports name an element of the buffer at `start` (`bytes` long, of `element_bytes`
    /// elements, rows of `width` stored one after another) by its cell too: the emulator's
    /// addresses are never reused, so the buffer stays that grid.
    pub(crate) fn name_cells(
        &mut self,
        start: DevicePtr,
        bytes: usize,
        element_bytes: usize,
        width: usize,
    ) {
        if width == 0 || element_bytes == 0 {
            return;
        }
        self.grids.push(Grid {
            start: start.0,
            bytes: bytes as u64,
            element_bytes: element_bytes as u64,
            width: width as u64,
        });
    }

    /// `board[20] (cell x 0, y 20)`: where a kernel indexes a grid `y * width + x`, the cell
    /// says what the flat index means in its own terms. A location past the grid, or with a
    /// note of its own (how far past an end), keeps its words.
    fn name_grid_cells(&self, findings: &mut [ptx_emu::Finding]) {
        for location in findings.iter_mut().filter_map(|f| f.location.as_mut()) {
            if location.space != ptx_emu::Space::Global || location.note.is_some() {
                continue;
            }
            let Some(grid) = self
                .grids
                .iter()
                .find(|grid| (grid.start..grid.start + grid.bytes).contains(&location.address))
            else {
                continue;
            };
            let offset = location.address - grid.start;
            if offset % grid.element_bytes != 0 {
                continue;
            }
            let element = offset / grid.element_bytes;
            location.note = Some(format!(
                "cell x {}, y {}",
                element % grid.width,
                element / grid.width
            ));
        }
    }

    /// A buffer nothing has written, for initcheck.
    pub(crate) fn upload_uninit(&mut self, bytes: usize, label: &str) -> DevicePtr {
        self.emulator.alloc_uninit(bytes, label)
    }

    pub(crate) fn write(&mut self, ptr: DevicePtr, bytes: &[u8]) -> Result<()> {
        Ok(self.emulator.write(ptr, bytes)?)
    }

    pub(crate) fn read(&mut self, ptr: DevicePtr, len: usize) -> Result<Vec<u8>> {
        let mut bytes = vec![0; len];
        self.emulator.read(ptr, &mut bytes)?;
        Ok(bytes)
    }

    /// Fills `out` from `ptr`, copied on every core ([`crate::cores::copy`]).
    pub(crate) fn read_into(&self, ptr: DevicePtr, out: &mut [u8]) -> Result<()> {
        crate::cores::copy(out, self.emulator.host_bytes(ptr, out.len())?);
        Ok(())
    }

    /// Writes `bytes` to the start of the module variable `name` (its PTX name).
    pub(crate) fn write_symbol(
        &mut self,
        kernel: &KernelSource,
        name: &str,
        bytes: &[u8],
    ) -> Result<()> {
        self.load(kernel)?;
        let module = self
            .modules
            .get(kernel.path)
            .ok_or_else(|| HarnessError::Invalid(format!("{} was not loaded", kernel.path)))?;
        let (ptr, size) = self.emulator.symbol(module, name).ok_or_else(|| {
            HarnessError::Invalid(format!("{} has no variable {name}", kernel.path))
        })?;
        if bytes.len() > size {
            return Err(HarnessError::Invalid(format!(
                "{name} holds {size} bytes, not {}",
                bytes.len()
            )));
        }
        Ok(self.emulator.write(ptr, bytes)?)
    }

    fn load(&mut self, kernel: &KernelSource) -> Result<()> {
        if !self.modules.contains_key(kernel.path) {
            let ptx = kernel.emulator_ptx()?;
            let module = crate::timings::time(crate::timings::Phase::Load, || Module::parse(&ptx))?;
            self.modules.insert(kernel.path, module);
        }
        Ok(())
    }

    pub(crate) fn launch(
        &mut self,
        kernel: &KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<LaunchReport> {
        self.launch_queued(None, kernel, shape, args)
    }

    /// The emulator itself, for the verbs of several devices (streams, events, peer access).
    pub(crate) fn emulator(&mut self) -> &mut Emulator {
        &mut self.emulator
    }

    /// A launch on `stream` (checked against the operations it is not ordered after), or with
    /// none, one that starts after everything before it.
    pub(crate) fn launch_queued(
        &mut self,
        stream: Option<StreamId>,
        kernel: &KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<LaunchReport> {
        self.load(kernel)?;
        let module = self
            .modules
            .get(kernel.path)
            .ok_or_else(|| HarnessError::Invalid(format!("{} was not loaded", kernel.path)))?;
        let kernel_args = kernel_args(args)?;
        let config = LaunchConfig {
            grid: shape.grid.as_array(),
            block: shape.block.as_array(),
            dynamic_shared_bytes: shape.dynamic_shared_bytes,
        };
        let options = self.run_options();
        let ran = match stream {
            None => self
                .emulator
                .launch(module, kernel.symbol(), &config, &kernel_args, &options),
            Some(stream) => self.emulator.launch_on(
                stream,
                module,
                kernel.symbol(),
                &config,
                &kernel_args,
                &options,
            ),
        };
        if let (None, Some(timings)) = (stream, self.emulator.last_launch_timings()) {
            crate::timings::record_launch_parts(timings);
        }
        let report = ran.map_err(|error| match error {
            // Named as the user wrote it, not by its mangled PTX symbol.
            ptx_emu::EmuError::CannotRun {
                opcode, place, why, ..
            } => ptx_emu::EmuError::CannotRun {
                entry: kernel.entry.to_string(),
                opcode,
                place,
                why,
            },
            other => other,
        })?;
        let mut report = launch_report(report);
        report.received_as = self.receivers(kernel, args);
        Self::name_buffers_as_the_kernel_does(&mut report.findings, &report.received_as);
        self.name_grid_cells(&mut report.findings);
        crate::array_index::name_array_indices(&mut report.findings, kernel);
        Ok(report)
    }

    /// Which kernel parameter received each buffer the host labelled otherwise: `(board_a, in)`.
    /// A buffer passed to two parameters, or past its start, keeps the host's label.
    fn receivers(&mut self, kernel: &KernelSource, args: &[Arg<'_>]) -> Vec<(String, String)> {
        let labels: Vec<Option<&str>> = args
            .iter()
            .map(|arg| match arg {
                Arg::Buffer(RawBuffer::Emu(ptr), 0) => self.emulator.label_at_start(*ptr),
                _ => None,
            })
            .collect();
        if labels.iter().all(Option::is_none) {
            return Vec::new();
        }
        // The same kernel launches many times: its file is read once.
        let params = self
            .params
            .entry((kernel.source, kernel.symbol()))
            .or_insert_with(|| {
                let scan = crate::check::front::source::scan(kernel.source);
                crate::check::front::names::params_of(kernel.symbol(), &scan)
            });
        let mut received = Vec::new();
        for (label, param) in labels.iter().zip(params.iter()) {
            let Some(label) = label else {
                continue;
            };
            if labels
                .iter()
                .filter(|other| *other == &Some(*label))
                .count()
                != 1
            {
                continue;
            }
            if let Some(name) = crate::check::CParam::parse(param).name
                && name != *label
            {
                received.push((label.to_string(), name));
            }
        }
        received
    }

    /// Names a buffer in the launch's findings by the kernel parameter that received it, as the
    /// quoted line does (`in[1]`), where the host's label differs (`board_a`): a reader sees
    /// the kernel's code, and a buffer swapped between launches is a different host name each
    /// time. A race with another stream's work counts: the access it quotes is this launch's
    /// (`previous[0]` where the ring's device 0 reads its neighbour's `data1`).
    fn name_buffers_as_the_kernel_does(
        findings: &mut [ptx_emu::Finding],
        received: &[(String, String)],
    ) {
        let kernels_own = |finding: &ptx_emu::Finding| {
            finding.kind != ptx_emu::FindingKind::NoPeerAccess
                && finding
                    .location
                    .as_ref()
                    .is_some_and(|location| location.space == ptx_emu::Space::Global)
        };
        for finding in findings.iter_mut().filter(|finding| kernels_own(finding)) {
            let Some(location) = finding.location.as_mut() else {
                continue;
            };
            let Some((host, name)) = received.iter().find(|(host, _)| *host == location.label)
            else {
                continue;
            };
            location.note = location
                .note
                .take()
                .map(|note| note.replace(&format!(" of {host}"), &format!(" of {name}")));
            location.label = name.clone();
        }
    }

    pub(crate) fn run_options(&self) -> RunOptions {
        RunOptions {
            schedule: self.settings.schedule,
            racecheck: self.settings.racecheck,
            synccheck: self.settings.synccheck,
            memcheck: self.settings.memcheck,
            initcheck: self.settings.initcheck,
            step_budget: self.settings.step_budget,
            bank_conflicts: self.settings.bank_conflicts,
            memory_model: self.settings.memory_model,
            threads: self.settings.threads,
            engine: self.settings.engine,
            ..RunOptions::default()
        }
    }
}

fn foreign() -> HarnessError {
    HarnessError::Invalid("a GPU buffer was passed to the emulator".into())
}

fn kernel_args(args: &[Arg<'_>]) -> Result<Vec<KernelArg>> {
    args.iter()
        .map(|arg| {
            Ok(match arg {
                Arg::Buffer(RawBuffer::Emu(ptr), offset) => {
                    KernelArg::Ptr(ptx_emu::DevicePtr(ptr.0 + *offset as u64))
                }
                Arg::Buffer(RawBuffer::Cuda(_), _) => return Err(foreign()),
                Arg::U8(v) => KernelArg::U8(*v),
                Arg::U16(v) => KernelArg::U16(*v),
                Arg::U32(v) => KernelArg::U32(*v),
                Arg::I32(v) => KernelArg::I32(*v),
                Arg::U64(v) => KernelArg::U64(*v),
                Arg::I64(v) => KernelArg::I64(*v),
                Arg::F32(v) => KernelArg::F32(*v),
                Arg::F64(v) => KernelArg::F64(*v),
                Arg::Struct(fields) => KernelArg::Bytes(
                    fields
                        .with_addresses(|buffer| match buffer {
                            RawBuffer::Emu(ptr) => Some(ptr.0),
                            RawBuffer::Cuda(_) => None,
                        })
                        .ok_or_else(foreign)?,
                ),
            })
        })
        .collect()
}

/// What the emulator reported, as every backend reports it: `printf` as one text, and lines in
/// CUDA's headers named as `#include` names them.
pub(crate) fn launch_report(report: ptx_emu::RunReport) -> LaunchReport {
    let printf = report.printf_output();
    let mut findings = report.findings;
    name_cuda_headers_as_included(&mut findings);
    LaunchReport {
        printf,
        printf_dropped: report.printf_dropped,
        findings,
        bank_conflicts: report.bank_conflicts,
        received_as: Vec::new(),
    }
}

/// Names lines in CUDA's own headers as `#include` names them (`cuda/std/__atomic/…h:279`), not
/// by where this machine keeps the headers: NVRTC's line table gives the full path it read.
pub(crate) fn name_cuda_headers_as_included(findings: &mut [ptx_emu::Finding]) {
    let mentions_a_path = |f: &ptx_emu::Finding| {
        f.accesses
            .iter()
            .map(|a| &a.at)
            .chain(f.threads.iter().map(|t| &t.at))
            .any(|at| {
                at.file.starts_with('/')
                    || at
                        .inlined_into
                        .as_ref()
                        .is_some_and(|(file, _)| file.starts_with('/'))
            })
    };
    if !findings.iter().any(mentions_a_path) {
        return;
    }
    let mut prefixes: Vec<String> = crate::nvrtc::cuda_include_dirs()
        .iter()
        .map(|dir| format!("{}/", dir.display()))
        .collect();
    // `include/cccl/` before `include/`, so that each file keeps its own `#include` name.
    prefixes.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let shorten = |text: &mut String| {
        if let Some(rest) = prefixes.iter().find_map(|p| text.strip_prefix(p.as_str())) {
            *text = rest.to_string();
        }
    };
    for finding in findings {
        for at in finding
            .accesses
            .iter_mut()
            .map(|a| &mut a.at)
            .chain(finding.threads.iter_mut().map(|t| &mut t.at))
        {
            shorten(&mut at.file);
            if let Some((file, _)) = at.inlined_into.as_mut() {
                shorten(file);
            }
        }
        for prefix in &prefixes {
            if finding.why.contains(prefix.as_str()) {
                finding.why = finding.why.replace(prefix.as_str(), "");
            }
        }
    }
}
