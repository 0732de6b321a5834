//! `gentle run SCENARIO`: every point of the scenario's sweep (or those `--point`
//! picks), and the scenario runs that `gentle reproduce` shares: flags checked before
//! any work, the `--out` staging area, one report per scenario, trace and pcap files.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::runner::{self, RunOptions};
use crate::scenario::{Scenario, Sweep};
use crate::{LabError, checks, interrupt, report, sinks, staging};

/// The flags `gentle run` and `gentle reproduce` share.
#[derive(Clone, Debug, Default)]
pub struct RunFlags {
    /// `--trials`: every scenario's trial count.
    pub trials: Option<u64>,
    /// `--seed`: every scenario's seed (a sweep's, from which its points derive theirs).
    pub seed: Option<u64>,
    /// `--out DIR`: CSV of every record, the JSON summary and the plots.
    pub out: Option<PathBuf>,
    /// `--json`: one JSON document on stdout instead of the tables.
    pub json: bool,
    /// `--pcap K`: trial K's packets as a pcap file per variant.
    pub pcap: Option<u64>,
    /// `--trace FILE`: an event trace of one trial of every variant.
    pub trace: Option<PathBuf>,
    /// `--trial K`: the trial `--trace` records.
    pub trial: Option<u64>,
    /// `--threads`: worker threads.
    pub threads: Option<usize>,
    /// `--force`: replace what an earlier run wrote.
    pub force: bool,
}

/// `gentle run`: the scenario file's points, one report each. Returns the exit status.
pub fn run(scenario: &Path, quick: bool, point: Option<&str>, flags: RunFlags) -> u8 {
    super::exit_status(run_file(scenario, quick, point, flags))
}

fn run_file(
    scenario: &Path,
    quick: bool,
    point: Option<&str>,
    mut flags: RunFlags,
) -> Result<bool, LabError> {
    let text = std::fs::read_to_string(scenario)
        .map_err(|e| LabError::Input(format!("cannot read {}: {e}", scenario.display())))?;
    let mut sweep =
        Sweep::parse(&scenario.display().to_string(), &text).map_err(LabError::Scenario)?;
    if let Some(spec) = point {
        sweep
            .select(spec)
            .map_err(|e| LabError::Input(format!("--point: {e}")))?;
    }
    if !sweep.axes.is_empty()
        && let Some(seed) = flags.seed.take()
    {
        // --seed is the sweep's: each point derives its own from it.
        sweep.reseed(seed);
    }
    let scns: Vec<Scenario> = sweep.points.into_iter().map(|p| p.scenario).collect();
    check_flags(&scns, &flags, quick)?;
    let mut staged = open_staged(&flags)?;
    interrupt::install();
    let mut docs = Vec::new();
    let mut says = Announce::new(scns.len());
    if !run_scenarios(&scns, &flags, quick, staged.as_mut(), &mut docs, &mut says)? {
        return Ok(false);
    }
    if let Some(doc) = docs.pop() {
        print_json(&doc);
    }
    finish(staged)
}

/// The flags checked against the scenarios, then the files they will write.
pub(super) fn check_flags(scns: &[Scenario], a: &RunFlags, quick: bool) -> Result<(), LabError> {
    checks::run_args(scns, &to_checked(a), quick)
        .and_then(|()| {
            checks::output_files(scns, a.trace.as_deref(), a.pcap, a.out.is_some(), a.force)
        })
        .map_err(LabError::Input)
}

/// What `checks` needs to know of the flags.
pub(super) fn to_checked(a: &RunFlags) -> checks::RunFlags {
    checks::RunFlags {
        trials: a.trials,
        seed: a.seed,
        pcap: a.pcap,
        trace: a.trace.is_some(),
        trial: a.trial,
        threads: a.threads,
        out: a.out.is_some(),
    }
}

/// One JSON document on stdout.
pub(super) fn print_json(doc: &serde_json::Value) {
    let _ = writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(doc).expect("serialisable")
    );
}

