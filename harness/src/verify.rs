//! Comparing device results with CPU references: exact for integers, and for floats within a
//! bound derived from the algorithm's rounding error, never a guessed epsilon.

use std::fmt;
use std::ops::Range;

use rayon::prelude::*;

/// How many differing elements a report lists before summarising.
pub const LISTED_MISMATCHES: usize = 5;

#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch<T> {
    pub index: usize,
    pub got: T,
    pub want: T,
}

/// The outcome of comparing a result with its reference.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison<T> {
    pub len: usize,
    pub mismatch_count: usize,
    /// The first [`LISTED_MISMATCHES`] differences, in index order.
    pub first_mismatches: Vec<Mismatch<T>>,
    /// Set when the two sides do not even have the same length.
    pub length_mismatch: Option<(usize, usize)>,
}

impl<T> Comparison<T> {
    pub fn is_match(&self) -> bool {
        self.mismatch_count == 0 && self.length_mismatch.is_none()
    }
}

impl<T: fmt::Display> fmt::Display for Comparison<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((got, want)) = self.length_mismatch {
            return write!(f, "✗ {got} values where the reference has {want}");
        }
        if self.is_match() {
            return write!(f, "✓ all {} values match the CPU", self.len);
        }
        write!(
            f,
            "✗ {} of {} values differ:",
            self.mismatch_count, self.len
        )?;
        for mismatch in &self.first_mismatches {
            write!(
                f,
                " [{}] got {} want {};",
                mismatch.index, mismatch.got, mismatch.want
            )?;
        }
        if self.mismatch_count > self.first_mismatches.len() {
            write!(f, " …")?;
        }
        Ok(())
    }
}

/// Elements compared per piece: each piece is checked on its own core, and the pieces' counts
/// and first differences are merged in index order, so the report is what one pass would give.
const PIECE: usize = 1 << 16;

impl<T> Comparison<T> {
    /// The same comparison with every listed value passed through `convert`, e.g. into a type
    /// that displays them differently.
    pub fn map<U>(self, convert: impl Fn(T) -> U) -> Comparison<U> {
        Comparison {
            len: self.len,
            mismatch_count: self.mismatch_count,
            first_mismatches: self
                .first_mismatches
                .into_iter()
                .map(|mismatch| Mismatch {
                    index: mismatch.index,
                    got: convert(mismatch.got),
                    want: convert(mismatch.want),
                })
                .collect(),
            length_mismatch: self.length_mismatch,
        }
    }
}

/// Element-by-element equality, for integer results.
pub fn compare_exact<T: PartialEq + Copy + Send + Sync>(got: &[T], want: &[T]) -> Comparison<T> {
    compare_by(got, want, |_, g, w| g == w)
}

/// Floats against an f64 reference: element `i` passes when `|got - want| <= bound(i)`.
pub fn compare_within(
    got: &[f64],
    want: &[f64],
    bound: impl Fn(usize) -> f64 + Sync,
) -> Comparison<f64> {
    compare_by(got, want, |index, g, w| (g - w).abs() <= bound(index))
}

/// Element `i` passes when `equal(i, got[i], want[i])`; on every core, since a GPU's results
/// run to hundreds of millions of elements.
pub fn compare_by<T: Copy + Send + Sync>(
    got: &[T],
    want: &[T],
    equal: impl Fn(usize, T, T) -> bool + Sync,
) -> Comparison<T> {
    if got.len() != want.len() {
        return length_mismatch(got.len(), want.len());
    }
    crate::cores::use_cores(None);
    let pieces: Vec<Comparison<T>> = got
        .par_chunks(PIECE)
        .zip(want.par_chunks(PIECE))
        .enumerate()
        .map(|(piece, (got, want))| compare_piece(piece * PIECE, got, want, &equal))
        .collect();
    merge(want.len(), pieces)
}

