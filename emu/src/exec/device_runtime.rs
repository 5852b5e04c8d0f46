//! Dynamic parallelism: the device runtime a kernel calls (`__cudaCDP2…`, what `<<<…>>>`,
//! `cudaStreamCreateWithFlags`, `cudaMalloc` and `cudaMemcpyAsync` in device code become),
//! and the child grids and copies it queues.
//!
//! CUDA 12 and 13's model ("CDP2"): a child grid starts after the thread that launched it
//! reached the launch, and its parent grid is complete only when every child is; a kernel cannot
//! wait for its children (device-side `cudaDeviceSynchronize` is gone). Any schedule in which
//! children start once their parent grid ends is one a GPU may pick, and it is the one the
//! emulator runs: a grid's queued work runs, in the order it was queued, after the grid, and the
//! work that work queues after it (`Emulator::run_children`). A parent that waited in a loop
//! for a child's result would never see it: the watchdog names such a kernel as stuck.

use std::collections::HashMap;
use std::sync::Arc;

use super::allocs::DevicePtr;
use super::args::{KernelArg, LaunchConfig};
use super::child_work::{Buffer, ChildOp, ChildWork, StreamKey};
use super::ctx::{Ctx, Tgt, rd_le};
use super::devices::{Footprint, OpCheck, SharedFootprints, join_footprints};
use super::emulator::Emulator;
use super::warp::Warp;
use crate::error::EmuError;
use crate::ir::func_at;
use crate::ir::{Cdp, Space};
use crate::module::Module;
use crate::options::RunOptions;
use crate::race;
use crate::report::{AccessOp, RunReport};

/// How deep launches may nest: a GPU's hardware limit (`cudaErrorLaunchMaxDepthExceeded`
/// beyond it).
pub(crate) const MAX_NESTING: u32 = 24;

/// `cudaStreamTailLaunch` and `cudaStreamFireAndForget`, the device-only streams.
const TAIL_LAUNCH: u64 = 3;
const FIRE_AND_FORGET: u64 = 4;
/// Device streams that `cudaStreamCreateWithFlags` makes get handles from here.
const FIRST_STREAM: u64 = 0x100;
/// `cudaStreamNonBlocking`, the only flag a device-side stream may have.
const NON_BLOCKING: u64 = 1;

/// The `cudaError_t` values the device runtime returns.
const SUCCESS: i32 = 0;
const INVALID_VALUE: i32 = 1;
const MEMORY_ALLOCATION: i32 = 2;
const INVALID_CONFIGURATION: i32 = 9;
const LAUNCH_MAX_DEPTH_EXCEEDED: i32 = 65;
const INVALID_DEVICE_FUNCTION: i32 = 98;

/// CUDA's name and message for the codes above (`cudaGetErrorName`, `cudaGetErrorString`).
fn error_text(code: i32) -> (&'static str, &'static str) {
    match code {
        SUCCESS => ("cudaSuccess", "no error"),
        INVALID_VALUE => ("cudaErrorInvalidValue", "invalid argument"),
        MEMORY_ALLOCATION => ("cudaErrorMemoryAllocation", "out of memory"),
        INVALID_CONFIGURATION => (
            "cudaErrorInvalidConfiguration",
            "invalid configuration argument",
        ),
        LAUNCH_MAX_DEPTH_EXCEEDED => (
            "cudaErrorLaunchMaxDepthExceeded",
            "launch would exceed maximum depth of nested launches",
        ),
        INVALID_DEVICE_FUNCTION => ("cudaErrorInvalidDeviceFunction", "invalid device function"),
        _ => ("cudaErrorUnknown", "unknown error"),
    }
}

/// The arguments of one device runtime call, read from the calling lane's `.param` bytes.
pub(crate) struct CallArgs<'a> {
    pub(crate) tparam: &'a [u8],
    pub(crate) base: usize,
    pub(crate) offsets: &'a [u32],
}

impl CallArgs<'_> {
    fn get(&self, i: usize, within: usize, size: usize) -> u64 {
        self.offsets.get(i).map_or(0, |&o| {
            rd_le(self.tparam, self.base + o as usize + within, size)
        })
    }

    fn dim3(&self, i: usize) -> [u32; 3] {
        [0, 4, 8].map(|w| self.get(i, w, 4) as u32)
    }
}

