//! One flow as `gentle view` draws it, from a trace or a capture alike: the data
//! sender's segments and the ACKs it received as columns (one array per field, not
//! one object per packet, so that a 100,000-packet flow stays a few megabytes), the
//! drops the trace knows, the engine's state where a trace records it, and what is
//! derived the same way for both: RTT samples and the smoothed RTT, data in flight,
//! throughput, which retransmissions a DSACK showed spurious, and the recovery
//! episodes.

use serde::Serialize;

/// Why a data segment was sent: 0 new data, then the retransmission causes of the
/// engine's trace and of `gentle analyze`, in this order (the page's legend).
pub const CAUSES: [&str; 7] = [
    "original",
    "fast",
    "early",
    "timeout",
    "slow-start",
    "probe",
    "retransmission",
];

/// The cause's code in [`CAUSES`] (an unknown name is a retransmission of no known
/// cause).
pub fn cause_code(name: &str) -> u8 {
    CAUSES.iter().position(|c| *c == name).unwrap_or(6) as u8
}

/// The packets of a flow as the data sender saw them, column by column.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Packets {
    /// Time, ms from the first data segment.
    pub t: Vec<f64>,
    /// 0: data (or SYN/FIN) sent by the data sender; 1: a segment it received.
    pub dir: Vec<u8>,
    /// Sequence number, relative to the sender's ISN.
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    /// Acknowledgment number, relative to the other side's ISN (the sender's, for
    /// received segments).
    pub ack: Vec<u64>,
    /// Advertised window, bytes (as the segment carried it, unscaled when the scale
    /// is unknown).
    pub win: Vec<u32>,
    /// Index into [`FlowData::flag_names`].
    pub flags: Vec<u8>,
    /// Timestamp option (TSval, TSecr), less the first value seen of its clock
    /// ([`Packets::ts_base`]: the data sender's clock, then the receiver's); none
    /// when absent.
    pub tsval: Vec<Option<i64>>,
    pub tsecr: Vec<Option<i64>>,
    pub ts_base: [Option<u32>; 2],
    /// Bitmask over [`FlowData::tag_names`].
    pub tags: Vec<u32>,
    /// Code in [`CAUSES`] (data segments), 0 otherwise.
    pub cause: Vec<u8>,
    /// 1 when a DSACK or an undo showed the retransmission unnecessary.
    pub spurious: Vec<u8>,
    /// SACK blocks of packet i: `sack[2*sack_at[i]..2*sack_at[i+1]]`, pairs.
    pub sack_at: Vec<u32>,
    pub sack: Vec<u64>,
}

/// One packet, as the readers push it.
#[derive(Clone, Debug, Default)]
pub struct Packet {
    pub t: f64,
    pub from_sender: bool,
    pub seq: u64,
    pub len: u32,
    pub ack: u64,
    pub win: u32,
    pub flags: String,
    pub ts: Option<(u32, u32)>,
    pub tags: Vec<&'static str>,
    pub cause: u8,
    pub sack: Vec<(u64, u64)>,
}

/// A step series: value `v[i]` from time `t[i]` on.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    pub t: Vec<f64>,
    pub v: Vec<f64>,
}

impl Series {
    pub fn push(&mut self, t: f64, v: f64) {
        self.t.push(t);
        self.v.push(v);
    }
}

/// What the trace tells of the engine, over time.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Engine {
    /// Segments, after each ACK and at each CA-state change and undo.
    pub cwnd: Series,
    pub ssthresh: Series,
    pub pipe: Series,
    /// The RTO armed after each timeout, ms (with its back-off).
    pub rto: Series,
    /// The engine's SRTT and RTO (with back-off) after each ACK, ms, where the trace
    /// has its per-ACK state.
    pub srtt: Series,
    pub rto_ack: Series,
    /// Timers armed after each ACK: the index into `timer_names`.
    pub armed: Series,
    /// CA state: the index into `ca_names`.
    pub ca: Series,
    pub ca_names: Vec<String>,
    /// Timers that fired: the index into `timer_names`.
    pub timers: Series,
    pub timer_names: Vec<String>,
    /// Every engine event of the sender's connection, as text.
    pub log_t: Vec<f64>,
    pub log: Vec<String>,
}

