//! A launch: its set-up (`Emulator::run_launch`), the resident blocks and their schedules
//! (hardware order, seeded random, adversarial), and barrier release. What ends a launch that
//! never finishes is in `watchdog.rs`.

use super::args::{KernelArg, LaunchConfig};
use super::block;
use super::block::{Step, prepare_block};
use super::child_work::{ChildWork, DeviceRuntime};
use super::collector::Collector;
use super::ctx::Ctx;
use super::devices::OpCheck;
use super::emulator::Emulator;
use super::launch_state::{Launch, Watchdog};
use super::limits::{MAX_ALL_AT_ONCE_THREADS, MAX_REGISTER_BYTES, STALL_ROUNDS};
use super::parallel::{Crew, Dismissal, MOST_WAITING, detector_shards};
use super::plan::Rounds;
use super::plan::Waiting;
use super::splitter::Rng;
use super::timing::{Clocks, Lap};
use super::views::{BlockMemory, BlockViews, Globals};
use super::warp::{Bar, BlockState, Warp};
use crate::error::EmuError;
use crate::module::Module;
use crate::options::{RunOptions, Schedule};
use crate::race::Racecheck;
use crate::report::{FindingKind, RunReport};
use crate::trace::{Recorder, TraceInstr, TraceWarp};

/// What a launch leaves: its report, its trace when one was asked for, and the stream
/// bookkeeping handed back to the caller that queued it.
pub(crate) type LaunchOutcome = (RunReport, Option<Box<Recorder>>, Option<OpCheck>);

impl Emulator {
    /// A launch that no stream queues: like one on CUDA's legacy default stream, it starts
    /// after everything queued before it, on the current device; what held work found when
    /// it ran meanwhile comes first in its report.
    pub(crate) fn run_launch(
        &mut self,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        trace_limit: Option<usize>,
    ) -> Result<(RunReport, Option<Box<Recorder>>), EmuError> {
        let earlier = self.synchronize()?;
        let device = self.devices.current;
        let (mut report, recorder, _) = self.run_launch_on(
            device,
            None,
            module,
            entry,
            config,
            args,
            options,
            trace_limit,
        )?;
        if !earlier.findings.is_empty() {
            report.completed &= earlier.completed;
            report.findings.splice(0..0, earlier.findings);
        }
        Ok((report, recorder))
    }

