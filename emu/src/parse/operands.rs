//! Operands: registers, immediates, special registers, addresses and `.param` names, and the
//! number and comparison syntax inside them.

use super::parser::*;

impl Parser {
    pub(crate) fn raw_operand(&mut self) -> Result<Raw, EmuError> {
        let line = self.line();
        match self.next()? {
            Tok::P('{') => {
                let mut v = Vec::new();
                while !self.is_p('}') {
                    v.push(self.raw_operand()?);
                    if self.is_p(',') {
                        self.pos += 1;
                    }
                }
                self.pos += 1;
                Ok(Raw::Vec(v))
            }
            Tok::P('(') => {
                let mut v = Vec::new();
                while !self.is_p(')') {
                    v.push(self.raw_operand()?);
                    if self.is_p(',') {
                        self.pos += 1;
                    }
                }
                self.pos += 1;
                Ok(Raw::Paren(v))
            }
            Tok::P('[') => {
                let base = if self.is_p('-') || matches!(self.peek(), Some(Tok::Num(_))) {
                    Raw::Num("0".into(), false)
                } else {
                    self.raw_operand()?
                };
                let mut off: i64 = 0;
                while !self.is_p(']') {
                    let neg = match self.next()? {
                        Tok::P('+') => {
                            if self.is_p('-') {
                                self.pos += 1;
                                true
                            } else {
                                false
                            }
                        }
                        Tok::P('-') => true,
                        Tok::Num(s) => {
                            off = off.wrapping_add(
                                parse_int(&s)
                                    .ok_or_else(|| parse_err(line, "bad address offset"))?
                                    as i64,
                            );
                            continue;
                        }
                        t => {
                            return Err(parse_err(
                                line,
                                format!("bad address: unexpected {}", show(&t)),
                            ));
                        }
                    };
                    let v = self.int()? as i64;
                    off = if neg {
                        off.wrapping_sub(v)
                    } else {
                        off.wrapping_add(v)
                    };
                }
                self.pos += 1;
                Ok(Raw::Addr(Box::new(base), off))
            }
            Tok::P('!') => Ok(Raw::Not(Box::new(self.raw_operand()?))),
            Tok::P('-') => match self.next()? {
                Tok::Num(s) => Ok(Raw::Num(s, true)),
                t => Err(parse_err(
                    line,
                    format!("expected a number after `-`, found {}", show(&t)),
                )),
            },
            Tok::Num(s) => Ok(Raw::Num(s, false)),
            Tok::Ident(s) => {
                if self.is_p('|') {
                    self.pos += 1;
                    let b = self.raw_operand()?;
                    return Ok(Raw::Pipe(Box::new(Raw::Name(s)), Box::new(b)));
                }
                Ok(Raw::Name(s))
            }
            t => Err(parse_err(
                line,
                format!("unexpected {} in operand", show(&t)),
            )),
        }
    }

    /// The operands of `opcode`, up to and including its `;`.
    pub(crate) fn operands(&mut self, opcode: &str, line: u32) -> Result<Vec<Raw>, EmuError> {
        let mut ops = Vec::new();
        while !self.is_p(';') {
            if self.peek().is_none() {
                return Err(parse_err(line, format!("`{opcode}` is missing its `;`")));
            }
            ops.push(self.raw_operand()?);
            if self.is_p(',') {
                self.pos += 1;
            } else if !self.is_p(';') {
                let l = self.line();
                return Err(parse_err(l, format!("expected `,` or `;` in `{opcode}`")));
            }
        }
        self.pos += 1;
        Ok(ops)
    }

