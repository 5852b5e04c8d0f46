//! Memory as a launch's workers reach it: global allocations, and each resident block's shared
//! and local memory, through raw views, so that blocks on different cores write at once.
//!
//! The rule that makes this sound: while a round runs on several cores, a worker's `Ctx` touches
//! only the slots of the blocks it runs, and only global bytes that no other block of the round
//! writes (`parallel/` proves that from the round's footprints before it starts). No reference
//! to a whole buffer is made then: reads and writes go through pointers to the bytes they touch,
//! and slices cover one slot's memory at most. Allocations are added and freed only by the
//! launch's own `Ctx`, when it runs alone.

use std::marker::PhantomData;
use std::ops::{Deref, Range};
use std::sync::atomic::AtomicU64;

use super::allocs::{Allocation, Heap};

/// A buffer's address and length, taken while its owner was borrowed mutably.
pub(crate) struct RawSlice<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Clone for RawSlice<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RawSlice<T> {}

// The views are shared by the round's workers, under the rule at the top of this file.
unsafe impl<T: Send> Send for RawSlice<T> {}
unsafe impl<T: Send> Sync for RawSlice<T> {}

impl<T> RawSlice<T> {
    pub(crate) fn of(buffer: &mut [T]) -> RawSlice<T> {
        RawSlice {
            ptr: buffer.as_mut_ptr(),
            len: buffer.len(),
        }
    }

    /// The elements in `range` (clamped to the buffer).
    pub(crate) fn sub(&self, range: Range<usize>) -> RawSlice<T> {
        let start = range.start.min(self.len);
        RawSlice {
            // SAFETY: `start` is at most the length: in the buffer or one past it.
            ptr: unsafe { self.ptr.add(start) },
            // `min` then `max`, not `clamp`: its assertion kept it from being inlined.
            len: range.end.min(self.len).max(start) - start,
        }
    }

    const EMPTY: RawSlice<T> = RawSlice {
        ptr: std::ptr::NonNull::dangling().as_ptr(),
        len: 0,
    };

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The elements in `range`, when it is inside the buffer.
    pub(crate) fn get(&self, range: Range<usize>) -> Option<&[T]> {
        (range.start <= range.end && range.end <= self.len)
            // SAFETY: in bounds; no one writes these elements meanwhile (the rule above).
            .then(|| unsafe {
                std::slice::from_raw_parts(self.ptr.add(range.start), range.end - range.start)
            })
    }

    /// The elements in `range`, when it is inside the buffer, to change.
    #[allow(clippy::mut_from_ref)]
    pub(crate) fn get_mut(&self, range: Range<usize>) -> Option<&mut [T]> {
        (range.start <= range.end && range.end <= self.len)
            // SAFETY: in bounds; no one else touches these elements meanwhile (the rule above).
            .then(|| unsafe {
                std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.end - range.start)
            })
    }
}

impl RawSlice<u8> {
    /// Little-endian load of `size` (at most 8) bytes at `off`; 0 for bytes out of bounds, as
    /// [`rd_le`] gives.
    #[inline(always)]
    pub(crate) fn read(&self, off: usize, size: usize) -> u64 {
        if off.checked_add(size).is_none_or(|end| end > self.len) || size > 8 {
            return 0;
        }
        // SAFETY: in bounds (above); the rule at the top of this file keeps writers away.
        unsafe {
            let at = self.ptr.add(off);
            match size {
                4 => u32::from_le(at.cast::<u32>().read_unaligned()) as u64,
                8 => u64::from_le(at.cast::<u64>().read_unaligned()),
                _ => {
                    let mut b = [0u8; 8];
                    std::ptr::copy_nonoverlapping(at, b.as_mut_ptr(), size);
                    u64::from_le_bytes(b)
                }
            }
        }
    }

    /// Little-endian store of the low `size` (at most 8) bytes of `v` at `off`; dropped when
    /// out of bounds, as [`wr_le`] drops it.
    #[inline(always)]
    pub(crate) fn write(&self, off: usize, size: usize, v: u64) {
        if off.checked_add(size).is_none_or(|end| end > self.len) || size > 8 {
            return;
        }
        // SAFETY: in bounds (above); the rule at the top of this file keeps others away.
        unsafe {
            let at = self.ptr.add(off);
            match size {
                4 => at.cast::<u32>().write_unaligned((v as u32).to_le()),
                8 => at.cast::<u64>().write_unaligned(v.to_le()),
                _ => std::ptr::copy_nonoverlapping(v.to_le_bytes().as_ptr(), at, size),
            }
        }
    }
}

/// Global memory: the allocations (their labels, bases and heap state) and views of their
/// bytes and initcheck bits.
pub(crate) struct Globals<'a> {
    allocs: *const Vec<Allocation>,
    /// Per allocation: its bytes, and its written bits when it has them.
    bytes: Vec<(RawSlice<u8>, Option<RawSlice<u64>>)>,
    /// The launch's own, which may allocate and free; `None` in a worker's.
    owner: Option<(*mut Vec<Allocation>, *mut Heap)>,
    _borrow: PhantomData<&'a mut Vec<Allocation>>,
}

// Shared by the round's workers, under the rule at the top of this file.
unsafe impl Send for Globals<'_> {}

