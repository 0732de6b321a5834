//! `gentle analyze` over many captures (several files, or directories of them): each
//! capture analysed on its own, in parallel on this machine's cores, its flows and
//! exchanges turned into table rows as soon as it is done, so that memory holds the
//! flows of the captures being read, not every packet of every capture. The rows are
//! gathered in the order of the captures' paths whatever thread finished first, so
//! the tables (`--parquet DIR`) and the report are the same on any number of threads.
//!
//! A capture that opened but fails on the way (a damaged record, no TCP in it) is
//! skipped with a warning naming it and why, counted, and listed in the report; the
//! others go on.

use std::path::PathBuf;

use rayon::prelude::*;

use super::Args;
use super::gather::{Gather, Part};
use super::inputs;
use crate::LabError;

/// Captures handed to the threads at a time, per thread: enough to keep every
/// thread busy, few enough that their rows wait in memory only briefly.
const CAPTURES_PER_THREAD: usize = 4;

/// Analyses `files` on the current thread pool, in chunks, gathering in path order;
/// the report.
fn run(files: &[PathBuf], a: &Args, bar: &indicatif::ProgressBar) -> Result<String, LabError> {
    let start = std::time::Instant::now();
    let threads = rayon::current_num_threads();
    let mut gather = Gather::new(a.parquet.is_some())?;
    for chunk in files.chunks(threads * CAPTURES_PER_THREAD) {
        let parts: Vec<Result<Part, LabError>> = chunk
            .par_iter()
            .map(|p| {
                let part = Part::of(p, &p.display().to_string(), &a.opts);
                bar.inc(1);
                part
            })
            .collect();
        for (p, part) in chunk.iter().zip(parts) {
            if let Some(w) = gather.add(p, part?)? {
                bar.suspend(|| eprintln!("{w}"));
            }
        }
    }
    if crate::interrupt::requested() {
        return Err(LabError::Interrupted);
    }
    let ran_on = format!("{threads} thread{}", if threads == 1 { "" } else { "s" });
    let seconds = start.elapsed().as_secs_f64();
    gather.finish(a.parquet.as_deref(), a.slow_ms, seconds, &ran_on, a.json)
}

/// Checks a many-capture run's arguments and outputs before any work; the captures,
/// in path order.
pub fn plan(a: &Args) -> Result<Vec<PathBuf>, LabError> {
    if a.tags.is_some() || a.out.is_some() {
        let flag = if a.tags.is_some() { "--tags" } else { "--out" };
        let why = match a.captures.iter().find(|p| p.is_dir()) {
            Some(d) => format!("{}: is a directory", d.display()),
            None if a.captures.len() > 1 => format!("{} captures", a.captures.len()),
            None => {
                return Err(LabError::Input(format!(
                    "{flag} with --parquet: {flag} writes one capture's results, \
                     --parquet DIR the tables of many captures; give one or the other"
                )));
            }
        };
        return Err(LabError::Input(format!(
            "{why}; {flag} takes one capture file (--parquet DIR writes the tables \
             of many, --json their report)"
        )));
    }
    crate::checks::threads("--threads ", a.threads).map_err(LabError::Input)?;
    if let Some(ms) = a.slow_ms
        && !(ms.is_finite() && ms >= 0.0)
    {
        return Err(LabError::Input(format!(
            "--slow {ms}: expected a response time in ms, 0 or more"
        )));
    }
    let files = inputs::captures(&a.captures)?;
    if let Some(d) = &a.parquet {
        inputs::check_parquet(d, a.force)?;
    }
    Ok(files)
}

/// Checks the arguments, then analyses every capture; the report on stdout, the
/// tables into `--parquet DIR`.
/// The Ray backend: `python3 -m gentle analyze ...` with the same arguments; the
/// exit status.
fn through_python(a: &Args, address: Option<&str>) -> u8 {
    let mut args: Vec<String> = a.captures.iter().map(|p| p.display().to_string()).collect();
    let mut flag = |f: &str, v: Option<String>| {
        if let Some(v) = v {
            args.extend([f.to_string(), v]);
        }
    };
    flag(
        "--parquet",
        a.parquet.as_ref().map(|p| p.display().to_string()),
    );
    flag("--slow", a.slow_ms.map(|x| x.to_string()));
    flag("--server", a.opts.server.map(|x| x.to_string()));
    flag("--server-port", a.opts.server_port.map(|x| x.to_string()));
    flag("--address", address.map(str::to_string));
    if a.force {
        args.push("--force".into());
    }
    if a.json {
        args.push("--json".into());
    }
    if a.opts.point == gentle_analyze::CapturePoint::Client {
        args.push("--client-side".into());
    }
    crate::sweeping::command::python_command("analyze", &args)
}

fn command_inner(a: &Args) -> Result<(), LabError> {
    let files = plan(a)?;
    let bar = crate::sweeping::local::bar("analyze", files.len() as u64, "captures", true);
    let report = match a.threads {
        None => run(&files, a, &bar),
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| LabError::Input(format!("cannot start {t} threads: {e}")))?
            .install(|| run(&files, a, &bar)),
    };
    bar.finish_and_clear();
    print!("{}", report?);
    Ok(())
}

/// Runs `gentle analyze` over many captures; the exit status.
pub fn command(a: &Args) -> u8 {
    if let Some(address) = &a.ray {
        if a.threads.is_some() {
            eprintln!("error: --threads is for the local backend; Ray gives each task one CPU");
            return 2;
        }
        return through_python(a, address.as_deref());
    }
    match command_inner(a) {
        Ok(()) => 0,
        Err(LabError::Interrupted) => {
            eprintln!("interrupted: nothing was written");
            crate::interrupt::EXIT_INTERRUPTED
        }
        Err(e) => {
            eprintln!("{e}");
            e.exit_code()
        }
    }
}
