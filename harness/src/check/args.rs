//! `--arg` specs: what the command line says, and the host data it stands for.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use half::{bf16, f16};

use super::ctype::Given;
use super::data::{ElemType, HostData, HostElement, check_typed, parse_typed};
use super::{CheckError, MAX_BUFFER_BYTES, Result};
use crate::cli::seeded_fill;
use crate::device::Arg;

/// A scalar kernel argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F16(f16),
    BF16(bf16),
    F32(f32),
    F64(f64),
}

impl Scalar {
    pub fn ty(self) -> ElemType {
        match self {
            Self::U8(_) => ElemType::U8,
            Self::I8(_) => ElemType::I8,
            Self::U16(_) => ElemType::U16,
            Self::I16(_) => ElemType::I16,
            Self::U32(_) => ElemType::U32,
            Self::I32(_) => ElemType::I32,
            Self::U64(_) => ElemType::U64,
            Self::I64(_) => ElemType::I64,
            Self::F16(_) => ElemType::F16,
            Self::BF16(_) => ElemType::BF16,
            Self::F32(_) => ElemType::F32,
            Self::F64(_) => ElemType::F64,
        }
    }

    /// Values narrower than 32 bits travel as their bits, as a kernel's parameter holds them.
    /// The value's bytes as the device holds it (little-endian).
    pub fn to_le_bytes(self) -> Vec<u8> {
        match self {
            Self::U8(value) => vec![value],
            Self::I8(value) => value.to_le_bytes().to_vec(),
            Self::U16(value) => value.to_le_bytes().to_vec(),
            Self::I16(value) => value.to_le_bytes().to_vec(),
            Self::F16(value) => value.to_bits().to_le_bytes().to_vec(),
            Self::BF16(value) => value.to_bits().to_le_bytes().to_vec(),
            Self::U32(value) => value.to_le_bytes().to_vec(),
            Self::I32(value) => value.to_le_bytes().to_vec(),
            Self::U64(value) => value.to_le_bytes().to_vec(),
            Self::I64(value) => value.to_le_bytes().to_vec(),
            Self::F32(value) => value.to_le_bytes().to_vec(),
            Self::F64(value) => value.to_le_bytes().to_vec(),
        }
    }

    pub(super) fn arg(self) -> Arg<'static> {
        match self {
            Self::U8(value) => Arg::U8(value),
            Self::I8(value) => Arg::U8(value.to_le_bytes()[0]),
            Self::U16(value) => Arg::U16(value),
            Self::I16(value) => Arg::U16(u16::from_le_bytes(value.to_le_bytes())),
            Self::F16(value) => Arg::U16(value.to_bits()),
            Self::BF16(value) => Arg::U16(value.to_bits()),
            Self::U32(value) => Arg::U32(value),
            Self::I32(value) => Arg::I32(value),
            Self::U64(value) => Arg::U64(value),
            Self::I64(value) => Arg::I64(value),
            Self::F32(value) => Arg::F32(value),
            Self::F64(value) => Arg::F64(value),
        }
    }

    pub(super) fn parse(ty: ElemType, text: &str) -> Result<Self, String> {
        Ok(match ty {
            ElemType::U8 => Self::U8(parse_typed(text)?),
            ElemType::I8 => Self::I8(parse_typed(text)?),
            ElemType::U16 => Self::U16(parse_typed(text)?),
            ElemType::I16 => Self::I16(parse_typed(text)?),
            ElemType::U32 => Self::U32(parse_typed(text)?),
            ElemType::I32 => Self::I32(parse_typed(text)?),
            ElemType::U64 => Self::U64(parse_typed(text)?),
            ElemType::I64 => Self::I64(parse_typed(text)?),
            ElemType::F16 => Self::F16(parse_typed(text)?),
            ElemType::BF16 => Self::BF16(parse_typed(text)?),
            ElemType::F32 => Self::F32(parse_typed(text)?),
            ElemType::F64 => Self::F64(parse_typed(text)?),
        })
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::U8(value) => write!(f, "{value}"),
            Self::I8(value) => write!(f, "{value}"),
            Self::U16(value) => write!(f, "{value}"),
            Self::I16(value) => write!(f, "{value}"),
            Self::U32(value) => write!(f, "{value}"),
            Self::I32(value) => write!(f, "{value}"),
            Self::U64(value) => write!(f, "{value}"),
            Self::I64(value) => write!(f, "{value}"),
            Self::F16(value) => write!(f, "{value}"),
            Self::BF16(value) => write!(f, "{value}"),
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
    /// Memory nobody wrote, for the emulator's initcheck to watch (`=uninit`).
    Uninit,
}

