//! Packet scripts: Proactive (`gentle-aggression-sigcomm13.txt` §6, Figure 8). The
//! receiver's filter — a copy is processed only if its data was not received before;
//! an original only if it was not received before or the previous arrival of that
//! data was not a copy — so that copies cause no duplicate ACKs; the sender's copies,
//! back to back with their originals or after a whole segmentation-offload send;
//! copied SYNs and ACKs; and the fallback when copies never arrive.

use crate::script;

use gentle_tcp::{Config, Flags};
use script::*;

const MSS: u32 = 1448;

fn proactive() -> Config {
    Config {
        delayed_ack: None,
        proactive: true,
        ..Config::default()
    }
}

fn receiver() -> Script {
    Script::server(proactive(), PeerOpts::default())
}

fn copy(p: script::Pkt) -> script::Pkt {
    let f = p.flags;
    p.flags(f | Flags::COPY)
}

#[test]
fn a_copy_after_its_original_is_dropped_without_an_ack() {
    let mut s = receiver();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).no_sack());
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.expect_quiet();
    assert_eq!(s.dut.counters().proactive_discarded, 1);
    assert_eq!(s.dut.counters().proactive_repairs, 0);
    assert_eq!(s.dut.counters().dsack_old_sent, 0);
}

#[test]
fn a_copy_whose_original_was_lost_delivers_the_data() {
    let mut s = receiver();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.skip_all();
    // Segment 2's original is lost; its copy arrives.
    s.send(copy(data(seg(MSS, 2), MSS, 1)));
    s.expect(pure_ack(seg(MSS, 3)).no_sack());
    assert_eq!(s.dut.counters().proactive_repairs, 1);
    assert_eq!(s.dut.bytes_received(), 2 * MSS as u64);
}

#[test]
fn an_original_after_its_copy_is_dropped_and_the_copy_repaired_nothing() {
    let mut s = receiver();
    s.at(200.0);
    // Reordered: the copy arrives first and is processed; the original, later, is
    // not (the previous arrival of its data was a copy), so no duplicate ACK.
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.expect(pure_ack(seg(MSS, 2)));
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect_quiet();
    assert_eq!(s.dut.counters().proactive_discarded, 1);
    assert_eq!(s.dut.counters().proactive_repairs, 0);
}

#[test]
fn a_lost_copy_changes_nothing() {
    let mut s = receiver();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)));
    s.send(data(seg(MSS, 2), MSS, 1));
    s.expect(pure_ack(seg(MSS, 3)));
    assert_eq!(s.dut.counters().proactive_discarded, 0);
}

#[test]
fn a_hole_gives_one_duplicate_ack_per_original_not_per_copy() {
    let mut s = receiver();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.skip_all();
    // Segment 2 and its copy are both lost; segment 3 arrives twice.
    s.send(data(seg(MSS, 3), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 3), seg(MSS, 4))]));
    s.send(copy(data(seg(MSS, 3), MSS, 1)));
    s.expect_quiet();
}

#[test]
fn a_retransmission_after_the_original_alone_still_gives_a_duplicate_ack() {
    let mut s = receiver();
    s.at(200.0);
    // The copy was lost; a (spurious) retransmission arrives: the previous arrival
    // of its data was not a copy, so it is processed, and answered with a DSACK.
    s.send(data(seg(MSS, 1), MSS, 1));
    s.skip_all();
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 1), seg(MSS, 2))]));
}

#[test]
fn a_retransmission_after_the_original_and_its_copy_is_answered() {
    let mut s = receiver();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.skip_all();
    // The ACK of segment 1 was lost; the sender retransmits it (and its copy). The
    // copy before was dropped, not processed: the retransmission gets its duplicate
    // ACK, with a DSACK, and its own copy nothing.
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 1), seg(MSS, 2))]));
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.expect_quiet();
    // Again: answered every time, so the sender can always learn it arrived.
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 1), seg(MSS, 2))]));
}

#[test]
fn after_an_overtaken_original_the_next_retransmission_is_answered() {
    let mut s = receiver();
    s.at(200.0);
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.expect(pure_ack(seg(MSS, 2)));
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect_quiet();
    // That ACK was lost: the retransmission is answered.
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 1), seg(MSS, 2))]));
}

#[test]
fn a_receiver_without_proactive_treats_copies_as_duplicates() {
    let mut cfg = proactive();
    cfg.proactive = false;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.skip_all();
    s.send(copy(data(seg(MSS, 1), MSS, 1)));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 1), seg(MSS, 2))]));
}

/// The DUT sends `n` segments with Proactive and segmentation offload of `tso`
/// frames; returns the order: (relative seq, copy?).
fn sent_order(tso: u32, n: u32) -> Vec<(u32, bool)> {
    let mut cfg = proactive();
    cfg.tso = tso;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.write((n * MSS) as usize);
    s.flush();
    let mut out = Vec::new();
    while s.pending() > 0 {
        let seg = s.expect(Exp::default());
        out.push((s.rel_seq(&seg), seg.flags.contains(Flags::COPY)));
    }
    out
}

#[test]
fn without_offload_each_copy_follows_its_original() {
    let order = sent_order(1, 4);
    let want: Vec<(u32, bool)> = (1..=4)
        .flat_map(|k| [(seg(MSS, k), false), (seg(MSS, k), true)])
        .collect();
    assert_eq!(order, want);
}

