//! One launch: arguments checked against the kernel's PTX signature, uploaded, run, downloaded.

use half::{bf16, f16};

use super::args::{ArgKind, ArgSpec, HostArg, Scalar, StructLayout};
use super::cli::CheckArgs;
use super::ctype::{Given, GivenArg, check_c_signature};
use super::data::{ElemType, HostData, HostElement};
use super::front::Program;
use super::front::source::LeftOut;
use super::signature::EntrySignature;
use super::{CheckError, Result};
use crate::device::{Arg, Buffer, Device, Finding, FindingKind, MAX_STRUCT_ARG_BYTES, StructArg};
use crate::kernel::KernelSource;
use crate::launch::LaunchShape;
use crate::timings::{self, Phase, Timer};

/// One entry of a [`Program`], ready to launch.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub(super) source: KernelSource,
    pub(super) signature: EntrySignature,
    /// Host code the front end left out of what NVRTC compiled.
    pub(super) left_out: Vec<LeftOut>,
    /// The C++ parameters, one per PTX parameter (`int *x`, or `float const*` when read back
    /// from a mangled name); empty when they could not be told.
    pub(super) cpp_params: Vec<String>,
    /// The variables `--symbol` sets before the launch, and what it sets them to.
    pub(super) symbols: Vec<super::symbols::KernelSymbol>,
    pub(super) symbol_data: Vec<HostData>,
}

/// An argument on the device.
enum Slot {
    /// A buffer, and the bytes into it that the kernel's pointer starts.
    Buffer(Buffer<u8>, usize),
    /// A pointer into the buffer of another slot, bytes from its start.
    Alias(usize, usize),
    Scalar(Scalar),
    /// A struct: its fields' slots (buffers and scalars) and where each goes.
    Struct(Vec<Slot>, StructLayout),
}

/// What a run left: the checkers' findings, what the kernel printed, and every buffer
/// argument's contents after it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub findings: Vec<Finding>,
    /// Device `printf` output and failed-assert messages, as standard output shows them.
    pub printf: String,
    /// `printf` calls the emulator dropped because its printf buffer was full.
    pub printf_dropped: u64,
    /// One per argument: `Some` for buffers, `None` for scalars.
    pub outputs: Vec<Option<HostData>>,
    /// The buffers struct arguments point to, after the run: (argument, field's label, data).
    pub field_outputs: Vec<(usize, String, HostData)>,
}

impl Outcome {
    /// Whether every thread reached its end: no deadlock, no stuck or stopped kernel, no failed
    /// assert.
    pub fn finished(&self) -> bool {
        !self.findings.iter().any(|finding| {
            matches!(
                finding.kind,
                FindingKind::Deadlock
                    | FindingKind::StepBudgetExhausted
                    | FindingKind::Stuck
                    | FindingKind::AssertionFailed
                    | FindingKind::StackOverflow
                    | FindingKind::Trap
                    | FindingKind::InvalidCallTarget
            )
        })
    }

    /// The contents of buffer argument `index` as `T`s.
    pub fn values<T: HostElement>(&self, index: usize) -> Option<&[T]> {
        self.outputs.get(index)?.as_ref()?.values()
    }
}

impl Kernel {
    pub fn source(&self) -> &KernelSource {
        &self.source
    }

    pub fn signature(&self) -> &EntrySignature {
        &self.signature
    }

    /// The C++ parameters, one per PTX parameter (`int *x`); empty when they could not be told.
    pub fn cpp_params(&self) -> &[String] {
        &self.cpp_params
    }

    /// Host code the front end left out of what NVRTC compiled.
    pub fn left_out(&self) -> &[LeftOut] {
        &self.left_out
    }

