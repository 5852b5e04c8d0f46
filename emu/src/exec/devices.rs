//! Several devices in one address space: which device owns an allocation, peer access between
//! them, and what racecheck across operations keeps: each operation's footprint (which bytes it
//! read and wrote, one bit per byte) and the vector clocks that say which operations are ordered.
//! The streams, events and held work that order operations are in `streams.rs`.

use super::allocs::{DevicePtr, mark_bits};
use super::args::{KernelArg, LaunchConfig};
use crate::error::EmuError;
use crate::ir::*;
use crate::module::Module;
use crate::options::RunOptions;
use crate::race;
use crate::report::{Hazard, RunReport};
use std::collections::{HashMap, VecDeque};

/// A stream made by [`Emulator::create_stream`]: work on it runs in order, on its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamId(pub(crate) u32);

/// An event recorded by [`Emulator::record_event`]: what its stream had queued at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(pub(crate) u32);

/// The devices, their peer access, and the ordering state of their streams.
pub(crate) struct Devices {
    pub(crate) count: u32,
    /// The device that allocations and unqueued launches go to (`cudaSetDevice`).
    pub(crate) current: u32,
    /// `peer[from * count + to]`: kernels on `from` may access `to`'s memory.
    pub(crate) peer: Vec<bool>,
    pub(crate) streams: Vec<StreamState>,
    pub(crate) events: Vec<EventState>,
    /// Per word written by [`Emulator::write_value_on`]: the writers' clocks, which a wait that
    /// the word meets joins.
    pub(crate) value_clocks: HashMap<u64, Vec<u64>>,
    /// What held work found when it ran, for the next host synchronization to hand back.
    pub(crate) deferred: RunReport,
    /// What the host has waited for: every operation it covers is ordered before whatever the
    /// host queues next.
    pub(crate) host: Vec<u64>,
    /// Operations not yet known to be ordered before everything the host queues next.
    pub(crate) history: Vec<Operation>,
}

/// An operation that ran on a stream and the bytes it touched, by allocation base address.
pub(crate) struct Operation {
    pub(crate) name: String,
    pub(crate) stream: u32,
    pub(crate) tick: u64,
    pub(crate) footprints: HashMap<u64, Footprint>,
}

/// One operation's accesses to one allocation, one bit per byte. Strong accesses at system scope
/// (`.sys` atomics, volatile and release/acquire accesses) are kept apart: two of them on the
/// same bytes are synchronization between devices, not a race.
#[derive(Clone, Default)]
pub(crate) struct Footprint {
    read: Vec<u64>,
    written: Vec<u64>,
    strong_read: Vec<u64>,
    strong_written: Vec<u64>,
    /// Strong accesses at `.gpu` scope (a kernel's `atomicAdd`): strong towards operations on
    /// the same device, data towards another device's.
    device_read: Vec<u64>,
    device_written: Vec<u64>,
}

/// How an access to memory that another operation touched can conflict with it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpAccess {
    Read,
    Write,
    StrongRead,
    StrongWrite,
    DeviceRead,
    DeviceWrite,
}

impl OpAccess {
    pub(crate) fn of(kind: race::Kind, sem: race::Sem) -> OpAccess {
        let strong = matches!(
            kind,
            race::Kind::StrongRead | race::Kind::StrongWrite | race::Kind::Rmw
        );
        match (kind.writes(), strong, sem.scope) {
            (false, true, Scope::Sys) => OpAccess::StrongRead,
            (true, true, Scope::Sys) => OpAccess::StrongWrite,
            (false, true, Scope::Gpu) => OpAccess::DeviceRead,
            (true, true, Scope::Gpu) => OpAccess::DeviceWrite,
            (false, _, _) => OpAccess::Read,
            (true, _, _) => OpAccess::Write,
        }
    }

    pub(crate) fn writes(self) -> bool {
        matches!(
            self,
            OpAccess::Write | OpAccess::StrongWrite | OpAccess::DeviceWrite
        )
    }
}

fn set_range(bits: &mut Vec<u64>, off: usize, len: usize, bytes: usize) {
    if bits.is_empty() {
        *bits = vec![0; bytes.div_ceil(64)];
    }
    mark_bits(bits, off, len);
}

/// The first set bit of `off..off + len`.
fn first_in_range(bits: &[u64], off: usize, len: usize) -> Option<usize> {
    if bits.is_empty() {
        return None;
    }
    let mut b = off;
    let end = off + len;
    while b < end {
        let word = bits.get(b / 64).copied().unwrap_or(0) >> (b % 64);
        if word == 0 {
            b = (b / 64 + 1) * 64;
            continue;
        }
        let hit = b + word.trailing_zeros() as usize;
        return (hit < end).then_some(hit);
    }
    None
}

