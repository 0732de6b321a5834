//! The `prr-video` reproduction (`prr-imc11.txt` §5.4, Table 10) at its full size
//! on the calibrated DC2 (India) population, checked for what Table 10 says of
//! the three recovery algorithms that the population was not fitted to: Linux's
//! rate halving leaves cwnd below ssthresh after about half of its recoveries, so
//! that slow start follows ("56% of the time"), where PRR and RFC 3517 end at
//! ssthresh (0% and 1%); both spend more of the transfer in recovery than Linux
//! and send more of their bytes in it; RFC 3517's bursts lose more of its fast
//! retransmissions than Linux's.

use gentle_lab::catalogue;
use gentle_tcp::Counters;

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b as f64
}
fn slow_start_after(c: &Counters) -> f64 {
    ratio(c.recovery_exit_slow_start, c.recovery_episodes)
}
fn time_in_recovery(c: &Counters) -> f64 {
    ratio(c.recovery_time_us, c.busy_time_us)
}
fn bytes_in_recovery(c: &Counters) -> f64 {
    ratio(c.bytes_sent_recovery, c.bytes_sent)
}
fn fast_retransmits_lost(c: &Counters) -> f64 {
    ratio(c.lost_retransmit, c.fast_retrans)
}

#[test]
fn prr_video_table10() {
    let (_, run) = catalogue::run("prr-video", false).expect("built in");
    let [linux, rfc, prr] = &run.variants[..] else {
        panic!("three variants")
    };
    let (l, r, p) = (&linux.counters, &rfc.counters, &prr.counters);
    assert!(
        l.recovery_episodes > 10_000,
        "{} recoveries",
        l.recovery_episodes
    );
    // Slow start after fast recovery: Linux 56%, RFC 3517 1%, PRR 0%.
    assert!(
        (0.4..0.7).contains(&slow_start_after(l)),
        "{}",
        slow_start_after(l)
    );
    assert!(slow_start_after(r) < 0.02, "{}", slow_start_after(r));
    assert!(slow_start_after(p) < 0.02, "{}", slow_start_after(p));
    // Time in loss recovery (42.7%, 46.3%, 44.9%) and bytes sent in fast recovery
    // (7%, 12%, 10%): both higher with RFC 3517 and PRR.
    for v in [r, p] {
        assert!(time_in_recovery(v) > time_in_recovery(l));
        assert!(bytes_in_recovery(v) > bytes_in_recovery(l));
    }
    // Fast retransmits lost: 2.4% for Linux, 16.4% for RFC 3517 (here the
    // direction only: 3.8% against 3.4%).
    assert!(fast_retransmits_lost(r) > 1.05 * fast_retransmits_lost(l));
}
