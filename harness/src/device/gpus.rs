//! Several devices at once: every GPU of the machine (cudarc, one context each), or that many
//! devices on one emulator. Buffers, streams and events belong to one device; copies and
//! kernels may reach another device's memory, and only events and synchronization order them.
//!
//! On a GPU, work on different streams runs at the same time. The emulator runs each call to
//! its end when it is made, and checks what a GPU would not: that every access to memory another
//! stream touched is ordered after it (a missing event wait is a race between streams), and that
//! a kernel reading a peer's memory has peer access to it.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaEvent, CudaStream, DevicePtr as _, DevicePtrMut as _, sys};

use super::{Arg, Buffer, Device, Element, EmuSettings, Inner, LaunchReport, RawBuffer};
use crate::backend::{BackendChoice, BackendKind};
use crate::emu_backend::{EmuBackend, launch_report};
use crate::error::{HarnessError, Result};
use crate::kernel::KernelSource;
use crate::launch::{DeviceLimits, LaunchShape};

/// A machine's devices, all on one backend.
pub struct Gpus {
    kind: BackendKind,
    name: String,
    limits: DeviceLimits,
    pub(super) inner: Many,
    /// The emulator's findings since the last [`Gpus::synchronize`].
    pending: LaunchReport,
    /// What each GPU was last given to do, for an error the driver reports only later (an
    /// illegal address surfaces at the next synchronization, not at the launch that made it).
    last_queued: Vec<Option<String>>,
}

pub(super) enum Many {
    /// One [`Device`] per GPU, each with its own context, default stream and modules.
    Cuda(Vec<Device>),
    /// One emulator holding every device, so that addresses are unique across them.
    Emu {
        backend: Box<EmuBackend>,
        count: usize,
    },
}

impl fmt::Debug for Gpus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpus")
            .field("kind", &self.kind)
            .field("count", &self.count())
            .finish_non_exhaustive()
    }
}

/// A stream of one device of [`Gpus`].
pub struct GpuStream {
    device: usize,
    inner: StreamInner,
}

enum StreamInner {
    Cuda(Arc<CudaStream>),
    Emu(ptx_emu::StreamId),
}

impl fmt::Debug for GpuStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GpuStream(device {})", self.device)
    }
}

impl GpuStream {
    /// The device whose work this stream queues.
    pub fn device(&self) -> usize {
        self.device
    }
}

/// What a stream had queued when the event was recorded; another stream, on any device, can
/// wait for it.
pub struct GpuEvent {
    /// The device whose stream recorded it.
    device: usize,
    inner: EventInner,
}

enum EventInner {
    Cuda(CudaEvent),
    Emu(ptx_emu::EventId),
}

impl fmt::Debug for GpuEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GpuEvent")
    }
}

fn mixed_backends() -> HarnessError {
    HarnessError::Invalid(
        "a buffer, stream or event was used with devices of another backend".into(),
    )
}

impl Gpus {
    /// Every GPU when the choice allows it and the machine has at least `needed`; otherwise
    /// (with `auto`) `emulated` devices on the emulator, saying why in the name.
    pub fn open(choice: BackendChoice, needed: usize, emulated: usize) -> Result<Self> {
        match choice {
            BackendChoice::Emu => Self::open_emu(emulated, None),
            BackendChoice::Cuda => Self::open_cuda(needed),
            BackendChoice::Auto => match Self::open_cuda(needed) {
                Ok(gpus) => Ok(gpus),
                Err(HarnessError::NoDriver) => {
                    Self::open_emu(emulated, Some("no NVIDIA driver found"))
                }
                Err(HarnessError::NoDevice(why)) => {
                    Self::open_emu(emulated, Some(&format!("no CUDA devices: {why}")))
                }
                Err(HarnessError::TooFewGpus { found, needed }) => Self::open_emu(
                    emulated,
                    Some(&format!("{found} GPU here, and this needs {needed}")),
                ),
                Err(other) => Err(other),
            },
        }
    }

