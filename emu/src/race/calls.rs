//! The detector's calls as the interpreter logs them: accesses packed into six words, a warp's
//! run of accesses in one call, and streams that split the calls by the shard that keeps their words.

use std::sync::Arc;

use super::access::{Acquire, Kind, Region, Sem, Who};
use super::shadow::CHUNK_WORDS;
use crate::ir::Scope;

/// One access as [`Race::access`] takes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AccessCall {
    pub region: Region,
    pub word: usize,
    pub mask: u8,
    pub size: u32,
    pub who: Who,
    pub kind: Kind,
    pub sem: Sem,
    pub pc: u32,
}

impl AccessCall {
    /// Lane `j` of the run this access starts (see [`Call::Access`]).
    pub(crate) fn lane(&self, j: usize) -> AccessCall {
        AccessCall {
            word: self.word + j,
            who: self.who.lane(j),
            ..*self
        }
    }
}

/// An access, or a strong access's synchronization, packed into six whole words. A call built
/// from narrower fields was copied into the batch with wider loads than the stores that made
/// it, and that stalled the interpreter on every access.
///
/// Words: the word's index; the thread id; the region's size in words (global) or its block
/// (shared); allocation index or slot, and resident thread; resident warp and instruction; the
/// small fields (see [`Packed::bits`]) with the thread's slot above them.
#[derive(Clone, Copy)]
pub(crate) struct Packed(pub(super) [u64; 6]);

/// In the small fields: the region is shared memory.
const SHARED: u64 = 1 << 27;

impl Packed {
    #[inline(always)]
    pub(super) fn new(region: Region, word: u64, who: &Who, pc: u32, bits: u64) -> Packed {
        let (extent, index, shared) = match region {
            Region::Shared { slot, block } => (block, slot as u64, SHARED),
            Region::Global { index, words } => (words as u64, index as u64, 0),
        };
        Packed([
            word,
            who.tid,
            extent,
            index | (who.rt as u64) << 32,
            who.warp as u64 | (pc as u64) << 32,
            bits | shared | (who.slot as u64) << 32,
        ])
    }

    /// An access, as [`Race::access`] takes it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn of_access(
        region: Region,
        word: usize,
        mask: u8,
        size: u32,
        who: &Who,
        kind: Kind,
        sem: Sem,
        pc: u32,
    ) -> Packed {
        let bits = Packed::bits(mask, size, kind, sem, Acquire::Never, false);
        Packed::new(region, word as u64, who, pc, bits)
    }

    /// Mask (bits 0–7), size (8–15), kind (16–18), the access's scope (19–20), atomic (21),
    /// sync (22), silent (23); for synchronization, acquire (24–25) and release (26).
    #[inline(always)]
    pub(super) fn bits(
        mask: u8,
        size: u32,
        kind: Kind,
        sem: Sem,
        acquire: Acquire,
        release: bool,
    ) -> u64 {
        mask as u64
            | (size.min(255) as u64) << 8
            | (kind as u64) << 16
            | (sem.scope as u64) << 19
            | (sem.atomic as u64) << 21
            | (sem.sync as u64) << 22
            | (sem.silent as u64) << 23
            | (acquire as u64) << 24
            | (release as u64) << 26
    }

    pub(super) fn region(&self) -> Region {
        let index = self.0[3] as u32;
        if self.0[5] & SHARED != 0 {
            Region::Shared {
                slot: index,
                block: self.0[2],
            }
        } else {
            Region::Global {
                index: index as usize,
                words: self.0[2] as usize,
            }
        }
    }

    pub(super) fn who(&self) -> Who {
        Who {
            tid: self.0[1],
            slot: (self.0[5] >> 32) as u32,
            rt: (self.0[3] >> 32) as u32,
            warp: self.0[4] as u32,
        }
    }

    pub(super) fn pc(&self) -> u32 {
        (self.0[4] >> 32) as u32
    }

    pub(super) fn field(&self, shift: u32, width: u32) -> u8 {
        ((self.0[5] >> shift) & ((1 << width) - 1)) as u8
    }

    pub(super) fn kind(&self) -> Kind {
        const KINDS: [Kind; 5] = [
            Kind::Read,
            Kind::Write,
            Kind::StrongRead,
            Kind::StrongWrite,
            Kind::Rmw,
        ];
        KINDS[self.field(16, 3) as usize % 5]
    }

    pub(super) fn scope(&self) -> Scope {
        [Scope::Cta, Scope::Gpu, Scope::Sys][self.field(19, 2) as usize % 3]
    }

    pub(super) fn acquire(&self) -> Acquire {
        [Acquire::Now, Acquire::AtNextFence, Acquire::Never][self.field(24, 2) as usize % 3]
    }

    pub(super) fn access(&self) -> AccessCall {
        AccessCall {
            region: self.region(),
            word: self.0[0] as usize,
            mask: self.field(0, 8),
            size: self.field(8, 8) as u32,
            who: self.who(),
            kind: self.kind(),
            sem: Sem {
                scope: self.scope(),
                atomic: self.field(21, 1) != 0,
                sync: self.field(22, 1) != 0,
                silent: self.field(23, 1) != 0,
            },
            pc: self.pc(),
        }
    }
}

