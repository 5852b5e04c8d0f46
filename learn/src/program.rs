//! The learner's file compiled by NVRTC, and the kernels a host finds in it.

use harness::check::front::{names, source};
use harness::check::{CParam, CType, EntrySignature, ParamClass, entry_signatures};
use harness::nvrtc::{self, EMU_ARCH};
use harness::{HarnessError, KernelSource};

use crate::check::Failure;

/// A learner's `.cu` file that NVRTC compiled, named by its repository path so that NVRTC's
/// log and the checkers' reports say `exercises/…cu:LINE`.
#[derive(Debug, Clone)]
pub struct Program {
    pub path: &'static str,
    pub source: &'static str,
    pub entries: Vec<EntrySignature>,
    /// Names the exercise knows its kernel by (the starting file's, then the solution's), tried
    /// before the name of the chapter kernel a host launches it as.
    pub names: Vec<&'static str>,
}

impl Program {
    /// Compiles `source` as `path`. The strings are leaked: the device keys kernels by
    /// `&'static str`, and a check compiles a file once per save.
    pub fn compile(path: &str, source: &str, names: Vec<&'static str>) -> Result<Self, Failure> {
        if let Err(error) = nvrtc::require_nvrtc() {
            return Err(Failure::NoNvrtc(error.to_string()));
        }
        let ptx = match nvrtc::compile(path, source, EMU_ARCH) {
            Ok(ptx) => ptx,
            Err(HarnessError::Compile { log, .. }) => return Err(Failure::Compile { log }),
            Err(other) => return Err(Failure::Setup(other.to_string())),
        };
        Ok(Self {
            path: Box::leak(path.to_string().into_boxed_str()),
            source: Box::leak(source.to_string().into_boxed_str()),
            entries: entry_signatures(&ptx),
            names,
        })
    }

    pub fn defines(&self, name: &str) -> Option<&EntrySignature> {
        self.entries.iter().find(|entry| entry.name == name)
    }

    /// The learner's kernel that a host launches as the chapter's `like`: found by one of
    /// [`Program::names`] or `like`'s own name, and refused unless it takes the parameters
    /// `like` takes.
    pub fn kernel(&self, like: &KernelSource) -> Result<KernelSource, Failure> {
        let names = self.names.iter().copied().chain([like.entry]);
        self.kernel_named(names, like)
    }

    /// As [`Program::kernel`], trying only `names`.
    pub fn kernel_named<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
        like: &KernelSource,
    ) -> Result<KernelSource, Failure> {
        let names: Vec<&str> = names.into_iter().collect();
        let Some(found) = names.iter().find_map(|name| self.defines(name)) else {
            // The host launches the learner's kernel under the file's own name, with the
            // chapter's kernel's parameters: one name in the sentence, not both.
            let name = names.first().copied().unwrap_or(like.entry);
            return Err(Failure::Kernel(format!(
                "{} defines no kernel `{name}`; the host launches it as {}{}",
                self.path,
                c_signature(like).replacen(like.entry, name, 1),
                self.defined_list()
            )));
        };
        if !same_parameters(found, like) {
            return Err(Failure::Kernel(format!(
                "`{}` takes {}, but the host passes what {} takes",
                found.name,
                ptx_parameters(found),
                c_signature(like)
            )));
        }
        Ok(KernelSource {
            path: self.path,
            entry: leak(&found.name),
            source: self.source,
            committed_ptx: "",
            own: None,
        })
    }

    /// Whether the file defines one of `names` with `like`'s parameters: how a check with two
    /// ways to launch picks one.
    pub fn has(&self, names: &[&str], like: &KernelSource) -> bool {
        names
            .iter()
            .filter_map(|name| self.defines(name))
            .any(|found| same_parameters(found, like))
    }

    fn defined_list(&self) -> String {
        if self.entries.is_empty() {
            return "; it defines no kernel at all".into();
        }
        let names: Vec<String> = self
            .entries
            .iter()
            .map(|entry| format!("`{}`", entry.name))
            .collect();
        format!("; it defines {}", names.join(", "))
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_string().into_boxed_str())
}