    /// Checks count and types of `args` against the kernel's parameters: the C++ declaration
    /// where it can be read (pointer or scalar, element type, width, signedness), then the PTX,
    /// which the cuda backend hands the driver as it is (a mismatch there is undefined
    /// behaviour). Each argument comes with what it gives (`None` where that is unknown, as for
    /// a pointer into a buffer that is not there) and its text for the message.
    pub fn check_args(
        &self,
        args: impl ExactSizeIterator<Item = (ArgKind, Option<Given>, String)>,
    ) -> Result<()> {
        let args: Vec<(ArgKind, Option<Given>, String)> = args.collect();
        let params = &self.signature.params;
        if args.len() != params.len() {
            let types: Vec<_> = params.iter().map(|param| param.ptx_type.as_str()).collect();
            return Err(CheckError::ArgCount {
                entry: self.source.entry.to_string(),
                expected: params.len(),
                given: args.len(),
                params: if types.is_empty() {
                    "none".to_string()
                } else if self.cpp_params.len() == params.len() {
                    format!("{}; PTX {}", self.cpp_params.join(", "), types.join(", "))
                } else {
                    format!("PTX {}", types.join(", "))
                },
            });
        }
        if self.cpp_params.len() == params.len() {
            let given: Vec<GivenArg> = args
                .iter()
                .map(|(_, given, text)| GivenArg {
                    given: given.clone().unwrap_or(Given::Unknown),
                    text: text.clone(),
                })
                .collect();
            check_c_signature(self.source.entry, &self.cpp_params, &given)?;
        }
        for (index, ((kind, _, text), param)) in args.into_iter().zip(params).enumerate() {
            if !param.accepts(kind) {
                let declared = self
                    .cpp_params
                    .get(index)
                    .map_or(String::new(), |cpp| format!(" (`{cpp}`)"));
                let given = match kind {
                    ArgKind::Struct { bytes, align } => {
                        format!("; the fields given lay out as {bytes} bytes aligned to {align}")
                    }
                    ArgKind::Buffer | ArgKind::Scalar(_) => String::new(),
                };
                return Err(CheckError::ArgType {
                    index,
                    arg: text,
                    entry: self.source.entry.to_string(),
                    param: format!(
                        "{declared} of {}: {}{given}",
                        self.source.entry,
                        param.describe()
                    ),
                });
            }
        }
        Ok(())
    }

    /// Uploads the buffers, launches, waits, and downloads every buffer.
    pub fn run(
        &self,
        device: &mut Device,
        shape: LaunchShape,
        args: &[HostArg],
    ) -> Result<Outcome> {
        let every: Vec<usize> = (0..args.len()).collect();
        self.run_keeping(device, shape, args, &every)
    }

    /// [`Kernel::run`], downloading only the buffers of the arguments in `kept` (and of their
    /// structs' fields): the others' outputs are `None`. A report shows a few buffers, and
    /// copying back a large input it does not show took most of the time after a launch.
    pub fn run_keeping(
        &self,
        device: &mut Device,
        shape: LaunchShape,
        args: &[HostArg],
        kept: &[usize],
    ) -> Result<Outcome> {
        self.check_args(
            args.iter()
                .map(|arg| (arg.kind(), arg.given(args), arg.to_string())),
        )?;
        let fill = Timer::start(Phase::Fill);
        let mut slots = Vec::with_capacity(args.len());
        for arg in args {
            slots.push(match arg {
                HostArg::Buffer { .. } => upload(device, arg)?,
                HostArg::Alias { target, offset, .. } => {
                    let Some(HostArg::Buffer { data, .. }) = args.get(*target) else {
                        return Err(CheckError::Refused(format!(
                            "{arg} points into argument {target}, which is not a buffer"
                        )));
                    };
                    Slot::Alias(*target, offset * data.ty().size())
                }
                HostArg::Scalar { value, .. } => Slot::Scalar(*value),
                HostArg::Struct { fields, .. } => {
                    let layout = arg.layout().unwrap_or_else(|| StructLayout::of([]));
                    if layout.bytes > MAX_STRUCT_ARG_BYTES {
                        return Err(CheckError::Refused(format!(
                            "{arg} is {} bytes; a kernel takes at most {MAX_STRUCT_ARG_BYTES} bytes of struct by value here",
                            layout.bytes
                        )));
                    }
                    let mut field_slots = Vec::with_capacity(fields.len());
                    for field in fields {
                        field_slots.push(match field {
                            HostArg::Buffer { .. } => upload(device, field)?,
                            HostArg::Scalar { value, .. } => Slot::Scalar(*value),
                            other => {
                                return Err(CheckError::Refused(format!(
                                    "{other}: a struct's field is a scalar or a buffer"
                                )));
                            }
                        });
                    }
                    Slot::Struct(field_slots, layout)
                }
            });
        }
        let structs: Vec<Option<StructArg<'_>>> = slots
            .iter()
            .map(|slot| match slot {
                Slot::Struct(fields, layout) => Some(struct_arg(fields, layout)),
                _ => None,
            })
            .collect();
        for (symbol, data) in self.symbols.iter().zip(&self.symbol_data) {
            device.write_symbol(&self.source, &symbol.ptx_name, data.as_bytes())?;
        }
        let launch_args: Vec<Arg<'_>> = slots
            .iter()
            .zip(&structs)
            .map(|(slot, fields)| match slot {
                Slot::Struct(..) => fields.as_ref().map(Arg::Struct).ok_or_else(not_a_buffer),
                Slot::Buffer(buffer, offset) => Ok(Arg::at(buffer, *offset)),
                Slot::Alias(target, offset) => match slots.get(*target) {
                    Some(Slot::Buffer(buffer, _)) => Ok(Arg::at(buffer, *offset)),
                    _ => Err(not_a_buffer()),
                },
                Slot::Scalar(value) => Ok(value.arg()),
            })
            .collect::<Result<_>>()?;
        drop(fill);
        let report = timings::time(Phase::Launch, || {
            device.launch(&self.source, shape, &launch_args)
        })?;
        let _copy_back = Timer::start(Phase::CopyBack);
        let mut outputs = Vec::with_capacity(args.len());
        for (index, (arg, slot)) in args.iter().zip(&slots).enumerate() {
            outputs.push(match (arg, slot) {
                _ if !kept.contains(&index) => None,
                (HostArg::Buffer { data, .. }, Slot::Buffer(buffer, _)) => {
                    Some(download(device, buffer, data.ty())?)
                }
                _ => None,
            });
        }
        let mut field_outputs = Vec::new();
        for (index, (arg, slot)) in args.iter().zip(&slots).enumerate() {
            let (HostArg::Struct { fields, .. }, Slot::Struct(field_slots, _)) = (arg, slot) else {
                continue;
            };
            if !kept.contains(&index) {
                continue;
            }
            for (field, field_slot) in fields.iter().zip(field_slots) {
                if let (HostArg::Buffer { label, data, .. }, Slot::Buffer(buffer, _)) =
                    (field, field_slot)
                {
                    let after = download(device, buffer, data.ty())?;
                    field_outputs.push((index, label.clone(), after));
                }
            }
        }
        Ok(Outcome {
            findings: report.findings,
            printf: report.printf,
            printf_dropped: report.printf_dropped,
            outputs,
            field_outputs,
        })
    }
}

