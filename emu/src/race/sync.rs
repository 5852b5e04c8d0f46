//! What orders accesses: sparse vector clocks, fences, release and acquire through strong
//! accesses and atomics, block barriers and warp syncs.

use super::access::{Acquire, BLOCK_KEY, DEVICE, Gap, Kind, Region, Who};
use super::calls::calls_out_of_order;
use super::clock::Vc;
use super::detector::Race;
use crate::ir::Scope;

impl Race {
    /// A fence of `scope` at `pc`: accesses before it are released by the thread's next strong
    /// write (only towards its own block when the fence is `.cta`), and what the thread's strong
    /// reads before it saw released is acquired (within the fence's scope).
    pub(crate) fn fence(&mut self, rt: u32, scope: Scope, pc: u32) {
        let t = rt as usize;
        self.clocks_change(t);
        let seen = std::mem::take(&mut self.seen[t]);
        self.tvc[t].join(&seen);
        if scope.covers_other_blocks() {
            let seen = std::mem::take(&mut self.seen_gpu[t]);
            if !seen.is_empty() {
                self.gap[t] = None;
            }
            self.tvc[t].join(&seen);
        } else {
            if !self.seen_gpu[t].is_empty() {
                self.gap[t] = Some(Gap {
                    pc,
                    scope,
                    awaits_fence: false,
                });
            }
            self.cta_fence[t] = pc;
        }
        self.mark_releasable(rt, scope);
    }

    /// The thread's accesses so far are released by its next strong write, within `scope`.
    pub(super) fn mark_releasable(&mut self, rt: u32, scope: Scope) {
        let e = self.epoch[rt as usize];
        self.pending[rt as usize] = e;
        if scope.covers_other_blocks() {
            self.pending_gpu[rt as usize] = e;
        }
        self.epoch[rt as usize] = e + 1;
    }

