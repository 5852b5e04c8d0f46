//! `racetrack check`: one learner's kernel, arguments from the command line, run on a GPU or on
//! the emulator with its checkers, and the buffers it wrote.
//!
//! The pieces are public so tests can drive them without the binary: [`ArgSpec`] (what `--arg`
//! says), [`HostArg`] (the data it stands for), [`Program`] and [`Kernel`] (a compiled `.cu` file
//! and one of its entries, with the PTX signature that arguments are checked against), and
//! [`CheckReport`] (the text and JSON output).

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value as Json, json};

use crate::backend::{BACKEND_ENV, BackendChoice, BackendKind};
use crate::cli::{ScheduleName, seeded_rng};
use crate::device::{Arg, Buffer, Device, Element, EmuSettings, Finding, FindingKind, Schedule};
use crate::error::HarnessError;
use crate::kernel::KernelSource;
use crate::launch::{Dim3, LaunchShape};
use crate::nvrtc::{self, EMU_ARCH};

/// How many elements of each buffer the text report prints.
pub const SHOWN_ELEMENTS: usize = 16;

/// The largest buffer `--arg` makes, so that a typo such as `u64[99999999999]` is refused
/// rather than exhausting the host's memory before the device could say no.
pub const MAX_BUFFER_BYTES: usize = 4 << 30;

/// What `racetrack check --help` adds below the flags.
pub const HELP: &str = "\
Argument specs (--arg, one per kernel parameter, in order):
  scalars   u32=5  i32=-3  u64=0x10  i64=-7  f32=1.5  f64=2e-3
  buffers   TYPE[LEN]=FILL, TYPE one of u8 i32 u32 u64 i64 f32 f64, FILL one of
              zeros         every element 0
              const:V       every element V
              iota          0, 1, 2, … (u8 wraps at 256)
              random:SEED   seeded uniform values: u8 in [0, 256), u32/u64 in [0, 1000),
                            i32/i64 in [-1000, 1000), f32/f64 in [0, 1)
              file:PATH     raw little-endian bytes; TYPE[]=file:PATH takes the file's length,
                            TYPE[LEN]=file:PATH its first LEN elements
  names     prefix any spec with NAME: so reports say histo[65] instead of arg2[65],
            e.g. --arg text:u8[]=file:book.txt --arg n:u32=4096 --arg histo:u32[128]=zeros

Exit status:
  0  the kernel ran and the checkers found nothing (on cuda: the kernel ran)
  1  error: bad arguments, the file does not compile, the launch was refused, or the kernel did
     not finish within --timeout
  2  the kernel ran and the emulator's checkers reported findings

Example:
  racetrack check kernels/ch4_atomics/01_racy_increment.cu --entry racy_increment \\
      --grid 10 --block 16 --arg x:i32[1]=zeros --backend emu";

/// Everything `racetrack check` can refuse, each as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path} has no kernel named `{entry}`; {hint}")]
    UnknownEntry {
        path: String,
        entry: String,
        hint: String,
    },
    #[error("{entry} takes {expected} argument{} ({params}), but {given} --arg {} given", plural(.expected), was_or_were(.given))]
    ArgCount {
        entry: String,
        expected: usize,
        given: usize,
        params: String,
    },
    #[error("--arg {index} (`{arg}`) does not fit parameter {index} of {entry}: {param}")]
    ArgType {
        index: usize,
        arg: String,
        entry: String,
        param: String,
    },
    #[error("--arg {index} (`{spec}`): {reason}")]
    Fill {
        index: usize,
        spec: String,
        reason: String,
    },
    #[error("--show {index}: {reason}")]
    Show { index: usize, reason: String },
    #[error(transparent)]
    Harness(#[from] HarnessError),
}

fn plural(count: &usize) -> &'static str {
    if *count == 1 { "" } else { "s" }
}

fn was_or_were(count: &usize) -> &'static str {
    if *count == 1 { "was" } else { "were" }
}

pub type Result<T, E = CheckError> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------------------------
// Element types and host data

