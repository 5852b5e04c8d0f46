//! The compile cache: what NVRTC made of a file (its PTX and the lowered names, or its error
//! log), kept under Racetrack's cache folder so that compiling an unchanged file again skips
//! NVRTC.
//!
//! An entry is keyed by everything NVRTC reads and is told: NVRTC itself (the path, size and
//! time of its library file, or its version where the system's loader found it by name), the
//! program's name and source, the options (the
//! architecture, `-I`, `-D`, `-std`, …), the headers given from memory, the name expressions,
//! the working directory (NVRTC writes it into the PTX), and every header on disk the source
//! may include. NVRTC reads no separate preprocessed text, so the headers are found as NVRTC
//! finds them: each `#include` of the source, of the headers given from memory and of each
//! header found, and each name a directive probes with `__has_include` (or a macro named like
//! it, CCCL's `_CCCL_HAS_INCLUDE`), looked up beside the file that names it and in every `-I`
//! folder, whatever `#if` surrounds it. Every file that could answer a name is hashed, with its
//! path, and so is each name that nothing answers (a header that appears later changes the key).
//! Only includes of a macro (`#include SOME_HEADER`, Thrust's host back ends) are not followed.
//!
//! Reading and scanning those headers was most of a cached compile's cost (50–60 ms of 70 for a
//! small kernel on a 2-core machine, CUDA's own headers among them). So each walk also leaves a
//! manifest, keyed by everything but the headers: the key it gave, and every path it asked
//! about with the size and time it found there, or that nothing was there. While each path
//! still answers the same, the manifest gives the key at the cost of a `stat` per path (7–9 ms
//! for that compile, asked on one core; now on every core), as ccache's direct mode and make
//! do. A walk that found a header written in the last two seconds leaves none, since a second
//! edit within the clock's tick would keep the time.
//!
//! A hit is then the cost of the cache alone: NVRTC is named by its library file, which is
//! found without loading it ([`crate::nvrtc::compile_in`]), and loaded only on a miss (loading
//! it took 8–10 ms of every cached compile).
//!
//! Concurrent runs are safe as provisioning is ([`crate::provision`]): an entry is written
//! to a file of its own and renamed into place, so a reader sees a whole entry or none, under a
//! lock that makes a second process wait for the first one's compile rather than repeat it. An
//! entry that does not read back whole (truncated, corrupted, from another version) is a miss
//! and is written again; no cache error ever fails a compile. The folder is bounded: past
//! [`DEFAULT_CAP_BYTES`], the least recently used entries go. Deleting it is always safe.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::nvrtc::Compiled;

/// The folder under Racetrack's cache ([`crate::provision::cache_root`]).
pub const FOLDER: &str = "compiled";

/// The most the folder holds before the least recently used entries are evicted. A small
/// kernel's entry is a few KiB, one that includes CUB's headers some hundreds.
pub const DEFAULT_CAP_BYTES: u64 = 64 << 20;

/// The folder of manifests, inside the cache's folder: one per set of inputs, named by the hash
/// of all of them but the headers on disk.
const MANIFESTS: &str = "manifests";

/// The most manifests kept; past it, the oldest go when an entry is stored.
const MAX_MANIFESTS: usize = 4096;

/// Set to `off` (or `0`) to compile everything afresh, e.g. to time NVRTC.
pub const CACHE_ENV: &str = "RACETRACK_COMPILE_CACHE";

/// First line of every entry; a new layout changes it, and old entries are then misses.
const MAGIC: &str = "racetrack compile cache 1";

/// The most header bytes and files a key is made of; past them the file is compiled uncached.
const MAX_HEADER_BYTES: u64 = 512 << 20;
const MAX_HEADER_FILES: usize = 50_000;

/// What can go wrong in the cache: never shown to a user as a failure, since every caller falls
/// back to compiling, but returned so that tests and `racetrack doctor` can say what happened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheError {
    #[error("cannot {action} {path}: {message}")]
    Io {
        action: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error("{path} is not a whole compile cache entry: {why}")]
    Corrupt { path: PathBuf, why: String },
    #[error("the headers a compile may read are too many to key it on ({0})")]
    TooMuch(String),
}

impl CacheError {
    fn io(action: &'static str, path: &Path, error: &std::io::Error) -> Self {
        Self::Io {
            action,
            path: path.to_path_buf(),
            message: error.to_string(),
        }
    }
}

pub type Result<T, E = CacheError> = std::result::Result<T, E>;

/// What NVRTC made of one compile, as the cache keeps it: deterministic outcomes only (a
/// failure to load NVRTC or to take an option is never kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Compiled(Compiled),
    /// NVRTC compiled and refused the program: its log, as [`crate::nvrtc::normalize_log`]
    /// leaves it.
    Refused {
        log: String,
    },
}

/// The NVRTC that compiles, as a key names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compiler {
    /// By its library file: the path, size and time, which tell its version and patch
    /// release apart and are read without loading it, so that a hit never loads NVRTC.
    Library(PathBuf),
    /// Loaded by name from the system loader's path: by the version it says it is.
    ByName { version: (i32, i32) },
}

/// Everything one compile is keyed on, as [`crate::nvrtc::compile_with`] gives it to NVRTC.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub compiler: &'a Compiler,
    /// The program's name: the `.cu` file's path as the user named it.
    pub path: &'a str,
    pub source: &'a str,
    /// Every option, the architecture included.
    pub options: &'a [String],
    /// Headers NVRTC takes from memory: (name as included, contents).
    pub headers: &'a [(String, String)],
    pub name_expressions: &'a [String],
}

/// A 256-bit BLAKE3 hash of [`Inputs`] and the headers they reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    pub fn hex(&self) -> String {
        self.0.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

