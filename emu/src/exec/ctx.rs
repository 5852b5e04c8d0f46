//! `Ctx`, what one launch's instructions see: the module, memory, per-slot shared memory, the
//! checkers' state and counters; with operand reads and the names of threads and source lines.

use super::allocs::Allocation;
use super::collector::Collector;
use super::devices::OpCheck;
use super::views::{BlockViews, Globals};
use super::warp::{CopyInFlight, RoundTag, Warp};
use crate::error::EmuError;
use crate::ir::*;
use crate::module::Module;
use crate::options::RunOptions;
use crate::race::Racecheck;
use crate::report::{PrintfRecord, SourceLoc, ThreadRef};
use crate::trace::Recorder;
use crate::{banks, race};

pub(crate) struct Ctx<'a> {
    pub(crate) m: &'a Module,
    pub(crate) allocs: Globals<'a>,
    pub(crate) opts: RunOptions,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) tpb: u32,
    pub(crate) wpb: u32,
    pub(crate) kparams: Vec<u8>,
    /// The resident blocks' shared and local memory (owned by the launch: `Launch::memory`).
    pub(crate) mem: BlockViews,
    /// What shared memory holds when a block starts.
    pub(crate) shared_init: Vec<u8>,
    /// Words of initcheck bits per slot in `Launch::memory.shared_written`.
    pub(crate) shared_words: usize,
    pub(crate) shared_size: u32,
    pub(crate) dyn_base: u32,
    pub(crate) reserved_base: u32,
    pub(crate) dyn_size: u32,
    pub(crate) local_size: u32,
    pub(crate) race: Option<Racecheck>,
    pub(crate) findings: Collector,
    /// Race findings from a piped detector, merged into `findings` when the launch ends.
    pub(crate) race_findings: Collector,
    /// Index into `allocs` of the last global access, tried first.
    pub(crate) last_alloc: usize,
    /// The device the launch runs on, and per device whether it may access that device's memory.
    pub(crate) device: u32,
    pub(crate) peer: Vec<bool>,
    /// For a launch queued on a stream: the earlier operations it may race with, and its own
    /// footprint (see `devices.rs`).
    pub(crate) op_check: Option<Box<OpCheck>>,
    pub(crate) clock: u64,
    pub(crate) thread_instrs: u64,
    /// Steps of the schedule, one per lane that a warp's step starts with (the watchdog's unit:
    /// a round adds at most one per resident thread). Under every schedule but the hardware
    /// one a step is one instruction.
    pub(crate) thread_steps: u64,
    /// Counts progress events for the watchdog: memory changed by a store or atomic, a barrier
    /// completed, a thread exited or started.
    pub(crate) progress: u64,
    /// A failed assert or a stack overflow ended the launch.
    pub(crate) aborted: bool,
    /// A thread reached an instruction the emulator does not run: the launch stops, and this
    /// is its error.
    pub(crate) refusal: Option<EmuError>,
    pub(crate) printf: Vec<PrintfRecord>,
    pub(crate) printf_bytes: usize,
    pub(crate) printf_dropped: u64,
    /// `cudaGraphSetConditional` calls, in the order threads made them.
    pub(crate) conditions: Vec<crate::report::ConditionSet>,
    /// Set by a strong access or atomic on global memory, where blocks hand data to each other:
    /// the adversarial schedule switches warps there.
    pub(crate) touched_global_sync: bool,
    /// The recorder of a traced launch ([`Emulator::launch_traced`]); `None` otherwise.
    pub(crate) trace: Option<Box<Recorder>>,
    /// Shared-memory bank conflicts so far, when [`RunOptions::bank_conflicts`] asks for them.
    pub(crate) banks: Option<Box<banks::Tally>>,
    /// Scratch for a store instruction's lanes (see `instr::memory::LaneStores`), kept between
    /// instructions so that stores do not allocate.
    pub(crate) lane_stores: Vec<(Tgt, [u64; 4])>,
    /// Dynamic parallelism: the grid's depth and what its threads queued (`child_work.rs`).
    pub(crate) cdp: super::child_work::DeviceRuntime,
    /// The module's compiled regions, when the launch runs with the compiled tier.
    pub(crate) compiled: Option<&'a crate::compiled::Tier>,
    /// The longest compiled region a warp may start now: how many of its steps may pass before
    /// anyone but the warp looks at its registers. The loops that step warps set it; 0 keeps
    /// every instruction in the interpreter.
    pub(crate) region_rounds: u32,
    /// A step of the hardware schedule ends once `thread_instrs` reaches this (`block::step`):
    /// the step budget on the launch's own context, whose count is the launch's; never on a
    /// worker's, whose turns end before the budget (`Launch::rounds_unwatched`).
    pub(crate) steps_end_at: u64,
    /// Under racecheck, the `cp.async` copies issued and not landed yet by the block whose
    /// round this core runs (the hardware schedule keeps each block's in its `BlockState`
    /// between rounds; the other schedules run every block here): shared memory any thread
    /// touches there before the wait races with the copy.
    pub(crate) copies_in_flight: Vec<CopyInFlight>,
    /// The blocks' rounds whose race-detector calls wait in this worker's log, in the order
    /// they ran.
    pub(crate) round_tags: Vec<RoundTag>,
    /// Per slot, on the launch's context: the block and the last of its rounds whose calls
    /// reached the detector.
    pub(crate) joined_rounds: Vec<Option<RoundTag>>,
}

