//! The front end: a `.cu` file as people write it, compiled by NVRTC, and the kernel the user
//! names in it.
//!
//! - [`source`]: what the file holds at namespace scope, and its device part (host code blanked,
//!   lines kept).
//! - [`headers`]: where NVRTC looks for headers, and stand-ins for the standard ones.
//! - [`names`]: C++ kernel names (`ns::k`, `reduce<float, 256>`, `scale(float*, int)`) and
//!   what to say when one does not name a kernel.

pub mod headers;
pub mod names;
pub mod source;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use self::headers::SearchPath;
use self::names::EntryName;
use self::source::{LeftOut, Scan};
use super::run::Kernel;
use super::signature::{EntrySignature, entry_signatures};
use super::{CheckError, Result};
use crate::error::HarnessError;
use crate::kernel::{KernelSource, OwnBuild};
use crate::nvrtc::{self, EMU_ARCH, Extras};

/// The C++ standard NVRTC compiles with (`--std`); NVRTC's default is C++17.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CppStd {
    #[value(name = "c++17")]
    Cpp17,
    #[value(name = "c++20")]
    Cpp20,
}

impl CppStd {
    fn option(self) -> &'static str {
        match self {
            Self::Cpp17 => "-std=c++17",
            Self::Cpp20 => "-std=c++20",
        }
    }
}

/// How to compile a file, from the command line: `-I`, `-D`, `--std`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompileFlags {
    pub include_dirs: Vec<PathBuf>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    pub std: Option<CppStd>,
}

/// A `.cu` file read by the front end: its device part and how NVRTC is to compile it. NVRTC
/// runs when a kernel is asked for ([`Program::kernel`]), once on the usual path, because the
/// kernel's name goes into the compilation (it may instantiate a template).
#[derive(Debug, Clone)]
pub struct Program {
    path: &'static str,
    /// The device part of the file: what NVRTC compiles.
    source: &'static str,
    extras: Extras,
    search: SearchPath,
    scan: Scan,
    left_out: Vec<LeftOut>,
    /// The file as written, and how it was asked to be compiled: for [`Program::repaired`].
    original: String,
    flags: CompileFlags,
    /// Host declarations left out because NVRTC refused them, by file (the `.cu` path or a
    /// header's include name): indices into that file's [`Scan::declarations`].
    repairs: BTreeMap<String, Vec<usize>>,
    /// The user's headers NVRTC reads from memory: (include name, file).
    own_headers: Vec<(String, PathBuf)>,
}

impl Program {
    /// Reads `path` (relative to the working directory; reports name it as given).
    pub fn load(path: &str, flags: &CompileFlags) -> Result<Self> {
        let _front = crate::timings::Timer::start(crate::timings::Phase::Front);
        let source = std::fs::read_to_string(path).map_err(|error| CheckError::Read {
            path: path.to_string(),
            message: error.to_string(),
        })?;
        Ok(Self::new(path, source, flags))
    }

    /// `source` under the name `path`, so NVRTC's errors and the checkers' reports say
    /// `path:LINE` and `#include "…"` looks in `path`'s folder. Host code is left out here (see
    /// [`source::device_part`]). The strings are leaked: [`crate::Device::launch`] keys kernels
    /// by `&'static str`, and a program lives as long as the one-shot run that loads it.
    pub fn new(path: &str, source: String, flags: &CompileFlags) -> Self {
        Self::assemble(path, source, flags, BTreeMap::new())
    }