/// Feeds a field with its length first, so that no two sequences of fields hash alike.
fn field(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn path_bytes(path: &Path) -> Vec<u8> {
    path.as_os_str().as_encoded_bytes().to_vec()
}

/// The key of `inputs`: reads every header they may include (see the module's docs).
pub fn key(inputs: &Inputs<'_>) -> Result<Key> {
    let mut hasher = hasher_before_headers(inputs)?;
    HeaderWalk::new(inputs, &mut hasher, None).walk()?;
    Ok(Key(*hasher.finalize().as_bytes()))
}

/// The hash of everything in `inputs` but the headers on disk.
fn hasher_before_headers(inputs: &Inputs<'_>) -> Result<blake3::Hasher> {
    let mut hasher = blake3::Hasher::new();
    field(&mut hasher, MAGIC.as_bytes());
    match inputs.compiler {
        Compiler::Library(library) => {
            let metadata = std::fs::metadata(library)
                .map_err(|error| CacheError::io("read the metadata of", library, &error))?;
            field(&mut hasher, b"nvrtc library");
            field(&mut hasher, &path_bytes(library));
            field(&mut hasher, &metadata.len().to_le_bytes());
            let modified = metadata
                .modified()
                .ok()
                .and_then(|time| time.duration_since(SystemTime::UNIX_EPOCH).ok())
                .unwrap_or_default();
            field(&mut hasher, &modified.as_nanos().to_le_bytes());
        }
        Compiler::ByName { version } => {
            field(
                &mut hasher,
                format!("nvrtc {}.{} found by name", version.0, version.1).as_bytes(),
            );
        }
    }
    let cwd = std::env::current_dir()
        .map_err(|error| CacheError::io("read", Path::new("the working directory"), &error))?;
    field(&mut hasher, &path_bytes(&cwd));
    field(&mut hasher, inputs.path.as_bytes());
    field(&mut hasher, inputs.source.as_bytes());
    field(&mut hasher, &(inputs.options.len() as u64).to_le_bytes());
    for option in inputs.options {
        field(&mut hasher, option.as_bytes());
    }
    field(&mut hasher, &(inputs.headers.len() as u64).to_le_bytes());
    for (name, text) in inputs.headers {
        field(&mut hasher, name.as_bytes());
        field(&mut hasher, text.as_bytes());
    }
    field(
        &mut hasher,
        &(inputs.name_expressions.len() as u64).to_le_bytes(),
    );
    for expression in inputs.name_expressions {
        field(&mut hasher, expression.as_bytes());
    }
    Ok(hasher)
}

/// A path the header walk asked about, and what it found: a file of this size and time, or
/// nothing a header could be (`None`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Probe {
    path: PathBuf,
    file: Option<(u64, u128)>,
}

impl Probe {
    fn of(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            file: crate::build_deps::size_and_time(path),
        }
    }

    fn fresh(&self) -> bool {
        self.file
            .is_some_and(|(_, modified)| crate::build_deps::too_fresh(modified))
    }
}

/// A manifest: the key a walk gave, and every path it asked about with what it found. While
/// each path still answers the same, the walk would give the same key, so a cached compile
/// costs a `stat` per path instead of reading and scanning every header (ccache's direct mode).
fn manifest_text(key: &Key, probes: &[Probe]) -> Option<String> {
    let mut text = format!("{MAGIC} manifest\n{}\n", key.hex());
    let mut listed = HashSet::new();
    for probe in probes.iter().filter(|probe| listed.insert(&probe.path)) {
        let path = probe.path.to_str().filter(|path| !path.contains('\n'))?;
        match probe.file {
            Some((size, modified)) => text.push_str(&format!("{size} {modified} {path}\n")),
            None => text.push_str(&format!("- - {path}\n")),
        }
    }
    text.push_str("end\n");
    Some(text)
}

/// The key a manifest holds, when every path it lists still answers as it did. The paths are
/// asked on every core: a cached compile of a kernel that includes libcu++ asks about 2,000.
fn key_from_manifest(text: &str) -> Option<Key> {
    use rayon::prelude::*;
    let mut lines = text.lines();
    if lines.next()? != format!("{MAGIC} manifest") {
        return None;
    }
    let hex = lines.next()?;
    let mut key = [0u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    let mut ended = false;
    let mut probes = Vec::new();
    for line in lines {
        if line == "end" {
            ended = true;
            break;
        }
        let mut fields = line.splitn(3, ' ');
        let (size, modified, path) = (fields.next()?, fields.next()?, fields.next()?);
        let file: Option<(u64, u128)> = match (size, modified) {
            ("-", "-") => None,
            _ => Some((size.parse().ok()?, modified.parse().ok()?)),
        };
        probes.push((path, file));
    }
    crate::cores::use_cores(None);
    let unchanged = probes
        .par_iter()
        .with_min_len(64)
        .all(|(path, file)| Probe::of(Path::new(path)).file == *file);
    (ended && unchanged).then_some(Key(key))
}

/// One `#include` (or `__has_include`) of a file: the name, and whether it was quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Included {
    name: String,
    quoted: bool,
}

/// The names a header's text includes or asks about, in order: `#include`, `#include_next`,
/// `#import`, and the names a directive probes with `__has_include` or a macro named like it
/// (CCCL's `_CCCL_HAS_INCLUDE`). An include of a macro is not among them.
fn included_names(text: &str) -> Vec<Included> {
    let mut found = Vec::new();
    let quoted_name = |rest: &str| -> Option<Included> {
        let rest = rest.trim_start();
        let (close, quoted) = match rest.as_bytes().first()? {
            b'<' => ('>', false),
            b'"' => ('"', true),
            _ => return None,
        };
        let end = rest[1..].find(close)?;
        let name = &rest[1..=end];
        (!name.is_empty()).then(|| Included {
            name: name.to_string(),
            quoted,
        })
    };
    let probes = |line: &str, found: &mut Vec<Included>| {
        for probe in ["has_include", "HAS_INCLUDE"] {
            let mut rest = line;
            while let Some(at) = rest.find(probe) {
                rest = &rest[at + probe.len()..];
                let after = rest
                    .strip_prefix("_next")
                    .or_else(|| rest.strip_prefix("_NEXT"))
                    .unwrap_or(rest)
                    .trim_start();
                if let Some(inner) = after.strip_prefix('(')
                    && let Some(included) = quoted_name(inner)
                {
                    found.push(included);
                }
            }
        }
    };
    let mut continued = false;
    for line in text.lines() {
        let directive_continues = continued;
        continued = line.ends_with('\\');
        if directive_continues {
            probes(line, &mut found);
            continue;
        }
        let Some(directive) = line.trim_start().strip_prefix('#') else {
            continued = false;
            continue;
        };
        let directive = directive.trim_start();
        let rest = directive
            .strip_prefix("include_next")
            .or_else(|| directive.strip_prefix("include"))
            .or_else(|| directive.strip_prefix("import"));
        match rest.and_then(quoted_name) {
            Some(included) => found.push(included),
            None => probes(directive, &mut found),
        }
    }
    found
}

