//! Packet scripts: Explicit Congestion Notification (RFC 3168 §6.1) — negotiation in
//! the handshake, ECT(0) on new data only, ECE echoed from a CE mark until CWR, and
//! the sender's reduction through CWR at most once per window of data.

use crate::script;

use gentle_tcp::{CaState, Config, Ecn, Flags, Profile};
use script::*;

const MSS: u32 = 1448;

fn ecn_cfg() -> Config {
    let mut cfg = Profile::Plain.config();
    cfg.ecn = true;
    cfg
}

fn ecn_peer() -> PeerOpts {
    PeerOpts {
        ecn: true,
        ..PeerOpts::default()
    }
}

#[test]
fn server_agrees_to_an_ecn_setup_syn() {
    // `Script::server` checks the SYN-ACK carries ECE alone (§6.1.1).
    let s = Script::server(ecn_cfg(), ecn_peer());
    assert!(s.dut.ecn_enabled());
}

#[test]
fn no_ecn_unless_both_ends_ask() {
    // The peer does not ask: a plain SYN-ACK, and no ECN.
    let s = Script::server(ecn_cfg(), PeerOpts::default());
    assert!(!s.dut.ecn_enabled());
    // The peer asks, we do not: a plain SYN-ACK.
    let s = Script::server(Profile::Plain.config(), ecn_peer());
    assert!(!s.dut.ecn_enabled());
}

#[test]
fn client_sends_an_ecn_setup_syn_and_accepts_an_ecn_setup_syn_ack() {
    // `Script::client` checks the SYN carries ECE and CWR.
    let s = Script::client(ecn_cfg(), ecn_peer());
    assert!(s.dut.ecn_enabled());
    let s = Script::client(ecn_cfg(), PeerOpts::default());
    assert!(!s.dut.ecn_enabled());
}

#[test]
fn a_syn_ack_with_ece_and_cwr_is_not_an_ecn_setup() {
    let mut s = Script::connecting(ecn_cfg(), PeerOpts::default());
    s.expect(tx(0, 0).flags(Flags::SYN | Flags::ECE | Flags::CWR));
    s.at(100.0);
    s.send(
        ack(1)
            .seq(0)
            .flags(Flags::SYN | Flags::ACK | Flags::ECE | Flags::CWR),
    );
    assert!(s.dut.is_established());
    assert!(!s.dut.ecn_enabled());
}

#[test]
fn new_data_is_ect_and_retransmissions_and_acks_are_not() {
    let mut s = Script::server(ecn_cfg(), ecn_peer());
    s.write((4 * MSS) as usize);
    for k in 1..=4 {
        let d = s.expect(tx(seg(MSS, k), MSS).at(100.0));
        assert_eq!(d.ecn, Ecn::Ect0, "new data segment {k}");
    }
    // Segment 1 is lost; the retransmission timer resends it Not-ECT (§6.1.5).
    s.at(100.0 + s.rto_ms());
    let r = s.expect(tx(1, MSS));
    assert_eq!(r.ecn, Ecn::NotEct);
    // A pure ACK of the peer's data is Not-ECT too (§6.1.4: only data is ECT).
    s.send(data(1, 100, seg(MSS, 5)));
    s.at(s.now() + 300.0);
    let a = s.expect(pure_ack(101));
    assert_eq!(a.ecn, Ecn::NotEct);
}

#[test]
fn a_ce_mark_is_echoed_at_once_and_until_cwr() {
    let mut s = Script::server(ecn_cfg(), ecn_peer());
    s.at(150.0);
    // In-order data with CE: acknowledged at once (no delayed ACK), with ECE.
    s.send(data(1, 500, 1).ecn(Ecn::Ce));
    s.expect(pure_ack(501).flags(Flags::ACK | Flags::ECE).at(150.0));
    assert_eq!(s.dut.counters().ecn_ce_received, 1);
    // Later data without CE: ECE goes on, on every ACK.
    s.at(160.0);
    s.send(data(501, 500, 1));
    s.send(data(1001, 500, 1));
    s.at(400.0);
    assert!(s.pending() > 0);
    while s.pending() > 0 {
        let a = s.expect(Exp::default().flags(Flags::ACK | Flags::ECE));
        assert_eq!(a.payload.len(), 0);
    }
    // The peer's CWR ends the echo (§6.1.3).
    s.send(data(1501, 500, 1).flags(Flags::ACK | Flags::CWR));
    s.send(data(2001, 500, 1));
    s.at(700.0);
    assert!(s.pending() > 0);
    while s.pending() > 0 {
        s.expect(Exp::default().flags(Flags::ACK));
    }
}

