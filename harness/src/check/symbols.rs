//! `--symbol NAME:TYPE[LEN]=FILL`: what a `__constant__` or `__device__` variable holds before
//! the launch, as the host's `cudaMemcpyToSymbol` would have put it there.

use std::str::FromStr;

use super::args::{ArgSpec, ArgValueSpec, SpecError};

/// One `--symbol`: the variable as the source names it (`c_kernel`, `ns::weights`) and the data.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolSpec {
    pub name: String,
    /// A buffer spec (a scalar `NAME:TYPE=V` is read as `TYPE[1]=const:V`).
    pub data: ArgSpec,
}

impl FromStr for SymbolSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        // The name ends at the first `:` that is not part of a `::`.
        let bytes = text.as_bytes();
        let separator = (0..bytes.len()).find(|&i| {
            bytes[i] == b':' && bytes.get(i + 1) != Some(&b':') && (i == 0 || bytes[i - 1] != b':')
        });
        let Some(separator) = separator.filter(|&i| i > 0) else {
            return Err(SpecError(
                "a symbol is NAME:TYPE[LEN]=FILL (c_kernel:f32[17]=const:0.5) or NAME:TYPE=VALUE"
                    .to_string(),
            ));
        };
        let name = text[..separator].trim().to_string();
        let valid = name.split("::").all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if !valid {
            return Err(SpecError(format!(
                "`{name}` is not a variable name (c_kernel, ns::weights)"
            )));
        }
        let rest = &text[separator + 1..];
        let data: ArgSpec = rest.parse()?;
        let data = match &data.value {
            ArgValueSpec::Scalar(_) => {
                let (ty, value) = rest.split_once('=').unwrap_or((rest, ""));
                format!("{}[1]=const:{}", ty.trim(), value.trim()).parse()?
            }
            ArgValueSpec::Buffer(buffer) if buffer.offset == 0 => data,
            ArgValueSpec::Buffer(_) | ArgValueSpec::Alias(_) | ArgValueSpec::Struct(_) => {
                return Err(SpecError(format!(
                    "`{rest}`: a variable is set from TYPE[LEN]=FILL or TYPE=VALUE, not from a pointer"
                )));
            }
        };
        Ok(Self { name, data })
    }
}

impl std::fmt::Display for SymbolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.name, self.data)
    }
}

/// A variable `--symbol` names, as the compiled module has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSymbol {
    /// As the user wrote it.
    pub name: String,
    /// Its PTX name, which NVRTC gives for the name expression `&NAME`.
    pub ptx_name: String,
    /// Its size in bytes, from the PTX declaration.
    pub bytes: usize,
}

/// The size of the module-scope `.const` or `.global` variable `ptx_name` declared in `ptx`:
/// `.const .align 4 .b8 c_kernel[68];` is 68 bytes, `.global .align 4 .u32 count;` is 4.
pub fn declared_size(ptx: &str, ptx_name: &str) -> Option<usize> {
    ptx.lines().find_map(|line| {
        let line = line.trim();
        let declaration = line.split('=').next()?.trim().trim_end_matches(';').trim();
        let is_variable = [".const", ".global"]
            .iter()
            .any(|space| declaration.split_whitespace().any(|word| word == *space));
        if !is_variable {
            return None;
        }
        let last = declaration.split_whitespace().last()?;
        let (name, count) = match last.split_once('[') {
            Some((name, count)) => (name, count.trim_end_matches(']').parse::<usize>().ok()?),
            None => (last, 1),
        };
        if name != ptx_name {
            return None;
        }
        let element = declaration.split_whitespace().find_map(|word| {
            let ty = word.strip_prefix('.')?;
            let bits: usize = ty.get(1..)?.parse().ok()?;
            matches!(ty.as_bytes().first(), Some(b'b' | b'u' | b's' | b'f')).then_some(bits / 8)
        })?;
        let vector = declaration.split_whitespace().find_map(|word| {
            word.strip_prefix(".v")
                .and_then(|lanes| lanes.parse::<usize>().ok())
        });
        Some(element * vector.unwrap_or(1) * count)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_a_variable_and_its_data() {
        let spec: SymbolSpec = "ns::weights:f32[3]=const:0.5".parse().expect("a spec");
        assert_eq!(spec.name, "ns::weights");
        assert_eq!(spec.to_string(), "ns::weights:f32[3]=const:0.5");
        let scalar: SymbolSpec = "scale:i32=7".parse().expect("a scalar spec");
        assert_eq!(scalar.to_string(), "scale:i32[1]=const:7");
        for bad in [
            "f32[3]=zeros",
            ":f32[3]=zeros",
            "2x:f32[1]=zeros",
            "w:f32[3]",
        ] {
            assert!(bad.parse::<SymbolSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_come_from_the_ptx_declaration() {
        let ptx = ".const .align 4 .b8 c_kernel[68];\n.global .align 4 .u32 count = 3;\n\
.visible .const .align 8 .f64 _ZN2ns1kE;\n.global .align 16 .v4 .f32 lanes[2];\n";
        assert_eq!(declared_size(ptx, "c_kernel"), Some(68));
        assert_eq!(declared_size(ptx, "count"), Some(4));
        assert_eq!(declared_size(ptx, "_ZN2ns1kE"), Some(8));
        assert_eq!(declared_size(ptx, "lanes"), Some(32));
        assert_eq!(declared_size(ptx, "missing"), None);
    }
}
