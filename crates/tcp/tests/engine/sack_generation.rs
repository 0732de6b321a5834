//! Packet scripts: SACK generation by the receiver (RFC 2018 §4): the block holding
//! the most recently received segment comes first, the others follow in the order
//! they last changed; as many blocks as the option space allows (3 next to timestamps,
//! 4 without); blocks below the cumulative ACK disappear.

use crate::script;

use gentle_tcp::{Config, Profile};
use script::*;

const MSS: u32 = 1000;

fn receiver(timestamps: bool) -> Script {
    let cfg = Config {
        delayed_ack: None,
        ..Config::default()
    };
    Script::server(
        cfg,
        PeerOpts {
            timestamps,
            ..PeerOpts::default()
        },
    )
}

#[test]
fn most_recent_block_first_and_merging() {
    let mut s = receiver(true);
    s.at(200.0);
    // Segment 1 is lost; 3 and 5 arrive, then 4 joins them into one block.
    s.send(data(seg(MSS, 3), MSS, 1));
    s.expect(pure_ack(1).sack(&[(seg(MSS, 3), seg(MSS, 4))]));
    s.send(data(seg(MSS, 5), MSS, 1));
    s.expect(pure_ack(1).sack(&[(seg(MSS, 5), seg(MSS, 6)), (seg(MSS, 3), seg(MSS, 4))]));
    s.send(data(seg(MSS, 7), MSS, 1));
    s.expect(pure_ack(1).sack(&[
        (seg(MSS, 7), seg(MSS, 8)),
        (seg(MSS, 5), seg(MSS, 6)),
        (seg(MSS, 3), seg(MSS, 4)),
    ]));
    s.send(data(seg(MSS, 4), MSS, 1));
    s.expect(pure_ack(1).sack(&[(seg(MSS, 3), seg(MSS, 6)), (seg(MSS, 7), seg(MSS, 8))]));
    // Segment 1 fills the first hole: the ACK moves to 2, blocks above stay.
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 3), seg(MSS, 6)), (seg(MSS, 7), seg(MSS, 8))]));
    // Segment 2 joins everything up to 6.
    s.send(data(seg(MSS, 2), MSS, 1));
    s.expect(pure_ack(seg(MSS, 6)).sack(&[(seg(MSS, 7), seg(MSS, 8))]));
    s.send(data(seg(MSS, 6), MSS, 1));
    s.expect(pure_ack(seg(MSS, 8)).no_sack());
}

#[test]
fn three_blocks_fit_beside_timestamps_four_without() {
    for (timestamps, max) in [(true, 3), (false, 4)] {
        let mut s = receiver(timestamps);
        s.at(200.0);
        let mut expect = Vec::new();
        for k in [3, 5, 7, 9, 11] {
            s.send(data(seg(MSS, k), MSS, 1));
            expect.insert(0, (seg(MSS, k), seg(MSS, k + 1)));
            let shown: Vec<_> = expect.iter().copied().take(max).collect();
            s.expect(pure_ack(1).sack(&shown));
        }
        // A segment older than the blocks shown: its block moves to the front again,
        // the rest keep their recency order.
        s.send(data(seg(MSS, 4), MSS, 1));
        let mut shown = vec![
            (seg(MSS, 3), seg(MSS, 6)),
            (seg(MSS, 11), seg(MSS, 12)),
            (seg(MSS, 9), seg(MSS, 10)),
        ];
        if max == 4 {
            shown.push((seg(MSS, 7), seg(MSS, 8)));
        }
        s.expect(pure_ack(1).sack(&shown));
    }
}

#[test]
fn no_sack_blocks_unless_negotiated() {
    let mut s = Script::server(
        Profile::Plain.config(),
        PeerOpts {
            sack: true,
            ..PeerOpts::default()
        },
    );
    s.at(200.0);
    s.send(data(seg(MSS, 3), MSS, 1));
    s.expect(pure_ack(1).no_sack());

    let mut s = Script::server(
        Config::default(),
        PeerOpts {
            sack: false,
            ..PeerOpts::default()
        },
    );
    s.at(200.0);
    s.send(data(seg(MSS, 3), MSS, 1));
    s.expect(pure_ack(1).no_sack());
}

#[test]
fn out_of_order_data_is_delivered_in_order_once_the_hole_fills() {
    let mut s = receiver(true);
    s.at(200.0);
    for k in [2, 4, 3] {
        s.send(data(seg(MSS, k), MSS, 1));
        s.skip_all();
        assert_eq!(s.read_all(), 0, "nothing readable across a hole");
    }
    s.send(data(seg(MSS, 1), MSS, 1));
    assert_eq!(s.read_all(), 4 * MSS as usize);
    assert_eq!(s.dut.bytes_received(), 4 * MSS as u64);
}