/// The parameters of the chapter kernel `like`, as its committed PTX declares them.
fn reference_signature(like: &KernelSource) -> Option<EntrySignature> {
    entry_signatures(like.committed_ptx)
        .into_iter()
        .find(|entry| entry.name == like.entry)
}

fn same_parameters(found: &EntrySignature, like: &KernelSource) -> bool {
    let Some(want) = reference_signature(like) else {
        return true;
    };
    found.params.len() == want.params.len()
        && found.params.iter().zip(&want.params).all(|(got, want)| {
            got.bytes == want.bytes
                && (got.class == want.class
                    || got.class == ParamClass::Bits
                    || want.class == ParamClass::Bits)
        })
}

fn ptx_parameters(entry: &EntrySignature) -> String {
    let count = entry.params.len();
    let types: Vec<String> = entry
        .params
        .iter()
        .map(|param| match (param.class, param.bytes) {
            (ParamClass::Float, 4) => "float".to_string(),
            (ParamClass::Float, 8) => "double".to_string(),
            (_, 8) => "a pointer".to_string(),
            (_, 4) => "a 32-bit int".to_string(),
            (_, bytes) => format!("{bytes} bytes"),
        })
        .collect();
    format!(
        "{count} parameter{} ({})",
        if count == 1 { "" } else { "s" },
        types.join(", ")
    )
}

/// `name(const float *x, …)` as the chapter's source declares it, on one line.
pub fn c_signature(kernel: &KernelSource) -> String {
    let source = kernel.source;
    let Some(at) = find_call(source, kernel.entry) else {
        return format!("`{}`", kernel.entry);
    };
    let rest = &source[at..];
    let end = rest.find(')').map_or(rest.len(), |close| close + 1);
    let declaration: Vec<&str> = rest[..end].split_whitespace().collect();
    format!("`{}`", declaration.join(" ").replace("( ", "("))
}

fn find_call(source: &str, name: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = source[from..].find(name) {
        let start = from + at;
        if source[start + name.len()..].trim_start().starts_with('(') {
            return Some(start);
        }
        from = start + name.len();
    }
    None
}

/// How the learner's kernel declares its parameters against what the host passes: the
/// signature trap, where a kernel keeps an old list (`int *x, int d, int n`) and is handed the
/// host's (`unsigned int *data, unsigned int m, unsigned int stride`) without a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamMismatch {
    /// A parameter's type differs (pointer or scalar, element type, signedness, width): the
    /// kernel would read the host's values as something else. The sentence says which.
    Types(String),
    /// The types agree but the names do not: the values arrive in the host's order, whatever
    /// the kernel calls them. The sentence names both lists.
    Names(String),
}

/// What `kernel` calls its parameter at `index` (`x` in `down_sweep(unsigned int *x, …)`), so
/// that a wrong result is named as the learner's kernel names the buffer.
pub fn param_name(kernel: &KernelSource, index: usize) -> Option<String> {
    let params = names::params_of(kernel.symbol(), &source::scan(kernel.source));
    CParam::parse(params.get(index)?).name
}

