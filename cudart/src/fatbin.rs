//! nvcc's fatbinary: the device code a program carries (PTX and cubins, often compressed), found
//! through the wrapper that `__cudaRegisterFatBinary` receives or in an executable's `.nv_fatbin`.
//!
//! (A first reader: uncompressed entries only; the full reader replaces it.)

#[derive(Debug, thiserror::Error)]
pub enum FatbinError {
    #[error("not a fatbinary: {0}")]
    Malformed(String),
    #[error("a compressed entry, which this reader cannot read yet")]
    Compressed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Ptx,
    Cubin,
    Other(u16),
}

#[derive(Clone, Debug)]
pub struct Image {
    pub kind: ImageKind,
    pub arch: u32,
    pub data: Vec<u8>,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

pub fn images(fatbin: &[u8]) -> Result<Vec<Image>, FatbinError> {
    let bad = |w: &str| FatbinError::Malformed(w.to_string());
    let mut out = Vec::new();
    let mut at = 0;
    while at + 16 <= fatbin.len() {
        if u32_at(fatbin, at) != Some(0xBA55_ED50) {
            break;
        }
        let header = u16_at(fatbin, at + 6).ok_or_else(|| bad("header"))? as usize;
        let size = u64_at(fatbin, at + 8).ok_or_else(|| bad("size"))? as usize;
        let mut e = at + header;
        let end = at + header + size;
        while e < end {
            let kind = u16_at(fatbin, e).ok_or_else(|| bad("entry"))?;
            let eh = u32_at(fatbin, e + 4).ok_or_else(|| bad("entry"))? as usize;
            let payload = u64_at(fatbin, e + 8).ok_or_else(|| bad("entry"))? as usize;
            let arch = u32_at(fatbin, e + 28).ok_or_else(|| bad("entry"))?;
            let flags = u64_at(fatbin, e + 40).ok_or_else(|| bad("entry"))?;
            let data = fatbin
                .get(e + eh..e + eh + payload)
                .ok_or_else(|| bad("truncated"))?;
            if flags & 0x2000 != 0 {
                return Err(FatbinError::Compressed);
            }
            out.push(Image {
                kind: match kind {
                    1 => ImageKind::Ptx,
                    2 => ImageKind::Cubin,
                    k => ImageKind::Other(k),
                },
                arch,
                data: data.to_vec(),
            });
            e += eh + payload;
        }
        at = end;
    }
    Ok(out)
}

/// # Safety
/// `wrapper` must be nvcc's `__fatBinC_Wrapper_t`.
pub unsafe fn images_from_wrapper(
    wrapper: *const std::ffi::c_void,
) -> Result<Vec<Image>, FatbinError> {
    if wrapper.is_null() {
        return Err(FatbinError::Malformed("null".into()));
    }
    // SAFETY: the wrapper is { int magic; int version; const u64 *data; void *filename }.
    unsafe {
        let magic = *(wrapper as *const i32);
        if magic != crate::abi::FATBIN_WRAPPER_MAGIC {
            return Err(FatbinError::Malformed("wrapper magic".into()));
        }
        let data = *((wrapper as *const u8).add(8) as *const *const u8);
        let header = std::slice::from_raw_parts(data, 16);
        let size =
            u64_at(header, 8).unwrap_or(0) as usize + u16_at(header, 6).unwrap_or(16) as usize;
        images(std::slice::from_raw_parts(data, size))
    }
}

pub fn ptx_for(images: &[Image], arch: u32) -> Option<(u32, String)> {
    let ptx = images.iter().filter(|i| i.kind == ImageKind::Ptx);
    let best = ptx
        .clone()
        .filter(|i| i.arch <= arch)
        .max_by_key(|i| i.arch)
        .or_else(|| ptx.min_by_key(|i| i.arch))?;
    let text = String::from_utf8_lossy(&best.data);
    Some((best.arch, text.trim_end_matches('\0').to_string()))
}
