//! The text report of `gentle analyze`: totals, retransmissions by cause, the flows
//! and their signatures, and the §2 figures as tables.

use std::fmt::Write as _;

use gentle_analyze::{Analysis, Cause, CauseCounts, FlowReport};

use super::{figure3_lengths, fmt_ms, ms};

/// The text report: totals, retransmissions by cause, the flows (at most
/// `max_flows`, the most retransmitting first), and the §2 figures as tables.
pub fn report(name: &str, a: &Analysis, max_flows: usize) -> String {
    let mut s = String::new();
    totals(&mut s, name, a);
    causes(&mut s, a);
    flows(&mut s, a, max_flows);
    s.push_str(&figures_text(a));
    s
}

/// The packets and flows read, the exchanges and their mean response times, the
/// server's data packets and how many were retransmitted and lost.
fn totals(s: &mut String, name: &str, a: &Analysis) {
    let t = &a.totals;
    let n = |k: u64, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
    let _ = writeln!(
        s,
        "{name}: {}, {} in {} ({} not TCP, {} malformed)",
        n(t.frames, "frame"),
        n(t.tcp_packets, "TCP packet"),
        n(t.flows, "flow"),
        t.skipped,
        t.malformed
    );
    if t.capture_copies > 0 {
        let _ = writeln!(
            s,
            "  {} copies of frames captured more than once (the same segment again \
             within 1 ms, nothing from the peer between): counted apart, not as \
             retransmissions",
            t.capture_copies
        );
    }
    let rt: Vec<f64> = a
        .flows
        .iter()
        .flat_map(|f| f.exchanges.iter())
        .filter_map(|e| e.response_ms.map(|m| (m, e.lossy())))
        .map(|(m, _)| m)
        .collect();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let (lossy, clean): (Vec<_>, Vec<_>) = a
        .flows
        .iter()
        .flat_map(|f| f.exchanges.iter())
        .filter_map(|e| e.response_ms.map(|m| (m, e.lossy())))
        .partition(|x| x.1);
    let lossy: Vec<f64> = lossy.into_iter().map(|x| x.0).collect();
    let clean: Vec<f64> = clean.into_iter().map(|x| x.0).collect();
    let _ = writeln!(
        s,
        "exchanges: {} ({} saw a retransmission); response time mean {} ms: {} without loss, {} with",
        t.exchanges,
        t.lossy_exchanges,
        ms(mean(&rt)),
        ms(mean(&clean)),
        ms(mean(&lossy))
    );
    let total = t.retransmissions.total();
    let _ = writeln!(
        s,
        "server data packets: {}; retransmitted: {} ({:.2}%); losses: {}, at the tail: {}",
        t.data_packets,
        total,
        if t.data_packets > 0 {
            100.0 * total as f64 / t.data_packets as f64
        } else {
            0.0
        },
        t.losses,
        t.tail_losses
    );
}

/// The retransmissions by cause, with the share of each, and the flows showing each
/// signature.
fn causes(s: &mut String, a: &Analysis) {
    let t = &a.totals;
    let r = &t.retransmissions;
    let total = r.total();
    let _ = writeln!(s, "\nretransmissions by cause");
    for c in Cause::ALL {
        let n = r.get(c);
        let _ = writeln!(
            s,
            "  {:<11} {:>8}  {:>5.1}%",
            c.name(),
            n,
            if total > 0 {
                100.0 * n as f64 / total as f64
            } else {
                0.0
            }
        );
    }
    let _ = writeln!(
        s,
        "  {:<11} {:>8}  (of the above, shown unnecessary)",
        "spurious", r.spurious
    );
    let _ = writeln!(
        s,
        "flows with reordering: {}, bufferbloat: {}, policing: {}",
        t.reordering_flows, t.bufferbloat_flows, t.policed_flows
    );
}

/// The flows, at most `max_flows`, the most retransmitting first: a row each.
fn flows(s: &mut String, a: &Analysis, max_flows: usize) {
    let mut flows: Vec<_> = a.flows.iter().collect();
    flows.sort_by_key(|f| (std::cmp::Reverse(f.retransmissions.total()), f.id));
    let shown = flows.len().min(max_flows);
    let _ = writeln!(
        s,
        "\nflows ({} of {}, most retransmissions first; causes fast/early/timeout/slow-start/probe)",
        shown,
        flows.len()
    );
    let _ = writeln!(
        s,
        "{:>5} {:<22} {:<22} {:>6} {:>13} {:>5} {:>4} {:>8} {:>8} {:>6}  signatures",
        "flow", "server", "client", "pkts", "retrans", "lost", "tail", "rtt ms", "srtt ms", "exch"
    );
    let rows = s.len();
    for f in flows.iter().take(shown) {
        let _ = writeln!(
            s,
            "{:>5} {:<22} {:<22} {:>6} {:>13} {:>5} {:>4} {:>8} {:>8} {:>6}  {}",
            f.id,
            f.server,
            f.client,
            f.packets,
            causes_cell(&f.retransmissions),
            f.losses,
            f.tail_losses,
            ms(f.rtt_min_ms),
            ms(f.srtt_ms),
            f.exchanges.len(),
            signatures(f)
        );
    }
    if s.len() > rows {
        let _ = writeln!(
            s,
            "(lost: captured segments a resend repeated, less those shown unnecessary; tail: of\n \
             those, repaired by a probe or a timeout; rtt ms: the minimum; reordering(N): the\n \
             largest extent, segments; bufferbloat(+X ms): the 95th percentile RTT, X above the\n \
             minimum; spurious(N): retransmissions shown unnecessary)"
        );
    }
}

