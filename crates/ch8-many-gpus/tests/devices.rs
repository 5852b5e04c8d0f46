//! The three mechanisms the chapter stands on, each tested alone between every pair of devices,
//! so that a machine where one of them breaks fails a test named after it: a kernel reading
//! another device's memory through peer access, an event ordering one device's work after
//! another's, and a flag one device's stream writes and another's waits for. With
//! `RACETRACK_BACKEND=cuda` on a machine of two GPUs or more these run on the GPUs; elsewhere on
//! four emulated devices.

mod common;

use ch8_many_gpus::variant;
use common::gpus;
use harness::{Arg, Buffer, GpuStream, Gpus, LaunchShape, Schedule};

const DEVICES_ON_THE_EMULATOR: usize = 4;

/// Queues on `stream` the ring's all-gather step over all of `source` into `destination`, as
/// one chunk of a ring of one: a copy by a kernel, which reads `source` wherever it lives.
fn copy_on(
    gpus: &mut Gpus,
    stream: &GpuStream,
    destination: &Buffer<f32>,
    source: &Buffer<f32>,
    shape: LaunchShape,
) {
    gpus.launch_on(
        stream,
        &variant("ring-all-reduce").kernel,
        shape,
        &[
            destination.into(),
            source.into(),
            Arg::U64(source.len() as u64),
            Arg::U32(0),
            Arg::U32(1),
        ],
    )
    .expect("launch");
}

/// Every ordered pair of distinct devices.
fn pairs(devices: usize) -> Vec<(usize, usize)> {
    (0..devices)
        .flat_map(|from| (0..devices).map(move |to| (from, to)))
        .filter(|(from, to)| from != to)
        .collect()
}

#[test]
fn a_kernel_reads_every_other_devices_memory_through_peer_access() {
    let Some(mut gpus) = gpus(DEVICES_ON_THE_EMULATOR, Schedule::Hardware) else {
        return;
    };
    let kernel = variant("sum-over-peers").kernel;
    for (from, to) in pairs(gpus.count()) {
        let values: Vec<f32> = (0..300).map(|i| (i % 7) as f32).collect();
        let remote = gpus.upload(to, &values, "remote").expect("upload");
        gpus.enable_peer_access(from, to).expect("peer access");
        let address = gpus.address(&remote).expect("address");
        let table = gpus.upload(from, &[address], "table").expect("table");
        let total = gpus.zeros::<f32>(from, 1, "total").expect("total");
        let stream = gpus.stream(from).expect("stream");
        gpus.launch_on(
            &stream,
            &kernel,
            LaunchShape::linear(1, 128),
            &[(&table).into(), Arg::U32(1), Arg::U32(300), (&total).into()],
        )
        .unwrap_or_else(|e| panic!("device {from} reading device {to}: {e}"));
        let report = gpus
            .synchronize()
            .unwrap_or_else(|e| panic!("device {from} reading device {to}: {e}"));
        assert!(report.is_clean(), "{:#?}", report.findings);
        let got = gpus.download(&total).expect("download")[0];
        assert_eq!(
            got,
            values.iter().sum::<f32>(),
            "device {from} reading {to}"
        );
    }
}

/// Device `to` copies a buffer device `from` is still writing, after an event wait: the copy
/// must see every value the kernel wrote (a long kernel, so a missing order would show).
#[test]
fn an_event_orders_one_devices_work_after_anothers() {
    let Some(mut gpus) = gpus(DEVICES_ON_THE_EMULATOR, Schedule::Hardware) else {
        return;
    };
    let len: usize = if gpus.kind().is_cuda() { 1 << 24 } else { 257 };
    for (from, to) in pairs(gpus.count()) {
        let ones = vec![1.0f32; len];
        let source = gpus.upload(from, &ones, "source").expect("upload");
        let mut written = gpus.zeros::<f32>(from, len, "written").expect("zeros");
        let copy = gpus.zeros::<f32>(to, len, "copy").expect("zeros");
        let (writer, reader) = (
            gpus.stream(from).expect("stream"),
            gpus.stream(to).expect("stream"),
        );
        gpus.enable_peer_access(to, from).expect("peer access");
        // `written` = `source` on the writer's device, as one chunk of a ring of one.
        gpus.copy(&writer, &mut written, 0, &source, 0, len)
            .expect("copy");
        let done = gpus.record(&writer).expect("record");
        gpus.wait(&reader, &done).expect("wait");
        copy_on(
            &mut gpus,
            &reader,
            &copy,
            &written,
            LaunchShape::linear(64, 256),
        );
        let report = gpus
            .synchronize()
            .unwrap_or_else(|e| panic!("{from} → {to}: {e}"));
        assert!(report.is_clean(), "{:#?}", report.findings);
        let got = gpus.download(&copy).expect("download");
        let missing = got.iter().filter(|&&x| x != 1.0).count();
        assert_eq!(
            missing, 0,
            "device {to} read {missing} values before device {from} wrote them"
        );
    }
}

