//! `gentle serve` and `gentle connect`: gentle's engine on a TUN device with the
//! kernel's TCP as its peer through the emulated link. `curl` fetches from the
//! engine's HTTP responder through a lossy link and gets every byte; the engine
//! repairs the scenario's dropped segment by fast retransmit against a kernel
//! client, and as a client is served by a kernel that repairs it; Corrective and
//! Proactive meet a kernel that speaks neither and interoperate as plain TCP.
//! Real mode needs root and /dev/net/tun: without them every test says why and
//! passes.

use crate::common;

use std::process::{Command, Output};

use crate::common::{gentle, root};
use serde_json::Value;

fn skip() -> bool {
    common::skip_real_mode()
}

fn example(name: &str) -> String {
    root().join("examples").join(name).display().to_string()
}

fn json(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

fn counter(v: &Value, variant: usize, name: &str) -> u64 {
    v["variants"][variant]["counters"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("counter {name} in {}", v["variants"][variant]["counters"]))
}

const LOSSY: &str = r#"
name = "curl-lossy"
seed = 3
trials = 2
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
queue = "100pkt"
draws = "position"
a_to_b = { loss = { model = "bernoulli", p = 0.05 } }
[[workload]]
client = "client"
server = "server"
request = "100B"
response = "20KB"
[[variant]]
name = "linux-6"
profile = "linux-6"
"#;

/// curl fetches 300 kB from the engine's HTTP responder through a link that
/// loses 5% of the engine's packets: every trial gets status 200 and all the
/// bytes, and the engine retransmitted what the link lost.
#[test]
fn curl_fetches_through_a_lossy_link() {
    if skip() {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        panic!("curl is not installed (.ci/run installs it)");
    }
    let d = common::scratch("curl");
    let scn = d.join("lossy.toml");
    std::fs::write(&scn, LOSSY).unwrap();
    let body = d.join("body");
    let cmd = format!(
        "curl -s -o {} -w '%{{http_code}} %{{size_download}}' http://$GENTLE_SERVER/300000",
        body.display()
    );
    let o = gentle(&["serve", scn.to_str().unwrap(), "--peer", &cmd]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(text.matches("| 200 300000").count(), 2, "{text}");
    assert_eq!(
        text.matches("\"GET /300000 HTTP/1.1\" 200").count(),
        2,
        "{text}"
    );
    let got = std::fs::read(&body).expect("curl wrote the body");
    assert_eq!(got.len(), 300_000);
    assert!(
        got.iter().all(|&b| b == b'g'),
        "the engine's pattern, intact"
    );
    let line = text
        .lines()
        .find(|l| l.contains("gentle's engine, variant"))
        .expect("engine line");
    assert!(line.contains("RetransSegs"), "losses repaired: {line}");
    assert!(line.contains("malformed 0"), "{line}");
}

/// The scenario drops the 5th data segment of a 30 kB response: the engine (as
/// server) repairs it by one fast retransmit against a kernel client, in every
/// variant; as a client, the kernel server does, and the engine gets every byte.
#[test]
fn the_dropped_segment_is_repaired_both_ways() {
    if skip() {
        return;
    }
    let v = json(&gentle(&[
        "serve",
        &example("fast-retransmit.toml"),
        "--json",
    ]));
    for i in 0..2 {
        assert_eq!(counter(&v, i, "TCPFastRetrans"), 1, "{}", v["variants"][i]);
        assert_eq!(counter(&v, i, "TCPTimeouts"), 0);
        assert_eq!(v["variants"][i]["samples"], 1);
        assert_eq!(v["variants"][i]["incomplete"], 0);
    }
    let host = &v["real"]["engine"][0][0]["host"];
    assert_eq!(host["connections"], 1);
    assert_eq!(host["malformed"], 0);
    let c = json(&gentle(&[
        "connect",
        &example("fast-retransmit.toml"),
        "--variant",
        "linux-2.6",
        "--json",
    ]));
    // The kernel server's repair, inferred from its capture.
    assert_eq!(counter(&c, 0, "TCPFastRetrans"), 1, "{}", c["variants"][0]);
    assert_eq!(c["variants"][0]["samples"], 1);
    assert_eq!(c["variants"][0]["incomplete"], 0);
}

/// Corrective and Proactive against a kernel that speaks neither: the kernel
/// ignores the experimental option, so Corrective is never negotiated, and
/// Proactive's copies are duplicates it discards; every exchange completes.
#[test]
fn corrective_and_proactive_interoperate_as_plain_tcp() {
    if skip() {
        return;
    }
    let d = common::scratch("interop");
    let scn = d.join("interop.toml");
    std::fs::write(
        &scn,
        r#"
name = "interop"
seed = 1
trials = 2
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "25ms"
queue = "100pkt"
a_to_b = { loss = { model = "drop-list", segments = [3] } }
[[workload]]
client = "client"
server = "server"
request = "100B"
response = "20KB"
connection = "persistent"
exchanges = 2
[[variant]]
name = "corrective"
profile = "linux-2.6"
corrective = "on"
[[variant]]
name = "proactive"
profile = "linux-2.6"
proactive = "on"
"#,
    )
    .unwrap();
    let v = json(&gentle(&["serve", scn.to_str().unwrap(), "--json"]));
    for i in 0..2 {
        let name = v["variants"][i]["name"].as_str().unwrap().to_string();
        assert_eq!(
            v["variants"][i]["incomplete"], 0,
            "{name}: {}",
            v["variants"][i]
        );
        assert_eq!(
            v["variants"][i]["samples"], 4,
            "{name}: every exchange ranked"
        );
    }
    assert_eq!(counter(&v, 0, "CorrectiveSent"), 0, "never negotiated");
    assert!(counter(&v, 1, "ProactiveCopies") > 0, "copies sent");
    let engine = v["real"]["engine"].as_array().unwrap();
    for trials in engine {
        for t in trials.as_array().unwrap() {
            assert_eq!(t["host"]["malformed"], 0);
            assert_eq!(t["host"]["resets_sent"], 0);
        }
    }
}

/// What real mode with the engine cannot do is refused before anything is
/// created, exit 2.
#[test]
fn refusals() {
    if skip() {
        return;
    }
    let d = common::scratch("refuse");
    let scn = d.join("sessions.toml");
    let text = std::fs::read_to_string(example("fast-retransmit.toml"))
        .unwrap()
        .replace(
            "profile = \"plain\"",
            "profile = \"plain\"\nsession = \"host-pair\"",
        );
    std::fs::write(&scn, text).unwrap();
    let o = gentle(&["serve", scn.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sessions"));
    let o = gentle(&[
        "serve",
        &example("fast-retransmit.toml"),
        "--kernel",
        "cubic,reno",
    ]);
    assert_eq!(o.status.code(), Some(2));
    for cmd in ["serve", "connect"] {
        let o = gentle(&[cmd, &example("fast-retransmit.toml"), "--variant", "nope"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("no such variant"));
    }
    let o = gentle(&["serve", &example("fast-retransmit.toml"), "--trials", "0"]);
    assert_eq!(o.status.code(), Some(2));
    // A client command that fails fails the run.
    let o = gentle(&[
        "serve",
        &example("fast-retransmit.toml"),
        "--variant",
        "plain",
        "--peer",
        "exit 3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("exit 3"));
}
