//! The `er-reordering` reproduction (`prr-imc11.txt` §6.1, Table 11) at full size:
//! naive Early Retransmit fires on small reordering — many more fast retransmits and
//! DSACK undo events, nearly no timeouts in Disorder; mitigation 1 alone removes
//! only part of the spurious ones; with both mitigations the undo events fall back to
//! the baseline's while a good share of the Disorder timeouts stay avoided, and
//! responses that lost a packet finish sooner on average.

use gentle::catalogue;
use gentle::runner::VariantResult;

fn mean(v: &VariantResult) -> f64 {
    v.latencies.mean()
}

#[test]
fn er_mitigations() {
    let (_, run) = catalogue::run("er-reordering", false).expect("built in");
    let [linux, naive, m1, both] = &run.variants[..] else {
        panic!("four variants")
    };
    let c = |v: &VariantResult| v.counters;
    assert_eq!(c(linux).early_retrans, 0);
    // Naive ER.
    assert!(c(naive).fast_retrans as f64 > 1.3 * c(linux).fast_retrans as f64);
    assert!(c(naive).undos() > 3 * c(linux).undos());
    assert!((c(naive).timeouts_disorder as f64) < 0.5 * c(linux).timeouts_disorder as f64);
    // Mitigation 1 alone: fewer spurious retransmissions than naive, more than none.
    assert!(c(m1).undos() < c(naive).undos() && c(m1).undos() > c(linux).undos());
    // Both mitigations: the spurious ones are gone, the benefit stays.
    assert!((c(both).undos() as f64) < 1.2 * c(linux).undos() as f64);
    assert!((c(both).timeouts_disorder as f64) < 0.75 * c(linux).timeouts_disorder as f64);
    assert!(c(both).early_retrans_delayed > 0);
    assert!(
        mean(both) < mean(linux),
        "{} vs {}",
        mean(both),
        mean(linux)
    );
}
