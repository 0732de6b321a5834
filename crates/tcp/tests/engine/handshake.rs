//! Packet scripts: the three-way handshake and option negotiation (RFC 9293 §3.5,
//! §3.7.1; RFC 7323 §2–§3; RFC 2018 §2), SYN and SYN-ACK retransmission with back-off
//! (RFC 6298 §2.1, §5.5, §5.7), connection teardown and reset (RFC 9293 §3.6, §3.5.2).

use crate::script;

use gentle_tcp::{CloseReason, Config, Flags, Profile, State, SynLossWindow};
use script::*;

#[test]
fn synack_answers_only_the_options_offered() {
    let mut s = Script::syn_received(Config::default(), PeerOpts::default());
    let synack = s.expect(
        Exp::default()
            .flags(Flags::SYN | Flags::ACK)
            .seq(0)
            .ack(1)
            .at(0.0),
    );
    let o = &synack.options;
    assert_eq!(o.mss, Some(1460));
    assert!(o.sack_permitted);
    // 6 MiB receive buffer: shift 7 lets 65535 << 7 cover it (RFC 7323 §2.3).
    assert_eq!(o.window_scale, Some(7));
    let ts = o.timestamps.expect("timestamps answered");
    assert_eq!(ts.ecr, 7_000_000, "SYN-ACK echoes the SYN's TSval");
    // RFC 7323 §2.2: the window of a SYN segment is never scaled; Linux offers the
    // largest multiple of the MSS that fits (`tcp_select_initial_window`): 44 · 1460.
    assert_eq!(synack.window, 64240);

    let mut s = Script::syn_received(
        Config::default(),
        PeerOpts {
            mss: None,
            sack: false,
            timestamps: false,
            wscale: None,
            ..PeerOpts::default()
        },
    );
    let synack = s.expect(Exp::default().flags(Flags::SYN | Flags::ACK));
    let o = &synack.options;
    assert_eq!(o.mss, Some(1460), "MSS is always sent on a SYN");
    assert!(!o.sack_permitted && o.timestamps.is_none() && o.window_scale.is_none());
}

#[test]
fn effective_mss_is_the_smaller_less_the_timestamp_option() {
    // The peer offers 1000: segments carry 1000 − 12 bytes of timestamp option.
    let peer = PeerOpts {
        mss: Some(1000),
        ..PeerOpts::default()
    };
    let mut s = Script::server(Config::default(), peer);
    s.write(3000);
    s.expect(tx(1, 988).at(100.0));
    s.expect(tx(989, 988));
    s.expect(tx(1977, 988));
    s.expect(tx(2965, 36));
    s.expect_quiet();

    // No MSS option at all: RFC 9293 §3.7.1's default of 536, no timestamps.
    let peer = PeerOpts {
        mss: None,
        timestamps: false,
        ..PeerOpts::default()
    };
    let mut s = Script::server(Config::default(), peer);
    s.write(1000);
    let seg = s.expect(tx(1, 536));
    assert!(seg.options.timestamps.is_none());
    s.expect(tx(537, 464));
}

#[test]
fn window_is_scaled_by_the_negotiated_shift() {
    let mut s = Script::server(Config::default(), PeerOpts::default());
    s.send(data(1, 100, 1));
    let a = s.expect(pure_ack(101).at(100.0));
    // The SYN-ACK offered 64240 bytes, and a 100-byte segment does not grow the
    // window (`tcp_grow_window` skips segments under 128 bytes): the same right
    // edge, rounded up to the 2⁷ unit of the 6 MiB buffer's shift.
    assert_eq!(a.window as u32, 64240u32.div_ceil(128));
    // Full segments grow it by two segments each (`rcv_ssthresh`).
    s.send(data(101, 1448, 1));
    s.send(data(101 + 1448, 1448, 1));
    s.skip_all();
    s.send(data(101 + 2 * 1448, 1448, 1));
    let a = s.expect(pure_ack(101 + 3 * 1448));
    assert_eq!(a.window as u32, (64240u32 + 3 * 2 * 1460).div_ceil(128));

    // A peer that does not scale limits the DUT to its raw 16-bit window. 20000
    // bytes hold 13 full segments; the 1176 left over are not sent (silly-window
    // avoidance, RFC 9293 §3.8.6.2.1) until the window moves.
    let peer = PeerOpts {
        wscale: None,
        window: 20_000,
        ..PeerOpts::default()
    };
    let cfg = Config {
        initial_window: 100,
        ..Config::default()
    };
    let mut s = Script::server(cfg, peer);
    s.write(100_000);
    let mut sent = 0;
    while s.pending() > 0 {
        sent += s.expect(Exp::default()).payload.len();
    }
    assert_eq!(sent, 13 * 1448);
    s.at(200.0);
    s.send(ack(1 + 1448));
    s.expect(tx(1 + 13 * 1448, 1448).at(200.0));
    s.expect_quiet();
}

