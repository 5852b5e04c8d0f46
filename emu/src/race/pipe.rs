//! Racecheck on a core of its own: the interpreter sends the detector's calls, in order and in
//! batches, to a thread that owns the detector, and gets back the conflicts it found, numbered.
//!
//! The detector sees exactly the calls, in exactly the order, that it would see inline, and
//! nothing it computes flows back into execution, so a piped launch finds what an inline one
//! finds. Only the order of findings needs care: an inline conflict becomes a finding at once,
//! between the interpreter's own findings; a piped one arrives later. So every finding carries
//! the position at which it was made (see `Collector` in `exec/checks.rs`), and the two lists are
//! merged by it when the launch ends.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use super::*;

/// Calls per batch: large enough that a send costs nothing per call, small enough that a batch
/// stays in cache between the two cores. Tests use small batches, so that the corpus's small
/// launches send many and take conflicts back while they run.
#[cfg(not(test))]
const BATCH: usize = 4096;
#[cfg(test)]
const BATCH: usize = 61;
/// Batches in flight: the interpreter waits when the detector falls this far behind.
const IN_FLIGHT: usize = 4;
/// A worker's log of at least this many calls joins a batch as it is, not copied call by call.
/// Tests move short ones too, so that the corpus's small blocks take both ways.
#[cfg(not(test))]
const MOVED_LOG: usize = 64;
#[cfg(test)]
const MOVED_LOG: usize = 8;
/// Emptied logs and batch parts kept for reuse.
const SPARES: usize = 256;

/// Calls sent to the shards at once: the pipe's own, and workers' logs, in order.
type Batch = Vec<Vec<Call>>;

/// One access as [`Race::access`] takes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AccessCall {
    pub region: Region,
    pub word: usize,
    pub mask: u8,
    pub size: u32,
    pub who: Who,
    pub kind: Kind,
    pub sem: Sem,
    pub pc: u32,
}

/// An access, or a strong access's synchronization, packed into six whole words. A call built
/// from narrower fields was copied into the batch with wider loads than the stores that made
/// it, and that stalled the interpreter on every access.
///
/// Words: the word's index; the thread id; the region's size in words (global) or its block
/// (shared); allocation index or slot, and resident thread; resident warp and instruction; the
/// small fields (see [`Packed::bits`]) with the thread's slot above them.
#[derive(Clone, Copy)]
pub(crate) struct Packed([u64; 6]);

/// In the small fields: the region is shared memory.
const SHARED: u64 = 1 << 27;

impl Packed {
    #[inline(always)]
    fn new(region: Region, word: u64, who: &Who, pc: u32, bits: u64) -> Packed {
        let (extent, index, shared) = match region {
            Region::Shared { slot, block } => (block, slot as u64, SHARED),
            Region::Global { index, words } => (words as u64, index as u64, 0),
        };
        Packed([
            word,
            who.tid,
            extent,
            index | (who.rt as u64) << 32,
            who.warp as u64 | (pc as u64) << 32,
            bits | shared | (who.slot as u64) << 32,
        ])
    }

