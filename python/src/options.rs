//! How the emulator runs a launch: the options of `racetrack check` (`--schedule`, `--seed`,
//! `--no-racecheck` and the others, `--memory-model`, `--threads`, `--step-budget`, `--engine`).

use ptx_emu::{Engine, MemoryModel, RunOptions, Schedule};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The checkers and the schedule of a launch. Every field is a keyword of the constructor, with
/// `racetrack check`'s default.
#[pyclass(module = "racetrack._native", get_all, set_all)]
#[derive(Debug, Clone)]
pub struct Options {
    /// `"hardware"` (deterministic, warps in lockstep), `"random"` or `"adversarial"`.
    pub schedule: String,
    /// The seed of the random and adversarial schedules.
    pub seed: u64,
    pub racecheck: bool,
    pub synccheck: bool,
    pub memcheck: bool,
    pub initcheck: bool,
    /// `"racecheck"` (PTX's races, and also unordered volatile/relaxed data accesses) or
    /// `"ptx"` (exactly PTX's data races).
    pub memory_model: String,
    /// Cores a launch may use; 0 is `RACETRACK_THREADS`, else every core.
    pub threads: u32,
    /// The cap on thread-instructions; 0 keeps the emulator's default.
    pub step_budget: u64,
    /// `"interp"`, `"compiled"` or `"auto"` (what `RACETRACK_ENGINE` names, else the compiled
    /// tier for launches of 2^20 threads or more under the hardware schedule and the
    /// interpreter for the rest). Every engine finds and computes the same.
    pub engine: String,
}

#[pymethods]
impl Options {
    #[new]
    #[pyo3(signature = (*, schedule = "hardware".to_string(), seed = 0, racecheck = true, synccheck = true, memcheck = true, initcheck = true, memory_model = "racecheck".to_string(), threads = 0, step_budget = 0, engine = "auto".to_string()))]
    #[allow(clippy::too_many_arguments)] // the keywords of `racetrack check`
    fn new(
        schedule: String,
        seed: u64,
        racecheck: bool,
        synccheck: bool,
        memcheck: bool,
        initcheck: bool,
        memory_model: String,
        threads: u32,
        step_budget: u64,
        engine: String,
    ) -> PyResult<Self> {
        let options = Self {
            schedule,
            seed,
            racecheck,
            synccheck,
            memcheck,
            initcheck,
            memory_model,
            threads,
            step_budget,
            engine,
        };
        options.run_options()?;
        Ok(options)
    }

    fn __repr__(&self) -> String {
        format!(
            "Options(schedule={:?}, seed={}, racecheck={}, synccheck={}, memcheck={}, initcheck={}, memory_model={:?}, threads={}, step_budget={}, engine={:?})",
            self.schedule,
            self.seed,
            self.racecheck,
            self.synccheck,
            self.memcheck,
            self.initcheck,
            self.memory_model,
            self.threads,
            self.step_budget,
            self.engine
        )
    }
}

impl Options {
    pub fn run_options(&self) -> PyResult<RunOptions> {
        let schedule = match self.schedule.as_str() {
            "hardware" => Schedule::Hardware,
            "random" => Schedule::Random { seed: self.seed },
            "adversarial" => Schedule::Adversarial { seed: self.seed },
            other => {
                return Err(PyValueError::new_err(format!(
                    "schedule must be \"hardware\", \"random\" or \"adversarial\", not {other:?}"
                )));
            }
        };
        let memory_model = match self.memory_model.as_str() {
            "racecheck" => MemoryModel::Racecheck,
            "ptx" => MemoryModel::Ptx,
            other => {
                return Err(PyValueError::new_err(format!(
                    "memory_model must be \"racecheck\" or \"ptx\", not {other:?}"
                )));
            }
        };
        let engine = Engine::parse(&self.engine).ok_or_else(|| {
            PyValueError::new_err(format!(
                "engine must be \"interp\", \"compiled\" or \"auto\", not {:?}",
                self.engine
            ))
        })?;
        let defaults = RunOptions::default();
        Ok(RunOptions {
            schedule,
            racecheck: self.racecheck,
            synccheck: self.synccheck,
            memcheck: self.memcheck,
            initcheck: self.initcheck,
            memory_model,
            threads: self.threads,
            step_budget: if self.step_budget == 0 {
                defaults.step_budget
            } else {
                self.step_budget
            },
            engine,
            ..defaults
        })
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            schedule: "hardware".into(),
            seed: 0,
            racecheck: true,
            synccheck: true,
            memcheck: true,
            initcheck: true,
            memory_model: "racecheck".into(),
            threads: 0,
            step_budget: 0,
            engine: "auto".into(),
        }
    }
}
