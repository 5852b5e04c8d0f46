//! How many rounds a lane can run before it may touch anything beyond its block: the stretches
//! that blocks run on several cores without comparing footprints or waiting for each other
//! (`exec/plan.rs`, `exec/parallel/`).
//!
//! A round of the hardware schedule runs one *step* of each warp: its instructions that no
//! other warp can observe, up to and with the next one that another warp could observe or that
//! synchronizes ([`ends_step`]), or [`MAX_STEP_INSTRUCTIONS`] instructions. So the counts below
//! are of instructions that end a step: the others cost no round, and a count is the fewest
//! rounds a lane needs, a lower bound whatever its steps' lengths.
//!
//! An instruction *stops* a stretch when it may reach beyond its block ([`Reach`]: global or
//! generic memory, `malloc`, `printf`, `assert`, `trap`, a refused instruction) or leave its
//! function (`call`, `ret`, `exit`: a block that finishes lets the next one start). A lane at
//! `pc` surely runs `stretch[pc]` instructions before it reaches a stop: the fewest steps along
//! the function's control flow from `pc` to one. A warp runs at most one instruction a round, so
//! for that many rounds it keeps to its block, whatever its lanes' branches do.
//!
//! A lane's *quiet* stretch counts the same way to the nearest instruction that may *change*
//! something beyond its block: it runs through loads of global, generic and constant memory.
//! When every resident block is quiet for a while, no block writes global memory in those
//! rounds, so each block's loads read what they would read in one core's order, whichever core
//! runs it and whenever: the blocks run that long apart, loads and all.

use std::collections::VecDeque;

use crate::ir::{Function, Op, Reach};
use crate::module::Module;

/// The longest stretch counted: longer ones end here and start again.
pub(crate) const MAX_STRETCH: u32 = 256;

/// The most instructions of one step of the hardware schedule: a loop of instructions that end
/// no step (a register-only loop, a spinning one) still gives the other warps their rounds, and
/// a round adds at most this many thread-instructions per thread.
pub(crate) const MAX_STEP_INSTRUCTIONS: u32 = 32;

/// Whether `ins` ends a step of the hardware schedule: it may be observed by, or wait for,
/// another warp or the launch (memory other than the thread's own local and parameter space,
/// atomics, fences, barriers, warp collectives, `cp.async` and `mbarrier`, the device
/// runtime's calls, `printf`, a clock read, calls and returns, `exit`, `trap`, a refused
/// instruction). Register arithmetic, branches, `activemask` and local and parameter memory are
/// the warp's own: they run in the step of the next instruction that ends one.
pub(crate) fn ends_step(ins: &crate::ir::Instr) -> bool {
    use crate::ir::Space;
    let own_space = |space: &Space| matches!(space, Space::Local | Space::Param);
    match &ins.op {
        Op::Ld { space, .. } | Op::St { space, .. } => !own_space(space) || ins.op.reads_timed(),
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
        | Op::TestP { .. }
        | Op::Activemask { .. }
        | Op::Nop
        | Op::Bra { .. } => ins.op.reads_timed(),
        _ => true,
    }
}

/// The most instructions a thread runs in one step of the hardware schedule: the longest path
/// through instructions that end no step, with the one that ends it, at most
/// [`MAX_STEP_INSTRUCTIONS`] (which a loop of such instructions reaches). A round adds at most
/// this many thread-instructions per thread.
pub(crate) fn analyze_longest_step(m: &Module) -> u32 {
    let n = m.code.len();
    let mut longest = vec![1u32; n];
    let mut next = Vec::new();
    // Backwards through each function until nothing grows: once for code without loops, at
    // most [`MAX_STEP_INSTRUCTIONS`] times around a loop.
    let mut changed = true;
    while changed {
        changed = false;
        for f in &m.funcs {
            let end = (f.end as usize).min(n) as u32;
            for pc in (f.start..end).rev() {
                if m.ends_step(pc) {
                    continue;
                }
                m.code[pc as usize].successors(pc, end, &mut next);
                let after = next.iter().map(|&s| longest[s as usize]).max().unwrap_or(0);
                let here = (after + 1).min(MAX_STEP_INSTRUCTIONS);
                if here > longest[pc as usize] {
                    longest[pc as usize] = here;
                    changed = true;
                }
            }
        }
    }
    longest.into_iter().max().unwrap_or(1)
}

