//! Packet scripts: a closed or small receive window (RFC 9293 §3.8.6.1 and
//! §3.8.6.2.1; RFC 1122 §4.2.2.17): the persist timer and its zero-window probes with
//! back-off, sender-side silly-window avoidance, and the receiver's answer to a probe.

use crate::script;

use gentle_tcp::{CloseReason, Config, Flags};
use script::*;

const MSS: u32 = 1448;

/// A sender whose peer offers two segments of window without scaling.
fn two_segment_window() -> Script {
    let peer = PeerOpts {
        window: 2 * MSS,
        wscale: None,
        ..PeerOpts::default()
    };
    let mut s = Script::server(Config::default(), peer);
    s.write((10 * MSS) as usize);
    s.expect_burst(1, 2, MSS, 100.0);
    s.expect_quiet();
    s
}

#[test]
fn zero_window_probes_back_off_until_the_window_opens() {
    let mut s = two_segment_window();
    s.at(200.0);
    s.send(ack(1 + 2 * MSS).window(0));
    s.expect_quiet();
    // The RTO (300 ms after the 100 ms handshake sample... and this ACK's sample).
    let rto = s.rto_ms();
    let first = 200.0 + rto;
    s.at(first - 0.001);
    s.expect_quiet();
    s.at(first);
    // A probe: no data, one below snd.una.
    s.expect(tx(2 * MSS, 0).flags(Flags::ACK).at(first));
    s.at(first + 100.0);
    s.send(ack(1 + 2 * MSS).window(0));
    s.expect_quiet();
    let second = first + 2.0 * rto;
    s.at(second - 0.001);
    s.expect_quiet();
    s.at(second);
    s.expect(tx(2 * MSS, 0).at(second));
    let third = second + 4.0 * rto;
    s.at(third);
    s.expect(tx(2 * MSS, 0).at(third));
    assert_eq!(s.dut.counters().window_probes, 3);
    // The window opens: data flows at once, and the next RTO is not backed off.
    s.at(third + 50.0);
    s.send(ack(1 + 2 * MSS).window(4 * MSS));
    s.expect_burst(1 + 2 * MSS, 4, MSS, third + 50.0);
    s.expect_quiet();
    let t0 = third + 50.0;
    let rto = s.rto_ms();
    s.at(t0 + rto);
    s.expect(tx(1 + 2 * MSS, MSS).at(t0 + rto));
    assert!(s.dut.is_established());
}

#[test]
fn a_partly_open_window_is_used_by_the_probe() {
    let mut s = two_segment_window();
    s.at(200.0);
    s.send(ack(1 + 2 * MSS).window(0));
    // Only 100 bytes of window come back: too little to send under silly-window
    // avoidance (less than a segment and less than half the largest window offered).
    s.at(250.0);
    s.send(ack(1 + 2 * MSS).window(100));
    s.expect_quiet();
    // The persist timer still runs, and its probe carries the 100 bytes.
    let at = 200.0 + s.rto_ms();
    s.at(at);
    s.expect(tx(1 + 2 * MSS, 100).at(at));
    s.expect_quiet();
}

#[test]
fn half_the_largest_window_is_enough_to_send() {
    let mut s = two_segment_window();
    s.at(200.0);
    // 1448 bytes ≥ half of 2896: one full segment goes at once.
    s.send(ack(1 + 2 * MSS).window(MSS));
    s.expect(tx(1 + 2 * MSS, MSS).at(200.0));
    s.at(300.0);
    // 1000 bytes ≥ 2896 / 2 is false: wait.
    s.send(ack(1 + 3 * MSS).window(1000));
    s.expect_quiet();
    s.send(ack(1 + 3 * MSS).window(1500));
    s.expect(tx(1 + 3 * MSS, MSS).at(300.0));
}

#[test]
fn a_live_receiver_keeps_a_closed_window_indefinitely() {
    let cfg = Config {
        max_retries: 3,
        ..Config::default()
    };
    let peer = PeerOpts {
        window: 2 * MSS,
        wscale: None,
        ..PeerOpts::default()
    };
    let mut s = Script::server(cfg, peer);
    s.write((4 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(1 + 2 * MSS).window(0));
    // Every probe is answered: the connection stays up through many probes.
    for _ in 0..8 {
        let next = s.next_timeout().expect("persist timer");
        s.at(next);
        s.expect(tx(2 * MSS, 0));
        s.send(ack(1 + 2 * MSS).window(0));
    }
    assert!(s.dut.is_established());
    // Unanswered, it gives up after max_retries probes.
    for _ in 0..3 {
        let next = s.next_timeout().expect("persist timer");
        s.at(next);
        s.expect(tx(2 * MSS, 0));
    }
    let next = s.next_timeout().expect("persist timer");
    s.at(next);
    s.expect(Exp::default().flags(Flags::RST | Flags::ACK));
    assert_eq!(s.dut.close_reason(), Some(CloseReason::TimedOut));
}

#[test]
fn the_receiver_answers_a_zero_window_probe() {
    let cfg = Config {
        delayed_ack: None,
        ..Config::default()
    };
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.send(data(1, 500, 1));
    s.expect(pure_ack(501));
    s.at(300.0);
    // seq = rcv.nxt − 1, no data.
    s.send(ack(1).flags(Flags::ACK).seq(500));
    s.expect(pure_ack(501).at(300.0));
}
