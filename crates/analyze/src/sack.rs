//! The SACK scoreboard by bytes (RFC 2018 §3, RFC 6675 §3): the byte ranges above the
//! cumulative ACK a receiver reported holding, whatever the captured segments were.
//!
//! A real receiver's SACK edges need not fall on the captured segments' edges (a
//! sender that resegments, TSO split differently downstream, a middlebox), so a count
//! of whole captured segments covered misses losses a sender saw plainly. The
//! evidence of loss is therefore counted three ways and the largest taken:
//! - whole captured segments covered (Linux `sacked_out`, one per SACKed skb);
//! - SACKed bytes in whole SMSS blocks (Linux splits a partly covered TSO skb at MSS
//!   boundaries, `tcp_match_skb_to_sack`; RFC 6675 §4's `IsLost` asks for more than
//!   (DupThresh − 1)·SMSS bytes SACKed above a segment);
//! - the forward-most SACKed byte's distance from the hole, in SMSS (Linux FACK,
//!   `tcp_dupack_heuristics` with `fackets_out`, on by default before Linux 4.15):
//!   `fackets_out` segments up to it mean `fackets_out − 1` behind the hole.

/// SACKed byte ranges, sorted and disjoint, all above the cumulative ACK.
#[derive(Clone, Debug, Default)]
pub struct SackedBytes {
    ranges: Vec<(u64, u64)>,
}

impl SackedBytes {
    /// Adds the SACKed range `[l, r)`, merging it with those it touches.
    pub fn add(&mut self, l: u64, r: u64) {
        if r <= l {
            return;
        }
        let i = self.ranges.partition_point(|x| x.1 < l);
        let mut j = i;
        let (mut nl, mut nr) = (l, r);
        while j < self.ranges.len() && self.ranges[j].0 <= r {
            nl = nl.min(self.ranges[j].0);
            nr = nr.max(self.ranges[j].1);
            j += 1;
        }
        self.ranges.splice(i..j, [(nl, nr)]);
    }

    /// The cumulative ACK moved to `una`: what is below it is no longer SACKed but
    /// acknowledged.
    pub fn advance(&mut self, una: u64) {
        self.ranges.retain(|x| x.1 > una);
        if let Some(f) = self.ranges.first_mut() {
            f.0 = f.0.max(una);
        }
    }

    /// Forgets everything (RFC 6675 §5.1: the scoreboard is cleared after a timeout
    /// only if the receiver reneged; Linux `tcp_enter_loss` keeps SACKed data).
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// SACKed bytes.
    pub fn bytes(&self) -> u64 {
        self.ranges.iter().map(|x| x.1 - x.0).sum()
    }

    /// The end of the forward-most SACKed range.
    pub fn highest(&self) -> Option<u64> {
        self.ranges.last().map(|x| x.1)
    }

    /// Whether `[l, r)` is wholly SACKed.
    pub fn covers(&self, l: u64, r: u64) -> bool {
        let i = self.ranges.partition_point(|x| x.1 < r);
        self.ranges.get(i).is_some_and(|x| x.0 <= l && x.1 >= r)
    }
}

/// The evidence of loss behind the hole at `una`, in segments: the larger of the
/// whole captured segments SACKed (`whole`) and the SACKed bytes in SMSS blocks; and
/// that or the FACK distance less the hole itself, whichever is larger (see the
/// module's notes). FACK's count applies only to hosts that use FACK.
pub fn evidence(sacked: &SackedBytes, whole: u32, una: u64, smss: u32) -> (u32, u32) {
    let smss = u64::from(smss.max(1));
    let by_bytes = (sacked.bytes() / smss) as u32;
    let fack = sacked.highest().map_or(0, |h| {
        (h.saturating_sub(una).div_ceil(smss)).saturating_sub(1) as u32
    });
    let plain = whole.max(by_bytes);
    (plain, plain.max(fack))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_advance() {
        let mut s = SackedBytes::default();
        s.add(100, 200);
        s.add(300, 400);
        s.add(200, 300);
        assert_eq!(s.ranges, vec![(100, 400)]);
        s.add(500, 600);
        assert_eq!(s.bytes(), 400);
        assert!(s.covers(150, 400));
        assert!(!s.covers(350, 550));
        s.advance(350);
        assert_eq!(s.ranges, vec![(350, 400), (500, 600)]);
        assert_eq!(s.highest(), Some(600));
    }

    #[test]
    fn edges_inside_segments_still_count() {
        // Segments of 1446 bytes captured, a receiver SACKing 1430-byte blocks: three
        // of its segments SACKed above a hole of one.
        let mut s = SackedBytes::default();
        s.add(1430, 1430 + 3 * 1430);
        assert_eq!(evidence(&s, 1, 0, 1430), (3, 3));
        // Two blocks SACKed two segments past the hole: FACK's four segments.
        let mut s = SackedBytes::default();
        s.add(2 * 1430, 4 * 1430);
        assert_eq!(evidence(&s, 0, 0, 1430), (2, 3));
        // One segment SACKed right after the hole: one.
        let mut s = SackedBytes::default();
        s.add(1430, 2860);
        assert_eq!(evidence(&s, 0, 0, 1430), (1, 1));
    }
}
