//! What a `.cu` file holds at namespace scope, found without a compiler: its functions (kernels,
//! device functions, host functions) and its `#include`s, each with its lines.
//!
//! NVRTC compiles device code only, and most `.cu` files people have are whole programs: a kernel
//! and the `main` that launches it. [`device_part`] blanks the host functions (and, in such a
//! file, the includes NVRTC cannot find, such as `<iostream>`) with spaces, keeping every newline,
//! so NVRTC's errors and the checkers' reports still name the lines of the file as written.
//! Code the file itself already keeps from NVRTC (`#ifndef __CUDACC_RTC__`, `#if 0`) is left
//! alone.

use std::ops::Range;

/// What a function is to NVRTC, from its declaration specifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// `__global__`.
    Kernel,
    /// `__device__`, with or without `__host__`.
    Device,
    /// Neither: host code, which device code cannot call.
    Host,
}

/// A function declared or defined at namespace scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub kind: FunctionKind,
    /// Qualified by its namespaces: `ns::kernel`.
    pub name: String,
    /// `template <typename T, int BLOCK>` when it is a template.
    pub template: Option<String>,
    /// The parameter list as written, without the parentheses.
    pub params: String,
    /// 1-based first and last line.
    pub lines: (u32, u32),
    /// Whether it has a body (a definition) rather than ending in `;`.
    pub defined: bool,
    /// Where `__host__ __device__` goes: after any `template <…>`.
    annotate_at: usize,
    /// `constexpr`: NVRTC takes it as device code too, as nvcc does with
    /// `--expt-relaxed-constexpr`, so that kernels can call it.
    pub constexpr: bool,
    span: Range<usize>,
}

impl Function {
    /// `template <typename T> reduce(const T *in, int n)`: how a hint shows it.
    pub fn signature(&self) -> String {
        let params = collapse_spaces(&self.params);
        match &self.template {
            Some(template) => format!("{} {}({params})", collapse_spaces(template), self.name),
            None => format!("{}({params})", self.name),
        }
    }
}

/// One `#include` line NVRTC will read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Include {
    /// As written between the quotes or angle brackets.
    pub name: String,
    /// `<…>` rather than `"…"`.
    pub angled: bool,
    pub line: u32,
    span: Range<usize>,
}

/// A variable at namespace scope with no memory space (`__device__`, `__constant__`,
/// `__shared__`, `__managed__`) and not `const`: host data, which NVRTC refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostVariable {
    /// The names it declares: `d_in, d_out` for `float *d_in, *d_out;`.
    pub names: String,
    /// 1-based first and last line.
    pub lines: (u32, u32),
    span: Range<usize>,
}

/// Any declaration at namespace scope (a function, a variable, a class, a typedef), for when
/// NVRTC refuses one that the scan did not take for host code: see [`Scan::host_declarations_at`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceDecl {
    /// Its first line, as written (shortened).
    pub label: String,
    pub lines: (u32, u32),
    /// It names a memory space or execution space (`__device__`, `__global__`, …): device code,
    /// never left out.
    pub device: bool,
    span: Range<usize>,
}

/// A member function of a class that is host code (no `__device__`): NVRTC refuses it even as a
/// declaration ("host functions are not allowed in JIT mode"), so a class that mixes a host
/// constructor with `__device__` methods (a lock that `cudaMalloc`s its word) compiles only
/// without it. Device code cannot call it anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMember {
    /// `Lock::Lock`, `Lock::~Lock`, `Matrix::print`.
    pub name: String,
    /// 1-based first and last line.
    pub lines: (u32, u32),
    /// Whether it has a body (a definition) rather than ending in `;`.
    pub defined: bool,
    /// Kept and marked `__host__ __device__` rather than left out: a declaration without a
    /// body, or a `constexpr` definition (see [`Scan::device_annotations`]).
    pub annotate: bool,
    /// Where the annotation goes: after any `template <…>`.
    annotate_at: usize,
    span: Range<usize>,
}

/// Everything [`scan`] found, in source order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    pub functions: Vec<Function>,
    pub includes: Vec<Include>,
    pub host_variables: Vec<HostVariable>,
    pub declarations: Vec<NamespaceDecl>,
    pub host_members: Vec<HostMember>,
}

impl Scan {
    /// The host declarations (not device code) that hold these lines, by index into
    /// `declarations`: what NVRTC's errors point at when a header's host code was not recognised
    /// as such (a class with host methods, a typedef of a host library's type).
    pub fn host_declarations_at(&self, lines: &[u32]) -> Vec<usize> {
        self.declarations
            .iter()
            .enumerate()
            .filter(|(_, declaration)| {
                !declaration.device
                    && lines
                        .iter()
                        .any(|line| (declaration.lines.0..=declaration.lines.1).contains(line))
            })
            .map(|(index, _)| index)
            .collect()
    }

    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|function| function.kind == FunctionKind::Kernel)
    }

    /// Host functions that NVRTC would see (not guarded out by the file itself), but for
    /// `constexpr` ones, which device code may call.
    pub fn host_functions(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|function| function.kind == FunctionKind::Host && !function.constexpr)
    }

    /// Where `__host__ __device__` goes so that NVRTC, which refuses every host function ("not
    /// allowed in JIT mode"), takes these as device code too: `constexpr` functions (as nvcc's
    /// `--expt-relaxed-constexpr` lets kernels call them), and member functions declared without
    /// a body (the detection idiom's `static char test(...);`, a constructor defined elsewhere).
    pub fn device_annotations(&self) -> Vec<usize> {
        let functions = self
            .functions
            .iter()
            .filter(|function| function.kind == FunctionKind::Host && function.constexpr)
            .map(|function| function.annotate_at);
        let members = self
            .host_members
            .iter()
            .filter(|member| member.annotate)
            .map(|member| member.annotate_at);
        functions.chain(members).collect()
    }
}

/// A piece of the file (or of one of its own headers) left out of what NVRTC compiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// `main`, or `#include <iostream>`.
    pub what: String,
    pub lines: (u32, u32),
    /// The header it is in, as the `#include` names it; `None` for the file itself.
    pub header: Option<String>,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let header = self
            .header
            .as_ref()
            .map_or(String::new(), |header| format!("{header}, "));
        match self.lines {
            (first, last) if first == last => write!(f, "{} ({header}line {first})", self.what),
            (first, last) => write!(f, "{} ({header}lines {first}–{last})", self.what),
        }
    }
}

