//! `[paper]`: the paper's numbers a scenario reproduces, printed beside gentle's
//! and judged by the rules of the calibrated-networks issue: an effect (a
//! variant's change from the baseline) agrees when it has the paper's sign and is
//! within a factor of 2 of it; a level (one variant's value) when it is within
//! ±15% of the paper's.
//!
//! ```toml
//! [paper]
//! source = "gentle-aggression-sigcomm13.txt §8.3"
//! [[paper.effect]]
//! stat = "TCPTimeouts"         # a statistic, as a calibration target names it
//! label = "timeouts"           # the row's name (default: the statistic)
//! variant = "Reactive"         # default: the last variant, against the first
//! change_pct = -14
//! cite = "Table 4"
//! [[paper.level]]
//! stat = "latency.p50"
//! variant = "Linux"            # default: the first variant
//! value = 503
//! cite = "Table 3, Web Search"
//! ```

use super::reader::{Result, Table};
use super::tables;
use super::targets::{Stat, parse_stat};

/// An effect agrees within this factor of the paper's ...
pub const EFFECT_FACTOR: f64 = 2.0;
/// ... a level within this share of it.
pub const LEVEL_SHARE: f64 = 0.15;

/// What the paper says of one statistic.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// The variant's change from the baseline, %.
    Effect { change_pct: f64 },
    /// The variant's value.
    Level { value: f64 },
}

/// One of the paper's numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity {
    pub stat: Stat,
    /// The variant it is of (by index).
    pub variant: usize,
    pub claim: Claim,
    /// The row's name in the report (default: the statistic).
    pub label: Option<String>,
    pub cite: Option<String>,
}

/// A scenario's `[paper]` table.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Paper {
    pub source: String,
    pub quantities: Vec<Quantity>,
}

impl Quantity {
    /// Whether gentle's `value` (an effect in %, or a level) agrees with the paper's.
    pub fn agrees(&self, value: f64) -> bool {
        match self.claim {
            Claim::Effect { change_pct } => {
                let r = value / change_pct;
                r.is_finite() && (1.0 / EFFECT_FACTOR..=EFFECT_FACTOR).contains(&r)
            }
            Claim::Level { value: paper } => (value - paper).abs() <= LEVEL_SHARE * paper.abs(),
        }
    }
}

/// Reads `[paper]` of the scenario; `variants` are its variants' names.
pub fn parse_paper(top: &Table<'_>, variants: &[String]) -> Result<Option<Paper>> {
    let Some(pt) = top.sub(
        "paper",
        "a table: [paper] with source, [[paper.effect]], [[paper.level]]",
    )?
    else {
        return Ok(None);
    };
    pt.check_keys(&["source", "effect", "level"])?;
    let source = pt
        .req_str("source", "the paper and section, a string")?
        .to_string();
    let names = crate::calibrate::stats::counter_names();
    let mut quantities = Vec::new();
    for (kind, default) in [("effect", variants.len() - 1), ("level", 0)] {
        for mut t in tables(&pt, kind)? {
            t.name = t.name.replacen("[[", "[[paper.", 1);
            let value_key = if kind == "effect" {
                "change_pct"
            } else {
                "value"
            };
            t.check_keys(&["stat", "variant", value_key, "label", "cite"])?;
            let expected = "a statistic like \"TCPTimeouts\" or \"latency.p50\"";
            let stat = parse_stat(t.req_str("stat", expected)?, &names)
                .map_err(|m| t.bad("stat", m, expected))?;
            let variant = match t.str("variant", "a variant's name")? {
                None => default,
                Some(n) => variants.iter().position(|v| v == n).ok_or_else(|| {
                    t.bad(
                        "variant",
                        format!("no variant named `{n}`"),
                        &variants.join(", "),
                    )
                })?,
            };
            if kind == "effect" && variant == 0 {
                return Err(t.bad(
                    "variant",
                    "an effect is a change from the first variant",
                    "a variant after the first",
                ));
            }
            let x = t
                .float(value_key, "a number")?
                .ok_or_else(|| t.missing(value_key, "the paper's number"))?;
            if kind == "effect" && x == 0.0 {
                return Err(t.bad(
                    value_key,
                    "a change of 0 has no sign to agree with",
                    "a change other than 0",
                ));
            }
            let claim = if kind == "effect" {
                Claim::Effect { change_pct: x }
            } else {
                Claim::Level { value: x }
            };
            quantities.push(Quantity {
                stat,
                variant,
                claim,
                label: t.str("label", "a string")?.map(str::to_string),
                cite: t.str("cite", "a string")?.map(str::to_string),
            });
        }
    }
    Ok(Some(Paper { source, quantities }))
}
