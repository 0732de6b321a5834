//! Per-flow and per-exchange signatures that need a longer flow than a loss episode:
//! HTTP/1.x exchange boundaries, bufferbloat, and the client-side capture point
//! (policing: `police.rs`).

use crate::common;

use common::{IRS, ISS, MSS, Script, causes};
use gentle_analyze::decode::flags;
use gentle_analyze::{CapturePoint, Cause};

#[test]
fn http_request_lines_split_pipelined_requests_and_status_codes_are_read() {
    let mut s = Script::new(true);
    s.handshake(10.0);
    // The handshake's request was 100 bytes without a request line; now two
    // pipelined GETs back to back, then the responses.
    let get = |s: &mut Script, t: f64, seq: u32, path: &str| {
        let line = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut r = s.base(t, false);
        r.flags = flags::ACK | flags::PSH;
        r.seq = seq;
        r.ack = ISS + 1;
        r.len = line.len() as u32;
        s.push_payload(r, line.as_bytes());
        seq + line.len() as u32
    };
    let next = get(&mut s, 20.0, IRS + 101, "/a");
    get(&mut s, 20.1, next, "/b");
    let mut resp = s.base(30.0, true);
    resp.seq = ISS + 1;
    resp.ack = next + 31;
    resp.len = MSS;
    s.push_payload(resp, b"HTTP/1.1 404 Not Found\r\n");
    let a = s.finish();
    let e = &a.flows[0].exchanges;
    assert_eq!(e.len(), 3, "{e:?}");
    assert_eq!(e[1].http_request.as_deref(), Some("GET /a"));
    assert_eq!(e[2].http_request.as_deref(), Some("GET /b"));
    assert_eq!(e[2].http_status, Some(404));
    assert_eq!(e[2].response_bytes, MSS as u64);
}

#[test]
fn a_growing_queue_is_bufferbloat_and_a_steady_one_is_not() {
    for (bloat, extra_ms) in [(true, 3.0), (false, 0.01)] {
        let mut s = Script::new(true);
        s.handshake(50.0);
        // 40 segments, each acknowledged an RTT later, the RTT growing by
        // `extra_ms` per segment (a queue filling) or not; in time order.
        for i in 0..40u32 {
            s.data(60.0 + i as f64, i);
        }
        for i in 0..40u32 {
            s.ack(110.0 + i as f64 + extra_ms * i as f64, i + 1, &[]);
        }
        let a = s.finish();
        let f = &a.flows[0];
        assert_eq!(f.bufferbloat, bloat, "inflation {:?}", f.rtt_inflation_ms);
    }
}

#[test]
fn a_client_side_capture_moves_acks_by_the_rtt_before_judging() {
    // Seen at the client (50 ms each way): of segments 0–4 sent at once, 2 and 3
    // never arrive. The client's ACKs reach the server 50 ms after they left; its
    // timeout resends 2, which arrives 300 ms after the ACK of 0–1 reached it; the
    // ACK of 2 releases 3 in slow start, seen an RTT after that ACK left. At the
    // server the second was ACK-clocked; taken for a server-side capture it looks
    // like a second timeout.
    for (point, want) in [
        (CapturePoint::Client, [Cause::Timeout, Cause::SlowStart]),
        (CapturePoint::Server, [Cause::Timeout, Cause::Timeout]),
    ] {
        let mut s = Script::with_point(false, point);
        s.handshake_at_client(100.0);
        s.data(200.0, 0);
        s.data(200.0, 1);
        s.data(200.0, 4);
        s.ack(200.1, 2, &[]);
        s.ack(200.2, 2, &[]);
        assert_eq!(s.data(600.1, 2).1, Some(want[0]), "{point:?}");
        s.ack(600.2, 3, &[]);
        assert_eq!(s.data(700.2, 3).1, Some(want[1]), "{point:?}");
    }
}

#[test]
fn at_the_receiver_a_second_resend_sooner_than_an_rtt_shows_a_fast_recovery() {
    // Seen at the client, the server's resends arrive behind its uplink's queue:
    // the first 245 ms after the SACKs that called for it, as late as a timeout.
    // The second 7 ms after it was sent before any ACK of the first could reach
    // the server, so its window held two: a fast recovery, not the one segment a
    // timeout leaves. A second one an RTT after the first's ACK is the timeout's
    // slow start.
    for (second_ms, want) in [
        (457.0, [Cause::Fast, Cause::Fast]),
        (550.15, [Cause::Timeout, Cause::SlowStart]),
    ] {
        let mut s = Script::with_point(true, CapturePoint::Client);
        s.handshake_at_client(100.0);
        s.data(200.0, 0);
        s.ack(200.05, 1, &[]);
        // Segments 1 and 3 lost.
        s.data(202.0, 2);
        s.ack(202.05, 1, &[(2, 3)]);
        for i in 4..8 {
            s.data(200.0 + f64::from(i), i);
            s.ack(200.05 + f64::from(i), 1, &[(4, i + 1), (2, 3)]);
        }
        s.data(450.0, 1);
        s.ack(450.05, 3, &[(4, 8)]);
        s.data(second_ms, 3);
        s.ack(second_ms + 0.05, 8, &[]);
        assert_eq!(causes(&s.finish()), want, "second resend at {second_ms} ms");
    }
}

