//! What an exercise is, and the starting text made from a chapter's kernel.

use std::fmt;

use harness::kernel::line_of_marker;
use harness::{Expect, KernelSource};

use crate::check::Check;

/// The seven chapters, in book order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Chapter {
    Map,
    Reductions,
    Life,
    Atomics,
    MutexDot,
    Scans,
    Matmul,
    ManyGpus,
}

impl Chapter {
    pub const ALL: [Self; 8] = [
        Self::Map,
        Self::Reductions,
        Self::Life,
        Self::Atomics,
        Self::MutexDot,
        Self::Scans,
        Self::Matmul,
        Self::ManyGpus,
    ];

    /// The directory under `kernels/` and `exercises/`.
    pub fn dir(self) -> &'static str {
        match self {
            Self::Map => "ch1_map",
            Self::Reductions => "ch2_reductions",
            Self::Life => "ch3_life",
            Self::Atomics => "ch4_atomics",
            Self::MutexDot => "ch5_mutex_dot",
            Self::Scans => "ch6_scans",
            Self::Matmul => "ch7_matmul",
            Self::ManyGpus => "ch8_many_gpus",
        }
    }

    /// `ch4`.
    pub fn short(self) -> &'static str {
        &self.dir()[..3]
    }

    /// The chapter's book page, under `book/src/`.
    pub fn page(self) -> &'static str {
        match self {
            Self::Map => "ch1-map.md",
            Self::Reductions => "ch2-reductions.md",
            Self::Life => "ch3-life.md",
            Self::Atomics => "ch4-atomics.md",
            Self::MutexDot => "ch5-mutex-dot.md",
            Self::Scans => "ch6-scans.md",
            Self::Matmul => "ch7-matmul.md",
            Self::ManyGpus => "ch8-many-gpus.md",
        }
    }

    pub fn topic(self) -> &'static str {
        match self {
            Self::Map => "maps",
            Self::Reductions => "reductions",
            Self::Life => "life",
            Self::Atomics => "atomics",
            Self::MutexDot => "mutex and dot",
            Self::Scans => "scans",
            Self::Matmul => "matmul",
            Self::ManyGpus => "many gpus",
        }
    }
}

impl fmt::Display for Chapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.short(), self.topic())
    }
}

/// Where the learner's starting file comes from.
#[derive(Debug, Clone, Copy)]
pub enum Start {
    /// Fix it: a chapter's broken kernel.
    Fix(KernelSource),
    /// Write it: a chapter's reference kernel with the body of one function (its entry, or a
    /// device function it calls) emptied to a TODO.
    Write {
        reference: KernelSource,
        /// The function to write.
        function: &'static str,
        todo: &'static str,
        /// Code kept after the TODO so the file compiles (`return value;`), or empty.
        stub: &'static str,
    },
}

impl Start {
    pub fn kernel(&self) -> &KernelSource {
        match self {
            Self::Fix(kernel) => kernel,
            Self::Write { reference, .. } => reference,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Self::Fix(_) => "fix it",
            Self::Write { .. } => "write it",
        }
    }
}

/// The line of the starting file a failure must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// The line that carried the chapter kernel's `// BUG:` marker.
    Bug,
    /// The first line containing this text.
    Containing(&'static str),
    /// None: a wrong result names no line.
    Unnamed,
}

/// Why a file fails: a checker's or the CPU's verdict in the chapters' terms, or a goal of the
/// exercise missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Check(Expect),
    /// Shared accesses with more bank conflicts than the exercise allows (emulator-counted).
    BankConflicts,
    /// Slower on a GPU than the kernel the exercise says to beat.
    TooSlow,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Check(expect) => write!(f, "{expect}"),
            Self::BankConflicts => f.write_str("bank conflicts"),
            Self::TooSlow => f.write_str("too slow"),
        }
    }
}

