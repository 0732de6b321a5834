//! Packet scripts: the retransmission timer (RFC 6298 §5) with Linux's 200 ms
//! minimum: exponential back-off (§5.5), the timer restarted by ACKs of new data
//! (§5.3), the back-off kept until a valid RTT sample (Karn, §5.7; RFC 7323 §4.1),
//! the RTO upper bound, and aborting after `tcp_retries2` timeouts.

use crate::script;

use std::time::Duration;

use gentle_tcp::{CaState, CloseReason, Config, Flags, Profile};
use script::*;

#[test]
fn timeouts_double_from_the_measured_rto() {
    // Handshake RTT 100 ms → RTO 300 ms; one segment sent at 100 ms, never acked.
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.write(1000);
    s.expect(tx(1, 1000).at(100.0));
    let mut at = 100.0;
    for rto in [300.0, 600.0, 1200.0, 2400.0, 4800.0] {
        s.at(at + rto - 0.001);
        s.expect_quiet();
        at += rto;
        s.at(at);
        s.expect(tx(1, 1000).at(at));
        s.expect_quiet();
    }
    let c = s.dut.counters();
    assert_eq!(c.timeouts, 5);
    assert_eq!(c.timeouts_open, 1);
    assert_eq!(c.timeouts_loss, 4);
    assert_eq!(s.dut.ca_state(), CaState::Loss);
}

#[test]
fn ack_of_new_data_restarts_the_timer() {
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.write(3000);
    s.expect(tx(1, 1448).at(100.0));
    s.expect(tx(1449, 1448).at(100.0));
    s.expect(tx(2897, 104).at(100.0));
    // The first segment is acked at 350 ms (RTT 250 ms); the timer restarts from
    // there with the new RTO instead of firing at 400 ms.
    s.at(350.0);
    s.send(ack(1449));
    let rto = s.rto_ms();
    assert!(
        rto > 300.0,
        "RTO {rto} should have grown with the 250 ms sample"
    );
    s.at(400.0);
    s.expect_quiet();
    s.at(350.0 + rto - 0.001);
    s.expect_quiet();
    s.at(350.0 + rto);
    s.expect(tx(1449, 1448).at(350.0 + rto));
}

#[test]
fn backoff_survives_until_a_valid_sample() {
    // Without timestamps, an ACK of a retransmitted segment gives no RTT sample
    // (Karn), so the backed-off RTO stays for the next segment.
    let peer = PeerOpts {
        timestamps: false,
        ..PeerOpts::default()
    };
    let mut s = Script::server(Profile::Plain.config(), peer);
    s.write(1000);
    s.expect(tx(1, 1000).at(100.0));
    s.at(400.0);
    s.expect(tx(1, 1000).at(400.0));
    s.at(1000.0);
    s.expect(tx(1, 1000).at(1000.0));
    s.at(1100.0);
    s.send(ack(1001));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    s.write(1000);
    s.expect(tx(1001, 1000).at(1100.0));
    // Back-off 2 is kept: 4 × 300 ms.
    s.at(2299.0);
    s.expect_quiet();
    s.at(2300.0);
    s.expect(tx(1001, 1000).at(2300.0));

    // With timestamps the echo identifies the transmission: the ACK of the
    // retransmission is a valid sample and clears the back-off.
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.write(1000);
    s.skip_all();
    s.at(400.0);
    s.expect(tx(1, 1000).at(400.0));
    s.at(500.0);
    s.send(ack(1001));
    s.write(1000);
    s.expect(tx(1001, 1000).at(500.0));
    let rto = s.rto_ms();
    assert!(rto < 400.0, "RTO {rto} after a 100 ms sample");
    s.at(500.0 + rto);
    s.expect(tx(1001, 1000).at(500.0 + rto));
}

#[test]
fn rto_is_capped_and_the_connection_aborts_after_max_retries() {
    let mut cfg = Profile::Plain.config();
    cfg.rto_max = Duration::from_secs(2);
    cfg.max_retries = 4;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write(1000);
    s.skip_all();
    // 100 + 300 → 400, +600 → 1000, +1200 → 2200, +2000 (cap) → 4200, then abort.
    for at in [400.0, 1000.0, 2200.0, 4200.0] {
        s.at(at);
        s.expect(tx(1, 1000).at(at));
    }
    s.at(6199.0);
    s.expect_quiet();
    s.at(6200.0);
    s.expect(Exp::default().flags(Flags::RST | Flags::ACK).at(6200.0));
    assert_eq!(s.dut.close_reason(), Some(CloseReason::TimedOut));
}

