//! Streams and events on several devices, and work held behind waits (racecheck across
//! operations).
//!
//! An operation queued on a stream (a launch, a copy, an event record or wait, a write of a
//! value) runs to its end when it is queued, unless its stream holds work behind a wait that is
//! not met yet — a wait for a value in memory (`cuStreamWaitValue32`) or for an event whose
//! record is itself held: then it joins the stream's queue and runs, in order, once the wait is
//! met by work on another stream. Work still held at a host synchronization can never run (every
//! stream holding work waits for something only held work would do): that is a finding, naming
//! where each stream stopped, and the held work is dropped as a watchdog would.
//!
//! What is checked is whether anything *ordered* two operations. Each stream carries a vector
//! clock over streams: running an operation ticks the stream's own entry, recording an event
//! copies the clock, waiting for an event joins it, a write of a value leaves the clock on the
//! word and a met wait for it joins that, and a host synchronization joins the clocks it waited
//! for into the host's, which every later operation starts from. An earlier operation A is
//! ordered before a later B exactly when B's clock has reached A's tick on A's stream. For every
//! operation since the last full synchronization the emulator keeps its footprint (which bytes
//! it read and wrote, one bit per byte), and each access of a new operation is tested against
//! the footprints of the operations not ordered before it.

use std::collections::VecDeque;

use super::allocs::{Allocation, DevicePtr, find_alloc};
use super::args::{KernelArg, LaunchConfig};
use super::devices::{
    Devices, EventId, EventState, Footprint, Held, OpAccess, OpCheck, Operation, StreamId,
    StreamState, Work, bad_device, hazard, join,
};
use super::emulator::Emulator;
use crate::error::EmuError;
use crate::module::Module;
use crate::options::RunOptions;
use crate::report;
use crate::report::{Finding, FindingKind, Hazard, MemLocation, RunReport};
use std::collections::HashMap;

impl Emulator {
    /// A new stream on the current device.
    pub fn create_stream(&mut self) -> StreamId {
        let id = self.devices.streams.len();
        for state in &mut self.devices.streams {
            state.clock.push(0);
        }
        self.devices.host.push(0);
        let mut clock = self.devices.host.clone();
        clock[id] = 0;
        let device = self.devices.current;
        let number = self
            .devices
            .streams
            .iter()
            .filter(|s| s.device == device)
            .count() as u32;
        self.devices.streams.push(StreamState {
            device,
            number,
            clock,
            queued: 0,
            held: VecDeque::new(),
            role: None,
        });
        StreamId(id as u32)
    }

    /// What reports say the stream is, after its number: `host thread 2's default stream`.
    pub fn set_stream_role(&mut self, stream: StreamId, role: impl Into<String>) {
        if let Some(state) = self.devices.streams.get_mut(stream.0 as usize) {
            state.role = Some(role.into());
        }
    }

    pub fn stream_device(&self, stream: StreamId) -> u32 {
        self.devices.streams[stream.0 as usize].device
    }

    /// How reports name a stream: `device 1's stream 0` (streams are numbered per device).
    fn stream_name(&self, stream: StreamId) -> String {
        let state = &self.devices.streams[stream.0 as usize];
        match &state.role {
            Some(role) => format!("device {}'s stream {} ({role})", state.device, state.number),
            None => format!("device {}'s stream {}", state.device, state.number),
        }
    }

    fn check_stream(&self, stream: StreamId) -> Result<(), EmuError> {
        if (stream.0 as usize) < self.devices.streams.len() {
            Ok(())
        } else {
            Err(bad_device(format!("stream {} was never created", stream.0)))
        }
    }

    /// Counts an operation queued on `stream` and returns its position (from 1), and whether
    /// the stream holds work it must wait behind.
    fn enqueue(&mut self, stream: StreamId) -> (u32, bool) {
        let state = &mut self.devices.streams[stream.0 as usize];
        state.queued += 1;
        (state.queued, !state.held.is_empty())
    }

    fn hold(&mut self, stream: StreamId, position: u32, work: Work) {
        let host = self.devices.host.clone();
        self.devices.streams[stream.0 as usize]
            .held
            .push_back(Held {
                position,
                host,
                work,
            });
    }

