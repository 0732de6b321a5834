//! The `gentle emulate` command: reads the scenario, checks it for real mode, runs
//! it against the kernel with a progress line, prints the report (or JSON) and
//! writes `--out`. Exit status 2 for a scenario or flag real mode refuses (nothing
//! created), 1 when a run turns out invalid (TUN drops), 130 when interrupted.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::{EmulateOptions, emulate, output, prepare, ran_scenario};
use crate::output::Staged;
use crate::scenario::{Scenario, Sweep};
use crate::{interrupt, units};

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
    let scn = match load(&a) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let time_limit = match a.time_limit.as_deref().map(units::duration) {
        None => super::DEFAULT_TIME_LIMIT,
        Some(Ok(d)) if !d.is_zero() => d,
        Some(_) => {
            eprintln!("error: --time-limit: expected a positive duration like \"30s\"");
            return 2;
        }
    };
    if let Some(k) = a.kernel.as_deref()
        && k.split(',').any(|s| s.trim().is_empty())
    {
        eprintln!(
            "error: --kernel {k:?}: expected congestion control names separated by commas, like cubic,reno"
        );
        return 2;
    }
    let opts = EmulateOptions {
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
    };
    let prepared = match prepare(&scn, &opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut staged = match a.out.as_deref().map(|d| Staged::new(d, a.force)) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return 2;
        }
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
    let e = match emulate(&scn, &prepared, &opts, &mut progress) {
        Ok(e) => e,
        Err(err) => {
            eprintln!("error: {err}");
            return 1;
        }
    };
    let scn = ran_scenario(&scn, &prepared);
    if interrupt::requested() {
        eprintln!("interrupted: nothing written");
        return interrupt::EXIT_INTERRUPTED;
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&output::json(&scn, &e, opts.trials, opts.seed))
                .expect("serialisable")
        );
    } else {
        let _ = writeln!(out, "{}", output::text(&scn, &e, opts.trials));
    }
    if let Some(st) = staged.as_mut()
        && let Err(err) = output::write(st, &scn, &e, opts.trials, opts.seed)
    {
        eprintln!("error: writing results: {err}");
        return 1;
    }
    if let Some(st) = staged {
        match st.commit() {
            Ok(files) => eprintln!(
                "wrote {} files into {}",
                files.len(),
                a.out.as_ref().expect("out").display()
            ),
            Err(err) => {
                eprintln!("error: writing results: {err}");
                return 1;
            }
        }
    }
    // The forwarder's timing: a delay error that is a noticeable share of the
    // path's delay is said, and fails the run under --strict.
    let late = super::delay_error_warnings(&scn, &e);
    for w in &late {
        eprintln!("warning: {w}");
    }
    if a.strict && !late.is_empty() {
        eprintln!(
            "error: --strict: the forwarder's delay error makes this run's timing unreliable"
        );
        return 1;
    }
    // An external client that failed makes the run fail.
    let failed = e
        .trials
        .iter()
        .flatten()
        .filter(|t| t.peer.as_ref().is_some_and(|p| p.status != Some(0)))
        .count();
    if failed > 0 {
        eprintln!("error: the client command did not exit 0 in {failed} trials (see the report)");
        return 1;
    }
    0
}
