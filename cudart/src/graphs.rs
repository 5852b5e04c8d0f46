//! CUDA graphs: made by stream capture or node by node, instantiated, launched on a stream.
//! A graph's work is recorded (a kernel's arguments copied as CUDA copies them at capture) and
//! replayed, when the graph is launched, as the same operations on the launch's stream, in the
//! order the nodes were made, which every dependency respects (a node can depend only on nodes
//! made before it). Replayed work is checked as any other.

use std::ffi::{c_int, c_uint, c_void};

use crate::abi::{self, Dim3};
use crate::errors;
use crate::runtime::{ApiResult, Failure, Runtime, api, put, query};
use crate::streams::{HostFn, stream_index};

const GRAPH_HANDLE_BASE: usize = 0x6_0000;
const EXEC_HANDLE_BASE: usize = 0x6_8000;
/// Node handles: this plus the graph's index times 2^20 plus the node's.
const NODE_HANDLE_BASE: usize = 0x1_0000_0000;

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
}

#[derive(Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub destroyed: bool,
}

/// The graph a stream is capturing into, if any.
pub fn capturing(rt: &Runtime, stream: usize) -> Option<usize> {
    rt.capturing.get(&stream).copied()
}

/// Adds `node` to the graph stream `stream` captures into; `false` when it captures nothing.
pub fn capture(rt: &mut Runtime, stream: usize, node: Node) -> bool {
    match capturing(rt, stream) {
        Some(graph) => {
            rt.graphs[graph].nodes.push(node);
            true
        }
        None => false,
    }
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
    match rt.graphs.get(index) {
        Some(g) if !g.destroyed => Ok(index),
        _ => Err(Failure::code(errors::INVALID_VALUE)),
    }
}

