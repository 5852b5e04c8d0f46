//! Element types and the data a buffer holds on the host.

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value as Json, json};

use half::{bf16, f16};

use crate::device::Element;

/// The element types of buffers and scalars. `f16` and `bf16` are CUDA's `__half` and
/// `__nv_bfloat16`, written and shown as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    U8,
    I8,
    U16,
    I16,
    I32,
    U32,
    U64,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 12] = [
        Self::U8,
        Self::I8,
        Self::U16,
        Self::I16,
        Self::I32,
        Self::U32,
        Self::U64,
        Self::I64,
        Self::F16,
        Self::BF16,
        Self::F32,
        Self::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::U8 => "u8",
            Self::I8 => "i8",
            Self::U16 => "u16",
            Self::I16 => "i16",
            Self::I32 => "i32",
            Self::U32 => "u32",
            Self::U64 => "u64",
            Self::I64 => "i64",
            Self::F16 => "f16",
            Self::BF16 => "bf16",
            Self::F32 => "f32",
            Self::F64 => "f64",
        }
    }

    pub fn size(self) -> usize {
        match self {
            Self::U8 | Self::I8 => 1,
            Self::U16 | Self::I16 | Self::F16 | Self::BF16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::U64 | Self::I64 | Self::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Self::F16 | Self::BF16 | Self::F32 | Self::F64)
    }

    pub(super) fn article(self) -> &'static str {
        match self {
            Self::I8 | Self::I16 | Self::I32 | Self::I64 | Self::F16 | Self::F32 | Self::F64 => {
                "an"
            }
            Self::U8 | Self::U16 | Self::U32 | Self::U64 | Self::BF16 => "a",
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ElemType {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|ty| ty.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|ty| ty.name()).collect();
                format!(
                    "`{text}` is not a type; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// A sum, minimum or maximum: exact for integers, in the element's precision for floats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i128),
    F32(f32),
    F64(f64),
}

impl Number {
    pub(super) fn to_json(self) -> Json {
        match self {
            Self::Int(value) => {
                if let Ok(small) = i64::try_from(value) {
                    json!(small)
                } else if let Ok(large) = u64::try_from(value) {
                    json!(large)
                } else {
                    json!(value as f64)
                }
            }
            Self::F32(value) => json!(value),
            Self::F64(value) => json!(value),
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Int(value) => write!(f, "{value}"),
            Self::F32(value) => write!(f, "{value}"),
            Self::F64(value) => write!(f, "{value}"),
        }
    }
}

/// Sum, min and max of a buffer; NaNs are counted, not compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub sum: Number,
    pub min: Number,
    pub max: Number,
    pub nans: usize,
}

/// A value a buffer can hold, with what `--arg` needs to make one.
pub trait HostElement: Element + PartialOrd + fmt::Display {
    const TYPE: ElemType;
    /// Decimal, or `0x` hexadecimal for integers.
    fn parse_value(text: &str) -> Option<Self>;
    /// The `iota` fill: integers wrap.
    fn from_index(index: usize) -> Self;
    fn random(rng: &mut ChaCha8Rng) -> Self;
    /// `None` for no values.
    fn stats(values: &[Self]) -> Option<Stats>;
    fn into_data(values: Vec<Self>) -> HostData;
    fn slice(data: &HostData) -> Option<&[Self]>;
    /// Numbers for `--json` (halves as their values, not their bits).
    fn json(values: &[Self]) -> Json;
}

