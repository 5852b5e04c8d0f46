//! Shared-memory bank conflicts, counted per warp-wide load and store when
//! [`crate::RunOptions::bank_conflicts`] asks for them.
//!
//! The model is the one the CUDA C++ Programming Guide gives for compute capability 5.0 and
//! later (section *Shared Memory*): shared memory has 32 banks, 4-byte word `w` lies in bank
//! `w % 32`, a bank serves one word per pass, and lanes that read the same word share it. So a
//! warp's access takes as many passes ("wavefronts", in Nsight Compute's words) as the most
//! distinct words it touches in one bank. An access of 8 or 16 bytes per lane is served in 2 or
//! 4 phases of 16 or 8 consecutive lanes, each phase counted the same way: a warp's `float4`
//! load takes 4 wavefronts at best. Atomics on shared memory are not counted (they take a path
//! of their own), and neither is anything a GPU's compiler might do differently from the PTX.

use std::collections::BTreeMap;
use std::fmt;

use crate::source_loc::SourceLoc;

/// Banks of shared memory, each 4 bytes wide.
pub const BANKS: u32 = 32;

/// The bank conflicts of one `.cu` line's loads (or stores) of shared memory over a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankConflicts {
    pub at: SourceLoc,
    /// `true` for stores, `false` for loads.
    pub write: bool,
    /// Warp-wide accesses made here: one per warp per execution of the instruction.
    pub requests: u64,
    /// Passes through the banks those accesses took.
    pub wavefronts: u64,
    /// The passes they would take with no conflicts: one per phase with an active lane.
    pub ideal_wavefronts: u64,
    /// The worst phase of any access: how many distinct words it read or wrote in one bank.
    pub worst_ways: u32,
}

impl BankConflicts {
    /// Wavefronts beyond the conflict-free count.
    pub fn extra_wavefronts(&self) -> u64 {
        self.wavefronts - self.ideal_wavefronts
    }

    pub fn is_conflicted(&self) -> bool {
        self.worst_ways > 1
    }
}

impl fmt::Display for BankConflicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of shared memory at {}: {} warp accesses took {} wavefronts ({} without conflicts), worst {}-way",
            if self.write { "stores" } else { "loads" },
            self.at,
            self.requests,
            self.wavefronts,
            self.ideal_wavefronts,
            self.worst_ways
        )
    }
}

/// One warp access: the wavefronts it takes, the wavefronts it would take without conflicts,
/// and its worst phase's ways. `offsets[lane]` is the byte offset the lane accessed in shared
/// memory, `None` for lanes that did not access it; every lane accesses `bytes` bytes.
pub fn warp_access(offsets: &[Option<u32>; 32], bytes: u32) -> (u32, u32, u32) {
    let phases = (bytes / 4).clamp(1, 4).next_power_of_two();
    let lanes_per_phase = 32 / phases as usize;
    let (mut wavefronts, mut ideal, mut worst) = (0, 0, 0);
    for phase in offsets.chunks(lanes_per_phase) {
        // The distinct words each bank must deliver in this phase.
        let mut words: [Vec<u32>; BANKS as usize] = Default::default();
        let mut active = false;
        for offset in phase.iter().flatten() {
            active = true;
            let first = offset / 4;
            // A wrapped 32-bit address may sit at the top of the range.
            let last = offset.saturating_add(bytes.max(1) - 1) / 4;
            for word in first..=last {
                let bank = &mut words[(word % BANKS) as usize];
                if !bank.contains(&word) {
                    bank.push(word);
                }
            }
        }
        if !active {
            continue;
        }
        let ways = words.iter().map(Vec::len).max().unwrap_or(0) as u32;
        wavefronts += ways;
        ideal += 1;
        worst = worst.max(ways);
    }
    (wavefronts, ideal, worst)
}

/// Running totals per instruction of a launch.
#[derive(Default)]
pub(crate) struct Tally {
    per_pc: BTreeMap<u32, Counts>,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    write: bool,
    requests: u64,
    wavefronts: u64,
    ideal: u64,
    worst: u32,
}

