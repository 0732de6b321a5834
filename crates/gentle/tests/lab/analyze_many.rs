//! `gentle analyze` over many captures: the Parquet tables hold what the one-capture
//! analyses report, the same bytes on one thread and two, existing tables are kept
//! without --force, bad input is refused before any work, a capture that fails on the
//! way is skipped, and the report's numbers follow from the exchanges table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{Scratch, frontend_capture, gentle, record_offset, scratch};

const TABLES: [&str; 4] = [
    "flows.parquet",
    "exchanges.parquet",
    "retransmissions.parquet",
    "signatures.parquet",
];

/// Two captures, the second in a subdirectory: (the directory, the captures in path
/// order).
fn corpus() -> (Scratch, Vec<PathBuf>) {
    let dir = scratch("analyze-many");
    let a = frontend_capture(&dir.join("a"), 0);
    let b = frontend_capture(&dir.join("b/deeper"), 1);
    (dir, vec![a, b])
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn rows(dir: &Path, table: &str) -> Vec<Value> {
    gentle_lab::table::read_rows(&dir.join(table)).unwrap()
}

fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    TABLES
        .iter()
        .map(|t| (t.to_string(), std::fs::read(dir.join(t)).unwrap()))
        .collect()
}

/// The report as JSON over the captures under `dir`: the same document on 1 and
/// 2 threads (no wall time in it), the totals of the tables (`want`: flows,
/// exchanges, retransmissions), each signature's share of slow exchanges with and
/// without it inside its 95% interval, the two splitting the timed ones.
fn json_report_matches(dir: &Path, captures: usize, want: (u64, u64, u64)) {
    let json = |threads: &str| {
        ok(&gentle(&[
            "analyze",
            dir.to_str().unwrap(),
            "--json",
            "--threads",
            threads,
        ]))
    };
    let (j1, j2) = (json("1"), json("2"));
    assert_eq!(j1, j2);
    let doc: Value = serde_json::from_str(&j1).unwrap();
    assert_eq!(doc["captures"].as_u64().unwrap(), captures as u64);
    assert_eq!(doc["flows"].as_u64().unwrap(), want.0);
    assert_eq!(doc["exchanges"].as_u64().unwrap(), want.1);
    assert_eq!(doc["server_retransmissions"].as_u64().unwrap(), want.2);
    let c = &doc["correlation"];
    let timed = c["timed"].as_u64().unwrap();
    assert_eq!(doc["timed_exchanges"].as_u64().unwrap(), timed);
    assert_eq!(c["threshold"], "median");
    let sigs = c["signatures"].as_array().unwrap();
    assert!(!sigs.is_empty());
    for sig in sigs {
        let (w, wo) = (&sig["with"], &sig["without"]);
        assert_eq!(w["n"].as_u64().unwrap() + wo["n"].as_u64().unwrap(), timed);
        assert_eq!(
            w["slow"].as_u64().unwrap() + wo["slow"].as_u64().unwrap(),
            c["slow"].as_u64().unwrap()
        );
        for side in [w, wo] {
            if side["n"].as_u64().unwrap() == 0 {
                assert!(side["share"].is_null() && side["ci95"].is_null());
                continue;
            }
            let p = side["share"].as_f64().unwrap();
            let (lo, hi) = (
                side["ci95"][0].as_f64().unwrap(),
                side["ci95"][1].as_f64().unwrap(),
            );
            assert!((0.0..=p).contains(&lo) && (p..=1.0).contains(&hi), "{sig}");
        }
    }
}

