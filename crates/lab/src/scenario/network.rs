//! `[[link]]` sections: two nodes, and per direction a rate, a delay, a queue, a
//! loss model, reordering and duplication, and middleboxes (`strip_option`, the
//! probability of removing the kind-254 option from a packet; `translate_seq`, an
//! offset added to `a`'s sequence numbers; `reserved_bits`, what a middlebox does
//! to the TCP header's reserved bits: `"pass"`, `"clear"` or `"drop"` the packet),
//! and router queue management (`fast-start-and-sessions.txt`): `red` (§4.3,
//! Floyd & Jacobson 1993, ECN marking per RFC 3168 §5), `priority_drop` (§3.3,
//! §7.2) and `scheduling = "acks-first"` (§5).
//! Keys at the top of the link apply to
//! both directions; `[link.a_to_b]` and `[link.b_to_a]` override them.

use std::time::Duration;

use gentle_sim::link::{
    ChannelSpec, Draws, Jitter, JitterDist, LinkSpec, LinkTrace, QueueDiscipline, QueueLimit,
    RedParams, Reorder, ReservedBits, Scheduling,
};
use gentle_sim::loss::{AppliesTo, DropCount, LossModel};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Distribution;

use super::reader::{Result, Table};
use super::tables;
use crate::units;

const LINK_KEYS: &[&str] = &[
    "a",
    "b",
    "count",
    "rate",
    "delay",
    "queue",
    "loss",
    "reorder",
    "jitter",
    "outage",
    "duplicate",
    "draws",
    "strip_option",
    "reserved_bits",
    "translate_seq",
    "red",
    "priority_drop",
    "scheduling",
    "trace",
    "a_to_b",
    "b_to_a",
];
const DIR_KEYS: &[&str] = &[
    "rate",
    "delay",
    "queue",
    "loss",
    "reorder",
    "jitter",
    "outage",
    "duplicate",
    "draws",
    "strip_option",
    "reserved_bits",
    "red",
    "priority_drop",
    "scheduling",
    "trace",
];
const RED_KEYS: &[&str] = &["w_q", "min_th", "max_th", "max_p", "gentle", "ecn"];
const RED_EXPECTED: &str = "true, false, or a table like { w_q = 0.02, min_th = 7.5, max_th = 30, max_p = 0.1, gentle = false, ecn = true }";
const DIR_EXPECTED: &str = "a table of rate, delay, queue, loss, reorder, jitter, outage, duplicate, draws, strip_option, reserved_bits, red, priority_drop, scheduling, trace";
const JITTER_KEYS: &[&str] = &["mean", "dist", "shape", "correlation", "reorder"];
const JITTER_EXPECTED: &str = "a table like { mean = \"5ms\", dist = \"exponential\", correlation = 0.9, reorder = false } (dist \"exponential\" or \"pareto\" with a shape above 1)";
const LOSS_KEYS: &[&str] = &[
    "model",
    "p",
    "p_after_loss",
    "r",
    "loss_good",
    "loss_bad",
    "segments",
    "transmissions",
    "n",
    "slope",
    "rest_of_burst",
    "burst_gap",
    "applies_to",
];
const MODELS: &str = "\"none\", \"bernoulli\", \"correlated\", \"gilbert-elliott\", \"drop-list\", \"tail-drop\" or \"burst-position\"";

/// A one-way delay: fixed, or drawn per trial.
#[derive(Clone, Debug, PartialEq)]
pub enum DelayParam {
    Fixed(Duration),
    Uniform(Duration, Duration),
    Choice(Vec<Duration>),
    /// Log-normal with this median and σ (of the delay's logarithm), kept within
    /// [`LOGNORMAL_SPAN`] of the median either way: a population's RTTs, which are
    /// close to log-normal (Jiang and Dovrolis, "Passive estimation of TCP
    /// round-trip times", CCR 2002, Figure 4).
    LogNormal {
        median: Duration,
        sigma: f64,
    },
}

