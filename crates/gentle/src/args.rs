//! The command line of `gentle`: every subcommand's flags (clap), and each one's
//! conversion to what the library's command takes. Nothing here does the work.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use gentle_lab::bench;

/// The flags `gentle serve` and `gentle connect` share with `gentle emulate`.
#[derive(clap::Args)]
pub struct EngineRun {
    /// The scenario (TOML), or the name of a built-in experiment.
    scenario: PathBuf,
    /// Run the scenario's `quick_trials` instead of its `trials`.
    #[arg(long)]
    quick: bool,
    /// The sweep point to run, for a scenario with a [sweep]: `AXIS=VALUE,...`.
    #[arg(long, value_name = "AXIS=VALUE,...")]
    point: Option<String>,
    /// Number of trials (overrides the scenario).
    #[arg(long)]
    trials: Option<u64>,
    /// Seed (overrides the scenario): 0 to 2^63 − 1, as in a scenario file.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    seed: Option<u64>,
    /// Run only this variant (repeatable): the engine's profile and switches.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// The kernel peer's congestion control (default cubic).
    #[arg(long, value_name = "CC")]
    kernel: Option<String>,
    /// The longest a trial runs, real time (default 60s; the scenario's own
    /// time limit when shorter).
    #[arg(long, value_name = "DURATION")]
    time_limit: Option<String>,
    /// Write the report, summary, records, forwarder log and a pcap at each end
    /// of every trial into DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print one JSON document on stdout instead of the report.
    #[arg(long)]
    json: bool,
    /// Write into a non-empty --out directory, replacing what gentle wrote there.
    #[arg(long)]
    force: bool,
    /// Fail (exit 1) when the forwarder's one-way delay error is a noticeable
    /// share of the path's delay (a loaded host), instead of warning.
    #[arg(long)]
    strict: bool,
}

impl EngineRun {
    /// `gentle emulate`'s arguments with gentle's engine at `end`.
    pub fn args(
        self,
        end: gentle_lab::emulate::EngineEnd,
        peer: Option<String>,
    ) -> gentle_lab::emulate::command::Args {
        gentle_lab::emulate::command::Args {
            scenario: self.scenario,
            strict: self.strict,
            quick: self.quick,
            point: self.point,
            trials: self.trials,
            seed: self.seed,
            variants: self.variants,
            kernel: self.kernel,
            time_limit: self.time_limit,
            out: self.out,
            json: self.json,
            force: self.force,
            engine: Some(end),
            peer,
            server_cmd: None,
        }
    }
}

