//! The per-packet and per-flow signatures on short scripted flows, as a server-side
//! capture would show them: each test writes the packets of one flow and checks
//! what the analyser made of them.

use crate::common;

use common::{IRS, ISS, MSS, Script, causes};
use gentle_analyze::decode::flags;
use gentle_analyze::{Cause, Spurious, Tag};

#[test]
fn three_duplicate_acks_make_a_fast_retransmit_and_its_partial_acks_more() {
    let mut s = Script::new(false);
    s.handshake(100.0);
    for i in 0..6 {
        s.data(100.2, i);
    }
    // Segments 1 and 3 lost: ACK of 0, then three duplicates.
    s.ack(200.0, 1, &[]);
    for k in 0..3 {
        let (tags, _) = s.ack(201.0 + k as f64, 1, &[]);
        assert!(tags.has(Tag::DupAck), "duplicate {k}");
    }
    let (tags, c) = s.data(203.0, 1);
    assert!(tags.has(Tag::Retransmission));
    assert_eq!(c, Some(Cause::Fast));
    // The partial ACK up to 3 brings segment 3 out, still in the same recovery.
    s.ack(303.0, 3, &[]);
    assert_eq!(s.data(303.0, 3).1, Some(Cause::Fast));
    s.ack(403.0, 6, &[]);
    let a = s.finish();
    assert_eq!(causes(&a), [Cause::Fast, Cause::Fast]);
    let f = &a.flows[0];
    assert_eq!(f.dup_acks, 3);
    assert_eq!(f.recoveries.len(), 1);
    assert_eq!(f.recoveries[0].cause, Cause::Fast);
    assert_eq!(f.recoveries[0].retransmissions, 2);
    assert!((f.recoveries[0].duration_ms.expect("ended") - 200.0).abs() < 1e-6);
    assert_eq!(f.losses, 2);
}

#[test]
fn a_retransmission_on_fewer_than_three_sacked_segments_is_early() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    for i in 0..3 {
        s.data(100.2, i);
    }
    // Segment 0 lost; 1 and 2 SACKed: two duplicates, then early retransmit.
    s.ack(200.0, 0, &[(1, 2)]);
    s.ack(201.0, 0, &[(1, 3)]);
    assert_eq!(s.data(201.0, 0).1, Some(Cause::Early));
    // ... or after the early-retransmit timer, a quarter RTT later: still early.
    let mut t = Script::new(true);
    t.handshake(100.0);
    for i in 0..3 {
        t.data(100.2, i);
    }
    t.ack(200.0, 0, &[(1, 2)]);
    t.ack(201.0, 0, &[(1, 3)]);
    assert_eq!(t.data(226.0, 0).1, Some(Cause::Early));
}

#[test]
fn timeouts_back_off_and_the_rest_of_the_window_goes_in_slow_start() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    for i in 0..4 {
        s.data(100.2, i);
    }
    // Nothing comes back: the head is resent after the RTO, then after twice it.
    assert_eq!(s.data(400.0, 0).1, Some(Cause::Timeout));
    assert_eq!(s.data(1000.0, 0).1, Some(Cause::Timeout));
    // The ACK of the head releases the next ones: slow start.
    s.ack(1100.0, 1, &[]);
    assert_eq!(s.data(1100.0, 1).1, Some(Cause::SlowStart));
    assert_eq!(s.data(1100.0, 2).1, Some(Cause::SlowStart));
    s.ack(1200.0, 4, &[]);
    let a = s.finish();
    let f = &a.flows[0];
    assert_eq!(f.retransmissions.timeout, 2);
    assert_eq!(f.retransmissions.slow_start, 2);
    // One episode; its RTO measured against the handshake's 100 ms RTT.
    assert_eq!(f.recoveries.len(), 1);
    assert_eq!(f.rto_over_rtt.len(), 1);
    assert!(
        (f.rto_over_rtt[0] - 3.0).abs() < 0.01,
        "{:?}",
        f.rto_over_rtt
    );
}

#[test]
fn the_last_segment_resent_after_two_rtts_with_more_outstanding_is_a_probe() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    for i in 0..5 {
        s.data(100.2, i);
    }
    // 0–2 acknowledged, 3 and 4 lost: the probe resends 4 two RTTs later.
    s.ack(200.0, 3, &[]);
    let (tags, c) = s.data(400.0, 4);
    assert!(tags.has(Tag::Retransmission));
    assert_eq!(c, Some(Cause::Probe));
    // Its SACK starts recovery of 3 on a single duplicate: early.
    s.ack(500.0, 3, &[(4, 5)]);
    assert_eq!(s.data(500.0, 3).1, Some(Cause::Early));
    s.ack(600.0, 5, &[]);
    let a = s.finish();
    assert_eq!(causes(&a), [Cause::Probe, Cause::Early]);
    assert_eq!(a.flows[0].tail_losses, 1);
}

