//! One resident block's turn: a warp's instruction, then the block's barriers that every live
//! thread reached. Only the block's warps, barrier state and memory are touched, and global
//! memory, so different blocks can take their turns on different cores (`parallel/`).

use super::ctx::Ctx;
use super::instr::exec;
use super::splitter::Interleave;
use super::warp::{Bar, BlockState, RoundTag, Warp};
use crate::ir::*;
use crate::options::Schedule;
use crate::report::{Finding, FindingKind, ThreadGroup};
use crate::stretch::MAX_STEP_INSTRUCTIONS;

/// Runs one step of the block's warp `wi` (for its active lanes). `warps` are the block's.
/// Under the hardware schedule a step is the warp's instructions that no other warp can
/// observe, up to and with the next one that another warp could observe or that synchronizes
/// (`Module::ends_step`), or [`MAX_STEP_INSTRUCTIONS`] instructions, whichever comes first:
/// rounds interleave only what the warps can see of each other. A step also ends once the
/// launch's thread-instructions reach [`Ctx::steps_end_at`] (the step budget), so that a launch
/// stops there as when steps were one instruction. Under the other schedules a step is one
/// instruction.
pub(crate) fn step(ctx: &mut Ctx, warps: &mut [Warp], state: &mut BlockState, wi: usize) -> Step {
    if !matches!(ctx.opts.schedule, Schedule::Hardware) {
        return instruction(ctx, warps, state, wi);
    }
    let mut ran = 0u32;
    loop {
        let w = &mut warps[wi];
        if w.active == 0 {
            if w.runnable() == 0 {
                w.favored = None;
                break;
            }
            w.regroup();
            if w.active == 0 {
                break;
            }
        }
        if ran == 0 {
            ctx.thread_steps += w.active.count_ones() as u64;
        }
        // Once a thread has aborted the launch, every later step of the round is one instruction
        // (the check below), so a region, which may be longer, waits.
        let region = if ctx.aborted {
            0
        } else {
            super::regions::run_in_step(ctx, w, MAX_STEP_INSTRUCTIONS - ran)
        };
        if region > 0 {
            ran += region;
            if ran >= MAX_STEP_INSTRUCTIONS || ctx.thread_instrs >= ctx.steps_end_at {
                break;
            }
            continue;
        }
        let ends = ctx.m.ends_step(w.pc);
        if w.lanes.is_some() {
            super::lanes::interleave(&ctx.m.code, w);
        }
        if exec(ctx, state, w).is_some() {
            check_barriers(ctx, warps, state);
        }
        ran += 1;
        if ends
            || ran >= MAX_STEP_INSTRUCTIONS
            || ctx.aborted
            || ctx.thread_instrs >= ctx.steps_end_at
        {
            break;
        }
    }
    if ran == 0 { Step::Idle } else { Step::Ran }
}

/// Runs one instruction of the block's warp `wi` (for its active lanes): a step of the random,
/// adversarial and lanes schedules.
fn instruction(ctx: &mut Ctx, warps: &mut [Warp], state: &mut BlockState, wi: usize) -> Step {
    let w = &mut warps[wi];
    if w.active == 0 {
        if w.runnable() == 0 {
            w.favored = None;
            return Step::Idle;
        }
        w.regroup();
        if w.active == 0 {
            return Step::Idle;
        }
    }
    ctx.thread_steps += w.active.count_ones() as u64;
    if super::regions::step(ctx, w) {
        return Step::Ran;
    }
    if w.lanes.is_some() {
        super::lanes::interleave(&ctx.m.code, w);
    }
    if exec(ctx, state, w).is_some() {
        check_barriers(ctx, warps, state);
    }
    Step::Ran
}

/// Runs one step of each of the block's warps that has live lanes, in warp order, as
/// [`step`] on every warp would: a warp with no live lanes is idle for good. Returns whether
/// any ran.
pub(crate) fn step_live(ctx: &mut Ctx, warps: &mut [Warp], state: &mut BlockState) -> Step {
    state.rounds += 1;
    let made_before = ctx.race_calls_made();
    // The core that runs the block's round holds its copies in flight meanwhile.
    if !state.copies_in_flight.is_empty() {
        std::mem::swap(&mut ctx.copies_in_flight, &mut state.copies_in_flight);
    }
    let mut ran = Step::Idle;
    let mut live = state.live_warps;
    while live != 0 {
        let wi = live.trailing_zeros() as usize;
        live &= live - 1;
        if let Step::Ran = step(ctx, warps, state, wi) {
            ran = Step::Ran;
        }
        if let Some(w) = warps.get_mut(wi)
            && w.live == 0
        {
            // What the next `step` of the exited warp would do, once.
            w.favored = None;
            state.live_warps &= !(1 << wi);
        }
    }
    if !ctx.copies_in_flight.is_empty() {
        std::mem::swap(&mut ctx.copies_in_flight, &mut state.copies_in_flight);
    }
    if ctx.race_calls_made() != made_before
        && let Some(w) = warps.first()
    {
        ctx.round_made_calls(RoundTag {
            slot: w.slot,
            block: w.block,
            round: state.rounds,
            path: 0,
        });
    }
    ran
}

