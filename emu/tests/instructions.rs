//! Arithmetic, comparison and conversion instruction families on hand-written PTX, with exact
//! expected values (memory and warp families: `instructions_memory_and_warps.rs`).

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod instruction_support;
use instruction_support::*;
use ptx_emu::{Emulator, KernelArg, LaunchConfig, Module, RunOptions};

#[test]
fn integer_arithmetic() {
    let w = words(
        "mov.u32 %r1, 7; mov.u32 %r2, -3;
         add.s32 %r3, %r1, %r2; st.global.u32 [%rd39], %r3;
         sub.s32 %r3, %r2, %r1; st.global.u32 [%rd39+4], %r3;
         mul.lo.s32 %r3, %r1, %r2; st.global.u32 [%rd39+8], %r3;
         mul.hi.u32 %r3, %r2, %r2; st.global.u32 [%rd39+12], %r3;
         mul.hi.s32 %r3, %r2, %r2; st.global.u32 [%rd39+16], %r3;
         div.s32 %r3, %r2, 2; st.global.u32 [%rd39+20], %r3;
         rem.s32 %r3, %r2, 2; st.global.u32 [%rd39+24], %r3;
         div.u32 %r3, %r2, 2; st.global.u32 [%rd39+28], %r3;
         mad.lo.s32 %r3, %r1, %r1, %r2; st.global.u32 [%rd39+32], %r3;
         neg.s32 %r3, %r1; st.global.u32 [%rd39+36], %r3;
         abs.s32 %r3, %r2; st.global.u32 [%rd39+40], %r3;
         min.s32 %r3, %r1, %r2; st.global.u32 [%rd39+44], %r3;
         min.u32 %r3, %r1, %r2; st.global.u32 [%rd39+48], %r3;
         max.s32 %r3, %r1, %r2; st.global.u32 [%rd39+52], %r3;
         add.sat.s32 %r3, 2147483647, %r1; st.global.u32 [%rd39+56], %r3;
         div.u32 %r3, %r1, 0; st.global.u32 [%rd39+60], %r3;",
    );
    assert_eq!(
        w,
        vec![
            4,
            (-10i32) as u32,
            (-21i32) as u32,
            0xFFFF_FFFA, // (2^32-3)^2 >> 32
            0,
            (-1i32) as u32,
            (-1i32) as u32,
            0x7FFF_FFFE,
            46,
            (-7i32) as u32,
            3,
            (-3i32) as u32,
            7,
            7,
            i32::MAX as u32,
            u32::MAX
        ]
    );
}

#[test]
fn wide_multiplies_and_64_bit() {
    let d = dwords(
        "mov.u32 %r1, -2; mov.u32 %r2, 3;
         mul.wide.s32 %rd1, %r1, %r2; st.global.u64 [%rd39], %rd1;
         mul.wide.u32 %rd1, %r1, %r2; st.global.u64 [%rd39+8], %rd1;
         mad.wide.u32 %rd1, %r1, %r2, 10; st.global.u64 [%rd39+16], %rd1;
         mov.u64 %rd2, 0x123456789; shl.b64 %rd3, %rd2, 4; st.global.u64 [%rd39+24], %rd3;
         shr.s64 %rd3, -256, 4; st.global.u64 [%rd39+32], %rd3;
         mul.hi.u64 %rd3, -1, -1; st.global.u64 [%rd39+40], %rd3;
         mov.b64 %rd4, {%r1, %r2}; st.global.u64 [%rd39+48], %rd4;
         mov.b64 {%r5, %r6}, %rd2; cvt.u64.u32 %rd5, %r6; st.global.u64 [%rd39+56], %rd5;",
    );
    assert_eq!(d[0], (-6i64) as u64);
    assert_eq!(d[1], 0xFFFF_FFFE * 3);
    assert_eq!(d[2], 0xFFFF_FFFE * 3 + 10);
    assert_eq!(d[3], 0x1234567890);
    assert_eq!(d[4], (-16i64) as u64);
    assert_eq!(d[5], u64::MAX - 1);
    assert_eq!(d[6], (3u64 << 32) | 0xFFFF_FFFE);
    assert_eq!(d[7], 1);
}