#[test]
fn without_sack_no_probe_is_possible() {
    let mut s = Script::new(false);
    s.handshake(100.0);
    for i in 0..5 {
        s.data(100.2, i);
    }
    s.ack(200.0, 3, &[]);
    // The same silence, but the head: a timeout.
    assert_eq!(s.data(500.0, 3).1, Some(Cause::Timeout));
}

#[test]
fn a_dsack_shows_a_retransmission_unnecessary() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    for i in 0..5 {
        s.data(100.2, i);
    }
    s.ack(200.0, 0, &[(1, 2)]);
    s.ack(200.5, 0, &[(1, 3)]);
    s.ack(201.0, 0, &[(1, 4)]);
    assert_eq!(s.data(201.0, 0).1, Some(Cause::Fast));
    // Segment 0 was only late (by more than half an RTT, or the ACK would have
    // come too soon to be the retransmission's): the ACK covers everything, then
    // the duplicate retransmission arrives and is reported by a DSACK.
    s.ack(260.0, 5, &[]);
    let (tags, _) = s.ack(301.0, 5, &[(0, 1)]);
    assert!(tags.has(Tag::Dsack));
    assert!(tags.has(Tag::UndoesRetransmission));
    let a = s.finish();
    let f = &a.flows[0];
    assert_eq!(f.retransmission_log[0].spurious, Some(Spurious::Dsack));
    assert_eq!(f.retransmissions.spurious, 1);
    assert_eq!(f.dsacks, 1);
    // A retransmission shown unnecessary is no loss.
    assert_eq!(f.losses, 0);
}

#[test]
fn an_ack_echoing_the_original_timestamp_shows_the_timeout_spurious() {
    let mut s = Script::new(true);
    s.ts = true;
    s.handshake(100.0);
    s.data(100.0, 0);
    s.data(100.0, 1);
    assert_eq!(s.data(600.0, 0).1, Some(Cause::Timeout));
    // The ACK echoes the first transmission's TSval (101): the original arrived.
    let (tags, _) = s.ack_ts(601.0, 2, &[], Some(101));
    assert!(tags.has(Tag::UndoesRetransmission));
    let a = s.finish();
    assert_eq!(
        a.flows[0].retransmission_log[0].spurious,
        Some(Spurious::Timestamp)
    );
}

#[test]
fn data_acknowledged_after_later_data_was_sacked_is_reordering() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    for i in 0..4 {
        s.data(100.2, i);
    }
    s.ack(200.0, 0, &[(1, 2)]);
    s.ack(200.5, 0, &[(1, 3)]);
    // Segment 0 arrives late, never resent: it was overtaken by two segments.
    let (tags, _) = s.ack(201.0, 4, &[]);
    assert!(tags.has(Tag::Reordering));
    let a = s.finish();
    assert_eq!(a.flows[0].reordering_events, 1);
    assert_eq!(a.flows[0].reordering_max, 2);
    assert_eq!(a.flows[0].retransmissions.total(), 0);
}

#[test]
fn the_response_time_runs_from_the_request_to_the_ack_of_the_last_byte() {
    let mut s = Script::new(true);
    s.handshake(50.0);
    // Request at 50.1 ms; response of 3 segments; its last byte acknowledged at 150.
    for i in 0..3 {
        s.data(50.2, i);
    }
    s.ack(100.0, 2, &[]);
    s.ack(150.0, 3, &[]);
    let a = s.finish();
    let e = &a.flows[0].exchanges;
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].request_bytes, 100);
    assert_eq!(e[0].response_bytes, 3 * MSS as u64);
    assert!((e[0].response_ms.expect("acknowledged") - 99.9).abs() < 1e-6);
    assert!(!e[0].lossy());
    assert_eq!(a.totals.exchanges, 1);
}

#[test]
fn bursts_count_the_position_of_each_loss() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    // A burst of four (100 µs apart), its last lost and resent fast; then a burst
    // of two, 10 ms later, without loss.
    for i in 0..4 {
        s.data(100.2 + 0.1 * i as f64, i);
    }
    s.data(110.0, 4);
    s.data(110.1, 5);
    s.ack(200.0, 3, &[(4, 5)]);
    s.ack(200.1, 3, &[(4, 6)]);
    s.data(200.1, 3);
    s.ack(300.0, 6, &[]);
    let a = s.finish();
    let f = &a.flows[0];
    assert_eq!(f.bursts, 3, "two bursts and the retransmission's own");
    assert_eq!(f.losses, 1);
    let fig3 = &a.figures.loss_by_position;
    let four = fig3
        .iter()
        .find(|c| c.burst_len == 4)
        .expect("a lossy 4-burst");
    assert_eq!(four.losses, [0, 0, 0, 1]);
    let fig4 = &a.figures.losses_per_burst;
    assert_eq!(fig4.len(), 1);
    assert_eq!((fig4[0].burst_len, fig4[0].lossy_bursts), (4, 1));
    assert_eq!(fig4[0].one, 1.0);
}

