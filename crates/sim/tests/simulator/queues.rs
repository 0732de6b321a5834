//! Router queue disciplines on one link direction: priority drop
//! (`fast-start-and-sessions.txt` §3.3, §7.2), RED with ECN marking (§4.3, Floyd &
//! Jacobson 1993, RFC 3168 §5), acks-first scheduling (§5), and the queue
//! statistics. The channel is driven directly: packet slots are plain numbers.

use std::time::Duration;

use bytes::Bytes;
use gentle_sim::link::{
    Admit, Channel, ChannelSpec, ChannelStats, QueueDiscipline, QueueLimit, Red, RedParams,
    RedVerdict, Scheduling,
};
use gentle_sim::packet::PacketMeta;
use gentle_tcp::{Ecn, Flags, Segment};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const MBIT: u64 = 1_000_000;
/// 1000 bytes at 1 Mbit/s.
const TX_1000: u64 = 8_000_000;

fn channel(spec: ChannelSpec) -> Channel {
    Channel::new(spec, 0, 1, ChaCha8Rng::seed_from_u64(1))
}

fn spec(limit: QueueLimit) -> ChannelSpec {
    ChannelSpec {
        rate_bps: Some(MBIT),
        delay: Duration::from_millis(10),
        queue: QueueDiscipline::DropTail(limit),
        ..ChannelSpec::default()
    }
}

fn data(low: bool) -> Segment {
    let mut flags = Flags::ACK;
    if low {
        flags = flags | Flags::FAST_START;
    }
    Segment {
        flags,
        payload: Bytes::from(vec![0u8; 1000]),
        ..Segment::default()
    }
}

fn ack() -> Segment {
    Segment {
        flags: Flags::ACK,
        ..Segment::default()
    }
}

/// Offers `seg` in slot `slot` at `now`; its wire size is 1000 bytes for data and
/// 40 for an ACK.
fn offer(c: &mut Channel, now: u64, slot: u32, seg: &mut Segment) -> Admit {
    let bytes = if seg.payload.is_empty() { 40 } else { 1000 };
    let meta = PacketMeta {
        payload: seg.payload.len() as u32,
        ..Default::default()
    };
    if c.managed() {
        c.admit_managed(now, bytes, &meta, seg, slot)
    } else {
        c.admit(now, bytes, &meta)
    }
}

fn evicted(c: &mut Channel) -> Vec<u32> {
    let mut v = Vec::new();
    while let Some(s) = c.pop_evicted() {
        v.push(s);
    }
    v
}

