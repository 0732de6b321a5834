//! A sweep's output directory:
//!
//! ```text
//! DIR/sweep.json                    the job: scenario, flags, fingerprint, points
//! DIR/records/point-000012.parquet  one per finished point: its records, its summary
//! DIR/points.parquet                one row per point and variant, once all are done
//! ```
//!
//! Every file is written under a temporary name of its own (`.NAME.XXXXXX.tmp`,
//! unique to the writer) and renamed into place, so a file that exists is whole: an interrupted or crashed sweep leaves finished points and
//! nothing half-written, and `--resume` runs only the points without a file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{JOB_KEY, Job, LabError, PointOutput, SUMMARY_KEY};
use crate::staging::write_whole;
use crate::table::{self, Column, Table};

/// The job's description in the directory.
const MANIFEST: &str = "sweep.json";
/// The summary table.
const POINTS: &str = "points.parquet";
/// The directory of point files.
const RECORDS: &str = "records";

/// A sweep's output directory, open for writing.
pub struct Store {
    dir: PathBuf,
    fingerprint: String,
    done: BTreeSet<usize>,
    rows: u64,
}

/// A point file's name.
pub fn point_file(i: usize) -> String {
    format!("point-{i:06}.parquet")
}

impl Store {
    /// Opens `dir` for `job`. A new sweep needs a new or empty directory (`force`
    /// removes an earlier sweep's files first); `resume` needs the same job's
    /// directory and keeps the points it holds.
    pub fn open(dir: &Path, job: &Job, resume: bool, force: bool) -> Result<Store, LabError> {
        let bad = |m: String| LabError::Input(format!("{}: {m}", dir.display()));
        let io = |e: std::io::Error| LabError::Run(format!("{}: {e}", dir.display()));
        let fingerprint = job.fingerprint();
        let manifest = dir.join(MANIFEST);
        let mut done = BTreeSet::new();
        let mut rows = 0;
        if resume {
            let text = std::fs::read_to_string(&manifest).map_err(|_| {
                bad("no sweep to resume here (no sweep.json); run without --resume".into())
            })?;
            let m: Value = serde_json::from_str(&text)
                .map_err(|e| bad(format!("sweep.json is damaged ({e})")))?;
            if m["fingerprint"] != json!(fingerprint) {
                return Err(bad(
                    "holds the results of another sweep (the scenario or --seed, --trials, \
                     --quick differ); run without --resume, with --force to replace them"
                        .into(),
                ));
            }
            let records = dir.join(RECORDS);
            for e in std::fs::read_dir(&records).map_err(io)? {
                let path = e.map_err(io)?.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.ends_with(".tmp") {
                    // A file whose writing was cut short.
                    std::fs::remove_file(&path).map_err(io)?;
                    continue;
                }
                let Some(i) = name
                    .strip_prefix("point-")
                    .and_then(|n| n.strip_suffix(".parquet"))
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    continue;
                };
                // A file that does not read back whole is run again.
                let ok = std::fs::read(&path)
                    .ok()
                    .and_then(|b| table::read_metadata(b, JOB_KEY).ok())
                    .is_some_and(|(fp, n)| {
                        rows += n as u64;
                        fp.as_deref() == Some(fingerprint.as_str())
                    });
                if ok {
                    done.insert(i);
                }
            }
            let _ = std::fs::remove_file(dir.join(POINTS));
        } else {
            if dir.exists() {
                if !dir.is_dir() {
                    return Err(bad(
                        "is not a directory: give a directory for the results".into()
                    ));
                }
                let used = std::fs::read_dir(dir).map_err(io)?.next().is_some();
                if used && !force {
                    return Err(bad(
                        "is not empty: give a new directory, --resume to go on with the sweep \
                         in it, or --force to replace an earlier sweep's results"
                            .into(),
                    ));
                }
                if used {
                    if !manifest.exists() {
                        return Err(bad(
                            "holds no earlier sweep (no sweep.json): --force replaces only \
                             a sweep's results; give a new directory"
                                .into(),
                        ));
                    }
                    for f in [MANIFEST, POINTS] {
                        let _ = std::fs::remove_file(dir.join(f));
                    }
                    let _ = std::fs::remove_dir_all(dir.join(RECORDS));
                }
            }
            std::fs::create_dir_all(dir.join(RECORDS)).map_err(io)?;
            let m = json!({
                "gentle_sweep": 1,
                "scenario": job.sweep.name,
                "file": job.spec.file,
                "fingerprint": fingerprint,
                "seed": job.spec.seed,
                "trials": job.spec.trials,
                "quick": job.spec.quick,
                "axes": job.sweep.axes.iter().map(|a| &a.name).collect::<Vec<_>>(),
                "points": job.sweep.points.len(),
            });
            write_whole(
                &manifest,
                serde_json::to_string_pretty(&m)
                    .expect("serialisable")
                    .as_bytes(),
            )
            .map_err(io)?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            fingerprint,
            done,
            rows,
        })
    }

    /// The chosen points without a file yet, in grid order.
    pub fn pending(&self, job: &Job) -> Vec<usize> {
        job.selected
            .iter()
            .copied()
            .filter(|i| !self.done.contains(i))
            .collect()
    }

    /// Points written so far (this run and earlier ones).
    pub fn done(&self) -> usize {
        self.done.len()
    }

    /// Record rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a finished point's file, whole, after checking that it is a point
    /// file of this job (a worker's result may come from anywhere).
    pub fn commit(&mut self, out: &PointOutput) -> Result<(), LabError> {
        let (fp, rows) = table::read_metadata(out.parquet.clone(), JOB_KEY)
            .map_err(|e| LabError::Run(format!("point {}: {e}", out.index)))?;
        if fp.as_deref() != Some(self.fingerprint.as_str()) {
            return Err(LabError::Run(format!(
                "point {}: the result of another sweep (job {}, not {})",
                out.index,
                fp.as_deref().unwrap_or("unknown"),
                self.fingerprint
            )));
        }
        let path = self.dir.join(RECORDS).join(point_file(out.index));
        write_whole(&path, &out.parquet)
            .map_err(|e| LabError::Run(format!("writing {}: {e}", path.display())))?;
        self.rows += rows as u64;
        self.done.insert(out.index);
        Ok(())
    }

    /// Once every chosen point has its file: the summary table from their
    /// summaries, written to `points.parquet`; the summaries, in grid order.
    pub fn finish(&self, job: &Job) -> Result<Vec<Value>, LabError> {
        let mut summaries = Vec::new();
        for &i in &job.selected {
            let path = self.dir.join(RECORDS).join(point_file(i));
            let bytes = std::fs::read(&path)
                .map_err(|e| LabError::Run(format!("reading {}: {e}", path.display())))?;
            let (s, _) = table::read_metadata(bytes, SUMMARY_KEY).map_err(LabError::Run)?;
            let s: Value = s
                .and_then(|s| serde_json::from_str(&s).ok())
                .ok_or_else(|| LabError::Run(format!("{}: no summary", path.display())))?;
            summaries.push(s);
        }
        let bytes = table::to_bytes(points_table(job, &summaries), &[]).map_err(LabError::Run)?;
        let path = self.dir.join(POINTS);
        write_whole(&path, &bytes)
            .map_err(|e| LabError::Run(format!("writing {}: {e}", path.display())))?;
        Ok(summaries)
    }
}

