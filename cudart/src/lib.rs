//! Racetrack's CUDA runtime: the runtime API (`cudaMalloc`, `cudaMemcpy`, `<<<…>>>`, streams,
//! events, errors) over the PTX emulator, so that a whole program built by nvcc with
//! `-cudart shared` runs without a GPU, every launch checked. `racetrack run` loads it in place
//! of NVIDIA's `libcudart.so.13`.

pub mod fatbin;