#[derive(Parser)]
#[command(
    name = "gentle",
    version,
    about = "A TCP loss-recovery laboratory: deterministic simulation of the loss-recovery mechanisms of Linux and the papers built on it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Draw a picture from a trace or a capture: `gentle plot tsg INPUT --out DIR`.
    Plot(PlotArgs),
    /// Write one self-contained HTML page (it opens offline) of traces, captures and
    /// output directories: interactive time-sequence graphs, engine state, flow
    /// tables, results, and two flows side by side.
    View(ViewArgs),
    /// Run a scenario file (every point of its [sweep], if it has one).
    Run {
        /// The scenario (TOML).
        scenario: PathBuf,
        /// Run the scenario's `quick_trials` instead of its `trials`.
        #[arg(long)]
        quick: bool,
        /// Run only the sweep points that match: `AXIS=VALUE[,AXIS=VALUE...]`.
        #[arg(long, value_name = "AXIS=VALUE,...")]
        point: Option<String>,
        #[command(flatten)]
        opts: RunArgs,
    },
    /// Run the built-in experiments (all of them without a name).
    Reproduce {
        /// Experiments to run.
        names: Vec<String>,
        /// List the experiments.
        #[arg(long)]
        list: bool,
        /// Fewer trials, for a quick look.
        #[arg(long)]
        quick: bool,
        #[command(flatten)]
        opts: RunArgs,
    },
    /// Tag the packets, flows and exchanges of a pcap or pcapng capture: retransmission
    /// causes, losses by position in a burst, reordering, bufferbloat, policing, and
    /// the response times and figures of the paper's §2. Over many captures (several,
    /// or directories of them): in parallel, each signature against slow responses,
    /// and with --parquet DIR tables of flows, exchanges, retransmissions, signatures.
    Analyze(AnalyzeArgs),
    /// Run a scenario against the host's kernel TCP (real mode, needs root): its
    /// link becomes a real-time forwarder between two network namespaces, its
    /// workload runs on kernel sockets, each variant is a kernel configuration.
    Emulate(EmulateArgs),
    /// Run gentle's engine as the server of a scenario on a TUN device (real mode,
    /// needs root): the kernel's TCP in a namespace is the client, through the
    /// scenario's link; or an external command (`--peer 'curl ...'`) against the
    /// engine's HTTP responder at $GENTLE_SERVER.
    Serve {
        #[command(flatten)]
        run: EngineRun,
        /// An external command as the client, run with `sh -c` in the client
        /// namespace (e.g. `curl -s -o /dev/null http://$GENTLE_SERVER/100000`).
        #[arg(long, value_name = "COMMAND", alias = "client-cmd")]
        peer: Option<String>,
    },
    /// Run gentle's engine as the client of a scenario on a TUN device (real mode,
    /// needs root): the kernel's TCP in a namespace is the server, through the
    /// scenario's link.
    Connect {
        #[command(flatten)]
        run: EngineRun,
    },
    /// Run every point of a scenario's [sweep] as an independent job, on this
    /// machine's cores or a Ray cluster: records stream to Parquet (a file per point
    /// in DIR/records/), then a table of every point's summary (DIR/points.parquet);
    /// an interrupted sweep goes on with --resume.
    Sweep(SweepArgs),
    /// Fit a scenario's free parameters (its [calibrate] table) so that one variant's
    /// statistics match the targets of a file (CMA-ES); writes the fitted scenario.
    Calibrate(CalibrateArgs),
    /// Run packetdrill scripts against the engine in virtual time (and with
    /// --kernel against the host's kernel too, side by side): exit 0 when all pass
    /// (or are SKIPPED for what the engine does not model), 1 on a failure, 2 on a
    /// bad script.
    Packetdrill(PacketdrillArgs),
    /// Measure the simulator's speed.
    Bench {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also run the scaling points of a million and ten million trials
        #[arg(long)]
        full: bool,
        /// Only count instructions (under callgrind, which must be installed): per
        /// data packet of the bulk transfer and per short trial.
        #[arg(long, conflicts_with = "full")]
        instructions: bool,
        /// The run that callgrind counts (`bulk` or `short:N`); used by `--instructions`.
        #[arg(long, hide = true, value_name = "WORK")]
        work: Option<bench::instructions::Work>,
    },
}

#[derive(clap::Args, Clone)]
pub struct RunArgs {
    /// Number of trials (overrides the scenario).
    #[arg(long)]
    trials: Option<u64>,
    /// Seed (overrides the scenario): 0 to 2^63 − 1, as in a scenario file.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    seed: Option<u64>,
    /// Write CSV of every record, the JSON summary and CDF plots into DIR.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print one JSON document on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Write trial K's packets as a pcap file per variant (into --out, or here).
    #[arg(long, value_name = "K")]
    pcap: Option<u64>,
    /// Write an event trace (JSON lines) of one trial of every variant to FILE.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The trial that --trace records (default 0).
    #[arg(long, value_name = "K")]
    trial: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Write into a non-empty --out directory, replacing what gentle wrote there;
    /// replace existing --trace and --pcap files.
    #[arg(long)]
    force: bool,
}

/// Where the points run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// This machine's cores.
    Local,
    /// A Ray cluster: a new local one, or the one at --address.
    Ray,
}