    /// A launch and every grid and copy it queued from the device (dynamic parallelism), which
    /// it is complete only after (`device_runtime.rs`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_launch_on(
        &mut self,
        device: u32,
        op_check: Option<OpCheck>,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        trace_limit: Option<usize>,
    ) -> Result<LaunchOutcome, EmuError> {
        let mut op_check = op_check;
        let queues_from_device = module.calls_builtin(|f| {
            matches!(
                f,
                crate::ir::Builtin::Cdp(
                    crate::ir::Cdp::LaunchDevice
                        | crate::ir::Cdp::LaunchDeviceV2
                        | crate::ir::Cdp::MemcpyAsync
                        | crate::ir::Cdp::MemsetAsync
                )
            )
        });
        if queues_from_device && op_check.is_none() && options.racecheck {
            // A launch on no stream has nothing earlier to be checked against, but its children
            // must still be checked against what it did after launching them.
            op_check = Some(OpCheck {
                unordered: Vec::new(),
                own: Vec::new(),
                name: crate::parse::function_display_name(entry),
                segments: None,
            });
        }
        if let Some(check) = op_check.as_mut()
            && queues_from_device
        {
            check.segments = Some(vec![Vec::new()]);
        }
        let ((mut report, trace, mut op_check), queued) = self.run_grid(
            device,
            op_check,
            module,
            entry,
            config,
            args,
            options,
            trace_limit,
            0,
        )?;
        if !queued.is_empty() {
            let timings = self.last_timings.take();
            self.run_children(
                device,
                module,
                options,
                &mut report,
                &mut op_check,
                queued,
                0,
            )?;
            self.last_timings = timings;
        }
        Ok((report, trace, op_check))
    }

    /// One grid, at `depth` launches below the host, and the work its threads queued.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_grid(
        &mut self,
        device: u32,
        op_check: Option<OpCheck>,
        module: &Module,
        entry: &str,
        config: &LaunchConfig,
        args: &[KernelArg],
        options: &RunOptions,
        trace_limit: Option<usize>,
        depth: u32,
    ) -> Result<(LaunchOutcome, Vec<ChildWork>), EmuError> {
        let started = std::time::Instant::now();
        self.last_timings = None;
        let fidx = module
            .funcs
            .iter()
            .position(|f| f.is_entry && f.name == entry)
            .ok_or_else(|| EmuError::UnknownEntry(entry.to_string()))?;
        let bad = |message: String| EmuError::BadLaunch {
            entry: entry.to_string(),
            message,
        };
        let f = &module.funcs[fidx];
        let [bx, by, bz] = config.block;
        let [gx, gy, gz] = config.grid;
        if config.block.contains(&0) || config.grid.contains(&0) {
            return Err(bad(format!(
                "grid {:?} and block {:?} must have no zero dimension",
                config.grid, config.block
            )));
        }
        let tpb64 = bx as u64 * by as u64 * bz as u64;
        if tpb64 > 1024 || bz > 64 {
            return Err(bad(format!(
                "block {bx}x{by}x{bz} has {tpb64} threads; the limit is 1024 (and z <= 64)"
            )));
        }
        if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
            return Err(bad(format!(
                "grid {gx}x{gy}x{gz}: x is limited to 2147483647, y and z to 65535"
            )));
        }
        let nblocks = gx as u64 * gy as u64 * gz as u64;
        let tpb = tpb64 as u32;
        let wpb = tpb.div_ceil(32);
        // Only resident blocks have threads, registers and shared memory: the hardware schedule
        // starts the next block when one finishes, so any grid runs in bounded memory.
        let resident_blocks = match options.schedule {
            // A cooperative launch's blocks are resident together, as CUDA guarantees: a grid
            // sync's early blocks would otherwise spin while the rest wait for a slot, and only
            // the stall rounds' doubling patience, or the watchdog, would start them.
            Schedule::Hardware if options.grid_workspace.is_some() => nblocks,
            Schedule::Hardware => (options.resident_threads / tpb).max(1) as u64,
            Schedule::Random { .. } | Schedule::Adversarial { .. } | Schedule::Lanes { .. } => {
                if nblocks * tpb64 > MAX_ALL_AT_ONCE_THREADS {
                    return Err(bad(format!(
                        "the random, adversarial and lanes schedules start every block at once, and {} threads are more than they hold ({MAX_ALL_AT_ONCE_THREADS}); the hardware schedule runs any grid",
                        nblocks * tpb64
                    )));
                }
                nblocks
            }
        }
        .min(nblocks);
        let reg_bytes = resident_blocks * wpb as u64 * 32 * (module.nregs as u64) * 8;
        if reg_bytes > MAX_REGISTER_BYTES {
            return Err(bad(format!(
                "{resident_blocks} resident blocks of {tpb} threads with {} registers each need more than the emulator's {} MiB of registers; lower RunOptions::resident_threads",
                module.nregs,
                MAX_REGISTER_BYTES >> 20
            )));
        }
        let resident_blocks = resident_blocks as u32;
        if trace_limit.is_some() && nblocks > u32::MAX as u64 / wpb as u64 {
            return Err(bad(format!("{nblocks} blocks are too many to trace")));
        }
        let total_shared = f.static_shared as u64 + config.dynamic_shared_bytes as u64;
        if total_shared > options.shared_limit as u64 {
            return Err(bad(format!(
                "{} bytes of static + {} bytes of dynamic shared memory exceed {} KiB",
                f.static_shared,
                config.dynamic_shared_bytes,
                options.shared_limit / 1024
            )));
        }
        if args.len() != f.params.len() {
            return Err(bad(format!(
                "kernel takes {} arguments, {} given",
                f.params.len(),
                args.len()
            )));
        }
        let mut kparams = vec![0u8; f.kparam_size as usize];
        for (i, (a, p)) in args.iter().zip(&f.params).enumerate() {
            let b = a.bytes();
            if b.len() as u32 != p.size {
                return Err(bad(format!(
                    "argument {i} is {} bytes ({a:?}) but the parameter is {} bytes",
                    b.len(),
                    p.size
                )));
            }
            if matches!(a, KernelArg::Ptr(_)) && p.ty.is_some_and(|t| t.float()) {
                return Err(bad(format!(
                    "argument {i} is a pointer but the parameter is a float"
                )));
            }
            let off = p.offset as usize;
            kparams[off..off + b.len()].copy_from_slice(&b);
        }
        if device != 0 && !module.globals.is_empty() {
            return Err(bad(format!(
                "the emulator keeps one copy of a module's `__device__` and `__constant__` variables, on device 0, and this launch is on device {device}; pass such data as kernel arguments instead"
            )));
        }
        self.load_module_globals(module);
        let dyn_base = module.static_shared.div_ceil(16) * 16;
        let mut shared_size = if config.dynamic_shared_bytes > 0 {
            dyn_base + config.dynamic_shared_bytes
        } else {
            module.static_shared
        };
        // The reserved region (cooperative groups' multi-warp tile barriers) follows the rest.
        let reserved_base = shared_size.div_ceil(16) * 16;
        if module.reserved_smem {
            shared_size = reserved_base + crate::module::RESERVED_SMEM;
        }
        // Uninitialized shared memory holds garbage on hardware; zeros would hide missing
        // initialization, so fill it with a nonzero pattern.
        let mut garbage: Vec<u8> = (0..shared_size as usize)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 24) as u8 | 0x41)
            .collect();
        // Except the reserved region, which the launch clears, as a GPU's does.
        if module.reserved_smem {
            garbage[reserved_base as usize..].fill(0);
        }
        let trace = trace_limit.map(|limit| {
            Box::new(self.recorder(
                module,
                limit,
                nblocks as u32,
                tpb,
                wpb,
                config.dynamic_shared_bytes,
            ))
        });
        let ctx = Ctx {
            m: module,
            allocs: Globals::new(&mut self.allocs, &mut self.heap),
            opts: *options,
            grid: config.grid,
            block: config.block,
            tpb,
            wpb,
            kparams,
            mem: BlockViews::default(),
            shared_init: garbage,
            shared_words: (shared_size as usize).div_ceil(64),
            shared_size,
            dyn_base,
            reserved_base,
            dyn_size: config.dynamic_shared_bytes,
            local_size: module.local_size,
            race: None,
            findings: Collector::default(),
            race_findings: Collector::default(),
            last_alloc: usize::MAX,
            device,
            peer: (0..self.devices.count)
                .map(|to| self.devices.peer_enabled(device, to))
                .collect(),
            op_check: op_check.map(Box::new),
            clock: 0,
            thread_instrs: 0,
            thread_steps: 0,
            progress: 0,
            aborted: false,
            refusal: None,
            printf: Vec::new(),
            printf_bytes: 0,
            printf_dropped: 0,
            conditions: Vec::new(),
            touched_global_sync: false,
            compiled: module.tier(options.resolved_engine(nblocks * tpb64), trace.is_some()),
            trace,
            banks: options.bank_conflicts.then(Box::default),
            lane_stores: Vec::with_capacity(32),
            copies_in_flight: Vec::new(),
            round_tags: Vec::new(),
            joined_rounds: Vec::new(),
            cdp: DeviceRuntime::at_depth(depth),
            region_rounds: 0,
            steps_end_at: options.step_budget,
        };
        let mut l = Launch {
            ctx,
            entry_pc: f.start,
            warps: Vec::new(),
            blocks: Vec::new(),
            memory: BlockMemory::default(),
            nblocks,
            resident_blocks,
            started: 0,
            free_slots: Vec::new(),
            watchdog: Watchdog {
                next_check: options.watchdog_window,
                ..Watchdog::default()
            },
            clocks: Clocks::default(),
            detector_here: None,
            blocks_on_one_core: false,
        };
        let mut measure_detector = false;
        if options.racecheck {
            // A finding names its memory when it is reported, so heap blocks that may be freed
            // meanwhile keep the detector answering each access at once; so does a trace, which
            // links each finding to the access before it.
            let batched = trace_limit.is_none() && !module.frees_heap();
            let parallel = options.schedule == Schedule::Hardware && l.may_run_in_parallel();
            let measured = parallel
                .then(|| self.detector_shares.get(entry).copied())
                .flatten();
            // Below four cores the detector shares the launch's thread while blocks run on
            // several. When it took a third of the work or more, the blocks run on the
            // launch's core instead and the detector on a core of its own.
            l.blocks_on_one_core = options.cores() < 4 && measured.is_some_and(|f| f >= 1.0 / 3.0);
            let blocks_on_several = parallel && !l.blocks_on_one_core;
            let shards = detector_shards(options.cores(), blocks_on_several, measured);
            measure_detector = blocks_on_several && batched;
            l.detector_here = measured.filter(|_| shards == 0);
            let model = options.memory_model;
            let race = Racecheck::start(batched.then_some(shards), tpb, wpb, bx, model);
            l.ctx.race = Some(race);
        }
        let completed = l.run();
        let (race_detector, shards) = l.ctx.finish_racecheck();
        if let Some(refusal) = l.ctx.refusal.take() {
            return Err(refusal);
        }
        let thread_instructions = l.ctx.thread_instrs;
        let bank_conflicts = match &l.ctx.banks {
            Some(tally) => tally.by_line(|pc| l.ctx.src(pc)),
            None => Vec::new(),
        };
        let shadow_bytes = match &l.ctx.race {
            Some(Racecheck::Inline(race)) => race.shadow_bytes(),
            Some(Racecheck::Finished(bytes)) => *bytes,
            _ => 0,
        };
        let report = RunReport {
            bank_conflicts,
            findings: std::mem::take(&mut l.ctx.findings)
                .merge(std::mem::take(&mut l.ctx.race_findings)),
            completed,
            thread_instructions,
            printf: std::mem::take(&mut l.ctx.printf),
            printf_dropped: l.ctx.printf_dropped,
            conditions: std::mem::take(&mut l.ctx.conditions),
            shadow_bytes,
        };
        let (trace, op_check) = (l.ctx.trace.take(), l.ctx.op_check.take());
        let queued = std::mem::take(&mut l.ctx.cdp.queued);
        let clocks = std::mem::take(&mut l.clocks);
        // A detector that answered each access at once is freed aside too, as a piped one's
        // shards were (see `free_aside`); the rest is freed here, in the launch's time.
        if let Some(race @ Racecheck::Inline(_)) = l.ctx.race.take() {
            free_aside(race);
        }
        drop(l);
        let timings = clocks.timings(started, race_detector, shards);
        if measure_detector && let Some(share) = timings.detector_share() {
            self.detector_shares.insert(entry.to_string(), share);
        }
        self.tally(entry, &timings, thread_instructions);
        self.last_timings = Some(timings);
        Ok(((report, trace, op_check.map(|check| *check)), queued))
    }

    /// A recorder for a launch of `module`: its warps, its instructions' lines, the global
    /// allocations (with their contents now, before the launch) and every block's shared
    /// variables.
    pub(crate) fn recorder(
        &self,
        m: &Module,
        limit: usize,
        nblocks: u32,
        tpb: u32,
        wpb: u32,
        dynamic_shared_bytes: u32,
    ) -> Recorder {
        let warps = (0..nblocks)
            .flat_map(|block| {
                (0..wpb).map(move |wi| TraceWarp {
                    block,
                    first_thread: wi * 32,
                    lanes: (tpb - wi * 32).min(32),
                })
            })
            .collect();
        let program = m
            .code
            .iter()
            .map(|ins| {
                let loc = m.locs.get(ins.loc as usize);
                TraceInstr {
                    line: loc.map_or(0, |l| l.line),
                    inlined_at: loc.and_then(|l| l.inlined_at.map(|x| x.1)),
                    ptx_line: ins.ptx_line,
                }
            })
            .collect();
        let globals = self
            .allocs
            .iter()
            .map(|a| {
                let initial =
                    (a.data.len() <= crate::trace::MAX_INITIAL_BYTES).then(|| a.data.clone());
                (a.label.clone(), a.data.len() as u64, initial)
            })
            .collect();
        let mut shared: Vec<(String, u64, u64)> = m
            .shared
            .iter()
            .map(|v| (v.name.clone(), v.offset as u64, v.size as u64))
            .collect();
        if dynamic_shared_bytes > 0 {
            let name = m
                .dyn_names
                .first()
                .cloned()
                .unwrap_or_else(|| "extern __shared__".into());
            let base = m.static_shared.div_ceil(16) * 16;
            shared.push((name, base as u64, dynamic_shared_bytes as u64));
        }
        Recorder::new(limit, warps, program, globals, shared, nblocks)
    }
}

