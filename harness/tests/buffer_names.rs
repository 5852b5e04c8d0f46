//! A buffer in a finding is named as the kernel's code names it: by the parameter that received
//! it, not by the host's label, unless the parameter cannot say which buffer it was.

use harness::testing::require_nvrtc;
use harness::{Arg, BackendChoice, Device, Gpus, KernelSource, LaunchShape};

const SHIFT: &str = r#"
extern "C" __global__ void shift_left(const int *in, int *out, int n)
{
    int i = threadIdx.x;
    if (i < n) {
        out[i] = in[i + 1];
    }
}
"#;

const N: usize = 4;

fn shift_left() -> KernelSource {
    KernelSource {
        path: "buffer_names/shift_left.cu",
        entry: "shift_left",
        source: SHIFT,
        committed_ptx: "",
        own: None,
    }
}

/// The single out-of-bounds read's location, as the report names it.
fn out_of_bounds_read(same_buffer: bool) -> String {
    require_nvrtc();
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator");
    let board_a = device.upload(&[1i32; N], "board_a").expect("upload");
    let board_b = device.zeros::<i32>(N, "board_b").expect("zeros");
    let out = if same_buffer { &board_a } else { &board_b };
    let args = [Arg::from(&board_a), Arg::from(out), (N as i32).into()];
    let report = device
        .launch(&shift_left(), LaunchShape::linear(1, N as u32), &args)
        .expect("launch");
    let locations: Vec<String> = report
        .findings
        .iter()
        .filter(|finding| matches!(finding.kind, ptx_emu::FindingKind::OutOfBounds { .. }))
        .filter_map(|finding| finding.location.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(locations.len(), 1, "{:#?}", report.findings);
    locations[0].clone()
}

#[test]
fn a_finding_names_the_buffer_by_the_parameter_that_received_it() {
    assert_eq!(
        out_of_bounds_read(false),
        "in[4] (just past the end of in, which has 16 bytes)"
    );
}

/// `in` and `out` are one buffer here, so neither name says which the report means.
#[test]
fn a_buffer_passed_as_two_parameters_keeps_the_host_s_label() {
    assert_eq!(
        out_of_bounds_read(true),
        "board_a[4] (just past the end of board_a, which has 16 bytes)"
    );
}

/// An empty buffer holds no address, and is still the parameter that received it.
#[test]
fn an_empty_buffer_is_named_by_its_parameter() {
    require_nvrtc();
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator");
    let board_a = device.upload::<i32>(&[], "board_a").expect("upload");
    let board_b = device.zeros::<i32>(N, "board_b").expect("zeros");
    let args = [Arg::from(&board_a), Arg::from(&board_b), 1i32.into()];
    let report = device
        .launch(&shift_left(), LaunchShape::linear(1, 1), &args)
        .expect("launch");
    let locations: Vec<String> = report
        .findings
        .iter()
        .filter_map(|finding| finding.location.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(
        locations,
        ["in[1] (4 bytes past the end of in, which has 0 bytes)"],
        "{:#?}",
        report.findings
    );
}

const RING: &str = r#"
extern "C" __global__ void fill(float *mine)
{
    mine[threadIdx.x] = 1.0f;
}

extern "C" __global__ void gather(float *mine, const float *previous)
{
    mine[threadIdx.x] = previous[threadIdx.x];
}
"#;

fn ring_kernel(entry: &'static str) -> KernelSource {
    KernelSource {
        path: "buffer_names/ring.cu",
        entry,
        source: RING,
        committed_ptx: "",
        own: None,
    }
}

/// A race with another device's launch quotes this launch's access, so it names the buffer as
/// this launch's parameter does: device 0's `previous` is the host's `data1`, which device 1's
/// `mine` wrote with nothing ordering the two.
#[test]
fn a_race_between_devices_names_the_buffer_as_the_quoted_launch_does() {
    require_nvrtc();
    let mut gpus = Gpus::open(BackendChoice::Emu, 2, 2).expect("two emulated devices");
    gpus.enable_peer_access(0, 1).expect("peer access");
    let data: Vec<_> = (0..2)
        .map(|rank| {
            gpus.upload(rank, &[0.0f32; N], &format!("data{rank}"))
                .expect("upload")
        })
        .collect();
    let streams: Vec<_> = (0..2)
        .map(|rank| gpus.stream(rank).expect("a stream"))
        .collect();
    let shape = LaunchShape::linear(1, N as u32);
    gpus.launch_on(
        &streams[1],
        &ring_kernel("fill"),
        shape,
        &[Arg::from(&data[1])],
    )
    .expect("fill on device 1");
    let args = [Arg::from(&data[0]), Arg::from(&data[1])];
    gpus.launch_on(&streams[0], &ring_kernel("gather"), shape, &args)
        .expect("gather on device 0");
    let report = gpus.synchronize().expect("synchronize");
    let races: Vec<String> = report
        .findings
        .iter()
        .filter(|finding| matches!(finding.kind, ptx_emu::FindingKind::StreamRace { .. }))
        .filter_map(|finding| finding.location.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(races, ["previous[0]"], "{:#?}", report.findings);
}

const SAME_CELL: &str = r#"
extern "C" __global__ void same_cell(int *cells, int width)
{
    cells[1 * width + 2] = threadIdx.x;
}
"#;

/// Where the first race lands in a 4-wide grid of 3 rows, as reported.
fn race_on_a_grid(named: bool) -> String {
    require_nvrtc();
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator");
    let cells = device.zeros::<i32>(12, "cells").expect("zeros");
    if named {
        device.name_cells(&cells, 4);
    }
    let kernel = KernelSource {
        path: "buffer_names/same_cell.cu",
        entry: "same_cell",
        source: SAME_CELL,
        committed_ptx: "",
        own: None,
    };
    let report = device
        .launch(
            &kernel,
            LaunchShape::linear(1, 2),
            &[Arg::from(&cells), 4i32.into()],
        )
        .expect("launch");
    let location = report
        .findings
        .first()
        .and_then(|finding| finding.location.as_ref());
    location
        .map(ToString::to_string)
        .expect("a race on the grid")
}

/// A grid the kernel indexes `y * width + x` names the cell that the flat index is.
#[test]
fn a_finding_on_a_grid_names_its_cell() {
    assert_eq!(race_on_a_grid(true), "cells[6] (cell x 2, y 1)");
    assert_eq!(race_on_a_grid(false), "cells[6]");
}
