//! The compiled tier against the interpreter on generated PTX: random straight-line register
//! arithmetic (every kind the compiled tier takes, with guards, immediates and a divergent
//! branch, and some it leaves to the interpreter between them), run by both engines on every
//! schedule. Every thread stores every register at the end, so any bit computed differently
//! shows.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use ptx_emu::*;
use std::fmt::Write as _;

/// xorshift: the program is a function of the seed proptest picks (and shrinks).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const INT32: &[&str] = &["u32", "s32"];
const INT64: &[&str] = &["u64", "s64"];

/// A 32-bit operand: a register or an immediate (small, large or negative).
fn opnd32(r: &mut Rng) -> String {
    match r.below(4) {
        0 => ["0", "1", "31", "32", "-1", "4294967295", "2147483648", "-7"][r.below(8)].into(),
        1 => format!("{}", r.next() as u32),
        _ => format!("%r{}", r.below(7)),
    }
}

fn opnd64(r: &mut Rng) -> String {
    match r.below(4) {
        0 => ["0", "1", "63", "64", "-1", "9223372036854775808"][r.below(6)].into(),
        1 => format!("{}", r.next() >> r.below(64)),
        _ => format!("%rd{}", r.below(6)),
    }
}

fn opndf(r: &mut Rng) -> String {
    if r.below(4) == 0 {
        // Zeros, one, infinity, a NaN, a subnormal, a large value.
        let bits = [
            0u32,
            0x8000_0000,
            0x3f80_0000,
            0x7f80_0000,
            0x7fc0_1234,
            0x0000_0005,
            0x7f00_0000,
        ][r.below(7)];
        format!("0f{bits:08X}")
    } else {
        format!("%f{}", r.below(4))
    }
}

fn guard(r: &mut Rng) -> String {
    match r.below(4) {
        0 => format!("@%p{} ", r.below(4)),
        1 => format!("@!%p{} ", r.below(4)),
        _ => String::new(),
    }
}