/// A recovery episode.
#[derive(Clone, Debug, Serialize)]
pub struct Episode {
    pub start: f64,
    pub end: f64,
    /// What began it (a retransmission cause, or the CA state entered).
    pub label: String,
    pub retransmissions: u32,
    pub spurious: u32,
}

/// A flow ready to draw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowData {
    /// Unique in the page.
    pub id: String,
    /// What it is (variant, or the capture's flow), and the file it came from.
    pub name: String,
    pub source: String,
    /// `trace` or `capture`.
    pub kind: String,
    /// A capture's flow number (as `gentle analyze` numbers them).
    pub number: Option<u32>,
    pub flag_names: Vec<String>,
    pub tag_names: Vec<String>,
    pub pk: Packets,
    /// Data segments the network dropped (traces): time, sequence, length.
    pub drop_t: Vec<f64>,
    pub drop_seq: Vec<u64>,
    pub drop_len: Vec<u32>,
    pub engine: Option<Engine>,
    pub rtt: Series,
    pub srtt: Series,
    /// snd.nxt − snd.una, bytes, at every packet (as `pk`).
    pub inflight: Vec<u64>,
    /// Bytes newly acknowledged per bin, as Mbit/s, at the bin's middle.
    pub throughput: Series,
    pub episodes: Vec<Episode>,
    /// Counts for the flow table and the comparison.
    pub summary: Summary,
}

/// A flow in numbers.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub packets: usize,
    pub data_packets: usize,
    pub bytes: u64,
    pub duration_ms: f64,
    /// Retransmissions by cause (in [`CAUSES`] order, without "original").
    pub retransmissions: Vec<(String, u32)>,
    pub spurious: u32,
    pub drops: usize,
    pub episodes: usize,
    pub srtt_ms: Option<f64>,
    /// When the last byte was acknowledged, ms.
    pub last_ack_ms: Option<f64>,
}

impl FlowData {
    pub fn new(id: String, name: String, source: String, kind: &str) -> FlowData {
        FlowData {
            id,
            name,
            source,
            kind: kind.to_string(),
            ..FlowData::default()
        }
    }

    /// Appends a packet (in time order).
    pub fn push(&mut self, p: Packet) {
        let flags = match self.flag_names.iter().position(|f| *f == p.flags) {
            Some(i) => i,
            None => {
                self.flag_names.push(p.flags.clone());
                self.flag_names.len() - 1
            }
        };
        let mut tags = 0u32;
        for tag in &p.tags {
            let i = match self.tag_names.iter().position(|n| n == tag) {
                Some(i) => i,
                None => {
                    self.tag_names.push(tag.to_string());
                    self.tag_names.len() - 1
                }
            };
            tags |= 1 << i.min(31);
        }
        let k = &mut self.pk;
        if k.sack_at.is_empty() {
            k.sack_at.push(0);
        }
        k.t.push(round_us(p.t));
        k.dir.push(u8::from(!p.from_sender));
        k.seq.push(p.seq);
        k.len.push(p.len);
        k.ack.push(p.ack);
        k.win.push(p.win);
        k.flags.push(flags as u8);
        // TSval is the sending side's clock, TSecr the other's.
        let (mine, theirs) = if p.from_sender { (0, 1) } else { (1, 0) };
        let mut rel = |clock: usize, v: u32| {
            let base = *k.ts_base[clock].get_or_insert(v);
            Some(v.wrapping_sub(base) as i32 as i64)
        };
        let (val, ecr) = match p.ts {
            Some((v, e)) => (rel(mine, v), if e == 0 { None } else { rel(theirs, e) }),
            None => (None, None),
        };
        k.tsval.push(val);
        k.tsecr.push(ecr);
        k.tags.push(tags);
        k.cause.push(p.cause);
        k.spurious.push(0);
        for (l, r) in &p.sack {
            k.sack.push(*l);
            k.sack.push(*r);
        }
        k.sack_at.push((k.sack.len() / 2) as u32);
    }

