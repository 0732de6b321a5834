//! `gentle reproduce [NAME...]`: the built-in experiments (the catalogue's scenarios
//! and the programs), all of them but those needing the kernel when none is named.

use std::io::Write;

use super::run::{
    Announce, RunFlags, check_flags, finish, open_staged, print_json, run_scenarios, to_checked,
};
use crate::catalogue::{self, CATALOGUE};
use crate::programs::{self, PROGRAMS, Program};
use crate::scenario::Scenario;
use crate::{LabError, checks, interrupt, staging, units};

/// `gentle reproduce`: `list` prints the experiments (those named, or all); else
/// the named experiments run, or all of them. Returns the exit status.
pub fn reproduce(names: &[String], list: bool, quick: bool, flags: RunFlags) -> u8 {
    if list {
        return super::exit_status(print_list(names));
    }
    super::exit_status(run_experiments(names, quick, &flags))
}

/// The experiments with their summaries in one column from 21 to 100 characters.
fn print_list(names: &[String]) -> Result<bool, LabError> {
    // With names, only those (and an unknown one is bad input).
    if let Some(n) = names
        .iter()
        .find(|n| catalogue::find(n).is_none() && programs::find(n).is_none())
    {
        return Err(unknown(n));
    }
    let mut out = std::io::stdout().lock();
    let all = CATALOGUE
        .iter()
        .map(|e| (e.name, e.summary))
        .chain(PROGRAMS.iter().map(|p| (p.name, p.summary)));
    for (name, summary) in all.filter(|(n, _)| names.is_empty() || names.iter().any(|x| x == n)) {
        // Wrapped alike on every line: a long name takes its own line.
        let col = " ".repeat(21);
        let text = units::wrap(&format!("{col}{summary}"), 100, 21);
        let text = &text[21..];
        let _ = if name.chars().count() < 21 {
            writeln!(out, "{name:<20} {text}")
        } else {
            writeln!(out, "{name}\n{col}{text}")
        };
    }
    Ok(true)
}

fn unknown(name: &str) -> LabError {
    LabError::Input(format!(
        "no experiment named `{name}` (see `gentle reproduce --list`)"
    ))
}

/// The named experiments (each once), or every one that needs no kernel.
fn resolve(names: &[String]) -> Result<(Vec<Scenario>, Vec<&'static Program>), LabError> {
    let mut scns = Vec::new();
    let mut progs = Vec::new();
    if names.is_empty() {
        scns.extend(CATALOGUE.iter());
        // Real-mode experiments take minutes of real time and root: named alone.
        progs.extend(
            PROGRAMS
                .iter()
                .filter(|p| !programs::NEEDS_KERNEL.contains(&p.name)),
        );
        eprintln!(
            "note: {} run only when named (real mode, minutes of real time): gentle reproduce {}",
            programs::NEEDS_KERNEL.join(", "),
            programs::NEEDS_KERNEL.join(" ")
        );
    } else {
        let mut seen = Vec::new();
        for n in names {
            if seen.contains(n) {
                continue; // named twice: run once
            }
            seen.push(n.clone());
            if let Some(e) = catalogue::find(n) {
                scns.push(e);
            } else if let Some(p) = programs::find(n) {
                progs.push(p);
            } else {
                return Err(unknown(n));
            }
        }
    }
    Ok((scns.into_iter().map(|e| e.scenario()).collect(), progs))
}

fn run_experiments(names: &[String], quick: bool, flags: &RunFlags) -> Result<bool, LabError> {
    let (scns, progs) = resolve(names)?;
    let prog_names: Vec<&str> = progs.iter().map(|p| p.name).collect();
    checks::program_args(&prog_names, &to_checked(flags)).map_err(LabError::Input)?;
    check_flags(&scns, flags, quick)?;
    let mut staged = open_staged(flags)?;
    interrupt::install();
    let mut docs = Vec::new();
    let mut says = Announce::new(scns.len() + progs.len());
    if !scns.is_empty()
        && !run_scenarios(&scns, flags, quick, staged.as_mut(), &mut docs, &mut says)?
    {
        return Ok(false);
    }
    for p in progs {
        says.line(p.name, if quick { "quick sizes" } else { "full sizes" });
        run_program(p, quick, flags.json, staged.as_mut(), &mut docs)?;
    }
    if flags.json {
        // One document: the experiments in the order they ran.
        let doc = if docs.len() == 1 {
            docs.pop().expect("one")
        } else {
            serde_json::json!({ "experiments": docs })
        };
        print_json(&doc);
    }
    finish(staged)
}

/// One program: its text printed (or its JSON kept for the document), both written
/// into `--out`.
fn run_program(
    p: &Program,
    quick: bool,
    json: bool,
    mut staged: Option<&mut staging::Staged>,
    docs: &mut Vec<serde_json::Value>,
) -> Result<(), LabError> {
    let args = programs::ProgramArgs {
        quick,
        out: staged.as_deref_mut(),
    };
    let (text, doc) = (p.run)(args).map_err(|e| LabError::Run(format!("{}: {e}", p.name)))?;
    if interrupt::requested() {
        eprintln!("interrupted: {} abandoned; nothing was written", p.name);
        return Err(LabError::Interrupted);
    }
    if let Some(st) = staged {
        let stem = staging::file_name(p.name);
        let j = serde_json::to_string_pretty(&doc).expect("serialisable");
        st.write(&format!("{stem}.txt"), text.as_bytes())
            .and_then(|()| st.write(&format!("{stem}.json"), j.as_bytes()))
            .map_err(|e| LabError::Run(format!("writing results: {e}")))?;
    }
    if json {
        docs.push(doc);
    } else {
        let _ = writeln!(std::io::stdout().lock(), "{text}");
    }
    Ok(())
}