/// How the untouched starting file fails its check; the dev check holds every exercise to it,
/// so one that passes untouched, or fails for another reason than its statement gives, fails CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fails {
    pub reason: Reason,
    pub line: Line,
    /// The slip also makes the result wrong, so a learner who silences the checker without
    /// mending it (a barrier between a racing read and write) is left with a wrong result
    /// that the exercise's own hints still explain.
    pub then_wrong_result: bool,
}

impl Fails {
    /// racecheck, synccheck or memcheck names the `// BUG:` line (initcheck, for a wrong result
    /// that comes from reading memory nothing wrote); or, for a compile error, NVRTC's log does.
    pub const fn at_bug(expect: Expect) -> Self {
        Self {
            reason: Reason::Check(expect),
            line: Line::Bug,
            then_wrong_result: false,
        }
    }

    pub const fn at(expect: Expect, text: &'static str) -> Self {
        Self {
            reason: Reason::Check(expect),
            line: Line::Containing(text),
            then_wrong_result: false,
        }
    }

    pub const fn wrong_result() -> Self {
        Self {
            reason: Reason::Check(Expect::WrongResult),
            line: Line::Unnamed,
            then_wrong_result: false,
        }
    }

    /// [`Fails::then_wrong_result`]: the slip that the checker names also makes the result
    /// wrong.
    pub const fn and_a_wrong_result(self) -> Self {
        Self {
            then_wrong_result: true,
            ..self
        }
    }

    /// Right results, checkers silent, and bank conflicts at the first line containing `text`.
    pub const fn bank_conflicts_at(text: &'static str) -> Self {
        Self {
            reason: Reason::BankConflicts,
            line: Line::Containing(text),
            then_wrong_result: false,
        }
    }
}

/// Hints for a file that holds part of the fix (a lock now taken with `atomicCAS`) and still
/// fails the way it started: the starting hints would send the learner back to what they did.
#[derive(Debug, Clone, Copy)]
pub struct PartFixed {
    /// Code the file holds once that part is done, compared with spaces dropped.
    pub once: &'static str,
    /// What is wrong, then what to change, as [`Exercise::hints`].
    pub hints: &'static [&'static str],
}

impl PartFixed {
    pub fn holds(&self, source: &str) -> bool {
        without_spaces(source).contains(&without_spaces(self.once))
    }
}

/// `text` with every space, tab and newline dropped: how code is compared whatever its layout.
pub fn without_spaces(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// One exercise of the track.
pub struct Exercise {
    /// `cargo learn check NAME`: the chapter variant's name for a fix-it exercise.
    pub name: &'static str,
    pub chapter: Chapter,
    /// 1-based position in its chapter; numbers the file. Set by [`crate::track`].
    pub number: usize,
    pub title: &'static str,
    /// What is wrong or what to write, and how the host launches the kernel.
    pub statement: &'static str,
    /// From where to look to what to change.
    pub hints: &'static [&'static str],
    /// The hints for what is left once the learner has made part of the fix and the file
    /// still fails the way it started: the first whose `once` the file holds replaces `hints`.
    pub part_fixed: &'static [PartFixed],
    /// Shown when the check passes.
    pub taught: &'static str,
    pub start: Start,
    /// The chapter's kernel that passes: the fixed variant, or the reference solution.
    pub solution: KernelSource,
    pub fails: Fails,
    pub check: Box<dyn Check>,
}

impl fmt::Debug for Exercise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exercise")
            .field("name", &self.name)
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

/// Width of the statement in the file header, and of every screen line.
pub const WIDTH: usize = 80;

impl Exercise {
    /// `exercises/ch4_atomics/01_racy_increment.cu`: the chapter kernel's file name, renumbered
    /// by the exercise's place in its chapter.
    pub fn path(&self) -> String {
        // Named as the exercise is, so that `ring-all-reduce` is `NN_ring_all_reduce.cu` even
        // where the chapter's kernel file is called otherwise.
        format!(
            "exercises/{}/{:02}_{}.cu",
            self.chapter.dir(),
            self.number,
            self.name.replace('-', "_")
        )
    }

