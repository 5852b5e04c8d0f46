//! The checkers' reports as a learner reads them, pinned by snapshots that the book's emulator
//! page includes. Each report is shown with the result it came with.

#![allow(clippy::unwrap_used)]

use ptx_emu::*;

fn corpus_module(path: &str) -> Module {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    Module::parse(&std::fs::read_to_string(&full).unwrap()).unwrap()
}

fn linear(grid: u32, block: u32, dynamic_shared_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes,
    }
}

fn words(emu: &Emulator, ptr: DevicePtr, n: usize) -> Vec<i32> {
    let mut bytes = vec![0u8; n * 4];
    emu.read(ptr, &mut bytes).unwrap();
    bytes
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn upload(emu: &mut Emulator, label: &str, values: &[i32]) -> DevicePtr {
    let ptr = emu.alloc(values.len() * 4, label);
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    emu.write(ptr, &bytes).unwrap();
    ptr
}

/// The result line, then every finding, as the walk-throughs print them.
fn page(result: &str, report: &RunReport) -> String {
    let mut text = format!("{result}\n");
    if report.findings.is_empty() {
        text.push_str("no findings\n");
    }
    for finding in &report.findings {
        text.push_str(&finding.to_string());
        text.push('\n');
    }
    text
}

fn scan_single_buffer(schedule: Schedule) -> String {
    let module = corpus_module("emu/tests/corpus/scan_single_buffer.ptx");
    let mut emu = Emulator::new();
    let input: Vec<i32> = (0..64).map(|i| i % 5 + 1).collect();
    let inp = upload(&mut emu, "in", &input);
    let out = upload(&mut emu, "out", &[0; 64]);
    let options = RunOptions {
        schedule,
        ..RunOptions::default()
    };
    let args = [KernelArg::Ptr(inp), KernelArg::Ptr(out), KernelArg::I32(64)];
    let report = emu
        .launch(
            &module,
            "scan_single_buffer",
            &linear(1, 64, 256),
            &args,
            &options,
        )
        .unwrap();
    let want: Vec<i32> = input
        .iter()
        .scan(0, |sum, x| {
            *sum += x;
            Some(*sum)
        })
        .collect();
    let got = words(&emu, out, 64);
    let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
    page(
        &format!(
            "{schedule:?}: {wrong} of 64 prefix sums wrong; out[63] = {} (want {})",
            got[63], want[63]
        ),
        &report,
    )
}

#[test]
fn racecheck_on_global_memory() {
    let module = corpus_module("kernels/ptx/ch4_atomics/01_racy_increment.ptx");
    let mut emu = Emulator::new();
    let x = upload(&mut emu, "x", &[0]);
    let report = emu
        .launch(
            &module,
            "racy_increment",
            &linear(10, 16, 0),
            &[KernelArg::Ptr(x)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(
        &format!("x[0] = {} (160 threads)", words(&emu, x, 1)[0]),
        &report
    ));
}

#[test]
fn racecheck_sees_the_race_a_gpu_hides() {
    insta::assert_snapshot!("scan_hardware", scan_single_buffer(Schedule::Hardware));
    insta::assert_snapshot!(
        "scan_adversarial",
        scan_single_buffer(Schedule::Adversarial { seed: 1 })
    );
}

#[test]
fn synccheck_on_a_barrier_inside_if() {
    let module = corpus_module("emu/tests/corpus/sync_in_if.ptx");
    let mut emu = Emulator::new();
    let inp = emu.alloc(256 * 4, "in");
    emu.write(inp, &vec![0u8; 256 * 4]).unwrap();
    let out = emu.alloc(4, "out");
    let args = [
        KernelArg::Ptr(inp),
        KernelArg::Ptr(out),
        KernelArg::I32(256),
    ];
    let report = emu
        .launch(
            &module,
            "sync_in_if",
            &linear(1, 256, 1024),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page("one block of 256 threads", &report));
}

#[test]
fn memcheck_on_a_read_past_the_end() {
    let module = corpus_module("emu/tests/corpus/one_past_end.ptx");
    let mut emu = Emulator::new();
    let inp = upload(&mut emu, "in", &(0..100).collect::<Vec<_>>());
    let out = upload(&mut emu, "out", &[0; 101]);
    let args = [
        KernelArg::Ptr(inp),
        KernelArg::Ptr(out),
        KernelArg::I32(100),
    ];
    let report = emu
        .launch(
            &module,
            "one_past_end",
            &linear(2, 64, 0),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page("in has 100 ints; threads 0..=100 read it", &report));
}

#[test]
fn watchdog_on_a_kernel_that_never_finishes() {
    let module = corpus_module("emu/tests/corpus/spin_forever.ptx");
    let mut emu = Emulator::new();
    let flag = upload(&mut emu, "flag", &[0]);
    let report = emu
        .launch(
            &module,
            "spin_forever",
            &linear(4, 64, 0),
            &[KernelArg::Ptr(flag)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(&format!("completed: {}", report.completed), &report));
}

#[test]
fn assert_failure_with_the_gpu_message() {
    let module = corpus_module("emu/tests/corpus/assert_positive.ptx");
    let mut emu = Emulator::new();
    let input = upload(&mut emu, "in", &[3, -1, 4, -5, 9, 2, 6, 5]);
    let out = upload(&mut emu, "out", &[0; 8]);
    let report = emu
        .launch(
            &module,
            "assert_positive",
            &linear(1, 8, 0),
            &[
                KernelArg::Ptr(input),
                KernelArg::Ptr(out),
                KernelArg::I32(8),
            ],
            &RunOptions::default(),
        )
        .unwrap();
    let result = format!(
        "completed: {}\nprintf:\n{}",
        report.completed,
        report.printf_output()
    );
    insta::assert_snapshot!(page(&result, &report));
}

#[test]
fn heap_use_after_free() {
    let module = corpus_module("emu/tests/corpus/heap_use_after_free.ptx");
    let mut emu = Emulator::new();
    let out = upload(&mut emu, "out", &[0; 4]);
    let report = emu
        .launch(
            &module,
            "heap_use_after_free",
            &linear(1, 4, 0),
            &[KernelArg::Ptr(out), KernelArg::I32(4)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(&format!("out = {:?}", words(&emu, out, 4)), &report));
}

#[test]
fn heap_double_free() {
    let module = corpus_module("emu/tests/corpus/heap_double_free.ptx");
    let mut emu = Emulator::new();
    let out = upload(&mut emu, "out", &[0; 8]);
    let report = emu
        .launch(
            &module,
            "heap_double_free",
            &linear(1, 8, 0),
            &[KernelArg::Ptr(out), KernelArg::I32(8)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(&format!("out = {:?}", words(&emu, out, 8)), &report));
}

#[test]
fn stack_overflow_from_unbounded_recursion() {
    let module = corpus_module("emu/tests/corpus/recursion_unbounded.ptx");
    let mut emu = Emulator::new();
    let out = upload(&mut emu, "out", &[0; 4]);
    let report = emu
        .launch(
            &module,
            "recursion_unbounded",
            &linear(1, 4, 0),
            &[KernelArg::Ptr(out), KernelArg::I32(4)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(&format!("completed: {}", report.completed), &report));
}

#[test]
fn synccheck_on_a_lane_outside_its_syncwarp_mask() {
    let module = corpus_module("emu/tests/corpus/syncwarp_bad_mask.ptx");
    let mut emu = Emulator::new();
    let out = upload(&mut emu, "out", &[0; 32]);
    let report = emu
        .launch(
            &module,
            "syncwarp_bad_mask",
            &linear(1, 32, 0),
            &[KernelArg::Ptr(out)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(&format!("completed: {}", report.completed), &report));
}

#[test]
fn synccheck_on_a_shuffle_half_the_warp_skips() {
    let module = corpus_module("emu/tests/corpus/shfl_lanes_missing.ptx");
    let mut emu = Emulator::new();
    let input = upload(&mut emu, "in", &(0..32).collect::<Vec<_>>());
    let out = upload(&mut emu, "out", &[0; 32]);
    let report = emu
        .launch(
            &module,
            "shfl_lanes_missing",
            &linear(1, 32, 0),
            &[KernelArg::Ptr(input), KernelArg::Ptr(out)],
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(&format!("completed: {}", report.completed), &report));
}

/// The CAS-loop kernel on 2 × 32 threads adding 1.0 each, and what racecheck says about it.
fn cas_loop_page(name: &str) -> String {
    let module = corpus_module(&format!("emu/tests/corpus/{name}.ptx"));
    let mut emu = Emulator::new();
    let x = emu.alloc(64 * 8, "x");
    let ones: Vec<u8> = (0..64).flat_map(|_| 1.0f64.to_le_bytes()).collect();
    emu.write(x, &ones).unwrap();
    let sum = emu.alloc(8, "sum");
    let mut args = vec![KernelArg::Ptr(x), KernelArg::Ptr(sum)];
    if name == "cas_seed_also_stored" {
        args.push(KernelArg::Ptr(emu.alloc(64 * 8, "seen")));
    }
    args.push(KernelArg::I32(64));
    let report = emu
        .launch(
            &module,
            name,
            &linear(2, 32, 0),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    let mut bytes = [0u8; 8];
    emu.read(sum, &mut bytes).unwrap();
    page(
        &format!("sum = {} (64 threads add 1.0)", f64::from_le_bytes(bytes)),
        &report,
    )
}

#[test]
fn racecheck_on_a_cas_loop() {
    insta::assert_snapshot!("cas_loop_clean", cas_loop_page("cas_add_double"));
    insta::assert_snapshot!(
        "cas_seed_also_stored",
        cas_loop_page("cas_seed_also_stored")
    );
}

#[test]
fn initcheck_on_shared_memory() {
    let module = corpus_module("emu/tests/corpus/reduce_assumes_256.ptx");
    let mut emu = Emulator::new();
    let x = emu.alloc(200 * 4, "x");
    let ones: Vec<u8> = (0..200).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    emu.write(x, &ones).unwrap();
    let partial = emu.alloc(4, "partial");
    let args = [
        KernelArg::Ptr(x),
        KernelArg::Ptr(partial),
        KernelArg::I32(200),
    ];
    let report = emu
        .launch(
            &module,
            "reduce_assumes_256",
            &linear(1, 200, 0),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    let mut bytes = [0u8; 4];
    emu.read(partial, &mut bytes).unwrap();
    insta::assert_snapshot!(page(
        &format!(
            "one block of 200 threads adds 200 ones: partial[0] = {}",
            f32::from_le_bytes(bytes)
        ),
        &report
    ));
}

#[test]
fn initcheck_on_a_buffer_allocated_uninitialized() {
    let module = corpus_module("emu/tests/corpus/accumulate_into_output.ptx");
    let mut emu = Emulator::new();
    let x = upload(&mut emu, "x", &[1.0f32.to_bits() as i32; 64]);
    let out = emu.alloc_uninit(64 * 4, "out");
    let args = [KernelArg::Ptr(x), KernelArg::Ptr(out), KernelArg::I32(64)];
    let report = emu
        .launch(
            &module,
            "accumulate_into_output",
            &linear(2, 32, 0),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    insta::assert_snapshot!(page(
        "out allocated uninitialized; 64 threads add into it",
        &report
    ));
}

/// A buffer made before anyone knew its parameter (Python's `cuda.to_device`) is named in
/// reports by the label it is given at the launch.
#[test]
fn a_relabelled_buffer_is_named_by_its_new_label() {
    let module = corpus_module("kernels/ptx/ch4_atomics/01_racy_increment.ptx");
    let mut emu = Emulator::new();
    let x = upload(&mut emu, "device_array_1", &[0]);
    emu.relabel(x, "counter").unwrap();
    let report = emu
        .launch(
            &module,
            "racy_increment",
            &linear(2, 32, 0),
            &[KernelArg::Ptr(x)],
            &RunOptions::default(),
        )
        .unwrap();
    let text = report.findings.first().unwrap().to_string();
    assert!(text.contains("counter[0]"), "{text}");
    assert!(!text.contains("device_array_1"), "{text}");
    assert!(emu.relabel(DevicePtr(x.0 + 4), "inside").is_err());
}
