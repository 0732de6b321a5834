//! `gentle calibrate SCENARIO --targets TARGETS --out FITTED`: the arguments, the
//! checks made before any work, the report, and the fitted scenario file.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{Evaluator, Fit, Options, TOLERANCE, calibrate, calibrate_with, check};
use crate::LabError;
use crate::scenario::calibrate::Calibratable;
use crate::scenario::targets::{Target, parse_targets};

/// The arguments of `gentle calibrate`.
#[derive(Clone, Debug)]
pub struct CalibrateArgs {
    /// The scenario file; its [calibrate] table names the free parameters.
    pub scenario: PathBuf,
    /// The targets file: [[target]] tables of `stat`, `value`, `source`, `weight`.
    pub targets: PathBuf,
    /// Where the fitted scenario is written (the scenario with the fitted values);
    /// `None` for `--check`: the scenario as written reported, nothing searched or
    /// written.
    pub out: Option<PathBuf>,
    /// Replace FILE if it exists.
    pub force: bool,
    /// Candidates to evaluate, at most (default: the table's `candidates`, else 120).
    pub candidates: Option<u64>,
    /// Trials of every candidate (default: the table's `trials`, else the
    /// scenario's quick_trials).
    pub trials: Option<u64>,
    /// The calibration's seed (default: the scenario's).
    pub seed: Option<u64>,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Print the report as JSON.
    pub json: bool,
    /// Run the candidates on a Ray cluster (a new local one, or the one at
    /// --address), through gentle's Python package.
    pub backend: Backend,
    /// The Ray cluster's address (`ray start --head` prints it). Implies --backend ray.
    pub address: Option<String>,
    /// Fit only these free parameters (their dotted paths); the others keep the
    /// values the file holds, and the earlier fit's header stays below this one's
    /// (on Ray too: the workers restrict their copy alike).
    /// Empty: all of them.
    pub only: Vec<String>,
}

pub use crate::sweeping::command::Backend;

/// Candidates when neither the flag nor the table says.
const CANDIDATES: u64 = 120;

/// Everything checked before the search starts.
pub struct Job {
    pub cal: Calibratable,
    pub targets: Vec<Target>,
    pub targets_file: String,
    pub options: Options,
}

fn read(path: &PathBuf, what: &str) -> Result<String, LabError> {
    std::fs::read_to_string(path)
        .map_err(|e| LabError::Input(format!("cannot read {what} {}: {e}", path.display())))
}

/// Reads and checks the arguments.
pub fn job(a: &CalibrateArgs) -> Result<Job, LabError> {
    crate::checks::threads("--threads ", a.threads).map_err(LabError::Input)?;
    if let Some(out) = &a.out {
        crate::checks::output_file("--out", out, a.force).map_err(LabError::Input)?;
    }
    let file = a.scenario.display().to_string();
    let mut cal = Calibratable::parse(&file, &read(&a.scenario, "the scenario")?)
        .map_err(LabError::Scenario)?;
    if !a.only.is_empty() {
        cal.restrict(&a.only)
            .map_err(|e| LabError::Input(format!("--only: {e}")))?;
    }
    let targets_file = a.targets.display().to_string();
    let names = super::stats::counter_names();
    let targets = parse_targets(&targets_file, &read(&a.targets, "the targets")?, &names)
        .map_err(LabError::Scenario)?;
    let options = Options {
        candidates: a.candidates.or(cal.spec.candidates).unwrap_or(CANDIDATES),
        trials: a
            .trials
            .or(cal.spec.trials)
            .unwrap_or(cal.scenario.quick_trials),
        seed: a.seed.unwrap_or(cal.scenario.seed),
        progress: true,
    };
    Ok(Job {
        cal,
        targets,
        targets_file,
        options,
    })
}

/// Runs `gentle calibrate`; the exit status. On Ray, the command is Python's
/// (`python -m gentle calibrate`), which calls [`command_with`] with candidates
/// going to the cluster.
pub fn command(a: CalibrateArgs) -> u8 {
    if a.backend == Backend::Ray || a.address.is_some() {
        if let Err(e) = job(&a) {
            eprintln!("{e}");
            return e.exit_code();
        }
        return through_python(&a);
    }
    crate::interrupt::install();
    command_with(a, None)
}

