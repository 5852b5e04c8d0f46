//! Boards as PNG images, drawn cell by cell with plotters' bitmap backend: a strip of frames
//! of one run, or the CPU's board beside a kernel's with the cells that differ in red. Each
//! image carries its title, a caption over each board and a legend of its colours, so it
//! teaches on its own, away from the page and the terminal that printed it.

use std::path::Path;

use font8x8::UnicodeFonts;

use harness::{HarnessError, Result};
use plotters::prelude::*;

use crate::Board;

/// White pixels between two panels.
const GAP: u32 = 12;
/// White pixels around the whole image.
const MARGIN: u32 = 10;
/// Heights of the title line, of the captions over the boards and of the legend line.
const TITLE_HEIGHT: u32 = 30;
const CAPTION_HEIGHT: u32 = 22;
const LEGEND_HEIGHT: u32 = 28;
/// Text is drawn from an 8 × 8 bitmap font, each font pixel a square of this many: plotters'
/// bitmap backend draws no text without a system font, and an image must be the same on every
/// machine (the book's copies are compared byte for byte).
const TITLE_SCALE: u32 = 2;
const LABEL_SCALE: u32 = 2;
/// The axes' numbers: the font at its own size, 8 pixels high.
const AXIS_SCALE: u32 = 1;
/// Height of the column numbers over a board, and the space between a row's number and it.
const AXIS_HEIGHT: u32 = 12;
const AXIS_GAP: u32 = 3;
/// The fewest pixels between two numbers of an axis.
const AXIS_ROOM: u32 = 6;
const TEXT: RGBColor = RGBColor(20, 20, 20);
const GRID: RGBColor = RGBColor(222, 222, 222);
/// The border of a legend's swatch.
const GRID_BORDER: RGBColor = RGBColor(150, 150, 150);
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

/// Writes `frames` side by side, left to right, e.g. generations 0, 30, 60 of one board, under
/// `title`, each with its caption (`generation 30`).
pub fn write_frames_png(
    path: &Path,
    title: &str,
    frames: &[&Board],
    captions: &[String],
) -> Result<()> {
    let panels: Vec<Vec<RGBColor>> = frames
        .iter()
        .map(|board| board.cells().iter().map(|&c| colour(c, c)).collect())
        .collect();
    let picture = Picture {
        title,
        captions,
        legend: &[(ALIVE, "alive"), (DEAD, "dead")],
    };
    write_panels(path, &picture, frames, &panels)
}

/// Writes the CPU's board on the left and the kernel's on the right, where a cell the kernel
/// got wrong is red (alive but should be dead) or pink (dead but should be alive).
pub fn write_diff_png(path: &Path, title: &str, want: &Board, got: &Board) -> Result<()> {
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
    let picture = Picture {
        title,
        captions: &[
            "the CPU's board".to_string(),
            "the kernel's board".to_string(),
        ],
        legend: &[
            (ALIVE, "alive"),
            (DEAD, "dead"),
            (WRONGLY_ALIVE, "alive, should be dead"),
            (WRONGLY_DEAD, "dead, should be alive"),
        ],
    };
    write_panels(path, &picture, &[want, got], &[left, right])
}

/// The words drawn around the boards.
struct Picture<'a> {
    title: &'a str,
    /// One per panel, over it.
    captions: &'a [String],
    legend: &'a [(RGBColor, &'a str)],
}

/// Width in pixels of `text` drawn at `scale`.
fn text_width(text: &str, scale: u32) -> u32 {
    text.chars().count() as u32 * 8 * scale
}

/// Draws `text` with its top left corner at `at`; a character the font lacks is a blank.
fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    text: &str,
    at: (u32, u32),
    scale: u32,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    for (index, c) in text.chars().enumerate() {
        let Some(glyph) = font8x8::BASIC_FONTS.get(c) else {
            continue;
        };
        let left = at.0 + index as u32 * 8 * scale;
        for (row, bits) in glyph.iter().enumerate() {
            for column in 0..8 {
                if bits & (1 << column) != 0 {
                    let x = (left + column * scale) as i32;
                    let y = (at.1 + row as u32 * scale) as i32;
                    // plotters fills a rectangle up to, not including, its far corner
                    let square = [(x, y), (x + scale as i32, y + scale as i32)];
                    area.draw(&Rectangle::new(square, TEXT.filled()))?;
                }
            }
        }
    }
    Ok(())
}

/// Cells between two numbered cells of an axis: a power of two from 4, so that the numbers
/// fall on the edges of 8 × 8, 16 × 16 or 32 × 32 blocks, far enough apart for their widths.
fn axis_step(cells: u32, cell: u32) -> u32 {
    let widest = text_width(&cells.saturating_sub(1).to_string(), AXIS_SCALE);
    let mut step = 4;
    while step * cell < widest + AXIS_ROOM && step < cells {
        step *= 2;
    }
    step
}

/// The numbered cells of an axis of `cells` cells: 0, `step`, 2 · `step`, …
fn axis_ticks(cells: u32, step: u32) -> impl Iterator<Item = u32> {
    (0..cells).step_by(step.max(1) as usize)
}

fn colour(got: u8, want: u8) -> RGBColor {
    match (got, want) {
        (1, 1) => ALIVE,
        (0, 0) => DEAD,
        (1, _) => WRONGLY_ALIVE,
        _ => WRONGLY_DEAD,
    }
}