    fn assemble(
        path: &str,
        source: String,
        flags: &CompileFlags,
        repairs: BTreeMap<String, Vec<usize>>,
    ) -> Self {
        let scan = source::scan(&source);
        let search = SearchPath::new(Path::new(path), &flags.include_dirs);
        let part = source::device_part_without(
            &source,
            &scan,
            |include| search.finds(include),
            repairs.get(path).map_or(&[], Vec::as_slice),
        );
        let mut options = search.options();
        options.push(format!("-include={}", headers::PRELUDE));
        if uses_device_runtime(&source, &scan) {
            // NVRTC compiles `<<<…>>>` and the device runtime's calls in device code only as
            // relocatable code; the emulator is the device runtime (its child grids run as CUDA
            // 12 and 13 run them), so nothing needs linking.
            options.push("--relocatable-device-code=true".to_string());
        }
        options.extend(flags.defines.iter().map(|define| format!("-D{define}")));
        options.extend(flags.std.map(|std| std.option().to_string()));
        let mut left_out = part.left_out.clone();
        let mut headers = headers::standard_headers();
        let local = own_headers(&search, &search.file_dir.clone(), &scan, &part, &repairs);
        if !nvrtc::has_cuda_headers(&search.cuda_dirs) && needs_cuda_headers(&search, &scan, &local)
        {
            // Likely one of CUDA's: fetched once per machine, then everything is looked up again.
            match nvrtc::require_cuda_headers() {
                Ok(_) => return Self::assemble(path, source, flags, repairs),
                Err(error) => eprintln!("racetrack: {error}"),
            }
        }
        let mut own = Vec::new();
        for header in local {
            left_out.extend(header.left_out);
            own.push((header.name.clone(), header.path));
            headers.push((header.name, header.source));
        }
        Self {
            path: Box::leak(path.to_string().into_boxed_str()),
            source: Box::leak(part.source.into_boxed_str()),
            extras: Extras {
                options,
                headers,
                name_expressions: Vec::new(),
            },
            search,
            scan,
            left_out,
            original: source,
            flags: flags.clone(),
            repairs,
            own_headers: own,
        }
    }

    /// The program again with the host declarations that NVRTC's `log` complains about left
    /// out (a class of host methods in a header, a typedef of a host library's type), or `None`
    /// when there are none: the errors are the user's to see.
    fn repaired(&self, log: &str) -> Option<Self> {
        let mut repairs = self.repairs.clone();
        let mut changed = false;
        for (file, lines) in error_lines(log) {
            let scan = if file == self.path {
                Some(self.scan.clone())
            } else {
                self.header_scan(&file)
            };
            let Some(scan) = scan else {
                continue;
            };
            let entry = repairs.entry(file).or_default();
            for index in scan.host_declarations_at(&lines) {
                if !entry.contains(&index) {
                    entry.push(index);
                    changed = true;
                }
            }
        }
        changed.then(|| Self::assemble(self.path, self.original.clone(), &self.flags, repairs))
    }

    /// The scan of the user's header that NVRTC knows as `name`, as written.
    fn header_scan(&self, name: &str) -> Option<Scan> {
        let (_, path) = self.own_headers.iter().find(|(header, _)| header == name)?;
        let text = std::fs::read_to_string(path).ok()?;
        Some(source::scan(&text))
    }

    pub fn path(&self) -> &str {
        self.path
    }

    /// What the file declares, as the front end read it.
    pub fn scan(&self) -> &Scan {
        &self.scan
    }

    /// The host code left out of what NVRTC compiles.
    pub fn left_out(&self) -> &[LeftOut] {
        &self.left_out
    }

    /// The kernels NVRTC makes of the file without naming one, by their PTX (for C++ kernels,
    /// mangled) names: templates that nothing instantiates are not among them.
    pub fn entries(&self) -> Result<Vec<EntrySignature>> {
        match nvrtc::compile_with(self.path, self.source, EMU_ARCH, &self.extras) {
            Ok(compiled) => Ok(entry_signatures(&compiled.ptx)),
            Err(HarnessError::Compile { path, log }) => match self.repaired(&log) {
                Some(repaired) => repaired.entries(),
                None => Err(self.compile_error(HarnessError::Compile { path, log })),
            },
            Err(error) => Err(self.compile_error(error)),
        }
    }

    /// The kernel to launch when `--entry` was left out: the file's only kernel, by its source
    /// name, a template's only instance included (`transpose<float>`, which the file
    /// instantiates). A file with several kernels or instances, none, or one template that it
    /// does not instantiate (whose instance only the user can choose) is refused with the
    /// kernels there are.
    pub fn only_kernel(&self) -> Result<String> {
        let ptx_entries: Vec<String> = self.entries()?.into_iter().map(|e| e.name).collect();
        let kernels = names::kernel_list(&self.scan, &ptx_entries);
        let template = |listed: &str| {
            self.scan
                .kernels()
                .find(|function| function.template.is_some() && names::listed(function) == listed)
        };
        match kernels.as_slice() {
            [only] => match template(only) {
                Some(function) => Err(CheckError::Entry(format!(
                    "{} defines one kernel, the template {only}: name an instance with --entry, e.g. --entry '{}'",
                    self.path,
                    names::example_instance(function)
                ))),
                None => Ok(only.clone()),
            },
            [] => Err(CheckError::Entry(names::defines(
                self.path,
                &self.scan,
                &ptx_entries,
            ))),
            _ => Err(CheckError::Entry(format!(
                "{} has {} kernels; name the one to launch with --entry: {}",
                self.path,
                kernels.len(),
                names::defines(self.path, &self.scan, &ptx_entries)
            ))),
        }
    }

