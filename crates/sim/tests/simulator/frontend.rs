//! Multi-stage services (`gentle-aggression-sigcomm13.txt` Figure 5): a frontend
//! relays each request to a backend over a pool of persistent connections and
//! streams the response back. The frontend's response time includes the backend
//! leg; each leg runs its own configuration; every byte arrives once and intact.

use crate::common;
use std::sync::Arc;

use std::time::Duration;

use common::{chan, exchange};
use gentle_sim::link::LinkSpec;
use gentle_sim::loss::LossModel;
use gentle_sim::workload::{Backend, ConnectionMode, Size};
use gentle_sim::{Setup, Sim};
use gentle_tcp::{Config, Profile};

/// client —20 ms— frontend —`backend_ms`— backend, `n` exchanges of 400 B / 20 KB.
fn three_nodes(backend_ms: u64, loss: f64, backend_cfg: Option<Config>, n: u32) -> Setup {
    let link = |a: &str, b: &str, ms: u64, p: f64| LinkSpec {
        a: a.into(),
        b: b.into(),
        a_to_b: chan(Some(50_000_000), ms, LossModel::Bernoulli { p }),
        b_to_a: chan(Some(50_000_000), ms, LossModel::Bernoulli { p }),
    };
    let mut s = common::two_hosts(
        chan(None, 1, LossModel::None),
        chan(None, 1, LossModel::None),
        exchange(400, 20_000, n, ConnectionMode::Persistent),
        Profile::Linux26.config(),
    );
    s.links = vec![
        link("client", "frontend", 20, 0.0),
        link("frontend", "backend", backend_ms, loss),
    ];
    s.nodes = vec!["client".into(), "frontend".into(), "backend".into()];
    let w = Arc::make_mut(&mut s.workloads[0]);
    w.server = "frontend".into();
    w.backend = Some(Backend {
        node: "backend".into(),
        port: 8080,
        pool: 2,
        request: Size::Fixed(500),
        config: backend_cfg,
    });
    s.time_limit = Duration::from_secs(600);
    s
}

#[test]
fn the_frontend_relays_and_its_response_time_includes_the_backend_leg() {
    for backend_ms in [5, 40] {
        let s = three_nodes(backend_ms, 0.0, None, 5);
        let r = Sim::new(&s, 0, 1).unwrap().run();
        assert_eq!(r.exchanges.len(), 5);
        assert_eq!(r.corrupt_bytes, 0);
        for e in &r.exchanges {
            assert!(e.complete, "{e:?}");
            // Request to the backend and the first response byte back: at least one
            // backend round trip, plus the client leg's for the ACK of the last byte.
            let rt = e.server_ns.unwrap();
            let floor = (2 * backend_ms + 2 * 20) * 1_000_000;
            assert!(rt >= floor, "backend {backend_ms} ms: RT {rt} ns < {floor}");
            // At most one more round trip of each leg (a 20 KB response takes two
            // initial windows of 10 segments).
            let ceiling = floor + (2 * backend_ms + 2 * 20 + 10) * 1_000_000;
            assert!(
                rt < ceiling,
                "backend {backend_ms} ms: RT {rt} ns ≥ {ceiling}"
            );
        }
        // The backend leg's counters are apart: 5 requests of 500 B went to it.
        assert!(r.backend.bytes_sent >= 5 * (500 + 20_000));
    }
}

#[test]
fn each_leg_runs_its_own_configuration() {
    let mut backend = Profile::Linux26.config();
    backend.proactive = true;
    let s = three_nodes(10, 0.0, Some(backend), 3);
    let r = Sim::new(&s, 0, 2).unwrap().run();
    assert!(r.exchanges.iter().all(|e| e.complete));
    assert_eq!(r.corrupt_bytes, 0);
    // Copies on the backend leg only: every copy counted there.
    assert!(r.backend.proactive_copies > 0);
    assert_eq!(r.counters.proactive_copies, r.backend.proactive_copies);
}

#[test]
fn losses_on_the_backend_leg_slow_the_response_and_copies_mask_them() {
    let mean = |cfg: Option<Config>| {
        let (mut total, mut retrans, mut n) = (0u64, 0u64, 0u64);
        for seed in 0..200 {
            let s = three_nodes(15, 0.02, cfg.clone(), 2);
            let r = Sim::new(&s, 0, seed).unwrap().run();
            assert_eq!(r.corrupt_bytes, 0, "seed {seed}");
            for e in &r.exchanges {
                assert!(e.complete, "seed {seed}: {e:?}");
                total += e.server_ns.unwrap();
                n += 1;
            }
            retrans += r.backend.data_retrans_segs();
        }
        (total / n, retrans)
    };
    let (plain_rt, plain_retrans) = mean(None);
    let mut p = Profile::Linux26.config();
    p.proactive = true;
    let (pro_rt, pro_retrans) = mean(Some(p));
    assert!(
        plain_retrans > 20,
        "only {plain_retrans} backend retransmissions"
    );
    assert!(
        pro_retrans * 5 < plain_retrans,
        "{pro_retrans} vs {plain_retrans}"
    );
    assert!(pro_rt < plain_rt, "Proactive {pro_rt} ns vs {plain_rt} ns");
}

#[test]
fn corrective_runs_on_either_leg() {
    let mut c = Profile::Linux26.config();
    c.corrective = true;
    // The backend leg only ...
    let r = Sim::new(&three_nodes(10, 0.01, Some(c.clone()), 5), 0, 3)
        .unwrap()
        .run();
    assert!(r.exchanges.iter().all(|e| e.complete));
    assert_eq!(r.corrupt_bytes, 0);
    assert!(r.backend.corrective_sent > 0);
    assert_eq!(r.counters.corrective_sent, r.backend.corrective_sent);
    // ... or the client leg only.
    let mut s = three_nodes(10, 0.01, Some(Profile::Linux26.config()), 5);
    s.config = Arc::new(c);
    let r = Sim::new(&s, 0, 3).unwrap().run();
    assert!(r.exchanges.iter().all(|e| e.complete));
    assert_eq!(r.backend.corrective_sent, 0);
    assert!(r.counters.corrective_sent > 0);
}