/// Commits `--out` and lists what was written.
pub(super) fn finish(staged: Option<staging::Staged>) -> Result<bool, LabError> {
    if let Some(st) = staged {
        let files = st
            .commit()
            .map_err(|e| LabError::Run(format!("writing results: {e}")))?;
        for f in files {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(true)
}

/// Runs the scenarios; their JSON documents go to `docs` (with `--json`), their
/// files to `staged`. Trace and pcap files without `--out` are written here.
/// `Ok(false)`: a transfer delivered corrupt bytes (the report says which).
pub(super) fn run_scenarios(
    scns: &[Scenario],
    a: &RunFlags,
    quick: bool,
    mut staged: Option<&mut staging::Staged>,
    docs: &mut Vec<serde_json::Value>,
    says: &mut Announce,
) -> Result<bool, LabError> {
    start_threads(scns, a, quick)?;
    let mut trace_lines: Vec<String> = Vec::new();
    let mut intact = true;
    for scn in scns {
        intact &= run_one(
            scn,
            a,
            quick,
            staged.as_deref_mut(),
            docs,
            says,
            &mut trace_lines,
        )?;
    }
    if let Some(path) = &a.trace {
        let mut body = trace_lines.join("\n");
        body.push('\n');
        std::fs::write(path, body)
            .map_err(|e| LabError::Run(format!("writing {}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(intact)
}

/// The worker pool of `--threads`: never more threads than the largest run has
/// blocks of trials.
fn start_threads(scns: &[Scenario], a: &RunFlags, quick: bool) -> Result<(), LabError> {
    let most = scns
        .iter()
        .map(|s| runner::useful_threads(trials_of(s, a, quick)))
        .max()
        .unwrap_or(1);
    if let Some(t) = a.threads.map(|t| t.min(most)) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .map_err(|e| LabError::Input(format!("cannot start {t} threads: {e}")))?;
    }
    Ok(())
}

fn trials_of(scn: &Scenario, a: &RunFlags, quick: bool) -> u64 {
    a.trials
        .unwrap_or(if quick { scn.quick_trials } else { scn.trials })
}

/// One scenario: run, report, and its files; its trace lines go to `trace_lines`.
fn run_one(
    scn: &Scenario,
    a: &RunFlags,
    quick: bool,
    mut staged: Option<&mut staging::Staged>,
    docs: &mut Vec<serde_json::Value>,
    says: &mut Announce,
    trace_lines: &mut Vec<String>,
) -> Result<bool, LabError> {
    let trials = trials_of(scn, a, quick);
    let seed = a.seed.unwrap_or(scn.seed);
    says.line(
        &scn.name,
        &format!(
            "{trials} trial{} × {} variant{}",
            if trials == 1 { "" } else { "s" },
            scn.variants.len(),
            if scn.variants.len() == 1 { "" } else { "s" }
        ),
    );
    let trace_trial = a.trace.is_some().then(|| a.trial.unwrap_or(0));
    let opts = RunOptions {
        trials,
        seed,
        keep_records: staged.is_some(),
        progress: true,
        // Observed as they run: --trace's trial, --pcap's, and trial 0 for a
        // time-sequence graph.
        observe: runner::Observe {
            trace: trace_trial,
            capture: a.pcap,
            tsg: scn.tsg.then_some(0),
        },
    };
    // Several experiments into one --out: every file carries its experiment's name.
    let stem = if says.total > 1 {
        format!("{}-", staging::file_name(&scn.name))
    } else {
        String::new()
    };
    if let Some(note) = checks::csv_size_note(scn, trials)
        && staged.is_some()
    {
        eprintln!("{note}");
    }
    // With --out, every record goes to the CSV as its wave of trials finishes.
    let mut csv = sinks::CsvSink::open(staged.as_deref_mut(), &stem).map_err(LabError::Run)?;
    let run = runner::run_streaming(scn, &opts, &mut |vi, recs| csv.write(scn, vi, recs));
    let csv_done = csv.close();
    if interrupt::requested() {
        return Err(interrupted(scn, &run, trials, staged.as_deref()));
    }
    csv_done.map_err(LabError::Run)?;
    let intact = run.variants.iter().all(|v| v.corrupt_bytes == 0);
    eprint!("{}", report::unfinished_note(&run));
    let flows = sinks::flows(scn, &run);
    sinks::report(scn, &run, (trials, seed), a.json, flows.as_deref(), docs);
    if let Some(st) = staged.as_deref_mut() {
        sinks::results(st, &stem, scn, &run, (trials, seed), flows.as_deref())
            .map_err(|e| LabError::Run(format!("writing results: {e}")))?;
    }
    if let Some(k) = a.pcap {
        sinks::pcaps(scn, &run, k, staged).map_err(LabError::Run)?;
    }
    if let Some(k) = trace_trial {
        sinks::trace_lines(scn, &run, k, trace_lines);
    }
    Ok(intact)
}

/// A line on stderr as each experiment starts, when stderr is not a terminal (a log
/// or a pipe, where no progress bar is drawn): `[3/25] NAME (DETAIL)`.
pub(super) struct Announce {
    next: usize,
    total: usize,
    on: bool,
}

impl Announce {
    pub(super) fn new(total: usize) -> Announce {
        use std::io::IsTerminal;
        Announce {
            next: 0,
            total,
            on: !std::io::stderr().is_terminal(),
        }
    }

    pub(super) fn line(&mut self, name: &str, detail: &str) {
        self.next += 1;
        if self.on {
            eprintln!("[{}/{}] {name} ({detail})", self.next, self.total);
        }
    }
}

/// Ctrl-C during `scn`: says what was abandoned; nothing is written.
fn interrupted(
    scn: &Scenario,
    run: &runner::RunResult,
    trials: u64,
    staged: Option<&staging::Staged>,
) -> LabError {
    let done: u64 = run.variants.iter().map(|v| v.trials_run).sum();
    let total = trials * scn.variants.len() as u64;
    let staged_mb = staged.map_or(0, |s| s.staged_bytes()) / 1_000_000;
    let what = if done < total {
        format!(
            "{} abandoned after {done} of {total} trials × variants",
            scn.name
        )
    } else {
        format!("stopped after {} finished", scn.name)
    };
    eprintln!(
        "interrupted: {what}; nothing was written{}",
        if staged_mb > 0 {
            format!(" ({staged_mb} MB of staged results removed)")
        } else {
            String::new()
        }
    );
    LabError::Interrupted
}

/// The staging area of `--out DIR`, if one was asked for; a directory that cannot
/// be used is bad input.
pub(super) fn open_staged(a: &RunFlags) -> Result<Option<staging::Staged>, LabError> {
    let Some(dir) = a.out.as_deref() else {
        return Ok(None);
    };
    staging::Staged::new(dir, a.force)
        .map(Some)
        .map_err(LabError::Input)
}
