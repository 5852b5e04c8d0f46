//! A kernel's C++ parameters read as types (`const unsigned char *data` is a pointer to `u8`),
//! and arguments checked against them: PTX says only `.u64` or `.u32`, so a `u32` buffer for an
//! `unsigned char*`, or an `i32` for an `unsigned int`, fits the PTX and is still wrong.
//!
//! [`check_c_signature`] is the check, free of any compiled program so that every face that
//! launches a kernel (`racetrack check`, the exercises, Python) can ask it with what it has.

use std::fmt;

use super::data::ElemType;
use super::{CTypeMismatch, CheckError, Result};

/// What a C++ parameter holds, as far as its declaration tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CType {
    /// A number: `int`, `unsigned char`, `float`, `__half`, `size_t`…
    Scalar(ElemType),
    /// A pointer (or an array parameter, `float in[]`): to elements of a known type, or
    /// `None` for `void*`, structs, vectors (`float4*`) and types only the program defines.
    Pointer {
        pointee: Option<ElemType>,
        is_const: bool,
    },
    /// A `bool`, one byte on the device.
    Bool,
    /// `char`, whose signedness C leaves open: `i8` and `u8` both fit.
    Char,
    /// Anything else (a struct by value, a typedef of the program's own): the PTX check is
    /// all there is.
    Other,
}

/// One parameter as the source (or a mangled name) declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CParam {
    /// The declaration on one line: `const unsigned char *data`, or `float const*` when read back
    /// from a mangled name.
    pub declared: String,
    /// `data`; `None` when the declaration names none.
    pub name: Option<String>,
    pub ty: CType,
}

/// Words that qualify a type without changing what an argument must be.
const QUALIFIERS: &[&str] = &[
    "volatile",
    "__restrict__",
    "__restrict",
    "restrict",
    "__grid_constant__",
    "struct",
    "class",
];

impl CParam {
    /// Reads `text`, one parameter as written: `const float *__restrict__ in`, `unsigned int n`,
    /// `float const*`, `int a[]`.
    pub fn parse(text: &str) -> Self {
        let declared = text.split_whitespace().collect::<Vec<_>>().join(" ");
        // `float*x`, `int a[]`, `T&`: the symbols as words of their own.
        let spaced = declared
            .replace('*', " * ")
            .replace('&', " & ")
            .replace("[]", " * ");
        let mut words: Vec<&str> = spaced
            .split_whitespace()
            .filter(|word| !QUALIFIERS.contains(word))
            .collect();
        let pointers = words.iter().filter(|word| **word == "*").count();
        let reference = words.contains(&"&");
        // `const` before the first `*` makes the pointee const; after it, the pointer itself.
        let first_star = words.iter().position(|word| *word == "*");
        let is_const = words
            .iter()
            .take(first_star.unwrap_or(words.len()))
            .any(|word| *word == "const");
        words.retain(|word| !matches!(*word, "*" | "&" | "const"));
        let named = words.len() > 1
            && words
                .last()
                .is_some_and(|last| !is_type_word(last) && is_identifier(last));
        let name = if named {
            words.pop().map(str::to_string)
        } else {
            None
        };
        let base = base_type(&words);
        let ty = match (pointers, reference) {
            (_, true) => CType::Other,
            (0, false) => base,
            (1, false) => CType::Pointer {
                pointee: match base {
                    CType::Scalar(ty) => Some(ty),
                    CType::Char => Some(ElemType::I8),
                    CType::Bool => Some(ElemType::U8),
                    CType::Pointer { .. } | CType::Other => None,
                },
                is_const,
            },
            // `float **rows`: a pointer to pointers, whose elements a buffer of u64 holds.
            (_, false) => CType::Pointer {
                pointee: Some(ElemType::U64),
                is_const,
            },
        };
        Self { declared, name, ty }
    }

    /// The element types a buffer for this pointer may have: `char*` takes `i8` or `u8`.
    fn buffer_types(&self) -> Option<Vec<ElemType>> {
        match self.ty {
            CType::Pointer {
                pointee: Some(ty), ..
            } if self.base_is_char() => Some(vec![ty, ElemType::U8]),
            CType::Pointer {
                pointee: Some(ty), ..
            } => Some(vec![ty]),
            _ => None,
        }
    }

