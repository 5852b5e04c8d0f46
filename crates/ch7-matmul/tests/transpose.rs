//! The transposes match the CPU bit for bit on generated sizes (1 up to a few tiles, sizes
//! no tile divides) under every schedule, with the checkers silent; and the emulator counts
//! the bank conflicts their files describe: 32-way reading the unpadded tile's columns, none
//! with the spare column.

mod common;

use std::cell::RefCell;

use ch7_matmul::transpose::{KERNELS, run, transpose_cpu, variant};
use ch7_matmul::{random_matrix, testing::side};
use common::{cases, device, fail, schedule};
use harness::{BackendChoice, Device, EmuSettings};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(KERNELS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn transposes_match_the_cpu_on_any_size_and_schedule() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let largest = if is_cuda { 2_000 } else { 100 };
    let strategy = (side(largest), side(largest), any::<u64>(), schedule());
    for fixed in KERNELS {
        let mut runner = TestRunner::new(cases(is_cuda, 64, 24, file!()));
        runner
            .run(&strategy, |(rows, cols, seed, schedule)| {
                let input = random_matrix((rows * cols) as usize, seed);
                let outcome = cell
                    .borrow_mut()
                    .with_schedule(schedule, |device| run(device, fixed, &input, rows, cols))
                    .map_err(fail)?;
                let want = transpose_cpu(&input, rows as usize, cols as usize);
                let same = outcome
                    .result
                    .iter()
                    .zip(&want)
                    .all(|(got, want)| got.to_bits() == want.to_bits());
                prop_assert!(same, "{} on {rows} × {cols}", fixed.name);
                prop_assert!(
                    outcome.report.is_clean(),
                    "{}: {:?}",
                    fixed.name,
                    outcome.report.findings
                );
                Ok(())
            })
            .unwrap_or_else(|error| panic!("{}: {error}", fixed.name));
    }
}

#[test]
fn the_emulator_counts_the_unpadded_tiles_column_reads_as_32_way() {
    let mut device = Device::open(BackendChoice::Emu).unwrap();
    device.set_emu_settings(EmuSettings {
        bank_conflicts: true,
        ..EmuSettings::default()
    });
    let input = random_matrix(64 * 96, 3);
    for (name, worst_read, worst_write) in [("transpose-shared", 32, 1), ("transpose-padded", 1, 1)]
    {
        let kernel = variant(name);
        let outcome = run(&mut device, kernel, &input, 64, 96).unwrap();
        assert_eq!(outcome.result, transpose_cpu(&input, 64, 96), "{name}");
        let lines = &outcome.report.bank_conflicts;
        let worst = |write: bool| {
            lines
                .iter()
                .filter(|line| line.write == write)
                .map(|line| line.worst_ways)
                .max()
        };
        assert_eq!(worst(false), Some(worst_read), "{name}: {lines:#?}");
        assert_eq!(worst(true), Some(worst_write), "{name}: {lines:#?}");
        // Every warp access of the column reads: 6 tiles × 8 warps × 4 rows each.
        let read = harness::kernel::line_of_marker(kernel.kernel.source, "= tile[threadIdx.x]")
            .expect("the column read");
        let reads = lines
            .iter()
            .find(|l| l.at.line == read && !l.write)
            .unwrap();
        assert_eq!(reads.requests, 6 * 8 * 4, "{name}");
        assert_eq!(
            reads.wavefronts,
            reads.requests * u64::from(worst_read),
            "{name}"
        );
    }
}
