//! Execution traces: what every warp did, step by step, for the book's players (`emu/TRACE.md`).
//!
//! Recording is asked for with [`crate::Emulator::launch_traced`]; an ordinary launch carries no
//! recorder, and the interpreter's hooks are one `Option` test each.

use crate::report::Space;

/// One warp of the launch: its block (linear index), the thread index of its lane 0 within the
/// block, and how many lanes it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceWarp {
    pub block: u32,
    pub first_thread: u32,
    pub lanes: u32,
}

/// Memory the trace can name: a global allocation, or one block's copy of a `__shared__`
/// variable (or of the dynamic shared memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceArray {
    /// The allocation's label, or the shared variable's name.
    pub name: String,
    pub space: Space,
    /// For shared memory: whose copy.
    pub block: Option<u32>,
    pub bytes: u64,
    /// The PTX type of the first access (`u32`, `s32`, `f32`, `b32`, …), for arrays that have no
    /// element type of their own; `None` until something accesses it.
    pub first_access_type: Option<&'static str>,
    /// Contents before the launch (global memory of at most [`MAX_INITIAL_BYTES`]).
    pub initial: Option<Vec<u8>>,
}

/// Global arrays larger than this are recorded without their initial contents.
pub const MAX_INITIAL_BYTES: usize = 1 << 20;

/// An instruction of the module, by PC: its `.cu` line and its PTX line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceInstr {
    /// 0 when the instruction has no line information.
    pub line: u32,
    pub inlined_at: Option<u32>,
    pub ptx_line: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceOp {
    Read,
    Write,
    /// An atomic read-modify-write (which may leave memory unchanged, as a failed CAS does).
    Atomic,
}

/// One lane's access: which array, the byte offset in it, the bytes accessed, and the value
/// (for an atomic, the value before and after).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneAccess {
    pub lane: u8,
    pub array: u32,
    pub offset: u64,
    pub size: u8,
    pub value: u64,
    pub new: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceAccess {
    pub op: TraceOp,
    /// Volatile, relaxed, acquire or release: never races with another strong access.
    pub strong: bool,
    /// The atomic operation (`add`, `cas`, …) of an `atom`/`red`.
    pub atomic: Option<&'static str>,
    pub space: Space,
    pub lanes: Vec<LaneAccess>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Warp `warp` executed the instruction at `pc` for `lanes`.
    Step {
        warp: u32,
        lanes: u32,
        pc: u32,
        access: Option<TraceAccess>,
        /// The lanes arrived at this barrier id and wait.
        barrier: Option<u8>,
        /// Lanes that finished (0 for none).
        exit: u32,
        /// Findings (indexes into the report's list) first seen at this step.
        findings: Vec<u32>,
    },
    /// A barrier of a block completed.
    Barrier { block: u32, id: u8 },
}

/// Where a finding's access happened: a step event and a lane of its warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventLane {
    pub event: usize,
    pub lane: u8,
}

/// A recorded launch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub warps: Vec<TraceWarp>,
    pub arrays: Vec<TraceArray>,
    pub program: Vec<TraceInstr>,
    pub events: Vec<TraceEvent>,
    /// Per finding of the run's report (same order): the events of its accesses, in the order of
    /// `Finding::accesses`. Empty for findings about threads rather than accesses (deadlock).
    /// `None` where an access could not be placed (it fell outside every array).
    pub finding_events: Vec<Vec<Option<EventLane>>>,
}

/// The recorder the interpreter calls while a traced launch runs.
pub(crate) struct Recorder {
    pub(crate) trace: Trace,
    limit: usize,
    pub(crate) overflowed: bool,
    /// Global allocation index → array.
    global_arrays: Vec<u32>,
    /// Shared variables sorted by offset: (offset, bytes, array of block 0); block b's copy is
    /// `array + b * shared_vars.len()`.
    shared_vars: Vec<(u64, u64, u32)>,
    nblocks: u32,
}

impl Recorder {
    pub(crate) fn new(
        limit: usize,
        warps: Vec<TraceWarp>,
        program: Vec<TraceInstr>,
        globals: Vec<(String, u64, Option<Vec<u8>>)>,
        shared: Vec<(String, u64, u64)>,
        nblocks: u32,
    ) -> Recorder {
        let mut arrays = Vec::new();
        let mut global_arrays = Vec::new();
        for (name, bytes, initial) in globals {
            global_arrays.push(arrays.len() as u32);
            arrays.push(TraceArray {
                name,
                space: Space::Global,
                block: None,
                bytes,
                first_access_type: None,
                initial,
            });
        }
        let mut shared = shared;
        shared.sort_by_key(|v| v.1);
        let first_shared = arrays.len() as u32;
        for b in 0..nblocks {
            for (name, _, bytes) in &shared {
                arrays.push(TraceArray {
                    name: name.clone(),
                    space: Space::Shared,
                    block: Some(b),
                    bytes: *bytes,
                    first_access_type: None,
                    initial: None,
                });
            }
        }
        let shared_vars = shared
            .iter()
            .enumerate()
            .map(|(i, (_, offset, bytes))| (*offset, *bytes, first_shared + i as u32))
            .collect();
        Recorder {
            trace: Trace {
                warps,
                arrays,
                program,
                events: Vec::new(),
                finding_events: Vec::new(),
            },
            limit,
            overflowed: false,
            global_arrays,
            shared_vars,
            nblocks,
        }
    }

