//! Mean ± standard deviation against a swept parameter: panels stacked
//! vertically, a line and error bars per series.

use std::path::Path;

use plotters::prelude::*;

use super::{PALETTE, register_font, tick};

/// One series: `(x, mean, sd)` points, drawn in `PALETTE[colour]`.
pub struct Series {
    pub label: String,
    pub colour: usize,
    pub points: Vec<(f64, f64, f64)>,
}

/// One panel of stacked panels.
pub struct Panel {
    pub caption: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x: (f64, f64),
    panels: &[Panel],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 22))
        .map_err(|e| e.to_string())?;
    let areas = root.split_evenly((panels.len(), 1));
    for (area, panel) in areas.iter().zip(panels) {
        let ymax = panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|&(_, m, sd)| m + sd))
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max)
            // Headroom above the data for the legend, so it covers none.
            * 1.45;
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.caption, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(x.0..x.1, 0f64..ymax.max(1e-3))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(panel.x_desc.as_str())
            .y_desc(panel.y_desc.as_str())
            .x_label_formatter(&tick)
            .y_label_formatter(&|v| {
                // Every tick of a panel to the same precision.
                let decimals = if ymax >= 5.0 {
                    0
                } else if ymax >= 1.0 {
                    1
                } else {
                    2
                };
                format!("{v:.decimals$}")
            })
            .label_style(("sans-serif", 13))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| e.to_string())?;
        for s in &panel.series {
            let colour = PALETTE[s.colour % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().map(|&(x, m, _)| (x, m)),
                    colour.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(s.points.iter().map(|&(x, m, sd)| {
                    ErrorBar::new_vertical(x, (m - sd).max(0.0), m, m + sd, colour.filled(), 6)
                }))
                .map_err(|e| e.to_string())?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Writes `stem.png` and `stem.svg`, 900 pixels wide and `height` high, the x
/// axis spanning `x`.
pub fn error_bars(
    stem: &Path,
    title: &str,
    x: (f64, f64),
    panels: &[Panel],
    height: u32,
) -> Result<(), String> {
    register_font();
    let png = stem.with_extension("png");
    draw(
        BitMapBackend::new(&png, (900, height)).into_drawing_area(),
        title,
        x,
        panels,
    )?;
    let svg = stem.with_extension("svg");
    draw(
        SVGBackend::new(&svg, (900, height)).into_drawing_area(),
        title,
        x,
        panels,
    )
}
