//! Happens-before race detection with per-word shadow state (see README, "Race detector").
//!
//! Each 4-byte word keeps its last write and up to two reads since that write. Ordering comes
//! from three sources, checked cheapest first: the same thread; the same block with a barrier in
//! between (per-block barrier epochs) or the same warp with a `bar.warp.sync` in between; and
//! release/acquire through atomics and strong (volatile) accesses, tracked with sparse vector
//! clocks that only threads which actually synchronized ever grow.

use std::collections::HashMap;

use crate::report::Hazard;

pub(crate) const NONE: u32 = u32::MAX;
const BLOCK_KEY: u32 = 0x8000_0000;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Acc {
    pub tid: u32,
    pub epoch: u32,
    pub bar: u32,
    pub wsync: u32,
    pub pc: u32,
    pub strong: bool,
    pub mask: u8,
}

const EMPTY: Acc = Acc {
    tid: NONE,
    epoch: 0,
    bar: 0,
    wsync: 0,
    pc: 0,
    strong: false,
    mask: 0,
};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Cell {
    w: Acc,
    r0: Acc,
    r1: Acc,
}

const EMPTY_CELL: Cell = Cell {
    w: EMPTY,
    r0: EMPTY,
    r1: EMPTY,
};

/// A sparse vector clock: sorted (key, value) pairs. Keys are thread ids, or `BLOCK_KEY | block`
/// for "everything block b did before its n-th barrier".
#[derive(Clone, Debug, Default)]
struct Vc(Vec<(u32, u32)>);

impl Vc {
    fn get(&self, k: u32) -> u32 {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }
    fn set_max(&mut self, k: u32, v: u32) {
        match self.0.binary_search_by_key(&k, |e| e.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(v),
            Err(i) => self.0.insert(i, (k, v)),
        }
    }
    fn join(&mut self, o: &Vc) {
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

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Read,
    Write,
    StrongRead,
    StrongWrite,
    /// Atomic read-modify-write.
    Rmw,
}

impl Kind {
    fn strong(self) -> bool {
        matches!(self, Kind::StrongRead | Kind::StrongWrite | Kind::Rmw)
    }
    fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::StrongWrite | Kind::Rmw)
    }
}

/// When a strong access takes in what was released at its address.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Acquire {
    /// `ld.acquire`, and atomics (leniently: see README).
    Now,
    /// `.volatile`/`.relaxed` reads: only with a fence after them (PTX's fence-acquire pattern).
    AtNextFence,
    /// Writes.
    Never,
}

/// A detected conflict: the earlier access and the hazard.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit {
    pub prev: Acc,
    pub hazard: Hazard,
}

/// Which shadow array a word belongs to: block b's shared memory is region b, global
/// allocation i (in address order, fixed during a launch) is region nblocks + i.
pub(crate) type Region = usize;

pub(crate) struct Race {
    tpb: u32,
    shadows: Vec<Vec<Cell>>,
    /// Emptied shadows of finished blocks' shared memory, reused for the next ones.
    spare_shadows: Vec<Vec<Cell>>,
    epoch: Vec<u32>,
    pending: Vec<u32>,
    tvc: Vec<Vc>,
    /// What each thread's relaxed reads saw released, acquired at its next fence.
    seen: Vec<Vc>,
    bvc: Vec<Vc>,
    pub(crate) bar_epoch: Vec<u32>,
    pub(crate) wsync: Vec<u32>,
    sync: HashMap<(Region, u64), Vc>,
    any_release: bool,
}

impl Race {
    pub(crate) fn new(nthreads: usize, tpb: u32, nblocks: usize, nwarps: usize) -> Race {
        Race {
            tpb,
            shadows: Vec::new(),
            spare_shadows: Vec::new(),
            epoch: vec![1; nthreads],
            pending: vec![0; nthreads],
            tvc: vec![Vc::default(); nthreads],
            seen: vec![Vc::default(); nthreads],
            bvc: vec![Vc::default(); nblocks],
            bar_epoch: vec![0; nblocks],
            wsync: vec![0; nwarps],
            sync: HashMap::new(),
            any_release: false,
        }
    }

    fn knows(&self, t: u32, b: u32, key: u32) -> u32 {
        self.tvc[t as usize]
            .get(key)
            .max(self.bvc[b as usize].get(key))
    }

    fn ordered(&self, p: &Acc, t: u32, b: u32, warp: u32, wpb: u32) -> bool {
        if p.tid == t {
            return true;
        }
        let pb = p.tid / self.tpb;
        if pb == b {
            if p.bar < self.bar_epoch[b as usize] {
                return true;
            }
            let pw = pb * wpb + (p.tid % self.tpb) / 32;
            if pw == warp && p.wsync < self.wsync[warp as usize] {
                return true;
            }
        }
        if !self.any_release {
            return false;
        }
        if self.knows(t, b, p.tid) >= p.epoch {
            return true;
        }
        pb != b && self.knows(t, b, BLOCK_KEY | pb) > p.bar
    }