#[test]
fn syn_retransmissions_back_off_from_one_second_then_give_up() {
    let mut s = Script::connecting(Config::default(), PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN).at(0.0));
    // Linux tcp_syn_retries = 6: SYNs at 0, 1, 3, 7, 15, 31, 63 s; abort at 127 s.
    for at in [1_000.0, 3_000.0, 7_000.0, 15_000.0, 31_000.0, 63_000.0] {
        s.at(at);
        s.expect(Exp::default().flags(Flags::SYN).seq(0).at(at));
        s.expect_quiet();
    }
    s.at(126_999.0);
    assert_eq!(s.dut.state(), State::SynSent);
    s.at(127_000.0);
    assert_eq!(s.dut.close_reason(), Some(CloseReason::TimedOut));
    let c = *s.dut.counters();
    assert_eq!(c.syn_retrans, 6);
    // Each resent SYN is a retransmission (RetransSegs); its timeouts are the
    // handshake's, not data's.
    assert_eq!((c.retrans_segs, c.syn_timeouts, c.timeouts), (6, 6, 0));
    s.expect_quiet();
}

#[test]
fn synack_timeouts_are_counted_the_last_one_too() {
    // Linux's `tcp_syn_ack_timeout` counts every expiry of a request socket's timer
    // in TCPTimeouts, the one that gives up too; `inet_rtx_syn_ack` counts each
    // SYN-ACK resent in RetransSegs.
    let cfg = Config {
        syn_retries: 2,
        ..Config::default()
    };
    let mut s = Script::syn_received(cfg, PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    for at in [1_000.0, 3_000.0] {
        s.at(at);
        s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(at));
    }
    s.at(7_000.0);
    s.expect_quiet();
    assert_eq!(s.dut.close_reason(), Some(CloseReason::TimedOut));
    let c = *s.dut.counters();
    assert_eq!(
        (c.syn_retrans, c.retrans_segs, c.syn_timeouts, c.timeouts),
        (2, 2, 3, 0)
    );
}

#[test]
fn synack_is_retransmitted_on_timeout_and_on_a_repeated_syn() {
    let mut s = Script::syn_received(Config::default(), PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    s.at(1_000.0);
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(1_000.0));
    // The peer's SYN is retransmitted: our SYN-ACK was lost, so it is resent at once.
    s.at(1_500.0);
    s.send(script::Pkt {
        flags: Flags::SYN,
        seq: Some(0),
        options: Some(gentle_tcp::Options {
            mss: Some(1460),
            ..Default::default()
        }),
        ..Default::default()
    });
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(1_500.0));
    s.expect_quiet();
    // Both resent SYN-ACKs are retransmissions; only the timer's is a timeout.
    let c = *s.dut.counters();
    assert_eq!((c.retrans_segs, c.syn_retrans, c.syn_timeouts), (2, 2, 1));
    // The answer restarts the timer at its backoff (2 s): it fires at 3.5 s, not
    // at 3 s (Linux `tcp_check_req`).
    s.at(3_000.0);
    s.expect_quiet();
    s.at(3_500.0);
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(3_500.0));
}

#[test]
fn data_rto_falls_back_to_three_seconds_after_a_syn_retransmission() {
    // RFC 6298 §5.7 (Linux TCP_TIMEOUT_FALLBACK): no RTT sample from a retransmitted
    // SYN without timestamps, so the first data RTO is 3 s.
    let peer = PeerOpts {
        timestamps: false,
        ..PeerOpts::default()
    };
    let mut s = Script::connecting(Config::default(), peer);
    s.expect(Exp::default().flags(Flags::SYN).at(0.0));
    s.at(1_000.0);
    s.expect(Exp::default().flags(Flags::SYN).at(1_000.0));
    s.at(1_100.0);
    s.send(script::Pkt {
        flags: Flags::SYN | Flags::ACK,
        seq: Some(0),
        ack: 1,
        options: Some(gentle_tcp::Options {
            mss: Some(1460),
            sack_permitted: true,
            window_scale: Some(7),
            ..Default::default()
        }),
        ..Default::default()
    });
    s.expect(pure_ack(1).at(1_100.0));
    assert!(s.dut.srtt().is_none());
    s.write(100);
    s.expect(tx(1, 100).at(1_100.0));
    s.at(4_099.0);
    s.expect_quiet();
    s.at(4_100.0);
    s.expect(tx(1, 100).at(4_100.0));
}