/// [`compare_by`] against a reference computed piece by piece: `reference(range)` gives the
/// reference's elements `range` of `want_len`. An element-wise reference (a map) gives the
/// same values for a piece as for the whole, and no reference as long as the result is ever
/// held in memory.
pub fn compare_by_pieces<T: Copy + Send + Sync>(
    got: &[T],
    want_len: usize,
    reference: impl Fn(Range<usize>) -> Vec<T> + Sync,
    equal: impl Fn(usize, T, T) -> bool + Sync,
) -> Comparison<T> {
    if got.len() != want_len {
        return length_mismatch(got.len(), want_len);
    }
    crate::cores::use_cores(None);
    let pieces: Vec<Comparison<T>> = got
        .par_chunks(PIECE)
        .enumerate()
        .map(|(piece, got)| {
            let first = piece * PIECE;
            let want = reference(first..first + got.len());
            if want.len() != got.len() {
                return length_mismatch(got.len(), want.len());
            }
            compare_piece(first, got, &want, &equal)
        })
        .collect();
    merge(want_len, pieces)
}

fn length_mismatch<T>(got: usize, want: usize) -> Comparison<T> {
    Comparison {
        len: want,
        mismatch_count: 0,
        first_mismatches: Vec::new(),
        length_mismatch: Some((got, want)),
    }
}

/// One piece's comparison; its indices start at `first`.
fn compare_piece<T: Copy>(
    first: usize,
    got: &[T],
    want: &[T],
    equal: &impl Fn(usize, T, T) -> bool,
) -> Comparison<T> {
    let mut comparison = Comparison {
        len: want.len(),
        mismatch_count: 0,
        first_mismatches: Vec::new(),
        length_mismatch: None,
    };
    for (offset, (&g, &w)) in got.iter().zip(want).enumerate() {
        let index = first + offset;
        if !equal(index, g, w) {
            comparison.mismatch_count += 1;
            if comparison.first_mismatches.len() < LISTED_MISMATCHES {
                comparison.first_mismatches.push(Mismatch {
                    index,
                    got: g,
                    want: w,
                });
            }
        }
    }
    comparison
}

/// The pieces' comparisons, in index order, as one of `len` elements.
fn merge<T>(len: usize, pieces: Vec<Comparison<T>>) -> Comparison<T> {
    let mut comparison = Comparison {
        len,
        mismatch_count: 0,
        first_mismatches: Vec::new(),
        length_mismatch: None,
    };
    for piece in pieces {
        // Only a reference piece of the wrong length has one: the reference is broken, and
        // the comparison must not pass.
        comparison.length_mismatch = comparison.length_mismatch.or(piece.length_mismatch);
        comparison.mismatch_count += piece.mismatch_count;
        let room = LISTED_MISMATCHES - comparison.first_mismatches.len();
        comparison
            .first_mismatches
            .extend(piece.first_mismatches.into_iter().take(room));
    }
    comparison
}

/// Rounding-error bounds for sums in floating point (Higham, *Accuracy and Stability of
/// Numerical Algorithms*, 2nd ed., §4.2): a sum whose additions form a tree of depth `d`
/// differs from the exact sum by at most `γ_d · Σ|xᵢ|`, with `γ_d = d·u / (1 − d·u)`.
pub mod bounds {
    /// Unit roundoff of f32 (round to nearest): 2⁻²⁴.
    pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

    /// `γ_d` for f32; infinite once `d·u ≥ 1`, where the bound says nothing.
    pub fn gamma_f32(depth: u64) -> f64 {
        let du = depth as f64 * F32_UNIT_ROUNDOFF;
        if du >= 1.0 {
            f64::INFINITY
        } else {
            du / (1.0 - du)
        }
    }

    /// Bound for a sum of `abs_sum = Σ|xᵢ|` computed along additions of depth at most `depth`:
    /// `n − 1` for a serial loop, `⌈log₂ n⌉` for a tree, their sum for a grid-stride loop
    /// followed by a tree. The f32 rounding of the final result adds one more `u·|sum|` term,
    /// included by counting it as one more level.
    pub fn sum_f32(depth: u64, abs_sum: f64) -> f64 {
        gamma_f32(depth + 1) * abs_sum
    }