    /// Compiles the file with the kernel `entry` names, as a user writes it: `sum`, `ns::sum`,
    /// `reduce<float, 256>` (instantiated here), `scale(float*, int)`. The error says what to
    /// write instead: the kernels there are, an overload's candidates, a template's parameters.
    pub fn kernel(&self, entry: &str) -> Result<Kernel> {
        let name = EntryName::parse(entry).map_err(CheckError::Entry)?;
        let mut extras = self.extras.clone();
        extras.name_expressions = vec![name.expression()];
        let compiled = match nvrtc::compile_with(self.path, self.source, EMU_ARCH, &extras) {
            Ok(compiled) => compiled,
            Err(HarnessError::Compile { path, log }) => {
                if let Some(repaired) = self.repaired(&log) {
                    match repaired.kernel(entry) {
                        // Leaving those declarations out broke lines that compiled before (a
                        // typedef the kernel needs): the first errors are the ones to show.
                        Err(CheckError::Compile { log: later, .. }) if new_errors(&log, &later) => {
                        }
                        other => return other,
                    }
                }
                // Compiled again without the name: either the file itself does not compile
                // (that log, free of the name's lines, is the one to show), or the name is wrong
                // and the kernels there are make the hint, or the file compiles and the
                // instance the name asks for does not (a template's body): then this log.
                let entries = self.entries()?;
                let only_the_name = log
                    .lines()
                    .filter(|line| line.contains("error:"))
                    .all(|line| line.starts_with("__nv_name_map"));
                if only_the_name {
                    return Err(self.refusal(&name, &log, &entries));
                }
                return Err(self.compile_error(HarnessError::Compile { path, log }));
            }
            Err(other) => return Err(other.into()),
        };
        let entries = entry_signatures(&compiled.ptx);
        let symbol = compiled.lowered_names.first().cloned().unwrap_or_default();
        let Some(signature) = entries.iter().find(|signature| signature.name == symbol) else {
            return Err(self.refusal(&name, "", &entries));
        };
        let signature = signature.clone();
        if needs_cooperative_launch(&compiled.ptx, &symbol) {
            return Err(CheckError::Refused(format!(
                "{} synchronises the whole grid (cooperative_groups::this_grid().sync()), which needs a cooperative launch (cudaLaunchCooperativeKernel, every block resident at once); check launches kernels the ordinary way, where a GPU traps at that sync: split the kernel at the grid sync into two launches",
                name.text
            )));
        }
        let cpp_params = names::params_of(&signature.name, &self.scan);
        let build = OwnBuild {
            extras,
            symbol,
            emulator_ptx: compiled.ptx,
        };
        Ok(Kernel {
            cpp_params: if cpp_params.len() == signature.params.len() {
                cpp_params
            } else {
                Vec::new()
            },
            source: KernelSource {
                path: self.path,
                entry: Box::leak(name.text.into_boxed_str()),
                source: self.source,
                committed_ptx: "",
                own: Some(Box::leak(Box::new(build))),
            },
            signature,
            left_out: self.left_out.clone(),
            symbols: Vec::new(),
            symbol_data: Vec::new(),
        })
    }

