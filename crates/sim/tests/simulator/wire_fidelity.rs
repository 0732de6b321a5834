//! End-to-end checks that the receiver behaves as Linux's does where senders depend
//! on it: duplicate ACKs that are duplicates (so NewReno fast-retransmits), and the
//! acknowledgement policy of the clients a server serves.

use crate::common;
use std::sync::Arc;

use common::*;
use gentle_sim::loss::{DropCount, LossModel};
use gentle_sim::workload::ConnectionMode;
use gentle_tcp::{Profile, ReceiverPolicy};

fn drop_fifth() -> LossModel {
    LossModel::DropList {
        indices: vec![5],
        count: DropCount::Segments,
    }
}

#[test]
fn a_mid_response_loss_is_fast_retransmitted_by_every_profile() {
    for p in Profile::ALL {
        let setup = two_hosts(
            chan(Some(10_000_000), 50, drop_fifth()),
            chan(Some(10_000_000), 50, LossModel::None),
            exchange(100, 30_000, 1, ConnectionMode::Persistent),
            p.config(),
        );
        let r = run(&setup, 1);
        let c = &r.counters;
        assert!(r.exchanges.iter().all(|e| e.complete), "{}", p.name());
        assert_eq!(c.timeouts, 0, "{}: the loss cost an RTO", p.name());
        assert_eq!(c.fast_retrans, 1, "{}", p.name());
    }
}

#[test]
fn the_clients_receiver_policy_sets_when_an_odd_tail_is_acknowledged() {
    // A fresh connection fetches three segments. A Linux client is in quick-ACK
    // mode and acknowledges the third at once; a Windows client waits 200 ms for
    // it (ACKing every second segment), and offers no timestamps.
    let server_time = |client: Option<ReceiverPolicy>| {
        let mut setup = two_hosts(
            chan(Some(10_000_000), 50, LossModel::None),
            chan(Some(10_000_000), 50, LossModel::None),
            exchange(100, 3 * 1448, 1, ConnectionMode::Fresh),
            Profile::Linux26.config(),
        );
        Arc::make_mut(&mut setup.workloads[0]).client_receiver = client;
        let r = run(&setup, 1);
        r.exchanges[0].server_ns.expect("finished") as f64 / 1e6
    };
    let linux = server_time(None);
    let windows = server_time(Some(ReceiverPolicy::Windows));
    assert!(linux < 110.0, "Linux client: {linux} ms");
    assert!(
        (windows - linux - 200.0).abs() < 5.0,
        "Windows client: {windows} ms against {linux} ms"
    );
}
