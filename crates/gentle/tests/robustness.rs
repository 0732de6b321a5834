//! The command under bad input and interruptions: every case a newcomer met, so none
//! comes back — unreachable nodes, out-of-range flags, Ctrl-C with `--out`, unsafe
//! names, one JSON document, program experiments and their flags, unfinished
//! exchanges, reused output directories.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn gentle_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("gentle runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const LINK: &str = r#"
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
"#;

fn scenario(top: &str, workload_extra: &str, variants: &str) -> String {
    format!(
        "{top}\n{LINK}\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nrequest = \"40B\"\nresponse = \"3000B\"\n{workload_extra}\n{variants}"
    )
}

const ONE_VARIANT: &str = "[[variant]]\nprofile = \"linux-2.6\"\n";

/// Writes `text` as s.toml in a fresh directory and runs `gentle run s.toml ARGS`.
fn run(name: &str, text: &str, args: &[&str]) -> (common::Scratch, Output) {
    let d = common::scratch(name);
    std::fs::write(d.join("s.toml"), text).unwrap();
    let mut all = vec!["run", "s.toml"];
    all.extend_from_slice(args);
    let o = gentle_in(&d, &all);
    (d, o)
}

#[test]
fn an_unreachable_server_is_refused_with_its_location() {
    let text = format!(
        "name = \"t\"\ntrials = 5\n{LINK}\n[[link]]\na = \"x\"\nb = \"y\"\n[[workload]]\nclient = \"client\"\nserver = \"y\"\nresponse = \"3000B\"\n{ONE_VARIANT}"
    );
    let (d, o) = run("unreachable", &text, &["--out", "res"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let line = text
        .lines()
        .position(|l| l.starts_with("server = \"y\""))
        .unwrap()
        + 1;
    assert!(
        stderr(&o).contains(&format!("s.toml:{line}:")),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("cannot be reached"), "{}", stderr(&o));
    assert!(!d.join("res").exists(), "no --out directory for bad input");
}

#[test]
fn out_of_range_flags_are_bad_input() {
    let text = scenario("name = \"t\"\ntrials = 10", "", ONE_VARIANT);
    for (args, needle) in [
        (vec!["--trials", "0"], "--trials 0"),
        (vec!["--trials", "1000000000000"], "--trials 1000000000000"),
        (vec!["--threads", "0"], "--threads 0"),
        (vec!["--pcap", "10"], "--pcap 10"),
        (vec!["--trace", "t.jsonl", "--trial", "12"], "--trial 12"),
        (vec!["--trial", "3"], "--trace"),
        (vec!["--trial", "0"], "--trace"),
    ] {
        let (d, o) = run("flags", &text, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}: no report for bad input");
        assert!(!d.join("t.jsonl").exists());
    }
}

#[test]
fn impossible_times_are_refused_with_their_location() {
    for (top, extra, key) in [
        ("name = \"t\"\ntime_limit = \"0s\"", "", "time_limit"),
        (
            "name = \"t\"\ntime_limit = \"10s\"",
            "start = \"20s\"",
            "start",
        ),
        (
            "name = \"t\"\ntime_limit = \"10s\"",
            "jitter = \"10s\"",
            "jitter",
        ),
    ] {
        let text = scenario(top, extra, ONE_VARIANT);
        let (_, o) = run("times", &text, &[]);
        assert_eq!(o.status.code(), Some(2), "{key}: {}", stderr(&o));
        let line = text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
        assert!(
            stderr(&o).contains(&format!("s.toml:{line}:")),
            "{key}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn ctrl_c_removes_the_staging_area_and_exits_130() {
    // Fifty million trials would write gigabytes of CSV: the run says so first.
    let text = scenario("name = \"big\"\ntrials = 50000000", "", ONE_VARIANT);
    let d = common::scratch("sigint");
    std::fs::write(d.join("s.toml"), &text).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(&d)
        .args(["run", "s.toml", "--out", "res"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the run to be writing its staged CSV.
    let start = Instant::now();
    let staged = loop {
        let found = std::fs::read_dir(d.join("res")).ok().and_then(|mut r| {
            r.find_map(|e| {
                let p = e.ok()?.path();
                p.join("records.csv")
                    .metadata()
                    .ok()
                    .filter(|m| m.len() > 0)?;
                Some(p)
            })
        });
        if let Some(p) = found {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no staged CSV appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        staged
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".gentle-staging-")
    );
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("GB of records.csv"), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(!staged.exists(), "staging area left behind");
    assert!(
        !d.join("res").exists(),
        "the --out directory this run created is gone"
    );
}

#[test]
fn names_become_safe_file_names() {
    let text = scenario(
        "name = \"../../x y\"\ntrials = 2",
        "",
        "[[variant]]\nname = \"a/b c\"\nprofile = \"plain\"\n",
    );
    let (d, o) = run("names", &text, &["--pcap", "1", "--out", "res"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let files: Vec<String> = std::fs::read_dir(d.join("res"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        files.iter().any(|f| f == "______x_y-trial1-a_b_c.pcap"),
        "{files:?}"
    );
    // Nothing escaped the output directory.
    assert!(!d.parent().unwrap().join("x y-trial1-a").exists());
    assert!(!d.join("x").exists());
}

#[test]
fn several_experiments_print_one_json_document() {
    let d = common::scratch("json");
    let o = gentle_in(
        &d,
        &[
            "reproduce",
            "fast-retransmit",
            "rto-backoff",
            "reactive-table1",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_slice(&o.stdout).expect("one JSON document on stdout");
    let names: Vec<String> = doc["experiments"]
        .as_array()
        .expect("an array of experiments")
        .iter()
        .map(|e| {
            e["scenario"]
                .as_str()
                .or(e["experiment"].as_str())
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["fast-retransmit", "rto-backoff", "reactive-table1"]);
}

#[test]
fn program_experiments_refuse_flags_they_cannot_honour() {
    let d = common::scratch("progflags");
    for flag in [
        &["--trials", "5"][..],
        &["--seed", "3"],
        &["--pcap", "0"],
        &["--trace", "t.jsonl"],
    ] {
        let mut args = vec!["reproduce", "reactive-table1"];
        args.extend_from_slice(flag);
        let o = gentle_in(&d, &args);
        assert_eq!(o.status.code(), Some(2), "{flag:?}");
        assert!(stderr(&o).contains(flag[0]), "{flag:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    // --out writes their tables.
    let o = gentle_in(&d, &["reproduce", "reactive-table1", "--out", "res"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let txt = std::fs::read_to_string(d.join("res/reactive-table1.txt")).unwrap();
    assert!(txt.contains("AAAL"), "{txt}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("res/reactive-table1.json")).unwrap())
            .unwrap();
    assert_eq!(json["experiment"], "reactive-table1");
    assert!(
        stderr(&o).contains("wrote res/reactive-table1.txt"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unfinished_exchanges_say_why_on_stderr() {
    // Every packet from the client is lost: the SYN never arrives. With the default
    // time limit the SYN retries run out; with a 2 s limit the limit comes first.
    let lossy = r#"
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
b_to_a = { loss = { model = "bernoulli", p = 1.0 } }
"#;
    for (limit, why) in [
        ("600s", "SYN retries exhausted"),
        ("2s", "time limit reached"),
    ] {
        let text = format!(
            "name = \"t\"\ntrials = 3\ntime_limit = \"{limit}\"\n{lossy}\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nresponse = \"3000B\"\n{ONE_VARIANT}"
        );
        let (d, o) = run("unfinished", &text, &["--out", "res"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains("NaN"), "{out}");
        assert!(out.contains("no finished exchange"), "{out}");
        assert!(stderr(&o).contains(&format!("3 {why}")), "{}", stderr(&o));
        assert!(!out.contains(why), "reasons go to stderr, not the table");
        let csv = std::fs::read_to_string(d.join("res/records.csv")).unwrap();
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.ends_with(if limit == "2s" {
                "timelimit"
            } else {
                "synretries"
            }),
            "{row}"
        );
    }
}

#[test]
fn trace_and_pcap_without_out_say_what_they_wrote() {
    let text = scenario("name = \"t\"\ntrials = 2", "", ONE_VARIANT);
    let (d, o) = run("wrote", &text, &["--trace", "t.jsonl", "--pcap", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("wrote t.jsonl"), "{err}");
    assert!(err.contains("wrote t-trial1-variant1.pcap"), "{err}");
    assert!(d.join("t-trial1-variant1.pcap").exists());
}

#[test]
fn a_used_out_directory_needs_force_and_old_results_do_not_mix() {
    let text = scenario("name = \"t\"\ntrials = 3", "", ONE_VARIANT);
    let (d, o) = run("reuse", &text, &["--out", "res", "--pcap", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("res/t-trial2-variant1.pcap").exists());
    std::fs::write(d.join("res/notes.txt"), "mine").unwrap();
    // Refused without --force, and nothing changed.
    let o = gentle_in(&d, &["run", "s.toml", "--out", "res"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert!(d.join("res/t-trial2-variant1.pcap").exists());
    // With --force the old run's files go, the user's stay.
    let o = gentle_in(&d, &["run", "s.toml", "--out", "res", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !d.join("res/t-trial2-variant1.pcap").exists(),
        "old pcap mixed in"
    );
    assert!(d.join("res/records.csv").exists());
    assert_eq!(
        std::fs::read_to_string(d.join("res/notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn one_trial_is_singular_and_no_negative_zero() {
    let text = scenario(
        "name = \"t\"\ntrials = 1",
        "",
        "[[variant]]\nprofile = \"linux-2.6\"\n[[variant]]\nname = \"same\"\nprofile = \"linux-2.6\"\n",
    );
    let (_, o) = run("singular", &text, &[]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(", 1 trial\n"), "{out}");
    assert!(!out.contains("-0.0%") && !out.contains("−0.0%"), "{out}");
}

#[test]
fn tables_fit_100_columns_and_long_names_stay_apart() {
    let mut variants = String::new();
    for (i, p) in [
        "linux-2.6",
        "plain",
        "rfc",
        "linux-3.10",
        "linux-6",
        "plain",
    ]
    .iter()
    .enumerate()
    {
        variants += &format!("[[variant]]\nname = \"a-rather-long-name-{i}\"\nprofile = \"{p}\"\n");
    }
    let text = scenario("name = \"t\"\ntrials = 20", "", &variants);
    let (_, o) = run("wide", &text, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for l in out.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    for i in 0..6 {
        let name = format!("a-rather-long-name-{i}");
        // Every name appears as a whole word in a header, in both tables.
        let headers = out
            .lines()
            .filter(|l| l.split_whitespace().any(|w| w == name))
            .count();
        assert!(headers >= 2, "{name} in {headers} headers:\n{out}");
    }
}

#[test]
fn exchanges_that_never_started_are_counted_as_unfinished() {
    // Persistent connections whose handshake never completes, and a path too long
    // for the time limit: every exchange of every trial has a record and a reason.
    let lossy = r#"
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
b_to_a = { loss = { model = "bernoulli", p = 1.0 } }
"#;
    let slow = "\n[[link]]\na = \"server\"\nb = \"client\"\ndelay = \"1000000s\"\n";
    for (link, limit, why) in [
        (lossy, "600s", "SYN retries exhausted"),
        (slow, "3s", "time limit reached"),
    ] {
        let text = format!(
            "name = \"t\"\ntrials = 4\ntime_limit = \"{limit}\"\n{link}\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nresponse = \"3000B\"\nexchanges = 3\nconnection = \"persistent\"\n{ONE_VARIANT}"
        );
        let (d, o) = run("never", &text, &["--out", "res"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("12 unfinished exchanges: 12 {why}")),
            "{}",
            stderr(&o)
        );
        let csv = std::fs::read_to_string(d.join("res/records.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 12, "{csv}");
    }
}

#[test]
fn colliding_or_empty_names_are_refused() {
    let text = scenario(
        "name = \"t\"\ntrials = 2",
        "",
        "[[variant]]\nname = \"a/b\"\nprofile = \"plain\"\n[[variant]]\nname = \"a b\"\nprofile = \"rfc\"\n",
    );
    let (_, o) = run("collide", &text, &["--pcap", "0", "--out", "res"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("`a/b` and `a b`"), "{}", stderr(&o));
    let text = scenario("name = \"\"\ntrials = 2", "", ONE_VARIANT);
    let (_, o) = run("empty", &text, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn run_quick_uses_the_quick_trials() {
    let text = scenario(
        "name = \"t\"\ntrials = 500\nquick_trials = 7",
        "",
        ONE_VARIANT,
    );
    let (_, o) = run("quick", &text, &["--quick"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(", 7 trials"));
}

#[test]
fn plot_adds_its_files_and_never_removes_others() {
    let text = scenario("name = \"t\"\ntrials = 2", "", ONE_VARIANT);
    let (d, o) = run("plot", &text, &["--out", "res", "--trace", "t.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = gentle_in(&d, &["plot", "tsg", "t.jsonl", "--out", "res"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "records.csv",
        "summary.json",
        "cdf.png",
        "tsg.png",
        "tsg.svg",
    ] {
        assert!(d.join("res").join(f).exists(), "{f}");
    }
    // A second plot into the same place needs --force.
    let o = gentle_in(&d, &["plot", "tsg", "t.jsonl", "--out", "res"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"));
    let o = gentle_in(&d, &["plot", "tsg", "t.jsonl", "--out", "res", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(d.join("res/records.csv").exists());
}

#[test]
fn list_with_names_lists_those() {
    let d = common::scratch("list");
    let o = gentle_in(&d, &["reproduce", "--list", "linux-eras"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("linux-eras"), "{out}");
    assert_eq!(
        out.lines().filter(|l| !l.starts_with(' ')).count(),
        1,
        "{out}"
    );
    let o = gentle_in(&d, &["reproduce", "--list", "nope"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_billion_trials_start_at_once_in_little_memory() {
    // Trial blocks are made a wave at a time and results are counted by value:
    // resident memory stays small however many trials are asked for.
    let text = scenario("name = \"t\"\ntrials = 1000000000", "", ONE_VARIANT);
    let d = common::scratch("billion");
    std::fs::write(d.join("s.toml"), &text).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(&d)
        .args(["run", "s.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let rss_kb: u64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(rss_kb < 100_000, "{rss_kb} kB resident after 3 s");
}

#[test]
fn a_bad_backend_is_refused_with_its_location() {
    let backend_link = "\n[[link]]\na = \"server\"\nb = \"db\"\ndelay = \"5ms\"\n";
    let cases: [(&str, &str, &str, &str); 4] = [
        (
            "backend = { node = \"nowhere\" }",
            "",
            "backend = ",
            "not on any link",
        ),
        (
            "backend = { node = \"client\" }",
            "",
            "backend = ",
            "a third node",
        ),
        (
            "backend = { node = \"db\", pools = 2 }",
            "",
            "backend = ",
            "pools",
        ),
        (
            "backend = { node = \"db\" }",
            "backend = { proactive = \"sometimes\" }",
            "backend = { proactive",
            "sometimes",
        ),
    ];
    for (k, (workload, variant, at, says)) in cases.iter().enumerate() {
        let text = format!(
            "name = \"t\"\ntrials = 5\n{LINK}{backend_link}\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nrequest = \"40B\"\nresponse = \"3000B\"\n{workload}\n[[variant]]\nname = \"a\"\n{variant}\n"
        );
        let (_, o) = run(&format!("backend{k}"), &text, &[]);
        assert_eq!(o.status.code(), Some(2), "case {k}: {}", stderr(&o));
        let line = text.lines().position(|l| l.starts_with(at)).unwrap() + 1;
        let e = stderr(&o);
        assert!(e.contains(&format!("s.toml:{line}:")), "case {k}: {e}");
        assert!(e.contains(says), "case {k}: {e}");
    }
}

#[test]
fn a_variant_backend_table_needs_a_backend_and_only_switches() {
    let backend_link = "\n[[link]]\na = \"server\"\nb = \"db\"\ndelay = \"5ms\"\n";
    let cases: [(&str, &str); 2] = [
        ("", "no workload has a backend"),
        ("backend = { node = \"db\" }", "unknown key"),
    ];
    for (k, (workload, says)) in cases.iter().enumerate() {
        let variant = if k == 0 {
            "backend = { proactive = \"on\" }"
        } else {
            "backend = { backend = { proactive = \"on\" } }"
        };
        let text = format!(
            "name = \"t\"\ntrials = 5\n{LINK}{backend_link}\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nrequest = \"40B\"\nresponse = \"3000B\"\n{workload}\n[[variant]]\nname = \"a\"\n{variant}\n"
        );
        let (_, o) = run(&format!("vbackend{k}"), &text, &[]);
        assert_eq!(o.status.code(), Some(2), "case {k}: {}", stderr(&o));
        let line = text
            .lines()
            .position(|l| l.starts_with("backend = {") && l.contains("proactive"))
            .unwrap()
            + 1;
        let e = stderr(&o);
        assert!(e.contains(&format!("s.toml:{line}:")), "case {k}: {e}");
        assert!(e.to_lowercase().contains(says), "case {k}: {e}");
    }
}
