//! The `prr-latency` reproduction (`prr-imc11.txt` §5.3, Tables 6–9) at its full
//! size, on its calibrated population, checked for the paper's findings that hold
//! on any Web-like workload: Linux ends many recoveries with cwnd below three
//! segments (Table 7: "over 50%" of those of short responses; a sixth of those
//! of Table 9's services, 119 kB on average), PRR and RFC 3517 end at ssthresh, far
//! fewer below 3; PRR has a lower median latency for responses with retransmissions
//! (Table 9), its 95% interval below 0 (the trials are paired: same seeds, same
//! loss patterns). Table 8's fewer timeouts in recovery is not asserted: on the
//! population they fall with PRR and stay with RFC 3517 (about 1,650 per variant).

use gentle_lab::catalogue;
use gentle_lab::runner::VariantResult;

#[test]
fn prr_latency_tables() {
    let (_, run) = catalogue::run("prr-latency", false).expect("built in");
    let [linux, rfc, prr] = &run.variants[..] else {
        panic!("three variants")
    };
    assert!(
        linux.episodes.len() > 500,
        "{} episodes",
        linux.episodes.len()
    );
    let below3 = |v: &VariantResult| v.episodes.cwnd_after.share(|x| x < 3).unwrap();
    let median = |v: &VariantResult| {
        let c = &v.episodes.cwnd_after;
        c.nth(c.len() / 2).unwrap()
    };
    assert!(below3(linux) > 0.15, "Linux below 3: {}", below3(linux));
    // PRR leaves at ssthresh, which is below 3 only for windows of 4 or fewer
    // (Table 7: PRR's 10th percentile is 2, Linux's 25th).
    assert!(
        below3(prr) < below3(linux) / 2.0,
        "PRR below 3: {} Linux {}",
        below3(prr),
        below3(linux)
    );
    assert!(median(prr) >= median(linux) + 3);
    assert!(median(rfc) >= median(linux) + 3);
    // Table 6: PRR is closer to ssthresh just before the exit than Linux.
    let last_median = |v: &VariantResult| {
        let x = &v.episodes.last;
        x.nth(x.len() / 2).unwrap()
    };
    assert!(last_median(prr) > last_median(linux));
    // Table 9: a lower median latency of responses with a retransmission, and
    // not by chance.
    let p50 = |v: &VariantResult| v.latencies.quantile(0.5);
    assert!(
        p50(prr) < p50(linux),
        "PRR {} Linux {}",
        p50(prr),
        p50(linux)
    );
    assert!(p50(rfc) < p50(linux));
    for i in [1, 2] {
        let ci = run.cis[i].as_ref().expect("intervals").percentile(50);
        assert!(ci.ms.hi < 0.0, "{}: {ci:?}", run.variants[i].name);
    }
}
