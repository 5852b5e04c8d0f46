//! Happens-before race detection with per-word shadow state (see README, "Race detector").
//!
//! Each 4-byte word keeps its last write and up to two reads since that write. Ordering comes
//! from three sources, checked cheapest first: the same thread; the same block with a barrier in
//! between (per-block barrier epochs) or the same warp with a `bar.warp.sync` in between; and
//! release/acquire through atomics and strong (volatile) accesses, tracked with sparse vector
//! clocks that only threads which actually synchronized ever grow.
//!
//! Memory: per-thread and per-block state exists only for the resident blocks (indexed by slot),
//! and the shadow is compact (see [`Chunk`]): an access is a 64-bit record (thread id, byte mask
//! and an interned *stamp* holding the instruction and the clocks, which the threads of a warp
//! share), and 32 words whose records follow the thread numbering (word `i` accessed by thread
//! `base + i`, as coalesced accesses are) keep up to three patterns per record slot instead of
//! 96 records.

use std::collections::{HashMap, HashSet};

use crate::exec::MemoryModel;
use crate::ir::Scope;
use crate::report::Hazard;

/// Vector-clock key for "everything block b did before its n-th barrier" (`BLOCK_KEY | b`);
/// other keys are thread ids.
const BLOCK_KEY: u64 = 1 << 63;
/// The owner of released clocks any thread of the device may acquire.
const DEVICE: u64 = u64::MAX;

/// A thread making an access: its global id, and where its state lives among the resident
/// blocks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Who {
    /// Global linear thread id: `block * threads_per_block + thread`.
    pub tid: u64,
    /// Resident slot of its block.
    pub slot: u32,
    /// Resident thread index: `slot * threads_per_block + thread`.
    pub rt: u32,
    /// Resident warp index: `slot * warps_per_block + warp`.
    pub warp: u32,
}

/// One recorded access, decoded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Acc {
    pub tid: u64,
    pub epoch: u32,
    pub bar: u32,
    pub wsync: u32,
    pub pc: u32,
    pub strong: bool,
    /// An atomic (`atom`/`red`), whether or not it wrote.
    pub atomic: bool,
    pub scope: Scope,
    pub mask: u8,
}

/// What an access shares with the other lanes of its warp instruction: interned, so that a
/// record is 64 bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct StampKey {
    pc: u32,
    epoch: u32,
    bar: u32,
    wsync: u32,
    /// The thread id's high 32 bits (the record holds the low ones).
    tid_hi: u32,
    /// [`STRONG`], [`ATOMIC`] and the scope (see [`strong_class`]).
    class: u8,
    /// log2 of the access size in bytes, for the chunk patterns.
    size_log2: u8,
}

const STRONG: u8 = 1;
const ATOMIC: u8 = 2;

/// A strong access's stamp class: [`STRONG`], [`ATOMIC`] if it is one, and the scope in bits
/// 2–3. Plain accesses have class 0.
fn strong_class(atomic: bool, scope: Scope) -> u8 {
    let scope = match scope {
        Scope::Cta => 0,
        Scope::Gpu => 1,
        Scope::Sys => 2,
    };
    STRONG | (u8::from(atomic) * ATOMIC) | (scope << 2)
}

fn class_scope(class: u8) -> Scope {
    match class >> 2 {
        0 => Scope::Cta,
        1 => Scope::Gpu,
        _ => Scope::Sys,
    }
}

const STAMP_BITS: u32 = 28;
const STAMP_MASK: u64 = (1 << STAMP_BITS) - 1;

/// A record: thread id low 32 bits, byte mask (4 bits), stamp (28 bits). 0 is "no access"
/// (stamp 0 is never handed out).
type Rec = u64;

fn rec(tid: u64, mask: u8, stamp: u32) -> Rec {
    (tid << 32) | ((mask as u64 & 0xF) << STAMP_BITS) | stamp as u64
}

fn rec_stamp(r: Rec) -> u32 {
    (r & STAMP_MASK) as u32
}

/// Stamp and mask: what a chunk pattern shares across its words.
fn rec_sm(r: Rec) -> u32 {
    r as u32
}

/// A sparse vector clock: sorted (key, value) pairs.
#[derive(Clone, Debug, Default)]
struct Vc(Vec<(u64, u32)>);