fn new_graph(rt: &mut Runtime) -> usize {
    rt.graphs.push(Graph::default());
    rt.graphs.len() - 1
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphCreate(graph: *mut *mut c_void, _flags: c_uint) -> i32 {
    api("cudaGraphCreate", |rt| {
        let g = new_graph(rt);
        unsafe { put(graph, (GRAPH_HANDLE_BASE + g) as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaStreamBeginCapture(stream: *mut c_void, _mode: c_int) -> i32 {
    api("cudaStreamBeginCapture", |rt| {
        let index = stream_index(rt, stream as usize)?;
        if rt.capturing.contains_key(&index) {
            return Err(Failure::code(errors::ILLEGAL_STATE));
        }
        let g = new_graph(rt);
        rt.capturing.insert(index, g);
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamEndCapture(stream: *mut c_void, graph: *mut *mut c_void) -> i32 {
    api("cudaStreamEndCapture", |rt| {
        let index = stream_index(rt, stream as usize)?;
        let Some(g) = rt.capturing.remove(&index) else {
            return Err(Failure::code(errors::ILLEGAL_STATE));
        };
        // Streams that joined the capture through an event leave it with its origin.
        rt.capturing.retain(|_, &mut other| other != g);
        rt.captured_events.retain(|_, &mut other| other != g);
        unsafe { put(graph, (GRAPH_HANDLE_BASE + g) as *mut c_void) }
    })
}

/// `cudaStreamCaptureStatusNone` (0) or `Active` (1).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamIsCapturing(stream: *mut c_void, status: *mut c_int) -> i32 {
    api("cudaStreamIsCapturing", |rt| {
        let index = stream_index(rt, stream as usize)?;
        unsafe { put(status, rt.capturing.contains_key(&index) as c_int) }
    })
}

fn add_node(
    rt: &mut Runtime,
    node_out: *mut *mut c_void,
    graph: *mut c_void,
    node: Node,
) -> ApiResult {
    let g = graph_index(rt, graph)?;
    rt.graphs[g].nodes.push(node);
    let handle = NODE_HANDLE_BASE + (g << 20) + rt.graphs[g].nodes.len() - 1;
    // SAFETY: the program passes where to put the node's handle.
    unsafe { put(node_out, handle as *mut c_void) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddKernelNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
    params: *const abi::KernelNodeParams,
) -> i32 {
    api("cudaGraphAddKernelNode", |rt| {
        if params.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        // SAFETY: the program passes its node's parameters.
        let p = unsafe { &*params };
        let function = p.func as usize;
        let args = copy_args(rt, function, p.kernel_params)?;
        let kernel = Node::Kernel {
            function,
            grid: p.grid_dim,
            block: p.block_dim,
            shared: p.shared_mem_bytes as usize,
            args,
        };
        add_node(rt, node, graph, kernel)
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode1D(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> i32 {
    api("cudaGraphAddMemcpyNode1D", |rt| {
        let copy = Node::Memcpy {
            dst: dst as u64,
            src: src as u64,
            count,
            kind,
        };
        add_node(rt, node, graph, copy)
    })
}

/// A 3D copy between linear memory (no CUDA arrays): rows of `extent.width` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
    params: *const abi::Memcpy3DParms,
) -> i32 {
    api("cudaGraphAddMemcpyNode", |rt| {
        if params.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        // SAFETY: the program passes its copy's parameters.
        let p = unsafe { &*params };
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
        let copy = Node::Memcpy {
            dst: offset(&p.dst_pos, &p.dst_ptr),
            src: offset(&p.src_pos, &p.src_ptr),
            count: p.extent.width * rows,
            kind: p.kind,
        };
        add_node(rt, node, graph, copy)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddMemsetNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
    params: *const abi::MemsetParams,
) -> i32 {
    api("cudaGraphAddMemsetNode", |rt| {
        if params.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        // SAFETY: the program passes its memset's parameters.
        let p = unsafe { &*params };
        let element = p.element_size as usize;
        if ![1, 2, 4].contains(&element) {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        let value = p.value.to_le_bytes();
        let pattern: Vec<u8> = (0..p.width * element).map(|i| value[i % element]).collect();
        let fill = Node::Fill {
            dst: p.dst as u64,
            pattern,
            rows: p.height.max(1),
            pitch: p.pitch,
        };
        add_node(rt, node, graph, fill)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddHostNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
    params: *const abi::HostNodeParams,
) -> i32 {
    api("cudaGraphAddHostNode", |rt| {
        // SAFETY: the program passes its host node's parameters.
        let Some(p) = (unsafe { params.as_ref() }) else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let Some(function) = p.function else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let host = Node::Host {
            function,
            user: p.user_data as usize,
        };
        add_node(rt, node, graph, host)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddEmptyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
) -> i32 {
    api("cudaGraphAddEmptyNode", |rt| {
        add_node(rt, node, graph, Node::Empty)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphAddChildGraphNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    _dependencies: *const *mut c_void,
    _count: usize,
    child: *mut c_void,
) -> i32 {
    api("cudaGraphAddChildGraphNode", |rt| {
        let c = graph_index(rt, child)?;
        add_node(rt, node, graph, Node::Child(c))
    })
}

/// Dependencies only order nodes, and nodes are kept in an order that respects every one.
#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphAddDependencies(
    graph: *mut c_void,
    _from: *const *mut c_void,
    _to: *const *mut c_void,
    _edges: *const c_void,
    _count: usize,
) -> i32 {
    api("cudaGraphAddDependencies", |rt| {
        graph_index(rt, graph).map(|_| ())
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
        let n = rt.graphs[g].nodes.len();
        if count.is_null() {
            return Err(Failure::code(errors::INVALID_VALUE));
        }
        if !nodes.is_null() {
            // SAFETY: the program passes room for `*count` handles.
            let room = unsafe { *count };
            for i in 0..room.min(n) {
                unsafe { *nodes.add(i) = (NODE_HANDLE_BASE + (g << 20) + i) as *mut c_void };
            }
        }
        unsafe { put(count, n) }
    })
}

/// The nodes a launch runs, child graphs spread out in their place.
fn flatten(rt: &Runtime, g: usize, out: &mut Vec<Node>, depth: usize) {
    for node in &rt.graphs[g].nodes {
        match node {
            Node::Child(c) if depth < 64 => flatten(rt, *c, out, depth + 1),
            other => out.push(other.clone()),
        }
    }
}

fn instantiate(exec: *mut *mut c_void, graph: *mut c_void, name: &str) -> i32 {
    api(name, |rt| {
        let g = graph_index(rt, graph)?;
        let mut nodes = Vec::new();
        flatten(rt, g, &mut nodes, 0);
        rt.graph_execs.push(Some(nodes));
        let handle = EXEC_HANDLE_BASE + rt.graph_execs.len() - 1;
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
        rt.graphs[g].destroyed = true;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphExecDestroy(exec: *mut c_void) -> i32 {
    api("cudaGraphExecDestroy", |rt| {
        let index = (exec as usize).wrapping_sub(EXEC_HANDLE_BASE);
        match rt.graph_execs.get_mut(index) {
            Some(slot @ Some(_)) => {
                *slot = None;
                Ok(())
            }
            _ => Err(Failure::code(errors::INVALID_VALUE)),
        }
    })
}

/// Replays the graph's work on `stream`, one operation at a time, each under the runtime's lock
/// as the program's own call would be; host nodes run outside it, as they may call the runtime.
#[unsafe(no_mangle)]
pub extern "C" fn cudaGraphLaunch(exec: *mut c_void, stream: *mut c_void) -> i32 {
    let nodes = query(None, |rt| {
        let index = (exec as usize).wrapping_sub(EXEC_HANDLE_BASE);
        rt.graph_execs.get(index).cloned().flatten()
    });
    let Some(nodes) = nodes else {
        return api("cudaGraphLaunch", |_| {
            Err(Failure::code(errors::INVALID_VALUE))
        });
    };
    let stream = stream as usize;
    for node in nodes {
        let code = match node {
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
            Node::Empty | Node::Child(_) => errors::SUCCESS,
        };
        if code != errors::SUCCESS {
            return code;
        }
    }
    errors::SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaGraphClone(clone: *mut *mut c_void, original: *mut c_void) -> i32 {
    api("cudaGraphClone", |rt| {
        let g = graph_index(rt, original)?;
        let nodes = rt.graphs[g].nodes.clone();
        let c = new_graph(rt);
        rt.graphs[c].nodes = nodes;
        unsafe { put(clone, (GRAPH_HANDLE_BASE + c) as *mut c_void) }
    })
}
