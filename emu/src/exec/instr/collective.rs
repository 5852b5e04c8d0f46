//! Block barriers (`bar.sync`, `bar.arrive`, `bar.red`) and warp-synchronous collectives
//! (`bar.warp.sync`, `shfl`, `vote`, `match`, `redux`), with synccheck's mask checks.

use crate::alu;
use crate::exec::ctx::Ctx;
use crate::exec::warp::{BlockState, Warp, recompute_exec};
use crate::ir::*;
use crate::report::{Finding, FindingKind, ThreadGroup, WarpSyncProblem};

/// Runs one barrier or warp collective.
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
        Op::Bar {
            kind,
            id,
            count,
            p,
            d,
        } => {
            if exec == 0 {
                w.advance();
                return None;
            }
            let first = exec.trailing_zeros() as usize;
            let id = (ctx.get_ref(w, id, first) & 15) as u8;
            let cnt = count.map(|c| ctx.get(w, c, first) as u32);
            let blk = block;
            let bar = &mut blk.bars[id as usize];
            let n = exec.count_ones();
            bar.arrived += n;
            lanes!(exec, l, {
                w.barrier_skip[l] = 0;
            });
            if cnt.is_some() {
                bar.expected = cnt;
            }
            bar.red_dest |= d.is_some();
            let gid = ctx.gid(w, first);
            match bar.sites.iter_mut().find(|s| s.0 == pc) {
                Some(s) => s.1 += n,
                None => bar.sites.push((pc, n, gid)),
            }
            if let Some((pv, neg)) = p {
                lanes!(exec, l, {
                    if (ctx.get_ref(w, pv, l) & 1 != 0) != *neg {
                        bar.red += 1;
                    }
                });
            }
            w.flush();
            lanes!(active, l, {
                w.lane_pc[l] = pc + 1;
            });
            if *kind != BarKind::Arrive {
                lanes!(exec, l, {
                    w.bar_id[l] = id;
                });
                w.blocked |= exec;
                if let Some(t) = ctx.trace.as_deref_mut() {
                    t.barrier_arrival(id);
                }
            }
            w.active = 0;
            w.regroup();
            Some(w.slot)
        }
        Op::BarWarp { mask }
        | Op::Shfl { mask, .. }
        | Op::Vote { mask, .. }
        | Op::Match { mask, .. }
        | Op::Redux { mask, .. } => {
            let (mk, lane_masks) = ctx.warp_masks(w, *mask, pc, &ins.op);
            let members = collective_ready(ctx, w, pc, mk, &lane_masks, &ins.op)?;
            // Lanes of `members` may wait at other instructions of the same kind (sm_70 and later
            // let different `__syncwarp()`s, or shuffles with the same mode and mask, meet):
            // each runs its own instruction's operands.
            let mut lane_at = [pc; 32];
            lanes!(members & !active, l, {
                lane_at[l] = w.lane_pc[l];
            });
            let op_of =
                |l: usize| -> &Op { m.code.get(lane_at[l] as usize).map_or(&ins.op, |i| &i.op) };
            match &ins.op {
                Op::Shfl { .. } => {
                    let mut src = [0u64; 32];
                    lanes!(w.live, l, {
                        let own = if members & (1 << l) != 0 {
                            op_of(l)
                        } else {
                            &ins.op
                        };
                        if let Op::Shfl { a, .. } = own {
                            src[l] = ctx.get_ref(w, a, l);
                        }
                    });
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    lanes!(exec, l, {
                        if let Op::Shfl {
                            mode, d, dp, b, c, ..
                        } = op_of(l)
                        {
                            let (j, ok) =
                                shfl_source(*mode, l, ctx.get_ref(w, b, l), ctx.get_ref(w, c, l));
                            w.regs[*d as usize][l] = alu::mask(src[j], 32);
                            if let Some(dp) = dp {
                                w.regs[*dp as usize][l] = ok as u64;
                            }
                        }
                    });
                }
                Op::Vote { .. } => {
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    let mut ballot = 0u32;
                    lanes!(exec, l, {
                        if let Op::Vote { p, neg, .. } = op_of(l)
                            && (ctx.get_ref(w, p, l) & 1 != 0) != *neg
                        {
                            ballot |= 1 << l;
                        }
                    });
                    lanes!(exec, l, {
                        if let Op::Vote { mode, d, .. } = op_of(l) {
                            let v = match mode {
                                VoteMode::All => (ballot == exec) as u64,
                                VoteMode::Any => (ballot != 0) as u64,
                                VoteMode::Uni => (ballot == 0 || ballot == exec) as u64,
                                VoteMode::Ballot => ballot as u64,
                            };
                            w.regs[*d as usize][l] = v;
                        }
                    });
                }
                Op::Match { .. } => {
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    let mut values = [0u64; 32];
                    lanes!(exec, l, {
                        if let Op::Match { a, ty, .. } = op_of(l) {
                            values[l] = alu::mask(ctx.get_ref(w, a, l), ty.bits());
                        }
                    });
                    let same_as = |lane: usize| {
                        let mut same = 0u32;
                        lanes!(exec, k, {
                            if values[k] == values[lane] {
                                same |= 1 << k;
                            }
                        });
                        same
                    };
                    let uniform = exec == 0 || same_as(exec.trailing_zeros() as usize) == exec;
                    lanes!(exec, l, {
                        if let Op::Match { all, d, dp, .. } = op_of(l) {
                            w.regs[*d as usize][l] = if !*all {
                                u64::from(same_as(l))
                            } else if uniform {
                                u64::from(exec)
                            } else {
                                0
                            };
                            if let Some(dp) = dp {
                                w.regs[*dp as usize][l] = u64::from(uniform);
                            }
                        }
                    });
                }
                Op::Redux { .. } => {
                    let exec = (recompute_exec(w, ins.guard) & active) | (members & !active);
                    let signed = matches!(&ins.op, Op::Redux { ty: Ty::S32, .. });
                    let mut values = [0u32; 32];
                    lanes!(exec, l, {
                        if let Op::Redux { a, .. } = op_of(l) {
                            values[l] = ctx.get_ref(w, a, l) as u32;
                        }
                    });
                    // Each lane reduces over the lanes of its own member mask: two tiles of a
                    // warp (`tiled_partition<16>`) reduce apart in one instruction.
                    lanes!(exec, l, {
                        if let Op::Redux { op, d, .. } = op_of(l) {
                            let group = lane_masks[l] & exec;
                            let mut result: Option<u32> = None;
                            for j in (0..32).filter(|j| group & (1 << j) != 0) {
                                let v = values[j];
                                result = Some(match result {
                                    None => v,
                                    Some(r) => match op {
                                        ReduxOp::Add => r.wrapping_add(v),
                                        ReduxOp::Min if signed => (r as i32).min(v as i32) as u32,
                                        ReduxOp::Max if signed => (r as i32).max(v as i32) as u32,
                                        ReduxOp::Min => r.min(v),
                                        ReduxOp::Max => r.max(v),
                                        ReduxOp::And => r & v,
                                        ReduxOp::Or => r | v,
                                        ReduxOp::Xor => r ^ v,
                                    },
                                });
                            }
                            w.regs[*d as usize][l] = u64::from(result.unwrap_or(0));
                        }
                    });
                }
                _ => {}
            }
            if ctx.race.is_some() {
                // Lanes with disjoint masks met as separate groups (two tiles of one warp): each
                // group orders only its own lanes.
                let mut left = members;
                while left != 0 {
                    let first = left.trailing_zeros() as usize;
                    // A lane outside its own mask (reported above) is undefined behaviour: it
                    // meets with every waiting lane, as before the groups were told apart.
                    let own = lane_masks[first] & (1 << first) != 0;
                    let group = if matches!(ins.op, Op::BarWarp { .. }) && own {
                        members & lane_masks[first]
                    } else {
                        left
                    };
                    left &= !group;
                    let mut threads = Vec::new();
                    lanes!(group, l, {
                        threads.push(ctx.who(w, l));
                    });
                    if let Some(r) = ctx.race.as_mut() {
                        if matches!(ins.op, Op::BarWarp { .. }) {
                            r.warp_sync(w.gw, threads, group & w.live == w.live);
                        } else {
                            r.share_acquired(threads);
                        }
                    }
                }
            }
            if members & !active == 0 {
                w.advance();
                return None;
            }
            w.flush();
            lanes!(members, l, {
                w.lane_pc[l] = lane_at[l] + 1;
            });
            w.active = 0;
            w.regroup();
            None
        }
        _ => unreachable!("instr::exec sends only collective instructions here"),
    }
}

