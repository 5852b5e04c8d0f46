//! `racetrack trace`: one kernel on the emulator, recorded step by step, written as the JSON
//! trace that `emu/TRACE.md` describes (or as a script that registers it, for the book's players).
//!
//! The command takes `racetrack check`'s arguments ([`CheckArgs`]); the recording itself is
//! `ptx_emu`'s ([`ptx_emu::Emulator::launch_traced`]); this module names the arrays, types the
//! values, links the findings to their events and lays the file out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ptx_emu::{
    DevicePtr, Emulator, KernelArg, LaunchConfig, Module, RunOptions, RunReport, Space, Trace,
    TraceEvent, TraceOp,
};
use serde_json::{Value as Json, json};

use crate::check::{self, CheckArgs, ElemType, HostArg, Scalar};
use crate::error::HarnessError;
use crate::nvrtc::{self, EMU_ARCH};

/// Events a trace may hold unless `--max-events` says otherwise: a few blocks of a few warps.
pub const DEFAULT_MAX_EVENTS: u64 = 200_000;

/// The format version written (see `emu/TRACE.md`).
pub const FORMAT_VERSION: u32 = 1;

/// `racetrack trace FILE.cu --entry NAME --grid G --block B --arg SPEC… --out FILE`
#[derive(Debug, Clone, clap::Args)]
pub struct TraceArgs {
    #[command(flatten)]
    pub check: CheckArgs,

    /// Where to write the trace: FILE.json, or FILE.js for the book (a script that registers
    /// the trace under FILE's name, so pages opened from disk can load it)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,

    /// Most events the trace may hold; a launch that needs more is refused (trace a smaller one)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_EVENTS,
          value_parser = clap::value_parser!(u64).range(1..=50_000_000))]
    pub max_events: u64,

    /// Draw the shared array NAME in rows of N elements, as its 2D declaration does: As=16
    #[arg(long = "columns", value_name = "NAME=N", value_parser = parse_columns)]
    pub columns: Vec<(String, u32)>,
}

fn parse_columns(text: &str) -> Result<(String, u32), String> {
    let (name, n) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=N (e.g. As=16)"))?;
    let n: u32 = n
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("`{n}` in `{text}` is not a positive number of columns"))?;
    Ok((name.to_string(), n))
}

