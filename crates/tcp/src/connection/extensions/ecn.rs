//! Explicit Congestion Notification, RFC 3168 §6.1, as Linux implements it
//! (`tcp_ecn_*` in net/ipv4/tcp_input.c and tcp_output.c):
//!
//! - negotiation (§6.1.1): the SYN carries ECE and CWR, an ECN-setup SYN-ACK
//!   carries ECE alone; a connection uses ECN only if both said so;
//! - the sender marks new data ECT(0); retransmissions, pure ACKs, window probes,
//!   SYNs and RSTs go out Not-ECT (§6.1.5, §6.1.6; Linux `tcp_ecn_send`);
//! - the receiver of a CE-marked data segment sets ECE on every segment it sends
//!   until a data segment with CWR arrives (§6.1.3; Linux `TCP_ECN_DEMAND_CWR`), and
//!   acknowledges the first CE at once (Linux enters quick-ACK mode);
//! - the sender reacts to ECE at most once per window of data (§6.1.2): it enters
//!   CWR through the one reduction path (`sender::reduction`, PRR draining it as
//!   in Linux 3.2+), and sets CWR on the next new data segment. Every reduction —
//!   CWR, Recovery, Loss — queues that CWR, as Linux's `tcp_init_cwnd_reduction` and
//!   `tcp_enter_loss` do; ECE is ignored while a reduction is under way.

use super::Connection;
use crate::counters::Counters;
use crate::wire::{Ecn as EcnField, Flags, Segment};

/// A connection's ECN state.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ecn {
    /// Negotiated in the handshake (Linux `TCP_ECN_OK`).
    on: bool,
    /// Receiver: a CE arrived; echo ECE until the peer's CWR (`TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// Sender: set CWR on the next new data segment (`TCP_ECN_QUEUE_CWR`).
    queue_cwr: bool,
    /// Sender: the ACK being processed carries ECE.
    ack_ece: bool,
}

impl Ecn {
    /// ECN was negotiated.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The ACK being processed carries ECE (and ECN is on).
    pub fn ack_ece(&self) -> bool {
        self.ack_ece
    }

    /// An ACK arrives: whether it carries ECE (§6.1.2).
    pub fn on_ack(&mut self, seg: &Segment) {
        self.ack_ece = self.on && seg.flags.contains(Flags::ECE);
    }

    /// Whether `syn` (a SYN or a SYN-ACK) sets ECN up with us (§6.1.1), `enabled`
    /// our switch.
    fn negotiate(&mut self, enabled: bool, syn: &Segment) {
        let f = syn.flags;
        let setup = if f.ack() {
            f.contains(Flags::ECE) && !f.contains(Flags::CWR)
        } else {
            f.contains(Flags::ECE) && f.contains(Flags::CWR)
        };
        self.on = enabled && setup;
    }

    /// The ECN flags of our SYN or SYN-ACK (§6.1.1), `enabled` our switch.
    fn syn_flags(&self, synack: bool, enabled: bool) -> Flags {
        match (synack, enabled, self.on) {
            (false, true, _) => Flags::ECE | Flags::CWR,
            (true, _, true) => Flags::ECE,
            _ => Flags::empty(),
        }
    }

    /// ECE on a segment we send while the peer owes us a CWR (§6.1.3).
    #[inline]
    fn echo(&self, s: &mut Segment) {
        if self.demand_cwr && !s.flags.rst() {
            s.flags.insert(Flags::ECE);
        }
    }

    /// A new data segment: ECT(0), and CWR if a reduction is to be announced.
    #[inline]
    fn new_data(&mut self, s: &mut Segment, counters: &mut Counters) {
        if !self.on || s.payload.is_empty() {
            return;
        }
        s.ecn = EcnField::Ect0;
        if self.queue_cwr {
            self.queue_cwr = false;
            s.flags.insert(Flags::CWR);
            counters.ecn_cwr_sent += 1;
        }
    }

    /// The receiver's side of a data segment (§6.1.3): CWR ends the echo, CE (after
    /// it, as Linux orders `tcp_ecn_accept_cwr` and `tcp_ecn_check_ce`) starts it.
    /// Returns true when the segment is to be acknowledged at once.
    fn on_data(&mut self, seg: &Segment, counters: &mut Counters) -> bool {
        if seg.flags.contains(Flags::CWR) {
            self.demand_cwr = false;
        }
        if seg.ecn == EcnField::Ce {
            counters.ecn_ce_received += 1;
            if !self.demand_cwr {
                // "Better not delay acks, sender can have a very low cwnd."
                self.demand_cwr = true;
                return true;
            }
        }
        false
    }

    /// A reduction of any kind begins: announce it with CWR (Linux
    /// `tcp_ecn_queue_cwr`).
    #[inline]
    fn queue_cwr(&mut self) {
        if self.on {
            self.queue_cwr = true;
        }
    }
}

impl Connection {
    /// Whether `syn` (a SYN or a SYN-ACK) sets ECN up with us (§6.1.1).
    pub(crate) fn ecn_negotiate(&mut self, syn: &Segment) {
        self.ext.ecn.negotiate(self.cfg.ecn, syn);
    }

    /// The ECN flags of our SYN or SYN-ACK (§6.1.1).
    pub(crate) fn ecn_syn_flags(&self, synack: bool) -> Flags {
        self.ext.ecn.syn_flags(synack, self.cfg.ecn)
    }

    /// ECE on a segment we send while the peer owes us a CWR (§6.1.3).
    #[inline]
    pub(crate) fn ecn_echo(&self, s: &mut Segment) {
        self.ext.ecn.echo(s);
    }

    /// A new data segment: ECT(0), and CWR if a reduction is to be announced.
    #[inline]
    pub(crate) fn ecn_new_data(&mut self, s: &mut Segment) {
        self.ext.ecn.new_data(s, &mut self.counters);
    }

    /// The receiver's side of a data segment (§6.1.3).
    pub(crate) fn ecn_on_data(&mut self, seg: &Segment) {
        if self.ext.ecn.on_data(seg, &mut self.counters) {
            self.rx.request_ack();
        }
    }

    /// A reduction of any kind begins: announce it with CWR.
    #[inline]
    pub(crate) fn ecn_queue_cwr(&mut self) {
        self.ext.ecn.queue_cwr();
    }
}
