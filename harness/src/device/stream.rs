//! Streams, page-locked host buffers and asynchronous copies: what a copy/compute pipeline
//! needs. On a GPU, work queued on different streams may run at the same time; the emulator
//! runs every call to completion in the order it is made, so it shows the pipeline's result,
//! not its overlap.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaStream, PinnedHostSlice};

use super::{Arg, Buffer, Device, Element, Inner, LaunchReport, RawBuffer};
use crate::error::{HarnessError, Result};
use crate::kernel::KernelSource;
use crate::launch::LaunchShape;

/// One queue of device work. Work on one stream runs in order; work on different streams may
/// overlap on a GPU. Made by [`Device::streams`].
pub struct Stream {
    inner: StreamInner,
}

enum StreamInner {
    Cuda(Arc<CudaStream>),
    Emu,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.inner {
            StreamInner::Cuda(_) => "Stream(cuda)",
            StreamInner::Emu => "Stream(emu)",
        })
    }
}

/// Host memory a GPU can copy from and to without the host waiting: page-locked on the cuda
/// backend (a copy from ordinary memory makes the host wait for it), ordinary memory on the
/// emulator.
pub struct HostBuffer<T> {
    raw: RawHost,
    len: usize,
    _element: PhantomData<T>,
}

enum RawHost {
    Cuda(PinnedHostSlice<u8>),
    Emu(Vec<u8>),
}

impl<T> fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBuffer")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<T: Element> HostBuffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The values, once every copy queued into this buffer has finished.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let bytes = match &self.raw {
            RawHost::Cuda(pinned) => &pinned.as_slice()?[..self.bytes()],
            RawHost::Emu(bytes) => bytes.as_slice(),
        };
        Ok(bytemuck::pod_collect_to_vec(bytes))
    }
}

fn streams_of_another_backend() -> HarnessError {
    HarnessError::Invalid(
        "a stream or host buffer was used with a device of another backend".into(),
    )
}

fn length_mismatch(what: &str, host: usize, device: usize) -> HarnessError {
    HarnessError::Invalid(format!(
        "{what}: the host buffer holds {host} values and the device buffer {device}; an asynchronous copy moves whole buffers of the same length"
    ))
}

impl Device {
    /// `count` new streams. On a GPU each starts after the work already queued on the device's
    /// own stream; use [`Device::fork`] and [`Device::join`] around each round of work.
    pub fn streams(&mut self, count: usize) -> Result<Vec<Stream>> {
        match &self.inner {
            Inner::Cuda(cuda) => (0..count)
                .map(|_| {
                    Ok(Stream {
                        inner: StreamInner::Cuda(cuda.stream.fork()?),
                    })
                })
                .collect(),
            Inner::Emu(_) => Ok((0..count)
                .map(|_| Stream {
                    inner: StreamInner::Emu,
                })
                .collect()),
        }
    }

    /// Makes every stream in `streams` wait for the work queued so far on the device's own
    /// stream (the one [`Device::launch`], [`Device::upload`] and [`Device::time_ms`] use).
    pub fn fork(&mut self, streams: &[Stream]) -> Result<()> {
        let Inner::Cuda(cuda) = &self.inner else {
            return Ok(());
        };
        for stream in streams {
            stream_of(stream)?.join(&cuda.stream)?;
        }
        Ok(())
    }

    /// Makes the device's own stream wait for everything queued on `streams`, so that
    /// [`Device::time_ms`] and [`Device::synchronize`] cover it.
    pub fn join(&mut self, streams: &[Stream]) -> Result<()> {
        let Inner::Cuda(cuda) = &self.inner else {
            return Ok(());
        };
        for stream in streams {
            cuda.stream.join(stream_of(stream)?)?;
        }
        Ok(())
    }

    /// Waits for all work on every stream of the device.
    pub fn synchronize(&mut self) -> Result<()> {
        if let Inner::Cuda(cuda) = &self.inner {
            cuda.context.synchronize()?;
        }
        Ok(())
    }

