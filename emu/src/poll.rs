//! Which strong loads poll a flag (see README, "Race detector"): racecheck treats the words they
//! read as flags, whose volatile or relaxed stores and loads are synchronization, not data.
//!
//! A strong (volatile, relaxed or acquire) load or an atomic polls when it sits in a loop and its
//! value decides whether the loop goes on: some conditional branch inside the loop tests a predicate
//! computed from the loaded value (through arithmetic, comparisons, conversions, selects, warp
//! votes or shuffles). That is `while (flag == 0);`, `do { w = status[i]; } while (state(w) ==
//! NONE);`, the look-back's `__any_sync` over its lanes' polls and a lock's `while
//! (atomicCAS(&lock, 0, 1) != 0);`, whichever way the compiler lays the loop out. A strong load whose value is only used as data is not a poll, however many
//! times a loop runs it. The analysis is per function, flow-insensitive (a register derived from
//! the load anywhere is derived everywhere), and does not follow values through memory or calls.

use crate::ir::{Addr, Instr, Op, Opnd, Strength};
use crate::module::Module;

/// Per instruction: a strong load or an atomic that polls.
pub(crate) fn analyze(m: &Module) -> Vec<bool> {
    let mut out = vec![false; m.code.len()];
    for f in &m.funcs {
        let (start, end) = (f.start as usize, (f.end as usize).min(m.code.len()));
        if start >= end {
            continue;
        }
        let body = &m.code[start..end];
        let loops: Vec<(usize, usize)> = body
            .iter()
            .enumerate()
            .filter_map(|(k, ins)| match ins.op {
                Op::Bra { target }
                    if (target as usize) >= start && (target as usize) <= start + k =>
                {
                    Some((target as usize - start, k))
                }
                _ => None,
            })
            .collect();
        if loops.is_empty() {
            continue;
        }
        for (k, ins) in body.iter().enumerate() {
            let roots: Vec<u32> = match &ins.op {
                Op::Ld { ds, strong, .. } if *strong != Strength::Weak => {
                    ds.iter().flatten().copied().collect()
                }
                Op::Atom { d: Some(d), .. } => vec![*d],
                _ => continue,
            };
            if let Some(inside) = loops
                .iter()
                .filter(|(head, back)| *head <= k && k <= *back)
                .max_by_key(|(head, _)| *head)
            {
                out[start + k] = decides_loop(body, &roots, *inside);
            }
        }
        // A loop the compiler rotated polls first before it: the same load of the same
        // address into the same registers, falling into the loop's test (CUB's look-back:
        // `ld.relaxed` of a tile's status, then the same load again inside the wait loop). When
        // the status is already there, only that first load runs.
        let strong_load = |ins: &Instr| match &ins.op {
            Op::Ld {
                ds,
                addr,
                strong,
                space,
                ..
            } if *strong != Strength::Weak => Some((ds.clone(), *addr, *space)),
            _ => None,
        };
        let polled: Vec<_> = body
            .iter()
            .zip(&out[start..end])
            .filter(|(_, polls)| **polls)
            .filter_map(|(ins, _)| strong_load(ins))
            .collect();
        for (ins, polls) in body.iter().zip(&mut out[start..end]) {
            *polls |= strong_load(ins).is_some_and(|load| polled.contains(&load));
        }
    }
    out
}

/// Whether a conditional branch in `body[head..=back]` tests a predicate derived from `roots`.
fn decides_loop(body: &[Instr], roots: &[u32], (head, back): (usize, usize)) -> bool {
    let mut tainted: Vec<u32> = roots.to_vec();
    loop {
        let before = tainted.len();
        for ins in body {
            let (dests, sources) = registers(&ins.op);
            let from_guard = ins.guard.is_some_and(|(p, _)| tainted.contains(&p));
            if from_guard || sources.iter().any(|r| tainted.contains(r)) {
                for d in dests {
                    if !tainted.contains(&d) {
                        tainted.push(d);
                    }
                }
            }
        }
        if tainted.len() == before {
            break;
        }
    }
    body[head..=back].iter().any(|ins| {
        matches!(ins.op, Op::Bra { .. }) && ins.guard.is_some_and(|(p, _)| tainted.contains(&p))
    })
}

