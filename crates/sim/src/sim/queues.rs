//! The simulator's side of the router queues that decide after admission
//! (`fast-start-and-sessions.txt` §3.3/§7.2 priority drop, §5 acks-first, and RED
//! marking, §4.3): admission that needs the segment, evictions shown as queue
//! drops, and the transmitter event that starts the next waiting packet. The
//! queues themselves are [`crate::link`]'s.

use super::{DropReason, Ev, PacketEvent, Sim};
use crate::link::Admit;
use crate::packet::PacketMeta;

impl Sim<'_> {
    /// Admission to a channel with RED, priority drop or acks-first (out of line,
    /// so the drop-tail path keeps its shape).
    #[inline(never)]
    pub(super) fn admit_managed(
        &mut self,
        chan: u32,
        now: u64,
        bytes: usize,
        meta: &PacketMeta,
        slot: u32,
    ) -> Admit {
        let seg = &mut self.slab.get_mut(slot).seg;
        self.chans[chan as usize].admit_managed(now, bytes, meta, seg, slot)
    }

    /// A packet waits in channel `chan`'s scheduled queue: packets priority drop
    /// evicted for it are dropped, and the transmitter is woken if it must be.
    #[inline(never)]
    pub(super) fn waiting(&mut self, chan: u32, node: u16, slot: u32, wake_ns: Option<u64>) {
        while let Some(victim) = self.chans[chan as usize].pop_evicted() {
            self.dropped(victim, chan, DropReason::Queue);
        }
        self.emit_slot(PacketEvent::Enqueue { link: chan }, node, slot);
        if let Some(t) = wake_ns {
            self.push(t, Ev::TxFree { chan });
        }
    }

    /// The transmitter of channel `chan` is free: it starts the next waiting packet.
    pub(super) fn on_tx_free(&mut self, chan: usize) {
        let now = self.now.as_nanos();
        if let Some(s) = self.chans[chan].next_tx(now) {
            if let Some(t) = s.wake_ns {
                self.push(t, Ev::TxFree { chan: chan as u32 });
            }
            self.propagate(chan, s.slot, s.bytes as usize, s.depart_ns);
        }
    }
}
