//! End-to-end network behaviour: timing over asymmetric links, reordering and
//! duplication rates, ACK-path loss, multi-hop routing, determinism.

use crate::common;
use std::sync::Arc;

use std::time::Duration;

use common::*;
use gentle_sim::Sim;
use gentle_sim::link::{LinkSpec, Reorder};
use gentle_sim::loss::LossModel;
use gentle_sim::workload::{ConnectionMode, WorkloadKind};
use gentle_tcp::{Config, Profile};

#[test]
fn asymmetric_link_serialises_acks_slowly() {
    // 10 Mbit/s down, 28.8 kbit/s up, 50 ms each way; a 100 kB transfer is limited by
    // how fast the up-link carries ACKs.
    let down = chan(Some(10_000_000), 50, LossModel::None);
    let up = chan(Some(28_800), 50, LossModel::None);
    let kind = exchange(100, 100_000, 1, ConnectionMode::Persistent);
    let r = run(
        &two_hosts(down.clone(), up, kind.clone(), Config::default()),
        1,
    );
    let slow = r.exchanges[0].client_ns.unwrap();
    let fast = run(&two_hosts(down.clone(), down, kind, Config::default()), 1).exchanges[0]
        .client_ns
        .unwrap();
    assert!(
        slow > fast + 100_000_000,
        "asymmetric {slow} vs symmetric {fast}"
    );
    // The 100-byte request alone takes 8·(100+52+20)/28800 s ≈ 48 ms to serialise.
    assert!(slow > 200_000_000);
}

#[test]
fn serialisation_and_propagation_add_up() {
    // 1 Mbit/s, 10 ms: a 1000-byte response over a warm connection.
    let c = chan(Some(1_000_000), 10, LossModel::None);
    let mut cfg = Profile::Plain.config();
    cfg.timestamps = false;
    let s = two_hosts(
        c.clone(),
        c,
        exchange(100, 1000, 1, ConnectionMode::Persistent),
        cfg,
    );
    let r = run(&s, 1);
    // Request: (100+40)·8 µs + 10 ms; response: (1000+40)·8 µs + 10 ms.
    let expect = (140 * 8 + 10_000 + 1040 * 8 + 10_000) as u64 * 1000;
    assert_eq!(r.exchanges[0].client_ns, Some(expect));
}

#[test]
fn reordering_and_duplication_rates_and_no_corruption() {
    let mut c = chan(Some(50_000_000), 20, LossModel::None);
    c.reorder = Some(Reorder {
        p: 0.05,
        extra: Duration::from_millis(3),
        packets: [0; 4],
    });
    c.duplicate = 0.02;
    let s = two_hosts(
        c.clone(),
        c,
        exchange(100, 3_000_000, 1, ConnectionMode::Persistent),
        Config::default(),
    );
    let r = run(&s, 4);
    let l = r.links;
    let n = l.delivered as f64;
    let ro = l.reordered as f64 / n;
    let du = l.duplicated as f64 / n;
    assert!(
        (ro - 0.05).abs() < 5.0 * (0.05f64 * 0.95 / n).sqrt(),
        "reordered {ro} of {n}"
    );
    assert!(
        (du - 0.02).abs() < 5.0 * (0.02f64 * 0.98 / n).sqrt(),
        "duplicated {du} of {n}"
    );
    assert!(r.exchanges[0].complete);
    assert_eq!(r.corrupt_bytes, 0);
    assert!(
        r.counters.dup_data_recv > 0,
        "duplicates reach the receiver"
    );
    assert!(r.counters.dsack_recv > 0, "and are reported with DSACK");
}

#[test]
fn ack_path_loss_is_survived() {
    let down = chan(Some(10_000_000), 25, LossModel::None);
    let up = chan(Some(10_000_000), 25, LossModel::Bernoulli { p: 0.3 });
    let s = two_hosts(
        down,
        up,
        exchange(100, 500_000, 1, ConnectionMode::Persistent),
        Config::default(),
    );
    let r = run(&s, 8);
    assert!(r.exchanges[0].complete);
    assert!(r.links.dropped_loss > 10);
    assert_eq!(r.corrupt_bytes, 0);
}

#[test]
fn multi_hop_paths_route_through_middle_nodes() {
    let hop = chan(Some(100_000_000), 10, LossModel::None);
    let mut s = two_hosts(
        hop.clone(),
        hop.clone(),
        exchange(40, 5000, 1, ConnectionMode::Fresh),
        Config::default(),
    );
    s.links = vec![
        LinkSpec {
            a: "server".into(),
            b: "frontend".into(),
            a_to_b: hop.clone(),
            b_to_a: hop.clone(),
        },
        LinkSpec {
            a: "frontend".into(),
            b: "client".into(),
            a_to_b: hop.clone(),
            b_to_a: hop.clone(),
        },
    ];
    let r = run(&s, 1);
    let t = r.exchanges[0].client_ns.unwrap();
    // Two RTTs of 40 ms plus serialisation.
    assert!((80_000_000..82_000_000).contains(&t), "{t}");
}

#[test]
fn same_seed_same_result_different_seed_different_losses() {
    let c = chan(Some(5_000_000), 100, LossModel::Bernoulli { p: 0.05 });
    let s = two_hosts(
        c.clone(),
        c,
        exchange(40, 50_000, 5, ConnectionMode::Fresh),
        Config::default(),
    );
    let a = run(&s, 11);
    let b = run(&s, 11);
    assert_eq!(a.exchanges, b.exchanges);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.events, b.events);
    let c2 = run(&s, 12);
    assert_ne!(a.exchanges, c2.exchanges);
}

#[test]
fn endless_cross_traffic_shares_a_bottleneck() {
    let bott = chan(Some(1_500_000), 25, LossModel::None);
    let mut s = two_hosts(
        bott.clone(),
        bott,
        exchange(100, 20_000, 3, ConnectionMode::Persistent),
        Config::default(),
    );
    let mut cross = gentle_sim::workload::WorkloadSpec::clone(&s.workloads[0]);
    cross.name = "cross".into();
    cross.port = 81;
    cross.kind = WorkloadKind::Bulk { bytes: None };
    cross.measure = false;
    cross.max_window = Some(8 * 1024);
    s.workloads.push(Arc::new(cross));
    let r = Sim::new(&s, 0, 3).unwrap().run();
    assert_eq!(
        r.exchanges
            .iter()
            .filter(|e| e.workload == 0 && e.complete)
            .count(),
        3
    );
    assert!(r.data_packets > 30, "cross traffic ran too");
}
