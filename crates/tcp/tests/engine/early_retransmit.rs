//! Packet scripts: Early Retransmit (RFC 5827) and the mitigations of
//! `prr-imc11.txt` §6: the lowered threshold with fewer than four segments
//! outstanding, with and without SACK; the delay of Linux 3.5–3.10
//! (`tcp_pause_early_retransmit`: max(srtt/4, 2 ms), none without an RTT sample or
//! when the RTO is due first) and the paper's [25 ms, 500 ms] clamp, cancelled by an
//! ACK; and ER turned off once reordering was detected.

use crate::script;

use std::time::Duration;

use gentle_tcp::{CaState, Config, EarlyRetransmit, Flags, Profile};
use script::*;

const MSS: u32 = 1448;

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
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.expect_quiet();
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect(tx(1, MSS).at(201.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().early_retrans, 1);
}

#[test]
fn without_er_the_same_flight_waits_for_the_rto() {
    let mut s = three_segments(with_er(EarlyRetransmit::Off));
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
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
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect_quiet();
    assert_eq!(s.dut.counters().early_retrans, 0);

    // Three outstanding but more data waiting that the window lets out: limited
    // transmit sends it instead.
    let mut s = Script::server(with_er(EarlyRetransmit::On), PeerOpts::default());
    s.write((13 * MSS) as usize);
    s.skip_all();
    s.at(200.0);
    s.send(ack(seg(MSS, 8)).sack(&[(seg(MSS, 9), seg(MSS, 10))]));
    s.expect(tx(seg(MSS, 11), MSS));
    s.send(ack(seg(MSS, 8)).sack(&[(seg(MSS, 9), seg(MSS, 11))]));
    assert_eq!(s.dut.counters().early_retrans, 0);
}

#[test]
fn delayed_er_waits_a_quarter_rtt() {
    // srtt 100 ms → 25 ms.
    let mut s = three_segments(with_er(EarlyRetransmit::Delayed));
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
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
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.at(201.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    // Segment 1 was only reordered: its ACK arrives within the delay.
    s.at(210.0);
    s.send(ack(seg(MSS, 4)));
    s.at(300.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().early_retrans, 0);
    assert_eq!(s.dut.ca_state(), CaState::Open);
}

#[test]
fn the_delay_follows_linux_without_an_upper_bound() {
    // Linux 3.10 `tcp_pause_early_retransmit`: max(srtt/4, 2 ms), no upper bound.
    // srtt 900 ms: 225 ms; srtt 4 ms: 1 ms, raised to 2 ms.
    for (rtt, delay) in [(900.0, 225.0), (4.0, 2.0)] {
        let mut s = er_after_one_rtt(rtt, with_er(EarlyRetransmit::Delayed));
        let t0 = rtt + 10.0;
        s.at(t0 + delay - 0.001);
        s.expect_quiet();
        s.at(t0 + delay);
        s.expect(tx(1, MSS).at(t0 + delay));
    }
}

#[test]
fn the_papers_bounds_are_switches() {
    // prr-imc11.txt §6's implementation: srtt/4 clamped to [25 ms, 500 ms].
    // srtt 900 ms: 225 ms, above a configured maximum of 100 ms;
    // srtt 40 ms: 10 ms, below a 25 ms minimum.
    for (rtt, max, delay) in [(900.0, 100, 100.0), (40.0, 500, 25.0)] {
        let mut cfg = with_er(EarlyRetransmit::Delayed);
        cfg.er_delay_min = Duration::from_millis(25);
        cfg.er_delay_max = Some(Duration::from_millis(max));
        let mut s = er_after_one_rtt(rtt, cfg);
        let t0 = rtt + 10.0;
        s.at(t0 + delay - 0.001);
        s.expect_quiet();
        s.at(t0 + delay);
        s.expect(tx(1, MSS).at(t0 + delay));
    }
}

/// Three segments sent after a handshake of `rtt` ms; at `rtt + 10` ms two SACKs
/// report the second and third, leaving the first for early retransmit.
fn er_after_one_rtt(rtt: f64, cfg: Config) -> Script {
    let peer = PeerOpts {
        rtt,
        ..PeerOpts::default()
    };
    let mut s = Script::server(cfg, peer);
    s.write((3 * MSS) as usize);
    s.skip_all();
    s.at(rtt + 10.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s
}

#[test]
fn delayed_er_retransmits_at_once_when_the_rto_is_due_first() {
    // Linux `tcp_pause_early_retransmit`: "unless ... RTO is scheduled to fire
    // first". A 900 ms srtt wants a 225 ms wait; the SACKs arrive 100 ms before the
    // RTO armed with the data is due, so the RTO would come first.
    let peer = PeerOpts {
        rtt: 900.0,
        ..PeerOpts::default()
    };
    let mut s = Script::server(with_er(EarlyRetransmit::Delayed), peer);
    s.write((3 * MSS) as usize);
    s.skip_all();
    let rto_at = s.next_timeout().expect("RTO armed");
    let t0 = rto_at - 100.0;
    s.at(t0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect(tx(1, MSS).at(t0));
    let c = s.dut.counters();
    assert_eq!(
        (c.early_retrans, c.early_retrans_delayed, c.timeouts),
        (1, 0, 0)
    );
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert!(s.dut.cwnd() > 1);
}

#[test]
fn delayed_er_without_an_rtt_sample_retransmits_at_once() {
    // The SYN-ACK is retransmitted and there are no timestamps, so Karn's rule
    // leaves no RTT sample: Linux does not delay ("no RTT samples available").
    let peer = PeerOpts {
        timestamps: false,
        ..PeerOpts::default()
    };
    let mut s = Script::syn_received(with_er(EarlyRetransmit::Delayed), peer);
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    s.at(1000.0);
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(1000.0));
    s.at(1100.0);
    s.send(ack(1));
    assert!(s.dut.srtt().is_none());
    s.write(3 * 1460);
    const M: u32 = 1460;
    s.expect(tx(1, M).at(1100.0));
    s.expect(tx(1 + M, M).at(1100.0));
    s.expect(tx(1 + 2 * M, M).at(1100.0));
    s.at(1150.0);
    s.send(ack(1).sack(&[(1 + M, 1 + 2 * M)]));
    s.send(ack(1).sack(&[(1 + M, 1 + 3 * M)]));
    s.expect(tx(1, M).at(1150.0));
    let c = s.dut.counters();
    assert_eq!((c.early_retrans, c.early_retrans_delayed), (1, 0));
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
        s.send(ack(seg(MSS, 2)).sack(&[(seg(MSS, 3), seg(MSS, 4))]));
        s.send(ack(seg(MSS, 2)).sack(&[(seg(MSS, 3), seg(MSS, 5))]));
        s.skip_all();
        s.send(ack(seg(MSS, 5)));
        s.skip_all();
        // A new flight of three (segments 6–8) with the first lost.
        s.write((3 * MSS) as usize);
        s.skip_all();
        s.at(300.0);
        s.send(ack(seg(MSS, 6)).sack(&[(seg(MSS, 7), seg(MSS, 8))]));
        s.send(ack(seg(MSS, 6)).sack(&[(seg(MSS, 7), seg(MSS, 9))]));
        let fired = s.dut.counters().early_retrans;
        assert_eq!(fired, (!disable) as u64, "er_reorder_disable = {disable}");
    }
}