#[test]
fn timeout_in_loss_retransmits_everything_outstanding_in_slow_start() {
    // Four segments, none acked: after the RTO, cwnd is 1 and the whole flight is
    // marked lost; each ACK then releases slow-start retransmissions (Linux
    // "TCPSlowStartRetrans").
    let cfg = Config {
        frto: false,
        ..Config::default()
    };
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write(4 * 1448);
    for k in 0..4 {
        s.expect(tx(1 + k * 1448, 1448).at(100.0));
    }
    s.at(400.0);
    s.expect(tx(1, 1448).at(400.0));
    s.expect_quiet();
    assert_eq!(s.dut.cwnd(), 1);
    s.at(500.0);
    s.send(ack(1449));
    // cwnd 2 after one ACK in slow start.
    s.expect(tx(1449, 1448).at(500.0));
    s.expect(tx(2897, 1448).at(500.0));
    s.expect_quiet();
    assert_eq!(s.dut.counters().slow_start_retrans, 2);
}

#[test]
fn a_user_timeout_aborts_at_its_time_after_the_first_retransmission() {
    // TCP_USER_TIMEOUT 1 s (RFC 5482; Linux `retransmits_timed_out`): the first
    // retransmission, at 400 ms, starts the clock; the third timeout would come
    // at 2200 ms, but the timer is clamped to 1400 ms (`tcp_clamp_rto_to_user_timeout`)
    // and the connection ends there, without a reset (`tcp_write_err`).
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.dut.set_user_timeout(Some(Duration::from_secs(1)));
    s.write(1000);
    s.expect(tx(1, 1000).at(100.0));
    s.at(400.0);
    s.expect(tx(1, 1000).at(400.0));
    s.at(1000.0);
    s.expect(tx(1, 1000).at(1000.0));
    s.at(1399.999);
    s.expect_quiet();
    assert_eq!(s.dut.close_reason(), None);
    s.at(1400.0);
    s.expect_quiet();
    assert_eq!(s.dut.close_reason(), Some(CloseReason::TimedOut));
    // Without it the timer backs off to 2200 ms.
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.write(1000);
    s.expect(tx(1, 1000).at(100.0));
    s.at(1000.0);
    s.skip_all();
    s.at(2200.0);
    s.expect(tx(1, 1000).at(2200.0));
    assert_eq!(s.dut.close_reason(), None);
}

#[test]
fn data_for_a_closed_socket_resets_the_connection() {
    // RFC 1122 §4.2.2.13: after close(), new data is answered with a reset (Linux
    // `tcp_rcv_state_process` in FIN-WAIT-1: the ACK number asked for, no ACK).
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.at(200.0);
    s.dut.close_socket();
    s.flush();
    s.expect(
        Exp::default()
            .flags(Flags::FIN | Flags::ACK)
            .seq(1)
            .at(200.0),
    );
    s.at(250.0);
    s.send(data(1, 100, 1));
    let rst = s.expect(Exp::default().flags(Flags::RST).seq(1).at(250.0));
    assert_eq!(rst.ack, 0);
    assert_eq!(s.dut.close_reason(), Some(CloseReason::Reset));
    // A shutdown of the sending side alone receives it.
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.at(200.0);
    s.close();
    s.expect(
        Exp::default()
            .flags(Flags::FIN | Flags::ACK)
            .seq(1)
            .at(200.0),
    );
    s.at(250.0);
    s.send(data(1, 100, 1));
    s.expect(pure_ack(101).at(250.0));
    assert_eq!(s.dut.close_reason(), None);
}

#[test]
fn out_segs_leave_retransmissions_out_as_linux_counts_them() {
    // Linux `tcp_transmit_skb` counts OutSegs only for a segment that sends new
    // sequence space or none, and `tcp_make_synack` every SYN-ACK: here the SYN-ACK
    // and the one data segment, not its five retransmissions, which DataSegsOut
    // (`tcpi_data_segs_out`) and RetransSegs do count.
    let mut s = Script::server(Profile::Plain.config(), PeerOpts::default());
    s.write(1000);
    s.expect(tx(1, 1000).at(100.0));
    let mut at = 100.0;
    for rto in [300.0, 600.0, 1200.0, 2400.0, 4800.0] {
        at += rto;
        s.at(at);
        s.expect(tx(1, 1000).at(at));
    }
    // The ACK of it all, then the peer's FIN: the server's ACK of that FIN counts.
    s.send(ack(1001));
    s.send(ack(1001).flags(Flags::ACK | Flags::FIN));
    s.skip_all();
    let c = s.dut.counters();
    assert_eq!((c.retrans_segs, c.data_segs_out), (5, 6));
    assert_eq!(
        c.segs_out, 3,
        "SYN-ACK, the data segment, the ACK of the FIN"
    );
}
