//! Properties of the congestion controllers over random windows, round-trip times and
//! ACK patterns, through the public `cc` API alone (a `Window` and the
//! `CongestionControl` trait), against the specifications rather than the code:
//!
//! - both: slow start adds the segments acknowledged, up to ssthresh (RFC 5681 §3.1,
//!   with byte counting as Linux's `tcp_slow_start`); congestion avoidance never
//!   shrinks the window;
//! - Reno: one segment per window of segments acknowledged (RFC 5681 §3.1, Linux
//!   `tcp_cong_avoid_ai`), and ssthresh = max(cwnd/2, 2) (RFC 5681 eq. 4);
//! - CUBIC (RFC 9438, Linux `tcp_cubic.c`): ssthresh = β·cwnd with β = 0.7 (§4.6); the
//!   window follows W_cubic(t) = C·(t − K)³ + W_max with C = 0.4 and
//!   K = ∛((W_max − cwnd_epoch)/C) (§4.2), or the Reno-friendly estimate W_est when
//!   that is larger (§4.3); fast convergence lowers W_max to W_max·(1 + β)/2 after a
//!   loss below the previous W_max (§4.7); and it grows at most by half a window per
//!   round trip (§4.2, target ≤ 1.5·cwnd).

use gentle_tcp::Instant;
use gentle_tcp::cc::{CongestionControl, Cubic, INFINITE_SSTHRESH, Reno, Window};
use proptest::prelude::*;

const BETA: f64 = 0.7;
const C: f64 = 0.4;
/// RFC 9438 §4.3: α_cubic = 3·(1 − β)/(1 + β).
const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

fn window(cwnd: u32, ssthresh: u32) -> Window {
    Window {
        cwnd,
        ssthresh,
        cwnd_cnt: 0,
    }
}

/// Drives `cc` for `rounds` round trips of `rtt_ms` from `t0_ms`, always
/// cwnd-limited: each round the receiver acknowledges the window, `per_ack` segments
/// per ACK, the ACKs spread evenly over the round. Returns (ms since `t0_ms`, cwnd)
/// at the start of every round.
fn grow(
    cc: &mut impl CongestionControl,
    w: &mut Window,
    t0_ms: u64,
    rtt_ms: u64,
    per_ack: u32,
    rounds: u64,
) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let ms = 1_000_000;
    let mut budget = 1_000_000u64;
    for r in 0..rounds {
        // Bounded work: a convex region left to run grows without end.
        budget = match budget.checked_sub(w.cwnd as u64) {
            Some(b) => b,
            None => break,
        };
        let start = (t0_ms + r * rtt_ms) * ms;
        out.push((r * rtt_ms, w.cwnd));
        let acks = w.cwnd.div_ceil(per_ack) as u64;
        let mut left = w.cwnd;
        for i in 0..acks {
            let now = Instant::from_nanos(start + (i + 1) * rtt_ms * ms / acks);
            let acked = per_ack.min(left);
            left -= acked;
            cc.cong_avoid(w, acked, now, rtt_ms as u32);
        }
    }
    out
}

/// What RFC 9438 says cwnd is `t` seconds into an epoch that began at `cwnd_epoch`
/// after a loss that set `w_max`: max(W_cubic(t), W_est(t)).
fn rfc9438(t: f64, w_max: f64, cwnd_epoch: f64, rtt_s: f64) -> f64 {
    let k = ((w_max - cwnd_epoch).max(0.0) / C).cbrt();
    let cubic = C * (t - k).powi(3) + w_max;
    let est = cwnd_epoch + ALPHA * t / rtt_s;
    cubic.max(est)
}

/// Checks a CUBIC epoch against `rfc9438` for about two K: within 3 segments plus 1.5%
/// of W_max (integer arithmetic, a window that moves once per ACK, and Linux's
/// α = 8/15 in place of 0.529), plus what W_est gains in 1/32 s: Linux recomputes its
/// target at most every 1000/32 ms while cwnd is unchanged (`bictcp_update`), which
/// matters at round-trip times of a few milliseconds.
fn check_epoch(cc: &mut Cubic, w: &mut Window, t0_ms: u64, rtt_ms: u64, per_ack: u32, w_max: f64) {
    let cwnd_epoch = w.cwnd as f64;
    let k = ((w_max - cwnd_epoch).max(0.0) / C).cbrt();
    // Enough round trips for the concave and the convex region, bounded in work.
    let rounds = ((2.0 * k * 1000.0 / rtt_ms as f64) as u64).clamp(10, 3000);
    for (t_ms, cwnd) in grow(cc, w, t0_ms, rtt_ms, per_ack, rounds) {
        let want = rfc9438(
            t_ms as f64 / 1000.0,
            w_max,
            cwnd_epoch,
            rtt_ms as f64 / 1000.0,
        );
        let tol = 3.0 + 0.015 * w_max + ALPHA * 32.0 / rtt_ms as f64;
        assert!(
            (cwnd as f64 - want).abs() <= tol,
            "t = {t_ms} ms (K = {k:.2} s): cwnd {cwnd}, RFC 9438 {want:.1} (W_max {w_max}, epoch {cwnd_epoch})"
        );
    }
}