/// synccheck for warp-synchronous calls.
impl Ctx<'_> {
    /// The masks the active lanes pass to a warp-synchronous call: reports lanes outside their
    /// own mask and lanes whose masks overlap without being equal, and returns the lanes to wait
    /// for (the union of the masks and the callers themselves, since hardware leaves anything
    /// else undefined) with each lane's own mask. Disjoint masks are independent groups, as
    /// two `thread_block_tile<16>`s of one warp each syncing their own half.
    pub(crate) fn warp_masks(
        &mut self,
        w: &Warp,
        mask: Opnd,
        pc: u32,
        op: &Op,
    ) -> (u32, [u32; 32]) {
        let mut union = 0u32;
        let mut outside = 0u32;
        let mut lane_masks = [0u32; 32];
        lanes!(w.active, l, {
            let mk = self.get(w, mask, l) as u32;
            lane_masks[l] = mk;
            union |= mk;
            if mk & (1 << l) == 0 {
                outside |= 1 << l;
            }
        });
        if self.opts.synccheck && outside != 0 {
            let name = collective_name(op);
            let lane = outside.trailing_zeros() as usize;
            let mk = lane_masks[lane];
            let group = ThreadGroup {
                at: self.src(pc),
                threads: outside.count_ones() as u64,
                example: self.thread_ref(self.gid(w, lane)),
                state: format!("called {name}({mk:#010x}) without their own lane in it"),
            };
            let kind = FindingKind::WarpSync {
                problem: WarpSyncProblem::LaneNotInMask,
            };
            self.findings.add((kind, self.line_of(pc), 0, 0), || Finding {
                kind,
                count: 1,
                location: None,
                accesses: vec![],
                threads: vec![group],
                why: format!(
                    "a lane that calls {name} must have its own bit set in the mask; CUDA leaves anything else undefined"
                ),
            });
        }
        let mut groups: Vec<(u32, u32, u32)> = Vec::new();
        lanes!(w.active, l, {
            let mk = lane_masks[l];
            match groups.iter_mut().find(|g| g.1 == mk) {
                Some(g) => g.2 |= 1 << l,
                None => groups.push((pc, mk, 1 << l)),
            }
        });
        let overlap = groups
            .iter()
            .enumerate()
            .any(|(i, a)| groups[i + 1..].iter().any(|b| masks_conflict(a.1, b.1)));
        if self.opts.synccheck && overlap {
            self.report_mask_groups(w, pc, op, &groups);
        }
        (union | w.active, lane_masks)
    }

    /// Lanes `lanes` call at `pc` with `mask` and meet `others`, which waited with another mask.
    pub(crate) fn report_mask_mismatch(
        &mut self,
        w: &Warp,
        pc: u32,
        lanes: u32,
        mask: u32,
        others: u32,
    ) {
        let Some(op) = self.m.code.get(pc as usize).map(|i| &i.op) else {
            return;
        };
        let mut groups = vec![(pc, mask, lanes)];
        lanes!(others, l, {
            let (at, mk) = (w.lane_pc[l], w.wsync_mask[l]);
            match groups.iter_mut().find(|g| g.0 == at && g.1 == mk) {
                Some(g) => g.2 |= 1 << l,
                None => groups.push((at, mk, 1 << l)),
            }
        });
        self.report_mask_groups(w, pc, op, &groups);
    }

    /// One `MaskMismatch` finding: each group is (pc, mask, lanes).
    pub(crate) fn report_mask_groups(
        &mut self,
        w: &Warp,
        pc: u32,
        op: &Op,
        groups: &[(u32, u32, u32)],
    ) {
        if !self.opts.synccheck {
            return;
        }
        let name = collective_name(op);
        let threads: Vec<ThreadGroup> = groups
            .iter()
            .map(|&(at, mk, lanes)| ThreadGroup {
                at: self.src(at),
                threads: lanes.count_ones() as u64,
                example: self.thread_ref(self.gid(w, lanes.trailing_zeros() as usize)),
                state: format!("called {name}({mk:#010x})"),
            })
            .collect();
        let kind = FindingKind::WarpSync {
            problem: WarpSyncProblem::MaskMismatch,
        };
        self.findings.add((kind, self.line_of(pc), 0, 0), || Finding {
            kind,
            count: 1,
            location: None,
            accesses: vec![],
            threads,
            why: format!(
                "lanes that meet in {name} must all pass the same mask; CUDA leaves different masks undefined"
            ),
        });
    }
}

