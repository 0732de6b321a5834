//! Packet scripts: the fast-recovery algorithms on the example of `prr-imc11.txt`
//! §4.1 Figure 2 — Reno, FACK, 20 segments in flight of which the first four are
//! lost, 1000-byte segments — and what each sends on every returning ACK.
//!
//! - PRR: the first retransmission at once, then one on alternate ACKs; exit with
//!   cwnd = ssthresh = 10.
//! - RFC 3517: cwnd = ssthresh = 10 at once, so after the first retransmission it is
//!   silent until pipe falls below 10 (the "half RTT silence").
//! - Linux rate halving: cwnd follows pipe + 1 and recovery ends with cwnd near 1.

use crate::script;

use gentle_tcp::{CaState, CcAlgorithm, Profile, RecoveryAlgorithm};
use script::*;

const MSS: u32 = 1000;

/// 20 segments in flight at 100 ms; segments 1–4 lost. Returns the script before
/// any ACK arrives.
fn figure2(recovery: RecoveryAlgorithm) -> Script {
    let mut cfg = Profile::Linux26.config();
    cfg.cc = CcAlgorithm::Reno;
    cfg.recovery = recovery;
    cfg.initial_window = 20;
    let peer = PeerOpts {
        mss: Some(1012), // 1000 bytes of payload beside the timestamp option
        ..PeerOpts::default()
    };
    let mut s = Script::server(cfg, peer);
    s.write((20 * MSS) as usize);
    s.expect_burst(1, 20, MSS, 100.0);
    s.expect_quiet();
    s
}

/// The k-th returning ACK (k = 1..=16): segments 5..=4+k have arrived.
fn sack_k(s: &mut Script, k: u32) {
    s.at(200.0 + k as f64);
    s.send(ack(1).sack(&[(seg(MSS, 5), seg(MSS, 5 + k))]));
}

/// Which of the 16 SACK-bearing ACKs released a retransmission, and of what.
fn retransmissions_per_ack(s: &mut Script) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for k in 1..=16 {
        sack_k(s, k);
        while s.pending() > 0 {
            let out = s.expect(Exp::default());
            let rel = out.seq.wrapping_sub(s.dut.iss());
            v.push((k, (rel - 1) / MSS + 1));
        }
    }
    v
}

/// The retransmissions arrive: cumulative ACKs, then everything.
fn finish(s: &mut Script) {
    for (i, k) in [2, 3, 4].into_iter().enumerate() {
        s.at(300.0 + 2.0 * i as f64);
        s.send(ack(seg(MSS, k)).sack(&[(seg(MSS, 5), seg(MSS, 21))]));
    }
    s.at(310.0);
    s.send(ack(seg(MSS, 21)));
    s.skip_all();
    assert_eq!(s.dut.ca_state(), CaState::Open);
}

#[test]
fn prr_retransmits_on_alternate_acks_and_exits_at_ssthresh() {
    let mut s = figure2(RecoveryAlgorithm::Prr);
    let r = retransmissions_per_ack(&mut s);
    assert_eq!(r, vec![(1, 1), (3, 2), (5, 3), (7, 4)]);
    assert_eq!(s.dut.ssthresh(), 10);
    finish(&mut s);
    assert_eq!(s.dut.cwnd(), 10);
}

#[test]
fn rfc3517_is_silent_for_half_an_rtt() {
    let mut s = figure2(RecoveryAlgorithm::Rfc3517);
    let r = retransmissions_per_ack(&mut s);
    // pipe starts at 18 and falls by about one per ACK: below cwnd = 10 at ACK 8.
    assert_eq!(r, vec![(1, 1), (8, 2), (9, 3), (10, 4)]);
    assert_eq!(s.dut.cwnd(), 10);
    finish(&mut s);
    assert_eq!(s.dut.cwnd(), 10);
}

