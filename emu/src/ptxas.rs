//! What ptxas allots a kernel on an sm_90 GPU: registers per thread, static shared memory and
//! stack. A GPU's driver compiles a program's PTX with the same compiler when it loads it, so
//! these are what its occupancy, its cooperative grid limit and its launches go by (see
//! [`crate::occupancy`]). Also a kernel's `__launch_bounds__`, read from its PTX header.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One kernel's needs, as ptxas reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    /// 32-bit registers per thread.
    pub registers: u32,
    /// Bytes of `__shared__` variables (dynamic shared memory comes on top, per launch).
    pub static_shared: u32,
    /// Bytes of stack frame per thread (local arrays, spills).
    pub stack: u32,
}

/// ptxas's `-v` report, kernel by kernel: each `Compiling entry function 'NAME'` is followed
/// by its `Function properties` (the stack frame) and its `Used N registers, … M bytes smem`.
pub fn parse_ptxas_report(report: &str) -> HashMap<String, Resources> {
    let mut found = HashMap::new();
    let mut current: Option<(String, Resources)> = None;
    for line in report.lines() {
        let text = line
            .split_once("info    :")
            .map_or(line.trim(), |(_, rest)| rest.trim());
        if let Some(rest) = text.strip_prefix("Compiling entry function '") {
            if let Some((name, resources)) = current.take() {
                found.insert(name, resources);
            }
            let name = rest.split('\'').next().unwrap_or_default();
            current = Some((name.to_string(), Resources::default()));
        } else if let Some((_, resources)) = current.as_mut() {
            if let Some(frame) = number_before(text, " bytes stack frame") {
                resources.stack = frame;
            } else if let Some(used) = text.strip_prefix("Used ") {
                for part in used.split(", ") {
                    let mut words = part.split_whitespace();
                    let (Some(count), Some(what)) = (words.next(), words.next()) else {
                        continue;
                    };
                    let Ok(count) = count.parse::<u32>() else {
                        continue;
                    };
                    match (what, words.next()) {
                        ("registers", _) => resources.registers = count,
                        ("bytes", Some("smem")) => resources.static_shared = count,
                        _ => {}
                    }
                }
            }
        }
    }
    if let Some((name, resources)) = current {
        found.insert(name, resources);
    }
    found
}

/// `12 bytes stack frame, 0 bytes spill stores` with `" bytes stack frame"`: 12.
fn number_before(text: &str, words: &str) -> Option<u32> {
    let (head, _) = text.split_once(words)?;
    head.trim().parse().ok()
}

/// Compiles `ptx` for sm_90 with `ptxas` and reads what each kernel takes. `options` are the
/// ones nvcc stored beside the PTX for the driver (`--generate-line-info`); `relocatable`
/// PTX (`-rdc`) is compiled as a unit of a device link would be.
pub fn count(
    ptxas: &Path,
    ptx: &str,
    options: Option<&str>,
    relocatable: bool,
) -> Result<HashMap<String, Resources>, String> {
    let file = scratch_file();
    std::fs::write(&file, ptx).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    let mut command = Command::new(ptxas);
    command.args(["-arch=sm_90", "-v", "-o", "/dev/null"]);
    if relocatable {
        command.arg("-c");
    }
    command.args(options.unwrap_or_default().split_whitespace());
    command.arg(&file);
    let output = command.output();
    let _ = std::fs::remove_file(&file);
    let output = output.map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    if !output.status.success() {
        let log = String::from_utf8_lossy(&output.stderr);
        let first = log
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(format!("{} failed: {first}", ptxas.display()));
    }
    // ptxas writes its `-v` report to stderr.
    let mut report = String::from_utf8_lossy(&output.stderr).into_owned();
    report.push_str(&String::from_utf8_lossy(&output.stdout));
    Ok(parse_ptxas_report(&report))
}

/// [`count`] of one unit's PTX as a GPU's driver takes it: whole, else, for PTX that calls into
/// other units (`-rdc`, CUDA's device runtime), as one unit of a device link. The error is the
/// whole compile's.
pub fn count_unit(
    ptxas: &Path,
    ptx: &str,
    options: Option<&str>,
) -> Result<HashMap<String, Resources>, String> {
    count(ptxas, ptx, options, false)
        .or_else(|whole| count(ptxas, ptx, options, true).map_err(|_| whole))
}

fn scratch_file() -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "racetrack-ptxas-{}-{}.ptx",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The most threads a kernel's launch bounds allow: `.maxntid` or `.reqntid` in its PTX
/// header (`__launch_bounds__(256)`), as a product of the dimensions given.
pub fn launch_bound(ptx: &str, kernel: &str) -> Option<u32> {
    let mut search = ptx;
    let header = loop {
        let at = search.find(".entry ")?;
        let after = &search[at + ".entry ".len()..];
        let name_end = after
            .find(|c: char| c == '(' || c.is_whitespace())
            .unwrap_or(after.len());
        if &after[..name_end] == kernel {
            let body = after.find('{')?;
            break &after[..body];
        }
        search = after;
    };
    let params_end = header.rfind(')').map_or(0, |p| p + 1);
    let directives = &header[params_end..];
    for directive in [".maxntid", ".reqntid"] {
        if let Some(at) = directives.find(directive) {
            let numbers = directives[at + directive.len()..]
                .split(['\n', '.'])
                .next()
                .unwrap_or_default();
            let product = numbers
                .split(',')
                .filter_map(|n| n.trim().parse::<u32>().ok())
                .product::<u32>();
            return Some(product);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_report_is_read_kernel_by_kernel() {
        let report = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z5tiledPf' for 'sm_90'
ptxas info    : Function properties for _Z5tiledPf
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 16384 bytes smem
ptxas info    : Compile time = 1.371 ms
ptxas info    : Compiling entry function '_Z7boundedPf' for 'sm_90'
ptxas info    : Function properties for _Z7boundedPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]
";
        let found = parse_ptxas_report(report);
        assert_eq!(
            found["_Z5tiledPf"],
            Resources {
                registers: 12,
                static_shared: 16384,
                stack: 16
            }
        );
        assert_eq!(
            found["_Z7boundedPf"],
            Resources {
                registers: 8,
                static_shared: 0,
                stack: 0
            }
        );
        assert_eq!(found.len(), 2);
    }

    #[test]
    fn launch_bounds_come_from_the_kernels_own_header() {
        let ptx = "\
.visible .entry _Z4freePf(
\t.param .u64 _Z4freePf_param_0
)
{
\tret;
}
.visible .entry _Z7boundedPf(
\t.param .u64 _Z7boundedPf_param_0
)
.maxntid 256, 1, 1
{
\tret;
}
.visible .entry _Z5exactPf(
\t.param .u64 _Z5exactPf_param_0
)
.reqntid 16, 8, 1
{
\tret;
}
";
        assert_eq!(launch_bound(ptx, "_Z4freePf"), None);
        assert_eq!(launch_bound(ptx, "_Z7boundedPf"), Some(256));
        assert_eq!(launch_bound(ptx, "_Z5exactPf"), Some(128));
        assert_eq!(launch_bound(ptx, "_Z7missingPf"), None);
    }
}