    /// Records an event on `stream`: a stream that waits for it waits for everything queued on
    /// `stream` so far (`cudaEventRecord`).
    pub fn record_event(&mut self, stream: StreamId) -> Result<EventId, EmuError> {
        self.check_stream(stream)?;
        let (position, behind) = self.enqueue(stream);
        let event = EventId(self.devices.events.len() as u32);
        let clock = (!behind).then(|| self.devices.streams[stream.0 as usize].clock.clone());
        self.devices.events.push(EventState {
            stream: stream.0,
            position,
            clock,
        });
        if behind {
            self.hold(stream, position, Work::Record(event));
        } else {
            self.run_held()?;
        }
        Ok(event)
    }

    /// Makes `stream`'s later work wait for `event` (`cudaStreamWaitEvent`), on any device.
    pub fn wait_event(&mut self, stream: StreamId, event: EventId) -> Result<(), EmuError> {
        self.check_stream(stream)?;
        let recorded = self
            .devices
            .events
            .get(event.0 as usize)
            .ok_or_else(|| bad_device(format!("event {} was never recorded", event.0)))?
            .clock
            .clone();
        let (position, behind) = self.enqueue(stream);
        match recorded {
            Some(clock) if !behind => {
                join(&mut self.devices.streams[stream.0 as usize].clock, &clock);
                Ok(())
            }
            _ => {
                self.hold(stream, position, Work::WaitEvent(event));
                Ok(())
            }
        }
    }

    /// The 4-byte word at `ptr`, or why `ptr` cannot hold one.
    fn value_at(&self, ptr: DevicePtr, what: &str) -> Result<(usize, u32), EmuError> {
        let index = find_alloc(&self.allocs, ptr.0, 4)
            .filter(|_| ptr.0.is_multiple_of(4))
            .ok_or_else(|| {
                bad_device(format!(
                    "{what} at {:#x}: not an aligned 4-byte word inside an allocation",
                    ptr.0
                ))
            })?;
        let a = &self.allocs[index];
        let off = (ptr.0 - a.base) as usize;
        let bytes = a.data[off..off + 4].try_into().expect("4 bytes");
        Ok((index, u32::from_le_bytes(bytes)))
    }

    /// Checks that `stream`'s device may reach `ptr` (its own memory, or a peer's with peer
    /// access), as a stream memory operation needs.
    fn check_reach(&self, stream: StreamId, ptr: DevicePtr, what: &str) -> Result<(), EmuError> {
        let (index, _) = self.value_at(ptr, what)?;
        let (from, to) = (self.stream_device(stream), self.allocs[index].device);
        if self.devices.peer_enabled(from, to) {
            Ok(())
        } else {
            Err(bad_device(format!(
                "{what} on {} at {}[{}] on device {to}: device {from} has no peer access to device {to} (cudaDeviceEnablePeerAccess)",
                self.stream_name(stream),
                self.allocs[index].label,
                (ptr.0 - self.allocs[index].base) / 4
            )))
        }
    }

    /// Makes `stream`'s later work wait until the 32-bit word at `ptr` is at least `at_least`
    /// (`cuStreamWaitValue32` with `CU_STREAM_WAIT_VALUE_GEQ`; compared as unsigned numbers).
    /// Once met by [`Emulator::write_value_on`], the wait orders the stream after the writer.
    pub fn wait_value_on(
        &mut self,
        stream: StreamId,
        ptr: DevicePtr,
        at_least: u32,
    ) -> Result<(), EmuError> {
        self.check_stream(stream)?;
        self.check_reach(stream, ptr, "a wait for a value")?;
        let (position, behind) = self.enqueue(stream);
        let work = Work::WaitValue { ptr, at_least };
        if behind || !self.ready(&work) {
            self.hold(stream, position, work);
        } else {
            self.meet(stream, ptr);
        }
        Ok(())
    }

    /// Queues a write of `value` to the 32-bit word at `ptr` on `stream`
    /// (`cuStreamWriteValue32`): it happens after everything queued on `stream` before it.
    pub fn write_value_on(
        &mut self,
        stream: StreamId,
        ptr: DevicePtr,
        value: u32,
    ) -> Result<(), EmuError> {
        self.check_stream(stream)?;
        self.check_reach(stream, ptr, "a write of a value")?;
        let (position, behind) = self.enqueue(stream);
        if behind {
            self.hold(stream, position, Work::WriteValue { ptr, value });
            return Ok(());
        }
        self.write_value_now(stream, ptr, value)?;
        self.run_held()
    }

    fn write_value_now(
        &mut self,
        stream: StreamId,
        ptr: DevicePtr,
        value: u32,
    ) -> Result<(), EmuError> {
        self.write(ptr, &value.to_le_bytes())?;
        let clock = self.devices.streams[stream.0 as usize].clock.clone();
        join(self.devices.value_clocks.entry(ptr.0).or_default(), &clock);
        Ok(())
    }