/// The arguments of `gentle sweep`.
#[derive(Clone, Debug, clap::Args)]
pub struct SweepArgs {
    /// The scenario file; its [sweep] grid gives the points (a file without one is a
    /// single point).
    pub scenario: PathBuf,
    /// Where the results go: DIR/points.parquet and DIR/records/point-NNNNNN.parquet.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Run only the matching points: `AXIS=VALUE[,AXIS=VALUE...]`.
    #[arg(long, value_name = "AXIS=VALUE,...")]
    pub point: Option<String>,
    /// Trials of every point.
    #[arg(long)]
    pub trials: Option<u64>,
    /// The sweep's seed: each point derives its own from it and its coordinates
    /// (0 to 2^63 − 1, as in a scenario file).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub seed: Option<u64>,
    /// Every point's smaller trial count (`quick_trials`).
    #[arg(long)]
    pub quick: bool,
    /// Go on with the sweep in DIR: run only the points it does not hold yet.
    #[arg(long, conflicts_with = "force")]
    pub resume: bool,
    /// Replace the results of an earlier sweep in DIR.
    #[arg(long)]
    pub force: bool,
    /// Where the points run.
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    pub backend: BackendArg,
    /// The Ray cluster's address (`ray start --head` prints it); without it a
    /// local Ray instance is started. Implies --backend ray.
    #[arg(long, value_name = "ADDR")]
    pub address: Option<String>,
    /// Worker threads of the local backend (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// The arguments of `gentle calibrate`.
#[derive(Clone, Debug, clap::Args)]
pub struct CalibrateArgs {
    /// The scenario file; its [calibrate] table names the free parameters.
    pub scenario: PathBuf,
    /// The targets file: [[target]] tables of `stat`, `value`, `source`, `weight`.
    #[arg(long, value_name = "FILE")]
    pub targets: PathBuf,
    /// Where the fitted scenario is written (the scenario with the fitted values).
    #[arg(long, value_name = "FILE", required_unless_present = "check")]
    pub out: Option<PathBuf>,
    /// Replace FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// Only report the scenario as written against the targets (its values from
    /// the calibration's seed and four others, their errors and noise): no search,
    /// nothing written.
    #[arg(long, conflicts_with_all = ["out", "force", "candidates", "backend", "address"])]
    pub check: bool,
    /// Candidates to evaluate, at most (default: the table's `candidates`, else 120).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    pub candidates: Option<u64>,
    /// Trials of every candidate (default: the table's `trials`, else the
    /// scenario's quick_trials).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub trials: Option<u64>,
    /// The calibration's seed (default: the scenario's).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub seed: Option<u64>,
    /// Refit only these free parameters (dotted paths as [calibrate.free] names
    /// them, comma-separated, or the flag repeated); the others keep the file's
    /// values, and the earlier fit's header stays below this one's.
    #[arg(
        long,
        value_name = "KEY,...",
        value_delimiter = ',',
        conflicts_with = "check"
    )]
    pub only: Vec<String>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run the candidates on a Ray cluster (a new local one, or the one at
    /// --address), through gentle's Python package.
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    pub backend: BackendArg,
    /// The Ray cluster's address (`ray start --head` prints it). Implies --backend ray.
    #[arg(long, value_name = "ADDR")]
    pub address: Option<String>,
}

/// The arguments of `gentle packetdrill`.
#[derive(clap::Args, Clone, Debug)]
pub struct PacketdrillArgs {
    /// Scripts to run, in order.
    #[arg(required = true, value_name = "SCRIPT.pkt")]
    pub scripts: Vec<PathBuf>,
    /// Engine profile the scripts start from (their sysctls then adjust it).
    #[arg(long, default_value = "linux-6")]
    pub profile: String,
    /// Set an engine switch after the profile, before the scripts' sysctls.
    #[arg(long = "switch", value_name = "KEY=VALUE")]
    pub switches: Vec<String>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Do not compare the PSH flag of outbound packets (packetdrill does; `linux-6`
    /// sets it as Linux does, but for the forced push of long writes).
    #[arg(long)]
    pub ignore_psh: bool,
    /// Also run every script against the host's kernel TCP, in real time, in a
    /// network namespace of its own over a TUN device (as packetdrill does; needs
    /// root), and print both verdicts side by side. The namespace starts from the
    /// kernel's defaults with the profile's congestion control; the scripts'
    /// sysctls then apply to it alone.
    #[arg(long)]
    pub kernel: bool,
}

impl RunArgs {
    /// The library's flags of `run` and `reproduce`.
    pub fn flags(self) -> gentle_lab::commands::RunFlags {
        gentle_lab::commands::RunFlags {
            trials: self.trials,
            seed: self.seed,
            out: self.out,
            json: self.json,
            pcap: self.pcap,
            trace: self.trace,
            trial: self.trial,
            threads: self.threads,
            force: self.force,
        }
    }
}

impl From<BackendArg> for gentle_lab::sweeping::command::Backend {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Local => Self::Local,
            BackendArg::Ray => Self::Ray,
        }
    }
}

impl From<SweepArgs> for gentle_lab::sweeping::command::SweepArgs {
    fn from(a: SweepArgs) -> Self {
        Self {
            scenario: a.scenario,
            out: a.out,
            point: a.point,
            trials: a.trials,
            seed: a.seed,
            quick: a.quick,
            resume: a.resume,
            force: a.force,
            backend: a.backend.into(),
            address: a.address,
            threads: a.threads,
        }
    }
}

