//! Dynamic parallelism: kernels that launch kernels through CUDA 13's device runtime
//! (`__cudaCDP2GetParameterBufferV2`, `__cudaCDP2LaunchDeviceV2`), the order a child grid runs
//! in, what racecheck takes as ordered between a parent and its child, the nesting limit, and
//! PTX of two translation units linked into one module (`-rdc=true`).

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use ptx_emu::*;

const HEADER: &str = "
.version 9.0
.target sm_90
.address_size 64
.extern .func (.param .b64 func_retval0) __cudaCDP2GetParameterBufferV2
(
	.param .b64 p0,
	.param .align 4 .b8 p1[12],
	.param .align 4 .b8 p2[12],
	.param .b32 p3
)
;
.extern .func (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 p0,
	.param .b64 p1
)
;
";

/// `child(x, out)`: `*out = x[0] + x[1]`.
const CHILD: &str = "
.visible .entry child(
	.param .u64 child_x,
	.param .u64 child_out
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [child_x];
	ld.param.u64 %rd2, [child_out];
	cvta.to.global.u64 %rd1, %rd1;
	cvta.to.global.u64 %rd2, %rd2;
	ld.global.u32 %r1, [%rd1];
	ld.global.u32 %r2, [%rd1+4];
	add.s32 %r3, %r1, %r2;
	st.global.u32 [%rd2], %r3;
	ret;
}
";

/// `parent(x, out, stream, err)`: writes `x[0] = 20`, launches `child(x, out)` into `stream`,
/// keeps the launch's error in `*err`, then writes `x[1] = 22`.
const PARENT: &str = "
.visible .entry parent(
	.param .u64 parent_x,
	.param .u64 parent_out,
	.param .u64 parent_stream,
	.param .u64 parent_err
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [parent_x];
	ld.param.u64 %rd2, [parent_out];
	ld.param.u64 %rd3, [parent_stream];
	ld.param.u64 %rd9, [parent_err];
	cvta.to.global.u64 %rd4, %rd1;
	st.global.u32 [%rd4], 20;
	mov.u64 %rd5, child;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd5;
	.param .align 4 .b8 param1[12];
	st.param.b32 [param1+0], 1;
	st.param.b32 [param1+4], 1;
	st.param.b32 [param1+8], 1;
	.param .align 4 .b8 param2[12];
	st.param.b32 [param2+0], 1;
	st.param.b32 [param2+4], 1;
	st.param.b32 [param2+8], 1;
	.param .b32 param3;
	st.param.b32 [param3+0], 0;
	.param .b64 retval0;
	call.uni (retval0), __cudaCDP2GetParameterBufferV2, (param0, param1, param2, param3);
	ld.param.b64 %rd6, [retval0+0];
	}
	st.u64 [%rd6], %rd1;
	st.u64 [%rd6+8], %rd2;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd6;
	.param .b64 param1;
	st.param.b64 [param1+0], %rd3;
	.param .b32 retval0;
	call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);
	ld.param.b32 %r1, [retval0+0];
	}
	cvta.to.global.u64 %rd7, %rd9;
	st.global.u32 [%rd7], %r1;
	st.global.u32 [%rd4+4], 22;
	ret;
}
";

const NULL_STREAM: u64 = 0;
const TAIL_LAUNCH: u64 = 3;
const FIRE_AND_FORGET: u64 = 4;

fn one_thread() -> LaunchConfig {
    LaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared_bytes: 0,
    }
}

