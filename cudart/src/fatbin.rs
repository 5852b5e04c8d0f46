//! nvcc's fatbinary: the device code a program carries (PTX and cubins, often compressed), found
//! through the wrapper that `__cudaRegisterFatBinary` receives or in an executable's `.nv_fatbin`.
//!
//! A fatbinary is a 16-byte header (magic `0xBA55ED50`, version 1, header size, size of what
//! follows) and then its entries, each an entry header and a payload padded to 8 bytes. An entry
//! header holds the kind (1 PTX, 2 cubin), the sm number, flags (`0x2000` LZ4 block, `0x8000`
//! zstd), the compressed and uncompressed sizes, and offsets to an optional name and ptxas
//! options inside itself. nvcc 13 zstd-compresses PTX by default; `tests/fixtures/fatbin/README.md`
//! says what each `--compress-mode` writes.
//!
//! The PTX text is `fatbinary`'s shortened copy of nvcc's: no comments, no indentation, every
//! other run of blanks outside strings cut to its first character, but every line kept, so PTX
//! line numbers still match nvcc's `.ptx`.

use std::ffi::c_void;
use std::io::Read;

/// `__fatBinC_Wrapper_t::magic`.
pub const WRAPPER_MAGIC: u32 = 0x466243b1;
/// The first word of every fatbinary.
pub const FATBIN_MAGIC: u32 = 0xBA55ED50;

const FATBIN_HEADER_LEN: usize = 16;
/// The fixed part of an entry header; a name or ptxas options make it longer.
const ENTRY_HEADER_LEN: usize = 64;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
const KIND_PTX: u16 = 1;
const KIND_CUBIN: u16 = 2;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    Ptx,
    /// An ELF file of SASS for one sm.
    Cubin,
    /// A kind Racetrack does not use (LTO IR, for one), by its number in the entry header.
    Other(u16),
}

/// How an entry was stored; its [`Image::data`] is always uncompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    /// LZ4's block format, with the uncompressed size in the entry header.
    Lz4,
    /// One zstd frame.
    Zstd,
}

/// One entry of a fatbinary, decompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub kind: ImageKind,
    /// The sm number: 75 for `sm_75`/`compute_75`.
    pub arch: u32,
    pub compression: Compression,
    /// The entry's identifier (nvcc writes the source file's path with `-lineinfo` or `-G`).
    pub name: Option<String>,
    /// The options ptxas is to get with this PTX (`-lineinfo` gives ` --generate-line-info `).
    pub ptxas_options: Option<String>,
    /// PTX: the text without the NUL that ends it in the fatbinary. Other kinds: the payload as
    /// stored, which for an uncompressed entry includes the padding to 8 bytes.
    pub data: Vec<u8>,
}

/// Why device code could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FatbinError {
    #[error(
        "no fatbinary at byte {offset}: the magic number there is {found:#010x}, not 0xba55ed50"
    )]
    BadMagic { offset: usize, found: u32 },
    #[error("the fatbinary at byte {offset} is version {version}, and Racetrack reads version 1")]
    UnsupportedVersion { offset: usize, version: u16 },
    #[error(
        "the fatbinary is cut short: {what} at byte {offset} needs {needed} bytes and {available} remain"
    )]
    Truncated {
        what: String,
        offset: usize,
        needed: u64,
        available: usize,
    },
    #[error("{entry} is malformed: {reason}")]
    BadEntry { entry: String, reason: String },
    #[error("{entry} is compressed in a way Racetrack does not know (flags {flags:#x})")]
    UnknownCompression { entry: String, flags: u64 },
    #[error("cannot decompress {entry} ({format}): {reason}")]
    Decompress {
        entry: String,
        format: &'static str,
        reason: String,
    },
    #[error("{entry} decompressed to {got} bytes, but its header says {expected}")]
    SizeMismatch {
        entry: String,
        expected: u64,
        got: u64,
    },
    #[error("the pointer given to __cudaRegisterFatBinary is null")]
    NullWrapper,
    #[error(
        "the pointer given to __cudaRegisterFatBinary is not a fatbinary wrapper: its magic number is {found:#010x}, not 0x466243b1"
    )]
    BadWrapperMagic { found: u32 },
    #[error("the fatbinary wrapper's data pointer is null")]
    NullData,
    #[error("the file is not an ELF executable or shared object")]
    NotElf,
    #[error(
        "the ELF file has class {class} and data encoding {encoding}, and Racetrack reads only 64-bit little-endian ones"
    )]
    UnsupportedElf { class: u8, encoding: u8 },
    #[error("the ELF file is malformed: {0}")]
    BadElf(String),
    #[error(
        "this program carries no device code (it has no .nv_fatbin section); was it built by nvcc?"
    )]
    NoDeviceCode,
}