/// The source NVRTC should compile, and what was blanked out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevicePart {
    pub source: String,
    pub left_out: Vec<LeftOut>,
    /// Where, in the original text, what was left out was.
    blanked: Vec<Range<usize>>,
}

/// Blanks the host functions and host variables of `source`, the includes of host-only
/// libraries (see [`super::headers::host_only`]: `<cuda.h>`, cuBLAS, MPI, …), and, when the file
/// has host code, the includes for which `found` says no (host headers such as `<iostream>`)
/// and the host parts of Thrust. A file with no host code keeps its other includes, so NVRTC
/// reports a missing header itself.
pub fn device_part(source: &str, scan: &Scan, found: impl Fn(&Include) -> bool) -> DevicePart {
    device_part_without(source, scan, found, &[])
}

/// [`device_part`], also leaving out the `declarations` of `scan` at these indices (see
/// [`Scan::host_declarations_at`]).
pub fn device_part_without(
    source: &str,
    scan: &Scan,
    found: impl Fn(&Include) -> bool,
    declarations: &[usize],
) -> DevicePart {
    let mut spans: Vec<(Range<usize>, LeftOut)> = scan
        .host_functions()
        .map(|function| {
            let what = if function.defined {
                function.name.clone()
            } else {
                format!("the declaration of {}", function.name)
            };
            (
                function.span.clone(),
                LeftOut {
                    what,
                    lines: function.lines,
                    header: None,
                },
            )
        })
        .collect();
    spans.extend(
        scan.host_members
            .iter()
            .filter(|member| !member.annotate)
            .map(|member| {
                let what = format!("the host member {}", member.name);
                (
                    member.span.clone(),
                    LeftOut {
                        what,
                        lines: member.lines,
                        header: None,
                    },
                )
            }),
    );
    spans.extend(scan.host_variables.iter().map(|variable| {
        (
            variable.span.clone(),
            LeftOut {
                what: format!("the host variable {}", variable.names),
                lines: variable.lines,
                header: None,
            },
        )
    }));
    for declaration in declarations
        .iter()
        .filter_map(|&index| scan.declarations.get(index))
    {
        let covered = spans.iter().any(|(span, _)| {
            span.start <= declaration.span.start && declaration.span.end <= span.end
        });
        if !covered {
            spans.push((
                declaration.span.clone(),
                LeftOut {
                    what: format!("`{}`", declaration.label),
                    lines: declaration.lines,
                    header: None,
                },
            ));
        }
    }
    let has_host_code = spans
        .iter()
        .any(|(_, left)| !left.what.starts_with("the declaration"));
    {
        let leave_out = |include: &Include| {
            super::headers::host_only(&include.name)
                || has_host_code
                    && (!found(include) || super::headers::host_side_thrust(&include.name))
        };
        for include in scan.includes.iter().filter(|include| leave_out(include)) {
            let (open, close) = if include.angled {
                ('<', '>')
            } else {
                ('"', '"')
            };
            spans.push((
                include.span.clone(),
                LeftOut {
                    what: format!("#include {open}{}{close}", include.name),
                    lines: (include.line, include.line),
                    header: None,
                },
            ));
        }
    }
    spans.sort_by_key(|(span, _)| span.start);
    let mut annotations = scan.device_annotations();
    annotations.retain(|at| !spans.iter().any(|(span, _)| span.contains(at)));
    annotations.sort_unstable();
    let mut annotations = annotations.into_iter().peekable();
    // Blank each span, keeping its newlines; a CUDA library's header gives way to the half types
    // it would have brought, and a host C++ header to the standard names it would have brought
    // (`std::enable_if`, `int32_t`), on the same line.
    let mut out = String::with_capacity(source.len());
    let mut at = 0;
    let mut copy = |out: &mut String, from: usize, to: usize| {
        let mut from = from;
        while let Some(&annotate_at) = annotations.peek() {
            if annotate_at > to {
                break;
            }
            annotations.next();
            out.push_str(source.get(from..annotate_at).unwrap_or_default());
            out.push_str("__host__ __device__ ");
            from = annotate_at;
        }
        out.push_str(source.get(from..to).unwrap_or_default());
    };
    for (span, left) in &spans {
        let (Some(_), Some(text)) = (source.get(at..span.start), source.get(span.clone())) else {
            continue;
        };
        copy(&mut out, at, span.start);
        let included = left
            .what
            .strip_prefix("#include ")
            .map(|include| include.trim_matches(['<', '>', '"']));
        let stand_in = match included {
            Some(name) if super::headers::library_header(name) => {
                Some(super::headers::LIBRARY_TYPES)
            }
            Some(name) if super::headers::host_std(name) => Some(super::headers::STD_CORE),
            _ => None,
        };
        let library = stand_in.is_some();
        if let Some(stand_in) = stand_in {
            out.push_str(&format!("#include <{stand_in}>"));
        }
        out.extend(
            text.chars()
                .filter(|c| !library || *c == '\n')
                .map(|c| if c == '\n' || library { c } else { ' ' }),
        );
        at = span.end;
    }
    copy(&mut out, at, source.len());
    let source = out;
    DevicePart {
        source,
        blanked: spans.iter().map(|(span, _)| span.clone()).collect(),
        left_out: spans.into_iter().map(|(_, left)| left).collect(),
    }
}

impl DevicePart {
    /// The includes of `scan` that this device part keeps, which NVRTC will read.
    pub fn kept_includes<'a>(&self, scan: &'a Scan) -> impl Iterator<Item = &'a Include> {
        scan.includes.iter().filter(|include| {
            !self
                .blanked
                .iter()
                .any(|span| span.start <= include.span.start && include.span.end <= span.end)
        })
    }
}

fn collapse_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What an open `{` at namespace scope began.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    Namespace(String),
    /// `extern "C" { … }`: its contents are at namespace scope.
    Linkage,
    /// A function body: `start` is where its declaration began.
    Function {
        start: usize,
        header: String,
    },
    /// A class body, whose member declarations are read for host members; what the declaration
    /// that opened it had read so far goes on after its `}`.
    Class {
        name: String,
        outer_header: String,
        outer_start: Option<usize>,
    },
    /// A member function's body: `start` is where its declaration began.
    Member {
        start: usize,
        header: String,
    },
    /// An initializer, an enum, a function's body, anything else: skipped whole.
    Other,
}

