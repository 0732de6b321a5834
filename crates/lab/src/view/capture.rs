//! A packet capture as `gentle view` draws it, through `gentle analyze`'s
//! inference: every flow in the flow table (the analysis' report), and the flows
//! with the most server retransmissions drawn as the server sent them — its
//! segments with their tags and inferred causes (spurious ones marked), the
//! client's ACKs with their SACK and DSACK blocks and window, and the recovery
//! episodes the analysis found.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use gentle_analyze::{Dir, FlowReport, PacketTags, Tag, decode::flags};

use super::flow::{Episode, FlowData, Packet, cause_code};

/// How many flows of a capture are drawn (the table lists them all).
pub const DRAWN: usize = 50;

/// A capture read: its flow table and the flows drawn.
pub struct Capture {
    pub source: String,
    pub table: Vec<FlowReport>,
    pub flows: Vec<FlowData>,
}

/// What is kept of one flow while the capture is read.
#[derive(Default)]
struct Acc {
    packets: Vec<Packet>,
    /// (record time ns, sequence from the first data byte) of each server packet.
    keys: Vec<(u64, u64)>,
    first_ns: Option<u64>,
    wscale: (Option<u8>, Option<u8>),
}

fn flag_text(f: u16) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (flags::FIN, 'F'),
        (flags::SYN, 'S'),
        (flags::RST, 'R'),
        (flags::PSH, 'P'),
        (flags::ACK, 'A'),
        (flags::ECE, 'E'),
    ] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    s
}

fn on_packet(by_flow: &mut Vec<Acc>, p: &PacketTags, t0: u64) {
    let i = p.flow as usize;
    if by_flow.len() <= i {
        by_flow.resize_with(i + 1, Acc::default);
    }
    let a = &mut by_flow[i];
    a.first_ns.get_or_insert(p.ts_ns);
    let server = p.dir == Dir::ToClient;
    if p.seg.has(flags::SYN) {
        let ws = p.seg.opts.wscale;
        if server {
            a.wscale.1 = ws
        } else {
            a.wscale.0 = ws
        }
    }
    let shift = match a.wscale {
        (Some(c), Some(s)) if !p.seg.has(flags::SYN) => {
            if server {
                s
            } else {
                c
            }
        }
        _ => 0,
    };
    if !server && !p.seg.has(flags::ACK) {
        return;
    }
    // The ACK's wire and relative values give the server's ISN.
    let isn = p.seg.ack.wrapping_sub(p.rel_ack as u32);
    let sack = if server {
        Vec::new()
    } else {
        let rel = |x: u32| x.wrapping_sub(isn) as u64;
        let b = p.seg.opts.sack_blocks();
        b.iter().map(|&(l, r)| (rel(l), rel(r))).collect()
    };
    let tags: Vec<&'static str> = Tag::ALL
        .into_iter()
        .filter(|t| p.tags.has(*t))
        .map(Tag::name)
        .collect();
    let cause = match p.cause {
        Some(c) => cause_code(c.name()),
        None if p.tags.has(Tag::Retransmission) => 6,
        None => 0,
    };
    a.packets.push(Packet {
        t: (p.ts_ns as i128 - t0 as i128) as f64 / 1e6,
        from_sender: server,
        seq: p.rel_seq,
        len: p.seg.len,
        ack: p.rel_ack,
        win: (p.seg.window as u32) << shift.min(14),
        flags: flag_text(p.seg.flags),
        ts: p.seg.opts.ts,
        tags,
        cause,
        sack,
    });
    a.keys.push((p.ts_ns, p.rel_seq.saturating_sub(1)));
}

/// Reads a capture; errors name the file.
pub fn read(path: &Path, prefix: &str) -> Result<Capture, String> {
    let mut by_flow: Vec<Acc> = Vec::new();
    let opts = gentle_analyze::Options {
        keep_retransmissions: true,
        ..Default::default()
    };
    let mut cb = |p: &PacketTags, t0: u64| on_packet(&mut by_flow, p, t0);
    let a = crate::analyze::analyze_file_with(path, opts, &mut cb).map_err(|f| f.message)?;
    let mut order: Vec<&FlowReport> = a.flows.iter().filter(|r| r.data_packets > 0).collect();
    order.sort_by_key(|r| {
        (
            std::cmp::Reverse(r.retransmissions.total()),
            std::cmp::Reverse(r.packets),
            r.id,
        )
    });
    let source = path.display().to_string();
    let name = path
        .file_name()
        .map_or(source.clone(), |n| n.to_string_lossy().into_owned());
    let mut flows = Vec::new();
    for r in order.into_iter().take(DRAWN) {
        let Some(acc) = by_flow.get_mut(r.id as usize) else {
            continue;
        };
        let acc = std::mem::take(acc);
        let label = format!("{name} flow {}: {} to {}", r.id, r.server, r.client);
        flows.push(flow(acc, r, format!("{prefix}{}", r.id), label, &source));
    }
    if a.flows.is_empty() {
        return Err(format!(
            "error: {}: no TCP flow in the capture",
            path.display()
        ));
    }
    Ok(Capture {
        source,
        table: a.flows,
        flows,
    })
}

/// One flow drawn: times from its server's first data segment; causes and
/// spuriousness as the analysis settled them at the end.
fn flow(mut acc: Acc, r: &FlowReport, id: String, name: String, source: &str) -> FlowData {
    let mut f = FlowData::new(id, name, source.to_string(), "capture");
    f.number = Some(r.id);
    let t_data = acc
        .packets
        .iter()
        .find(|p| p.from_sender && p.len > 0)
        .map_or(0.0, |p| p.t);
    let t_first = acc.packets.first().map_or(0.0, |p| p.t);
    let log: HashMap<(u64, u64), &gentle_analyze::sender::Retransmission> = r
        .retransmission_log
        .iter()
        .map(|x| ((x.t_ns, x.seq), x))
        .collect();
    let mut spurious = Vec::new();
    for (i, mut p) in acc.packets.drain(..).enumerate() {
        p.t -= t_data;
        if p.from_sender
            && p.cause > 0
            && let Some(x) = log.get(&acc.keys[i])
        {
            p.cause = cause_code(x.cause.name());
            if x.spurious.is_some() {
                spurious.push(f.pk.t.len());
            }
        }
        f.push(p);
    }
    for i in spurious {
        f.pk.spurious[i] = 1;
    }
    let end = f.pk.t.last().copied().unwrap_or(0.0);
    let episodes = r
        .recoveries
        .iter()
        .map(|e| {
            let start = e.start_ms + t_first - t_data;
            Episode {
                start,
                end: e.duration_ms.map_or(end, |d| start + d),
                label: e.cause.name().to_string(),
                retransmissions: e.retransmissions,
                spurious: 0,
            }
        })
        .collect();
    f.finish(Some(episodes));
    f
}