#[test]
fn shifts_and_bit_operations() {
    let w = words(
        "mov.u32 %r1, 0xF0000001;
         shl.b32 %r2, %r1, 4; st.global.u32 [%rd39], %r2;
         shr.u32 %r2, %r1, 4; st.global.u32 [%rd39+4], %r2;
         shr.s32 %r2, %r1, 4; st.global.u32 [%rd39+8], %r2;
         shl.b32 %r2, %r1, 40; st.global.u32 [%rd39+12], %r2;
         shr.s32 %r2, %r1, 40; st.global.u32 [%rd39+16], %r2;
         and.b32 %r2, %r1, 0xFF; st.global.u32 [%rd39+20], %r2;
         or.b32 %r2, %r1, 6; st.global.u32 [%rd39+24], %r2;
         xor.b32 %r2, %r1, -1; st.global.u32 [%rd39+28], %r2;
         not.b32 %r2, %r1; st.global.u32 [%rd39+32], %r2;
         popc.b32 %r2, %r1; st.global.u32 [%rd39+36], %r2;
         clz.b32 %r2, 1; st.global.u32 [%rd39+40], %r2;
         brev.b32 %r2, 1; st.global.u32 [%rd39+44], %r2;
         bfe.u32 %r2, %r1, 28, 4; st.global.u32 [%rd39+48], %r2;
         bfe.s32 %r2, %r1, 28, 4; st.global.u32 [%rd39+52], %r2;
         bfi.b32 %r2, 5, 0, 8, 4; st.global.u32 [%rd39+56], %r2;
         prmt.b32 %r2, 0x33221100, 0x77665544, 0x00004567; st.global.u32 [%rd39+60], %r2;",
    );
    assert_eq!(
        w,
        vec![
            0x0000_0010,
            0x0F00_0000,
            0xFF00_0000,
            0,
            0xFFFF_FFFF,
            1,
            0xF000_0007,
            0x0FFF_FFFE,
            0x0FFF_FFFE,
            5,
            31,
            0x8000_0000,
            0xF,
            0xFFFF_FFFF,
            0x500,
            0x4455_6677
        ]
    );
}

/// `bmsk`'s two modes, as the PTX ISA defines them: `.clamp` limits start and width to 32,
/// `.wrap` keeps their low five bits.
#[test]
fn bit_masks_clamp_and_wrap() {
    let w = words(
        "bmsk.clamp.b32 %r2, 4, 8; st.global.u32 [%rd39], %r2;
         bmsk.clamp.b32 %r2, 28, 8; st.global.u32 [%rd39+4], %r2;
         bmsk.clamp.b32 %r2, 40, 8; st.global.u32 [%rd39+8], %r2;
         bmsk.clamp.b32 %r2, 0, 40; st.global.u32 [%rd39+12], %r2;
         bmsk.wrap.b32 %r2, 36, 8; st.global.u32 [%rd39+16], %r2;
         bmsk.wrap.b32 %r2, 0, 32; st.global.u32 [%rd39+20], %r2;",
    );
    assert_eq!(
        &w[..6],
        &[0x0000_0FF0, 0xF000_0000, 0, u32::MAX, 0x0000_0FF0, 0]
    );
}

#[test]
fn bit_find_of_unsigned_and_signed_values() {
    let w = words(
        "bfind.u32 %r2, 0x00F00000; st.global.u32 [%rd39], %r2;
         bfind.u32 %r2, 1; st.global.u32 [%rd39+4], %r2;
         bfind.u32 %r2, 0; st.global.u32 [%rd39+8], %r2;
         bfind.shiftamt.u32 %r2, 0x00F00000; st.global.u32 [%rd39+12], %r2;
         bfind.shiftamt.u32 %r2, 0; st.global.u32 [%rd39+16], %r2;
         bfind.s32 %r2, -1; st.global.u32 [%rd39+20], %r2;
         bfind.s32 %r2, -256; st.global.u32 [%rd39+24], %r2;
         bfind.s32 %r2, 255; st.global.u32 [%rd39+28], %r2;
         mov.u64 %rd1, 0x0000010000000000; bfind.u64 %r2, %rd1; st.global.u32 [%rd39+32], %r2;
         bfind.shiftamt.u64 %r2, %rd1; st.global.u32 [%rd39+36], %r2;
         mov.u32 %r3, 0x80000000; bfind.shiftamt.u32 %r2, %r3; st.global.u32 [%rd39+40], %r2;",
    );
    assert_eq!(
        &w[..11],
        &[23, 0, u32::MAX, 8, u32::MAX, u32::MAX, 7, 7, 40, 23, 0]
    );
}