    /// A met wait for the word at `ptr`: `stream` is now ordered after its writers.
    fn meet(&mut self, stream: StreamId, ptr: DevicePtr) {
        if let Some(clock) = self.devices.value_clocks.get(&ptr.0) {
            join(&mut self.devices.streams[stream.0 as usize].clock, clock);
        }
    }

    /// Whether held work at the front of its stream can run now.
    fn ready(&self, work: &Work) -> bool {
        match work {
            Work::WaitEvent(event) => self.devices.events[event.0 as usize].clock.is_some(),
            Work::WaitValue { ptr, at_least } => self
                .value_at(*ptr, "a wait for a value")
                .is_ok_and(|(_, value)| value >= *at_least),
            _ => true,
        }
    }

    /// Runs held work whose waits are met, on every stream, until none is.
    fn run_held(&mut self) -> Result<(), EmuError> {
        loop {
            let mut ran = false;
            for s in 0..self.devices.streams.len() {
                let stream = StreamId(s as u32);
                while self.devices.streams[s]
                    .held
                    .front()
                    .is_some_and(|held| self.ready(&held.work))
                {
                    let held = self.devices.streams[s].held.pop_front().expect("a front");
                    let report = self.run_work(stream, held)?;
                    self.devices.deferred.append(report);
                    ran = true;
                }
            }
            if !ran {
                return Ok(());
            }
        }
    }

    fn run_work(&mut self, stream: StreamId, held: Held) -> Result<RunReport, EmuError> {
        let done = RunReport::finished();
        match held.work {
            Work::Launch {
                module,
                entry,
                config,
                args,
                options,
                label,
            } => self.launch_now(
                stream,
                &held.host,
                &module,
                &entry,
                &config,
                &args,
                &options,
                label.as_deref(),
            ),
            Work::Copy {
                dst,
                src,
                bytes,
                racecheck,
                label,
            } => self.copy_now(
                stream,
                &held.host,
                dst,
                src,
                bytes,
                racecheck,
                label.as_deref(),
            ),
            Work::Record(event) => {
                let clock = self.devices.streams[stream.0 as usize].clock.clone();
                self.devices.events[event.0 as usize].clock = Some(clock);
                Ok(done)
            }
            Work::WaitEvent(event) => {
                let clock = self.devices.events[event.0 as usize]
                    .clock
                    .clone()
                    .unwrap_or_default();
                join(&mut self.devices.streams[stream.0 as usize].clock, &clock);
                Ok(done)
            }
            Work::WaitValue { ptr, .. } => {
                self.meet(stream, ptr);
                Ok(done)
            }
            Work::WriteValue { ptr, value } => {
                self.write_value_now(stream, ptr, value)?;
                Ok(done)
            }
        }
    }

    /// The host waits for everything queued on `stream` (`cudaStreamSynchronize`). Work the
    /// stream still holds afterwards can never run; the next [`Emulator::synchronize`] reports it.
    pub fn synchronize_stream(&mut self, stream: StreamId) -> Result<(), EmuError> {
        self.check_stream(stream)?;
        self.run_held()?;
        let clock = self.devices.streams[stream.0 as usize].clock.clone();
        join(&mut self.devices.host, &clock);
        self.devices.forget_ordered();
        Ok(())
    }

    /// The host waits for everything queued on every stream of every device. Returns what held
    /// work found when it ran since the last call, and, when work is held that can never run, a
    /// [`FindingKind::StreamsStuck`] finding naming where each stream stopped; that work is
    /// dropped.
    pub fn synchronize(&mut self) -> Result<RunReport, EmuError> {
        self.run_held()?;
        let stuck = self.stuck_streams();
        for state in &mut self.devices.streams {
            state.held.clear();
        }
        let Devices { streams, host, .. } = &mut self.devices;
        for state in streams.iter() {
            join(host, &state.clock);
        }
        self.devices.history.clear();
        let mut report = std::mem::replace(&mut self.devices.deferred, RunReport::finished());
        if let Some(finding) = stuck {
            report.findings.push(finding);
            report.completed = false;
        }
        Ok(report)
    }

