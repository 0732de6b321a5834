//! `[[workload]]` sections.

use std::time::Duration;

use gentle_sim::workload::{Backend, ConnectionMode, Size, WorkloadKind, WorkloadSpec};
use gentle_tcp::ReceiverPolicy;

use super::reader::{Result, Table};
use super::tables;

const KEYS: &[&str] = &[
    "name",
    "kind",
    "client",
    "server",
    "port",
    "request",
    "response",
    "exchanges",
    "connection",
    "think",
    "server_close",
    "bytes",
    "writes",
    "objects",
    "object",
    "connections",
    "bursts",
    "burst",
    "idle",
    "start",
    "jitter",
    "measure",
    "max_window",
    "client_receiver",
    "client_sack",
    "client_dsack",
    "backend",
    "warmup",
    "switches",
    "count",
    "period",
    "period_jitter",
];
const BACKEND: &str = "a table: node, and optionally port, pool, request";
/// Whether `a` and `b` are joined by a chain of links.
fn connected(links: &[(String, String)], a: &str, b: &str) -> bool {
    let mut seen = vec![a];
    let mut i = 0;
    while i < seen.len() {
        let n = seen[i];
        for (x, y) in links {
            for (from, to) in [(x, y), (y, x)] {
                if from == n && !seen.contains(&to.as_str()) {
                    seen.push(to);
                }
            }
        }
        i += 1;
    }
    seen.contains(&b)
}

const RECEIVERS: &str = "\"linux\", \"windows\" or \"rfc\"";
const KINDS: &str = "\"exchanges\", \"bulk\", \"onoff\", \"writes\" or \"page\"";
const SIZE: &str = "a size like \"5000B\", or { dist = \"exponential\", mean = \"7.5KB\" } (dists: uniform min/max, exponential mean, lognormal median or mean, and sigma, choice sizes/weights)";

/// Parses the `[[workload]]` tables. `links` are the `(a, b)` node pairs of the
/// links, to check that each client reaches its server; `time_limit` bounds the
/// start times; with `fixed_duration` (the scenario's `duration`) no workload needs
/// to be measured. A table with `count = N` gives N workloads (`name#1` ...); the
/// second list holds the table index of each workload.
pub fn parse_workloads(
    top: &Table<'_>,
    nodes: &[String],
    links: &[(String, String)],
    time_limit: Duration,
    fixed_duration: bool,
) -> Result<(Vec<WorkloadSpec>, Vec<usize>)> {
    let mut table_of = Vec::new();
    let ts = tables(top, "workload")?;
    if ts.is_empty() {
        return Err(top.missing("workload", "at least one [[workload]]"));
    }
    let net = Net { nodes, links };
    let mut out = Vec::new();
    for (i, t) in ts.iter().enumerate() {
        let (spec, count) = parse_workload(t, i, &net, time_limit)?;
        out.extend(copies(spec, count));
        table_of.extend(std::iter::repeat_n(i, count));
    }
    if !fixed_duration && !out.iter().any(|w| w.measure) {
        return Err(top.missing(
            "workload",
            "at least one measured [[workload]] (measure = true)",
        ));
    }
    Ok((out, table_of))
}

/// The nodes on links, and the `(a, b)` node pairs of the links.
struct Net<'a> {
    nodes: &'a [String],
    links: &'a [(String, String)],
}

impl Net<'_> {
    fn has(&self, node: &str) -> bool {
        self.nodes.iter().any(|x| x == node)
    }
}

/// The `i`th `[[workload]]` table, `t`: its workload, with `{k}` still in the node
/// names, and how many copies of it to make.
fn parse_workload(
    t: &Table<'_>,
    i: usize,
    net: &Net<'_>,
    time_limit: Duration,
) -> Result<(WorkloadSpec, usize)> {
    t.check_keys(KEYS)?;
    let (client, server) = endpoints(t, net)?;
    check_start(t, time_limit)?;
    let kind_s = t.str("kind", KINDS)?.unwrap_or("exchanges");
    let kind = parse_kind(t, kind_s)?;
    let measure = parse_measure(t, &kind)?;
    let max_window = parse_max_window(t)?;
    let client_receiver = parse_receiver(t)?;
    let backend = parse_backend(t, &kind, net, &client, &server)?;
    let warmup = parse_warmup(t, &kind, kind_s)?;
    let period = parse_period(t, &kind)?;
    let count = t.int("count", 0, 100_000)?.unwrap_or(1) as usize;
    if count == 0 && measure {
        return Err(t.bad(
            "count",
            "a measured workload needs at least one copy",
            "count ≥ 1, or measure = false",
        ));
    }
    let name = t
        .str("name", "a string")?
        .map_or_else(|| format!("workload{}", i + 1), str::to_string);
    let spec = WorkloadSpec {
        backend,
        name,
        client,
        server,
        port: t.int("port", 1, 65535)?.unwrap_or(80) as u16,
        kind,
        start: t.duration("start")?.unwrap_or(Duration::ZERO),
        jitter: t.duration("jitter")?.unwrap_or(Duration::ZERO),
        measure,
        client_config: None,
        max_window: max_window.map(|w| w as u32),
        client_receiver,
        client_sack: t.bool("client_sack")?,
        client_dsack: t.bool("client_dsack")?,
        warmup,
        server_config: None,
        period,
    };
    check_copies(t, &spec, count, net)?;
    Ok((spec, count))
}

