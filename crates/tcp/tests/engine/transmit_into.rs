//! `poll_transmit_into` — the segment built in the caller's buffer, as the simulator
//! builds it in its packet slab — sends exactly what `poll_transmit` sends, segment
//! for segment, whatever the profile and extension, through losses, recoveries,
//! probes and timeouts; and leaves the buffer untouched when nothing is due (the
//! driver checks that on every call). Short transfers at 30% loss, longer ones at
//! 15% and 5%.

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

/// Every profile, alone and with each extension or switch that changes what is
/// sent or when.
fn configs() -> Vec<(String, Config)> {
    let mut out = Vec::new();
    for &p in Profile::ALL {
        let base = p.config();
        let variants: Vec<(&str, Config)> = vec![
            ("", base.clone()),
            (
                "+proactive",
                Config {
                    proactive: true,
                    ..base.clone()
                },
            ),
            (
                "+corrective",
                Config {
                    corrective: true,
                    ..base.clone()
                },
            ),
            (
                "+ecn",
                Config {
                    ecn: true,
                    ..base.clone()
                },
            ),
            (
                "+tlp",
                Config {
                    tlp: true,
                    ..base.clone()
                },
            ),
            (
                "+tlp2",
                Config {
                    tlp: true,
                    tlp_max_probes: 2,
                    tlp_flavour: gentle_tcp::TlpFlavour::Rfc8985,
                    ..base.clone()
                },
            ),
            (
                "+faststart",
                Config {
                    fast_start: true,
                    ..base.clone()
                },
            ),
            (
                "+tso4",
                Config {
                    tso: 4,
                    ..base.clone()
                },
            ),
            (
                "+nagle",
                Config {
                    nagle: true,
                    delayed_ack: None,
                    ..base.clone()
                },
            ),
            (
                "+ts-off",
                Config {
                    timestamps: false,
                    ..base.clone()
                },
            ),
            (
                "+sack-off",
                Config {
                    sack: false,
                    ..base.clone()
                },
            ),
            (
                "+corr+pro",
                Config {
                    corrective: true,
                    proactive: true,
                    ..base.clone()
                },
            ),
            (
                "+hz250",
                Config {
                    timer_hz: 250,
                    ..base.clone()
                },
            ),
            (
                "+smallbuf",
                Config {
                    recv_buffer: 8000,
                    ..base.clone()
                },
            ),
        ];
        for (n, c) in variants {
            out.push((format!("{}{}", p.name(), n), c));
        }
    }
    out
}

#[test]
fn poll_transmit_into_sends_what_poll_transmit_sends() {
    for (name, cfg) in configs() {
        for seed in 0..40 {
            let (bytes, p_loss) =
                [(3_000, 0.3), (60_000, 0.15), (200_000, 0.05)][seed as usize % 3];
            let plain = transfer(&cfg, seed, bytes, p_loss, false);
            let into = transfer(&cfg, seed, bytes, p_loss, true);
            let data = plain.iter().filter(|s| !s.payload.is_empty()).count();
            assert!(
                data as f64 >= bytes as f64 / 1460.0,
                "{name}, seed {seed}: the transfer took place"
            );
            assert_eq!(
                plain, into,
                "{name}, seed {seed}: the two entry points differ"
            );
        }
    }
}
