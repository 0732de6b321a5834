//! Packet scripts: fast retransmit and fast recovery (RFC 5681 §3.2 with NewReno,
//! RFC 6582, when SACK is off; RFC 6675 §5 with SACK): the retransmission at the third
//! duplicate ACK and not before, ssthresh on entry, partial ACKs, and the exit once
//! the recovery point is acknowledged.

use crate::script;

use gentle_tcp::{CaState, Config, Flags, Profile};
use script::*;

const MSS: u32 = 1448;

/// Established sender; 10 full segments sent at 100 ms (IW 10), more data queued.
fn sender(cfg: Config, queued: u32) -> Script {
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((queued * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.expect_quiet();
    s
}

#[test]
fn third_duplicate_ack_retransmits_without_sack() {
    let mut cfg = Profile::Plain.config();
    cfg.limited_transmit = false;
    let mut s = sender(cfg, 10);
    s.at(200.0);
    s.send(ack(1));
    s.send(ack(1));
    s.expect_quiet();
    assert_eq!(s.dut.ca_state(), CaState::Disorder);
    s.at(201.0);
    s.send(ack(1));
    s.expect(tx(1, MSS).at(201.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    let c = s.dut.counters();
    assert_eq!((c.fast_retrans, c.reno_recovery), (1, 1));
    // Reno halves: ssthresh = 10 / 2.
    assert_eq!(s.dut.ssthresh(), 5);
    // Remaining duplicates (segments 5..10 arrived) release new data once pipe < cwnd,
    // but there is none; the ACK of everything ends recovery with cwnd = ssthresh.
    for _ in 0..6 {
        s.send(ack(1));
    }
    s.expect_quiet();
    s.at(300.0);
    s.send(ack(seg(MSS, 11)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.cwnd(), 5);
    assert!(s.dut.all_acked());
}

#[test]
fn newreno_partial_ack_retransmits_the_next_hole_at_once() {
    // Segments 1 and 4 are lost.
    let mut cfg = Profile::Plain.config();
    cfg.limited_transmit = false;
    let mut s = sender(cfg, 10);
    s.at(200.0);
    for _ in 0..3 {
        s.send(ack(1));
    }
    s.expect(tx(1, MSS).at(200.0));
    for _ in 0..5 {
        s.send(ack(1));
    }
    s.skip_all();
    // The retransmission of 1 arrives: the ACK stops at the hole at 4.
    s.at(300.0);
    s.send(ack(seg(MSS, 4)));
    s.expect(tx(seg(MSS, 4), MSS).at(300.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.at(400.0);
    s.send(ack(seg(MSS, 11)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.counters().fast_retrans, 2);
    assert_eq!(s.dut.counters().timeouts, 0);
}

#[test]
fn sack_recovery_starts_when_three_segments_are_sacked_above_a_hole() {
    // RFC 6675 IsLost: DupThresh segments SACKed above segment 1.
    let mut cfg = Profile::Rfc.config();
    cfg.limited_transmit = false;
    let mut s = sender(cfg, 10);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect_quiet();
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 5))]));
    s.expect(tx(1, MSS).at(201.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().sack_recovery, 1);
    // RFC 6675 §5 step 4.2: cwnd = ssthresh = FlightSize / 2 (Reno).
    assert_eq!(s.dut.ssthresh(), 5);
}

#[test]
fn sack_recovery_retransmits_every_hole_and_sends_new_data_as_pipe_allows() {
    // Segments 1 and 3 lost, 20 segments queued.
    let mut cfg = Profile::Rfc.config();
    cfg.limited_transmit = false;
    let mut s = sender(cfg, 20);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 5)), (seg(MSS, 2), seg(MSS, 3))]));
    s.expect_quiet();
    // Segments 2, 4, 5 SACKed: three above segment 1, which is lost (IsLost).
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 6)), (seg(MSS, 2), seg(MSS, 3))]));
    s.expect(tx(1, MSS));
    // pipe = 10 − 3 SACKed − 1 lost + 1 retransmitted = 7 ≥ cwnd 5: nothing more.
    s.expect_quiet();
    // 6 SACKed: three above segment 3, lost too; pipe = 10 − 4 − 2 + 1 = 5.
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 7)), (seg(MSS, 2), seg(MSS, 3))]));
    s.expect_quiet();
    // 7 SACKed: pipe 4 < 5 lets the retransmission of 3 out.
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 8)), (seg(MSS, 2), seg(MSS, 3))]));
    s.expect(tx(seg(MSS, 3), MSS));
    s.expect_quiet();
    // 8 SACKed: pipe 4, one new segment.
    s.send(ack(1).sack(&[(seg(MSS, 4), seg(MSS, 9)), (seg(MSS, 2), seg(MSS, 3))]));
    s.expect(tx(seg(MSS, 11), MSS));
    s.expect_quiet();
    assert_eq!(s.dut.counters().fast_retrans, 2);
}

#[test]
fn recovery_ends_only_when_the_recovery_point_is_acknowledged() {
    let mut cfg = Profile::Rfc.config();
    cfg.limited_transmit = false;
    let mut s = sender(cfg, 20);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 5))]));
    s.expect(tx(1, MSS));
    s.skip_all();
    // An ACK below the recovery point (snd.nxt at entry) keeps Recovery.
    s.at(300.0);
    s.send(ack(seg(MSS, 10)));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.skip_all();
    s.send(ack(seg(MSS, 11)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
}

#[test]
fn a_retransmission_keeps_the_psh_flag_its_original_had() {
    // Linux resends the skb with the flags it was first sent with
    // (`tcp_retransmit_skb`): the head of a 4-segment write went without PSH, and
    // so does its fast retransmission; the write's last segment carried it.
    let mut s = Script::server(Config::default(), PeerOpts::default());
    s.write(4 * 1448);
    let first = s.expect(tx(1, 1448));
    assert!(!first.flags.contains(Flags::PSH));
    s.expect(tx(1449, 1448));
    s.expect(tx(2897, 1448));
    let last = s.expect(tx(4345, 1448));
    assert!(last.flags.contains(Flags::PSH));
    s.at(200.0);
    for k in 1..=3u32 {
        s.send(ack(1).sack(&[(1449, 1449 + k * 1448)]));
    }
    let re = s.expect(tx(1, 1448));
    assert!(!re.flags.contains(Flags::PSH), "{:?}", re.flags);
}
