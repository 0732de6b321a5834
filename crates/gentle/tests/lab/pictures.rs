//! The pictures, read back from their SVG: a one-sample CDF shows its point, titles
//! name the metric and the filter, a cut tail is stated, the legend sits outside the
//! plot, ticks carry no ".0", and a time-sequence graph says when its trace holds
//! several scenarios.

use crate::common;

use crate::common::root;
use std::path::Path;
use std::process::Command;

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
    // prr-latency ranks the responses with a retransmission, whose longest wait
    // minutes in back-off.
    gentle(&d, &["reproduce", "prr-latency", "--quick", "--out", "o"]);
    let svg = std::fs::read_to_string(d.join("o/cdf.svg")).unwrap();
    let t = texts(&svg);
    assert!(
        t.iter()
            .any(|x| x.contains("responses with a retransmission")),
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

fn gentle_out(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// The red triangles of a time-sequence graph's SVG, the legend's included.
fn triangles(svg: &str) -> usize {
    svg.matches("<polygon opacity=\"1\" fill=\"#D21414\"")
        .count()
}

/// The window `plot tsg` says it drew: (from, to) ms.
fn window(stderr: &str) -> (f64, f64) {
    let l = stderr
        .lines()
        .find(|l| l.starts_with("drew ") && l.contains(" ms, bytes "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let r = &l[5..l.find(" ms").unwrap()];
    let (a, b) = r.split_once("..").unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

#[test]
fn a_capture_is_drawn_zoomed_to_its_recoveries_with_every_retransmission_marked() {
    let d = common::scratch("tsg-capture");
    let ex = root().join("examples/analyze-frontend.toml");
    gentle(
        &d,
        &[
            "run",
            ex.to_str().unwrap(),
            "--trials",
            "1",
            "--pcap",
            "0",
            "--out",
            "run",
        ],
    );
    let cap = "run/analyze-frontend-trial0-linux-3.10.pcap";
    // The flow drawn by default retransmitted most; `gentle analyze` counts its
    // retransmissions.
    let o = gentle_out(&d, &["analyze", cap, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let total = |f: &serde_json::Value| -> u64 {
        ["fast", "early", "timeout", "slow-start", "probe"]
            .iter()
            .map(|c| f["retransmissions"][c].as_u64().unwrap())
            .sum()
    };
    let top = doc["flows"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|f| (total(f), std::cmp::Reverse(f["id"].as_u64().unwrap())))
        .unwrap();
    let (id, n) = (top["id"].as_u64().unwrap(), total(top));
    assert!(n >= 3, "{n}");
    let o = gentle_out(&d, &["plot", "tsg", cap, "--out", "zoom"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("drew flow {id}: 10.0.0.1:80 to ")),
        "{err}"
    );
    assert!(err.contains("around the retransmissions"), "{err}");
    let zoom = window(&err);
    let svg = std::fs::read_to_string(d.join("zoom/tsg.svg")).unwrap();
    assert_eq!(triangles(&svg), n as usize + 1, "one per retransmission");
    // --whole starts before the first data segment (the handshake's ACK) and ends
    // after the zoomed window.
    let o = gentle_out(&d, &["plot", "tsg", cap, "--out", "whole", "--whole"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("(the whole flow)"), "{err}");
    let whole = window(&err);
    assert!(
        whole.0 <= 0.0 && whole.0 < zoom.0 && whole.1 >= zoom.1,
        "{whole:?} {zoom:?}"
    );
    // An explicit window: exactly that, with the retransmissions inside it.
    let (a, b) = (zoom.0.ceil(), (zoom.0 + zoom.1) / 2.0);
    let o = gentle_out(
        &d,
        &[
            "plot",
            "tsg",
            cap,
            "--out",
            "part",
            "--time",
            &format!("{a}..{b}"),
            "--seq",
            "1000..90000",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains(&format!(
            "drew {a:.3}..{b:.3} ms, bytes 1000..90000 (as asked)"
        )),
        "{err}"
    );
    let part = std::fs::read_to_string(d.join("part/tsg.svg")).unwrap();
    assert!(
        triangles(&part) < triangles(&svg),
        "fewer in half the window"
    );
    // Another flow by number; one that does not exist is bad input.
    let o = gentle_out(&d, &["plot", "tsg", cap, "--out", "f0", "--flow", "0"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("drew flow 0: "));
    let o = gentle_out(&d, &["plot", "tsg", cap, "--out", "f99", "--flow", "99"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--flow 99: "));
    assert!(!d.join("f99").exists());
    // The existing graph is kept without --force.
    let o = gentle_out(&d, &["plot", "tsg", cap, "--out", "zoom"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
}

#[test]
fn bad_ranges_are_refused_naming_their_flag_and_nothing_is_written() {
    let d = common::scratch("tsg-ranges");
    let ex = root().join("examples/fast-retransmit.toml");
    gentle(&d, &["run", ex.to_str().unwrap(), "--trace", "t.jsonl"]);
    for (flag, value, want) in [
        ("--time", "5..2", "--time 5..2: the range is empty"),
        ("--time", "10", "--time 10: no `..`"),
        ("--time", "a..b", "--time a..b: not two numbers"),
        ("--time", "-5..20", "--time -5..20: not two numbers"),
        ("--seq", "300..300", "--seq 300..300: the range is empty"),
        ("--seq", "0..inf", "--seq 0..inf: not two numbers"),
        (
            "--time",
            "1e9..2e9",
            "--time 1000000000..2000000000: no data was sent then",
        ),
        (
            "--seq",
            "1e12..2e12",
            "--seq 1000000000000..: above the highest sequence sent",
        ),
    ] {
        let arg = format!("{flag}={value}");
        let o = gentle_out(&d, &["plot", "tsg", "t.jsonl", "--out", "o", &arg]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {err}");
        assert!(err.contains(want), "{flag} {value}: {err}");
        assert!(!d.join("o").exists(), "{flag} {value}: wrote");
    }
    // A lone retransmission: a red triangle besides the legend's.
    gentle(&d, &["plot", "tsg", "t.jsonl", "--out", "o"]);
    let svg = std::fs::read_to_string(d.join("o/tsg.svg")).unwrap();
    assert!(triangles(&svg) > 1, "retransmissions marked");
}