impl Ctx<'_> {
    /// One lane's device runtime call; returns its result (a pointer or a `cudaError_t`).
    pub(crate) fn device_runtime(
        &mut self,
        w: &Warp,
        lane: usize,
        call: Cdp,
        a: &CallArgs,
        pc: u32,
    ) -> u64 {
        let gid = self.gid(w, lane);
        let code = match call {
            Cdp::GetParameterBufferV2 => {
                let config = LaunchConfig {
                    grid: a.dim3(1),
                    block: a.dim3(2),
                    dynamic_shared_bytes: a.get(3, 0, 4) as u32,
                };
                return match self.entry_at(a.get(0, 0, 8)) {
                    Some(func) => {
                        let size = self.m.funcs[func as usize].kparam_size as u64;
                        self.parameter_buffer(w, lane, Some((func, config)), size, pc)
                    }
                    None => {
                        self.cdp.last_error.insert(gid, INVALID_DEVICE_FUNCTION);
                        0
                    }
                };
            }
            Cdp::GetParameterBuffer => {
                return self.parameter_buffer(w, lane, None, a.get(1, 0, 8), pc);
            }
            Cdp::LaunchDeviceV2 => {
                self.launch_device(w, lane, a.get(0, 0, 8), None, a.get(1, 0, 8), pc)
            }
            Cdp::LaunchDevice => {
                let config = LaunchConfig {
                    grid: a.dim3(2),
                    block: a.dim3(3),
                    dynamic_shared_bytes: a.get(4, 0, 4) as u32,
                };
                match self.entry_at(a.get(0, 0, 8)) {
                    Some(func) => self.launch_device(
                        w,
                        lane,
                        a.get(1, 0, 8),
                        Some((func, config)),
                        a.get(5, 0, 8),
                        pc,
                    ),
                    None => INVALID_DEVICE_FUNCTION,
                }
            }
            Cdp::StreamCreateWithFlags => {
                if a.get(1, 0, 4) != NON_BLOCKING {
                    INVALID_VALUE
                } else {
                    self.cdp.streams_made += 1;
                    let handle = FIRST_STREAM + self.cdp.streams_made;
                    self.store_u64(w, lane, a.get(0, 0, 8), handle, pc);
                    SUCCESS
                }
            }
            Cdp::StreamDestroy => match a.get(0, 0, 8) {
                0 | TAIL_LAUNCH | FIRE_AND_FORGET => INVALID_VALUE,
                _ => SUCCESS,
            },
            Cdp::GetLastError => {
                return self.cdp.last_error.remove(&gid).unwrap_or(SUCCESS) as u32 as u64;
            }
            Cdp::PeekAtLastError => {
                return self.cdp.last_error.get(&gid).copied().unwrap_or(SUCCESS) as u32 as u64;
            }
            Cdp::GetErrorString | Cdp::GetErrorName => {
                let code = a.get(0, 0, 4) as i32;
                return self.error_string(w, lane, code, call == Cdp::GetErrorName, pc);
            }
            Cdp::Malloc => {
                let p = self.malloc(w, lane, a.get(1, 0, 8), pc);
                if p == 0 {
                    MEMORY_ALLOCATION
                } else {
                    self.store_u64(w, lane, a.get(0, 0, 8), p, pc);
                    SUCCESS
                }
            }
            Cdp::Free => {
                self.free(w, lane, a.get(0, 0, 8), pc);
                SUCCESS
            }
            Cdp::MemcpyAsync => {
                let op = ChildOp::Copy {
                    dst: a.get(0, 0, 8),
                    src: a.get(1, 0, 8),
                    bytes: a.get(2, 0, 8),
                };
                let stream = self.stream_key(w, lane, a.get(4, 0, 8));
                self.queue(op, stream, pc);
                SUCCESS
            }
            Cdp::MemsetAsync => {
                let op = ChildOp::Set {
                    dst: a.get(0, 0, 8),
                    value: a.get(1, 0, 4) as u8,
                    bytes: a.get(2, 0, 8),
                };
                let stream = self.stream_key(w, lane, a.get(3, 0, 8));
                self.queue(op, stream, pc);
                SUCCESS
            }
        };
        if code != SUCCESS {
            self.cdp.last_error.insert(gid, code);
        }
        code as u32 as u64
    }

    /// The kernel a function address (`mov.u64 %rd, kernel`) names.
    fn entry_at(&self, addr: u64) -> Option<u32> {
        let f = func_at(addr)?;
        self.m.funcs.get(f as usize)?.is_entry.then_some(f)
    }

    /// A parameter buffer on the device heap, which the parent fills before the launch.
    fn parameter_buffer(
        &mut self,
        w: &Warp,
        lane: usize,
        launch: Option<(u32, LaunchConfig)>,
        size: u64,
        pc: u32,
    ) -> u64 {
        let base = self.malloc(w, lane, size.max(1), pc);
        if base == 0 {
            self.cdp
                .last_error
                .insert(self.gid(w, lane), MEMORY_ALLOCATION);
            return 0;
        }
        let label = match launch {
            Some((func, _)) => format!(
                "the parameter buffer of a launch of {}",
                self.m.funcs[func as usize].name
            ),
            None => "a parameter buffer".to_string(),
        };
        self.allocs.edit(|allocs, _| {
            if let Some(a) = allocs.last_mut() {
                a.label = label;
            }
        });
        self.cdp.buffers.insert(base, Buffer { launch, size });
        base
    }

    /// `cudaLaunchDevice`: queues a child grid with the buffer's arguments.
    fn launch_device(
        &mut self,
        w: &Warp,
        lane: usize,
        buffer: u64,
        named: Option<(u32, LaunchConfig)>,
        stream: u64,
        pc: u32,
    ) -> i32 {
        let Some(Buffer { launch, size }) = self.cdp.buffers.remove(&buffer) else {
            return INVALID_VALUE;
        };
        let Some((func, config)) = named.or(launch) else {
            return INVALID_VALUE;
        };
        // The buffer's bytes are the child's now; it no longer counts against the heap.
        self.allocs
            .edit(|_, heap| heap.live = heap.live.saturating_sub(size.max(1)));
        let [bx, by, bz] = config.block;
        let threads = bx as u64 * by as u64 * bz as u64;
        let [gx, gy, gz] = config.grid;
        if threads == 0
            || threads > 1024
            || bz > 64
            || gx == 0
            || gy == 0
            || gz == 0
            || gx > i32::MAX as u32
            || gy > 65535
            || gz > 65535
        {
            return INVALID_CONFIGURATION;
        }
        if self.cdp.depth + 1 >= MAX_NESTING {
            return LAUNCH_MAX_DEPTH_EXCEEDED;
        }
        let f = &self.m.funcs[func as usize];
        let i = self.allocs.partition_point(|a| a.base <= buffer);
        let params = i
            .checked_sub(1)
            .and_then(|i| self.allocs.get(i))
            .and_then(|a| a.data.get(..f.kparam_size as usize))
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        let stream = self.stream_key(w, lane, stream);
        self.queue(
            ChildOp::Launch {
                func,
                config,
                params,
            },
            stream,
            pc,
        );
        SUCCESS
    }

    fn stream_key(&self, w: &Warp, lane: usize, stream: u64) -> StreamKey {
        match stream {
            0 => StreamKey::Block(self.gid(w, lane) / self.tpb as u64),
            TAIL_LAUNCH => StreamKey::Tail,
            FIRE_AND_FORGET => StreamKey::Alone,
            h => StreamKey::Named(h),
        }
    }

    /// Queues work for after the grid; what the grid does from here on is a new segment of
    /// its footprint, unordered with the work (unless it is a tail launch).
    fn queue(&mut self, op: ChildOp, stream: StreamKey, pc: u32) {
        let after = match (stream, self.op_check.as_mut()) {
            (StreamKey::Tail, _) | (_, None) => None,
            (_, Some(check)) => check.segments.as_mut().map(|segments| {
                segments.push(Vec::new());
                segments.len() - 1
            }),
        };
        // The user's line, not the device runtime header's that `<<<…>>>` is inlined from.
        let at = self.src(pc);
        let (file, line) = at.inlined_into.unwrap_or((at.file, at.line));
        let file = file.rsplit('/').next().unwrap_or_default().to_string();
        self.cdp.queued.push(ChildWork {
            op,
            stream,
            after,
            from: format!("{file}:{line}"),
        });
    }

    /// The device address of a NUL-terminated error name or message (made once per grid).
    fn error_string(&mut self, w: &Warp, lane: usize, code: i32, name: bool, pc: u32) -> u64 {
        if let Some(&at) = self.cdp.strings.get(&(code, name)) {
            return at;
        }
        let (n, message) = error_text(code);
        let text = if name { n } else { message };
        let base = self.malloc(w, lane, text.len() as u64 + 1, pc);
        if base == 0 {
            return 0;
        }
        self.allocs.edit(|allocs, heap| {
            heap.live = heap.live.saturating_sub(text.len() as u64 + 1);
            if let Some(a) = allocs.last_mut() {
                a.label = format!("the device runtime's text for error {code}");
                a.data[..text.len()].copy_from_slice(text.as_bytes());
                a.data[text.len()] = 0;
                if let Some(written) = a.written.as_mut() {
                    written.iter_mut().for_each(|b| *b = u64::MAX);
                }
            }
        });
        self.cdp.strings.insert((code, name), base);
        base
    }

    /// A store of 8 bytes through a generic pointer, checked as the thread's own store.
    fn store_u64(&mut self, w: &Warp, lane: usize, addr: u64, value: u64, pc: u32) {
        let tgt = self.resolve_full(w, lane, Space::Generic, addr, 8, 8, pc, AccessOp::Write);
        if tgt == Tgt::Bad {
            return;
        }
        self.race_check(w, lane, tgt, 8, race::Kind::Write, race::Sem::PLAIN, pc);
        self.write_tgt(tgt, 8, w.slot, value);
        self.init_write(w, tgt, 8);
        self.progress += 1;
    }
}

