//! The `gentle` command's library: scenario files, the parallel runner, reports,
//! plots (CDFs and time-sequence graphs), the built-in experiment catalogue, the
//! benchmark, the analysis of captures, and real mode (`emulate`).

pub mod analyze;
pub mod bench;
pub mod catalogue;
pub mod checks;
pub mod emulate;
pub mod episodes;
pub mod interrupt;
pub mod output;
pub mod plot;
pub mod programs;
pub mod report;
pub mod runner;
pub mod sample;
pub mod scenario;
pub mod sinks;
pub mod tsg;
pub mod units;