    fn push(&mut self, event: TraceEvent) {
        if self.trace.events.len() >= self.limit {
            self.overflowed = true;
            return;
        }
        self.trace.events.push(event);
    }

    pub(crate) fn step(&mut self, warp: u32, lanes: u32, pc: u32) {
        self.push(TraceEvent::Step {
            warp,
            lanes,
            pc,
            access: None,
            barrier: None,
            exit: 0,
            findings: Vec::new(),
        });
    }

    fn current_step(&mut self) -> Option<&mut TraceEvent> {
        if self.overflowed {
            return None;
        }
        self.trace.events.last_mut()
    }

    /// The array holding a global allocation's byte, or a block's shared byte.
    pub(crate) fn global_array(&self, alloc: usize) -> Option<u32> {
        self.global_arrays.get(alloc).copied()
    }

    pub(crate) fn shared_array(&self, block: u32, offset: u64) -> Option<(u32, u64)> {
        if block >= self.nblocks {
            return None;
        }
        let i = self.shared_vars.partition_point(|v| v.0 <= offset);
        let (start, bytes, array) = *self.shared_vars.get(i.checked_sub(1)?)?;
        (offset < start + bytes.max(1)).then(|| {
            (
                array + block * self.shared_vars.len() as u32,
                offset - start,
            )
        })
    }

    /// One lane's access in the current step.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn access(
        &mut self,
        op: TraceOp,
        strong: bool,
        atomic: Option<&'static str>,
        space: Space,
        ptx_type: &'static str,
        access: LaneAccess,
    ) {
        if let Some(a) = self.trace.arrays.get_mut(access.array as usize)
            && a.first_access_type.is_none()
        {
            a.first_access_type = Some(ptx_type);
        }
        if let Some(TraceEvent::Step { access: slot, .. }) = self.current_step() {
            slot.get_or_insert_with(|| TraceAccess {
                op,
                strong,
                atomic,
                space,
                lanes: Vec::new(),
            })
            .lanes
            .push(access);
        }
    }

    pub(crate) fn barrier_arrival(&mut self, id: u8) {
        if let Some(TraceEvent::Step { barrier, .. }) = self.current_step() {
            *barrier = Some(id);
        }
    }

    /// Lanes of the current step finished (a `ret` from a device function is not an exit).
    pub(crate) fn exit(&mut self, exiting: u32) {
        if let Some(TraceEvent::Step { exit, .. }) = self.current_step() {
            *exit |= exiting;
        }
    }

    pub(crate) fn barrier_release(&mut self, block: u32, id: u8) {
        self.push(TraceEvent::Barrier { block, id });
    }

    /// A new finding (its index in the report) was added at the current step; `accesses` are
    /// the events of its accesses, in report order.
    pub(crate) fn finding(&mut self, index: usize, accesses: Vec<Option<EventLane>>) {
        if self.trace.finding_events.len() <= index {
            self.trace.finding_events.resize(index + 1, Vec::new());
        }
        self.trace.finding_events[index] = accesses;
        let Some(event) = self.trace.events.len().checked_sub(1) else {
            return;
        };
        if let Some(TraceEvent::Step { findings, .. }) = self.trace.events.get_mut(event) {
            findings.push(index as u32);
        }
    }

    /// The index of the current (last) event.
    pub(crate) fn current(&self) -> Option<usize> {
        self.trace.events.len().checked_sub(1)
    }

    /// The latest step of `warp` at `pc` in which `lane` accessed the word at `array`/`offset`:
    /// the earlier access of a race.
    pub(crate) fn find_access(
        &self,
        warp: u32,
        lane: u8,
        pc: u32,
        array: u32,
        word: u64,
    ) -> Option<usize> {
        self.trace
            .events
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, e)| match e {
                TraceEvent::Step {
                    warp: w,
                    pc: p,
                    access: Some(a),
                    ..
                } if *w == warp && *p == pc => a
                    .lanes
                    .iter()
                    .any(|l| {
                        l.lane == lane
                            && l.array == array
                            && l.offset / 4 <= word
                            && word <= (l.offset + l.size.max(1) as u64 - 1) / 4
                    })
                    .then_some(i),
                _ => None,
            })
    }
}
