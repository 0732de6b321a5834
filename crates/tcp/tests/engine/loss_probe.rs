//! Packet scripts: the tail loss probe (`gentle-aggression-sigcomm13.txt` §4,
//! Algorithm 1; RFC 8985 §7) — the probe timeout in each flavour with one and with
//! several segments in flight, the clamp to the RTO, re-arming on ACKs, what the
//! probe sends, and the loss-detection episode.

use crate::script;

use gentle_tcp::{CaState, CcAlgorithm, Config, Profile, TlpDetection, TlpFlavour};
use script::*;

const MSS: u32 = 1448;

fn tlp(flavour: TlpFlavour, detection: TlpDetection) -> Config {
    let mut c = Profile::Linux26.config();
    c.cc = CcAlgorithm::Reno;
    c.tlp = true;
    c.tlp_flavour = flavour;
    c.tlp_detection = detection;
    c
}

/// Handshake RTT 100 ms (SRTT 100, RTO 300); `n` segments written at 100 ms.
fn sent(cfg: Config, n: u32) -> Script {
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((n * MSS) as usize);
    s.expect_burst(1, n.min(10), MSS, 100.0);
    s.expect_quiet();
    s
}

#[test]
fn pto_is_two_srtt_with_several_segments_in_flight() {
    for f in [
        TlpFlavour::Draft2013,
        TlpFlavour::Linux310,
        TlpFlavour::Rfc8985,
    ] {
        let mut s = sent(tlp(f, TlpDetection::Basic), 10);
        assert_eq!(s.next_timeout(), Some(300.0), "{f:?}");
        s.at(300.0);
        // No new data: the last segment again.
        s.expect(tx(seg(MSS, 10), MSS).at(300.0));
        s.expect_quiet();
        let c = *s.dut.counters();
        assert_eq!(
            (c.loss_probes, c.loss_probes_retrans, c.timeouts),
            (1, 1, 0)
        );
        // The RTO restarts from the probe: 300 + 300.
        s.at(599.0);
        s.expect_quiet();
        s.at(600.0);
        s.expect(tx(1, MSS).at(600.0));
        assert_eq!(s.dut.counters().timeouts, 1);
    }
}

#[test]
fn a_probe_counts_as_a_retransmission_except_in_linux_3_10() {
    // Linux 3.10 sends the probe with `__tcp_retransmit_skb`, which counts nothing;
    // from 4.x on that function counts RetransSegs, as the RFCs count any resend.
    for (f, counted) in [
        (TlpFlavour::Draft2013, 1),
        (TlpFlavour::Linux310, 0),
        (TlpFlavour::Rfc8985, 1),
    ] {
        let mut s = sent(tlp(f, TlpDetection::Basic), 10);
        s.at(300.0);
        s.expect(tx(seg(MSS, 10), MSS).at(300.0));
        let c = *s.dut.counters();
        assert_eq!(
            (c.loss_probes_retrans, c.retrans_segs),
            (1, counted),
            "{f:?}"
        );
        // The RTO's retransmission counts in every flavour.
        s.at(600.0);
        s.expect(tx(1, MSS).at(600.0));
        assert_eq!(s.dut.counters().retrans_segs, counted + 1, "{f:?}");
    }
}

#[test]
fn one_segment_waits_for_a_delayed_ack_and_is_clamped_to_the_rto() {
    // max(2·100, 1.5·100 + 200) = 350 ms after 100 → 450, later than the RTO at 400:
    // the probe goes at 400 in its place. RFC 8985: 2·100 + 200 = 400 → 500 → 400.
    for f in [
        TlpFlavour::Draft2013,
        TlpFlavour::Linux310,
        TlpFlavour::Rfc8985,
    ] {
        let mut s = sent(tlp(f, TlpDetection::Basic), 1);
        assert_eq!(s.next_timeout(), Some(400.0), "{f:?}");
        s.at(400.0);
        s.expect(tx(1, MSS).at(400.0));
        assert_eq!(
            s.dut.counters().timeouts,
            0,
            "{f:?}: the probe, not the RTO"
        );
    }
    // With a larger minimum RTO the delayed-ACK allowance shows: 100 + 350.
    let mut c = tlp(TlpFlavour::Draft2013, TlpDetection::Basic);
    c.rto_min = std::time::Duration::from_secs(1);
    let s = sent(c, 1);
    assert_eq!(s.next_timeout(), Some(450.0));
    let mut c = tlp(TlpFlavour::Rfc8985, TlpDetection::Basic);
    c.rto_min = std::time::Duration::from_secs(1);
    let mut s = sent(c, 1);
    assert_eq!(s.next_timeout(), Some(500.0));
    s.at(500.0);
    s.expect(tx(1, MSS).at(500.0));
}

#[test]
fn every_ack_rearms_the_probe() {
    let mut s = sent(tlp(TlpFlavour::Draft2013, TlpDetection::Basic), 10);
    s.at(200.0);
    s.send(ack(seg(MSS, 6)));
    // SRTT stays 100 (the sample is 100 ms): 200 + 200.
    assert_eq!(s.next_timeout(), Some(400.0));
    s.at(400.0);
    s.expect(tx(seg(MSS, 10), MSS).at(400.0));
}

