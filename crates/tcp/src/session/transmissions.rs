//! The session's ordered list of transmissions and its loss detection by duplicate
//! and *later* ACKs (`fast-start-and-sessions.txt` §6.1, §7.3).
//!
//! §7.3: `session_input()` "detects packet reordering by looking for both duplicate
//! acks and *later* acks (i.e., acks for later packets of other connections). Later
//! acks are detected by comparing the echoed timestamp against a sorted list of
//! timestamps of packets that were transmitted. In the common case of no packet
//! loss and little or no reordering, ack processing will be confined to the packets
//! at or close to the head of the list." and "If there are packet(s) for which the
//! sum of duplicate and later acks exceeds a threshold (default 3), indicating a
//! likely loss, the session's `cwnd` is halved and such packet(s) are retransmitted."
//!
//! Every segment that takes sequence space, of every member, is one entry, in the
//! order it was sent (a retransmission is a new entry). An ACK on member `m` that
//! newly delivers some of `m`'s entries proves that one of them arrived: the one
//! whose TSval the ACK echoes (RFC 7323 §4.3: the segment that advanced the left
//! edge), or — without a match, as for SACKed segments, or without timestamps — the
//! newest delivered. Every entry still outstanding that was sent before it gets one
//! later ACK. A duplicate ACK counts for its member's first outstanding segment.
//! Without SACK, a member's segments beyond its first may sit in the receiver's
//! out-of-order queue, unknown to the sender, so only the first can be deemed lost
//! (as NewReno only repairs the first); the others wait until the cumulative ACK
//! reaches them and says whether they arrived. Millisecond timestamps alone cannot order segments sent in the same
//! millisecond; matching the echo within `m`'s own delivered entries can.

use std::collections::VecDeque;

use crate::time::Instant;

/// One transmission.
#[derive(Clone, Copy, Debug)]
pub struct Tx {
    /// Position in the session's transmission order.
    pub index: u64,
    /// The member that sent it.
    pub member: u32,
    /// Its sequence range, in the member's send offsets.
    pub start: u64,
    /// End of the range.
    pub end: u64,
    /// The TSval it carried.
    pub tsval: Option<u32>,
    /// When it was sent.
    pub sent: Instant,
    /// A retransmission (no RTT sample from it: Karn).
    pub retrans: bool,
    /// Sent in a fast start phase.
    pub fast_start: bool,
    /// Duplicate ACKs of its member while it was that member's oldest.
    pub dups: u32,
    /// ACKs of segments sent after it.
    pub later: u32,
}

impl Tx {
    /// Duplicate and later ACKs.
    pub fn evidence(&self) -> u32 {
        self.dups + self.later
    }
}

/// What an ACK newly delivered of one member's entries.
#[derive(Clone, Copy, Debug, Default)]
pub struct Delivered {
    /// Entries delivered.
    pub count: u32,
    /// Index of the entry the ACK proves arrived (see the module documentation).
    pub proof: Option<u64>,
    /// Send time of the proof, when it was not a retransmission: an RTT sample.
    pub rtt_from: Option<Instant>,
    /// A retransmission was among them.
    pub retrans: bool,
}

/// The ordered list.
#[derive(Clone, Debug, Default)]
pub struct Transmissions {
    q: VecDeque<Tx>,
    next: u64,
}

impl Transmissions {
    /// Entries outstanding.
    pub fn len(&self) -> u32 {
        self.q.len() as u32
    }

    /// Nothing outstanding.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The index the next transmission gets.
    pub fn next_index(&self) -> u64 {
        self.next
    }

    /// Index of the oldest outstanding entry.
    pub fn head_index(&self) -> Option<u64> {
        self.q.front().map(|t| t.index)
    }

