//! Whether a planted bug happens on an input, decided without the emulator: a model of each
//! code's memory accesses, thread by thread, on the graph and the launch the runner uses.
//!
//! The model walks the same loops as the CUDA (the same mapping of vertices and edges to
//! threads, the same conditions on read-only data) and records every access with its thread,
//! kind and barrier phase. A bug happens when the model shows:
//! - boundsBug: an access outside its array;
//! - race, atomicBug, syncBug: two accesses to one element by different threads, at least one
//!   a write, not both strong (atomic or volatile), and no barrier between them (a barrier orders
//!   two threads only when both are in its block, or its warp for `__syncwarp()`).
//!
//! Conditions that depend on values other threads change (`data1[v] < data2[u]` against a label
//! that starts at the type's maximum) are resolved by the first update: the first thread to reach
//! such a word always writes it, so two threads reaching one word always conflict. The model
//! therefore records the write for every thread that reaches the word, which gives the same
//! verdict.

use std::collections::HashMap;

use crate::code::{Bug, Code, Mapping, Pattern, THREADS_PER_BLOCK, WARP_SIZE};
use crate::graph::Graph;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Array {
    Nindex,
    Nlist,
    Data1,
    Data2,
    WorklistSize,
    /// Shared memory, of one block.
    Shared,
    /// A block's shared flag (`last` of the threadfence reduction).
    SharedFlag,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    VolatileRead,
    Write,
    Atomic,
}

impl Kind {
    fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::Atomic)
    }

    fn strong(self) -> bool {
        matches!(self, Kind::VolatileRead | Kind::Atomic)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub array: Array,
    pub index: i64,
    pub kind: Kind,
    /// The thread's index in the whole grid.
    pub thread: u32,
    /// Barriers the thread has passed before this access.
    pub phase: u32,
    pub handoff: Handoff,
    /// The thread's loop iteration at this access: lanes of a warp run a loop's body together,
    /// lower lanes first, so (step, lane) is the order of one warp's atomics.
    pub step: u32,
}

/// A write published by a fence before a ticket, and a read made after taking the last ticket
/// (and, for other threads of the block, a barrier after it): the pair is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handoff {
    None,
    Published,
    Taken,
}

/// What the model found for one (code, graph).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The first access outside its array, described.
    pub out_of_bounds: Option<String>,
    /// The first conflicting pair, described.
    pub conflict: Option<String>,
}

impl Verdict {
    /// Whether the code's planted bug shows on this input (for a bug-free code: whether the model
    /// sees any bug at all, which the tests require never to be so).
    pub fn happens(&self, bug: Bug) -> bool {
        match bug {
            Bug::BoundsBug => self.out_of_bounds.is_some(),
            Bug::Race | Bug::AtomicBug | Bug::SyncBug => self.conflict.is_some(),
            Bug::None => self.out_of_bounds.is_some() || self.conflict.is_some(),
        }
    }
}

struct Model<'a> {
    code: Code,
    graph: &'a Graph,
    accesses: Vec<Access>,
    out_of_bounds: Option<String>,
    worklist_slots: i64,
    /// The loop iteration the thread being modelled is in (see [`Access::step`]).
    step: u32,
}

/// Runs the model of `code` on `graph` and judges it.
pub fn judge(code: Code, graph: &Graph) -> Verdict {
    let mut model = Model {
        code,
        graph,
        accesses: Vec::new(),
        out_of_bounds: None,
        worklist_slots: 0,
        step: 0,
    };
    let threads = code.blocks(graph.nodes()) * THREADS_PER_BLOCK;
    for thread in 0..threads {
        model.thread(thread);
    }
    Verdict {
        conflict: model.first_conflict(),
        out_of_bounds: model.out_of_bounds,
    }
}

/// A thread stops where the model reads outside an array: what it would read is unknown.
struct OutOfBounds;

