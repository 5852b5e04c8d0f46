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
    #[error(
        "this needs {needed} GPUs and the driver reports {found}; use --backend emu to run on that many emulated devices"
    )]
    TooFewGpus { found: usize, needed: usize },
    /// Not a `#[source]`: the message already quotes it, and a reporter that prints the chain
    /// (anyhow's `{:#}`) would say it twice.
    #[error("a CUDA driver call failed: {}", driver_words(.0))]
    Driver(cudarc::driver::DriverError),
    /// A driver call on one of several devices, with what it was doing there: the launch of
    /// which kernel, which copy, which stream operation.
    #[error("{operation} on device {device} failed: {}", driver_words(.error))]
    DeviceCall {
        operation: String,
        device: usize,
        error: cudarc::driver::DriverError,
    },
    /// Anything that went wrong while a variant ran, with the variant's name first.
    #[error("{variant}: {error}")]
    InVariant {
        variant: String,
        error: Box<HarnessError>,
    },
    /// `racetrack run` cannot build or run the program: one sentence (or nvcc's log) saying why.
    #[error("{0}")]
    Run(String),
    /// NVRTC is nowhere and could not be fetched: the sentence says why and what to run.
    #[error("{0}")]
    NoNvrtc(String),
    /// CUDA's headers are nowhere and could not be fetched, as for [`HarnessError::NoNvrtc`].
    #[error("{0}")]
    NoCudaHeaders(String),
    /// nvcc 13.0 is nowhere and could not be fetched, or RACETRACK_NVCC names another: the
    /// sentence says why and what to do.
    #[error("{0}")]
    NoNvcc(String),
    /// No C++ compiler for nvcc's host code; the sentence says what to install.
    #[error("{0}")]
    NoHostCompiler(String),
    #[error("{path} does not compile (NVRTC's log follows):\n{log}")]
    Compile { path: String, log: String },
    #[error(
        "{source_path} has changed since {ptx_path} was generated, and it cannot be compiled again (Racetrack never runs stale PTX): {why}"
    )]
    StalePtx {
        source_path: String,
        ptx_path: String,
        why: String,
    },
    #[error("cannot launch {entry} with grid {grid} × block {block}: {reason}")]
    BadLaunch {
        entry: String,
        grid: String,
        block: String,
        reason: String,
    },
    #[error(
        "{entry} failed an assert() on the GPU (the messages above say where); the GPU context cannot be used again in this process, and `--backend emu` reports the failure as a finding"
    )]
    DeviceAssert { entry: String },
    #[error("unknown backend `{0}`: expected auto, cuda or emu")]
    UnknownBackend(String),
    #[error(transparent)]
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

impl HarnessError {
    /// This error as met while running `variant`, which the message then names first.
    pub fn in_variant(self, variant: &str) -> Self {
        match self {
            Self::InVariant { .. } => self,
            error => Self::InVariant {
                variant: variant.to_string(),
                error: Box::new(error),
            },
        }
    }

    /// The driver's error code, when a driver call failed.
    pub fn driver_error(&self) -> Option<cudarc::driver::DriverError> {
        match self {
            Self::Driver(error) | Self::DeviceCall { error, .. } => Some(*error),
            Self::InVariant { error, .. } => error.driver_error(),
            _ => None,
        }
    }
}

/// `CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)`: the code to search
/// for and the driver's own sentence.
fn driver_words(error: &cudarc::driver::DriverError) -> String {
    // Only the driver knows its sentences, and cudarc panics when asked without one.
    if !crate::backend::cuda_driver_present() {
        return format!("{:?}", error.0);
    }
    let name = error.error_name().map(|n| n.to_string_lossy().into_owned());
    let words = error
        .error_string()
        .map(|w| w.to_string_lossy().into_owned());
    match (name, words) {
        (Ok(name), Ok(words)) => format!("{name} ({words})"),
        (Ok(name), Err(_)) => name,
        _ => format!("{:?}", error.0),
    }
}

impl From<cudarc::driver::DriverError> for HarnessError {
    fn from(error: cudarc::driver::DriverError) -> Self {
        Self::Driver(error)
    }
}

pub type Result<T, E = HarnessError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// What the binaries print: anyhow's `{:#}` joins every error of the chain with `: `.
    fn as_printed(error: impl std::error::Error + Send + Sync + 'static) -> String {
        format!("{:#}", anyhow::Error::new(error))
    }

    #[test]
    fn errors_wrapped_from_other_crates_are_printed_once() {
        let parse = ptx_emu::EmuError::Parse {
            line: 44,
            message: "call to undefined function `vprintf`".into(),
        };
        assert_eq!(
            as_printed(HarnessError::from(parse)),
            "PTX parse error at line 44: call to undefined function `vprintf`"
        );
        let bad_launch = ptx_emu::EmuError::BadLaunch {
            entry: "k".into(),
            message: "grid too large".into(),
        };
        assert_eq!(
            as_printed(crate::check::CheckError::from(HarnessError::from(
                bad_launch
            ))),
            "bad launch of `k`: grid too large"
        );
        let driver = HarnessError::from(cudarc::driver::DriverError(
            cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_VALUE,
        ));
        assert!(std::error::Error::source(&driver).is_none());
    }
}