/// A `#if` group and whether NVRTC compiles the current branch of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Conditional {
    /// Whether the branch being read is compiled by NVRTC, as far as the file says.
    active: bool,
    /// The condition is about `__CUDACC_RTC__` (or `0`), so `#else` flips it.
    known: bool,
}

/// Scans `source` for functions and includes at namespace scope. Tolerant: anything it does not
/// understand is skipped, never an error (NVRTC has the last word on what compiles).
pub fn scan(source: &str) -> Scan {
    Scanner::new(source).run()
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    scopes: Vec<Scope>,
    /// Significant text of the declaration being read at namespace scope (comments and
    /// preprocessor lines left out), and where it began.
    header: String,
    header_start: Option<usize>,
    conditionals: Vec<Conditional>,
    /// Macros that stand for `__device__` or `__global__`, e.g. `#define HD __host__ __device__`.
    device_macros: Vec<(String, FunctionKind)>,
    found: Scan,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, byte)| *byte == b'\n')
                .map(|(index, _)| index + 1),
        );
        Self {
            text,
            bytes: text.as_bytes(),
            at: 0,
            line_starts,
            scopes: Vec::new(),
            header: String::new(),
            header_start: None,
            conditionals: Vec::new(),
            device_macros: Vec::new(),
            found: Scan::default(),
        }
    }

    fn line_of(&self, offset: usize) -> u32 {
        let index = self.line_starts.partition_point(|&start| start <= offset);
        u32::try_from(index).unwrap_or(u32::MAX)
    }

    fn at_namespace_scope(&self) -> bool {
        self.scopes
            .iter()
            .all(|scope| matches!(scope, Scope::Namespace(_) | Scope::Linkage))
    }

    /// Directly in a class body (within namespaces and classes only).
    fn in_class(&self) -> bool {
        matches!(self.scopes.last(), Some(Scope::Class { .. }))
            && self.scopes.iter().all(|scope| {
                matches!(
                    scope,
                    Scope::Namespace(_) | Scope::Linkage | Scope::Class { .. }
                )
            })
    }

    /// Where declarations are read: namespace scope or a class body.
    fn collecting(&self) -> bool {
        self.at_namespace_scope() || self.in_class()
    }

    /// `Outer::Inner`: the classes around the current point.
    fn class_path(&self) -> String {
        self.scopes
            .iter()
            .filter_map(|scope| match scope {
                Scope::Class { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("::")
    }

    fn compiled(&self) -> bool {
        self.conditionals
            .iter()
            .all(|conditional| conditional.active)
    }

    fn at_line_start(&self) -> bool {
        self.bytes[..self.at]
            .iter()
            .rev()
            .take_while(|byte| **byte != b'\n')
            .all(|byte| byte.is_ascii_whitespace())
    }

    fn run(mut self) -> Scan {
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            if byte == b'#' && self.at_line_start() {
                self.directive();
                continue;
            }
            if !self.compiled() {
                self.at += 1;
                continue;
            }
            match byte {
                b'/' if self.bytes.get(self.at + 1) == Some(&b'/') => self.skip_line_comment(),
                b'/' if self.bytes.get(self.at + 1) == Some(&b'*') => self.skip_block_comment(),
                b'"' | b'\'' => self.literal(byte),
                b'{' => self.open_brace(),
                b'}' => self.close_brace(),
                b';' => self.semicolon(),
                b':' if self.in_class()
                    && matches!(self.header.trim(), "public" | "private" | "protected")
                    && self.bytes.get(self.at + 1) != Some(&b':') =>
                {
                    self.at += 1;
                    self.reset_header();
                }
                _ => {
                    if self.collecting() {
                        if !byte.is_ascii_whitespace() && self.header_start.is_none() {
                            self.header_start = Some(self.at);
                        }
                        self.push_header_char();
                        continue;
                    }
                    self.at += 1;
                }
            }
        }
        self.found
    }

    /// Appends the (possibly multi-byte) character at `at` to the header and moves past it.
    fn push_header_char(&mut self) {
        let rest = &self.text[self.at..];
        let Some(character) = rest.chars().next() else {
            self.at += 1;
            return;
        };
        self.header.push(character);
        self.at += character.len_utf8();
    }

    fn skip_line_comment(&mut self) {
        while self.at < self.bytes.len() && self.bytes[self.at] != b'\n' {
            self.at += 1;
        }
        if self.collecting() {
            self.header.push(' ');
        }
    }

    fn skip_block_comment(&mut self) {
        let end = self.text[self.at + 2..]
            .find("*/")
            .map_or(self.bytes.len(), |found| self.at + 2 + found + 2);
        self.at = end;
        if self.collecting() {
            self.header.push(' ');
        }
    }

    /// A string or character literal; a `'` between digits is C++14's digit separator.
    fn literal(&mut self, quote: u8) {
        if quote == b'\''
            && self.at > 0
            && self.bytes[self.at - 1].is_ascii_alphanumeric()
            && self
                .bytes
                .get(self.at + 1)
                .is_some_and(u8::is_ascii_alphanumeric)
        {
            self.at += 1;
            return;
        }
        let start = self.at;
        self.at += 1;
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                byte if byte == quote => {
                    self.at += 1;
                    break;
                }
                b'\n' => break,
                _ => self.at += 1,
            }
        }
        self.at = self.at.min(self.bytes.len());
        if self.collecting() {
            if self.header_start.is_none() {
                self.header_start = Some(start);
            }
            self.header.push_str(&self.text[start..self.at]);
        }
    }

    fn reset_header(&mut self) {
        self.header.clear();
        self.header_start = None;
    }

    fn open_brace(&mut self) {
        let position = self.at;
        self.at += 1;
        if !self.collecting() {
            self.scopes.push(Scope::Other);
            return;
        }
        let header = std::mem::take(&mut self.header);
        let start = self.header_start.take().unwrap_or(position);
        let trimmed = header.trim();
        if let Some(name) = class_head(trimmed) {
            self.scopes.push(Scope::Class {
                name,
                outer_header: header,
                outer_start: Some(start),
            });
            return;
        }
        if self.in_class() {
            let scope = if member_body(trimmed) {
                Scope::Member { start, header }
            } else {
                // An initializer (`int n{0}`, `: a{1}` in a constructor), an enum: the
                // declaration goes on after its `}`.
                self.header = header;
                self.header_start = Some(start);
                Scope::Other
            };
            self.scopes.push(scope);
            return;
        }
        let scope = if let Some(rest) = trimmed.strip_prefix("namespace") {
            if rest.is_empty() || rest.starts_with(char::is_whitespace) {
                Scope::Namespace(rest.trim().to_string())
            } else {
                Scope::Other
            }
        } else if trimmed == "extern \"C\"" || trimmed == "extern \"C++\"" {
            Scope::Linkage
        } else if looks_like_function(trimmed) {
            Scope::Function { start, header }
        } else {
            // A class, enum or initializer: the declaration goes on after its `}` to a `;`.
            self.header = header;
            self.header_start = Some(start);
            Scope::Other
        };
        self.scopes.push(scope);
    }

    fn close_brace(&mut self) {
        self.at += 1;
        let Some(scope) = self.scopes.pop() else {
            return;
        };
        if !self.collecting() {
            return;
        }
        match scope {
            Scope::Namespace(_) | Scope::Linkage => self.reset_header(),
            Scope::Function { start, header } => {
                self.record_function(&header, start..self.at, true);
                self.record_declaration(start..self.at);
                self.reset_header();
            }
            Scope::Member { start, header } => {
                self.record_member(&header, start..self.at, true);
                self.reset_header();
            }
            Scope::Class {
                outer_header,
                outer_start,
                ..
            } => {
                self.header = outer_header;
                self.header_start = outer_start;
                self.header.push_str(" {} ");
            }
            Scope::Other => self.header.push_str(" {} "),
        }
    }

    fn semicolon(&mut self) {
        self.at += 1;
        if self.in_class() {
            let header = std::mem::take(&mut self.header);
            if let Some(start) = self.header_start.take() {
                self.record_member(header.trim(), start..self.at, false);
            }
            return;
        }
        if !self.at_namespace_scope() {
            return;
        }
        let header = std::mem::take(&mut self.header);
        if let Some(start) = self.header_start.take() {
            self.record_declaration(start..self.at);
            let trimmed = header.trim();
            if looks_like_function(trimmed) && !trimmed.contains('{') {
                self.record_function(trimmed, start..self.at, false);
            } else if let Some(names) = self.host_variable_names(trimmed) {
                let lines = (self.line_of(start), self.line_of(self.at - 1));
                self.found.host_variables.push(HostVariable {
                    names,
                    lines,
                    span: start..self.at,
                });
            }
        }
    }

    fn record_declaration(&mut self, span: Range<usize>) {
        let text = &self.text[span.clone()];
        let device = text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| {
                matches!(
                    word,
                    "__device__" | "__global__" | "__constant__" | "__shared__" | "__managed__"
                ) || self.device_macros.iter().any(|(name, _)| name == word)
            });
        let first_line = text.lines().map(str::trim).find(|line| !line.is_empty());
        let mut label = collapse_spaces(first_line.unwrap_or_default());
        if label.chars().count() > 48 {
            label = label.chars().take(45).collect::<String>() + "…";
        }
        self.found.declarations.push(NamespaceDecl {
            label,
            lines: (
                self.line_of(span.start),
                self.line_of(span.end.saturating_sub(1)),
            ),
            device,
            span,
        });
    }

    /// The names a declaration at namespace scope gives host variables, if it declares any:
    /// `float *d_in, *d_out` gives `d_in, d_out`; types, aliases, `const` values and device
    /// variables give none.
    fn host_variable_names(&self, declaration: &str) -> Option<String> {
        let words: Vec<&str> = declaration
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|word| !word.is_empty())
            .collect();
        let first = *words.first()?;
        let not_a_variable = [
            "struct",
            "class",
            "union",
            "enum",
            "typedef",
            "using",
            "static_assert",
            "namespace",
            "template",
            "friend",
            "asm",
        ];
        let device_space = ["__device__", "__constant__", "__shared__", "__managed__"];
        let kept = ["const", "constexpr", "__constant__", "__device__"];
        if not_a_variable.contains(&first)
            || words.iter().any(|word| {
                device_space.contains(word)
                    || kept.contains(word)
                    || self.device_macros.iter().any(|(name, _)| name == word)
            })
            || words.len() < 2
        {
            return None;
        }
        // Each declarator's name is the last identifier before its `=`, `[` or `(`.
        let mut names = Vec::new();
        for declarator in split_top_level(declaration, ',') {
            let end = declarator
                .find(['=', '[', '(', '{'])
                .unwrap_or(declarator.len());
            let name = declarator[..end]
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .find(|word| !word.is_empty())?;
            if name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                return None;
            }
            names.push(name.to_string());
        }
        Some(names.join(", "))
    }

    fn record_function(&mut self, header: &str, span: Range<usize>, defined: bool) {
        let Some(parts) = split_declaration(header) else {
            return;
        };
        // The whole declaration, not only what precedes the name: a part the splitter misread
        // (a C++20 requires-clause, an attribute) must never make a kernel look like host code.
        let kind = self.kind_of(&format!("{} {header}", parts.specifiers));
        let mut name = parts.name;
        let namespaces: Vec<&str> = self
            .scopes
            .iter()
            .filter_map(|scope| match scope {
                Scope::Namespace(name) if !name.is_empty() => Some(name.as_str()),
                _ => None,
            })
            .collect();
        if !namespaces.is_empty() {
            name = format!("{}::{name}", namespaces.join("::"));
        }
        let lines = (
            self.line_of(span.start),
            self.line_of(span.end.saturating_sub(1)),
        );
        let constexpr = has_word(&parts.specifiers, "constexpr");
        let annotate_at = self.annotation_point(span.start);
        self.found.functions.push(Function {
            kind,
            name,
            template: parts.template,
            params: parts.params,
            lines,
            defined,
            annotate_at,
            constexpr,
            span,
        });
    }

    /// A member declaration or definition in the current class: kept unless it is a host
    /// member function (see [`HostMember`]).
    fn record_member(&mut self, header: &str, span: Range<usize>, defined: bool) {
        let declaration = header.trim();
        let declaration = declaration
            .strip_prefix("friend")
            .filter(|rest| rest.starts_with(char::is_whitespace))
            .unwrap_or(declaration);
        if !looks_like_function(declaration) {
            return;
        }
        let Some(parts) = split_declaration(declaration) else {
            return;
        };
        if self.kind_of(&format!("{} {declaration}", parts.specifiers)) != FunctionKind::Host
            || !member_declaration_tail(declaration, defined)
        {
            return;
        }
        let constexpr =
            has_word(&parts.specifiers, "constexpr") || has_word(&parts.specifiers, "consteval");
        let class = self.class_path();
        let name = if class.is_empty() {
            parts.name
        } else {
            format!("{class}::{}", parts.name)
        };
        let lines = (
            self.line_of(span.start),
            self.line_of(span.end.saturating_sub(1)),
        );
        let annotate_at = self.annotation_point(span.start);
        self.found.host_members.push(HostMember {
            name,
            lines,
            defined,
            annotate: !defined || constexpr,
            annotate_at,
            span,
        });
    }

    /// Where a declaration starting at `start` takes `__host__ __device__`: after its
    /// `template <…>`, if any.
    fn annotation_point(&self, start: usize) -> usize {
        let text = &self.text[start..];
        template_prefix(text).map_or(start, |prefix| {
            let after = &text[prefix.len()..];
            start + prefix.len() + (after.len() - after.trim_start().len())
        })
    }

    fn kind_of(&self, specifiers: &str) -> FunctionKind {
        let mut kind = FunctionKind::Host;
        for word in specifiers.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            let this = match word {
                "__global__" => FunctionKind::Kernel,
                "__device__" => FunctionKind::Device,
                _ => match self.device_macros.iter().find(|(name, _)| name == word) {
                    Some((_, kind)) => *kind,
                    None => continue,
                },
            };
            if kind != FunctionKind::Kernel {
                kind = this;
            }
        }
        kind
    }

    /// A preprocessor line (with its continuations): includes, conditionals, and macros that
    /// stand for `__device__`.
    fn directive(&mut self) {
        let start = self.at;
        let mut end = start;
        while end < self.bytes.len() {
            if self.bytes[end] == b'\n' {
                // A continuation: `\` at the end of the line, before `\n` or a Windows `\r\n`.
                let line = &self.bytes[start..end];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.ends_with(b"\\") {
                    end += 1;
                    continue;
                }
                break;
            }
            end += 1;
        }
        self.at = end;
        let text = self.text[start + 1..end]
            .replace("\\\r\n", " ")
            .replace("\\\n", " ");
        let text = text.trim();
        let (keyword, rest) = text
            .split_once(|c: char| c.is_whitespace() || c == '(' || c == '<' || c == '"')
            .map_or((text, ""), |(keyword, _)| {
                (keyword, text[keyword.len()..].trim())
            });
        let rtc = |condition: &str| {
            let condition: String = condition.split_whitespace().collect();
            match condition.as_str() {
                "!defined(__CUDACC_RTC__)" | "!defined__CUDACC_RTC__" | "0" => Some(false),
                "defined(__CUDACC_RTC__)" | "defined__CUDACC_RTC__" | "1" => Some(true),
                _ => None,
            }
        };
        match keyword {
            "ifndef" | "ifdef" | "if" => {
                let word = rest.split_whitespace().next().unwrap_or("");
                let known = match keyword {
                    "ifndef" if word == "__CUDACC_RTC__" => Some(false),
                    "ifdef" if word == "__CUDACC_RTC__" => Some(true),
                    "if" => rtc(rest),
                    _ => None,
                };
                self.conditionals.push(Conditional {
                    active: known.unwrap_or(true),
                    known: known.is_some(),
                });
            }
            "else" => {
                if let Some(top) = self.conditionals.last_mut()
                    && top.known
                {
                    top.active = !top.active;
                }
            }
            "elif" => {
                if let Some(top) = self.conditionals.last_mut() {
                    let known = rtc(rest);
                    top.active = known.unwrap_or(true);
                    top.known = known.is_some();
                }
            }
            "endif" => {
                self.conditionals.pop();
            }
            "include" if self.compiled() => {
                let rest = rest.trim();
                let (angled, close) = match rest.chars().next() {
                    Some('<') => (true, '>'),
                    Some('"') => (false, '"'),
                    _ => return,
                };
                if let Some(length) = rest[1..].find(close) {
                    self.found.includes.push(Include {
                        name: rest[1..1 + length].to_string(),
                        angled,
                        line: self.line_of(start),
                        span: start..end,
                    });
                }
            }
            "define" if self.compiled() => {
                let mut words = rest.split_whitespace();
                let name = words.next().unwrap_or("");
                if name.contains('(') {
                    return;
                }
                let body: Vec<&str> = words.collect();
                let kind = if body.contains(&"__global__") {
                    FunctionKind::Kernel
                } else if body.contains(&"__device__") {
                    FunctionKind::Device
                } else {
                    return;
                };
                self.device_macros.push((name.to_string(), kind));
            }
            _ => {}
        }
    }
}

