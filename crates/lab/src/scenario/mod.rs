//! Scenario files: TOML naming the network, the workload, the trials, the seed and
//! the variants (TCP configurations) to compare; the first variant is the baseline.
//! Every error is reported with `file:line:column` before anything runs. The README
//! documents the format with a worked example.

mod base;
pub mod calibrate;
mod error;
mod link_models;
mod network;
pub mod paper;
pub mod population;
mod reader;
mod sweep;
pub mod targets;
mod variant;
mod workload;

use std::sync::Arc;
use std::time::Duration;

pub use error::ScenarioError;
use error::Source;
use gentle_sim::Setup;
use gentle_sim::workload::WorkloadSpec;
use gentle_tcp::Config;
pub use network::{ChanDef, DelayParam, LinkDef};
use reader::{Result, Table};
pub use sweep::{Axis, Point, Seeding, Sweep, point_seed};
use toml_edit::Item;
pub use variant::switch_table;

/// Which response time the report ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Server receives the request → server receives the ACK of the last byte.
    Server,
    /// Client's first packet → client receives the last byte.
    Client,
    /// Client's first packet → the server's FIN reaches the client.
    Fin,
    /// Page load time.
    Page,
}

/// Which exchanges the latency table ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Filter {
    All,
    /// At least one retransmission (`prr-imc11.txt` Table 9).
    Retransmitted,
    /// At least one packet of the connection lost during the exchange.
    Lost,
    /// A response of more than one segment that lost a packet: Table 11 leaves out
    /// "responses that do not experience losses or fit entirely into one segment"
    /// (§6.1), which early retransmit cannot repair.
    LostMultisegment,
}

impl Filter {
    /// Whether the latency table ranks exchange `r`.
    pub fn ranks(self, r: &gentle_sim::record::ExchangeRecord) -> bool {
        match self {
            Filter::All => true,
            Filter::Retransmitted => r.had_retransmission(),
            Filter::Lost => r.had_loss(),
            // One segment: the default MSS, whatever a variant's `mss`.
            Filter::LostMultisegment => {
                r.had_loss() && r.response_bytes > u64::from(gentle_tcp::config::DEFAULT_MSS)
            }
        }
    }

    /// How a title says which exchanges are ranked.
    pub fn describe(self) -> &'static str {
        match self {
            Filter::All => "",
            Filter::Retransmitted => ", responses with a retransmission",
            Filter::Lost => ", responses that lost a packet",
            Filter::LostMultisegment => ", lossy multi-segment responses",
        }
    }
}

/// A TCP configuration to compare.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    /// Shared by the trials' setups, not copied into each.
    pub config: Arc<Config>,
    /// The backend leg's configuration, for workloads relayed through a frontend;
    /// `None`: the same as `config`.
    pub backend: Option<Config>,
    /// The server side's configuration per workload, for workloads with a
    /// `switches` table (the variant's switches, then the workload's).
    pub workload_configs: Vec<Option<Config>>,
    /// The kernel configuration real mode runs this variant as, when the file gives
    /// one (`kernel = { ... }`); otherwise real mode derives it from `config`.
    pub kernel: Option<KernelSpec>,
}

/// A variant's `kernel` table: a congestion control and `net.ipv4.tcp_*` sysctls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelSpec {
    pub cc: Option<String>,
    pub sysctls: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub trials: u64,
    /// Trials with `--quick`.
    pub quick_trials: u64,
    pub metric: Metric,
    pub time_limit: Duration,
    pub links: Vec<LinkDef>,
    /// The paper's numbers to print beside the run's (`[paper]`).
    pub paper: Option<paper::Paper>,
    /// Access networks drawn per trial in place of `links` (`[population]`).
    pub population: Vec<population::Member>,
    /// Shared by the trials' setups, not copied into each.
    pub workloads: Vec<Arc<gentle_sim::workload::WorkloadSpec>>,
    pub variants: Vec<Variant>,
    pub capture: Option<String>,
    /// Draw a time-sequence graph of trial 0 of every variant with `--out`.
    pub tsg: bool,
    /// Rank only some exchanges.
    pub filter: Filter,
    /// Print the recovery-episode tables (`prr-imc11.txt` Tables 5–7).
    pub recovery_stats: bool,
    /// The sweep point this scenario is, as `(axis, label)` pairs; empty outside a
    /// sweep.
    pub point: Vec<(String, String)>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "trials",
    "quick_trials",
    "metric",
    "time_limit",
    "duration",
    "capture",
    "plot",
    "filter",
    "recovery_stats",
    "link",
    "workload",
    "variant",
    "calibrate",
    "base",
    "population",
    "paper",
];

