//! `[sweep]`: a grid of scenario points. Bad sweep tables are reported at
//! `file:line:column` like the rest of a scenario file; a point's seed depends on
//! its coordinates alone, so a point run alone — or in a grid written in another
//! order — gives what it gives in the whole sweep.

use crate::common;

use std::process::Output;

use crate::common::{gentle_in as gentle, root};
use gentle_lab::programs::{
    Builtin, analyze_accuracy, corrective_pages, corrective_table5, fast_start, kernel_vs_sim,
    linux_eras, proactive_fig11, reactive_table1, sessions, tlp_study,
};
use gentle_lab::runner::{self, RunOptions};
use gentle_lab::scenario::{Scenario, Seeding, Sweep, point_seed};
use gentle_lab::{catalogue, report};
use serde_json::Value;

/// The sweep files behind the program experiments, by experiment name (read here
/// only: the programs name their own files).
const SWEEPS: &[(&str, Builtin)] = &[
    ("reactive-table1", reactive_table1::FILE),
    ("tlp-study", tlp_study::FILE),
    ("corrective-table5", corrective_table5::FILE),
    ("corrective-pages", corrective_pages::FILE),
    ("proactive-fig11", proactive_fig11::FILE),
    ("fast-start-fig2", fast_start::FIG2),
    ("fast-start-fig3", fast_start::FIG3),
    ("fast-start-fig4", fast_start::FIG4),
    ("fast-start-fig6", fast_start::FIG6),
    ("fast-start-table2", fast_start::TABLE2),
    ("sessions-fig8", sessions::FIG8),
    ("kernel-vs-sim", kernel_vs_sim::FILE),
];

/// The plain scenario files (no `[sweep]`) behind program experiments.
const SCENARIOS: &[(&str, Builtin)] = &[
    ("fast-start-table1", fast_start::TABLE1),
    ("sessions-bulk", sessions::BULK),
    ("analyze-accuracy", analyze_accuracy::FILE),
    ("linux-eras", linux_eras::REORDERING),
    ("corrective-pages-mobile", corrective_pages::MOBILE),
];

const BASE: &str = r#"name = "grid"
seed = 7
trials = 6
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
loss = { model = "bernoulli", p = 0.02 }
[[workload]]
client = "client"
server = "server"
request = "40B"
response = "6000B"
[[variant]]
name = "old"
profile = "linux-2.6"
[[variant]]
name = "new"
profile = "linux-3.10"
"#;

/// BASE with `sweep` appended.
fn file(sweep: &str) -> String {
    let mut s = BASE.to_string();
    s.push_str(sweep);
    s
}

/// The error of `text`, with the (line, column) of `needle`'s first occurrence
/// from the first sweep table on.
fn error_at(text: &str, needle: &str) -> (gentle_lab::scenario::ScenarioError, usize, usize) {
    let e = Sweep::parse("s.toml", text).expect_err("bad input");
    let from = text.find("[sweep").expect("a sweep table");
    let at = from + text[from..].find(needle).expect("needle in text");
    let line = text[..at].matches('\n').count() + 1;
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (e, line, col)
}

fn assert_at(text: &str, needle: &str, message: &str) {
    let (e, line, col) = error_at(text, needle);
    assert_eq!(e.file, "s.toml");
    assert_eq!(
        (e.line, e.column),
        (line, col),
        "{e}\n(expected at `{needle}`)"
    );
    assert!(e.message.contains(message), "{e}");
}

#[test]
fn a_grid_is_every_combination_first_axis_outermost() {
    let sw = Sweep::parse(
        "s.toml",
        &file(
            r#"
[sweep.loss]
link.loss.p = [0.01, 0.05]
[sweep.size.short]
workload.response = "3000B"
[sweep.size.long]
workload.response = "30000B"
trials = 3
"#,
        ),
    )
    .unwrap();
    assert_eq!(sw.seeding, Seeding::Derived);
    let labels: Vec<String> = sw.points.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "loss=0.01,size=short",
            "loss=0.01,size=long",
            "loss=0.05,size=short",
            "loss=0.05,size=long"
        ]
    );
    let p = sw.point(&[("loss", "0.05"), ("size", "long")]).unwrap();
    assert_eq!(p.scenario.trials, 3);
    assert_eq!(p.scenario.name, "grid loss=0.05 size=long");
    assert_eq!(p.scenario.seed, point_seed(7, &p.coords));
    assert_eq!(sw.point(&[("size", "short")]).unwrap().scenario.trials, 6);
    // Every point has its own seed.
    let mut seeds: Vec<u64> = sw.points.iter().map(|p| p.scenario.seed).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), 4);
}

