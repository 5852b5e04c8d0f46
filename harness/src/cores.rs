//! Host work around a launch that large buffers make worth sharing out: copies into and out of
//! the emulator's memory and fills, in pieces on rayon's pool. `racetrack` sizes that pool as
//! the emulator counts its cores ([`use_cores`]); the values never depend on how many there are.

use rayon::prelude::*;

/// Bytes per piece of [`copy`] and [`fill`]: large enough that handing a piece to a core costs
/// little beside it (a copy into fresh memory in pieces of 256 KiB took a fifth longer on one
/// core than in one piece), small enough that a 16 MiB buffer makes 16 of them.
pub const PIECE_BYTES: usize = 1 << 20;

/// Makes rayon's pool `threads` threads, as `--threads` asks of the emulator; `None` leaves it
/// to `RACETRACK_THREADS`, else one per core. Only the first call of a process counts (the pool
/// is made once): the command lines call it before their first fill, and the work here calls it
/// with `None` before its first piece, so that a program that never does still has its
/// emulator's cores and no more.
pub fn use_cores(threads: Option<u32>) {
    static SIZED: std::sync::Once = std::sync::Once::new();
    SIZED.call_once(|| {
        let threads = threads.or_else(|| {
            std::env::var(crate::cli::THREADS_ENV)
                .ok()
                .and_then(|value| value.trim().parse().ok())
        });
        if let Some(threads) = threads.filter(|&threads| threads > 0) {
            // Fails only when the pool already exists, which keeps its size.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(threads as usize)
                .build_global();
        }
    });
}

/// `to.copy_from_slice(from)`, in pieces on every core once it is more than two pieces long:
/// most of a large copy into fresh memory is the kernel faulting its pages in, one at a time
/// on one core.
pub fn copy(to: &mut [u8], from: &[u8]) {
    assert_eq!(
        to.len(),
        from.len(),
        "a copy between slices of different lengths"
    );
    use_cores(None);
    if to.len() <= 2 * PIECE_BYTES || rayon::current_num_threads() == 1 {
        to.copy_from_slice(from);
        return;
    }
    to.par_chunks_mut(PIECE_BYTES)
        .zip(from.par_chunks(PIECE_BYTES))
        .for_each(|(to, from)| to.copy_from_slice(from));
}

/// Sets each `values[i]` to `value(i)`, in pieces on every core: `iota` and `const:V` fills.
pub fn fill<T: Send>(values: &mut [T], value: impl Fn(usize) -> T + Sync) {
    use_cores(None);
    let piece = (PIECE_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    if values.len() <= 2 * piece || rayon::current_num_threads() == 1 {
        for (index, slot) in values.iter_mut().enumerate() {
            *slot = value(index);
        }
        return;
    }
    values
        .par_chunks_mut(piece)
        .enumerate()
        .for_each(|(index, values)| {
            let start = index * piece;
            for (offset, slot) in values.iter_mut().enumerate() {
                *slot = value(start + offset);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lengths around the pieces' edges, on one thread and on three: the same bytes as one
    /// `copy_from_slice` and one loop.
    #[test]
    fn copies_and_fills_are_the_same_on_one_core_and_on_several() {
        let pool = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool")
        };
        for len in [
            0,
            1,
            PIECE_BYTES - 1,
            2 * PIECE_BYTES,
            2 * PIECE_BYTES + 1,
            5 * PIECE_BYTES + 7,
        ] {
            let from: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            for threads in [1, 3] {
                let mut to = vec![0u8; len];
                pool(threads).install(|| copy(&mut to, &from));
                assert_eq!(to, from, "{len} bytes on {threads} threads");
            }
        }
        let piece = PIECE_BYTES / 4;
        for len in [0, 1, piece - 1, piece, piece + 1, 3 * piece + 5] {
            let serial: Vec<u32> = (0..len).map(|i| (i as u32).wrapping_mul(7)).collect();
            for threads in [1, 3] {
                let mut values = vec![0u32; len];
                pool(threads).install(|| fill(&mut values, |i| (i as u32).wrapping_mul(7)));
                assert_eq!(values, serial, "{len} values on {threads} threads");
            }
        }
    }
}
