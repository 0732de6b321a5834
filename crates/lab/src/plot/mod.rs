//! Every picture gentle draws, as PNG and SVG, in one style (the embedded font, the
//! paper-like palette, ticks without a needless ".0"): the CDF of a run's response
//! times (`cdf`), mean ± standard deviation against a swept parameter
//! (`error_bars`), time-sequence graphs (`tsg`), and line charts in panels
//! (`lines`).

mod cdf;
mod error_bars;
mod lines;
mod tsg;

use std::sync::Once;

use plotters::prelude::*;

pub use cdf::cdf;
pub use error_bars::{Panel, Series, error_bars};
pub use lines::{Line, LinePanel, lines};
pub use tsg::tsg;

/// DejaVu Sans (Bitstream Vera license, see assets/DejaVuSans.LICENSE), embedded so
/// PNGs render text on machines without system fonts.
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

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

/// Tick labels without a needless ".0": whole numbers print as integers, fractions
/// below 1 with up to three decimals (an axis of sub-millisecond RTTs reads `0.02`,
/// `0.04`, not `0.0` twice).
pub(crate) fn tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 || v.abs() >= 10.0 {
        format!("{:.0}", v)
    } else if v.abs() >= 1.0 {
        format!("{:.1}", v)
    } else {
        let s = format!("{:.3}", v);
        s.trim_end_matches('0').to_string()
    }
}