    /// An access, as [`Race::access`] takes it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn of_access(
        region: Region,
        word: usize,
        mask: u8,
        size: u32,
        who: &Who,
        kind: Kind,
        sem: Sem,
        pc: u32,
    ) -> Packed {
        let bits = Packed::bits(mask, size, kind, sem, Acquire::Never, false);
        Packed::new(region, word as u64, who, pc, bits)
    }

    /// Mask (bits 0–7), size (8–15), kind (16–18), the access's scope (19–20), atomic (21),
    /// sync (22), silent (23); for synchronization, acquire (24–25) and release (26).
    #[inline(always)]
    fn bits(mask: u8, size: u32, kind: Kind, sem: Sem, acquire: Acquire, release: bool) -> u64 {
        mask as u64
            | (size.min(255) as u64) << 8
            | (kind as u64) << 16
            | (sem.scope as u64) << 19
            | (sem.atomic as u64) << 21
            | (sem.sync as u64) << 22
            | (sem.silent as u64) << 23
            | (acquire as u64) << 24
            | (release as u64) << 26
    }

    fn region(&self) -> Region {
        let index = self.0[3] as u32;
        if self.0[5] & SHARED != 0 {
            Region::Shared {
                slot: index,
                block: self.0[2],
            }
        } else {
            Region::Global {
                index: index as usize,
                words: self.0[2] as usize,
            }
        }
    }

    fn who(&self) -> Who {
        Who {
            tid: self.0[1],
            slot: (self.0[5] >> 32) as u32,
            rt: (self.0[3] >> 32) as u32,
            warp: self.0[4] as u32,
        }
    }

    fn pc(&self) -> u32 {
        (self.0[4] >> 32) as u32
    }

    fn field(&self, shift: u32, width: u32) -> u8 {
        ((self.0[5] >> shift) & ((1 << width) - 1)) as u8
    }

    fn kind(&self) -> Kind {
        const KINDS: [Kind; 5] = [
            Kind::Read,
            Kind::Write,
            Kind::StrongRead,
            Kind::StrongWrite,
            Kind::Rmw,
        ];
        KINDS[self.field(16, 3) as usize % 5]
    }

    fn scope(&self) -> Scope {
        [Scope::Cta, Scope::Gpu, Scope::Sys][self.field(19, 2) as usize % 3]
    }

    fn acquire(&self) -> Acquire {
        [Acquire::Now, Acquire::AtNextFence, Acquire::Never][self.field(24, 2) as usize % 3]
    }

    fn access(&self) -> AccessCall {
        AccessCall {
            region: self.region(),
            word: self.0[0] as usize,
            mask: self.field(0, 8),
            size: self.field(8, 8) as u32,
            who: self.who(),
            kind: self.kind(),
            sem: Sem {
                scope: self.scope(),
                atomic: self.field(21, 1) != 0,
                sync: self.field(22, 1) != 0,
                silent: self.field(23, 1) != 0,
            },
            pc: self.pc(),
        }
    }
}

/// One call of the detector's API, as the interpreter made it.
pub(crate) enum Call {
    Access(Packed),
    Fence {
        rt: u32,
        scope: Scope,
        pc: u32,
    },
    /// A strong access's synchronization; its scope is the packed access's.
    Sync(Packed),
    Barrier {
        slot: u32,
        warps: std::ops::Range<u32>,
    },
    ShareAcquired(Vec<Who>),
    WarpSync {
        warp: u32,
        threads: Vec<Who>,
        whole_warp: bool,
    },
    BlockStarted {
        slot: u32,
        block: u64,
    },
    BlockFinished {
        slot: u32,
    },
}

/// A conflict the detector thread found: which access it was (counting from 0 at the launch's
/// start), the access, and what it conflicts with.
pub(crate) struct Found {
    pub seq: u64,
    pub access: AccessCall,
    pub hit: Hit,
}

/// What a shard found in a batch, in access order.
struct Returned {
    shard: usize,
    found: Vec<Found>,
}

/// The detector, run where the interpreter runs or on a thread of its own.
// One per launch, and the inline detector is on every access's path: not worth a box.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Racecheck {
    Inline(Race),
    Piped(Pipe),
    /// A worker's calls in a round run on several cores, for the launch's pipe.
    Logged(Log),
    /// A piped detector's shards once the launch ended, for the size of their shadow.
    Finished(Vec<Race>),
}

/// The calls a worker made in one round, in its blocks' order: the launch appends every
/// worker's, in the order of their blocks, to its pipe (see `exec/parallel.rs`), which is the
/// order one core makes them in.
#[derive(Default)]
pub(crate) struct Log {
    pub(crate) calls: Vec<Call>,
    /// Accesses among `calls`.
    pub(crate) accesses: u64,
    /// Emptied logs the pipe lent, so that a new one starts with room.
    pub(crate) spares: Vec<Vec<Call>>,
}

impl Log {
    /// The calls logged so far, leaving an empty log (a spare one when there is one).
    pub(crate) fn take(&mut self) -> Log {
        let calls = std::mem::replace(&mut self.calls, self.spares.pop().unwrap_or_default());
        Log {
            calls,
            accesses: std::mem::take(&mut self.accesses),
            spares: Vec::new(),
        }
    }
}

impl Racecheck {
    /// A fresh detector: in `shards` shards on threads of their own, or inline when `shards` is 0
    /// or the threads cannot be started.
    pub(crate) fn start(
        shards: usize,
        tpb: u32,
        wpb: u32,
        block_x: u32,
        model: MemoryModel,
    ) -> Racecheck {
        match (shards > 0).then(|| Pipe::start(shards, tpb, wpb, block_x, model)) {
            Some(Some(pipe)) => Racecheck::Piped(pipe),
            _ => Racecheck::Inline(Race::new(tpb, wpb, block_x, model)),
        }
    }

