//! The runtime API calls Racetrack's runtime does not carry yet. Each is still there, as an
//! entry point of NVIDIA's name and version, so that a program which calls one hears which call
//! and at which line, and gets `cudaErrorNotSupported` to handle as its own error checks do,
//! instead of the dynamic linker ending it mid-line with its stdout unflushed. `racetrack run`
//! names them before the run from the `racetrack_not_emulated_*` marker each one also exports.

use crate::errors;
use crate::runtime::{Failure, api};

/// The first call of each: a program in a loop hears of it once.
static NAMED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

/// What each group of calls is, in the line that names the call.
const ARRAYS: &str = "CUDA arrays, textures and surfaces";
const GRAPHICS: &str = "graphics interop (OpenGL, EGL, VDPAU)";
const IPC: &str = "memory and events shared between processes (CUDA IPC)";
const EXTERNAL: &str = "external memory and semaphores (Vulkan, NvSci)";
const GRAPHS: &str = "this part of the graph API (Racetrack builds graphs by capture and by adding kernel, memcpy, memset, host, child, empty, memory and conditional nodes)";
const DRIVER: &str = "the driver API and CUDA libraries loaded at run time";
const POOLS: &str =
    "memory pools made by the program (the device's default pool and cudaMallocAsync are there)";
const COPIES: &str = "3D and batched copies and memsets";
const OTHER: &str = "this call";

/// The call `name` of `what`: one line naming it and its place, then `cudaErrorNotSupported`.
fn not_emulated(name: &'static str, what: &'static str) -> i32 {
    api(name, |rt| {
        let mut named = NAMED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !named.contains(&name) {
            named.push(name);
            let place = rt.place(rt.call_site);
            let what = if what == OTHER {
                String::new()
            } else {
                format!(" ({what})")
            };
            rt.out.say(&format!(
                "{name} at {place} is not emulated yet{what}: it did nothing and returned cudaErrorNotSupported"
            ));
        }
        Err(Failure::code(errors::NOT_SUPPORTED))
    })
}

macro_rules! not_emulated {
    ($($what:ident => [$($name:ident),* $(,)?];)*) => {
        $($(
            // The arguments are left where the caller put them: a C caller pops its own, and
            // every call here returns cudaError_t.
            #[unsafe(no_mangle)]
            pub extern "C" fn $name() -> i32 {
                not_emulated(stringify!($name), $what)
            }
            const _: () = {
                #[unsafe(export_name = concat!("racetrack_not_emulated_", stringify!($name)))]
                extern "C" fn marker() {}
            };
        )*)*
    };
}