    /// Synchronization effect of a strong access of `scope` at `pc` (after its race check).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sync_op(
        &mut self,
        region: Region,
        word: u64,
        who: &Who,
        kind: Kind,
        acquire: Acquire,
        release_sem: bool,
        scope: Scope,
        pc: u32,
    ) {
        let k = region.sync_key();
        let t = who.rt as usize;
        let block = who.tid / self.tpb as u64;
        let wide = scope.covers_other_blocks();
        let global = matches!(region, Region::Global { .. });
        if acquire != Acquire::Never {
            self.clocks_change(t);
            let into = |race: &mut Race, owner: u64| {
                let Some(v) = race.sync.get(&(k, word, owner)) else {
                    return;
                };
                match acquire {
                    Acquire::Now => race.tvc[t].join(v),
                    Acquire::AtNextFence if owner == DEVICE => race.seen_gpu[t].join(v),
                    _ => race.seen[t].join(v),
                }
            };
            into(self, block);
            if wide {
                // A device-wide acquire that took something in: an earlier narrow hand-off is no
                // longer what a later race of this thread is about.
                if acquire == Acquire::Now && self.sync.contains_key(&(k, word, DEVICE)) {
                    self.gap[t] = None;
                }
                into(self, DEVICE);
            } else if global && self.sync.contains_key(&(k, word, DEVICE)) {
                self.gap[t] = Some(Gap {
                    pc,
                    scope,
                    awaits_fence: false,
                });
            }
            if acquire == Acquire::AtNextFence
                && (!self.seen[t].is_empty() || !self.seen_gpu[t].is_empty())
            {
                self.gap[t] = Some(Gap {
                    pc,
                    scope,
                    awaits_fence: true,
                });
            }
            if global
                && let Some(&(releaser, release_pc)) = self.cta_release.get(&(k, word))
                && releaser != block
            {
                self.gap[t] = Some(Gap {
                    pc: release_pc,
                    scope: Scope::Cta,
                    awaits_fence: false,
                });
            }
        }
        if !kind.writes() {
            return;
        }
        if release_sem {
            self.mark_releasable(who.rt, scope);
        }
        let pend = self.pending[t];
        if pend == 0 {
            return;
        }
        let slot = who.slot as usize;
        let mut v = self.tvc[t].clone();
        v.join(&self.bvc[slot]);
        v.set_max(BLOCK_KEY | block, self.bar_epoch[slot]);
        let pend_gpu = self.pending_gpu[t];
        if wide && pend_gpu != 0 {
            let mut device = v.clone();
            device.set_max(who.tid, pend_gpu);
            self.release_into((k, word, DEVICE), region, &device);
        }
        if global && (!wide || pend_gpu != pend) {
            // The narrow part: this operation's own scope, or the `.cta` fence before it.
            let narrow = if wide { self.cta_fence[t] } else { pc };
            self.cta_release.insert((k, word), (block, narrow));
        }
        v.set_max(who.tid, pend);
        self.release_into((k, word, block), region, &v);
        self.any_release = true;
    }

    pub(super) fn release_into(&mut self, key: (u64, u64, u64), region: Region, v: &Vc) {
        let entry = self.sync.entry(key).or_insert_with(|| {
            if let Region::Shared { .. } = region {
                self.shared_sync += 1;
            }
            Vc::default()
        });
        entry.join(v);
    }

    /// Checks that the block in `slot` completed barrier `serial` right after the last one the
    /// detector heard of: the interpreter's calls reach a piped detector in one core's order,
    /// or the detector judges the block by a history it never had. Never seen to fail.
    pub(crate) fn barrier_in_order(&self, slot: u32, serial: u32) {
        let last = self.bar_epoch.get(slot as usize).copied().unwrap_or(0);
        if last + 1 != serial {
            let block = self.slot_block.get(slot as usize).copied().unwrap_or(0);
            calls_out_of_order(&format!(
                "block {block} (slot {slot}) barrier {serial} reached the race detector after its barrier {last}"
            ));
        }
    }

    /// A barrier of the block in `slot` completed: everything before it is ordered before
    /// everything after.
    pub(crate) fn barrier(&mut self, slot: u32, warps: std::ops::Range<u32>) {
        let s = slot as usize;
        let tpb = self.tpb as usize;
        if std::mem::take(&mut self.clocked[s]) {
            let mut joined = std::mem::take(&mut self.bvc[s]);
            for t in s * tpb..((s + 1) * tpb).min(self.tvc.len()) {
                if !self.tvc[t].is_empty() {
                    let v = std::mem::take(&mut self.tvc[t]);
                    joined.join(&v);
                }
            }
            self.bvc[s] = joined;
        }
        self.bar_epoch[s] += 1;
        for w in warps {
            if let Some(x) = self.wsync.get_mut(w as usize) {
                *x += 1;
            }
        }
    }

    /// A shuffle or vote that `threads` met in: no memory ordering among them (CUDA promises
    /// none), but what one of them acquired the others learn with the value it hands them, as
    /// when a warp master's acquire is broadcast by `__shfl_sync` (cooperative groups do so).
    pub(crate) fn share_acquired(&mut self, threads: &[Who]) {
        if !self.any_release {
            return;
        }
        // After one shuffle the lanes' clocks are alike, and each later one of a warp's scan
        // (a look-back's clocks hold thousands of entries) would rebuild the same clock 64
        // times: joined with itself, a clock is unchanged.
        let mut clocks = threads.iter().map(|who| self.tvc.get(who.rt as usize));
        if let Some(Some(first)) = clocks.next()
            && !first.is_empty()
            && clocks.all(|clock| clock.is_some_and(|c| c == first))
        {
            for who in threads {
                self.clocks_change(who.rt as usize);
            }
            return;
        }
        let mut joined = Vc::default();
        for who in threads {
            if let Some(clock) = self.tvc.get(who.rt as usize) {
                joined.join(clock);
            }
        }
        if joined.is_empty() {
            return;
        }
        for who in threads {
            self.clocks_change(who.rt as usize);
            if let Some(clock) = self.tvc.get_mut(who.rt as usize) {
                clock.join(&joined);
            }
        }
    }

    /// A `__syncwarp` that `threads` met in: their accesses before it are ordered before each
    /// one's accesses after it, and what any of them had acquired (a warp master spinning on a
    /// flag for the warp, as cooperative groups' multi-warp barriers do) the others now know.
    /// When `whole_warp` (every live lane met) the warp's sync epoch orders everything; a partial
    /// mask (one `thread_block_tile<16>` of two) orders only its own lanes, through their clocks.
    pub(crate) fn warp_sync(&mut self, warp: u32, threads: &[Who], whole_warp: bool) {
        if whole_warp {
            if let Some(x) = self.wsync.get_mut(warp as usize) {
                *x += 1;
            }
            if !self.any_release {
                return;
            }
        } else {
            self.any_release = true;
        }
        let mut joined = Vc::default();
        for who in threads {
            if let Some(clock) = self.tvc.get(who.rt as usize) {
                joined.join(clock);
            }
            if let Some(&epoch) = self.epoch.get(who.rt as usize) {
                joined.set_max(who.tid, epoch);
            }
        }
        for who in threads {
            self.clocks_change(who.rt as usize);
            if let Some(epoch) = self.epoch.get_mut(who.rt as usize) {
                *epoch += 1;
            }
            if let Some(clock) = self.tvc.get_mut(who.rt as usize) {
                clock.join(&joined);
            }
        }
    }
}