impl Scenario {
    /// Parses and validates a scenario without a `[sweep]` (see [`Sweep::parse`]
    /// for files with one). `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> std::result::Result<Scenario, ScenarioError> {
        let src = Source { file, text };
        let doc = parse_toml(src)?;
        let root = base::with_base(src, doc.as_table())?;
        if root.contains_key("sweep") {
            let top = Table::new(src, root.as_ref(), Some(0..0), "the scenario");
            return Err(top.bad(
                "sweep",
                "this file is a sweep of many scenarios",
                "a scenario without [sweep] (a sweep is read point by point)",
            ));
        }
        parse_doc(src, &root)
    }

    /// The simulator setup of one trial of `variant` (per-trial parameters such as a
    /// delay drawn from a range come from `trial_seed`).
    pub fn setup(&self, variant: &Variant, trial_seed: u64) -> Setup {
        let mut rng = gentle_sim::rng::lazy_stream(trial_seed, gentle_sim::rng::ids::NETWORK);
        let (links, workloads) = match self.population.as_slice() {
            [] => (&self.links, &self.workloads),
            members => {
                let m = population::choose(members, rand::Rng::r#gen::<f64>(rng.get()));
                (&m.links, &m.workloads)
            }
        };
        Setup {
            nodes: Vec::new(),
            links: links.iter().map(|l| l.resolve(&mut rng)).collect(),
            workloads: workloads
                .iter()
                .enumerate()
                .map(|(i, w)| for_variant(w, variant, i))
                .collect(),
            config: Arc::clone(&variant.config),
            time_limit: self.time_limit,
        }
    }

    /// The node whose packets a pcap shows: the `capture` key, or the first
    /// measured workload's server.
    pub fn capture_node(&self) -> String {
        self.capture.clone().unwrap_or_else(|| {
            self.workloads
                .iter()
                .find(|w| w.measure)
                .or(self.workloads.first())
                .map_or(String::new(), |w| w.server.clone())
        })
    }
}

/// Workload `i` as `variant` runs it: its backend leg with the variant's backend
/// configuration and its server side with the variant's per-workload one — the
/// scenario's own, shared, when the variant changes neither.
fn for_variant(w: &Arc<WorkloadSpec>, variant: &Variant, i: usize) -> Arc<WorkloadSpec> {
    let server_config = variant.workload_configs.get(i).cloned().flatten();
    let backend_differs = w
        .backend
        .as_ref()
        .is_some_and(|b| b.config != variant.backend);
    if !backend_differs && w.server_config == server_config {
        return Arc::clone(w);
    }
    let mut w = WorkloadSpec::clone(w);
    if let Some(b) = w.backend.as_mut() {
        b.config = variant.backend.clone();
    }
    w.server_config = server_config;
    Arc::new(w)
}

fn parse_toml(src: Source<'_>) -> Result<toml_edit::Document<String>> {
    toml_edit::Document::parse(src.text.to_string()).map_err(|e| {
        let span = e.span();
        src.error(span, format!("invalid TOML: {}", e.message()))
            .expected("TOML syntax")
    })
}