    /// Records one access to a 4-byte word and returns the first unordered conflict, if any.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn access(
        &mut self,
        region: Region,
        region_words: usize,
        word: usize,
        mask: u8,
        t: u32,
        warp: u32,
        wpb: u32,
        kind: Kind,
        pc: u32,
    ) -> Option<Hit> {
        let b = t / self.tpb;
        let cur = Acc {
            tid: t,
            epoch: self.epoch[t as usize],
            bar: self.bar_epoch[b as usize],
            wsync: self.wsync[warp as usize],
            pc,
            strong: kind.strong(),
            mask,
        };
        if self.shadows.len() <= region {
            self.shadows.resize_with(region + 1, Vec::new);
        }
        let mut cells = std::mem::take(&mut self.shadows[region]);
        if cells.is_empty()
            && let Some(spare) = self.spare_shadows.pop()
        {
            cells = spare;
        }
        if cells.len() < region_words {
            cells.resize(region_words, EMPTY_CELL);
        }
        let mut hit = None;
        if let Some(cell) = cells.get_mut(word) {
            let conflicts = |p: &Acc, me: &Self| {
                p.tid != NONE
                    && p.mask & mask != 0
                    && !(p.strong && cur.strong)
                    && !me.ordered(p, t, b, warp, wpb)
            };
            if kind.writes() {
                if conflicts(&cell.w, self) {
                    hit = Some(Hit {
                        prev: cell.w,
                        hazard: Hazard::WriteAfterWrite,
                    });
                } else if conflicts(&cell.r0, self) {
                    hit = Some(Hit {
                        prev: cell.r0,
                        hazard: Hazard::WriteAfterRead,
                    });
                } else if conflicts(&cell.r1, self) {
                    hit = Some(Hit {
                        prev: cell.r1,
                        hazard: Hazard::WriteAfterRead,
                    });
                }
                cell.w = cur;
                cell.r0 = EMPTY;
                cell.r1 = EMPTY;
                if kind == Kind::Rmw {
                    // The read half of the RMW: later plain writes must be ordered after it too.
                    cell.r0 = cur;
                }
            } else {
                if conflicts(&cell.w, self) {
                    hit = Some(Hit {
                        prev: cell.w,
                        hazard: Hazard::ReadAfterWrite,
                    });
                }
                if cell.r0.tid == NONE
                    || cell.r0.tid == t
                    || self.ordered(&cell.r0, t, b, warp, wpb)
                {
                    cell.r0 = cur;
                } else {
                    if cell.r1.tid == NONE
                        || cell.r1.tid == t
                        || self.ordered(&cell.r1, t, b, warp, wpb)
                    {
                        cell.r1 = cell.r0;
                    }
                    cell.r0 = cur;
                }
            }
        }
        self.shadows[region] = cells;
        hit
    }

    /// A fence: accesses before it are released by the thread's next strong write, and what the
    /// thread's strong reads before it saw released is acquired.
    pub(crate) fn fence(&mut self, t: u32) {
        let seen = std::mem::take(&mut self.seen[t as usize]);
        self.tvc[t as usize].join(&seen);
        self.mark_releasable(t);
    }

    /// The thread's accesses so far are released by its next strong write.
    fn mark_releasable(&mut self, t: u32) {
        let e = self.epoch[t as usize];
        self.pending[t as usize] = e;
        self.epoch[t as usize] = e + 1;
    }

    /// Synchronization effect of a strong access (after its race check).
    pub(crate) fn sync_op(
        &mut self,
        region: Region,
        word_addr: u64,
        t: u32,
        kind: Kind,
        acquire: Acquire,
        release_sem: bool,
    ) {
        let key = (region, word_addr);
        if let Some(v) = self.sync.get(&key) {
            match acquire {
                Acquire::Now => self.tvc[t as usize].join(v),
                Acquire::AtNextFence => self.seen[t as usize].join(v),
                Acquire::Never => {}
            }
        }
        if !kind.writes() {
            return;
        }
        if release_sem {
            self.mark_releasable(t);
        }
        let pend = self.pending[t as usize];
        if pend == 0 {
            return;
        }
        let b = t / self.tpb;
        let mut v = self.tvc[t as usize].clone();
        v.join(&self.bvc[b as usize]);
        v.set_max(t, pend);
        v.set_max(BLOCK_KEY | b, self.bar_epoch[b as usize]);
        self.sync.entry(key).or_default().join(&v);
        self.any_release = true;
    }

    /// A barrier of block `b` completed: everything before it is ordered before everything after.
    /// Block `b`'s shared memory ends with it (its region is `b`), and so does its shadow.
    pub(crate) fn block_finished(&mut self, b: u32) {
        if let Some(cells) = self.shadows.get_mut(b as usize)
            && !cells.is_empty()
        {
            let mut cells = std::mem::take(cells);
            cells.clear();
            self.spare_shadows.push(cells);
        }
    }

    pub(crate) fn barrier(&mut self, b: u32, warps: std::ops::Range<u32>) {
        let lo = (b * self.tpb) as usize;
        let hi = lo + self.tpb as usize;
        let mut joined = std::mem::take(&mut self.bvc[b as usize]);
        for t in lo..hi.min(self.tvc.len()) {
            if !self.tvc[t].0.is_empty() {
                let v = std::mem::take(&mut self.tvc[t]);
                joined.join(&v);
            }
        }
        self.bvc[b as usize] = joined;
        self.bar_epoch[b as usize] += 1;
        for w in warps {
            if let Some(x) = self.wsync.get_mut(w as usize) {
                *x += 1;
            }
        }
    }

    pub(crate) fn warp_sync(&mut self, warp: u32) {
        if let Some(x) = self.wsync.get_mut(warp as usize) {
            *x += 1;
        }
    }
}
