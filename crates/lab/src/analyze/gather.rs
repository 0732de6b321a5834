//! One capture's part of a many-capture run ([`Part`]: its table rows and totals, or
//! why it was skipped), as bytes to pass between processes, and the parts gathered in
//! path order into the tables and the report ([`Gather`]), wherever they were
//! computed: on this machine's threads or as Ray tasks.

use std::path::{Path, PathBuf};

use gentle_analyze::Options;
use serde::{Deserialize, Serialize};

use super::correlate;
use super::signatures::{self, Set};
use super::tables::{FILES, Tables};
use crate::LabError;
use crate::table::{self, Table, Values, Writer};

/// A table's rows are written as one row group once it holds this many (at a
/// capture's end: the groups depend on the rows alone).
const ROW_GROUP: usize = 1 << 16;

/// Totals over the captures analysed.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Sums {
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

/// What one capture gave: its rows and totals, or why it was skipped.
pub struct Part(Result<(Tables, Sums), String>);

/// The header of a part's bytes: its totals and its tables' lengths, or the reason.
#[derive(Serialize, Deserialize)]
struct Header {
    skipped: Option<String>,
    sums: Sums,
    sizes: Vec<usize>,
}

impl Part {
    /// Analyses capture `path`, named `name` in the rows and messages (its path as
    /// the run was given it, where `path` may be that made absolute). A capture that
    /// fails is a part that says why; only Ctrl-C is an error.
    pub fn of(path: &Path, name: &str, opts: &Options) -> Result<Part, LabError> {
        let mut opts = opts.clone();
        opts.keep_retransmissions = true;
        let a = match super::analyze_path(path, opts, &mut |_, _| {}, false) {
            Ok(a) => a,
            Err(f) => {
                return match LabError::from(f) {
                    LabError::Interrupted => Err(LabError::Interrupted),
                    e => {
                        let why = e.to_string();
                        let why = why.trim_start_matches("error: ");
                        let at = format!("{}: ", path.display());
                        let why = match why.strip_prefix(&at) {
                            Some(rest) => format!("{name}: {rest}"),
                            None => why.to_string(),
                        };
                        Ok(Part(Err(why)))
                    }
                };
            }
        };
        let t = &a.totals;
        let sums = Sums {
            captures: 1,
            frames: t.frames,
            tcp_packets: t.tcp_packets,
            flows: t.flows,
            exchanges: t.exchanges,
            retransmissions: t.retransmissions.total(),
        };
        Ok(Part(Ok((Tables::of(name, &a), sums))))
    }

    /// The part as bytes: a JSON header's length (8 bytes, little-endian), the
    /// header, then each table as a Parquet file.
    pub fn to_bytes(self) -> Result<Vec<u8>, LabError> {
        let (skipped, sums, mut tables) = match self.0 {
            Ok((t, s)) => (None, s, Some(t)),
            Err(why) => (Some(why), Sums::default(), None),
        };
        let mut files = Vec::new();
        if let Some(t) = tables.as_mut() {
            for t in t.all() {
                files.push(table::to_bytes(t.take(), &[]).map_err(LabError::Run)?);
            }
        }
        let h = Header {
            skipped,
            sums,
            sizes: files.iter().map(Vec::len).collect(),
        };
        let h = serde_json::to_vec(&h).expect("serialisable");
        let mut out = (h.len() as u64).to_le_bytes().to_vec();
        out.extend(h);
        files.iter().for_each(|f| out.extend(f));
        Ok(out)
    }

    /// A part from [`Part::to_bytes`]'s bytes.
    pub fn from_bytes(b: &[u8]) -> Result<Part, LabError> {
        let bad = |m: String| LabError::Run(format!("a capture's part: {m}"));
        let n = b
            .get(..8)
            .map(|x| u64::from_le_bytes(x.try_into().expect("8 bytes")) as usize)
            .ok_or_else(|| bad("too short".into()))?;
        let h: Header = b
            .get(8..8 + n)
            .ok_or_else(|| bad("too short".into()))
            .and_then(|x| serde_json::from_slice(x).map_err(|e| bad(e.to_string())))?;
        if let Some(why) = h.skipped {
            return Ok(Part(Err(why)));
        }
        let mut at = 8 + n;
        let mut t = Tables::new();
        for (dest, size) in t.all().into_iter().zip(h.sizes) {
            let file = b
                .get(at..at + size)
                .ok_or_else(|| bad("too short".into()))?;
            dest.append(table::from_bytes(file.to_vec()).map_err(bad)?);
            at += size;
        }
        Ok(Part(Ok((t, h.sums))))
    }
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
        let tables = self.writers.iter_mut().zip(self.rows.all());
        for ((w, rows), n) in tables.zip(&mut self.counts) {
            if last || rows.rows() >= ROW_GROUP {
                *n += rows.rows() as u64;
                w.write(rows).map_err(LabError::Run)?;
            }
        }
        Ok(())
    }

    /// Writes the tables into `dir`, each file whole.
    fn write(mut self, dir: &Path) -> Result<(), LabError> {
        self.add(Tables::new(), true)?;
        std::fs::create_dir_all(dir)
            .map_err(|e| LabError::Run(format!("--parquet {}: {e}", dir.display())))?;
        for ((name, w), rows) in FILES.iter().zip(self.writers).zip(self.counts) {
            let bytes = w.finish(&[]).map_err(LabError::Run)?;
            let path = dir.join(name);
            crate::staging::write_whole(&path, &bytes)
                .map_err(|e| LabError::Run(format!("writing {}: {e}", path.display())))?;
            eprintln!("wrote {} ({rows} rows)", path.display());
        }
        Ok(())
    }
}

