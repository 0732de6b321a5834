//! Where a scenario's run goes once it has run: the report on stdout (text or JSON),
//! the staged `--out` files (records CSV, summary, CDF, time-sequence graph), the
//! pcap files and the trace. Every trial ran once; the observed ones
//! ([`runner::Observed`]) carry what `--trace`, `--pcap` and the time-sequence graph
//! need.

use std::io::Write;

use gentle_sim::TraceLine;
use serde::Serialize;

use crate::runner::{self, RunResult};
use crate::scenario::Scenario;
use crate::staging::{self, Staged};
use crate::tsg::{self, Flow};
use crate::{plot, report};

/// The records CSV of one scenario under `--out`, written as waves of trials finish.
pub struct CsvSink {
    w: Option<report::RecordsCsv<std::io::BufWriter<std::fs::File>>>,
    error: Option<std::io::Error>,
}

impl CsvSink {
    /// Opens `{stem}records.csv` in `staged`, or nothing without `--out`.
    pub fn open(staged: Option<&mut Staged>, stem: &str) -> Result<CsvSink, String> {
        let mut error = None;
        let w = match staged {
            Some(st) => {
                let path = st.path(&format!("{stem}records.csv"));
                let f = std::fs::File::create(&path)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                report::RecordsCsv::new(std::io::BufWriter::new(f))
                    .map_err(|e| error = Some(e))
                    .ok()
            }
            None => None,
        };
        Ok(CsvSink { w, error })
    }

    /// The records of variant `vi`.
    pub fn write(
        &mut self,
        scn: &Scenario,
        vi: usize,
        recs: &[gentle_sim::record::ExchangeRecord],
    ) {
        if let Some(w) = self.w.as_mut()
            && let Err(e) = w.records(scn, &scn.variants[vi].name, recs)
        {
            self.error.get_or_insert(e);
        }
    }

    /// Flushes and closes; the first write error, if any.
    pub fn close(mut self) -> Result<(), String> {
        if let Some(w) = self.w.take()
            && let Err(e) = w.finish().and_then(|mut w| w.flush())
        {
            self.error.get_or_insert(e);
        }
        self.error
            .map_or(Ok(()), |e| Err(format!("writing records: {e}")))
    }
}

/// The time-sequence graphs of trial 0 of every variant, when the scenario draws one.
pub fn flows(scn: &Scenario, run: &RunResult) -> Option<Vec<Flow>> {
    scn.tsg.then(|| {
        run.variants
            .iter()
            .filter_map(|v| observed(v, 0)?.flow.clone())
            .collect()
    })
}

fn observed(v: &runner::VariantResult, trial: u64) -> Option<&runner::Observed> {
    v.observed.iter().find(|o| o.trial == trial)
}

/// The report on stdout: a table (and trial 0's recovery facts), or JSON — pushed to
/// `docs` for one document, or printed as a line at once for a sweep's point.
pub fn report(
    scn: &Scenario,
    run: &RunResult,
    (trials, seed): (u64, u64),
    json: bool,
    flows: Option<&[Flow]>,
    docs: &mut Vec<serde_json::Value>,
) {
    let later_ms = tsg::later_write_ms(scn);
    let facts = flows.map(|fl| {
        fl.iter()
            .map(|f| tsg::facts(f, later_ms))
            .collect::<Vec<_>>()
    });
    if json {
        let mut j = report::json(scn, run, trials, seed);
        j["experiment"] = serde_json::Value::String(scn.name.clone());
        if let Some(facts) = &facts {
            j["trial0"] = serde_json::to_value(facts).expect("serialisable");
        }
        if scn.point.is_empty() {
            docs.push(j);
        } else {
            // A sweep's points stream: one JSON line each, as it finishes.
            let _ = writeln!(std::io::stdout().lock(), "{j}");
        }
        return;
    }
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = writeln!(out, "{}", report::table(scn, run, trials));
    if let Some(facts) = &facts {
        let _ = writeln!(
            out,
            "trial 0, times from the first data segment:\n{}",
            tsg::facts_text(facts, later_ms)
        );
    }
}

/// The `--out` files of a scenario: summary JSON, CDF and time-sequence graph.
pub fn results(
    st: &mut Staged,
    stem: &str,
    scn: &Scenario,
    run: &RunResult,
    (trials, seed): (u64, u64),
    flows: Option<&[Flow]>,
) -> Result<(), String> {
    let j =
        serde_json::to_string_pretty(&report::json(scn, run, trials, seed)).expect("serialisable");
    st.write(&format!("{stem}summary.json"), j.as_bytes())
        .map_err(|e| e.to_string())?;
    let p = st.path(&format!("{stem}cdf.png"));
    st.path(&format!("{stem}cdf.svg"));
    plot::cdf(&p, &report::cdf_title(scn), run)?;
    if let Some(flows) = flows {
        let p = st.path(&format!("{stem}tsg.png"));
        st.path(&format!("{stem}tsg.svg"));
        plot::tsg(
            &p,
            &format!("{} — time-sequence graph, trial 0", scn.name),
            flows,
            &crate::tsg::ViewRequest {
                whole: true,
                ..Default::default()
            },
        )?;
    }
    Ok(())
}

/// The name of the pcap file of trial `k` of `variant`.
pub fn pcap_name(scn: &Scenario, k: u64, variant: &str) -> String {
    format!(
        "{}-trial{}-{}.pcap",
        staging::file_name(&scn.name),
        k,
        staging::file_name(variant)
    )
}

/// One pcap per variant of trial `k`, into `staged` or the working directory.
pub fn pcaps(
    scn: &Scenario,
    run: &RunResult,
    k: u64,
    mut staged: Option<&mut Staged>,
) -> Result<(), String> {
    for v in &run.variants {
        let Some(frames) = observed(v, k).and_then(|o| o.frames.as_ref()) else {
            continue; // interrupted before trial k
        };
        let name = pcap_name(scn, k, &v.name);
        let bytes = staging::pcap_bytes(frames);
        match staged.as_deref_mut() {
            Some(st) => st.write(&name, &bytes),
            None => std::fs::write(&name, &bytes).map(|()| eprintln!("wrote {name}")),
        }
        .map_err(|e| format!("writing {name}: {e}"))?;
    }
    Ok(())
}

/// A trace line as `--trace` writes it: tagged with its scenario and variant.
#[derive(Serialize)]
struct Tagged<'a> {
    scenario: &'a str,
    variant: &'a str,
    #[serde(flatten)]
    line: &'a TraceLine,
}

/// The `--trace` lines of trial `k` of every variant, as JSON text.
pub fn trace_lines(scn: &Scenario, run: &RunResult, k: u64, out: &mut Vec<String>) {
    for v in &run.variants {
        let Some(lines) = observed(v, k).and_then(|o| o.trace.as_ref()) else {
            continue;
        };
        out.extend(lines.iter().map(|line| {
            serde_json::to_string(&Tagged {
                scenario: &scn.name,
                variant: &v.name,
                line,
            })
            .expect("serialisable")
        }));
    }
}
