//! Several devices: peer access, streams and events, and racecheck across operations.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

/// `add_into(dst, src, n)`: `dst[i] += src[i]` for the grid's threads below `n`;
/// `count_into(word)`: one device-scope and `count_into_sys(word)` one system-scope atomic add.
const PTX: &str = r#".version 9.0
.target sm_90
.address_size 64

.visible .entry add_into(
	.param .u64 add_into_dst,
	.param .u64 add_into_src,
	.param .u32 add_into_n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [add_into_dst];
	ld.param.u64 %rd2, [add_into_src];
	ld.param.u32 %r1, [add_into_n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r6, %ctaid.x;
	mov.u32 %r7, %ntid.x;
	mad.lo.s32 %r2, %r6, %r7, %r2;
	setp.ge.u32 %p1, %r2, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.u32 %r3, [%rd5];
	ld.global.u32 %r4, [%rd4];
	add.s32 %r5, %r4, %r3;
	st.global.u32 [%rd4], %r5;
DONE:
	ret;
}

.visible .entry count_into(
	.param .u64 count_into_word
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [count_into_word];
	atom.global.add.u32 %r1, [%rd1], 1;
	ret;
}

.visible .entry count_into_sys(
	.param .u64 count_into_sys_word
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [count_into_sys_word];
	atom.sys.global.add.u32 %r1, [%rd1], 1;
	ret;
}
"#;

const N: u32 = 64;

fn block(threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [1, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
    }
}

fn upload(emu: &mut Emulator, values: &[u32], label: &str) -> DevicePtr {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let ptr = emu.alloc(bytes.len(), label);
    emu.write(ptr, &bytes).unwrap();
    ptr
}

fn download(emu: &Emulator, ptr: DevicePtr, len: usize) -> Vec<u32> {
    let mut bytes = vec![0; len * 4];
    emu.read(ptr, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn add_into(dst: DevicePtr, src: DevicePtr) -> [KernelArg; 3] {
    [KernelArg::Ptr(dst), KernelArg::Ptr(src), KernelArg::U32(N)]
}

fn kinds(report: &RunReport) -> Vec<FindingKind> {
    report.findings.iter().map(|f| f.kind).collect()
}

/// Two devices; `ones` on device 1 and `acc` (all 10) on device 0.
fn two_devices() -> (Module, Emulator, DevicePtr, DevicePtr) {
    let module = Module::parse(PTX).unwrap();
    let mut emu = Emulator::new();
    emu.set_device_count(2).unwrap();
    let acc = upload(&mut emu, &[10; N as usize], "acc");
    emu.set_device(1).unwrap();
    let ones = upload(&mut emu, &[1; N as usize], "ones");
    emu.set_device(0).unwrap();
    (module, emu, acc, ones)
}

#[test]
fn a_kernel_reads_a_peer_only_after_peer_access_is_enabled() {
    let (module, mut emu, acc, ones) = two_devices();
    assert_eq!(emu.device_of(acc), Some(0));
    assert_eq!(emu.device_of(ones), Some(1));
    let options = RunOptions::default();
    let report = emu
        .launch(
            &module,
            "add_into",
            &block(N),
            &add_into(acc, ones),
            &options,
        )
        .unwrap();
    assert_eq!(kinds(&report), [FindingKind::NoPeerAccess], "{report:?}");
    let finding = &report.findings[0];
    assert_eq!(finding.count, N as u64, "one per thread: {finding}");
    assert!(
        finding
            .why
            .contains("cudaDeviceEnablePeerAccess(1) on device 0"),
        "{finding}"
    );
    assert_eq!(
        download(&emu, acc, N as usize),
        [10; N as usize],
        "a faulting read gives 0"
    );

    emu.enable_peer_access(1).unwrap();
    assert!(emu.peer_access_enabled(0, 1));
    assert!(
        !emu.peer_access_enabled(1, 0),
        "peer access is one direction"
    );
    let report = emu
        .launch(
            &module,
            "add_into",
            &block(N),
            &add_into(acc, ones),
            &options,
        )
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(download(&emu, acc, N as usize), [11; N as usize]);
}

#[test]
fn a_peer_copy_read_before_the_event_wait_is_a_race_between_streams() {
    for wait in [false, true] {
        let (module, mut emu, acc, ones) = two_devices();
        let inbox = emu.alloc(N as usize * 4, "inbox");
        let copier = {
            emu.set_device(1).unwrap();
            emu.create_stream()
        };
        emu.set_device(0).unwrap();
        let adder = emu.create_stream();
        assert_eq!(
            (emu.stream_device(copier), emu.stream_device(adder)),
            (1, 0)
        );
        let copy = emu
            .copy_on(copier, inbox, ones, N as usize * 4, true)
            .unwrap();
        assert!(copy.is_clean(), "{copy:?}");
        if wait {
            let copied = emu.record_event(copier).unwrap();
            emu.wait_event(adder, copied).unwrap();
        }
        let report = emu
            .launch_on(
                adder,
                &module,
                "add_into",
                &block(N),
                &add_into(acc, inbox),
                &RunOptions::default(),
            )
            .unwrap();
        emu.synchronize().expect("nothing held");
        assert_eq!(download(&emu, acc, N as usize), [11; N as usize]);
        if wait {
            assert!(report.is_clean(), "{report:?}");
            continue;
        }
        assert_eq!(
            kinds(&report),
            [FindingKind::StreamRace {
                hazard: Hazard::ReadAfterWrite
            }],
            "{report:?}"
        );
        let finding = &report.findings[0];
        assert_eq!(finding.count, N as u64, "{finding}");
        assert_eq!(finding.location.as_ref().unwrap().label, "inbox");
        assert!(
            finding.why.contains("add_into on device 0's stream 0")
                && finding
                    .why
                    .contains("a peer copy from device 1 to device 0 on device 1's stream 0 wrote"),
            "{finding}"
        );
    }
}

#[test]
fn stream_order_and_host_synchronization_order_operations() {
    let (module, mut emu, acc, ones) = two_devices();
    emu.enable_peer_access(1).unwrap();
    let first = emu.create_stream();
    let second = emu.create_stream();
    let options = RunOptions::default();
    let run = |emu: &mut Emulator, stream| {
        emu.launch_on(
            stream,
            &module,
            "add_into",
            &block(N),
            &add_into(acc, ones),
            &options,
        )
        .unwrap()
    };
    assert!(run(&mut emu, first).is_clean());
    assert!(run(&mut emu, first).is_clean(), "same stream: in order");
    emu.synchronize_stream(first).unwrap();
    assert!(
        run(&mut emu, second).is_clean(),
        "the host waited for first"
    );
    let unordered = run(&mut emu, first);
    assert_eq!(
        kinds(&unordered),
        [
            FindingKind::StreamRace {
                hazard: Hazard::ReadAfterWrite
            },
            FindingKind::StreamRace {
                hazard: Hazard::WriteAfterWrite
            }
        ],
        "{unordered:?}"
    );
    emu.synchronize().expect("nothing held");
    let legacy = emu
        .launch(
            &module,
            "add_into",
            &block(N),
            &add_into(acc, ones),
            &options,
        )
        .unwrap();
    assert!(legacy.is_clean(), "{legacy:?}");
    assert_eq!(download(&emu, acc, N as usize), [15; N as usize]);
}

#[test]
fn a_copy_over_bytes_an_unordered_kernel_read_is_a_write_after_read() {
    let (module, mut emu, acc, ones) = two_devices();
    emu.enable_peer_access(1).unwrap();
    let reader = emu.create_stream();
    let writer = emu.create_stream();
    let report = emu
        .launch_on(
            reader,
            &module,
            "add_into",
            &block(N),
            &add_into(acc, ones),
            &RunOptions::default(),
        )
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
    let spare = emu.alloc(16, "spare");
    let copy = emu.copy_on(writer, ones, spare, 16, true).unwrap();
    assert_eq!(
        kinds(&copy),
        [FindingKind::StreamRace {
            hazard: Hazard::WriteAfterRead
        }],
        "{copy:?}"
    );
    let text = copy.findings[0].to_string();
    assert!(
        text.contains("ones") && text.contains("add_into on device 0's stream 0 read"),
        "{text}"
    );
    let quiet = emu.copy_on(writer, ones, spare, 16, false).unwrap();
    assert!(quiet.is_clean(), "racecheck off: {quiet:?}");
}

#[test]
fn system_scope_atomics_on_two_devices_do_not_race_and_device_scope_ones_do() {
    for (entry, races) in [("count_into_sys", false), ("count_into", true)] {
        let module = Module::parse(PTX).unwrap();
        let mut emu = Emulator::new();
        emu.set_device_count(2).unwrap();
        let word = emu.alloc(4, "word");
        emu.set_device(1).unwrap();
        emu.enable_peer_access(0).unwrap();
        let on_one = emu.create_stream();
        emu.set_device(0).unwrap();
        let on_zero = emu.create_stream();
        let mut findings = Vec::new();
        for stream in [on_zero, on_one] {
            let report = emu
                .launch_on(
                    stream,
                    &module,
                    entry,
                    &block(32),
                    &[KernelArg::Ptr(word)],
                    &RunOptions::default(),
                )
                .unwrap();
            findings.extend(report.findings);
        }
        emu.synchronize().expect("nothing held");
        assert_eq!(download(&emu, word, 1), [64], "{entry}");
        assert_eq!(!findings.is_empty(), races, "{entry}: {findings:?}");
    }
}

#[test]
fn devices_streams_and_events_that_do_not_exist_are_one_sentence_errors() {
    let mut emu = Emulator::new();
    assert_eq!(
        emu.set_device(1).unwrap_err().to_string(),
        "device 1 does not exist: the emulator holds 1 (device 0 to 0)"
    );
    assert!(emu.set_device_count(0).is_err());
    emu.set_device_count(2).unwrap();
    assert_eq!(
        emu.enable_peer_access(0).unwrap_err().to_string(),
        "device 0 cannot enable peer access to itself"
    );
    let stream = emu.create_stream();
    let event = emu.record_event(stream).unwrap();
    emu.wait_event(stream, event).unwrap();
    let outside = emu
        .copy_on(stream, DevicePtr(16), DevicePtr(16), 4, true)
        .unwrap_err()
        .to_string();
    assert!(outside.contains("outside every allocation"), "{outside}");
}

#[test]
fn module_variables_live_on_device_zero_and_a_launch_elsewhere_says_so() {
    let ptx = ".version 9.0\n.target sm_90\n.address_size 64\n.global .align 4 .u32 counter;\n.visible .entry bump()\n{\n\t.reg .b32 %r<2>;\n\tatom.global.add.u32 %r1, [counter], 1;\n\tret;\n}\n";
    let module = Module::parse(ptx).unwrap();
    let mut emu = Emulator::new();
    emu.set_device_count(2).unwrap();
    emu.set_device(1).unwrap();
    let error = emu
        .launch(&module, "bump", &block(1), &[], &RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("one copy of a module's `__device__` and `__constant__` variables"),
        "{error}"
    );
    emu.set_device(0).unwrap();
    let report = emu
        .launch(&module, "bump", &block(1), &[], &RunOptions::default())
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
}

/// Device 0's stream waits for a flag on device 0 before adding `inbox` into `acc`; device 1's
/// stream copies `ones` into `inbox` and sets the flag, either after the copy (`signal_last`)
/// or before it. Returns the emulator, `acc`, and what the launch and the copy reported when
/// queued.
fn flag_handoff(signal_last: bool, wait_for: u32) -> (Emulator, DevicePtr, [RunReport; 2]) {
    let (module, mut emu, acc, ones) = two_devices();
    let inbox = emu.alloc(N as usize * 4, "inbox");
    let flag = upload(&mut emu, &[0], "flag");
    let adder = emu.create_stream();
    emu.set_device(1).unwrap();
    emu.enable_peer_access(0).unwrap();
    let copier = emu.create_stream();
    emu.wait_value_on(adder, flag, wait_for).unwrap();
    let queued = emu
        .launch_on(
            adder,
            &module,
            "add_into",
            &block(N),
            &add_into(acc, inbox),
            &RunOptions::default(),
        )
        .unwrap();
    assert_eq!(
        download(&emu, acc, N as usize),
        [10; N as usize],
        "held behind the wait"
    );
    if !signal_last {
        emu.write_value_on(copier, flag, 1).unwrap();
    }
    let copied = emu
        .copy_on(copier, inbox, ones, N as usize * 4, true)
        .unwrap();
    if signal_last {
        emu.write_value_on(copier, flag, 1).unwrap();
    }
    (emu, acc, [queued, copied])
}

#[test]
fn a_held_launch_runs_once_its_wait_is_met_and_is_ordered_after_the_writer() {
    let (mut emu, acc, queued) = flag_handoff(true, 1);
    assert!(queued.iter().all(RunReport::is_clean), "{queued:?}");
    assert_eq!(
        download(&emu, acc, N as usize),
        [11; N as usize],
        "the write met the wait, so the held launch ran"
    );
    let report = emu.synchronize().unwrap();
    assert!(report.is_clean() && report.completed, "{report:?}");
}

#[test]
fn a_flag_set_before_the_copy_orders_nothing_after_it() {
    let (emu, acc, [_, copied]) = flag_handoff(false, 1);
    assert_eq!(
        kinds(&copied),
        [FindingKind::StreamRace {
            hazard: Hazard::WriteAfterRead
        }],
        "the held launch ran at the write and read the inbox before the copy: {copied:?}"
    );
    let report = &copied;
    assert_eq!(report.findings[0].location.as_ref().unwrap().label, "inbox");
    assert_eq!(
        download(&emu, acc, N as usize),
        [10; N as usize],
        "it added the inbox before the copy filled it"
    );
}

#[test]
fn a_wait_no_one_meets_is_stuck_at_synchronize_and_names_where_it_stopped() {
    let (mut emu, acc, _) = flag_handoff(true, 2);
    let report = emu.synchronize().unwrap();
    assert_eq!(kinds(&report), [FindingKind::StreamsStuck], "{report:?}");
    assert!(!report.completed);
    let finding = &report.findings[0];
    assert!(
        finding.why.contains(
            "device 0's stream 0, operation 1: waits for flag[0] ≥ 2 (on device 0, holds 1); 1 more behind it"
        ),
        "{finding}"
    );
    assert_eq!(download(&emu, acc, N as usize), [10; N as usize]);
    let again = emu.synchronize().unwrap();
    assert!(
        again.is_clean(),
        "held work is dropped once reported: {again:?}"
    );
}

#[test]
fn streams_waiting_for_each_other_are_stuck_and_each_stop_is_named() {
    let (_, mut emu, _, _) = two_devices();
    emu.enable_peer_access(1).unwrap();
    let flags0 = upload(&mut emu, &[0, 0], "flags0");
    let first = emu.create_stream();
    let third = emu.create_stream();
    emu.set_device(1).unwrap();
    emu.enable_peer_access(0).unwrap();
    let flags1 = upload(&mut emu, &[0, 0], "flags1");
    let second = emu.create_stream();
    let word = |base: DevicePtr, i: u64| DevicePtr(base.0 + 4 * i);

    // Each waits for the other's signal before giving its own, as two ranks do when they issue
    // two collectives in different orders.
    emu.wait_value_on(first, word(flags0, 1), 1).unwrap();
    emu.write_value_on(first, word(flags1, 0), 1).unwrap();
    let after_first = emu.record_event(first).unwrap();
    emu.wait_event(third, after_first).unwrap();
    emu.wait_value_on(second, word(flags1, 0), 1).unwrap();
    emu.write_value_on(second, word(flags0, 1), 1).unwrap();

    let report = emu.synchronize().unwrap();
    assert_eq!(kinds(&report), [FindingKind::StreamsStuck], "{report:?}");
    let why = &report.findings[0].why;
    for stop in [
        "device 0's stream 0, operation 1: waits for flags0[1] ≥ 1 (on device 0, holds 0); 2 more behind it",
        "device 0's stream 1, operation 1: waits for the event device 0's stream 0 records at its operation 3; 0 more behind it",
        "device 1's stream 0, operation 1: waits for flags1[0] ≥ 1 (on device 1, holds 0); 1 more behind it",
    ] {
        assert!(why.contains(stop), "{stop} missing from: {why}");
    }

    // The same signals in a consistent order meet every wait.
    emu.write_value_on(second, word(flags0, 1), 1).unwrap();
    emu.wait_value_on(first, word(flags0, 1), 1).unwrap();
    emu.write_value_on(first, word(flags1, 0), 1).unwrap();
    emu.wait_value_on(second, word(flags1, 0), 1).unwrap();
    assert!(emu.synchronize().unwrap().is_clean());
}

#[test]
fn stream_memory_operations_refuse_words_they_cannot_reach_in_one_sentence() {
    let (_, mut emu, acc, ones) = two_devices();
    let stream = emu.create_stream();
    let error = emu.write_value_on(stream, ones, 1).unwrap_err().to_string();
    assert!(
        error.contains("device 0 has no peer access to device 1") && !error.contains('\n'),
        "{error}"
    );
    let error = emu
        .wait_value_on(stream, DevicePtr(acc.0 + 2), 1)
        .unwrap_err()
        .to_string();
    assert!(error.contains("not an aligned 4-byte word"), "{error}");
}

#[test]
fn labelled_operations_are_named_by_their_labels_even_when_held_behind_a_wait() {
    for held in [false, true] {
        let (module, mut emu, acc, ones) = two_devices();
        emu.enable_peer_access(1).unwrap();
        let (copier, adder, writer) = (
            emu.create_stream(),
            emu.create_stream(),
            emu.create_stream(),
        );
        let flag = emu.alloc(4, "flag");
        if held {
            // The adder's launch is held until the flag is written, and runs then, after the
            // copy, with nothing ordering the two: its label must survive the wait.
            emu.wait_value_on(adder, flag, 1).unwrap();
        }
        let copy = emu
            .copy_on_labelled(
                copier,
                acc,
                ones,
                N as usize * 4,
                true,
                Some("the copy to the device at host.py:15"),
            )
            .unwrap();
        assert!(copy.is_clean(), "{copy:?}");
        let launched = emu
            .launch_on_labelled(
                adder,
                &module,
                "add_into",
                &block(N),
                &add_into(acc, ones),
                &RunOptions::default(),
                Some("add_into at host.py:16"),
            )
            .unwrap();
        emu.write_value_on(writer, flag, 1).unwrap();
        let at_sync = emu.synchronize().unwrap();
        let report = if held { at_sync } else { launched };
        // The kernel reads and then writes `acc`, which the copy wrote.
        assert_eq!(
            kinds(&report),
            [
                FindingKind::StreamRace {
                    hazard: Hazard::ReadAfterWrite
                },
                FindingKind::StreamRace {
                    hazard: Hazard::WriteAfterWrite
                }
            ],
            "held: {held}: {report:?}"
        );
        for finding in &report.findings {
            assert!(
                finding.why.starts_with(
                    "add_into at host.py:16 on device 0's stream 1 touches bytes that the copy to the device at host.py:15 on device 0's stream 0 wrote"
                ),
                "{finding}"
            );
        }
    }
}

/// Racecheck across operations on a grid large enough to run its blocks on several cores: the
/// findings are those of one core, and the footprint that later operations are checked against
/// holds the bytes every core's blocks touched (the last block's included).
#[test]
fn racecheck_across_operations_is_the_same_on_one_core_and_several() {
    const BLOCKS: u32 = 64;
    const THREADS: u32 = 512;
    const LEN: u32 = BLOCKS * THREADS;
    let config = LaunchConfig {
        grid: [BLOCKS, 1, 1],
        block: [THREADS, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let mut seen = Vec::new();
    for threads in [1, 4] {
        let module = Module::parse(PTX).unwrap();
        let mut emu = Emulator::new();
        let acc = upload(&mut emu, &vec![10; LEN as usize], "acc");
        let ones = upload(&mut emu, &vec![1; LEN as usize], "ones");
        let first = emu.create_stream();
        let second = emu.create_stream();
        let options = RunOptions {
            threads,
            ..RunOptions::default()
        };
        let args = [
            KernelArg::Ptr(acc),
            KernelArg::Ptr(ones),
            KernelArg::U32(LEN),
        ];
        let run = |emu: &mut Emulator, stream| {
            emu.launch_on(stream, &module, "add_into", &config, &args, &options)
                .unwrap()
        };
        assert!(run(&mut emu, first).is_clean());
        // The last 16 bytes of `acc` were written by the grid's last block.
        let tail = DevicePtr(acc.0 + (LEN as u64 - 4) * 4);
        let copy = emu.copy_on(second, tail, ones, 16, true).unwrap();
        assert_eq!(
            kinds(&copy),
            [FindingKind::StreamRace {
                hazard: Hazard::WriteAfterWrite
            }],
            "{threads} cores: {copy:?}"
        );
        let unordered = run(&mut emu, second);
        assert_eq!(
            kinds(&unordered),
            [
                FindingKind::StreamRace {
                    hazard: Hazard::ReadAfterWrite
                },
                FindingKind::StreamRace {
                    hazard: Hazard::WriteAfterWrite
                }
            ],
            "{threads} cores: {unordered:?}"
        );
        assert_eq!(unordered.findings[0].count, LEN as u64, "{threads} cores");
        seen.push(
            unordered
                .findings
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>(),
        );
        emu.synchronize().expect("nothing held");
        let values = download(&emu, acc, LEN as usize);
        let (added_twice, copied_over) = values.split_at(LEN as usize - 4);
        assert!(added_twice.iter().all(|&v| v == 12), "{threads} cores");
        assert_eq!(copied_over, [2; 4], "{threads} cores");
    }
    assert_eq!(seen[0], seen[1], "one core and four");
}