/// A window of four from segment `b` sent at `t`; `b` and `b + 1` lost; the ACK
/// an RTT later SACKs `b + 2..b + 4`: two segments SACKed, FACK's count three past
/// the hole. With `refuse`, the host sends new data on it (no FACK), and recovers
/// when the next ACK makes three SACKed; else it recovers at once, as FACK does.
/// Returns the next free segment.
fn episode(s: &mut Script, t: f64, b: u32, refuse: bool) -> u32 {
    for i in b..b + 4 {
        s.data(t, i);
    }
    s.ack(t + 50.0, b, &[(b + 2, b + 4)]);
    let (end, at) = if refuse {
        s.data(t + 50.05, b + 4);
        s.ack(t + 51.0, b, &[(b + 2, b + 5)]);
        (b + 5, t + 51.05)
    } else {
        (b + 4, t + 50.05)
    };
    s.data(at, b);
    s.data(at + 0.05, b + 1);
    s.ack(at + 50.1, end, &[]);
    end
}

#[test]
fn whether_a_host_uses_fack_is_judged_by_the_whole_capture() {
    // One refusal then two recoveries on FACK's count: a host with FACK whose
    // reordering threshold was briefly higher; two refusals and one: a host
    // without. The recoveries begun on FACK's count are fast or early by that.
    for (plan, want) in [
        ([true, false, false], Cause::Fast),
        ([true, true, false], Cause::Early),
    ] {
        let mut s = Script::new(true);
        s.handshake(50.0);
        let mut b = 0;
        let mut firsts = Vec::new();
        for (k, &refuse) in plan.iter().enumerate() {
            if !refuse {
                firsts.push((200.0 + 200.0 * k as f64 + 50.05) * 1e6);
            }
            b = episode(&mut s, 200.0 + 200.0 * k as f64, b, refuse);
        }
        let a = s.finish();
        let log = &a.flows[0].retransmission_log;
        for r in log {
            let fack_count_only = firsts.contains(&(r.t_ns as f64));
            let expect = if fack_count_only { want } else { Cause::Fast };
            if fack_count_only || r.seq % u64::from(MSS) == 0 && r.dups >= 3 {
                assert_eq!(r.cause, expect, "{plan:?}: {r:?}");
            }
        }
        assert_eq!(
            log.iter()
                .filter(|r| firsts.contains(&(r.t_ns as f64)))
                .count(),
            firsts.len(),
            "{plan:?}: {log:?}"
        );
    }
}

#[test]
fn a_resend_answering_the_first_of_acks_that_arrive_together_stays_in_its_recovery() {
    // NewReno (no SACK), seen at the server: segments 1 and 3 of six lost. Three
    // duplicates call for 1 (fast); the partial ACK for 3 and, 2 µs behind it, an
    // ACK of everything arrive together. The server answers the first with 3, which
    // the second has acknowledged by then: the recovery's next retransmission, not
    // a new one begun on no duplicate.
    let mut s = Script::new(false);
    s.handshake(50.0);
    for i in 0..6 {
        s.data(200.0 + 0.01 * f64::from(i), i);
    }
    s.ack(250.0, 1, &[]);
    for k in 1..=3 {
        s.ack(250.0 + 0.1 * f64::from(k), 1, &[]);
    }
    assert_eq!(s.data(250.35, 1).1, Some(Cause::Fast));
    s.ack(300.4, 3, &[]);
    s.ack(300.402, 6, &[]);
    assert_eq!(s.data(300.44, 3).1, Some(Cause::Fast));
}

#[test]
fn at_the_receiver_a_resend_of_acknowledged_data_is_the_senders_timer() {
    // Seen at the client: segments 0–1 arrive and are acknowledged; the ACK is lost
    // on its way, and the server resends segment 1 300 ms later. Nothing it
    // received could have called for it: its retransmission timer did.
    let mut s = Script::with_point(true, CapturePoint::Client);
    s.handshake_at_client(100.0);
    s.data(200.0, 0);
    s.data(200.1, 1);
    s.ack(200.2, 2, &[]);
    assert_eq!(s.data(500.0, 1).1, Some(Cause::Timeout));
}