    /// `⌈log₂ n⌉`, the depth of a balanced tree over `n` leaves.
    pub fn tree_depth(n: u64) -> u64 {
        if n <= 1 {
            0
        } else {
            u64::from(64 - (n - 1).leading_zeros())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_comparison_lists_the_first_differences() {
        let want: Vec<u32> = (0..10).collect();
        let mut got = want.clone();
        for i in [2, 3, 5, 7, 8, 9] {
            got[i] += 1;
        }
        let comparison = compare_exact(&got, &want);
        assert!(!comparison.is_match());
        assert_eq!(comparison.mismatch_count, 6);
        assert_eq!(comparison.first_mismatches.len(), LISTED_MISMATCHES);
        assert_eq!(
            comparison.first_mismatches[0],
            Mismatch {
                index: 2,
                got: 3,
                want: 2
            }
        );
        assert_eq!(
            comparison.to_string(),
            "✗ 6 of 10 values differ: [2] got 3 want 2; [3] got 4 want 3; [5] got 6 want 5; [7] got 8 want 7; [8] got 9 want 8; …"
        );
        assert_eq!(
            compare_exact(&want, &want).to_string(),
            "✓ all 10 values match the CPU"
        );
        assert_eq!(
            compare_exact(&want[..3], &want).to_string(),
            "✗ 3 values where the reference has 10"
        );
    }

    #[test]
    fn tolerance_accepts_rounding_and_rejects_a_real_error() {
        let values: Vec<f32> = (1..=1000).map(|i| 1.0 / i as f32).collect();
        let exact: f64 = values.iter().map(|&v| f64::from(v)).sum();
        let serial: f32 = values.iter().sum();
        let abs_sum: f64 = values.iter().map(|v| f64::from(v.abs())).sum();
        let bound = bounds::sum_f32(values.len() as u64 - 1, abs_sum);
        let within = compare_within(&[f64::from(serial)], &[exact], |_| bound);
        assert!(within.is_match(), "{within}");
        // A 0.3% error, the size of an off-by-one index in a reduction, must not pass.
        let wrong = compare_within(&[exact * 1.003], &[exact], |_| bound);
        assert!(!wrong.is_match());
    }

    #[test]
    fn pieces_on_many_cores_report_what_one_pass_would() {
        let want: Vec<u32> = (0..5 * PIECE as u32 + 17).collect();
        let mut got = want.clone();
        // differences in the last piece, then in earlier ones: the report lists them in order
        let wrong = [
            5 * PIECE + 3,
            PIECE - 1,
            3 * PIECE,
            3 * PIECE + 1,
            7,
            2 * PIECE,
        ];
        for &i in &wrong {
            got[i] += 1;
        }
        let comparison = compare_exact(&got, &want);
        assert_eq!(comparison.mismatch_count, wrong.len());
        let listed: Vec<usize> = comparison
            .first_mismatches
            .iter()
            .map(|m| m.index)
            .collect();
        assert_eq!(
            listed,
            [7, PIECE - 1, 2 * PIECE, 3 * PIECE, 3 * PIECE + 1],
            "{comparison}"
        );

        let computed = compare_by_pieces(
            &got,
            want.len(),
            |range| range.map(|i| i as u32).collect(),
            |_, g, w| g == w,
        );
        assert_eq!(computed, comparison);
        let short = compare_by_pieces(&got[..10], want.len(), |_| Vec::new(), |_, g, w| g == w);
        assert_eq!(short.length_mismatch, Some((10, want.len())));
        let broken_reference = compare_by_pieces(&got, got.len(), |_| vec![0], |_, g, w| g == w);
        assert!(!broken_reference.is_match());

        let within = compare_within(&[1.0, 2.5, 3.0], &[1.0, 2.0, 3.5], |i| [0.0, 1.0, 0.1][i]);
        assert_eq!(within.mismatch_count, 1);
        assert_eq!(within.first_mismatches[0].index, 2);
        assert_eq!(
            within.map(|v| v as i64).first_mismatches[0],
            Mismatch {
                index: 2,
                got: 3,
                want: 3
            }
        );
    }

    #[test]
    fn gamma_and_depth() {
        assert_eq!(bounds::tree_depth(1), 0);
        assert_eq!(bounds::tree_depth(2), 1);
        assert_eq!(bounds::tree_depth(1024), 10);
        assert_eq!(bounds::tree_depth(1025), 11);
        assert!((bounds::gamma_f32(1) / bounds::F32_UNIT_ROUNDOFF - 1.0).abs() < 1e-6);
        assert!(bounds::gamma_f32(1 << 24).is_infinite());
    }
}
