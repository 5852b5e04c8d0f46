//! Kernel sources, embedded in the binaries, and the PTX each backend runs.

use crate::error::{HarnessError, Result};
use crate::nvrtc::{self, EMU_ARCH};

/// One `.cu` file and its entry point, embedded at build time with its committed PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSource {
    /// Repository path, e.g. `kernels/ch4_atomics/01_racy_increment.cu`.
    pub path: &'static str,
    pub entry: &'static str,
    pub source: &'static str,
    /// `kernels/ptx/…ptx` as committed: PTX from the pinned NVRTC, or its error log.
    pub committed_ptx: &'static str,
    /// A learner's own file (`racetrack check`): how it was compiled; `None` for the project's
    /// kernels, which are `extern "C"` and compiled with the defaults.
    pub own: Option<&'static OwnBuild>,
}

/// A learner's own file as `racetrack check` compiled it. Backends compile it again with the
/// same extras (for their architecture) and launch `symbol`, while reports keep calling the
/// kernel by [`KernelSource::entry`], the name the user wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnBuild {
    /// Options, in-memory headers, and the kernel's name expression (e.g. `reduce<float, 256>`).
    pub extras: nvrtc::Extras,
    /// The mangled name NVRTC gave that expression, e.g. `_Z6reduceIfLi256EEvPKT_PS0_i`.
    pub symbol: String,
    /// The PTX for [`EMU_ARCH`], already made by the front end.
    pub emulator_ptx: String,
}

/// Embeds `kernels/<chapter>/<file>.cu` and `kernels/ptx/<chapter>/<file>.ptx`.
///
/// ```text
/// const RACY: KernelSource = kernel!("ch4_atomics", "01_racy_increment", "racy_increment");
/// ```
#[macro_export]
macro_rules! kernel {
    ($chapter:literal, $file:literal, $entry:literal) => {
        $crate::KernelSource {
            path: concat!("kernels/", $chapter, "/", $file, ".cu"),
            entry: $entry,
            source: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../kernels/",
                $chapter,
                "/",
                $file,
                ".cu"
            )),
            committed_ptx: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../kernels/ptx/",
                $chapter,
                "/",
                $file,
                ".ptx"
            )),
            own: None,
        }
    };
}

/// The first line of every committed PTX file: which source it was made from, so a changed
/// `.cu` is never run through stale PTX.
const HEADER_PREFIX: &str = "// racetrack: generated from ";
const COMPILE_ERROR_MARK: &str = "// racetrack: compile error";

impl KernelSource {
    /// The line of the `// BUG:` marker, which checker reports must name.
    pub fn bug_line(&self) -> Option<u32> {
        line_of_marker(self.source, "// BUG:")
    }

    /// The PTX path that mirrors this source: `kernels/ptx/<chapter>/<file>.ptx`.
    pub fn ptx_path(&self) -> String {
        ptx_path_for(self.path)
    }

    /// The name the PTX defines the kernel under: the mangled one for a C++ kernel of a
    /// learner's file, else [`KernelSource::entry`].
    pub fn symbol(&self) -> &'static str {
        self.own.map_or(self.entry, |own| own.symbol.as_str())
    }

    /// PTX for a GPU of architecture `arch` (`compute_90`), from NVRTC.
    pub fn ptx_for(&self, arch: &str) -> Result<String> {
        match self.own {
            Some(own) if arch == EMU_ARCH => Ok(own.emulator_ptx.clone()),
            Some(own) => Ok(nvrtc::compile_with(self.path, self.source, arch, &own.extras)?.ptx),
            None => nvrtc::compile(self.path, self.source, arch),
        }
    }

    /// PTX for the emulator: fresh from NVRTC when it is installed, else the committed file,
    /// refused when the source has changed since it was generated.
    pub fn emulator_ptx(&self) -> Result<String> {
        if let Some(own) = self.own {
            return Ok(own.emulator_ptx.clone());
        }
        if nvrtc::nvrtc().is_some() {
            return nvrtc::compile(self.path, self.source, EMU_ARCH);
        }
        match self.committed_ptx_if_fresh() {
            // Only a changed source needs NVRTC where none is installed: fetch it then.
            Err(HarnessError::StalePtx { .. }) => match nvrtc::require_nvrtc() {
                Ok(_) => nvrtc::compile(self.path, self.source, EMU_ARCH),
                Err(error) => Err(self.stale(error.to_string())),
            },
            other => other,
        }
    }

    /// The committed PTX, or its committed compile error, provided it was generated from the
    /// source embedded beside it.
    pub fn committed_ptx_if_fresh(&self) -> Result<String> {
        let stale = || {
            self.stale(format!(
                "NVRTC {}.{} is not installed",
                nvrtc::PINNED_VERSION.0,
                nvrtc::PINNED_VERSION.1
            ))
        };
        let Some(rest) = self.committed_ptx.strip_prefix(HEADER_PREFIX) else {
            return Err(stale());
        };
        let recorded_hash = rest.split_whitespace().nth(1).unwrap_or_default();
        if recorded_hash != source_hash(self.source) {
            return Err(stale());
        }
        if let Some(log) = committed_compile_error(self.committed_ptx) {
            return Err(HarnessError::Compile {
                path: self.path.to_string(),
                log,
            });
        }
        Ok(self.committed_ptx.to_string())
    }

    fn stale(&self, why: String) -> HarnessError {
        HarnessError::StalePtx {
            source_path: self.path.to_string(),
            ptx_path: self.ptx_path(),
            why,
        }
    }
}

