//! A calibration's targets file: the statistics a fitted scenario's baseline must
//! show, each with the value it is fitted to and where that value comes from.
//!
//! ```toml
//! [[target]]
//! stat = "TCPFastRetrans / RetransSegs"   # a statistic (see `Stat`)
//! value = 0.23
//! source = "gentle-aggression-sigcomm13.txt Table 4: 24.7M of 107.5M"
//! weight = 1.0                             # optional
//! ```
//!
//! A statistic is a sum of atoms, or a ratio of two such sums: `A`, `A + B`,
//! `A / B`, `(A + B) / C`. An atom is a counter of the report (`TCPTimeouts`, Linux's
//! MIB names), `Exchanges`, `ExchangesWithRetrans`, `ExchangesWithLoss`, a link
//! figure (`LinkOffered`, `LinkLossDrops`, `LinkQueueDrops`, `LossyBursts`,
//! `LossyBursts1`, `LossyBursts2`), or the metric's `latency.mean` or
//! `latency.pNN` (ms; NN from 1 to 99, or `p99.9`) over the exchanges the scenario
//! ranks; `latency.retransmitted.*` and `latency.lost.*` take the same over the
//! exchanges with a retransmission and with a lost packet whatever the scenario
//! ranks (`prr-imc11.txt` Tables 9 and 11 give the baseline's latency of those).

use super::error::{ScenarioError, Source};
use super::reader::Table;
use super::{parse_toml, tables};

/// The atoms besides the report's counters.
pub const EXTRA_ATOMS: &[&str] = &[
    "Exchanges",
    "ExchangesWithRetrans",
    "ExchangesWithServerRetrans",
    "ExchangesWithLoss",
    "LinkOffered",
    "LinkLossDrops",
    "LinkQueueDrops",
    "LossyBursts",
    "LossyBursts1",
    "LossyBursts2",
    "RecoveryStarts",
    "RecoveryStartsBelowSsthresh",
    "RecoveryStartsAtSsthresh",
    "RecoveryStartsAboveSsthresh",
    "Backend.RetransSegs",
    "latency.mean",
    "latency.pNN",
    "latency.retransmitted.pNN",
    "latency.lost.pNN",
];

/// The latencies a statistic may take: the ranked ones (the scenario's `filter`),
/// or those of the exchanges with a retransmission or with a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subset {
    Ranked,
    Retransmitted,
    Lost,
}

impl Subset {
    const NAMED: [(Subset, &'static str); 2] = [
        (Subset::Retransmitted, "retransmitted."),
        (Subset::Lost, "lost."),
    ];

    fn prefix(self) -> &'static str {
        Self::NAMED
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("", |(_, p)| p)
    }
}

/// The prefix of a backend connection's counter (`Backend.RetransSegs`).
pub const BACKEND: &str = "Backend.";
/// The prefix of a counter of the server ends alone (`Server.RetransSegs`).
pub const SERVER: &str = "Server.";

/// One atom of a statistic.
#[derive(Clone, Debug, PartialEq)]
pub enum Atom {
    /// A report counter or one of [`EXTRA_ATOMS`] but the latencies.
    Count(String),
    LatencyMean(Subset),
    /// A quantile in (0, 1).
    LatencyQuantile(Subset, f64),
    /// An atom subtracted (`A - B`: `gentle-aggression-sigcomm13.txt` Table 4's
    /// timeout retransmissions are the retransmissions neither fast nor in slow start).
    Minus(Box<Atom>),
}

/// A statistic: a sum of atoms (some subtracted) over an optional such sum.
#[derive(Clone, Debug, PartialEq)]
pub struct Stat {
    pub text: String,
    pub num: Vec<Atom>,
    pub den: Vec<Atom>,
}

/// One target.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub stat: Stat,
    pub value: f64,
    pub weight: f64,
    pub source: Option<String>,
}

const KEYS: &[&str] = &["stat", "value", "weight", "source"];

/// Reads a targets file; `counters` are the names of the report's counters.
pub fn parse_targets(
    file: &str,
    text: &str,
    counters: &[&str],
) -> std::result::Result<Vec<Target>, ScenarioError> {
    let src = Source { file, text };
    let doc = parse_toml(src)?;
    let top = Table::new(src, doc.as_table(), Some(0..0), "the targets file");
    top.check_keys(&["target"])?;
    let ts = tables(&top, "target")?;
    if ts.is_empty() {
        return Err(top.missing("target", "at least one [[target]] with `stat` and `value`"));
    }
    let mut out: Vec<Target> = Vec::new();
    for t in ts {
        t.check_keys(KEYS)?;
        let expected = "a statistic like \"TCPFastRetrans / RetransSegs\" or \"(RetransSegs - TCPSynRetrans) / OutSegs\"";
        let text = t.req_str("stat", expected)?;
        let stat = parse_stat(text, counters).map_err(|m| t.bad("stat", m, expected))?;
        if out.iter().any(|o| o.stat.text == stat.text) {
            return Err(t.bad(
                "stat",
                "this statistic has a target already",
                "distinct statistics",
            ));
        }
        let value = t
            .float("value", "a number")?
            .ok_or_else(|| t.missing("value", "the number to fit"))?;
        if !(value > 0.0 && value.is_finite()) {
            return Err(t.bad(
                "value",
                "a target must be above 0 (the fit compares the logarithms of value and target)",
                "a number above 0",
            ));
        }
        let weight = t.float("weight", "a number above 0")?.unwrap_or(1.0);
        if !(weight > 0.0 && weight.is_finite()) {
            return Err(t.bad("weight", "must be above 0", "a number above 0"));
        }
        let source = t.str("source", "a string")?.map(str::to_string);
        out.push(Target {
            stat,
            value,
            weight,
            source,
        });
    }
    Ok(out)
}

