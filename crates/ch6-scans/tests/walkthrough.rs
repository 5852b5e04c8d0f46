//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch6_scans::walkthrough::{Options, walkthrough};
use harness::testing::{book_sections, scratch_dir};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = scratch_dir("ch6-snapshot");
    let options = Options::new(2024, out.clone());
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    let tree =
        std::fs::read_to_string(out.join("up_sweep_16.svg")).expect("the diagram is written");
    assert!(tree.starts_with("<svg") && tree.contains("up, stride 16"));
    let book_copy = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../book/src/images/ch6-scans/up_sweep_16.svg"
    );
    assert_eq!(
        std::fs::read_to_string(book_copy).ok().as_deref(),
        Some(tree.as_str()),
        "the book's diagram is stale: run `cargo run -p ch6-scans -- --backend emu --out book/src/images/ch6-scans`"
    );
    std::fs::remove_dir_all(&out).ok();

    let sections = book_sections(printed, &out, "ch6-scans");
    assert_eq!(
        sections.len(),
        22,
        "a header, nineteen variants, work and span, and the timing section: {sections:#?}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch6_{name}"), text);
        }
    });
}
