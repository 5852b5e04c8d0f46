//! Device `printf`: C's formatting rules applied to the argument buffer that NVRTC packs for
//! `vprintf(format, args)`.
//!
//! The buffer holds each argument after C's default promotions, at its natural alignment:
//! `char`/`short`/`int` as 4 bytes, `long`/`long long`/pointers as 8, `float` promoted to an
//! 8-byte `double`. So the conversion (and its length modifier) says how many bytes to read next.
//! Digits come from Rust's float formatting, which is exact and rounds ties to even like glibc;
//! the rest (flags, widths, `%g`'s choice of style, exponent digits, `%a`) follows the C standard.

/// Widths and precisions are capped here, so that one conversion cannot ask for gigabytes.
const MAX_FIELD: usize = 1 << 16;

/// Formats `format` with arguments read by `arg(offset, size)` from the packed buffer, and
/// strings (`%s`) by `string(address)`. Returns the output and what CUDA's `printf` returns: the
/// number of arguments the format consumed.
pub(crate) fn format(
    format: &[u8],
    mut arg: impl FnMut(usize, usize) -> u64,
    mut string: impl FnMut(u64) -> Vec<u8>,
) -> (Vec<u8>, i32) {
    let mut out = Vec::new();
    let mut offset = 0usize;
    let mut consumed = 0i32;
    let mut next = |size: usize| -> u64 {
        offset = offset.div_ceil(size) * size;
        let v = arg(offset, size);
        offset += size;
        consumed += 1;
        v
    };
    let mut i = 0;
    while i < format.len() {
        let c = format[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut spec = Spec::default();
        while let Some(&f) = format.get(i) {
            match f {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        if format.get(i) == Some(&b'*') {
            i += 1;
            let w = next(4) as u32 as i32;
            if w < 0 {
                spec.left = true;
            }
            spec.width = (w.unsigned_abs() as usize).min(MAX_FIELD);
        } else {
            spec.width = digits(format, &mut i);
        }
        if format.get(i) == Some(&b'.') {
            i += 1;
            if format.get(i) == Some(&b'*') {
                i += 1;
                let p = next(4) as u32 as i32;
                spec.precision = (p >= 0).then_some((p as usize).min(MAX_FIELD));
            } else {
                spec.precision = Some(digits(format, &mut i));
            }
        }
        let mut length = Length::Int;
        while let Some(&m) = format.get(i) {
            length = match (m, length) {
                (b'h', Length::Short) => Length::Char,
                (b'h', _) => Length::Short,
                (b'l', Length::Long) | (b'L' | b'q' | b'j' | b'z' | b't', _) => Length::LongLong,
                (b'l', _) => Length::Long,
                _ => break,
            };
            i += 1;
        }
        let Some(&conv) = format.get(i) else {
            out.extend_from_slice(&format[start..]);
            break;
        };
        i += 1;
        let wide = matches!(length, Length::Long | Length::LongLong);
        match conv {
            b'%' => out.push(b'%'),
            b'd' | b'i' => {
                let raw = next(if wide { 8 } else { 4 });
                let v = match length {
                    Length::Char => raw as i8 as i64,
                    Length::Short => raw as i16 as i64,
                    Length::Int => raw as i32 as i64,
                    Length::Long | Length::LongLong => raw as i64,
                };
                let sign = if v < 0 {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                let body = int_digits(v.unsigned_abs(), 10, false, spec.precision);
                spec.pad_number(&mut out, sign, "", &body, spec.precision.is_none());
            }
            b'u' | b'x' | b'X' | b'o' => {
                let raw = next(if wide { 8 } else { 4 });
                let v = match length {
                    Length::Char => raw as u8 as u64,
                    Length::Short => raw as u16 as u64,
                    Length::Int => raw as u32 as u64,
                    Length::Long | Length::LongLong => raw,
                };
                let (radix, upper) = match conv {
                    b'x' => (16, false),
                    b'X' => (16, true),
                    b'o' => (8, false),
                    _ => (10, false),
                };
                let mut body = int_digits(v, radix, upper, spec.precision);
                let mut prefix = "";
                if spec.alt && v != 0 && radix == 16 {
                    prefix = if upper { "0X" } else { "0x" };
                }
                if spec.alt && radix == 8 && !body.starts_with('0') {
                    body.insert(0, '0');
                }
                spec.pad_number(&mut out, "", prefix, &body, spec.precision.is_none());
            }
            b'c' => {
                let v = next(4) as u8;
                spec.pad_bytes(&mut out, &[v]);
            }
            b's' => {
                let addr = next(8);
                let mut s = if addr == 0 {
                    b"(null)".to_vec()
                } else {
                    string(addr)
                };
                if let Some(p) = spec.precision {
                    s.truncate(p);
                }
                spec.pad_bytes(&mut out, &s);
            }
            b'p' => {
                let v = next(8);
                if v == 0 {
                    spec.zero = false;
                    spec.pad_bytes(&mut out, b"(nil)");
                } else {
                    let sign = if spec.plus {
                        "+"
                    } else if spec.space {
                        " "
                    } else {
                        ""
                    };
                    let body = int_digits(v, 16, false, spec.precision);
                    spec.pad_number(&mut out, sign, "0x", &body, spec.precision.is_none());
                }
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(next(8));
                let sign = if v.is_sign_negative() {
                    "-"
                } else if spec.plus {
                    "+"
                } else if spec.space {
                    " "
                } else {
                    ""
                };
                let upper = conv.is_ascii_uppercase();
                if !v.is_finite() {
                    let word = match (v.is_nan(), upper) {
                        (true, false) => "nan",
                        (true, true) => "NAN",
                        (false, false) => "inf",
                        (false, true) => "INF",
                    };
                    spec.pad_number(&mut out, sign, "", word, false);
                    continue;
                }
                let a = v.abs();
                let (prefix, body) = match conv.to_ascii_lowercase() {
                    b'f' => ("", fixed(a, spec.precision.unwrap_or(6), spec.alt)),
                    b'e' => ("", sci(a, spec.precision.unwrap_or(6), spec.alt, upper)),
                    b'g' => ("", general(a, spec.precision.unwrap_or(6), spec.alt, upper)),
                    _ => (
                        if upper { "0X" } else { "0x" },
                        hex_float(a, spec.precision, spec.alt, upper),
                    ),
                };
                spec.pad_number(&mut out, sign, prefix, &body, true);
            }
            b'n' => {
                // Writing through a pointer from printf is not something a kernel needs; skip it.
                next(8);
            }
            _ => out.extend_from_slice(&format[start..i]),
        }
    }
    (out, consumed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Length {
    Char,
    Short,
    Int,
    Long,
    LongLong,
}

#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
}

impl Spec {
    /// `sign prefix body`, padded to the width: with the `0` flag (which C ignores for integers
    /// with a precision, and for inf/nan) zeros go between prefix and body.
    fn pad_number(&self, out: &mut Vec<u8>, sign: &str, prefix: &str, body: &str, zero_ok: bool) {
        let len = sign.len() + prefix.len() + body.len();
        let fill = self.width.saturating_sub(len);
        if self.left {
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(body.as_bytes());
            out.extend(std::iter::repeat_n(b' ', fill));
        } else if self.zero && zero_ok {
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(prefix.as_bytes());
            out.extend(std::iter::repeat_n(b'0', fill));
            out.extend_from_slice(body.as_bytes());
        } else {
            out.extend(std::iter::repeat_n(b' ', fill));
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(prefix.as_bytes());
            out.extend_from_slice(body.as_bytes());
        }
    }

    fn pad_bytes(&self, out: &mut Vec<u8>, body: &[u8]) {
        let fill = self.width.saturating_sub(body.len());
        if !self.left {
            out.extend(std::iter::repeat_n(b' ', fill));
        }
        out.extend_from_slice(body);
        if self.left {
            out.extend(std::iter::repeat_n(b' ', fill));
        }
    }
}

fn digits(s: &[u8], i: &mut usize) -> usize {
    let mut n = 0usize;
    while let Some(d) = s.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n
            .saturating_mul(10)
            .saturating_add((d - b'0') as usize)
            .min(MAX_FIELD);
        *i += 1;
    }
    n
}

/// The digits of `v` with at least `precision` of them (C: precision 0 and value 0 print none).
fn int_digits(v: u64, radix: u32, upper: bool, precision: Option<usize>) -> String {
    let mut s = match radix {
        16 if upper => format!("{v:X}"),
        16 => format!("{v:x}"),
        8 => format!("{v:o}"),
        _ => v.to_string(),
    };
    match precision {
        Some(0) if v == 0 => s.clear(),
        Some(p) if s.len() < p => s.insert_str(0, &"0".repeat(p - s.len())),
        _ => {}
    }
    s
}

fn fixed(a: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// `d.ddde±XX`, from Rust's exact `{:e}` (which writes `e5` / `e-5`).
fn sci(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut m = mantissa.to_string();
    if alt && precision == 0 {
        m.push('.');
    }
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{m}{e}{sign}{:02}", exp.unsigned_abs())
}

/// `%g`: `%e` when the exponent is below -4 or at least the precision, `%f` otherwise, with
/// trailing zeros removed unless `#`.
fn general(a: f64, precision: usize, alt: bool, upper: bool) -> String {
    let p = precision.max(1);
    let probe = format!("{a:.prec$e}", prec = p - 1);
    let exp: i64 = probe
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    // The exponent before rounding: the C library picks %f for it, and when rounding then
    // carries into one more digit (99.5 at two digits) it writes %e with %f's digits after the
    // point, none, so `%#.2g` prints `1.e+02` (the standard's reading gives `1.0e+02`); the
    // emulator follows the C library that its tests hold it to.
    let unrounded: i64 = format!("{a:e}")
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(exp);
    let mut s = if exp == p as i64 && unrounded == p as i64 - 1 {
        sci(a, 0, alt, upper)
    } else if exp < -4 || exp >= p as i64 {
        sci(a, p - 1, alt, upper)
    } else {
        fixed(a, (p as i64 - 1 - exp) as usize, alt)
    };
    if !alt {
        let (num, tail) = match s.find(['e', 'E']) {
            Some(k) => (s[..k].to_string(), s[k..].to_string()),
            None => (s.clone(), String::new()),
        };
        let num = if num.contains('.') {
            num.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            num
        };
        s = num + &tail;
    }
    s
}

/// `%a` without its `0x`: `h.hhhp±d`, exact when there is no precision, rounded to even otherwise.
fn hex_float(a: f64, precision: Option<usize>, alt: bool, upper: bool) -> String {
    let bits = a.to_bits();
    let biased = (bits >> 52) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut lead, mut mant, exp) = if biased == 0 {
        (0u64, frac, if frac == 0 { 0 } else { -1022 })
    } else {
        (1u64, frac, biased - 1023)
    };
    let mut ndigits = 13usize;
    if let Some(p) = precision.filter(|&p| p < 13) {
        let drop = (13 - p) as u32 * 4;
        let rem = mant & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        mant >>= drop;
        // With no hex digit kept, the digit a tie rounds to even is the leading one.
        let kept_is_odd = if p == 0 { lead & 1 == 1 } else { mant & 1 == 1 };
        if rem > half || (rem == half && kept_is_odd) {
            mant += 1;
            if mant >> (p as u32 * 4) != 0 {
                mant &= (1u64 << (p as u32 * 4)) - 1;
                lead += 1;
            }
        }
        ndigits = p;
    }
    let mut digits = if ndigits == 0 {
        String::new()
    } else if upper {
        format!("{mant:0ndigits$X}")
    } else {
        format!("{mant:0ndigits$x}")
    };
    match precision {
        None => digits = digits.trim_end_matches('0').to_string(),
        Some(p) if p > 13 => digits.push_str(&"0".repeat(p - 13)),
        _ => {}
    }
    let dot = if digits.is_empty() && !alt { "" } else { "." };
    let p = if upper { 'P' } else { 'p' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{lead}{dot}{digits}{p}{sign}{}", exp.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Packs arguments as NVRTC does: each at its natural alignment.
    fn run(fmt: &str, args: &[(usize, u64)]) -> String {
        let mut buf = Vec::new();
        for &(size, v) in args {
            while buf.len() % size != 0 {
                buf.push(0);
            }
            buf.extend_from_slice(&v.to_le_bytes()[..size]);
        }
        let (out, _) = format(
            fmt.as_bytes(),
            |off, size| {
                let mut b = [0u8; 8];
                if let Some(s) = buf.get(off..off + size) {
                    b[..size].copy_from_slice(s);
                }
                u64::from_le_bytes(b)
            },
            |_| b"str".to_vec(),
        );
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn integers_follow_c() {
        assert_eq!(
            run(
                "%d|%5d|%-5d|%05d",
                &[(4, (-42i32) as u32 as u64), (4, 42), (4, 42), (4, 42)]
            ),
            "-42|   42|42   |00042"
        );
        assert_eq!(
            run("%+d % d %.3d %.0d", &[(4, 7), (4, 7), (4, 7), (4, 0)]),
            "+7  7 007 "
        );
        assert_eq!(
            run(
                "%x %X %#x %#o %o",
                &[(4, 255), (4, 255), (4, 255), (4, 8), (4, 0)]
            ),
            "ff FF 0xff 010 0"
        );
        assert_eq!(
            run(
                "%lld %llu %ld",
                &[(8, (-1i64) as u64), (8, u64::MAX), (8, 1 << 40)]
            ),
            "-1 18446744073709551615 1099511627776"
        );
        assert_eq!(
            run("%u %hhd %hu", &[(4, u32::MAX as u64), (4, 255), (4, 65537)]),
            "4294967295 -1 1"
        );
    }

    #[test]
    fn floats_follow_c() {
        let d = |x: f64| (8, x.to_bits());
        assert_eq!(
            run(
                "%f %.2f %e %g",
                &[d(1.5), d(0.125), d(12345.678), d(0.0001)]
            ),
            "1.500000 0.12 1.234568e+04 0.0001"
        );
        assert_eq!(
            run("%g %g %#g %G", &[d(100000.0), d(1e6), d(1.0), d(1e-5)]),
            "100000 1e+06 1.00000 1E-05"
        );
        assert_eq!(
            run("%a %a %.1a %A", &[d(1.0), d(0.1), d(1.0), d(-2.5)]),
            "0x1p+0 0x1.999999999999ap-4 0x1.0p+0 -0X1.4P+1"
        );
        // Rounding that carries %g into one more digit keeps %f's digits after the point.
        assert_eq!(
            run(
                "%#.2g %#.3g %.2g %#.2g %#.2g",
                &[d(99.5), d(999.5), d(99.5), d(995.0), d(9.95e-5)]
            ),
            "1.e+02 1.e+03 1e+02 1.0e+03 0.00010"
        );
        // A tie with no hex digit kept rounds the leading digit to even, as the C library does.
        assert_eq!(
            run("%.0a %.0a %.0a %.0a", &[d(0.375), d(1.5), d(2.5), d(3.5)]),
            "0x2p-2 0x2p+0 0x1p+1 0x2p+1"
        );
        assert_eq!(
            run("%8.3f|%-8.2e|%+f", &[d(-1.23456), d(2.5), d(0.0)]),
            "  -1.235|2.50e+00|+0.000000"
        );
        assert_eq!(
            run(
                "%f %e %05f",
                &[d(f64::INFINITY), d(f64::NAN), d(f64::NEG_INFINITY)]
            ),
            "inf nan  -inf"
        );
    }

    #[test]
    fn strings_chars_pointers_and_stars() {
        assert_eq!(
            run(
                "[%s] [%5s] [%.2s] [%c]",
                &[(8, 1), (8, 1), (8, 1), (4, b'z' as u64)]
            ),
            "[str] [  str] [st] [z]"
        );
        assert_eq!(run("%p %p", &[(8, 0x1234), (8, 0)]), "0x1234 (nil)");
        assert_eq!(
            run(
                "%*d|%-*d|%.*f",
                &[
                    (4, 4),
                    (4, 7),
                    (4, 3),
                    (4, 7),
                    (4, 2),
                    (8, 1.0f64.to_bits())
                ]
            ),
            "   7|7  |1.00"
        );
        assert_eq!(run("100%% %s", &[(8, 0)]), "100% (null)");
    }

    /// What the host C library prints for one conversion with one argument.
    fn libc(fmt: &str, arg: CArg) -> String {
        let cfmt = std::ffi::CString::new(fmt).unwrap_or_default();
        let mut buf = vec![0u8; 4096];
        let (ptr, len, f) = (
            buf.as_mut_ptr().cast::<libc::c_char>(),
            buf.len(),
            cfmt.as_ptr(),
        );
        // SAFETY: the buffer is writable for `len` bytes, snprintf stops there, and each call
        // passes exactly the one argument of the type its single conversion reads.
        let n = unsafe {
            match arg {
                CArg::Int(v) => libc::snprintf(ptr, len, f, v),
                CArg::Long(v) => libc::snprintf(ptr, len, f, v),
                CArg::Double(v) => libc::snprintf(ptr, len, f, v),
            }
        };
        buf.truncate(n.max(0) as usize);
        String::from_utf8(buf).unwrap_or_default()
    }

    #[derive(Clone, Copy, Debug)]
    enum CArg {
        Int(libc::c_int),
        Long(libc::c_longlong),
        Double(f64),
    }

    fn spec_strategy() -> impl Strategy<Value = String> {
        (
            proptest::sample::subsequence(vec!['-', '+', ' ', '#', '0'], 0..=3),
            proptest::option::of(0usize..24),
            proptest::option::of(0usize..20),
        )
            .prop_map(|(flags, width, precision)| {
                let mut s: String = flags.into_iter().collect();
                if let Some(w) = width {
                    s += &w.to_string();
                }
                if let Some(p) = precision {
                    s += &format!(".{p}");
                }
                s
            })
    }

    fn float_strategy() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (-1e6f64..1e6),
            (-1.0f64..1.0),
            (0i32..1000).prop_map(|v| v as f64 / 8.0),
            Just(0.0),
            Just(-0.0),
            Just(f64::MIN_POSITIVE / 3.0),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn ints_match_the_c_library(flags in spec_strategy(), conv in "[diuxXo]", v in any::<i32>(), wide in any::<bool>(), w in any::<i64>()) {
            let (fmt, arg, packed) = if wide {
                (format!("%{flags}ll{conv}"), CArg::Long(w), (8, w as u64))
            } else {
                (format!("%{flags}{conv}"), CArg::Int(v), (4, v as u32 as u64))
            };
            prop_assert_eq!(run(&fmt, &[packed]), libc(&fmt, arg), "{}", fmt);
        }

        #[test]
        fn floats_match_the_c_library(flags in spec_strategy(), conv in "[feEgGaA]", v in float_strategy()) {
            let fmt = format!("%{flags}{conv}");
            prop_assert_eq!(run(&fmt, &[(8, v.to_bits())]), libc(&fmt, CArg::Double(v)), "{} {:e}", fmt, v);
        }
    }
}
