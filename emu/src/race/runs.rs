//! A warp's coalesced plain accesses taken together. Lanes that read or write consecutive words
//! of one chunk share a stamp, and when none of them conflicts they move to one pattern at once,
//! leaving the shadow exactly as recording them one by one would.

use super::access::{Hit, Kind, Rec, STAMP_MASK, StampKey, Who, rec, rec_sm};
use super::calls::AccessCall;
use super::detector::{Race, This};
use super::shadow::{ANY_THREAD, CHUNK_WORDS, Chunk, PATTERNS, Pattern, R0, R1, Slot, W};

impl Slot {
    const EMPTY: Slot = Slot {
        pats: [Pattern {
            base: 0,
            sm: 0,
            phase: 0,
            size_log2: 0,
        }; PATTERNS],
        has: 0,
        sel_lo: 0,
        sel_hi: 0,
        tids: None,
    };
}

/// The slots of a chunk no access has reached.
const UNTOUCHED: [Slot; 3] = [Slot::EMPTY, Slot::EMPTY, Slot::EMPTY];

impl Race {
    /// Records `len` accesses like `first`, lane `j` being thread `first.who.tid + j` (resident
    /// thread `first.who.rt + j`, same warp) on word `first.word + j`, all in `first.word`'s
    /// chunk. `first` must be a plain 4-byte read or write (a write perhaps of the values its
    /// words hold: see [`Packed::plain_word`](super::calls::Packed)). Calls `found(j, hit)` for each lane
    /// that conflicts, in lane order, as [`Race::access`] one lane at a time would.
    pub(crate) fn access_run(
        &mut self,
        first: &AccessCall,
        len: usize,
        mut found: impl FnMut(usize, Hit),
    ) {
        let AccessCall {
            region,
            word,
            who,
            kind,
            sem,
            pc,
            ..
        } = *first;
        let rt = who.rt as usize;
        let epoch = self.epoch[rt];
        // The lanes share a stamp unless one of their threads released (and so moved its epoch).
        let last = who.tid + len as u64 - 1;
        let one_stamp =
            self.epoch[rt..rt + len].iter().all(|&e| e == epoch) && who.tid >> 32 == last >> 32;
        if !one_stamp {
            for j in 0..len {
                let hit = self.access(region, word + j, 0xF, 4, &who.lane(j), kind, sem, pc);
                if let Some(hit) = hit {
                    found(j, hit);
                }
            }
            return;
        }
        let stamp = self.stamp(StampKey {
            pc,
            epoch,
            bar: self.bar_epoch[who.slot as usize],
            wsync: self.wsync[who.warp as usize],
            tid_hi: (who.tid >> 32) as u32,
            class: 0,
            size_log2: 2,
        });
        let ci = word / CHUNK_WORDS;
        let mut shadow = self.take_shadow(region, ci);
        if let Some(chunk) = shadow.chunks.get_mut(ci) {
            let i0 = word % CHUNK_WORDS;
            if !self.move_run(chunk, i0, len, &who, kind, stamp) {
                let sync_key = region.sync_key();
                for j in 0..len {
                    let who = who.lane(j);
                    let this = This {
                        who: &who,
                        kind,
                        sem,
                        word: (sync_key, (word + j) as u64),
                    };
                    let cur = rec(who.tid, 0xF, stamp);
                    if let Some(hit) = self.update(chunk, i0 + j, cur, 0xF, &this) {
                        found(j, hit);
                    }
                }
            }
        }
        self.put_shadow(region, shadow);
    }