/// A resolved place. The derived order (memory, then offset) is what a warp store's lanes are
/// compared by (see `instr::memory::LaneStores`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tgt {
    G(usize, usize),
    S(usize),
    L(usize),
    Bad,
}

#[inline(always)]
pub(crate) fn rd_le(d: &[u8], off: usize, size: usize) -> u64 {
    match (size, d.get(off..off.saturating_add(size))) {
        (4, Some(s)) => return u32::from_le_bytes(s.try_into().unwrap_or_default()) as u64,
        (8, Some(s)) => return u64::from_le_bytes(s.try_into().unwrap_or_default()),
        _ => {}
    }
    let mut b = [0u8; 8];
    if let Some(s) = d.get(off..off.saturating_add(size)) {
        b[..size].copy_from_slice(s);
    }
    u64::from_le_bytes(b)
}

#[inline(always)]
pub(crate) fn wr_le(d: &mut [u8], off: usize, size: usize, v: u64) {
    if let Some(s) = d.get_mut(off..off.saturating_add(size)) {
        s.copy_from_slice(&v.to_le_bytes()[..size]);
    }
}

/// The key that makes findings about one object one finding: a heap block's `malloc` call site
/// (every thread's block from one call is "the same" object), otherwise the allocation itself.
pub(crate) fn heap_key(a: &Allocation) -> u64 {
    match &a.heap {
        Some(h) => (1 << 61) | h.site as u64,
        None => a.base,
    }
}

pub(crate) fn split3(i: u32, d: [u32; 3]) -> [u32; 3] {
    [i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])]
}

pub(crate) fn split3_64(i: u64, d: [u32; 3]) -> [u32; 3] {
    let (x, y) = (d[0] as u64, d[1] as u64);
    [(i % x) as u32, ((i / x) % y) as u32, (i / (x * y)) as u32]
}

impl Ctx<'_> {
    pub(crate) fn thread_ref(&self, gid: u64) -> ThreadRef {
        let tpb = self.tpb as u64;
        ThreadRef {
            block: split3_64(gid / tpb, self.grid),
            thread: split3((gid % tpb) as u32, self.block),
        }
    }

    pub(crate) fn src(&self, pc: u32) -> SourceLoc {
        let (loc, ptx_line) = match self.m.code.get(pc as usize) {
            Some(i) => (self.m.locs.get(i.loc as usize), i.ptx_line),
            None => (None, 0),
        };
        match loc {
            Some(l) if l.line != 0 => SourceLoc {
                file: self.m.file_name(l.file).to_string(),
                line: l.line,
                inlined_at: l.inlined_at.map(|x| x.1),
                inlined_into: l
                    .outermost
                    .filter(|&(file, _)| file != l.file)
                    .map(|(file, line)| (self.m.file_name(file).to_string(), line)),
                called_from: l
                    .inlined_at
                    .and(l.outermost)
                    .filter(|&(file, line)| file == l.file && line != l.line)
                    .map(|(_, line)| line),
                ptx_line,
            },
            _ => SourceLoc {
                file: String::new(),
                line: 0,
                inlined_at: None,
                inlined_into: None,
                called_from: None,
                ptx_line,
            },
        }
    }

    pub(crate) fn line_of(&self, pc: u32) -> u32 {
        self.m
            .code
            .get(pc as usize)
            .and_then(|i| self.m.locs.get(i.loc as usize))
            .map(|l| l.line)
            .unwrap_or(0)
    }

    #[inline(always)]
    pub(crate) fn get(&self, w: &Warp, o: Opnd, lane: usize) -> u64 {
        self.get_ref(w, &o, lane)
    }

    /// [`Ctx::get`] of an operand read where it lies in the instruction. Copying the operand
    /// first (`ctx.get(w, *o, l)`) compiled to a copy of its bytes through the stack and a
    /// wider read of the register number from it, which stalled every lane.
    #[inline(always)]
    pub(crate) fn get_ref(&self, w: &Warp, o: &Opnd, lane: usize) -> u64 {
        match o {
            Opnd::Reg(r) => w.regs[*r as usize][lane],
            Opnd::Imm(v) => *v,
            Opnd::Sreg(s) => self.sreg(w, *s, lane),
        }
    }

    #[inline(always)]
    pub(crate) fn addr(&self, w: &Warp, a: &Addr, lane: usize) -> u64 {
        match a {
            Addr::Reg { base, off } => self.get_ref(w, base, lane).wrapping_add(*off as u64),
            Addr::KParam(o) | Addr::TParam(o) => *o as u64,
        }
    }

    /// Global linear thread id.
    pub(crate) fn gid(&self, w: &Warp, lane: usize) -> u64 {
        w.block * self.tpb as u64 + (w.first + lane as u32) as u64
    }

    /// Index of the thread among the resident blocks' threads.
    pub(crate) fn rt(&self, w: &Warp, lane: usize) -> u32 {
        w.slot * self.tpb + w.first + lane as u32
    }

    pub(crate) fn who(&self, w: &Warp, lane: usize) -> race::Who {
        race::Who {
            tid: self.gid(w, lane),
            slot: w.slot,
            rt: self.rt(w, lane),
            warp: w.gw,
        }
    }

    /// The warp's index in a trace: `block * warps_per_block + warp` (traced launches have at
    /// most `u32::MAX` warps).
    pub(crate) fn trace_warp(&self, w: &Warp) -> u32 {
        (w.block * self.wpb as u64) as u32 + w.first / 32
    }
}