    /// Derives what is computed alike for every source; `episodes` given (from the
    /// analysis of a capture) are kept, otherwise they are found from the packets.
    pub fn finish(&mut self, episodes: Option<Vec<Episode>>) {
        mark_spurious(&mut self.pk);
        self.derive_series();
        self.episodes = match episodes {
            Some(e) => e,
            None => find_episodes(&self.pk),
        };
        for e in &mut self.episodes {
            e.spurious = (0..self.pk.t.len())
                .filter(|&i| {
                    self.pk.dir[i] == 0
                        && self.pk.cause[i] > 0
                        && self.pk.spurious[i] == 1
                        && self.pk.t[i] >= e.start
                        && self.pk.t[i] <= e.end
                })
                .count() as u32;
        }
        self.summary = self.summarise();
    }

    fn summarise(&self) -> Summary {
        let k = &self.pk;
        let data: Vec<usize> = (0..k.t.len())
            .filter(|&i| k.dir[i] == 0 && k.len[i] > 0)
            .collect();
        let retransmissions = CAUSES[1..]
            .iter()
            .enumerate()
            .map(|(c, name)| {
                let n = data
                    .iter()
                    .filter(|&&i| k.cause[i] as usize == c + 1)
                    .count();
                (name.to_string(), n as u32)
            })
            .collect();
        let high = data
            .iter()
            .map(|&i| k.seq[i] + k.len[i] as u64)
            .max()
            .unwrap_or(0);
        let last_ack_ms = (0..k.t.len())
            .find(|&i| k.dir[i] == 1 && high > 0 && k.ack[i] >= high)
            .map(|i| k.t[i]);
        Summary {
            packets: k.t.len(),
            data_packets: data.len(),
            bytes: high.saturating_sub(data.first().map_or(0, |&i| k.seq[i])),
            duration_ms: k.t.last().copied().unwrap_or(0.0),
            retransmissions,
            spurious: data.iter().filter(|&&i| k.spurious[i] == 1).count() as u32,
            drops: self.drop_t.len(),
            episodes: self.episodes.len(),
            srtt_ms: self.srtt.v.last().copied(),
            last_ack_ms,
        }
    }

    /// RTT samples (Karn: only segments sent once), the RFC 6298 smoothed RTT, data
    /// in flight and throughput.
    fn derive_series(&mut self) {
        let k = &self.pk;
        let mut sent: Vec<(u64, f64, bool)> = Vec::new(); // (end, first sent, resent)
        let (mut una, mut nxt) = (0u64, 0u64);
        let mut srtt: Option<f64> = None;
        let mut una_seen = false;
        for i in 0..k.t.len() {
            if k.dir[i] == 0 {
                let end = k.seq[i] + k.len[i] as u64;
                if k.len[i] > 0 {
                    if end > nxt {
                        sent.push((end, k.t[i], false));
                    } else {
                        for s in sent.iter_mut().filter(|s| s.0 > k.seq[i] && s.0 <= end) {
                            s.2 = true;
                        }
                    }
                }
                nxt = nxt.max(end);
            } else if k.ack[i] > una || !una_seen {
                let ack = k.ack[i];
                // The newest segment this ACK covers gives the sample.
                let covered = sent.partition_point(|s| s.0 <= ack);
                if una_seen
                    && covered > 0
                    && let Some(s) = sent.get(covered - 1)
                    && s.0 > una
                    && !s.2
                {
                    let r = k.t[i] - s.1;
                    self.rtt.push(k.t[i], round_us(r));
                    let v = srtt.map_or(r, |x| 0.875 * x + 0.125 * r);
                    srtt = Some(v);
                    self.srtt.push(k.t[i], round_us(v));
                }
                sent.drain(..covered);
                una = ack;
                una_seen = true;
            }
            self.inflight.push(nxt.saturating_sub(una));
        }
        self.throughput = throughput(k);
    }
}

/// Rounds a time to the microsecond (what the JSON carries).
fn round_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// Bytes newly acknowledged per bin (100 bins over the flow, at least 1 ms wide),
/// as Mbit/s.
fn throughput(k: &Packets) -> Series {
    let mut s = Series::default();
    let end = k.t.last().copied().unwrap_or(0.0);
    if end <= 0.0 {
        return s;
    }
    let width = (end / 100.0).max(1.0);
    let bins = (end / width).ceil() as usize + 1;
    let mut bytes = vec![0u64; bins];
    let mut una: Option<u64> = None;
    for i in (0..k.t.len()).filter(|&i| k.dir[i] == 1) {
        let a = k.ack[i];
        if let Some(u) = una
            && a > u
        {
            bytes[((k.t[i] / width) as usize).min(bins - 1)] += a - u;
        }
        if una.is_none_or(|u| a > u) {
            una = Some(a);
        }
    }
    for (b, n) in bytes.iter().enumerate() {
        s.push(
            round_us((b as f64 + 0.5) * width),
            (*n as f64 * 8.0 / (width * 1e3) * 1e3).round() / 1e3,
        );
    }
    s
}

