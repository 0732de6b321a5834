//! Observation is one-way: a trial run with observers attached (the trace, which also
//! turns on the engines' event recording, the packet capture, and a counting
//! observer) produces exactly the results it produces without them, and the observers
//! see every packet the results count.

use crate::common;

use common::{chan, exchange, two_hosts};
use gentle_sim::loss::LossModel;
use gentle_sim::workload::ConnectionMode;
use gentle_sim::{Capture, Observer, PacketEvent, PacketView, Sim, TraceRecorder};
use gentle_tcp::Profile;

/// Counts packet events by kind.
#[derive(Default)]
struct Count {
    sends: u64,
    recvs: u64,
    drops: u64,
    enqueues: u64,
}

impl Observer for Count {
    fn on_packet(&mut self, ev: PacketEvent, _p: &PacketView<'_>) {
        match ev {
            PacketEvent::Send => self.sends += 1,
            PacketEvent::Recv => self.recvs += 1,
            PacketEvent::Drop { .. } => self.drops += 1,
            PacketEvent::Enqueue { .. } => self.enqueues += 1,
        }
    }
}

#[test]
fn observers_do_not_change_a_trial() {
    for (profile, seed) in [
        (Profile::Linux26, 1),
        (Profile::Linux310, 2),
        (Profile::Linux6, 3),
        (Profile::Plain, 4),
    ] {
        let mut cfg = profile.config();
        cfg.corrective = seed % 2 == 0;
        let down = chan(Some(5_000_000), 40, LossModel::Bernoulli { p: 0.05 });
        let up = chan(Some(5_000_000), 40, LossModel::Bernoulli { p: 0.02 });
        let setup = two_hosts(
            down,
            up,
            exchange(300, 40_000, 20, ConnectionMode::Persistent),
            cfg,
        );
        let plain = Sim::new(&setup, 0, seed).unwrap().run();
        let mut obs = (
            (TraceRecorder::default(), Capture::new("server")),
            Count::default(),
        );
        let seen = Sim::new(&setup, 0, seed)
            .unwrap()
            .with_observer(&mut obs)
            .run();
        assert_eq!(
            format!("{plain:?}"),
            format!("{seen:?}"),
            "{profile:?} seed {seed}: an observed trial differs"
        );
        let ((trace, capture), count) = obs;
        assert_eq!(
            count.sends, plain.packets,
            "{profile:?}: every send is shown"
        );
        assert!(
            count.drops > 0,
            "{profile:?}: the loss models dropped nothing"
        );
        // One hop: every packet sent enters the link or is dropped there, and every
        // one that entered arrives, unless still in flight when the trial ended.
        assert_eq!(
            count.enqueues + count.drops,
            count.sends,
            "{profile:?}: a packet neither queued nor dropped"
        );
        assert!(count.recvs <= count.enqueues && count.recvs + 10 >= count.enqueues);
        assert!(
            trace
                .lines
                .iter()
                .any(|l| matches!(l.what, gentle_sim::TraceWhat::Engine { .. }))
        );
        // The server's capture holds what it sent and what reached it.
        assert!(capture.frames.len() as u64 > plain.data_packets / 2);
    }
}
