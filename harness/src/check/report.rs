//! What `racetrack check` prints: the text report and the `--json` object.

use serde_json::{Map, Value as Json, json};

use super::args::{ArgSpec, ArgValueSpec, HostArg};
use super::front::left_out_list;
use super::run::{Kernel, Outcome};
use crate::backend::BackendKind;
use crate::device::{EmuSettings, FindingKind, Schedule, WarpSyncProblem};
use crate::kernel::KernelSource;
use crate::launch::LaunchShape;

/// Line `line` (1-based) of `file` when it is the kernel's own source, for a report to quote.
pub fn source_line(kernel: &KernelSource, file: &str, line: u32) -> Option<String> {
    if file != kernel.path || line == 0 {
        return None;
    }
    kernel
        .source
        .lines()
        .nth(line as usize - 1)
        .map(str::to_string)
}

/// How many elements of each buffer the text report prints.
pub const SHOWN_ELEMENTS: usize = 16;

/// One run, as the command prints it.
#[derive(Debug)]
pub struct CheckReport<'a> {
    pub backend: BackendKind,
    pub banner: String,
    pub device: String,
    pub kernel: &'a Kernel,
    pub shape: LaunchShape,
    pub specs: &'a [ArgSpec],
    pub args: &'a [HostArg],
    /// The emulator's settings; `None` on a GPU.
    pub emu: Option<EmuSettings>,
    pub outcome: &'a Outcome,
    pub shown: &'a [usize],
}

fn schedule_name(schedule: Schedule) -> (&'static str, Option<u64>) {
    match schedule {
        Schedule::Hardware => ("hardware", None),
        Schedule::Random { seed } => ("random", Some(seed)),
        Schedule::Adversarial { seed } => ("adversarial", Some(seed)),
        Schedule::Lanes { seed } => ("lanes", Some(seed)),
    }
}

fn finding_kind_json(kind: FindingKind, object: &mut Map<String, Json>) -> &'static str {
    match kind {
        FindingKind::Race { hazard, space } => {
            object.insert("hazard".into(), json!(hazard.to_string()));
            object.insert("space".into(), json!(space.to_string()));
            "race"
        }
        FindingKind::StreamRace { hazard } => {
            object.insert("hazard".into(), json!(hazard.to_string()));
            "stream-race"
        }
        FindingKind::NoPeerAccess => "no-peer-access",
        FindingKind::StreamsStuck => "streams-stuck",
        FindingKind::BarrierDivergence => "barrier-divergence",
        FindingKind::Deadlock => "deadlock",
        FindingKind::OutOfBounds { space } => {
            object.insert("space".into(), json!(space.to_string()));
            "out-of-bounds"
        }
        FindingKind::Misaligned { space } => {
            object.insert("space".into(), json!(space.to_string()));
            "misaligned"
        }
        FindingKind::UninitializedRead { space } => {
            object.insert("space".into(), json!(space.to_string()));
            "uninitialized-read"
        }
        FindingKind::StepBudgetExhausted => "step-budget-exhausted",
        FindingKind::Stuck => "stuck",
        FindingKind::AssertionFailed => "assertion-failed",
        FindingKind::UseAfterFree => "use-after-free",
        FindingKind::DoubleFree => "double-free",
        FindingKind::InvalidFree => "invalid-free",
        FindingKind::StackOverflow => "stack-overflow",
        FindingKind::InvalidCallTarget => "invalid-call-target",
        FindingKind::Trap => "trap",
        FindingKind::WarpSync { problem } => {
            object.insert(
                "problem".into(),
                json!(match problem {
                    WarpSyncProblem::LaneNotInMask => "lane-not-in-mask",
                    WarpSyncProblem::MaskMismatch => "mask-mismatch",
                    WarpSyncProblem::NeverArrive => "never-arrive",
                }),
            );
            "warp-sync"
        }
    }
}

