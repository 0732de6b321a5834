//! The output directories `gentle view` reads: what `gentle run`, `reproduce` and
//! `sweep` write under `--out` (each experiment's summary with its CDFs and the
//! confidence intervals of the differences, its text tables and figures, a sweep's
//! points), and what `gentle emulate` writes (a capture at each end of every trial:
//! the same trial of several variants, kernel and engine, set side by side).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

/// Ranked values kept per variant for a CDF.
const CDF_POINTS: usize = 400;
/// Records read per experiment (the CDF of a larger run is of its first records).
const MAX_RECORDS: usize = 5_000_000;

/// One experiment's results as the page shows them.
#[derive(Debug, Default, Serialize)]
pub struct Results {
    pub title: String,
    pub source: String,
    /// summary.json as written.
    pub summary: Option<Value>,
    /// The CDF of each variant's metric: (variant, values at evenly spaced ranks).
    pub cdf: Vec<(String, Vec<f64>)>,
    /// Text tables (NAME.txt) and figures (SVG, inline).
    pub texts: Vec<(String, String)>,
    pub figures: Vec<(String, String)>,
    /// A sweep's points.parquet, one JSON object per row.
    pub points: Vec<Value>,
    /// What the experiment's file names begin with (`NAME-`, or nothing), and its
    /// files.
    #[serde(skip)]
    pub prefix: String,
    #[serde(skip)]
    pub files: Vec<PathBuf>,
    /// Records read, and whether the CDF is of the first MAX_RECORDS only.
    pub records: usize,
    pub records_cut: bool,
}

/// What an output directory holds, as `gentle view` classifies it.
#[derive(Debug, Default)]
pub struct Found {
    pub results: Vec<Results>,
    /// Captures of `gentle emulate`, grouped by trial (server end preferred).
    pub emulate: Vec<(String, Vec<PathBuf>)>,
    pub traces: Vec<PathBuf>,
}

/// Whether `dir` looks like an output of gentle (checked before any work).
pub fn recognised(dir: &Path) -> Result<(), String> {
    let f = scan(dir).map_err(|e| format!("error: {}: {e}", dir.display()))?;
    if f.results.is_empty() && f.emulate.is_empty() && f.traces.is_empty() {
        return Err(format!(
            "error: {}: not an output directory of gentle run, reproduce, sweep or emulate \
             (no summary.json, points.parquet, NAME.txt, trace or trial capture in it or its \
             subdirectories)",
            dir.display()
        ));
    }
    Ok(())
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Finds the directory's results (and those of its subdirectories, one level).
pub fn scan(dir: &Path) -> std::io::Result<Found> {
    let mut found = Found::default();
    scan_one(dir, &mut found)?;
    for sub in sorted_entries(dir)?.into_iter().filter(|p| p.is_dir()) {
        scan_one(&sub, &mut found)?;
    }
    Ok(found)
}

fn ext(p: &Path) -> String {
    p.extension()
        .map_or(String::new(), |e| e.to_string_lossy().to_lowercase())
}

fn scan_one(dir: &Path, found: &mut Found) -> std::io::Result<()> {
    let files: Vec<PathBuf> = sorted_entries(dir)?
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    let name = |p: &PathBuf| {
        p.file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into())
    };
    // One experiment per summary (`summary.json`, or `NAME-summary.json` where
    // `reproduce` wrote several), per text table (`NAME.txt`), and per sweep.
    let mut results: Vec<Results> = Vec::new();
    for p in &files {
        let n = name(p);
        let prefix = if let Some(x) = n.strip_suffix("summary.json") {
            x.to_string()
        } else if n == "points.parquet" {
            String::new()
        } else if ext(p) == "txt" {
            n.trim_end_matches(".txt").to_string() + "-"
        } else {
            continue;
        };
        let title = prefix.trim_end_matches('-');
        let title = if title.is_empty() {
            dir.display().to_string()
        } else {
            title.to_string()
        };
        let r = match results.iter_mut().find(|r| r.prefix == prefix) {
            Some(r) => r,
            None => {
                results.push(Results {
                    title,
                    source: dir.display().to_string(),
                    prefix: prefix.clone(),
                    ..Results::default()
                });
                results.last_mut().expect("pushed")
            }
        };
        r.files.push(p.clone());
    }
    // Each figure (and records file) goes with the experiment whose prefix it has.
    for p in files.iter().filter(|p| ext(p) == "svg" || ext(p) == "csv") {
        let n = name(p);
        if let Some(r) = results
            .iter_mut()
            .filter(|r| {
                n.starts_with(&r.prefix)
                    || (ext(p) == "svg" && n.starts_with(r.prefix.trim_end_matches('-')))
            })
            .max_by_key(|r| r.prefix.len())
        {
            r.files.push(p.clone());
        }
    }
    found.results.extend(results);
    let mut trials: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for p in files.iter().filter(|p| ext(p) == "pcap") {
        let n = name(p);
        let Some(stem) = n.strip_suffix("-server.pcap") else {
            continue;
        };
        let Some(at) = stem.rfind("-trial") else {
            continue;
        };
        let trial = stem[at + 1..].to_string();
        match trials.iter_mut().find(|t| t.0 == trial) {
            Some(t) => t.1.push(p.clone()),
            None => trials.push((trial, vec![p.clone()])),
        }
    }
    found.emulate.extend(trials);
    found.traces.extend(
        files
            .iter()
            .filter(|p| ext(p) == "jsonl" && super::is_trace(p))
            .cloned(),
    );
    Ok(())
}