    /// The finding for held work that can never run: a line per stream that holds some, naming
    /// the operation it stopped at and what that waits for.
    fn stuck_streams(&self) -> Option<Finding> {
        let mut stops = Vec::new();
        for (s, state) in self.devices.streams.iter().enumerate() {
            let Some(front) = state.held.front() else {
                continue;
            };
            let waits = match &front.work {
                Work::WaitValue { ptr, at_least } => {
                    let place = self.word_location(*ptr);
                    let now = self.value_at(*ptr, "").map_or(0, |(_, v)| v);
                    format!(
                        "{}[{}] ≥ {at_least} (on device {}, holds {now})",
                        place.label,
                        place.index,
                        self.device_of(*ptr).unwrap_or(0)
                    )
                }
                Work::WaitEvent(event) => {
                    let recorded = &self.devices.events[event.0 as usize];
                    format!(
                        "the event {} records at its operation {}",
                        self.stream_name(StreamId(recorded.stream)),
                        recorded.position
                    )
                }
                _ => "nothing (an emulator bug)".into(),
            };
            stops.push(format!(
                "{}, operation {}: waits for {waits}; {} more behind it",
                self.stream_name(StreamId(s as u32)),
                front.position,
                state.held.len() - 1
            ));
        }
        if stops.is_empty() {
            return None;
        }
        stops.push(
            "nothing queued can meet these waits: on a GPU the host would wait forever".into(),
        );
        Some(Finding {
            kind: FindingKind::StreamsStuck,
            count: 1,
            location: None,
            accesses: Vec::new(),
            threads: Vec::new(),
            why: stops.join("\n  "),
        })
    }

    /// Where a 4-byte word is, as reports name memory (`flags0[1]`: allocation and word).
    fn word_location(&self, ptr: DevicePtr) -> MemLocation {
        let a = find_alloc(&self.allocs, ptr.0, 4).map(|i| &self.allocs[i]);
        MemLocation {
            space: report::Space::Global,
            label: a.map_or_else(|| "?".into(), |a| a.label.clone()),
            index: a.map_or(0, |a| ((ptr.0 - a.base) / 4) as i64),
            address: ptr.0,
            element_bytes: 4,
            c_index: None,
            note: None,
        }
    }

    /// Queues a launch on `stream` (on the stream's device) and runs it, unless the stream holds
    /// work behind an unmet wait: then it runs when that is met, and what it finds comes back
    /// from [`Emulator::synchronize`]. The report holds, beside the launch's own findings, its
    /// accesses that conflict with an earlier operation that no stream order, event, met wait
    /// or synchronization orders before it.
    pub fn launch_on(
        &mut self,
        stream: StreamId,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
    ) -> Result<RunReport, EmuError> {
        self.launch_on_labelled(stream, module, entry, config, args, options, None)
    }

    /// [`Emulator::launch_on`], named `label` in reports of races between streams instead of
    /// by its entry (`add at streams.py:16`: a front end names the host line that queued it, so
    /// that a race names the lines of both operations).
    #[allow(clippy::too_many_arguments)]
    pub fn launch_on_labelled(
        &mut self,
        stream: StreamId,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        label: Option<&str>,
    ) -> Result<RunReport, EmuError> {
        self.check_stream(stream)?;
        let (position, behind) = self.enqueue(stream);
        if behind {
            let work = Work::Launch {
                module: Box::new(module.clone()),
                entry: entry.to_string(),
                config: *config,
                args: args.to_vec(),
                options: *options,
                label: label.map(str::to_string),
            };
            self.hold(stream, position, work);
            return Ok(RunReport::finished());
        }
        let host = self.devices.host.clone();
        let report = self.launch_now(stream, &host, module, entry, config, args, options, label)?;
        self.run_held()?;
        Ok(report)
    }

    #[allow(clippy::too_many_arguments)]
    fn launch_now(
        &mut self,
        stream: StreamId,
        host: &[u64],
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        label: Option<&str>,
    ) -> Result<RunReport, EmuError> {
        let device = self.stream_device(stream);
        let (tick, unordered) = self.devices.start(stream, host);
        let name = format!("{} on {}", label.unwrap_or(entry), self.stream_name(stream));
        let check = options.racecheck.then(|| OpCheck {
            unordered: unordered
                .iter()
                .map(|&i| {
                    let op = &self.devices.history[i];
                    let same_device = self.devices.streams[op.stream as usize].device == device;
                    (
                        op.name.clone(),
                        std::sync::Arc::new(by_index(&self.allocs, &op.footprints)),
                        same_device,
                    )
                })
                .collect(),
            own: Vec::new(),
            name: name.clone(),
            segments: None,
        });
        let (report, _, check) =
            self.run_launch_on(device, check, module, entry, config, args, options, None)?;
        let footprints = check
            .map(|c| by_base(&self.allocs, c.own))
            .unwrap_or_default();
        self.devices.history.push(Operation {
            name,
            stream: stream.0,
            tick,
            footprints,
        });
        Ok(report)
    }

