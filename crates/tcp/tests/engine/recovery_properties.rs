//! Properties of the fast-recovery algorithms over random recovery episodes, through
//! the public `recovery` API alone. An episode starts with FlightSize segments out, some
//! lost; every ACK delivers (cumulatively or by SACK) some segments and may mark more
//! lost; the sender then transmits while pipe < cwnd (RFC 6675 §5), as much as the
//! application has. Checked against the specifications:
//!
//! - PRR (RFC 6937 §3, `prr-imc11.txt` Algorithm 2, RFC 9937 §6): while pipe >
//!   ssthresh the sender sends exactly CEIL(prr_delivered · ssthresh / RecoverFS) −
//!   prr_out in total; at or below ssthresh, no ACK sends more than its reduction bound
//!   (CRB: prr_delivered − prr_out; SSRB: MAX(that, DeliveredData) + 1; RFC 9937:
//!   MAX(that, DeliveredData), plus one on a safe ACK) nor lifts pipe above ssthresh;
//!   CRB is strictly packet-conserving (prr_out ≤ prr_delivered); recovery ends at
//!   cwnd = ssthresh;
//! - rate halving (`prr-imc11.txt` §3.2, Linux `tcp_cwnd_down`): cwnd never grows, one
//!   segment off on every second ACK that shows progress down to the floor, never
//!   above pipe + 1 after such an ACK (so at most one segment per ACK), and cwnd =
//!   min(cwnd, ssthresh) at the end;
//! - RFC 6675 §5: cwnd = ssthresh throughout, so each ACK sends ssthresh − pipe;
//! - RFC 3517 as `prr-imc11.txt` Algorithm 1: cwnd = ssthresh = FlightSize/2 at entry
//!   whatever congestion control chose.

use gentle_tcp::CcAlgorithm;
use gentle_tcp::RecoveryAlgorithm;
use gentle_tcp::cc::{Cc, Window};
use gentle_tcp::recovery::{AckSample, Recovery, RecoveryStart};
use proptest::prelude::*;

/// One ACK of the episode, as generated: segments it delivers, segments it marks
/// lost, whether it advances snd.una.
#[derive(Clone, Copy, Debug)]
struct Ack {
    delivered: u32,
    lost: u32,
    una: bool,
}

#[derive(Clone, Debug)]
struct Episode {
    cc: CcAlgorithm,
    flight: u32,
    lost: u32,
    /// Segments the entering ACK delivers (SACKs reaching the threshold).
    first: u32,
    acks: Vec<Ack>,
    /// New segments the application still has (`None`: unlimited).
    data: Option<u32>,
}

fn episode() -> impl Strategy<Value = Episode> {
    (
        prop_oneof![Just(CcAlgorithm::Reno), Just(CcAlgorithm::Cubic)],
        4u32..400,
        0.0f64..1.0,
        1u32..4,
        prop::collection::vec((0u32..4, prop::bool::weighted(0.1), any::<bool>()), 1..300),
        prop::option::of(0u32..200),
    )
        .prop_map(|(cc, flight, lost_frac, first, acks, data)| {
            let lost = ((flight as f64 * lost_frac) as u32).clamp(1, flight - 1);
            let first = first.min(flight - lost);
            let acks = acks
                .into_iter()
                .map(|(d, l, una)| Ack {
                    delivered: d,
                    lost: l as u32,
                    una,
                })
                .collect();
            Episode {
                cc,
                flight,
                lost,
                first,
                acks,
                data,
            }
        })
}

/// What happened at one ACK.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// pipe after the ACK, before sending.
    pipe: u32,
    delivered: u32,
    una: bool,
    newly_lost: bool,
    cwnd_before: u32,
    cwnd_after: u32,
    /// Segments sent in answer.
    sent: u32,
    /// The application had less than cwnd − pipe to send.
    app_limited: bool,
    /// prr_delivered and prr_out before this ACK.
    delivered_total_before: u64,
    out_before: u64,
    counts_after: Option<(u64, u64)>,
}

struct Run {
    ssthresh: u32,
    cwnd_min: u32,
    /// pipe when recovery started.
    start_pipe: u32,
    cwnd_after_enter: u32,
    ssthresh_after_enter: u32,
    steps: Vec<Step>,
    cwnd_at_exit: u32,
    cwnd_after_exit: u32,
}

