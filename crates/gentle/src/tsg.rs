//! TCP time-sequence graphs (`prr-imc11.txt` §4.1, Figures 2–4) from an event trace:
//! original transmissions black, retransmissions red, snd.una as a green staircase,
//! SACK blocks purple; time on x, sequence on y; one panel per variant, stacked.
//! Proactive's copies are not drawn (nor counted as retransmissions).
//!
//! The input is a trial as it runs ([`FlowRecorder`] observes it), or the JSON-lines
//! trace of `gentle run --trace` (each line tagged with `scenario` and `variant`;
//! [`flows_from_file`]). The flow drawn is the measured workload's first
//! connection, seen at its data sender: what it sent and the ACKs it received.
//! Times are relative to the first data segment; sequence numbers to the ISN.
//! `plot::tsg` draws the flows.

use std::path::Path;

use gentle_sim::{Observer, PacketEvent, PacketView};
use gentle_tcp::{CaState, Event, Instant};

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

/// What the graph needs of one trace line, typed: from a running trial (as an
/// [`Observer`]) or from a trace file.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    /// A segment sent by `node`: sequence offset and payload length.
    Send { flow: u32, seq: u64, len: u64 },
    /// A segment received by `node`: its ACK (relative) and SACK blocks, if it acks.
    Recv {
        flow: u32,
        ack: Option<u64>,
        sacks: Vec<(u64, u64)>,
    },
    /// A congestion-state change of connection `conn`.
    Ca {
        conn: u32,
        from: String,
        to: String,
        cwnd: u64,
        ssthresh: u64,
        pipe: u64,
    },
}

/// One typed line: when, where, what.
#[derive(Clone, Debug)]
struct SeenAt {
    t_ns: u64,
    node: String,
    what: Seen,
}

/// Collects the time-sequence graph of one variant's trial as it runs.
#[derive(Debug, Default)]
pub struct FlowRecorder {
    scenario: String,
    variant: String,
    seen: Vec<SeenAt>,
}

impl FlowRecorder {
    /// For trial runs of `variant` of `scenario`.
    pub fn new(scenario: &str, variant: &str) -> FlowRecorder {
        FlowRecorder {
            scenario: scenario.to_string(),
            variant: variant.to_string(),
            seen: Vec::new(),
        }
    }
    /// The flow the trial showed.
    pub fn finish(self) -> Flow {
        flow_of(self.scenario, self.variant, &self.seen)
    }
}

impl Observer for FlowRecorder {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        let (iss, irs) = p.isn.unwrap_or((0, 0));
        let seg = p.seg;
        let what = match ev {
            // A Proactive copy is neither new data nor a retransmission: not drawn.
            PacketEvent::Send if seg.flags.contains(gentle_tcp::Flags::COPY) => return,
            PacketEvent::Send => Seen::Send {
                flow: p.meta.flow,
                seq: seg.seq.wrapping_sub(iss) as u64,
                len: seg.payload.len() as u64,
            },
            PacketEvent::Recv => Seen::Recv {
                flow: p.meta.flow,
                ack: seg.flags.ack().then(|| seg.ack.wrapping_sub(irs) as u64),
                sacks: seg
                    .options
                    .sack
                    .as_slice()
                    .iter()
                    .map(|b| {
                        (
                            b.left.wrapping_sub(irs) as u64,
                            b.right.wrapping_sub(irs) as u64,
                        )
                    })
                    .collect(),
            },
            _ => return,
        };
        self.seen.push(SeenAt {
            t_ns: p.t.as_nanos(),
            node: p.nodes[p.node as usize].clone(),
            what,
        });
    }

    fn on_engine(&mut self, t: Instant, node: u16, conn: u32, ev: &Event, nodes: &[String]) {
        if let Event::CaState {
            from,
            to,
            cwnd,
            ssthresh,
            pipe,
        } = *ev
        {
            self.seen.push(SeenAt {
                t_ns: t.as_nanos(),
                node: nodes[node as usize].clone(),
                what: Seen::Ca {
                    conn,
                    from: ca_name(from),
                    to: ca_name(to),
                    cwnd: cwnd as u64,
                    ssthresh: ssthresh as u64,
                    pipe: pipe as u64,
                },
            });
        }
    }

    fn wants_engine_events(&self) -> bool {
        true
    }
}

/// A congestion state's name as traces print it.
fn ca_name(s: CaState) -> String {
    match s {
        CaState::Open => "open",
        CaState::Disorder => "disorder",
        CaState::Cwr => "cwr",
        CaState::Recovery => "recovery",
        CaState::Loss => "loss",
    }
    .to_string()
}

