//! Kernel names as people write them: `sum`, `ns::sum`, `reduce<float, 256>`, and, for an
//! overloaded kernel, `scale(float*, int)`. NVRTC turns each into the mangled name its PTX
//! uses, through a name expression, which also instantiates a template.

use std::fmt;

use super::source::{Function, FunctionKind, Scan};
use crate::check::ctype::CParam;

/// What `--entry` says, checked for shape (NVRTC checks the rest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryName {
    /// As written, trimmed: what reports call the kernel.
    pub text: String,
    /// Without template arguments or parameters: `ns::reduce`.
    pub base: String,
    /// `float, 256` in `reduce<float, 256>`.
    pub template_args: Option<String>,
    /// `float*, int` in `scale(float*, int)`.
    pub params: Option<String>,
}

impl EntryName {
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let refuse = || {
            format!(
                "`{text}` is not a kernel name; write NAME, ns::NAME, NAME<TEMPLATE ARGS> or NAME(PARAMETER TYPES)"
            )
        };
        let base_end = text.find(['<', '(']).unwrap_or(text.len());
        let base = text[..base_end].trim();
        let valid_base = !base.is_empty()
            && base.split("::").all(|part| {
                let part = part.trim();
                let mut chars = part.chars();
                chars
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if !valid_base {
            return Err(refuse());
        }
        let mut rest = &text[base_end..];
        let mut template_args = None;
        if rest.starts_with('<') {
            let close = closing(rest, '<', '>').ok_or_else(refuse)?;
            template_args = Some(rest[1..close].trim().to_string());
            rest = rest[close + 1..].trim_start();
        }
        let mut params = None;
        if rest.starts_with('(') {
            let close = closing(rest, '(', ')').ok_or_else(refuse)?;
            params = Some(rest[1..close].trim().to_string());
            rest = &rest[close + 1..];
        }
        if !rest.trim().is_empty() {
            return Err(refuse());
        }
        Ok(Self {
            text: text.to_string(),
            base: base
                .split("::")
                .map(str::trim)
                .collect::<Vec<_>>()
                .join("::"),
            template_args,
            params,
        })
    }

    /// The name with its template arguments: `reduce<float, 256>`.
    fn named(&self) -> String {
        match &self.template_args {
            Some(args) => format!("{}<{args}>", self.base),
            None => self.base.clone(),
        }
    }

    /// What NVRTC is asked to lower. Parameter types pick one overload through a cast to the
    /// kernel's pointer type (kernels return `void`).
    pub fn expression(&self) -> String {
        match &self.params {
            Some(params) => format!("static_cast<void (*)({params})>(&{})", self.named()),
            None => self.named(),
        }
    }
}

impl fmt::Display for EntryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn closing(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0i32;
    for (index, character) in text.char_indices() {
        if character == open {
            depth += 1;
        } else if character == close {
            depth -= 1;
            if depth == 0 {
                return Some(index);
            }
        }
    }
    None
}

/// The C++ name of a mangled symbol, without its return type:
/// `_Z5scalePfi` → `scale(float*, int)`; `None` for `extern "C"` names and anything unreadable.
pub fn demangle(symbol: &str) -> Option<String> {
    if !symbol.starts_with("_Z") {
        return None;
    }
    let parsed = cpp_demangle::Symbol::new(symbol).ok()?;
    let options = cpp_demangle::DemangleOptions::new().no_return_type();
    parsed.demangle_with_options(&options).ok()
}

/// The C++ parameters of the kernel PTX calls `symbol`: read back from a mangled name (types
/// only: `float const*`), or, for an `extern "C"` kernel, as its declaration in the file writes
/// them (`const float *in`). Empty when neither says.
pub fn params_of(symbol: &str, scan: &Scan) -> Vec<String> {
    let Some(readable) = demangle(symbol) else {
        return match scan
            .kernels()
            .find(|function| function.name == symbol && function.template.is_none())
        {
            Some(function) => declared(&function.params),
            None => Vec::new(),
        };
    };
    let Some(open) = readable.find('(') else {
        return Vec::new();
    };
    let mut params = declared(&readable[open + 1..readable.len().saturating_sub(1)]);
    // The mangled name keeps the types, the file the names: `unsigned int* bins` from the one
    // kernel of that name and parameter count (a template's instance included), so that
    // reports and arguments are named as the kernel names them.
    let base = base_of(&readable);
    let mut written = scan
        .kernels()
        .filter(|function| function.name == base)
        .map(|function| declared(&function.params))
        .filter(|written| written.len() == params.len());
    if let (Some(written), None) = (written.next(), written.next()) {
        for (param, as_written) in params.iter_mut().zip(written) {
            if let Some(name) = CParam::parse(&as_written).name
                && CParam::parse(param).name.is_none()
            {
                param.push(' ');
                param.push_str(&name);
            }
        }
    }
    params
}

/// A parameter list as written, one declaration each, without default values.
fn declared(list: &str) -> Vec<String> {
    split_top_level(list)
        .into_iter()
        .map(|param| {
            let declaration = param.split('=').next().unwrap_or("");
            collapse(declaration)
        })
        .filter(|param| !param.is_empty() && param != "void")
        .collect()
}

fn split_top_level(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (index, character) in text.char_indices() {
        match character {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// `ns::reduce` from `ns::reduce<float, 256>(float const*, int)`.
pub fn base_of(name: &str) -> &str {
    let end = name.find(['<', '(']).unwrap_or(name.len());
    name[..end].trim()
}

/// How a kernel is listed in a hint: `sum`, `ns::kernel`, `reduce<T, BLOCK>` for a template.
pub fn listed(function: &Function) -> String {
    match &function.template {
        Some(template) => {
            let names: Vec<String> = template_params(template)
                .iter()
                .map(|param| param.name.clone())
                .collect();
            format!("{}<{}>", function.name, names.join(", "))
        }
        None => function.name.clone(),
    }
}

/// The kernels a file defines, for "it defines …" and for choosing one: those its source
/// declares, then those only its PTX shows (from headers), by their C++ names. A template is
/// one kernel with each instance the file makes of it (an explicit instantiation or
/// specialization, as its PTX shows them), so it is listed by its instances (`reduce<float>`),
/// or by its parameters (`reduce<T>`) when the file makes none.
pub fn kernel_list(scan: &Scan, ptx_entries: &[String]) -> Vec<String> {
    let readable: Vec<String> = ptx_entries
        .iter()
        .map(|entry| demangle(entry).unwrap_or_else(|| entry.clone()))
        .collect();
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: String| {
        if !names.contains(&name) {
            names.push(name);
        }
    };
    for function in scan.kernels() {
        if is_instance(&function.name) {
            // Listed with its template, from the PTX, which says whether it compiled.
            continue;
        }
        if function.template.is_none() {
            add(function.name.clone());
            continue;
        }
        let instances = instances_of(&function.name, scan, &readable);
        if instances.is_empty() {
            add(listed(function));
        }
        instances.into_iter().for_each(&mut add);
    }
    for entry in &readable {
        let base = base_of(entry);
        if !names.iter().any(|name| base_of(name) == base) {
            names.push(base.to_string());
        }
    }
    names
}

/// `reduce<float>` as an explicit instantiation or specialization names a template's instance.
fn is_instance(name: &str) -> bool {
    name.contains('<') && !name.starts_with("operator")
}

/// The C++ names of the instances of the template `base` among the PTX's kernels, spelled as
/// the file spells them where it names them (`reduce<float, 256>`), else as the demangler does.
fn instances_of(base: &str, scan: &Scan, readable: &[String]) -> Vec<String> {
    let spaceless = |text: &str| text.split_whitespace().collect::<String>();
    readable
        .iter()
        .filter(|entry| base_of(entry) == base)
        .filter_map(|entry| {
            let name = without_params(entry);
            is_instance(name).then(|| {
                scan.kernels()
                    .find(|function| spaceless(&function.name) == spaceless(name))
                    .map_or_else(|| name.to_string(), |function| collapse(&function.name))
            })
        })
        .collect()
}

/// The template and the arguments of the instance that the mangled `symbol` names:
/// `_Z6reduceIfLi256EEvPKT_PS0_i` → (`reduce`, [`float`, `256`]); `None` for a function that
/// is no template's instance.
pub fn instance_arguments(symbol: &str) -> Option<(String, Vec<String>)> {
    let readable = demangle(symbol)?;
    let name = without_params(&readable);
    let open = name.find('<')?;
    let inner = name[open + 1..].strip_suffix('>')?;
    let arguments = split_top_level(inner)
        .into_iter()
        .map(|argument| argument.trim().to_string())
        .collect();
    Some((base_of(name).to_string(), arguments))
}

/// `reduce<float, 256>` from `reduce<float, 256>(float const*, int)`: up to the parameter list,
/// which opens outside the template arguments.
fn without_params(name: &str) -> &str {
    let mut depth = 0i32;
    for (index, character) in name.char_indices() {
        match character {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => return name[..index].trim_end(),
            _ => {}
        }
    }
    name
}

/// One parameter of `template <…>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateParam {
    pub name: String,
    /// `typename`/`class` for a type, else the value's type (`int`).
    pub kind: String,
}

pub fn template_params(template: &str) -> Vec<TemplateParam> {
    let Some(open) = template.find('<') else {
        return Vec::new();
    };
    let Some(close) = template.rfind('>') else {
        return Vec::new();
    };
    let inner = &template[open + 1..close];
    let mut params = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut pieces = Vec::new();
    for (index, character) in inner.char_indices() {
        match character {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                pieces.push(&inner[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    pieces.push(&inner[start..]);
    for piece in pieces {
        let declaration = piece.split('=').next().unwrap_or("").trim();
        let words: Vec<&str> = declaration.split_whitespace().collect();
        let Some((name, kind)) = words.split_last() else {
            continue;
        };
        params.push(TemplateParam {
            name: name.trim_start_matches(['*', '&']).to_string(),
            kind: kind.join(" "),
        });
    }
    params
}

/// An instance to suggest for a template kernel: `float` for a type, `256` for a number.
pub fn example_instance(function: &Function) -> String {
    let args: Vec<&str> = function
        .template
        .as_deref()
        .map(template_params)
        .unwrap_or_default()
        .iter()
        .map(|param| match param.kind.as_str() {
            "typename" | "class" => "float",
            "bool" => "true",
            _ => "256",
        })
        .collect();
    format!("{}<{}>", function.name, args.join(", "))
}

/// Why NVRTC could not lower `name`, as one sentence for the user.
pub fn explain_refusal(
    name: &EntryName,
    path: &str,
    log: &str,
    scan: &Scan,
    ptx_entries: &[String],
) -> String {
    let same_base = |function: &&Function| base_of(&function.name) == name.base;
    let mut candidates: Vec<String> = ptx_entries
        .iter()
        .filter_map(|entry| demangle(entry))
        .filter(|readable| base_of(readable) == name.base)
        .collect();
    if candidates.is_empty() {
        candidates = scan
            .kernels()
            .filter(same_base)
            .filter(|function| function.template.is_none())
            .map(|function| format!("{}({})", function.name, function.params))
            .collect();
    }
    let choices: Vec<String> = candidates
        .iter()
        .map(|candidate| format!("--entry '{candidate}'"))
        .collect();
    if name.params.is_some() && !choices.is_empty() && !log.contains("function template") {
        return format!(
            "no kernel `{}` of {path} takes ({}); name one by its parameter types: {}",
            name.base,
            name.params.as_deref().unwrap_or_default(),
            or_list(&choices)
        );
    }
    if log.contains("overloaded function") {
        return format!(
            "`{name}` is overloaded in {path}; name one by its parameter types: {}",
            or_list(&choices)
        );
    }
    if log.contains("function template") {
        if let Some(function) = scan.kernels().find(same_base)
            && let Some(template) = &function.template
        {
            let wanted = template_params(template).len();
            let given = name.template_args.as_deref().map_or(0, count_args);
            let what = if name.template_args.is_some() && given != wanted {
                format!(
                    " takes {wanted} template argument{}",
                    if wanted == 1 { "" } else { "s" }
                )
            } else {
                " is a template".to_string()
            };
            return format!(
                "`{}`{what} ({}); name an instance with its arguments, e.g. --entry '{}'",
                function.name,
                collapse(template),
                example_instance(function)
            );
        }
        return format!(
            "`{name}` is a template in {path}; name an instance with its arguments, e.g. --entry '{}<float>'",
            name.base
        );
    }
    if let Some(function) = scan
        .functions
        .iter()
        .find(|function| same_base(function) && function.kind != FunctionKind::Kernel)
    {
        let kind = match function.kind {
            FunctionKind::Device => "a __device__ function",
            _ => "a host function",
        };
        return format!(
            "`{name}` is {kind}, not a kernel (__global__); {}",
            defines(path, scan, ptx_entries)
        );
    }
    if let Some(first) = nvrtc_message(log) {
        if first.contains("is undefined") || first.contains("has no member") {
            return format!(
                "{path} has no kernel named `{name}`; {}",
                defines(path, scan, ptx_entries)
            );
        }
        return format!("NVRTC cannot find the kernel `{name}` in {path}: {first}");
    }
    format!(
        "{path} has no kernel named `{name}`; {}",
        defines(path, scan, ptx_entries)
    )
}

/// "it defines a, b and c".
pub fn defines(path: &str, scan: &Scan, ptx_entries: &[String]) -> String {
    let names = kernel_list(scan, ptx_entries);
    if names.is_empty() {
        return format!("{path} defines no kernels (functions declared __global__)");
    }
    format!("it defines {}", and_list(&names))
}

fn count_args(args: &str) -> usize {
    let mut depth = 0i32;
    let mut count = usize::from(!args.trim().is_empty());
    for character in args.chars() {
        match character {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => count += 1,
            _ => {}
        }
    }
    count
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first `error:` message of an NVRTC log, without its location.
fn nvrtc_message(log: &str) -> Option<String> {
    log.lines().find_map(|line| {
        line.split_once("error: ")
            .map(|(_, message)| message.trim().to_string())
    })
}

fn joined(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {word} {last}", rest.join(", ")),
    }
}

fn and_list(items: &[String]) -> String {
    joined(items, "and")
}

fn or_list(items: &[String]) -> String {
    joined(items, "or")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::front::source::scan;

    #[test]
    fn entry_names_parse_into_name_expressions() {
        let plain = EntryName::parse(" sum ").unwrap();
        assert_eq!(
            (plain.text.as_str(), plain.expression()),
            ("sum", "sum".to_string())
        );
        let template = EntryName::parse("reduce<float, 256>").unwrap();
        assert_eq!(template.base, "reduce");
        assert_eq!(template.template_args.as_deref(), Some("float, 256"));
        assert_eq!(template.expression(), "reduce<float, 256>");
        let nested = EntryName::parse("ns::apply<Pair<int, 2>>").unwrap();
        assert_eq!(nested.expression(), "ns::apply<Pair<int, 2>>");
        let overload = EntryName::parse("scale(float*, int)").unwrap();
        assert_eq!(
            overload.expression(),
            "static_cast<void (*)(float*, int)>(&scale)"
        );
        assert_eq!(overload.to_string(), "scale(float*, int)");
        for bad in [
            "",
            "1x",
            "a b",
            "sum<float",
            "scale(int",
            "sum)",
            "sum<int> x",
            "::",
        ] {
            assert!(EntryName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn symbols_demangle_without_return_types() {
        assert_eq!(
            demangle("_Z6reduceIfLi256EEvPKT_PS0_i").as_deref(),
            Some("reduce<float, 256>(float const*, float*, int)")
        );
        assert_eq!(
            demangle("_ZN2ns6kernelEPi").as_deref(),
            Some("ns::kernel(int*)")
        );
        assert_eq!(demangle("racy_increment"), None);
        assert_eq!(base_of("ns::kernel(int*)"), "ns::kernel");
        let scan = scan("extern \"C\" __global__ void k(const float *in, int n = 4) {}\n");
        assert_eq!(params_of("k", &scan), ["const float *in", "int n"]);
        assert_eq!(
            params_of("_Z6reduceIfLi256EEvPKT_PS0_i", &scan),
            ["float const*", "float*", "int"]
        );
        // A C++ kernel's types come from its mangled name, its names from the file.
        let templated = crate::check::front::source::scan(
            "template <typename T, int B>\n__global__ void reduce(const T *in, T *out, int n) {}\n",
        );
        assert_eq!(
            params_of("_Z6reduceIfLi256EEvPKT_PS0_i", &templated),
            ["float const* in", "float* out", "int n"]
        );
    }

    #[test]
    fn a_template_and_its_instances_are_one_kernel_listed_by_its_instances() {
        let source = "template <typename T>\n__global__ void transpose(T *out, const T *in, int n) {}\n\
template __global__ void transpose<float>(float *, const float *, int);\n";
        let float = "_Z9transposeIfEvPT_PKS0_i".to_string();
        let double = "_Z9transposeIdEvPT_PKS0_i".to_string();
        assert_eq!(
            kernel_list(&scan(source), std::slice::from_ref(&float)),
            ["transpose<float>"]
        );
        let both = format!(
            "{source}template __global__ void transpose< double >(double *, const double *, int);\n"
        );
        assert_eq!(
            kernel_list(&scan(&both), &[float, double]),
            ["transpose<float>", "transpose< double >"]
        );
        // An instance only the PTX shows is named as the demangler writes it; a template the
        // file does not instantiate, by its parameters.
        let specialized = "template <typename T, int B>\n__global__ void fill(T *x) {}\n\
template <typename T>\n__global__ void zero(T *x) {}\n";
        assert_eq!(
            kernel_list(&scan(specialized), &["_Z4fillIfLi256EEvPT_".to_string()]),
            ["fill<float, 256>", "zero<T>"]
        );
    }

    #[test]
    fn refusals_say_what_to_write_instead() {
        let source = "template <typename T, int BLOCK>\n__global__ void reduce(const T *in, T *out) {}\n\
__global__ void scale(float *x, int n) {}\n__global__ void scale(float *x, float f) {}\n\
__device__ float square(float x) { return x * x; }\n";
        let scan = scan(source);
        let entries = ["_Z5scalePfi".to_string(), "_Z5scalePff".to_string()];
        let explain = |entry: &str, log: &str| {
            explain_refusal(
                &EntryName::parse(entry).unwrap(),
                "k.cu",
                log,
                &scan,
                &entries,
            )
        };
        assert_eq!(
            explain(
                "scale",
                "__nv_name_map(2): error: cannot determine which instance of overloaded function \"scale\" is intended"
            ),
            "`scale` is overloaded in k.cu; name one by its parameter types: --entry 'scale(float*, int)' or --entry 'scale(float*, float)'"
        );
        assert_eq!(
            explain(
                "reduce",
                "__nv_name_map(2): error: cannot determine which instance of function template \"reduce\" is intended"
            ),
            "`reduce` is a template (template <typename T, int BLOCK>); name an instance with its arguments, e.g. --entry 'reduce<float, 256>'"
        );
        assert_eq!(
            explain(
                "reduce<float>",
                "error: cannot determine which instance of function template \"reduce\" is intended"
            ),
            "`reduce` takes 2 template arguments (template <typename T, int BLOCK>); name an instance with its arguments, e.g. --entry 'reduce<float, 256>'"
        );
        assert_eq!(
            explain("scale(float*, double)", "error: invalid type conversion"),
            "no kernel `scale` of k.cu takes (float*, double); name one by its parameter types: --entry 'scale(float*, int)' or --entry 'scale(float*, float)'"
        );
        assert_eq!(
            explain("square", "irrelevant"),
            "`square` is a __device__ function, not a kernel (__global__); it defines reduce<T, BLOCK> and scale"
        );
        assert_eq!(
            explain(
                "nosuch",
                "__nv_name_map(2): error: identifier \"nosuch\" is undefined"
            ),
            "k.cu has no kernel named `nosuch`; it defines reduce<T, BLOCK> and scale"
        );
    }
}
