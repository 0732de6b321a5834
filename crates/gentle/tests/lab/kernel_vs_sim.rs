//! `gentle reproduce kernel-vs-sim`: the linux-6 profile next to the host's
//! kernel on Table 1's tail losses, a tail segment lost twice, a mid-response loss,
//! a reordered segment and random loss. Each case must match: the same segments
//! retransmitted for the same reasons, the same CA state and cwnd afterwards, and
//! server times within the stated tolerance — in most kernel runs, since the
//! kernel's timing jitters (scheduling, 4 ms timer ticks). Needs root; without it
//! the experiment says why and the test passes.
//!
//! Its times are compared within 2 ms, so it is ignored in the parallel run, where
//! other tests load both cores and delay the kernel by 3–15 ms: `scripts/test` runs
//! it alone afterwards (`cargo test --workspace --profile ci --test lab -- --ignored
//! --exact kernel_vs_sim::the_linux_6_profile_matches_the_kernel`).

use std::process::Command;

use serde_json::Value;

#[test]
#[ignore = "timed against the kernel: scripts/test runs it alone"]
fn the_linux_6_profile_matches_the_kernel() {
    if crate::common::skip_real_mode() {
        return;
    }
    let o = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(["reproduce", "kernel-vs-sim", "--quick", "--json"])
        .output()
        .expect("gentle runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let out = &v["outcome"];
    assert!(out["skipped"].is_null(), "skipped: {}", out["skipped"]);
    let cases = out["cases"].as_array().expect("cases");
    let mut names: Vec<&str> = cases.iter().map(|c| c["case"].as_str().unwrap()).collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "AAAL",
            "AALL",
            "ALLL",
            "LLLL",
            "tail and probe",
            "mid-response",
            "reordering",
            "mobile-2pct",
            "high-speed-2pct",
            "satellite-tail"
        ]
    );
    // CUBIC and Reno next to the simulation, BBR on the kernel alone, every case.
    for name in &names {
        let variants: Vec<&str> = cases
            .iter()
            .filter(|c| c["case"] == *name)
            .map(|c| c["variant"].as_str().unwrap())
            .collect();
        assert_eq!(
            variants,
            ["linux-6 cubic", "linux-6 reno", "bbr (kernel only)"]
        );
    }
    let share = |c: &Value, k: &str| (c[k][0].as_u64().unwrap(), c[k][1].as_u64().unwrap());
    let mut report = Vec::new();
    for c in cases {
        let name = format!(
            "{} {}",
            c["case"].as_str().unwrap(),
            c["variant"].as_str().unwrap()
        );
        if c["sim"].as_array().unwrap().is_empty() {
            // BBR: the kernel finished every response.
            for k in c["kernel"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|t| t.as_array().unwrap())
            {
                assert!(k["server_ms"].is_number(), "{name}: unfinished");
            }
            continue;
        }
        let (rep, n) = share(c, "same_repairs");
        let (st, _) = share(c, "same_state");
        let (tm, trials) = share(c, "time_agrees");
        assert!(n > 0, "{name}: no kernel run");
        // Most kernel runs must match: the kernel's timing jitters (scheduling,
        // timer ticks), and sub-millisecond differences can decide a timer
        // against an ACK, or when TCP_INFO is sampled against the last ACK.
        let ok = |k: u64, of: u64| 2 * k > of;
        if !(ok(rep, n) && ok(st, n) && ok(tm, trials)) {
            report.push(format!(
                "{name}: repairs {rep}/{n}, state {st}/{n}, times {tm}/{trials}: {}",
                c["disagreements"]
            ));
        }
        check_clocked(&name, c);
        // The simulation repaired what was lost, in every trial.
        for s in c["sim"].as_array().unwrap() {
            assert!(
                s["server_ms"].is_number(),
                "{name}: a simulated response unfinished"
            );
        }
    }
    // The deterministic cases' repairs as the papers describe them.
    let first = |name: &str| {
        let c = cases.iter().find(|c| c["case"] == name).unwrap();
        let s = &c["sim"][0];
        s["retrans"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{}:{}", r["segment"], r["cause"].as_str().unwrap()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(first("AAAL"), "10:probe");
    assert_eq!(first("mid-response"), "5:fast");
    assert!(first("tail and probe").ends_with("10:timeout"));
    assert!(
        report.is_empty(),
        "the kernel and the simulation differ:\n{}",
        report.join("\n")
    );
}

/// Every kernel run of case `c` was set against a simulation on its own kernel
/// clock (jiffies and the timer wheel, read from /proc/timer_list as root).
fn check_clocked(name: &str, c: &Value) {
    let clocked = &c["clocked"];
    assert!(clocked.is_object(), "{name}: no clocked comparison");
    let runs = c["kernel"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t.as_array().unwrap())
        .filter(|k| k["server_ms"].is_number())
        .count() as u64;
    assert_eq!(
        clocked["agree"][1].as_u64(),
        Some(runs),
        "{name}: every kernel run with a time compared"
    );
    assert!(clocked["hz"].as_u64().is_some_and(|h| h > 0), "{name}: HZ");
}