fn u32s(emu: &Emulator, p: DevicePtr, n: usize) -> Vec<u32> {
    let mut bytes = vec![0u8; 4 * n];
    emu.read(p, &mut bytes).unwrap();
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Runs `parent` on a stream with the child launched into `device_stream`: the child's sum,
/// the launch's error code, and the report.
fn run_parent(module: &Module, device_stream: u64) -> (u32, u32, RunReport) {
    let mut emu = Emulator::new();
    let x = emu.alloc(8, "x");
    let out = emu.alloc(4, "out");
    let err = emu.alloc(4, "err");
    let stream = emu.create_stream();
    let args = [
        KernelArg::Ptr(x),
        KernelArg::Ptr(out),
        KernelArg::U64(device_stream),
        KernelArg::Ptr(err),
    ];
    let report = emu
        .launch_on(
            stream,
            module,
            "parent",
            &one_thread(),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    emu.synchronize().unwrap();
    (u32s(&emu, out, 1)[0], u32s(&emu, err, 1)[0], report)
}

fn stream_races(report: &RunReport) -> Vec<&Finding> {
    report
        .findings
        .iter()
        .filter(|f| matches!(f.kind, FindingKind::StreamRace { .. }))
        .collect()
}

#[test]
fn a_child_grid_runs_after_its_parent_and_the_launch_succeeds() {
    let module = Module::parse(&format!("{HEADER}{CHILD}{PARENT}")).unwrap();
    let (sum, err, report) = run_parent(&module, TAIL_LAUNCH);
    assert_eq!(err, 0);
    assert_eq!(
        sum, 42,
        "the child ran once the parent had written both halves"
    );
    assert!(report.completed);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn what_the_parent_writes_after_launching_races_with_the_child() {
    let module = Module::parse(&format!("{HEADER}{CHILD}{PARENT}")).unwrap();
    for stream in [NULL_STREAM, FIRE_AND_FORGET] {
        let (_, err, report) = run_parent(&module, stream);
        assert_eq!(err, 0);
        let races = stream_races(&report);
        assert_eq!(races.len(), 1, "stream {stream}: {:?}", report.findings);
        assert!(
            races[0].why.contains("after the launch"),
            "{}",
            races[0].why
        );
        // The read of x[1] (written after the launch) races; x[0] (written before) does not.
        let location = races[0].location.as_ref().unwrap();
        assert_eq!((location.label.as_str(), location.index), ("x", 1));
    }
}

/// `deep(err, depth)`: `err[depth]` = the error of launching `deep(err, depth + 1)`, for
/// depths below 40.
const DEEP: &str = "
.visible .entry deep(
	.param .u64 deep_err,
	.param .u32 deep_depth
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [deep_err];
	ld.param.u32 %r1, [deep_depth];
	setp.ge.u32 %p1, %r1, 40;
	@%p1 bra DONE;
	mov.u64 %rd5, deep;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd5;
	.param .align 4 .b8 param1[12];
	st.param.b32 [param1+0], 1;
	st.param.b32 [param1+4], 1;
	st.param.b32 [param1+8], 1;
	.param .align 4 .b8 param2[12];
	st.param.b32 [param2+0], 1;
	st.param.b32 [param2+4], 1;
	st.param.b32 [param2+8], 1;
	.param .b32 param3;
	st.param.b32 [param3+0], 0;
	.param .b64 retval0;
	call.uni (retval0), __cudaCDP2GetParameterBufferV2, (param0, param1, param2, param3);
	ld.param.b64 %rd6, [retval0+0];
	}
	add.s32 %r2, %r1, 1;
	st.u64 [%rd6], %rd1;
	st.u32 [%rd6+8], %r2;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd6;
	.param .b64 param1;
	st.param.b64 [param1+0], 4;
	.param .b32 retval0;
	call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);
	ld.param.b32 %r3, [retval0+0];
	}
	cvta.to.global.u64 %rd7, %rd1;
	mul.wide.u32 %rd8, %r1, 4;
	add.s64 %rd9, %rd7, %rd8;
	st.global.u32 [%rd9], %r3;
DONE:
	ret;
}
";

#[test]
fn launches_nest_24_deep_and_the_next_one_fails_with_cudas_error() {
    let module = Module::parse(&format!("{HEADER}{DEEP}")).unwrap();
    let mut emu = Emulator::new();
    let err = emu.alloc(40 * 4, "err");
    emu.write(err, &[0xff; 160]).unwrap();
    let report = emu
        .launch(
            &module,
            "deep",
            &one_thread(),
            &[KernelArg::Ptr(err), KernelArg::U32(0)],
            &RunOptions::default(),
        )
        .unwrap();
    assert!(report.completed);
    let codes = u32s(&emu, err, 40);
    // Grids at depths 0..=22 launch; the grid at depth 23 is the 24th level and cannot.
    assert!(codes[..23].iter().all(|&c| c == 0), "{codes:?}");
    const LAUNCH_MAX_DEPTH_EXCEEDED: u32 = 65;
    assert_eq!(codes[23], LAUNCH_MAX_DEPTH_EXCEEDED, "{codes:?}");
    assert!(codes[24..].iter().all(|&c| c == u32::MAX), "{codes:?}");
}

