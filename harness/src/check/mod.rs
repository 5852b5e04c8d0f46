//! `racetrack check`: one learner's kernel, arguments from the command line, run on a GPU or on
//! the emulator with its checkers, and the buffers it wrote.
//!
//! The pieces are public so tests can drive them without the binary: [`ArgSpec`] (what `--arg`
//! says), [`HostArg`] (the data it stands for), [`Program`] and [`Kernel`] (a compiled `.cu` file
//! and one of its entries, with the PTX signature that arguments are checked against), and
//! [`CheckReport`] (the text and JSON output).
//!
//! A newcomer reads it in the order a run goes:
//! - [`front`]: the source file, compiled by NVRTC, and the kernel the user names;
//!   [`signature`]: the parameters its PTX declares.
//! - [`data`] and [`args`]: element types, host data, and the `--arg` specs that make it.
//! - [`cli`]: the command line, and [`run`]: checking the arguments, launching, downloading.
//! - [`report`]: what the terminal and `--json` show.

use crate::error::HarnessError;

#[macro_use]
pub mod data;
pub mod args;
pub mod cli;
pub mod ctype;
pub mod front;
pub mod report;
pub mod run;
pub mod signature;
pub mod symbols;

pub use args::{ArgKind, ArgSpec, ArgValueSpec, BufferSpec, Fill, HostArg, Scalar, SpecError};
pub use cli::{CheckArgs, HELP, Show, parse_dim3, parse_seconds};
pub use ctype::{CParam, CType, Given, GivenArg, check_c_signature};
pub use data::{ElemType, HostData, HostElement, Number, Stats};
pub use front::Program;

/// Whether `source` defines a host `main`: a whole program, which `racetrack run` takes as it is.
pub fn has_main(source: &str) -> bool {
    front::source::scan(source)
        .host_functions()
        .any(|function| function.name == "main")
}
pub use report::{CheckReport, SHOWN_ELEMENTS};
pub use run::{Kernel, Outcome, Prepared, prepare};
pub use signature::{EntrySignature, Param, ParamClass, entry_signatures};
pub use symbols::{KernelSymbol, SymbolSpec};

/// The largest buffer `--arg` makes, so that a typo such as `u64[99999999999]` is refused
/// rather than exhausting the host's memory before the device could say no.
pub const MAX_BUFFER_BYTES: usize = 4 << 30;

/// Everything `racetrack check` can refuse, each as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    /// `--entry` does not name one kernel: the sentence says what it names and what to write.
    #[error("{0}")]
    Entry(String),
    /// The kernel needs something `check` cannot give it; the sentence says what and why.
    #[error("{0}")]
    Refused(String),
    #[error("{path} does not compile (NVRTC's log follows):\n{log}{}", notes.iter().map(|note| format!("\n{note}")).collect::<String>())]
    Compile {
        path: String,
        log: String,
        notes: Vec<String>,
    },
    #[error("{entry} takes {expected} argument{} ({params}), but {given} --arg {} given", plural(.expected), was_or_were(.given))]
    ArgCount {
        entry: String,
        expected: usize,
        given: usize,
        params: String,
    },
    /// `param` begins with the C++ declaration where known: `(\`int *x\`) of k: PTX .u64, …`.
    #[error("--arg {index} (`{arg}`) does not fit parameter {index}{param}")]
    ArgType {
        index: usize,
        arg: String,
        entry: String,
        param: String,
    },
    /// The argument fits the PTX but not the C++ declaration: a `u32` buffer for an
    /// `unsigned char*`, an `i32` for an `unsigned int`.
    #[error(transparent)]
    CType(Box<CTypeMismatch>),
    #[error("--arg {index} (`{spec}`): {reason}")]
    Fill {
        index: usize,
        spec: String,
        reason: String,
    },
    #[error("--show {target}: {reason}")]
    Show { target: String, reason: String },
    #[error(transparent)]
    Harness(#[from] HarnessError),
}

/// One `--arg` that its C++ parameter does not take, and one that it would.
#[derive(Debug, thiserror::Error)]
#[error(
    "--arg {index} (`{arg}`) does not fit parameter {index} of {entry}, `{declared}`: it takes {wants}; --arg {fits} would fit"
)]
pub struct CTypeMismatch {
    pub index: usize,
    pub arg: String,
    pub entry: String,
    pub declared: String,
    pub wants: String,
    pub fits: String,
}

fn plural(count: &usize) -> &'static str {
    if *count == 1 { "" } else { "s" }
}

fn was_or_were(count: &usize) -> &'static str {
    if *count == 1 { "was" } else { "were" }
}

pub type Result<T, E = CheckError> = std::result::Result<T, E>;