#[test]
fn comparisons_predicates_and_selects() {
    let w = words(
        "mov.u32 %r1, -1; mov.u32 %r2, 1;
         setp.lt.s32 %p1, %r1, %r2; selp.u32 %r3, 1, 0, %p1; st.global.u32 [%rd39], %r3;
         setp.lt.u32 %p1, %r1, %r2; selp.u32 %r3, 1, 0, %p1; st.global.u32 [%rd39+4], %r3;
         setp.hi.u32 %p1|%p2, %r1, %r2; selp.u32 %r3, 1, 0, %p2; st.global.u32 [%rd39+8], %r3;
         setp.eq.and.s32 %p3, %r1, %r1, !%p2; selp.u32 %r3, 1, 0, %p3; st.global.u32 [%rd39+12], %r3;
         setp.ne.or.s32 %p3, %r1, %r1, %p2; selp.u32 %r3, 1, 0, %p3; st.global.u32 [%rd39+16], %r3;
         mov.f32 %f1, 0f7FC00000; mov.f32 %f2, 0f3F800000;
         setp.lt.f32 %p4, %f1, %f2; selp.u32 %r3, 1, 0, %p4; st.global.u32 [%rd39+20], %r3;
         setp.ltu.f32 %p4, %f1, %f2; selp.u32 %r3, 1, 0, %p4; st.global.u32 [%rd39+24], %r3;
         setp.nan.f32 %p4, %f1, %f2; selp.u32 %r3, 1, 0, %p4; st.global.u32 [%rd39+28], %r3;
         setp.ne.f32 %p4, %f1, %f2; selp.u32 %r3, 1, 0, %p4; st.global.u32 [%rd39+32], %r3;
         slct.u32.s32 %r3, 10, 20, %r1; st.global.u32 [%rd39+36], %r3;
         slct.u32.f32 %r3, 10, 20, %f2; st.global.u32 [%rd39+40], %r3;
         and.pred %p5, %p1, %p2; selp.u32 %r3, 1, 0, %p5; st.global.u32 [%rd39+44], %r3;
         not.pred %p5, %p5; selp.u32 %r3, 1, 0, %p5; st.global.u32 [%rd39+48], %r3;
         @%p5 mov.u32 %r4, 77; @!%p5 mov.u32 %r4, 88; st.global.u32 [%rd39+52], %r4;
         set.lt.u32.s32 %r3, %r1, %r2; st.global.u32 [%rd39+56], %r3;",
    );
    assert_eq!(
        w[..15],
        [1, 0, 0, 1, 0, 0, 1, 1, 0, 20, 10, 0, 1, 77, 0xFFFF_FFFF][..]
    );
}

#[test]
fn float_arithmetic() {
    let w = words(
        "mov.f32 %f1, 0f40400000; mov.f32 %f2, 0f40000000;
         add.f32 %f3, %f1, %f2; st.global.f32 [%rd39], %f3;
         sub.rn.f32 %f3, %f1, %f2; st.global.f32 [%rd39+4], %f3;
         mul.f32 %f3, %f1, %f2; st.global.f32 [%rd39+8], %f3;
         div.rn.f32 %f3, %f1, %f2; st.global.f32 [%rd39+12], %f3;
         div.full.f32 %f3, 0f3F800000, %f1; st.global.f32 [%rd39+16], %f3;
         fma.rn.f32 %f3, %f1, %f2, 0f3F800000; st.global.f32 [%rd39+20], %f3;
         sqrt.rn.f32 %f3, 0f40800000; st.global.f32 [%rd39+24], %f3;
         rcp.rn.f32 %f3, %f2; st.global.f32 [%rd39+28], %f3;
         neg.f32 %f3, %f1; st.global.f32 [%rd39+32], %f3;
         abs.f32 %f3, 0fC0000000; st.global.f32 [%rd39+36], %f3;
         min.f32 %f3, 0f7FC00000, %f2; st.global.f32 [%rd39+40], %f3;
         max.f32 %f3, %f1, %f2; st.global.f32 [%rd39+44], %f3;
         copysign.f32 %f3, 0fBF800000, %f1; st.global.f32 [%rd39+48], %f3;
         add.sat.f32 %f3, %f1, %f2; st.global.f32 [%rd39+52], %f3;
         mul.ftz.f32 %f3, 0f00000001, %f2; st.global.f32 [%rd39+56], %f3;
         testp.finite.f32 %p1, %f1; selp.u32 %r1, 1, 0, %p1; st.global.u32 [%rd39+60], %r1;",
    );
    let f: Vec<f32> = w.iter().map(|&x| f32::from_bits(x)).collect();
    assert_eq!(
        f[..15],
        [
            5.0,
            1.0,
            6.0,
            1.5,
            1.0 / 3.0,
            7.0,
            2.0,
            0.5,
            -3.0,
            2.0,
            2.0,
            3.0,
            -3.0,
            1.0,
            0.0
        ][..]
    );
    assert_eq!(w[15], 1);
}