/// The element types a buffer may hold (scalars are the same, less `u8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    U8,
    I32,
    U32,
    U64,
    I64,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 7] = [
        Self::U8,
        Self::I32,
        Self::U32,
        Self::U64,
        Self::I64,
        Self::F32,
        Self::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::U8 => "u8",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::U64 => "u64",
            Self::I64 => "i64",
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    pub fn size(self) -> usize {
        match self {
            Self::U8 => 1,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::U64 | Self::I64 | Self::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Self::F32 | Self::F64)
    }

    fn article(self) -> &'static str {
        match self {
            Self::I32 | Self::I64 | Self::F32 | Self::F64 => "an",
            Self::U8 | Self::U32 | Self::U64 => "a",
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ElemType {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|ty| ty.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|ty| ty.name()).collect();
                format!(
                    "`{text}` is not a type; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// A sum, minimum or maximum: exact for integers, in the element's precision for floats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i128),
    F32(f32),
    F64(f64),
}

impl Number {
    fn to_json(self) -> Json {
        match self {
            Self::Int(value) => {
                if let Ok(small) = i64::try_from(value) {
                    json!(small)
                } else if let Ok(large) = u64::try_from(value) {
                    json!(large)
                } else {
                    json!(value as f64)
                }
            }
            Self::F32(value) => json!(value),
            Self::F64(value) => json!(value),
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(value) => write!(f, "{value}"),
            Self::F32(value) => write!(f, "{value}"),
            Self::F64(value) => write!(f, "{value}"),
        }
    }
}

/// Sum, min and max of a buffer; NaNs are counted, not compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub sum: Number,
    pub min: Number,
    pub max: Number,
    pub nans: usize,
}

/// A value a buffer can hold, with what `--arg` needs to make one.
pub trait HostElement: Element + PartialOrd + fmt::Display {
    const TYPE: ElemType;
    /// Decimal, or `0x` hexadecimal for integers.
    fn parse_value(text: &str) -> Option<Self>;
    /// The `iota` fill: integers wrap.
    fn from_index(index: usize) -> Self;
    fn random(rng: &mut ChaCha8Rng) -> Self;
    /// `None` for no values.
    fn stats(values: &[Self]) -> Option<Stats>;
    fn into_data(values: Vec<Self>) -> HostData;
    fn slice(data: &HostData) -> Option<&[Self]>;
}

/// The contents of one buffer on the host, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum HostData {
    U8(Vec<u8>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! with_data {
    ($data:expr, $values:ident => $body:expr) => {
        match $data {
            HostData::U8($values) => $body,
            HostData::I32($values) => $body,
            HostData::U32($values) => $body,
            HostData::U64($values) => $body,
            HostData::I64($values) => $body,
            HostData::F32($values) => $body,
            HostData::F64($values) => $body,
        }
    };
}

/// Calls `$function::<T>` with the Rust type of an [`ElemType`].
macro_rules! with_type {
    ($ty:expr, $function:ident ( $($arg:expr),* )) => {
        match $ty {
            ElemType::U8 => $function::<u8>($($arg),*),
            ElemType::I32 => $function::<i32>($($arg),*),
            ElemType::U32 => $function::<u32>($($arg),*),
            ElemType::U64 => $function::<u64>($($arg),*),
            ElemType::I64 => $function::<i64>($($arg),*),
            ElemType::F32 => $function::<f32>($($arg),*),
            ElemType::F64 => $function::<f64>($($arg),*),
        }
    };
}

macro_rules! int_element {
    ($($ty:ty => $variant:ident, $range:expr;)*) => {$(
        impl HostElement for $ty {
            const TYPE: ElemType = ElemType::$variant;

            fn parse_value(text: &str) -> Option<Self> {
                match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                    Some(hex) => <$ty>::from_str_radix(hex, 16).ok(),
                    None => text.parse().ok(),
                }
            }

            fn from_index(index: usize) -> Self {
                index as $ty
            }

            fn random(rng: &mut ChaCha8Rng) -> Self {
                rng.random_range($range)
            }

            fn stats(values: &[Self]) -> Option<Stats> {
                Some(Stats {
                    sum: Number::Int(values.iter().map(|&value| i128::from(value)).sum()),
                    min: Number::Int(i128::from(*values.iter().min()?)),
                    max: Number::Int(i128::from(*values.iter().max()?)),
                    nans: 0,
                })
            }

            fn into_data(values: Vec<Self>) -> HostData {
                HostData::$variant(values)
            }

            fn slice(data: &HostData) -> Option<&[Self]> {
                match data {
                    HostData::$variant(values) => Some(values),
                    _ => None,
                }
            }
        }
    )*};
}

int_element! {
    u8 => U8, 0..=u8::MAX;
    i32 => I32, -1000..1000;
    u32 => U32, 0..1000;
    u64 => U64, 0..1000;
    i64 => I64, -1000..1000;
}

macro_rules! float_element {
    ($($ty:ty => $variant:ident;)*) => {$(
        impl HostElement for $ty {
            const TYPE: ElemType = ElemType::$variant;

            fn parse_value(text: &str) -> Option<Self> {
                text.parse().ok()
            }

            fn from_index(index: usize) -> Self {
                index as $ty
            }

            fn random(rng: &mut ChaCha8Rng) -> Self {
                rng.random()
            }

            fn stats(values: &[Self]) -> Option<Stats> {
                if values.is_empty() {
                    return None;
                }
                let numbers = values.iter().copied().filter(|value| !value.is_nan());
                Some(Stats {
                    // Summed in f64 so the sum says what the values add up to, not how f32 rounds.
                    sum: Number::F64(values.iter().map(|&value| f64::from(value)).sum()),
                    min: Number::$variant(numbers.clone().fold(<$ty>::NAN, <$ty>::min)),
                    max: Number::$variant(numbers.fold(<$ty>::NAN, <$ty>::max)),
                    nans: values.iter().filter(|value| value.is_nan()).count(),
                })
            }

            fn into_data(values: Vec<Self>) -> HostData {
                HostData::$variant(values)
            }

            fn slice(data: &HostData) -> Option<&[Self]> {
                match data {
                    HostData::$variant(values) => Some(values),
                    _ => None,
                }
            }
        }
    )*};
}

float_element! {
    f32 => F32;
    f64 => F64;
}

fn parse_typed<T: HostElement>(text: &str) -> Result<T, String> {
    T::parse_value(text.trim()).ok_or_else(|| {
        let ty = T::TYPE;
        if ty.is_float() {
            format!("`{text}` is not {} {ty} number", ty.article())
        } else {
            let (min, max) = int_range(ty);
            format!(
                "`{text}` is not {} {ty}: expected an integer from {min} to {max}",
                ty.article()
            )
        }
    })
}

fn int_range(ty: ElemType) -> (i128, i128) {
    match ty {
        ElemType::U8 => (0, u8::MAX.into()),
        ElemType::I32 => (i32::MIN.into(), i32::MAX.into()),
        ElemType::U32 => (0, u32::MAX.into()),
        ElemType::U64 => (0, u64::MAX.into()),
        ElemType::I64 => (i64::MIN.into(), i64::MAX.into()),
        ElemType::F32 | ElemType::F64 => (0, 0),
    }
}

fn check_typed<T: HostElement>(text: &str) -> Result<(), String> {
    parse_typed::<T>(text).map(drop)
}

fn data_from_bytes<T: HostElement>(bytes: &[u8]) -> HostData {
    T::into_data(bytemuck::pod_collect_to_vec(bytes))
}

impl<T: HostElement> From<Vec<T>> for HostData {
    fn from(values: Vec<T>) -> Self {
        T::into_data(values)
    }
}

impl HostData {
    pub fn ty(&self) -> ElemType {
        match self {
            Self::U8(_) => ElemType::U8,
            Self::I32(_) => ElemType::I32,
            Self::U32(_) => ElemType::U32,
            Self::U64(_) => ElemType::U64,
            Self::I64(_) => ElemType::I64,
            Self::F32(_) => ElemType::F32,
            Self::F64(_) => ElemType::F64,
        }
    }

    pub fn len(&self) -> usize {
        with_data!(self, values => values.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_bytes(&self) -> &[u8] {
        with_data!(self, values => bytemuck::cast_slice(values))
    }

    /// Bytes in the host's order (little-endian, as on the GPU) as `ty`s; a trailing partial
    /// element is dropped.
    pub fn from_bytes(ty: ElemType, bytes: &[u8]) -> Self {
        let whole = bytes.len() - bytes.len() % ty.size();
        with_type!(ty, data_from_bytes(&bytes[..whole]))
    }

    /// The values, when they are `T`s.
    pub fn values<T: HostElement>(&self) -> Option<&[T]> {
        T::slice(self)
    }

    /// `None` for an empty buffer.
    pub fn stats(&self) -> Option<Stats> {
        with_data!(self, values => HostElement::stats(values))
    }

    fn head(&self, count: usize) -> Vec<String> {
        with_data!(self, values => values.iter().take(count).map(ToString::to_string).collect())
    }

    fn to_json(&self) -> Json {
        with_data!(self, values => json!(values))
    }
}

// ---------------------------------------------------------------------------------------------
// --arg specs

/// A scalar kernel argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Scalar {
    pub fn ty(self) -> ElemType {
        match self {
            Self::U32(_) => ElemType::U32,
            Self::I32(_) => ElemType::I32,
            Self::U64(_) => ElemType::U64,
            Self::I64(_) => ElemType::I64,
            Self::F32(_) => ElemType::F32,
            Self::F64(_) => ElemType::F64,
        }
    }

    fn arg(self) -> Arg<'static> {
        match self {
            Self::U32(value) => Arg::U32(value),
            Self::I32(value) => Arg::I32(value),
            Self::U64(value) => Arg::U64(value),
            Self::I64(value) => Arg::I64(value),
            Self::F32(value) => Arg::F32(value),
            Self::F64(value) => Arg::F64(value),
        }
    }

    fn parse(ty: ElemType, text: &str) -> Result<Self, String> {
        Ok(match ty {
            ElemType::U32 => Self::U32(parse_typed(text)?),
            ElemType::I32 => Self::I32(parse_typed(text)?),
            ElemType::U64 => Self::U64(parse_typed(text)?),
            ElemType::I64 => Self::I64(parse_typed(text)?),
            ElemType::F32 => Self::F32(parse_typed(text)?),
            ElemType::F64 => Self::F64(parse_typed(text)?),
            ElemType::U8 => {
                return Err(
                    "u8 is a buffer type only; scalars are u32, i32, u64, i64, f32 or f64".into(),
                );
            }
        })
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::U32(value) => write!(f, "{value}"),
            Self::I32(value) => write!(f, "{value}"),
            Self::U64(value) => write!(f, "{value}"),
            Self::I64(value) => write!(f, "{value}"),
            Self::F32(value) => write!(f, "{value}"),
            Self::F64(value) => write!(f, "{value}"),
        }
    }
}