    fn base_is_char(&self) -> bool {
        let words: Vec<&str> = self
            .declared
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .collect();
        words.contains(&"char") && !words.contains(&"signed") && !words.contains(&"unsigned")
    }

    /// The scalar types that fit this parameter; `None` when it is no scalar the check knows.
    fn scalar_types(&self) -> Option<Vec<ElemType>> {
        match self.ty {
            CType::Scalar(ty) => Some(vec![ty]),
            CType::Char => Some(vec![ElemType::I8, ElemType::U8]),
            CType::Bool => Some(vec![ElemType::U8]),
            CType::Pointer { .. } | CType::Other => None,
        }
    }

    /// What this parameter takes, in words: `a pointer to unsigned char (a u8 buffer)`.
    fn wants(&self) -> String {
        match (self.buffer_types(), self.scalar_types()) {
            (Some(types), _) => format!("a pointer, to {} elements", names(&types)),
            (None, Some(types)) => format!("a scalar {}", names(&types)),
            (None, None) => match self.ty {
                CType::Pointer { .. } => "a pointer".to_string(),
                _ => "what its declaration says".to_string(),
            },
        }
    }
}

fn names(types: &[ElemType]) -> String {
    types
        .iter()
        .map(|ty| ty.name())
        .collect::<Vec<_>>()
        .join(" or ")
}

impl fmt::Display for CParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.declared)
    }
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// Words that are part of a built-in type's name, so that `unsigned int` is not read as the
/// type `unsigned` and a parameter called `int`.
fn is_type_word(word: &str) -> bool {
    matches!(
        word,
        "unsigned"
            | "signed"
            | "char"
            | "short"
            | "int"
            | "long"
            | "float"
            | "double"
            | "bool"
            | "void"
    ) || named_type(word).is_some()
}

/// Types known by one name: fixed-width integers, `size_t`, CUDA's half types.
fn named_type(word: &str) -> Option<CType> {
    let word = word.strip_prefix("std::").unwrap_or(word);
    Some(CType::Scalar(match word {
        "int8_t" => ElemType::I8,
        "uint8_t" => ElemType::U8,
        "int16_t" => ElemType::I16,
        "uint16_t" => ElemType::U16,
        "int32_t" => ElemType::I32,
        "uint32_t" | "uint" => ElemType::U32,
        "int64_t" | "ptrdiff_t" | "intptr_t" | "ssize_t" => ElemType::I64,
        "uint64_t" | "size_t" | "uintptr_t" => ElemType::U64,
        "__half" | "half" => ElemType::F16,
        "__nv_bfloat16" | "nv_bfloat16" => ElemType::BF16,
        _ => return None,
    }))
}

/// The type the remaining words (no name, no `*`, no qualifiers) spell, as the device's ABI
/// (LP64) lays it out.
fn base_type(words: &[&str]) -> CType {
    if let [word] = words
        && let Some(ty) = named_type(word)
    {
        return ty;
    }
    let has = |word: &str| words.contains(&word);
    let longs = words.iter().filter(|word| **word == "long").count();
    let unsigned = has("unsigned");
    let known = words.iter().all(|word| {
        matches!(
            *word,
            "unsigned" | "signed" | "char" | "short" | "int" | "long" | "float" | "double" | "bool"
        )
    });
    if words.is_empty() || !known {
        return CType::Other;
    }
    let integer = |signed: ElemType, unsigned_ty: ElemType| {
        CType::Scalar(if unsigned { unsigned_ty } else { signed })
    };
    if has("float") {
        CType::Scalar(ElemType::F32)
    } else if has("double") {
        // `long double` is 8 bytes on the device too.
        CType::Scalar(ElemType::F64)
    } else if has("bool") {
        CType::Bool
    } else if has("char") {
        if unsigned {
            CType::Scalar(ElemType::U8)
        } else if has("signed") {
            CType::Scalar(ElemType::I8)
        } else {
            CType::Char
        }
    } else if has("short") {
        integer(ElemType::I16, ElemType::U16)
    } else if longs > 0 {
        integer(ElemType::I64, ElemType::U64)
    } else {
        integer(ElemType::I32, ElemType::U32)
    }
}

