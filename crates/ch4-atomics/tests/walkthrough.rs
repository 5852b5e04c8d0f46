//! The walk-through as a learner without a GPU sees it, pinned by snapshots the book includes:
//! one snapshot per section, so each page paragraph shows exactly the output it discusses.

use ch4_atomics::walkthrough::{Options, walkthrough};
use harness::testing::{book_sections, scratch_dir};
use harness::{BackendChoice, Device};

#[test]
fn walkthrough_on_the_emulator() {
    let mut device = Device::open(BackendChoice::Emu).expect("the emulator always opens");
    let out = scratch_dir("ch4-snapshot");
    let options = Options::new(2024, out.clone());
    let mut printed = Vec::new();
    walkthrough(&mut device, &options, &mut printed)
        .expect("the walk-through runs on the emulator");
    let letters =
        std::fs::read_to_string(out.join("letters.svg")).expect("the letter plot is written");
    assert!(letters.contains("lowercase") && letters.contains("uppercase"));
    let lost = std::fs::read_to_string(out.join("lost_updates.svg"))
        .expect("the lost updates are plotted");
    assert!(
        lost.contains("threads per address") && lost.contains("racy") && lost.contains("atomic"),
        "the plot names its axis and both kernels"
    );
    // The plots the book shows are the walk-through's own, from the same seed.
    for (image, text) in [("letters.svg", &letters), ("lost_updates.svg", &lost)] {
        let book_copy = format!(
            "{}/../../book/src/images/ch4-atomics/{image}",
            env!("CARGO_MANIFEST_DIR")
        );
        assert_eq!(
            std::fs::read_to_string(&book_copy).ok().as_ref(),
            Some(text),
            "the book's {image} is stale: run `cargo run -p ch4-atomics -- --backend emu --out book/src/images/ch4-atomics`"
        );
    }
    std::fs::remove_dir_all(&out).ok();

    let sections = book_sections(printed, &out, "ch4-atomics");
    assert_eq!(
        sections.len(),
        16,
        "a header, thirteen variants, the timing section and the climb: {sections:#?}"
    );
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        for (name, text) in sections {
            insta::assert_snapshot!(format!("ch4_{name}"), text);
        }
    });
}