#[test]
fn ece_reduces_cwnd_once_per_window_and_cwr_announces_it() {
    let mut cfg = ecn_cfg();
    cfg.cc = gentle_tcp::CcAlgorithm::Reno;
    cfg.recovery = gentle_tcp::RecoveryAlgorithm::Prr; // Linux 3.2+ drains CWR by PRR
    let mut s = Script::server(cfg, ecn_peer());
    s.write((40 * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    // One ACK with ECE: CWR, ssthresh halved (Reno), cwnd drained by the recovery
    // algorithm from there.
    s.at(200.0);
    s.send(ack(seg(MSS, 2)).flags(Flags::ACK | Flags::ECE));
    assert_eq!(s.dut.ca_state(), CaState::Cwr);
    assert_eq!(s.dut.ssthresh(), 5);
    assert_eq!(s.dut.counters().ecn_reductions, 1);
    // More ECE in the same window: no further reduction.
    for k in 3..=6 {
        s.send(ack(seg(MSS, k)).flags(Flags::ACK | Flags::ECE));
    }
    assert_eq!(s.dut.counters().ecn_reductions, 1);
    assert_eq!(s.dut.ssthresh(), 5);
    // The first new data after the reduction carries CWR; later data does not.
    let mut sent = Vec::new();
    while s.pending() > 0 {
        sent.push(s.expect(script::Exp {
            len: Some(MSS),
            ..Default::default()
        }));
    }
    assert!(!sent.is_empty(), "PRR lets new data out during CWR");
    assert!(sent[0].flags.contains(Flags::CWR));
    assert!(sent[1..].iter().all(|d| !d.flags.contains(Flags::CWR)));
    assert_eq!(s.dut.counters().ecn_cwr_sent, 1);
    // The window ends: the first flight and the CWR segment are acknowledged.
    s.at(300.0);
    s.send(ack(seg(MSS, 12)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.cwnd(), 5);
    // A new ECE, a new window: a second reduction.
    s.skip_all();
    s.at(400.0);
    let una = seg(MSS, 13);
    s.send(ack(una).flags(Flags::ACK | Flags::ECE));
    assert_eq!(s.dut.counters().ecn_reductions, 2);
    assert_eq!(s.dut.ca_state(), CaState::Cwr);
}

#[test]
fn ece_is_ignored_without_ecn() {
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.write((20 * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.at(200.0);
    s.send(ack(seg(MSS, 2)).flags(Flags::ACK | Flags::ECE));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.counters().ecn_reductions, 0);
}

#[test]
fn the_ack_of_exactly_the_recovery_point_does_not_reduce_again() {
    // The receiver echoes ECE on every ACK until our CWR reaches it, so the ACK of
    // the last segment sent before the reduction may still carry ECE: Linux holds
    // CWR until an ACK above high_seq, and the reduction stays one.
    let mut cfg = ecn_cfg();
    cfg.cc = gentle_tcp::CcAlgorithm::Reno;
    cfg.recovery = gentle_tcp::RecoveryAlgorithm::Prr;
    let mut s = Script::server(cfg, ecn_peer());
    s.write((40 * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.at(200.0);
    for k in 2..=11 {
        s.send(ack(seg(MSS, k)).flags(Flags::ACK | Flags::ECE));
    }
    assert_eq!(s.dut.counters().ecn_reductions, 1);
    assert_eq!(s.dut.ca_state(), CaState::Cwr);
    // The ACK of the first segment sent after it (with CWR) ends CWR.
    s.send(ack(seg(MSS, 12)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.counters().ecn_reductions, 1);
}