    /// The file the learner starts from: a header with the statement, then the chapter's kernel
    /// without its label, `// BUG:` comments and book anchors (or, to write, without the body).
    pub fn starting_text(&self) -> String {
        let mut text = self.header();
        let body = match self.start {
            Start::Fix(kernel) => learner_view(kernel.source, false),
            Start::Write {
                reference,
                function,
                todo,
                stub,
            } => blank_body(&learner_view(reference.source, true), function, todo, stub),
        };
        let folder = self
            .start
            .kernel()
            .path
            .rsplit_once('/')
            .map_or("", |(folder, _)| folder);
        text.push_str(&qualify_kernel_files(&body, folder));
        text
    }

    /// The line of [`Exercise::starting_text`] the failure of [`Exercise::fails`] must name.
    pub fn stated_line(&self) -> Option<u32> {
        let text = self.starting_text();
        match self.fails.line {
            Line::Unnamed => None,
            Line::Containing(needle) => line_of_marker(&text, needle),
            Line::Bug => {
                let kernel = self.start.kernel();
                let bug = kernel.bug_line()? as usize;
                let header = self.header().lines().count();
                let keep_header = matches!(self.start, Start::Write { .. });
                learner_line_of(kernel.source, bug, keep_header).map(|line| (header + line) as u32)
            }
        }
    }

    /// The comment block on top of the learner's file: the statement and the commands.
    pub fn header(&self) -> String {
        let mut header = format!(
            "// {} · {}, exercise {} · {}\n//\n",
            self.name,
            self.chapter,
            self.number,
            self.start.label()
        );
        for paragraph in self.statement.split("\n\n") {
            for line in wrap(paragraph, WIDTH - 3) {
                header.push_str("// ");
                header.push_str(&line);
                header.push('\n');
            }
            header.push_str("//\n");
        }
        header.push_str(&format!(
            "// Check it: cargo learn check {}\n// A hint:   cargo learn hint {}\n",
            self.name, self.name
        ));
        header.push_str("// ");
        header.push_str(&"-".repeat(WIDTH - 3));
        header.push_str("\n\n");
        header
    }
}

/// A chapter kernel as the learner sees it: no `// BUG:` comments, no `// ANCHOR` lines, and no
/// first-line label. A kernel to fix also loses the rest of its opening comment: the chapter's
/// `Thread mapping:` and `Launch:` lines describe the broken launch and often name the fix, and
/// the statement says how the host launches it now.
pub fn learner_view(source: &str, keep_header: bool) -> String {
    kept_lines(source, keep_header)
        .into_iter()
        .map(|(_, line)| line + "\n")
        .collect()
}

/// The lines [`learner_view`] keeps, each with its 1-based line number in `source`.
fn kept_lines(source: &str, keep_header: bool) -> Vec<(usize, String)> {
    let mut kept = Vec::new();
    let mut in_header = true;
    for (index, line) in source.lines().enumerate() {
        let is_comment = line.trim_start().starts_with("//");
        in_header &= is_comment;
        let is_label =
            index == 0 && (line.starts_with("// BROKEN") || line.starts_with("// FIXED"));
        if is_label || (in_header && !keep_header) || line.trim_start().starts_with("// ANCHOR") {
            continue;
        }
        if kept.is_empty() && line.trim().is_empty() {
            continue;
        }
        kept.push((index + 1, strip_bug_comment(line)));
    }
    kept
}

/// The 1-based line in [`learner_view`] of the kernel's line `line`, or `None` if it was dropped.
fn learner_line_of(source: &str, line: usize, keep_header: bool) -> Option<usize> {
    kept_lines(source, keep_header)
        .iter()
        .position(|(original, _)| *original == line)
        .map(|index| index + 1)
}

