//! Sparse vector clocks, which `sync.rs` joins at fences, atomics, barriers and warp syncs.

/// Consecutive keys that hold one value. Threads of a block run the same instructions, so their
/// epochs are alike, and a clock that every thread of a block released into (a
/// `cuda::barrier`'s phase, which each of 1,024 threads arrives at) is one run instead of 1,024
/// entries that every waiting thread would copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Run {
    start: u64,
    /// One past the last key.
    end: u64,
    value: u32,
}

/// A sparse vector clock: the keys it holds, sorted and disjoint, as runs of one value each,
/// adjacent runs of the same value merged (so two clocks are equal when their runs are).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Vc(Vec<Run>);

impl Vc {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Forgets every key, keeping the room.
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// The run holding `k`, or where a run for it would go.
    fn find(&self, k: u64) -> Result<usize, usize> {
        let i = self.0.partition_point(|r| r.end <= k);
        match self.0.get(i) {
            Some(r) if r.start <= k => Ok(i),
            _ => Err(i),
        }
    }

    pub(super) fn get(&self, k: u64) -> u32 {
        match self.find(k) {
            Ok(i) => self.0[i].value,
            Err(_) => 0,
        }
    }

    pub(super) fn set_max(&mut self, k: u64, v: u32) {
        let single = Run {
            start: k,
            end: k + 1,
            value: v,
        };
        match self.find(k) {
            Ok(i) => {
                let r = self.0[i];
                if r.value >= v {
                    return;
                }
                let mut pieces = Vec::with_capacity(3);
                if r.start < k {
                    pieces.push(Run { end: k, ..r });
                }
                pieces.push(single);
                if k + 1 < r.end {
                    pieces.push(Run { start: k + 1, ..r });
                }
                let at = i + pieces.iter().position(|p| p.start == k).unwrap_or(0);
                self.0.splice(i..=i, pieces);
                self.merge_around(at);
            }
            Err(i) => {
                self.0.insert(i, single);
                self.merge_around(i);
            }
        }
    }

    /// Merges run `i` with its neighbours where they touch it and hold its value.
    fn merge_around(&mut self, mut i: usize) {
        if i > 0 {
            let (before, this) = (self.0[i - 1], self.0[i]);
            if before.end == this.start && before.value == this.value {
                self.0[i - 1].end = this.end;
                self.0.remove(i);
                i -= 1;
            }
        }
        if let Some(&after) = self.0.get(i + 1) {
            let this = self.0[i];
            if this.end == after.start && this.value == after.value {
                self.0[i].end = after.end;
                self.0.remove(i + 1);
            }
        }
    }

    pub(super) fn join(&mut self, o: &Vc) {
        if o.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0.clone_from(&o.0);
            return;
        }
        if self.covers(o) {
            // A thread that polls a flag joins the flag's clock again on every poll: when it
            // knows all of it already, the join needs no new vector.
            return;
        }
        let (a, b) = (&self.0, &o.0);
        let mut out: Vec<Run> = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        let mut at = a[0].start.min(b[0].start);
        loop {
            while i < a.len() && a[i].end <= at {
                i += 1;
            }
            while j < b.len() && b[j].end <= at {
                j += 1;
            }
            let (ra, rb) = (a.get(i), b.get(j));
            if ra.is_none() && rb.is_none() {
                break;
            }
            let (ha, hb) = (ra.filter(|r| r.start <= at), rb.filter(|r| r.start <= at));
            if ha.is_none() && hb.is_none() {
                at = ra
                    .map(|r| r.start)
                    .into_iter()
                    .chain(rb.map(|r| r.start))
                    .min()
                    .unwrap_or(at);
                continue;
            }
            // This piece ends where a run holding `at` ends or where the next one begins.
            let edge = |r: Option<&Run>| match r {
                Some(r) if r.start <= at => r.end,
                Some(r) => r.start,
                None => u64::MAX,
            };
            let end = edge(ra).min(edge(rb));
            let value = ha.map_or(0, |r| r.value).max(hb.map_or(0, |r| r.value));
            match out.last_mut() {
                Some(last) if last.end == at && last.value == value => last.end = end,
                _ => out.push(Run {
                    start: at,
                    end,
                    value,
                }),
            }
            at = end;
        }
        self.0 = out;
    }

    /// Whether every key of `o` is here at a value at least `o`'s.
    fn covers(&self, o: &Vc) -> bool {
        let mut i = 0;
        for r in &o.0 {
            let mut at = r.start;
            while at < r.end {
                while i < self.0.len() && self.0[i].end <= at {
                    i += 1;
                }
                match self.0.get(i) {
                    Some(mine) if mine.start <= at && mine.value >= r.value => at = mine.end,
                    _ => return false,
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Vc;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    type Model = BTreeMap<u64, u32>;

    fn clock_of(entries: &[(u64, u32)]) -> (Vc, Model) {
        let mut vc = Vc::default();
        let mut model = Model::new();
        for &(k, v) in entries {
            vc.set_max(k, v);
            let e = model.entry(k).or_insert(v);
            *e = (*e).max(v);
        }
        (vc, model)
    }

    /// The clock as the map it stands for, and a check that its runs are sorted, disjoint and
    /// merged wherever they could be.
    fn as_map(vc: &Vc) -> Model {
        for pair in vc.0.windows(2) {
            assert!(pair[0].end <= pair[1].start, "{vc:?}");
            assert!(
                pair[0].end < pair[1].start || pair[0].value != pair[1].value,
                "unmerged: {vc:?}"
            );
        }
        vc.0.iter()
            .flat_map(|r| (r.start..r.end).map(move |k| (k, r.value)))
            .collect()
    }

    /// Keys close together (so runs form and split) with few values (so they merge).
    fn entries() -> impl Strategy<Value = Vec<(u64, u32)>> {
        proptest::collection::vec((0u64..40, 0u32..4), 0..30)
    }

    proptest! {
        #[test]
        fn runs_hold_what_a_map_of_keys_would(a in entries(), b in entries(), probe in 0u64..45) {
            let (mut x, mut mx) = clock_of(&a);
            let (y, my) = clock_of(&b);
            prop_assert_eq!(as_map(&x), mx.clone());
            prop_assert_eq!(x.get(probe), mx.get(&probe).copied().unwrap_or(0));
            x.join(&y);
            for (k, v) in my {
                let e = mx.entry(k).or_insert(v);
                *e = (*e).max(v);
            }
            prop_assert_eq!(as_map(&x), mx.clone());
            // Equal maps, equal runs: the canonical form lets `==` compare clocks.
            let (rebuilt, _) = clock_of(&mx.iter().map(|(&k, &v)| (k, v)).collect::<Vec<_>>());
            prop_assert_eq!(rebuilt, x);
        }
    }

    #[test]
    fn a_whole_block_at_one_epoch_is_one_run() {
        let mut released = Vc::default();
        for tid in 1024..2048 {
            released.set_max(tid, 7);
        }
        assert_eq!(released.0.len(), 1);
        let mut waiter = Vc::default();
        waiter.set_max(5000, 1);
        waiter.join(&released);
        assert_eq!(waiter.0.len(), 2);
        assert_eq!(waiter.get(1500), 7);
        assert_eq!(waiter.get(2048), 0);
    }
}
