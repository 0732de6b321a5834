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

use std::path::{Path, PathBuf};

use gentle_analyze::Options;
use rayon::prelude::*;

use super::correlate::{self, Correlation};
use super::inputs;
use super::signatures::{self, Set};
use super::tables::{FILES, Tables};
use super::{Args, analyze_path};
use crate::LabError;
use crate::table::Writer;

/// A table's rows are written as one row group once it holds this many (at a
/// capture's end: the groups depend on the rows alone).
const ROW_GROUP: usize = 1 << 16;

/// Captures handed to the threads at a time, per thread: enough to keep every
/// thread busy, few enough that their rows wait in memory only briefly.
const CAPTURES_PER_THREAD: usize = 4;

/// What one capture gave.
struct One {
    tables: Tables,
    /// Its exchanges with a response time: the time (ms) and signatures.
    timed: Vec<(f64, Set)>,
    sums: Sums,
}

/// Totals over the captures analysed.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    captures: u64,
    frames: u64,
    tcp_packets: u64,
    flows: u64,
    exchanges: u64,
    retransmissions: u64,
}

impl Sums {
    fn add(&mut self, o: &Sums) {
        self.captures += o.captures;
        self.frames += o.frames;
        self.tcp_packets += o.tcp_packets;
        self.flows += o.flows;
        self.exchanges += o.exchanges;
        self.retransmissions += o.retransmissions;
    }
}

/// Analyses capture `path`; an error is the reason it was skipped (or Ctrl-C).
fn analyze_one(path: &Path, opts: &Options) -> Result<One, LabError> {
    let mut opts = opts.clone();
    opts.keep_retransmissions = true;
    let a = analyze_path(path, opts, &mut |_, _| {}, false).map_err(LabError::from)?;
    let name = path.display().to_string();
    let timed = a
        .flows
        .iter()
        .flat_map(|f| f.exchanges.iter().map(move |e| (f, e)))
        .filter_map(|(f, e)| Some((e.response_ms?, signatures::of_exchange(f, e))))
        .collect();
    let t = &a.totals;
    Ok(One {
        tables: Tables::of(&name, &a),
        timed,
        sums: Sums {
            captures: 1,
            frames: t.frames,
            tcp_packets: t.tcp_packets,
            flows: t.flows,
            exchanges: t.exchanges,
            retransmissions: t.retransmissions.total(),
        },
    })
}

/// What the run found.
struct Outcome {
    sums: Sums,
    /// Captures skipped, with why, in path order.
    skipped: Vec<(PathBuf, String)>,
    timed: Vec<(f64, Set)>,
    /// The tables' files (with `--parquet`) and their rows.
    files: Option<Vec<(Vec<u8>, u64)>>,
    threads: usize,
    seconds: f64,
}

/// The tables being written: each file's writer, rows not yet written, rows in all.
struct Out {
    writers: Vec<Writer>,
    rows: Tables,
    counts: [u64; 4],
}

impl Out {
    fn new() -> Result<Out, LabError> {
        let mut rows = Tables::new();
        let writers = rows
            .all()
            .into_iter()
            .map(|t| Writer::new(t))
            .collect::<Result<_, _>>()
            .map_err(LabError::Run)?;
        Ok(Out {
            writers,
            rows,
            counts: [0; 4],
        })
    }