    /// Queues a copy of `bytes` bytes from `src` to `dst` on `stream` and runs it (or holds it,
    /// as [`Emulator::launch_on`] does) (`cudaMemcpyAsync`, or `cudaMemcpyPeerAsync` when they
    /// are on different devices: a copy needs no peer access). Findings are the copy's conflicts
    /// with earlier unordered operations.
    pub fn copy_on(
        &mut self,
        stream: StreamId,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        racecheck: bool,
    ) -> Result<RunReport, EmuError> {
        self.copy_on_labelled(stream, dst, src, bytes, racecheck, None)
    }

    /// [`Emulator::copy_on`], named `label` in reports of races between streams (`the copy to
    /// the device at streams.py:15`; a front end that stages a host buffer in device memory
    /// names what the copy is to the user, and the host line that queued it).
    pub fn copy_on_labelled(
        &mut self,
        stream: StreamId,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        racecheck: bool,
        label: Option<&str>,
    ) -> Result<RunReport, EmuError> {
        self.check_stream(stream)?;
        let outside = |what: &str, ptr: DevicePtr| {
            EmuError::HostAccess(format!(
                "copy of {bytes} bytes: the {what} at {:#x} is outside every allocation",
                ptr.0
            ))
        };
        find_alloc(&self.allocs, src.0, bytes as u64).ok_or_else(|| outside("source", src))?;
        find_alloc(&self.allocs, dst.0, bytes as u64).ok_or_else(|| outside("destination", dst))?;
        let (position, behind) = self.enqueue(stream);
        if behind {
            let work = Work::Copy {
                dst,
                src,
                bytes,
                racecheck,
                label: label.map(str::to_string),
            };
            self.hold(stream, position, work);
            return Ok(RunReport::finished());
        }
        let host = self.devices.host.clone();
        let report = self.copy_now(stream, &host, dst, src, bytes, racecheck, label)?;
        self.run_held()?;
        Ok(report)
    }

    #[allow(clippy::too_many_arguments)]
    fn copy_now(
        &mut self,
        stream: StreamId,
        host: &[u64],
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        racecheck: bool,
        label: Option<&str>,
    ) -> Result<RunReport, EmuError> {
        let freed = || EmuError::HostAccess(format!("copy of {bytes} bytes from freed memory"));
        let s = find_alloc(&self.allocs, src.0, bytes as u64).ok_or_else(freed)?;
        let d = find_alloc(&self.allocs, dst.0, bytes as u64).ok_or_else(freed)?;
        let (tick, unordered) = self.devices.start(stream, host);
        let (src_dev, dst_dev) = (self.allocs[s].device, self.allocs[d].device);
        let name = if let Some(label) = label {
            format!("{label} on {}", self.stream_name(stream))
        } else if src_dev == dst_dev {
            format!("a copy on {}", self.stream_name(stream))
        } else {
            format!(
                "a peer copy from device {src_dev} to device {dst_dev} on {}",
                self.stream_name(stream)
            )
        };
        let mut findings = Vec::new();
        let mut footprints = HashMap::new();
        if racecheck {
            let sides = [(s, src, OpAccess::Read), (d, dst, OpAccess::Write)];
            for (index, ptr, access) in sides {
                let a = &self.allocs[index];
                let off = (ptr.0 - a.base) as usize;
                for &i in &unordered {
                    let op = &self.devices.history[i];
                    let Some(footprint) = op.footprints.get(&a.base) else {
                        continue;
                    };
                    // A copy's accesses are plain: whose device the other side ran on is moot.
                    if let Some((byte, wrote)) = footprint.conflict(access, off, bytes, false) {
                        findings.push(copy_conflict(
                            a,
                            byte,
                            &name,
                            &op.name,
                            hazard(access, wrote),
                        ));
                        break;
                    }
                }
                let entry: &mut Footprint = footprints.entry(a.base).or_default();
                entry.record(access, off, bytes, a.data.len());
            }
        }
        let src_off = (src.0 - self.allocs[s].base) as usize;
        let data = self.allocs[s].data[src_off..src_off + bytes].to_vec();
        self.write(dst, &data)?;
        self.devices.history.push(Operation {
            name,
            stream: stream.0,
            tick,
            footprints,
        });
        Ok(RunReport {
            findings,
            ..RunReport::finished()
        })
    }
}