/// The client and the server: two different nodes on links, joined by a chain of
/// links. `{k}` numbers the copies' hosts; the first copy's must exist here, the
/// others once `count` is known ([`check_copies`]).
fn endpoints(t: &Table<'_>, net: &Net<'_>) -> Result<(String, String)> {
    let node = |key: &str| -> Result<String> {
        let n = t.req_str(key, "a node name")?;
        if !net.has(&n.replace("{k}", "1")) {
            let names: Vec<&str> = net.nodes.iter().map(String::as_str).collect();
            let mut e = t.bad(
                key,
                format!("node `{n}` is not on any link"),
                "a node named in a [[link]]",
            );
            if let Some(s) = super::error::suggest(n, &names) {
                e = e.help(format!("did you mean `{s}`?"));
            }
            return Err(e);
        }
        Ok(n.to_string())
    };
    let client = node("client")?;
    let server = node("server")?;
    let (c1, s1) = (client.replace("{k}", "1"), server.replace("{k}", "1"));
    if c1 == s1 {
        return Err(t.bad(
            "server",
            "client and server are the same node",
            "two different nodes",
        ));
    }
    if !connected(net.links, &c1, &s1) {
        return Err(t.bad(
            "server",
            format!(
                "node `{server}` cannot be reached from `{client}`: no chain of links joins them"
            ),
            "a server connected to the client by [[link]]s",
        ));
    }
    Ok((client, server))
}

/// `start` and `jitter` lie before the time limit.
fn check_start(t: &Table<'_>, time_limit: Duration) -> Result<()> {
    for key in ["start", "jitter"] {
        if let Some(d) = t.duration(key)?
            && d >= time_limit
        {
            return Err(t.bad(
                key,
                format!(
                    "{} ms is not before the time limit of {} ms",
                    d.as_millis(),
                    time_limit.as_millis()
                ),
                "a time shorter than `time_limit`",
            ));
        }
    }
    Ok(())
}

/// What the workload sends, by its `kind` (`kind_s`) and that kind's keys.
fn parse_kind(t: &Table<'_>, kind_s: &str) -> Result<WorkloadKind> {
    Ok(match kind_s {
        "exchanges" => WorkloadKind::Exchanges {
            request: size(t, "request")?.unwrap_or(Size::Fixed(40)),
            response: nonzero(t, "response", size(t, "response")?)?
                .ok_or_else(|| t.missing("response", SIZE))?,
            exchanges: t.int("exchanges", 1, 10_000_000)?.unwrap_or(1) as u32,
            mode: mode(t)?,
            think: t.duration("think")?.unwrap_or(Duration::ZERO),
            server_close: t.bool("server_close")?.unwrap_or(false),
        },
        "onoff" => WorkloadKind::Exchanges {
            request: Size::Fixed(0),
            response: nonzero(t, "burst", size(t, "burst")?)?
                .ok_or_else(|| t.missing("burst", SIZE))?,
            exchanges: t.int("bursts", 1, 10_000_000)?.unwrap_or(1) as u32,
            mode: ConnectionMode::Persistent,
            think: t.duration("idle")?.unwrap_or(Duration::ZERO),
            server_close: false,
        },
        "bulk" => WorkloadKind::Bulk {
            bytes: t.bytes("bytes")?,
        },
        "writes" => WorkloadKind::Writes { writes: writes(t)? },
        "page" => WorkloadKind::Page {
            objects: t
                .int("objects", 1, 100_000)?
                .ok_or_else(|| t.missing("objects", "the number of objects"))?
                as u32,
            object: size(t, "object")?.ok_or_else(|| t.missing("object", SIZE))?,
            request: size(t, "request")?.unwrap_or(Size::Fixed(400)),
            connections: t.int("connections", 1, 10_000)?.unwrap_or(1) as u32,
        },
        k => {
            let mut e = t.bad("kind", format!("unknown workload kind `{k}`"), KINDS);
            if let Some(s) =
                super::error::suggest(k, &["exchanges", "bulk", "onoff", "writes", "page"])
            {
                e = e.help(format!("did you mean `{s}`?"));
            }
            return Err(e);
        }
    })
}

