//! `gentle calibrate`: a scenario's free parameters fitted to target statistics.
//! The fit recovers parameters whose statistics were measured (targets taken from a
//! run at known values, the search started elsewhere); it is a function of the
//! seed; bad input is refused at its place before any work, and nothing is
//! written.

use crate::common;

use std::path::Path;

use crate::common::gentle;
use gentle_lab::calibrate::{self, Options};
use gentle_lab::runner::{self, Observe, RunOptions};
use gentle_lab::scenario::Scenario;
use gentle_lab::scenario::calibrate::Calibratable;
use gentle_lab::scenario::targets::parse_targets;

/// A lossy path whose loss rate and burst structure are free: `p` of the first
/// packet of a burst, and the share of first losses that take the rest.
fn scenario(p: f64, rest: f64) -> String {
    format!(
        r#"name = "fit-me"
seed = 3
trials = 3000
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = {{ median = "30ms", sigma = 0.5 }}
a_to_b = {{ loss = {{ model = "burst-position", p = {p}, slope = 0.2, rest_of_burst = {rest} }} }}
[[workload]]
client = "client"
server = "server"
request = "300B"
response = {{ dist = "choice", sizes = ["1400B", "6KB", "20KB"] }}
exchanges = 2
connection = "persistent"
think = "100ms"
[[variant]]
name = "Linux"
profile = "linux-3.10"
[calibrate]
trials = 1500
candidates = 80
[calibrate.free]
link.a_to_b.loss.p = {{ min = 0.001, max = 0.1, log = true }}
link.a_to_b.loss.rest_of_burst = {{ min = 0.0, max = 1.0 }}
"#
    )
}

const STATS: [&str; 3] = [
    "RetransSegs / OutSegs",
    "LossyBursts1 / LossyBursts",
    "ExchangesWithRetrans / Exchanges",
];