impl Vc {
    fn get(&self, k: u64) -> u32 {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }
    fn set_max(&mut self, k: u64, v: u32) {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(v),
            Err(i) => self.0.insert(i, (k, v)),
        }
    }
    fn join(&mut self, o: &Vc) {
        if o.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0.clone_from(&o.0);
            return;
        }
        let mut out = Vec::with_capacity(self.0.len() + o.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() || j < o.0.len() {
            match (self.0.get(i), o.0.get(j)) {
                (Some(a), Some(b)) if a.0 == b.0 => {
                    out.push((a.0, a.1.max(b.1)));
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.0 < b.0 => {
                    out.push(*a);
                    i += 1;
                }
                (Some(_), Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (Some(a), None) => {
                    out.push(*a);
                    i += 1;
                }
                (None, Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.0 = out;
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Read,
    Write,
    StrongRead,
    StrongWrite,
    /// Atomic read-modify-write.
    Rmw,
}

impl Kind {
    fn strong(self) -> bool {
        matches!(self, Kind::StrongRead | Kind::StrongWrite | Kind::Rmw)
    }
    pub(crate) fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::StrongWrite | Kind::Rmw)
    }
}

/// When a strong access takes in what was released at its address.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Acquire {
    /// `ld.acquire`, and atomics (leniently: see README).
    Now,
    /// `.volatile`/`.relaxed` reads: only with a fence after them (PTX's fence-acquire pattern).
    AtNextFence,
    /// Writes.
    Never,
}

/// What an access is beyond reading or writing: how far it is strong, and what the
/// synchronization rules need to know about it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sem {
    pub scope: Scope,
    /// `atom`/`red`.
    pub atomic: bool,
    /// `ld.acquire`, `st.release`, or a strong store with a fence just before it: the access is a
    /// synchronization operation, and so is its word (a flag).
    pub sync: bool,
    /// A store of the value the word already holds.
    pub silent: bool,
}

impl Sem {
    pub(crate) const PLAIN: Sem = Sem {
        scope: Scope::Sys,
        atomic: false,
        sync: false,
        silent: false,
    };
}

/// Why two conflicting accesses race.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cause {
    /// At least one is a plain access, and nothing orders them.
    Unordered,
    /// Both are strong, but one's scope does not reach the other's thread (`_block` atomics or
    /// `.cta` accesses from two blocks).
    Scope { prev: Scope, cur: Scope },
    /// Both are strong (volatile or relaxed) accesses to data, not a flag or an atomic: PTX
    /// calls them morally strong, but nothing orders them, so the result depends on timing.
    StrongData,
}

/// A fence or hand-off that would have ordered the accesses if its scope were wider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gap {
    /// The narrow operation: a release in another block, or the acquiring thread's own read or
    /// fence.
    pub pc: u32,
    pub scope: Scope,
}

/// A detected conflict: the earlier access and the hazard.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit {
    pub prev: Acc,
    pub hazard: Hazard,
    pub cause: Cause,
    /// A narrow-scoped synchronization the current thread took part in, when one could have
    /// ordered this pair.
    pub gap: Option<Gap>,
}

/// Which memory a word belongs to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Region {
    /// The shared memory of the block resident in this slot.
    Shared { slot: u32, block: u64 },
    /// Global allocation `i` (in address order, fixed during a launch) of `words` words.
    Global { index: usize, words: usize },
}

impl Region {
    /// The key of this region's words in the release/acquire map.
    fn sync_key(self) -> u64 {
        match self {
            Region::Shared { block, .. } => BLOCK_KEY | block,
            Region::Global { index, .. } => index as u64,
        }
    }
}

const CHUNK_WORDS: usize = 32;
/// Record slots per word: the last write, then the two reads kept since it.
const W: usize = 0;
const R0: usize = 1;
const R1: usize = 2;