#[test]
fn approximate_float_functions_within_ptx_accuracy() {
    let w = words(
        "ex2.approx.f32 %f1, 0f3FC00000; st.global.f32 [%rd39], %f1;
         lg2.approx.f32 %f1, 0f41000000; st.global.f32 [%rd39+4], %f1;
         sin.approx.f32 %f1, 0f3F800000; st.global.f32 [%rd39+8], %f1;
         cos.approx.f32 %f1, 0f3F800000; st.global.f32 [%rd39+12], %f1;
         rsqrt.approx.f32 %f1, 0f40800000; st.global.f32 [%rd39+16], %f1;
         rcp.approx.ftz.f32 %f1, 0f40800000; st.global.f32 [%rd39+20], %f1;
         sqrt.approx.f32 %f1, 0f41100000; st.global.f32 [%rd39+24], %f1;
         tanh.approx.f32 %f1, 0f3F000000; st.global.f32 [%rd39+28], %f1;",
    );
    let f: Vec<f32> = w.iter().map(|&x| f32::from_bits(x)).collect();
    let close = |a: f32, b: f64, tol: f64| assert!((a as f64 - b).abs() <= tol, "{a} vs {b}");
    close(f[0], 2f64.powf(1.5), 2.0 * f32::EPSILON as f64 * 3.0);
    close(f[1], 3.0, 2f64.powi(-22));
    close(f[2], 1f64.sin(), 2f64.powi(-20));
    close(f[3], 1f64.cos(), 2f64.powi(-20));
    close(f[4], 0.5, 1e-6);
    close(f[5], 0.25, 1e-7);
    close(f[6], 3.0, 1e-6);
    close(f[7], 0.5f64.tanh(), 1e-3);
}

#[test]
fn directed_rounding_of_add_mul_and_fma() {
    // 1 + 0.75 ulp(1) rounds up to nearest, down under .rm and .rz; (1 + 2^-23)^2 is
    // 1 + 2^-22 + 2^-46, which only .rp rounds up.
    let w = words(
        "mov.f32 %f1, 0f3F800000; mov.f32 %f2, 0f33C00000; mov.f32 %f4, 0f3F800001;
         fma.rn.f32 %f3, %f1, %f1, %f2; st.global.f32 [%rd39], %f3;
         fma.rm.f32 %f3, %f1, %f1, %f2; st.global.f32 [%rd39+4], %f3;
         fma.rz.f32 %f3, %f1, %f1, %f2; st.global.f32 [%rd39+8], %f3;
         fma.rp.f32 %f3, %f1, %f1, %f2; st.global.f32 [%rd39+12], %f3;
         add.rm.f32 %f3, %f1, %f2; st.global.f32 [%rd39+16], %f3;
         add.rp.f32 %f3, %f1, 0f33000000; st.global.f32 [%rd39+20], %f3;
         sub.rz.f32 %f3, 0fBF800000, %f2; st.global.f32 [%rd39+24], %f3;
         mul.rn.f32 %f3, %f4, %f4; st.global.f32 [%rd39+28], %f3;
         mul.rp.f32 %f3, %f4, %f4; st.global.f32 [%rd39+32], %f3;
         add.rn.f32 %f3, %f1, 0fBF800000; st.global.f32 [%rd39+36], %f3;
         add.rm.f32 %f3, %f1, 0fBF800000; st.global.f32 [%rd39+40], %f3;
         add.rz.f32 %f3, 0f7F7FFFFF, 0f7F7FFFFF; st.global.f32 [%rd39+44], %f3;
         add.rp.f32 %f3, 0f7F7FFFFF, 0f7F7FFFFF; st.global.f32 [%rd39+48], %f3;
         mul.rm.f32 %f3, 0fFF7FFFFF, 0f40000000; st.global.f32 [%rd39+52], %f3;
         fma.rm.f32 %f3, %f1, 0fBF800000, %f1; st.global.f32 [%rd39+56], %f3;",
    );
    assert_eq!(
        w[..15],
        [
            0x3F80_0001,
            0x3F80_0000,
            0x3F80_0000,
            0x3F80_0001,
            0x3F80_0000,
            0x3F80_0001,
            0xBF80_0000,
            0x3F80_0002,
            0x3F80_0003,
            0x0000_0000,
            0x8000_0000,
            0x7F7F_FFFF,
            0x7F80_0000,
            0xFF80_0000,
            0x8000_0000,
        ][..]
    );
    let d = dwords(
        "mov.f64 %fd1, 0d3FF0000000000000;
         add.rn.f64 %fd3, %fd1, 0d3CA8000000000000; st.global.f64 [%rd39], %fd3;
         add.rm.f64 %fd3, %fd1, 0d3CA8000000000000; st.global.f64 [%rd39+8], %fd3;
         add.rp.f64 %fd3, %fd1, 0d3C90000000000000; st.global.f64 [%rd39+16], %fd3;
         mul.rz.f64 %fd3, 0d3FF0000000000001, 0d3FF0000000000001; st.global.f64 [%rd39+24], %fd3;
         mul.rp.f64 %fd3, 0d3FF0000000000001, 0d3FF0000000000001; st.global.f64 [%rd39+32], %fd3;",
    );
    assert_eq!(
        d[..5],
        [
            0x3FF0_0000_0000_0001,
            0x3FF0_0000_0000_0000,
            0x3FF0_0000_0000_0001,
            0x3FF0_0000_0000_0002,
            0x3FF0_0000_0000_0003,
        ][..]
    );
}