    /// Applies a call: at once when inline, in order on the detector's thread when piped.
    /// Accesses, which answer, go to [`Race::access`] or [`Pipe::push_access`] instead (see
    /// `Ctx::race_check_shadow`).
    fn call(&mut self, call: Call) {
        match self {
            Racecheck::Inline(race) => race.apply(&call),
            Racecheck::Piped(pipe) => pipe.push(call),
            Racecheck::Logged(log) => log.calls.push(call),
            Racecheck::Finished(_) => {}
        }
    }

    pub(crate) fn fence(&mut self, rt: u32, scope: Scope, pc: u32) {
        self.call(Call::Fence { rt, scope, pc });
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sync_op(
        &mut self,
        region: Region,
        word: u64,
        who: &Who,
        kind: Kind,
        acquire: Acquire,
        release: bool,
        scope: Scope,
        pc: u32,
    ) {
        match self {
            Racecheck::Inline(race) => {
                race.sync_op(region, word, who, kind, acquire, release, scope, pc)
            }
            Racecheck::Piped(_) | Racecheck::Logged(_) | Racecheck::Finished(_) => {
                let sem = Sem {
                    scope,
                    ..Sem::PLAIN
                };
                let bits = Packed::bits(0, 0, kind, sem, acquire, release);
                self.call(Call::Sync(Packed::new(region, word, who, pc, bits)));
            }
        }
    }

    pub(crate) fn barrier(&mut self, slot: u32, warps: std::ops::Range<u32>) {
        self.call(Call::Barrier { slot, warps });
    }

    pub(crate) fn share_acquired(&mut self, threads: Vec<Who>) {
        self.call(Call::ShareAcquired(threads));
    }

    pub(crate) fn warp_sync(&mut self, warp: u32, threads: Vec<Who>, whole_warp: bool) {
        self.call(Call::WarpSync {
            warp,
            threads,
            whole_warp,
        });
    }

    pub(crate) fn block_started(&mut self, slot: u32, block: u64) {
        self.call(Call::BlockStarted { slot, block });
    }

    pub(crate) fn block_finished(&mut self, slot: u32) {
        self.call(Call::BlockFinished { slot });
    }
}

impl Packed {
    /// The shard that keeps this access's word: chunks of 32 words spread by a hash, so that a
    /// warp's coalesced access goes to one shard and neighbouring ones to any. Every shard asks
    /// this of every access, so it is a multiplication, not a division.
    #[inline(always)]
    fn shard(&self, shards: usize) -> usize {
        let chunk = self.0[0] / CHUNK_WORDS as u64;
        let region = (self.0[3] as u32 as u64) | (self.0[5] & SHARED) << 8;
        let hash = (chunk ^ region << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((hash as u128 * shards as u128) >> 64) as usize
    }

    /// A strong or synchronizing access, which changes its thread's state and its word's as
    /// well as the shadow: every shard must see it.
    #[inline(always)]
    fn marks(&self) -> bool {
        // Kinds 2-4 are strong (see `kind`); bit 22 is `sync`.
        self.field(16, 3) >= 2 || self.field(22, 1) != 0
    }
}

impl Race {
    /// Runs one packed access: the access, and what it conflicts with.
    fn access_packed(&mut self, packed: &Packed) -> (AccessCall, Option<Hit>) {
        let a = packed.access();
        let hit = self.access(
            a.region, a.word, a.mask, a.size, &a.who, a.kind, a.sem, a.pc,
        );
        (a, hit)
    }

    /// Runs one call; what an access finds is for [`Race::serve`] to keep.
    fn apply(&mut self, call: &Call) {
        match call {
            Call::Access(packed) => {
                self.access_packed(packed);
            }
            &Call::Fence { rt, scope, pc } => self.fence(rt, scope, pc),
            Call::Sync(packed) => {
                let release = packed.field(26, 1) != 0;
                let (who, region, scope) = (packed.who(), packed.region(), packed.scope());
                let (kind, acquire, pc) = (packed.kind(), packed.acquire(), packed.pc());
                self.sync_op(region, packed.0[0], &who, kind, acquire, release, scope, pc);
            }
            Call::Barrier { slot, warps } => self.barrier(*slot, warps.clone()),
            Call::ShareAcquired(threads) => self.share_acquired(threads),
            Call::WarpSync {
                warp,
                threads,
                whole_warp,
            } => self.warp_sync(*warp, threads, *whole_warp),
            &Call::BlockStarted { slot, block } => self.block_started(slot, block),
            &Call::BlockFinished { slot } => self.block_finished(slot),
        }
    }

