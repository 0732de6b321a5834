//! Packet scripts: duplicate SACK (RFC 2883). A receiver reports a duplicate segment
//! in the first SACK block — below the cumulative ACK (§4.1.1) or inside an
//! out-of-order block (§4.1.2, followed by the block that holds it) — once, in the next
//! ACK. A sender counts the DSACKs it receives.

use crate::script;

use gentle_tcp::Config;
use script::*;

const MSS: u32 = 1000;

fn receiver(dsack: bool) -> Script {
    let cfg = Config {
        delayed_ack: None,
        dsack,
        ..Config::default()
    };
    Script::server(cfg, PeerOpts::default())
}

#[test]
fn duplicate_below_the_cumulative_ack() {
    let mut s = receiver(true);
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.send(data(seg(MSS, 2), MSS, 1));
    s.skip_all();
    s.at(300.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(
        pure_ack(seg(MSS, 3))
            .sack(&[(seg(MSS, 1), seg(MSS, 2))])
            .at(300.0),
    );
    assert_eq!(s.dut.counters().dsack_old_sent, 1);
    // Reported once: the next ACK carries no DSACK.
    s.send(data(seg(MSS, 3), MSS, 1));
    s.expect(pure_ack(seg(MSS, 4)).no_sack());
}

#[test]
fn partial_duplicate_reports_only_the_duplicated_part() {
    let mut s = receiver(true);
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.skip_all();
    // Bytes 501..1501: the first 500 are old, the rest new.
    s.send(data(501, MSS, 1));
    s.expect(pure_ack(1501).sack(&[(501, 1001)]));
}

#[test]
fn duplicate_of_an_out_of_order_segment() {
    let mut s = receiver(true);
    s.at(200.0);
    s.send(data(seg(MSS, 3), MSS, 1));
    s.send(data(seg(MSS, 4), MSS, 1));
    s.send(data(seg(MSS, 6), MSS, 1));
    s.skip_all();
    s.send(data(seg(MSS, 4), MSS, 1));
    // RFC 2883 §4.1.2: the DSACK block, then the SACK block containing it, then the rest.
    s.expect(pure_ack(1).sack(&[
        (seg(MSS, 4), seg(MSS, 5)),
        (seg(MSS, 3), seg(MSS, 5)),
        (seg(MSS, 6), seg(MSS, 7)),
    ]));
    assert_eq!(s.dut.counters().dsack_ofo_sent, 1);
}

#[test]
fn no_dsack_when_disabled() {
    let mut s = receiver(false);
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.skip_all();
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).no_sack());
}

#[test]
fn the_sender_counts_dsacks_received() {
    let mut s = Script::server(Config::default(), PeerOpts::default());
    s.write(2000);
    s.skip_all();
    s.at(200.0);
    s.send(ack(2001));
    // A DSACK for the first segment: below the ACK, so a duplicate report.
    s.send(ack(2001).sack(&[(1, 1001)]));
    assert_eq!(s.dut.counters().dsack_recv, 1);
}