/// `measure`: by default every workload but an endless bulk transfer, which cannot
/// be.
fn parse_measure(t: &Table<'_>, kind: &WorkloadKind) -> Result<bool> {
    let is_bulk_forever = matches!(kind, WorkloadKind::Bulk { bytes: None });
    let measure = t.bool("measure")?.unwrap_or(!is_bulk_forever);
    if measure && is_bulk_forever {
        return Err(t.bad(
            "measure",
            "an endless bulk transfer never finishes",
            "measure = false, or set `bytes`",
        ));
    }
    Ok(measure)
}

/// `max_window`, in bytes, from 536B to 1GiB.
fn parse_max_window(t: &Table<'_>) -> Result<Option<u64>> {
    let max_window = t.bytes("max_window")?;
    if let Some(w) = max_window
        && (!(536..=1 << 30).contains(&w))
    {
        return Err(t.bad(
            "max_window",
            format!("{w} bytes is out of range"),
            "from 536B to 1GiB",
        ));
    }
    Ok(max_window)
}

/// `client_receiver`: the client's receiver policy, by name.
fn parse_receiver(t: &Table<'_>) -> Result<Option<ReceiverPolicy>> {
    match t.str("client_receiver", RECEIVERS)? {
        None => Ok(None),
        Some(v) => Ok(Some(ReceiverPolicy::from_name(v).ok_or_else(|| {
            t.bad(
                "client_receiver",
                format!("unknown receiver policy `{v}`"),
                RECEIVERS,
            )
        })?)),
    }
}

/// `backend`: the third node an `exchanges` workload's server (the frontend)
/// relays each request to.
fn parse_backend(
    t: &Table<'_>,
    kind: &WorkloadKind,
    net: &Net<'_>,
    client: &str,
    server: &str,
) -> Result<Option<Backend>> {
    let Some(b) = t.sub("backend", BACKEND)? else {
        return Ok(None);
    };
    b.check_keys(&["node", "port", "pool", "request"])?;
    if !matches!(kind, WorkloadKind::Exchanges { .. }) {
        return Err(t.bad(
            "backend",
            "only an `exchanges` workload relays through a frontend",
            "kind = \"exchanges\", or no backend",
        ));
    }
    let n = b.req_str("node", "a node name")?;
    if !net.has(n) {
        return Err(b.bad(
            "node",
            format!("node `{n}` is not on any link"),
            "a node named in a [[link]]",
        ));
    }
    if n == server || n == client {
        return Err(b.bad(
            "node",
            "the backend must be a third node",
            "a node other than the client and the frontend",
        ));
    }
    if !connected(net.links, server, n) {
        return Err(b.bad(
            "node",
            format!("no path from `{server}` to `{n}`"),
            "a node the frontend reaches",
        ));
    }
    Ok(Some(Backend {
        node: n.to_string(),
        port: b.int("port", 1, 65535)?.unwrap_or(8080) as u16,
        pool: b.int("pool", 1, 1000)?.unwrap_or(4) as u32,
        request: size(&b, "request")?.unwrap_or(Size::Fixed(400)),
        config: None,
    }))
}

/// `warmup`: exchanges left out of the records, fewer than an `exchanges` (or
/// `onoff`) workload has; the other kinds have one record, nothing to warm up.
fn parse_warmup(t: &Table<'_>, kind: &WorkloadKind, kind_s: &str) -> Result<u32> {
    let warmup = t.int("warmup", 0, 10_000_000)?.unwrap_or(0) as u32;
    if warmup > 0 {
        match kind {
            WorkloadKind::Exchanges { exchanges, .. } if warmup >= *exchanges => {
                return Err(t.bad(
                    "warmup",
                    format!("warmup = {warmup} leaves none of the {exchanges} exchanges to record"),
                    "a warmup smaller than `exchanges` (`bursts`)",
                ));
            }
            WorkloadKind::Exchanges { .. } => {}
            _ => {
                return Err(t.bad(
                    "warmup",
                    format!("a `{kind_s}` workload has one record: nothing to warm up"),
                    "warmup on an `exchanges` or `onoff` workload",
                ));
            }
        }
    }
    Ok(warmup)
}