/// Reads an experiment's files; errors name the file.
pub fn read(r: &mut Results) -> Result<(), String> {
    let err = |p: &Path, e: &dyn std::fmt::Display| format!("error: {}: {e}", p.display());
    for p in r.files.clone() {
        let n = p
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into());
        let text = || std::fs::read_to_string(&p).map_err(|e| err(&p, &e));
        if n.ends_with("summary.json") {
            let v: Value = serde_json::from_str(&text()?).map_err(|e| err(&p, &e))?;
            if let Some(s) = v["scenario"].as_str() {
                r.title = s.to_string();
            }
            r.summary = Some(v);
        } else if n.ends_with("records.csv") {
            cdf(r, &p).map_err(|e| err(&p, &e))?;
        } else if n == "points.parquet" {
            r.points = crate::table::read_rows(&p).map_err(|e| err(&p, &e))?;
        } else if ext(&p) == "txt" {
            r.texts.push((n, text()?));
        } else if ext(&p) == "svg" {
            r.figures.push((n, text()?));
        }
    }
    Ok(())
}

/// Each variant's metric (`metric_ms` of the complete exchanges) at evenly spaced
/// ranks.
fn cdf(r: &mut Results, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut rd = csv::Reader::from_path(path)?;
    let head = rd.headers()?.clone();
    let col = |n: &str| head.iter().position(|h| h == n);
    let (Some(v), Some(m)) = (col("variant"), col("metric_ms")) else {
        return Ok(());
    };
    let complete = col("complete");
    let mut by: Vec<(String, Vec<f64>)> = Vec::new();
    for row in rd.records() {
        let row = row?;
        if r.records == MAX_RECORDS {
            r.records_cut = true;
            break;
        }
        r.records += 1;
        if complete.is_some_and(|c| &row[c] != "true") {
            continue;
        }
        let Ok(x) = row[m].parse::<f64>() else {
            continue;
        };
        match by.iter_mut().find(|b| b.0 == row[v]) {
            Some(b) => b.1.push(x),
            None => by.push((row[v].to_string(), vec![x])),
        }
    }
    for (name, mut xs) in by {
        xs.sort_by(f64::total_cmp);
        let n = xs.len();
        let k = CDF_POINTS.min(n);
        let picked = (0..k)
            .map(|i| xs[((i as f64 + 0.5) / k as f64 * n as f64) as usize % n.max(1)])
            .collect();
        r.cdf.push((name, picked));
    }
    Ok(())
}