impl Tally {
    pub(crate) fn record(&mut self, pc: u32, write: bool, offsets: &[Option<u32>; 32], bytes: u32) {
        let (wavefronts, ideal, worst) = warp_access(offsets, bytes);
        let counts = self.per_pc.entry(pc).or_default();
        counts.write = write;
        counts.requests += 1;
        counts.wavefronts += u64::from(wavefronts);
        counts.ideal += u64::from(ideal);
        counts.worst = counts.worst.max(worst);
    }

    /// The totals by `.cu` line (instructions of one line, and one direction, added up), in
    /// line order; `src` names an instruction's line.
    pub(crate) fn by_line(&self, src: impl Fn(u32) -> SourceLoc) -> Vec<BankConflicts> {
        let mut lines: Vec<BankConflicts> = Vec::new();
        for (&pc, counts) in &self.per_pc {
            let at = src(pc);
            let same = lines.iter_mut().find(|seen| {
                seen.write == counts.write
                    && seen.at.file == at.file
                    && seen.at.line == at.line
                    && seen.at.inlined_at == at.inlined_at
            });
            match same {
                Some(seen) => {
                    seen.requests += counts.requests;
                    seen.wavefronts += counts.wavefronts;
                    seen.ideal_wavefronts += counts.ideal;
                    seen.worst_ways = seen.worst_ways.max(counts.worst);
                }
                None => lines.push(BankConflicts {
                    at,
                    write: counts.write,
                    requests: counts.requests,
                    wavefronts: counts.wavefronts,
                    ideal_wavefronts: counts.ideal,
                    worst_ways: counts.worst,
                }),
            }
        }
        lines.sort_by_key(|l| (l.at.line, l.write));
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(offset: impl Fn(u32) -> u32) -> [Option<u32>; 32] {
        std::array::from_fn(|lane| Some(offset(lane as u32)))
    }

    #[test]
    fn consecutive_words_take_one_pass() {
        assert_eq!(warp_access(&lanes(|l| 4 * l), 4), (1, 1, 1));
    }

    #[test]
    fn one_word_read_by_every_lane_is_a_broadcast() {
        assert_eq!(warp_access(&lanes(|_| 64), 4), (1, 1, 1));
    }

    #[test]
    fn a_column_of_a_32_wide_tile_is_32_way() {
        // tile[lane][0] of float tile[32][32]: every word in bank 0
        assert_eq!(warp_access(&lanes(|l| 128 * l), 4), (32, 1, 32));
        // padded to 33 columns: 32 banks
        assert_eq!(warp_access(&lanes(|l| 132 * l), 4), (1, 1, 1));
    }

    #[test]
    fn a_stride_of_two_words_is_two_way() {
        assert_eq!(warp_access(&lanes(|l| 8 * l), 4), (2, 1, 2));
    }

    #[test]
    fn wide_accesses_go_in_phases() {
        // float4 per lane, consecutive: 4 phases of 8 lanes, 32 words each, no conflict
        assert_eq!(warp_access(&lanes(|l| 16 * l), 16), (4, 4, 1));
        // float2 per lane, consecutive: 2 phases of 16 lanes
        assert_eq!(warp_access(&lanes(|l| 8 * l), 8), (2, 2, 1));
        // float2 per lane, 256 bytes apart: each phase puts 16 lanes' words in 2 banks
        assert_eq!(warp_access(&lanes(|l| 256 * l), 8), (32, 2, 16));
    }

    #[test]
    fn inactive_lanes_and_phases_cost_nothing() {
        let mut offsets = [None; 32];
        offsets[3] = Some(0);
        offsets[7] = Some(128);
        assert_eq!(warp_access(&offsets, 4), (2, 1, 2));
        assert_eq!(warp_access(&[None; 32], 4), (0, 0, 0));
        // a float4 access by lanes 0..8 only: one phase
        let quarter: [Option<u32>; 32] = std::array::from_fn(|l| (l < 8).then(|| 16 * l as u32));
        assert_eq!(warp_access(&quarter, 16), (1, 1, 1));
    }

    #[test]
    fn bytes_of_one_word_share_it() {
        // 32 lanes reading consecutive bytes touch 8 words in 8 banks
        assert_eq!(warp_access(&lanes(|l| l), 1), (1, 1, 1));
        // bytes 128 apart: one bank, 32 words
        assert_eq!(warp_access(&lanes(|l| 128 * l), 1), (32, 1, 32));
    }
}
