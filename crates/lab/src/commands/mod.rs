//! The work of `gentle run` and `gentle reproduce` behind their flags: the scenarios
//! and experiments resolved, the flags checked before any work, the runs, the reports
//! printed and the files written. The other commands' work is in their own modules
//! (`analyze::command`, `emulate::command`, `sweeping::command`, …); the `gentle`
//! binary only parses arguments and calls these.

mod reproduce;
mod run;

pub use reproduce::reproduce;
pub use run::{RunFlags, run};

use crate::{LabError, interrupt};

/// A command's exit status from its result: 0, or 1 for `Ok(false)` (a failure its
/// report has already shown); an error is printed and gives its own status, except
/// an interruption, which has said what it abandoned.
pub fn exit_status(r: Result<bool, LabError>) -> u8 {
    match r {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(LabError::Interrupted) => interrupt::EXIT_INTERRUPTED,
        Err(e) => {
            eprintln!("{e}");
            e.exit_code()
        }
    }
}
