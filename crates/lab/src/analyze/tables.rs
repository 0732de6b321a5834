//! `gentle analyze --parquet DIR`'s four tables, built from one capture's analysis at
//! a time: `flows` (a row per flow), `exchanges` (a row per application exchange),
//! `retransmissions` (a row per server retransmission, with its cause) and
//! `signatures` (a row per capture and signature seen in it, with its counts). Every
//! row names its capture; times are from the capture's first TCP packet.

use gentle_analyze::exchange::exchange_at;
use gentle_analyze::flow::Closed;
use gentle_analyze::{Analysis, Cause, CauseCounts, FlowReport, Retransmission, Spurious};

use super::signatures::{self, NAMES};
use crate::table::{Column, Table};

/// The file names of the tables, in the order of [`Tables::all`].
pub const FILES: [&str; 4] = [
    "flows.parquet",
    "exchanges.parquet",
    "retransmissions.parquet",
    "signatures.parquet",
];

/// The four tables' rows.
#[derive(Clone, Debug)]
pub struct Tables {
    pub flows: Table,
    pub exchanges: Table,
    pub retransmissions: Table,
    pub signatures: Table,
}

/// The columns of retransmission counts by cause, as the `flows` and `exchanges`
/// tables have them: `retransmissions` (all), one per cause, `spurious`.
fn cause_columns() -> Vec<Column> {
    let mut c = vec![Column::i64("retransmissions")];
    c.extend(
        Cause::ALL
            .iter()
            .map(|k| Column::i64(&k.name().replace('-', "_"))),
    );
    c.push(Column::i64("spurious"));
    c
}

fn push_causes(t: &mut Table, c: &CauseCounts) {
    t.col("retransmissions").push_i64(Some(c.total() as i64));
    for k in Cause::ALL {
        t.col(&k.name().replace('-', "_"))
            .push_i64(Some(c.get(k) as i64));
    }
    t.col("spurious").push_i64(Some(c.spurious as i64));
}

fn flows_table() -> Table {
    let mut cols = vec![
        Column::str("capture"),
        Column::i64("flow"),
        Column::str("server"),
        Column::str("client"),
        Column::opt_f64("start_s"),
        Column::opt_f64("duration_ms"),
        Column::str("closed"),
        Column::i64("packets"),
        Column::i64("data_packets"),
        Column::i64("bytes_to_client"),
        Column::i64("bytes_to_server"),
    ];
    cols.extend(cause_columns());
    for n in [
        "syn_retransmissions",
        "losses",
        "tail_losses",
        "bursts",
        "lossy_bursts",
        "dup_acks",
        "sack_acks",
        "dsacks",
        "zero_windows",
        "reordering_events",
        "reordering_max",
        "capture_gaps",
        "recoveries",
        "exchanges",
    ] {
        cols.push(Column::i64(n));
    }
    for n in [
        "handshake_rtt_ms",
        "rtt_min_ms",
        "srtt_ms",
        "rtt_p95_ms",
        "rtt_inflation_ms",
    ] {
        cols.push(Column::opt_f64(n));
    }
    cols.extend([
        Column::bool("bufferbloat"),
        Column::opt_f64("policed_kbps"),
        Column::str("signatures"),
    ]);
    Table::new(cols)
}

fn exchanges_table() -> Table {
    let mut cols = vec![
        Column::str("capture"),
        Column::i64("flow"),
        Column::i64("exchange"),
        Column::opt_f64("start_s"),
        Column::i64("request_bytes"),
        Column::i64("response_bytes"),
        Column::opt_f64("response_ms"),
        Column::opt_f64("first_byte_ms"),
        Column::bool("retransmitted"),
    ];
    cols.extend(cause_columns());
    cols.extend([
        Column::i64("recoveries"),
        Column::opt_str("http_request"),
        Column::opt_i64("http_status"),
        Column::str("signatures"),
    ]);
    Table::new(cols)
}