fn write_panels(
    path: &Path,
    picture: &Picture<'_>,
    boards: &[&Board],
    panels: &[Vec<RGBColor>],
) -> Result<()> {
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
    let fail = |error: &dyn std::fmt::Display| HarnessError::Plot {
        path: path.to_path_buf(),
        message: error.to_string(),
    };
    let cell = cell_pixels(first);
    let grid_line = u32::from(cell >= 4);
    let count = boards.len() as u32;
    // Each board has its column numbers over it and its row numbers to its left.
    let (column_step, row_step) = (axis_step(width, cell), axis_step(height, cell));
    let rows_width = text_width(&height.saturating_sub(1).to_string(), AXIS_SCALE) + AXIS_GAP;
    let board_width = width * cell + grid_line;
    let panel_width = rows_width + board_width;
    let panel_height = height * cell + grid_line;
    let panels_width = count * panel_width + (count - 1) * GAP;
    let top = MARGIN + TITLE_HEIGHT + CAPTION_HEIGHT + AXIS_HEIGHT;
    let legend_width: u32 = picture
        .legend
        .iter()
        .map(|(_, meaning)| 20 + text_width(meaning, LABEL_SCALE) + 24)
        .sum();
    let size = (
        (panels_width + 2 * MARGIN)
            .max(text_width(picture.title, TITLE_SCALE) + 2 * MARGIN)
            .max(legend_width + 2 * MARGIN),
        top + panel_height + LEGEND_HEIGHT + MARGIN,
    );
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    draw_text(&root, picture.title, (MARGIN, MARGIN + 4), TITLE_SCALE).map_err(|e| fail(&e))?;
    for (index, colours) in panels.iter().enumerate() {
        let panel_left = MARGIN + index as u32 * (panel_width + GAP);
        if let Some(caption) = picture.captions.get(index) {
            draw_text(
                &root,
                caption,
                (panel_left, MARGIN + TITLE_HEIGHT),
                LABEL_SCALE,
            )
            .map_err(|e| fail(&e))?;
        }
        let left = panel_left + rows_width;
        for column in axis_ticks(width, column_step) {
            let at = (left + column * cell, top - AXIS_HEIGHT + 1);
            draw_text(&root, &column.to_string(), at, AXIS_SCALE).map_err(|e| fail(&e))?;
        }
        for row in axis_ticks(height, row_step) {
            let label = row.to_string();
            let right = left - AXIS_GAP;
            let at = (right - text_width(&label, AXIS_SCALE), top + row * cell);
            draw_text(&root, &label, at, AXIS_SCALE).map_err(|e| fail(&e))?;
        }
        let frame = [
            (left as i32, top as i32),
            ((left + board_width) as i32, (top + panel_height) as i32),
        ];
        root.draw(&Rectangle::new(frame, GRID.filled()))
            .map_err(|e| fail(&e))?;
        for (offset, colour) in colours.iter().enumerate() {
            let x = offset as u32 % width;
            let y = offset as u32 / width;
            let corner = (
                (left + x * cell + grid_line) as i32,
                (top + y * cell + grid_line) as i32,
            );
            let far = (
                corner.0 + (cell - grid_line) as i32,
                corner.1 + (cell - grid_line) as i32,
            );
            root.draw(&Rectangle::new([corner, far], colour.filled()))
                .map_err(|e| fail(&e))?;
        }
    }
    // The legend: a swatch with a grey border (white cells need one), then its meaning.
    let legend_y = top + panel_height + 10;
    let mut x = MARGIN;
    for (colour, meaning) in picture.legend {
        let swatch = [
            (x as i32, legend_y as i32),
            (x as i32 + 14, legend_y as i32 + 14),
        ];
        root.draw(&Rectangle::new(swatch, colour.filled()))
            .map_err(|e| fail(&e))?;
        root.draw(&Rectangle::new(swatch, GRID_BORDER.stroke_width(1)))
            .map_err(|e| fail(&e))?;
        draw_text(&root, meaning, (x + 20, legend_y), LABEL_SCALE).map_err(|e| fail(&e))?;
        x += 20 + text_width(meaning, LABEL_SCALE) + 24;
    }
    root.present().map_err(|e| fail(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_are_numbered_at_block_edges_far_enough_apart() {
        // 64 cells of 6 pixels: "63" is 16 pixels wide, so every 4th cell (24 pixels)
        assert_eq!(axis_step(64, 6), 4);
        assert_eq!(axis_ticks(64, 4).take(3).collect::<Vec<_>>(), [0, 4, 8]);
        // 400 cells of 1 pixel: "399" is 24 pixels, so every 32nd
        assert_eq!(axis_step(400, 1), 32);
        // a board narrower than the first step: only 0
        assert_eq!(axis_ticks(3, axis_step(3, 8)).collect::<Vec<_>>(), [0]);
    }

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
        let captions = ["generation 0".to_string(), "generation 1".to_string()];
        write_frames_png(&path, "two frames", &[&board, &board.step()], &captions).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        write_diff_png(&dir.join("diff.png"), "a diff", &board, &board.step()).unwrap();
        let other = Board::dead(6, 10).unwrap();
        assert!(write_diff_png(&path, "a diff", &board, &other).is_err());
        assert!(write_frames_png(&path, "two frames", &[&board, &other], &captions).is_err());
        assert!(write_frames_png(&path, "none", &[], &[]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
