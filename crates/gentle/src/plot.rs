//! Plots: the CDF of the response time per variant, as PNG and SVG.

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;

use crate::runner::RunResult;

/// DejaVu Sans (Bitstream Vera license, see assets/DejaVuSans.LICENSE), embedded so
/// PNGs render text on machines without system fonts.
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Paper-like colours: baseline black, then red, blue, green, purple, orange.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(0, 0, 0),
    RGBColor(200, 30, 30),
    RGBColor(30, 80, 200),
    RGBColor(20, 140, 60),
    RGBColor(130, 50, 160),
    RGBColor(230, 130, 0),
];

fn draw_cdf<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    run: &RunResult,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let max_ms = run
        .variants
        .iter()
        .filter(|v| !v.latencies.is_empty())
        .map(|v| v.latencies.quantile(0.995))
        .fold(1e6, f64::max)
        / 1e6
        * 1.05;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .build_cartesian_2d(0f64..max_ms, 0f64..1f64)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("time (ms)")
        .y_desc("CDF")
        .label_style(("sans-serif", 15))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, v) in run.variants.iter().enumerate() {
        if v.latencies.is_empty() {
            continue;
        }
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> = v
            .latencies
            .cdf_points(2000)
            .into_iter()
            .map(|(x, f)| (x as f64 / 1e6, f))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label(v.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()
        .map_err(|e| e.to_string())?;
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