#[test]
fn a_cwnd_limited_sender_probes_with_new_data() {
    let mut s = sent(tlp(TlpFlavour::Draft2013, TlpDetection::Basic), 20);
    s.at(300.0);
    s.expect(tx(seg(MSS, 11), MSS).at(300.0));
    s.expect_quiet();
    assert_eq!(s.dut.counters().loss_probes_new, 1);
}

#[test]
fn no_probe_without_sack_or_outside_open() {
    let mut c = Profile::Plain.config();
    c.tlp = true;
    let s = sent(c, 10);
    // Only the RTO is armed (100 + 300).
    assert_eq!(s.next_timeout(), Some(400.0));

    let mut s = sent(tlp(TlpFlavour::Draft2013, TlpDetection::Basic), 10);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 5), seg(MSS, 6))]));
    s.skip_all();
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.at(1000.0);
    assert_eq!(s.dut.counters().loss_probes, 0);
}

/// Four segments; the last one is lost (pattern AAAL). With one segment left in
/// flight the probe waits max(2·SRTT, 1.5·SRTT + 200 ms) = 350 ms, clamped to the RTO:
/// 200 + 300 = 500 ms. The probe repairs the loss.
fn aaal(detection: TlpDetection) -> Script {
    let mut s = sent(tlp(TlpFlavour::Draft2013, detection), 4);
    s.at(200.0);
    s.send(ack(seg(MSS, 4)));
    s.at(500.0);
    s.expect(tx(seg(MSS, 4), MSS).at(500.0));
    s.at(600.0);
    s.send(ack(seg(MSS, 5)));
    // The episode ends with an ACK above the probe's snd.nxt: new data.
    s.write(MSS as usize);
    s.expect(tx(seg(MSS, 5), MSS).at(600.0));
    s.at(700.0);
    s
}

#[test]
fn a_probe_that_repaired_a_loss_reduces_cwnd() {
    for detection in [TlpDetection::Basic, TlpDetection::Dsack] {
        let mut s = aaal(detection);
        let before = s.dut.cwnd();
        s.send(ack(seg(MSS, 6)));
        let c = *s.dut.counters();
        assert_eq!(c.loss_probe_recovery, 1, "{detection:?}");
        assert!(
            s.dut.cwnd() < before,
            "{detection:?}: cwnd {} → {}",
            before,
            s.dut.cwnd()
        );
        assert_eq!(c.timeouts, 0);
    }
}

#[test]
fn an_unnecessary_probe_leaves_cwnd_alone() {
    // All four arrived; only the ACK of the last was lost. The probe's duplicate is
    // answered with a duplicate ACK (and a DSACK): the probe was not needed.
    for detection in [TlpDetection::Basic, TlpDetection::Dsack] {
        let mut s = sent(tlp(TlpFlavour::Draft2013, detection), 4);
        s.at(200.0);
        s.send(ack(seg(MSS, 5)).window(1 << 20));
        // Nothing outstanding: no probe at all.
        assert_eq!(s.next_timeout(), None);

        let mut s = sent(tlp(TlpFlavour::Draft2013, detection), 4);
        s.at(200.0);
        s.send(ack(seg(MSS, 4)));
        s.at(500.0);
        s.expect(tx(seg(MSS, 4), MSS).at(500.0));
        // The receiver had segment 4 all along; its ACK covering it was lost, and the
        // ACK for the probe reports the duplicate.
        s.at(600.0);
        s.send(ack(seg(MSS, 5)).sack(&[(seg(MSS, 4), seg(MSS, 5))]));
        s.write(MSS as usize);
        s.skip_all();
        let cwnd = s.dut.cwnd();
        s.at(700.0);
        s.send(ack(seg(MSS, 6)));
        let c = *s.dut.counters();
        match detection {
            // Basic SACK cannot tell: conservative, as the paper says.
            TlpDetection::Basic => assert_eq!(c.loss_probe_recovery, 1),
            TlpDetection::Dsack => {
                assert_eq!(c.loss_probe_recovery, 0);
                assert_eq!(c.loss_probes_unnecessary, 1);
                assert!(s.dut.cwnd() >= cwnd);
            }
        }
    }
}

#[test]
fn probe_dupacks_mark_the_probe_unnecessary_under_basic_detection() {
    // Segment 4 arrived; its ACK was only slow. The ACK of the original and then the
    // probe's duplicate ACK reach the sender after the probe went out.
    let mut s = sent(tlp(TlpFlavour::Draft2013, TlpDetection::Basic), 4);
    s.at(200.0);
    s.send(ack(seg(MSS, 4)));
    s.at(500.0);
    s.expect(tx(seg(MSS, 4), MSS).at(500.0));
    s.at(550.0);
    s.send(ack(seg(MSS, 5)));
    s.send(ack(seg(MSS, 5)));
    s.write(MSS as usize);
    s.skip_all();
    s.at(700.0);
    s.send(ack(seg(MSS, 6)));
    let c = *s.dut.counters();
    assert_eq!((c.loss_probe_recovery, c.loss_probes_unnecessary), (0, 1));
}

