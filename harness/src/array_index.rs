//! C indices for arrays of more than one dimension: a report says `As[1][0]` where PTX, whose
//! arrays are flat, knows only `As[16]`. The dimensions come from the declaration in the `.cu`
//! source (`__shared__ float As[TILE][TILE + 1];`), with `#define` and `const int` names
//! evaluated, in the file, in the headers it includes and from `-D`; in a template, its
//! parameters (`__shared__ T tile[B][B]`) take the arguments of the instance that ran. Where
//! any of that cannot be read, the flat index stays.

use ptx_emu::Finding;

use crate::check::front::{names, source};
use crate::check::{CParam, CType};
use crate::kernel::KernelSource;

/// Gives every finding's location on a multi-dimensional array of `kernel`'s file its C index.
pub fn name_array_indices(findings: &mut [Finding], kernel: &KernelSource) {
    if findings.iter().all(|finding| finding.location.is_none()) {
        return;
    }
    let code = Code::of(kernel);
    for finding in findings {
        let Some(location) = finding.location.as_mut() else {
            continue;
        };
        let offset = location.index * i64::from(location.element_bytes);
        location.c_index = code.c_index(&location.label, offset);
    }
}

/// [`Code::c_index`] for a file alone: no headers, no `-D`, no template's instance.
pub fn c_index(source: &str, name: &str, offset: i64) -> Option<String> {
    Code::new(source).c_index(name, offset)
}

/// What gives the names in a declaration their values.
struct Code {
    /// The kernel's file, its comments blanked so a name in one is not taken for a declaration.
    file: String,
    /// The headers NVRTC read from memory (the user's own among them), comments blanked.
    headers: Vec<String>,
    /// `-D NAME=VALUE` (`NAME` alone is 1, as for the compiler).
    defines: Vec<(String, String)>,
    /// The template that ran, if one did: the lines it spans and its arguments by parameter.
    template: Option<Instance>,
}

struct Instance {
    lines: (u32, u32),
    arguments: Vec<(String, String)>,
}

impl Code {
    fn new(source: &str) -> Self {
        Self {
            file: without_comments(source),
            headers: Vec::new(),
            defines: Vec::new(),
            template: None,
        }
    }

    fn of(kernel: &KernelSource) -> Self {
        let mut code = Self::new(kernel.source);
        let Some(own) = kernel.own else {
            return code;
        };
        code.headers = own
            .extras
            .headers
            .iter()
            .map(|(_, text)| without_comments(text))
            .collect();
        code.defines = own
            .extras
            .options
            .iter()
            .filter_map(|option| option.strip_prefix("-D"))
            .map(|define| match define.split_once('=') {
                Some((name, value)) => (name.trim().to_string(), value.to_string()),
                None => (define.trim().to_string(), "1".to_string()),
            })
            .collect();
        code.template = names::instance_arguments(&own.symbol).and_then(|(base, arguments)| {
            let scan = source::scan(kernel.source);
            let template = scan
                .kernels()
                .find(|function| function.name == base && function.template.is_some())?;
            let params = names::template_params(template.template.as_deref()?);
            (params.len() == arguments.len()).then(|| Instance {
                lines: template.lines,
                arguments: params
                    .into_iter()
                    .map(|param| param.name)
                    .zip(arguments)
                    .collect(),
            })
        });
        code
    }

    /// `[1][0]` for the element `offset` bytes into the array `name` that the file declares
    /// with two or more dimensions; past its end, the first index goes on counting, as C's
    /// does (`[2][0]` just past `buf[2][1024]`, the index a learner who swapped two wrote).
    /// `None` for a one-dimensional array, an offset before the array or not on an element, or
    /// a declaration this cannot read.
    fn c_index(&self, name: &str, offset: i64) -> Option<String> {
        let declared = self.declaration(name)?;
        if declared.dims.is_empty() {
            return (offset == 0).then(String::new);
        }
        if declared.dims.len() < 2 || offset < 0 || offset % declared.element_bytes != 0 {
            return None;
        }
        let mut flat = offset / declared.element_bytes;
        let mut indices = Vec::with_capacity(declared.dims.len());
        for dim in declared.dims[1..].iter().rev() {
            indices.push(flat % dim);
            flat /= dim;
        }
        indices.push(flat);
        Some(indices.iter().rev().map(|i| format!("[{i}]")).collect())
    }

