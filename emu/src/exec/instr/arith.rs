//! Integer and floating-point arithmetic, comparisons, selects, bit-field operations and
//! conversions: everything that reads registers and writes registers, lane by lane.

use crate::alu;
use crate::exec::allocs::{LOCAL_WIN, SHARED_WIN};
use crate::exec::ctx::Ctx;
use crate::exec::warp::Warp;
use crate::ir::*;

/// Runs `f` on the operands of every lane of `exec` and writes the result to register slot base
/// `d`. Monomorphized per operation, so the operation and type are decided once per instruction;
/// register and immediate operands are read without going through `Ctx::get`.
#[inline(always)]
pub(crate) fn map2(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    a: Opnd,
    b: Opnd,
    f: impl Fn(u64, u64) -> u64,
) {
    match (a, b) {
        (Opnd::Reg(ra), Opnd::Reg(rb)) => {
            let (ra, rb) = (ra as usize, rb as usize);
            // A lane reads only its own operands, so when the result row is neither operand
            // row the rows are borrowed in place; otherwise they are copied first.
            if d != ra && d != rb {
                if ra == rb {
                    if let Ok([x, out]) = w.regs.get_disjoint_mut([ra, d]) {
                        let x = &*x;
                        lanes!(exec, l, {
                            out[l] = f(x[l], x[l]);
                        });
                        return;
                    }
                } else if let Ok([x, y, out]) = w.regs.get_disjoint_mut([ra, rb, d]) {
                    let (x, y) = (&*x, &*y);
                    lanes!(exec, l, {
                        out[l] = f(x[l], y[l]);
                    });
                    return;
                }
            }
            let (x, y) = (w.regs[ra], w.regs[rb]);
            let out = &mut w.regs[d];
            lanes!(exec, l, {
                out[l] = f(x[l], y[l]);
            });
        }
        (Opnd::Reg(ra), Opnd::Imm(vb)) => {
            let ra = ra as usize;
            if ra != d
                && let Ok([x, out]) = w.regs.get_disjoint_mut([ra, d])
            {
                let x = &*x;
                lanes!(exec, l, {
                    out[l] = f(x[l], vb);
                });
                return;
            }
            let x = w.regs[ra];
            let out = &mut w.regs[d];
            lanes!(exec, l, {
                out[l] = f(x[l], vb);
            });
        }
        _ => {
            lanes!(exec, l, {
                let v = f(ctx.get(w, a, l), ctx.get(w, b, l));
                w.regs[d][l] = v;
            });
        }
    }
}

/// `map2` with three operands.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn map3(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    a: Opnd,
    b: Opnd,
    c: Opnd,
    f: impl Fn(u64, u64, u64) -> u64,
) {
    match (a, b, c) {
        (Opnd::Reg(ra), Opnd::Reg(rb), Opnd::Reg(rc)) => {
            let (ra, rb, rc) = (ra as usize, rb as usize, rc as usize);
            if d != ra
                && d != rb
                && d != rc
                && ra != rb
                && rb != rc
                && ra != rc
                && let Ok([x, y, z, out]) = w.regs.get_disjoint_mut([ra, rb, rc, d])
            {
                let (x, y, z) = (&*x, &*y, &*z);
                lanes!(exec, l, {
                    out[l] = f(x[l], y[l], z[l]);
                });
                return;
            }
            let (ra, rb, rc) = (ra as u32, rb as u32, rc as u32);
            let (x, y, z) = (
                w.regs[ra as usize],
                w.regs[rb as usize],
                w.regs[rc as usize],
            );
            let out = &mut w.regs[d];
            lanes!(exec, l, {
                out[l] = f(x[l], y[l], z[l]);
            });
        }
        _ => {
            lanes!(exec, l, {
                let v = f(ctx.get(w, a, l), ctx.get(w, b, l), ctx.get(w, c, l));
                w.regs[d][l] = v;
            });
        }
    }
}

/// Integer width class of a type for the fast paths: 32 or 64 bits, signed or not.
#[inline(always)]
pub(crate) fn int_class(t: Ty) -> Option<(u32, bool)> {
    match t {
        Ty::B32 | Ty::U32 => Some((32, false)),
        Ty::S32 => Some((32, true)),
        Ty::B64 | Ty::U64 => Some((64, false)),
        Ty::S64 => Some((64, true)),
        _ => None,
    }
}

