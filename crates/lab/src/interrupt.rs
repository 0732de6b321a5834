//! Ctrl-C and SIGTERM. The first signal asks the run to stop: trials stop between
//! waves, the command removes its staging area, says what was abandoned and exits
//! with status 130. A second signal exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Exit status after an interruption (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// Installs the handler; harmless to call more than once.
pub fn install() {
    install_for("trials");
}

/// As [`install`], naming what the run finishes before it stops (`trials`,
/// `scripts`).
pub fn install_for(what: &'static str) {
    let _ = ctrlc::set_handler(move || {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted again: exiting at once");
            std::process::exit(EXIT_INTERRUPTED as i32);
        }
        eprintln!("\ninterrupted: stopping after the {what} in progress");
    });
}

/// A stop was asked for.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Asks the run in progress to stop, as Ctrl-C does (the Python package calls this
/// when Python sees the signal).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Forgets an earlier request, before a new run (in a process that goes on after
/// an interrupted run: the Python package).
pub fn reset() {
    REQUESTED.store(false, Ordering::SeqCst);
}
