//! Traced launches (`Emulator::launch_traced`, emu/TRACE.md): recording changes nothing about
//! the run, the steps, accesses, barriers and atomics are the ones that happened, findings point
//! at the two steps they are about, and the event bound is an error, not a cut.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

fn module(path: &str) -> Module {
    let full = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    Module::parse(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cfg(grid: u32, block: u32, dyn_shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: dyn_shared,
    }
}

fn bytes(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    emu.read(p, &mut b).unwrap();
    b
}

const RACY: &str = "kernels/ptx/ch4_atomics/01_racy_increment.ptx";
const SCAN: &str = "emu/tests/corpus/scan_single_buffer.ptx";
const LOCK: &str = "kernels/ptx/ch5_mutex_dot/01_lock_unlock.ptx";

/// The single-buffer scan on 64 ones, traced or not; returns the report, `out` and the trace.
fn scan(schedule: Schedule, traced: bool) -> (RunReport, Vec<u8>, Option<Trace>) {
    let m = module(SCAN);
    let mut emu = Emulator::new();
    let input = emu.alloc(64 * 4, "in");
    emu.write(input, &[1, 0, 0, 0].repeat(64)).unwrap();
    let out = emu.alloc(64 * 4, "out");
    let args = [
        KernelArg::Ptr(input),
        KernelArg::Ptr(out),
        KernelArg::I32(64),
    ];
    let options = RunOptions {
        schedule,
        ..RunOptions::default()
    };
    let config = cfg(1, 64, 64 * 4);
    let (report, trace) = if traced {
        let (r, t) = emu
            .launch_traced(&m, "scan_single_buffer", &config, &args, &options, 100_000)
            .unwrap();
        (r, Some(t))
    } else {
        (
            emu.launch(&m, "scan_single_buffer", &config, &args, &options)
                .unwrap(),
            None,
        )
    };
    (report, bytes(&emu, out, 64 * 4), trace)
}

fn steps(trace: &Trace) -> impl Iterator<Item = (usize, &TraceEvent)> {
    trace
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, TraceEvent::Step { .. }))
}

#[test]
fn recording_changes_nothing_about_the_run() {
    for schedule in [
        Schedule::Hardware,
        Schedule::Random { seed: 3 },
        Schedule::Adversarial { seed: 1 },
    ] {
        let plain = scan(schedule, false);
        let traced = scan(schedule, true);
        assert_eq!(plain.0, traced.0, "{schedule:?}: same findings and counts");
        assert_eq!(plain.1, traced.1, "{schedule:?}: same output");
    }
}

#[test]
fn every_instruction_is_a_step_and_every_barrier_is_recorded() {
    let (report, out, trace) = scan(Schedule::Hardware, true);
    let trace = trace.unwrap();
    // Two warps of 32 lanes, one block.
    assert_eq!(
        trace.warps,
        vec![
            TraceWarp {
                block: 0,
                first_thread: 0,
                lanes: 32
            },
            TraceWarp {
                block: 0,
                first_thread: 32,
                lanes: 32
            }
        ]
    );
    // Each step counts its lanes once: the sum is the report's thread-instruction count.
    let counted: u64 = steps(&trace)
        .map(|(_, e)| match e {
            TraceEvent::Step { lanes, .. } => lanes.count_ones() as u64,
            _ => 0,
        })
        .sum();
    assert_eq!(counted, report.thread_instructions);
    // One barrier before the loop and one per step of it (offsets 1, 2, …, 32): seven.
    let barriers = trace
        .events
        .iter()
        .filter(|e| matches!(e, TraceEvent::Barrier { block: 0, id: 0 }))
        .count();
    assert_eq!(barriers, 7);
    let arrivals = steps(&trace)
        .filter(|(_, e)| {
            matches!(
                e,
                TraceEvent::Step {
                    barrier: Some(0),
                    ..
                }
            )
        })
        .count();
    assert_eq!(arrivals, 2 * 7, "each warp arrives at each barrier once");
    let exited: u32 = steps(&trace)
        .map(|(_, e)| match e {
            TraceEvent::Step { exit, .. } => exit.count_ones(),
            _ => 0,
        })
        .sum();
    assert_eq!(exited, 64);
    // The last write to each element of `out` is the value the kernel left there.
    let out_array = trace.arrays.iter().position(|a| a.name == "out").unwrap() as u32;
    let mut last = vec![None; 64];
    for (_, e) in steps(&trace) {
        if let TraceEvent::Step {
            access: Some(a), ..
        } = e
            && a.op == TraceOp::Write
        {
            for l in a.lanes.iter().filter(|l| l.array == out_array) {
                last[(l.offset / 4) as usize] = Some(l.value as u32);
            }
        }
    }
    let written: Vec<u32> = last.into_iter().map(Option::unwrap).collect();
    let expected: Vec<u32> = out
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(written, expected);
    assert_eq!(
        expected,
        (1..=64).collect::<Vec<u32>>(),
        "hardware gets it right"
    );
    // The shared buffer is an array of block 0, typed by its first access.
    let buf = trace
        .arrays
        .iter()
        .find(|a| a.space == Space::Shared)
        .unwrap();
    assert_eq!(
        (buf.name.as_str(), buf.block, buf.bytes),
        ("buf", Some(0), 256)
    );
    assert_eq!(buf.first_access_type, Some("u32"));
}

