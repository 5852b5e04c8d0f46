//! Which instructions the compiled tier takes, and the regions they form: maximal runs of them
//! that control enters only at the first (a branch target or a function's first instruction
//! starts a new one).

use crate::ir::*;

/// The instructions whose results `translate.rs` computes bit for bit as `exec/instr/arith.rs`
/// does: they read and write registers only (immediates allowed, special registers not, since
/// `%clock` and friends depend on when they run).
pub(crate) fn compilable(ins: &Instr) -> bool {
    let plain = |o: &Opnd| matches!(o, Opnd::Reg(_) | Opnd::Imm(_));
    let int = |t: Ty| !t.float() && t != Ty::Pred;
    match &ins.op {
        Op::Mov { a, .. } => plain(a),
        Op::Bin {
            op, ty, a, b, fm, ..
        } => {
            plain(a)
                && plain(b)
                && match *ty {
                    Ty::Pred => matches!(op, BinOp::And | BinOp::Or | BinOp::Xor),
                    // The interpreter's own fast path: plain IEEE operations.
                    Ty::F32 => {
                        !fm.ftz
                            && !fm.sat
                            && !fm.directed()
                            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::MulLo)
                    }
                    t if int(t) => {
                        !(fm.sat && t.signed())
                            && match op {
                                BinOp::Add
                                | BinOp::Sub
                                | BinOp::MulLo
                                | BinOp::And
                                | BinOp::Or
                                | BinOp::Xor
                                | BinOp::Shl
                                | BinOp::Shr
                                | BinOp::Min
                                | BinOp::Max => true,
                                // A 64-bit type's high half or wide product needs 128 bits,
                                // which the interpreter's `i128` wraps: left to it.
                                BinOp::MulHi | BinOp::MulWide => t.bits() <= 32,
                                _ => false,
                            }
                    }
                    _ => false,
                }
        }
        Op::Mad {
            ty,
            hi: false,
            a,
            b,
            c,
            wide,
            ..
        } => {
            plain(a)
                && plain(b)
                && plain(c)
                && matches!(
                    (ty, wide),
                    (
                        Ty::B32 | Ty::U32 | Ty::S32 | Ty::B64 | Ty::U64 | Ty::S64,
                        false
                    ) | (Ty::U32 | Ty::S32, true)
                )
        }
        Op::Setp {
            ty,
            a,
            b,
            comb,
            ftz,
            ..
        } => {
            plain(a)
                && plain(b)
                && comb.is_none_or(|(_, c, _)| plain(&c))
                && (int(*ty) || (matches!(ty, Ty::F32 | Ty::F64) && !ftz))
        }
        Op::Selp { a, b, c, .. } => plain(a) && plain(b) && plain(c),
        Op::Cvta { space, a, .. } => {
            plain(a) && matches!(space, Space::Shared | Space::Local | Space::Global)
        }
        _ => false,
    }
}

/// The highest register a compilable instruction names (its guard's included).
pub(crate) fn highest_register(ins: &Instr) -> u32 {
    let r = |o: &Opnd| match o {
        Opnd::Reg(r) => *r,
        _ => 0,
    };
    let guard = ins.guard.map_or(0, |(p, _)| p);
    let named = match &ins.op {
        Op::Mov { d, a, .. } | Op::Cvta { d, a, .. } => (*d).max(r(a)),
        Op::Bin { d, a, b, .. } => (*d).max(r(a)).max(r(b)),
        Op::Mad { d, a, b, c, .. } | Op::Selp { d, a, b, c, .. } => {
            (*d).max(r(a)).max(r(b)).max(r(c))
        }
        Op::Setp {
            d, d2, a, b, comb, ..
        } => (*d)
            .max(d2.unwrap_or(0))
            .max(r(a))
            .max(r(b))
            .max(comb.map_or(0, |(_, c, _)| r(&c))),
        _ => 0,
    };
    named.max(guard)
}

/// The regions of `code`: `(start, len)` for each maximal run of compilable instructions that
/// neither a branch target nor a function's start splits.
pub(crate) fn find(code: &[Instr], function_starts: &[u32]) -> Vec<(u32, u32)> {
    let mut entered = vec![false; code.len() + 1];
    for &s in function_starts {
        if let Some(e) = entered.get_mut(s as usize) {
            *e = true;
        }
    }
    for ins in code {
        if let Op::Bra { target } = ins.op
            && let Some(e) = entered.get_mut(target as usize)
        {
            *e = true;
        }
    }
    let mut regions = Vec::new();
    let mut start: Option<u32> = None;
    for (pc, ins) in code.iter().enumerate() {
        let pc = pc as u32;
        if entered[pc as usize]
            && let Some(s) = start.take()
        {
            regions.push((s, pc - s));
        }
        if compilable(ins) {
            start.get_or_insert(pc);
        } else if let Some(s) = start.take() {
            regions.push((s, pc - s));
        }
    }
    if let Some(s) = start {
        regions.push((s, code.len() as u32 - s));
    }
    regions
}
