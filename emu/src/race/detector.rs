//! The detector itself: `Race` keeps the shadow and the clocks and judges each access (the
//! overview is in `mod.rs`; what orders accesses is in `sync.rs`).

use super::access::{
    ATOMIC, Acc, BLOCK_KEY, Cause, Gap, Hit, Kind, Rec, Region, STAMP_BITS, STAMP_MASK, STRONG,
    Sem, StampKey, Who, class_scope, rec, rec_stamp, strong_class,
};
use super::clock::Vc;
use super::shadow::{CHUNK_WORDS, Chunk, Shadow, Slot};
use crate::memory_model::MemoryModel;
use std::collections::{HashMap, HashSet};

/// The access being recorded, as the conflict rules see it.
pub(super) struct This<'a> {
    pub(super) who: &'a Who,
    pub(super) kind: Kind,
    pub(super) sem: Sem,
    /// (region key, word): the key of [`Race::sync_words`].
    pub(super) word: (u64, u64),
}

pub(crate) struct Race {
    pub(super) tpb: u32,
    pub(super) wpb: u32,
    /// `blockDim.x`; `None` when it is the whole block (1D), where the chunk patterns need no
    /// division.
    pub(super) bdx: Option<u64>,
    pub(super) stamps: Vec<StampKey>,
    pub(super) stamp_ids: HashMap<StampKey, u32>,
    /// The last stamp handed out: the other lanes of a warp instruction almost always share it.
    pub(super) last_stamp: (StampKey, u32),
    /// Per resident slot: its block's shared-memory shadow.
    pub(super) shared: Vec<Shadow>,
    /// Per global allocation.
    pub(super) global: Vec<Shadow>,
    /// Per resident thread.
    pub(super) epoch: Vec<u32>,
    pub(super) pending: Vec<u32>,
    pub(super) tvc: Vec<Vc>,
    /// What each thread's relaxed reads saw released within its block, acquired at its next
    /// fence.
    pub(super) seen: Vec<Vc>,
    /// What they saw released device-wide: acquired only by a fence of `.gpu` scope or wider.
    pub(super) seen_gpu: Vec<Vc>,
    /// Per resident thread: the epoch its last fence of `.gpu` scope or wider closed.
    pub(super) pending_gpu: Vec<u32>,
    /// Per resident thread: a narrow-scoped hand-off it took part in (see [`Gap`]).
    pub(super) gap: Vec<Option<Gap>>,
    /// Per resident thread: the instruction of its last `.cta` fence.
    pub(super) cta_fence: Vec<u32>,
    /// Words that are flags: some access to them was synchronization (see [`Sem::sync`]).
    pub(super) sync_words: HashSet<(u64, u64)>,
    /// Per global word, the last block-scoped release into it: (block, instruction).
    pub(super) cta_release: HashMap<(u64, u64), (u64, u32)>,
    pub(super) model: MemoryModel,
    /// Per resident slot: some thread's clock (`tvc`) may be non-empty, and so may its `seen`
    /// clocks since the block started. Kernels without atomics or fences never set them, and then
    /// barriers and block starts need not visit every thread.
    pub(super) clocked: Vec<bool>,
    pub(super) seen_since_start: Vec<bool>,
    /// Per resident slot.
    pub(super) bvc: Vec<Vc>,
    pub(crate) bar_epoch: Vec<u32>,
    pub(super) slot_block: Vec<u64>,
    /// Per resident warp.
    pub(crate) wsync: Vec<u32>,
    /// Released clocks per (region, word, owner): `owner` is the releasing block for what any
    /// thread of that block may acquire, [`DEVICE`] for what every thread may.
    pub(super) sync: HashMap<(u64, u64, u64), Vc>,
    /// Entries of `sync` about shared memory (dropped when their block finishes).
    pub(super) shared_sync: usize,
    pub(super) any_release: bool,
}

impl Race {
    pub(crate) fn new(tpb: u32, wpb: u32, block_x: u32, model: MemoryModel) -> Race {
        let dummy = StampKey {
            pc: u32::MAX,
            epoch: 0,
            bar: 0,
            wsync: 0,
            tid_hi: 0,
            class: 0,
            size_log2: 0,
        };
        Race {
            tpb,
            wpb,
            bdx: (block_x != tpb).then_some(block_x as u64),
            stamps: vec![dummy],
            stamp_ids: HashMap::new(),
            last_stamp: (dummy, 0),
            shared: Vec::new(),
            global: Vec::new(),
            epoch: Vec::new(),
            pending: Vec::new(),
            tvc: Vec::new(),
            seen: Vec::new(),
            seen_gpu: Vec::new(),
            pending_gpu: Vec::new(),
            gap: Vec::new(),
            cta_fence: Vec::new(),
            sync_words: HashSet::new(),
            cta_release: HashMap::new(),
            model,
            clocked: Vec::new(),
            seen_since_start: Vec::new(),
            bvc: Vec::new(),
            bar_epoch: Vec::new(),
            slot_block: Vec::new(),
            wsync: Vec::new(),
            sync: HashMap::new(),
            shared_sync: 0,
            any_release: false,
        }
    }

