//! Rooms whose arrows point one way (issue 34): no files of `emu/src` import each other in a loop.
//!
//! The graph has a file for each node and an edge from a file to every other file it names: a
//! `crate::`, `super::` or `self::` path (in a `use` tree or anywhere in the code, `$crate::` in a
//! macro too), a path that starts with one of its own module's children (`child::X`), and a
//! `mod child;` declaration (the parent file names its child's file). A path goes to the file of
//! the longest module it walks through: `crate::exec::plan::Rounds` names `exec/plan.rs`,
//! `crate::exec::Rounds` names `exec/mod.rs` (whatever that file re-exports), `crate::spin_for`
//! names `lib.rs`. So a `mod.rs` that declares its rooms and also defines (or re-exports) what they
//! use is in a loop with them: it must stay a table of contents. Comments and string literals are
//! skipped; `super::` inside an inline `mod tests { … }` is the file itself.

// Test helpers panic with context on purpose; a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Loops not untangled yet, each exactly as the test finds it (its files, sorted). The test fails
/// on any other loop, and on a listed one that has changed or gone, so this list only shrinks.
const NOT_YET: &[&[&str]] = &[];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Other,
}

/// Rust tokens, as far as paths and braces need: comments, strings, chars and numbers are dropped
/// (a number or punctuation is `Other`).
fn tokens(src: &str) -> Vec<Tok> {
    let s: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| s.get(i).copied().unwrap_or('\0');
    while i < s.len() {
        let c = s[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if s[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && at(i + 1) == 'r')) && {
            let j = if c == 'b' { i + 2 } else { i + 1 };
            let mut k = j;
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        } {
            // A raw string: r"…", r#"…"#, br"…".
            let mut k = if c == 'b' { i + 2 } else { i + 1 };
            let mut hashes = 0;
            while at(k) == '#' {
                hashes += 1;
                k += 1;
            }
            k += 1;
            loop {
                if k >= s.len() {
                    break;
                }
                if s[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#') {
                    k += 1 + hashes;
                    break;
                }
                k += 1;
            }
            i = k;
            out.push(Tok::Other);
        } else if c == '"' || (c == 'b' && at(i + 1) == '"') {
            i += if c == 'b' { 2 } else { 1 };
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(Tok::Other);
        } else if c == '\'' || (c == 'b' && at(i + 1) == '\'') {
            // A char literal ('a', '\n', '\u{1F600}', b'x') or a lifetime ('a).
            let j = if c == 'b' { i + 1 } else { i };
            if at(j + 1) == '\\' {
                let mut k = j + 3; // past the escaped character
                while k < s.len() && s[k] != '\'' {
                    k += 1;
                }
                i = k + 1;
            } else if at(j + 2) == '\'' {
                i = j + 3;
            } else {
                i = j + 1; // a lifetime: its name follows as an identifier
            }
            out.push(Tok::Other);
        } else if c.is_alphabetic() || c == '_' {
            let start = if c == 'r' && at(i + 1) == '#' {
                i + 2
            } else {
                i
            };
            let mut k = start;
            while k < s.len() && (s[k].is_alphanumeric() || s[k] == '_') {
                k += 1;
            }
            out.push(Tok::Ident(s[start..k].iter().collect()));
            i = k;
        } else if c.is_ascii_digit() {
            while i < s.len() && (s[i].is_alphanumeric() || s[i] == '_' || s[i] == '.') {
                // `1..n` is a range, not a float.
                if s[i] == '.' && at(i + 1) == '.' {
                    break;
                }
                i += 1;
            }
            out.push(Tok::Other);
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Tok::Colons);
            i += 2;
        } else {
            out.push(match c {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ';' => Tok::Semi,
                ',' => Tok::Comma,
                '*' => Tok::Star,
                _ => Tok::Other,
            });
            i += 1;
        }
    }
    out
}

/// `lib.rs` → `[]`, `exec/mod.rs` → `[exec]`, `exec/plan.rs` → `[exec, plan]`.
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The paths a `use` tree names, from `toks[*i]` (just after `use`) to its `;`.
fn use_tree(toks: &[Tok], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(name)) if name == "as" => {
                *i += 2; // `as name`
            }
            Some(Tok::Ident(name)) => {
                path.push(name.clone());
                *i += 1;
            }
            Some(Tok::Colons) => *i += 1,
            Some(Tok::Star) => *i += 1, // a glob names the module itself
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    use_tree(toks, i, path.clone(), out);
                    match toks.get(*i) {
                        Some(Tok::Comma) => *i += 1,
                        Some(Tok::Close) => {
                            *i += 1;
                            break;
                        }
                        _ => return,
                    }
                    if toks.get(*i) == Some(&Tok::Close) {
                        *i += 1;
                        break;
                    }
                }
                return;
            }
            _ => {
                if !path.is_empty() {
                    out.push(path);
                }
                return;
            }
        }
    }
}

