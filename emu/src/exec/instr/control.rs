//! Control flow: branches, calls and returns (with recursive frames), `exit`, `trap`, and what
//! the emulator refuses to run.

use crate::exec::ctx::Ctx;
use crate::exec::limits::MAX_CALL_DEPTH;
use crate::exec::warp::{BlockState, Frame, Warp, backward_branch, set_lane_pcs};
use crate::ir::*;

/// Runs one branch, call, return, exit or trap.
#[inline(always)]
pub(crate) fn run(
    ctx: &mut Ctx,
    block: &mut BlockState,
    w: &mut Warp,
    ins: &Instr,
    exec: u32,
) -> Option<u32> {
    let (pc, active, m) = (w.pc, w.active, ctx.m);
    match &ins.op {
        Op::Nop => {}
        Op::Bra { target } => {
            let target = *target;
            if block.exit_branch.is_none() && exec != 0 && m.straight_to_end(target) {
                note_exit_branch(ctx, block, w, pc, target, exec);
            }
            if m.skips_barrier(pc) {
                lanes!(exec, l, {
                    w.barrier_skip[l] = pc + 1;
                });
            }
            if exec == active {
                if target <= pc {
                    backward_branch(w);
                }
                w.pc = target;
                if w.active != w.runnable() {
                    w.regroup();
                }
            } else if exec == 0 {
                w.advance();
            } else {
                w.flush();
                lanes!(active, l, {
                    w.lane_pc[l] = if exec & (1 << l) != 0 { target } else { pc + 1 };
                });
                w.active = 0;
                w.regroup();
            }
            return None;
        }
        Op::Call {
            func,
            args,
            rets: _,
        } => {
            let callee = m.funcs.get(*func as usize);
            let start = callee.map(|f| f.start).unwrap_or(pc + 1);
            let ts = m.tparam_size as usize;
            if let Some(callee) = callee.filter(|f| f.recursive)
                && !save_frames(ctx, w, exec, callee, pc)
            {
                return None;
            }
            lanes!(exec, l, {
                for &(from, to, size) in args {
                    let (from, to, size) =
                        (l * ts + from as usize, l * ts + to as usize, size as usize);
                    if from + size <= w.tparam.len() && to + size <= w.tparam.len() {
                        w.tparam.copy_within(from..from + size, to);
                    }
                }
                w.stacks[l].push(pc);
            });
            set_lane_pcs(w, exec, start, pc + 1);
            return None;
        }
        Op::CallIndirect { target, args, .. } => {
            return call_indirect(ctx, w, *target, args, exec);
        }
        Op::Ret => {
            let mut exiting = 0u32;
            let ts = m.tparam_size as usize;
            w.flush();
            lanes!(exec, l, {
                match w.stacks[l].pop() {
                    None => exiting |= 1 << l,
                    Some(cpc) => {
                        if let Some(Instr {
                            op: Op::Call { rets, func, .. },
                            ..
                        }) = m.code.get(cpc as usize)
                        {
                            // Results leave the callee's area before a saved frame (which may
                            // cover the caller's result slots, in self-recursion) comes back.
                            let mut results = Vec::new();
                            for &(from, to, size) in rets {
                                let from = l * ts + from as usize;
                                if let Some(bytes) = w.tparam.get(from..from + size as usize) {
                                    results.push((to, bytes.to_vec()));
                                }
                            }
                            if let Some(callee) =
                                m.funcs.get(*func as usize).filter(|f| f.recursive)
                                && let Some(frame) = w.frames[l].pop()
                            {
                                ctx.restore_frame(w, l, callee, frame);
                            }
                            for (to, bytes) in results {
                                let to = l * ts + to as usize;
                                if let Some(slot) = w.tparam.get_mut(to..to + bytes.len()) {
                                    slot.copy_from_slice(&bytes);
                                }
                            }
                        } else if let Some(Instr {
                            op: Op::CallIndirect { rets, .. },
                            ..
                        }) = m.code.get(cpc as usize)
                            && let Some(callee) = m.function_at(pc)
                        {
                            // The callee is the function this `ret` is in.
                            let mut results = Vec::new();
                            for (&to, p) in rets.iter().zip(&callee.rets) {
                                let from = l * ts + p.offset as usize;
                                if let Some(bytes) = w.tparam.get(from..from + p.size as usize) {
                                    results.push((to, bytes.to_vec()));
                                }
                            }
                            if callee.recursive
                                && let Some(frame) = w.frames[l].pop()
                            {
                                ctx.restore_frame(w, l, callee, frame);
                            }
                            for (to, bytes) in results {
                                let to = l * ts + to as usize;
                                if let Some(slot) = w.tparam.get_mut(to..to + bytes.len()) {
                                    slot.copy_from_slice(&bytes);
                                }
                            }
                        }
                        w.lane_pc[l] = cpc + 1;
                    }
                }
            });
            lanes!(active & !exec, l, {
                w.lane_pc[l] = pc + 1;
            });
            w.active = 0;
            if exiting != 0 {
                return exit_lanes(ctx, block, w, exiting, pc);
            }
            w.regroup();
            return None;
        }
        Op::Unsupported(what) => {
            if ctx.refusal.is_none() {
                ctx.refusal = Some(ctx.m.refusal(pc, what));
            }
            ctx.aborted = true;
            w.active = 0;
            return None;
        }
        Op::Trap => {
            if exec != 0 {
                ctx.trapped(w, pc, exec);
                return None;
            }
            w.advance();
            return None;
        }
        Op::Exit => {
            w.flush();
            lanes!(active & !exec, l, {
                w.lane_pc[l] = pc + 1;
            });
            w.active = 0;
            return exit_lanes(ctx, block, w, exec, pc);
        }
        _ => unreachable!("instr::exec sends only control instructions here"),
    }
    w.advance();
    None
}

