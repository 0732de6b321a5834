//! `[[variant]]` sections: a profile plus independent switches.

use gentle_tcp::{
    CcAlgorithm, Config, EarlyRetransmit, Profile, ReceiverPolicy, RecoveryAlgorithm, TlpDetection,
    TlpFlavour,
};

use super::reader::{Result, Table};
use super::{Variant, tables};

pub const SWITCHES: &[&str] = &[
    "name",
    "profile",
    "mss",
    "initial_window",
    "cc",
    "hystart",
    "recovery",
    "rack",
    "sack",
    "dsack",
    "fack",
    "timestamps",
    "window_scale",
    "abc",
    "er",
    "er_reorder_disable",
    "tlp",
    "tlp_flavour",
    "tlp_detection",
    "tlp_max_probes",
    "tlp_wdt",
    "er_delay_min",
    "er_delay_max",
    "limited_transmit",
    "frto",
    "undo",
    "dupthresh",
    "rto_min",
    "rto_initial",
    "rto_max",
    "receiver",
    "delayed_ack",
    "quickack",
    "recv_buffer",
    "slow_start_after_idle",
    "corrective",
    "redundant_syn",
];

pub fn parse_variants(top: &Table<'_>) -> Result<Vec<Variant>> {
    let ts = tables(top, "variant")?;
    if ts.is_empty() {
        return Err(top.missing(
            "variant",
            "at least one [[variant]] (the first is the baseline)",
        ));
    }
    let mut out: Vec<Variant> = Vec::new();
    for (i, t) in ts.iter().enumerate() {
        t.check_keys(SWITCHES)?;
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
        out.push(Variant {
            name,
            config: parse_config(t)?,
        });
    }
    Ok(out)
}

