//! What a cached build of `racetrack run` depends on beyond its named sources: every header the
//! preprocessor opened, wherever it lives (`nvcc -M`), each recorded with its size and time.
//! A build is reused only while all of them are as recorded, so editing a header anywhere (a
//! parent folder, a sibling project, a system include) rebuilds the program. A file written in
//! the last two seconds (a header the toolchain's fetch just unpacked, a source saved just before
//! the run) is recorded by its content as well, since its time alone could miss a second edit.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// One file a build read, as it was when the build started.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    size: u64,
    modified_ns: u128,
    /// The content's hash, for a file too fresh for its time to be trusted.
    content: Option<String>,
    path: PathBuf,
}

/// A regular file's size and modification time in nanoseconds; `None` for anything else.
pub(crate) fn size_and_time(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok().filter(|meta| meta.is_file())?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((meta.len(), modified.as_nanos()))
}

/// Whether a file modified at `modified_ns` is too recent for its time to be trusted: the
/// clock moves in coarse ticks, so a second edit within the same tick, keeping the size, would
/// keep the time.
pub(crate) fn too_fresh(modified_ns: u128) -> bool {
    let settled = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(std::time::Duration::from_secs(2))
        .as_nanos();
    modified_ns > settled
}

impl Stamp {
    fn of(path: &Path) -> Option<Self> {
        let (size, modified_ns) = size_and_time(path)?;
        Some(Self {
            size,
            modified_ns,
            content: None,
            path: path.to_path_buf(),
        })
    }

    fn content_of(path: &Path) -> Option<String> {
        let bytes = std::fs::read(path).ok()?;
        Some(blake3::hash(&bytes).to_hex().to_string())
    }

    /// Whether the file is still as stamped: by content where the stamp has it.
    fn holds(&self) -> bool {
        let Some(now) = Stamp::of(&self.path) else {
            return false;
        };
        match &self.content {
            Some(content) => {
                now.size == self.size && Stamp::content_of(&self.path).as_ref() == Some(content)
            }
            None => now.size == self.size && now.modified_ns == self.modified_ns,
        }
    }
}

/// The files a build read, saved beside the build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependencies {
    stamps: Vec<Stamp>,
}

impl Dependencies {
    /// Stamps every path now. `None` if one cannot be read (it vanished mid-build). A file
    /// written in the last two seconds is stamped by its content too: a file's time moves in
    /// coarse ticks, so a second edit within the same tick, keeping its size, would go unseen.
    pub fn stamp(paths: &[PathBuf]) -> Option<Self> {
        let mut stamps = paths
            .iter()
            .map(|p| {
                let mut stamp = Stamp::of(p)?;
                if too_fresh(stamp.modified_ns) {
                    stamp.content = Some(Stamp::content_of(p)?);
                }
                Some(stamp)
            })
            .collect::<Option<Vec<_>>>()?;
        stamps.sort_by(|a, b| a.path.cmp(&b.path));
        stamps.dedup();
        Some(Self { stamps })
    }

    /// Whether every file is still as it was stamped.
    pub fn unchanged(&self) -> bool {
        self.stamps.iter().all(Stamp::holds)
    }

    /// One line per file: `size modified_ns[/content] path` (paths last, so spaces in them
    /// survive).
    pub fn to_text(&self) -> String {
        self.stamps
            .iter()
            .map(|s| {
                let content = s.content.as_deref().map(|c| format!("/{c}"));
                format!(
                    "{} {}{} {}\n",
                    s.size,
                    s.modified_ns,
                    content.unwrap_or_default(),
                    s.path.display()
                )
            })
            .collect()
    }

    /// `None` for a malformed list (a build whose list is unreadable is not reused).
    pub fn from_text(text: &str) -> Option<Self> {
        let stamps = text
            .lines()
            .map(|line| {
                let mut fields = line.splitn(3, ' ');
                let size = fields.next()?.parse().ok()?;
                let time = fields.next()?;
                let (modified, content) = match time.split_once('/') {
                    Some((modified, content)) => (modified, Some(content.to_string())),
                    None => (time, None),
                };
                Some(Stamp {
                    size,
                    modified_ns: modified.parse().ok()?,
                    content,
                    path: PathBuf::from(fields.next()?),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { stamps })
    }
}

/// The prerequisites of a make rule as `nvcc -M` writes it: `a.o : a.cu \` then one path per
/// continued line, spaces inside a path escaped as `\ `.
pub fn parse_make_rule(rule: &str) -> Vec<PathBuf> {
    let joined = rule.replace("\\\r\n", " ").replace("\\\n", " ");
    let mut paths = Vec::new();
    for line in joined.lines() {
        let Some((_, prerequisites)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = prerequisites.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                c if c.is_whitespace() => {
                    if !current.is_empty() {
                        paths.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            paths.push(PathBuf::from(current));
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_make_rule_gives_every_prerequisite_with_escaped_spaces_kept() {
        let rule = "a.o : a.cu \\\n    /usr/include/stdio.h \\\n    my\\ headers/v.h\n";
        assert_eq!(
            parse_make_rule(rule),
            [
                PathBuf::from("a.cu"),
                PathBuf::from("/usr/include/stdio.h"),
                PathBuf::from("my headers/v.h"),
            ]
        );
    }

    #[test]
    fn a_dependency_list_notices_an_edited_header_and_survives_its_text_form() {
        let dir = std::env::temp_dir().join(format!("racetrack-deps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let header = dir.join("with space.h");
        std::fs::write(&header, "#define N 1\n").unwrap();
        let fresh = Dependencies::stamp(std::slice::from_ref(&header)).unwrap();
        assert!(
            fresh.to_text().contains('/'),
            "a file written just now is recorded by its content: {}",
            fresh.to_text()
        );
        let fresh = Dependencies::from_text(&fresh.to_text()).unwrap();
        assert!(fresh.unchanged());
        // A second edit within the same tick of the clock, keeping the size, is still seen.
        let tick = std::fs::metadata(&header).unwrap().modified().unwrap();
        std::fs::write(&header, "#define N 2\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&header)
            .unwrap()
            .set_modified(tick)
            .unwrap();
        assert!(!fresh.unchanged());
        let settled = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(&header)
            .unwrap()
            .set_modified(settled)
            .unwrap();
        let deps = Dependencies::stamp(std::slice::from_ref(&header)).unwrap();
        let reread = Dependencies::from_text(&deps.to_text()).unwrap();
        assert_eq!(reread, deps);
        assert!(reread.unchanged());
        std::fs::write(&header, "#define N 22\n").unwrap();
        assert!(!reread.unchanged());
        std::fs::remove_file(&header).unwrap();
        assert!(!reread.unchanged());
        assert!(Dependencies::stamp(&[header]).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
