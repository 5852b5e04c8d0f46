//! Racetrack's CUDA runtime: the runtime API (`cudaMalloc`, `cudaMemcpy`, `<<<…>>>`, streams,
//! events, errors) over the PTX emulator, so that a whole program built by nvcc with
//! `-cudart shared` runs without a GPU, every launch checked. `racetrack run` loads it in place
//! of NVIDIA's `libcudart.so.13`.
//!
//! Every exported function is the C API's: it takes the runtime's lock, never unwinds into the
//! program, and returns the error CUDA would. `cudart/README.md` lists what is covered.

// The exported functions are CUDA's C API: their safety contract is CUDA's documentation of
// each call (valid pointers where it asks for them), not something this crate can restate.
#![allow(clippy::missing_safety_doc)]

pub mod abi;
pub mod device;
pub mod errors;
mod exit;
pub mod fatbin;
pub mod graphs;
pub mod host_register;
mod interrupt;
pub mod launch;
mod managed;
pub mod memory;
mod not_emulated;
mod out;
mod per_thread;
mod progress;
pub mod register;
mod report;
pub mod resources;
pub mod runtime;
pub mod site;
pub mod streams;
mod timings;

pub use out::{FINDINGS_ENV, LOG_ENV, PREFIX};

/// The runtime allocates from its own heap (mimalloc's, mapped apart), not the program's:
/// what the emulator allocates and frees at registration and in every launch would otherwise
/// be handed back to the program's next `malloc` with the emulator's bytes in it, where beside
/// NVIDIA's runtime a program finds fresh memory. Programs that read memory they never wrote
/// (Rodinia's particle filters do) then behave as they do on a GPU.
#[global_allocator]
static RUNTIME_HEAP: mimalloc::MiMalloc = mimalloc::MiMalloc;
pub use runtime::{CHECKS_OFF_ENV, DEVICES_ENV, SCHEDULE_ENV};
