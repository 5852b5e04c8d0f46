//! The options a launch takes: how warps take turns, which checkers run, and the limits.

use crate::compiled::Engine;
use crate::memory_model::MemoryModel;

/// Fourteen SMs' worth of 2048 threads: enough blocks interleave to show races between blocks,
/// few enough that their register files stay in the host's cache. Fourteen so that 1,024-thread
/// blocks (28 at a time) share out evenly on many cores: 16 threads leave 14 workers beside the
/// launch and a race detector shard, which run two each, and 32 threads one each (see
/// BENCHMARK.md, "Many cores").
pub const DEFAULT_RESIDENT_THREADS: u32 = 28 * 1024;
/// `cudaLimitPrintfFifoSize`'s default.
pub const DEFAULT_PRINTF_BUFFER_BYTES: usize = 1 << 20;
/// Thread-instructions with no progress before the watchdog compares the threads' registers.
pub const DEFAULT_WATCHDOG_WINDOW: u64 = 4 << 20;
/// Default hard cap on thread-instructions: a safety net for kernels the watchdog cannot judge
/// (a spinner whose registers keep changing, e.g. one that counts its tries).
pub const DEFAULT_STEP_BUDGET: u64 = 10_000_000_000;

/// How warps take turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Schedule {
    /// Deterministic round robin: every warp with work runs one instruction per turn.
    #[default]
    Hardware,
    /// A random warp runs a random number (1–32) of instructions, repeatedly.
    Random { seed: u64 },
    /// A random warp runs alone until it blocks at a barrier, exits, or makes a strong access
    /// or atomic on global memory (where blocks hand each other data), then another.
    Adversarial { seed: u64 },
    /// Independent thread scheduling (sm_70 and later): warps take turns as under `Random`,
    /// and a warp's lanes need not run together. At a load, store or atomic of shared or
    /// global memory a converged group may split: a random part of it runs ahead, past later
    /// instructions, until at one of its own memory accesses it hands the warp back to the
    /// lanes behind. So an intra-warp race that lockstep orders (the lanes of one instruction
    /// always in order, every lane done before any goes on) is seen. Lanes still meet where
    /// CUDA makes them: `__syncwarp()`, shuffles and votes, barriers.
    Lanes { seed: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub schedule: Schedule,
    pub racecheck: bool,
    pub synccheck: bool,
    pub memcheck: bool,
    /// Reads of shared memory that no thread of the block wrote, and of global memory from
    /// [`Emulator::alloc_uninit`] or device `malloc` that nothing wrote.
    pub initcheck: bool,
    /// Hard cap on thread-instructions: the launch stops with `StepBudgetExhausted` when it runs
    /// out, progress or not. The watchdog ends stuck kernels long before.
    pub step_budget: u64,
    /// The watchdog's window, in thread-steps (a thread's instruction, or under the hardware
    /// schedule its step: the private instructions a warp runs together with its next one that
    /// others can see): when a whole window passes with no
    /// progress (no store or atomic changed memory, no barrier completed, no thread exited or
    /// started) and every thread's registers are the same at its end as at its start, the
    /// launch stops with `Stuck`. 0 turns the watchdog off.
    pub watchdog_window: u64,
    /// Bytes of `printf` output kept per launch; later calls are counted as dropped.
    pub printf_buffer_bytes: usize,
    /// Under [`Schedule::Hardware`], how many threads' blocks are resident at once; the next
    /// block starts when one finishes, as blocks wait for a free SM on a GPU. Grids that fit
    /// run all their blocks at once. Random and adversarial schedules start every block at once.
    pub resident_threads: u32,
    /// Count shared-memory bank conflicts per `.cu` line into [`RunReport::bank_conflicts`]
    /// (see `banks.rs` for the model). Off by default: it costs a pass over the lanes of every
    /// shared load and store.
    pub bank_conflicts: bool,
    /// What counts as a race (default [`MemoryModel::Racecheck`]).
    pub memory_model: MemoryModel,
    /// Cores a launch may use; 0 (the default) means `RACETRACK_THREADS` when it is set to a
    /// positive number, otherwise every core. With two or more, the hardware schedule runs
    /// blocks on several cores and racecheck runs on cores of its own (see README, "Every
    /// core"); what a launch finds and computes is the same for every value.
    pub threads: u32,
    /// Bytes of shared memory (static and dynamic together) a block may have: 48 KiB, what a
    /// launch gets without asking; a CUDA runtime raises it to what the device allows a
    /// kernel that opts in (227 KiB on sm_90) and checks the opt-in itself.
    pub shared_limit: u32,
    /// A cooperative launch's grid workspace (`cudaLaunchCooperativeKernel`): the address of
    /// 8 zeroed bytes of global memory, `{ size, barrier }`, which cooperative groups' grid
    /// sync counts its blocks in. `None` in an ordinary launch, where grid sync traps.
    pub grid_workspace: Option<u64>,
    /// Which engine runs the instructions: the interpreter, or the compiled tier where it
    /// applies (never in traced launches). `Auto` (the default) means `RACETRACK_ENGINE` when
    /// it names one, otherwise the tier for a launch of the hardware schedule with at least
    /// [`AUTO_COMPILED_THREADS`] threads and the interpreter for the rest (see
    /// [`Engine::Auto`]). Every engine finds and computes the same.
    pub engine: Engine,
}

