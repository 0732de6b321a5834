//! `poll_transmit_into` — the segment built in the caller's buffer, as the simulator
//! builds it in its packet slab — sends exactly what `poll_transmit` sends, segment
//! for segment, whatever the profile and extension, through losses, recoveries,
//! probes and timeouts; and leaves the buffer untouched when nothing is due (the
//! driver checks that on every call).

use bytes::Bytes;
use gentle_tcp::{Config, Profile, Segment};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::pair::{Next, Pair};

/// One-way delay 20 ms; a 1 ms-per-segment bottleneck for the server's data.
const ONE_WAY_NS: u64 = 20_000_000;
const SPACING_NS: u64 = 1_000_000;

/// Every segment either side sent, in order, on a transfer of `bytes` that loses
/// the server's data segments with probability `p_loss` (seeded).
fn transfer(cfg: &Config, seed: u64, bytes: usize, p_loss: f64, into: bool) -> Vec<Segment> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut losses = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut p = Pair::open(cfg.clone(), &mut rng, ONE_WAY_NS, SPACING_NS);
    p.into = into;
    let mut sent = Vec::new();
    let mut written = false;
    for _ in 0..200_000 {
        if !written && p.server.is_established() {
            p.server.write(Bytes::from(vec![7u8; bytes]));
            p.server.close();
            written = true;
        }
        p.server_output(&mut |s| {
            sent.push(s.clone());
            losses.gen_bool(p_loss)
        });
        p.client_output();
        while p.client.read().is_some() {}
        let Some(next) = p.next() else { break };
        match &next {
            Next::ToServer(s) => sent.push(s.clone()),
            Next::ToClient(s) if s.payload.is_empty() => sent.push(s.clone()),
            _ => {}
        }
        p.handle(next);
    }
    assert!(
        p.client.peer_closed(),
        "the transfer completes (seed {seed})"
    );
    sent
}

fn configs() -> Vec<(&'static str, Config)> {
    let mut out: Vec<(&'static str, Config)> = Profile::ALL
        .iter()
        .map(|&p| (p.name(), p.config()))
        .collect();
    let linux310 = Profile::Linux310.config();
    out.push((
        "proactive",
        Config {
            proactive: true,
            ..linux310.clone()
        },
    ));
    out.push((
        "corrective",
        Config {
            corrective: true,
            ..linux310.clone()
        },
    ));
    out.push((
        "ecn",
        Config {
            ecn: true,
            ..linux310
        },
    ));
    out
}

#[test]
fn poll_transmit_into_sends_what_poll_transmit_sends() {
    for (name, cfg) in configs() {
        for seed in 0..6 {
            let plain = transfer(&cfg, seed, 60_000, 0.15, false);
            let into = transfer(&cfg, seed, 60_000, 0.15, true);
            assert!(
                plain.len() > 40,
                "{name}, seed {seed}: a transfer took place"
            );
            assert_eq!(
                plain, into,
                "{name}, seed {seed}: the two entry points differ"
            );
        }
    }
}
