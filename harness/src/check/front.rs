//! The front end: a `.cu` file read and compiled by NVRTC, and the kernel the user names in it.

use super::run::Kernel;
use super::signature::{EntrySignature, entry_signatures};
use super::{CheckError, Result};
use crate::kernel::KernelSource;
use crate::nvrtc::{self, EMU_ARCH};

/// A `.cu` file compiled by NVRTC, with the kernels it defines.
#[derive(Debug, Clone)]
pub struct Program {
    path: &'static str,
    source: &'static str,
    entries: Vec<EntrySignature>,
}

impl Program {
    /// Reads `path` (relative to the working directory; reports name it as given) and compiles it.
    pub fn load(path: &str) -> Result<Self> {
        let source = std::fs::read_to_string(path).map_err(|error| CheckError::Read {
            path: path.to_string(),
            message: error.to_string(),
        })?;
        Self::compile(path, source)
    }

    /// Compiles `source` under the name `path`, so NVRTC's errors and the checkers' reports say
    /// `path:LINE`. The strings are leaked: [`Device::launch`] keys kernels by `&'static str`,
    /// and a program lives as long as the one-shot run that loads it.
    pub fn compile(path: &str, source: String) -> Result<Self> {
        let ptx = nvrtc::compile(path, &source, EMU_ARCH)?;
        Ok(Self {
            path: Box::leak(path.to_string().into_boxed_str()),
            source: Box::leak(source.into_boxed_str()),
            entries: entry_signatures(&ptx),
        })
    }

    pub fn path(&self) -> &str {
        self.path
    }

    pub fn entries(&self) -> &[EntrySignature] {
        &self.entries
    }

    /// The kernel called `entry`; the error lists the ones there are.
    pub fn kernel(&self, entry: &str) -> Result<Kernel> {
        let Some(signature) = self
            .entries
            .iter()
            .find(|signature| signature.name == entry)
        else {
            return Err(CheckError::UnknownEntry {
                path: self.path.to_string(),
                entry: entry.to_string(),
                hint: self.entry_hint(entry),
            });
        };
        Ok(Kernel {
            source: KernelSource {
                path: self.path,
                entry: Box::leak(entry.to_string().into_boxed_str()),
                source: self.source,
                committed_ptx: "",
            },
            signature: signature.clone(),
        })
    }

    fn entry_hint(&self, entry: &str) -> String {
        // A kernel that is not `extern "C"` keeps its C++ mangled name, e.g. `_Z6kernelPi`.
        let mangled = format!("{}{entry}", entry.len());
        if let Some(found) = self
            .entries
            .iter()
            .find(|e| e.name.starts_with("_Z") && e.name.contains(&mangled))
        {
            return format!(
                "it defines `{}`, the C++ name of {entry}: declare the kernel `extern \"C\" __global__`",
                found.name
            );
        }
        match self.entries.len() {
            0 => "it defines no kernels (is the function `extern \"C\" __global__`?)".to_string(),
            _ => {
                let names: Vec<_> = self.entries.iter().map(|e| e.name.as_str()).collect();
                format!("it defines {}", names.join(", "))
            }
        }
    }
}