not_emulated! {
    ARRAYS => [
        cudaArrayGetInfo,
        cudaArrayGetMemoryRequirements,
        cudaArrayGetPlane,
        cudaArrayGetSparseProperties,
        cudaCreateSurfaceObject,
        cudaCreateTextureObject,
        cudaDestroySurfaceObject,
        cudaDestroyTextureObject,
        cudaDeviceGetTexture1DLinearMaxWidth,
        cudaExternalMemoryGetMappedMipmappedArray,
        cudaFreeArray,
        cudaFreeMipmappedArray,
        cudaGetChannelDesc,
        cudaGetMipmappedArrayLevel,
        cudaGetSurfaceObjectResourceDesc,
        cudaGetTextureObjectResourceDesc,
        cudaGetTextureObjectResourceViewDesc,
        cudaGetTextureObjectTextureDesc,
        cudaMalloc3DArray,
        cudaMallocArray,
        cudaMallocMipmappedArray,
        cudaMemcpy2DArrayToArray,
        cudaMemcpy2DArrayToArray_ptds,
        cudaMemcpy2DFromArray,
        cudaMemcpy2DFromArrayAsync,
        cudaMemcpy2DFromArrayAsync_ptsz,
        cudaMemcpy2DFromArray_ptds,
        cudaMemcpy2DToArray,
        cudaMemcpy2DToArrayAsync,
        cudaMemcpy2DToArrayAsync_ptsz,
        cudaMemcpy2DToArray_ptds,
        cudaMemcpyArrayToArray,
        cudaMemcpyArrayToArray_ptds,
        cudaMemcpyFromArray,
        cudaMemcpyFromArrayAsync,
        cudaMemcpyFromArrayAsync_ptsz,
        cudaMemcpyFromArray_ptds,
        cudaMemcpyToArray,
        cudaMemcpyToArrayAsync,
        cudaMemcpyToArrayAsync_ptsz,
        cudaMemcpyToArray_ptds,
        cudaMipmappedArrayGetMemoryRequirements,
        cudaMipmappedArrayGetSparseProperties,
    ];
    GRAPHICS => [
        cudaEGLStreamConsumerAcquireFrame,
        cudaEGLStreamConsumerConnect,
        cudaEGLStreamConsumerConnectWithFlags,
        cudaEGLStreamConsumerDisconnect,
        cudaEGLStreamConsumerReleaseFrame,
        cudaEGLStreamProducerConnect,
        cudaEGLStreamProducerDisconnect,
        cudaEGLStreamProducerPresentFrame,
        cudaEGLStreamProducerReturnFrame,
        cudaEventCreateFromEGLSync,
        cudaGLGetDevices,
        cudaGLMapBufferObject,
        cudaGLMapBufferObjectAsync,
        cudaGLRegisterBufferObject,
        cudaGLSetBufferObjectMapFlags,
        cudaGLSetGLDevice,
        cudaGLUnmapBufferObject,
        cudaGLUnmapBufferObjectAsync,
        cudaGLUnregisterBufferObject,
        cudaGraphicsEGLRegisterImage,
        cudaGraphicsGLRegisterBuffer,
        cudaGraphicsGLRegisterImage,
        cudaGraphicsMapResources,
        cudaGraphicsResourceGetMappedEglFrame,
        cudaGraphicsResourceGetMappedMipmappedArray,
        cudaGraphicsResourceGetMappedPointer,
        cudaGraphicsResourceSetMapFlags,
        cudaGraphicsSubResourceGetMappedArray,
        cudaGraphicsUnmapResources,
        cudaGraphicsUnregisterResource,
        cudaGraphicsVDPAURegisterOutputSurface,
        cudaGraphicsVDPAURegisterVideoSurface,
        cudaVDPAUGetDevice,
        cudaVDPAUSetVDPAUDevice,
    ];
    IPC => [
        cudaIpcCloseMemHandle,
        cudaIpcGetEventHandle,
        cudaIpcGetMemHandle,
        cudaIpcOpenEventHandle,
        cudaIpcOpenMemHandle,
        cudaMemPoolExportPointer,
        cudaMemPoolExportToShareableHandle,
        cudaMemPoolImportFromShareableHandle,
        cudaMemPoolImportPointer,
    ];
    EXTERNAL => [
        cudaDestroyExternalMemory,
        cudaDestroyExternalSemaphore,
        cudaDeviceGetNvSciSyncAttributes,
        cudaExternalMemoryGetMappedBuffer,
        cudaGraphAddExternalSemaphoresSignalNode,
        cudaGraphAddExternalSemaphoresWaitNode,
        cudaGraphExecExternalSemaphoresSignalNodeSetParams,
        cudaGraphExecExternalSemaphoresWaitNodeSetParams,
        cudaGraphExternalSemaphoresSignalNodeGetParams,
        cudaGraphExternalSemaphoresSignalNodeSetParams,
        cudaGraphExternalSemaphoresWaitNodeGetParams,
        cudaGraphExternalSemaphoresWaitNodeSetParams,
        cudaImportExternalMemory,
        cudaImportExternalSemaphore,
        cudaSignalExternalSemaphoresAsync,
        cudaSignalExternalSemaphoresAsync_ptsz,
        cudaWaitExternalSemaphoresAsync,
        cudaWaitExternalSemaphoresAsync_ptsz,
    ];
    GRAPHS => [
        cudaGraphAddEventRecordNode,
        cudaGraphAddEventWaitNode,
        cudaGraphAddMemcpyNodeFromSymbol,
        cudaGraphAddMemcpyNodeToSymbol,
        cudaGraphChildGraphNodeGetGraph,
        cudaGraphDebugDotPrint,
        cudaGraphDestroyNode,
        cudaGraphEventRecordNodeGetEvent,
        cudaGraphEventRecordNodeSetEvent,
        cudaGraphEventWaitNodeGetEvent,
        cudaGraphEventWaitNodeSetEvent,
        cudaGraphExecChildGraphNodeSetParams,
        cudaGraphExecEventRecordNodeSetEvent,
        cudaGraphExecEventWaitNodeSetEvent,
        cudaGraphExecGetFlags,
        cudaGraphExecHostNodeSetParams,
        cudaGraphExecMemcpyNodeSetParams,
        cudaGraphExecMemcpyNodeSetParams1D,
        cudaGraphExecMemcpyNodeSetParamsFromSymbol,
        cudaGraphExecMemcpyNodeSetParamsToSymbol,
        cudaGraphExecMemsetNodeSetParams,
        cudaGraphExecNodeSetParams,
        cudaGraphGetEdges,
        cudaGraphGetRootNodes,
        cudaGraphHostNodeGetParams,
        cudaGraphHostNodeSetParams,
        cudaGraphInstantiateWithParams,
        cudaGraphInstantiateWithParams_ptsz,
        cudaGraphKernelNodeCopyAttributes,
        cudaGraphKernelNodeGetAttribute,
        cudaGraphKernelNodeGetParams,
        cudaGraphKernelNodeSetAttribute,
        cudaGraphKernelNodeSetParams,
        cudaGraphMemAllocNodeGetParams,
        cudaGraphMemFreeNodeGetParams,
        cudaGraphMemcpyNodeGetParams,
        cudaGraphMemcpyNodeSetParams,
        cudaGraphMemcpyNodeSetParams1D,
        cudaGraphMemcpyNodeSetParamsFromSymbol,
        cudaGraphMemcpyNodeSetParamsToSymbol,
        cudaGraphMemsetNodeGetParams,
        cudaGraphMemsetNodeSetParams,
        cudaGraphNodeFindInClone,
        cudaGraphNodeGetDependencies,
        cudaGraphNodeGetDependentNodes,
        cudaGraphNodeGetEnabled,
        cudaGraphNodeGetType,
        cudaGraphNodeSetEnabled,
        cudaGraphNodeSetParams,
        cudaGraphReleaseUserObject,
        cudaGraphRemoveDependencies,
        cudaGraphRetainUserObject,
        cudaUserObjectCreate,
        cudaUserObjectRelease,
        cudaUserObjectRetain,
    ];
    DRIVER => [
        __cudaGetProcAddress,
        __cudaRegisterUnifiedTable,
        cudaFuncGetParamInfo,
        cudaGetDriverEntryPoint,
        cudaGetDriverEntryPointByVersion,
        cudaGetDriverEntryPointByVersion_ptsz,
        cudaGetDriverEntryPoint_ptsz,
        cudaGetExportTable,
        cudaGetKernel,
        cudaKernelSetAttributeForDevice,
        cudaLibraryEnumerateKernels,
        cudaLibraryGetGlobal,
        cudaLibraryGetKernel,
        cudaLibraryGetKernelCount,
        cudaLibraryGetManaged,
        cudaLibraryGetUnifiedFunction,
        cudaLibraryLoadData,
        cudaLibraryLoadFromFile,
        cudaLibraryUnload,
    ];
    POOLS => [
        cudaDeviceSetMemPool,
        cudaMemGetDefaultMemPool,
        cudaMemGetMemPool,
        cudaMemPoolCreate,
        cudaMemPoolDestroy,
        cudaMemPoolGetAccess,
        cudaMemPoolSetAccess,
        cudaMemSetMemPool,
    ];
    COPIES => [
        cudaMalloc3D,
        cudaMemDiscardAndPrefetchBatchAsync,
        cudaMemDiscardAndPrefetchBatchAsync_ptsz,
        cudaMemDiscardBatchAsync,
        cudaMemDiscardBatchAsync_ptsz,
        cudaMemPrefetchBatchAsync,
        cudaMemPrefetchBatchAsync_ptsz,
        cudaMemcpy3D,
        cudaMemcpy3DAsync,
        cudaMemcpy3DAsync_ptsz,
        cudaMemcpy3DBatchAsync,
        cudaMemcpy3DBatchAsync_ptsz,
        cudaMemcpy3DPeer,
        cudaMemcpy3DPeerAsync,
        cudaMemcpy3DPeerAsync_ptsz,
        cudaMemcpy3DPeer_ptds,
        cudaMemcpy3D_ptds,
        cudaMemcpyBatchAsync,
        cudaMemcpyBatchAsync_ptsz,
        cudaMemset2DAsync,
        cudaMemset2DAsync_ptsz,
        cudaMemset3D,
        cudaMemset3DAsync,
        cudaMemset3DAsync_ptsz,
        cudaMemset3D_ptds,
    ];
    OTHER => [
        __cudaRegisterHostVar,
        cudaCtxResetPersistingL2Cache,
        cudaDeviceFlushGPUDirectRDMAWrites,
        cudaDeviceGetByPCIBusId,
        cudaDeviceGetHostAtomicCapabilities,
        cudaDeviceGetP2PAtomicCapabilities,
        cudaDeviceGetP2PAttribute,
        cudaDeviceGetPCIBusId,
        cudaDeviceRegisterAsyncNotification,
        cudaDeviceUnregisterAsyncNotification,
        cudaFuncGetName,
        cudaLogsCurrent,
        cudaLogsDumpToFile,
        cudaLogsDumpToMemory,
        cudaLogsRegisterCallback,
        cudaLogsUnregisterCallback,
        cudaMemRangeGetAttribute,
        cudaMemRangeGetAttributes,
        cudaOccupancyMaxActiveClusters,
        cudaOccupancyMaxPotentialClusterSize,
        cudaSetValidDevices,
        cudaStreamAttachMemAsync,
        cudaStreamAttachMemAsync_ptsz,
        cudaStreamCopyAttributes,
        cudaStreamCopyAttributes_ptsz,
        cudaStreamGetAttribute,
        cudaStreamGetAttribute_ptsz,
        cudaStreamSetAttribute,
        cudaStreamSetAttribute_ptsz,
        cudaThreadExchangeStreamCaptureMode,
    ];
}
