//! Packet scripts: the advertised window (Linux `tcp_select_window`; RFC 9293
//! §3.8.6.2.2, RFC 7323 §2.4). Out-of-order data does not shrink it, so the
//! duplicate ACKs it draws are duplicates by RFC 5681 §2's definition; unread data
//! closes it from the left while the right edge stays; it is rounded to the scale
//! unit or, unscaled, to whole segments; a read that reopens it is announced.

use crate::script;

use gentle_tcp::{Config, Flags, Segment};
use script::*;

const MSS: u32 = 1448;

fn window_bytes(seg: &Segment, shift: u8) -> u32 {
    (seg.window as u32) << shift
}

#[test]
fn duplicate_acks_for_out_of_order_data_carry_the_same_window() {
    for (scale, shift) in [(true, 7u8), (false, 0)] {
        let cfg = Config {
            window_scale: scale,
            ..Config::default()
        };
        let peer = PeerOpts {
            wscale: scale.then_some(7),
            ..PeerOpts::default()
        };
        let mut s = Script::server(cfg, peer);
        s.at(200.0);
        s.send(data(1, MSS, 1));
        let first = s.expect(pure_ack(1 + MSS));
        s.read_all();
        // Segment 2 is lost; 3, 4, 5 and 6 arrive and each draws a duplicate ACK.
        let mut windows = Vec::new();
        for k in 2..6 {
            s.send(data(1 + k * MSS, MSS, 1));
            let a = s.expect(pure_ack(1 + MSS));
            assert_eq!(a.ack, first.ack, "a duplicate ACK");
            windows.push(a.window);
        }
        assert!(
            windows.iter().all(|&w| w == windows[0]),
            "scale {scale}: windows {windows:?}"
        );
        assert!(window_bytes(&first, shift) > 0);
    }
}

#[test]
fn unread_data_closes_the_window_from_the_left() {
    // A 16 KiB buffer needs no scaling. The SYN-ACK offers 16384 rounded down to
    // whole segments; then the right edge stays put while unread data queues, and
    // at the end the window is zero.
    let cfg = Config {
        recv_buffer: 16 * 1024,
        delayed_ack: None,
        ..Config::default()
    };
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.send(data(1, 1000, 1));
    let a = s.expect(pure_ack(1001));
    let right_edge = 1001 + a.window as u32;
    assert_eq!(
        right_edge,
        1 + 16384 / 1460 * 1460,
        "the SYN-ACK's right edge"
    );
    let mut seq = 1001;
    while seq < right_edge {
        let len = (right_edge - seq).min(MSS);
        s.send(data(seq, len, 1));
        seq += len;
        let a = s.expect(pure_ack(seq));
        assert_eq!(
            seq + a.window as u32,
            right_edge,
            "the right edge stays at seq {seq}"
        );
    }
    // Reading everything reopens the window, and the update is sent at once.
    s.read_all();
    let a = s.expect(pure_ack(seq).flags(Flags::ACK));
    assert!(a.window as u32 >= 16384 / 2, "window update {}", a.window);
}

#[test]
fn out_of_order_data_filling_the_buffer_does_not_shrink_the_offer() {
    // 8 KiB of buffer, and the peer sends everything but the first segment: the
    // free space drops below what was offered, but the offer stands.
    let cfg = Config {
        recv_buffer: 8 * 1024,
        delayed_ack: None,
        ..Config::default()
    };
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.send(data(1, 100, 1));
    let a = s.expect(pure_ack(101));
    let right_edge = 101 + a.window as u32;
    let mut seq = 101 + MSS;
    while seq + MSS <= right_edge {
        s.send(data(seq, MSS, 1));
        let d = s.expect(pure_ack(101));
        assert_eq!(101 + d.window as u32, right_edge);
        seq += MSS;
    }
}

#[test]
fn the_scaled_window_is_rounded_up_to_the_scale_unit() {
    // "Advertise enough space so that it won't get scaled away": 64240 bytes at
    // shift 7 are 501.875 units, advertised as 502.
    let mut s = Script::server(Config::default(), PeerOpts::default());
    s.send(data(1, 100, 1));
    let a = s.expect(pure_ack(101));
    assert_eq!(a.window, 502);
}
