//! The `er-reordering` reproduction (`prr-imc11.txt` §6.1, Table 11) at full size,
//! on the calibrated DC1 population: naive Early Retransmit fires on the
//! population's small reordering — more fast retransmits than Linux, fewer
//! timeouts, most of those in Disorder avoided; mitigation 1 alone keeps most of
//! naive ER's retransmissions; with both mitigations the early retransmits wait
//! while the Disorder timeouts stay avoided, and the median response that lost a
//! packet finishes sooner (its 95% interval below 0). (The population's reordering
//! is rare and its wired clients send no DSACKs, so there are few spurious early
//! retransmits for the mitigations to remove: see the README.)

use gentle_lab::catalogue;
use gentle_lab::runner::VariantResult;

#[test]
fn er_mitigations() {
    let (_, run) = catalogue::run("er-reordering", false).expect("built in");
    let [linux, naive, m1, both] = &run.variants[..] else {
        panic!("four variants")
    };
    let c = |v: &VariantResult| v.counters;
    assert_eq!(c(linux).early_retrans, 0);
    assert!(
        c(linux).timeouts_disorder > 20,
        "{}",
        c(linux).timeouts_disorder
    );
    // Naive ER.
    assert!(c(naive).early_retrans > 0);
    assert!(c(naive).fast_retrans > c(linux).fast_retrans);
    assert!(c(naive).timeouts < c(linux).timeouts);
    assert!((c(naive).timeouts_disorder as f64) < 0.5 * c(linux).timeouts_disorder as f64);
    // Mitigation 1 alone: early retransmits still fire.
    assert!(c(m1).early_retrans > 0 && c(m1).fast_retrans > c(linux).fast_retrans);
    // Both mitigations: the early retransmits wait, the Disorder timeouts still
    // avoided, and a shorter median, not by chance.
    assert!(c(both).early_retrans_delayed > 0);
    assert!((c(both).timeouts_disorder as f64) < 0.5 * c(linux).timeouts_disorder as f64);
    let ci = run.cis[3].as_ref().expect("intervals").percentile(50);
    assert!(ci.ms.hi < 0.0, "{ci:?}");
}
