//! Memory: device allocations live in the emulator; pinned and managed memory is host memory
//! mapped at an address the emulator holds too (unified addressing gives both sides one
//! address), copied in before each launch and back after it. Copies and sets run on streams,
//! so that racecheck orders them against kernels; host-side bugs (a copy past an allocation's
//! end, a freed pointer, the wrong direction) are reported at the call's line.

use std::ffi::{c_int, c_uint, c_void};

use ptx_emu::DevicePtr;

use crate::abi;
use crate::errors;
use crate::runtime::{AllocKind, Allocation, ApiResult, Failure, Freed, Runtime, api, put};
use crate::site::{Site, caller, source_line};
use crate::streams::{before_op, emu_failure, host_waits_for, stream_index};

/// The allocation that holds `[ptr, ptr + len)`, or the reason it is not one.
#[derive(Debug)]
pub enum Place<'a> {
    /// In the allocation starting at `base`.
    In(u64, &'a Allocation),
    /// Starts inside the allocation at `base` and runs past its end.
    PastEnd(u64, &'a Allocation),
    Freed(&'a Freed),
    /// Not memory the runtime handed out: the host's own.
    Host,
}

pub fn find(rt: &Runtime, ptr: u64, len: usize) -> Place<'_> {
    if let Some((&base, a)) = rt.allocations.range(..=ptr).next_back()
        && ptr < base + a.size.max(1) as u64
    {
        return if ptr + len as u64 <= base + a.size as u64 {
            Place::In(base, a)
        } else {
            Place::PastEnd(base, a)
        };
    }
    match rt
        .freed
        .iter()
        .rev()
        .find(|f| ptr >= f.base && ptr < f.base + f.size.max(1) as u64)
    {
        Some(f) => Place::Freed(f),
        None => Place::Host,
    }
}

/// How the host names an allocation in a report: `d_hist (1024 bytes, cudaMalloc at hist.cu:40)`.
fn describe(rt: &mut Runtime, a: &Allocation) -> String {
    let site = rt.place(a.site);
    let how = match a.kind {
        AllocKind::Device => "cudaMalloc",
        AllocKind::PinnedHost => "cudaMallocHost",
        AllocKind::Managed => "cudaMallocManaged",
        AllocKind::Registered => "cudaHostRegister",
    };
    match site.file_line() {
        Some(at) => format!("{} ({} bytes, {how} at {at})", a.label, a.size),
        None => format!("{} ({} bytes, {how})", a.label, a.size),
    }
}

/// For the crash handler: what device memory `address` is, if it is.
pub fn describe_device_address(rt: &mut Runtime, address: u64) -> Option<String> {
    match find(rt, address, 1) {
        Place::In(base, a) | Place::PastEnd(base, a) if a.kind == AllocKind::Device => {
            let a = a.clone();
            Some(format!("byte {} of {}", address - base, describe(rt, &a)))
        }
        Place::Freed(f) => Some(format!("byte {} of {}, freed", address - f.base, f.label)),
        _ => None,
    }
}

/// The name the program gives an allocation, read off the line that made it
/// (`cudaMalloc(&d_hist, …)` names it `d_hist`).
pub fn label_from_source(rt: &mut Runtime, site: Option<Site>, call: &str) -> String {
    let place = rt.place(site);
    let text = match (&place.file, place.line) {
        (Some(file), Some(line)) => source_line(file, line),
        _ => None,
    };
    text.and_then(|t| {
        let after = &t[t.find(call)? + call.len()..];
        let after = &after[after.find('&')? + 1..];
        let name: String = after
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '.'))
            .collect();
        (!name.is_empty()).then_some(name)
    })
    .unwrap_or_else(|| format!("{call}'d memory"))
}

