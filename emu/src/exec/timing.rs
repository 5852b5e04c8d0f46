//! Where a launch's time goes: on the launch's own thread part by part, and on every thread it
//! used, how long each was busy (`racetrack check --timings`, `examples/throughput`).
//!
//! The clock is read where a part starts and ends: a few times per round on one core, per turn
//! on several, per batch of the race detector's calls. That is cheap enough to stay on, and
//! nothing measured flows back into what the launch computes. This room knows nothing of the
//! launch: `launch.rs` and `parallel/` read the clock and keep the sums here.

use std::time::{Duration, Instant};

/// Where one launch's time went.
///
/// On the launch's thread the parts add up to `total`: `interpreter`, `race_detector`, `joins`
/// and `waiting`, and `other` for the rest (checking the launch, starting and finishing blocks,
/// the report). The other threads run blocks (`launch worker N`) or the race detector's shards
/// (`racecheck N`); each one's `busy` is the time it spent on that work, not waiting for it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchTimings {
    /// The whole launch, from its checks to its report.
    pub total: Duration,
    /// Running blocks on the launch's thread: its share of each turn on several cores, and the
    /// rounds that ran on one core.
    pub interpreter: Duration,
    /// The race detector on the launch's thread: applying its calls there (on one to three
    /// cores), and waiting for its shards to apply the last of them.
    pub race_detector: Duration,
    /// Planning each turn on several cores, and adding up what its blocks did, in the order one
    /// core would have made it (findings, the detector's calls).
    pub joins: Duration,
    /// Waiting for the other cores to finish a turn.
    pub waiting: Duration,
    /// Turns run on several cores, and rounds run on one core.
    pub turns: u64,
    pub serial_rounds: u64,
    /// Times a worker's share found no block it could run and waited for others' blocks to
    /// move (see `run_share` in `parallel/`).
    pub waits: u64,
    /// Segments of blocks that a share ran for another, whose core was slower.
    pub taken_over: u64,
    /// The launch's time from the end of a turn to the start of the next, when its workers had
    /// nothing to run (part of `joins` and `other`).
    pub between_turns: Duration,
    /// Every thread of the launch, its own first.
    pub threads: Vec<ThreadBusy>,
}

/// What every launch of one kernel added up to (see [`Emulator::kernel_tallies`]).
///
/// [`Emulator::kernel_tallies`]: crate::Emulator::kernel_tallies
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelTally {
    pub launches: u64,
    pub thread_instructions: u64,
    /// The launches' own time, from their checks to their reports.
    pub time: Duration,
    /// Every thread's busy time in those launches (see [`ThreadBusy`]).
    pub busy: Duration,
}

/// Tallies add up field by field (a program's "all kernels" row).
impl std::ops::AddAssign<&KernelTally> for KernelTally {
    fn add_assign(&mut self, other: &KernelTally) {
        self.launches += other.launches;
        self.thread_instructions += other.thread_instructions;
        self.time += other.time;
        self.busy += other.busy;
    }
}

impl KernelTally {
    pub(crate) fn add(&mut self, timings: &LaunchTimings, thread_instructions: u64) {
        self.launches += 1;
        self.thread_instructions += thread_instructions;
        self.time += timings.total;
        self.busy += timings.threads.iter().map(|t| t.busy).sum::<Duration>();
    }
}

/// One thread of a launch and how long it worked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadBusy {
    /// `launch`, `launch worker N` or `racecheck N`.
    pub name: String,
    pub busy: Duration,
    /// A worker's time waiting for other shares' blocks to move, and between the launch
    /// handing out a turn and the worker starting it (zero for other threads).
    pub held_up: Duration,
    pub starting: Duration,
}

/// A worker's clocks over a launch (see [`ThreadBusy`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WorkerClocks {
    pub(crate) busy: Duration,
    pub(crate) held_up: Duration,
    pub(crate) starting: Duration,
}

impl LaunchTimings {
    /// The race detector's part of the work that ran blocks or applied its calls: its shards'
    /// busy time and its time on the launch's thread, against the blocks' time on every core.
    /// `None` when the detector did nothing.
    pub fn detector_share(&self) -> Option<f64> {
        let busy = |prefix: &str| -> Duration {
            self.threads
                .iter()
                .filter(|t| t.name.starts_with(prefix))
                .map(|t| t.busy)
                .sum()
        };
        let detector = busy("racecheck") + self.race_detector;
        let blocks = busy("launch worker") + self.interpreter;
        let all = (detector + blocks).as_secs_f64();
        (!detector.is_zero() && all > 0.0).then(|| detector.as_secs_f64() / all)
    }

    /// The launch thread's time outside the named parts.
    pub fn other(&self) -> Duration {
        self.total
            .saturating_sub(self.interpreter)
            .saturating_sub(self.race_detector)
            .saturating_sub(self.joins)
            .saturating_sub(self.waiting)
    }

