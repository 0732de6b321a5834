//! TCP sessions in the simulator (`fast-start-and-sessions.txt` §6, §7.3): a host's
//! connections to the same peer join one session when they reach ESTABLISHED and
//! leave it when they close; the session keeps its state for the next connection.

use crate::common;
use std::sync::Arc;

use std::time::Duration;

use common::{chan, exchange, two_hosts};
use gentle_sim::loss::LossModel;
use gentle_sim::workload::{ConnectionMode, WorkloadKind};
use gentle_sim::{Observer, PacketEvent, PacketView, Sim};
use gentle_tcp::{Config, Profile, SessionMode};

/// Every data segment the server sent: (time ns, flow, relative sequence number).
#[derive(Default)]
struct DataSends(Vec<(u64, u32, u64)>);

impl Observer for DataSends {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        if matches!(ev, PacketEvent::Send) && p.meta.from_server && p.meta.payload > 0 {
            self.0.push((p.t.as_nanos(), p.meta.flow, p.meta.rel_seq));
        }
    }
}

fn cfg(session: bool) -> Config {
    let mut c = Profile::Plain.config();
    c.initial_window = 2;
    c.delayed_ack = None;
    if session {
        c.session = SessionMode::HostPair;
    }
    c
}

/// `parallel` workloads of `exchanges` fresh or persistent exchanges of `response`
/// bytes between the same two hosts, 50 ms apart; the server side runs `server`,
/// the clients plain TCP.
fn run(
    server: Config,
    parallel: u16,
    exchanges: u32,
    mode: ConnectionMode,
    response: u64,
) -> (gentle_sim::record::TrialResult, DataSends) {
    let kind = exchange(100, response, exchanges, mode);
    let mut s = two_hosts(
        chan(None, 50, LossModel::None),
        chan(None, 50, LossModel::None),
        kind,
        server,
    );
    Arc::make_mut(&mut s.workloads[0]).client_config = Some(cfg(false));
    for k in 1..parallel {
        let mut w = gentle_sim::workload::WorkloadSpec::clone(&s.workloads[0]);
        w.name = format!("web{k}");
        w.port = 80 + k;
        s.workloads.push(Arc::new(w));
    }
    let mut sends = DataSends::default();
    let r = Sim::new(&s, 0, 3).unwrap().with_observer(&mut sends).run();
    assert!(r.exchanges.iter().all(|e| e.complete));
    assert_eq!(r.corrupt_bytes, 0);
    (r, sends)
}

/// Data segments sent within the first round trip after the first one.
fn first_flight(sends: &DataSends) -> usize {
    let t0 = sends.0.first().expect("data sent").0;
    sends.0.iter().filter(|s| s.0 < t0 + 90_000_000).count()
}

#[test]
fn connections_join_at_established_and_share_one_initial_window() {
    let (r, sends) = run(cfg(true), 4, 1, ConnectionMode::Fresh, 20_000);
    // Each server connection joined once, after its handshake (the plain clients
    // did not).
    assert_eq!(r.counters.session_joins, 4);
    // One session's initial window of 2 segments for all four, where four
    // independent connections send 2 each.
    assert_eq!(first_flight(&sends), 2);
    let (r, sends) = run(cfg(false), 4, 1, ConnectionMode::Fresh, 20_000);
    assert_eq!(r.counters.session_joins, 0);
    assert_eq!(first_flight(&sends), 8);
}

#[test]
fn a_closed_connection_leaves_and_the_next_one_inherits_the_session() {
    // Three connections one after another: each leaves when it closes, the next
    // joins after its handshake and finds the session's window where the last one
    // left it, not an initial window (the handshake's round trip is shorter than
    // the RTO, so no restart decay).
    let (r, sends) = run(cfg(true), 1, 3, ConnectionMode::Fresh, 30_000);
    assert_eq!(r.counters.session_joins, 3);
    let flows: Vec<u32> = {
        let mut f: Vec<u32> = sends.0.iter().map(|s| s.1).collect();
        f.dedup();
        f
    };
    assert_eq!(flows.len(), 3);
    let flight = |flow: u32| {
        let mine: Vec<u64> = sends
            .0
            .iter()
            .filter(|s| s.1 == flow)
            .map(|s| s.0)
            .collect();
        mine.iter().filter(|&&t| t < mine[0] + 90_000_000).count()
    };
    assert_eq!(flight(flows[0]), 2);
    assert!(flight(flows[1]) > 8, "{}", flight(flows[1]));
    // Without the session, each connection starts from its initial window.
    let (_, sends) = run(cfg(false), 1, 3, ConnectionMode::Fresh, 30_000);
    let second = sends
        .0
        .iter()
        .map(|s| s.1)
        .find(|&f| f != sends.0[0].1)
        .unwrap();
    let mine: Vec<u64> = sends
        .0
        .iter()
        .filter(|s| s.1 == second)
        .map(|s| s.0)
        .collect();
    assert_eq!(
        mine.iter().filter(|&&t| t < mine[0] + 90_000_000).count(),
        2
    );
}

