//! Why the kernel retransmitted: `TCP_INFO` counts retransmissions and timeouts but
//! not their causes, so each trial's server-end capture goes through `gentle
//! analyze`'s inference (fast retransmit, early/RACK, timeout, slow start after a
//! timeout, loss probe), and each retransmission is charged to the exchange under
//! way on its connection.

use gentle_analyze::{Analyzer, CapturePoint, Cause, Dir, Options};
use gentle_real::endpoints::CLIENT_PORT_BASE;
use gentle_real::topology::{CLIENT_ADDR, SERVER_ADDR};
use gentle_sim::record::TrialResult;

/// LINKTYPE_RAW: the captures hold bare IPv4 packets.
const LINKTYPE_RAW: i32 = 101;

/// Retransmission causes over the trial, by cause, in the server's capture.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Causes {
    pub fast: u64,
    pub early: u64,
    pub timeout: u64,
    pub slow_start: u64,
    pub probe: u64,
    /// Every retransmission: connection, sequence offset (the SYN is 0), time on
    /// the forwarder's clock (ns), cause.
    pub list: Vec<(u32, u64, u64, Cause)>,
}

/// Analyses each end's `frames` (ns since the forwarder's start, which is
/// `base_ns` on the endpoints' clock) and charges each retransmission to its
/// exchange in `r`: `starts[i]` is the start of record i on its connection
/// `conns[i]`.
pub fn charge(
    captures: &[Vec<(u64, Vec<u8>)>; 2],
    base_ns: u64,
    r: &mut TrialResult,
    spans: &[(u32, u64)],
) -> Causes {
    // Each end's capture shows its own servers' retransmissions as they left.
    let mut found: Vec<(u32, u64, u64, Cause)> = Vec::new();
    // And the fast-recovery episodes they began: (connection, start ns).
    let mut recoveries: Vec<(u32, u64)> = Vec::new();
    for (frames, local) in captures.iter().zip([SERVER_ADDR, CLIENT_ADDR]) {
        let mut a = Analyzer::new(Options {
            server: None,
            server_port: None,
            point: CapturePoint::Server,
            keep_retransmissions: false,
            // The host's kernel: Linux 6 has no FACK (removed in 4.15).
            no_fack: true,
        });
        for (i, (ts, data)) in frames.iter().enumerate() {
            a.frame(i as u64, LINKTYPE_RAW, *ts, data, &mut |p| {
                if p.dir == Dir::ToClient
                    && p.seg.src == std::net::IpAddr::V4(local)
                    && let Some(c) = p.cause
                {
                    let conn = p.seg.dport.wrapping_sub(CLIENT_PORT_BASE) as u32;
                    found.push((conn, p.rel_seq, p.ts_ns, c));
                }
            });
        }
        recoveries.extend(fast_recoveries(&a.finish(), local));
    }
    found.sort_by_key(|f| f.2);
    // The exchange each retransmission belongs to: the latest of its connection
    // begun before it.
    let exchange_of = |conn: u32, ts: u64| -> Option<usize> {
        let t = ts + base_ns;
        spans
            .iter()
            .enumerate()
            .filter(|(_, (k, start))| *k == conn && *start <= t)
            .max_by_key(|(_, (_, start))| *start)
            .map(|(i, _)| i)
    };
    let recs: Vec<Option<usize>> = found
        .iter()
        .map(|&(conn, _, ts, _)| exchange_of(conn, ts))
        .collect();
    for &(conn, ts) in &recoveries {
        if let Some(x) = exchange_of(conn, ts).and_then(|i| r.exchanges.get_mut(i)) {
            x.recoveries += 1;
        }
    }
    r.counters.recovery_episodes += recoveries.len() as u64;
    // A lone tail segment resent when the RTO would have fired looks like a
    // timeout on the wire, but Linux's probe timer is capped at the RTO and sends
    // a probe then (`tcp_schedule_loss_probe`): TCP_INFO's count of RTOs for the
    // exchange settles it — the earliest "timeouts" beyond it were probes.
    for (i, rec) in r.exchanges.iter().enumerate() {
        let mine: Vec<usize> = (0..found.len())
            .filter(|&j| recs[j] == Some(i) && found[j].3 == Cause::Timeout)
            .collect();
        let excess = mine.len().saturating_sub(rec.timeouts as usize);
        for &j in mine.iter().take(excess) {
            found[j].3 = Cause::Probe;
        }
    }
    let mut total = Causes::default();
    for (j, &(_, _, _, c)) in found.iter().enumerate() {
        match c {
            Cause::Fast => total.fast += 1,
            Cause::Early => total.early += 1,
            Cause::Timeout => total.timeout += 1,
            Cause::SlowStart => total.slow_start += 1,
            Cause::Probe => total.probe += 1,
        }
        if let Some(x) = recs[j].and_then(|i| r.exchanges.get_mut(i)) {
            match c {
                Cause::Fast | Cause::Early => x.fast_retrans += 1,
                Cause::SlowStart => x.slow_start_retrans += 1,
                Cause::Timeout | Cause::Probe => {}
            }
        }
    }
    total.list = found;
    let k = &mut r.counters;
    k.fast_retrans += total.fast + total.early;
    k.early_retrans += total.early;
    k.slow_start_retrans += total.slow_start;
    k.loss_probes += total.probe;
    total
}

/// The fast-recovery episodes (begun by a fast or early retransmission) that the
/// servers at `local` went through, inferred from the capture as `gentle analyze`
/// reports them: (connection, start on the capture's clock, ns).
fn fast_recoveries(a: &gentle_analyze::Analysis, local: std::net::Ipv4Addr) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    for f in &a.flows {
        let (Ok(server), Ok(client)) = (
            f.server.parse::<std::net::SocketAddr>(),
            f.client.parse::<std::net::SocketAddr>(),
        ) else {
            continue;
        };
        if server.ip() != std::net::IpAddr::V4(local) {
            continue;
        }
        let conn = client.port().wrapping_sub(CLIENT_PORT_BASE) as u32;
        out.extend(
            f.recoveries
                .iter()
                .filter(|e| matches!(e.cause, Cause::Fast | Cause::Early))
                .map(|e| (conn, f.start_ns + (e.start_ms * 1e6).round() as u64)),
        );
    }
    out
}
