//! Packet scripts: the receiver's acknowledgement policy (RFC 9293 §3.8.6.3,
//! RFC 1122 §4.2.3.2, RFC 5681 §4.2) as Linux implements it in `__tcp_ack_snd_check`:
//! a delayed-ACK timer, an ACK as soon as more than one full segment is unacknowledged,
//! and an immediate ACK for out-of-order or hole-filling data.

mod script;

use std::time::Duration;

use gentle_tcp::{Config, Flags};
use script::*;

const MSS: u32 = 1448; // 1460 less the timestamp option

fn receiver(delayed_ack: Option<Duration>) -> Script {
    let mut cfg = Config::default();
    cfg.delayed_ack = delayed_ack;
    Script::server(cfg, PeerOpts::default())
}

#[test]
fn a_lone_segment_is_acknowledged_when_the_40ms_timer_fires() {
    let mut s = receiver(Some(Duration::from_millis(40)));
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
fn the_timer_is_configurable_to_200ms() {
    let mut s = receiver(Some(Duration::from_millis(200)));
    s.at(200.0);
    s.send(data(1, 500, 1));
    s.at(399.0);
    s.expect_quiet();
    s.at(400.0);
    s.expect(pure_ack(501).at(400.0));
}

#[test]
fn every_second_full_segment_is_acknowledged_at_once() {
    let mut s = receiver(Some(Duration::from_millis(40)));
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
fn without_delayed_acks_every_segment_is_acknowledged() {
    let mut s = receiver(None);
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.expect(pure_ack(101).at(200.0));
    s.send(data(101, 100, 1));
    s.expect(pure_ack(201).at(200.0));
}

#[test]
fn out_of_order_and_hole_filling_data_are_acknowledged_at_once() {
    let mut s = receiver(Some(Duration::from_millis(40)));
    s.at(200.0);
    s.send(data(1 + MSS, MSS, 1));
    s.expect(pure_ack(1).sack(&[(1 + MSS, 1 + 2 * MSS)]).at(200.0));
    s.at(210.0);
    s.send(data(1, MSS, 1));
    s.expect(pure_ack(1 + 2 * MSS).no_sack().at(210.0));
    s.expect_quiet();
}

#[test]
fn quickack_mode_acknowledges_the_first_segments_at_once() {
    let mut cfg = Config::default();
    cfg.quickack = 2;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.expect(pure_ack(101).at(200.0));
    s.send(data(101, 100, 1));
    s.expect(pure_ack(201).at(200.0));
    s.send(data(201, 100, 1));
    s.expect_quiet();
    s.at(240.0);
    s.expect(pure_ack(301).at(240.0));
}

#[test]
fn a_pending_ack_rides_on_outgoing_data() {
    let mut s = receiver(Some(Duration::from_millis(40)));
    s.at(200.0);
    s.send(data(1, 100, 1));
    s.at(210.0);
    s.write(300);
    let seg = s.expect(tx(1, 300).ack(101).at(210.0));
    assert!(seg.flags.ack());
    // No separate ACK follows when the timer would have fired.
    s.at(260.0);
    s.expect_quiet();
}

#[test]
fn the_advertised_window_shrinks_as_unread_data_queues() {
    let mut cfg = Config::default();
    cfg.recv_buffer = 64 * 1024;
    cfg.delayed_ack = None;
    let mut s = Script::server(cfg, PeerOpts::default());
    // A 64 KiB buffer needs shift 1 (RFC 7323 §2.3).
    s.at(200.0);
    s.send(data(1, 1000, 1));
    let a = s.expect(pure_ack(1001));
    assert_eq!((a.window as u32) << 1, 64 * 1024 - 1000);
    s.read_all();
    // Reading does not itself send an update for so small a change.
    s.send(data(1001, 1000, 1));
    let a = s.expect(pure_ack(2001).flags(Flags::ACK));
    assert_eq!((a.window as u32) << 1, 64 * 1024 - 1000);
}
