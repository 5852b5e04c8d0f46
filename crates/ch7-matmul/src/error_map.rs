//! Which elements of C a kernel got wrong, as a PNG: one square per element, tile edges drawn.

use std::path::Path;

use harness::{HarnessError, Result};
use plotters::prelude::*;

use crate::TILE;

/// Screen pixels per element of C, so a 48 × 36 matrix is readable in the book.
pub const CELL: u32 = 8;

const WITHIN_BOUND: RGBColor = RGBColor(200, 230, 200);
const OUTSIDE_BOUND: RGBColor = RGBColor(220, 30, 30);
const TILE_EDGE: RGBColor = RGBColor(60, 60, 60);

/// Writes a `rows × cols` map: pale green where `wrong[i]` is false, red where it is true,
/// with a dark line every `TILE` elements, where one block's tile of C meets the next.
pub fn write_error_map(path: &Path, wrong: &[bool], rows: u32, cols: u32) -> Result<()> {
    if wrong.len() != rows as usize * cols as usize {
        return Err(HarnessError::Invalid(format!(
            "an error map of {rows} × {cols} needs {} values",
            rows as usize * cols as usize
        )));
    }
    let fail = |error: &dyn std::fmt::Display| HarnessError::Plot {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    let size = (cols * CELL + 1, rows * CELL + 1);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    for (index, &is_wrong) in wrong.iter().enumerate() {
        let (row, col) = (index as u32 / cols, index as u32 % cols);
        let corner = ((col * CELL) as i32, (row * CELL) as i32);
        let far = (corner.0 + CELL as i32 - 1, corner.1 + CELL as i32 - 1);
        let colour = if is_wrong {
            OUTSIDE_BOUND
        } else {
            WITHIN_BOUND
        };
        root.draw(&Rectangle::new([corner, far], colour.filled()))
            .map_err(|e| fail(&e))?;
    }
    let (width, height) = ((cols * CELL) as i32, (rows * CELL) as i32);
    for col in (0..=cols).step_by(TILE as usize) {
        let x = (col * CELL) as i32;
        root.draw(&PathElement::new([(x, 0), (x, height)], TILE_EDGE))
            .map_err(|e| fail(&e))?;
    }
    for row in (0..=rows).step_by(TILE as usize) {
        let y = (row * CELL) as i32;
        root.draw(&PathElement::new([(0, y), (width, y)], TILE_EDGE))
            .map_err(|e| fail(&e))?;
    }
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_written_and_bad_sizes_refused() {
        let dir = std::env::temp_dir().join(format!("racetrack-ch7-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("map.png");
        write_error_map(&path, &[false, true, true, false, false, false], 2, 3).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(write_error_map(&path, &[false; 5], 2, 3).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