/// A buffer argument (or struct field) on the device, and the bytes into it the kernel's pointer
/// starts; anything else is not uploaded.
fn upload(device: &mut Device, arg: &HostArg) -> Result<Slot> {
    let HostArg::Buffer {
        label,
        data,
        uninit,
        offset,
    } = arg
    else {
        return Err(CheckError::Refused(format!("{arg} is not a buffer")));
    };
    let buffer = if *uninit {
        device.uninit::<u8>(data.as_bytes().len(), label)?
    } else {
        device.upload(data.as_bytes(), label)?
    };
    Ok(Slot::Buffer(buffer, offset * data.ty().size()))
}

/// `buffer`'s contents as `ty`s, copied once, straight into the values' memory.
fn download(device: &mut Device, buffer: &Buffer<u8>, ty: ElemType) -> Result<HostData> {
    with_type!(ty, download_as(device, buffer))
}

fn download_as<T: HostElement>(device: &mut Device, buffer: &Buffer<u8>) -> Result<HostData> {
    let mut values: Vec<T> = bytemuck::zeroed_vec(buffer.len() / std::mem::size_of::<T>());
    device.download_into(buffer, bytemuck::cast_slice_mut(&mut values))?;
    Ok(T::into_data(values))
}

/// A struct's bytes: each scalar field written at its offset, each buffer field left for the
/// backend to fill with the buffer's device address.
fn struct_arg<'a>(fields: &'a [Slot], layout: &StructLayout) -> StructArg<'a> {
    let mut bytes = vec![0u8; layout.bytes];
    let mut pointers = Vec::new();
    for (field, &at) in fields.iter().zip(&layout.offsets) {
        match field {
            Slot::Scalar(value) => {
                let value = value.to_le_bytes();
                bytes[at..at + value.len()].copy_from_slice(&value);
            }
            Slot::Buffer(buffer, offset) => pointers.push((at, buffer.raw(), *offset)),
            Slot::Alias(..) | Slot::Struct(..) => {}
        }
    }
    StructArg { bytes, pointers }
}

fn not_a_buffer() -> CheckError {
    CheckError::Refused("a pointer argument points into an argument that is not a buffer".into())
}

