//! A launch that never finishes: the watchdog that tells a stuck kernel from a slow one, and the
//! findings that say where the threads were (deadlock, step budget, warp syncs never met).

use super::ctx::rd_le;
use super::instr::{collective_name, same_collective};
use super::launch_state::Launch;
use crate::report::{Finding, FindingKind, ThreadGroup, WarpSyncProblem};

impl Launch<'_> {
    pub(crate) fn watchdog_says_stuck(&mut self) -> bool {
        let window = self.ctx.opts.watchdog_window;
        let wd = &mut self.watchdog;
        if window == 0 || self.ctx.thread_steps < wd.next_check {
            return wd.stuck;
        }
        wd.next_check = self.ctx.thread_steps.saturating_add(window);
        if self.ctx.progress != wd.progress_seen {
            wd.progress_seen = self.ctx.progress;
            wd.quiet_since = self.ctx.thread_instrs;
            wd.registers = None;
            return false;
        }
        let hash = self.register_hash();
        let wd = &mut self.watchdog;
        if wd.registers == Some(hash) {
            wd.stuck = true;
        }
        wd.registers = Some(hash);
        wd.stuck
    }

    /// The longest compiled region a warp may start in this round of the hardware schedule:
    /// every later step of it must come before the watchdog next looks at the registers, which
    /// it does after a round that reaches `next_check` thread-steps. A round adds at
    /// most 32 for each warp, and between rounds at most one block's warps join (a slot more
    /// of residency; refilled slots reuse their warps; growing residency by more needs a look
    /// first), so `k` rounds add at most `32 k (warps + k × warps per block)`.
    pub(crate) fn region_room(&self) -> u32 {
        /// Regions are never this long; the bound keeps the search short.
        const LONGEST: u64 = 1 << 16;
        if self.ctx.compiled.is_none() {
            return 0;
        }
        if self.ctx.opts.watchdog_window == 0 {
            return u32::MAX;
        }
        let (warps, wpb) = (self.warps.len() as u64, self.ctx.wpb as u64);
        let left = self
            .watchdog
            .next_check
            .saturating_sub(self.ctx.thread_steps);
        let fits = |k: u64| 32 * k * (warps + k * wpb) < left;
        if !fits(0) {
            return 1;
        }
        // The most rounds that surely end below the next look (`fits` is monotone).
        let (mut quiet, mut past) = (0u64, LONGEST);
        while past - quiet > 1 {
            let mid = (quiet + past) / 2;
            if fits(mid) {
                quiet = mid;
            } else {
                past = mid;
            }
        }
        (quiet + 1) as u32
    }

    /// A hash of what a thread that changes no memory can still change: its registers, call
    /// parameters and which lanes wait or live (not its PC, which cycles through a spin loop).
    pub(crate) fn register_hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut mix = |x: u64| h = (h ^ x).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
        let wpb = self.ctx.wpb as usize;
        let running = |wi: &usize| self.blocks[wi / wpb].live > 0;
        for w in (0..self.warps.len())
            .filter(running)
            .map(|wi| &self.warps[wi])
        {
            mix(((w.live as u64) << 32) | w.blocked as u64);
            w.regs.iter().flatten().for_each(|&r| mix(r));
            w.tparam.chunks(8).for_each(|c| mix(rd_le(c, 0, c.len())));
        }
        h
    }

    /// Lanes that wait in a warp-synchronous call for lanes of its mask that are elsewhere (at a
    /// barrier, in another kind of call or with another mask, or running on): synccheck's
    /// "never arrive" finding, reported when the launch can go no further.
    pub(crate) fn report_warp_sync_hangs(&mut self) {
        for wi in 0..self.warps.len() {
            let w = &self.warps[wi];
            let waiting = w.blocked & w.wsync_wait & w.live;
            let mut groups: Vec<(u32, u32, u32)> = Vec::new();
            lanes!(waiting, l, {
                let key = (w.lane_pc[l], w.wsync_mask[l]);
                match groups.iter_mut().find(|g| (g.0, g.1) == key) {
                    Some(g) => g.2 |= 1 << l,
                    None => groups.push((key.0, key.1, 1 << l)),
                }
            });
            for (pc, mask, lanes) in groups {
                let Some(op) = self.ctx.m.code.get(pc as usize).map(|i| &i.op) else {
                    continue;
                };
                let mut matching = 0u32;
                lanes!(waiting, l, {
                    let theirs = self.ctx.m.code.get(w.lane_pc[l] as usize);
                    if w.wsync_mask[l] == mask && theirs.is_some_and(|i| same_collective(&i.op, op))
                    {
                        matching |= 1 << l;
                    }
                });
                let missing = mask & w.live & !matching;
                if missing == 0 {
                    continue;
                }
                let name = collective_name(op);
                let mut threads = vec![ThreadGroup {
                    at: self.ctx.src(pc),
                    threads: lanes.count_ones() as u64,
                    example: self
                        .ctx
                        .thread_ref(self.ctx.gid(w, lanes.trailing_zeros() as usize)),
                    state: format!("wait in {name}({mask:#010x})"),
                }];
                let mut elsewhere: Vec<(u32, String, u32)> = Vec::new();
                lanes!(missing, l, {
                    let bit = 1u32 << l;
                    let (at, state) = if w.blocked & bit == 0 {
                        (w.lane_pc[l], "are running elsewhere".to_string())
                    } else if w.wsync_wait & bit == 0 {
                        (
                            w.lane_pc[l].saturating_sub(1),
                            match w.bar_id[l] {
                                0 => "wait at a __syncthreads()".to_string(),
                                id => format!("wait at named barrier {id} (bar.sync {id})"),
                            },
                        )
                    } else {
                        let theirs = self.ctx.m.code.get(w.lane_pc[l] as usize);
                        let other =
                            theirs.map_or("a warp-synchronous call", |i| collective_name(&i.op));
                        (
                            w.lane_pc[l],
                            format!("wait in {other}({:#010x})", w.wsync_mask[l]),
                        )
                    };
                    match elsewhere.iter_mut().find(|e| e.0 == at && e.1 == state) {
                        Some(e) => e.2 |= bit,
                        None => elsewhere.push((at, state, bit)),
                    }
                });
                for (at, state, lanes) in elsewhere {
                    threads.push(ThreadGroup {
                        at: self.ctx.src(at),
                        threads: lanes.count_ones() as u64,
                        example: self
                            .ctx
                            .thread_ref(self.ctx.gid(w, lanes.trailing_zeros() as usize)),
                        state: format!("named in the mask {state}"),
                    });
                }
                let kind = FindingKind::WarpSync {
                    problem: WarpSyncProblem::NeverArrive,
                };
                let key = (kind, self.ctx.line_of(pc), 0, 0);
                self.ctx.findings.add(key, || Finding {
                    kind,
                    count: 1,
                    location: None,
                    accesses: vec![],
                    threads,
                    why: format!(
                        "every lane named in the mask that has not exited must reach a {name}() with the same mask; these never do, so the warp hangs (CUDA leaves this undefined)"
                    ),
                });
            }
        }
    }

    pub(crate) fn report_stuck(&mut self, kind: FindingKind) {
        // Group live threads by where they are and what they wait for.
        let mut groups: Vec<(u32, String, u64, u64)> = Vec::new();
        let mut total = 0u64;
        // Resident blocks in block order, so each group's example is its lowest thread.
        let wpb = self.ctx.wpb as usize;
        let mut slots: Vec<usize> = (0..self.blocks.len())
            .filter(|&s| self.blocks[s].live > 0)
            .collect();
        slots.sort_by_key(|&s| self.warps[s * wpb].block);
        for wi in slots
            .iter()
            .flat_map(|&s| s * wpb..(s + 1) * wpb)
            .collect::<Vec<_>>()
        {
            let w = &mut self.warps[wi];
            w.flush();
            lanes!(w.live, l, {
                let (pc, state) = if w.blocked & (1 << l) != 0 {
                    if w.wsync_wait & (1 << l) != 0 {
                        (
                            w.lane_pc[l],
                            "waiting in a warp-synchronous instruction".to_string(),
                        )
                    } else {
                        (
                            w.lane_pc[l].saturating_sub(1),
                            format!("waiting at barrier {}", w.bar_id[l]),
                        )
                    }
                } else {
                    (w.lane_pc[l], "running".to_string())
                };
                total += 1;
                let gid = w.block * self.ctx.tpb as u64 + (w.first + l as u32) as u64;
                match groups.iter_mut().find(|g| g.0 == pc && g.1 == state) {
                    Some(g) => g.2 += 1,
                    None => groups.push((pc, state, 1, gid)),
                }
            });
        }
        if self.started < self.nblocks {
            let waiting = (self.nblocks - self.started) * self.ctx.tpb as u64;
            total += waiting;
            groups.push((
                self.entry_pc,
                "not started: waits for a resident block to finish".to_string(),
                waiting,
                self.started * self.ctx.tpb as u64,
            ));
        }
        groups.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        groups.truncate(8);
        let threads: Vec<ThreadGroup> = groups
            .iter()
            .map(|g| ThreadGroup {
                at: self.ctx.src(g.0),
                threads: g.2,
                example: self.ctx.thread_ref(g.3),
                state: g.1.clone(),
            })
            .collect();
        let (counted, wait, they) = if total == 1 {
            ("1 thread".to_string(), "waits", "it waits")
        } else {
            (format!("{total} threads"), "wait", "they wait")
        };
        let why = match kind {
            FindingKind::StepBudgetExhausted => format!(
                "stopped by the step budget after {} thread-instructions with {counted} still running; a thread that waits for something that never happens (a flag, a lock) spins forever, and so does a loop whose exit never comes; a kernel that only runs longer than that (a benchmark's long loop) needs a larger budget (--step-budget, or step_budget= from Python)",
                self.ctx.thread_instrs,
            ),
            FindingKind::Stuck => format!(
                "for the last {} thread-instructions no thread changed memory, completed a barrier or exited, and no thread's registers changed: {counted} {wait} for something that never happens (a flag nobody sets, a lock nobody releases)",
                self.ctx.thread_instrs - self.watchdog.quiet_since
            ),
            _ => format!(
                "{counted} {wait} at barriers that can never complete: the threads {they} for exited or wait elsewhere"
            ),
        };
        let key = (kind, threads.first().map(|t| t.at.line).unwrap_or(0), 0, 0);
        let new = self.ctx.findings.add(key, || Finding {
            kind,
            count: 1,
            location: None,
            accesses: vec![],
            threads,
            why,
        });
        if let (Some(index), Some(t)) = (new, self.ctx.trace.as_deref_mut()) {
            t.finding(index, vec![]);
        }
    }
}