    pub(crate) fn sreg(name: &str) -> Option<Sreg> {
        let dim = |s: &str| match s {
            "x" => Some(0u8),
            "y" => Some(1),
            "z" => Some(2),
            _ => None,
        };
        if let Some((base, d)) = name.rsplit_once('.') {
            let d = dim(d)?;
            return Some(match base {
                "%tid" => Sreg::Tid(d),
                "%ntid" => Sreg::Ntid(d),
                "%ctaid" | "%clusterid" => Sreg::Ctaid(d),
                "%nctaid" | "%nclusterid" => Sreg::Nctaid(d),
                "%cluster_ctaid" => Sreg::Zero,
                _ => return None,
            });
        }
        Some(match name {
            "%laneid" => Sreg::LaneId,
            "%warpid" => Sreg::WarpId,
            "%nwarpid" => Sreg::NWarpId,
            "%clock" => Sreg::Clock,
            "%clock64" | "%globaltimer" => Sreg::Clock64,
            "%globaltimer_lo" => Sreg::Clock,
            "%globaltimer_hi" => Sreg::ClockHi,
            "%lanemask_eq" => Sreg::LaneMaskEq,
            "%lanemask_lt" => Sreg::LaneMaskLt,
            "%lanemask_le" => Sreg::LaneMaskLe,
            "%lanemask_gt" => Sreg::LaneMaskGt,
            "%lanemask_ge" => Sreg::LaneMaskGe,
            "%dynamic_smem_size" => Sreg::DynSmem,
            "%total_smem_size" => Sreg::TotalSmem,
            "%smid" | "%gridid" | "%nsmid" => Sreg::Zero,
            "%reserved_smem_offset_begin" | "%reserved_smem_offset_0" => Sreg::ReservedSmem(0),
            "%reserved_smem_offset_1" => Sreg::ReservedSmem(8),
            "%reserved_smem_offset_end" => {
                Sreg::ReservedSmem(u16::try_from(RESERVED_SMEM).unwrap_or(0))
            }
            // An ordinary launch makes every block a cluster of one.
            "%cluster_ctarank" | "%is_explicit_cluster" => Sreg::Zero,
            // The driver's environment registers. A cooperative launch puts the grid barrier's
            // address in %envreg1 (high half) and %envreg2 (low half); an ordinary launch leaves
            // them 0, and cooperative_groups' grid sync then traps, as on a GPU.
            "%envreg1" => Sreg::EnvRegHi,
            "%envreg2" => Sreg::EnvRegLo,
            _ if name
                .strip_prefix("%envreg")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n < 32) =>
            {
                Sreg::Zero
            }
            _ => return None,
        })
    }

    pub(crate) fn val(&self, r: &Raw, ty: Ty, line: u32) -> Result<Opnd, EmuError> {
        match r {
            Raw::Num(s, neg) => num_bits(s, *neg, ty)
                .map(Opnd::Imm)
                .ok_or_else(|| parse_err(line, format!("bad number `{s}`"))),
            Raw::Name(n) => {
                if let Some(sr) = Self::sreg(n) {
                    return Ok(Opnd::Sreg(sr));
                }
                // PTX's predefined constant for `warpSize`; sizes of a one-block cluster and
                // of the reserved shared memory.
                match n.as_str() {
                    "WARP_SZ" => return Ok(Opnd::Imm(32)),
                    "%cluster_nctarank" | "%cluster_nctaid.x" | "%cluster_nctaid.y"
                    | "%cluster_nctaid.z" => return Ok(Opnd::Imm(1)),
                    "%reserved_smem_offset_cap" => return Ok(Opnd::Imm(RESERVED_SMEM.into())),
                    _ => {}
                }
                match self.lookup(n) {
                    Some(Sym::Reg(r)) => Ok(Opnd::Reg(r)),
                    Some(Sym::Shared(o)) => {
                        self.shared_uses.borrow_mut().push((self.cur_func, o));
                        self.shared_address_lines.borrow_mut().push((line, o));
                        Ok(Opnd::Imm(o as u64))
                    }
                    Some(Sym::DynShared) => Ok(Opnd::Sreg(Sreg::DynSmemBase)),
                    Some(Sym::Local(o)) => Ok(Opnd::Imm(o as u64)),
                    Some(Sym::Global(a)) => Ok(Opnd::Imm(a)),
                    // A kernel parameter's address in the `.param` space is its offset in the
                    // parameter buffer, which `ld.param` through a register reads
                    // (`__grid_constant__` parameters, large structs passed by value).
                    Some(Sym::KParam(o)) => Ok(Opnd::Imm(o as u64)),
                    Some(Sym::TParam(_)) => Err(EmuError::Unsupported {
                        instruction: format!("taking the address of parameter `{n}`"),
                        line,
                    }),
                    None => Err(parse_err(line, format!("unknown name `{n}`"))),
                }
            }
            _ => Err(parse_err(line, "expected a register or constant")),
        }
    }

    pub(crate) fn dreg(&self, r: &Raw, line: u32) -> Result<u32, EmuError> {
        match r {
            Raw::Name(n) if n == "_" => Ok(SINK),
            Raw::Name(n) => match self.lookup(n) {
                Some(Sym::Reg(r)) => Ok(r),
                _ => Err(parse_err(line, format!("`{n}` is not a register"))),
            },
            _ => Err(parse_err(line, "expected a destination register")),
        }
    }

    pub(crate) fn reg_bits_of(&self, slot: u32) -> u32 {
        self.reg_bits.get(slot as usize).copied().unwrap_or(64)
    }

    pub(crate) fn addr(&self, r: &Raw, line: u32) -> Result<Addr, EmuError> {
        let (base, off) = match r {
            Raw::Addr(b, o) => (b.as_ref(), *o),
            _ => return Err(parse_err(line, "expected an address `[...]`")),
        };
        if let Raw::Name(n) = base {
            match self.lookup(n) {
                Some(Sym::KParam(o)) => {
                    return Ok(Addr::KParam((o as i64).wrapping_add(off) as u32));
                }
                Some(Sym::TParam(o)) => {
                    return Ok(Addr::TParam((o as i64).wrapping_add(off) as u32));
                }
                _ => {}
            }
        }
        Ok(Addr::Reg {
            base: self.val(base, Ty::U64, line)?,
            off,
        })
    }

    pub(crate) fn tparam_name(&self, r: &Raw, line: u32) -> Result<u32, EmuError> {
        match r {
            Raw::Name(n) => match self.lookup(n) {
                Some(Sym::TParam(o)) => Ok(o),
                _ => Err(parse_err(line, format!("`{n}` is not a .param variable"))),
            },
            _ => Err(parse_err(line, "call arguments must be .param variables")),
        }
    }
}

