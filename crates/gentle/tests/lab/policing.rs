//! The token-bucket policer (a link key) and `gentle analyze`'s policing signature
//! (Flach et al., "An Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016,
//! §2): bad keys refused at their place; the simulator's policed flows tagged and
//! its shaped (a rate with a buffer) and randomly lossy ones not; the same through
//! the kernel in real mode.

use std::path::Path;
use std::process::{Command, Output};

use crate::common;

fn gentle_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("gentle runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `clients` clients, each on its own access link with `dir` from the edge
/// towards it (a uniformly drawn delay each), fetching `response` once.
fn scenario(name: &str, clients: u32, dir: &str, response: &str) -> String {
    format!(
        r#"name = "{name}"
trials = 1

[[link]]
a = "server"
b = "edge"
delay = "1ms"

[[link]]
a = "edge"
b = "client{{k}}"
count = {clients}
delay = {{ uniform = ["5ms", "100ms"] }}
a_to_b = {dir}

[[workload]]
client = "client{{k}}"
server = "server"
count = {clients}
request = "400B"
response = "{response}"

[[variant]]
name = "linux"
profile = "linux-6"
"#
    )
}

#[test]
fn bad_policer_keys_are_refused_at_their_place() {
    for (policer, needle) in [
        (
            r#"{ rate = "0bit/s", burst = "30KB" }"#,
            "rate must be positive",
        ),
        (r#"{ rate = "unlimited", burst = "30KB" }"#, "rate"),
        (
            r#"{ rate = "1Mbit/s", burst = "1KB" }"#,
            "never passes a full-sized packet",
        ),
        (r#"{ rate = "1Mbit/s" }"#, "burst"),
        (r#"{ burst = "30KB" }"#, "rate"),
        (
            r#"{ rate = "1Mbit/s", burst = "30KB", bucket = 3 }"#,
            "bucket",
        ),
        (r#""1Mbit/s""#, "policer"),
    ] {
        let dir = format!(r#"{{ rate = "20Mbit/s", policer = {policer} }}"#);
        let text = scenario("bad", 2, &dir, "100KB");
        let d = common::scratch("policer-keys");
        std::fs::write(d.join("s.toml"), &text).unwrap();
        let o = gentle_in(&d, &["run", "s.toml", "--out", "res"]);
        assert_eq!(o.status.code(), Some(2), "{policer}: {}", stderr(&o));
        let line = text.lines().position(|l| l.contains("policer")).unwrap() + 1;
        let e = stderr(&o);
        assert!(e.starts_with(&format!("s.toml:{line}:")), "{policer}: {e}");
        // file:line:column, the column inside the policer's table.
        let col: usize = e.split(':').nth(2).unwrap().parse().unwrap();
        let at = text.lines().nth(line - 1).unwrap().find("policer").unwrap() + 1;
        assert!(
            col >= at,
            "{policer}: column {col} before the policer at {at}: {e}"
        );
        assert!(e.contains(needle), "{policer}: {e}");
        assert!(!d.join("res").exists(), "no --out directory for bad input");
    }
}

/// The flows of one capture: (losses, tagged policed).
fn analyzed(pcap: &Path) -> Vec<(u64, bool)> {
    let o = gentle_in(
        pcap.parent().unwrap(),
        &["analyze", pcap.to_str().unwrap(), "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    j["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["losses"].as_u64().unwrap(), !f["policed_kbps"].is_null()))
        .collect()
}

/// Runs `text` (one trial), captures the server, and analyses the capture.
fn simulated(name: &str, text: &str, seed: u64) -> (Vec<(u64, bool)>, serde_json::Value) {
    let d = common::scratch(name);
    std::fs::write(d.join("s.toml"), text).unwrap();
    let seed = seed.to_string();
    let o = gentle_in(
        &d,
        &[
            "run", "s.toml", "--seed", &seed, "--pcap", "0", "--out", "res",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("res/summary.json")).unwrap())
            .unwrap();
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    let policed = report.lines().any(|l| l.starts_with("  by the policer"));
    assert_eq!(policed, text.contains("policer ="), "{report}");
    let pcap = d.join(format!("res/{}-trial0-linux.pcap", text_name(text)));
    (analyzed(&pcap), summary)
}

fn text_name(text: &str) -> &str {
    text.lines().next().unwrap().split('"').nth(1).unwrap()
}

#[test]
fn simulated_policers_are_tagged_and_shapers_and_random_loss_are_not() {
    let policers = [
        (
            r#"{ rate = "20Mbit/s", queue = "100pkt", policer = { rate = "500kbit/s", burst = "10KB" } }"#,
            "200KB",
        ),
        (
            r#"{ rate = "20Mbit/s", queue = "100pkt", policer = { rate = "1.5Mbit/s", burst = "30KB" } }"#,
            "400KB",
        ),
        (
            r#"{ rate = "100Mbit/s", queue = "100pkt", policer = { rate = "2Mbit/s", burst = "3KB" } }"#,
            "300KB",
        ),
        (
            r#"{ rate = "100Mbit/s", queue = "100pkt", policer = { rate = "5Mbit/s", burst = "100KB" } }"#,
            "1MB",
        ),
    ];
    let others = [
        (
            "shaper",
            r#"{ rate = "500kbit/s", queue = "10pkt" }"#,
            "200KB",
        ),
        (
            "shaper",
            r#"{ rate = "1.5Mbit/s", queue = "20pkt" }"#,
            "400KB",
        ),
        ("shaper", r#"{ rate = "5Mbit/s", queue = "40pkt" }"#, "1MB"),
        (
            "random",
            r#"{ rate = "20Mbit/s", queue = "100pkt", loss = { model = "bernoulli", p = 0.03 } }"#,
            "400KB",
        ),
        (
            "random",
            r#"{ rate = "50Mbit/s", queue = "100pkt", loss = { model = "gilbert-elliott", p = 0.01, r = 0.3 } }"#,
            "1MB",
        ),
    ];
    let (mut policed, mut found) = (0u32, 0u32);
    for (i, (dir, size)) in policers.iter().enumerate() {
        let (flows, summary) =
            simulated("policed", &scenario("policed", 50, dir, size), i as u64 + 1);
        let drops = summary["variants"][0]["links"]["dropped_policer"]
            .as_u64()
            .unwrap();
        assert!(drops > 0, "the policer dropped nothing: {dir}");
        for (losses, tagged) in flows {
            if losses >= 5 {
                policed += 1;
                found += tagged as u32;
            }
        }
    }
    let mut false_tags = std::collections::BTreeMap::new();
    let mut lossy = std::collections::BTreeMap::new();
    for (i, (kind, dir, size)) in others.iter().enumerate() {
        let (flows, summary) = simulated(kind, &scenario(kind, 50, dir, size), i as u64 + 1);
        assert!(
            summary["variants"][0]["links"]
                .get("dropped_policer")
                .is_none()
        );
        for (losses, tagged) in flows {
            *lossy.entry(*kind).or_insert(0u32) += (losses >= 5) as u32;
            *false_tags.entry(*kind).or_insert(0u32) += tagged as u32;
        }
    }
    let wrong: u32 = false_tags.values().sum();
    let recall = found as f64 / policed as f64;
    let precision = found as f64 / (found + wrong) as f64;
    eprintln!(
        "policed flows tagged {found} of {policed} (recall {recall:.3}); tagged among the \
         shaped and randomly lossy flows with 5 losses or more: {false_tags:?} of {lossy:?} \
         (precision {precision:.3})"
    );
    assert!(policed >= 190, "{policed} policed flows with losses");
    assert!(lossy.values().all(|&n| n >= 80), "{lossy:?}");
    assert!(recall >= 0.95, "recall {recall}");
    assert_eq!(false_tags.get("random"), Some(&0), "{false_tags:?}");
    assert!(false_tags["shaper"] <= 2, "{false_tags:?}");
    assert!(precision >= 0.98, "precision {precision}");
}

/// One server and one client through a 2 Mbit/s policer (30 kB bucket) or a 2
/// Mbit/s shaper (10-packet buffer), 20 ms each way.
fn kernel_scenario(name: &str, dir: &str) -> String {
    format!(
        r#"name = "{name}"
trials = 6

[[link]]
a = "server"
b = "client"
delay = "20ms"
a_to_b = {dir}

[[workload]]
client = "client"
server = "server"
request = "400B"
response = "400KB"

[[variant]]
name = "linux"
profile = "linux-6"
"#
    )
}

/// Real mode: the kernel's flows through the forwarder's policer are tagged in the
/// server's captures, and those through its shaper are not.
#[test]
fn kernel_flows_through_the_emulated_policer_are_tagged_and_shaped_ones_are_not() {
    if common::skip_real_mode() {
        return;
    }
    let cases = [
        (
            "policed",
            r#"{ policer = { rate = "2Mbit/s", burst = "30KB" } }"#,
        ),
        ("shaped", r#"{ rate = "2Mbit/s", queue = "10pkt" }"#),
    ];
    let mut tagged = [0u32; 2];
    for (k, (name, dir)) in cases.iter().enumerate() {
        let d = common::scratch(name);
        std::fs::write(d.join("s.toml"), kernel_scenario(name, dir)).unwrap();
        let o = gentle_in(&d, &["emulate", "s.toml", "--out", "res"]);
        assert!(o.status.success(), "{}", stderr(&o));
        for trial in 0..6 {
            let pcap = d.join(format!("res/linux-trial{trial}-server.pcap"));
            let flows = analyzed(&pcap);
            assert_eq!(flows.len(), 1, "{name} trial {trial}");
            assert!(
                flows[0].0 >= 5,
                "{name} trial {trial}: {} losses",
                flows[0].0
            );
            tagged[k] += flows[0].1 as u32;
        }
    }
    eprintln!(
        "kernel: policed flows tagged {} of 6, shaped {} of 6",
        tagged[0], tagged[1]
    );
    assert!(tagged[0] >= 5, "policed flows tagged: {} of 6", tagged[0]);
    assert_eq!(tagged[1], 0, "shaped flows tagged");
}
