//! What a warp's lanes compute in the private start of their next step, for the footprint of
//! the visible instruction that ends it (`plan.rs`). Under the hardware schedule a step runs a
//! lane's register work, branches and local and parameter accesses together with its next
//! visible instruction (`block::step`), so where that instruction reaches depends on registers
//! the step is yet to write. The walk here follows each lane's own path through those
//! instructions, as the interpreter would run them, on a few registers of its own over the
//! warp's, and hands over the lanes that reach a visible instruction with what they hold
//! there. Whatever it cannot tell (a local load, `activemask`, a call's parameters) it marks
//! unknown, and a branch, guard or address that depends on one gives up: the round then runs
//! on one core.

use super::ctx::{Ctx, rd_le};
use super::warp::Warp;
use crate::alu;
use crate::exec::allocs::{LOCAL_WIN, SHARED_WIN};
use crate::ir::*;
use crate::stretch::MAX_STEP_INSTRUCTIONS;

/// Registers a walk wrote, over the warp's: per register, the lanes' values, the lanes that
/// wrote one, and those of them whose value the walk could not tell.
#[derive(Clone, Default)]
pub(super) struct Overlay {
    rows: Vec<(u32, [u64; 32], u32, u32)>,
}

impl Overlay {
    /// What lane `l` reads for `o`: `None` when the walk could not tell.
    #[inline]
    pub(super) fn get(&self, ctx: &Ctx, w: &Warp, o: &Opnd, l: usize) -> Option<u64> {
        match o {
            Opnd::Reg(r) => match self.rows.iter().find(|row| row.0 == *r) {
                Some((_, _, _, unknown)) if unknown & (1 << l) != 0 => None,
                Some((_, vals, written, _)) if written & (1 << l) != 0 => Some(vals[l]),
                _ => w.regs.get(*r as usize).map(|row| row[l]),
            },
            Opnd::Imm(v) => Some(*v),
            Opnd::Sreg(s) if s.timed() => None,
            Opnd::Sreg(s) => Some(ctx.sreg(w, *s, l)),
        }
    }

    fn set(&mut self, r: u32, l: usize, v: Option<u64>) {
        let at = match self.rows.iter().position(|row| row.0 == r) {
            Some(at) => at,
            None => {
                self.rows.push((r, [0; 32], 0, 0));
                self.rows.len() - 1
            }
        };
        let row = &mut self.rows[at];
        row.2 |= 1 << l;
        match v {
            Some(v) => {
                row.1[l] = v;
                row.3 &= !(1 << l);
            }
            None => row.3 |= 1 << l,
        }
    }

    /// The lanes of `lanes` whose guard lets them run, or `None` when one's is unknown.
    pub(super) fn guarded(
        &self,
        ctx: &Ctx,
        w: &Warp,
        guard: Option<(u32, bool)>,
        lanes: u32,
    ) -> Option<u32> {
        let Some((p, neg)) = guard else {
            return Some(lanes);
        };
        let mut run = 0u32;
        let mut known = true;
        lanes!(lanes, l, {
            match self.get(ctx, w, &Opnd::Reg(p), l) {
                Some(v) if (v & 1 != 0) != neg => run |= 1 << l,
                Some(_) => {}
                None => known = false,
            }
        });
        known.then_some(run)
    }

    /// The address lane `l` gives `a`, or `None`.
    pub(super) fn addr(&self, ctx: &Ctx, w: &Warp, a: &Addr, l: usize) -> Option<u64> {
        match a {
            Addr::Reg { base, off } => self
                .get(ctx, w, base, l)
                .map(|b| b.wrapping_add(*off as u64)),
            Addr::KParam(o) | Addr::TParam(o) => Some(*o as u64),
        }
    }
}

/// Walks the lanes `lanes` of `w` from `pc` through their private instructions, each lane on
/// its own path, and calls `visible(pc, lanes, overlay)` for each group of them that reaches an
/// instruction ending a step within the step's [`MAX_STEP_INSTRUCTIONS`] (the others touch
/// nothing beyond their block in it). False when a branch or guard on the way depends on a
/// value the walk cannot tell, or `visible` says false.
pub(super) fn walk(
    ctx: &Ctx,
    w: &Warp,
    pc: u32,
    lanes: u32,
    visible: &mut impl FnMut(u32, u32, &Overlay) -> bool,
) -> bool {
    walk_from(
        ctx,
        w,
        pc,
        lanes,
        Overlay::default(),
        MAX_STEP_INSTRUCTIONS,
        visible,
    )
}