    /// Block `block` starts in resident slot `slot`: its threads', warps' and shared memory's
    /// state starts afresh.
    pub(crate) fn block_started(&mut self, slot: u32, block: u64) {
        let s = slot as usize;
        let (tpb, wpb) = (self.tpb as usize, self.wpb as usize);
        if self.bvc.len() <= s {
            self.bvc.resize_with(s + 1, Vc::default);
            self.clocked.resize(s + 1, false);
            self.seen_since_start.resize(s + 1, false);
            self.bar_epoch.resize(s + 1, 0);
            self.slot_block.resize(s + 1, 0);
            self.shared.resize_with(s + 1, Shadow::default);
            self.epoch.resize((s + 1) * tpb, 1);
            self.pending.resize((s + 1) * tpb, 0);
            self.tvc.resize_with((s + 1) * tpb, Vc::default);
            self.seen.resize_with((s + 1) * tpb, Vc::default);
            self.seen_gpu.resize_with((s + 1) * tpb, Vc::default);
            self.pending_gpu.resize((s + 1) * tpb, 0);
            self.gap.resize((s + 1) * tpb, None);
            self.cta_fence.resize((s + 1) * tpb, 0);
            self.wsync.resize((s + 1) * wpb, 0);
        }
        self.bvc[s] = Vc::default();
        self.bar_epoch[s] = 0;
        self.slot_block[s] = block;
        self.shared[s].clear();
        self.epoch[s * tpb..(s + 1) * tpb].fill(1);
        self.pending[s * tpb..(s + 1) * tpb].fill(0);
        if std::mem::take(&mut self.seen_since_start[s]) {
            self.clocked[s] = false;
            for v in &mut self.tvc[s * tpb..(s + 1) * tpb] {
                v.clear();
            }
            for v in &mut self.seen[s * tpb..(s + 1) * tpb] {
                v.clear();
            }
            for v in &mut self.seen_gpu[s * tpb..(s + 1) * tpb] {
                v.clear();
            }
        }
        self.pending_gpu[s * tpb..(s + 1) * tpb].fill(0);
        self.gap[s * tpb..(s + 1) * tpb].fill(None);
        self.wsync[s * wpb..(s + 1) * wpb].fill(0);
    }

    /// Block in `slot` finished: its shared memory ends with it, and so does its shadow.
    pub(crate) fn block_finished(&mut self, slot: u32) {
        if let Some(sh) = self.shared.get_mut(slot as usize) {
            sh.clear();
        }
        if self.shared_sync > 0
            && let Some(&block) = self.slot_block.get(slot as usize)
        {
            let key = BLOCK_KEY | block;
            let before = self.sync.len();
            self.sync.retain(|k, _| k.0 != key);
            self.shared_sync -= before - self.sync.len();
        }
        if !self.sync_words.is_empty()
            && let Some(&block) = self.slot_block.get(slot as usize)
        {
            let key = BLOCK_KEY | block;
            self.sync_words.retain(|k| k.0 != key);
        }
    }

    /// The clocks of resident thread `rt` are about to change.
    pub(super) fn clocks_change(&mut self, rt: usize) {
        let slot = rt / self.tpb as usize;
        if let (Some(clocked), Some(seen)) = (
            self.clocked.get_mut(slot),
            self.seen_since_start.get_mut(slot),
        ) {
            *clocked = true;
            *seen = true;
        }
    }

    /// Bytes the shadow takes now: chunks (with their pattern thread lists) and stamps.
    pub(crate) fn shadow_bytes(&self) -> u64 {
        ShadowSize::bytes(&[self.shadow_size()])
    }

    /// What this detector's shadow holds. A shard makes it on its own thread as it finishes,
    /// where its cache holds the chunks: read from the launch's thread, they took 2-3 ms.
    pub(crate) fn shadow_size(&self) -> ShadowSize {
        let chunk = |c: &Chunk| match c {
            Chunk::Empty => 0,
            Chunk::Compact(slots) => {
                std::mem::size_of::<[Slot; 3]>()
                    + slots.iter().filter(|s| s.tids.is_some()).count()
                        * std::mem::size_of::<[u32; CHUNK_WORDS]>()
            }
            Chunk::Explicit(_) => std::mem::size_of::<[[Rec; 3]; CHUNK_WORDS]>(),
        };
        let regions = |shadows: &[Shadow]| {
            let region = |sh: &Shadow| (sh.chunks.len(), sh.chunks.iter().map(chunk).sum());
            shadows.iter().map(region).collect()
        };
        ShadowSize {
            global: regions(&self.global),
            shared: regions(&self.shared),
            stamps: self.stamps.iter().skip(1).copied().collect(),
        }
    }