#[test]
fn seeds_follow_the_coordinates_not_the_order() {
    let a = Sweep::parse(
        "a.toml",
        &file(
            "[sweep.p]\nlink.loss.p = [0.01, 0.02, 0.03]\n[sweep.n]\nworkload.exchanges = [1, 2]\n",
        ),
    )
    .unwrap();
    let b = Sweep::parse(
        "b.toml",
        &file(
            "[sweep.n]\nworkload.exchanges = [2, 1]\n[sweep.p]\nlink.loss.p = [0.03, 0.01, 0.02]\n",
        ),
    )
    .unwrap();
    for p in &a.points {
        let q = b
            .point(&[("p", p.at("p").unwrap()), ("n", p.at("n").unwrap())])
            .unwrap();
        assert_eq!(p.scenario.seed, q.scenario.seed, "{}", p.label());
    }
    // Stable: a point's seed is part of the file format.
    assert_eq!(
        point_seed(1, &[("drops".into(), "5".into())]),
        point_seed(1, &[("drops".into(), "5".into())])
    );
    assert_ne!(
        point_seed(1, &[("drops".into(), "5".into())]),
        point_seed(2, &[("drops".into(), "5".into())])
    );
}

/// The JSON report of one point, without the wall clock.
fn report_of(scn: &Scenario) -> Value {
    let r = runner::run(
        scn,
        &RunOptions {
            trials: scn.trials,
            seed: scn.seed,
            keep_records: false,
            progress: false,
            observe: gentle_lab::runner::Observe::default(),
        },
    );
    let mut j = report::json(scn, &r, scn.trials, scn.seed);
    j.as_object_mut().unwrap().remove("wall_seconds");
    j
}

#[test]
fn a_point_run_alone_equals_the_same_point_in_the_sweep() {
    let text = file(
        "[sweep.p]\nlink.loss.p = [0.01, 0.05]\n[sweep.size]\nworkload.response = [\"3000B\", \"20000B\"]\n",
    );
    let all = Sweep::parse("s.toml", &text).unwrap();
    let whole: Vec<Value> = all.points.iter().map(|p| report_of(&p.scenario)).collect();
    for (i, p) in all.points.iter().enumerate() {
        let mut alone = Sweep::parse("s.toml", &text).unwrap();
        alone.select(&p.label()).unwrap();
        assert_eq!(alone.points.len(), 1);
        assert_eq!(
            report_of(&alone.points[0].scenario),
            whole[i],
            "{}",
            p.label()
        );
    }
    // In a grid written in another order, the same point gives the same result.
    let reordered = file(
        "[sweep.size]\nworkload.response = [\"20000B\", \"3000B\"]\n[sweep.p]\nlink.loss.p = [0.05, 0.01]\n",
    );
    let other = Sweep::parse("r.toml", &reordered).unwrap();
    let q = other.point(&[("p", "0.05"), ("size", "3000B")]).unwrap();
    let p = all.point(&[("p", "0.05"), ("size", "3000B")]).unwrap();
    let (mut x, mut y) = (report_of(&p.scenario), report_of(&q.scenario));
    for j in [&mut x, &mut y] {
        // The name and the point list the axes in the file's order.
        j.as_object_mut().unwrap().remove("point");
        j.as_object_mut().unwrap().remove("scenario");
    }
    assert_eq!(x, y);
}

#[test]
fn reseeding_derives_again_and_keeps_a_points_own_seed() {
    let mut sw = Sweep::parse(
        "s.toml",
        &file("[sweep.x]\na = { seed = 99 }\nb = { trials = 2 }\n"),
    )
    .unwrap();
    assert_eq!(sw.point(&[("x", "a")]).unwrap().scenario.seed, 99);
    sw.reseed(3);
    assert_eq!(sw.point(&[("x", "a")]).unwrap().scenario.seed, 99);
    let b = sw.point(&[("x", "b")]).unwrap();
    assert_eq!(b.scenario.seed, point_seed(3, &b.coords));
    let mut same = Sweep::parse(
        "s.toml",
        &file("[sweep]\nseed = \"scenario\"\n[sweep.x]\nb = { trials = 2 }\n"),
    )
    .unwrap();
    assert_eq!(same.points[0].scenario.seed, 7);
    same.reseed(3);
    assert_eq!(same.points[0].scenario.seed, 3);
}

