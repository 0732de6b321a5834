//! The `gentle` command's library: scenario files, the parallel runner, reports,
//! plots (CDFs and time-sequence graphs), the built-in experiment catalogue, the
//! benchmark, the analysis of captures, real mode (`emulate`), sweeps as jobs on
//! local cores or a Ray cluster (`sweeping`) and the calls of the Python package
//! (`api`), and the
//! interactive page of `gentle view`.

pub mod analyze;
pub mod api;
pub mod bench;
pub mod calibrate;
pub mod catalogue;
pub mod checks;
pub mod ci;
pub mod emulate;
pub mod episodes;
pub mod interrupt;
pub mod output;
pub mod packetdrill;
pub mod paper;
pub mod plot;
pub mod programs;
pub mod report;
pub mod runner;
pub mod sample;
pub mod scenario;
pub mod sinks;
pub mod sweeping;
pub mod tsg;
pub mod tsg_command;
pub mod units;
pub mod view;
