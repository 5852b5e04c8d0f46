//! The vendor library's rate on the same GPU in the same run: cuBLAS's `cublasSgemm` and
//! `cublasSdot`, the yardsticks of the chapters' "How fast can it go" climbs.
//!
//! cuBLAS is loaded at run time, like the driver and NVRTC, and is never needed to build or to
//! run anything else. cudarc panics when the library or one of its symbols is missing, so this
//! module opens it itself first (by full path from the usual places, as for NVRTC) and checks
//! every symbol it calls; when anything is missing the reference row says so and how to get it.

use std::path::PathBuf;
use std::sync::OnceLock;

use cudarc::cublas::{result as blas, sys};
use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::{Buffer, CUBLAS_HOW_TO_GET, Device, Inner, RawBuffer, VendorTiming, foreign_buffer};
use crate::error::{HarnessError, Result};

/// Every cuBLAS function this module calls, checked before the first call.
const SYMBOLS: &[&str] = &[
    "cublasCreate_v2",
    "cublasDestroy_v2",
    "cublasSetStream_v2",
    "cublasSetPointerMode_v2",
    "cublasSetMathMode",
    "cublasSgemm_v2",
    "cublasSdot_v2",
];

/// Loads cuBLAS once per process; the error is the sentence a reference row shows.
pub fn cublas() -> std::result::Result<(), &'static str> {
    static LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(load)
        .as_ref()
        .map(|_| ())
        .map_err(|why| why.as_str())
}

fn load() -> std::result::Result<(), String> {
    // libcublas needs libcublasLt beside it; loading that first by full path lets the loader
    // resolve it when its folder is not on the loader's path.
    let paths: Vec<PathBuf> = crate::nvrtc::find_library("libcublas.so.13")
        .map(|main| vec![main.with_file_name("libcublasLt.so.13"), main])
        .unwrap_or_default();
    open_runtime_library(
        RuntimeLibrary {
            name: "cuBLAS",
            file: "libcublas.so.13",
            how_to_get: CUBLAS_HOW_TO_GET,
            symbols: SYMBOLS,
            present: sys::is_culib_present,
            library: sys::culib,
        },
        &paths,
    )
}

/// A vendor library cudarc opens by name at run time, and what to say when it cannot.
pub(super) struct RuntimeLibrary {
    pub(super) name: &'static str,
    pub(super) file: &'static str,
    pub(super) how_to_get: &'static str,
    /// Every function the caller will use, checked before the first call.
    pub(super) symbols: &'static [&'static str],
    /// cudarc's `is_culib_present` and `culib` for the library.
    pub(super) present: unsafe fn() -> bool,
    pub(super) library: unsafe fn() -> &'static libloading::Library,
}

/// Opens `paths` by full path (so cudarc then finds the library by name even outside the
/// loader's path), then checks that cudarc finds it and every symbol, because cudarc panics
/// when either is missing. The error is the sentence a vendor row shows.
pub(super) fn open_runtime_library(
    wanted: RuntimeLibrary,
    paths: &[PathBuf],
) -> std::result::Result<(), String> {
    for path in paths {
        // SAFETY: the vendor libraries have no initialisers with preconditions; the handles
        // are leaked on purpose so the libraries stay mapped for cudarc.
        if let Ok(library) = unsafe { libloading::Library::new(path) } {
            std::mem::forget(library);
        }
    }
    let RuntimeLibrary {
        name,
        file,
        how_to_get,
        ..
    } = wanted;
    // SAFETY: only dlopens the library under cudarc's names and drops the handle.
    if !unsafe { (wanted.present)() } {
        return Err(format!("{name} ({file}) was not found: {how_to_get}"));
    }
    // SAFETY: present (checked above), so cudarc's loader finds it instead of panicking.
    let library = unsafe { (wanted.library)() };
    for symbol in wanted.symbols {
        // SAFETY: only looks the symbol up; its type is irrelevant to the lookup.
        if unsafe { library.get::<*const ()>(symbol.as_bytes()) }.is_err() {
            return Err(format!(
                "the {name} found lacks {symbol} (too old?): {how_to_get}"
            ));
        }
    }
    Ok(())
}

/// A cuBLAS handle on the device's stream, destroyed with the device.
pub(super) struct Blas {
    handle: sys::cublasHandle_t,
}

// SAFETY: cuBLAS allows a handle's functions to be called from any host thread (its "Thread
// Safety" section), and a `Blas` is reached only through `&mut Device`, so never from two threads
// at once; `Device::blas` makes the device's context current on the calling thread first.
unsafe impl Send for Blas {}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created by `blas::create_handle` and destroyed only here.
        let _ = unsafe { blas::destroy_handle(self.handle) };
    }
}