/// The registers an instruction writes and reads (memory, parameters and calls aside).
fn registers(op: &Op) -> (Vec<u32>, Vec<u32>) {
    let mut reads = Vec::new();
    let mut read = |o: &Opnd| {
        if let Opnd::Reg(r) = o {
            reads.push(*r);
        }
    };
    let mut writes = Vec::new();
    match op {
        Op::Mov { d, a, .. }
        | Op::Un { d, a, .. }
        | Op::Cvt { d, a, .. }
        | Op::Cvta { d, a, .. }
        | Op::TestP { d, a, .. }
        | Op::Redux { d, a, .. } => {
            writes.push(*d);
            read(a);
        }
        Op::Unpack { ds, a, .. } => {
            writes.extend(ds.iter().flatten());
            read(a);
        }
        Op::Pack { d, parts, .. } => {
            writes.push(*d);
            parts.iter().for_each(read);
        }
        Op::Bin { d, a, b, .. } | Op::Set { d, a, b, .. } => {
            writes.push(*d);
            read(a);
            read(b);
        }
        Op::Mad { d, a, b, c, .. }
        | Op::Selp { d, a, b, c, .. }
        | Op::Slct { d, a, b, c, .. }
        | Op::Bfe { d, a, b, c, .. }
        | Op::Prmt { d, a, b, c, .. }
        | Op::Int3 { d, a, b, c, .. }
        | Op::Half2 { d, a, b, c, .. } => {
            writes.push(*d);
            read(a);
            read(b);
            read(c);
        }
        Op::Bfi { d, f, b, c, e, .. } => {
            writes.push(*d);
            read(f);
            read(b);
            read(c);
            read(e);
        }
        Op::Setp {
            d, d2, a, b, comb, ..
        } => {
            writes.push(*d);
            writes.extend(d2);
            read(a);
            read(b);
            if let Some((_, c, _)) = comb {
                read(c);
            }
        }
        Op::Shfl { d, dp, a, .. } => {
            writes.push(*d);
            writes.extend(dp);
            read(a);
        }
        Op::Vote { d, p, .. } => {
            writes.push(*d);
            read(p);
        }
        Op::Match { d, dp, a, .. } => {
            writes.push(*d);
            writes.extend(dp);
            read(a);
        }
        Op::Ld { ds, addr, .. } => {
            writes.extend(ds.iter().flatten());
            if let Addr::Reg { base, .. } = addr {
                read(base);
            }
        }
        Op::Atom { d, .. } => writes.extend(d),
        _ => {}
    }
    (writes, reads)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn polls(body: &str) -> Vec<bool> {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
        );
        // The module's own result: `analyze` ran on the code as written, before registers
        // that are never live at once came to share slots.
        let m = Module::parse(&ptx).unwrap();
        m.code
            .iter()
            .zip(m.polls.iter().copied())
            .filter(|(i, _)| matches!(i.op, Op::Ld { strong, .. } if strong != Strength::Weak))
            .map(|(_, p)| p)
            .collect()
    }

    #[test]
    fn a_spin_on_a_volatile_flag_polls() {
        let body =
            "$L1:\nld.volatile.global.u32 %r1, [%rd1];\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L1;";
        assert_eq!(polls(body), [true]);
    }

    #[test]
    fn a_loop_left_by_a_forward_branch_on_the_value_polls() {
        let body = "$L1:\nld.relaxed.gpu.global.u32 %r1, [%rd1];\nadd.s32 %r2, %r1, 1;\n\
                    setp.ne.s32 %p1, %r2, 1;\n@%p1 bra $L2;\nbra.uni $L1;\n$L2:";
        assert_eq!(polls(body), [true]);
    }

    #[test]
    fn a_vote_over_the_lanes_polls() {
        let body = "$L1:\nld.relaxed.gpu.global.u32 %r1, [%rd1];\nsetp.eq.s32 %p1, %r1, 0;\n\
                    vote.sync.any.pred %p2, %p1, -1;\n@%p2 bra $L1;";
        assert_eq!(polls(body), [true]);
    }

    /// CUB's look-back as nvcc 13 lays it out: the first load of a tile's status before the
    /// wait loop, the same load again inside it.
    #[test]
    fn the_first_poll_of_a_rotated_loop_polls() {
        let body = "ld.relaxed.gpu.global.v2.u32 {%r1, %r2}, [%rd1];
bra.uni $L2;
                    $L1:
ld.relaxed.gpu.global.v2.u32 {%r1, %r2}, [%rd1];
                    $L2:
setp.eq.s32 %p1, %r1, 99;
vote.sync.any.pred %p2, %p1, -1;
                    @%p2 bra $L1;
ld.relaxed.gpu.global.v2.u32 {%r3, %r2}, [%rd1];";
        assert_eq!(polls(body), [true, true, false]);
    }

    #[test]
    fn volatile_data_summed_in_a_counted_loop_does_not_poll() {
        let body = "mov.u32 %r3, 0;\n$L1:\nld.volatile.global.u32 %r1, [%rd1];\nadd.s32 %r2, %r2, %r1;\n\
                    add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p1, %r3, 8;\n@%p1 bra $L1;";
        assert_eq!(polls(body), [false]);
    }

    /// Which atomics of `body` poll, in order.
    fn atomic_polls(body: &str) -> Vec<bool> {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
        );
        let m = Module::parse(&ptx).unwrap();
        m.code
            .iter()
            .zip(m.polls.iter().copied())
            .filter(|(i, _)| matches!(i.op, Op::Atom { .. }))
            .map(|(_, p)| p)
            .collect()
    }

    #[test]
    fn a_locks_compare_and_swap_spin_polls() {
        let body = "$L1:\natom.global.cas.b32 %r1, [%rd1], 0, 1;\nsetp.ne.s32 %p1, %r1, 0;\n\
                    @%p1 bra $L1;";
        assert_eq!(atomic_polls(body), [true]);
    }

    #[test]
    fn an_atomic_whose_value_decides_no_loop_does_not_poll() {
        let body = "atom.global.exch.b32 %r1, [%rd1], 1;\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L2;\n\
                    $L2:\nmov.u32 %r3, 0;\n$L1:\natom.global.add.u32 %r2, [%rd1], 1;\n\
                    add.s32 %r3, %r3, 1;\nsetp.lt.s32 %p2, %r3, 8;\n@%p2 bra $L1;";
        assert_eq!(atomic_polls(body), [false, false]);
    }

    #[test]
    fn a_volatile_read_outside_any_loop_does_not_poll() {
        let body =
            "ld.volatile.global.u32 %r1, [%rd1];\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L2;\n$L2:";
        assert_eq!(polls(body), [false]);
    }
}
