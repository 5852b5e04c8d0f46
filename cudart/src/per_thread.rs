//! The entry points of a program built with `nvcc --default-stream per-thread`: each is the
//! call of the same name without `_ptsz`/`_ptds`, with stream 0 meaning the calling thread's
//! default stream rather than the legacy one (see `streams::with_per_thread_default`).

use std::ffi::{c_int, c_uint, c_void};

macro_rules! per_thread_default_stream {
    ($($name:ident => $regular:path, ( $($arg:ident : $ty:ty),* );)*) => {
        $(
            #[unsafe(no_mangle)]
            #[allow(clippy::too_many_arguments)]
            /// # Safety
            /// As the call of the same name without the suffix.
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> i32 {
                // SAFETY: the program passes what the regular entry point takes (some of which
                // are safe functions, hence the allowance).
                #[allow(unused_unsafe)]
                crate::streams::with_per_thread_default(|| unsafe { $regular($($arg),*) })
            }
        )*
    };
}

per_thread_default_stream! {
    cudaEventRecordWithFlags_ptsz => crate::streams::cudaEventRecordWithFlags, (event: *mut c_void, stream: *mut c_void, flags: c_uint);
    cudaEventRecord_ptsz => crate::streams::cudaEventRecord, (event: *mut c_void, stream: *mut c_void);
    cudaFreeAsync_ptsz => crate::memory::cudaFreeAsync, (ptr: *mut c_void, stream: *mut c_void);
    cudaGraphLaunch_ptsz => crate::graphs::cudaGraphLaunch, (exec: *mut c_void, stream: *mut c_void);
    cudaGraphUpload_ptsz => crate::graphs::cudaGraphUpload, (exec: *mut c_void, stream: *mut c_void);
    cudaLaunchCooperativeKernel_ptsz => crate::launch::cudaLaunchCooperativeKernel, (function: *const c_void, grid: crate::abi::Dim3, block: crate::abi::Dim3, args: *mut *mut c_void, shared: usize, stream: *mut c_void);
    cudaLaunchHostFunc_ptsz => crate::streams::cudaLaunchHostFunc, (stream: *mut c_void, function: Option<crate::streams::HostFn>, user: *mut c_void);
    cudaLaunchKernelExC_ptsz => crate::launch::cudaLaunchKernelExC, (config: *const crate::abi::LaunchConfigEx, function: *const c_void, args: *mut *mut c_void);
    cudaLaunchKernel_ptsz => crate::launch::cudaLaunchKernel, (function: *const c_void, grid: crate::abi::Dim3, block: crate::abi::Dim3, args: *mut *mut c_void, shared: usize, stream: *mut c_void);
    cudaMallocAsync_ptsz => crate::memory::cudaMallocAsync, (ptr: *mut *mut c_void, size: usize, stream: *mut c_void);
    cudaMallocFromPoolAsync_ptsz => crate::memory::cudaMallocFromPoolAsync, (ptr: *mut *mut c_void, size: usize, pool: *mut c_void, stream: *mut c_void);
    cudaMemPrefetchAsync_ptsz => crate::memory::cudaMemPrefetchAsync, (ptr: *const c_void, count: usize, location: crate::abi::MemLocation, flags: c_uint, stream: *mut c_void);
    cudaMemcpy2DAsync_ptsz => crate::memory::cudaMemcpy2DAsync, (dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int, stream: *mut c_void);
    cudaMemcpy2D_ptds => crate::memory::cudaMemcpy2D, (dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: c_int);
    cudaMemcpyAsync_ptsz => crate::memory::cudaMemcpyAsync, (dst: *mut c_void, src: *const c_void, count: usize, kind: c_int, stream: *mut c_void);
    cudaMemcpyFromSymbolAsync_ptsz => crate::memory::cudaMemcpyFromSymbolAsync, (dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int, stream: *mut c_void);
    cudaMemcpyFromSymbol_ptds => crate::memory::cudaMemcpyFromSymbol, (dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int);
    cudaMemcpyToSymbolAsync_ptsz => crate::memory::cudaMemcpyToSymbolAsync, (symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int, stream: *mut c_void);
    cudaMemcpyToSymbol_ptds => crate::memory::cudaMemcpyToSymbol, (symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int);
    cudaMemcpy_ptds => crate::memory::cudaMemcpy, (dst: *mut c_void, src: *const c_void, count: usize, kind: c_int);
    cudaMemset2D_ptds => crate::memory::cudaMemset2D, (ptr: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize);
    cudaMemsetAsync_ptsz => crate::memory::cudaMemsetAsync, (ptr: *mut c_void, value: c_int, count: usize, stream: *mut c_void);
    cudaMemset_ptds => crate::memory::cudaMemset, (ptr: *mut c_void, value: c_int, count: usize);
    cudaStreamAddCallback_ptsz => crate::streams::cudaStreamAddCallback, (stream: *mut c_void, callback: Option<crate::streams::StreamCallback>, user: *mut c_void, flags: c_uint);
    cudaStreamBeginCaptureToGraph_ptsz => crate::graphs::cudaStreamBeginCaptureToGraph, (stream: *mut c_void, graph: *mut c_void, dependencies: *const *mut c_void, edges: *const c_void, count: usize, mode: c_int);
    cudaStreamBeginCapture_ptsz => crate::graphs::cudaStreamBeginCapture, (stream: *mut c_void, mode: c_int);
    cudaStreamEndCapture_ptsz => crate::graphs::cudaStreamEndCapture, (stream: *mut c_void, graph: *mut *mut c_void);
    cudaStreamGetCaptureInfo_ptsz => crate::graphs::cudaStreamGetCaptureInfo, (stream: *mut c_void, status: *mut c_int, id: *mut u64, graph: *mut *mut c_void, dependencies: *mut *const *mut c_void, edges: *mut *const c_void, count: *mut usize);
    cudaStreamGetDevice_ptsz => crate::streams::cudaStreamGetDevice, (stream: *mut c_void, device: *mut c_int);
    cudaStreamGetFlags_ptsz => crate::streams::cudaStreamGetFlags, (stream: *mut c_void, flags: *mut c_uint);
    cudaStreamGetId_ptsz => crate::streams::cudaStreamGetId, (stream: *mut c_void, id: *mut u64);
    cudaStreamGetPriority_ptsz => crate::streams::cudaStreamGetPriority, (stream: *mut c_void, priority: *mut c_int);
    cudaStreamIsCapturing_ptsz => crate::graphs::cudaStreamIsCapturing, (stream: *mut c_void, status: *mut c_int);
    cudaStreamQuery_ptsz => crate::streams::cudaStreamQuery, (stream: *mut c_void);
    cudaStreamSynchronize_ptsz => crate::streams::cudaStreamSynchronize, (stream: *mut c_void);
    cudaStreamUpdateCaptureDependencies_ptsz => crate::graphs::cudaStreamUpdateCaptureDependencies, (stream: *mut c_void, dependencies: *const *mut c_void, edges: *const c_void, count: usize, flags: c_uint);
    cudaStreamWaitEvent_ptsz => crate::streams::cudaStreamWaitEvent, (stream: *mut c_void, event: *mut c_void, flags: c_uint);
}
