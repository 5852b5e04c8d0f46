//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch2_reductions::walkthrough::{Options, walkthrough};
use harness::testing::{book_sections, scratch_dir};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = scratch_dir("ch2-snapshot");
    let options = Options::new(2024, out.clone(), false);
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    for image in ["blobs.png", "blobs_racy.png", "blobs_side_by_side.png"] {
        let bytes = std::fs::read(out.join(image)).expect("the blobs images are written");
        assert_eq!(&bytes[1..4], b"PNG", "{image}");
    }
    std::fs::remove_dir_all(&out).ok();

    let sections = book_sections(printed, &out, "ch2-reductions");
    assert_eq!(
        sections.len(),
        16,
        "a header, fourteen variants and the timing section: {sections:#?}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch2_{name}"), text);
        }
    });
}