impl Emulator {
    /// Runs the work a grid queued, in order, each child grid followed by the work it queued
    /// (depth first): the grid is complete when its children are. Their reports join the
    /// grid's. With racecheck on, each child is checked against what nothing orders it after:
    /// what its parent did after launching it (unless it is a tail launch), the earlier
    /// children of the parent in other streams with all they launched, and whatever the parent
    /// itself is unordered with; its own footprint then joins the parent's.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_children(
        &mut self,
        device: u32,
        module: &Module,
        options: &RunOptions,
        report: &mut RunReport,
        parent: &mut Option<OpCheck>,
        queued: Vec<ChildWork>,
        depth: u32,
    ) -> Result<(), EmuError> {
        let parent_name = parent.as_ref().map(|p| p.name.clone()).unwrap_or_default();
        let segments = parent
            .as_mut()
            .and_then(|p| p.segments.take())
            .unwrap_or_default();
        // What the parent did from segment k on, for each k a launch began.
        let mut after_launch: HashMap<usize, SharedFootprints> = HashMap::new();
        let mut suffix: Vec<Option<Footprint>> = Vec::new();
        for (k, segment) in segments.iter().enumerate().rev() {
            join_footprints(&mut suffix, segment);
            if queued.iter().any(|c| c.after == Some(k)) {
                after_launch.insert(k, Arc::new(suffix.clone()));
            }
        }
        // A tail launch starts after the grid and all the other work it queued.
        let (tail, mut queued): (Vec<ChildWork>, Vec<ChildWork>) = queued
            .into_iter()
            .partition(|w| w.stream == StreamKey::Tail);
        queued.extend(tail);
        let mut earlier: Vec<(StreamKey, String, SharedFootprints)> = Vec::new();
        for work in queued {
            let ChildOp::Launch {
                func,
                config,
                ref params,
            } = work.op
            else {
                if let Some(p) = parent.as_mut() {
                    let name = format!(
                        "{} queued from the device at {}",
                        match work.op {
                            ChildOp::Copy { .. } => "a copy",
                            _ => "a memset",
                        },
                        work.from
                    );
                    let parent_after =
                        format!("the grid that queued it ({parent_name}), after queuing it,");
                    let unordered =
                        unordered_before(&work, p, &after_launch, &earlier, parent_after);
                    let (findings, own) = self.child_copy_conflicts(&work.op, &name, &unordered);
                    report.findings.extend(findings);
                    join_footprints(&mut p.own, &own);
                    earlier.push((work.stream, name, Arc::new(own)));
                }
                self.run_child_copy(&work.op)?;
                continue;
            };
            let f = &module.funcs[func as usize];
            let args: Vec<KernelArg> = f
                .params
                .iter()
                .map(|p| {
                    let at = p.offset as usize;
                    KernelArg::Bytes(
                        params
                            .get(at..at + p.size as usize)
                            .map_or_else(|| vec![0; p.size as usize], <[u8]>::to_vec),
                    )
                })
                .collect();
            let kernel = f.name.clone();
            let [gx, gy, gz] = config.grid;
            let [bx, by, bz] = config.block;
            let name = format!(
                "{}<<<({gx},{gy},{gz}), ({bx},{by},{bz})>>> launched from the device at {}",
                crate::parse::function_display_name(&kernel),
                work.from
            );
            let check = parent.as_ref().map(|p| {
                let parent_after =
                    format!("the grid that launched it ({parent_name}), after the launch,");
                OpCheck {
                    unordered: unordered_before(&work, p, &after_launch, &earlier, parent_after),
                    own: Vec::new(),
                    name: name.clone(),
                    segments: Some(vec![Vec::new()]),
                }
            });
            let ((mut child, _, mut check), more) = self.run_grid(
                device,
                check,
                module,
                &kernel,
                &config,
                &args,
                options,
                None,
                depth + 1,
            )?;
            self.run_children(
                device,
                module,
                options,
                &mut child,
                &mut check,
                more,
                depth + 1,
            )?;
            for finding in child.findings.iter_mut().filter(|f| !f.why.contains(&name)) {
                finding.why = format!("{} (in {name})", finding.why);
            }
            join_reports(report, child);
            if let (Some(p), Some(c)) = (parent.as_mut(), check) {
                join_footprints(&mut p.own, &c.own);
                earlier.push((work.stream, name, Arc::new(c.own)));
            }
        }
        Ok(())
    }

    /// The conflicts of a copy or set a kernel queued with the operations nothing orders it
    /// after, as [`Emulator::copy_on`] finds a host-queued copy's, and its footprint by
    /// allocation index. Memory outside the emulator's allocations (the device heap) is left
    /// to the copy itself to refuse.
    fn child_copy_conflicts(
        &self,
        op: &ChildOp,
        name: &str,
        unordered: &[(String, SharedFootprints, bool)],
    ) -> (Vec<crate::report::Finding>, Vec<Option<Footprint>>) {
        let sides = match *op {
            ChildOp::Copy { dst, src, bytes } => vec![
                (src, bytes, super::devices::OpAccess::Read),
                (dst, bytes, super::devices::OpAccess::Write),
            ],
            ChildOp::Set { dst, bytes, .. } => vec![(dst, bytes, super::devices::OpAccess::Write)],
            ChildOp::Launch { .. } => Vec::new(),
        };
        let mut findings = Vec::new();
        let mut own: Vec<Option<Footprint>> = Vec::new();
        for (ptr, bytes, access) in sides {
            let Some(index) = super::allocs::find_alloc(&self.allocs, ptr, bytes) else {
                continue;
            };
            let a = &self.allocs[index];
            let (off, len) = ((ptr - a.base) as usize, bytes as usize);
            let conflict = unordered.iter().find_map(|(other, footprints, _)| {
                let footprint = footprints.get(index)?.as_ref()?;
                let (byte, wrote) = footprint.conflict(access, off, len, true)?;
                Some((other, byte, wrote))
            });
            if let Some((other, byte, wrote)) = conflict {
                let hazard = super::devices::hazard(access, wrote);
                findings.push(super::streams::copy_conflict(a, byte, name, other, hazard));
            }
            if own.len() <= index {
                own.resize(index + 1, None);
            }
            own[index].get_or_insert_with(Footprint::default).record(
                access,
                off,
                len,
                a.data.len(),
            );
        }
        (findings, own)
    }

    /// A copy or set a kernel queued (`cudaMemcpyAsync`, `cudaMemsetAsync` in device code).
    fn run_child_copy(&mut self, op: &ChildOp) -> Result<(), EmuError> {
        match *op {
            ChildOp::Copy { dst, src, bytes } => {
                let mut data = vec![0; bytes as usize];
                self.read(DevicePtr(src), &mut data)?;
                self.write(DevicePtr(dst), &data)
            }
            ChildOp::Set { dst, value, bytes } => {
                self.write(DevicePtr(dst), &vec![value; bytes as usize])
            }
            ChildOp::Launch { .. } => Ok(()),
        }
    }
}

