//! Loss models, reordering, duplication and link timing: measured rates within
//! statistical bounds, exact drops for the deterministic models.

use gentle_sim::loss::{AppliesTo, DropCount, Loss, LossModel};
use gentle_sim::packet::PacketMeta;
use gentle_sim::rng;

fn data(flow: u32, rel_seq: u64, payload: u32) -> PacketMeta {
    PacketMeta {
        flow,
        payload,
        rel_seq,
        ..Default::default()
    }
}

fn rate(model: LossModel, n: usize, seed: u64) -> (f64, Vec<bool>) {
    let mut l = Loss::new(model, AppliesTo::All);
    let mut r = rng::stream(seed, 7);
    let drops: Vec<bool> = (0..n)
        .map(|i| l.drop(&data(1, i as u64 * 1000, 1000), &mut r))
        .collect();
    (
        drops.iter().filter(|d| **d).count() as f64 / n as f64,
        drops,
    )
}

/// |observed − p| within 5 standard errors.
fn within(obs: f64, p: f64, n: usize) -> bool {
    let se = (p * (1.0 - p) / n as f64).sqrt();
    (obs - p).abs() <= 5.0 * se + 1e-12
}

#[test]
fn bernoulli_rate_matches_p() {
    for p in [0.01, 0.02, 0.1, 0.5] {
        let (r, _) = rate(LossModel::Bernoulli { p }, 200_000, 3);
        assert!(within(r, p, 200_000), "p={p} measured {r}");
    }
    assert_eq!(rate(LossModel::Bernoulli { p: 0.0 }, 10_000, 1).0, 0.0);
    assert_eq!(rate(LossModel::Bernoulli { p: 1.0 }, 10_000, 1).0, 1.0);
}

/// P(loss | previous packet lost) when packets are offered `spacing_ns` apart.
fn conditional_after_loss(model: LossModel, spacing_ns: u64, n: usize) -> f64 {
    let mut l = Loss::new(model, AppliesTo::All);
    let mut r = rng::stream(11, 7);
    let d: Vec<bool> = (0..n)
        .map(|i| l.drop_at(&data(1, i as u64, 1000), i as u64 * spacing_ns, &mut r))
        .collect();
    let after: Vec<bool> = d.windows(2).filter(|w| w[0]).map(|w| w[1]).collect();
    after.iter().filter(|x| **x).count() as f64 / after.len() as f64
}

#[test]
fn correlated_loss_raises_only_within_a_burst() {
    let m = LossModel::Correlated {
        p: 0.2,
        p_after_loss: 0.9,
        burst_gap_ns: 500_000,
    };
    // 100 µs apart: one burst, the raised probability applies.
    let inside = conditional_after_loss(m.clone(), 100_000, 200_000);
    assert!((inside - 0.9).abs() < 0.02, "within a burst: {inside}");
    // 1 ms apart: every packet starts a burst, so a loss does not raise the next.
    let apart = conditional_after_loss(m, 1_000_000, 200_000);
    assert!((apart - 0.2).abs() < 0.02, "across bursts: {apart}");
    // Without a gap the raise follows any loss, however late.
    let classic = LossModel::Correlated {
        p: 0.2,
        p_after_loss: 0.9,
        burst_gap_ns: 0,
    };
    let late = conditional_after_loss(classic, 1_000_000_000, 200_000);
    assert!((late - 0.9).abs() < 0.02, "no burst gap: {late}");
}

#[test]
fn correlated_loss_has_stationary_rate_and_conditional_rate() {
    let (p, q) = (0.01, 0.5);
    let n = 400_000;
    let (r, d) = rate(
        LossModel::Correlated {
            p,
            p_after_loss: q,
            burst_gap_ns: 0,
        },
        n,
        5,
    );
    // Stationary loss rate of the two-state chain: p / (1 + p − q).
    let pi = p / (1.0 + p - q);
    assert!((r - pi).abs() < 0.15 * pi, "stationary {pi} measured {r}");
    // P(loss | previous lost) ≈ q.
    let (mut after, mut lost_after) = (0, 0);
    for w in d.windows(2) {
        if w[0] {
            after += 1;
            lost_after += w[1] as u32;
        }
    }
    let cond = lost_after as f64 / after as f64;
    assert!(within(cond, q, after), "conditional {cond}");
}

