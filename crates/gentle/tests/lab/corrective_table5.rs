//! `corrective-table5` at `--quick` size: the directions `gentle-aggression-sigcomm13.txt`
//! §8.4.1 reports.

use gentle_lab::programs::corrective_table5::{self, Cell};

fn cell<'a>(cells: &'a [Cell], table: &str, loss: &str) -> &'a Cell {
    cells
        .iter()
        .find(|c| c.table == table && c.loss == loss)
        .unwrap()
}

#[test]
fn corrective_cuts_latency_and_redundant_syns_complement_it() {
    let cells = corrective_table5::run(true);
    const MEAN: usize = 3;
    const P99: usize = 2;
    for c in &cells {
        let base = &c.configs[0];
        let corr = c.config("corrective");
        assert_eq!(base.n, corr.n, "every query completes in both");
        assert_eq!((base.recovered, base.overhead_pct), (0, 0.0));
        assert!(
            corr.recovered > 0,
            "({}) {}: no 0-RTT recovery",
            c.table,
            c.loss
        );
        // "Corrective reduces average latency" in every setting of Table 5.
        assert!(
            c.delta("corrective", MEAN) < -3.0,
            "({}) {}: mean {:+.1}%",
            c.table,
            c.loss,
            c.delta("corrective", MEAN)
        );
        // Timeouts turn into 0-RTT recoveries or fast retransmissions.
        assert!(corr.timeouts < base.timeouts);
        // The tail gets no worse (the 99th percentile sits on an RTT multiple).
        assert!(
            c.delta("corrective", P99) < 1.0,
            "({}) {}: p99 {:+.1}%",
            c.table,
            c.loss,
            c.delta("corrective", P99)
        );
    }
    // Without handshakes, Corrective covers the whole flow: the 99th percentile
    // drops under both loss models (Table 5b).
    for loss in ["random", "correlated"] {
        assert!(cell(&cells, "b", loss).delta("corrective", P99) < -15.0);
    }
    // Overhead: one Corrective packet per 16 MSS on long responses, about 10%.
    let long = cell(&cells, "c", "random").config("corrective");
    assert!(
        (5.0..15.0).contains(&long.overhead_pct),
        "{}",
        long.overhead_pct
    );
    // Redundant SYNs help on their own, and with Corrective more than either alone.
    for loss in ["random", "correlated"] {
        let a = cell(&cells, "a", loss);
        assert!(a.delta("redundant-syn", MEAN) < 0.0, "{loss}");
        let both = a.delta("redundant-syn+corrective", P99);
        assert!(both < a.delta("redundant-syn", P99) - 10.0, "{loss}");
        assert!(both < a.delta("corrective", P99) - 10.0, "{loss}");
    }
}
