//! One resident block's turn: a warp's instruction, then the block's barriers that every live
//! thread reached. Only the block's warps, barrier state and memory are touched, and global
//! memory, so different blocks can take their turns on different cores (`parallel.rs`).

use super::*;

/// Runs one instruction of the block's warp `wi` (for its active lanes). `warps` are the
/// block's.
pub(crate) fn step(ctx: &mut Ctx, warps: &mut [Warp], state: &mut BlockState, wi: usize) -> Step {
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
    if w.lanes.is_some()
        && let Some(ins) = ctx.m.code.get(w.pc as usize)
    {
        w.interleave(&ins.op);
    }
    if exec(ctx, state, w).is_some() {
        check_barriers(ctx, warps, state);
    }
    Step::Ran
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
    if let Some(r) = ctx.race.as_mut() {
        r.barrier(slot, (slot * wpb)..((slot + 1) * wpb));
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
        threads.push(ThreadGroup {
            at: ctx.src(pc),
            threads: state.exited as u64,
            example: ctx.thread_ref(gid),
            state: "exited without arriving (first exit)".into(),
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