/// Compares the parameters of `entry` in the learner's `source` with those of the host's
/// kernel `host`, as both files declare them; `None` when they agree, or when either list
/// cannot be read or their counts differ (the PTX check says so).
pub fn parameter_mismatch(source: &str, entry: &str, host: &KernelSource) -> Option<ParamMismatch> {
    let learner = names::params_of(entry, &source::scan(source));
    let wanted = names::params_of(host.entry, &source::scan(host.source));
    if learner.is_empty() || learner.len() != wanted.len() {
        return None;
    }
    let learner: Vec<CParam> = learner.iter().map(|p| CParam::parse(p)).collect();
    let wanted: Vec<CParam> = wanted.iter().map(|p| CParam::parse(p)).collect();
    let list = |params: &[CParam]| {
        params
            .iter()
            .map(|p| p.declared.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some((yours, theirs)) = learner
        .iter()
        .zip(&wanted)
        .find(|(yours, theirs)| !same_type(yours.ty, theirs.ty))
    {
        return Some(ParamMismatch::Types(format!(
            "`{entry}({})` does not take what the host passes, ({}): its `{yours}` is handed \
             the host's `{theirs}`; declare the host's parameters, in its order",
            list(&learner),
            list(&wanted)
        )));
    }
    let named = |params: &[CParam]| -> Option<Vec<String>> {
        params.iter().map(|p| p.name.clone()).collect()
    };
    let (yours, theirs) = (named(&learner)?, named(&wanted)?);
    let (first_yours, first_theirs) = yours.iter().zip(&theirs).find(|(a, b)| a != b)?;
    Some(ParamMismatch::Names(format!(
        "`{entry}` names its parameters ({}), but the host passes ({}) in that order: your \
         `{first_yours}` gets the host's `{first_theirs}`",
        yours.join(", "),
        theirs.join(", "),
    )))
}

/// Whether a parameter of type `yours` takes what the host passes for `theirs`: `const` aside,
/// and where either side's type is not one the check reads (a struct, `void*`), yes.
fn same_type(yours: CType, theirs: CType) -> bool {
    match (yours, theirs) {
        (CType::Pointer { pointee: a, .. }, CType::Pointer { pointee: b, .. }) => {
            a.is_none() || b.is_none() || a == b
        }
        (CType::Other, _) | (_, CType::Other) => true,
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use harness::Expect;

    use super::{ParamMismatch, parameter_mismatch};
    use crate::exercise::Reason;
    use crate::track;

    fn down_sweep_host() -> harness::KernelSource {
        let exercise = track::find("down-sweep-does-not-compile").expect("the down-sweep exercise");
        exercise.solution
    }

    /// The trap: the printed kernel's list, compiling now, against the host's.
    #[test]
    fn an_old_parameter_list_is_refused_by_name() {
        let host = down_sweep_host();
        let old = "extern \"C\" __global__ void down_sweep(int *x, int d, int n)\n{\n}\n";
        let Some(ParamMismatch::Types(line)) = parameter_mismatch(old, "down_sweep", &host) else {
            panic!("the old list passed");
        };
        assert_eq!(
            line,
            "`down_sweep(int *x, int d, int n)` does not take what the host passes, \
             (unsigned int *data, unsigned int m, unsigned int stride): its `int *x` is handed \
             the host's `unsigned int *data`; declare the host's parameters, in its order"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn the_host_s_types_under_other_names_are_a_note_and_its_list_is_nothing() {
        let host = down_sweep_host();
        let renamed = "extern \"C\" __global__ void down_sweep(unsigned int *x, unsigned int d, \
                       unsigned int n) {}";
        assert_eq!(
            parameter_mismatch(renamed, "down_sweep", &host),
            Some(ParamMismatch::Names(
                "`down_sweep` names its parameters (x, d, n), but the host passes (data, m, \
                 stride) in that order: your `x` gets the host's `data`"
                    .into()
            ))
        );
        let same = "extern \"C\" __global__ void down_sweep(unsigned int *data, unsigned int m, \
                    unsigned int stride) {}";
        assert_eq!(parameter_mismatch(same, "down_sweep", &host), None);
        // `const` on a pointer the kernel only reads changes nothing the host passes.
        let constant = "extern \"C\" __global__ void down_sweep(unsigned int *data, const \
                        unsigned int m, unsigned int stride) {}";
        assert_eq!(parameter_mismatch(constant, "down_sweep", &host), None);
    }

    /// No exercise's start or solution trips the check: each declares the host's parameters.
    #[test]
    fn every_start_and_solution_declares_the_host_s_parameter_types() {
        for exercise in track::track() {
            let host = &exercise.solution;
            // A start that does not compile is refused by NVRTC before its parameters matter.
            let compiles = exercise.fails.reason != Reason::Check(Expect::CompileError);
            let start = compiles.then(|| ("start", exercise.starting_text()));
            let solution = Some(("solution", host.source.to_string()));
            for (what, text) in start.into_iter().chain(solution) {
                for name in [exercise.start.kernel().entry, host.entry] {
                    if let Some(ParamMismatch::Types(line)) = parameter_mismatch(&text, name, host)
                    {
                        panic!("{} ({what}): {line}", exercise.name);
                    }
                }
            }
        }
    }
}