/// How a buffer's elements are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fill {
    Zeros,
    /// The value as written; checked against the element type when parsed.
    Const(String),
    Iota,
    Random(u64),
    File(PathBuf),
}

impl fmt::Display for Fill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Zeros => f.write_str("zeros"),
            Self::Const(value) => write!(f, "const:{value}"),
            Self::Iota => f.write_str("iota"),
            Self::Random(seed) => write!(f, "random:{seed}"),
            Self::File(path) => write!(f, "file:{}", path.display()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSpec {
    pub ty: ElemType,
    /// `None` only with a file fill: the file's length.
    pub len: Option<usize>,
    pub fill: Fill,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArgValueSpec {
    Scalar(Scalar),
    Buffer(BufferSpec),
}

/// One `--arg`: `[NAME:]TYPE=VALUE` or `[NAME:]TYPE[LEN]=FILL`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgSpec {
    pub name: Option<String>,
    pub value: ArgValueSpec,
}

/// What a parameter receives, for checking against the kernel's PTX signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    Buffer,
    Scalar(ElemType),
}

/// Why an `--arg` spec does not parse; clap shows it after the spec itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

const SPEC_FORMS: &str = "an argument is TYPE=VALUE (u32=5) or TYPE[LEN]=FILL (f32[1024]=random:1)";

impl FromStr for ArgSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        let Some((left, right)) = text.split_once('=') else {
            return Err(SpecError(format!("no `=`; {SPEC_FORMS}")));
        };
        let (name, typed) = match left.split_once(':') {
            Some((name, typed)) => (Some(name.trim()), typed.trim()),
            None => (None, left.trim()),
        };
        if let Some(name) = name {
            let mut chars = name.chars();
            let valid = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(SpecError(format!(
                    "`{name}` is not a name; names are letters, digits and _ (histo:u32[128]=zeros)"
                )));
            }
        }
        let name = name.map(str::to_string);
        let Some((ty_text, len_text)) = typed.split_once('[') else {
            let ty: ElemType = typed
                .parse()
                .map_err(|reason: String| SpecError(format!("{reason}; {SPEC_FORMS}")))?;
            let value = Scalar::parse(ty, right).map_err(SpecError)?;
            return Ok(Self {
                name,
                value: ArgValueSpec::Scalar(value),
            });
        };
        let ty: ElemType = ty_text.trim().parse().map_err(SpecError)?;
        let Some(len_text) = len_text.strip_suffix(']') else {
            return Err(SpecError(format!(
                "`{typed}` lacks its closing `]`; a buffer is TYPE[LEN]=FILL"
            )));
        };
        let len_text = len_text.trim();
        let len = if len_text.is_empty() {
            None
        } else {
            let len: usize = len_text.parse().map_err(|_| {
                SpecError(format!(
                    "`{len_text}` is not a buffer length (a whole number of elements)"
                ))
            })?;
            if len
                .checked_mul(ty.size())
                .is_none_or(|bytes| bytes > MAX_BUFFER_BYTES)
            {
                return Err(SpecError(format!(
                    "{len} {ty} elements are more than the {} GiB a buffer may hold here",
                    MAX_BUFFER_BYTES >> 30
                )));
            }
            Some(len)
        };
        let fill = parse_fill(ty, right.trim()).map_err(SpecError)?;
        if len.is_none() && !matches!(fill, Fill::File(_)) {
            return Err(SpecError(format!(
                "`{ty}[]` takes its length from a file; give one for {fill}, e.g. {ty}[1024]={fill}"
            )));
        }
        Ok(Self {
            name,
            value: ArgValueSpec::Buffer(BufferSpec { ty, len, fill }),
        })
    }
}

fn parse_fill(ty: ElemType, text: &str) -> Result<Fill, String> {
    let (head, rest) = match text.split_once(':') {
        Some((head, rest)) => (head, Some(rest)),
        None => (text, None),
    };
    match (head, rest) {
        ("zeros", None) => Ok(Fill::Zeros),
        ("iota", None) => Ok(Fill::Iota),
        ("const", Some(value)) => {
            with_type!(ty, check_typed(value))?;
            Ok(Fill::Const(value.trim().to_string()))
        }
        ("random", Some(seed)) => seed.trim().parse().map(Fill::Random).map_err(|_| {
            format!(
                "`{seed}` is not a seed (a whole number from 0 to {})",
                u64::MAX
            )
        }),
        ("file", Some(path)) if !path.is_empty() => Ok(Fill::File(PathBuf::from(path))),
        _ => Err(format!(
            "`{text}` is not a fill; expected zeros, const:V, iota, random:SEED or file:PATH"
        )),
    }
}

impl ArgSpec {
    pub fn kind(&self) -> ArgKind {
        match &self.value {
            ArgValueSpec::Scalar(value) => ArgKind::Scalar(value.ty()),
            ArgValueSpec::Buffer(_) => ArgKind::Buffer,
        }
    }

    /// The name reports use: the spec's own, else `arg<index>`.
    pub fn label(&self, index: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("arg{index}"))
    }

    /// Makes the data: generates fills, reads files (relative to the working directory).
    pub fn resolve(&self, index: usize) -> Result<HostArg> {
        let label = self.label(index);
        let buffer = match &self.value {
            ArgValueSpec::Scalar(value) => {
                return Ok(HostArg::Scalar {
                    label,
                    value: *value,
                });
            }
            ArgValueSpec::Buffer(buffer) => buffer,
        };
        let refuse = |reason: String| CheckError::Fill {
            index,
            spec: self.to_string(),
            reason,
        };
        let data = match &buffer.fill {
            Fill::File(path) => read_fill_file(path, buffer.ty, buffer.len).map_err(refuse)?,
            fill => {
                with_type!(buffer.ty, generate(buffer.len.unwrap_or(0), fill)).map_err(refuse)?
            }
        };
        Ok(HostArg::Buffer { label, data })
    }
}

impl fmt::Display for ArgSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            write!(f, "{name}:")?;
        }
        match &self.value {
            ArgValueSpec::Scalar(value) => write!(f, "{}={value}", value.ty()),
            ArgValueSpec::Buffer(BufferSpec { ty, len, fill }) => match len {
                Some(len) => write!(f, "{ty}[{len}]={fill}"),
                None => write!(f, "{ty}[]={fill}"),
            },
        }
    }
}