#[test]
fn with_offload_the_copies_follow_the_whole_send() {
    // K = 4 frames per send (Figure 8): four originals, then their four copies; the
    // last, shorter send of two frames likewise.
    let order = sent_order(4, 6);
    let mut want: Vec<(u32, bool)> = Vec::new();
    for k in 1..=4 {
        want.push((seg(MSS, k), false));
    }
    for k in 1..=4 {
        want.push((seg(MSS, k), true));
    }
    for k in 5..=6 {
        want.push((seg(MSS, k), false));
    }
    for k in 5..=6 {
        want.push((seg(MSS, k), true));
    }
    assert_eq!(order, want);
}

#[test]
fn copies_are_not_retransmissions_and_count_as_overhead() {
    let mut s = Script::server(proactive(), PeerOpts::default());
    s.at(200.0);
    s.write((3 * MSS) as usize);
    s.flush();
    s.skip_all();
    let c = s.dut.counters();
    assert_eq!(c.proactive_copies, 3);
    assert_eq!(c.proactive_bytes, 3 * MSS as u64);
    assert_eq!(c.retrans_segs, 0);
    assert_eq!(c.data_segs_out, 3);
    // cwnd and the scoreboard see three segments: one ACK covering them closes the
    // flight.
    s.at(300.0);
    s.send(ack(seg(MSS, 4)));
    assert!(s.dut.all_acked());
}

#[test]
fn copied_syn_and_acks() {
    let mut cfg = proactive();
    cfg.proactive_syn_ack = true;
    let mut s = Script::connecting(cfg, PeerOpts::default());
    let syn = s.expect(Exp::default().flags(Flags::SYN).at(0.0));
    assert!(!syn.flags.contains(Flags::COPY));
    let c = s.expect(Exp::default().at(0.0));
    assert!(
        c.flags.syn() && c.flags.contains(Flags::COPY),
        "the SYN's copy"
    );
    s.expect_quiet();
}

#[test]
fn a_copied_syn_at_a_listener_does_not_repeat_the_syn_ack() {
    let mut s = Script::syn_received(proactive(), PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    s.at(1.0);
    s.send(script::Pkt {
        flags: Flags::SYN | Flags::COPY,
        seq: Some(0),
        ..script::Pkt::default()
    });
    s.expect_quiet();
}

#[test]
fn originals_without_copies_turn_proactive_off() {
    let mut s = receiver();
    s.at(200.0);
    for k in 1..=8 {
        s.send(data(seg(MSS, k), MSS, 1));
    }
    s.skip_all();
    assert_eq!(s.dut.counters().proactive_fallback, 1);
    // Its own data now goes out once.
    s.write(MSS as usize);
    s.flush();
    let seg = s.expect(Exp::default());
    assert!(!seg.flags.contains(Flags::COPY));
    s.expect_quiet();
}

#[test]
fn copied_pure_acks_and_their_filter() {
    let mut cfg = proactive();
    cfg.proactive_syn_ack = true;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.skip_all();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    // The DUT's ACK goes out twice, the second marked.
    let a = s.expect(pure_ack(seg(MSS, 2)));
    assert!(!a.flags.contains(Flags::COPY));
    let c = s.expect(
        Exp::default()
            .flags(Flags::ACK | Flags::COPY)
            .ack(seg(MSS, 2)),
    );
    assert!(c.payload.is_empty());
    s.expect_quiet();
    // A copied ACK that acknowledges nothing new is dropped: the DUT, with data in
    // flight, does not take it for a duplicate ACK.
    s.write(3 * MSS as usize);
    s.flush();
    s.skip_all();
    s.at(300.0);
    s.send(ack(seg(MSS, 2)));
    s.send(copy(ack(seg(MSS, 2))));
    s.send(copy(ack(seg(MSS, 2))));
    assert_eq!(s.dut.counters().proactive_discarded, 2);
    s.expect_quiet();
}

#[test]
fn offload_without_proactive_changes_nothing_on_the_wire() {
    let mut cfg = proactive();
    cfg.proactive = false;
    cfg.tso = 8;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.at(200.0);
    s.write((4 * MSS) as usize);
    s.flush();
    for k in 1..=4 {
        let seg = s.expect(tx(seg(MSS, k), MSS).at(200.0));
        assert!(!seg.flags.contains(Flags::COPY));
    }
    s.expect_quiet();
}

#[test]
fn behind_a_middlebox_that_clears_the_flag_copies_are_plain_duplicates() {
    // The copy arrives unmarked: TCP delivers the data once and answers the
    // duplicate with a DSACK, as for any duplicate (§7).
    let mut s = receiver();
    s.at(200.0);
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).no_sack());
    s.send(data(seg(MSS, 1), MSS, 1));
    s.expect(pure_ack(seg(MSS, 2)).sack(&[(seg(MSS, 1), seg(MSS, 2))]));
    assert_eq!(s.dut.bytes_received(), MSS as u64);
    assert_eq!(s.dut.counters().proactive_discarded, 0);
    // Duplicates show the copies get through: no fallback, however long the run.
    for k in 2..=12 {
        s.send(data(seg(MSS, k), MSS, 1));
        s.send(data(seg(MSS, k), MSS, 1));
    }
    assert_eq!(s.dut.counters().proactive_fallback, 0);
}
