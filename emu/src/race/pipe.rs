//! Racecheck on cores of its own: the interpreter sends the detector's calls, in order and in
//! batches, to the detector's shards (a thread each, keeping the words of every few chunks), and
//! gets back the conflicts they found, numbered.
//!
//! Each shard sees exactly the calls, in exactly the order, that the detector would see inline,
//! but for accesses to words it does not keep (of those it applies only a strong access's marks),
//! and nothing it computes flows back into execution, so a piped launch finds what an inline one
//! finds. Only the order of findings needs care: an inline conflict becomes a finding at once,
//! between the interpreter's own findings; a piped one arrives later. So every finding carries
//! the position at which it was made (see `Collector` in `exec/checks.rs`), and the two lists are
//! merged by it when the launch ends.

use std::collections::VecDeque;

use super::access::{Acquire, Hit, Kind, Region, Sem, Who};
use super::calls::{AccessCall, Call, Log, Logged, Packed, Streams};
use super::detector::{Race, ShadowSize};
use crate::ir::Scope;
use crate::memory_model::MemoryModel;
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Calls per batch: large enough that a send costs nothing per call, small enough that a batch
/// stays in cache between the two cores. Tests use small batches, so that the corpus's small
/// launches send many and take conflicts back while they run.
#[cfg(not(test))]
const BATCH: usize = 4096;
#[cfg(test)]
const BATCH: usize = 61;
/// Calls per batch for a detector on the interpreter's thread: the batch is read right after it
/// is written, so it should stay in the nearest caches.
#[cfg(not(test))]
const LOCAL_BATCH: usize = 512;
#[cfg(test)]
const LOCAL_BATCH: usize = 61;
/// Batches in flight: the interpreter waits when the detector falls this far behind.
const IN_FLIGHT: usize = 4;
/// Emptied logs and batch parts kept for reuse.
const SPARES: usize = 2048;
/// Room of the largest part kept: a block's round makes a few dozen calls, the pipe's own part
/// up to a batch's 4,096, which are rare and not worth keeping. 2,048 spares of 512 calls hold
/// at most 56 MiB, as 256 of a batch's did.
const SPARE_CALLS: usize = 512;

/// One shard's stream of a batch: parts (the pipe's own calls, and blocks' logs), in order,
/// each with the number of its first access.
type Batch = Vec<(u64, Vec<Call>)>;

/// A conflict the detector thread found: which access it was (counting from 0 at the launch's
/// start), the access, and what it conflicts with.
pub(crate) struct Found {
    pub seq: u64,
    pub access: AccessCall,
    pub hit: Hit,
}

/// What a shard found in a batch, in access order, and its stream of the batch for reuse.
struct Returned {
    shard: usize,
    found: Vec<Found>,
    batch: Batch,
}

/// The detector, run where the interpreter runs or in shards on threads of their own.
// One per launch, and the inline detector is on every access's path: not worth a box.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Racecheck {
    Inline(Race),
    Piped(Pipe),
    /// A worker's calls in a round run on several cores, for the launch's pipe.
    Logged(Log),
    /// A piped detector once the launch ended: the bytes its shards' shadow held.
    Finished(u64),
}

impl Racecheck {
    /// A fresh detector: in `shards` shards on threads of their own, or on the interpreter's
    /// thread in batches when `shards` is 0 or the threads cannot be started; `None` for one
    /// that answers each access at once.
    pub(crate) fn start(
        shards: Option<usize>,
        tpb: u32,
        wpb: u32,
        block_x: u32,
        model: MemoryModel,
    ) -> Racecheck {
        #[cfg(test)]
        let shards = shards.filter(|_| !tests::EACH_ACCESS_AT_ONCE.get());
        let Some(shards) = shards else {
            return Racecheck::Inline(Race::new(tpb, wpb, block_x, model));
        };
        let threaded = (shards > 0).then(|| Pipe::start(shards, tpb, wpb, block_x, model));
        Racecheck::Piped(
            threaded
                .flatten()
                .unwrap_or_else(|| Pipe::local(tpb, wpb, block_x, model)),
        )
    }