/// Words `i` whose record in one slot is thread `base + G(e(i) + phase)` with this stamp and
/// mask. `e(i)` is the index of the word's first element for the access size (`i` for 4-byte
/// accesses, `i / 2` for 8 bytes, `4i` for bytes), and `G(x) = (x / bdx) * tpb + x % bdx` numbers
/// the threads of consecutive elements when each block's `blockDim.x` threads cover `bdx`
/// consecutive elements of a row (`G(x) = x` for 1D blocks): so coalesced accesses of 1D and 2D
/// blocks alike give one pattern for the whole chunk. `base` is the thread id's low 32 bits
/// (the stamp holds the high ones). A pattern whose `phase` is [`ANY_THREAD`] takes each word's
/// thread from the slot's `tids` instead (scattered accesses from one instruction).
#[derive(Clone, Copy, Default)]
struct Pattern {
    base: u32,
    sm: u32,
    phase: u16,
    /// The stamp's access size (log2 bytes), kept here so decoding needs no stamp lookup.
    size_log2: u8,
}

/// Patterns per slot: a warp instruction moves a chunk from one pattern to the next, and byte
/// accesses (four lanes per word) pass through a third while a word is half done.
const PATTERNS: usize = 3;
const ANY_THREAD: u16 = u16::MAX;

/// One record slot of 32 words: up to three patterns, `has` the words with a record; `sel_lo`
/// and `sel_hi` are the two bits of each word's pattern index.
#[derive(Clone, Default)]
struct Slot {
    pats: [Pattern; PATTERNS],
    has: u32,
    sel_lo: u32,
    sel_hi: u32,
    /// Thread ids (low 32 bits) of the words whose pattern is [`ANY_THREAD`].
    tids: Option<Box<[u32; CHUNK_WORDS]>>,
}

impl Slot {
    fn pattern_of(&self, bit: u32) -> usize {
        usize::from(self.sel_lo & bit != 0) | (usize::from(self.sel_hi & bit != 0) << 1)
    }

    /// Words other than `except` that use pattern `k`.
    fn users(&self, k: usize, except: u32) -> u32 {
        let lo = if k & 1 != 0 {
            self.sel_lo
        } else {
            !self.sel_lo
        };
        let hi = if k & 2 != 0 {
            self.sel_hi
        } else {
            !self.sel_hi
        };
        self.has & !except & lo & hi
    }
}

/// 32 words' records, compact while they follow at most three patterns per slot.
enum Chunk {
    Empty,
    Compact(Box<[Slot; 3]>),
    Explicit(Box<[[Rec; 3]; CHUNK_WORDS]>),
}

/// Index of the first element of word `i` of a chunk, for an access of `2^size_log2` bytes.
#[inline(always)]
fn element_index(i: usize, size_log2: u8) -> u64 {
    let i = i as u64;
    match size_log2 {
        0 => i << 2,
        1 => i << 1,
        2 => i,
        3 => i >> 1,
        _ => i >> 2,
    }
}

/// The shadow of one region: a chunk per 32 words, created on first access.
#[derive(Default)]
struct Shadow {
    chunks: Vec<Chunk>,
}

impl Shadow {
    /// Forgets every record, keeping compact chunks' memory for the next block in the slot.
    fn clear(&mut self) {
        for c in &mut self.chunks {
            match c {
                Chunk::Compact(slots) => {
                    for s in slots.iter_mut() {
                        s.has = 0;
                    }
                }
                _ => *c = Chunk::Empty,
            }
        }
    }
}

/// The access being recorded, as the conflict rules see it.
struct This<'a> {
    who: &'a Who,
    kind: Kind,
    sem: Sem,
    /// (region key, word): the key of [`Race::sync_words`].
    word: (u64, u64),
}