/// One row per point and variant: the point's index, coordinates, seed and trials,
/// the variant's name, and every number of the variant's summary under its dotted
/// path (`latency_ms.p50`, `counters.TCPTimeouts`, ...).
pub fn points_table(job: &Job, summaries: &[Value]) -> Table {
    // (point fields, variant name, flattened fields) per row.
    let mut rows: Vec<(&Value, Vec<(String, Value)>)> = Vec::new();
    for s in summaries {
        for v in s["variants"].as_array().into_iter().flatten() {
            let mut flat = Vec::new();
            flatten("", v, &mut flat);
            rows.push((s, flat));
        }
    }
    // Columns in the order they first appear; their type from every value.
    let mut names: Vec<String> = Vec::new();
    for (_, flat) in &rows {
        for (k, _) in flat {
            if k != "name" && !names.contains(k) {
                names.push(k.clone());
            }
        }
    }
    let mut cols = vec![Column::i64("point")];
    for a in &job.sweep.axes {
        cols.push(Column::str(&a.name));
    }
    cols.extend([
        Column::i64("seed"),
        Column::i64("trials"),
        Column::str("variant"),
    ]);
    let kinds: Vec<Column> = names
        .iter()
        .map(|n| {
            let vals = rows
                .iter()
                .filter_map(|(_, f)| f.iter().find(|(k, _)| k == n).map(|(_, v)| v));
            let mut kind = None;
            for v in vals {
                let k = match v {
                    Value::Bool(_) => 0,
                    Value::Number(x) if x.is_i64() || x.is_u64() => 1,
                    Value::Number(_) => 2,
                    Value::String(_) => 3,
                    _ => continue,
                };
                kind = Some(match (kind, k) {
                    (None, k) => k,
                    (Some(1), 2) | (Some(2), 1) => 2,
                    (Some(a), b) if a == b => a,
                    _ => 3, // mixed kinds: as text
                });
            }
            match kind {
                Some(0) => Column::opt_bool(n),
                Some(1) => Column::opt_i64(n),
                Some(2) | None => Column::opt_f64(n),
                _ => Column::opt_str(n),
            }
        })
        .collect();
    cols.extend(kinds);
    let mut t = Table::new(cols);
    for (s, flat) in &rows {
        let mut c = t.cols.iter_mut();
        c.next().expect("point").push_i64(s["point_index"].as_i64());
        for a in &job.sweep.axes {
            c.next()
                .expect("axis")
                .push_str(s["point"][&a.name].as_str());
        }
        c.next().expect("seed").push_i64(s["seed"].as_i64());
        c.next().expect("trials").push_i64(s["trials"].as_i64());
        let name = flat.iter().find(|(k, _)| k == "name").map(|(_, v)| v);
        c.next()
            .expect("variant")
            .push_str(name.and_then(Value::as_str));
        for (col, n) in c.zip(&names) {
            let v = flat.iter().find(|(k, _)| k == n).map(|(_, v)| v);
            match &col.values {
                table::Values::Bool(_) => col.push_bool(v.and_then(Value::as_bool)),
                table::Values::I64(_) => col.push_i64(v.and_then(Value::as_i64)),
                table::Values::F64(_) => col.push_f64(v.and_then(Value::as_f64)),
                table::Values::Str(_) => {
                    let text = v.map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    col.push_str(text.as_deref());
                }
            }
        }
    }
    t
}

/// Every scalar under `v`, with its dotted path; arrays are left out.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        Value::Array(_) => {}
        x => out.push((prefix.to_string(), x.clone())),
    }
}
