//! Fast start in the simulator (`fast-start-and-sessions.txt` §3.2, §4): a host keeps
//! each closed connection's path state per peer host (as Linux's `tcp_metrics`), so a
//! new connection to the same host fast starts; a persistent connection fast starts
//! after its own idle periods; accelerated open sends no handshake.

use crate::common;

use std::time::Duration;

use common::{chan, exchange, two_hosts};
use gentle_sim::Sim;
use gentle_sim::loss::LossModel;
use gentle_sim::workload::{ConnectionMode, WorkloadKind};
use gentle_tcp::{Config, Profile};

fn run(cfg: Config, mode: ConnectionMode) -> gentle_sim::record::TrialResult {
    let mut kind = exchange(100, 60_000, 3, mode);
    if let WorkloadKind::Exchanges { think, .. } = &mut kind {
        *think = Duration::from_secs(5); // idle far longer than the RTO
    }
    let s = two_hosts(
        chan(Some(10_000_000), 30, LossModel::None),
        chan(Some(10_000_000), 30, LossModel::None),
        kind,
        cfg,
    );
    Sim::new(&s, 0, 7).unwrap().run()
}

fn fs_cfg() -> Config {
    let mut c = Profile::Linux26.config();
    c.fast_start = true;
    c
}

#[test]
fn a_new_connection_to_the_same_host_fast_starts_from_the_cached_state() {
    let r = run(fs_cfg(), ConnectionMode::Fresh);
    assert!(r.exchanges.iter().all(|e| e.complete));
    // The second and third connections find the state the one before left.
    assert_eq!(r.counters.fast_start, 2);
    assert!(r.counters.fast_start_segs > 0);
    let plain = run(Profile::Linux26.config(), ConnectionMode::Fresh);
    assert_eq!(plain.counters.fast_start, 0);
    // Each later response finishes sooner than with a slow start.
    for (a, b) in r.exchanges.iter().zip(&plain.exchanges).skip(1) {
        assert!(
            a.server_ns.unwrap() < b.server_ns.unwrap(),
            "{a:?} vs {b:?}"
        );
    }
}

#[test]
fn a_persistent_connection_fast_starts_after_each_idle_period() {
    let r = run(fs_cfg(), ConnectionMode::Persistent);
    assert!(r.exchanges.iter().all(|e| e.complete));
    assert_eq!(r.counters.fast_start, 2);
}

#[test]
fn accelerated_open_sends_no_handshake() {
    let mut cfg = Profile::Linux26.config();
    cfg.accelerated_open = true;
    let r = run(cfg, ConnectionMode::Fresh);
    assert!(r.exchanges.iter().all(|e| e.complete));
    let with_handshake = run(Profile::Linux26.config(), ConnectionMode::Fresh);
    // Three SYNs and three SYN-ACKs are not sent (the handshake's last ACK is the
    // request's segment either way).
    assert_eq!(with_handshake.packets - r.packets, 6);
    assert_eq!(r.counters.syn_retrans, 0);
}
