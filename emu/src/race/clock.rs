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
}
