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
//! `plot::tsg` draws the flows; [`command`] is `gentle plot tsg`.

pub mod command;

use std::path::Path;
use std::sync::Arc;

use gentle_sim::{Observer, PacketEvent, PacketView};
use gentle_tcp::{Event, Instant};

use crate::scenario::Scenario;
use crate::trace_file::TraceLine;

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
            node: p.nodes[p.node as usize].to_string(),
            what,
        });
    }

    fn on_engine(&mut self, t: Instant, node: u16, conn: u32, ev: &Event, nodes: &[Arc<str>]) {
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
                node: nodes[node as usize].to_string(),
                what: Seen::Ca {
                    conn,
                    from: from.name().to_string(),
                    to: to.name().to_string(),
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

/// What the graph reads of a trace line, keyed by its scenario and variant.
fn seen(l: TraceLine) -> Option<((String, String), SeenAt)> {
    let what = match (l.what.as_str(), l.packet, l.event.as_deref()) {
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
            conn: l.conn.unwrap_or(0),
            from: l.from.unwrap_or_default(),
            to: l.to.unwrap_or_default(),
            cwnd: l.cwnd.unwrap_or(0),
            ssthresh: l.ssthresh.unwrap_or(0),
            pipe: l.pipe.unwrap_or(0),
        },
        _ => return None,
    };
    let at = SeenAt {
        t_ns: l.t_ns,
        node: l.node,
        what,
    };
    Some(((l.scenario, l.variant), at))
}

/// Reads a JSON-lines trace file into flows, one per (scenario, variant) in order of
/// appearance; errors name the line.
pub fn flows_from_file(path: &Path, text: &str) -> Result<Vec<Flow>, String> {
    let mut groups: Vec<((String, String), Vec<SeenAt>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: TraceLine = serde_json::from_str(line).map_err(|e| {
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
        if let Some((key, at)) = seen(l) {
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

/// What part of the flows a graph shows: a time window (ms) and a sequence range
/// (bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub t_ms: (f64, f64),
    pub seq: (u64, u64),
}

/// How `plot tsg` chooses its [`View`]: explicit ranges (`--time`, `--seq`) win;
/// otherwise the window around the retransmissions, or the whole flow with `whole`
/// (or when nothing was retransmitted).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewRequest {
    pub time_ms: Option<(f64, f64)>,
    pub seq: Option<(u64, u64)>,
    pub whole: bool,
}

/// Parses a `--time` or `--seq` range `A..B` (A < B, both finite and not negative);
/// the error names the flag.
pub fn parse_range(flag: &str, text: &str, unit: &str) -> Result<(f64, f64), String> {
    let bad = |why: &str| {
        format!(
            "error: {flag} {text}: {why}; expected A..B in {unit} with 0 <= A < B (as in {flag} 100..250)"
        )
    };
    let (a, b) = text.split_once("..").ok_or_else(|| bad("no `..`"))?;
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    match (num(a), num(b)) {
        (Some(a), Some(b)) if a < b => Ok((a, b)),
        (Some(_), Some(_)) => Err(bad("the range is empty")),
        _ => Err(bad("not two numbers")),
    }
}

/// The times of the retransmissions of `flows` and their whole span, ms.
fn spans(flows: &[&Flow]) -> ((f64, f64), Option<(f64, f64)>) {
    let all = flows
        .iter()
        .flat_map(|f| f.sends.iter().map(|s| s.t_ms))
        .chain(flows.iter().flat_map(|f| f.acks.iter().map(|a| a.t_ms)));
    let whole = all.fold((0.0f64, 1.0f64), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let retx = flows
        .iter()
        .flat_map(|f| f.sends.iter().filter(|s| s.retransmission).map(|s| s.t_ms))
        .fold(None, |acc: Option<(f64, f64)>, t| {
            Some(acc.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))))
        });
    (whole, retx)
}

/// The view of `flows` (drawn on one time axis) that `req` asks for. The recoveries'
/// window reaches before the first retransmission and after the last by a quarter of
/// their span, and at least a twentieth of the whole flow, so that what led to them
/// and how the flow went on show.
pub fn view(flows: &[&Flow], req: &ViewRequest) -> View {
    let (whole, retx) = spans(flows);
    let t_ms = match (req.time_ms, retx) {
        (Some(t), _) => t,
        (None, Some((a, b))) if !req.whole => {
            let ctx = ((b - a) / 4.0).max((whole.1 - whole.0) / 20.0).max(1.0);
            ((a - ctx).max(whole.0), (b + ctx).min(whole.1 * 1.03))
        }
        _ => (whole.0, whole.1 * 1.03),
    };
    let seq = req.seq.unwrap_or_else(|| {
        // What was sent or acknowledged in the window.
        let inside = |t: f64| t >= t_ms.0 && t <= t_ms.1;
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        for f in flows {
            for s in f.sends.iter().filter(|s| inside(s.t_ms)) {
                (lo, hi) = (lo.min(s.start), hi.max(s.end));
            }
            for a in f.acks.iter().filter(|a| inside(a.t_ms)) {
                (lo, hi) = (lo.min(a.una), hi.max(a.una));
            }
        }
        if lo >= hi {
            (
                0,
                flows.iter().map(|f| f.max_seq()).max().unwrap_or(1).max(1),
            )
        } else {
            let pad = (hi - lo) / 20 + 1;
            (lo.saturating_sub(pad), hi + pad)
        }
    });
    View { t_ms, seq }
}

/// Whether `path` starts like a pcap or pcapng file.
pub fn is_capture(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    read.is_ok()
        && [
            [0xd4, 0xc3, 0xb2, 0xa1],
            [0xa1, 0xb2, 0xc3, 0xd4],
            [0x4d, 0x3c, 0xb2, 0xa1],
            [0xa1, 0xb2, 0x3c, 0x4d],
            [0x34, 0xcd, 0xb2, 0xa1],
            [0x0a, 0x0d, 0x0d, 0x0a],
        ]
        .contains(&head)
}

/// Reads flow `which` of a capture (the flow numbers of `gentle analyze`; by default
/// the flow whose server retransmitted most, the first of equals) as its server sent
/// it: the server's data segments and the client's ACKs with their SACK blocks,
/// times from the server's first data segment, sequence numbers relative to each
/// side's ISN. Bad input is an error naming the file.
pub fn flow_from_capture(path: &Path, which: Option<u32>) -> Result<Flow, String> {
    use gentle_analyze::{Dir, Tag};
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut by_flow: Vec<Flow> = Vec::new();
    let mut on_packet = |p: &gentle_analyze::PacketTags, t0: u64| {
        let i = p.flow as usize;
        if by_flow.len() <= i {
            by_flow.resize_with(i + 1, Flow::default);
        }
        let f = &mut by_flow[i];
        let t = (p.ts_ns as i128 - t0 as i128) as f64 / 1e6;
        match p.dir {
            Dir::ToClient if p.seg.len > 0 => f.sends.push(Tx {
                t_ms: t,
                start: p.rel_seq,
                end: p.rel_seq + p.seg.len as u64,
                retransmission: p.tags.has(Tag::Retransmission),
            }),
            Dir::ToServer if p.seg.has(gentle_analyze::decode::flags::ACK) => {
                // The ACK's wire and relative values give the server's ISN.
                let isn = p.seg.ack.wrapping_sub(p.rel_ack as u32);
                let rel = |x: u32| x.wrapping_sub(isn) as u64;
                f.acks.push(AckIn {
                    t_ms: t,
                    una: p.rel_ack,
                    sacks: p
                        .seg
                        .opts
                        .sack_blocks()
                        .iter()
                        .map(|&(l, r)| (rel(l), rel(r)))
                        .collect(),
                });
            }
            _ => {}
        }
    };
    let a = crate::analyze::analyze_file_with(path, Default::default(), &mut on_packet)
        .map_err(|f| f.message)?;
    let id = match which {
        Some(n) => n,
        None => a
            .flows
            .iter()
            .filter(|r| r.data_packets > 0)
            .max_by_key(|r| (r.retransmissions.total(), std::cmp::Reverse(r.id)))
            .map(|r| r.id)
            .ok_or_else(|| {
                format!(
                    "error: {}: no flow carries server data to draw",
                    path.display()
                )
            })?,
    };
    let report = a.flows.iter().find(|r| r.id == id).ok_or_else(|| {
        format!(
            "error: --flow {id}: {} has flows 0 to {}",
            path.display(),
            a.flows.len().saturating_sub(1)
        )
    })?;
    let mut f = by_flow.get(id as usize).cloned().unwrap_or_default();
    if f.sends.is_empty() {
        return Err(format!(
            "error: {}: flow {id} carries no server data to draw",
            path.display()
        ));
    }
    let t0 = f.sends[0].t_ms;
    f.sends.iter_mut().for_each(|s| s.t_ms -= t0);
    f.acks.iter_mut().for_each(|a| a.t_ms -= t0);
    f.scenario = name;
    f.variant = format!("flow {id}: {} to {}", report.server, report.client);
    Ok(f)
}