fn walk_from(
    ctx: &Ctx,
    w: &Warp,
    mut pc: u32,
    mut lanes: u32,
    mut overlay: Overlay,
    mut left: u32,
    visible: &mut impl FnMut(u32, u32, &Overlay) -> bool,
) -> bool {
    while left > 0 && lanes != 0 {
        let Some(ins) = ctx.m.code.get(pc as usize) else {
            return true;
        };
        if ctx.m.ends_step(pc) {
            return visible(pc, lanes, &overlay);
        }
        let Some(run) = overlay.guarded(ctx, w, ins.guard, lanes) else {
            return false;
        };
        left -= 1;
        if let Op::Bra { target } = ins.op {
            let stay = lanes & !run;
            if run != 0
                && stay != 0
                && !walk_from(ctx, w, target, run, overlay.clone(), left, visible)
            {
                return false;
            }
            if stay == 0 {
                pc = target;
            } else {
                lanes = stay;
                pc += 1;
            }
            continue;
        }
        lanes!(run, l, {
            eval(ctx, w, &ins.op, l, &mut overlay);
        });
        pc += 1;
    }
    true
}

/// Runs the private instruction `op` for lane `l` into `overlay`, as the interpreter's
/// `instr::arith` and `instr::memory` would (their general paths, which their fast ones equal);
/// what it cannot tell it marks unknown.
fn eval(ctx: &Ctx, w: &Warp, op: &Op, l: usize, o: &mut Overlay) {
    let get = |o: &Overlay, x: &Opnd| o.get(ctx, w, x, l);
    match op {
        Op::Mov { ty, d, a } => {
            let v = get(o, a).map(|v| {
                if *ty == Ty::Pred {
                    v & 1
                } else {
                    alu::mask(v, ty.bits())
                }
            });
            o.set(*d, l, v);
        }
        Op::Unpack { part_bits, ds, a } => {
            let v = get(o, a);
            for (i, d) in ds.iter().enumerate() {
                if let Some(d) = d {
                    let part = v.map(|v| alu::mask(v >> (i as u32 * part_bits), *part_bits));
                    o.set(*d, l, part);
                }
            }
        }
        Op::Pack {
            part_bits,
            d,
            parts,
        } => {
            let mut v = Some(0u64);
            for (i, p) in parts.iter().enumerate() {
                v = v
                    .zip(get(o, p))
                    .map(|(v, x)| v | alu::mask(x, *part_bits) << (i as u32 * part_bits));
            }
            o.set(*d, l, v);
        }
        Op::Bin {
            op,
            ty,
            d,
            a,
            b,
            fm,
        } => {
            let v = get(o, a)
                .zip(get(o, b))
                .map(|(x, y)| alu::bin(*op, *ty, x, y, *fm));
            o.set(*d, l, v);
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
            let v =
                three(o, ctx, w, l, a, b, c).map(|(x, y, z)| alu::half2(*op, *ty, *fm, x, y, z));
            o.set(*d, l, v);
        }
        Op::Int3 { op, d, a, b, c } => {
            let v = three(o, ctx, w, l, a, b, c).map(|(x, y, z)| alu::int3(*op, x, y, z));
            o.set(*d, l, v);
        }
        Op::Un { op, ty, d, a, fm } => {
            let v = get(o, a).map(|x| alu::un(*op, *ty, x, *fm));
            o.set(*d, l, v);
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
            // A float's sign is its top bit.
            let sign = 1u64 << (ty.bits() - 1);
            let flip = |on: bool| if on { sign } else { 0 };
            let v = three(o, ctx, w, l, a, b, c).map(|(x, y, z)| {
                alu::mad(
                    *ty,
                    *hi,
                    *wide,
                    x ^ flip(negate.product),
                    y,
                    z ^ flip(negate.addend),
                    *fm,
                )
            });
            o.set(*d, l, v);
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
            let r = get(o, a)
                .zip(get(o, b))
                .map(|(x, y)| alu::compare(*cmp, *ty, x, y, *ftz));
            let (r1, r2) = match (r, comb) {
                (Some(r), Some((bo, c, neg))) => match get(o, c) {
                    Some(c) => {
                        let cv = (c & 1 != 0) != *neg;
                        (
                            Some(alu::bool_op(*bo, r, cv)),
                            Some(alu::bool_op(*bo, !r, cv)),
                        )
                    }
                    None => (None, None),
                },
                (Some(r), None) => (Some(r), Some(!r)),
                (None, _) => (None, None),
            };
            o.set(*d, l, r1.map(u64::from));
            if let Some(d2) = d2 {
                o.set(*d2, l, r2.map(u64::from));
            }
        }
        Op::Set {
            cmp,
            dty,
            ty,
            d,
            a,
            b,
        } => {
            let v = get(o, a).zip(get(o, b)).map(|(x, y)| {
                let r = alu::compare(*cmp, *ty, x, y, false);
                if dty.float() {
                    if r { 1.0f32.to_bits() as u64 } else { 0 }
                } else if r {
                    alu::mask(u64::MAX, dty.bits())
                } else {
                    0
                }
            });
            o.set(*d, l, v);
        }
        Op::Selp {
            ty,
            d,
            a,
            b,
            c,
            neg,
        } => {
            let v = get(o, c).and_then(|c| {
                let picked = if (c & 1 != 0) != *neg { a } else { b };
                get(o, picked).map(|v| alu::mask(v, ty.bits()))
            });
            o.set(*d, l, v);
        }
        Op::Slct {
            ty,
            cty,
            d,
            a,
            b,
            c,
        } => {
            let v = get(o, c).and_then(|cv| {
                let ge = if *cty == Ty::F32 {
                    f32::from_bits(cv as u32) >= 0.0
                } else {
                    alu::sext(cv, 32) >= 0
                };
                get(o, if ge { a } else { b }).map(|v| alu::mask(v, ty.bits()))
            });
            o.set(*d, l, v);
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
            let v = get(o, a).map(|x| alu::cvt(*dty, *sty, *rnd, *fm, x, *dbits));
            o.set(*d, l, v);
        }
        Op::Cvta {
            to,
            space,
            d,
            a,
            wide,
        } => {
            let win = match space {
                Space::Shared => SHARED_WIN,
                Space::Local => LOCAL_WIN,
                _ => 0,
            };
            let v = get(o, a).map(|x| {
                let v = if *to {
                    x.wrapping_sub(win)
                } else {
                    x.wrapping_add(win)
                };
                if *wide { v } else { alu::mask(v, 32) }
            });
            o.set(*d, l, v);
        }
        Op::Bfe { ty, d, a, b, c } => {
            let v = three(o, ctx, w, l, a, b, c).map(|(x, y, z)| alu::bfe(*ty, x, y, z));
            o.set(*d, l, v);
        }
        Op::Bfi { ty, d, f, b, c, e } => {
            let v = three(o, ctx, w, l, f, b, c)
                .zip(get(o, e))
                .map(|((x, y, z), e)| alu::bfi(*ty, x, y, z, e));
            o.set(*d, l, v);
        }
        Op::Prmt { d, a, b, c } => {
            let v = three(o, ctx, w, l, a, b, c).map(|(x, y, z)| alu::prmt(x, y, z));
            o.set(*d, l, v);
        }
        Op::TestP { t, ty, d, a } => {
            let v = get(o, a).map(|x| u64::from(alu::testp(*t, *ty, x)));
            o.set(*d, l, v);
        }
        // A kernel parameter: the launch's buffer, which no one writes.
        Op::Ld {
            space: Space::Param,
            ty,
            ds,
            addr: Addr::KParam(at),
            dbits,
            ..
        } => {
            let esize = ty.bytes() as usize;
            for (i, d) in ds.iter().enumerate() {
                if let Some(d) = d {
                    let raw = rd_le(&ctx.kparams, *at as usize + i * esize, esize);
                    let v = if ty.signed() && *dbits > ty.bits() {
                        alu::mask(alu::sext(raw, ty.bits()) as u64, *dbits)
                    } else {
                        raw
                    };
                    o.set(*d, l, Some(v));
                }
            }
        }
        Op::Ld { ds, .. } => {
            for d in ds.iter().flatten() {
                o.set(*d, l, None);
            }
        }
        Op::Activemask { d } => o.set(*d, l, None),
        // No register written (a local or parameter store, `nop`); anything else ends a step
        // and never comes here.
        _ => {}
    }
}

#[allow(clippy::too_many_arguments)]
fn three(
    o: &Overlay,
    ctx: &Ctx,
    w: &Warp,
    l: usize,
    a: &Opnd,
    b: &Opnd,
    c: &Opnd,
) -> Option<(u64, u64, u64)> {
    Some((
        o.get(ctx, w, a, l)?,
        o.get(ctx, w, b, l)?,
        o.get(ctx, w, c, l)?,
    ))
}
