//! Packet scripts: the receiver's acknowledgement policy (RFC 9293 §3.8.6.3,
//! RFC 1122 §4.2.3.2, RFC 5681 §4.2). Linux's (`receiver = "linux"`): quick-ACK mode
//! at the start, after a long gap and on out-of-order data (`tcp_incr_quickack`,
//! `tcp_enter_quickack_mode`); the adaptive delayed-ACK timeout
//! (`tcp_event_data_recv`, `tcp_send_delayed_ack`, `tcp_delack_timer_handler`);
//! interactive mode (`tcp_event_data_sent`); an ACK for more than one full segment
//! (`__tcp_ack_snd_check`) and after reading a short pushed segment
//! (`tcp_cleanup_rbuf`). Windows' and the RFC minimum's fixed timers.

use crate::script;

use std::time::Duration;

use gentle_tcp::{Config, Flags, ReceiverPolicy};
use script::*;

const MSS: u32 = 1448; // 1460 less the timestamp option

fn linux(quickack: u32) -> Script {
    let cfg = Config {
        quickack,
        ..Config::default()
    };
    Script::server(cfg, PeerOpts::default())
}

fn with_policy(p: ReceiverPolicy) -> Script {
    let mut cfg = Config::default();
    cfg.set_receiver(p);
    Script::server(cfg, PeerOpts::default())
}

#[test]
fn the_first_data_of_a_connection_is_acknowledged_at_once() {
    // Quick-ACK mode: `tcp_event_data_recv` on the first data (ato unset) grants
    // min(16, offered window / 2 MSS) quick ACKs; each ACK of new data spends one.
    let mut s = linux(16);
    s.at(200.0);
    for k in 0..16 {
        s.send(data(1 + k * 100, 100, 1));
        s.expect(pure_ack(1 + (k + 1) * 100).at(200.0));
    }
    // Quick ACKs spent: the next lone segment waits for the 40 ms timer.
    s.send(data(1601, 100, 1));
    s.expect_quiet();
    s.at(239.999);
    s.expect_quiet();
    s.at(240.0);
    s.expect(pure_ack(1701).at(240.0));
    assert_eq!(s.dut.counters().delayed_acks, 1);
}

#[test]
fn without_quick_acks_a_lone_segment_waits_40ms() {
    let mut s = linux(0);
    s.at(200.0);
    s.send(data(1, 500, 1));
    s.expect_quiet();
    s.at(239.9);
    s.expect_quiet();
    s.at(240.0);
    s.expect(pure_ack(501).at(240.0));
    assert_eq!(s.dut.counters().delayed_acks, 1);
}

#[test]
fn every_second_full_segment_is_acknowledged_at_once() {
    let mut s = linux(0);
    s.at(200.0);
    s.send(data(1, MSS, 1));
    s.expect_quiet();
    s.at(201.0);
    s.send(data(1 + MSS, MSS, 1));
    s.expect(pure_ack(1 + 2 * MSS).at(201.0));
    s.at(202.0);
    s.send(data(1 + 2 * MSS, MSS, 1));
    s.expect_quiet();
    s.at(203.0);
    s.send(data(1 + 3 * MSS, MSS, 1));
    s.expect(pure_ack(1 + 4 * MSS).at(203.0));
    // The timer armed by the third segment was cancelled by the ACK.
    s.at(300.0);
    s.expect_quiet();
}

#[test]
fn a_delayed_ack_that_fires_doubles_the_timeout() {
    // `tcp_delack_timer_handler` outside interactive mode: ato = min(2·ato, rto).
    // The next lone segment, 100 ms later, waits 80 ms — within the bounds of
    // `tcp_send_delayed_ack` (200 ms after a short pushed segment, and the 100 ms
    // srtt).
    let mut s = linux(0);
    s.at(200.0);
    s.send(data(1, 500, 1));
    s.at(240.0);
    s.expect(pure_ack(501).at(240.0));
    s.at(340.0);
    s.send(data(501, 500, 1));
    s.at(419.999);
    s.expect_quiet();
    s.at(420.0);
    s.expect(pure_ack(1001).at(420.0));
}