/// `period` and `period_jitter`: exchanges on a schedule, over one persistent
/// connection, in place of idle (think) times.
fn parse_period(t: &Table<'_>, kind: &WorkloadKind) -> Result<Option<(Duration, Duration)>> {
    let Some(p) = t.duration("period")? else {
        if t.item("period_jitter").is_some() {
            return Err(t.bad(
                "period_jitter",
                "a jitter of no period",
                "`period` beside `period_jitter`",
            ));
        }
        return Ok(None);
    };
    if p.is_zero() {
        return Err(t.bad("period", "a period of no time", "a positive duration"));
    }
    if !matches!(
        kind,
        WorkloadKind::Exchanges {
            mode: ConnectionMode::Persistent,
            ..
        }
    ) {
        return Err(t.bad(
            "period",
            "exchanges on a schedule need one persistent connection",
            "`period` on an `onoff` workload, or `exchanges` with connection = \"persistent\"",
        ));
    }
    for k in ["idle", "think"] {
        if t.item(k).is_some() {
            return Err(t.bad(
                k,
                "`period` schedules the exchanges: there is no idle time to give",
                "`period` or `idle`/`think`, not both",
            ));
        }
    }
    Ok(Some((
        p,
        t.duration("period_jitter")?.unwrap_or(Duration::ZERO),
    )))
}

/// Every copy's client and server are on links.
fn check_copies(t: &Table<'_>, spec: &WorkloadSpec, count: usize, net: &Net<'_>) -> Result<()> {
    for (key, n) in [("client", &spec.client), ("server", &spec.server)] {
        if let Some(k) = (1..=count).find(|k| !net.has(&n.replace("{k}", &k.to_string()))) {
            return Err(t.bad(
                key,
                format!(
                    "copy {k} of the workload needs node `{}`, which is not on any link",
                    n.replace("{k}", &k.to_string())
                ),
                "as many numbered nodes on links as `count` copies",
            ));
        }
    }
    Ok(())
}

/// The `count` copies of `spec`, named `name#1` ... when there are several.
fn copies(spec: WorkloadSpec, count: usize) -> impl Iterator<Item = WorkloadSpec> {
    (0..count).map(move |k| {
        let mut w = spec.clone();
        if count > 1 {
            w.name = format!("{}#{}", spec.name, k + 1);
        }
        // `{k}` in a node name numbers the copies' hosts from 1 (`src{k}`).
        let n = (k + 1).to_string();
        w.client = w.client.replace("{k}", &n);
        w.server = w.server.replace("{k}", &n);
        w
    })
}

fn mode(t: &Table<'_>) -> Result<ConnectionMode> {
    match t.str("connection", "\"fresh\" or \"persistent\"")? {
        None | Some("fresh") => Ok(ConnectionMode::Fresh),
        Some("persistent") => Ok(ConnectionMode::Persistent),
        Some(m) => Err(t.bad(
            "connection",
            format!("unknown connection mode `{m}`"),
            "\"fresh\" or \"persistent\"",
        )),
    }
}

/// A response (or burst) of 0 bytes has no response time: every quantile would read
/// 0 ms. Refused.
fn nonzero(t: &Table<'_>, key: &str, s: Option<Size>) -> Result<Option<Size>> {
    if let Some(Size::Fixed(0)) = s {
        return Err(t.bad(
            key,
            "0 bytes: nothing would be sent, and no response time measured",
            "a size of at least 1B",
        ));
    }
    Ok(s)
}

/// A size: fixed (`"5000B"`), or drawn per exchange from a distribution
/// (`{ dist = "exponential", mean = "7.5KB" }`).
fn size(t: &Table<'_>, key: &str) -> Result<Option<Size>> {
    match t.item(key) {
        None => Ok(None),
        Some(i) if i.is_str() => Ok(Some(Size::Fixed(t.bytes(key)?.expect("present")))),
        Some(_) => {
            let d = t.sub(key, SIZE)?.expect("present");
            d.check_keys(&[
                "dist", "mean", "min", "max", "median", "sigma", "sizes", "weights",
            ])?;
            size_dist(&d).map(Some)
        }
    }
}

const DISTS: &str = "\"uniform\", \"exponential\", \"lognormal\" or \"choice\"";