/// The exchanges of `t` (an exchanges table) with a response time: it (ms), and
/// their signatures.
fn timed(t: &mut Table) -> Vec<(f64, Set)> {
    let sigs: Vec<Set> = match &t.col("signatures").values {
        Values::Str(v) => v
            .iter()
            .map(|s| signatures::parse(std::str::from_utf8(s.data()).unwrap_or("")))
            .collect(),
        _ => unreachable!("signatures are text"),
    };
    let c = t.col("response_ms");
    let (Values::F64(ms), Some(defs)) = (&c.values, &c.defs) else {
        unreachable!("response times are nullable numbers")
    };
    let mut ms = ms.iter();
    defs.iter()
        .zip(sigs)
        .filter(|(d, _)| **d == 1)
        .map(|(_, s)| (*ms.next().expect("a value per present row"), s))
        .collect()
}

/// Parts gathered in path order.
pub struct Gather {
    out: Option<Out>,
    sums: Sums,
    skipped: Vec<(PathBuf, String)>,
    timed: Vec<(f64, Set)>,
}

impl Gather {
    /// Gathers parts, and their tables if `tables`.
    pub fn new(tables: bool) -> Result<Gather, LabError> {
        Ok(Gather {
            out: tables.then(Out::new).transpose()?,
            sums: Sums::default(),
            skipped: Vec::new(),
            timed: Vec::new(),
        })
    }

    /// Adds capture `path`'s part, the next in path order; the warning to print
    /// when it was skipped.
    pub fn add(&mut self, path: &Path, part: Part) -> Result<Option<String>, LabError> {
        match part.0 {
            Ok((mut t, sums)) => {
                self.sums.add(&sums);
                self.timed.extend(timed(&mut t.exchanges));
                if let Some(o) = self.out.as_mut() {
                    o.add(t, false)?;
                }
                Ok(None)
            }
            Err(why) => {
                let warning = format!("warning: skipped {why}");
                self.skipped.push((path.to_path_buf(), why));
                Ok(Some(warning))
            }
        }
    }

    /// Writes the tables into `dir` (if gathered) and returns the report of a run
    /// that took `seconds` on `ran_on` (e.g. `2 threads`), with slow responses
    /// above `slow_ms` or else the median.
    /// With `json`, the report as a JSON document ([`report_json`]).
    pub fn finish(
        self,
        dir: Option<&Path>,
        slow_ms: Option<f64>,
        seconds: f64,
        ran_on: &str,
        json: bool,
    ) -> Result<String, LabError> {
        if let (Some(o), Some(d)) = (self.out, dir) {
            o.write(d)?;
        }
        let c = correlate::correlate(&self.timed, slow_ms);
        if json {
            let doc = report_json(&self.sums, &self.skipped, self.timed.len(), c.as_ref());
            let mut doc = serde_json::to_string_pretty(&doc).expect("serialisable");
            doc.push('\n');
            return Ok(doc);
        }
        Ok(report(
            &self.sums,
            &self.skipped,
            self.timed.len(),
            c.as_ref(),
            &format!("{seconds:.1} s on {ran_on}"),
        ))
    }
}

/// The report as JSON: the totals, the captures skipped and why, and per signature
/// the slow exchanges with and without it, each share with its 95% Wilson
/// interval. No wall time: the document is the same on any backend and thread count.
pub fn report_json(
    s: &Sums,
    skipped: &[(PathBuf, String)],
    timed: usize,
    c: Option<&correlate::Correlation>,
) -> serde_json::Value {
    let share = |x: &correlate::Share| {
        let ci = x.ci();
        serde_json::json!({
            "slow": x.slow,
            "n": x.n,
            "share": ci.map(|(p, _)| p),
            "ci95": ci.map(|(_, i)| [i.lo, i.hi]),
        })
    };
    serde_json::json!({
        "captures": s.captures,
        "skipped": skipped
            .iter()
            .map(|(p, why)| serde_json::json!({"capture": p.display().to_string(), "why": why}))
            .collect::<Vec<_>>(),
        "frames": s.frames,
        "tcp_packets": s.tcp_packets,
        "flows": s.flows,
        "exchanges": s.exchanges,
        "timed_exchanges": timed,
        "server_retransmissions": s.retransmissions,
        "correlation": c.map(|c| serde_json::json!({
            "slow_ms": c.slow_ms,
            "threshold": if c.median { "median" } else { "--slow" },
            "timed": c.timed,
            "slow": c.slow,
            "signatures": c.rows.iter().map(|r| serde_json::json!({
                "signature": r.signature,
                "with": share(&r.with),
                "without": share(&r.without),
            })).collect::<Vec<_>>(),
        })),
    })
}

/// The report: what was read, the captures skipped, the signatures against slow
/// responses.
fn report(
    s: &Sums,
    skipped: &[(PathBuf, String)],
    timed: usize,
    c: Option<&correlate::Correlation>,
    took: &str,
) -> String {
    use std::fmt::Write as _;
    let mut text = format!(
        "{} captures analysed ({} skipped): {} frames, {} TCP packets in {} flows; {} exchanges \
         ({} with a response time); {} server retransmissions; {took}\n",
        s.captures,
        skipped.len(),
        s.frames,
        s.tcp_packets,
        s.flows,
        s.exchanges,
        timed,
        s.retransmissions,
    );
    for (p, why) in skipped {
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