/// Shared memory a block gets without `cudaFuncSetAttribute`: [`RunOptions::shared_limit`]'s
/// default.
pub const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// The environment variable that sets [`RunOptions::threads`] when it is 0 (the command lines'
/// `--threads` reads it too).
pub const THREADS_ENV: &str = "RACETRACK_THREADS";

/// The fewest threads of a launch that `Engine::Auto` runs with the compiled tier (under the
/// hardware schedule): a module's regions take 2–31 ms to compile (once per process), which a
/// launch this large wins back (`emu/BENCHMARK.md`, "A step for visible operations only").
pub const AUTO_COMPILED_THREADS: u64 = 1 << 20;

impl RunOptions {
    /// The engine a launch of `threads` threads runs with (see [`RunOptions::engine`]): never
    /// `Auto`.
    pub fn resolved_engine(&self, threads: u64) -> Engine {
        let engine = if self.engine != Engine::Auto {
            self.engine
        } else {
            static FROM_ENV: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
            *FROM_ENV.get_or_init(|| Engine::from_env().unwrap_or(Engine::Auto))
        };
        match engine {
            Engine::Auto => self.auto_engine(threads),
            named => named,
        }
    }

    /// What `Auto` means for a launch of `threads` threads.
    fn auto_engine(&self, threads: u64) -> Engine {
        if matches!(self.schedule, Schedule::Hardware) && threads >= AUTO_COMPILED_THREADS {
            Engine::Compiled
        } else {
            Engine::Interp
        }
    }

    /// The cores this launch may use (see [`RunOptions::threads`]).
    pub fn cores(&self) -> usize {
        if self.threads > 0 {
            return self.threads as usize;
        }
        static AUTOMATIC: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *AUTOMATIC.get_or_init(|| {
            std::env::var(THREADS_ENV)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        })
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            schedule: Schedule::Hardware,
            racecheck: true,
            synccheck: true,
            memcheck: true,
            initcheck: true,
            step_budget: DEFAULT_STEP_BUDGET,
            watchdog_window: DEFAULT_WATCHDOG_WINDOW,
            printf_buffer_bytes: DEFAULT_PRINTF_BUFFER_BYTES,
            resident_threads: DEFAULT_RESIDENT_THREADS,
            bank_conflicts: false,
            memory_model: MemoryModel::Racecheck,
            threads: 0,
            shared_limit: DEFAULT_SHARED_LIMIT,
            grid_workspace: None,
            engine: Engine::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_compiles_large_launches_of_the_hardware_schedule_only() {
        let hardware = RunOptions::default();
        assert_eq!(
            hardware.auto_engine(AUTO_COMPILED_THREADS),
            Engine::Compiled
        );
        assert_eq!(
            hardware.auto_engine(AUTO_COMPILED_THREADS - 1),
            Engine::Interp
        );
        let random = RunOptions {
            schedule: Schedule::Random { seed: 1 },
            ..RunOptions::default()
        };
        assert_eq!(random.auto_engine(AUTO_COMPILED_THREADS), Engine::Interp);
        let named = RunOptions {
            engine: Engine::Interp,
            ..RunOptions::default()
        };
        assert_eq!(named.resolved_engine(u64::MAX), Engine::Interp);
    }
}
