//! `reactive-web` (`gentle-aggression-sigcomm13.txt` §8.3, Tables 3–4) at its quick
//! size: with tail-heavy loss the loss probe removes most timeouts — nearly all of
//! those in Open — and the spurious-timeout undo events with them, at a probe
//! overhead well under 1% of segments, and no response gets slower on average.

use gentle::catalogue;

#[test]
fn reactive_converts_tail_timeouts() {
    let (_, run) = catalogue::run("reactive-web", true).expect("built in");
    let [linux, reactive] = &run.variants[..] else {
        panic!("two variants")
    };
    let (l, r) = (linux.counters, reactive.counters);
    assert_eq!(l.loss_probes, 0);
    assert!(
        l.timeouts > 50,
        "too few timeouts to compare: {}",
        l.timeouts
    );
    assert!(
        r.timeouts * 2 < l.timeouts,
        "{} vs {}",
        r.timeouts,
        l.timeouts
    );
    assert!(r.timeouts_open * 4 < l.timeouts_open);
    assert!(r.undos() < l.undos());
    let overhead = r.loss_probes as f64 / r.segs_out as f64;
    assert!(
        overhead > 0.0 && overhead < 0.01,
        "probe overhead {overhead}"
    );
    assert!(reactive.latencies.mean() <= linux.latencies.mean());
    assert!(reactive.latencies.quantile(0.9) <= linux.latencies.quantile(0.9));
}
