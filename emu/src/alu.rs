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
        Ty::BF16 => {
            let (x, y) = (bf16_to_f32(a as u16), bf16_to_f32(b as u16));
            // f32 carries more than twice bf16's precision: rounding twice is rounding once.
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::MulLo => x * y,
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                _ => return bin_int(op, Ty::B16, a, b, fm.sat),
            };
            u64::from(f32_to_bf16(sat32(r, fm.sat)))
        }
        Ty::F16 => {
            let (x, y) = (f16_to_f32(a as u16), f16_to_f32(b as u16));
            // Rounded to f32, then to f16: f32 carries more than twice f16's precision, so the
            // two roundings give the correctly rounded half (round to nearest; parse refuses
            // the directed modes).
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::MulLo => x * y,
                BinOp::Min => x.min(y),
                BinOp::Max => x.max(y),
                _ => return bin_int(op, Ty::B16, a, b, fm.sat),
            };
            u64::from(f32_to_f16(sat32(r, fm.sat)))
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
        Ty::BF16 => {
            let (x, y, z) = (
                bf16_to_f32(a as u16) as f64,
                bf16_to_f32(b as u16) as f64,
                bf16_to_f32(c as u16) as f64,
            );
            u64::from(f32_to_bf16(sat32((x * y + z) as f32, fm.sat)))
        }
        Ty::F16 => {
            let (x, y, z) = (
                f16_to_f32(a as u16) as f64,
                f16_to_f32(b as u16) as f64,
                f16_to_f32(c as u16) as f64,
            );
            // The product of two halves is exact in f64 and so, but for halves far apart in
            // magnitude, is the sum; one rounding to f32 and one to f16 follow.
            u64::from(f32_to_f16(sat32((x * y + z) as f32, fm.sat)))
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
                Ty::BF16 => f32_to_bf16(sat32(x as f32, fm.sat)) as u64,
                _ => f32_to_f16(sat32(x as f32, fm.sat)) as u64,
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
            Ty::BF16 => f32_to_bf16(sat32(x as f32, fm.sat)) as u64,
            _ => f32_to_f16(sat32(x as f32, fm.sat)) as u64,
        };
    }
    if fm.sat {
        let (lo, hi) = int_range(dty);
        return mask(x.clamp(lo, hi) as u64, dty.bits());
    }
    mask(x as u64, dty.bits())
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

pub(crate) fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 6.103_515_6e-5 {
        // Subnormal half: multiples of 2^-24, rounded to nearest even.
        let v = (a as f64 * 16_777_216.0).round_ties_even() as u16;
        return sign | v;
    }
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x7f_ffff;
    let mut h = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && (h & 1) == 1) {
        h += 1;
    }
    sign | h as u16
}

/// A bfloat16 is the high half of an f32.
pub(crate) fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Rounds to the nearest bfloat16, ties to even; NaNs stay NaNs.
pub(crate) fn f32_to_bf16(x: f32) -> u16 {
    if x.is_nan() {
        return ((x.to_bits() >> 16) as u16) | 0x0040;
    }
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1));
    (rounded >> 16) as u16
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
        Half2Op::Fma => mad(ty, false, false, half(a, i), half(b, i), half(c, i), fm),
        Half2Op::Un(op) => un(op, ty, half(a, i), fm),
        // `cvt.rn.f16x2.f32 d, a, b`: `a` goes to the high half.
        Half2Op::PackFromF32 => {
            let source = if i == 1 { a } else { b };
            cvt(ty, Ty::F32, Rnd::Rn, fm, mask(source, 32), 16)
        }
    } & 0xffff;
    lane(0) | (lane(1) << 16)
}
