//! Packet scripts: forward acknowledgement as Linux 2.6/3.x used it
//! (`prr-imc11.txt` §3.2; Mathis & Mahdavi 1996): recovery starts as soon as the
//! forward-most SACKed segment is more than `reordering` (3) segments beyond
//! snd.una, and every hole more than `reordering` segments below it is marked lost.
//! Detected reordering turns FACK off.

use crate::script;

use gentle_tcp::{CaState, Config, Profile, RecoveryAlgorithm};
use script::*;

const MSS: u32 = 1448;

fn sender(cfg: Config) -> Script {
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((20 * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.expect_quiet();
    s
}

#[test]
fn one_sack_far_enough_ahead_starts_recovery() {
    // Segments 1–4 lost; the first ACK SACKs segment 5: fackets_out = 5 > 3.
    // RFC 6675 recovery (cwnd = ssthresh) keeps the arithmetic of what is sent simple.
    let mut cfg = Profile::Linux26.config();
    cfg.recovery = RecoveryAlgorithm::Rfc6675;
    let mut s = sender(cfg);
    assert!(s.dut.fack_enabled());
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 5), seg(MSS, 6))]));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    // FACK marks fackets_out − reordering = 2 segments lost; CUBIC ssthresh 7.
    assert_eq!(s.dut.ssthresh(), 7);
    s.expect(tx(1, MSS).at(200.0));
    s.expect_quiet();
    // The next SACK (6): fackets 6 → segments 1–3 lost; pipe 10 − 2 − 3 + 1 = 6 < 7.
    s.send(ack(1).sack(&[(seg(MSS, 5), seg(MSS, 7))]));
    s.expect(tx(seg(MSS, 2), MSS));
    s.expect_quiet();
    // 7: fackets 7 → 1–4 lost; pipe 10 − 3 − 4 + 2 = 5: two retransmissions.
    s.send(ack(1).sack(&[(seg(MSS, 5), seg(MSS, 8))]));
    s.expect(tx(seg(MSS, 3), MSS));
    s.expect(tx(seg(MSS, 4), MSS));
    s.expect_quiet();
    assert_eq!(s.dut.counters().fast_retrans, 4);
}

#[test]
fn without_fack_the_same_sack_is_only_disorder() {
    let mut s = sender(Profile::Rfc.config());
    assert!(!s.dut.fack_enabled());
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 5), seg(MSS, 6))]));
    assert_eq!(s.dut.ca_state(), CaState::Disorder);
    // Limited transmit instead of a retransmission.
    s.expect(tx(seg(MSS, 11), MSS));
    s.expect_quiet();
}

#[test]
fn reordering_detected_by_sack_turns_fack_off() {
    let mut s = sender(Profile::Linux26.config());
    s.at(200.0);
    // Segment 6 overtakes 1–5: FACK sees fackets_out 6 and starts recovery,
    // marking 1–3 lost and retransmitting 1.
    s.send(ack(1).sack(&[(seg(MSS, 6), seg(MSS, 7))]));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.expect(tx(1, MSS));
    s.expect_quiet();
    // Segments 2 and 3 arrive: SACKed although never retransmitted, 5 segments
    // below the forward-most SACK — reordering of degree 6 − 1 = 5 (Linux
    // `tcp_sacktag_one`, `tcp_update_reordering`).
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4)), (seg(MSS, 6), seg(MSS, 7))]));
    assert_eq!(s.dut.reordering(), 5);
    assert!(!s.dut.fack_enabled(), "reordering turns FACK off");
    assert_eq!(s.dut.counters().sack_reorder, 1);
}

#[test]
fn reordering_below_the_threshold_keeps_fack() {
    let mut s = sender(Profile::Linux26.config());
    s.at(200.0);
    // Segment 3 overtakes 2 (and 1 is lost): degree 3 − 1 = 2 ≤ 3.
    s.send(ack(1).sack(&[(seg(MSS, 3), seg(MSS, 4))]));
    s.skip_all();
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    assert!(s.dut.fack_enabled());
    assert_eq!(s.dut.reordering(), 3);
}

#[test]
fn a_head_outstanding_longer_than_the_rto_starts_recovery() {
    // Linux `tcp_time_to_recover` "Trick #3" (`tcp_head_timedout`): segments 1–5
    // are acknowledged at 200 ms (restarting the RTO to 500 ms); segment 6, sent at
    // 100 ms, is lost. A SACK for segment 7 at 450 ms is not enough for FACK's
    // threshold, but segment 6 has been out for 350 ms > RTO 300 ms.
    let mut cfg = Profile::Linux26.config();
    cfg.recovery = RecoveryAlgorithm::Rfc6675;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((10 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(seg(MSS, 6)));
    s.skip_all();
    s.at(450.0);
    s.send(ack(seg(MSS, 6)).sack(&[(seg(MSS, 7), seg(MSS, 8))]));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().head_timeout_recovery, 1);
    s.expect(tx(seg(MSS, 6), MSS).at(450.0));
    assert_eq!(s.dut.counters().timeouts, 0);

    // Without FACK the same SACK only means Disorder.
    let mut cfg = Profile::Rfc.config();
    cfg.limited_transmit = false;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((10 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(seg(MSS, 6)));
    s.at(450.0);
    s.send(ack(seg(MSS, 6)).sack(&[(seg(MSS, 7), seg(MSS, 8))]));
    assert_eq!(s.dut.ca_state(), CaState::Disorder);
}

#[test]
fn holes_not_yet_marked_lost_are_forward_retransmitted_when_nothing_new_waits() {
    // Five segments, nothing more to send; 1–3 lost, 4 and 5 SACKed. FACK marks
    // fackets − reordering = 2 lost (1 and 2); segment 3 is a hole below the highest
    // SACK that Linux `tcp_xmit_retransmit_queue` resends anyway (TCPForwardRetrans).
    let mut cfg = Profile::Linux26.config();
    cfg.recovery = RecoveryAlgorithm::Rfc6675;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((5 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 6))]));
    s.expect(tx(1, MSS).at(200.0));
    s.expect(tx(seg(MSS, 2), MSS).at(200.0));
    s.expect(tx(seg(MSS, 3), MSS).at(200.0));
    s.expect_quiet();
    assert_eq!(s.dut.counters().forward_retrans, 1);

    // With new data waiting, the window goes to new data instead.
    let mut cfg = Profile::Linux26.config();
    cfg.recovery = RecoveryAlgorithm::Rfc6675;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((15 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 6))]));
    let mut sent = Vec::new();
    while s.pending() > 0 {
        let o = s.expect(Exp::default());
        sent.push(o.seq.wrapping_sub(s.dut.iss()));
    }
    assert!(!sent.contains(&seg(MSS, 3)), "{sent:?}");
    assert_eq!(s.dut.counters().forward_retrans, 0);
}
