//! The README's reproduction output cannot go stale: every fenced block under a
//! `**`name`**` heading of the Reproductions section is checked, line by line,
//! against the experiment's output at full size. When a change moves the numbers,
//! paste the new `gentle reproduce NAME` output into the README.

use std::path::PathBuf;

use gentle_lab::programs::{self, ProgramArgs};
use gentle_lab::{catalogue, report, runner, tsg};

fn readme() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(p).expect("README.md")
}

/// `(experiment, block)` for every fenced block after a `**`name`**` heading.
fn blocks(text: &str) -> Vec<(String, Vec<String>)> {
    let section = &text[text
        .find("## Reproductions")
        .expect("a Reproductions section")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut block: Option<Vec<String>> = None;
    for line in section.lines() {
        if let Some(b) = block.as_mut() {
            if line.starts_with("```") {
                out.push((current.clone().expect("a heading"), block.take().unwrap()));
            } else {
                b.push(line.to_string());
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("**`") {
            current = rest.split('`').next().map(str::to_string);
        } else if line.starts_with("```") && current.is_some() {
            block = Some(Vec::new());
        }
    }
    out
}

fn output(name: &str) -> String {
    if let Some(p) = programs::find(name) {
        return (p.run)(ProgramArgs {
            quick: false,
            out: None,
        })
        .expect("runs")
        .0;
    }
    let (scn, run) = catalogue::run(name, false).expect("a built-in experiment");
    let mut s = report::table(&scn, &run, scn.trials);
    if scn.tsg {
        let flows = runner::observed_flows(&scn, scn.seed, 0);
        let later = tsg::later_write_ms(&scn);
        let facts: Vec<tsg::Facts> = flows.iter().map(|f| tsg::facts(f, later)).collect();
        s += &tsg::facts_text(&facts, later);
    }
    s
}

#[test]
fn the_readme_shows_what_the_reproductions_print() {
    let text = readme();
    let bs = blocks(&text);
    assert!(bs.len() >= 6, "found only {} output blocks", bs.len());
    let mut stale = Vec::new();
    for (name, lines) in bs {
        let out = output(&name);
        for l in lines
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| !l.trim().is_empty())
        {
            if !out.lines().any(|o| o.contains(l)) {
                stale.push(format!("{name}: `{l}`"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "README lines no longer printed by the reproductions:\n{}",
        stale.join("\n")
    );
}
