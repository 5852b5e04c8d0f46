//! The compact shadow: a chunk per 32 words, whose record slots keep patterns when accesses
//! follow the thread numbering (coalesced); `records.rs` has how the detector reads and writes them.

use super::access::Rec;

pub(super) const CHUNK_WORDS: usize = 32;
/// Record slots per word: the last write, then the two reads kept since it.
pub(super) const W: usize = 0;
pub(super) const R0: usize = 1;
pub(super) const R1: usize = 2;

/// Words `i` whose record in one slot is thread `base + G(e(i) + phase)` with this stamp and
/// mask. `e(i)` is the index of the word's first element for the access size (`i` for 4-byte
/// accesses, `i / 2` for 8 bytes, `4i` for bytes), and `G(x) = (x / bdx) * tpb + x % bdx` numbers
/// the threads of consecutive elements when each block's `blockDim.x` threads cover `bdx`
/// consecutive elements of a row (`G(x) = x` for 1D blocks): so coalesced accesses of 1D and 2D
/// blocks alike give one pattern for the whole chunk. `base` is the thread id's low 32 bits
/// (the stamp holds the high ones). A pattern whose `phase` is [`ANY_THREAD`] takes each word's
/// thread from the slot's `tids` instead (scattered accesses from one instruction).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Pattern {
    pub(super) base: u32,
    pub(super) sm: u32,
    pub(super) phase: u16,
    /// The stamp's access size (log2 bytes), kept here so decoding needs no stamp lookup.
    pub(super) size_log2: u8,
}

/// Patterns per slot: a warp instruction moves a chunk from one pattern to the next, and byte
/// accesses (four lanes per word) pass through a third while a word is half done.
pub(super) const PATTERNS: usize = 3;
pub(super) const ANY_THREAD: u16 = u16::MAX;

/// One record slot of 32 words: up to three patterns, `has` the words with a record; `sel_lo`
/// and `sel_hi` are the two bits of each word's pattern index.
#[derive(Clone, Default)]
pub(super) struct Slot {
    pub(super) pats: [Pattern; PATTERNS],
    pub(super) has: u32,
    pub(super) sel_lo: u32,
    pub(super) sel_hi: u32,
    /// Thread ids (low 32 bits) of the words whose pattern is [`ANY_THREAD`].
    pub(super) tids: Option<Box<[u32; CHUNK_WORDS]>>,
}

impl Slot {
    pub(super) fn pattern_of(&self, bit: u32) -> usize {
        usize::from(self.sel_lo & bit != 0) | (usize::from(self.sel_hi & bit != 0) << 1)
    }

    /// The first pattern that words other than `except` use and that gives `want`'s records.
    pub(super) fn fitting(&self, except: u32, want: &Pattern) -> Option<usize> {
        (0..PATTERNS).find(|&k| {
            let p = &self.pats[k];
            self.users(k, except) != 0
                && p.sm == want.sm
                && (p.phase == ANY_THREAD || (p.base == want.base && p.phase == want.phase))
        })
    }

    /// The first pattern no word other than `except` uses.
    pub(super) fn unused(&self, except: u32) -> Option<usize> {
        (0..PATTERNS).find(|&k| self.users(k, except) == 0)
    }

    /// Words other than `except` that use pattern `k`.
    pub(super) fn users(&self, k: usize, except: u32) -> u32 {
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
pub(super) enum Chunk {
    Empty,
    Compact(Box<[Slot; 3]>),
    Explicit(Box<[[Rec; 3]; CHUNK_WORDS]>),
}

/// Index of the first element of word `i` of a chunk, for an access of `2^size_log2` bytes.
#[inline(always)]
pub(super) fn element_index(i: usize, size_log2: u8) -> u64 {
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
pub(super) struct Shadow {
    pub(super) chunks: Vec<Chunk>,
}

impl Shadow {
    /// Forgets every record, keeping compact chunks' memory for the next block in the slot.
    pub(super) fn clear(&mut self) {
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
