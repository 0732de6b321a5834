//! `gentle`: run TCP loss-recovery experiments in a deterministic simulator.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gentle::catalogue::{self, CATALOGUE};
use gentle::programs::{self, PROGRAMS};
use gentle::runner::{self, RunOptions};
use gentle::scenario::{Scenario, Sweep};
use gentle::{bench, checks, interrupt, output, report, sinks};

/// Trials build and drop many small objects; mimalloc serves them faster than the
/// system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The flags `gentle serve` and `gentle connect` share with `gentle emulate`.
#[derive(clap::Args)]
struct EngineRun {
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
    fn args(
        self,
        end: gentle::emulate::EngineEnd,
        peer: Option<String>,
    ) -> gentle::emulate::command::Args {
        gentle::emulate::command::Args {
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
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Draw a picture from a trace or a capture: `gentle plot tsg INPUT --out DIR`.
    Plot {
        /// What to draw: `tsg` (time-sequence graph).
        kind: String,
        /// A JSON-lines trace written by `--trace`, or a pcap/pcapng capture (its
        /// server's data is drawn).
        trace: PathBuf,
        /// Directory for tsg.png and tsg.svg (created if needed; other files there
        /// are left alone).
        #[arg(long, default_value = ".")]
        out: PathBuf,
        /// Replace an existing tsg.png / tsg.svg.
        #[arg(long)]
        force: bool,
        /// Draw this time window, ms since the first data segment.
        #[arg(long, value_name = "A..B")]
        time: Option<String>,
        /// Draw this sequence range, bytes from the ISN.
        #[arg(long, value_name = "A..B")]
        seq: Option<String>,
        /// Draw the whole flow instead of the window around its retransmissions.
        #[arg(long)]
        whole: bool,
        /// The capture's flow to draw, numbered as `gentle analyze` numbers them
        /// (default: the one whose server retransmitted most).
        #[arg(long, value_name = "N")]
        flow: Option<u32>,
    },
    /// Write one self-contained HTML page (it opens offline) of traces, captures and
    /// output directories: interactive time-sequence graphs, engine state, flow
    /// tables, results, and two flows side by side.
    View {
        /// `gentle run --trace` files, pcap/pcapng captures, and `--out` directories
        /// of run, reproduce, sweep and emulate, in any mix.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The page to write.
        #[arg(long, default_value = "gentle-view.html")]
        out: PathBuf,
        /// Replace an existing page.
        #[arg(long)]
        force: bool,
        /// Open the page in the desktop's browser (xdg-open) once written.
        #[arg(long)]
        open: bool,
    },
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
    /// the response times and figures of the paper's §2.
    Analyze {
        /// The capture (pcap or pcapng; Ethernet, raw IP, Linux cooked v1/v2, VLAN).
        capture: PathBuf,
        /// The server's address (default: the end that answered the SYN, or else
        /// the lower port).
        #[arg(long, value_name = "IP")]
        server: Option<std::net::IpAddr>,
        /// The server's port.
        #[arg(long, value_name = "PORT")]
        server_port: Option<u16>,
        /// The capture was taken at the client, not the server.
        #[arg(long)]
        client_side: bool,
        /// Print one JSON document on stdout instead of the report.
        #[arg(long)]
        json: bool,
        /// Write every packet with its tags to FILE (CSV).
        #[arg(long, value_name = "FILE")]
        tags: Option<PathBuf>,
        /// Write the report, JSON, records CSV and figures into DIR.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Replace existing results (--out) or tags file.
        #[arg(long)]
        force: bool,
        /// Flows listed in the report.
        #[arg(long, default_value_t = 20)]
        flows: usize,
    },
    /// Run a scenario against the host's kernel TCP (real mode, needs root): its
    /// link becomes a real-time forwarder between two network namespaces, its
    /// workload runs on kernel sockets, each variant is a kernel configuration.
    Emulate {
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
        /// Run only this variant (repeatable).
        #[arg(long = "variant", value_name = "NAME")]
        variants: Vec<String>,
        /// Replace the variants by the host kernel's defaults with these congestion
        /// controls, e.g. `cubic,reno,bbr`.
        #[arg(long, value_name = "CC,...")]
        kernel: Option<String>,
        /// The longest a trial runs, real time (default 60s; the scenario's own
        /// time limit when shorter).
        #[arg(long, value_name = "DURATION")]
        time_limit: Option<String>,
        /// Write the report, summary, records, forwarder log, TCP_INFO samples and a
        /// pcap at each end of every trial into DIR.
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
        /// An external client, run with `sh -c` in the client namespace (with
        /// --server-cmd; e.g. `curl -s http://$GENTLE_SERVER/`).
        #[arg(long, value_name = "COMMAND")]
        client_cmd: Option<String>,
        /// An external server, run with `sh -c` in the server namespace and
        /// listening on 10.77.0.1:80 (e.g. `python3 -m http.server 80 --bind 10.77.0.1`).
        #[arg(long, value_name = "COMMAND")]
        server_cmd: Option<String>,
    },
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
    Sweep(gentle::sweeping::command::SweepArgs),
    /// Fit a scenario's free parameters (its [calibrate] table) so that one variant's
    /// statistics match the targets of a file (CMA-ES); writes the fitted scenario.
    Calibrate(gentle::calibrate::command::CalibrateArgs),
    /// Run packetdrill scripts against the engine in virtual time: exit 0 when all
    /// pass (or are SKIPPED for what the engine does not model), 1 on a failure, 2
    /// on a bad script.
    Packetdrill(gentle::packetdrill::Args),
    /// Measure the simulator's speed.
    Bench {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also run the million-trial scaling point.
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
struct RunArgs {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            scenario,
            quick,
            point,
            mut opts,
        } => {
            let text = match std::fs::read_to_string(&scenario) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", scenario.display());
                    return ExitCode::from(2);
                }
            };
            let mut sweep = match Sweep::parse(&scenario.display().to_string(), &text) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            if let Some(spec) = &point
                && let Err(e) = sweep.select(spec)
            {
                eprintln!("error: --point: {e}");
                return ExitCode::from(2);
            }
            if !sweep.axes.is_empty()
                && let Some(seed) = opts.seed.take()
            {
                // --seed is the sweep's: each point derives its own from it.
                sweep.reseed(seed);
            }
            let scns: Vec<Scenario> = sweep.points.into_iter().map(|p| p.scenario).collect();
            if let Err(e) = check_flags(&scns, &opts, quick) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            let mut staged = match open_staged(&opts) {
                Ok(s) => s,
                Err(code) => return code,
            };
            interrupt::install();
            let mut docs = Vec::new();
            let mut says = Announce::new(scns.len());
            let code = run_scenarios(&scns, &opts, quick, staged.as_mut(), &mut docs, &mut says);
            if code != ExitCode::SUCCESS {
                return code;
            }
            if let Some(doc) = docs.pop() {
                print_json(&doc);
            }
            finish(staged)
        }
        Cmd::Reproduce {
            names,
            list,
            quick,
            opts,
        } => {
            if list {
                let mut out = std::io::stdout().lock();
                let all = CATALOGUE
                    .iter()
                    .map(|e| (e.name, e.summary))
                    .chain(PROGRAMS.iter().map(|p| (p.name, p.summary)));
                // With names, only those (and an unknown one is bad input).
                if let Some(n) = names
                    .iter()
                    .find(|n| catalogue::find(n).is_none() && programs::find(n).is_none())
                {
                    eprintln!("error: no experiment named `{n}` (see `gentle reproduce --list`)");
                    return ExitCode::from(2);
                }
                for (name, summary) in
                    all.filter(|(n, _)| names.is_empty() || names.iter().any(|x| x == n))
                {
                    // The summaries in one column from 21 to 100 characters, wrapped
                    // alike on every line: a long name takes its own line.
                    let col = " ".repeat(21);
                    let text = gentle::units::wrap(&format!("{col}{summary}"), 100, 21);
                    let text = &text[21..];
                    let _ = if name.chars().count() < 21 {
                        writeln!(out, "{name:<20} {text}")
                    } else {
                        writeln!(out, "{name}\n{col}{text}")
                    };
                }
                return ExitCode::SUCCESS;
            }
            let mut scns = Vec::new();
            let mut progs = Vec::new();
            if names.is_empty() {
                scns.extend(CATALOGUE.iter());
                // Real-mode experiments take minutes of real time and root: named alone.
                progs.extend(
                    PROGRAMS
                        .iter()
                        .filter(|p| !programs::NEEDS_KERNEL.contains(&p.name)),
                );
                eprintln!(
                    "note: {} run only when named (real mode, minutes of real time): gentle reproduce {}",
                    programs::NEEDS_KERNEL.join(", "),
                    programs::NEEDS_KERNEL.join(" ")
                );
            } else {
                let mut seen = Vec::new();
                for n in &names {
                    if seen.contains(n) {
                        continue; // named twice: run once
                    }
                    seen.push(n.clone());
                    if let Some(e) = catalogue::find(n) {
                        scns.push(e);
                    } else if let Some(p) = programs::find(n) {
                        progs.push(p);
                    } else {
                        eprintln!(
                            "error: no experiment named `{n}` (see `gentle reproduce --list`)"
                        );
                        return ExitCode::from(2);
                    }
                }
            }
            let scns: Vec<Scenario> = scns.into_iter().map(|e| e.scenario()).collect();
            let progs: Vec<&str> = progs.iter().map(|p| p.name).collect();
            if let Err(e) = checks::program_args(&progs, &to_checked(&opts))
                .and_then(|()| check_flags(&scns, &opts, quick))
            {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            let mut staged = match open_staged(&opts) {
                Ok(s) => s,
                Err(code) => return code,
            };
            interrupt::install();
            let mut docs = Vec::new();
            let mut says = Announce::new(scns.len() + progs.len());
            if !scns.is_empty() {
                let code =
                    run_scenarios(&scns, &opts, quick, staged.as_mut(), &mut docs, &mut says);
                if code != ExitCode::SUCCESS {
                    return code;
                }
            }
            for name in progs {
                let p = programs::find(name).expect("checked above");
                says.line(p.name, if quick { "quick sizes" } else { "full sizes" });
                let args = programs::ProgramArgs {
                    quick,
                    out: staged.as_mut(),
                };
                let (text, json) = match (p.run)(args) {
                    Ok(x) => x,
                    Err(e) => {
                        eprintln!("error: {}: {e}", p.name);
                        return ExitCode::from(1);
                    }
                };
                if interrupt::requested() {
                    eprintln!("interrupted: {} abandoned; nothing was written", p.name);
                    return ExitCode::from(interrupt::EXIT_INTERRUPTED);
                }
                if let Some(st) = staged.as_mut() {
                    let stem = output::file_name(p.name);
                    let j = serde_json::to_string_pretty(&json).expect("serialisable");
                    if let Err(e) = st
                        .write(&format!("{stem}.txt"), text.as_bytes())
                        .and_then(|()| st.write(&format!("{stem}.json"), j.as_bytes()))
                    {
                        eprintln!("error: writing results: {e}");
                        return ExitCode::from(1);
                    }
                }
                if opts.json {
                    docs.push(json);
                } else {
                    let _ = writeln!(std::io::stdout().lock(), "{text}");
                }
            }
            if opts.json {
                // One document: the experiments in the order they ran.
                let doc = if docs.len() == 1 {
                    docs.pop().expect("one")
                } else {
                    serde_json::json!({ "experiments": docs })
                };
                print_json(&doc);
            }
            finish(staged)
        }
        Cmd::Plot {
            kind,
            trace,
            out,
            force,
            time,
            seq,
            whole,
            flow,
        } => ExitCode::from(gentle::tsg_command::command(&gentle::tsg_command::Args {
            kind,
            input: trace,
            out,
            force,
            time,
            seq,
            whole,
            flow,
        })),
        Cmd::View {
            paths,
            out,
            force,
            open,
        } => ExitCode::from(gentle::view::command(&gentle::view::Args {
            paths,
            out,
            force,
            open,
        })),
        Cmd::Analyze {
            capture,
            server,
            server_port,
            client_side,
            json,
            tags,
            out,
            force,
            flows,
        } => {
            interrupt::install();
            let opts = gentle_analyze::Options {
                server,
                server_port,
                point: if client_side {
                    gentle_analyze::CapturePoint::Client
                } else {
                    gentle_analyze::CapturePoint::Server
                },
                keep_retransmissions: false,
                no_fack: false,
            };
            ExitCode::from(gentle::analyze::command(gentle::analyze::Args {
                capture,
                opts,
                json,
                tags,
                out,
                force,
                flows,
            }))
        }
        Cmd::Emulate {
            scenario,
            quick,
            point,
            trials,
            seed,
            variants,
            kernel,
            time_limit,
            out,
            json,
            force,
            strict,
            client_cmd,
            server_cmd,
        } => ExitCode::from(gentle::emulate::command::command(
            gentle::emulate::command::Args {
                scenario,
                strict,
                quick,
                point,
                trials,
                seed,
                variants,
                kernel,
                time_limit,
                out,
                json,
                force,
                engine: None,
                peer: client_cmd,
                server_cmd,
            },
        )),
        Cmd::Serve { run, peer } => ExitCode::from(gentle::emulate::command::command(
            run.args(gentle::emulate::EngineEnd::Server, peer),
        )),
        Cmd::Connect { run } => ExitCode::from(gentle::emulate::command::command(
            run.args(gentle::emulate::EngineEnd::Client, None),
        )),
        Cmd::Sweep(args) => ExitCode::from(gentle::sweeping::command::command(args)),
        Cmd::Calibrate(args) => ExitCode::from(gentle::calibrate::command::command(args)),
        Cmd::Packetdrill(args) => ExitCode::from(gentle::packetdrill::command(&args)),
        Cmd::Bench {
            work: Some(work), ..
        } => {
            bench::run_work(work);
            ExitCode::SUCCESS
        }
        Cmd::Bench {
            json,
            instructions: true,
            ..
        } => {
            let r = bench::instructions::measure();
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&r).expect("serialisable")
                );
            } else {
                print!("{}", bench::instructions_text(&r));
            }
            if r.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Cmd::Bench { json, full, .. } => {
            let r = bench::run(full);
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&r).expect("serialisable")
                );
            } else {
                print!("{}", bench::text(&r));
            }
            ExitCode::SUCCESS
        }
    }
}