fn run(alg: RecoveryAlgorithm, e: &Episode) -> Run {
    let mut cc = Cc::new(e.cc, false);
    let mut w = Window {
        cwnd: e.flight,
        ssthresh: gentle_tcp::cc::INFINITE_SSTHRESH,
        cwnd_cnt: 0,
    };
    w.ssthresh = cc.ssthresh(&w);
    let ssthresh = w.ssthresh;
    let cwnd_min = cc.min_cwnd(&w);
    let mut pipe = e.flight - e.lost - e.first;
    let mut rec = Recovery::new(alg);
    rec.on_enter(
        &mut w,
        &RecoveryStart {
            prior_cwnd: e.flight,
            pipe,
            prior_in_flight: e.flight,
            flight_size: e.flight,
            cwnd_min,
        },
    );
    let (cwnd_after_enter, ssthresh_after_enter) = (w.cwnd, w.ssthresh);
    let mut data = e.data;
    let (mut delivered_total, mut out) = (0u64, 0u64);
    let mut steps = Vec::new();
    let first = Ack {
        delivered: e.first,
        lost: 0,
        una: false,
    };
    for a in std::iter::once(first).chain(e.acks.iter().copied()) {
        let delivered = a.delivered.min(pipe);
        let lost = a.lost.min(pipe - delivered);
        pipe -= delivered + lost;
        let cwnd_before = w.cwnd;
        let (delivered_total_before, out_before) = (delivered_total, out);
        delivered_total += delivered as u64;
        rec.on_ack(
            &mut w,
            &AckSample {
                pipe,
                delivered,
                snd_una_advanced: a.una,
                newly_lost: lost > 0,
            },
        );
        let room = w.cwnd.saturating_sub(pipe);
        let sent = data.map_or(room, |d| room.min(d));
        if let Some(d) = data.as_mut() {
            *d -= sent;
        }
        rec.on_sent(sent);
        out += sent as u64;
        steps.push(Step {
            pipe,
            delivered,
            una: a.una,
            newly_lost: lost > 0,
            cwnd_before,
            cwnd_after: w.cwnd,
            sent,
            app_limited: sent < room,
            delivered_total_before,
            out_before,
            counts_after: rec.prr_counts(),
        });
        pipe += sent;
        if pipe == 0 {
            // Nothing in flight and nothing sent: a timeout would follow.
            break;
        }
    }
    let cwnd_at_exit = w.cwnd;
    rec.on_exit(&mut w);
    Run {
        ssthresh,
        cwnd_min,
        start_pipe: e.flight - e.lost - e.first,
        cwnd_after_enter,
        ssthresh_after_enter,
        steps,
        cwnd_at_exit,
        cwnd_after_exit: w.cwnd,
    }
}

