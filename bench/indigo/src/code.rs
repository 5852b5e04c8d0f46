//! The codes: one CUDA kernel per (pattern, mapping, persistence, data type, planted bug), written
//! out as a `.cu` file whose first lines say what it is and where its bug is.

use std::fmt;

/// Threads per block of every launch: four warps, so that inter-warp and intra-warp bugs both
/// have room to happen.
pub const THREADS_PER_BLOCK: u32 = 128;
pub const WARP_SIZE: u32 = 32;
/// Blocks of a persistent launch, as a driver sizes it to the device rather than to the graph.
pub const PERSISTENT_BLOCKS: u32 = 2;

/// What a kernel does with the graph: the irregular access patterns of graph codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pattern {
    /// Each vertex adds its value into each neighbour's sum (push-style, atomicAdd).
    PushAdd,
    /// Each vertex takes the largest value among its neighbours (pull-style).
    PullMax,
    /// A vertex lowers a neighbour's label when its own value is smaller (atomicMin after a test).
    CondMin,
    /// Vertices of degree two or more are appended to a worklist (atomicAdd on its size).
    Worklist,
    /// Each block sums its vertices' weighted values in shared memory, then adds them up.
    BlockSum,
    /// Each warp sums a vertex's neighbour values through a per-warp shared array.
    WarpSum,
    /// Each block adds its vertices' values into shared bins by degree (shared-memory atomics),
    /// then adds the bins to the global ones.
    SharedBins,
    /// Each block's thread 0 publishes the block's sum, fences, and takes a ticket; the block
    /// that takes the last ticket adds up every block's sum (the threadfence reduction).
    LastBlock,
}

/// How work is mapped to threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mapping {
    /// One thread per vertex.
    Thread,
    /// One warp per vertex, its lanes striding over the edges.
    Warp,
    /// One block per vertex, its threads striding over the edges.
    Block,
}

/// The planted bug, with the suite's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bug {
    None,
    /// An update that must be atomic is a plain read-modify-write.
    Race,
    /// The atomic stays, but another access to the atomically updated word is plain: a plain
    /// read feeding an atomic exchange or guarding an atomicMin.
    AtomicBug,
    /// The vertex loop runs one past the last vertex (`v <= nodes`).
    BoundsBug,
    /// A barrier (`__syncthreads()` or `__syncwarp()`) that orders shared-memory accesses is gone.
    SyncBug,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataType {
    Int,
    Uint,
    LongLong,
    Ull,
    Float,
    Double,
}

impl DataType {
    pub const ALL: [DataType; 6] = [
        DataType::Int,
        DataType::Uint,
        DataType::LongLong,
        DataType::Ull,
        DataType::Float,
        DataType::Double,
    ];

    pub fn c_name(self) -> &'static str {
        match self {
            DataType::Int => "int",
            DataType::Uint => "unsigned int",
            DataType::LongLong => "long long",
            DataType::Ull => "unsigned long long",
            DataType::Float => "float",
            DataType::Double => "double",
        }
    }

    /// The element type as `racetrack check --arg` writes it.
    pub fn spec(self) -> &'static str {
        match self {
            DataType::Int => "i32",
            DataType::Uint => "u32",
            DataType::LongLong => "i64",
            DataType::Ull => "u64",
            DataType::Float => "f32",
            DataType::Double => "f64",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            DataType::Int => "int",
            DataType::Uint => "uint",
            DataType::LongLong => "ll",
            DataType::Ull => "ull",
            DataType::Float => "float",
            DataType::Double => "double",
        }
    }

    /// The type's largest value, as a fill for labels that only ever go down.
    pub fn max_fill(self) -> &'static str {
        match self {
            DataType::Int => "2147483647",
            DataType::Uint => "4294967295",
            DataType::LongLong => "9223372036854775807",
            DataType::Ull => "18446744073709551615",
            DataType::Float => "3.4028235e38",
            DataType::Double => "1.7976931348623157e308",
        }
    }

    /// The value as little-endian bytes of this type; values are small whole numbers, exact in
    /// every type.
    pub fn bytes(self, value: u32) -> Vec<u8> {
        match self {
            DataType::Int => (value as i32).to_le_bytes().to_vec(),
            DataType::Uint => value.to_le_bytes().to_vec(),
            DataType::LongLong => i64::from(value).to_le_bytes().to_vec(),
            DataType::Ull => u64::from(value).to_le_bytes().to_vec(),
            DataType::Float => (value as f32).to_le_bytes().to_vec(),
            DataType::Double => f64::from(value).to_le_bytes().to_vec(),
        }
    }
}

