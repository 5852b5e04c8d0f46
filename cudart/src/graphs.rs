//! CUDA graphs: made by stream capture or node by node, instantiated, launched on a stream.
//! A graph's work is recorded (a kernel's arguments copied as CUDA copies them at capture) and
//! replayed, when the graph is launched, as the same operations on the launch's stream, each
//! node after the nodes it depends on and otherwise in the order the nodes were made. Replayed
//! work is checked as any other.
//!
//! Conditional nodes run a body graph when, or while, a condition holds: kernels set it with the
//! device-side `cudaGraphSetConditional`, which the emulator hands back with the launch's report.
//! Memory-allocation nodes give memory an address when the node is made and physical memory
//! when the graph runs: from the device's graph pool, reusing what an earlier launch freed where
//! CUDA may (the free is ordered before the allocation), growing it otherwise, as
//! `cudaDeviceGetGraphMemAttribute` then reports.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_uint, c_void};

use crate::abi::{self, Dim3};
use crate::errors;
use crate::runtime::{AllocKind, Allocation, ApiResult, Failure, Runtime, api, put, query};
use crate::streams::{HostFn, emu_failure, stream_index};

const GRAPH_HANDLE_BASE: usize = 0x6_0000;
const EXEC_HANDLE_BASE: usize = 0x6_8000;
/// Node handles: this plus the graph's index times 2^20 plus the node's.
const NODE_HANDLE_BASE: usize = 0x1_0000_0000;
/// Conditional handles: this plus an index into `Graphs::conditions`.
const CONDITION_HANDLE_BASE: u64 = 0xC0_0000_0000;
/// Where graph allocations get their addresses: above the emulator's own device allocations,
/// below pinned memory (`runtime::HOST_WINDOW`). An allocation node keeps its address for the
/// graph's lifetime, so addresses here are never handed out twice, except to an allocation
/// ordered after the free of another in the same graph, as CUDA does.
const GRAPH_MEMORY_WINDOW: u64 = 0x0000_3000_0000_0000;
/// Graph memory's physical pieces are rounded up to this, an H100's granularity, so the
/// footprint `cudaDeviceGetGraphMemAttribute` reports is a GPU's.
const GRAPH_MEMORY_GRANULE: usize = 2 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// `cudaGraphCondTypeIf`: the first body when the value is non-zero, the second (an else
    /// branch, when there is one) when it is zero.
    If,
    /// `cudaGraphCondTypeWhile`: the body as long as the value is non-zero.
    While,
    /// `cudaGraphCondTypeSwitch`: body n when the value is n, none when it is past the last.
    Switch,
}

#[derive(Clone, Debug)]
pub enum Node {
    Kernel {
        function: usize,
        grid: Dim3,
        block: Dim3,
        shared: usize,
        args: Vec<Vec<u8>>,
    },
    Memcpy {
        dst: u64,
        src: u64,
        count: usize,
        kind: c_int,
    },
    /// A memset of `rows` rows `pitch` apart, each `pattern` (one row's bytes).
    Fill {
        dst: u64,
        pattern: Vec<u8>,
        rows: usize,
        pitch: usize,
    },
    Host {
        function: HostFn,
        user: usize,
    },
    Empty,
    Child(usize),
    /// Device memory at `address`, which the node was given when it was made.
    Alloc {
        address: u64,
        size: usize,
        label: String,
    },
    Free {
        address: u64,
    },
    /// `bodies` are graph handles, kept where the program reads them (`phGraph_out`).
    Conditional {
        handle: u64,
        kind: Condition,
        bodies: Vec<usize>,
    },
}

#[derive(Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    /// Per node: the nodes it depends on.
    pub deps: Vec<Vec<usize>>,
    pub destroyed: bool,
}

/// One step of an instantiated graph: a node's work, or a conditional with its bodies.
#[derive(Clone, Debug)]
pub struct Step {
    /// The handle of the node it came from (`cudaGraphExecKernelNodeSetParams` names it).
    pub node: usize,
    pub work: Work,
}

#[derive(Clone, Debug)]
pub enum Work {
    Do(Node),
    Conditional {
        handle: u64,
        kind: Condition,
        bodies: Vec<Vec<Step>>,
    },
}

#[derive(Debug)]
pub struct Exec {
    pub steps: Vec<Step>,
    /// The conditional handles its nodes read, set to their defaults at each launch.
    pub handles: Vec<u64>,
}

/// A conditional handle's value.
#[derive(Debug)]
pub struct ConditionValue {
    /// Given at each launch's start (`cudaGraphCondAssignDefault`).
    pub default: Option<u32>,
    pub value: u32,
}

/// Where a piece of the graph pool's physical memory was last given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Released {
    /// By the host after waiting for the device (`cudaFree`): any stream may reuse it.
    Anywhere,
    /// On stream `stream` after `ops` operations: that stream may reuse it, and any other once
    /// the host has waited for that stream past them.
    Stream { stream: usize, ops: u64 },
}

#[derive(Debug)]
struct Piece {
    device: u32,
    size: usize,
    /// The allocation holding it, if any.
    held_by: Option<u64>,
    released: Released,
}

/// The graph memory pool: physical pieces per device and the high-water marks.
#[derive(Debug, Default)]
pub struct GraphMemory {
    pieces: BTreeMap<u64, Piece>,
    next_piece: u64,
    /// Live graph allocations, by address: the piece each holds.
    live: HashMap<u64, u64>,
    next_address: u64,
    used_high: HashMap<u32, usize>,
    reserved_high: HashMap<u32, usize>,
}

/// A stream capturing: the graph it captures into and the nodes its next node depends on.
#[derive(Clone, Debug)]
pub struct Capture {
    pub graph: usize,
    pub tail: Vec<usize>,
}

/// Every graph, instantiated graph, capture and conditional handle of the program.
#[derive(Debug, Default)]
pub struct Graphs {
    pub list: Vec<Graph>,
    /// Instantiated graphs; `None` once destroyed.
    pub execs: Vec<Option<Exec>>,
    /// Streams capturing, by index in `rt.streams`.
    pub capturing: HashMap<usize, Capture>,
    /// Events recorded on a capturing stream: a stream that waits for one joins the capture,
    /// depending on what the recording stream had captured.
    pub captured_events: HashMap<usize, Capture>,
    pub conditions: Vec<ConditionValue>,
    pub memory: GraphMemory,
    /// What `cudaStreamGetCaptureInfo` last gave a stream as its dependencies: the program
    /// reads them through a pointer into this.
    capture_info: HashMap<usize, Vec<usize>>,
}

/// The graph a stream is capturing into, if any.
pub fn capturing(rt: &Runtime, stream: usize) -> Option<usize> {
    rt.graphs.capturing.get(&stream).map(|c| c.graph)
}

fn push_node(rt: &mut Runtime, g: usize, node: Node, deps: Vec<usize>) -> usize {
    let graph = &mut rt.graphs.list[g];
    graph.nodes.push(node);
    graph.deps.push(deps);
    graph.nodes.len() - 1
}

