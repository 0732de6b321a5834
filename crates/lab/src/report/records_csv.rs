//! `records.csv`: one row per exchange, the records table's columns less the few
//! only the table has.

use crate::runner::metric_of;
use crate::scenario::Scenario;

/// The records table's columns that `records.csv` leaves out.
const TABLE_ONLY: &[&str] = &["ranked", "t_recover_ms", "t_total_ms"];

/// The columns of `records.csv`: the records table's
/// ([`RECORD_COLUMNS`](crate::sweeping::records::RECORD_COLUMNS)), in its order,
/// less the few only the table has.
pub fn csv_columns() -> impl Iterator<Item = &'static str> + Clone {
    crate::sweeping::records::RECORD_COLUMNS
        .iter()
        .copied()
        .filter(|c| !TABLE_ONLY.contains(c))
}

/// `records.csv` as it is written: the header, then one row per exchange, every
/// field quoted where it needs to be (a name with a comma or a quote).
pub struct RecordsCsv<W: std::io::Write> {
    w: csv::Writer<W>,
}

impl<W: std::io::Write> RecordsCsv<W> {
    /// Writes the header to `w`.
    pub fn new(w: W) -> std::io::Result<RecordsCsv<W>> {
        let mut w = csv::Writer::from_writer(w);
        w.write_record(csv_columns())?;
        Ok(RecordsCsv { w })
    }

    /// The rows of `records` of the variant named `variant`.
    pub fn records(
        &mut self,
        scn: &Scenario,
        variant: &str,
        records: &[gentle_sim::record::ExchangeRecord],
    ) -> std::io::Result<()> {
        for r in records {
            self.row(|col| record_field(scn, variant, r, col))?;
        }
        Ok(())
    }

    /// One row: `field` gives the value of each column, by name.
    pub fn row(&mut self, mut field: impl FnMut(&str) -> String) -> std::io::Result<()> {
        for col in csv_columns() {
            self.w.write_field(field(col))?;
        }
        self.w.write_record(None::<&[u8]>)?;
        Ok(())
    }

    /// Flushes and hands back the writer.
    pub fn finish(self) -> std::io::Result<W> {
        self.w.into_inner().map_err(|e| e.into_error())
    }
}

/// Milliseconds with three decimals, or nothing.
fn csv_ms(x: Option<u64>) -> String {
    x.map_or(String::new(), |v| format!("{:.3}", v as f64 / 1e6))
}

/// The `col` field of record `r` of the variant named `variant`.
fn record_field(
    scn: &Scenario,
    variant: &str,
    r: &gentle_sim::record::ExchangeRecord,
    col: &str,
) -> String {
    match col {
        "variant" => variant.to_string(),
        "trial" => r.trial.to_string(),
        "workload" => scn
            .workloads
            .get(r.workload as usize)
            .map_or("?", |w| w.name.as_str())
            .to_string(),
        "index" => r.index.to_string(),
        "request_bytes" => r.request_bytes.to_string(),
        "response_bytes" => r.response_bytes.to_string(),
        "complete" => r.complete.to_string(),
        "metric_ms" => csv_ms(metric_of(scn.metric, r)),
        "server_ms" => csv_ms(r.server_ns),
        "client_ms" => csv_ms(r.client_ns),
        "fin_ms" => csv_ms(r.fin_ns),
        "fast_retrans" => r.fast_retrans.to_string(),
        "timeouts" => r.timeouts.to_string(),
        "slow_start_retrans" => r.slow_start_retrans.to_string(),
        "syn_retrans" => r.syn_retrans.to_string(),
        "recoveries" => r.recoveries.to_string(),
        "undos" => r.undos.to_string(),
        "retrans_segs" => r.retrans_segs.to_string(),
        "bytes_sent" => r.bytes_sent.to_string(),
        "packets_dropped" => r.packets_dropped.to_string(),
        "unfinished" => r
            .unfinished
            .map_or(String::new(), |u| format!("{u:?}").to_lowercase()),
        _ => unreachable!("records.csv has no column {col}"),
    }
}