/// Completes the block's barriers that every live thread reached.
fn check_barriers(ctx: &mut Ctx, warps: &mut [Warp], state: &mut BlockState) {
    for id in 0..16u8 {
        let bar = &state.bars[id as usize];
        if bar.arrived == 0 {
            continue;
        }
        let expected = bar.expected.unwrap_or(state.live);
        if bar.arrived >= expected {
            release(ctx, warps, state, id);
        }
    }
}

/// The lanes whose barrier is `id`, eight lanes to a 64-bit word: a byte equal to `id` becomes
/// zero, the zero bytes' high bits are set, and a multiplication gathers the eight bits. A loop
/// over the waiting lanes was 2.6 % of a one-core run of `reduce_better`.
fn lanes_at_barrier(ids: &[u8; 32], id: u8) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut lanes = 0u32;
    for (k, eight) in ids.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(eight.try_into().unwrap_or_default());
        let x = word ^ (0x0101_0101_0101_0101 * id as u64);
        let zero_bytes = !(((x & LOW7) + LOW7) | x) & HIGH;
        let bits = (zero_bytes >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
        lanes |= (bits as u32) << (8 * k);
    }
    lanes
}

fn release(ctx: &mut Ctx, warps: &mut [Warp], state: &mut BlockState, id: u8) {
    ctx.progress += 1;
    let bar = std::mem::take(&mut state.bars[id as usize]);
    if ctx.opts.synccheck && bar.expected.is_none() && (bar.sites.len() > 1 || state.exited > 0) {
        report_barrier_divergence(ctx, state, &bar, id);
    }
    let slot = warps[0].slot;
    let block = warps[0].block as u32;
    if let Some(t) = ctx.trace.as_deref_mut() {
        t.barrier_release(block, id);
    }
    for w in warps.iter_mut() {
        let waiting = w.blocked & !w.wsync_wait;
        let freed = lanes_at_barrier(&w.bar_id, id) & waiting;
        if freed == 0 {
            continue;
        }
        if bar.red_dest {
            lanes!(freed, l, {
                let at = w.lane_pc[l].saturating_sub(1) as usize;
                if let Some(Instr {
                    op: Op::Bar {
                        kind, d: Some(d), ..
                    },
                    ..
                }) = ctx.m.code.get(at)
                {
                    let v = match kind {
                        BarKind::RedPopc => bar.red as u64,
                        BarKind::RedAnd => (bar.red == bar.arrived) as u64,
                        _ => (bar.red > 0) as u64,
                    };
                    w.regs[*d as usize][l] = v;
                }
            });
        }
        w.blocked &= !freed;
        w.regroup();
    }
    let wpb = ctx.wpb;
    state.barriers += 1;
    if let Some(r) = ctx.race.as_mut() {
        r.barrier(slot, (slot * wpb)..((slot + 1) * wpb), state.barriers);
    }
}

