//! TCP time-sequence graphs (`prr-imc11.txt` §4.1, Figures 2–4) from an event trace:
//! original transmissions black, retransmissions red, snd.una as a green staircase,
//! SACK blocks purple; time on x, sequence on y; one panel per variant, stacked.
//!
//! The input is the JSON-lines trace of `gentle run --trace` (each line tagged with
//! `scenario` and `variant`). The flow drawn is the measured workload's first
//! connection, seen at its data sender: what it sent and the ACKs it received.
//! Times are relative to the first data segment; sequence numbers to the ISN.
//! `plot::tsg` draws the flows.

use std::path::Path;

use serde_json::Value;

use crate::scenario::Scenario;

/// One transmission of data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tx {
    pub t_ms: f64,
    pub start: u64,
    pub end: u64,
    pub retransmission: bool,
}

/// One ACK as the sender received it.
#[derive(Clone, Debug, PartialEq)]
pub struct AckIn {
    pub t_ms: f64,
    pub una: u64,
    pub sacks: Vec<(u64, u64)>,
}

/// A congestion-state change of the sender.
#[derive(Clone, Debug, PartialEq)]
pub struct CaChange {
    pub t_ms: f64,
    pub from: String,
    pub to: String,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub pipe: u64,
}

/// The data flow of one variant's trial.
#[derive(Clone, Debug, Default)]
pub struct Flow {
    pub scenario: String,
    pub variant: String,
    pub sends: Vec<Tx>,
    pub acks: Vec<AckIn>,
    pub ca: Vec<CaChange>,
}

impl Flow {
    /// Highest sequence number sent.
    pub fn max_seq(&self) -> u64 {
        self.sends.iter().map(|s| s.end).max().unwrap_or(0)
    }
    pub fn max_t(&self) -> f64 {
        let a = self.acks.iter().map(|a| a.t_ms).fold(0.0, f64::max);
        let s = self.sends.iter().map(|s| s.t_ms).fold(0.0, f64::max);
        a.max(s)
    }
}

/// Splits a trace into flows, one per (scenario, variant), in order of appearance.
pub fn flows(lines: &[Value]) -> Vec<Flow> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for l in lines {
        let k = key(l);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|k| {
            let ls: Vec<&Value> = lines.iter().filter(|l| key(l) == k).collect();
            flow_of(k.0, k.1, &ls)
        })
        .collect()
}

fn key(l: &Value) -> (String, String) {
    let s = |f: &str| l[f].as_str().unwrap_or("").to_string();
    (s("scenario"), s("variant"))
}

fn flow_of(scenario: String, variant: String, ls: &[&Value]) -> Flow {
    // The data sender of flow 0: the node that sent the most payload in it.
    let mut by_node: Vec<(String, u64)> = Vec::new();
    for l in ls {
        let p = &l["packet"];
        if l["what"] == "send" && p["flow"] == 0 {
            let node = l["node"].as_str().unwrap_or("").to_string();
            let len = p["len"].as_u64().unwrap_or(0);
            match by_node.iter_mut().find(|x| x.0 == node) {
                Some(x) => x.1 += len,
                None => by_node.push((node, len)),
            }
        }
    }
    let sender = by_node
        .iter()
        .max_by_key(|x| x.1)
        .map(|x| x.0.clone())
        .unwrap_or_default();
    let mut f = Flow {
        scenario,
        variant,
        ..Flow::default()
    };
    let t0 = ls
        .iter()
        .find(|l| {
            l["what"] == "send"
                && l["node"] == sender.as_str()
                && l["packet"]["flow"] == 0
                && l["packet"]["len"].as_u64().unwrap_or(0) > 0
        })
        .and_then(|l| l["t_ns"].as_u64())
        .unwrap_or(0);
    let ms = |l: &Value| (l["t_ns"].as_u64().unwrap_or(0) as f64 - t0 as f64) / 1e6;
    let mut high = 0u64;
    let mut sender_conn: Option<u64> = None;
    for l in ls {
        if l["node"] != sender.as_str() {
            continue;
        }
        let p = &l["packet"];
        match l["what"].as_str() {
            Some("send") if p["flow"] == 0 => {
                let len = p["len"].as_u64().unwrap_or(0);
                if len == 0 {
                    continue;
                }
                let start = p["seq"].as_u64().unwrap_or(0);
                f.sends.push(Tx {
                    t_ms: ms(l),
                    start,
                    end: start + len,
                    retransmission: start < high,
                });
                high = high.max(start + len);
            }
            Some("recv")
                if p["flow"] == 0 && p["flags"].as_str().is_some_and(|x| x.contains('A')) =>
            {
                let sacks = p["sack"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|b| Some((b[0].as_u64()?, b[1].as_u64()?)))
                            .collect()
                    })
                    .unwrap_or_default();
                f.acks.push(AckIn {
                    t_ms: ms(l),
                    una: p["ack"].as_u64().unwrap_or(0),
                    sacks,
                });
            }
            Some("engine") if l["event"] == "ca-state" => {
                // The sender's connection is the one whose state changes carry cwnd;
                // take the first seen.
                let conn = l["conn"].as_u64();
                if sender_conn.is_none() {
                    sender_conn = conn;
                }
                if conn != sender_conn {
                    continue;
                }
                let n = |k: &str| l[k].as_u64().unwrap_or(0);
                f.ca.push(CaChange {
                    t_ms: ms(l),
                    from: l["from"].as_str().unwrap_or("").to_string(),
                    to: l["to"].as_str().unwrap_or("").to_string(),
                    cwnd: n("cwnd"),
                    ssthresh: n("ssthresh"),
                    pipe: n("pipe"),
                });
            }
            _ => {}
        }
    }
    f
}

