//! `[[variant]]` sections: a profile plus independent switches.

use gentle_tcp::config::{Switch, SwitchKind, SwitchValue};
use gentle_tcp::{Config, Profile};

use super::error::suggest;
use super::reader::{Result, Table};
use super::{Variant, tables};
use crate::units;

/// The keys of a `[[variant]]`: its name, its profile, and every switch in
/// declaration order.
pub fn keys() -> Vec<&'static str> {
    let switches = Config::SWITCHES
        .iter()
        .filter(|s| s.kind != SwitchKind::Fixed);
    ["name", "profile", "backend", "kernel"]
        .into_iter()
        .chain(switches.map(|s| s.name))
        .collect()
}

/// The `[[variant]]` tables; `relayed`: some workload has a backend, so a variant's
/// `backend` table has a leg to configure.
pub fn parse_variants(top: &Table<'_>, relayed: bool) -> Result<Vec<Variant>> {
    let ts = tables(top, "variant")?;
    if ts.is_empty() {
        return Err(top.missing(
            "variant",
            "at least one [[variant]] (the first is the baseline)",
        ));
    }
    let mut out: Vec<Variant> = Vec::new();
    for (i, t) in ts.iter().enumerate() {
        t.check_keys(&keys())?;
        let name = t
            .str("name", "a string")?
            .map_or_else(|| format!("variant{}", i + 1), str::to_string);
        if out.iter().any(|v| v.name == name) {
            return Err(t.bad(
                "name",
                format!("variant `{name}` is defined twice"),
                "a unique name",
            ));
        }
        let config = parse_config(t)?;
        // The backend leg of a multi-stage service: the variant's switches, then
        // the table's own (`backend = { proactive = "on" }`).
        let backend = match t.sub("backend", "a table of switches for the backend leg")? {
            None => None,
            Some(_) if !relayed => {
                return Err(t.bad(
                    "backend",
                    "no workload has a backend for this table to configure",
                    "a workload with `backend = { node = ... }`, or no backend table here",
                ));
            }
            Some(b) => {
                let inner: Vec<&str> = keys()
                    .into_iter()
                    .filter(|k| *k != "name" && *k != "backend" && *k != "kernel")
                    .collect();
                b.check_keys(&inner)?;
                Some(apply_switches(&b, config.clone())?)
            }
        };
        let kernel = parse_kernel(t)?;
        out.push(Variant {
            name,
            config: config.into(),
            backend,
            workload_configs: Vec::new(),
            kernel,
        });
    }
    Ok(out)
}

/// A configuration from a table of switches: the profile's, then each switch set
/// in the order [`Config::switches`] gives.
pub fn parse_config(t: &Table<'_>) -> Result<Config> {
    apply_switches(t, Config::default())
}

/// `base`, or the profile `t` names, with the switches `t` sets.
pub(super) fn apply_switches(t: &Table<'_>, base: Config) -> Result<Config> {
    let mut c = match t.str("profile", &Profile::KIND.expected())? {
        None => base,
        Some(p) => match Profile::from_name(p) {
            Some(p) => p.config(),
            None => {
                let mut e = t.bad(
                    "profile",
                    format!("unknown profile `{p}`"),
                    &Profile::KIND.expected(),
                );
                if let Some(s) = suggest(p, Profile::NAMES) {
                    e = e.help(format!("did you mean `{s}`?"));
                }
                return Err(e);
            }
        },
    };
    for sw in Config::switches() {
        let Some(v) = value(t, sw)? else { continue };
        if let Err(err) = c.set_switch(sw.name, v) {
            let mut e = t.bad(sw.name, err.message, &err.expected);
            if let SwitchValue::Name(x) = v
                && let Some(s) = suggest(x, err.names)
            {
                e = e.help(format!("did you mean `{s}`?"));
            }
            return Err(e);
        }
    }
    if c.fack && !c.sack {
        if t.bool("fack")? == Some(true) {
            return Err(t.bad("fack", "FACK needs SACK", "sack = true, or fack = false"));
        }
        c.fack = false;
    }
    if c.rto_min > c.rto_max {
        return Err(t.bad("rto_min", "larger than rto_max", "rto_min ≤ rto_max"));
    }
    Ok(c)
}