/// Bounds-checked little-endian reads: every offset in a fatbinary comes from the file itself.
fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

fn truncated(what: impl Into<String>, offset: usize, needed: u64, data: &[u8]) -> FatbinError {
    FatbinError::Truncated {
        what: what.into(),
        offset,
        needed,
        available: data.len().saturating_sub(offset),
    }
}

/// `needed` bytes at `offset`, or the error that says which part is missing.
fn slice_at(
    data: &[u8],
    offset: usize,
    needed: u64,
    what: impl FnOnce() -> String,
) -> Result<&[u8], FatbinError> {
    usize::try_from(needed)
        .ok()
        .and_then(|n| data.get(offset..offset.checked_add(n)?))
        .ok_or_else(|| truncated(what(), offset, needed, data))
}

/// Every entry of the fatbinaries in `fatbin`, in order, decompressed. A `.nv_fatbin` section holds
/// one fatbinary per translation unit, one after another, each starting on 8 bytes.
pub fn images(fatbin: &[u8]) -> Result<Vec<Image>, FatbinError> {
    let mut out = Vec::new();
    let mut offset = 0;
    loop {
        offset = parse_fatbin(fatbin, offset, &mut out)?;
        while offset % 8 != 0 && fatbin.get(offset) == Some(&0) {
            offset += 1;
        }
        if fatbin[offset.min(fatbin.len())..].iter().all(|&b| b == 0) {
            return Ok(out);
        }
    }
}

/// Appends the entries of the fatbinary at `start` to `out`; returns the offset just past it.
fn parse_fatbin(data: &[u8], start: usize, out: &mut Vec<Image>) -> Result<usize, FatbinError> {
    let header = slice_at(data, start, FATBIN_HEADER_LEN as u64, || {
        "the fatbinary header".into()
    })?;
    let (Some(magic), Some(version), Some(header_len), Some(body_len)) = (
        read_u32(header, 0),
        read_u16(header, 4),
        read_u16(header, 6),
        read_u64(header, 8),
    ) else {
        return Err(truncated("the fatbinary header", start, 16, data));
    };
    if magic != FATBIN_MAGIC {
        return Err(FatbinError::BadMagic {
            offset: start,
            found: magic,
        });
    }
    if version != 1 {
        return Err(FatbinError::UnsupportedVersion {
            offset: start,
            version,
        });
    }
    if usize::from(header_len) < FATBIN_HEADER_LEN {
        return Err(FatbinError::BadEntry {
            entry: format!("the fatbinary at byte {start}"),
            reason: format!("its header claims {header_len} bytes, fewer than 16"),
        });
    }
    let whole = u64::from(header_len).saturating_add(body_len);
    let fatbin = slice_at(data, start, whole, || {
        format!("the fatbinary of {whole} bytes")
    })?;
    let mut at = usize::from(header_len);
    let mut index = 0;
    while at < fatbin.len() {
        index += 1;
        let (image, next) = parse_entry(fatbin, at, || {
            format!("entry {index} of the fatbinary at byte {start}")
        })?;
        out.push(image);
        at = next;
    }
    Ok(start + fatbin.len())
}

