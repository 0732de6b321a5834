//! `gentle analyze CAPTURE --targets FILE`: a capture's statistics as targets of
//! `gentle calibrate`. On a capture of a simulated trial, the statistics the file
//! gives are the engine's own for that trial (the server ends' counters, and the
//! response times); a scenario started elsewhere and fitted to them recovers the
//! loss rate the capture was made at; bad use is refused before any work.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{self, gentle_in};
use gentle_lab::calibrate;
use gentle_lab::runner::{self, Observe, RunOptions};
use gentle_lab::scenario::Scenario;
use gentle_lab::scenario::targets::parse_targets;

/// One trial of 200 keep-alive connections, 5 responses each, over a path that
/// loses the server's packets in bursts at rate `p`.
fn scenario(p: f64) -> String {
    format!(
        r#"name = "captured"
seed = 3
trials = 1
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "30ms"
a_to_b = {{ loss = {{ model = "burst-position", p = {p}, slope = 0.2, rest_of_burst = 0.3 }} }}
[[workload]]
client = "client"
server = "server"
request = "300B"
response = {{ dist = "choice", sizes = ["1400B", "6KB", "20KB"] }}
exchanges = 5
connection = "persistent"
think = "100ms"
count = 200
[[variant]]
name = "Linux"
profile = "linux-3.10"
[calibrate]
trials = 4
candidates = 40
[calibrate.free]
link.a_to_b.loss.p = {{ min = 0.001, max = 0.1, log = true }}
"#
    )
}

/// Captures trial 0 of `scenario(0.02)` at the server and writes its targets.
fn capture_targets(dir: &Path) -> String {
    std::fs::write(dir.join("truth.toml"), scenario(0.02)).unwrap();
    let o = gentle_in(dir, &["run", "truth.toml", "--pcap", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = gentle_in(
        dir,
        &[
            "analyze",
            "captured-trial0-Linux.pcap",
            "--targets",
            "targets.toml",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(dir.join("targets.toml")).unwrap()
}

#[test]
fn a_captures_statistics_are_the_engines_and_fit_a_scenario_to_it() {
    let dir = common::scratch("analyze-targets");
    let text = capture_targets(&dir);
    let names = calibrate::stats::counter_names();
    let targets = parse_targets("targets.toml", &text, &names).expect("a valid targets file");
    let got: BTreeMap<String, f64> = targets
        .iter()
        .map(|t| (t.stat.text.clone(), t.value))
        .collect();
    // The engine's own values for the captured trial.
    let scn = Scenario::parse("truth.toml", &scenario(0.02)).unwrap();
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: 1,
            seed: scn.seed,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let engine = |stat: &str| {
        let s = targets.iter().find(|t| t.stat.text == stat).expect(stat);
        calibrate::stats::value(&s.stat, &r.variants[0]).expect("defined")
    };
    // What the capture shows exactly: the server's retransmission rate, its
    // timeouts and the response times.
    for stat in [
        "(Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans) / Server.DataSegsOut",
        "Server.TCPTimeouts / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)",
        "ExchangesWithServerRetrans / Exchanges",
        "latency.p50",
        "latency.p90",
        "latency.p99",
        "latency.mean",
    ] {
        let (c, e) = (got[stat], engine(stat));
        assert!((c - e).abs() <= 0.01 * e, "{stat}: capture {c}, engine {e}");
    }
    // What the capture infers: probes and fast retransmissions per recovery within
    // a few percent; the split of the rest between fast recovery and slow start
    // within 0.06 of the engine's (the engine counts a retransmission by the state
    // it was sent in, the analysis by what the packets show).
    for (stat, tol) in [
        (
            "Server.LossProbesRetrans / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)",
            0.05,
        ),
        ("Server.TCPFastRetrans / Server.RecoveryEpisodes", 0.05),
    ] {
        let (c, e) = (got[stat], engine(stat));
        assert!((c - e).abs() <= tol * e, "{stat}: capture {c}, engine {e}");
    }
    for stat in [
        "Server.TCPFastRetrans / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)",
        "Server.TCPSlowStartRetrans / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)",
    ] {
        let (c, e) = (got[stat], engine(stat));
        assert!((c - e).abs() <= 0.06, "{stat}: capture {c}, engine {e}");
    }
    // Fitted to the capture's retransmission rate and response times, a scenario
    // written with a quarter of the loss finds it again.
    let kept: String = text
        .split("\n[[target]]")
        .skip(1)
        .filter(|t| t.contains("(Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans) / Server.DataSegsOut") || t.contains("latency."))
        .map(|t| format!("\n[[target]]{t}"))
        .collect();
    std::fs::write(dir.join("fit-targets.toml"), kept).unwrap();
    std::fs::write(dir.join("start.toml"), scenario(0.005)).unwrap();
    let o = gentle_in(
        &dir,
        &[
            "calibrate",
            "start.toml",
            "--targets",
            "fit-targets.toml",
            "--out",
            "fitted.toml",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fitted = std::fs::read_to_string(dir.join("fitted.toml")).unwrap();
    let p: f64 = fitted
        .lines()
        .find_map(|l| l.split("p = ").nth(1))
        .and_then(|rest| rest.split(',').next())
        .and_then(|v| v.trim().parse().ok())
        .expect("the fitted loss rate");
    assert!((0.015..=0.027).contains(&p), "fitted p {p}, truth 0.02");
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains("5 of 5 targets within 10%"), "{report}");
}

#[test]
fn targets_take_one_capture_and_keep_an_existing_file() {
    let dir = common::scratch("analyze-targets-bad");
    capture_targets(&dir);
    let before = std::fs::read_to_string(dir.join("targets.toml")).unwrap();
    // An existing file is not replaced without --force; nothing is read first.
    let o = gentle_in(
        &dir,
        &[
            "analyze",
            "captured-trial0-Linux.pcap",
            "--targets",
            "targets.toml",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--targets") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("targets.toml")).unwrap(),
        before
    );
    // Many captures have no single set of statistics here.
    let o = gentle_in(&dir, &["analyze", ".", "--targets", "new.toml"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--targets") && err.contains("one capture"),
        "{err}"
    );
    assert!(!dir.join("new.toml").exists());
}
