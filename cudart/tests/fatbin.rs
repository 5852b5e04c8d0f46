//! Reading what nvcc 13.0 embeds: the fixtures in tests/fixtures/fatbin (its README says how each
//! was made), every compression mode, several architectures, a two-file executable, and damaged
//! copies of all of them.

// A failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::ffi::c_void;

use cudart::fatbin::{
    Compression, FATBIN_MAGIC, FatbinError, Image, ImageKind, WRAPPER_MAGIC, executable_fatbins,
    images, images_from_wrapper, ptx_for, ptx_of_units, units_from_wrapper,
};
use proptest::prelude::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/fatbin/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `fatbinary`'s copy of a PTX file: comments and indentation dropped, every other run of blanks
/// outside strings cut to its first character, every line kept.
fn minify(ptx: &str) -> String {
    let mut out = Vec::new();
    for line in ptx.split('\n') {
        let mut kept = String::new();
        let mut in_string = false;
        let mut after_blank = true;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_string {
                in_string = c != '"';
                kept.push(c);
            } else if c == '/' && chars.peek() == Some(&'/') {
                break;
            } else if c == ' ' || c == '\t' {
                if !after_blank {
                    kept.push(c);
                }
                after_blank = true;
                continue;
            } else {
                in_string = c == '"';
                kept.push(c);
            }
            after_blank = false;
        }
        out.push(kept);
    }
    out.join("\n")
}

/// The PTX nvcc wrote to `name`, as a fatbinary holds it.
fn expected_ptx(name: &str) -> String {
    minify(&String::from_utf8(fixture(name)).unwrap())
}

fn text(image: &Image) -> &str {
    std::str::from_utf8(&image.data).unwrap()
}