/// What a launch hands one parameter, as far as the check needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given {
    /// A device buffer (or a pointer into one) of these elements.
    Buffer(ElemType),
    Scalar(ElemType),
    /// A struct by value.
    Struct,
    /// Something the caller cannot tell (a pointer into a buffer it does not see): left to the
    /// PTX check.
    Unknown,
}

/// One argument of a launch: what it is, and how the caller spelled it (`u32[256]=random:1`),
/// for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenArg {
    pub given: Given,
    pub text: String,
}

/// Checks `args` against the C++ parameters `params` of kernel `entry` (as
/// [`super::front::names::params_of`] gives them): pointer or scalar, element type, signedness
/// and width. Parameters whose type the check cannot read (structs, the program's own typedefs)
/// are left to the PTX check. The count is the caller's to check first, against the PTX.
///
/// The error is one line that names the parameter, what was given, and an `--arg` that fits.
pub fn check_c_signature(entry: &str, params: &[String], args: &[GivenArg]) -> Result<()> {
    for (index, (param, arg)) in params.iter().zip(args).enumerate() {
        let param = CParam::parse(param);
        if let Some(fits) = mismatch(&param, arg) {
            return Err(CheckError::CType(Box::new(CTypeMismatch {
                index,
                arg: arg.text.clone(),
                entry: entry.to_string(),
                declared: param.declared.clone(),
                wants: param.wants(),
                fits,
            })));
        }
    }
    Ok(())
}

/// `None` when `arg` fits `param`; else an `--arg` that would.
fn mismatch(param: &CParam, arg: &GivenArg) -> Option<String> {
    let label = arg
        .text
        .split_once(':')
        .filter(|(name, _)| is_identifier(name) && !name.contains("::"))
        .map_or(String::new(), |(name, _)| format!("{name}:"));
    match (&arg.given, param.buffer_types(), param.scalar_types()) {
        (Given::Unknown, ..) => None,
        (Given::Buffer(ty), Some(types), _) if !types.contains(ty) => {
            Some(format!("{label}{}", retyped_buffer(&arg.text, types[0])))
        }
        (Given::Scalar(_) | Given::Struct, Some(types), _) => {
            Some(format!("{label}{}[LEN]=zeros", types[0]))
        }
        (Given::Scalar(ty), None, Some(types)) if !types.contains(ty) => {
            let value = arg.text.split_once('=').map_or("…", |(_, value)| value);
            Some(format!("{label}{}={value}", types[0]))
        }
        (Given::Buffer(_) | Given::Struct, None, Some(types)) => {
            Some(format!("{label}{}=VALUE", types[0]))
        }
        (Given::Scalar(_) | Given::Struct, None, None)
            if matches!(param.ty, CType::Pointer { .. }) =>
        {
            Some(format!(
                "{label}u8[LEN]=zeros (a buffer of the pointee's type)"
            ))
        }
        _ => None,
    }
}