    /// [`Program::kernel`], with the module variables that `--symbol` names (`c_kernel`,
    /// `ns::weights`) resolved to their PTX names through NVRTC's name expressions (`&NAME`),
    /// which also keeps a variable no kernel reads in the module.
    pub fn kernel_with_symbols(&self, entry: &str, symbols: &[String]) -> Result<Kernel> {
        let mut kernel = self.kernel(entry)?;
        if symbols.is_empty() {
            return Ok(kernel);
        }
        let Some(build) = kernel.source.own else {
            return Ok(kernel);
        };
        let mut extras = build.extras.clone();
        extras.name_expressions.truncate(1);
        extras
            .name_expressions
            .extend(symbols.iter().map(|symbol| format!("&{symbol}")));
        let compiled = match nvrtc::compile_with(self.path, self.source, EMU_ARCH, &extras) {
            Ok(compiled) => compiled,
            Err(HarnessError::Compile { .. }) => {
                // Which name is wrong: each alone, beside the kernel that compiled.
                for symbol in symbols {
                    let mut alone = build.extras.clone();
                    alone.name_expressions.truncate(1);
                    alone.name_expressions.push(format!("&{symbol}"));
                    if nvrtc::compile_with(self.path, self.source, EMU_ARCH, &alone).is_err() {
                        return Err(CheckError::Refused(format!(
                            "--symbol {symbol}: {} has no __constant__ or __device__ variable named {symbol}",
                            self.path
                        )));
                    }
                }
                return Err(CheckError::Refused(format!(
                    "--symbol: {} does not compile with the variables {} named",
                    self.path,
                    symbols.join(", ")
                )));
            }
            Err(other) => return Err(other.into()),
        };
        let mut resolved = Vec::with_capacity(symbols.len());
        for (symbol, ptx_name) in symbols.iter().zip(compiled.lowered_names.iter().skip(1)) {
            let bytes = super::symbols::declared_size(&compiled.ptx, ptx_name).ok_or_else(|| {
                CheckError::Refused(format!(
                    "--symbol {symbol}: {symbol} is not a __constant__ or __device__ variable of {}",
                    self.path
                ))
            })?;
            resolved.push(super::symbols::KernelSymbol {
                name: symbol.clone(),
                ptx_name: ptx_name.clone(),
                bytes,
            });
        }
        kernel.source.own = Some(Box::leak(Box::new(OwnBuild {
            extras,
            symbol: build.symbol.clone(),
            emulator_ptx: compiled.ptx,
        })));
        kernel.symbols = resolved;
        Ok(kernel)
    }

    fn refusal(&self, name: &EntryName, log: &str, entries: &[EntrySignature]) -> CheckError {
        let entry_names: Vec<String> = entries.iter().map(|entry| entry.name.clone()).collect();
        CheckError::Entry(names::explain_refusal(
            name,
            self.path,
            log,
            &self.scan,
            &entry_names,
        ))
    }

    fn compile_error(&self, error: HarnessError) -> CheckError {
        if let HarnessError::Compile { log, .. } = &error
            && let Some(refusal) = device_runtime_refusal(self.path, log, &self.scan)
        {
            return refusal;
        }
        compile_error(error, &self.left_out, &self.search)
    }
}

/// The lines NVRTC's `log` reports errors at, by file: `file.cu(12): error: …` (headers) and
/// `file.cu:12: error: …` (the program itself).
fn error_lines(log: &str) -> BTreeMap<String, Vec<u32>> {
    let mut found: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for line in log.lines() {
        let Some(at) = line
            .find(": error")
            .or_else(|| line.find(": catastrophic error"))
        else {
            continue;
        };
        let place = &line[..at];
        let parsed = if let Some(place) = place.strip_suffix(')') {
            place
                .rsplit_once('(')
                .and_then(|(file, number)| Some((file, number.parse().ok()?)))
        } else {
            place
                .rsplit_once(':')
                .and_then(|(file, number)| Some((file, number.parse().ok()?)))
        };
        if let Some((file, number)) = parsed {
            found.entry(file.to_string()).or_default().push(number);
        }
    }
    found
}

/// Whether `later` reports errors at lines `earlier` did not.
fn new_errors(earlier: &str, later: &str) -> bool {
    let before = error_lines(earlier);
    error_lines(later).iter().any(|(file, lines)| {
        lines
            .iter()
            .any(|line| !before.get(file).is_some_and(|old| old.contains(line)))
    })
}

/// One of the user's own headers, with its host code left out as from the file itself.
struct OwnHeader {
    /// As `#include` names it, which is how NVRTC looks it up among the headers it is given.
    name: String,
    path: PathBuf,
    source: String,
    left_out: Vec<LeftOut>,
}

