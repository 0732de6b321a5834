use crate::common;

use common::*;
use gentle_sim::loss::LossModel;
use gentle_sim::workload::ConnectionMode;
use gentle_tcp::Config;

#[test]
fn one_fresh_exchange_takes_two_rtts() {
    let s = two_hosts(
        chan(None, 100, LossModel::None),
        chan(None, 100, LossModel::None),
        exchange(40, 5000, 1, ConnectionMode::Fresh),
        Config::default(),
    );
    let r = run(&s, 1);
    assert_eq!(r.exchanges.len(), 1);
    let e = &r.exchanges[0];
    assert!(e.complete);
    // SYN → SYN-ACK → ACK+request → response: 2 RTTs at the client.
    assert_eq!(e.client_ns, Some(400_000_000));
    // Server: request arrives at 300 ms, ACK of the last byte at 500 ms.
    assert_eq!(e.server_ns, Some(200_000_000));
    assert_eq!(r.corrupt_bytes, 0);
}

#[test]
fn pattern_check_finds_misplaced_and_altered_bytes() {
    use gentle_sim::pattern;
    let mut got = Vec::new();
    pattern::chunks(5000, 3000, |b| got.extend_from_slice(&b));
    // A copy (other memory) of the right bytes: no mismatch.
    assert_eq!(pattern::mismatches(5000, &got), 0);
    // The same bytes claimed at another offset: mismatches.
    assert!(pattern::mismatches(5001, &got) > 2000);
    // One altered byte is found.
    got[1234] ^= 0xff;
    assert_eq!(pattern::mismatches(5000, &got), 1);
    // Zero-copy slices of the pattern itself are checked by position too.
    let mut slices = Vec::new();
    pattern::chunks(7000, 100, |b| slices.push(b));
    assert_eq!(pattern::mismatches(7000, &slices[0]), 0);
    assert!(pattern::mismatches(7100, &slices[0]) > 50);
}

#[test]
fn a_page_over_many_connections_fetches_every_object() {
    use gentle_sim::workload::{Size, WorkloadKind};
    // More objects than connections: each connection fetches several in turn, and
    // the next request must go out even when the previous object ends on the
    // server's side (its last ACK) rather than the client's.
    for connections in [1, 5, 47] {
        let s = two_hosts(
            chan(Some(5_000_000), 14, LossModel::None),
            chan(Some(1_000_000), 14, LossModel::None),
            WorkloadKind::Page {
                objects: 167,
                object: Size::Fixed(8305),
                request: Size::Fixed(400),
                connections,
            },
            Config::default(),
        );
        let r = run(&s, 1);
        assert_eq!(r.exchanges.len(), 167, "{connections} connections");
        assert!(
            r.exchanges.iter().all(|e| e.complete),
            "{connections} connections"
        );
        assert_eq!(r.pages.len(), 1);
        assert!(r.pages[0].complete);
        assert_eq!(r.pages[0].bytes, 167 * 8305);
        assert_eq!(r.corrupt_bytes, 0);
    }
}
