//! The switch table in `crates/tcp/src/config.rs` is the one source of truth: the
//! README's table is generated from it, every value it shows parses back to
//! itself, and every bad value is refused at its place with what was expected.
//!
//! To refresh the README after changing the table:
//! `GENTLE_UPDATE_README=1 cargo test --profile ci -p gentle --test lab switches`.

use std::path::PathBuf;

use gentle_lab::scenario::{Scenario, ScenarioError, switch_table};
use gentle_tcp::config::{Switch, SwitchKind};
use gentle_tcp::{Config, Profile};

const BEGIN: &str = "<!-- switches: generated from crates/tcp/src/config.rs -->\n";
const END: &str = "<!-- /switches -->";

#[test]
fn the_readme_switch_table_is_the_engine_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let start = readme
        .find(BEGIN)
        .expect("the README marks its switch table")
        + BEGIN.len();
    let end = start + readme[start..].find(END).expect("the table's end marker");
    let want = switch_table();
    if readme[start..end] != want {
        if std::env::var_os("GENTLE_UPDATE_README").is_some() {
            let new = format!("{}{want}{}", &readme[..start], &readme[end..]);
            std::fs::write(&path, new).expect("README.md written");
            return;
        }
        panic!(
            "the README's switch table is stale; run\n  GENTLE_UPDATE_README=1 cargo test --profile ci -p gentle --test lab switches\nor paste:\n{want}"
        );
    }
}

const HEAD: &str = r#"name = "t"
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "20ms"
[[workload]]
client = "client"
server = "server"
response = "3000B"
"#;

fn parse(variant: &str) -> Result<Config, ScenarioError> {
    let text = format!("{HEAD}[[variant]]\n{variant}\n");
    Scenario::parse("s.toml", &text).map(|s| Config::clone(&s.variants[0].config))
}

fn switches() -> impl Iterator<Item = &'static Switch> {
    Config::SWITCHES
        .iter()
        .filter(|s| s.kind != SwitchKind::Fixed)
}

