//! Managed memory that the host touches while a kernel may still be using it: between a launch
//! and the host's next synchronization the runtime keeps managed allocations unreadable, so the
//! host's first access faults; the fault is noted (which bytes, read or write, the host's
//! instruction), the pages are made readable again, and the access goes on. The note becomes a
//! finding at the next runtime call, or at exit, with the host line and the launch's line.
//!
//! On a GPU without concurrent managed access such a read is a crash; with it, the host races
//! the kernel and may read stale data. Either way it is a bug.

use std::sync::Mutex;

use crate::runtime::{AllocKind, Runtime};
use crate::site::Site;

/// Ranges kept unreadable now: `(start, length)`. The fault handler reads it with `try_lock`;
/// the runtime holds the lock only inside its own calls, when nothing is protected.
static PROTECTED: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());
/// Faults the handler noted: address, the faulting instruction, whether it wrote.
static FAULTS: Mutex<Vec<(u64, usize, bool)>> = Mutex::new(Vec::new());

fn page_round(size: usize) -> usize {
    size.max(1).div_ceil(4096) * 4096
}

/// After a launch: managed memory is the kernel's until the host synchronizes.
pub fn launched(rt: &mut Runtime, site: Option<Site>) {
    if rt
        .allocations
        .values()
        .any(|a| a.kind == AllocKind::Managed)
    {
        rt.managed_launch = Some(site);
    }
}

/// The host synchronized: managed memory is the host's again.
pub fn synchronized(rt: &mut Runtime) {
    rt.managed_launch = None;
}

/// At the start of every runtime call: the runtime itself reads and writes managed memory.
pub fn open(rt: &mut Runtime) {
    let mut protected = PROTECTED.lock().unwrap_or_else(|p| p.into_inner());
    for (base, len) in protected.drain(..) {
        // SAFETY: `base..base + len` is a mapping `memory::map_host` made.
        unsafe {
            libc::mprotect(
                base as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
    }
    drop(protected);
    report_faults(rt);
}

/// At the end of every runtime call: while a launch is unsynchronized, managed memory is
/// unreadable to the host.
pub fn close(rt: &Runtime) {
    if rt.managed_launch.is_none() {
        return;
    }
    let mut protected = PROTECTED.lock().unwrap_or_else(|p| p.into_inner());
    for (&base, a) in rt
        .allocations
        .iter()
        .filter(|(_, a)| a.kind == AllocKind::Managed)
    {
        let len = page_round(a.size);
        // SAFETY: as above.
        if unsafe { libc::mprotect(base as *mut libc::c_void, len, libc::PROT_NONE) } == 0 {
            protected.push((base, len));
        }
    }
}

/// From the fault handler: whether `address` is protected managed memory, in which case the
/// fault is noted and its pages made readable again, so the access can go on.
pub fn on_fault(address: u64, pc: usize, wrote: bool) -> bool {
    let Ok(mut protected) = PROTECTED.try_lock() else {
        return false;
    };
    let Some(i) = protected
        .iter()
        .position(|&(base, len)| (base..base + len as u64).contains(&address))
    else {
        return false;
    };
    let (base, len) = protected.swap_remove(i);
    let host_atomic = is_host_atomic(pc);
    // SAFETY: mprotect is async-signal-safe; the range is a mapping the runtime made.
    unsafe {
        libc::mprotect(
            base as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
        )
    };
    if !host_atomic
        && let Ok(mut faults) = FAULTS.try_lock()
        && faults.len() < faults.capacity()
    {
        faults.push((address, pc, wrote));
    }
    true
}

/// Whether the instruction at `pc` is an atomic read-modify-write of memory (`lock`-prefixed, or
/// `xchg`, which is locked without the prefix): `__sync_fetch_and_add`, `std::atomic`. The host's
/// atomics are system-scope, and a device with `concurrentManagedAccess` (an H100's, the emulated
/// one's) lets them run beside a kernel's `atomicAdd_system` on the same managed memory, as NVIDIA's
/// systemWideAtomics sample does; a plain access there is still reported.
#[cfg(target_arch = "x86_64")]
fn is_host_atomic(pc: usize) -> bool {
    const MAX_INSTRUCTION: usize = 15;
    for i in 0..MAX_INSTRUCTION {
        // SAFETY: `pc` is the faulting instruction, in the program's mapped code; an x86
        // instruction is at most 15 bytes, and the prefixes are read only up to its opcode.
        let byte = unsafe { std::ptr::read_volatile((pc + i) as *const u8) };
        match byte {
            0xF0 => return true,
            // Operand size, address size, segment, rep, and REX prefixes.
            0x66 | 0x67 | 0x2E | 0x3E | 0x26 | 0x64 | 0x65 | 0x36 | 0xF2 | 0xF3 | 0x40..=0x4F => {}
            0x86 | 0x87 => return true,
            _ => return false,
        }
    }
    false
}

#[cfg(not(target_arch = "x86_64"))]
fn is_host_atomic(_pc: usize) -> bool {
    false
}

/// Room for the handler's notes, made outside it: a handler must not allocate.
pub fn reserve() {
    let mut faults = FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    let room = 64usize.saturating_sub(faults.capacity());
    faults.reserve(room);
}

pub fn report_faults(rt: &mut Runtime) {
    let noted: Vec<(u64, usize, bool)> = {
        let mut faults = FAULTS.lock().unwrap_or_else(|p| p.into_inner());
        let noted = faults.clone();
        faults.clear();
        noted
    };
    for (address, pc, wrote) in noted {
        let what = match crate::memory::find(rt, address, 1) {
            crate::memory::Place::In(base, a) | crate::memory::Place::PastEnd(base, a) => {
                format!("byte {} of {}", address - base, a.label)
            }
            _ => format!("{address:#x}"),
        };
        let launch = rt.managed_launch.flatten();
        let launch = rt.place(launch);
        let text = format!(
            "the host {} {what}, managed memory, after the launch at {launch} and before any cudaDeviceSynchronize or cudaStreamSynchronize: the kernel may still be using it",
            if wrote { "wrote" } else { "read" },
        );
        crate::report::host_finding(
            rt,
            "host code",
            Some(Site::at_pc(pc)),
            crate::runtime::HostFinding {
                kind: "host access to managed memory before synchronization",
                text,
            },
        );
    }
}
