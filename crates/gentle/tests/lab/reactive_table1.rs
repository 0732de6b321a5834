//! `reactive-table1` (`gentle-aggression-sigcomm13.txt` §4, Table 1): every tail-loss
//! pattern ends in a retransmission timeout without the loss probe and in fast
//! recovery (or the probe's own loss detection) with it.

use gentle_lab::programs::reactive_table1;

#[test]
fn every_tail_pattern_recovers_without_an_rto() {
    let rows = reactive_table1::run();
    assert_eq!(rows.len(), 5);
    for r in &rows {
        assert_eq!(r.without.mechanism, "RTO", "{}: {r:?}", r.pattern);
        assert!(r.without.timeouts >= 1);
        assert_eq!(r.reactive.timeouts, 0, "{}: {r:?}", r.pattern);
        assert!(r.reactive.probes >= 1, "{}", r.pattern);
    }
    let mech = |p: &str| {
        rows.iter()
            .find(|r| r.pattern == p)
            .map(|r| r.reactive.mechanism.clone())
            .unwrap()
    };
    assert_eq!(mech("AAAL"), "Reactive loss detection");
    assert_eq!(mech("LLLL"), "FACK fast recovery");
    assert_eq!(mech("≥5 L"), "FACK fast recovery");
    for p in ["AALL", "ALLL"] {
        let m = mech(p);
        assert!(
            m == "early retransmit" || m == "FACK, head timed out",
            "{p}: {m}"
        );
    }
    // With two or more lost the probe's fast recovery beats the timeout.
    for r in &rows[1..] {
        assert!(r.reactive.response_ms < r.without.response_ms, "{r:?}");
    }
}
