//! Ctrl-C (SIGINT) or SIGTERM while the emulator runs a kernel. A slow program is often stopped
//! this way, and then what the checkers found so far, and where the time went, matter most: the
//! launch stops at its next round, what it found is reported as after any launch, and the
//! program ends as the signal would have ended it, after a line saying where it stood (and the
//! `--timings` table). A second signal, or one that comes while no call of the runtime is
//! running (the program's own host code), ends the program at once, as usual.

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use crate::runtime::Runtime;
use crate::site::Site;

/// Calls of the runtime under way: a signal outside them ends the program at once.
static IN_CALLS: AtomicUsize = AtomicUsize::new(0);
/// The signal that asked the running launch to stop, 0 before one came.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Handles SIGINT and SIGTERM, unless the program handles them itself.
pub fn install() {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a valid handler is a well-formed request; reading the
        // current one first leaves a program's own handler (or its SIG_IGN) in place.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0
                || current.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Async-signal-safe: atomics, `signal` and `raise` only.
extern "C" fn on_signal(signal: i32) {
    let first = SIGNAL
        .compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    if first && IN_CALLS.load(Ordering::SeqCst) > 0 {
        ptx_emu::interrupt::request();
        return;
    }
    // SAFETY: the default action restored, raising the signal again ends the process.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// A call of the runtime, counted while it runs (see [`IN_CALLS`]).
pub struct InCall;

impl InCall {
    pub fn enter() -> InCall {
        IN_CALLS.fetch_add(1, Ordering::SeqCst);
        InCall
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        IN_CALLS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// After call `call` (made at `site`) returned: when a signal asked the program to stop, says
/// where it stood, gives the `--timings` table and ends the program by that signal. What the
/// stopped launch found was reported when it returned.
pub fn end_if_asked(rt: &mut Runtime, call: &str, site: Option<Site>) {
    let signal = SIGNAL.load(Ordering::SeqCst);
    if signal == 0 {
        return;
    }
    // The launch says more than the call that ran it (nvcc's launch stub, for a `<<<…>>>`).
    let at = match rt.interrupted_launch.take() {
        Some(launch) => format!("during {launch}"),
        None => format!("in {call} at {}", rt.place(site)),
    };
    let name = if signal == libc::SIGINT {
        "SIGINT (Ctrl-C)"
    } else {
        "SIGTERM"
    };
    rt.out.say(&format!(
        "interrupted by {name} {at}: the program ends here; what the checkers found until then is above"
    ));
    crate::exit::last_words(rt);
    // SAFETY: the default action restored, raising the signal ends the process as the signal
    // would have, which is what the shell and `racetrack run` expect to see.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