impl fmt::Display for Fill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Zeros => f.write_str("zeros"),
            Self::Const(value) => write!(f, "const:{value}"),
            Self::Iota => f.write_str("iota"),
            Self::Random(seed) => write!(f, "random:{seed}"),
            Self::File(path) => write!(f, "file:{}", path.display()),
            Self::Uninit => f.write_str("uninit"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferSpec {
    pub ty: ElemType,
    /// `None` only with a file fill: the file's length.
    pub len: Option<usize>,
    pub fill: Fill,
    /// `TYPE[LEN]+OFFSET`: the kernel gets a pointer this many elements into the buffer, as a
    /// host passes `in + RADIUS`; 0 for the buffer's start.
    pub offset: usize,
}

/// `NAME=OTHER+OFFSET`: a pointer into the buffer another `--arg` names, as a host passes
/// `d_buf + n` for a second array in one allocation, or the same buffer twice (`in=out`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasSpec {
    /// The name of the buffer argument it points into.
    pub target: String,
    /// Elements of the target's type from its start.
    pub offset: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ArgValueSpec {
    Scalar(Scalar),
    Buffer(BufferSpec),
    Alias(AliasSpec),
    /// `{FIELD, FIELD, …}`: a struct passed by value, its fields in declaration order, each a
    /// scalar or a buffer (whose device pointer the struct holds), laid out as C lays them out.
    Struct(Vec<ArgSpec>),
}

/// Where a struct's fields go: C's layout, each field at the next multiple of its alignment, the
/// struct as large as the next multiple of its largest alignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    pub offsets: Vec<usize>,
    pub bytes: usize,
    pub align: usize,
}

impl StructLayout {
    /// The layout of fields of these sizes (each aligned to its size, as scalars and pointers
    /// are).
    pub fn of(sizes: impl IntoIterator<Item = usize>) -> Self {
        let mut offsets = Vec::new();
        let (mut end, mut align) = (0usize, 1usize);
        for size in sizes {
            let at = end.next_multiple_of(size.max(1));
            offsets.push(at);
            end = at + size;
            align = align.max(size);
        }
        Self {
            offsets,
            bytes: end.next_multiple_of(align),
            align,
        }
    }
}

/// A field's bytes: a scalar's size, or a pointer's 8.
fn field_size(kind: ArgKind) -> usize {
    match kind {
        ArgKind::Scalar(ty) => ty.size(),
        ArgKind::Buffer | ArgKind::Struct { .. } => 8,
    }
}

/// One `--arg`: `[NAME:]TYPE=VALUE`, `[NAME:]TYPE[LEN][+OFFSET]=FILL` or `[NAME]=OTHER[+OFFSET]`.
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
    /// A struct by value of this many bytes, aligned to `align`.
    Struct {
        bytes: usize,
        align: usize,
    },
}

/// Why an `--arg` spec does not parse; clap shows it after the spec itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

const SPEC_FORMS: &str = "an argument is TYPE=VALUE (u32=5), TYPE[LEN]=FILL (f32[1024]=random:1), a pointer into another argument's buffer, NAME=OTHER+OFFSET (v=p+4096), or a struct, {FIELD, FIELD, …} ({f32=2, f32[128]=random:1, i32=128})";

/// `[NAME:]{FIELD, …}`: the name and the fields' text, when `text` is a struct.
fn struct_parts(text: &str) -> Option<(Option<&str>, &str)> {
    let open = text.find('{')?;
    let name = text[..open].trim();
    let name = match name.strip_suffix(':') {
        Some(name) => Some(name.trim()),
        None if name.is_empty() => None,
        None => return None,
    };
    Some((name, &text[open + 1..]))
}

fn parse_struct(name: Option<&str>, rest: &str) -> Result<ArgSpec, SpecError> {
    let Some(body) = rest.trim_end().strip_suffix('}') else {
        return Err(SpecError(
            "a struct lacks its closing `}`; a struct is {FIELD, FIELD, …}".to_string(),
        ));
    };
    if body.contains('{') {
        return Err(SpecError(
            "a struct inside a struct: write the inner struct's fields in its place, in order"
                .to_string(),
        ));
    }
    if let Some(name) = name
        && !is_name(name)
    {
        return Err(SpecError(format!(
            "`{name}` is not a name; names are letters, digits and _ (functor:{{f32=2, i32=8}})"
        )));
    }
    let mut fields = Vec::new();
    for (index, text) in body.split(',').enumerate() {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpecError(format!(
                "field {index} of the struct is empty; fields are separated by one comma"
            )));
        }
        let field: ArgSpec = text
            .parse()
            .map_err(|SpecError(reason)| SpecError(format!("field {index}, `{text}`: {reason}")))?;
        if let ArgValueSpec::Alias(_) = field.value {
            return Err(SpecError(format!(
                "field {index}, `{text}`: a field cannot point into another argument; give the field its own buffer (f32[128]=zeros)"
            )));
        }
        fields.push(field);
    }
    Ok(ArgSpec {
        name: name.map(str::to_string),
        value: ArgValueSpec::Struct(fields),
    })
}