fn kinds(images: &[Image]) -> Vec<(ImageKind, u32)> {
    images.iter().map(|i| (i.kind, i.arch)).collect()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Where each entry header of a single fatbinary starts, read independently of the library.
fn entry_offsets(fatbin: &[u8]) -> Vec<usize> {
    let end = 16 + u64_at(fatbin, 8) as usize;
    let mut at = 16;
    let mut offsets = Vec::new();
    while at < end {
        offsets.push(at);
        at += u32_at(fatbin, at + 4) as usize + u64_at(fatbin, at + 8) as usize;
    }
    offsets
}

#[test]
fn the_minify_rule_matches_a_hand_written_case() {
    let ptx =
        "//\n// header\n\t.reg .b32 \t%r<7>;  // why\n\t.file\t1 \"a  b//c.cu\"\n\tcall (x), \n";
    assert_eq!(
        minify(ptx),
        "\n\n.reg .b32 %r<7>; \n.file\t1 \"a  b//c.cu\"\ncall (x), \n"
    );
}

#[test]
fn every_compression_mode_gives_nvccs_ptx() {
    let ptx = expected_ptx("kernels.ptx");
    let reference = images(&fixture("kernels.none.fatbin")).unwrap();
    let cubin = &reference[0].data;
    for (mode, ptx_compression, cubin_compression) in [
        ("default", Compression::Zstd, Compression::None),
        ("balance", Compression::Zstd, Compression::None),
        ("size", Compression::Zstd, Compression::Zstd),
        ("speed", Compression::Lz4, Compression::None),
        ("none", Compression::None, Compression::None),
        ("no-compress", Compression::None, Compression::None),
    ] {
        let found = images(&fixture(&format!("kernels.{mode}.fatbin"))).unwrap();
        assert_eq!(
            kinds(&found),
            [(ImageKind::Cubin, 75), (ImageKind::Ptx, 75)],
            "{mode}"
        );
        assert_eq!(found[0].compression, cubin_compression, "{mode}");
        assert_eq!(found[1].compression, ptx_compression, "{mode}");
        assert_eq!(&found[0].data, cubin, "{mode}: the cubin");
        assert!(found[0].data.starts_with(b"\x7fELF"), "{mode}");
        assert_eq!(text(&found[1]), ptx, "{mode}: the PTX");
        assert_eq!(found[1].name, None, "{mode}");
        assert_eq!(found[1].ptxas_options, None, "{mode}");
    }
}

#[test]
fn the_ptx_keeps_nvccs_lines_and_drops_the_nul() {
    let nvcc = String::from_utf8(fixture("kernels.ptx")).unwrap();
    let found = images(&fixture("kernels.default.fatbin")).unwrap();
    let ptx = text(&found[1]);
    assert!(!found[1].data.contains(&0));
    assert_eq!(ptx.lines().count(), nvcc.lines().count());
    let entry_line = |t: &str| {
        t.lines()
            .position(|l| l.contains(".entry _Z3addPKfS0_Pfi("))
    };
    assert_eq!(entry_line(ptx), entry_line(&nvcc));
    assert!(entry_line(ptx).is_some());
    assert!(ptx.contains(".const .align 4 .b8 scale[16]"));
    assert!(ptx.contains(".global .align 4 .u32 counter;"));
    assert!(ptx.contains(".entry _Z4fillIfEvPT_S0_i("));
}

#[test]
fn a_multi_arch_build_has_each_ptx_and_cubin() {
    let found = images(&fixture("kernels.multi.fatbin")).unwrap();
    assert_eq!(
        kinds(&found),
        [
            (ImageKind::Ptx, 75),
            (ImageKind::Cubin, 90),
            (ImageKind::Ptx, 90)
        ]
    );
    assert_eq!(text(&found[0]), expected_ptx("kernels.ptx"));
    assert_eq!(text(&found[2]), expected_ptx("kernels.compute_90.ptx"));
    assert!(text(&found[2]).contains(".target sm_90"));
}

#[test]
fn ptx_for_takes_the_newest_not_newer_than_the_device_else_the_oldest() {
    let found = images(&fixture("kernels.multi.fatbin")).unwrap();
    let ptx75 = expected_ptx("kernels.ptx");
    let ptx90 = expected_ptx("kernels.compute_90.ptx");
    for (device, arch, ptx) in [
        (75, 75, &ptx75),
        (89, 75, &ptx75),
        (90, 90, &ptx90),
        (120, 90, &ptx90),
        (60, 75, &ptx75),
    ] {
        assert_eq!(
            ptx_for(&found, device),
            Some((arch, ptx.clone())),
            "sm_{device}"
        );
    }
    let cubins_only: Vec<Image> = found
        .into_iter()
        .filter(|i| i.kind == ImageKind::Cubin)
        .collect();
    assert_eq!(ptx_for(&cubins_only, 90), None);
    assert_eq!(ptx_for(&[], 90), None);
}

#[test]
fn ptx_for_prefers_the_first_of_equals() {
    let image = |arch, text: &str| Image {
        kind: ImageKind::Ptx,
        arch,
        compression: Compression::None,
        name: None,
        ptxas_options: None,
        data: text.as_bytes().to_vec(),
    };
    let found = [
        image(80, "b"),
        image(70, "c"),
        image(80, "a"),
        image(70, "d"),
    ];
    assert_eq!(ptx_for(&found, 86), Some((80, "b".into())));
    assert_eq!(ptx_for(&found, 60), Some((70, "c".into())));
}

#[test]
fn names_and_ptxas_options_come_from_the_entry_header() {
    let found = images(&fixture("kernels.ident.fatbin")).unwrap();
    assert_eq!(
        kinds(&found),
        [(ImageKind::Cubin, 75), (ImageKind::Ptx, 75)]
    );
    assert_eq!(found[0].name.as_deref(), Some("kernels.cu"));
    assert_eq!(found[1].name.as_deref(), Some("kernels.cu"));
    assert_eq!(found[0].ptxas_options, None);
    assert_eq!(
        found[1].ptxas_options.as_deref(),
        Some("-O3 --generate-line-info")
    );
    assert_eq!(text(&found[1]), expected_ptx("kernels.ptx"));
}

#[test]
fn concatenated_fatbins_are_read_in_turn() {
    let mut section = fixture("kernels.default.fatbin");
    section.extend(fixture("kernels.speed.fatbin"));
    section.extend(fixture("kernels.multi.fatbin"));
    let found = images(&section).unwrap();
    assert_eq!(found.len(), 7);
    assert_eq!(
        found.iter().map(|i| i.compression).collect::<Vec<_>>(),
        [
            Compression::None,
            Compression::Zstd,
            Compression::None,
            Compression::Lz4,
            Compression::Zstd,
            Compression::None,
            Compression::Zstd
        ]
    );
    let ptx = expected_ptx("kernels.ptx");
    assert_eq!(text(&found[1]), ptx);
    assert_eq!(text(&found[3]), ptx);
    assert_eq!(text(&found[6]), expected_ptx("kernels.compute_90.ptx"));

    // A section may end in zero padding; anything else after a fatbinary is an error.
    section.extend([0; 24]);
    assert_eq!(images(&section).unwrap().len(), 7);
    let at = section.len();
    section.extend([0xab; 16]);
    match images(&section[..at - 24]).map(|_| images(&section)) {
        Ok(Err(FatbinError::BadMagic { offset, found })) => {
            assert_eq!((offset, found), (at - 24, 0));
        }
        other => panic!("expected BadMagic, got {other:?}"),
    }
    section.drain(at - 24..at);
    match images(&section) {
        Err(FatbinError::BadMagic { offset, found }) => {
            assert_eq!((offset, found), (at - 24, 0xabababab));
        }
        other => panic!("expected BadMagic, got {other:?}"),
    }
}

#[test]
fn a_two_file_executable_carries_three_fatbins() {
    let found = executable_fatbins(&fixture("two_units")).unwrap();
    assert_eq!(
        kinds(&found),
        [
            (ImageKind::Cubin, 75),
            (ImageKind::Cubin, 75),
            (ImageKind::Ptx, 75),
            (ImageKind::Cubin, 75),
            (ImageKind::Ptx, 75)
        ]
    );
    assert_eq!(text(&found[2]), expected_ptx("main.ptx"));
    assert_eq!(text(&found[4]), expected_ptx("kernels.ptx"));
    assert!(text(&found[2]).contains(".entry _Z5twicePfi("));
}

#[test]
fn a_file_without_device_code_says_so() {
    let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let err = executable_fatbins(&me).unwrap_err();
    assert!(matches!(err, FatbinError::NoDeviceCode), "{err:?}");
    assert!(err.to_string().contains("was it built by nvcc?"));

    let err = executable_fatbins(&fixture("kernels.default.fatbin")).unwrap_err();
    assert!(matches!(err, FatbinError::NotElf), "{err:?}");

    let mut elf32 = fixture("two_units");
    elf32[4] = 1;
    let err = executable_fatbins(&elf32).unwrap_err();
    assert!(
        matches!(
            err,
            FatbinError::UnsupportedElf {
                class: 1,
                encoding: 1
            }
        ),
        "{err:?}"
    );

    let exe = fixture("two_units");
    let err = executable_fatbins(&exe[..exe.len() - 1]).unwrap_err();
    assert!(matches!(err, FatbinError::BadElf(_)), "{err:?}");
}

/// nvcc's `__fatBinC_Wrapper_t`.
#[repr(C)]
struct Wrapper {
    magic: u32,
    version: u32,
    data: *const u64,
    filename_or_fatbins: *const c_void,
}

/// `bytes` in 8-byte-aligned memory, as nvcc's `.nv_fatbin` keeps a fatbinary.
fn aligned(bytes: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; bytes.len().div_ceil(8)];
    for (word, chunk) in words.iter_mut().zip(bytes.chunks(8)) {
        let mut b = [0; 8];
        b[..chunk.len()].copy_from_slice(chunk);
        *word = u64::from_le_bytes(b);
    }
    words
}