/// Comments of a chapter kernel name its neighbours by file name (`as 12_gpu_sized_grid.cu`),
/// which `exercises/` does not have: each such name in a comment gets its folder
/// (`kernels/ch2_reductions/12_gpu_sized_grid.cu`), so the learner can open it. Lines keep
/// their numbers.
fn qualify_kernel_files(text: &str, folder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let Some(comment) = line.find("//") else {
            out.push_str(line);
            continue;
        };
        out.push_str(&line[..comment]);
        let rest = &line[comment..];
        let mut copied = 0;
        for (at, _) in rest.match_indices(".cu") {
            let start = rest[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let name = &rest[start..at];
            let numbered = name.len() > 3
                && name.as_bytes()[..2].iter().all(u8::is_ascii_digit)
                && name.as_bytes()[2] == b'_';
            let qualified = rest[..start].ends_with('/');
            let whole = !rest[at + 3..].starts_with(|c: char| c.is_ascii_alphanumeric());
            if numbered && whole && !qualified && start >= copied {
                out.push_str(&rest[copied..start]);
                out.push_str(folder);
                out.push('/');
                copied = start;
            }
        }
        out.push_str(&rest[copied..]);
    }
    out
}

fn strip_bug_comment(line: &str) -> String {
    match line.find("// BUG:") {
        Some(at) => line[..at].trim_end().to_string(),
        None => line.to_string(),
    }
}

/// `source` with the body of `entry` replaced by a TODO (and `stub`, when the function must
/// return something to compile): what a "write it" exercise starts from.
pub fn blank_body(source: &str, entry: &str, todo: &str, stub: &str) -> String {
    let Some(name_at) = find_definition(source, entry) else {
        return source.to_string();
    };
    let Some(open) = source[name_at..].find('{').map(|at| name_at + at) else {
        return source.to_string();
    };
    let mut depth = 0usize;
    let mut close = None;
    for (offset, c) in source[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + offset);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else {
        return source.to_string();
    };
    let mut todo_lines = String::new();
    for (index, line) in wrap(todo, WIDTH - 12).iter().enumerate() {
        todo_lines.push_str(if index == 0 {
            "    // TODO: "
        } else {
            "    //       "
        });
        todo_lines.push_str(line);
        todo_lines.push('\n');
    }
    if !stub.is_empty() {
        todo_lines.push_str("    ");
        todo_lines.push_str(stub);
        todo_lines.push('\n');
    }
    format!(
        "{}{{\n{todo_lines}}}{}",
        &source[..open],
        &source[close + 1..]
    )
}

