use std::fmt;
use std::str::FromStr;

use crate::error::{HarnessError, Result};

/// The environment variable tests read to pick a backend (`auto`, `cuda` or `emu`).
pub const BACKEND_ENV: &str = "RACETRACK_BACKEND";

/// What the user asked for with `--backend` or `RACETRACK_BACKEND`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendChoice {
    /// cuda when a driver and a device exist, else the emulator
    #[default]
    Auto,
    /// a real NVIDIA GPU through the CUDA driver
    Cuda,
    /// Racetrack's PTX emulator, with its race, sync and memory checkers
    Emu,
}

impl FromStr for BackendChoice {
    type Err = HarnessError;

    fn from_str(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Ok(Self::Auto),
            "cuda" | "gpu" => Ok(Self::Cuda),
            "emu" | "emulator" => Ok(Self::Emu),
            _ => Err(HarnessError::UnknownBackend(text.to_string())),
        }
    }
}

impl BackendChoice {
    /// Reads `RACETRACK_BACKEND`; unset means `auto`.
    pub fn from_env() -> Result<Self> {
        match std::env::var(BACKEND_ENV) {
            Ok(value) => value.parse(),
            Err(_) => Ok(Self::Auto),
        }
    }
}

/// The backend a [`crate::Device`] actually runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Cuda,
    Emu,
}

impl BackendKind {
    pub fn is_cuda(self) -> bool {
        self == Self::Cuda
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cuda => "cuda",
            Self::Emu => "emu",
        })
    }
}

/// Whether libcuda can be loaded. cudarc panics on its first call when it cannot, so every
/// path into the driver asks this first.
pub fn cuda_driver_present() -> bool {
    // SAFETY: only tries to dlopen libcuda under its usual names and drops the handle.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_name_and_rejects_others() {
        assert_eq!(
            "auto".parse::<BackendChoice>().unwrap(),
            BackendChoice::Auto
        );
        assert_eq!(
            "CUDA".parse::<BackendChoice>().unwrap(),
            BackendChoice::Cuda
        );
        assert_eq!(
            " emu ".parse::<BackendChoice>().unwrap(),
            BackendChoice::Emu
        );
        let error = "opencl".parse::<BackendChoice>().unwrap_err().to_string();
        assert_eq!(
            error,
            "unknown backend `opencl`: expected auto, cuda or emu"
        );
    }
}
