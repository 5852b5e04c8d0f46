//! `cudaHostRegister`: host memory the program allocated itself (with `malloc`, `mmap`, on its
//! stack) made usable by the device. The emulator cannot hold memory at any host address: its
//! own windows (module variables, the device heap, local and shared memory) sit where Linux
//! puts `mmap`'s memory, and its device heap must sort after every other allocation. So
//! registered memory gets a second address in the pinned-memory window, with the program's
//! pages moved into a memory file mapped at both addresses: what either side writes, the other
//! reads, and kernels reach it at the address `cudaHostGetDevicePointer` gives, as they do on a
//! device whose `cudaDevAttrCanUseHostPointerForRegisteredMem` is 0, which the emulated one
//! reports. Copies take either address.

use std::collections::BTreeMap;
use std::ffi::{c_uint, c_void};

use crate::errors;
use crate::runtime::{AllocKind, Allocation, ApiResult, Failure, Runtime, api};
use crate::site::caller;
use crate::streams::emu_failure;

const PAGE: u64 = 4096;
/// `cudaHostRegisterIoMemory`: memory of a device on the PCIe bus, which the emulator has not.
const REGISTER_IO_MEMORY: c_uint = 4;

/// One registered range.
#[derive(Debug, Clone)]
pub struct Registration {
    pub size: usize,
    /// Where the device reaches the range's first byte.
    pub device: u64,
    /// The whole pages the range lies in, at the program's address and at the device's.
    pages: u64,
    device_pages: u64,
    len: usize,
}

/// Registered ranges by the program's address.
pub type Registrations = BTreeMap<u64, Registration>;

/// The registration that holds host address `ptr`, if any: its start and what it is.
pub fn registered_at(rt: &Runtime, ptr: u64) -> Option<(u64, &Registration)> {
    let (&start, r) = rt.registered.range(..=ptr).next_back()?;
    (ptr < start + r.size.max(1) as u64).then_some((start, r))
}

/// Whether every page of `[lo, hi)` is private anonymous read-write memory (the heap, a stack,
/// an anonymous `mmap`), the memory whose pages can move into a memory file unchanged.
fn private_anonymous(lo: u64, hi: u64) -> bool {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return false;
    };
    let mut covered = lo;
    let mut regions: Vec<(u64, u64, bool)> = maps
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (a, b) = fields.next()?.split_once('-')?;
            let perms = fields.next()?;
            let path = fields.nth(3).unwrap_or("");
            let anonymous = path.is_empty() || path == "[heap]" || path.starts_with("[stack");
            let ok = perms.starts_with("rw") && perms.ends_with('p') && anonymous;
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
                ok,
            ))
        })
        .collect();
    regions.sort_unstable();
    for (a, b, ok) in regions {
        if b <= covered || a > covered {
            continue;
        }
        if !ok {
            return false;
        }
        covered = b;
        if covered >= hi {
            return true;
        }
    }
    covered >= hi
}

fn refuse(text: String) -> Failure {
    Failure::host(
        errors::NOT_SUPPORTED,
        "not supported by Racetrack's runtime",
        text,
    )
}

