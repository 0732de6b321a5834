//! Router queues in real mode's forwarder, with the host's kernel at both ends:
//! RED marks the packets of an ECN-capable kernel CE (RFC 3168 §5) — the kernel
//! echoes ECE and answers with CWR, and nothing is dropped — and drops those of a
//! kernel without ECN; acks-first scheduling (`fast-start-and-sessions.txt` §5)
//! sends a pure ACK ahead of the data queued in its direction. Real mode needs
//! root and /dev/net/tun: without them every test says why and passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn skip() -> bool {
    match gentle_real::available() {
        Ok(()) => false,
        Err(why) => {
            eprintln!("skipped: {why}");
            true
        }
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gentle-emulate-q-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `gentle emulate` on `scenario` (written into `dir`), output in `dir/out`;
/// the summary JSON and the forwarder's log.
fn emulate(dir: &Path, scenario: &str) -> (serde_json::Value, Vec<BTreeMap<String, String>>) {
    let file = dir.join("s.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(["emulate", file.to_str().unwrap(), "--json", "--out"])
        .arg(&out)
        .output()
        .expect("gentle runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json = serde_json::from_slice(&o.stdout).unwrap();
    let text = std::fs::read_to_string(out.join("forwarder.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let log = lines
        .map(|l| {
            head.iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect();
    (json, log)
}

fn flags(r: &BTreeMap<String, String>) -> u8 {
    u8::from_str_radix(r["flags"].trim_start_matches("0x"), 16).unwrap()
}

fn ms(r: &BTreeMap<String, String>, k: &str) -> f64 {
    r[k].parse().unwrap()
}

const SYN: u8 = 0x02;
const ECE: u8 = 0x40;
const CWR: u8 = 0x80;

#[test]
fn red_marks_an_ecn_kernel_and_drops_for_one_without() {
    if skip() {
        return;
    }
    let dir = tmp("red");
    let (j, log) = emulate(
        &dir,
        r#"
name = "red"
seed = 3
trials = 1
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
queue = "100pkt"
red = { w_q = 0.05, min_th = 3, max_th = 10, max_p = 0.2, ecn = true }
[[workload]]
client = "client"
server = "server"
request = "100B"
response = "1MB"
[[variant]]
name = "ecn"
profile = "linux-6"
ecn = "on"
[[variant]]
name = "no-ecn"
profile = "linux-6"
"#,
    );
    let v = |name: &str| {
        j["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap()
            .clone()
    };
    let (ecn, plain) = (v("ecn"), v("no-ecn"));
    for x in [&ecn, &plain] {
        assert_eq!(x["incomplete"], 0, "{x}");
    }
    // The server's direction: marks, not drops, for the ECN kernel ...
    let down = |x: &serde_json::Value| x["queues"][0].clone();
    assert_eq!(down(&ecn)["from"], "server");
    assert!(
        down(&ecn)["ecn_marked"].as_u64().unwrap() > 10,
        "{}",
        down(&ecn)
    );
    assert_eq!(down(&ecn)["dropped_queue"], 0, "{}", down(&ecn));
    // ... early drops for the other, with the queue far below its limit.
    assert_eq!(down(&plain)["ecn_marked"], 0);
    assert!(
        down(&plain)["dropped_red"].as_u64().unwrap() > 0,
        "{}",
        down(&plain)
    );
    assert!(down(&plain)["max_queue"].as_u64().unwrap() < 100);
    // The kernel saw the marks (their IP checksums held): the client echoes ECE
    // and the server answers with CWR; without ECN, neither.
    let count = |variant: &str, dir: &str, bit: u8| {
        log.iter()
            .filter(|r| r["variant"] == variant && r["direction"] == dir)
            .filter(|r| flags(r) & SYN == 0 && flags(r) & bit != 0)
            .count()
    };
    assert!(count("ecn", "to-server", ECE) > 0);
    assert!(count("ecn", "to-client", CWR) > 0);
    assert_eq!(count("no-ecn", "to-server", ECE), 0);
    assert_eq!(count("no-ecn", "to-client", CWR), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An upload and a download share the client's direction: the download's pure
/// ACKs queue behind the upload's data under FIFO, and go first under acks-first,
/// waiting at most for the packet being sent (never preempted, §5).
#[test]
fn acks_first_sends_pure_acks_ahead_of_queued_data() {
    if skip() {
        return;
    }
    let scenario = |scheduling: &str| {
        format!(
            r#"
name = "acks-first"
seed = 4
trials = 1
[[link]]
a = "server"
b = "client"
rate = "5Mbit/s"
delay = "10ms"
queue = "40pkt"
scheduling = "{scheduling}"
[[workload]]
name = "upload"
client = "client"
server = "server"
request = "1MB"
response = "100B"
[[workload]]
name = "download"
client = "client"
server = "server"
port = 81
request = "100B"
response = "1MB"
[[variant]]
name = "linux"
profile = "linux-6"
"#
        )
    };
    // One 1500-byte packet and one pure ACK at 5 Mbit/s, ms, with 0.1 ms to spare
    // (the log's times are rounded to µs).
    let longest_wait = (1500.0 + 52.0) * 8.0 / 5e6 * 1e3 + 0.1;
    let mut median = Vec::new();
    for scheduling in ["fifo", "acks-first"] {
        let dir = tmp(scheduling);
        let (j, log) = emulate(&dir, &scenario(scheduling));
        assert_eq!(j["variants"][0]["incomplete"], 0, "{scheduling}");
        // Time in the queue and on the wire: due − read − propagation delay.
        let mut waits: Vec<f64> = log
            .iter()
            .filter(|r| r["direction"] == "to-server" && r["payload"] == "0")
            .filter(|r| r["fate"] == "delivered" && flags(r) & 0x03 == 0)
            .map(|r| ms(r, "due_ms") - ms(r, "t_ms") - 10.0)
            .collect();
        assert!(waits.len() > 100, "{scheduling}: {} ACKs", waits.len());
        waits.sort_by(f64::total_cmp);
        if scheduling == "acks-first" {
            let max = waits[waits.len() - 1];
            assert!(max <= longest_wait, "an ACK waited {max} ms");
        }
        median.push(waits[waits.len() / 2]);
        let _ = std::fs::remove_dir_all(&dir);
    }
    // Under FIFO the median ACK waits behind queued upload data.
    assert!(median[0] > 4.0 * median[1], "{median:?}");
}