    /// Adds a capture's rows; writes a table's row group once it is big enough, or
    /// every remaining row when `last`.
    fn add(&mut self, t: Tables, last: bool) -> Result<(), LabError> {
        self.rows.append(t);
        for ((w, rows), n) in self
            .writers
            .iter_mut()
            .zip(self.rows.all())
            .zip(&mut self.counts)
        {
            if last || rows.rows() >= ROW_GROUP {
                *n += rows.rows() as u64;
                w.write(rows).map_err(LabError::Run)?;
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<(Vec<u8>, u64)>, LabError> {
        self.add(Tables::new(), true)?;
        self.writers
            .into_iter()
            .zip(self.counts)
            .map(|(w, n)| w.finish(&[]).map(|b| (b, n)).map_err(LabError::Run))
            .collect()
    }
}

/// Analyses `files` on the current thread pool, in chunks, gathering in path order.
fn run(files: &[PathBuf], a: &Args, bar: &indicatif::ProgressBar) -> Result<Outcome, LabError> {
    let start = std::time::Instant::now();
    let threads = rayon::current_num_threads();
    let mut out = a.parquet.as_ref().map(|_| Out::new()).transpose()?;
    let mut sums = Sums::default();
    let mut skipped = Vec::new();
    let mut timed = Vec::new();
    for chunk in files.chunks(threads * CAPTURES_PER_THREAD) {
        let results: Vec<Result<One, LabError>> = chunk
            .par_iter()
            .map(|p| {
                let r = analyze_one(p, &a.opts);
                bar.inc(1);
                r
            })
            .collect();
        for (p, r) in chunk.iter().zip(results) {
            match r {
                Ok(one) => {
                    sums.add(&one.sums);
                    timed.extend(one.timed);
                    if let Some(o) = out.as_mut() {
                        o.add(one.tables, false)?;
                    }
                }
                Err(LabError::Interrupted) => return Err(LabError::Interrupted),
                Err(e) => {
                    let why = e.to_string();
                    let why = why.trim_start_matches("error: ");
                    bar.suspend(|| eprintln!("warning: skipped {why}"));
                    skipped.push((p.clone(), why.to_string()));
                }
            }
        }
    }
    Ok(Outcome {
        sums,
        skipped,
        timed,
        files: out.map(Out::finish).transpose()?,
        threads,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The report: what was read, the captures skipped, the signatures against slow
/// responses.
fn report(o: &Outcome, c: Option<&Correlation>) -> String {
    use std::fmt::Write as _;
    let s = &o.sums;
    let mut text = format!(
        "{} captures analysed ({} skipped): {} frames, {} TCP packets in {} flows; {} exchanges \
         ({} with a response time); {} server retransmissions; {:.1} s on {} threads\n",
        s.captures,
        o.skipped.len(),
        s.frames,
        s.tcp_packets,
        s.flows,
        s.exchanges,
        o.timed.len(),
        s.retransmissions,
        o.seconds,
        o.threads
    );
    for (p, why) in &o.skipped {
        let why = why
            .strip_prefix(&format!("{}: ", p.display()))
            .unwrap_or(why);
        let _ = writeln!(text, "  skipped {}: {why}", p.display());
    }
    text.push('\n');
    match c {
        Some(c) => text.push_str(&correlate::text(c)),
        None => text.push_str("no exchange with a response time: nothing to correlate\n"),
    }
    text
}

/// Writes the tables into `dir`, each file whole.
fn write_tables(dir: &Path, files: Vec<(Vec<u8>, u64)>) -> Result<(), LabError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| LabError::Run(format!("--parquet {}: {e}", dir.display())))?;
    for (name, (bytes, rows)) in FILES.iter().zip(files) {
        let path = dir.join(name);
        crate::staging::write_whole(&path, &bytes)
            .map_err(|e| LabError::Run(format!("writing {}: {e}", path.display())))?;
        eprintln!("wrote {} ({rows} rows)", path.display());
    }
    Ok(())
}

/// Checks the arguments, then analyses every capture; the report on stdout, the
/// tables into `--parquet DIR`.
fn command_inner(a: &Args) -> Result<(), LabError> {
    if a.json || a.tags.is_some() || a.out.is_some() {
        let why = match a.captures.iter().find(|p| p.is_dir()) {
            Some(d) => format!("{}: is a directory", d.display()),
            None if a.captures.len() > 1 => format!("{} captures", a.captures.len()),
            None => "--parquet".to_string(),
        };
        return Err(LabError::Input(format!(
            "{why}; --json, --tags and --out take one capture file (--parquet DIR writes \
             the tables of many)"
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
    let bar = crate::sweeping::local::bar("analyze", files.len() as u64, "captures", true);
    let outcome = match a.threads {
        None => run(&files, a, &bar),
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| LabError::Input(format!("cannot start {t} threads: {e}")))?
            .install(|| run(&files, a, &bar)),
    };
    bar.finish_and_clear();
    let mut outcome = outcome?;
    if crate::interrupt::requested() {
        return Err(LabError::Interrupted);
    }
    let c = correlate::correlate(&outcome.timed, a.slow_ms);
    if let (Some(dir), Some(files)) = (&a.parquet, outcome.files.take()) {
        write_tables(dir, files)?;
    }
    print!("{}", report(&outcome, c.as_ref()));
    Ok(())
}

/// Runs `gentle analyze` over many captures; the exit status.
pub fn command(a: &Args) -> u8 {
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
