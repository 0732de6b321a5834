//! `gentle`: run TCP loss-recovery experiments in a deterministic simulator. This
//! binary parses the command line (`args`) and hands each subcommand to the
//! gentle-lab library, which does the work and prints what it found.

mod args;

use std::process::ExitCode;

use args::{Cli, Cmd};
use clap::Parser;
use gentle_lab::{analyze, bench, calibrate, commands, emulate, interrupt, packetdrill};
use gentle_lab::{sweeping, tsg_command, view};

/// Trials build and drop many small objects; mimalloc serves them faster than the
/// system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ExitCode::from(dispatch(Cli::parse().cmd))
}

/// The subcommand's exit status.
fn dispatch(cmd: Cmd) -> u8 {
    match cmd {
        Cmd::Run {
            scenario,
            quick,
            point,
            opts,
        } => commands::run(&scenario, quick, point.as_deref(), opts.flags()),
        Cmd::Reproduce {
            names,
            list,
            quick,
            opts,
        } => commands::reproduce(&names, list, quick, opts.flags()),
        Cmd::Plot {
            kind,
            trace,
            out,
            force,
            time,
            seq,
            whole,
            flow,
        } => tsg_command::command(&tsg_command::Args {
            kind,
            input: trace,
            out,
            force,
            time,
            seq,
            whole,
            flow,
        }),
        Cmd::View {
            paths,
            out,
            force,
            open,
        } => view::command(&view::Args {
            paths,
            out,
            force,
            open,
        }),
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
            let point = if client_side {
                gentle_analyze::CapturePoint::Client
            } else {
                gentle_analyze::CapturePoint::Server
            };
            let opts = gentle_analyze::Options {
                server,
                server_port,
                point,
                keep_retransmissions: false,
                no_fack: false,
            };
            analyze::command(analyze::Args {
                capture,
                opts,
                json,
                tags,
                out,
                force,
                flows,
            })
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
        } => emulate::command::command(emulate::command::Args {
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
        }),
        Cmd::Serve { run, peer } => {
            emulate::command::command(run.args(emulate::EngineEnd::Server, peer))
        }
        Cmd::Connect { run } => {
            emulate::command::command(run.args(emulate::EngineEnd::Client, None))
        }
        Cmd::Sweep(a) => sweeping::command::command(a.into()),
        Cmd::Calibrate(a) => calibrate::command::command(a.into()),
        Cmd::Packetdrill(a) => packetdrill::command(&a.into()),
        Cmd::Bench {
            json,
            full,
            instructions,
            work,
        } => bench::command(bench::BenchArgs {
            json,
            full,
            instructions,
            work,
        }),
    }
}
