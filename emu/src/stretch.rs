//! How many rounds a lane can run before it may touch anything beyond its block: the stretches
//! that blocks run on several cores without comparing footprints or waiting for each other
//! (`exec/plan.rs`, `exec/parallel/`).
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

/// Per instruction: the fewest steps along the control flow to an instruction that stops (by
/// `kind`; an instruction with nowhere to go that does not end its thread stops too), at most
/// [`MAX_STRETCH`].
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
    // Breadth first from the stops, backwards along the control flow: each instruction's
    // stretch is one more than its nearest successor's.
    while let Some(pc) = stops.pop_front() {
        let reached = stretch[pc as usize] + 1;
        if reached >= MAX_STRETCH {
            continue;
        }
        for &p in &before[pc as usize] {
            if stretch[p as usize] > reached {
                stretch[p as usize] = reached;
                stops.push_back(p);
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
        // The branch may fall through to the global store right after it.
        assert_eq!(&s[..5], &[4, 3, 2, 1, 0]);
        // The other path: two adds, a shared store and a barrier keep to the block.
        assert_eq!(&s[5..11], &[4, 3, 2, 1, 0, 0]);
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
        // Through three loads (global, generic, constant) to the atomic, which writes.
        assert_eq!(&analyze_quiet(&m)[..7], &[5, 4, 3, 2, 1, 0, 0]);
        // Loads stop the stretch that keeps to the block.
        assert_eq!(&analyze(&m)[..7], &[1, 0, 0, 0, 1, 0, 0]);
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
        // The branch may jump straight to the `ret`.
        assert_eq!(&exits[..5], &[3, 2, 1, 1, 0]);
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
        assert_eq!(&s[..4], &[2, 1, 0, 0]);
    }
}
