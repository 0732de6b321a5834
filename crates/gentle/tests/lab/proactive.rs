//! The Proactive reproductions at their quick size (`gentle-aggression-sigcomm13.txt`
//! §6, §8.2, §8.5): the directional claims.
//!
//! - `proactive-table6`: Proactive on the backend leg cuts the backend's
//!   retransmission rate several times (paper: 0.91% → 0.13%) and the response
//!   time in the mean and at the 99th percentile (paper: −13%, −46%), at 100%
//!   overhead on the backend leg only.
//! - `combined-table2`: with Reactive on the client leg as well, mean and 99th
//!   percentile fall (paper: −14%, −37%).
//! - `proactive-tso`: copies behind a send of 8 frames bring duplicate ACKs and a
//!   spurious fast retransmission without SACK; with offload off, none (Figure 8).
//! - `proactive-fig11`: the mean reduction grows with the baseline backend
//!   retransmission rate (paper: from 6% to 20%).

use gentle_lab::catalogue;

#[test]
fn proactive_on_the_backend_masks_its_losses() {
    let (_, run) = catalogue::run("proactive-table6", true).expect("built in");
    let [linux, pro] = &run.variants[..] else {
        panic!("two variants")
    };
    let rate = |v: &gentle_lab::runner::VariantResult| {
        v.backend.data_retrans_segs() as f64 / v.backend.data_segs_out as f64
    };
    assert!(
        rate(linux) > 0.005 && rate(linux) < 0.02,
        "baseline backend retransmission rate {}",
        rate(linux)
    );
    assert!(
        rate(pro) * 4.0 < rate(linux),
        "{} vs {}",
        rate(pro),
        rate(linux)
    );
    assert_eq!(linux.backend.proactive_copies, 0);
    assert_eq!(pro.counters.proactive_copies, pro.backend.proactive_copies);
    assert!(pro.backend.proactive_repairs > 0);
    assert!(pro.latencies.mean() < linux.latencies.mean() * 0.97);
    assert!(pro.latencies.quantile(0.99) < linux.latencies.quantile(0.99) * 0.8);
    assert!(pro.latencies.quantile(0.25) <= linux.latencies.quantile(0.25));
}

#[test]
fn proactive_and_reactive_together_cut_the_tail() {
    let (_, run) = catalogue::run("combined-table2", true).expect("built in");
    let [linux, both] = &run.variants[..] else {
        panic!("two variants")
    };
    assert!(both.counters.loss_probes > 0);
    assert!(both.backend.proactive_copies > 0);
    assert_eq!(
        both.backend.loss_probes, 0,
        "the backend leg runs without probes"
    );
    assert!(both.latencies.mean() < linux.latencies.mean());
    assert!(both.latencies.quantile(0.99) < linux.latencies.quantile(0.99) * 0.9);
}

#[test]
fn offload_with_copies_retransmits_spuriously() {
    let (_, run) = catalogue::run("proactive-tso", true).expect("built in");
    let [tso, off] = &run.variants[..] else {
        panic!("two variants")
    };
    assert_eq!(
        tso.counters.fast_retrans, 1,
        "TSO 8: one spurious fast retransmit"
    );
    assert_eq!(
        tso.counters.proactive_repairs, 1,
        "the copy repaired the loss too"
    );
    assert_eq!(
        off.counters.retrans_segs, 0,
        "offload off: no retransmission"
    );
    assert_eq!(off.counters.proactive_repairs, 1);
}

#[test]
fn the_gain_grows_with_the_backends_retransmission_rate() {
    // Figure 11: the mean reduction grows with the baseline's retransmission rate.
    let pts = gentle_lab::programs::proactive_fig11::run(true);
    assert!(pts.len() >= 5);
    for w in pts.windows(2) {
        assert!(
            w[1].baseline_retrans_pct > w[0].baseline_retrans_pct,
            "{pts:?}"
        );
    }
    for p in &pts {
        assert!(
            p.proactive_retrans_pct * 3.0 < p.baseline_retrans_pct,
            "{p:?}"
        );
        assert!(p.mean_reduction_pct > 0.0, "{p:?}");
    }
    let (first, last) = (&pts[0], &pts[pts.len() - 1]);
    assert!(
        last.mean_reduction_pct > first.mean_reduction_pct + 5.0,
        "{first:?} → {last:?}"
    );
}