/// Names the arguments given without a name after the kernel parameter that receives them
/// (`n`, not `arg2`), as reports show them; where another argument already has that name, or
/// the parameter has none, they keep theirs.
fn name_as_the_kernel_does(specs: &[ArgSpec], args: &mut [HostArg], cpp_params: &[String]) {
    if cpp_params.len() != args.len() || specs.len() != args.len() {
        return;
    }
    let mut taken: Vec<String> = specs.iter().filter_map(|spec| spec.name.clone()).collect();
    for ((spec, arg), param) in specs.iter().zip(args.iter_mut()).zip(cpp_params) {
        let Some(name) = super::CParam::parse(param).name else {
            continue;
        };
        if spec.name.is_some() || taken.contains(&name) {
            continue;
        }
        rename(arg, &name);
        taken.push(name);
    }
}

/// Labels `arg` `name`, and a struct's fields `name.field`.
fn rename(arg: &mut HostArg, name: &str) {
    match arg {
        HostArg::Scalar { label, .. }
        | HostArg::Buffer { label, .. }
        | HostArg::Alias { label, .. } => *label = name.to_string(),
        HostArg::Struct { label, fields } => {
            for field in fields {
                let field_name = match field {
                    HostArg::Scalar { label: inner, .. }
                    | HostArg::Buffer { label: inner, .. }
                    | HostArg::Alias { label: inner, .. }
                    | HostArg::Struct { label: inner, .. } => inner
                        .strip_prefix(label.as_str())
                        .map(|rest| format!("{name}{rest}")),
                };
                if let Some(field_name) = field_name {
                    rename(field, &field_name);
                }
            }
            *label = name.to_string();
        }
    }
}

/// Everything up to the launch: compile, check the arguments, make their data. Runs before a
/// device is opened, so bad input never waits for a GPU. Without `--entry`, the kernel is the
/// file's only one ([`Program::only_kernel`]), and the prepared kernel carries its name.
#[derive(Debug)]
pub struct Prepared {
    pub kernel: Kernel,
    pub args: Vec<HostArg>,
    pub shown: Vec<usize>,
}

pub fn prepare(args: &CheckArgs) -> Result<Prepared> {
    let shown = args.shown()?;
    let program = Program::load(&args.file, &args.compile_flags())?;
    let names: Vec<String> = args.symbols.iter().map(|spec| spec.name.clone()).collect();
    let entry = match &args.entry {
        Some(entry) => entry.clone(),
        None => program.only_kernel()?,
    };
    let mut kernel = program.kernel_with_symbols(&entry, &names)?;
    kernel.set_symbols(&args.symbols)?;
    kernel.check_args(
        args.args
            .iter()
            .map(|spec| (spec.kind(), spec.given(&args.args), spec.to_string())),
    )?;
    let mut host_args = timings::time(Phase::Fill, || super::args::resolve_all(&args.args))?;
    name_as_the_kernel_does(&args.args, &mut host_args, &kernel.cpp_params);
    Ok(Prepared {
        kernel,
        args: host_args,
        shown,
    })
}

impl Kernel {
    /// The variables [`Program::kernel_with_symbols`] resolved.
    pub fn symbols(&self) -> &[super::symbols::KernelSymbol] {
        &self.symbols
    }

    /// What each of [`Kernel::symbols`] holds at the launch, in their order, as `--symbol` sets.
    pub fn set_symbols(&mut self, specs: &[super::SymbolSpec]) -> Result<()> {
        self.symbol_data = symbol_data(self, specs)?;
        Ok(())
    }
}