/// What nothing orders before a piece of work its grid queued: what the parent's launch
/// already had unordered, the grid itself after queuing it (`parent_after` names that), and
/// earlier work on streams that do not order this one.
fn unordered_before(
    work: &ChildWork,
    parent: &OpCheck,
    after_launch: &HashMap<usize, SharedFootprints>,
    earlier: &[(StreamKey, String, SharedFootprints)],
    parent_after: String,
) -> Vec<(String, SharedFootprints, bool)> {
    let mut unordered = parent.unordered.clone();
    if let Some(footprint) = work.after.and_then(|k| after_launch.get(&k)) {
        unordered.push((parent_after, Arc::clone(footprint), true));
    }
    for (stream, other, footprint) in earlier {
        if !work.stream.orders(*stream) {
            unordered.push((other.clone(), Arc::clone(footprint), true));
        }
    }
    unordered
}

/// A child grid's report joins its parent's: findings the parent's report already has (the
/// same kind at the same lines, as recursive kernels repeat them) add to its count.
fn join_reports(into: &mut RunReport, child: RunReport) {
    for f in child.findings {
        let same = into.findings.iter_mut().find(|g| {
            g.kind == f.kind
                && g.accesses
                    .iter()
                    .map(|a| &a.at)
                    .eq(f.accesses.iter().map(|a| &a.at))
        });
        match same {
            Some(g) => g.count += f.count,
            None => into.findings.push(f),
        }
    }
    into.completed &= child.completed;
    into.thread_instructions += child.thread_instructions;
    into.printf.extend(child.printf);
    into.printf_dropped += child.printf_dropped;
    into.shadow_bytes = into.shadow_bytes.max(child.shadow_bytes);
}
