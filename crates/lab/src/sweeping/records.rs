//! The records table: one row per exchange of every trial and variant, with the
//! sweep point's coordinates when it has any — `gentle run`'s `records.csv` as
//! typed columns (times in milliseconds, unrounded; absent ones null).

use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use bytes::Bytes;
use gentle_sim::record::{ExchangeRecord, Unfinished};

use crate::runner::metric_of;
use crate::scenario::{Metric, Scenario};
use crate::table::{Column, Table, Writer};

/// The records table's columns after the point's, in order.
pub const RECORD_COLUMNS: &[&str] = &[
    "variant",
    "trial",
    "workload",
    "index",
    "request_bytes",
    "response_bytes",
    "complete",
    "ranked",
    "metric_ms",
    "server_ms",
    "client_ms",
    "fin_ms",
    "t_recover_ms",
    "t_total_ms",
    "fast_retrans",
    "timeouts",
    "slow_start_retrans",
    "syn_retrans",
    "recoveries",
    "undos",
    "retrans_segs",
    "bytes_sent",
    "packets_dropped",
    "unfinished",
];

/// Rows kept in memory before they are written as a row group.
const ROW_GROUP: usize = 65_536;
/// Row groups waiting for the encoder, at most (memory stays bounded).
const QUEUED: usize = 2;

/// The thread that encodes full row groups, and where they are sent to it.
type Encoder = (SyncSender<Table>, JoinHandle<Result<Writer, String>>);

/// The records of one scenario (or sweep point), written as they come: rows are
/// gathered into columns here, and each full row group is encoded on a thread of
/// its own while the trials go on.
pub struct RecordsFile {
    table: Table,
    encoder: Option<Encoder>,
    /// `point` and the axis labels, repeated on every row.
    point: Option<(i64, Vec<Bytes>)>,
    /// Variant and workload names as shared bytes, made once.
    variants: Vec<(String, Bytes)>,
    workloads: Vec<Bytes>,
    rows: u64,
}

fn shared(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

impl RecordsFile {
    /// A table for `scn`'s records; `point` is the point's index in the grid, for a
    /// sweep (its coordinates come from the scenario).
    pub fn new(scn: &Scenario, point: Option<usize>) -> Result<RecordsFile, String> {
        let mut cols = Vec::new();
        let point = point.map(|i| {
            cols.push(Column::i64("point"));
            for (axis, _) in &scn.point {
                cols.push(Column::str(axis));
            }
            (i as i64, scn.point.iter().map(|(_, l)| shared(l)).collect())
        });
        for &name in RECORD_COLUMNS {
            cols.push(match name {
                "variant" | "workload" => Column::str(name),
                "complete" | "ranked" => Column::bool(name),
                "unfinished" => Column::opt_str(name),
                n if n.ends_with("_ms") => Column::opt_f64(name),
                _ => Column::i64(name),
            });
        }
        let table = Table::new(cols);
        let mut writer = Writer::new(&table)?;
        let (tx, rx) = sync_channel::<Table>(QUEUED);
        let encoder = std::thread::Builder::new()
            .name("gentle-parquet".into())
            .spawn(move || {
                for mut t in rx {
                    writer.write(&mut t)?;
                }
                Ok(writer)
            })
            .map_err(|e| format!("cannot start the Parquet encoder: {e}"))?;
        Ok(RecordsFile {
            table,
            encoder: Some((tx, encoder)),
            point,
            variants: scn
                .variants
                .iter()
                .map(|v| (v.name.clone(), shared(&v.name)))
                .collect(),
            workloads: scn.workloads.iter().map(|w| shared(&w.name)).collect(),
            rows: 0,
        })
    }

    /// Adds the records of variant `variant`.
    pub fn push(
        &mut self,
        scn: &Scenario,
        variant: &str,
        recs: &[ExchangeRecord],
    ) -> Result<(), String> {
        let ms = |x: Option<u64>| x.map(|v| v as f64 / 1e6);
        let name = self
            .variants
            .iter()
            .find(|(n, _)| n == variant)
            .map_or_else(|| shared(variant), |(_, b)| b.clone());
        let unknown = Bytes::from_static(b"?");
        for r in recs {
            let mut c = self.table.cols.iter_mut();
            let mut next = || c.next().expect("a column per value");
            if let Some((i, labels)) = &self.point {
                next().push_i64(Some(*i));
                for l in labels {
                    next().push_bytes(Some(l.clone()));
                }
            }
            let wl = scn.workloads.get(r.workload as usize);
            next().push_bytes(Some(name.clone()));
            next().push_i64(Some(r.trial as i64));
            let wname = self.workloads.get(r.workload as usize);
            next().push_bytes(Some(wname.map_or_else(|| unknown.clone(), Bytes::clone)));
            next().push_i64(Some(i64::from(r.index)));
            next().push_i64(Some(r.request_bytes as i64));
            next().push_i64(Some(r.response_bytes as i64));
            next().push_bool(Some(r.complete));
            next().push_bool(Some(ranked(scn, wl.is_some_and(|w| w.measure), r)));
            next().push_f64(ms(metric_of(scn.metric, r)));
            next().push_f64(ms(r.server_ns));
            next().push_f64(ms(r.client_ns));
            next().push_f64(ms(r.fin_ns));
            next().push_f64(ms(r.t_recover_ns));
            next().push_f64(ms(r.t_total_ns));
            for x in [
                r.fast_retrans,
                r.timeouts,
                r.slow_start_retrans,
                r.syn_retrans,
                r.recoveries,
                r.undos,
                r.retrans_segs,
            ] {
                next().push_i64(Some(i64::from(x)));
            }
            next().push_i64(Some(r.bytes_sent as i64));
            next().push_i64(Some(i64::from(r.packets_dropped)));
            next().push_bytes(r.unfinished.map(|u| Bytes::from_static(unfinished_name(u))));
        }
        self.rows += recs.len() as u64;
        if self.table.rows() >= ROW_GROUP {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the rows gathered so far to the encoder.
    fn send(&mut self) -> Result<(), String> {
        let full = self.table.take();
        let (tx, _) = self.encoder.as_ref().expect("open until finished");
        if tx.send(full).is_err() {
            // The encoder stopped: its error comes out of finish().
            return self.join().map(|_| ());
        }
        Ok(())
    }

    fn join(&mut self) -> Result<Writer, String> {
        let (tx, handle) = self.encoder.take().expect("open until finished");
        drop(tx);
        handle
            .join()
            .map_err(|_| "the Parquet encoder panicked".to_string())?
    }

    /// Rows so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The file's bytes, with `metadata`.
    pub fn finish(mut self, metadata: &[(&str, String)]) -> Result<Vec<u8>, String> {
        self.send()?;
        self.join()?.finish(metadata)
    }
}

/// How `records.csv` writes why an exchange did not finish.
fn unfinished_name(u: Unfinished) -> &'static [u8] {
    match u {
        Unfinished::SynRetries => b"synretries",
        Unfinished::Retries => b"retries",
        Unfinished::Reset => b"reset",
        Unfinished::TimeLimit => b"timelimit",
    }
}

/// Whether a record is in the scenario's latency sample: a complete exchange of a
/// measured workload that the scenario's filter ranks, with a value of its metric
/// (page-load scenarios rank pages, not exchanges).
pub fn ranked(scn: &Scenario, measured: bool, r: &ExchangeRecord) -> bool {
    let kept = scn.filter.ranks(r);
    measured
        && kept
        && r.complete
        && scn.metric != Metric::Page
        && metric_of(scn.metric, r).is_some()
}
