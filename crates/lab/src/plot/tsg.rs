//! Time-sequence graphs (`prr-imc11.txt` §4.1, Figures 2–4) of the flows `crate::tsg`
//! reads from a trace or a capture: original transmissions black, retransmissions
//! red with a red triangle on top (seen at any zoom, over the SACK blocks), snd.una
//! as a green staircase, SACK blocks purple; time on x, sequence on y; one panel per
//! variant, stacked; within a [`View`] (what lies outside is not drawn).

use std::path::Path;

use plotters::prelude::*;

use super::{register_font, tick};
use crate::tsg::{Flow, View, ViewRequest, view};

const BLACK_TX: RGBColor = RGBColor(0, 0, 0);
const RED_TX: RGBColor = RGBColor(210, 20, 20);
const GREEN_UNA: RGBColor = RGBColor(20, 150, 40);
const PURPLE_SACK: RGBColor = RGBColor(140, 60, 190);

/// Draws the legend strip: what each colour and mark means.
fn legend<DB: DrawingBackend>(
    legend: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
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
        if *colour == RED_TX {
            legend
                .draw(&TriangleMarker::new((x + 11, 10), 8, colour.filled()))
                .map_err(|e| e.to_string())?;
        }
        legend
            .draw(&Text::new(*label, (x + 28, 7), ("sans-serif", 14)))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A vertical bar at `t` from `lo` to `hi` (bytes), cut to the view; `None` outside.
fn bar(v: &View, t: f64, lo: u64, hi: u64) -> Option<(f64, f64, f64)> {
    let kb = |x: u64| x as f64 / 1e3;
    if t < v.t_ms.0 || t > v.t_ms.1 || hi < v.seq.0 || lo > v.seq.1 {
        return None;
    }
    Some((t, kb(lo.max(v.seq.0)), kb(hi.min(v.seq.1))))
}

/// snd.una as a staircase through the ACKs received, within the view.
fn staircase(f: &Flow, v: &View) -> Vec<(f64, f64)> {
    let y = |x: u64| x.clamp(v.seq.0, v.seq.1) as f64 / 1e3;
    let mut una = f.acks.first().map_or(0, |a| a.una);
    for a in f.acks.iter().take_while(|a| a.t_ms <= v.t_ms.0) {
        una = una.max(a.una);
    }
    let mut stair = vec![(v.t_ms.0, y(una))];
    for a in f
        .acks
        .iter()
        .filter(|a| a.t_ms > v.t_ms.0 && a.t_ms <= v.t_ms.1)
    {
        if a.una > una {
            stair.push((a.t_ms, y(una)));
            una = a.una;
            stair.push((a.t_ms, y(una)));
        }
    }
    stair.push((v.t_ms.1, y(una)));
    stair
}

/// One panel: `f` within `v`, captioned.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    f: &Flow,
    v: &View,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (t0, t1) = v.t_ms;
    let (s0, s1) = (v.seq.0 as f64 / 1e3, v.seq.1 as f64 / 1e3);
    // The axes start a little before the view, so the first flight (sent at t = 0,
    // from sequence 0) is not hidden under them; the right margin keeps the last
    // tick label whole.
    let (dt, ds) = ((t1 - t0) * 0.02, (s1 - s0) * 0.02);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(10)
        .margin_right(30)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(t0 - dt..t1 + dt, s0 - ds..s1 + ds)
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
    let seg = |(t, a, b): (f64, f64, f64), c: RGBColor, w: u32| {
        PathElement::new(vec![(t, a), (t, b)], c.stroke_width(w))
    };
    // SACK blocks first, so transmissions draw over them.
    let sacks = f.acks.iter().flat_map(|a| {
        a.sacks
            .iter()
            .filter_map(move |&(l, r)| bar(v, a.t_ms, l, r))
    });
    chart
        .draw_series(sacks.map(|b| seg(b, PURPLE_SACK, 2)))
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            staircase(f, v),
            GREEN_UNA.stroke_width(2),
        )))
        .map_err(|e| e.to_string())?;
    let sends = |retx: bool| {
        f.sends
            .iter()
            .filter(move |s| s.retransmission == retx)
            .filter_map(|s| bar(v, s.t_ms, s.start, s.end))
    };
    chart
        .draw_series(sends(false).map(|b| seg(b, BLACK_TX, 2)))
        .map_err(|e| e.to_string())?;
    // Retransmissions last, over everything: a thick red bar and a red triangle at
    // its top, large enough to see at any zoom.
    chart
        .draw_series(sends(true).map(|b| seg(b, RED_TX, 3)))
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(
            sends(true).map(|(t, _, top)| TriangleMarker::new((t, top), 9, RED_TX.filled())),
        )
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn draw_panels<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    flows: &[Flow],
    req: &ViewRequest,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let root = root
        .titled(title, ("sans-serif", 24))
        .map_err(|e| e.to_string())?;
    // One legend for every panel, in a strip of its own above them: it never
    // covers data.
    let (strip, root) = root.split_vertically(30);
    legend(&strip)?;
    let panels = root.split_evenly((flows.len().max(1), 1));
    // Each scenario is drawn in its own view (scenarios of different sizes stay
    // legible); the variants of one scenario share one, to compare them.
    let multi = flows.iter().any(|f| f.scenario != flows[0].scenario);
    let all: Vec<&Flow> = flows.iter().collect();
    let shared = view(&all, req);
    for (area, f) in panels.iter().zip(flows) {
        let (caption, v) = if multi {
            (format!("{} — {}", f.scenario, f.variant), view(&[f], req))
        } else {
            (f.variant.clone(), shared)
        };
        panel(area, &caption, f, &v)?;
    }
    root.present().map_err(|e| e.to_string())
}

/// Draws `flows` stacked, to `stem.png` and `stem.svg`, in the view `req` asks for
/// ([`crate::tsg::view`]).
pub fn tsg(stem: &Path, title: &str, flows: &[Flow], req: &ViewRequest) -> Result<(), String> {
    register_font();
    let h = 110 + 300 * flows.len().max(1) as u32;
    let png = stem.with_extension("png");
    draw_panels(
        BitMapBackend::new(&png, (1000, h)).into_drawing_area(),
        title,
        flows,
        req,
    )?;
    let svg = stem.with_extension("svg");
    draw_panels(
        SVGBackend::new(&svg, (1000, h)).into_drawing_area(),
        title,
        flows,
        req,
    )
}
