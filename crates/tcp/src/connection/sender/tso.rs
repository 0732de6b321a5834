//! Linux's TSO packets, for the PSH flag they carry.
//!
//! Linux sends new data in TSO packets: `tcp_write_xmit` cuts each at
//! `min(tcp_cwnd_test, tcp_tso_segs)` segments — at most half of cwnd
//! (`tcp_cwnd_test`'s `halfcwnd`) and the packet size that `tcp_tso_autosize`
//! derives from the pacing rate (`tcp_update_pacing_rate`) and the minimum RTT,
//! never fewer than `tcp_min_tso_segs` (`min_tso_segs`). Since Linux 4.9 (`__tcp_transmit_skb`,
//! "Force a PSH flag on all (GSO) packets to expedite GRO flush at receiver") a
//! packet of more than one segment carries PSH; one of a single segment carries
//! it only if the application's write ended there (`tcp_mark_push`). The engine
//! sends one segment at a time: it counts the segments of the packet under way
//! and sets PSH on the last segment of a packet of several, where segmentation
//! leaves it (`tcp_gso_segment` clears PSH on all but the last). The flag is the
//! transmission's, not the data's: a retransmission does not inherit it, as the
//! forced flag is set on the transmitted clone of the skb only.

use crate::connection::Connection;
use crate::scoreboard::TxSeg;
use crate::time::Instant;

/// `sk_pacing_shift`'s default (`tcp_init_sock`): a TSO packet holds about
/// 1/1024 s of the pacing rate (~1 ms).
const PACING_SHIFT: u32 = 10;
/// `net.ipv4.tcp_tso_rtt_log`'s default: below a minimum RTT of 2^9 µs × 32,
/// packets grow by `GSO_MAX_SIZE >> (min_rtt_us >> 9)`.
const TSO_RTT_LOG: u32 = 9;
/// The largest GSO packet of a device without BIG TCP (`GSO_LEGACY_MAX_SIZE`).
const GSO_MAX_SIZE: u64 = 65_536;
/// `net.ipv4.tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`'s defaults, percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;

/// The TSO packet being sent: when it started and how many segments it has left.
#[derive(Debug, Default)]
pub(crate) struct TsoPacket {
    at: Option<Instant>,
    left: u64,
    several: bool,
}

/// The retransmitted packet being sent: when, where its last segment ended, how
/// many segments it has, and whether that segment ended its original packet.
#[derive(Debug, Default)]
pub(crate) struct TsoResend {
    at: Option<Instant>,
    end: u64,
    segs: u32,
    ended: bool,
}

impl Connection {
    /// A segment arrived, a timer fired or the application wrote: what is sent
    /// next is a new call of `tcp_write_xmit`, in packets of its own.
    pub(crate) fn tso_new_round(&mut self) {
        self.tx.tso.left = 0;
        self.tx.tso_resend = TsoResend::default();
    }

    /// For the new-data segment about to be sent at `now`: whether it ends a TSO
    /// packet of more than one segment (Linux 4.9+ sends it with PSH), and
    /// whether it ends its packet at all. Neither unless `tso_psh`.
    pub(super) fn tso_ends_packet(&mut self, now: Instant) -> (bool, bool) {
        if !self.cfg.tso_psh {
            return (false, false);
        }
        if self.tx.tso.left == 0 || self.tx.tso.at != Some(now) {
            let segs = self.tso_packet_segs();
            self.tx.tso = TsoPacket {
                at: Some(now),
                left: segs,
                several: segs > 1,
            };
        }
        self.tx.tso.left -= 1;
        let ends = self.tx.tso.left == 0;
        (self.tx.tso.several && ends, ends)
    }

    /// Whether the retransmission of `seg` at `now` ends a packet of more than one
    /// segment: it ended its original packet, and the segment before it in that
    /// packet went again just before, at the same instant (Linux retransmits a
    /// lost skb whole as cwnd allows, `tcp_retransmit_skb`).
    pub(super) fn tso_resend_ends_packet(&mut self, now: Instant, seg: &TxSeg) -> bool {
        if !self.cfg.tso_psh {
            return false;
        }
        let run = &mut self.tx.tso_resend;
        let continues = run.at == Some(now) && run.end == seg.start && !run.ended;
        run.segs = if continues { run.segs + 1 } else { 1 };
        (run.at, run.end, run.ended) = (Some(now), seg.end, seg.tso_end);
        seg.tso_end && run.segs > 1
    }

    /// Segments of the packet `tcp_write_xmit` would send now: cwnd's quota, the
    /// autosized packet, and the data the window lets go.
    fn tso_packet_segs(&self) -> u64 {
        let cwnd = u64::from(self.tx.cong.cwnd());
        let room = cwnd.saturating_sub(u64::from(self.in_flight_for_cwnd()));
        let quota = room.min((cwnd / 2).max(1));
        let mss = u64::from(self.opts.smss.max(1));
        let unsent = self.snd.buf.end().saturating_sub(self.snd.nxt);
        let data = unsent.min(self.window_room()).div_ceil(mss);
        quota.min(self.tso_autosize(mss)).min(data).max(1)
    }

    /// Linux `tcp_tso_autosize` on the pacing rate of `tcp_update_pacing_rate`.
    fn tso_autosize(&self, mss: u64) -> u64 {
        let cwnd = u64::from(self.tx.cong.cwnd());
        let ratio = if cwnd < u64::from(self.tx.cong.ssthresh()) / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let packets = cwnd.max(u64::from(self.tx.sb.packets_out()));
        // Bytes per second; unbounded before the first RTT sample.
        let rate = match self.tx.rtt.srtt() {
            Some(srtt) if srtt.as_micros() > 0 => {
                mss * packets * ratio * 10_000 / srtt.as_micros() as u64
            }
            _ => u64::MAX,
        };
        let mut bytes = rate >> PACING_SHIFT;
        let min_rtt_us = self
            .tx
            .rtt
            .min_rtt()
            .map_or(u64::MAX, |d| d.as_micros() as u64);
        let r = min_rtt_us >> TSO_RTT_LOG;
        if r < 32 {
            bytes = bytes.saturating_add(GSO_MAX_SIZE >> r);
        }
        (bytes.min(GSO_MAX_SIZE) / mss).max(u64::from(self.cfg.min_tso_segs))
    }
}
