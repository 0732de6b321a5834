//! gentle's lab: everything under the thin `gentle` command (argument parsing and
//! printing) and the Python package. Scenario files, the parallel runner, reports,
//! plots (CDFs and time-sequence graphs), the built-in experiment catalogue, the
//! benchmark, the analysis of captures, real mode (`emulate`), sweeps as jobs on local
//! cores or a Ray cluster (`sweeping`), calibration, packetdrill scripts, the calls of
//! the Python package (`api`), the interactive page of `gentle view`, and each
//! command's work behind its flags (`commands`, and a `command` function per module).

pub mod analyze;
pub mod api;
pub mod bench;
pub mod calibrate;
pub mod catalogue;
pub mod checks;
pub mod ci;
pub mod commands;
pub mod emulate;
pub mod episodes;
pub mod error;
pub mod interrupt;
pub mod packetdrill;
pub mod paper;
pub mod plot;
pub mod programs;
pub mod report;
pub mod runner;
pub mod sample;
pub mod scenario;
pub mod sinks;
pub mod staging;
pub mod sweeping;
pub mod table;
mod trace_file;
pub mod tsg;
pub mod units;
pub mod view;

pub use error::LabError;
