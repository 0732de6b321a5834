//! `corrective-pages` at `--quick` size: the direction `gentle-aggression-sigcomm13.txt`
//! §8.4.2 reports for page loads over a lossy mobile link.

use gentle_lab::programs::corrective_pages;

#[test]
fn corrective_shortens_the_tail_of_page_loads_on_3g() {
    let mut plotted = Vec::new();
    let loads = corrective_pages::run(true, |stem, _| plotted.push(stem.to_string()));
    assert_eq!(
        loads.len(),
        5,
        "two desktop pages on two links, the mobile page on 3G"
    );
    assert_eq!(plotted.len(), 5, "one CDF figure per page and link");
    for l in &loads {
        let (b, c) = (&l.baseline, &l.corrective);
        // Every page load completes in both configurations.
        assert_eq!(b.n, 100, "{} {}", l.page, l.link);
        assert_eq!(c.n, 100, "{} {}", l.page, l.link);
        assert!(c.recovered > 0 && b.recovered == 0);
        // One Corrective packet per four segments at most: objects of a few segments
        // (the mobile page's 7 KB) pay the most.
        assert!(
            (5.0..30.0).contains(&c.overhead_pct),
            "{} {}: overhead {}",
            l.page,
            l.link,
            c.overhead_pct
        );
        let cdf = b.cdf.as_deref().expect("a CDF");
        assert!(cdf.len() > 10 && cdf.windows(2).all(|w| w[0].1 <= w[1].1));
        if l.link == "3g" {
            // "Corrective also significantly improves performance in a lossy mobile
            // environment": the 90th percentile drops.
            assert!(c.p90 < b.p90, "{}: p90 {} → {}", l.page, b.p90, c.p90);
        }
        if l.page == "mobile" {
            // The mobile page, fitted to the baseline's load times only: Corrective
            // shortens its median too (the paper: 3644 → 2793 ms).
            assert!(c.p50 < b.p50, "mobile: p50 {} → {}", b.p50, c.p50);
        }
    }
}