fn generate<T: HostElement>(len: usize, fill: &Fill) -> Result<HostData, String> {
    let values: Vec<T> = match fill {
        Fill::Zeros => vec![bytemuck::Zeroable::zeroed(); len],
        Fill::Const(text) => vec![parse_typed::<T>(text)?; len],
        Fill::Iota => (0..len).map(T::from_index).collect(),
        Fill::Random(seed) => {
            let mut rng = seeded_rng(*seed);
            (0..len).map(|_| T::random(&mut rng)).collect()
        }
        Fill::File(_) => return Err("a file fill is read, not generated".into()),
    };
    Ok(T::into_data(values))
}

fn read_fill_file(path: &Path, ty: ElemType, len: Option<usize>) -> Result<HostData, String> {
    let bytes =
        std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let size = ty.size();
    let used = match len {
        Some(len) => {
            let wanted = len * size;
            if bytes.len() < wanted {
                return Err(format!(
                    "{} has {} bytes, fewer than the {wanted} of {len} {ty} elements",
                    path.display(),
                    bytes.len()
                ));
            }
            wanted
        }
        None => {
            if bytes.len() % size != 0 {
                return Err(format!(
                    "{} has {} bytes, not a whole number of {ty} elements ({size} bytes each)",
                    path.display(),
                    bytes.len()
                ));
            }
            if bytes.len() > MAX_BUFFER_BYTES {
                return Err(format!(
                    "{} is larger than the {} GiB a buffer may hold here",
                    path.display(),
                    MAX_BUFFER_BYTES >> 30
                ));
            }
            bytes.len()
        }
    };
    Ok(HostData::from_bytes(ty, &bytes[..used]))
}

/// A kernel argument with its data, ready to upload.
#[derive(Debug, Clone, PartialEq)]
pub enum HostArg {
    Scalar { label: String, value: Scalar },
    Buffer { label: String, data: HostData },
}

impl HostArg {
    pub fn buffer(label: &str, data: impl Into<HostData>) -> Self {
        Self::Buffer {
            label: label.to_string(),
            data: data.into(),
        }
    }

    pub fn scalar(label: &str, value: Scalar) -> Self {
        Self::Scalar {
            label: label.to_string(),
            value,
        }
    }

    pub fn kind(&self) -> ArgKind {
        match self {
            Self::Scalar { value, .. } => ArgKind::Scalar(value.ty()),
            Self::Buffer { .. } => ArgKind::Buffer,
        }
    }

    pub fn label(&self) -> &str {
        match self {
            Self::Scalar { label, .. } | Self::Buffer { label, .. } => label,
        }
    }
}

impl fmt::Display for HostArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scalar { label, value } => write!(f, "{label}:{}={value}", value.ty()),
            Self::Buffer { label, data } => write!(f, "{label}:{}[{}]", data.ty(), data.len()),
        }
    }
}

/// Seconds, fractions allowed: `60`, `0.5`.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
        .ok_or_else(|| format!("`{text}` is not a number of seconds"))
}

/// `N`, `X,Y` or `X,Y,Z` (`x` works as a separator too: `16x16`).
pub fn parse_dim3(text: &str) -> Result<Dim3, String> {
    let parts: Vec<&str> = text.split([',', 'x', 'X']).map(str::trim).collect();
    let bad = || {
        format!("`{text}` is not a launch dimension; expected N, X,Y or X,Y,Z (e.g. 256 or 16,16)")
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(bad());
    }
    let mut axes = [1u32; 3];
    for (axis, part) in axes.iter_mut().zip(&parts) {
        *axis = part.parse().map_err(|_| bad())?;
    }
    Ok(Dim3 {
        x: axes[0],
        y: axes[1],
        z: axes[2],
    })
}

// ---------------------------------------------------------------------------------------------
// PTX signatures

/// How a PTX parameter holds its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamClass {
    /// `.u32`, `.s64`, …: an integer, or (8 bytes) a pointer.
    Int,
    Float,
    /// `.b32`, `.b64`: either.
    Bits,
    /// `.align N .b8 name[SIZE]`: a struct passed by value.
    Aggregate,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The PTX type, e.g. `u64`, or `b8[12]` for a struct.
    pub ptx_type: String,
    pub bytes: usize,
    pub class: ParamClass,
}

impl Param {
    fn accepts(&self, kind: ArgKind) -> bool {
        match kind {
            ArgKind::Buffer => {
                self.bytes == 8 && matches!(self.class, ParamClass::Int | ParamClass::Bits)
            }
            ArgKind::Scalar(ty) => {
                let class_fits = match self.class {
                    ParamClass::Int => !ty.is_float(),
                    ParamClass::Float => ty.is_float(),
                    ParamClass::Bits => true,
                    ParamClass::Aggregate => false,
                };
                class_fits && self.bytes == ty.size()
            }
        }
    }

    fn describe(&self) -> String {
        let ty = &self.ptx_type;
        match (self.class, self.bytes) {
            (ParamClass::Aggregate, bytes) => {
                format!("a {bytes}-byte struct, which check cannot pass (only scalars and buffers)")
            }
            (ParamClass::Int, 8) => {
                format!("PTX .{ty}, a pointer or a 64-bit integer (pass a buffer, u64=… or i64=…)")
            }
            (ParamClass::Int, 4) => format!("PTX .{ty}, a 32-bit integer (pass u32=… or i32=…)"),
            (ParamClass::Float, 4) => format!("PTX .{ty}, a float (pass f32=…)"),
            (ParamClass::Float, 8) => format!("PTX .{ty}, a double (pass f64=…)"),
            (ParamClass::Bits, 8) => {
                format!("PTX .{ty}, 64 bits (pass a buffer or a 64-bit scalar)")
            }
            (ParamClass::Bits, 4) => format!("PTX .{ty}, 32 bits (pass u32, i32 or f32)"),
            (_, bytes) => format!(
                "PTX .{ty}, a {bytes}-byte scalar (char, short, bool), which check cannot pass yet"
            ),
        }
    }
}

/// One `.entry` of a PTX module and its parameters, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntrySignature {
    pub name: String,
    pub params: Vec<Param>,
}

/// Every kernel (`.entry`) the PTX defines, with its parameters.
pub fn entry_signatures(ptx: &str) -> Vec<EntrySignature> {
    let mut entries = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry") {
        rest = &rest[at + ".entry".len()..];
        if !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let name_end = rest.find(['(', '{', ';']).unwrap_or(rest.len());
        let name = rest[..name_end].trim().to_string();
        let mut params = Vec::new();
        if rest[name_end..].starts_with('(') {
            let list = &rest[name_end + 1..];
            let close = list.find(')').unwrap_or(list.len());
            params = list[..close].split(',').filter_map(parse_param).collect();
            rest = &list[close..];
        }
        entries.push(EntrySignature { name, params });
    }
    entries
}

