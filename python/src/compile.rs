//! CUDA C to PTX for the emulator: the front end `racetrack check` uses (host code left out,
//! C++ kernel names, CUDA's headers), with NVRTC and the headers provisioned by Racetrack when
//! this machine has none.

use harness::check::front::{CompileFlags, CppStd};
use harness::check::{CheckError, Program};
use harness::error::HarnessError;
use pyo3::prelude::*;

use crate::CompileError;

/// One kernel of a CUDA C source, compiled for the emulator.
#[pyclass(module = "racetrack._native", frozen, get_all)]
#[derive(Debug)]
pub struct CompiledKernel {
    /// The PTX (for `compute_90`, with line info naming `path`).
    pub ptx: String,
    /// The name the PTX defines the kernel under (mangled for a C++ kernel).
    pub symbol: String,
    /// The kernel as the caller named it.
    pub entry: String,
    /// Each parameter's PTX type, e.g. `u64`, `f32`, `b8[12]` for a struct by value.
    pub param_types: Vec<String>,
    /// Each parameter's size in bytes.
    pub param_bytes: Vec<usize>,
    /// The C++ parameters (`const float *x`), one per PTX parameter; empty when unknown.
    pub cpp_params: Vec<String>,
}

#[pymethods]
impl CompiledKernel {
    fn __repr__(&self) -> String {
        format!(
            "CompiledKernel(entry={:?}, symbol={:?}, params={:?})",
            self.entry, self.symbol, self.param_types
        )
    }
}

/// Compiles kernel `entry` of `source`, which reports and NVRTC's errors name as `path`.
///
/// `include_dirs` and `defines` are `-I` and `-D`; `std` is `"c++17"` or `"c++20"`. Raises
/// `CompileError` with NVRTC's log when the source does not compile, and `ValueError` when
/// `entry` names no kernel of it.
#[pyfunction]
#[pyo3(signature = (source, path, entry, include_dirs = Vec::new(), defines = Vec::new(), std = None))]
pub fn compile_cuda(
    py: Python<'_>,
    source: String,
    path: String,
    entry: String,
    include_dirs: Vec<String>,
    defines: Vec<String>,
    std: Option<String>,
) -> PyResult<CompiledKernel> {
    let std = match std.as_deref() {
        None => None,
        Some("c++17") => Some(CppStd::Cpp17),
        Some("c++20") => Some(CppStd::Cpp20),
        Some(other) => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "std must be \"c++17\" or \"c++20\", not {other:?}"
            )));
        }
    };
    let flags = CompileFlags {
        include_dirs: include_dirs.into_iter().map(Into::into).collect(),
        defines,
        std,
    };
    py.detach(|| {
        let program = Program::new(&path, source, &flags);
        let kernel = program.kernel(&entry)?;
        let ptx = kernel.source().emulator_ptx()?;
        Ok::<_, CheckError>(CompiledKernel {
            ptx,
            symbol: kernel.source().symbol().to_string(),
            entry,
            param_types: kernel
                .signature()
                .params
                .iter()
                .map(|param| param.ptx_type.clone())
                .collect(),
            param_bytes: kernel
                .signature()
                .params
                .iter()
                .map(|param| param.bytes)
                .collect(),
            cpp_params: kernel.cpp_params().to_vec(),
        })
    })
    .map_err(compile_error)
}

/// Compiles the device functions of `source` (a file of `extern "C" __device__` functions, as
/// Numba's `cuda.declare_device(…, link=…)` links) to relocatable PTX, which the emulator links
/// with the kernels that call them. Errors as [`compile_cuda`]'s.
#[pyfunction]
#[pyo3(signature = (source, path, include_dirs = Vec::new()))]
pub fn compile_device_functions(
    py: Python<'_>,
    source: String,
    path: String,
    include_dirs: Vec<String>,
) -> PyResult<String> {
    py.detach(|| {
        let mut options = vec!["--relocatable-device-code=true".to_string()];
        options.extend(include_dirs.iter().map(|dir| format!("-I{dir}")));
        options.extend(
            harness::nvrtc::cuda_include_dirs()
                .iter()
                .map(|dir| format!("-I{}", dir.display())),
        );
        let extras = harness::nvrtc::Extras {
            options,
            ..Default::default()
        };
        harness::nvrtc::compile_with(&path, &source, harness::nvrtc::EMU_ARCH, &extras)
            .map(|compiled| compiled.ptx)
            .map_err(|error| match error {
                HarnessError::Compile { .. } => CompileError::new_err(error.to_string()),
                other => pyo3::exceptions::PyRuntimeError::new_err(other.to_string()),
            })
    })
}

/// A compile failure as Python sees it: NVRTC's log as `CompileError`, a kernel that is not
/// there as `ValueError`, anything else (no NVRTC and no way to fetch it) as `RuntimeError`.
fn compile_error(error: CheckError) -> PyErr {
    match error {
        CheckError::Compile { .. } | CheckError::Harness(HarnessError::Compile { .. }) => {
            CompileError::new_err(error.to_string())
        }
        CheckError::Entry(_) | CheckError::Refused(_) => {
            pyo3::exceptions::PyValueError::new_err(error.to_string())
        }
        other => pyo3::exceptions::PyRuntimeError::new_err(other.to_string()),
    }
}

/// The NVRTC this process compiles with, `(major, minor)`, fetching the pinned one into
/// Racetrack's cache when none is installed.
#[pyfunction]
pub fn nvrtc_version(py: Python<'_>) -> PyResult<(i32, i32)> {
    py.detach(harness::nvrtc::require_nvrtc)
        .map(|found| found.version)
        .map_err(|error| pyo3::exceptions::PyRuntimeError::new_err(error.to_string()))
}
