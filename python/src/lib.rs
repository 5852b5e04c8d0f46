//! `racetrack._native`: the part of the Python package `racetrack` written in Rust.
//!
//! The faces (`racetrack.cuda` for Numba, `racetrack.pycuda`, `racetrack.cupy`) are Python; they
//! all stand on the few verbs here (see python/README.md, "The native core"):
//! - [`compile::compile_cuda`]: CUDA C to PTX by the pinned NVRTC, which Racetrack provisions
//!   itself when it is missing;
//! - [`device::Emulator`]: device memory, PTX modules, launches with typed arguments and the
//!   checkers' options;
//! - [`findings::Finding`] and [`device::LaunchResult`]: what a launch found, with the text
//!   `racetrack check` prints.

use pyo3::prelude::*;

mod args;
mod compile;
mod device;
mod findings;
mod interrupt;
mod options;

pyo3::create_exception!(
    _native,
    CompileError,
    pyo3::exceptions::PyException,
    "NVRTC refused the source: the message is its log, naming FILE:LINE."
);
pyo3::create_exception!(
    _native,
    EmulatorError,
    pyo3::exceptions::PyException,
    "The emulator could not run a launch (bad PTX, an instruction it does not run, a bad argument)."
);

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("CompileError", py.get_type::<CompileError>())?;
    module.add("EmulatorError", py.get_type::<EmulatorError>())?;
    module.add_class::<device::Emulator>()?;
    module.add_class::<device::PtxModule>()?;
    module.add_class::<device::LaunchResult>()?;
    module.add_class::<findings::Finding>()?;
    module.add_class::<options::Options>()?;
    module.add_class::<compile::CompiledKernel>()?;
    module.add_function(wrap_pyfunction!(compile::compile_cuda, module)?)?;
    module.add_function(wrap_pyfunction!(compile::compile_device_functions, module)?)?;
    module.add_function(wrap_pyfunction!(device::cooperative_grid_limit, module)?)?;
    module.add_function(wrap_pyfunction!(compile::nvrtc_version, module)?)?;
    module.add("EMU_ARCH", harness::nvrtc::EMU_ARCH)?;
    Ok(())
}
