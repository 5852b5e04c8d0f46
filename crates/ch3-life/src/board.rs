//! Life boards on a torus, the patterns the chapter seeds them with, and the CPU reference every
//! kernel is compared with, cell for cell.

use std::fmt;

use harness::rand::Rng;
use harness::{HarnessError, Result};

/// Longest side a board may have: the shared-memory kernel computes tile coordinates as signed
/// 32-bit ints.
pub const MAX_SIDE: u32 = 1 << 30;
/// Most cells a board may have: the kernels index cells with 32-bit `y * width + x`.
pub const MAX_CELLS: u64 = 1 << 31;

/// A `width × height` board, row-major, one byte per cell: 1 alive, 0 dead. Its edges wrap
/// around: the cell right of the last column is in column 0, the one below the last row in row 0.
#[derive(Clone, PartialEq, Eq)]
pub struct Board {
    width: u32,
    height: u32,
    cells: Vec<u8>,
}

impl Board {
    /// An empty board.
    pub fn dead(width: u32, height: u32) -> Result<Self> {
        check_size(width, height)?;
        Ok(Self {
            width,
            height,
            cells: vec![0; width as usize * height as usize],
        })
    }

    /// A board from row-major cells, each 0 or 1.
    pub fn from_cells(width: u32, height: u32, cells: Vec<u8>) -> Result<Self> {
        check_size(width, height)?;
        let expected = width as usize * height as usize;
        if cells.len() != expected {
            return Err(HarnessError::Invalid(format!(
                "a {width} × {height} board has {expected} cells, not {}",
                cells.len()
            )));
        }
        if let Some(index) = cells.iter().position(|&cell| cell > 1) {
            return Err(HarnessError::Invalid(format!(
                "cell {index} of the board is {}, but a cell is 0 (dead) or 1 (alive)",
                cells[index]
            )));
        }
        Ok(Self {
            width,
            height,
            cells,
        })
    }

    /// A board where each cell is alive with probability `density`, drawn from `seed`.
    pub fn random(width: u32, height: u32, density: f64, seed: u64) -> Result<Self> {
        if !(0.0..=1.0).contains(&density) {
            return Err(HarnessError::Invalid(format!(
                "a density of {density} is not a probability in [0, 1]"
            )));
        }
        let mut board = Self::dead(width, height)?;
        let mut rng = harness::cli::seeded_rng(seed);
        for cell in &mut board.cells {
            *cell = u8::from(rng.random_bool(density));
        }
        Ok(board)
    }

    /// The same board with `pattern`'s top-left corner at (`x`, `y`), wrapping around the edges.
    pub fn with(mut self, pattern: &Pattern, x: u32, y: u32) -> Self {
        for &(px, py) in &pattern.live {
            let cx = (u64::from(x) + u64::from(px)) % u64::from(self.width);
            let cy = (u64::from(y) + u64::from(py)) % u64::from(self.height);
            self.cells[cy as usize * self.width as usize + cx as usize] = 1;
        }
        self
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    pub fn cells(&self) -> &[u8] {
        &self.cells
    }

    pub fn cell_count(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }

    pub fn is_alive(&self, x: u32, y: u32) -> bool {
        self.cells[y as usize * self.width as usize + x as usize] == 1
    }

    pub fn population(&self) -> u64 {
        self.cells.iter().map(|&cell| u64::from(cell)).sum()
    }

    // ANCHOR: cpu_reference
    /// One generation on the CPU. A live cell with two or three live neighbours lives on, a
    /// dead cell with exactly three comes alive, every other cell is dead next. The eight
    /// neighbours wrap around the edges; on a board one or two cells wide some of them are the
    /// same cell, counted once for each offset that reaches it, as the kernels count them.
    pub fn step(&self) -> Board {
        let width = self.width as usize;
        let mut next = vec![0u8; self.cells.len()];
        for (y, row) in next.chunks_mut(width).enumerate() {
            self.step_row(y, row);
        }
        Board {
            width: self.width,
            height: self.height,
            cells: next,
        }
    }

    /// Row `y` of the next generation, written into `next_row`.
    fn step_row(&self, y: usize, next_row: &mut [u8]) {
        let (width, height) = (self.width as usize, self.height as usize);
        let up = (y + height - 1) % height;
        let down = (y + 1) % height;
        for (x, next) in next_row.iter_mut().enumerate() {
            let left = (x + width - 1) % width;
            let right = (x + 1) % width;
            let alive = [
                (up, left),
                (up, x),
                (up, right),
                (y, left),
                (y, right),
                (down, left),
                (down, x),
                (down, right),
            ]
            .iter()
            .filter(|&&(row, column)| self.cells[row * width + column] == 1)
            .count();
            let cell = self.cells[y * width + x];
            *next = u8::from(alive == 3 || (cell == 1 && alive == 2));
        }
    }
    // ANCHOR_END: cpu_reference

    /// [`Board::step`] with its rows spread over every core: the same rule for every cell, so
    /// the same board. The GPU walk-through's references run a few hundred million cell
    /// updates; the timing table's CPU row times [`Board::step`], one core.
    pub fn step_on_every_core(&self) -> Board {
        use rayon::prelude::*;
        let width = self.width as usize;
        let mut next = vec![0u8; self.cells.len()];
        next.par_chunks_mut(width)
            .enumerate()
            .for_each(|(y, row)| self.step_row(y, row));
        Board {
            width: self.width,
            height: self.height,
            cells: next,
        }
    }

    /// The board `generations` generations later, on the CPU (on every core).
    pub fn after(&self, generations: u32) -> Board {
        (0..generations).fold(self.clone(), |board, _| board.step_on_every_core())
    }

    /// How `self` (a kernel's result) differs from `want` (the CPU's).
    pub fn diff(&self, want: &Board) -> BoardDiff {
        let mut diff = BoardDiff {
            cells: want.cell_count(),
            differing: 0,
            first: None,
            population: self.population(),
            want_population: want.population(),
            size_mismatch: None,
        };
        if (self.width, self.height) != (want.width, want.height) {
            diff.size_mismatch = Some(((self.width, self.height), (want.width, want.height)));
            return diff;
        }
        for (index, (got, expected)) in self.cells.iter().zip(&want.cells).enumerate() {
            if got != expected {
                diff.differing += 1;
                if diff.first.is_none() {
                    let width = self.width as usize;
                    diff.first = Some(((index % width) as u32, (index / width) as u32));
                }
            }
        }
        diff
    }
}

/// Boards print as rows of `#` (alive) and `.` (dead), so a failing test shows the picture.
impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Board {} × {}, population {}",
            self.width,
            self.height,
            self.population()
        )?;
        if self.width > 96 || self.height > 64 {
            return write!(f, "(too large to draw)");
        }
        for row in self.cells.chunks(self.width as usize) {
            let line: String = row
                .iter()
                .map(|&cell| if cell == 1 { '#' } else { '.' })
                .collect();
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

/// A kernel's board compared with the CPU's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardDiff {
    pub cells: u64,
    pub differing: u64,
    /// The first differing cell in row-major order, as (x, y).
    pub first: Option<(u32, u32)>,
    pub population: u64,
    pub want_population: u64,
    /// (got, want) sizes, when they are not even the same.
    pub size_mismatch: Option<((u32, u32), (u32, u32))>,
}

