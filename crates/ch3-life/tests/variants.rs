//! Every FIXED variant matches the CPU cell for cell on generated boards, launch shapes and
//! schedules; every BROKEN one fails the way its `Expect` says, on generated cases.

mod common;

use std::cell::RefCell;

use ch3_life::{
    Board, HALO, SINGLE_BLOCK_MAX_CELLS, Step, TILE, VARIANTS, WORD_CELLS, run, variant,
};
use common::{block, board, cases, density, device, schedule, side};
use harness::testing::assert_bug_line_named;
use harness::{Expect, HarnessError, Schedule};
use proptest::prelude::*;
use proptest::test_runner::{TestError, TestRunner};

#[test]
fn kernel_files_present_their_variant() {
    let problems = harness::variant::registry_problems(VARIANTS);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(VARIANTS.len(), 9);
}

fn fail(error: HarnessError) -> TestCaseError {
    TestCaseError::fail(error.to_string())
}

/// The same rule written another way: signed offsets wrapped with `rem_euclid`.
fn step_by_offsets(board: &Board) -> Board {
    let (width, height) = (i64::from(board.width()), i64::from(board.height()));
    let mut cells = Vec::with_capacity(board.cells().len());
    for y in 0..height {
        for x in 0..width {
            let alive = (-1..=1i64)
                .flat_map(|dy| (-1..=1i64).map(move |dx| (dx, dy)))
                .filter(|&offset| offset != (0, 0))
                .filter(|&(dx, dy)| {
                    let nx = (x + dx).rem_euclid(width) as u32;
                    let ny = (y + dy).rem_euclid(height) as u32;
                    board.is_alive(nx, ny)
                })
                .count();
            let cell = board.is_alive(x as u32, y as u32);
            cells.push(u8::from(alive == 3 || (cell && alive == 2)));
        }
    }
    Board::from_cells(board.width(), board.height(), cells).expect("cells are 0 or 1")
}

/// The board moved `dx` right and `dy` down, wrapping around.
fn shifted(board: &Board, dx: u32, dy: u32) -> Board {
    let (width, height) = (board.width(), board.height());
    let mut cells = vec![0; board.cells().len()];
    for y in 0..height {
        for x in 0..width {
            let to = ((y + dy) % height) * width + (x + dx) % width;
            cells[to as usize] = u8::from(board.is_alive(x, y));
        }
    }
    Board::from_cells(width, height, cells).expect("a moved board has the same size")
}

proptest! {
    /// The CPU reference agrees with a second formulation of the rule, and a torus has no
    /// edges: moving the board and then stepping it is stepping it and then moving it.
    #[test]
    fn the_cpu_reference_is_life_on_a_torus(
        width in side(80),
        height in side(80),
        density in density(),
        seed in any::<u64>(),
        dx in 0u32..200,
        dy in 0u32..200,
    ) {
        let start = board(width, height, density, seed);
        let next = start.step();
        prop_assert_eq!(&next, &step_by_offsets(&start));
        let moved = shifted(&start, dx % width, dy % height);
        prop_assert_eq!(moved.step(), shifted(&next, dx % width, dy % height));
    }
}

/// One fixed variant against the CPU on generated boards, generations and, on the emulator,
/// schedules; `block` is generated for the kernels that take any block.
fn fixed_matches_the_cpu(name: &str, largest: u32, most_generations: u32, emulator_cases: u32) {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let fixed = variant(name);
    assert_eq!(fixed.expect, Expect::Correct);
    let largest = if is_cuda { largest * 8 } else { largest };
    let strategy = (
        side(largest),
        side(largest),
        density(),
        any::<u64>(),
        0..=most_generations,
        block(),
        schedule(),
    );
    let mut runner = TestRunner::new(cases(is_cuda, 128, emulator_cases, file!()));
    runner
        .run(
            &strategy,
            |(width, height, density, seed, generations, block, schedule)| {
                let start = board(width, height, density, seed);
                let block = fixed.kind.takes_any_block().then_some(block);
                let outcome = cell
                    .borrow_mut()
                    .with_schedule(schedule, |device| {
                        run(device, fixed, &start, generations, block)
                    })
                    .map_err(fail)?;
                let diff = outcome.board.diff(&start.after(generations));
                prop_assert!(
                    diff.is_match(),
                    "{name}, {width} × {height}, {generations} generations, {}: {diff}",
                    outcome.shape
                );
                prop_assert!(
                    outcome.report.is_clean(),
                    "{name}: {:#?}",
                    outcome.report.findings
                );
                Ok(())
            },
        )
        .unwrap_or_else(|error| panic!("{name}: {error}"));
}

#[test]
fn step_double_buffer_matches_the_cpu() {
    fixed_matches_the_cpu("step-double-buffer", 160, 6, 128);
}

/// Any width: a last thread of a row with 1 to 4 cells, and boards narrower than the six
/// columns a thread loads, where the torus wraps more than once.
#[test]
fn step_four_cells_matches_the_cpu() {
    fixed_matches_the_cpu("step-four-cells", 160, 6, 64);
}

