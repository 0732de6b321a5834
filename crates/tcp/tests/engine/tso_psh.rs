//! Packet scripts: where Linux 6 sets PSH (the `tso_psh` switch). New data leaves
//! in TSO packets — at 100 ms of RTT `tcp_tso_autosize` gives packets of two
//! segments — and the last segment of a packet of several carries PSH
//! (`__tcp_transmit_skb`); a packet of one segment carries it only where the
//! written data ended. (Linux also pushes a long write before its end,
//! `forced_push`, where its skbs cross half the peer's largest window; the engine
//! keeps no skbs and does not.)

use crate::script;

use gentle_tcp::{Config, Flags, Profile};
use script::*;

const MSS: u32 = 1448;

fn server(cfg: Config, window: u32) -> Script {
    let peer = PeerOpts {
        window,
        ..PeerOpts::default()
    };
    Script::server(cfg, peer)
}

/// The PSH flags of the next `n` segments, which start at `seq`, at `at` ms.
fn pushes(s: &mut Script, seq: u32, n: u32, at: f64) -> Vec<bool> {
    (0..n)
        .map(|i| {
            let seg = s.expect(tx(seq + i * MSS, MSS).at(at));
            seg.flags.contains(Flags::PSH)
        })
        .collect()
}

#[test]
fn every_packet_of_two_segments_is_pushed() {
    let mut s = server(Profile::Linux6.config(), 65535);
    s.write((20 * MSS) as usize);
    // cwnd 10: five packets of two segments, the second of each pushed.
    let got = pushes(&mut s, 1, 10, 100.0);
    let want: Vec<bool> = (0..10).map(|i| i % 2 == 1).collect();
    assert_eq!(got, want);
    s.expect_quiet();
}

#[test]
fn without_tso_psh_only_the_end_of_the_write_is_pushed() {
    let mut cfg = Profile::Linux6.config();
    cfg.tso_psh = false;
    let mut s = server(cfg, 65535);
    s.write((10 * MSS) as usize);
    let got = pushes(&mut s, 1, 10, 100.0);
    let want: Vec<bool> = (0..10).map(|i| i == 9).collect();
    assert_eq!(got, want);
}
