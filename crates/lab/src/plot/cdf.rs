//! The CDF of the response time per variant and, under it, each variant's
//! difference from the baseline at every percentile with its 95% confidence band
//! (the paired bootstrap of [`crate::ci`]).

use std::path::Path;

use plotters::prelude::*;

use super::{PALETTE, register_font, tick};
use crate::runner::{RunResult, VariantResult};

/// The CDFs, with the differences under them when the run has confidence
/// intervals.
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
    let with_deltas = run.cis.iter().any(Option::is_some);
    let (w, h) = root.dim_in_pixel();
    let (root, lower) = root.split_vertically(if with_deltas { h * 62 / 100 } else { h });
    if with_deltas {
        draw_deltas(&lower, run)?;
    }
    // The legend gets its own strip to the right, so it never covers a curve.
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
    draw_curves(&area, &drawn, cut_ms)?;
    draw_legend(&legend, &drawn, cut_ms, longest_ms)?;
    root.present().map_err(|e| e.to_string())
}

/// The variants drawn, with their index (their colour).
type Drawn<'a> = [(usize, &'a VariantResult)];

/// The axes, and each variant's CDF up to `cut_ms`.
fn draw_curves<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    drawn: &Drawn<'_>,
    cut_ms: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
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
    for &(i, v) in drawn {
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
    Ok(())
}

/// The legend: one line per variant, with its sample size; under it, where the x
/// axis stops short of the tail, the cut and the longest time.
fn draw_legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, plotters::coord::Shift>,
    drawn: &Drawn<'_>,
    cut_ms: f64,
    longest_ms: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
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
    Ok(())
}

/// A variant's index and its (percentile, Δ, lo, hi) points, in ms.
type Curve = (usize, Vec<(f64, f64, f64, f64)>);

/// Each variant's difference from the baseline at percentiles 1 to 99 (a line) and
/// its 95% confidence band (shaded), with the zero line.
fn draw_deltas<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    run: &RunResult,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let (area, legend) = area.split_horizontally(w.saturating_sub(190));
    let curves = delta_curves(run);
    let (lo, hi) = curves
        .iter()
        .flat_map(|(_, pts)| pts.iter())
        .fold((0f64, 0f64), |(a, b), p| (a.min(p.2), b.max(p.3)));
    let pad = ((hi - lo) * 0.08).max(0.5);
    let mut chart = ChartBuilder::on(&area)
        .margin(15)
        .margin_right(25)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..100f64, (lo - pad)..(hi + pad))
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_desc(format!("Δ from {} (ms)", run.variants[0].name))
        .y_label_formatter(&tick)
        .label_style(("sans-serif", 14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series([PathElement::new(
            vec![(0.0, 0.0), (100.0, 0.0)],
            BLACK.stroke_width(1),
        )])
        .map_err(|e| e.to_string())?;
    for (i, pts) in &curves {
        let color = PALETTE[i % PALETTE.len()];
        let band: Vec<(f64, f64)> = pts
            .iter()
            .map(|p| (p.0, p.3))
            .chain(pts.iter().rev().map(|p| (p.0, p.2)))
            .collect();
        chart
            .draw_series([Polygon::new(band, color.mix(0.18).filled())])
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
    }
    draw_band_note(&legend)
}

/// Each variant with intervals: its difference from the baseline at percentiles 1
/// to 99, and the interval's bounds, where all are finite.
fn delta_curves(run: &RunResult) -> Vec<Curve> {
    let base = &run.variants[0].latencies;
    run.cis
        .iter()
        .enumerate()
        .filter_map(|(i, d)| Some((i, d.as_ref()?)))
        .map(|(i, d)| {
            let v = &run.variants[i].latencies;
            let pts = crate::ci::PERCENTILES
                .map(|p| {
                    let q = p as f64 / 100.0;
                    let c = d.percentile(p).ms;
                    let delta = (v.quantile(q) - base.quantile(q)) / 1e6;
                    (p as f64, delta, c.lo, c.hi)
                })
                .filter(|&(_, x, lo, hi)| x.is_finite() && lo.is_finite() && hi.is_finite())
                .collect();
            (i, pts)
        })
        .collect()
}

/// Beside the differences: what the shaded bands are.
fn draw_band_note<DB: DrawingBackend>(
    legend: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let style = ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90));
    for (k, line) in [
        "shaded: 95% confidence",
        "band (paired bootstrap",
        "over trials)",
    ]
    .iter()
    .enumerate()
    {
        legend
            .draw(&Text::new(
                line.to_string(),
                (5, 30 + 18 * k as i32),
                style.clone(),
            ))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Writes `stem.png` and `stem.svg`: 600 pixels high, 900 with the differences.
pub fn cdf(stem: &Path, title: &str, run: &RunResult) -> Result<(), String> {
    register_font();
    let size = if run.cis.iter().any(Option::is_some) {
        (900, 900)
    } else {
        (900, 600)
    };
    let png = stem.with_extension("png");
    draw_cdf(
        BitMapBackend::new(&png, size).into_drawing_area(),
        title,
        run,
    )?;
    let svg = stem.with_extension("svg");
    draw_cdf(SVGBackend::new(&svg, size).into_drawing_area(), title, run)?;
    Ok(())
}
