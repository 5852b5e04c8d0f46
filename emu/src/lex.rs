//! PTX tokenizer. PTX is a small regular language: identifiers (with dots, `%` and `$`), numbers,
//! strings and punctuation. Every token keeps its line so errors and `.loc`-less instructions can
//! name a PTX line.

use crate::error::{EmuError, parse_err};

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Num(String),
    Str(String),
    P(char),
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: u32,
}

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '%' || c == '.'
}

fn ident_cont(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.' || c == ':'
}

pub(crate) fn lex(src: &str) -> Result<Vec<Token>, EmuError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0usize;
    let mut line = 1u32;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            loop {
                if i >= chars.len() {
                    return Err(parse_err(line, "unterminated /* comment"));
                }
                if chars[i] == '\n' {
                    line += 1;
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        if c == '"' {
            let start_line = line;
            i += 1;
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => return Err(parse_err(start_line, "unterminated string")),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\n') => return Err(parse_err(start_line, "newline in string")),
                    Some(&ch) => {
                        s.push(ch);
                        i += 1;
                    }
                }
            }
            out.push(Token {
                tok: Tok::Str(s),
                line: start_line,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let mut s = String::new();
            while i < chars.len() {
                let ch = chars[i];
                let exp_sign = (ch == '-' || ch == '+')
                    && matches!(s.chars().last(), Some('e' | 'E'))
                    && !s.starts_with("0x")
                    && !s.starts_with("0f")
                    && !s.starts_with("0d")
                    && !s.starts_with("0X")
                    && !s.starts_with("0F")
                    && !s.starts_with("0D");
                if ch.is_ascii_alphanumeric() || ch == '.' || exp_sign {
                    s.push(ch);
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Token {
                tok: Tok::Num(s),
                line,
            });
            continue;
        }
        if ident_start(c) {
            let mut s = String::new();
            s.push(c);
            i += 1;
            while i < chars.len() && ident_cont(chars[i]) {
                // `::` appears in cache-hint modifiers (`.L1::evict_last`) but a single `:` ends a label.
                if chars[i] == ':' {
                    if chars.get(i + 1) == Some(&':') {
                        s.push_str("::");
                        i += 2;
                        continue;
                    }
                    break;
                }
                s.push(chars[i]);
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(s),
                line,
            });
            continue;
        }
        if ",;:[]{}()+-!@|<>=".contains(c) {
            out.push(Token {
                tok: Tok::P(c),
                line,
            });
            i += 1;
            continue;
        }
        return Err(parse_err(line, format!("unexpected character {c:?}")));
    }
    Ok(out)
}

/// Parses a PTX integer literal (decimal, hex, octal, binary, optional `U` suffix).
pub(crate) fn parse_int(s: &str) -> Option<u64> {
    let s = s.strip_suffix('U').unwrap_or(s);
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()
    } else if s.len() > 1 && s.starts_with('0') && s.chars().all(|c| c.is_ascii_digit()) {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse::<u64>().ok()
    }
}

/// A float literal as an f64 value, or `None` when the text is not a float literal.
/// `0f` literals are the bits of an f32, `0d` of an f64.
pub(crate) fn parse_float(s: &str) -> Option<f64> {
    if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
        if h.len() != 8 {
            return None;
        }
        return u32::from_str_radix(h, 16)
            .ok()
            .map(|b| f32::from_bits(b) as f64);
    }
    if let Some(h) = s.strip_prefix("0d").or_else(|| s.strip_prefix("0D")) {
        if h.len() != 16 {
            return None;
        }
        return u64::from_str_radix(h, 16).ok().map(f64::from_bits);
    }
    if s.contains('.') || ((s.contains('e') || s.contains('E')) && !s.starts_with("0x")) {
        return s.parse::<f64>().ok();
    }
    None
}
