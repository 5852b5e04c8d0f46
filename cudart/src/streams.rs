//! Streams and events: each CUDA stream is a stream of the emulator, which orders work and
//! reports conflicting work that nothing orders. The legacy default stream waits for every
//! blocking stream of its device and they for it, as CUDA's does.

use std::ffi::{c_float, c_int, c_uint, c_void};
use std::time::Instant;

use ptx_emu::StreamId;

use crate::abi;
use crate::errors;
use crate::runtime::{ApiResult, EventEntry, Failure, Runtime, StreamEntry, api, put};

/// Stream handles are this plus an index, so that none is 0, `cudaStreamLegacy` or
/// `cudaStreamPerThread`.
const STREAM_HANDLE_BASE: usize = 0x5_7000;
const EVENT_HANDLE_BASE: usize = 0x5_E000;

thread_local! {
    /// Set while a call made through a `_ptsz`/`_ptds` entry point runs: the program was built
    /// with `nvcc --default-stream per-thread`, so its stream 0 is its thread's own.
    static PER_THREAD_DEFAULT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `call` with stream 0 meaning the calling thread's default stream, as the entry points
/// of a program built with `--default-stream per-thread` (`cudaMemcpyAsync_ptsz`) mean it.
pub fn with_per_thread_default<R>(call: impl FnOnce() -> R) -> R {
    let before = PER_THREAD_DEFAULT.replace(true);
    let result = call();
    PER_THREAD_DEFAULT.set(before);
    result
}

/// The index in `rt.streams` of the stream a handle names.
pub fn stream_index(rt: &mut Runtime, handle: usize) -> ApiResult<usize> {
    if handle == abi::STREAM_PER_THREAD || (handle == 0 && PER_THREAD_DEFAULT.get()) {
        return Ok(per_thread_stream(rt));
    }
    if handle == 0 || handle == abi::STREAM_LEGACY {
        return Ok(rt.legacy[rt.emu.current_device() as usize]);
    }
    let index = handle.wrapping_sub(STREAM_HANDLE_BASE);
    match rt.streams.get(index) {
        Some(s) if !s.destroyed => Ok(index),
        _ => Err(Failure::host(
            errors::INVALID_RESOURCE_HANDLE,
            "invalid stream",
            format!("{handle:#x} is not a stream that exists (destroyed, or never created)"),
        )),
    }
}

/// Orders an operation about to be queued on stream `index` as CUDA's legacy default stream
/// does, then counts it. Returns the emulator's stream.
pub fn before_op(rt: &mut Runtime, index: usize) -> ApiResult<StreamId> {
    let device = rt.streams[index].device;
    let legacy = rt.legacy[device as usize];
    if index == legacy {
        for other in 0..rt.streams.len() {
            let s = &rt.streams[other];
            if other == legacy || s.device != device || !s.blocking || s.destroyed {
                continue;
            }
            join(rt, other, legacy)?;
        }
    } else if rt.streams[index].blocking {
        join(rt, legacy, index)?;
    }
    rt.streams[index].ops += 1;
    Ok(rt.streams[index].id)
}

/// Makes stream `to` wait for what stream `from` has queued, unless it already does.
fn join(rt: &mut Runtime, from: usize, to: usize) -> ApiResult {
    let ops = rt.streams[from].ops;
    if ops == 0 || rt.joined.get(&(from, to)) == Some(&ops) {
        return Ok(());
    }
    let event = rt
        .emu
        .record_event(rt.streams[from].id)
        .map_err(emu_failure)?;
    rt.emu
        .wait_event(rt.streams[to].id, event)
        .map_err(emu_failure)?;
    rt.joined.insert((from, to), ops);
    Ok(())
}

pub fn emu_failure(error: ptx_emu::EmuError) -> Failure {
    Failure::host(
        errors::INVALID_VALUE,
        "refused by the emulator",
        error.to_string(),
    )
}

/// The host waits for stream `index`: what its work printed is printed now.
pub fn host_waits_for(rt: &mut Runtime, index: usize) -> ApiResult {
    rt.emu
        .synchronize_stream(rt.streams[index].id)
        .map_err(emu_failure)?;
    rt.streams[index].host_waited = rt.streams[index].ops;
    crate::managed::synchronized(rt);
    deliver_printf(rt);
    Ok(())
}

/// The host waits for everything (`cudaDeviceSynchronize`, and the program's end): held work
/// runs or is reported stuck.
pub fn host_waits_for_all(rt: &mut Runtime) {
    if let Ok(report) = rt.emu.synchronize() {
        crate::launch::take_report(rt, None, report);
    }
    for s in &mut rt.streams {
        s.host_waited = s.ops;
    }
    crate::managed::synchronized(rt);
    deliver_printf(rt);
}

pub fn deliver_printf(rt: &mut Runtime) {
    let text = std::mem::take(&mut rt.printf);
    crate::out::program_stdout(&text);
    let asserts = std::mem::take(&mut rt.assert_messages);
    crate::out::program_stderr(&asserts);
}

/// The calling thread's default stream on the current device (`cudaStreamPerThread`), made on
/// its first use: a blocking stream, which waits for the legacy default stream and it for this
/// one, and which other threads' default streams do not wait for.
fn per_thread_stream(rt: &mut Runtime) -> usize {
    let key = (std::thread::current().id(), rt.emu.current_device());
    if let Some(&index) = rt.per_thread.get(&key) {
        return index;
    }
    let index = create(rt, 0, 0) - STREAM_HANDLE_BASE;
    let threads_before = rt
        .per_thread
        .keys()
        .filter(|(thread, _)| *thread != key.0)
        .map(|(thread, _)| *thread)
        .collect::<std::collections::HashSet<_>>()
        .len();
    let role = format!("host thread {}'s default stream", threads_before + 1);
    rt.emu.set_stream_role(rt.streams[index].id, role);
    rt.per_thread.insert(key, index);
    index
}

fn create(rt: &mut Runtime, flags: c_uint, priority: i32) -> usize {
    let device = rt.emu.current_device();
    let id = rt.emu.create_stream();
    rt.streams.push(StreamEntry {
        id,
        device,
        blocking: flags & abi::STREAM_NON_BLOCKING == 0,
        destroyed: false,
        ops: 0,
        host_waited: 0,
        flags,
        // CUDA clamps a priority to the device's range (cudaDeviceGetStreamPriorityRange).
        priority: priority.clamp(crate::device::GREATEST_STREAM_PRIORITY, 0),
    });
    STREAM_HANDLE_BASE + rt.streams.len() - 1
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreate(stream: *mut *mut c_void) -> i32 {
    api("cudaStreamCreate", |rt| {
        let handle = create(rt, 0, 0);
        unsafe { put(stream, handle as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(stream: *mut *mut c_void, flags: c_uint) -> i32 {
    api("cudaStreamCreateWithFlags", |rt| {
        let handle = create(rt, flags, 0);
        unsafe { put(stream, handle as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamCreateWithPriority(
    stream: *mut *mut c_void,
    flags: c_uint,
    priority: i32,
) -> i32 {
    api("cudaStreamCreateWithPriority", |rt| {
        let handle = create(rt, flags, priority);
        unsafe { put(stream, handle as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamGetFlags(stream: *mut c_void, flags: *mut c_uint) -> i32 {
    api("cudaStreamGetFlags", |rt| {
        let index = stream_index(rt, stream as usize)?;
        unsafe { put(flags, rt.streams[index].flags) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamGetPriority(stream: *mut c_void, priority: *mut c_int) -> i32 {
    api("cudaStreamGetPriority", |rt| {
        let index = stream_index(rt, stream as usize)?;
        unsafe { put(priority, rt.streams[index].priority) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamGetDevice(stream: *mut c_void, device: *mut c_int) -> i32 {
    api("cudaStreamGetDevice", |rt| {
        let index = stream_index(rt, stream as usize)?;
        unsafe { put(device, rt.streams[index].device as c_int) }
    })
}

/// A number no other stream of the process has: the stream's place in the runtime's table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamGetId(stream: *mut c_void, id: *mut u64) -> i32 {
    api("cudaStreamGetId", |rt| {
        let index = stream_index(rt, stream as usize)?;
        unsafe { put(id, index as u64) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaStreamDestroy(stream: *mut c_void) -> i32 {
    api("cudaStreamDestroy", |rt| {
        let index = stream_index(rt, stream as usize)?;
        if index != rt.legacy[rt.streams[index].device as usize] {
            rt.streams[index].destroyed = true;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaStreamSynchronize(stream: *mut c_void) -> i32 {
    api("cudaStreamSynchronize", |rt| {
        let index = stream_index(rt, stream as usize)?;
        host_waits_for(rt, index)
    })
}

/// Work runs when it is queued, so a stream is always done (`cudaSuccess`, never `NotReady`).
#[unsafe(no_mangle)]
pub extern "C" fn cudaStreamQuery(stream: *mut c_void) -> i32 {
    api("cudaStreamQuery", |rt| {
        stream_index(rt, stream as usize)?;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaStreamWaitEvent(
    stream: *mut c_void,
    event: *mut c_void,
    _flags: c_uint,
) -> i32 {
    api("cudaStreamWaitEvent", |rt| {
        let index = stream_index(rt, stream as usize)?;
        let e = event_index(rt, event as usize)?;
        if let Some(recorded) = rt.graphs.captured_events.get(&e).cloned() {
            // Waiting for an event a capture recorded joins the capture, after what the
            // recording stream had captured.
            match rt.graphs.capturing.get_mut(&index) {
                Some(c) if c.graph == recorded.graph => c.tail.extend(recorded.tail),
                Some(_) => return Err(Failure::code(errors::ILLEGAL_STATE)),
                None => {
                    rt.graphs.capturing.insert(index, recorded);
                }
            }
            return Ok(());
        }
        let Some(recorded) = rt.events[e].recorded else {
            // Waiting for an event never recorded waits for nothing, as in CUDA.
            return Ok(());
        };
        let id = before_op(rt, index)?;
        rt.emu.wait_event(id, recorded).map_err(emu_failure)
    })
}

pub type StreamCallback = unsafe extern "C" fn(stream: *mut c_void, status: i32, user: *mut c_void);
pub type HostFn = unsafe extern "C" fn(user: *mut c_void);

/// Work runs when it is queued, so everything before a callback is done when it is added: it
/// runs at once, outside the runtime's lock (it may call the runtime).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaStreamAddCallback(
    stream: *mut c_void,
    callback: Option<StreamCallback>,
    user: *mut c_void,
    _flags: c_uint,
) -> i32 {
    let code = api("cudaStreamAddCallback", |rt| {
        let index = stream_index(rt, stream as usize)?;
        if crate::graphs::capturing(rt, index).is_some() {
            return Err(Failure::host(
                errors::NOT_SUPPORTED,
                "not supported while capturing",
                "cudaStreamAddCallback on a capturing stream (CUDA refuses it too; use cudaLaunchHostFunc)".to_string(),
            ));
        }
        before_op(rt, index)?;
        callback
            .map(|_| ())
            .ok_or(Failure::code(errors::INVALID_VALUE))
    });
    if code == errors::SUCCESS
        && let Some(callback) = callback
    {
        // SAFETY: the program's callback, called as CUDA calls it.
        unsafe { callback(stream, errors::SUCCESS, user) };
    }
    code
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaLaunchHostFunc(
    stream: *mut c_void,
    function: Option<HostFn>,
    user: *mut c_void,
) -> i32 {
    let captured = std::cell::Cell::new(false);
    let code = api("cudaLaunchHostFunc", |rt| {
        let index = stream_index(rt, stream as usize)?;
        let Some(f) = function else {
            return Err(Failure::code(errors::INVALID_VALUE));
        };
        let node = crate::graphs::Node::Host {
            function: f,
            user: user as usize,
        };
        if crate::graphs::capture(rt, index, node) {
            captured.set(true);
            return Ok(());
        }
        before_op(rt, index)?;
        Ok(())
    });
    if code == errors::SUCCESS
        && !captured.get()
        && let Some(function) = function
    {
        // SAFETY: the program's host function, called as CUDA calls it.
        unsafe { function(user) };
    }
    code
}

fn event_index(rt: &Runtime, handle: usize) -> ApiResult<usize> {
    let index = handle.wrapping_sub(EVENT_HANDLE_BASE);
    match rt.events.get(index) {
        Some(e) if !e.destroyed => Ok(index),
        _ => Err(Failure::host(
            errors::INVALID_RESOURCE_HANDLE,
            "invalid event",
            format!("{handle:#x} is not an event that exists (destroyed, or never created)"),
        )),
    }
}

fn create_event(rt: &mut Runtime, flags: c_uint) -> usize {
    rt.events.push(EventEntry {
        recorded: None,
        stream: None,
        at: None,
        timing: flags & abi::EVENT_DISABLE_TIMING == 0,
        destroyed: false,
    });
    EVENT_HANDLE_BASE + rt.events.len() - 1
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventCreate(event: *mut *mut c_void) -> i32 {
    api("cudaEventCreate", |rt| {
        let handle = create_event(rt, 0);
        unsafe { put(event, handle as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventCreateWithFlags(event: *mut *mut c_void, flags: c_uint) -> i32 {
    api("cudaEventCreateWithFlags", |rt| {
        let handle = create_event(rt, flags);
        unsafe { put(event, handle as *mut c_void) }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaEventDestroy(event: *mut c_void) -> i32 {
    api("cudaEventDestroy", |rt| {
        let index = event_index(rt, event as usize)?;
        rt.events[index].destroyed = true;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaEventRecord(event: *mut c_void, stream: *mut c_void) -> i32 {
    api("cudaEventRecord", |rt| record(rt, event, stream))
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaEventRecordWithFlags(
    event: *mut c_void,
    stream: *mut c_void,
    _flags: c_uint,
) -> i32 {
    api("cudaEventRecordWithFlags", |rt| record(rt, event, stream))
}

fn record(rt: &mut Runtime, event: *mut c_void, stream: *mut c_void) -> ApiResult {
    let e = event_index(rt, event as usize)?;
    let index = stream_index(rt, stream as usize)?;
    if let Some(capture) = rt.graphs.capturing.get(&index).cloned() {
        rt.graphs.captured_events.insert(e, capture);
        return Ok(());
    }
    rt.graphs.captured_events.remove(&e);
    let id = before_op(rt, index)?;
    let recorded = rt.emu.record_event(id).map_err(emu_failure)?;
    rt.events[e].recorded = Some(recorded);
    rt.events[e].stream = Some(index);
    rt.events[e].at = Some(Instant::now());
    Ok(())
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaEventSynchronize(event: *mut c_void) -> i32 {
    api("cudaEventSynchronize", |rt| {
        let e = event_index(rt, event as usize)?;
        // The host waits for the work before the record, which ran when it was queued: waiting
        // for the record's stream orders it before whatever the host does next.
        if let (Some(_), Some(stream)) = (rt.events[e].recorded, rt.events[e].stream) {
            host_waits_for(rt, stream)?;
        }
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cudaEventQuery(event: *mut c_void) -> i32 {
    api("cudaEventQuery", |rt| {
        event_index(rt, event as usize).map(|_| ())
    })
}

/// Milliseconds between two records on the emulator's clock: the host's time, during which the
/// emulator ran the work between them. Not a GPU's time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cudaEventElapsedTime(
    ms: *mut c_float,
    start: *mut c_void,
    end: *mut c_void,
) -> i32 {
    api("cudaEventElapsedTime", |rt| {
        let (s, e) = (
            event_index(rt, start as usize)?,
            event_index(rt, end as usize)?,
        );
        let (a, b) = (&rt.events[s], &rt.events[e]);
        if !a.timing || !b.timing {
            return Err(Failure::code(errors::INVALID_RESOURCE_HANDLE));
        }
        let (Some(t0), Some(t1)) = (a.at, b.at) else {
            return Err(Failure::code(errors::INVALID_RESOURCE_HANDLE));
        };
        let elapsed = t1.saturating_duration_since(t0).as_secs_f64() * 1e3;
        unsafe { put(ms, elapsed as c_float) }
    })
}