fn node_handle(g: usize, i: usize) -> usize {
    NODE_HANDLE_BASE + (g << 20) + i
}

/// The graph and index of the node a handle names.
fn node_of(rt: &Runtime, handle: *mut c_void) -> ApiResult<(usize, usize)> {
    let h = (handle as usize).wrapping_sub(NODE_HANDLE_BASE);
    let (g, i) = (h >> 20, h & ((1 << 20) - 1));
    match rt.graphs.list.get(g) {
        Some(graph) if i < graph.nodes.len() && (handle as usize) >= NODE_HANDLE_BASE => Ok((g, i)),
        _ => Err(Failure::host(
            errors::INVALID_VALUE,
            "invalid graph node",
            format!("{handle:p} is not a node of any graph"),
        )),
    }
}

/// Adds `node` to the graph stream `stream` captures into; `false` when it captures nothing.
pub fn capture(rt: &mut Runtime, stream: usize, node: Node) -> bool {
    let Some(c) = rt.graphs.capturing.get(&stream).cloned() else {
        return false;
    };
    let i = push_node(rt, c.graph, node, c.tail);
    if let Some(c) = rt.graphs.capturing.get_mut(&stream) {
        c.tail = vec![i];
    }
    true
}

/// A kernel's arguments as CUDA copies them when it records a launch: one value per
/// parameter, each as many bytes as the kernel's PTX parameter.
fn copy_args(rt: &mut Runtime, function: usize, args: *mut *mut c_void) -> ApiResult<Vec<Vec<u8>>> {
    let Some(f) = rt.functions.get(&function) else {
        return Err(Failure::code(errors::INVALID_DEVICE_FUNCTION));
    };
    let (fatbin, name) = (f.fatbin, f.name.clone());
    let module = crate::register::module(rt, fatbin)?;
    let sizes = module
        .param_sizes(&name)
        .ok_or(Failure::code(errors::INVALID_DEVICE_FUNCTION))?;
    if !sizes.is_empty() && args.is_null() {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    Ok(sizes
        .iter()
        .enumerate()
        // SAFETY: one pointer per parameter, each to a value of the parameter's size.
        .map(|(i, &size)| unsafe {
            std::slice::from_raw_parts(*args.add(i) as *const u8, size as usize).to_vec()
        })
        .collect())
}

fn graph_index(rt: &Runtime, handle: *mut c_void) -> ApiResult<usize> {
    let index = (handle as usize).wrapping_sub(GRAPH_HANDLE_BASE);
    match rt.graphs.list.get(index) {
        Some(g) if !g.destroyed => Ok(index),
        _ => Err(Failure::code(errors::INVALID_VALUE)),
    }
}

fn new_graph(rt: &mut Runtime) -> usize {
    rt.graphs.list.push(Graph::default());
    rt.graphs.list.len() - 1
}

fn exec_index(rt: &Runtime, exec: *mut c_void) -> ApiResult<usize> {
    let index = (exec as usize).wrapping_sub(EXEC_HANDLE_BASE);
    match rt.graphs.execs.get(index) {
        Some(Some(_)) => Ok(index),
        _ => Err(Failure::host(
            errors::INVALID_VALUE,
            "invalid graph exec",
            format!("{exec:p} is not an instantiated graph (destroyed, or never made)"),
        )),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphCreate(graph: *mut *mut c_void, _flags: c_uint) -> i32 {
    api("cudaGraphCreate", |rt| {
        let g = new_graph(rt);
        unsafe { put(graph, (GRAPH_HANDLE_BASE + g) as *mut c_void) }
    })
}

fn begin_capture(
    rt: &mut Runtime,
    stream: *mut c_void,
    graph: usize,
    tail: Vec<usize>,
) -> ApiResult {
    let index = stream_index(rt, stream as usize)?;
    if rt.graphs.capturing.contains_key(&index) {
        return Err(Failure::code(errors::ILLEGAL_STATE));
    }
    rt.graphs.capturing.insert(index, Capture { graph, tail });
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaStreamBeginCapture(stream: *mut c_void, _mode: c_int) -> i32 {
    api("cudaStreamBeginCapture", |rt| {
        stream_index(rt, stream as usize)?;
        let g = new_graph(rt);
        begin_capture(rt, stream, g, Vec::new())
    })
}

/// Capture into a graph that exists (a conditional node's body), after `dependencies`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamBeginCaptureToGraph(
    stream: *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    _edges: *const c_void,
    count: usize,
    _mode: c_int,
) -> i32 {
    api("cudaStreamBeginCaptureToGraph", |rt| {
        let g = graph_index(rt, graph)?;
        // SAFETY: the program passes `count` node handles.
        let tail = unsafe { dependency_list(rt, g, dependencies, count)? };
        begin_capture(rt, stream, g, tail)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamEndCapture(stream: *mut c_void, graph: *mut *mut c_void) -> i32 {
    api("cudaStreamEndCapture", |rt| {
        let index = stream_index(rt, stream as usize)?;
        let Some(c) = rt.graphs.capturing.remove(&index) else {
            return Err(Failure::code(errors::ILLEGAL_STATE));
        };
        let g = c.graph;
        // Streams that joined the capture through an event leave it with its origin.
        rt.graphs.capturing.retain(|_, other| other.graph != g);
        rt.graphs
            .captured_events
            .retain(|_, other| other.graph != g);
        if graph.is_null() {
            // Capturing into a graph the program made leaves it where it was.
            return Ok(());
        }
        unsafe { put(graph, (GRAPH_HANDLE_BASE + g) as *mut c_void) }
    })
}

/// `cudaStreamCaptureStatusNone` (0) or `Active` (1).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamIsCapturing(stream: *mut c_void, status: *mut c_int) -> i32 {
    api("cudaStreamIsCapturing", |rt| {
        let index = stream_index(rt, stream as usize)?;
        unsafe { put(status, rt.graphs.capturing.contains_key(&index) as c_int) }
    })
}

/// The capture's status, graph and the nodes the stream's next node will depend on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    dependencies: *mut *const *mut c_void,
    edges: *mut *const c_void,
    count: *mut usize,
) -> i32 {
    api("cudaStreamGetCaptureInfo", |rt| {
        let index = stream_index(rt, stream as usize)?;
        let capture = rt.graphs.capturing.get(&index).cloned();
        unsafe { put(status, capture.is_some() as c_int)? };
        let Some(c) = capture else {
            return Ok(());
        };
        let handles: Vec<usize> = c.tail.iter().map(|&i| node_handle(c.graph, i)).collect();
        let n = handles.len();
        let list = rt.graphs.capture_info.entry(index).or_default();
        *list = handles;
        let at = list.as_ptr() as *const *mut c_void;
        // SAFETY: each out-pointer is null (not wanted) or the program's.
        unsafe {
            if !id.is_null() {
                *id = (index as u64) << 32 | c.graph as u64;
            }
            if !graph.is_null() {
                *graph = (GRAPH_HANDLE_BASE + c.graph) as *mut c_void;
            }
            if !dependencies.is_null() {
                *dependencies = at;
            }
            if !edges.is_null() {
                *edges = std::ptr::null();
            }
            if !count.is_null() {
                *count = n;
            }
        }
        Ok(())
    })
}

const SET_CAPTURE_DEPENDENCIES: c_uint = 1;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamUpdateCaptureDependencies(
    stream: *mut c_void,
    dependencies: *const *mut c_void,
    _edges: *const c_void,
    count: usize,
    flags: c_uint,
) -> i32 {
    api("cudaStreamUpdateCaptureDependencies", |rt| {
        let index = stream_index(rt, stream as usize)?;
        let Some(g) = capturing(rt, index) else {
            return Err(Failure::code(errors::ILLEGAL_STATE));
        };
        // SAFETY: the program passes `count` node handles.
        let nodes = unsafe { dependency_list(rt, g, dependencies, count)? };
        let Some(c) = rt.graphs.capturing.get_mut(&index) else {
            return Err(Failure::code(errors::ILLEGAL_STATE));
        };
        if flags == SET_CAPTURE_DEPENDENCIES {
            c.tail = nodes;
        } else {
            c.tail.extend(nodes);
        }
        Ok(())
    })
}

/// The nodes of graph `g` that `count` handles name.
///
/// # Safety
/// `dependencies` is null or points to `count` node handles.
unsafe fn dependency_list(
    rt: &Runtime,
    g: usize,
    dependencies: *const *mut c_void,
    count: usize,
) -> ApiResult<Vec<usize>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if dependencies.is_null() {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    (0..count)
        .map(|k| {
            // SAFETY: the caller's contract.
            let (dg, i) = node_of(rt, unsafe { *dependencies.add(k) })?;
            if dg != g {
                return Err(Failure::host(
                    errors::INVALID_VALUE,
                    "invalid graph node",
                    "a dependency on a node of another graph".to_string(),
                ));
            }
            Ok(i)
        })
        .collect()
}

fn add_node(
    rt: &mut Runtime,
    node_out: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    node: Node,
) -> ApiResult<(usize, usize)> {
    let g = graph_index(rt, graph)?;
    // SAFETY: the program passes `count` node handles.
    let deps = unsafe { dependency_list(rt, g, dependencies, count)? };
    let i = push_node(rt, g, node, deps);
    // SAFETY: the program passes where to put the node's handle.
    unsafe { put(node_out, node_handle(g, i) as *mut c_void)? };
    Ok((g, i))
}

fn kernel_node(rt: &mut Runtime, p: &abi::KernelNodeParams) -> ApiResult<Node> {
    let function = p.func as usize;
    if !p.extra.is_null() {
        return Err(Failure::host(
            errors::NOT_SUPPORTED,
            "not supported by Racetrack's runtime",
            "a kernel node with arguments in the `extra` form (pass kernelParams)".to_string(),
        ));
    }
    let args = copy_args(rt, function, p.kernel_params)?;
    Ok(Node::Kernel {
        function,
        grid: p.grid_dim,
        block: p.block_dim,
        shared: p.shared_mem_bytes as usize,
        args,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddKernelNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    params: *const abi::KernelNodeParams,
) -> i32 {
    api("cudaGraphAddKernelNode", |rt| {
        // SAFETY: the program passes its node's parameters.
        let Some(p) = (unsafe { params.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let kernel = kernel_node(rt, p)?;
        add_node(rt, node, graph, dependencies, count, kernel).map(|_| ())
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode1D(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: c_int,
) -> i32 {
    api("cudaGraphAddMemcpyNode1D", |rt| {
        let copy = Node::Memcpy {
            dst: dst as u64,
            src: src as u64,
            count: bytes,
            kind,
        };
        add_node(rt, node, graph, dependencies, count, copy).map(|_| ())
    })
}

/// A 3D copy between linear memory (no CUDA arrays): rows of `extent.width` bytes.
fn memcpy_node(p: &abi::Memcpy3DParms) -> ApiResult<Node> {
    if !p.src_array.is_null() || !p.dst_array.is_null() {
        return Err(Failure::host(
            errors::NOT_SUPPORTED,
            "not supported by Racetrack's runtime",
            "a memcpy node to or from a CUDA array (textures are not emulated)".to_string(),
        ));
    }
    let rows = p.extent.height.max(1) * p.extent.depth.max(1);
    let whole_rows = p.src_ptr.pitch == p.extent.width && p.dst_ptr.pitch == p.extent.width;
    if rows > 1 && !whole_rows {
        return Err(Failure::host(
            errors::NOT_SUPPORTED,
            "not supported by Racetrack's runtime",
            "a pitched memcpy node whose rows are not contiguous".to_string(),
        ));
    }
    let offset = |pos: &abi::Pos, ptr: &abi::PitchedPtr| {
        ptr.ptr as u64
            + pos.x as u64
            + (pos.y as u64 + pos.z as u64 * ptr.ysize as u64) * ptr.pitch as u64
    };
    Ok(Node::Memcpy {
        dst: offset(&p.dst_pos, &p.dst_ptr),
        src: offset(&p.src_pos, &p.src_ptr),
        count: p.extent.width * rows,
        kind: p.kind,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    params: *const abi::Memcpy3DParms,
) -> i32 {
    api("cudaGraphAddMemcpyNode", |rt| {
        // SAFETY: the program passes its copy's parameters.
        let Some(p) = (unsafe { params.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let copy = memcpy_node(p)?;
        add_node(rt, node, graph, dependencies, count, copy).map(|_| ())
    })
}

fn memset_node(p: &abi::MemsetParams) -> ApiResult<Node> {
    let element = p.element_size as usize;
    if ![1, 2, 4].contains(&element) {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    let value = p.value.to_le_bytes();
    let pattern: Vec<u8> = (0..p.width * element).map(|i| value[i % element]).collect();
    Ok(Node::Fill {
        dst: p.dst as u64,
        pattern,
        rows: p.height.max(1),
        pitch: p.pitch,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddMemsetNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    params: *const abi::MemsetParams,
) -> i32 {
    api("cudaGraphAddMemsetNode", |rt| {
        // SAFETY: the program passes its memset's parameters.
        let Some(p) = (unsafe { params.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let fill = memset_node(p)?;
        add_node(rt, node, graph, dependencies, count, fill).map(|_| ())
    })
}

fn host_node(p: &abi::HostNodeParams) -> ApiResult<Node> {
    let Some(function) = p.function else {
        return Err(Failure::code(errors::INVALID_VALUE));
    };
    Ok(Node::Host {
        function,
        user: p.user_data as usize,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddHostNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    params: *const abi::HostNodeParams,
) -> i32 {
    api("cudaGraphAddHostNode", |rt| {
        // SAFETY: the program passes its host node's parameters.
        let Some(p) = (unsafe { params.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let host = host_node(p)?;
        add_node(rt, node, graph, dependencies, count, host).map(|_| ())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddEmptyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
) -> i32 {
    api("cudaGraphAddEmptyNode", |rt| {
        add_node(rt, node, graph, dependencies, count, Node::Empty).map(|_| ())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddChildGraphNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    child: *mut c_void,
) -> i32 {
    api("cudaGraphAddChildGraphNode", |rt| {
        let c = graph_index(rt, child)?;
        add_node(rt, node, graph, dependencies, count, Node::Child(c)).map(|_| ())
    })
}

/// An address in the graph memory window for an allocation node of `size` bytes in graph `g`
/// after `deps`: the address of an allocation freed by a node `deps` reach, when it is as big
/// and no other node took it, as CUDA reuses addresses; a new one otherwise.
fn graph_address(rt: &mut Runtime, g: usize, deps: &[usize], size: usize) -> u64 {
    let graph = &rt.graphs.list[g];
    let mut before = vec![false; graph.nodes.len()];
    let mut todo = deps.to_vec();
    while let Some(i) = todo.pop() {
        if i < before.len() && !before[i] {
            before[i] = true;
            todo.extend(graph.deps[i].iter().copied());
        }
    }
    let size_of = |address: u64| {
        graph.nodes.iter().find_map(|n| match n {
            Node::Alloc {
                address: a, size, ..
            } if *a == address => Some(*size),
            _ => None,
        })
    };
    // An address is free to take again when its last allocation node in the graph is
    // followed by a free that the new node comes after.
    let reusable = graph.nodes.iter().enumerate().find_map(|(i, n)| match n {
        Node::Free { address } if before[i] && size_of(*address) == Some(size) => {
            let taken_again =
                graph.nodes.iter().enumerate().any(|(j, m)| {
                    j > i && matches!(m, Node::Alloc { address: a, .. } if a == address)
                });
            (!taken_again).then_some(*address)
        }
        _ => None,
    });
    if let Some(address) = reusable {
        return address;
    }
    let memory = &mut rt.graphs.memory;
    if memory.next_address == 0 {
        memory.next_address = GRAPH_MEMORY_WINDOW;
    }
    let address = memory.next_address;
    memory.next_address = (address + size.max(1) as u64 + (1 << 16)).div_ceil(1 << 21) << 21;
    address
}

/// An allocation node of `size` bytes, labelled for reports, added to graph `g` after `deps`.
pub fn add_alloc_node(
    rt: &mut Runtime,
    g: usize,
    deps: Vec<usize>,
    size: usize,
    label: String,
) -> (usize, u64) {
    let address = graph_address(rt, g, &deps, size);
    let i = push_node(
        rt,
        g,
        Node::Alloc {
            address,
            size,
            label,
        },
        deps,
    );
    (i, address)
}

/// `cudaMallocAsync` on a capturing stream: an allocation node, whose address it returns.
pub fn capture_alloc(rt: &mut Runtime, stream: usize, size: usize, label: String) -> Option<u64> {
    let c = rt.graphs.capturing.get(&stream).cloned()?;
    let (i, address) = add_alloc_node(rt, c.graph, c.tail, size, label);
    if let Some(c) = rt.graphs.capturing.get_mut(&stream) {
        c.tail = vec![i];
    }
    Some(address)
}

#[repr(C)]
#[derive(Debug)]
pub struct MemAllocNodeParams {
    pub pool_props: [u8; 88],
    pub access_descs: *const c_void,
    pub access_desc_count: usize,
    pub bytesize: usize,
    pub dptr: *mut c_void,
}

fn check_alloc_location(p: &MemAllocNodeParams, device_count: u32) -> ApiResult {
    // cudaMemPoolProps: allocType (int), handleTypes (int), location {type, id}.
    let word =
        |at: usize| i32::from_le_bytes(p.pool_props[at..at + 4].try_into().expect("4 bytes"));
    let (kind, id) = (word(8), word(12));
    const LOCATION_DEVICE: i32 = 1;
    if kind != LOCATION_DEVICE || id < 0 || id as u32 >= device_count {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "invalid allocation node",
            format!("an allocation node's location must be a device (type {kind}, id {id})"),
        ));
    }
    Ok(())
}

/// How reports name an allocation node's memory: by the node's variable (`allocNodeA`).
fn alloc_label(rt: &mut Runtime, site: Option<crate::site::Site>, call: &str) -> String {
    let node = crate::memory::label_from_source(rt, site, call);
    if node.ends_with("'d memory") {
        node
    } else {
        format!("the memory of allocation node {node}")
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddMemAllocNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    params: *mut MemAllocNodeParams,
) -> i32 {
    let site = crate::site::caller();
    api("cudaGraphAddMemAllocNode", |rt| {
        // SAFETY: the program passes its node's parameters, which the call fills in.
        let Some(p) = (unsafe { params.as_mut() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        check_alloc_location(p, rt.emu.device_count())?;
        if p.bytesize == 0 {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        let g = graph_index(rt, graph)?;
        // SAFETY: the program passes `count` node handles.
        let deps = unsafe { dependency_list(rt, g, dependencies, count)? };
        let label = alloc_label(rt, site, "cudaGraphAddMemAllocNode");
        let (i, address) = add_alloc_node(rt, g, deps, p.bytesize, label);
        p.dptr = address as *mut c_void;
        unsafe { put(node, node_handle(g, i) as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddMemFreeNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    count: usize,
    address: *mut c_void,
) -> i32 {
    api("cudaGraphAddMemFreeNode", |rt| {
        if address.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        let free = Node::Free {
            address: address as u64,
        };
        add_node(rt, node, graph, dependencies, count, free).map(|_| ())
    })
}

/// `cudaFreeAsync` on a capturing stream: a free node.
pub fn capture_free(rt: &mut Runtime, stream: usize, address: u64) -> bool {
    capture(rt, stream, Node::Free { address })
}

const CONDITION_ASSIGN_DEFAULT: c_uint = 1;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphConditionalHandleCreate(
    handle: *mut u64,
    graph: *mut c_void,
    default: c_uint,
    flags: c_uint,
) -> i32 {
    api("cudaGraphConditionalHandleCreate", |rt| {
        graph_index(rt, graph)?;
        if flags & !CONDITION_ASSIGN_DEFAULT != 0 {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        let assign = flags & CONDITION_ASSIGN_DEFAULT != 0;
        rt.graphs.conditions.push(ConditionValue {
            default: assign.then_some(default),
            value: 0,
        });
        let h = CONDITION_HANDLE_BASE + rt.graphs.conditions.len() as u64 - 1;
        unsafe { put(handle, h) }
    })
}

fn condition_index(rt: &Runtime, handle: u64) -> Option<usize> {
    let i = handle.checked_sub(CONDITION_HANDLE_BASE)? as usize;
    (i < rt.graphs.conditions.len()).then_some(i)
}

/// What kernels set with the device-side `cudaGraphSetConditional`, in the order they set it.
pub fn set_conditions(rt: &mut Runtime, sets: &[ptx_emu::ConditionSet]) {
    for set in sets {
        match condition_index(rt, set.handle) {
            Some(i) => rt.graphs.conditions[i].value = set.value,
            None => {
                let finding = crate::runtime::HostFinding {
                    kind: "invalid conditional handle",
                    text: format!(
                        "cudaGraphSetConditional at {}:{} with {:#x}, which is not a handle cudaGraphConditionalHandleCreate gave",
                        set.at.file, set.at.line, set.handle
                    ),
                };
                crate::report::host_finding(rt, "cudaGraphSetConditional", None, finding);
            }
        }
    }
}

#[repr(C)]
#[derive(Debug)]
pub struct ConditionalNodeParams {
    pub handle: u64,
    pub kind: c_int,
    pub size: c_uint,
    pub bodies_out: *mut *mut c_void,
    pub context: *mut c_void,
}

const NODE_KERNEL: c_int = 0;
const NODE_MEMCPY: c_int = 1;
const NODE_MEMSET: c_int = 2;
const NODE_HOST: c_int = 3;
const NODE_GRAPH: c_int = 4;
const NODE_EMPTY: c_int = 5;
const NODE_MEM_ALLOC: c_int = 0x0a;
const NODE_MEM_FREE: c_int = 0x0b;
const NODE_CONDITIONAL: c_int = 0x0d;

/// `cudaGraphNodeParams`: the node's type, then its parameters (a union) at byte 16.
#[repr(C)]
#[derive(Debug)]
pub struct GraphNodeParams {
    pub kind: c_int,
    pub reserved0: [c_int; 3],
    pub params: [u64; 29],
    pub reserved2: i64,
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    dependencies: *const *mut c_void,
    _edges: *const c_void,
    count: usize,
    params: *mut GraphNodeParams,
) -> i32 {
    let site = crate::site::caller();
    api("cudaGraphAddNode", |rt| {
        // SAFETY: the program passes its node's parameters, which the call may fill in.
        let Some(p) = (unsafe { params.as_mut() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let union = p.params.as_mut_ptr() as *mut u8;
        // SAFETY: each arm reads the union as the member `kind` names, as the program wrote it.
        let made = unsafe {
            match p.kind {
                NODE_KERNEL => kernel_node(rt, &*(union as *const abi::KernelNodeParams))?,
                NODE_MEMCPY => memcpy_node(&*(union.add(16) as *const abi::Memcpy3DParms))?,
                NODE_MEMSET => memset_node(&*(union as *const abi::MemsetParams))?,
                NODE_HOST => host_node(&*(union as *const abi::HostNodeParams))?,
                NODE_GRAPH => Node::Child(graph_index(rt, *(union as *const *mut c_void))?),
                NODE_EMPTY => Node::Empty,
                NODE_MEM_FREE => Node::Free {
                    address: *(union as *const u64),
                },
                NODE_MEM_ALLOC => {
                    let a = &mut *(union as *mut MemAllocNodeParams);
                    check_alloc_location(a, rt.emu.device_count())?;
                    let g = graph_index(rt, graph)?;
                    let deps = dependency_list(rt, g, dependencies, count)?;
                    let label = alloc_label(rt, site, "cudaGraphAddNode");
                    let (i, address) = add_alloc_node(rt, g, deps, a.bytesize, label);
                    a.dptr = address as *mut c_void;
                    return put(node, node_handle(g, i) as *mut c_void);
                }
                NODE_CONDITIONAL => {
                    let c = &mut *(union as *mut ConditionalNodeParams);
                    conditional_node(rt, c)?
                }
                other => {
                    return Err(Failure::host(
                        errors::NOT_SUPPORTED,
                        "not supported by Racetrack's runtime",
                        format!(
                            "cudaGraphAddNode of node type {other} (events and external semaphores are not provided)"
                        ),
                    ));
                }
            }
        };
        let (g, i) = add_node(rt, node, graph, dependencies, count, made)?;
        if let Node::Conditional { bodies, .. } = &rt.graphs.list[g].nodes[i] {
            // SAFETY: `bodies_out` is ours to set (CUDA owns the array it points to); the list
            // lives with the node, which outlives the program's use of it.
            let c = unsafe { &mut *(union as *mut ConditionalNodeParams) };
            c.bodies_out = bodies.as_ptr() as *mut *mut c_void;
        }
        Ok(())
    })
}

/// A conditional node with new, empty body graphs.
fn conditional_node(rt: &mut Runtime, c: &ConditionalNodeParams) -> ApiResult<Node> {
    let kind = match c.kind {
        0 => Condition::If,
        1 => Condition::While,
        2 => Condition::Switch,
        _ => return Err(Failure::code(errors::INVALID_VALUE)),
    };
    let size = c.size as usize;
    let size_ok = match kind {
        Condition::If => size == 1 || size == 2,
        Condition::While => size == 1,
        Condition::Switch => size >= 1,
    };
    if !size_ok || condition_index(rt, c.handle).is_none() {
        return Err(Failure::code(errors::INVALID_VALUE));
    }
    let bodies = (0..size)
        .map(|_| GRAPH_HANDLE_BASE + new_graph(rt))
        .collect();
    Ok(Node::Conditional {
        handle: c.handle,
        kind,
        bodies,
    })
}

/// Records edges between existing nodes: a launch runs each node after those it depends on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddDependencies(
    graph: *mut c_void,
    from: *const *mut c_void,
    to: *const *mut c_void,
    _edges: *const c_void,
    count: usize,
) -> i32 {
    api("cudaGraphAddDependencies", |rt| {
        let g = graph_index(rt, graph)?;
        // SAFETY: the program passes `count` handles on each side.
        let (from, to) = unsafe {
            (
                dependency_list(rt, g, from, count)?,
                dependency_list(rt, g, to, count)?,
            )
        };
        for (a, b) in from.into_iter().zip(to) {
            rt.graphs.list[g].deps[b].push(a);
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphGetNodes(
    graph: *mut c_void,
    nodes: *mut *mut c_void,
    count: *mut usize,
) -> i32 {
    api("cudaGraphGetNodes", |rt| {
        let g = graph_index(rt, graph)?;
        let n = rt.graphs.list[g].nodes.len();
        if count.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        if !nodes.is_null() {
            // SAFETY: the program passes room for `*count` handles.
            let room = unsafe { *count };
            for i in 0..room.min(n) {
                unsafe { *nodes.add(i) = node_handle(g, i) as *mut c_void };
            }
        }
        unsafe { put(count, n) }
    })
}

/// The order a launch runs a graph's nodes in: each after every node it depends on, and
/// otherwise in the order they were made (the order of the program's calls).
fn run_order(graph: &Graph) -> ApiResult<Vec<usize>> {
    let n = graph.nodes.len();
    let mut waiting: Vec<usize> = graph.deps.iter().map(Vec::len).collect();
    let mut followers = vec![Vec::new(); n];
    for (b, deps) in graph.deps.iter().enumerate() {
        for &a in deps {
            followers[a].push(b);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &b in &followers[i] {
            waiting[b] -= 1;
            if waiting[b] == 0 {
                ready.insert(b);
            }
        }
    }
    if order.len() < n {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "invalid graph",
            "the graph's dependencies form a cycle".to_string(),
        ));
    }
    Ok(order)
}

/// The steps a launch of graph `g` runs, child graphs spread out in their place, and the
/// conditional handles they read.
fn steps_of(rt: &Runtime, g: usize, handles: &mut Vec<u64>, depth: usize) -> ApiResult<Vec<Step>> {
    if depth > 64 {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "invalid graph",
            "child graphs or conditional bodies nested more than 64 deep".to_string(),
        ));
    }
    let mut steps = Vec::new();
    let graph = &rt.graphs.list[g];
    for i in run_order(graph)? {
        let node = &graph.nodes[i];
        match node {
            Node::Child(c) => steps.extend(steps_of(rt, *c, handles, depth + 1)?),
            Node::Conditional {
                handle,
                kind,
                bodies,
            } => {
                if !handles.contains(handle) {
                    handles.push(*handle);
                }
                let bodies = bodies
                    .iter()
                    .map(|&b| steps_of(rt, b - GRAPH_HANDLE_BASE, handles, depth + 1))
                    .collect::<ApiResult<_>>()?;
                steps.push(Step {
                    node: node_handle(g, i),
                    work: Work::Conditional {
                        handle: *handle,
                        kind: *kind,
                        bodies,
                    },
                });
            }
            other => steps.push(Step {
                node: node_handle(g, i),
                work: Work::Do(other.clone()),
            }),
        }
    }
    Ok(steps)
}

fn instantiate(exec: *mut *mut c_void, graph: *mut c_void, name: &str) -> i32 {
    api(name, |rt| {
        let g = graph_index(rt, graph)?;
        let mut handles = Vec::new();
        let steps = steps_of(rt, g, &mut handles, 0)?;
        rt.graphs.execs.push(Some(Exec { steps, handles }));
        let handle = EXEC_HANDLE_BASE + rt.graphs.execs.len() - 1;
        unsafe { put(exec, handle as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphInstantiate(
    exec: *mut *mut c_void,
    graph: *mut c_void,
    _flags: u64,
) -> i32 {
    instantiate(exec, graph, "cudaGraphInstantiate")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphInstantiateWithFlags(
    exec: *mut *mut c_void,
    graph: *mut c_void,
    _flags: u64,
) -> i32 {
    instantiate(exec, graph, "cudaGraphInstantiateWithFlags")
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphDestroy(graph: *mut c_void) -> i32 {
    api("cudaGraphDestroy", |rt| {
        let g = graph_index(rt, graph)?;
        rt.graphs.list[g].destroyed = true;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphExecDestroy(exec: *mut c_void) -> i32 {
    api("cudaGraphExecDestroy", |rt| {
        let index = exec_index(rt, exec)?;
        rt.graphs.execs[index] = None;
        Ok(())
    })
}

/// Uploading makes a GPU ready to launch the graph sooner; here there is nothing to prepare.
#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphUpload(exec: *mut c_void, stream: *mut c_void) -> i32 {
    api("cudaGraphUpload", |rt| {
        exec_index(rt, exec)?;
        stream_index(rt, stream as usize).map(|_| ())
    })
}

/// The step of an instantiated graph that came from node `node`, at any depth.
fn step_of(steps: &mut [Step], node: usize) -> Option<&mut Step> {
    for step in steps {
        if step.node == node {
            return Some(step);
        }
        if let Work::Conditional { bodies, .. } = &mut step.work {
            for body in bodies {
                if let Some(found) = step_of(body, node) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// New parameters for a kernel node of an instantiated graph, for its later launches: the
/// same kernel or another, as CUDA allows.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphExecKernelNodeSetParams(
    exec: *mut c_void,
    node: *mut c_void,
    params: *const abi::KernelNodeParams,
) -> i32 {
    api("cudaGraphExecKernelNodeSetParams", |rt| {
        let index = exec_index(rt, exec)?;
        node_of(rt, node)?;
        // SAFETY: the program passes the node's new parameters.
        let Some(p) = (unsafe { params.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let kernel = kernel_node(rt, p)?;
        let Some(Some(e)) = rt.graphs.execs.get_mut(index) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        match step_of(&mut e.steps, node as usize) {
            Some(step @ Step { work: Work::Do(Node::Kernel { .. }), .. }) => {
                step.work = Work::Do(kernel);
                Ok(())
            }
            _ => Err(Failure::host(
                errors::INVALID_VALUE,
                "invalid graph node",
                "cudaGraphExecKernelNodeSetParams of a node that is not a kernel node of the graph this exec was instantiated from".to_string(),
            )),
        }
    })
}

/// `cudaGraphExecUpdateResult`: why an update was refused.
const UPDATE_SUCCESS: c_int = 0;
const UPDATE_TOPOLOGY_CHANGED: c_int = 2;
const UPDATE_NODE_TYPE_CHANGED: c_int = 3;
const UPDATE_PARAMETERS_CHANGED: c_int = 5;

#[repr(C)]
#[derive(Debug)]
pub struct ExecUpdateResultInfo {
    pub result: c_int,
    pub error_node: *mut c_void,
    pub error_from_node: *mut c_void,
}

/// Whether `new` can replace `old` in place: the same nodes in the same order, of the same
/// types, with what CUDA cannot change in an instantiated graph unchanged. The first node
/// that differs, and why, otherwise.
fn update_check(old: &[Step], new: &[Step]) -> Result<(), (c_int, Option<usize>)> {
    if old.len() != new.len() {
        return Err((UPDATE_TOPOLOGY_CHANGED, None));
    }
    for (a, b) in old.iter().zip(new) {
        let same_kind = std::mem::discriminant(&a.work) == std::mem::discriminant(&b.work);
        match (&a.work, &b.work) {
            (Work::Do(x), Work::Do(y)) => {
                if std::mem::discriminant(x) != std::mem::discriminant(y) {
                    return Err((UPDATE_NODE_TYPE_CHANGED, Some(b.node)));
                }
                let fixed = match (x, y) {
                    (
                        Node::Alloc {
                            address: p,
                            size: m,
                            ..
                        },
                        Node::Alloc {
                            address: q,
                            size: n,
                            ..
                        },
                    ) => p == q && m == n,
                    (Node::Free { address: p }, Node::Free { address: q }) => p == q,
                    (Node::Host { .. }, Node::Host { .. }) => true,
                    _ => true,
                };
                if !fixed {
                    return Err((UPDATE_PARAMETERS_CHANGED, Some(b.node)));
                }
            }
            (
                Work::Conditional {
                    handle: h,
                    kind: k,
                    bodies: x,
                },
                Work::Conditional {
                    handle: i,
                    kind: l,
                    bodies: y,
                },
            ) => {
                if h != i || k != l || x.len() != y.len() {
                    return Err((UPDATE_PARAMETERS_CHANGED, Some(b.node)));
                }
                for (x, y) in x.iter().zip(y) {
                    update_check(x, y)?;
                }
            }
            _ if !same_kind => return Err((UPDATE_NODE_TYPE_CHANGED, Some(b.node))),
            _ => {}
        }
    }
    Ok(())
}

/// Gives each step of `old` the work of the same step of `new`, keeping which node it is.
fn update_steps(old: &mut [Step], new: Vec<Step>) {
    for (a, b) in old.iter_mut().zip(new) {
        match (&mut a.work, b.work) {
            (Work::Conditional { bodies: x, .. }, Work::Conditional { bodies: y, .. }) => {
                for (x, y) in x.iter_mut().zip(y) {
                    update_steps(x, y);
                }
            }
            (work, other) => *work = other,
        }
    }
}

/// Updates an instantiated graph to another graph of the same shape, or says why it cannot
/// (`cudaErrorGraphExecUpdateFailure`, with the reason in `info`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphExecUpdate(
    exec: *mut c_void,
    graph: *mut c_void,
    info: *mut ExecUpdateResultInfo,
) -> i32 {
    api("cudaGraphExecUpdate", |rt| {
        let index = exec_index(rt, exec)?;
        let g = graph_index(rt, graph)?;
        let mut handles = Vec::new();
        let new = steps_of(rt, g, &mut handles, 0)?;
        let Some(Some(e)) = rt.graphs.execs.get_mut(index) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let (result, node) = match update_check(&e.steps, &new) {
            Ok(()) => {
                update_steps(&mut e.steps, new);
                e.handles = handles;
                (UPDATE_SUCCESS, None)
            }
            Err(why) => why,
        };
        if !info.is_null() {
            // SAFETY: the program passes where to put the result.
            unsafe {
                *info = ExecUpdateResultInfo {
                    result,
                    error_node: node.map_or(std::ptr::null_mut(), |n| n as *mut c_void),
                    error_from_node: std::ptr::null_mut(),
                };
            }
        }
        if result == UPDATE_SUCCESS {
            Ok(())
        } else {
            Err(Failure::code(errors::GRAPH_EXEC_UPDATE_FAILURE))
        }
    })
}

/// Replays the graph's work on `stream`, one operation at a time, each under the runtime's lock
/// as the program's own call would be; host nodes run outside it, as they may call the runtime.
#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphLaunch(exec: *mut c_void, stream: *mut c_void) -> i32 {
    let steps = query(None, |rt| {
        let index = (exec as usize).wrapping_sub(EXEC_HANDLE_BASE);
        let e = rt.graphs.execs.get(index)?.as_ref()?;
        let steps = e.steps.clone();
        for &h in &e.handles.clone() {
            if let Some(i) = condition_index(rt, h)
                && let Some(default) = rt.graphs.conditions[i].default
            {
                rt.graphs.conditions[i].value = default;
            }
        }
        Some(steps)
    });
    let Some(steps) = steps else {
        return api("cudaGraphLaunch", |_| {
            Err(Failure::code(errors::INVALID_VALUE))
        });
    };
    replay(&steps, stream as usize)
}

fn condition_value(handle: u64) -> u32 {
    query(0, |rt| {
        condition_index(rt, handle).map_or(0, |i| rt.graphs.conditions[i].value)
    })
}

fn replay(steps: &[Step], stream: usize) -> i32 {
    for step in steps {
        let code = match &step.work {
            Work::Do(node) => run_node(node.clone(), stream),
            Work::Conditional {
                handle,
                kind,
                bodies,
            } => match kind {
                Condition::If | Condition::Switch => {
                    let value = condition_value(*handle) as usize;
                    let body = match kind {
                        Condition::If if value != 0 => bodies.first(),
                        Condition::If => bodies.get(1),
                        _ => bodies.get(value),
                    };
                    body.map_or(errors::SUCCESS, |b| replay(b, stream))
                }
                Condition::While => {
                    let mut code = errors::SUCCESS;
                    while code == errors::SUCCESS && condition_value(*handle) != 0 {
                        code = replay(&bodies[0], stream);
                    }
                    code
                }
            },
        };
        if code != errors::SUCCESS {
            return code;
        }
    }
    errors::SUCCESS
}

fn run_node(node: Node, stream: usize) -> i32 {
    match node {
        Node::Kernel {
            function,
            grid,
            block,
            shared,
            mut args,
        } => {
            let mut pointers: Vec<*mut c_void> = args
                .iter_mut()
                .map(|a| a.as_mut_ptr() as *mut c_void)
                .collect();
            api("cudaGraphLaunch", |rt| {
                let site = crate::site::caller();
                crate::launch::launch(
                    rt,
                    function,
                    grid,
                    block,
                    pointers.as_mut_ptr(),
                    shared,
                    stream,
                    site,
                )
            })
        }
        Node::Memcpy {
            dst,
            src,
            count,
            kind,
        } => api("cudaGraphLaunch", |rt| {
            let index = stream_index(rt, stream)?;
            crate::memory::copy(rt, dst, src, count, kind, index, false)
        }),
        Node::Fill {
            dst,
            pattern,
            rows,
            pitch,
        } => api("cudaGraphLaunch", |rt| {
            let index = stream_index(rt, stream)?;
            for row in 0..rows {
                let at = dst + (row * pitch) as u64;
                crate::memory::copy(
                    rt,
                    at,
                    pattern.as_ptr() as u64,
                    pattern.len(),
                    abi::MEMCPY_DEFAULT,
                    index,
                    false,
                )?;
            }
            Ok(())
        }),
        Node::Host { function, user } => {
            // SAFETY: the program's host function, called as CUDA calls it.
            unsafe { function(user as *mut c_void) };
            errors::SUCCESS
        }
        Node::Alloc {
            address,
            size,
            label,
        } => api("cudaGraphLaunch", |rt| {
            let index = stream_index(rt, stream)?;
            graph_alloc(rt, address, size, &label, index)
        }),
        Node::Free { address } => api("cudaGraphLaunch", |rt| {
            let index = stream_index(rt, stream)?;
            crate::memory::free_device(rt, address as *mut c_void, "a graph's free node")?;
            released(rt, address, Some(index));
            Ok(())
        }),
        Node::Empty | Node::Child(_) | Node::Conditional { .. } => errors::SUCCESS,
    }
}

/// An allocation node runs: its address gets physical memory from the graph pool, a piece
/// this stream may reuse or a new one.
fn graph_alloc(
    rt: &mut Runtime,
    address: u64,
    size: usize,
    label: &str,
    stream: usize,
) -> ApiResult {
    if rt.allocations.contains_key(&address) {
        return Err(Failure::host(
            errors::INVALID_VALUE,
            "graph allocation still live",
            format!(
                "the graph allocates {label} again at {address:#x} before its last allocation there was freed (free it in the graph, or with cudaFree/cudaFreeAsync, before launching the graph again)"
            ),
        ));
    }
    let device = rt.emu.current_device();
    let want = size.div_ceil(GRAPH_MEMORY_GRANULE) * GRAPH_MEMORY_GRANULE;
    let reusable = |p: &Piece| {
        p.held_by.is_none()
            && p.device == device
            && p.size >= want
            && match p.released {
                Released::Anywhere => true,
                Released::Stream { stream: s, ops } => {
                    s == stream || rt.streams.get(s).is_some_and(|e| e.host_waited >= ops)
                }
            }
    };
    let memory = &rt.graphs.memory;
    let found = memory
        .pieces
        .iter()
        .filter(|(_, p)| reusable(p))
        .min_by_key(|(_, p)| p.size)
        .map(|(&id, _)| id);
    let memory = &mut rt.graphs.memory;
    let id = match found {
        Some(id) => id,
        None => {
            let id = memory.next_piece;
            memory.next_piece += 1;
            memory.pieces.insert(
                id,
                Piece {
                    device,
                    size: want,
                    held_by: None,
                    released: Released::Anywhere,
                },
            );
            let used = used(memory, device);
            let high = memory.used_high.entry(device).or_default();
            *high = (*high).max(used);
            let high = memory.reserved_high.entry(device).or_default();
            *high = (*high).max(used);
            id
        }
    };
    if let Some(p) = memory.pieces.get_mut(&id) {
        p.held_by = Some(address);
    }
    memory.live.insert(address, id);
    rt.emu
        .alloc_uninit_at(address, size, label)
        .map_err(emu_failure)?;
    rt.allocations.insert(
        address,
        Allocation {
            size,
            label: label.to_string(),
            kind: AllocKind::Device,
            device,
            site: None,
        },
    );
    rt.freed.retain(|f| f.base != address);
    Ok(())
}

/// Physical memory the graph pool holds for `device`.
fn used(memory: &GraphMemory, device: u32) -> usize {
    memory
        .pieces
        .values()
        .filter(|p| p.device == device)
        .map(|p| p.size)
        .sum()
}

/// Graph memory at `address` was freed: by a free node or `cudaFreeAsync` on stream `stream`,
/// or by `cudaFree` (`None`). Its piece stays in the pool until trimmed.
pub fn released(rt: &mut Runtime, address: u64, stream: Option<usize>) {
    let Some(id) = rt.graphs.memory.live.remove(&address) else {
        return;
    };
    let released = match stream {
        Some(s) => Released::Stream {
            stream: s,
            ops: rt.streams[s].ops,
        },
        None => Released::Anywhere,
    };
    if let Some(p) = rt.graphs.memory.pieces.get_mut(&id) {
        p.held_by = None;
        p.released = released;
    }
}

fn check_device(rt: &Runtime, device: c_int) -> ApiResult<u32> {
    if device < 0 || device as u32 >= rt.emu.device_count() {
        return Err(Failure::code(errors::INVALID_DEVICE));
    }
    Ok(device as u32)
}

/// Gives the graph pool's unused physical memory back: work runs when it is queued, so every
/// free has completed.
#[unsafe(no_mangle)]
pub extern "C" fn cudaDeviceGraphMemTrim(device: c_int) -> i32 {
    api("cudaDeviceGraphMemTrim", |rt| {
        let device = check_device(rt, device)?;
        rt.graphs
            .memory
            .pieces
            .retain(|_, p| p.device != device || p.held_by.is_some());
        Ok(())
    })
}

const GRAPH_MEM_USED_CURRENT: c_int = 0;
const GRAPH_MEM_USED_HIGH: c_int = 1;
const GRAPH_MEM_RESERVED_CURRENT: c_int = 2;
const GRAPH_MEM_RESERVED_HIGH: c_int = 3;

/// The graph pool's footprint. Physical memory is mapped to the pool as it is reserved, so
/// "used" and "reserved" are the same amounts here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceGetGraphMemAttribute(
    device: c_int,
    attribute: c_int,
    value: *mut u64,
) -> i32 {
    api("cudaDeviceGetGraphMemAttribute", |rt| {
        let device = check_device(rt, device)?;
        let memory = &rt.graphs.memory;
        let amount = match attribute {
            GRAPH_MEM_USED_CURRENT | GRAPH_MEM_RESERVED_CURRENT => used(memory, device),
            GRAPH_MEM_USED_HIGH => memory.used_high.get(&device).copied().unwrap_or(0),
            GRAPH_MEM_RESERVED_HIGH => memory.reserved_high.get(&device).copied().unwrap_or(0),
            _ => return Err(Failure::code(errors::INVALID_VALUE)),
        };
        unsafe { put(value, amount as u64) }
    })
}

/// Resets a high-water mark, which may only be set to 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaDeviceSetGraphMemAttribute(
    device: c_int,
    attribute: c_int,
    value: *mut u64,
) -> i32 {
    api("cudaDeviceSetGraphMemAttribute", |rt| {
        let device = check_device(rt, device)?;
        // SAFETY: the program passes the value to set.
        let Some(&v) = (unsafe { value.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let memory = &mut rt.graphs.memory;
        let high = match attribute {
            GRAPH_MEM_USED_HIGH => &mut memory.used_high,
            GRAPH_MEM_RESERVED_HIGH => &mut memory.reserved_high,
            _ => return Err(Failure::code(errors::INVALID_VALUE)),
        };
        if v != 0 {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        high.insert(device, 0);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphClone(clone: *mut *mut c_void, original: *mut c_void) -> i32 {
    api("cudaGraphClone", |rt| {
        let g = graph_index(rt, original)?;
        let (nodes, deps) = (
            rt.graphs.list[g].nodes.clone(),
            rt.graphs.list[g].deps.clone(),
        );
        let c = new_graph(rt);
        rt.graphs.list[c].nodes = nodes;
        rt.graphs.list[c].deps = deps;
        unsafe { put(clone, (GRAPH_HANDLE_BASE + c) as *mut c_void) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_parameter_structs_have_the_headers_layout() {
        assert_eq!(std::mem::size_of::<GraphNodeParams>(), 256);
        assert_eq!(std::mem::offset_of!(GraphNodeParams, params), 16);
        assert_eq!(std::mem::size_of::<MemAllocNodeParams>(), 120);
        assert_eq!(std::mem::offset_of!(MemAllocNodeParams, bytesize), 104);
        assert_eq!(std::mem::offset_of!(MemAllocNodeParams, dptr), 112);
        assert_eq!(std::mem::offset_of!(ConditionalNodeParams, bodies_out), 16);
        assert_eq!(std::mem::size_of::<ExecUpdateResultInfo>(), 24);
    }

    fn graph(deps: &[&[usize]]) -> Graph {
        Graph {
            nodes: vec![Node::Empty; deps.len()],
            deps: deps.iter().map(|d| d.to_vec()).collect(),
            destroyed: false,
        }
    }

    #[test]
    fn nodes_run_after_what_they_depend_on_and_otherwise_in_the_order_made() {
        // Node 0 depends on node 2, added later with cudaGraphAddDependencies.
        let order = run_order(&graph(&[&[2], &[], &[1]])).expect("no cycle");
        assert_eq!(order, [1, 2, 0]);
        assert_eq!(
            run_order(&graph(&[&[], &[], &[]])).expect("no cycle"),
            [0, 1, 2]
        );
        assert!(run_order(&graph(&[&[1], &[0]])).is_err());
    }
}