fn from_wrapper(magic: u32, data: *const u64) -> Result<Vec<Image>, FatbinError> {
    let wrapper = Wrapper {
        magic,
        version: 1,
        data,
        filename_or_fatbins: std::ptr::null(),
    };
    // SAFETY: the wrapper lives on this frame, and `data` is null or a fatbinary in memory.
    unsafe { images_from_wrapper((&raw const wrapper).cast()) }
}

/// A program built with `-rdc=true` registers one wrapper of version 2: its data is the device
/// link's fatbinary, and its fourth field the NULL-terminated list of each unit's own.
#[test]
fn a_linked_wrapper_leads_to_every_units_fatbin() {
    let (one, two) = (
        fixture("kernels.default.fatbin"),
        fixture("kernels.none.fatbin"),
    );
    let (one_memory, two_memory) = (aligned(&one), aligned(&two));
    // The device link's own fatbinary: a header and nothing after it (no machine code).
    let mut linked = FATBIN_MAGIC.to_le_bytes().to_vec();
    linked.extend([1, 0, 16, 0]);
    linked.extend(0u64.to_le_bytes());
    let linked = aligned(&linked);
    let list = [one_memory.as_ptr(), two_memory.as_ptr(), std::ptr::null()];
    let wrapper = Wrapper {
        magic: WRAPPER_MAGIC,
        version: 2,
        data: linked.as_ptr(),
        filename_or_fatbins: list.as_ptr().cast(),
    };
    // SAFETY: the wrapper, its data and the list's fatbinaries live on this frame.
    let units = unsafe { units_from_wrapper((&raw const wrapper).cast()) }.unwrap();
    assert_eq!(
        units,
        [vec![], images(&one).unwrap(), images(&two).unwrap()]
    );
    let texts = ptx_of_units(&units, 90).unwrap();
    assert_eq!(
        texts.len(),
        2,
        "the linked fatbinary has no PTX; each unit has its own"
    );

    // Version 1: the fourth field is a file name, never a list.
    let single = Wrapper {
        version: 1,
        ..wrapper
    };
    // SAFETY: as above.
    let units = unsafe { units_from_wrapper((&raw const single).cast()) }.unwrap();
    assert_eq!(units, [Vec::<Image>::new()]);
    assert_eq!(ptx_of_units(&units, 90), None);
}

