//! How the detector reads and writes records in the shadow's chunks (see `shadow.rs`).

use super::access::{Acc, Cause, Hit, Kind, Rec, Who, rec_sm, rec_stamp};
use super::detector::{Race, This};
use super::shadow::{
    ANY_THREAD, CHUNK_WORDS, Chunk, PATTERNS, Pattern, R0, R1, Slot, W, element_index,
};
use crate::report::Hazard;

impl Race {
    pub(super) fn update(
        &self,
        chunk: &mut Chunk,
        i: usize,
        cur: Rec,
        mask: u8,
        this: &This,
    ) -> Option<Hit> {
        let (who, kind) = (this.who, this.kind);
        let old = self.cell(chunk, i);
        let prev = |r: Rec| self.decode(r);
        let conflicts = |p: &Acc| {
            if p.mask & mask == 0 {
                return None;
            }
            if p.strong && kind.strong() {
                self.strong_race_cause(p, this)
            } else {
                (!self.ordered(p, who)).then_some(Cause::Unordered)
            }
        };
        let mut hit = None;
        let mut new = old;
        if kind.writes() {
            for (s, hazard) in [
                (W, Hazard::WriteAfterWrite),
                (R0, Hazard::WriteAfterRead),
                (R1, Hazard::WriteAfterRead),
            ] {
                if let Some(p) = prev(old[s])
                    && let Some(cause) = conflicts(&p)
                    && !(s == W && self.same_value_stores(&p, this))
                {
                    hit = Some(Hit {
                        prev: p,
                        hazard,
                        cause,
                        gap: self.gap[who.rt as usize],
                        released_early: self.released_early(&p, who),
                    });
                    break;
                }
            }
            new[W] = cur;
            // The read half of an RMW: later plain writes must be ordered after it too.
            new[R0] = if kind == Kind::Rmw { cur } else { 0 };
            new[R1] = 0;
        } else {
            if let Some(p) = prev(old[W])
                && let Some(cause) = conflicts(&p)
            {
                hit = Some(Hit {
                    prev: p,
                    hazard: Hazard::ReadAfterWrite,
                    cause,
                    gap: self.gap[who.rt as usize],
                    released_early: self.released_early(&p, who),
                });
            }
            let replaceable = |r: Rec| self.replaceable(r, who);
            if !replaceable(old[R0]) && replaceable(old[R1]) {
                new[R1] = old[R0];
            }
            new[R0] = cur;
        }
        // Compared record by record: `new != old` on the arrays compiled to one 16-byte load of
        // `new` just after its 8-byte stores, which cannot be forwarded and stalled every access.
        let changed = (new[W] != old[W]) | (new[R0] != old[R0]) | (new[R1] != old[R1]);
        if changed {
            self.store(chunk, i, &old, &new);
        }
        hit
    }

    /// Two plain stores of the same bytes: the current one stores what the word holds, which is
    /// what the word's last write (`p`, whose bytes overlap) stored. Whichever lands last, the
    /// word holds that value, so compute-sanitizer's racecheck reports no hazard for such a pair
    /// (every thread setting `converged = 1`, threads of many blocks marking one node `true`).
    /// Reads beside either store, and stores of different values, still race.
    fn same_value_stores(&self, p: &Acc, this: &This) -> bool {
        this.kind == Kind::Write && this.sem.silent && !p.strong && !p.atomic
    }

    /// Whether a read's record `r` may give way to a read by `who`: none, `who`'s own, or ordered
    /// before it. One that may not stays, in the second read slot.
    #[inline(always)]
    pub(super) fn replaceable(&self, r: Rec, who: &Who) -> bool {
        match self.decode(r) {
            None => true,
            Some(p) => p.tid == who.tid || self.ordered(&p, who),
        }
    }

    /// The three records of word `i`.
    #[inline]
    pub(super) fn cell(&self, chunk: &Chunk, i: usize) -> [Rec; 3] {
        match chunk {
            Chunk::Empty => [0; 3],
            Chunk::Explicit(e) => e[i],
            Chunk::Compact(c) => std::array::from_fn(|s| self.slot_get(&c[s], i)),
        }
    }

    /// `G(e + phase)`: see [`Pattern`].
    #[inline(always)]
    pub(super) fn thread_offset(&self, e: u64, phase: u16) -> u64 {
        match self.bdx {
            None => e,
            Some(bdx) => {
                let x = e + phase as u64;
                (x / bdx) * self.tpb as u64 + x % bdx
            }
        }
    }

