//! Instructions per data packet and per trial, counted by callgrind (Valgrind's
//! instruction counter): exact, and the same however busy the machine is, where a
//! wall or CPU clock is not. `gentle bench` runs itself under callgrind with only
//! [`counted_work`] collected (`--toggle-collect`), so start-up, parsing and output
//! are left out: what is counted is the simulation of the bulk transfer, or of a
//! number of short trials one after another on one thread, after one uncounted
//! trial has set up what a process sets up once.

use std::process::Command;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::runner;
use crate::scenario::Scenario;

/// What a counted run simulates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// The bulk transfer, once.
    Bulk,
    /// This many short trials.
    Short(u64),
}

impl FromStr for Work {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "bulk" {
            return Ok(Work::Bulk);
        }
        s.strip_prefix("short:")
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
            .map(Work::Short)
            .ok_or_else(|| format!("expected `bulk` or `short:N` (N > 0), got `{s}`"))
    }
}

impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Work::Bulk => write!(f, "bulk"),
            Work::Short(n) => write!(f, "short:{n}"),
        }
    }
}

/// What a counted run did.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct WorkDone {
    pub data_packets: u64,
    pub trials: u64,
}

/// The simulation a count covers; nothing else runs inside it.
#[inline(never)]
pub fn counted_work(bulk: &Scenario, short: &Scenario, work: Work) -> WorkDone {
    match work {
        Work::Bulk => {
            let r = runner::run_trial(bulk, &bulk.variants[0], 1, 0);
            WorkDone {
                data_packets: r.data_packets,
                trials: 1,
            }
        }
        Work::Short(n) => WorkDone {
            data_packets: super::short_trials(short, n),
            trials: n,
        },
    }
}

/// One count: the work, what it did and the instructions it took.
#[derive(Clone, Debug, Serialize)]
pub struct Count {
    pub work: String,
    pub data_packets: u64,
    pub trials: u64,
    pub instructions: u64,
    /// Instructions per data packet (bulk) or per trial (short).
    pub per_unit: f64,
}

/// The bulk transfer and short trials at two sizes (the cost per trial should not
/// grow with their number).
#[derive(Clone, Debug, Serialize)]
pub struct Instructions {
    pub bulk: Count,
    pub short: Vec<Count>,
}

/// Short trial counts measured.
const SHORT_COUNTS: [u64; 2] = [1_000, 10_000];

/// Counts every work item, or says why it cannot (no valgrind).
pub fn measure() -> Result<Instructions, String> {
    Ok(Instructions {
        bulk: count(Work::Bulk)?,
        short: SHORT_COUNTS
            .iter()
            .map(|&n| count(Work::Short(n)))
            .collect::<Result<_, _>>()?,
    })
}

/// Runs `gentle bench --work WORK` under callgrind and reads its count.
pub fn count(work: Work) -> Result<Count, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let out = tempfile::Builder::new()
        .prefix("gentle-callgrind-")
        .tempfile()
        .map_err(|e| format!("a temporary file: {e}"))?;
    let run = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg("--toggle-collect=*counted_work*")
        .arg(format!("--callgrind-out-file={}", out.path().display()))
        .arg(exe)
        .args(["bench", "--work", &work.to_string()])
        .output()
        .map_err(|e| {
            format!("valgrind could not be started ({e}); install it (apt-get install valgrind)")
        })?;
    if !run.status.success() {
        return Err(format!(
            "valgrind failed ({}): {}",
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        ));
    }
    let instructions = collected(&String::from_utf8_lossy(&run.stderr))
        .ok_or("valgrind printed no `Collected :` count")?;
    let done: WorkDone = serde_json::from_slice(&run.stdout)
        .map_err(|e| format!("the counted run's report: {e}"))?;
    let units = match work {
        Work::Bulk => done.data_packets,
        Work::Short(_) => done.trials,
    };
    Ok(Count {
        work: work.to_string(),
        data_packets: done.data_packets,
        trials: done.trials,
        instructions,
        per_unit: instructions as f64 / units.max(1) as f64,
    })
}

/// The count in callgrind's summary line `==PID== Collected : N`.
fn collected(stderr: &str) -> Option<u64> {
    stderr.lines().find_map(|l| {
        let (_, rest) = l.split_once("Collected :")?;
        rest.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_parsed_and_printed_alike() {
        for w in [Work::Bulk, Work::Short(7)] {
            assert_eq!(w.to_string().parse::<Work>(), Ok(w));
        }
        for bad in ["", "short", "short:0", "short:x", "bulk:1"] {
            assert!(bad.parse::<Work>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_count_is_read_from_callgrinds_summary() {
        let err = "==12== Events    : Ir\n==12== Collected : 741613862\n==12==\n";
        assert_eq!(collected(err), Some(741_613_862));
        assert_eq!(collected("==12== I   refs: 5\n"), None);
    }
}
