//! The pictures, read back from their SVG: a one-sample CDF shows its point, titles
//! name the metric and the filter, a cut tail is stated, the legend sits outside the
//! plot, ticks carry no ".0", and a time-sequence graph says when its trace holds
//! several scenarios.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn gentle(dir: &Path, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The text of every `<text>` element.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

#[test]
fn a_one_sample_cdf_shows_its_points_and_names_its_metric() {
    let d = common::scratch("one");
    let ex = root().join("examples/fast-retransmit.toml");
    gentle(&d, &["run", ex.to_str().unwrap(), "--out", "o"]);
    let svg = std::fs::read_to_string(d.join("o/cdf.svg")).unwrap();
    assert_eq!(svg.matches("<circle").count(), 2, "one marker per variant");
    let t = texts(&svg);
    assert!(
        t.iter()
            .any(|x| x.contains("CDF of the server-side response time")),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x == "plain (n = 1)"), "{t:?}");
    // Integer ticks print as integers.
    assert!(t.iter().any(|x| x == "100"), "{t:?}");
    assert!(
        !t.iter()
            .any(|x| x.ends_with(".0") && x != "0.0" && x != "1.0"),
        "{t:?}"
    );
}

#[test]
fn a_cut_tail_and_the_filter_are_stated_and_the_legend_is_outside() {
    let d = common::scratch("tail");
    gentle(&d, &["reproduce", "er-reordering", "--quick", "--out", "o"]);
    let svg = std::fs::read_to_string(d.join("o/cdf.svg")).unwrap();
    let t = texts(&svg);
    assert!(
        t.iter().any(|x| x.contains("responses that lost a packet")),
        "{t:?}"
    );
    assert!(t.iter().any(|x| x.starts_with("tail cut at")), "{t:?}");
    assert!(t.iter().any(|x| x.starts_with("longest ")), "{t:?}");
    // Legend entries lie right of the plot's last x tick.
    let x_of = |needle: &str| -> f64 {
        let i = svg.find(&format!(">\n{needle}")).expect(needle);
        let head = &svg[..i];
        let tag = &head[head.rfind("<text").unwrap()..];
        let x = &tag[tag.find("x=\"").unwrap() + 3..];
        x[..x.find('"').unwrap()].parse().unwrap()
    };
    let legend_x = x_of("Linux (n = ");
    let last_tick = t
        .iter()
        .filter_map(|x| x.parse::<f64>().ok())
        .filter(|v| *v >= 100.0)
        .fold(0.0, f64::max);
    assert!(
        legend_x > x_of(&format!("{}", last_tick as u64)),
        "legend inside the plot"
    );
}

#[test]
fn a_trace_of_several_scenarios_is_titled_as_such() {
    let d = common::scratch("tsg");
    gentle(
        &d,
        &["reproduce", "prr-fig2", "prr-fig4", "--trace", "t.jsonl"],
    );
    gentle(&d, &["plot", "tsg", "t.jsonl", "--out", "o"]);
    let svg = std::fs::read_to_string(d.join("o/tsg.svg")).unwrap();
    let t = texts(&svg);
    assert!(
        t.iter()
            .any(|x| x.starts_with("2 scenarios (prr-fig2, prr-fig4)")),
        "{t:?}"
    );
}