/// Switch `sw`'s value in `t`, if set: durations and sizes parsed from their strings.
fn value<'a>(t: &Table<'a>, sw: &Switch) -> Result<Option<SwitchValue<'a>>> {
    let Some(item) = t.item(sw.name) else {
        return Ok(None);
    };
    let bad = |m: String| t.bad(sw.name, m, &sw.expected());
    let v = if let Some(b) = item.as_bool() {
        SwitchValue::Bool(b)
    } else if let Some(i) = item.as_integer() {
        SwitchValue::Int(i)
    } else if let Some(s) = item.as_str() {
        match sw.kind {
            SwitchKind::DurationOrOff if s == "off" => SwitchValue::Name(s),
            SwitchKind::Duration | SwitchKind::DurationOrOff => {
                SwitchValue::Duration(units::duration(s).map_err(bad)?)
            }
            SwitchKind::Bytes { .. } => SwitchValue::Bytes(units::bytes(s).map_err(bad)?),
            _ => SwitchValue::Name(s),
        }
    } else {
        return Err(bad("wrong type".into()));
    };
    Ok(Some(v))
}

/// The README's table of switches: name, values, default (`linux-2.6`'s) and
/// meaning, one row per switch in declaration order.
pub fn switch_table() -> String {
    let base = Config::default();
    let mut s = String::from("| switch | values | default | meaning |\n|---|---|---|---|\n");
    for sw in Config::SWITCHES
        .iter()
        .filter(|s| s.kind != SwitchKind::Fixed)
    {
        let default = base
            .switch_value(sw.name)
            .map_or_else(String::new, |v| format!("`{}`", sw.show(v)));
        s += &format!(
            "| `{}` | {} | {default} | {} |\n",
            sw.name,
            sw.kind.values(),
            sw.doc_line().replace('|', "\\|")
        );
    }
    s
}

/// `kernel = { cc = "cubic", tcp_early_retrans = 3, ... }`: the kernel configuration
/// real mode runs this variant as (`gentle emulate`); the simulator ignores it. The
/// host kernel is asked whether it has the congestion control and the sysctls when
/// an emulation starts, not here.
fn parse_kernel(t: &Table<'_>) -> Result<Option<super::KernelSpec>> {
    const EXPECTED: &str =
        "a table like { cc = \"cubic\", tcp_early_retrans = 3, tcp_recovery = 1 }";
    let Some(k) = t.sub("kernel", EXPECTED)? else {
        return Ok(None);
    };
    let mut spec = super::KernelSpec::default();
    for (key, item) in k.t.iter() {
        if key == "cc" {
            let cc = k.req_str("cc", "a congestion control name like \"cubic\"")?;
            if cc.is_empty()
                || cc.len() > 15
                || !cc.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                return Err(k.bad(
                    "cc",
                    format!("`{cc}` is not a congestion control name"),
                    "a name like \"cubic\", \"reno\" or \"bbr\"",
                ));
            }
            spec.cc = Some(cc.to_string());
            continue;
        }
        if !key.starts_with("tcp_")
            || !key
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            let span = k.key_span(key);
            return Err(k
                .src
                .error(span, format!("unknown key `{key}` in {}", k.name))
                .expected("`cc`, or a net.ipv4 TCP sysctl like `tcp_early_retrans`".to_string()));
        }
        let v = match item.as_value() {
            Some(toml_edit::Value::Integer(i)) => i.value().to_string(),
            Some(toml_edit::Value::Boolean(b)) => (*b.value() as u8).to_string(),
            Some(toml_edit::Value::String(s)) if !s.value().chars().any(char::is_control) => {
                s.value().to_string()
            }
            _ => return Err(k.bad(key, "wrong type", "an integer, true/false, or a string")),
        };
        spec.sysctls.push((key.to_string(), v));
    }
    Ok(Some(spec))
}
