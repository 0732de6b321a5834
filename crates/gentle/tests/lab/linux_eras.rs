//! `linux-eras`: four generations of Linux loss recovery on the same losses. The
//! shape the kernel's history predicts: without a probe every tail loss of Table 1
//! costs an RTO; Linux 3.10's probe and Linux 6's RACK-TLP repair them all without
//! one; on the reordering path RACK's time-based detection needs fewer timeouts than
//! delayed Early Retransmit, and each generation answers faster on average.

use gentle_lab::programs::linux_eras;

#[test]
fn each_generation_repairs_more_without_a_timeout() {
    let e = linux_eras::run(true);
    for row in &e.tails {
        let by = |p: &str| row.eras.iter().find(|t| t.profile == p).expect(p);
        for old in ["plain", "linux-2.6"] {
            assert_eq!(by(old).repair, "RTO", "{} {old}", row.pattern);
        }
        for new in ["linux-3.10", "linux-6"] {
            assert_eq!(by(new).timeouts, 0, "{} {new}: {:?}", row.pattern, by(new));
            // (AAAL: the probe waits for a delayed ACK and lands on the RTO time.)
            assert!(by(new).response_ms <= by("linux-2.6").response_ms);
        }
    }
    for t in &e.paths {
        let by = |p: &str| t.rows.iter().find(|r| r.profile == p).expect(p);
        assert!(by("linux-6").timeouts < by("linux-3.10").timeouts, "{t:?}");
        assert!(
            by("linux-3.10").timeouts < by("linux-2.6").timeouts / 2,
            "{t:?}"
        );
        assert!(by("linux-6").rack_timeouts > 0 && by("linux-3.10").rack_timeouts == 0);
        assert!(by("linux-6").early_retrans == 0 && by("linux-3.10").early_retrans > 0);
        assert!(by("linux-3.10").mean_ms < by("linux-2.6").mean_ms, "{t:?}");
        assert!(
            by("linux-6").mean_ms <= by("linux-3.10").mean_ms * 1.01,
            "{t:?}"
        );
    }
}
