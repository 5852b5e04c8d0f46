//! A worker's context, and what its blocks leave whose order among blocks matters: taken out
//! where the blocks ran, and joined into the launch's in the order of one core.

use super::crew::Counts;
use crate::exec::collector::Collector;
use crate::exec::ctx::Ctx;
use crate::exec::plan::Outcome;
use crate::exec::warp::RoundTag;
use crate::race;
use crate::race::Racecheck;

impl<'a> Ctx<'a> {
    /// The time this thread has spent on the race detector so far (see `timing.rs`).
    pub(crate) fn detector_time(&self) -> std::time::Duration {
        match &self.race {
            Some(Racecheck::Piped(pipe)) => pipe.detector_time,
            _ => std::time::Duration::ZERO,
        }
    }

    /// A worker's context: the launch's module, options and memory, and findings, counters and
    /// race-detector calls of its own.
    pub(crate) fn fork(&self) -> Ctx<'a> {
        Ctx {
            m: self.m,
            allocs: self.allocs.share(),
            opts: self.opts,
            grid: self.grid,
            block: self.block,
            tpb: self.tpb,
            wpb: self.wpb,
            kparams: self.kparams.clone(),
            mem: self.mem.clone(),
            shared_init: self.shared_init.clone(),
            shared_words: self.shared_words,
            shared_size: self.shared_size,
            dyn_base: self.dyn_base,
            reserved_base: self.reserved_base,
            dyn_size: self.dyn_size,
            local_size: self.local_size,
            race: match &self.race {
                Some(Racecheck::Piped(pipe)) => {
                    Some(Racecheck::Logged(race::Log::new(pipe.shard_count())))
                }
                _ => None,
            },
            findings: Collector::default(),
            race_findings: Collector::default(),
            last_alloc: usize::MAX,
            device: self.device,
            peer: self.peer.clone(),
            op_check: self.op_check.as_ref().map(|check| Box::new(check.fork())),
            clock: 0,
            thread_instrs: 0,
            thread_steps: 0,
            progress: 0,
            aborted: false,
            refusal: None,
            printf: Vec::new(),
            printf_bytes: 0,
            printf_dropped: 0,
            conditions: Vec::new(),
            touched_global_sync: false,
            trace: None,
            banks: None,
            lane_stores: Vec::with_capacity(32),
            copies_in_flight: Vec::new(),
            round_tags: Vec::new(),
            joined_rounds: Vec::new(),
            cdp: crate::exec::child_work::DeviceRuntime::default(),
            compiled: self.compiled,
            region_rounds: 0,
            steps_end_at: u64::MAX,
        }
    }

    /// Gives a worker's race-detector log emptied logs to start its blocks' logs with.
    pub(super) fn lend_logs(&mut self, spares: &mut Vec<Vec<race::Call>>) {
        if let Some(Racecheck::Logged(log)) = self.race.as_mut() {
            log.streams.pool.append(spares);
        }
    }

    /// Hands back the emptied logs a round did not use.
    pub(super) fn unused_logs(&mut self, into: &mut Vec<Vec<race::Call>>) {
        self.unused_logs_beyond(0, into);
    }

    /// Hands back the emptied logs a round did not use beyond the first `keep`.
    pub(super) fn unused_logs_beyond(&mut self, keep: usize, into: &mut Vec<Vec<race::Call>>) {
        if let Some(Racecheck::Logged(log)) = self.race.as_mut()
            && log.streams.pool.len() > keep
        {
            into.extend(log.streams.pool.drain(keep..));
        }
    }

    /// Whether the blocks run since the last outcome made something whose order among blocks
    /// matters: findings, race-detector calls, a refusal. (A stop is a counter: the launch
    /// stops after the turn whichever block stopped it.)
    pub(super) fn made_ordered(&self) -> bool {
        let logged = match &self.race {
            Some(Racecheck::Logged(log)) => log.streams.calls > 0,
            _ => false,
        };
        logged || !self.findings.list.is_empty() || self.refusal.is_some()
    }

    /// Takes what the worker's blocks made since the last outcome whose order among blocks
    /// matters, leaving the counters, which its share sums at its end.
    pub(super) fn outcome(&mut self) -> Outcome {
        let log = match self.race.as_mut() {
            Some(Racecheck::Logged(log)) => Some(log.take()),
            _ => None,
        };
        // Positions count from the log's start, which the next outcome's log starts again.
        let findings = if self.findings.list.is_empty() {
            self.findings.position = 0;
            None
        } else {
            Some(Box::new(std::mem::take(&mut self.findings)))
        };
        Outcome {
            findings,
            log,
            refusal: self.refusal.take().map(Box::new),
            tags: RoundTag::marked(std::mem::take(&mut self.round_tags), RoundTag::TAKEN),
        }
    }

    /// Sets aside the launch's findings, refusal and piped race detector, so that a round run
    /// here leaves what order shows as a worker's round does, to wait in line behind what the
    /// workers' turns left (see [`Ctx::in_line`]).
    pub(crate) fn set_aside(&mut self) -> Aside {
        let piped = match &mut self.race {
            Some(Racecheck::Piped(pipe)) => {
                let shards = pipe.shard_count();
                let mut log = race::Log::new(shards);
                log.streams.pool = pipe.lend(shards);
                self.race.replace(Racecheck::Logged(log))
            }
            _ => None,
        };
        Aside {
            piped,
            findings: std::mem::take(&mut self.findings),
            refusal: self.refusal.take(),
        }
    }

    /// What the rounds run since [`Ctx::set_aside`] left for the line, if anything; the launch's
    /// own are back. Their counters stay in the launch's, which adds up in any order.
    pub(crate) fn in_line(&mut self, aside: Aside) -> Option<Outcome> {
        let mut log = None;
        if let Some(piped) = aside.piped
            && let Some(Racecheck::Logged(mut logged)) = self.race.replace(piped)
        {
            if logged.streams.calls > 0 {
                log = Some(logged.take());
            }
            if let Some(Racecheck::Piped(pipe)) = self.race.as_mut() {
                pipe.take_back(&mut logged.streams.pool);
            }
        }
        let findings = std::mem::replace(&mut self.findings, aside.findings);
        let refusal = std::mem::replace(&mut self.refusal, aside.refusal);
        let findings = (!findings.list.is_empty()).then(|| Box::new(findings));
        let made = log.is_some() || findings.is_some() || refusal.is_some();
        let tags = RoundTag::marked(std::mem::take(&mut self.round_tags), RoundTag::IN_LINE);
        made.then_some(Outcome {
            findings,
            log,
            refusal: refusal.map(Box::new),
            tags,
        })
    }

    /// See [`Racecheck::calls_made`].
    #[inline(always)]
    pub(crate) fn race_calls_made(&self) -> u64 {
        self.race.as_ref().map_or(0, Racecheck::calls_made)
    }

    /// A block's round made race-detector calls: they wait in this worker's log, or reached
    /// the launch's detector.
    #[cold]
    pub(crate) fn round_made_calls(&mut self, tag: RoundTag) {
        match self.race {
            Some(Racecheck::Logged(_)) => self.round_tags.push(tag),
            _ => self.calls_reach_detector(RoundTag {
                path: RoundTag::STRAIGHT,
                ..tag
            }),
        }
    }

    /// A block's round's calls reach the detector: after those of its earlier rounds, as one
    /// core makes them, or the detector judges the block by a history it never had (a read
    /// after a barrier taken for one before it). Never seen to fail; the check costs one
    /// comparison per round that made calls.
    fn calls_reach_detector(&mut self, tag: RoundTag) {
        if let Some(last) = tag.came_after(&mut self.joined_rounds) {
            race::calls_out_of_order(&format!(
                "block {} (slot {}) round {}'s race-detector calls ({}) came after its round {}'s ({})",
                tag.block,
                tag.slot,
                tag.round,
                RoundTag::path_words(tag.path),
                last.round,
                RoundTag::path_words(last.path)
            ));
        }
    }

    /// Adds blocks' counters to the launch's (the step budget, the watchdog and a stop read
    /// them before the next turn).
    pub(super) fn add_counts(&mut self, counts: Counts) {
        self.thread_instrs += counts.thread_instrs;
        self.thread_steps += counts.thread_steps;
        self.clock += counts.clock;
        self.progress += counts.progress;
        self.aborted |= counts.aborted;
        self.touched_global_sync |= counts.touched_global_sync;
    }

    /// Adds a block's round to the launch's, as if it had run here after everything before: a
    /// refusal, findings and race-detector calls.
    pub(super) fn join(&mut self, outcome: Outcome, via: u16) {
        if self.refusal.is_none() {
            self.refusal = outcome.refusal.map(|refusal| *refusal);
        }
        // The turn counted positions from its own start; before it, this many accesses went
        // to the detector.
        let sent_before = match self.race.as_mut() {
            Some(Racecheck::Piped(pipe)) => pipe.accesses,
            _ => 0,
        };
        for tag in outcome.tags {
            self.calls_reach_detector(RoundTag {
                path: tag.path | via,
                ..tag
            });
        }
        if let (Some(Racecheck::Piped(pipe)), Some(log)) = (self.race.as_mut(), outcome.log) {
            pipe.append(log);
        }
        if let Some(findings) = outcome.findings {
            self.findings.absorb(*findings, 2 * sent_before);
        }
        if let Some(Racecheck::Piped(pipe)) = self.race.as_mut() {
            self.findings.position = 2 * pipe.accesses;
            if !pipe.found.is_empty() {
                self.report_found();
            }
        }
    }
}

/// The launch's own findings, refusal and piped race detector while a round on its core waits
/// in line (see [`Ctx::set_aside`]).
pub(crate) struct Aside {
    pub(super) piped: Option<Racecheck>,
    pub(super) findings: Collector,
    pub(super) refusal: Option<crate::error::EmuError>,
}