    /// A detector thread, shard `shard` of `shards`: applies every batch in order, numbering
    /// accesses, and reports the conflicts it found. Every call but an access changes state that
    /// all shards keep alike (threads' clocks, barrier epochs, flags); an access's word is kept
    /// by one shard, which alone checks it. Returns the shard when the interpreter hangs up.
    fn serve(
        mut self,
        shard: usize,
        shards: usize,
        calls: Receiver<Arc<Batch>>,
        back: Sender<Returned>,
    ) -> Race {
        let mut seq = 0u64;
        for batch in calls {
            let mut found = Vec::new();
            for call in batch.iter().flatten() {
                match call {
                    Call::Access(packed) => {
                        if shards == 1 || packed.shard(shards) == shard {
                            if let (access, Some(hit)) = self.access_packed(packed) {
                                found.push(Found { seq, access, hit });
                            }
                        } else if packed.marks() {
                            let a = packed.access();
                            self.mark_flag(a.region, a.word, &a.who, a.kind, a.sem);
                        }
                        seq += 1;
                    }
                    other => self.apply(other),
                }
            }
            // Let go of the batch before answering, so that the interpreter can reuse it.
            drop(batch);
            // The interpreter may have stopped listening (a refused launch); the detector
            // still finishes its batches so that it returns in a known state.
            let _ = back.send(Returned { shard, found });
        }
        self
    }
}

/// A batch sent to the shards and not yet answered by all of them.
struct InFlight {
    batch: Arc<Batch>,
    answered: usize,
    found: Vec<Found>,
}

/// The interpreter's end of a piped detector: its shards, each on a thread of its own, get every
/// batch.
pub(crate) struct Pipe {
    /// The batch being filled: its parts so far, the part calls are pushed to, and its calls.
    parts: Batch,
    batch: Vec<Call>,
    queued: usize,
    /// Accesses sent so far (the next one's number).
    pub(crate) accesses: u64,
    to_shards: Vec<SyncSender<Arc<Batch>>>,
    from_shards: Receiver<Returned>,
    in_flight: VecDeque<InFlight>,
    /// Per shard: the batches it answered among `in_flight`.
    answered: Vec<usize>,
    spare: Vec<Vec<Call>>,
    /// Conflicts received and not yet turned into findings, in access order.
    pub(crate) found: Vec<Found>,
    shards: Vec<JoinHandle<Race>>,
}

impl Pipe {
    /// Starts a fresh detector (as [`Race::new`] makes it) in `shards` shards, each on a thread
    /// of its own; `None` when a thread cannot be started.
    pub(crate) fn start(
        shards: usize,
        tpb: u32,
        wpb: u32,
        block_x: u32,
        model: MemoryModel,
    ) -> Option<Pipe> {
        let (back, from_shards) = channel();
        let mut pipe = Pipe {
            parts: Vec::new(),
            batch: Vec::with_capacity(256),
            queued: 0,
            accesses: 0,
            to_shards: Vec::new(),
            from_shards,
            in_flight: VecDeque::new(),
            answered: vec![0; shards],
            spare: Vec::new(),
            found: Vec::new(),
            shards: Vec::new(),
        };
        for shard in 0..shards {
            let (to_shard, calls) = sync_channel(IN_FLIGHT);
            let back = back.clone();
            let thread = std::thread::Builder::new()
                .name(format!("racecheck {}", shard + 1))
                .spawn(move || {
                    Race::new(tpb, wpb, block_x, model).serve(shard, shards, calls, back)
                });
            match thread {
                Ok(thread) => {
                    pipe.to_shards.push(to_shard);
                    pipe.shards.push(thread);
                }
                Err(_) => {
                    // The shards started so far end when the pipe drops their senders.
                    pipe.to_shards.clear();
                    return None;
                }
            }
        }
        Some(pipe)
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, call: Call) {
        crate::push_in_place(&mut self.batch, call);
        self.queued += 1;
        if self.queued >= BATCH {
            self.send();
        }
    }