#[test]
fn iterate_shared_halo_matches_the_cpu() {
    // Up to 13 generations: three full launches of HALO and a partial one.
    fixed_matches_the_cpu("iterate-shared-halo", 160, 3 * HALO + 1, 128);
}

/// The bit-packed kernels on boards whose width is a multiple of 32 (one word across, where a
/// row's left and right words are the same word, up to several), any height (strips that end
/// early), any 2D block and every emulator schedule.
#[test]
fn bit_packed_steps_match_the_cpu_on_any_board_of_whole_words() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let most_words = if is_cuda { 64u32 } else { 5 };
    let strategy = (
        1u32..=most_words,
        side(if is_cuda { 1000 } else { 70 }),
        density(),
        any::<u64>(),
        0u32..=5,
        block(),
        schedule(),
    );
    for name in ["step-bit-packed", "step-bit-packed-strips"] {
        let fixed = variant(name);
        assert!(fixed.kind.is_bit_packed());
        let mut runner = TestRunner::new(cases(is_cuda, 128, 48, file!()));
        runner
            .run(
                &strategy,
                |(words, height, density, seed, generations, block, schedule)| {
                    let start = board(words * WORD_CELLS, height, density, seed);
                    let outcome = cell
                        .borrow_mut()
                        .with_schedule(schedule, |device| {
                            run(device, fixed, &start, generations, Some(block))
                        })
                        .map_err(fail)?;
                    let diff = outcome.board.diff(&start.after(generations));
                    prop_assert!(
                        diff.is_match(),
                        "{name}, {} × {height}, {generations} generations, {}: {diff}",
                        start.width(),
                        outcome.shape
                    );
                    prop_assert!(
                        outcome.report.is_clean(),
                        "{name}: {:#?}",
                        outcome.report.findings
                    );
                    Ok(())
                },
            )
            .unwrap_or_else(|error| panic!("{name}: {error}"));
    }
}

#[test]
fn bit_packed_steps_refuse_a_width_no_word_divides() {
    let mut device = device();
    for name in ["step-bit-packed", "step-bit-packed-strips"] {
        let error = run(&mut device, variant(name), &board(100, 8, 0.5, 1), 1, None)
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "the bit-packed kernels pack 32 cells into each 32-bit word, so a board's width must be a multiple of 32; 100 is not"
        );
    }
}

