//! What a launch is given: its grid and block, and its arguments.

use super::allocs::DevicePtr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    U8(u8),
    U16(u16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Ptr(DevicePtr),
    /// A struct passed by value: its bytes as C lays them out.
    Bytes(Vec<u8>),
}

impl KernelArg {
    pub(crate) fn bytes(&self) -> Vec<u8> {
        match *self {
            KernelArg::Bytes(ref bytes) => bytes.clone(),
            KernelArg::U8(v) => vec![v],
            KernelArg::U16(v) => v.to_le_bytes().to_vec(),
            KernelArg::U32(v) => v.to_le_bytes().to_vec(),
            KernelArg::I32(v) => v.to_le_bytes().to_vec(),
            KernelArg::U64(v) => v.to_le_bytes().to_vec(),
            KernelArg::I64(v) => v.to_le_bytes().to_vec(),
            KernelArg::F32(v) => v.to_le_bytes().to_vec(),
            KernelArg::F64(v) => v.to_le_bytes().to_vec(),
            KernelArg::Ptr(p) => p.0.to_le_bytes().to_vec(),
        }
    }
}