/// A loss at `cwnd`: ssthresh from `cc`, and cwnd cut to it (as recovery ends).
fn loss(cc: &mut impl CongestionControl, w: &mut Window) {
    w.ssthresh = cc.ssthresh(w);
    w.cwnd = w.ssthresh;
    w.cwnd_cnt = 0;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn slow_start_adds_what_is_acknowledged_up_to_ssthresh(
        cwnd in 1u32..5000,
        room in 1u32..5000,
        acked in 1u32..64,
        cubic in any::<bool>(),
    ) {
        let ssthresh = cwnd + room;
        let mut w = window(cwnd, ssthresh);
        let now = Instant::from_millis(1000);
        if cubic {
            Cubic::default().cong_avoid(&mut w, acked, now, 50);
        } else {
            Reno.cong_avoid(&mut w, acked, now, 50);
        }
        if acked <= room {
            prop_assert_eq!(w.cwnd, cwnd + acked);
        } else {
            // Slow start stops at ssthresh; the rest is congestion avoidance, which
            // adds at most one segment per two acknowledged (RFC 9438 §4.2's 1.5·cwnd).
            let rest = acked - room;
            prop_assert!(w.cwnd >= ssthresh && w.cwnd <= ssthresh + rest.div_ceil(2), "cwnd {}", w.cwnd);
        }
    }

    #[test]
    fn reno_adds_one_segment_per_window_acknowledged(
        start in 4u32..400,
        acks in prop::collection::vec(1u32..4, 1..3000),
    ) {
        let mut w = window(start, start);
        let mut reno = Reno;
        let mut total = 0u64;
        for (i, &a) in acks.iter().enumerate() {
            let before = w.cwnd;
            reno.cong_avoid(&mut w, a, Instant::from_millis(i as u64), 50);
            prop_assert!(w.cwnd >= before && w.cwnd <= before + 1);
            total += a as u64;
        }
        // The increments a window at a time: W, W+1, W+2, ... segments each.
        let (mut cwnd, mut left) = (start as u64, total);
        while left >= cwnd {
            left -= cwnd;
            cwnd += 1;
        }
        prop_assert_eq!(w.cwnd as u64, cwnd);
    }

    #[test]
    fn reno_halves_the_window(cwnd in 1u32..1_000_000) {
        let w = window(cwnd, INFINITE_SSTHRESH);
        prop_assert_eq!(Reno.ssthresh(&w), (cwnd / 2).max(2));
    }

    #[test]
    fn cubic_reduces_to_beta_times_the_window(cwnd in 1u32..1_000_000) {
        let w = window(cwnd, INFINITE_SSTHRESH);
        let ss = Cubic::default().ssthresh(&w);
        prop_assert!(ss >= 2);
        if cwnd >= 3 {
            // Linux's β is 717/1024 = 0.7002.
            let want = BETA * cwnd as f64;
            prop_assert!((ss as f64 - want).abs() <= 1.0 + 0.0003 * cwnd as f64, "{} → {}", cwnd, ss);
        }
    }

}

proptest! {
    // Each case drives up to a million ACKs.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cubic_follows_the_cubic_curve_or_the_reno_friendly_estimate(
        w_max in 20u32..1500,
        rtt_ms in 5u64..300,
        per_ack in 1u32..3,
        t0_ms in 0u64..100_000,
    ) {
        let mut cc = Cubic::default();
        let mut w = window(w_max, INFINITE_SSTHRESH);
        loss(&mut cc, &mut w);
        check_epoch(&mut cc, &mut w, t0_ms, rtt_ms, per_ack, w_max as f64);
    }

    #[test]
    fn cubic_fast_convergence_lowers_w_max_after_a_loss_below_it(
        w1 in 40u32..1000,
        grown_rounds in 0u64..200,
        rtt_ms in 10u64..200,
    ) {
        let mut cc = Cubic::default();
        let mut w = window(w1, INFINITE_SSTHRESH);
        loss(&mut cc, &mut w);
        let rounds = grown_rounds.min(1_000_000 / (3 * w1 as u64));
        grow(&mut cc, &mut w, 0, rtt_ms, 1, rounds);
        let w2 = w.cwnd;
        let t0 = (rounds + 1) * rtt_ms;
        loss(&mut cc, &mut w);
        // §4.7: a loss below the last W_max means others are taking bandwidth:
        // release some by remembering less than the window at the loss.
        let w_max = if w2 < w1 { w2 as f64 * (1.0 + BETA) / 2.0 } else { w2 as f64 };
        check_epoch(&mut cc, &mut w, t0, rtt_ms, 1, w_max);
    }

    #[test]
    fn cubic_grows_at_most_half_a_window_per_round_trip(
        w_max in 10u32..1000,
        start_frac in 0.3f64..1.5,
        rtt_ms in 1u64..500,
        per_ack in 1u32..3,
    ) {
        let mut cc = Cubic::default();
        let mut w = window(w_max, INFINITE_SSTHRESH);
        loss(&mut cc, &mut w);
        w.cwnd = ((w_max as f64 * start_frac) as u32).max(w.ssthresh);
        let rounds = 400;
        let pts = grow(&mut cc, &mut w, 0, rtt_ms, per_ack, rounds);
        for pair in pts.windows(2) {
            let (a, b) = (pair[0].1, pair[1].1);
            prop_assert!(b >= a, "cwnd shrank in congestion avoidance: {} → {}", a, b);
            prop_assert!(b <= a + a / 2 + 1, "one round trip grew {} → {}", a, b);
        }
    }
}
