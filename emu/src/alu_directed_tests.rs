//! Directed rounding (`.rz`, `.rm`, `.rp`) of `add`, `sub`, `mul`, `div`, `fma`, `sqrt` and
//! `rcp` on f32 and f64, against exact rational arithmetic on big integers: a reference that
//! shares nothing with the emulator's residuals and accumulator.

use std::cmp::Ordering;

use num_bigint::BigInt;
use proptest::prelude::*;

use crate::alu::{bin, mad, un};
use crate::ir::{BinOp, FMod, Rnd, Ty, UnOp};

/// An exact rational `num / den`, `den > 0`.
#[derive(Clone, Debug)]
struct Exact {
    num: BigInt,
    den: BigInt,
}

impl Exact {
    fn of(x: f64) -> Exact {
        assert!(x.is_finite());
        let bits = x.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1 << 52) - 1);
        let (m, e) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1 << 52), exponent - 1075)
        };
        let m = if bits >> 63 != 0 {
            -BigInt::from(m)
        } else {
            BigInt::from(m)
        };
        if e >= 0 {
            Exact {
                num: m << e as usize,
                den: BigInt::from(1),
            }
        } else {
            Exact {
                num: m,
                den: BigInt::from(1) << (-e) as usize,
            }
        }
    }
    fn add(&self, o: &Exact) -> Exact {
        Exact {
            num: &self.num * &o.den + &o.num * &self.den,
            den: &self.den * &o.den,
        }
    }
    fn neg(&self) -> Exact {
        Exact {
            num: -&self.num,
            den: self.den.clone(),
        }
    }
    fn mul(&self, o: &Exact) -> Exact {
        Exact {
            num: &self.num * &o.num,
            den: &self.den * &o.den,
        }
    }
    fn div(&self, o: &Exact) -> Exact {
        let (num, den) = (&self.num * &o.den, &self.den * &o.num);
        if den < BigInt::from(0) {
            Exact {
                num: -num,
                den: -den,
            }
        } else {
            Exact { num, den }
        }
    }
    fn cmp(&self, o: &Exact) -> Ordering {
        (&self.num * &o.den).cmp(&(&o.num * &self.den))
    }
}

/// Whether `r` is the exact value `cmp_exact` describes, rounded under `rnd`: `cmp_exact(v)`
/// says how a finite `v` compares with the exact value.
fn rounded_right(r: f64, max: f64, rnd: Rnd, cmp_exact: &dyn Fn(f64) -> Ordering) -> bool {
    use Ordering::*;
    let up = |v: f64| {
        if v == max {
            f64::INFINITY
        } else {
            next_above(v, max)
        }
    };
    let down = |v: f64| -up(-v);
    // Rounding down: the largest value at or below the exact one.
    let down_ok = |r: f64| match r {
        r if r == f64::NEG_INFINITY => cmp_exact(-max) == Greater,
        r if r.is_finite() => cmp_exact(r) != Greater && (r == max || cmp_exact(up(r)) == Greater),
        _ => false,
    };
    let up_ok = |r: f64| match r {
        r if r == f64::INFINITY => cmp_exact(max) == Less,
        r if r.is_finite() => cmp_exact(r) != Less && (r == -max || cmp_exact(down(r)) == Less),
        _ => false,
    };
    match rnd {
        Rnd::Rm => down_ok(r),
        Rnd::Rp => up_ok(r),
        _ => match cmp_exact(0.0) {
            Less => down_ok(r),
            Greater => up_ok(r),
            Equal => r == 0.0,
        },
    }
}

/// The next value above `v` in the format whose largest finite value is `max`.
fn next_above(v: f64, max: f64) -> f64 {
    if max == f32::MAX as f64 {
        (v as f32).next_up() as f64
    } else {
        v.next_up()
    }
}