impl<'a> Globals<'a> {
    pub(crate) fn new(allocs: &'a mut Vec<Allocation>, heap: &'a mut Heap) -> Globals<'a> {
        let bytes = allocs.iter_mut().map(views_of).collect();
        let (allocs, heap): (*mut Vec<Allocation>, *mut Heap) = (allocs, heap);
        Globals {
            allocs,
            bytes,
            owner: Some((allocs, heap)),
            _borrow: PhantomData,
        }
    }

    /// A worker's view: the same memory, and no way to allocate or free.
    pub(crate) fn share(&self) -> Globals<'a> {
        Globals {
            allocs: self.allocs,
            bytes: self.bytes.clone(),
            owner: None,
            _borrow: PhantomData,
        }
    }

    /// The allocations and the heap, to allocate or free; only the launch's own `Ctx` may, and
    /// only while it runs alone. The views are renewed afterwards.
    pub(crate) fn edit<R>(&mut self, f: impl FnOnce(&mut Vec<Allocation>, &mut Heap) -> R) -> R {
        let (allocs, heap) = self
            .owner
            .expect("only the launch's own context allocates or frees");
        // SAFETY: the launch's own context, running alone, holds the only borrow of both.
        let (allocs, heap) = unsafe { (&mut *allocs, &mut *heap) };
        let result = f(allocs, heap);
        self.bytes = allocs.iter_mut().map(views_of).collect();
        result
    }

    #[inline(always)]
    pub(crate) fn bytes(&self, index: usize) -> RawSlice<u8> {
        self.bytes
            .get(index)
            .map_or(RawSlice::EMPTY, |&(bytes, _)| bytes)
    }

    #[inline(always)]
    pub(crate) fn written(&self, index: usize) -> Option<RawSlice<u64>> {
        self.bytes.get(index).and_then(|&(_, written)| written)
    }
}

fn views_of(a: &mut Allocation) -> (RawSlice<u8>, Option<RawSlice<u64>>) {
    (
        RawSlice::of(&mut a.data),
        a.written.as_deref_mut().map(RawSlice::of),
    )
}

impl Deref for Globals<'_> {
    type Target = Vec<Allocation>;

    fn deref(&self) -> &Vec<Allocation> {
        // SAFETY: the allocations change only in `edit`, when no worker runs; their bytes are
        // reached only through the views.
        unsafe { &*self.allocs }
    }
}

/// The resident blocks' own memory: per slot, shared memory and its written bits, and every
/// resident thread's local memory. Owned by the launch; the views are renewed whenever a slot
/// is added.
#[derive(Default)]
pub(crate) struct BlockMemory {
    pub(crate) shared: Vec<Vec<u8>>,
    /// `shared_words` u64s per slot: one bit per byte of shared memory, set once a thread of the
    /// block wrote it (initcheck).
    pub(crate) shared_written: Vec<u64>,
    /// `local_size` bytes per resident thread.
    pub(crate) local: Vec<u8>,
}

impl BlockMemory {
    pub(crate) fn views(&mut self) -> BlockViews {
        BlockViews {
            shared: self.shared.iter_mut().map(|s| RawSlice::of(s)).collect(),
            shared_written: RawSlice::of(&mut self.shared_written),
            local: RawSlice::of(&mut self.local),
        }
    }
}

#[derive(Clone, Default)]
pub(crate) struct BlockViews {
    pub(crate) shared: Vec<RawSlice<u8>>,
    pub(crate) shared_written: RawSlice<u64>,
    pub(crate) local: RawSlice<u8>,
}

impl<T> Default for RawSlice<T> {
    fn default() -> Self {
        RawSlice::EMPTY
    }
}

impl BlockViews {
    #[inline(always)]
    pub(crate) fn shared(&self, slot: u32) -> RawSlice<u8> {
        self.shared
            .get(slot as usize)
            .copied()
            .unwrap_or(RawSlice::EMPTY)
    }
}

impl RawSlice<u64> {
    /// The words of bits (one per byte) for `len` bytes at byte `off`, and `off` within them:
    /// no more of the bits than the access's own.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub(crate) fn bits_for(&self, off: usize, len: usize) -> (&mut [u64], usize) {
        let words = self.bit_words(off, len);
        let first = words.start;
        (self.get_mut(words).unwrap_or_default(), off - first * 64)
    }

    /// The words holding the bits of `len` bytes at byte `off`, clamped to the buffer.
    #[inline(always)]
    fn bit_words(&self, off: usize, len: usize) -> Range<usize> {
        let first = (off / 64).min(self.len);
        // `min` then `max`, not `clamp`: its assertion kept it from being inlined (1.4 % of a
        // one-core profile, on every store to global memory).
        let end = off
            .saturating_add(len)
            .div_ceil(64)
            .min(self.len)
            .max(first);
        first..end
    }

    /// [`RawSlice::bits_for`] for a global allocation's written bits, as atomic words: blocks on
    /// different cores write different bytes of one 64-byte line in the same round (each
    /// block's `partial[blockIdx.x]`), and so set bits of one word.
    #[inline(always)]
    pub(crate) fn shared_bits_for(&self, off: usize, len: usize) -> (&[AtomicU64], usize) {
        let Range { start, end } = self.bit_words(off, len);
        // SAFETY: `start..end` lies in the buffer; `AtomicU64` has `u64`'s size and alignment,
        // and while views exist the words are only reached through them, atomically here.
        let words = unsafe {
            std::slice::from_raw_parts(self.ptr.add(start) as *const AtomicU64, end - start)
        };
        (words, off - start * 64)
    }
}