    fn open_cuda(needed: usize) -> Result<Self> {
        let found = super::cuda_device_count()?;
        if found < needed.max(1) {
            return Err(HarnessError::TooFewGpus { found, needed });
        }
        let devices = (0..found)
            .map(Device::open_cuda_ordinal)
            .collect::<Result<Vec<_>>>()?;
        for device in &devices {
            if let Inner::Cuda(cuda) = &device.inner {
                // Ordering between devices is this chapter's lesson: the events the code records
                // and waits for must be the only ones, so cudarc's own tracking is off.
                // SAFETY: every buffer is made after this call, and `Gpus` synchronizes every
                // device before it reads a result; buffers are dropped only after that.
                unsafe { cuda.context.disable_event_tracking() };
            }
        }
        let limits = devices[0].limits;
        let name = devices
            .iter()
            .enumerate()
            .map(|(i, d)| format!("{i}: {}", d.name))
            .collect::<Vec<_>>()
            .join(", ");
        Ok(Self {
            kind: BackendKind::Cuda,
            name,
            limits,
            last_queued: vec![None; devices.len()],
            inner: Many::Cuda(devices),
            pending: LaunchReport::default(),
        })
    }

    fn open_emu(count: usize, fallback_reason: Option<&str>) -> Result<Self> {
        let mut backend = Box::new(EmuBackend::new());
        let devices = u32::try_from(count).unwrap_or(u32::MAX);
        backend.emulator().set_device_count(devices)?;
        let name = match fallback_reason {
            Some(reason) => {
                format!("{count} devices on ptx-emu, Racetrack's PTX emulator ({reason})")
            }
            None => format!("{count} devices on ptx-emu, Racetrack's PTX emulator"),
        };
        Ok(Self {
            kind: BackendKind::Emu,
            name,
            limits: DeviceLimits::CUDA_DEFAULT,
            inner: Many::Emu { backend, count },
            pending: LaunchReport::default(),
            last_queued: vec![None; count],
        })
    }

    pub fn kind(&self) -> BackendKind {
        self.kind
    }

    /// How many devices there are.
    pub fn count(&self) -> usize {
        match &self.inner {
            Many::Cuda(devices) => devices.len(),
            Many::Emu { count, .. } => *count,
        }
    }

    /// The devices, numbered: `0: NVIDIA H200 (sm_90), 1: NVIDIA H200 (sm_90)`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first line a binary prints: which backend, which devices.
    pub fn banner(&self) -> String {
        format!("backend: {} — {}", self.kind, self.name)
    }

    pub fn limits(&self) -> DeviceLimits {
        self.limits
    }

    /// Settings for the emulator's schedule and checkers; no effect on GPUs.
    pub fn set_emu_settings(&mut self, settings: EmuSettings) {
        if let Many::Emu { backend, .. } = &mut self.inner {
            backend.settings = settings;
        }
    }

    pub fn emu_settings(&self) -> Option<EmuSettings> {
        match &self.inner {
            Many::Emu { backend, .. } => Some(backend.settings),
            Many::Cuda(_) => None,
        }
    }

    fn check_device(&self, device: usize) -> Result<()> {
        if device < self.count() {
            Ok(())
        } else {
            Err(HarnessError::Invalid(format!(
                "device {device} does not exist: there are {} (0 to {})",
                self.count(),
                self.count().saturating_sub(1)
            )))
        }
    }

    fn emulator_on(&mut self, device: usize) -> Result<&mut ptx_emu::Emulator> {
        self.check_device(device)?;
        let Many::Emu { backend, .. } = &mut self.inner else {
            return Err(mixed_backends());
        };
        let emulator = backend.emulator();
        emulator.set_device(device as u32)?;
        Ok(emulator)
    }

    /// `data` copied into a new buffer on `device`.
    pub fn upload<T: Element>(
        &mut self,
        device: usize,
        data: &[T],
        label: &str,
    ) -> Result<Buffer<T>> {
        self.check_device(device)?;
        match &mut self.inner {
            Many::Cuda(devices) => {
                // A copy from pageable memory may still be on its way when the call returns, and
                // the streams made by `stream` do not wait for the device's own stream.
                let operation = || {
                    format!(
                        "the upload of {label} ({} bytes)",
                        std::mem::size_of_val(data)
                    )
                };
                let buffer = devices[device]
                    .upload(data, label)
                    .map_err(call_failed(device, operation()))?;
                devices[device]
                    .synchronize()
                    .map_err(call_failed(device, operation()))?;
                Ok(buffer)
            }
            Many::Emu { .. } => {
                let emulator = self.emulator_on(device)?;
                let bytes: &[u8] = bytemuck::cast_slice(data);
                let ptr = emulator.alloc(bytes.len(), label);
                emulator.write(ptr, bytes)?;
                Ok(Buffer {
                    raw: RawBuffer::Emu(ptr),
                    len: data.len(),
                    _element: PhantomData,
                })
            }
        }
    }

