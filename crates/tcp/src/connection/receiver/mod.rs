//! The receiver: reassembly (RFC 9293 §3.10.7.4, with RFC 2018 and RFC 2883
//! reporting), the advertised window (RFC 9293 §3.8.6.2.2, RFC 7323 §2.3) and when
//! to acknowledge (RFC 1122 §4.2.3.2, RFC 5681 §4.2):
//!
//! - [`input`]: segment arrival (handshake, acceptability, data, FIN, RST).
//! - [`ack_policy`]: quick ACKs and delayed ACKs.
//!
//! The [`Receiver`]'s fields are private to this module and its submodules: the
//! rest of the connection reads and tells it through the methods below.

mod ack_policy;
mod input;

use bytes::Bytes;

use super::{CloseReason, Connection, unwrap_near};
use crate::receive_window::ReceiveWindow;
use crate::receiver::Reassembly;
use crate::wire::{SackBlock, SackBlocks, Segment};
use ack_policy::AckPolicy;

/// The receive side (RFC 9293 §3.10.7.4): reassembly, the advertised window, and
/// when to acknowledge.
#[derive(Debug)]
pub(crate) struct Receiver {
    /// Reassembly, SACK and DSACK reporting (offsets relative to IRS).
    rcv: Reassembly,
    /// The advertised window and our window-scale shift.
    rwnd: ReceiveWindow,
    /// When to acknowledge (quick ACKs, the adaptive timeout).
    acks: AckPolicy,
}

impl Receiver {
    /// Before the handshake, with our window-scale shift `rcv_wscale`.
    pub fn new(rcv_wscale: u8) -> Receiver {
        Receiver {
            rcv: Reassembly::new(0),
            rwnd: ReceiveWindow::new(rcv_wscale),
            acks: AckPolicy::default(),
        }
    }
    /// The peer's SYN, with initial sequence number `irs`, arrived.
    pub fn on_syn(&mut self, irs: u32) {
        self.rcv = Reassembly::after_syn(irs);
    }
    /// An ACK is due now.
    pub fn ack_due(&self) -> bool {
        self.rcv.ack_now
    }
    /// Acknowledge at once.
    pub fn request_ack(&mut self) {
        self.rcv.ack_now = true;
    }
    /// No ACK is due after all (an accelerated open).
    pub fn cancel_ack(&mut self) {
        self.rcv.ack_now = false;
    }
    /// The next in-order offset expected (RCV.NXT, relative to IRS).
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv.rcv_nxt()
    }
    /// The peer's initial sequence number.
    pub fn irs(&self) -> u32 {
        self.rcv.irs()
    }
    /// What was received (for Corrective's decoder and Proactive's filter).
    pub fn reassembly(&self) -> &Reassembly {
        &self.rcv
    }
    /// The peer does not scale windows: neither do we (RFC 7323 §2.2).
    pub fn no_scaling(&mut self) {
        self.rwnd.no_scaling();
    }
    /// Keep the last `bytes` delivered for Corrective's decoder.
    pub fn keep_history(&mut self, bytes: usize) {
        self.rcv.keep_history(bytes);
    }
    /// Our window-scale shift.
    pub fn wscale(&self) -> u8 {
        self.rwnd.shift()
    }
}

impl Connection {
    /// In-order bytes received (delivered or waiting to be read).
    pub fn bytes_received(&self) -> u64 {
        self.rx
            .rcv
            .rcv_nxt()
            .saturating_sub(1 + self.rx.rcv.fin_received as u64)
    }
    /// The peer's initial sequence number.
    pub fn irs(&self) -> u32 {
        self.rx.rcv.irs()
    }
    /// The peer's FIN has been received (end of its stream).
    pub fn peer_closed(&self) -> bool {
        self.rx.rcv.fin_received
    }
    /// Bytes readable without blocking.
    pub fn readable(&self) -> usize {
        self.rx.rcv.ready_bytes()
    }
    /// Takes the next chunk of in-order received bytes.
    pub fn read(&mut self) -> Option<Bytes> {
        let b = self.rx.rcv.read()?;
        self.ack_on_read(b.len());
        Some(b)
    }
    /// Receive offset for a wire sequence number, nearest to `rcv_nxt`.
    pub(crate) fn rcv_offset(&self, seq: u32) -> u64 {
        unwrap_near(seq.wrapping_sub(self.rx.rcv.irs()), self.rx.rcv.rcv_nxt())
    }

    /// The window field to advertise now (see [`ReceiveWindow`]).
    pub(crate) fn adv_window(&self) -> u16 {
        self.rx.rwnd.field(self.window_to_offer())
    }

    /// The window (bytes) a segment sent now would offer from `rcv_nxt`.
    pub(crate) fn window_to_offer(&self) -> u64 {
        let buffer = self.cfg.recv_buffer as u64;
        let free = buffer.saturating_sub(self.rx.rcv.buffered() as u64);
        let w = self
            .rx
            .rwnd
            .free_space_window(buffer, free, self.opts.rcv_mss as u64);
        self.rx
            .rwnd
            .select(self.rx.rcv.rcv_nxt(), self.rx.rcv.rcv_wup, w)
    }

    /// A segment goes out: the window it offers, and with ACK set, what it
    /// acknowledges.
    pub(crate) fn receiver_on_sent(&mut self, seg: &Segment) {
        if seg.flags.syn() {
            self.rx.rwnd.on_syn_sent(seg.window);
        } else if seg.flags.ack() && !seg.flags.rst() {
            self.rx.rwnd.on_sent(seg.window);
        }
        if seg.flags.ack() {
            self.ack_on_sent();
            self.rx.rcv.rcv_wup = self.rx.rcv.rcv_nxt();
            self.rx.rcv.ack_now = false;
            self.rx.rcv.unacked_bytes = 0;
            self.rx.rcv.unacked_segs = 0;
        }
    }

    /// The ACK field of a segment sent now.
    pub(crate) fn ack_field(&self) -> u32 {
        self.rx.rcv.irs().wrapping_add(self.rx.rcv.rcv_nxt() as u32)
    }

    /// The SACK blocks a segment with ACK sent now carries, when there is
    /// out-of-order data or a DSACK to report (RFC 2018 §4, RFC 2883 §4).
    pub(crate) fn sack_to_report(&mut self) -> Option<SackBlocks> {
        if self.opts.sack && (self.rx.rcv.has_ooo() || self.rx.rcv.dsack.is_some()) {
            // 40 option bytes: 12 for timestamps leaves room for 3 blocks, else 4;
            // the Corrective option's 8 take one more.
            let max = if self.opts.ts { 3 } else { 4 } - self.ext.corrective().is_on() as usize;
            let mut out = [(0u64, 0u64); 4];
            let n = self.rx.rcv.sack_blocks(max, &mut out);
            let mut blocks = SackBlocks::new();
            for &(l, r) in &out[..n] {
                blocks.push(SackBlock {
                    left: self.rx.rcv.irs().wrapping_add(l as u32),
                    right: self.rx.rcv.irs().wrapping_add(r as u32),
                });
            }
            return Some(blocks);
        }
        None
    }
}