/// Edges of the file graph: for every file (path relative to `src/`), the other files it names.
fn graph(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    // Every module, file or inline, and the file it lives in.
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut parsed = BTreeMap::new();
    for (file, src) in files {
        let toks = tokens(src);
        modules.insert(module_of(file), file.clone());
        parsed.insert(file.clone(), toks);
    }
    // Inline modules, found with the brace depth they open at.
    let mut inline: Vec<(Vec<String>, String)> = Vec::new();
    for (file, toks) in &parsed {
        let mut stack: Vec<(Vec<String>, usize)> = vec![(module_of(file), 0)];
        let mut depth = 0;
        for (k, t) in toks.iter().enumerate() {
            match t {
                Tok::Open => depth += 1,
                Tok::Close => {
                    depth -= 1;
                    if stack.len() > 1 && stack.last().unwrap().1 == depth {
                        stack.pop();
                    }
                }
                Tok::Ident(m) if m == "mod" => {
                    if let (Some(Tok::Ident(name)), Some(Tok::Open)) =
                        (toks.get(k + 1), toks.get(k + 2))
                    {
                        let mut path = stack.last().unwrap().0.clone();
                        path.push(name.clone());
                        inline.push((path.clone(), file.clone()));
                        stack.push((path, depth)); // the depth it closes back to
                    }
                }
                _ => {}
            }
        }
    }
    for (path, file) in inline {
        modules.entry(path).or_insert(file);
    }

    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, toks) in &parsed {
        let named = edges.entry(file.clone()).or_default();
        let mut stack: Vec<(Vec<String>, usize)> = vec![(module_of(file), 0)];
        let mut depth = 0;
        let mut k = 0;
        while k < toks.len() {
            let cur = stack.last().unwrap().0.clone();
            let mut paths: Vec<Vec<String>> = Vec::new();
            match &toks[k] {
                Tok::Open => depth += 1,
                Tok::Close => {
                    depth -= 1;
                    if stack.len() > 1 && stack.last().unwrap().1 == depth {
                        stack.pop();
                    }
                }
                Tok::Ident(m) if m == "mod" => {
                    if let Some(Tok::Ident(name)) = toks.get(k + 1) {
                        let mut path = cur.clone();
                        path.push(name.clone());
                        match toks.get(k + 2) {
                            Some(Tok::Open) => {
                                stack.push((path, depth)); // the depth it closes back to
                                depth += 1;
                                k += 3;
                                continue;
                            }
                            // `mod child;`: the parent names its child's file.
                            Some(Tok::Semi) => paths.push(vec!["self".into(), name.clone()]),
                            _ => {}
                        }
                    }
                }
                Tok::Ident(u) if u == "use" => {
                    let mut i = k + 1;
                    use_tree(toks, &mut i, Vec::new(), &mut paths);
                    k = i.max(k + 1);
                }
                Tok::Ident(first)
                    if (k == 0 || toks[k - 1] != Tok::Colons)
                        && toks.get(k + 1) == Some(&Tok::Colons) =>
                {
                    let mut path = vec![first.clone()];
                    let mut i = k + 1;
                    while let (Some(Tok::Colons), Some(Tok::Ident(seg))) =
                        (toks.get(i), toks.get(i + 1))
                    {
                        path.push(seg.clone());
                        i += 2;
                    }
                    paths.push(path);
                    k = i - 1; // the last segment
                }
                _ => {}
            }
            for p in paths {
                if let Some(target) = resolve(&cur, &p, &modules).filter(|t| t != file) {
                    named.insert(target);
                }
            }
            k += 1;
        }
    }
    edges
}

/// The file a path (as written in module `cur`) goes to, if it is one of ours.
fn resolve(
    cur: &[String],
    path: &[String],
    modules: &BTreeMap<Vec<String>, String>,
) -> Option<String> {
    let mut base: Vec<String>;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base = Vec::new();
            rest = &path[1..];
        }
        Some("super") => {
            base = cur.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some("self") => {
            base = cur.to_vec();
            rest = &path[1..];
        }
        Some(first) => {
            // A path that starts with a child of this module (2018 paths in `use` and in code).
            let mut child = cur.to_vec();
            child.push(first.to_string());
            if !modules.contains_key(&child) {
                return None;
            }
            base = cur.to_vec();
        }
        None => return None,
    }
    let mut full = base;
    full.extend(rest.iter().cloned());
    (0..=full.len())
        .rev()
        .find_map(|n| modules.get(&full[..n]))
        .cloned()
}