#[test]
fn footnote5_early_retransmit_after_the_probe() {
    // ALLL: segments 2–4 lost. The probe resends 4; its SACK leaves three outstanding
    // with one SACKed, which the variant treats as an early retransmit. (FACK is off:
    // with it, the head — outstanding longer than the RTO by now — would start
    // recovery first, as Linux's `tcp_head_timedout` does.)
    let mut c = tlp(TlpFlavour::Draft2013, TlpDetection::Basic);
    c.er = gentle_tcp::EarlyRetransmit::On;
    c.fack = false;
    let mut s = sent(c, 4);
    s.at(200.0);
    s.send(ack(seg(MSS, 2)));
    // Three in flight: 200 + 2·SRTT.
    s.at(400.0);
    s.expect(tx(seg(MSS, 4), MSS).at(400.0));
    s.at(500.0);
    s.send(ack(seg(MSS, 2)).sack(&[(seg(MSS, 4), seg(MSS, 5))]));
    s.expect(tx(seg(MSS, 2), MSS).at(500.0));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    assert_eq!(s.dut.counters().early_retrans, 1);
}

// ------------------------------------------------------------------ Linux 6.x

/// `linux-6` with the handshake's 100 ms SRTT: `n` segments written at 100 ms.
fn linux6_sent(n: u32) -> Script {
    let mut s = Script::server(Profile::Linux6.config(), PeerOpts::default());
    s.write((n * MSS) as usize);
    s.expect_burst(1, n.min(10), MSS, 100.0);
    s.expect_quiet();
    s
}

#[test]
fn linux6_pto_is_two_srtt_plus_2ms() {
    // Linux 4.11+ `tcp_schedule_loss_probe`: 2·SRTT + TCP_TIMEOUT_MIN with more than
    // one segment out: 100 + 202 ms.
    let mut s = linux6_sent(3);
    assert_eq!(s.next_timeout(), Some(302.0));
    s.at(302.0);
    s.expect(tx(seg(MSS, 3), MSS).at(302.0));
    assert_eq!(s.dut.counters().loss_probes, 1);
}

#[test]
fn linux6_pto_adds_rto_min_with_one_segment_out_capped_at_the_rto() {
    // One segment: 2·SRTT + rto_min = 400 ms after sending at 100 — but the RTO is
    // due at 100 + 300: the probe goes then.
    let mut s = linux6_sent(1);
    assert_eq!(s.next_timeout(), Some(400.0));
    s.at(400.0);
    s.expect(tx(1, MSS).at(400.0));
    assert_eq!(s.dut.counters().loss_probes, 1);
    // With a 300 ms SRTT the sum, 800 ms, is below the RTO of 300 + 600: not capped.
    let peer = PeerOpts {
        rtt: 300.0,
        ..PeerOpts::default()
    };
    let mut s = Script::server(Profile::Linux6.config(), peer);
    s.write(MSS as usize);
    s.expect(tx(1, MSS).at(300.0));
    assert_eq!(s.next_timeout(), Some(300.0 + 600.0 + 200.0));
}

#[test]
fn linux6_every_ack_rearms_the_probe() {
    let mut s = linux6_sent(4);
    s.at(200.0);
    s.send(ack(seg(MSS, 2)));
    // SRTT moves with the 100 ms sample; the probe is 2·SRTT + 2 ms from this ACK.
    let srtt = ms(s.dut.srtt().unwrap());
    assert_eq!(s.next_timeout(), Some(200.0 + 2.0 * srtt + 2.0));
}

#[test]
fn linux6_probes_with_new_data_when_the_window_allows() {
    let mut cfg = Profile::Linux6.config();
    cfg.initial_window = 2;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((4 * MSS) as usize);
    s.expect_burst(1, 2, MSS, 100.0);
    s.at(302.0);
    s.expect(tx(seg(MSS, 3), MSS).at(302.0));
    let c = *s.dut.counters();
    assert_eq!((c.loss_probes_new, c.loss_probes_retrans), (1, 0));
}

#[test]
fn linux6_one_probe_per_flight_and_dsack_marks_it_unnecessary() {
    // Three segments all delivered, their ACKs lost: one probe (the last segment),
    // then no second probe until the flight is acknowledged; the DSACK of the probe
    // says it was not needed, and cwnd stays.
    let mut s = linux6_sent(3);
    s.at(302.0);
    s.expect(tx(seg(MSS, 3), MSS).at(302.0));
    // The probe restarted the RTO (302 + 300); no second probe before it.
    s.at(601.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().loss_probes, 1, "one probe per flight");
    let cwnd = s.dut.cwnd();
    s.send(ack(seg(MSS, 4)).sack(&[(seg(MSS, 3), seg(MSS, 4))]));
    let c = *s.dut.counters();
    assert_eq!((c.loss_probes_unnecessary, c.loss_probe_recovery), (1, 0));
    assert!(s.dut.cwnd() >= cwnd);
}