#[test]
fn two_units_link_into_one_module_as_nvlink_links_them() {
    // Each unit has its own `$str` and the same weak helper; the parent's unit declares the
    // child it launches, which the other unit defines.
    let own = "
.global .align 1 .b8 $str[2] = {65, 0};
.weak .func (.param .b32 func_retval0) helper()
{
	.reg .b32 %r<2>;
	mov.u32 %r1, 7;
	st.param.b32 [func_retval0+0], %r1;
	ret;
}
";
    let declared_child =
        ".extern .entry child(\n\t.param .u64 child_x,\n\t.param .u64 child_out\n)\n;\n";
    let unit_a = format!("{HEADER}{declared_child}{own}{PARENT}");
    let unit_b = format!("{HEADER}{own}{CHILD}");
    let module = Module::parse_linked(&[&unit_a, &unit_b]).unwrap();
    assert_eq!(
        module.entries().collect::<Vec<_>>(),
        ["parent", "child"],
        "each kernel once"
    );
    let (sum, err, report) = run_parent(&module, TAIL_LAUNCH);
    assert_eq!((sum, err), (42, 0));
    assert!(report.findings.is_empty(), "{:?}", report.findings);

    let twice = Module::parse_linked(&[&unit_b, &unit_b]).unwrap_err();
    assert!(
        twice
            .to_string()
            .contains("defined in two translation units"),
        "{twice}"
    );
}

/// `copier(x, out, later)`: writes `x[0] = 20`, queues `cudaMemcpyAsync(out, x, 8)` from the
/// device on the grid's stream, then writes `x[1] = later` unless `later` is 0.
const COPIER: &str = "
.extern .func (.param .b32 func_retval0) __cudaCDP2MemcpyAsync
(
	.param .b64 p0,
	.param .b64 p1,
	.param .b64 p2,
	.param .b32 p3,
	.param .b64 p4
)
;
.visible .entry copier(
	.param .u64 copier_x,
	.param .u64 copier_out,
	.param .u32 copier_later
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [copier_x];
	ld.param.u64 %rd2, [copier_out];
	ld.param.u32 %r2, [copier_later];
	cvta.to.global.u64 %rd4, %rd1;
	st.global.u32 [%rd4], 20;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd2;
	.param .b64 param1;
	st.param.b64 [param1+0], %rd1;
	.param .b64 param2;
	st.param.b64 [param2+0], 8;
	.param .b32 param3;
	st.param.b32 [param3+0], 3;
	.param .b64 param4;
	st.param.b64 [param4+0], 0;
	.param .b32 retval0;
	call.uni (retval0), __cudaCDP2MemcpyAsync, (param0, param1, param2, param3, param4);
	ld.param.b32 %r1, [retval0+0];
	}
	setp.eq.u32 %p1, %r2, 0;
	@%p1 bra DONE;
	st.global.u32 [%rd4+4], %r2;
DONE:
	ret;
}
";

/// Runs `copier` with `later`: what `out` holds after, and the report.
fn run_copier(later: u32) -> (Vec<u32>, RunReport) {
    let module = Module::parse(&format!("{HEADER}{COPIER}")).unwrap();
    let mut emu = Emulator::new();
    let x = emu.alloc(8, "x");
    let out = emu.alloc(8, "out");
    let stream = emu.create_stream();
    let args = [
        KernelArg::Ptr(x),
        KernelArg::Ptr(out),
        KernelArg::U32(later),
    ];
    let report = emu
        .launch_on(
            stream,
            &module,
            "copier",
            &one_thread(),
            &args,
            &RunOptions::default(),
        )
        .unwrap();
    emu.synchronize().unwrap();
    (u32s(&emu, out, 2), report)
}

#[test]
fn a_copy_queued_from_the_device_races_with_what_its_grid_writes_after_queuing_it() {
    let (out, report) = run_copier(22);
    assert_eq!(out[0], 20, "the copy ran after the grid");
    let races = stream_races(&report);
    assert_eq!(races.len(), 1, "{:?}", report.findings);
    assert!(
        races[0].why.contains("a copy queued from the device"),
        "{}",
        races[0].why
    );
    assert!(
        races[0].why.contains("after queuing it"),
        "{}",
        races[0].why
    );
    // x[1] (bytes 4..8), written after the copy was queued, races; x[0] does not.
    let location = races[0].location.as_ref().unwrap();
    assert_eq!((location.label.as_str(), location.index), ("x", 4));
}

#[test]
fn a_copy_queued_from_the_device_after_its_grid_wrote_the_source_is_ordered() {
    let (out, report) = run_copier(0);
    assert_eq!(out[0], 20);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}
