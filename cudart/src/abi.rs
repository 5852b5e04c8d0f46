//! The runtime API's C types, laid out as CUDA 13.0's headers declare them.

use std::ffi::{c_char, c_int, c_uint, c_void};

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

impl Dim3 {
    pub fn array(self) -> [u32; 3] {
        [self.x, self.y, self.z]
    }
}

/// `cudaMemcpyKind`.
pub const MEMCPY_HOST_TO_HOST: c_int = 0;
pub const MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const MEMCPY_DEVICE_TO_HOST: c_int = 2;
pub const MEMCPY_DEVICE_TO_DEVICE: c_int = 3;
pub const MEMCPY_DEFAULT: c_int = 4;

/// `cudaStreamNonBlocking`: a stream that does not wait for the legacy default stream.
pub const STREAM_NON_BLOCKING: c_uint = 1;
/// The handles CUDA reserves: `cudaStreamLegacy` and `cudaStreamPerThread`.
pub const STREAM_LEGACY: usize = 1;
pub const STREAM_PER_THREAD: usize = 2;

/// `cudaEventDisableTiming`.
pub const EVENT_DISABLE_TIMING: c_uint = 2;

/// `cudaMemoryType`.
pub const MEMORY_TYPE_UNREGISTERED: c_int = 0;
pub const MEMORY_TYPE_HOST: c_int = 1;
pub const MEMORY_TYPE_DEVICE: c_int = 2;
pub const MEMORY_TYPE_MANAGED: c_int = 3;

/// `__fatBinC_Wrapper_t`'s magic.
pub const FATBIN_WRAPPER_MAGIC: c_int = 0x466243b1;

#[repr(C)]
#[derive(Debug)]
pub struct DeviceProp {
    pub name: [c_char; 256],
    pub uuid: [c_char; 16],
    pub luid: [c_char; 8],
    pub luid_device_node_mask: c_uint,
    pub total_global_mem: usize,
    pub shared_mem_per_block: usize,
    pub regs_per_block: c_int,
    pub warp_size: c_int,
    pub mem_pitch: usize,
    pub max_threads_per_block: c_int,
    pub max_threads_dim: [c_int; 3],
    pub max_grid_size: [c_int; 3],
    pub total_const_mem: usize,
    pub major: c_int,
    pub minor: c_int,
    pub texture_alignment: usize,
    pub texture_pitch_alignment: usize,
    pub multi_processor_count: c_int,
    pub integrated: c_int,
    pub can_map_host_memory: c_int,
    /// `maxTexture1D` through `maxSurfaceCubemapLayered`: 39 ints the emulator has no use for.
    pub textures: [c_int; 39],
    pub surface_alignment: usize,
    pub concurrent_kernels: c_int,
    pub ecc_enabled: c_int,
    pub pci_bus_id: c_int,
    pub pci_device_id: c_int,
    pub pci_domain_id: c_int,
    pub tcc_driver: c_int,
    pub async_engine_count: c_int,
    pub unified_addressing: c_int,
    pub memory_bus_width: c_int,
    pub l2_cache_size: c_int,
    pub persisting_l2_cache_max_size: c_int,
    pub max_threads_per_multi_processor: c_int,
    pub stream_priorities_supported: c_int,
    pub global_l1_cache_supported: c_int,
    pub local_l1_cache_supported: c_int,
    pub shared_mem_per_multiprocessor: usize,
    pub regs_per_multiprocessor: c_int,
    pub managed_memory: c_int,
    pub is_multi_gpu_board: c_int,
    pub multi_gpu_board_group_id: c_int,
    pub host_native_atomic_supported: c_int,
    pub pageable_memory_access: c_int,
    pub concurrent_managed_access: c_int,
    pub compute_preemption_supported: c_int,
    pub can_use_host_pointer_for_registered_mem: c_int,
    pub cooperative_launch: c_int,
    pub shared_mem_per_block_optin: usize,
    pub pageable_memory_access_uses_host_page_tables: c_int,
    pub direct_managed_mem_access_from_host: c_int,
    pub max_blocks_per_multi_processor: c_int,
    pub access_policy_max_window_size: c_int,
    pub reserved_shared_mem_per_block: usize,
    /// `hostRegisterSupported` through `hostNumaMultinodeIpcSupported`, then `reserved[56]`.
    pub rest: [c_int; 20 + 56],
}