#[test]
fn rate_halving_ends_recovery_with_cwnd_near_pipe() {
    let mut s = figure2(RecoveryAlgorithm::RateHalving);
    let r = retransmissions_per_ack(&mut s);
    // Every hole is retransmitted within the first RTT of ACKs.
    assert_eq!(r.iter().map(|x| x.1).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    assert!(r.iter().all(|x| x.0 <= 8), "{r:?}");
    finish(&mut s);
    assert!(
        s.dut.cwnd() <= 3,
        "cwnd {} after recovery with nothing left to send",
        s.dut.cwnd()
    );
}

#[test]
fn prr_crb_follows_the_same_proportional_schedule() {
    let mut s = figure2(RecoveryAlgorithm::PrrCrb);
    let r = retransmissions_per_ack(&mut s);
    assert_eq!(r, vec![(1, 1), (3, 2), (5, 3), (7, 4)]);
    finish(&mut s);
    assert_eq!(s.dut.cwnd(), 10);
}

#[test]
fn prr_rfc9937_scales_by_pipe_at_entry() {
    // RFC 9937: RecoverFS = pipe at the start (19 here, not FlightSize 20), so
    // sndcnt = CEIL(k · 10 / 19) − prr_out: sends at ACKs 1, 2, 4, 6.
    let mut s = figure2(RecoveryAlgorithm::PrrRfc9937);
    let r = retransmissions_per_ack(&mut s);
    assert_eq!(r, vec![(1, 1), (2, 2), (4, 3), (6, 4)]);
    finish(&mut s);
    assert_eq!(s.dut.cwnd(), 10);
}

#[test]
fn prr_slow_start_part_after_heavy_loss() {
    // Figure 3's situation: once pipe is below ssthresh, PRR-SSRB sends up to
    // DeliveredData + 1 per ACK. 20 in flight, 1–14 lost: SACKs for 15.. arrive.
    let mut s = figure2(RecoveryAlgorithm::Prr);
    s.write((10 * MSS) as usize); // new data to send
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 15), seg(MSS, 16))]));
    // fackets 15: 12 holes lost; pipe = 20 − 1 − 12 = 7 < ssthresh 10.
    // SSRB: MIN(10 − 7, MAX(1 − 0, 1) + 1) = 2 segments.
    s.expect(tx(1, MSS));
    s.expect(tx(seg(MSS, 2), MSS));
    s.expect_quiet();
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(MSS, 15), seg(MSS, 17))]));
    // pipe = 20 − 2 − 13 + 2 = 7: again 2.
    assert_eq!(s.pending(), 2);
}

/// The counters of `prr-imc11.txt` §5.4 and Table 10 on Figure 2's recovery:
/// time in recovery, bytes sent in it, and whether slow start follows its end.
fn figure2_counters(recovery: RecoveryAlgorithm) -> gentle_tcp::Counters {
    let mut s = figure2(recovery);
    retransmissions_per_ack(&mut s);
    finish(&mut s);
    *s.dut.counters()
}

#[test]
fn recovery_time_bytes_and_slow_start_after_it_are_counted() {
    for alg in [
        RecoveryAlgorithm::Prr,
        RecoveryAlgorithm::Rfc3517,
        RecoveryAlgorithm::RateHalving,
    ] {
        let c = figure2_counters(alg);
        assert_eq!(c.recovery_episodes, 1, "{alg:?}");
        // Recovery began on the first SACK (201 ms) and ended when the ACK of
        // everything arrived (310 ms).
        assert_eq!(c.recovery_time_us, 109_000, "{alg:?}");
        // The four retransmissions went in Recovery, and nothing else was sent.
        assert_eq!(c.bytes_sent_recovery, 4 * u64::from(MSS), "{alg:?}");
        assert_eq!(c.bytes_sent, 24 * u64::from(MSS), "{alg:?}");
        // Busy from the write and its burst (100 ms) to the ACK of everything
        // (310 ms).
        assert_eq!(c.busy_time_us, 210_000, "{alg:?}");
        // Linux 2.6 leaves cwnd near pipe, below ssthresh: slow start follows.
        // PRR and RFC 3517 end at ssthresh.
        // RTT samples: the handshake's (100 ms) and the cumulative ACKs', which
        // the script sends 93–103 ms after the data they acknowledge.
        assert_eq!(c.rtt_samples, 5, "{alg:?}");
        let mean_rtt_us = c.rtt_sample_us / c.rtt_samples;
        assert!((93_000..=103_000).contains(&mean_rtt_us), "{alg:?}: {c:?}");
        let slow_start = u64::from(alg == RecoveryAlgorithm::RateHalving);
        assert_eq!(c.recovery_exit_slow_start, slow_start, "{alg:?}");
    }
}