/// `a/./b/../c` as `a/c`, without asking the file system (so without following links): a path
/// reached through `..` twice is still one file to the walk.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = normal.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    normal.pop();
                } else if !matches!(last, Some(Component::RootDir | Component::Prefix(_))) {
                    normal.push("..");
                }
            }
            other => normal.push(other.as_os_str()),
        }
    }
    if normal.as_os_str().is_empty() {
        normal.push(".");
    }
    normal
}

/// Where a header's includes are looked up from: a file's folder, or (for the program and the
/// headers given from memory) the program's folder.
#[derive(Debug, Clone)]
struct Node {
    text: Vec<u8>,
    dir: PathBuf,
}

/// The breadth-first walk over every header a compile may read, hashing each one found.
struct HeaderWalk<'a, 'h> {
    hasher: &'h mut blake3::Hasher,
    /// `-I` folders, in order.
    dirs: Vec<PathBuf>,
    memory: HashMap<&'a str, &'a str>,
    program_dir: PathBuf,
    queue: VecDeque<Node>,
    seen_files: HashSet<PathBuf>,
    seen_memory: HashSet<&'a str>,
    /// Names already looked up from a folder (quoted) or anywhere (angled).
    looked_up: HashSet<(Option<PathBuf>, String)>,
    files: usize,
    bytes: u64,
    /// Every path asked about, when a manifest is to be written.
    probes: Option<&'h mut Vec<Probe>>,
}

impl<'a, 'h> HeaderWalk<'a, 'h> {
    fn new(
        inputs: &Inputs<'a>,
        hasher: &'h mut blake3::Hasher,
        probes: Option<&'h mut Vec<Probe>>,
    ) -> Self {
        let mut dirs = Vec::new();
        let mut pre_includes = Vec::new();
        let mut options = inputs.options.iter();
        while let Some(option) = options.next() {
            if option == "-I" || option == "--include-path" {
                dirs.extend(options.next().map(PathBuf::from));
            } else if let Some(dir) = option
                .strip_prefix("--include-path=")
                .or_else(|| option.strip_prefix("-I"))
            {
                dirs.push(PathBuf::from(dir));
            } else if let Some(name) = option
                .strip_prefix("--pre-include=")
                .or_else(|| option.strip_prefix("-include="))
            {
                pre_includes.push(name.to_string());
            } else if option == "-include" || option == "--pre-include" {
                pre_includes.extend(options.next().cloned());
            }
        }
        let program_dir = match Path::new(inputs.path).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut walk = Self {
            hasher,
            dirs,
            memory: inputs
                .headers
                .iter()
                .map(|(name, text)| (name.as_str(), text.as_str()))
                .collect(),
            program_dir: program_dir.clone(),
            queue: VecDeque::new(),
            seen_files: HashSet::new(),
            seen_memory: HashSet::new(),
            looked_up: HashSet::new(),
            files: 0,
            bytes: 0,
            probes,
        };
        let mut source = inputs.source.to_string();
        // A pre-included header reads as an include at the top of the program.
        for name in pre_includes {
            source.push_str(&format!("\n#include \"{name}\"\n"));
        }
        walk.queue.push_back(Node {
            text: source.into_bytes(),
            dir: program_dir,
        });
        walk
    }

    fn walk(mut self) -> Result<()> {
        while let Some(node) = self.queue.pop_front() {
            // Headers are nearly always UTF-8; checking that is far cheaper than replacing.
            let names = match std::str::from_utf8(&node.text) {
                Ok(text) => included_names(text),
                Err(_) => included_names(&String::from_utf8_lossy(&node.text)),
            };
            for included in names {
                self.look_up(&included, &node.dir)?;
            }
        }
        field(self.hasher, b"end of headers");
        Ok(())
    }

    fn look_up(&mut self, included: &Included, from: &Path) -> Result<()> {
        let looked_from = included.quoted.then(|| from.to_path_buf());
        if !self
            .looked_up
            .insert((looked_from.clone(), included.name.clone()))
        {
            return Ok(());
        }
        let mut answered = false;
        if let Some((&name, &text)) = self.memory.get_key_value(included.name.as_str()) {
            answered = true;
            // Its text is in the key already; what it includes is walked like any header's.
            if self.seen_memory.insert(name) {
                self.queue.push_back(Node {
                    text: text.as_bytes().to_vec(),
                    dir: self.program_dir.clone(),
                });
            }
        }
        let name = Path::new(&included.name);
        let candidates: Vec<PathBuf> = if name.is_absolute() {
            vec![name.to_path_buf()]
        } else {
            looked_from
                .iter()
                .chain(std::iter::once(&self.program_dir).filter(|_| included.quoted))
                .chain(&self.dirs)
                .map(|dir| lexically_normal(&dir.join(name)))
                .collect()
        };
        for candidate in candidates {
            let is_file = match self.probes.as_deref_mut() {
                Some(probes) => {
                    let probe = Probe::of(&candidate);
                    let is_file = probe.file.is_some();
                    probes.push(probe);
                    is_file
                }
                None => candidate.is_file(),
            };
            if !is_file {
                continue;
            }
            answered = true;
            if !self.seen_files.insert(candidate.clone()) {
                continue;
            }
            let bytes = std::fs::read(&candidate)
                .map_err(|error| CacheError::io("read", &candidate, &error))?;
            self.files += 1;
            self.bytes += bytes.len() as u64;
            if self.files > MAX_HEADER_FILES || self.bytes > MAX_HEADER_BYTES {
                return Err(CacheError::TooMuch(format!(
                    "more than {MAX_HEADER_FILES} files or {} MiB",
                    MAX_HEADER_BYTES >> 20
                )));
            }
            field(self.hasher, b"file");
            field(self.hasher, &path_bytes(&candidate));
            field(self.hasher, &bytes);
            let dir = candidate
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            self.queue.push_back(Node { text: bytes, dir });
        }
        if !answered {
            field(self.hasher, b"absent");
            field(self.hasher, included.name.as_bytes());
            if let Some(dir) = &looked_from {
                field(self.hasher, &path_bytes(dir));
            }
        }
        Ok(())
    }
}

