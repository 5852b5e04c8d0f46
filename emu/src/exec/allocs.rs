//! Device memory's layout (the windows of the address space) and its allocations: what the
//! emulator holds for each, with the bitmaps that track written bytes.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::report::Access;

/// Generic addresses in this window are shared memory (`cvta.shared` adds it).
pub(crate) const SHARED_WIN: u64 = 0x0000_7F00_0000_0000;
/// Generic addresses in this window are the thread's local memory.
pub(crate) const LOCAL_WIN: u64 = 0x0000_7E00_0000_0000;
pub(crate) const WIN: u64 = 1 << 32;
pub(crate) const GLOBAL_BASE: u64 = 0x0000_0002_0000_0000;
/// Unmapped bytes between allocations, so a one-past-the-end access hits no allocation.
pub(crate) const GAP: u64 = 4096;
/// Device `malloc` hands out addresses from here up, above every host allocation and module
/// variable, so a new heap block always sorts last among the allocations.
pub(crate) const HEAP_BASE: u64 = 0x0000_7000_0000_0000;
/// `cudaLimitMallocHeapSize`'s default: `malloc` returns NULL beyond this many live bytes.
pub const DEFAULT_HEAP_BYTES: u64 = 8 << 20;

/// A device address returned by [`Emulator::alloc`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DevicePtr(pub u64);

pub(crate) struct Allocation {
    pub(crate) base: u64,
    /// Empty once a heap block is freed (its size stays in `heap`).
    pub(crate) data: Vec<u8>,
    pub(crate) label: String,
    pub(crate) heap: Option<HeapBlock>,
    /// For memory allocated uninitialized: one bit per byte, set once something wrote it.
    pub(crate) written: Option<Vec<u64>>,
    /// The device whose memory this is.
    pub(crate) device: u32,
}

/// A block from device `malloc`.
pub(crate) struct HeapBlock {
    pub(crate) size: u64,
    /// The `malloc` call's PC: heap findings from one call site are one finding.
    pub(crate) site: u32,
    pub(crate) freed: Option<Access>,
}

/// The device heap's bump pointer and its live bytes (`malloc` returns NULL past the limit).
pub(crate) struct Heap {
    pub(crate) next: u64,
    pub(crate) live: u64,
    pub(crate) limit: u64,
}

/// Whether bits `off..off + len` (at most 64) of a bitmap are all set.
#[inline(always)]
pub(crate) fn all_bits(bits: &[u64], off: usize, len: usize) -> bool {
    all_bits_in(|i| bits.get(i).copied(), off, len)
}

/// [`all_bits`] over words other cores may set bits of meanwhile (see
/// `RawSlice::shared_bits_for`): the bits asked about are the caller's alone in the round.
#[inline(always)]
pub(crate) fn all_bits_shared(bits: &[AtomicU64], off: usize, len: usize) -> bool {
    all_bits_in(|i| bits.get(i).map(|x| x.load(Ordering::Relaxed)), off, len)
}

/// [`all_bits`] over the bitmap's words as `word` reads them.
#[inline(always)]
fn all_bits_in(word: impl Fn(usize) -> Option<u64>, off: usize, len: usize) -> bool {
    let (w, b) = (off / 64, off % 64);
    let want = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let first = want(len.min(64 - b)) << b;
    if word(w).is_none_or(|x| x & first != first) {
        return false;
    }
    let rest = (b + len).saturating_sub(64);
    rest == 0 || word(w + 1).is_some_and(|x| x & want(rest) == want(rest))
}

/// The words of a bitmap that bits `off..off + len` fall in, each with the mask of those bits.
#[inline(always)]
fn word_masks(off: usize, len: usize) -> impl Iterator<Item = (usize, u64)> {
    let end = off + len;
    let mut at = off;
    std::iter::from_fn(move || {
        (at < end).then(|| {
            let (w, b) = (at / 64, at % 64);
            let n = (64 - b).min(end - at);
            at += n;
            let low = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
            (w, low << b)
        })
    })
}

/// Marks `off..off + len` of words other cores may set bits of meanwhile written.
#[inline(always)]
pub(crate) fn mark_bits_shared(bits: &[AtomicU64], off: usize, len: usize) {
    for (w, mask) in word_masks(off, len) {
        if let Some(x) = bits.get(w) {
            x.fetch_or(mask, Ordering::Relaxed);
        }
    }
}

/// Sets bits `off..off + len` of a bitmap, a word at a time.
#[inline(always)]
pub(crate) fn mark_bits(bits: &mut [u64], off: usize, len: usize) {
    for (w, mask) in word_masks(off, len) {
        if let Some(x) = bits.get_mut(w) {
            *x |= mask;
        }
    }
}

pub(crate) fn find_alloc(allocs: &[Allocation], addr: u64, len: u64) -> Option<usize> {
    let i = allocs.partition_point(|a| a.base <= addr);
    if i == 0 {
        return None;
    }
    let a = &allocs[i - 1];
    let end = a.base + a.data.len() as u64;
    if addr.checked_add(len)? <= end {
        Some(i - 1)
    } else {
        None
    }
}