/// Whether the file or one of its own headers includes `<…>` a header that is not found and
/// not one of a host library's (which `check` leaves out anyway), or one whose stand-in is built
/// on CUDA's headers (`<cstdlib>`, `<iostream>`): either way CUDA's headers are needed.
fn needs_cuda_headers(search: &SearchPath, scan: &Scan, own: &[OwnHeader]) -> bool {
    let own_scans: Vec<Scan> = own
        .iter()
        .map(|header| source::scan(&header.source))
        .collect();
    scan.includes
        .iter()
        .chain(own_scans.iter().flat_map(|scan| &scan.includes))
        .any(|include| {
            include.angled
                && (headers::stand_in_needs_cuda_headers(&include.name)
                    || !headers::host_only(&include.name) && !search.finds(include))
        })
}

/// The user's own headers that the device part of a file (in `dir`) includes, and theirs in
/// turn: NVRTC reads them from memory, host code blanked (a sample's `histogram_common.h`
/// declares its host functions; a book's `book.h` defines error helpers around `exit`). The
/// CUDA headers are left as they are.
fn own_headers(
    search: &SearchPath,
    dir: &Path,
    scan: &Scan,
    part: &source::DevicePart,
    repairs: &BTreeMap<String, Vec<usize>>,
) -> Vec<OwnHeader> {
    let mut found = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut todo: Vec<(PathBuf, source::Include)> = part
        .kept_includes(scan)
        .map(|include| (dir.to_path_buf(), include.clone()))
        .collect();
    todo.reverse();
    while let Some((dir, include)) = todo.pop() {
        if found
            .iter()
            .any(|header: &OwnHeader| header.name == include.name)
        {
            continue;
        }
        let Some(path) = search.local_header(&dir, &include) else {
            continue;
        };
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        if !seen.insert((canonical, include.name.clone())) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let header_dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let header_scan = source::scan(&text);
        let header_part = source::device_part_without(
            &text,
            &header_scan,
            |nested| search.finds_from(&header_dir, nested),
            repairs.get(&include.name).map_or(&[], Vec::as_slice),
        );
        let nested: Vec<_> = header_part
            .kept_includes(&header_scan)
            .map(|nested| (header_dir.clone(), nested.clone()))
            .collect();
        todo.extend(nested.into_iter().rev());
        // One entry per header: what a header leaves out is rarely the user's business.
        let lines = header_part.left_out.iter().map(|left| left.lines);
        let left_out = lines
            .reduce(|(first, last), (a, b)| (first.min(a), last.max(b)))
            .map(|lines| LeftOut {
                what: "host code".to_string(),
                lines,
                header: Some(include.name.clone()),
            })
            .into_iter()
            .collect();
        found.push(OwnHeader {
            name: include.name.clone(),
            path: path.clone(),
            source: header_part.source,
            left_out,
        });
    }
    found
}

/// Whether the kernel `symbol` reads the grid's barrier workspace (`%envreg1`, `%envreg2`), which
/// only a cooperative launch sets up: `this_grid().sync()` compiles to that, and to a `trap`
/// when it finds none.
fn needs_cooperative_launch(ptx: &str, symbol: &str) -> bool {
    let Some(start) = ptx.find(&format!(".entry {symbol}(")) else {
        return false;
    };
    let body = &ptx[start..];
    let end = body[1..]
        .find("\n.visible")
        .or_else(|| body[1..].find("\n.weak"))
        .or_else(|| body[1..].find("\n.entry"))
        .map_or(body.len(), |end| end + 1);
    let body = &body[..end];
    body.contains("%envreg1") || body.contains("%envreg2")
}

/// Whether device code in `source` launches kernels or calls the device runtime
/// (`cudaGetLastError()`, `cudaMalloc(…)` inside a `__global__` or `__device__` function).
fn uses_device_runtime(source: &str, scan: &Scan) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    scan.functions.iter().any(|function| {
        function.kind != source::FunctionKind::Host && function.defined && {
            let (first, last) = function.lines;
            let body = lines
                .get(first.saturating_sub(1) as usize..(last as usize).min(lines.len()))
                .unwrap_or_default();
            body.iter().any(|line| {
                let code = line.split("//").next().unwrap_or_default();
                code.contains("<<<") || device_runtime_call(code)
            })
        }
    })
}

/// `cudaName(` in a line of code: a call of CUDA's runtime API.
fn device_runtime_call(code: &str) -> bool {
    code.match_indices("cuda").any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let rest = &code[at + 4..];
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && rest.starts_with(|c: char| c.is_ascii_uppercase())
            && rest
                .trim_start_matches(|c: char| c.is_alphanumeric() || c == '_')
                .trim_start()
                .starts_with('(')
    })
}

