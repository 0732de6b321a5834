//! `gentle view PATH... [--out FILE.html] [--open]`: one self-contained HTML page
//! (it opens offline, from disk) from any mix of `gentle run --trace` files, packet
//! captures (through `gentle analyze`), and output directories of `gentle run`,
//! `reproduce`, `sweep` and `emulate`. Every input is checked before any work, and
//! the page is written whole or not at all.

pub mod capture;
pub mod dirs;
pub mod flow;
pub mod page;
pub mod trace;

use std::path::{Path, PathBuf};

use capture::Capture;
use dirs::Results;
use flow::FlowData;
use page::Pair;

/// The arguments of `gentle view`.
pub struct Args {
    pub paths: Vec<PathBuf>,
    pub out: PathBuf,
    pub force: bool,
    pub open: bool,
}

/// What one input is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Trace,
    Capture,
    Dir,
}

type Failed = (u8, String);

/// Runs `gentle view`: the exit status (2 for bad input, nothing written).
pub fn command(a: &Args) -> u8 {
    match run(a) {
        Ok(msg) => {
            eprintln!("{msg}");
            0
        }
        Err((code, msg)) => {
            eprintln!("{msg}");
            code
        }
    }
}

/// Whether `path`'s first line is a line of `gentle run --trace`.
pub fn is_trace(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut line = String::new();
    if std::io::BufReader::new(f).read_line(&mut line).is_err() {
        return false;
    }
    serde_json::from_str::<serde_json::Value>(&line)
        .is_ok_and(|v| v.get("t_ns").is_some() && v.get("what").is_some())
}

fn classify(p: &Path) -> Result<Kind, Failed> {
    let bad = |why: &str| (2, format!("error: {}: {why}", p.display()));
    if !p.exists() {
        return Err(bad("no such file or directory"));
    }
    if p.is_dir() {
        dirs::recognised(p).map_err(|e| (2, e))?;
        return Ok(Kind::Dir);
    }
    if std::fs::File::open(p).is_err() {
        return Err(bad("cannot be read"));
    }
    if crate::tsg::is_capture(p) {
        Ok(Kind::Capture)
    } else if is_trace(p) {
        Ok(Kind::Trace)
    } else {
        Err(bad(
            "neither a trace of `gentle run --trace` (JSON lines), a pcap/pcapng capture, \
             nor an output directory of gentle",
        ))
    }
}

/// The page's file: new (or `--force`), in an existing directory, not a directory.
fn check_out(a: &Args) -> Result<(), Failed> {
    let out = &a.out;
    if out.is_dir() {
        return Err((2, format!("error: --out {}: is a directory", out.display())));
    }
    if out.exists() && !a.force {
        return Err((
            2,
            format!(
                "error: --out {}: exists; --force replaces it",
                out.display()
            ),
        ));
    }
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    if parent.is_some_and(|p| !p.is_dir()) {
        return Err((
            2,
            format!(
                "error: --out {}: its directory does not exist",
                out.display()
            ),
        ));
    }
    Ok(())
}

/// What the page is made of.
#[derive(Default)]
struct Gathered {
    flows: Vec<FlowData>,
    captures: Vec<Capture>,
    results: Vec<Results>,
    pairs: Vec<Pair>,
}

fn read_trace(p: &Path, g: &mut Gathered) -> Result<(), Failed> {
    let text =
        std::fs::read_to_string(p).map_err(|e| (2, format!("error: {}: {e}", p.display())))?;
    let prefix = format!("t{}-", g.flows.len());
    let flows = trace::read(p, &text, &prefix).map_err(|e| (2, e))?;
    // The variants of one trial, side by side: the first with each other.
    for other in flows.iter().skip(1) {
        g.pairs.push(Pair {
            title: format!("{}: {} and {}", p.display(), flows[0].name, other.name),
            a: flows[0].id.clone(),
            b: other.id.clone(),
        });
    }
    g.flows.extend(flows);
    Ok(())
}

fn read_capture(p: &Path, g: &mut Gathered) -> Result<(), Failed> {
    let prefix = format!("c{}-", g.captures.len());
    let c = capture::read(p, &prefix).map_err(|e| (2, e))?;
    g.flows.extend(c.flows.iter().cloned());
    g.captures.push(c);
    Ok(())
}

fn read_dir(p: &Path, g: &mut Gathered) -> Result<(), Failed> {
    let found = dirs::scan(p).map_err(|e| (2, format!("error: {}: {e}", p.display())))?;
    for mut r in found.results {
        dirs::read(&mut r).map_err(|e| (2, e))?;
        g.results.push(r);
    }
    for t in &found.traces {
        read_trace(t, g)?;
    }
    // One trial of several variants: each capture's busiest flow, side by side.
    for (trial, files) in found.emulate {
        let mut ids = Vec::new();
        for f in &files {
            let prefix = format!("e{}-", g.captures.len());
            let mut c = capture::read(f, &prefix).map_err(|e| (2, e))?;
            if let Some(first) = c.flows.first_mut() {
                let n = f
                    .file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into());
                first.name = n.trim_end_matches(".pcap").to_string();
                ids.push((first.id.clone(), first.name.clone()));
                g.flows.push(first.clone());
            }
            c.flows.truncate(1);
            g.captures.push(c);
        }
        for w in ids.windows(2) {
            g.pairs.push(Pair {
                title: format!("{trial}: {} and {}", w[0].1, w[1].1),
                a: w[0].0.clone(),
                b: w[1].0.clone(),
            });
        }
    }
    Ok(())
}

fn run(a: &Args) -> Result<String, Failed> {
    let kinds: Vec<Kind> = a
        .paths
        .iter()
        .map(|p| classify(p))
        .collect::<Result<_, _>>()?;
    check_out(a)?;
    let mut g = Gathered::default();
    for (p, k) in a.paths.iter().zip(&kinds) {
        match k {
            Kind::Trace => read_trace(p, &mut g)?,
            Kind::Capture => read_capture(p, &mut g)?,
            Kind::Dir => read_dir(p, &mut g)?,
        }
    }
    let title = a
        .paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let data = page::Data {
        title,
        causes: &flow::CAUSES,
        flows: &g.flows,
        tables: page::Data::tables(&g.captures),
        results: &g.results,
        pairs: &g.pairs,
    };
    let html = page::html(&data);
    write(&a.out, html.as_bytes())?;
    if a.open {
        open(&a.out);
    }
    let packets: usize = g.flows.iter().map(|f| f.pk.t.len()).sum();
    Ok(format!(
        "wrote {} ({} flows drawn, {packets} packets; {} flow tables; {} results)",
        a.out.display(),
        g.flows.len(),
        g.captures.len(),
        g.results.len()
    ))
}

/// Writes the page whole: a temporary file beside it, renamed into place.
fn write(out: &Path, bytes: &[u8]) -> Result<(), Failed> {
    crate::staging::write_whole(out, bytes)
        .map_err(|e| (1, format!("error: {}: {e}", out.display())))
}

/// Opens the page in the desktop's browser (a failure is only reported).
fn open(out: &Path) {
    let r = std::process::Command::new("xdg-open")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = r {
        eprintln!(
            "warning: could not open {} (xdg-open: {e}); open it in a browser",
            out.display()
        );
    }
}
