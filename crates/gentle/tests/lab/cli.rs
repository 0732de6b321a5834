//! The `gentle` command as a user runs it.

use crate::common;

use crate::common::{gentle, root};
use std::process::Command;

const GOOD: &str = r#"name = "t"
trials = 50
[[link]]
a = "server"
b = "client"
rate = "5Mbit/s"
delay = "100ms"
loss = { model = "bernoulli", p = 0.05 }
[[workload]]
client = "client"
server = "server"
request = "40B"
response = "5000B"
[[variant]]
profile = "linux-2.6"
[[variant]]
profile = "plain"
"#;

/// Writes `text`, runs it, expects exit 2 and an error naming `file:line:col` of
/// the first occurrence of `at` in the text.
fn bad(name: &str, text: &str, at: &str, needle: &str) -> String {
    let off = text
        .find(at)
        .unwrap_or_else(|| panic!("{name}: `{at}` not in text"));
    let line = text[..off].matches('\n').count() + 1;
    // Columns count characters, not bytes.
    let col = text[text[..off].rfind('\n').map_or(0, |i| i + 1)..off]
        .chars()
        .count()
        + 1;
    let d = common::scratch(name);
    let f = d.join("s.toml");
    std::fs::write(&f, text).unwrap();
    let out_dir = d.join("out");
    let o = gentle(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    let place = format!("{}:{line}:{col}: error:", f.display());
    assert!(
        err.starts_with(&place),
        "{name}: expected `{place}` in\n{err}"
    );
    assert!(
        err.contains(needle),
        "{name}: expected `{needle}` in\n{err}"
    );
    assert!(!out_dir.exists(), "{name}: nothing may be written");
    assert!(o.stdout.is_empty());
    err
}

#[test]
fn malformed_scenarios_are_rejected_with_place_and_exit_2() {
    let e = bad(
        "unknown-key",
        &GOOD.replace("delay = \"100ms\"", "dealy = \"100ms\""),
        "dealy",
        "unknown key `dealy`",
    );
    assert!(e.contains("did you mean `delay`?"), "{e}");
    let e = bad(
        "bad-unit",
        &GOOD.replace("\"5Mbit/s\"", "\"5Mbps/s\""),
        "\"5Mbps/s\"",
        "unknown rate unit",
    );
    assert!(e.contains("expected:"), "{e}");
    // A two-byte `µ` earlier on the line is one column.
    bad(
        "column-after-micro",
        &GOOD.replace(
            "delay = \"100ms\"",
            "delay = \"100ms\"\nb_to_a = { delay = \"100µs\", rate = \"5Mbps/s\" }",
        ),
        "\"5Mbps/s\"",
        "unknown rate unit",
    );
    bad(
        "bad-size",
        &GOOD.replace("\"5000B\"", "\"5 kilos\""),
        "\"5 kilos\"",
        "unknown size unit `kilos`",
    );
    bad(
        "out-of-range",
        &GOOD.replace("p = 0.05", "p = 1.5"),
        "1.5",
        "1.5 is out of range",
    );
    bad(
        "missing",
        &GOOD.replace("response = \"5000B\"\n", ""),
        "[[workload]]",
        "missing key `response`",
    );
    let e = bad(
        "profile",
        &GOOD.replace("\"plain\"", "\"linux-26\""),
        "\"linux-26\"",
        "unknown profile",
    );
    assert!(e.contains("did you mean `linux-2.6`?"), "{e}");
    bad(
        "syntax",
        &GOOD.replace("trials = 50", "trials = = 50"),
        "= 50",
        "invalid TOML",
    );
    bad(
        "node",
        &GOOD.replace("client = \"client\"", "client = \"clinet\""),
        "\"clinet\"",
        "not on any link",
    );
    bad(
        "negative",
        &GOOD.replace("trials = 50", "trials = 0"),
        "0\n",
        "out of range",
    );
    bad(
        "unknown-recovery",
        &GOOD.replace(
            "profile = \"plain\"",
            "profile = \"plain\"\nrecovery = \"prr2\"",
        ),
        "\"prr2\"",
        "unknown recovery algorithm `prr2`",
    );
    bad(
        "unknown-er",
        &GOOD.replace(
            "profile = \"plain\"",
            "profile = \"plain\"\ner = \"sometimes\"",
        ),
        "\"sometimes\"",
        "unknown early-retransmit mode",
    );
    bad(
        "writes-without-time",
        &GOOD.replace(
            "request = \"40B\"\nresponse = \"5000B\"",
            "kind = \"writes\"\nwrites = [\"20kB at 0ms\", \"10kB\"]",
        ),
        "\"10kB\"",
        "is not \"SIZE at TIME\"",
    );
    bad(
        "unknown-plot",
        &GOOD.replace("trials = 50", "trials = 50\nplot = \"tsq\""),
        "\"tsq\"",
        "unknown plot `tsq`",
    );
}

#[test]
fn same_seed_same_json_with_one_or_many_threads() {
    let d = common::scratch("det");
    let f = d.join("s.toml");
    std::fs::write(&f, GOOD).unwrap();
    let run = |threads: &str| {
        let o = gentle(&[
            "run",
            f.to_str().unwrap(),
            "--json",
            "--threads",
            threads,
            "--trials",
            "300",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["wall_seconds"].as_f64().unwrap() >= 0.0);
        v["wall_seconds"] = serde_json::Value::Null;
        v
    };
    let a = run("1");
    let b = run("2");
    assert_eq!(a, b);
    for key in [
        "scenario",
        "seed",
        "trials",
        "sim_events",
        "sim_packets",
        "variants",
    ] {
        assert!(!a[key].is_null(), "missing {key}");
    }
    let v = &a["variants"][0];
    for key in ["mean", "p25", "p50", "p90", "p99"] {
        assert!(v["latency_ms"][key].as_f64().unwrap() > 0.0);
    }
    assert!(v["counters"]["TCPTimeouts"].as_u64().is_some());
    assert_eq!(a["trials"], 300);
}

/// A variant name with a comma and quotes is quoted in records.csv: the file reads
/// back (with the csv crate) with every row as wide as the header, the name whole.
#[test]
fn records_csv_quotes_a_name_with_a_comma_and_quotes() {
    let d = common::scratch("csv-quoting");
    let f = d.join("s.toml");
    let text = GOOD.replace("trials = 50", "trials = 3").replace(
        "[[variant]]\nprofile = \"linux-2.6\"",
        "[[variant]]\nname = 'a,\"b\"'\nprofile = \"linux-2.6\"",
    );
    assert!(text.contains("a,\"b\""));
    std::fs::write(&f, text).unwrap();
    let out = d.join("res");
    let o = gentle(&["run", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("records.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    assert_eq!(header.len(), 21, "{header:?}");
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 2 * 3);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{row:?}");
        assert!(row[col("trial")].parse::<u64>().is_ok(), "{row:?}");
        assert!(
            ["true", "false"].contains(&&row[col("complete")]),
            "{row:?}"
        );
    }
    assert_eq!(&rows[0][col("variant")], "a,\"b\"");
    assert_eq!(&rows[0][col("workload")], &rows[5][col("workload")]);
}

/// `--pcap` files keep the simulator's nanosecond times: the nanosecond format
/// (magic a1b23c4d), and times that are not whole microseconds (a 7 Mbit/s link
/// sends a 1500-byte packet in 1714.285… µs).
#[test]
fn pcap_files_keep_nanosecond_times() {
    use pcap_file::pcap::PcapReader;
    let d = common::scratch("pcap-ns");
    let f = d.join("s.toml");
    let text = GOOD
        .replace("trials = 50", "trials = 1")
        .replace("5Mbit/s", "7Mbit/s");
    std::fs::write(&f, text).unwrap();
    let out = d.join("res");
    let o = gentle(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--pcap",
        "0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let file = std::fs::File::open(out.join("t-trial0-variant1.pcap")).unwrap();
    let bytes = std::fs::read(out.join("t-trial0-variant1.pcap")).unwrap();
    assert_eq!(bytes[..4], [0xa1, 0xb2, 0x3c, 0x4d]);
    let mut r = PcapReader::new(file).unwrap();
    assert_eq!(
        r.header().ts_resolution,
        pcap_file::TsResolution::NanoSecond
    );
    let mut times = Vec::new();
    while let Some(p) = r.next_packet() {
        times.push(p.unwrap().timestamp);
    }
    assert!(times.len() >= 8, "{times:?}");
    assert!(
        times.iter().any(|t| t.subsec_nanos() % 1000 != 0),
        "every time is whole µs: {times:?}"
    );
}

#[test]
fn out_dir_holds_csv_json_and_plots() {
    let d = common::scratch("out");
    let f = d.join("s.toml");
    std::fs::write(&f, GOOD).unwrap();
    let out = d.join("res");
    let o = gentle(&[
        "run",
        f.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--pcap",
        "3",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("records.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 50);
    for f in [
        "summary.json",
        "cdf.png",
        "cdf.svg",
        "t-trial3-variant1.pcap",
        "t-trial3-variant2.pcap",
    ] {
        assert!(out.join(f).metadata().unwrap().len() > 100, "{f}");
    }
    // The pcap opens in tshark without complaint, when tshark is installed.
    if Command::new("tshark").arg("-v").output().is_ok() {
        let p = out.join("t-trial3-variant1.pcap");
        let o = Command::new("tshark")
            .args([
                "-r",
                p.to_str().unwrap(),
                "-T",
                "fields",
                "-e",
                "tcp.flags.str",
                "-e",
                "tcp.checksum.status",
                "-o",
                "tcp.check_checksum:TRUE",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.lines().count() >= 8, "{text}");
        // tcp.checksum.status 0 is "Bad".
        assert!(text.lines().all(|l| !l.ends_with("\t0")), "{text}");
        let complaints: Vec<String> = String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.contains("Running as user"))
            .map(str::to_string)
            .collect();
        assert!(complaints.is_empty(), "{complaints:?}");
    }
}

fn trace_of(example: &str) -> Vec<serde_json::Value> {
    let d = common::scratch(example);
    let t = d.join("trace.jsonl");
    let f = root().join("examples").join(format!("{example}.toml"));
    let o = gentle(&["run", f.to_str().unwrap(), "--trace", t.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(t)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn trace_shows_a_fast_retransmit() {
    let t = trace_of("fast-retransmit");
    let rexmit: Vec<_> = t.iter().filter(|e| e["event"] == "retransmit").collect();
    // One per variant: with SACK and with NewReno's duplicate ACKs.
    assert_eq!(rexmit.len(), 2);
    assert!(rexmit.iter().all(|r| r["kind"] == "fast"), "{rexmit:?}");
    assert!(
        t.iter()
            .any(|e| e["event"] == "ca-state" && e["to"] == "recovery")
    );
    assert!(
        !t.iter()
            .any(|e| e["event"] == "timer" && e["timer"] == "retransmission")
    );
}

#[test]
fn trace_shows_rto_with_back_off() {
    let t = trace_of("rto-backoff");
    let rtos: Vec<(f64, u64)> = t
        .iter()
        .filter(|e| e["event"] == "rto" && e["node"] == "server")
        .map(|e| {
            (
                e["rto_ms"].as_f64().unwrap(),
                e["backoff"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rtos.len(), 3, "{rtos:?}");
    assert_eq!(rtos.iter().map(|r| r.1).collect::<Vec<_>>(), [1, 2, 3]);
    // Each back-off doubles the timeout (RFC 6298 §5.5).
    assert!(
        (rtos[1].0 / rtos[0].0 - 2.0).abs() < 1e-9 && (rtos[2].0 / rtos[1].0 - 2.0).abs() < 1e-9
    );
    let kinds: Vec<_> = t
        .iter()
        .filter(|e| e["event"] == "retransmit" && e["node"] == "server")
        .map(|e| e["kind"].clone())
        .collect();
    assert_eq!(kinds.len(), 3);
    assert!(kinds.iter().all(|k| k == "timeout"));
}

#[test]
fn trace_shows_a_dsack_undo() {
    let t = trace_of("dsack-undo");
    assert!(
        t.iter()
            .any(|e| e["event"] == "retransmit" && e["kind"] == "fast")
    );
    let undo = t
        .iter()
        .find(|e| e["event"] == "undo")
        .expect("an undo event");
    assert_eq!(undo["kind"], "dsack");
    // The client reported the duplicate with a DSACK below its cumulative ACK.
    assert!(t.iter().any(|e| e["what"] == "send"
        && e["node"] == "client"
        && e["packet"]["sack"].as_array().is_some_and(|s| {
            let ack = e["packet"]["ack"].as_u64().unwrap();
            s[0][1].as_u64().unwrap() <= ack
        })));
}

#[test]
fn reproduce_lists_and_runs_the_catalogue() {
    let o = gentle(&["reproduce", "--list"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("demo-tail-loss"));
    let o = gentle(&["reproduce", "nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    let o = gentle(&["reproduce", "--quick", "--trials", "100", "demo-tail-loss"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("quantile") && s.contains("plain Δms"), "{s}");
}

#[test]
fn reproduce_draws_the_time_sequence_graph_and_plot_tsg_redraws_it() {
    let dir = std::env::temp_dir().join(format!("gentle-tsg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let trace = dir.with_extension("jsonl");
    let o = gentle(&[
        "reproduce",
        "prr-fig2",
        "--out",
        dir.to_str().unwrap(),
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("leaving with cwnd 10 and ssthresh 10"),
        "{stdout}"
    );
    for f in ["tsg.png", "tsg.svg", "cdf.png"] {
        let meta = std::fs::metadata(dir.join(f)).expect(f);
        assert!(meta.len() > 1000, "{f} is {} bytes", meta.len());
    }
    let redraw = dir.join("again");
    let o = gentle(&[
        "plot",
        "tsg",
        trace.to_str().unwrap(),
        "--out",
        redraw.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(redraw.join("tsg.png").exists());

    // Not a trace: a clear error naming the line, exit 2, nothing written.
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"t_ns\": 1, \"what\": \"send\"}\nnot json\n").unwrap();
    let nowhere = dir.join("nowhere");
    let o = gentle(&[
        "plot",
        "tsg",
        bad.to_str().unwrap(),
        "--out",
        nowhere.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.jsonl:2:"), "{err}");
    assert!(!nowhere.exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&trace);
}
