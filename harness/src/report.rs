//! What users see: tables, SVG plots and progress bars.

use std::path::{Path, PathBuf};

use comfy_table::{Table, presets};
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::{HarnessError, Result};

#[cfg(feature = "plots")]
mod plots;
#[cfg(feature = "plots")]
pub use plots::{
    SeriesLabelPosition, climb_svg, grouped_bars_svg, grouped_bars_svg_with_axes,
    grouped_bars_svg_with_legend, sweep_svg,
};

/// A Markdown-style table, so a GPU run's table can go into the book as it is printed.
pub fn table<S: ToString>(header: &[&str], rows: impl IntoIterator<Item = Vec<S>>) -> String {
    let mut table = Table::new();
    table.load_preset(presets::ASCII_MARKDOWN);
    table.set_header(header.iter().map(|h| h.to_string()));
    for row in rows {
        table.add_row(row.into_iter().map(|cell| cell.to_string()));
    }
    table.to_string()
}

/// Today's date in UTC, `YYYY-MM-DD`, for the tables that say when a GPU measured them.
pub fn today_utc() -> String {
    time::OffsetDateTime::now_utc().date().to_string()
}

/// Writes `dir/gpu_table.md`, the tables the book shows, under a line naming the GPU, the
/// date, the command and `how` it measured, since a timing means nothing without them.
pub fn write_gpu_table(
    dir: &Path,
    gpu: &str,
    command: &str,
    how: &str,
    tables: &str,
) -> Result<PathBuf> {
    write_gpu_markdown(&dir.join("gpu_table.md"), gpu, command, how, tables)
}

/// [`write_gpu_table`] to a file of another name, for a chapter with a second table the book
/// shows elsewhere (its "How fast can it go" climb).
pub fn write_gpu_markdown(
    file: &Path,
    gpu: &str,
    command: &str,
    how: &str,
    tables: &str,
) -> Result<PathBuf> {
    let file = file.to_path_buf();
    let markdown = format!(
        "Measured on **{gpu}**, on {}, by `{command}` ({how}).\n\n{tables}\n",
        today_utc()
    );
    std::fs::write(&file, markdown).map_err(|e| HarnessError::io("write", &file, e))?;
    Ok(file)
}

/// A progress bar on stderr; indicatif hides it when stderr is not a terminal, so snapshots
/// and logs stay clean.
pub fn progress(len: u64, message: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_string());
    bar
}

/// A spinner on stderr with the time so far and `{msg}` (what the work last said); hidden, like
/// [`progress`], when stderr is not a terminal.
pub fn spinner(message: &str) -> ProgressBar {
    let spinner = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>3} {wide_msg}") {
        spinner.set_style(style);
    }
    spinner.set_message(message.to_string());
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        let date = today_utc();
        assert_eq!(date.len(), 10, "{date}");
        assert!(date.starts_with("20"), "{date}");
    }

    #[test]
    fn table_is_markdown() {
        let text = table(
            &["variant", "ms"],
            [vec!["copy", "1.5"], vec!["atomics", "3.0"]],
        );
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("| variant"), "{text}");
        assert!(lines[1].starts_with("|--"), "{text}");
        assert!(
            lines[3].contains("atomics") && lines[3].contains("3.0"),
            "{text}"
        );
    }
}