/// Reads a scenario from its top-level table (a `[calibrate]` table is read by
/// [`crate::calibrate`]; a scenario runs with the values it holds).
pub(crate) fn parse_doc(src: Source<'_>, root: &toml_edit::Table) -> Result<Scenario> {
    let top = Table::new(src, root, Some(0..0), "the scenario");
    top.check_keys(TOP_KEYS)?;
    let head = parse_head(&top)?;
    let links = network::parse_links(&top)?;
    let nodes: Vec<String> = links
        .iter()
        .flat_map(|l| [l.a.to_string(), l.b.to_string()])
        .collect();
    let pairs: Vec<(String, String)> = links
        .iter()
        .map(|l| (l.a.to_string(), l.b.to_string()))
        .collect();
    let (workloads, table_of) = workload::parse_workloads(
        &top,
        &nodes,
        &pairs,
        head.time_limit,
        head.duration.is_some(),
    )?;
    let population = population::parse_population(src, root, workloads.len())?;
    let relayed = workloads.iter().any(|w| w.backend.is_some());
    let mut variants = variant::parse_variants(&top, relayed)?;
    let names: Vec<String> = variants.iter().map(|v| v.name.clone()).collect();
    let paper = paper::parse_paper(&top, &names)?;
    workload_switches(&top, &mut variants, &table_of)?;
    if let Some(c) = &head.capture
        && !nodes.contains(c)
    {
        return Err(top.bad(
            "capture",
            format!("node `{c}` is not on any link"),
            "a node named in a [[link]]",
        ));
    }
    Ok(Scenario {
        name: head.name,
        description: head.description,
        seed: head.seed,
        trials: head.trials,
        quick_trials: head.quick_trials,
        metric: head.metric.unwrap_or_else(|| default_metric(&workloads)),
        time_limit: head.time_limit,
        links,
        paper,
        population,
        workloads: workloads.into_iter().map(Arc::new).collect(),
        variants,
        capture: head.capture,
        tsg: head.tsg,
        filter: head.filter,
        recovery_stats: head.recovery_stats,
        point: Vec::new(),
    })
}

/// The keys at the top of a scenario that name no section.
struct Head {
    name: String,
    description: String,
    seed: u64,
    trials: u64,
    quick_trials: u64,
    /// `None`: the page load time if a measured workload loads pages, else the
    /// server-side response time ([`default_metric`]).
    metric: Option<Metric>,
    /// `duration`: every trial runs this long, and no workload needs to be measured
    /// (long bulk transfers, judged by what the links carried).
    duration: Option<Duration>,
    time_limit: Duration,
    capture: Option<String>,
    filter: Filter,
    recovery_stats: bool,
    tsg: bool,
}

fn parse_head(top: &Table<'_>) -> Result<Head> {
    let name = top
        .str("name", "a string")?
        .unwrap_or("scenario")
        .to_string();
    let description = top
        .str("description", "a string")?
        .unwrap_or("")
        .to_string();
    let seed = top.int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let trials = top.int("trials", 1, 1_000_000_000)?.unwrap_or(1000) as u64;
    let quick_trials = top
        .int("quick_trials", 1, 1_000_000_000)?
        .map_or(trials.min(200), |v| v as u64);
    let metric = parse_metric(top)?;
    let (duration, time_limit) = parse_time_limit(top)?;
    let capture = top.str("capture", "a node name")?.map(str::to_string);
    let filter = parse_filter(top)?;
    let recovery_stats = top.bool("recovery_stats")?.unwrap_or(false);
    let tsg = match top.str("plot", "\"tsg\"")? {
        None => false,
        Some("tsg") => true,
        Some(x) => {
            return Err(top.bad("plot", format!("unknown plot `{x}`"), "\"tsg\""));
        }
    };
    Ok(Head {
        name,
        description,
        seed,
        trials,
        quick_trials,
        metric,
        duration,
        time_limit,
        capture,
        filter,
        recovery_stats,
        tsg,
    })
}

fn parse_metric(top: &Table<'_>) -> Result<Option<Metric>> {
    const METRICS: &str = "\"server\", \"client\", \"fin\" or \"page\"";
    match top.str("metric", METRICS)? {
        None => Ok(None),
        Some("server") => Ok(Some(Metric::Server)),
        Some("client") => Ok(Some(Metric::Client)),
        Some("fin") => Ok(Some(Metric::Fin)),
        Some("page") => Ok(Some(Metric::Page)),
        Some(m) => Err(top.bad("metric", format!("unknown metric `{m}`"), METRICS)),
    }
}