fn retransmissions_table() -> Table {
    Table::new(vec![
        Column::str("capture"),
        Column::i64("flow"),
        Column::opt_i64("exchange"),
        Column::opt_f64("time_s"),
        Column::i64("seq"),
        Column::i64("len"),
        Column::str("cause"),
        Column::opt_str("spurious"),
        Column::i64("dups"),
        Column::opt_f64("gap_ms"),
    ])
}

fn signatures_table() -> Table {
    Table::new(vec![
        Column::str("capture"),
        Column::str("signature"),
        Column::i64("flows"),
        Column::i64("exchanges"),
        Column::i64("timed_exchanges"),
    ])
}

fn closed_name(c: Closed) -> &'static str {
    match c {
        Closed::Fin => "fin",
        Closed::Rst => "rst",
        Closed::Open => "open",
    }
}

fn spurious_name(s: Spurious) -> &'static str {
    match s {
        Spurious::Dsack => "dsack",
        Spurious::Timestamp => "timestamp",
        Spurious::TooSoon => "too-soon",
    }
}

impl Default for Tables {
    fn default() -> Self {
        Tables::new()
    }
}

impl Tables {
    /// Empty tables.
    pub fn new() -> Tables {
        Tables {
            flows: flows_table(),
            exchanges: exchanges_table(),
            retransmissions: retransmissions_table(),
            signatures: signatures_table(),
        }
    }

    /// The tables, in the order of [`FILES`].
    pub fn all(&mut self) -> [&mut Table; 4] {
        [
            &mut self.flows,
            &mut self.exchanges,
            &mut self.retransmissions,
            &mut self.signatures,
        ]
    }

    /// Adds the rows of `other` after these.
    pub fn append(&mut self, other: Tables) {
        self.flows.append(other.flows);
        self.exchanges.append(other.exchanges);
        self.retransmissions.append(other.retransmissions);
        self.signatures.append(other.signatures);
    }

    /// The rows of capture `name`'s analysis `a` (analysed with
    /// `keep_retransmissions`, else without its retransmission rows).
    pub fn of(name: &str, a: &Analysis) -> Tables {
        let mut t = Tables::new();
        // Flows are numbered in order of their first packet: the first is the
        // capture's first TCP packet.
        let t0 = a.flows.first().map_or(0, |f| f.start_ns);
        let mut counts = [(0i64, 0i64, 0i64); NAMES.len()];
        for f in &a.flows {
            let set = signatures::of_flow(f);
            add_flow(&mut t.flows, name, f, t0, set);
            for (i, c) in counts.iter_mut().enumerate() {
                c.0 += i64::from(signatures::has(set, i));
            }
            for e in &f.exchanges {
                let set = signatures::of_exchange(f, e);
                add_exchange(&mut t.exchanges, name, f, e, t0, set);
                for (i, c) in counts.iter_mut().enumerate() {
                    if signatures::has(set, i) {
                        c.1 += 1;
                        c.2 += i64::from(e.response_ms.is_some());
                    }
                }
            }
            for r in &f.retransmission_log {
                add_retransmission(&mut t.retransmissions, name, f, r, t0);
            }
        }
        for (sig, (flows, exchanges, timed)) in NAMES.iter().zip(counts) {
            if flows == 0 && exchanges == 0 {
                continue;
            }
            let s = &mut t.signatures;
            s.col("capture").push_str(Some(name));
            s.col("signature").push_str(Some(sig));
            s.col("flows").push_i64(Some(flows));
            s.col("exchanges").push_i64(Some(exchanges));
            s.col("timed_exchanges").push_i64(Some(timed));
        }
        t
    }
}

/// Seconds from `t0` to `t` (ns).
fn secs(t: u64, t0: u64) -> Option<f64> {
    Some(t.saturating_sub(t0) as f64 / 1e9)
}

