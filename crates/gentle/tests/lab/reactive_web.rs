//! `reactive-web` (`gentle-aggression-sigcomm13.txt` §8.3, Tables 3–4) at its quick
//! size, on its calibrated population: the loss probe turns timeouts into fast
//! recoveries (fewer timeouts, most of the saving in Open; more fast recovery
//! events), the spurious-timeout undo events fall with them, the probes cost a few
//! percent of the segments at most, and responses get faster on average and in the
//! tail. These are the paper's directions; the report's `[paper]` section gives
//! the sizes beside the paper's.

use gentle_lab::catalogue;

#[test]
fn reactive_converts_tail_timeouts() {
    let (scn, run) = catalogue::run("reactive-web", true).expect("built in");
    let [linux, reactive] = &run.variants[..] else {
        panic!("two variants")
    };
    let (l, r) = (linux.counters, reactive.counters);
    assert_eq!(l.loss_probes, 0);
    assert!(
        l.timeouts > 200,
        "too few timeouts to compare: {}",
        l.timeouts
    );
    assert!(r.timeouts < l.timeouts, "{} vs {}", r.timeouts, l.timeouts);
    let saved = l.timeouts - r.timeouts;
    let saved_open = l.timeouts_open.saturating_sub(r.timeouts_open);
    assert!(
        saved_open * 2 > saved,
        "most of the saving in Open: {saved_open} of {saved}"
    );
    assert!(r.recovery_episodes > l.recovery_episodes);
    assert!(r.undos() < l.undos());
    let overhead = r.loss_probes as f64 / r.data_segs_out as f64;
    assert!(
        overhead > 0.0 && overhead < 0.03,
        "probe overhead {overhead}"
    );
    assert!(reactive.latencies.mean() < linux.latencies.mean());
    assert!(reactive.latencies.quantile(0.9) < linux.latencies.quantile(0.9));
    // Every number of the paper has its row beside gentle's.
    let judged = gentle_lab::paper::judge(&scn, &run);
    assert_eq!(judged.len(), 16);
    assert!(judged.iter().all(|j| j.gentle.is_some()));
}
