use super::cores::WATCHDOG_LOOKS_IN_TURNS;
use crate::exec::plan::{ROUNDS_RUN, RoundsRun};
use crate::module::Module;
use crate::options::RunOptions;

/// Reads shared and local memory before writing them, then leaves its block's number there
/// for whoever comes next: what a block finds shows how its slot was prepared.
const LEFTOVERS: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry leftovers(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 tile[384];
    .local .align 4 .b8 scratch[4];

    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, tile;
    add.u64 %rd3, %rd3, %rd2;
    ld.shared.u32 %r3, [%rd3];
    ld.local.u32 %r4, [scratch];
    add.u32 %r5, %r2, 1;
    st.shared.u32 [%rd3], %r5;
    st.local.u32 [scratch], %r5;
    mad.lo.u32 %r6, %r2, 96, %r1;
    mul.wide.u32 %rd4, %r6, 8;
    add.u64 %rd5, %rd1, %rd4;
    st.global.v2.u32 [%rd5], {%r3, %r4};
    ret;
}
"#;

/// Blocks that start in a slot an earlier block left, on one core and on three, where the
/// cores that run them prepare them: each finds shared memory as every block does at its
/// start (the launch's garbage, not the last block's numbers) and local memory cleared.
#[test]
fn a_block_prepared_by_the_core_that_runs_it_finds_a_fresh_slot() {
    let module = Module::parse(LEFTOVERS).unwrap();
    ROUNDS_RUN.with(|r| r.set(RoundsRun::NONE));
    let blocks = 8;
    let memory = |threads: u32, checkers: bool| {
        let options = RunOptions {
            threads,
            racecheck: checkers,
            memcheck: checkers,
            initcheck: false,
            // Two blocks at a time: six start in a slot another left.
            resident_threads: 2 * 96,
            ..RunOptions::default()
        };
        crate::committed::run(&module, "leftovers", blocks, &options)
    };
    for checkers in [false, true] {
        let (report, buffers) = memory(1, checkers);
        let several = memory(3, checkers);
        assert!(
            (&report, &buffers) == (&several.0, &several.1),
            "one core and three differ: {report}\n{}",
            several.0
        );
        let word = |i: usize| u32::from_le_bytes(buffers[0][i * 4..i * 4 + 4].try_into().unwrap());
        for block in 0..blocks as usize {
            for tid in 0..96 {
                let (shared, local) = (
                    word(2 * (block * 96 + tid)),
                    word(2 * (block * 96 + tid) + 1),
                );
                assert_eq!(
                    (shared, local),
                    (word(2 * tid), 0),
                    "block {block}, thread {tid}"
                );
            }
        }
        // The launch's garbage, which no block wrote.
        assert!((0..96).all(|tid| word(2 * tid) > blocks), "{report}");
    }
    let prepared = ROUNDS_RUN.with(|r| r.get()).prepared;
    assert!(prepared >= 6, "{prepared} blocks prepared in their turns");
}