    #[inline(always)]
    pub(super) fn slot_get(&self, slot: &Slot, i: usize) -> Rec {
        let bit = 1u32 << i;
        if slot.has & bit == 0 {
            return 0;
        }
        let p = &slot.pats[slot.pattern_of(bit)];
        if p.phase == ANY_THREAD {
            let tid = slot.tids.as_ref().map_or(0, |t| t[i]);
            return ((tid as u64) << 32) | p.sm as u64;
        }
        let e = element_index(i, p.size_log2);
        let tid = (p.base as u64).wrapping_add(self.thread_offset(e, p.phase));
        (tid << 32) | p.sm as u64
    }

    pub(super) fn store(&self, chunk: &mut Chunk, i: usize, old: &[Rec; 3], new: &[Rec; 3]) {
        if let Chunk::Empty = chunk {
            *chunk = Chunk::Compact(Box::default());
        }
        if let Chunk::Compact(c) = chunk {
            let mut ok = true;
            for s in 0..3 {
                if old[s] != new[s] && !self.slot_set(&mut c[s], i, new[s]) {
                    ok = false;
                    break;
                }
            }
            if ok {
                return;
            }
            // Too irregular for patterns: one record per word from now on. The slots set
            // before the failure already hold the new records; write them all again.
            let mut e: Box<[[Rec; 3]; CHUNK_WORDS]> = Box::new([[0; 3]; CHUNK_WORDS]);
            for (k, cell) in e.iter_mut().enumerate() {
                *cell = std::array::from_fn(|s| self.slot_get(&c[s], k));
            }
            *chunk = Chunk::Explicit(e);
        }
        if let Chunk::Explicit(e) = chunk {
            e[i] = *new;
        }
    }

    /// The pattern that gives word `i` the record of thread `tid` with stamp and mask `sm`.
    #[inline(always)]
    pub(super) fn pattern_at(&self, i: usize, tid: u64, sm: u32, size_log2: u8) -> Pattern {
        let e = element_index(i, size_log2);
        // The phase that puts this thread's x index at element e (see `Pattern`).
        let phase = match self.bdx {
            None => 0,
            Some(bdx) => {
                let tx = (tid % self.tpb as u64) % bdx;
                ((tx + bdx - e % bdx) % bdx) as u16
            }
        };
        let base = tid.wrapping_sub(self.thread_offset(e, phase)) as u32;
        Pattern {
            base,
            sm,
            phase,
            size_log2,
        }
    }

    /// Sets word `i` of a slot to record `r`; false if that needs a fourth pattern.
    pub(super) fn slot_set(&self, slot: &mut Slot, i: usize, r: Rec) -> bool {
        let bit = 1u32 << i;
        if r == 0 {
            slot.has &= !bit;
            return true;
        }
        let sm = rec_sm(r);
        let stamp = self.stamps.get(rec_stamp(r) as usize);
        let tid = (stamp.map_or(0, |k| k.tid_hi as u64) << 32) | (r >> 32);
        let size_log2 = stamp.map_or(2, |k| k.size_log2);
        let want = self.pattern_at(i, tid, sm, size_log2);
        let k = if let Some(k) = slot.fitting(bit, &want) {
            k
        } else if let Some(k) = slot.unused(bit) {
            slot.pats[k] = want;
            k
        } else if let Some(k) = (0..PATTERNS).find(|&k| slot.pats[k].sm == sm) {
            // Same instruction, threads in no order (a scatter): that pattern lists its
            // words' threads from now on.
            let users = slot.users(k, bit);
            let p = slot.pats[k];
            let mut tids = slot
                .tids
                .take()
                .unwrap_or_else(|| Box::new([0; CHUNK_WORDS]));
            for (w, t) in tids.iter_mut().enumerate() {
                if users & (1 << w) != 0 {
                    let e = element_index(w, p.size_log2);
                    *t = (p.base as u64).wrapping_add(self.thread_offset(e, p.phase)) as u32;
                }
            }
            slot.tids = Some(tids);
            slot.pats[k].phase = ANY_THREAD;
            k
        } else {
            return false;
        };
        if slot.pats[k].phase == ANY_THREAD
            && let Some(tids) = slot.tids.as_mut()
        {
            tids[i] = tid as u32;
        }
        slot.has |= bit;
        slot.sel_lo = (slot.sel_lo & !bit) | if k & 1 != 0 { bit } else { 0 };
        slot.sel_hi = (slot.sel_hi & !bit) | if k & 2 != 0 { bit } else { 0 };
        true
    }
}
