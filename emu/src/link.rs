//! Linking the PTX of several translation units into one module, as nvlink links their code
//! when a program is built with `-rdc=true`: a kernel of one unit may launch or call what
//! another defines (`.extern .entry`, `.extern .func`, `.extern .global`).
//!
//! The units' tokens are put one after another, as if their texts were (so PTX line numbers
//! count on through the units), after four changes that make one module of them: a unit's own
//! (not `.visible`) names that another unit also declares get the unit's number (`$str` is in
//! every unit); an `.extern` variable that a unit defines is dropped, so the definition is the
//! only one; a `.weak` definition (an inline or template function every unit emits) is kept
//! once; and the units' `.file` numbers are moved apart, so `.loc` lines name the right file.

use std::collections::{HashMap, HashSet};

use crate::error::{EmuError, parse_err};
use crate::lex::{Tok, Token, lex};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Linkage {
    /// No linkage keyword: the unit's own.
    Local,
    Visible,
    Extern,
    Weak,
}

/// One module-level declaration: its name, its linkage, whether it defines (a body, or a
/// variable that is not `.extern`), and its tokens.
struct Decl {
    name: String,
    linkage: Linkage,
    defines: bool,
    tokens: std::ops::Range<usize>,
}

fn ident(t: &Token) -> Option<&str> {
    match &t.tok {
        Tok::Ident(s) => Some(s),
        _ => None,
    }
}

fn is_p(t: Option<&Token>, c: char) -> bool {
    matches!(t, Some(Token { tok: Tok::P(p), .. }) if *p == c)
}

/// The index just past the `close` that matches the `open` at `at`.
fn past_matching(toks: &[Token], at: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    let mut i = at;
    while i < toks.len() {
        if is_p(toks.get(i), open) {
            depth += 1;
        } else if is_p(toks.get(i), close) {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return i + 1;
            }
        }
        i += 1;
    }
    toks.len()
}

/// The module-level declarations of one unit's tokens.
fn declarations(toks: &[Token]) -> Vec<Decl> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let start = i;
        let mut linkage = Linkage::Local;
        loop {
            match toks.get(i).and_then(ident) {
                Some(".visible") => linkage = Linkage::Visible,
                Some(".extern") => linkage = Linkage::Extern,
                Some(".weak" | ".common") => linkage = Linkage::Weak,
                _ => break,
            }
            i += 1;
        }
        match toks.get(i).and_then(ident) {
            Some(".func" | ".entry") => {
                i += 1;
                if is_p(toks.get(i), '(') {
                    i = past_matching(toks, i, '(', ')');
                }
                let name = toks.get(i).and_then(ident).unwrap_or_default().to_string();
                while i < toks.len() && !is_p(toks.get(i), '{') && !is_p(toks.get(i), ';') {
                    i = if is_p(toks.get(i), '(') {
                        past_matching(toks, i, '(', ')')
                    } else {
                        i + 1
                    };
                }
                let defines = is_p(toks.get(i), '{');
                i = if defines {
                    past_matching(toks, i, '{', '}')
                } else {
                    i + 1
                };
                out.push(Decl {
                    name,
                    linkage,
                    defines,
                    tokens: start..i,
                });
            }
            Some(".global" | ".const" | ".shared") => {
                let mut name = String::new();
                while i < toks.len() && !is_p(toks.get(i), ';') {
                    if name.is_empty()
                        && let Some(s) = toks.get(i).and_then(ident)
                        && !s.starts_with('.')
                    {
                        name = s.to_string();
                    }
                    i += 1;
                }
                i += 1;
                out.push(Decl {
                    name,
                    linkage,
                    defines: linkage != Linkage::Extern,
                    tokens: start..i,
                });
            }
            Some(".section") => {
                i = past_matching(toks, i, '{', '}');
            }
            _ => i = start + 1,
        }
    }
    out
}