fn check_prr(alg: RecoveryAlgorithm, e: &Episode) -> Result<(), TestCaseError> {
    let r = run(alg, e);
    let ss = r.ssthresh as u64;
    // RFC 6937: RecoverFS = snd.nxt − snd.una; RFC 9937 §6: RecoverFS = pipe.
    let recover_fs = match alg {
        RecoveryAlgorithm::PrrRfc9937 => r.start_pipe,
        _ => e.flight,
    }
    .max(1) as u64;
    prop_assert_eq!(
        r.ssthresh_after_enter,
        r.ssthresh,
        "PRR keeps CC's ssthresh"
    );
    for s in &r.steps {
        let delivered = s.delivered_total_before + s.delivered as u64;
        let out = s.out_before + s.sent as u64;
        prop_assert_eq!(s.counts_after, Some((delivered, out)), "{:?}", s);
        // RFC 9937 §6: the first retransmission goes out whatever the bound.
        let forced = alg == RecoveryAlgorithm::PrrRfc9937 && s.out_before == 0;
        if s.pipe as u64 > ss {
            let target = (delivered * ss).div_ceil(recover_fs);
            let mut want = target.saturating_sub(s.out_before);
            if forced && want == 0 {
                want = 1;
            }
            if s.app_limited {
                prop_assert!((s.sent as u64) < want, "{:?}", s);
            } else {
                prop_assert_eq!(s.sent as u64, want, "proportional: {:?}", s);
            }
        } else {
            let behind = delivered.saturating_sub(s.out_before);
            let safe = s.una && !s.newly_lost;
            let bound = match alg {
                RecoveryAlgorithm::PrrCrb => behind,
                RecoveryAlgorithm::Prr => behind.max(s.delivered as u64) + 1,
                _ => behind.max(s.delivered as u64) + safe as u64,
            };
            let limit = bound.min(ss - s.pipe as u64);
            if forced && limit == 0 {
                prop_assert!(s.sent <= 1, "{:?}", s);
            } else {
                prop_assert!(s.sent as u64 <= limit, "reduction bound {}: {:?}", limit, s);
                if !s.app_limited {
                    prop_assert_eq!(s.sent as u64, limit, "{:?}", s);
                }
            }
        }
        if alg == RecoveryAlgorithm::PrrCrb {
            prop_assert!(
                out <= delivered,
                "CRB sent {} for {} delivered",
                out,
                delivered
            );
        }
    }
    prop_assert_eq!(r.cwnd_after_exit, r.ssthresh.max(1));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn prr_ssrb_sends_in_proportion_then_within_the_slow_start_bound(e in episode()) {
        check_prr(RecoveryAlgorithm::Prr, &e)?;
    }

    #[test]
    fn prr_crb_sends_in_proportion_and_conserves_packets(e in episode()) {
        check_prr(RecoveryAlgorithm::PrrCrb, &e)?;
    }

    #[test]
    fn prr_rfc9937_sends_in_proportion_then_within_its_bound(e in episode()) {
        check_prr(RecoveryAlgorithm::PrrRfc9937, &e)?;
    }

    #[test]
    fn rate_halving_takes_one_segment_off_every_second_ack(e in episode()) {
        let r = run(RecoveryAlgorithm::RateHalving, &e);
        prop_assert_eq!(r.cwnd_after_enter, e.flight, "no cut at entry");
        let mut odd = false;
        for s in &r.steps {
            prop_assert!(s.cwnd_after <= s.cwnd_before, "cwnd grew: {:?}", s);
            let progress = s.delivered > 0 || s.una;
            if !progress {
                prop_assert_eq!(s.cwnd_after, s.cwnd_before);
                continue;
            }
            let off = odd && s.cwnd_before > r.cwnd_min;
            odd = !odd;
            let want = (s.cwnd_before - off as u32).min(s.pipe + 1);
            prop_assert_eq!(s.cwnd_after, want, "{:?} (floor {})", s, r.cwnd_min);
            prop_assert!(s.sent <= 1, "{:?}", s);
        }
        prop_assert_eq!(r.cwnd_after_exit, r.cwnd_at_exit.min(r.ssthresh).max(1));
    }

    #[test]
    fn rfc6675_holds_cwnd_at_ssthresh(e in episode()) {
        let r = run(RecoveryAlgorithm::Rfc6675, &e);
        prop_assert_eq!(r.cwnd_after_enter, r.ssthresh);
        for s in &r.steps {
            prop_assert_eq!(s.cwnd_after, r.ssthresh);
            if !s.app_limited {
                prop_assert_eq!(s.sent, r.ssthresh.saturating_sub(s.pipe), "{:?}", s);
            }
        }
        prop_assert_eq!(r.cwnd_after_exit, r.ssthresh);
    }

    #[test]
    fn rfc3517_halves_the_flight_whatever_the_controller(e in episode()) {
        let r = run(RecoveryAlgorithm::Rfc3517, &e);
        let half = (e.flight / 2).max(2);
        prop_assert_eq!(r.ssthresh_after_enter, half);
        prop_assert_eq!(r.cwnd_after_enter, half);
        for s in &r.steps {
            prop_assert_eq!(s.cwnd_after, half);
            if !s.app_limited {
                prop_assert_eq!(s.sent, half.saturating_sub(s.pipe), "{:?}", s);
            }
        }
        prop_assert_eq!(r.cwnd_after_exit, half);
    }
}