    /// Sends one access (an inline detector answers at once: see `Ctx::race_check_shadow`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn push_access(
        &mut self,
        region: Region,
        word: usize,
        mask: u8,
        size: u32,
        who: &Who,
        kind: Kind,
        sem: Sem,
        pc: u32,
    ) {
        self.accesses += 1;
        self.push(Call::Access(Packed::of_access(
            region, word, mask, size, who, kind, sem, pc,
        )));
    }

    /// Sends a worker's calls: a long log joins the batch as it is, a short one call by call.
    pub(crate) fn append(&mut self, log: Log) {
        self.accesses += log.accesses;
        if log.calls.len() < MOVED_LOG {
            let mut calls = log.calls;
            for call in calls.drain(..) {
                self.push(call);
            }
            self.keep_spare(calls);
            return;
        }
        if !self.batch.is_empty() {
            let part = std::mem::replace(&mut self.batch, self.spare.pop().unwrap_or_default());
            self.parts.push(part);
        }
        self.queued += log.calls.len();
        self.parts.push(log.calls);
        if self.queued >= BATCH {
            self.send();
        }
    }

    /// Emptied logs for workers to fill, up to `count`.
    pub(crate) fn lend(&mut self, count: usize) -> Vec<Vec<Call>> {
        let keep = self.spare.len().saturating_sub(count);
        self.spare.split_off(keep)
    }

    /// Takes back emptied logs that were lent and not used.
    pub(crate) fn take_back(&mut self, logs: &mut Vec<Vec<Call>>) {
        for log in logs.drain(..) {
            self.keep_spare(log);
        }
    }

    fn keep_spare(&mut self, mut calls: Vec<Call>) {
        if self.spare.len() < SPARES && calls.capacity() > 0 {
            calls.clear();
            self.spare.push(calls);
        }
    }

    fn send(&mut self) {
        let next = self
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(BATCH));
        let last = std::mem::replace(&mut self.batch, next);
        let mut parts = std::mem::take(&mut self.parts);
        if !last.is_empty() {
            parts.push(last);
        } else {
            self.keep_spare(last);
        }
        self.queued = 0;
        let full = Arc::new(parts);
        for to in &self.to_shards {
            // A send fails only when a shard's thread died; `finish` reports that.
            let _ = to.send(Arc::clone(&full));
        }
        self.in_flight.push_back(InFlight {
            batch: full,
            answered: 0,
            found: Vec::new(),
        });
        while let Ok(returned) = self.from_shards.try_recv() {
            self.take(returned);
        }
    }

    /// Takes a shard's answer to its oldest unanswered batch; once every shard answered the
    /// oldest batch in flight, its conflicts are ready, in access order, and it can be reused.
    fn take(&mut self, returned: Returned) {
        let Returned { shard, mut found } = returned;
        let Some(batch) = self.in_flight.get_mut(self.answered[shard]) else {
            return;
        };
        self.answered[shard] += 1;
        batch.answered += 1;
        batch.found.append(&mut found);
        while self
            .in_flight
            .front()
            .is_some_and(|b| b.answered == self.answered.len())
        {
            let Some(mut done) = self.in_flight.pop_front() else {
                break;
            };
            self.answered.iter_mut().for_each(|a| *a -= 1);
            // Each shard's conflicts are in order; together they are sorted by access.
            done.found.sort_by_key(|f| f.seq);
            self.found.append(&mut done.found);
            if let Ok(parts) = Arc::try_unwrap(done.batch) {
                for part in parts {
                    self.keep_spare(part);
                }
            }
        }
    }