    /// A host buffer holding a copy of `data`, ready for [`Device::upload_async`].
    pub fn host_buffer<T: Element>(&mut self, data: &[T]) -> Result<HostBuffer<T>> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let raw = match &self.inner {
            Inner::Cuda(cuda) => {
                // Flags 0: plain page-locked memory. cudarc's default is write-combined, which
                // the host reads back very slowly.
                // SAFETY: every byte is written below before anything reads it.
                let mut pinned = unsafe {
                    cuda.context
                        .alloc_pinned_with_flags::<u8>(bytes.len().max(1), 0)
                }?;
                pinned.as_mut_slice()?[..bytes.len()].copy_from_slice(bytes);
                RawHost::Cuda(pinned)
            }
            Inner::Emu(_) => RawHost::Emu(bytes.to_vec()),
        };
        Ok(HostBuffer {
            raw,
            len: data.len(),
            _element: PhantomData,
        })
    }

    /// A zeroed host buffer of `len` values, e.g. for [`Device::download_async`] to fill.
    pub fn host_zeros<T: Element>(&mut self, len: usize) -> Result<HostBuffer<T>> {
        let zero = T::zeroed();
        self.host_buffer(&vec![zero; len])
    }

    /// Queues a copy of all of `source` into `destination` (of the same length) on `stream`
    /// and returns without waiting on a GPU.
    pub fn upload_async<T: Element>(
        &mut self,
        stream: &Stream,
        source: &HostBuffer<T>,
        destination: &mut Buffer<T>,
    ) -> Result<()> {
        if source.len != destination.len {
            return Err(length_mismatch("upload_async", source.len, destination.len));
        }
        match (&mut self.inner, &source.raw, &mut destination.raw) {
            (Inner::Cuda(_), RawHost::Cuda(pinned), RawBuffer::Cuda(slice)) => {
                Ok(stream_of(stream)?.memcpy_htod(pinned, slice)?)
            }
            (Inner::Emu(emu), RawHost::Emu(bytes), RawBuffer::Emu(ptr)) => emu.write(*ptr, bytes),
            _ => Err(streams_of_another_backend()),
        }
    }

    /// Queues a copy of all of `source` into `destination` (of the same length) on `stream`
    /// and returns without waiting on a GPU; [`HostBuffer::to_vec`] waits for it.
    pub fn download_async<T: Element>(
        &mut self,
        stream: &Stream,
        source: &Buffer<T>,
        destination: &mut HostBuffer<T>,
    ) -> Result<()> {
        if source.len != destination.len {
            return Err(length_mismatch(
                "download_async",
                destination.len,
                source.len,
            ));
        }
        match (&mut self.inner, &source.raw, &mut destination.raw) {
            (Inner::Cuda(_), RawBuffer::Cuda(slice), RawHost::Cuda(pinned)) => {
                Ok(stream_of(stream)?.memcpy_dtoh(slice, pinned)?)
            }
            (Inner::Emu(emu), RawBuffer::Emu(ptr), RawHost::Emu(bytes)) => {
                *bytes = emu.read(*ptr, source.bytes())?;
                Ok(())
            }
            _ => Err(streams_of_another_backend()),
        }
    }

    /// Queues `kernel` on `stream` and returns without waiting on a GPU (no findings there);
    /// the emulator runs it to completion and returns its checkers' findings.
    pub fn launch_on(
        &mut self,
        stream: &Stream,
        kernel: &KernelSource,
        shape: LaunchShape,
        args: &[Arg<'_>],
    ) -> Result<LaunchReport> {
        match &mut self.inner {
            Inner::Cuda(cuda) => {
                let function = cuda.function(kernel)?;
                super::check_shape_for_function(&self.limits, kernel, &shape, &function)?;
                cuda.launch_on(stream_of(stream)?, &function, shape, args)?;
                Ok(LaunchReport::default())
            }
            Inner::Emu(_) => match stream.inner {
                StreamInner::Emu => self.launch(kernel, shape, args),
                StreamInner::Cuda(_) => Err(streams_of_another_backend()),
            },
        }
    }
}

fn stream_of(stream: &Stream) -> Result<&Arc<CudaStream>> {
    match &stream.inner {
        StreamInner::Cuda(stream) => Ok(stream),
        StreamInner::Emu => Err(streams_of_another_backend()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BackendChoice;

    #[test]
    fn the_emulator_runs_stream_work_in_call_order() {
        let mut device = Device::open(BackendChoice::Emu).unwrap();
        let streams = device.streams(2).unwrap();
        let host = device.host_buffer(&[1.0f32, 2.0, 3.0]).unwrap();
        let mut on_device = device.zeros::<f32>(3, "x").unwrap();
        device.fork(&streams).unwrap();
        device
            .upload_async(&streams[1], &host, &mut on_device)
            .unwrap();
        let mut back = device.host_zeros::<f32>(3).unwrap();
        device
            .download_async(&streams[0], &on_device, &mut back)
            .unwrap();
        device.join(&streams).unwrap();
        device.synchronize().unwrap();
        assert_eq!(back.to_vec().unwrap(), vec![1.0, 2.0, 3.0]);
        let mut short = device.zeros::<f32>(2, "short").unwrap();
        let error = device
            .upload_async(&streams[0], &host, &mut short)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("holds 3 values and the device buffer 2"),
            "{error}"
        );
    }
}