/// `-lcudadevrt` adds the device runtime library's unit, whose PTX defines the `__cudaCDP2…`
/// functions the emulator provides itself: it is left out of the link.
#[test]
fn the_device_runtime_librarys_unit_is_left_out() {
    let user = images(&fixture("kernels.default.fatbin")).unwrap();
    let library = vec![Image {
        kind: ImageKind::Ptx,
        arch: 121,
        compression: Compression::None,
        name: None,
        ptxas_options: None,
        data: b".version 9.0\n.visible .func (.param .b32 func_retval0) __cudaCDP2Malloc(\n"
            .to_vec(),
    }];
    let texts = ptx_of_units(&[user.clone(), library], 90).unwrap();
    assert_eq!(texts, [ptx_for(&user, 90).unwrap().1]);
}

#[test]
fn the_wrapper_leads_to_exactly_one_fatbin() {
    let fatbin = fixture("kernels.default.fatbin");
    // What follows the fatbinary in memory is not read: it would be a bad magic number.
    let mut memory = fatbin.clone();
    memory.extend([0xab; 64]);
    let memory = aligned(&memory);
    assert_eq!(
        from_wrapper(WRAPPER_MAGIC, memory.as_ptr()).unwrap(),
        images(&fatbin).unwrap()
    );

    let err = from_wrapper(0x1234_5678, memory.as_ptr()).unwrap_err();
    assert!(
        matches!(err, FatbinError::BadWrapperMagic { found: 0x1234_5678 }),
        "{err:?}"
    );
    let err = from_wrapper(WRAPPER_MAGIC, std::ptr::null()).unwrap_err();
    assert!(matches!(err, FatbinError::NullData), "{err:?}");
    // SAFETY: null is allowed.
    let err = unsafe { images_from_wrapper(std::ptr::null()) }.unwrap_err();
    assert!(matches!(err, FatbinError::NullWrapper), "{err:?}");
    let zeros = [0u64; 2];
    let err = from_wrapper(WRAPPER_MAGIC, zeros.as_ptr()).unwrap_err();
    assert!(
        matches!(
            err,
            FatbinError::BadMagic {
                offset: 0,
                found: 0
            }
        ),
        "{err:?}"
    );
}

