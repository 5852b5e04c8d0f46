//! Memory and warp instruction families on hand-written PTX, with exact expected values: loads,
//! stores, atomics, shuffles, votes, matches, reductions and warp syncs.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

mod instruction_support;
use instruction_support::*;

#[test]
fn loads_stores_vectors_and_sign_extension() {
    let w = words(
        "mov.u32 %r1, 0x000000F0; st.global.u32 [%rd39+60], %r1;
         ld.global.s8 %r2, [%rd39+60]; st.global.u32 [%rd39], %r2;
         ld.global.u8 %r2, [%rd39+60]; st.global.u32 [%rd39+4], %r2;
         ld.global.s8 %rs1, [%rd39+60]; cvt.u32.u16 %r3, %rs1; st.global.u32 [%rd39+8], %r3;
         st.global.v4.u32 [%rd39+16], {%r1, %r2, %r3, %r1};
         ld.global.v2.u32 {%r4, %r5}, [%rd39+24]; st.global.u32 [%rd39+12], %r5;
         ld.volatile.global.u32 %r6, [%rd39+16]; st.global.u32 [%rd39+32], %r6;
         ld.global.nc.u32 %r6, [%rd39+20]; st.global.u32 [%rd39+36], %r6;",
    );
    assert_eq!(w[0], 0xFFFF_FFF0);
    assert_eq!(w[1], 0xF0);
    assert_eq!(w[2], 0xFFF0);
    assert_eq!(w[3], 0xF0);
    assert_eq!(&w[4..10], &[0xF0, 0xF0, 0xFFF0, 0xF0, 0xF0, 0xF0]);
}

