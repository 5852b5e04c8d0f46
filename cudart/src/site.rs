//! Where in the program a runtime call came from: the host line a report names beside the
//! kernel's line (`the launch at histogram.cu:71 (main)`).

use std::ffi::c_void;
use std::sync::OnceLock;

/// Return addresses in the program, innermost first, resolved to a line only when a report
/// needs it. A few frames are kept: at -O0 CUDA's C++ wrappers (`cudaMalloc<T>`) are calls of
/// their own, and the line a report names is the program's call of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site(pub [usize; FRAMES]);

const FRAMES: usize = 16;

/// The start of this library in memory: frames inside it are the runtime's own.
fn own_base() -> usize {
    static BASE: OnceLock<usize> = OnceLock::new();
    *BASE.get_or_init(|| object_base(own_base as *const c_void))
}

fn object_base(address: *const c_void) -> usize {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(address, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
}

/// The first frame outside this library: the program's call into the runtime.
#[inline(never)]
pub fn caller() -> Option<Site> {
    let own = own_base();
    let mut found = [0; FRAMES];
    let mut n = 0;
    backtrace::trace(|frame| {
        let ip = frame.ip() as usize;
        if ip == 0 || (n == 0 && object_base(ip as *const c_void) == own) {
            return true;
        }
        found[n] = ip;
        n += 1;
        n < FRAMES
    });
    (n > 0).then_some(Site(found))
}

/// A resolved site: `file:line (function)`, or the function alone for a program built
/// without line tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub function: Option<String>,
}

impl Place {
    pub fn file_line(&self) -> Option<String> {
        Some(format!("{}:{}", self.file.as_ref()?, self.line?))
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.file_line(), &self.function) {
            (Some(at), Some(function)) => write!(f, "{at} ({function})"),
            (Some(at), None) => write!(f, "{at}"),
            (None, Some(function)) => write!(f, "{function} (build with -g for its line)"),
            (None, None) => write!(f, "an unknown place in the program"),
        }
    }
}

impl Site {
    /// The site of a faulting instruction (not a return address).
    pub fn at_pc(pc: usize) -> Site {
        let mut frames = [0; FRAMES];
        frames[0] = pc + 1;
        Site(frames)
    }

    pub fn resolve(self) -> Place {
        let places: Vec<Place> = self
            .0
            .iter()
            .filter(|&&ip| ip != 0)
            .map(|&ip| resolve_one(ip))
            .collect();
        // CUDA's own wrappers are skipped: by their header's lines, or by name in a program
        // built without line tables.
        let cudas_own = |p: &Place| match (&p.file, &p.function) {
            (Some(file), _) => is_cuda_header(file),
            (None, Some(f)) => ["cuda", "__cuda", "__device_stub"]
                .iter()
                .any(|w| f.starts_with(w)),
            (None, None) => true,
        };
        places
            .iter()
            .find(|p| !cudas_own(p))
            .or(places.first())
            .cloned()
            .map(|p| Place {
                file: p.file.map(|f| shorten(&f)),
                ..p
            })
            .unwrap_or_default()
    }
}

fn resolve_one(return_address: usize) -> Place {
    {
        let mut frames = Vec::new();
        // A return address: the call itself is the instruction before it.
        let ip = return_address.saturating_sub(1) as *mut c_void;
        backtrace::resolve(ip, |symbol| {
            frames.push(Place {
                file: symbol.filename().map(|p| p.to_string_lossy().into_owned()),
                line: symbol.lineno(),
                function: symbol.name().map(|n| {
                    let full = format!("{n:#}");
                    full.split('(').next().unwrap_or(&full).to_string()
                }),
            });
        });
        // Inlined frames come innermost first: CUDA's own inline wrappers (the C++ overloads
        // of `cudaMalloc`, the launch helper) are skipped for the program's line that used them.
        frames
            .iter()
            .find(|f| f.file.as_deref().is_some_and(|file| !is_cuda_header(file)))
            .or(frames.last())
            .cloned()
            .unwrap_or_default()
    }
}

/// Whether `file` is one of the CUDA toolkit's headers: a folder above it holds
/// `cuda_runtime_api.h` (CCCL's Thrust and CUB sit deep below the toolkit's `include/`).
fn is_cuda_header(file: &str) -> bool {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashMap<std::path::PathBuf, bool>>> = Mutex::new(None);
    let Some(dir) = std::path::Path::new(file).parent() else {
        return false;
    };
    let mut guard = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let seen = guard.get_or_insert_with(HashMap::new);
    *seen.entry(dir.to_path_buf()).or_insert_with(|| {
        dir.ancestors()
            .any(|d| d.join("cuda_runtime_api.h").is_file())
    })
}

/// A path as the user typed it: relative to the working folder when it is under it.
pub fn shorten(path: &str) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return path.to_string();
    };
    match std::path::Path::new(path).strip_prefix(&cwd) {
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => path.to_string(),
    }
}

/// The text of `file`'s line `line`, trimmed, for reports that quote it.
pub fn source_line(file: &str, line: u32) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let found = text.lines().nth(line.checked_sub(1)? as usize)?.trim();
    (!found.is_empty()).then(|| found.to_string())
}

/// Paths under the working folder in a report's text, made relative as the user typed them.
pub fn shorten_paths(text: &str) -> String {
    match std::env::current_dir() {
        Ok(cwd) => text.replace(&format!("{}/", cwd.display()), ""),
        Err(_) => text.to_string(),
    }
}