/// Whether a declaration at namespace scope declares or defines a function: a parameter list at
/// the top level, no `=` before it (that is a variable with an initializer), and no class key.
fn looks_like_function(header: &str) -> bool {
    let without_template = strip_template(header).trim_start();
    let first_word = without_template
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    if matches!(
        first_word,
        "struct"
            | "class"
            | "union"
            | "enum"
            | "typedef"
            | "using"
            | "static_assert"
            | "namespace"
            | "friend"
    ) {
        return false;
    }
    split_declaration(header).is_some()
}

fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|found| found == word)
}

/// The class a `{` opens, when the declaration before it is a class head: `struct Lock`,
/// `template <class T> class alignas(16) Box : Base<T>`, `typedef struct` (no name).
fn class_head(header: &str) -> Option<String> {
    let rest = strip_template(header).trim_start();
    let rest = rest
        .strip_prefix("typedef")
        .filter(|after| after.starts_with(char::is_whitespace))
        .map_or(rest, str::trim_start);
    let key = ["struct", "class", "union"].into_iter().find(|key| {
        rest.strip_prefix(key).is_some_and(|after| {
            after.is_empty() || !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        })
    })?;
    let mut after = rest[key.len()..].trim_start();
    // Attributes and alignment before the name: `alignas(16)`, `__align__(8)`, `[[nodiscard]]`.
    loop {
        if let Some(attribute) = after.strip_prefix("[[") {
            after = attribute
                .split_once("]]")
                .map_or("", |(_, rest)| rest)
                .trim_start();
            continue;
        }
        let word_end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let word = &after[..word_end];
        if matches!(
            word,
            "alignas" | "__align__" | "__attribute__" | "__declspec"
        ) && after[word_end..].trim_start().starts_with('(')
        {
            let open = word_end + after[word_end..].find('(').unwrap_or(0);
            let close = matching_paren(after, open)?;
            after = after[close + 1..].trim_start();
            continue;
        }
        if matches!(word, "final") || word.is_empty() {
            return Some(String::new());
        }
        return Some(word.to_string());
    }
}