#[test]
fn gilbert_elliott_rate_matches_chain() {
    let (p, r, lg, lb) = (0.02, 0.25, 0.001, 0.6);
    let n = 400_000;
    let (x, _) = rate(
        LossModel::GilbertElliott {
            p,
            r,
            loss_good: lg,
            loss_bad: lb,
        },
        n,
        9,
    );
    let pi_bad = p / (p + r);
    let expect = pi_bad * lb + (1.0 - pi_bad) * lg;
    assert!(
        (x - expect).abs() < 0.1 * expect,
        "expected {expect} measured {x}"
    );
}

#[test]
fn drop_list_drops_exact_new_segments_only_once() {
    let mut l = Loss::new(
        LossModel::DropList {
            indices: vec![2, 4],
            count: DropCount::Segments,
        },
        AppliesTo::All,
    );
    let mut r = rng::stream(1, 1);
    let seq = [1u64, 1001, 2001, 3001, 1001, 4001, 3001];
    let got: Vec<bool> = seq
        .iter()
        .map(|&s| l.drop(&data(1, s, 1000), &mut r))
        .collect();
    // New segments 1..5 are 1,1001,2001,3001,4001; the 2nd and 4th drop, their
    // retransmissions pass.
    assert_eq!(got, [false, true, false, true, false, false, false]);
    // A pure ACK is never a data segment.
    assert!(!l.drop(&data(1, 0, 0), &mut r));
}

#[test]
fn drop_list_by_transmission_counts_retransmissions() {
    let mut l = Loss::new(
        LossModel::DropList {
            indices: vec![1, 2],
            count: DropCount::Transmissions,
        },
        AppliesTo::All,
    );
    let mut r = rng::stream(1, 1);
    let got: Vec<bool> = [1u64, 1, 1]
        .iter()
        .map(|&s| l.drop(&data(1, s, 500), &mut r))
        .collect();
    assert_eq!(got, [true, true, false]);
}

#[test]
fn tail_drop_drops_last_n_segments_once() {
    // A 10 000-byte response in 1448-byte segments: 6 full segments and 1 of 1312.
    let mss = 1448u64;
    let (start, end) = (1u64, 10_001u64);
    for n in 0..=8u32 {
        let mut l = Loss::new(LossModel::TailDrop { n }, AppliesTo::All);
        let mut r = rng::stream(2, 2);
        let mut dropped = Vec::new();
        let mut s = start;
        while s < end {
            let len = (end - s).min(mss) as u32;
            let m = PacketMeta {
                flow: 3,
                payload: len,
                rel_seq: s,
                message: Some((start, end)),
                ..Default::default()
            };
            if l.drop(&m, &mut r) {
                dropped.push(s);
            }
            s += len as u64;
        }
        let first = 7usize.saturating_sub(n as usize) as u64;
        let expect: Vec<u64> = (first..7u64).map(|k| start + k * mss).collect();
        assert_eq!(dropped, expect, "n = {n}");
        // Retransmissions of dropped segments pass.
        for &d in &dropped {
            let m = PacketMeta {
                flow: 3,
                payload: 1448,
                rel_seq: d,
                message: Some((start, end)),
                ..Default::default()
            };
            assert!(!l.drop(&m, &mut r));
        }
    }
}

#[test]
fn applies_to_restricts_the_model() {
    let mut l = Loss::new(LossModel::Bernoulli { p: 1.0 }, AppliesTo::Data);
    let mut r = rng::stream(1, 1);
    assert!(l.drop(&data(1, 1, 100), &mut r));
    assert!(!l.drop(&data(1, 1, 0), &mut r));
    let mut l = Loss::new(LossModel::Bernoulli { p: 1.0 }, AppliesTo::Control);
    assert!(!l.drop(&data(1, 1, 100), &mut r));
    assert!(l.drop(&data(1, 1, 0), &mut r));
}