/// A retransmission is spurious when a later DSACK block (RFC 2883: the first
/// block, below the cumulative ACK or inside the second block) covers it.
fn mark_spurious(k: &mut Packets) {
    let mut dsacks: Vec<(f64, u64, u64)> = Vec::new();
    for i in 0..k.t.len() {
        let (a, b) = (k.sack_at[i] as usize, k.sack_at[i + 1] as usize);
        if k.dir[i] != 1 || a == b {
            continue;
        }
        let (l, r) = (k.sack[2 * a], k.sack[2 * a + 1]);
        let inside_second = b > a + 1 && l >= k.sack[2 * a + 2] && r <= k.sack[2 * a + 3];
        if r <= k.ack[i] || inside_second {
            dsacks.push((k.t[i], l, r));
        }
    }
    for i in 0..k.t.len() {
        if k.dir[i] == 0 && k.cause[i] > 0 {
            let (s, e) = (k.seq[i], k.seq[i] + k.len[i] as u64);
            if dsacks
                .iter()
                .any(|&(t, l, r)| t > k.t[i] && l <= s && r >= e && e > s)
            {
                k.spurious[i] = 1;
            }
        }
    }
}

/// Recovery episodes found from the packets: one begins at a retransmission sent
/// when no episode is open, and ends when the cumulative ACK covers everything that
/// was sent when it began (or with the flow).
pub fn find_episodes(k: &Packets) -> Vec<Episode> {
    let mut out: Vec<Episode> = Vec::new();
    let mut open: Option<(Episode, u64)> = None;
    let mut nxt = 0u64;
    for i in 0..k.t.len() {
        if k.dir[i] == 0 {
            let end = k.seq[i] + k.len[i] as u64;
            if k.cause[i] > 0 && k.len[i] > 0 {
                match &mut open {
                    Some((e, _)) => e.retransmissions += 1,
                    None => {
                        let e = Episode {
                            start: k.t[i],
                            end: k.t[i],
                            label: CAUSES[k.cause[i] as usize].to_string(),
                            retransmissions: 1,
                            spurious: 0,
                        };
                        open = Some((e, nxt.max(end)));
                    }
                }
            }
            nxt = nxt.max(end);
        } else if let Some((e, high)) = &mut open
            && k.ack[i] >= *high
        {
            e.end = k.t[i];
            out.push(open.take().expect("open").0);
        }
    }
    if let Some((mut e, _)) = open {
        e.end = k.t.last().copied().unwrap_or(e.start);
        out.push(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(t: f64, seq: u64, cause: u8) -> Packet {
        Packet {
            t,
            from_sender: true,
            seq,
            len: 100,
            flags: "A".into(),
            cause,
            ..Packet::default()
        }
    }
    fn ack(t: f64, ack: u64, sack: Vec<(u64, u64)>) -> Packet {
        Packet {
            t,
            ack,
            flags: "A".into(),
            sack,
            ..Packet::default()
        }
    }

    #[test]
    fn episodes_rtt_and_spurious() {
        let mut f = FlowData::default();
        f.push(ack(0.0, 0, vec![]));
        f.push(data(0.0, 0, 0));
        f.push(data(0.0, 100, 0));
        f.push(ack(10.0, 100, vec![]));
        f.push(data(30.0, 100, 3));
        f.push(ack(40.0, 200, vec![]));
        f.push(ack(41.0, 200, vec![(100, 200)]));
        f.finish(None);
        assert_eq!(f.rtt.v, vec![10.0]);
        assert_eq!(f.episodes.len(), 1);
        assert_eq!((f.episodes[0].start, f.episodes[0].end), (30.0, 40.0));
        assert_eq!(f.episodes[0].label, "timeout");
        assert_eq!(f.pk.spurious, vec![0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(f.summary.spurious, 1);
        assert_eq!(f.summary.last_ack_ms, Some(40.0));
    }
}