#[test]
fn a_race_names_the_two_steps_it_is_about() {
    let m = module(RACY);
    let mut emu = Emulator::new();
    let x = emu.alloc(4, "x");
    let (report, trace) = emu
        .launch_traced(
            &m,
            "racy_increment",
            &cfg(2, 4, 0),
            &[KernelArg::Ptr(x)],
            &RunOptions::default(),
            1000,
        )
        .unwrap();
    assert_eq!(bytes(&emu, x, 4), [1, 0, 0, 0]);
    assert_eq!(trace.finding_events.len(), report.findings.len());
    assert!(!report.findings.is_empty());
    for (index, (finding, events)) in report
        .findings
        .iter()
        .zip(&trace.finding_events)
        .enumerate()
    {
        assert_eq!(events.len(), finding.accesses.len(), "{finding}");
        for (access, at) in finding.accesses.iter().zip(events) {
            let at = at.unwrap_or_else(|| panic!("{finding}: an access without its step"));
            let TraceEvent::Step {
                warp,
                pc,
                access: Some(recorded),
                ..
            } = &trace.events[at.event]
            else {
                panic!("{finding}: event {} is not a memory step", at.event);
            };
            // The step's warp and lane are the access's thread, at the access's line.
            let w = &trace.warps[*warp as usize];
            assert_eq!(access.thread.block[0], w.block, "{finding}");
            assert_eq!(access.thread.thread[0], w.first_thread + at.lane as u32);
            assert_eq!(trace.program[*pc as usize].line, access.at.line);
            assert!(recorded.lanes.iter().any(|l| l.lane == at.lane));
            let wanted = if access.op == AccessOp::Read {
                TraceOp::Read
            } else {
                TraceOp::Write
            };
            assert_eq!(recorded.op, wanted, "{finding}");
        }
        // The step that found it says so.
        let last = events.last().unwrap().unwrap().event;
        let TraceEvent::Step { findings, .. } = &trace.events[last] else {
            unreachable!()
        };
        assert!(findings.contains(&(index as u32)), "{finding}");
    }
    // x[0] read as 0 by all eight threads before any stored 1.
    let reads: Vec<u64> = steps(&trace)
        .filter_map(|(_, e)| match e {
            TraceEvent::Step {
                access: Some(a), ..
            } if a.op == TraceOp::Read => Some(a.lanes.iter().map(|l| l.value)),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(reads, vec![0; 8]);
}

#[test]
fn an_uninitialized_read_names_the_step_that_read() {
    let m = module("emu/tests/corpus/accumulate_into_output.ptx");
    let mut emu = Emulator::new();
    let x = emu.alloc(32 * 4, "x");
    emu.write(x, &[0u8; 32 * 4]).unwrap();
    let out = emu.alloc_uninit(32 * 4, "out");
    let (report, trace) = emu
        .launch_traced(
            &m,
            "accumulate_into_output",
            &cfg(1, 32, 0),
            &[KernelArg::Ptr(x), KernelArg::Ptr(out), KernelArg::I32(32)],
            &RunOptions::default(),
            1000,
        )
        .unwrap();
    let [finding] = report.findings.as_slice() else {
        panic!("one finding, not {:?}", report.findings);
    };
    assert_eq!(
        finding.kind,
        FindingKind::UninitializedRead {
            space: Space::Global
        }
    );
    let [Some(at)] = trace.finding_events[0].as_slice() else {
        panic!(
            "{finding}: not linked to one step: {:?}",
            trace.finding_events
        );
    };
    let TraceEvent::Step {
        pc,
        access: Some(recorded),
        findings,
        ..
    } = &trace.events[at.event]
    else {
        panic!("{finding}: event {} is not a memory step", at.event);
    };
    assert_eq!(recorded.op, TraceOp::Read);
    assert_eq!(
        trace.program[*pc as usize].line,
        finding.accesses[0].at.line
    );
    assert_eq!(findings, &vec![0]);
    let lane = recorded.lanes.iter().find(|l| l.lane == at.lane).unwrap();
    assert_eq!(trace.arrays[lane.array as usize].name, "out");
}

#[test]
fn atomics_record_the_value_before_and_after() {
    let m = module(LOCK);
    let mut emu = Emulator::new();
    let mutex = emu.alloc(4, "mutex");
    let order = emu.alloc(16, "order");
    let length = emu.alloc(4, "length");
    for p in [mutex, order, length] {
        emu.write(p, &vec![0; if p == order { 16 } else { 4 }])
            .unwrap();
    }
    let (report, trace) = emu
        .launch_traced(
            &m,
            "lock_unlock",
            &cfg(4, 8, 0),
            &[
                KernelArg::Ptr(mutex),
                KernelArg::Ptr(order),
                KernelArg::Ptr(length),
            ],
            &RunOptions::default(),
            10_000,
        )
        .unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    let mut acquired = 0;
    let mut released = 0;
    for (_, e) in steps(&trace) {
        if let TraceEvent::Step {
            access: Some(a), ..
        } = e
            && a.op == TraceOp::Atomic
        {
            assert!(a.strong);
            for l in &a.lanes {
                match (a.atomic, l.value, l.new) {
                    (Some("cas"), 0, Some(1)) => acquired += 1,
                    (Some("cas"), 1, Some(1)) => {}
                    (Some("exch"), 1, Some(0)) => released += 1,
                    other => panic!("unexpected atomic {other:?}"),
                }
            }
        }
    }
    assert_eq!(
        (acquired, released),
        (4, 4),
        "each block takes and gives back the lock once"
    );
}

#[test]
fn a_trace_past_its_bound_is_refused() {
    let m = module(RACY);
    let mut emu = Emulator::new();
    let x = emu.alloc(4, "x");
    let error = emu
        .launch_traced(
            &m,
            "racy_increment",
            &cfg(2, 4, 0),
            &[KernelArg::Ptr(x)],
            &RunOptions::default(),
            5,
        )
        .unwrap_err();
    assert_eq!(
        error,
        EmuError::TraceTooLong {
            entry: "racy_increment".into(),
            limit: 5
        }
    );
    assert!(error.to_string().contains("more than 5 events"), "{error}");
}