/// The buffer spec `text` with its element type replaced: `u32[256]=random:1` → `u8[256]=random:1`.
fn retyped_buffer(text: &str, ty: ElemType) -> String {
    let body = text.split_once(':').map_or(text, |(name, rest)| {
        if is_identifier(name) && rest.contains('[') {
            rest
        } else {
            text
        }
    });
    match body.find('[') {
        Some(open) => format!("{ty}{}", &body[open..]),
        None => format!("{ty}[LEN]=zeros"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElemType::*;

    fn pointer(pointee: ElemType, is_const: bool) -> CType {
        CType::Pointer {
            pointee: Some(pointee),
            is_const,
        }
    }

    #[test]
    fn declarations_read_as_types_and_names() {
        let cases = [
            ("int n", CType::Scalar(I32), Some("n")),
            ("unsigned int n", CType::Scalar(U32), Some("n")),
            ("unsigned n", CType::Scalar(U32), Some("n")),
            ("unsigned", CType::Scalar(U32), None),
            ("short s", CType::Scalar(I16), Some("s")),
            ("unsigned short", CType::Scalar(U16), None),
            ("signed char c", CType::Scalar(I8), Some("c")),
            ("unsigned char", CType::Scalar(U8), None),
            ("char c", CType::Char, Some("c")),
            ("long long n", CType::Scalar(I64), Some("n")),
            ("unsigned long long", CType::Scalar(U64), None),
            ("long n", CType::Scalar(I64), Some("n")),
            ("size_t n", CType::Scalar(U64), Some("n")),
            ("uint8_t v", CType::Scalar(U8), Some("v")),
            ("std::int16_t v", CType::Scalar(I16), Some("v")),
            ("uint32_t", CType::Scalar(U32), None),
            ("int64_t v", CType::Scalar(I64), Some("v")),
            ("float a", CType::Scalar(F32), Some("a")),
            ("double", CType::Scalar(F64), None),
            ("__half h", CType::Scalar(F16), Some("h")),
            ("__nv_bfloat16 b", CType::Scalar(BF16), Some("b")),
            ("bool flag", CType::Bool, Some("flag")),
            ("int *x", pointer(I32, false), Some("x")),
            ("int* x", pointer(I32, false), Some("x")),
            ("int*x", pointer(I32, false), Some("x")),
            (
                "const float *__restrict__ in",
                pointer(F32, true),
                Some("in"),
            ),
            ("float const*", pointer(F32, true), None),
            ("unsigned char const*", pointer(U8, true), None),
            ("float * const out", pointer(F32, false), Some("out")),
            ("volatile int *flag", pointer(I32, false), Some("flag")),
            ("int a[]", pointer(I32, false), Some("a")),
            ("float **rows", pointer(U64, false), Some("rows")),
            (
                "void *p",
                CType::Pointer {
                    pointee: None,
                    is_const: false,
                },
                Some("p"),
            ),
            (
                "float4 *v",
                CType::Pointer {
                    pointee: None,
                    is_const: false,
                },
                Some("v"),
            ),
            ("Params p", CType::Other, Some("p")),
            ("const Params &p", CType::Other, Some("p")),
        ];
        for (text, want, name) in cases {
            let param = CParam::parse(text);
            assert_eq!(param.ty, want, "{text}");
            assert_eq!(param.name.as_deref(), name, "{text}");
        }
    }

    fn buffer(ty: ElemType, text: &str) -> GivenArg {
        GivenArg {
            given: Given::Buffer(ty),
            text: text.to_string(),
        }
    }

    fn scalar(ty: ElemType, text: &str) -> GivenArg {
        GivenArg {
            given: Given::Scalar(ty),
            text: text.to_string(),
        }
    }

    fn message(params: &[&str], args: &[GivenArg]) -> Option<String> {
        let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        check_c_signature("k", &params, args)
            .err()
            .map(|error| error.to_string())
    }

    /// Every integer width and signedness, each float type: the matching scalar fits, every
    /// other type is refused with the one that fits.
    #[test]
    fn each_scalar_kind_takes_its_own_type_only() {
        let kinds = [
            ("signed char", I8),
            ("unsigned char", U8),
            ("short", I16),
            ("unsigned short", U16),
            ("int", I32),
            ("unsigned int", U32),
            ("long long", I64),
            ("unsigned long long", U64),
            ("__half", F16),
            ("__nv_bfloat16", BF16),
            ("float", F32),
            ("double", F64),
        ];
        for (declared, want) in kinds {
            let param = format!("{declared} v");
            for given in ElemType::ALL {
                let text = format!("{given}=1");
                let error = message(&[&param], &[scalar(given, &text)]);
                if given == want {
                    assert_eq!(error, None, "{param} given {text}");
                } else {
                    let error = error.unwrap_or_else(|| panic!("{param} took {text}"));
                    assert!(
                        error.contains(&format!("--arg {want}=1 would fit")),
                        "{param} given {text}: {error}"
                    );
                    assert!(error.contains(&format!("`{param}`")), "{error}");
                }
            }
        }
    }

    #[test]
    fn each_pointer_kind_takes_a_buffer_of_its_elements() {
        let kinds = [
            ("unsigned char const *data", U8),
            ("const signed char *c", I8),
            ("short *s", I16),
            ("unsigned short *s", U16),
            ("const int *in", I32),
            ("unsigned int *histo", U32),
            ("long long *v", I64),
            ("size_t *v", U64),
            ("__half *h", F16),
            ("__nv_bfloat16 *b", BF16),
            ("float *__restrict__ y", F32),
            ("double *d", F64),
        ];
        for (param, want) in kinds {
            for given in ElemType::ALL {
                let text = format!("{given}[64]=iota");
                let error = message(&[param], &[buffer(given, &text)]);
                if given == want {
                    assert_eq!(error, None, "{param} given {text}");
                } else {
                    let error = error.unwrap_or_else(|| panic!("{param} took {text}"));
                    assert!(
                        error.contains(&format!("--arg {want}[64]=iota would fit")),
                        "{error}"
                    );
                }
            }
        }
    }

    /// The case: a `u32` buffer for `unsigned char*`, a `u32` for an `int`.
    #[test]
    fn the_histogram_mismatches_are_one_line_each() {
        let params = ["unsigned char const*", "int", "unsigned int*"];
        let error = message(
            &params,
            &[
                buffer(U32, "data:u32[256]=random:1"),
                scalar(I32, "i32=256"),
                buffer(U32, "u32[128]=zeros"),
            ],
        );
        assert_eq!(
            error.as_deref(),
            Some(
                "--arg 0 (`data:u32[256]=random:1`) does not fit parameter 0 of k, `unsigned char const*`: it takes a pointer, to u8 elements; --arg data:u8[256]=random:1 would fit"
            )
        );
        let error = message(
            &params,
            &[
                buffer(U8, "u8[256]=random:1"),
                scalar(U32, "u32=256"),
                buffer(U32, "u32[128]=zeros"),
            ],
        );
        assert_eq!(
            error.as_deref(),
            Some(
                "--arg 1 (`u32=256`) does not fit parameter 1 of k, `int`: it takes a scalar i32; --arg i32=256 would fit"
            )
        );
        assert!(!error.unwrap_or_default().contains('\n'));
    }

    #[test]
    fn pointers_and_scalars_are_not_taken_for_each_other() {
        let error = message(&["float *y"], &[scalar(U64, "u64=0")]).unwrap_or_default();
        assert!(error.contains("--arg f32[LEN]=zeros would fit"), "{error}");
        let error = message(&["long n"], &[buffer(I64, "i64[4]=zeros")]).unwrap_or_default();
        assert!(error.contains("--arg i64=VALUE would fit"), "{error}");
        let error = message(&["void *p"], &[scalar(U64, "u64=0")]).unwrap_or_default();
        assert!(error.contains("it takes a pointer;"), "{error}");
        let error = message(
            &["float *y"],
            &[GivenArg {
                given: Given::Struct,
                text: "{f32=1}".into(),
            }],
        )
        .unwrap_or_default();
        assert!(error.contains("f32[LEN]=zeros"), "{error}");
    }

    /// What the declaration leaves open is not refused: `char`'s signedness, `void*` and
    /// vector pointees, structs by value, `bool` as a byte.
    #[test]
    fn what_a_declaration_leaves_open_is_accepted() {
        assert_eq!(message(&["char c"], &[scalar(U8, "u8=1")]), None);
        assert_eq!(message(&["char c"], &[scalar(I8, "i8=1")]), None);
        assert_eq!(
            message(&["const char *s"], &[buffer(U8, "u8[4]=zeros")]),
            None
        );
        assert_eq!(message(&["void *p"], &[buffer(F64, "f64[4]=zeros")]), None);
        assert_eq!(
            message(&["float4 *v"], &[buffer(F32, "f32[4]=zeros")]),
            None
        );
        assert_eq!(message(&["bool b"], &[scalar(U8, "u8=1")]), None);
        assert!(message(&["bool b"], &[scalar(I32, "i32=1")]).is_some());
        let by_value = GivenArg {
            given: Given::Struct,
            text: "{f32=2, i32=8}".into(),
        };
        assert_eq!(message(&["Functor f"], &[by_value]), None);
        assert_eq!(
            message(&["float **rows"], &[buffer(U64, "u64[4]=zeros")]),
            None
        );
    }
}