#[test]
fn a_lone_segments_resend_is_a_probe_only_from_a_host_seen_to_probe() {
    // One segment out, resent after twice the RTT (a PTO's time, well short of
    // the RTO): with nothing showing the host sends tail loss probes (Linux 3.10
    // and later), a timeout, which every TCP has.
    let mut s = Script::new(true);
    s.handshake(100.0);
    s.data(200.2, 0);
    s.ack(300.2, 1, &[]);
    s.data(400.0, 1);
    s.data(600.0, 1);
    s.ack(700.0, 2, &[]);
    assert_eq!(causes(&s.finish()), [Cause::Timeout]);
}

#[test]
fn time_going_backwards_never_underflows() {
    // A merged capture out of order: records earlier than the flow's first, an ACK
    // before the data it acknowledges, a resend before the original.
    let mut s = Script::new(true);
    s.handshake(50.0);
    s.data(100.0, 0);
    s.data(100.0, 1);
    s.ack(20.0, 1, &[]);
    s.data(10.0, 1);
    s.ack(5.0, 2, &[]);
    s.data(1.0, 2);
    s.ack(0.5, 3, &[]);
    let a = s.finish();
    let f = &a.flows[0];
    let big = 1e6;
    assert!(f.duration_ms < big, "{}", f.duration_ms);
    for v in [f.handshake_rtt_ms, f.rtt_min_ms, f.srtt_ms, f.rtt_p95_ms]
        .into_iter()
        .flatten()
    {
        assert!(v < big, "{v}");
    }
    for e in &f.recoveries {
        assert!(e.start_ms < big && e.duration_ms.is_none_or(|d| d < big));
    }
    for e in &f.exchanges {
        assert!(e.response_ms.is_none_or(|d| d < big));
        assert!(e.first_byte_ms.is_none_or(|d| d < big));
    }
    for r in &f.retransmission_log {
        assert!(r.gap_ns < 1_000_000_000_000, "{}", r.gap_ns);
    }
}

#[test]
fn a_response_ends_at_the_ack_of_its_last_byte_not_of_a_later_fin() {
    // Two segments acknowledged at 150 ms; the server closes the idle connection
    // two minutes on, and its FIN is acknowledged then.
    let mut s = Script::new(true);
    s.handshake(50.0);
    s.data(100.0, 0);
    s.data(100.1, 1);
    s.ack(150.0, 2, &[]);
    let mut fin = s.base(120_000.0, true);
    fin.flags = flags::FIN | flags::ACK;
    fin.seq = ISS + 1 + 2 * MSS;
    fin.ack = IRS + 101;
    s.push(fin);
    let mut ack = s.base(120_050.0, false);
    ack.seq = IRS + 101;
    ack.ack = ISS + 2 + 2 * MSS;
    s.push(ack);
    let a = s.finish();
    let e = &a.flows[0].exchanges[0];
    // The request arrived at 50.1 ms; the response was acknowledged at 150 ms.
    let ms = e.response_ms.expect("a response time");
    assert!((ms - 99.9).abs() < 0.01, "{ms}");
}

#[test]
fn a_timeout_shown_unnecessary_is_no_tail_loss() {
    // The last of three segments resent by the timer, and the original's ACK
    // arrives 2 ms after the resend (sooner than half an RTT: the resend was
    // unnecessary). Neither a loss nor a tail loss.
    let mut s = Script::new(true);
    s.handshake(50.0);
    for i in 0..3 {
        s.data(100.0 + 0.1 * f64::from(i), i);
    }
    s.ack(150.0, 2, &[]);
    assert_eq!(s.data(500.0, 2).1, Some(Cause::Timeout));
    s.ack(502.0, 3, &[]);
    let f = &s.finish().flows[0];
    assert_eq!(f.retransmissions.spurious, 1, "{:?}", f.retransmission_log);
    assert_eq!((f.losses, f.tail_losses), (0, 0));
}

#[test]
fn a_resend_cut_differently_is_one_loss_not_two() {
    // Captured segments of 1000 bytes; the second is lost, and its resend covers
    // 984 bytes of it and 16 of the third (a sender whose retransmission is cut at
    // other boundaries than the capture's segments): one loss.
    let mut s = Script::new(true);
    s.handshake(50.0);
    for i in 0..6 {
        s.data(100.0 + 0.1 * f64::from(i), i);
    }
    s.ack(150.0, 1, &[]);
    for k in 0..3 {
        s.ack(150.1 + 0.1 * f64::from(k), 1, &[(2, 3 + k)]);
    }
    let mut r = s.base(150.5, true);
    r.seq = ISS + 1 + MSS + 16;
    r.ack = IRS + 101;
    r.len = MSS;
    assert_eq!(s.push(r).1, Some(Cause::Fast));
    s.ack(200.0, 6, &[]);
    assert_eq!(s.finish().flows[0].losses, 1);
}
