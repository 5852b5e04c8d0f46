//! What a grid's device runtime keeps while it runs (dynamic parallelism): the parameter
//! buffers handed out, the work queued for after the grid, the threads' last errors. The calls
//! that fill it and the running of the queued work are in `device_runtime.rs`.

use std::collections::HashMap;

use super::args::LaunchConfig;

/// One grid's device runtime: what its threads have queued and their last errors.
#[derive(Default)]
pub(crate) struct DeviceRuntime {
    /// 0 for a grid the host launched, 1 for its children, …
    pub(crate) depth: u32,
    /// Parameter buffers handed out and not launched yet, by address.
    pub(crate) buffers: HashMap<u64, Buffer>,
    /// Work queued for after the grid, in the order it was queued.
    pub(crate) queued: Vec<ChildWork>,
    /// Per thread (global id): its last error, as `cudaGetLastError` returns it.
    pub(crate) last_error: HashMap<u64, i32>,
    pub(crate) streams_made: u64,
    /// Strings `cudaGetErrorString`/`cudaGetErrorName` returned, by (code, name or message).
    pub(crate) strings: HashMap<(i32, bool), u64>,
}

impl DeviceRuntime {
    pub(crate) fn at_depth(depth: u32) -> Self {
        DeviceRuntime {
            depth,
            ..DeviceRuntime::default()
        }
    }
}

/// A parameter buffer: the kernel and shape it was taken for (`cudaGetParameterBufferV2`), or
/// only its size (the older `cudaGetParameterBuffer`, whose launch names them).
pub(crate) struct Buffer {
    pub(crate) launch: Option<(u32, LaunchConfig)>,
    pub(crate) size: u64,
}

/// Work a grid queued for after itself.
pub(crate) struct ChildWork {
    pub(crate) op: ChildOp,
    /// The device stream it went to, as far as it orders work (see [`StreamKey::orders`]).
    pub(crate) stream: StreamKey,
    /// The parent's footprint segment that began at the launch: what the parent did from
    /// there on is not ordered before the child. `None` for a tail launch, which starts after
    /// the whole parent grid, and where racecheck is off.
    pub(crate) after: Option<usize>,
    /// Where the parent launched it: `file.cu:12`.
    pub(crate) from: String,
}

/// A device stream, as it orders the work in it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum StreamKey {
    /// The NULL stream: work a block launches into it runs in order.
    Block(u64),
    /// `cudaStreamTailLaunch`: the grid's tail launches run in order after it.
    Tail,
    /// `cudaStreamFireAndForget`: each launch its own.
    Alone,
    /// A stream from `cudaStreamCreateWithFlags`.
    Named(u64),
}

impl StreamKey {
    /// Whether work in `self` waits for earlier work of the same parent in `other`: a tail
    /// launch waits for all of it.
    pub(crate) fn orders(self, other: StreamKey) -> bool {
        self == StreamKey::Tail || (self == other && self != StreamKey::Alone)
    }
}

pub(crate) enum ChildOp {
    Launch {
        func: u32,
        config: LaunchConfig,
        params: Vec<u8>,
    },
    Copy {
        dst: u64,
        src: u64,
        bytes: u64,
    },
    Set {
        dst: u64,
        value: u8,
        bytes: u64,
    },
}
