//! The kernels a PTX module defines and the parameters each takes, which `--arg` is checked against.

use super::args::ArgKind;
use super::data::ElemType;

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
    /// `.align N`, else the size.
    pub align: usize,
    pub class: ParamClass,
}

impl Param {
    pub(super) fn accepts(&self, kind: ArgKind) -> bool {
        match kind {
            ArgKind::Buffer => {
                self.bytes == 8 && matches!(self.class, ParamClass::Int | ParamClass::Bits)
            }
            ArgKind::Struct { bytes, align } => {
                self.class == ParamClass::Aggregate && self.bytes == bytes && self.align == align
            }
            ArgKind::Scalar(ty) => {
                let class_fits = match self.class {
                    ParamClass::Int => !ty.is_float(),
                    ParamClass::Float => ty.is_float(),
                    ParamClass::Bits => true,
                    // `__half` and `__nv_bfloat16` are 2-byte structs passed by value.
                    ParamClass::Aggregate => matches!(ty, ElemType::F16 | ElemType::BF16),
                };
                class_fits && self.bytes == ty.size()
            }
        }
    }

    pub(super) fn describe(&self) -> String {
        let ty = &self.ptx_type;
        match (self.class, self.bytes) {
            (ParamClass::Aggregate, 2) => {
                "a 2-byte struct such as __half (pass f16=… or bf16=…)".to_string()
            }
            (ParamClass::Aggregate, bytes) => format!(
                "a {bytes}-byte struct aligned to {} bytes (pass {{FIELD, FIELD, …}}, its fields in order: scalars as TYPE=VALUE, pointers as TYPE[LEN]=FILL)",
                self.align
            ),
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
            (ParamClass::Int, 2) => format!("PTX .{ty}, a 16-bit integer (pass u16=… or i16=…)"),
            (ParamClass::Int, 1) => {
                format!("PTX .{ty}, an 8-bit integer or bool (pass u8=… or i8=…)")
            }
            (ParamClass::Float | ParamClass::Bits, 2) => {
                format!("PTX .{ty}, 16 bits (pass f16=…, bf16=…, u16=… or i16=…)")
            }
            (_, bytes) => format!("PTX .{ty}, a {bytes}-byte scalar"),
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
    let align = tokens
        .iter()
        .position(|token| *token == ".align")
        .and_then(|at| tokens.get(at + 1)?.parse().ok());
    let name = tokens.last()?;
    if let Some(open) = name.find('[') {
        let count: usize = name[open + 1..].trim_end_matches(']').parse().ok()?;
        return Some(Param {
            ptx_type: format!("{ptx_type}[{count}]"),
            bytes: bytes * count,
            align: align.unwrap_or(bytes),
            class: ParamClass::Aggregate,
        });
    }
    Some(Param {
        ptx_type: ptx_type.to_string(),
        bytes,
        align: align.unwrap_or(bytes),
        class,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
