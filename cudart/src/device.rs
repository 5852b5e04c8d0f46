//! The emulated device and the calls about it: its properties (an H100's limits, named as the
//! emulator), the device count and choice, synchronization, errors, limits, function
//! attributes and occupancy.

use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::abi;
use crate::errors;
use crate::runtime::{ApiResult, Failure, Runtime, api, put, query};
use crate::streams::host_waits_for_all;

/// An H100 80GB HBM3's `totalGlobalMem`, as its driver reports it.
pub const TOTAL_MEMORY: usize = 85_017_493_504;
pub const DEVICE_NAME: &str = "Racetrack emulator (sm_90, an H100's limits)";
// The residency limits live in the emulator, which every face's cooperative launch checks too.
pub use ptx_emu::occupancy::{
    BLOCKS_PER_SM, RESERVED_SHARED_PER_BLOCK, SHARED_PER_SM, SM_COUNT, THREADS_PER_SM,
    blocks_per_sm,
};

fn check_device(rt: &Runtime, device: c_int) -> ApiResult<u32> {
    if device < 0 || device as u32 >= rt.emu.device_count() {
        return Err(Failure::code(errors::INVALID_DEVICE));
    }
    Ok(device as u32)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetDeviceCount(count: *mut c_int) -> i32 {
    api("cudaGetDeviceCount", |rt| unsafe {
        put(count, rt.emu.device_count() as c_int)
    })
}

thread_local! {
    /// The device this host thread set: CUDA's current device is a thread's, and a new thread
    /// starts on device 0 (cudaOpenMP's threads each set their own).
    static THREAD_DEVICE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// At the start of every runtime call: the emulator's current device is the calling thread's.
pub fn enter_thread(rt: &mut Runtime) {
    let device = THREAD_DEVICE.get();
    if rt.emu.current_device() != device {
        let _ = rt.emu.set_device(device);
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaSetDevice(device: c_int) -> i32 {
    api("cudaSetDevice", |rt| {
        let d = check_device(rt, device)?;
        rt.emu.set_device(d).map_err(crate::streams::emu_failure)?;
        THREAD_DEVICE.set(d);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetDevice(device: *mut c_int) -> i32 {
    api("cudaGetDevice", |rt| unsafe {
        put(device, rt.emu.current_device() as c_int)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaSetDeviceFlags(_flags: c_uint) -> i32 {
    api("cudaSetDeviceFlags", |_| Ok(()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetDeviceFlags(flags: *mut c_uint) -> i32 {
    api("cudaGetDeviceFlags", |_| unsafe { put(flags, 0) })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaInitDevice(device: c_int, _flags: c_uint, _more: c_uint) -> i32 {
    api("cudaInitDevice", |rt| check_device(rt, device).map(|_| ()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaChooseDevice(device: *mut c_int, _prop: *const c_void) -> i32 {
    api("cudaChooseDevice", |_| unsafe { put(device, 0) })
}

fn properties() -> abi::DeviceProp {
    // SAFETY: every field of the C struct is an integer or a char array: all-zero is valid.
    let mut p: abi::DeviceProp = unsafe { std::mem::zeroed() };
    for (slot, byte) in p.name.iter_mut().zip(DEVICE_NAME.bytes()) {
        *slot = byte as c_char;
    }
    p.total_global_mem = TOTAL_MEMORY;
    p.shared_mem_per_block = crate::launch::MAX_SHARED;
    p.regs_per_block = 65536;
    p.warp_size = 32;
    p.mem_pitch = i32::MAX as usize;
    p.max_threads_per_block = 1024;
    p.max_threads_dim = [1024, 1024, 64];
    p.max_grid_size = [i32::MAX, 65535, 65535];
    p.total_const_mem = 65536;
    p.major = 9;
    p.minor = 0;
    p.texture_alignment = 512;
    p.texture_pitch_alignment = 32;
    p.multi_processor_count = SM_COUNT as c_int;
    p.can_map_host_memory = 1;
    p.surface_alignment = 512;
    p.concurrent_kernels = 1;
    p.async_engine_count = 3;
    p.unified_addressing = 1;
    p.memory_bus_width = 5120;
    p.l2_cache_size = 50 << 20;
    p.max_threads_per_multi_processor = THREADS_PER_SM as c_int;
    p.stream_priorities_supported = 1;
    p.global_l1_cache_supported = 1;
    p.local_l1_cache_supported = 1;
    p.shared_mem_per_multiprocessor = SHARED_PER_SM;
    p.regs_per_multiprocessor = 65536;
    p.managed_memory = 1;
    p.concurrent_managed_access = 1;
    p.compute_preemption_supported = 1;
    p.cooperative_launch = 1;
    p.shared_mem_per_block_optin = 227 * 1024;
    p.max_blocks_per_multi_processor = BLOCKS_PER_SM as c_int;
    p.reserved_shared_mem_per_block = 1024;
    p
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetDeviceProperties(prop: *mut abi::DeviceProp, device: c_int) -> i32 {
    api("cudaGetDeviceProperties", |rt| {
        check_device(rt, device)?;
        unsafe { put(prop, properties()) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGetDeviceProperties_v2(
    prop: *mut abi::DeviceProp,
    device: c_int,
) -> i32 {
    unsafe { cudaGetDeviceProperties(prop, device) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetAttribute(
    value: *mut c_int,
    attribute: c_int,
    device: c_int,
) -> i32 {
    api("cudaDeviceGetAttribute", |rt| {
        check_device(rt, device)?;
        let p = properties();
        let v = match attribute {
            1 => p.max_threads_per_block,
            2..=4 => p.max_threads_dim[(attribute - 2) as usize],
            5..=7 => p.max_grid_size[(attribute - 5) as usize],
            8 => p.shared_mem_per_block as c_int,
            9 => p.total_const_mem as c_int,
            10 => 32,
            11 => p.mem_pitch as c_int,
            12 | 82 => 65536,
            13 => 1_980_000,
            14 => 512,
            15 | 31 | 41 | 19 | 83 | 89 | 95 | 78 | 79 | 80 | 90 | 115 => 1,
            16 => p.multi_processor_count,
            36 => 2_619_000,
            37 => p.memory_bus_width,
            38 => p.l2_cache_size,
            39 => p.max_threads_per_multi_processor,
            40 => p.async_engine_count,
            75 => p.major,
            76 => p.minor,
            81 => p.shared_mem_per_multiprocessor as c_int,
            97 => p.shared_mem_per_block_optin as c_int,
            106 => p.max_blocks_per_multi_processor,
            111 => 1024,
            _ => 0,
        };
        unsafe { put(value, v) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceSynchronize() -> i32 {
    api("cudaDeviceSynchronize", |rt| {
        host_waits_for_all(rt);
        sticky(rt)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaThreadSynchronize() -> i32 {
    cudaDeviceSynchronize()
}

/// A launch that failed an assert or stopped returns its error from the host's next wait.
fn sticky(rt: &Runtime) -> ApiResult {
    if rt.sticky != errors::SUCCESS {
        return Err(Failure::code(rt.sticky));
    }
    Ok(())
}

/// A reset frees the device's memory and clears a sticky error.
#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceReset() -> i32 {
    let code = query(errors::SUCCESS, |rt| {
        host_waits_for_all(rt);
        rt.sticky = errors::SUCCESS;
        rt.last_error = errors::SUCCESS;
        errors::SUCCESS
    });
    if code != errors::SUCCESS {
        return code;
    }
    api("cudaDeviceReset", |_| Ok(()))
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaGetLastError() -> i32 {
    query(errors::UNKNOWN, |rt| {
        let e = rt.last_error;
        if rt.sticky == errors::SUCCESS {
            rt.last_error = errors::SUCCESS;
        }
        if rt.sticky != errors::SUCCESS {
            rt.sticky
        } else {
            e
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaPeekAtLastError() -> i32 {
    query(errors::UNKNOWN, |rt| {
        if rt.sticky != errors::SUCCESS {
            rt.sticky
        } else {
            rt.last_error
        }
    })
}

fn c_string(text: &str) -> *const c_char {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static STRINGS: Mutex<Option<HashMap<String, &'static std::ffi::CStr>>> = Mutex::new(None);
    let mut guard = STRINGS.lock().unwrap_or_else(|p| p.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    let s = map.entry(text.to_string()).or_insert_with(|| {
        let owned = std::ffi::CString::new(text).unwrap_or_default();
        Box::leak(owned.into_boxed_c_str())
    });
    s.as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaGetErrorString(error: c_int) -> *const c_char {
    c_string(errors::name_and_message(error).1)
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaGetErrorName(error: c_int) -> *const c_char {
    c_string(errors::name_and_message(error).0)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDriverGetVersion(version: *mut c_int) -> i32 {
    api("cudaDriverGetVersion", |_| unsafe { put(version, 13000) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaRuntimeGetVersion(version: *mut c_int) -> i32 {
    api("cudaRuntimeGetVersion", |_| unsafe { put(version, 13000) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceCanAccessPeer(
    can: *mut c_int,
    device: c_int,
    peer: c_int,
) -> i32 {
    api("cudaDeviceCanAccessPeer", |rt| {
        let (d, p) = (check_device(rt, device)?, check_device(rt, peer)?);
        unsafe { put(can, (d != p) as c_int) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceEnablePeerAccess(peer: c_int, _flags: c_uint) -> i32 {
    api("cudaDeviceEnablePeerAccess", |rt| {
        let p = check_device(rt, peer)?;
        let from = rt.emu.current_device();
        if rt.emu.peer_access_enabled(from, p) {
            return Err(Failure::code(errors::PEER_ACCESS_ALREADY_ENABLED));
        }
        rt.emu
            .enable_peer_access(p)
            .map_err(crate::streams::emu_failure)
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceDisablePeerAccess(peer: c_int) -> i32 {
    api("cudaDeviceDisablePeerAccess", |rt| {
        check_device(rt, peer)?;
        Err(Failure::host(
            errors::NOT_SUPPORTED,
            "not supported by Racetrack's runtime",
            "cudaDeviceDisablePeerAccess: the emulator keeps peer access once enabled".to_string(),
        ))
    })
}

/// `cudaLimitMallocHeapSize` (2) sizes the device heap; every limit is kept for
/// `cudaDeviceGetLimit`. The emulator does not enforce the device runtime's pending-launch
/// count (4): a kernel's launches wait in a queue of any length.
#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceSetLimit(limit: c_int, value: usize) -> i32 {
    api("cudaDeviceSetLimit", |rt| {
        if limit == 2 {
            rt.emu.set_heap_limit(value as u64);
        }
        rt.limits.insert(limit, value);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetLimit(value: *mut usize, limit: c_int) -> i32 {
    api("cudaDeviceGetLimit", |rt| {
        // CUDA's defaults: stack, printf FIFO, heap, device-runtime sync depth, pending launches.
        let default = match limit {
            0 => 1024,
            1 => 8_650_752,
            2 => ptx_emu::DEFAULT_HEAP_BYTES as usize,
            3 => 2,
            4 => 2048,
            _ => 0,
        };
        let v = rt.limits.get(&limit).copied().unwrap_or(default);
        unsafe { put(value, v) }
    })
}

/// The greatest (most urgent) stream priority, as an H100's `cudaDeviceGetStreamPriorityRange`
/// gives it; the least is 0.
pub const GREATEST_STREAM_PRIORITY: i32 = -5;

/// Kept for `cudaDeviceGetCacheConfig`; the split between L1 and shared memory changes nothing
/// the emulator checks.
#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceSetCacheConfig(config: c_int) -> i32 {
    api("cudaDeviceSetCacheConfig", |rt| {
        if !(0..=3).contains(&config) {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        rt.cache_config = config;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetCacheConfig(config: *mut c_int) -> i32 {
    api("cudaDeviceGetCacheConfig", |rt| unsafe {
        put(config, rt.cache_config)
    })
}

/// Shared memory banks are four bytes wide on every GPU CUDA 13 runs on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetSharedMemConfig(config: *mut c_int) -> i32 {
    api("cudaDeviceGetSharedMemConfig", |_| unsafe {
        put(config, SHARED_MEM_BANK_SIZE_FOUR_BYTE)
    })
}

const SHARED_MEM_BANK_SIZE_FOUR_BYTE: c_int = 1;

#[unsafe(no_mangle)]
pub extern "C" fn cudaFuncSetSharedMemConfig(_function: *const c_void, _config: c_int) -> i32 {
    api("cudaFuncSetSharedMemConfig", |_| Ok(()))
}

/// `cudaChannelFormatDesc`: the bits of each of a texel's four channels, and their kind.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub kind: c_int,
}

/// Only builds the description: CUDA arrays and textures are not emulated yet, and the calls
/// that take one say so (`not_emulated.rs`).
#[unsafe(no_mangle)]
pub extern "C" fn cudaCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    kind: c_int,
) -> ChannelFormatDesc {
    ChannelFormatDesc { x, y, z, w, kind }
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceSetSharedMemConfig(_config: c_int) -> i32 {
    api("cudaDeviceSetSharedMemConfig", |_| Ok(()))
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaFuncSetCacheConfig(_function: *const c_void, _config: c_int) -> i32 {
    api("cudaFuncSetCacheConfig", |_| Ok(()))
}

/// `cudaFuncAttributeMaxDynamicSharedMemorySize` (8) lets a kernel's launches ask for more
/// dynamic shared memory; the other attributes are hints the emulator has no use for.
#[unsafe(no_mangle)]
pub extern "C" fn cudaFuncSetAttribute(
    function: *const c_void,
    attribute: c_int,
    value: c_int,
) -> i32 {
    api("cudaFuncSetAttribute", |rt| {
        let Some(f) = rt.functions.get_mut(&(function as usize)) else {
            return Err(Failure::code(errors::INVALID_DEVICE_FUNCTION));
        };
        if attribute == 8 {
            if value < 0 || value as usize > crate::launch::OPT_IN_SHARED {
                return Err(Failure::code(errors::INVALID_VALUE));
            }
            f.max_dynamic_shared = value as usize;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetStreamPriorityRange(
    least: *mut c_int,
    greatest: *mut c_int,
) -> i32 {
    api("cudaDeviceGetStreamPriorityRange", |_| unsafe {
        if !least.is_null() {
            put(least, 0)?;
        }
        if !greatest.is_null() {
            put(greatest, GREATEST_STREAM_PRIORITY)?;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaFuncGetAttributes(
    attributes: *mut abi::FuncAttributes,
    function: *const c_void,
) -> i32 {
    api("cudaFuncGetAttributes", |rt| {
        let key = function as usize;
        let Some(f) = rt.functions.get(&key) else {
            return Err(Failure::code(errors::INVALID_DEVICE_FUNCTION));
        };
        let ptx_version = crate::register::ptx_version(rt, f) as c_int;
        let needs = crate::resources::of(rt, key);
        // SAFETY: all-zero is a valid value of this C struct of integers.
        let mut a: abi::FuncAttributes = unsafe { std::mem::zeroed() };
        a.max_threads_per_block = needs.max_threads_per_block() as c_int;
        // Unknown without ptxas: 32, a common count, rather than a 0 no kernel has.
        a.num_regs = needs.registers().unwrap_or(32) as c_int;
        a.shared_size_bytes = needs.static_shared();
        a.local_size_bytes = needs.counted.map_or(0, |c| c.stack as usize);
        a.ptx_version = ptx_version;
        // The driver compiles that PTX for the device itself.
        a.binary_version = crate::register::EMULATED_ARCH as c_int;
        a.max_dynamic_shared_size_bytes = needs.max_dynamic_shared() as c_int;
        a.preferred_shmem_carveout = -1;
        unsafe { put(attributes, a) }
    })
}

/// Blocks of `block_size` threads with `shared` bytes of dynamic shared memory that one SM
/// holds at once, by threads, shared memory (the kernel's own with it) and registers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut c_int,
    function: *const c_void,
    block_size: c_int,
    shared: usize,
) -> i32 {
    api("cudaOccupancyMaxActiveBlocksPerMultiprocessor", |rt| {
        let needs = crate::resources::of_kernel(rt, function as usize)?;
        let n = blocks_per_sm(
            [block_size.max(1) as u32, 1, 1],
            shared + needs.static_shared(),
            needs.registers(),
        );
        unsafe { put(blocks, n as c_int) }
    })
}

/// The most dynamic shared memory each of `num_blocks` blocks of `block_size` threads may ask
/// for with all of them resident on one SM: 0 when that many do not fit whatever they ask.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaOccupancyAvailableDynamicSMemPerBlock(
    bytes: *mut usize,
    function: *const c_void,
    num_blocks: c_int,
    block_size: c_int,
) -> i32 {
    api("cudaOccupancyAvailableDynamicSMemPerBlock", |rt| {
        let needs = crate::resources::of_kernel(rt, function as usize)?;
        if num_blocks <= 0 || block_size <= 0 {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        let static_shared = needs.static_shared();
        let fit = blocks_per_sm([block_size as u32, 1, 1], static_shared, needs.registers());
        // A GPU refuses a count of blocks that cannot be resident together whatever they
        // ask, and never offers more than the kernel may ask for (48 KiB with its static
        // shared memory, unless it opted in to more), as an H100 answered.
        if fit < num_blocks as u64 {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        let available = (SHARED_PER_SM / num_blocks as usize)
            .saturating_sub(RESERVED_SHARED_PER_BLOCK + static_shared)
            .min(needs.max_dynamic_shared());
        unsafe { put(bytes, available) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut c_int,
    function: *const c_void,
    block_size: c_int,
    shared: usize,
    _flags: c_uint,
) -> i32 {
    unsafe { cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, function, block_size, shared) }
}

/// A profiler's range: nothing to do on the emulator.
#[unsafe(no_mangle)]
pub extern "C" fn cudaProfilerStart() -> i32 {
    api("cudaProfilerStart", |_| Ok(()))
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaProfilerStop() -> i32 {
    api("cudaProfilerStop", |_| Ok(()))
}