impl Model<'_> {
    fn len(&self, array: Array) -> i64 {
        let nodes = self.graph.nodes();
        (match array {
            Array::Nindex => nodes + 1,
            Array::Nlist => self.graph.edges(),
            Array::Data1 => nodes,
            Array::Data2 => self.code.data2_len(nodes),
            Array::WorklistSize | Array::SharedFlag => 1,
            Array::Shared if self.code.pattern == Pattern::SharedBins => WARP_SIZE as usize,
            Array::Shared => THREADS_PER_BLOCK as usize,
        }) as i64
    }

    fn access(
        &mut self,
        thread: u32,
        phase: u32,
        array: Array,
        index: i64,
        kind: Kind,
    ) -> Result<(), OutOfBounds> {
        let len = self.len(array);
        if index < 0 || index >= len {
            self.out_of_bounds
                .get_or_insert_with(|| format!("thread {thread}: {array:?}[{index}] of {len}"));
            return Err(OutOfBounds);
        }
        self.accesses.push(Access {
            array,
            index,
            kind,
            thread,
            phase,
            handoff: Handoff::None,
            step: self.step,
        });
        Ok(())
    }

    fn handed_off(
        &mut self,
        thread: u32,
        phase: u32,
        access: (Array, i64, Kind),
        handoff: Handoff,
    ) -> Result<(), OutOfBounds> {
        let (array, index, kind) = access;
        self.access(thread, phase, array, index, kind)?;
        if let Some(last) = self.accesses.last_mut() {
            last.handoff = handoff;
        }
        Ok(())
    }

    /// The vertices thread `thread` works on, in order.
    fn vertices(&self, thread: u32) -> Vec<i64> {
        let blocks = self.code.blocks(self.graph.nodes());
        let (start, stride) = match self.code.mapping {
            Mapping::Thread => (thread, blocks * THREADS_PER_BLOCK),
            Mapping::Warp => (thread / WARP_SIZE, blocks * (THREADS_PER_BLOCK / WARP_SIZE)),
            Mapping::Block => (thread / THREADS_PER_BLOCK, blocks),
        };
        let nodes = self.graph.nodes() as i64;
        let inside = |v: i64| {
            if self.code.bug == Bug::BoundsBug {
                v <= nodes
            } else {
                v < nodes
            }
        };
        let mut vertices = Vec::new();
        let mut v = i64::from(start);
        while inside(v) {
            vertices.push(v);
            if !self.code.persistent {
                break;
            }
            v += i64::from(stride);
        }
        vertices
    }

    /// The edges of `beg..end` that thread `thread` walks.
    fn edges(&self, thread: u32, beg: i64, end: i64) -> impl Iterator<Item = i64> + use<> {
        let (first, step) = match self.code.mapping {
            Mapping::Thread => (0, 1),
            Mapping::Warp => (thread % WARP_SIZE, WARP_SIZE),
            Mapping::Block => (thread % THREADS_PER_BLOCK, THREADS_PER_BLOCK),
        };
        (beg + i64::from(first)..end).step_by(step as usize)
    }

    fn is_one_thread(&self, thread: u32) -> bool {
        match self.code.mapping {
            Mapping::Thread => true,
            Mapping::Warp => thread.is_multiple_of(WARP_SIZE),
            Mapping::Block => thread.is_multiple_of(THREADS_PER_BLOCK),
        }
    }

    fn thread(&mut self, thread: u32) {
        self.step = 0;
        // An out-of-bounds access ends the thread's model; the verdict keeps it.
        let _ = match self.code.pattern {
            Pattern::BlockSum => self.block_sum(thread),
            Pattern::WarpSum => self.warp_sum(thread),
            Pattern::SharedBins => self.shared_bins(thread),
            Pattern::LastBlock => self.last_block(thread),
            _ => self.vertex_loop(thread),
        };
    }

    /// Reads `nindex[v]` and `nindex[v + 1]`, giving the vertex's edge range.
    fn edge_range(&mut self, thread: u32, phase: u32, v: i64) -> Result<(i64, i64), OutOfBounds> {
        self.access(thread, phase, Array::Nindex, v, Kind::Read)?;
        self.access(thread, phase, Array::Nindex, v + 1, Kind::Read)?;
        let nindex = &self.graph.nindex;
        Ok((
            i64::from(nindex[v as usize]),
            i64::from(nindex[v as usize + 1]),
        ))
    }

    fn head(&mut self, thread: u32, phase: u32, edge: i64) -> Result<i64, OutOfBounds> {
        self.access(thread, phase, Array::Nlist, edge, Kind::Read)?;
        Ok(i64::from(self.graph.nlist[edge as usize]))
    }

    fn vertex_loop(&mut self, thread: u32) -> Result<(), OutOfBounds> {
        use Kind::*;
        let bug = self.code.bug;
        for v in self.vertices(thread) {
            let (beg, end) = self.edge_range(thread, 0, v)?;
            if self.code.pattern == Pattern::Worklist {
                if self.is_one_thread(thread) && end - beg >= 2 {
                    if bug == Bug::Race {
                        self.access(thread, 0, Array::WorklistSize, 0, Read)?;
                        self.access(thread, 0, Array::WorklistSize, 0, Write)?;
                    } else {
                        self.access(thread, 0, Array::WorklistSize, 0, Atomic)?;
                    }
                    self.access(thread, 0, Array::Data1, v, Read)?;
                    let slot = self.worklist_slots;
                    self.worklist_slots += 1;
                    self.access(thread, 0, Array::Data2, slot, Write)?;
                }
                continue;
            }
            for edge in self.edges(thread, beg, end) {
                let u = self.head(thread, 0, edge)?;
                match self.code.pattern {
                    Pattern::PushAdd => {
                        self.access(thread, 0, Array::Data1, v, Read)?;
                        let update: &[Kind] = match bug {
                            Bug::Race => &[Read, Write],
                            Bug::AtomicBug => &[Read, Atomic],
                            _ => &[Atomic],
                        };
                        for &kind in update {
                            self.access(thread, 0, Array::Data2, u, kind)?;
                        }
                    }
                    Pattern::PullMax => {
                        self.access(thread, 0, Array::Data1, u, Read)?;
                        let plain = self.code.mapping == Mapping::Thread || bug == Bug::Race;
                        let update: &[Kind] = if plain { &[Read, Write] } else { &[Atomic] };
                        for &kind in update {
                            self.access(thread, 0, Array::Data2, v, kind)?;
                        }
                    }
                    Pattern::CondMin => {
                        self.access(thread, 0, Array::Data1, v, Read)?;
                        self.access(thread, 0, Array::Data1, u, Read)?;
                        if Graph::value(v as usize) < Graph::value(u as usize) {
                            let update: &[Kind] = match bug {
                                Bug::Race => &[Read, Write],
                                Bug::AtomicBug => &[Read, Atomic],
                                _ => &[VolatileRead, Atomic],
                            };
                            for &kind in update {
                                self.access(thread, 0, Array::Data2, u, kind)?;
                            }
                        }
                    }
                    _ => unreachable!("shared-memory patterns have their own models"),
                }
            }
        }
        Ok(())
    }

    /// The block's tree reduction in shared memory; returns the phase after it.
    fn reduce_block(&mut self, thread: u32, sync_in_tree: bool) -> Result<u32, OutOfBounds> {
        use Kind::*;
        for v in self.vertices(thread) {
            self.edge_range(thread, 0, v)?;
            self.access(thread, 0, Array::Data1, v, Read)?;
        }
        let tid = i64::from(thread % THREADS_PER_BLOCK);
        self.access(thread, 0, Array::Shared, tid, Write)?;
        let mut phase = 1;
        let mut stride = i64::from(THREADS_PER_BLOCK / 2);
        while stride > 0 {
            if tid < stride {
                self.access(thread, phase, Array::Shared, tid, Read)?;
                self.access(thread, phase, Array::Shared, tid + stride, Read)?;
                self.access(thread, phase, Array::Shared, tid, Write)?;
            }
            phase += u32::from(sync_in_tree);
            stride /= 2;
        }
        Ok(phase)
    }

    fn block_sum(&mut self, thread: u32) -> Result<(), OutOfBounds> {
        use Kind::*;
        let phase = self.reduce_block(thread, self.code.bug != Bug::SyncBug)?;
        if thread.is_multiple_of(THREADS_PER_BLOCK) {
            self.access(thread, phase, Array::Shared, 0, Read)?;
            if self.code.bug == Bug::Race {
                self.access(thread, phase, Array::Data2, 0, Read)?;
                self.access(thread, phase, Array::Data2, 0, Write)?;
            } else {
                self.access(thread, phase, Array::Data2, 0, Atomic)?;
            }
        }
        Ok(())
    }

    /// The threadfence reduction: the last block to take a ticket (any block may be last; the
    /// verdict is the same for each, so the model takes the highest) reads every block's sum.
    fn last_block(&mut self, thread: u32) -> Result<(), OutOfBounds> {
        use Kind::*;
        let mut phase = self.reduce_block(thread, true)?;
        let tid = thread % THREADS_PER_BLOCK;
        let block = thread / THREADS_PER_BLOCK;
        let blocks = self.code.blocks(self.graph.nodes());
        let fenced = self.code.bug != Bug::Race;
        let synced = self.code.bug != Bug::SyncBug;
        if tid == 0 {
            self.access(thread, phase, Array::Shared, 0, Read)?;
            let published = if fenced {
                Handoff::Published
            } else {
                Handoff::None
            };
            let sum = (Array::Data2, 1 + i64::from(block), Write);
            self.handed_off(thread, phase, sum, published)?;
            self.access(thread, phase, Array::SharedFlag, 0, Write)?;
        }
        phase += u32::from(synced);
        self.access(thread, phase, Array::SharedFlag, 0, Read)?;
        if block == blocks - 1 && tid < blocks {
            // Thread 0 took the ticket itself; the others learn of it through the barrier.
            let taken = if tid == 0 || synced {
                Handoff::Taken
            } else {
                Handoff::None
            };
            let sum = (Array::Data2, 1 + i64::from(tid), Read);
            self.handed_off(thread, phase, sum, taken)?;
            self.access(thread, phase, Array::Data2, 0, Atomic)?;
        }
        Ok(())
    }

    fn warp_sum(&mut self, thread: u32) -> Result<(), OutOfBounds> {
        use Kind::*;
        let tid = i64::from(thread % THREADS_PER_BLOCK);
        let lane = thread % WARP_SIZE;
        let dropped =
            |second: bool| self.code.bug == Bug::SyncBug && self.code.persistent == second;
        let (keeps_first, keeps_second) = (!dropped(false), !dropped(true));
        let mut phase = 0;
        for v in self.vertices(thread) {
            let (beg, end) = self.edge_range(thread, phase, v)?;
            for edge in self.edges(thread, beg, end) {
                let u = self.head(thread, phase, edge)?;
                self.access(thread, phase, Array::Data1, u, Read)?;
            }
            self.access(thread, phase, Array::Shared, tid, Write)?;
            phase += u32::from(keeps_first);
            if lane == 0 {
                for k in 0..i64::from(WARP_SIZE) {
                    self.access(thread, phase, Array::Shared, tid + k, Read)?;
                }
                self.access(thread, phase, Array::Data2, v, Write)?;
            }
            phase += u32::from(keeps_second);
        }
        Ok(())
    }

    fn shared_bins(&mut self, thread: u32) -> Result<(), OutOfBounds> {
        use Kind::*;
        let tid = i64::from(thread % THREADS_PER_BLOCK);
        let bins = i64::from(WARP_SIZE);
        for bin in (tid..bins).step_by(THREADS_PER_BLOCK as usize) {
            self.access(thread, 0, Array::Shared, bin, Write)?;
        }
        for (step, v) in self.vertices(thread).into_iter().enumerate() {
            self.step = step as u32 + 1;
            let (beg, end) = self.edge_range(thread, 1, v)?;
            self.access(thread, 1, Array::Data1, v, Read)?;
            let update: &[Kind] = if self.code.bug == Bug::Race {
                &[Read, Write]
            } else {
                &[Atomic]
            };
            for &kind in update {
                self.access(thread, 1, Array::Shared, (end - beg) % bins, kind)?;
            }
        }
        self.step = u32::MAX;
        let phase = if self.code.bug == Bug::SyncBug { 1 } else { 2 };
        for bin in (tid..bins).step_by(THREADS_PER_BLOCK as usize) {
            self.access(thread, phase, Array::Shared, bin, Read)?;
            self.access(thread, phase, Array::Data2, bin, Atomic)?;
        }
        Ok(())
    }

    /// Threads that one barrier of the code orders together: a block for `__syncthreads()`, a
    /// warp for `__syncwarp()`; codes without barriers have none.
    fn barrier_group(&self, thread: u32) -> Option<u32> {
        match self.code.pattern {
            Pattern::BlockSum | Pattern::SharedBins | Pattern::LastBlock => {
                Some(thread / THREADS_PER_BLOCK)
            }
            Pattern::WarpSum => Some(thread / WARP_SIZE),
            _ => None,
        }
    }

    fn first_conflict(&self) -> Option<String> {
        let mut by_element: HashMap<(Array, u32, i64), Vec<&Access>> = HashMap::new();
        for access in &self.accesses {
            let block = if matches!(access.array, Array::Shared | Array::SharedFlag) {
                access.thread / THREADS_PER_BLOCK
            } else {
                0
            };
            by_element
                .entry((access.array, block, access.index))
                .or_default()
                .push(access);
        }
        let mut conflicts: Vec<String> = Vec::new();
        for ((array, block, index), accesses) in &by_element {
            if !accesses.iter().any(|access| access.kind.writes()) {
                continue;
            }
            'pairs: for (i, a) in accesses.iter().enumerate() {
                for b in &accesses[i + 1..] {
                    if a.thread == b.thread || !(a.kind.writes() || b.kind.writes()) {
                        continue;
                    }
                    if a.kind.strong() && b.kind.strong() {
                        continue;
                    }
                    let handoff = [a.handoff, b.handoff];
                    if handoff.contains(&Handoff::Published) && handoff.contains(&Handoff::Taken) {
                        continue;
                    }
                    if observed_in_lockstep(a, b, accesses) || observed_in_lockstep(b, a, accesses)
                    {
                        continue;
                    }
                    let group = self.barrier_group(a.thread);
                    if group.is_some()
                        && group == self.barrier_group(b.thread)
                        && a.phase != b.phase
                    {
                        continue;
                    }
                    conflicts.push(format!(
                        "{array:?}[{index}] (block {block}): {:?} by thread {} and {:?} by thread {}",
                        a.kind, a.thread, b.kind, b.thread
                    ));
                    break 'pairs;
                }
            }
        }
        conflicts.sort();
        conflicts.into_iter().next()
    }
}

/// An atomic by one lane and a later plain read by another lane of the same warp, where the
/// reader's own atomic on the element came after the writer's: in every run of a converged warp
/// (the emulator's, and a GPU's) the reader's atomic reads what the writer's wrote, and PTX's
/// causality order (observation order, then program order) puts the write before the read. No
/// run shows a race there, so the model does not count one.
fn observed_in_lockstep(write: &Access, read: &Access, accesses: &[&Access]) -> bool {
    let same_warp = write.thread / WARP_SIZE == read.thread / WARP_SIZE;
    if write.kind != Kind::Atomic || read.kind != Kind::Read || !same_warp {
        return false;
    }
    let order = |access: &Access| (access.step, access.thread % WARP_SIZE);
    accesses.iter().any(|own| {
        own.thread == read.thread
            && own.kind == Kind::Atomic
            && own.step < read.step
            && order(own) > order(write)
    })
}