/// Runs `gentle calibrate` with candidates evaluated by `eval` (a generation at
/// once, on `eval`'s threads), else on this machine; the exit status.
pub fn command_with(a: CalibrateArgs, eval: Option<(&dyn Evaluator, usize)>) -> u8 {
    let job = match job(&a) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{e}");
            return e.exit_code();
        }
    };
    let threads = eval.map(|(_, n)| n).or(a.threads);
    let run = || match (&a.out, eval) {
        (None, _) => check(&job.cal, &job.targets, &job.options),
        (Some(_), Some((e, _))) => calibrate_with(&job.cal, &job.targets, &job.options, e),
        (Some(_), None) => calibrate(&job.cal, &job.targets, &job.options),
    };
    let fit = match threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .expect("a thread pool")
            .install(run),
        None => run(),
    };
    let fit = match fit {
        Ok(f) => f,
        Err(LabError::Interrupted) => {
            eprintln!("interrupted: nothing written");
            return crate::interrupt::EXIT_INTERRUPTED;
        }
        Err(e) => {
            eprintln!("{e}");
            return e.exit_code();
        }
    };
    if let Some(out) = &a.out {
        let text = job.cal.fitted_text(
            &fit.best.values,
            &header(&job, &fit, &a.only),
            out,
            !a.only.is_empty(),
        );
        if let Err(e) = crate::staging::write_whole(out, text.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", out.display());
            return 1;
        }
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json(&job, &fit)).expect("json")
        );
    } else {
        print!("{}", report(&job, &fit, a.out.is_some()));
        if let Some(out) = &a.out {
            println!("fitted scenario: {}", out.display());
        }
    }
    0
}

/// The Ray backend: `python3 -m gentle calibrate ...` with the same arguments.
fn through_python(a: &CalibrateArgs) -> u8 {
    let mut args: Vec<String> = vec![
        a.scenario.display().to_string(),
        "--targets".into(),
        a.targets.display().to_string(),
    ];
    if let Some(out) = &a.out {
        args.extend(["--out".into(), out.display().to_string()]);
    }
    for (flag, v) in [
        ("--candidates", a.candidates),
        ("--trials", a.trials),
        ("--seed", a.seed),
    ] {
        if let Some(v) = v {
            args.extend([flag.to_string(), v.to_string()]);
        }
    }
    if let Some(addr) = &a.address {
        args.extend(["--address".to_string(), addr.clone()]);
    }
    if !a.only.is_empty() {
        args.extend(["--only".to_string(), a.only.join(",")]);
    }
    for (on, flag) in [(a.force, "--force"), (a.json, "--json")] {
        if on {
            args.push(flag.into());
        }
    }
    crate::sweeping::command::python_command("calibrate", &args)
}

/// The comment lines at the top of the fitted file.
fn header(job: &Job, fit: &Fit, only: &[String]) -> Vec<String> {
    let fitted = fit.fitted_count(&job.targets);
    let (verb, only) = match only {
        [] => ("Fitted", String::new()),
        names => ("Refitted", format!(" --only {}", names.join(","))),
    };
    let mut h = vec![format!(
        "{verb} by `gentle calibrate {} --targets {} --seed {} --trials {} --candidates {}{only}`:",
        job.cal.file,
        job.targets_file,
        job.options.seed,
        job.options.trials,
        job.options.candidates
    )];
    h.push(format!(
        "{fitted} of {} targets within {:.0}% or the noise on other seeds; loss {:.4} (as written: {:.4}).",
        job.targets.len(),
        TOLERANCE * 100.0,
        fit.best.loss,
        fit.start.loss
    ));
    h
}

fn num(x: Option<f64>) -> String {
    match x {
        None => "-".into(),
        Some(x) if x != 0.0 && x.abs() < 0.01 => format!("{x:.5}"),
        Some(x) if x.abs() < 10.0 => format!("{x:.4}"),
        Some(x) => format!("{x:.1}"),
    }
}

