//! Packet scripts: RACK loss detection (RFC 8985 §6) as the `linux-6` profile runs it
//! (net/ipv4/tcp_recovery.c): the reordering window before and after reordering is
//! seen, the reorder timer, the window's growth on DSACK, and ambiguous RTT samples of
//! retransmissions. The tail loss probe is off unless a test says otherwise, so
//! that the timers under test are RACK's.

use crate::script;

use std::time::Duration;

use gentle_tcp::{CaState, Config, Profile};
use script::*;

const MSS: u32 = 1448;

fn linux6() -> Config {
    let mut c = Profile::Linux6.config();
    c.tlp = false;
    c
}

/// Handshake RTT 100 ms (min_rtt and SRTT 100 ms); `n` segments sent at 100 ms.
fn sent(n: u32) -> Script {
    let mut s = Script::server(linux6(), PeerOpts::default());
    s.write((n * MSS) as usize);
    s.expect_burst(1, n, MSS, 100.0);
    s
}

#[test]
fn three_sacked_segments_mark_the_hole_lost_at_once() {
    // No reordering seen and DupThresh (3) segments SACKed: reo_wnd is 0, and the
    // first segment, sent before the SACKed ones and not delivered after an RTT, is
    // lost (`tcp_rack_reo_wnd`).
    let mut s = sent(5);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect_quiet();
    assert_eq!(s.dut.rack_reo_wnd(), Some(Duration::from_millis(25)));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 5))]));
    s.expect(tx(1, MSS).at(200.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().rack_reo_timeouts, 0);
}

#[test]
fn fewer_sacks_wait_for_the_reorder_timer() {
    // One SACK: reo_wnd = min_rtt/4 = 25 ms. Segment 1 was sent at 100 with the
    // SACKed segment 2, so it is lost at 100 + RACK.rtt (100) + 25 = 225 ms; the
    // reorder timer fires then, plus 2 ms (`TCP_TIMEOUT_MIN`).
    let mut s = sent(3);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.expect_quiet();
    assert_eq!(s.next_timeout(), Some(227.0));
    s.at(226.999);
    s.expect_quiet();
    s.at(227.0);
    s.expect(tx(1, MSS).at(227.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().rack_reo_timeouts, 1);
}

#[test]
fn a_late_segment_cancels_the_loss() {
    // Segment 1 was only reordered: it arrives before the reorder timer, and nothing
    // is retransmitted.
    let mut s = sent(3);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.at(210.0);
    s.send(ack(seg(MSS, 3)));
    s.at(400.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().retrans_segs, 0);
    assert_eq!(s.dut.ca_state(), CaState::Open);
}

/// Five segments; segment 3 overtakes 2, so reordering is seen when 2 arrives.
fn after_reordering() -> Script {
    let mut s = sent(5);
    s.at(200.0);
    s.send(ack(seg(MSS, 2)).sack(&[(seg(MSS, 3), seg(MSS, 4))]));
    s.send(ack(seg(MSS, 4)));
    s.send(ack(seg(MSS, 6)));
    s.skip_all();
    s
}

#[test]
fn once_reordering_is_seen_the_window_applies_to_three_sacks_too() {
    let mut s = after_reordering();
    // A new flight of four, the first lost, three SACKed: reo_wnd stays min_rtt/4.
    s.write((4 * MSS) as usize);
    s.skip_all();
    let t0 = s.now();
    s.at(t0 + 100.0);
    for k in 8..=10 {
        s.send(ack(seg(MSS, 7)).sack(&[(seg(MSS, 8), seg(MSS, k))]));
    }
    s.expect_quiet();
    assert_eq!(s.dut.rack_reo_wnd(), Some(Duration::from_millis(25)));
    // Lost at t0 + 100 + 25; the timer adds 2 ms.
    s.at(t0 + 127.0);
    s.expect(tx(seg(MSS, 7), MSS).at(t0 + 127.0));
}

#[test]
fn a_dsack_widens_the_window_for_later_losses() {
    // A spurious retransmission by the reorder timer, then its DSACK: the next
    // round trip raises reo_wnd_steps to 2, so the window is min_rtt/2.
    let mut s = sent(3);
    let ts_original = s.last_tsval();
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.at(227.0);
    s.expect(tx(1, MSS).at(227.0)); // spurious: segment 1 was only late
    // The original arrives and is acknowledged, echoing its own timestamp.
    s.at(230.0);
    s.send(ack(seg(MSS, 4)).ecr(ts_original));
    s.at(330.0);
    s.send(ack(seg(MSS, 4)).sack(&[(seg(MSS, 1), seg(MSS, 2))])); // the DSACK
    assert_eq!(s.dut.counters().dsack_recv, 1);
    // New data, acknowledged a round trip later: the raise takes effect.
    s.write(MSS as usize);
    s.skip_all();
    s.at(430.0);
    s.send(ack(seg(MSS, 5)));
    assert_eq!(s.dut.rack_reo_wnd(), Some(Duration::from_millis(50)));
}

#[test]
fn a_retransmission_sacked_faster_than_min_rtt_does_not_advance_rack() {
    // RFC 8985 §6.2 step 2: segment 1 is resent by the reorder timer at 227; a SACK
    // of it 20 ms later (below the 100 ms min_rtt) may be for the original, so
    // RACK does not take its send time: segment 3, sent at 100, is not judged by it.
    let mut s = sent(4);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.at(227.0);
    s.expect(tx(1, MSS).at(227.0));
    let lost_before = s.dut.counters().retrans_segs;
    s.at(247.0);
    s.send(ack(1).sack(&[(seg(MSS, 1), seg(MSS, 3))]));
    s.expect_quiet();
    assert_eq!(s.dut.counters().retrans_segs, lost_before);
}

#[test]
fn without_sack_rack_is_off_and_duplicate_acks_count() {
    let peer = PeerOpts {
        sack: false,
        ..PeerOpts::default()
    };
    let mut s = Script::server(linux6(), peer);
    assert_eq!(s.dut.rack_reo_wnd(), None);
    s.write((5 * MSS) as usize);
    s.expect_burst(1, 5, MSS, 100.0);
    s.at(200.0);
    s.send(ack(1));
    s.send(ack(1));
    s.expect_quiet();
    s.send(ack(1));
    s.expect(tx(1, MSS).at(200.0));
}