impl BoardDiff {
    pub fn is_match(&self) -> bool {
        self.differing == 0 && self.size_mismatch.is_none()
    }
}

impl fmt::Display for BoardDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(((gw, gh), (ww, wh))) = self.size_mismatch {
            return write!(f, "✗ a {gw} × {gh} board where the CPU has {ww} × {wh}");
        }
        if self.is_match() {
            return write!(
                f,
                "✓ all {} cells match the CPU (population {})",
                self.cells, self.population
            );
        }
        write!(
            f,
            "✗ {} of {} cells differ from the CPU",
            self.differing, self.cells
        )?;
        if let Some((x, y)) = self.first {
            write!(f, ", the first at (x {x}, y {y})")?;
        }
        write!(
            f,
            " (population {}, CPU {})",
            self.population, self.want_population
        )
    }
}

fn check_size(width: u32, height: u32) -> Result<()> {
    let cells = u64::from(width) * u64::from(height);
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE || cells > MAX_CELLS {
        return Err(HarnessError::Invalid(format!(
            "a {width} × {height} board is outside what the kernels handle (sides 1 to 2^30, at most 2^31 cells)"
        )));
    }
    Ok(())
}

/// A pattern's live cells, relative to its top-left corner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub name: &'static str,
    pub width: u32,
    pub height: u32,
    pub live: Vec<(u32, u32)>,
}

impl Pattern {
    /// Reads the plaintext format (`O` alive, `.` dead, one line per row).
    pub fn parse(name: &'static str, text: &str) -> Result<Self> {
        let mut live = Vec::new();
        let (mut width, mut height) = (0u32, 0u32);
        for (y, line) in text.lines().enumerate() {
            for (x, c) in line.chars().enumerate() {
                match c {
                    'O' => live.push((x as u32, y as u32)),
                    '.' => {}
                    other => {
                        return Err(HarnessError::Invalid(format!(
                            "pattern {name}: {other:?} at row {y}, column {x} is neither O nor ."
                        )));
                    }
                }
                width = width.max(x as u32 + 1);
            }
            height = y as u32 + 1;
        }
        Ok(Self {
            name,
            width,
            height,
            live,
        })
    }

    /// The glider: moves one cell right and one down every four generations.
    pub fn glider() -> Self {
        Self::known("glider", GLIDER)
    }

    /// Bill Gosper's glider gun (1970): fires a new glider every 30 generations.
    pub fn gosper_glider_gun() -> Self {
        Self::known("Gosper glider gun", GOSPER_GLIDER_GUN)
    }