/// Parses a JSON-lines trace; errors name the line.
pub fn parse_trace(path: &Path, text: &str) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            format!(
                "{}:{}:{}: not a trace line: {e}",
                path.display(),
                i + 1,
                e.column()
            )
        })?;
        if v.get("t_ns").is_none() || v.get("what").is_none() {
            return Err(format!(
                "{}:{}:1: not a trace line: expected the `t_ns` and `what` of `gentle run --trace`",
                path.display(),
                i + 1
            ));
        }
        out.push(v);
    }
    Ok(out)
}

/// What a time-sequence graph shows about recovery, in numbers.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Facts {
    pub variant: String,
    /// Times of the retransmissions (ms since the first data segment).
    pub retransmissions_ms: Vec<f64>,
    /// ACKs received between consecutive retransmissions.
    pub acks_between_retransmissions: Vec<usize>,
    /// When fast recovery started and ended, and cwnd/ssthresh as it ended.
    pub recovery_start_ms: Option<f64>,
    pub recovery_end_ms: Option<f64>,
    pub cwnd_at_exit: Option<u64>,
    pub ssthresh_at_exit: Option<u64>,
    /// Data first sent after `after_ms` (a later application write): how many
    /// separate bursts it went out in, and when its last byte was acknowledged.
    pub later_flights: usize,
    pub later_acked_ms: Option<f64>,
}

/// The facts of `f`, with "later" data being what was first sent after `after_ms`.
pub fn facts(f: &Flow, after_ms: f64) -> Facts {
    let retx: Vec<f64> = f
        .sends
        .iter()
        .filter(|s| s.retransmission)
        .map(|s| s.t_ms)
        .collect();
    let between = retx
        .windows(2)
        .map(|w| {
            f.acks
                .iter()
                .filter(|a| a.t_ms > w[0] && a.t_ms <= w[1])
                .count()
        })
        .collect();
    let start = f.ca.iter().find(|c| c.to == "recovery");
    let end = f.ca.iter().find(|c| c.from == "recovery");
    let later: Vec<&Tx> = f
        .sends
        .iter()
        .filter(|s| !s.retransmission && s.t_ms >= after_ms)
        .collect();
    let mut instants: Vec<f64> = later.iter().map(|s| s.t_ms).collect();
    instants.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let later_end = later.iter().map(|s| s.end).max();
    let later_acked_ms = later_end.and_then(|e| f.acks.iter().find(|a| a.una >= e).map(|a| a.t_ms));
    Facts {
        variant: f.variant.clone(),
        retransmissions_ms: retx,
        acks_between_retransmissions: between,
        recovery_start_ms: start.map(|c| c.t_ms),
        recovery_end_ms: end.map(|c| c.t_ms),
        cwnd_at_exit: end.map(|c| c.cwnd),
        ssthresh_at_exit: end.map(|c| c.ssthresh),
        later_flights: instants.len(),
        later_acked_ms,
    }
}

/// The facts as text, one paragraph per variant.
pub fn facts_text(all: &[Facts], after_ms: f64) -> String {
    let mut s = String::new();
    for x in all {
        s += &format!("{}:\n", x.variant);
        let r: Vec<String> = x
            .retransmissions_ms
            .iter()
            .map(|t| format!("{t:.0}"))
            .collect();
        let mut line = format!("  retransmissions at {} ms", r.join(", "));
        if !x.acks_between_retransmissions.is_empty() {
            let b: Vec<String> = x
                .acks_between_retransmissions
                .iter()
                .map(|n| n.to_string())
                .collect();
            line += &format!(" (ACKs between them: {})", b.join(", "));
        }
        s += &crate::units::wrap(&line, 100, 4);
        s += "\n";
        if let (Some(a), Some(b)) = (x.recovery_start_ms, x.recovery_end_ms) {
            s += &format!(
                "  recovery from {a:.0} to {b:.0} ms, leaving with cwnd {} and ssthresh {}\n",
                x.cwnd_at_exit.unwrap_or(0),
                x.ssthresh_at_exit.unwrap_or(0)
            );
        }
        if x.later_flights > 0 {
            s += &format!(
                "  data written at {after_ms:.0} ms: sent in {} flight(s), all acknowledged at {}\n",
                x.later_flights,
                x.later_acked_ms
                    .map_or("(never)".to_string(), |t| format!("{t:.0} ms"))
            );
        }
    }
    s
}

/// For a scenario of scripted writes, when the second write happens after the first
/// (ms); otherwise never.
pub fn later_write_ms(scn: &Scenario) -> f64 {
    use gentle_sim::workload::WorkloadKind;
    scn.workloads
        .iter()
        .find_map(|w| match &w.kind {
            WorkloadKind::Writes { writes } if writes.len() > 1 => {
                Some((writes[1].0 - writes[0].0).as_secs_f64() * 1e3)
            }
            _ => None,
        })
        .unwrap_or(f64::INFINITY)
}