/// Everything `racetrack trace` can refuse, each as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(transparent)]
    Check(#[from] check::CheckError),
    #[error(transparent)]
    Harness(#[from] HarnessError),
    #[error("{entry} did not run: {message}")]
    Emulator { entry: String, message: String },
    #[error("--columns names `{0}`, which is not a shared variable the kernel touches")]
    UnknownColumns(String),
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

/// The command's result: the file's text and what the run found.
#[derive(Debug)]
pub struct Recorded {
    pub text: String,
    pub events: usize,
    pub findings: usize,
}

/// Runs and records the launch `args` describe, and lays the trace out for `args.out`.
pub fn record(args: &TraceArgs) -> Result<Recorded, TraceError> {
    let prepared = check::prepare(&args.check)?;
    // Without `--entry`, the trace names the kernel `prepare` found, and its command does too.
    let named;
    let args = match args.check.entry {
        Some(_) => args,
        None => {
            let mut with_entry = args.clone();
            with_entry.check.entry = Some(prepared.kernel.source().entry.to_string());
            named = with_entry;
            &named
        }
    };
    let kernel = prepared.kernel.source();
    // A file compiled with -I/-D/--std or a C++ name has its PTX from the front end already,
    // under the mangled symbol; the project's own kernels compile with the defaults.
    let (ptx, symbol) = match kernel.own {
        Some(own) => (own.emulator_ptx.clone(), own.symbol.as_str()),
        None => (
            nvrtc::compile(kernel.path, kernel.source, EMU_ARCH)?,
            kernel.entry,
        ),
    };
    let module = Module::parse(&ptx).map_err(HarnessError::from)?;
    let mut emulator = Emulator::new();
    let mut kernel_args = Vec::new();
    for arg in &prepared.args {
        kernel_args.push(match arg {
            HostArg::Buffer {
                label,
                data,
                uninit,
                offset,
            } => {
                let ptr = if *uninit {
                    emulator.alloc_uninit(data.as_bytes().len(), label)
                } else {
                    let ptr = emulator.alloc(data.as_bytes().len(), label);
                    emulator
                        .write(ptr, data.as_bytes())
                        .map_err(HarnessError::from)?;
                    ptr
                };
                KernelArg::Ptr(DevicePtr(ptr.0 + (offset * data.ty().size()) as u64))
            }
            HostArg::Alias { target, offset, .. } => {
                let (Some(KernelArg::Ptr(start)), Some(HostArg::Buffer { data, offset: own, .. })) =
                    (kernel_args.get(*target), prepared.args.get(*target))
                else {
                    return Err(HarnessError::Invalid(format!(
                        "{arg}: a pointer into a later argument's buffer cannot be traced; give the buffer first"
                    ))
                    .into());
                };
                let size = data.ty().size();
                KernelArg::Ptr(DevicePtr(start.0 - (own * size) as u64 + (offset * size) as u64))
            }
            HostArg::Scalar { value, .. } => scalar_arg(*value),
            HostArg::Struct { label, .. } => {
                return Err(HarnessError::Invalid(format!(
                    "{label}: a struct argument cannot be traced yet; racetrack check runs it"
                ))
                .into());
            }
        });
    }
    let shape = args.check.shape();
    let config = LaunchConfig {
        grid: shape.grid.as_array(),
        block: shape.block.as_array(),
        dynamic_shared_bytes: shape.dynamic_shared_bytes,
    };
    let settings = args.check.emu_settings();
    let options = RunOptions {
        schedule: settings.schedule,
        racecheck: settings.racecheck,
        synccheck: settings.synccheck,
        memcheck: settings.memcheck,
        step_budget: settings.step_budget,
        memory_model: settings.memory_model,
        ..RunOptions::default()
    };
    let (mut report, trace) = emulator
        .launch_traced(
            &module,
            symbol,
            &config,
            &kernel_args,
            &options,
            args.max_events as usize,
        )
        .map_err(|error| TraceError::Emulator {
            entry: kernel.entry.to_string(),
            message: error.to_string(),
        })?;
    crate::emu_backend::name_cuda_headers_as_included(&mut report.findings);
    let layout = Layout::new(args, &prepared.args, &trace)?;
    let json = layout.json(args, kernel.path, kernel.source, &ptx, &report, &trace);
    let text = match args.out.extension().and_then(|e| e.to_str()) {
        Some("js") => script(&trace_key(&args.out), &json),
        _ => json,
    };
    Ok(Recorded {
        text,
        events: trace.events.len(),
        findings: report.findings.len(),
    })
}

/// Writes [`record`]'s text to `args.out`.
pub fn write(args: &TraceArgs, recorded: &Recorded) -> Result<(), TraceError> {
    std::fs::write(&args.out, &recorded.text).map_err(|error| TraceError::Write {
        path: args.out.display().to_string(),
        message: error.to_string(),
    })
}

/// The name a `.js` trace registers itself under: its file name less `.js`.
pub fn trace_key(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn script(key: &str, json: &str) -> String {
    format!(
        "// A Racetrack trace (emu/TRACE.md); regenerate it with the command it records, never by hand.\n\
         (window.racetrackTraces = window.racetrackTraces || {{}})[{}] =\n{json};\n",
        Json::String(key.to_string())
    )
}

/// The JSON inside a `.js` trace written by [`record`].
pub fn json_of_script(text: &str) -> Option<&str> {
    let start = text.find("=\n")? + 2;
    text[start..].trim_end().strip_suffix(';')
}

fn scalar_arg(value: Scalar) -> KernelArg {
    match value {
        Scalar::U8(v) => KernelArg::U8(v),
        Scalar::I8(v) => KernelArg::U8(v as u8),
        Scalar::U16(v) => KernelArg::U16(v),
        Scalar::I16(v) => KernelArg::U16(v as u16),
        Scalar::F16(v) => KernelArg::U16(v.to_bits()),
        Scalar::BF16(v) => KernelArg::U16(v.to_bits()),
        Scalar::U32(v) => KernelArg::U32(v),
        Scalar::I32(v) => KernelArg::I32(v),
        Scalar::U64(v) => KernelArg::U64(v),
        Scalar::I64(v) => KernelArg::I64(v),
        Scalar::F32(v) => KernelArg::F32(v),
        Scalar::F64(v) => KernelArg::F64(v),
    }
}

/// The command line that regenerates a trace, shell-quoted where a spec needs it.
pub fn command_line(args: &TraceArgs) -> String {
    let c = &args.check;
    let mut words = vec!["racetrack".to_string(), "trace".to_string(), c.file.clone()];
    for dir in &c.include_dirs {
        words.extend(["-I".to_string(), dir.display().to_string()]);
    }
    for define in &c.defines {
        words.extend(["-D".to_string(), define.clone()]);
    }
    if let Some(value) = c
        .std
        .and_then(|std| clap::ValueEnum::to_possible_value(&std))
    {
        words.extend(["--std".to_string(), value.get_name().to_string()]);
    }
    words.extend([
        "--entry".to_string(),
        c.entry.clone().unwrap_or_default(),
        "--grid".to_string(),
        dim_arg(c.grid),
        "--block".to_string(),
        dim_arg(c.block),
    ]);
    if c.shared > 0 {
        words.extend(["--shared".to_string(), c.shared.to_string()]);
    }
    for spec in &c.args {
        words.extend(["--arg".to_string(), spec.to_string()]);
    }
    let settings = c.emu_settings();
    let (name, seed) = schedule_name(settings.schedule);
    words.extend(["--schedule".to_string(), name.to_string()]);
    if let Some(seed) = seed {
        words.extend(["--seed".to_string(), seed.to_string()]);
    }
    if c.memory_model == crate::cli::MemoryModelName::Ptx {
        words.extend(["--memory-model".to_string(), "ptx".to_string()]);
    }
    for (flag, off) in [
        ("--no-racecheck", c.no_racecheck),
        ("--no-synccheck", c.no_synccheck),
        ("--no-memcheck", c.no_memcheck),
    ] {
        if off {
            words.push(flag.to_string());
        }
    }
    for (name, n) in &args.columns {
        words.extend(["--columns".to_string(), format!("{name}={n}")]);
    }
    if args.max_events != DEFAULT_MAX_EVENTS {
        words.extend(["--max-events".to_string(), args.max_events.to_string()]);
    }
    words
        .iter()
        .map(|w| {
            if w.chars()
                .all(|ch| ch.is_ascii_alphanumeric() || "_./:=,-+".contains(ch))
            {
                w.clone()
            } else {
                format!("'{w}'")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A launch dimension as `--grid`/`--block` take it: `16`, `16,16` or `4,4,2`.
fn dim_arg(d: crate::Dim3) -> String {
    match (d.y, d.z) {
        (1, 1) => d.x.to_string(),
        (_, 1) => format!("{},{}", d.x, d.y),
        _ => format!("{},{},{}", d.x, d.y, d.z),
    }
}

/// Splits a [`command_line`] back into the arguments after `racetrack trace`.
pub fn split_command_line(line: &str) -> Vec<String> {
    line.split_whitespace()
        .skip(2)
        .map(|w| {
            w.strip_prefix('\'')
                .and_then(|w| w.strip_suffix('\''))
                .unwrap_or(w)
                .to_string()
        })
        .collect()
}

fn schedule_name(schedule: crate::Schedule) -> (&'static str, Option<u64>) {
    match schedule {
        crate::Schedule::Hardware => ("hardware", None),
        crate::Schedule::Random { seed } => ("random", Some(seed)),
        crate::Schedule::Adversarial { seed } => ("adversarial", Some(seed)),
        crate::Schedule::Lanes { seed } => ("lanes", Some(seed)),
    }
}

/// Element types of the trace's arrays, and the rows hints.
struct Layout {
    types: Vec<ElemType>,
    columns: Vec<Option<u32>>,
}

/// The element type of a shared array, from the PTX type of its first access.
fn type_of_ptx(ptx: Option<&str>) -> ElemType {
    match ptx {
        Some("s32") => ElemType::I32,
        Some("f32") => ElemType::F32,
        Some("u64" | "b64") => ElemType::U64,
        Some("s64") => ElemType::I64,
        Some("f64") => ElemType::F64,
        Some("u8" | "s8" | "b8") => ElemType::U8,
        _ => ElemType::U32,
    }
}

impl Layout {
    fn new(args: &TraceArgs, host: &[HostArg], trace: &Trace) -> Result<Layout, TraceError> {
        let buffers: Vec<ElemType> = host
            .iter()
            .filter_map(|arg| match arg {
                HostArg::Buffer { data, .. } => Some(data.ty()),
                HostArg::Scalar { .. } | HostArg::Alias { .. } | HostArg::Struct { .. } => None,
            })
            .collect();
        let mut next_buffer = buffers.iter();
        let types = trace
            .arrays
            .iter()
            .map(|a| match a.space {
                Space::Global => next_buffer
                    .next()
                    .copied()
                    .unwrap_or_else(|| type_of_ptx(a.first_access_type)),
                _ => type_of_ptx(a.first_access_type),
            })
            .collect();
        for (name, _) in &args.columns {
            if !trace.arrays.iter().any(|a| &a.name == name) {
                return Err(TraceError::UnknownColumns(name.clone()));
            }
        }
        let columns = trace
            .arrays
            .iter()
            .map(|a| {
                args.columns
                    .iter()
                    .find(|(name, _)| *name == a.name)
                    .map(|c| c.1)
            })
            .collect();
        Ok(Layout { types, columns })
    }

    fn value(&self, array: u32, bits: u64) -> Json {
        typed_value(
            self.types
                .get(array as usize)
                .copied()
                .unwrap_or(ElemType::U32),
            bits,
        )
    }

    fn index(&self, array: u32, offset: u64) -> u64 {
        let size = self
            .types
            .get(array as usize)
            .map_or(4, |t| t.size() as u64);
        offset / size
    }

    fn json(
        &self,
        args: &TraceArgs,
        path: &str,
        source: &str,
        ptx: &str,
        report: &RunReport,
        trace: &Trace,
    ) -> String {
        let ptx_lines: Vec<&str> = ptx.lines().collect();
        let (name, seed) = schedule_name(args.check.emu_settings().schedule);
        let launch = args.check.shape();
        let header = [
            ("format", json!("racetrack-trace")),
            ("version", json!(FORMAT_VERSION)),
            ("command", json!(command_line(args))),
            ("kernel", json!({ "file": path, "entry": args.check.entry })),
            (
                "launch",
                json!({
                    "grid": launch.grid.as_array(),
                    "block": launch.block.as_array(),
                    "dynamic_shared_bytes": launch.dynamic_shared_bytes,
                }),
            ),
            ("schedule", json!({ "name": name, "seed": seed })),
            ("completed", json!(report.completed)),
        ];
        let mut out = String::from("{\n");
        for (key, value) in header {
            let _ = writeln!(out, "\"{key}\": {value},");
        }
        let source_lines: Vec<Json> = source.lines().map(|l| json!(l)).collect();
        out.push_str("\"source\": [\n");
        push_lines(&mut out, source_lines);
        out.push_str("],\n\"warps\": [\n");
        push_lines(
            &mut out,
            trace
                .warps
                .iter()
                .map(
                    |w| json!({"block": w.block, "first_thread": w.first_thread, "lanes": w.lanes}),
                )
                .collect(),
        );
        out.push_str("],\n\"arrays\": [\n");
        push_lines(
            &mut out,
            trace
                .arrays
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let ty = self.types[i];
                    let length = a.bytes / ty.size() as u64;
                    let initial = a.initial.as_ref().map(|bytes| {
                        Json::Array(
                            bytes
                                .chunks_exact(ty.size())
                                .map(|c| {
                                    let mut b = [0u8; 8];
                                    b[..c.len()].copy_from_slice(c);
                                    typed_value(ty, u64::from_le_bytes(b))
                                })
                                .collect(),
                        )
                    });
                    json!({
                        "name": a.name,
                        "space": a.space.to_string(),
                        "block": a.block,
                        "type": ty.name(),
                        "length": length,
                        "columns": self.columns[i],
                        "initial": initial,
                    })
                })
                .collect(),
        );
        out.push_str("],\n\"program\": [\n");
        push_lines(
            &mut out,
            trace
                .program
                .iter()
                .map(|p| {
                    let text = ptx_lines
                        .get((p.ptx_line as usize).wrapping_sub(1))
                        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                        .unwrap_or_default();
                    json!({"line": p.line, "inlined_at": p.inlined_at, "ptx_line": p.ptx_line, "text": text})
                })
                .collect(),
        );
        out.push_str("],\n\"events\": [\n");
        push_lines(
            &mut out,
            trace.events.iter().map(|e| self.event(e)).collect(),
        );
        out.push_str("],\n\"findings\": [\n");
        push_lines(
            &mut out,
            report
                .findings
                .iter()
                .enumerate()
                .map(|(i, f)| self.finding(f, trace.finding_events.get(i), trace))
                .collect(),
        );
        out.push_str("]\n}");
        out
    }

    fn event(&self, e: &TraceEvent) -> Json {
        match e {
            TraceEvent::Step {
                warp,
                lanes,
                pc,
                access,
                barrier,
                exit,
                findings,
            } => {
                let mut object = serde_json::Map::new();
                object.insert("kind".into(), json!("step"));
                object.insert("warp".into(), json!(warp));
                object.insert("lanes".into(), json!(lanes));
                object.insert("pc".into(), json!(pc));
                if let Some(a) = access {
                    let op = match a.op {
                        TraceOp::Read => "read",
                        TraceOp::Write => "write",
                        TraceOp::Atomic => "atomic",
                    };
                    let lanes: Vec<Json> = a
                        .lanes
                        .iter()
                        .map(|l| {
                            let mut entry = vec![
                                json!(l.lane),
                                json!(l.array),
                                json!(self.index(l.array, l.offset)),
                                self.value(l.array, l.value),
                            ];
                            if let Some(new) = l.new {
                                entry.push(self.value(l.array, new));
                            }
                            Json::Array(entry)
                        })
                        .collect();
                    let mut access = serde_json::Map::new();
                    access.insert("op".into(), json!(op));
                    if a.strong {
                        access.insert("strong".into(), json!(true));
                    }
                    if let Some(atomic) = a.atomic {
                        access.insert("atomic".into(), json!(atomic));
                    }
                    access.insert("space".into(), json!(a.space.to_string()));
                    access.insert("lanes".into(), Json::Array(lanes));
                    object.insert("access".into(), Json::Object(access));
                }
                if let Some(id) = barrier {
                    object.insert("barrier".into(), json!(id));
                }
                if *exit != 0 {
                    object.insert("exit".into(), json!(exit));
                }
                if !findings.is_empty() {
                    object.insert("findings".into(), json!(findings));
                }
                Json::Object(object)
            }
            TraceEvent::Barrier { block, id } => {
                json!({"kind": "barrier", "block": block, "id": id})
            }
        }
    }

    fn finding(
        &self,
        f: &ptx_emu::Finding,
        events: Option<&Vec<Option<ptx_emu::EventLane>>>,
        trace: &Trace,
    ) -> Json {
        use ptx_emu::FindingKind as K;
        let (kind, hazard, space) = match f.kind {
            K::Race { hazard, space } => ("race", Some(hazard.to_string()), Some(space)),
            K::StreamRace { hazard } => (
                "stream-race",
                Some(hazard.to_string()),
                Some(ptx_emu::Space::Global),
            ),
            K::NoPeerAccess => ("no-peer-access", None, Some(ptx_emu::Space::Global)),
            K::StreamsStuck => ("streams-stuck", None, Some(ptx_emu::Space::Global)),
            K::BarrierDivergence => ("barrier-divergence", None, None),
            K::Deadlock => ("deadlock", None, None),
            K::OutOfBounds { space } => ("out-of-bounds", None, Some(space)),
            K::Misaligned { space } => ("misaligned", None, Some(space)),
            K::UninitializedRead { space } => ("uninitialized-read", None, Some(space)),
            K::StepBudgetExhausted => ("step-budget", None, None),
            K::Stuck => ("stuck", None, None),
            K::AssertionFailed => ("assertion-failed", None, None),
            K::UseAfterFree => ("use-after-free", None, None),
            K::DoubleFree => ("double-free", None, None),
            K::InvalidFree => ("invalid-free", None, None),
            K::StackOverflow => ("stack-overflow", None, None),
            K::Trap => ("trap", None, None),
            K::InvalidCallTarget => ("invalid-call-target", None, None),
            K::WarpSync { .. } => ("warp-sync", None, None),
        };
        let events = events.map(Vec::as_slice).unwrap_or(&[]);
        let accesses: Vec<Json> = f
            .accesses
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let at = events.get(i).copied().flatten();
                json!({
                    "op": a.op.to_string(),
                    "event": at.map(|e| e.event),
                    "lane": at.map(|e| e.lane),
                    "block": a.thread.block,
                    "thread": a.thread.thread,
                    "line": a.at.line,
                })
            })
            .collect();
        // The element: where the last access's lane touched memory in its step.
        let location =
            events
                .last()
                .copied()
                .flatten()
                .and_then(|at| match trace.events.get(at.event) {
                    Some(TraceEvent::Step {
                        access: Some(access),
                        ..
                    }) => {
                        access.lanes.iter().find(|l| l.lane == at.lane).map(
                            |l| json!({"array": l.array, "index": self.index(l.array, l.offset)}),
                        )
                    }
                    _ => None,
                });
        json!({
            "kind": kind,
            "hazard": hazard,
            "space": space.map(|s| s.to_string()),
            "location": location,
            "accesses": accesses,
            "count": f.count,
            "text": f.to_string(),
        })
    }
}

fn push_lines(out: &mut String, items: Vec<Json>) {
    let n = items.len();
    for (i, item) in items.into_iter().enumerate() {
        out.push_str(&item.to_string());
        out.push_str(if i + 1 < n { ",\n" } else { "\n" });
    }
}

/// A value of `ty` from its little-endian bits, as the format writes it: a JSON number, or a
/// string for 64-bit integers beyond 2^53 and for floats that are not finite.
fn typed_value(ty: ElemType, bits: u64) -> Json {
    const EXACT: u64 = 1 << 53;
    match ty {
        ElemType::U8 => json!(bits as u8),
        ElemType::I8 => json!(bits as u8 as i8),
        ElemType::U16 => json!(bits as u16),
        ElemType::I16 => json!(bits as u16 as i16),
        ElemType::F16 => float(f64::from(half::f16::from_bits(bits as u16))),
        ElemType::BF16 => float(f64::from(half::bf16::from_bits(bits as u16))),
        ElemType::I32 => json!(bits as u32 as i32),
        ElemType::U32 => json!(bits as u32),
        ElemType::U64 if bits <= EXACT => json!(bits),
        ElemType::U64 => json!(bits.to_string()),
        ElemType::I64 if (bits as i64).unsigned_abs() <= EXACT => json!(bits as i64),
        ElemType::I64 => json!((bits as i64).to_string()),
        // The shortest decimal that reads back as the same f32, rather than its f64 expansion.
        ElemType::F32 => {
            let v = f32::from_bits(bits as u32);
            float(v.to_string().parse().unwrap_or(v as f64))
        }
        ElemType::F64 => float(f64::from_bits(bits)),
    }
}

fn float(v: f64) -> Json {
    if v.is_nan() {
        json!("NaN")
    } else if v.is_infinite() {
        json!(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(v)
    }
}