#[test]
fn zero_windows_and_window_updates_are_tagged() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    s.data(100.2, 0);
    let mut a = s.base(200.0, false);
    a.seq = IRS + 101;
    a.ack = ISS + 1 + MSS;
    a.window = 0;
    let (tags, _) = s.push(a);
    assert!(tags.has(Tag::ZeroWindow));
    a.ts_ns += 1_000_000;
    a.window = 500;
    let (tags, _) = s.push(a);
    assert!(tags.has(Tag::WindowUpdate));
    assert!(!tags.has(Tag::DupAck));
    let r = s.finish();
    assert_eq!(r.flows[0].zero_windows, 1);
    assert_eq!(r.flows[0].window_updates, 1);
}

#[test]
fn frames_captured_twice_are_copies_not_retransmissions() {
    // Every frame recorded twice, as a capture on both sides of a router shows
    // them: no retransmission, each copy counted apart. A resend after three
    // duplicate ACKs stays a fast retransmission.
    let mut s = Script::new(false);
    s.handshake(100.0);
    for i in 0..5 {
        s.data(100.2 + f64::from(i) * 0.01, i);
        let (tags, c) = s.data(100.2 + f64::from(i) * 0.01 + 0.002, i);
        assert!(tags.has(Tag::CaptureCopy) && !tags.has(Tag::Retransmission) && c.is_none());
    }
    s.ack(200.0, 1, &[]);
    for k in 0..3 {
        s.ack(200.1 + f64::from(k) * 0.1, 1, &[]);
    }
    let (tags, c) = s.data(200.45, 1);
    assert!(tags.has(Tag::Retransmission) && !tags.has(Tag::CaptureCopy));
    assert_eq!(c, Some(Cause::Fast));
    let a = s.finish();
    assert_eq!(a.flows[0].capture_copies, 5);
    assert_eq!(a.totals.capture_copies, 5);
    assert_eq!(a.flows[0].retransmissions.total(), 1);
}

#[test]
fn corrective_and_proactive_packets_are_not_retransmissions() {
    let mut s = Script::new(true);
    s.handshake(100.0);
    s.data(100.2, 0);
    s.data(100.2, 1);
    // A Proactive copy of segment 1 and a Corrective packet encoding 0–1.
    let mut copy = s.base(100.2, true);
    copy.seq = ISS + 1 + MSS;
    copy.ack = IRS + 101;
    copy.len = MSS;
    copy.flags |= flags::COPY;
    let (tags, c) = s.push(copy);
    assert!(tags.has(Tag::ProactiveCopy) && c.is_none());
    let mut fec = copy;
    fec.flags = flags::ACK;
    fec.seq = ISS + 1;
    fec.opts.corrective = true;
    fec.opts.corrective_encoded = true;
    let (tags, c) = s.push(fec);
    assert!(tags.has(Tag::Corrective) && c.is_none());
    let a = s.finish();
    assert_eq!(a.flows[0].retransmissions.total(), 0);
    assert_eq!((a.flows[0].proactive_copies, a.flows[0].corrective), (1, 1));
}

#[test]
fn figure_1_puts_each_rtt_in_the_lowest_bucket_that_holds_it() {
    use gentle_analyze::figures::{Figures, rtt_bucket};
    let mut f = Figures::default();
    f.latency(0.062, 0.5, false);
    f.latency(0.09, 0.7, false);
    f.latency(30.0, 100.0, true);
    f.latency(5000.0, 9000.0, false);
    let b = f.summary().latency_by_rtt;
    let ranges: Vec<(f64, Option<f64>)> = b.iter().map(|b| (b.rtt_from_ms, b.rtt_to_ms)).collect();
    assert_eq!(
        ranges,
        [(0.0, Some(1.0)), (25.0, Some(50.0)), (950.0, None)]
    );
    assert!((b[0].rtt_mean_ms - 0.076).abs() < 1e-12);
    assert_eq!((b[0].no_loss_n, b[0].no_loss_ms), (2, Some(0.6)));
    assert_eq!(
        (b[1].loss_n, b[1].loss_ms, b[1].no_loss_ms),
        (1, Some(100.0), None)
    );
    assert_eq!(b[2].rtt_mean_ms, 5000.0);
    for (rtt, bucket) in [
        (0.0, 0),
        (0.999, 0),
        (1.0, 1),
        (49.9, 4),
        (50.0, 5),
        (999.0, 23),
    ] {
        assert_eq!(rtt_bucket(rtt), bucket, "{rtt} ms");
    }
}