    /// A count that grows with every call the interpreter makes (an inline detector's stay 0:
    /// they are applied where they are made).
    #[inline(always)]
    pub(crate) fn calls_made(&self) -> u64 {
        match self {
            Racecheck::Piped(pipe) => pipe.accesses + pipe.others,
            Racecheck::Logged(log) => log.streams.accesses + log.streams.calls as u64,
            Racecheck::Inline(_) | Racecheck::Finished(..) => 0,
        }
    }

    /// Applies a call: at once when inline, in order on the detector's thread when piped.
    /// Accesses, which answer, go to [`Race::access`] or [`Pipe::push_access`] instead (see
    /// `Ctx::race_check_shadow`).
    fn call(&mut self, call: Call) {
        match self {
            Racecheck::Inline(race) => race.apply(&call),
            Racecheck::Piped(pipe) => pipe.push(call),
            Racecheck::Logged(log) => log.streams.push(call),
            Racecheck::Finished(..) => {}
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
            Racecheck::Piped(_) | Racecheck::Logged(_) | Racecheck::Finished(..) => {
                let sem = Sem {
                    scope,
                    ..Sem::PLAIN
                };
                let bits = Packed::bits(0, 0, kind, sem, acquire, release);
                self.call(Call::Sync(Packed::new(region, word, who, pc, bits)));
            }
        }
    }

    /// The block in `slot` completed its barrier number `serial` (from 1 at its start).
    pub(crate) fn barrier(&mut self, slot: u32, warps: std::ops::Range<u32>, serial: u32) {
        self.call(Call::Barrier {
            slot,
            warps,
            serial,
        });
    }

    pub(crate) fn share_acquired(&mut self, threads: Vec<Who>) {
        self.call(Call::ShareAcquired(threads.into()));
    }

