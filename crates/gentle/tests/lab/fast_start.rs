//! The fast start reproductions' directional claims (`fast-start-and-sessions.txt`
//! §4, §5), at their `--quick` size: what the paper says fast start, priority drop,
//! its recovery techniques, RED with ECN and acks-first scheduling do.

use gentle_lab::programs::fast_start::{self, Mean, Point};

fn at<'a>(pts: &'a [Point], bulk: u32, variant: &str) -> &'a Mean {
    &pts.iter()
        .find(|p| p.bulk == bulk)
        .unwrap_or_else(|| panic!("no point with {bulk} bulk connections"))
        .variants
        .iter()
        .find(|v| v.0 == variant)
        .unwrap_or_else(|| panic!("no variant {variant}"))
        .1
}

#[test]
fn fig2_fast_start_is_much_faster_at_low_load_and_priority_drop_changes_nothing() {
    let pts = fast_start::run_figure(&fast_start::FIG2, true);
    let (nr, fs, fsp) = (
        at(&pts, 0, "newreno"),
        at(&pts, 0, "fs"),
        at(&pts, 0, "fs-pdrop"),
    );
    // §4.1: "the improvement is largest (50–65%) when the cross-traffic load is low".
    assert!(fsp.mean_s < 0.7 * nr.mean_s, "{fsp:?} vs {nr:?}");
    // "the difference in performance between fs and fs-pdrop is insignificant".
    assert!((fs.mean_s - fsp.mean_s).abs() < 0.05 * nr.mean_s);
    for p in &pts {
        assert_eq!(p.variants.iter().map(|v| v.1.unfinished).sum::<usize>(), 0);
    }
}

#[test]
fn fig3_the_absolute_gain_grows_with_the_delay() {
    let f2 = fast_start::run_figure(&fast_start::FIG2, true);
    let f3 = fast_start::run_figure(&fast_start::FIG3, true);
    let gain = |pts: &[Point]| at(pts, 0, "newreno").mean_s - at(pts, 0, "fs-pdrop").mean_s;
    assert!(
        gain(&f3) > 2.0 * gain(&f2),
        "{} s vs {} s",
        gain(&f3),
        gain(&f2)
    );
}

#[test]
fn fig4_without_its_recovery_techniques_a_failed_fast_start_is_clearly_worse() {
    let pts = fast_start::run_figure(&fast_start::FIG4, true);
    let high = pts.iter().map(|p| p.bulk).max().unwrap();
    let (nr, fsp, noflr) = (
        at(&pts, high, "newreno"),
        at(&pts, high, "fs-pdrop"),
        at(&pts, high, "fs-pdrop-noflr"),
    );
    // §4.2: "fs-pdrop-noflr performs significantly worse than newreno", fs-pdrop
    // "similar to that of newreno, or marginally worse".
    assert!(noflr.mean_s > 1.5 * nr.mean_s, "{noflr:?} vs {nr:?}");
    assert!(noflr.mean_s > 1.3 * fsp.mean_s, "{noflr:?} vs {fsp:?}");
    assert!(fsp.mean_s < 1.25 * nr.mean_s, "{fsp:?} vs {nr:?}");
    // And at low load fast start still gains.
    assert!(at(&pts, 0, "fs-pdrop").mean_s < 0.7 * at(&pts, 0, "newreno").mean_s);
}

#[test]
fn fig6_with_red_and_ecn_fast_start_gains_even_at_high_load() {
    let pts = fast_start::run_figure(&fast_start::FIG6, true);
    // §4.3: "fs-pdrop ... a 25-50% reduction in completion time compared to
    // newreno even under conditions of high load".
    for p in pts.iter().filter(|p| p.bulk >= 6) {
        let (nr, fsp) = (at(&pts, p.bulk, "newreno"), at(&pts, p.bulk, "fs-pdrop"));
        assert!(
            fsp.mean_s < 0.75 * nr.mean_s,
            "{} bulk: {fsp:?} vs {nr:?}",
            p.bulk
        );
    }
}

#[test]
fn table1_fast_start_without_priority_drop_gains_at_the_others_expense() {
    let rows = fast_start::run_table1(true);
    let row = |v: &str| rows.iter().find(|r| r.variant == v).expect("a row");
    let (nr, fs, fsp) = (row("newreno"), row("fs"), row("fs-pdrop"));
    // Group 1 gains from fast start.
    assert!(fs.group1_fs.mean_s < nr.group1_fs.mean_s);
    assert!(fsp.group1_fs.mean_s < nr.group1_fs.mean_s);
    // Without priority drop, group 2 pays; with it, less.
    assert!(fs.group2_no_fs.mean_s > nr.group2_no_fs.mean_s * 1.05);
    assert!(fsp.group2_no_fs.mean_s < fs.group2_no_fs.mean_s);
}

#[test]
fn table2_acks_first_and_fast_start_each_cut_the_burst_time() {
    let cells = fast_start::run_table2(true);
    let cell = |v: &str, s: &str| {
        cells
            .iter()
            .find(|c| c.variant == v && c.scheduling == s)
            .expect("a cell")
            .burst
            .mean_s
    };
    for v in ["newreno", "fs-pdrop"] {
        assert!(cell(v, "acks-first") < 0.5 * cell(v, "fifo"), "{v}");
    }
    for s in ["fifo", "acks-first"] {
        assert!(cell("fs-pdrop", s) < 0.8 * cell("newreno", s), "{s}");
    }
}

#[test]
fn fig5_priority_drop_makes_the_fast_start_packets_the_ones_dropped() {
    let (_, run) = gentle_lab::catalogue::run("fast-start-fig5", true).expect("built in");
    let links = |name: &str| {
        run.variants
            .iter()
            .find(|v| v.name == name)
            .expect("a variant")
            .links
    };
    let (fs, fsp) = (links("fs"), links("fs-pdrop"));
    // §4.2: without priority drop the overflow falls on whoever arrives (no packet
    // is marked); with it, on the fast start packets first, so far fewer others
    // are dropped.
    assert!(fs.dropped_queue > 0);
    assert_eq!(fs.dropped_queue_low, 0);
    assert!(fsp.dropped_queue_low > 0);
    let normal = |l: &gentle_sim::link::ChannelStats| l.dropped_queue - l.dropped_queue_low;
    assert!(
        2 * normal(&fsp) < normal(&fs),
        "other packets dropped: {} with priority drop, {} without",
        normal(&fsp),
        normal(&fs)
    );
}