#[test]
fn the_timeout_is_bounded_by_the_smoothed_rtt() {
    // With a 50 ms RTT, an ATO inflated to 160 ms still waits only srtt = 50 ms.
    let peer = PeerOpts {
        rtt: 50.0,
        ..PeerOpts::default()
    };
    let cfg = Config {
        quickack: 0,
        ..Config::default()
    };
    let mut s = Script::server(cfg, peer);
    let mut t = 100.0;
    let mut seq = 1;
    for wait in [40.0, 50.0, 50.0] {
        s.at(t);
        s.send(data(seq, 500, 1));
        seq += 500;
        s.at(t + wait - 0.001);
        s.expect_quiet();
        s.at(t + wait);
        s.expect(pure_ack(seq).at(t + wait));
        t += 300.0;
    }
}

#[test]
fn replying_at_once_makes_the_connection_interactive() {
    // `tcp_event_data_sent`: data sent within ato of the last arrival sets pingpong,
    // which ends quick ACKs: the ACK of the next request rides on the reply.
    let mut s = linux(16);
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.expect(pure_ack(101).at(200.0)); // quick ACK for the first request
    s.at(210.0);
    s.write(300);
    s.expect(tx(1, 300).ack(101).at(210.0));
    s.at(300.0);
    s.send(data(101, 100, 301));
    s.expect_quiet(); // interactive: no quick ACK
    s.at(305.0);
    s.write(300);
    let seg = s.expect(tx(301, 300).ack(201).at(305.0));
    assert!(seg.flags.ack());
    s.at(400.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().delayed_acks, 0);
}

#[test]
fn a_missed_delayed_ack_ends_interactive_mode() {
    // In interactive mode a request that gets no reply is acknowledged by the timer,
    // which also leaves interactive mode and deflates ato to 40 ms.
    let mut s = linux(16);
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.expect(pure_ack(101).at(200.0));
    s.write(300);
    s.expect(tx(1, 300).at(200.0));
    s.at(300.0);
    s.send(data(101, 100, 301));
    s.expect_quiet();
    s.at(340.0);
    s.expect(pure_ack(201).at(340.0));
    // Out of interactive mode, quick ACKs are back.
    s.at(350.0);
    s.send(data(201, 100, 301));
    s.expect(pure_ack(301).at(350.0));
}

#[test]
fn reading_a_short_pushed_segment_acknowledges_it() {
    // `tcp_cleanup_rbuf`: the application empties the queue after a short pushed
    // segment, outside interactive mode: ACK at once rather than at the timer.
    let mut s = linux(0);
    s.at(200.0);
    s.send(data(1, 300, 1));
    s.expect_quiet();
    assert_eq!(s.read_all(), 300);
    s.expect(pure_ack(301).at(200.0));
}

#[test]
fn a_long_gap_restarts_quick_acks() {
    // `tcp_event_data_recv`: a gap between arrivals longer than the RTO.
    let mut s = linux(2);
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.expect(pure_ack(101));
    s.send(data(101, 100, 1));
    s.expect(pure_ack(201));
    s.send(data(201, 100, 1));
    s.expect_quiet(); // both quick ACKs spent
    s.at(240.0);
    s.expect(pure_ack(301).at(240.0));
    s.at(2000.0);
    s.send(data(301, 100, 1));
    s.expect(pure_ack(401).at(2000.0));
}

#[test]
fn out_of_order_data_restarts_quick_acks() {
    // `tcp_data_queue`: out-of-order data enters quick-ACK mode (here 3 quick ACKs):
    // the out-of-order ACK and the hole-filling ACK spend two, and the segment after
    // the repair is still acknowledged at once; the one after it waits.
    let mut s = linux(3);
    s.at(200.0);
    for k in 0..3 {
        s.send(data(1 + k * 100, 100, 1));
        s.expect(pure_ack(101 + k * 100));
    }
    s.send(data(301, 100, 1));
    s.expect_quiet();
    s.at(240.0);
    s.expect(pure_ack(401).at(240.0));
    s.at(300.0);
    s.send(data(501, 100, 1));
    s.expect(pure_ack(401).sack(&[(501, 601)]).at(300.0));
    s.send(data(401, 100, 1));
    s.expect(pure_ack(601).no_sack().at(300.0));
    s.send(data(601, 100, 1));
    s.expect(pure_ack(701).at(300.0));
    s.send(data(701, 100, 1));
    s.expect_quiet();
}