impl Footprint {
    pub(crate) fn record(&mut self, access: OpAccess, off: usize, len: usize, bytes: usize) {
        let bits = match access {
            OpAccess::Read => &mut self.read,
            OpAccess::Write => &mut self.written,
            OpAccess::StrongRead => &mut self.strong_read,
            OpAccess::StrongWrite => &mut self.strong_written,
            OpAccess::DeviceRead => &mut self.device_read,
            OpAccess::DeviceWrite => &mut self.device_written,
        };
        set_range(bits, off, len, bytes);
    }

    /// Adds `other`'s accesses to this footprint.
    pub(crate) fn join(&mut self, other: &Footprint) {
        for (into, from) in [
            (&mut self.read, &other.read),
            (&mut self.written, &other.written),
            (&mut self.strong_read, &other.strong_read),
            (&mut self.strong_written, &other.strong_written),
            (&mut self.device_read, &other.device_read),
            (&mut self.device_written, &other.device_written),
        ] {
            if into.len() < from.len() {
                into.resize(from.len(), 0);
            }
            for (a, b) in into.iter_mut().zip(from) {
                *a |= b;
            }
        }
    }

    /// The first byte of `off..off + len` where `access` conflicts with this footprint, and
    /// whether the earlier access there wrote. Two strong accesses do not conflict: `.sys` ones
    /// anywhere, `.gpu` ones when both operations ran on one device (`same_device`); a conflict
    /// needs a write.
    pub(crate) fn conflict(
        &self,
        access: OpAccess,
        off: usize,
        len: usize,
        same_device: bool,
    ) -> Option<(usize, bool)> {
        let strong_now = match access {
            OpAccess::StrongRead | OpAccess::StrongWrite => true,
            OpAccess::DeviceRead | OpAccess::DeviceWrite => same_device,
            OpAccess::Read | OpAccess::Write => false,
        };
        let earlier: [(&Vec<u64>, bool, bool); 6] = [
            (&self.written, false, true),
            (&self.strong_written, true, true),
            (&self.device_written, same_device, true),
            (&self.read, false, false),
            (&self.strong_read, true, false),
            (&self.device_read, same_device, false),
        ];
        let first = |wrote: bool| {
            earlier
                .iter()
                .filter(|&&(_, _, w)| w == wrote && (wrote || access.writes()))
                .filter(|&&(_, strong, _)| !(strong && strong_now))
                .filter_map(|(bits, _, _)| first_in_range(bits, off, len))
                .min()
        };
        if let Some(byte) = first(true) {
            return Some((byte, true));
        }
        first(false).map(|byte| (byte, false))
    }
}

/// An operation's footprints by allocation index, shared by the checks that read them.
pub(crate) type SharedFootprints = std::sync::Arc<Vec<Option<Footprint>>>;

/// What a launch on a stream checks and records, by allocation index for the launch's length.
pub(crate) struct OpCheck {
    /// The earlier operations not ordered before this one: name and footprints by allocation index.
    /// Each with whether it ran on this operation's device.
    /// Shared, as the children of one grid are each checked against the same footprints.
    pub(crate) unordered: Vec<(String, SharedFootprints, bool)>,
    pub(crate) own: Vec<Option<Footprint>>,
    pub(crate) name: String,
    /// For a grid that may launch children: its footprint again, cut at each device-side
    /// launch, so that a child is checked against what its parent did after launching it
    /// (`device_runtime.rs`).
    pub(crate) segments: Option<Vec<Vec<Option<Footprint>>>>,
}

/// An access of the operation being checked that conflicts with an earlier one.
pub(crate) struct OpConflict {
    pub(crate) other: String,
    pub(crate) hazard: Hazard,
}

pub(crate) fn hazard(access: OpAccess, earlier_wrote: bool) -> Hazard {
    match (earlier_wrote, access.writes()) {
        (true, false) => Hazard::ReadAfterWrite,
        (true, true) => Hazard::WriteAfterWrite,
        (false, _) => Hazard::WriteAfterRead,
    }
}

impl OpCheck {
    /// A worker's check for the same launch: the same earlier operations to check against, and
    /// a footprint of its own, which [`OpCheck::absorb`] adds back (footprints are sets of
    /// bytes, so the order in which cores recorded them does not matter).
    pub(crate) fn fork(&self) -> OpCheck {
        OpCheck {
            unordered: self.unordered.clone(),
            own: Vec::new(),
            name: self.name.clone(),
            segments: None,
        }
    }

    /// Adds a worker's footprint (see [`OpCheck::fork`]).
    pub(crate) fn absorb(&mut self, worker: &OpCheck) {
        join_footprints(&mut self.own, &worker.own);
    }

