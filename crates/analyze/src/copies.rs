//! Frames captured twice: a capture taken on both sides of a router, or a capture
//! tool that records the same frame again, shows one packet as two. Counted as a
//! retransmission, a copy would invent a loss (Wireshark flags them so).
//!
//! A copy carries the same header fields and payload as a frame of the same
//! direction shortly before it, with nothing from the peer in between. A real
//! retransmission is sent on an ACK (the peer's packet comes first) or on a timer,
//! and no TCP timer is this short: the shortest, the tail loss probe's, is at least
//! two jiffies in Linux (`TCP_TIMEOUT_MIN`, 8 ms at HZ 250; RFC 8985 §7.2).

use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use crate::decode::{Segment, flags};

/// A copy follows its original within this long (a router's forwarding delay, or
/// none at all for a frame recorded twice), ns.
const WINDOW_NS: u64 = 1_000_000;
/// Frames remembered per direction: a copy from the far side of a router can
/// trail a few frames behind its original.
const KEPT: usize = 4;

/// The recent frames of a flow's two directions.
#[derive(Debug, Default)]
pub(crate) struct Copies {
    /// Per direction: (fingerprint, time, the peer's frame count then).
    recent: [[Option<(u64, u64, u64)>; KEPT]; 2],
    next: [usize; 2],
    /// Frames seen per direction.
    frames: [u64; 2],
}

impl Copies {
    /// Whether the frame going direction `dir` (0 or 1) is a copy of a recent
    /// one; remembers it either way. Only frames that take sequence space (data,
    /// SYN, FIN) are judged: a burst of real duplicate ACKs without SACK or
    /// timestamps is byte for byte the same but for the IP ID.
    pub(crate) fn is_copy(&mut self, dir: usize, seg: &Segment, payload: &[u8]) -> bool {
        self.frames[dir] += 1;
        if seg.len == 0 && seg.flags & (flags::SYN | flags::FIN) == 0 {
            return false;
        }
        let print = fingerprint(seg, payload);
        let peer = self.frames[1 - dir];
        let copy = self.recent[dir]
            .iter()
            .flatten()
            .any(|&(p, t, n)| p == print && n == peer && seg.ts_ns.saturating_sub(t) <= WINDOW_NS);
        let i = self.next[dir];
        self.recent[dir][i] = Some((print, seg.ts_ns, peer));
        self.next[dir] = (i + 1) % KEPT;
        copy
    }
}

/// The frame's TCP header fields and payload (what a retransmission repeats too;
/// told apart by when it comes).
fn fingerprint(seg: &Segment, payload: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    (seg.seq, seg.ack, seg.flags, seg.window, seg.len, seg.ecn).hash(&mut h);
    seg.opts.hash(&mut h);
    payload.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(t_us: u64, seq: u32) -> Segment {
        let ip = std::net::IpAddr::from([10, 0, 0, 1]);
        Segment {
            ts_ns: t_us * 1000,
            src: ip,
            dst: ip,
            sport: 1,
            dport: 2,
            seq,
            ack: 0,
            flags: 0,
            window: 0,
            len: 100,
            ecn: 0,
            opts: crate::decode::Options::default(),
            captured: 0,
        }
    }

    #[test]
    fn a_frame_again_at_once_is_a_copy_and_a_resend_after_an_ack_is_not() {
        let mut c = Copies::default();
        assert!(!c.is_copy(0, &seg(0, 1), b"x"));
        assert!(c.is_copy(0, &seg(0, 1), b"x"));
        assert!(c.is_copy(0, &seg(300, 1), b"x"));
        // Other bytes, or after the peer sent something: not a copy.
        assert!(!c.is_copy(0, &seg(400, 1), b"y"));
        assert!(!c.is_copy(1, &seg(500, 9), b""));
        assert!(!c.is_copy(0, &seg(600, 1), b"x"));
        // Too late to be anything but a timer's resend.
        assert!(!c.is_copy(0, &seg(5_000, 1), b"x"));
        // Pure ACKs alike are real duplicate ACKs, never judged.
        let mut ack = seg(6_000, 1);
        ack.len = 0;
        assert!(!c.is_copy(0, &ack, b""));
        assert!(!c.is_copy(0, &ack, b""));
    }
}
