//! Boards as PNG images, drawn cell by cell with plotters' bitmap backend: a strip of frames
//! of one run, or the CPU's board beside a kernel's with the cells that differ in red.

use std::path::Path;

use harness::{HarnessError, Result};
use plotters::prelude::*;

use crate::Board;

/// White pixels between two panels.
const GAP: u32 = 12;
const GRID: RGBColor = RGBColor(222, 222, 222);
const ALIVE: RGBColor = RGBColor(24, 24, 48);
const DEAD: RGBColor = WHITE;
/// Alive in the kernel's board, dead in the CPU's.
const WRONGLY_ALIVE: RGBColor = RGBColor(220, 20, 20);
/// Dead in the kernel's board, alive in the CPU's.
const WRONGLY_DEAD: RGBColor = RGBColor(255, 160, 160);

/// Screen pixels per cell side for a board: large boards get small cells so an image stays
/// under about 400 pixels a side, and cells keep a one-pixel grid line while they are 4 or more.
pub fn cell_pixels(board: &Board) -> u32 {
    (400 / board.width().max(board.height())).clamp(1, 8)
}

/// Writes `frames` side by side, left to right, e.g. generations 0, 30, 60 of one board.
pub fn write_frames_png(path: &Path, frames: &[&Board]) -> Result<()> {
    let panels: Vec<Vec<RGBColor>> = frames
        .iter()
        .map(|board| board.cells().iter().map(|&c| colour(c, c)).collect())
        .collect();
    write_panels(path, frames, &panels)
}

/// Writes the CPU's board on the left and the kernel's on the right, where a cell the kernel
/// got wrong is red (alive but should be dead) or pink (dead but should be alive).
pub fn write_diff_png(path: &Path, want: &Board, got: &Board) -> Result<()> {
    if (want.width(), want.height()) != (got.width(), got.height()) {
        return Err(HarnessError::Invalid(format!(
            "cannot compare a {} × {} board with a {} × {} one",
            got.width(),
            got.height(),
            want.width(),
            want.height()
        )));
    }
    let left = want.cells().iter().map(|&c| colour(c, c)).collect();
    let right = got
        .cells()
        .iter()
        .zip(want.cells())
        .map(|(&g, &w)| colour(g, w))
        .collect();
    write_panels(path, &[want, got], &[left, right])
}

fn colour(got: u8, want: u8) -> RGBColor {
    match (got, want) {
        (1, 1) => ALIVE,
        (0, 0) => DEAD,
        (1, _) => WRONGLY_ALIVE,
        _ => WRONGLY_DEAD,
    }
}

fn write_panels(path: &Path, boards: &[&Board], panels: &[Vec<RGBColor>]) -> Result<()> {
    let Some(first) = boards.first() else {
        return Err(HarnessError::Invalid(
            "an image needs at least one board".into(),
        ));
    };
    let (width, height) = (first.width(), first.height());
    if boards
        .iter()
        .any(|board| (board.width(), board.height()) != (width, height))
    {
        return Err(HarnessError::Invalid(
            "the frames of one image must be boards of one size".into(),
        ));
    }
    let cell = cell_pixels(first);
    let grid_line = u32::from(cell >= 4);
    let count = boards.len() as u32;
    let panel_width = width * cell + grid_line;
    let size = (
        count * panel_width + (count - 1) * GAP,
        height * cell + grid_line,
    );
    let root = BitMapBackend::new(path, size).into_drawing_area();
    let fail = |error: &dyn std::fmt::Display| HarnessError::Plot {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    for (index, colours) in panels.iter().enumerate() {
        let left = index as u32 * (panel_width + GAP);
        let frame = [
            (left as i32, 0),
            (
                (left + panel_width) as i32,
                (height * cell + grid_line) as i32,
            ),
        ];
        root.draw(&Rectangle::new(frame, GRID.filled()))
            .map_err(|e| fail(&e))?;
        for (offset, colour) in colours.iter().enumerate() {
            let x = offset as u32 % width;
            let y = offset as u32 / width;
            let corner = (
                (left + x * cell + grid_line) as i32,
                (y * cell + grid_line) as i32,
            );
            let far = (
                corner.0 + (cell - grid_line) as i32,
                corner.1 + (cell - grid_line) as i32,
            );
            root.draw(&Rectangle::new([corner, far], colour.filled()))
                .map_err(|e| fail(&e))?;
        }
    }
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_cells_are_red_or_pink() {
        assert_eq!(colour(1, 1), ALIVE);
        assert_eq!(colour(0, 0), DEAD);
        assert_eq!(colour(1, 0), WRONGLY_ALIVE);
        assert_eq!(colour(0, 1), WRONGLY_DEAD);
    }

    #[test]
    fn png_files_are_written_and_mismatched_boards_refused() {
        let dir = harness::testing::scratch_dir("ch3-png");
        std::fs::create_dir_all(&dir).unwrap();
        let board = Board::random(10, 6, 0.5, 1).unwrap();
        let path = dir.join("frames.png");
        write_frames_png(&path, &[&board, &board.step()]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        write_diff_png(&dir.join("diff.png"), &board, &board.step()).unwrap();
        let other = Board::dead(6, 10).unwrap();
        assert!(write_diff_png(&path, &board, &other).is_err());
        assert!(write_frames_png(&path, &[&board, &other]).is_err());
        assert!(write_frames_png(&path, &[]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