    /// The declaration `TYPE NAME[D0][D1]…` of `name` in the file, its dimensions evaluated.
    fn declaration(&self, name: &str) -> Option<Declared> {
        let code = &self.file;
        let mut from = 0;
        while let Some(at) = code[from..].find(name) {
            let start = from + at;
            from = start + name.len();
            let before_ok = code[..start]
                .chars()
                .next_back()
                .is_none_or(|c| !is_word_char(c));
            let rest = code[from..].trim_start();
            // A `__shared__ int count;` is no array: a report names it `count`, as the code does.
            let scalar = rest.starts_with([';', '=']);
            if !before_ok || !(rest.starts_with('[') || scalar) {
                continue;
            }
            // The type is what comes before the name in the same statement.
            let statement_start = code[..start]
                .rfind([';', '{', '}', '\n'])
                .map_or(0, |i| i + 1);
            let type_text = code[statement_start..start].trim();
            if type_text.is_empty()
                || type_text.ends_with(['=', '(', ',', '[', '+', '-', '*'])
                || (scalar && !type_text.contains("__shared__"))
            {
                continue;
            }
            let line = u32::try_from(code[..start].matches('\n').count() + 1).ok()?;
            let scope = Scope {
                code: self,
                arguments: self
                    .template
                    .as_ref()
                    .filter(|template| (template.lines.0..=template.lines.1).contains(&line))
                    .map_or(&[], |template| template.arguments.as_slice()),
            };
            let type_text = type_text
                .split_whitespace()
                .filter(|word| !word.starts_with("__") && *word != "static" && *word != "extern")
                .map(|word| scope.argument(word).unwrap_or(word))
                .collect::<Vec<_>>()
                .join(" ");
            let element_bytes = match CParam::parse(&type_text).ty {
                CType::Scalar(ty) => ty.size() as i64,
                CType::Bool | CType::Char => 1,
                CType::Pointer { .. } | CType::Other => return None,
            };
            let mut dims = Vec::new();
            let mut rest = rest;
            while let Some(inner) = rest.strip_prefix('[') {
                let close = inner.find(']')?;
                dims.push(scope.evaluate(&inner[..close])?);
                rest = inner[close + 1..].trim_start();
            }
            if scalar || dims.iter().all(|dim| *dim > 0) {
                return Some(Declared {
                    element_bytes,
                    dims,
                });
            }
            return None;
        }
        None
    }
}

/// Where a declaration is: the code, and the template arguments that hold there.
struct Scope<'a> {
    code: &'a Code,
    arguments: &'a [(String, String)],
}

impl Scope<'_> {
    fn argument(&self, name: &str) -> Option<&str> {
        self.arguments
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, argument)| argument.as_str())
    }

    /// The text that gives `name` its value: a template argument, then a definition in the
    /// file, in a header, or on the command line.
    fn definition(&self, name: &str) -> Option<String> {
        if let Some(argument) = self.argument(name) {
            return Some(argument.to_string());
        }
        let code = self.code;
        std::iter::once(&code.file)
            .chain(&code.headers)
            .find_map(|text| definition(text, name))
            .or_else(|| {
                code.defines
                    .iter()
                    .find(|(defined, _)| defined == name)
                    .map(|(_, value)| value.clone())
            })
    }

    /// An array dimension: integers, `+ - * / %`, parentheses, and names that a template
    /// argument, `#define NAME value` or `const int NAME = value;` (also `constexpr`,
    /// `static const`) give a value.
    fn evaluate(&self, expression: &str) -> Option<i64> {
        let mut parser = Parser {
            tokens: tokens(expression)?,
            at: 0,
            scope: self,
            depth: 0,
        };
        let value = parser.sum()?;
        (parser.at == parser.tokens.len()).then_some(value)
    }
}

