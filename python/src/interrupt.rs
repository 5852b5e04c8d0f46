//! Ctrl-C during a launch from Python. The launch runs with the interpreter released, so
//! Python's own handler only notes the signal, and `KeyboardInterrupt` would wait for the
//! launch's end: seconds, or hours for a kernel that spins. While a launch runs on the main
//! thread, SIGINT also asks the emulator to stop at its next round (`ptx_emu::interrupt`); the
//! launch then returns early and Python raises `KeyboardInterrupt` at the launch's line.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The handler Python had installed (a `void (*)(int)`), which ours calls too.
static PYTHONS: AtomicUsize = AtomicUsize::new(0);

/// SIGINT as it was before the launch, put back when it ends; nothing when the launch is not on
/// the main thread (where Python handles signals) or Python's handler is not its own C one.
pub struct Interruptible(Option<libc::sigaction>);

impl Interruptible {
    pub fn during_launch() -> Interruptible {
        // SAFETY: getpid/gettid only read; sigaction with a null new action only reads the
        // current one, and the one installed is an `extern "C" fn(i32)` that lives as long as
        // the process.
        unsafe {
            if libc::getpid() != libc::gettid() {
                return Interruptible(None);
            }
            let mut before: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGINT, std::ptr::null(), &mut before) != 0
                || before.sa_sigaction == libc::SIG_DFL
                || before.sa_sigaction == libc::SIG_IGN
                || before.sa_flags & libc::SA_SIGINFO != 0
            {
                return Interruptible(None);
            }
            PYTHONS.store(before.sa_sigaction, Ordering::SeqCst);
            let mut action = before;
            action.sa_sigaction = on_sigint as *const () as usize;
            libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
            Interruptible(Some(before))
        }
    }
}

impl Drop for Interruptible {
    fn drop(&mut self) {
        if let Some(before) = self.0.take() {
            // SAFETY: puts back the action `during_launch` read.
            unsafe {
                libc::sigaction(libc::SIGINT, &before, std::ptr::null_mut());
            }
        }
    }
}

/// Async-signal-safe: an atomic store, then Python's own handler, which only notes the signal.
extern "C" fn on_sigint(signal: i32) {
    ptx_emu::interrupt::request();
    let python = PYTHONS.load(Ordering::SeqCst);
    if python != 0 {
        // SAFETY: the address is the `void (*)(int)` handler Python installed, read from the
        // sigaction it set (no SA_SIGINFO).
        let handler: extern "C" fn(i32) = unsafe { std::mem::transmute(python) };
        handler(signal);
    }
}
