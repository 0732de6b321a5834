//! The integration tests of this crate, gathered into one test binary (one link,
//! not one per file): each module is a former test file, named as before.

mod analyze;
mod architecture;
mod bench;
mod calibrate;
mod cli;
mod common;
mod corrective_pages;
mod corrective_table5;
mod delay_variation;
mod emulate;
mod er_reordering;
mod fast_start;
mod golden;
mod kernel_vs_sim;
mod link_traces;
mod linux_eras;
mod packetdrill;
mod pictures;
mod proactive;
mod prr_figures;
mod prr_latency;
mod queues;
mod reactive_table1;
mod reactive_web;
mod readme_numbers;
mod robustness;
mod sample;
mod serve;
mod sessions;
mod sweep;
mod sweep_jobs;
mod switches;
mod tlp_study;
mod tshark;
mod view;
