//! The library calls behind gentle's Python package: a scenario run with its
//! records as a Parquet table, the built-in experiments, the analysis of a capture.
//! Each is what the command of the same name does, returned instead of printed, with
//! errors as [`LabError`]s (their exit status is the command's).

use std::path::Path;

use serde_json::Value;

use crate::LabError;
use crate::runner::{self, RunOptions};
use crate::staging::Staged;
use crate::sweeping::records::RecordsFile;
use crate::sweeping::{Job, JobSpec};
use crate::{catalogue, interrupt, programs, report, sinks};

/// A run's results: `gentle run --json`'s document, the records as a Parquet
/// file's bytes (when asked for), and the report as `gentle run` prints it.
pub struct RunOutput {
    pub summary: Value,
    pub records: Option<Vec<u8>>,
    pub text: String,
}

/// Runs a scenario (or one point of its sweep: `spec.point` must choose exactly
/// one) on the current thread pool, keeping its records if `records`; with `out`,
/// writes `gentle run --out`'s files there (`records.csv`, `summary.json`,
/// `cdf.png`, `cdf.svg`).
pub fn run(
    spec: JobSpec,
    records: bool,
    out: Option<(&Path, bool)>,
) -> Result<RunOutput, LabError> {
    let job = Job::new(spec)?;
    let index = match job.selected.as_slice() {
        [i] => *i,
        many => {
            return Err(LabError::Input(format!(
                "{} has a [sweep] of {} points{}: choose one with point=\"AXIS=VALUE,...\", \
                 or run them all with gentle.sweep()",
                job.spec.file,
                many.len(),
                if job.spec.point.is_some() {
                    " matching that point"
                } else {
                    ""
                },
            )));
        }
    };
    let mut staged = match out {
        Some((dir, force)) => Some(Staged::new(dir, force).map_err(LabError::Input)?),
        None => None,
    };
    let scn = job.scenario(index);
    let trials = job.trials(index);
    let opts = RunOptions {
        trials,
        seed: scn.seed,
        keep_records: records || staged.is_some(),
        progress: false,
        observe: runner::Observe {
            tsg: scn.tsg.then_some(0),
            ..Default::default()
        },
    };
    let point = (!job.sweep.axes.is_empty()).then_some(index);
    let mut file = match records {
        true => Some(RecordsFile::new(scn, point).map_err(LabError::Run)?),
        false => None,
    };
    let mut csv = sinks::CsvSink::open(staged.as_mut(), "").map_err(LabError::Run)?;
    let mut failed = None;
    let run = runner::run_streaming(scn, &opts, &mut |vi, recs| {
        csv.write(scn, vi, recs);
        if failed.is_none()
            && let Some(f) = file.as_mut()
            && let Err(e) = f.push(scn, &scn.variants[vi].name, recs)
        {
            failed = Some(e);
        }
    });
    let csv_done = csv.close();
    if interrupt::requested() {
        return Err(LabError::Interrupted);
    }
    if let Some(e) = failed {
        return Err(LabError::Run(e));
    }
    csv_done.map_err(LabError::Run)?;
    let mut summary = report::json(scn, &run, trials, scn.seed);
    summary["experiment"] = Value::String(scn.name.clone());
    let records = match file {
        Some(f) => Some(f.finish(&[]).map_err(LabError::Run)?),
        None => None,
    };
    if let Some(st) = staged.as_mut() {
        let flows = sinks::flows(scn, &run);
        sinks::results(st, "", scn, &run, (trials, scn.seed), flows.as_deref())
            .map_err(|e| LabError::Run(format!("writing results: {e}")))?;
    }
    if let Some(st) = staged {
        st.commit()
            .map_err(|e| LabError::Run(format!("writing results: {e}")))?;
    }
    if let Some(v) = run.variants.iter().find(|v| v.corrupt_bytes > 0) {
        return Err(LabError::Run(format!(
            "{}: variant {} delivered {} corrupted bytes",
            scn.name, v.name, v.corrupt_bytes
        )));
    }
    Ok(RunOutput {
        summary,
        records,
        text: report::table(scn, &run, trials),
    })
}

/// A built-in experiment: its name, its one-line summary, and whether it is a
/// scenario (`run` takes its file) or a program printing a paper's table.
pub struct Experiment {
    pub name: &'static str,
    pub summary: &'static str,
    pub kind: &'static str,
}

/// Every built-in experiment, in `gentle reproduce --list`'s order.
pub fn experiments() -> Vec<Experiment> {
    catalogue::CATALOGUE
        .iter()
        .map(|e| Experiment {
            name: e.name,
            summary: e.summary,
            kind: "scenario",
        })
        .chain(programs::PROGRAMS.iter().map(|p| Experiment {
            name: p.name,
            summary: p.summary,
            kind: "program",
        }))
        .collect()
}

/// The text of a built-in scenario experiment, and the file errors cite.
pub fn builtin_scenario(name: &str) -> Option<(String, &'static str)> {
    catalogue::find(name).map(|e| (e.path(), e.toml))
}

/// Runs built-in experiment `name` as `gentle reproduce NAME` does: its report
/// and its JSON document; with `out`, its files there.
pub fn reproduce(
    name: &str,
    quick: bool,
    out: Option<(&Path, bool)>,
) -> Result<(String, Value), LabError> {
    if let Some(e) = catalogue::find(name) {
        let r = run(
            JobSpec {
                file: e.path(),
                text: e.toml.to_string(),
                quick,
                ..Default::default()
            },
            false,
            out,
        )?;
        return Ok((r.text, r.summary));
    }
    let Some(p) = programs::find(name) else {
        return Err(LabError::Input(format!(
            "no experiment named `{name}` (see gentle.experiments())"
        )));
    };
    let mut staged = match out {
        Some((dir, force)) => Some(Staged::new(dir, force).map_err(LabError::Input)?),
        None => None,
    };
    let (text, json) = (p.run)(programs::ProgramArgs {
        quick,
        out: staged.as_mut(),
    })
    .map_err(|e| LabError::Run(format!("{name}: {e}")))?;
    if interrupt::requested() {
        return Err(LabError::Interrupted);
    }
    if let Some(mut st) = staged {
        let stem = crate::staging::file_name(p.name);
        let j = serde_json::to_string_pretty(&json).expect("serialisable");
        st.write(&format!("{stem}.txt"), text.as_bytes())
            .and_then(|()| st.write(&format!("{stem}.json"), j.as_bytes()))
            .and_then(|()| st.commit().map(|_| ()))
            .map_err(|e| LabError::Run(format!("writing results: {e}")))?;
    }
    Ok((text, json))
}

/// Analyses a capture as `gentle analyze --json` does.
pub fn analyze(path: &Path, opts: gentle_analyze::Options) -> Result<Value, LabError> {
    let a = crate::analyze::analyze_file(path, opts.clone()).map_err(LabError::from)?;
    if interrupt::requested() {
        return Err(LabError::Interrupted);
    }
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(crate::analyze::json_doc(&name, &opts, &a))
}
