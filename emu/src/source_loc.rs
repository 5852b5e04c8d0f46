//! Where an instruction came from: its `.cu` line and its PTX line.

use std::fmt;

/// A `.cu` source line (from the PTX `.loc` of the instruction) and the PTX line itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    /// The file as named by the PTX `.file` directive.
    pub file: String,
    /// 0 when the PTX has no line information for this instruction.
    pub line: u32,
    /// When the code was inlined from a device function: the line of the call.
    pub inlined_at: Option<u32>,
    /// When the code was inlined from another file (a CUDA header's function inlined into the
    /// kernel): the outermost call site, which is the line of the user's own code.
    pub inlined_into: Option<(String, u32)>,
    /// When the code was inlined from a device function of the same file: the line of the
    /// outermost call, in the kernel itself (a helper's helper is named by the kernel's line).
    pub called_from: Option<u32>,
    pub ptx_line: u32,
}

/// Whether `path` is one of CUDA's own headers (`device_atomic_functions.hpp`, libcu++, CUB…),
/// where the toolkit keeps them: under an `include` folder of a CUDA install or NVIDIA's wheels.
fn is_cuda_header(path: &str) -> bool {
    path.contains("/include/") && (path.contains("/nvidia/") || path.contains("/cuda"))
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "PTX line {}", self.ptx_line);
        }
        // Code of CUDA's own headers is named by the user's line it was inlined into; the
        // header, by its name only, says what ran there.
        if let Some((file, line)) = &self.inlined_into
            && is_cuda_header(&self.file)
        {
            let header = self.file.rsplit('/').next().unwrap_or_default();
            return write!(f, "{file}:{line} (in CUDA's {header}:{})", self.line);
        }
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some((file, line)) = &self.inlined_into {
            write!(f, " (inlined into {file}:{line})")?;
        } else if let Some(l) = self.inlined_at {
            write!(f, " (inlined at line {l})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, line: u32, into: Option<(&str, u32)>) -> String {
        SourceLoc {
            file: file.into(),
            line,
            inlined_at: None,
            inlined_into: into.map(|(f, l)| (f.into(), l)),
            called_from: None,
            ptx_line: 7,
        }
        .to_string()
    }

    #[test]
    fn code_of_cudas_headers_is_named_by_the_users_line_it_was_inlined_into() {
        let wheel =
            "/home/u/.cache/racetrack/nvcc/nvidia/cu13/bin/..//include/device_atomic_functions.hpp";
        assert_eq!(
            at(wheel, 112, Some(("sort.cu", 198))),
            "sort.cu:198 (in CUDA's device_atomic_functions.hpp:112)"
        );
        assert_eq!(
            at(
                "/usr/local/cuda/include/cuda/std/__atomic/api.h",
                3,
                Some(("a.cu", 9))
            ),
            "a.cu:9 (in CUDA's api.h:3)"
        );
        // A program's own header keeps its path and line first.
        assert_eq!(
            at("transform_buffer.h", 117, Some(("fdwt53.cu", 84))),
            "transform_buffer.h:117 (inlined into fdwt53.cu:84)"
        );
        assert_eq!(at("k.cu", 0, None), "PTX line 7");
    }
}
