//! A `gentle run --trace` file as `gentle view` draws it: one flow per scenario and
//! variant, seen at the data sender of the measured workload's first connection
//! (as `gentle plot tsg` picks it): its data segments, with the cause the engine
//! gave each retransmission, the ACKs it received, the drops of its data, and its
//! engine's events (CA state with cwnd, ssthresh and pipe, RTOs, timers, undo).

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

use serde_json::Value;

use super::flow::{Engine, FlowData, Packet, cause_code};
use crate::trace_file::{TraceLine, TracePacket};

/// One group's lines, kept with the raw text of engine events.
struct Group {
    key: (String, String),
    lines: Vec<(TraceLine, Option<Value>)>,
}

/// Reads a trace file into flows (one per scenario and variant, in order of
/// appearance); errors name the file and line.
pub fn read(path: &Path, text: &str, prefix: &str) -> Result<Vec<FlowData>, String> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let l: TraceLine = serde_json::from_str(raw).map_err(|e| {
            format!(
                "error: {}:{}: not a line of `gentle run --trace`: {e}",
                path.display(),
                i + 1
            )
        })?;
        let v = if l.what == "engine" {
            serde_json::from_str::<Value>(raw).ok()
        } else {
            None
        };
        let key = (l.scenario.clone(), l.variant.clone());
        match groups.iter_mut().find(|g| g.key == key) {
            Some(g) => g.lines.push((l, v)),
            None => groups.push(Group {
                key,
                lines: vec![(l, v)],
            }),
        }
    }
    let source = path.display().to_string();
    let flows: Vec<FlowData> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| flow(g, format!("{prefix}{i}"), &source))
        .filter(|f| !f.pk.t.is_empty())
        .collect();
    if flows.is_empty() {
        return Err(format!(
            "error: {}: no data segment in the trace (expected the lines of `gentle run --trace`)",
            path.display()
        ));
    }
    Ok(flows)
}

/// The data sender of flow 0: the node that sent the most payload in it.
fn sender(g: &Group) -> String {
    let mut by: HashMap<&str, u64> = HashMap::default();
    for (l, _) in &g.lines {
        if l.what == "send"
            && let Some(p) = &l.packet
            && p.flow == 0
        {
            *by.entry(&l.node).or_default() += p.len;
        }
    }
    let mut v: Vec<(&str, u64)> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.first().map(|x| x.0.to_string()).unwrap_or_default()
}

fn flow(g: &Group, id: String, source: &str) -> FlowData {
    let node = sender(g);
    let name = if g.key.1.is_empty() {
        g.key.0.clone()
    } else {
        format!("{} · {}", g.key.0, g.key.1)
    };
    let mut f = FlowData::new(id, name, source.to_string(), "trace");
    let mine = |l: &TraceLine| l.node == node;
    let is_data = |l: &TraceLine| {
        l.what == "send"
            && l.packet
                .as_ref()
                .is_some_and(|p| p.flow == 0 && !p.copy && p.len > 0)
    };
    let t0 = g
        .lines
        .iter()
        .find(|(l, _)| mine(l) && is_data(l))
        .map_or(0, |(l, _)| l.t_ns);
    let ms = |t: u64| (t as f64 - t0 as f64) / 1e6;
    // The engine's cause of each retransmission, by time and sequence number.
    let conn = g
        .lines
        .iter()
        .find(|(l, _)| {
            mine(l)
                && l.what == "engine"
                && matches!(
                    l.event.as_deref(),
                    Some("retransmit" | "ca-state" | "ack-state")
                )
        })
        .and_then(|(l, _)| l.conn);
    let mut causes: HashMap<(u64, u64), String> = HashMap::default();
    for (l, v) in &g.lines {
        if mine(l)
            && l.conn == conn
            && l.event.as_deref() == Some("retransmit")
            && let Some(v) = v
        {
            let seq = v["seq"].as_u64().unwrap_or(0);
            let kind = v["kind"].as_str().unwrap_or("").to_string();
            causes.insert((l.t_ns, seq), kind);
        }
    }
    let mut engine = Engine::default();
    let mut high = 0u64;
    let mut last_ack: Option<(u64, u64)> = None;
    let mut undo_at: Vec<f64> = Vec::new();
    for (l, v) in &g.lines {
        if !mine(l) {
            continue;
        }
        match (l.what.as_str(), &l.packet) {
            ("send", Some(p)) if p.flow == 0 && !p.copy => {
                if p.len == 0 && !p.flags.contains('S') && !p.flags.contains('F') {
                    continue;
                }
                let end = p.seq + p.len;
                let cause = if p.len > 0 && p.seq < high {
                    causes.get(&(l.t_ns, p.seq)).map_or(6, |k| cause_code(k))
                } else {
                    0
                };
                high = high.max(end);
                let tags: Vec<&'static str> = match cause {
                    _ if p.len == 0 => vec![],
                    0 => vec!["original"],
                    _ => vec!["retransmission"],
                };
                f.push(packet(ms(l.t_ns), true, p, tags, cause));
            }
            ("recv", Some(p)) if p.flow == 0 && p.flags.contains('A') => {
                let tags = ack_tags(p, &mut last_ack);
                f.push(packet(ms(l.t_ns), false, p, tags, 0));
            }
            ("drop", Some(p)) if p.flow == 0 && p.from == node && p.len > 0 => {
                f.drop_t.push(ms(l.t_ns));
                f.drop_seq.push(p.seq);
                f.drop_len.push(p.len as u32);
            }
            ("engine", _) if l.conn == conn => {
                if let Some(v) = v {
                    engine_event(&mut engine, ms(l.t_ns), v, &mut undo_at);
                }
            }
            _ => {}
        }
    }
    mark_undone(&mut f, &engine, &undo_at);
    f.engine = Some(engine);
    f.finish(None);
    f
}

