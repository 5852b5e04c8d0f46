//! What the emulator refuses (malformed or unsupported PTX, bad launches, bad devices), one
//! sentence each; what goes wrong inside a kernel is a finding instead.

use thiserror::Error;

/// Inputs the emulator cannot run. Problems *inside* a kernel (races, out-of-bounds accesses,
/// hangs) are not errors: they come back as [`crate::Finding`]s in an `Ok(RunReport)`.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EmuError {
    #[error("PTX parse error at line {line}: {message}")]
    Parse { line: u32, message: String },
    #[error("unsupported PTX instruction `{instruction}` at PTX line {line}")]
    Unsupported { instruction: String, line: u32 },
    /// A launch of `entry` could reach an instruction the emulator does not run.
    #[error("{entry} uses `{opcode}` at {place}, which the emulator cannot run: {why}")]
    CannotRun {
        entry: String,
        opcode: String,
        place: String,
        why: String,
    },
    #[error("unknown kernel entry `{0}`")]
    UnknownEntry(String),
    #[error("bad launch of `{entry}`: {message}")]
    BadLaunch { entry: String, message: String },
    #[error("bad host access: {0}")]
    HostAccess(String),
    /// This machine cannot hold an allocation of the emulated device: its memory lives in the
    /// host's, which is smaller than a GPU's.
    #[error(
        "out of memory: this machine cannot hold {bytes} more bytes of emulated device memory (the emulator keeps a GPU's memory in the host's)"
    )]
    OutOfMemory { bytes: usize },
    /// A device, stream or event that does not exist, or a peer access request that makes no sense.
    #[error("{0}")]
    BadDevice(String),
    #[error(
        "the trace of {entry} needs more than {limit} events; trace a smaller launch (a block or two of 8 to 64 threads) or allow more"
    )]
    TraceTooLong { entry: String, limit: usize },
}

pub(crate) fn parse_err(line: u32, message: impl Into<String>) -> EmuError {
    EmuError::Parse {
        line,
        message: message.into(),
    }
}
