//! The exact sign of a short sum of products of doubles, with no rounding anywhere: what the
//! directed roundings (`.rz`, `.rm`, `.rp`) need where the usual one-`fma` residual could lose
//! its sign (results near the bottom of the subnormals, or an `fma`'s three terms).
//!
//! Every finite double is an integer below 2^53 times a power of two no smaller than 2^-1074,
//! so a product of two is an integer below 2^106 times a power of two no smaller than 2^-2148,
//! and no larger than 2^2048 in all: a fixed-point number of 4,200 bits holds any sum of a few
//! of them exactly (a Kulisch accumulator).

use std::cmp::Ordering;

/// Bits of the accumulator: products reach 2^2048 from 2^-2148, and a few carries more.
const LIMBS: usize = 67;
/// The accumulator's bit 0 stands for 2^-2148, the smallest product of two subnormals' steps.
const BIAS: i32 = 2148;

/// A finite double as (integer significand, power of two, negative): `x = ±m * 2^e`.
fn split(x: f64) -> (u64, i32, bool) {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if exponent == 0 {
        (fraction, -1074, negative)
    } else {
        (fraction | (1 << 52), exponent - 1075, negative)
    }
}

/// A nonnegative fixed-point number: `LIMBS` little-endian words, bit 0 worth 2^-BIAS.
struct Accumulator([u64; LIMBS]);

impl Accumulator {
    /// Adds `m * 2^e` (`e >= -BIAS`, `m < 2^106`).
    fn add(&mut self, m: u128, e: i32) {
        if m == 0 {
            return;
        }
        let position = (e + BIAS) as usize;
        let (limb, shift) = (position / 64, (position % 64) as u32);
        let top = if shift == 0 { 0 } else { m >> (128 - shift) };
        let parts = [(m << shift) as u64, ((m << shift) >> 64) as u64, top as u64];
        let mut carry = 0u64;
        for (i, limb_value) in self.0.iter_mut().enumerate().skip(limb) {
            let part = parts.get(i - limb).copied().unwrap_or(0);
            if part == 0 && carry == 0 && i >= limb + parts.len() {
                break;
            }
            let (sum, c1) = limb_value.overflowing_add(part);
            let (sum, c2) = sum.overflowing_add(carry);
            *limb_value = sum;
            carry = u64::from(c1) + u64::from(c2);
        }
    }

    fn cmp(&self, other: &Accumulator) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

/// The sign of `Σ a·b` over `products`, exactly, as how the sum compares with zero. Every
/// operand must be finite (a caller deals with infinities and NaNs first).
pub(crate) fn sign_of_sum(products: &[(f64, f64)]) -> Ordering {
    let mut positive = Accumulator([0; LIMBS]);
    let mut negative = Accumulator([0; LIMBS]);
    for &(a, b) in products {
        let ((ma, ea, na), (mb, eb, nb)) = (split(a), split(b));
        let (m, e) = (u128::from(ma) * u128::from(mb), ea + eb);
        if na != nb {
            negative.add(m, e);
        } else {
            positive.add(m, e);
        }
    }
    positive.cmp(&negative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_that_cancel_to_a_subnormal_step_keep_their_sign() {
        let tiny = f64::from_bits(1);
        // 2^-1074 * 2^-1074 is far below any double, yet it decides the sign.
        assert_eq!(
            sign_of_sum(&[(1.0, 1.0), (-1.0, 1.0), (tiny, tiny)]),
            Ordering::Greater
        );
        assert_eq!(
            sign_of_sum(&[(f64::MAX, 1.0), (-f64::MAX, 1.0), (-tiny, tiny)]),
            Ordering::Less
        );
        assert_eq!(sign_of_sum(&[(3.0, 5.0), (-15.0, 1.0)]), Ordering::Equal);
        assert_eq!(sign_of_sum(&[]), Ordering::Equal);
    }

    #[test]
    fn the_largest_products_add_without_losing_a_carry() {
        let big = f64::MAX;
        // Each product is just under 2^2048; four of them must still compare exactly.
        let four = [(big, big), (big, big), (big, big), (big, big)];
        assert_eq!(sign_of_sum(&four), Ordering::Greater);
        let cancel = [(big, big), (big, big), (-big, big), (-big, big)];
        assert_eq!(sign_of_sum(&cancel), Ordering::Equal);
    }
}