fn packet(
    t: f64,
    from_sender: bool,
    p: &TracePacket,
    tags: Vec<&'static str>,
    cause: u8,
) -> Packet {
    Packet {
        t,
        from_sender,
        seq: p.seq,
        len: p.len as u32,
        ack: p.ack,
        win: p.win.min(u32::MAX as u64) as u32,
        flags: p.flags.clone(),
        ts: p.ts.map(|x| (x[0], x[1])),
        tags,
        cause,
        sack: p.sack.iter().map(|b| (b[0], b[1])).collect(),
    }
}

/// The tags of a received ACK, as `gentle analyze` names them.
fn ack_tags(p: &TracePacket, last: &mut Option<(u64, u64)>) -> Vec<&'static str> {
    let mut tags = Vec::new();
    if p.len == 0 && *last == Some((p.ack, p.win)) && !p.flags.contains('F') {
        tags.push("dup-ack");
    }
    if !p.sack.is_empty() {
        tags.push("sack");
        let first = p.sack[0];
        let inside = p
            .sack
            .get(1)
            .is_some_and(|s| first[0] >= s[0] && first[1] <= s[1]);
        if first[1] <= p.ack || inside {
            tags.push("dsack");
        }
    }
    *last = Some((p.ack, p.win));
    tags
}

/// One engine event into the series and the log.
fn engine_event(e: &mut Engine, t: f64, v: &Value, undo_at: &mut Vec<f64>) {
    let num = |k: &str| v[k].as_f64();
    let kind = v["event"].as_str().unwrap_or("");
    match kind {
        "ack-state" => {
            // Per ACK: series only, not the event log (one line per ACK).
            step(e, t, num("cwnd"), num("ssthresh"), num("pipe"));
            if let Some(s) = num("srtt_ms").filter(|s| *s > 0.0) {
                e.srtt.push(t, s);
            }
            if let Some(r) = num("rto_ms") {
                e.rto_ack.push(t, r);
            }
            for name in v["armed"].as_array().into_iter().flatten() {
                let i = name_index(&mut e.timer_names, name.as_str().unwrap_or("?"));
                e.armed.push(t, i as f64);
            }
            return;
        }
        "ca-state" => {
            // The state before the first change: from the flow's start on.
            if e.ca.t.is_empty()
                && let Some(from) = v["from"].as_str()
            {
                let i = name_index(&mut e.ca_names, from);
                e.ca.push(t.min(0.0), i as f64);
            }
            let to = v["to"].as_str().unwrap_or("?");
            let i = name_index(&mut e.ca_names, to);
            e.ca.push(t, i as f64);
            step(e, t, num("cwnd"), num("ssthresh"), num("pipe"));
        }
        "undo" | "fast-start-reset" => {
            if kind == "undo" {
                undo_at.push(t);
            }
            step(e, t, num("cwnd"), num("ssthresh"), None);
        }
        "fast-start" => step(e, t, num("cwnd"), None, None),
        "rto" => e.rto.push(t, num("rto_ms").unwrap_or(0.0)),
        "timer" => {
            let name = v["timer"].as_str().unwrap_or("?");
            let i = name_index(&mut e.timer_names, name);
            e.timers.push(t, i as f64);
        }
        _ => {}
    }
    let mut text = kind.to_string();
    if let Some(o) = v.as_object() {
        for (k, x) in o {
            if !matches!(
                k.as_str(),
                "event" | "t_ns" | "what" | "node" | "scenario" | "variant" | "conn"
            ) {
                let x = x.as_str().map_or_else(|| x.to_string(), str::to_string);
                text += &format!(" {k}={x}");
            }
        }
    }
    e.log_t.push((t * 1000.0).round() / 1000.0);
    e.log.push(text);
}

/// The index of `name` in `names`, added if new.
fn name_index(names: &mut Vec<String>, name: &str) -> usize {
    match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.to_string());
            names.len() - 1
        }
    }
}

