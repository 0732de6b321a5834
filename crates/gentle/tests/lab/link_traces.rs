//! Trace-driven links (`trace = "FILE"`, Mahimahi's format): the capacity follows the
//! trace's delivery opportunities; bad traces and contradictory keys are refused with
//! their place.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common;

/// A trace with one opportunity every `every_ms` for 1 s.
fn trace(every_ms: u64) -> String {
    (1..=1000 / every_ms)
        .map(|k| format!("{}\n", k * every_ms))
        .collect()
}

fn scenario(down: &str) -> String {
    format!(
        "name = \"t\"\ntrials = 20\n[[link]]\na = \"server\"\nb = \"client\"\ndelay = \"5ms\"\n[link.a_to_b]\n{down}\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nresponse = \"1500KB\"\n[[variant]]\nprofile = \"linux-6\"\n"
    )
}

fn run(dir: &Path, text: &str) -> Output {
    std::fs::write(dir.join("s.toml"), text).unwrap();
    Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(dir)
        .args(["run", "s.toml", "--json"])
        .output()
        .unwrap()
}

fn mean_ms(o: &Output) -> f64 {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["variants"][0]["latency_ms"]["mean"].as_f64().unwrap()
}

#[test]
fn a_link_sends_at_its_traces_opportunities() {
    let d = common::scratch("trace");
    std::fs::write(d.join("fast.down"), trace(1)).unwrap();
    std::fs::write(d.join("slow.down"), trace(2)).unwrap();
    // 1000 packets of 1500 B: one opportunity a millisecond (12 Mbit/s) against one
    // every two.
    let fast = mean_ms(&run(&d, &scenario("trace = \"fast.down\"")));
    let slow = mean_ms(&run(&d, &scenario("trace = \"slow.down\"")));
    assert!((1000.0..1300.0).contains(&fast), "fast {fast} ms");
    let ratio = slow / fast;
    assert!(
        (1.7..2.1).contains(&ratio),
        "slow {slow} ms, fast {fast} ms"
    );
}

#[test]
fn bad_traces_and_contradictions_are_refused_with_their_place() {
    let d = common::scratch("trace-bad");
    std::fs::write(d.join("bad.down"), "1\n2\nthree\n").unwrap();
    std::fs::write(d.join("ok.down"), "1\n2\n").unwrap();
    for (down, needle) in [
        (
            "trace = \"bad.down\"",
            "bad.down:3: `three` is not a whole number",
        ),
        ("trace = \"missing.down\"", "cannot read"),
        (
            "trace = \"ok.down\"\nrate = \"5Mbit/s\"",
            "`trace` or `rate`, not both",
        ),
        (
            "trace = \"ok.down\"\nscheduling = \"acks-first\"",
            "first in, first out",
        ),
    ] {
        let o = run(&d, &scenario(down));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{down}: {err}");
        assert!(err.contains("s.toml:8:"), "{down}: {err}");
        assert!(err.contains(needle), "{down}: {err}");
    }
}
