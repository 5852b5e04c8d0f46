//! Racetrack's harness: every chapter runs its kernels through this crate.
//!
//! - [`Device`]: a real GPU (cudarc + NVRTC) or the PTX emulator, chosen by `--backend` or
//!   `RACETRACK_BACKEND`, with the same verbs for both.
//! - [`KernelSource`] and [`kernel!`]: `.cu` files embedded with their committed PTX.
//! - [`LaunchShape`] checked against [`DeviceLimits`] before any launch.
//! - [`Variant`] and [`Expect`]: the registry the binaries, tests and book share.
//! - [`verify`]: exact and error-bounded comparison with CPU references.
//! - [`report`]: tables, SVG plots, progress bars.

pub mod array_index;
pub mod backend;
mod build_deps;
pub mod check;
pub mod cli;
pub mod compile_cache;
pub mod cores;
pub mod device;
pub mod doctor;
mod emu_backend;
pub mod error;
pub mod kernel;
pub mod launch;
pub mod nvcc;
pub mod nvrtc;
pub mod provision;
pub mod ptx;
pub mod python_sites;
pub mod report;
pub mod run;
pub mod testing;
pub mod timings;
pub mod trace;
pub mod variant;
pub mod verify;
pub mod walk;

pub use backend::{BACKEND_ENV, BackendChoice, BackendKind};
pub use cudarc::driver::{DriverError, sys::CUresult as CudaResult};
pub use device::{
    Arg, Buffer, Device, Element, EmuSettings, Finding, FindingKind, GpuEvent, GpuStream, Gpus,
    HostBuffer, LaunchReport, Schedule, Stream, Timing, VendorTiming,
};
pub use error::{HarnessError, Result};
pub use kernel::{KernelSource, OwnBuild};
pub use launch::{DeviceLimits, Dim3, LaunchShape};
pub use variant::{Expect, Variant, find_variant};

pub use rand;
pub use rand_chacha;