/// The entry whose header starts at `at` in `fatbin` (one whole fatbinary), and where the next
/// one starts.
fn parse_entry(
    fatbin: &[u8],
    at: usize,
    place: impl Fn() -> String,
) -> Result<(Image, usize), FatbinError> {
    let header = slice_at(fatbin, at, ENTRY_HEADER_LEN as u64, || {
        format!("the header of {}", place())
    })?;
    let field32 = |o| read_u32(header, o).unwrap_or(0);
    let field64 = |o| read_u64(header, o).unwrap_or(0);
    let kind_number = read_u16(header, 0).unwrap_or(0);
    let kind = match kind_number {
        KIND_PTX => ImageKind::Ptx,
        KIND_CUBIN => ImageKind::Cubin,
        k => ImageKind::Other(k),
    };
    let header_len = field32(4);
    let payload_len = field64(8);
    let compressed_len = field32(16);
    let options_at = field32(20);
    let arch = field32(28);
    let (name_at, name_len) = (field32(32), field32(36));
    let flags = field64(40);
    let uncompressed_len = field64(56);

    let kind_name = match kind {
        ImageKind::Ptx => "PTX".to_string(),
        ImageKind::Cubin => "cubin".to_string(),
        ImageKind::Other(k) => format!("kind-{k} image"),
    };
    let entry = || format!("{} ({kind_name} for sm_{arch})", place());
    let bad = |reason: String| FatbinError::BadEntry {
        entry: entry(),
        reason,
    };

    if (header_len as usize) < ENTRY_HEADER_LEN {
        return Err(bad(format!(
            "its header claims {header_len} bytes, fewer than {ENTRY_HEADER_LEN}"
        )));
    }
    let header = slice_at(fatbin, at, u64::from(header_len), || {
        format!("the header of {}", entry())
    })?;
    let payload_at = at + header.len();
    let payload = slice_at(fatbin, payload_at, payload_len, || {
        format!("the payload of {}", entry())
    })?;

    let string_in_header = |offset: u32, len: u32, what: &str| -> Result<_, FatbinError> {
        if offset == 0 || len == 0 {
            return Ok(None);
        }
        let bytes = (offset as usize)
            .checked_add(len as usize)
            .and_then(|end| header.get(offset as usize..end))
            .ok_or_else(|| {
                bad(format!(
                    "its {what} ({len} bytes at {offset}) lies outside its {header_len}-byte header"
                ))
            })?;
        let text = String::from_utf8_lossy(bytes);
        Ok(Some(text.trim_end_matches('\0').to_string()))
    };
    let name = string_in_header(name_at, name_len, "name")?;
    let ptxas_options = if options_at == 0 {
        None
    } else {
        let (Some(o), Some(l)) = (
            read_u32(header, options_at as usize),
            read_u32(header, (options_at as usize).saturating_add(4)),
        ) else {
            return Err(bad(format!(
                "its ptxas options' place (at {options_at}) lies outside its {header_len}-byte header"
            )));
        };
        string_in_header(o, l, "ptxas options")?
    };

    let compression = match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
        (false, false) => Compression::None,
        (true, false) => Compression::Lz4,
        (false, true) => Compression::Zstd,
        (true, true) => {
            return Err(FatbinError::UnknownCompression {
                entry: entry(),
                flags,
            });
        }
    };
    let mut data = match compression {
        Compression::None => payload.to_vec(),
        Compression::Lz4 | Compression::Zstd => {
            let stored = payload.get(..compressed_len as usize).ok_or_else(|| {
                bad(format!(
                    "its compressed size, {compressed_len} bytes, exceeds its payload of {payload_len}"
                ))
            })?;
            let data = if compression == Compression::Lz4 {
                lz4(stored, uncompressed_len, entry)?
            } else {
                zstd(stored, uncompressed_len, entry)?
            };
            if data.len() as u64 != uncompressed_len {
                return Err(FatbinError::SizeMismatch {
                    entry: entry(),
                    expected: uncompressed_len,
                    got: data.len() as u64,
                });
            }
            data
        }
    };
    if kind == ImageKind::Ptx {
        let text_len = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        data.truncate(text_len);
    }
    let image = Image {
        kind,
        arch,
        compression,
        name,
        ptxas_options,
        data,
    };
    Ok((image, payload_at + payload.len()))
}