    /// Sends what is left, waits for the shards to apply everything, and returns them; the
    /// conflicts still to report are in `found`.
    pub(crate) fn finish(&mut self) -> Vec<Race> {
        if self.queued > 0 {
            self.send();
        }
        self.to_shards.clear();
        while !self.in_flight.is_empty() {
            match self.from_shards.recv() {
                Ok(returned) => self.take(returned),
                Err(_) => break,
            }
        }
        self.shards
            .drain(..)
            .map(|shard| match shard.join() {
                Ok(race) => race,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Module;

    /// Calls of two blocks in which thread 0's fence is followed by a strong read of word 0 and
    /// a strong write to word `other`, and thread 32 writes `other` too: the read ends the
    /// fence's mark, so the write is no flag's release and the two strong writes to data race.
    /// A shard that did not see the read would take the write for a release and miss the race.
    fn fenced_read_then_write(other: usize) -> Vec<(Call, Option<AccessCall>)> {
        let region = Region::Global {
            index: 0,
            words: 1024,
        };
        let who = |block: u64| Who {
            tid: block * 32,
            slot: block as u32,
            rt: block as u32 * 32,
            warp: block as u32,
        };
        let sem = Sem {
            scope: Scope::Gpu,
            ..Sem::PLAIN
        };
        let access = |word: usize, block: u64, kind: Kind| {
            let who = who(block);
            let call = AccessCall {
                region,
                word,
                mask: 0xF,
                size: 4,
                who,
                kind,
                sem,
                pc: 7 + word as u32,
            };
            let packed = Packed::of_access(region, word, 0xF, 4, &who, kind, sem, call.pc);
            (Call::Access(packed), Some(call))
        };
        vec![
            (Call::BlockStarted { slot: 0, block: 0 }, None),
            (Call::BlockStarted { slot: 1, block: 1 }, None),
            (
                Call::Fence {
                    rt: 0,
                    scope: Scope::Gpu,
                    pc: 1,
                },
                None,
            ),
            access(0, 0, Kind::StrongRead),
            access(other, 0, Kind::StrongWrite),
            access(other, 1, Kind::StrongWrite),
        ]
    }

    /// The shard of `shards` that keeps `word` of the test's allocation.
    fn shard_of(word: usize, shards: usize) -> usize {
        match &fenced_read_then_write(word)[4].0 {
            Call::Access(packed) => packed.shard(shards),
            _ => unreachable!("the fifth call is the write"),
        }
    }

    #[test]
    fn shards_see_every_strong_access_that_ends_a_fences_mark() {
        for shards in [2, 3] {
            // A word kept by another shard than word 0's.
            let other = (1..64)
                .map(|chunk| chunk * 32)
                .find(|&w| shard_of(w, shards) != shard_of(0, shards))
                .unwrap();
            same_hits_on_shards(other, shards);
        }
    }

    fn same_hits_on_shards(other: usize, shards: usize) {
        let mut inline = Race::new(32, 1, 32, MemoryModel::Racecheck);
        let mut inline_hits = Vec::new();
        for (seq, (call, access)) in fenced_read_then_write(other).into_iter().enumerate() {
            match access {
                Some(a) => {
                    let hit = inline.access(
                        a.region, a.word, a.mask, a.size, &a.who, a.kind, a.sem, a.pc,
                    );
                    inline_hits.extend(hit.map(|h| (seq, h.hazard, h.cause)));
                }
                None => inline.apply(&call),
            }
        }
        assert_eq!(inline_hits.len(), 1, "{inline_hits:?}");
        for shards in [1, shards] {
            let mut pipe = Pipe::start(shards, 32, 1, 32, MemoryModel::Racecheck).unwrap();
            let mut seqs = Vec::new();
            for (seq, (call, access)) in fenced_read_then_write(other).into_iter().enumerate() {
                if access.is_some() {
                    seqs.push(seq);
                    pipe.accesses += 1;
                }
                pipe.push(call);
            }
            pipe.finish();
            let piped: Vec<_> = pipe
                .found
                .iter()
                .map(|f| (seqs[f.seq as usize], f.hit.hazard, f.hit.cause))
                .collect();
            assert_eq!(piped, inline_hits, "{shards} shards");
        }
    }

    /// The detector on a thread of its own finds what it finds inline, in the same order, with
    /// the same counts, on every committed kernel and schedule.
    #[test]
    fn every_committed_kernel_runs_alike_piped_and_inline() {
        let launches = crate::committed::runs_alike(
            "a piped race detector",
            2,
            |ptx| Some((Module::parse(ptx).ok()?, Module::parse(ptx).ok()?)),
            |options| {
                let inline = crate::exec::RunOptions {
                    threads: 1,
                    ..options
                };
                let piped = crate::exec::RunOptions {
                    threads: 2,
                    ..options
                };
                (inline, piped)
            },
        );
        assert!(launches > 300, "{launches} launches");
    }
}
