//! The token-bucket policer on one link direction (Flach et al., SIGCOMM 2016,
//! §2): a burst up to the bucket passes untouched, a sender above the rate gets
//! the rate, the drops are counted apart, and nothing is queued by it.

use std::time::Duration;

use gentle_sim::link::{
    Admit, Channel, ChannelSpec, ChannelStats, Policer, QueueDiscipline, QueueLimit,
};
use gentle_sim::packet::PacketMeta;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn policed(rate_bps: u64, burst_bytes: u64, link_bps: Option<u64>) -> Channel {
    let spec = ChannelSpec {
        rate_bps: link_bps,
        delay: Duration::from_millis(10),
        queue: QueueDiscipline::DropTail(QueueLimit::Packets(1000)),
        policer: Some(Policer {
            rate_bps,
            burst_bytes,
        }),
        ..ChannelSpec::default()
    };
    Channel::new(spec, 0, 1, ChaCha8Rng::seed_from_u64(1))
}

fn offer(c: &mut Channel, now: u64, bytes: usize) -> Admit {
    let meta = PacketMeta {
        payload: bytes as u32 - 40,
        ..Default::default()
    };
    c.admit(now, bytes, &meta)
}

#[test]
fn a_burst_up_to_the_bucket_passes_untouched_and_the_rest_is_dropped_not_queued() {
    // 20 packets of 1500 bytes at once into a 30 kB bucket on an unlimited link:
    // all leave at once, the 21st is dropped, and nothing waited.
    let mut c = policed(1_000_000, 30_000, None);
    for k in 0..20 {
        assert_eq!(
            offer(&mut c, 0, 1500),
            Admit::Queued { depart_ns: 0 },
            "packet {k}"
        );
    }
    assert_eq!(offer(&mut c, 0, 1500), Admit::DroppedPolicer);
    assert_eq!(offer(&mut c, 1_000_000, 1500), Admit::DroppedPolicer);
    let s = c.stats;
    assert_eq!((s.offered, s.dropped_policer), (22, 2));
    assert_eq!((s.dropped_loss, s.dropped_queue, s.max_queue), (0, 0, 0));
}

#[test]
fn a_sender_above_the_rate_gets_the_rate_for_any_burst() {
    // 10 Mbit/s offered for 20 s; 40-byte ACK-sized packets mixed in.
    for (rate, burst) in [
        (1_000_000u64, 1500u64),
        (2_000_000, 30_000),
        (5_000_000, 200_000),
    ] {
        let mut c = policed(rate, burst, Some(100_000_000));
        let (mut t, mut sent) = (0u64, 0u64);
        while t < 20_000_000_000 {
            let bytes = if t % 10_000_000 == 0 { 40 } else { 1250 };
            if let Admit::Queued { .. } = offer(&mut c, t, bytes) {
                sent += bytes as u64;
            }
            t += 1_000_000;
        }
        let got = (sent - burst) as f64 * 8.0 / 20.0;
        assert!(
            (got - rate as f64).abs() < rate as f64 * 0.01,
            "{got} bit/s through a {rate} bit/s policer"
        );
        let s = c.stats;
        assert_eq!((s.dropped_queue, s.dropped_loss), (0, 0), "{s:?}");
        assert!(s.dropped_policer > 0);
    }
}

#[test]
fn the_policer_counts_in_the_stats_and_adds_up() {
    let mut a = ChannelStats {
        dropped_policer: 3,
        ..Default::default()
    };
    a.add(&ChannelStats {
        dropped_policer: 4,
        ..Default::default()
    });
    assert_eq!(a.dropped_policer, 7);
    // Zero is left out of the JSON (the reports of scenarios without a policer do
    // not change), anything else is there.
    let zero = serde_json::to_value(ChannelStats::default()).unwrap();
    assert!(zero.get("dropped_policer").is_none());
    assert_eq!(serde_json::to_value(a).unwrap()["dropped_policer"], 7);
}