/// Fast paths for the most common `Bin` operations; false if the generic path must run.
/// Each gives exactly `alu::bin`'s result.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bin_fast(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    op: BinOp,
    ty: Ty,
    d: usize,
    a: Opnd,
    b: Opnd,
    fm: FMod,
) -> bool {
    if ty == Ty::F32 {
        if fm.ftz || fm.sat || fm.directed() {
            return false;
        }
        let f = |x: u64| f32::from_bits(x as u32);
        match op {
            BinOp::Add => map2(ctx, w, exec, d, a, b, |x, y| nan_first(x, f(x) + f(y))),
            BinOp::Sub => map2(ctx, w, exec, d, a, b, |x, y| nan_first(x, f(x) - f(y))),
            BinOp::MulLo => map2(ctx, w, exec, d, a, b, |x, y| nan_first(x, f(x) * f(y))),
            _ => return false,
        }
        return true;
    }
    let Some((bits, signed)) = int_class(ty) else {
        return false;
    };
    if fm.sat && signed {
        return false;
    }
    match (op, bits) {
        (BinOp::Add, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32).wrapping_add(y as u32) as u64
        }),
        (BinOp::Add, _) => map2(ctx, w, exec, d, a, b, |x, y| x.wrapping_add(y)),
        (BinOp::Sub, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32).wrapping_sub(y as u32) as u64
        }),
        (BinOp::Sub, _) => map2(ctx, w, exec, d, a, b, |x, y| x.wrapping_sub(y)),
        (BinOp::MulLo, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32).wrapping_mul(y as u32) as u64
        }),
        (BinOp::MulLo, _) => map2(ctx, w, exec, d, a, b, |x, y| x.wrapping_mul(y)),
        (BinOp::MulWide, 32) if signed => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32 as i32 as i64).wrapping_mul(y as u32 as i32 as i64) as u64
        }),
        (BinOp::MulWide, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            (x as u32 as u64).wrapping_mul(y as u32 as u64)
        }),
        (BinOp::Shl, 32) => map2(ctx, w, exec, d, a, b, |x, y| {
            let s = y as u32;
            if s >= 32 { 0 } else { ((x as u32) << s) as u64 }
        }),
        (BinOp::Shl, _) => map2(ctx, w, exec, d, a, b, |x, y| {
            let s = y as u32;
            if s >= 64 { 0 } else { x << s }
        }),
        _ => return false,
    }
    true
}

/// The bits of `r`, the result of an f32 operation whose first operand is `x`, with a NaN `x`
/// (quieted) taking precedence: which of two NaN operands comes out of the host's instruction
/// depends on the order the compiler gave them, which the compiled tier must not depend on.
#[inline(always)]
pub(crate) fn nan_first(x: u64, r: f32) -> u64 {
    let x = x as u32;
    if f32::from_bits(x).is_nan() {
        (x | 0x0040_0000) as u64
    } else {
        r.to_bits() as u64
    }
}

/// Like `map2`, for a comparison: writes the result to `d` and its negation to `d2`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn map_pred(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    d2: Option<usize>,
    a: Opnd,
    b: Opnd,
    f: impl Fn(u64, u64) -> bool,
) {
    match d2 {
        None => map2(ctx, w, exec, d, a, b, |x, y| f(x, y) as u64),
        Some(d2) => {
            lanes!(exec, l, {
                let r = f(ctx.get(w, a, l), ctx.get(w, b, l));
                w.regs[d][l] = r as u64;
                w.regs[d2][l] = (!r) as u64;
            });
        }
    }
}

/// Integer `setp` without a combining predicate, with operands mapped by `key` to values whose
/// order is the type's order; false for comparisons left to the generic path.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn setp_int<K: Ord>(
    ctx: &Ctx,
    w: &mut Warp,
    exec: u32,
    d: usize,
    d2: Option<usize>,
    a: Opnd,
    b: Opnd,
    cmp: Cmp,
    key: impl Fn(u64) -> K,
) -> bool {
    match cmp {
        Cmp::Eq | Cmp::Equ => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) == key(y)),
        Cmp::Ne | Cmp::Neu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) != key(y)),
        Cmp::Lt | Cmp::Ltu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) < key(y)),
        Cmp::Le | Cmp::Leu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) <= key(y)),
        Cmp::Gt | Cmp::Gtu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) > key(y)),
        Cmp::Ge | Cmp::Geu => map_pred(ctx, w, exec, d, d2, a, b, |x, y| key(x) >= key(y)),
        Cmp::Num | Cmp::Nan => return false,
    }
    true
}