/// `duration` or `time_limit` (600 s by default): the `duration`, if given, and the
/// time limit of a trial.
fn parse_time_limit(top: &Table<'_>) -> Result<(Option<Duration>, Duration)> {
    let duration = top.duration("duration")?;
    if duration.is_some() && top.item("time_limit").is_some() {
        return Err(top.bad(
            "duration",
            "`duration` is the time limit of a trial that runs to its end",
            "`duration` or `time_limit`, not both",
        ));
    }
    let time_limit = match duration {
        Some(d) => d,
        None => top
            .duration("time_limit")?
            .unwrap_or(Duration::from_secs(600)),
    };
    if time_limit.is_zero() {
        return Err(top.bad(
            "time_limit",
            "a trial cannot run for no time",
            "a positive duration like \"600s\"",
        ));
    }
    Ok((duration, time_limit))
}

fn parse_filter(top: &Table<'_>) -> Result<Filter> {
    const EXPECTED: &str = "\"retransmitted\", \"lost\" or \"lost-multisegment\"";
    match top.str("filter", EXPECTED)? {
        None => Ok(Filter::All),
        Some("retransmitted") => Ok(Filter::Retransmitted),
        Some("lost") => Ok(Filter::Lost),
        Some("lost-multisegment") => Ok(Filter::LostMultisegment),
        Some(x) => Err(top.bad("filter", format!("unknown filter `{x}`"), EXPECTED)),
    }
}

/// A workload's own switches for its server side, over each variant's: every
/// variant's configuration per workload, `table_of` giving each workload's table.
fn workload_switches(top: &Table<'_>, variants: &mut [Variant], table_of: &[usize]) -> Result<()> {
    let wts = tables(top, "workload")?;
    for v in variants.iter_mut() {
        v.workload_configs = Vec::with_capacity(table_of.len());
        for &i in table_of {
            let cfg = match wts[i].sub("switches", "a table of switches")? {
                None => None,
                Some(s) => Some(server_switches(&s, &v.config)?),
            };
            v.workload_configs.push(cfg);
        }
    }
    Ok(())
}

/// A workload's `switches` table over the variant's configuration `config`.
fn server_switches(s: &Table<'_>, config: &Config) -> Result<Config> {
    if s.item("accelerated_open").is_some() {
        return Err(s.bad(
            "accelerated_open",
            "an accelerated open is both ends' at once: the variant sets it",
            "`accelerated_open` in the [[variant]]",
        ));
    }
    let inner: Vec<&str> = variant::keys()
        .into_iter()
        .filter(|k| !matches!(*k, "name" | "backend" | "profile"))
        .collect();
    s.check_keys(&inner)?;
    variant::apply_switches(s, config.clone())
}

/// The metric of a scenario that names none: the page load time if a measured
/// workload loads pages, else the server-side response time.
fn default_metric(workloads: &[gentle_sim::workload::WorkloadSpec]) -> Metric {
    if workloads
        .iter()
        .any(|w| w.measure && matches!(w.kind, gentle_sim::workload::WorkloadKind::Page { .. }))
    {
        Metric::Page
    } else {
        Metric::Server
    }
}

/// The tables of an array of tables `[[key]]`, with names like `[[link]] #2`.
fn tables<'a>(top: &Table<'a>, key: &str) -> Result<Vec<Table<'a>>> {
    match top.item(key) {
        None => Ok(Vec::new()),
        Some(Item::ArrayOfTables(a)) => Ok(a
            .iter()
            .enumerate()
            .map(|(i, t)| Table::new(top.src, t, t.span(), format!("[[{key}]] #{}", i + 1)))
            .collect()),
        Some(_) => Err(top.bad(
            key,
            "wrong type",
            &format!("an array of tables, written [[{key}]]"),
        )),
    }
}
