//! `gentle packetdrill SCRIPT.pkt…`: runs packetdrill scripts (the language of
//! google/packetdrill, `gtests/net/packetdrill/{lexer.l,parser.y}`) against the
//! engine in virtual time. The script's syscalls act on one engine endpoint, its
//! `<` packets are injected, its `>` packets are expected from the engine.
//!
//! A script passes, fails (exit 1: the line, the expected and the actual packet or
//! return value, and the time), is bad (exit 2: `file:line:column`), or is
//! SKIPPED with the reason when it needs a sysctl, syscall or option the engine
//! does not model.

pub mod ast;
mod blocking;
pub mod kernel;
pub mod lexer;
mod options;
mod packet;
pub mod parser;
pub mod run;
mod syscalls;
pub mod sysctl;
mod tcpinfo;

use std::path::{Path, PathBuf};

use gentle_tcp::config::{SwitchKind, SwitchValue};
use gentle_tcp::{Config, Profile};
use serde_json::json;

use run::{Failure, Runner, Stop};
use sysctl::Sysctls;

/// The command's arguments.
#[derive(Clone, Debug)]
pub struct Args {
    /// Scripts to run, in order.
    pub scripts: Vec<PathBuf>,
    /// Engine profile the scripts start from (their sysctls then adjust it).
    pub profile: String,
    /// Set an engine switch after the profile, before the scripts' sysctls.
    pub switches: Vec<String>,
    /// Print one JSON document instead of text.
    pub json: bool,
    /// Do not compare the PSH flag of outbound packets (packetdrill does; `linux-6`
    /// sets it as Linux does, but for the forced push of long writes).
    pub ignore_psh: bool,
    /// Also run every script against the host's kernel, side by side.
    pub kernel: bool,
}

/// How one script ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every expectation held.
    Pass,
    /// An expectation failed.
    Fail(Failure),
    /// It needs something the engine does not model: the line and why.
    Skip(usize, String),
    /// The script is not valid packetdrill, or could not be read: line, column, why.
    Bad(usize, usize, String),
}

/// Parses `KEY=VALUE` onto `cfg` as a scenario file's switch.
pub fn apply_switch(cfg: &mut Config, kv: &str) -> Result<(), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("--switch {kv}: expected KEY=VALUE"))?;
    let sw = Config::switch(k).ok_or_else(|| format!("--switch {k}: no such switch"))?;
    let val = match (sw.kind, v) {
        (_, "true") => SwitchValue::Bool(true),
        (_, "false") => SwitchValue::Bool(false),
        (SwitchKind::DurationOrOff, "off") => SwitchValue::Name(v),
        (SwitchKind::Duration | SwitchKind::DurationOrOff, _) => SwitchValue::Duration(
            crate::units::duration(v).map_err(|e| format!("--switch {k}: {e}"))?,
        ),
        (SwitchKind::Bytes { .. }, _) => {
            SwitchValue::Bytes(crate::units::bytes(v).map_err(|e| format!("--switch {k}: {e}"))?)
        }
        _ => match v.parse::<i64>() {
            Ok(i) => SwitchValue::Int(i),
            Err(_) => SwitchValue::Name(v),
        },
    };
    cfg.set_switch(k, val)
        .map_err(|e| format!("--switch {k}: {} (expected {})", e.message, e.expected))
}

/// Runs one script with `cfg` as the starting switches.
pub fn run_script(path: &Path, cfg: &Config, ignore_psh: bool) -> Outcome {
    let src = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(_) if path.is_dir() => {
            return Outcome::Bad(0, 0, "is a directory; expected a .pkt script".into());
        }
        Err(e) => return Outcome::Bad(0, 0, format!("cannot read: {e}")),
    };
    run_source(path, &src, cfg, ignore_psh)
}

/// Runs a script's text (`path` names it and resolves its relative commands).
pub fn run_source(path: &Path, src: &str, cfg: &Config, ignore_psh: bool) -> Outcome {
    let script = match parser::parse(src) {
        Ok(s) => s,
        Err(e) => return Outcome::Bad(e.line, e.col, e.msg),
    };
    let mut r = Runner::new(path, Sysctls::new(cfg.clone()));
    r.ignore_psh = ignore_psh;
    match r.run(&script) {
        Ok(()) => Outcome::Pass,
        Err(Stop::Fail(f)) => Outcome::Fail(f),
        Err(Stop::Skip(line, why)) => Outcome::Skip(line, why),
    }
}

