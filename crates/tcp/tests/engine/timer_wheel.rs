//! Packet scripts: TCP's timers on Linux's jiffies and timer wheel (`timer_hz`,
//! `timer_phase_us`, `timer_jiffies`; `kernel/time/timer.c` `calc_wheel_index`):
//! a probe and the RTO after it fire at the tick of their wheel bucket, which
//! depends on where `jiffies` stands.

use crate::script;

use gentle_tcp::config::SwitchValue;
use gentle_tcp::{CcAlgorithm, Config, Profile, TlpDetection, TlpFlavour};
use script::*;

const MSS: u32 = 1448;

fn config(hz: i64, jiffies: i64) -> Config {
    let mut c = Profile::Linux26.config();
    c.cc = CcAlgorithm::Reno;
    c.tlp = true;
    c.tlp_flavour = TlpFlavour::Linux310;
    c.tlp_detection = TlpDetection::Basic;
    c.set_switch("timer_hz", SwitchValue::Int(hz)).unwrap();
    c.set_switch("timer_jiffies", SwitchValue::Int(jiffies))
        .unwrap();
    c
}

/// Handshake RTT 100 ms (SRTT 100, RTO 300); ten segments written at 100 ms, none
/// acknowledged: the probe (2·SRTT) and then the RTO (from the probe) fire at
/// `probe` and `rto` ms.
fn probe_then_rto(cfg: Config, probe: f64, rto: f64) {
    let mut s = Script::server(cfg, PeerOpts::default());
    s.write((10 * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.expect_quiet();
    assert_eq!(s.next_timeout(), Some(probe));
    s.at(probe - 1.0);
    s.expect_quiet();
    s.at(probe);
    s.expect(tx(seg(MSS, 10), MSS).at(probe));
    assert_eq!(s.next_timeout(), Some(rto));
    s.at(rto);
    s.expect(tx(1, MSS).at(rto));
    assert_eq!(s.dut.counters().timeouts, 1);
}

#[test]
fn exact_timers_without_a_kernel_clock() {
    probe_then_rto(config(0, 0), 300.0, 600.0);
}

#[test]
fn at_hz_250_the_probe_and_the_rto_wait_for_their_buckets() {
    // Time 0 is a tick of jiffies 0. The probe, 50 jiffies from jiffies 25, is in
    // level 0: the tick after its expiry, 76 (304 ms). The RTO, 75 jiffies from
    // jiffies 76, is in level 1: expiry 151, bucket 152 (608 ms).
    probe_then_rto(config(250, 0), 304.0, 608.0);
    // Four jiffies on, the probe is still one tick late (304 ms) but the RTO's
    // expiry 155 waits for bucket 160: 624 ms.
    probe_then_rto(config(250, 4), 304.0, 624.0);
}

#[test]
fn a_kernel_clock_needs_a_linux_hz() {
    let mut c = Profile::Linux26.config();
    let e = c.set_switch("timer_hz", SwitchValue::Int(200)).unwrap_err();
    assert!(e.expected.contains("250"), "{e:?}");
    assert!(c.set_switch("timer_hz", SwitchValue::Int(300)).is_ok());
}
