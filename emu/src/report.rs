//! What a launch reports: findings from the checkers, deduplicated, and their text form.

use std::fmt;

pub use crate::source_loc::SourceLoc;

/// Which memory a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Shared,
    Local,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
        })
    }
}

/// The order of the two conflicting accesses of a race.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hazard {
    /// A write, then a read by another thread that nothing orders after it.
    ReadAfterWrite,
    /// A read, then a write by another thread that nothing orders after it.
    WriteAfterRead,
    /// Two unordered writes.
    WriteAfterWrite,
}

impl fmt::Display for Hazard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Hazard::ReadAfterWrite => "read-after-write",
            Hazard::WriteAfterRead => "write-after-read",
            Hazard::WriteAfterWrite => "write-after-write",
        })
    }
}

/// What is wrong with a warp-synchronous call (`__syncwarp`, `__shfl*_sync`, `__ballot_sync`,
/// `__all_sync`, `__any_sync`): each is undefined behaviour in CUDA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpSyncProblem {
    /// The calling lane's own bit is not set in the mask it passed.
    LaneNotInMask,
    /// Lanes that synchronize together passed different masks.
    MaskMismatch,
    /// Lanes named in the mask never reach a matching call: they wait at a barrier, at a
    /// different warp-synchronous call, or somewhere else that never lets them come.
    NeverArrive,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    Race {
        hazard: Hazard,
        space: Space,
    },
    BarrierDivergence,
    Deadlock,
    OutOfBounds {
        space: Space,
    },
    Misaligned {
        space: Space,
    },
    /// A read of bytes nothing wrote: shared memory no thread of the block wrote, or a global
    /// buffer allocated uninitialized ([`crate::Emulator::alloc_uninit`], device `malloc`) that
    /// nothing wrote.
    UninitializedRead {
        space: Space,
    },
    /// The explicit cap on thread-instructions (`RunOptions::step_budget`) ran out.
    StepBudgetExhausted,
    /// The watchdog saw no progress: no memory changed, no barrier completed, no thread exited,
    /// and no thread's registers changed over a whole window.
    Stuck,
    /// A failed `assert()`: the launch stops, as on a GPU.
    AssertionFailed,
    /// An access to a device-heap block after `free()`.
    UseAfterFree,
    /// `free()` of a block that was already freed.
    DoubleFree,
    /// `free()` of a pointer that `malloc()` did not return.
    InvalidFree,
    /// Recursion deeper than the emulator's call-depth limit (a GPU's stack overflows sooner).
    StackOverflow,
    /// `trap` (`__trap()`): the launch stops, as on a GPU.
    Trap,
    /// A call through an address that is no device function's (a corrupt or null function
    /// pointer or vtable), or through a function whose parameters the call does not match: the
    /// launch stops, as a GPU's illegal-instruction fault would stop it.
    InvalidCallTarget,
    WarpSync {
        problem: WarpSyncProblem,
    },
    /// Conflicting accesses by two operations on streams (launches or copies, on one device or
    /// two) that no stream order, event wait or host synchronization orders.
    StreamRace {
        hazard: Hazard,
    },
    /// A kernel accessed another device's memory without peer access from its device to that
    /// one: a GPU faults.
    NoPeerAccess,
    /// Streams left holding work at a host synchronization, each waiting (for a value in memory
    /// or an event) on something only work queued behind another stream's wait would do: on a
    /// GPU the host waits forever.
    StreamsStuck,
}

/// A thread: block index and thread index, as `blockIdx` / `threadIdx`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ThreadRef {
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

impl fmt::Display for ThreadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "block ({bx},{by},{bz}) thread ({tx},{ty},{tz})")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessOp {
    Read,
    Write,
    /// An atomic read-modify-write, or a volatile/relaxed/acquire/release load or store.
    Atomic,
    AtomicRead,
    AtomicWrite,
    /// `free()` of a device-heap block.
    Free,
}

impl fmt::Display for AccessOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessOp::Read => "read",
            AccessOp::Write => "write",
            AccessOp::Atomic => "atomic",
            AccessOp::AtomicRead => "strong read",
            AccessOp::AtomicWrite => "strong write",
            AccessOp::Free => "free",
        })
    }
}

/// One memory access named by a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub op: AccessOp,
    pub thread: ThreadRef,
    pub at: SourceLoc,
}

/// Where in memory: `histo[65]` on global memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemLocation {
    pub space: Space,
    /// The allocation's label (`Emulator::alloc`) or the variable's name.
    pub label: String,
    /// Element index, in units of the access size.
    pub index: i64,
    /// The address as the kernel saw it (generic or state-space address).
    pub address: u64,
    /// The bytes `index` counts in: the access's size.
    pub element_bytes: u32,
    /// The index as C writes it for an array of more than one dimension (`[1][0]`, not
    /// `[32]`), where the program's declaration is known: the emulator sees only PTX, whose
    /// arrays are flat, so whoever has the source sets it.
    pub c_index: Option<String>,
    /// Extra words, e.g. "just past the end of x, which has 16 bytes".
    pub note: Option<String>,
}

