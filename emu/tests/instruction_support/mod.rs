//! What the instruction tests share: a kernel around hand-written PTX, run on some threads,
//! and its output read back as words.

// Each test binary uses some of these.
#![allow(dead_code)]

use ptx_emu::*;

pub const HEADER: &str = ".version 9.0\n.target sm_90\n.address_size 64\n";

pub fn kernel(decls: &str, body: &str) -> String {
    format!(
        "{HEADER}{decls}\n.visible .entry t(\n\t.param .u64 t_out\n)\n{{\n\t.reg .b32 %r<40>;\n\t.reg .b64 %rd<40>;\n\t.reg .f32 %f<40>;\n\t.reg .f64 %fd<40>;\n\t.reg .pred %p<20>;\n\t.reg .b16 %rs<20>;\n\tld.param.u64 %rd0, [t_out];\n\tmov.u32 %r0, %tid.x;\n\tmul.wide.u32 %rd38, %r0, 64;\n\tadd.s64 %rd39, %rd0, %rd38;\n{body}\n\tret;\n}}\n"
    )
}

/// Runs `body` on `threads` threads; each thread owns 64 bytes of output at `%rd39`.
pub fn run_threads(decls: &str, body: &str, threads: u32) -> (Vec<u8>, RunReport) {
    let src = kernel(decls, body);
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut emu = Emulator::new();
    let out = emu.alloc(64 * threads as usize, "out");
    let r = emu
        .launch(
            &m,
            "t",
            &LaunchConfig {
                grid: [1, 1, 1],
                block: [threads, 1, 1],
                dynamic_shared_bytes: 0,
            },
            &[KernelArg::Ptr(out)],
            &RunOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut b = vec![0u8; 64 * threads as usize];
    emu.read(out, &mut b).unwrap();
    (b, r)
}

pub fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap())
}

pub fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap())
}

/// One thread; returns the first 16 u32 words of its output.
/// The error a launch of `body` gives: an instruction the emulator cannot run parses, and is
/// refused by the launch that reaches it.
pub fn refusal(body: &str) -> String {
    let src = kernel("", body);
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut emu = Emulator::new();
    let out = emu.alloc(64, "out");
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
    };
    emu.launch(
        &m,
        "t",
        &config,
        &[KernelArg::Ptr(out)],
        &RunOptions::default(),
    )
    .expect_err(body)
    .to_string()
}

pub fn words(body: &str) -> Vec<u32> {
    let (b, r) = run_threads("", body, 1);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    (0..16).map(|i| u32_at(&b, i)).collect()
}

pub fn dwords(body: &str) -> Vec<u64> {
    let (b, r) = run_threads("", body, 1);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    (0..8).map(|i| u64_at(&b, i)).collect()
}
