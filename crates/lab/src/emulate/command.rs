//! The `gentle emulate` command: reads the scenario, checks it for real mode, runs
//! it against the kernel with a progress line, prints the report (or JSON) and
//! writes `--out`. Exit status 2 for a scenario or flag real mode refuses (nothing
//! created), 1 when a run turns out invalid (TUN drops), 130 when interrupted.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::{EmulateOptions, emulate, prepare, ran_scenario, results};
use crate::scenario::{Scenario, Sweep};
use crate::staging::Staged;
use crate::{LabError, interrupt, units};

/// `gentle emulate`'s arguments.
pub struct Args {
    pub scenario: PathBuf,
    /// Fail (exit 1) when the forwarder's one-way delay error is a noticeable
    /// share of the path's delay, instead of warning.
    pub strict: bool,
    pub quick: bool,
    pub point: Option<String>,
    pub trials: Option<u64>,
    pub seed: Option<u64>,
    pub variants: Vec<String>,
    pub kernel: Option<String>,
    pub time_limit: Option<String>,
    pub out: Option<PathBuf>,
    pub json: bool,
    pub force: bool,
    /// `gentle serve` / `gentle connect`: the engine's end.
    pub engine: Option<super::EngineEnd>,
    pub peer: Option<String>,
    pub server_cmd: Option<String>,
}

fn load(a: &Args) -> Result<Scenario, String> {
    let path = a.scenario.display().to_string();
    let text = match std::fs::read_to_string(&a.scenario) {
        Ok(t) => t,
        Err(e) => match crate::catalogue::find(&path) {
            Some(x) => x.toml.to_string(),
            None => return Err(format!("cannot read {path}: {e}")),
        },
    };
    let mut sweep = Sweep::parse(&path, &text).map_err(|e| e.to_string())?;
    if let Some(spec) = &a.point {
        sweep.select(spec).map_err(|e| format!("--point: {e}"))?;
    }
    if sweep.points.len() != 1 {
        return Err(format!(
            "{path} is a sweep of {} points: choose one with --point AXIS=VALUE",
            sweep.points.len()
        ));
    }
    Ok(sweep.points.pop().expect("one point").scenario)
}

/// Runs the command; the exit status.
pub fn command(a: Args) -> u8 {
    crate::commands::exit_status(run(&a))
}

fn run(a: &Args) -> Result<bool, LabError> {
    let scn = load(a).map_err(LabError::Input)?;
    let opts = options(a, &scn)?;
    let prepared = prepare(&scn, &opts).map_err(LabError::Input)?;
    let mut staged = match a.out.as_deref() {
        None => None,
        Some(d) => Some(Staged::new(d, a.force).map_err(LabError::Input)?),
    };
    interrupt::install();
    let tty = std::io::stderr().is_terminal();
    let mut progress = |name: &str, k: u64, n: u64| {
        if tty {
            eprint!("\r\x1b[K{name}: trial {k}/{n}");
            if k == n {
                eprintln!();
            }
        }
    };
    let e = emulate(&scn, &prepared, &opts, &mut progress).map_err(LabError::Run)?;
    let scn = ran_scenario(&scn, &prepared);
    if interrupt::requested() {
        eprintln!("interrupted: nothing written");
        return Err(LabError::Interrupted);
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        let doc = results::json(&scn, &e, opts.trials, opts.seed);
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialisable")
        );
    } else {
        let _ = writeln!(out, "{}", results::text(&scn, &e, opts.trials));
    }
    if let Some(mut st) = staged.take() {
        let written = results::write(&mut st, &scn, &e, opts.trials, opts.seed)
            .and_then(|()| st.commit().map_err(|e| e.to_string()))
            .map_err(|err| LabError::Run(format!("writing results: {err}")))?;
        let dir = a.out.as_ref().expect("out").display();
        eprintln!("wrote {} files into {dir}", written.len());
    }
    verdict(a, &scn, &e)
}

/// The run's options from the flags and the scenario.
fn options(a: &Args, scn: &Scenario) -> Result<EmulateOptions, LabError> {
    let time_limit = match a.time_limit.as_deref().map(units::duration) {
        None => super::DEFAULT_TIME_LIMIT,
        Some(Ok(d)) if !d.is_zero() => d,
        Some(_) => {
            return Err(LabError::Input(
                "--time-limit: expected a positive duration like \"30s\"".into(),
            ));
        }
    };
    if let Some(k) = a.kernel.as_deref()
        && k.split(',').any(|s| s.trim().is_empty())
    {
        return Err(LabError::Input(format!(
            "--kernel {k:?}: expected congestion control names separated by commas, like cubic,reno"
        )));
    }
    Ok(EmulateOptions {
        trials: a.trials.unwrap_or(if a.quick {
            scn.quick_trials
        } else {
            scn.trials
        }),
        seed: a.seed.unwrap_or(scn.seed),
        variants: a.variants.clone(),
        kernels: a
            .kernel
            .as_deref()
            .map(|k| k.split(',').map(|s| s.trim().to_string()).collect())
            .unwrap_or_default(),
        time_limit,
        capture: a.out.is_some(),
        engine: a.engine,
        peer: a.peer.clone(),
        server_cmd: a.server_cmd.clone(),
    })
}

/// Whether the run stands: the forwarder's timing (a delay error that is a
/// noticeable share of the path's delay is said, and fails the run under
/// --strict) and the external client's exit status.
fn verdict(a: &Args, scn: &Scenario, e: &super::Emulation) -> Result<bool, LabError> {
    let late = super::delay_error_warnings(scn, e);
    for w in &late {
        eprintln!("warning: {w}");
    }
    if a.strict && !late.is_empty() {
        return Err(LabError::Run(
            "--strict: the forwarder's delay error makes this run's timing unreliable".into(),
        ));
    }
    // An external client that failed makes the run fail.
    let failed = e
        .trials
        .iter()
        .flatten()
        .filter(|t| t.peer.as_ref().is_some_and(|p| p.status != Some(0)))
        .count();
    if failed > 0 {
        return Err(LabError::Run(format!(
            "the client command did not exit 0 in {failed} trials (see the report)"
        )));
    }
    Ok(true)
}