#[test]
fn points_may_choose_variants_and_tables_by_number_or_name() {
    let sw = Sweep::parse(
        "s.toml",
        &file(
            r#"
[sweep.v]
both = { variant.new.tlp = "off" }
one = { variants = ["new"], variant.2.tlp = "on" }
"#,
        ),
    )
    .unwrap();
    assert_eq!(sw.points[0].scenario.variants.len(), 2);
    assert!(!sw.points[0].scenario.variants[1].config.tlp);
    let one = &sw.points[1].scenario.variants;
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].name, "new");
    assert!(one[0].config.tlp);
}

#[test]
fn bad_sweep_tables_are_reported_where_they_are_written() {
    // A value of the wrong kind for the key it sets: at the value.
    assert_at(
        &file("[sweep.rate]\nlink.rate = [\"10Mbit/s\", \"fast\"]\n"),
        "\"fast\"",
        "(at sweep point rate=fast)",
    );
    assert_at(
        &file("[sweep.n.big]\nworkload.exchanges = 0\n"),
        "0\n",
        "out of range",
    );
    // A path into nothing: at its key.
    assert_at(
        &file("[sweep.x]\nlinks.rate = [\"1Mbit/s\"]\n"),
        "rate",
        "the scenario has no `links`",
    );
    assert_at(
        &file("[sweep.x]\nlink.delay.x = [1]\n"),
        "x = [1]",
        "`link.delay` is not a table",
    );
    assert_at(
        &file("[sweep.x]\nvariant.9.tlp = [\"on\"]\n"),
        "tlp",
        "there are 2 [[variant]] tables",
    );
    // Unknown keys of the scenario, through a sweep: at the key, with a suggestion.
    let (e, line, col) = error_at(&file("[sweep.x]\nlink.rat = [\"1Mbit/s\"]\n"), "rat");
    assert!(e.message.contains("unknown key `rat`"), "{e}");
    assert_eq!((e.line, e.column), (line, col), "{e}");
    assert_eq!(e.help.as_deref(), Some("did you mean `rate`?"));
    // The sweep table itself.
    assert_at(
        &file("[sweep]\nseed = \"random\"\n[sweep.x]\nlink.loss.p = [0.1]\n"),
        "\"random\"",
        "unknown seeding `random`",
    );
    assert_at(
        &file("[sweep]\nseed = \"scenario\"\n"),
        "[sweep]",
        "no axis",
    );
    assert_at(&file("[sweep]\nx = 3\n"), "3", "not an axis");
    assert_at(
        &file("[sweep.x]\nlink.loss.p = 0.1\n"),
        "0.1",
        "is not an array",
    );
    assert_at(
        &file("[sweep.x]\nlink.loss.p = []\n"),
        "[]",
        "has no values",
    );
    assert_at(
        &file("[sweep.x]\nlink.loss.p = [0.1, 0.2, 0.1]\n"),
        "0.1]",
        "value `0.1` appears twice",
    );
    assert_at(
        &file("[sweep.x]\nlink.loss.p = [0.1]\nlink.delay = [\"1ms\"]\n"),
        "[sweep.x]",
        "2 keys, none of them named points",
    );
    assert_at(&file("[sweep.x]\nempty = {}\n"), "empty", "sets nothing");
    assert_at(
        &file("[sweep.x]\na = { variants = [\"old\", \"newer\"] }\n"),
        "\"newer\"",
        "no variant named `newer`",
    );
    assert_at(
        &file("[sweep.x]\na = { sweep = 1 }\n"),
        "sweep = 1",
        "cannot set `sweep`",
    );
    // A sweep file is not one scenario.
    let e = Scenario::parse("s.toml", &file("[sweep.x]\nlink.loss.p = [0.1]\n")).unwrap_err();
    assert!(e.message.contains("a sweep"), "{e}");
}

#[test]
fn selecting_points() {
    let mut sw = Sweep::parse(
        "s.toml",
        &file("[sweep.p]\nlink.loss.p = [0.01, 0.05]\n[sweep.n]\nworkload.exchanges = [1, 2]\n"),
    )
    .unwrap();
    assert!(sw.select("q=1").unwrap_err().contains("no axis `q`"));
    assert!(sw.select("p=0.5").unwrap_err().contains("no value `0.5`"));
    assert!(sw.select("p").unwrap_err().contains("AXIS=VALUE"));
    sw.select("n=2").unwrap();
    assert_eq!(sw.points.len(), 2);
    let mut plain = Sweep::parse("s.toml", BASE).unwrap();
    assert_eq!(plain.points.len(), 1);
    assert!(plain.select("n=2").unwrap_err().contains("no [sweep]"));
}