fn parse_param(declaration: &str) -> Option<Param> {
    let tokens: Vec<&str> = declaration.split_whitespace().collect();
    let ty = tokens.iter().find_map(|token| {
        let ty = token.strip_prefix('.')?;
        let (class, bits) = match ty.split_at_checked(1)? {
            ("u" | "s", bits) => (ParamClass::Int, bits),
            ("f", bits) => (ParamClass::Float, bits),
            ("b", bits) => (ParamClass::Bits, bits),
            _ => return None,
        };
        let bits: usize = bits.parse().ok()?;
        Some((ty, class, bits / 8))
    })?;
    let (ptx_type, class, bytes) = ty;
    let name = tokens.last()?;
    if let Some(open) = name.find('[') {
        let count: usize = name[open + 1..].trim_end_matches(']').parse().ok()?;
        return Some(Param {
            ptx_type: format!("{ptx_type}[{count}]"),
            bytes: bytes * count,
            class: ParamClass::Aggregate,
        });
    }
    Some(Param {
        ptx_type: ptx_type.to_string(),
        bytes,
        class,
    })
}

// ---------------------------------------------------------------------------------------------
// Compiling and running

/// A `.cu` file compiled by NVRTC, with the kernels it defines.
#[derive(Debug, Clone)]
pub struct Program {
    path: &'static str,
    source: &'static str,
    entries: Vec<EntrySignature>,
}

impl Program {
    /// Reads `path` (relative to the working directory; reports name it as given) and compiles it.
    pub fn load(path: &str) -> Result<Self> {
        let source = std::fs::read_to_string(path).map_err(|error| CheckError::Read {
            path: path.to_string(),
            message: error.to_string(),
        })?;
        Self::compile(path, source)
    }

    /// Compiles `source` under the name `path`, so NVRTC's errors and the checkers' reports say
    /// `path:LINE`. The strings are leaked: [`Device::launch`] keys kernels by `&'static str`,
    /// and a program lives as long as the one-shot run that loads it.
    pub fn compile(path: &str, source: String) -> Result<Self> {
        let ptx = nvrtc::compile(path, &source, EMU_ARCH)?;
        Ok(Self {
            path: Box::leak(path.to_string().into_boxed_str()),
            source: Box::leak(source.into_boxed_str()),
            entries: entry_signatures(&ptx),
        })
    }

    pub fn path(&self) -> &str {
        self.path
    }

    pub fn entries(&self) -> &[EntrySignature] {
        &self.entries
    }

    /// The kernel called `entry`; the error lists the ones there are.
    pub fn kernel(&self, entry: &str) -> Result<Kernel> {
        let Some(signature) = self
            .entries
            .iter()
            .find(|signature| signature.name == entry)
        else {
            return Err(CheckError::UnknownEntry {
                path: self.path.to_string(),
                entry: entry.to_string(),
                hint: self.entry_hint(entry),
            });
        };
        Ok(Kernel {
            source: KernelSource {
                path: self.path,
                entry: Box::leak(entry.to_string().into_boxed_str()),
                source: self.source,
                committed_ptx: "",
            },
            signature: signature.clone(),
        })
    }

    fn entry_hint(&self, entry: &str) -> String {
        // A kernel that is not `extern "C"` keeps its C++ mangled name, e.g. `_Z6kernelPi`.
        let mangled = format!("{}{entry}", entry.len());
        if let Some(found) = self
            .entries
            .iter()
            .find(|e| e.name.starts_with("_Z") && e.name.contains(&mangled))
        {
            return format!(
                "it defines `{}`, the C++ name of {entry}: declare the kernel `extern \"C\" __global__`",
                found.name
            );
        }
        match self.entries.len() {
            0 => "it defines no kernels (is the function `extern \"C\" __global__`?)".to_string(),
            _ => {
                let names: Vec<_> = self.entries.iter().map(|e| e.name.as_str()).collect();
                format!("it defines {}", names.join(", "))
            }
        }
    }
}

/// One entry of a [`Program`], ready to launch.
#[derive(Debug, Clone)]
pub struct Kernel {
    source: KernelSource,
    signature: EntrySignature,
}

/// An argument on the device.
enum Slot {
    Buffer(Buffer<u8>),
    Scalar(Scalar),
}

/// What a run left: the checkers' findings and every buffer argument's contents after it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    /// One per argument: `Some` for buffers, `None` for scalars.
    pub outputs: Vec<Option<HostData>>,
}

impl Outcome {
    /// Whether every thread reached its end: no deadlock, no exhausted step budget.
    pub fn finished(&self) -> bool {
        !self.findings.iter().any(|finding| {
            matches!(
                finding.kind,
                FindingKind::Deadlock | FindingKind::StepBudgetExhausted
            )
        })
    }

    /// The contents of buffer argument `index` as `T`s.
    pub fn values<T: HostElement>(&self, index: usize) -> Option<&[T]> {
        self.outputs.get(index)?.as_ref()?.values()
    }
}

impl Kernel {
    pub fn source(&self) -> &KernelSource {
        &self.source
    }

    pub fn signature(&self) -> &EntrySignature {
        &self.signature
    }

    /// Checks count and types of `args` against the PTX parameters: the cuda backend passes
    /// them to the driver as they are, and a mismatch there is undefined behaviour.
    pub fn check_args(&self, args: impl ExactSizeIterator<Item = (ArgKind, String)>) -> Result<()> {
        let params = &self.signature.params;
        if args.len() != params.len() {
            let types: Vec<_> = params.iter().map(|param| param.ptx_type.as_str()).collect();
            return Err(CheckError::ArgCount {
                entry: self.signature.name.clone(),
                expected: params.len(),
                given: args.len(),
                params: if types.is_empty() {
                    "none".to_string()
                } else {
                    format!("PTX {}", types.join(", "))
                },
            });
        }
        for (index, ((kind, text), param)) in args.zip(params).enumerate() {
            if !param.accepts(kind) {
                return Err(CheckError::ArgType {
                    index,
                    arg: text,
                    entry: self.signature.name.clone(),
                    param: param.describe(),
                });
            }
        }
        Ok(())
    }

