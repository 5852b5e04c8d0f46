//! Sparse vector clocks, which `sync.rs` joins at fences, atomics, barriers and warp syncs.

/// A sparse vector clock: sorted (key, value) pairs.
#[derive(Clone, Debug, Default)]
pub(super) struct Vc(pub(super) Vec<(u64, u32)>);

impl Vc {
    pub(super) fn get(&self, k: u64) -> u32 {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }
    pub(super) fn set_max(&mut self, k: u64, v: u32) {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(v),
            Err(i) => self.0.insert(i, (k, v)),
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
        if self.holds_keys_of(o) {
            // A thread that polls a flag joins the flag's clock again on every poll: its keys
            // are all here already, so the join needs no new vector.
            let mut i = 0;
            for &(k, v) in &o.0 {
                while self.0[i].0 < k {
                    i += 1;
                }
                self.0[i].1 = self.0[i].1.max(v);
            }
            return;
        }
        let mut out = Vec::with_capacity(self.0.len() + o.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() || j < o.0.len() {
            match (self.0.get(i), o.0.get(j)) {
                (Some(a), Some(b)) if a.0 == b.0 => {
                    out.push((a.0, a.1.max(b.1)));
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.0 < b.0 => {
                    out.push(*a);
                    i += 1;
                }
                (Some(_), Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (Some(a), None) => {
                    out.push(*a);
                    i += 1;
                }
                (None, Some(b)) => {
                    out.push(*b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.0 = out;
    }

    /// Whether every key of `o` has an entry here.
    fn holds_keys_of(&self, o: &Vc) -> bool {
        if o.0.len() > self.0.len() {
            return false;
        }
        let mut i = 0;
        for &(k, _) in &o.0 {
            while i < self.0.len() && self.0[i].0 < k {
                i += 1;
            }
            if i == self.0.len() || self.0[i].0 != k {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::Vc;
    use std::collections::BTreeMap;

    /// The join of two clocks as maps: every key of either, at the larger value.
    fn joined_as_maps(a: &Vc, b: &Vc) -> Vec<(u64, u32)> {
        let mut m: BTreeMap<u64, u32> = a.0.iter().copied().collect();
        for &(k, v) in &b.0 {
            let e = m.entry(k).or_insert(0);
            *e = (*e).max(v);
        }
        m.into_iter().collect()
    }

    #[test]
    fn a_join_keeps_every_key_at_its_larger_value_in_place_or_not() {
        let clocks = [
            Vc(vec![]),
            Vc(vec![(3, 1)]),
            Vc(vec![(1, 5), (3, 2), (9, 1)]),
            Vc(vec![(1, 4), (9, 7)]),
            Vc(vec![(0, 2), (1, 6), (3, 0), (9, 1), (12, 3)]),
            Vc(vec![(12, 9)]),
        ];
        for a in &clocks {
            for b in &clocks {
                let mut joined = a.clone();
                joined.join(b);
                assert_eq!(joined.0, joined_as_maps(a, b), "{a:?} joined with {b:?}");
            }
        }
    }
}
