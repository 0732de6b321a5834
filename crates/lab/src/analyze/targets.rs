//! `gentle analyze CAPTURE --targets FILE`: the capture's statistics as a targets
//! file for `gentle calibrate`, so that a scenario can be fitted to a user's own
//! traffic as to a paper's table (issue: calibrated networks, "any statistic
//! `gentle analyze` reports"). Each statistic is written under the name the
//! simulation's report gives it — the server ends' counters (`Server.`), as the
//! capture shows the server's sending — with what the capture counted:
//!
//! | statistic | from the capture |
//! |---|---|
//! | `(Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans) / Server.DataSegsOut` | the server's retransmissions of data over its data packets |
//! | `ExchangesWithServerRetrans / Exchanges` | exchanges during which the server retransmitted |
//! | `Server.TCPFastRetrans / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)` | fast and early retransmissions (Linux counts both as sent in Recovery) |
//! | `Server.TCPTimeouts / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)` | timeouts' first retransmissions |
//! | `Server.TCPSlowStartRetrans / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)` | the rest of a timeout's window |
//! | `Server.LossProbesRetrans / (Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans)` | tail loss probes |
//! | `Server.TCPFastRetrans / Server.RecoveryEpisodes` | fast and early retransmissions per recovery begun by one |
//! | `latency.p50`, `p90`, `p99`, `mean` | the response times (request in to the ACK of its last byte, ms: the `server` metric), server-side captures only |
//!
//! The retransmissions are those of data the capture shows: `RetransSegs` without the
//! handshake's (`TCPSynRetrans`) and with the loss probes Linux 3.10 left out of it
//! (`LossProbesUncounted`), so that a scenario of any era fits them.
//!
//! A statistic whose value is 0 or undefined (nothing to divide by) is left out, as
//! a target must be above 0; the file says which were left out and why.

use std::fmt::Write as _;

use gentle_analyze::{Analysis, Cause};

/// The retransmissions of data a capture shows, in the simulation's counters: the
/// divisor of every share below.
macro_rules! data_retrans {
    () => {
        "Server.RetransSegs + Server.LossProbesUncounted - Server.TCPSynRetrans"
    };
}

/// One statistic of the capture: its name, value and what it was counted from.
struct Stat {
    stat: &'static str,
    value: Option<f64>,
    source: String,
}

fn ratio(stat: &'static str, num: u64, den: u64, what: &str) -> Stat {
    Stat {
        stat,
        value: (den > 0).then(|| num as f64 / den as f64),
        source: format!("{num} of {den} {what}"),
    }
}

/// Nearest-rank quantile of sorted `v`, as the simulation's report takes it.
fn quantile(v: &[f64], q: f64) -> f64 {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// The statistics of `a`; response times only when the capture is the server's.
fn stats(a: &Analysis, server_side: bool) -> Vec<Stat> {
    let t = &a.totals;
    let r = &t.retransmissions;
    let all = r.fast + r.early + r.timeout + r.slow_start + r.probe;
    let fast = r.fast + r.early;
    let recoveries = a
        .flows
        .iter()
        .flat_map(|f| &f.recoveries)
        .filter(|e| matches!(e.cause, Cause::Fast | Cause::Early))
        .count() as u64;
    let mut out = vec![
        ratio(
            concat!("(", data_retrans!(), ") / Server.DataSegsOut"),
            all,
            t.data_packets,
            "server data packets were retransmissions",
        ),
        ratio(
            "ExchangesWithServerRetrans / Exchanges",
            t.lossy_exchanges,
            t.exchanges,
            "exchanges saw the server retransmit",
        ),
        ratio(
            concat!("Server.TCPFastRetrans / (", data_retrans!(), ")"),
            fast,
            all,
            "retransmissions were fast or early",
        ),
        ratio(
            concat!("Server.TCPTimeouts / (", data_retrans!(), ")"),
            r.timeout,
            all,
            "retransmissions were timeouts",
        ),
        ratio(
            concat!("Server.TCPSlowStartRetrans / (", data_retrans!(), ")"),
            r.slow_start,
            all,
            "retransmissions were in slow start after a timeout",
        ),
        ratio(
            concat!("Server.LossProbesRetrans / (", data_retrans!(), ")"),
            r.probe,
            all,
            "retransmissions were loss probes",
        ),
    ];
    out.push(Stat {
        stat: "Server.TCPFastRetrans / Server.RecoveryEpisodes",
        value: (recoveries > 0).then(|| fast as f64 / recoveries as f64),
        source: format!("{fast} fast or early retransmissions in {recoveries} recoveries"),
    });
    if server_side {
        out.extend(latency(a));
    }
    out
}

/// The response-time statistics, ms.
fn latency(a: &Analysis) -> Vec<Stat> {
    let mut ms: Vec<f64> = a
        .flows
        .iter()
        .flat_map(|f| &f.exchanges)
        .filter_map(|e| e.response_ms)
        .collect();
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    let source = |what: &str| format!("{what} of {n} response times (ms)");
    let at = |q: f64| (n > 0).then(|| quantile(&ms, q));
    vec![
        Stat {
            stat: "latency.p50",
            value: at(0.5),
            source: source("the median"),
        },
        Stat {
            stat: "latency.p90",
            value: at(0.9),
            source: source("the 90th percentile"),
        },
        Stat {
            stat: "latency.p99",
            value: at(0.99),
            source: source("the 99th percentile"),
        },
        Stat {
            stat: "latency.mean",
            value: (n > 0).then(|| ms.iter().sum::<f64>() / n as f64),
            source: source("the mean"),
        },
    ]
}

/// The targets file of capture `name`'s analysis `a`.
pub fn targets_toml(name: &str, a: &Analysis, server_side: bool) -> String {
    let mut kept = String::new();
    let mut left = Vec::new();
    for s in stats(a, server_side) {
        match s.value {
            Some(v) if v > 0.0 && v.is_finite() => {
                // A TOML string, quoted and escaped (a capture's name may hold quotes).
                let source = toml_edit::Value::from(format!("{name}: {}", s.source));
                let _ = write!(
                    kept,
                    "\n[[target]]\nstat = \"{}\"\nvalue = {v}\nsource = {source}\n",
                    s.stat,
                );
            }
            Some(_) => left.push(format!("#   {} (0: {})", s.stat, s.source)),
            None => left.push(format!("#   {} (nothing to divide by)", s.stat)),
        }
    }
    let mut head = format!(
        "# The statistics of {name}, from `gentle analyze --targets`: targets for\n\
         #   gentle calibrate SCENARIO --targets THIS_FILE --out FITTED.toml\n\
         # Fit a scenario whose traffic is the capture's (its responses, its clients);\n"
    );
    if server_side {
        head += "# the response times are the `server` metric (request in to the ACK of \
                 the response's last byte).\n";
    } else {
        head += "# The capture is the client's: its response times are not the server \
                 metric, so they are left out.\n";
    }
    if !left.is_empty() {
        head += "# Left out (a target must be above 0):\n";
        head += &left.join("\n");
        head += "\n";
    }
    head + &kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(quantile(&v, 0.5), 5.0);
        assert_eq!(quantile(&v, 0.9), 9.0);
        assert_eq!(quantile(&v, 0.99), 10.0);
        assert_eq!(quantile(&[3.0], 0.5), 3.0);
    }
}
