//! Packet scripts: Early Retransmit (RFC 5827) and the mitigations of
//! `prr-imc11.txt` §6: the lowered threshold with fewer than four segments
//! outstanding, with and without SACK; the srtt/4 delay (clamped to [25 ms, 500 ms])
//! cancelled by an ACK; and ER turned off once reordering was detected.

mod script;

use gentle_tcp::{CaState, Config, EarlyRetransmit, Profile};
use script::*;

const MSS: u32 = 1448;

fn seg(k: u32) -> u32 {
    1 + (k - 1) * MSS
}

/// Three segments sent at 100 ms (nothing more to send); segment 1 is lost.
fn three_segments(cfg: Config) -> Script {
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((3 * MSS) as usize);
    s.expect_burst(1, 3, MSS, 100.0);
    s
}

/// linux-3.10 with the given ER mode and without the tail loss probe (whose ER
/// variant would fire earlier).
fn with_er(er: EarlyRetransmit) -> Config {
    let mut c = Profile::Linux310.config();
    c.er = er;
    c.tlp = false;
    c
}

#[test]
fn two_sacks_of_three_trigger_an_early_retransmit() {
    let mut s = three_segments(with_er(EarlyRetransmit::On));
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(2), seg(3))]));
    s.expect_quiet();
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(2), seg(4))]));
    s.expect(tx(1, MSS).at(201.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().early_retrans, 1);
}

#[test]
fn without_er_the_same_flight_waits_for_the_rto() {
    let mut s = three_segments(with_er(EarlyRetransmit::Off));
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(2), seg(3))]));
    s.send(ack(1).sack(&[(seg(2), seg(4))]));
    s.expect_quiet();
    // RTO 300 ms from the handshake sample, restarted by nothing: fires at 400 ms.
    s.at(399.0);
    s.expect_quiet();
    s.at(400.0);
    s.expect(tx(1, MSS).at(400.0));
    assert_eq!(s.dut.counters().timeouts, 1);
}

#[test]
fn without_sack_two_duplicate_acks_suffice() {
    let mut c = Profile::Plain.config();
    c.er = EarlyRetransmit::On;
    let mut s = three_segments(c);
    s.at(200.0);
    s.send(ack(1));
    s.expect_quiet();
    s.send(ack(1));
    s.expect(tx(1, MSS).at(200.0));
    assert_eq!(s.dut.counters().early_retrans, 1);
}

#[test]
fn er_does_not_apply_with_four_segments_outstanding_or_new_data_waiting() {
    let mut s = Script::server(with_er(EarlyRetransmit::On), PeerOpts::default());
    s.write((4 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(2), seg(3))]));
    s.send(ack(1).sack(&[(seg(2), seg(4))]));
    s.expect_quiet();
    assert_eq!(s.dut.counters().early_retrans, 0);

    // Three outstanding but more data waiting that the window lets out: limited
    // transmit sends it instead.
    let mut s = Script::server(with_er(EarlyRetransmit::On), PeerOpts::default());
    s.write((13 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(seg(8)).sack(&[(seg(9), seg(10))]));
    s.expect(tx(seg(11), MSS));
    s.send(ack(seg(8)).sack(&[(seg(9), seg(11))]));
    assert_eq!(s.dut.counters().early_retrans, 0);
}

#[test]
fn delayed_er_waits_a_quarter_rtt() {
    // srtt 100 ms → 25 ms.
    let mut s = three_segments(with_er(EarlyRetransmit::Delayed));
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(2), seg(3))]));
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(2), seg(4))]));
    s.expect_quiet();
    s.at(225.999);
    s.expect_quiet();
    s.at(226.0);
    s.expect(tx(1, MSS).at(226.0));
    let c = s.dut.counters();
    assert_eq!((c.early_retrans, c.early_retrans_delayed), (1, 1));
}

#[test]
fn delayed_er_is_cancelled_by_the_late_segment() {
    let mut s = three_segments(with_er(EarlyRetransmit::Delayed));
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(2), seg(3))]));
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(2), seg(4))]));
    // Segment 1 was only reordered: its ACK arrives within the delay.
    s.at(210.0);
    s.send(ack(seg(4)));
    s.at(300.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().early_retrans, 0);
    assert_eq!(s.dut.ca_state(), CaState::Open);
}

#[test]
fn the_delay_is_clamped() {
    // srtt 900 ms: srtt/4 = 225 ms, above a configured maximum of 100 ms;
    // srtt 40 ms: 10 ms, below the 25 ms minimum.
    for (rtt, max, delay) in [(900.0, 100, 100.0), (40.0, 500, 25.0)] {
        let peer = PeerOpts {
            rtt,
            ..PeerOpts::default()
        };
        let mut cfg = with_er(EarlyRetransmit::Delayed);
        cfg.er_delay_max = std::time::Duration::from_millis(max);
        let mut s = Script::server(cfg, peer);
        s.write((3 * MSS) as usize);
        s.skip_all();
        let t0 = rtt + 10.0;
        s.at(t0);
        s.send(ack(1).sack(&[(seg(2), seg(3))]));
        s.send(ack(1).sack(&[(seg(2), seg(4))]));
        s.at(t0 + delay - 0.001);
        s.expect_quiet();
        s.at(t0 + delay);
        s.expect(tx(1, MSS).at(t0 + delay));
    }
}

#[test]
fn reordering_turns_er_off() {
    for disable in [true, false] {
        let mut cfg = with_er(EarlyRetransmit::On);
        cfg.er_reorder_disable = disable;
        let mut s = Script::server(cfg, PeerOpts::default());
        s.write((5 * MSS) as usize);
        s.skip_all();
        // Segment 3 overtakes 2: reordering is detected once 2 arrives.
        s.at(200.0);
        s.send(ack(seg(2)).sack(&[(seg(3), seg(4))]));
        s.send(ack(seg(2)).sack(&[(seg(3), seg(5))]));
        s.skip_all();
        s.send(ack(seg(5)));
        s.skip_all();
        // A new flight of three (segments 6–8) with the first lost.
        s.write((3 * MSS) as usize);
        s.skip_all();
        s.at(300.0);
        s.send(ack(seg(6)).sack(&[(seg(7), seg(8))]));
        s.send(ack(seg(6)).sack(&[(seg(7), seg(9))]));
        let fired = s.dut.counters().early_retrans;
        assert_eq!(fired, (!disable) as u64, "er_reorder_disable = {disable}");
    }
}