impl fmt::Display for MemLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.c_index {
            Some(index) => write!(f, "{}{index}", self.label)?,
            None => write!(f, "{}[{}]", self.label, self.index)?,
        }
        if let Some(n) = &self.note {
            write!(f, " ({n})")?;
        }
        Ok(())
    }
}

/// Threads found at one place when a kernel stopped (budget, deadlock) or at a divergent barrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadGroup {
    pub at: SourceLoc,
    pub threads: u64,
    pub example: ThreadRef,
    /// "waiting at barrier 0", "running", "exited", "waiting in shfl.sync".
    pub state: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: FindingKind,
    /// How many times the checkers saw this (same kind, same lines, same allocation).
    pub count: u64,
    pub location: Option<MemLocation>,
    /// For a race: the earlier access, then the later one. For a memory error: the access.
    pub accesses: Vec<Access>,
    /// For barrier divergence, deadlock and an exhausted budget: where the threads were.
    pub threads: Vec<ThreadGroup>,
    /// One sentence of explanation.
    pub why: String,
}

impl Finding {
    /// Every `.cu` line this finding names (including `inlined_at` call lines).
    pub fn lines(&self) -> Vec<u32> {
        let mut v = Vec::new();
        let mut add = |l: &SourceLoc| {
            if l.line != 0 {
                v.push(l.line);
            }
            if let Some(i) = l.inlined_at {
                v.push(i);
            }
        };
        for a in &self.accesses {
            add(&a.at);
        }
        for g in &self.threads {
            add(&g.at);
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    pub(crate) fn title(&self) -> String {
        match self.kind {
            FindingKind::Race { hazard, space } => format!("race ({hazard}) on {space} memory"),
            FindingKind::StreamRace { hazard } => {
                format!("race ({hazard}) between streams on global memory")
            }
            FindingKind::NoPeerAccess => {
                "access to a peer device's memory without peer access".into()
            }
            FindingKind::StreamsStuck => {
                "streams stuck: queued work waits for what no stream can still do".into()
            }
            FindingKind::BarrierDivergence => "barrier divergence".into(),
            FindingKind::Deadlock => "deadlock".into(),
            FindingKind::OutOfBounds { space } => format!("out-of-bounds access to {space} memory"),
            FindingKind::Misaligned { space } => format!("misaligned access to {space} memory"),
            FindingKind::UninitializedRead { space } => {
                format!("uninitialized read of {space} memory")
            }
            FindingKind::StepBudgetExhausted => {
                "step budget exhausted: the kernel did not finish".into()
            }
            FindingKind::Stuck => "stuck: the kernel stopped making progress".into(),
            FindingKind::AssertionFailed => "assertion failed".into(),
            FindingKind::UseAfterFree => "use after free on the device heap".into(),
            FindingKind::DoubleFree => "double free on the device heap".into(),
            FindingKind::InvalidFree => "free() of a pointer malloc() did not return".into(),
            FindingKind::StackOverflow => "stack overflow: recursion too deep".into(),
            FindingKind::Trap => "trap: the kernel aborted".into(),
            FindingKind::InvalidCallTarget => {
                "call through an address that is no device function's".into()
            }
            FindingKind::WarpSync { problem } => match problem {
                WarpSyncProblem::LaneNotInMask => {
                    "warp-sync error: a lane is not in its own mask".into()
                }
                WarpSyncProblem::MaskMismatch => {
                    "warp-sync error: lanes passed different masks".into()
                }
                WarpSyncProblem::NeverArrive => {
                    "warp-sync error: lanes named in the mask never arrive".into()
                }
            },
        }
    }
}

/// A `.cu` line's text, by file (as the PTX names it) and 1-based line: what a report quotes.
pub type SourceLines<'a> = &'a dyn Fn(&str, u32) -> Option<String>;

/// A [`Finding`] that quotes each source line it names, as a compiler's diagnostic does: the
/// line's text under the row that says `file:line`. See [`Finding::quoting`].
#[allow(missing_debug_implementations)] // holds a closure, which has no `Debug`
pub struct Quoted<'a> {
    finding: &'a Finding,
    source: SourceLines<'a>,
}

impl Finding {
    /// This finding as its `Display` writes it, with the text of each line it names (where
    /// `source` has it) quoted under the row that names it.
    pub fn quoting<'a>(&'a self, source: SourceLines<'a>) -> Quoted<'a> {
        Quoted {
            finding: self,
            source,
        }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, source: Option<SourceLines<'_>>) -> fmt::Result {
        write!(f, "{}", self.title())?;
        if let Some(l) = &self.location {
            write!(f, ": {l}")?;
        }
        writeln!(f)?;
        let w = self
            .accesses
            .iter()
            .map(|a| a.op.to_string().len())
            .max()
            .unwrap_or(0)
            + 1;
        // The last line quoted: two rows at one line (both sides of `x[0]++`) quote it once.
        let mut quoted: Option<(String, u32)> = None;
        let mut quote = |f: &mut fmt::Formatter<'_>, at: &SourceLoc| -> fmt::Result {
            let Some(source) = source else {
                return Ok(());
            };
            // Code inlined from a header is quoted at the user's line it was called from.
            let (place, text) = match (&at.inlined_into, source(&at.file, at.line)) {
                (_, Some(text)) => ((at.file.as_str(), at.line), text),
                (Some((file, line)), None) => match source(file, *line) {
                    Some(text) => ((file.as_str(), *line), text),
                    None => return Ok(()),
                },
                (None, None) => return Ok(()),
            };
            if quoted
                .as_ref()
                .is_some_and(|(file, line)| (file.as_str(), *line) == place)
            {
                return Ok(());
            }
            quoted = Some((place.0.to_string(), place.1));
            writeln!(f, "  {:>6} | {}", place.1, text.trim())
        };
        for a in &self.accesses {
            let op = format!("{}:", a.op);
            writeln!(f, "  {op:<w$} {} at {}", a.thread, a.at)?;
            quote(f, &a.at)?;
        }
        for g in &self.threads {
            let s = if g.threads == 1 { "" } else { "s" };
            writeln!(
                f,
                "  {} thread{s} {} at {} (e.g. {})",
                g.threads, g.state, g.at, g.example
            )?;
            quote(f, &g.at)?;
        }
        write!(f, "  {}", self.why)?;
        if self.count > 1 {
            write!(f, "; seen {} times", self.count)?;
        }
        Ok(())
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, None)
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.finding.write(f, Some(self.source))
    }
}