/// A call through a function's address. The lanes calling the first lane's target go in; lanes
/// of the call with another target stay at the call, to go in once those return (a warp's
/// divergent virtual calls run one target at a time, as on a GPU). A target that is no
/// function's address, or one whose parameters the call does not match, is a finding and ends
/// the launch, as the GPU's illegal-instruction fault would.
fn call_indirect(
    ctx: &mut Ctx,
    w: &mut Warp,
    target: Opnd,
    args: &[u32],
    exec: u32,
) -> Option<u32> {
    let (pc, m) = (w.pc, ctx.m);
    if exec == 0 {
        w.advance();
        return None;
    }
    let first = exec.trailing_zeros() as usize;
    let addr = ctx.get(w, target, first);
    let mut going = 0u32;
    lanes!(exec, l, {
        if ctx.get(w, target, l) == addr {
            going |= 1 << l;
        }
    });
    let callee = func_at(addr)
        .and_then(|f| m.funcs.get(f as usize))
        .filter(|f| !f.is_entry && f.params.len() == args.len());
    let Some(callee) = callee else {
        ctx.bad_call_target(w, going, pc, addr);
        w.active = 0;
        return None;
    };
    let ts = m.tparam_size as usize;
    if callee.recursive && !save_frames(ctx, w, going, callee, pc) {
        return None;
    }
    lanes!(going, l, {
        for (&from, p) in args.iter().zip(&callee.params) {
            let (from, to, size) = (
                l * ts + from as usize,
                l * ts + p.offset as usize,
                p.size as usize,
            );
            if from + size <= w.tparam.len() && to + size <= w.tparam.len() {
                w.tparam.copy_within(from..from + size, to);
            }
        }
        w.stacks[l].push(pc);
    });
    let (active, start) = (w.active, callee.start);
    if going == active {
        set_lane_pcs(w, going, start, pc + 1);
        return None;
    }
    w.flush();
    lanes!(active, l, {
        w.lane_pc[l] = if going & (1 << l) != 0 {
            start
        } else if exec & (1 << l) != 0 {
            pc
        } else {
            pc + 1
        };
    });
    w.active = 0;
    w.regroup();
    None
}