    /// `len` zeros in a new buffer on `device`.
    pub fn zeros<T: Element>(
        &mut self,
        device: usize,
        len: usize,
        label: &str,
    ) -> Result<Buffer<T>> {
        self.check_device(device)?;
        match &mut self.inner {
            Many::Cuda(devices) => {
                let operation =
                    || format!("zeroing {label} ({} bytes)", len * std::mem::size_of::<T>());
                let buffer = devices[device]
                    .zeros(len, label)
                    .map_err(call_failed(device, operation()))?;
                devices[device]
                    .synchronize()
                    .map_err(call_failed(device, operation()))?;
                Ok(buffer)
            }
            Many::Emu { .. } => {
                let emulator = self.emulator_on(device)?;
                let ptr = emulator.alloc(len * std::mem::size_of::<T>(), label);
                Ok(Buffer {
                    raw: RawBuffer::Emu(ptr),
                    len,
                    _element: PhantomData,
                })
            }
        }
    }

    /// `len` zeroed flag words on `device`, for [`Gpus::signal`] and [`Gpus::wait_for_value`].
    /// On a GPU they come from `cuMemAlloc`, not the stream-ordered pool that other buffers come
    /// from: the driver refuses stream memory operations on pool memory (CUDA_ERROR_INVALID_VALUE,
    /// seen on H200s with driver 580), local or peer.
    pub fn flags(&mut self, device: usize, len: usize, label: &str) -> Result<Buffer<u32>> {
        self.check_device(device)?;
        let Many::Cuda(devices) = &mut self.inner else {
            return self.zeros(device, len, label);
        };
        let Inner::Cuda(cuda) = &devices[device].inner else {
            return Err(mixed_backends());
        };
        let bytes = 4 * len.max(1);
        let operation = || format!("allocating {label} ({bytes} bytes, outside the pool)");
        cuda.context
            .bind_to_thread()
            .map_err(call_failed(device, operation()))?;
        // SAFETY: the context is current; the allocation is zeroed before anything reads it and
        // handed to cudarc, whose drop frees it with cuMemFreeAsync, which takes cuMemAlloc's
        // memory too.
        let slice = unsafe {
            let pointer = cudarc::driver::result::malloc_sync(bytes)
                .map_err(call_failed(device, operation()))?;
            cudarc::driver::result::memset_d8_sync(pointer, 0, bytes)
                .map_err(call_failed(device, operation()))?;
            cuda.stream.upgrade_device_ptr::<u8>(pointer, bytes)
        };
        Ok(Buffer {
            raw: RawBuffer::Cuda(slice),
            len,
            _element: PhantomData,
        })
    }