/// One call of the detector's API, as the interpreter made it.
#[derive(Clone)]
pub(crate) enum Call {
    /// An access to a word of the shard whose stream holds it, its number among its part's
    /// accesses (see [`Streams`]), and how many lanes of its warp instruction it stands for: a
    /// run of `n` is `n` plain 4-byte accesses by consecutive threads to consecutive words of
    /// one chunk, numbered one after the other (see `runs.rs`).
    Access(Packed, u32, u8),
    /// A strong or synchronizing access to another shard's word: its marks only.
    Mark(Packed),
    Fence {
        rt: u32,
        scope: Scope,
        pc: u32,
    },
    /// A strong access's synchronization; its scope is the packed access's.
    Sync(Packed),
    Barrier {
        slot: u32,
        warps: std::ops::Range<u32>,
        /// The block's count of barriers, this one included: the detector checks that it
        /// hears of them in order.
        serial: u32,
    },
    ShareAcquired(Arc<[Who]>),
    WarpSync {
        warp: u32,
        threads: Arc<[Who]>,
        whole_warp: bool,
    },
    BlockStarted {
        slot: u32,
        block: u64,
    },
    BlockFinished {
        slot: u32,
    },
}

/// Calls split by shard as they are made: each shard's stream holds the accesses to its words,
/// the marks of the other shards' strong accesses, and every other call, in order. So a shard
/// reads only what concerns it.
pub(crate) struct Streams {
    pub(crate) parts: Vec<Vec<Call>>,
    /// Accesses so far: the next one's number.
    pub(crate) accesses: u64,
    /// Calls so far, each counted once: a run's lanes after its first make none, since a batch's
    /// size in bytes and the detector's work on it go by its calls.
    pub(crate) calls: usize,
    /// What the next lane of the last call's run would be, while no call came after it.
    tail: RunTail,
    /// Emptied streams, each to become a part on the part's first call: a block's round
    /// usually calls on one shard, and a part it left empty costs nothing to hand back.
    pub(crate) pool: Vec<Vec<Call>>,
}

/// The access that would lengthen the run the last call started or lengthened: the next word
/// and resident thread, with the fields every lane of the run shares. The interpreter asks
/// [`Streams::lengthen_run`] before it builds a call: most of a warp's accesses only count a
/// lane more, and packing each cost more than the rest of its check.
#[derive(Clone, Copy)]
struct RunTail {
    word: u64,
    rt: u32,
    place: u64,
    warp_pc: u64,
    bits: u64,
    part: usize,
    /// `calls` when the tail was made: any call since ends the run.
    calls: usize,
}

impl RunTail {
    const NONE: RunTail = RunTail {
        word: 0,
        rt: 0,
        place: 0,
        warp_pc: 0,
        bits: 0,
        part: 0,
        calls: usize::MAX,
    };
}

/// The small fields of a 4-byte access to a whole word (see [`Packed::bits`]), as a run's tail
/// compares them.
#[inline(always)]
pub(crate) fn word_access_bits(kind: Kind, sem: Sem) -> u64 {
    Packed::bits(0xF, 4, kind, sem, Acquire::Never, false)
}

/// An access's region as a run's tail tells it apart: the allocation's index, or the slot of a
/// block's shared memory.
#[inline(always)]
pub(crate) fn run_place(shared: bool, index: u32) -> u64 {
    index as u64 | (shared as u64) << 32
}

impl Streams {
    pub(crate) fn new(shards: usize, spares: &mut Vec<Vec<Call>>) -> Streams {
        Streams {
            parts: (0..shards.max(1))
                .map(|_| spares.pop().unwrap_or_default())
                .collect(),
            accesses: 0,
            calls: 0,
            tail: RunTail::NONE,
            pool: Vec::new(),
        }
    }