    fn known(name: &'static str, text: &str) -> Self {
        match Self::parse(name, text) {
            Ok(pattern) => pattern,
            Err(error) => panic!("a built-in pattern is malformed (caught by its tests): {error}"),
        }
    }
}

const GLIDER: &str = "\
.O.
..O
OOO";

const GOSPER_GLIDER_GUN: &str = "\
........................O...........
......................O.O...........
............OO......OO............OO
...........O...O....OO............OO
OO........O.....O...OO..............
OO........O...O.OO....O.O...........
..........O.....O.......O...........
...........O...O....................
............OO......................";

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Board {
        let width = rows[0].len() as u32;
        let cells = rows
            .iter()
            .flat_map(|row| row.bytes().map(|b| u8::from(b == b'#')))
            .collect();
        Board::from_cells(width, rows.len() as u32, cells).unwrap()
    }

    #[test]
    fn a_blinker_oscillates_and_a_block_stays() {
        let blinker = board(&[".....", "..#..", "..#..", "..#..", "....."]);
        let turned = board(&[".....", ".....", ".###.", ".....", "....."]);
        assert_eq!(blinker.step(), turned);
        assert_eq!(blinker.after(2), blinker);
        let block = board(&["....", ".##.", ".##.", "...."]);
        assert_eq!(block.after(5), block);
    }

    #[test]
    fn every_core_steps_the_board_one_core_steps() {
        for (width, height) in [(1, 1), (2, 3), (37, 29), (300, 211)] {
            let random = Board::random(width, height, 0.35, 11).unwrap();
            assert_eq!(random.step_on_every_core(), random.step());
            let mut serial = random.clone();
            for _ in 0..7 {
                serial = serial.step();
            }
            assert_eq!(random.after(7), serial);
        }
    }

    #[test]
    fn a_glider_crosses_the_edge_and_comes_back() {
        let start = Board::dead(8, 6).unwrap().with(&Pattern::glider(), 5, 3);
        let moved = Board::dead(8, 6).unwrap().with(&Pattern::glider(), 6, 4);
        assert_eq!(start.after(4), moved);
        assert_eq!(start.population(), 5);
        // 8 × 6 cells: back where it started after lcm(8, 6) = 24 diagonal moves of 4 generations.
        assert_eq!(start.after(4 * 24), start);
        assert_ne!(start.after(4 * 8), start);
    }

    #[test]
    fn narrow_boards_count_a_wrapped_neighbour_once_per_offset() {
        // Width 1: the cell's left and right neighbours are itself, so a lone live cell has
        // two live neighbours and survives; a column of two sees 2 + 3 = 5 and dies.
        let lone = Board::from_cells(1, 3, vec![0, 1, 0]).unwrap();
        assert_eq!(lone.step().cells(), &[1, 1, 1]);
        let column = Board::from_cells(1, 4, vec![0, 1, 1, 0]).unwrap();
        assert_eq!(column.step().cells(), &[1, 0, 0, 1]);
    }

    #[test]
    fn the_gun_fires_a_glider_every_thirty_generations() {
        let gun = Pattern::gosper_glider_gun();
        assert_eq!((gun.width, gun.height, gun.live.len()), (36, 9, 36));
        let board = Board::dead(64, 48).unwrap().with(&gun, 1, 1);
        // The gun repeats itself every 30 generations, one more glider (5 cells) each time,
        // until the first glider wraps around the torus into it.
        let populations: Vec<u64> = (1..=4).map(|n| board.after(30 * n).population()).collect();
        for pair in populations.windows(2) {
            assert_eq!(pair[1], pair[0] + 5, "{populations:?}");
        }
    }

    #[test]
    fn bad_boards_are_refused_in_one_sentence() {
        assert!(Board::dead(0, 5).is_err());
        assert!(Board::dead(MAX_SIDE + 1, 1).is_err());
        assert!(Board::dead(1 << 16, 1 << 16).is_err());
        let error = Board::from_cells(2, 1, vec![0, 2]).unwrap_err().to_string();
        assert_eq!(
            error,
            "cell 1 of the board is 2, but a cell is 0 (dead) or 1 (alive)"
        );
        assert!(Board::from_cells(2, 2, vec![0; 3]).is_err());
        assert!(Board::random(3, 3, 1.5, 0).is_err());
        assert!(Pattern::parse("x", ".O\nX.").is_err());
    }

    #[test]
    fn diffs_name_the_first_differing_cell() {
        let want = board(&["#..", "...", ".#."]);
        let got = board(&["#..", "..#", "..."]);
        let diff = got.diff(&want);
        assert_eq!(diff.differing, 2);
        assert_eq!(diff.first, Some((2, 1)));
        assert_eq!(
            diff.to_string(),
            "✗ 2 of 9 cells differ from the CPU, the first at (x 2, y 1) (population 2, CPU 2)"
        );
        assert_eq!(
            want.diff(&want).to_string(),
            "✓ all 9 cells match the CPU (population 2)"
        );
        let other = Board::dead(3, 2).unwrap();
        assert!(!other.diff(&want).is_match());
    }
}