fn cublas_error(what: &str, error: blas::CublasError) -> HarnessError {
    HarnessError::Invalid(format!("cuBLAS {what} failed: {error}"))
}

impl Device {
    /// The cuBLAS handle, created on first use; `Err(sentence)` when there is no cuBLAS or
    /// this is the emulator.
    fn blas(&mut self) -> Result<std::result::Result<sys::cublasHandle_t, String>> {
        let Inner::Cuda(cuda) = &mut self.inner else {
            return Ok(Err(
                "the emulator models no time, so there is no vendor rate to compare with".into(),
            ));
        };
        if let Err(why) = cublas() {
            return Ok(Err(why.to_string()));
        }
        // The handle may have been made on another thread: cuBLAS works in the current context.
        cuda.context.bind_to_thread()?;
        if cuda.blas.is_none() {
            let handle = blas::create_handle().map_err(|e| cublas_error("create", e))?;
            let created = Blas { handle };
            // SAFETY: the handle was just created and the stream lives as long as the device.
            unsafe { blas::set_stream(handle, cuda.stream.cu_stream() as sys::cudaStream_t) }
                .map_err(|e| cublas_error("set stream", e))?;
            // Plain FP32 arithmetic: the chapters' kernels use no tensor cores either.
            // SAFETY: valid handle.
            unsafe { sys::cublasSetMathMode(handle, sys::cublasMath_t::CUBLAS_DEFAULT_MATH) }
                .result()
                .map_err(|e| cublas_error("set math mode", e))?;
            // Results go to device memory, so timed calls queue without waiting for the host.
            // SAFETY: valid handle.
            unsafe {
                sys::cublasSetPointerMode_v2(
                    handle,
                    sys::cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE,
                )
            }
            .result()
            .map_err(|e| cublas_error("set pointer mode", e))?;
            cuda.blas = Some(created);
        }
        Ok(Ok(cuda
            .blas
            .as_ref()
            .map(|b| b.handle)
            .unwrap_or(std::ptr::null_mut())))
    }

    /// cuBLAS's `cublasSgemm` computing the row-major `c (m×n) = a (m×k) · b (k×n)` in FP32,
    /// timed like [`Device::time_ms`] (one warm-up, then the mean of `repetitions`); `c` holds
    /// the product afterwards, so callers can check it.
    pub fn sgemm_reference_ms(
        &mut self,
        a: &Buffer<f32>,
        b: &Buffer<f32>,
        c: &mut Buffer<f32>,
        (m, n, k): (u32, u32, u32),
        repetitions: u32,
    ) -> Result<VendorTiming> {
        let (mm, nn, kk) = (m as usize, n as usize, k as usize);
        if a.len() < mm * kk || b.len() < kk * nn || c.len() < mm * nn {
            return Err(HarnessError::Invalid(format!(
                "sgemm of {m}×{k} by {k}×{n} needs buffers of {}, {} and {} floats, not {}, {} and {}",
                mm * kk,
                kk * nn,
                mm * nn,
                a.len(),
                b.len(),
                c.len()
            )));
        }
        let to_int = |value: u32| {
            i32::try_from(value).map_err(|_| {
                HarnessError::Invalid(format!("cuBLAS takes sizes below 2³¹, not {value}"))
            })
        };
        let (m, n, k) = (to_int(m)?, to_int(n)?, to_int(k)?);
        let handle = match self.blas()? {
            Ok(handle) => handle,
            Err(why) => return Ok(VendorTiming::Unavailable(why)),
        };
        let Inner::Cuda(cuda) = &self.inner else {
            unreachable!("blas() answers only on the cuda backend")
        };
        let stream = cuda.stream.clone();
        let (RawBuffer::Cuda(a), RawBuffer::Cuda(b)) = (&a.raw, &b.raw) else {
            return Err(foreign_buffer());
        };
        let RawBuffer::Cuda(c) = &mut c.raw else {
            return Err(foreign_buffer());
        };
        let (a_ptr, _a_sync) = a.device_ptr(&stream);
        let (b_ptr, _b_sync) = b.device_ptr(&stream);
        let (c_ptr, _c_sync) = c.device_ptr_mut(&stream);
        // The scalars live on the device, as the pointer mode says.
        let alpha = self.upload(&[1.0f32], "alpha")?;
        let beta = self.upload(&[0.0f32], "beta")?;
        let (RawBuffer::Cuda(alpha_slice), RawBuffer::Cuda(beta_slice)) = (&alpha.raw, &beta.raw)
        else {
            return Err(foreign_buffer());
        };
        let (alpha_ptr, _alpha_sync) = alpha_slice.device_ptr(&stream);
        let (beta_ptr, _beta_sync) = beta_slice.device_ptr(&stream);
        // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: the same bytes, with A and B swapped.
        let timed = self.time_ms(repetitions, |_| {
            // SAFETY: every pointer is a live allocation of at least the size checked above,
            // on the stream the handle uses.
            unsafe {
                blas::sgemm(
                    handle,
                    sys::cublasOperation_t::CUBLAS_OP_N,
                    sys::cublasOperation_t::CUBLAS_OP_N,
                    n,
                    m,
                    k,
                    alpha_ptr as *const f32,
                    b_ptr as *const f32,
                    n,
                    a_ptr as *const f32,
                    k,
                    beta_ptr as *const f32,
                    c_ptr as *mut f32,
                    n,
                )
            }
            .map_err(|e| cublas_error("sgemm", e))
        })?;
        Ok(timed.map_or_else(
            || VendorTiming::Unavailable("not timed".into()),
            VendorTiming::Ms,
        ))
    }