#[test]
fn directed_rounding_of_div_sqrt_rcp_and_double_fma() {
    // 1/3 lies between two doubles, the nearer below; sqrt(2) too, the nearer above;
    // (1 + 2^-52)^2 - 1 is 2^-51 + 2^-104, which only .rp rounds up.
    let d = dwords(
        "div.rm.f64 %fd3, 0d3FF0000000000000, 0d4008000000000000; st.global.f64 [%rd39], %fd3;
         div.rp.f64 %fd3, 0d3FF0000000000000, 0d4008000000000000; st.global.f64 [%rd39+8], %fd3;
         div.rz.f64 %fd3, 0dBFF0000000000000, 0d4008000000000000; st.global.f64 [%rd39+16], %fd3;
         sqrt.rm.f64 %fd3, 0d4000000000000000; st.global.f64 [%rd39+24], %fd3;
         sqrt.rp.f64 %fd3, 0d4000000000000000; st.global.f64 [%rd39+32], %fd3;
         rcp.rp.f64 %fd3, 0d4008000000000000; st.global.f64 [%rd39+40], %fd3;
         mov.f64 %fd1, 0d3FF0000000000001;
         fma.rm.f64 %fd3, %fd1, %fd1, 0dBFF0000000000000; st.global.f64 [%rd39+48], %fd3;
         fma.rp.f64 %fd3, %fd1, %fd1, 0dBFF0000000000000; st.global.f64 [%rd39+56], %fd3;",
    );
    assert_eq!(
        d,
        [
            0x3FD5_5555_5555_5555,
            0x3FD5_5555_5555_5556,
            0xBFD5_5555_5555_5555,
            0x3FF6_A09E_667F_3BCC,
            0x3FF6_A09E_667F_3BCD,
            0x3FD5_5555_5555_5556,
            0x3CC0_0000_0000_0000,
            0x3CC0_0000_0000_0001,
        ]
    );
    let w = words(
        "div.rm.f32 %f3, 0f3F800000, 0f40400000; st.global.f32 [%rd39], %f3;
         div.rp.f32 %f3, 0f3F800000, 0f40400000; st.global.f32 [%rd39+4], %f3;
         sqrt.rm.f32 %f3, 0f40000000; st.global.f32 [%rd39+8], %f3;
         sqrt.rp.f32 %f3, 0f40000000; st.global.f32 [%rd39+12], %f3;
         div.rz.f32 %f3, 0f3F800000, 0f00000000; st.global.f32 [%rd39+16], %f3;",
    );
    assert_eq!(
        w[..5],
        [
            0x3EAA_AAAA,
            0x3EAA_AAAB,
            0x3FB5_04F3,
            0x3FB5_04F4,
            0x7F80_0000
        ][..]
    );
}

#[test]
fn directed_rounding_of_halves_is_refused() {
    for body in [
        "add.rm.f16 %rs3, %rs1, %rs1;",
        "fma.rp.f16 %rs3, %rs1, %rs1, %rs1;",
    ] {
        let err = refusal(body);
        let opcode = body.split(' ').next().unwrap();
        assert!(err.contains(opcode), "{body}: {err}");
    }
}

#[test]
fn environment_registers_are_zero_outside_a_cooperative_launch() {
    let w = words(
        "mov.u32 %r1, %envreg1; st.global.u32 [%rd39], %r1;
         mov.u32 %r1, %envreg2; st.global.u32 [%rd39+4], %r1;
         mov.u32 %r1, %envreg31; st.global.u32 [%rd39+8], %r1;",
    );
    assert_eq!(&w[..3], &[0, 0, 0]);
    assert!(refusal("mov.u32 %r1, %envreg32;").contains("unknown name `%envreg32`"));
}

