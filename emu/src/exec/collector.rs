//! Findings as a launch collects them: one per site, with how many times it happened.

use std::collections::HashMap;

use crate::report::{Finding, FindingKind};

#[derive(Default)]
pub(crate) struct Collector {
    pub(crate) keys: HashMap<(FindingKind, u32, u32, u64), usize>,
    pub(crate) list: Vec<Finding>,
    /// Where the launch is, for the order of findings made on two threads (see `race/pipe.rs`):
    /// twice the number of accesses sent to a piped race detector so far, or, for its findings,
    /// twice the number of the access that found it, plus one.
    pub(crate) position: u64,
    /// Per finding in `list`: the `position` it was made at.
    pub(crate) made_at: Vec<u64>,
}

impl Collector {
    /// Counts a repeat, or adds a new finding and returns its index.
    pub(crate) fn add(
        &mut self,
        key: (FindingKind, u32, u32, u64),
        make: impl FnOnce() -> Finding,
    ) -> Option<usize> {
        if let Some(&i) = self.keys.get(&key) {
            self.list[i].count += 1;
            None
        } else {
            self.keys.insert(key, self.list.len());
            self.list.push(make());
            self.made_at.push(self.position);
            Some(self.list.len() - 1)
        }
    }

    /// Adds what another collector found after everything this one has, as if it had been
    /// found here: a finding under a key this one has adds its count, a new one keeps its order
    /// and its position, moved by `later`.
    pub(crate) fn absorb(&mut self, other: Collector, later: u64) {
        let mut keys: Vec<_> = other.keys.into_iter().map(|(key, i)| (i, key)).collect();
        keys.sort_unstable_by_key(|&(i, _)| i);
        let found = other.list.into_iter().zip(other.made_at);
        for ((_, key), (finding, made_at)) in keys.into_iter().zip(found) {
            if let Some(&i) = self.keys.get(&key) {
                self.list[i].count += finding.count;
            } else {
                self.keys.insert(key, self.list.len());
                self.list.push(finding);
                self.made_at.push(made_at + later);
            }
        }
    }

    /// The findings of two collectors with no key in common, in the order they were made.
    pub(crate) fn merge(self, other: Collector) -> Vec<Finding> {
        let mut made: Vec<(u64, Finding)> = self.made_at.into_iter().zip(self.list).collect();
        made.extend(other.made_at.into_iter().zip(other.list));
        // Stable: findings made at one position keep the order they were added in.
        made.sort_by_key(|&(at, _)| at);
        made.into_iter().map(|(_, finding)| finding).collect()
    }
}