#[test]
fn burst_position_loss_rises_along_the_burst_and_resets_after_a_gap() {
    // Bursts of 10 packets 100 µs apart, bursts 10 ms apart: the k-th packet of each
    // burst is lost with probability p·(1 + slope·(k − 1)).
    let (p, slope) = (0.01, 0.5);
    let mut l = Loss::new(
        LossModel::BurstPosition {
            p,
            slope,
            rest_of_burst: None,
        },
        AppliesTo::All,
    );
    let mut r = rng::stream(11, 7);
    let bursts = 40_000;
    let mut lost = [0usize; 10];
    for b in 0..bursts {
        for k in 0..10u64 {
            let t = b as u64 * 10_000_000 + k * 100_000;
            if l.drop_at(
                &data(1, (b * 10 + k as usize) as u64 * 1000, 1000),
                t,
                &mut r,
            ) {
                lost[k as usize] += 1;
            }
        }
    }
    for (k, &n) in lost.iter().enumerate() {
        let want = p * (1.0 + slope * k as f64);
        let got = n as f64 / bursts as f64;
        assert!(
            within(got, want, bursts),
            "position {}: {got} vs {want}",
            k + 1
        );
    }
    // ACKs and other flows do not advance a flow's position.
    let mut l = Loss::new(
        LossModel::BurstPosition {
            p: 1e-12,
            slope: 1e13,
            rest_of_burst: None,
        },
        AppliesTo::All,
    );
    let mut r = rng::stream(12, 7);
    assert!(
        !l.drop_at(&data(1, 0, 1000), 0, &mut r),
        "first position: p ≈ 0"
    );
    assert!(!l.drop_at(&data(1, 0, 0), 1, &mut r));
    assert!(
        !l.drop_at(&data(2, 0, 1000), 2, &mut r),
        "first packet of flow 2"
    );
    assert!(
        l.drop_at(&data(1, 1000, 1000), 3, &mut r),
        "second in flow 1's burst"
    );
    assert!(
        !l.drop_at(&data(1, 2000, 1000), 3 + 600_000, &mut r),
        "after a gap"
    );
}

/// `draws = "position"`: a packet's fate depends on its connection, position and
/// transmission number, not on when it arrives or what arrived before it; arrival
/// draws do depend on the order.
#[test]
fn position_draws_do_not_depend_on_arrival_order() {
    use gentle_sim::link::{Admit, Channel, ChannelSpec, Draws};
    let spec = |draws| ChannelSpec {
        loss: LossModel::Bernoulli { p: 0.2 },
        draws,
        ..Default::default()
    };
    // 200 segments of 3 connections, each sent twice (a retransmission of each).
    let mut pkts: Vec<PacketMeta> = Vec::new();
    for round in 0..2 {
        for k in 0..200u64 {
            let _ = round;
            pkts.push(data((k % 3) as u32, 1 + (k / 3) * 1000, 1000));
        }
    }
    let fates = |draws, order: &[usize], gap: u64| {
        let mut c = Channel::new(spec(draws), 0, 1, rng::stream(42, rng::ids::LINK));
        let mut out = vec![false; order.len()];
        for (t, &i) in order.iter().enumerate() {
            let a = c.admit(t as u64 * gap, 1040, &pkts[i]);
            c.propagation(pkts[i].payload, t as u64 * gap);
            out[i] = a == Admit::DroppedLoss;
        }
        out
    };
    let forward: Vec<usize> = (0..400).collect();
    // Another order: connections interleaved differently, the first transmission of
    // each position still before its second.
    let mut other: Vec<usize> = (0..200).rev().collect();
    other.extend((200..400).rev());
    let a = fates(Draws::Position, &forward, 1000);
    let b = fates(Draws::Position, &other, 77_777);
    assert_eq!(a, b);
    let dropped = a.iter().filter(|&&d| d).count();
    assert!((40..=120).contains(&dropped), "{dropped} of 400 at p = 0.2");
    // A retransmission draws afresh: not every first-transmission loss repeats.
    assert!((0..200).any(|i| a[i] && !a[i + 200]));
    let x = fates(Draws::Arrival, &forward, 1000);
    let y = fates(Draws::Arrival, &other, 1000);
    assert_ne!(x, y, "arrival draws follow the order");
}