    /// cuBLAS's `cublasSdot` of `a` and `b` into `result[0]`, timed like [`Device::time_ms`];
    /// `result` holds the dot product afterwards, so callers can check it.
    pub fn sdot_reference_ms(
        &mut self,
        a: &Buffer<f32>,
        b: &Buffer<f32>,
        result: &mut Buffer<f32>,
        repetitions: u32,
    ) -> Result<VendorTiming> {
        if a.len() != b.len() || result.is_empty() {
            return Err(HarnessError::Invalid(format!(
                "sdot needs two vectors of one length and room for the result, not {}, {} and {}",
                a.len(),
                b.len(),
                result.len()
            )));
        }
        let n = i32::try_from(a.len()).map_err(|_| {
            HarnessError::Invalid(format!("cuBLAS takes lengths below 2³¹, not {}", a.len()))
        })?;
        let handle = match self.blas()? {
            Ok(handle) => handle,
            Err(why) => return Ok(VendorTiming::Unavailable(why)),
        };
        let Inner::Cuda(cuda) = &self.inner else {
            unreachable!("blas() answers only on the cuda backend")
        };
        let stream = cuda.stream.clone();
        let (RawBuffer::Cuda(a), RawBuffer::Cuda(b)) = (&a.raw, &b.raw) else {
            return Err(foreign_buffer());
        };
        let RawBuffer::Cuda(result) = &mut result.raw else {
            return Err(foreign_buffer());
        };
        let (a_ptr, _a_sync) = a.device_ptr(&stream);
        let (b_ptr, _b_sync) = b.device_ptr(&stream);
        let (result_ptr, _result_sync) = result.device_ptr_mut(&stream);
        let timed = self.time_ms(repetitions, |_| {
            // SAFETY: both vectors hold n floats and result at least one, on the handle's
            // stream; the pointer mode is device, so result is a device address.
            unsafe {
                sys::cublasSdot_v2(
                    handle,
                    n,
                    a_ptr as *const f32,
                    1,
                    b_ptr as *const f32,
                    1,
                    result_ptr as *mut f32,
                )
            }
            .result()
            .map_err(|e| cublas_error("sdot", e))
        })?;
        Ok(timed.map_or_else(
            || VendorTiming::Unavailable("not timed".into()),
            VendorTiming::Ms,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emulator_names_why_it_has_no_reference() {
        let mut device = Device::open(crate::BackendChoice::Emu).expect("the emulator opens");
        let a = device.upload(&[1.0f32; 4], "a").expect("upload");
        let mut c = device.zeros::<f32>(4, "c").expect("zeros");
        match device
            .sgemm_reference_ms(&a, &a, &mut c, (2, 2, 2), 1)
            .expect("no error")
        {
            VendorTiming::Unavailable(why) => assert!(why.contains("emulator"), "{why}"),
            other => panic!("the emulator timed cuBLAS: {other:?}"),
        }
        let error = device
            .sgemm_reference_ms(&a, &a, &mut c, (4, 4, 4), 1)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("needs buffers of 16, 16 and 16 floats"),
            "{error}"
        );
        let mut short = device.zeros::<f32>(0, "r").expect("zeros");
        let error = device
            .sdot_reference_ms(&a, &a, &mut short, 1)
            .unwrap_err()
            .to_string();
        assert!(error.contains("room for the result"), "{error}");
    }

    #[test]
    fn a_missing_cublas_is_a_sentence_with_what_to_install() {
        // Where cuBLAS is installed this checks only that loading it does not panic.
        if let Err(why) = cublas() {
            assert!(why.contains("pip install nvidia-cublas"), "{why}");
            assert!(!why.contains('\n'), "{why}");
        }
    }
}