fn lz4(stored: &[u8], expected: u64, entry: impl Fn() -> String) -> Result<Vec<u8>, FatbinError> {
    // An LZ4 sequence's length bytes add at most 255 output bytes each: a larger size is a lie,
    // and must not become an allocation.
    let most = (stored.len() as u64).saturating_mul(255).saturating_add(16);
    if expected > most {
        return Err(FatbinError::Decompress {
            entry: entry(),
            format: "LZ4",
            reason: format!(
                "its header says {expected} bytes, more than {} compressed bytes can hold",
                stored.len()
            ),
        });
    }
    let mut out = vec![0; expected as usize];
    let written = lz4_flex::block::decompress_into(stored, &mut out).map_err(|e| {
        FatbinError::Decompress {
            entry: entry(),
            format: "LZ4",
            reason: e.to_string(),
        }
    })?;
    out.truncate(written);
    Ok(out)
}

fn zstd(stored: &[u8], expected: u64, entry: impl Fn() -> String) -> Result<Vec<u8>, FatbinError> {
    let failed = |reason: String| FatbinError::Decompress {
        entry: entry(),
        format: "zstd",
        reason,
    };
    // nvcc's frames have a window no larger than their content; the limit keeps a corrupt frame
    // header from reserving up to the decoder's default of 128 MiB.
    let window_limit = expected.saturating_mul(2).max(1 << 20);
    let decoder =
        ruzstd::decoding::StreamingDecoder::new_with_max_window_size(stored, window_limit)
            .map_err(|e| failed(e.to_string()))?;
    // Reading one byte past the expected size tells a longer output from an exact one without
    // decoding all of a frame that would not fit.
    let mut out = Vec::new();
    decoder
        .take(expected.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| failed(e.to_string()))?;
    Ok(out)
}

/// The fatbinary that nvcc's registration code hands to `__cudaRegisterFatBinary`, read through
/// its `__fatBinC_Wrapper_t { int magic; int version; const unsigned long long *data; void *filename_or_fatbins; }`.
///
/// # Safety
/// `wrapper` must be null or point to a readable wrapper whose magic is [`WRAPPER_MAGIC`]; when it
/// is, its `data` must be null or point to a fatbinary readable for the length its own header
/// gives (16 bytes are read first, and the rest only if they begin with [`FATBIN_MAGIC`]).
pub unsafe fn images_from_wrapper(wrapper: *const c_void) -> Result<Vec<Image>, FatbinError> {
    if wrapper.is_null() {
        return Err(FatbinError::NullWrapper);
    }
    let wrapper = wrapper.cast::<u8>();
    // SAFETY: the caller promises a readable wrapper; unaligned reads ask nothing more of it.
    let magic = unsafe { wrapper.cast::<u32>().read_unaligned() };
    if magic != WRAPPER_MAGIC {
        return Err(FatbinError::BadWrapperMagic { found: magic });
    }
    // SAFETY: `data` follows the two ints, as in the C struct on LP64.
    let data = unsafe { wrapper.add(8).cast::<*const u8>().read_unaligned() };
    // SAFETY: the caller promises `data` is null or a readable fatbinary.
    unsafe { images_at(data) }
}