impl Launch<'_> {
    pub(crate) fn over_budget(&self) -> bool {
        self.ctx.thread_instrs >= self.ctx.opts.step_budget
    }

    /// Stop now: an assert failed, the step budget ran out, the watchdog found the kernel stuck,
    /// or the caller was interrupted (Ctrl-C).
    pub(crate) fn must_stop(&mut self) -> bool {
        self.ctx.aborted
            || self.over_budget()
            || crate::interrupt::requested()
            || self.watchdog_says_stuck()
    }

    /// The watchdog found resident blocks stuck while others have not started: start more (up to
    /// twice as many, within the register memory), since a block not yet started may be the one
    /// they wait for. False when none can start.
    pub(crate) fn grow_residency(&mut self) -> bool {
        let nblocks = self.nblocks;
        let per_block = self.ctx.wpb as u64 * 32 * self.ctx.m.nregs as u64 * 8;
        let affordable = (MAX_REGISTER_BYTES / per_block.max(1)).min(nblocks) as u32;
        let target = self.resident_blocks.saturating_mul(2).min(affordable);
        if self.started >= nblocks || target <= self.resident_blocks {
            return false;
        }
        self.resident_blocks = target;
        self.watchdog.stuck = false;
        self.watchdog.registers = None;
        self.ctx.progress += 1;
        true
    }

    /// Starts the next block in a free slot (a new one if none is free), ready to run; returns
    /// the slot.
    pub(crate) fn start_next_block(&mut self) -> u32 {
        let (slot, block) = self.claim_next_block();
        self.prepare_claimed(slot, block);
        slot
    }

    /// The start of the next block that must happen in order: its slot (free, or a new one,
    /// whose memory is made here), its barrier state, and the race detector's word of it.
    /// Its warps and memory are made ready by [`prepare_block`], on the core that will run it.
    pub(crate) fn claim_next_block(&mut self) -> (u32, u64) {
        let (slot, block) = self.claim_slot();
        if let Some(race) = self.ctx.race.as_mut() {
            race.block_started(slot, block);
        }
        (slot, block)
    }

    /// [`Launch::claim_next_block`] without the race detector's word of it, which the caller
    /// gives in order.
    fn claim_slot(&mut self) -> (u32, u64) {
        let block = self.started;
        self.started += 1;
        self.ctx.progress += 1;
        let (tpb, wpb) = (self.ctx.tpb, self.ctx.wpb);
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                let slot = self.blocks.len() as u32;
                self.blocks.push(BlockState::default());
                let regs_len = self.ctx.m.nregs as usize;
                for _ in 0..wpb {
                    self.warps.push(Warp {
                        regs: vec![[0; 32]; regs_len],
                        ..Warp::default()
                    });
                }
                // Sized now, so that views made before the block runs reach all of it.
                self.memory.shared.push(self.ctx.shared_init.clone());
                let local = self.memory.local.len() + tpb as usize * self.ctx.local_size as usize;
                self.memory.local.resize(local, 0);
                let sw = self.ctx.shared_words;
                self.memory
                    .shared_written
                    .resize((slot as usize + 1) * sw, 0);
                self.ctx.mem = self.memory.views();
                slot
            }
        };
        let state = &mut self.blocks[slot as usize];
        state.live = tpb;
        state.live_warps = if wpb >= 64 {
            u64::MAX
        } else {
            (1u64 << wpb) - 1
        };
        state.exited = 0;
        state.rounds = 0;
        state.barriers = 0;
        state.copies_in_flight.clear();
        state.first_exit = None;
        state.first_exit_skipped = None;
        state.exit_branch = None;
        state.bars.clear();
        state.bars.resize(16, Bar::default());
        (slot, block)
    }

    /// Makes a claimed slot ready on the launch's own core.
    pub(crate) fn prepare_claimed(&mut self, slot: u32, block: u64) {
        let wpb = self.ctx.wpb as usize;
        let warps = &mut self.warps[slot as usize * wpb..(slot as usize + 1) * wpb];
        prepare_block(&self.ctx, self.entry_pc, slot, block, warps);
    }

    /// Frees a finished block's slot; the race detector hears of it in line (`Waiting`).
    fn free_slot(&mut self, slot: u32) {
        // The slot's warps keep their call stacks' room for the next block (`start_next_block`).
        self.free_slots.push(slot);
    }

    /// Round robin over the resident blocks' warps, one instruction each, in warp order; a block
    /// that finishes makes room for the next one.
    pub(crate) fn run_hardware(&mut self) {
        // A worker beyond one per resident block would only spin, on a core the others' turns
        // (and the system) could use.
        let workers = self.crew_size().min(self.resident_blocks as usize);
        if workers == 0 {
            self.run_rounds(None);
            return;
        }
        let crew = Crew::new(workers, self.entry_pc, self.ctx.opts.cores());
        let forks: Vec<Ctx> = (0..workers).map(|_| self.ctx.fork()).collect();
        let mut own = self.ctx.fork();
        std::thread::scope(|scope| {
            // Sends the workers home however the rounds end, a panic included.
            let _dismissal = Dismissal(&crew);
            let mut started = Vec::with_capacity(workers);
            for (index, fork) in forks.into_iter().enumerate() {
                let crew = &crew;
                let worker = std::thread::Builder::new()
                    .name(format!("launch worker {}", index + 1))
                    .spawn_scoped(scope, move || crew.work(index, fork));
                started.extend(worker.ok());
            }
            let on_several = (started.len() == workers).then_some((&crew, &mut own));
            self.run_rounds(on_several)
                .tally(crew.taken_over(), crew.cut_short(), crew.met());
            // Sent home now rather than when `_dismissal` drops: their footprints come back
            // when they end.
            crew.dismiss();
            let mut footprints: Vec<Box<OpCheck>> = started
                .into_iter()
                .filter_map(|worker| worker.join().ok().flatten())
                .collect();
            footprints.extend(own.op_check.take());
            if let Some(check) = self.ctx.op_check.as_mut() {
                for worker in &footprints {
                    check.absorb(worker);
                }
            }
        });
        self.clocks.workers = crew.clocks();
        self.clocks.waits = crew.waits();
        self.clocks.taken_over = crew.taken_over();
    }

    /// The hardware schedule's rounds, on the crew's cores too when there is one.
    fn run_rounds(&mut self, mut crew: Option<(&Crew, &mut Ctx)>) -> Rounds {
        let mut rounds = Rounds::default();
        let nblocks = self.nblocks;
        let wpb = self.ctx.wpb as usize;
        // Slots of the running blocks, in the order the blocks started.
        let mut resident: Vec<u32> = Vec::new();
        let mut stalled_rounds = 0u64;
        let mut patience = STALL_ROUNDS;
        let entry_stretch = self.ctx.m.stretch_at(self.entry_pc);
        // A fresh block's lanes are all at the entry.
        let entry_quiet =
            (self.ctx.m.quiet_at(self.entry_pc)).min(self.ctx.m.exit_at(self.entry_pc) + 1);
        loop {
            while (resident.len() as u32) < self.resident_blocks && self.started < nblocks {
                // A block's start comes after what the blocks did before it: it waits in line
                // with what they did, which joins before the next round on one core, or while
                // the next turn runs on several.
                let (slot, block) = self.claim_slot();
                rounds.waiting.push_back(Waiting::Started { slot, block });
                // On several cores, the core that runs a new block prepares it.
                let later =
                    crew.is_some() && rounds.start_later(slot, block, entry_stretch, entry_quiet);
                if !later {
                    self.prepare_claimed(slot, block);
                    rounds.started(slot);
                }
                resident.push(slot);
            }
            let in_parallel = match crew.as_mut() {
                Some((crew, own)) => {
                    match self.rounds_unwatched(&resident, stalled_rounds, patience) {
                        0 => {
                            rounds.serial_rounds += 1;
                            rounds.forget();
                            None
                        }
                        most => self.parallel_rounds(crew, &mut rounds, own, &resident, most),
                    }
                }
                None => None,
            };
            let (ran, mut progressed) = in_parallel.unwrap_or((1, false));
            if in_parallel.is_none() {
                // With a crew, the round's findings and calls wait in line behind the turns',
                // which join while the next turn runs, rather than make the launch join them
                // all now, with the crew waiting.
                // A round on one core because few warps are left to share out (blocks of one
                // live thread each: a stretch of such rounds, see `MIN_PARALLEL_WARPS`) joins
                // the line and itself at once, in the same order: made in line, every round
                // made an outcome of its own and joined it later, with no turn to hide behind.
                let in_line =
                    crew.is_some() && !rounds.few_live_warps && rounds.waiting.len() < MOST_WAITING;
                if !in_line {
                    self.join_waiting(&mut rounds.waiting);
                }
                let lap = Lap::start(self.ctx.detector_time());
                for &slot in &resident {
                    if let Some(block) = rounds.take_unprepared(slot) {
                        self.prepare_claimed(slot, block);
                    }
                }
                let aside = in_line.then(|| self.ctx.set_aside());
                self.ctx.region_rounds = self.region_room();
                for &b in &resident {
                    // A block that ran this round ahead of the launch's gives it from there.
                    if let Some(ran) = self.round_ahead(&mut rounds, b, in_line) {
                        progressed |= ran;
                        continue;
                    }
                    let b = b as usize;
                    let warps = &mut self.warps[b * wpb..(b + 1) * wpb];
                    let state = &mut self.blocks[b];
                    if let Step::Ran = block::step_live(&mut self.ctx, warps, state) {
                        progressed = true;
                    }
                }
                if let Some(aside) = aside {
                    rounds.in_line_rounds += 1;
                    if let Some(outcome) = self.ctx.in_line(aside) {
                        rounds.lined(&outcome, "from a round on one core", &String::new);
                        rounds.waiting.push_back(Waiting::Outcome(outcome));
                    }
                }
                self.clocks.interpreter += lap.stop(self.ctx.detector_time());
                self.clocks.serial_rounds += 1;
            }
            if self.must_stop() {
                if self.watchdog.stuck && !self.ctx.aborted && self.grow_residency() {
                    continue;
                }
                break;
            }
            let before = resident.len();
            let mut k = 0;
            while k < resident.len() {
                let b = resident[k];
                if self.blocks[b as usize].live == 0 {
                    debug_assert_eq!(rounds.lead(b), 0, "a block finished ahead of the launch");
                    resident.remove(k);
                    rounds.waiting.push_back(Waiting::Finished { slot: b });
                    self.free_slot(b);
                } else {
                    k += 1;
                }
            }
            if resident.len() < before {
                stalled_rounds = 0;
                continue;
            }
            if self.started == nblocks {
                if !progressed {
                    break;
                }
                continue;
            }
            stalled_rounds += ran as u64;
            if !progressed || stalled_rounds >= patience {
                // Resident blocks wait for something (a flag, a barrier that never completes):
                // start another block rather than stop, as a GPU with more SMs would.
                let register_bytes = (self.resident_blocks as u64 + 1)
                    * wpb as u64
                    * 32
                    * self.ctx.m.nregs as u64
                    * 8;
                if register_bytes > MAX_REGISTER_BYTES {
                    if !progressed {
                        break;
                    }
                    continue;
                }
                self.resident_blocks += 1;
                stalled_rounds = 0;
                if progressed {
                    patience = patience.saturating_mul(2);
                }
            }
        }
        self.join_waiting(&mut rounds.waiting);
        rounds
    }

    /// Returns true when every thread exited.
    pub(crate) fn run(&mut self) -> bool {
        match self.ctx.opts.schedule {
            Schedule::Hardware => self.run_hardware(),
            Schedule::Random { seed }
            | Schedule::Adversarial { seed }
            | Schedule::Lanes { seed } => {
                let lap = Lap::start(self.ctx.detector_time());
                while self.started < self.nblocks {
                    self.start_next_block();
                }
                let n = self.warps.len();
                let adversarial = matches!(self.ctx.opts.schedule, Schedule::Adversarial { .. });
                let mut rng = Rng(seed ^ 0x5EED);
                'outer: loop {
                    if self.must_stop() {
                        break;
                    }
                    let start = rng.below(n);
                    let mut found = None;
                    for k in 0..n {
                        let wi = (start + k) % n;
                        let w = &mut self.warps[wi];
                        if w.active == 0 {
                            w.regroup();
                        }
                        if w.active != 0 {
                            found = Some(wi);
                            break;
                        }
                    }
                    let Some(wi) = found else { break 'outer };
                    let quantum = if adversarial {
                        100_000
                    } else {
                        1 + rng.below(32)
                    };
                    self.ctx.touched_global_sync = false;
                    for step in 0..quantum {
                        // The watchdog looks between quanta: a region ends within this one.
                        self.ctx.region_rounds = (quantum - step) as u32;
                        if let Step::Idle = self.step(wi) {
                            break;
                        }
                        if self.ctx.aborted || self.over_budget() || crate::interrupt::requested() {
                            break;
                        }
                        // A flag just published or read: let another warp act on it (or fail
                        // to) before this one goes on, and stop a spinning warp early.
                        if adversarial && self.ctx.touched_global_sync {
                            break;
                        }
                    }
                }
                self.clocks.interpreter += lap.stop(self.ctx.detector_time());
            }
        }
        let live: u32 = self.warps.iter().map(|w| w.live.count_ones()).sum();
        if live == 0 && self.started == self.nblocks {
            return true;
        }
        // Stopped from outside: the kernel did nothing wrong, and whoever asked says so.
        if self.ctx.aborted || crate::interrupt::requested() {
            return false;
        }
        let kind = if self.over_budget() {
            FindingKind::StepBudgetExhausted
        } else if self.watchdog.stuck {
            FindingKind::Stuck
        } else {
            FindingKind::Deadlock
        };
        if self.ctx.opts.synccheck {
            self.report_warp_sync_hangs();
        }
        self.report_stuck(kind);
        false
    }

    /// Runs one instruction of warp `wi` (for its active lanes).
    pub(crate) fn step(&mut self, wi: usize) -> Step {
        let wpb = self.ctx.wpb as usize;
        let slot = wi / wpb;
        let warps = &mut self.warps[slot * wpb..(slot + 1) * wpb];
        block::step(&mut self.ctx, warps, &mut self.blocks[slot], wi % wpb)
    }
}

/// Drops `state` on a thread of its own, or here when no thread can be started. The race
/// detector's shadow is most of a launch's state, and freeing its tens of thousands of chunks
/// took 3-6 ms of a 100 ms launch on 16 cores, which nothing after the launch waits for.
pub(crate) fn free_aside<T: Send + 'static>(state: T) {
    // A failed spawn drops the closure, and `state` with it, here.
    let _ = std::thread::Builder::new()
        .name("launch state freed".into())
        .spawn(move || drop(state));
}