struct Declared {
    element_bytes: i64,
    dims: Vec<i64>,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The source with `//` and `/* */` comments blanked, so a name in a comment is not taken for
/// a declaration.
fn without_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    if c == '\n' {
                        out.push('\n');
                    }
                    last = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(i64),
    Name(String),
    Op(char),
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_digit() {
            let mut digits = String::new();
            while let Some(&d) = chars.peek() {
                if !is_word_char(d) {
                    break;
                }
                digits.push(d);
                chars.next();
            }
            let digits = digits.trim_end_matches(['u', 'U', 'l', 'L']);
            tokens.push(Token::Number(digits.parse().ok()?));
        } else if is_word_char(c) {
            let mut name = String::new();
            while let Some(&d) = chars.peek() {
                if !is_word_char(d) {
                    break;
                }
                name.push(d);
                chars.next();
            }
            tokens.push(Token::Name(name));
        } else if "+-*/%()".contains(c) {
            tokens.push(Token::Op(c));
            chars.next();
        } else {
            return None;
        }
    }
    Some(tokens)
}

struct Parser<'a> {
    tokens: Vec<Token>,
    at: usize,
    scope: &'a Scope<'a>,
    /// Names defined by names: stops a `#define A B` / `#define B A` loop.
    depth: u32,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(*op),
            _ => None,
        }
    }

    fn sum(&mut self) -> Option<i64> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.at += 1;
            let right = self.product()?;
            value = if op == '+' {
                value.checked_add(right)?
            } else {
                value.checked_sub(right)?
            };
        }
        Some(value)
    }

    fn product(&mut self) -> Option<i64> {
        let mut value = self.atom()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek_op() {
            self.at += 1;
            let right = self.atom()?;
            value = match op {
                '*' => value.checked_mul(right)?,
                '/' => value.checked_div(right)?,
                _ => value.checked_rem(right)?,
            };
        }
        Some(value)
    }

    fn atom(&mut self) -> Option<i64> {
        let token = self.tokens.get(self.at)?.clone();
        self.at += 1;
        match token {
            Token::Number(value) => Some(value),
            Token::Op('(') => {
                let value = self.sum()?;
                (self.peek_op() == Some(')')).then_some(())?;
                self.at += 1;
                Some(value)
            }
            Token::Op('-') => self.atom()?.checked_neg(),
            Token::Name(name) if self.depth < 8 => {
                let definition = self.scope.definition(&name)?;
                let mut inner = Parser {
                    tokens: tokens(&definition)?,
                    at: 0,
                    scope: self.scope,
                    depth: self.depth + 1,
                };
                let value = inner.sum()?;
                (inner.at == inner.tokens.len()).then_some(value)
            }
            _ => None,
        }
    }
}

