//! Arithmetic, comparisons, selects, conversions and bit-field opcodes: `mov`, `add`, `mad`,
//! `setp`, `cvt`, `bfe`, `prmt` and their friends.

use super::super::operands::parse_cmp;
use super::super::parser::*;
use super::opcode::Opcode;

impl Parser {
    pub(crate) fn decode_arith(&mut self, o: &Opcode) -> Result<Op, EmuError> {
        let (base, ops, line) = (o.base, &o.ops, o.line);
        let (mods, types, fm, space) = (&o.mods, &o.types, o.fm, o.space);
        let has = |m: &str| o.has(m);
        let need_ty = || o.need_ty();
        let nops = |n: usize| o.nops(n);
        let unsupported = || o.unsupported();
        Ok(match base {
            "mov" => {
                nops(2)?;
                let t = need_ty()?;
                match (&ops[0], &ops[1]) {
                    (Raw::Vec(ds), a) => {
                        let part_bits = t.bits() / ds.len().max(1) as u32;
                        if !matches!(ds.len(), 2 | 4) || !matches!(part_bits, 8 | 16 | 32) {
                            return Err(parse_err(line, "bad vector mov"));
                        }
                        let ds = ds
                            .iter()
                            .map(|d| match d {
                                Raw::Name(n) if n == "_" => Ok(None),
                                d => self.dreg(d, line).map(Some),
                            })
                            .collect::<Result<_, _>>()?;
                        Op::Unpack {
                            part_bits,
                            ds,
                            a: self.val(a, t, line)?,
                        }
                    }
                    (d, Raw::Vec(parts)) => {
                        let part_bits = t.bits() / parts.len().max(1) as u32;
                        if !matches!(parts.len(), 2 | 4) {
                            return Err(parse_err(line, "bad vector mov"));
                        }
                        let pt = match part_bits {
                            8 => Ty::B8,
                            16 => Ty::B16,
                            32 => Ty::B32,
                            _ => return Err(parse_err(line, "bad vector mov")),
                        };
                        Op::Pack {
                            part_bits,
                            d: self.dreg(d, line)?,
                            parts: parts
                                .iter()
                                .map(|p| self.val(p, pt, line))
                                .collect::<Result<_, _>>()?,
                        }
                    }
                    (d, a) => {
                        // A function's address: filled in once every function has its index.
                        if let Raw::Name(n) = a
                            && self.lookup(n).is_none()
                            && self.declared_funcs.contains(n)
                        {
                            if t.bits() != 64 {
                                return Err(unsupported());
                            }
                            self.func_addr_fixups.push(FuncAddrFixup {
                                name: n.clone(),
                                line,
                                place: FuncAddrPlace::Mov(o.at),
                            });
                            return Ok(Op::Mov {
                                ty: t,
                                d: self.dreg(d, line)?,
                                a: Opnd::Imm(0),
                            });
                        }
                        Op::Mov {
                            ty: t,
                            d: self.dreg(d, line)?,
                            a: self.val(a, t, line)?,
                        }
                    }
                }
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor"
            | "shl" | "shr" | "copysign" => {
                if has("cc") || has("relu") || has("NaN") || has("xorsign") {
                    return Err(unsupported());
                }
                nops(3)?;
                let t = need_ty()?;
                let op = match base {
                    "add" => BinOp::Add,
                    "sub" => BinOp::Sub,
                    "mul" if has("hi") => BinOp::MulHi,
                    "mul" if has("wide") => BinOp::MulWide,
                    "mul" => BinOp::MulLo,
                    "div" => BinOp::Div,
                    "rem" => BinOp::Rem,
                    "min" => BinOp::Min,
                    "max" => BinOp::Max,
                    "and" => BinOp::And,
                    "or" => BinOp::Or,
                    "xor" => BinOp::Xor,
                    "shl" => BinOp::Shl,
                    "shr" => BinOp::Shr,
                    _ => BinOp::CopySign,
                };
                let half_supported = matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::MulLo | BinOp::Min | BinOp::Max
                ) && !fm.directed();
                if (t.half() && !half_supported)
                    || (fm.directed()
                        && !matches!(op, BinOp::Add | BinOp::Sub | BinOp::MulLo | BinOp::Div))
                {
                    return Err(unsupported());
                }
                // Shift amounts are always u32.
                let bt = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    Ty::U32
                } else {
                    t
                };
                Op::Bin {
                    op,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], bt, line)?,
                    fm,
                }
            }
            "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt"
            | "rsqrt" | "rcp" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
                nops(2)?;
                let t = need_ty()?;
                let rounds = matches!(base, "sqrt" | "rcp") && matches!(t, Ty::F32 | Ty::F64);
                if (t.half() && !matches!(base, "neg" | "abs")) || (fm.directed() && !rounds) {
                    return Err(unsupported());
                }
                let op = match base {
                    "neg" => UnOp::Neg,
                    "abs" => UnOp::Abs,
                    "not" => UnOp::Not,
                    "cnot" => UnOp::CNot,
                    "popc" => UnOp::Popc,
                    "clz" => UnOp::Clz,
                    "brev" => UnOp::Brev,
                    "bfind" if has("shiftamt") => UnOp::BfindShiftAmt,
                    "bfind" => UnOp::Bfind,
                    "sqrt" => UnOp::Sqrt,
                    "rsqrt" => UnOp::Rsqrt,
                    "rcp" => UnOp::Rcp,
                    "ex2" => UnOp::Ex2,
                    "lg2" => UnOp::Lg2,
                    "sin" => UnOp::Sin,
                    "cos" => UnOp::Cos,
                    _ => UnOp::Tanh,
                };
                Op::Un {
                    op,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    fm,
                }
            }
            "mad" | "fma" => {
                if has("cc") || has("relu") {
                    return Err(unsupported());
                }
                nops(4)?;
                let t = need_ty()?;
                let half_refused = t.half() && (base == "mad" || fm.directed());
                if half_refused || has("24") {
                    return Err(unsupported());
                }
                let wide = has("wide");
                let ct = if wide { wide_ty(t) } else { t };
                Op::Mad {
                    ty: t,
                    hi: has("hi"),
                    wide,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], ct, line)?,
                    fm,
                    negate: Negate::default(),
                }
            }
            "setp" | "set" => {
                let cmp = mods
                    .iter()
                    .find_map(|m| parse_cmp(m))
                    .ok_or_else(unsupported)?;
                let comb = mods.iter().find_map(|m| match *m {
                    "and" => Some(BoolOp::And),
                    "or" => Some(BoolOp::Or),
                    "xor" => Some(BoolOp::Xor),
                    _ => None,
                });
                let t = need_ty()?;
                if base == "set" {
                    if comb.is_some() || types.len() != 2 {
                        return Err(unsupported());
                    }
                    nops(3)?;
                    return Ok(Op::Set {
                        cmp,
                        dty: types[0],
                        ty: t,
                        d: self.dreg(&ops[0], line)?,
                        a: self.val(&ops[1], t, line)?,
                        b: self.val(&ops[2], t, line)?,
                    });
                }
                nops(if comb.is_some() { 4 } else { 3 })?;
                let (d, d2) = match &ops[0] {
                    Raw::Pipe(a, b) => (self.dreg(a, line)?, Some(self.dreg(b, line)?)),
                    d => (self.dreg(d, line)?, None),
                };
                let comb = match comb {
                    Some(bo) => {
                        let (c, neg) = match &ops[3] {
                            Raw::Not(x) => (x.as_ref(), true),
                            x => (x, false),
                        };
                        Some((bo, self.val(c, Ty::Pred, line)?, neg))
                    }
                    None => None,
                };
                Op::Setp {
                    cmp,
                    ty: t,
                    d,
                    d2,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    comb,
                    ftz: fm.ftz,
                }
            }
            "selp" => {
                nops(4)?;
                let t = need_ty()?;
                let (c, neg) = match &ops[3] {
                    Raw::Not(x) => (x.as_ref(), true),
                    x => (x, false),
                };
                Op::Selp {
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(c, Ty::Pred, line)?,
                    neg,
                }
            }
            "slct" => {
                nops(4)?;
                if types.len() != 2 {
                    return Err(unsupported());
                }
                let (t, ct) = (types[0], types[1]);
                Op::Slct {
                    ty: t,
                    cty: ct,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], ct, line)?,
                }
            }
            "cvt" => {
                nops(2)?;
                if types.len() != 2
                    || has("relu")
                    || mods.iter().any(|m| {
                        m.starts_with("f16x2")
                            || m.starts_with("bf16x2")
                            || m.starts_with("e4m3")
                            || m.starts_with("e5m2")
                            || m.starts_with("tf32")
                    })
                {
                    return Err(unsupported());
                }
                let rnd = mods
                    .iter()
                    .find_map(|m| {
                        Some(match *m {
                            "rn" => Rnd::Rn,
                            "rz" => Rnd::Rz,
                            "rm" => Rnd::Rm,
                            "rp" => Rnd::Rp,
                            "rni" => Rnd::Rni,
                            "rzi" => Rnd::Rzi,
                            "rmi" => Rnd::Rmi,
                            "rpi" => Rnd::Rpi,
                            _ => return None,
                        })
                    })
                    .unwrap_or(Rnd::Default);
                let (dty, sty) = (types[0], types[1]);
                let d = self.dreg(&ops[0], line)?;
                let dbits = self.reg_bits_of(d);
                Op::Cvt {
                    dty,
                    sty,
                    rnd,
                    fm,
                    d,
                    a: self.val(&ops[1], sty, line)?,
                    dbits,
                }
            }
            "cvta" => {
                nops(2)?;
                // Generic addresses of parameters (`cvta.param`) have no window here.
                if space == Space::Param {
                    return Err(unsupported());
                }
                let t = need_ty()?;
                Op::Cvta {
                    to: has("to"),
                    space,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    wide: t.bits() == 64,
                }
            }
            "bfe" => {
                nops(4)?;
                let t = need_ty()?;
                Op::Bfe {
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], Ty::U32, line)?,
                    c: self.val(&ops[3], Ty::U32, line)?,
                }
            }
            "bfi" => {
                nops(5)?;
                let t = need_ty()?;
                Op::Bfi {
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    f: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], Ty::U32, line)?,
                    e: self.val(&ops[4], Ty::U32, line)?,
                }
            }
            "bmsk" => {
                nops(3)?;
                let op = if has("clamp") {
                    BinOp::BmskClamp
                } else if has("wrap") {
                    BinOp::BmskWrap
                } else {
                    return Err(unsupported());
                };
                Op::Bin {
                    op,
                    ty: Ty::B32,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], Ty::U32, line)?,
                    b: self.val(&ops[2], Ty::U32, line)?,
                    fm,
                }
            }
            "prmt" => {
                nops(4)?;
                if mods.len() != 1 {
                    return Err(unsupported());
                }
                Op::Prmt {
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], Ty::B32, line)?,
                    b: self.val(&ops[2], Ty::B32, line)?,
                    c: self.val(&ops[3], Ty::B32, line)?,
                }
            }
            "testp" => {
                nops(2)?;
                let t = need_ty()?;
                let tp = mods
                    .iter()
                    .find_map(|m| {
                        Some(match *m {
                            "finite" => TestP::Finite,
                            "infinite" => TestP::Infinite,
                            "number" => TestP::Number,
                            "notanumber" => TestP::NotANumber,
                            "normal" => TestP::Normal,
                            "subnormal" => TestP::Subnormal,
                            _ => return None,
                        })
                    })
                    .ok_or_else(unsupported)?;
                Op::TestP {
                    t: tp,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                }
            }
            "mul24" => {
                nops(3)?;
                let t = need_ty()?;
                if t.bits() != 32 {
                    return Err(unsupported());
                }
                Op::Bin {
                    op: if has("hi") {
                        BinOp::Mul24Hi
                    } else {
                        BinOp::Mul24Lo
                    },
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    fm,
                }
            }
            "mad24" | "lop3" | "shf" | "dp4a" | "dp2a" | "sad" => {
                let t = need_ty()?;
                if t.bits() != 32 || has("sat") || has("cc") {
                    return Err(unsupported());
                }
                let signed = |ty: Option<&Ty>| ty.is_some_and(|t| t.signed());
                let op = match base {
                    "mad24" => Int3Op::Mad24 {
                        hi: has("hi"),
                        signed: t.signed(),
                    },
                    "lop3" => {
                        nops(5)?;
                        let lut =
                            match &ops[4] {
                                Raw::Num(n, false) => parse_int(n)
                                    .and_then(|v| u8::try_from(v).ok())
                                    .ok_or_else(|| parse_err(line, "bad lop3 table"))?,
                                _ => return Err(parse_err(line, "lop3 needs a constant table")),
                            };
                        Int3Op::Lop3 { lut }
                    }
                    "sad" => Int3Op::Sad { signed: t.signed() },
                    "shf" => Int3Op::Shf {
                        left: has("l"),
                        wrap: has("wrap"),
                    },
                    _ => Int3Op::Dot {
                        pairs: if base == "dp4a" { 4 } else { 2 },
                        hi: has("hi"),
                        a_signed: signed(types.first()),
                        b_signed: signed(types.get(1)),
                    },
                };
                if !matches!(op, Int3Op::Lop3 { .. }) {
                    nops(4)?;
                }
                Op::Int3 {
                    op,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    b: self.val(&ops[2], t, line)?,
                    c: self.val(&ops[3], t, line)?,
                }
            }
            _ => unreachable!("decode sends only this family's opcodes here"),
        })
    }
}
