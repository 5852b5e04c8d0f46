//! Atomics (`atom`, `red`) and fences: the read-modify-write itself and the synchronization it
//! gives the race checker.

use crate::exec::ctx::{Ctx, Tgt};
use crate::exec::warp::Warp;
use crate::ir::*;
use crate::memory_model::MemoryModel;
use crate::report::AccessOp;
use crate::trace::TraceOp;
use crate::{alu, race};

/// Runs one atomic or fence.
#[inline(always)]
pub(crate) fn run(ctx: &mut Ctx, w: &mut Warp, ins: &Instr, exec: u32) -> Option<u32> {
    let pc = w.pc;
    match &ins.op {
        Op::Atom {
            space,
            op,
            ty,
            d,
            addr,
            b,
            c,
            release,
            acquire,
            scope,
        } => {
            let size = ty.bytes();
            // An atomic makes its word a flag only with evidence of synchronization: its own
            // `.acquire`/`.release`, or a loop its value decides (a lock's spin, a polled
            // counter). A bare `atomicExch(&x, 1)` beside a volatile `x = 2` is data.
            let polls = ctx.m.polls.get(pc as usize).copied().unwrap_or(false);
            let sem = race::Sem {
                scope: *scope,
                atomic: true,
                sync: *acquire || *release || polls,
                silent: false,
            };
            // The PTX model acquires only with `.acquire` or a fence after. Racecheck is
            // lenient with atomics (see README), except the one that takes a lock: a spinning
            // `atomicCAS`/`atomicExch` acquires only with a fence after it whose scope reaches
            // the last holder, or two critical sections race.
            let takes_lock = polls && matches!(op, AtomOp::Cas | AtomOp::Exch);
            let acquires =
                if *acquire || (ctx.opts.memory_model == MemoryModel::Racecheck && !takes_lock) {
                    race::Acquire::Now
                } else {
                    race::Acquire::AtNextFence
                };
            let tracing = ctx.trace.is_some();
            lanes!(exec, l, {
                let a = ctx.addr(w, addr, l);
                let tgt = ctx.resolve(w, l, *space, a, size, size, pc, AccessOp::Atomic);
                ctx.init_read(w, l, tgt, size, pc, AccessOp::Atomic);
                let old = ctx.read_tgt(tgt, size as usize, w.slot);
                let bv = ctx.get_ref(w, b, l);
                let cv = ctx.get_ref(w, c, l);
                let (new, wrote) = atom_op(*op, *ty, old, bv, cv);
                let kind = if wrote {
                    race::Kind::Rmw
                } else {
                    race::Kind::StrongRead
                };
                ctx.race_check(w, l, tgt, size, kind, sem, pc);
                if wrote {
                    if new != alu::mask(old, size * 8) {
                        ctx.progress += 1;
                    }
                    ctx.write_tgt(tgt, size as usize, w.slot, new);
                    ctx.init_write(w, tgt, size);
                }
                sync_after(ctx, w, l, tgt, kind, acquires, *release, *scope, pc);
                if tracing {
                    let after = if wrote { new } else { old };
                    let name = Some(atom_name(*op));
                    ctx.trace_access(
                        w,
                        l,
                        tgt,
                        *ty,
                        (old, Some(after)),
                        TraceOp::Atomic,
                        true,
                        name,
                    );
                }
                if let Some(d) = d {
                    w.regs[*d as usize][l] = old;
                }
            });
        }
        Op::Fence { scope } => {
            if let Some(r) = ctx.race.as_mut() {
                lanes!(exec, l, {
                    r.fence(w.slot * ctx.tpb + w.first + l as u32, *scope, pc);
                });
            }
        }
        _ => unreachable!("instr::exec sends only atomic instructions here"),
    }
    w.advance();
    None
}

pub(crate) fn atom_name(op: AtomOp) -> &'static str {
    match op {
        AtomOp::Add | AtomOp::AddPacked(_) => "add",
        AtomOp::Min => "min",
        AtomOp::Max => "max",
        AtomOp::Inc => "inc",
        AtomOp::Dec => "dec",
        AtomOp::And => "and",
        AtomOp::Or => "or",
        AtomOp::Xor => "xor",
        AtomOp::Exch => "exch",
        AtomOp::Cas => "cas",
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn sync_after(
    ctx: &mut Ctx,
    w: &Warp,
    l: usize,
    tgt: Tgt,
    kind: race::Kind,
    acquire: race::Acquire,
    release: bool,
    scope: Scope,
    pc: u32,
) {
    if matches!(tgt, Tgt::G(..)) {
        ctx.touched_global_sync = true;
    }
    let Some((region, word)) = ctx.sync_region(tgt, w) else {
        return;
    };
    let who = ctx.who(w, l);
    if let Some(r) = ctx.race.as_mut() {
        r.sync_op(region, word, &who, kind, acquire, release, scope, pc);
    }
}

pub(crate) fn atom_op(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> (u64, bool) {
    let bits = ty.bits();
    let v = match op {
        AtomOp::Add => match ty {
            Ty::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            Ty::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            // `.noftz`: subnormal halves stay, rounding to nearest as `add.rn.f16` does.
            Ty::F16 | Ty::BF16 => alu::bin(BinOp::Add, ty, old, b, FMod::default()),
            _ => alu::mask(old.wrapping_add(b), bits),
        },
        AtomOp::AddPacked(half) => {
            alu::half2(Half2Op::Bin(BinOp::Add), half, FMod::default(), old, b, 0)
        }
        AtomOp::Min | AtomOp::Max => {
            let fm = FMod::default();
            let bop = if op == AtomOp::Min {
                BinOp::Min
            } else {
                BinOp::Max
            };
            alu::bin(bop, ty, old, b, fm)
        }
        AtomOp::Inc => {
            let (o, b) = (alu::mask(old, bits), alu::mask(b, bits));
            if o >= b { 0 } else { o + 1 }
        }
        AtomOp::Dec => {
            let (o, b) = (alu::mask(old, bits), alu::mask(b, bits));
            if o == 0 || o > b { b } else { o - 1 }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if alu::mask(old, bits) == alu::mask(b, bits) {
                c
            } else {
                return (old, false);
            }
        }
    };
    (alu::mask(v, bits), true)
}