/// Every committed kernel, every entry, every schedule, with every checker and with none:
/// five blocks on several cores end with the report and the memory they end with on one.
/// With racecheck, entry by entry, two cores run blocks with the detector on the launch's
/// thread, or four cores run them on two workers while the launch's thread joins their
/// turns and one shard applies the detector's calls (the piped detector's own test runs it
/// in more shards); without, three run blocks on two workers, three at a time, so that
/// blocks also start in slots that earlier blocks left (the corpus's blocks have 96
/// threads).
#[test]
fn every_committed_kernel_runs_alike_on_one_core_and_on_several() {
    ROUNDS_RUN.with(|r| r.set(RoundsRun::NONE));
    let on_cores = |threads: u32| {
        move |options: RunOptions| {
            let one = RunOptions {
                threads: 1,
                ..options
            };
            (one, RunOptions { threads, ..options })
        }
    };
    let parse = |ptx: &str| Some((Module::parse(ptx).ok()?, Module::parse(ptx).ok()?));
    // Three schedules per entry: the count of calls tells the entries apart.
    let calls = std::cell::Cell::new(0u32);
    let checked = crate::committed::runs_alike("two or four cores", 5, parse, |options| {
        calls.set(calls.get() + 1);
        let threads = if calls.get().div_ceil(3).is_multiple_of(2) {
            4
        } else {
            2
        };
        on_cores(threads)(options)
    });
    // A watchdog that looks every few rounds, so that turns run past its looks, which the
    // launch then makes from the turns' counts.
    WATCHDOG_LOOKS_IN_TURNS.with(|looks| looks.set(0));
    let unchecked = crate::committed::runs_alike("three cores, no checkers", 5, parse, |o| {
        on_cores(3)(RunOptions {
            racecheck: false,
            synccheck: false,
            memcheck: false,
            initcheck: false,
            resident_threads: 3 * 96,
            // In thread-steps: a round adds at most one per thread, and the corpus's kernels
            // take fewer steps than instructions.
            watchdog_window: 1024,
            ..o
        })
    });
    let looks = WATCHDOG_LOOKS_IN_TURNS.with(|looks| looks.get());
    assert!(
        looks > 250,
        "{looks} watchdog looks made from turns' counts"
    );
    assert!(
        checked > 300 && unchecked == checked,
        "{checked} and {unchecked} launches"
    );
    let RoundsRun {
        parallel,
        serial,
        stretched,
        prepared,
        past_plan,
        ahead,
        ahead_taken_alone,
        in_line,
        few_live,
        taken_over,
        cut_short,
        met,
    } = ROUNDS_RUN.with(|r| r.get());
    // Both kinds are common in the corpus: most rounds of most kernels run in parallel, and
    // the racy kernels' rounds that meet on global memory (and printf's) run on one core.
    // Many run in stretches: shared-memory trees, tiles' inner loops.
    // Most kernels start with parameter loads, far enough from global memory for the core
    // that runs a new block to prepare it.
    // Most stretched rounds run past the plan: loads, and barriers that wait for the slowest
    // warp, which no count made ahead can see past. Blocks run ahead through trees of
    // barriers, and rounds on one core take some of those rounds. Rounds of fewer than four
    // live warps run on one core and join at once; of the other serial rounds, most leave
    // what they found to wait in line behind the turns' (and some join the line first, when
    // it grew long). Loops and trees run longer than a segment, which the share puts back
    // for others to take (about 8,000 times on the 2-core machine). Blocks that stop at one
    // round with footprints apart meet there and run it without the launch (about 1,400
    // times).
    // Steps of visible operations (`block::step`, issue 48): a round runs each warp's
    // register work with its next visible operation, so the same kernels take fewer rounds
    // (about 27,500 here, where one-instruction steps ran over 30,000 in parallel alone), and
    // the bounds below are in those rounds. Footprints follow a step's register work to the
    // access that ends it (`exec/prefix.rs`); a fresh block whose first step loads global
    // memory is still prepared by its core when it writes nothing beyond itself for a while.
    // The rounds that may reach the step budget run on one core (about 600 here, the corpus's
    // deadlocks), where steps end at the budget. The watchdog counts thread-steps, so turns
    // are as long between its looks as with one-instruction steps. This 2-core machine's run:
    // 15,663 parallel, 5,021 serial, 1,467 ahead (50 taken alone), 1,173 prepared, 50 cut
    // short, 1,421 met, 376 watchdog looks made from turns' counts (one-instruction steps'
    // bounds: 30,000 / 1,000 / 10,000 (100) / 1,000 / 1,000 / 500).
    assert!(
        parallel > 12_000
            && serial > 1000
            && stretched > 10_000
            && prepared > 1000
            && past_plan > 3_000
            && ahead > 500
            && ahead_taken_alone > 20
            && few_live > 100
            && in_line > (serial - few_live) / 2
            && in_line < serial - few_live
            && taken_over > 100
            && cut_short > 20
            && met > 1000,
        "{parallel} parallel ({stretched} in stretches, {past_plan} past the plan) and \
         {serial} serial rounds ({in_line} in line, {few_live} of few live warps), {ahead} rounds ahead of the launch's \
         ({ahead_taken_alone} taken by serial rounds), {prepared} blocks prepared in their \
         turns, {taken_over} blocks taken over from other shares, {cut_short} segments \
         cut short, {met} rounds met on"
    );
}