/// The folder of entries, with its size cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileCache {
    dir: PathBuf,
    cap_bytes: u64,
}

/// How much the folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub entries: usize,
    pub bytes: u64,
}

/// Whether a compile was answered by the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// From an entry; NVRTC did not run.
    Hit,
    /// NVRTC ran and its outcome was kept.
    Stored,
    /// NVRTC ran and nothing was kept (an outcome not worth keeping, or the cache failed).
    Compiled,
}

impl CompileCache {
    /// The folder `dir`, holding at most `cap_bytes`.
    pub fn at(dir: impl Into<PathBuf>, cap_bytes: u64) -> Self {
        Self {
            dir: dir.into(),
            cap_bytes,
        }
    }

    /// The user's cache: `compiled/` under Racetrack's cache folder, unless [`CACHE_ENV`]
    /// turns it off or there is no cache folder.
    pub fn for_user() -> Option<Self> {
        if std::env::var(CACHE_ENV).is_ok_and(|value| {
            let value = value.trim();
            value.eq_ignore_ascii_case("off") || value == "0"
        }) {
            return None;
        }
        crate::provision::cache_root().map(|root| Self::at(root.join(FOLDER), DEFAULT_CAP_BYTES))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn cap_bytes(&self) -> u64 {
        self.cap_bytes
    }

    fn entry_path(&self, key: &Key) -> PathBuf {
        self.dir.join(key.hex())
    }

    /// The outcome kept for `key`: `Ok(None)` when there is none, an error when the entry
    /// does not read back whole (which callers take as a miss).
    pub fn get(&self, key: &Key) -> Result<Option<Outcome>> {
        let path = self.entry_path(key);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(CacheError::io("read", &path, &error)),
        };
        let outcome = decode(key, &bytes).map_err(|why| CacheError::Corrupt {
            path: path.clone(),
            why,
        })?;
        // Least recently used goes first: a hit makes an entry young again.
        if let Ok(file) = std::fs::File::options().write(true).open(&path) {
            let _ = file.set_modified(SystemTime::now());
        }
        Ok(Some(outcome))
    }

    /// Keeps `outcome` under `key`: written beside its final name and renamed into place, so a
    /// reader never sees part of it.
    pub fn put(&self, key: &Key, outcome: &Outcome) -> Result<()> {
        let path = self.entry_path(key);
        // No fsync: an entry a crash leaves torn fails its hash and is a miss.
        write_whole(&self.dir, &path, &encode(key, outcome))
            .map_err(|error| CacheError::io("write", &path, &error))
    }

    /// An exclusive lock on `key`'s stripe, held while it is compiled and written; another
    /// process (or thread) that wants the same entry waits, then finds it.
    pub fn lock(&self, key: &Key) -> Result<EntryLock> {
        let locks = self.dir.join(".locks");
        std::fs::create_dir_all(&locks)
            .map_err(|error| CacheError::io("create", &locks, &error))?;
        // One lock file per 256th of the keys: concurrent compiles of different files rarely
        // wait for each other, and the folder keeps at most 256 of them.
        let path = locks.join(format!("{:02x}.lock", key.0[0]));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|error| CacheError::io("open", &path, &error))?;
        lock_exclusive(&file).map_err(|error| CacheError::io("lock", &path, &error))?;
        Ok(EntryLock { _file: file })
    }

    /// The entries and their bytes (files being written are not counted).
    pub fn usage(&self) -> Result<Usage> {
        Ok(self
            .entries()?
            .iter()
            .fold(Usage::default(), |usage, entry| Usage {
                entries: usage.entries + 1,
                bytes: usage.bytes + entry.bytes,
            }))
    }

    fn entries(&self) -> Result<Vec<Entry>> {
        let listing = match std::fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(CacheError::io("list", &self.dir, &error)),
        };
        let mut entries = Vec::new();
        for item in listing.flatten() {
            let name = item.file_name();
            let name = name.to_string_lossy();
            let Ok(metadata) = item.metadata() else {
                continue;
            };
            if !metadata.is_file() {
                continue;
            }
            let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if name.starts_with(STAGING_PREFIX) {
                // Left by a writer that was killed: nothing renames it any more.
                let abandoned = modified
                    .elapsed()
                    .is_ok_and(|age| age > Duration::from_secs(3600));
                if abandoned {
                    let _ = std::fs::remove_file(item.path());
                }
                continue;
            }
            if name.len() == 64 && name.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                entries.push(Entry {
                    path: item.path(),
                    bytes: metadata.len(),
                    modified,
                });
            }
        }
        Ok(entries)
    }

    /// Removes the least recently used entries until the folder holds no more than its cap;
    /// returns how many went.
    pub fn evict(&self) -> Result<usize> {
        let mut entries = self.entries()?;
        let mut total: u64 = entries.iter().map(|entry| entry.bytes).sum();
        if total <= self.cap_bytes {
            return Ok(0);
        }
        entries.sort_by(|a, b| a.modified.cmp(&b.modified).then(a.path.cmp(&b.path)));
        let mut removed = 0;
        for entry in entries {
            if total <= self.cap_bytes {
                break;
            }
            match std::fs::remove_file(&entry.path) {
                Ok(()) => removed += 1,
                // Another process evicted it first.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(CacheError::io("remove", &entry.path, &error)),
            }
            total = total.saturating_sub(entry.bytes);
        }
        Ok(removed)
    }

    /// [`key`] of `inputs`, through the manifest an earlier walk of the same inputs left when
    /// its headers all still answer as they did; else by walking them, leaving a manifest for
    /// next time unless a header was written in the last two seconds.
    pub fn key(&self, inputs: &Inputs<'_>) -> Result<Key> {
        let mut hasher = hasher_before_headers(inputs)?;
        let manifests = self.dir.join(MANIFESTS);
        let manifest = manifests.join(hasher.clone().finalize().to_hex().as_str());
        if let Some(key) = std::fs::read_to_string(&manifest)
            .ok()
            .and_then(|text| key_from_manifest(&text))
        {
            return Ok(key);
        }
        let mut probes = Vec::new();
        HeaderWalk::new(inputs, &mut hasher, Some(&mut probes)).walk()?;
        let key = Key(*hasher.finalize().as_bytes());
        if !probes.iter().any(Probe::fresh)
            && let Some(text) = manifest_text(&key, &probes)
        {
            // A manifest that cannot be written only means walking again next time.
            let _ = write_whole(&manifests, &manifest, text.as_bytes());
        }
        Ok(key)
    }

    /// The outcome for `inputs`: from an entry when there is one, else from `compile` (NVRTC),
    /// which is then kept. The cache never makes this fail: on any cache error `compile` runs.
    pub fn compile<E>(
        &self,
        inputs: &Inputs<'_>,
        compile: impl FnOnce() -> std::result::Result<Outcome, E>,
    ) -> (std::result::Result<Outcome, E>, Served) {
        let Ok(key) = self.key(inputs) else {
            return (compile(), Served::Compiled);
        };
        self.compile_keyed(&key, compile)
    }

    /// [`CompileCache::compile`] for a key already made.
    pub fn compile_keyed<E>(
        &self,
        key: &Key,
        compile: impl FnOnce() -> std::result::Result<Outcome, E>,
    ) -> (std::result::Result<Outcome, E>, Served) {
        if let Ok(Some(outcome)) = self.get(key) {
            return (Ok(outcome), Served::Hit);
        }
        let lock = self.lock(key).ok();
        // Another process may have written it while this one waited for the lock.
        if lock.is_some()
            && let Ok(Some(outcome)) = self.get(key)
        {
            return (Ok(outcome), Served::Hit);
        }
        let compiled = compile();
        let served = match &compiled {
            Ok(outcome) if self.put(key, outcome).is_ok() => Served::Stored,
            _ => Served::Compiled,
        };
        drop(lock);
        if served == Served::Stored {
            let _ = self.evict();
            prune_manifests(&self.dir.join(MANIFESTS));
        }
        (compiled, served)
    }
}

