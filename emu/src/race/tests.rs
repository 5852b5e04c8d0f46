//! The race detector's own tests: chunks read back what was stored, whatever cells are
//! written, and compact shadows stay compact for coalesced, 2D and scattered accesses.

#![allow(clippy::unwrap_used)]

use super::access::{Kind, Rec, Region, Sem, StampKey, Who, rec};
use super::calls::{AccessCall, Call, Packed, Streams, run_place, word_access_bits};
use super::detector::Race;
use super::shadow::{CHUNK_WORDS, Chunk, R0, R1, Slot, W, element_index};
use crate::ir::Scope;
use crate::memory_model::MemoryModel;
use proptest::prelude::*;

/// A detector for blocks of 256 threads, `block_x` wide, with stamps for three
/// instructions of each access size handed out.
fn race_with_stamps(block_x: u32) -> (Race, Vec<u32>) {
    let mut r = Race::new(256, 8, block_x, MemoryModel::Racecheck);
    let stamps = (0..5u8)
        .flat_map(|size_log2| {
            (0..3u32).map(move |pc| StampKey {
                pc,
                epoch: 1,
                bar: 0,
                wsync: 0,
                tid_hi: 0,
                class: 0,
                size_log2,
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|k| r.stamp(k))
        .collect();
    (r, stamps)
}

/// A generated record: follows a pattern?, pattern number, byte mask, instruction.
type GenRec = Option<(bool, u64, u8, usize)>;

/// Records that follow a chunk pattern (thread `base + offset(i)`) or not (any thread).
fn cell_strategy(stamps: usize) -> impl Strategy<Value = (usize, [GenRec; 3])> {
    let rec = prop_oneof![
        2 => (any::<bool>(), 0u64..4, 1u8..16, 0..stamps).prop_map(Some),
        1 => Just(None),
    ];
    (0..CHUNK_WORDS, [rec.clone(), rec.clone(), rec])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever is stored in a chunk reads back exactly, compact or not.
    #[test]
    fn chunks_read_back_what_was_stored(
        block_x in prop_oneof![Just(256u32), Just(16), Just(24)],
        instructions in prop_oneof![Just(1usize), Just(2), Just(15)],
        writes in proptest::collection::vec(cell_strategy(15), 1..200)
    ) {
        let (race, stamps) = race_with_stamps(block_x);
        let mut chunk = Chunk::Empty;
        let mut want = [[0 as Rec; 3]; CHUNK_WORDS];
        for (i, cell) in writes {
            let new: [Rec; 3] = std::array::from_fn(|s| match cell[s] {
                None => 0,
                Some((affine, base, mask, st)) => {
                    let stamp = stamps[st % instructions];
                    let size_log2 = race.stamps[stamp as usize].size_log2;
                    let tid = if affine {
                        1000 + base * 7 + race.thread_offset(element_index(i, size_log2), 0)
                    } else {
                        (i as u64 * 2_654_435_761) % 5000
                    };
                    rec(tid, mask, stamp)
                }
            });
            let old = race.cell(&chunk, i);
            prop_assert_eq!(old, want[i]);
            race.store(&mut chunk, i, &old, &new);
            want[i] = new;
            for (k, w) in want.iter().enumerate() {
                prop_assert_eq!(race.cell(&chunk, k), *w, "word {}", k);
            }
        }
    }
}

#[test]
fn coalesced_accesses_stay_compact() {
    let (race, stamps) = race_with_stamps(256);
    let mut chunk = Chunk::Empty;
    let set_r0 = |chunk: &mut Chunk, i: usize, tid: u64, stamp: u32| {
        let old = race.cell(chunk, i);
        race.store(chunk, i, &old, &[0, rec(tid, 0xF, stamp), old[R0]]);
    };
    // A warp reads the chunk, then another warp reads it: the first pattern moves to R1.
    for i in 0..CHUNK_WORDS {
        set_r0(&mut chunk, i, i as u64, stamps[6]);
    }
    for i in 0..CHUNK_WORDS {
        set_r0(&mut chunk, i, 64 + i as u64, stamps[7]);
    }
    assert!(matches!(chunk, Chunk::Compact(_)));
    // Half the words read by a third warp, one by a fourth: R0 holds three patterns.
    for i in 0..16 {
        set_r0(&mut chunk, i, 128 + i as u64, stamps[8]);
    }
    set_r0(&mut chunk, 16, 7777, stamps[8]);
    assert!(matches!(chunk, Chunk::Compact(_)));
    // A fourth pattern in R0 does not fit: one record per word from then on.
    set_r0(&mut chunk, 20, 9999, stamps[6]);
    assert!(matches!(chunk, Chunk::Explicit(_)));
    let r0 = |chunk: &Chunk, i: usize| race.cell(chunk, i)[R0] >> 32;
    assert_eq!(r0(&chunk, 20), 9999);
    assert_eq!(r0(&chunk, 16), 7777);
    assert_eq!(r0(&chunk, 3), 128 + 3);
    assert_eq!(r0(&chunk, 30), 64 + 30);
    assert_eq!(race.cell(&chunk, 30)[R1] >> 32, 30);
}

#[test]
fn a_row_across_two_blocks_of_a_2d_launch_stays_compact() {
    // Blocks of 16 × 16: words 0..16 of a row belong to one block, 16..32 to the next.
    let (race, stamps) = race_with_stamps(16);
    let mut chunk = Chunk::Empty;
    for i in 0..CHUNK_WORDS {
        let tid = 5 * 256 + 3 * 16 + (i / 16) as u64 * 256 + (i % 16) as u64;
        let old = race.cell(&chunk, i);
        race.store(&mut chunk, i, &old, &[rec(tid, 0xF, stamps[7]), 0, 0]);
    }
    assert!(matches!(chunk, Chunk::Compact(_)));
    assert_eq!(race.cell(&chunk, 17)[W] >> 32, 6 * 256 + 3 * 16 + 1);
}

#[test]
fn a_scatter_from_one_instruction_lists_threads_without_exploding() {
    let (race, stamps) = race_with_stamps(256);
    let mut chunk = Chunk::Empty;
    let tid = |i: usize| (i as u64 * 2_654_435_761) % 100_000;
    for i in 0..CHUNK_WORDS {
        let old = race.cell(&chunk, i);
        race.store(&mut chunk, i, &old, &[rec(tid(i), 0xF, stamps[7]), 0, 0]);
    }
    assert!(matches!(chunk, Chunk::Compact(_)));
    for i in 0..CHUNK_WORDS {
        assert_eq!(race.cell(&chunk, i)[W] >> 32, tid(i));
    }
}

/// One step of a detector's life, for comparing a warp's run recorded together with the same
/// accesses recorded one by one.
#[derive(Clone, Debug)]
enum Step {
    /// Lanes `lane..lane + len` of a warp of `block`, on words `i0..i0 + len` of a chunk.
    Run {
        block: u32,
        warp: u32,
        lane: u32,
        len: usize,
        shared: bool,
        chunk: usize,
        i0: usize,
        write: bool,
        pc: u32,
    },
    /// Any access by any thread: other sizes, partial words, strong ones.
    Single {
        block: u32,
        thread: u32,
        shared: bool,
        word: usize,
        mask: u8,
        size: u32,
        kind: usize,
        pc: u32,
    },
    Barrier {
        block: u32,
    },
}

fn step_strategy() -> impl Strategy<Value = Step> {
    let run = (
        0..2u32,
        0..8u32,
        0..32u32,
        1..=32usize,
        any::<bool>(),
        0..4usize,
    )
        .prop_flat_map(|(block, warp, lane, len, shared, chunk)| {
            let len = len.min(32 - lane as usize);
            (
                Just((block, warp, lane, len, shared, chunk)),
                0..=(32 - len),
                any::<bool>(),
                0..3u32,
            )
        })
        .prop_map(
            |((block, warp, lane, len, shared, chunk), i0, write, pc)| Step::Run {
                block,
                warp,
                lane,
                len,
                shared,
                chunk,
                i0,
                write,
                pc,
            },
        );
    let single = (
        0..2u32,
        0..256u32,
        any::<bool>(),
        0..128usize,
        1..16u8,
        prop_oneof![Just(1u32), Just(2), Just(4), Just(8)],
        0..5usize,
        0..4u32,
    )
        .prop_map(
            |(block, thread, shared, word, mask, size, kind, pc)| Step::Single {
                block,
                thread,
                shared,
                word,
                mask,
                size,
                kind,
                pc,
            },
        );
    prop_oneof![6 => run, 3 => single, 1 => (0..2u32).prop_map(|block| Step::Barrier { block })]
}

/// Everything the detector's shadow holds, compact slots down to their unused patterns.
fn shadow_shape(race: &Race) -> Vec<String> {
    let slot = |s: &Slot| {
        let pats: Vec<_> = s
            .pats
            .iter()
            .map(|p| (p.base, p.sm, p.phase, p.size_log2))
            .collect();
        format!(
            "has {:x} sel {:x}/{:x} {pats:?} tids {:?}",
            s.has,
            s.sel_lo,
            s.sel_hi,
            s.tids.as_deref()
        )
    };
    let chunk = |c: &Chunk| match c {
        Chunk::Empty => "empty".to_string(),
        Chunk::Compact(slots) => slots.iter().map(slot).collect::<Vec<_>>().join("; "),
        Chunk::Explicit(e) => format!("{:?}", e.as_slice()),
    };
    let regions = race.shared.iter().chain(&race.global);
    let mut shape: Vec<String> = regions.flat_map(|sh| sh.chunks.iter().map(chunk)).collect();
    shape.push(format!("{} bytes", race.shadow_bytes()));
    shape
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A warp's run recorded together finds the same conflicts, in the same lanes, and leaves
    /// the same shadow as its accesses recorded one at a time, whatever came before.
    #[test]
    fn a_run_recorded_together_is_its_accesses_one_by_one(
        block_x in prop_oneof![Just(256u32), Just(16), Just(24)],
        steps in proptest::collection::vec(step_strategy(), 1..60)
    ) {
        run_both_ways(block_x, &steps)?;
    }
}

/// Two warps of blocks 0 and 1, one instruction, write words 0..16 and 16..32 of a global chunk
/// as one pattern (threads 240..272 of blocks of 256); after a barrier in block 0, a warp of block
/// 0 writes all 32 words. Block 1's half conflicts: a pattern's threads in two blocks must not be
/// taken as one block's, ordered by its barrier.
#[test]
fn a_pattern_whose_threads_span_two_blocks_is_not_ordered_by_one_blocks_barrier() {
    let run = |block, warp, lane, len, i0, pc| Step::Run {
        block,
        warp,
        lane,
        len,
        shared: false,
        chunk: 0,
        i0,
        write: true,
        pc,
    };
    let steps = [
        run(0, 7, 16, 16, 0, 0),
        run(1, 0, 0, 16, 16, 0),
        Step::Barrier { block: 0 },
        run(0, 0, 0, 32, 0, 1),
    ];
    let hits = run_both_ways(256, &steps).unwrap();
    assert_eq!(hits, 16, "block 1's half conflicts, block 0's does not");
}

/// Replays `steps` on a detector recording runs together and on one recording their accesses
/// one by one; fails at the first difference. Returns how many conflicts runs found.
fn run_both_ways(block_x: u32, steps: &[Step]) -> Result<usize, TestCaseError> {
    let mut run_hits = 0;
    let (tpb, wpb) = (256u32, 8u32);
    let mut together = Race::new(tpb, wpb, block_x, MemoryModel::Racecheck);
    let mut one_by_one = Race::new(tpb, wpb, block_x, MemoryModel::Racecheck);
    for race in [&mut together, &mut one_by_one] {
        race.block_started(0, 0);
        race.block_started(1, 1);
    }
    let who = |block: u32, thread: u32| Who {
        tid: (block * tpb + thread) as u64,
        slot: block,
        rt: block * tpb + thread,
        warp: block * wpb + thread / 32,
    };
    let region = |shared: bool, block: u32| {
        if shared {
            Region::Shared {
                slot: block,
                block: block as u64,
            }
        } else {
            Region::Global {
                index: 0,
                words: 128,
            }
        }
    };
    let kinds = [
        Kind::Read,
        Kind::Write,
        Kind::StrongRead,
        Kind::StrongWrite,
        Kind::Rmw,
    ];
    for (n, step) in steps.iter().enumerate() {
        match *step {
            Step::Run {
                block,
                warp,
                lane,
                len,
                shared,
                chunk,
                i0,
                write,
                pc,
            } => {
                let first = AccessCall {
                    region: region(shared, block),
                    word: chunk * CHUNK_WORDS + i0,
                    mask: 0xF,
                    size: 4,
                    who: who(block, warp * 32 + lane),
                    kind: if write { Kind::Write } else { Kind::Read },
                    sem: Sem::PLAIN,
                    pc,
                };
                let mut hits = Vec::new();
                together.access_run(&first, len, |j, h| {
                    hits.push((j, h.hazard, h.cause, h.prev.tid, h.prev.pc));
                });
                let mut want = Vec::new();
                for j in 0..len {
                    let lane = who(block, warp * 32 + lane + j as u32);
                    let a = first;
                    if let Some(h) =
                        one_by_one.access(a.region, a.word + j, 0xF, 4, &lane, a.kind, a.sem, a.pc)
                    {
                        want.push((j, h.hazard, h.cause, h.prev.tid, h.prev.pc));
                    }
                }
                run_hits += hits.len();
                prop_assert_eq!(hits, want, "step {}", n);
            }
            Step::Single {
                block,
                thread,
                shared,
                word,
                mask,
                size,
                kind,
                pc,
            } => {
                let sem = Sem {
                    scope: Scope::Gpu,
                    ..Sem::PLAIN
                };
                let who = who(block, thread);
                let found: Vec<_> = [&mut together, &mut one_by_one]
                    .into_iter()
                    .map(|race| {
                        race.access(
                            region(shared, block),
                            word,
                            mask,
                            size,
                            &who,
                            kinds[kind],
                            sem,
                            pc,
                        )
                        .map(|h| (h.hazard, h.cause, h.prev.tid))
                    })
                    .collect();
                prop_assert_eq!(found[0], found[1], "step {}", n);
            }
            Step::Barrier { block } => {
                for race in [&mut together, &mut one_by_one] {
                    race.barrier(block, block * wpb..(block + 1) * wpb);
                }
            }
        }
        prop_assert_eq!(
            shadow_shape(&together),
            shadow_shape(&one_by_one),
            "after step {}",
            n
        );
    }
    Ok(run_hits)
}

/// One lane's access for the run-tail test: lane `lane` of warp `warp` of `block`, at word `word`.
#[derive(Clone, Debug)]
struct LaneAccess {
    block: u32,
    warp: u32,
    lane: u32,
    word: usize,
    shared: bool,
    kind: usize,
    size: u32,
    pc: u32,
}

/// A warp instruction's accesses: from lane `lane` on, words from `word` on, some lanes idle,
/// a few of another kind or size; runs may cross a chunk's end.
fn instruction_strategy() -> impl Strategy<Value = Vec<LaneAccess>> {
    (
        (0..2u32, 0..3u32, 0..32u32, 1..=32u32, 0..100usize),
        (any::<bool>(), 0..2usize, 0..2u32, any::<bool>()),
        proptest::collection::vec(0..16u8, 32),
    )
        .prop_map(
            |((block, warp, lane, len, word), (shared, kind, pc, packed), odd)| {
                (lane..(lane + len).min(32))
                    .filter(|&l| odd[l as usize] != 0)
                    .enumerate()
                    .map(|(k, l)| LaneAccess {
                        block,
                        warp,
                        lane: l,
                        // Idle lanes skip their words, or the active ones take consecutive words.
                        word: word + if packed { k } else { (l - lane) as usize },
                        shared,
                        // One lane in fifteen strong or narrower: it ends the run.
                        kind: if odd[l as usize] == 1 { 3 } else { kind },
                        size: if odd[l as usize] == 2 { 2 } else { 4 },
                        pc,
                    })
                    .collect()
            },
        )
}

/// Calls as plain values, to compare two streams.
fn call_shape(call: &Call) -> (u8, [u64; 6], u32, u8) {
    match call {
        Call::Access(p, number, lanes) => (0, p.0, *number, *lanes),
        Call::Mark(p) => (1, p.0, 0, 0),
        Call::Barrier { slot, .. } => (2, [*slot as u64, 0, 0, 0, 0, 0], 0, 0),
        _ => (3, [0; 6], 0, 0),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Lanes that lengthen a run through the streams' tail leave the very calls that logging each
    /// as a call of its own leaves: the same runs, numbers and marks in every shard's stream.
    #[test]
    fn a_run_lengthened_through_its_tail_logs_what_its_calls_would(
        shards in 1..4usize,
        instructions in proptest::collection::vec(
            (instruction_strategy(), 0..8u8), 1..24),
    ) {
        let (tpb, wpb) = (96u32, 3u32);
        let mut by_call = Streams::new(shards, &mut Vec::new());
        let mut by_tail = Streams::new(shards, &mut Vec::new());
        let kinds = [Kind::Read, Kind::Write, Kind::StrongRead, Kind::StrongWrite];
        for (lanes, then) in &instructions {
            for a in lanes {
                let who = Who {
                    tid: (a.block * tpb + a.warp * 32 + a.lane) as u64,
                    slot: a.block,
                    rt: a.block * tpb + a.warp * 32 + a.lane,
                    warp: a.block * wpb + a.warp,
                };
                let (region, index) = if a.shared {
                    (Region::Shared { slot: a.block, block: a.block as u64 }, a.block)
                } else {
                    (Region::Global { index: 1, words: 256 }, 1)
                };
                let (kind, mask) = (kinds[a.kind], if a.size == 4 { 0xF } else { 0x3 });
                let packed =
                    Packed::of_access(region, a.word, mask, a.size, &who, kind, Sem::PLAIN, a.pc);
                by_call.push_access(packed);
                let lengthened = a.size == 4
                    && by_tail.lengthen_run(
                        a.word as u64,
                        who.rt,
                        run_place(a.shared, index),
                        who.warp as u64 | (a.pc as u64) << 32,
                        word_access_bits(kind, Sem::PLAIN),
                    );
                if !lengthened {
                    by_tail.push_access(packed);
                }
            }
            // Now and then another call between instructions.
            if *then == 0 {
                for streams in [&mut by_call, &mut by_tail] {
                    streams.push(Call::Barrier {
                        slot: 0,
                        warps: 0..wpb,
                        serial: 1,
                    });
                }
            }
        }
        prop_assert_eq!(by_call.accesses, by_tail.accesses);
        prop_assert_eq!(by_call.calls, by_tail.calls);
        for (shard, (a, b)) in by_call.parts.iter().zip(&by_tail.parts).enumerate() {
            let (a, b): (Vec<_>, Vec<_>) =
                (a.iter().map(call_shape).collect(), b.iter().map(call_shape).collect());
            prop_assert_eq!(a, b, "shard {}", shard);
        }
    }
}

/// A warp's 32 lanes reading words 16..48: two runs, one per chunk, and so two calls; all but
/// the runs' first lanes logged through the tail.
#[test]
fn a_coalesced_warp_access_is_two_calls_across_a_chunks_end() {
    let mut streams = Streams::new(2, &mut Vec::new());
    let mut through_tail = 0;
    for lane in 0..32u32 {
        let who = Who {
            tid: lane as u64,
            slot: 0,
            rt: lane,
            warp: 0,
        };
        let word = 16 + lane as u64;
        let bits = word_access_bits(Kind::Read, Sem::PLAIN);
        if streams.lengthen_run(word, lane, run_place(false, 0), 7 << 32, bits) {
            through_tail += 1;
        } else {
            let region = Region::Global {
                index: 0,
                words: 64,
            };
            let packed = Packed::of_access(
                region,
                word as usize,
                0xF,
                4,
                &who,
                Kind::Read,
                Sem::PLAIN,
                7,
            );
            streams.push_access(packed);
        }
    }
    let mut runs: Vec<_> = streams
        .parts
        .iter()
        .flatten()
        .map(|c| match c {
            Call::Access(p, number, lanes) => (p.0[0], *number, *lanes),
            _ => (0, 0, 0),
        })
        .collect();
    runs.sort();
    assert_eq!(runs, [(16, 0, 16), (32, 16, 16)]);
    assert_eq!((through_tail, streams.accesses, streams.calls), (30, 32, 2));
}
