//! Checks of command-line flags against the scenarios they apply to, made before
//! anything runs: a bad flag is bad input (exit status 2), never a crash or a
//! report of nothing.

use std::path::Path;

use gentle_sim::workload::WorkloadKind;

use crate::scenario::Scenario;

/// The largest trial count, for the file's `trials` and for `--trials` alike.
pub const MAX_TRIALS: u64 = 1_000_000_000;

/// The most worker threads a run may ask for (`--threads`, Python's `threads=`): far
/// above any machine's cores, far below what exhausts the process's stacks.
pub const MAX_THREADS: usize = 4096;

/// Checks a `--threads` value (`flag` names it in the message): 1 to [`MAX_THREADS`].
pub fn threads(flag: &str, t: Option<usize>) -> Result<(), String> {
    match t {
        Some(0) => Err(format!("{flag}0: at least one worker thread is needed")),
        Some(t) if t > MAX_THREADS => Err(format!(
            "{flag}{t}: expected 1 to {MAX_THREADS} (this machine has {} cores)",
            std::thread::available_parallelism().map_or(1, |n| n.get())
        )),
        _ => Ok(()),
    }
}

/// Checks a file that `flag` will write, before anything runs: its directory
/// exists, it is not a directory, and it is new unless `force` allows replacing it.
pub fn output_file(flag: &str, path: &Path, force: bool) -> Result<(), String> {
    let shown = path.display();
    if path.as_os_str().is_empty() {
        return Err(format!("{flag}: expected a file name"));
    }
    if path.is_dir() {
        return Err(format!(
            "{flag} {shown}: is a directory; expected a file name"
        ));
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = parent
        && !dir.is_dir()
    {
        return Err(format!(
            "{flag} {shown}: the directory {} does not exist",
            dir.display()
        ));
    }
    if path.exists() && !force {
        return Err(format!(
            "{flag} {shown}: the file exists; add --force to replace it"
        ));
    }
    Ok(())
}

/// Checks the files `--trace FILE` and (without `--out`) `--pcap K` will write into
/// the working directory, before anything runs.
pub fn output_files(
    scns: &[Scenario],
    trace: Option<&Path>,
    pcap: Option<u64>,
    out: bool,
    force: bool,
) -> Result<(), String> {
    if let Some(t) = trace {
        output_file("--trace", t, force)?;
    }
    if let (Some(k), false) = (pcap, out) {
        for scn in scns {
            for v in &scn.variants {
                output_file(
                    "--pcap",
                    Path::new(&crate::sinks::pcap_name(scn, k, &v.name)),
                    force,
                )?;
            }
        }
    }
    Ok(())
}

/// Bytes a CSV row takes, about.
const CSV_ROW_BYTES: u64 = 110;
/// Above this much CSV, say so before running.
const CSV_NOTE_BYTES: u64 = 1_000_000_000;

/// The flags of `run` and `reproduce` that the checks look at.
#[derive(Clone, Debug, Default)]
pub struct RunFlags {
    pub trials: Option<u64>,
    pub seed: Option<u64>,
    pub pcap: Option<u64>,
    pub trace: bool,
    /// `--trial`, if given.
    pub trial: Option<u64>,
    pub threads: Option<usize>,
    pub out: bool,
}

/// Checks the flags against every scenario to be run.
pub fn run_args(scns: &[Scenario], f: &RunFlags, quick: bool) -> Result<(), String> {
    threads("--threads ", f.threads)?;
    if let Some(t) = f.trials
        && !(1..=MAX_TRIALS).contains(&t)
    {
        return Err(format!("--trials {t}: expected 1 to {MAX_TRIALS}"));
    }
    if f.trial.is_some() && !f.trace {
        return Err("--trial chooses the trial that --trace records; give --trace FILE too".into());
    }
    for scn in scns {
        if scn.name.trim().is_empty() {
            return Err("the scenario's `name` is empty; output files are named after it".into());
        }
        if scn.variants.iter().any(|v| v.name.trim().is_empty()) {
            return Err(format!("`{}`: a variant's `name` is empty", scn.name));
        }
        if f.pcap.is_some() {
            // One pcap per variant, named after it: the names must stay apart.
            for (i, a) in scn.variants.iter().enumerate() {
                for b in &scn.variants[..i] {
                    if crate::staging::file_name(&a.name) == crate::staging::file_name(&b.name) {
                        return Err(format!(
                            "--pcap: variants `{}` and `{}` of `{}` would both write `{}`; rename one",
                            b.name,
                            a.name,
                            scn.name,
                            crate::staging::file_name(&a.name)
                        ));
                    }
                }
            }
        }
        let trials = f
            .trials
            .unwrap_or(if quick { scn.quick_trials } else { scn.trials });
        let range = |flag: &str, k: u64| -> Result<(), String> {
            if k >= trials {
                Err(format!(
                    "{flag} {k}: `{}` runs {trials} trial{} (numbered 0 to {})",
                    scn.name,
                    if trials == 1 { "" } else { "s" },
                    trials - 1
                ))
            } else {
                Ok(())
            }
        };
        if let Some(k) = f.pcap {
            range("--pcap", k)?;
        }
        if f.trace {
            range("--trial", f.trial.unwrap_or(0))?;
        }
    }
    Ok(())
}

/// Program experiments build their own scenarios: the flags that choose trials,
/// seeds and traces do not reach them, so they are refused rather than ignored.
pub fn program_args(progs: &[&str], f: &RunFlags) -> Result<(), String> {
    if progs.is_empty() {
        return Ok(());
    }
    let given: Vec<&str> = [
        ("--trials", f.trials.is_some()),
        ("--seed", f.seed.is_some()),
        ("--pcap", f.pcap.is_some()),
        ("--trace", f.trace),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| n)
    .collect();
    if given.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} cannot be applied to {}: program experiments run many scenarios with their own trial counts and seeds (--quick chooses the smaller counts); name the scenario experiments to use {}",
        given.join(", "),
        progs.join(", "),
        if given.len() == 1 { "it" } else { "them" }
    ))
}

/// Exchanges (CSV rows) one trial of `scn` records per variant.
fn rows_per_trial(scn: &Scenario) -> u64 {
    scn.workloads
        .iter()
        .filter(|w| w.measure)
        .map(|w| match &w.kind {
            WorkloadKind::Exchanges { exchanges, .. } => *exchanges as u64,
            WorkloadKind::Page { objects, .. } => *objects as u64,
            _ => 1,
        })
        .sum()
}

/// A note for stderr when `--out` will hold a CSV of a gigabyte or more.
pub fn csv_size_note(scn: &Scenario, trials: u64) -> Option<String> {
    let rows = trials
        .saturating_mul(scn.variants.len() as u64)
        .saturating_mul(rows_per_trial(scn));
    let bytes = rows.saturating_mul(CSV_ROW_BYTES);
    (bytes >= CSV_NOTE_BYTES).then(|| {
        format!(
            "note: `{}` will write about {:.1} GB of records.csv ({rows} rows: {trials} trials × {} variants × {} exchanges); Ctrl-C stops it and removes the partial files",
            scn.name,
            bytes as f64 / 1e9,
            scn.variants.len(),
            rows_per_trial(scn)
        )
    })
}