/// Every translation unit's images, from the wrapper `__cudaRegisterFatBinary` receives. A
/// program built with `-rdc=true` registers one wrapper of version 2 for all its units: its
/// `data` is the device link's fatbinary (machine code only), and `filename_or_fatbins` a
/// NULL-terminated array of each unit's own fatbinary (`__cudaPrelinkedFatbins`), which holds
/// the unit's PTX. A wrapper of version 1 is one unit.
///
/// # Safety
/// As [`images_from_wrapper`]; for version 2, `filename_or_fatbins` must also be null or point
/// to a NULL-terminated array of pointers to readable fatbinaries.
pub unsafe fn units_from_wrapper(wrapper: *const c_void) -> Result<Vec<Vec<Image>>, FatbinError> {
    // SAFETY: the caller's promise, passed on.
    let linked = unsafe { images_from_wrapper(wrapper) }?;
    let bytes = wrapper.cast::<u8>();
    // SAFETY: `images_from_wrapper` read the magic; the version is the next int.
    let version = unsafe { bytes.add(4).cast::<u32>().read_unaligned() };
    let mut units = vec![linked];
    if version != 2 {
        return Ok(units);
    }
    // SAFETY: the fourth field follows `data`, as in the C struct on LP64.
    let mut list = unsafe { bytes.add(16).cast::<*const *const u8>().read_unaligned() };
    // A program links few units; the bound keeps a list without its NULL from running on.
    for _ in 0..1 << 16 {
        if list.is_null() {
            break;
        }
        // SAFETY: the caller promises a NULL-terminated array.
        let data = unsafe { list.read_unaligned() };
        if data.is_null() {
            break;
        }
        // SAFETY: each entry is a unit's fatbinary, as the caller promises.
        units.push(unsafe { images_at(data) }?);
        // SAFETY: the array goes on until its NULL.
        list = unsafe { list.add(1) };
    }
    Ok(units)
}

/// The images of the fatbinary at `data`.
///
/// # Safety
/// `data` must be null or point to a fatbinary readable for the length its own header gives.
unsafe fn images_at(data: *const u8) -> Result<Vec<Image>, FatbinError> {
    if data.is_null() {
        return Err(FatbinError::NullData);
    }
    // SAFETY: a fatbinary starts with its 16-byte header, which the caller promises is readable.
    let header = unsafe { std::slice::from_raw_parts(data, FATBIN_HEADER_LEN) };
    let magic = read_u32(header, 0).unwrap_or(0);
    if magic != FATBIN_MAGIC {
        return Err(FatbinError::BadMagic {
            offset: 0,
            found: magic,
        });
    }
    let header_len = u64::from(read_u16(header, 6).unwrap_or(0));
    let body_len = read_u64(header, 8).unwrap_or(0);
    let whole = header_len
        .max(FATBIN_HEADER_LEN as u64)
        .checked_add(body_len)
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| truncated("the fatbinary", 0, body_len, header))?;
    // SAFETY: the caller promises the length the header gives is readable.
    let fatbin = unsafe { std::slice::from_raw_parts(data, whole) };
    images(fatbin)
}

/// Whether a unit is CUDA's device runtime library (`libcudadevrt.a`, linked by `-lcudadevrt`):
/// its PTX defines the `__cudaCDP2…` functions, which the emulator provides itself.
pub(crate) fn is_device_runtime(unit: &[Image]) -> bool {
    unit.iter().filter(|i| i.kind == ImageKind::Ptx).any(|i| {
        String::from_utf8_lossy(&i.data).lines().any(|l| {
            (l.starts_with(".visible") || l.starts_with(".weak"))
                && l.contains(".func")
                && l.contains("__cudaCDP2")
        })
    })
}

/// The PTX of every unit that carries some, for an emulated sm_`arch` device (as [`ptx_for`]
/// picks it), leaving out the device runtime library; `None` if no unit has PTX.
pub fn ptx_of_units(units: &[Vec<Image>], arch: u32) -> Option<Vec<String>> {
    let texts: Vec<String> = units
        .iter()
        .filter(|u| !is_device_runtime(u))
        .filter_map(|u| ptx_for(u, arch).map(|(_, text)| text))
        .collect();
    (!texts.is_empty()).then_some(texts)
}

/// The PTX to run on an emulated sm_`arch` device, as (its sm number, its text): the newest PTX
/// not newer than the device, else the oldest there is (the emulator runs any).
pub fn ptx_for(images: &[Image], arch: u32) -> Option<(u32, String)> {
    let chosen = ptx_image_for(images, arch)?;
    Some((
        chosen.arch,
        String::from_utf8_lossy(&chosen.data).into_owned(),
    ))
}