/// A cooperative launch hands its grid workspace's address in `%envreg1` (high half) and
/// `%envreg2` (low half), as the driver does for cooperative groups' grid sync.
#[test]
fn environment_registers_hold_a_cooperative_launchs_grid_workspace() {
    let src = instruction_support::kernel(
        "",
        "mov.u32 %r1, %envreg1; st.global.u32 [%rd39], %r1;
         mov.u32 %r1, %envreg2; st.global.u32 [%rd39+4], %r1;",
    );
    let m = Module::parse(&src).expect("parses");
    let mut emu = Emulator::new();
    let out = emu.alloc(64, "out");
    let options = RunOptions {
        grid_workspace: Some(0x0000_1234_5678_9abc),
        ..RunOptions::default()
    };
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let report = emu
        .launch(&m, "t", &config, &[KernelArg::Ptr(out)], &options)
        .expect("runs");
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let mut b = vec![0u8; 8];
    emu.read(out, &mut b).expect("reads");
    assert_eq!(instruction_support::u32_at(&b, 0), 0x1234);
    assert_eq!(instruction_support::u32_at(&b, 1), 0x5678_9abc);
}

/// A cooperative launch's blocks are all resident from the start, as CUDA guarantees: blocks
/// that wait at a grid barrier for blocks past the default residency (28 Ki threads) do not spin
/// while the schedule's stall rounds, doubling each time, start the others one by one.
#[test]
fn a_cooperative_launchs_blocks_are_resident_together() {
    // Thread 0 of each block counts its block in, then polls until every block has.
    let src = format!(
        "{}.visible .entry t(\n\t.param .u64 t_count\n)\n{{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<4>;\n\
         \tld.param.u64 %rd0, [t_count];\n\tcvta.to.global.u64 %rd1, %rd0;\n\tmov.u32 %r0, %tid.x;\n\
         \tsetp.ne.s32 %p0, %r0, 0;\n\t@%p0 bra DONE;\n\tmov.u32 %r1, %nctaid.x;\n\
         \tatom.global.add.u32 %r2, [%rd1], 1;\nPOLL:\n\tld.volatile.global.u32 %r3, [%rd1];\n\
         \tsetp.lt.u32 %p1, %r3, %r1;\n\t@%p1 bra POLL;\nDONE:\n\tret;\n}}\n",
        instruction_support::HEADER
    );
    let m = Module::parse(&src).expect("parses");
    let mut emu = Emulator::new();
    let count = emu.alloc(8, "count");
    let workspace = emu.alloc(8, "grid workspace");
    let config = LaunchConfig {
        grid: [32, 1, 1],
        block: [1024, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let options = RunOptions {
        grid_workspace: Some(workspace.0),
        ..RunOptions::default()
    };
    let report = emu
        .launch(&m, "t", &config, &[KernelArg::Ptr(count)], &options)
        .expect("runs");
    assert!(report.completed && report.findings.is_empty(), "{report:?}");
    // Every block arrives within its first few instructions; 32 polling threads then need a
    // few polls each. With 28 blocks resident at first, they polled through 4 096 rounds before
    // a 29th block started, 8 192 more before a 30th, and so on.
    assert!(
        report.thread_instructions < 200_000,
        "{} thread-instructions",
        report.thread_instructions
    );
}

#[test]
fn half_precision_arithmetic_rounds_to_nearest_half() {
    // 0x3C00 = 1, 0x3555 ≈ 1/3 (0.33325195), 0x7BFF = 65504 (the largest half), 0x0001 = 2^-24.
    let w = words(
        "mov.b16 %rs1, 0x3C00; mov.b16 %rs2, 0x3555; mov.b16 %rs3, 0x7BFF; mov.b16 %rs4, 0x0001;
         add.f16 %rs5, %rs1, %rs2; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39], %r1;
         sub.f16 %rs5, %rs2, %rs1; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+4], %r1;
         mul.f16 %rs5, %rs2, %rs2; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+8], %r1;
         add.f16 %rs5, %rs3, %rs3; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+12], %r1;
         fma.rn.f16 %rs5, %rs2, %rs3, %rs1; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+16], %r1;
         add.f16 %rs5, %rs1, %rs4; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+20], %r1;
         neg.f16 %rs5, %rs2; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+24], %r1;
         min.f16 %rs5, %rs1, %rs2; cvt.u32.u16 %r1, %rs5; st.global.u32 [%rd39+28], %r1;
         setp.gt.f16 %p1, %rs1, %rs2; selp.u32 %r1, 1, 0, %p1; st.global.u32 [%rd39+32], %r1;",
    );
    let half = |bits: u32| half::f16::from_bits(bits as u16);
    let third = half(0x3555);
    assert_eq!(half(w[0]), half::f16::from_f64(1.0 + third.to_f64()));
    assert_eq!(half(w[1]), half::f16::from_f64(third.to_f64() - 1.0));
    assert_eq!(
        half(w[2]),
        half::f16::from_f64(third.to_f64() * third.to_f64())
    );
    assert_eq!(w[3], 0x7C00, "65504 + 65504 overflows to infinity");
    assert_eq!(
        half(w[4]),
        half::f16::from_f64(third.to_f64() * 65504.0 + 1.0),
        "one rounding of the exact a·b + c"
    );
    assert_eq!(w[5], 0x3C00, "1 + 2^-24 rounds back to 1");
    assert_eq!(w[6], 0xB555);
    assert_eq!(w[7], 0x3555);
    assert_eq!(w[8], 1);
}