    pub(crate) fn warp_sync(&mut self, warp: u32, threads: Vec<Who>, whole_warp: bool) {
        self.call(Call::WarpSync {
            warp,
            threads: threads.into(),
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

impl Race {
    /// Applies one part of a batch, whose first access is number `first`, and adds what its
    /// accesses conflict with to `found`. A run's lanes are recorded together (see `runs.rs`).
    pub(crate) fn run_part(&mut self, first: u64, part: &[Call], found: &mut Vec<Found>) {
        for call in part {
            let &Call::Access(packed, number, lanes) = call else {
                self.apply(call);
                continue;
            };
            let seq = first + number as u64;
            self.access_lanes(&packed, lanes, |j, access, hit| {
                let seq = seq + j as u64;
                found.push(Found { seq, access, hit });
            });
        }
    }

    /// Records an access, or a run of `lanes`; calls `found(lane, access, hit)` for each
    /// conflict, in lane order.
    #[inline(always)]
    fn access_lanes(
        &mut self,
        packed: &Packed,
        lanes: u8,
        mut found: impl FnMut(usize, AccessCall, Hit),
    ) {
        if lanes == 1 {
            if let (access, Some(hit)) = self.access_packed(packed) {
                found(0, access, hit);
            }
        } else {
            let access = packed.access();
            self.access_run(&access, lanes as usize, |j, hit| {
                found(j, access.lane(j), hit)
            });
        }
    }

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
            &Call::Access(packed, _, lanes) => self.access_lanes(&packed, lanes, |_, _, _| {}),
            Call::Mark(packed) => {
                let a = packed.access();
                self.mark_flag(a.region, a.word, a.sem);
            }
            &Call::Fence { rt, scope, pc } => self.fence(rt, scope, pc),
            Call::Sync(packed) => {
                let release = packed.field(26, 1) != 0;
                let (who, region, scope) = (packed.who(), packed.region(), packed.scope());
                let (kind, acquire, pc) = (packed.kind(), packed.acquire(), packed.pc());
                self.sync_op(region, packed.0[0], &who, kind, acquire, release, scope, pc);
            }
            Call::Barrier {
                slot,
                warps,
                serial,
            } => {
                self.barrier_in_order(*slot, *serial);
                self.barrier(*slot, warps.clone());
            }
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

    /// A detector thread, shard `shard`: applies its stream of every batch in order, and reports
    /// the conflicts it found, each with the number of the access that found it. Every call but
    /// an access changes state that all shards keep alike (threads' clocks, barrier epochs,
    /// flags); an access's word is kept by one shard, and the others get its marks. Returns the
    /// shard when the interpreter hangs up, with what its shadow holds and the time it spent
    /// applying calls.
    fn serve(
        mut self,
        shard: usize,
        calls: Receiver<Batch>,
        back: Sender<Returned>,
    ) -> (Race, ShadowSize, Duration) {
        let mut busy = Duration::ZERO;
        while let Some(batch) = next_batch(&calls) {
            let started = Instant::now();
            let mut found = Vec::new();
            for (first, part) in &batch {
                self.run_part(*first, part, &mut found);
            }
            busy += started.elapsed();
            // The interpreter may have stopped listening (a refused launch); the detector
            // still finishes its batches so that it returns in a known state.
            let _ = back.send(Returned {
                shard,
                found,
                batch,
            });
        }
        let size = self.shadow_size();
        (self, size, busy)
    }
}

/// A shard's next batch, or `None` once the interpreter hung up. The shard spins a while before
/// it sleeps: while blocks log many calls, batches come close together, and each send to a
/// sleeping shard costs the interpreter's thread a system call to wake it.
fn next_batch(calls: &Receiver<Batch>) -> Option<Batch> {
    let polled = crate::spin::spin_for(|| match calls.try_recv() {
        Ok(batch) => Some(Some(batch)),
        Err(TryRecvError::Disconnected) => Some(None),
        Err(TryRecvError::Empty) => None,
    });
    polled.unwrap_or_else(|| calls.recv().ok())
}

/// A batch sent to the shards and not yet answered by all of them.
struct InFlight {
    answered: usize,
    found: Vec<Found>,
}

/// The interpreter's end of a piped detector: its shards, each on a thread of its own, each get
/// their stream of every batch.
pub(crate) struct Pipe {
    /// The pipe's own calls since the last part closed, and the number of the first access
    /// among them.
    own: Streams,
    own_first: u64,
    /// Per shard: the parts of the batch being filled, each with its first access's number.
    parts: Vec<Batch>,
    /// Calls in the batch being filled.
    queued: usize,
    /// Accesses sent so far (the next one's number).
    pub(crate) accesses: u64,
    /// Calls other than accesses sent so far.
    pub(crate) others: u64,
    to_shards: Vec<SyncSender<Batch>>,
    from_shards: Receiver<Returned>,
    in_flight: VecDeque<InFlight>,
    /// Per shard: the batches it answered among `in_flight`.
    answered: Vec<usize>,
    spare: Vec<Vec<Call>>,
    /// Conflicts received and not yet turned into findings, in access order.
    pub(crate) found: Vec<Found>,
    shards: Vec<JoinHandle<(Race, ShadowSize, Duration)>>,
    /// Time the interpreter's thread spent on the detector: applying batches when the detector
    /// runs there, and waiting for the shards at the end.
    pub(crate) detector_time: Duration,
    /// Per shard, once [`Pipe::finish`] returned: the time it spent applying calls.
    pub(crate) shard_busy: Vec<Duration>,
    /// The detector itself when it runs on the interpreter's thread: each batch is applied
    /// when it is full, so that a warp's accesses reach it together (see `runs.rs`).
    local: Option<Race>,
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
        let shards = shards.max(1);
        let mut pipe = Pipe::new(shards);
        let (back, from_shards) = channel();
        pipe.from_shards = from_shards;
        for shard in 0..shards {
            let (to_shard, calls) = sync_channel(IN_FLIGHT);
            let back = back.clone();
            let thread = std::thread::Builder::new()
                .name(format!("racecheck {}", shard + 1))
                .spawn(move || Race::new(tpb, wpb, block_x, model).serve(shard, calls, back));
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

    /// The detector on the interpreter's own thread, fed in batches small enough to stay in
    /// cache.
    pub(crate) fn local(tpb: u32, wpb: u32, block_x: u32, model: MemoryModel) -> Pipe {
        Pipe {
            local: Some(Race::new(tpb, wpb, block_x, model)),
            ..Pipe::new(1)
        }
    }

    fn new(shards: usize) -> Pipe {
        Pipe {
            own: Streams::new(shards, &mut Vec::new()),
            own_first: 0,
            parts: vec![Vec::new(); shards],
            queued: 0,
            accesses: 0,
            others: 0,
            to_shards: Vec::new(),
            from_shards: channel().1,
            in_flight: VecDeque::new(),
            answered: vec![0; shards],
            spare: Vec::new(),
            found: Vec::new(),
            shards: Vec::new(),
            detector_time: Duration::ZERO,
            shard_busy: Vec::new(),
            local: None,
        }
    }

    /// Threads the detector takes besides the interpreter's.
    pub(crate) fn threads(&self) -> usize {
        self.shards.len()
    }

    /// How many shards the detector runs in.
    pub(crate) fn shard_count(&self) -> usize {
        self.answered.len()
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, call: Call) {
        self.others += 1;
        self.own.push(call);
        self.queued(1);
    }

    /// Counts calls added to the batch, and sends it when it is full.
    #[inline(always)]
    fn queued(&mut self, calls: usize) {
        self.queued += calls;
        let batch = if self.local.is_some() {
            LOCAL_BATCH
        } else {
            BATCH
        };
        if self.queued >= batch {
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
        self.push_packed(Packed::of_access(
            region, word, mask, size, who, kind, sem, pc,
        ));
    }

    /// Sends a plain 4-byte access as one lane more of the last call's run, when it is that run's
    /// next lane (see [`Streams::lengthen_run`]): true when it did.
    #[inline(always)]
    pub(crate) fn lengthen_run(
        &mut self,
        word: u64,
        rt: u32,
        place: u64,
        warp_pc: u64,
        bits: u64,
    ) -> bool {
        if !self.own.lengthen_run(word, rt, place, warp_pc, bits) {
            return false;
        }
        self.accesses += 1;
        true
    }

    #[inline(always)]
    fn push_packed(&mut self, packed: Packed) {
        self.accesses += 1;
        let calls = self.own.calls;
        self.own.push_access(packed);
        self.queued(self.own.calls - calls);
    }

    /// Ends the pipe's own part, so that what comes next follows it.
    fn close_own(&mut self) {
        if self.own.calls == 0 {
            return;
        }
        let shards = self.answered.len();
        let fresh = Streams::new(shards, &mut self.spare);
        let own = std::mem::replace(&mut self.own, fresh);
        self.add_parts(self.own_first, own.parts);
        self.own_first = self.accesses;
    }

    /// Adds each shard's stream of `streams`, whose first access is number `first`, to the
    /// batch as it is.
    fn add_parts(&mut self, first: u64, streams: Vec<Vec<Call>>) {
        for (parts, part) in self.parts.iter_mut().zip(streams) {
            if part.is_empty() {
                keep_spare(&mut self.spare, part);
            } else {
                parts.push((first, part));
            }
        }
    }

    /// Sends a block's calls: its streams join the batch as they are, after what came before.
    pub(crate) fn append(&mut self, log: Logged) {
        self.close_own();
        self.add_parts(self.accesses, log.parts);
        self.accesses += log.accesses;
        self.own_first = self.accesses;
        self.queued(log.calls);
    }

    /// Emptied streams kept for reuse.
    pub(crate) fn spares(&self) -> usize {
        self.spare.len()
    }

    /// Emptied streams for workers to fill, up to `count`.
    pub(crate) fn lend(&mut self, count: usize) -> Vec<Vec<Call>> {
        let keep = self.spare.len().saturating_sub(count);
        self.spare.split_off(keep)
    }

    /// Takes back emptied streams that were lent and not used.
    pub(crate) fn take_back(&mut self, logs: &mut Vec<Vec<Call>>) {
        for log in logs.drain(..) {
            keep_spare(&mut self.spare, log);
        }
    }

    fn send(&mut self) {
        self.close_own();
        self.queued = 0;
        if let Some(race) = self.local.as_mut() {
            let started = Instant::now();
            for (first, part) in self.parts.iter_mut().flat_map(std::mem::take) {
                race.run_part(first, &part, &mut self.found);
                keep_spare(&mut self.spare, part);
            }
            self.detector_time += started.elapsed();
            return;
        }
        // A shard that fell `IN_FLIGHT` batches behind makes the send wait: detector time.
        let started = Instant::now();
        for (to, parts) in self.to_shards.iter().zip(self.parts.iter_mut()) {
            // A send fails only when a shard's thread died; `finish` reports that.
            let _ = to.send(std::mem::take(parts));
        }
        self.detector_time += started.elapsed();
        self.in_flight.push_back(InFlight {
            answered: 0,
            found: Vec::new(),
        });
        while let Ok(returned) = self.from_shards.try_recv() {
            self.take(returned);
        }
    }

    /// Takes a shard's answer to its oldest unanswered batch; once every shard answered the
    /// oldest batch in flight, its conflicts are ready, in access order.
    fn take(&mut self, returned: Returned) {
        let Returned {
            shard,
            mut found,
            batch,
        } = returned;
        for (_, part) in batch {
            keep_spare(&mut self.spare, part);
        }
        let Some(in_flight) = self.in_flight.get_mut(self.answered[shard]) else {
            return;
        };
        self.answered[shard] += 1;
        in_flight.answered += 1;
        in_flight.found.append(&mut found);
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
        }
    }

    /// Sends what is left, waits for the shards to apply everything, and returns them; the
    /// conflicts still to report are in `found`.
    pub(crate) fn finish(&mut self) -> (Vec<Race>, u64) {
        if self.queued > 0 || self.own.calls > 0 {
            self.send();
        }
        if let Some(race) = self.local.take() {
            let bytes = race.shadow_bytes();
            return (vec![race], bytes);
        }
        let started = Instant::now();
        self.to_shards.clear();
        while !self.in_flight.is_empty() {
            match self.from_shards.recv() {
                Ok(returned) => self.take(returned),
                Err(_) => break,
            }
        }
        let mut races = Vec::with_capacity(self.shards.len());
        let mut sizes = Vec::with_capacity(self.shards.len());
        self.shard_busy.clear();
        for shard in self.shards.drain(..) {
            let (race, size, busy) = match shard.join() {
                Ok(done) => done,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            races.push(race);
            sizes.push(size);
            self.shard_busy.push(busy);
        }
        self.detector_time += started.elapsed();
        (races, ShadowSize::bytes(&sizes))
    }
}

/// Keeps an emptied part for reuse, up to [`SPARES`].
fn keep_spare(spare: &mut Vec<Vec<Call>>, mut calls: Vec<Call>) {
    if spare.len() < SPARES && calls.capacity() > 0 && calls.capacity() <= SPARE_CALLS {
        calls.clear();
        spare.push(calls);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

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
            (Call::Access(packed, 0, 1), Some(call))
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
            Call::Access(packed, ..) => packed.shard(shards),
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
                match call {
                    Call::Access(packed, ..) => {
                        seqs.push(seq);
                        pipe.push_packed(packed);
                    }
                    other => pipe.push(other),
                }
                let _ = access;
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

    /// Two warps of two blocks write the same 32 words, each as one run: every lane of the
    /// second conflicts, and each conflict keeps its own lane's number and thread.
    #[test]
    fn a_runs_conflicts_keep_their_lanes_numbers_and_threads() {
        let region = Region::Global {
            index: 0,
            words: 64,
        };
        for shards in [0, 2] {
            let mut pipe = match shards {
                0 => Pipe::local(64, 2, 64, MemoryModel::Racecheck),
                n => Pipe::start(n, 64, 2, 64, MemoryModel::Racecheck).unwrap(),
            };
            for block in 0..2u32 {
                pipe.push(Call::BlockStarted {
                    slot: block,
                    block: block as u64,
                });
            }
            for block in 0..2u32 {
                for lane in 0..32u32 {
                    let who = Who {
                        tid: (block * 64 + lane) as u64,
                        slot: block,
                        rt: block * 64 + lane,
                        warp: block * 2,
                    };
                    let word = lane as usize;
                    pipe.push_access(region, word, 0xF, 4, &who, Kind::Write, Sem::PLAIN, 3);
                }
            }
            pipe.finish();
            let found: Vec<_> = pipe
                .found
                .iter()
                .map(|f| (f.seq, f.access.who.tid))
                .collect();
            let want: Vec<_> = (32..64).map(|seq| (seq, 64 + seq - 32)).collect();
            assert_eq!(found, want, "{shards} shards");
        }
    }

    thread_local! {
        /// Launches on this thread get a detector that answers each access at once.
        pub(crate) static EACH_ACCESS_AT_ONCE: std::cell::Cell<bool> =
            const { std::cell::Cell::new(false) };
    }
}