    /// Uploads the buffers, launches, waits, and downloads every buffer.
    pub fn run(
        &self,
        device: &mut Device,
        shape: LaunchShape,
        args: &[HostArg],
    ) -> Result<Outcome> {
        self.check_args(args.iter().map(|arg| (arg.kind(), arg.to_string())))?;
        let mut slots = Vec::with_capacity(args.len());
        for arg in args {
            slots.push(match arg {
                HostArg::Buffer { label, data } => {
                    Slot::Buffer(device.upload(data.as_bytes(), label)?)
                }
                HostArg::Scalar { value, .. } => Slot::Scalar(*value),
            });
        }
        let launch_args: Vec<Arg<'_>> = slots
            .iter()
            .map(|slot| match slot {
                Slot::Buffer(buffer) => Arg::from(buffer),
                Slot::Scalar(value) => value.arg(),
            })
            .collect();
        let report = device.launch(&self.source, shape, &launch_args)?;
        let mut outputs = Vec::with_capacity(args.len());
        for (arg, slot) in args.iter().zip(&slots) {
            outputs.push(match (arg, slot) {
                (HostArg::Buffer { data, .. }, Slot::Buffer(buffer)) => {
                    Some(HostData::from_bytes(data.ty(), &device.download(buffer)?))
                }
                _ => None,
            });
        }
        Ok(Outcome {
            findings: report.findings,
            outputs,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The command line

/// `racetrack check FILE.cu --entry NAME --grid G --block B --arg SPEC…`
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    /// The .cu file; errors and reports name its lines as `FILE:LINE`
    pub file: String,

    /// The kernel to launch (an `extern "C" __global__` function)
    #[arg(long, value_name = "NAME")]
    pub entry: String,

    /// Blocks per grid: N, X,Y or X,Y,Z
    #[arg(long, value_name = "G", value_parser = parse_dim3)]
    pub grid: Dim3,

    /// Threads per block: N, X,Y or X,Y,Z
    #[arg(long, value_name = "B", value_parser = parse_dim3)]
    pub block: Dim3,

    /// Bytes of dynamic shared memory (extern __shared__) per block
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub shared: u32,

    /// One kernel argument, in parameter order: u32=5, f32[1024]=random:1, histo:u32[128]=zeros (see below)
    #[arg(long = "arg", value_name = "SPEC")]
    pub args: Vec<ArgSpec>,

    /// Print this argument's buffer after the run (repeatable) [default: every buffer]
    #[arg(long = "show", value_name = "N")]
    pub show: Vec<usize>,

    /// Print one JSON object (backend, device, launch, findings, buffers) instead of text
    #[arg(long)]
    pub json: bool,

    /// Where the kernel runs: a GPU (cuda), the PTX emulator with its checkers (emu), or cuda when there is one (auto)
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto, env = BACKEND_ENV)]
    pub backend: BackendChoice,

    /// Emulator schedule
    #[arg(long, value_enum, default_value_t = ScheduleName::Hardware)]
    pub schedule: ScheduleName,

    /// Seed of the random and adversarial schedules
    #[arg(long, default_value_t = 2024)]
    pub seed: u64,

    /// Turn off the emulator's race checker
    #[arg(long)]
    pub no_racecheck: bool,

    /// Turn off the emulator's barrier checker
    #[arg(long)]
    pub no_synccheck: bool,

    /// Turn off the emulator's memory checker
    #[arg(long)]
    pub no_memcheck: bool,

    /// Thread-instructions the emulator runs before it stops a kernel that has not finished
    /// (a spinning thread, or a launch larger than the default allows)
    #[arg(long, value_name = "N", default_value_t = EmuSettings::default().step_budget,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub step_budget: u64,

    /// Give up (exit 1) when the run takes longer than this many seconds; 0 waits forever
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = parse_seconds)]
    pub timeout: Duration,
}

impl CheckArgs {
    pub fn emu_settings(&self) -> EmuSettings {
        EmuSettings {
            schedule: self.schedule.with_seed(self.seed),
            racecheck: !self.no_racecheck,
            synccheck: !self.no_synccheck,
            memcheck: !self.no_memcheck,
            step_budget: self.step_budget,
        }
    }

    pub fn shape(&self) -> LaunchShape {
        LaunchShape {
            grid: self.grid,
            block: self.block,
            dynamic_shared_bytes: self.shared,
        }
    }

    /// The argument indices to print: `--show`, checked, or every buffer.
    pub fn shown(&self) -> Result<Vec<usize>> {
        if self.show.is_empty() {
            return Ok((0..self.args.len())
                .filter(|&index| self.args[index].kind() == ArgKind::Buffer)
                .collect());
        }
        for &index in &self.show {
            let Some(arg) = self.args.get(index) else {
                return Err(CheckError::Show {
                    index,
                    reason: format!(
                        "there is no argument {index}: the {} --arg given are numbered from 0",
                        self.args.len()
                    ),
                });
            };
            if arg.kind() != ArgKind::Buffer {
                return Err(CheckError::Show {
                    index,
                    reason: format!(
                        "argument {index} is the scalar `{arg}`; --show prints buffers"
                    ),
                });
            }
        }
        Ok(self.show.clone())
    }
}

/// Everything up to the launch: compile, check the arguments, make their data. Runs before a
/// device is opened, so bad input never waits for a GPU.
#[derive(Debug)]
pub struct Prepared {
    pub kernel: Kernel,
    pub args: Vec<HostArg>,
    pub shown: Vec<usize>,
}

pub fn prepare(args: &CheckArgs) -> Result<Prepared> {
    let shown = args.shown()?;
    let program = Program::load(&args.file)?;
    let kernel = program.kernel(&args.entry)?;
    kernel.check_args(args.args.iter().map(|spec| (spec.kind(), spec.to_string())))?;
    let host_args = args
        .args
        .iter()
        .enumerate()
        .map(|(index, spec)| spec.resolve(index))
        .collect::<Result<Vec<_>>>()?;
    Ok(Prepared {
        kernel,
        args: host_args,
        shown,
    })
}

/// One run, as the command prints it.
#[derive(Debug)]
pub struct CheckReport<'a> {
    pub backend: BackendKind,
    pub banner: String,
    pub device: String,
    pub kernel: &'a Kernel,
    pub shape: LaunchShape,
    pub specs: &'a [ArgSpec],
    pub args: &'a [HostArg],
    /// The emulator's settings; `None` on a GPU.
    pub emu: Option<EmuSettings>,
    pub outcome: &'a Outcome,
    pub shown: &'a [usize],
}

fn schedule_name(schedule: Schedule) -> (&'static str, Option<u64>) {
    match schedule {
        Schedule::Hardware => ("hardware", None),
        Schedule::Random { seed } => ("random", Some(seed)),
        Schedule::Adversarial { seed } => ("adversarial", Some(seed)),
    }
}

fn finding_kind_json(kind: FindingKind, object: &mut Map<String, Json>) -> &'static str {
    match kind {
        FindingKind::Race { hazard, space } => {
            object.insert("hazard".into(), json!(hazard.to_string()));
            object.insert("space".into(), json!(space.to_string()));
            "race"
        }
        FindingKind::BarrierDivergence => "barrier-divergence",
        FindingKind::Deadlock => "deadlock",
        FindingKind::OutOfBounds { space } => {
            object.insert("space".into(), json!(space.to_string()));
            "out-of-bounds"
        }
        FindingKind::Misaligned { space } => {
            object.insert("space".into(), json!(space.to_string()));
            "misaligned"
        }
        FindingKind::StepBudgetExhausted => "step-budget-exhausted",
    }
}

