//! The CDF of the response time per variant.

use std::path::Path;

use plotters::prelude::*;

use super::{PALETTE, register_font, tick};
use crate::runner::RunResult;

fn draw_cdf<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    run: &RunResult,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| e.to_string())?;
    // The legend gets its own strip to the right, so it never covers a curve.
    let (w, _) = root.dim_in_pixel();
    let (area, legend) = root.split_horizontally(w.saturating_sub(190));
    let drawn: Vec<_> = run
        .variants
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.latencies.is_empty())
        .collect();
    // The x axis ends at the 99.5th percentile; a longer tail is stated on the plot.
    let cut_ms = drawn
        .iter()
        .map(|(_, v)| v.latencies.quantile(0.995))
        .fold(1e6, f64::max)
        / 1e6
        * 1.05;
    let longest_ms = drawn
        .iter()
        .map(|(_, v)| v.latencies.quantile(1.0))
        .fold(0.0, f64::max)
        / 1e6;
    let mut chart = ChartBuilder::on(&area)
        .margin(15)
        .margin_right(25)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..cut_ms, 0f64..1.02f64)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("time (ms)")
        .y_desc("CDF")
        .x_label_formatter(&tick)
        .y_label_formatter(&|v| format!("{:.1}", v))
        .label_style(("sans-serif", 15))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    for &(i, v) in &drawn {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = v
            .latencies
            .cdf_points(2000)
            .into_iter()
            .map(|(x, f)| (x as f64 / 1e6, f))
            .collect();
        if v.latencies.len() == 1 {
            // One sample: a single step, marked, rather than an invisible line.
            let x = pts.first().map_or(0.0, |p| p.0);
            chart
                .draw_series([PathElement::new(
                    vec![(x, 0.0), (x, 1.0)],
                    color.stroke_width(2),
                )])
                .map_err(|e| e.to_string())?;
            chart
                .draw_series([Circle::new((x, 1.0), 5, color.filled())])
                .map_err(|e| e.to_string())?;
        } else {
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
    }
    // The legend: one line per variant, with its sample size.
    for (row, &(i, v)) in drawn.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let y = 40 + 26 * row as i32;
        legend
            .draw(&PathElement::new(
                vec![(5, y), (30, y)],
                color.stroke_width(3),
            ))
            .map_err(|e| e.to_string())?;
        legend
            .draw(&Text::new(
                format!("{} (n = {})", v.name, v.latencies.len()),
                (36, y - 8),
                ("sans-serif", 14),
            ))
            .map_err(|e| e.to_string())?;
    }
    if longest_ms > cut_ms {
        // Beside the plot, under the legend: the x axis stops short of the tail.
        let style = ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90));
        let y = 40 + 26 * drawn.len() as i32 + 10;
        for (k, line) in [
            format!("tail cut at {} ms", tick(&cut_ms.round())),
            "(99.5th percentile);".to_string(),
            format!("longest {} ms", tick(&longest_ms.round())),
        ]
        .iter()
        .enumerate()
        {
            legend
                .draw(&Text::new(
                    line.clone(),
                    (5, y + 18 * k as i32),
                    style.clone(),
                ))
                .map_err(|e| e.to_string())?;
        }
    }
    if drawn.is_empty() {
        legend
            .draw(&Text::new(
                "no finished exchange",
                (5, 40),
                ("sans-serif", 14),
            ))
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Writes `stem.png` and `stem.svg`.
pub fn cdf(stem: &Path, title: &str, run: &RunResult) -> Result<(), String> {
    register_font();
    let png = stem.with_extension("png");
    draw_cdf(
        BitMapBackend::new(&png, (900, 600)).into_drawing_area(),
        title,
        run,
    )?;
    let svg = stem.with_extension("svg");
    draw_cdf(
        SVGBackend::new(&svg, (900, 600)).into_drawing_area(),
        title,
        run,
    )?;
    Ok(())
}
