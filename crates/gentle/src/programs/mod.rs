//! Built-in experiments that are programs rather than one scenario file: they build
//! several scenarios, run them, and print a table of their own.

pub mod reactive_table1;

/// A built-in program experiment.
pub struct Program {
    pub name: &'static str,
    pub summary: &'static str,
    /// Runs it; returns the text report and the JSON document.
    pub run: fn() -> (String, serde_json::Value),
}

fn reactive_table1() -> (String, serde_json::Value) {
    let rows = reactive_table1::run();
    (
        reactive_table1::text(&rows),
        serde_json::json!({ "experiment": "reactive-table1", "rows": rows }),
    )
}

pub const PROGRAMS: &[Program] = &[Program {
    name: "reactive-table1",
    summary: "tail-loss patterns of a 10-segment response: RTO without the loss probe, fast recovery with it (gentle-aggression Table 1)",
    run: reactive_table1,
}];

pub fn find(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.name == name)
}
