//! Pure value semantics of PTX arithmetic, comparisons and conversions on register bits.

use std::cmp::Ordering;

use crate::exact::sign_of_sum;
use crate::ir::*;

#[inline]
pub(crate) fn mask(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

#[inline]
pub(crate) fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

#[inline]
fn f32v(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline]
fn f64v(v: u64) -> f64 {
    f64::from_bits(v)
}

#[inline]
fn ftz32(x: f32, on: bool) -> f32 {
    if on && x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

#[inline]
fn sat32(x: f32, on: bool) -> f32 {
    if !on {
        x
    } else if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

#[inline]
fn sat64(x: f64, on: bool) -> f64 {
    if !on {
        x
    } else if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// Integer value of a register as i128, signed or unsigned by type.
#[inline]
fn ival(v: u64, t: Ty) -> i128 {
    if t.signed() {
        sext(v, t.bits()) as i128
    } else {
        mask(v, t.bits()) as i128
    }
}

fn int_range(t: Ty) -> (i128, i128) {
    let bits = t.bits();
    if t.signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

pub(crate) fn bin(op: BinOp, t: Ty, a: u64, b: u64, fm: FMod) -> u64 {
    match t {
        Ty::F16 | Ty::BF16 => {
            let fmt = HalfFormat::of(t);
            let half = |v: u64| fmt.to_f64(ftz_half(v as u16, fmt, fm.ftz));
            let (x, y) = (half(a), half(b));
            // Halves are exact in f64, and so is their product; a sum is exact but for what
            // `two_sum` gives back, so each result is rounded once (round to nearest: parse
            // refuses the directed modes).
            let (r, rest) = match op {
                BinOp::Add => (x + y, two_sum64_error(x, y, x + y)),
                BinOp::Sub => (x - y, two_sum64_error(x, -y, x - y)),
                BinOp::MulLo => (x * y, 0.0),
                BinOp::Min => (min_max(x, y, true), 0.0),
                BinOp::Max => (min_max(x, y, false), 0.0),
                _ => return bin_int(op, Ty::B16, a, b, fm.sat),
            };
            let h = round_half(r, rest, fmt, Rnd::Rn);
            u64::from(ftz_half(sat_half(h, fmt, fm.sat), fmt, fm.ftz))
        }
        Ty::F32 => {
            let (x, y) = (ftz32(f32v(a), fm.ftz), ftz32(f32v(b), fm.ftz));
            let r = match op {
                BinOp::Add | BinOp::Sub => {
                    let (nearest, addend) = if op == BinOp::Sub {
                        (x - y, -y)
                    } else {
                        (x + y, y)
                    };
                    let error = |r: f32| two_sum32_error(x, addend, r);
                    let r = redirect32(nearest, &[x, y], |r| order_of_error(error(r)), fm.rnd);
                    zero_sum_sign(r as f64, [x as f64, addend as f64], fm.rnd) as f32
                }
                BinOp::MulLo | BinOp::MulHi | BinOp::MulWide => {
                    let error = |r: f32| x as f64 * y as f64 - r as f64;
                    redirect32(x * y, &[x, y], |r| order_of_error(error(r)), fm.rnd)
                }
                BinOp::Div => div32(x, y, fm.rnd),
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::CopySign => y.copysign(x),
                BinOp::Rem => x % y,
                _ => return mask(bin_int(op, Ty::B32, a, b, fm.sat), 32),
            };
            ftz32(sat32(r, fm.sat), fm.ftz).to_bits() as u64
        }
        Ty::F64 => {
            let (x, y) = (f64v(a), f64v(b));
            let r = match op {
                BinOp::Add | BinOp::Sub => {
                    let (nearest, addend) = if op == BinOp::Sub {
                        (x - y, -y)
                    } else {
                        (x + y, y)
                    };
                    let error = |r: f64| two_sum64_error(x, addend, r);
                    let r = redirect64(nearest, &[x, y], |r| order_of_error(error(r)), fm.rnd);
                    zero_sum_sign(r, [x, addend], fm.rnd)
                }
                BinOp::MulLo | BinOp::MulHi | BinOp::MulWide => mul64(x, y, fm.rnd),
                BinOp::Div => div64(x, y, fm.rnd),
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                BinOp::CopySign => y.copysign(x),
                BinOp::Rem => x % y,
                _ => return bin_int(op, Ty::B64, a, b, fm.sat),
            };
            sat64(r, fm.sat).to_bits()
        }
        Ty::Pred => match op {
            BinOp::And => (a & b) & 1,
            BinOp::Or => (a | b) & 1,
            BinOp::Xor => (a ^ b) & 1,
            _ => 0,
        },
        _ => bin_int(op, t, a, b, fm.sat),
    }
}

fn bin_int(op: BinOp, t: Ty, a: u64, b: u64, sat: bool) -> u64 {
    let bits = t.bits();
    let (x, y) = (ival(a, t), ival(b, t));
    let r: i128 = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::MulLo => x.wrapping_mul(y),
        BinOp::MulHi => x.wrapping_mul(y) >> bits,
        BinOp::MulWide => return mask(x.wrapping_mul(y) as u64, bits * 2),
        BinOp::Div => {
            if y == 0 {
                // PTX leaves it undefined; hardware gives all ones for unsigned.
                -1
            } else {
                x.wrapping_div(y)
            }
        }
        BinOp::Rem => {
            if y == 0 {
                x
            } else {
                x.wrapping_rem(y)
            }
        }
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::And => return mask(a & b, bits),
        BinOp::Or => return mask(a | b, bits),
        BinOp::Xor => return mask(a ^ b, bits),
        BinOp::Shl => {
            let s = mask(b, 32);
            return if s >= bits as u64 {
                0
            } else {
                mask(a << s, bits)
            };
        }
        BinOp::Shr => {
            let s = mask(b, 32).min(bits as u64);
            return if t.signed() {
                let v = sext(a, bits);
                mask((v >> s.min(63)) as u64, bits)
            } else if s >= bits as u64 {
                0
            } else {
                mask(a, bits) >> s
            };
        }
        BinOp::CopySign => 0,
        BinOp::BmskClamp | BinOp::BmskWrap => {
            let (start, width) = if op == BinOp::BmskClamp {
                (mask(a, 32).min(32), mask(b, 32).min(32))
            } else {
                (a & 0x1f, b & 0x1f)
            };
            let from = if start >= 32 { 0 } else { u32::MAX << start };
            let past = if start + width >= 32 {
                0
            } else {
                u32::MAX << (start + width)
            };
            return (from & !past) as u64;
        }
        BinOp::Mul24Lo | BinOp::Mul24Hi => {
            let product = mul24(a, b, t.signed());
            return if op == BinOp::Mul24Hi {
                mask((product >> 16) as u64, 32)
            } else {
                mask(product as u64, 32)
            };
        }
    };
    if sat && t.signed() {
        let (lo, hi) = int_range(t);
        return mask(r.clamp(lo, hi) as u64, bits);
    }
    mask(r as u64, bits)
}

pub(crate) fn un(op: UnOp, t: Ty, a: u64, fm: FMod) -> u64 {
    match t {
        Ty::F16 | Ty::BF16 => match op {
            // A NaN comes out canonical, as from every 16-bit float operation on a GPU.
            UnOp::Neg | UnOp::Abs if HalfFormat::of(t).to_f64(a as u16).is_nan() => {
                u64::from(CANONICAL_HALF_NAN)
            }
            UnOp::Neg => mask(a ^ 0x8000, 16),
            UnOp::Abs => mask(a & 0x7fff, 16),
            _ => un_int(op, Ty::B16, a),
        },
        Ty::F32 => {
            let x = ftz32(f32v(a), fm.ftz);
            let r = match op {
                UnOp::Neg => -x,
                UnOp::Abs => x.abs(),
                UnOp::Sqrt => sqrt32(x, fm.rnd),
                UnOp::Rsqrt => 1.0 / x.sqrt(),
                UnOp::Rcp => div32(1.0, x, fm.rnd),
                UnOp::Ex2 => x.exp2(),
                UnOp::Lg2 => x.log2(),
                UnOp::Sin => x.sin(),
                UnOp::Cos => x.cos(),
                UnOp::Tanh => x.tanh(),
                _ => return un_int(op, Ty::B32, a),
            };
            ftz32(sat32(r, fm.sat), fm.ftz).to_bits() as u64
        }
        Ty::F64 => {
            let x = f64v(a);
            let r = match op {
                UnOp::Neg => -x,
                UnOp::Abs => x.abs(),
                UnOp::Sqrt => sqrt64(x, fm.rnd),
                UnOp::Rsqrt => 1.0 / x.sqrt(),
                UnOp::Rcp => div64(1.0, x, fm.rnd),
                UnOp::Ex2 => x.exp2(),
                UnOp::Lg2 => x.log2(),
                UnOp::Sin => x.sin(),
                UnOp::Cos => x.cos(),
                UnOp::Tanh => x.tanh(),
                _ => return un_int(op, Ty::B64, a),
            };
            r.to_bits()
        }
        Ty::Pred => match op {
            UnOp::Not | UnOp::CNot => (a & 1) ^ 1,
            _ => a & 1,
        },
        _ => un_int(op, t, a),
    }
}

fn un_int(op: UnOp, t: Ty, a: u64) -> u64 {
    let bits = t.bits();
    let v = mask(a, bits);
    match op {
        UnOp::Neg => mask(v.wrapping_neg(), bits),
        UnOp::Abs => {
            if t.signed() {
                mask(sext(a, bits).wrapping_abs() as u64, bits)
            } else {
                v
            }
        }
        UnOp::Not => mask(!v, bits),
        UnOp::CNot => (v == 0) as u64,
        UnOp::Popc => v.count_ones() as u64,
        UnOp::Clz => (v.leading_zeros() - (64 - bits)) as u64,
        UnOp::Brev => v.reverse_bits() >> (64 - bits),
        UnOp::Bfind | UnOp::BfindShiftAmt => {
            // A negative signed value's highest non-sign bit is its highest 0 bit.
            let negative = t.signed() && (v >> (bits - 1)) & 1 == 1;
            let bits_to_find = if negative { mask(!v, bits) } else { v };
            if bits_to_find == 0 {
                return 0xFFFF_FFFF;
            }
            let position = 63 - u64::from(bits_to_find.leading_zeros());
            if op == UnOp::BfindShiftAmt {
                u64::from(bits) - 1 - position
            } else {
                position
            }
        }
        _ => v,
    }
}

pub(crate) fn mad(t: Ty, hi: bool, wide: bool, a: u64, b: u64, c: u64, fm: FMod) -> u64 {
    match t {
        Ty::F16 | Ty::BF16 => {
            let fmt = HalfFormat::of(t);
            let half = |v: u64| fmt.to_f64(ftz_half(v as u16, fmt, fm.ftz));
            let (x, y, z) = (half(a), half(b), half(c));
            // The product of two halves is exact in f64; the sum is exact but for what
            // `two_sum` gives back, so the fused result is rounded once.
            let product = x * y;
            let sum = product + z;
            let rest = if sum.is_finite() {
                two_sum64_error(product, z, sum)
            } else {
                0.0
            };
            let h = round_half(sum, rest, fmt, Rnd::Rn);
            u64::from(ftz_half(sat_half(h, fmt, fm.sat), fmt, fm.ftz))
        }
        Ty::F32 => {
            let (x, y, z) = (
                ftz32(f32v(a), fm.ftz),
                ftz32(f32v(b), fm.ftz),
                ftz32(f32v(c), fm.ftz),
            );
            let (wx, wy, wz) = (x as f64, y as f64, z as f64);
            let order = |r: f32| sign_of_sum(&[(r as f64, 1.0), (-wx, wy), (-wz, 1.0)]);
            let mut fused = redirect32(x.mul_add(y, z), &[x, y, z], order, fm.rnd);
            if fm.rnd == Rnd::Rm && fused == 0.0 && order(fused) == Ordering::Equal {
                fused = zero_sum_sign(fused as f64, [wx * wy, wz], fm.rnd) as f32;
            }
            ftz32(sat32(fused, fm.sat), fm.ftz).to_bits() as u64
        }
        Ty::F64 => {
            let (x, y, z) = (f64v(a), f64v(b), f64v(c));
            let order = |r: f64| sign_of_sum(&[(r, 1.0), (-x, y), (-z, 1.0)]);
            let mut fused = redirect64(x.mul_add(y, z), &[x, y, z], order, fm.rnd);
            if fm.rnd == Rnd::Rm && fused == 0.0 && order(fused) == Ordering::Equal {
                fused = zero_sum_sign(fused, [x * y, z], fm.rnd);
            }
            sat64(fused, fm.sat).to_bits()
        }
        _ => {
            let bits = t.bits();
            let p = ival(a, t).wrapping_mul(ival(b, t));
            if wide {
                let wt = crate::ir::wide_ty(t);
                mask((p.wrapping_add(ival(c, wt))) as u64, bits * 2)
            } else if hi {
                let r = (p >> bits).wrapping_add(ival(c, t));
                if fm.sat && t.signed() {
                    let (lo, hi) = int_range(t);
                    return mask(r.clamp(lo, hi) as u64, bits);
                }
                mask(r as u64, bits)
            } else {
                mask(p.wrapping_add(ival(c, t)) as u64, bits)
            }
        }
    }
}

pub(crate) fn compare(cmp: Cmp, t: Ty, a: u64, b: u64, ftz: bool) -> bool {
    if t.float() {
        let (x, y) = match t {
            Ty::F32 => (ftz32(f32v(a), ftz) as f64, ftz32(f32v(b), ftz) as f64),
            Ty::F16 => (f16_to_f32(a as u16) as f64, f16_to_f32(b as u16) as f64),
            Ty::BF16 => (bf16_to_f32(a as u16) as f64, bf16_to_f32(b as u16) as f64),
            _ => (f64v(a), f64v(b)),
        };
        let nan = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => !nan && x == y,
            Cmp::Ne => !nan && x != y,
            Cmp::Lt => !nan && x < y,
            Cmp::Le => !nan && x <= y,
            Cmp::Gt => !nan && x > y,
            Cmp::Ge => !nan && x >= y,
            Cmp::Equ => nan || x == y,
            Cmp::Neu => nan || x != y,
            Cmp::Ltu => nan || x < y,
            Cmp::Leu => nan || x <= y,
            Cmp::Gtu => nan || x > y,
            Cmp::Geu => nan || x >= y,
            Cmp::Num => !nan,
            Cmp::Nan => nan,
        };
    }
    let (x, y) = (ival(a, t), ival(b, t));
    match cmp {
        Cmp::Eq | Cmp::Equ => x == y,
        Cmp::Ne | Cmp::Neu => x != y,
        Cmp::Lt | Cmp::Ltu => x < y,
        Cmp::Le | Cmp::Leu => x <= y,
        Cmp::Gt | Cmp::Gtu => x > y,
        Cmp::Ge | Cmp::Geu => x >= y,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

pub(crate) fn bool_op(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a ^ b,
    }
}

/// Knuth's TwoSum: the exact `x + y` minus `sum`, its rounded value.
fn two_sum64_error(x: f64, y: f64, sum: f64) -> f64 {
    let y_part = sum - x;
    (x - (sum - y_part)) + (y - y_part)
}

/// The exact `x + y` minus `sum`, computed in f64 so that no step can overflow.
fn two_sum32_error(x: f32, y: f32, sum: f32) -> f64 {
    let wide_sum = x as f64 + y as f64;
    (wide_sum - sum as f64) + two_sum64_error(x as f64, y as f64, wide_sum)
}

/// IEEE 754's exact-zero rule: a sum of two addends that is exactly zero is +0 except under
/// round-toward-negative, where it is -0 (unless both addends are +0).
fn zero_sum_sign(r: f64, addends: [f64; 2], rnd: Rnd) -> f64 {
    let both_plus_zero = addends.iter().all(|a| *a == 0.0 && a.is_sign_positive());
    if rnd == Rnd::Rm && r == 0.0 && r.is_sign_positive() && !both_plus_zero {
        -0.0
    } else {
        r
    }
}

/// How `r`, the round-to-nearest result of an operation, compares with the exact result, or
/// `None` when `r` stands under every rounding (NaN, or infinite because an operand was).
/// `order` tells how a finite `r` compares with the exact result.
fn nearest_vs_exact(
    r: f64,
    any_infinite_operand: bool,
    order: impl FnOnce() -> Ordering,
) -> Option<Ordering> {
    if r.is_nan() || (r.is_infinite() && any_infinite_operand) {
        return None;
    }
    Some(if r.is_infinite() {
        // Finite operands overflowed: the exact result lies between the largest finite value
        // and the infinity.
        r.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
    } else {
        order()
    })
}

/// How `r` compares with the exact result, given the exact result minus `r` (computed without
/// rounding).
fn order_of_error(error: f64) -> Ordering {
    0.0.partial_cmp(&error).unwrap_or(Ordering::Equal)
}

/// `r`, the round-to-nearest result, rounded under `rnd` instead (see [`nearest_vs_exact`]).
fn redirect32(r: f32, operands: &[f32], order: impl Fn(f32) -> Ordering, rnd: Rnd) -> f32 {
    if !matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp) {
        return r;
    }
    let infinite = operands.iter().any(|x| x.is_infinite());
    match nearest_vs_exact(r as f64, infinite, || order(r)) {
        Some(order) => directed32(r, order, rnd),
        None => r,
    }
}

fn redirect64(r: f64, operands: &[f64], order: impl Fn(f64) -> Ordering, rnd: Rnd) -> f64 {
    if !matches!(rnd, Rnd::Rz | Rnd::Rm | Rnd::Rp) {
        return r;
    }
    let infinite = operands.iter().any(|x| x.is_infinite());
    match nearest_vs_exact(r, infinite, || order(r)) {
        Some(order) => directed64(r, order, rnd),
        None => r,
    }
}

/// Magnitudes between 2^-900 and 2^900: far enough from the subnormals that one `fma` gives a
/// residual exactly (the products and remainders it forms stay above 2^-1022), and from
/// overflow.
fn roomy(x: f64) -> bool {
    const LOW: f64 = f64::from_bits((1023 - 900) << 52);
    const HIGH: f64 = f64::from_bits((1023 + 900) << 52);
    (LOW..=HIGH).contains(&x.abs())
}

/// How `sign * (r * y - x)` compares with zero: `r` against `x / y` for `y` of that sign.
fn order_of_quotient(r: f64, x: f64, y: f64) -> Ordering {
    let order = if roomy(x) && roomy(r) && roomy(y) {
        r.mul_add(y, -x)
            .partial_cmp(&0.0)
            .unwrap_or(Ordering::Equal)
    } else {
        sign_of_sum(&[(r, y), (-x, 1.0)])
    };
    if y < 0.0 { order.reverse() } else { order }
}

fn mul64(x: f64, y: f64, rnd: Rnd) -> f64 {
    let order = |r: f64| {
        if roomy(r) {
            order_of_error(x.mul_add(y, -r))
        } else {
            sign_of_sum(&[(r, 1.0), (-x, y)])
        }
    };
    redirect64(x * y, &[x, y], order, rnd)
}

/// `x / y` rounded under `rnd`. A quotient by zero or of infinities is exact (an infinity, a
/// zero or NaN) under every rounding.
fn div64(x: f64, y: f64, rnd: Rnd) -> f64 {
    let r = x / y;
    if y == 0.0 || !x.is_finite() || !y.is_finite() {
        return r;
    }
    redirect64(r, &[x, y], |r| order_of_quotient(r, x, y), rnd)
}

fn div32(x: f32, y: f32, rnd: Rnd) -> f32 {
    let r = x / y;
    if y == 0.0 || !x.is_finite() || !y.is_finite() {
        return r;
    }
    // Every f32 and the products of two are roomy as f64s: one `fma` is exact enough.
    let order = |r: f32| order_of_quotient(r as f64, x as f64, y as f64);
    redirect32(r, &[x, y], order, rnd)
}

/// `sqrt(x)` rounded under `rnd`: `r` against the root is `r * r` against `x`.
fn sqrt64(x: f64, rnd: Rnd) -> f64 {
    let r = x.sqrt();
    if x <= 0.0 || !x.is_finite() {
        return r;
    }
    let order = |r: f64| {
        if roomy(x) {
            r.mul_add(r, -x)
                .partial_cmp(&0.0)
                .unwrap_or(Ordering::Equal)
        } else {
            sign_of_sum(&[(r, r), (-x, 1.0)])
        }
    };
    redirect64(r, &[x], order, rnd)
}

fn sqrt32(x: f32, rnd: Rnd) -> f32 {
    let r = x.sqrt();
    if x <= 0.0 || !x.is_finite() {
        return r;
    }
    let wide = x as f64;
    let order = |r: f32| (r as f64).mul_add(r as f64, -wide).partial_cmp(&0.0);
    redirect32(r, &[x], |r| order(r).unwrap_or(Ordering::Equal), rnd)
}

fn next_up32(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    f32::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down32(x: f32) -> f32 {
    -next_up32(-x)
}

fn next_up64(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let b = x.to_bits();
    f64::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

fn next_down64(x: f64) -> f64 {
    -next_up64(-x)
}

/// Rounds `r` (the round-to-nearest result) in direction `rnd`, given how it compares with the
/// exact value (`r_minus_exact`: sign of r - exact).
fn directed32(r: f32, ord: Ordering, rnd: Rnd) -> f32 {
    use std::cmp::Ordering::*;
    match (rnd, ord) {
        (Rnd::Rz, Greater) if r > 0.0 => next_down32(r),
        (Rnd::Rz, Less) if r < 0.0 => next_up32(r),
        (Rnd::Rm, Greater) => next_down32(r),
        (Rnd::Rp, Less) => next_up32(r),
        _ => r,
    }
}

fn directed64(r: f64, ord: Ordering, rnd: Rnd) -> f64 {
    use std::cmp::Ordering::*;
    match (rnd, ord) {
        (Rnd::Rz, Greater) if r > 0.0 => next_down64(r),
        (Rnd::Rz, Less) if r < 0.0 => next_up64(r),
        (Rnd::Rm, Greater) => next_down64(r),
        (Rnd::Rp, Less) => next_up64(r),
        _ => r,
    }
}

fn round_int(x: f64, rnd: Rnd) -> f64 {
    match rnd {
        Rnd::Rni => x.round_ties_even(),
        Rnd::Rmi => x.floor(),
        Rnd::Rpi => x.ceil(),
        _ => x.trunc(),
    }
}

fn float_to_int(x: f64, rnd: Rnd, dty: Ty) -> u64 {
    if x.is_nan() {
        return 0;
    }
    let r = round_int(x, rnd);
    let (lo, hi) = int_range(dty);
    let v = if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as i128
    };
    mask(v as u64, dty.bits())
}

pub(crate) fn cvt(dty: Ty, sty: Ty, rnd: Rnd, fm: FMod, a: u64, dbits: u32) -> u64 {
    let r = cvt_inner(dty, sty, rnd, fm, a);
    // A narrow result in a wider register is extended to the register's width.
    if dbits > dty.bits() && !dty.float() {
        if dty.signed() {
            mask(sext(r, dty.bits()) as u64, dbits)
        } else {
            mask(r, dty.bits())
        }
    } else {
        r
    }
}

fn cvt_inner(dty: Ty, sty: Ty, rnd: Rnd, fm: FMod, a: u64) -> u64 {
    if sty.float() {
        let x: f64 = match sty {
            Ty::F16 => f16_to_f32(a as u16) as f64,
            Ty::BF16 => bf16_to_f32(a as u16) as f64,
            Ty::F32 => ftz32(f32v(a), fm.ftz) as f64,
            _ => f64v(a),
        };
        if dty.float() {
            let int_round = matches!(rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi);
            let x = if int_round { round_int(x, rnd) } else { x };
            return match dty {
                Ty::F64 => sat64(x, fm.sat).to_bits(),
                // A half's NaN widens to the canonical f32 NaN, as on a GPU.
                Ty::F32 if sty.half() && x.is_nan() => 0x7fff_ffff,
                Ty::F32 => {
                    let r = x as f32;
                    let r = if int_round || x.is_nan() {
                        r
                    } else {
                        directed32(
                            r,
                            (r as f64).partial_cmp(&x).unwrap_or(Ordering::Equal),
                            rnd,
                        )
                    };
                    ftz32(sat32(r, fm.sat), fm.ftz).to_bits() as u64
                }
                _ => {
                    let fmt = HalfFormat::of(dty);
                    let h = round_half(x, 0.0, fmt, half_rounding(rnd));
                    u64::from(sat_half(h, fmt, fm.sat))
                }
            };
        }
        return float_to_int(x, rnd, dty);
    }
    let x = ival(a, sty);
    if dty.float() {
        return match dty {
            Ty::F64 => {
                let r = x as f64;
                let r = directed64(r, (r as i128).cmp(&x), rnd);
                sat64(r, fm.sat).to_bits()
            }
            Ty::F32 => {
                let r = x as f32;
                let r = directed32(r, (r as i128).cmp(&x), rnd);
                sat32(r, fm.sat).to_bits() as u64
            }
            _ => {
                // An integer wider than f64's significand is rounded once, from its exact value.
                let near = x as f64;
                let rest = (x - near as i128) as f64;
                let fmt = HalfFormat::of(dty);
                let h = round_half(near, rest, fmt, half_rounding(rnd));
                u64::from(sat_half(h, fmt, fm.sat))
            }
        };
    }
    if fm.sat {
        let (lo, hi) = int_range(dty);
        return mask(x.clamp(lo, hi) as u64, dty.bits());
    }
    mask(x as u64, dty.bits())
}

/// A conversion's rounding to a half: `.rni`-style modes already rounded to an integer, which
/// any half that large holds.
fn half_rounding(rnd: Rnd) -> Rnd {
    match rnd {
        Rnd::Rz | Rnd::Rm | Rnd::Rp => rnd,
        _ => Rnd::Rn,
    }
}

pub(crate) fn testp(t: TestP, ty: Ty, a: u64) -> bool {
    let x = if ty == Ty::F32 {
        f32v(a) as f64
    } else {
        f64v(a)
    };
    let sub = if ty == Ty::F32 {
        f32v(a).is_subnormal()
    } else {
        x.is_subnormal()
    };
    match t {
        TestP::Finite => x.is_finite(),
        TestP::Infinite => x.is_infinite(),
        TestP::Number => !x.is_nan(),
        TestP::NotANumber => x.is_nan(),
        TestP::Normal => x.is_normal() && !sub,
        TestP::Subnormal => sub,
    }
}

pub(crate) fn bfe(t: Ty, a: u64, pos: u64, len: u64) -> u64 {
    let bits = t.bits() as u64;
    let msb = bits - 1;
    let pos = pos & 0xff;
    let len = len & 0xff;
    let sbit = if t.signed() && len > 0 {
        let p = (pos + len - 1).min(msb);
        (a >> p) & 1
    } else {
        0
    };
    let mut d = 0u64;
    for i in 0..bits {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    mask(d, bits as u32)
}

pub(crate) fn bfi(t: Ty, f: u64, b: u64, pos: u64, len: u64) -> u64 {
    let bits = t.bits() as u64;
    let pos = pos & 0xff;
    let len = len & 0xff;
    let mut d = b;
    let mut i = 0;
    while i < len && pos + i < bits {
        let bit = (f >> i) & 1;
        d = (d & !(1u64 << (pos + i))) | (bit << (pos + i));
        i += 1;
    }
    mask(d, bits as u32)
}

pub(crate) fn prmt(a: u64, b: u64, c: u64) -> u64 {
    let tmp = (mask(b, 32) << 32) | mask(a, 32);
    let mut d = 0u64;
    for i in 0..4 {
        let sel = (c >> (4 * i)) & 0xf;
        let byte = (tmp >> (8 * (sel & 7))) & 0xff;
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 { 0xff } else { 0 }
        } else {
            byte
        };
        d |= byte << (8 * i);
    }
    d
}

pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if man == 0 {
            sign
        } else {
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
    } else if exp == 31 {
        sign | 0x7f80_0000 | (man << 13)
    } else {
        sign | ((exp + 112) << 23) | (man << 13)
    };
    f32::from_bits(bits)
}

/// Rounds to the nearest half, ties to even.
pub(crate) fn f32_to_f16(x: f32) -> u16 {
    round_half(x as f64, 0.0, HALF, Rnd::Rn)
}

/// A bfloat16 is the high half of an f32.
pub(crate) fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Rounds to the nearest bfloat16, ties to even; NaNs stay NaNs.
pub(crate) fn f32_to_bf16(x: f32) -> u16 {
    round_half(x as f64, 0.0, BFLOAT, Rnd::Rn)
}

/// A 16-bit float format: `.f16` (IEEE binary16) or `.bf16` (bfloat16).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct HalfFormat {
    frac_bits: u32,
    exp_bits: u32,
}

pub(crate) const HALF: HalfFormat = HalfFormat {
    frac_bits: 10,
    exp_bits: 5,
};
pub(crate) const BFLOAT: HalfFormat = HalfFormat {
    frac_bits: 7,
    exp_bits: 8,
};

impl HalfFormat {
    pub(crate) fn of(t: Ty) -> HalfFormat {
        if t == Ty::BF16 { BFLOAT } else { HALF }
    }

    fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    /// The exponent of the smallest subnormal's bit: every value of the format is a multiple of
    /// 2^this.
    fn min_quantum(self) -> i32 {
        1 - self.bias() - self.frac_bits as i32
    }

    fn infinity(self) -> u16 {
        (((1u32 << self.exp_bits) - 1) << self.frac_bits) as u16
    }

    pub(crate) fn to_f64(self, h: u16) -> f64 {
        if self == BFLOAT {
            bf16_to_f32(h) as f64
        } else {
            f16_to_f32(h) as f64
        }
    }

    fn is_subnormal(self, h: u16) -> bool {
        let magnitude = h & 0x7fff;
        magnitude != 0 && magnitude < 1 << self.frac_bits
    }
}

/// `min`/`max` of two halves (`lower` for `min`): a NaN gives way to a number, and -0 is below
/// +0, as on a GPU.
fn min_max(x: f64, y: f64, lower: bool) -> f64 {
    if x.is_nan() {
        y
    } else if y.is_nan() || x.total_cmp(&y).is_le() == lower {
        x
    } else {
        y
    }
}

/// `.ftz` on a half: a subnormal becomes a zero of its sign.
fn ftz_half(h: u16, fmt: HalfFormat, on: bool) -> u16 {
    if on && fmt.is_subnormal(h) {
        h & 0x8000
    } else {
        h
    }
}

/// `.sat` on a half: NaN to +0, anything below zero to +0, anything above one to one.
fn sat_half(h: u16, fmt: HalfFormat, on: bool) -> u16 {
    let x = fmt.to_f64(h);
    if !on {
        h
    } else if x.is_nan() || x <= 0.0 {
        0
    } else if x >= 1.0 {
        round_half(1.0, 0.0, fmt, Rnd::Rn)
    } else {
        h
    }
}

/// The NaN every 16-bit float operation gives on a GPU (an H100's, whatever the operands' NaNs
/// were): positive, every fraction bit set.
pub(crate) const CANONICAL_HALF_NAN: u16 = 0x7fff;

/// Rounds the exact value `x + rest` to a half of format `fmt`, by `rnd` (the default and
/// `.rn` are to nearest, ties to even). `rest` is zero, or what an f64 sum `x` left out: less
/// than half an f64 ulp of `x`, it only decides between the two halves around the exact value
/// when `x` is one of them or halfway between. So every result is rounded once, from the exact
/// value, as IEEE 754 asks: rounding through an f32 first would round twice.
pub(crate) fn round_half(x: f64, rest: f64, fmt: HalfFormat, rnd: Rnd) -> u16 {
    use std::cmp::Ordering;
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    if x.is_nan() {
        return CANONICAL_HALF_NAN;
    }
    if x.is_infinite() {
        return sign | fmt.infinity();
    }
    let negative = sign != 0;
    // Rounding a magnitude away from zero is rounding up for a positive value.
    let away = |rnd: Rnd| match rnd {
        Rnd::Rp => !negative,
        Rnd::Rm => negative,
        _ => false,
    };
    let largest = fmt.infinity() - 1;
    let overflow = || {
        if matches!(rnd, Rnd::Rz) || (matches!(rnd, Rnd::Rp | Rnd::Rm) && !away(rnd)) {
            sign | largest
        } else {
            sign | fmt.infinity()
        }
    };
    let a = x.abs();
    if a == 0.0 && rest == 0.0 {
        return sign;
    }
    // How the exact magnitude compares with `a`.
    let beside = if rest == 0.0 {
        Ordering::Equal
    } else if (rest > 0.0) != negative {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    let exponent = if a == 0.0 {
        i32::MIN / 2
    } else {
        let biased = ((a.to_bits() >> 52) & 0x7ff) as i32;
        if biased == 0 {
            // An f64 subnormal, far below any half.
            -1075
        } else {
            biased - 1023
        }
    };
    if exponent > fmt.bias() {
        return overflow();
    }
    let frac_bits = fmt.frac_bits as i32;
    let mut quantum = (exponent - frac_bits).max(fmt.min_quantum());
    // `a` in units of the quantum: exact, a power-of-two scaling within f64's range.
    let units = a * 2f64.powi(-quantum);
    let mut whole = units.floor() as u32;
    let fraction = units - units.floor();
    #[derive(PartialEq)]
    enum Part {
        Zero,
        BelowHalf,
        Half,
        AboveHalf,
    }
    let part = if fraction == 0.0 {
        match beside {
            Ordering::Equal => Part::Zero,
            Ordering::Greater => Part::BelowHalf,
            Ordering::Less => {
                // Just below a half's value: the half below it is the floor, and the exact
                // value is nearly a whole unit above that.
                if whole == 1 << frac_bits && quantum > fmt.min_quantum() {
                    whole = (1 << (frac_bits + 1)) - 1;
                    quantum -= 1;
                } else {
                    whole -= 1;
                }
                Part::AboveHalf
            }
        }
    } else if fraction < 0.5 || (fraction == 0.5 && beside == Ordering::Less) {
        Part::BelowHalf
    } else if fraction == 0.5 && beside == Ordering::Equal {
        Part::Half
    } else {
        Part::AboveHalf
    };
    let up = match rnd {
        Rnd::Rz => false,
        Rnd::Rp | Rnd::Rm => away(rnd) && part != Part::Zero,
        _ => part == Part::AboveHalf || (part == Part::Half && whole & 1 == 1),
    };
    if up {
        whole += 1;
    }
    if whole == 1 << (frac_bits + 1) {
        whole >>= 1;
        quantum += 1;
    }
    if whole < 1 << frac_bits {
        // A subnormal (or zero): the quantum is the smallest one.
        return sign | whole as u16;
    }
    let field = quantum + frac_bits + fmt.bias();
    if field >= (1 << fmt.exp_bits) - 1 {
        return overflow();
    }
    sign | ((field as u32) << frac_bits | (whole - (1 << frac_bits))) as u16
}

/// The 48-bit product of the low 24 bits of `a` and `b`, sign-extended when `signed`.
fn mul24(a: u64, b: u64, signed: bool) -> i64 {
    let low24 = |v: u64| {
        if signed {
            sext(v & 0xff_ffff, 24)
        } else {
            (v & 0xff_ffff) as i64
        }
    };
    low24(a) * low24(b)
}

/// [`Int3Op`]: 32-bit operands in the low bits of `a`, `b`, `c`; a 32-bit result.
pub(crate) fn int3(op: Int3Op, a: u64, b: u64, c: u64) -> u64 {
    let (x, y, z) = (a as u32, b as u32, c as u32);
    let r = match op {
        Int3Op::Mad24 { hi, signed } => {
            let product = mul24(a, b, signed);
            let part = if hi { product >> 16 } else { product } as u32;
            part.wrapping_add(z)
        }
        Int3Op::Lop3 { lut } => {
            // Bit i of the table is the result for (a, b, c) = (i>>2 & 1, i>>1 & 1, i & 1),
            // which is what the table's encoding (0xF0, 0xCC, 0xAA for a, b, c) gives.
            (0..32).fold(0u32, |acc, bit| {
                let index = (((x >> bit) & 1) << 2) | (((y >> bit) & 1) << 1) | ((z >> bit) & 1);
                acc | ((u32::from(lut) >> index) & 1) << bit
            })
        }
        Int3Op::Sad { signed } => {
            let difference = if signed {
                (x as i32).abs_diff(y as i32)
            } else {
                x.abs_diff(y)
            };
            difference.wrapping_add(z)
        }
        Int3Op::Shf { left, wrap } => {
            let n = if wrap { z & 31 } else { z.min(32) };
            let joined = (u64::from(y) << 32) | u64::from(x);
            if left {
                ((joined << n) >> 32) as u32
            } else {
                (joined >> n) as u32
            }
        }
        Int3Op::Dot {
            pairs,
            hi,
            a_signed,
            b_signed,
        } => {
            let lane = |v: u32, i: u32, bits: u32, signed: bool| -> i64 {
                let part = u64::from(v >> (i * bits)) & ((1 << bits) - 1);
                if signed {
                    sext(part, bits)
                } else {
                    part as i64
                }
            };
            let sum: i64 = if pairs == 4 {
                (0..4)
                    .map(|i| lane(x, i, 8, a_signed) * lane(y, i, 8, b_signed))
                    .sum()
            } else {
                let first = if hi { 2 } else { 0 };
                (0..2)
                    .map(|i| lane(x, i, 16, a_signed) * lane(y, first + i, 8, b_signed))
                    .sum()
            };
            (sum as u32).wrapping_add(z)
        }
    };
    u64::from(r)
}

/// [`Half2Op`] on two halves of `ty` packed in the low 32 bits of `a`, `b`, `c`.
pub(crate) fn half2(op: Half2Op, ty: Ty, fm: FMod, a: u64, b: u64, c: u64) -> u64 {
    let half = |v: u64, i: u32| (v >> (16 * i)) & 0xffff;
    let lane = |i: u32| match op {
        Half2Op::Bin(op) => bin(op, ty, half(a, i), half(b, i), fm),
        Half2Op::Fma(negate) => {
            let sign = |on: bool| if on { 0x8000 } else { 0 };
            let x = half(a, i) ^ sign(negate.product);
            let z = half(c, i) ^ sign(negate.addend);
            mad(ty, false, false, x, half(b, i), z, fm)
        }
        Half2Op::Un(op) => un(op, ty, half(a, i), fm),
        // `cvt.rn.f16x2.f32 d, a, b`: `a` goes to the high half.
        Half2Op::PackFromF32 => {
            let source = if i == 1 { a } else { b };
            cvt(ty, Ty::F32, fm.rnd, fm, mask(source, 32), 16)
        }
    } & 0xffff;
    lane(0) | (lane(1) << 16)
}

#[cfg(test)]
mod half_tests {
    //! The 16-bit float formats against an oracle that knows nothing of `round_half`: every
    //! finite half of the format, sorted, and the exact value placed among them.

    use super::*;
    use proptest::prelude::*;

    /// Every finite value of `fmt` at or above zero, ascending, with its bits.
    fn finite_halves(fmt: HalfFormat) -> Vec<(f64, u16)> {
        let mut all: Vec<(f64, u16)> = (0..fmt.infinity())
            .map(|bits| (fmt.to_f64(bits), bits))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        all
    }

    /// The correctly rounded half of the exact value `exact` (its magnitude compared with each
    /// half by `cmp`), by IEEE 754's rules.
    fn oracle(
        fmt: HalfFormat,
        halves: &[(f64, u16)],
        negative: bool,
        rnd: Rnd,
        cmp: impl Fn(f64) -> std::cmp::Ordering,
    ) -> u16 {
        use std::cmp::Ordering::*;
        let sign = if negative { 0x8000 } else { 0 };
        // The first half above the exact magnitude.
        let above = halves.partition_point(|h| cmp(h.0) != Less);
        let (floor, exact) = (halves[above - 1], cmp(halves[above - 1].0) == Equal);
        if exact {
            return sign | floor.1;
        }
        let (largest, infinity) = (halves[halves.len() - 1], fmt.infinity());
        let ceil = halves.get(above).map_or(infinity, |h| h.1);
        let away = match rnd {
            Rnd::Rz => false,
            Rnd::Rp => !negative,
            Rnd::Rm => negative,
            _ => {
                // Halfway to the next half, where the one past the largest is 2^(emax+1).
                let next = halves.get(above).map_or(2f64.powi(fmt.bias() + 1), |h| h.0);
                let mid = (floor.0 + next) / 2.0;
                match cmp(mid) {
                    Greater => true,
                    Less => false,
                    Equal => floor.1 & 1 == 1,
                }
            }
        };
        if !away {
            return sign | floor.1;
        }
        if ceil == infinity && largest.1 == floor.1 {
            return sign | infinity;
        }
        sign | ceil
    }

    fn round_by_oracle(fmt: HalfFormat, halves: &[(f64, u16)], x: f64, rnd: Rnd) -> u16 {
        let magnitude = x.abs();
        oracle(fmt, halves, x < 0.0, rnd, |h| magnitude.total_cmp(&h))
    }

    const MODES: [Rnd; 4] = [Rnd::Rn, Rnd::Rz, Rnd::Rm, Rnd::Rp];

    /// f64 values across a format's range: subnormals, normals, ties, overflow.
    fn near_format(fmt: HalfFormat) -> impl Strategy<Value = f64> {
        let lowest = fmt.min_quantum() - 3;
        let highest = fmt.bias() + 2;
        (any::<bool>(), lowest..=highest, any::<u64>(), 0u32..4).prop_map(
            move |(negative, exponent, bits, shape)| {
                let mut fraction = bits & ((1 << 52) - 1);
                // Exact halves, exact ties, and one f64 ulp past a tie, as often as the rest.
                let cut = 52 - fmt.frac_bits;
                match shape {
                    0 => fraction &= !((1 << cut) - 1),
                    1 => fraction = (fraction & !((1 << cut) - 1)) | 1 << (cut - 1),
                    2 => fraction = (fraction & !((1 << cut) - 1)) | 1 << (cut - 1) | 1,
                    _ => {}
                }
                let magnitude = f64::from_bits(((exponent + 1023) as u64) << 52 | fraction);
                if negative { -magnitude } else { magnitude }
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// `cvt.rn/rz/rm/rp.f16.f64`.
        #[test]
        fn halves_round_once_from_f64_in_every_mode(x in near_format(HALF)) {
            let halves = finite_halves(HALF);
            for rnd in MODES {
                prop_assert_eq!(
                    cvt(Ty::F16, Ty::F64, rnd, FMod::default(), x.to_bits(), 16) as u16,
                    round_by_oracle(HALF, &halves, x, rnd),
                    "{:e} {:?}", x, rnd
                );
            }
        }

        #[test]
        fn bfloat16s_round_once_from_f64_in_every_mode(x in near_format(BFLOAT)) {
            let halves = finite_halves(BFLOAT);
            for rnd in MODES {
                prop_assert_eq!(
                    round_half(x, 0.0, BFLOAT, rnd),
                    round_by_oracle(BFLOAT, &halves, x, rnd),
                    "{:e} {:?}", x, rnd
                );
            }
        }

        /// `fma.rn.f16`: the exact `a * b + c`, in units of 2^-48 (every product of halves is a
        /// whole number of them, and every sum fits an i128), rounded once.
        #[test]
        fn half_fma_rounds_the_exact_result_once(a in any::<u16>(), b in any::<u16>(), c in any::<u16>()) {
            let (x, y, z) = (HALF.to_f64(a), HALF.to_f64(b), HALF.to_f64(c));
            prop_assume!(x.is_finite() && y.is_finite() && z.is_finite());
            let units = |v: f64| (v * 2f64.powi(24)) as i128;
            let exact = units(x) * units(y) + units(z) * (1 << 24);
            let got = mad(Ty::F16, false, false, a.into(), b.into(), c.into(), FMod::default()) as u16;
            if exact == 0 {
                // IEEE 754's exact zero: +0, or -0 when both the product and the addend are.
                let product_negative = (x < 0.0 || x.is_sign_negative()) != (y < 0.0 || y.is_sign_negative());
                let want = if product_negative && z.is_sign_negative() { 0x8000 } else { 0 };
                prop_assert_eq!(got, want);
            } else {
                let halves = finite_halves(HALF);
                let magnitude = exact.unsigned_abs() as i128;
                let want = oracle(HALF, &halves, exact < 0, Rnd::Rn, |h| {
                    // Halves above 2^64 units do not occur: the largest is 65504 * 2^48.
                    magnitude.cmp(&((h * 2f64.powi(48)) as i128))
                });
                prop_assert_eq!(got, want, "{} * {} + {}", x, y, z);
            }
        }

        /// An integer too wide for f64 converts to bfloat16 by its exact value.
        #[test]
        fn wide_integers_convert_to_bfloat16_by_their_exact_value(v in any::<i64>(), shift in 0u32..63) {
            let v = v >> shift;
            prop_assume!(v != 0);
            let halves = finite_halves(BFLOAT);
            for (rnd, name) in [(Rnd::Rn, "rn"), (Rnd::Rz, "rz"), (Rnd::Rm, "rm"), (Rnd::Rp, "rp")] {
                let got = cvt(Ty::BF16, Ty::S64, rnd, FMod::default(), v as u64, 16) as u16;
                let magnitude = (v as i128).abs();
                let want = oracle(BFLOAT, &halves, v < 0, rnd, |h| {
                    if h >= 2f64.powi(100) {
                        std::cmp::Ordering::Less
                    } else if h < 1.0 {
                        std::cmp::Ordering::Greater
                    } else {
                        // From one up, every bfloat16 is a whole number of 2^-7.
                        (magnitude << 8).cmp(&((h * 256.0) as i128))
                    }
                });
                prop_assert_eq!(got, want, "{} cvt.{}", v, name);
            }
        }
    }

    /// What an H100 gives, bit for bit (checked there on 16384 inputs of each instruction).
    #[test]
    fn nans_and_signed_zeros_on_halves_as_an_h100_gives_them() {
        let fm = FMod::default();
        for t in [Ty::F16, Ty::BF16] {
            let nan = if t == Ty::F16 { 0xfe01 } else { 0xff81 };
            assert_eq!(bin(BinOp::Add, t, nan, 0x3c00, fm), 0x7fff, "{t:?}");
            assert_eq!(un(UnOp::Neg, t, nan, fm), 0x7fff, "{t:?}");
            assert_eq!(bin(BinOp::Min, t, 0x0000, 0x8000, fm), 0x8000, "{t:?}");
            assert_eq!(bin(BinOp::Max, t, 0x8000, 0x0000, fm), 0x0000, "{t:?}");
            assert_eq!(bin(BinOp::Max, t, nan, 0x8000, fm), 0x8000, "{t:?}");
        }
        assert_eq!(cvt(Ty::F16, Ty::F32, Rnd::Rn, fm, 0xffc0_0001, 16), 0x7fff);
        assert_eq!(
            cvt(Ty::F32, Ty::F16, Rnd::Default, fm, 0xfe01, 32),
            0x7fff_ffff
        );
    }

    #[test]
    fn ftz_and_sat_on_halves() {
        let smallest = 0x0001u64;
        let fm = |ftz, sat| FMod {
            ftz,
            sat,
            rnd: Rnd::Default,
        };
        // 2^-24 + 2^-24: a subnormal sum, flushed under .ftz; its inputs too.
        assert_eq!(
            bin(BinOp::Add, Ty::F16, smallest, smallest, fm(false, false)),
            2
        );
        assert_eq!(
            bin(BinOp::Add, Ty::F16, smallest, smallest, fm(true, false)),
            0
        );
        assert_eq!(
            bin(BinOp::Add, Ty::F16, 0x8001, 0x3c00, fm(true, false)),
            0x3c00
        );
        // -1 * 1 + 0.5 = -0.5, saturated to 0; 1 * 1 + 0.5 to 1.
        assert_eq!(
            mad(
                Ty::F16,
                false,
                false,
                0xbc00,
                0x3c00,
                0x3800,
                fm(false, true)
            ),
            0
        );
        assert_eq!(
            mad(
                Ty::F16,
                false,
                false,
                0x3c00,
                0x3c00,
                0x3800,
                fm(false, true)
            ),
            0x3c00
        );
    }
}
