//! `corrective-pages`: the Web-page replay of `gentle-aggression-sigcomm13.txt`
//! §8.4.2 and Figure 10.
//!
//! Two pages — a simple one (5 objects over 5 connections, 147 KB, the paper's
//! Craigslist) and a content-rich one (167 objects over 47 connections, 1,387 KB,
//! the New York Times) — are loaded over a cable-like link (5 Mbit/s down, 1 Mbit/s
//! up, 28 ms RTT) and a 3G-like link (2 Mbit/s down, 1 Mbit/s up, 150 ms RTT), with
//! the correlated loss of §8.4.1 in both directions. The page load time runs from
//! the first connection's SYN to the last byte of the last object; connections open
//! together when the load starts and fetch the objects in turn. Objects all have the
//! page's mean size (the paper gives only totals). Baseline Linux 2.6 against the
//! same with Corrective.
//!
//! The paper's mobile figures are for the mobile version of its rich page, whose
//! size it does not give. The desktop pages are loaded on both links (the 1,387 KB
//! page takes 5.5 s of serialisation alone at 2 Mbit/s), and a third row loads the
//! mobile page, `examples/corrective-pages-mobile.toml`, fitted by `gentle calibrate`
//! to the paper's baseline load times only (3644 ms median, 4813 ms at the 90th
//! percentile): Corrective's effect on it is the result.
//!
//! The scenario and its grid are `examples/corrective-pages.toml`; this file holds
//! the paper's numbers and the table's layout.

use serde::Serialize;

use super::{Builtin, Summary};
use crate::runner::RunResult;
use crate::units::no_neg_zero;

/// The experiment: the two pages × the two links.
pub const FILE: Builtin = Builtin {
    path: "examples/corrective-pages.toml",
    text: include_str!("../../../../examples/corrective-pages.toml"),
};

/// The mobile page over the 3G-like link, fitted to the paper's baseline.
pub const MOBILE: Builtin = Builtin {
    path: "examples/corrective-pages-mobile.toml",
    text: include_str!("../../../../examples/corrective-pages-mobile.toml"),
};

/// §8.4.2 for the mobile page on the mobile link: (median, 90th) in ms, baseline then
/// Corrective.
pub const PAPER_MOBILE_3G: ((f64, f64), (f64, f64)) = ((3644.0, 2793.0), (4813.0, 3819.0));

/// One page on one link: a point of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct Load {
    pub page: String,
    pub link: String,
    pub baseline: Summary,
    pub corrective: Summary,
}

/// Runs every desktop page on every link, then the mobile page on the 3G-like link;
/// `plots` gets each run for its CDF figure.
pub fn run(quick: bool, mut plots: impl FnMut(&str, &RunResult)) -> Vec<Load> {
    let mut out = Vec::new();
    let mut each = |page: &str, link: &str, r: RunResult| {
        plots(&format!("corrective-pages-{page}-{link}"), &r);
        let dist = |i: usize| Summary::of(&r.variants[i]).with_cdf(&r.variants[i]);
        out.push(Load {
            page: page.to_string(),
            link: link.to_string(),
            baseline: dist(0),
            corrective: dist(1),
        });
    };
    super::run_points(&FILE.sweep(), quick, false, |p, r| {
        each(
            p.at("page").expect("a page axis"),
            p.at("link").expect("a link axis"),
            r,
        );
    });
    super::run_points(&MOBILE.sweep(), quick, false, |_, r| {
        each("mobile", "3g", r)
    });
    out
}

/// Medians and 90th percentiles side by side, with the paper's where it gives them.
pub fn text(loads: &[Load]) -> String {
    let mut s = String::from(
        "corrective-pages — page load time, Linux 2.6 vs Corrective, correlated loss\n(gentle-aggression §8.4.2, Figure 10)\n",
    );
    s += &format!(
        "{:<7}{:<6}{:>6}{:>10}{:>10}{:>8}{:>10}{:>10}{:>8}{:>9}{:>10}{}\n",
        "page",
        "link",
        "loads",
        "p50 base",
        "p50 corr",
        "Δ",
        "p90 base",
        "p90 corr",
        "Δ",
        "rebuilt",
        "overhead",
        ""
    );
    let mut notes = Vec::new();
    for l in loads {
        let (b, c) = (&l.baseline, &l.corrective);
        let pct = |x: f64, y: f64| 100.0 * (y - x) / x;
        let paper = if l.page == "mobile" {
            let ((b50, c50), (b90, c90)) = PAPER_MOBILE_3G;
            format!(
                "paper: p50 {b50:.0} → {c50:.0} ms ({:+.0}%), p90 {b90:.0} → {c90:.0} ms ({:+.0}%)",
                pct(b50, c50),
                pct(b90, c90)
            )
        } else if l.page == "rich" && l.link == "3g" {
            "paper: for the mobile version of the page (the mobile row)".to_string()
        } else if l.page == "rich" && l.link == "cable" {
            "paper: first render −15% at p90 (a different measure)".to_string()
        } else {
            String::new()
        };
        s += &format!(
            "{:<7}{:<6}{:>6}{:>10.0}{:>10.0}{:>7.1}%{:>10.0}{:>10.0}{:>7.1}%{:>9}{:>9.1}%{}\n",
            l.page,
            l.link,
            c.n,
            b.p50,
            c.p50,
            no_neg_zero(pct(b.p50, c.p50), 1),
            b.p90,
            c.p90,
            no_neg_zero(pct(b.p90, c.p90), 1),
            c.recovered,
            c.overhead_pct,
            if paper.is_empty() { "" } else { " *" }
        );
        if !paper.is_empty() {
            notes.push(format!("* {} {}: {paper}", l.page, l.link));
        }
    }
    for n in notes {
        s += &n;
        s += "\n";
    }
    s
}
