//! `[[link]]` sections: two nodes, and per direction a rate, a delay, a queue, a
//! loss model, reordering and duplication, and middleboxes (`strip_option`, the
//! probability of removing the kind-254 option from a packet; `translate_seq`, an
//! offset added to `a`'s sequence numbers; `reserved_bits`, what a middlebox does
//! to the TCP header's reserved bits: `"pass"`, `"clear"` or `"drop"` the packet),
//! and router queue management (`fast-start-and-sessions.txt`): `red` (§4.3,
//! Floyd & Jacobson 1993, ECN marking per RFC 3168 §5), `priority_drop` (§3.3,
//! §7.2) and `scheduling = "acks-first"` (§5); a token-bucket `policer` (Flach et
//! al., SIGCOMM 2016, §2) before the queue.
//! Keys at the top of the link apply to
//! both directions; `[link.a_to_b]` and `[link.b_to_a]` override them.

use std::sync::Arc;
use std::time::Duration;

use gentle_sim::link::{
    ChannelSpec, Draws, LinkSpec, QueueDiscipline, QueueLimit, Reorder, ReservedBits, Scheduling,
};
use gentle_sim::rng::Lazy;
use rand::Rng;
use rand_distr::Distribution;

use super::link_models::{
    JITTER_EXPECTED, OUTAGE_EXPECTED, POLICER_EXPECTED, parse_jitter, parse_loss, parse_outage,
    parse_policer, parse_red, parse_trace,
};
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
    "policer",
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
    "policer",
];
const DIR_EXPECTED: &str = "a table of rate, delay, queue, loss, reorder, jitter, outage, duplicate, draws, strip_option, reserved_bits, red, priority_drop, scheduling, trace, policer";

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

    /// The trial's delay; a fixed one draws nothing (and makes no stream).
    fn sample(&self, rng: &mut Lazy) -> Duration {
        match self {
            DelayParam::Fixed(d) => *d,
            DelayParam::Uniform(a, b) => Duration::from_nanos(
                rng.get()
                    .gen_range(a.as_nanos() as u64..=b.as_nanos() as u64),
            ),
            DelayParam::Choice(v) => v[rng.get().gen_range(0..v.len())],
            DelayParam::LogNormal { median, sigma } => {
                Duration::from_secs_f64(lognormal(rng, median.as_secs_f64(), *sigma))
            }
        }
    }
}

