//! NCCL's `ncclAllReduce`, the vendor row of chapter 8's ring: loaded at run time like cuBLAS,
//! never needed to build or to run anything else. cudarc panics when the library or a symbol is
//! missing, so this module finds and checks it first; when anything is missing the row says so
//! and how to get it.

use std::sync::OnceLock;

use cudarc::driver::CudaSlice;
use cudarc::nccl::{Comm, ReduceOp, result as nccl, sys};

use super::vendor::{RuntimeLibrary, open_runtime_library};
use super::{Gpus, Inner, NCCL_HOW_TO_GET, VendorTiming, gpus::Many};
use crate::error::{HarnessError, Result};

/// Every NCCL function this module calls, checked before the first call.
const SYMBOLS: &[&str] = &[
    "ncclCommInitAll",
    "ncclCommDestroy",
    "ncclAllReduce",
    "ncclGroupStart",
    "ncclGroupEnd",
];

/// Loads NCCL once per process; the error is the sentence the row shows.
pub fn nccl_library() -> std::result::Result<(), &'static str> {
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(load)
        .as_ref()
        .map(|_| ())
        .map_err(|why| why.as_str())
}

fn load() -> std::result::Result<(), String> {
    let paths: Vec<_> = crate::nvrtc::find_nccl().into_iter().collect();
    open_runtime_library(
        RuntimeLibrary {
            name: "NCCL",
            file: "libnccl.so.2",
            how_to_get: NCCL_HOW_TO_GET,
            symbols: SYMBOLS,
            present: sys::is_culib_present,
            library: sys::culib,
        },
        &paths,
    )
}

fn nccl_error(what: &str, error: nccl::NcclError) -> HarnessError {
    HarnessError::Invalid(format!("NCCL {what} failed: {error:?}"))
}

impl Gpus {
    /// NCCL's in-place `ncclAllReduce` (sum) of each of `lens` floats on every device, one
    /// communicator per device made once by `ncclCommInitAll`, each size timed like
    /// [`Gpus::time_ms`]: the vendor row the hand-written ring is measured against.
    /// Unavailable on the emulator and without NCCL.
    pub fn time_nccl_all_reduce_ms(
        &mut self,
        lens: &[usize],
        repetitions: u32,
    ) -> Result<Vec<VendorTiming>> {
        let unavailable = |why: &str| vec![VendorTiming::Unavailable(why.to_string()); lens.len()];
        let Many::Cuda(devices) = &self.inner else {
            return Ok(unavailable(
                "NCCL runs only on NVIDIA GPUs; on the emulator the hand-written ring is the reference",
            ));
        };
        if let Err(why) = nccl_library() {
            return Ok(unavailable(why));
        }
        let streams = devices
            .iter()
            .map(|device| match &device.inner {
                Inner::Cuda(cuda) => Ok(cuda.context.new_stream()?),
                Inner::Emu(_) => Err(HarnessError::Invalid(
                    "an emulated device among GPUs".into(),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let largest = lens.iter().copied().max().unwrap_or(1).max(1);
        let mut buffers: Vec<CudaSlice<f32>> = streams
            .iter()
            .map(|stream| Ok(stream.alloc_zeros::<f32>(largest)?))
            .collect::<Result<_>>()?;
        let comms = Comm::from_devices(streams).map_err(|e| nccl_error("init", e))?;
        let mut times = Vec::with_capacity(lens.len());
        for &len in lens {
            let ms = self.time_ms(repetitions, |_| {
                // One thread drives every device's communicator, so the calls form one group.
                nccl::group_start().map_err(|e| nccl_error("group start", e))?;
                for (comm, buffer) in comms.iter().zip(buffers.iter_mut()) {
                    comm.all_reduce_in_place(&mut buffer.slice_mut(0..len.max(1)), &ReduceOp::Sum)
                        .map_err(|e| nccl_error("all-reduce", e))?;
                }
                nccl::group_end().map_err(|e| nccl_error("group end", e))?;
                Ok(())
            })?;
            times.push(ms.map_or_else(
                || VendorTiming::Unavailable("not timed".into()),
                VendorTiming::Ms,
            ));
        }
        drop(comms);
        Ok(times)
    }
}