/// The detector takes the share of the cores its last launch's work measured, between one per
/// sixteen cores and half of them; below four cores it stays on the launch's thread.
#[test]
fn the_detector_takes_the_share_of_cores_its_work_measured() {
    use super::cores::detector_shards;
    assert_eq!(detector_shards(16, true, None), 1);
    assert_eq!(detector_shards(16, true, Some(0.4)), 6);
    assert_eq!(detector_shards(16, true, Some(0.01)), 1);
    assert_eq!(detector_shards(16, true, Some(0.9)), 8);
    assert_eq!(detector_shards(64, true, Some(0.05)), 4);
    assert_eq!(detector_shards(4, true, Some(0.5)), 2);
    assert_eq!(detector_shards(2, true, Some(0.5)), 0);
    assert_eq!(detector_shards(16, true, Some(f64::NAN)), 1);
    assert_eq!(
        detector_shards(8, false, Some(0.9)),
        2,
        "blocks on one core"
    );
}

/// A launch whose joins fall behind its blocks (here: joins nothing beside a turn) catches up
/// after each turn, so that at most the turn that just ended waits in line, and it still ends
/// as one core does. A line without that bound held 11 GB of a histogram's calls.
#[test]
fn joins_that_fall_behind_catch_up_after_each_turn() {
    use super::cores::{JOINS_FALL_BEHIND, MOST_TURNS_IN_LINE};
    let module = Module::parse(LEFTOVERS).unwrap();
    let run = |threads: u32| {
        let options = RunOptions {
            threads,
            resident_threads: 4 * 96,
            ..RunOptions::default()
        };
        crate::committed::run(&module, "leftovers", 64, &options)
    };
    let one = run(1);
    JOINS_FALL_BEHIND.with(|behind| behind.set(true));
    MOST_TURNS_IN_LINE.with(|most| most.set(0));
    let several = run(3);
    JOINS_FALL_BEHIND.with(|behind| behind.set(false));
    assert!(
        one == several,
        "one core and three differ: {}\n{}",
        one.0,
        several.0
    );
    let most = MOST_TURNS_IN_LINE.with(|most| most.get());
    assert_eq!(most, 1, "turns waiting in line at once");
}

/// The launch's part of a turn's blocks: an even share, and less when the race detector on its
/// core took a measured part of the work, so that it ends its turn with the workers.
#[test]
fn the_launch_takes_fewer_blocks_when_the_detector_is_on_its_core() {
    use super::turn::launch_share;
    assert_eq!(launch_share(16, 1, None), 8);
    assert_eq!(launch_share(17, 1, None), 8);
    assert_eq!(launch_share(16, 1, Some(0.0)), 8);
    // A fifth of the work: 0.2 + x 0.8 = (1 - x) 0.8 makes x = 3/8 of the blocks.
    assert_eq!(launch_share(16, 1, Some(0.2)), 6);
    assert_eq!(launch_share(16, 1, Some(0.55)), 0);
    // 0.3 + x 0.7 = (1 - x) 0.7 makes x = 2/7 of the blocks: 4 of 16.
    assert_eq!(launch_share(16, 1, Some(0.3)), 4);
    assert_eq!(launch_share(16, 1, Some(f64::NAN)), 8);
    assert_eq!(launch_share(16, 8, Some(0.1)), 0, "enough workers: none");
}

/// Each thread copies a word into shared memory with `cp.async`; the blocks then meet on a
/// global counter (rounds on one core), and after a barrier read a word another thread
/// copied: after waiting for their copies (`WAIT` first), or before (`WAIT` last), which
/// races with that thread's copy in flight.
const COPIES_ACROSS_CORES: &str = r#"
.version 7.0
.target sm_80
.address_size 64

.visible .entry copies(.param .u64 out)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b8 tile[384];

    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    mov.u32 %r2, tile;
    shl.b32 %r3, %r1, 2;
    add.u32 %r4, %r2, %r3;
    cp.async.ca.shared.global [%r4], [%rd3], 4;
    cp.async.commit_group;
    atom.global.add.u32 %r5, [%rd1+1024], 1;
    atom.global.add.u32 %r5, [%rd1+1024], 1;
    atom.global.add.u32 %r5, [%rd1+1024], 1;
    WAIT_FIRST
    bar.sync 0;
    sub.u32 %r6, 95, %r1;
    shl.b32 %r7, %r6, 2;
    add.u32 %r8, %r2, %r7;
    ld.shared.u32 %r9, [%r8];
    WAIT_LAST
    bar.sync 0;
    add.u32 %r10, %r9, 1;
    st.shared.u32 [%r8], %r10;
    ret;
}
"#;