/// Doubles from all over the range: raw bit patterns (subnormals and extremes included),
/// small integers (exact results, ties), and values near 1.
fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        (-64i32..64).prop_map(f64::from),
        (any::<u32>(), -1074i32..1024).prop_map(|(m, e)| m as f64 / 2f64.powi(31) * 2f64.powi(e)),
        (1u64..1 << 20).prop_map(|k| f64::from_bits(1.0f64.to_bits() + k)),
    ]
    .prop_filter("finite", |x| x.is_finite())
}

fn any_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        (-64i32..64).prop_map(|v| v as f32),
        (1u32..1 << 12).prop_map(|k| f32::from_bits(1.0f32.to_bits() + k)),
    ]
    .prop_filter("finite", |x| x.is_finite())
}

fn directed() -> impl Strategy<Value = Rnd> {
    prop_oneof![Just(Rnd::Rz), Just(Rnd::Rm), Just(Rnd::Rp)]
}

fn fm(rnd: Rnd) -> FMod {
    FMod {
        rnd,
        ..FMod::default()
    }
}

fn binary64(op: BinOp, x: f64, y: f64, rnd: Rnd) -> f64 {
    f64::from_bits(bin(op, Ty::F64, x.to_bits(), y.to_bits(), fm(rnd)))
}

fn binary32(op: BinOp, x: f32, y: f32, rnd: Rnd) -> f64 {
    f32::from_bits(bin(op, Ty::F32, x.to_bits() as u64, y.to_bits() as u64, fm(rnd)) as u32) as f64
}

/// Checks `r` against the exact value `e`, in the format whose largest value is `max`.
fn check(r: f64, e: &Exact, max: f64, rnd: Rnd) -> Result<(), TestCaseError> {
    let cmp_exact = |v: f64| Exact::of(v).cmp(e);
    prop_assert!(
        rounded_right(r, max, rnd, &cmp_exact),
        "{r:e} is not {e:?} rounded {rnd:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn f64_add_sub_mul_div_round_in_their_direction(x in any_f64(), y in any_f64(), rnd in directed()) {
        let (ex, ey) = (Exact::of(x), Exact::of(y));
        check(binary64(BinOp::Add, x, y, rnd), &ex.add(&ey), f64::MAX, rnd)?;
        check(binary64(BinOp::Sub, x, y, rnd), &ex.add(&ey.neg()), f64::MAX, rnd)?;
        check(binary64(BinOp::MulLo, x, y, rnd), &ex.mul(&ey), f64::MAX, rnd)?;
        if y != 0.0 {
            check(binary64(BinOp::Div, x, y, rnd), &ex.div(&ey), f64::MAX, rnd)?;
            let rcp = f64::from_bits(un(UnOp::Rcp, Ty::F64, y.to_bits(), fm(rnd)));
            check(rcp, &Exact::of(1.0).div(&ey), f64::MAX, rnd)?;
        }
    }

    #[test]
    fn f64_fma_rounds_once_in_its_direction(x in any_f64(), y in any_f64(), z in any_f64(), rnd in directed()) {
        let r = f64::from_bits(mad(Ty::F64, false, false, x.to_bits(), y.to_bits(), z.to_bits(), fm(rnd)));
        check(r, &Exact::of(x).mul(&Exact::of(y)).add(&Exact::of(z)), f64::MAX, rnd)?;
    }

    #[test]
    fn f64_fma_of_a_product_and_its_negation_leaves_the_residual(x in any_f64(), y in any_f64(), rnd in directed()) {
        // z cancels the product but for its rounding error: the hard case for the sign.
        let z = -(x * y);
        prop_assume!(z.is_finite());
        let r = f64::from_bits(mad(Ty::F64, false, false, x.to_bits(), y.to_bits(), z.to_bits(), fm(rnd)));
        check(r, &Exact::of(x).mul(&Exact::of(y)).add(&Exact::of(z)), f64::MAX, rnd)?;
    }

    #[test]
    fn f64_sqrt_rounds_in_its_direction(
        x in prop_oneof![any_f64(), (1u64..1 << 52).prop_map(f64::from_bits)],
        rnd in directed(),
    ) {
        // The second source is the subnormals, whose roots' squares fall below every double.
        let x = x.abs();
        let r = f64::from_bits(un(UnOp::Sqrt, Ty::F64, x.to_bits(), fm(rnd)));
        // r against sqrt(x) is r*r against x, for r >= 0.
        let ex = Exact::of(x);
        let cmp_exact = |v: f64| {
            if v < 0.0 {
                Ordering::Less
            } else {
                Exact::of(v).mul(&Exact::of(v)).cmp(&ex)
            }
        };
        prop_assert!(rounded_right(r, f64::MAX, rnd, &cmp_exact), "sqrt({x:e}) {rnd:?} gave {r:e}");
    }

    #[test]
    fn f32_arithmetic_rounds_in_its_direction(x in any_f32(), y in any_f32(), z in any_f32(), rnd in directed()) {
        let max = f32::MAX as f64;
        let (ex, ey, ez) = (Exact::of(x as f64), Exact::of(y as f64), Exact::of(z as f64));
        check(binary32(BinOp::Add, x, y, rnd), &ex.add(&ey), max, rnd)?;
        check(binary32(BinOp::Sub, x, y, rnd), &ex.add(&ey.neg()), max, rnd)?;
        check(binary32(BinOp::MulLo, x, y, rnd), &ex.mul(&ey), max, rnd)?;
        if y != 0.0 {
            check(binary32(BinOp::Div, x, y, rnd), &ex.div(&ey), max, rnd)?;
        }
        let bits = |v: f32| v.to_bits() as u64;
        let fused = mad(Ty::F32, false, false, bits(x), bits(y), bits(z), fm(rnd));
        check(f32::from_bits(fused as u32) as f64, &ex.mul(&ey).add(&ez), max, rnd)?;
        let x = x.abs();
        let root = f32::from_bits(un(UnOp::Sqrt, Ty::F32, bits(x), fm(rnd)) as u32) as f64;
        let ex = Exact::of(x as f64);
        let cmp_exact = |v: f64| if v < 0.0 { Ordering::Less } else { Exact::of(v).mul(&Exact::of(v)).cmp(&ex) };
        prop_assert!(rounded_right(root, max, rnd, &cmp_exact), "sqrt({x:e}) {rnd:?} gave {root:e}");
    }
}