pub(crate) struct Race {
    tpb: u32,
    wpb: u32,
    /// `blockDim.x`; `None` when it is the whole block (1D), where the chunk patterns need no
    /// division.
    bdx: Option<u64>,
    stamps: Vec<StampKey>,
    stamp_ids: HashMap<StampKey, u32>,
    /// The last stamp handed out: the other lanes of a warp instruction almost always share it.
    last_stamp: (StampKey, u32),
    /// Per resident slot: its block's shared-memory shadow.
    shared: Vec<Shadow>,
    /// Per global allocation.
    global: Vec<Shadow>,
    /// Per resident thread.
    epoch: Vec<u32>,
    pending: Vec<u32>,
    tvc: Vec<Vc>,
    /// What each thread's relaxed reads saw released within its block, acquired at its next
    /// fence.
    seen: Vec<Vc>,
    /// What they saw released device-wide: acquired only by a fence of `.gpu` scope or wider.
    seen_gpu: Vec<Vc>,
    /// Per resident thread: the epoch its last fence of `.gpu` scope or wider closed.
    pending_gpu: Vec<u32>,
    /// Per resident thread: a fence since its last strong access (so its next strong store is a
    /// flag's release).
    fenced: Vec<bool>,
    /// Per resident thread: a narrow-scoped hand-off it took part in (see [`Gap`]).
    gap: Vec<Option<Gap>>,
    /// Per resident thread: the instruction of its last `.cta` fence.
    cta_fence: Vec<u32>,
    /// Words that are flags: written by a release, read by an acquire or a polling load.
    sync_words: HashSet<(u64, u64)>,
    /// Per global word, the last block-scoped release into it: (block, instruction).
    cta_release: HashMap<(u64, u64), (u64, u32)>,
    model: MemoryModel,
    /// Per resident slot.
    bvc: Vec<Vc>,
    pub(crate) bar_epoch: Vec<u32>,
    slot_block: Vec<u64>,
    /// Per resident warp.
    pub(crate) wsync: Vec<u32>,
    /// Released clocks per (region, word, owner): `owner` is the releasing block for what any
    /// thread of that block may acquire, [`DEVICE`] for what every thread may.
    sync: HashMap<(u64, u64, u64), Vc>,
    /// Entries of `sync` about shared memory (dropped when their block finishes).
    shared_sync: usize,
    any_release: bool,
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
            fenced: Vec::new(),
            gap: Vec::new(),
            cta_fence: Vec::new(),
            sync_words: HashSet::new(),
            cta_release: HashMap::new(),
            model,
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
            self.bar_epoch.resize(s + 1, 0);
            self.slot_block.resize(s + 1, 0);
            self.shared.resize_with(s + 1, Shadow::default);
            self.epoch.resize((s + 1) * tpb, 1);
            self.pending.resize((s + 1) * tpb, 0);
            self.tvc.resize_with((s + 1) * tpb, Vc::default);
            self.seen.resize_with((s + 1) * tpb, Vc::default);
            self.seen_gpu.resize_with((s + 1) * tpb, Vc::default);
            self.pending_gpu.resize((s + 1) * tpb, 0);
            self.fenced.resize((s + 1) * tpb, false);
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
        for v in &mut self.tvc[s * tpb..(s + 1) * tpb] {
            v.0.clear();
        }
        for v in &mut self.seen[s * tpb..(s + 1) * tpb] {
            v.0.clear();
        }
        for v in &mut self.seen_gpu[s * tpb..(s + 1) * tpb] {
            v.0.clear();
        }
        self.pending_gpu[s * tpb..(s + 1) * tpb].fill(0);
        self.fenced[s * tpb..(s + 1) * tpb].fill(false);
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

    /// Bytes the shadow takes now: chunks (with their pattern thread lists) and stamps.
    pub(crate) fn shadow_bytes(&self) -> u64 {
        let chunk = |c: &Chunk| match c {
            Chunk::Empty => 0,
            Chunk::Compact(slots) => {
                std::mem::size_of::<[Slot; 3]>()
                    + slots.iter().filter(|s| s.tids.is_some()).count()
                        * std::mem::size_of::<[u32; CHUNK_WORDS]>()
            }
            Chunk::Explicit(_) => std::mem::size_of::<[[Rec; 3]; CHUNK_WORDS]>(),
        };
        let chunks: usize = self
            .global
            .iter()
            .chain(&self.shared)
            .map(|sh| {
                sh.chunks.len() * std::mem::size_of::<Chunk>()
                    + sh.chunks.iter().map(chunk).sum::<usize>()
            })
            .sum();
        (chunks + self.stamps.len() * std::mem::size_of::<StampKey>() * 3) as u64
    }