/// A block's copies in flight are its own wherever its rounds run: issued in a turn on one
/// core and waited for in a round on another (as here), a read of one before the wait races
/// with it, and after the wait races with nothing, on every number of cores.
#[test]
fn a_blocks_copies_in_flight_go_with_it_from_core_to_core() {
    ROUNDS_RUN.with(|r| r.set(RoundsRun::NONE));
    for waits_first in [true, false] {
        let (first, last) = if waits_first {
            ("cp.async.wait_group 0;", "")
        } else {
            ("", "cp.async.wait_group 0;")
        };
        let ptx = COPIES_ACROSS_CORES
            .replace("WAIT_FIRST", first)
            .replace("WAIT_LAST", last);
        let module = Module::parse(&ptx).unwrap();
        let races = |threads: u32| {
            let options = RunOptions {
                threads,
                ..RunOptions::default()
            };
            let (report, _) = crate::committed::run(&module, "copies", 12, &options);
            (report.matches("kind: Race").count(), report)
        };
        let (on_one, report) = races(1);
        // Before the wait: the copy in flight, and the copy's landing write after the read.
        assert_eq!(on_one, if waits_first { 0 } else { 2 }, "{report}");
        for threads in [2, 3, 4] {
            let (_, several) = races(threads);
            assert!(
                several == report,
                "{threads} cores: {several}\none: {report}"
            );
        }
    }
    let run = ROUNDS_RUN.with(|r| r.get());
    assert!(
        run.parallel > 0 && run.serial > 0,
        "{} parallel, {} serial",
        run.parallel,
        run.serial
    );
}

/// Each block loops over its own shared memory (a barrier a step), for 100 + 23 · blockIdx
/// steps, then stores to global memory: the blocks keep to themselves for hundreds of rounds,
/// and leave the loop at different rounds, so that some run ahead of the turn's end while
/// others stop at a store.
const LONG_LOOPS: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry long_loops(.param .u64 out)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<6>;
    .shared .align 4 .b8 tile[384];

    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r6, %ctaid.x;
    mad.lo.u32 %r7, %r6, 23, 100;
    mul.wide.u32 %rd2, %r1, 4;
    mov.u64 %rd3, tile;
    add.u64 %rd3, %rd3, %rd2;
    st.shared.u32 [%rd3], %r1;
    mov.u32 %r2, 0;
LOOP:
    bar.sync 0;
    ld.shared.u32 %r3, [%rd3];
    add.u32 %r3, %r3, 1;
    st.shared.u32 [%rd3], %r3;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %r7;
    @%p1 bra LOOP;
    mad.lo.u32 %r5, %r6, 96, %r1;
    mul.wide.u32 %rd4, %r5, 4;
    add.u64 %rd5, %rd1, %rd4;
    st.global.u32 [%rd5], %r3;
    ret;
}
"#;

/// A share that found another's block runnable and then lost its core for a while (more
/// threads than cores: jacobiCudaGraphs on 16 cores with 48 threads) must not run that block
/// once the turn is over: its owner has split its turn, and rounds run past the split would
/// join before the rounds the split put ahead, a misorder the race detector reads as races.
/// With every take-over delayed, the blocks of [`LONG_LOOPS`] still join in their own order
/// (the order check panics in tests) and leave what one core leaves.
#[test]
fn a_block_found_runnable_before_the_turn_ended_is_not_run_after_it() {
    use std::sync::atomic::Ordering;
    let module = Module::parse(LONG_LOOPS).unwrap();
    let run = |threads: u32| {
        let options = RunOptions {
            threads,
            ..RunOptions::default()
        };
        crate::committed::run(&module, "long_loops", 40, &options)
    };
    let one_core = run(1);
    assert!(one_core.0.contains("findings: []"), "{}", one_core.0);
    super::cores::PAUSE_BEFORE_TAKING_OVER_US.store(300, Ordering::Relaxed);
    ROUNDS_RUN.with(|r| r.set(RoundsRun::NONE));
    // Eight threads: a crew of five or six (the launch's thread and the race detector's take
    // the rest), enough to pause.
    for _ in 0..8 {
        let several = run(8);
        assert_eq!(several.1, one_core.1);
        assert!(several.0.contains("findings: []"), "{}", several.0);
    }
    super::cores::PAUSE_BEFORE_TAKING_OVER_US.store(0, Ordering::Relaxed);
    let run = ROUNDS_RUN.with(|r| r.get());
    assert!(
        run.taken_over > 0 && run.ahead > 0,
        "{} blocks taken over, {} rounds ahead",
        run.taken_over,
        run.ahead
    );
}