/// The contents of one buffer on the host, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum HostData {
    U8(Vec<u8>),
    I8(Vec<i8>),
    U16(Vec<u16>),
    I16(Vec<i16>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

macro_rules! with_data {
    ($data:expr, $values:ident => $body:expr) => {
        match $data {
            HostData::U8($values) => $body,
            HostData::I8($values) => $body,
            HostData::U16($values) => $body,
            HostData::I16($values) => $body,
            HostData::F16($values) => $body,
            HostData::BF16($values) => $body,
            HostData::I32($values) => $body,
            HostData::U32($values) => $body,
            HostData::U64($values) => $body,
            HostData::I64($values) => $body,
            HostData::F32($values) => $body,
            HostData::F64($values) => $body,
        }
    };
}

/// Calls `$function::<T>` with the Rust type of an [`ElemType`].
macro_rules! with_type {
    ($ty:expr, $function:ident ( $($arg:expr),* )) => {
        match $ty {
            ElemType::U8 => $function::<u8>($($arg),*),
            ElemType::I8 => $function::<i8>($($arg),*),
            ElemType::U16 => $function::<u16>($($arg),*),
            ElemType::I16 => $function::<i16>($($arg),*),
            ElemType::F16 => $function::<f16>($($arg),*),
            ElemType::BF16 => $function::<bf16>($($arg),*),
            ElemType::I32 => $function::<i32>($($arg),*),
            ElemType::U32 => $function::<u32>($($arg),*),
            ElemType::U64 => $function::<u64>($($arg),*),
            ElemType::I64 => $function::<i64>($($arg),*),
            ElemType::F32 => $function::<f32>($($arg),*),
            ElemType::F64 => $function::<f64>($($arg),*),
        }
    };
}

macro_rules! int_element {
    ($($ty:ty => $variant:ident, $range:expr;)*) => {$(
        impl HostElement for $ty {
            const TYPE: ElemType = ElemType::$variant;

            fn parse_value(text: &str) -> Option<Self> {
                match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                    Some(hex) => <$ty>::from_str_radix(hex, 16).ok(),
                    None => text.parse().ok(),
                }
            }

            fn from_index(index: usize) -> Self {
                index as $ty
            }

            fn random(rng: &mut ChaCha8Rng) -> Self {
                rng.random_range($range)
            }

            fn stats(values: &[Self]) -> Option<Stats> {
                let (&first, _) = values.split_first()?;
                let (mut sum, mut min, mut max) = (0i128, first, first);
                for &value in values {
                    sum += i128::from(value);
                    min = min.min(value);
                    max = max.max(value);
                }
                Some(Stats {
                    sum: Number::Int(sum),
                    min: Number::Int(min.into()),
                    max: Number::Int(max.into()),
                    nans: 0,
                })
            }

            fn into_data(values: Vec<Self>) -> HostData {
                HostData::$variant(values)
            }

            fn slice(data: &HostData) -> Option<&[Self]> {
                match data {
                    HostData::$variant(values) => Some(values),
                    _ => None,
                }
            }

            fn json(values: &[Self]) -> Json {
                json!(values)
            }
        }
    )*};
}

int_element! {
    u8 => U8, 0..=u8::MAX;
    i8 => I8, i8::MIN..=i8::MAX;
    u16 => U16, 0..1000;
    i16 => I16, -1000..1000;
    i32 => I32, -1000..1000;
    u32 => U32, 0..1000;
    u64 => U64, 0..1000;
    i64 => I64, -1000..1000;
}

/// Where a float buffer's sum starts: -0.0, as `Iterator::sum` starts, so that a sum of
/// negative zeros is -0 (the reports' sums are the ones `sum()` gave). Stats take one pass over
/// a buffer, not four: a shown 16 MiB buffer's took 16 ms.
const SUM_START: f64 = -0.0;

macro_rules! float_element {
    ($($ty:ty => $variant:ident;)*) => {$(
        impl HostElement for $ty {
            const TYPE: ElemType = ElemType::$variant;

            fn parse_value(text: &str) -> Option<Self> {
                text.parse().ok()
            }

            fn from_index(index: usize) -> Self {
                index as $ty
            }

            fn random(rng: &mut ChaCha8Rng) -> Self {
                rng.random()
            }

            fn stats(values: &[Self]) -> Option<Stats> {
                if values.is_empty() {
                    return None;
                }
                // Summed in f64 so the sum says what the values add up to, not how f32 rounds.
                let (mut sum, mut min, mut max, mut nans) = (SUM_START, <$ty>::NAN, <$ty>::NAN, 0);
                for &value in values {
                    sum += f64::from(value);
                    if value.is_nan() {
                        nans += 1;
                    } else {
                        min = min.min(value);
                        max = max.max(value);
                    }
                }
                Some(Stats {
                    sum: Number::F64(sum),
                    min: Number::$variant(min),
                    max: Number::$variant(max),
                    nans,
                })
            }

            fn into_data(values: Vec<Self>) -> HostData {
                HostData::$variant(values)
            }

            fn slice(data: &HostData) -> Option<&[Self]> {
                match data {
                    HostData::$variant(values) => Some(values),
                    _ => None,
                }
            }

            fn json(values: &[Self]) -> Json {
                json!(values)
            }
        }
    )*};
}