/// Whether the `{` after `header` (in a class body) opens a member function's body, rather
/// than a brace initializer: `Foo() : a{1}, b{2} {` opens the body only at the last brace.
fn member_body(header: &str) -> bool {
    if !looks_like_function(header.trim_start_matches("friend").trim_start()) {
        return false;
    }
    let Some(open) = header.find('(') else {
        return false;
    };
    let Some(close) = matching_paren(header, open) else {
        return false;
    };
    let tail = header[close + 1..].trim();
    match top_level_colon(tail) {
        // A constructor's initializers: the body follows a complete one.
        Some(_) => tail.ends_with(')') || tail.ends_with('}'),
        None => true,
    }
}

/// The first `:` of `text` that is not part of `::`.
fn top_level_colon(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).find(|&index| {
        bytes[index] == b':'
            && bytes.get(index + 1) != Some(&b':')
            && (index == 0 || bytes[index - 1] != b':')
    })
}

/// Whether what follows a member's parameter list is what a function declaration has there
/// (qualifiers, `noexcept`, `override`, `= 0`, a trailing return type, a constructor's
/// initializers when defined), so that a macro without a semicolon that happens to precede a
/// data member is never taken for a function and left out. `= default` and `= delete` members
/// NVRTC accepts as they are, unless virtual.
fn member_declaration_tail(declaration: &str, defined: bool) -> bool {
    let rest = strip_template(declaration);
    let Some(open) = rest.find('(') else {
        return false;
    };
    // The parameter list is the first parenthesis that is not an attribute's or alignas's.
    let mut open = open;
    let mut close = match matching_paren(rest, open) {
        Some(close) => close,
        None => return false,
    };
    loop {
        let before = rest[..open].trim_end();
        let word = before
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        if !NOT_A_NAME.contains(&word) {
            break;
        }
        let Some(next) = rest[close + 1..].find('(') else {
            return false;
        };
        open = close + 1 + next;
        close = match matching_paren(rest, open) {
            Some(close) => close,
            None => return false,
        };
    }
    let tail = rest[close + 1..].trim();
    let tail = tail.strip_suffix(';').unwrap_or(tail).trim_end();
    if defined {
        // The body's braces were not part of the header; initializers may follow a `:`.
        let before_init = top_level_colon(tail).map_or(tail, |colon| &tail[..colon]);
        return qualifiers_only(before_init);
    }
    if let Some((before, value)) = tail.rsplit_once('=') {
        let value = value.trim();
        return match value {
            "0" => qualifiers_only(before),
            "default" | "delete" => {
                rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|word| word == "virtual")
                    && qualifiers_only(before)
            }
            _ => false,
        };
    }
    qualifiers_only(tail)
}