#[cold]
fn report_barrier_divergence(ctx: &mut Ctx, state: &BlockState, bar: &Bar, id: u8) {
    let mut threads: Vec<ThreadGroup> = bar
        .sites
        .iter()
        .map(|&(pc, n, gid)| ThreadGroup {
            at: ctx.src(pc),
            threads: n as u64,
            example: ctx.thread_ref(gid),
            state: format!("arrived at barrier {id}"),
        })
        .collect();
    if let Some((gid, pc)) = state.first_exit {
        // The branch that thread took over the barrier to its end, when it took one; else the
        // one branch that could have. Where the code has several, the branch another thread
        // took over a barrier to its end beats the thread's end itself (the closing brace),
        // with that thread as the example: a warp whose lanes all returned may end before the
        // warp whose branch left first, since its other lanes went on to the barrier.
        let guess = || exit_cause(&ctx.m.code, pc, |pc| ctx.line_of(pc));
        // Best of all, the branch over a barrier the first thread to exit took last (a
        // `break`, a `continue`, the `if` around the barrier): where it left the barriers.
        let skipped = state
            .first_exit_skipped
            .filter(|&branch| ctx.line_of(branch) != 0);
        let (left, example, first) = match (skipped, state.exit_branch) {
            (Some(branch), _) => (branch, gid, true),
            (None, exit_branch) => match exit_branch {
                Some((branched, branch)) if branched == gid => (branch, gid, true),
                Some((branched, branch)) => match guess() {
                    unknown if unknown == pc => (branch, branched, false),
                    known => (known, gid, true),
                },
                None => (guess(), gid, true),
            },
        };
        // A branch that does not go straight to the thread's end (a `return`'s does) left the
        // barrier behind, and the thread exited later, elsewhere.
        let went_on = match ctx.m.code.get(left as usize).map(|i| &i.op) {
            Some(Op::Bra { target }) => !ctx.m.straight_to_end(*target),
            _ => false,
        };
        let exited = match (went_on, first) {
            (true, true) => "skipped the barrier, then exited without arriving (first exit)",
            (true, false) => "skipped the barrier, then exited without arriving",
            (false, true) => "exited without arriving (first exit)",
            (false, false) => "exited without arriving",
        };
        threads.push(ThreadGroup {
            at: ctx.src(if went_on {
                decided_at(&ctx.m.code, left)
            } else {
                left
            }),
            threads: state.exited as u64,
            example: ctx.thread_ref(example),
            state: exited.into(),
        });
    }
    let lines: Vec<String> = bar.sites.iter().map(|s| ctx.src(s.0).to_string()).collect();
    let why = if bar.sites.len() > 1 {
        format!(
            "threads of one block reached different __syncthreads() ({}); every thread of the block must reach the same barrier",
            lines.join(", ")
        )
    } else {
        format!(
            "only {} of the block's {} threads reached this barrier: it sits in code that not every thread runs (e.g. inside `if`)",
            bar.arrived, ctx.tpb
        )
    };
    let key = (
        FindingKind::BarrierDivergence,
        ctx.line_of(bar.sites[0].0),
        0,
        0,
    );
    let new = ctx.findings.add(key, || Finding {
        kind: FindingKind::BarrierDivergence,
        count: 1,
        location: None,
        accesses: vec![],
        threads,
        why,
    });
    if let (Some(index), Some(t)) = (new, ctx.trace.as_deref_mut()) {
        t.finding(index, vec![]);
    }
}

/// The comparison that decides the guarded branch at `branch`, when it is in the branch's own
/// straight run of code: NVRTC folds `if (tid >= i) break;` into the loop's test and puts the
/// branch at the `for`, while the comparison keeps the `if`'s line.
fn decided_at(code: &[Instr], branch: u32) -> u32 {
    let Some((predicate, _)) = code.get(branch as usize).and_then(|i| i.guard) else {
        return branch;
    };
    for at in (0..branch).rev() {
        match &code[at as usize].op {
            Op::Setp { d, d2, .. } if *d == predicate || *d2 == Some(predicate) => return at,
            Op::Bra { .. } | Op::Bar { .. } | Op::Ret | Op::Exit | Op::Call { .. } => break,
            _ => {}
        }
    }
    branch
}

/// Where a thread that exited at `exit` without reaching a barrier left from: the one branch
/// (an early `return;`) that jumps over a barrier to code that runs straight into `exit`, when
/// such branches come from one source line other than the exit's own (the closing `}`). Else
/// `exit`. Reports blame the line a learner wrote rather than the brace NVRTC put the `ret` at.
fn exit_cause(code: &[Instr], exit: u32, line_of: impl Fn(u32) -> u32) -> u32 {
    let ends_block = |op: &Op| matches!(op, Op::Bra { .. } | Op::Ret | Op::Exit);
    let exit_line = line_of(exit);
    let mut cause: Option<(u32, u32)> = None;
    for (pc, instr) in code.iter().enumerate() {
        let Op::Bra { target } = instr.op else {
            continue;
        };
        let straight = target <= exit
            && code
                .get(target as usize..exit as usize)
                .is_some_and(|between| !between.iter().any(|i| ends_block(&i.op)));
        // Only a branch that jumps over a barrier explains a thread that never arrived: the
        // `if` that skips a last store to the end does not.
        if !straight || !jumps_over_a_barrier(code, pc as u32, target) {
            continue;
        }
        let line = line_of(pc as u32);
        if line == 0 || line == exit_line {
            continue;
        }
        match cause {
            None => cause = Some((pc as u32, line)),
            Some((_, seen)) if seen == line => {}
            Some(_) => return exit,
        }
    }
    cause.map_or(exit, |(pc, _)| pc)
}