    /// The buffer's values, once every device has finished everything queued.
    pub fn download<T: Element>(&mut self, buffer: &Buffer<T>) -> Result<Vec<T>> {
        self.wait_for_all()?;
        let bytes = match (&mut self.inner, &buffer.raw) {
            (Many::Cuda(devices), RawBuffer::Cuda(slice)) => {
                let device = device_of(devices, slice.context());
                let mut bytes = slice.stream().clone_dtoh(slice).map_err(call_failed(
                    device,
                    format!("the download of {} bytes", buffer.bytes()),
                ))?;
                bytes.truncate(buffer.bytes());
                bytes
            }
            (Many::Emu { backend, .. }, RawBuffer::Emu(ptr)) => {
                backend.read(*ptr, buffer.bytes())?
            }
            _ => return Err(mixed_backends()),
        };
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// The buffer's device address, for a table of pointers a kernel follows: addresses are
    /// unique across the devices of a process (unified addressing).
    pub fn address<T: Element>(&self, buffer: &Buffer<T>) -> Result<u64> {
        match (&self.inner, &buffer.raw) {
            (Many::Cuda(_), RawBuffer::Cuda(slice)) => {
                let (address, _guard) = slice.device_ptr(slice.stream());
                Ok(address)
            }
            (Many::Emu { .. }, RawBuffer::Emu(ptr)) => Ok(ptr.0),
            _ => Err(mixed_backends()),
        }
    }

    /// Whether kernels on `from` can load and store `to`'s memory at all (NVLink or PCIe peer
    /// support); the emulator's devices always can.
    pub fn can_access_peer(&self, from: usize, to: usize) -> Result<bool> {
        self.check_device(from)?;
        self.check_device(to)?;
        match &self.inner {
            Many::Emu { .. } => Ok(from != to),
            Many::Cuda(devices) => {
                let (Inner::Cuda(a), Inner::Cuda(b)) = (&devices[from].inner, &devices[to].inner)
                else {
                    return Err(mixed_backends());
                };
                let mut can = 0;
                // SAFETY: both device handles come from live contexts; the driver writes an int.
                let status = unsafe {
                    sys::cuDeviceCanAccessPeer(
                        &mut can,
                        a.context.cu_device(),
                        b.context.cu_device(),
                    )
                };
                driver_status(status).map_err(call_failed(
                    from,
                    format!("asking whether device {from} can reach device {to}'s memory"),
                ))?;
                Ok(from != to && can != 0)
            }
        }
    }

    /// Lets kernels on `from` load and store `to`'s memory (`cudaDeviceEnablePeerAccess`).
    pub fn enable_peer_access(&mut self, from: usize, to: usize) -> Result<()> {
        if !self.can_access_peer(from, to)? {
            return Err(HarnessError::Invalid(format!(
                "device {from} cannot access device {to}'s memory directly (no peer path between them)"
            )));
        }
        match &mut self.inner {
            Many::Emu { .. } => {
                self.emulator_on(from)?.enable_peer_access(to as u32)?;
                Ok(())
            }
            Many::Cuda(devices) => {
                let (Inner::Cuda(a), Inner::Cuda(b)) = (&devices[from].inner, &devices[to].inner)
                else {
                    return Err(mixed_backends());
                };
                let operation =
                    || format!("enabling device {from}'s access to device {to}'s memory");
                a.context
                    .bind_to_thread()
                    .map_err(call_failed(from, operation()))?;
                // SAFETY: `from`'s context is current and `to`'s context is alive.
                let status = unsafe { sys::cuCtxEnablePeerAccess(b.context.cu_ctx(), 0) };
                if status != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                    driver_status(status).map_err(call_failed(from, operation()))?;
                }
                // cudarc allocates from each device's stream-ordered memory pool, which
                // cuCtxEnablePeerAccess does not open to peers: the pool grants access itself.
                let reader = sys::CUmemAccessDesc {
                    location: sys::CUmemLocation {
                        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                        id: a.context.cu_device(),
                    },
                    flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                };
                let mut pool = std::ptr::null_mut();
                // SAFETY: `to`'s device handle comes from a live context; the driver writes the
                // pool handle, and reads one access descriptor.
                let status = unsafe {
                    match sys::cuDeviceGetMemPool(&mut pool, b.context.cu_device()) {
                        sys::CUresult::CUDA_SUCCESS => sys::cuMemPoolSetAccess(pool, &reader, 1),
                        error => error,
                    }
                };
                driver_status(status).map_err(call_failed(from, operation()))
            }
        }
    }

    /// A new stream on `device`.
    pub fn stream(&mut self, device: usize) -> Result<GpuStream> {
        self.check_device(device)?;
        let inner = match &mut self.inner {
            Many::Cuda(devices) => {
                let Inner::Cuda(cuda) = &devices[device].inner else {
                    return Err(mixed_backends());
                };
                StreamInner::Cuda(
                    cuda.context
                        .new_stream()
                        .map_err(call_failed(device, "creating a stream".into()))?,
                )
            }
            Many::Emu { .. } => StreamInner::Emu(self.emulator_on(device)?.create_stream()),
        };
        Ok(GpuStream { device, inner })
    }

