//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch3_life::walkthrough::{Options, walkthrough};
use harness::testing::{book_sections, scratch_dir};
use harness::{BackendChoice, Device};

/// The images the book shows, as the walk-through writes them.
const BOOK_IMAGES: [&str; 4] = [
    "glider_gun.png",
    "step_in_place.png",
    "step_floor_blocks.png",
    "iterate_multi_block.png",
];

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = scratch_dir("ch3-snapshot");
    let options = Options::new(2024, out.clone());
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    for image in BOOK_IMAGES {
        let written = std::fs::read(out.join(image)).expect("the image is written");
        assert_eq!(&written[1..4], b"PNG", "{image}");
        let book_copy = format!(
            "{}/../../book/src/images/ch3-life/{image}",
            env!("CARGO_MANIFEST_DIR")
        );
        assert!(
            std::fs::read(&book_copy).ok() == Some(written),
            "the book's {image} is stale: run `cargo run -p ch3-life -- --backend emu --out book/src/images/ch3-life`"
        );
    }
    std::fs::remove_dir_all(&out).ok();

    let sections = book_sections(printed, &out, "ch3-life");
    assert_eq!(
        sections.len(),
        12,
        "a header, nine variants, the timing section and the climb: {sections:#?}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch3_{name}"), text);
        }
    });
}