/// A flow's signatures: reordering, bufferbloat, policing, spurious
/// retransmissions, gaps in the capture.
fn signatures(f: &FlowReport) -> String {
    let mut sig = Vec::new();
    if f.reordering_events > 0 {
        sig.push(format!("reordering({})", f.reordering_max));
    }
    if f.bufferbloat {
        sig.push(format!("bufferbloat(+{} ms)", ms(f.rtt_inflation_ms)));
    }
    if let Some(k) = f.policed_kbps {
        sig.push(format!("policed({k:.0} kbit/s)"));
    }
    if f.retransmissions.spurious > 0 {
        sig.push(format!("spurious({})", f.retransmissions.spurious));
    }
    if f.capture_gaps > 0 {
        sig.push(format!("capture-gaps({})", f.capture_gaps));
    }
    if f.capture_copies > 0 {
        sig.push(format!("capture-copies({})", f.capture_copies));
    }
    sig.join(" ")
}

/// A flow's retransmissions per cause, as `fast/early/timeout/slow-start/probe`.
fn causes_cell(c: &CauseCounts) -> String {
    Cause::ALL
        .iter()
        .map(|&k| c.get(k).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// The §2 figures as tables.
pub fn figures_text(a: &Analysis) -> String {
    let f = &a.figures;
    let mut s = String::new();
    let _ = writeln!(s, "\nFigure 1: mean response time (ms) by RTT");
    let _ = writeln!(
        s,
        "  {:>13} {:>9} {:>12} {:>6} {:>12} {:>6}",
        "rtt ms", "mean rtt", "no loss", "n", "loss", "n"
    );
    for b in &f.latency_by_rtt {
        let range = match b.rtt_to_ms {
            Some(to) => format!("{:.0}-{:.0}", b.rtt_from_ms, to),
            None => format!("{:.0}+", b.rtt_from_ms),
        };
        let _ = writeln!(
            s,
            "  {:>13} {:>9} {:>12} {:>6} {:>12} {:>6}",
            range,
            fmt_ms(b.rtt_mean_ms),
            ms(b.no_loss_ms),
            b.no_loss_n,
            ms(b.loss_ms),
            b.loss_n
        );
    }
    let _ = writeln!(
        s,
        "\nFigure 2: RTO/RTT over {} timeouts: median {}, 99th percentile {}",
        f.rto_over_rtt_cdf.len(),
        f.rto_over_rtt_median
            .map_or("-".into(), |v| format!("{v:.1}")),
        f.rto_over_rtt_p99.map_or("-".into(), |v| format!("{v:.1}")),
    );
    let _ = writeln!(
        s,
        "\nFigure 3: loss probability at each position of a burst, relative to the first"
    );
    let _ = writeln!(
        s,
        "  (where the first position lost nothing, the losses at each position instead)"
    );
    for c in &f.loss_by_position {
        let cells: Vec<String> = if c.relative.first().is_some_and(|r| r.is_some()) {
            c.relative
                .iter()
                .map(|r| r.map_or("-".into(), |v| format!("{v:.2}")))
                .collect()
        } else {
            c.losses.iter().map(|n| format!("[{n}]")).collect()
        };
        let _ = writeln!(
            s,
            "  len {:>2} ({:>6} bursts, {:>5} losses): {}",
            c.burst_len,
            c.bursts,
            c.losses.iter().sum::<u64>(),
            cells.join(" ")
        );
    }
    if !f.loss_by_position.is_empty() {
        let _ = writeln!(s, "  in the figure: {}", figure3_lengths(f).1);
    }
    let _ = writeln!(
        s,
        "\nFigure 4: losses in lossy bursts (P(1): the share of them that lost one \
         segment, P(<=2): at most two)"
    );
    let _ = writeln!(
        s,
        "  {:>6} {:>8} {:>8} {:>8}",
        "len", "lossy", "P(1)", "P(<=2)"
    );
    for c in &f.losses_per_burst {
        let _ = writeln!(
            s,
            "  {:>6} {:>8} {:>8.2} {:>8.2}",
            c.burst_len, c.lossy_bursts, c.one, c.at_most_two
        );
    }
    s
}