#[test]
fn priority_drop_evicts_the_low_priority_packet_nearest_the_tail() {
    let mut c = channel(ChannelSpec {
        priority_drop: true,
        ..spec(QueueLimit::Packets(3))
    });
    assert!(c.managed());
    // 0 goes straight to the transmitter; 1 (low), 2, 3 (low) wait: full.
    assert_eq!(
        offer(&mut c, 0, 0, &mut data(false)),
        Admit::Queued { depart_ns: TX_1000 }
    );
    assert_eq!(
        offer(&mut c, 0, 1, &mut data(true)),
        Admit::Waiting {
            wake_ns: Some(TX_1000)
        }
    );
    assert_eq!(
        offer(&mut c, 0, 2, &mut data(false)),
        Admit::Waiting { wake_ns: None }
    );
    assert_eq!(
        offer(&mut c, 0, 3, &mut data(true)),
        Admit::Waiting { wake_ns: None }
    );
    assert_eq!(c.waiting(), vec![1, 2, 3]);
    // A normal packet arrives at a full queue: the newest low-priority one goes.
    assert_eq!(
        offer(&mut c, 1000, 4, &mut data(false)),
        Admit::Waiting { wake_ns: None }
    );
    assert_eq!(evicted(&mut c), vec![3]);
    assert_eq!(c.waiting(), vec![1, 2, 4]);
    // Again: now the older low-priority packet.
    assert_eq!(
        offer(&mut c, 2000, 5, &mut data(false)),
        Admit::Waiting { wake_ns: None }
    );
    assert_eq!(evicted(&mut c), vec![1]);
    assert_eq!(c.waiting(), vec![2, 4, 5]);
    // No low-priority packet waits: the arriving one is dropped.
    assert_eq!(
        offer(&mut c, 3000, 6, &mut data(false)),
        Admit::DroppedQueue
    );
    assert!(evicted(&mut c).is_empty());
    // A low-priority arrival is itself nearest the tail.
    offer(&mut c, 3000, 7, &mut data(false)); // dropped too
    let mut q = channel(ChannelSpec {
        priority_drop: true,
        ..spec(QueueLimit::Packets(2))
    });
    offer(&mut q, 0, 0, &mut data(false));
    offer(&mut q, 0, 1, &mut data(true));
    offer(&mut q, 0, 2, &mut data(false));
    assert_eq!(offer(&mut q, 0, 3, &mut data(true)), Admit::DroppedQueue);
    assert!(evicted(&mut q).is_empty());
    assert_eq!(q.waiting(), vec![1, 2]);
    assert_eq!(q.stats.dropped_queue_low, 1);

    assert_eq!(c.stats.dropped_queue, 4);
    assert_eq!(c.stats.dropped_queue_low, 2);
    assert_eq!(c.stats.max_queue, 3);
    // The transmitter then sends what is left, in FIFO order.
    let s = c.next_tx(TX_1000).expect("a packet waits");
    assert_eq!(
        (s.slot, s.depart_ns, s.wake_ns),
        (2, 2 * TX_1000, Some(2 * TX_1000))
    );
    assert_eq!(c.next_tx(2 * TX_1000).map(|s| s.slot), Some(4));
    let last = c.next_tx(3 * TX_1000).expect("one more");
    assert_eq!((last.slot, last.wake_ns), (5, None));
    assert_eq!(c.next_tx(4 * TX_1000), None);
}

#[test]
fn without_priority_drop_a_full_queue_drops_the_arrival() {
    let mut c = channel(spec(QueueLimit::Packets(2)));
    assert!(!c.managed());
    offer(&mut c, 0, 0, &mut data(false));
    offer(&mut c, 0, 1, &mut data(true));
    offer(&mut c, 0, 2, &mut data(true));
    assert_eq!(offer(&mut c, 0, 3, &mut data(false)), Admit::DroppedQueue);
    assert_eq!(c.stats.dropped_queue, 1);
    assert_eq!(
        c.stats.dropped_queue_low, 0,
        "no priority without priority drop"
    );
}

#[test]
fn priority_drop_with_a_byte_limit_evicts_until_the_arrival_fits() {
    let mut c = channel(ChannelSpec {
        priority_drop: true,
        ..spec(QueueLimit::Bytes(2000))
    });
    offer(&mut c, 0, 0, &mut data(false)); // transmitting
    offer(&mut c, 0, 1, &mut data(true));
    offer(&mut c, 0, 2, &mut data(false));
    // 2000 bytes wait; another 1000 need one eviction.
    assert!(matches!(
        offer(&mut c, 0, 3, &mut data(false)),
        Admit::Waiting { .. }
    ));
    assert_eq!(evicted(&mut c), vec![1]);
    // Only normal packets wait now: the arrival is dropped and nothing evicted.
    assert_eq!(offer(&mut c, 0, 4, &mut data(false)), Admit::DroppedQueue);
    assert!(evicted(&mut c).is_empty());
    assert_eq!(c.waiting(), vec![2, 3]);
}

