//! Waiting without a system call: a waiting thread spins a while before it sleeps.

/// How long a waiting thread spins before it sleeps: a round's other side is usually tens of
/// microseconds away, a race detector shard's next batch often not much more, and waking a
/// sleeping thread costs the waker a system call and can take that long again; on a machine with
/// more threads than cores (tests, other work) a sleeping thread gives its core away. 50 µs
/// saved the workspace's tests about 28 s, and cost checkers-off runs on 2 cores 1.5–4 %.
#[cfg(not(test))]
pub(crate) const SPIN: std::time::Duration = std::time::Duration::from_micros(200);
/// Tests share the cores with each other: a worker spinning through a round's detector batch
/// took the core another test needed (the emulator's unit tests went from 16 s to 35 s).
#[cfg(test)]
pub(crate) const SPIN: std::time::Duration = std::time::Duration::from_micros(10);

/// How long the launch's thread, its joins done, spins for the end of a turn on several cores
/// before it sleeps, when it has a core of its own. A turn of the 4 M `reduce_better` launch on
/// 16 cores lasts about 0.4 ms; woken from sleep, the launch's thread took about 20 µs a turn to
/// notice the turn's end on the device machine, while fourteen workers waited (the launch took
/// 109.6 ms with this spin against 113.7 ms without, medians of eight passes; BENCHMARK.md).
#[cfg(not(test))]
pub(crate) const TURN_SPIN: std::time::Duration = std::time::Duration::from_millis(3);
#[cfg(test)]
pub(crate) const TURN_SPIN: std::time::Duration = SPIN;

/// Polls `poll` until it gives something, for up to [`SPIN`]: what it gave, or `None` when
/// the time ran out first.
pub(crate) fn spin_for<T>(poll: impl FnMut() -> Option<T>) -> Option<T> {
    spin_for_up_to(SPIN, poll)
}

/// [`spin_for`], for up to `limit`.
pub(crate) fn spin_for_up_to<T>(
    limit: std::time::Duration,
    mut poll: impl FnMut() -> Option<T>,
) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..64 {
            if let Some(value) = poll() {
                return Some(value);
            }
            std::hint::spin_loop();
        }
        if start.elapsed() > limit {
            return None;
        }
    }
}