fn add_flow(t: &mut Table, name: &str, f: &FlowReport, t0: u64, set: signatures::Set) {
    t.col("capture").push_str(Some(name));
    t.col("flow").push_i64(Some(f.id.into()));
    t.col("server").push_str(Some(&f.server));
    t.col("client").push_str(Some(&f.client));
    t.col("start_s").push_f64(secs(f.start_ns, t0));
    t.col("duration_ms").push_f64(Some(f.duration_ms));
    t.col("closed").push_str(Some(closed_name(f.closed)));
    for (n, v) in [
        ("packets", f.packets),
        ("data_packets", f.data_packets),
        ("bytes_to_client", f.bytes_to_client),
        ("bytes_to_server", f.bytes_to_server),
        ("syn_retransmissions", f.syn_retransmissions.into()),
        ("losses", f.losses.into()),
        ("tail_losses", f.tail_losses.into()),
        ("bursts", f.bursts.into()),
        ("lossy_bursts", f.lossy_bursts.into()),
        ("dup_acks", f.dup_acks.into()),
        ("sack_acks", f.sack_acks.into()),
        ("dsacks", f.dsacks.into()),
        ("zero_windows", f.zero_windows.into()),
        ("reordering_events", f.reordering_events.into()),
        ("reordering_max", f.reordering_max.into()),
        ("capture_gaps", f.capture_gaps.into()),
        ("recoveries", f.recoveries.len() as u64),
        ("exchanges", f.exchanges.len() as u64),
    ] {
        t.col(n).push_i64(Some(v as i64));
    }
    push_causes(t, &f.retransmissions);
    for (n, v) in [
        ("handshake_rtt_ms", f.handshake_rtt_ms),
        ("rtt_min_ms", f.rtt_min_ms),
        ("srtt_ms", f.srtt_ms),
        ("rtt_p95_ms", f.rtt_p95_ms),
        ("rtt_inflation_ms", f.rtt_inflation_ms),
        ("policed_kbps", f.policed_kbps),
    ] {
        t.col(n).push_f64(v);
    }
    t.col("bufferbloat").push_bool(Some(f.bufferbloat));
    t.col("signatures").push_str(Some(&signatures::names(set)));
}

fn add_exchange(
    t: &mut Table,
    name: &str,
    f: &FlowReport,
    e: &gentle_analyze::exchange::Exchange,
    t0: u64,
    set: signatures::Set,
) {
    t.col("capture").push_str(Some(name));
    t.col("flow").push_i64(Some(f.id.into()));
    t.col("exchange").push_i64(Some(e.index.into()));
    t.col("start_s").push_f64(secs(e.request_ns, t0));
    t.col("request_bytes")
        .push_i64(Some(e.request_bytes as i64));
    t.col("response_bytes")
        .push_i64(Some(e.response_bytes as i64));
    t.col("response_ms").push_f64(e.response_ms);
    t.col("first_byte_ms").push_f64(e.first_byte_ms);
    t.col("retransmitted").push_bool(Some(e.lossy()));
    push_causes(t, &e.retransmissions);
    t.col("recoveries").push_i64(Some(e.recoveries.into()));
    t.col("http_request").push_str(e.http_request.as_deref());
    t.col("http_status").push_i64(e.http_status.map(i64::from));
    t.col("signatures").push_str(Some(&signatures::names(set)));
}

fn add_retransmission(t: &mut Table, name: &str, f: &FlowReport, r: &Retransmission, t0: u64) {
    t.col("capture").push_str(Some(name));
    t.col("flow").push_i64(Some(f.id.into()));
    t.col("exchange")
        .push_i64(exchange_at(&f.exchanges, r.t_ns).map(|i| i as i64));
    t.col("time_s").push_f64(secs(r.t_ns, t0));
    t.col("seq").push_i64(Some(r.seq as i64));
    t.col("len").push_i64(Some(r.len.into()));
    t.col("cause").push_str(Some(r.cause.name()));
    t.col("spurious").push_str(r.spurious.map(spurious_name));
    t.col("dups").push_i64(Some(r.dups.into()));
    t.col("gap_ms").push_f64(Some(r.gap_ns as f64 / 1e6));
}