/// Where `entry(` is defined: the name followed by its parameter list.
fn find_definition(source: &str, entry: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = source[from..].find(entry) {
        let start = from + at;
        let after = &source[start + entry.len()..];
        let before_ok = source[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_');
        if before_ok && after.trim_start().starts_with('(') {
            return Some(start);
        }
        from = start + entry.len();
    }
    None
}

/// Greedy word wrap to `width` columns (counted in chars).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in unbroken_words(text) {
        let word = word.as_str();
        let needed = if line.is_empty() {
            word.chars().count()
        } else {
            line.chars().count() + 1 + word.chars().count()
        };
        if needed > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The words of `text`, with a short parenthesis kept whole (`(cell x 0, y 20)`, `(first
/// exit)`): a line that breaks inside one reads as two halves of nothing.
fn unbroken_words(text: &str) -> Vec<String> {
    const SHORT: usize = 20;
    let mut words: Vec<String> = Vec::new();
    let mut group: Option<String> = None;
    for word in text.split_whitespace() {
        group = match group.take() {
            Some(mut open) => {
                open.push(' ');
                open.push_str(word);
                if open.chars().count() > SHORT {
                    words.extend(open.split(' ').map(str::to_string));
                    None
                } else if word.contains(')') {
                    words.push(open);
                    None
                } else {
                    Some(open)
                }
            }
            None if word.starts_with('(') && !word.contains(')') => Some(word.to_string()),
            None => {
                words.push(word.to_string());
                None
            }
        };
    }
    if let Some(open) = group {
        words.extend(open.split(' ').map(str::to_string));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_parenthesis_is_not_broken_across_lines() {
        let text = "memcheck: an access outside global memory, board[20] (cell x 0, y 20)";
        assert_eq!(
            wrap(text, 60),
            vec![
                "memcheck: an access outside global memory, board[20]",
                "(cell x 0, y 20)"
            ]
        );
        // A long one breaks where it must, as words do.
        let long = "see (every one of the many words in here) now";
        assert_eq!(
            wrap(long, 20).concat().replace(' ', ""),
            long.replace(' ', "")
        );
    }

    const KERNEL: &str = "// BROKEN(race): lost updates — fixed in 02_atomic_increment.cu\n// Thread mapping: one\n\n// ANCHOR: kernel\nextern \"C\" __global__ void racy(int *x)\n{\n    x[0] = x[0] + 1; // BUG: read, add, write\n}\n// ANCHOR_END: kernel\n";

    #[test]
    fn the_learner_sees_no_label_marker_or_anchor() {
        assert_eq!(
            learner_view(KERNEL, false),
            "extern \"C\" __global__ void racy(int *x)\n{\n    x[0] = x[0] + 1;\n}\n"
        );
        assert_eq!(learner_line_of(KERNEL, 7, false), Some(3));
        assert_eq!(learner_line_of(KERNEL, 4, false), None);
        assert_eq!(
            learner_view(KERNEL, true),
            "// Thread mapping: one\n\nextern \"C\" __global__ void racy(int *x)\n{\n    x[0] = x[0] + 1;\n}\n"
        );
        assert_eq!(learner_line_of(KERNEL, 7, true), Some(5));
    }

    #[test]
    fn write_it_blanks_the_entry_body_and_keeps_the_rest() {
        let source = "#define N 4\n__device__ int twice(int v) { return 2 * v; }\nextern \"C\" __global__ void saxpy(float a, const float *x, float *y)\n{\n    if (true) { y[0] = a * x[0]; }\n}\n// after\n";
        let blank = blank_body(
            source,
            "saxpy",
            "y[i] = a * x[i] + y[i], one thread per element",
            "",
        );
        assert_eq!(
            blank,
            "#define N 4\n__device__ int twice(int v) { return 2 * v; }\nextern \"C\" __global__ void saxpy(float a, const float *x, float *y)\n{\n    // TODO: y[i] = a * x[i] + y[i], one thread per element\n}\n// after\n"
        );
        assert_eq!(blank_body(source, "missing", "x", ""), source);
        let twice = blank_body(source, "twice", "double it", "return v;");
        assert!(
            twice.contains("int twice(int v) {\n    // TODO: double it\n    return v;\n}\n"),
            "{twice}"
        );
    }

    #[test]
    fn file_names_in_comments_get_their_folder() {
        let text = "// Thread mapping: as 12_gpu_sized_grid.cu; see kernels/ch2_reductions/03_a.cu\nint x; // 04_b.cu and 05_c.cuh\nx = 06_d.cu;\n";
        assert_eq!(
            qualify_kernel_files(text, "kernels/ch2_reductions"),
            "// Thread mapping: as kernels/ch2_reductions/12_gpu_sized_grid.cu; see kernels/ch2_reductions/03_a.cu\nint x; // kernels/ch2_reductions/04_b.cu and 05_c.cuh\nx = 06_d.cu;\n"
        );
    }

    #[test]
    fn wrapping_keeps_words_whole() {
        assert_eq!(
            wrap("one two three four", 9),
            vec!["one two", "three", "four"]
        );
        assert_eq!(wrap("", 9), vec![""]);
        assert_eq!(wrap("unbreakableword x", 5), vec!["unbreakableword", "x"]);
    }
}