#[repr(C)]
#[derive(Debug)]
pub struct FuncAttributes {
    pub shared_size_bytes: usize,
    pub const_size_bytes: usize,
    pub local_size_bytes: usize,
    pub max_threads_per_block: c_int,
    pub num_regs: c_int,
    pub ptx_version: c_int,
    pub binary_version: c_int,
    pub cache_mode_ca: c_int,
    pub max_dynamic_shared_size_bytes: c_int,
    pub preferred_shmem_carveout: c_int,
    pub rest: [c_int; 7 + 16],
}

#[repr(C)]
#[derive(Debug)]
pub struct PointerAttributes {
    pub memory_type: c_int,
    pub device: c_int,
    pub device_pointer: *mut c_void,
    pub host_pointer: *mut c_void,
    pub reserved: [std::ffi::c_long; 8],
}

/// `cudaMemLocation`: where managed memory should live (a hint the emulator has no use for).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MemLocation {
    pub kind: c_int,
    pub id: c_int,
}

/// `cudaKernelNodeParams`.
#[repr(C)]
#[derive(Debug)]
pub struct KernelNodeParams {
    pub func: *mut c_void,
    pub grid_dim: Dim3,
    pub block_dim: Dim3,
    pub shared_mem_bytes: c_uint,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Pos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Extent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// `cudaMemcpy3DParms`.
#[repr(C)]
#[derive(Debug)]
pub struct Memcpy3DParms {
    pub src_array: *mut c_void,
    pub src_pos: Pos,
    pub src_ptr: PitchedPtr,
    pub dst_array: *mut c_void,
    pub dst_pos: Pos,
    pub dst_ptr: PitchedPtr,
    pub extent: Extent,
    pub kind: c_int,
}

/// `cudaMemsetParams`.
#[repr(C)]
#[derive(Debug)]
pub struct MemsetParams {
    pub dst: *mut c_void,
    pub pitch: usize,
    pub value: c_uint,
    pub element_size: c_uint,
    pub width: usize,
    pub height: usize,
}

/// `cudaHostNodeParams`.
#[repr(C)]
#[derive(Debug)]
pub struct HostNodeParams {
    pub function: Option<unsafe extern "C" fn(*mut c_void)>,
    pub user_data: *mut c_void,
}

/// `cudaLaunchConfig_t`: the launch of `cudaLaunchKernelExC`.
#[repr(C)]
#[derive(Debug)]
pub struct LaunchConfigEx {
    pub grid_dim: Dim3,
    pub block_dim: Dim3,
    pub dynamic_smem_bytes: usize,
    pub stream: *mut c_void,
    pub attrs: *mut c_void,
    pub num_attrs: c_uint,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes from CUDA 13.0's `driver_types.h`, where `sizeof` of each is fixed by the ABI.
    #[test]
    fn structs_have_the_headers_sizes() {
        assert_eq!(std::mem::size_of::<DeviceProp>(), 1008);
        assert_eq!(std::mem::offset_of!(DeviceProp, total_global_mem), 288);
        assert_eq!(std::mem::offset_of!(DeviceProp, multi_processor_count), 384);
        assert_eq!(std::mem::offset_of!(DeviceProp, surface_alignment), 552);
        assert_eq!(
            std::mem::offset_of!(DeviceProp, reserved_shared_mem_per_block),
            696
        );
        assert_eq!(std::mem::size_of::<LaunchConfigEx>(), 56);
        assert_eq!(std::mem::size_of::<KernelNodeParams>(), 56);
        assert_eq!(std::mem::size_of::<Memcpy3DParms>(), 160);
        assert_eq!(std::mem::size_of::<MemsetParams>(), 40);
        assert_eq!(std::mem::size_of::<FuncAttributes>(), 144);
        assert_eq!(std::mem::size_of::<PointerAttributes>(), 88);
    }
}