/// Lanes `exec` of `w` take the branch at `pc` straight to their thread's end: when it jumps
/// over a barrier, it is the `return` a barrier divergence is blamed on, if the block's first
/// thread to end is one of them (see `block::report_barrier_divergence`).
#[cold]
fn note_exit_branch(ctx: &Ctx, block: &mut BlockState, w: &Warp, pc: u32, target: u32, exec: u32) {
    if jumps_over_a_barrier(&ctx.m.code, pc, target) {
        let gid = ctx.gid(w, exec.trailing_zeros() as usize);
        block.exit_branch = Some((gid, pc));
    }
}

pub(crate) fn exit_lanes(
    ctx: &mut Ctx,
    block: &mut BlockState,
    w: &mut Warp,
    lanes_mask: u32,
    pc: u32,
) -> Option<u32> {
    let lanes_mask = lanes_mask & w.live;
    // A thread's copies land even when it never waited for them.
    super::asynchronous::land_copies(ctx, w, lanes_mask, u32::MAX);
    w.flush();
    w.live &= !lanes_mask;
    w.active = 0;
    let n = lanes_mask.count_ones();
    if n > 0
        && let Some(t) = ctx.trace.as_deref_mut()
    {
        t.exit(lanes_mask);
    }
    if n > 0 {
        ctx.progress += 1;
        let first = ctx.gid(w, lanes_mask.trailing_zeros() as usize);
        let blk = block;
        blk.live -= n;
        blk.exited += n;
        if blk.first_exit.is_none() {
            blk.first_exit = Some((first, pc));
            let skipped = w.barrier_skip[lanes_mask.trailing_zeros() as usize];
            blk.first_exit_skipped = skipped.checked_sub(1);
        }
    }
    w.regroup();
    if n > 0 { Some(w.slot) } else { None }
}

impl Ctx<'_> {
    pub(crate) fn save_frame(&self, w: &Warp, lane: usize, f: &Function) -> Frame {
        let ts = self.m.tparam_size as usize;
        let tp = lane * ts;
        let local_base = self.rt(w, lane) as usize * self.local_size as usize;
        Frame {
            regs: f.regs.clone().map(|r| w.regs[r as usize][lane]).collect(),
            tparam: w
                .tparam
                .get(tp + f.tparams.start as usize..tp + f.tparams.end as usize)
                .unwrap_or(&[])
                .to_vec(),
            local: self
                .mem
                .local
                .get(local_base + f.locals.start as usize..local_base + f.locals.end as usize)
                .unwrap_or(&[])
                .to_vec(),
        }
    }

    pub(crate) fn restore_frame(&mut self, w: &mut Warp, lane: usize, f: &Function, frame: Frame) {
        for (r, v) in f.regs.clone().zip(frame.regs) {
            w.regs[r as usize][lane] = v;
        }
        let tp = lane * self.m.tparam_size as usize;
        if let Some(s) = w
            .tparam
            .get_mut(tp + f.tparams.start as usize..tp + f.tparams.end as usize)
            .filter(|s| s.len() == frame.tparam.len())
        {
            s.copy_from_slice(&frame.tparam);
        }
        let local_base = self.rt(w, lane) as usize * self.local_size as usize;
        if let Some(s) = self
            .mem
            .local
            .get_mut(local_base + f.locals.start as usize..local_base + f.locals.end as usize)
            .filter(|s| s.len() == frame.local.len())
        {
            s.copy_from_slice(&frame.local);
        }
    }
}

/// A recursive callee's registers are saved per lane before the call; false (with the lanes'
/// stack overflow reported) when a lane is already `MAX_CALL_DEPTH` calls deep.
fn save_frames(ctx: &mut Ctx, w: &mut Warp, lanes: u32, callee: &Function, pc: u32) -> bool {
    let mut overflow = 0u32;
    lanes!(lanes, l, {
        if w.stacks[l].len() >= MAX_CALL_DEPTH {
            overflow |= 1 << l;
        } else {
            let frame = ctx.save_frame(w, l, callee);
            w.frames[l].push(frame);
        }
    });
    if overflow != 0 {
        ctx.stack_overflow(w, overflow, pc);
        return false;
    }
    true
}
