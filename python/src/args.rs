//! Kernel arguments from Python: `(type, value)` pairs, each type explicit as a C kernel's
//! parameter is, so that nothing is guessed from a Python `int` or `float`.

use ptx_emu::{DevicePtr, KernelArg};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// The type names an argument may carry.
pub const ARG_TYPES: &str =
    "u8, i8, u16, i16, u32, i32, u64, i64, f16 (bits), bf16 (bits), f32, f64, bool, ptr, bytes";

/// One argument: `("f32", 1.5)`, `("i64", -3)`, `("ptr", address)`, `("bytes", b"...")` for a
/// struct passed by value.
pub fn kernel_arg(index: usize, arg: &Bound<'_, PyAny>) -> PyResult<KernelArg> {
    let pair = arg.cast::<PyTuple>().map_err(|_| {
        PyTypeError::new_err(format!(
            "argument {index} must be a (type, value) pair, e.g. (\"f32\", 1.5); types: {ARG_TYPES}"
        ))
    })?;
    if pair.len() != 2 {
        return Err(PyTypeError::new_err(format!(
            "argument {index} must be a (type, value) pair, not {} items",
            pair.len()
        )));
    }
    let ty: String = pair.get_item(0)?.extract()?;
    let value = pair.get_item(1)?;
    let out_of_range = |error: PyErr| {
        PyValueError::new_err(format!(
            "argument {index} ({ty}): {value} does not fit: {error}"
        ))
    };
    Ok(match ty.as_str() {
        "u8" => KernelArg::U8(value.extract().map_err(out_of_range)?),
        "bool" => KernelArg::U8(u8::from(value.is_truthy()?)),
        "i8" => KernelArg::U8(value.extract::<i8>().map_err(out_of_range)? as u8),
        "u16" | "f16" | "bf16" => KernelArg::U16(value.extract().map_err(out_of_range)?),
        "i16" => KernelArg::U16(value.extract::<i16>().map_err(out_of_range)? as u16),
        "u32" => KernelArg::U32(value.extract().map_err(out_of_range)?),
        "i32" => KernelArg::I32(value.extract().map_err(out_of_range)?),
        "u64" => KernelArg::U64(value.extract().map_err(out_of_range)?),
        "i64" => KernelArg::I64(value.extract().map_err(out_of_range)?),
        "f32" => KernelArg::F32(value.extract::<f64>().map_err(out_of_range)? as f32),
        "f64" => KernelArg::F64(value.extract().map_err(out_of_range)?),
        "ptr" => KernelArg::Ptr(DevicePtr(value.extract().map_err(out_of_range)?)),
        "bytes" => KernelArg::Bytes(
            value
                .cast::<PyBytes>()
                .map_err(|_| {
                    PyTypeError::new_err(format!("argument {index} (bytes) must be bytes"))
                })?
                .as_bytes()
                .to_vec(),
        ),
        other => {
            return Err(PyValueError::new_err(format!(
                "argument {index}: unknown type {other:?}; types: {ARG_TYPES}"
            )));
        }
    })
}
