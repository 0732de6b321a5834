//! What `gentle emulate` prints and writes: `gentle run`'s report and JSON with a
//! real-mode header (the kernel, each variant's kernel configuration and where it
//! differs from the variant's switches, the forwarder's delay error), and under
//! `--out` the records CSV, the summary, a pcap at each end of every trial, the
//! forwarder's drop and delay log, and the `TCP_INFO` samples.

use std::fmt::Write as _;
use std::rc::Rc;

use gentle_real::tcpinfo::TcpInfo;
use serde_json::{Value, json};

use super::Emulation;
use crate::report;
use crate::scenario::Scenario;
use crate::staging::{self, Staged};

/// The report: the real-mode header, then `gentle run`'s table.
pub fn text(scn: &Scenario, e: &Emulation, trials: u64) -> String {
    let mut s = String::new();
    let hz = e
        .facts
        .hz
        .map_or("HZ unknown".to_string(), |h| format!("HZ {h}"));
    let who = if e.trials.iter().flatten().any(|t| t.engine.is_some()) {
        "gentle's engine against kernel TCP"
    } else {
        "kernel TCP"
    };
    let _ = writeln!(
        s,
        "{} — real mode: {who} (Linux {}, {hz}) through gentle's link",
        scn.name, e.facts.release
    );
    for (k, d) in e.kernels.iter().zip(&e.delay_error) {
        let sysctls: Vec<String> = k
            .kernel
            .sysctls
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let label = if who == "kernel TCP" {
            format!("{}:", k.name)
        } else {
            format!("kernel peer of `{}`:", k.name)
        };
        let _ = writeln!(s, "  {label} {} | {}", k.kernel.cc, sysctls.join(" "));
        for diff in &k.differences {
            let _ = writeln!(s, "      differs: {diff}");
        }
        let _ = writeln!(
            s,
            "      forwarder: one-way delay error p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs ({} packets); TUN drops 0",
            d.p50_us, d.p99_us, d.max_us, d.samples
        );
    }
    engine_text(&mut s, scn, e);
    peers_text(&mut s, scn, e);
    s.push('\n');
    s.push_str(&report::table(scn, &e.run, trials));
    s
}

/// Engine counters worth a line when gentle's engine was one end.
const ENGINE_COUNTERS: &[&str] = &[
    "RetransSegs",
    "TCPFastRetrans",
    "TCPLossProbes",
    "TCPTimeouts",
    "TCPSlowStartRetrans",
    "TCPSynRetrans",
    "TCPDSACKRecv",
    "TCPFullUndo",
    "TCPPartialUndo",
    "TCPDSACKUndo",
    "TCPLossUndo",
    "CorrectiveSent",
    "CorrectiveFallback",
    "ProactiveCopies",
    "ProactiveFallback",
];

/// A command's output line, cut to a report line's width.
fn clip(line: &str) -> String {
    const MAX: usize = 160;
    match line.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}… ({} more bytes)", &line[..i], line.len() - i),
        None => line.to_string(),
    }
}

/// What the external commands said, trial by trial.
fn peers_text(s: &mut String, scn: &Scenario, e: &Emulation) {
    for (v, trials) in scn.variants.iter().zip(&e.trials) {
        for (i, t) in trials.iter().enumerate() {
            for (role, p) in [("client", &t.peer), ("server", &t.server_peer)] {
                let Some(p) = p else { continue };
                let status = match (p.status, role) {
                    (Some(c), _) => format!("exit {c}"),
                    (None, "server") => "stopped at the trial's end".into(),
                    (None, _) => "killed at the time limit".into(),
                };
                let _ = writeln!(
                    s,
                    "  `{}` trial {i}: {role} `{}`: {status}",
                    v.name, p.command
                );
                for line in p.stdout.lines().chain(p.stderr.lines()).take(20) {
                    let _ = writeln!(s, "      | {}", clip(line));
                }
            }
        }
    }
}