#[test]
fn built_in_sweeps_keep_their_published_seeds() {
    for (name, b) in SWEEPS {
        let sw = b.sweep();
        assert_eq!(sw.seeding, Seeding::Scenario, "{name}");
        assert!(
            sw.points.iter().all(|p| p.scenario.seed == sw.seed),
            "{name}"
        );
        assert!(b.path.starts_with("examples/"), "{name}");
    }
}

// ---- the command ----

fn json_lines(o: &Output) -> Vec<Value> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).expect("one JSON document a line");
            v.as_object_mut().unwrap().remove("wall_seconds");
            v
        })
        .collect()
}

#[test]
fn the_command_streams_points_and_runs_one_alone() {
    let d = common::scratch("sweep");
    std::fs::write(
        d.join("s.toml"),
        file("[sweep.p]\nlink.loss.p = [0.01, 0.05]\n[sweep.size]\nworkload.response = [\"3000B\", \"20000B\"]\n"),
    )
    .unwrap();
    let all = json_lines(&gentle(&d, &["run", "s.toml", "--json"]));
    assert_eq!(all.len(), 4);
    assert_eq!(all[3]["point"]["p"], "0.05");
    assert_eq!(all[3]["point"]["size"], "20000B");
    let one = json_lines(&gentle(
        &d,
        &["run", "s.toml", "--json", "--point", "p=0.05,size=20000B"],
    ));
    assert_eq!(one, [all[3].clone()]);
    // --seed reseeds the sweep: each point derives its own from it.
    let reseeded = json_lines(&gentle(&d, &["run", "s.toml", "--json", "--seed", "8"]));
    let coords = |v: &Value| -> Vec<(String, String)> {
        ["p", "size"]
            .iter()
            .map(|a| (a.to_string(), v["point"][a].as_str().unwrap().to_string()))
            .collect()
    };
    for v in &reseeded {
        assert_eq!(v["seed"], point_seed(8, &coords(v)));
    }
    let bad = gentle(&d, &["run", "s.toml", "--point", "p=0.5"]);
    assert_eq!(bad.status.code(), Some(2));
    // A built-in sweep runs as a file too, and cites it in errors.
    let tlp = root().join("examples/tlp-study.toml");
    let o = gentle(
        &d,
        &[
            "run",
            tlp.to_str().unwrap(),
            "--quick",
            "--json",
            "--point",
            "network=satellite,drops=3",
        ],
    );
    let v = json_lines(&o);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["seed"], 1);
    assert_eq!(v[0]["trials"], 4);
}

/// Every scenario under `examples/` is a built-in experiment or is run here.
#[test]
fn every_example_is_built_in_or_tested() {
    let mut tested = Vec::new();
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let built_in = catalogue::CATALOGUE
            .iter()
            .any(|e| e.toml == text && e.path() == format!("examples/{name}"))
            || SWEEPS
                .iter()
                .chain(SCENARIOS)
                .any(|(_, b)| b.text == text && b.path == format!("examples/{name}"));
        if !built_in {
            tested.push(name);
        }
    }
    tested.sort();
    assert_eq!(
        tested,
        ["analyze-frontend.toml", "corrective.toml"],
        "add new examples to the catalogue or here"
    );
    // analyze-frontend.toml: the capture `gentle analyze` is tested on
    // (tests/analyze.rs) and `gentle bench` times it on.
    // corrective.toml: Corrective rebuilds lost segments without a timeout and cuts
    // the mean latency of the short queries.
    let text = std::fs::read_to_string(root().join("examples/corrective.toml")).unwrap();
    let sw = Sweep::parse("examples/corrective.toml", &text).unwrap();
    let scn = &sw.points[0].scenario;
    let r = runner::run(
        scn,
        &RunOptions {
            trials: scn.quick_trials,
            seed: scn.seed,
            keep_records: false,
            progress: false,
            observe: gentle_lab::runner::Observe::default(),
        },
    );
    let (base, corr) = (&r.variants[0], &r.variants[1]);
    assert_eq!(base.incomplete + corr.incomplete, 0);
    assert!(corr.counters.corrective_recovered > 0 && base.counters.corrective_recovered == 0);
    assert!(corr.counters.timeouts < base.counters.timeouts);
    assert!(corr.latencies.mean() < base.latencies.mean());
}
