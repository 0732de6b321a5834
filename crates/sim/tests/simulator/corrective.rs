//! Corrective across the simulated network (`gentle-aggression-sigcomm13.txt` §5,
//! §7): losses rebuilt without retransmission, a sequence-translating middlebox
//! that must be invisible, an option-stripping middlebox that forces the fallback,
//! and interoperation with a peer that does not speak Corrective.

use crate::common;
use std::sync::Arc;

use common::*;
use gentle_sim::link::ChannelSpec;
use gentle_sim::loss::LossModel;
use gentle_sim::record::TrialResult;
use gentle_sim::workload::ConnectionMode;
use gentle_tcp::{Config, Profile};

const TRIALS: u64 = 300;

fn cfg(corrective: bool) -> Config {
    let mut c = Profile::Linux26.config();
    c.corrective = corrective;
    c
}

fn lossy() -> ChannelSpec {
    chan(
        Some(100_000_000),
        100,
        LossModel::Correlated {
            p: 0.02,
            p_after_loss: 0.5,
            burst_gap_ns: 500_000,
        },
    )
}

/// Runs `TRIALS` trials of three 40 B / 20 kB exchanges on one connection.
fn runs(down: ChannelSpec, up: ChannelSpec, server: Config, client: Config) -> Vec<TrialResult> {
    let mut s = two_hosts(
        down,
        up,
        exchange(40, 20_000, 3, ConnectionMode::Persistent),
        server,
    );
    Arc::make_mut(&mut s.workloads[0]).client_config = Some(client);
    (0..TRIALS).map(|seed| run(&s, seed)).collect()
}

fn client_times(rs: &[TrialResult]) -> Vec<Option<u64>> {
    rs.iter()
        .flat_map(|r| r.exchanges.iter().map(|e| e.client_ns))
        .collect()
}

fn assert_all_intact(rs: &[TrialResult]) {
    for (i, r) in rs.iter().enumerate() {
        assert_eq!(r.corrupt_bytes, 0, "trial {i}: corrupt bytes");
        assert!(
            r.exchanges.iter().all(|e| e.complete),
            "trial {i}: unfinished"
        );
        assert!(!r.timed_out, "trial {i}");
    }
}

fn sum(rs: &[TrialResult], f: impl Fn(&TrialResult) -> u64) -> u64 {
    rs.iter().map(f).sum()
}

#[test]
fn losses_are_rebuilt_and_timeouts_avoided() {
    let plain = runs(lossy(), lossy(), cfg(false), cfg(false));
    let corr = runs(lossy(), lossy(), cfg(true), cfg(true));
    assert_all_intact(&corr);
    let rebuilt = sum(&corr, |r| r.counters.corrective_recovered);
    assert!(rebuilt > 50, "{rebuilt} rebuilt");
    assert!(sum(&corr, |r| r.counters.timeouts) < sum(&plain, |r| r.counters.timeouts));
    let mean = |v: Vec<Option<u64>>| {
        let xs: Vec<u64> = v.into_iter().flatten().collect();
        xs.iter().sum::<u64>() as f64 / xs.len() as f64
    };
    assert!(mean(client_times(&corr)) < mean(client_times(&plain)));
}

#[test]
fn a_sequence_translating_middlebox_changes_nothing() {
    // Only relative numbers travel in the option, so a middlebox that shifts the
    // server's sequence numbers (and the client's ACKs and SACKs back) must leave
    // every result exactly as it was.
    let straight = runs(lossy(), lossy(), cfg(true), cfg(true));
    let (mut down, mut up) = (lossy(), lossy());
    down.seq_shift = 0x8000_1234;
    up.ack_shift = 0x8000_1234;
    let translated = runs(down, up, cfg(true), cfg(true));
    assert_all_intact(&translated);
    assert!(client_times(&straight) == client_times(&translated));
    for (a, b) in straight.iter().zip(&translated) {
        assert_eq!(a.counters, b.counters);
    }
    assert!(sum(&translated, |r| r.counters.corrective_recovered) > 0);
    assert_eq!(sum(&translated, |r| r.counters.corrective_fallback), 0);
}

#[test]
fn an_option_stripping_middlebox_forces_a_clean_fallback() {
    for p in [0.02, 0.3, 1.0] {
        let (mut down, mut up) = (lossy(), lossy());
        down.strip_option = p;
        up.strip_option = p / 2.0;
        let rs = runs(down, up, cfg(true), cfg(true));
        assert_all_intact(&rs);
        let fallbacks = sum(&rs, |r| r.counters.corrective_fallback);
        let stripped = sum(&rs, |r| r.links.options_stripped);
        assert!(
            stripped > 0 && fallbacks > 0,
            "p={p}: {stripped} stripped, {fallbacks} fallbacks"
        );
    }
}

/// The counters of events, without those that sum times (RTT samples, busy and
/// recovery time), which the offer's few microseconds on the wire move.
fn events(c: &gentle_tcp::Counters) -> gentle_tcp::Counters {
    gentle_tcp::Counters {
        rtt_sample_us: 0,
        busy_time_us: 0,
        recovery_time_us: 0,
        ..*c
    }
}

#[test]
fn a_peer_without_corrective_gets_plain_tcp() {
    // Only one side offers Corrective: nothing is negotiated and no Corrective packet
    // is sent. The connection behaves as plain TCP event for event; only the offer's
    // 8 bytes on the SYN shift times by the microseconds they take on the wire.
    let plain = runs(lossy(), lossy(), cfg(false), cfg(false));
    for (server, client) in [(true, false), (false, true)] {
        let half = runs(lossy(), lossy(), cfg(server), cfg(client));
        assert_all_intact(&half);
        assert_eq!(sum(&half, |r| r.counters.corrective_sent), 0);
        for (a, b) in plain.iter().zip(&half) {
            assert_eq!(
                events(&a.counters),
                events(&b.counters),
                "trial {}",
                a.trial
            );
            assert_eq!(a.exchanges.len(), b.exchanges.len());
            for (x, y) in a.exchanges.iter().zip(&b.exchanges) {
                let (x, y) = (x.client_ns.unwrap(), y.client_ns.unwrap());
                assert!(x.abs_diff(y) < 50_000, "trial {}: {x} vs {y} ns", a.trial);
            }
        }
    }
}