impl From<CalibrateArgs> for gentle_lab::calibrate::command::CalibrateArgs {
    fn from(a: CalibrateArgs) -> Self {
        Self {
            scenario: a.scenario,
            targets: a.targets,
            out: a.out,
            force: a.force,
            candidates: a.candidates,
            trials: a.trials,
            seed: a.seed,
            threads: a.threads,
            json: a.json,
            backend: a.backend.into(),
            address: a.address,
            only: a.only,
        }
    }
}

impl From<PacketdrillArgs> for gentle_lab::packetdrill::Args {
    fn from(a: PacketdrillArgs) -> Self {
        Self {
            scripts: a.scripts,
            profile: a.profile,
            switches: a.switches,
            json: a.json,
            ignore_psh: a.ignore_psh,
            kernel: a.kernel,
        }
    }
}

/// The flags of `gentle plot`.
#[derive(clap::Args)]
pub struct PlotArgs {
    /// What to draw: `tsg` (time-sequence graph).
    pub kind: String,
    /// A JSON-lines trace written by `--trace`, or a pcap/pcapng capture (its
    /// server's data is drawn).
    pub trace: PathBuf,
    /// Directory for tsg.png and tsg.svg (created if needed; other files there
    /// are left alone).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Replace an existing tsg.png / tsg.svg.
    #[arg(long)]
    pub force: bool,
    /// Draw this time window, ms since the first data segment.
    #[arg(long, value_name = "A..B")]
    pub time: Option<String>,
    /// Draw this sequence range, bytes from the ISN.
    #[arg(long, value_name = "A..B")]
    pub seq: Option<String>,
    /// Draw the whole flow instead of the window around its retransmissions.
    #[arg(long)]
    pub whole: bool,
    /// The capture's flow to draw, numbered as `gentle analyze` numbers them
    /// (default: the one whose server retransmitted most).
    #[arg(long, value_name = "N")]
    pub flow: Option<u32>,
}

/// The flags of `gentle view`.
#[derive(clap::Args)]
pub struct ViewArgs {
    /// `gentle run --trace` files, pcap/pcapng captures, and `--out` directories
    /// of run, reproduce, sweep and emulate, in any mix.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The page to write.
    #[arg(long, default_value = "gentle-view.html")]
    pub out: PathBuf,
    /// Replace an existing page.
    #[arg(long)]
    pub force: bool,
    /// Open the page in the desktop's browser (xdg-open) once written.
    #[arg(long)]
    pub open: bool,
}

/// The flags of `gentle analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// The capture (pcap or pcapng; Ethernet, raw IP, Linux cooked v1/v2, VLAN).
    /// Several captures, or a directory (every *.pcap, *.pcapng, *.cap, *.dmp and
    /// *.trace under it), are analysed in parallel into one report: each signature
    /// against slow responses.
    #[arg(required = true, value_name = "CAPTURE")]
    pub captures: Vec<PathBuf>,
    /// The server's address (default: the end that answered the SYN, or else
    /// the lower port).
    #[arg(long, value_name = "IP")]
    pub server: Option<std::net::IpAddr>,
    /// The server's port.
    #[arg(long, value_name = "PORT")]
    pub server_port: Option<u16>,
    /// The capture was taken at the client, not the server.
    #[arg(long)]
    pub client_side: bool,
    /// Print one JSON document on stdout instead of the report (of one capture,
    /// or of many: their totals and signatures against slow responses).
    #[arg(long)]
    pub json: bool,
    /// Write every packet with its tags to FILE (CSV).
    #[arg(long, value_name = "FILE")]
    pub tags: Option<PathBuf>,
    /// Write the capture's statistics (retransmission rate and mix, fast
    /// retransmits per recovery, response times) as a targets file for `gentle
    /// calibrate --targets` (one capture).
    #[arg(long, value_name = "FILE")]
    pub targets: Option<PathBuf>,
    /// Write the report, JSON, records CSV and figures into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Replace existing results (--out, --parquet) or tags file.
    #[arg(long)]
    pub force: bool,
    /// Flows listed in the report.
    #[arg(long, default_value_t = 20)]
    pub flows: usize,
    /// Write the tables of every capture into DIR as Parquet: flows.parquet,
    /// exchanges.parquet, retransmissions.parquet, signatures.parquet.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Worker threads over many captures (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// An exchange is slow when its response time is above MS (default: the median
    /// of every exchange with a response time).
    #[arg(long, value_name = "MS")]
    pub slow: Option<f64>,
    /// Where many captures are analysed: this machine's cores, or a Ray cluster (a new
    /// local one, or the one at --address) through gentle's Python package.
    #[arg(long, value_enum, default_value_t = BackendArg::Local)]
    pub backend: BackendArg,
    /// The Ray cluster's address (`ray start --head` prints it). Implies --backend ray.
    #[arg(long, value_name = "ADDR")]
    pub address: Option<String>,
}

