//! The environment through which `racetrack run` configures Racetrack's CUDA runtime (`cudart/`)
//! inside the program it runs: named once here, where both the harness and the runtime see them.

/// Where Racetrack's lines go instead of stderr.
pub const LOG: &str = "RACETRACK_RUN_LOG";
/// The file the findings are appended to, one JSON object per line.
pub const FINDINGS: &str = "RACETRACK_RUN_FINDINGS";
/// How many devices the emulated machine has.
pub const DEVICES: &str = "RACETRACK_DEVICES";
/// The schedule (`hardware`, `random:SEED`, `adversarial`, `lanes:SEED`).
pub const SCHEDULE: &str = "RACETRACK_SCHEDULE";
/// Checkers to leave off, comma-separated (`race,sync,mem,init`).
pub const CHECKS_OFF: &str = "RACETRACK_CHECKS_OFF";
/// Set: when the program ends, the runtime says how each kernel's launches spent their time.
pub const TIMINGS: &str = "RACETRACK_RUN_TIMINGS";
/// The ptxas that counts kernels' registers, as a GPU's driver would when it compiles them.
pub const PTXAS: &str = "RACETRACK_PTXAS";
/// The most thread-instructions one launch may run before it is stopped (the emulator's
/// default otherwise): a long benchmark kernel needs more than a hang does to be caught.
pub const STEP_BUDGET: &str = "RACETRACK_STEP_BUDGET";