/// How the second data array starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data2Init {
    Zeros,
    Max,
}

/// One generated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code {
    pub pattern: Pattern,
    pub mapping: Mapping,
    pub persistent: bool,
    pub ty: DataType,
    pub bug: Bug,
}

impl Pattern {
    pub const ALL: [Pattern; 8] = [
        Pattern::PushAdd,
        Pattern::PullMax,
        Pattern::CondMin,
        Pattern::Worklist,
        Pattern::BlockSum,
        Pattern::WarpSum,
        Pattern::SharedBins,
        Pattern::LastBlock,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::PushAdd => "push_add",
            Pattern::PullMax => "pull_max",
            Pattern::CondMin => "cond_min",
            Pattern::Worklist => "worklist",
            Pattern::BlockSum => "block_sum",
            Pattern::WarpSum => "warp_sum",
            Pattern::SharedBins => "shared_bins",
            Pattern::LastBlock => "last_block",
        }
    }

    fn mappings(self) -> &'static [Mapping] {
        match self {
            Pattern::BlockSum | Pattern::SharedBins | Pattern::LastBlock => &[Mapping::Thread],
            Pattern::WarpSum => &[Mapping::Warp],
            _ => &[Mapping::Thread, Mapping::Warp, Mapping::Block],
        }
    }

    /// The types whose CUDA atomics the pattern needs exist.
    fn types(self) -> &'static [DataType] {
        use DataType::*;
        match self {
            Pattern::PushAdd | Pattern::BlockSum | Pattern::SharedBins | Pattern::LastBlock => {
                &[Int, Uint, Ull, Float, Double]
            }
            Pattern::PullMax | Pattern::CondMin => &[Int, Uint, LongLong, Ull],
            Pattern::Worklist | Pattern::WarpSum => &DataType::ALL,
        }
    }

    fn bugs(self, mapping: Mapping, persistent: bool, ty: DataType) -> Vec<Bug> {
        let mut bugs = vec![Bug::None];
        // A one-shot launch of one block per vertex has no block past the last vertex, so no
        // input can make that bounds bug happen: it is not generated.
        if persistent || mapping != Mapping::Block {
            bugs.push(Bug::BoundsBug);
        }
        match self {
            Pattern::PushAdd => {
                bugs.push(Bug::Race);
                // atomicExch has no double overload.
                if ty != DataType::Double {
                    bugs.push(Bug::AtomicBug);
                }
            }
            // One thread owns each vertex's result: only lanes sharing a vertex can race.
            Pattern::PullMax if mapping != Mapping::Thread => bugs.push(Bug::Race),
            Pattern::PullMax => {}
            Pattern::CondMin => bugs.extend([Bug::Race, Bug::AtomicBug]),
            Pattern::Worklist => bugs.push(Bug::Race),
            Pattern::BlockSum | Pattern::SharedBins | Pattern::LastBlock => {
                bugs.extend([Bug::Race, Bug::SyncBug])
            }
            Pattern::WarpSum => bugs.push(Bug::SyncBug),
        }
        bugs.sort();
        bugs
    }

    pub fn data2_init(self) -> Data2Init {
        match self {
            Pattern::CondMin => Data2Init::Max,
            _ => Data2Init::Zeros,
        }
    }

    pub fn has_worklist_size(self) -> bool {
        self == Pattern::Worklist
    }
}

impl Mapping {
    pub fn name(self) -> &'static str {
        match self {
            Mapping::Thread => "thread",
            Mapping::Warp => "warp",
            Mapping::Block => "block",
        }
    }
}

impl Bug {
    pub fn name(self) -> &'static str {
        match self {
            Bug::None => "bug-free",
            Bug::Race => "race",
            Bug::AtomicBug => "atomicBug",
            Bug::BoundsBug => "boundsBug",
            Bug::SyncBug => "syncBug",
        }
    }

    pub const ALL: [Bug; 5] = [
        Bug::Race,
        Bug::AtomicBug,
        Bug::SyncBug,
        Bug::BoundsBug,
        Bug::None,
    ];
}

/// Every code the generator writes, `int` first, then the other types.
pub fn all_codes() -> Vec<Code> {
    let mut codes = Vec::new();
    for ty in DataType::ALL {
        for pattern in Pattern::ALL {
            if !pattern.types().contains(&ty) {
                continue;
            }
            for &mapping in pattern.mappings() {
                for persistent in [false, true] {
                    for bug in pattern.bugs(mapping, persistent, ty) {
                        codes.push(Code {
                            pattern,
                            mapping,
                            persistent,
                            ty,
                            bug,
                        });
                    }
                }
            }
        }
    }
    codes
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-{}-{}-{}-{}",
            self.pattern.name(),
            self.mapping.name(),
            if self.persistent {
                "persistent"
            } else {
                "oneshot"
            },
            self.ty.short(),
            self.bug.name()
        )
    }
}

