//! HyStart (CUBIC's hybrid slow start, Linux `tcp_cubic` `hystart = 1`) over a
//! bottleneck with a queue: the rising delay ends slow start before the queue
//! overflows, where plain slow start overshoots and loses a burst.

use crate::common;

use common::*;
use gentle_sim::link::{QueueDiscipline, QueueLimit};
use gentle_sim::loss::LossModel;
use gentle_sim::workload::WorkloadKind;
use gentle_tcp::Profile;

fn bulk(hystart: bool) -> (u64, u64, u64) {
    let mut down = chan(Some(10_000_000), 20, LossModel::None);
    down.queue = QueueDiscipline::DropTail(QueueLimit::Packets(100));
    let mut cfg = Profile::Linux6.config();
    cfg.hystart = hystart;
    let setup = two_hosts(
        down,
        chan(Some(10_000_000), 20, LossModel::None),
        WorkloadKind::Bulk {
            bytes: Some(3_000_000),
        },
        cfg,
    );
    let r = run(&setup, 1);
    assert!(r.exchanges.iter().all(|e| e.complete));
    let c = &r.counters;
    (
        r.links.dropped_queue,
        c.hystart_train + c.hystart_delay,
        c.retrans_segs,
    )
}

#[test]
fn hystart_leaves_slow_start_before_the_queue_overflows() {
    let (drops_off, exits_off, _) = bulk(false);
    let (drops_on, exits_on, retrans_on) = bulk(true);
    eprintln!("queue drops: {drops_off} without HyStart, {drops_on} with ({exits_on} exits)");
    assert_eq!(exits_off, 0);
    assert!(exits_on >= 1, "HyStart never ended slow start");
    assert!(
        drops_off > 10,
        "plain slow start should overflow the queue: {drops_off}"
    );
    assert!(
        drops_on < drops_off / 4,
        "drops with HyStart {drops_on}, without {drops_off} (retransmissions {retrans_on})"
    );
}
