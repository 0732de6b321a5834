//! `[population]`: a mix of client access networks, one drawn per trial (issue:
//! calibrated networks — "a mix of receivers, RTTs, bandwidths and access links,
//! drawn per connection"). Each member names its share of the trials and the link
//! keys it sets over the scenario's own, by the rules of a sweep point:
//!
//! ```toml
//! [population.wired]
//! share = 0.7
//! [population.cellular]
//! share = 0.3
//! link.rate = "2Mbit/s"
//! link.a_to_b.jitter = { mean = "40ms", dist = "pareto", shape = 1.5 }
//! ```
//!
//! A trial draws its member first from its network stream, then the member's
//! per-trial values (a delay drawn from a range). Members set link and workload
//! keys (a client's receiver policy, its responses) and keep the scenario's
//! workloads in number and order; the variants and everything else stay one.

use std::sync::Arc;

use super::network::LinkDef;
use super::reader::{Result, Table};
use super::sweep::{Setting, flatten, set};
use super::{Source, parse_doc};

/// One member of a population.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub name: String,
    /// Its share of the trials, the shares summing to 1.
    pub share: f64,
    pub links: Vec<LinkDef>,
    pub workloads: Vec<Arc<gentle_sim::workload::WorkloadSpec>>,
}

/// Reads `[population]` of `root`; empty without one.
pub fn parse_population(
    src: Source<'_>,
    root: &toml_edit::Table,
    workloads: usize,
) -> Result<Vec<Member>> {
    let top = Table::new(src, root, Some(0..0), "the scenario");
    let Some(item) = root.get("population") else {
        return Ok(Vec::new());
    };
    let expected = "a table of members, written [population.NAME] with `share` and link keys";
    let t = item
        .as_table_like()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| top.bad("population", "not a population", expected))?;
    let pt = Table::new(src, t, top.item_span("population"), "[population]");
    let mut base = root.clone();
    base.remove("population");
    base.remove("calibrate");
    base.remove("paper");
    let mut out = Vec::new();
    for (name, m) in t.iter() {
        let mt = m
            .as_table_like()
            .ok_or_else(|| pt.bad(name, "not a member", expected))?;
        let member = Table::new(src, mt, pt.item_span(name), format!("[population.{name}]"));
        let m = parse_member(src, &base, name, &member)?;
        if m.workloads.len() != workloads {
            return Err(pt.bad(
                name,
                format!(
                    "this member has {} workloads, the scenario {workloads}",
                    m.workloads.len()
                ),
                "a member that keeps the scenario's workloads in number",
            ));
        }
        out.push(m);
    }
    let total: f64 = out.iter().map(|m| m.share).sum();
    // Written so that a NaN share fails too.
    if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(pt.bad(
            out.first().map_or("population", |m| m.name.as_str()),
            "the members' shares sum to 0",
            "shares above 0",
        ));
    }
    for m in &mut out {
        m.share /= total;
    }
    Ok(out)
}

fn parse_member(
    src: Source<'_>,
    base: &toml_edit::Table,
    name: &str,
    t: &Table<'_>,
) -> Result<Member> {
    let share = t
        .float("share", "a number ≥ 0: the member's share of the trials")?
        .ok_or_else(|| t.missing("share", "the member's share of the trials, a number ≥ 0"))?;
    if !(share >= 0.0 && share.is_finite()) {
        return Err(t.bad("share", "not a share", "a number ≥ 0"));
    }
    let mut settings: Vec<Setting> = Vec::new();
    flatten(t.t, &mut Vec::new(), &mut settings);
    let mut root = base.clone();
    for s in settings.iter().filter(|s| s.path != ["share"]) {
        if !matches!(
            s.path.first().map(String::as_str),
            Some("link" | "workload")
        ) {
            return Err(src
                .error(
                    s.span.clone(),
                    format!(
                        "`{}`: a member sets link and workload keys only",
                        s.path.join(".")
                    ),
                )
                .expected("keys such as `link.rate` or `workload.client_receiver`"));
        }
        set(&mut root, s).map_err(|m| {
            src.error(s.span.clone(), format!("`{}`: {m}", s.path.join(".")))
                .expected("the dotted path of a key, such as `link.rate`")
        })?;
    }
    let scn = parse_doc(src, &root).map_err(|mut e| {
        e.message += &format!(" (in population member `{name}`)");
        e
    })?;
    Ok(Member {
        name: name.to_string(),
        share,
        links: scn.links,
        workloads: scn.workloads,
    })
}

/// The member a trial draws with `u` uniform in [0, 1).
pub fn choose(members: &[Member], u: f64) -> &Member {
    let mut acc = 0.0;
    for m in members {
        acc += m.share;
        if u < acc {
            return m;
        }
    }
    members.last().expect("a population has members")
}
