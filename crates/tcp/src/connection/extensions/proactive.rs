//! Proactive (`gentle-aggression-sigcomm13.txt` §6, §7, Figure 8): every data
//! segment is sent twice, back to back; the second instance, the *copy*, carries the
//! [`Flags::COPY`] reserved bit.
//!
//! - **Sender.** A copy is the segment again, flag set. It is not a retransmission:
//!   it is not counted as one and does not touch the scoreboard, RTT sampling or
//!   cwnd, which see one segment; its bytes are counted as overhead. With
//!   segmentation offload (`tso` = K frames per send), a send's copies leave after
//!   all K of its frames, which is what Figure 8 shows. With `proactive_syn_ack`,
//!   SYN, SYN-ACK and pure ACK segments are copied too.
//! - **Receiver filter**, as §6 states it: "If the flag is set, the packet is only
//!   processed if it was not received before (otherwise it is dropped). … If the
//!   flag is not set, the packet will be processed if it was not received before or
//!   if the previous packet carrying the same sequence did not have the flag set
//!   either." Copies thus cause no duplicate ACKs, while retransmissions still do.
//!   "The previous packet" is read as the previous *arrival*, and a copy counts as
//!   flagged there only if it was processed — it delivered the data ahead of its
//!   original. Read literally (any earlier copy), the rule drops every
//!   retransmission that follows a copy without an ACK: once the ACK of the data is
//!   lost, the sender's retransmissions, each followed by its own copy, would never
//!   be answered and the connection would time out. Read this way it drops exactly
//!   the original that its copy overtook.
//!   A copied SYN, or a copied ACK that tells nothing new, is dropped the same way.
//! - **Middleboxes** (§7). One that clears the reserved bits turns copies into
//!   plain duplicates: TCP delivers them once and answers with DSACK. One that
//!   drops packets with reserved bits set leaves only originals: when
//!   [`FALLBACK_ORIGINALS`] new data segments in a row arrive and neither a copy nor
//!   a duplicate has since the last one, the receiver concludes its peer's copies do
//!   not get through (or that the peer does not send any) and stops sending its own.
//!   The peer concludes the same once it has received as many of this side's
//!   segments without copies; a side that receives less data than that (a server
//!   answering short requests) keeps sending copies the middlebox drops: TCP has no
//!   signal to tell it sooner.
//!
//! The receiver's memory of which packet last carried a range is a short history
//! of recent arrivals ([`HISTORY`] segments), enough for the copies and
//! retransmissions of one window.

use std::collections::VecDeque;

use super::Connection;
use crate::wire::{Flags, Segment};

/// New data segments in a row without a copy after which Proactive falls back.
pub(crate) const FALLBACK_ORIGINALS: u32 = 8;
/// Recent arrivals remembered by the filter.
const HISTORY: usize = 256;

/// Proactive's state on one connection: a flag, and the rest boxed, only where
/// Proactive is configured (a connection without it stays small).
#[derive(Debug, Default)]
pub(crate) struct Proactive {
    /// Sending copies (configured and not fallen back).
    on: bool,
    st: Option<Box<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Copies waiting for the rest of their send to leave (`tso` > 1).
    queue: VecDeque<Segment>,
    /// The copies in `queue` are leaving.
    draining: bool,
    /// Recent arrivals: `[start, end)` and whether that arrival was a copy that
    /// delivered the data.
    history: VecDeque<(u64, u64, bool)>,
    /// New data segments received since the last copy arrived.
    originals_run: u32,
    /// Highest ACK (wire value) processed, for copied pure ACKs.
    last_ack: Option<u32>,
}

impl Proactive {
    /// Configured (`on`) or not.
    pub fn new(on: bool) -> Proactive {
        Proactive {
            on,
            st: on.then(Box::default),
        }
    }

    /// Sending copies (configured and not fallen back).
    pub fn is_on(&self) -> bool {
        self.on
    }

    fn st(&mut self) -> &mut State {
        self.st.get_or_insert_with(Box::default)
    }
}

impl Connection {
    /// Queues the copy of `seg`, which just went out, if Proactive copies it.
    #[inline(never)]
    pub(crate) fn proactive_on_sent(&mut self, seg: &Segment) {
        if !self.ext.proactive.on || seg.flags.contains(Flags::COPY) || seg.flags.rst() {
            return;
        }
        let data = !seg.payload.is_empty() || seg.flags.fin();
        if !data && !self.cfg.proactive_syn_ack {
            return;
        }
        let mut copy = seg.clone();
        copy.flags.insert(Flags::COPY);
        self.ext.proactive.st().queue.push_back(copy);
        // A send of `tso` frames leaves whole before its copies; a pure ACK is its
        // own send.
        let tso = self.cfg.tso.max(1) as usize;
        let st = self.ext.proactive.st();
        if !data || st.queue.len() >= tso {
            st.draining = true;
        }
    }