/// The flags checked against the scenarios, then the files they will write.
fn check_flags(scns: &[Scenario], a: &RunArgs, quick: bool) -> Result<(), String> {
    checks::run_args(scns, &to_checked(a), quick)?;
    checks::output_files(scns, a.trace.as_deref(), a.pcap, a.out.is_some(), a.force)
}

fn to_checked(a: &RunArgs) -> checks::RunFlags {
    checks::RunFlags {
        trials: a.trials,
        seed: a.seed,
        pcap: a.pcap,
        trace: a.trace.is_some(),
        trial: a.trial,
        threads: a.threads,
        out: a.out.is_some(),
    }
}

fn print_json(doc: &serde_json::Value) {
    let _ = writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(doc).expect("serialisable")
    );
}

/// Commits `--out` and lists what was written.
fn finish(staged: Option<output::Staged>) -> ExitCode {
    if let Some(st) = staged {
        match st.commit() {
            Ok(files) => {
                for f in files {
                    eprintln!("wrote {}", f.display());
                }
            }
            Err(e) => {
                eprintln!("error: writing results: {e}");
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

/// Runs the scenarios; their JSON documents go to `docs` (with `--json`), their
/// files to `staged`. Trace and pcap files without `--out` are written here.
fn run_scenarios(
    scns: &[Scenario],
    a: &RunArgs,
    quick: bool,
    mut staged: Option<&mut output::Staged>,
    docs: &mut Vec<serde_json::Value>,
    says: &mut Announce,
) -> ExitCode {
    // Never more threads than the largest run has blocks of trials.
    let most = scns
        .iter()
        .map(|s| {
            let trials = a
                .trials
                .unwrap_or(if quick { s.quick_trials } else { s.trials });
            runner::useful_threads(trials)
        })
        .max()
        .unwrap_or(1);
    if let Some(t) = a.threads.map(|t| t.min(most))
        && let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
    {
        eprintln!("error: cannot start {t} threads: {e}");
        return ExitCode::from(2);
    }
    let mut trace_lines: Vec<String> = Vec::new();
    let mut failed = false;
    for scn in scns {
        let trials = a
            .trials
            .unwrap_or(if quick { scn.quick_trials } else { scn.trials });
        let seed = a.seed.unwrap_or(scn.seed);
        says.line(
            &scn.name,
            &format!(
                "{trials} trial{} × {} variant{}",
                if trials == 1 { "" } else { "s" },
                scn.variants.len(),
                if scn.variants.len() == 1 { "" } else { "s" }
            ),
        );
        let trace_trial = a.trace.is_some().then(|| a.trial.unwrap_or(0));
        let opts = RunOptions {
            trials,
            seed,
            keep_records: staged.is_some(),
            progress: true,
            // Observed as they run: --trace's trial, --pcap's, and trial 0 for a
            // time-sequence graph.
            observe: runner::Observe {
                trace: trace_trial,
                capture: a.pcap,
                tsg: scn.tsg.then_some(0),
            },
        };
        // Several experiments into one --out: every file carries its experiment's name.
        let stem = if says.total > 1 {
            format!("{}-", output::file_name(&scn.name))
        } else {
            String::new()
        };
        if let Some(note) = checks::csv_size_note(scn, trials)
            && staged.is_some()
        {
            eprintln!("{note}");
        }
        // With --out, every record goes to the CSV as its wave of trials finishes.
        let mut csv = match sinks::CsvSink::open(staged.as_deref_mut(), &stem) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        };
        let run = runner::run_streaming(scn, &opts, &mut |vi, recs| csv.write(scn, vi, recs));
        let csv_done = csv.close();
        if interrupt::requested() {
            return interrupted(scn, &run, trials, staged.as_deref());
        }
        if let Err(e) = csv_done {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        if run.variants.iter().any(|v| v.corrupt_bytes > 0) {
            failed = true;
        }
        eprint!("{}", report::unfinished_note(&run));
        let flows = sinks::flows(scn, &run);
        sinks::report(scn, &run, (trials, seed), a.json, flows.as_deref(), docs);
        let mut res = Ok(());
        if let Some(st) = staged.as_deref_mut() {
            res = sinks::results(st, &stem, scn, &run, (trials, seed), flows.as_deref())
                .map_err(|e| format!("writing results: {e}"));
        }
        if let (Ok(()), Some(k)) = (&res, a.pcap) {
            res = sinks::pcaps(scn, &run, k, staged.as_deref_mut());
        }
        if let Err(e) = res {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
        if let Some(k) = trace_trial {
            sinks::trace_lines(scn, &run, k, &mut trace_lines);
        }
    }
    if let Some(path) = &a.trace {
        let mut body = trace_lines.join("\n");
        body.push('\n');
        if let Err(e) = std::fs::write(path, body) {
            eprintln!("error: writing {}: {e}", path.display());
            return ExitCode::from(1);
        }
        eprintln!("wrote {}", path.display());
    }
    if failed {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// A line on stderr as each experiment starts, when stderr is not a terminal (a log
/// or a pipe, where no progress bar is drawn): `[3/25] NAME (DETAIL)`.
struct Announce {
    next: usize,
    total: usize,
    on: bool,
}

impl Announce {
    fn new(total: usize) -> Announce {
        use std::io::IsTerminal;
        Announce {
            next: 0,
            total,
            on: !std::io::stderr().is_terminal(),
        }
    }

    fn line(&mut self, name: &str, detail: &str) {
        self.next += 1;
        if self.on {
            eprintln!("[{}/{}] {name} ({detail})", self.next, self.total);
        }
    }
}

/// Ctrl-C during `scn`: says what was abandoned; nothing is written.
fn interrupted(
    scn: &Scenario,
    run: &runner::RunResult,
    trials: u64,
    staged: Option<&output::Staged>,
) -> ExitCode {
    let done: u64 = run.variants.iter().map(|v| v.trials_run).sum();
    let total = trials * scn.variants.len() as u64;
    let staged_mb = staged.map_or(0, |s| s.staged_bytes()) / 1_000_000;
    let what = if done < total {
        format!(
            "{} abandoned after {done} of {total} trials × variants",
            scn.name
        )
    } else {
        format!("stopped after {} finished", scn.name)
    };
    eprintln!(
        "interrupted: {what}; nothing was written{}",
        if staged_mb > 0 {
            format!(" ({staged_mb} MB of staged results removed)")
        } else {
            String::new()
        }
    );
    ExitCode::from(interrupt::EXIT_INTERRUPTED)
}

/// The staging area of `--out DIR`, if one was asked for; a directory that cannot
/// be used is bad input.
fn open_staged(a: &RunArgs) -> Result<Option<output::Staged>, ExitCode> {
    let Some(dir) = a.out.as_deref() else {
        return Ok(None);
    };
    output::Staged::new(dir, a.force).map(Some).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}