/// Per instruction: [`ends_step`].
pub(crate) fn analyze_ends_step(m: &Module) -> Vec<bool> {
    m.code.iter().map(ends_step).collect()
}

impl Module {
    /// The rounds a lane at `pc` surely keeps to its block; none past the code's end.
    pub(crate) fn stretch_at(&self, pc: u32) -> u32 {
        self.stretch.get(pc as usize).copied().unwrap_or(0)
    }

    /// The rounds a lane at `pc` surely changes nothing beyond its block (it may load global
    /// memory); none past the code's end.
    pub(crate) fn quiet_at(&self, pc: u32) -> u32 {
        self.quiet.get(pc as usize).copied().unwrap_or(0)
    }

    /// The fewest rounds before a lane at `pc` can end its thread; none past the code's end.
    pub(crate) fn exit_at(&self, pc: u32) -> u32 {
        self.exits.get(pc as usize).copied().unwrap_or(0)
    }

    /// Whether the instruction at `pc` ends a step of the hardware schedule ([`ends_step`]); past
    /// the code's end, yes (it exits).
    #[inline]
    pub(crate) fn ends_step(&self, pc: u32) -> bool {
        self.ends_step.get(pc as usize).copied().unwrap_or(true)
    }

    /// Whether the instruction at `pc` is a branch forward over a barrier.
    pub(crate) fn skips_barrier(&self, pc: u32) -> bool {
        self.skips_barrier
            .get(pc as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Whether a lane at `pc` runs straight to the end of its thread.
    pub(crate) fn straight_to_end(&self, pc: u32) -> bool {
        self.straight_to_end
            .get(pc as usize)
            .copied()
            .unwrap_or(false)
    }
}

/// What an instruction is to a count of steps.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// The count ends here.
    Stops,
    /// The lane goes on to the instruction's successors.
    Runs,
    /// The lane's thread ends here: nothing after it to count, and nothing that stops.
    Ends,
}

/// Whether `op` of function `f` ends its thread: `exit` anywhere, `ret` from a kernel.
fn ends_thread(f: &Function, op: &Op) -> bool {
    matches!(op, Op::Exit) || (f.is_entry && matches!(op, Op::Ret))
}

/// Per instruction: the rounds a lane there surely keeps to its block, at most [`MAX_STRETCH`].
pub(crate) fn analyze(m: &Module) -> Vec<u32> {
    stretches(m, |_, op| {
        let leaves = matches!(
            op,
            Op::Call { .. } | Op::CallIndirect { .. } | Op::Ret | Op::Exit
        );
        if leaves || op.reach() != Reach::Block {
            Kind::Stops
        } else {
            Kind::Runs
        }
    })
}

/// Per instruction: the rounds a lane there surely changes nothing beyond its block, at most
/// [`MAX_STRETCH`]: as [`analyze`], with loads from any space running through, and a thread's
/// end stopping nothing (a block that finishes is [`analyze_exits`]'s business).
pub(crate) fn analyze_quiet(m: &Module) -> Vec<u32> {
    stretches(m, |f, op| {
        if ends_thread(f, op) {
            Kind::Ends
        } else if matches!(op, Op::Call { .. } | Op::CallIndirect { .. } | Op::Ret)
            || (op.reach() != Reach::Block && !matches!(op, Op::Ld { .. }))
        {
            Kind::Stops
        } else {
            Kind::Runs
        }
    })
}

/// Per instruction: whether a lane there reaches the end of its thread through no branch or
/// call (a guarded end lets the other lanes go on, straight or not).
pub(crate) fn analyze_straight_to_end(m: &Module) -> Vec<bool> {
    let mut straight = vec![false; m.code.len()];
    for f in &m.funcs {
        let end = (f.end as usize).min(m.code.len());
        let mut next = false;
        for pc in (f.start as usize..end).rev() {
            let ins = &m.code[pc];
            let ends = ends_thread(f, &ins.op);
            next = if ends && ins.guard.is_none() {
                true
            } else if !ends
                && matches!(
                    ins.op,
                    Op::Bra { .. } | Op::Call { .. } | Op::CallIndirect { .. } | Op::Ret
                )
            {
                false
            } else {
                next
            };
            straight[pc] = next;
        }
    }
    straight
}

/// Per instruction: whether it is a branch forward over a barrier of its function.
pub(crate) fn analyze_skips_barrier(m: &Module) -> Vec<bool> {
    m.code
        .iter()
        .enumerate()
        .map(|(pc, ins)| match ins.op {
            Op::Bra { target } => {
                target as usize > pc && crate::ir::jumps_over_a_barrier(&m.code, pc as u32, target)
            }
            _ => false,
        })
        .collect()
}

/// Per instruction: the fewest steps from there to the end of the lane's thread, at most
/// [`MAX_STRETCH`]. A block cannot finish before its farthest lane has taken that many.
pub(crate) fn analyze_exits(m: &Module) -> Vec<u32> {
    stretches(m, |f, op| {
        if ends_thread(f, op) {
            Kind::Stops
        } else {
            Kind::Runs
        }
    })
}

/// Per instruction: the fewest rounds along the control flow to an instruction that stops (by
/// `kind`; an instruction with nowhere to go that does not end its thread stops too), at most
/// [`MAX_STRETCH`]: each instruction on the way that ends a step ([`ends_step`]) is a round,
/// the others none.
fn stretches(m: &Module, kind: impl Fn(&Function, &Op) -> Kind) -> Vec<u32> {
    let n = m.code.len();
    let mut stretch = vec![MAX_STRETCH; n];
    let mut before: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut stops = VecDeque::new();
    let mut next = Vec::new();
    for f in &m.funcs {
        let end = (f.end as usize).min(n) as u32;
        for pc in f.start..end {
            let ins = &m.code[pc as usize];
            ins.successors(pc, end, &mut next);
            match kind(f, &ins.op) {
                Kind::Ends => continue,
                Kind::Stops => {}
                Kind::Runs if next.is_empty() => {}
                Kind::Runs => {
                    for &s in &next {
                        before[s as usize].push(pc);
                    }
                    continue;
                }
            }
            stretch[pc as usize] = 0;
            stops.push_back(pc);
        }
    }
    // Backwards along the control flow from the stops, nearest first (a deque: an instruction
    // that costs no round goes to the front): each instruction's stretch is its nearest
    // successor's, one more when it ends a step.
    while let Some(pc) = stops.pop_front() {
        let here = stretch[pc as usize];
        for &p in &before[pc as usize] {
            let cost = u32::from(m.ends_step(p));
            let reached = here + cost;
            if reached >= MAX_STRETCH {
                continue;
            }
            if stretch[p as usize] > reached {
                stretch[p as usize] = reached;
                if cost == 0 {
                    stops.push_front(p);
                } else {
                    stops.push_back(p);
                }
            }
        }
    }
    stretch
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stretches(body: &str) -> Vec<u32> {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.shared .align 4 .b8 s[128];\n\
             {body}\n}}\n"
        );
        let m = Module::parse(&ptx).expect("test PTX parses");
        analyze(&m)
    }

    #[test]
    fn a_stretch_counts_the_steps_to_the_nearest_global_access_on_any_path() {
        let s = stretches(
            "ld.param.u64 %rd1, [p];\n\
             mov.u32 %r1, %tid.x;\n\
             setp.eq.u32 %p1, %r1, 0;\n\
             @%p1 bra LONG;\n\
             st.global.u32 [%rd1], %r1;\n\
             LONG:\n\
             add.u32 %r2, %r1, 1;\n\
             add.u32 %r2, %r2, 1;\n\
             st.shared.u32 [s], %r2;\n\
             bar.sync 0;\n\
             st.global.u32 [%rd1], %r2;\n\
             ret;",
        );
        // The branch may fall through to the global store right after it, in the same step: the
        // parameter load, the move, the comparison and the branch end no step.
        assert_eq!(&s[..5], &[0, 0, 0, 0, 0]);
        // The other path: the two adds run in the step of the shared store, and the store and
        // the barrier each end a step that keeps to the block.
        assert_eq!(&s[5..11], &[2, 2, 2, 1, 0, 0]);
    }

    #[test]
    fn a_quiet_stretch_runs_through_global_loads_to_the_nearest_store() {
        let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
             .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.const .align 4 .b8 c[16];\n\
             ld.param.u64 %rd1, [p];\n\
             ld.global.u32 %r1, [%rd1];\n\
             ld.u32 %r2, [%rd1+4];\n\
             ld.const.u32 %r3, [c];\n\
             add.u32 %r4, %r1, %r2;\n\
             atom.global.add.u32 %r5, [%rd1], %r4;\n\
             st.global.u32 [%rd1+8], %r3;\n\
             ret;\n}\n";
        let m = Module::parse(ptx).expect("test PTX parses");
        // Through three loads (global, generic, constant), a step each, to the atomic, which
        // writes; the parameter load and the add end no step.
        assert_eq!(&analyze_quiet(&m)[..7], &[3, 3, 2, 1, 0, 0, 0]);
        // Loads stop the stretch that keeps to the block.
        assert_eq!(&analyze(&m)[..7], &[0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_kernel_s_end_stops_no_quiet_stretch_and_counts_the_steps_to_finish() {
        let s = |body: &str| {
            let ptx = format!(
                ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
                 .reg .pred %p<4>;\n.reg .b32 %r<8>;\n{body}\n}}\n"
            );
            let m = Module::parse(&ptx).expect("test PTX parses");
            (analyze_quiet(&m), analyze_exits(&m))
        };
        let (quiet, exits) = s("mov.u32 %r1, %tid.x;\n\
             setp.eq.u32 %p1, %r1, 0;\n\
             @%p1 bra DONE;\n\
             add.u32 %r2, %r1, 1;\n\
             DONE:\n\
             ret;");
        // Nothing here writes beyond the block: the `ret` ends the thread and stops nothing.
        assert_eq!(&quiet[..5], &[MAX_STRETCH; 5], "{quiet:?}");
        // Register work and branches run in the step of the `ret`.
        assert_eq!(&exits[..5], &[0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_loop_that_keeps_to_its_block_is_as_long_as_counted() {
        let s = stretches(
            "mov.u32 %r1, 0;\n\
             TOP:\n\
             add.u32 %r1, %r1, 1;\n\
             st.shared.u32 [s], %r1;\n\
             bra TOP;",
        );
        // The parser ends every function with an `exit`, which no path reaches here.
        assert_eq!(&s[..4], &[MAX_STRETCH; 4], "{s:?}");
    }

    #[test]
    fn a_generic_access_stops_a_stretch_even_to_shared_memory() {
        let s = stretches(
            "mov.u64 %rd1, s;\n\
             cvta.shared.u64 %rd2, %rd1;\n\
             ld.u32 %r1, [%rd2];\n\
             exit;",
        );
        assert_eq!(&s[..4], &[0, 0, 0, 0]);
    }

    fn module(body: &str) -> Module {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n{body}\n}}\n"
        );
        Module::parse(&ptx).expect("test PTX parses")
    }

    #[test]
    fn a_clock_read_ends_a_step_and_other_special_registers_do_not() {
        let m = module(
            "mov.u32 %r1, %tid.x;\n\
             mov.u32 %r2, %clock;\n\
             mov.u64 %rd1, %clock64;\n\
             mov.u64 %rd2, %globaltimer;\n\
             mov.u32 %r3, %globaltimer_hi;\n\
             add.s32 %r4, %r1, %lanemask_lt;\n\
             ret;",
        );
        let ends: Vec<bool> = (0..6).map(|pc| m.ends_step(pc)).collect();
        assert_eq!(ends, [false, true, true, true, true, false]);
    }

    #[test]
    fn a_step_is_as_long_as_the_longest_private_path_and_a_private_loop_is_capped() {
        // Two parameter loads, two moves, an add and the store that ends the step.
        let straight = module(
            "ld.param.u64 %rd1, [p];\n\
             cvta.to.global.u64 %rd2, %rd1;\n\
             mov.u32 %r1, %tid.x;\n\
             mul.wide.u32 %rd3, %r1, 4;\n\
             add.s64 %rd4, %rd2, %rd3;\n\
             st.global.u32 [%rd4], %r1;\n\
             ret;",
        );
        assert_eq!(straight.longest_step, 6);
        let spin = module(
            "$L1:\n\
             add.s32 %r1, %r1, 1;\n\
             setp.ne.s32 %p1, %r1, 0;\n\
             @%p1 bra $L1;\n\
             ret;",
        );
        assert_eq!(spin.longest_step, MAX_STEP_INSTRUCTIONS);
    }
}
