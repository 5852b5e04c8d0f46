//! The end of the program: work still queued is finished and its findings reported, device
//! `printf` output still held is printed; and a crash in the host code is named at its line
//! when it touched device memory, which the host cannot reach.

use std::sync::Once;

use crate::runtime::lock;

static INSTALLED: Once = Once::new();

/// Registers the exit handler and the crash handler, once.
pub fn install() {
    INSTALLED.call_once(|| {
        // SAFETY: `at_exit` is an `extern "C" fn()` that lives as long as the process.
        unsafe {
            libc::atexit(at_exit);
        }
        crate::managed::reserve();
        install_crash_handler();
        crate::interrupt::install();
    });
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let mut guard = lock();
        if let Some(rt) = guard.as_mut() {
            crate::managed::open(rt);
            crate::streams::host_waits_for_all(rt);
            last_words(rt);
        }
    });
}

/// What the program's end prints, whichever way it ends: device `printf` output still held,
/// the program's own buffered stdout, and the `--timings` table.
pub fn last_words(rt: &mut crate::runtime::Runtime) {
    crate::streams::deliver_printf(rt);
    crate::out::flush_program_stdout();
    crate::timings::report(rt);
}

fn install_crash_handler() {
    // SAFETY: a zeroed sigaction with a valid handler and SA_SIGINFO is a well-formed request.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_crash as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGSEGV, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// The program is crashing anyway: this says why, when the address is device memory, then
/// lets the signal end the process as it would have.
extern "C" fn on_crash(signal: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo and ucontext to an SA_SIGINFO handler.
    let (address, pc, wrote) = unsafe {
        let address = (*info).si_addr() as u64;
        let uc = context as *const libc::ucontext_t;
        let pc = (*uc).uc_mcontext.gregs[libc::REG_RIP as usize] as usize;
        // The page fault's error code: bit 1 is set for a write.
        let wrote = (*uc).uc_mcontext.gregs[libc::REG_ERR as usize] & 2 != 0;
        (address, pc, wrote)
    };
    if crate::managed::on_fault(address, pc, wrote) {
        return;
    }
    // The lock may be held by the crashing thread itself: never wait for it.
    if let Some(mut guard) = crate::runtime::try_lock()
        && let Some(rt) = guard.as_mut()
        && let Some(text) = crate::memory::describe_device_address(rt, address)
    {
        // The pc is the faulting instruction itself, not a return address.
        let place = crate::site::Site::at_pc(pc).resolve();
        let quote = match (&place.file, place.line) {
            (Some(file), Some(line)) => crate::site::source_line(file, line)
                .map(|t| format!("\n    {line} | {t}"))
                .unwrap_or_default(),
            _ => String::new(),
        };
        rt.out.say(&format!(
            "host access to device memory: the host read or wrote {text}, which only kernels and cudaMemcpy can reach\n  at {place}{quote}"
        ));
        let json = format!(
            "{{\"kind\":\"host access to device memory\",\"lines\":[{}],\"host\":null,\"text\":\"\"}}",
            place.line.unwrap_or(0)
        );
        rt.out.record(&json);
    }
    // SAFETY: the default action restored, raising the signal again ends the process.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