    pub(super) fn stamp(&mut self, key: StampKey) -> u32 {
        if self.last_stamp.0 == key {
            return self.last_stamp.1;
        }
        let id = match self.stamp_ids.get(&key) {
            Some(&id) => id,
            None => {
                let id = self.stamps.len() as u32;
                // 2^28 distinct (instruction, clocks) combinations: far beyond any launch that
                // finishes; past it, stamps wrap and reports may name a wrong line.
                let id = if (id as u64) <= STAMP_MASK { id } else { 1 };
                if id as usize == self.stamps.len() {
                    self.stamps.push(key);
                }
                self.stamp_ids.insert(key, id);
                id
            }
        };
        self.last_stamp = (key, id);
        id
    }

    pub(super) fn decode(&self, r: Rec) -> Option<Acc> {
        if r == 0 {
            return None;
        }
        let k = self.stamps.get(rec_stamp(r) as usize)?;
        Some(Acc {
            tid: ((k.tid_hi as u64) << 32) | (r >> 32),
            epoch: k.epoch,
            bar: k.bar,
            wsync: k.wsync,
            pc: k.pc,
            strong: k.class & STRONG != 0,
            atomic: k.class & ATOMIC != 0,
            scope: class_scope(k.class),
            mask: ((r >> STAMP_BITS) & 0xF) as u8,
        })
    }

    pub(super) fn knows(&self, who: &Who, key: u64) -> u32 {
        self.tvc[who.rt as usize]
            .get(key)
            .max(self.bvc[who.slot as usize].get(key))
    }

    pub(super) fn ordered(&self, p: &Acc, who: &Who) -> bool {
        if p.tid == who.tid {
            return true;
        }
        let tpb = self.tpb as u64;
        let (pb, b) = (p.tid / tpb, who.tid / tpb);
        if pb == b {
            let slot = who.slot as usize;
            if p.bar < self.bar_epoch[slot] {
                return true;
            }
            let pw = slot as u64 * self.wpb as u64 + (p.tid % tpb) / 32;
            if pw == who.warp as u64 && p.wsync < self.wsync[who.warp as usize] {
                return true;
            }
        }
        if !self.any_release {
            return false;
        }
        if self.knows(who, p.tid) >= p.epoch {
            return true;
        }
        pb != b && self.knows(who, BLOCK_KEY | pb) > p.bar
    }

    /// Whether `who` acquired a release by `p`'s thread that came before `p` (see
    /// [`Hit::released_early`]). Asked only of a conflict, so it costs nothing per access.
    pub(super) fn released_early(&self, p: &Acc, who: &Who) -> bool {
        self.any_release && p.tid != who.tid && self.tvc[who.rt as usize].get(p.tid) > 0
    }

    /// What an access changes beyond its word's shadow: a synchronizing one makes its word a
    /// flag. Returns the word's key.
    ///
    /// A strong store after a fence is not evidence by itself: a lock holder's `__threadfence();
    /// data = 1;` would make its data a flag, and then two holders' unordered stores to it (a
    /// missing release fence) or a writer that never takes the lock would go unreported.
    pub(crate) fn mark_flag(&mut self, region: Region, word: usize, sem: Sem) -> (u64, u64) {
        let sync_word = (region.sync_key(), word as u64);
        if sem.sync {
            self.sync_words.insert(sync_word);
        }
        sync_word
    }

