mod common;

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
