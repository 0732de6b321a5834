//! The paper metrics the simulator measures as an observer would, from its packet
//! events and connection progress rather than from inside packet forwarding:
//!
//! - [`TailWatch`]: `tlp-measurement-tum13.txt` §3.3's `t_recover` and the start
//!   of `t_total`, where the server's packets enter the network (the paper's
//!   `tcpfilter` sits on the server's outgoing link);
//! - [`EpisodeWatch`]: fast-recovery episodes (`prr-imc11.txt` Tables 5–7) from the
//!   sender's congestion state after each input.

use gentle_tcp::{CaState, Connection, Instant};

use super::observe::{DropReason, Observer, PacketEvent, PacketView};
use crate::packet::PacketMeta;
use crate::record::Episode;

/// Server-side times of the current response as a filter on the server's output sees
/// them (`tlp-measurement-tum13.txt` §3.3): ns.
#[derive(Clone, Debug, Default)]
pub(crate) struct TailTimes {
    pub start: Option<u64>,
    /// Data segments dropped by a loss model: (sequence offset, time), first drop
    /// of each.
    pub drops: Vec<(u64, u64)>,
    /// The first time a dropped segment got through again, minus its drop time.
    pub recover: Option<u64>,
}

/// [`TailTimes`] per flow, for the response in progress.
#[derive(Debug, Default)]
pub(crate) struct TailWatch {
    flows: Vec<TailTimes>,
}

impl TailWatch {
    /// The events it follows: server data at its first hop, entering the link or
    /// dropped there by a loss model; a Corrective packet is no retransmission, and
    /// does not end a dropped segment's t_recover.
    #[inline]
    pub fn wants(ev: PacketEvent, node: u16, src: u16, m: &PacketMeta) -> bool {
        matches!(
            ev,
            PacketEvent::Enqueue { .. }
                | PacketEvent::Drop {
                    reason: DropReason::Loss,
                    ..
                }
        ) && node == src
            && m.from_server
            && m.payload > 0
            && !m.corrective
    }

    /// Forgets every flow (a new trial).
    pub fn clear(&mut self) {
        self.flows.clear();
    }

    /// A new response starts on `flow`.
    pub fn reset(&mut self, flow: u32) {
        if let Some(t) = self.flows.get_mut(flow as usize) {
            *t = TailTimes::default();
        }
    }
    /// The times of the response in progress on `flow`.
    pub fn get(&self, flow: u32) -> Option<&TailTimes> {
        self.flows.get(flow as usize)
    }
    fn flow(&mut self, flow: u32) -> &mut TailTimes {
        let i = flow as usize;
        if self.flows.len() <= i {
            self.flows.resize_with(i + 1, TailTimes::default);
        }
        &mut self.flows[i]
    }
}

impl TailWatch {
    /// A packet event it [`wants`](Self::wants), at `now` (ns).
    #[inline]
    pub fn seen(&mut self, ev: PacketEvent, m: &PacketMeta, now: u64) {
        let t = self.flow(m.flow);
        if let PacketEvent::Enqueue { .. } = ev {
            if t.drops.is_empty() {
                // Nothing dropped yet: only the first packet's time matters.
                t.start.get_or_insert(now);
                return;
            }
            t.start.get_or_insert(now);
            if t.recover.is_none()
                && let Some(&(_, at)) = t.drops.iter().find(|d| d.0 == m.rel_seq)
            {
                t.recover = Some(now - at);
            }
        } else if !t.drops.iter().any(|d| d.0 == m.rel_seq) {
            t.drops.push((m.rel_seq, now));
        }
    }
}

impl Observer for TailWatch {
    fn on_packet(&mut self, ev: PacketEvent, p: &PacketView<'_>) {
        if Self::wants(ev, p.node, p.src, p.meta) {
            self.seen(ev, p.meta, p.t.as_nanos());
        }
    }
}

/// Follows each connection's fast-recovery episodes.
#[derive(Debug, Default)]
pub(crate) struct EpisodeWatch {
    /// The episode in progress, per connection.
    open: Vec<Option<Episode>>,
    /// Episodes that ended, in the order they ended.
    pub done: Vec<Episode>,
}

impl EpisodeWatch {
    /// Forgets every episode (a new trial).
    pub fn clear(&mut self) {
        self.open.clear();
        self.done.clear();
    }
}

impl Observer for EpisodeWatch {
    fn on_connection(&mut self, _t: Instant, c: u32, conn: &Connection) {
        let i = c as usize;
        if self.open.len() <= i {
            self.open.resize(i + 1, None);
        }
        let in_recovery = conn.ca_state() == CaState::Recovery;
        let gap =
            |a: u32, b: u32| (a as i64 - b as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        match (&mut self.open[i], in_recovery) {
            (None, true) => {
                self.open[i] = Some(Episode {
                    start_pipe_minus_ssthresh: gap(conn.recovery_start_pipe(), conn.ssthresh()),
                    last_cwnd_minus_ssthresh: gap(conn.cwnd(), conn.ssthresh()),
                    cwnd_after: None,
                });
            }
            (Some(e), true) => e.last_cwnd_minus_ssthresh = gap(conn.cwnd(), conn.ssthresh()),
            (Some(e), false) => {
                let mut e = *e;
                if conn.ca_state() != CaState::Loss {
                    e.cwnd_after = Some(conn.cwnd());
                }
                self.open[i] = None;
                self.done.push(e);
            }
            (None, false) => {}
        }
    }
}