/// One random instruction.
fn instr(r: &mut Rng) -> String {
    let g = guard(r);
    let d32 = format!("%r{}", r.below(7));
    let d64 = format!("%rd{}", r.below(6));
    let body = match r.below(17) {
        0 | 1 => {
            let op = r.pick(&["add", "sub", "mul.lo", "mul.hi", "min", "max"]);
            let t = r.pick(INT32);
            format!("{op}.{t} {d32}, {}, {}", opnd32(r), opnd32(r))
        }
        2 => {
            let op = r.pick(&["add", "sub", "mul.lo", "min", "max"]);
            let t = r.pick(INT64);
            format!("{op}.{t} {d64}, {}, {}", opnd64(r), opnd64(r))
        }
        3 => {
            let op = r.pick(&["and", "or", "xor"]);
            if r.below(2) == 0 {
                format!("{op}.b32 {d32}, {}, {}", opnd32(r), opnd32(r))
            } else {
                format!("{op}.b64 {d64}, {}, {}", opnd64(r), opnd64(r))
            }
        }
        4 => {
            let op = r.pick(&["shl.b32", "shr.u32", "shr.s32", "shr.b32"]);
            format!("{op} {d32}, {}, {}", opnd32(r), opnd32(r))
        }
        5 => {
            let op = r.pick(&["shl.b64", "shr.u64", "shr.s64"]);
            format!("{op} {d64}, {}, {}", opnd64(r), opnd32(r))
        }
        6 => {
            let t = r.pick(INT32);
            format!("mul.wide.{t} {d64}, {}, {}", opnd32(r), opnd32(r))
        }
        7 => match r.below(3) {
            0 => {
                let t = r.pick(INT32);
                format!(
                    "mad.lo.{t} {d32}, {}, {}, {}",
                    opnd32(r),
                    opnd32(r),
                    opnd32(r)
                )
            }
            1 => {
                let t = r.pick(INT64);
                format!(
                    "mad.lo.{t} {d64}, {}, {}, {}",
                    opnd64(r),
                    opnd64(r),
                    opnd64(r)
                )
            }
            _ => {
                let t = r.pick(INT32);
                format!(
                    "mad.wide.{t} {d64}, {}, {}, {}",
                    opnd32(r),
                    opnd32(r),
                    opnd64(r)
                )
            }
        },
        8 | 9 => {
            let p = r.below(4);
            let (t, a, b) = match r.below(3) {
                0 => (r.pick(&["u32", "s32", "b32"]), opnd32(r), opnd32(r)),
                1 => (r.pick(&["u64", "s64"]), opnd64(r), opnd64(r)),
                _ => ("f32", opndf(r), opndf(r)),
            };
            let cmp = if t == "f32" {
                r.pick(&[
                    "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
                    "num", "nan",
                ])
            } else if t.starts_with('u') {
                r.pick(&["eq", "ne", "lo", "ls", "hi", "hs", "lt", "ge"])
            } else {
                r.pick(&["eq", "ne", "lt", "le", "gt", "ge"])
            };
            match r.below(3) {
                0 => {
                    let bo = r.pick(&["and", "or", "xor"]);
                    let neg = if r.below(2) == 0 { "!" } else { "" };
                    let q = r.below(4);
                    let c = r.below(4);
                    format!("setp.{cmp}.{bo}.{t} %p{p}|%p{q}, {a}, {b}, {neg}%p{c}")
                }
                1 => format!("setp.{cmp}.{t} %p{p}|%p{}, {a}, {b}", r.below(4)),
                _ => format!("setp.{cmp}.{t} %p{p}, {a}, {b}"),
            }
        }
        10 => {
            let p = r.below(4);
            match r.below(3) {
                0 => format!("selp.b32 {d32}, {}, {}, %p{p}", opnd32(r), opnd32(r)),
                1 => format!("selp.b64 {d64}, {}, {}, %p{p}", opnd64(r), opnd64(r)),
                _ => format!(
                    "selp.f32 %f{}, {}, {}, %p{p}",
                    r.below(4),
                    opndf(r),
                    opndf(r)
                ),
            }
        }
        11 | 12 => {
            let op = r.pick(&["add", "sub", "mul", "add.rn", "mul.rn"]);
            format!("{op}.f32 %f{}, {}, {}", r.below(4), opndf(r), opndf(r))
        }
        13 => match r.below(4) {
            0 => format!("mov.u32 {d32}, {}", opnd32(r)),
            1 => format!("mov.b64 {d64}, {}", opnd64(r)),
            2 => format!("mov.f32 %f{}, {}", r.below(4), opndf(r)),
            _ => format!("mov.pred %p{}, %p{}", r.below(4), r.below(4)),
        },
        14 => {
            let op = r.pick(&["and", "or", "xor"]);
            format!(
                "{op}.pred %p{}, %p{}, %p{}",
                r.below(4),
                r.below(4),
                r.below(4)
            )
        }
        15 => format!(
            "cvta.to.shared.u64 {d64}, {}",
            if r.below(2) == 0 { "%rd7" } else { "%rd0" }
        ),
        // Left to the interpreter: they end a region, and one starts after them.
        _ => match r.below(4) {
            0 => format!("div.u32 {d32}, {}, {}", opnd32(r), opnd32(r)),
            1 => format!("add.ftz.f32 %f{}, {}, {}", r.below(4), opndf(r), opndf(r)),
            2 => format!("mov.u32 {d32}, %laneid"),
            _ => format!("cvt.u32.u64 {d32}, {}", opnd64(r)),
        },
    };
    format!("\t{g}{body};\n")
}