#[test]
fn damaged_headers_are_named() {
    let good = fixture("kernels.default.fatbin");
    assert_eq!(u32_at(&good, 0), FATBIN_MAGIC);

    let mut bad = good.clone();
    bad[0] ^= 1;
    assert!(matches!(
        images(&bad),
        Err(FatbinError::BadMagic { offset: 0, .. })
    ));

    let mut bad = good.clone();
    bad[4] = 2;
    assert!(matches!(
        images(&bad),
        Err(FatbinError::UnsupportedVersion {
            offset: 0,
            version: 2
        })
    ));

    for cut in [0, 10, 16, 40, good.len() - 1] {
        let err = images(&good[..cut]).unwrap_err();
        assert!(
            matches!(err, FatbinError::Truncated { .. }),
            "{cut}: {err:?}"
        );
        assert!(err.to_string().contains("cut short"), "{err}");
    }

    let ptx_entry = entry_offsets(&good)[1];
    let mut bad = good.clone();
    bad[ptx_entry + 4..ptx_entry + 8].copy_from_slice(&32u32.to_le_bytes());
    let err = images(&bad).unwrap_err();
    assert!(matches!(err, FatbinError::BadEntry { .. }), "{err:?}");
    assert!(err.to_string().contains("PTX for sm_75"), "{err}");

    let mut bad = good.clone();
    bad[ptx_entry + 41] |= 0x20;
    let err = images(&bad).unwrap_err();
    assert!(
        matches!(err, FatbinError::UnknownCompression { flags: 0xa011, .. }),
        "{err:?}"
    );
}

#[test]
fn damaged_payloads_name_their_entry() {
    // zstd: a broken frame, then a header that says one byte less or more than the frame holds.
    let good = fixture("kernels.default.fatbin");
    let ptx_entry = entry_offsets(&good)[1];
    let payload = ptx_entry + u32_at(&good, ptx_entry + 4) as usize;
    let mut bad = good.clone();
    bad[payload] ^= 0xff;
    let err = images(&bad).unwrap_err();
    assert!(
        matches!(err, FatbinError::Decompress { format: "zstd", .. }),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains("entry 2 of the fatbinary at byte 0 (PTX for sm_75)"),
        "{message}"
    );
    let uncompressed = u64_at(&good, ptx_entry + 56);
    for wrong in [uncompressed - 1, uncompressed + 1] {
        let mut bad = good.clone();
        bad[ptx_entry + 56..ptx_entry + 64].copy_from_slice(&wrong.to_le_bytes());
        let err = images(&bad).unwrap_err();
        assert!(
            matches!(err, FatbinError::SizeMismatch { expected, .. } if expected == wrong),
            "{err:?}"
        );
    }

    // LZ4: a match reaching before the start, then too small an output, then too large a claim.
    let good = fixture("kernels.speed.fatbin");
    let ptx_entry = entry_offsets(&good)[1];
    let payload = ptx_entry + u32_at(&good, ptx_entry + 4) as usize;
    let mut bad = good.clone();
    bad[payload + 2..payload + 4].copy_from_slice(&0xfff0u16.to_le_bytes());
    let err = images(&bad).unwrap_err();
    assert!(
        matches!(err, FatbinError::Decompress { format: "LZ4", .. }),
        "{err:?}"
    );
    let uncompressed = u64_at(&good, ptx_entry + 56);
    let mut bad = good.clone();
    bad[ptx_entry + 56..ptx_entry + 64].copy_from_slice(&(uncompressed - 1).to_le_bytes());
    assert!(matches!(
        images(&bad),
        Err(FatbinError::Decompress { format: "LZ4", .. })
    ));
    let mut bad = good.clone();
    bad[ptx_entry + 56..ptx_entry + 64].copy_from_slice(&(uncompressed + 1).to_le_bytes());
    assert!(matches!(
        images(&bad),
        Err(FatbinError::SizeMismatch { .. })
    ));
    let mut bad = good.clone();
    bad[ptx_entry + 56..ptx_entry + 64].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        images(&bad),
        Err(FatbinError::Decompress { format: "LZ4", .. })
    ));
}