impl Code {
    pub fn file_name(&self) -> String {
        format!("{self}.cu")
    }

    /// Blocks of the launch for a graph of `nodes` vertices: the graph's size for one-shot
    /// codes (one worker per vertex), a fixed grid for persistent ones.
    pub fn blocks(&self, nodes: usize) -> u32 {
        if self.persistent {
            return PERSISTENT_BLOCKS;
        }
        let nodes = nodes as u32;
        match self.mapping {
            Mapping::Thread => nodes.div_ceil(THREADS_PER_BLOCK),
            Mapping::Warp => nodes.div_ceil(THREADS_PER_BLOCK / WARP_SIZE),
            Mapping::Block => nodes,
        }
        .max(1)
    }

    /// Elements of the second data array for a graph of `nodes` vertices.
    pub fn data2_len(&self, nodes: usize) -> usize {
        match self.pattern {
            Pattern::BlockSum => 1,
            Pattern::SharedBins => WARP_SIZE as usize,
            // The total, then one published sum per block.
            Pattern::LastBlock => 1 + self.blocks(nodes) as usize,
            _ => nodes,
        }
    }

    /// The vertex loop's bound: the bounds bug runs one past the last vertex.
    fn vertex_bound(&self) -> &'static str {
        if self.bug == Bug::BoundsBug {
            "v <= nodes"
        } else {
            "v < nodes"
        }
    }

    /// Where the planted bug is, for the file's header.
    fn bug_sentence(&self) -> &'static str {
        match (self.bug, self.pattern) {
            (Bug::None, _) => "none: the code is bug-free",
            (Bug::BoundsBug, _) => {
                "boundsBug: the vertex loop runs to v <= nodes, one past the last vertex"
            }
            (Bug::Race, Pattern::Worklist) => {
                "race: the worklist's size is bumped with a plain read and write, not atomicAdd"
            }
            (Bug::Race, Pattern::BlockSum) => {
                "race: each block adds its sum to the total with a plain +=, not atomicAdd"
            }
            (Bug::Race, Pattern::SharedBins) => {
                "race: a shared bin is bumped with a plain +=, not a shared-memory atomicAdd"
            }
            (Bug::Race, Pattern::LastBlock) => {
                "race: the __threadfence() between publishing a block's sum and taking its ticket is gone"
            }
            (Bug::Race, _) => "race: the update is a plain read-modify-write, not an atomic",
            (Bug::AtomicBug, Pattern::PushAdd) => {
                "atomicBug: the sum is read plainly and written back with atomicExch"
            }
            (Bug::AtomicBug, _) => {
                "atomicBug: the label is read plainly (not volatile) before the atomicMin"
            }
            (Bug::SyncBug, Pattern::LastBlock) => {
                "syncBug: the __syncthreads() after thread 0 learns whether its block is last is gone"
            }
            (Bug::SyncBug, Pattern::SharedBins) => {
                "syncBug: the __syncthreads() between the bins' atomics and their flush is gone"
            }
            (Bug::SyncBug, Pattern::BlockSum) => {
                "syncBug: the __syncthreads() inside the shared-memory reduction is gone"
            }
            (Bug::SyncBug, _) if self.persistent => {
                "syncBug: the __syncwarp() before a warp's next vertex is gone"
            }
            (Bug::SyncBug, _) => {
                "syncBug: the __syncwarp() between the lanes' stores and lane 0's reads is gone"
            }
        }
    }

    /// The CUDA source: one `__global__ void kernel`, its parameters in the order the runner
    /// passes them.
    pub fn source(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "// Indigo-style graph code, generated by Racetrack's bench/indigo: {} pattern, {} \
             mapping, {}, {}.\n// Planted bug: {}.\n",
            self.pattern.name(),
            self.mapping.name(),
            if self.persistent {
                "persistent (grid-stride) launch"
            } else {
                "one worker per vertex"
            },
            self.ty.c_name(),
            self.bug_sentence()
        ));
        out.push_str(&format!(
            "typedef {} data_t;\n#define WS {WARP_SIZE}\n#define TPB {THREADS_PER_BLOCK}\n\n",
            self.ty.c_name()
        ));
        let worklist = if self.pattern.has_worklist_size() {
            ", int* const wlsize"
        } else {
            ""
        };
        if self.pattern == Pattern::LastBlock {
            out.push_str("__device__ unsigned int tickets = 0;\n\n");
        }
        out.push_str(&format!(
            "__global__ void kernel(const int nodes, const int* const __restrict__ nindex, \
             const int* const __restrict__ nlist, const data_t* const __restrict__ data1, \
             data_t* const data2{worklist})\n{{\n"
        ));
        match self.pattern {
            Pattern::BlockSum => self.block_sum(&mut out),
            Pattern::WarpSum => self.warp_sum(&mut out),
            Pattern::SharedBins => self.shared_bins(&mut out),
            Pattern::LastBlock => self.last_block(&mut out),
            _ => self.vertex_loop(&mut out),
        }
        out.push_str("}\n");
        out
    }

    /// The opening of the vertex loop for this mapping; `body` runs with `v`, `beg` and `end`.
    fn open_vertex_loop(&self, out: &mut String) {
        let bound = self.vertex_bound();
        match self.mapping {
            Mapping::Thread => {
                out.push_str("  const int idx = threadIdx.x + blockIdx.x * blockDim.x;\n");
                if self.persistent {
                    out.push_str(&format!(
                        "  for (int v = idx; {bound}; v += gridDim.x * blockDim.x) {{\n"
                    ));
                } else {
                    out.push_str(&format!("  const int v = idx;\n  if ({bound}) {{\n"));
                }
            }
            Mapping::Warp => {
                out.push_str("  const int lane = threadIdx.x % WS;\n");
                out.push_str("  const int warp = (threadIdx.x + blockIdx.x * blockDim.x) / WS;\n");
                if self.persistent {
                    out.push_str(&format!(
                        "  for (int v = warp; {bound}; v += gridDim.x * (blockDim.x / WS)) {{\n"
                    ));
                } else {
                    out.push_str(&format!("  const int v = warp;\n  if ({bound}) {{\n"));
                }
            }
            Mapping::Block => {
                if self.persistent {
                    out.push_str(&format!(
                        "  for (int v = blockIdx.x; {bound}; v += gridDim.x) {{\n"
                    ));
                } else {
                    out.push_str(&format!("  const int v = blockIdx.x;\n  if ({bound}) {{\n"));
                }
            }
        }
        out.push_str("    const int beg = nindex[v];\n    const int end = nindex[v + 1];\n");
    }

    /// The edge loop of this mapping: a thread walks all edges, a warp's lanes or a block's
    /// threads stride over them.
    fn edge_loop(&self) -> &'static str {
        match self.mapping {
            Mapping::Thread => "for (int i = beg; i < end; i++)",
            Mapping::Warp => "for (int i = beg + lane; i < end; i += WS)",
            Mapping::Block => "for (int i = beg + threadIdx.x; i < end; i += blockDim.x)",
        }
    }

    /// The guard under which one thread of the worker does per-vertex work.
    fn one_thread(&self) -> &'static str {
        match self.mapping {
            Mapping::Thread => "true",
            Mapping::Warp => "lane == 0",
            Mapping::Block => "threadIdx.x == 0",
        }
    }

    fn vertex_loop(&self, out: &mut String) {
        self.open_vertex_loop(out);
        let edges = self.edge_loop();
        match self.pattern {
            Pattern::PushAdd => {
                out.push_str(&format!("    {edges} {{\n      const int u = nlist[i];\n"));
                out.push_str(match self.bug {
                    Bug::Race => "      data2[u] += data1[v];\n",
                    Bug::AtomicBug => "      atomicExch(&data2[u], data2[u] + data1[v]);\n",
                    _ => "      atomicAdd(&data2[u], data1[v]);\n",
                });
                out.push_str("    }\n");
            }
            Pattern::PullMax => {
                out.push_str(&format!("    {edges} {{\n      const int u = nlist[i];\n"));
                let plain = "      if (data1[u] > data2[v]) data2[v] = data1[u];\n";
                out.push_str(
                    if self.mapping == Mapping::Thread || self.bug == Bug::Race {
                        plain
                    } else {
                        "      atomicMax(&data2[v], data1[u]);\n"
                    },
                );
                out.push_str("    }\n");
            }
            Pattern::CondMin => {
                out.push_str(&format!("    {edges} {{\n      const int u = nlist[i];\n"));
                out.push_str("      if (data1[v] < data1[u]) {\n");
                out.push_str(match self.bug {
                    Bug::Race => "        if (data1[v] < data2[u]) data2[u] = data1[v];\n",
                    Bug::AtomicBug => {
                        "        if (data1[v] < data2[u]) atomicMin(&data2[u], data1[v]);\n"
                    }
                    _ => {
                        "        if (data1[v] < ((volatile data_t*)data2)[u]) atomicMin(&data2[u], data1[v]);\n"
                    }
                });
                out.push_str("      }\n    }\n");
            }
            Pattern::Worklist => {
                out.push_str(&format!(
                    "    if (({}) && end - beg >= 2) {{\n",
                    self.one_thread()
                ));
                out.push_str(if self.bug == Bug::Race {
                    "      const int slot = *wlsize;\n      *wlsize = slot + 1;\n"
                } else {
                    "      const int slot = atomicAdd(wlsize, 1);\n"
                });
                out.push_str("      data2[slot] = data1[v];\n    }\n");
            }
            Pattern::BlockSum | Pattern::WarpSum | Pattern::SharedBins | Pattern::LastBlock => {
                unreachable!("shared-memory patterns")
            }
        }
        out.push_str("  }\n");
    }

    /// The block's weighted sum into `partial[0]`, by a tree in shared memory.
    fn reduce_block(&self, out: &mut String, sync_in_tree: bool) {
        out.push_str("  __shared__ data_t partial[TPB];\n  data_t val = 0;\n");
        self.open_vertex_loop(out);
        out.push_str("    val += data1[v] * (data_t)(end - beg);\n  }\n");
        out.push_str("  partial[threadIdx.x] = val;\n  __syncthreads();\n");
        out.push_str("  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {\n");
        out.push_str(
            "    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];\n",
        );
        if sync_in_tree {
            out.push_str("    __syncthreads();\n");
        }
        out.push_str("  }\n");
    }

    fn last_block(&self, out: &mut String) {
        self.reduce_block(out, true);
        out.push_str("  __shared__ bool last;\n  if (threadIdx.x == 0) {\n");
        out.push_str("    data2[1 + blockIdx.x] = partial[0];\n");
        if self.bug != Bug::Race {
            out.push_str("    __threadfence();\n");
        }
        out.push_str("    last = atomicAdd(&tickets, 1u) == gridDim.x - 1;\n");
        // The acquire side: without it PTX's model does not order the last block's reads after
        // the other blocks' sums (racecheck's default model forgives it, `--memory-model ptx`
        // does not).
        out.push_str("    __threadfence();\n  }\n");
        if self.bug != Bug::SyncBug {
            out.push_str("  __syncthreads();\n");
        }
        out.push_str(
            "  if (last && threadIdx.x < gridDim.x) atomicAdd(&data2[0], data2[1 + threadIdx.x]);\n",
        );
    }

    fn block_sum(&self, out: &mut String) {
        self.reduce_block(out, self.bug != Bug::SyncBug);
        out.push_str(if self.bug == Bug::Race {
            "  if (threadIdx.x == 0) *data2 += partial[0];\n"
        } else {
            "  if (threadIdx.x == 0) atomicAdd(data2, partial[0]);\n"
        });
    }

    fn warp_sum(&self, out: &mut String) {
        out.push_str("  __shared__ data_t partial[TPB];\n");
        self.open_vertex_loop(out);
        out.push_str("    data_t val = 0;\n");
        out.push_str(&format!(
            "    {} val += data1[nlist[i]];\n",
            self.edge_loop()
        ));
        out.push_str("    partial[threadIdx.x] = val;\n");
        let synced = |which_dropped_when_persistent: bool| {
            self.bug != Bug::SyncBug || self.persistent != which_dropped_when_persistent
        };
        if synced(false) {
            out.push_str("    __syncwarp();\n");
        }
        out.push_str("    if (lane == 0) {\n      data_t sum = 0;\n");
        out.push_str("      for (int k = 0; k < WS; k++) sum += partial[threadIdx.x + k];\n");
        out.push_str("      data2[v] = sum;\n    }\n");
        if synced(true) {
            out.push_str("    __syncwarp();\n");
        }
        out.push_str("  }\n");
    }

    fn shared_bins(&self, out: &mut String) {
        out.push_str("  __shared__ data_t bins[WS];\n");
        out.push_str("  for (int b = threadIdx.x; b < WS; b += blockDim.x) bins[b] = 0;\n");
        out.push_str("  __syncthreads();\n");
        self.open_vertex_loop(out);
        out.push_str(if self.bug == Bug::Race {
            "    bins[(end - beg) % WS] += data1[v];\n"
        } else {
            "    atomicAdd(&bins[(end - beg) % WS], data1[v]);\n"
        });
        out.push_str("  }\n");
        if self.bug != Bug::SyncBug {
            out.push_str("  __syncthreads();\n");
        }
        out.push_str(
            "  for (int b = threadIdx.x; b < WS; b += blockDim.x) atomicAdd(&data2[b], bins[b]);\n",
        );
    }
}