/// Whether `text` is a C-style identifier, as argument names are.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `+N` after a buffer's `]` or an alias's target: elements from the start.
fn parse_offset(text: &str) -> Result<usize, SpecError> {
    let digits = text.trim();
    if let Some(negative) = digits.strip_prefix('-') {
        return Err(SpecError(format!(
            "`-{}`: an offset counts forward from the buffer's start (+N elements); make the buffer larger and point into it instead",
            negative.trim()
        )));
    }
    let Some(digits) = digits.strip_prefix('+') else {
        return Err(SpecError(format!(
            "`{digits}` after the buffer is not an offset; write +N (f32[1024]+16=zeros)"
        )));
    };
    let digits = digits.trim();
    digits.parse().map_err(|_| {
        SpecError(format!(
            "`{digits}` is not an offset (a whole number of elements, as in in + 16)"
        ))
    })
}

/// `OTHER` or `OTHER+N`, when `text` has that shape.
fn alias_target(text: &str) -> Option<Result<AliasSpec, SpecError>> {
    let text = text.trim();
    let (target, offset) = match text.find(['+', '-']) {
        Some(at) => (text[..at].trim(), Some(&text[at..])),
        None => (text, None),
    };
    if !is_name(target) {
        return None;
    }
    let offset = match offset.map(parse_offset).transpose() {
        Ok(offset) => offset.unwrap_or(0),
        Err(error) => return Some(Err(error)),
    };
    Some(Ok(AliasSpec {
        target: target.to_string(),
        offset,
    }))
}

impl FromStr for ArgSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        if let Some((name, rest)) = struct_parts(text) {
            return parse_struct(name, rest);
        }
        let Some((left, right)) = text.split_once('=') else {
            return Err(SpecError(format!("no `=`; {SPEC_FORMS}")));
        };
        let (name, typed) = match left.split_once(':') {
            Some((name, typed)) => (Some(name.trim()), typed.trim()),
            None => (None, left.trim()),
        };
        // `v=p+4096` or `=p`: no type on the left, another argument's name on the right.
        if name.is_none()
            && (typed.is_empty() || is_name(typed) && typed.parse::<ElemType>().is_err())
        {
            let fill_word =
                matches!(right.trim(), "zeros" | "iota" | "uninit") || right.contains(':');
            let alias = if fill_word { None } else { alias_target(right) };
            let Some(alias) = alias else {
                return Err(SpecError(if typed.is_empty() {
                    format!(
                        "`={right}` names no argument; a pointer into another argument's buffer is NAME=OTHER+OFFSET (v=p+4096)"
                    )
                } else {
                    format!(
                        "`{typed}` is not a type, and `{right}` does not name another argument; {SPEC_FORMS}"
                    )
                }));
            };
            return Ok(Self {
                name: (!typed.is_empty()).then(|| typed.to_string()),
                value: ArgValueSpec::Alias(alias?),
            });
        }
        if let Some(name) = name
            && !is_name(name)
        {
            return Err(SpecError(format!(
                "`{name}` is not a name; names are letters, digits and _ (histo:u32[128]=zeros)"
            )));
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
        let Some((len_text, after)) = len_text.split_once(']') else {
            return Err(SpecError(format!(
                "`{typed}` lacks its closing `]`; a buffer is TYPE[LEN]=FILL"
            )));
        };
        let offset = if after.trim().is_empty() {
            0
        } else {
            parse_offset(after)?
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
        if let Some(len) = len
            && offset > len
        {
            return Err(SpecError(format!(
                "+{offset} is past the end of {ty}[{len}]; an offset points into the buffer (at most its length)"
            )));
        }
        Ok(Self {
            name,
            value: ArgValueSpec::Buffer(BufferSpec {
                ty,
                len,
                fill,
                offset,
            }),
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
        ("uninit", None) => Ok(Fill::Uninit),
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
            "`{text}` is not a fill; expected zeros, const:V, iota, random:SEED, file:PATH or uninit"
        )),
    }
}