/// Runs one arithmetic, comparison, bit-field or conversion instruction.
#[inline(always)]
pub(crate) fn run(ctx: &mut Ctx, w: &mut Warp, ins: &Instr, exec: u32) -> Option<u32> {
    match &ins.op {
        Op::Mov { ty, d, a } => {
            let bits = ty.bits();
            let (d, a) = (*d as usize, *a);
            if *ty == Ty::Pred {
                lanes!(exec, l, {
                    let v = ctx.get(w, a, l) & 1;
                    w.regs[d][l] = v;
                });
            } else {
                lanes!(exec, l, {
                    let v = alu::mask(ctx.get(w, a, l), bits);
                    w.regs[d][l] = v;
                });
            }
        }
        Op::Unpack { part_bits, ds, a } => {
            lanes!(exec, l, {
                let v = ctx.get_ref(w, a, l);
                for (i, d) in ds.iter().enumerate() {
                    if let Some(d) = d {
                        w.regs[*d as usize][l] = alu::mask(v >> (i as u32 * part_bits), *part_bits);
                    }
                }
            });
        }
        Op::Pack {
            part_bits,
            d,
            parts,
        } => {
            lanes!(exec, l, {
                let mut v = 0u64;
                for (i, p) in parts.iter().enumerate() {
                    v |= alu::mask(ctx.get_ref(w, p, l), *part_bits) << (i as u32 * part_bits);
                }
                w.regs[*d as usize][l] = v;
            });
        }
        Op::Bin {
            op,
            ty,
            d,
            a,
            b,
            fm,
        } => {
            let (op, ty, d, a, b, fm) = (*op, *ty, *d as usize, *a, *b, *fm);
            if bin_fast(ctx, w, exec, op, ty, d, a, b, fm) {
                w.advance();
                return None;
            }
            lanes!(exec, l, {
                let v = alu::bin(op, ty, ctx.get(w, a, l), ctx.get(w, b, l), fm);
                w.regs[d][l] = v;
            });
        }
        Op::Half2 {
            op,
            ty,
            fm,
            d,
            a,
            b,
            c,
        } => {
            let (op, ty, fm) = (*op, *ty, *fm);
            map3(ctx, w, exec, *d as usize, *a, *b, *c, |x, y, z| {
                alu::half2(op, ty, fm, x, y, z)
            });
        }
        Op::Int3 { op, d, a, b, c } => {
            let op = *op;
            map3(ctx, w, exec, *d as usize, *a, *b, *c, |x, y, z| {
                alu::int3(op, x, y, z)
            });
        }
        Op::Un { op, ty, d, a, fm } => {
            let (op, ty, d, a, fm) = (*op, *ty, *d as usize, *a, *fm);
            lanes!(exec, l, {
                let v = alu::un(op, ty, ctx.get(w, a, l), fm);
                w.regs[d][l] = v;
            });
        }
        Op::Mad {
            ty,
            hi,
            wide,
            d,
            a,
            b,
            c,
            fm,
            negate,
        } => {
            let d = *d as usize;
            let (a, b, c) = (*a, *b, *c);
            let done = match (int_class(*ty), *hi, *wide) {
                (Some((32, _)), false, false) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        (x as u32).wrapping_mul(y as u32).wrapping_add(z as u32) as u64
                    });
                    true
                }
                (Some((64, _)), false, false) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        x.wrapping_mul(y).wrapping_add(z)
                    });
                    true
                }
                (Some((32, true)), false, true) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        ((x as u32 as i32 as i64) * (y as u32 as i32 as i64)).wrapping_add(z as i64)
                            as u64
                    });
                    true
                }
                (Some((32, false)), false, true) => {
                    map3(ctx, w, exec, d, a, b, c, |x, y, z| {
                        (x as u32 as u64 * y as u32 as u64).wrapping_add(z)
                    });
                    true
                }
                _ => false,
            };
            if done {
                w.advance();
                return None;
            }
            // A float's sign is its top bit.
            let sign = 1u64 << (ty.bits() - 1);
            let flip = |on: bool| if on { sign } else { 0 };
            let (flip_a, flip_c) = (flip(negate.product), flip(negate.addend));
            lanes!(exec, l, {
                let v = alu::mad(
                    *ty,
                    *hi,
                    *wide,
                    ctx.get(w, a, l) ^ flip_a,
                    ctx.get(w, b, l),
                    ctx.get(w, c, l) ^ flip_c,
                    *fm,
                );
                w.regs[d][l] = v;
            });
        }
        Op::Setp {
            cmp,
            ty,
            d,
            d2,
            a,
            b,
            comb,
            ftz,
        } => {
            let d = *d as usize;
            if comb.is_none() {
                let d2 = d2.map(|x| x as usize);
                let (a, b, cmp) = (*a, *b, *cmp);
                let done = match *ty {
                    Ty::B32 | Ty::U32 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x as u32),
                    Ty::S32 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x as u32 as i32),
                    Ty::B64 | Ty::U64 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x),
                    Ty::S64 => setp_int(ctx, w, exec, d, d2, a, b, cmp, |x| x as i64),
                    _ => false,
                };
                if done {
                    w.advance();
                    return None;
                }
            }
            lanes!(exec, l, {
                let r = alu::compare(*cmp, *ty, ctx.get_ref(w, a, l), ctx.get_ref(w, b, l), *ftz);
                let (r1, r2) = match comb {
                    Some((bo, c, neg)) => {
                        let cv = (ctx.get_ref(w, c, l) & 1 != 0) != *neg;
                        (alu::bool_op(*bo, r, cv), alu::bool_op(*bo, !r, cv))
                    }
                    None => (r, !r),
                };
                w.regs[d][l] = r1 as u64;
                if let Some(d2) = d2 {
                    w.regs[*d2 as usize][l] = r2 as u64;
                }
            });
        }
        Op::Set {
            cmp,
            dty,
            ty,
            d,
            a,
            b,
        } => {
            let d = *d as usize;
            lanes!(exec, l, {
                let r = alu::compare(*cmp, *ty, ctx.get_ref(w, a, l), ctx.get_ref(w, b, l), false);
                let v = if dty.float() {
                    if r { 1.0f32.to_bits() as u64 } else { 0 }
                } else if r {
                    alu::mask(u64::MAX, dty.bits())
                } else {
                    0
                };
                w.regs[d][l] = v;
            });
        }
        Op::Selp {
            ty,
            d,
            a,
            b,
            c,
            neg,
        } => {
            let d = *d as usize;
            let bits = ty.bits();
            lanes!(exec, l, {
                let p = (ctx.get_ref(w, c, l) & 1 != 0) != *neg;
                let v = if p {
                    ctx.get_ref(w, a, l)
                } else {
                    ctx.get_ref(w, b, l)
                };
                w.regs[d][l] = alu::mask(v, bits);
            });
        }
        Op::Slct {
            ty,
            cty,
            d,
            a,
            b,
            c,
        } => {
            let d = *d as usize;
            lanes!(exec, l, {
                let cv = ctx.get_ref(w, c, l);
                let ge = if *cty == Ty::F32 {
                    f32::from_bits(cv as u32) >= 0.0
                } else {
                    alu::sext(cv, 32) >= 0
                };
                let v = if ge {
                    ctx.get_ref(w, a, l)
                } else {
                    ctx.get_ref(w, b, l)
                };
                w.regs[d][l] = alu::mask(v, ty.bits());
            });
        }
        Op::Cvt {
            dty,
            sty,
            rnd,
            fm,
            d,
            a,
            dbits,
        } => {
            let d = *d as usize;
            lanes!(exec, l, {
                let v = alu::cvt(*dty, *sty, *rnd, *fm, ctx.get_ref(w, a, l), *dbits);
                w.regs[d][l] = v;
            });
        }
        Op::Cvta {
            to,
            space,
            d,
            a,
            wide,
        } => {
            let d = *d as usize;
            let win = match space {
                Space::Shared => SHARED_WIN,
                Space::Local => LOCAL_WIN,
                _ => 0,
            };
            lanes!(exec, l, {
                let x = ctx.get_ref(w, a, l);
                let v = if *to {
                    x.wrapping_sub(win)
                } else {
                    x.wrapping_add(win)
                };
                w.regs[d][l] = if *wide { v } else { alu::mask(v, 32) };
            });
        }
        Op::Bfe { ty, d, a, b, c } => {
            let d = *d as usize;
            lanes!(exec, l, {
                w.regs[d][l] = alu::bfe(
                    *ty,
                    ctx.get_ref(w, a, l),
                    ctx.get_ref(w, b, l),
                    ctx.get_ref(w, c, l),
                );
            });
        }
        Op::Bfi { ty, d, f, b, c, e } => {
            let d = *d as usize;
            lanes!(exec, l, {
                w.regs[d][l] = alu::bfi(
                    *ty,
                    ctx.get_ref(w, f, l),
                    ctx.get_ref(w, b, l),
                    ctx.get_ref(w, c, l),
                    ctx.get_ref(w, e, l),
                );
            });
        }
        Op::Prmt { d, a, b, c } => {
            let d = *d as usize;
            lanes!(exec, l, {
                w.regs[d][l] = alu::prmt(
                    ctx.get_ref(w, a, l),
                    ctx.get_ref(w, b, l),
                    ctx.get_ref(w, c, l),
                );
            });
        }
        Op::TestP { t, ty, d, a } => {
            let d = *d as usize;
            lanes!(exec, l, {
                w.regs[d][l] = alu::testp(*t, *ty, ctx.get_ref(w, a, l)) as u64;
            });
        }
        _ => unreachable!("instr::exec sends only arith instructions here"),
    }
    w.advance();
    None
}