#[test]
fn a_bursts_first_loss_takes_the_rest_with_rest_of_burst_and_lossy_bursts_are_counted() {
    // Bursts of 8 packets: the first loss at position k by the position rule; with
    // probability r it takes positions k+1..8 with it, else they follow the rule.
    // The model's counts of lossy bursts agree with a count made here.
    let (p, slope, rest) = (0.02, 0.3, 0.6);
    let mut l = Loss::new(
        LossModel::BurstPosition {
            p,
            slope,
            rest_of_burst: Some(rest),
        },
        AppliesTo::All,
    );
    let mut r = rng::stream(13, 7);
    let bursts = 60_000usize;
    let (mut lossy, mut one, mut two) = (0u64, 0u64, 0u64);
    // Bursts whose first loss was not last: how many lost everything after it.
    let (mut took_rest, mut could) = (0usize, 0usize);
    for b in 0..bursts {
        let mut lost_at = Vec::new();
        for k in 0..8u64 {
            let t = b as u64 * 10_000_000 + k * 100_000;
            if l.drop_at(
                &data(1, (b * 8 + k as usize) as u64 * 1000, 1000),
                t,
                &mut r,
            ) {
                lost_at.push(k);
            }
        }
        if let Some(&first) = lost_at.first()
            && first < 7
        {
            could += 1;
            took_rest += usize::from(lost_at.len() as u64 == 8 - first);
        }
        lossy += u64::from(!lost_at.is_empty());
        one += u64::from(lost_at.len() == 1);
        two += u64::from(lost_at.len() == 2);
    }
    // Without the rest taken, the rest is lost only by the rule (rarely all of it).
    let got = took_rest as f64 / could as f64;
    assert!((got - rest).abs() < 0.03, "the rest taken: {got} vs {rest}");
    let c = l.burst_counts();
    assert_eq!((c.lossy, c.lost_one, c.lost_two), (lossy, one, two));
    assert!(lossy > 1000 && one > 0 && two > 0, "{c:?}");
    // Bursts longer than Figure 4's ten packets are not counted.
    let mut l = Loss::new(
        LossModel::BurstPosition {
            p: 1.0,
            slope: 0.0,
            rest_of_burst: None,
        },
        AppliesTo::All,
    );
    for k in 0..11u64 {
        l.drop_at(&data(1, k * 1000, 1000), k * 1000, &mut r);
    }
    assert_eq!(l.burst_counts().lossy, 0, "an 11-packet burst");
}

/// `reorder` on a link whose delay variation keeps packets in order: the held-back
/// packet is overtaken by those sent after it, as on a link without the variation,
/// and the others still keep their order (the hold is another path, not a queue
/// they wait behind).
#[test]
fn a_held_back_packet_is_overtaken_on_a_link_with_delay_variation_too() {
    use gentle_sim::link::{Channel, ChannelSpec, Jitter, JitterDist, Reorder};
    use std::time::Duration;
    for jitter in [false, true] {
        let spec = ChannelSpec {
            delay: Duration::from_millis(20),
            reorder: Some(Reorder {
                p: 0.0,
                extra: Duration::from_millis(10),
                packets: [5, 0, 0, 0],
            }),
            jitter: jitter.then_some(Jitter {
                mean: Duration::from_millis(1),
                dist: JitterDist::Exponential,
                correlation: 0.5,
                reorder: false,
            }),
            ..Default::default()
        };
        let mut c = Channel::new(spec, 0, 1, rng::stream(42, rng::ids::LINK));
        // A data packet every millisecond; the fifth is held back 10 ms.
        let arrivals: Vec<(u64, bool)> = (0..20u64)
            .map(|k| {
                let (t, may_overtake, _) = c.propagation(1000, k * 1_000_000);
                (t, may_overtake)
            })
            .collect();
        let held = arrivals[4].0;
        let overtaking = arrivals[5..].iter().filter(|a| a.0 < held).count();
        assert!(
            overtaking >= 7,
            "jitter {jitter}: {overtaking} packets overtake the held one"
        );
        assert!(arrivals[4].1, "the held packet may arrive out of order");
        let others: Vec<u64> = (0..20).filter(|&i| i != 4).map(|i| arrivals[i].0).collect();
        assert!(
            others.windows(2).all(|w| w[0] <= w[1]),
            "jitter {jitter}: the others keep their order"
        );
    }
}
