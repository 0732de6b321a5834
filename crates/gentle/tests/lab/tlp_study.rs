//! `tlp-study` (`tlp-measurement-tum13.txt` §3.4, Table 4, Figures 4–5) at its quick
//! size: the loss probe cuts the time to the first retransmission of a tail drop
//! sharply at 10 ms RTT, less at 100 ms, and hardly at 800 ms; plain and ER behave
//! alike on tail drops (no duplicate ACKs); without loss all three are equal.

use gentle_lab::programs::tlp_study::{self, Point};

fn get<'a>(pts: &'a [Point], net: &str, cfg: &str, n: u32) -> &'a Point {
    pts.iter()
        .find(|p| p.network == net && p.config == cfg && p.drops == n)
        .expect("measured")
}

#[test]
fn table4_shape() {
    let pts = tlp_study::run(true);
    let rec = |net, cfg| get(&pts, net, cfg, 5).t_recover.mean;
    let tot = |net, cfg| get(&pts, net, cfg, 5).t_total.mean;
    assert!(rec("high-speed", "TLP") < 0.5 * rec("high-speed", "ER"));
    assert!(rec("mobile", "TLP") < 0.9 * rec("mobile", "ER"));
    let sat = rec("satellite", "TLP") / rec("satellite", "ER");
    assert!((0.9..1.1).contains(&sat), "satellite TLP/ER {sat}");
    for net in ["high-speed", "mobile"] {
        assert!(tot(net, "TLP") < tot(net, "ER"), "{net}");
        let r = rec(net, "plain") / rec(net, "ER");
        assert!((0.9..1.1).contains(&r), "{net} plain/ER {r}");
    }
    // No loss: the same transfer for all three.
    for net in ["high-speed", "mobile", "satellite"] {
        let base = get(&pts, net, "ER", 0).t_total.mean;
        for cfg in ["plain", "TLP"] {
            let x = get(&pts, net, cfg, 0).t_total.mean;
            assert!((x - base).abs() < 0.01 * base, "{net} {cfg}: {x} vs {base}");
        }
    }
    // Every cell measured, with a spread (the documented jitter).
    assert!(
        pts.iter()
            .filter(|p| p.drops > 0)
            .all(|p| p.t_recover.n > 0)
    );
    assert!(get(&pts, "mobile", "ER", 5).t_total.sd > 0.0);
}