/// CUDA's 16-bit floats: parsed, generated and summed through f32 and f64, shown as numbers.
macro_rules! half_element {
    ($($ty:ty => $variant:ident;)*) => {$(
        impl HostElement for $ty {
            const TYPE: ElemType = ElemType::$variant;

            fn parse_value(text: &str) -> Option<Self> {
                let value: f32 = text.parse().ok()?;
                let half = <$ty>::from_f32(value);
                // A finite number too large for 16 bits is a typo, not infinity.
                (half.is_finite() || !value.is_finite()).then_some(half)
            }

            fn from_index(index: usize) -> Self {
                <$ty>::from_f64(index as f64)
            }

            fn random(rng: &mut ChaCha8Rng) -> Self {
                <$ty>::from_f32(rng.random::<f32>())
            }

            fn stats(values: &[Self]) -> Option<Stats> {
                if values.is_empty() {
                    return None;
                }
                let (mut sum, mut min, mut max, mut nans) = (SUM_START, f32::NAN, f32::NAN, 0);
                for value in values {
                    sum += value.to_f64();
                    if value.is_nan() {
                        nans += 1;
                    } else {
                        min = min.min(value.to_f32());
                        max = max.max(value.to_f32());
                    }
                }
                Some(Stats {
                    sum: Number::F64(sum),
                    min: Number::F32(min),
                    max: Number::F32(max),
                    nans,
                })
            }

            fn into_data(values: Vec<Self>) -> HostData {
                HostData::$variant(values)
            }

            fn slice(data: &HostData) -> Option<&[Self]> {
                match data {
                    HostData::$variant(values) => Some(values),
                    _ => None,
                }
            }

            fn json(values: &[Self]) -> Json {
                json!(values.iter().map(|value| value.to_f32()).collect::<Vec<_>>())
            }
        }
    )*};
}

half_element! {
    f16 => F16;
    bf16 => BF16;
}

float_element! {
    f32 => F32;
    f64 => F64;
}

pub(super) fn parse_typed<T: HostElement>(text: &str) -> Result<T, String> {
    T::parse_value(text.trim()).ok_or_else(|| {
        let ty = T::TYPE;
        if ty.is_float() {
            format!("`{text}` is not {} {ty} number", ty.article())
        } else {
            let (min, max) = int_range(ty);
            format!(
                "`{text}` is not {} {ty}: expected an integer from {min} to {max}",
                ty.article()
            )
        }
    })
}

fn int_range(ty: ElemType) -> (i128, i128) {
    match ty {
        ElemType::U8 => (0, u8::MAX.into()),
        ElemType::I8 => (i8::MIN.into(), i8::MAX.into()),
        ElemType::U16 => (0, u16::MAX.into()),
        ElemType::I16 => (i16::MIN.into(), i16::MAX.into()),
        ElemType::I32 => (i32::MIN.into(), i32::MAX.into()),
        ElemType::U32 => (0, u32::MAX.into()),
        ElemType::U64 => (0, u64::MAX.into()),
        ElemType::I64 => (i64::MIN.into(), i64::MAX.into()),
        ElemType::F16 | ElemType::BF16 | ElemType::F32 | ElemType::F64 => (0, 0),
    }
}

pub(super) fn check_typed<T: HostElement>(text: &str) -> Result<(), String> {
    parse_typed::<T>(text).map(drop)
}

fn data_from_bytes<T: HostElement>(bytes: &[u8]) -> HostData {
    T::into_data(bytemuck::pod_collect_to_vec(bytes))
}

impl<T: HostElement> From<Vec<T>> for HostData {
    fn from(values: Vec<T>) -> Self {
        T::into_data(values)
    }
}

impl HostData {
    pub fn ty(&self) -> ElemType {
        match self {
            Self::U8(_) => ElemType::U8,
            Self::I8(_) => ElemType::I8,
            Self::U16(_) => ElemType::U16,
            Self::I16(_) => ElemType::I16,
            Self::F16(_) => ElemType::F16,
            Self::BF16(_) => ElemType::BF16,
            Self::I32(_) => ElemType::I32,
            Self::U32(_) => ElemType::U32,
            Self::U64(_) => ElemType::U64,
            Self::I64(_) => ElemType::I64,
            Self::F32(_) => ElemType::F32,
            Self::F64(_) => ElemType::F64,
        }
    }

