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
    pub ptx_line: u32,
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "PTX line {}", self.ptx_line)?;
        } else {
            write!(f, "{}:{}", self.file, self.line)?;
        }
        if let Some((file, line)) = &self.inlined_into {
            write!(f, " (inlined into {file}:{line})")?;
        } else if let Some(l) = self.inlined_at {
            write!(f, " (inlined at line {l})")?;
        }
        Ok(())
    }
}