/// The data of each `--symbol`, checked against the size of the variable it fills.
fn symbol_data(kernel: &Kernel, specs: &[super::SymbolSpec]) -> Result<Vec<HostData>> {
    specs
        .iter()
        .zip(&kernel.symbols)
        .map(|(spec, symbol)| {
            let refuse = |reason: String| CheckError::Refused(format!("--symbol {spec}: {reason}"));
            let data = match spec.data.resolve(0) {
                Ok(HostArg::Buffer { data, .. }) => data,
                Ok(HostArg::Scalar { .. } | HostArg::Alias { .. } | HostArg::Struct { .. }) => {
                    return Err(refuse("not a buffer".to_string()));
                }
                Err(CheckError::Fill { reason, .. }) => return Err(refuse(reason)),
                Err(other) => return Err(other),
            };
            let bytes = data.as_bytes().len();
            if bytes > symbol.bytes {
                return Err(refuse(format!(
                    "{} holds {} bytes, fewer than the {bytes} given",
                    symbol.name, symbol.bytes
                )));
            }
            Ok(data)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::backend::BackendChoice;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        check: CheckArgs,
    }

    /// `racetrack check FILE ARGS… --backend emu` of a file of the check corpus, as the command
    /// runs it: what it shows, and what came back.
    fn run(file: &str, args: &[&str]) -> (Vec<usize>, Outcome) {
        crate::testing::require_nvrtc();
        let path = crate::ptx::workspace_root()
            .join("harness/tests/check_corpus")
            .join(file);
        let path = path.display().to_string();
        let mut all = vec!["check", path.as_str(), "--backend", "emu"];
        all.extend(args);
        let cli = Cli::try_parse_from(all).expect("a check command line");
        let prepared = prepare(&cli.check).expect("prepared");
        let mut device = Device::open(BackendChoice::Emu).expect("the emulator");
        device.set_emu_settings(cli.check.emu_settings());
        let outcome = prepared
            .kernel
            .run_keeping(
                &mut device,
                cli.check.shape(),
                &prepared.args,
                &prepared.shown,
            )
            .expect("a run");
        (prepared.shown, outcome)
    }

    fn came_back(outcome: &Outcome) -> Vec<bool> {
        outcome.outputs.iter().map(Option::is_some).collect()
    }

    /// A buffer comes back when the report shows it (`--show`, every buffer without it, the
    /// buffer a shown pointer points into, a shown struct's fields), and only then: the others
    /// stay on the device, however large.
    #[test]
    fn only_the_buffers_a_report_shows_come_back() {
        let scale = [
            "--entry",
            "scale",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "out:f32[64]=zeros",
            "--arg",
            "in:f32[64]=iota",
            "--arg",
            "f32=3",
            "--arg",
            "n:i32=64",
        ];
        let tripled: Vec<f32> = (0..64).map(|i| 3.0 * i as f32).collect();
        let iota: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let (shown, every) = run("one_allocation.cu", &scale);
        assert_eq!(shown, [0, 1]);
        assert_eq!(came_back(&every), [true, true, false, false]);
        assert_eq!(every.values::<f32>(0), Some(&tripled[..]));
        assert_eq!(every.values::<f32>(1), Some(&iota[..]));
        for show in ["out", "0"] {
            let (shown, out) = run(
                "one_allocation.cu",
                &[&scale[..], &["--show", show]].concat(),
            );
            assert_eq!(shown, [0]);
            assert_eq!(came_back(&out), [true, false, false, false]);
            assert_eq!(out.values::<f32>(0), Some(&tripled[..]));
        }
        let (_, input) = run(
            "one_allocation.cu",
            &[&scale[..], &["--show", "in"]].concat(),
        );
        assert_eq!(came_back(&input), [false, true, false, false]);
        assert_eq!(input.values::<f32>(1), Some(&iota[..]));

        // A pointer into another argument's buffer shows that buffer.
        let drift = [
            "--entry",
            "drift",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "pos:f32[128]=iota",
            "--arg",
            "vel=pos+64",
            "--arg",
            "f32=0.5",
            "--arg",
            "n:i32=64",
            "--show",
            "vel",
        ];
        let (shown, drift) = run("one_allocation.cu", &drift);
        assert_eq!(shown, [0]);
        assert_eq!(came_back(&drift), [true, false, false, false]);
        assert_eq!(
            drift.values::<f32>(0).map(|pos| pos[1]),
            Some(1.0 + 0.5 * 65.0)
        );

        // A struct's fields come back with it, and only with it.
        let locked = |show: &str| {
            run(
                "struct_args.cu",
                &[
                    "--entry",
                    "locked_add",
                    "--grid",
                    "4",
                    "--block",
                    "32",
                    "--arg",
                    "lock:{mutex:i32[1]=zeros}",
                    "--arg",
                    "total:i32[1]=zeros",
                    "--show",
                    show,
                ],
            )
            .1
        };
        let total = locked("total");
        assert_eq!(came_back(&total), [false, true]);
        assert!(total.field_outputs.is_empty());
        assert_eq!(total.values::<i32>(1), Some(&[4][..]));
        let lock = locked("lock");
        assert_eq!(came_back(&lock), [false, false]);
        assert_eq!(
            lock.field_outputs,
            [(0, "lock.mutex".to_string(), HostData::I32(vec![0]))]
        );
    }
}