/// Conversions to a half round once, from the exact value, in the mode they name: through an
/// f32 first, an f64 or a 64-bit integer just past a tie would land on the tie and round to
/// even, and `.rz`/`.rm`/`.rp` were taken for `.rn`.
#[test]
fn half_conversions_round_once_in_the_mode_they_name() {
    // 0f3F803000 = 1 + 3·2^-11: halfway between the halves 1 + 2^-10 (0x3C01) and 1 + 2^-9.
    let w = words(
        "mov.f32 %f1, 0f3F803000; mov.f32 %f2, 0fBF803000;
         cvt.rz.f16.f32 %rs1, %f1; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39], %r1;
         cvt.rn.f16.f32 %rs1, %f1; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+4], %r1;
         cvt.rm.f16.f32 %rs1, %f2; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+8], %r1;
         cvt.rp.f16.f32 %rs1, %f2; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+12], %r1;
         cvt.rz.f16x2.f32 %r1, %f2, %f1; st.global.u32 [%rd39+16], %r1;
         cvt.rn.f16x2.f32 %r1, %f2, %f1; st.global.u32 [%rd39+20], %r1;
         mov.f64 %fd1, 0d3FF0020000001000;
         cvt.rn.f16.f64 %rs1, %fd1; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+24], %r1;
         mov.u64 %rd1, 0x1010000000000001;
         cvt.rn.bf16.s64 %rs1, %rd1; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+28], %r1;
         mov.b16 %rs2, 0x0001;
         add.rn.ftz.f16 %rs1, %rs2, %rs2; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+32], %r1;
         add.rn.f16 %rs1, %rs2, %rs2; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39+36], %r1;",
    );
    assert_eq!(w[0], 0x3C01, "cvt.rz: toward zero");
    assert_eq!(w[1], 0x3C02, "cvt.rn: the tie goes to the even half");
    assert_eq!(w[2], 0xBC02, "cvt.rm of a negative: away from zero");
    assert_eq!(w[3], 0xBC01, "cvt.rp of a negative: toward zero");
    assert_eq!(
        w[4], 0xBC01_3C01,
        "cvt.rz.f16x2: both halves toward zero, a high"
    );
    assert_eq!(w[5], 0xBC02_3C02);
    assert_eq!(w[6], 0x3C01, "1 + 2^-11 + 2^-40 is past the tie");
    assert_eq!(
        w[7], 0x5D81,
        "2^60 + 2^52 + 1 is past the tie between 2^60 and 2^60 + 2^53"
    );
    assert_eq!(w[8], 0, ".ftz: 2^-23 is subnormal, flushed");
    assert_eq!(w[9], 2);
}

/// A `mul` and an `add`/`sub` with no rounding modifier run as one `fma`, as the GPU's JIT
/// compiles them; `.rn` written out keeps them apart.
#[test]
fn a_mul_and_a_sub_run_as_the_gpus_jit_fuses_them() {
    // (1 + 2^-12)^2 - 1 = 2^-11 + 2^-24 exactly; the rounded square is 1 + 2^-11 (a tie, to even).
    let w = words(
        "mov.f32 %f1, 0f3F800800;
         mul.f32 %f2, %f1, %f1; sub.f32 %f3, %f2, 0f3F800000; st.global.f32 [%rd39], %f3;
         mul.f32 %f2, %f1, %f1; sub.f32 %f3, 0f3F800000, %f2; st.global.f32 [%rd39+4], %f3;
         mul.rn.f32 %f2, %f1, %f1; sub.f32 %f3, %f2, 0f3F800000; st.global.f32 [%rd39+8], %f3;
         mul.f32 %f2, %f1, %f1; add.rn.f32 %f3, %f2, 0fBF800000; st.global.f32 [%rd39+12], %f3;
         st.global.f32 [%rd39+16], %f2;",
    );
    assert_eq!(w[0], 0x3A00_0400, "fused: 2^-11 + 2^-24");
    assert_eq!(w[1], 0xBA00_0400, "fused, the product negated");
    assert_eq!(w[2], 0x3A00_0000, "mul.rn: the product rounded first");
    assert_eq!(w[3], 0x3A00_0000, "add.rn: likewise");
    assert_eq!(
        w[4], 0x3F80_1000,
        "the mul's own result is still the rounded product"
    );
}