    /// Appends a transmission and returns its index.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        member: u32,
        start: u64,
        end: u64,
        tsval: Option<u32>,
        sent: Instant,
        retrans: bool,
        fast_start: bool,
    ) -> u64 {
        let index = self.next;
        self.next += 1;
        // A retransmission replaces any entry of the same range still listed.
        if retrans {
            self.q.retain(|t| !(t.member == member && t.start == start));
        }
        self.q.push_back(Tx {
            index,
            member,
            start,
            end,
            tsval,
            sent,
            retrans,
            fast_start,
            dups: 0,
            later: 0,
        });
        index
    }

    /// Removes `member`'s entries that `delivered(start, end)` says arrived.
    pub fn take_delivered(
        &mut self,
        member: u32,
        tsecr: Option<u32>,
        mut delivered: impl FnMut(u64, u64) -> bool,
    ) -> Delivered {
        let mut d = Delivered::default();
        let mut matched: Option<(u64, Option<Instant>)> = None;
        let mut newest: Option<(u64, Option<Instant>)> = None;
        self.q.retain(|t| {
            if t.member != member || !delivered(t.start, t.end) {
                return true;
            }
            d.count += 1;
            d.retrans |= t.retrans;
            let sample = (!t.retrans).then_some(t.sent);
            if tsecr.is_some() && t.tsval == tsecr {
                matched = Some((t.index, sample));
            }
            newest = Some((t.index, sample));
            false
        });
        if let Some((i, s)) = matched.or(newest) {
            d.proof = Some(i);
            d.rtt_from = s;
        }
        d
    }

    /// One later ACK for every entry sent before `proof`.
    pub fn count_later(&mut self, proof: u64) {
        for t in self.q.iter_mut() {
            if t.index >= proof {
                break;
            }
            t.later += 1;
        }
    }

    /// One duplicate ACK for `member`'s first outstanding segment (the lowest in its
    /// sequence space), unless that is a retransmission: the duplicates that follow
    /// a retransmission come from segments sent before it (RFC 6582 §3.2: no second
    /// fast retransmit of the same segment).
    pub fn count_dup(&mut self, member: u32) {
        if let Some(t) = self
            .q
            .iter_mut()
            .filter(|t| t.member == member)
            .min_by_key(|t| t.start)
            && !t.retrans
        {
            t.dups += 1;
        }
    }

    /// A partial ACK (RFC 6582 §3.2 step 3): a retransmission of `member` arrived
    /// and its cumulative ACK stops at `una`, where a segment sent before the
    /// reduction at `before` still waits. That segment is lost: it gets the full
    /// `threshold` of evidence. Returns whether one did.
    pub fn partial_ack(&mut self, member: u32, una: u64, before: u64, threshold: u32) -> bool {
        match self
            .q
            .iter_mut()
            .find(|t| t.member == member && t.start == una && t.index < before && !t.retrans)
        {
            Some(t) => {
                t.dups = t.dups.max(threshold);
                true
            }
            None => false,
        }
    }

    /// Entries of `member` outstanding.
    pub fn count_of(&self, member: u32) -> u32 {
        self.q.iter().filter(|t| t.member == member).count() as u32
    }

    /// Moves the entries with at least `threshold` duplicate and later ACKs that
    /// `judge` lets be deemed lost to `out`.
    pub fn take_lost(
        &mut self,
        threshold: u32,
        out: &mut Vec<Tx>,
        mut judge: impl FnMut(&Tx) -> bool,
    ) {
        if !self.q.iter().any(|t| t.evidence() >= threshold) {
            return;
        }
        self.q.retain(|t| {
            if t.evidence() >= threshold && judge(t) {
                out.push(*t);
                false
            } else {
                true
            }
        });
    }

    /// Removes `member`'s entries.
    pub fn remove_member(&mut self, member: u32) {
        self.q.retain(|t| t.member != member);
    }

    /// Empties the list (a timeout: everything outstanding is lost).
    pub fn clear(&mut self) {
        self.q.clear();
    }

    /// The members with entries, oldest entry first, each once, into `out`.
    pub fn members_in_order(&self, out: &mut Vec<u32>) {
        for t in &self.q {
            if !out.contains(&t.member) {
                out.push(t.member);
            }
        }
    }

    /// The entries, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Tx> {
        self.q.iter()
    }
}