#[test]
fn an_idle_session_restarts_with_fast_start_when_its_members_run_it() {
    // A persistent connection idle 5 s between responses: the session restarts
    // after the idle period — from its initial window without fast start
    // (RFC 2861's decay), from half its window with it, marking the segments
    // beyond a normal restart.
    let mut kind = exchange(100, 60_000, 2, ConnectionMode::Persistent);
    if let WorkloadKind::Exchanges { think, .. } = &mut kind {
        *think = Duration::from_secs(5);
    }
    let second_flight = |server: Config| {
        let mut s = two_hosts(
            chan(None, 50, LossModel::None),
            chan(None, 50, LossModel::None),
            kind.clone(),
            server,
        );
        Arc::make_mut(&mut s.workloads[0]).client_config = Some(cfg(false));
        let mut sends = DataSends::default();
        let r = Sim::new(&s, 0, 3).unwrap().with_observer(&mut sends).run();
        assert!(r.exchanges.iter().all(|e| e.complete));
        let t1 = sends.0.iter().find(|s| s.0 > 4_000_000_000).unwrap().0;
        let n = sends
            .0
            .iter()
            .filter(|s| s.0 >= t1 && s.0 < t1 + 90_000_000)
            .count();
        (r, n)
    };
    let (plain, n_plain) = second_flight(cfg(true));
    assert_eq!(n_plain, 2);
    assert_eq!(plain.counters.fast_start, 0);
    let mut fs = cfg(true);
    fs.fast_start = true;
    let (r, n_fs) = second_flight(fs);
    assert_eq!(r.counters.fast_start, 1);
    assert!(n_fs > 8, "{n_fs}");
    assert_eq!(r.counters.fast_start_segs, n_fs as u64 - 2);
}

/// Each server connection's ssthresh and srtt when first seen established.
#[derive(Default)]
struct FirstState(std::collections::BTreeMap<u32, (u32, Option<Duration>)>);

impl Observer for FirstState {
    fn on_connection(&mut self, _t: gentle_tcp::Instant, conn: u32, c: &gentle_tcp::Connection) {
        if c.is_established() && c.local_port() == 80 {
            self.0.entry(conn).or_insert((c.ssthresh(), c.srtt()));
        }
    }
}

#[test]
fn temporal_sharing_starts_a_new_connection_from_the_last_ones_state() {
    // RFC 9040 §4.3: the second connection to the host starts with the ssthresh
    // the first one's loss set, and its RTT estimate; without the switch, from
    // scratch.
    let first_two = |sharing: bool| {
        let mut server = cfg(false);
        server.temporal_sharing = sharing;
        // A second apart: the first connection has closed and left its state.
        let mut kind = exchange(100, 40_000, 2, ConnectionMode::Fresh);
        if let WorkloadKind::Exchanges { think, .. } = &mut kind {
            *think = Duration::from_secs(1);
        }
        let lossy = LossModel::DropList {
            indices: vec![12],
            count: gentle_sim::loss::DropCount::Segments,
        };
        let mut s = two_hosts(
            chan(Some(10_000_000), 50, lossy),
            chan(None, 50, LossModel::None),
            kind,
            server,
        );
        Arc::make_mut(&mut s.workloads[0]).client_config = Some(cfg(false));
        let mut seen = FirstState::default();
        let r = Sim::new(&s, 0, 3).unwrap().with_observer(&mut seen).run();
        assert!(r.exchanges.iter().all(|e| e.complete));
        (r, seen.0.into_values().collect::<Vec<_>>())
    };
    let (_, states) = first_two(true);
    assert_eq!(states.len(), 2);
    assert_eq!(states[0].0, gentle_tcp::cc::INFINITE_SSTHRESH);
    assert!(states[1].0 < 100, "cached ssthresh {}", states[1].0);
    // The handshake's own sample comes first, blended with the cached estimate.
    assert!(states[1].1.is_some());
    let (_, states) = first_two(false);
    assert_eq!(states.len(), 2);
    assert_eq!(states[1].0, gentle_tcp::cc::INFINITE_SSTHRESH);
}