impl ArgSpec {
    pub fn kind(&self) -> ArgKind {
        match &self.value {
            ArgValueSpec::Scalar(value) => ArgKind::Scalar(value.ty()),
            ArgValueSpec::Buffer(_) | ArgValueSpec::Alias(_) => ArgKind::Buffer,
            ArgValueSpec::Struct(fields) => {
                let layout = StructLayout::of(fields.iter().map(|f| field_size(f.kind())));
                ArgKind::Struct {
                    bytes: layout.bytes,
                    align: layout.align,
                }
            }
        }
    }

    /// What the kernel is handed, for [`super::ctype::check_c_signature`]: a pointer into
    /// another argument's buffer has that buffer's element type (`None` when `all`, the launch's
    /// specs, names no such buffer).
    pub fn given(&self, all: &[ArgSpec]) -> Option<Given> {
        Some(match &self.value {
            ArgValueSpec::Scalar(value) => Given::Scalar(value.ty()),
            ArgValueSpec::Buffer(buffer) => Given::Buffer(buffer.ty),
            ArgValueSpec::Alias(alias) => all.iter().find_map(|other| match &other.value {
                ArgValueSpec::Buffer(buffer) if other.name.as_deref() == Some(&alias.target) => {
                    Some(Given::Buffer(buffer.ty))
                }
                _ => None,
            })?,
            ArgValueSpec::Struct(_) => Given::Struct,
        })
    }

    /// The name reports use: the spec's own, else `arg<index>`.
    pub fn label(&self, index: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("arg{index}"))
    }

    /// Makes the data: generates fills, reads files (relative to the working directory). A
    /// pointer into another argument's buffer needs the others: see [`resolve_all`].
    pub fn resolve(&self, index: usize) -> Result<HostArg> {
        let label = self.label(index);
        let buffer = match &self.value {
            ArgValueSpec::Scalar(value) => {
                return Ok(HostArg::Scalar {
                    label,
                    value: *value,
                });
            }
            ArgValueSpec::Struct(fields) => {
                let fields = fields
                    .iter()
                    .enumerate()
                    .map(|(i, field)| {
                        let mut field = field.clone();
                        let name = field.name.clone().unwrap_or_else(|| i.to_string());
                        field.name = Some(format!("{label}.{name}"));
                        field.resolve(index)
                    })
                    .collect::<Result<Vec<_>>>()?;
                return Ok(HostArg::Struct { label, fields });
            }
            ArgValueSpec::Alias(alias) => {
                return Err(CheckError::Fill {
                    index,
                    spec: self.to_string(),
                    reason: format!(
                        "points into {}, which only the whole argument list can resolve",
                        alias.target
                    ),
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
        if buffer.offset > data.len() {
            return Err(refuse(format!(
                "+{} is past the end of its {} elements",
                buffer.offset,
                data.len()
            )));
        }
        Ok(HostArg::Buffer {
            label,
            data,
            uninit: buffer.fill == Fill::Uninit,
            offset: buffer.offset,
        })
    }
}

/// Resolves every `--arg` in order: [`ArgSpec::resolve`] for values and buffers, and each
/// `NAME=OTHER+OFFSET` to the buffer argument named OTHER (which may come before or after it).
pub fn resolve_all(specs: &[ArgSpec]) -> Result<Vec<HostArg>> {
    specs
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            let ArgValueSpec::Alias(alias) = &spec.value else {
                return spec.resolve(index);
            };
            let refuse = |reason: String| CheckError::Fill {
                index,
                spec: spec.to_string(),
                reason,
            };
            let Some(target) = specs
                .iter()
                .position(|other| other.name.as_deref() == Some(alias.target.as_str()))
            else {
                let names: Vec<&str> = specs
                    .iter()
                    .filter(|other| matches!(other.value, ArgValueSpec::Buffer(_)))
                    .filter_map(|other| other.name.as_deref())
                    .collect();
                return Err(refuse(if names.is_empty() {
                    format!(
                        "no --arg is named {0}; name the buffer it points into ({0}:f32[1024]=zeros)",
                        alias.target
                    )
                } else {
                    format!(
                        "no --arg is named {}; the named buffers are {}",
                        alias.target,
                        names.join(", ")
                    )
                }));
            };
            // Whether the offset stays inside the target is checked below, once its data exist
            // (a file's length is known only then).
            match &specs[target].value {
                ArgValueSpec::Buffer(_) => {}
                ArgValueSpec::Scalar(_) => {
                    return Err(refuse(format!(
                        "{} is a scalar; a pointer points into a buffer",
                        alias.target
                    )));
                }
                ArgValueSpec::Alias(_) => {
                    return Err(refuse(format!(
                        "{0} is itself a pointer into another buffer; point into that buffer directly",
                        alias.target
                    )));
                }
                ArgValueSpec::Struct(_) => {
                    return Err(refuse(format!(
                        "{} is a struct; a pointer points into a buffer",
                        alias.target
                    )));
                }
            }
            Ok(HostArg::Alias {
                label: spec.label(index),
                target,
                offset: alias.offset,
            })
        })
        .collect::<Result<Vec<_>>>()
        .and_then(|args| {
            // A file fill's length is known only now.
            for (index, arg) in args.iter().enumerate() {
                if let HostArg::Alias { target, offset, .. } = arg
                    && let Some(HostArg::Buffer { data, label, .. }) = args.get(*target)
                    && *offset > data.len()
                {
                    return Err(CheckError::Fill {
                        index,
                        spec: specs[index].to_string(),
                        reason: format!(
                            "+{offset} is past the end of {label}, which has {} elements",
                            data.len()
                        ),
                    });
                }
            }
            Ok(args)
        })
}

impl fmt::Display for ArgSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            f.write_str(name)?;
            if !matches!(self.value, ArgValueSpec::Alias(_)) {
                f.write_str(":")?;
            }
        }
        match &self.value {
            ArgValueSpec::Struct(fields) => {
                f.write_str("{")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}")?;
                }
                f.write_str("}")
            }
            ArgValueSpec::Scalar(value) => write!(f, "{}={value}", value.ty()),
            ArgValueSpec::Buffer(BufferSpec {
                ty,
                len,
                fill,
                offset,
            }) => {
                match len {
                    Some(len) => write!(f, "{ty}[{len}]")?,
                    None => write!(f, "{ty}[]")?,
                }
                if *offset > 0 {
                    write!(f, "+{offset}")?;
                }
                write!(f, "={fill}")
            }
            ArgValueSpec::Alias(AliasSpec { target, offset }) => {
                // The name, if any, was written before the `=` with no `:`.
                write!(f, "={target}")?;
                if *offset > 0 {
                    write!(f, "+{offset}")?;
                }
                Ok(())
            }
        }
    }
}