#[derive(Debug)]
struct Entry {
    path: PathBuf,
    bytes: u64,
    modified: SystemTime,
}

/// Held while an entry is compiled and written; released on drop.
#[derive(Debug)]
pub struct EntryLock {
    _file: std::fs::File,
}

#[cfg(unix)]
fn lock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: flock on a descriptor the caller keeps open; the lock goes with it.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(not(unix))]
fn lock_exclusive(_file: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

const STAGING_PREFIX: &str = ".writing-";

/// A name no other writer uses: the process, the thread, and a counter.
/// Writes `bytes` to `path` in `folder` through a file of its own renamed into place, so a
/// reader sees all of it or none.
fn write_whole(folder: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let staging = folder.join(staging_name(&name));
    let written = std::fs::File::create(&staging).and_then(|mut file| file.write_all(bytes));
    let renamed = written.and_then(|()| std::fs::rename(&staging, path));
    if renamed.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    renamed
}

/// Removes the oldest manifests past [`MAX_MANIFESTS`] (an edited source leaves its old one).
fn prune_manifests(folder: &Path) {
    let Ok(listing) = std::fs::read_dir(folder) else {
        return;
    };
    let mut manifests: Vec<(SystemTime, PathBuf)> = listing
        .flatten()
        .filter_map(|item| {
            let modified = item.metadata().ok()?.modified().ok()?;
            Some((modified, item.path()))
        })
        .collect();
    if manifests.len() <= MAX_MANIFESTS {
        return;
    }
    manifests.sort();
    let excess = manifests.len() - MAX_MANIFESTS;
    for (_, path) in manifests.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}

fn staging_name(name: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    format!(
        "{STAGING_PREFIX}{}-{}-{thread}-{}",
        name,
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// An entry: the magic line, the key, the payload's length and BLAKE3 hash, then the payload:
/// `compiled` or `refused`, then each string as its length in bytes, a newline, and the bytes.
fn encode(key: &Key, outcome: &Outcome) -> Vec<u8> {
    fn string(payload: &mut Vec<u8>, text: &str) {
        payload.extend_from_slice(format!("{}\n", text.len()).as_bytes());
        payload.extend_from_slice(text.as_bytes());
    }
    let mut payload = Vec::new();
    match outcome {
        Outcome::Compiled(compiled) => {
            payload.extend_from_slice(b"compiled\n");
            string(&mut payload, &compiled.ptx);
            payload.extend_from_slice(format!("{}\n", compiled.lowered_names.len()).as_bytes());
            for name in &compiled.lowered_names {
                string(&mut payload, name);
            }
        }
        Outcome::Refused { log } => {
            payload.extend_from_slice(b"refused\n");
            string(&mut payload, log);
        }
    }
    let mut bytes = format!(
        "{MAGIC}\n{}\n{}\n{}\n",
        key.hex(),
        payload.len(),
        blake3::hash(&payload).to_hex()
    )
    .into_bytes();
    bytes.extend_from_slice(&payload);
    bytes
}

/// Reads back what [`encode`] wrote, or says why it cannot.
fn decode(key: &Key, bytes: &[u8]) -> std::result::Result<Outcome, String> {
    let mut reader = Reader { bytes, at: 0 };
    if reader.line()? != MAGIC {
        return Err("it is from another version of Racetrack, or not an entry".into());
    }
    if reader.line()? != key.hex() {
        return Err("it holds another key".into());
    }
    let length: usize = reader
        .line()?
        .parse()
        .map_err(|_| "its length is not a number".to_string())?;
    let hash = reader.line()?.to_string();
    let payload = &bytes[reader.at..];
    if payload.len() != length {
        return Err(format!(
            "it holds {} bytes of payload, not {length}",
            payload.len()
        ));
    }
    if blake3::hash(payload).to_hex().as_str() != hash {
        return Err("its payload does not match its hash".into());
    }
    let mut payload = Reader {
        bytes: payload,
        at: 0,
    };
    let outcome = match payload.line()? {
        "compiled" => {
            let ptx = payload.string()?;
            let count: usize = payload
                .line()?
                .parse()
                .map_err(|_| "its name count is not a number".to_string())?;
            let mut lowered_names = Vec::with_capacity(count.min(1024));
            for _ in 0..count {
                lowered_names.push(payload.string()?);
            }
            Outcome::Compiled(Compiled { ptx, lowered_names })
        }
        "refused" => Outcome::Refused {
            log: payload.string()?,
        },
        other => return Err(format!("it holds an outcome named `{other}`")),
    };
    if payload.at != payload.bytes.len() {
        return Err("it has bytes after its outcome".into());
    }
    Ok(outcome)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn line(&mut self) -> std::result::Result<&'a str, String> {
        let rest = &self.bytes[self.at..];
        let end = rest
            .iter()
            .position(|&byte| byte == b'\n')
            .ok_or_else(|| "it ends in the middle of a line".to_string())?;
        self.at += end + 1;
        std::str::from_utf8(&rest[..end]).map_err(|_| "a line is not UTF-8".to_string())
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        let length: usize = self
            .line()?
            .parse()
            .map_err(|_| "a string's length is not a number".to_string())?;
        let end = self
            .at
            .checked_add(length)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| "it ends in the middle of a string".to_string())?;
        let text = std::str::from_utf8(&self.bytes[self.at..end])
            .map_err(|_| "a string is not UTF-8".to_string())?;
        self.at = end;
        Ok(text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(byte: u8) -> Key {
        Key([byte; 32])
    }

    fn compiled(ptx: &str, names: &[&str]) -> Outcome {
        Outcome::Compiled(Compiled {
            ptx: ptx.to_string(),
            lowered_names: names.iter().map(ToString::to_string).collect(),
        })
    }

    #[test]
    fn entries_round_trip_and_refuse_every_truncation() {
        for outcome in [
            compiled(".version 9.0\n.entry k()\n{\n}\n", &["_Z1kv", "_Z1kIfEvv"]),
            compiled("", &[]),
            Outcome::Refused {
                log: "a.cu:3: error: identifier \"tid\" is undefined\n\n1 error".into(),
            },
        ] {
            let key = key_of(7);
            let bytes = encode(&key, &outcome);
            assert_eq!(decode(&key, &bytes), Ok(outcome.clone()));
            assert!(decode(&key_of(8), &bytes).is_err(), "another key's entry");
            for cut in 0..bytes.len() {
                assert!(
                    decode(&key, &bytes[..cut]).is_err(),
                    "cut at {cut} of {} read back",
                    bytes.len()
                );
            }
            let mut flipped = bytes.clone();
            let last = flipped.len() - 1;
            flipped[last] ^= 1;
            assert!(decode(&key, &flipped).is_err());
        }
    }

    #[test]
    fn includes_are_found_whatever_surrounds_them() {
        let text = "#include <a.h>\n  #  include \"b/c.h\"\n#if 0\n#include_next <d>\n#endif\n\
                    #include SOME_MACRO\n#if __has_include(<e.h>) && __has_include( \"f.h\" )\n#endif\n\
                    // #include <in_a_comment.h>, and __has_include(<not_a_directive.h>)\n\
                    #  if defined(X) && \\\n    _CCCL_HAS_INCLUDE(<g.h>)\n#endif\n";
        let names: Vec<(String, bool)> = included_names(text)
            .into_iter()
            .map(|included| (included.name, included.quoted))
            .collect();
        assert_eq!(
            names,
            vec![
                ("a.h".to_string(), false),
                ("b/c.h".to_string(), true),
                ("d".to_string(), false),
                ("e.h".to_string(), false),
                ("f.h".to_string(), true),
                ("g.h".to_string(), false),
            ]
        );
    }

    /// A scratch folder of this test's own, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "racetrack-compile-cache-{name}-{}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("{error}"));
            Self(dir)
        }

        fn write(&self, name: &str, text: &str) -> PathBuf {
            let path = self.0.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).unwrap_or_else(|error| panic!("{error}"));
            }
            std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Owned [`Inputs`], to change one thing at a time.
    #[derive(Clone)]
    struct Owned {
        compiler: Compiler,
        path: String,
        source: String,
        options: Vec<String>,
        headers: Vec<(String, String)>,
        name_expressions: Vec<String>,
    }

    impl Owned {
        fn inputs(&self) -> Inputs<'_> {
            Inputs {
                compiler: &self.compiler,
                path: &self.path,
                source: &self.source,
                options: &self.options,
                headers: &self.headers,
                name_expressions: &self.name_expressions,
            }
        }

        fn key(&self) -> Key {
            key(&self.inputs()).unwrap_or_else(|error| panic!("{error}"))
        }

        fn key_through(&self, cache: &CompileCache) -> Key {
            cache
                .key(&self.inputs())
                .unwrap_or_else(|error| panic!("{error}"))
        }
    }

    /// Sets a file's time to one moment long past, as if written long before the run.
    fn settle(path: &Path) {
        let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        std::fs::File::options()
            .write(true)
            .open(path)
            .and_then(|file| file.set_modified(past))
            .unwrap_or_else(|error| panic!("{error}"));
    }

    #[test]
    fn a_manifest_gives_the_walks_key_until_a_header_it_lists_answers_otherwise() {
        let scratch = Scratch::new("manifest");
        let cache = CompileCache::at(scratch.0.join("cache"), DEFAULT_CAP_BYTES);
        let manifests = || {
            std::fs::read_dir(scratch.0.join("cache").join(MANIFESTS))
                .map(|listing| listing.count())
                .unwrap_or(0)
        };
        let program = scratch.write("k.cu", "");
        let header = scratch.write("include/scale.h", "#define SCALE 2\n");
        settle(&header);
        let inputs = Owned {
            compiler: Compiler::ByName { version: (13, 0) },
            path: program.display().to_string(),
            source: "#include <scale.h>\n#include <later.h>\n".into(),
            options: vec![format!("-I{}", scratch.0.join("include").display())],
            headers: vec![],
            name_expressions: vec![],
        };
        let walked = inputs.key();
        assert_eq!(inputs.key_through(&cache), walked);
        assert_eq!(
            manifests(),
            1,
            "a walk of settled headers leaves a manifest"
        );
        assert_eq!(inputs.key_through(&cache), walked);

        // The manifest answers by size and time alone, without reading: an edit that keeps
        // both is not seen through it (as make would not see it), which shows it answered.
        std::fs::write(&header, "#define SCALE 3\n").unwrap_or_else(|error| panic!("{error}"));
        settle(&header);
        assert_ne!(inputs.key(), walked);
        assert_eq!(inputs.key_through(&cache), walked);

        // A size or a time that changed: walked again, and the new key given.
        std::fs::write(&header, "#define SCALE 30\n").unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(inputs.key_through(&cache), inputs.key());
        assert_ne!(inputs.key_through(&cache), walked);
        // A header appearing where the walk found none, with every header settled, so that the
        // manifest is what answers.
        settle(&header);
        let before = inputs.key_through(&cache);
        let later = scratch.write("include/later.h", "");
        settle(&later);
        assert_ne!(inputs.key_through(&cache), before, "a header that appeared");
        assert_eq!(inputs.key_through(&cache), inputs.key());
        std::fs::remove_file(&later).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(inputs.key_through(&cache), before, "and went again");
    }

    #[test]
    fn the_key_follows_everything_nvrtc_reads_and_nothing_else() {
        let scratch = Scratch::new("key");
        let program = scratch.write("k.cu", "");
        let include = scratch.0.join("include");
        let library = scratch.write("libnvrtc.so.13", "a library");
        scratch.write(
            "include/scale.h",
            "#pragma once\n#include \"nested/deep.h\"\n",
        );
        scratch.write("include/nested/deep.h", "#define SCALE 2\n");
        scratch.write("include/unrelated.h", "#define OTHER 1\n");
        let base = Owned {
            compiler: Compiler::Library(library.clone()),
            path: program.display().to_string(),
            source: "#include <scale.h>\n#include \"mine.h\"\n__global__ void k(int *x) { x[0] = SCALE; }\n".into(),
            options: vec![
                "--gpu-architecture=compute_90".into(),
                "-lineinfo".into(),
                format!("-I{}", include.display()),
                "-DBLOCK=256".into(),
                "-include=prelude.h".into(),
            ],
            headers: vec![
                ("mine.h".into(), "#include <from_memory.h>\n".into()),
                ("prelude.h".into(), "#pragma once\n".into()),
                ("never_included.h".into(), "#include <cooperative_groups.h>\n".into()),
            ],
            name_expressions: vec!["k".into()],
        };
        let key = base.key();
        assert_eq!(key, base.key(), "the same inputs, the same key");

        let mut changes: Vec<(&str, Owned)> = Vec::new();
        let mut changed = base.clone();
        changed.source.push(' ');
        changes.push(("the source", changed));
        let mut changed = base.clone();
        changed.options[3] = "-DBLOCK=128".into();
        changes.push(("a -D flag", changed));
        let mut changed = base.clone();
        changed.options[0] = "--gpu-architecture=compute_80".into();
        changes.push(("the architecture", changed));
        let mut changed = base.clone();
        changed.options.push("-std=c++20".into());
        changes.push(("an option more", changed));
        let mut changed = base.clone();
        changed.headers[0].1.push(' ');
        changes.push(("a header given from memory", changed));
        let mut changed = base.clone();
        changed.name_expressions = vec!["k2".into()];
        changes.push(("the kernel's name", changed));
        let mut changed = base.clone();
        changed.path = scratch.0.join("other.cu").display().to_string();
        changes.push(("the program's name", changed));
        let mut changed = base.clone();
        changed.compiler = Compiler::Library(scratch.write("other/libnvrtc.so.13", "a library"));
        changes.push(("NVRTC's library file", changed));
        let mut changed = base.clone();
        changed.compiler = Compiler::ByName { version: (13, 0) };
        changes.push(("NVRTC found by name", changed));
        for (what, changed) in &changes {
            assert_ne!(changed.key(), key, "{what} changed and the key did not");
        }
        let mut by_name = base.clone();
        by_name.compiler = Compiler::ByName { version: (13, 0) };
        let mut newer = base.clone();
        newer.compiler = Compiler::ByName { version: (13, 1) };
        assert_ne!(
            by_name.key(),
            newer.key(),
            "NVRTC's version changed and the key did not"
        );

        // Files on disk: each change is undone before the next, and the key comes back.
        let on_disk: &[(&str, &str)] = &[
            (
                "include/scale.h",
                "#pragma once\n#include \"nested/deep.h\"\n// edited\n",
            ),
            ("include/nested/deep.h", "#define SCALE 3\n"),
        ];
        for (file, text) in on_disk {
            let path = scratch.0.join(file);
            let before = std::fs::read_to_string(&path).unwrap_or_default();
            scratch.write(file, text);
            assert_ne!(base.key(), key, "{file} changed and the key did not");
            scratch.write(file, &before);
        }
        // A header that appears where an include looks first, shadowing the one found before.
        let shadow = scratch.write("scale.h", "#define SCALE 4\n");
        let mut quoted = base.clone();
        quoted.source = quoted.source.replace("<scale.h>", "\"scale.h\"");
        let with_shadow = quoted.key();
        std::fs::remove_file(&shadow).unwrap_or_else(|error| panic!("{error}"));
        assert_ne!(quoted.key(), with_shadow, "a header that went away");
        // One that nothing found before: `from_memory.h` is included and found nowhere.
        let appeared = scratch.write("include/from_memory.h", "");
        assert_ne!(base.key(), key, "a header that appeared");
        std::fs::remove_file(&appeared).unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(base.key(), key);

        scratch.write("include/unrelated.h", "#define OTHER 2\n");
        assert_eq!(base.key(), key, "a header nothing includes is not read");
        // Another NVRTC library of the same version (a patch release) is another compiler.
        scratch.write("libnvrtc.so.13", "another library");
        assert_ne!(
            base.key(),
            key,
            "NVRTC's library changed and the key did not"
        );
    }

    #[test]
    fn a_corrupt_or_truncated_entry_is_a_miss_and_is_written_again() {
        let scratch = Scratch::new("corrupt");
        let cache = CompileCache::at(scratch.0.join("compiled"), DEFAULT_CAP_BYTES);
        let key = key_of(1);
        let outcome = compiled(".version 9.0\n", &["_Z1kv"]);
        assert_eq!(cache.get(&key), Ok(None));
        cache
            .put(&key, &outcome)
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(cache.get(&key), Ok(Some(outcome.clone())));
        let path = cache.entry_path(&key);
        let whole = std::fs::read(&path).unwrap_or_default();
        for damaged in [
            &whole[..whole.len() / 2],
            b"garbage".as_slice(),
            b"".as_slice(),
        ] {
            std::fs::write(&path, damaged).unwrap_or_else(|error| panic!("{error}"));
            assert!(
                matches!(cache.get(&key), Err(CacheError::Corrupt { .. })),
                "a damaged entry read back"
            );
            let mut compiles = 0;
            let (again, served) = cache.compile_keyed(&key, || {
                compiles += 1;
                Ok::<_, ()>(outcome.clone())
            });
            assert_eq!(
                (again, served, compiles),
                (Ok(outcome.clone()), Served::Stored, 1)
            );
            assert_eq!(cache.get(&key), Ok(Some(outcome.clone())), "written again");
            let (hit, served) = cache
                .compile_keyed(&key, || -> std::result::Result<Outcome, ()> {
                    panic!("a hit must not compile")
                });
            assert_eq!((hit, served), (Ok(outcome.clone()), Served::Hit));
        }
    }

    #[test]
    fn no_cache_error_fails_a_compile() {
        let scratch = Scratch::new("broken");
        // The cache's folder is a file: nothing can be read or written there.
        let file = scratch.write("compiled", "not a folder");
        let cache = CompileCache::at(&file, DEFAULT_CAP_BYTES);
        let outcome = Outcome::Refused {
            log: "k.cu:1: error".into(),
        };
        let (result, served) = cache.compile_keyed(&key_of(2), || Ok::<_, ()>(outcome.clone()));
        assert_eq!((result, served), (Ok(outcome), Served::Compiled));
        // And what the compile itself says goes through untouched, never kept.
        let cache = CompileCache::at(scratch.0.join("fine"), DEFAULT_CAP_BYTES);
        let (result, served) = cache.compile_keyed(&key_of(3), || Err::<Outcome, _>("no NVRTC"));
        assert_eq!((result, served), (Err("no NVRTC"), Served::Compiled));
        assert_eq!(cache.usage(), Ok(Usage::default()));
    }

    #[test]
    fn past_its_cap_the_least_recently_used_entries_go() {
        let scratch = Scratch::new("evict");
        let ptx = "x".repeat(1000);
        let one = encode(&key_of(0), &compiled(&ptx, &[])).len() as u64;
        let cache = CompileCache::at(scratch.0.join("compiled"), 3 * one);
        let old = SystemTime::now() - Duration::from_secs(3600);
        for byte in 0..3u8 {
            cache
                .put(&key_of(byte), &compiled(&ptx, &[]))
                .unwrap_or_else(|error| panic!("{error}"));
            // Entry 0 the oldest, 2 the youngest.
            let age = old + Duration::from_secs(u64::from(byte) * 60);
            std::fs::File::options()
                .write(true)
                .open(cache.entry_path(&key_of(byte)))
                .and_then(|file| file.set_modified(age))
                .unwrap_or_else(|error| panic!("{error}"));
        }
        assert_eq!(cache.evict(), Ok(0), "at the cap, nothing goes");
        // Reading entry 0 makes it the most recently used: entry 1 is now the oldest.
        assert!(matches!(cache.get(&key_of(0)), Ok(Some(_))));
        let (_, served) = cache.compile_keyed(&key_of(3), || Ok::<_, ()>(compiled(&ptx, &[])));
        assert_eq!(served, Served::Stored);
        let usage = cache.usage().unwrap_or_default();
        assert_eq!(usage.entries, 3, "one went to make room");
        assert!(usage.bytes <= cache.cap_bytes(), "{usage:?}");
        assert_eq!(
            cache.get(&key_of(1)),
            Ok(None),
            "the least recently used went"
        );
        for kept in [0, 2, 3] {
            assert!(
                matches!(cache.get(&key_of(kept)), Ok(Some(_))),
                "{kept} went"
            );
        }
    }

    #[test]
    fn concurrent_writers_never_show_a_reader_part_of_an_entry() {
        let scratch = Scratch::new("concurrent");
        let cache = CompileCache::at(scratch.0.join("compiled"), DEFAULT_CAP_BYTES);
        let key = key_of(9);
        // Big enough that a write takes many system calls.
        let outcomes = [
            compiled(&"a".repeat(1 << 20), &["_Z1av"]),
            Outcome::Refused {
                log: "b".repeat(1 << 20),
            },
        ];
        std::thread::scope(|scope| {
            for writer in 0..4 {
                let (cache, outcomes) = (&cache, &outcomes);
                scope.spawn(move || {
                    for round in 0..25 {
                        cache
                            .put(&key, &outcomes[(writer + round) % 2])
                            .unwrap_or_else(|error| panic!("{error}"));
                    }
                });
            }
            for _ in 0..4 {
                let (cache, outcomes) = (&cache, &outcomes);
                scope.spawn(move || {
                    for _ in 0..200 {
                        match cache.get(&key) {
                            Ok(None) => {}
                            Ok(Some(outcome)) => assert!(outcomes.contains(&outcome)),
                            Err(error) => panic!("a reader saw part of an entry: {error}"),
                        }
                    }
                });
            }
        });
        assert!(
            outcomes.contains(
                &cache
                    .get(&key)
                    .ok()
                    .flatten()
                    .unwrap_or(Outcome::Refused { log: String::new() })
            )
        );
        let left: Vec<String> = std::fs::read_dir(cache.dir())
            .map(|listing| {
                listing
                    .flatten()
                    .map(|item| item.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.starts_with(STAGING_PREFIX))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(left, Vec::<String>::new(), "files being written were left");
        assert_eq!(cache.usage().map(|usage| usage.entries), Ok(1));
    }

    #[test]
    fn the_readme_says_the_cap() {
        let readme = include_str!("../../README.md");
        let cap = format!("{} MiB", DEFAULT_CAP_BYTES >> 20);
        assert!(
            readme.contains(&cap) && readme.contains("compiled/"),
            "README.md must say where the compile cache is and that it holds at most {cap}"
        );
    }

    #[test]
    fn paths_are_normalized_without_the_file_system() {
        assert_eq!(lexically_normal(Path::new("a/./b/../c")), Path::new("a/c"));
        assert_eq!(lexically_normal(Path::new("../x/../y")), Path::new("../y"));
        assert_eq!(lexically_normal(Path::new("/a/../../b")), Path::new("/b"));
        assert_eq!(lexically_normal(Path::new("a/..")), Path::new("."));
    }
}