/// Which lane a shuffle reads for lane `l` (`b` the lane, offset or xor mask, `c` the clamp and
/// segment mask), and whether it is in range (else the lane reads its own value).
pub(crate) fn shfl_source(mode: ShflMode, l: usize, b: u64, c: u64) -> (usize, bool) {
    let bv = (b & 31) as i64;
    let clamp = (c & 31) as i64;
    let seg = ((c >> 8) & 31) as i64;
    let lane = l as i64;
    let max_lane = (lane & seg) | (clamp & !seg);
    let min_lane = lane & seg;
    let (j, ok) = match mode {
        ShflMode::Up => (lane - bv, lane - bv >= max_lane),
        ShflMode::Down => (lane + bv, lane + bv <= max_lane),
        ShflMode::Bfly => (lane ^ bv, (lane ^ bv) <= max_lane),
        ShflMode::Idx => (min_lane | (bv & !seg), (min_lane | (bv & !seg)) <= max_lane),
    };
    (if ok { (j & 31) as usize } else { l }, ok)
}

/// Two warp-synchronous instructions that meet each other: the same kind and mode.
pub(crate) fn same_collective(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::BarWarp { .. }, Op::BarWarp { .. }) => true,
        (Op::Shfl { mode: x, .. }, Op::Shfl { mode: y, .. }) => x == y,
        (Op::Vote { mode: x, .. }, Op::Vote { mode: y, .. }) => x == y,
        (Op::Match { all: x, ty: s, .. }, Op::Match { all: y, ty: t, .. }) => x == y && s == t,
        (Op::Redux { op: x, ty: s, .. }, Op::Redux { op: y, ty: t, .. }) => x == y && s == t,
        _ => false,
    }
}

