//! `gentle`: run TCP loss-recovery experiments in a deterministic simulator. This
//! binary parses the command line (`args`) and hands each subcommand to the
//! gentle-lab library, which does the work and prints what it found.

mod args;

use std::process::ExitCode;

use args::{Cli, Cmd};
use clap::Parser;
use gentle_lab::{analyze, bench, calibrate, commands, emulate, interrupt, packetdrill};
use gentle_lab::{sweeping, tsg, view};

/// Trials build and drop many small objects; mimalloc serves them faster than the
/// system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Output piped into `head` and the like: end quietly when the reader goes away,
    // as command-line tools do, instead of panicking on the write.
    sigpipe::reset();
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
        Cmd::Plot(a) => tsg::command::command(&a.into()),
        Cmd::View(a) => view::command(&a.into()),
        Cmd::Analyze(a) => {
            interrupt::install();
            analyze::command(a.into())
        }
        Cmd::Emulate(a) => emulate::command::command(a.into()),
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
