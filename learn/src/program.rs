//! The learner's file compiled by NVRTC, and the kernels a host finds in it.

use harness::check::{EntrySignature, ParamClass, entry_signatures};
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
            return Err(Failure::Kernel(format!(
                "{} defines no kernel `{}`; the host launches {}{}",
                self.path,
                names.first().copied().unwrap_or(like.entry),
                c_signature(like),
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
