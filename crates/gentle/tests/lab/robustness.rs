//! The command under bad input and interruptions: every case a newcomer met, so none
//! comes back — unreachable nodes, out-of-range flags, Ctrl-C with `--out`, unsafe
//! names, one JSON document, program experiments and their flags, unfinished
//! exchanges, reused output directories.

use crate::common;

use crate::common::gentle_in;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

#[test]
fn absurd_thread_counts_are_refused_at_once() {
    let text = scenario("name = \"t\"\ntrials = 2", "", ONE_VARIANT);
    for n in ["20000", "100000"] {
        let (_, o) = run("threads", &text, &["--threads", n]);
        assert_eq!(o.status.code(), Some(2), "{n}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("--threads {n}: expected 1 to 4096")),
            "{}",
            stderr(&o)
        );
    }
    // More threads than work is fine: the run starts only what it can use.
    let (_, o) = run("threads-ok", &text, &["--threads", "2000"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn output_files_are_checked_before_the_run() {
    let text = scenario("name = \"t\"\ntrials = 2", "", ONE_VARIANT);
    let d = common::scratch("outputs");
    std::fs::write(d.join("s.toml"), &text).unwrap();
    std::fs::create_dir(d.join("adir")).unwrap();
    std::fs::write(d.join("old.jsonl"), "mine").unwrap();
    std::fs::write(d.join("t-trial1-variant1.pcap"), "mine").unwrap();
    std::fs::write(d.join("afile"), "mine").unwrap();
    for (args, needle) in [
        (vec!["--trace", "adir"], "--trace adir: is a directory"),
        (
            vec!["--trace", "missing/t.jsonl"],
            "the directory missing does not exist",
        ),
        (
            vec!["--trace", "old.jsonl"],
            "--trace old.jsonl: the file exists; add --force",
        ),
        (
            vec!["--pcap", "1"],
            "--pcap t-trial1-variant1.pcap: the file exists; add --force",
        ),
        (vec!["--out", "afile"], "--out afile: is a file"),
    ] {
        let mut all = vec!["run", "s.toml"];
        all.extend_from_slice(&args);
        let o = gentle_in(&d, &all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}: ran before refusing");
    }
    assert_eq!(
        std::fs::read_to_string(d.join("old.jsonl")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("t-trial1-variant1.pcap")).unwrap(),
        "mine"
    );
    // --force replaces them.
    let o = gentle_in(
        &d,
        &[
            "run",
            "s.toml",
            "--trace",
            "old.jsonl",
            "--pcap",
            "1",
            "--force",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        std::fs::read_to_string(d.join("old.jsonl")).unwrap(),
        "mine"
    );
    assert!(
        std::fs::metadata(d.join("t-trial1-variant1.pcap"))
            .unwrap()
            .len()
            > 100
    );
}

#[test]
fn a_dead_runs_staging_area_is_removed_and_named() {
    let text = scenario("name = \"t\"\ntrials = 2", "", ONE_VARIANT);
    let d = common::scratch("stale");
    std::fs::write(d.join("s.toml"), &text).unwrap();
    // A staging area whose process is gone (pid_max is below 2^22 + 1 on Linux
    // unless raised; no process has this number).
    let stale = d.join("res/.gentle-staging-4194305");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("records.csv"), "half").unwrap();
    let o = gentle_in(&d, &["run", "s.toml", "--out", "res", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "the stale staging area stayed");
    assert!(
        stderr(&o).contains("process 4194305 is gone"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn nonsense_in_a_scenario_is_refused_with_its_location() {
    let variants = ONE_VARIANT;
    for (text, key, needle) in [
        (
            scenario("name = \"t\"", "", variants)
                .replace("response = \"3000B\"", "response = \"0B\""),
            "response = \"0B\"",
            "0 bytes",
        ),
        (
            scenario("name = \"t\"", "", variants).replace(
                "response = \"3000B\"",
                "response = { dist = \"lognormal\", median = \"5KB\", sigma = -1 }",
            ),
            "response = { dist",
            "sigma",
        ),
        (
            format!(
                "name = \"t\"\n{LINK}\n[[link]]\na = \"client\"\nb = \"server\"\n[[workload]]\nclient = \"client\"\nserver = \"server\"\nresponse = \"3000B\"\n{variants}"
            ),
            "b = \"server\"\n[[workload]]",
            "a second link between `client` and `server`",
        ),
    ] {
        let (d, o) = run("nonsense", &text, &["--out", "res"]);
        assert_eq!(o.status.code(), Some(2), "{key}: {}", stderr(&o));
        let line = text[..text.find(key).unwrap()].matches('\n').count() + 1;
        assert!(
            stderr(&o).contains(&format!("s.toml:{line}:")),
            "{key}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains(needle), "{key}: {}", stderr(&o));
        assert!(!d.join("res").exists());
    }
    // A seed the file could not hold is refused on the command line too.
    let text = scenario("name = \"t\"", "", variants);
    let (_, o) = run("seed", &text, &["--seed", "9223372036854775808"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--seed"), "{}", stderr(&o));
}

#[test]
fn every_experiment_says_it_starts_and_shares_out_with_a_prefix() {
    let d = common::scratch("prefix");
    let o = gentle_in(
        &d,
        &[
            "reproduce",
            "fast-retransmit",
            "reactive-table1",
            "--quick",
            "--out",
            "res",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Off a terminal, a line per experiment as it starts.
    let err = stderr(&o);
    assert!(err.contains("[1/2] fast-retransmit ("), "{err}");
    assert!(err.contains("[2/2] reactive-table1 ("), "{err}");
    // Every file carries its experiment's name.
    let names: Vec<String> = std::fs::read_dir(d.join("res"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert!(
        names.iter().any(|n| n == "fast-retransmit-records.csv"),
        "{names:?}"
    );
    for n in &names {
        assert!(
            n.starts_with("fast-retransmit-") || n.starts_with("reactive-table1"),
            "{n} is not prefixed: {names:?}"
        );
    }
}

#[test]
fn reproduce_without_names_leaves_the_kernel_experiments_out() {
    let o = gentle_in(&common::scratch("nokernel"), &["reproduce", "--list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("kernel-vs-sim"));
    // The note is printed before anything runs; the run itself is stopped at once
    // by an absurd --threads, which is checked after the experiments are chosen.
    let o = gentle_in(
        &common::scratch("nokernel"),
        &["reproduce", "--threads", "5000"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("kernel-vs-sim run only when named"),
        "{}",
        stderr(&o)
    );
}

/// The percentage in row `label` of column `col` of a report's counter table.
fn pct_row(table: &str, label: &str, col: usize) -> f64 {
    let line = table
        .lines()
        .find(|l| l.starts_with(label) && l[label.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row `{label}` in\n{table}"));
    line[label.len()..]
        .split_whitespace()
        .nth(col)
        .unwrap()
        .trim_end_matches('%')
        .parse()
        .unwrap()
}

#[test]
fn every_loss_probe_is_in_exactly_one_row() {
    let o = gentle_in(
        &common::scratch("probes"),
        &["reproduce", "reactive-web", "--quick"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    let kinds = pct_row(&t, "  new data", 1) + pct_row(&t, "  last segment again", 1);
    let none = if t.contains("  none sent") {
        pct_row(&t, "  none sent", 1)
    } else {
        0.0
    };
    assert!((kinds + none - 100.0).abs() < 0.02, "{t}");
    let judged = pct_row(&t, "    plugged the only hole", 1)
        + pct_row(&t, "    unnecessary", 1)
        + pct_row(&t, "    never judged", 1);
    assert!(
        (judged - pct_row(&t, "  last segment again", 1)).abs() < 0.02,
        "{t}"
    );
    assert!(
        pct_row(&t, "    never judged", 1) > 0.0,
        "Linux leaves a probe of the very tail unjudged"
    );
}

#[test]
fn every_difference_has_its_confidence_interval() {
    let o = gentle_in(
        &common::scratch("ci"),
        &["reproduce", "reactive-web", "--quick", "--json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = &j["variants"];
    assert!(v[0]["ci95"].is_null(), "the baseline has no difference");
    let ci = &v[1]["ci95"];
    assert_eq!(ci["resamples"], 1000);
    for k in ["mean", "p25", "p50", "p90", "p99"] {
        let d = v[1]["delta_ms"][k].as_f64().unwrap();
        let (lo, hi) = (
            ci["delta_ms"][k]["lo"].as_f64().unwrap(),
            ci["delta_ms"][k]["hi"].as_f64().unwrap(),
        );
        assert!(lo <= hi, "{k}: [{lo}, {hi}]");
        assert!(
            lo - 1e-9 <= d && d <= hi + 1e-9,
            "{k}: {d} outside [{lo}, {hi}]"
        );
        assert!(ci["delta_pct"][k]["lo"].is_number(), "{k}");
    }
    // Reactive's loss probe shortens the mean: the interval lies below 0.
    assert!(ci["delta_ms"]["mean"]["hi"].as_f64().unwrap() < 0.0, "{ci}");
    // The text table shows the intervals and marks those that hold 0.
    let o = gentle_in(
        &common::scratch("ci"),
        &["reproduce", "reactive-web", "--quick"],
    );
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        t.contains("95% confidence interval of the difference"),
        "{t}"
    );
    let mean_at = t.lines().position(|l| l.starts_with("mean ")).unwrap();
    let under = t.lines().nth(mean_at + 1).unwrap();
    assert!(
        under.trim_start().starts_with('[') && under.trim_end().ends_with(']'),
        "{t}"
    );
    // A difference whose interval holds 0 is marked `~` (prr-latency's upper
    // quantiles, dominated by clients in long fades).
    let o = gentle_in(
        &common::scratch("ci"),
        &["reproduce", "prr-latency", "--quick"],
    );
    let t = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        t.lines().any(|l| ["25 ", "50 ", "90 ", "99 ", "mean "]
            .iter()
            .any(|q| l.starts_with(q))
            && l.contains('~')),
        "{t}"
    );
}

#[test]
fn an_empty_kernel_list_is_refused_before_anything_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fast-retransmit.toml");
    for k in ["", "cubic,,reno"] {
        let o = gentle_in(
            &common::scratch("kernel"),
            &["emulate", root.to_str().unwrap(), "--kernel", k],
        );
        assert_eq!(o.status.code(), Some(2), "{k:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--kernel"), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}