/// The PTX image [`ptx_for`] takes the text of, with its ptxas options.
pub fn ptx_image_for(images: &[Image], arch: u32) -> Option<&Image> {
    let ptx = || images.iter().filter(|i| i.kind == ImageKind::Ptx);
    // `rev` makes `max_by_key`, which keeps the last of equals, keep the first.
    ptx()
        .filter(|i| i.arch <= arch)
        .rev()
        .max_by_key(|i| i.arch)
        .or_else(|| ptx().min_by_key(|i| i.arch))
}

const SHT_NOBITS: u32 = 8;
/// `e_shstrndx`'s escape: the real index is in section 0's `sh_link`.
const SHN_XINDEX: u16 = 0xffff;

/// The images in the `.nv_fatbin` section of an ELF executable, shared object or object file.
pub fn executable_fatbins(elf: &[u8]) -> Result<Vec<Image>, FatbinError> {
    match nv_fatbin_section(elf)? {
        [] => Err(FatbinError::NoDeviceCode),
        section => images(section),
    }
}

/// The bytes of `.nv_fatbin`, from a 64-bit little-endian ELF file's section headers.
fn nv_fatbin_section(elf: &[u8]) -> Result<&[u8], FatbinError> {
    if elf.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err(FatbinError::NotElf);
    }
    let bad = |what: &str| FatbinError::BadElf(what.to_string());
    let (Some(&class), Some(&encoding)) = (elf.get(4), elf.get(5)) else {
        return Err(bad("its identification is cut short"));
    };
    if class != 2 || encoding != 1 {
        return Err(FatbinError::UnsupportedElf { class, encoding });
    }
    let (Some(shoff), Some(shentsize), Some(shnum), Some(shstrndx)) = (
        read_u64(elf, 0x28),
        read_u16(elf, 0x3a),
        read_u16(elf, 0x3c),
        read_u16(elf, 0x3e),
    ) else {
        return Err(bad("its header is cut short"));
    };
    if shoff == 0 {
        return Err(FatbinError::NoDeviceCode);
    }
    if usize::from(shentsize) < 64 {
        return Err(bad("its section headers are smaller than 64 bytes"));
    }
    let section = |i: u64| -> Result<&[u8], FatbinError> {
        i.checked_mul(u64::from(shentsize))
            .and_then(|o| o.checked_add(shoff))
            .and_then(|o| usize::try_from(o).ok())
            .and_then(|o| elf.get(o..o.checked_add(64)?))
            .ok_or_else(|| bad("a section header lies past the end of the file"))
    };
    // Past 0xff00 sections, the counts live in section 0.
    let count = match shnum {
        0 => read_u64(section(0)?, 0x20).unwrap_or(0),
        n => u64::from(n),
    };
    let strtab_index = match shstrndx {
        SHN_XINDEX => u64::from(read_u32(section(0)?, 0x28).unwrap_or(0)),
        n => u64::from(n),
    };
    let contents = |header: &[u8]| -> Result<&[u8], FatbinError> {
        let (Some(offset), Some(size)) = (read_u64(header, 0x18), read_u64(header, 0x20)) else {
            return Err(bad("a section header is cut short"));
        };
        usize::try_from(offset)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| elf.get(o..o.checked_add(s)?))
            .ok_or_else(|| bad("a section's contents lie past the end of the file"))
    };
    if strtab_index >= count {
        return Err(bad("its section-name table is not among its sections"));
    }
    let names = contents(section(strtab_index)?)?;
    for i in 0..count {
        let header = section(i)?;
        let name_at = read_u32(header, 0).unwrap_or(0) as usize;
        let name = names
            .get(name_at..)
            .map(|rest| rest.split(|&b| b == 0).next().unwrap_or_default());
        if name == Some(b".nv_fatbin".as_slice()) {
            if read_u32(header, 4) == Some(SHT_NOBITS) {
                return Err(bad("its .nv_fatbin section has no contents in the file"));
            }
            return contents(header);
        }
    }
    Err(FatbinError::NoDeviceCode)
}
