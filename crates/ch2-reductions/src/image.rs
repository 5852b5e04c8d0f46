//! The blobs images as PNG, drawn pixel by pixel with plotters' bitmap backend.

use std::path::Path;

use harness::{HarnessError, Result};
use plotters::prelude::*;

/// Screen pixels per image pixel, so a 192-pixel image is readable in the book.
pub const SCALE: u32 = 2;
/// White columns between the two images of a side-by-side picture.
const GAP: u32 = 8;

/// The colour of one value: green in proportion to the amplitude in [0, 1], as the CUDA by
/// Example bitmap draws it; anything outside [0, 1] (uninitialised shared memory read by a
/// racy kernel) is red.
pub fn colour(value: f32) -> RGBColor {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        RGBColor(0, (value * 255.0).round() as u8, 0)
    } else {
        RGBColor(255, 0, 0)
    }
}

/// Writes a `width × height` row-major image.
pub fn write_png(path: &Path, image: &[f32], width: u32, height: u32) -> Result<()> {
    write_panels(path, &[image], width, height)
}

/// Writes `left` and `right` next to each other, with a white gap between them.
pub fn write_side_by_side_png(
    path: &Path,
    left: &[f32],
    right: &[f32],
    width: u32,
    height: u32,
) -> Result<()> {
    write_panels(path, &[left, right], width, height)
}

fn write_panels(path: &Path, panels: &[&[f32]], width: u32, height: u32) -> Result<()> {
    let pixels = width as usize * height as usize;
    if panels.iter().any(|panel| panel.len() != pixels) {
        return Err(HarnessError::Invalid(format!(
            "an image of {width} × {height} needs {pixels} values"
        )));
    }
    let count = panels.len() as u32;
    let size = (count * width * SCALE + (count - 1) * GAP, height * SCALE);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    let fail = |error: &dyn std::fmt::Display| HarnessError::Plot {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    for (index, panel) in panels.iter().enumerate() {
        let left = index as u32 * (width * SCALE + GAP);
        for (offset, &value) in panel.iter().enumerate() {
            let x = offset as u32 % width;
            let y = offset as u32 / width;
            let corner = ((left + x * SCALE) as i32, (y * SCALE) as i32);
            let far = (corner.0 + SCALE as i32, corner.1 + SCALE as i32);
            root.draw(&Rectangle::new([corner, far], colour(value).filled()))
                .map_err(|e| fail(&e))?;
        }
    }
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_mark_values_outside_the_amplitude_range() {
        assert_eq!(colour(0.0), RGBColor(0, 0, 0));
        assert_eq!(colour(1.0), RGBColor(0, 255, 0));
        assert_eq!(colour(-3.0e8), RGBColor(255, 0, 0));
        assert_eq!(colour(f32::NAN), RGBColor(255, 0, 0));
    }

    #[test]
    fn png_files_are_written() {
        let dir = harness::testing::scratch_dir("ch2-png");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pair.png");
        write_side_by_side_png(&path, &[0.0, 0.5, 1.0, 2.0], &[1.0; 4], 2, 2).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(write_png(&path, &[0.0; 3], 2, 2).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