/// A log-normal delay stays within this factor of its median (σ = 1 would otherwise
/// give one trial in a million a delay 100 times the median).
pub const LOGNORMAL_SPAN: f64 = 20.0;

impl DelayParam {
    /// The shortest delay it can draw.
    pub fn min(&self) -> Duration {
        match self {
            DelayParam::Fixed(d) => *d,
            DelayParam::Uniform(a, b) => (*a).min(*b),
            DelayParam::Choice(v) => v.iter().copied().min().unwrap_or_default(),
            DelayParam::LogNormal { median, .. } => median.div_f64(LOGNORMAL_SPAN),
        }
    }

    fn sample(&self, rng: &mut ChaCha8Rng) -> Duration {
        match self {
            DelayParam::Fixed(d) => *d,
            DelayParam::Uniform(a, b) => {
                Duration::from_nanos(rng.gen_range(a.as_nanos() as u64..=b.as_nanos() as u64))
            }
            DelayParam::Choice(v) => v[rng.gen_range(0..v.len())],
            DelayParam::LogNormal { median, sigma } => {
                let m = median.as_secs_f64();
                let d = rand_distr::LogNormal::new(m.ln(), *sigma)
                    .expect("σ checked at parse")
                    .sample(rng);
                Duration::from_secs_f64(d.clamp(m / LOGNORMAL_SPAN, m * LOGNORMAL_SPAN))
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChanDef {
    pub spec: ChannelSpec,
    pub delay: DelayParam,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkDef {
    pub a: String,
    pub b: String,
    pub a_to_b: ChanDef,
    pub b_to_a: ChanDef,
}

impl LinkDef {
    pub fn resolve(&self, rng: &mut ChaCha8Rng) -> LinkSpec {
        let mut ab = self.a_to_b.spec.clone();
        ab.delay = self.a_to_b.delay.sample(rng);
        let mut ba = self.b_to_a.spec.clone();
        // A shared delay parameter gives both directions the same draw.
        ba.delay = if self.b_to_a.delay == self.a_to_b.delay {
            ab.delay
        } else {
            self.b_to_a.delay.sample(rng)
        };
        LinkSpec {
            a: self.a.clone(),
            b: self.b.clone(),
            a_to_b: ab,
            b_to_a: ba,
        }
    }
}

pub fn parse_links(top: &Table<'_>) -> Result<Vec<LinkDef>> {
    let ts = tables(top, "link")?;
    if ts.is_empty() {
        return Err(top.missing("link", "at least one [[link]] with `a` and `b` node names"));
    }
    let mut out = Vec::new();
    // The pairs of nodes joined so far (in name order): one link per pair.
    let mut pairs = std::collections::HashSet::new();
    for t in ts {
        t.check_keys(LINK_KEYS)?;
        let a = t.req_str("a", "a node name")?.to_string();
        let b = t.req_str("b", "a node name")?.to_string();
        if a == b {
            return Err(t.bad(
                "b",
                "a link needs two different nodes",
                "a node name other than `a`",
            ));
        }
        let base = parse_dir(
            &t,
            &ChanDef {
                spec: ChannelSpec::default(),
                delay: DelayParam::Fixed(Duration::ZERO),
            },
        )?;
        let mut ab = base.clone();
        let mut ba = base.clone();
        if let Some(d) = t.sub("a_to_b", DIR_EXPECTED)? {
            d.check_keys(DIR_KEYS)?;
            ab = parse_dir(&d, &base)?;
        }
        if let Some(d) = t.sub("b_to_a", DIR_EXPECTED)? {
            d.check_keys(DIR_KEYS)?;
            ba = parse_dir(&d, &base)?;
        }
        // A middlebox that translates the sequence numbers of `a`'s packets (§7 of
        // `gentle-aggression-sigcomm13.txt`): seq + offset towards `b`, ACK and SACK
        // − offset towards `a`.
        if let Some(off) = t.int("translate_seq", 0, u32::MAX as i64)? {
            ab.spec.seq_shift = off as u32;
            ba.spec.ack_shift = off as u32;
        }
        // `count` copies, `{k}` in the node names numbering them from 1: the
        // access links of many hosts (`src{k}` to a router).
        let count = t.int("count", 1, 10_000)?.unwrap_or(1);
        if count > 1 && !(a.contains("{k}") || b.contains("{k}")) {
            return Err(t.bad(
                "count",
                "copies of a link need `{k}` in a node name, or they would all join the same two nodes",
                "a node name like \"src{k}\" in `a` or `b`",
            ));
        }
        for k in 1..=count {
            let n = |s: &str| s.replace("{k}", &k.to_string());
            let (x, y) = (n(&a), n(&b));
            let pair = if x < y { (x, y) } else { (y, x) };
            if !pairs.insert(pair.clone()) {
                return Err(t.bad(
                    "b",
                    format!(
                        "a second link between `{}` and `{}`: packets between them would have two routes",
                        pair.0, pair.1
                    ),
                    "one link per pair of nodes",
                ));
            }
            out.push(LinkDef {
                a: n(&a),
                b: n(&b),
                a_to_b: ab.clone(),
                b_to_a: ba.clone(),
            });
        }
    }
    Ok(out)
}

fn parse_dir(t: &Table<'_>, base: &ChanDef) -> Result<ChanDef> {
    let mut c = base.clone();
    if let Some(s) = t.str("rate", "a rate like \"5Mbit/s\", or \"unlimited\"")? {
        c.spec.rate_bps = if s == "unlimited" {
            None
        } else {
            Some(
                units::rate(s)
                    .map_err(|m| t.bad("rate", m, "a rate like \"5Mbit/s\", or \"unlimited\""))?,
            )
        };
    }
    if t.item("delay").is_some() {
        c.delay = parse_delay(t)?;
    }
    let mut limit = c.spec.queue.limit();
    let mut red = c.spec.queue.red().copied();
    if let Some(s) = t.str(
        "queue",
        "a limit like \"100pkt\", \"64KiB\", or \"unlimited\"",
    )? {
        let expected = "a limit like \"100pkt\", \"64KiB\", or \"unlimited\"";
        limit = if s == "unlimited" {
            QueueLimit::Unlimited
        } else if let Some(n) = s.strip_suffix("pkt").or_else(|| s.strip_suffix("packets")) {
            let n: u32 = n
                .trim()
                .parse()
                .map_err(|_| t.bad("queue", format!("bad packet count `{n}`"), expected))?;
            if n == 0 {
                return Err(t.bad("queue", "a queue must hold at least one packet", expected));
            }
            QueueLimit::Packets(n)
        } else {
            QueueLimit::Bytes(units::bytes(s).map_err(|m| t.bad("queue", m, expected))?)
        };
    }
    if t.item("red").is_some() {
        red = parse_red(t, limit)?;
    }
    // A key set here is blamed; else the `queue` that made the limit unlimited.
    let at = |key: &'static str| if t.item(key).is_some() { key } else { "queue" };
    if red.is_some() && limit == QueueLimit::Unlimited {
        return Err(t.bad(
            at("red"),
            "RED needs a limited queue (its thresholds lie below the limit)",
            "a `queue` limit like \"50pkt\" beside `red`",
        ));
    }
    c.spec.queue = match red {
        None => QueueDiscipline::DropTail(limit),
        Some(red) => QueueDiscipline::Red { limit, red },
    };
    if let Some(b) = t.bool("priority_drop")? {
        c.spec.priority_drop = b;
    }
    if c.spec.priority_drop && limit == QueueLimit::Unlimited {
        return Err(t.bad(
            at("priority_drop"),
            "priority drop chooses what a full buffer drops, and an unlimited queue is never full",
            "a `queue` limit like \"50pkt\" beside `priority_drop`",
        ));
    }
    const SCHEDULING: &str = "\"fifo\" or \"acks-first\"";
    if let Some(s) = t.str("scheduling", SCHEDULING)? {
        c.spec.scheduling = match s {
            "fifo" => Scheduling::Fifo,
            "acks-first" => Scheduling::AcksFirst,
            _ => {
                let mut e = t.bad(
                    "scheduling",
                    format!("unknown scheduling \"{s}\""),
                    SCHEDULING,
                );
                if let Some(x) = super::error::suggest(s, &["fifo", "acks-first"]) {
                    e = e.help(format!("did you mean `{x}`?"));
                }
                return Err(e);
            }
        };
    }
    if let Some(l) = t.sub("loss", "a table like { model = \"bernoulli\", p = 0.02 }")? {
        let (m, applies) = parse_loss(&l)?;
        c.spec.loss = m;
        c.spec.loss_applies = applies;
    }
    if let Some(r) = t.sub("reorder", "a table like { p = 0.01, extra = \"5ms\" }")? {
        r.check_keys(&["p", "extra", "packets"])?;
        let p = r.prob("p")?.unwrap_or(0.0);
        let extra = r
            .duration("extra")?
            .ok_or_else(|| r.missing("extra", "a duration like \"5ms\""))?;
        let mut packets = [0u32; 4];
        if let Some(list) = r.int_array("packets", 1)? {
            if list.len() > 4 {
                return Err(r.bad(
                    "packets",
                    "at most 4 packets can be listed",
                    "up to 4 indices of data packets",
                ));
            }
            for (slot, v) in packets.iter_mut().zip(list) {
                *slot = v as u32;
            }
        }
        c.spec.reorder = Some(Reorder { p, extra, packets });
    }
    if t.item("trace").is_some() {
        c.spec.trace = Some(parse_trace(t)?);
    }
    if c.spec.trace.is_some() {
        if c.spec.rate_bps.is_some() {
            return Err(t.bad(
                "trace",
                "a trace sets the capacity; `rate` sets it too",
                "`trace` or `rate`, not both",
            ));
        }
        if c.spec.queue.red().is_some()
            || c.spec.priority_drop
            || c.spec.scheduling != Scheduling::Fifo
        {
            return Err(t.bad(
                "trace",
                "a trace-driven link serves its queue first in, first out",
                "no `red`, `priority_drop` or `scheduling` beside `trace`",
            ));
        }
    }
    if let Some(j) = t.sub("jitter", JITTER_EXPECTED)? {
        c.spec.jitter = Some(parse_jitter(&j)?);
    }
    if let Some(o) = t.sub("outage", OUTAGE_EXPECTED)? {
        c.spec.outage = Some(parse_outage(&o)?);
    }
    if let Some(p) = t.prob("duplicate")? {
        c.spec.duplicate = p;
    }
    const DRAWS: &str = "\"arrival\" or \"position\"";
    if let Some(d) = t.str("draws", DRAWS)? {
        c.spec.draws = match d {
            "arrival" => Draws::Arrival,
            "position" => Draws::Position,
            _ => return Err(t.bad("draws", format!("unknown value \"{d}\""), DRAWS)),
        };
    }
    if let Some(p) = t.prob("strip_option")? {
        c.spec.strip_option = p;
    }
    const RESERVED: &str = "\"pass\", \"clear\" or \"drop\"";
    if let Some(r) = t.str("reserved_bits", RESERVED)? {
        c.spec.reserved_bits = match r {
            "pass" => ReservedBits::Pass,
            "clear" => ReservedBits::Clear,
            "drop" => ReservedBits::Drop,
            _ => return Err(t.bad("reserved_bits", format!("unknown value \"{r}\""), RESERVED)),
        };
    }
    Ok(c)
}

/// `red = true | false | { ... }`: RED's parameters (defaults in
/// [`gentle_sim::link::red`]), thresholds in packets or as `"15%"` of a packet limit.
fn parse_red(t: &Table<'_>, limit: QueueLimit) -> Result<Option<RedParams>> {
    if let Some(on) = t.item("red").and_then(|i| i.as_bool()) {
        return Ok(on.then(RedParams::default));
    }
    let Some(r) = t.sub("red", RED_EXPECTED)? else {
        return Ok(None);
    };
    r.check_keys(RED_KEYS)?;
    let mut p = RedParams::default();
    if let Some(w) = r.float("w_q", "a weight in (0, 1], like 0.002")? {
        if !(w > 0.0 && w <= 1.0) {
            return Err(r.bad(
                "w_q",
                format!("{w} is out of range"),
                "a weight in (0, 1], like 0.002",
            ));
        }
        p.w_q = w;
    }
    let threshold = |key: &str| -> Result<Option<f64>> {
        const EXPECTED: &str =
            "a number of packets ≥ 0 like 7.5, or a share of a packet limit like \"15%\"";
        let v = match r.item(key).and_then(|i| i.as_str()) {
            Some(s) => {
                let pct: f64 = s
                    .strip_suffix('%')
                    .and_then(|x| x.trim().parse().ok())
                    .filter(|x: &f64| (0.0..=100.0).contains(x))
                    .ok_or_else(|| r.bad(key, format!("bad share `{s}`"), EXPECTED))?;
                let QueueLimit::Packets(n) = limit else {
                    return Err(r.bad(
                        key,
                        "a share needs a queue limit in packets",
                        "a number of packets, or a `queue` like \"50pkt\"",
                    ));
                };
                pct / 100.0 * n as f64
            }
            None => match r.float(key, EXPECTED)? {
                None => return Ok(None),
                Some(x) => x,
            },
        };
        if !(v >= 0.0 && v.is_finite()) {
            return Err(r.bad(key, format!("{v} is out of range"), EXPECTED));
        }
        Ok(Some(v))
    };
    if let Some(v) = threshold("min_th")? {
        p.min_th = v;
    }
    if let Some(v) = threshold("max_th")? {
        p.max_th = v;
    }
    if let QueueLimit::Packets(n) = limit
        && p.max_th > n as f64
    {
        return Err(r.bad(
            "max_th",
            format!(
                "max_th ({}) is above the queue limit of {n} packets: the average could never reach it",
                p.max_th
            ),
            "max_th ≤ the `queue` limit",
        ));
    }
    if p.min_th >= p.max_th {
        let at = if r.item("max_th").is_some() {
            "max_th"
        } else {
            "min_th"
        };
        return Err(r.bad(
            at,
            format!("min_th ({}) must be below max_th ({})", p.min_th, p.max_th),
            "min_th < max_th",
        ));
    }
    if let Some(m) = r.prob("max_p")? {
        if m == 0.0 {
            return Err(r.bad(
                "max_p",
                "0 is out of range",
                "a probability in (0, 1], like 0.1",
            ));
        }
        p.max_p = m;
    }
    if let Some(g) = r.bool("gentle")? {
        p.gentle = g;
    }
    if let Some(e) = r.bool("ecn")? {
        p.ecn = e;
    }
    Ok(Some(p))
}

fn parse_delay(t: &Table<'_>) -> Result<DelayParam> {
    let expected = "a duration like \"50ms\", or { uniform = [\"10ms\", \"200ms\"] }, or { choice = [\"20ms\", \"100ms\"] }, or { median = \"40ms\", sigma = 0.8 }";
    if t.item("delay").and_then(|i| i.as_str()).is_some() {
        return Ok(DelayParam::Fixed(t.duration("delay")?.expect("present")));
    }
    let d = t.sub("delay", expected)?.expect("present");
    d.check_keys(&["uniform", "choice", "median", "sigma"])?;
    if let Some(median) = d.duration("median")? {
        let sigma = d
            .float("sigma", "a number from 0 to 3")?
            .ok_or_else(|| d.missing("sigma", "σ of the delay's logarithm, from 0 to 3"))?;
        if !(0.0..=3.0).contains(&sigma) {
            return Err(d.bad("sigma", "out of range", "a number from 0 to 3"));
        }
        if median.is_zero() {
            return Err(d.bad(
                "median",
                "a log-normal delay needs a median above 0",
                "a duration like \"40ms\"",
            ));
        }
        return Ok(DelayParam::LogNormal { median, sigma });
    }
    let list = |key: &str| -> Result<Option<Vec<Duration>>> {
        let Some(items) = d.str_array(key, "durations like \"20ms\"")? else {
            return Ok(None);
        };
        let mut v = Vec::new();
        for (s, span) in items {
            v.push(
                units::duration(s)
                    .map_err(|m| d.src.error(span, m).expected("a duration like \"20ms\""))?,
            );
        }
        Ok(Some(v))
    };
    if let Some(v) = list("uniform")? {
        if v.len() != 2 || v[0] > v[1] {
            return Err(d.bad("uniform", "needs two durations, low then high", expected));
        }
        return Ok(DelayParam::Uniform(v[0], v[1]));
    }
    if let Some(v) = list("choice")? {
        if v.is_empty() {
            return Err(d.bad("choice", "needs at least one duration", expected));
        }
        return Ok(DelayParam::Choice(v));
    }
    Err(d.missing("uniform", expected))
}

fn parse_loss(l: &Table<'_>) -> Result<(LossModel, AppliesTo)> {
    l.check_keys(LOSS_KEYS)?;
    let model = l.req_str("model", MODELS)?;
    let applies = match l.str("applies_to", "\"all\", \"data\" or \"control\"")? {
        None | Some("all") => AppliesTo::All,
        Some("data") => AppliesTo::Data,
        Some("control") => AppliesTo::Control,
        Some(x) => {
            return Err(l.bad(
                "applies_to",
                format!("unknown value `{x}`"),
                "\"all\", \"data\" or \"control\"",
            ));
        }
    };
    let m =
        match model {
            "none" => LossModel::None,
            "bernoulli" => LossModel::Bernoulli {
                p: l.req_prob("p")?,
            },
            "correlated" => LossModel::Correlated {
                p: l.req_prob("p")?,
                p_after_loss: l.req_prob("p_after_loss")?,
                burst_gap_ns: l.duration("burst_gap")?.map_or(0, |d| d.as_nanos() as u64),
            },
            "gilbert-elliott" => LossModel::GilbertElliott {
                p: l.req_prob("p")?,
                r: l.req_prob("r")?,
                loss_good: l.prob("loss_good")?.unwrap_or(0.0),
                loss_bad: l.prob("loss_bad")?.unwrap_or(1.0),
            },
            "drop-list" => {
                let seg = l.int_array("segments", 1)?;
                let tx = l.int_array("transmissions", 1)?;
                match (seg, tx) {
                    (Some(v), None) => LossModel::DropList {
                        indices: v.into_iter().map(|x| x as u32).collect(),
                        count: DropCount::Segments,
                    },
                    (None, Some(v)) => LossModel::DropList {
                        indices: v.into_iter().map(|x| x as u32).collect(),
                        count: DropCount::Transmissions,
                    },
                    _ => return Err(l.missing(
                        "segments",
                        "exactly one of `segments` or `transmissions`, an array of 1-based indices",
                    )),
                }
            }
            "burst-position" => LossModel::BurstPosition {
                p: l.req_prob("p")?,
                slope: l
                    .float(
                        "slope",
                        "a number ≥ 0: how much each later position adds, relative to p",
                    )?
                    .unwrap_or(0.0)
                    .max(0.0),
                rest_of_burst: l.prob("rest_of_burst")?,
            },
            "tail-drop" => LossModel::TailDrop {
                n: l.int("n", 0, 1_000_000)?
                    .ok_or_else(|| l.missing("n", "the number of tail segments to drop"))?
                    as u32,
            },
            other => {
                let mut e = l.bad("model", format!("unknown loss model `{other}`"), MODELS);
                let names = [
                    "none",
                    "bernoulli",
                    "correlated",
                    "gilbert-elliott",
                    "drop-list",
                    "tail-drop",
                    "burst-position",
                ];
                if let Some(s) = super::error::suggest(other, &names) {
                    e = e.help(format!("did you mean `{s}`?"));
                }
                return Err(e);
            }
        };
    Ok((m, applies))
}

const OUTAGE_EXPECTED: &str = "a table like { gap = \"60s\", length = \"2s\" }: the mean time between outages and their mean length";

/// A link direction's outages ([`gentle_sim::link::outage`]).
fn parse_outage(o: &Table<'_>) -> Result<gentle_sim::link::Outage> {
    o.check_keys(&["gap", "length", "from"])?;
    let gap = o
        .duration("gap")?
        .ok_or_else(|| o.missing("gap", OUTAGE_EXPECTED))?;
    let length = o
        .duration("length")?
        .ok_or_else(|| o.missing("length", OUTAGE_EXPECTED))?;
    if gap.is_zero() || length.is_zero() {
        let key = if gap.is_zero() { "gap" } else { "length" };
        return Err(o.bad(key, "must be above 0", "a duration like \"500ms\""));
    }
    let from_up = match o.str("from", "\"stationary\" or \"up\"")? {
        None | Some("stationary") => false,
        Some("up") => true,
        Some(x) => {
            return Err(o.bad(
                "from",
                format!("unknown start `{x}`"),
                "\"stationary\" or \"up\"",
            ));
        }
    };
    Ok(gentle_sim::link::Outage {
        gap,
        length,
        from_up,
    })
}

/// A link direction's delay variation ([`gentle_sim::link::jitter`]).
fn parse_jitter(j: &Table<'_>) -> Result<Jitter> {
    j.check_keys(JITTER_KEYS)?;
    let mean = j
        .duration("mean")?
        .ok_or_else(|| j.missing("mean", "a duration like \"5ms\""))?;
    let dist = match j.str("dist", "\"exponential\" or \"pareto\"")? {
        None | Some("exponential") => JitterDist::Exponential,
        Some("pareto") => {
            let shape = j
                .float("shape", "a number above 1")?
                .ok_or_else(|| j.missing("shape", "a number above 1 (1.5 is heavy-tailed)"))?;
            if !(shape > 1.0 && shape.is_finite()) {
                return Err(j.bad(
                    "shape",
                    format!("{shape} leaves the mean infinite"),
                    "a number above 1",
                ));
            }
            JitterDist::Pareto { shape }
        }
        Some(d) => {
            return Err(j.bad(
                "dist",
                format!("unknown distribution `{d}`"),
                "\"exponential\" or \"pareto\"",
            ));
        }
    };
    let correlation = j
        .float("correlation", "a number from 0 to below 1")?
        .unwrap_or(0.0);
    if !(0.0..1.0).contains(&correlation) {
        return Err(j.bad(
            "correlation",
            format!("{correlation} is outside [0, 1)"),
            "a number from 0 to below 1",
        ));
    }
    let reorder = j.bool("reorder")?.unwrap_or(false);
    Ok(Jitter {
        mean,
        dist,
        correlation,
        reorder,
    })
}

/// A Mahimahi trace of delivery opportunities (`trace = "FILE"`, relative to the
/// scenario's directory), read and checked now.
fn parse_trace(t: &Table<'_>) -> Result<LinkTrace> {
    const EXPECTED: &str = "a Mahimahi trace file: one time in ms per line";
    let name = t.req_str("trace", EXPECTED)?;
    let scenario_dir = std::path::Path::new(t.src.file).parent();
    let path = match scenario_dir {
        Some(d) if std::path::Path::new(name).is_relative() => d.join(name),
        _ => std::path::PathBuf::from(name),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        t.bad(
            "trace",
            format!("cannot read {}: {e}", path.display()),
            EXPECTED,
        )
    })?;
    LinkTrace::parse(name, &text)
        .map_err(|(line, m)| t.bad("trace", format!("{}:{line}: {m}", path.display()), EXPECTED))
}