/// The flags of `gentle emulate`.
#[derive(clap::Args)]
pub struct EmulateArgs {
    /// The scenario (TOML), or the name of a built-in experiment.
    pub scenario: PathBuf,
    /// Run the scenario's `quick_trials` instead of its `trials`.
    #[arg(long)]
    pub quick: bool,
    /// The sweep point to run, for a scenario with a [sweep]: `AXIS=VALUE,...`.
    #[arg(long, value_name = "AXIS=VALUE,...")]
    pub point: Option<String>,
    /// Number of trials (overrides the scenario).
    #[arg(long)]
    pub trials: Option<u64>,
    /// Seed (overrides the scenario): 0 to 2^63 − 1, as in a scenario file.
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    pub seed: Option<u64>,
    /// Run only this variant (repeatable).
    #[arg(long = "variant", value_name = "NAME")]
    pub variants: Vec<String>,
    /// Replace the variants by the host kernel's defaults with these congestion
    /// controls, e.g. `cubic,reno,bbr`.
    #[arg(long, value_name = "CC,...")]
    pub kernel: Option<String>,
    /// The longest a trial runs, real time (default 60s; the scenario's own
    /// time limit when shorter).
    #[arg(long, value_name = "DURATION")]
    pub time_limit: Option<String>,
    /// Write the report, summary, records, forwarder log, TCP_INFO samples and a
    /// pcap at each end of every trial into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print one JSON document on stdout instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Write into a non-empty --out directory, replacing what gentle wrote there.
    #[arg(long)]
    pub force: bool,
    /// Fail (exit 1) when the forwarder's one-way delay error is a noticeable
    /// share of the path's delay (a loaded host), instead of warning.
    #[arg(long)]
    pub strict: bool,
    /// An external client, run with `sh -c` in the client namespace (with
    /// --server-cmd; e.g. `curl -s http://$GENTLE_SERVER/`).
    #[arg(long, value_name = "COMMAND")]
    pub client_cmd: Option<String>,
    /// An external server, run with `sh -c` in the server namespace and
    /// listening on 10.77.0.1:80 (e.g. `python3 -m http.server 80 --bind 10.77.0.1`).
    #[arg(long, value_name = "COMMAND")]
    pub server_cmd: Option<String>,
}

impl From<PlotArgs> for gentle_lab::tsg::command::Args {
    fn from(a: PlotArgs) -> Self {
        Self {
            kind: a.kind,
            input: a.trace,
            out: a.out,
            force: a.force,
            time: a.time,
            seq: a.seq,
            whole: a.whole,
            flow: a.flow,
        }
    }
}

impl From<ViewArgs> for gentle_lab::view::Args {
    fn from(a: ViewArgs) -> Self {
        Self {
            paths: a.paths,
            out: a.out,
            force: a.force,
            open: a.open,
        }
    }
}

impl From<AnalyzeArgs> for gentle_lab::analyze::Args {
    fn from(a: AnalyzeArgs) -> Self {
        let point = if a.client_side {
            gentle_analyze::CapturePoint::Client
        } else {
            gentle_analyze::CapturePoint::Server
        };
        Self {
            captures: a.captures,
            opts: gentle_analyze::Options {
                server: a.server,
                server_port: a.server_port,
                point,
                keep_retransmissions: false,
                no_fack: false,
            },
            json: a.json,
            tags: a.tags,
            targets: a.targets,
            out: a.out,
            force: a.force,
            flows: a.flows,
            parquet: a.parquet,
            threads: a.threads,
            slow_ms: a.slow,
            ray: (a.backend == BackendArg::Ray || a.address.is_some()).then_some(a.address),
        }
    }
}

impl From<EmulateArgs> for gentle_lab::emulate::command::Args {
    fn from(a: EmulateArgs) -> Self {
        Self {
            scenario: a.scenario,
            strict: a.strict,
            quick: a.quick,
            point: a.point,
            trials: a.trials,
            seed: a.seed,
            variants: a.variants,
            kernel: a.kernel,
            time_limit: a.time_limit,
            out: a.out,
            json: a.json,
            force: a.force,
            engine: None,
            peer: a.client_cmd,
            server_cmd: a.server_cmd,
        }
    }
}