    /// Records an access to allocation `index` (of `bytes` bytes) and returns the first earlier
    /// unordered operation it conflicts with.
    pub(crate) fn access(
        &mut self,
        index: usize,
        bytes: usize,
        off: usize,
        len: usize,
        access: OpAccess,
    ) -> Option<OpConflict> {
        if self.own.len() <= index {
            self.own.resize(index + 1, None);
        }
        self.own[index]
            .get_or_insert_with(Footprint::default)
            .record(access, off, len, bytes);
        if let Some(segment) = self.segments.as_mut().and_then(|s| s.last_mut()) {
            if segment.len() <= index {
                segment.resize(index + 1, None);
            }
            segment[index]
                .get_or_insert_with(Footprint::default)
                .record(access, off, len, bytes);
        }
        self.unordered
            .iter()
            .find_map(|(name, footprints, same_device)| {
                let footprint = footprints.get(index)?.as_ref()?;
                let (_, wrote) = footprint.conflict(access, off, len, *same_device)?;
                Some(OpConflict {
                    other: name.clone(),
                    hazard: hazard(access, wrote),
                })
            })
    }
}

/// Adds footprints by allocation index to others.
pub(crate) fn join_footprints(into: &mut Vec<Option<Footprint>>, from: &[Option<Footprint>]) {
    if into.len() < from.len() {
        into.resize(from.len(), None);
    }
    for (a, b) in into.iter_mut().zip(from) {
        if let Some(b) = b {
            a.get_or_insert_with(Footprint::default).join(b);
        }
    }
}

impl Devices {
    pub(crate) fn new() -> Self {
        Devices {
            count: 1,
            current: 0,
            peer: vec![false],
            streams: Vec::new(),
            events: Vec::new(),
            value_clocks: HashMap::new(),
            deferred: RunReport::finished(),
            host: Vec::new(),
            history: Vec::new(),
        }
    }

    pub(crate) fn peer_enabled(&self, from: u32, to: u32) -> bool {
        from == to || self.peer[(from * self.count + to) as usize]
    }

    /// Starts an operation on `stream`: the stream first learns what the host had waited for
    /// when it queued the operation, then ticks. Returns the indices of earlier operations not
    /// ordered before it.
    pub(crate) fn start(&mut self, stream: StreamId, host: &[u64]) -> (u64, Vec<usize>) {
        let s = stream.0 as usize;
        let state = &mut self.streams[s];
        join(&mut state.clock, host);
        state.clock[s] += 1;
        let tick = state.clock[s];
        let clock = &state.clock;
        let unordered = self
            .history
            .iter()
            .enumerate()
            .filter(|(_, op)| clock[op.stream as usize] < op.tick)
            .map(|(i, _)| i)
            .collect();
        (tick, unordered)
    }

    /// Drops the operations that everything queued from now on is ordered after (none while
    /// work is held: it starts from what the host had waited for when it was queued).
    pub(crate) fn forget_ordered(&mut self) {
        if self.streams.iter().any(|s| !s.held.is_empty()) {
            return;
        }
        let host = &self.host;
        self.history
            .retain(|op| host.get(op.stream as usize).copied().unwrap_or(0) < op.tick);
    }
}

pub(crate) fn join(into: &mut Vec<u64>, other: &[u64]) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, &b) in into.iter_mut().zip(other) {
        *a = (*a).max(b);
    }
}

pub(crate) fn bad_device(message: String) -> EmuError {
    EmuError::BadDevice(message)
}

/// A stream's device, clock and held work.
pub(crate) struct StreamState {
    pub(crate) device: u32,
    /// The stream's number among its device's streams, from 0, for reports.
    pub(crate) number: u32,
    pub(crate) clock: Vec<u64>,
    /// Operations queued so far, for reports ("its operation 3").
    pub(crate) queued: u32,
    /// Work held behind an unmet wait, in the order the host queued it.
    pub(crate) held: VecDeque<Held>,
    /// What reports add to its name (`host thread 2's default stream`).
    pub(crate) role: Option<String>,
}

/// An event: where it was recorded, and the clock it captured once its record ran.
pub(crate) struct EventState {
    pub(crate) stream: u32,
    pub(crate) position: u32,
    pub(crate) clock: Option<Vec<u64>>,
}

/// Work a stream holds behind an unmet wait.
pub(crate) struct Held {
    /// Which of its stream's operations this is, from 1.
    pub(crate) position: u32,
    /// What the host had waited for when it queued the work.
    pub(crate) host: Vec<u64>,
    pub(crate) work: Work,
}

pub(crate) enum Work {
    Launch {
        module: Box<Module>,
        entry: String,
        config: LaunchConfig,
        args: Vec<KernelArg>,
        options: RunOptions,
        /// The caller's name for it in reports (`Emulator::launch_on_labelled`).
        label: Option<String>,
    },
    Copy {
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        racecheck: bool,
        label: Option<String>,
    },
    Record(EventId),
    WaitEvent(EventId),
    WaitValue {
        ptr: DevicePtr,
        at_least: u32,
    },
    WriteValue {
        ptr: DevicePtr,
        value: u32,
    },
}