fn step(e: &mut Engine, t: f64, cwnd: Option<f64>, ssthresh: Option<f64>, pipe: Option<f64>) {
    if let Some(c) = cwnd {
        e.cwnd.push(t, c);
    }
    // An undone or unset reduction leaves ssthresh "infinite": not drawn.
    if let Some(s) = ssthresh.filter(|s| *s < 1e9) {
        e.ssthresh.push(t, s);
    }
    if let Some(p) = pipe {
        e.pipe.push(t, p);
    }
}

/// An undo shows the retransmissions of the episode it ends unnecessary: those
/// since the CA state last left open.
fn mark_undone(f: &mut FlowData, e: &Engine, undo_at: &[f64]) {
    let open = e.ca_names.iter().position(|n| n == "open");
    for &u in undo_at {
        let from =
            e.ca.t
                .iter()
                .zip(&e.ca.v)
                .rev()
                .find(|(t, v)| **t <= u && Some(**v as usize) != open)
                .map_or(f64::NEG_INFINITY, |(t, _)| *t);
        let k = &mut f.pk;
        for i in 0..k.t.len() {
            if k.dir[i] == 0 && k.cause[i] > 0 && k.t[i] >= from && k.t[i] <= u {
                k.spurious[i] = 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server sends two segments, the first is dropped and resent on a timeout,
    /// and the engine undoes the timeout.
    #[test]
    fn causes_drops_and_undo_from_a_trace() {
        let l = |t: u64, node: &str, what: &str, rest: &str| {
            format!(r#"{{"variant":"v","t_ns":{t},"node":"{node}","what":"{what}"{rest}}}"#)
        };
        let pkt = |from: &str, flags: &str, seq: u64, len: u64, ack: u64| {
            format!(
                r#","packet":{{"flow":0,"from":"{from}","flags":"{flags}","seq":{seq},"len":{len},"ack":{ack},"win":100}}"#
            )
        };
        let text = [
            l(0, "s", "send", &pkt("s", "A", 1, 100, 1)),
            l(0, "s", "send", &pkt("s", "A", 101, 100, 1)),
            l(1, "s", "drop", &pkt("s", "A", 1, 100, 1)),
            l(
                5_000_000,
                "s",
                "engine",
                r#","conn":1,"event":"ca-state","from":"open","to":"loss","cwnd":1,"ssthresh":2,"pipe":0"#,
            ),
            l(
                5_000_000,
                "s",
                "engine",
                r#","conn":1,"event":"retransmit","seq":1,"len":100,"kind":"timeout""#,
            ),
            l(5_000_000, "s", "send", &pkt("s", "A", 1, 100, 1)),
            l(6_000_000, "s", "recv", &pkt("c", "A", 1, 0, 201)),
            l(
                6_000_000,
                "s",
                "engine",
                r#","conn":1,"event":"undo","kind":"loss","cwnd":10,"ssthresh":20"#,
            ),
            l(
                6_000_000,
                "s",
                "engine",
                r#","conn":1,"event":"ack-state","cwnd":11,"ssthresh":20,"pipe":1,"srtt_ms":4.5,"rto_ms":204.5,"armed":["retransmission","loss-probe"]"#,
            ),
        ]
        .join("\n");
        let flows = read(Path::new("t.jsonl"), &text, "t-").unwrap();
        assert_eq!(flows.len(), 1);
        let f = &flows[0];
        assert_eq!(f.pk.cause, vec![0, 0, cause_code("timeout"), 0]);
        assert_eq!(f.pk.spurious, vec![0, 0, 1, 0], "undone");
        assert_eq!(
            (f.drop_t.clone(), f.drop_seq.clone()),
            (vec![0.000001], vec![1])
        );
        let e = f.engine.as_ref().unwrap();
        assert_eq!(e.ca_names, vec!["open", "loss"]);
        assert_eq!(e.cwnd.v, vec![1.0, 10.0, 11.0]);
        // The per-ACK state: SRTT, RTO and the timers armed; not in the event log.
        assert_eq!(
            (e.srtt.v.clone(), e.rto_ack.v.clone()),
            (vec![4.5], vec![204.5])
        );
        let armed: Vec<&str> = e
            .armed
            .v
            .iter()
            .map(|&i| e.timer_names[i as usize].as_str())
            .collect();
        assert_eq!(armed, ["retransmission", "loss-probe"]);
        assert!(!e.log.iter().any(|l| l.starts_with("ack-state")));
        assert_eq!(f.episodes.len(), 1);
        assert_eq!(f.summary.last_ack_ms, Some(6.0));
        let bad = read(Path::new("t.jsonl"), "{\"what\":1}", "t-").unwrap_err();
        assert!(bad.contains("t.jsonl:1"), "{bad}");
    }
}
