//! What `gentle emulate` prints and writes: `gentle run`'s report and JSON with a
//! real-mode header (the kernel, each variant's kernel configuration and where it
//! differs from the variant's switches, the forwarder's delay error), and under
//! `--out` the records CSV, the summary, a pcap at each end of every trial, the
//! forwarder's drop and delay log, and the `TCP_INFO` samples.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::Emulation;
use crate::output::{self, Staged};
use crate::report;
use crate::scenario::Scenario;

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

const LOG_HEADER: &str = "variant,trial,t_ms,direction,connection,rel_seq,rel_ack,payload,flags,fate,due_ms,out_ms,delay_error_us,duplicate\n";
const INFO_HEADER: &str = "variant,trial,connection,exchange,ca_state,cwnd,ssthresh,rtt_us,rttvar_us,min_rtt_us,rto_us,total_retrans,total_rto,total_rto_recoveries,bytes_retrans,dsack_dups,reord_seen,reordering,unacked,sacked,lost\n";

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
    let mut csv = String::from(report::CSV_HEADER);
    for v in &e.run.variants {
        csv.push_str(&report::csv_rows(scn, &v.name, &v.records));
    }
    io(st.write("records.csv", csv.as_bytes()))?;
    let mut log = String::from(LOG_HEADER);
    let mut info = String::from(INFO_HEADER);
    for (k, ts) in e.kernels.iter().zip(&e.trials) {
        for t in ts {
            let f = &t.forwarder;
            for x in &f.log {
                let dir = if x.dir == 0 { "to-client" } else { "to-server" };
                let fate = serde_json::to_value(x.fate).expect("serialisable");
                let delivered = x.out_ns > 0;
                let _ = writeln!(
                    log,
                    "{},{},{:.3},{dir},{},{},{},{},{:#04x},{},{},{},{},{}",
                    k.name,
                    t.result.trial,
                    x.t_ns as f64 / 1e6,
                    x.flow,
                    x.rel_seq,
                    x.rel_ack,
                    x.payload,
                    x.flags,
                    fate.as_str().unwrap_or("?"),
                    if x.due_ns > 0 {
                        format!("{:.3}", x.due_ns as f64 / 1e6)
                    } else {
                        String::new()
                    },
                    if delivered {
                        format!("{:.3}", x.out_ns as f64 / 1e6)
                    } else {
                        String::new()
                    },
                    if delivered {
                        format!("{:.0}", (x.out_ns - x.due_ns) as f64 / 1e3)
                    } else {
                        String::new()
                    },
                    x.duplicate
                );
            }
            for (conn, ex, i) in &t.infos {
                let _ = writeln!(
                    info,
                    "{},{},{conn},{ex},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    k.name,
                    t.result.trial,
                    i.ca_state_name(),
                    i.cwnd,
                    i.ssthresh,
                    i.rtt_us,
                    i.rttvar_us,
                    i.min_rtt_us,
                    i.rto_us,
                    i.total_retrans,
                    i.total_rto,
                    i.total_rto_recoveries,
                    i.bytes_retrans,
                    i.dsack_dups,
                    i.reord_seen,
                    i.reordering,
                    i.unacked,
                    i.sacked,
                    i.lost
                );
            }
            for (end, frames) in ["server", "client"].iter().zip(&f.captures) {
                if frames.is_empty() {
                    continue;
                }
                let name = format!(
                    "{}-trial{}-{end}.pcap",
                    output::file_name(&k.name),
                    t.result.trial
                );
                io(st.write(&name, &output::pcap_bytes(frames)))?;
            }
        }
    }
    io(st.write("forwarder.csv", log.as_bytes()))?;
    io(st.write("tcp-info.csv", info.as_bytes()))?;
    Ok(())
}
