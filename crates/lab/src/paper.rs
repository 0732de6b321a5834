//! The paper beside gentle: each number of a scenario's `[paper]` table next to
//! what the run gave, and whether they agree (`scenario::paper` has the rules).

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::calibrate::stats;
use crate::runner::RunResult;
use crate::scenario::Scenario;
use crate::scenario::paper::{Claim, Quantity};
use crate::scenario::targets::{Atom, Subset};

/// One of the paper's numbers, and the run's.
pub struct Judged<'a> {
    pub q: &'a Quantity,
    /// The run's effect (%) or level; `None` when the statistic is undefined.
    pub gentle: Option<f64>,
    /// A latency effect whose 95% interval holds 0: its sign is not known, and it
    /// does not agree whatever its size.
    pub unsure: bool,
    pub agrees: bool,
}

/// Whether the confidence interval of a latency effect holds 0.
fn holds_zero(q: &Quantity, run: &RunResult) -> bool {
    let Some(Some(d)) = run.cis.get(q.variant) else {
        return false;
    };
    let ci = match q.stat.num.as_slice() {
        [Atom::LatencyMean(Subset::Ranked)] if q.stat.den.is_empty() => d.mean,
        [Atom::LatencyQuantile(Subset::Ranked, x)] if q.stat.den.is_empty() => {
            let p = (x * 100.0).round() as u32;
            if !(1..=99).contains(&p) || (x * 100.0 - p as f64).abs() > 1e-9 {
                return false;
            }
            d.percentile(p)
        }
        _ => return false,
    };
    ci.pct.lo <= 0.0 && ci.pct.hi >= 0.0
}

/// The run's value of every quantity of the scenario's `[paper]`.
pub fn judge<'a>(scn: &'a Scenario, run: &RunResult) -> Vec<Judged<'a>> {
    let Some(p) = &scn.paper else {
        return Vec::new();
    };
    p.quantities
        .iter()
        .map(|q| {
            let at = |i: usize| run.variants.get(i).and_then(|v| stats::value(&q.stat, v));
            let gentle = match q.claim {
                Claim::Effect { .. } => match (at(0), at(q.variant)) {
                    (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b * 100.0),
                    _ => None,
                },
                Claim::Level { .. } => at(q.variant),
            };
            let unsure = matches!(q.claim, Claim::Effect { .. }) && holds_zero(q, run);
            Judged {
                q,
                agrees: !unsure && gentle.is_some_and(|g| q.agrees(g)),
                unsure,
                gentle,
            }
        })
        .collect()
}

fn number(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// The section a report prints under its tables; empty without `[paper]`.
pub fn section(scn: &Scenario, run: &RunResult) -> String {
    let judged = judge(scn, run);
    let Some(p) = &scn.paper else {
        return String::new();
    };
    let name = |q: &Quantity| {
        let what = q.label.as_deref().unwrap_or(&q.stat.text);
        format!("{}: {what}", run.variants[q.variant].name)
    };
    let w = judged
        .iter()
        .map(|j| name(j.q).chars().count())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut s = format!("\nbeside the paper ({})\n", p.source);
    let _ = writeln!(
        s,
        "{:<w$}  {:>10}  {:>10}  agrees  where",
        "quantity", "gentle", "paper"
    );
    for j in &judged {
        let (g, paper) = match j.q.claim {
            Claim::Effect { change_pct } => (
                j.gentle.map_or("-".into(), |g| {
                    format!("{}{g:+.1}%", if j.unsure { "~" } else { "" })
                }),
                format!("{change_pct:+}%"),
            ),
            Claim::Level { value } => (j.gentle.map_or("-".into(), number), number(value)),
        };
        let _ = writeln!(
            s,
            "{:<w$}  {g:>10}  {paper:>10}  {:<6}  {}",
            name(j.q),
            if j.agrees { "yes" } else { "no" },
            j.q.cite.as_deref().unwrap_or("")
        );
    }
    let n = judged.iter().filter(|j| j.agrees).count();
    let _ = writeln!(
        s,
        "{n} of {} agree (an effect agrees with the paper's sign, within {}x of it, and an interval without 0: one marked ~ holds 0; a level agrees within {:.0}%)",
        judged.len(),
        crate::scenario::paper::EFFECT_FACTOR,
        crate::scenario::paper::LEVEL_SHARE * 100.0
    );
    s
}

/// The same as JSON: one object a quantity; `None` without `[paper]`.
pub fn json(scn: &Scenario, run: &RunResult) -> Option<Value> {
    let p = scn.paper.as_ref()?;
    let items: Vec<Value> = judge(scn, run)
        .iter()
        .map(|j| {
            let (kind, paper) = match j.q.claim {
                Claim::Effect { change_pct } => ("effect_pct", change_pct),
                Claim::Level { value } => ("level", value),
            };
            json!({
                "stat": j.q.stat.text, "variant": run.variants[j.q.variant].name,
                "kind": kind, "paper": paper, "gentle": j.gentle, "agrees": j.agrees,
                "interval_holds_zero": j.unsure,
                "label": j.q.label, "cite": j.q.cite,
            })
        })
        .collect();
    Some(json!({ "source": p.source, "quantities": items }))
}