impl CheckReport<'_> {
    fn launch_line(&self) -> String {
        let shape = self.shape;
        let mut config = format!("{}, {}", shape.grid, shape.block);
        if shape.dynamic_shared_bytes > 0 {
            config.push_str(&format!(", {}", shape.dynamic_shared_bytes));
        }
        format!(
            "launch: {}<<<{config}>>> from {} ({shape}: {} threads)",
            self.kernel.source.entry,
            self.kernel.source.path,
            shape.total_threads()
        )
    }

    fn checkers_line(&self) -> String {
        let Some(settings) = self.emu else {
            return "checkers: not run; racecheck, synccheck and memcheck run on the emulator only (--backend emu)"
                .to_string();
        };
        let on: Vec<_> = [
            ("racecheck", settings.racecheck),
            ("synccheck", settings.synccheck),
            ("memcheck", settings.memcheck),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
        let (schedule, seed) = schedule_name(settings.schedule);
        let schedule = match seed {
            Some(seed) => format!("{schedule} schedule, seed {seed}"),
            None => format!("{schedule} schedule"),
        };
        let checkers = if on.is_empty() {
            "all off".to_string()
        } else {
            on.join(", ")
        };
        let found = match self.outcome.findings.len() {
            0 => "nothing found".to_string(),
            1 => "1 finding".to_string(),
            n => format!("{n} findings"),
        };
        format!("checkers: {checkers} ({schedule}): {found}")
    }

    /// The report as the terminal shows it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |text: &str| {
            out.push_str(text);
            out.push('\n');
        };
        line(&self.banner);
        line(&self.launch_line());
        for (index, spec) in self.specs.iter().enumerate() {
            let label = spec.label(index);
            let shown = match &spec.value {
                ArgValueSpec::Scalar(value) => format!("{}={value}", value.ty()),
                ArgValueSpec::Buffer(buffer) => {
                    let len = self.args.get(index).and_then(|arg| match arg {
                        HostArg::Buffer { data, .. } => Some(data.len()),
                        HostArg::Scalar { .. } => None,
                    });
                    format!(
                        "{}[{}]={}",
                        buffer.ty,
                        len.or(buffer.len).unwrap_or(0),
                        buffer.fill
                    )
                }
            };
            line(&format!("  arg {index}  {label}: {shown}"));
        }
        line(&self.checkers_line());
        for finding in &self.outcome.findings {
            line("");
            line(&finding.to_string());
        }
        if !self.outcome.finished() {
            line("");
            line(
                "the kernel did not finish: the buffers below hold what it had written when it was stopped",
            );
            if self
                .outcome
                .findings
                .iter()
                .any(|finding| finding.kind == FindingKind::StepBudgetExhausted)
            {
                line(
                    "if its threads are still making progress, the launch may just need more steps: raise --step-budget",
                );
            }
        }
        for &index in self.shown {
            let Some(Some(data)) = self.outcome.outputs.get(index) else {
                continue;
            };
            let label = self.args.get(index).map_or("?", HostArg::label);
            line("");
            let mut head = data.head(SHOWN_ELEMENTS).join(", ");
            if data.len() > SHOWN_ELEMENTS {
                head.push_str(&format!(", … {} more", data.len() - SHOWN_ELEMENTS));
            }
            line(&format!(
                "{label} (arg {index}, {}[{}]): [{head}]",
                data.ty(),
                data.len()
            ));
            if let Some(stats) = data.stats() {
                let mut summary =
                    format!("  sum {}, min {}, max {}", stats.sum, stats.min, stats.max);
                if stats.nans > 0 {
                    summary.push_str(&format!(", {} NaN", stats.nans));
                }
                line(&summary);
            }
        }
        out
    }

    /// The report for machines: one JSON object.
    pub fn json(&self) -> Json {
        let args: Vec<Json> = self
            .specs
            .iter()
            .enumerate()
            .map(|(index, spec)| json!({ "index": index, "label": spec.label(index), "spec": spec.to_string() }))
            .collect();
        let checkers = self.emu.map(|settings| {
            let (schedule, seed) = schedule_name(settings.schedule);
            json!({
                "racecheck": settings.racecheck,
                "synccheck": settings.synccheck,
                "memcheck": settings.memcheck,
                "schedule": schedule,
                "seed": seed,
            })
        });
        let findings: Vec<Json> = self
            .outcome
            .findings
            .iter()
            .map(|finding| {
                let mut object = Map::new();
                let kind = finding_kind_json(finding.kind, &mut object);
                object.insert("kind".into(), json!(kind));
                object.insert("lines".into(), json!(finding.lines()));
                object.insert(
                    "location".into(),
                    json!(finding.location.as_ref().map(ToString::to_string)),
                );
                object.insert("count".into(), json!(finding.count));
                object.insert("message".into(), json!(finding.to_string()));
                Json::Object(object)
            })
            .collect();
        let buffers: Vec<Json> = self
            .shown
            .iter()
            .filter_map(|&index| {
                let data = self.outcome.outputs.get(index)?.as_ref()?;
                let stats = data.stats();
                Some(json!({
                    "index": index,
                    "label": self.args.get(index).map_or("?", HostArg::label),
                    "type": data.ty().name(),
                    "len": data.len(),
                    "data": data.to_json(),
                    "sum": stats.map(|s| s.sum.to_json()),
                    "min": stats.map(|s| s.min.to_json()),
                    "max": stats.map(|s| s.max.to_json()),
                }))
            })
            .collect();
        let shape = self.shape;
        json!({
            "backend": self.backend.to_string(),
            "device": self.device,
            "banner": self.banner,
            "launch": {
                "file": self.kernel.source.path,
                "entry": self.kernel.source.entry,
                "grid": shape.grid.as_array(),
                "block": shape.block.as_array(),
                "shared_bytes": shape.dynamic_shared_bytes,
                "args": args,
            },
            "checkers": checkers,
            "finished": self.outcome.finished(),
            "findings": findings,
            "buffers": buffers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> ArgSpec {
        text.parse()
            .unwrap_or_else(|error| panic!("{text}: {error}"))
    }

    fn refused(text: &str) -> String {
        match text.parse::<ArgSpec>() {
            Ok(parsed) => panic!("{text} parsed as {parsed:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn scalars_parse_with_their_types() {
        assert_eq!(spec("u32=5").value, ArgValueSpec::Scalar(Scalar::U32(5)));
        assert_eq!(spec("i32=-3").value, ArgValueSpec::Scalar(Scalar::I32(-3)));
        assert_eq!(
            spec("u64=0x10").value,
            ArgValueSpec::Scalar(Scalar::U64(16))
        );
        assert_eq!(spec("i64=-7").value, ArgValueSpec::Scalar(Scalar::I64(-7)));
        assert_eq!(
            spec("f32=1.5").value,
            ArgValueSpec::Scalar(Scalar::F32(1.5))
        );
        assert_eq!(
            spec("f64=2e-3").value,
            ArgValueSpec::Scalar(Scalar::F64(2e-3))
        );
        let named = spec("n:i32=1000");
        assert_eq!(named.name.as_deref(), Some("n"));
        assert_eq!(named.label(3), "n");
        assert_eq!(spec("i32=1").label(3), "arg3");
    }

    #[test]
    fn buffers_parse_with_names_lengths_and_fills() {
        let histo = spec("histo:u32[128]=zeros");
        assert_eq!(histo.name.as_deref(), Some("histo"));
        assert_eq!(
            histo.value,
            ArgValueSpec::Buffer(BufferSpec {
                ty: ElemType::U32,
                len: Some(128),
                fill: Fill::Zeros
            })
        );
        assert_eq!(histo.to_string(), "histo:u32[128]=zeros");
        for text in [
            "f32[4]=const:2.5",
            "u8[300]=iota",
            "i64[7]=random:42",
            "u8[]=file:data/x.bin",
            "f64[2]=file:/tmp/a:b",
        ] {
            assert_eq!(spec(text).to_string(), text);
        }
        assert_eq!(spec("x:f32[3]=file:in.bin").kind(), ArgKind::Buffer);
    }

    #[test]
    fn malformed_specs_say_what_is_wrong() {
        assert!(refused("u32").contains("no `=`"));
        assert!(refused("u16=3").contains("`u16` is not a type"));
        assert!(refused("u8=3").contains("u8 is a buffer type only"));
        assert!(
            refused("u32=-1")
                .contains("`-1` is not a u32: expected an integer from 0 to 4294967295")
        );
        assert!(refused("i32=1.5").contains("is not an i32"));
        assert!(refused("f32=abc").contains("`abc` is not an f32 number"));
        assert!(refused("u32[4=zeros").contains("lacks its closing `]`"));
        assert!(refused("u32[four]=zeros").contains("`four` is not a buffer length"));
        assert!(refused("u32[4]=ones").contains("`ones` is not a fill"));
        assert!(refused("u8[4]=const:300").contains("`300` is not a u8"));
        assert!(refused("u32[4]=random:x").contains("`x` is not a seed"));
        assert!(refused("u32[]=zeros").contains("takes its length from a file"));
        assert!(refused("u64[999999999999]=zeros").contains("more than the 4 GiB"));
        assert!(refused("2x:u32[4]=zeros").contains("`2x` is not a name"));
        assert!(refused("u32[4]=file:").contains("is not a fill"));
    }

    #[test]
    fn fills_make_the_documented_data() {
        let made = |text: &str| match spec(text).resolve(0).unwrap() {
            HostArg::Buffer { data, .. } => data,
            HostArg::Scalar { .. } => panic!("{text} is not a buffer"),
        };
        assert_eq!(made("u32[3]=zeros"), HostData::U32(vec![0, 0, 0]));
        assert_eq!(made("i32[2]=const:-4"), HostData::I32(vec![-4, -4]));
        assert_eq!(made("f32[3]=iota"), HostData::F32(vec![0.0, 1.0, 2.0]));
        assert_eq!(made("u8[258]=iota").values::<u8>().unwrap()[257], 1);
        let random = made("f32[1000]=random:7");
        assert_eq!(random, made("f32[1000]=random:7"));
        assert_ne!(random, made("f32[1000]=random:8"));
        assert!(
            random
                .values::<f32>()
                .unwrap()
                .iter()
                .all(|v| (0.0..1.0).contains(v))
        );
        let ints = made("i32[1000]=random:1");
        assert!(
            ints.values::<i32>()
                .unwrap()
                .iter()
                .all(|v| (-1000..1000).contains(v))
        );
        assert!(ints.values::<i32>().unwrap().iter().any(|v| *v < 0));
    }

    #[test]
    fn file_fills_read_little_endian_bytes() {
        let path =
            std::env::temp_dir().join(format!("racetrack-check-fill-{}.bin", std::process::id()));
        let bytes: Vec<u8> = [1u32, 2, 0x0102_0304]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        let text = |spec: &str| spec.replace("PATH", &path.display().to_string());
        let resolve = |spec_text: &str| spec(&text(spec_text)).resolve(1);
        match resolve("u32[]=file:PATH").unwrap() {
            HostArg::Buffer { label, data } => {
                assert_eq!(label, "arg1");
                assert_eq!(data, HostData::U32(vec![1, 2, 0x0102_0304]));
            }
            other => panic!("{other:?}"),
        }
        match resolve("u8[2]=file:PATH").unwrap() {
            HostArg::Buffer { data, .. } => assert_eq!(data, HostData::U8(vec![1, 0])),
            other => panic!("{other:?}"),
        }
        let short = resolve("u32[4]=file:PATH").unwrap_err().to_string();
        assert!(
            short.contains("has 12 bytes, fewer than the 16 of 4 u32 elements"),
            "{short}"
        );
        let ragged = resolve("u64[]=file:PATH").unwrap_err().to_string();
        assert!(
            ragged.contains("not a whole number of u64 elements"),
            "{ragged}"
        );
        std::fs::remove_file(&path).unwrap();
        let missing = resolve("u32[]=file:PATH").unwrap_err().to_string();
        assert!(
            missing.starts_with("--arg 1 (`u32[]=file:") && missing.contains("cannot read"),
            "{missing}"
        );
    }

    #[test]
    fn dimensions_take_one_to_three_axes() {
        assert_eq!(parse_dim3("256"), Ok(Dim3::x(256)));
        assert_eq!(parse_dim3("16,16"), Ok(Dim3::xy(16, 16)));
        assert_eq!(parse_dim3("4, 2, 3"), Ok(Dim3 { x: 4, y: 2, z: 3 }));
        assert_eq!(parse_dim3("16x8"), Ok(Dim3::xy(16, 8)));
        for bad in ["", "1,2,3,4", "a", "-1", "1,,2"] {
            assert!(parse_dim3(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ptx_signatures_give_entries_and_parameter_classes() {
        let ptx = "\
.visible .func (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n{\n}\n\
.visible .entry histogram_any_bins(\n\t.param .u64 histogram_any_bins_param_0,\n\t.param .u32 histogram_any_bins_param_1,\n\
\t.param .f32 p2,\n\t.param .f64 p3,\n\t.param .align 4 .b8 p4[12],\n\t.param .u64 .ptr .global .align 4 p5\n)\n{\n}\n\
.visible .entry empty()\n{\n}\n";
        let entries = entry_signatures(ptx);
        let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["histogram_any_bins", "empty"]);
        let params = &entries[0].params;
        let summary: Vec<_> = params
            .iter()
            .map(|p| (p.ptx_type.as_str(), p.bytes, p.class))
            .collect();
        assert_eq!(
            summary,
            [
                ("u64", 8, ParamClass::Int),
                ("u32", 4, ParamClass::Int),
                ("f32", 4, ParamClass::Float),
                ("f64", 8, ParamClass::Float),
                ("b8[12]", 12, ParamClass::Aggregate),
                ("u64", 8, ParamClass::Int),
            ]
        );
        assert!(params[0].accepts(ArgKind::Buffer));
        assert!(params[0].accepts(ArgKind::Scalar(ElemType::I64)));
        assert!(!params[0].accepts(ArgKind::Scalar(ElemType::F64)));
        assert!(params[1].accepts(ArgKind::Scalar(ElemType::I32)));
        assert!(!params[1].accepts(ArgKind::Scalar(ElemType::F32)));
        assert!(!params[1].accepts(ArgKind::Buffer));
        assert!(params[2].accepts(ArgKind::Scalar(ElemType::F32)));
        assert!(!params[4].accepts(ArgKind::Buffer));
        assert!(entries[1].params.is_empty());
    }

    #[test]
    fn stats_are_exact_for_integers_and_skip_nans() {
        let ints = HostData::U64(vec![u64::MAX, u64::MAX, 3]).stats().unwrap();
        assert_eq!(ints.sum, Number::Int(2 * i128::from(u64::MAX) + 3));
        assert_eq!(
            (ints.min, ints.max),
            (Number::Int(3), Number::Int(u64::MAX.into()))
        );
        let floats = HostData::F32(vec![1.5, f32::NAN, -2.0]).stats().unwrap();
        assert_eq!(
            (floats.min, floats.max, floats.nans),
            (Number::F32(-2.0), Number::F32(1.5), 1)
        );
        assert!(HostData::I32(Vec::new()).stats().is_none());
    }
}
