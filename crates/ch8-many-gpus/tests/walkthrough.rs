//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch8_many_gpus::walkthrough::{Options, walkthrough};
use harness::testing::{book_sections, scratch_dir};
use harness::{BackendChoice, EmuSettings, Gpus};

#[test]
fn walkthrough_on_two_emulated_devices() {
    let mut gpus = Gpus::open(BackendChoice::Emu, 2, 2).expect("the emulator always opens");
    gpus.set_emu_settings(EmuSettings::default());
    let out = scratch_dir("ch8-snapshot");
    let options = Options::new(2024, out.clone());
    let mut printed = Vec::new();
    walkthrough(&mut gpus, &options, &mut printed).expect("the walk-through runs on the emulator");
    std::fs::remove_dir_all(&out).ok();
    let sections = book_sections(printed, &out, "ch8-many-gpus");
    assert_eq!(
        sections.len(),
        11,
        "a header, nine variants and the timing section: {sections:#?}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch8_{name}"), text);
        }
    });
}
