//! The local backend: a sweep's points on this machine's cores (rayon), several
//! points at once and each point's trials in parallel, every finished point written
//! at once, a progress bar over points on a terminal, Ctrl-C stopping after the
//! points in progress.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde_json::Value;

use super::store::Store;
use super::{Job, LabError};

/// What a finished sweep reports.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The chosen points' summaries, in grid order.
    pub summaries: Vec<Value>,
    /// Points run now, and points found already written (`--resume`).
    pub ran: usize,
    pub kept: usize,
    /// Record rows in the point files.
    pub rows: u64,
    pub seconds: f64,
}

/// A progress bar over `n` things (`unit`: points, captures), on stderr when it is
/// a terminal.
pub fn bar(name: &str, n: u64, unit: &str, show: bool) -> ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template(&format!(
            "{{prefix:.bold}} [{{bar:20}}] {{pos}}/{{len}} {unit} eta {{eta}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    b.set_prefix(name.chars().take(16).collect::<String>());
    b
}

/// Runs the points `store` does not hold yet on `threads` threads (all cores
/// without), writing each as it finishes, then the summary table.
pub fn run(
    job: &Job,
    store: &mut Store,
    threads: Option<usize>,
    progress: bool,
) -> Result<Outcome, LabError> {
    let start = std::time::Instant::now();
    let pending = store.pending(job);
    let kept = store.done();
    let bar = bar(&job.sweep.name, pending.len() as u64, "points", progress);
    let first_error: Mutex<Option<LabError>> = Mutex::new(None);
    {
        let shared = Mutex::new(&mut *store);
        let work = || {
            pending.par_iter().for_each(|&i| {
                let stop = || {
                    crate::interrupt::requested()
                        || first_error.lock().expect("not poisoned").is_some()
                };
                if stop() {
                    return;
                }
                let res = job
                    .run_point(i)
                    .and_then(|out| shared.lock().expect("not poisoned").commit(&out));
                match res {
                    Ok(()) => bar.inc(1),
                    Err(LabError::Interrupted) => {}
                    Err(e) => {
                        first_error.lock().expect("not poisoned").get_or_insert(e);
                    }
                }
            });
        };
        // Never more threads than points to run.
        match threads.map(|t| t.min(pending.len().max(1))) {
            None => work(),
            Some(t) => rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| LabError::Input(format!("cannot start {t} threads: {e}")))?
                .install(work),
        }
    }
    bar.finish_and_clear();
    if let Some(e) = first_error.into_inner().expect("not poisoned") {
        return Err(e);
    }
    if crate::interrupt::requested() {
        return Err(LabError::Interrupted);
    }
    let summaries = store.finish(job)?;
    Ok(Outcome {
        summaries,
        ran: pending.len(),
        kept,
        rows: store.rows(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Rows of the summary shown on the terminal, at most.
const SHOWN: usize = 40;

/// The report of a finished sweep: what ran, and each point's latency quantiles
/// per variant.
pub fn report(job: &Job, out: &Outcome, dir: &std::path::Path) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {} point{} ({} run now, {} already written), {} records, {:.1} s",
        job.sweep.name,
        job.selected.len(),
        if job.selected.len() == 1 { "" } else { "s" },
        out.ran,
        out.kept,
        out.rows,
        out.seconds
    );
    let metric = job.selected.first().map_or("response", |&i| {
        crate::report::metric_name(job.scenario(i).metric)
    });
    let _ = writeln!(s, "{metric}, ms");
    let mut header: Vec<String> = job.sweep.axes.iter().map(|a| a.name.clone()).collect();
    header.extend(
        ["variant", "samples", "p50", "p90", "p99", "mean"]
            .iter()
            .map(|x| x.to_string()),
    );
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in &out.summaries {
        for v in p["variants"].as_array().into_iter().flatten() {
            let mut r: Vec<String> = job
                .sweep
                .axes
                .iter()
                .map(|a| p["point"][&a.name].as_str().unwrap_or("").to_string())
                .collect();
            r.push(v["name"].as_str().unwrap_or("").to_string());
            r.push(v["samples"].to_string());
            for q in ["p50", "p90", "p99", "mean"] {
                r.push(
                    v["latency_ms"][q]
                        .as_f64()
                        .map_or("-".into(), |x| format!("{x:.1}")),
                );
            }
            rows.push(r);
        }
    }
    let total = rows.len();
    rows.truncate(SHOWN);
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let naxes = job.sweep.axes.len();
    let line = |r: &[String]| {
        r.iter()
            .enumerate()
            .map(|(c, x)| {
                if c <= naxes {
                    format!("{x:<w$}", w = widths[c])
                } else {
                    format!("{x:>w$}", w = widths[c])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(s, "{}", line(&header));
    for r in &rows {
        let _ = writeln!(s, "{}", line(r));
    }
    if total > SHOWN {
        let _ = writeln!(s, "... {} more rows in points.parquet", total - SHOWN);
    }
    let _ = write!(
        s,
        "results: {d}/points.parquet (one row per point and variant), {d}/records/ (one \
         Parquet file per point, one row per exchange)",
        d = dir.display()
    );
    s
}
