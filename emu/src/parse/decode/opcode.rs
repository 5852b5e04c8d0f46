//! `Opcode`: one opcode split into what every family's decoder reads.

use super::super::parser::*;

/// One opcode as every family's decoder reads it: split into its base and modifiers, with its
/// operands and what the modifiers say about type, rounding and state space.
pub(crate) struct Opcode<'a> {
    pub(crate) text: &'a str,
    pub(crate) base: &'a str,
    pub(crate) mods: Vec<&'a str>,
    pub(crate) types: Vec<Ty>,
    pub(crate) ty: Option<Ty>,
    pub(crate) ops: Vec<Raw>,
    pub(crate) line: u32,
    /// Index of the instruction being decoded.
    pub(crate) at: usize,
    /// `Some(F16)` for `.f16x2`, `Some(BF16)` for `.bf16x2`.
    pub(crate) packed: Option<Ty>,
    pub(crate) fm: FMod,
    pub(crate) space: Space,
}

impl<'a> Opcode<'a> {
    pub(crate) fn new(text: &'a str, ops: Vec<Raw>, line: u32, at: usize) -> Opcode<'a> {
        let mut parts = text.split('.');
        let base = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        let has = |m: &str| mods.contains(&m);
        let types: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        let packed = if has("f16x2") {
            Some(Ty::F16)
        } else if has("bf16x2") {
            Some(Ty::BF16)
        } else {
            None
        };
        let fm = FMod {
            ftz: has("ftz"),
            sat: has("sat"),
            // `.rn` written out is kept apart from no modifier: only the latter lets the JIT
            // contract a `mul` and an `add` into an `fma` (`contract.rs`).
            rnd: if has("rz") {
                Rnd::Rz
            } else if has("rm") {
                Rnd::Rm
            } else if has("rp") {
                Rnd::Rp
            } else if has("rn") {
                Rnd::Rn
            } else {
                Rnd::Default
            },
        };
        let space = if has("global") {
            Space::Global
        } else if has("shared") || mods.iter().any(|m| m.starts_with("shared::")) {
            Space::Shared
        } else if has("local") {
            Space::Local
        } else if has("param") {
            Space::Param
        } else if has("const") {
            Space::Const
        } else {
            Space::Generic
        };
        Opcode {
            text,
            base,
            ty: types.last().copied(),
            mods,
            types,
            ops,
            line,
            at,
            packed,
            fm,
            space,
        }
    }

    pub(crate) fn has(&self, modifier: &str) -> bool {
        self.mods.contains(&modifier)
    }

    pub(crate) fn need_ty(&self) -> Result<Ty, EmuError> {
        self.ty
            .ok_or_else(|| parse_err(self.line, format!("`{}` has no type", self.text)))
    }

    pub(crate) fn nops(&self, n: usize) -> Result<(), EmuError> {
        if self.ops.len() == n {
            Ok(())
        } else {
            Err(parse_err(
                self.line,
                format!(
                    "`{}` takes {n} operands, found {}",
                    self.text,
                    self.ops.len()
                ),
            ))
        }
    }

    pub(crate) fn unsupported(&self) -> EmuError {
        EmuError::Unsupported {
            instruction: self.text.to_string(),
            line: self.line,
        }
    }
}