#[test]
fn the_tables_hold_what_each_capture_reports_on_any_number_of_threads() {
    let (dir, caps) = corpus();
    let one = dir.join("one");
    let two = dir.join("two");
    let run = |out: &Path, threads: &str| {
        ok(&gentle(&[
            "analyze",
            dir.to_str().unwrap(),
            "--parquet",
            out.to_str().unwrap(),
            "--threads",
            threads,
        ]))
    };
    let report1 = run(&one, "1");
    let report2 = run(&two, "2");
    let (t1, t2) = (tree(&one), tree(&two));
    let differ: Vec<&String> = t1.keys().filter(|k| t1[*k] != t2[*k]).collect();
    assert!(
        differ.is_empty(),
        "1 and 2 threads write other bytes: {differ:?}"
    );
    let body = |r: &str| r.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&report1), body(&report2));
    assert!(report2.contains("on 2 threads"), "{report2}");

    let flows = rows(&one, "flows.parquet");
    let exchanges = rows(&one, "exchanges.parquet");
    let retrans = rows(&one, "retransmissions.parquet");
    let mut want = (0, 0, 0);
    for cap in &caps {
        let doc: Value =
            serde_json::from_str(&ok(&gentle(&["analyze", cap.to_str().unwrap(), "--json"])))
                .unwrap();
        let t = &doc["totals"];
        let r = &t["retransmissions"];
        let total: u64 = ["fast", "early", "timeout", "slow-start", "probe"]
            .iter()
            .map(|c| r[c].as_u64().unwrap())
            .sum();
        assert!(total > 0, "a capture without retransmissions tests little");
        let name = cap.display().to_string();
        let of = |rows: &[Value]| rows.iter().filter(|r| r["capture"] == name).count() as u64;
        assert_eq!(of(&flows), t["flows"].as_u64().unwrap(), "{name}");
        assert_eq!(of(&exchanges), t["exchanges"].as_u64().unwrap(), "{name}");
        assert_eq!(of(&retrans), total, "{name}");
        // Each flow's row says what the one-capture analysis says of it.
        for f in doc["flows"].as_array().unwrap() {
            let row = flows
                .iter()
                .find(|r| r["capture"] == name && r["flow"] == f["id"])
                .expect("a row per flow");
            for k in ["server", "client", "packets", "losses", "tail_losses"] {
                assert_eq!(row[k], f[k], "{name} flow {} {k}", f["id"]);
            }
            for (col, cause) in [
                ("fast", "fast"),
                ("timeout", "timeout"),
                ("slow_start", "slow-start"),
            ] {
                assert_eq!(
                    row[col], f["retransmissions"][cause],
                    "{name} flow {}",
                    f["id"]
                );
            }
        }
        want.0 += t["flows"].as_u64().unwrap();
        want.1 += t["exchanges"].as_u64().unwrap();
        want.2 += total;
    }
    assert_eq!(
        (
            flows.len() as u64,
            exchanges.len() as u64,
            retrans.len() as u64
        ),
        want
    );
    json_report_matches(&dir, caps.len(), want);
    // Rows in path order, then flow: the captures are those of the walk, no others.
    let keys: Vec<(String, i64)> = flows
        .iter()
        .map(|r| {
            (
                r["capture"].as_str().unwrap().to_string(),
                r["flow"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(keys.first().unwrap().0, caps[0].display().to_string());
    assert_eq!(keys.last().unwrap().0, caps[1].display().to_string());
    assert!(
        report1.starts_with("2 captures analysed (0 skipped)"),
        "{report1}"
    );
}

#[test]
fn tables_are_not_replaced_without_force_and_bad_input_is_refused_first() {
    let (dir, caps) = corpus();
    let out = dir.join("tables");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "analyze",
            caps[0].to_str().unwrap(),
            "--parquet",
            out.to_str().unwrap(),
        ];
        args.extend(extra);
        gentle(&args)
    };
    ok(&run(&[]));
    let before = tree(&out);
    let flows_before = rows(&out, "flows.parquet").len();
    let refuse = |o: Output, want: &str| {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "expected {want:?} in: {e}");
        assert!(
            o.stdout.is_empty(),
            "work was done: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    };
    // A second run into the same directory, of other captures: refused, tables kept.
    refuse(
        run(&[caps[1].to_str().unwrap()]),
        "flows.parquet exists; add --force",
    );
    assert!(tree(&out) == before, "refused, yet the tables changed");
    // --force replaces them with the two captures' tables.
    ok(&run(&[caps[1].to_str().unwrap(), "--force"]));
    assert!(tree(&out) != before, "--force left the tables as they were");
    let flows = rows(&out, "flows.parquet");
    assert!(flows.len() > flows_before);
    let names: std::collections::BTreeSet<&str> = flows
        .iter()
        .map(|r| r["capture"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2);

    let fresh = dir.join("fresh");
    let gone = dir.join("missing.pcap");
    let args = |paths: &[&Path]| {
        let mut a: Vec<String> = vec!["analyze".into()];
        a.extend(paths.iter().map(|p| p.display().to_string()));
        a.extend(["--parquet".into(), fresh.display().to_string()]);
        a
    };
    let run_paths = |paths: &[&Path]| {
        let a = args(paths);
        gentle(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    refuse(
        run_paths(&[&caps[0], &gone]),
        &format!("cannot read {}", gone.display()),
    );
    let empty = dir.join("empty");
    std::fs::create_dir_all(empty.join("sub")).unwrap();
    std::fs::write(empty.join("sub/notes.txt"), "not a capture").unwrap();
    refuse(
        run_paths(&[&empty]),
        &format!("{}: no captures under it", empty.display()),
    );
    let junk = empty.join("sub/junk.pcap");
    std::fs::write(&junk, "GET / HTTP/1.1\r\n\r\n").unwrap();
    refuse(
        run_paths(&[&caps[0], &empty]),
        &format!("{}", junk.display()),
    );
    assert!(!fresh.exists(), "a refused run wrote {}", fresh.display());
    // One capture's options (--out, --tags) do not take a directory.
    let tags = dir.join("tags.csv");
    refuse(
        gentle(&[
            "analyze",
            dir.to_str().unwrap(),
            "--tags",
            tags.to_str().unwrap(),
        ]),
        &format!("{}: is a directory", dir.display()),
    );
}

#[test]
fn a_capture_damaged_on_the_way_is_skipped_with_a_warning() {
    let (dir, caps) = corpus();
    let bytes = std::fs::read(&caps[0]).unwrap();
    let off = record_offset(&bytes, 100);
    let mut bad = bytes.clone();
    bad[off + 8..off + 12].copy_from_slice(&0x8000_0000u32.to_be_bytes());
    let damaged = dir.join("b/damaged.pcap");
    std::fs::write(&damaged, &bad).unwrap();
    let out = dir.join("t");
    let o = gentle(&[
        "analyze",
        dir.to_str().unwrap(),
        "--parquet",
        out.to_str().unwrap(),
    ]);
    let report = ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let why = format!(
        "{}: record 101 (byte {off}): implausible record length",
        damaged.display()
    );
    assert!(err.contains(&format!("warning: skipped {why}")), "{err}");
    assert!(
        report.starts_with("2 captures analysed (1 skipped)"),
        "{report}"
    );
    assert!(
        report.contains(&format!("  skipped {}: record 101", damaged.display())),
        "{report}"
    );
    let captures: std::collections::BTreeSet<String> = rows(&out, "flows.parquet")
        .iter()
        .map(|r| r["capture"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        captures,
        caps.iter().map(|c| c.display().to_string()).collect()
    );
}

/// The 95% Wilson interval of `k` in `n`, worked here from its formula.
fn wilson(k: f64, n: f64) -> (f64, f64) {
    let z = 1.959_963_984_540_054_f64;
    let p = k / n;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let h = z / d * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((c - h).max(0.0), (c + h).min(1.0))
}

/// `n slow% [lo, hi]` as the report prints it.
fn cell(k: usize, n: usize) -> String {
    let (lo, hi) = wilson(k as f64, n as f64);
    format!(
        "{:>9} {:>6.1}% [{:>5.1}, {:>5.1}]",
        n,
        100.0 * k as f64 / n as f64,
        100.0 * lo,
        100.0 * hi
    )
}

#[test]
fn the_reports_shares_follow_from_the_exchanges_table() {
    let (dir, _) = corpus();
    let out = dir.join("t");
    for slow in [None, Some("300")] {
        let _ = std::fs::remove_dir_all(&out);
        let mut args = vec![
            "analyze",
            dir.to_str().unwrap(),
            "--parquet",
            out.to_str().unwrap(),
        ];
        if let Some(s) = slow {
            args.extend(["--slow", s]);
        }
        let report = ok(&gentle(&args));
        let timed: Vec<(f64, Vec<String>)> = rows(&out, "exchanges.parquet")
            .iter()
            .filter_map(|r| {
                let sigs = r["signatures"].as_str().unwrap();
                let sigs = sigs.split('|').filter(|s| !s.is_empty()).map(String::from);
                Some((r["response_ms"].as_f64()?, sigs.collect()))
            })
            .collect();
        assert!(timed.len() > 100, "{}", timed.len());
        let mut times: Vec<f64> = timed.iter().map(|t| t.0).collect();
        times.sort_by(f64::total_cmp);
        let threshold = match slow {
            Some(s) => s.parse().unwrap(),
            None => times[(times.len() - 1) / 2],
        };
        let slow_n = timed.iter().filter(|t| t.0 > threshold).count();
        let head = format!("{slow_n} of {} exchanges", timed.len());
        assert!(report.contains(&head), "expected {head:?} in {report}");
        let mut checked = 0;
        for sig in [
            "retransmission",
            "fast",
            "timeout",
            "reordering",
            "tail-loss",
        ] {
            let has = |t: &(f64, Vec<String>)| t.1.iter().any(|s| s == sig);
            let with: Vec<_> = timed.iter().filter(|t| has(t)).collect();
            let without: Vec<_> = timed.iter().filter(|t| !has(t)).collect();
            if with.is_empty() {
                continue;
            }
            let slow_of = |v: &[&(f64, Vec<String>)]| v.iter().filter(|t| t.0 > threshold).count();
            let line = format!(
                "{:<15} {}   {}",
                sig,
                cell(slow_of(&with), with.len()),
                cell(slow_of(&without), without.len())
            );
            assert!(report.contains(&line), "expected\n{line}\nin\n{report}");
            checked += 1;
        }
        assert!(checked >= 3, "{report}");
    }
}