/// `n thing` or `n things`.
fn plural(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// The report: the parameters, then every target with the scenario's value as
/// written, its fitted value (when `searched`; else the value as written is the
/// one from the calibration's seed, `--check`), its value on other seeds, its
/// error there and the noise.
pub fn report(job: &Job, fit: &Fit, searched: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}\n", title(job, fit, searched));
    let free = &job.cal.spec.free;
    let w = free
        .iter()
        .map(|f| f.name().len())
        .max()
        .unwrap_or(9)
        .max(9);
    if searched {
        let _ = writeln!(
            s,
            "{:<w$}  {:>10}  {:>10}  range",
            "parameter", "as written", "fitted"
        );
    } else {
        let _ = writeln!(s, "{:<w$}  {:>10}", "parameter", "as written");
    }
    for (i, f) in free.iter().enumerate() {
        let _ = write!(s, "{:<w$}  {:>10}", f.name(), f.show(fit.start.values[i]));
        if searched {
            let scale = if f.log { " (log)" } else { "" };
            let (best, lo, hi) = (f.show(fit.best.values[i]), f.show(f.min), f.show(f.max));
            let _ = write!(s, "  {best:>10}  {lo} .. {hi}{scale}");
        }
        s.push('\n');
    }
    let w = job
        .targets
        .iter()
        .map(|t| t.stat.text.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let columns: &[&str] = if searched {
        &["as written", "fitted"]
    } else {
        &["this seed"]
    };
    let _ = write!(s, "\n{:<w$}  {:>10}", "target", "value");
    for c in columns {
        let _ = write!(s, "  {c:>10}");
    }
    let _ = writeln!(
        s,
        "  {:>11}  {:>8}  {:>9}",
        "other seeds", "error", "noise (sd)"
    );
    for (i, t) in job.targets.iter().enumerate() {
        let _ = write!(s, "{:<w$}  {:>10}", t.stat.text, num(Some(t.value)));
        let _ = write!(s, "  {:>10}", num(fit.start.stats[i]));
        if searched {
            let _ = write!(s, "  {:>10}", num(fit.best.stats[i]));
        }
        let _ = writeln!(
            s,
            "  {:>11}  {:>8}  {:>9}  {}",
            num(fit.other_seeds[i]),
            error_pct(fit, i, t),
            num(fit.noise[i]),
            if fit.fitted(i, &job.targets) {
                "ok"
            } else {
                "MISS"
            }
        );
    }
    let _ = writeln!(
        s,
        "\n{} of {} targets within {:.0}% or {} sd of the noise on {} other seeds; loss {:.4} (as written {:.4})",
        fit.fitted_count(&job.targets),
        job.targets.len(),
        TOLERANCE * 100.0,
        super::NOISE_SDS,
        super::REPLICATES,
        fit.best.loss,
        fit.start.loss
    );
    let _ = writeln!(
        s,
        "\nvalue: the target. {seed}: the statistic on the calibration's seed; other seeds: \
         its mean\non {n} other seeds, and error that mean's difference from the target, \
         relative; noise (sd): the\nstandard deviation of one run over those seeds. ok: \
         the error within {tol:.0}%, or the mean within\n{sds} sd of the target; else MISS. \
         loss: the weighted mean of squared log-ratios of statistic\nto target on the \
         calibration's seed (a statistic below {floor:.0}% of its target counts as {floor:.0}%).",
        seed = if searched {
            "as written, fitted"
        } else {
            "this seed"
        },
        n = super::REPLICATES,
        tol = TOLERANCE * 100.0,
        sds = super::NOISE_SDS,
        floor = super::FLOOR * 100.0,
    );
    s
}

/// The report's first line: what ran.
fn title(job: &Job, fit: &Fit, searched: bool) -> String {
    let o = &job.options;
    let variant = &job.cal.scenario.variants[job.cal.spec.variant].name;
    let name = &job.cal.scenario.name;
    let targets = plural(job.targets.len(), "target");
    if searched {
        format!(
            "{name}: {} fitted to {targets} — {} candidates ({} distinct) and the scenario as written, x {} trials of {variant}, seed {}; the best {} run again from {} seeds ({})",
            plural(job.cal.spec.free.len(), "parameter"),
            fit.candidates,
            fit.evaluations.saturating_sub(1),
            o.trials,
            o.seed,
            fit.finalists,
            super::VALIDATIONS,
            seconds(fit.wall_seconds)
        )
    } else {
        format!(
            "{name}: the scenario as written against {targets}, x {} trials of {variant}, seed {} and {} other seeds ({})",
            o.trials,
            o.seed,
            super::REPLICATES,
            seconds(fit.wall_seconds)
        )
    }
}

/// A wall time: tenths of a second below ten seconds, whole seconds above.
fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.0} s")
    }
}

/// Target `i`'s error on the other seeds (on the search's seed without them), %.
fn error_pct(fit: &Fit, i: usize, t: &Target) -> String {
    let x = fit.other_seeds[i].or(fit.best.stats[i]);
    x.map_or("-".into(), |x| {
        format!("{:+.1}%", (x - t.value) / t.value.abs().max(1e-9) * 100.0)
    })
}

/// The report as JSON.
pub fn json(job: &Job, fit: &Fit) -> serde_json::Value {
    let params: Vec<_> = job
        .cal
        .spec
        .free
        .iter()
        .enumerate()
        .map(|(i, f)| {
            serde_json::json!({
                "name": f.name(), "min": f.min, "max": f.max, "log": f.log,
                "as_written": fit.start.values[i], "fitted": fit.best.values[i],
            })
        })
        .collect();
    let targets: Vec<_> = job
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            serde_json::json!({
                "stat": t.stat.text, "value": t.value, "source": t.source,
                "as_written": fit.start.stats[i], "fitted": fit.best.stats[i],
                "other_seeds": fit.other_seeds[i],
                "noise_sd": fit.noise[i], "ok": fit.fitted(i, &job.targets),
            })
        })
        .collect();
    serde_json::json!({
        "scenario": job.cal.scenario.name,
        "seed": job.options.seed,
        "trials": job.options.trials,
        "candidates": fit.candidates,
        "distinct_candidates": fit.evaluations.saturating_sub(1),
        "loss": fit.best.loss,
        "loss_as_written": fit.start.loss,
        "parameters": params,
        "targets": targets,
        "wall_seconds": fit.wall_seconds,
    })
}