/// Device `from`'s stream writes a flag in device `to`'s memory; device `to`'s stream waits for
/// it before a kernel that reads what `from` wrote; the flags hold what was written.
#[test]
fn a_flag_written_by_one_device_releases_anothers_stream() {
    let Some(mut gpus) = gpus(DEVICES_ON_THE_EMULATOR, Schedule::Hardware) else {
        return;
    };
    let len = 4_099;
    for (from, to) in pairs(gpus.count()) {
        let flags = gpus.flags(to, 2, "flags").expect("flags");
        let source = gpus
            .upload(from, &vec![3.0f32; len], "source")
            .expect("upload");
        let mut written = gpus.zeros::<f32>(from, len, "written").expect("zeros");
        let copy = gpus.zeros::<f32>(to, len, "copy").expect("zeros");
        let (writer, reader) = (
            gpus.stream(from).expect("stream"),
            gpus.stream(to).expect("stream"),
        );
        gpus.enable_peer_access(from, to).expect("peer access");
        gpus.enable_peer_access(to, from).expect("peer access");
        // The reader's wait is queued before the writer's signal, so it must hold the kernel
        // queued behind it. Nothing else calls on the reader's device until the signal is
        // queued: while a wait is unmet, a synchronization of that device blocks.
        gpus.wait_for_value(&reader, &flags, 1, 7)
            .unwrap_or_else(|e| panic!("{from} → {to}: {e}"));
        gpus.copy(&writer, &mut written, 0, &source, 0, len)
            .expect("copy");
        gpus.signal(&writer, &flags, 1, 7)
            .unwrap_or_else(|e| panic!("{from} → {to}: {e}"));
        copy_on(
            &mut gpus,
            &reader,
            &copy,
            &written,
            LaunchShape::linear(4, 256),
        );
        let report = gpus
            .synchronize()
            .unwrap_or_else(|e| panic!("{from} → {to}: {e}"));
        assert!(report.is_clean(), "{:#?}", report.findings);
        assert_eq!(gpus.download(&flags).expect("flags"), [0, 7]);
        let got = gpus.download(&copy).expect("download");
        assert!(
            got.iter().all(|&x| x == 3.0),
            "{from} → {to}: {:?}",
            &got[..8]
        );
    }
}

/// A driver error says what failed, where, and in which variant, in one line; the emulator's
/// refusals of a bad call do too.
#[test]
fn a_failing_call_names_its_operation_device_and_variant() {
    let error = harness::HarnessError::DeviceCall {
        operation: "the launch of `ring_step` (8 blocks × 256 threads, kernels/ch8_many_gpus/08_ring_step_by_flags.cu)".into(),
        device: 1,
        error: harness::DriverError(harness::CudaResult::CUDA_ERROR_ILLEGAL_ADDRESS),
    }
    .in_variant("ring-by-flags");
    let line = error.to_string();
    assert!(
        line.starts_with("ring-by-flags: the launch of `ring_step` (")
            && line.contains("on device 1 failed: CUDA_ERROR_ILLEGAL_ADDRESS")
            && !line.contains('\n'),
        "{line}"
    );
    let Some(mut gpus) = gpus(2, Schedule::Hardware) else {
        return;
    };
    let buffer = gpus.zeros::<f32>(0, 4, "small").expect("zeros");
    let mut other = gpus.zeros::<f32>(1, 4, "other").expect("zeros");
    let stream = gpus.stream(1).expect("stream");
    let refused = gpus
        .copy(&stream, &mut other, 2, &buffer, 0, 4)
        .expect_err("a copy past a buffer's end");
    assert!(
        refused.to_string().contains("outside a buffer"),
        "{refused}"
    );
}