#[test]
fn an_exact_zero_sum_is_minus_zero_only_rounding_down() {
    for (rnd, negative) in [(Rnd::Rz, false), (Rnd::Rp, false), (Rnd::Rm, true)] {
        let r = f64::from_bits(mad(
            Ty::F64,
            false,
            false,
            2f64.to_bits(),
            3f64.to_bits(),
            (-6f64).to_bits(),
            fm(rnd),
        ));
        assert_eq!((r, r.is_sign_negative()), (0.0, negative), "{rnd:?}");
    }
}

#[test]
fn a_quotient_by_zero_is_infinite_under_every_rounding() {
    for rnd in [Rnd::Rz, Rnd::Rm, Rnd::Rp] {
        assert_eq!(binary64(BinOp::Div, 1.0, 0.0, rnd), f64::INFINITY);
        assert_eq!(binary64(BinOp::Div, -1.0, 0.0, rnd), f64::NEG_INFINITY);
    }
    assert!(binary64(BinOp::Div, 0.0, 0.0, Rnd::Rp).is_nan());
}

#[test]
fn one_third_rounds_down_and_up_one_step_apart() {
    let down = binary64(BinOp::Div, 1.0, 3.0, Rnd::Rm);
    let up = binary64(BinOp::Div, 1.0, 3.0, Rnd::Rp);
    assert_eq!(up.to_bits(), down.to_bits() + 1);
    assert_eq!(binary64(BinOp::Div, 1.0, 3.0, Rnd::Rz), down);
    assert_eq!(binary64(BinOp::Div, -1.0, 3.0, Rnd::Rz), -down);
}
