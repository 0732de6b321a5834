//! Line charts in a grid of panels, each with its own axes (linear or logarithmic
//! x): the §2 figures of `gentle analyze`.

use std::path::Path;

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{PALETTE, register_font, tick};

/// One line: `(x, y)` points in `PALETTE[colour]`.
pub struct Line {
    pub label: String,
    pub colour: usize,
    pub points: Vec<(f64, f64)>,
}

/// One panel.
pub struct LinePanel {
    pub caption: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x: (f64, f64),
    pub y: (f64, f64),
    pub log_x: bool,
    pub lines: Vec<Line>,
    /// A line of small print under the caption (what is drawn and why), if any.
    pub note: Option<String>,
    /// Where the legend goes (where the data leaves room).
    pub legend: SeriesLabelPosition,
}

/// The runs of `points` between breaks: a point with a NaN y ends a run and is not
/// drawn, so that a line does not join points across missing data.
fn runs(points: &[(f64, f64)]) -> impl Iterator<Item = &[(f64, f64)]> {
    points.split(|p| p.1.is_nan()).filter(|r| !r.is_empty())
}

fn panel<DB: DrawingBackend, X>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &LinePanel,
    x: X,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let titled = area
        .titled(&p.caption, ("sans-serif", 15))
        .map_err(|e| e.to_string())?;
    let plot = match &p.note {
        Some(note) => {
            let (strip, rest) = titled.split_vertically(18);
            let (w, _) = strip.dim_in_pixel();
            strip
                .draw(&Text::new(
                    note.as_str(),
                    (w as i32 / 2, 2),
                    ("sans-serif", 11)
                        .into_font()
                        .color(&BLACK.mix(0.75))
                        .pos(Pos::new(HPos::Center, VPos::Top)),
                ))
                .map_err(|e| e.to_string())?;
            rest
        }
        None => titled,
    };
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(x, p.y.0..p.y.1)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .label_style(("sans-serif", 12))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    for (k, l) in p.lines.iter().enumerate() {
        let colour = PALETTE[l.colour % PALETTE.len()];
        // The first line's markers are filled, the others' larger rings, so that a
        // point on which two lines meet shows both.
        let style = if k == 0 {
            colour.filled()
        } else {
            colour.stroke_width(2)
        };
        let radius = if k == 0 { 3 } else { 5 };
        for run in runs(&l.points) {
            chart
                .draw_series(LineSeries::new(run.iter().copied(), colour.stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
        chart
            .draw_series(
                l.points
                    .iter()
                    .filter(|pt| !pt.1.is_nan())
                    .map(|&pt| Circle::new(pt, radius, style)),
            )
            .map_err(|e| e.to_string())?
            .label(l.label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
    }
    if p.lines.len() > 1 {
        chart
            .configure_series_labels()
            .position(p.legend.clone())
            .label_font(("sans-serif", 11))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    grid: (usize, usize),
    panels: &[LinePanel],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 20))
        .map_err(|e| e.to_string())?;
    for (area, p) in root.split_evenly(grid).iter().zip(panels) {
        if p.log_x {
            panel(area, p, (p.x.0..p.x.1).log_scale())?;
        } else {
            panel(area, p, p.x.0..p.x.1)?;
        }
    }
    root.present().map_err(|e| e.to_string())
}

/// Writes `png` and `svg` with `panels` in a `grid` of (rows, columns).
pub fn lines(
    (png, svg): (&Path, &Path),
    title: &str,
    grid: (usize, usize),
    size: (u32, u32),
    panels: &[LinePanel],
) -> Result<(), String> {
    register_font();
    draw(
        BitMapBackend::new(png, size).into_drawing_area(),
        title,
        grid,
        panels,
    )?;
    draw(
        SVGBackend::new(svg, size).into_drawing_area(),
        title,
        grid,
        panels,
    )
}