    fn stamp(&mut self, key: StampKey) -> u32 {
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

    fn decode(&self, r: Rec) -> Option<Acc> {
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

    fn knows(&self, who: &Who, key: u64) -> u32 {
        self.tvc[who.rt as usize]
            .get(key)
            .max(self.bvc[who.slot as usize].get(key))
    }

    fn ordered(&self, p: &Acc, who: &Who) -> bool {
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
        // A strong store with a fence before it (and no other strong access in between) is a
        // flag's release. Plain accesses leave the mark alone, so they cost nothing here.
        let fenced = kind.strong() && std::mem::replace(&mut self.fenced[rt], false);
        let sync_word = (region.sync_key(), word as u64);
        if sem.sync || (fenced && kind == Kind::StrongWrite) {
            self.sync_words.insert(sync_word);
        }
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
        let mut shadow = match region {
            Region::Shared { slot, .. } => std::mem::take(&mut self.shared[slot as usize]),
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
        };
        let ci = word / CHUNK_WORDS;
        if let Region::Shared { .. } = region
            && shadow.chunks.len() <= ci
        {
            shadow.chunks.resize_with(ci + 1, || Chunk::Empty);
        }
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
        match region {
            Region::Shared { slot, .. } => self.shared[slot as usize] = shadow,
            Region::Global { index, .. } => self.global[index] = shadow,
        }
        hit
    }

    /// Why strong `p` and the current strong access race, or `None` when they do not: ordered,
    /// or a pair that is itself the synchronization (see README, "Race detector").
    #[inline(never)]
    fn strong_race_cause(&self, p: &Acc, this: &This) -> Option<Cause> {
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
        if self.model == MemoryModel::Ptx
            || p.atomic
            || this.sem.atomic
            || (this.kind.writes() && this.sem.silent)
            || self.ordered(p, who)
            || self.sync_words.contains(&this.word)
        {
            return None;
        }
        Some(Cause::StrongData)
    }

    fn update(&self, chunk: &mut Chunk, i: usize, cur: Rec, mask: u8, this: &This) -> Option<Hit> {
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
                {
                    hit = Some(Hit {
                        prev: p,
                        hazard,
                        cause,
                        gap: self.gap[who.rt as usize],
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
                });
            }
            let replaceable = |r: Rec| match prev(r) {
                None => true,
                Some(p) => p.tid == who.tid || self.ordered(&p, who),
            };
            if !replaceable(old[R0]) && replaceable(old[R1]) {
                new[R1] = old[R0];
            }
            new[R0] = cur;
        }
        if new != old {
            self.store(chunk, i, &old, &new);
        }
        hit
    }

    /// The three records of word `i`.
    #[inline]
    fn cell(&self, chunk: &Chunk, i: usize) -> [Rec; 3] {
        match chunk {
            Chunk::Empty => [0; 3],
            Chunk::Explicit(e) => e[i],
            Chunk::Compact(c) => std::array::from_fn(|s| self.slot_get(&c[s], i)),
        }
    }

    /// `G(e + phase)`: see [`Pattern`].
    #[inline(always)]
    fn thread_offset(&self, e: u64, phase: u16) -> u64 {
        match self.bdx {
            None => e,
            Some(bdx) => {
                let x = e + phase as u64;
                (x / bdx) * self.tpb as u64 + x % bdx
            }
        }
    }

    #[inline]
    fn slot_get(&self, slot: &Slot, i: usize) -> Rec {
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

    fn store(&self, chunk: &mut Chunk, i: usize, old: &[Rec; 3], new: &[Rec; 3]) {
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

    /// Sets word `i` of a slot to record `r`; false if that needs a fourth pattern.
    fn slot_set(&self, slot: &mut Slot, i: usize, r: Rec) -> bool {
        let bit = 1u32 << i;
        if r == 0 {
            slot.has &= !bit;
            return true;
        }
        let sm = rec_sm(r);
        let stamp = self.stamps.get(rec_stamp(r) as usize);
        let tid = (stamp.map_or(0, |k| k.tid_hi as u64) << 32) | (r >> 32);
        let size_log2 = stamp.map_or(2, |k| k.size_log2);
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
        let want = Pattern {
            base,
            sm,
            phase,
            size_log2,
        };
        let fits = |p: &Pattern| {
            p.sm == sm && (p.phase == ANY_THREAD || (p.base == base && p.phase == phase))
        };
        let in_use = |slot: &Slot, k: usize| slot.users(k, bit) != 0;
        let k = if let Some(k) = (0..PATTERNS).find(|&k| in_use(slot, k) && fits(&slot.pats[k])) {
            k
        } else if let Some(k) = (0..PATTERNS).find(|&k| !in_use(slot, k)) {
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

    /// A fence of `scope` at `pc`: accesses before it are released by the thread's next strong
    /// write (only towards its own block when the fence is `.cta`), and what the thread's strong
    /// reads before it saw released is acquired (within the fence's scope).
    pub(crate) fn fence(&mut self, rt: u32, scope: Scope, pc: u32) {
        let t = rt as usize;
        let seen = std::mem::take(&mut self.seen[t]);
        self.tvc[t].join(&seen);
        if scope.covers_other_blocks() {
            let seen = std::mem::take(&mut self.seen_gpu[t]);
            if !seen.0.is_empty() {
                self.gap[t] = None;
            }
            self.tvc[t].join(&seen);
        } else {
            if !self.seen_gpu[t].0.is_empty() {
                self.gap[t] = Some(Gap { pc, scope });
            }
            self.cta_fence[t] = pc;
        }
        self.mark_releasable(rt, scope);
        self.fenced[t] = true;
    }

    /// The thread's accesses so far are released by its next strong write, within `scope`.
    fn mark_releasable(&mut self, rt: u32, scope: Scope) {
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
                self.gap[t] = Some(Gap { pc, scope });
            }
            if global
                && let Some(&(releaser, release_pc)) = self.cta_release.get(&(k, word))
                && releaser != block
            {
                self.gap[t] = Some(Gap {
                    pc: release_pc,
                    scope: Scope::Cta,
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

    fn release_into(&mut self, key: (u64, u64, u64), region: Region, v: &Vc) {
        let entry = self.sync.entry(key).or_insert_with(|| {
            if let Region::Shared { .. } = region {
                self.shared_sync += 1;
            }
            Vc::default()
        });
        entry.join(v);
    }

    /// A barrier of the block in `slot` completed: everything before it is ordered before
    /// everything after.
    pub(crate) fn barrier(&mut self, slot: u32, warps: std::ops::Range<u32>) {
        let s = slot as usize;
        let tpb = self.tpb as usize;
        let mut joined = std::mem::take(&mut self.bvc[s]);
        for t in s * tpb..((s + 1) * tpb).min(self.tvc.len()) {
            if !self.tvc[t].0.is_empty() {
                let v = std::mem::take(&mut self.tvc[t]);
                joined.join(&v);
            }
        }
        self.bvc[s] = joined;
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
        let mut joined = Vc::default();
        for who in threads {
            if let Some(clock) = self.tvc.get(who.rt as usize) {
                joined.join(clock);
            }
        }
        if joined.0.is_empty() {
            return;
        }
        for who in threads {
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
            if let Some(epoch) = self.epoch.get_mut(who.rt as usize) {
                *epoch += 1;
            }
            if let Some(clock) = self.tvc.get_mut(who.rt as usize) {
                clock.join(&joined);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use proptest::prelude::*;

    /// A detector for blocks of 256 threads, `block_x` wide, with stamps for three
    /// instructions of each access size handed out.
    fn race_with_stamps(block_x: u32) -> (Race, Vec<u32>) {
        let mut r = Race::new(256, 8, block_x, MemoryModel::Racecheck);
        let stamps = (0..5u8)
            .flat_map(|size_log2| {
                (0..3u32).map(move |pc| StampKey {
                    pc,
                    epoch: 1,
                    bar: 0,
                    wsync: 0,
                    tid_hi: 0,
                    class: 0,
                    size_log2,
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|k| r.stamp(k))
            .collect();
        (r, stamps)
    }

    /// A generated record: follows a pattern?, pattern number, byte mask, instruction.
    type GenRec = Option<(bool, u64, u8, usize)>;

    /// Records that follow a chunk pattern (thread `base + offset(i)`) or not (any thread).
    fn cell_strategy(stamps: usize) -> impl Strategy<Value = (usize, [GenRec; 3])> {
        let rec = prop_oneof![
            2 => (any::<bool>(), 0u64..4, 1u8..16, 0..stamps).prop_map(Some),
            1 => Just(None),
        ];
        (0..CHUNK_WORDS, [rec.clone(), rec.clone(), rec])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever is stored in a chunk reads back exactly, compact or not.
        #[test]
        fn chunks_read_back_what_was_stored(
            block_x in prop_oneof![Just(256u32), Just(16), Just(24)],
            instructions in prop_oneof![Just(1usize), Just(2), Just(15)],
            writes in proptest::collection::vec(cell_strategy(15), 1..200)
        ) {
            let (race, stamps) = race_with_stamps(block_x);
            let mut chunk = Chunk::Empty;
            let mut want = [[0 as Rec; 3]; CHUNK_WORDS];
            for (i, cell) in writes {
                let new: [Rec; 3] = std::array::from_fn(|s| match cell[s] {
                    None => 0,
                    Some((affine, base, mask, st)) => {
                        let stamp = stamps[st % instructions];
                        let size_log2 = race.stamps[stamp as usize].size_log2;
                        let tid = if affine {
                            1000 + base * 7 + race.thread_offset(element_index(i, size_log2), 0)
                        } else {
                            (i as u64 * 2_654_435_761) % 5000
                        };
                        rec(tid, mask, stamp)
                    }
                });
                let old = race.cell(&chunk, i);
                prop_assert_eq!(old, want[i]);
                race.store(&mut chunk, i, &old, &new);
                want[i] = new;
                for (k, w) in want.iter().enumerate() {
                    prop_assert_eq!(race.cell(&chunk, k), *w, "word {}", k);
                }
            }
        }
    }

    #[test]
    fn coalesced_accesses_stay_compact() {
        let (race, stamps) = race_with_stamps(256);
        let mut chunk = Chunk::Empty;
        let set_r0 = |chunk: &mut Chunk, i: usize, tid: u64, stamp: u32| {
            let old = race.cell(chunk, i);
            race.store(chunk, i, &old, &[0, rec(tid, 0xF, stamp), old[R0]]);
        };
        // A warp reads the chunk, then another warp reads it: the first pattern moves to R1.
        for i in 0..CHUNK_WORDS {
            set_r0(&mut chunk, i, i as u64, stamps[6]);
        }
        for i in 0..CHUNK_WORDS {
            set_r0(&mut chunk, i, 64 + i as u64, stamps[7]);
        }
        assert!(matches!(chunk, Chunk::Compact(_)));
        // Half the words read by a third warp, one by a fourth: R0 holds three patterns.
        for i in 0..16 {
            set_r0(&mut chunk, i, 128 + i as u64, stamps[8]);
        }
        set_r0(&mut chunk, 16, 7777, stamps[8]);
        assert!(matches!(chunk, Chunk::Compact(_)));
        // A fourth pattern in R0 does not fit: one record per word from then on.
        set_r0(&mut chunk, 20, 9999, stamps[6]);
        assert!(matches!(chunk, Chunk::Explicit(_)));
        let r0 = |chunk: &Chunk, i: usize| race.cell(chunk, i)[R0] >> 32;
        assert_eq!(r0(&chunk, 20), 9999);
        assert_eq!(r0(&chunk, 16), 7777);
        assert_eq!(r0(&chunk, 3), 128 + 3);
        assert_eq!(r0(&chunk, 30), 64 + 30);
        assert_eq!(race.cell(&chunk, 30)[R1] >> 32, 30);
    }

    #[test]
    fn a_row_across_two_blocks_of_a_2d_launch_stays_compact() {
        // Blocks of 16 × 16: words 0..16 of a row belong to one block, 16..32 to the next.
        let (race, stamps) = race_with_stamps(16);
        let mut chunk = Chunk::Empty;
        for i in 0..CHUNK_WORDS {
            let tid = 5 * 256 + 3 * 16 + (i / 16) as u64 * 256 + (i % 16) as u64;
            let old = race.cell(&chunk, i);
            race.store(&mut chunk, i, &old, &[rec(tid, 0xF, stamps[7]), 0, 0]);
        }
        assert!(matches!(chunk, Chunk::Compact(_)));
        assert_eq!(race.cell(&chunk, 17)[W] >> 32, 6 * 256 + 3 * 16 + 1);
    }

    #[test]
    fn a_scatter_from_one_instruction_lists_threads_without_exploding() {
        let (race, stamps) = race_with_stamps(256);
        let mut chunk = Chunk::Empty;
        let tid = |i: usize| (i as u64 * 2_654_435_761) % 100_000;
        for i in 0..CHUNK_WORDS {
            let old = race.cell(&chunk, i);
            race.store(&mut chunk, i, &old, &[rec(tid(i), 0xF, stamps[7]), 0, 0]);
        }
        assert!(matches!(chunk, Chunk::Compact(_)));
        for i in 0..CHUNK_WORDS {
            assert_eq!(race.cell(&chunk, i)[W] >> 32, tid(i));
        }
    }
}