/// Strongly connected components with more than one file, each sorted, in order.
fn loops(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// One cycle through `comp`'s first file, as `a.rs → b.rs → a.rs`.
fn a_cycle(edges: &BTreeMap<String, BTreeSet<String>>, comp: &[String]) -> String {
    let start = &comp[0];
    let inside: BTreeSet<&String> = comp.iter().collect();
    // Breadth-first from `start` back to it, within the component.
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in edges.get(v).into_iter().flatten() {
            if !inside.contains(w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.clone(), v.clone()];
                let mut x = v;
                while x != start {
                    x = came_from[x];
                    path.push(x.clone());
                }
                path.reverse();
                return path.join(" → ");
            }
            if !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    comp.join(", ")
}

fn read_tree(dir: &Path, rel: &str, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let rel = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if path.is_dir() {
            read_tree(&path, &rel, out);
        } else if rel.ends_with(".rs") {
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

fn src_loops() -> (BTreeMap<String, BTreeSet<String>>, Vec<Vec<String>>) {
    let mut files = BTreeMap::new();
    read_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        "",
        &mut files,
    );
    assert!(files.contains_key("lib.rs"), "emu/src/lib.rs not found");
    let edges = graph(&files);
    let found = loops(&edges);
    (edges, found)
}

#[test]
fn no_files_of_emu_src_import_each_other_in_a_loop() {
    let (edges, found) = src_loops();
    let allowed: Vec<Vec<String>> = NOT_YET
        .iter()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .collect();
    // `cargo test -p ptx-emu --test rooms -- --nocapture` prints what it found, as NOT_YET reads.
    for comp in &found {
        println!("{:?}, // {}", comp, a_cycle(&edges, comp));
    }
    let mut problems = Vec::new();
    for comp in &found {
        if !allowed.contains(comp) {
            problems.push(format!(
                "a loop of {} files: {}\n  for instance {}",
                comp.len(),
                comp.join(", "),
                a_cycle(&edges, comp)
            ));
        }
    }
    for comp in &allowed {
        if !found.contains(comp) {
            problems.push(format!(
                "NOT_YET lists a loop that is no longer there as listed (untangled or changed): {}",
                comp.join(", ")
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "files of emu/src import each other in a loop:\n{}",
        problems.join("\n")
    );
}

/// The finder itself: each way a loop can be made is found, and a tree without one passes.
#[test]
fn the_finder_sees_every_kind_of_loop() {
    let tree = |files: &[(&str, &str)]| -> Vec<Vec<String>> {
        let files = files
            .iter()
            .map(|(f, s)| (f.to_string(), s.to_string()))
            .collect();
        loops(&graph(&files))
    };
    let names = |l: &[&str]| -> Vec<String> { l.iter().map(|s| s.to_string()).collect() };
    // A mod.rs that declares its child and defines what the child uses.
    let found = tree(&[
        ("lib.rs", "mod a;"),
        ("a/mod.rs", "mod b;\npub(crate) struct Y;"),
        ("a/b.rs", "use super::Y;"),
    ]);
    assert_eq!(found, vec![names(&["a/b.rs", "a/mod.rs"])]);
    // The same through a glob, and through a re-export at the crate's root.
    let found = tree(&[
        ("lib.rs", "mod a;\nfn helper() {}"),
        ("a.rs", "fn f() { crate::helper() }"),
    ]);
    assert_eq!(found, vec![names(&["a.rs", "lib.rs"])]);
    let found = tree(&[
        ("lib.rs", "mod a;"),
        ("a/mod.rs", "mod b;\nmod c;\npub(crate) use c::Z;"),
        ("a/b.rs", "use super::*;"),
        (
            "a/c.rs",
            "pub(crate) struct Z; // super::b::X in a comment is no path",
        ),
    ]);
    assert_eq!(found, vec![names(&["a/b.rs", "a/mod.rs"])]);
    // Two siblings, one through a use tree and one through a path in code.
    let found = tree(&[
        ("lib.rs", "mod ir;\nmod p;\nmod q;"),
        ("ir.rs", ""),
        ("p.rs", "use crate::{ir, q::{self, T}};"),
        (
            "q.rs",
            "fn f() -> u32 { let s = \"crate::nothing\"; crate::p::g() }",
        ),
    ]);
    assert_eq!(found, vec![names(&["p.rs", "q.rs"])]);
    // A parent's `child::X` in code, with the child using `super::Y`.
    let found = tree(&[
        ("lib.rs", "mod m;"),
        ("m/mod.rs", "pub(crate) struct Y; fn f() { c::go() }"),
        ("m/c.rs", "pub(crate) fn go() -> super::Y { super::Y }"),
    ]);
    assert_eq!(found, vec![names(&["m/c.rs", "m/mod.rs"])]);
    // `super::` inside an inline test module is the file itself; a table of contents is fine.
    let found = tree(&[
        ("lib.rs", "mod m;\npub use m::Y;"),
        ("m/mod.rs", "mod y;\nmod z;\npub use y::Y;"),
        (
            "m/y.rs",
            "pub struct Y;\n#[cfg(test)]\nmod tests { use super::*; fn t() { let _ = super::Y; let _ = '\\''; } }",
        ),
        (
            "m/z.rs",
            "pub(crate) struct W(super::y::Y, &'static str, char);\nconst C: char = '{';",
        ),
    ]);
    assert!(found.is_empty(), "{found:?}");
}