    /// Records an event on `stream` (`cudaEventRecord`).
    pub fn record(&mut self, stream: &GpuStream) -> Result<GpuEvent> {
        let inner = match (&mut self.inner, &stream.inner) {
            (Many::Cuda(_), StreamInner::Cuda(cuda)) => EventInner::Cuda(
                cuda.record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                    .map_err(call_failed(stream.device, "recording an event".into()))?,
            ),
            (Many::Emu { backend, .. }, StreamInner::Emu(id)) => {
                EventInner::Emu(backend.emulator().record_event(*id)?)
            }
            _ => return Err(mixed_backends()),
        };
        Ok(GpuEvent {
            device: stream.device,
            inner,
        })
    }

    /// Makes `stream`'s later work wait for `event`, which may come from another device
    /// (`cudaStreamWaitEvent`).
    pub fn wait(&mut self, stream: &GpuStream, event: &GpuEvent) -> Result<()> {
        match (&mut self.inner, &stream.inner, &event.inner) {
            (Many::Cuda(_), StreamInner::Cuda(cuda), EventInner::Cuda(cuda_event)) => {
                cuda.wait(cuda_event).map_err(call_failed(
                    stream.device,
                    format!("a stream's wait for an event of device {}", event.device),
                ))
            }
            (Many::Emu { backend, .. }, StreamInner::Emu(id), EventInner::Emu(event)) => {
                Ok(backend.emulator().wait_event(*id, *event)?)
            }
            _ => Err(mixed_backends()),
        }
    }