    /// When no lane of the run conflicts and each changes its word's record in the slot it sets
    /// (the last write, or the first read since it), moves the run's words to the pattern that
    /// [`Race::slot_set`] would pick for each in turn, clears what a write clears, and returns
    /// true. Otherwise changes nothing and returns false.
    fn move_run(
        &self,
        chunk: &mut Chunk,
        i0: usize,
        len: usize,
        who: &Who,
        kind: Kind,
        stamp: u32,
    ) -> bool {
        let slots: &[Slot; 3] = match chunk {
            Chunk::Empty => &UNTOUCHED,
            Chunk::Compact(slots) => slots,
            Chunk::Explicit(_) => return false,
        };
        let sm = rec_sm(rec(who.tid, 0xF, stamp));
        let want = self.pattern_at(i0, who.tid, sm, 2);
        let run = (u32::MAX >> (32 - len)) << i0;
        let checked = if kind.writes() { 3 } else { 2 };
        let by_pattern = self.bdx.is_none()
            && slots[..checked]
                .iter()
                .all(|slot| self.ordered_by_pattern(slot, run, &want, who));
        if !by_pattern && !self.ordered_word_by_word(slots, i0, len, who, kind, stamp, &want) {
            return false;
        }
        let target = if kind.writes() { W } else { R0 };
        let first = 1u32 << i0;
        let slot = &slots[target];
        // Each lane in turn would take the first word's choice (see `slot_set`).
        let (k, new_pattern) = match slot.fitting(first, &want) {
            Some(k) if slot.pats[k].phase == ANY_THREAD => return false,
            Some(k) => (k, false),
            None => match slot.unused(first) {
                Some(k) => (k, true),
                None => return false,
            },
        };
        if let Chunk::Empty = chunk {
            *chunk = Chunk::Compact(Box::default());
        }
        let Chunk::Compact(slots) = chunk else {
            return false;
        };
        let slot = &mut slots[target];
        if new_pattern {
            slot.pats[k] = want;
        }
        slot.has |= run;
        slot.sel_lo = (slot.sel_lo & !run) | if k & 1 != 0 { run } else { 0 };
        slot.sel_hi = (slot.sel_hi & !run) | if k & 2 != 0 { run } else { 0 };
        if kind.writes() {
            slots[R0].has &= !run;
            slots[R1].has &= !run;
        }
        true
    }

    /// [`Race::move_run`]'s checks, word by word: no lane's earlier records conflict with it,
    /// each lane's record changes in the slot it sets, a read leaves no unordered read behind,
    /// and (2D blocks) the lanes' records form `want`.
    #[allow(clippy::too_many_arguments)]
    fn ordered_word_by_word(
        &self,
        slots: &[Slot; 3],
        i0: usize,
        len: usize,
        who: &Who,
        kind: Kind,
        stamp: u32,
        want: &Pattern,
    ) -> bool {
        let sm = want.sm;
        for j in 0..len {
            let (i, lane) = (i0 + j, who.lane(j));
            // 1D blocks number a run's threads as its words; 2D ones may turn a row.
            if self.bdx.is_some() && self.pattern_at(i, lane.tid, sm, 2) != *want {
                return false;
            }
            let cur = rec(lane.tid, 0xF, stamp);
            // `update`'s conflict test, for a plain access of the whole word.
            let unordered = |r: Rec| {
                self.decode(r)
                    .is_some_and(|p| p.mask != 0 && !self.ordered(&p, &lane))
            };
            let last_write = self.slot_get(&slots[W], i);
            if unordered(last_write) {
                return false;
            }
            if kind.writes() {
                if last_write == cur
                    || unordered(self.slot_get(&slots[R0], i))
                    || unordered(self.slot_get(&slots[R1], i))
                {
                    return false;
                }
            } else {
                let read = self.slot_get(&slots[R0], i);
                // A read that stays would move to the second slot.
                if read == cur || !self.replaceable(read, &lane) {
                    return false;
                }
            }
        }
        true
    }

    /// Whether every record the run's words hold in `slot` is, pattern by pattern, ordered before
    /// its lane's access (the same thread, or a thread of its block before a barrier since) and
    /// other than the lane's new record: what the word-by-word checks would find, in one look
    /// per pattern. False when a pattern needs those checks. For 1D blocks, whose runs number
    /// their threads as their words.
    fn ordered_by_pattern(&self, slot: &Slot, run: u32, want: &Pattern, who: &Who) -> bool {
        let tpb = self.tpb as u64;
        (0..PATTERNS).all(|k| {
            let words = slot.users(k, 0) & run;
            if words == 0 {
                return true;
            }
            let p = &slot.pats[k];
            let Some(stamp) = self.stamps.get((p.sm as u64 & STAMP_MASK) as usize) else {
                return false;
            };
            if p.phase == ANY_THREAD || p.size_log2 != 2 || p.sm == want.sm {
                return false;
            }
            let hi = stamp.tid_hi as u64;
            if p.base == want.base && p.phase == want.phase && hi == who.tid >> 32 {
                return true;
            }
            // Word i's thread is `base + i` (low 32 bits): the words' threads are consecutive
            // unless the low bits wrap.
            let (first, last) = (
                words.trailing_zeros() as u64,
                31 - words.leading_zeros() as u64,
            );
            let low = p.base as u64;
            let tid = |i: u64| (hi << 32) | (low + i);
            let block = who.tid / tpb;
            low + last <= u32::MAX as u64
                && tid(first) / tpb == block
                && tid(last) / tpb == block
                && stamp.bar < self.bar_epoch[who.slot as usize]
        })
    }
}