#[test]
fn iterate_single_block_matches_the_cpu_on_any_board_one_block_holds() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let single = variant("iterate-single-block");
    let max = SINGLE_BLOCK_MAX_CELLS as u32;
    let strategy = (
        (1u32..=max).prop_flat_map(move |width| (Just(width), 1..=max / width)),
        density(),
        any::<u64>(),
        0u32..=40,
        schedule(),
    );
    let mut runner = TestRunner::new(cases(is_cuda, 128, 128, file!()));
    runner
        .run(
            &strategy,
            |((width, height), density, seed, generations, schedule)| {
                let start = board(width, height, density, seed);
                let outcome = cell
                    .borrow_mut()
                    .with_schedule(schedule, |device| {
                        run(device, single, &start, generations, None)
                    })
                    .map_err(fail)?;
                let diff = outcome.board.diff(&start.after(generations));
                prop_assert!(
                    diff.is_match(),
                    "{width} × {height}, {generations} generations: {diff}"
                );
                prop_assert!(outcome.report.is_clean(), "{:#?}", outcome.report.findings);
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn boards_a_kernel_cannot_run_are_refused_in_one_sentence() {
    let mut device = device();
    let too_big = board(33, 32, 0.5, 1);
    let error = run(
        &mut device,
        variant("iterate-single-block"),
        &too_big,
        1,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.ends_with("at most 1024 cells; a 33 × 32 board has 1056"),
        "{error}"
    );
    let narrow = board(31, 64, 0.5, 1);
    let error = run(&mut device, variant("step-floor-blocks"), &narrow, 1, None)
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("cannot launch life_step_floor_blocks with grid (0, 2) × block (32, 32)")
            && error.contains("grid x is 0"),
        "{error}"
    );
    let error = run(
        &mut device,
        variant("step-double-buffer"),
        &narrow,
        1,
        Some((64, 32)),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("2048 threads per block"), "{error}");
    assert!(!error.contains('\n'), "{error}");
}

/// `WrongResult`: proptest searches board sizes from one tile up and must find a board the
/// floor-divided grid gets wrong. Where 32 divides both sides it is right, which is how the
/// bug hides in a test that only uses 64 × 64.
#[test]
fn step_floor_blocks_is_shown_wrong_by_a_generated_board() {
    let cell = RefCell::new(device());
    let is_cuda = cell.borrow().kind().is_cuda();
    let broken = variant("step-floor-blocks");
    assert_eq!(broken.expect, Expect::WrongResult);
    let strategy = (
        TILE..=4 * TILE,
        TILE..=4 * TILE,
        0.2f64..0.6,
        any::<u64>(),
        1u32..=4,
    );
    let mut config = cases(is_cuda, 64, 32, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |(width, height, density, seed, generations)| {
        let start = board(width, height, density, seed);
        let outcome =
            run(&mut cell.borrow_mut(), broken, &start, generations, None).map_err(fail)?;
        let diff = outcome.board.diff(&start.after(generations));
        prop_assert!(diff.is_match(), "{width} × {height}: {diff}");
        Ok(())
    });
    match result {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!("no generated board showed {} wrong: {other:?}", broken.name),
    }
    for (width, height) in [(32, 32), (64, 96)] {
        let start = board(width, height, 0.4, 9);
        let outcome = run(&mut cell.borrow_mut(), broken, &start, 5, None).unwrap();
        let diff = outcome.board.diff(&start.after(5));
        assert!(diff.is_match(), "{width} × {height}: {diff}");
        assert!(outcome.report.is_clean(), "{:#?}", outcome.report.findings);
    }
}

/// A `Race` variant on the emulator: racecheck names the `// BUG:` line under the hardware-like
/// schedule, and proptest, searching boards and adversarial seeds, finds a wrong board. On a GPU
/// only the result can show the race, so the board is large enough that the GPU cannot run
/// all its blocks at once.
fn race_is_named_and_shown_wrong(name: &str, block: (u32, u32), generations: u32) {
    let cell = RefCell::new(device());
    let racy = variant(name);
    assert_eq!(racy.expect, Expect::Race);
    if cell.borrow().kind().is_cuda() {
        let start = board(2048, 2048, 0.35, 11);
        let outcome = run(
            &mut cell.borrow_mut(),
            racy,
            &start,
            generations * 4,
            Some((32, 32)),
        )
        .expect("the racy kernel runs on the GPU");
        let diff = outcome.board.diff(&start.after(generations * 4));
        assert!(
            !diff.is_match(),
            "{name} gave the right 2048 × 2048 board on {}",
            cell.borrow().banner()
        );
        return;
    }
    let start = board(48, 40, 0.35, 3);
    let outcome = run(
        &mut cell.borrow_mut(),
        racy,
        &start,
        generations,
        Some(block),
    )
    .expect("the racy kernel runs on the emulator");
    assert_bug_line_named(
        racy,
        &outcome.report.findings,
        &format!("a 48 × 40 board, block {block:?}"),
    );

    let strategy = (
        side(64),
        side(64),
        0.2f64..0.6,
        any::<u64>(),
        1..=generations,
        any::<u64>(),
    );
    let mut config = cases(false, 0, 24, file!());
    config.failure_persistence = None;
    let mut runner = TestRunner::new(config);
    let result = runner.run(
        &strategy,
        |(width, height, density, seed, generations, schedule_seed)| {
            let start = board(width, height, density, seed);
            let schedule = Schedule::Adversarial {
                seed: schedule_seed,
            };
            let outcome = cell
                .borrow_mut()
                .with_schedule(schedule, |device| {
                    run(device, racy, &start, generations, Some(block))
                })
                .map_err(fail)?;
            let diff = outcome.board.diff(&start.after(generations));
            prop_assert!(diff.is_match(), "{width} × {height}: {diff}");
            Ok(())
        },
    );
    match result {
        Err(TestError::Fail(reason, case)) => {
            eprintln!("counterexample found, as documented: {case:?}: {reason}")
        }
        other => panic!("no generated board showed {name} wrong: {other:?}"),
    }
}

#[test]
fn step_in_place_races_and_is_shown_wrong() {
    race_is_named_and_shown_wrong("step-in-place", (16, 16), 2);
}

#[test]
fn iterate_multi_block_races_across_blocks_and_is_shown_wrong() {
    race_is_named_and_shown_wrong("iterate-multi-block", (16, 8), 8);
}

/// The multi-block loop's only fault is the grid: launched as one block, it is the
/// single-block kernel, and right. So the race is between blocks, as its `// BUG:` says.
#[test]
fn iterate_multi_block_is_right_on_a_grid_of_one_block() {
    let mut device = device();
    let multi = variant("iterate-multi-block");
    assert_eq!(multi.kind, Step::MultiBlock);
    for (width, height, seed) in [(32, 32, 1), (40, 25, 2), (7, 100, 3)] {
        let start = board(width, height, 0.4, seed);
        let outcome = device
            .with_schedule(Schedule::Adversarial { seed }, |device| {
                run(device, multi, &start, 20, Some((width, height)))
            })
            .unwrap();
        assert_eq!(outcome.shape.grid.product(), 1);
        let diff = outcome.board.diff(&start.after(20));
        assert!(diff.is_match(), "{width} × {height}: {diff}");
        assert!(outcome.report.is_clean(), "{:#?}", outcome.report.findings);
    }
}