pub(crate) enum Step {
    Ran,
    Idle,
}

/// Makes slot `slot`'s warps and memory ready for block `block` to start at `entry`: the part of
/// a block's start that only its slot sees, done by whichever core runs the block (`ctx`'s views
/// reach the slot's memory).
pub(crate) fn prepare_block(ctx: &Ctx, entry: u32, slot: u32, block: u64, warps: &mut [Warp]) {
    let (tpb, wpb) = (ctx.tpb, ctx.wpb);
    let tparam_len = ctx.m.tparam_size as usize * 32;
    for (wi, w) in (0..wpb).zip(warps.iter_mut()) {
        let first = wi * 32;
        let n = (tpb - first).min(32);
        let live = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        // The register file is the slot's previous block's: registers a kernel reads before
        // writing hold leftovers, as on hardware, and not a helpful zero.
        let regs = std::mem::take(&mut w.regs);
        // Its call stacks and parameter space start empty, in the previous block's room.
        let mut tparam = std::mem::take(&mut w.tparam);
        tparam.clear();
        tparam.resize(tparam_len, 0);
        let mut stacks = std::mem::take(&mut w.stacks);
        stacks.iter_mut().for_each(Vec::clear);
        stacks.resize_with(32, Vec::new);
        let mut frames = std::mem::take(&mut w.frames);
        frames.iter_mut().for_each(Vec::clear);
        frames.resize_with(32, Vec::new);
        let mut async_copies = std::mem::take(&mut w.async_copies);
        async_copies.clear();
        *w = Warp {
            block,
            slot,
            first,
            gw: slot * wpb + wi,
            pc: entry,
            active: live,
            live,
            blocked: 0,
            wsync_wait: 0,
            wsync_mask: [0; 32],
            lane_pc: [entry; 32],
            barrier_skip: [0; 32],
            bar_id: [0; 32],
            regs,
            tparam,
            stacks,
            frames,
            spin: 0,
            favored: None,
            lanes: Interleave::for_warp(ctx.opts.schedule, block, wi),
            async_copies,
            compiled_debt: 0,
            copy_groups: [0; 32],
        };
    }
    if let Some(shared) = ctx.mem.shared(slot).get_mut(0..ctx.shared_init.len()) {
        shared.copy_from_slice(&ctx.shared_init);
    }
    let sw = ctx.shared_words;
    let range = slot as usize * sw..(slot as usize + 1) * sw;
    if let Some(written) = ctx.mem.shared_written.get_mut(range) {
        written.fill(0);
        // The reserved region starts cleared (see `run_launch`): written, for initcheck.
        if ctx.m.reserved_smem {
            for byte in ctx.reserved_base as usize..ctx.shared_size as usize {
                if let Some(bits) = written.get_mut(byte / 64) {
                    *bits |= 1 << (byte % 64);
                }
            }
        }
    }
    let ls = tpb as usize * ctx.local_size as usize;
    if let Some(local) = ctx
        .mem
        .local
        .get_mut(slot as usize * ls..(slot as usize + 1) * ls)
    {
        local.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::lanes_at_barrier;

    #[test]
    fn lanes_at_a_barrier_are_those_whose_id_matches() {
        let mut ids = [0u8; 32];
        for (l, id) in ids.iter_mut().enumerate() {
            *id = (l * 7 % 16) as u8;
        }
        for id in 0..16u8 {
            let want = (0..32)
                .filter(|&l| ids[l] == id)
                .fold(0u32, |m, l| m | 1 << l);
            assert_eq!(lanes_at_barrier(&ids, id), want, "barrier {id}");
        }
        // High ids, and neighbours that differ by one bit, are not taken for each other.
        let ids = [15u8, 14, 7, 15, 0, 1, 15, 8].repeat(4).try_into().unwrap();
        assert_eq!(lanes_at_barrier(&ids, 15), 0x4949_4949);
        assert_eq!(lanes_at_barrier(&ids, 14), 0x0202_0202);
    }
}