#[test]
fn handshake_rtt_gives_the_first_rto() {
    // One 100 ms sample: RTO = SRTT + max(2·SRTT, 200 ms) = 300 ms (Linux
    // tcp_rtt_estimator's first sample, __tcp_set_rto).
    let s = Script::server(Config::default(), PeerOpts::default());
    assert_eq!(s.dut.srtt().map(ms), Some(100.0));
    assert_eq!(s.rto_ms(), 300.0);
    let s = Script::client(
        Config::default(),
        PeerOpts {
            rtt: 50.0,
            ..PeerOpts::default()
        },
    );
    assert_eq!(s.dut.srtt().map(ms), Some(50.0));
    assert_eq!(s.rto_ms(), 250.0);
}

#[test]
fn active_close_fin_then_time_wait() {
    let mut s = Script::server(Config::default(), PeerOpts::default());
    s.write(1000);
    s.expect(tx(1, 1000).flags(Flags::ACK).at(100.0));
    s.close();
    s.expect(tx(1001, 0).flags(Flags::ACK | Flags::FIN).at(100.0));
    assert_eq!(s.dut.state(), State::FinWait1);
    s.at(200.0);
    s.send(ack(1002));
    assert_eq!(s.dut.state(), State::FinWait2);
    s.expect_quiet();
    s.at(210.0);
    s.send(ack(1002).flags(Flags::ACK | Flags::FIN));
    s.expect(pure_ack(2).at(210.0));
    assert_eq!(s.dut.state(), State::TimeWait);
    // A retransmitted FIN in TIME-WAIT is acknowledged again.
    s.at(400.0);
    s.send(ack(1002).flags(Flags::ACK | Flags::FIN));
    s.expect(pure_ack(2).at(400.0));
    // Linux TIME-WAIT: 60 s, restarted by the retransmitted FIN.
    s.at(60_399.0);
    assert_eq!(s.dut.state(), State::TimeWait);
    s.at(60_400.0);
    assert_eq!(s.dut.close_reason(), Some(CloseReason::Normal));
}

#[test]
fn passive_close_goes_through_close_wait_and_last_ack() {
    let mut s = Script::server(Config::default(), PeerOpts::default());
    s.at(150.0);
    s.send(data(1, 10, 1).fin());
    assert_eq!(s.dut.state(), State::CloseWait);
    assert!(s.dut.peer_closed());
    assert_eq!(s.read_all(), 10);
    let a = s.expect(Exp::default().ack(12));
    assert_eq!(a.payload.len(), 0);
    // Data and FIN written before the stack runs leave in one segment.
    s.dut.write(bytes::Bytes::from_static(b"hello"));
    s.close();
    s.expect(tx(1, 5).flags(Flags::ACK | Flags::FIN).ack(12));
    assert_eq!(s.dut.state(), State::LastAck);
    s.at(260.0);
    s.send(ack(7).flags(Flags::ACK));
    assert_eq!(s.dut.close_reason(), Some(CloseReason::Normal));
    s.expect_quiet();
}

#[test]
fn reset_closes_and_out_of_window_reset_is_ignored() {
    let mut s = Script::server(Config::default(), PeerOpts::default());
    // RFC 9293 §3.10.7.4 / RFC 5961 §3: a RST far outside the window is dropped.
    s.send(script::Pkt {
        flags: Flags::RST,
        seq: Some(50_000_000),
        ..Default::default()
    });
    assert!(s.dut.is_established());
    s.send(script::Pkt {
        flags: Flags::RST,
        seq: Some(1),
        ..Default::default()
    });
    assert_eq!(s.dut.close_reason(), Some(CloseReason::Reset));
    s.expect_quiet();
}

#[test]
fn abort_sends_a_reset() {
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.dut.abort(script::t(120.0));
    s.at(120.0);
    s.flush();
    s.expect(Exp::default().flags(Flags::RST | Flags::ACK).seq(1));
}

#[test]
fn simultaneous_open() {
    // RFC 9293 §3.5 Figure 7: both ends send a SYN; each answers with a SYN-ACK.
    let mut s = Script::connecting(Config::default(), PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN).seq(0).at(0.0));
    s.at(50.0);
    let mut syn = script::Pkt {
        flags: Flags::SYN,
        seq: Some(0),
        ..Default::default()
    };
    syn.options = Some(gentle_tcp::Options {
        mss: Some(1460),
        sack_permitted: true,
        window_scale: Some(7),
        ..Default::default()
    });
    s.send(syn.clone());
    let synack = s.expect(
        Exp::default()
            .flags(Flags::SYN | Flags::ACK)
            .seq(0)
            .ack(1)
            .at(50.0),
    );
    assert!(synack.options.sack_permitted, "SACK offered by both");
    assert!(
        synack.options.timestamps.is_none(),
        "timestamps were not offered by the peer"
    );
    assert_eq!(s.dut.state(), State::SynReceived);
    s.at(60.0);
    syn.flags = Flags::SYN | Flags::ACK;
    syn.ack = 1;
    s.send(syn);
    assert!(s.dut.is_established());
    assert!(s.dut.sack_enabled());
    s.write(100);
    s.expect(tx(1, 100).ack(1).at(60.0));
}