pub fn ptx_path_for(source_path: &str) -> String {
    let relative = source_path.strip_prefix("kernels/").unwrap_or(source_path);
    let stem = relative.strip_suffix(".cu").unwrap_or(relative);
    format!("kernels/ptx/{stem}.ptx")
}

/// 1-based line of the first line containing `marker`.
pub fn line_of_marker(source: &str, marker: &str) -> Option<u32> {
    source
        .lines()
        .position(|line| line.contains(marker))
        .and_then(|index| u32::try_from(index + 1).ok())
}

/// The line of `// ANCHOR: name`, for tests that tie prose to code.
pub fn anchor_line(source: &str, name: &str) -> Option<u32> {
    line_of_marker(source, &format!("// ANCHOR: {name}"))
}

/// FNV-1a, 64 bits: stable across platforms and Rust versions, which `DefaultHasher` is not.
pub fn source_hash(source: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in source.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The committed file for `path`: a header naming the source and its hash, then the PTX, or
/// the compile log for kernels that are meant not to compile.
pub fn committed_file(path: &str, source: &str, compiled: &Result<String>) -> Result<String> {
    let header = format!(
        "{HEADER_PREFIX}{path} {} by NVRTC {}.{}\n",
        source_hash(source),
        nvrtc::PINNED_VERSION.0,
        nvrtc::PINNED_VERSION.1
    );
    match compiled {
        Ok(ptx) => Ok(format!("{header}{ptx}")),
        Err(HarnessError::Compile { log, .. }) => {
            let mut text = format!("{header}{COMPILE_ERROR_MARK}\n");
            for line in log.lines() {
                text.push_str("// ");
                text.push_str(line);
                text.push('\n');
            }
            Ok(text)
        }
        Err(other) => Err(HarnessError::Invalid(other.to_string())),
    }
}

fn committed_compile_error(committed: &str) -> Option<String> {
    let mut lines = committed.lines().skip(1);
    if lines.next()? != COMPILE_ERROR_MARK {
        return None;
    }
    Some(
        lines
            .map(|line| {
                line.strip_prefix("// ")
                    .unwrap_or(line.trim_start_matches("//"))
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_path_mirrors_the_source_path() {
        assert_eq!(
            ptx_path_for("kernels/ch4_atomics/01_racy_increment.cu"),
            "kernels/ptx/ch4_atomics/01_racy_increment.ptx"
        );
    }

    #[test]
    fn markers_are_found_by_line() {
        let source = "// BROKEN\n\nx = 1; // BUG: here\n// ANCHOR: body\n";
        assert_eq!(line_of_marker(source, "// BUG:"), Some(3));
        assert_eq!(anchor_line(source, "body"), Some(4));
        assert_eq!(line_of_marker(source, "nothing"), None);
    }

    #[test]
    fn hash_is_fnv1a() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(source_hash(""), "cbf29ce484222325");
        assert_eq!(source_hash("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn committed_ptx_is_refused_once_its_source_changes() {
        let source = "extern \"C\" __global__ void k() {}\n";
        let ptx = ".version 9.0\n.target sm_90\n";
        let committed: &'static str = Box::leak(
            committed_file("kernels/t/a.cu", source, &Ok(ptx.into()))
                .unwrap()
                .into_boxed_str(),
        );
        let fresh = KernelSource {
            path: "kernels/t/a.cu",
            entry: "k",
            source,
            committed_ptx: committed,
            own: None,
        };
        assert!(fresh.committed_ptx_if_fresh().unwrap().ends_with(ptx));
        let edited = KernelSource {
            source: "extern \"C\" __global__ void k() { /* edited */ }\n",
            ..fresh
        };
        let error = edited.committed_ptx_if_fresh().unwrap_err().to_string();
        assert!(
            error.starts_with("kernels/t/a.cu has changed since kernels/ptx/t/a.ptx was generated, and it cannot be compiled again (Racetrack never runs stale PTX)"),
            "{error}"
        );
        let missing_header = KernelSource {
            committed_ptx: ptx,
            ..fresh
        };
        assert!(missing_header.committed_ptx_if_fresh().is_err());
    }

    #[test]
    fn compile_errors_round_trip_through_the_committed_file() {
        let log = "kernels/a.cu:3: error: identifier \"tid\" is undefined\n\n1 error detected";
        let compiled = Err(HarnessError::Compile {
            path: "kernels/a.cu".into(),
            log: log.into(),
        });
        let file = committed_file("kernels/a.cu", "src", &compiled).unwrap();
        assert_eq!(committed_compile_error(&file).as_deref(), Some(log));
        let ok = committed_file("kernels/a.cu", "src", &Ok(".version 9.0\n".into())).unwrap();
        assert_eq!(committed_compile_error(&ok), None);
    }
}
