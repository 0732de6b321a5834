//! The work of `gentle run` and `gentle reproduce` behind their flags: the scenarios
//! and experiments resolved, the flags checked before any work, the runs, the reports
//! printed and the files written. The other commands' work is in their own modules
//! (`analyze::command`, `emulate::command`, `sweeping::command`, …); the `gentle`
//! binary only parses arguments and calls these.

mod reproduce;
mod run;

pub use reproduce::reproduce;
pub use run::{RunFlags, run};