fn text(path: &Path, o: &Outcome) -> String {
    let p = path.display();
    match o {
        Outcome::Pass => format!("PASS    {p}"),
        Outcome::Fail(f) => {
            let when = run::secs(f.time_us);
            format!("FAIL    {p}:{}: {f}\n  (at {when} sec)", f.line)
        }
        Outcome::Skip(line, why) => format!("SKIPPED {p}:{line}: {why}"),
        // Line 0: the file itself (unreadable), no place in it.
        Outcome::Bad(0, _, m) => format!("BAD     {p}: {m}"),
        Outcome::Bad(l, c, m) => format!("BAD     {p}:{l}:{c}: {m}"),
    }
}

fn to_json(path: &Path, o: &Outcome) -> serde_json::Value {
    let p = path.display().to_string();
    match o {
        Outcome::Pass => json!({"script": p, "status": "pass"}),
        Outcome::Fail(f) => json!({
            "script": p, "status": "fail", "line": f.line, "message": f.msg,
            "expected": f.expected, "actual": f.actual, "time_s": f.time_us as f64 / 1e6,
        }),
        Outcome::Skip(line, why) => {
            json!({"script": p, "status": "skipped", "line": line, "reason": why})
        }
        Outcome::Bad(l, c, m) => {
            json!({"script": p, "status": "bad", "line": l, "column": c, "message": m})
        }
    }
}

/// The verdict's word in the text output.
fn verdict(o: &Outcome) -> &'static str {
    match o {
        Outcome::Pass => "PASS",
        Outcome::Fail(_) => "FAIL",
        Outcome::Skip(..) => "SKIPPED",
        Outcome::Bad(..) => "BAD",
    }
}

/// Pass, fail, skip and bad counts.
fn counts<'o>(os: impl Iterator<Item = &'o Outcome> + Clone) -> [usize; 4] {
    let n = |f: fn(&Outcome) -> bool| os.clone().filter(|o| f(o)).count();
    [
        n(|o| *o == Outcome::Pass),
        n(|o| matches!(o, Outcome::Fail(_))),
        n(|o| matches!(o, Outcome::Skip(..))),
        n(|o| matches!(o, Outcome::Bad(..))),
    ]
}

fn counts_text([pass, fail, skip, bad]: [usize; 4]) -> String {
    format!("{pass} passed, {fail} failed, {skip} skipped, {bad} bad")
}

/// A script's outcome on the engine, and on the kernel with `--kernel`.
type Row = (PathBuf, Outcome, Option<Outcome>);

/// Prints a script's row as soon as it has run (kernel runs take real time).
fn print_row((p, engine, kernel): &Row) {
    let Some(kernel) = kernel else {
        println!("{}", text(p, engine));
        return;
    };
    println!(
        "{:<8} {:<8} {}",
        verdict(engine),
        verdict(kernel),
        p.display()
    );
    for (who, o) in [("engine", engine), ("kernel", kernel)] {
        if *o != Outcome::Pass {
            let t = text(p, o);
            let detail = t.split_once(' ').map_or(&*t, |(_, d)| d.trim_start());
            println!("  {who}: {}", detail.replace('\n', "\n  "));
        }
    }
}

/// The scripts that cannot be read or parsed, as rows (a `--kernel` run checks
/// them all before it changes anything or takes time).
fn bad_scripts(scripts: &[PathBuf]) -> Vec<Row> {
    let mut rows = Vec::new();
    for p in scripts {
        let bad = match std::fs::read_to_string(p) {
            Ok(src) => parser::parse(&src)
                .err()
                .map(|e| Outcome::Bad(e.line, e.col, e.msg)),
            Err(e) => Some(Outcome::Bad(0, 0, format!("cannot read: {e}"))),
        };
        if let Some(b) = bad {
            rows.push((p.clone(), b, None));
        }
    }
    rows
}