/// A size distribution's table: `dist` and its parameters.
fn size_dist(d: &Table<'_>) -> Result<Size> {
    let dist = d.req_str("dist", DISTS)?;
    let req_bytes = |k: &str| -> Result<u64> {
        d.bytes(k)?
            .ok_or_else(|| d.missing(k, "a size like \"7.5KB\""))
    };
    Ok(match dist {
        "uniform" => {
            let (lo, hi) = (req_bytes("min")?, req_bytes("max")?);
            if lo > hi {
                return Err(d.bad("max", "smaller than `min`", "max ≥ min"));
            }
            Size::Uniform { lo, hi }
        }
        "exponential" => Size::Exponential {
            mean: req_bytes("mean")? as f64,
        },
        "lognormal" => lognormal(d)?,
        "choice" => Size::Choice(choice(d)?),
        x => {
            return Err(d.bad("dist", format!("unknown distribution `{x}`"), DISTS));
        }
    })
}

/// `dist = "lognormal"`: `sigma` and either `median` or `mean` (the median is then
/// mean·e^(−σ²/2), so that a fit of `sigma` keeps the mean a paper gives).
fn lognormal(d: &Table<'_>) -> Result<Size> {
    const EXPECTED: &str = "a number ≥ 0";
    let sigma = d
        .float("sigma", EXPECTED)?
        .ok_or_else(|| d.missing("sigma", EXPECTED))?;
    if !(sigma.is_finite() && sigma >= 0.0) {
        return Err(d.bad("sigma", format!("{sigma} is negative"), EXPECTED));
    }
    let median = match (d.bytes("median")?, d.bytes("mean")?) {
        (Some(m), None) => m as f64,
        (None, Some(mean)) => mean as f64 * (-sigma * sigma / 2.0).exp(),
        (Some(_), Some(_)) => {
            return Err(d.bad(
                "mean",
                "a log-normal size takes `median` or `mean`, not both",
                "one of `median`, `mean`",
            ));
        }
        (None, None) => return Err(d.missing("median", "a size like \"4.5KB\" (or `mean`)")),
    };
    Ok(Size::LogNormal { median, sigma })
}

/// `dist = "choice"`: `sizes`, each as likely as the others unless `weights` (one
/// per size) say otherwise.
fn choice(d: &Table<'_>) -> Result<Vec<(u64, f64)>> {
    let sizes = d
        .str_array("sizes", "sizes like \"5KB\"")?
        .ok_or_else(|| d.missing("sizes", "an array of sizes"))?;
    let mut items = Vec::new();
    for (s, span) in &sizes {
        let n = crate::units::bytes(s)
            .map_err(|m| d.src.error(span.clone(), m).expected("a size like \"5KB\""))?;
        items.push((n, 1.0));
    }
    if let Some(w) = d.item("weights").and_then(|i| i.as_array()) {
        if w.len() != items.len() {
            return Err(d.bad(
                "weights",
                "needs one weight per size",
                "an array of numbers as long as `sizes`",
            ));
        }
        for (it, v) in items.iter_mut().zip(w.iter()) {
            it.1 = v
                .as_float()
                .or_else(|| v.as_integer().map(|x| x as f64))
                .filter(|x| *x >= 0.0)
                .ok_or_else(|| d.src.error(v.span(), "bad weight").expected("a number ≥ 0"))?;
        }
    }
    if items.is_empty() {
        return Err(d.bad("sizes", "is empty", "at least one size"));
    }
    Ok(items)
}

const WRITES: &str = "a list like [\"20kB at 0ms\", \"10kB at 500ms\"] (size at time)";

/// `writes = ["20kB at 0ms", "10kB at 500ms"]`: sizes and times, in time order.
fn writes(t: &Table<'_>) -> Result<Vec<(Duration, u64)>> {
    let items = t
        .str_array("writes", WRITES)?
        .ok_or_else(|| t.missing("writes", WRITES))?;
    if items.is_empty() {
        return Err(t.bad("writes", "no writes", WRITES));
    }
    let mut out: Vec<(Duration, u64)> = Vec::new();
    for (s, span) in items {
        let err = |msg: String| t.src.error(span.clone(), msg).expected(WRITES.to_string());
        let Some((size, at)) = s.split_once(" at ") else {
            return Err(err(format!("`{s}` is not \"SIZE at TIME\"")));
        };
        let bytes = crate::units::bytes(size.trim()).map_err(err)?;
        let at = crate::units::duration(at.trim()).map_err(err)?;
        if out.last().is_some_and(|l| l.0 > at) {
            return Err(err(format!("`{s}` comes before the write listed above it")));
        }
        out.push((at, bytes));
    }
    Ok(out)
}