/// A device allocation; `cudaErrorMemoryAllocation` where this machine cannot hold it, as a GPU
/// answers one larger than its free memory.
fn device_malloc(rt: &mut Runtime, size: usize, call: &str) -> ApiResult<u64> {
    let site = caller();
    let label = label_from_source(rt, site, call);
    let ptr = rt.emu.try_alloc_uninit(size, &label).map_err(|error| {
        Failure::host(
            errors::MEMORY_ALLOCATION,
            "out of memory",
            format!("{call} of {size} bytes: {error}"),
        )
    })?;
    rt.allocations.insert(
        ptr.0,
        Allocation {
            size,
            label,
            kind: AllocKind::Device,
            device: rt.emu.current_device(),
            site,
        },
    );
    Ok(ptr.0)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> i32 {
    api("cudaMalloc", |rt| {
        let p = device_malloc(rt, size, "cudaMalloc")?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    stream: *mut c_void,
) -> i32 {
    let site = caller();
    api("cudaMallocAsync", |rt| {
        let index = stream_index(rt, stream as usize)?;
        if crate::graphs::capturing(rt, index).is_some() {
            // Captured, it is an allocation node, whose address it is from now on.
            let label = label_from_source(rt, site, "cudaMallocAsync");
            let p = crate::graphs::capture_alloc(rt, index, size, label).unwrap_or_default();
            return unsafe { put(ptr, p as *mut c_void) };
        }
        let p = device_malloc(rt, size, "cudaMallocAsync")?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocPitch(
    ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> i32 {
    api("cudaMallocPitch", |rt| {
        let row = width.div_ceil(512) * 512;
        let p = device_malloc(rt, row * height, "cudaMallocPitch")?;
        unsafe {
            put(pitch, row)?;
            put(ptr, p as *mut c_void)
        }
    })
}

fn free(rt: &mut Runtime, ptr: *mut c_void, call: &str, want: &[AllocKind]) -> ApiResult {
    let p = ptr as u64;
    if p == 0 {
        return Ok(());
    }
    let site = caller();
    match rt.allocations.get(&p) {
        Some(a) if want.contains(&a.kind) => {
            let a = rt.allocations.remove(&p).expect("found just above");
            if a.kind != AllocKind::Device {
                // SAFETY: the mapping was made by `map_host` with this address and size.
                unsafe { libc::munmap(p as *mut c_void, page_round(a.size)) };
            }
            rt.emu.free(DevicePtr(p)).map_err(emu_failure)?;
            rt.freed.push(Freed {
                base: p,
                size: a.size,
                label: a.label,
                freed_at: site,
            });
            Ok(())
        }
        Some(a) => {
            let a = a.clone();
            let what = describe(rt, &a);
            Err(Failure::host(
                errors::INVALID_VALUE,
                "wrong free",
                format!("{call} of {what}, which it did not allocate"),
            ))
        }
        None => {
            let text = match find(rt, p, 1) {
                Place::Freed(f) => {
                    let (label, at) = (f.label.clone(), f.freed_at);
                    let at = rt.place(at);
                    (
                        "double free",
                        format!("{call} of {label}, which was already freed at {at}"),
                    )
                }
                Place::In(base, a) | Place::PastEnd(base, a) => {
                    let a = a.clone();
                    (
                        "invalid free",
                        format!(
                            "{call} of a pointer {} bytes into {}: only the pointer an allocation returned can be freed",
                            p - base,
                            describe(rt, &a)
                        ),
                    )
                }
                Place::Host => (
                    "invalid free",
                    format!(
                        "{call} of {p:#x}, which is not memory CUDA allocated (a host pointer?)"
                    ),
                ),
            };
            Err(Failure::host(errors::INVALID_VALUE, text.0, text.1))
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaFree(ptr: *mut c_void) -> i32 {
    api("cudaFree", |rt| {
        // CUDA's cudaFree waits for the device's work first (cudaFreeAsync is the one that
        // does not): what any stream did before it is ordered before what the host does next,
        // a later allocation at the same address included.
        if !ptr.is_null() {
            crate::streams::host_waits_for_all(rt);
        }
        free(
            rt,
            ptr,
            "cudaFree",
            &[AllocKind::Device, AllocKind::Managed],
        )?;
        crate::graphs::released(rt, ptr as u64, None);
        Ok(())
    })
}

/// Frees device memory (a graph's free node): `call` names what freed it in reports.
pub fn free_device(rt: &mut Runtime, ptr: *mut c_void, call: &str) -> ApiResult {
    free(rt, ptr, call, &[AllocKind::Device])
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaFreeAsync(ptr: *mut c_void, stream: *mut c_void) -> i32 {
    api("cudaFreeAsync", |rt| {
        let index = stream_index(rt, stream as usize)?;
        if crate::graphs::capture_free(rt, index, ptr as u64) {
            return Ok(());
        }
        free(rt, ptr, "cudaFreeAsync", &[AllocKind::Device])?;
        crate::graphs::released(rt, ptr as u64, Some(index));
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaFreeHost(ptr: *mut c_void) -> i32 {
    api("cudaFreeHost", |rt| {
        free(rt, ptr, "cudaFreeHost", &[AllocKind::PinnedHost])
    })
}

fn page_round(size: usize) -> usize {
    size.max(1).div_ceil(4096) * 4096
}

/// Host memory that kernels reach at the same address.
fn map_host(rt: &mut Runtime, size: usize, kind: AllocKind, call: &str) -> ApiResult<u64> {
    let site = caller();
    let label = label_from_source(rt, site, call);
    let len = page_round(size);
    let want = rt.host_window_next;
    // SAFETY: an anonymous private mapping at an address nothing else holds
    // (MAP_FIXED_NOREPLACE fails rather than replace a mapping).
    let got = unsafe {
        libc::mmap(
            want as *mut c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if got == libc::MAP_FAILED || got as u64 != want {
        return Err(Failure::code(errors::MEMORY_ALLOCATION));
    }
    rt.host_window_next = (want + len as u64 + (1 << 16)).div_ceil(1 << 16) * (1 << 16);
    rt.emu
        .alloc_at(want, vec![0; size], &label)
        .map_err(emu_failure)?;
    rt.allocations.insert(
        want,
        Allocation {
            size,
            label,
            kind,
            device: rt.emu.current_device(),
            site,
        },
    );
    Ok(want)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> i32 {
    api("cudaMallocHost", |rt| {
        let p = map_host(rt, size, AllocKind::PinnedHost, "cudaMallocHost")?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaHostAlloc(ptr: *mut *mut c_void, size: usize, _flags: c_uint) -> i32 {
    api("cudaHostAlloc", |rt| {
        let p = map_host(rt, size, AllocKind::PinnedHost, "cudaHostAlloc")?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocManaged(
    ptr: *mut *mut c_void,
    size: usize,
    _flags: c_uint,
) -> i32 {
    api("cudaMallocManaged", |rt| {
        let p = map_host(rt, size, AllocKind::Managed, "cudaMallocManaged")?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}

/// Pinned memory has one address on both sides.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaHostGetDevicePointer(
    device: *mut *mut c_void,
    host: *mut c_void,
    _flags: c_uint,
) -> i32 {
    api("cudaHostGetDevicePointer", |rt| {
        if let Some((start, r)) = crate::host_register::registered_at(rt, host as u64) {
            let at = r.device + (host as u64 - start);
            return unsafe { put(device, at as *mut c_void) };
        }
        match find(rt, host as u64, 1) {
            Place::In(_, a) if a.kind != AllocKind::Device => unsafe { put(device, host) },
            _ => Err(Failure::host(
                errors::INVALID_VALUE,
                "not pinned memory",
                format!("{host:p} is not memory from cudaHostAlloc or cudaMallocHost"),
            )),
        }
    })
}

/// Prefetches and advice change where managed memory lives on a GPU, never what it holds.
#[unsafe(no_mangle)]
pub extern "C" fn cudaMemPrefetchAsync(
    _ptr: *const c_void,
    _count: usize,
    _location: abi::MemLocation,
    _flags: c_uint,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemPrefetchAsync", |rt| {
        stream_index(rt, stream as usize).map(|_| ())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemAdvise(
    _ptr: *const c_void,
    _count: usize,
    _advice: c_int,
    _location: abi::MemLocation,
) -> i32 {
    api("cudaMemAdvise", |_| Ok(()))
}

/// What the host's pinned and managed memory held when a launch began, as the kernel saw it.
#[derive(Debug)]
pub struct HostViews(Vec<(u64, Vec<u8>)>);

/// Copies the host's view of pinned and managed memory into the emulator before a launch.
pub fn push_host_views(rt: &mut Runtime) -> HostViews {
    let views: Vec<(u64, usize)> = rt
        .allocations
        .iter()
        .filter(|(_, a)| a.kind != AllocKind::Device)
        .map(|(&base, a)| (base, a.size))
        .collect();
    let mut pushed = Vec::with_capacity(views.len());
    for (base, size) in views {
        // SAFETY: the mapping `map_host` made, `size` bytes long, alive until freed.
        let host = unsafe { std::slice::from_raw_parts(base as *const u8, size) }.to_vec();
        let _ = rt.emu.write(DevicePtr(base), &host);
        pushed.push((base, host));
    }
    HostViews(pushed)
}

/// And back after it: the bytes the kernel changed, and only those. Another host thread may be
/// filling its own pinned buffer while this launch runs (simpleCallback's workers do), and what it
/// wrote meanwhile must survive.
pub fn pull_host_views(rt: &mut Runtime, views: HostViews) {
    const WORD: usize = 8;
    for (base, before) in views.0 {
        let mut after = vec![0u8; before.len()];
        if rt.emu.read(DevicePtr(base), &mut after).is_err() {
            continue;
        }
        let host = base as *mut u8;
        for (word, (was, is)) in before.chunks(WORD).zip(after.chunks(WORD)).enumerate() {
            if was == is {
                continue;
            }
            for (i, (&b, &a)) in was.iter().zip(is).enumerate() {
                if b != a {
                    // SAFETY: inside the mapping `map_host` made; the byte the kernel wrote.
                    unsafe { host.add(word * WORD + i).write_volatile(a) };
                }
            }
        }
    }
}

/// One side of a copy.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Device(u64),
    Host(u64),
}

fn direction_name(kind: c_int) -> &'static str {
    match kind {
        abi::MEMCPY_HOST_TO_HOST => "cudaMemcpyHostToHost",
        abi::MEMCPY_HOST_TO_DEVICE => "cudaMemcpyHostToDevice",
        abi::MEMCPY_DEVICE_TO_HOST => "cudaMemcpyDeviceToHost",
        abi::MEMCPY_DEVICE_TO_DEVICE => "cudaMemcpyDeviceToDevice",
        _ => "cudaMemcpyDefault",
    }
}

/// Where `ptr` is for a copy of `len` bytes, checked: device memory must hold every byte.
fn side(rt: &mut Runtime, ptr: u64, len: usize, role: &str) -> ApiResult<Side> {
    match find(rt, ptr, len) {
        Place::In(_, a) if a.kind == AllocKind::Device => Ok(Side::Device(ptr)),
        Place::In(..) | Place::Host => Ok(Side::Host(ptr)),
        Place::PastEnd(base, a) => {
            let a = a.clone();
            let over = ptr + len as u64 - (base + a.size as u64);
            let what = describe(rt, &a);
            Err(Failure::host(
                errors::INVALID_VALUE,
                "copy past the end of an allocation",
                format!(
                    "the {role} runs {over} bytes past the end of {what}: {len} bytes from byte {} of it",
                    ptr - base
                ),
            ))
        }
        Place::Freed(f) => {
            let (label, at) = (f.label.clone(), f.freed_at);
            let at = rt.place(at);
            Err(Failure::host(
                errors::INVALID_VALUE,
                "use after free",
                format!("the {role} is {label}, freed by cudaFree at {at}"),
            ))
        }
    }
}

/// A copy of `len` bytes, ordered on stream `index`; `wait` when the host waits for it
/// (`cudaMemcpy`, as opposed to `cudaMemcpyAsync`).
pub fn copy(
    rt: &mut Runtime,
    dst: u64,
    src: u64,
    len: usize,
    kind: c_int,
    index: usize,
    wait: bool,
) -> ApiResult {
    if !(0..=abi::MEMCPY_DEFAULT).contains(&kind) {
        return Err(Failure::code(errors::INVALID_MEMCPY_DIRECTION));
    }
    let node = crate::graphs::Node::Memcpy {
        dst,
        src,
        count: len,
        kind,
    };
    if crate::graphs::capture(rt, index, node) {
        return Ok(());
    }
    if len == 0 {
        return Ok(());
    }
    if dst == 0 || src == 0 {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "null pointer",
            format!(
                "a copy of {len} bytes {} a null pointer",
                if dst == 0 { "to" } else { "from" }
            ),
        ));
    }
    let d = side(rt, dst, len, "destination")?;
    let s = side(rt, src, len, "source")?;
    let expected = match kind {
        abi::MEMCPY_HOST_TO_DEVICE => Some((false, true)),
        abi::MEMCPY_DEVICE_TO_HOST => Some((true, false)),
        abi::MEMCPY_DEVICE_TO_DEVICE => Some((true, true)),
        abi::MEMCPY_HOST_TO_HOST => Some((false, false)),
        _ => None,
    };
    let is_device = |s: Side| matches!(s, Side::Device(_));
    if let Some((src_device, dst_device)) = expected {
        // Pinned and managed memory is both: either direction is right for it.
        let fits = |side: Side, want_device: bool, ptr: u64| {
            is_device(side) == want_device
                || matches!(find(rt, ptr, len), Place::In(_, a) if a.kind != AllocKind::Device)
        };
        if !fits(s, src_device, src) || !fits(d, dst_device, dst) {
            let (wrong, ptr, want) = if !fits(s, src_device, src) {
                ("source", src, src_device)
            } else {
                ("destination", dst, dst_device)
            };
            let is = if want { "host memory" } else { "device memory" };
            let label = match find(rt, ptr, 1) {
                Place::In(_, a) | Place::PastEnd(_, a) => format!(" ({})", a.label),
                _ => String::new(),
            };
            return Err(Failure::host(
                errors::INVALID_VALUE,
                "wrong copy direction",
                format!(
                    "{} with a {wrong} that is {is}{label}: are the arguments swapped?",
                    direction_name(kind)
                ),
            ));
        }
    }
    match (d, s) {
        (Side::Host(d), Side::Host(s)) => {
            if wait {
                host_waits_for(rt, index)?;
            }
            // SAFETY: the program hands two host buffers of `len` bytes, as memcpy requires.
            unsafe { std::ptr::copy(s as *const u8, d as *mut u8, len) };
            Ok(())
        }
        (Side::Device(d), Side::Host(s)) => {
            // SAFETY: the program hands a host buffer of `len` bytes to copy from.
            let bytes = unsafe { std::slice::from_raw_parts(s as *const u8, len) };
            let staging = rt.emu.alloc(len, "host memory");
            rt.emu.write(staging, bytes).map_err(emu_failure)?;
            let what = "the copy from the host";
            let result = device_copy(rt, DevicePtr(d), staging, len, index, what);
            let _ = rt.emu.free(staging);
            result?;
            if wait {
                host_waits_for(rt, index)?;
            }
            Ok(())
        }
        (Side::Host(d), Side::Device(s)) => {
            let staging = rt.emu.alloc(len, "host memory");
            let result = device_copy(
                rt,
                staging,
                DevicePtr(s),
                len,
                index,
                "the copy to the host",
            );
            if result.is_ok() {
                // SAFETY: the program hands a host buffer of `len` bytes to copy into.
                let out = unsafe { std::slice::from_raw_parts_mut(d as *mut u8, len) };
                rt.emu.read(staging, out).map_err(emu_failure)?;
            }
            let _ = rt.emu.free(staging);
            result?;
            if wait {
                host_waits_for(rt, index)?;
            }
            Ok(())
        }
        (Side::Device(d), Side::Device(s)) => {
            device_copy(rt, DevicePtr(d), DevicePtr(s), len, index, "the copy")?;
            if wait {
                host_waits_for(rt, index)?;
            }
            Ok(())
        }
    }
}

/// A copy queued on stream `index`, named `what` at the call's host line in reports of races
/// between streams.
fn device_copy(
    rt: &mut Runtime,
    dst: DevicePtr,
    src: DevicePtr,
    len: usize,
    index: usize,
    what: &str,
) -> ApiResult {
    let id = before_op(rt, index)?;
    let racecheck = rt.options.racecheck;
    let label = crate::report::op_label(rt, what, rt.call_site);
    let report = rt
        .emu
        .copy_on_labelled(id, dst, src, len, racecheck, label.as_deref())
        .map_err(emu_failure)?;
    crate::launch::take_report(rt, None, report);
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> i32 {
    api("cudaMemcpy", |rt| {
        let index = stream_index(rt, 0)?;
        copy(rt, dst as u64, src as u64, count, kind, index, true)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemcpyAsync", |rt| {
        let index = stream_index(rt, stream as usize)?;
        copy(rt, dst as u64, src as u64, count, kind, index, false)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyPeer(
    dst: *mut c_void,
    _dst_device: c_int,
    src: *const c_void,
    _src_device: c_int,
    count: usize,
) -> i32 {
    api("cudaMemcpyPeer", |rt| {
        let index = stream_index(rt, 0)?;
        copy(
            rt,
            dst as u64,
            src as u64,
            count,
            abi::MEMCPY_DEFAULT,
            index,
            true,
        )
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyPeerAsync(
    dst: *mut c_void,
    _dst_device: c_int,
    src: *const c_void,
    _src_device: c_int,
    count: usize,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemcpyPeerAsync", |rt| {
        let index = stream_index(rt, stream as usize)?;
        copy(
            rt,
            dst as u64,
            src as u64,
            count,
            abi::MEMCPY_DEFAULT,
            index,
            false,
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn copy_2d(
    rt: &mut Runtime,
    dst: u64,
    dpitch: usize,
    src: u64,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    index: usize,
    wait: bool,
) -> ApiResult {
    if width > dpitch || width > spitch {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    for row in 0..height {
        copy(
            rt,
            dst + (row * dpitch) as u64,
            src + (row * spitch) as u64,
            width,
            kind,
            index,
            false,
        )?;
    }
    if wait {
        host_waits_for(rt, index)?;
    }
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> i32 {
    api("cudaMemcpy2D", |rt| {
        let index = stream_index(rt, 0)?;
        copy_2d(
            rt, dst as u64, dpitch, src as u64, spitch, width, height, kind, index, true,
        )
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn cudaMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemcpy2DAsync", |rt| {
        let index = stream_index(rt, stream as usize)?;
        copy_2d(
            rt, dst as u64, dpitch, src as u64, spitch, width, height, kind, index, false,
        )
    })
}

fn set(
    rt: &mut Runtime,
    ptr: u64,
    value: c_int,
    count: usize,
    index: usize,
    wait: bool,
) -> ApiResult {
    if count == 0 {
        return Ok(());
    }
    if let Place::Host = find(rt, ptr, count) {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "not device memory",
            format!("cudaMemset of {ptr:#x}, which is not memory CUDA allocated (a host pointer?)"),
        ));
    }
    let node = crate::graphs::Node::Fill {
        dst: ptr,
        pattern: vec![value as u8; count],
        rows: 1,
        pitch: count,
    };
    if crate::graphs::capture(rt, index, node) {
        return Ok(());
    }
    let fill = vec![value as u8; count];
    copy(
        rt,
        ptr,
        fill.as_ptr() as u64,
        count,
        abi::MEMCPY_DEFAULT,
        index,
        wait,
    )
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemset(ptr: *mut c_void, value: c_int, count: usize) -> i32 {
    api("cudaMemset", |rt| {
        let index = stream_index(rt, 0)?;
        set(rt, ptr as u64, value, count, index, false)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemsetAsync(
    ptr: *mut c_void,
    value: c_int,
    count: usize,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemsetAsync", |rt| {
        let index = stream_index(rt, stream as usize)?;
        set(rt, ptr as u64, value, count, index, false)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemset2D(
    ptr: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
) -> i32 {
    api("cudaMemset2D", |rt| {
        let index = stream_index(rt, 0)?;
        for row in 0..height {
            set(
                rt,
                ptr as u64 + (row * pitch) as u64,
                value,
                width,
                index,
                false,
            )?;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> i32 {
    api("cudaMemGetInfo", |rt| {
        let used: usize = rt
            .allocations
            .values()
            .filter(|a| a.kind == AllocKind::Device)
            .map(|a| a.size)
            .sum();
        let all = crate::device::TOTAL_MEMORY;
        unsafe {
            put(total, all)?;
            put(free, all.saturating_sub(used))
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaPointerGetAttributes(
    attributes: *mut abi::PointerAttributes,
    ptr: *const c_void,
) -> i32 {
    api("cudaPointerGetAttributes", |rt| {
        // Registered memory by the program's address: the device reaches it at another.
        if let Some((start, r)) = crate::host_register::registered_at(rt, ptr as u64) {
            let at = r.device + (ptr as u64 - start);
            let device = rt.emu.current_device() as c_int;
            return unsafe {
                put(
                    attributes,
                    abi::PointerAttributes {
                        memory_type: abi::MEMORY_TYPE_HOST,
                        device,
                        device_pointer: at as *mut c_void,
                        host_pointer: ptr as *mut c_void,
                        reserved: [0; 8],
                    },
                )
            };
        }
        let (memory_type, device) = match find(rt, ptr as u64, 1) {
            Place::In(_, a) | Place::PastEnd(_, a) => (
                match a.kind {
                    AllocKind::Device => abi::MEMORY_TYPE_DEVICE,
                    AllocKind::PinnedHost | AllocKind::Registered => abi::MEMORY_TYPE_HOST,
                    AllocKind::Managed => abi::MEMORY_TYPE_MANAGED,
                },
                a.device as c_int,
            ),
            _ => (abi::MEMORY_TYPE_UNREGISTERED, -2),
        };
        let host = if memory_type == abi::MEMORY_TYPE_DEVICE
            || memory_type == abi::MEMORY_TYPE_UNREGISTERED
        {
            std::ptr::null_mut()
        } else {
            ptr as *mut c_void
        };
        let device_pointer = if memory_type == abi::MEMORY_TYPE_UNREGISTERED {
            std::ptr::null_mut()
        } else {
            ptr as *mut c_void
        };
        unsafe {
            put(
                attributes,
                abi::PointerAttributes {
                    memory_type,
                    device,
                    device_pointer,
                    host_pointer: host,
                    reserved: [0; 8],
                },
            )
        }
    })
}

/// A `__device__` or `__constant__` variable, by the address of its host shadow.
fn symbol(rt: &mut Runtime, host: *const c_void) -> ApiResult<(u64, usize, String)> {
    let Some(var) = rt.variables.get(&(host as usize)) else {
        return Err(Failure::host(
            errors::INVALID_SYMBOL,
            "invalid symbol",
            format!("{host:p} is not a __device__ or __constant__ variable of the program"),
        ));
    };
    let (fatbin, name) = (var.fatbin, var.name.clone());
    let module = crate::register::module(rt, fatbin)?;
    match rt.emu.symbol(&module, &name) {
        Some((ptr, size)) => Ok((ptr.0, size, name)),
        None => Err(Failure::host(
            errors::INVALID_SYMBOL,
            "invalid symbol",
            format!("the device code has no variable {name}"),
        )),
    }
}

fn symbol_range(
    rt: &mut Runtime,
    host: *const c_void,
    count: usize,
    offset: usize,
) -> ApiResult<u64> {
    let (ptr, size, name) = symbol(rt, host)?;
    if offset + count > size {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "copy past the end of a variable",
            format!(
                "{count} bytes at offset {offset} of {name}, which is {size} bytes: {} bytes past its end",
                offset + count - size
            ),
        ));
    }
    Ok(ptr + offset as u64)
}

/// Module variables are device memory the runtime did not allocate: their copies go straight
/// through the emulator's streams.
fn symbol_copy(
    rt: &mut Runtime,
    device: u64,
    host: u64,
    count: usize,
    to_device: bool,
    index: usize,
    wait: bool,
) -> ApiResult {
    let staging = rt.emu.alloc(count, "host memory");
    let result = (|| {
        if to_device {
            let source = match find(rt, host, count) {
                Place::In(_, a) if a.kind == AllocKind::Device => DevicePtr(host),
                _ => {
                    // SAFETY: the program hands `count` bytes to copy from.
                    let bytes = unsafe { std::slice::from_raw_parts(host as *const u8, count) };
                    rt.emu.write(staging, bytes).map_err(emu_failure)?;
                    staging
                }
            };
            device_copy(
                rt,
                DevicePtr(device),
                source,
                count,
                index,
                "the copy to a symbol",
            )
        } else {
            match find(rt, host, count) {
                Place::In(_, a) if a.kind == AllocKind::Device => device_copy(
                    rt,
                    DevicePtr(host),
                    DevicePtr(device),
                    count,
                    index,
                    "the copy from a symbol",
                ),
                _ => {
                    device_copy(
                        rt,
                        staging,
                        DevicePtr(device),
                        count,
                        index,
                        "the copy from a symbol",
                    )?;
                    // SAFETY: the program hands `count` bytes to copy into.
                    let out = unsafe { std::slice::from_raw_parts_mut(host as *mut u8, count) };
                    rt.emu.read(staging, out).map_err(emu_failure)
                }
            }
        }
    })();
    let _ = rt.emu.free(staging);
    result?;
    if wait {
        host_waits_for(rt, index)?;
    }
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    _kind: c_int,
) -> i32 {
    api("cudaMemcpyToSymbol", |rt| {
        let device = symbol_range(rt, symbol, count, offset)?;
        let index = stream_index(rt, 0)?;
        symbol_copy(rt, device, src as u64, count, true, index, true)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    count: usize,
    offset: usize,
    _kind: c_int,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemcpyToSymbolAsync", |rt| {
        let device = symbol_range(rt, symbol, count, offset)?;
        let index = stream_index(rt, stream as usize)?;
        symbol_copy(rt, device, src as u64, count, true, index, false)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    _kind: c_int,
) -> i32 {
    api("cudaMemcpyFromSymbol", |rt| {
        let device = symbol_range(rt, symbol, count, offset)?;
        let index = stream_index(rt, 0)?;
        symbol_copy(rt, device, dst as u64, count, false, index, true)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    count: usize,
    offset: usize,
    _kind: c_int,
    stream: *mut c_void,
) -> i32 {
    api("cudaMemcpyFromSymbolAsync", |rt| {
        let device = symbol_range(rt, symbol, count, offset)?;
        let index = stream_index(rt, stream as usize)?;
        symbol_copy(rt, device, dst as u64, count, false, index, false)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetSymbolAddress(ptr: *mut *mut c_void, symbol: *const c_void) -> i32 {
    api("cudaGetSymbolAddress", |rt| {
        let (p, _, _) = self::symbol(rt, symbol)?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> i32 {
    api("cudaGetSymbolSize", |rt| {
        let (_, s, _) = self::symbol(rt, symbol)?;
        unsafe { put(size, s) }
    })
}

/// The device's memory pool: one per device, whose allocations are `cudaMallocAsync`'s.
const MEM_POOL_HANDLE_BASE: usize = 0x7_0000;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetDefaultMemPool(pool: *mut *mut c_void, device: c_int) -> i32 {
    api("cudaDeviceGetDefaultMemPool", |rt| {
        if device < 0 || device as u32 >= rt.emu.device_count() {
            return Err(Failure::code(errors::INVALID_DEVICE));
        }
        unsafe {
            put(
                pool,
                (MEM_POOL_HANDLE_BASE + device as usize) as *mut c_void,
            )
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetMemPool(pool: *mut *mut c_void, device: c_int) -> i32 {
    unsafe { cudaDeviceGetDefaultMemPool(pool, device) }
}

/// A pool's attributes (release threshold, reuse policies) change when memory goes back to
/// the system, never what a program computes: they are accepted and reported as zero.
#[unsafe(no_mangle)]
pub extern "C" fn cudaMemPoolSetAttribute(
    _pool: *mut c_void,
    _attribute: c_int,
    _value: *mut c_void,
) -> i32 {
    api("cudaMemPoolSetAttribute", |_| Ok(()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMemPoolGetAttribute(
    _pool: *mut c_void,
    _attribute: c_int,
    value: *mut c_void,
) -> i32 {
    api("cudaMemPoolGetAttribute", |_| unsafe {
        put(value as *mut u64, 0)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaMemPoolTrimTo(_pool: *mut c_void, _keep: usize) -> i32 {
    api("cudaMemPoolTrimTo", |_| Ok(()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaMallocFromPoolAsync(
    ptr: *mut *mut c_void,
    size: usize,
    _pool: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    api("cudaMallocFromPoolAsync", |rt| {
        stream_index(rt, stream as usize)?;
        let p = device_malloc(rt, size, "cudaMallocFromPoolAsync")?;
        unsafe { put(ptr, p as *mut c_void) }
    })
}