/// `const`, `volatile`, `&`, `&&`, `noexcept(…)`, `override`, `final`, `throw(…)`, `-> T`.
fn qualifiers_only(text: &str) -> bool {
    let text = text.trim();
    if let Some((qualifiers, _return_type)) = text.split_once("->") {
        return qualifiers_only(qualifiers);
    }
    let mut rest = text;
    while !rest.is_empty() {
        let word_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (word, after) = if word_end == 0 {
            rest.split_at(rest.chars().next().map_or(1, char::len_utf8))
        } else {
            rest.split_at(word_end)
        };
        match word {
            "const" | "volatile" | "override" | "final" | "&" => {}
            "noexcept" | "throw" => {
                let after = after.trim_start();
                if after.starts_with('(') {
                    let Some(close) = matching_paren(after, 0) else {
                        return false;
                    };
                    rest = after[close + 1..].trim_start();
                    continue;
                }
            }
            _ => return false,
        }
        rest = after.trim_start();
    }
    true
}

/// `template <…>` at the start, if any, and the rest.
fn strip_template(header: &str) -> &str {
    template_prefix(header).map_or(header, |prefix| &header[prefix.len()..])
}

fn template_prefix(header: &str) -> Option<&str> {
    let trimmed = header.trim_start();
    let offset = header.len() - trimmed.len();
    let rest = trimmed.strip_prefix("template")?;
    let open = rest.find(|c: char| !c.is_whitespace())?;
    if !rest[open..].starts_with('<') {
        return None;
    }
    let mut depth = 0i32;
    for (index, character) in rest.char_indices().skip(open) {
        match character {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&header[..offset + "template".len() + index + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

struct Declaration {
    template: Option<String>,
    /// Everything before the name: `static __global__ void`.
    specifiers: String,
    name: String,
    params: String,
}

/// Words followed by parentheses that are not the function's name.
const NOT_A_NAME: &[&str] = &[
    "requires",
    "__launch_bounds__",
    "__attribute__",
    "__declspec",
    "alignas",
    "decltype",
    "__align__",
    "__maxnreg__",
    "__cluster_dims__",
];

fn split_declaration(header: &str) -> Option<Declaration> {
    let template = template_prefix(header).map(|prefix| prefix.trim().to_string());
    let rest = strip_template(header);
    let bytes = rest.as_bytes();
    let mut depth = 0i32;
    let mut index = 0;
    while index < bytes.len() {
        // `operator<<`, `operator()`, `operator<=`: the symbols are the name, not brackets.
        if rest[index..].starts_with("operator")
            && (index == 0
                || !(bytes[index - 1].is_ascii_alphanumeric() || bytes[index - 1] == b'_'))
        {
            let after = &rest[index + "operator".len()..];
            let symbols = after.trim_start();
            let skipped = after.len() - symbols.len();
            let length = if symbols.starts_with("()") {
                2
            } else {
                symbols
                    .find(|c: char| !"<>=!+-*/%^&|~,[]".contains(c))
                    .unwrap_or(symbols.len())
            };
            if length > 0 {
                index += "operator".len() + skipped + length;
                continue;
            }
        }
        match bytes[index] {
            b'=' if depth == 0 => return None,
            b'(' if depth == 0 => {
                let before = rest[..index].trim_end();
                // `reduce<float>(…)`: an explicit specialization names its arguments.
                let arguments_start = if before.ends_with('>') {
                    matching_angle_backwards(before)
                } else {
                    None
                };
                let name_end = arguments_start.unwrap_or(before.len());
                let name_start = before[..name_end]
                    .rfind(|c: char| {
                        !(c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '~')
                    })
                    .map_or(0, |found| found + 1);
                let name = &before[name_start..];
                let close = matching_paren(rest, index)?;
                let is_operator = before.ends_with("operator") || before.contains("operator");
                if name.is_empty() && !is_operator || NOT_A_NAME.contains(&name) {
                    index = close + 1;
                    continue;
                }
                let (specifiers, name) = if is_operator {
                    let at = before.rfind("operator")?;
                    (before[..at].to_string(), before[at..].trim().to_string())
                } else {
                    (before[..name_start].to_string(), name.to_string())
                };
                if name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                    return None;
                }
                return Some(Declaration {
                    template,
                    specifiers,
                    name,
                    params: rest[index + 1..close].trim().to_string(),
                });
            }
            b'<' | b'[' => depth += 1,
            b'>' | b']' => depth -= 1,
            _ => {}
        }
        index += 1;
    }
    None
}

/// `text` split at `separator` outside brackets, braces, parentheses and angle brackets.
fn split_top_level(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (index, character) in text.char_indices() {
        match character {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            c if c == separator && depth == 0 => {
                parts.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Where the `<` that matches the `>` ending `text` is.
fn matching_angle_backwards(text: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (index, byte) in text.bytes().enumerate().rev() {
        match byte {
            b'>' => depth += 1,
            b'<' => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (index, byte) in text.bytes().enumerate().skip(open) {
        match byte {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = r#"#include <cstdio>
#include <iostream>
#include "helper_cuda.h"
#define HD __host__ __device__

// A comment with a { brace
namespace ops {
HD inline float square(float x) { return x * x; }
}

template <typename T, int BLOCK>
__global__ void __launch_bounds__(BLOCK) reduce(const T *in, T *out, int n)
{
    __shared__ T partial[BLOCK];
    const char *text = "}";
    out[0] = in[0];
}

__constant__ float weights[3] = {1.0f, 2.0f, 3.0f};

struct Pair { int a; int b; };

extern "C" {
__global__ void plain(int *x) { x[0] = '{'; }
}

static void check(cudaError_t error, const char *file, int line)
{
    if (error != cudaSuccess) { std::cerr << file << line; exit(1); }
}

void cpu_reference(const float *in, float *out, int n);

#ifndef __CUDACC_RTC__
int helper() { return 1'000; }
#endif

int main(int argc, char **argv)
{
    reduce<float, 256><<<1, 256>>>(nullptr, nullptr, 0);
    return 0;
}
"#;

    #[test]
    fn functions_are_found_with_kinds_names_and_lines() {
        let scan = scan(PROGRAM);
        let summary: Vec<_> = scan
            .functions
            .iter()
            .map(|f| (f.kind, f.name.as_str(), f.lines, f.defined))
            .collect();
        assert_eq!(
            summary,
            [
                (FunctionKind::Device, "ops::square", (8, 8), true),
                (FunctionKind::Kernel, "reduce", (11, 17), true),
                (FunctionKind::Kernel, "plain", (24, 24), true),
                (FunctionKind::Host, "check", (27, 30), true),
                (FunctionKind::Host, "cpu_reference", (32, 32), false),
                (FunctionKind::Host, "main", (38, 42), true),
            ]
        );
        let reduce = &scan.functions[1];
        assert_eq!(
            reduce.template.as_deref(),
            Some("template <typename T, int BLOCK>")
        );
        assert_eq!(reduce.params, "const T *in, T *out, int n");
        assert_eq!(
            reduce.signature(),
            "template <typename T, int BLOCK> reduce(const T *in, T *out, int n)"
        );
        let includes: Vec<_> = scan
            .includes
            .iter()
            .map(|i| (i.name.as_str(), i.angled, i.line))
            .collect();
        assert_eq!(
            includes,
            [
                ("cstdio", true, 1),
                ("iostream", true, 2),
                ("helper_cuda.h", false, 3)
            ]
        );
    }

    #[test]
    fn the_device_part_keeps_every_line_and_blanks_the_host_code() {
        let scan = scan(PROGRAM);
        let part = device_part(PROGRAM, &scan, |include| include.name == "cstdio");
        assert_eq!(part.source.lines().count(), PROGRAM.lines().count());
        // A left-out C++ header gives way to the standard names it brings, on its own line;
        // every other line keeps its length, so columns stay where they were.
        for (number, (kept, original)) in part.source.lines().zip(PROGRAM.lines()).enumerate() {
            if number == 1 {
                assert_eq!(kept, "#include <__racetrack_std.h>");
            } else {
                assert_eq!(kept.len(), original.len(), "line {}", number + 1);
            }
        }
        let left: Vec<String> = part.left_out.iter().map(ToString::to_string).collect();
        assert_eq!(
            left,
            [
                "#include <iostream> (line 2)",
                "#include \"helper_cuda.h\" (line 3)",
                "check (lines 27–30)",
                "the declaration of cpu_reference (line 32)",
                "main (lines 38–42)",
            ]
        );
        for kept in [
            "#include <cstdio>",
            "reduce(const T *in",
            "__constant__ float",
            "int helper()",
        ] {
            assert!(part.source.contains(kept), "{kept} was blanked");
        }
        for gone in [
            "iostream",
            "helper_cuda",
            "cudaError_t",
            "<<<",
            "int main",
            "cpu_reference",
        ] {
            assert!(!part.source.contains(gone), "{gone} is still there");
        }
        let line = |n: usize| {
            part.source
                .lines()
                .nth(n - 1)
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(line(12), PROGRAM.lines().nth(11).unwrap_or_default());
        assert!(line(40).trim().is_empty());
    }

    #[test]
    fn a_file_without_host_functions_is_left_as_it_is() {
        let source = "#include \"mine.h\"\n__global__ void k(int *x) { x[0] = 1; }\n";
        let part = device_part(source, &scan(source), |_| false);
        assert_eq!(part.source, source);
        assert!(part.left_out.is_empty());
    }

    #[test]
    fn host_variables_are_left_out_and_device_ones_and_constants_kept() {
        let source = "unsigned char *d_in, *d_out;\nstatic int runs = 0;\nint table[2] = {1, 2};\n\
const int N = 4;\n__device__ int hits;\n__constant__ float k[2];\ntypedef float real;\n\
__global__ void k2(int *x) { x[0] = N; }\nint main() { return 0; }\n";
        let scan = scan(source);
        let names: Vec<_> = scan
            .host_variables
            .iter()
            .map(|v| (v.names.as_str(), v.lines))
            .collect();
        assert_eq!(
            names,
            [("d_in, d_out", (1, 1)), ("runs", (2, 2)), ("table", (3, 3))]
        );
        let part = device_part(source, &scan, |_| true);
        for kept in [
            "const int N",
            "__device__ int hits",
            "__constant__",
            "typedef float",
        ] {
            assert!(part.source.contains(kept), "{kept} was blanked");
        }
        for gone in ["d_in", "runs", "table"] {
            assert!(!part.source.contains(gone), "{gone} is still there");
        }
    }

    #[test]
    fn windows_line_endings_continue_a_macro() {
        let source = "#define CHECK(a) { \\\r\n  if (!(a)) { \\\r\n    exit(1); }}\r\n__global__ void k(int *x) { x[0] = 1; }\r\n";
        let scan = scan(source);
        let names: Vec<_> = scan
            .functions
            .iter()
            .map(|f| (f.kind, f.name.as_str()))
            .collect();
        assert_eq!(names, [(FunctionKind::Kernel, "k")]);
    }

    #[test]
    fn guarded_host_code_and_if_0_are_not_scanned() {
        let source = "#if !defined(__CUDACC_RTC__)\nint main() { {\n#endif\n#if 0\n}\n#else\n__global__ void k() {}\n#endif\n";
        let scan = scan(source);
        let names: Vec<_> = scan
            .functions
            .iter()
            .map(|f| (f.kind, f.name.as_str()))
            .collect();
        assert_eq!(names, [(FunctionKind::Kernel, "k")]);
    }

    #[test]
    fn overloads_operators_and_variables_are_told_apart() {
        let source = "__global__ void scale(float *x, int n) {}\n__global__ void scale(float *x, float f) {}\n\
__device__ float2 operator+(float2 a, float2 b) { return a; }\nint table[4] = {1, 2, 3, 4};\ndim3 grid(16);\n\
template <> __global__ void reduce<float>(float *x);\ntypedef void (*fn)(int);\n\
template <typename T>\n    requires(sizeof(T) == 4)\n__global__ void twice(T *x) {}\n";
        let scan = scan(source);
        let names: Vec<_> = scan
            .functions
            .iter()
            .map(|f| (f.kind, f.name.as_str(), f.params.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                (FunctionKind::Kernel, "scale", "float *x, int n"),
                (FunctionKind::Kernel, "scale", "float *x, float f"),
                (FunctionKind::Device, "operator+", "float2 a, float2 b"),
                (FunctionKind::Host, "grid", "16"),
                (FunctionKind::Kernel, "reduce<float>", "float *x"),
                (FunctionKind::Kernel, "twice", "T *x"),
            ]
        );
    }

    const CLASSES: &str = r#"#define NO_COPY(T) T(const T &) = delete;
struct Lock {
    int *mutex;
  public:
    Lock(void) : mutex(nullptr), spins{0} { cudaMalloc(&mutex, 4); }
    ~Lock(void) { cudaFree(mutex); }
    NO_COPY(Lock)
    int spins{0};
    static int count();
    constexpr int width() const { return 4; }
    Lock(Lock &&) = default;
    virtual void show() const = 0;
    friend std::ostream &operator<<(std::ostream &out, const Lock &lock) { return out; }
    __device__ void lock(void) { while (atomicCAS(mutex, 0, 1) != 0); }
    __host__ __device__ int twice(int x) const { return 2 * x; }
    struct Inner {
        void host_only() {}
        __device__ int device_side() { return 1; }
    } inner;
    template <typename C> static char probe(decltype(&C::lock));
};
template <typename T> class alignas(16) Box : public Base<T> {
    T value;
    Box(T v) : value{v} {}
    __device__ T get() const { return value; }
};
"#;

    #[test]
    fn host_members_of_classes_are_told_from_device_ones() {
        let scan = scan(CLASSES);
        let members: Vec<(&str, bool, bool)> = scan
            .host_members
            .iter()
            .map(|member| (member.name.as_str(), member.defined, member.annotate))
            .collect();
        assert_eq!(
            members,
            [
                ("Lock::Lock", true, false),
                ("Lock::~Lock", true, false),
                ("Lock::count", false, true),
                ("Lock::width", true, true),
                ("Lock::show", false, true),
                ("Lock::operator<<", true, false),
                ("Lock::Inner::host_only", true, false),
                ("Lock::probe", false, true),
                ("Box::Box", true, false),
            ]
        );
        let part = device_part(CLASSES, &scan, |_| true);
        assert_eq!(part.source.lines().count(), CLASSES.lines().count());
        for kept in [
            "NO_COPY(Lock)",
            "int spins{0};",
            "Lock(Lock &&) = default;",
            "__device__ void lock(void)",
            "__host__ __device__ int twice",
            "__host__ __device__ static int count();",
            "__host__ __device__ constexpr int width()",
            "__host__ __device__ virtual void show() const = 0;",
            "template <typename C> __host__ __device__ static char probe",
            "__device__ T get() const",
            "} inner;",
        ] {
            assert!(
                part.source.contains(kept),
                "{kept} was not kept:\n{}",
                part.source
            );
        }
        for gone in [
            "cudaMalloc",
            "cudaFree",
            "std::ostream",
            "host_only",
            "value{v}",
        ] {
            assert!(
                !part.source.contains(gone),
                "{gone} is still there:\n{}",
                part.source
            );
        }
    }
}
