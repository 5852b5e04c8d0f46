//! One instruction of one warp: the guard predicate, then a dispatch to the file that runs its
//! family. Each family's `run` returns what `exec` returns.

mod arith;
mod asynchronous;
mod atomic;
mod collective;
mod control;
mod memory;
mod special;

use crate::exec::ctx::Ctx;
use crate::exec::warp::{BlockState, Warp};
use crate::ir::*;
pub(crate) use atomic::*;
pub(crate) use collective::*;
pub(crate) use control::*;

/// Executes the instruction at `w.pc` for `w.active`. Returns a block whose barriers may now
/// be complete (after an arrival or an exit).
pub(crate) fn exec(ctx: &mut Ctx, block: &mut BlockState, w: &mut Warp) -> Option<u32> {
    let pc = w.pc;
    let m = ctx.m;
    if ctx.trace.is_some() {
        let warp = ctx.trace_warp(w);
        if let Some(t) = ctx.trace.as_deref_mut() {
            t.step(warp, w.active, pc);
        }
    }
    let Some(ins) = m.code.get(pc as usize) else {
        // Ran off the end of the code: treat as exit.
        return exit_lanes(ctx, block, w, w.active, pc);
    };
    let active = w.active;
    ctx.thread_instrs += active.count_ones() as u64;
    ctx.clock += 1;
    let mut exec = active;
    if let Some((p, neg)) = ins.guard {
        // Every lane's bit at once, then the active ones: no branch per lane.
        let pred = &w.regs[p as usize];
        let flip = u32::from(neg);
        let mut e = 0u32;
        for (l, v) in pred.iter().enumerate() {
            e |= ((*v as u32 & 1) ^ flip) << l;
        }
        exec = e & active;
    }
    match &ins.op {
        Op::Mov { .. }
        | Op::Unpack { .. }
        | Op::Pack { .. }
        | Op::Bin { .. }
        | Op::Half2 { .. }
        | Op::Int3 { .. }
        | Op::Un { .. }
        | Op::Mad { .. }
        | Op::Setp { .. }
        | Op::Set { .. }
        | Op::Selp { .. }
        | Op::Slct { .. }
        | Op::Cvt { .. }
        | Op::Cvta { .. }
        | Op::Bfe { .. }
        | Op::Bfi { .. }
        | Op::Prmt { .. }
        | Op::TestP { .. } => arith::run(ctx, w, ins, exec),
        Op::Ld { .. } | Op::St { .. } => memory::run(ctx, w, ins, exec),
        Op::Atom { .. } | Op::Fence { .. } => atomic::run(ctx, w, ins, exec),
        Op::Activemask { .. } => special::run(w, ins, exec),
        Op::Nop
        | Op::Bra { .. }
        | Op::Call { .. }
        | Op::CallIndirect { .. }
        | Op::Ret
        | Op::Unsupported(_)
        | Op::Trap
        | Op::Exit => control::run(ctx, block, w, ins, exec),
        Op::Bar { .. }
        | Op::BarWarp { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Match { .. }
        | Op::Redux { .. } => collective::run(ctx, block, w, ins, exec),
        Op::Builtin { .. } => super::device_calls::run(ctx, w, ins, exec),
        Op::CpAsync { .. }
        | Op::CpAsyncBulk { .. }
        | Op::CpAsyncCommit
        | Op::CpAsyncWait { .. }
        | Op::CpAsyncArrive { .. }
        | Op::Mbarrier { .. }
        | Op::MbarPendingCount { .. } => asynchronous::run(ctx, w, ins, exec),
    }
}
