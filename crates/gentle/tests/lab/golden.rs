//! Golden snapshots: every built-in experiment's `--quick` JSON report (wall-clock
//! time removed, floats rounded to 4 decimals) is compared with the copy under
//! `tests/golden/`. A change in any reproduction's numbers is then always a
//! deliberate one: rerun with `GENTLE_BLESS=1` to accept it, and say which numbers
//! moved and why.
//!
//! ```sh
//! GENTLE_BLESS=1 cargo test --profile ci -p gentle --test lab golden
//! ```

use std::path::PathBuf;

use gentle_lab::programs::{NEEDS_KERNEL, PROGRAMS, ProgramArgs};
use gentle_lab::{catalogue, report};
use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Drops wall-clock fields and rounds floats, so the snapshot holds only what the
/// scenario and seed determine.
fn canonical(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("wall_seconds");
            for x in m.values_mut() {
                canonical(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(canonical),
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().expect("f64");
            *v = serde_json::json!((f * 1e4).round() / 1e4);
        }
        _ => {}
    }
}

fn check(name: &str, mut doc: Value, failures: &mut Vec<String>) {
    canonical(&mut doc);
    let text = serde_json::to_string_pretty(&doc).expect("serialisable") + "\n";
    let path = dir().join(format!("{name}.json"));
    if std::env::var_os("GENTLE_BLESS").is_some() {
        std::fs::create_dir_all(dir()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    match std::fs::read_to_string(&path) {
        Ok(old) if old == text => {}
        Ok(old) => {
            let line = old
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .map_or(old.lines().count().min(text.lines().count()), |i| i);
            let show = |t: &str| t.lines().nth(line).unwrap_or("<end>").trim().to_string();
            failures.push(format!(
                "{name}: differs at line {}: golden `{}`, now `{}`",
                line + 1,
                show(&old),
                show(&text)
            ));
        }
        Err(_) => failures.push(format!("{name}: no snapshot at {}", path.display())),
    }
}

#[test]
fn every_reproduction_matches_its_snapshot() {
    let mut failures = Vec::new();
    for e in catalogue::CATALOGUE {
        let (scn, run) = catalogue::run(e.name, true).expect("built in");
        let doc = report::json(&scn, &run, scn.quick_trials, scn.seed);
        check(e.name, doc, &mut failures);
    }
    for p in PROGRAMS.iter().filter(|p| !NEEDS_KERNEL.contains(&p.name)) {
        let (_, doc) = (p.run)(ProgramArgs {
            quick: true,
            out: None,
        })
        .expect("program runs");
        check(p.name, doc, &mut failures);
    }
    assert!(
        failures.is_empty(),
        "reproductions moved (GENTLE_BLESS=1 to accept):\n{}",
        failures.join("\n")
    );
}