fn flow_of(scenario: String, variant: String, ls: &[SeenAt]) -> Flow {
    // The data sender of flow 0: the node that sent the most payload in it.
    let mut by_node: Vec<(&str, u64)> = Vec::new();
    for l in ls {
        if let Seen::Send { flow: 0, len, .. } = l.what {
            match by_node.iter_mut().find(|x| x.0 == l.node) {
                Some(x) => x.1 += len,
                None => by_node.push((&l.node, len)),
            }
        }
    }
    let sender = by_node
        .iter()
        .max_by_key(|x| x.1)
        .map(|x| x.0.to_string())
        .unwrap_or_default();
    let mut f = Flow {
        scenario,
        variant,
        ..Flow::default()
    };
    let t0 = ls
        .iter()
        .find(|l| l.node == sender && matches!(l.what, Seen::Send { flow: 0, len, .. } if len > 0))
        .map_or(0, |l| l.t_ns);
    let ms = |l: &SeenAt| (l.t_ns as f64 - t0 as f64) / 1e6;
    let mut high = 0u64;
    let mut sender_conn: Option<u32> = None;
    for l in ls.iter().filter(|l| l.node == sender) {
        match &l.what {
            &Seen::Send { flow: 0, seq, len } if len > 0 => {
                f.sends.push(Tx {
                    t_ms: ms(l),
                    start: seq,
                    end: seq + len,
                    retransmission: seq < high,
                });
                high = high.max(seq + len);
            }
            Seen::Recv {
                flow: 0,
                ack: Some(una),
                sacks,
            } => f.acks.push(AckIn {
                t_ms: ms(l),
                una: *una,
                sacks: sacks.clone(),
            }),
            Seen::Ca {
                conn,
                from,
                to,
                cwnd,
                ssthresh,
                pipe,
            } => {
                // The sender's connection is the one whose state changes carry cwnd;
                // take the first seen.
                if *sender_conn.get_or_insert(*conn) != *conn {
                    continue;
                }
                f.ca.push(CaChange {
                    t_ms: ms(l),
                    from: from.clone(),
                    to: to.clone(),
                    cwnd: *cwnd,
                    ssthresh: *ssthresh,
                    pipe: *pipe,
                });
            }
            _ => {}
        }
    }
    f
}

/// A line of a `gentle run --trace` file, as far as the graph reads it.
#[derive(serde::Deserialize)]
struct FileLine {
    t_ns: u64,
    what: String,
    #[serde(default)]
    node: String,
    #[serde(default)]
    scenario: String,
    #[serde(default)]
    variant: String,
    packet: Option<FilePacket>,
    event: Option<String>,
    conn: Option<u32>,
    from: Option<String>,
    to: Option<String>,
    cwnd: Option<u64>,
    ssthresh: Option<u64>,
    pipe: Option<u64>,
}

#[derive(serde::Deserialize)]
struct FilePacket {
    flow: u32,
    #[serde(default)]
    flags: String,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    len: u64,
    #[serde(default)]
    ack: u64,
    #[serde(default)]
    sack: Vec<[u64; 2]>,
    #[serde(default)]
    copy: bool,
}

impl FileLine {
    fn seen(self) -> Option<((String, String), SeenAt)> {
        let what = match (self.what.as_str(), self.packet, self.event.as_deref()) {
            ("send", Some(p), _) if p.copy => return None,
            ("send", Some(p), _) => Seen::Send {
                flow: p.flow,
                seq: p.seq,
                len: p.len,
            },
            ("recv", Some(p), _) => Seen::Recv {
                flow: p.flow,
                ack: p.flags.contains('A').then_some(p.ack),
                sacks: p.sack.iter().map(|b| (b[0], b[1])).collect(),
            },
            ("engine", _, Some("ca-state")) => Seen::Ca {
                conn: self.conn.unwrap_or(0),
                from: self.from.unwrap_or_default(),
                to: self.to.unwrap_or_default(),
                cwnd: self.cwnd.unwrap_or(0),
                ssthresh: self.ssthresh.unwrap_or(0),
                pipe: self.pipe.unwrap_or(0),
            },
            _ => return None,
        };
        let at = SeenAt {
            t_ns: self.t_ns,
            node: self.node,
            what,
        };
        Some(((self.scenario, self.variant), at))
    }
}

/// Reads a JSON-lines trace file into flows, one per (scenario, variant) in order of
/// appearance; errors name the line.
pub fn flows_from_file(path: &Path, text: &str) -> Result<Vec<Flow>, String> {
    let mut groups: Vec<((String, String), Vec<SeenAt>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: FileLine = serde_json::from_str(line).map_err(|e| {
            let hint = if e.is_data() {
                ": expected the `t_ns` and `what` of `gentle run --trace`"
            } else {
                ""
            };
            // serde's message, without its own "at line L column C".
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            format!(
                "{}:{}:{}: not a trace line: {msg}{hint}",
                path.display(),
                i + 1,
                e.column()
            )
        })?;
        if let Some((key, at)) = l.seen() {
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(at),
                None => groups.push((key, vec![at])),
            }
        }
    }
    Ok(groups
        .into_iter()
        .map(|((s, v), ls)| flow_of(s, v, &ls))
        .collect())
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
        let mut line = if r.is_empty() {
            "  no retransmissions".to_string()
        } else {
            format!("  retransmissions at {} ms", r.join(", "))
        };
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
            // An undone reduction leaves ssthresh at its initial "infinity".
            let ss = x.ssthresh_at_exit.unwrap_or(0);
            let ss = if ss >= gentle_tcp::cc::INFINITE_SSTHRESH as u64 {
                "unset (the reduction was undone)".to_string()
            } else {
                ss.to_string()
            };
            s += &format!(
                "  recovery from {a:.0} to {b:.0} ms, leaving with cwnd {} and ssthresh {ss}\n",
                x.cwnd_at_exit.unwrap_or(0),
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