    /// Records one access to a 4-byte word (bytes `mask` of it, by an access of `size` bytes)
    /// and returns the first unordered conflict, if any.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn access(
        &mut self,
        region: Region,
        word: usize,
        mask: u8,
        size: u32,
        who: &Who,
        kind: Kind,
        sem: Sem,
        pc: u32,
    ) -> Option<Hit> {
        let slot = who.slot as usize;
        let rt = who.rt as usize;
        let sync_word = self.mark_flag(region, word, sem);
        let key = StampKey {
            pc,
            epoch: self.epoch[rt],
            bar: self.bar_epoch[slot],
            wsync: self.wsync[who.warp as usize],
            tid_hi: (who.tid >> 32) as u32,
            // Plain accesses keep class 0, so the common stamp is built without a branch.
            class: if kind.strong() {
                strong_class(sem.atomic, sem.scope)
            } else {
                0
            },
            size_log2: size.max(1).trailing_zeros().min(4) as u8,
        };
        let stamp = self.stamp(key);
        let cur = rec(who.tid, mask, stamp);
        let ci = word / CHUNK_WORDS;
        let mut shadow = self.take_shadow(region, ci);
        let this = This {
            who,
            kind,
            sem,
            word: sync_word,
        };
        let hit = match shadow.chunks.get_mut(ci) {
            Some(chunk) => self.update(chunk, word % CHUNK_WORDS, cur, mask, &this),
            None => None,
        };
        self.put_shadow(region, shadow);
        hit
    }

    /// Takes a region's shadow out of the detector, so that its chunks can change while the
    /// detector's other state is read; it has chunk `ci` when the region reaches that far.
    #[inline(always)]
    pub(super) fn take_shadow(&mut self, region: Region, ci: usize) -> Shadow {
        match region {
            Region::Shared { slot, .. } => {
                let mut s = std::mem::take(&mut self.shared[slot as usize]);
                if s.chunks.len() <= ci {
                    s.chunks.resize_with(ci + 1, || Chunk::Empty);
                }
                s
            }
            Region::Global { index, words } => {
                if self.global.len() <= index {
                    self.global.resize_with(index + 1, Shadow::default);
                }
                let mut s = std::mem::take(&mut self.global[index]);
                if s.chunks.is_empty() {
                    s.chunks
                        .resize_with(words.div_ceil(CHUNK_WORDS), || Chunk::Empty);
                }
                s
            }
        }
    }

    #[inline(always)]
    pub(super) fn put_shadow(&mut self, region: Region, shadow: Shadow) {
        match region {
            Region::Shared { slot, .. } => self.shared[slot as usize] = shadow,
            Region::Global { index, .. } => self.global[index] = shadow,
        }
    }

    /// Why strong `p` and the current strong access race, or `None` when they do not: ordered,
    /// or a pair that is itself the synchronization (see README, "Race detector").
    #[inline(never)]
    pub(super) fn strong_race_cause(&self, p: &Acc, this: &This) -> Option<Cause> {
        let who = this.who;
        let tpb = self.tpb as u64;
        let same_block = p.tid / tpb == who.tid / tpb;
        let morally_strong =
            same_block || (p.scope.covers_other_blocks() && this.sem.scope.covers_other_blocks());
        if !morally_strong {
            return (!self.ordered(p, who)).then_some(Cause::Scope {
                prev: p.scope,
                cur: this.sem.scope,
            });
        }
        // Two atomics are atomic towards each other. An atomic beside a volatile or relaxed
        // access is synchronization only on a word seen used as one (a lock's spin, a polled
        // counter): otherwise it is data whose value depends on which lands first.
        if self.model == MemoryModel::Ptx
            || (p.atomic && this.sem.atomic)
            || (this.kind.writes() && this.sem.silent)
            || self.ordered(p, who)
            || self.sync_words.contains(&this.word)
        {
            return None;
        }
        Some(Cause::StrongData)
    }
}

/// What one detector's shadow holds, for [`ShadowSize::bytes`]: per region, its chunk list's
/// length and the bytes its chunks hold; and the stamps it made.
pub(crate) struct ShadowSize {
    global: Vec<(usize, usize)>,
    shared: Vec<(usize, usize)>,
    stamps: Vec<StampKey>,
}

impl ShadowSize {
    /// Bytes one detector's shadow would take that the shards' together hold: each chunk is in
    /// one shard; a region's chunk list is as long as the longest shard's (an allocation's is
    /// whole from its first access, a slot's reaches the furthest chunk touched); the stamps are
    /// those any shard made.
    pub(crate) fn bytes(shards: &[ShadowSize]) -> u64 {
        let regions = |of: fn(&ShadowSize) -> &Vec<(usize, usize)>| {
            let count = shards.iter().map(|s| of(s).len()).max().unwrap_or(0);
            (0..count)
                .map(|i| {
                    let sizes = shards.iter().filter_map(|s| of(s).get(i));
                    let longest = sizes.clone().map(|&(len, _)| len).max().unwrap_or(0);
                    let held: usize = sizes.map(|&(_, held)| held).sum();
                    longest * std::mem::size_of::<Chunk>() + held
                })
                .sum::<usize>()
        };
        let chunks = regions(|s| &s.global) + regions(|s| &s.shared);
        let stamps: HashSet<StampKey> = shards
            .iter()
            .flat_map(|s| s.stamps.iter().copied())
            .collect();
        let stamps = stamps.len() + 1;
        (chunks + stamps * std::mem::size_of::<StampKey>() * 3) as u64
    }
}
