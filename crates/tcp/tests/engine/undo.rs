//! Packet scripts: undoing a congestion-window reduction shown to be unnecessary —
//! by DSACKs covering every retransmission of the episode (RFC 3708, Linux
//! `tcp_try_undo_dsack`) or by a timestamp echo older than the first retransmission
//! (RFC 3522 Eifel detection, Linux `tcp_try_undo_recovery`) — and not otherwise.

use crate::script;

use gentle_tcp::{CaState, Config, Profile};
use script::*;

const MSS: u32 = 1448;

/// Segment 1 is delayed, not lost: three SACKs trigger a spurious fast retransmit at
/// 200 ms. Returns the script and the TSval of the original transmissions. The peer
/// echoes the latest TSval unless a test says otherwise, which is no evidence of a
/// spurious retransmission.
fn spurious_fast_retransmit(cfg: Config) -> (Script, u32) {
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((20 * MSS) as usize);
    let first = s.expect(tx(1, MSS).at(100.0));
    let tsval = first.options.timestamps.map_or(0, |t| t.val);
    s.expect_burst(seg(MSS, 2), 9, MSS, 100.0);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect(tx(seg(MSS, 11), MSS));
    s.expect(tx(seg(MSS, 12), MSS));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 5))]));
    s.expect(tx(1, MSS).at(200.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.cwnd(), 5);
    (s, tsval)
}

#[test]
fn dsack_of_the_only_retransmission_undoes_the_reduction() {
    let (mut s, _) = spurious_fast_retransmit(Profile::Rfc.config());
    // The original segment 1 arrives: everything up to 12 is acknowledged and
    // recovery ends without undo (the retransmission is still unexplained).
    s.at(205.0);
    s.send(ack(seg(MSS, 13)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.cwnd(), 5);
    s.expect_burst(seg(MSS, 13), 5, MSS, 205.0);
    // The retransmission arrives as a duplicate and is reported by DSACK.
    s.at(300.0);
    s.send(ack(seg(MSS, 13)).sack(&[(1, seg(MSS, 2))]));
    assert_eq!(s.dut.counters().dsack_undo, 1);
    assert_eq!(s.dut.cwnd(), 10, "cwnd restored");
    // The restored window releases the rest of the data at once.
    s.expect_burst(seg(MSS, 18), 3, MSS, 300.0);
}

#[test]
fn an_echo_older_than_the_retransmission_undoes_at_once() {
    let (mut s, tsval) = spurious_fast_retransmit(Profile::Rfc.config());
    // The ACK of the original segment 1 echoes the original TSval.
    s.at(205.0);
    s.send(ack(seg(MSS, 13)).ecr(tsval));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.counters().full_undo, 1);
    assert_eq!(s.dut.cwnd(), 10);
}

#[test]
fn a_needed_retransmission_is_not_undone() {
    let (mut s, _) = spurious_fast_retransmit(Profile::Rfc.config());
    // The ACK echoes the retransmission's TSval: segment 1 really was lost.
    s.at(300.0);
    let retrans_tsval = s.last_tsval();
    s.send(ack(seg(MSS, 13)).ecr(retrans_tsval));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert_eq!(s.dut.counters().undos(), 0);
    assert_eq!(s.dut.cwnd(), 5);
}

#[test]
fn undo_can_be_switched_off() {
    let mut cfg = Profile::Rfc.config();
    cfg.undo = false;
    let (mut s, tsval) = spurious_fast_retransmit(cfg);
    s.at(205.0);
    s.send(ack(seg(MSS, 13)).ecr(tsval));
    s.skip_all();
    s.at(300.0);
    s.send(ack(seg(MSS, 13)).sack(&[(1, seg(MSS, 2))]));
    assert_eq!(s.dut.counters().undos(), 0);
    assert_eq!(s.dut.cwnd(), 5);
}

/// `prr-imc11.txt` §2.1 counts "fast-recoveries causing DSACKs": a recovery counts
/// once, however many DSACKs show its retransmissions unnecessary, and even when
/// they arrive after it ended.
#[test]
fn a_recovery_shown_spurious_by_dsacks_is_counted_once() {
    let (mut s, _) = spurious_fast_retransmit(Profile::Rfc.config());
    assert_eq!(s.dut.counters().recoveries_dsacked, 0);
    s.at(205.0);
    s.send(ack(seg(MSS, 13)));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    s.expect_burst(seg(MSS, 13), 5, MSS, 205.0);
    s.at(300.0);
    s.send(ack(seg(MSS, 13)).sack(&[(1, seg(MSS, 2))]));
    assert_eq!(s.dut.counters().recoveries_dsacked, 1);
    // A second DSACK of the same episode's retransmission counts no second time.
    s.skip_all();
    s.send(ack(seg(MSS, 13)).sack(&[(1, seg(MSS, 2))]));
    assert_eq!(s.dut.counters().dsack_recv, 2);
    assert_eq!(s.dut.counters().recoveries_dsacked, 1);
}

#[test]
fn a_needed_recovery_is_not_counted_as_causing_dsacks() {
    let (mut s, _) = spurious_fast_retransmit(Profile::Rfc.config());
    s.at(300.0);
    s.send(ack(seg(MSS, 13)));
    s.skip_all();
    assert_eq!(s.dut.counters().recovery_episodes, 1);
    assert_eq!(s.dut.counters().recoveries_dsacked, 0);
}