#[test]
fn every_shown_value_parses_back_to_itself() {
    for &p in Profile::ALL {
        let base = p.config();
        for sw in switches() {
            let v = base.switch_value(sw.name).expect("a value");
            let line = format!("profile = \"{}\"\n{} = {}", p.name(), sw.name, sw.show(v));
            let c = parse(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(c, base, "{line}");
        }
    }
}

#[test]
fn every_name_and_bound_of_a_switch_is_accepted() {
    for sw in switches() {
        let values: Vec<String> = match sw.kind {
            SwitchKind::Choice { names, .. } => names.iter().map(|n| format!("\"{n}\"")).collect(),
            SwitchKind::Int { min, max } => vec![min.to_string(), max.to_string()],
            SwitchKind::Flag => vec!["true".into(), "false".into()],
            SwitchKind::OnOff => ["\"on\"", "\"off\"", "true", "false"]
                .map(String::from)
                .into(),
            SwitchKind::Duration => vec!["\"1.5s\"".into(), "\"250ms\"".into()],
            SwitchKind::DurationOrOff => vec!["\"off\"".into(), "\"7ms\"".into()],
            SwitchKind::Bytes { .. } => vec!["\"536B\"".into(), "\"1GiB\"".into()],
            SwitchKind::Fixed => unreachable!(),
        };
        for v in values {
            let line = format!("{} = {v}", sw.name);
            let c = parse(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let got = c.switch_value(sw.name).expect("a value");
            let shown = sw.show(got);
            let same = match sw.kind {
                SwitchKind::OnOff => {
                    shown == v.replace("true", "\"on\"").replace("false", "\"off\"")
                }
                SwitchKind::Duration | SwitchKind::DurationOrOff | SwitchKind::Bytes { .. } => true,
                _ => shown == v,
            };
            assert!(same, "{line} reads back as {shown}");
        }
    }
}

/// The error for `line` in a variant, which must point at the value (`at`).
fn refused(line: &str, at: &str) -> ScenarioError {
    let text = format!("{HEAD}[[variant]]\n{line}\n");
    let e = Scenario::parse("s.toml", &text).expect_err(line);
    let off = text.rfind(at).expect("the value in the text");
    let want_line = text[..off].matches('\n').count() + 1;
    let want_col = off - text[..off].rfind('\n').map_or(0, |i| i + 1) + 1;
    assert_eq!(
        (e.file.as_str(), e.line, e.column),
        ("s.toml", want_line, want_col),
        "{line}: {e}"
    );
    e
}

#[test]
fn a_value_of_the_wrong_type_is_refused_with_what_the_switch_takes() {
    for sw in switches() {
        let line = format!("{} = [1]", sw.name);
        let e = refused(&line, "[1]");
        assert!(e.message.contains("wrong type"), "{e}");
        assert_eq!(e.expected.as_deref(), Some(sw.expected().as_str()), "{e}");
    }
}

#[test]
fn an_unknown_name_is_refused_with_every_name_and_a_suggestion() {
    for sw in switches() {
        let SwitchKind::Choice { what, names } = sw.kind else {
            continue;
        };
        for name in names {
            let typo = format!("{name}x");
            let line = format!("{} = \"{typo}\"", sw.name);
            let e = refused(&line, &format!("\"{typo}\""));
            assert!(
                e.message.contains(&format!("unknown {what} `{typo}`")),
                "{e}"
            );
            let expected = e.expected.clone().unwrap_or_default();
            for n in names {
                assert!(expected.contains(&format!("\"{n}\"")), "{e}");
            }
            assert_eq!(e.help, Some(format!("did you mean `{name}`?")), "{e}");
        }
    }
    let e = refused("tlp = \"onn\"", "\"onn\"");
    assert!(e.message.contains("unknown value `onn`"), "{e}");
    assert_eq!(e.help.as_deref(), Some("did you mean `on`?"), "{e}");
}

#[test]
fn out_of_range_numbers_and_bad_units_are_refused_with_the_range() {
    for sw in switches() {
        match sw.kind {
            SwitchKind::Int { min, max } => {
                for v in [min - 1, max + 1] {
                    let e = refused(&format!("{} = {v}", sw.name), &v.to_string());
                    assert!(e.message.contains(&format!("{v} is out of range")), "{e}");
                    let range = format!("an integer from {min} to {max}");
                    assert_eq!(e.expected.as_deref(), Some(range.as_str()), "{e}");
                }
            }
            SwitchKind::Bytes { .. } => {
                let e = refused(&format!("{} = \"100B\"", sw.name), "\"100B\"");
                assert!(e.message.contains("100 bytes is out of range"), "{e}");
                assert!(e.expected.unwrap().contains("from 536B to 1GiB"));
                let e = refused(&format!("{} = \"5 kilos\"", sw.name), "\"5 kilos\"");
                assert!(e.message.contains("unknown size unit `kilos`"), "{e}");
            }
            SwitchKind::Duration | SwitchKind::DurationOrOff => {
                let e = refused(&format!("{} = \"5 parsecs\"", sw.name), "\"5 parsecs\"");
                assert!(e.message.contains("unknown time unit `parsecs`"), "{e}");
                assert_eq!(e.expected.as_deref(), Some(sw.expected().as_str()), "{e}");
            }
            _ => {}
        }
    }
}

#[test]
fn the_receiver_policy_sets_its_defaults_before_the_other_switches() {
    let c = parse("delayed_ack = \"off\"\nreceiver = \"windows\"").unwrap();
    assert_eq!(c.delayed_ack, None);
    assert_eq!(c.quickack, 0);
    assert!(!c.timestamps);
    let c = parse("timestamps = true\nreceiver = \"windows\"").unwrap();
    assert!(c.timestamps);
}