#[test]
fn shared_local_and_module_globals() {
    let (b, r) = run_threads(
        ".global .align 4 .u32 gtable[3] = {10, 20, 30};\n.shared .align 4 .b8 sbuf[64];",
        "\t.local .align 8 .b8 __local_depot0[16];
         .reg .b64 %SP; .reg .b64 %SPL;
         mov.u64 %SPL, __local_depot0; cvta.local.u64 %SP, %SPL;
         st.local.u32 [%SPL+4], 99; ld.u32 %r1, [%SP+4]; st.global.u32 [%rd39], %r1;
         mov.u64 %rd1, sbuf; st.shared.u32 [%rd1+8], 5; cvta.shared.u64 %rd2, %rd1;
         ld.u32 %r2, [%rd2+8]; st.global.u32 [%rd39+4], %r2;
         cvta.to.shared.u64 %rd3, %rd2; ld.shared.u32 %r3, [%rd3+8]; st.global.u32 [%rd39+8], %r3;
         mov.u64 %rd4, gtable; ld.global.u32 %r4, [%rd4+8]; st.global.u32 [%rd39+12], %r4;
         mov.u32 %r5, sbuf; st.shared.u32 [%r5+12], 6; ld.shared.u32 %r6, [sbuf+12]; st.global.u32 [%rd39+16], %r6;",
        1,
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(
        (0..5).map(|i| u32_at(&b, i)).collect::<Vec<_>>(),
        vec![99, 5, 5, 30, 6]
    );
}

#[test]
fn uninitialized_shared_memory_is_not_zero_and_initcheck_says_so() {
    let (b, r) = run_threads(
        ".shared .align 4 .b8 junk[16];",
        "st.shared.u8 [junk+1], 7;
         ld.shared.u32 %r1, [junk]; st.global.u32 [%rd39], %r1;
         ld.shared.u8 %r2, [junk+1]; st.global.u32 [%rd39+4], %r2;",
        1,
    );
    assert_ne!(u32_at(&b, 0), 0);
    assert_eq!(u32_at(&b, 1), 7);
    // The u32 read includes three bytes nothing wrote; the u8 read of the written byte is fine.
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(
        f.kind,
        FindingKind::UninitializedRead {
            space: Space::Shared
        }
    );
    assert_eq!(f.location.as_ref().unwrap().to_string(), "junk[0]");
}

#[test]
fn atomics_on_global_and_shared() {
    let (b, r) = run_threads(
        ".shared .align 8 .b8 s[64];",
        "setp.ne.u32 %p1, %r0, 0; @%p1 bra WAIT;
         st.shared.u32 [s], 0; st.shared.u32 [s+4], 100; st.shared.f32 [s+8], 0f00000000; st.shared.u32 [s+12], 0;
         st.shared.u32 [s+16], 0xFF; st.shared.u32 [s+20], 0; st.shared.u32 [s+24], 5; st.shared.u32 [s+28], 0;
         st.shared.u64 [s+32], 0;
         WAIT: bar.sync 0;
         atom.shared.add.u32 %r1, [s], 1;
         atom.shared.min.s32 %r2, [s+4], %r0;
         atom.shared.add.f32 %f1, [s+8], 0f3F000000;
         atom.shared.inc.u32 %r3, [s+12], 5;
         atom.shared.and.b32 %r4, [s+16], -2;
         atom.shared.or.b32 %r4, [s+20], 8;
         atom.shared.cas.b32 %r5, [s+24], 5, 9;
         atom.shared.add.u64 %rd5, [s+32], 3;
         red.shared.max.s32 [s+4], -50;
         bar.sync 0;
         @%p1 bra END;
         ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [s];
         st.global.v4.u32 [%rd39], {%r10, %r11, %r12, %r13};
         ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [s+16];
         st.global.v4.u32 [%rd39+16], {%r10, %r11, %r12, %r13};
         ld.shared.u64 %rd6, [s+32]; st.global.u64 [%rd39+32], %rd6;
         atom.global.exch.b32 %r14, [%rd39+32], 7; st.global.u32 [%rd39+40], %r14;
         atom.global.dec.u32 %r15, [%rd39+32], 10; atom.global.dec.u32 %r15, [%rd39+32], 10;
         atom.relaxed.gpu.global.max.u32 %r16, [%rd39+32], 1;
         END:",
        40,
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let w: Vec<u32> = (0..12).map(|i| u32_at(&b, i)).collect();
    assert_eq!(w[0], 40);
    assert_eq!(w[1] as i32, 0);
    assert_eq!(f32::from_bits(w[2]), 20.0);
    // inc wraps to 0 after reaching 5: 40 increments of a counter modulo 6.
    assert_eq!(w[3], 40 % 6);
    assert_eq!(w[4], 0xFE);
    assert_eq!(w[5], 8);
    assert_eq!(w[6], 9);
    // s+32 (40 * 3 = 120) copied to global, exchanged for 7, decremented twice, max'd with 1.
    assert_eq!(u64_at(&b, 4), 5);
    assert_eq!(w[10], 120);
}

#[test]
fn warp_shuffles_and_votes() {
    let (b, r) = run_threads(
        "",
        "shfl.sync.down.b32 %r1|%p1, %r0, 3, 31, -1; st.global.u32 [%rd39], %r1;
         selp.u32 %r9, 1, 0, %p1; st.global.u32 [%rd39+4], %r9;
         shfl.sync.up.b32 %r2, %r0, 2, 0, -1; st.global.u32 [%rd39+8], %r2;
         shfl.sync.bfly.b32 %r3, %r0, 1, 31, -1; st.global.u32 [%rd39+12], %r3;
         shfl.sync.idx.b32 %r4, %r0, 5, 31, -1; st.global.u32 [%rd39+16], %r4;
         shfl.sync.idx.b32 %r4, %r0, 1, 0x181F, -1; st.global.u32 [%rd39+20], %r4;
         setp.lt.u32 %p2, %r0, 4;
         vote.sync.ballot.b32 %r5, %p2, -1; st.global.u32 [%rd39+24], %r5;
         vote.sync.any.pred %p3, %p2, -1; selp.u32 %r6, 1, 0, %p3; st.global.u32 [%rd39+28], %r6;
         vote.sync.all.pred %p3, %p2, -1; selp.u32 %r6, 1, 0, %p3; st.global.u32 [%rd39+32], %r6;
         vote.sync.uni.pred %p3, %p2, -1; selp.u32 %r6, 1, 0, %p3; st.global.u32 [%rd39+36], %r6;
         activemask.b32 %r7; st.global.u32 [%rd39+40], %r7;
         mov.u32 %r8, %laneid; st.global.u32 [%rd39+44], %r8;
         bar.warp.sync -1;",
        32,
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    for lane in 0..32usize {
        let w: Vec<u32> = (0..12).map(|i| u32_at(&b, lane * 16 + i)).collect();
        let l = lane as u32;
        assert_eq!(w[0], if l + 3 <= 31 { l + 3 } else { l }, "lane {lane}");
        assert_eq!(w[1], (l + 3 <= 31) as u32);
        assert_eq!(w[2], if l >= 2 { l - 2 } else { l });
        assert_eq!(w[3], l ^ 1);
        assert_eq!(w[4], 5);
        // Segments of 8 lanes (c = 0x181F): index 1 within each segment.
        assert_eq!(w[5], (l & !7) | 1);
        assert_eq!(w[6], 0xF);
        assert_eq!((w[7], w[8], w[9]), (1, 0, 0));
        assert_eq!(w[10], u32::MAX);
        assert_eq!(w[11], l);
    }
}

#[test]
fn warp_matches_group_lanes_by_value() {
    let (b, r) = run_threads(
        "",
        "and.b32 %r1, %r0, 3;
         match.any.sync.b32 %r2, %r1, -1; st.global.u32 [%rd39], %r2;
         setp.lt.u32 %p2, %r0, 16; @!%p2 bra HIGH;
         match.any.sync.b32 %r2, %r1, 0x0000FFFF; st.global.u32 [%rd39+4], %r2;
         HIGH:
         match.all.sync.b32 %r3|%p1, %r1, -1; st.global.u32 [%rd39+8], %r3;
         selp.u32 %r4, 1, 0, %p1; st.global.u32 [%rd39+12], %r4;
         shr.u32 %r5, %r0, 5;
         match.all.sync.b32 %r3|%p1, %r5, -1; st.global.u32 [%rd39+16], %r3;
         selp.u32 %r4, 1, 0, %p1; st.global.u32 [%rd39+20], %r4;
         cvt.u64.u32 %rd1, %r1; shl.b64 %rd1, %rd1, 40;
         match.any.sync.b64 %r6, %rd1, -1; st.global.u32 [%rd39+24], %r6;",
        32,
    );
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    for lane in 0..32usize {
        let w: Vec<u32> = (0..7).map(|i| u32_at(&b, lane * 16 + i)).collect();
        // lanes l with the same l % 4: every fourth lane, starting at l % 4
        let same = 0x1111_1111u32 << (lane % 4);
        assert_eq!(w[0], same, "lane {lane}");
        if lane < 16 {
            assert_eq!(w[1], same & 0xFFFF, "lane {lane}");
        }
        assert_eq!((w[2], w[3]), (0, 0), "lane {lane}");
        assert_eq!((w[4], w[5]), (u32::MAX, 1), "lane {lane}");
        // values that differ only above bit 32 are told apart
        assert_eq!(w[6], same, "lane {lane}");
    }
}

#[test]
fn warp_reductions_give_every_member_the_result() {
    let (b, r) = run_threads(
        "",
        "redux.sync.add.u32 %r1, %r0, -1; st.global.u32 [%rd39], %r1;
         sub.s32 %r2, 10, %r0;
         redux.sync.min.s32 %r3, %r2, -1; st.global.u32 [%rd39+4], %r3;
         redux.sync.max.s32 %r3, %r2, -1; st.global.u32 [%rd39+8], %r3;
         redux.sync.min.u32 %r3, %r2, -1; st.global.u32 [%rd39+12], %r3;
         shl.b32 %r4, 1, %r0;
         redux.sync.or.b32 %r5, %r4, -1; st.global.u32 [%rd39+16], %r5;
         redux.sync.xor.b32 %r5, %r0, -1; st.global.u32 [%rd39+20], %r5;
         redux.sync.and.b32 %r5, %r4, -1; st.global.u32 [%rd39+24], %r5;
         setp.lt.u32 %p1, %r0, 8; @!%p1 bra DONE;
         redux.sync.add.u32 %r6, %r0, 0xFF; st.global.u32 [%rd39+28], %r6;
         DONE:",
        32,
    );
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    for lane in 0..32usize {
        let w: Vec<u32> = (0..8).map(|i| u32_at(&b, lane * 16 + i)).collect();
        assert_eq!(w[0], 496, "lane {lane}: 0 + 1 + … + 31");
        assert_eq!(w[1] as i32, -21, "lane {lane}: 10 - 31");
        assert_eq!(w[2], 10, "lane {lane}");
        assert_eq!(w[3], 0, "lane {lane}: 10 - 10 is the least unsigned");
        assert_eq!((w[4], w[5], w[6]), (u32::MAX, 0, 0), "lane {lane}");
        if lane < 8 {
            assert_eq!(w[7], 28, "lane {lane}: lanes 0 to 7 of mask 0xFF");
        }
    }
}

#[test]
fn shuffle_after_divergence_sees_every_lane() {
    let (b, r) = run_threads(
        "",
        "and.b32 %r1, %r0, 1; setp.eq.u32 %p1, %r1, 0;
         @%p1 bra EVEN;
         add.u32 %r2, %r0, 1000;
         bra JOIN;
         EVEN: add.u32 %r2, %r0, 2000;
         JOIN: shfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;
         st.global.u32 [%rd39], %r3;",
        32,
    );
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    for l in 0..32u32 {
        let src = l ^ 1;
        assert_eq!(
            u32_at(&b, l as usize * 16),
            src + if src % 2 == 0 { 2000 } else { 1000 }
        );
    }
}

#[test]
fn shuffles_with_one_mode_and_mask_meet_across_instructions() {
    // sm_70 and later: shfl.sync waits for the lanes of its mask at any shfl.sync with the same
    // mode and mask, so each half of the warp exchanges with the other from its own instruction.
    let (b, r) = run_threads(
        "",
        "and.b32 %r1, %r0, 1; setp.eq.u32 %p1, %r1, 0;
         @%p1 bra EVEN;
         shfl.sync.bfly.b32 %r3, %r0, 1, 31, -1;
         bra DONE;
         EVEN: add.u32 %r4, %r0, 100; shfl.sync.bfly.b32 %r3, %r4, 1, 31, -1;
         DONE: st.global.u32 [%rd39], %r3;",
        32,
    );
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    for l in 0..32u32 {
        let src = l ^ 1;
        let expect = if src % 2 == 0 { src + 100 } else { src };
        assert_eq!(u32_at(&b, l as usize * 16), expect, "lane {l}");
    }
}

#[test]
fn a_shuffle_waiting_for_lanes_at_a_syncwarp_never_completes() {
    let (_, r) = run_threads(
        "",
        "and.b32 %r1, %r0, 1; setp.eq.u32 %p1, %r1, 0;
         @%p1 bra EVEN;
         shfl.sync.bfly.b32 %r3, %r0, 1, 31, -1;
         bra DONE;
         EVEN: bar.warp.sync -1;
         DONE: st.global.u32 [%rd39], %r3;",
        32,
    );
    assert!(!r.completed);
    let hang = |problem| {
        r.findings
            .iter()
            .find(|f| f.kind == FindingKind::WarpSync { problem })
    };
    let f = hang(WarpSyncProblem::NeverArrive).expect("never-arrive finding");
    let text = f.to_string();
    // Each half waits for the other: the report names both calls.
    assert!(
        text.contains("wait in __shfl_xor_sync(0xffffffff)"),
        "{text}"
    );
    assert!(text.contains("wait in __syncwarp(0xffffffff)"), "{text}");
    assert!(text.contains("16 threads named in the mask wait"), "{text}");
    assert!(r.findings.iter().any(|f| f.kind == FindingKind::Deadlock));
}

#[test]
fn warp_sync_with_the_callers_lane_outside_the_mask_is_reported() {
    // Lanes 16..31 call __syncwarp(0x0000ffff): their own bit is not in the mask.
    let (_, r) = run_threads("", "bar.warp.sync 0xffff; st.global.u32 [%rd39], %r0;", 32);
    let f = r
        .findings
        .iter()
        .find(|f| {
            f.kind
                == FindingKind::WarpSync {
                    problem: WarpSyncProblem::LaneNotInMask,
                }
        })
        .expect("lane-not-in-mask finding");
    assert_eq!(f.threads[0].threads, 16, "{f}");
    assert_eq!(f.threads[0].example.thread, [16, 0, 0], "{f}");
    assert!(r.completed);
}

#[test]
fn lanes_meeting_with_different_masks_are_reported() {
    // Every lane computes its own mask: lanes 0..15 pass 0x0000ffff, lanes 16..31 pass -1.
    let (_, r) = run_threads(
        "",
        "setp.lt.u32 %p1, %r0, 16; selp.b32 %r1, 0xffff, -1, %p1;
         vote.sync.ballot.b32 %r2, %p1, %r1; st.global.u32 [%rd39], %r2;",
        32,
    );
    let f = r
        .findings
        .iter()
        .find(|f| {
            f.kind
                == FindingKind::WarpSync {
                    problem: WarpSyncProblem::MaskMismatch,
                }
        })
        .expect("mask-mismatch finding");
    assert_eq!(f.threads.len(), 2, "{f}");
    assert!(f.to_string().contains("__ballot_sync(0x0000ffff)"), "{f}");
}

#[test]
fn barrier_reductions() {
    let (b, r) = run_threads(
        "",
        "setp.lt.u32 %p1, %r0, 10;
         bar.red.popc.u32 %r1, 0, %p1; st.global.u32 [%rd39], %r1;
         bar.red.and.pred %p2, 0, %p1; selp.u32 %r2, 1, 0, %p2; st.global.u32 [%rd39+4], %r2;
         bar.red.or.pred %p3, 0, %p1; selp.u32 %r3, 1, 0, %p3; st.global.u32 [%rd39+8], %r3;
         barrier.sync.aligned 0;",
        64,
    );
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    for t in 0..64 {
        assert_eq!(
            (
                u32_at(&b, t * 16),
                u32_at(&b, t * 16 + 1),
                u32_at(&b, t * 16 + 2)
            ),
            (10, 0, 1)
        );
    }
}

#[test]
fn special_registers_in_3d() {
    let src = kernel(
        "",
        "mov.u32 %r1, %tid.y; mov.u32 %r2, %tid.z; mov.u32 %r3, %ntid.y; mov.u32 %r4, %ctaid.y; mov.u32 %r5, %nctaid.z;
         mov.u32 %r6, %warpid; mov.u32 %r7, %nwarpid;
         mov.u32 %r10, %tid.x; mad.lo.u32 %r11, %r1, 2, %r10; mad.lo.u32 %r11, %r2, 6, %r11;
         mov.u32 %r12, %ctaid.x; mad.lo.u32 %r13, %r4, 2, %r12; mad.lo.u32 %r11, %r13, 24, %r11;
         mul.wide.u32 %rd1, %r11, 32; add.s64 %rd2, %rd0, %rd1;
         st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4}; st.global.v4.u32 [%rd2+16], {%r5, %r6, %r7, %r11};",
    );
    let m = Module::parse(&src).unwrap();
    let mut emu = Emulator::new();
    let out = emu.alloc(32 * 24 * 6, "out");
    let r = emu
        .launch(
            &m,
            "t",
            &LaunchConfig {
                grid: [2, 3, 1],
                block: [2, 3, 4],
                dynamic_shared_bytes: 0,
            },
            &[KernelArg::Ptr(out)],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let mut b = vec![0u8; 32 * 24 * 6];
    emu.read(out, &mut b).unwrap();
    // Thread (1,2,3) of block (1,2,0): linear 1 + 2*2 + 3*6 = 23, block 1 + 2*2 = 5.
    let i = (5 * 24 + 23) * 8;
    assert_eq!(
        (0..8).map(|k| u32_at(&b, i + k)).collect::<Vec<_>>(),
        vec![2, 3, 3, 2, 1, 0, 1, 5 * 24 + 23]
    );
}

#[test]
fn device_function_calls_with_return_values() {
    let src = format!(
        "{HEADER}
.func (.param .b32 ret) add3(.param .b32 a, .param .b32 b)
{{
    .reg .b32 %r<4>;
    ld.param.b32 %r1, [a];
    ld.param.b32 %r2, [b];
    add.s32 %r3, %r1, %r2;
    add.s32 %r3, %r3, 3;
    st.param.b32 [ret+0], %r3;
    ret;
}}
.visible .entry t(.param .u64 out)
{{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    {{
        .param .b32 p0;
        .param .b32 p1;
        .param .b32 rv;
        st.param.b32 [p0], %r1;
        st.param.b32 [p1], 10;
        call.uni (rv), add3, (p0, p1);
        ld.param.b32 %r2, [rv];
    }}
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
    ret;
}}"
    );
    let m = Module::parse(&src).unwrap();
    let mut emu = Emulator::new();
    let out = emu.alloc(4 * 40, "out");
    let r = emu
        .launch(
            &m,
            "t",
            &LaunchConfig {
                grid: [1, 1, 1],
                block: [40, 1, 1],
                dynamic_shared_bytes: 0,
            },
            &[KernelArg::Ptr(out)],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(r.findings.is_empty() && r.completed);
    let mut b = vec![0u8; 160];
    emu.read(out, &mut b).unwrap();
    assert_eq!(
        (0..40).map(|i| u32_at(&b, i)).collect::<Vec<_>>(),
        (13..53).collect::<Vec<_>>()
    );
}

/// Two device functions with one signature, a vtable of their addresses (before their
/// definitions, as NVCC writes virtual functions), and a kernel that calls `table[tid % 2]` with
/// its thread index: even threads double it, odd ones negate it, diverging inside each warp.
fn vtable_program(table_index: &str) -> String {
    format!(
        "{HEADER}
.func (.param .b32 ret) double_it(.param .b32 a);
.func (.param .b32 ret) negate_it(.param .b32 a);
.global .align 8 .u64 table[2] = {{double_it, negate_it}};
.func (.param .b32 ret) double_it(.param .b32 a)
{{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    add.s32 %r2, %r1, %r1;
    st.param.b32 [ret+0], %r2;
    ret;
}}
.func (.param .b32 ret) negate_it(.param .b32 a)
{{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    neg.s32 %r2, %r1;
    st.param.b32 [ret+0], %r2;
    ret;
}}
.visible .entry t(.param .u64 out)
{{
    .reg .b32 %r<6>;
    .reg .b64 %rd<10>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    {table_index}
    mov.u64 %rd4, table;
    mul.wide.u32 %rd5, %r2, 8;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.u64 %rd7, [%rd6];
    {{
        .param .b32 p0;
        .param .b32 rv;
        st.param.b32 [p0], %r1;
        proto : .callprototype (.param .b32 _) _ (.param .b32 _);
        call (rv), %rd7, (p0), proto;
        ld.param.b32 %r3, [rv];
    }}
    mov.u64 %rd8, negate_it;
    setp.eq.u64 %p1, %rd7, %rd8;
    selp.u32 %r4, 1, 0, %p1;
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {{%r3, %r4}};
    ret;
}}"
    )
}

fn run_vtable(table_index: &str, threads: u32) -> (Vec<u8>, RunReport) {
    let src = vtable_program(table_index);
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut emu = Emulator::new();
    let out = emu.alloc(8 * threads as usize, "out");
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let r = emu
        .launch(
            &m,
            "t",
            &config,
            &[KernelArg::Ptr(out)],
            &RunOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut b = vec![0u8; 8 * threads as usize];
    emu.read(out, &mut b).unwrap();
    (b, r)
}

#[test]
fn virtual_calls_through_a_vtable_reach_each_lanes_function() {
    let (b, r) = run_vtable("and.b32 %r2, %r1, 1;", 40);
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    for tid in 0..40u32 {
        let (value, is_negate) = (
            u32_at(&b, 2 * tid as usize),
            u32_at(&b, 2 * tid as usize + 1),
        );
        let odd = tid % 2 == 1;
        let expected = if odd {
            (tid as i32).wrapping_neg() as u32
        } else {
            2 * tid
        };
        assert_eq!(
            (value, is_negate),
            (expected, u32::from(odd)),
            "thread {tid}"
        );
    }
}

#[test]
fn a_call_through_an_address_that_is_no_functions_stops_the_launch() {
    // Entry 2 of a 2-entry table is whatever lies past it: zero.
    let (_, r) = run_vtable("mov.u32 %r2, 2;", 1);
    assert!(!r.completed);
    let finding = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::InvalidCallTarget)
        .unwrap_or_else(|| panic!("{:?}", r.findings));
    assert!(
        finding
            .to_string()
            .contains("0x0, which is no device function's address"),
        "{finding}"
    );
}

#[test]
fn a_kernel_parameters_address_reads_the_parameter_buffer() {
    // A 32000-byte parameter (the most a kernel may take is 32764 bytes), read through its
    // address as NVCC reads `__grid_constant__` structs: word i holds 3i + 1.
    let src = format!(
        "{HEADER}
.visible .entry t(.param .align 4 .b8 big[32000], .param .u64 out)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    mov.b64 %rd1, big;
    ld.param.u64 %rd2, [out];
    ld.param.u32 %r1, [%rd1];
    ld.param.u32 %r2, [%rd1+31996];
    add.s64 %rd3, %rd1, 400;
    ld.param.v2.u32 {{%r3, %r4}}, [%rd3+4];
    st.global.v4.u32 [%rd2], {{%r1, %r2, %r3, %r4}};
    ret;
}}"
    );
    let m = Module::parse(&src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut emu = Emulator::new();
    let out = emu.alloc(16, "out");
    let big: Vec<u8> = (0..8000u32)
        .flat_map(|i| (3 * i + 1).to_le_bytes())
        .collect();
    let config = LaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let args = [KernelArg::Bytes(big), KernelArg::Ptr(out)];
    let r = emu
        .launch(&m, "t", &config, &args, &RunOptions::default())
        .unwrap();
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    let mut b = vec![0u8; 16];
    emu.read(out, &mut b).unwrap();
    let words: Vec<u32> = (0..4).map(|i| u32_at(&b, i)).collect();
    assert_eq!(words, [1, 3 * 7999 + 1, 3 * 101 + 1, 3 * 102 + 1]);
    // Nothing writes a kernel parameter, and a generic address of one is not emulated.
    for body in [
        "mov.b64 %rd1, t_out; st.param.u32 [%rd1], 1;",
        "mov.b64 %rd1, t_out; cvta.param.u64 %rd2, %rd1;",
    ] {
        let err = refusal(body);
        assert!(err.contains("param"), "{body}: {err}");
    }
}

/// 64 words in global memory, 1000 + i, for the asynchronous copies to read.
fn async_copy_source() -> String {
    let words: Vec<String> = (0..64).map(|i| (1000 + i).to_string()).collect();
    format!(
        ".global .align 16 .u32 src[64] = {{{}}};\n.shared .align 16 .b8 s[256];",
        words.join(", ")
    )
}

/// Each of 64 threads copies `src[tid]` to `s[tid]` with `cp.async`, runs `between`, then
/// stores `s[63 - tid]`.
fn swap_through_async_copies(between: &str) -> (Vec<u32>, RunReport) {
    let body = format!(
        "mov.u64 %rd1, src;
         mul.wide.u32 %rd2, %r0, 4;
         add.s64 %rd3, %rd1, %rd2;
         mov.u32 %r1, s;
         shl.b32 %r2, %r0, 2;
         add.s32 %r3, %r1, %r2;
         cp.async.ca.shared.global [%r3], [%rd3], 4;
         cp.async.commit_group;
         {between}
         sub.s32 %r5, 63, %r0;
         shl.b32 %r6, %r5, 2;
         add.s32 %r7, %r1, %r6;
         ld.shared.u32 %r8, [%r7];
         st.global.u32 [%rd39], %r8;"
    );
    let (b, r) = run_threads(&async_copy_source(), &body, 64);
    ((0..64).map(|t| u32_at(&b, 16 * t)).collect(), r)
}

#[test]
fn async_copies_land_at_the_wait_and_a_barrier_after_it_shares_them() {
    let (out, r) = swap_through_async_copies("cp.async.wait_group 0; bar.sync 0;");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert_eq!(out, (0..64).map(|t| 1063 - t).collect::<Vec<_>>());
}

#[test]
fn a_copy_its_issuer_waits_for_only_after_the_barrier_races_with_other_readers() {
    let (_, r) = swap_through_async_copies("bar.sync 0; cp.async.wait_group 0;");
    assert!(
        r.findings.iter().any(|f| matches!(
            f.kind,
            FindingKind::Race {
                space: Space::Shared,
                ..
            }
        )),
        "{:?}",
        r.findings
    );
}

#[test]
fn async_copies_zero_fill_past_the_source_size_and_wait_by_group() {
    // Three groups: 4 bytes of which 2 come from the source; 16 zeros (the source ignored);
    // 8 bytes. Waiting for all but the newest group lands the first two only.
    let body = "mov.u64 %rd1, src;
         mov.u32 %r1, s;
         cp.async.ca.shared.global [%r1], [%rd1], 4, 2;
         cp.async.commit_group;
         setp.eq.u32 %p1, %r0, 0;
         cp.async.cg.shared.global [%r1+16], [%rd1], 16, %p1;
         cp.async.commit_group;
         cp.async.ca.shared.global [%r1+32], [%rd1+8], 8;
         cp.async.commit_group;
         cp.async.wait_group 1;
         ld.shared.u32 %r2, [%r1];
         ld.shared.v4.u32 {%r3, %r4, %r5, %r6}, [%r1+16];
         st.global.v4.u32 [%rd39], {%r2, %r3, %r4, %r6};
         cp.async.wait_all;
         ld.shared.v2.u32 {%r7, %r8}, [%r1+32];
         st.global.v2.u32 [%rd39+16], {%r7, %r8};";
    let decls = async_copy_source().replace("s[256]", "s[256] = {0}");
    let (b, r) = run_threads(&decls, body, 1);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    let words: Vec<u32> = (0..6).map(|i| u32_at(&b, i)).collect();
    assert_eq!(words, [1000 & 0xFFFF, 0, 0, 0, 1002, 1003]);
}

#[test]
fn a_bulk_copy_completes_its_bytes_on_a_barrier_whose_waiters_then_read_them() {
    // Thread 0 copies 128 bytes with `cp.async.bulk` (its bytes counted before they are
    // expected, as `cuda::memcpy_async` orders them), then arrives; every thread waits for
    // phase 0 and reads word `tid`.
    let decls = format!("{}\n.shared .align 8 .b64 bar;", async_copy_source());
    let body = "mov.u64 %rd1, src;
         mov.u32 %r1, s;
         mov.u32 %r2, bar;
         setp.ne.u32 %p1, %r0, 0;
         @%p1 bra READY;
         mbarrier.init.shared::cta.b64 [%r2], 1;
    READY:
         bar.sync 0;
         @%p1 bra WAIT;
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 128, [%r2];
         mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r2], 128;
         mbarrier.arrive.shared::cta.b64 %rd2, [%r2];
    WAIT:
         mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
         @!%p2 bra WAIT;
         shl.b32 %r3, %r0, 2;
         add.s32 %r4, %r1, %r3;
         ld.shared.u32 %r5, [%r4];
         st.global.u32 [%rd39], %r5;";
    let (b, r) = run_threads(&decls, body, 32);
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    let out: Vec<u32> = (0..32).map(|t| u32_at(&b, 16 * t)).collect();
    assert_eq!(out, (1000..1032).collect::<Vec<_>>());
}

/// 64 threads: thread 0 makes a barrier object for 64 arrivals; each thread writes `s[tid]`,
/// runs `arrive_and_wait` (which arrives with state `%rd1` and waits), and stores `s[63 - tid]`;
/// then a second phase, through the parity form of the wait, with `t[tid]` and `t[tid + 1]`.
fn barrier_phases(after_arrive: &str) -> (Vec<u32>, RunReport) {
    let decls =
        ".shared .align 8 .b64 bar;\n.shared .align 4 .b32 s[64];\n.shared .align 4 .b32 t[64];";
    let body = format!(
        "setp.ne.u32 %p1, %r0, 0;
         @%p1 bra INIT_DONE;
         mbarrier.init.shared.b64 [bar], 64;
    INIT_DONE:
         bar.sync 0;
         mov.u32 %r1, s;
         shl.b32 %r2, %r0, 2;
         add.s32 %r3, %r1, %r2;
         st.shared.u32 [%r3], %r0;
         mbarrier.arrive.shared.b64 %rd1, [bar];
         {after_arrive}
    WAIT_FIRST:
         mbarrier.try_wait.shared.b64 %p2, [bar], %rd1;
         @!%p2 bra WAIT_FIRST;
         sub.s32 %r5, 63, %r0;
         shl.b32 %r6, %r5, 2;
         add.s32 %r7, %r1, %r6;
         ld.shared.u32 %r8, [%r7];
         mov.u32 %r11, t;
         add.s32 %r12, %r11, %r2;
         add.s32 %r13, %r0, 100;
         st.shared.u32 [%r12], %r13;
         mbarrier.arrive.shared::cta.b64 %rd2, [bar];
         mbarrier.pending_count.b64 %r14, %rd2;
    WAIT_SECOND:
         mbarrier.test_wait.parity.shared.b64 %p3, [bar], 1;
         @!%p3 bra WAIT_SECOND;
         add.s32 %r15, %r0, 1;
         and.b32 %r15, %r15, 63;
         shl.b32 %r16, %r15, 2;
         add.s32 %r17, %r11, %r16;
         ld.shared.u32 %r18, [%r17];
         st.global.v2.u32 [%rd39], {{%r8, %r18}};"
    );
    let (b, r) = run_threads(decls, &body, 64);
    (
        (0..64)
            .flat_map(|i| [u32_at(&b, 16 * i), u32_at(&b, 16 * i + 1)])
            .collect(),
        r,
    )
}

#[test]
fn mbarrier_phases_order_what_every_thread_did_before_arriving() {
    let (out, r) = barrier_phases("");
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    let expected: Vec<u32> = (0..64u32)
        .flat_map(|tid| [63 - tid, (tid + 1) % 64 + 100])
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn a_write_after_arriving_is_not_ordered_by_the_phase() {
    // Thread `tid` writes `s[tid]` again after its arrival: thread 63 - tid's read after the
    // wait races with it.
    let (_, r) = barrier_phases("st.shared.u32 [%r3], %r0;");
    assert!(
        r.findings.iter().any(|f| matches!(
            f.kind,
            FindingKind::Race {
                space: Space::Shared,
                ..
            }
        )),
        "{:?}",
        r.findings
    );
}

#[test]
fn misaligned_access_is_reported() {
    let (_, r) = run_threads(
        "",
        "ld.global.u32 %r1, [%rd39+2]; st.global.u32 [%rd39+8], %r1;",
        1,
    );
    assert!(
        r.findings.iter().any(|f| f.kind
            == FindingKind::Misaligned {
                space: Space::Global
            }),
        "{:?}",
        r.findings
    );
}

#[test]
fn shared_out_of_bounds_is_reported() {
    let (_, r) = run_threads(
        ".shared .align 4 .b8 small[16];",
        "st.shared.u32 [small+16], 1;",
        1,
    );
    let f = r
        .findings
        .iter()
        .find(|f| {
            f.kind
                == FindingKind::OutOfBounds {
                    space: Space::Shared,
                }
        })
        .expect("finding");
    assert!(f.to_string().contains("small[4]"), "{f}");
}

#[test]
fn mismatched_named_barriers_deadlock() {
    let (_, r) = run_threads(
        "",
        "setp.lt.u32 %p1, %r0, 32;
         @%p1 bar.sync 1;
         @!%p1 bar.sync 2;",
        64,
    );
    assert!(!r.completed);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Deadlock)
        .expect("deadlock");
    assert_eq!(f.threads.iter().map(|g| g.threads).sum::<u64>(), 64, "{f}");
}

#[test]
fn errors_name_the_problem() {
    // An instruction the emulator cannot run is refused by a launch that reaches it, naming it
    // and its line, so that the module's other kernels still run.
    for (body, opcode, detail) in [
        ("\tfns.b32 %r1, %r2, %r3, %r4;", "fns.b32", "does not know"),
        ("\tadd.s32 %r1, %r2;", "add.s32", "takes 3 operands"),
        (
            "\ttex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd2, {%r1}];",
            "tex.1d.v4.f32.s32",
            "plain pointer",
        ),
    ] {
        let m = Module::parse(&kernel("", body)).unwrap_or_else(|e| panic!("{body}: {e}"));
        let mut emu = Emulator::new();
        let out = emu.alloc(64, "out");
        let config = LaunchConfig {
            grid: [1, 1, 1],
            block: [1, 1, 1],
            dynamic_shared_bytes: 0,
        };
        let e = emu
            .launch(
                &m,
                "t",
                &config,
                &[KernelArg::Ptr(out)],
                &RunOptions::default(),
            )
            .unwrap_err();
        assert!(
            matches!(e, EmuError::CannotRun { opcode: ref o, ref place, .. } if o == opcode && place == "PTX line 19"),
            "{e}"
        );
        assert!(e.to_string().contains(detail), "{e}");
    }
    let e = Module::parse(&kernel("", "\tbra NOWHERE;")).unwrap_err();
    assert!(e.to_string().contains("NOWHERE"), "{e}");
    let e = refusal("\tmov.u64 %rd1, no_such_function;");
    assert!(e.contains("no_such_function"), "{e}");
    let m = Module::parse(&kernel("", "")).unwrap();
    assert_eq!(m.entries().collect::<Vec<_>>(), vec!["t"]);
    let mut emu = Emulator::new();
    let p = emu.alloc(64, "p");
    let cfg = |b: u32, s: u32| LaunchConfig {
        grid: [1, 1, 1],
        block: [b, 1, 1],
        dynamic_shared_bytes: s,
    };
    let opts = RunOptions::default();
    assert!(matches!(
        emu.launch(&m, "nope", &cfg(1, 0), &[KernelArg::Ptr(p)], &opts),
        Err(EmuError::UnknownEntry(_))
    ));
    assert!(matches!(
        emu.launch(&m, "t", &cfg(1025, 0), &[KernelArg::Ptr(p)], &opts),
        Err(EmuError::BadLaunch { .. })
    ));
    assert!(matches!(
        emu.launch(&m, "t", &cfg(1, 49 * 1024), &[KernelArg::Ptr(p)], &opts),
        Err(EmuError::BadLaunch { .. })
    ));
    assert!(matches!(
        emu.launch(&m, "t", &cfg(1, 0), &[], &opts),
        Err(EmuError::BadLaunch { .. })
    ));
    assert!(matches!(
        emu.launch(&m, "t", &cfg(1, 0), &[KernelArg::U32(1)], &opts),
        Err(EmuError::BadLaunch { .. })
    ));
    assert!(matches!(
        emu.write(DevicePtr(p.0 + 60), &[0; 8]),
        Err(EmuError::HostAccess(_))
    ));
    assert!(emu.free(p).is_ok());
    assert!(matches!(emu.free(p), Err(EmuError::HostAccess(_))));
}

#[test]
fn global_timer_halves_read_the_step_counter() {
    let w = words(
        "mov.u64 %rd1, %globaltimer; mov.u32 %r1, %globaltimer_lo; mov.u32 %r2, %globaltimer_hi;
         mov.u64 %rd2, %globaltimer;
         setp.gt.u64 %p1, %rd2, %rd1; selp.u32 %r3, 1, 0, %p1;
         st.global.u32 [%rd39], %r3; st.global.u32 [%rd39+4], %r2;",
    );
    assert_eq!(
        (w[0], w[1]),
        (1, 0),
        "later reads are larger; the high half is 0 this early"
    );
}

#[test]
fn a_call_to_a_function_the_ptx_only_declares_names_it_and_its_line() {
    let src = format!(
        "{HEADER}.extern .func (.param .b32 r) cudaLaunchDevice(.param .b64 a);\n\
         .visible .entry t(.param .u64 out)\n{{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n\
         \t.loc 1 7 3\n\tmov.u64 %rd1, 0;\n\
         \t{{ .param .b64 p0; st.param.b64 [p0+0], %rd1; .param .b32 r0;\n\
         \tcall.uni (r0), cudaLaunchDevice, (p0); ld.param.b32 %r1, [r0+0]; }}\n\tret;\n}}\n\
         .file 1 \"dyn.cu\"\n"
    );
    let error = Module::parse(&src).expect_err("refused").to_string();
    assert!(error.contains("`cudaLaunchDevice` at dyn.cu:7"), "{error}");
    assert!(
        error
            .contains("the emulator provides printf, assert, malloc, free, and the device runtime"),
        "{error}"
    );
}

#[test]
fn graph_set_conditional_hands_each_call_to_the_runtime_in_order() {
    // Threads 1 and 3 set the handle 0xC0DE to their index plus 40; the others call nothing.
    let (_, report) = run_threads(
        ".extern .func cudaGraphSetConditional(.param .b64 h, .param .b32 v);",
        "\tand.b32 %r1, %r0, 1; setp.eq.u32 %p1, %r1, 0; @%p1 bra DONE;
         \tadd.u32 %r2, %r0, 40; mov.u64 %rd1, 0xC0DE;
         \t{ .param .b64 p0; st.param.b64 [p0+0], %rd1; .param .b32 p1; st.param.b32 [p1+0], %r2;
         \tcall.uni cudaGraphSetConditional, (p0, p1); }
         DONE:",
        4,
    );
    let sets: Vec<(u64, u32, u32)> = report
        .conditions
        .iter()
        .map(|c| (c.handle, c.value, c.thread.thread[0]))
        .collect();
    assert_eq!(sets, [(0xC0DE, 41, 1), (0xC0DE, 43, 3)]);
    assert!(report.is_clean(), "{:?}", report.findings);
}

#[test]
fn warp_sz_is_the_warp_size() {
    let w = words("mov.u32 %r1, WARP_SZ; st.global.u32 [%rd39], %r1;");
    assert_eq!(w[0], 32);
}

#[test]
fn twenty_four_bit_multiplies_use_the_low_24_bits() {
    // 0x01_000003 keeps only 3; 0xFFFFFF is -1 in 24 bits when signed, 16777215 when not.
    let w = words(
        "mul24.lo.u32 %r1, 0x01000003, 5; st.global.u32 [%rd39], %r1;
         mul24.lo.s32 %r2, 0xFFFFFF, 7; st.global.u32 [%rd39+4], %r2;
         mul24.hi.u32 %r3, 0xFFFFFF, 0xFFFFFF; st.global.u32 [%rd39+8], %r3;
         mad24.lo.u32 %r4, 0x01000003, 5, 100; st.global.u32 [%rd39+12], %r4;
         mad24.hi.s32 %r5, 0xFFFFFF, 0xFFFFFF, 1; st.global.u32 [%rd39+16], %r5;",
    );
    let hi = ((0xFF_FFFFu64 * 0xFF_FFFF) >> 16) as u32;
    assert_eq!(w[..5], [15, (-7i32) as u32, hi, 115, 1]);
}

#[test]
fn lop3_shf_and_dp4a_compute_as_ptx_defines() {
    let w = words(
        "lop3.b32 %r1, 0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA, 0x96; st.global.u32 [%rd39], %r1;
         lop3.b32 %r2, 0x12345678, 0xFFFF0000, 0, 0xC0; st.global.u32 [%rd39+4], %r2;
         shf.l.wrap.b32 %r3, 0x80000000, 0x00000001, 33; st.global.u32 [%rd39+8], %r3;
         shf.r.clamp.b32 %r4, 0x00000000, 0x12345678, 40; st.global.u32 [%rd39+12], %r4;
         shf.r.wrap.b32 %r5, 0x00000010, 0x00000001, 4; st.global.u32 [%rd39+16], %r5;
         dp4a.s32.s32 %r6, 0x01FF0302, 0x02020202, 10; st.global.u32 [%rd39+20], %r6;
         dp4a.u32.u32 %r7, 0x01FF0302, 0x02020202, 10; st.global.u32 [%rd39+24], %r7;
         dp2a.hi.s32.s32 %r8, 0x0003FFFF, 0x05040000, 0; st.global.u32 [%rd39+28], %r8;",
    );
    // 0x96 is a ^ b ^ c; 0xC0 is a & b.
    assert_eq!(w[0], 0xF0F0_F0F0 ^ 0xCCCC_CCCC ^ 0xAAAA_AAAA);
    assert_eq!(w[1], 0x1234_0000);
    // (1:0x80000000) << 1 keeps the high word: 0b11.
    assert_eq!(w[2], 3);
    // A clamped right shift by 32 or more leaves the high word.
    assert_eq!(w[3], 0x1234_5678);
    assert_eq!(w[4], 0x1000_0001);
    // Bytes (2, 3, -1, 1) · (2, 2, 2, 2) + 10 = 20 signed; unsigned 0xFF counts 255.
    assert_eq!(w[5], 20);
    assert_eq!(w[6], 10 + 2 * (2 + 3 + 255 + 1));
    // Halves (-1, 3) · bytes 2..4 of b (4, 5) = -4 + 15.
    assert_eq!(w[7], 11);
}

#[test]
fn sad_adds_the_absolute_difference_signed_or_unsigned() {
    let w = words(
        "sad.s32 %r1, -2, 7, 1; st.global.u32 [%rd39], %r1;
         sad.u32 %r2, 4, 7, 1; st.global.u32 [%rd39+4], %r2;
         sad.u32 %r3, 0xFFFFFFFF, 1, 0; st.global.u32 [%rd39+8], %r3;
         sad.s32 %r4, 0xFFFFFFFF, 1, 0; st.global.u32 [%rd39+12], %r4;",
    );
    // |-2 - 7| + 1; |4 - 7| + 1; as unsigned 0xFFFFFFFF is far from 1, as signed it is -1.
    assert_eq!(w[..4], [10, 4, 0xFFFF_FFFE, 2]);
}

#[test]
fn packed_half2_arithmetic_works_on_both_halves() {
    // 0x40003C00 holds 1.0 (low) and 2.0 (high).
    let w = words(
        "mov.b32 %r1, 0x40003C00;
         add.f16x2 %r2, %r1, %r1; st.global.u32 [%rd39], %r2;
         mul.f16x2 %r3, %r1, %r1; st.global.u32 [%rd39+4], %r3;
         fma.rn.f16x2 %r4, %r1, %r1, %r1; st.global.u32 [%rd39+8], %r4;
         neg.f16x2 %r5, %r1; st.global.u32 [%rd39+12], %r5;
         sub.rn.f16x2 %r6, %r1, %r1; st.global.u32 [%rd39+16], %r6;",
    );
    assert_eq!(
        w[..5],
        [0x4400_4000, 0x4400_3C00, 0x4600_4000, 0xC000_BC00, 0]
    );
}

#[test]
fn registers_declared_as_cuda_headers_write_them_parse() {
    let w =
        words("{ .reg.b32 tmp; mov.b32 tmp, 5; mov.b32 %r1, tmp; } st.global.u32 [%rd39], %r1;");
    assert_eq!(w[0], 5);
}

#[test]
fn bfloat16_converts_and_computes_through_f32() {
    // 1.5 is 0x3FC0 in bf16; 1/3 rounds to 0x3EAB; 2.0 is 0x4000.
    let w = words(
        "mov.f32 %f1, 0f3FC00000; cvt.rn.bf16.f32 %rs1, %f1; cvt.u32.u16 %r1, %rs1; st.global.u32 [%rd39], %r1;
         mov.f32 %f2, 0f3EAAAAAB; cvt.rn.bf16.f32 %rs2, %f2; cvt.u32.u16 %r2, %rs2; st.global.u32 [%rd39+4], %r2;
         cvt.f32.bf16 %f3, %rs1; st.global.f32 [%rd39+8], %f3;
         add.rn.bf16 %rs3, %rs1, %rs1; cvt.u32.u16 %r3, %rs3; st.global.u32 [%rd39+12], %r3;
         fma.rn.bf16 %rs4, %rs1, %rs1, %rs1; cvt.u32.u16 %r4, %rs4; st.global.u32 [%rd39+16], %r4;
         mov.f32 %f4, 0f40000000; cvt.rn.bf16x2.f32 %r5, %f4, %f1; st.global.u32 [%rd39+20], %r5;
         fma.rn.bf16x2 %r6, %r5, %r5, %r5; st.global.u32 [%rd39+24], %r6;",
    );
    assert_eq!(w[0], 0x3FC0);
    assert_eq!(w[1], 0x3EAB);
    assert_eq!(f32::from_bits(w[2]), 1.5);
    assert_eq!(w[3], 0x4040, "1.5 + 1.5 = 3");
    // 1.5 * 1.5 + 1.5 = 3.75 = 0x4070.
    assert_eq!(w[4], 0x4070);
    assert_eq!(w[5], 0x4000_3FC0, "2.0 high, 1.5 low");
    // 2*2+2 = 6 (0x40C0) high, 3.75 low.
    assert_eq!(w[6], 0x40C0_4070);
}

#[test]
fn trap_stops_the_launch_with_a_finding_and_untaken_traps_are_harmless() {
    // Thread 0 traps; the others skip it, as code behind a check that never fails does.
    let (_, r) = run_threads(
        "",
        "setp.eq.u32 %p1, %r0, 0; @!%p1 bra SKIP; trap; SKIP: st.global.u32 [%rd39], 1;",
        2,
    );
    let traps: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Trap)
        .collect();
    assert_eq!(traps.len(), 1, "{:?}", r.findings);
    assert!(!r.completed);
    let (b, r) = run_threads(
        "",
        "setp.eq.u32 %p1, %r0, 99; @!%p1 bra SKIP; trap; SKIP: st.global.u32 [%rd39], 1;",
        2,
    );
    assert!(r.findings.is_empty() && r.completed, "{:?}", r.findings);
    assert_eq!(u32_at(&b, 0), 1);
}

#[test]
fn a_thread_that_reads_its_own_copy_before_waiting_for_it_races_with_the_copy() {
    let (_, r) =
        swap_through_async_copies("ld.shared.u32 %r9, [%r3]; cp.async.wait_group 0; bar.sync 0;");
    let own = r
        .findings
        .iter()
        .find(|f| f.why.contains("this thread's own `cp.async`"))
        .unwrap_or_else(|| panic!("{:?}", r.findings));
    assert!(matches!(
        own.kind,
        FindingKind::Race {
            hazard: Hazard::ReadAfterWrite,
            space: Space::Shared,
        }
    ));
    assert_eq!(own.accesses[0].thread, own.accesses[1].thread);
}

#[test]
fn a_thread_that_reads_its_own_copy_after_the_wait_is_not_reported() {
    let (_, r) =
        swap_through_async_copies("cp.async.wait_group 0; ld.shared.u32 %r9, [%r3]; bar.sync 0;");
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

/// Programmatic dependent launch, as CUB's kernels use it: the grid's dependency on the work
/// before it is already met when the emulator starts it, and letting dependents start early
/// changes nothing, so the kernel runs on past both.
#[test]
fn programmatic_dependent_launch_waits_for_nothing_that_has_not_completed() {
    let w = words(
        "griddepcontrol.wait; mov.u32 %r1, 41; add.u32 %r1, %r1, 1;
         griddepcontrol.launch_dependents; st.global.u32 [%rd39], %r1;",
    );
    assert_eq!(w[0], 42);
}