/// What gentle's engine did (`gentle serve`, `gentle connect`).
fn engine_text(s: &mut String, scn: &Scenario, e: &Emulation) {
    for (v, trials) in scn.variants.iter().zip(&e.trials) {
        let mut k = gentle_tcp::Counters::default();
        let (mut conns, mut ignored, mut malformed, mut resets) = (0, 0, 0, 0);
        let mut any = false;
        for t in trials {
            let Some(h) = &t.engine else { continue };
            any = true;
            k.add(&h.counters);
            conns += h.connections;
            ignored += h.ignored;
            malformed += h.malformed;
            resets += h.resets_sent;
        }
        if !any {
            continue;
        }
        let counts: Vec<String> = k
            .iter()
            .filter(|(n, x)| *x > 0 && ENGINE_COUNTERS.contains(n))
            .map(|(n, x)| format!("{n} {x}"))
            .collect();
        let _ = writeln!(
            s,
            "  gentle's engine, variant `{}`: {conns} connections; {}; packets ignored {ignored}, malformed {malformed}; resets sent {resets}",
            v.name,
            if counts.is_empty() {
                "no retransmissions".to_string()
            } else {
                counts.join(", ")
            }
        );
        for (i, t) in trials.iter().enumerate() {
            if let Some(h) = &t.engine {
                for x in &h.http {
                    let _ = writeln!(
                        s,
                        "      trial {i}: \"{}\" {} — {} B, server time {}, {} retransmitted, {} timeouts",
                        x.request,
                        x.status,
                        x.bytes,
                        x.server_ns
                            .map_or("-".into(), |n| format!("{:.1} ms", n as f64 / 1e6)),
                        x.retrans_segs,
                        x.timeouts
                    );
                }
            }
        }
    }
}