/// The `.file` numbers a unit uses, as the largest.
fn largest_file(toks: &[Token]) -> u64 {
    toks.windows(2)
        .filter(|w| ident(&w[0]) == Some(".file"))
        .filter_map(|w| match &w[1].tok {
            Tok::Num(n) => n.parse::<u64>().ok(),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// One module's tokens from several units' PTX texts (see the module's comment).
pub(crate) fn link_tokens(units: &[&str]) -> Result<Vec<Token>, EmuError> {
    let lexed: Vec<Vec<Token>> = units.iter().map(|u| lex(u)).collect::<Result<_, _>>()?;
    let decls: Vec<Vec<Decl>> = lexed.iter().map(|t| declarations(t)).collect();
    // Which unit's definition of each name wins: a visible or weak one, the first.
    let mut defined: HashMap<&str, (usize, Linkage)> = HashMap::new();
    for (u, list) in decls.iter().enumerate() {
        for d in list
            .iter()
            .filter(|d| d.defines && d.linkage != Linkage::Local)
        {
            match defined.get(d.name.as_str()) {
                Some(&(_, Linkage::Visible)) if d.linkage == Linkage::Visible => {
                    return Err(parse_err(
                        lexed[u].get(d.tokens.start).map_or(0, |t| t.line),
                        format!(
                            "`{}` is defined in two translation units (as nvlink would say: multiple definition)",
                            d.name
                        ),
                    ));
                }
                Some(&(_, Linkage::Visible)) => {}
                Some(_) if d.linkage == Linkage::Weak => {}
                _ => {
                    defined.insert(d.name.as_str(), (u, d.linkage));
                }
            }
        }
    }
    let mut out = Vec::new();
    let (mut line_offset, mut file_offset) = (0u32, 0u64);
    for (u, (toks, list)) in lexed.iter().zip(&decls).enumerate() {
        let mut renamed: HashMap<&str, String> = HashMap::new();
        let mut dropped: Vec<std::ops::Range<usize>> = Vec::new();
        let elsewhere: HashSet<&str> = decls
            .iter()
            .enumerate()
            .filter(|&(v, _)| v != u)
            .flat_map(|(_, l)| l.iter().map(|d| d.name.as_str()))
            .collect();
        for d in list {
            match d.linkage {
                Linkage::Local if d.defines && elsewhere.contains(d.name.as_str()) => {
                    renamed.insert(d.name.as_str(), format!("{}$unit{u}", d.name));
                }
                Linkage::Extern if !d.defines && defined.contains_key(d.name.as_str()) => {
                    let is_variable = toks
                        .get(d.tokens.clone())
                        .is_some_and(|t| t.iter().any(|t| ident(t) == Some(".global")));
                    if is_variable {
                        dropped.push(d.tokens.clone());
                    }
                }
                Linkage::Weak | Linkage::Visible
                    if d.defines && defined.get(d.name.as_str()).is_some_and(|&(w, _)| w != u) =>
                {
                    dropped.push(d.tokens.clone());
                }
                _ => {}
            }
        }
        let mut i = 0;
        let mut after_loc = 0u8;
        while i < toks.len() {
            if let Some(range) = dropped.iter().find(|r| r.start == i) {
                i = range.end;
                continue;
            }
            let mut t = toks[i].clone();
            t.line += line_offset;
            // `.file N`, `.loc N …` and `inlined_at N …` name a file by its number.
            let names_file = after_loc == 1;
            after_loc = match ident(&toks[i]) {
                Some(".file" | ".loc" | "inlined_at") => 1,
                _ => 0,
            };
            if names_file
                && file_offset > 0
                && let Tok::Num(n) = &t.tok
                && let Ok(n) = n.parse::<u64>()
            {
                t.tok = Tok::Num((n + file_offset).to_string());
            }
            if let Tok::Ident(s) = &t.tok
                && let Some(new) = renamed.get(s.as_str())
            {
                t.tok = Tok::Ident(new.clone());
            }
            out.push(t);
            i += 1;
        }
        line_offset += units[u].lines().count() as u32 + 1;
        file_offset += largest_file(toks);
    }
    Ok(out)
}