    /// The next copy to send, if one is due: while a send's copies leave, or, with
    /// `flush`, because nothing else goes out now (the send ended short of `tso`).
    #[inline]
    pub(crate) fn proactive_copy(&mut self, flush: bool) -> Option<Segment> {
        if self
            .ext
            .proactive
            .st
            .as_ref()
            .is_none_or(|st| st.queue.is_empty())
        {
            return None;
        }
        self.proactive_copy_due(flush)
    }

    #[inline(never)]
    fn proactive_copy_due(&mut self, flush: bool) -> Option<Segment> {
        let p = self.ext.proactive.st();
        if !(p.draining || flush) {
            return None;
        }
        let copy = p.queue.pop_front()?;
        p.draining = !p.queue.is_empty();
        self.counters.proactive_copies += 1;
        self.counters.proactive_bytes += copy.payload.len() as u64;
        Some(copy)
    }

    /// The receiver's filter, for a segment in a synchronized state (resets pass).
    /// Returns false if the segment is dropped (without an ACK).
    #[inline(never)]
    pub(crate) fn proactive_filter(&mut self, seg: &Segment) -> bool {
        if seg.flags.rst() {
            return true;
        }
        let seq = self.rcv_offset(seg.seq);
        let copy = seg.flags.contains(Flags::COPY);
        let len = seg.payload.len() as u64 + seg.flags.fin() as u64;
        if len == 0 {
            return self.proactive_filter_control(seg, copy);
        }
        let end = seq + len;
        let received = end <= self.rx.rcv_nxt() || self.rx.reassembly().covers(seq, end);
        let keep = if copy {
            !received
        } else {
            !received || !self.proactive_copy_came_first(seq, end)
        };
        if copy {
            self.ext.proactive.st().originals_run = 0;
            if keep {
                self.counters.proactive_repairs += 1;
            }
        } else if !received {
            let st = self.ext.proactive.st();
            st.originals_run += 1;
            if st.originals_run >= FALLBACK_ORIGINALS && self.ext.proactive.on {
                self.ext.proactive.on = false;
                self.ext.proactive.st().queue.clear();
                self.counters.proactive_fallback += 1;
            }
        } else if !keep {
            // The original of a copy that came first: that copy repaired nothing.
            self.counters.proactive_repairs = self.counters.proactive_repairs.saturating_sub(1);
        } else {
            // Data received twice, unmarked: copies get through (a middlebox cleared
            // their flag), or this is a retransmission. No reason to fall back.
            self.ext.proactive.st().originals_run = 0;
        }
        // Remembered as "a copy that delivered the data" only when it did.
        self.proactive_remember(seq, end, copy && keep);
        self.proactive_verdict(seg, keep)
    }

    /// A copied SYN, or a copied ACK that acknowledges nothing new, is dropped.
    fn proactive_filter_control(&mut self, seg: &Segment, copy: bool) -> bool {
        let last = self.ext.proactive.st().last_ack;
        let news = seg.flags.ack() && last.is_none_or(|a| (seg.ack.wrapping_sub(a) as i32) > 0);
        let keep = !copy || (!seg.flags.syn() && news);
        self.proactive_verdict(seg, keep)
    }

    /// Books the filter's decision: a kept segment's ACK is the newest seen, a
    /// dropped one is counted. Returns `keep`.
    fn proactive_verdict(&mut self, seg: &Segment, keep: bool) -> bool {
        if !keep {
            self.counters.proactive_discarded += 1;
            self.counters.segs_dropped += 1;
        } else if seg.flags.ack() {
            let last = &mut self.ext.proactive.st().last_ack;
            if last.is_none_or(|a| (seg.ack.wrapping_sub(a) as i32) > 0) {
                *last = Some(seg.ack);
            }
        }
        keep
    }

    /// Whether the last arrival that carried `[start, end)` was a copy that delivered
    /// it: the copy overtook (or outlived) its original, which is this packet.
    fn proactive_copy_came_first(&mut self, start: u64, end: u64) -> bool {
        self.ext
            .proactive
            .st()
            .history
            .iter()
            .rev()
            .find(|&&(s, e, _)| s < end && start < e)
            .is_some_and(|&(_, _, c)| c)
    }

    fn proactive_remember(&mut self, start: u64, end: u64, copy: bool) {
        let h = &mut self.ext.proactive.st().history;
        if h.len() == HISTORY {
            h.pop_front();
        }
        h.push_back((start, end, copy));
    }
}