/// Whether `addr` fits `space`. A register address in `.param` is a kernel parameter's (the
/// only parameter address the emulator hands out), which loads may read and nothing may write.
pub(crate) fn check_space_addr(
    space: Space,
    addr: Addr,
    line: u32,
    load: bool,
) -> Result<(), EmuError> {
    match (space, addr) {
        (Space::Param, Addr::Reg { .. }) if !load => Err(EmuError::Unsupported {
            instruction: "st.param or atom.param through a register address".into(),
            line,
        }),
        (s, Addr::KParam(_) | Addr::TParam(_)) if s != Space::Param => Err(parse_err(
            line,
            "a parameter name used as a non-param address",
        )),
        _ => Ok(()),
    }
}

pub(crate) fn parse_cmp(m: &str) -> Option<Cmp> {
    Some(match m {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" | "lo" => Cmp::Lt,
        "le" | "ls" => Cmp::Le,
        "gt" | "hi" => Cmp::Gt,
        "ge" | "hs" => Cmp::Ge,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

/// The register bits of a literal in an operand of type `ty`.
pub(crate) fn num_bits(s: &str, neg: bool, ty: Ty) -> Option<u64> {
    let is_float_lit = parse_float(s);
    match ty {
        Ty::F32 => {
            if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
                let b = u32::from_str_radix(h, 16).ok()?;
                return Some((if neg { b ^ 0x8000_0000 } else { b }) as u64);
            }
            let v = match is_float_lit {
                Some(f) => f,
                None => parse_int(s)? as f64,
            };
            Some((if neg { -v } else { v } as f32).to_bits() as u64)
        }
        Ty::F64 => {
            let v = match is_float_lit {
                Some(f) => f,
                None => parse_int(s)? as f64,
            };
            Some((if neg { -v } else { v }).to_bits())
        }
        Ty::F16 | Ty::BF16 => {
            let v = match is_float_lit {
                Some(f) => f,
                None => parse_int(s)? as f64,
            };
            let v = if neg { -v } else { v } as f32;
            Some(if ty == Ty::BF16 {
                crate::alu::f32_to_bf16(v)
            } else {
                crate::alu::f32_to_f16(v)
            } as u64)
        }
        _ => {
            if let Some(f) = is_float_lit {
                // A float literal in an integer context keeps its bits (as `mov.b32 %r, 0f...`).
                if s.starts_with("0f") || s.starts_with("0F") {
                    return Some((f as f32).to_bits() as u64);
                }
                return Some(f.to_bits());
            }
            let v = parse_int(s)?;
            let v = if neg { v.wrapping_neg() } else { v };
            let bits = ty.bits();
            Some(if bits >= 64 {
                v
            } else {
                v & ((1u64 << bits) - 1)
            })
        }
    }
}