/// Parses a statistic's text.
pub fn parse_stat(text: &str, counters: &[&str]) -> std::result::Result<Stat, String> {
    let (num, den) = match text.split_once('/') {
        Some((n, d)) => (n, Some(d)),
        None => (text, None),
    };
    let num = sum(num, counters)?;
    let den = match den {
        Some(d) => sum(d, counters)?,
        None => Vec::new(),
    };
    let norm = |v: &[Atom]| {
        let mut out = String::new();
        for (i, a) in v.iter().enumerate() {
            match (i, a) {
                (0, Atom::Minus(_)) => out.push('-'),
                (0, _) => {}
                (_, Atom::Minus(_)) => out.push_str(" - "),
                _ => out.push_str(" + "),
            }
            out.push_str(&show(a));
        }
        out
    };
    let text = match den.len() {
        0 => norm(&num),
        1 if num.len() == 1 => format!("{} / {}", norm(&num), norm(&den)),
        1 => format!("({}) / {}", norm(&num), norm(&den)),
        _ if num.len() == 1 => format!("{} / ({})", norm(&num), norm(&den)),
        _ => format!("({}) / ({})", norm(&num), norm(&den)),
    };
    Ok(Stat { text, num, den })
}

fn show(a: &Atom) -> String {
    match a {
        Atom::Count(n) => n.clone(),
        Atom::LatencyMean(s) => format!("latency.{}mean", s.prefix()),
        Atom::LatencyQuantile(s, q) => format!("latency.{}p{}", s.prefix(), q * 100.0),
        Atom::Minus(a) => show(a),
    }
}

fn sum(text: &str, counters: &[&str]) -> std::result::Result<Vec<Atom>, String> {
    let t = text.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(t);
    let mut out = Vec::new();
    let (mut rest, mut minus) = match t.strip_prefix('-') {
        Some(r) => (r, true),
        None => (t, false),
    };
    loop {
        let end = rest.find(['+', '-']).unwrap_or(rest.len());
        let a = atom(rest[..end].trim(), counters)?;
        out.push(if minus { Atom::Minus(Box::new(a)) } else { a });
        if end == rest.len() {
            return Ok(out);
        }
        minus = rest[end..].starts_with('-');
        rest = &rest[end + 1..];
    }
}

fn atom(a: &str, counters: &[&str]) -> std::result::Result<Atom, String> {
    if let Some(rest) = a.strip_prefix("latency.") {
        let (subset, rest) = Subset::NAMED
            .iter()
            .find_map(|(s, p)| rest.strip_prefix(p).map(|r| (*s, r)))
            .unwrap_or((Subset::Ranked, rest));
        if rest == "mean" {
            return Ok(Atom::LatencyMean(subset));
        }
        if let Some(p) = rest.strip_prefix('p') {
            return match p.parse::<f64>() {
                Ok(q) if q > 0.0 && q < 100.0 => Ok(Atom::LatencyQuantile(subset, q / 100.0)),
                _ => Err(format!(
                    "`{a}`: a quantile between latency.{0}p1 and latency.{0}p99.9",
                    subset.prefix()
                )),
            };
        }
    }
    let counted = |x: &&str| *x == a && !x.starts_with("latency.");
    if counters.contains(&a) || EXTRA_ATOMS.iter().any(counted) {
        return Ok(Atom::Count(a.to_string()));
    }
    // The counters of the frontends' backend connections (a workload's `backend`),
    // and of the server ends alone.
    if let Some(c) = a.strip_prefix(BACKEND).or_else(|| a.strip_prefix(SERVER))
        && counters.contains(&c)
    {
        return Ok(Atom::Count(a.to_string()));
    }
    // A misspelt counter; under `Server.` or `Backend.` (or a misspelt prefix), the
    // nearest counter under the nearest prefix.
    let prefixes = [SERVER.trim_end_matches('.'), BACKEND.trim_end_matches('.')];
    let prefixed = a
        .split_once('.')
        .filter(|(head, _)| !head.eq_ignore_ascii_case("latency"))
        .and_then(|(head, rest)| {
            let p = prefixes
                .iter()
                .find(|p| p.eq_ignore_ascii_case(head))
                .copied();
            p.or_else(|| super::error::suggest(head, &prefixes))
                .map(|p| (p, rest))
        });
    let hint = match prefixed {
        Some((p, rest)) => super::error::suggest(rest, counters).map(|s| format!("{p}.{s}")),
        None => {
            let mut names: Vec<&str> = counters.to_vec();
            names.extend_from_slice(EXTRA_ATOMS);
            super::error::suggest(a, &names).map(str::to_string)
        }
    }
    .map(|s| format!("; did you mean `{s}`?"))
    .unwrap_or_default();
    if a.is_empty() {
        return Err("an empty term".into());
    }
    Err(format!("unknown statistic `{a}`{hint}"))
}