    /// Empty streams whose parts take their room from `pool` when they are first called on.
    pub(crate) fn lazy(shards: usize, pool: Vec<Vec<Call>>) -> Streams {
        Streams {
            pool,
            ..Streams::new(shards, &mut Vec::new())
        }
    }

    /// Part `shard`, with room from the pool if it has none yet.
    #[inline(always)]
    fn part(&mut self, shard: usize) -> Option<&mut Vec<Call>> {
        let part = self.parts.get_mut(shard)?;
        if part.capacity() == 0
            && let Some(spare) = self.pool.pop()
        {
            *part = spare;
        }
        Some(part)
    }

    /// Counts one more lane on the last call's run when the access (a plain 4-byte access of
    /// word `word` of `place` by resident thread `rt`, small fields `bits` as [`Packed::bits`]
    /// makes them) is its next lane, as [`Packed::run_goes_on`] would find: true when it did.
    #[inline(always)]
    pub(crate) fn lengthen_run(
        &mut self,
        word: u64,
        rt: u32,
        place: u64,
        warp_pc: u64,
        bits: u64,
    ) -> bool {
        let t = &mut self.tail;
        let differ = (t.word ^ word)
            | (t.rt ^ rt) as u64
            | (t.place ^ place)
            | (t.warp_pc ^ warp_pc)
            | (t.bits ^ bits);
        if t.calls != self.calls || differ != 0 {
            return false;
        }
        let Some(Call::Access(_, _, lanes)) = self.parts.get_mut(t.part).and_then(|p| p.last_mut())
        else {
            return false;
        };
        *lanes += 1;
        self.accesses += 1;
        t.word += 1;
        t.rt += 1;
        t.calls = if t.word.is_multiple_of(CHUNK_WORDS as u64) {
            usize::MAX
        } else {
            self.calls
        };
        true
    }

    /// After `packed` went to `part`, where a run's next lane would be.
    #[inline(always)]
    fn set_tail(&mut self, packed: &Packed, part: usize) {
        let [word, _, _, place, warp_pc, bits] = packed.0;
        let next = word + 1;
        self.tail = if packed.plain_word() && !next.is_multiple_of(CHUNK_WORDS as u64) {
            RunTail {
                word: next,
                rt: (place >> 32) as u32 + 1,
                place: run_place(bits & SHARED != 0, place as u32),
                warp_pc,
                bits: bits & (SHARED - 1),
                part,
                calls: self.calls,
            }
        } else {
            RunTail::NONE
        };
    }

    #[inline(always)]
    pub(super) fn push_access(&mut self, packed: Packed) {
        let number = self.accesses as u32;
        self.accesses += 1;
        let shards = self.parts.len();
        let own = if shards == 1 { 0 } else { packed.shard(shards) };
        if shards > 1 && packed.marks() {
            for shard in (0..shards).filter(|&shard| shard != own) {
                if let Some(part) = self.part(shard) {
                    part.push(Call::Mark(packed));
                }
            }
        }
        if let Some(part) = self.part(own) {
            // The next lane of a run lengthens it: one byte written instead of a call.
            if let Some(Call::Access(first, at, lanes)) = part.last_mut()
                && first.run_goes_on(*lanes, &packed)
                && number == *at + *lanes as u32
            {
                *lanes += 1;
            } else {
                crate::push::push_in_place(part, Call::Access(packed, number, 1));
                self.calls += 1;
            }
            self.set_tail(&packed, own);
        }
    }

    pub(super) fn push(&mut self, call: Call) {
        self.calls += 1;
        let last = self.parts.len().saturating_sub(1);
        for shard in 0..last {
            if let Some(part) = self.part(shard) {
                part.push(call.clone());
            }
        }
        if let Some(part) = self.part(last) {
            crate::push::push_in_place(part, call);
        }
    }
}

/// The calls a worker made in one block's turn: the launch appends every block's, in block
/// order, to its pipe (see `exec/parallel/`), which is the order one core makes them in.
/// Emptied streams the pipe lent wait in the streams' pool, so that a part starts with room.
pub(crate) struct Log {
    pub(crate) streams: Streams,
}

impl Log {
    pub(crate) fn new(shards: usize) -> Log {
        Log {
            streams: Streams::lazy(shards, Vec::new()),
        }
    }

    pub(crate) fn accesses(&self) -> u64 {
        self.streams.accesses
    }