/// The targets file of the statistics of `text`'s scenario, measured over
/// `trials` trials from `seed`.
fn measured_targets(text: &str, trials: u64, seed: u64) -> String {
    let scn = Scenario::parse("truth.toml", text).expect("valid");
    let r = runner::run(
        &scn,
        &RunOptions {
            trials,
            seed,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let names = calibrate::stats::counter_names();
    let mut out = String::new();
    for s in STATS {
        let stat = gentle_lab::scenario::targets::parse_stat(s, &names).expect("a statistic");
        let v = calibrate::stats::value(&stat, &r.variants[0]).expect("defined");
        out += &format!("[[target]]\nstat = \"{s}\"\nvalue = {v}\nsource = \"measured\"\n");
    }
    out
}

#[test]
fn a_calibration_recovers_the_parameters_its_targets_were_measured_at() {
    // The truth: p = 0.01, rest = 0.7, measured from another seed and more trials
    // than the calibration runs (the targets carry their own noise). The search
    // starts at p = 0.04, rest = 0.1.
    let targets = measured_targets(&scenario(0.01, 0.7), 6000, 99);
    let cal = Calibratable::parse("start.toml", &scenario(0.04, 0.1)).expect("valid");
    let names = calibrate::stats::counter_names();
    let targets = parse_targets("t.toml", &targets, &names).expect("valid targets");
    let fit = calibrate::calibrate(
        &cal,
        &targets,
        &Options {
            candidates: 80,
            trials: 1500,
            seed: 3,
            progress: false,
        },
    )
    .expect("a fit");
    let (p, rest) = (fit.best.values[0], fit.best.values[1]);
    assert!((0.007..=0.014).contains(&p), "p fitted to {p}, truth 0.01");
    assert!(
        (0.5..=0.9).contains(&rest),
        "rest_of_burst fitted to {rest}, truth 0.7"
    );
    assert!(
        fit.best.loss < fit.start.loss / 20.0,
        "{} vs {}",
        fit.best.loss,
        fit.start.loss
    );
    assert_eq!(targets.len(), STATS.len());
    for (i, stat) in STATS.iter().enumerate() {
        assert!(
            fit.fitted(i, &targets),
            "target {} not fitted: {:?} (p {p}, rest {rest})",
            stat,
            fit.best.stats[i]
        );
        assert!(
            fit.noise[i].is_some_and(|sd| sd > 0.0),
            "the noise of {stat}"
        );
    }
}

#[test]
fn the_command_writes_the_fitted_scenario_and_the_same_seed_fits_the_same() {
    let dir = common::scratch("calibrate");
    let scn = dir.join("s.toml");
    std::fs::write(&scn, scenario(0.04, 0.1)).unwrap();
    let t = dir.join("t.toml");
    std::fs::write(&t, measured_targets(&scenario(0.01, 0.7), 3000, 5)).unwrap();
    let run = |out: &Path, threads: &str| {
        let o = gentle(&[
            "calibrate",
            scn.to_str().unwrap(),
            "--targets",
            t.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--candidates",
            "30",
            "--trials",
            "600",
            "--threads",
            threads,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let (a, b) = (dir.join("a.toml"), dir.join("b.toml"));
    let report = run(&a, "2");
    run(&b, "1");
    let fitted = std::fs::read_to_string(&a).unwrap();
    assert_eq!(
        fitted,
        std::fs::read_to_string(&b).unwrap(),
        "same seed, same fit, on 2 threads and on 1"
    );
    // The report names every parameter and target; the file is a scenario with the
    // fitted values, its comments and [calibrate] kept, under a header saying how.
    for s in STATS
        .iter()
        .chain(&["link.a_to_b.loss.p", "link.a_to_b.loss.rest_of_burst"])
    {
        assert!(report.contains(s), "{s} in\n{report}");
    }
    assert!(report.contains("targets within 10%"), "{report}");
    assert!(
        fitted.starts_with("# Fitted by `gentle calibrate"),
        "{fitted}"
    );
    assert!(fitted.contains("[calibrate.free]"));
    let cal = Calibratable::parse("fitted.toml", &fitted).expect("the fitted file reads");
    assert_ne!(cal.start, vec![0.04, 0.1], "the values moved");
    // The fitted file's values are the report's.
    let p = cal.start[0].to_string();
    assert!(report.contains(&p), "{p} in\n{report}");
}

#[test]
fn only_refits_the_parameters_it_names_and_keeps_the_earlier_header() {
    let dir = common::scratch("calibrate-only");
    let scn = dir.join("s.toml");
    let fitted_before = format!(
        "# Fitted by `gentle calibrate s.toml --targets t.toml --seed 3 --trials 9 --candidates 9`:\n# 1 of 3 targets\n{}",
        scenario(0.04, 0.1)
    );
    std::fs::write(&scn, &fitted_before).unwrap();
    let t = dir.join("t.toml");
    std::fs::write(&t, measured_targets(&scenario(0.01, 0.1), 1500, 5)).unwrap();
    let out = dir.join("refit.toml");
    let args = |only: &str| {
        vec![
            "calibrate".to_string(),
            scn.display().to_string(),
            "--targets".into(),
            t.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--candidates".into(),
            "12".into(),
            "--trials".into(),
            "300".into(),
            "--only".into(),
            only.into(),
        ]
    };
    let run = |a: Vec<String>| gentle(&a.iter().map(String::as_str).collect::<Vec<_>>());
    // An unknown name: exit 2, the names there are, nothing written.
    let o = run(args("link.a_to_b.loss.slope"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--only: `link.a_to_b.loss.slope` is not a free parameter")
            && err.contains("link.a_to_b.loss.p, link.a_to_b.loss.rest_of_burst"),
        "{err}"
    );
    assert!(!out.exists());
    let o = run(args("link.a_to_b.loss.p"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(
        !report.contains("rest_of_burst"),
        "only p is searched:\n{report}"
    );
    let fitted = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = fitted.lines().collect();
    assert!(
        lines[0].starts_with("# Refitted by `gentle calibrate")
            && lines[0].ends_with("--only link.a_to_b.loss.p`:"),
        "{fitted}"
    );
    assert!(
        lines[2].starts_with("# Fitted by `gentle calibrate s.toml"),
        "{fitted}"
    );
    let cal = Calibratable::parse("refit.toml", &fitted).expect("the fitted file reads");
    assert_eq!(cal.start[1], 0.1, "rest_of_burst held");
    assert!(cal.start[0] < 0.03, "p moved toward 0.01: {}", cal.start[0]);
}

#[test]
fn bad_input_is_refused_at_its_place_before_any_work() {
    let dir = common::scratch("calibrate-bad");
    let t = dir.join("t.toml");
    std::fs::write(
        &t,
        "[[target]]\nstat = \"RetransSegs / OutSegs\"\nvalue = 0.02\n",
    )
    .unwrap();
    let out = dir.join("out.toml");
    let case = |name: &str, scenario: &str, targets: Option<&str>, want: &str| {
        let s = dir.join(format!("{name}.toml"));
        std::fs::write(&s, scenario).unwrap();
        let tf = match targets {
            Some(text) => {
                let p = dir.join(format!("{name}-targets.toml"));
                std::fs::write(&p, text).unwrap();
                p
            }
            None => t.clone(),
        };
        let o = gentle(&[
            "calibrate",
            s.to_str().unwrap(),
            "--targets",
            tf.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(want), "{name}: `{want}` in\n{err}");
        assert!(!out.exists(), "{name}: nothing written");
    };
    let good = scenario(0.02, 0.5);
    let without = good[..good.find("[calibrate]").unwrap()].to_string();
    case(
        "no-table",
        &without,
        None,
        "no-table.toml:1:1: error: missing key `calibrate`",
    );
    let bad_path = good.replace("link.a_to_b.loss.p =", "link.a_to_b.los.p =");
    case(
        "bad-path",
        &bad_path,
        None,
        "bad-path.toml:25:17: error: `link.a_to_b.los.p`: the scenario has no `link.a_to_b.los`",
    );
    let empty = good.replace("min = 0.001, max = 0.1", "min = 0.1, max = 0.001");
    case("empty-range", &empty, None, "the range is empty");
    let log0 = good.replace(
        "min = 0.001, max = 0.1, log = true",
        "min = 0.0, max = 0.1, log = true",
    );
    case(
        "log-zero",
        &log0,
        None,
        "a log scale needs a positive range",
    );
    let too_high = good.replace("min = 0.0, max = 1.0", "min = 0.0, max = 2.0");
    case("bad-value", &too_high, None, "makes a bad scenario");
    case(
        "unknown-stat",
        &good,
        Some("[[target]]\nstat = \"RetransSeg / OutSegs\"\nvalue = 0.02\n"),
        "unknown-stat-targets.toml:2:8: error: `stat` in [[target]] #1: unknown statistic `RetransSeg`; did you mean `RetransSegs`?",
    );
    case(
        "unknown-server-stat",
        &good,
        Some("[[target]]\nstat = \"Server.TCPFastRetran / Server.RetransSegs\"\nvalue = 0.2\n"),
        "unknown statistic `Server.TCPFastRetran`; did you mean `Server.TCPFastRetrans`?",
    );
    case(
        "misspelt-prefix",
        &good,
        Some("[[target]]\nstat = \"Sever.TCPFastRetrans / Server.RetransSegs\"\nvalue = 0.2\n"),
        "unknown statistic `Sever.TCPFastRetrans`; did you mean `Server.TCPFastRetrans`?",
    );
    case(
        "no-targets",
        &good,
        Some("# nothing\n"),
        "missing key `target`",
    );
    case(
        "zero-target",
        &good,
        Some("[[target]]\nstat = \"RetransSegs / OutSegs\"\nvalue = 0\n"),
        "zero-target-targets.toml:3:9: error: `value` in [[target]] #1: a target must be above 0",
    );
    // With two [[link]] tables a path must say which.
    let two = good.replace(
        "[[workload]]",
        "[[link]]\na = \"client\"\nb = \"other\"\n[[workload]]",
    );
    case("ambiguous", &two, None, "there are 2 [[link]] tables");
    // An existing --out is kept without --force.
    std::fs::write(&out, "keep").unwrap();
    let s = dir.join("good.toml");
    std::fs::write(&s, &good).unwrap();
    let o = gentle(&[
        "calibrate",
        s.to_str().unwrap(),
        "--targets",
        t.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("add --force"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
}

#[test]
fn a_population_draws_its_members_by_share() {
    // Two members, one with a lossless path and one that loses every first packet
    // of a burst: the share of exchanges with a retransmission is the lossy
    // member's share.
    let text = r#"name = "mix"
seed = 4
trials = 4000
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
a_to_b = { loss = { model = "none" } }
[population.clean]
share = 3
[population.lossy]
share = 1
link.a_to_b.loss = { model = "drop-list", segments = [1] }
[[workload]]
client = "client"
server = "server"
request = "300B"
response = "1000B"
[[variant]]
name = "Linux"
profile = "linux-3.10"
"#;
    let scn = Scenario::parse("mix.toml", text).expect("valid");
    assert_eq!(scn.population.len(), 2);
    assert!((scn.population[1].share - 0.25).abs() < 1e-12);
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: 4000,
            seed: 4,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let v = &r.variants[0];
    let share = v.with_retransmission as f64 / v.exchanges as f64;
    assert!((share - 0.25).abs() < 0.025, "{share}");
    // A member may set link and workload keys only, and keeps the workloads.
    let e = Scenario::parse("m.toml", &text.replace("link.a_to_b.loss =", "seed =")).unwrap_err();
    assert!(
        e.message
            .contains("a member sets link and workload keys only"),
        "{e}"
    );
    assert_eq!((e.line, e.column), (14, 1), "{e}");
}

/// The statistics of population `population`'s calibrated variant, run as its
/// `[calibrate]` table says (its trials, its seed), against the targets of `file`.
#[test]
fn a_fitted_file_written_elsewhere_builds_on_the_same_base_with_the_umasks_mode() {
    // prr-latency builds on `populations/google-2011-dc1.toml`, a path relative to
    // its own directory: written elsewhere, the fitted file names its base from there.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = common::scratch("calibrate-base");
    let out = dir.join("fitted.toml");
    let o = gentle(&[
        "calibrate",
        root.join("examples/prr-latency.toml").to_str().unwrap(),
        "--targets",
        root.join("examples/calibration/prr-latency-services-targets.toml")
            .to_str()
            .unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--candidates",
        "2",
        "--trials",
        "100",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fitted = std::fs::read_to_string(&out).unwrap();
    let base = fitted
        .lines()
        .find_map(|l| l.strip_prefix("base = "))
        .expect("a base");
    assert_ne!(base, "\"populations/google-2011-dc1.toml\"", "{fitted}");
    let run = gentle(&["run", out.to_str().unwrap(), "--trials", "20"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The mode `fs::write` gives a new file (the umask's), not the temporary file's
    // owner-only one.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let plain = dir.join("plain");
    std::fs::write(&plain, "x").unwrap();
    assert_eq!(mode(&out), mode(&plain), "{:o}", mode(&out));
}

fn fit_of(population: &str, file: &str) -> Vec<(String, f64, f64)> {
    fit_of_seeded(population, file, None)
}

/// [`fit_of`] from seed `seed` (the scenario's own without), as a calibration
/// given `--seed` runs.
fn fit_of_seeded(population: &str, file: &str, seed: Option<u64>) -> Vec<(String, f64, f64)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join(population)).expect("the population");
    let cal = Calibratable::parse(population, &text).expect("calibratable");
    let root = root.join(file);
    let text = std::fs::read_to_string(&root).expect("the targets file");
    let names = calibrate::stats::counter_names();
    let targets = parse_targets(file, &text, &names).expect("valid targets");
    let mut scn = cal.scenario.clone();
    scn.variants = vec![scn.variants.swap_remove(cal.spec.variant)];
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: cal.spec.trials.expect("a calibration size"),
            seed: seed.unwrap_or(scn.seed),
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    targets
        .iter()
        .map(|t| {
            let v = calibrate::stats::value(&t.stat, &r.variants[0]).expect("defined");
            (t.stat.text.clone(), v, t.value)
        })
        .collect()
}

/// Each of `fits` is within 10% of its target exactly when `claimed` names it.
fn assert_within_10pct_exactly(fits: &[(String, f64, f64)], claimed: &[&str]) {
    for (stat, v, t) in fits {
        let within = (v - t).abs() <= 0.10 * t;
        assert_eq!(
            within,
            claimed.contains(&stat.as_str()),
            "{stat}: {v} against {t}"
        );
    }
}

#[test]
fn the_reactive_web_population_fits_what_the_readme_says_it_fits() {
    // On the population's own seed (1) and the calibration's size it matches the
    // replies with loss, the retransmission rate, the fast-retransmit share, Table
    // 4's timeout retransmissions (all, in Open and outside it) and the undos within
    // 10%, and misses the rest.
    let fits = fit_of(
        "examples/populations/google-2013.toml",
        "examples/calibration/google-2013-targets.toml",
    );
    let claimed = [
        "ExchangesWithLoss / Exchanges",
        "Server.RetransSegs / Server.OutSegs",
        "Server.TCPFastRetrans / Server.RetransSegs",
        "(Server.RetransSegs - Server.TCPFastRetrans - Server.TCPSlowStartRetrans) / Server.RetransSegs",
        "(Server.TimeoutsOpen + Server.SynTimeouts) / Server.RetransSegs",
        "(Server.RetransSegs - Server.TCPFastRetrans - Server.TCPSlowStartRetrans - Server.TimeoutsOpen - Server.SynTimeouts) / Server.RetransSegs",
        "(Server.TCPFullUndo + Server.TCPPartialUndo + Server.TCPDSACKUndo + Server.TCPLossUndo) / Server.RetransSegs",
    ];
    assert_eq!(fits.len(), 11);
    assert_within_10pct_exactly(&fits, &claimed);
}

#[test]
fn the_dc1_population_fits_what_the_readme_says_it_fits() {
    // The README (prr-latency): on the calibration's seed (2) and size (20000
    // trials) the population matches 8 of the 12 within 10% (the retransmission
    // rate, counted as Linux's MIB counts it, and Table 3's fast recoveries causing
    // DSACKs among them); the fast retransmits' share and their number per
    // recovery, the timeouts in Open and the recoveries' DSACKs per fast
    // retransmit are 10-16% off.
    let fits = fit_of_seeded(
        "examples/populations/google-2011-dc1.toml",
        "examples/calibration/google-2011-dc1-targets.toml",
        Some(2),
    );
    let claimed = [
        "Server.RetransSegs / Server.OutSegs",
        "ExchangesWithServerRetrans / Exchanges",
        "Server.TimeoutsDisorder / Server.RetransSegs",
        "Server.TimeoutsRecovery / Server.RetransSegs",
        "Server.TimeoutsLoss / Server.RetransSegs",
        "Server.TCPSlowStartRetrans / Server.RetransSegs",
        "Server.RecoveriesDsacked / Server.RecoveryEpisodes",
        "Server.TCPLostRetransmit / Server.TCPFastRetrans",
    ];
    assert_eq!(fits.len(), 12);
    assert_within_10pct_exactly(&fits, &claimed);
}

#[test]
fn the_dc2_population_fits_what_the_readme_says_it_fits() {
    // Its header: on the calibration's own seed and size, after the reordering's
    // refit, the population matches the fast, slow-start and back-off shares, the
    // timeouts in Disorder and Recovery, the fast retransmits per recovery, the
    // recoveries' DSACKs and Table 10's transmit time within 10%, and misses the
    // rest (the retransmission rate, timeouts in Open, lost retransmits, the RTT).
    let fits = fit_of(
        "examples/populations/india-2011-dc2.toml",
        "examples/calibration/india-2011-dc2-targets.toml",
    );
    let claimed = [
        "Server.TCPFastRetrans / Server.RetransSegs",
        "(Server.TimeoutsDisorder + Server.TimeoutsRecovery) / Server.RetransSegs",
        "Server.TimeoutsLoss / Server.RetransSegs",
        "Server.TCPSlowStartRetrans / Server.RetransSegs",
        "Server.TCPFastRetrans / Server.RecoveryEpisodes",
        "Server.RecoveriesDsacked / Server.TCPFastRetrans",
        "latency.mean",
    ];
    assert_eq!(fits.len(), 11);
    assert_within_10pct_exactly(&fits, &claimed);
}

#[test]
fn a_scenario_built_on_a_base_adds_its_variants_and_overrides_its_keys() {
    let dir = common::scratch("base");
    std::fs::create_dir(dir.join("pop")).unwrap();
    std::fs::write(dir.join("pop/base.toml"), scenario(0.02, 0.5)).unwrap();
    let text = r#"base = "pop/base.toml"
name = "built-on"
trials = 7
[[link]]
a = "x"
b = "y"
[[variant]]
name = "Linux 2.6"
profile = "linux-2.6"
"#;
    // [[link]] tables follow the base's (a second link), [[variant]] too; plain
    // keys replace the base's; [calibrate] and everything else is the base's.
    let file = dir.join("s.toml");
    let scn = Scenario::parse(file.to_str().unwrap(), text).expect("valid");
    assert_eq!(
        (scn.name.as_str(), scn.trials, scn.seed),
        ("built-on", 7, 3)
    );
    let names: Vec<&str> = scn.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["Linux", "Linux 2.6"]);
    assert_eq!(scn.links.len(), 2);
    // Bad bases: a file that is not there, at the `base` key; a base with a base; and
    // a calibration of a file with a base (the base is what is calibrated).
    let missing = Scenario::parse(file.to_str().unwrap(), "base = \"nope.toml\"\n").unwrap_err();
    assert!(missing.message.contains("cannot read"), "{missing}");
    assert_eq!((missing.line, missing.column), (1, 8), "{missing}");
    // A base on a base of its own is laid over it (its path relative to its own
    // directory); bases that name each other are refused at the `base` key.
    std::fs::write(
        dir.join("pop/chained.toml"),
        "base = \"base.toml\"\nname = \"chained\"\n[[variant]]\nname = \"Linux 3.x\"\nprofile = \"linux-3.10\"\n",
    )
    .unwrap();
    let chained =
        Scenario::parse(file.to_str().unwrap(), "base = \"pop/chained.toml\"\n").expect("valid");
    let names: Vec<&str> = chained.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        (chained.name.as_str(), names),
        ("chained", vec!["Linux", "Linux 3.x"])
    );
    std::fs::write(dir.join("pop/a.toml"), "base = \"b.toml\"\n").unwrap();
    std::fs::write(dir.join("pop/b.toml"), "base = \"a.toml\"\n").unwrap();
    let cycle = Scenario::parse(file.to_str().unwrap(), "base = \"pop/a.toml\"\n").unwrap_err();
    assert!(cycle.message.contains("bases deep"), "{cycle}");
    assert_eq!(cycle.line, 1, "{cycle}");
    let e = Calibratable::parse(file.to_str().unwrap(), text).unwrap_err();
    assert!(e.to_string().contains("calibrate the base itself"), "{e}");
    // With a [calibrate] of its own, the file fits keys of its own (its second link,
    // which is its only [[link]]); a path into the base's tables is refused.
    let own = format!(
        "{text}delay = \"10ms\"\n[calibrate]\ntrials = 10\ncandidates = 5\n[calibrate.free]\nlink.delay = {{ min = 1, max = 50, unit = \"ms\" }}\n"
    )
    .replace("b = \"y\"\n[[variant]]", "b = \"y\"\ndelay = \"10ms\"\n[[variant]]");
    let own = own.replacen("delay = \"10ms\"\n[calibrate]", "[calibrate]", 1);
    let c = Calibratable::parse(file.to_str().unwrap(), &own).expect("calibratable");
    assert_eq!(c.start, [10.0]);
    let at = c.at(&[40.0]).expect("a scenario");
    assert_eq!(at.links.len(), 2);
    assert_eq!(
        at.links[0], c.scenario.links[0],
        "the base's link is the base's"
    );
    assert_ne!(
        at.links[1], c.scenario.links[1],
        "the file's own link moves"
    );
    let into_base = own.replace("link.delay = {", "workload.think = {");
    let e = Calibratable::parse(file.to_str().unwrap(), &into_base).unwrap_err();
    assert!(e.message.contains("fits keys of its own"), "{e}");
}

#[test]
fn a_scenario_built_on_a_base_changes_its_workloads_and_variants_in_place() {
    let dir = common::scratch("base-workload");
    std::fs::write(dir.join("base.toml"), scenario(0.02, 0.5)).unwrap();
    // `[workload]` as a table lays its keys over every workload of the base; a
    // [[variant]] named as one of the base's replaces it where it stands.
    let text = r#"base = "base.toml"
[workload]
connection = "fresh"
exchanges = 1
[[variant]]
name = "Linux"
profile = "linux-2.6"
[[variant]]
name = "TLP"
profile = "linux-3.10"
"#;
    let file = dir.join("s.toml");
    let scn = Scenario::parse(file.to_str().unwrap(), text).expect("valid");
    let base = Scenario::parse(
        dir.join("base.toml").to_str().unwrap(),
        &scenario(0.02, 0.5),
    )
    .unwrap();
    assert_eq!(scn.workloads.len(), 1);
    let (w, b) = (&scn.workloads[0], &base.workloads[0]);
    use gentle_sim::workload::{ConnectionMode, WorkloadKind};
    let exchanges = |w: &gentle_sim::workload::WorkloadSpec| match &w.kind {
        WorkloadKind::Exchanges {
            exchanges,
            mode,
            response,
            ..
        } => (*exchanges, *mode, response.clone()),
        k => panic!("{k:?}"),
    };
    let ((n, mode, response), (bn, bmode, bresponse)) = (exchanges(w), exchanges(b));
    assert_eq!((n, mode), (1, ConnectionMode::Fresh));
    assert_eq!((bn, bmode), (2, ConnectionMode::Persistent));
    // Everything else of the workload is the base's.
    assert_eq!(
        (&w.client, &w.server, response),
        (&b.client, &b.server, bresponse)
    );
    let names: Vec<&str> = scn.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["Linux", "TLP"]);
    // The base's Linux 3.10 has the tail loss probe; the replacement, Linux 2.6, not.
    assert!(base.variants[0].config.tlp);
    assert!(!scn.variants[0].config.tlp);
}

#[test]
fn the_table6_backend_fits_what_its_header_says() {
    // The 2013 frontends, built on the 2013 population, fit their own backend leg:
    // the backend's retransmission rate of data, p25, p50 and the mean RT within
    // 10% on the calibration's seed (p90 and p99 are long).
    let fits = fit_of(
        "examples/populations/google-2013-frontends.toml",
        "examples/calibration/google-2013-backend-targets.toml",
    );
    let claimed = [
        "(Backend.RetransSegs - Backend.TCPSynRetrans) / Backend.DataSegsOut",
        "latency.p25",
        "latency.p50",
        "latency.mean",
    ];
    assert_eq!(fits.len(), 6);
    assert_within_10pct_exactly(&fits, &claimed);
    // The README: Proactive takes the backend rate to under a third (0.13%; the
    // paper 0.91% to 0.13%), and its effect on the mean RT is lost in the client
    // leg's spread (under 4%, where the paper has 13%).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let file = root.join("proactive-table6-population.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let scn = Scenario::parse(file.to_str().unwrap(), &text).unwrap();
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: scn.quick_trials,
            seed: scn.seed,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let rate = |v: &runner::VariantResult| {
        v.backend.data_retrans_segs() as f64 / v.backend.data_segs_out as f64
    };
    let (linux, proactive) = (&r.variants[0], &r.variants[1]);
    assert!(
        rate(proactive) < 0.0035 && rate(linux) > 0.008,
        "{} {}",
        rate(linux),
        rate(proactive)
    );
    let change = proactive.latencies.mean() / linux.latencies.mean() - 1.0;
    assert!((-0.04..0.0).contains(&change), "mean RT {change:+.3}");
}

#[test]
fn reactive_web_runs_on_the_2013_population() {
    // The population file is reactive-web's base; the experiment adds its variant.
    let r = gentle_lab::catalogue::find("reactive-web")
        .unwrap()
        .scenario();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/populations");
    let text = std::fs::read_to_string(root.join("google-2013.toml")).unwrap();
    let pop = Scenario::parse("google-2013.toml", &text).unwrap();
    assert_eq!(
        (&r.links, &r.population, &r.workloads),
        (&pop.links, &pop.population, &pop.workloads)
    );
    let names: Vec<&str> = r.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["Linux", "Reactive"]);
}

#[test]
fn tables_2_and_6_run_on_one_frontend_population() {
    // proactive-table6-population and combined-table2-population are built on the
    // 2013 frontends unchanged (their links, population and workloads the base's),
    // with Table 6's Linux 2.6 and Table 2's Linux 3.10 without the probe first.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let parse = |name: &str| {
        let file = root.join(name);
        let text = std::fs::read_to_string(&file).unwrap();
        Scenario::parse(file.to_str().unwrap(), &text).unwrap()
    };
    let pop = parse("populations/google-2013-frontends.toml");
    let t6 = parse("proactive-table6-population.toml");
    let t2 = parse("combined-table2-population.toml");
    for s in [&t6, &t2] {
        assert!(s.links == pop.links, "{}: links", s.name);
        assert!(s.workloads == pop.workloads, "{}: workloads", s.name);
        assert_eq!(s.population.len(), pop.population.len(), "{}", s.name);
    }
    let names = |s: &Scenario| {
        s.variants
            .iter()
            .map(|v| v.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&t6), ["Linux", "Proactive"]);
    assert_eq!(names(&t2), ["Linux", "Proactive + Reactive"]);
    assert!(t6.variants[0].config == pop.variants[0].config);
    assert!(!t2.variants[0].config.tlp && t2.variants[1].config.tlp);
    // The README (combined-table2): the population's Linux RT at p25, p50 and p90
    // is within 15% of Table 2's (362, 487, 940 ms), which it was not fitted to, and
    // the combination moves the mean by a few percent (the paper −14%).
    let r = runner::run(
        &t2,
        &RunOptions {
            trials: t2.quick_trials,
            seed: t2.seed,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let (linux, both) = (&r.variants[0].latencies, &r.variants[1].latencies);
    for (q, paper) in [(0.25, 362.0), (0.5, 487.0), (0.9, 940.0)] {
        let v = linux.quantile(q) / 1e6; // ns to ms
        assert!((v / paper - 1.0).abs() < 0.15, "p{}: {v} ms", q * 100.0);
    }
    let change = both.mean() / linux.mean() - 1.0;
    assert!((-0.05..-0.01).contains(&change), "mean RT {change:+.3}");
}

#[test]
fn the_dc1_experiments_run_on_one_population() {
    // prr-latency and er-reordering are built on the same base, unchanged: their
    // networks are the base's, and so are their workloads but for the size of
    // prr-latency's responses (Table 9's two services, fitted on their own).
    let prr = gentle_lab::catalogue::find("prr-latency")
        .unwrap()
        .scenario();
    let er = gentle_lab::catalogue::find("er-reordering")
        .unwrap()
        .scenario();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/populations");
    let text = std::fs::read_to_string(root.join("google-2011-dc1.toml")).unwrap();
    let pop = Scenario::parse("google-2011-dc1.toml", &text).unwrap();
    // Every workload of a scenario and of its population's members, without the
    // response size when `drop_size`.
    let workloads = |s: &Scenario, drop_size: bool| {
        let all = std::iter::once(&s.workloads).chain(s.population.iter().map(|m| &m.workloads));
        let specs = |ws: &Vec<std::sync::Arc<gentle_sim::workload::WorkloadSpec>>| {
            ws.iter().map(|w| (**w).clone()).collect::<Vec<_>>()
        };
        let mut v = serde_json::to_value(all.map(specs).collect::<Vec<_>>()).unwrap();
        for ws in v.as_array_mut().unwrap() {
            for w in ws.as_array_mut().unwrap() {
                let kind = w["kind"].as_object_mut().unwrap();
                if drop_size {
                    kind.remove("response").expect("a response size");
                }
            }
        }
        v
    };
    for s in [&prr, &er] {
        assert!(s.links == pop.links, "{}: links", s.name);
        let members = |s: &Scenario| {
            let m = s.population.iter();
            m.map(|m| (m.name.clone(), m.share, m.links.clone()))
                .collect::<Vec<_>>()
        };
        assert!(members(s) == members(&pop), "{}: population", s.name);
        assert_eq!(s.variants[0].name, "Linux");
        assert!(s.variants[0].config == pop.variants[0].config);
    }
    assert!(workloads(&er, false) == workloads(&pop, false));
    assert!(workloads(&prr, true) == workloads(&pop, true));
    assert!(workloads(&prr, false) != workloads(&pop, false));
}

#[test]
fn prr_latency_services_fit_what_the_readme_says_they_fit() {
    // The README (prr-latency): the response size of Table 9's services, fitted on
    // the DC1 population to the baseline's latencies, matches p25 and p50 within
    // 10% on the calibration's seed, where p90 and the mean (heavy-tailed) are 10%
    // and 13% off; the fit's other seeds hold all four within 10% or the noise.
    let fits = fit_of(
        "examples/prr-latency.toml",
        "examples/calibration/prr-latency-services-targets.toml",
    );
    assert_eq!(fits.len(), 4);
    assert_within_10pct_exactly(&fits, &["latency.p25", "latency.p50"]);
}

#[test]
fn a_statistic_subtracts_atoms() {
    let names = calibrate::stats::counter_names();
    let parse = |s: &str| gentle_lab::scenario::targets::parse_stat(s, &names);
    let table4 = "(Server.RetransSegs - Server.TCPFastRetrans - Server.TCPSlowStartRetrans) / Server.RetransSegs";
    assert_eq!(parse(table4).unwrap().text, table4);
    assert_eq!(
        parse("-TCPFastRetrans + RetransSegs").unwrap().text,
        "-TCPFastRetrans + RetransSegs"
    );
    assert!(parse("RetransSegs - ").is_err());
    assert!(
        parse("RetransSegs - Nonsense")
            .unwrap_err()
            .contains("Nonsense")
    );

    let scn = Scenario::parse("minus.toml", &scenario(0.03, 0.5)).unwrap();
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: 300,
            seed: 3,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let v = &r.variants[0];
    let at = |s: &str| calibrate::stats::value(&parse(s).unwrap(), v).unwrap();
    let c = &v.counters;
    assert!(
        c.fast_retrans > 0 && c.retrans_segs > c.fast_retrans,
        "{c:?}"
    );
    assert_eq!(
        at("RetransSegs - TCPFastRetrans"),
        (c.retrans_segs - c.fast_retrans) as f64
    );
    assert_eq!(
        at("(RetransSegs - TCPFastRetrans) / RetransSegs"),
        (c.retrans_segs - c.fast_retrans) as f64 / c.retrans_segs as f64
    );
}

#[test]
fn latency_targets_name_the_retransmitted_and_the_lost_responses() {
    let names = calibrate::stats::counter_names();
    let parse = |s: &str| gentle_lab::scenario::targets::parse_stat(s, &names);
    for ok in [
        "latency.retransmitted.p25",
        "latency.retransmitted.mean",
        "latency.lost.p99.9",
        "latency.p50",
    ] {
        assert_eq!(parse(ok).expect(ok).text, ok);
    }
    let e = parse("latency.lost.p100").unwrap_err();
    assert!(e.contains("latency.lost.p1"), "{e}");
    assert!(parse("latency.retransmited.p50").is_err());

    // A scenario that ranks its retransmitted responses: `latency.*` and
    // `latency.retransmitted.*` are the same numbers; the lost ones are others.
    let text = scenario(0.02, 0.5).replace(
        "name = \"fit-me\"",
        "name = \"fit-me\"\nfilter = \"retransmitted\"",
    );
    let scn = Scenario::parse("subsets.toml", &text).unwrap();
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: 600,
            seed: 5,
            keep_records: true,
            progress: false,
            observe: Observe::default(),
        },
    );
    let v = &r.variants[0];
    let at = |s: &str| calibrate::stats::value(&parse(s).unwrap(), v).unwrap();
    assert_eq!(at("latency.p50"), at("latency.retransmitted.p50"));
    assert_eq!(at("latency.mean"), at("latency.retransmitted.mean"));
    let complete = |f: fn(&gentle_sim::record::ExchangeRecord) -> bool| {
        v.records.iter().filter(|r| r.complete && f(r)).count()
    };
    assert_eq!(v.retransmitted.len(), complete(|r| r.had_retransmission()));
    assert_eq!(v.lost.len(), complete(|r| r.had_loss()));
    assert!(v.lost.len() > 20, "{} lost", v.lost.len());
    let lost_mean = v
        .records
        .iter()
        .filter(|r| r.complete && r.had_loss())
        .map(|r| r.server_ns.unwrap() as f64 / 1e6)
        .sum::<f64>()
        / v.lost.len() as f64;
    assert!((at("latency.lost.mean") - lost_mean).abs() < 1e-6 * lost_mean);
}

#[test]
fn a_log_normal_size_keeps_the_mean_it_is_given() {
    use gentle_sim::workload::{Size, WorkloadKind};
    use rand::SeedableRng;
    let with = |response: &str| {
        let text = scenario(0.01, 0.5).replace(
            r#"response = { dist = "choice", sizes = ["1400B", "6KB", "20KB"] }"#,
            &format!("response = {response}"),
        );
        Scenario::parse("lognormal.toml", &text).map(|s| match &s.workloads[0].kind {
            WorkloadKind::Exchanges { response, .. } => response.clone(),
            k => panic!("{k:?}"),
        })
    };
    let Size::LogNormal { median, sigma } =
        with(r#"{ dist = "lognormal", mean = "7.5KB", sigma = 1.5 }"#).unwrap()
    else {
        panic!("a log-normal size")
    };
    assert_eq!(sigma, 1.5);
    assert!((median - 7500.0 * (-1.125f64).exp()).abs() < 1e-9);
    let size = Size::LogNormal { median, sigma };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let n = 400_000;
    let mean = (0..n).map(|_| size.sample(&mut rng) as f64).sum::<f64>() / n as f64;
    assert!((mean / 7500.0 - 1.0).abs() < 0.03, "{mean}");
    let both =
        with(r#"{ dist = "lognormal", mean = "7.5KB", median = "4KB", sigma = 1 }"#).unwrap_err();
    assert!(both.to_string().contains("not both"), "{both}");
    let neither = with(r#"{ dist = "lognormal", sigma = 1 }"#).unwrap_err();
    assert!(neither.to_string().contains("median"), "{neither}");
}

#[test]
fn a_target_counts_as_fitted_by_its_value_on_seeds_the_search_did_not_see() {
    use gentle_lab::calibrate::{Evaluation, Fit};
    let names = calibrate::stats::counter_names();
    let targets = parse_targets(
        "t.toml",
        "[[target]]\nstat = \"RetransSegs / OutSegs\"\nvalue = 0.02\n",
        &names,
    )
    .unwrap();
    let at = |x: f64| Evaluation {
        values: vec![0.5],
        stats: vec![Some(x)],
        loss: 0.0,
    };
    let fit = |seed: f64, others: Option<f64>, sd: f64| Fit {
        start: at(0.05),
        best: at(seed),
        candidates: 10,
        evaluations: 10,
        finalists: 1,
        noise: vec![Some(sd)],
        other_seeds: vec![others],
        trials: 100,
        wall_seconds: 0.0,
    };
    // On the search's seed exactly the target, elsewhere 30% off: not fitted ...
    assert!(!fit(0.02, Some(0.026), 0.001).fitted(0, &targets));
    // ... unless that is within the noise; and 5% off elsewhere is fitted.
    assert!(fit(0.02, Some(0.026), 0.004).fitted(0, &targets));
    assert!(fit(0.03, Some(0.021), 0.001).fitted(0, &targets));
    // Without other runs, the search's own value is what there is.
    assert!(fit(0.021, None, 0.0).fitted(0, &targets));
}

#[test]
fn recovery_starts_count_table_5s_rows() {
    // `RecoveryStarts*` count the fast-recovery episodes by how pipe stood against
    // ssthresh as each began: the three rows add up to the episodes, and each is
    // what the recovery table prints.
    let names = calibrate::stats::counter_names();
    let parse = |s: &str| gentle_lab::scenario::targets::parse_stat(s, &names).expect(s);
    let scn = Scenario::parse("starts.toml", &scenario(0.03, 0.6)).unwrap();
    let r = runner::run(
        &scn,
        &RunOptions {
            trials: 600,
            seed: 7,
            keep_records: false,
            progress: false,
            observe: Observe::default(),
        },
    );
    let v = &r.variants[0];
    let at = |s: &str| calibrate::stats::value(&parse(s), v).unwrap();
    let all = at("RecoveryStarts");
    assert_eq!(all, v.episodes.len() as f64);
    assert!(all > 50.0, "{all} episodes");
    let rows = ["Below", "At", "Above"].map(|w| at(&format!("RecoveryStarts{w}Ssthresh")));
    assert_eq!(rows.iter().sum::<f64>(), all);
    let below = v.episodes.start.share(|x| x < 0).unwrap();
    assert_eq!(at("RecoveryStartsBelowSsthresh / RecoveryStarts"), below);
    assert!(rows.iter().all(|&x| x > 0.0), "{rows:?}");
}

#[test]
fn check_reports_the_scenario_as_written_and_writes_nothing() {
    // `--check`: the DC1 population's statistics beside its targets (Tables 1–3),
    // the same values a run of its calibration's size and seed gives, no search,
    // no file; with `--out` it is refused before any work.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (pop, targets) = (
        "examples/populations/google-2011-dc1.toml",
        "examples/calibration/google-2011-dc1-targets.toml",
    );
    let dir = common::scratch("check");
    let args = |extra: &[&str]| {
        let mut v = vec!["calibrate", pop, "--targets", targets, "--seed", "2"];
        v.extend_from_slice(extra);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_gentle"))
            .current_dir(&root)
            .args(args(extra))
            .output()
            .unwrap()
    };
    let o = run(&["--check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = String::from_utf8(o.stdout).unwrap();
    assert!(
        report.contains("the scenario as written against 12 targets"),
        "{report}"
    );
    for (stat, value, _) in fit_of_seeded(pop, targets, Some(2)) {
        let line = report.lines().find(|l| l.starts_with(&stat)).expect(&stat);
        // The "this seed" column, to the digits it shows.
        let shown = line.split_whitespace().nth_back(4).unwrap();
        let digits = shown.split('.').nth(1).map_or(0, str::len) as i32;
        let x: f64 = shown.parse().unwrap();
        assert!(
            (x - value).abs() <= 0.5 * 10f64.powi(-digits) + 1e-12,
            "{line}: {value}"
        );
    }
    assert!(report.contains("of 12 targets within 10%"), "{report}");
    let out = dir.join("x.toml");
    let o = run(&["--check", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--check"));
    assert!(!out.exists());
}