pub(crate) fn copy_conflict(
    a: &Allocation,
    byte: usize,
    copy: &str,
    other: &str,
    hazard: Hazard,
) -> Finding {
    let what = match hazard {
        Hazard::ReadAfterWrite => "reads bytes that",
        Hazard::WriteAfterRead | Hazard::WriteAfterWrite => "writes bytes that",
    };
    let earlier = match hazard {
        Hazard::WriteAfterRead => "read",
        Hazard::ReadAfterWrite | Hazard::WriteAfterWrite => "wrote",
    };
    Finding {
        kind: FindingKind::StreamRace { hazard },
        count: 1,
        location: Some(MemLocation {
            space: report::Space::Global,
            label: a.label.clone(),
            index: byte as i64,
            address: a.base + byte as u64,
            element_bytes: 1,
            c_index: None,
            note: Some("byte offset".into()),
        }),
        accesses: Vec::new(),
        threads: Vec::new(),
        why: format!(
            "{copy} {what} {other} {earlier}, and no stream order, event wait or synchronization orders the two"
        ),
    }
}

/// Footprints keyed by allocation base, laid out by the allocations' current indices.
fn by_index(allocs: &[Allocation], footprints: &HashMap<u64, Footprint>) -> Vec<Option<Footprint>> {
    allocs
        .iter()
        .map(|a| footprints.get(&a.base).cloned())
        .collect()
}

fn by_base(allocs: &[Allocation], own: Vec<Option<Footprint>>) -> HashMap<u64, Footprint> {
    own.into_iter()
        .enumerate()
        .filter_map(|(i, footprint)| Some((allocs.get(i)?.base, footprint?)))
        .collect()
}

impl Emulator {
    /// Makes the emulator hold `count` devices (at least 1), each with its own memory in one
    /// address space, as CUDA's unified addressing gives a process. Allocations made so far
    /// stay on device 0.
    pub fn set_device_count(&mut self, count: u32) -> Result<(), EmuError> {
        if count == 0 || count > 64 {
            return Err(bad_device(format!(
                "{count} devices: the emulator holds from 1 to 64"
            )));
        }
        let old = self.devices.count;
        let mut peer = vec![false; (count * count) as usize];
        for from in 0..old.min(count) {
            for to in 0..old.min(count) {
                peer[(from * count + to) as usize] = self.devices.peer_enabled(from, to);
            }
        }
        self.devices.count = count;
        self.devices.peer = peer;
        self.devices.current = self.devices.current.min(count - 1);
        Ok(())
    }

    pub fn device_count(&self) -> u32 {
        self.devices.count
    }

    /// The device later allocations and launches go to (`cudaSetDevice`).
    pub fn set_device(&mut self, device: u32) -> Result<(), EmuError> {
        self.check_device(device)?;
        self.devices.current = device;
        Ok(())
    }

    pub fn current_device(&self) -> u32 {
        self.devices.current
    }

    pub(crate) fn check_device(&self, device: u32) -> Result<(), EmuError> {
        if device < self.devices.count {
            Ok(())
        } else {
            Err(bad_device(format!(
                "device {device} does not exist: the emulator holds {} (device 0 to {})",
                self.devices.count,
                self.devices.count - 1
            )))
        }
    }

    /// The device whose memory holds `ptr`.
    pub fn device_of(&self, ptr: DevicePtr) -> Option<u32> {
        find_alloc(&self.allocs, ptr.0, 1).map(|i| self.allocs[i].device)
    }

    /// Lets kernels on the current device load and store `peer`'s memory
    /// (`cudaDeviceEnablePeerAccess(peer)`); without it such an access faults on a GPU.
    pub fn enable_peer_access(&mut self, peer: u32) -> Result<(), EmuError> {
        self.check_device(peer)?;
        let from = self.devices.current;
        if from == peer {
            return Err(bad_device(format!(
                "device {peer} cannot enable peer access to itself"
            )));
        }
        let count = self.devices.count;
        self.devices.peer[(from * count + peer) as usize] = true;
        Ok(())
    }

    pub fn peer_access_enabled(&self, from: u32, to: u32) -> bool {
        from < self.devices.count && to < self.devices.count && self.devices.peer_enabled(from, to)
    }
}
