//! Packet scripts: F-RTO (RFC 5682 §2.1, as Linux 3.10 implements it in
//! `tcp_process_loss`): after a timeout only the first segment is retransmitted; if
//! the next two ACKs both advance snd.una while new data is sent in between, the
//! timeout was spurious and its reduction is undone; a duplicate ACK instead means
//! conventional RTO recovery with slow-start retransmissions.

use crate::script;

use gentle_tcp::{CaState, Config, Profile};
use script::*;

const MSS: u32 = 1460; // no timestamp option

/// 10 of 20 queued segments sent at 100 ms; no ACK until the RTO at 400 ms
/// retransmits segment 1.
fn after_timeout(cfg: Config) -> Script {
    let peer = PeerOpts {
        timestamps: false,
        ..PeerOpts::default()
    };
    let mut s = Script::server(cfg, peer);
    s.write((20 * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.at(400.0);
    s.expect(tx(1, MSS).at(400.0));
    s.expect_quiet();
    assert_eq!(s.dut.ca_state(), CaState::Loss);
    assert_eq!(s.dut.cwnd(), 1);
    s
}

#[test]
fn two_advancing_acks_declare_the_timeout_spurious() {
    let mut s = after_timeout(Profile::Rfc.config());
    // ACKs of the original transmissions, delayed by the path, arrive.
    s.at(450.0);
    s.send(ack(seg(MSS, 3)));
    // Step 2b: two new segments instead of retransmissions.
    s.expect(tx(seg(MSS, 11), MSS).at(450.0));
    s.expect(tx(seg(MSS, 12), MSS).at(450.0));
    s.expect_quiet();
    s.at(460.0);
    s.send(ack(seg(MSS, 5)));
    // Step 3b: spurious; the reduction is undone and no segment is retransmitted.
    assert_eq!(s.dut.ca_state(), CaState::Open);
    let c = *s.dut.counters();
    assert_eq!(c.spurious_rtos, 1);
    assert_eq!(c.slow_start_retrans, 0);
    assert_eq!(s.dut.cwnd(), 10);
    while s.pending() > 0 {
        let seg_out = s.expect(Exp::default());
        assert!(
            seg_out.seq.wrapping_sub(s.dut.iss()) >= seg(MSS, 13),
            "only new data after a spurious timeout"
        );
    }
}

#[test]
fn a_duplicate_ack_after_the_timeout_means_conventional_recovery() {
    let mut s = after_timeout(Profile::Plain.config());
    s.at(450.0);
    s.send(ack(1));
    s.expect_quiet();
    // The retransmission of 1 is acknowledged: slow start retransmits 2 and 3.
    s.at(500.0);
    s.send(ack(seg(MSS, 2)));
    s.expect(tx(seg(MSS, 2), MSS).at(500.0));
    s.expect(tx(seg(MSS, 3), MSS).at(500.0));
    s.expect_quiet();
    let c = *s.dut.counters();
    assert_eq!(c.spurious_rtos, 0);
    assert_eq!(c.slow_start_retrans, 2);
}

#[test]
fn a_duplicate_ack_after_the_new_data_means_conventional_recovery() {
    let mut s = after_timeout(Profile::Rfc.config());
    s.at(450.0);
    s.send(ack(seg(MSS, 2)));
    s.expect(tx(seg(MSS, 11), MSS));
    s.expect(tx(seg(MSS, 12), MSS));
    // Step 3a: a duplicate ACK (SACKing the new segment 11).
    s.at(460.0);
    s.send(ack(seg(MSS, 2)).sack(&[(seg(MSS, 11), seg(MSS, 12))]));
    assert_eq!(s.dut.counters().spurious_rtos, 0);
    assert_eq!(s.dut.ca_state(), CaState::Loss);
    assert!(s.dut.cwnd() <= 3);
    // What goes out now are retransmissions of the unacknowledged segments.
    let out = s.expect(Exp::default());
    assert_eq!(out.seq.wrapping_sub(s.dut.iss()), seg(MSS, 2));
    assert!(s.dut.counters().slow_start_retrans >= 1);
}

#[test]
fn frto_can_be_switched_off() {
    let mut cfg = Profile::Rfc.config();
    cfg.frto = false;
    let mut s = after_timeout(cfg);
    s.at(450.0);
    s.send(ack(seg(MSS, 3)));
    // Without F-RTO the whole flight was marked lost: retransmissions follow.
    s.expect(tx(seg(MSS, 3), MSS).at(450.0));
    s.expect(tx(seg(MSS, 4), MSS).at(450.0));
    assert_eq!(s.dut.counters().slow_start_retrans, 2);
}