/// Warp-synchronous instructions wait until every live lane of `mask` is at a matching
/// instruction; then they run together and this returns the lanes that take part (the active
/// group plus the lanes that waited). Otherwise the active lanes wait, remembering their mask.
pub(crate) fn collective_ready(
    ctx: &mut Ctx,
    w: &mut Warp,
    pc: u32,
    mask: u32,
    lane_masks: &[u32; 32],
    op: &Op,
) -> Option<u32> {
    let need = mask & w.live;
    let mut here = 0u32;
    let mut other_mask = 0u32;
    lanes!(w.blocked & w.wsync_wait & need, l, {
        let waits_at = ctx.m.code.get(w.lane_pc[l] as usize);
        if waits_at.is_some_and(|i| same_collective(&i.op, op)) {
            here |= 1 << l;
            let waited_with = w.wsync_mask[l];
            let mut conflict = false;
            lanes!(w.active, a, {
                conflict |= masks_conflict(lane_masks[a], waited_with);
            });
            if conflict {
                other_mask |= 1 << l;
            }
        }
    });
    if need & !(w.active | here) == 0 {
        if other_mask != 0 {
            let first = w.active.trailing_zeros() as usize;
            let own = lane_masks.get(first).copied().unwrap_or(mask);
            ctx.report_mask_mismatch(w, pc, w.active, own, other_mask);
        }
        w.blocked &= !here;
        w.wsync_wait &= !here;
        return Some(w.active | here);
    }
    w.flush();
    lanes!(w.active, l, {
        w.wsync_mask[l] = lane_masks[l];
    });
    w.blocked |= w.active;
    w.wsync_wait |= w.active;
    w.active = 0;
    w.regroup();
    None
}

/// Two lanes' masks for one warp-synchronous call disagree: they differ and share a lane.
/// Disjoint masks name separate groups, which need not agree.
pub(crate) fn masks_conflict(a: u32, b: u32) -> bool {
    a != b && a & b != 0
}

/// The CUDA name of a warp-synchronous instruction, for reports.
pub(crate) fn collective_name(op: &Op) -> &'static str {
    match op {
        Op::BarWarp { .. } => "__syncwarp",
        Op::Shfl { mode, .. } => match mode {
            ShflMode::Idx => "__shfl_sync",
            ShflMode::Up => "__shfl_up_sync",
            ShflMode::Down => "__shfl_down_sync",
            ShflMode::Bfly => "__shfl_xor_sync",
        },
        Op::Vote { mode, .. } => match mode {
            VoteMode::All => "__all_sync",
            VoteMode::Any => "__any_sync",
            VoteMode::Uni => "__uni_sync",
            VoteMode::Ballot => "__ballot_sync",
        },
        Op::Match { all: false, .. } => "__match_any_sync",
        Op::Match { all: true, .. } => "__match_all_sync",
        Op::Redux { op, .. } => match op {
            ReduxOp::Add => "__reduce_add_sync",
            ReduxOp::Min => "__reduce_min_sync",
            ReduxOp::Max => "__reduce_max_sync",
            ReduxOp::And => "__reduce_and_sync",
            ReduxOp::Or => "__reduce_or_sync",
            ReduxOp::Xor => "__reduce_xor_sync",
        },
        _ => "a warp-synchronous call",
    }
}
