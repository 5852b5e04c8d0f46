//! Barriers and warp collectives: `bar`/`barrier`, `shfl`, `vote`, `match`, `redux`,
//! `activemask`.

use super::super::parser::*;
use super::opcode::Opcode;

impl Parser {
    pub(crate) fn decode_collective(&mut self, o: &Opcode) -> Result<Op, EmuError> {
        let (base, ops, line) = (o.base, &o.ops, o.line);
        let mods = &o.mods;
        let has = |m: &str| o.has(m);
        let need_ty = || o.need_ty();
        let nops = |n: usize| o.nops(n);
        let unsupported = || o.unsupported();
        Ok(match base {
            "bar" | "barrier" => {
                if has("warp") {
                    nops(1)?;
                    return Ok(Op::BarWarp {
                        mask: self.val(&ops[0], Ty::B32, line)?,
                    });
                }
                let kind = if has("red") {
                    if has("popc") {
                        BarKind::RedPopc
                    } else if has("and") {
                        BarKind::RedAnd
                    } else if has("or") {
                        BarKind::RedOr
                    } else {
                        return Err(unsupported());
                    }
                } else if has("arrive") {
                    BarKind::Arrive
                } else if has("sync") || mods.is_empty() {
                    BarKind::Sync
                } else {
                    return Err(unsupported());
                };
                match kind {
                    BarKind::Sync | BarKind::Arrive => {
                        if ops.is_empty() || ops.len() > 2 {
                            return Err(parse_err(line, "bar takes 1 or 2 operands"));
                        }
                        Op::Bar {
                            kind,
                            id: self.val(&ops[0], Ty::U32, line)?,
                            count: ops.get(1).map(|c| self.val(c, Ty::U32, line)).transpose()?,
                            d: None,
                            p: None,
                        }
                    }
                    _ => {
                        // bar.red.op.type d, a{, b}, {!}c
                        if ops.len() != 3 && ops.len() != 4 {
                            return Err(parse_err(line, "bar.red takes 3 or 4 operands"));
                        }
                        let last = &ops[ops.len() - 1];
                        let (pc, neg) = match last {
                            Raw::Not(x) => (x.as_ref(), true),
                            x => (x, false),
                        };
                        Op::Bar {
                            kind,
                            id: self.val(&ops[1], Ty::U32, line)?,
                            count: if ops.len() == 4 {
                                Some(self.val(&ops[2], Ty::U32, line)?)
                            } else {
                                None
                            },
                            d: Some(self.dreg(&ops[0], line)?),
                            p: Some((self.val(pc, Ty::Pred, line)?, neg)),
                        }
                    }
                }
            }
            "shfl" => {
                let mode = if has("up") {
                    ShflMode::Up
                } else if has("down") {
                    ShflMode::Down
                } else if has("bfly") {
                    ShflMode::Bfly
                } else if has("idx") {
                    ShflMode::Idx
                } else {
                    return Err(unsupported());
                };
                if !has("sync") {
                    return Err(unsupported());
                }
                nops(5)?;
                let (d, dp) = match &ops[0] {
                    Raw::Pipe(a, b) => (self.dreg(a, line)?, Some(self.dreg(b, line)?)),
                    d => (self.dreg(d, line)?, None),
                };
                Op::Shfl {
                    mode,
                    d,
                    dp,
                    a: self.val(&ops[1], Ty::B32, line)?,
                    b: self.val(&ops[2], Ty::U32, line)?,
                    c: self.val(&ops[3], Ty::U32, line)?,
                    mask: self.val(&ops[4], Ty::U32, line)?,
                }
            }
            "vote" => {
                let mode = if has("all") {
                    VoteMode::All
                } else if has("any") {
                    VoteMode::Any
                } else if has("uni") {
                    VoteMode::Uni
                } else if has("ballot") {
                    VoteMode::Ballot
                } else {
                    return Err(unsupported());
                };
                if ops.len() != 3 && ops.len() != 2 {
                    return Err(parse_err(line, "vote takes 2 or 3 operands"));
                }
                let (p, neg) = match &ops[1] {
                    Raw::Not(x) => (x.as_ref(), true),
                    x => (x, false),
                };
                Op::Vote {
                    mode,
                    d: self.dreg(&ops[0], line)?,
                    p: self.val(p, Ty::Pred, line)?,
                    neg,
                    mask: match ops.get(2) {
                        Some(m) => self.val(m, Ty::U32, line)?,
                        None => Opnd::Imm(0xffff_ffff),
                    },
                }
            }
            "match" => {
                let all = if has("all") {
                    true
                } else if has("any") {
                    false
                } else {
                    return Err(unsupported());
                };
                let t = need_ty()?;
                if !has("sync") || !matches!(t, Ty::B32 | Ty::B64) {
                    return Err(unsupported());
                }
                nops(3)?;
                let (d, dp) = match &ops[0] {
                    Raw::Pipe(a, b) if all => (self.dreg(a, line)?, Some(self.dreg(b, line)?)),
                    d => (self.dreg(d, line)?, None),
                };
                Op::Match {
                    all,
                    ty: t,
                    d,
                    dp,
                    a: self.val(&ops[1], t, line)?,
                    mask: self.val(&ops[2], Ty::U32, line)?,
                }
            }
            "redux" => {
                let op = if has("add") {
                    ReduxOp::Add
                } else if has("min") {
                    ReduxOp::Min
                } else if has("max") {
                    ReduxOp::Max
                } else if has("and") {
                    ReduxOp::And
                } else if has("or") {
                    ReduxOp::Or
                } else if has("xor") {
                    ReduxOp::Xor
                } else {
                    return Err(unsupported());
                };
                let t = need_ty()?;
                let bitwise = matches!(op, ReduxOp::And | ReduxOp::Or | ReduxOp::Xor);
                let fits = if bitwise {
                    t == Ty::B32
                } else {
                    matches!(t, Ty::U32 | Ty::S32)
                };
                if !has("sync") || !fits {
                    return Err(unsupported());
                }
                nops(3)?;
                Op::Redux {
                    op,
                    ty: t,
                    d: self.dreg(&ops[0], line)?,
                    a: self.val(&ops[1], t, line)?,
                    mask: self.val(&ops[2], Ty::U32, line)?,
                }
            }
            "activemask" => {
                nops(1)?;
                Op::Activemask {
                    d: self.dreg(&ops[0], line)?,
                }
            }
            _ => unreachable!("decode sends only this family's opcodes here"),
        })
    }
}