/// The JSON document: `gentle run`'s, with a `real` section.
pub fn json(scn: &Scenario, e: &Emulation, trials: u64, seed: u64) -> Value {
    let mut j = report::json(scn, &e.run, trials, seed);
    let variants: Vec<Value> = e
        .kernels
        .iter()
        .zip(&e.delay_error)
        .map(|(k, d)| {
            json!({
                "name": k.name,
                "cc": k.kernel.cc,
                "sysctls": k.kernel.sysctls.iter().map(|(n, v)| (n.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
                "differences": k.differences,
                "delay_error_us": d,
                "tun_dropped": 0,
            })
        })
        .collect();
    j["real"] = json!({
        "kernel": e.facts,
        "variants": variants,
    });
    if e.trials
        .iter()
        .flatten()
        .any(|t| t.peer.is_some() || t.server_peer.is_some())
    {
        j["real"]["commands"] = e
            .trials
            .iter()
            .map(|ts| {
                ts.iter()
                    .map(|t| json!({ "client": t.peer, "server": t.server_peer }))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
            .into();
    }
    if e.trials.iter().flatten().any(|t| t.engine.is_some()) {
        j["real"]["engine"] = e
            .trials
            .iter()
            .map(|ts| {
                ts.iter()
                    .map(|t| json!({ "host": t.engine }))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
            .into();
    }
    j
}

/// A CSV file's columns: each name with how a row gives its value.
type Columns<T> = &'static [(&'static str, fn(&T) -> String)];

/// One packet of the forwarder's log, with its kernel variant and trial.
struct LogRow(Rc<str>, u64, gentle_real::forward::LogEntry);

/// `forwarder.csv`'s columns.
const LOG_COLUMNS: Columns<LogRow> = &[
    ("variant", |r| r.0.to_string()),
    ("trial", |r| r.1.to_string()),
    ("t_ms", |r| format!("{:.3}", r.2.t_ns as f64 / 1e6)),
    ("direction", |r| {
        if r.2.dir == 0 {
            "to-client"
        } else {
            "to-server"
        }
        .to_string()
    }),
    ("connection", |r| r.2.flow.to_string()),
    ("rel_seq", |r| r.2.rel_seq.to_string()),
    ("rel_ack", |r| r.2.rel_ack.to_string()),
    ("payload", |r| r.2.payload.to_string()),
    ("flags", |r| format!("{:#04x}", r.2.flags)),
    ("fate", |r| {
        let fate = serde_json::to_value(r.2.fate).expect("serialisable");
        fate.as_str().unwrap_or("?").to_string()
    }),
    ("due_ms", |r| {
        let x = &r.2;
        if x.due_ns > 0 {
            format!("{:.3}", x.due_ns as f64 / 1e6)
        } else {
            String::new()
        }
    }),
    ("out_ms", |r| {
        let x = &r.2;
        if x.out_ns > 0 {
            format!("{:.3}", x.out_ns as f64 / 1e6)
        } else {
            String::new()
        }
    }),
    ("delay_error_us", |r| {
        let x = &r.2;
        if x.out_ns > 0 {
            format!("{:.0}", (x.out_ns - x.due_ns) as f64 / 1e3)
        } else {
            String::new()
        }
    }),
    ("duplicate", |r| r.2.duplicate.to_string()),
];

/// One `TCP_INFO` sample, with its kernel variant, trial, connection and exchange.
struct InfoRow(Rc<str>, u64, u32, u32, TcpInfo);

/// `tcp-info.csv`'s columns.
const INFO_COLUMNS: Columns<InfoRow> = &[
    ("variant", |r| r.0.to_string()),
    ("trial", |r| r.1.to_string()),
    ("connection", |r| r.2.to_string()),
    ("exchange", |r| r.3.to_string()),
    ("ca_state", |r| r.4.ca_state_name().to_string()),
    ("cwnd", |r| r.4.cwnd.to_string()),
    ("ssthresh", |r| r.4.ssthresh.to_string()),
    ("rtt_us", |r| r.4.rtt_us.to_string()),
    ("rttvar_us", |r| r.4.rttvar_us.to_string()),
    ("min_rtt_us", |r| r.4.min_rtt_us.to_string()),
    ("rto_us", |r| r.4.rto_us.to_string()),
    ("total_retrans", |r| r.4.total_retrans.to_string()),
    ("total_rto", |r| r.4.total_rto.to_string()),
    ("total_rto_recoveries", |r| {
        r.4.total_rto_recoveries.to_string()
    }),
    ("bytes_retrans", |r| r.4.bytes_retrans.to_string()),
    ("dsack_dups", |r| r.4.dsack_dups.to_string()),
    ("reord_seen", |r| r.4.reord_seen.to_string()),
    ("reordering", |r| r.4.reordering.to_string()),
    ("unacked", |r| r.4.unacked.to_string()),
    ("sacked", |r| r.4.sacked.to_string()),
    ("lost", |r| r.4.lost.to_string()),
];

/// A CSV file of `rows`, its header and fields from `columns` (fields quoted where
/// they need to be).
fn csv_file<T>(columns: Columns<T>, rows: impl Iterator<Item = T>) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let write = |w: &mut csv::Writer<Vec<u8>>| -> csv::Result<()> {
        w.write_record(columns.iter().map(|c| c.0))?;
        for r in rows {
            w.write_record(columns.iter().map(|c| (c.1)(&r)))?;
        }
        Ok(())
    };
    write(&mut w).expect("in-memory write");
    w.into_inner().expect("in-memory write")
}

/// The `--out` files.
pub fn write(
    st: &mut Staged,
    scn: &Scenario,
    e: &Emulation,
    trials: u64,
    seed: u64,
) -> Result<(), String> {
    let io = |r: std::io::Result<()>| r.map_err(|e| e.to_string());
    io(st.write("report.txt", text(scn, e, trials).as_bytes()))?;
    let j = serde_json::to_string_pretty(&json(scn, e, trials, seed)).expect("serialisable");
    io(st.write("summary.json", j.as_bytes()))?;
    let mut csv = report::RecordsCsv::new(Vec::new()).expect("in-memory writer");
    for v in &e.run.variants {
        csv.records(scn, &v.name, &v.records)
            .expect("in-memory write");
    }
    io(st.write("records.csv", &csv.finish().expect("in-memory write")))?;
    let runs = || {
        e.kernels.iter().zip(&e.trials).flat_map(|(k, ts)| {
            let name: Rc<str> = k.name.as_str().into();
            ts.iter().map(move |t| (name.clone(), t))
        })
    };
    let log = runs().flat_map(|(k, t)| {
        let trial = t.result.trial;
        t.forwarder
            .log
            .iter()
            .map(move |x| LogRow(k.clone(), trial, *x))
    });
    io(st.write("forwarder.csv", &csv_file(LOG_COLUMNS, log)))?;
    let info = runs().flat_map(|(k, t)| {
        let trial = t.result.trial;
        t.infos
            .iter()
            .map(move |(conn, ex, i)| InfoRow(k.clone(), trial, *conn, *ex, *i))
    });
    io(st.write("tcp-info.csv", &csv_file(INFO_COLUMNS, info)))?;
    for (k, t) in runs() {
        for (end, frames) in ["server", "client"].iter().zip(&t.forwarder.captures) {
            if frames.is_empty() {
                continue;
            }
            let name = format!(
                "{}-trial{}-{end}.pcap",
                staging::file_name(&k),
                t.result.trial
            );
            io(st.write(&name, &staging::pcap_bytes(frames)))?;
        }
    }
    Ok(())
}