/// A kernel of `n` random instructions around a divergent branch; thread `t` stores its 112
/// bytes of registers at `out + 128 t`.
fn kernel(seed: u64, n: usize) -> String {
    let mut r = Rng(seed | 1);
    let mut s = String::from(
        ".version 8.0\n.target sm_80\n.address_size 64\n\n.visible .entry gen(.param .u64 out)\n{\n\
         \t.reg .pred %p<4>;\n\t.reg .f32 %f<4>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\n\
         \tld.param.u64 %rd7, [out];\n\tmov.u32 %r7, %tid.x;\n\tmul.wide.u32 %rd6, %r7, 128;\n\
         \tadd.s64 %rd7, %rd7, %rd6;\n",
    );
    for i in 0..7 {
        let _ = writeln!(
            s,
            "\tmad.lo.u32 %r{i}, %r7, {}, {};",
            r.next() as u32 | 1,
            r.next() as u32
        );
    }
    for i in 0..6 {
        let _ = writeln!(
            s,
            "\tmul.wide.u32 %rd{i}, %r{i}, {};\n\txor.b64 %rd{i}, %rd{i}, {};",
            r.next() as u32,
            r.next()
        );
    }
    for i in 0..4 {
        let _ = writeln!(
            s,
            "\tmov.b32 %f{i}, %r{i};\n\tsetp.lt.u32 %p{i}, %r{}, {};",
            i + 3,
            r.next() as u32
        );
    }
    let branch_at = r.below(n + 1);
    for k in 0..n {
        if k == branch_at {
            // Lanes below a random bound skip ahead: the warp diverges, then meets again.
            let _ = writeln!(
                s,
                "\tsetp.lt.u32 %p3, %r7, {};\n\t@%p3 bra SKIP;",
                r.below(64)
            );
        }
        if k == branch_at + n / 3 {
            s.push_str("SKIP:\n");
        }
        s.push_str(&instr(&mut r));
    }
    if !s.contains("SKIP:") {
        s.push_str("SKIP:\n");
    }
    for i in 0..7 {
        let _ = writeln!(s, "\tst.global.u32 [%rd7+{}], %r{i};", 4 * i);
    }
    for i in 0..6 {
        let _ = writeln!(s, "\tst.global.u64 [%rd7+{}], %rd{i};", 32 + 8 * i);
    }
    for i in 0..4 {
        let _ = writeln!(s, "\tst.global.f32 [%rd7+{}], %f{i};", 80 + 4 * i);
        let _ = writeln!(
            s,
            "\tselp.u32 %r7, 1, 0, %p{i};\n\tst.global.u32 [%rd7+{}], %r7;",
            96 + 4 * i
        );
    }
    s.push_str("\tret;\n}\n");
    s
}

const THREADS: u32 = 64;

/// The launch's report and output under `engine` and `schedule`.
fn run(ptx: &str, engine: Engine, schedule: Schedule) -> (String, Vec<u8>) {
    let m = Module::parse(ptx).unwrap_or_else(|e| panic!("{e}\n{ptx}"));
    let mut emu = Emulator::new();
    let bytes = 128 * THREADS as usize;
    let out = emu.alloc(bytes, "out");
    let options = RunOptions {
        engine,
        schedule,
        ..RunOptions::default()
    };
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [THREADS, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let report = emu.launch(&m, "gen", &config, &[KernelArg::Ptr(out)], &options);
    let mut memory = vec![0; bytes];
    emu.read(out, &mut memory).unwrap();
    (format!("{report:?}"), memory)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_arithmetic_runs_alike_interpreted_and_compiled(seed in any::<u64>(), n in 1usize..60) {
        let ptx = kernel(seed, n);
        for schedule in [Schedule::Hardware, Schedule::Random { seed }, Schedule::Lanes { seed }] {
            let interpreted = run(&ptx, Engine::Interp, schedule);
            let compiled = run(&ptx, Engine::Compiled, schedule);
            prop_assert!(interpreted.0.contains("completed: true"), "{}\n{ptx}", interpreted.0);
            let first = (0..interpreted.1.len()).find(|&k| interpreted.1[k] != compiled.1[k]);
            prop_assert!(
                interpreted == compiled,
                "{schedule:?}\n{ptx}\n{}\n{}\nfirst byte apart: {}",
                interpreted.0,
                compiled.0,
                first.map_or("none".into(), |k| format!(
                    "thread {}, byte {} of its registers: {:02x?} interpreted, {:02x?} compiled",
                    k / 128,
                    k % 128,
                    &interpreted.1[k / 8 * 8..k / 8 * 8 + 8],
                    &compiled.1[k / 8 * 8..k / 8 * 8 + 8]
                ))
            );
        }
    }
}

/// The generator makes what the compiled tier takes: a kernel's regions cover most of its
/// random instructions (so the property above compares compiled code, not the interpreter with
/// itself).
#[test]
fn generated_kernels_are_mostly_compiled_regions() {
    let ptx = kernel(42, 200);
    let m = Module::parse(&ptx).unwrap();
    let (regions, covered) = m.compiled_regions();
    assert!(
        regions >= 5 && covered >= 150,
        "{regions} regions cover {covered}"
    );
}