    pub fn len(&self) -> usize {
        with_data!(self, values => values.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn as_bytes(&self) -> &[u8] {
        with_data!(self, values => bytemuck::cast_slice(values))
    }

    /// Bytes in the host's order (little-endian, as on the GPU) as `ty`s; a trailing partial
    /// element is dropped.
    pub fn from_bytes(ty: ElemType, bytes: &[u8]) -> Self {
        let whole = bytes.len() - bytes.len() % ty.size();
        with_type!(ty, data_from_bytes(&bytes[..whole]))
    }

    /// The values, when they are `T`s.
    pub fn values<T: HostElement>(&self) -> Option<&[T]> {
        T::slice(self)
    }

    /// `None` for an empty buffer.
    pub fn stats(&self) -> Option<Stats> {
        with_data!(self, values => HostElement::stats(values))
    }

    pub(super) fn head(&self, count: usize) -> Vec<String> {
        with_data!(self, values => values.iter().take(count).map(ToString::to_string).collect())
    }

    pub(super) fn to_json(&self) -> Json {
        with_data!(self, values => HostElement::json(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_exact_for_integers_and_skip_nans() {
        let ints = HostData::U64(vec![u64::MAX, u64::MAX, 3]).stats().unwrap();
        assert_eq!(ints.sum, Number::Int(2 * i128::from(u64::MAX) + 3));
        assert_eq!(
            (ints.min, ints.max),
            (Number::Int(3), Number::Int(u64::MAX.into()))
        );
        let floats = HostData::F32(vec![1.5, f32::NAN, -2.0]).stats().unwrap();
        assert_eq!(
            (floats.min, floats.max, floats.nans),
            (Number::F32(-2.0), Number::F32(1.5), 1)
        );
        assert!(HostData::I32(Vec::new()).stats().is_none());
    }

    /// Stats in one pass are what the separate folds gave: the sum in order from `sum()`'s
    /// start, the smallest and largest non-NaN in order (so which zero a tie keeps is the same).
    #[test]
    fn stats_in_one_pass_are_those_of_separate_folds() {
        let mut rng = crate::cli::seeded_rng(5);
        let mut floats: Vec<f32> = (0..10_000)
            .map(|_| rng.random::<f32>() * 2e6 - 1e6)
            .collect();
        floats.extend([0.0, -0.0, f32::NAN, f32::INFINITY, -0.0, 1e-45]);
        for values in [
            floats.clone(),
            vec![-0.0; 5],
            vec![0.0, -0.0],
            vec![-0.0, 0.0],
            vec![f32::NAN; 3],
            vec![-0.0, f32::NAN],
        ] {
            let numbers = values.iter().copied().filter(|value| !value.is_nan());
            let expected = Stats {
                sum: Number::F64(values.iter().map(|&value| f64::from(value)).sum()),
                min: Number::F32(numbers.clone().fold(f32::NAN, f32::min)),
                max: Number::F32(numbers.fold(f32::NAN, f32::max)),
                nans: values.iter().filter(|value| value.is_nan()).count(),
            };
            let got = HostData::F32(values.clone()).stats().unwrap();
            let bits = |stats: &Stats| {
                let bits = |number: Number| match number {
                    Number::F32(value) => u64::from(value.to_bits()),
                    Number::F64(value) => value.to_bits(),
                    Number::Int(_) => unreachable!(),
                };
                (
                    bits(stats.sum),
                    bits(stats.min),
                    bits(stats.max),
                    stats.nans,
                )
            };
            assert_eq!(bits(&got), bits(&expected), "{values:?}");
            let halves: Vec<f16> = values.iter().map(|&value| f16::from_f32(value)).collect();
            let numbers = halves.iter().map(|v| v.to_f32()).filter(|v| !v.is_nan());
            let expected = Stats {
                sum: Number::F64(halves.iter().map(|value| value.to_f64()).sum()),
                min: Number::F32(numbers.clone().fold(f32::NAN, f32::min)),
                max: Number::F32(numbers.fold(f32::NAN, f32::max)),
                nans: halves.iter().filter(|value| value.is_nan()).count(),
            };
            assert_eq!(
                bits(&HostData::F16(halves).stats().unwrap()),
                bits(&expected)
            );
        }
        let ints: Vec<i64> = (0..1000).map(|_| rng.random_range(-1000..1000)).collect();
        let stats = HostData::I64(ints.clone()).stats().unwrap();
        assert_eq!(
            stats.sum,
            Number::Int(ints.iter().map(|&v| i128::from(v)).sum())
        );
        assert_eq!(stats.min, Number::Int((*ints.iter().min().unwrap()).into()));
        assert_eq!(stats.max, Number::Int((*ints.iter().max().unwrap()).into()));
    }
}
