//! A request from outside to stop every launch now: Ctrl-C in a whole program (`racetrack run`),
//! whose runtime asks from its signal handler. Launches stop at their next round as if they had
//! finished, with what they found so far and no finding of their own; the caller, which asked,
//! says why the kernel stopped early. Process-wide, as a signal is.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every launch to stop. Async-signal-safe: one atomic store.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Whether a stop was asked for (launches look once a round).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Withdraws the request, for a caller that handled it and goes on.
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}