    /// Queues `kernel` on `stream`, on the stream's device. On the emulator it runs now; its
    /// findings come back from the next [`Gpus::synchronize`].
    pub fn launch_on(
        &mut self,
        stream: &GpuStream,
        kernel: &KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<()> {
        match (&mut self.inner, &stream.inner) {
            (Many::Cuda(devices), StreamInner::Cuda(cuda_stream)) => {
                let device = &mut devices[stream.device];
                let limits = device.limits;
                let Inner::Cuda(cuda) = &mut device.inner else {
                    return Err(mixed_backends());
                };
                let function = cuda.function(kernel).map_err(call_failed(
                    stream.device,
                    format!("loading {} for `{}`", kernel.path, kernel.entry),
                ))?;
                super::check_shape_for_function(&limits, kernel, &shape, &function)?;
                let launch = format!(
                    "the launch of `{}` ({shape}, {})",
                    kernel.entry, kernel.path
                );
                cuda.launch_on(cuda_stream, &function, shape, args)
                    .map_err(call_failed(stream.device, launch.clone()))?;
                self.last_queued[stream.device] = Some(launch);
                Ok(())
            }
            (Many::Emu { backend, .. }, StreamInner::Emu(id)) => {
                self.limits
                    .check(kernel.entry, &shape, 0, self.limits.max_threads_per_block)?;
                let report = backend.launch_queued(Some(*id), kernel, shape, args)?;
                self.pending.append(report);
                Ok(())
            }
            _ => Err(mixed_backends()),
        }
    }

    /// Queues a copy of `len` values from `src[src_at..]` to `dst[dst_at..]` on `stream`: a
    /// peer copy (`cudaMemcpyPeerAsync`) when the buffers are on different devices, which needs
    /// no peer access.
    pub fn copy<T: Element>(
        &mut self,
        stream: &GpuStream,
        dst: &mut Buffer<T>,
        dst_at: usize,
        src: &Buffer<T>,
        src_at: usize,
        len: usize,
    ) -> Result<()> {
        if src_at + len > src.len || dst_at + len > dst.len {
            return Err(HarnessError::Invalid(format!(
                "copy of {len} values from {src_at} of {} to {dst_at} of {}: outside a buffer",
                src.len, dst.len
            )));
        }
        let size = std::mem::size_of::<T>();
        let (from, to, bytes) = (src_at * size, dst_at * size, len * size);
        if bytes == 0 {
            return Ok(());
        }
        match (&mut self.inner, &stream.inner, &src.raw, &mut dst.raw) {
            (
                Many::Cuda(devices),
                StreamInner::Cuda(cuda),
                RawBuffer::Cuda(s),
                RawBuffer::Cuda(d),
            ) => {
                let (from_device, to_device) = (
                    device_of(devices, s.context()),
                    device_of(devices, d.context()),
                );
                let what = if from_device == to_device {
                    "copy"
                } else {
                    "peer copy"
                };
                let operation = format!(
                    "the {what} of {bytes} bytes from device {from_device} to device {to_device}, queued on a stream of device {}",
                    stream.device
                );
                let (src_ctx, dst_ctx) = (s.context().cu_ctx(), d.context().cu_ctx());
                let (src_ptr, _src_guard) = s.device_ptr(cuda);
                let (dst_ptr, _dst_guard) = d.device_ptr_mut(cuda);
                cuda.context()
                    .bind_to_thread()
                    .map_err(call_failed(stream.device, operation.clone()))?;
                // SAFETY: both ranges lie inside their buffers (checked above), the buffers
                // outlive the copy (`Gpus` synchronizes before anything is read or dropped),
                // and the stream belongs to a live context.
                unsafe {
                    cudarc::driver::result::memcpy_peer_async(
                        dst_ctx,
                        dst_ptr + to as u64,
                        src_ctx,
                        src_ptr + from as u64,
                        bytes,
                        cuda.cu_stream(),
                    )
                }
                .map_err(call_failed(stream.device, operation.clone()))?;
                self.last_queued[stream.device] = Some(operation);
                Ok(())
            }
            (
                Many::Emu { backend, .. },
                StreamInner::Emu(id),
                RawBuffer::Emu(s),
                RawBuffer::Emu(d),
            ) => {
                let racecheck = backend.settings.racecheck;
                let report = backend.emulator().copy_on(
                    *id,
                    ptx_emu::DevicePtr(d.0 + to as u64),
                    ptx_emu::DevicePtr(s.0 + from as u64),
                    bytes,
                    racecheck,
                )?;
                self.pending.append(launch_report(report));
                Ok(())
            }
            _ => Err(mixed_backends()),
        }
    }

    /// Queues on `stream` a write of `value` to `flags[index]`, which may live on another
    /// device reachable by peer access (`cuStreamWriteValue32`): it happens after everything
    /// queued on `stream` before it. The way one rank tells another it is done without an event
    /// both must share, so it works with one process per GPU.
    pub fn signal(
        &mut self,
        stream: &GpuStream,
        flags: &Buffer<u32>,
        index: usize,
        value: u32,
    ) -> Result<()> {
        self.stream_memory_operation(stream, flags, index, value, StreamMemoryOperation::Write)
    }

    /// Makes `stream`'s later work wait until `flags[index]` is at least `at_least`
    /// (`cuStreamWaitValue32` with `CU_STREAM_WAIT_VALUE_GEQ`). A wait no one meets hangs a GPU;
    /// on the emulator, [`Gpus::synchronize`] reports it as stuck and says where. Until the wait
    /// is met, a synchronization of the device from another thread of the process can block this
    /// thread's next calls on that device, including the ones meant to meet the wait.
    pub fn wait_for_value(
        &mut self,
        stream: &GpuStream,
        flags: &Buffer<u32>,
        index: usize,
        at_least: u32,
    ) -> Result<()> {
        self.stream_memory_operation(stream, flags, index, at_least, StreamMemoryOperation::Wait)
    }

    fn stream_memory_operation(
        &mut self,
        stream: &GpuStream,
        flags: &Buffer<u32>,
        index: usize,
        value: u32,
        kind: StreamMemoryOperation,
    ) -> Result<()> {
        if index >= flags.len {
            return Err(HarnessError::Invalid(format!(
                "flag {index} of a buffer of {} flags",
                flags.len
            )));
        }
        let offset = 4 * index as u64;
        match (&mut self.inner, &stream.inner, &flags.raw) {
            (Many::Cuda(devices), StreamInner::Cuda(cuda), RawBuffer::Cuda(slice)) => {
                let owner = device_of(devices, slice.context());
                let operation = match kind {
                    StreamMemoryOperation::Write => {
                        format!("cuStreamWriteValue32 of {value} to flag {index} of device {owner}")
                    }
                    StreamMemoryOperation::Wait => format!(
                        "cuStreamWaitValue32 until flag {index} of device {owner} ≥ {value}"
                    ),
                };
                let (address, _guard) = slice.device_ptr(cuda);
                cuda.context()
                    .bind_to_thread()
                    .map_err(call_failed(stream.device, operation.clone()))?;
                let address = address + offset;
                // SAFETY: the word lies inside a live buffer (checked above), which `Gpus`
                // keeps until everything queued has finished, and the stream's context is bound.
                let status = unsafe {
                    match kind {
                        StreamMemoryOperation::Write => sys::cuStreamWriteValue32_v2(
                            cuda.cu_stream(),
                            address,
                            value,
                            sys::CUstreamWriteValue_flags::CU_STREAM_WRITE_VALUE_DEFAULT as u32,
                        ),
                        StreamMemoryOperation::Wait => sys::cuStreamWaitValue32_v2(
                            cuda.cu_stream(),
                            address,
                            value,
                            sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
                        ),
                    }
                };
                driver_status(status).map_err(call_failed(stream.device, operation.clone()))?;
                self.last_queued[stream.device] = Some(operation);
                Ok(())
            }
            (Many::Emu { backend, .. }, StreamInner::Emu(id), RawBuffer::Emu(ptr)) => {
                let word = ptx_emu::DevicePtr(ptr.0 + offset);
                let emulator = backend.emulator();
                match kind {
                    StreamMemoryOperation::Write => emulator.write_value_on(*id, word, value)?,
                    StreamMemoryOperation::Wait => emulator.wait_value_on(*id, word, value)?,
                }
                Ok(())
            }
            _ => Err(mixed_backends()),
        }
    }

    /// Refuses variants that could hang a real GPU before they reach one.
    pub fn ensure_can_run<K>(&self, variant: &crate::Variant<K>) -> Result<()> {
        super::refuse_on_gpus(self.kind, variant)
    }

    fn wait_for_all(&mut self) -> Result<()> {
        match &mut self.inner {
            Many::Cuda(devices) => {
                for (ordinal, device) in devices.iter().enumerate() {
                    if let Inner::Cuda(cuda) = &device.inner {
                        let operation = match &self.last_queued[ordinal] {
                            Some(last) => format!("finishing the work queued last ({last})"),
                            None => "finishing its queued work".to_string(),
                        };
                        cuda.context
                            .synchronize()
                            .map_err(call_failed(ordinal, operation))?;
                    }
                }
            }
            Many::Emu { backend, .. } => {
                let held = backend.emulator().synchronize()?;
                self.pending.append(launch_report(held));
            }
        }
        Ok(())
    }

    /// Waits for every stream of every device, and returns what the emulator's checkers found
    /// in the work queued since the last call (nothing on GPUs).
    pub fn synchronize(&mut self) -> Result<LaunchReport> {
        self.wait_for_all()?;
        Ok(std::mem::take(&mut self.pending))
    }

    /// Mean milliseconds per call of `work` on the host's clock, with every device finished
    /// before the clock starts and before it stops, after one warm-up call; `None` on the
    /// emulator, which models no time.
    pub fn time_ms(
        &mut self,
        repetitions: u32,
        mut work: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<Option<f64>> {
        if self.kind != BackendKind::Cuda {
            return Ok(None);
        }
        work(self)?;
        self.wait_for_all()?;
        let start = Instant::now();
        for _ in 0..repetitions.max(1) {
            work(self)?;
        }
        self.wait_for_all()?;
        let total = start.elapsed().as_secs_f64() * 1e3;
        Ok(Some(total / f64::from(repetitions.max(1))))
    }
}

#[derive(Clone, Copy)]
enum StreamMemoryOperation {
    Write,
    Wait,
}

/// Turns a driver error into one that says what was being done, and on which device; other
/// errors (a refused launch shape, say) already say so and pass through.
fn call_failed<E: Into<HarnessError>>(
    device: usize,
    operation: String,
) -> impl FnOnce(E) -> HarnessError {
    move |error| match error.into() {
        HarnessError::Driver(error) => HarnessError::DeviceCall {
            operation,
            device,
            error,
        },
        other => other,
    }
}

/// Which of `devices` owns `context`: a buffer knows its context, not its ordinal.
fn device_of(devices: &[Device], context: &Arc<cudarc::driver::CudaContext>) -> usize {
    devices
        .iter()
        .position(|device| {
            matches!(&device.inner, Inner::Cuda(cuda) if Arc::ptr_eq(&cuda.context, context))
        })
        .unwrap_or(0)
}

fn driver_status(status: sys::CUresult) -> Result<()> {
    match status {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        error => Err(HarnessError::Driver(cudarc::driver::DriverError(error))),
    }
}
