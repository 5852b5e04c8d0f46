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

/// Polls `poll` until it gives something, for up to [`SPIN`]: what it gave, or `None` when
/// the time ran out first.
pub(crate) fn spin_for<T>(mut poll: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..64 {
            if let Some(value) = poll() {
                return Some(value);
            }
            std::hint::spin_loop();
        }
        if start.elapsed() > SPIN {
            return None;
        }
    }
}