#[test]
fn out_of_order_and_hole_filling_data_are_acknowledged_at_once() {
    for p in [
        ReceiverPolicy::Linux,
        ReceiverPolicy::Windows,
        ReceiverPolicy::Rfc,
    ] {
        let mut s = with_policy(p);
        s.at(200.0);
        s.send(data(1 + MSS, MSS, 1));
        s.expect(pure_ack(1).sack(&[(1 + MSS, 1 + 2 * MSS)]).at(200.0));
        s.at(210.0);
        s.send(data(1, MSS, 1));
        s.expect(pure_ack(1 + 2 * MSS).no_sack().at(210.0));
        s.expect_quiet();
    }
}

#[test]
fn windows_waits_200ms_and_acknowledges_every_second_segment() {
    let mut s = with_policy(ReceiverPolicy::Windows);
    assert!(
        !s.dut.timestamps_enabled(),
        "Windows offers no timestamps by default"
    );
    const FULL: u32 = 1460;
    s.at(200.0);
    s.send(data(1, 500, 1)); // no quick ACK at the start
    s.expect_quiet();
    s.read_all();
    s.expect_quiet(); // and none on reading it
    s.at(399.999);
    s.expect_quiet();
    s.at(400.0);
    s.expect(pure_ack(501).at(400.0));
    s.at(500.0);
    s.send(data(501, FULL, 1));
    s.expect_quiet();
    s.send(data(501 + FULL, FULL, 1));
    s.expect(pure_ack(501 + 2 * FULL).at(500.0));
}

#[test]
fn windows_counts_segments_and_the_rfc_minimum_counts_full_ones() {
    // Microsoft, "Delayed Acknowledgments": an ACK goes out when "no ACK was sent
    // for the previous segment received", whatever its size; RFC 1122 §4.2.3.2
    // asks for one every second *full-sized* segment. A full segment and a short
    // one (a response's tail): Windows acknowledges both at once, the RFC minimum
    // waits for its timer.
    for (p, at) in [
        (ReceiverPolicy::Windows, 200.0),
        (ReceiverPolicy::Rfc, 700.0),
    ] {
        let mut s = with_policy(p);
        s.at(200.0);
        s.send(data(1, 1460, 1));
        s.expect_quiet();
        s.send(data(1461, 180, 1));
        if at > 200.0 {
            s.expect_quiet();
            s.at(at - 0.001);
            s.expect_quiet();
            s.at(at);
        }
        s.expect(pure_ack(1641).at(at));
        s.expect_quiet();
    }
}

#[test]
fn the_rfc_minimum_waits_500ms() {
    let mut s = with_policy(ReceiverPolicy::Rfc);
    s.at(200.0);
    s.send(data(1, 500, 1));
    s.read_all();
    s.at(699.999);
    s.expect_quiet();
    s.at(700.0);
    s.expect(pure_ack(501).at(700.0));
}

#[test]
fn the_timer_is_configurable() {
    let mut cfg = Config::default();
    cfg.set_receiver(ReceiverPolicy::Windows);
    cfg.delayed_ack = Some(Duration::from_millis(100));
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.send(data(1, 500, 1));
    s.at(300.0);
    s.expect(pure_ack(501).at(300.0));
}

#[test]
fn without_delayed_acks_every_segment_is_acknowledged() {
    let cfg = Config {
        delayed_ack: None,
        ..Config::default()
    };
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    for k in 0..20 {
        s.send(data(1 + k * 100, 100, 1));
        s.expect(pure_ack(101 + k * 100).at(200.0));
    }
}

#[test]
fn a_pending_ack_rides_on_outgoing_data() {
    let mut s = linux(0);
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.at(210.0);
    s.write(300);
    let seg = s.expect(tx(1, 300).ack(101).at(210.0));
    assert!(seg.flags.ack() && !seg.flags.contains(Flags::SYN));
    // No separate ACK follows when the timer would have fired.
    s.at(260.0);
    s.expect_quiet();
}