#[test]
fn accelerated_open_makes_both_ends_established_without_an_rtt_sample() {
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let cfg = gentle_tcp::Config {
        accelerated_open: true,
        ..gentle_tcp::Config::default()
    };
    let now = gentle_tcp::Instant::from_nanos(5_000_000);
    let mut client = gentle_tcp::Connection::connect(cfg.clone(), now, 40000, 80, &mut rng);
    let mut server = gentle_tcp::Connection::accelerated_open(&mut client, cfg, now, &mut rng);
    assert!(client.is_established() && server.is_established());
    assert!(
        client.srtt().is_none() && server.srtt().is_none(),
        "no RTT sample"
    );
    assert_eq!(client.counters().segs_in + server.counters().segs_in, 0);
    assert!(client.sack_enabled() && server.sack_enabled());
    assert!(
        client.poll_transmit(now).is_none(),
        "nothing left of the handshake"
    );
    assert!(server.poll_transmit(now).is_none());
    // Data flows at once: the server's first segment reaches the client.
    server.write(bytes::Bytes::from_static(b"hello"));
    let seg = server.poll_transmit(now).expect("data");
    client.handle_segment(now, &seg);
    assert_eq!(client.read().as_deref(), Some(&b"hello"[..]));
}

/// The DUT accepts a connection whose SYN-ACK is lost: the timer resends it at
/// 1 s and, with `dup_syn`, the peer's retransmitted SYN makes it resend again; the
/// peer's ACK (echoing the first SYN-ACK's TSval with `echo_first`) arrives at
/// 1.1 s. The window the transfer starts with.
fn window_after_lost_synack(window: SynLossWindow, dup_syn: bool, echo_first: bool) -> u32 {
    let cfg = Config {
        syn_loss_window: window,
        ..Config::default()
    };
    let mut s = Script::syn_received(cfg, PeerOpts::default());
    let first = s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    let first_tsval = first.options.timestamps.expect("timestamps").val;
    s.at(1_000.0);
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(1_000.0));
    if dup_syn {
        s.at(1_001.0);
        s.send(script::Pkt {
            flags: Flags::SYN,
            seq: Some(0),
            options: Some(gentle_tcp::Options {
                mss: Some(1460),
                sack_permitted: true,
                window_scale: Some(7),
                timestamps: Some(gentle_tcp::wire::Timestamps {
                    val: 7_001_001,
                    ecr: 0,
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(1_001.0));
    }
    s.at(1_100.0);
    let a = if echo_first {
        ack(1).ecr(first_tsval)
    } else {
        ack(1)
    };
    s.send(a);
    assert!(s.dut.is_established());
    s.dut.cwnd()
}

#[test]
fn a_lost_synack_starts_the_transfer_with_one_segment_as_linux_and_rfc_5681_say() {
    use SynLossWindow::*;
    // Linux 3.1–5.1: one segment after more than one SYN-ACK retransmission.
    assert_eq!(window_after_lost_synack(Linux, false, false), 10);
    assert_eq!(window_after_lost_synack(Linux, true, false), 1);
    assert_eq!(window_after_lost_synack(Linux, true, true), 1);
    // Linux 5.2+: not when the ACK's echo shows the first SYN-ACK arrived.
    assert_eq!(window_after_lost_synack(Linux52, true, false), 1);
    assert_eq!(window_after_lost_synack(Linux52, true, true), 10);
    assert_eq!(window_after_lost_synack(Linux52, false, false), 10);
    // RFC 5681 §3.1: one segment after any lost SYN-ACK.
    assert_eq!(window_after_lost_synack(Rfc5681, false, false), 1);
    assert_eq!(window_after_lost_synack(Keep, true, false), 10);
    // The profiles: linux-6 as 5.2+, linux-3.10 as 3.x, rfc as RFC 5681.
    assert_eq!(Profile::Linux6.config().syn_loss_window, Linux52);
    assert_eq!(Profile::Linux310.config().syn_loss_window, Linux);
    assert_eq!(Profile::Rfc.config().syn_loss_window, Rfc5681);
}

#[test]
fn a_client_whose_syn_was_resent_twice_starts_with_one_segment() {
    // The SYN is lost twice (resent at 1 s and 3 s); the SYN-ACK arrives at 3.1 s.
    for (window, echo_first, want) in [
        (SynLossWindow::Linux, false, 1),
        (SynLossWindow::Linux52, false, 1),
        (SynLossWindow::Linux52, true, 10),
    ] {
        let cfg = Config {
            syn_loss_window: window,
            ..Config::default()
        };
        let mut s = Script::connecting(cfg, PeerOpts::default());
        let first = s.expect(Exp::default().flags(Flags::SYN).at(0.0));
        let first_tsval = first.options.timestamps.expect("timestamps").val;
        s.at(1_000.0);
        s.expect(Exp::default().flags(Flags::SYN).at(1_000.0));
        s.at(3_000.0);
        let last = s.expect(Exp::default().flags(Flags::SYN).at(3_000.0));
        let echo = if echo_first {
            first_tsval
        } else {
            last.options.timestamps.unwrap().val
        };
        s.at(3_100.0);
        s.send(script::Pkt {
            flags: Flags::SYN | Flags::ACK,
            seq: Some(0),
            ack: 1,
            options: Some(gentle_tcp::Options {
                mss: Some(1460),
                sack_permitted: true,
                window_scale: Some(7),
                timestamps: Some(gentle_tcp::wire::Timestamps {
                    val: 7_003_100,
                    ecr: echo,
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        assert!(s.dut.is_established());
        assert_eq!(
            s.dut.cwnd(),
            want,
            "{window:?}, echo of the first SYN {echo_first}"
        );
    }
}

/// Runs a client and a server through a handshake and a 5000-byte response; the
/// segments both sent, in order.
fn exchange(
    client: &mut gentle_tcp::Connection,
    server: &mut gentle_tcp::Connection,
    now: gentle_tcp::Instant,
) -> Vec<gentle_tcp::Segment> {
    let mut sent = Vec::new();
    for _ in 0..20 {
        while let Some(s) = client.poll_transmit(now) {
            server.handle_segment(now, &s);
            sent.push(s);
        }
        if server.is_established() && server.bytes_written() == 0 {
            server.write(bytes::Bytes::from(vec![7u8; 5000]));
        }
        while let Some(s) = server.poll_transmit(now) {
            client.handle_segment(now, &s);
            sent.push(s);
        }
        while client.read().is_some() {}
    }
    sent
}

#[test]
fn a_connection_built_in_place_of_a_used_one_behaves_as_a_new_one() {
    // connect_here and accept_here reuse a connection's place and its queues'
    // storage (a simulator's table of connections does, trial after trial): what
    // they send must be what new connections send.
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;
    let cfg = gentle_tcp::Config::default();
    let now = gentle_tcp::Instant::from_nanos(5_000_000);
    let fresh = {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut c = gentle_tcp::Connection::connect(cfg.clone(), now, 40000, 80, &mut rng);
        let syn = c.poll_transmit(now).expect("a SYN");
        let mut s = gentle_tcp::Connection::accept(cfg.clone(), now, &syn, &mut rng).unwrap();
        c.handle_segment(now, &s.poll_transmit(now).expect("a SYN-ACK"));
        let mut sent = vec![syn];
        sent.extend(exchange(&mut c, &mut s, now));
        sent
    };
    // Two used connections, mid-transfer, rebuilt in place.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut c = gentle_tcp::Connection::connect(cfg.clone(), now, 1, 2, &mut rng);
    let syn = c.poll_transmit(now).unwrap();
    let mut s = gentle_tcp::Connection::accept(cfg.clone(), now, &syn, &mut rng).unwrap();
    c.handle_segment(now, &s.poll_transmit(now).unwrap());
    exchange(&mut c, &mut s, now);
    s.write(bytes::Bytes::from(vec![1u8; 30000]));
    let _ = s.poll_transmit(now);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    c.connect_here(cfg.clone(), now, 40000, 80, &mut rng);
    let syn = c.poll_transmit(now).expect("a SYN");
    assert!(s.accept_here(cfg.clone(), now, &syn, &mut rng));
    c.handle_segment(now, &s.poll_transmit(now).expect("a SYN-ACK"));
    let mut again = vec![syn];
    again.extend(exchange(&mut c, &mut s, now));
    assert!(again.len() > 6, "{} segments", again.len());
    assert_eq!(again, fresh);
    assert!(
        !s.accept_here(cfg, now, &again[1], &mut rng),
        "a SYN-ACK opens nothing"
    );
}
