//! SVG charts for the walk-throughs (feature `plots`): the climbs, sweeps and grouped bars that
//! the chapters write under `--out` and the book shows.

use std::path::Path;

pub use plotters::chart::SeriesLabelPosition;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{HarnessError, Result};

fn plot_error(path: &Path, error: impl std::fmt::Display) -> HarnessError {
    HarnessError::Plot {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

/// Bars for each label, one colour per series side by side: e.g. lowercase and uppercase
/// counts for each letter. The legend sits at the right, halfway up.
pub fn grouped_bars_svg(
    path: &Path,
    title: &str,
    labels: &[String],
    series: &[(&str, Vec<f64>)],
    y_label: &str,
) -> Result<()> {
    grouped_bars_svg_with_legend(
        path,
        title,
        labels,
        series,
        y_label,
        Some(SeriesLabelPosition::MiddleRight),
    )
}

/// [`grouped_bars_svg`] with the legend where the bars leave room for it, or none (one series
/// needs no legend): a climb's tallest bars are on the right, so its legend goes upper left.
pub fn grouped_bars_svg_with_legend(
    path: &Path,
    title: &str,
    labels: &[String],
    series: &[(&str, Vec<f64>)],
    y_label: &str,
    legend: Option<SeriesLabelPosition>,
) -> Result<()> {
    grouped_bars_svg_with_axes(path, title, "", labels, series, y_label, legend)
}

/// [`grouped_bars_svg_with_legend`] with the x axis named too (`x_label`, below its labels), so
/// the picture says what its groups are without the page around it.
pub fn grouped_bars_svg_with_axes(
    path: &Path,
    title: &str,
    x_label: &str,
    labels: &[String],
    series: &[(&str, Vec<f64>)],
    y_label: &str,
    legend: Option<SeriesLabelPosition>,
) -> Result<()> {
    let top = series
        .iter()
        .flat_map(|(_, values)| values.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1.0)
        * 1.1;
    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(path, e))?;
    let groups = labels.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(if x_label.is_empty() { 36 } else { 56 })
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..groups, 0.0..top)
        .map_err(|e| plot_error(path, e))?;
    let label_of = |x: &f64| {
        let index = x.floor() as usize;
        if (x - x.floor() - 0.5).abs() < 1e-6 {
            labels.get(index).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(labels.len() * 2 + 1)
        .x_label_formatter(&label_of)
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|e| plot_error(path, e))?;
    let width = 0.8 / series.len().max(1) as f64;
    for (series_index, (name, values)) in series.iter().enumerate() {
        let colour = Palette99::pick(series_index).to_rgba();
        let offset = 0.1 + width * series_index as f64;
        chart
            .draw_series(values.iter().enumerate().map(|(i, &value)| {
                let left = i as f64 + offset;
                Rectangle::new([(left, 0.0), (left + width, value)], colour.filled())
            }))
            .map_err(|e| plot_error(path, e))?
            .label(*name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
        // A bar of 0 is a line of its colour over the axis: measured, and nothing, rather than
        // a gap that reads as not measured.
        let zeros = values
            .iter()
            .enumerate()
            .filter(|(_, value)| **value == 0.0);
        chart
            .draw_series(zeros.map(|(i, _)| {
                let left = i as f64 + offset;
                PathElement::new(
                    vec![(left, 0.0), (left + width, 0.0)],
                    colour.stroke_width(5),
                )
            }))
            .map_err(|e| plot_error(path, e))?;
    }
    if let Some(position) = legend {
        chart
            .configure_series_labels()
            .position(position)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| plot_error(path, e))?;
    }
    root.present().map_err(|e| plot_error(path, e))
}

/// One horizontal bar per step of a climb, top to bottom, each its ratio to a reference (the
/// device copy's byte rate, say) measured in the same run, with the reference drawn as a
/// vertical line at 1 and each bar labelled with its ratio.
pub fn climb_svg(path: &Path, title: &str, x_label: &str, steps: &[(String, f64)]) -> Result<()> {
    let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
    let right = steps
        .iter()
        .map(|(_, ratio)| finite(*ratio))
        .fold(1.0_f64, f64::max)
        * 1.15;
    let rows = steps.len().max(1);
    let height = 90 + 44 * rows as u32;
    let root = SVGBackend::new(path, (960, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(330)
        .build_cartesian_2d(0.0..right, 0.0..rows as f64)
        .map_err(|e| plot_error(path, e))?;
    // Row i (top first) is the band [rows - i - 1, rows - i); its label sits at the middle.
    let label_of = |y: &f64| {
        let from_top = rows as f64 - y - 0.5;
        if (from_top - from_top.round()).abs() < 1e-6 {
            steps
                .get(from_top.round() as usize)
                .map(|(label, _)| label.clone())
                .unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows * 2 + 1)
        .y_label_formatter(&label_of)
        .x_desc(x_label)
        .label_style(("sans-serif", 15))
        .draw()
        .map_err(|e| plot_error(path, e))?;
    chart
        .draw_series(steps.iter().enumerate().map(|(i, (_, ratio))| {
            let bottom = (rows - i - 1) as f64 + 0.15;
            let colour = if finite(*ratio) >= 1.0 {
                GREEN.mix(0.7)
            } else {
                BLUE.mix(0.6)
            };
            Rectangle::new(
                [(0.0, bottom), (finite(*ratio), bottom + 0.7)],
                colour.filled(),
            )
        }))
        .map_err(|e| plot_error(path, e))?;
    let value_style = ("sans-serif", 15)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    chart
        .draw_series(steps.iter().enumerate().map(|(i, (_, ratio))| {
            let middle = (rows - i - 1) as f64 + 0.5;
            Text::new(
                format!(" {ratio:.2}"),
                (finite(*ratio), middle),
                value_style.clone(),
            )
        }))
        .map_err(|e| plot_error(path, e))?;
    chart
        .draw_series([PathElement::new(
            [(1.0, 0.0), (1.0, rows as f64)],
            RED.stroke_width(2),
        )])
        .map_err(|e| plot_error(path, e))?;
    root.present().map_err(|e| plot_error(path, e))
}

/// A line over `(x, y)` points on log-log axes, with the point at `best` marked and labelled:
/// e.g. milliseconds against blocks per grid, which span orders of magnitude on both axes.
pub fn sweep_svg(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    points: &[(f64, f64)],
    best: usize,
) -> Result<()> {
    let positive = |v: f64| if v.is_finite() && v > 0.0 { v } else { 1e-9 };
    let (x_min, x_max) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &(x, _)| {
            (lo.min(positive(x)), hi.max(positive(x)))
        });
    let (y_min, y_max) = points
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &(_, y)| {
            (lo.min(positive(y)), hi.max(positive(y)))
        });
    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_error(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(72)
        .build_cartesian_2d(
            ((x_min / 1.5)..(x_max * 1.5)).log_scale(),
            ((y_min / 2.0)..(y_max * 2.0)).log_scale(),
        )
        .map_err(|e| plot_error(path, e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y}"))
        .draw()
        .map_err(|e| plot_error(path, e))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().copied(),
            BLUE.stroke_width(2),
        ))
        .map_err(|e| plot_error(path, e))?;
    chart
        .draw_series(
            points
                .iter()
                .map(|&point| Circle::new(point, 3, BLUE.filled())),
        )
        .map_err(|e| plot_error(path, e))?;
    if let Some(&(x, y)) = points.get(best) {
        chart
            .draw_series([Circle::new((x, y), 7, RED.stroke_width(3))])
            .map_err(|e| plot_error(path, e))?;
        let label = ("sans-serif", 16)
            .into_font()
            .color(&RED)
            .pos(Pos::new(HPos::Right, VPos::Bottom));
        chart
            .draw_series([Text::new(format!("fastest: {x:.0}"), (x, y * 1.3), label)])
            .map_err(|e| plot_error(path, e))?;
    }
    root.present().map_err(|e| plot_error(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_written_as_svg() {
        let dir = crate::testing::scratch_dir("plot-test");
        std::fs::create_dir_all(&dir).unwrap();
        let bars = dir.join("bars.svg");
        let labels = vec!["a".to_string(), "b".to_string()];
        grouped_bars_svg(
            &bars,
            "letters",
            &labels,
            &[("lower", vec![3.0, 1.0]), ("upper", vec![1.0, 0.0])],
            "count",
        )
        .unwrap();
        let svg = std::fs::read_to_string(&bars).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("letters") && svg.contains("lower"));
        grouped_bars_svg_with_legend(
            &bars,
            "climb",
            &labels,
            &[("only", vec![0.5, 1.0])],
            "ratio",
            None,
        )
        .unwrap();
        let svg = std::fs::read_to_string(&bars).unwrap();
        assert!(svg.contains("climb") && !svg.contains("only"), "{svg}");
        let sweep = dir.join("sweep.svg");
        sweep_svg(
            &sweep,
            "sweep",
            "blocks",
            "ms",
            &[(1.0, 4.0), (2.0, 2.0), (4.0, 3.0)],
            1,
        )
        .unwrap();
        assert!(
            std::fs::read_to_string(&sweep)
                .unwrap()
                .contains("fastest: 2")
        );
        let climb = dir.join("climb.svg");
        climb_svg(
            &climb,
            "climb",
            "÷ copy",
            &[
                ("first step".to_string(), 0.5),
                ("last step".to_string(), 1.25),
            ],
        )
        .unwrap();
        let svg = std::fs::read_to_string(&climb).unwrap();
        assert!(
            svg.contains("first step") && svg.contains("last step") && svg.contains("1.25"),
            "{svg}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