/// One `printf` call's output, or a failed assert's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfRecord {
    pub thread: ThreadRef,
    pub text: String,
    /// Where a GPU's driver writes it: `printf` to the program's stdout, a failed assert's
    /// message to its stderr.
    pub stream: OutputStream,
}

/// The host stream a device message goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// One thread's `cudaGraphSetConditional(handle, value)`: the runtime that launched the kernel
/// gives the value to the conditional node the handle belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionSet {
    pub handle: u64,
    pub value: u32,
    pub thread: ThreadRef,
    pub at: SourceLoc,
}

/// What a launch did: the findings, whether every thread ran to its end, and how much work it was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    pub findings: Vec<Finding>,
    /// Shared-memory bank conflicts per `.cu` line, when `RunOptions::bank_conflicts` asked
    /// for them; empty otherwise.
    pub bank_conflicts: Vec<crate::banks::BankConflicts>,
    /// Every thread exited normally (no budget stop, no deadlock, no failed assert).
    pub completed: bool,
    /// Instructions executed, counted once per thread.
    pub thread_instructions: u64,
    /// Device `printf` output in the order the threads printed it (deterministic for a schedule
    /// and seed), delivered after the launch as a GPU does.
    pub printf: Vec<PrintfRecord>,
    /// `printf` calls whose output did not fit in `RunOptions::printf_buffer_bytes`.
    pub printf_dropped: u64,
    /// `cudaGraphSetConditional` calls, in the order threads made them.
    pub conditions: Vec<ConditionSet>,
    /// Bytes the race detector's shadow memory took at the end of the launch (0 with racecheck
    /// off): about 1.4 bytes per byte the kernel touched when its accesses are coalesced.
    pub shadow_bytes: u64,
}

impl RunReport {
    /// The report of work that ran to its end and found nothing (a copy, an event, a wait).
    pub(crate) fn finished() -> Self {
        RunReport {
            completed: true,
            ..RunReport::default()
        }
    }

    /// Adds what later work found, as one report of both.
    pub(crate) fn append(&mut self, later: RunReport) {
        self.findings.extend(later.findings);
        self.printf.extend(later.printf);
        self.printf_dropped += later.printf_dropped;
        self.conditions.extend(later.conditions);
        self.completed &= later.completed;
        self.thread_instructions += later.thread_instructions;
    }

    /// True when no checker found anything.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// The `printf` output as one text, the way a program's standard output shows it, with a
    /// last line counting what was dropped.
    pub fn printf_output(&self) -> String {
        let mut out: String = self.printf.iter().map(|r| r.text.as_str()).collect();
        if self.printf_dropped > 0 {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!(
                "[{} more printf calls dropped: the printf buffer is full]\n",
                self.printf_dropped
            ));
        }
        out
    }
}
