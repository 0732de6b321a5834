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

/// The command: runs every script, prints the outcomes, returns the exit code
/// (0 all passed or skipped, 1 a failure, 2 a bad script or argument).
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
    let outcomes: Vec<(PathBuf, Outcome)> = a
        .scripts
        .iter()
        .map(|p| (p.clone(), run_script(p, &cfg, a.ignore_psh)))
        .collect();
    let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|(_, o)| f(o)).count();
    let (pass, fail) = (
        count(|o| *o == Outcome::Pass),
        count(|o| matches!(o, Outcome::Fail(_))),
    );
    let (skip, bad) = (
        count(|o| matches!(o, Outcome::Skip(..))),
        count(|o| matches!(o, Outcome::Bad(..))),
    );
    if a.json {
        let v: Vec<_> = outcomes.iter().map(|(p, o)| to_json(p, o)).collect();
        let doc = json!({"profile": a.profile, "scripts": v, "passed": pass, "failed": fail,
                         "skipped": skip, "bad": bad});
        println!("{}", serde_json::to_string_pretty(&doc).expect("JSON"));
    } else {
        for (p, o) in &outcomes {
            println!("{}", text(p, o));
        }
        println!(
            "{pass} passed, {fail} failed, {skip} skipped, {bad} bad ({})",
            a.profile
        );
    }
    if bad > 0 {
        2
    } else if fail > 0 {
        1
    } else {
        0
    }
}
