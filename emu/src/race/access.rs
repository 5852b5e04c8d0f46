//! What the race detector reasons about: who made an access, what kind, with what semantics,
//! on which region; the records the shadow keeps, and the causes and hits it reports.

use crate::ir::Scope;
use crate::report::Hazard;

/// Vector-clock key for "everything block b did before its n-th barrier" (`BLOCK_KEY | b`);
/// other keys are thread ids.
pub(super) const BLOCK_KEY: u64 = 1 << 63;
/// The owner of released clocks any thread of the device may acquire.
pub(super) const DEVICE: u64 = u64::MAX;

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

impl Who {
    /// The thread `j` lanes further in the same warp.
    pub(crate) fn lane(&self, j: usize) -> Who {
        Who {
            tid: self.tid + j as u64,
            rt: self.rt + j as u32,
            ..*self
        }
    }
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
pub(super) struct StampKey {
    pub(super) pc: u32,
    pub(super) epoch: u32,
    pub(super) bar: u32,
    pub(super) wsync: u32,
    /// The thread id's high 32 bits (the record holds the low ones).
    pub(super) tid_hi: u32,
    /// [`STRONG`], [`ATOMIC`] and the scope (see [`strong_class`]).
    pub(super) class: u8,
    /// log2 of the access size in bytes, for the chunk patterns.
    pub(super) size_log2: u8,
}

pub(super) const STRONG: u8 = 1;
pub(super) const ATOMIC: u8 = 2;

/// A strong access's stamp class: [`STRONG`], [`ATOMIC`] if it is one, and the scope in bits
/// 2–3. Plain accesses have class 0.
pub(super) fn strong_class(atomic: bool, scope: Scope) -> u8 {
    let scope = match scope {
        Scope::Cta => 0,
        Scope::Gpu => 1,
        Scope::Sys => 2,
    };
    STRONG | (u8::from(atomic) * ATOMIC) | (scope << 2)
}

pub(super) fn class_scope(class: u8) -> Scope {
    match class >> 2 {
        0 => Scope::Cta,
        1 => Scope::Gpu,
        _ => Scope::Sys,
    }
}

pub(super) const STAMP_BITS: u32 = 28;
pub(super) const STAMP_MASK: u64 = (1 << STAMP_BITS) - 1;

/// A record: thread id low 32 bits, byte mask (4 bits), stamp (28 bits). 0 is "no access"
/// (stamp 0 is never handed out).
pub(super) type Rec = u64;

pub(super) fn rec(tid: u64, mask: u8, stamp: u32) -> Rec {
    (tid << 32) | ((mask as u64 & 0xF) << STAMP_BITS) | stamp as u64
}

pub(super) fn rec_stamp(r: Rec) -> u32 {
    (r & STAMP_MASK) as u32
}

/// Stamp and mask: what a chunk pattern shares across its words.
pub(super) fn rec_sm(r: Rec) -> u32 {
    r as u32
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
    pub(super) fn strong(self) -> bool {
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
    /// Evidence that the word is used for synchronization: `ld.acquire`, `st.release`, an atomic
    /// with `.acquire`/`.release`, or a strong load or atomic whose value decides whether a loop
    /// goes on (a poll, a lock's spin). Its word is a flag from then on.
    pub sync: bool,
    /// A store of the value the word already holds (for plain stores, set only while racecheck
    /// runs: see [`Race::same_value_stores`](super::detector::Race)).
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
    /// The thread's own relaxed atomic took in a release that only a fence after it acquires
    /// (a lock taken with `atomicCAS` and no `__threadfence()` after the spin).
    pub awaits_fence: bool,
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
    /// The current thread acquired what the earlier access's thread released, but that release
    /// came before the access: a lock freed with no fence between its holder's stores and the
    /// store that frees it.
    pub released_early: bool,
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
    pub(super) fn sync_key(self) -> u64 {
        match self {
            Region::Shared { block, .. } => BLOCK_KEY | block,
            Region::Global { index, .. } => index as u64,
        }
    }
}