fn generate<T: HostElement + Send>(len: usize, fill: &Fill) -> Result<HostData, String> {
    let values: Vec<T> = match fill {
        // Zeroed memory straight from the allocator, which faults its pages in on first touch.
        Fill::Zeros => bytemuck::zeroed_vec(len),
        // On every core ([`crate::cores::fill`]).
        Fill::Const(text) => {
            let value = parse_typed::<T>(text)?;
            let mut values = bytemuck::zeroed_vec(len);
            crate::cores::fill(&mut values, |_| value);
            values
        }
        Fill::Iota => {
            let mut values = bytemuck::zeroed_vec(len);
            crate::cores::fill(&mut values, T::from_index);
            values
        }
        // On every core, a piece of a million elements to each ChaCha stream of the seed: up
        // to a million elements, exactly one generator's sequence.
        Fill::Random(seed) => {
            let mut values = bytemuck::zeroed_vec(len);
            seeded_fill(&mut values, *seed, |rng, piece| {
                for value in piece {
                    *value = T::random(rng);
                }
            });
            values
        }
        Fill::File(_) => return Err("a file fill is read, not generated".into()),
        // What the host sees of a buffer nobody wrote; the device allocates it uninitialized.
        Fill::Uninit => bytemuck::zeroed_vec(len),
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
    Scalar {
        label: String,
        value: Scalar,
    },
    Buffer {
        label: String,
        data: HostData,
        /// `=uninit`: allocated without writing `data` (which only gives the type and length),
        /// so the emulator's initcheck reports reads of elements the kernel did not write first.
        uninit: bool,
        /// Elements into the buffer that the kernel's pointer starts (`TYPE[LEN]+OFFSET`).
        offset: usize,
    },
    /// A pointer into the buffer of argument `target`, `offset` of its elements from the start.
    Alias {
        label: String,
        target: usize,
        offset: usize,
    },
    /// A struct by value: its fields in order, each a scalar or a buffer labelled `label.field`.
    Struct {
        label: String,
        fields: Vec<HostArg>,
    },
}

impl HostArg {
    pub fn buffer(label: &str, data: impl Into<HostData>) -> Self {
        Self::Buffer {
            label: label.to_string(),
            data: data.into(),
            uninit: false,
            offset: 0,
        }
    }

    /// A buffer of `len` elements of `data`'s type that nothing has written (`=uninit`).
    pub fn uninit(label: &str, data: impl Into<HostData>) -> Self {
        Self::Buffer {
            label: label.to_string(),
            data: data.into(),
            uninit: true,
            offset: 0,
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
            Self::Buffer { .. } | Self::Alias { .. } => ArgKind::Buffer,
            Self::Struct { .. } => {
                let layout = self.layout().unwrap_or_else(|| StructLayout::of([]));
                ArgKind::Struct {
                    bytes: layout.bytes,
                    align: layout.align,
                }
            }
        }
    }

    /// What the kernel is handed, for [`super::ctype::check_c_signature`]; `all` is the
    /// launch's arguments, where a pointer into another's buffer finds its element type.
    pub fn given(&self, all: &[HostArg]) -> Option<Given> {
        Some(match self {
            Self::Scalar { value, .. } => Given::Scalar(value.ty()),
            Self::Buffer { data, .. } => Given::Buffer(data.ty()),
            Self::Alias { target, .. } => match all.get(*target)? {
                Self::Buffer { data, .. } => Given::Buffer(data.ty()),
                _ => return None,
            },
            Self::Struct { .. } => Given::Struct,
        })
    }

    /// Where a struct's fields go; `None` for any other argument.
    pub fn layout(&self) -> Option<StructLayout> {
        match self {
            Self::Struct { fields, .. } => Some(StructLayout::of(
                fields.iter().map(|field| field_size(field.kind())),
            )),
            _ => None,
        }
    }

    pub fn label(&self) -> &str {
        match self {
            Self::Scalar { label, .. }
            | Self::Buffer { label, .. }
            | Self::Alias { label, .. }
            | Self::Struct { label, .. } => label,
        }
    }
}

impl fmt::Display for HostArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scalar { label, value } => write!(f, "{label}:{}={value}", value.ty()),
            Self::Buffer {
                label,
                data,
                offset,
                ..
            } => {
                write!(f, "{label}:{}[{}]", data.ty(), data.len())?;
                if *offset > 0 {
                    write!(f, "+{offset}")?;
                }
                Ok(())
            }
            Self::Alias {
                label,
                target,
                offset,
            } => write!(f, "{label}=arg{target}+{offset}"),
            Self::Struct { label, fields } => {
                write!(f, "{label}:{{")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{field}")?;
                }
                f.write_str("}")
            }
        }
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
                fill: Fill::Zeros,
                offset: 0
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
        assert!(refused("u24=3").contains("`u24` is not a type"));
        assert!(refused("f16=1e6").contains("`1e6` is not an f16 number"));
        assert!(refused("i8=-129").contains("expected an integer from -128 to 127"));
        assert!(refused("u8=300").contains("`300` is not a u8"));
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
    fn buffers_take_an_offset_and_pointers_name_other_buffers() {
        let shifted = spec("in:f32[264]+4=iota");
        assert_eq!(
            shifted.value,
            ArgValueSpec::Buffer(BufferSpec {
                ty: ElemType::F32,
                len: Some(264),
                fill: Fill::Iota,
                offset: 4
            })
        );
        assert_eq!(shifted.to_string(), "in:f32[264]+4=iota");
        assert_eq!(spec("u8[]+ 3=file:x.bin").to_string(), "u8[]+3=file:x.bin");
        let alias = spec("v=p+4096");
        assert_eq!(alias.name.as_deref(), Some("v"));
        assert_eq!(
            alias.value,
            ArgValueSpec::Alias(AliasSpec {
                target: "p".into(),
                offset: 4096
            })
        );
        assert_eq!(alias.kind(), ArgKind::Buffer);
        assert_eq!(alias.to_string(), "v=p+4096");
        assert_eq!(spec("=out").to_string(), "=out");
        assert_eq!(spec("in = out").value, spec("x=out").value);

        let args: Vec<ArgSpec> = ["p:f32[8]=iota", "v=p+4", "o:i32[2]+1=zeros", "=o"]
            .iter()
            .map(|text| spec(text))
            .collect();
        let resolved = resolve_all(&args).unwrap();
        assert_eq!(
            resolved[1],
            HostArg::Alias {
                label: "v".into(),
                target: 0,
                offset: 4
            }
        );
        assert!(matches!(resolved[2], HostArg::Buffer { offset: 1, .. }));
        assert_eq!(
            resolved[3],
            HostArg::Alias {
                label: "arg3".into(),
                target: 2,
                offset: 0
            }
        );
    }

    #[test]
    fn bad_offsets_and_pointers_say_what_is_wrong() {
        assert!(refused("f32[4]+5=zeros").contains("+5 is past the end of f32[4]"));
        assert!(refused("f32[4]-1=zeros").contains("counts forward"));
        assert!(refused("f32[4]+x=zeros").contains("`x` is not an offset"));
        assert!(refused("f32[4]*2=zeros").contains("is not an offset"));
        assert!(refused("v=p-2").contains("counts forward"));
        assert!(refused("v=2").contains("`v` is not a type"));
        assert!(refused("v=zeros").contains("`v` is not a type"));
        assert!(refused("=3").contains("names no argument"));
        let resolve = |texts: &[&str]| {
            let args: Vec<ArgSpec> = texts.iter().map(|text| spec(text)).collect();
            resolve_all(&args).unwrap_err().to_string()
        };
        let missing = resolve(&["p:f32[8]=iota", "v=q+1"]);
        assert!(
            missing.contains("no --arg is named q; the named buffers are p"),
            "{missing}"
        );
        assert!(resolve(&["n:i32=3", "v=n"]).contains("n is a scalar"));
        assert!(resolve(&["p:f32[8]=iota", "v=p+9"]).contains("+9 is past the end of p"));
        assert!(resolve(&["p:f32[8]=iota", "v=p", "w=v"]).contains("itself a pointer"));
    }

    #[test]
    fn narrow_and_half_types_parse_as_numbers() {
        assert_eq!(
            spec("i8=-128").value,
            ArgValueSpec::Scalar(Scalar::I8(-128))
        );
        assert_eq!(
            spec("u16=0xffff").value,
            ArgValueSpec::Scalar(Scalar::U16(65535))
        );
        assert_eq!(spec("i16=-3").value, ArgValueSpec::Scalar(Scalar::I16(-3)));
        assert_eq!(
            spec("h:f16=0.5").value,
            ArgValueSpec::Scalar(Scalar::F16(f16::from_f32(0.5)))
        );
        assert_eq!(spec("bf16=1.5").to_string(), "bf16=1.5");
        assert!(
            matches!(spec("i16=-3").value, ArgValueSpec::Scalar(s) if matches!(s.arg(), Arg::U16(0xfffd)))
        );
        assert!(
            matches!(spec("f16=1").value, ArgValueSpec::Scalar(s) if matches!(s.arg(), Arg::U16(0x3c00)))
        );
        let made = |text: &str| match spec(text).resolve(0).unwrap() {
            HostArg::Buffer { data, .. } => data,
            other => panic!("{text} is not a buffer: {other}"),
        };
        let halves = made("f16[4]=iota");
        assert_eq!(
            halves.as_bytes(),
            [0, 0, 0x00, 0x3c, 0x00, 0x40, 0x00, 0x42]
        );
        assert_eq!(halves.head(4), ["0", "1", "2", "3"]);
        assert_eq!(halves.to_json(), serde_json::json!([0.0, 1.0, 2.0, 3.0]));
        assert_eq!(
            made("bf16[2]=const:-2").as_bytes(),
            [0x00, 0xc0, 0x00, 0xc0]
        );
        assert_eq!(made("i8[3]=const:-1"), HostData::I8(vec![-1, -1, -1]));
    }

    #[test]
    fn uninit_resolves_to_a_buffer_allocated_uninitialized() {
        let uninit = spec("scratch:f32[64]=uninit");
        assert_eq!(
            uninit.value,
            ArgValueSpec::Buffer(BufferSpec {
                ty: ElemType::F32,
                len: Some(64),
                fill: Fill::Uninit,
                offset: 0
            })
        );
        assert_eq!(uninit.to_string(), "scratch:f32[64]=uninit");
        assert_eq!(
            uninit.resolve(2).unwrap(),
            HostArg::uninit("scratch", HostData::F32(vec![0.0; 64]))
        );
        let HostArg::Buffer { uninit, .. } = spec("f32[4]=zeros").resolve(0).unwrap() else {
            panic!("a buffer");
        };
        assert!(!uninit);
    }

    #[test]
    fn a_struct_lays_out_its_fields_as_c_does() {
        // struct { float a; const float *x; int n; }: 4 bytes of padding after a, 4 at the end.
        let functor = spec("f:{f32=2, f32[128]=random:1, i32=128}");
        assert_eq!(functor.name.as_deref(), Some("f"));
        assert_eq!(
            functor.kind(),
            ArgKind::Struct {
                bytes: 24,
                align: 8
            }
        );
        let resolved = functor.resolve(3).unwrap();
        assert_eq!(resolved.layout().unwrap().offsets, [0, 8, 16]);
        let HostArg::Struct { fields, .. } = &resolved else {
            panic!("{resolved} is not a struct");
        };
        let labels: Vec<_> = fields.iter().map(HostArg::label).collect();
        assert_eq!(labels, ["f.0", "f.1", "f.2"]);
        // struct { char c; short s; int i; }: 1 + 1 padding + 2 + 4, aligned to 4.
        assert_eq!(
            spec("{u8=1, i16=-2, i32=3}").kind(),
            ArgKind::Struct { bytes: 8, align: 4 }
        );
        assert_eq!(
            StructLayout::of([8, 1]),
            StructLayout {
                offsets: vec![0, 8],
                bytes: 16,
                align: 8
            }
        );
        let named = spec("{count:i64=32, data:u32[4]=iota}");
        assert_eq!(named.to_string(), "{count:i64=32, data:u32[4]=iota}");
    }

    #[test]
    fn bad_structs_are_refused_with_what_to_write() {
        assert!(
            refused("{f32=2, i32=8").contains("closing `}`"),
            "{}",
            refused("{f32=2, i32=8")
        );
        assert!(refused("{f32=2, {i32=1}}").contains("inside a struct"));
        assert!(refused("{f32=2,, i32=8}").contains("field 1 of the struct is empty"));
        assert!(refused("{f32=2, v=p+4}").contains("cannot point into another argument"));
        assert!(refused("{f32=two}").starts_with("field 0, `f32=two`"));
        assert!(refused("1x:{f32=2}").contains("not a name"));
    }

    #[test]
    fn fills_make_the_documented_data() {
        let made = |text: &str| match spec(text).resolve(0).unwrap() {
            HostArg::Buffer { data, .. } => data,
            other => panic!("{text} is not a buffer: {other}"),
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

    /// A random fill is drawn on every core in pieces, each from a stream of the seed of its
    /// own: the first piece is one generator's sequence, and the values do not depend on how
    /// many cores drew them.
    #[test]
    fn a_large_random_fill_is_the_same_on_one_core_and_on_several() {
        use rand::Rng;
        let len = crate::cli::SEEDED_PIECE + 1000;
        let text = format!("f32[{len}]=random:9");
        let made_on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            match pool.install(|| spec(&text).resolve(0).unwrap()) {
                HostArg::Buffer { data, .. } => data.values::<f32>().unwrap().to_vec(),
                other => panic!("{text} is not a buffer: {other}"),
            }
        };
        let one = made_on(1);
        assert_eq!(one, made_on(3));
        let mut rng = crate::cli::seeded_rng(9);
        let first: Vec<f32> = (0..crate::cli::SEEDED_PIECE)
            .map(|_| rng.random())
            .collect();
        assert_eq!(one[..crate::cli::SEEDED_PIECE], first[..]);
        // The second piece is a stream of its own, not the first one's continuation.
        assert_ne!(one[crate::cli::SEEDED_PIECE], rng.random::<f32>());
    }

    /// `iota` and `const:V` are filled on every core in pieces: on one core and on three, across
    /// the pieces' edges, they are the values one loop makes, bit for bit.
    #[test]
    fn fills_are_the_same_on_one_core_and_on_several() {
        let made_on = |text: &str, threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool");
            match pool.install(|| spec(text).resolve(0).unwrap()) {
                HostArg::Buffer { data, .. } => data,
                other => panic!("{text} is not a buffer: {other}"),
            }
        };
        fn serial<T: HostElement>(len: usize, value: impl Fn(usize) -> T) -> HostData {
            T::into_data((0..len).map(value).collect())
        }
        for ty in ElemType::ALL {
            let len = 2 * crate::cores::PIECE_BYTES / ty.size() + 3;
            let iota = format!("{ty}[{len}]=iota");
            let one = made_on(&iota, 1);
            assert_eq!(one.as_bytes(), made_on(&iota, 3).as_bytes(), "{iota}");
            let expected = with_type!(ty, serial(len, HostElement::from_index));
            assert_eq!(one.as_bytes(), expected.as_bytes(), "{iota}");
            let value = if ty.is_float() { "-1.5" } else { "7" };
            let constant = format!("{ty}[{len}]=const:{value}");
            let one = made_on(&constant, 1);
            assert_eq!(
                one.as_bytes(),
                made_on(&constant, 3).as_bytes(),
                "{constant}"
            );
            let expected = with_type!(ty, serial(len, |_| parse_typed(value).unwrap()));
            assert_eq!(one.as_bytes(), expected.as_bytes(), "{constant}");
        }
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
            HostArg::Buffer { label, data, .. } => {
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
}