/// Before a `--kernel` run: the environment, the scripts, and the host's allowed
/// congestion controls (restored when the guard drops). `Err` is the exit code.
fn prepare_kernel(a: &Args, cfg: &Config) -> Result<kernel::AllowedCc, u8> {
    if let Err(e) = kernel::check_environment() {
        eprintln!(
            "error: --kernel needs root and /dev/net/tun (a network namespace with a TUN device in it): {e}"
        );
        return Err(2);
    }
    let bad = bad_scripts(&a.scripts);
    if !bad.is_empty() {
        if !a.json {
            for r in &bad {
                println!("{}", text(&r.0, &r.1));
            }
        }
        report(a, &bad, None);
        eprintln!("error: no script was run: {} cannot be run", bad.len());
        return Err(2);
    }
    crate::interrupt::install_for("scripts");
    kernel::AllowedCc::ensure(&[cfg.cc.name(), "cubic"]).map_err(|e| {
        eprintln!("error: --kernel: net.ipv4.tcp_allowed_congestion_control: {e}");
        2
    })
}

/// Prints the summary (text) or the whole document (`--json`) of `rows`; `host`
/// names the kernel of a `--kernel` run. Returns the exit code.
fn report(a: &Args, rows: &[Row], host: Option<&str>) -> u8 {
    let engine = counts(rows.iter().map(|r| &r.1));
    let kernel = counts(rows.iter().filter_map(|r| r.2.as_ref()));
    let same = rows
        .iter()
        .filter(|r| r.2.as_ref().is_some_and(|k| verdict(k) == verdict(&r.1)))
        .count();
    if a.json {
        let v: Vec<_> = rows
            .iter()
            .map(|(p, e, k)| {
                let mut j = to_json(p, e);
                if let Some(k) = k {
                    j["kernel"] = to_json(p, k);
                }
                j
            })
            .collect();
        let [pass, fail, skip, bad] = engine;
        let mut doc = json!({"profile": a.profile, "scripts": v, "passed": pass, "failed": fail,
                             "skipped": skip, "bad": bad});
        if let Some(host) = host {
            let [pass, fail, skip, bad] = kernel;
            doc["kernel"] = json!({"host": host, "passed": pass, "failed": fail,
                                   "skipped": skip, "bad": bad, "same_verdict": same});
        }
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    } else if let Some(host) = host {
        println!(
            "engine ({}): {}\nkernel ({host}): {}\nthe same verdict on {same} of {}",
            a.profile,
            counts_text(engine),
            counts_text(kernel),
            rows.len()
        );
    } else {
        println!("{} ({})", counts_text(engine), a.profile);
    }
    if engine[3] > 0 {
        2
    } else if engine[1] + kernel[1] > 0 {
        1
    } else {
        0
    }
}

/// The command: runs every script (on the engine, and with `--kernel` on the
/// host's kernel too), prints the outcomes, returns the exit code (0 all passed
/// or skipped, 1 a failure, 2 a bad script or argument, 130 interrupted: what
/// ran is reported).
pub fn command(a: &Args) -> u8 {
    let Some(profile) = Profile::from_name(&a.profile) else {
        eprintln!(
            "error: unknown profile `{}` (one of {})",
            a.profile,
            Profile::NAMES.join(", ")
        );
        return 2;
    };
    let mut cfg = profile.config();
    for kv in &a.switches {
        if let Err(e) = apply_switch(&mut cfg, kv) {
            eprintln!("error: {e}");
            return 2;
        }
    }
    let _allowed = if a.kernel {
        match prepare_kernel(a, &cfg) {
            Ok(g) => Some(g),
            Err(code) => return code,
        }
    } else {
        None
    };
    if a.kernel && !a.json {
        println!("{:<8} {:<8} script", "engine", "kernel");
    }
    let mut rows: Vec<Row> = Vec::new();
    for p in &a.scripts {
        if crate::interrupt::requested() {
            break;
        }
        let engine = run_script(p, &cfg, a.ignore_psh);
        let on_kernel = a.kernel && !matches!(engine, Outcome::Bad(..));
        let kernel = on_kernel.then(|| kernel::run_script(p, &cfg, a.ignore_psh));
        let row = (p.clone(), engine, kernel);
        if !a.json {
            print_row(&row);
        }
        rows.push(row);
    }
    let host = a
        .kernel
        .then(gentle_real::sysctl::facts)
        .map(|f| match f.hz {
            Some(hz) => format!("Linux {}, HZ {hz}", f.release),
            None => format!("Linux {}", f.release),
        });
    let code = report(a, &rows, host.as_deref());
    if rows.len() < a.scripts.len() {
        eprintln!(
            "interrupted: {} of {} scripts not run",
            a.scripts.len() - rows.len(),
            a.scripts.len()
        );
        return crate::interrupt::EXIT_INTERRUPTED;
    }
    code
}