#[test]
fn double_precision() {
    let d = dwords(
        "mov.f64 %fd1, 0d4008000000000000; mov.f64 %fd2, 0d4000000000000000;
         add.f64 %fd3, %fd1, %fd2; st.global.f64 [%rd39], %fd3;
         div.rn.f64 %fd3, %fd1, %fd2; st.global.f64 [%rd39+8], %fd3;
         fma.rn.f64 %fd3, %fd1, %fd2, 0d3FF0000000000000; st.global.f64 [%rd39+16], %fd3;
         sqrt.rn.f64 %fd3, %fd2; st.global.f64 [%rd39+24], %fd3;
         rcp.rn.f64 %fd3, %fd2; st.global.f64 [%rd39+32], %fd3;
         mov.f64 %fd4, 1.25; st.global.f64 [%rd39+40], %fd4;",
    );
    let f: Vec<f64> = d.iter().map(|&x| f64::from_bits(x)).collect();
    assert_eq!(f[..6], [5.0, 1.5, 7.0, 2f64.sqrt(), 0.5, 1.25][..]);
}

#[test]
fn conversions_with_rounding_and_saturation() {
    let w = words(
        "mov.f32 %f1, 0f40200000; mov.f32 %f2, 0fC0200000;
         cvt.rni.s32.f32 %r1, %f1; st.global.u32 [%rd39], %r1;
         cvt.rzi.s32.f32 %r1, %f2; st.global.u32 [%rd39+4], %r1;
         cvt.rmi.s32.f32 %r1, %f2; st.global.u32 [%rd39+8], %r1;
         cvt.rpi.s32.f32 %r1, %f1; st.global.u32 [%rd39+12], %r1;
         cvt.rzi.u32.f32 %r1, %f2; st.global.u32 [%rd39+16], %r1;
         cvt.rzi.s32.f32 %r1, 0f7F800000; st.global.u32 [%rd39+20], %r1;
         cvt.rzi.s32.f32 %r1, 0f7FC00000; st.global.u32 [%rd39+24], %r1;
         cvt.sat.u8.s32 %r1, 300; st.global.u32 [%rd39+28], %r1;
         cvt.s32.s8 %r1, 200; st.global.u32 [%rd39+32], %r1;
         cvt.u32.u16 %r1, 0x12345; st.global.u32 [%rd39+36], %r1;
         cvt.rn.f32.s32 %f3, -7; st.global.f32 [%rd39+40], %f3;
         cvt.rz.f32.u32 %f3, 16777217; st.global.f32 [%rd39+44], %f3;
         cvt.rp.f32.u32 %f3, 16777217; st.global.f32 [%rd39+48], %f3;
         cvt.sat.f32.f32 %f3, %f1; st.global.f32 [%rd39+52], %f3;
         cvt.rni.f32.f32 %f3, 0f40200000; st.global.f32 [%rd39+56], %f3;
         cvt.rn.f16.f32 %rs1, 0f3FC00000; cvt.f32.f16 %f4, %rs1; st.global.f32 [%rd39+60], %f4;",
    );
    assert_eq!(
        w[..11],
        [
            2,
            (-2i32) as u32,
            (-3i32) as u32,
            3,
            0,
            i32::MAX as u32,
            0,
            255,
            (-56i32) as u32,
            0x2345,
            (-7.0f32).to_bits()
        ][..]
    );
    assert_eq!(f32::from_bits(w[11]), 16_777_216.0);
    assert_eq!(f32::from_bits(w[12]), 16_777_218.0);
    assert_eq!(f32::from_bits(w[13]), 1.0);
    assert_eq!(f32::from_bits(w[14]), 2.0);
    assert_eq!(f32::from_bits(w[15]), 1.5);
    let d = dwords(
        "mov.f64 %fd1, 0d3FF0000000000001;
         cvt.rm.f32.f64 %f1, %fd1; cvt.f64.f32 %fd2, %f1; st.global.f64 [%rd39], %fd2;
         cvt.rp.f32.f64 %f1, %fd1; cvt.f64.f32 %fd2, %f1; st.global.f64 [%rd39+8], %fd2;
         cvt.s64.s32 %rd1, -5; st.global.u64 [%rd39+16], %rd1;
         cvt.u64.u32 %rd1, -5; st.global.u64 [%rd39+24], %rd1;
         cvt.rn.f64.s64 %fd3, -9; st.global.f64 [%rd39+32], %fd3;",
    );
    assert_eq!(f64::from_bits(d[0]), 1.0);
    assert_eq!(f64::from_bits(d[1]), 1.0 + f32::EPSILON as f64);
    assert_eq!(d[2], (-5i64) as u64);
    assert_eq!(d[3], 0xFFFF_FFFB);
    assert_eq!(f64::from_bits(d[4]), -9.0);
}
