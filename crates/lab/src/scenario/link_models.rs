//! The tables inside a link direction (`[[link]]`, see `network`): the loss model,
//! the delay variation (`jitter`), outages, RED's parameters (`red`, Floyd &
//! Jacobson 1993, ECN marking per RFC 3168 §5; `fast-start-and-sessions.txt` §4.3),
//! a Mahimahi trace of delivery opportunities (`trace`), and a token-bucket
//! policer (`policer`, Flach et al., SIGCOMM 2016, §2).

use gentle_sim::link::{Jitter, JitterDist, LinkTrace, Policer, QueueLimit, RedParams};
use gentle_sim::loss::{AppliesTo, DropCount, LossModel};

use super::reader::{Result, Table};

const RED_KEYS: &[&str] = &["w_q", "min_th", "max_th", "max_p", "gentle", "ecn"];
const RED_EXPECTED: &str = "true, false, or a table like { w_q = 0.02, min_th = 7.5, max_th = 30, max_p = 0.1, gentle = false, ecn = true }";
const JITTER_KEYS: &[&str] = &["mean", "dist", "shape", "correlation", "reorder"];
pub(super) const JITTER_EXPECTED: &str = "a table like { mean = \"5ms\", dist = \"exponential\", correlation = 0.9, reorder = false } (dist \"exponential\" or \"pareto\" with a shape above 1)";
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

/// `red = true | false | { ... }`: RED's parameters (defaults in
/// [`gentle_sim::link::red`]), thresholds in packets or as `"15%"` of a packet limit.
pub(super) fn parse_red(t: &Table<'_>, limit: QueueLimit) -> Result<Option<RedParams>> {
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
    if let Some(v) = red_threshold(&r, "min_th", limit)? {
        p.min_th = v;
    }
    if let Some(v) = red_threshold(&r, "max_th", limit)? {
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

/// RED's threshold `key`: a number of packets, or a share of a packet limit.
fn red_threshold(r: &Table<'_>, key: &str, limit: QueueLimit) -> Result<Option<f64>> {
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
}

/// A loss model (`model` and its parameters, [`gentle_sim::loss`]) and which
/// packets it applies to.
pub(super) fn parse_loss(l: &Table<'_>) -> Result<(LossModel, AppliesTo)> {
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
    Ok((loss_model(l, model)?, applies))
}

/// The loss model named `model`, with its parameters from `l`.
fn loss_model(l: &Table<'_>, model: &str) -> Result<LossModel> {
    Ok(match model {
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
        "drop-list" => drop_list(l)?,
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
    })
}

/// `model = "drop-list"`: the 1-based indices of the segments, or of the
/// transmissions, to drop (exactly one of the two lists).
fn drop_list(l: &Table<'_>) -> Result<LossModel> {
    let seg = l.int_array("segments", 1)?;
    let tx = l.int_array("transmissions", 1)?;
    let (v, count) = match (seg, tx) {
        (Some(v), None) => (v, DropCount::Segments),
        (None, Some(v)) => (v, DropCount::Transmissions),
        _ => {
            return Err(l.missing(
                "segments",
                "exactly one of `segments` or `transmissions`, an array of 1-based indices",
            ));
        }
    };
    Ok(LossModel::DropList {
        indices: v.into_iter().map(|x| x as u32).collect(),
        count,
    })
}

pub(super) const OUTAGE_EXPECTED: &str = "a table like { gap = \"60s\", length = \"2s\" }: the mean time between outages and their mean length";

/// A link direction's outages ([`gentle_sim::link::outage`]).
pub(super) fn parse_outage(o: &Table<'_>) -> Result<gentle_sim::link::Outage> {
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
pub(super) fn parse_jitter(j: &Table<'_>) -> Result<Jitter> {
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
pub(super) fn parse_trace(t: &Table<'_>) -> Result<LinkTrace> {
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

pub(super) const POLICER_EXPECTED: &str = "a table like { rate = \"1Mbit/s\", burst = \"30KB\" }: the policing rate and the bucket's size";

/// The smallest bucket: one full-sized packet (a 1460-byte segment and its
/// headers), or no such packet could ever pass.
pub const POLICER_MIN_BURST: u64 = 1500;

/// A link direction's token-bucket policer ([`gentle_sim::link::policer`]).
pub(super) fn parse_policer(p: &Table<'_>) -> Result<Policer> {
    p.check_keys(&["rate", "burst"])?;
    const RATE: &str = "a rate above 0 like \"1Mbit/s\"";
    let rate = p.req_str("rate", RATE)?;
    let rate_bps = crate::units::rate(rate).map_err(|m| p.bad("rate", m, RATE))?;
    let burst_bytes = p
        .bytes("burst")?
        .ok_or_else(|| p.missing("burst", "the bucket's size, like \"30KB\""))?;
    if burst_bytes < POLICER_MIN_BURST {
        return Err(p.bad(
            "burst",
            format!(
                "a bucket of {burst_bytes} bytes never passes a full-sized packet ({POLICER_MIN_BURST} bytes)"
            ),
            "a size of at least 1500B, like \"30KB\"",
        ));
    }
    Ok(Policer {
        rate_bps,
        burst_bytes,
    })
}
