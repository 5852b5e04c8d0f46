//! The checkers' hooks on each access: racecheck (shadow memory and synchronization), initcheck,
//! and the collector that merges repeated findings into one with a count.

use super::allocs::{all_bits, all_bits_shared, mark_bits, mark_bits_shared};
use super::ctx::{Ctx, Tgt};
use super::devices::OpAccess;
use super::instr::atom_name;
use super::warp::CopyInFlight;
use super::warp::Warp;
use crate::ir::*;
use crate::options::Schedule;
use crate::race::Racecheck;
use crate::report::{Access, AccessOp, Finding, FindingKind, Hazard};
use crate::trace::{EventLane, LaneAccess, TraceOp};
use crate::{race, report};

/// Where a conflict's second access was: what a race finding names.
#[derive(Clone, Copy)]
pub(crate) struct RaceSite {
    tid: u64,
    tgt: Tgt,
    off: usize,
    size: u32,
    kind: race::Kind,
    pc: u32,
}

impl Ctx<'_> {
    /// Race check for an access to `size` bytes at `tgt` (global or shared).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn race_check(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        size: u32,
        kind: race::Kind,
        sem: race::Sem,
        pc: u32,
    ) {
        if self.race.is_some() {
            self.race_check_shadow(w, lane, tgt, size, kind, sem, pc);
            if !self.copies_in_flight.is_empty()
                && let Tgt::S(off) = tgt
            {
                self.copy_in_flight_check(w, lane, off, size, kind, pc);
            }
        }
        if self.op_check.is_some()
            && let Tgt::G(index, off) = tgt
        {
            self.stream_race_check(w, lane, index, off, size, kind, sem, pc);
        }
    }

    /// An access to shared memory that a `cp.async` of the same block is still copying into:
    /// the copy lands at some moment between its issue and its thread's wait, so the access
    /// races with it, whichever thread makes it (the issuing thread included).
    #[cold]
    fn copy_in_flight_check(
        &mut self,
        w: &Warp,
        lane: usize,
        off: usize,
        size: u32,
        kind: race::Kind,
        pc: u32,
    ) {
        let overlaps = |c: &CopyInFlight| {
            c.slot == w.slot && c.offset < off + size as usize && off < c.offset + c.size as usize
        };
        let Some(copy) = self.copies_in_flight.iter().copied().find(overlaps) else {
            return;
        };
        let tid = self.gid(w, lane);
        let reads = matches!(kind, race::Kind::Read | race::Kind::StrongRead);
        let fk = FindingKind::Race {
            hazard: if reads {
                report::Hazard::ReadAfterWrite
            } else {
                report::Hazard::WriteAfterWrite
            },
            space: report::Space::Shared,
        };
        let (loc, obj) = self.mem_location(report::Space::Shared, off as u64, off as u64, size);
        let key = (fk, self.line_of(copy.pc), self.line_of(pc), obj);
        let copy_line = self.src(copy.pc);
        let issuer = if copy.tid == tid {
            "this thread's own".to_string()
        } else {
            format!("{}'s", self.thread_ref(copy.tid))
        };
        let why = format!(
            "{issuer} `cp.async` at {} is still copying into this shared memory: an \
             asynchronous copy lands at some moment before its thread's `cp.async.wait_group` \
             (`cp.async.wait_all`, `__pipeline_wait_prior`, `cuda::pipeline`'s wait), and nothing \
             waited for it before this {}, so it may see the bytes from before the copy or after",
            copy_line,
            if reads { "read" } else { "write" }
        );
        let accesses = vec![
            Access {
                op: AccessOp::Write,
                thread: self.thread_ref(copy.tid),
                at: copy_line,
            },
            Access {
                op: if reads {
                    AccessOp::Read
                } else {
                    AccessOp::Write
                },
                thread: self.thread_ref(tid),
                at: self.src(pc),
            },
        ];
        let make = || Finding {
            kind: fk,
            count: 1,
            location: Some(loc),
            accesses,
            threads: vec![],
            why,
        };
        self.findings.add(key, make);
    }

    /// Racecheck across operations: this launch's access against the earlier operations on
    /// other streams that nothing orders before it (see `devices.rs`).
    #[allow(clippy::too_many_arguments)]
    #[cold]
    fn stream_race_check(
        &mut self,
        w: &Warp,
        lane: usize,
        index: usize,
        off: usize,
        size: u32,
        kind: race::Kind,
        sem: race::Sem,
        pc: u32,
    ) {
        let bytes = self.allocs[index].data.len();
        let Some(check) = self.op_check.as_mut() else {
            return;
        };
        let access = OpAccess::of(kind, sem);
        let Some(conflict) = check.access(index, bytes, off, size as usize, access) else {
            return;
        };
        let this = check.name.clone();
        let a = &self.allocs[index];
        let addr = a.base + off as u64;
        let (location, object) = self.mem_location(report::Space::Global, addr, addr, size);
        let key = (
            FindingKind::StreamRace {
                hazard: conflict.hazard,
            },
            self.line_of(pc),
            0,
            object,
        );
        let gid = self.gid(w, lane);
        let (thread, at) = (self.thread_ref(gid), self.src(pc));
        let op = if access.writes() {
            AccessOp::Write
        } else {
            AccessOp::Read
        };
        let earlier = match conflict.hazard {
            Hazard::WriteAfterRead => "read",
            Hazard::ReadAfterWrite | Hazard::WriteAfterWrite => "wrote",
        };
        let new = self.findings.add(key, || Finding {
            kind: FindingKind::StreamRace {
                hazard: conflict.hazard,
            },
            count: 1,
            location: Some(location),
            accesses: vec![Access { op, thread, at }],
            threads: vec![],
            why: format!(
                "{this} touches bytes that {} {earlier}, and no stream order, event wait or synchronization orders the two",
                conflict.other
            ),
        });
        self.link_finding(new, None, lane);
    }

    // Inlined, so that the access's place reaches it in registers: passed in memory, it was
    // read back wider than the caller had just written it, a stall on every access.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn race_check_shadow(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        size: u32,
        kind: race::Kind,
        sem: race::Sem,
        pc: u32,
    ) {
        let (region, off) = match tgt {
            Tgt::G(i, off) => (
                race::Region::Global {
                    index: i,
                    words: self.allocs[i].data.len().div_ceil(4),
                },
                off,
            ),
            Tgt::S(off) => (
                race::Region::Shared {
                    slot: w.slot,
                    block: w.block,
                },
                off,
            ),
            _ => return,
        };
        if size == 4
            && off.is_multiple_of(4)
            && self.lengthened_run(w, lane, tgt, off, kind, sem, pc)
        {
            return;
        }
        let who = self.who(w, lane);
        let end = off + size as usize;
        let mut o = off;
        while o < end {
            let word = o / 4;
            let wend = ((word + 1) * 4).min(end);
            // Bytes `o % 4 .. (o % 4) + (wend - o)` of the word: at most four.
            let mask = (((1u32 << (wend - o)) - 1) << (o % 4)) as u8;
            match self.race.as_mut() {
                Some(Racecheck::Inline(r)) => {
                    if let Some(hit) = r.access(region, word, mask, size, &who, kind, sem, pc) {
                        self.report_race(w, lane, tgt, o, size, kind, pc, hit);
                    }
                }
                Some(Racecheck::Piped(pipe)) => {
                    pipe.push_access(region, word, mask, size, &who, kind, sem, pc);
                    self.findings.position = 2 * pipe.accesses;
                    if !pipe.found.is_empty() {
                        self.report_found();
                    }
                }
                Some(Racecheck::Logged(log)) => {
                    log.push_access(region, word, mask, size, &who, kind, sem, pc);
                    // Counted from the block's turn's start here; `parallel/` adds the
                    // accesses sent before it.
                    self.findings.position = 2 * log.accesses();
                }
                Some(Racecheck::Finished(..)) => {}
                None => {}
            }
            o = wend;
        }
    }

    /// Logs a plain 4-byte access as one more lane of the run its warp's instruction is making,
    /// when it is that run's next lane: true when it did. Exactly what logging it as a call of
    /// its own would leave (see `race/calls.rs`), for a few comparisons instead of a packed call.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn lengthened_run(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        off: usize,
        kind: race::Kind,
        sem: race::Sem,
        pc: u32,
    ) -> bool {
        let place = match tgt {
            Tgt::G(index, _) => race::run_place(false, index as u32),
            Tgt::S(_) => race::run_place(true, w.slot),
            _ => return false,
        };
        let word = (off / 4) as u64;
        let rt = self.rt(w, lane);
        let warp_pc = w.gw as u64 | (pc as u64) << 32;
        let bits = race::word_access_bits(kind, sem);
        match self.race.as_mut() {
            Some(Racecheck::Piped(pipe)) => {
                if !pipe.lengthen_run(word, rt, place, warp_pc, bits) {
                    return false;
                }
                self.findings.position = 2 * pipe.accesses;
                if !pipe.found.is_empty() {
                    self.report_found();
                }
                true
            }
            Some(Racecheck::Logged(log)) => {
                if !log.streams.lengthen_run(word, rt, place, warp_pc, bits) {
                    return false;
                }
                self.findings.position = 2 * log.accesses();
                true
            }
            _ => false,
        }
    }

    /// Waits for a piped race detector to apply every call and reports what it found.
    /// Returns the time the launch's thread spent on the detector, and each shard's.
    pub(crate) fn finish_racecheck(&mut self) -> (std::time::Duration, Vec<std::time::Duration>) {
        let Some(Racecheck::Piped(pipe)) = self.race.as_mut() else {
            return Default::default();
        };
        let (shards, shadow_bytes) = pipe.finish();
        super::launch::free_aside(shards);
        let times = (pipe.detector_time, std::mem::take(&mut pipe.shard_busy));
        self.report_found();
        self.race = Some(Racecheck::Finished(shadow_bytes));
        times
    }

    /// Turns the conflicts a piped race detector sent back into findings, each at the position
    /// of the access that found it.
    #[cold]
    pub(crate) fn report_found(&mut self) {
        let Some(Racecheck::Piped(pipe)) = self.race.as_mut() else {
            return;
        };
        let found = std::mem::take(&mut pipe.found);
        for race::Found { seq, access, hit } in found {
            let off = access.word * 4 + access.mask.trailing_zeros() as usize;
            let tgt = match access.region {
                race::Region::Global { index, .. } => Tgt::G(index, off),
                race::Region::Shared { .. } => Tgt::S(off),
            };
            self.race_findings.position = 2 * seq + 1;
            let site = RaceSite {
                tid: access.who.tid,
                tgt,
                off,
                size: access.size,
                kind: access.kind,
                pc: access.pc,
            };
            self.add_race_finding(true, site, &hit);
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn report_race(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        off: usize,
        size: u32,
        kind: race::Kind,
        pc: u32,
        hit: race::Hit,
    ) {
        let site = RaceSite {
            tid: self.gid(w, lane),
            tgt,
            off,
            size,
            kind,
            pc,
        };
        let new = self.add_race_finding(false, site, &hit);
        if new.is_some() && self.trace.is_some() {
            let earlier = self.earlier_access(w, tgt, off, hit.prev);
            self.link_finding(new, Some(earlier), lane);
        }
    }

    /// Adds (or counts) the finding for a conflict, to the launch's findings or, for a piped
    /// detector's, to its own list; returns the index of a new one.
    fn add_race_finding(&mut self, piped: bool, site: RaceSite, hit: &race::Hit) -> Option<usize> {
        let RaceSite {
            tid,
            tgt,
            off,
            size,
            kind,
            pc,
        } = site;
        let (sp, addr_off, addr) = match tgt {
            Tgt::G(i, _) => (
                report::Space::Global,
                self.allocs[i].base + off as u64,
                self.allocs[i].base + off as u64,
            ),
            _ => (report::Space::Shared, off as u64, off as u64),
        };
        let (loc, obj) = self.mem_location(sp, addr_off, addr, size);
        let fk = FindingKind::Race {
            hazard: hit.hazard,
            space: sp,
        };
        let key = (fk, self.line_of(hit.prev.pc), self.line_of(pc), obj);
        let prev_read = hit.hazard == report::Hazard::WriteAfterRead;
        let prev_op = match (prev_read, hit.prev.strong, hit.prev.atomic) {
            (_, _, true) => AccessOp::Atomic,
            (true, true, false) => AccessOp::AtomicRead,
            (false, true, false) => AccessOp::AtomicWrite,
            (true, false, false) => AccessOp::Read,
            (false, false, false) => AccessOp::Write,
        };
        let cur_op = match kind {
            race::Kind::Read => AccessOp::Read,
            race::Kind::Write => AccessOp::Write,
            race::Kind::StrongRead => AccessOp::AtomicRead,
            race::Kind::StrongWrite => AccessOp::AtomicWrite,
            race::Kind::Rmw => AccessOp::Atomic,
        };
        let first = Access {
            op: prev_op,
            thread: self.thread_ref(hit.prev.tid),
            at: self.src(hit.prev.pc),
        };
        let second = Access {
            op: cur_op,
            thread: self.thread_ref(tid),
            at: self.src(pc),
        };
        let why = self.race_why(hit, tid, pc, sp);
        let make = || Finding {
            kind: fk,
            count: 1,
            location: Some(loc),
            accesses: vec![first, second],
            threads: vec![],
            why,
        };
        if piped {
            self.race_findings.add(key, make)
        } else {
            self.findings.add(key, make)
        }
    }

    /// Why the accesses of `hit` race, in the words a finding prints: what is missing, and for
    /// scoped and volatile races which operation falls short and what would order them.
    fn race_why(&self, hit: &race::Hit, tid: u64, pc: u32, sp: report::Space) -> String {
        let tpb = self.tpb as u64;
        let same_block = hit.prev.tid / tpb == tid / tpb;
        let block_of = |t: u64| {
            let [x, y, z] = self.thread_ref(t).block;
            format!("({x},{y},{z})")
        };
        match hit.cause {
            race::Cause::Scope { prev, cur } => {
                let ((narrow_pc, narrow_tid), (other_pc, other_tid)) = if prev == Scope::Cta {
                    ((hit.prev.pc, hit.prev.tid), (pc, tid))
                } else {
                    ((pc, tid), (hit.prev.pc, hit.prev.tid))
                };
                let both = prev == Scope::Cta && cur == Scope::Cta;
                format!(
                    "{} at {} (block scope: block {}) and {} at {} in block {} are not ordered — \
                     {} covers only its own block; with device scope ({}) they would be",
                    self.op_name(narrow_pc),
                    self.src(narrow_pc),
                    block_of(narrow_tid),
                    self.op_name(other_pc),
                    self.src(other_pc),
                    block_of(other_tid),
                    if both {
                        "each"
                    } else {
                        "a block-scoped operation"
                    },
                    self.op_name_with_scope(narrow_pc, Scope::Gpu),
                )
            }
            race::Cause::StrongData => {
                let same_warp = same_block && (hit.prev.tid % tpb) / 32 == (tid % tpb) / 32;
                let order = if hit.released_early {
                    RELEASED_EARLY
                } else if same_warp {
                    "they are in one warp, whose threads need not run in lockstep (since Volta): \
                     __syncwarp() between the steps orders them"
                } else {
                    "order them with a lock both sides take, __syncthreads(), or a flag handed \
                     off with __threadfence()"
                };
                let atomic_pc = if hit.prev.atomic {
                    Some(hit.prev.pc)
                } else {
                    matches!(self.op_at(pc), Some(Op::Atom { .. })).then_some(pc)
                };
                let what = match atomic_pc {
                    Some(atomic_pc) => {
                        let other_pc = if atomic_pc == pc { hit.prev.pc } else { pc };
                        format!(
                            "{} is atomic, but the {} access beside it is not, and no thread \
                             polls or acquires the word as a lock or flag",
                            self.op_name(atomic_pc),
                            self.strength_name(other_pc),
                        )
                    }
                    None => format!(
                        "both are {} accesses, and no thread polls or acquires the word as a flag \
                         (a store right after a fence is not enough)",
                        self.strength_name(pc)
                    ),
                };
                format!(
                    "{what}: PTX does not call this a data race, but nothing orders them, so what \
                     is read or kept depends on timing — {order} (`--memory-model ptx` reports \
                     only PTX's data races)"
                )
            }
            race::Cause::Unordered => {
                // A flag hand-off (a gap waiting for a fence) has its own explanation below.
                let after_one_barrier =
                    same_block && hit.prev.bar > 0 && hit.gap.is_none() && !hit.released_early;
                let mut why = if after_one_barrier {
                    // Barriers came before both accesses, so the learner has barriers in mind:
                    // say what a barrier orders, which is not what runs between two of them.
                    let (earlier, later) = (self.line_of(hit.prev.pc), self.line_of(pc));
                    // Both after the same barrier, yet a barrier's line stands between the
                    // later access's line and the earlier one's: the later access is the next
                    // time round a loop, and the barrier the learner sees between the lines is
                    // not between these two accesses. (By lines, not addresses: an unrolled
                    // loop lays its rounds out one after another.)
                    let across_rounds = later > 0
                        && later < earlier
                        && (0..self.m.code.len() as u32).any(|at| {
                            matches!(self.op_at(at), Some(Op::Bar { .. }))
                                && (later + 1..earlier).contains(&self.line_of(at))
                        });
                    let between = if earlier == later {
                        "two threads running the same statement between barriers; an atomic, \
                         or a __syncthreads() between one thread's access and the other's, \
                         orders them"
                            .to_string()
                    } else if across_rounds {
                        format!(
                            "two threads' accesses between barriers; here line {earlier} ran \
                             first and line {later} after it, the next time round a loop: a \
                             __syncthreads() after line {earlier}, before the loop comes back \
                             to line {later}, orders them"
                        )
                    } else {
                        "two threads' accesses between barriers; a __syncthreads() between the \
                         two lines orders them (atomics on both sides would only keep each \
                         access whole, not order the read after the writes it needs)"
                            .to_string()
                    };
                    format!(
                        "both ran after the same __syncthreads() with none between them: a \
                         barrier orders what comes before it against what comes after it, not \
                         {between}"
                    )
                } else if sp == report::Space::Shared || same_block {
                    let atomic = |at: u32| matches!(self.op_at(at), Some(Op::Atom { .. }));
                    if atomic(hit.prev.pc) != atomic(pc) {
                        // "no atomic orders them" reads wrong beside an atomic of the learner's.
                        "one of the two is an atomic and the other a plain access: an atomic \
                         keeps its own update whole but orders nothing else, and no \
                         __syncthreads() or fence orders them"
                            .to_string()
                    } else {
                        "no __syncthreads(), atomic or fence orders them".to_string()
                    }
                } else {
                    "different blocks, and no atomic/fence hand-off orders them (__syncthreads() only orders one block)".to_string()
                };
                if hit.released_early {
                    why.push_str("; ");
                    why.push_str(RELEASED_EARLY);
                }
                let same_warp = same_block && (hit.prev.tid % tpb) / 32 == (tid % tpb) / 32;
                if let (true, Schedule::Lanes { seed }) = (same_warp, self.opts.schedule) {
                    // A learner who already wrote a __syncwarp (inside an `if`, or with a mask
                    // of the lanes at hand) must hear why that one did not order them.
                    // One between the two accesses, by address or by line.
                    let (first, second) = (hit.prev.pc.min(pc), hit.prev.pc.max(pc));
                    let (low, high) = {
                        let (a, b) = (self.line_of(hit.prev.pc), self.line_of(pc));
                        (a.min(b), a.max(b))
                    };
                    let has_warp_sync = (0..self.m.code.len() as u32).any(|at| {
                        matches!(self.op_at(at), Some(Op::BarWarp { .. }))
                            && ((first..=second).contains(&at)
                                || (low > 0 && (low..=high).contains(&self.line_of(at))))
                    });
                    let orders = if has_warp_sync {
                        "a __syncwarp() orders them only when both lanes take part in the same one \
                         between the two accesses (both reach it, both in its mask)"
                    } else {
                        "__syncwarp() between them orders them"
                    };
                    why.push_str(&format!(
                        "; they are in one warp, and the schedule lanes:{seed} ran its lanes \
                         apart, as a GPU may since Volta: {orders}"
                    ));
                }
                if let Some(gap) = hit.gap.filter(|g| g.awaits_fence) {
                    let (what, after) = match self.op_at(gap.pc) {
                        Some(Op::Atom { .. }) => (
                            "an atomic without .acquire",
                            "right after it (after a lock's spin)",
                        ),
                        _ => ("a volatile or relaxed load", "right after it"),
                    };
                    why.push_str(&format!(
                        "; {} at {} took what the other side released, but {what} acquires only \
                         with a fence after it: __threadfence() {after} orders them",
                        self.op_name(gap.pc),
                        self.src(gap.pc),
                    ));
                } else if let Some(gap) = hit.gap.filter(|g| !same_block && g.scope == Scope::Cta) {
                    why.push_str(&format!(
                        "; {} at {} has block scope, which orders only within one block — with \
                         device scope ({}) it would order them",
                        self.op_name(gap.pc),
                        self.src(gap.pc),
                        self.op_name_with_scope(gap.pc, Scope::Gpu),
                    ));
                }
                why
            }
        }
    }

    /// The CUDA name of the synchronizing instruction at `pc` (`atomicExch_block`,
    /// `__threadfence_block()`, `volatile store`), as it is written.
    pub(crate) fn op_name(&self, pc: u32) -> String {
        let scope = self.op_at(pc).and_then(Op::scope).unwrap_or(Scope::Gpu);
        self.op_name_with_scope(pc, scope)
    }

    /// [`Ctx::op_name`] as it would be written with `scope`.
    pub(crate) fn op_name_with_scope(&self, pc: u32, scope: Scope) -> String {
        let suffix = scope.cuda_suffix();
        match self.op_at(pc) {
            Some(Op::Atom { op, .. }) => {
                // CUDA's names: atomicAdd, atomicExch, …, and atomicCAS.
                let name = match atom_name(*op) {
                    "cas" => "CAS".to_string(),
                    lower => lower[..1].to_uppercase() + &lower[1..],
                };
                format!("atomic{name}{suffix}")
            }
            Some(Op::Fence { .. }) => format!("__threadfence{suffix}()"),
            Some(Op::Ld { strong, .. }) => format!("{} load", strength_word(*strong, scope)),
            Some(Op::St { strong, .. }) => format!("{} store", strength_word(*strong, scope)),
            _ => "an instruction".to_string(),
        }
    }

    fn op_at(&self, pc: u32) -> Option<&Op> {
        self.m.code.get(pc as usize).map(|i| &i.op)
    }

    /// `volatile` or `relaxed` for the strong access at `pc`.
    fn strength_name(&self, pc: u32) -> &'static str {
        match self.op_at(pc).and_then(Op::scope) {
            Some(Scope::Sys) => "volatile",
            _ => "relaxed",
        }
    }

    /// Records that finding `new` (when it is new) was seen at the current step by `lane`, after
    /// the access `earlier` (a race's first access) when there is one.
    pub(crate) fn link_finding(
        &mut self,
        new: Option<usize>,
        earlier: Option<Option<EventLane>>,
        lane: usize,
    ) {
        let (Some(index), Some(t)) = (new, self.trace.as_deref_mut()) else {
            return;
        };
        let now = t.current().map(|event| EventLane {
            event,
            lane: lane as u8,
        });
        let events = match earlier {
            Some(first) => vec![first, now],
            None => vec![now],
        };
        t.finding(index, events);
    }

    /// The step in which a race's earlier access (`prev`, to the word at byte `off` of `tgt`'s
    /// memory) happened.
    pub(crate) fn earlier_access(
        &self,
        w: &Warp,
        tgt: Tgt,
        off: usize,
        prev: race::Acc,
    ) -> Option<EventLane> {
        let t = self.trace.as_deref()?;
        let (array, offset) = match tgt {
            Tgt::G(i, _) => (t.global_array(i)?, off as u64),
            Tgt::S(_) => t.shared_array(w.block as u32, off as u64)?,
            _ => return None,
        };
        let tpb = self.tpb as u64;
        let local = (prev.tid % tpb) as u32;
        let warp = ((prev.tid / tpb) * self.wpb as u64) as u32 + local / 32;
        let lane = (local % 32) as u8;
        t.find_access(warp, lane, prev.pc, array, offset / 4)
            .map(|event| EventLane { event, lane })
    }

    /// Records one lane's access in the current step of a traced launch; `values` is the value
    /// read or written, and for an atomic the value after it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn trace_access(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        ty: Ty,
        values: (u64, Option<u64>),
        op: TraceOp,
        strong: bool,
        atomic: Option<&'static str>,
    ) {
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let (space, found) = match tgt {
            Tgt::G(i, off) => (
                report::Space::Global,
                t.global_array(i).map(|a| (a, off as u64)),
            ),
            Tgt::S(off) => (
                report::Space::Shared,
                t.shared_array(w.block as u32, off as u64),
            ),
            Tgt::L(_) | Tgt::Bad => return,
        };
        let Some((array, offset)) = found else {
            return;
        };
        let access = LaneAccess {
            lane: lane as u8,
            array,
            offset,
            size: ty.bytes() as u8,
            value: values.0,
            new: values.1,
        };
        t.access(op, strong, atomic, space, ty.name(), access);
    }

    /// initcheck for a read of `size` bytes at `tgt`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn init_read(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        size: u32,
        pc: u32,
        op: AccessOp,
    ) {
        if !self.opts.initcheck {
            return;
        }
        let written = match tgt {
            Tgt::S(off) => {
                let (bits, off) = self.slot_bits(w.slot, off, size);
                all_bits(bits, off, size as usize)
            }
            Tgt::G(i, off) => match self.allocs.written(i) {
                None => true,
                Some(bits) => {
                    let (bits, off) = bits.shared_bits_for(off, size as usize);
                    all_bits_shared(bits, off, size as usize)
                }
            },
            _ => true,
        };
        if !written {
            self.report_uninit(w, lane, tgt, size, pc, op);
        }
    }

    /// Marks `size` bytes at `tgt` written. Global memory is marked even with initcheck off, so
    /// that a later launch with it on knows what this one wrote.
    #[inline(always)]
    pub(crate) fn init_write(&mut self, w: &Warp, tgt: Tgt, size: u32) {
        match tgt {
            Tgt::S(off) if self.opts.initcheck => {
                let (bits, off) = self.slot_bits(w.slot, off, size);
                mark_bits(bits, off, size as usize);
            }
            Tgt::G(i, off) => {
                if let Some(bits) = self.allocs.written(i) {
                    let (bits, off) = bits.shared_bits_for(off, size as usize);
                    mark_bits_shared(bits, off, size as usize);
                }
            }
            _ => {}
        }
    }

    /// The written bits of `size` bytes at `off` in the shared memory of `slot`, and `off`
    /// within them.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    fn slot_bits(&self, slot: u32, off: usize, size: u32) -> (&mut [u64], usize) {
        // A shared target lies within the slot's bytes (`resolve`), so its bits do too.
        let slot_start = slot as usize * self.shared_words * 64;
        self.mem
            .shared_written
            .bits_for(slot_start + off, size as usize)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn report_uninit(
        &mut self,
        w: &Warp,
        lane: usize,
        tgt: Tgt,
        size: u32,
        pc: u32,
        op: AccessOp,
    ) {
        let (sp, addr) = match tgt {
            Tgt::G(i, off) => (report::Space::Global, self.allocs[i].base + off as u64),
            Tgt::S(off) => (report::Space::Shared, off as u64),
            _ => return,
        };
        let (loc, obj) = self.mem_location(sp, addr, addr, size);
        let kind = FindingKind::UninitializedRead { space: sp };
        let key = (kind, self.line_of(pc), 0, obj);
        let access = Access {
            op,
            thread: self.thread_ref(self.gid(w, lane)),
            at: self.src(pc),
        };
        let why = if sp == report::Space::Shared {
            "no thread of the block wrote these bytes before this read: shared memory starts as garbage"
        } else {
            "the memory was allocated uninitialized and nothing wrote these bytes before this read"
        };
        let new = self.findings.add(key, || Finding {
            kind,
            count: 1,
            location: Some(loc),
            accesses: vec![access],
            threads: vec![],
            why: why.into(),
        });
        self.link_finding(new, None, lane);
    }

    pub(crate) fn sync_region(&self, tgt: Tgt, w: &Warp) -> Option<(race::Region, u64)> {
        match tgt {
            Tgt::G(i, off) => Some((
                race::Region::Global {
                    index: i,
                    words: self.allocs[i].data.len().div_ceil(4),
                },
                (off / 4) as u64,
            )),
            Tgt::S(off) => Some((
                race::Region::Shared {
                    slot: w.slot,
                    block: w.block,
                },
                (off / 4) as u64,
            )),
            _ => None,
        }
    }
}

/// How a strong `ld`/`st` is written in PTX: `ld.acquire.cta`, `st.relaxed.gpu`, `volatile`.
fn strength_word(strong: Strength, scope: Scope) -> String {
    let scope_name = scope.ptx_name();
    match strong {
        Strength::Weak => "plain".to_string(),
        Strength::Relaxed if scope == Scope::Sys => "volatile".to_string(),
        Strength::Relaxed => format!("relaxed.{scope_name}"),
        Strength::Acquire => format!("acquire.{scope_name}"),
        Strength::Release => format!("release.{scope_name}"),
    }
}

/// What a race says when the second thread acquired the first one's release, but that release
/// came before the first access (see `race::Hit::released_early`).
const RELEASED_EARLY: &str = "the first thread's hand-off that this thread took came before the \
     first access, so it does not cover it: the access must come before the fence that precedes \
     the hand-off (for a lock: __threadfence() right before the atomicExch that frees it)";