/// The text that defines `name`: `#define NAME text`, or `NAME = text;` after `const`.
fn definition(code: &str, name: &str) -> Option<String> {
    for line in code.lines() {
        let line = line.trim();
        let define = line
            .strip_prefix('#')
            .and_then(|rest| rest.trim_start().strip_prefix("define"));
        if let Some(define) = define {
            let mut words = define.split_whitespace();
            if words.next() == Some(name) {
                return Some(words.collect::<Vec<_>>().join(" "));
            }
        }
    }
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some((left, right)) = statement.split_once('=') else {
            continue;
        };
        let words: Vec<&str> = left.split_whitespace().collect();
        let constant = words
            .iter()
            .any(|word| matches!(*word, "const" | "constexpr"));
        if constant && words.last() == Some(&name) {
            return Some(right.trim().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{Code, c_index};
    use crate::kernel::{KernelSource, OwnBuild};
    use crate::nvrtc::Extras;

    const TILED: &str = "\
#define TILE 16
#define PAD (TILE + 1)
constexpr int ROWS = 2 * 3;
// float Cs[99][99]; is only a comment
extern \"C\" __global__ void k(const float *a, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ double Bs[TILE][PAD];
    __shared__ unsigned char bytes[ROWS][4][2];
    __shared__ int flat[TILE * TILE];
    As[threadIdx.y][threadIdx.x] = a[0];
}
";

    #[test]
    fn two_and_three_dimensions_get_c_indices() {
        assert_eq!(c_index(TILED, "As", 16 * 4).as_deref(), Some("[1][0]"));
        assert_eq!(
            c_index(TILED, "As", (3 * 16 + 5) * 4).as_deref(),
            Some("[3][5]")
        );
        assert_eq!(c_index(TILED, "As", 0).as_deref(), Some("[0][0]"));
        // A padded row: 17 doubles.
        assert_eq!(c_index(TILED, "Bs", 17 * 8).as_deref(), Some("[1][0]"));
        assert_eq!(c_index(TILED, "Bs", 16 * 8).as_deref(), Some("[0][16]"));
        assert_eq!(
            c_index(TILED, "bytes", 4 * 2 + 3).as_deref(),
            Some("[1][1][1]")
        );
    }

    #[test]
    fn a_shared_scalar_is_named_without_an_index() {
        let source = "__global__ void k(int *count_out)\n{\n    __shared__ int count;\n    __shared__ unsigned int total;\n    int local_count = 0;\n    count = 0;\n}\n";
        assert_eq!(c_index(source, "count", 0).as_deref(), Some(""));
        assert_eq!(c_index(source, "total", 0).as_deref(), Some(""));
        // Past it, the flat index says how far.
        assert_eq!(c_index(source, "count", 4), None);
        // A local or a parameter is no shared scalar.
        assert_eq!(c_index(source, "local_count", 0), None);
        assert_eq!(c_index(source, "count_out", 0), None);
    }

    #[test]
    fn what_cannot_be_read_keeps_the_flat_index() {
        // One dimension, past the end, between elements, a name only a comment declares.
        assert_eq!(c_index(TILED, "flat", 40), None);
        assert_eq!(
            c_index(TILED, "As", 16 * 16 * 4).as_deref(),
            Some("[16][0]")
        );
        assert_eq!(c_index(TILED, "As", 6), None);
        assert_eq!(c_index(TILED, "Cs", 0), None);
        assert_eq!(c_index(TILED, "missing", 0), None);
        let template = "template <int B> __global__ void k() { __shared__ float t[B][B]; }";
        assert_eq!(c_index(template, "t", 4), None);
    }

    /// A kernel as `racetrack check` compiles it: `symbol` the instance that ran.
    fn own_kernel(source: &str, symbol: &str, header: &str, options: &[&str]) -> KernelSource {
        let build = OwnBuild {
            extras: Extras {
                options: options.iter().map(|option| option.to_string()).collect(),
                headers: vec![("tile.h".to_string(), header.to_string())],
                name_expressions: Vec::new(),
            },
            symbol: symbol.to_string(),
            emulator_ptx: String::new(),
        };
        KernelSource {
            path: "k.cu",
            entry: "k",
            source: Box::leak(source.to_string().into_boxed_str()),
            committed_ptx: "",
            own: Some(Box::leak(Box::new(build))),
        }
    }

    #[test]
    fn template_parameters_headers_and_defines_give_dimensions() {
        let source = "#include \"tile.h\"\n\
template <typename T, int B>\n__global__ void k(T *x)\n{\n    __shared__ T tile[TILE][TILE];\n\
    __shared__ T padded[B][B + PAD];\n    __shared__ float wide[WIDE][2];\n}\n\
__global__ void other() { __shared__ T stranger[B][B]; }\n";
        // k<double, 8>(double*): T is double, B is 8.
        let kernel = own_kernel(
            source,
            "_Z1kIdLi8EEvPT_",
            "// TILE in a comment: 99\nconstexpr int TILE = 16;",
            &["-DPAD=1", "-DWIDE"],
        );
        let code = Code::of(&kernel);
        assert_eq!(code.c_index("tile", 16 * 8).as_deref(), Some("[1][0]"));
        assert_eq!(code.c_index("padded", 9 * 8).as_deref(), Some("[1][0]"));
        assert_eq!(code.c_index("wide", 3 * 4).as_deref(), Some("[1][1]"));
        // Outside the template, its parameters mean nothing.
        assert_eq!(code.c_index("stranger", 0), None);
        // Without the instance, the header or the definitions, the flat index stays.
        assert_eq!(c_index(source, "tile", 16 * 8), None);
        assert_eq!(c_index(source, "padded", 9 * 8), None);
    }
}
