//! One instruction statement: its guard, opcode and operands, decoded to an `ir::Op` by the
//! family files under `decode/`.

use super::decode::Opcode;
use super::parser::*;

impl Parser {
    pub(crate) fn instruction(&mut self) -> Result<(), EmuError> {
        let line = self.line();
        let mut guard = None;
        if self.is_p('@') {
            self.pos += 1;
            let neg = if self.is_p('!') {
                self.pos += 1;
                true
            } else {
                false
            };
            let g = self.ident()?;
            match self.lookup(&g) {
                Some(Sym::Reg(r)) => guard = Some((r, neg)),
                _ => return Err(parse_err(line, format!("unknown guard predicate `{g}`"))),
            }
        }
        let opcode = self.ident()?;
        let at = self.code.len();
        // An instruction the emulator cannot take becomes `Op::Unsupported`, refused only by a
        // launch that can reach it: one texture fetch must not stop the file's other kernels.
        let unsupported = |opcode: &str, error: EmuError| {
            let detail = match error {
                EmuError::Unsupported { .. } => None,
                EmuError::Parse { message, .. } => Some(message),
                other => Some(other.to_string()),
            };
            Op::Unsupported(Box::new(Unsupported {
                opcode: opcode.to_string(),
                detail,
            }))
        };
        let op = match self.operands(&opcode, line) {
            Ok(ops) => self
                .decode(&opcode, ops, line, at)
                .unwrap_or_else(|error| unsupported(&opcode, error)),
            Err(error) => {
                while self.peek().is_some_and(|t| *t != Tok::P(';')) {
                    self.pos += 1;
                }
                if self.peek().is_none() {
                    return Err(error);
                }
                self.pos += 1;
                unsupported(&opcode, error)
            }
        };
        self.code.push(Instr {
            op,
            guard,
            loc: self.cur_loc,
            ptx_line: line,
        });
        Ok(())
    }

    /// `add.f16x2` and friends (see [`Op::Half2`]); rounding is to nearest, as `.rn` or no
    /// rounding modifier says.
    pub(crate) fn half2(
        &self,
        base: &str,
        ty: Ty,
        ops: &[Raw],
        line: u32,
        fm: FMod,
    ) -> Result<Op, EmuError> {
        let unsupported = || EmuError::Unsupported {
            instruction: format!("{base}.{}x2", ty.name()),
            line,
        };
        let op = match base {
            "pack" => Half2Op::PackFromF32,
            "add" => Half2Op::Bin(BinOp::Add),
            "sub" => Half2Op::Bin(BinOp::Sub),
            "mul" => Half2Op::Bin(BinOp::MulLo),
            "min" => Half2Op::Bin(BinOp::Min),
            "max" => Half2Op::Bin(BinOp::Max),
            "fma" => Half2Op::Fma(Negate::default()),
            "neg" => Half2Op::Un(UnOp::Neg),
            "abs" => Half2Op::Un(UnOp::Abs),
            _ => return Err(unsupported()),
        };
        let arity = match op {
            Half2Op::Bin(_) | Half2Op::PackFromF32 => 3,
            Half2Op::Fma(_) => 4,
            Half2Op::Un(_) => 2,
        };
        if ops.len() != arity {
            return Err(parse_err(
                line,
                format!(
                    "`{base}.{}x2` takes {arity} operands, found {}",
                    ty.name(),
                    ops.len()
                ),
            ));
        }
        let operand = |i: usize| -> Result<Opnd, EmuError> {
            match ops.get(i) {
                Some(raw) => self.val(raw, Ty::B32, line),
                None => Ok(Opnd::Imm(0)),
            }
        };
        Ok(Op::Half2 {
            op,
            ty,
            fm,
            d: self.dreg(&ops[0], line)?,
            a: operand(1)?,
            b: operand(2)?,
            c: operand(3)?,
        })
    }

    /// Decodes `opcode` with its operands: packed-half arithmetic goes to `half2`, everything
    /// else to its family's decoder under `decode/`.
    pub(crate) fn decode(
        &mut self,
        opcode: &str,
        ops: Vec<Raw>,
        line: u32,
        at: usize,
    ) -> Result<Op, EmuError> {
        let o = Opcode::new(opcode, ops, line, at);
        if let Some(half) = o.packed.filter(|_| !matches!(o.base, "atom" | "red")) {
            // `cvt.rn.f16x2.f32 d, a, b`: a pair of f32s packed into halves, rounded to nearest
            // or (`.rz`) toward zero; the arithmetic rounds to nearest only.
            let pack = o.base == "cvt" && o.mods.last() == Some(&"f32");
            let unknown = ["rm", "rp", "relu", "NaN", "xorsign", "satfinite"];
            if (o.has("rz") && !pack) || unknown.iter().any(|m| o.has(m)) {
                return Err(o.unsupported());
            }
            let base = if pack { "pack" } else { o.base };
            let fm = FMod {
                ftz: o.has("ftz"),
                sat: o.has("sat"),
                rnd: if o.has("rz") {
                    Rnd::Rz
                } else if o.has("rn") {
                    Rnd::Rn
                } else {
                    Rnd::Default
                },
            };
            return self.half2(base, half, &o.ops, line, fm);
        }
        match o.base {
            "mov" | "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or"
            | "xor" | "shl" | "shr" | "copysign" | "neg" | "abs" | "not" | "cnot" | "popc"
            | "clz" | "brev" | "bfind" | "sqrt" | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin"
            | "cos" | "tanh" | "mad" | "fma" | "setp" | "set" | "selp" | "slct" | "cvt"
            | "cvta" | "bfe" | "bfi" | "bmsk" | "prmt" | "testp" | "mul24" | "mad24" | "lop3"
            | "shf" | "dp4a" | "dp2a" | "sad" => self.decode_arith(&o),
            "ld" | "ldu" | "st" | "atom" | "red" | "membar" | "fence" | "prefetch"
            | "prefetchu" | "pmevent" | "nanosleep" | "griddepcontrol" => self.decode_memory(&o),
            "bra" | "brx" | "call" | "ret" | "exit" | "trap" => self.decode_control(&o),
            "bar" | "barrier" | "shfl" | "vote" | "match" | "redux" | "activemask" => {
                self.decode_collective(&o)
            }
            "cp" | "mbarrier" => self.decode_async(&o),
            _ => Err(o.unsupported()),
        }
    }
}