impl CheckReport<'_> {
    fn launch_line(&self) -> String {
        let shape = self.shape;
        let mut config = format!("{}, {}", shape.grid, shape.block);
        if shape.dynamic_shared_bytes > 0 {
            config.push_str(&format!(", {}", shape.dynamic_shared_bytes));
        }
        let total = shape.total_threads();
        format!(
            "launch: {}<<<{config}>>> from {} ({shape}: {total} thread{})",
            self.kernel.source.entry,
            self.kernel.source.path,
            if total == 1 { "" } else { "s" }
        )
    }

    /// What the front end left out of a whole program, and how the file can say so itself.
    fn host_code_line(&self) -> Option<String> {
        let left_out = self.kernel.left_out();
        if left_out.is_empty() {
            return None;
        }
        let list = left_out_list(left_out);
        Some(format!(
            "host code left out (NVRTC compiles device code only): {list}; to choose yourself, wrap host code in #ifndef __CUDACC_RTC__ … #endif"
        ))
    }

    /// A file with its own main is a whole program, which `racetrack run` takes as it is: said
    /// on a line of its own, so a learner restating the launch by hand sees it.
    fn whole_program_line(&self) -> Option<String> {
        let list = left_out_list(self.kernel.left_out());
        (list.starts_with("main (") || list.contains(", main (")).then(|| {
            format!(
                "this file has a main: `cargo racetrack run {}` runs it as it is, every launch checked",
                self.kernel.source.path
            )
        })
    }

    fn checkers_line(&self) -> String {
        let Some(settings) = self.emu else {
            return "checkers: not run; racecheck, synccheck, memcheck and initcheck run on the emulator only (--backend emu)"
                .to_string();
        };
        let on: Vec<_> = [
            ("racecheck", settings.racecheck),
            ("synccheck", settings.synccheck),
            ("memcheck", settings.memcheck),
            ("initcheck", settings.initcheck),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(name, _)| *name)
        .collect();
        let (schedule, seed) = schedule_name(settings.schedule);
        let schedule = match seed {
            Some(seed) => format!("{schedule} schedule, seed {seed}"),
            None => format!("{schedule} schedule"),
        };
        let checkers = if on.is_empty() {
            "all off".to_string()
        } else {
            on.join(", ")
        };
        let found = match self.outcome.findings.len() {
            0 => "nothing found".to_string(),
            1 => "1 finding".to_string(),
            n => format!("{n} findings"),
        };
        format!("checkers: {checkers} ({schedule}): {found}")
    }

    /// The report as the terminal shows it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut line = |text: &str| {
            out.push_str(text);
            out.push('\n');
        };
        line(&self.banner);
        line(&self.launch_line());
        if let Some(host) = self.host_code_line() {
            line(&host);
        }
        if let Some(whole) = self.whole_program_line() {
            line(&whole);
        }
        for (index, spec) in self.specs.iter().enumerate() {
            let label = self.arg_label(index, spec);
            let shown = match &spec.value {
                ArgValueSpec::Struct(_) => {
                    let layout = self.args.get(index).and_then(HostArg::layout);
                    let mut unnamed = spec.clone();
                    unnamed.name = None;
                    match layout {
                        Some(layout) => format!(
                            "{unnamed} (a struct of {} bytes, aligned to {})",
                            layout.bytes, layout.align
                        ),
                        None => unnamed.to_string(),
                    }
                }
                ArgValueSpec::Scalar(value) => format!("{}={value}", value.ty()),
                ArgValueSpec::Buffer(buffer) => {
                    let len = self.args.get(index).and_then(|arg| match arg {
                        HostArg::Buffer { data, .. } => Some(data.len()),
                        HostArg::Scalar { .. } | HostArg::Alias { .. } | HostArg::Struct { .. } => {
                            None
                        }
                    });
                    let (plus, note) = if buffer.offset > 0 {
                        (
                            format!("+{}", buffer.offset),
                            format!(" (the kernel gets {label} + {})", buffer.offset),
                        )
                    } else {
                        (String::new(), String::new())
                    };
                    format!(
                        "{}[{}]{plus}={}{note}",
                        buffer.ty,
                        len.or(buffer.len).unwrap_or(0),
                        buffer.fill
                    )
                }
                ArgValueSpec::Alias(alias) => {
                    let target = match self.args.get(index) {
                        Some(HostArg::Alias { target, .. }) => format!(" (arg {target})"),
                        _ => String::new(),
                    };
                    format!(
                        "a pointer {} elements into {}{target}",
                        alias.offset, alias.target
                    )
                }
            };
            line(&format!("  arg {index}  {label}: {shown}"));
        }
        for (symbol, data) in self.kernel.symbols.iter().zip(&self.kernel.symbol_data) {
            line(&format!(
                "  symbol {}: {}[{}] ({} of its {} bytes)",
                symbol.name,
                data.ty(),
                data.len(),
                data.as_bytes().len(),
                symbol.bytes
            ));
        }
        if !self.outcome.printf.is_empty() {
            let count = self.outcome.printf.lines().count();
            let s = if count == 1 { "" } else { "s" };
            line(&format!("printf output ({count} line{s}):"));
            for printed in self.outcome.printf.lines() {
                line(&format!("  {printed}"));
            }
        }
        line(&self.checkers_line());
        let source = self.kernel.source;
        let quote = |file: &str, at: u32| source_line(&source, file, at);
        for finding in &self.outcome.findings {
            line("");
            line(&finding.quoting(&quote).to_string());
        }
        if !self.outcome.finished() {
            line("");
            line(
                "the kernel did not finish: the buffers below hold what it had written when it was stopped",
            );
            if self
                .outcome
                .findings
                .iter()
                .any(|finding| finding.kind == FindingKind::StepBudgetExhausted)
            {
                line(
                    "if its threads are still making progress, the launch may just need more steps: raise --step-budget",
                );
            }
        }
        for (index, label, field, data) in self.shown_buffers() {
            let place = if field {
                format!("a field of arg {index}")
            } else {
                format!("arg {index}")
            };
            line("");
            let mut head = data.head(SHOWN_ELEMENTS).join(", ");
            if data.len() > SHOWN_ELEMENTS {
                head.push_str(&format!(", … {} more", data.len() - SHOWN_ELEMENTS));
            }
            line(&format!(
                "{label} ({place}, {}[{}]): [{head}]",
                data.ty(),
                data.len()
            ));
            if let Some(stats) = data.stats() {
                let mut summary =
                    format!("  sum {}, min {}, max {}", stats.sum, stats.min, stats.max);
                if stats.nans > 0 {
                    summary.push_str(&format!(", {} NaN", stats.nans));
                }
                line(&summary);
            }
        }
        out
    }

    /// The buffers to show, in argument order: (argument, label, a field of a struct argument?,
    /// data), the buffers a struct points to right after their argument.
    fn shown_buffers(&self) -> Vec<(usize, &str, bool, &super::data::HostData)> {
        let mut shown = Vec::new();
        for &index in self.shown {
            if let Some(Some(data)) = self.outcome.outputs.get(index) {
                let label = self.args.get(index).map_or("?", HostArg::label);
                shown.push((index, label, false, data));
            }
            for (owner, label, data) in &self.outcome.field_outputs {
                if *owner == index {
                    shown.push((index, label.as_str(), true, data));
                }
            }
        }
        shown
    }

    /// What reports call argument `index`: its data's label, which is the kernel's parameter
    /// name for an argument given without a name.
    fn arg_label(&self, index: usize, spec: &ArgSpec) -> String {
        self.args
            .get(index)
            .map_or_else(|| spec.label(index), |arg| arg.label().to_string())
    }

    /// The report for machines: one JSON object.
    pub fn json(&self) -> Json {
        let args: Vec<Json> = self
            .specs
            .iter()
            .enumerate()
            .map(|(index, spec)| json!({ "index": index, "label": self.arg_label(index, spec), "spec": spec.to_string() }))
            .collect();
        let checkers = self.emu.map(|settings| {
            let (schedule, seed) = schedule_name(settings.schedule);
            json!({
                "racecheck": settings.racecheck,
                "synccheck": settings.synccheck,
                "memcheck": settings.memcheck,
                "initcheck": settings.initcheck,
                "schedule": schedule,
                "seed": seed,
            })
        });
        let findings: Vec<Json> = self
            .outcome
            .findings
            .iter()
            .map(|finding| {
                let mut object = Map::new();
                let kind = finding_kind_json(finding.kind, &mut object);
                object.insert("kind".into(), json!(kind));
                object.insert("lines".into(), json!(finding.lines()));
                object.insert(
                    "location".into(),
                    json!(finding.location.as_ref().map(ToString::to_string)),
                );
                object.insert("count".into(), json!(finding.count));
                object.insert("message".into(), json!(finding.to_string()));
                Json::Object(object)
            })
            .collect();
        let buffers: Vec<Json> = self
            .shown_buffers()
            .into_iter()
            .map(|(index, label, field, data)| {
                let stats = data.stats();
                json!({
                    "index": index,
                    "label": label,
                    "field": field,
                    "type": data.ty().name(),
                    "len": data.len(),
                    "data": data.to_json(),
                    "sum": stats.map(|s| s.sum.to_json()),
                    "min": stats.map(|s| s.min.to_json()),
                    "max": stats.map(|s| s.max.to_json()),
                })
            })
            .collect();
        let shape = self.shape;
        json!({
            "backend": self.backend.to_string(),
            "device": self.device,
            "banner": self.banner,
            "launch": {
                "file": self.kernel.source.path,
                "entry": self.kernel.source.entry,
                "host_code_left_out": self
                    .kernel
                    .left_out()
                    .iter()
                    .map(|left| json!({ "what": left.what, "lines": [left.lines.0, left.lines.1] }))
                    .collect::<Vec<_>>(),
                "grid": shape.grid.as_array(),
                "block": shape.block.as_array(),
                "shared_bytes": shape.dynamic_shared_bytes,
                "args": args,
            },
            "checkers": checkers,
            "finished": self.outcome.finished(),
            "printf": self.outcome.printf.lines().collect::<Vec<_>>(),
            "printf_dropped": self.outcome.printf_dropped,
            "findings": findings,
            "buffers": buffers,
        })
    }
}