/// A configuration from a table of switches (shared with `gentle run --variant`).
pub fn parse_config(t: &Table<'_>) -> Result<Config> {
    let profiles: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
    let expected = format!("one of {}", profiles.join(", "));
    let mut c = match t.str("profile", &expected)? {
        None => Config::default(),
        Some(p) => match Profile::from_name(p) {
            Some(p) => p.config(),
            None => {
                let mut e = t.bad("profile", format!("unknown profile `{p}`"), &expected);
                if let Some(s) = super::error::suggest(p, &profiles) {
                    e = e.help(format!("did you mean `{s}`?"));
                }
                return Err(e);
            }
        },
    };
    // The receiver policy first: it sets defaults that later switches override.
    let receivers = || {
        ReceiverPolicy::ALL
            .iter()
            .map(|(n, _)| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(v) = t.str("receiver", &receivers())? {
        match ReceiverPolicy::from_name(v) {
            Some(p) => c.set_receiver(p),
            None => {
                return Err(t.bad(
                    "receiver",
                    format!("unknown receiver policy `{v}`"),
                    &receivers(),
                ));
            }
        }
    }
    if let Some(v) = t.int("mss", 88, 65495)? {
        c.mss = v as u16;
    }
    if let Some(v) = t.int("initial_window", 1, 1000)? {
        c.initial_window = v as u32;
    }
    if let Some(v) = t.str("cc", "\"reno\" or \"cubic\"")? {
        c.cc = match v {
            "reno" => CcAlgorithm::Reno,
            "cubic" => CcAlgorithm::Cubic,
            x => {
                return Err(t.bad(
                    "cc",
                    format!("unknown congestion control `{x}`"),
                    "\"reno\" or \"cubic\"",
                ));
            }
        };
    }
    let recovery_names = || {
        RecoveryAlgorithm::ALL
            .iter()
            .map(|(n, _)| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(v) = t.str("recovery", &recovery_names())? {
        c.recovery = match RecoveryAlgorithm::from_name(v) {
            Some(a) => a,
            None => {
                return Err(t.bad(
                    "recovery",
                    format!("unknown recovery algorithm `{v}`"),
                    &recovery_names(),
                ));
            }
        };
    }
    if let Some(v) = t.str("er", "\"off\", \"on\" or \"delayed\"")? {
        c.er = match v {
            "off" => EarlyRetransmit::Off,
            "on" => EarlyRetransmit::On,
            "delayed" => EarlyRetransmit::Delayed,
            x => {
                return Err(t.bad(
                    "er",
                    format!("unknown early-retransmit mode `{x}`"),
                    "\"off\", \"on\" or \"delayed\"",
                ));
            }
        };
    }
    if t.item("tlp").is_some() {
        c.tlp = match t.item("tlp").and_then(|i| i.as_bool()) {
            Some(b) => b,
            None => match t.str("tlp", "\"on\" or \"off\"")? {
                Some("on") => true,
                Some("off") => false,
                Some(x) => {
                    return Err(t.bad(
                        "tlp",
                        format!("unknown tail-loss-probe mode `{x}`"),
                        "\"on\" or \"off\"",
                    ));
                }
                None => c.tlp,
            },
        };
    }
    if let Some(v) = t.str(
        "tlp_flavour",
        "\"draft-2013\", \"linux-3.10\", \"linux-6\" or \"rfc8985\"",
    )? {
        c.tlp_flavour = match v {
            "draft-2013" => TlpFlavour::Draft2013,
            "linux-3.10" => TlpFlavour::Linux310,
            "rfc8985" => TlpFlavour::Rfc8985,
            "linux-6" => TlpFlavour::Linux6,
            x => {
                return Err(t.bad(
                    "tlp_flavour",
                    format!("unknown probe-timeout flavour `{x}`"),
                    "\"draft-2013\", \"linux-3.10\", \"linux-6\" or \"rfc8985\"",
                ));
            }
        };
    }
    if let Some(v) = t.str("tlp_detection", "\"basic\" or \"dsack\"")? {
        c.tlp_detection = match v {
            "basic" => TlpDetection::Basic,
            "dsack" => TlpDetection::Dsack,
            x => {
                return Err(t.bad(
                    "tlp_detection",
                    format!("unknown loss-probe detection `{x}`"),
                    "\"basic\" or \"dsack\"",
                ));
            }
        };
    }
    if let Some(v) = t.int("tlp_max_probes", 1, 2)? {
        c.tlp_max_probes = v as u32;
    }
    if let Some(v) = t.duration("tlp_wdt")? {
        c.tlp_wdt = v;
    }
    if let Some(v) = t.duration("er_delay_min")? {
        c.er_delay_min = v;
    }
    if t.item("er_delay_max").is_some() {
        c.er_delay_max = match t.str("er_delay_max", "a duration like \"500ms\", or \"off\"")? {
            Some("off") => None,
            _ => Some(t.duration("er_delay_max")?.expect("present")),
        };
    }
    macro_rules! flag {
        ($($k:literal => $f:ident),*) => { $( if let Some(v) = t.bool($k)? { c.$f = v; } )* };
    }
    flag!("sack" => sack, "dsack" => dsack, "fack" => fack, "timestamps" => timestamps, "window_scale" => window_scale,
          "abc" => abc, "er_reorder_disable" => er_reorder_disable, "limited_transmit" => limited_transmit, "frto" => frto, "undo" => undo,
          "slow_start_after_idle" => slow_start_after_idle, "rack" => rack, "hystart" => hystart);
    if let Some(v) = t.switch("corrective")? {
        c.corrective = v;
    }
    if let Some(v) = t.switch("redundant_syn")? {
        c.redundant_syn = v;
    }
    if let Some(v) = t.int("dupthresh", 1, 1000)? {
        c.dupthresh = v as u32;
    }
    if let Some(v) = t.duration("rto_min")? {
        c.rto_min = v;
    }
    if let Some(v) = t.duration("rto_initial")? {
        c.rto_initial = v;
    }
    if let Some(v) = t.duration("rto_max")? {
        c.rto_max = v;
    }
    if t.item("delayed_ack").is_some() {
        c.delayed_ack = match t.str("delayed_ack", "a duration like \"40ms\", or \"off\"")? {
            Some("off") => None,
            _ => Some(t.duration("delayed_ack")?.expect("present")),
        };
    }
    if let Some(v) = t.int("quickack", 0, 1000)? {
        c.quickack = v as u32;
    }
    if let Some(v) = t.bytes("recv_buffer")? {
        if !(536..=1 << 30).contains(&v) {
            return Err(t.bad(
                "recv_buffer",
                format!("{v} bytes is out of range"),
                "from 536B to 1GiB",
            ));
        }
        c.recv_buffer = v as u32;
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