    /// Busy time of every thread together, in the time the launch took: how many cores' worth
    /// of work it did (1.0 on one core that never waited).
    pub fn cores_busy(&self) -> f64 {
        let busy: Duration = self.threads.iter().map(|t| t.busy).sum();
        busy.as_secs_f64() / self.total.as_secs_f64().max(1e-9)
    }
}

impl std::fmt::Display for LaunchTimings {
    /// The breakdown, one part a line, then the threads' busy times.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let share = |d: Duration| 100.0 * d.as_secs_f64() / self.total.as_secs_f64().max(1e-9);
        let parts = [
            ("interpreter", self.interpreter),
            ("race detector", self.race_detector),
            ("joins", self.joins),
            ("waiting", self.waiting),
            ("other", self.other()),
        ];
        for (name, took) in parts {
            writeln!(f, "{name:<15}{:>9.1} ms {:>5.1} %", ms(took), share(took))?;
        }
        writeln!(
            f,
            "{} turns on several cores, {} rounds on one",
            self.turns, self.serial_rounds
        )?;
        let busy: Vec<String> = self
            .threads
            .iter()
            .map(|t| format!("{:.1}", ms(t.busy)))
            .collect();
        write!(
            f,
            "busy per thread, ms (launch, workers, racecheck shards): {}; {:.2} cores' worth",
            busy.join(" "),
            self.cores_busy()
        )?;
        let workers: Vec<&ThreadBusy> = self
            .threads
            .iter()
            .filter(|t| t.name.starts_with("launch worker"))
            .collect();
        if !workers.is_empty() {
            let each = |of: fn(&ThreadBusy) -> Duration| {
                let list: Vec<String> = workers
                    .iter()
                    .map(|t| format!("{:.1}", ms(of(t))))
                    .collect();
                list.join(" ")
            };
            write!(
                f,
                "\n{:.1} ms between turns; {} waits for others' blocks; {} segments taken over; per worker, ms, held up: {}; starting turns: {}",
                ms(self.between_turns),
                self.waits,
                self.taken_over,
                each(|t| t.held_up),
                each(|t| t.starting)
            )?;
        }
        Ok(())
    }
}

/// Time the launch's thread spent on each part so far (see [`LaunchTimings`]), and its
/// workers' busy time.
#[derive(Clone, Debug, Default)]
pub(crate) struct Clocks {
    pub(crate) interpreter: Duration,
    pub(crate) joins: Duration,
    pub(crate) waiting: Duration,
    pub(crate) turns: u64,
    pub(crate) serial_rounds: u64,
    pub(crate) waits: u64,
    pub(crate) taken_over: u64,
    pub(crate) between_turns: Duration,
    /// When the last turn ended, while no other has started.
    pub(crate) turn_ended: Option<Instant>,
    pub(crate) workers: Vec<WorkerClocks>,
}

impl Clocks {
    /// The launch's timings, once it ended: `total` since `started`, the detector's time on the
    /// launch's thread and each shard's busy time.
    pub(crate) fn timings(
        self,
        started: Instant,
        race_detector: Duration,
        shards: Vec<Duration>,
    ) -> LaunchTimings {
        let total = started.elapsed();
        let mut threads = vec![ThreadBusy {
            name: "launch".into(),
            busy: total.saturating_sub(self.waiting),
            ..ThreadBusy::default()
        }];
        threads.extend(
            self.workers
                .iter()
                .enumerate()
                .map(|(i, clocks)| ThreadBusy {
                    name: format!("launch worker {}", i + 1),
                    busy: clocks.busy,
                    held_up: clocks.held_up,
                    starting: clocks.starting,
                }),
        );
        threads.extend(shards.iter().enumerate().map(|(i, &busy)| ThreadBusy {
            name: format!("racecheck {}", i + 1),
            busy,
            ..ThreadBusy::default()
        }));
        LaunchTimings {
            total,
            interpreter: self.interpreter,
            race_detector,
            joins: self.joins,
            waiting: self.waiting,
            turns: self.turns,
            serial_rounds: self.serial_rounds,
            waits: self.waits,
            taken_over: self.taken_over,
            between_turns: self.between_turns,
            threads,
        }
    }
}

/// A stopwatch for a part of the launch thread's time that may contain race-detector work,
/// which counts for the detector instead: started with the detector's time so far, stopped
/// with it again.
pub(crate) struct Lap {
    started: Instant,
    detector: Duration,
}

impl Lap {
    pub(crate) fn start(detector: Duration) -> Lap {
        Lap {
            started: Instant::now(),
            detector,
        }
    }

    /// The time since the start less the detector's share of it.
    pub(crate) fn stop(&self, detector: Duration) -> Duration {
        let inner = detector.saturating_sub(self.detector);
        self.started.elapsed().saturating_sub(inner)
    }
}