/// NVRTC's log, and notes on what the front end did that may explain it.
/// Dynamic parallelism: a kernel launched from device code, or the device runtime's API
/// (`cudaDeviceSynchronize`, `cudaGetLastError`) called there. NVRTC says only that "the
/// required runtime APIs are not declared"; the sentence says what the line does and what works.
fn device_runtime_refusal(path: &str, log: &str, scan: &Scan) -> Option<CheckError> {
    let in_device_code = |line: u32| {
        scan.functions.iter().any(|function| {
            function.kind != source::FunctionKind::Host
                && (function.lines.0..=function.lines.1).contains(&line)
        })
    };
    for entry in log.lines() {
        let Some(rest) = entry
            .strip_prefix(path)
            .and_then(|rest| rest.strip_prefix(':'))
        else {
            continue;
        };
        let Some((number, message)) = rest.split_once(": error: ") else {
            continue;
        };
        let Ok(line) = number.parse::<u32>() else {
            continue;
        };
        let what = if message.starts_with("device-side kernel launch") {
            "launches a kernel from device code (dynamic parallelism)".to_string()
        } else if let Some(name) = message
            .strip_prefix("identifier \"")
            .and_then(|name| name.strip_suffix("\" is undefined"))
            .filter(|name| name.starts_with("cuda") && in_device_code(line))
        {
            format!("calls {name} from device code (the device runtime of dynamic parallelism)")
        } else {
            continue;
        };
        return Some(CheckError::Refused(format!(
            "{path}:{line} {what}, which NVRTC compiles only as relocatable code: check compiles a file so when its own device code has the launch or the call, and did not find this one (in a macro, or a header?): write it in the kernel's own lines"
        )));
    }
    None
}

/// Warp intrinsics CUDA 9 replaced by their `_sync` forms, which compute capability 7.0 and
/// later (what check compiles for) no longer have.
const LEGACY_WARP_INTRINSICS: &[(&str, &str)] = &[
    ("__shfl", "__shfl_sync(0xffffffff, v, lane)"),
    ("__shfl_up", "__shfl_up_sync(0xffffffff, v, delta)"),
    ("__shfl_down", "__shfl_down_sync(0xffffffff, v, delta)"),
    ("__shfl_xor", "__shfl_xor_sync(0xffffffff, v, mask)"),
    ("__any", "__any_sync(0xffffffff, p)"),
    ("__all", "__all_sync(0xffffffff, p)"),
    ("__ballot", "__ballot_sync(0xffffffff, p)"),
];

fn compile_error(error: HarnessError, left_out: &[LeftOut], search: &SearchPath) -> CheckError {
    let HarnessError::Compile { path, log } = error else {
        return error.into();
    };
    let mut notes = Vec::new();
    let legacy: Vec<&(&str, &str)> = LEGACY_WARP_INTRINSICS
        .iter()
        .filter(|(name, _)| log.contains(&format!("identifier \"{name}\" is undefined")))
        .collect();
    if !legacy.is_empty() {
        let names: Vec<&str> = legacy.iter().map(|(name, _)| *name).collect();
        let fixes: Vec<&str> = legacy.iter().map(|(_, fix)| *fix).collect();
        notes.push(format!(
            "note: {} without _sync {} removed for compute capability 7.0 and later (CUDA 9), where a warp's threads need not run in step; write {}, with the mask naming the lanes that take part",
            names.join(", "),
            if names.len() == 1 { "was" } else { "were" },
            fixes.join(", ")
        ));
    }
    if !left_out.is_empty() {
        notes.push(format!(
            "note: NVRTC compiles device code only, so check left out {}; if the error is in host code it kept, wrap that code in #ifndef __CUDACC_RTC__ … #endif",
            left_out_list(left_out)
        ));
    }
    let left_out_an_include = left_out
        .iter()
        .any(|left| left.what.starts_with("#include"));
    if log.contains("cannot open source file") || left_out_an_include {
        notes.push(format!(
            "note: NVRTC looked for headers in {}; add a folder with -I DIR",
            search.describe()
        ));
    }
    CheckError::Compile { path, log, notes }
}

/// `#include <iostream> (line 2), main (lines 38–42)`.
pub fn left_out_list(left_out: &[LeftOut]) -> String {
    left_out
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
