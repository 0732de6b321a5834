//! Time-sequence graphs (`prr-imc11.txt` §4.1, Figures 2–4) of the flows `crate::tsg`
//! reads from a trace: original transmissions black, retransmissions red, snd.una
//! as a green staircase, SACK blocks purple; time on x, sequence on y; one panel per
//! variant, stacked.

use std::path::Path;

use plotters::prelude::*;

use super::{register_font, tick};
use crate::tsg::Flow;

const BLACK_TX: RGBColor = RGBColor(0, 0, 0);
const RED_TX: RGBColor = RGBColor(210, 20, 20);
const GREEN_UNA: RGBColor = RGBColor(20, 150, 40);
const PURPLE_SACK: RGBColor = RGBColor(140, 60, 190);

fn draw_panels<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    flows: &[Flow],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 24))
        .map_err(|e| e.to_string())?;
    let max_t = flows.iter().map(Flow::max_t).fold(1.0, f64::max) * 1.03;
    // Sequence in kB.
    // Each panel scales to its own flow: scenarios of different sizes stay legible.
    let all_max_kb = flows.iter().map(Flow::max_seq).max().unwrap_or(1) as f64 / 1e3 * 1.05;
    // One legend for every panel, in a strip of its own above them: it never
    // covers data.
    let (legend, root) = root.split_vertically(30);
    let (w, _) = legend.dim_in_pixel();
    let entries = [
        ("transmissions", BLACK_TX),
        ("retransmissions", RED_TX),
        ("snd.una", GREEN_UNA),
        ("SACK blocks", PURPLE_SACK),
    ];
    let step = (w as i32 - 40) / entries.len() as i32;
    for (k, (label, colour)) in entries.iter().enumerate() {
        let x = 60 + step * k as i32;
        legend
            .draw(&PathElement::new(
                vec![(x, 15), (x + 22, 15)],
                colour.stroke_width(3),
            ))
            .map_err(|e| e.to_string())?;
        legend
            .draw(&Text::new(*label, (x + 28, 7), ("sans-serif", 14)))
            .map_err(|e| e.to_string())?;
    }
    let panels = root.split_evenly((flows.len().max(1), 1));
    let multi = flows.iter().any(|f| f.scenario != flows[0].scenario);
    for (area, f) in panels.iter().zip(flows) {
        let max_kb = if multi {
            (f.max_seq().max(1) as f64 / 1e3 * 1.05).max(0.1)
        } else {
            all_max_kb
        };
        // The axes start a little before zero, so the first flight (sent at t = 0,
        // from sequence 0) is not hidden under them; the right margin keeps the last
        // tick label whole.
        let caption = if multi {
            format!("{} — {}", f.scenario, f.variant)
        } else {
            f.variant.clone()
        };
        let mut chart = ChartBuilder::on(area)
            .caption(&caption, ("sans-serif", 18))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(-0.02 * max_t..max_t, -0.02 * max_kb..max_kb)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("time since the first data segment (ms)")
            .y_desc("sequence (kB)")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .light_line_style(WHITE.mix(0.0))
            .label_style(("sans-serif", 13))
            .draw()
            .map_err(|e| e.to_string())?;
        let kb = |x: u64| x as f64 / 1e3;
        // SACK blocks first, so transmissions draw over them.
        chart
            .draw_series(f.acks.iter().flat_map(|a| {
                a.sacks.iter().map(move |&(l, r)| {
                    PathElement::new(
                        vec![(a.t_ms, kb(l)), (a.t_ms, kb(r))],
                        PURPLE_SACK.stroke_width(2),
                    )
                })
            }))
            .map_err(|e| e.to_string())?
            .label("SACK blocks")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], PURPLE_SACK.stroke_width(2))
            });
        // snd.una: a staircase through the ACKs received.
        let mut stair = Vec::new();
        let mut una = f.acks.first().map_or(0, |a| a.una);
        stair.push((0.0, kb(una)));
        for a in &f.acks {
            if a.una > una {
                stair.push((a.t_ms, kb(una)));
                una = a.una;
                stair.push((a.t_ms, kb(una)));
            }
        }
        stair.push((max_t, kb(una)));
        chart
            .draw_series(std::iter::once(PathElement::new(
                stair,
                GREEN_UNA.stroke_width(2),
            )))
            .map_err(|e| e.to_string())?
            .label("snd.una")
            .legend(|(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], GREEN_UNA.stroke_width(2))
            });
        // Retransmissions last and thicker, over snd.una and the transmissions.
        for (retrans, colour, label, width) in [
            (false, BLACK_TX, "transmissions", 2),
            (true, RED_TX, "retransmissions", 3),
        ] {
            chart
                .draw_series(
                    f.sends
                        .iter()
                        .filter(|s| s.retransmission == retrans)
                        .map(|s| {
                            PathElement::new(
                                vec![(s.t_ms, kb(s.start)), (s.t_ms, kb(s.end))],
                                colour.stroke_width(width),
                            )
                        }),
                )
                .map_err(|e| e.to_string())?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(width))
                });
        }
    }
    root.present().map_err(|e| e.to_string())
}

/// Draws `flows` stacked, to `stem.png` and `stem.svg`.
pub fn tsg(stem: &Path, title: &str, flows: &[Flow]) -> Result<(), String> {
    register_font();
    let h = 110 + 300 * flows.len().max(1) as u32;
    let png = stem.with_extension("png");
    draw_panels(
        BitMapBackend::new(&png, (1000, h)).into_drawing_area(),
        title,
        flows,
    )?;
    let svg = stem.with_extension("svg");
    draw_panels(
        SVGBackend::new(&svg, (1000, h)).into_drawing_area(),
        title,
        flows,
    )
}