    /// Logs one access.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn push_access(
        &mut self,
        region: Region,
        word: usize,
        mask: u8,
        size: u32,
        who: &Who,
        kind: Kind,
        sem: Sem,
        pc: u32,
    ) {
        let packed = Packed::of_access(region, word, mask, size, who, kind, sem, pc);
        self.streams.push_access(packed);
    }

    /// The calls logged so far, leaving an empty log with the spare streams.
    pub(crate) fn take(&mut self) -> Logged {
        let shards = self.streams.parts.len();
        let fresh = Streams::lazy(shards, std::mem::take(&mut self.streams.pool));
        let streams = std::mem::replace(&mut self.streams, fresh);
        Logged {
            parts: streams.parts,
            accesses: streams.accesses,
            calls: streams.calls,
        }
    }
}

/// A log's calls as they wait in line for the launch's pipe: each shard's stream, and how many
/// accesses and calls they hold. Small, since the launch's thread moves one per block and round
/// that made calls, from the core that made it.
pub(crate) struct Logged {
    pub(crate) parts: Vec<Vec<Call>>,
    pub(crate) accesses: u64,
    pub(crate) calls: usize,
}

impl Packed {
    /// The shard that keeps this access's word: chunks of 32 words spread by a hash, so that a
    /// warp's coalesced access goes to one shard and neighbouring ones to any. Every shard asks
    /// this of every access, so it is a multiplication, not a division.
    #[inline(always)]
    pub(super) fn shard(&self, shards: usize) -> usize {
        let chunk = self.0[0] / CHUNK_WORDS as u64;
        let region = (self.0[3] as u32 as u64) | (self.0[5] & SHARED) << 8;
        let hash = (chunk ^ region << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((hash as u128 * shards as u128) >> 64) as usize
    }

    /// A strong or synchronizing access, which changes its thread's state and its word's as
    /// well as the shadow: every shard must see it.
    #[inline(always)]
    pub(super) fn marks(&self) -> bool {
        // Kinds 2-4 are strong (see `kind`); bit 22 is `sync`.
        self.field(16, 3) >= 2 || self.field(22, 1) != 0
    }

    /// A plain read or write of a whole word by a 4-byte access: what a run starts with. A run
    /// of writes that store what their words hold (`Sem::silent`) is one too: its lanes all
    /// say so, since a run only goes on with the same bits.
    #[inline(always)]
    pub(super) fn plain_word(&self) -> bool {
        let small = self.0[5] & (SHARED - 1);
        let plain = |kind, sem| Packed::bits(0xF, 4, kind, sem, Acquire::Never, false);
        let silent = Sem {
            silent: true,
            ..Sem::PLAIN
        };
        small == plain(Kind::Read, Sem::PLAIN)
            || small == plain(Kind::Write, Sem::PLAIN)
            || small == plain(Kind::Write, silent)
    }

    /// Whether `next` is the next lane of the run of `lanes` this access starts: a plain 4-byte
    /// access by the same instruction of the same warp, `lanes` threads and words further, in
    /// the same chunk.
    #[inline(always)]
    pub(super) fn run_goes_on(&self, lanes: u8, next: &Packed) -> bool {
        let [word, tid, extent, place, warp_pc, bits] = self.0;
        let lanes = lanes as u64;
        let want = [
            word + lanes,
            tid + lanes,
            extent,
            place + (lanes << 32),
            warp_pc,
            bits,
        ];
        // Word by word: comparing the arrays called `memcmp`, 13 % of a one-core profile.
        let differ = (0..6).fold(0, |d, k| d | (next.0[k] ^ want[k]));
        differ == 0 && !(word + lanes).is_multiple_of(CHUNK_WORDS as u64) && self.plain_word()
    }
}

/// A block's calls reached the detector in another order than its one core made them: a bug of
/// the emulator's, which may make the detector report races that are not there. Said once per
/// process (a panic in debug builds), as `what` tells it: on stderr, or where a whole program's
/// run sends Racetrack's lines (`racetrack run --log-file`), so that the program's own stderr
/// stays its own.
#[cold]
pub(crate) fn calls_out_of_order(what: &str) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    debug_assert!(false, "{what}");
    if SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let line =
        format!("racetrack: internal error: {what}; races reported in it may not be there\n");
    let logged = std::env::var_os(crate::run_env::LOG).is_some_and(|path| {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| file.write_all(line.as_bytes()))
            .is_ok()
    });
    if !logged {
        eprint!("{line}");
    }
}
