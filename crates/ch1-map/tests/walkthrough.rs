//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch1_map::walkthrough::{Options, walkthrough};
use harness::testing::{book_sections, scratch_dir};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = scratch_dir("ch1-snapshot");
    let options = Options::new(2024, out.clone(), false);
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    std::fs::remove_dir_all(&out).ok();
    let sections = book_sections(printed, &out, "ch1-map");
    assert_eq!(
        sections.len(),
        15,
        "a header, twelve variants, the timing section and the climb: {sections:#?}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch1_{name}"), text);
        }
    });
}