const FATBINS: [&str; 8] = [
    "kernels.default.fatbin",
    "kernels.balance.fatbin",
    "kernels.size.fatbin",
    "kernels.speed.fatbin",
    "kernels.none.fatbin",
    "kernels.no-compress.fatbin",
    "kernels.multi.fatbin",
    "kernels.ident.fatbin",
];

/// Edits to a real file: byte changes anywhere, little-endian words written over header fields
/// (where sizes and offsets live), and sometimes a cut.
type Damage = (
    usize,
    Vec<(usize, u8)>,
    Vec<(usize, usize, u64)>,
    Option<usize>,
);

fn damage() -> impl Strategy<Value = Damage> {
    (
        0..FATBINS.len(),
        prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        prop::collection::vec((any::<usize>(), 0..80usize, any::<u64>()), 0..4),
        prop::option::weighted(0.25, any::<usize>()),
    )
}

fn apply(file: &mut [u8], headers: &[usize], bytes: &[(usize, u8)], words: &[(usize, usize, u64)]) {
    for &(at, value) in bytes {
        let at = at % file.len();
        file[at] = value;
    }
    for &(which, within, value) in words {
        let at = headers[which % headers.len()] + within;
        let width = if within % 8 == 0 { 8 } else { 4 };
        if at + width <= file.len() {
            file[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        }
    }
}

proptest! {
    #[test]
    fn damaged_fatbins_never_panic((which, bytes, words, cut) in damage()) {
        let mut file = fixture(FATBINS[which]);
        let mut headers = vec![0];
        headers.extend(entry_offsets(&file));
        apply(&mut file, &headers, &bytes, &words);
        if let Some(cut) = cut {
            file.truncate(cut % (file.len() + 1));
        }
        match images(&file) {
            Ok(found) => prop_assert!(found.iter().all(|i| i.kind != ImageKind::Ptx || !i.data.ends_with(&[0]))),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        let _ = ptx_for(&images(&file).unwrap_or_default(), 75);
        let memory = aligned(&file);
        if file.len() >= 16 && u64_at(&file, 8) <= file.len() as u64 - 16 && u32_at(&file, 4) == 0x10_0001 {
            // The header's length fits the copy, the wrapper's one promise.
            let _ = from_wrapper(WRAPPER_MAGIC, memory.as_ptr());
        }
    }

    #[test]
    fn damaged_executables_never_panic(
        bytes in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        header_bytes in prop::collection::vec((0..64usize, any::<u8>()), 0..4),
        cut in prop::option::weighted(0.25, any::<usize>()),
    ) {
        let mut file = fixture("two_units");
        for (at, value) in bytes {
            let at = at % file.len();
            file[at] = value;
        }
        for (at, value) in header_bytes {
            file[at] = value;
        }
        if let Some(cut) = cut {
            file.truncate(cut % (file.len() + 1));
        }
        if let Err(e) = executable_fatbins(&file) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = images(&bytes);
        let _ = executable_fatbins(&bytes);
        let mut fatbin = FATBIN_MAGIC.to_le_bytes().to_vec();
        fatbin.extend(&bytes);
        let _ = images(&fatbin);
    }
}
