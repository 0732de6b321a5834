//! The library's one error type: every command of gentle fails with one of these,
//! and it knows the exit status the command ends with (2 for bad input, checked
//! before any work; 1 when running or writing failed; 130 on Ctrl-C).

use crate::scenario::ScenarioError;

/// Why a command, a job or a run failed.
#[derive(Debug)]
pub enum LabError {
    /// The scenario is wrong, at a place in its text.
    Scenario(ScenarioError),
    /// A flag or an output directory is wrong (bad input, exit status 2).
    Input(String),
    /// Running or writing failed (exit status 1).
    Run(String),
    /// Ctrl-C (exit status 130).
    Interrupted,
}

impl std::fmt::Display for LabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabError::Scenario(e) => write!(f, "{e}"),
            LabError::Input(e) | LabError::Run(e) => write!(f, "error: {e}"),
            LabError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl LabError {
    /// The command's exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            LabError::Scenario(_) | LabError::Input(_) => 2,
            LabError::Run(_) => 1,
            LabError::Interrupted => crate::interrupt::EXIT_INTERRUPTED,
        }
    }
}