fn red(w_q: f64, min_th: f64, max_th: f64, max_p: f64, gentle: bool) -> RedParams {
    RedParams {
        w_q,
        min_th,
        max_th,
        max_p,
        gentle,
        ..RedParams::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn red_average_and_probability_by_hand() {
    // w_q = 0.02, a queue that grows by one packet per arrival.
    let mut r = Red::new(red(0.02, 0.05, 0.5, 0.1, false), Some(MBIT));
    let never = || 0.999_999;
    // avg_k = 0.98 avg_{k-1} + 0.02 q_k, by hand:
    let steps = [
        // (q, avg, count, pb, pa)
        (0, 0.0, -1, 0.0, 0.0),
        (1, 0.02, -1, 0.0, 0.0),
        (2, 0.0596, 0, 0.1 * 0.0096 / 0.45, 0.1 * 0.0096 / 0.45),
        // 0.98 · 0.0596 + 0.06; pb = 0.1 (0.118408 − 0.05) / 0.45, pa = pb / (1 − pb)
        (
            3,
            0.118408,
            1,
            0.015_201_777_777_777_8,
            0.015_436_439_094_573_69,
        ),
        // 0.98 · 0.118408 + 0.08; pa = pb / (1 − 2 pb)
        (
            4,
            0.196_039_84,
            2,
            0.032_453_297_777_777_8,
            0.034_705_942_340_657_2,
        ),
    ];
    for (i, &(q, avg, count, pb, pa)) in steps.iter().enumerate() {
        r.update_avg(q, 0);
        assert_eq!(r.decide(never), RedVerdict::Pass, "step {i}");
        assert!(close(r.avg, avg), "step {i}: avg {} != {avg}", r.avg);
        assert_eq!(r.count, count, "step {i}");
        assert!(close(r.pb, pb), "step {i}: pb {} != {pb}", r.pb);
        assert!(close(r.pa, pa), "step {i}: pa {} != {pa}", r.pa);
    }
    // Back below min_th: count returns to −1.
    let mut r2 = Red::new(red(1.0, 5.0, 15.0, 0.1, false), Some(MBIT));
    r2.update_avg(10, 0);
    r2.decide(never);
    assert_eq!(r2.count, 0);
    r2.update_avg(2, 0);
    assert_eq!(r2.decide(|| 0.0), RedVerdict::Pass);
    assert_eq!(r2.count, -1);
}

#[test]
fn red_count_uniformises_the_marks() {
    // avg fixed at 10 (w_q = 1): pb = 0.1 · 5 / 10 = 0.05, pa = pb / (1 − count · pb).
    let mut r = Red::new(red(1.0, 5.0, 15.0, 0.1, false), Some(MBIT));
    let never = || 0.999;
    for count in 0..19 {
        r.update_avg(10, 0);
        assert_eq!(r.decide(never), RedVerdict::Pass, "count {count}");
        assert_eq!(r.count, count);
        assert!(close(r.pb, 0.05));
        assert!(
            close(r.pa, 0.05 / (1.0 - count as f64 * 0.05)),
            "count {count}"
        );
    }
    // The 20th packet since the last mark has pa = 0.05 / (1 − 0.95) = 1.
    r.update_avg(10, 0);
    assert_eq!(r.decide(never), RedVerdict::Early);
    assert_eq!(r.count, 0);
    // A draw below pa chooses the packet and restarts the count.
    r.update_avg(10, 0);
    assert_eq!(r.count, 0);
    assert_eq!(r.decide(|| 0.0526), RedVerdict::Early, "0.0526 < 0.05/0.95");
    assert_eq!(r.count, 0);
    r.update_avg(10, 0);
    assert_eq!(r.decide(|| 0.0527), RedVerdict::Pass, "0.0527 > 0.05/0.95");
}

#[test]
fn red_above_max_th_forces_and_gentle_red_ramps_to_twice_max_th() {
    let mut plain = Red::new(red(1.0, 5.0, 15.0, 0.1, false), Some(MBIT));
    plain.update_avg(15, 0);
    assert_eq!(plain.decide(|| 0.999), RedVerdict::Forced);
    plain.update_avg(14, 0);
    assert_eq!(plain.decide(|| 0.999), RedVerdict::Pass);
    assert!(close(plain.pb, 0.09));

    let mut g = Red::new(red(1.0, 5.0, 15.0, 0.1, true), Some(MBIT));
    g.update_avg(15, 0);
    assert_eq!(g.decide(|| 0.999), RedVerdict::Pass);
    assert!(close(g.pb, 0.1), "max_p at max_th");
    let mut g2 = Red::new(red(1.0, 5.0, 15.0, 0.1, true), Some(MBIT));
    g2.avg = 22.5;
    g2.update_avg(22, 0); // w_q = 1: avg = 22
    assert_eq!(g2.decide(|| 0.999), RedVerdict::Pass);
    assert!(close(g2.pb, 0.1 + 0.9 * 7.0 / 15.0), "pb {}", g2.pb);
    assert!(close(g2.pa, g2.pb), "count 0");
    g2.update_avg(16, 0); // count 1: pb = 0.16, pa = 0.16 / 0.84
    assert_eq!(g2.decide(|| 0.999), RedVerdict::Pass);
    assert!(close(g2.pb, 0.16));
    assert!(close(g2.pa, 0.16 / 0.84));
    g2.update_avg(29, 0); // count 2: pb = 0.94, 2 pb ≥ 1: certain
    assert_eq!(g2.decide(|| 0.999), RedVerdict::Early);
    assert!(close(g2.pb, 0.1 + 0.9 * 14.0 / 15.0));
    assert_eq!(g2.pa, 1.0);
    g2.update_avg(30, 0);
    assert_eq!(g2.decide(|| 0.999), RedVerdict::Forced, "from 2·max_th on");
}

#[test]
fn red_idle_time_correction_decays_the_average() {
    // 8 Mbit/s and 500-byte typical packets: 2 packets per millisecond.
    let mut r = Red::new(red(0.5, 5.0, 15.0, 0.1, false), Some(8 * MBIT));
    r.update_avg(20, 0);
    assert!(close(r.avg, 10.0));
    // Idle 1 ms: m = 2, avg = 10 · 0.5² = 2.5, then 0.5 · 2.5 + 0.5 · 0.
    r.update_avg(0, 1_000_000);
    assert!(close(r.avg, 1.25), "{}", r.avg);
    // Idle less than one typical packet: no extra decay.
    r.update_avg(0, 400_000);
    assert!(close(r.avg, 0.625), "{}", r.avg);
}

fn red_channel(ecn: bool, limit: u32) -> Channel {
    channel(ChannelSpec {
        queue: QueueDiscipline::Red {
            limit: QueueLimit::Packets(limit),
            red: RedParams {
                ecn,
                ..red(1.0, 0.5, 1.0, 0.1, false)
            },
        },
        ..spec(QueueLimit::Unlimited)
    })
}

fn ect(mut s: Segment, e: Ecn) -> Segment {
    s.ecn = e;
    s
}

#[test]
fn red_with_ecn_marks_capable_packets_and_drops_the_others() {
    let mut c = red_channel(true, 10);
    assert!(c.managed());
    // w_q = 1: the average is the queue. 0 transmits, 1 finds an empty queue.
    let mut p0 = ect(data(false), Ecn::Ect0);
    let mut p1 = ect(data(false), Ecn::Ect0);
    offer(&mut c, 0, 0, &mut p0);
    offer(&mut c, 0, 1, &mut p1);
    assert_eq!((p0.ecn, p1.ecn), (Ecn::Ect0, Ecn::Ect0));
    // One waits: avg = 1 = max_th, every packet is chosen.
    let mut p2 = ect(data(false), Ecn::Ect0);
    assert!(matches!(offer(&mut c, 0, 2, &mut p2), Admit::Queued { .. }));
    assert_eq!(p2.ecn, Ecn::Ce);
    let mut p3 = ect(data(false), Ecn::NotEct);
    assert_eq!(offer(&mut c, 0, 3, &mut p3), Admit::DroppedQueue);
    assert_eq!(p3.ecn, Ecn::NotEct);
    let mut p4 = ect(data(false), Ecn::Ect1);
    assert!(matches!(offer(&mut c, 0, 4, &mut p4), Admit::Queued { .. }));
    assert_eq!(p4.ecn, Ecn::Ce);
    let mut p5 = ect(data(false), Ecn::Ce);
    offer(&mut c, 0, 5, &mut p5);
    assert_eq!(p5.ecn, Ecn::Ce, "CE stays CE");
    assert_eq!(c.stats.ecn_marked, 3);
    assert_eq!(c.stats.dropped_red, 1);
    assert_eq!(c.stats.dropped_queue, 1);

    // Without `ecn` the capable packet is dropped too.
    let mut d = red_channel(false, 10);
    offer(&mut d, 0, 0, &mut ect(data(false), Ecn::Ect0));
    offer(&mut d, 0, 1, &mut ect(data(false), Ecn::Ect0));
    let mut x = ect(data(false), Ecn::Ect0);
    assert_eq!(offer(&mut d, 0, 3, &mut x), Admit::DroppedQueue);
    assert_eq!(x.ecn, Ecn::Ect0);
    assert_eq!((d.stats.dropped_red, d.stats.ecn_marked), (1, 0));
}

#[test]
fn a_full_red_buffer_drops_even_a_marked_packet() {
    let mut c = red_channel(true, 2);
    for slot in 0..3 {
        offer(&mut c, 0, slot, &mut ect(data(false), Ecn::Ect0));
    }
    assert_eq!(c.stats.ecn_marked, 1);
    // Two wait now (0 transmits); the next is marked, then refused by the limit.
    let mut p = ect(data(false), Ecn::Ect0);
    assert_eq!(offer(&mut c, 0, 9, &mut p), Admit::DroppedQueue);
    assert_eq!(c.stats.dropped_red, 0, "the limit dropped it, not RED");
    assert_eq!(c.stats.dropped_queue, 1);
}

#[test]
fn red_forced_drop_with_priority_drop_takes_a_low_priority_packet() {
    let mut c = channel(ChannelSpec {
        priority_drop: true,
        queue: QueueDiscipline::Red {
            limit: QueueLimit::Packets(10),
            red: red(1.0, 0.5, 1.0, 0.1, false),
        },
        ..spec(QueueLimit::Unlimited)
    });
    offer(&mut c, 0, 0, &mut data(false)); // transmits
    offer(&mut c, 0, 1, &mut data(true)); // q = 0: passes, waits
    // q = 1 = max_th: forced. A low-priority packet waits: it goes instead.
    assert!(matches!(
        offer(&mut c, 0, 2, &mut data(false)),
        Admit::Waiting { .. }
    ));
    assert_eq!(evicted(&mut c), vec![1]);
    assert_eq!(c.waiting(), vec![2]);
    // Forced again, no low-priority packet: the arrival is dropped.
    assert_eq!(offer(&mut c, 0, 3, &mut data(false)), Admit::DroppedQueue);
    assert_eq!(
        (
            c.stats.dropped_red,
            c.stats.dropped_queue,
            c.stats.dropped_queue_low
        ),
        (2, 2, 1)
    );
}

#[test]
fn acks_first_serves_a_later_ack_before_waiting_data_but_never_preempts() {
    let mut c = channel(ChannelSpec {
        scheduling: Scheduling::AcksFirst,
        ..spec(QueueLimit::Packets(100))
    });
    assert_eq!(
        offer(&mut c, 0, 1, &mut data(false)),
        Admit::Queued { depart_ns: TX_1000 }
    );
    offer(&mut c, 0, 2, &mut data(false));
    offer(&mut c, 0, 3, &mut data(false));
    // A SYN-ACK carries no data but is not a pure ACK.
    let mut synack = Segment {
        flags: Flags::SYN | Flags::ACK,
        ..Segment::default()
    };
    offer(&mut c, 5_000, 4, &mut synack);
    offer(&mut c, 10_000, 5, &mut ack());
    assert_eq!(c.waiting(), vec![5, 2, 3, 4]);
    // The ACK waits for the data packet being sent (no preemption) ...
    let s = c.next_tx(TX_1000).expect("waiting");
    assert_eq!(s.slot, 5);
    assert_eq!(s.depart_ns, TX_1000 + 320_000, "40 bytes after packet 1");
    // ... then the data in order.
    let order: Vec<u32> = std::iter::from_fn(|| {
        let now = c.backlog(0).0 as u64; // any time: the queue decides
        c.next_tx(10 * TX_1000 + now).map(|s| s.slot)
    })
    .collect();
    assert_eq!(order, vec![2, 3, 4]);

    // FIFO keeps the arrival order.
    let mut f = channel(spec(QueueLimit::Packets(100)));
    let mut fifo = channel(ChannelSpec {
        priority_drop: true, // a scheduled queue with FIFO service
        ..spec(QueueLimit::Packets(100))
    });
    for ch in [&mut f, &mut fifo] {
        offer(ch, 0, 1, &mut data(false));
        offer(ch, 0, 2, &mut data(false));
        offer(ch, 10_000, 5, &mut ack());
    }
    assert_eq!(fifo.waiting(), vec![2, 5]);
}

#[test]
fn queue_statistics_by_hand() {
    // Three 1000-byte packets at once at 1 Mbit/s wait 0, 8 and 16 ms.
    for sched in [Scheduling::Fifo, Scheduling::AcksFirst] {
        let mut c = channel(ChannelSpec {
            scheduling: sched,
            ..spec(QueueLimit::Packets(100))
        });
        for slot in 0..3 {
            offer(&mut c, 0, slot, &mut data(false));
        }
        if sched == Scheduling::AcksFirst {
            // The event-driven queue counts a wait when the packet starts.
            assert_eq!(c.stats.queue_integral, 0);
            c.next_tx(TX_1000);
            c.next_tx(2 * TX_1000);
        }
        assert_eq!(c.stats.max_queue, 2, "{sched:?}");
        assert_eq!(c.stats.queue_integral, 3 * TX_1000 as u128, "{sched:?}");
        let mut s = c.stats;
        s.observed_ns = 3 * TX_1000;
        assert_eq!(s.mean_queue(), Some(1.0));
    }
    let a = ChannelStats {
        offered: 3,
        max_queue: 7,
        queue_integral: 10,
        observed_ns: 5,
        ecn_marked: 1,
        dropped_red: 2,
        dropped_queue_low: 3,
        ..Default::default()
    };
    let mut b = ChannelStats {
        offered: 1,
        max_queue: 9,
        queue_integral: 30,
        observed_ns: 15,
        ..Default::default()
    };
    b.add(&a);
    assert_eq!((b.offered, b.max_queue), (4, 9), "max_queue is the larger");
    assert_eq!((b.queue_integral, b.observed_ns), (40, 20));
    assert_eq!(
        (b.ecn_marked, b.dropped_red, b.dropped_queue_low),
        (1, 2, 3)
    );
    assert_eq!(b.mean_queue(), Some(2.0));
    assert_eq!(ChannelStats::default().mean_queue(), None);
}

#[test]
fn red_draws_are_seeded() {
    let run = |seed: u64| {
        let mut c = Channel::new(
            ChannelSpec {
                queue: QueueDiscipline::Red {
                    limit: QueueLimit::Packets(100),
                    red: red(0.2, 2.0, 20.0, 0.5, false),
                },
                ..spec(QueueLimit::Unlimited)
            },
            0,
            1,
            ChaCha8Rng::seed_from_u64(seed),
        );
        (0..60u32)
            .map(|i| offer(&mut c, i as u64 * 1_000_000, i, &mut data(false)))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(3));
    assert_ne!(
        run(3),
        run(4),
        "the draws come from the channel's generator"
    );
}

use crate::common;

/// server — router — client, with a burst source beside the server: a response
/// crosses the 10 Mbit/s router → client link while `burst` fast start packets
/// from `burst` arrive there at 100 Mbit/s.
fn burst_trial(priority_drop: bool, burst: u32) -> gentle_sim::record::TrialResult {
    use common::{chan, exchange, two_hosts};
    use gentle_sim::link::LinkSpec;
    use gentle_sim::loss::LossModel;
    use gentle_sim::packet::Packet;
    use gentle_sim::workload::ConnectionMode;

    let fast = chan(Some(100 * MBIT), 1, LossModel::None);
    let mut bottleneck = chan(Some(10 * MBIT), 5, LossModel::None);
    bottleneck.queue = QueueDiscipline::DropTail(QueueLimit::Packets(30));
    bottleneck.priority_drop = priority_drop;
    let mut s = two_hosts(
        fast.clone(),
        fast.clone(),
        exchange(40, 30_000, 1, ConnectionMode::Fresh),
        gentle_tcp::Config::default(),
    );
    s.nodes = vec![
        "server".into(),
        "client".into(),
        "router".into(),
        "burst".into(),
    ];
    let link = |a: &str, b: &str, ab: &ChannelSpec| LinkSpec {
        a: a.into(),
        b: b.into(),
        a_to_b: ab.clone(),
        b_to_a: fast.clone(),
    };
    s.links = vec![
        link("server", "router", &fast),
        link("burst", "router", &fast),
        link("router", "client", &bottleneck),
    ];
    let mut sim = gentle_sim::Sim::new(&s, 0, 5).expect("valid");
    // The response starts about 14 ms in (handshake, request); the burst lands
    // on the bottleneck as the response's first flight does.
    for i in 0..burst {
        let mut seg = data(true);
        seg.src_port = 9;
        seg.dst_port = 9;
        seg.seq = i * 1000;
        let pkt = Packet {
            src: 3,
            dst: 1,
            seg,
            meta: PacketMeta {
                flow: u32::MAX,
                payload: 1000,
                ..Default::default()
            },
        };
        sim.inject(Duration::from_micros(13_000 + 80 * i as u64), 3, pkt);
    }
    sim.run()
}

#[test]
fn priority_drop_protects_normal_packets_from_a_fast_start_burst() {
    // Alone, the response fits the bottleneck's queue.
    let alone = burst_trial(false, 0);
    assert!(alone.exchanges[0].complete);
    assert_eq!(alone.links.dropped_queue, 0);

    // A burst of 60 fast start packets: with drop-tail the response loses packets
    // too ...
    let tail = burst_trial(false, 60);
    let bott = |r: &gentle_sim::record::TrialResult| {
        let l = r
            .per_link
            .iter()
            .find(|l| &*l.from == "router" && &*l.to == "client");
        l.expect("the bottleneck direction").stats
    };
    assert!(tail.exchanges[0].complete);
    assert!(
        tail.exchanges[0].packets_dropped > 0,
        "drop-tail drops the response's packets"
    );
    assert!(bott(&tail).dropped_queue > 0);
    // ... with priority drop only fast start packets are dropped.
    let pd = burst_trial(true, 60);
    assert!(pd.exchanges[0].complete);
    assert_eq!(pd.exchanges[0].packets_dropped, 0);
    let b = bott(&pd);
    assert!(b.dropped_queue > 0);
    assert_eq!(
        b.dropped_queue, b.dropped_queue_low,
        "only low-priority drops"
    );
    assert_eq!(b.max_queue, 30);
    // And the response is faster for it.
    assert!(pd.exchanges[0].client_ns < tail.exchanges[0].client_ns);
    // Deterministic.
    let again = burst_trial(true, 60);
    assert_eq!(again.per_link, pd.per_link);
    assert_eq!(again.exchanges, pd.exchanges);
}