fn register(rt: &mut Runtime, ptr: *mut c_void, size: usize, flags: c_uint) -> ApiResult {
    let start = ptr as u64;
    if start == 0 || size == 0 {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    if flags & REGISTER_IO_MEMORY != 0 {
        return Err(refuse(
            "cudaHostRegister with cudaHostRegisterIoMemory (there is no I/O memory to map)"
                .to_string(),
        ));
    }
    let end = start + size as u64;
    let (pages, pages_end) = (start / PAGE * PAGE, end.div_ceil(PAGE) * PAGE);
    // Ranges whose pages meet cannot each have their own memory file.
    if rt
        .registered
        .values()
        .any(|r| r.pages < pages_end && pages < r.pages + r.len as u64)
    {
        let overlaps = rt
            .registered
            .iter()
            .any(|(&s, r)| s < end && start < s + r.size as u64);
        if overlaps {
            return Err(Failure::code(errors::HOST_MEMORY_ALREADY_REGISTERED));
        }
        return Err(refuse(format!(
            "cudaHostRegister of {size} bytes at {ptr:p}, which share a page with memory registered before"
        )));
    }
    if !private_anonymous(pages, pages_end) {
        return Err(refuse(format!(
            "cudaHostRegister of {size} bytes at {ptr:p}, which is not all private read-write memory (a file mapping, or read-only pages)"
        )));
    }
    let len = (pages_end - pages) as usize;
    let device_pages = rt.host_window_next;
    // SAFETY: a memory file of `len` bytes, mapped at an address nothing holds
    // (MAP_FIXED_NOREPLACE fails rather than replace a mapping) and over the program's own
    // pages once it holds their bytes; the program's mapping is private anonymous memory (just
    // checked), so nothing but these bytes is lost by replacing it.
    unsafe {
        let fd = libc::memfd_create(c"racetrack-registered".as_ptr(), libc::MFD_CLOEXEC);
        if fd < 0 {
            return Err(Failure::code(errors::MEMORY_ALLOCATION));
        }
        let sized = libc::ftruncate(fd, len as libc::off_t) == 0;
        let shared = libc::PROT_READ | libc::PROT_WRITE;
        let alias = if sized {
            libc::mmap(
                device_pages as *mut c_void,
                len,
                shared,
                libc::MAP_SHARED | libc::MAP_FIXED_NOREPLACE,
                fd,
                0,
            )
        } else {
            libc::MAP_FAILED
        };
        if alias == libc::MAP_FAILED || alias as u64 != device_pages {
            libc::close(fd);
            return Err(Failure::code(errors::MEMORY_ALLOCATION));
        }
        // Another thread writing these pages between the copy and the new mapping would lose
        // its write: registration is meant to happen before the memory is used.
        std::ptr::copy_nonoverlapping(pages as *const u8, alias as *mut u8, len);
        let moved = libc::mmap(
            pages as *mut c_void,
            len,
            shared,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            0,
        );
        libc::close(fd);
        if moved == libc::MAP_FAILED {
            libc::munmap(alias, len);
            return Err(Failure::code(errors::MEMORY_ALLOCATION));
        }
    }
    rt.host_window_next = (device_pages + len as u64 + (1 << 16)).div_ceil(1 << 16) * (1 << 16);
    let device = device_pages + (start - pages);
    let label = crate::memory::label_from_source(rt, caller(), "cudaHostRegister");
    // SAFETY: the alias just mapped holds the range's `size` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(device as *const u8, size) }.to_vec();
    rt.emu
        .alloc_at(device, bytes, &label)
        .map_err(emu_failure)?;
    rt.allocations.insert(
        device,
        Allocation {
            size,
            label,
            kind: AllocKind::Registered,
            device: rt.emu.current_device(),
            site: caller(),
        },
    );
    rt.registered.insert(
        start,
        Registration {
            size,
            device,
            pages,
            device_pages,
            len,
        },
    );
    Ok(())
}

/// The program's pages go back to private memory holding what they hold now.
fn unregister(rt: &mut Runtime, ptr: *mut c_void) -> ApiResult {
    let Some(r) = rt.registered.remove(&(ptr as u64)) else {
        return Err(Failure::code(errors::HOST_MEMORY_NOT_REGISTERED));
    };
    rt.allocations.remove(&r.device);
    let _ = rt.emu.free(ptx_emu::DevicePtr(r.device));
    // SAFETY: fresh private memory takes the bytes and then the program's pages' place
    // (mremap onto a fixed address replaces the mapping there); the alias is ours to unmap.
    unsafe {
        let fresh = libc::mmap(
            std::ptr::null_mut(),
            r.len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if fresh != libc::MAP_FAILED {
            std::ptr::copy_nonoverlapping(r.device_pages as *const u8, fresh as *mut u8, r.len);
            let back = libc::mremap(
                fresh,
                r.len,
                r.len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                r.pages as *mut c_void,
            );
            if back == libc::MAP_FAILED {
                // The program's pages stay the memory file's, which holds the same bytes.
                libc::munmap(fresh, r.len);
            }
        }
        libc::munmap(r.device_pages as *mut c_void, r.len);
    }
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) -> i32 {
    api("cudaHostRegister", |rt| register(rt, ptr, size, flags))
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaHostUnregister(ptr: *mut c_void) -> i32 {
    api("cudaHostUnregister", |rt| unregister(rt, ptr))
}
