use std::path::PathBuf;

/// Everything the harness can refuse or fail at, each as one sentence a learner can act on.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error(
        "no NVIDIA driver was found (libcuda could not be loaded), so the cuda backend cannot run; use --backend emu (or auto) to run on Racetrack's PTX emulator"
    )]
    NoDriver,
    #[error(
        "the NVIDIA driver is installed but reports no usable CUDA device ({0}); use --backend emu to run on the emulator"
    )]
    NoDevice(String),
    #[error("a CUDA driver call failed: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    #[error(
        "NVRTC (libnvrtc.so.13) was not found in LD_LIBRARY_PATH, CUDA_PATH, /usr/local/cuda or a pip-installed nvidia/cu13/lib; install it with `pip install {pinned}`"
    )]
    NoNvrtc { pinned: &'static str },
    #[error("{path} does not compile (NVRTC's log follows):\n{log}")]
    Compile { path: String, log: String },
    #[error(
        "{source_path} has changed since {ptx_path} was generated and NVRTC is not installed to recompile it; install it with `pip install {pinned}` (never runs stale PTX)"
    )]
    StalePtx {
        source_path: String,
        ptx_path: String,
        pinned: &'static str,
    },
    #[error("cannot launch {entry} with grid {grid} × block {block}: {reason}")]
    BadLaunch {
        entry: String,
        grid: String,
        block: String,
        reason: String,
    },
    #[error("unknown backend `{0}`: expected auto, cuda or emu")]
    UnknownBackend(String),
    #[error("{0}")]
    Emulator(#[from] ptx_emu::EmuError),
    #[error("kernel {entry} did not finish on the emulator: {reason}")]
    EmulatorStopped { entry: String, reason: String },
    #[error(
        "{variant} is emulator-only (it can hang a real GPU) and is not run on the cuda backend"
    )]
    EmulatorOnly { variant: String },
    #[error("cannot {action} {path}: {message}")]
    Io {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error("cannot draw {path}: {message}")]
    Plot { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl HarnessError {
    /// `action` is the verb that failed (`read`, `write`, `create`), so the sentence says what
    /// was attempted rather than guessing from the error.
    pub fn io(action: &'static str, path: &std::path::Path, error: std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

pub type Result<T, E = HarnessError> = std::result::Result<T, E>;