/// A log-normal draw with median `median` and σ `sigma` (checked at parse), kept
/// within [`LOGNORMAL_SPAN`] of the median either way.
fn lognormal(rng: &mut Lazy, median: f64, sigma: f64) -> f64 {
    let x = rand_distr::LogNormal::new(median.ln(), sigma)
        .expect("σ checked at parse")
        .sample(rng.get());
    x.clamp(median / LOGNORMAL_SPAN, median * LOGNORMAL_SPAN)
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChanDef {
    pub spec: ChannelSpec,
    pub delay: DelayParam,
    /// σ of the rate's logarithm when the rate is drawn per trial, log-normal with
    /// the spec's rate as its median (within [`LOGNORMAL_SPAN`] of it): a
    /// population's access bandwidths; `None`: the rate as given.
    pub rate_sigma: Option<f64>,
}

impl ChanDef {
    /// The trial's rate; a fixed one draws nothing (and makes no stream).
    fn sample_rate(&self, rng: &mut Lazy) -> Option<u64> {
        let median = self.spec.rate_bps?;
        let Some(sigma) = self.rate_sigma else {
            return Some(median);
        };
        Some(lognormal(rng, median as f64, sigma).round().max(1.0) as u64)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkDef {
    /// Node names, shared by every trial's link.
    pub a: Arc<str>,
    pub b: Arc<str>,
    pub a_to_b: ChanDef,
    pub b_to_a: ChanDef,
}

impl LinkDef {
    pub fn resolve(&self, rng: &mut Lazy) -> LinkSpec {
        let mut ab = self.a_to_b.spec.clone();
        ab.delay = self.a_to_b.delay.sample(rng);
        let mut ba = self.b_to_a.spec.clone();
        // A shared delay parameter gives both directions the same draw.
        ba.delay = if self.b_to_a.delay == self.a_to_b.delay {
            ab.delay
        } else {
            self.b_to_a.delay.sample(rng)
        };
        // So does a shared rate drawn per trial.
        ab.rate_bps = self.a_to_b.sample_rate(rng);
        let shared = (self.b_to_a.spec.rate_bps, self.b_to_a.rate_sigma)
            == (self.a_to_b.spec.rate_bps, self.a_to_b.rate_sigma);
        ba.rate_bps = if shared {
            ab.rate_bps
        } else {
            self.b_to_a.sample_rate(rng)
        };
        LinkSpec {
            a: Arc::clone(&self.a),
            b: Arc::clone(&self.b),
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
                rate_sigma: None,
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
                a: n(&a).into(),
                b: n(&b).into(),
                a_to_b: ab.clone(),
                b_to_a: ba.clone(),
            });
        }
    }
    Ok(out)
}

/// One direction of a link: `base` (the defaults, or the link's own keys) with the
/// keys of `t` over it.
fn parse_dir(t: &Table<'_>, base: &ChanDef) -> Result<ChanDef> {
    let mut c = base.clone();
    if let Some((rate, sigma)) = parse_rate(t)? {
        c.spec.rate_bps = rate;
        c.rate_sigma = sigma;
    }
    if t.item("delay").is_some() {
        c.delay = parse_delay(t)?;
    }
    parse_queue(t, &mut c.spec)?;
    if let Some(s) = parse_scheduling(t)? {
        c.spec.scheduling = s;
    }
    if let Some(l) = t.sub("loss", "a table like { model = \"bernoulli\", p = 0.02 }")? {
        let (m, applies) = parse_loss(&l)?;
        c.spec.loss = m;
        c.spec.loss_applies = applies;
    }
    if let Some(r) = t.sub("reorder", "a table like { p = 0.01, extra = \"5ms\" }")? {
        c.spec.reorder = Some(parse_reorder(&r)?);
    }
    if t.item("trace").is_some() {
        c.spec.trace = Some(parse_trace(t)?);
    }
    if c.spec.trace.is_some() {
        check_trace(t, &c.spec)?;
    }
    if let Some(j) = t.sub("jitter", JITTER_EXPECTED)? {
        c.spec.jitter = Some(parse_jitter(&j)?);
    }
    if let Some(o) = t.sub("outage", OUTAGE_EXPECTED)? {
        c.spec.outage = Some(parse_outage(&o)?);
    }
    if let Some(p) = t.sub("policer", POLICER_EXPECTED)? {
        c.spec.policer = Some(parse_policer(&p)?);
    }
    if let Some(p) = t.prob("duplicate")? {
        c.spec.duplicate = p;
    }
    if let Some(d) = parse_draws(t)? {
        c.spec.draws = d;
    }
    if let Some(p) = t.prob("strip_option")? {
        c.spec.strip_option = p;
    }
    if let Some(r) = parse_reserved_bits(t)? {
        c.spec.reserved_bits = r;
    }
    Ok(c)
}

/// `rate`: bits per second, or `"unlimited"` (`None`), or drawn per trial,
/// log-normal (`{ median = "3.3Mbit/s", sigma = 1.0 }`: the rate and its σ).
fn parse_rate(t: &Table<'_>) -> Result<Option<(Option<u64>, Option<f64>)>> {
    const EXPECTED: &str =
        "a rate like \"5Mbit/s\", or \"unlimited\", or { median = \"3.3Mbit/s\", sigma = 1.0 }";
    let Some(item) = t.item("rate") else {
        return Ok(None);
    };
    if item.as_str().is_none() {
        let d = t.sub("rate", EXPECTED)?.expect("present");
        d.check_keys(&["median", "sigma"])?;
        const RATE: &str = "a rate above 0 like \"3.3Mbit/s\"";
        let median = d
            .req_str("median", RATE)
            .and_then(|s| units::rate(s).map_err(|m| d.bad("median", m, RATE)))?;
        if median == 0 {
            return Err(d.bad("median", "a log-normal rate needs a median above 0", RATE));
        }
        let sigma = parse_sigma(&d, "rate")?;
        return Ok(Some((Some(median), Some(sigma))));
    }
    let s = t.str("rate", EXPECTED)?.expect("present");
    if s == "unlimited" {
        return Ok(Some((None, None)));
    }
    let rate = units::rate(s).map_err(|m| t.bad("rate", m, EXPECTED))?;
    Ok(Some((Some(rate), None)))
}

/// `queue`, `red` and `priority_drop` over those of `spec`: the queue's limit and
/// its discipline. RED and priority drop need a limited queue.
fn parse_queue(t: &Table<'_>, spec: &mut ChannelSpec) -> Result<()> {
    let mut limit = spec.queue.limit();
    let mut red = spec.queue.red().copied();
    if let Some(l) = parse_limit(t)? {
        limit = l;
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
    spec.queue = match red {
        None => QueueDiscipline::DropTail(limit),
        Some(red) => QueueDiscipline::Red { limit, red },
    };
    if let Some(b) = t.bool("priority_drop")? {
        spec.priority_drop = b;
    }
    if spec.priority_drop && limit == QueueLimit::Unlimited {
        return Err(t.bad(
            at("priority_drop"),
            "priority drop chooses what a full buffer drops, and an unlimited queue is never full",
            "a `queue` limit like \"50pkt\" beside `priority_drop`",
        ));
    }
    Ok(())
}

/// `queue`: a limit in packets or bytes, or `"unlimited"`.
fn parse_limit(t: &Table<'_>) -> Result<Option<QueueLimit>> {
    const EXPECTED: &str = "a limit like \"100pkt\", \"64KiB\", or \"unlimited\"";
    let Some(s) = t.str("queue", EXPECTED)? else {
        return Ok(None);
    };
    let limit = if s == "unlimited" {
        QueueLimit::Unlimited
    } else if let Some(n) = s.strip_suffix("pkt").or_else(|| s.strip_suffix("packets")) {
        let n: u32 = n
            .trim()
            .parse()
            .map_err(|_| t.bad("queue", format!("bad packet count `{n}`"), EXPECTED))?;
        if n == 0 {
            return Err(t.bad("queue", "a queue must hold at least one packet", EXPECTED));
        }
        QueueLimit::Packets(n)
    } else {
        QueueLimit::Bytes(units::bytes(s).map_err(|m| t.bad("queue", m, EXPECTED))?)
    };
    Ok(Some(limit))
}

/// `scheduling`: first in, first out, or ACKs first (`fast-start-and-sessions.txt`
/// §5).
fn parse_scheduling(t: &Table<'_>) -> Result<Option<Scheduling>> {
    const SCHEDULING: &str = "\"fifo\" or \"acks-first\"";
    let Some(s) = t.str("scheduling", SCHEDULING)? else {
        return Ok(None);
    };
    match s {
        "fifo" => Ok(Some(Scheduling::Fifo)),
        "acks-first" => Ok(Some(Scheduling::AcksFirst)),
        _ => {
            let mut e = t.bad(
                "scheduling",
                format!("unknown scheduling \"{s}\""),
                SCHEDULING,
            );
            if let Some(x) = super::error::suggest(s, &["fifo", "acks-first"]) {
                e = e.help(format!("did you mean `{x}`?"));
            }
            Err(e)
        }
    }
}

/// `reorder = { p, extra, packets }`: each packet delayed by `extra` with
/// probability `p`, and the data packets listed (at most 4).
fn parse_reorder(r: &Table<'_>) -> Result<Reorder> {
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
    Ok(Reorder { p, extra, packets })
}

/// A trace sets the capacity, and serves its queue first in, first out: no `rate`,
/// `red`, `priority_drop` or `scheduling` beside it.
fn check_trace(t: &Table<'_>, spec: &ChannelSpec) -> Result<()> {
    if spec.rate_bps.is_some() {
        return Err(t.bad(
            "trace",
            "a trace sets the capacity; `rate` sets it too",
            "`trace` or `rate`, not both",
        ));
    }
    if spec.queue.red().is_some() || spec.priority_drop || spec.scheduling != Scheduling::Fifo {
        return Err(t.bad(
            "trace",
            "a trace-driven link serves its queue first in, first out",
            "no `red`, `priority_drop` or `scheduling` beside `trace`",
        ));
    }
    Ok(())
}

/// `draws`: where the loss, reordering and duplication draws come from: the order
/// packets arrive in, or each packet's position in its byte stream.
fn parse_draws(t: &Table<'_>) -> Result<Option<Draws>> {
    const DRAWS: &str = "\"arrival\" or \"position\"";
    match t.str("draws", DRAWS)? {
        None => Ok(None),
        Some("arrival") => Ok(Some(Draws::Arrival)),
        Some("position") => Ok(Some(Draws::Position)),
        Some(d) => Err(t.bad("draws", format!("unknown value \"{d}\""), DRAWS)),
    }
}

/// `reserved_bits`: what a middlebox does to the TCP header's reserved bits.
fn parse_reserved_bits(t: &Table<'_>) -> Result<Option<ReservedBits>> {
    const RESERVED: &str = "\"pass\", \"clear\" or \"drop\"";
    match t.str("reserved_bits", RESERVED)? {
        None => Ok(None),
        Some("pass") => Ok(Some(ReservedBits::Pass)),
        Some("clear") => Ok(Some(ReservedBits::Clear)),
        Some("drop") => Ok(Some(ReservedBits::Drop)),
        Some(r) => Err(t.bad("reserved_bits", format!("unknown value \"{r}\""), RESERVED)),
    }
}

/// `sigma` of a log-normal `what` (a delay, a rate): required, from 0 to 3.
fn parse_sigma(d: &Table<'_>, what: &str) -> Result<f64> {
    const SIGMA: &str = "a number from 0 to 3";
    let sigma = d.float("sigma", SIGMA)?.ok_or_else(|| {
        d.missing(
            "sigma",
            &format!("σ of the {what}'s logarithm, from 0 to 3"),
        )
    })?;
    if !(0.0..=3.0).contains(&sigma) {
        return Err(d.bad("sigma", "out of range", SIGMA));
    }
    Ok(sigma)
}

fn parse_delay(t: &Table<'_>) -> Result<DelayParam> {
    let expected = "a duration like \"50ms\", or { uniform = [\"10ms\", \"200ms\"] }, or { choice = [\"20ms\", \"100ms\"] }, or { median = \"40ms\", sigma = 0.8 }";
    if t.item("delay").and_then(|i| i.as_str()).is_some() {
        return Ok(DelayParam::Fixed(t.duration("delay")?.expect("present")));
    }
    let d = t.sub("delay", expected)?.expect("present");
    d.check_keys(&["uniform", "choice", "median", "sigma"])?;
    if let Some(median) = d.duration("median")? {
        let sigma = parse_sigma(&d, "delay")?;
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
