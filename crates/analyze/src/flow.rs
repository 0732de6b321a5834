//! A TCP flow: its two senders, its bursts, its application exchanges, and the
//! per-flow signatures computed when it ends.

use std::net::SocketAddr;

use serde::Serialize;

use crate::Dir;
use crate::cause::{Cause, CauseCounts};
use crate::decode::{Segment, flags};
use crate::exchange::{Exchange, Exchanges};
use crate::figures::Figures;
use crate::police::PoliceTrace;
use crate::sender::{AckKind, DataKind, HostHabits, Retransmission, Sender};
use crate::tags::{Tag, Tags};

/// `gentle-aggression-sigcomm13.txt` §2: "a burst [is] a sequence of packets where the
/// server sends each packet at most 500 µs after the previous one".
pub use crate::sender::BURST_GAP_NS;
/// Bufferbloat: the flow's 95th-percentile RTT is at least twice its minimum, and at
/// least this much above it.
pub const BLOAT_MIN_INFLATION_NS: u64 = 50_000_000;
pub use crate::police::{POLICE_MAX_INFLATION, POLICE_MAX_OFF, POLICE_MIN_LOSSES};

/// Which side the capture was taken on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapturePoint {
    /// At (or next to) the server: its packets' times are when it sent them.
    #[default]
    Server,
    /// At the client: ACKs reach the server about one minimum RTT after the capture
    /// saw them, so their times are moved by that much before inference.
    Client,
}

/// Where a flow is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Closed {
    /// Both FINs acknowledged.
    Fin,
    /// A reset.
    Rst,
    /// Still open when the capture ended (or idle too long).
    Open,
}

/// A recovery episode in the report.
#[derive(Clone, Debug, Serialize)]
pub struct EpisodeReport {
    /// Start, ms from the flow's first packet.
    pub start_ms: f64,
    /// Duration, ms (until the ACK covering what was outstanding at its start).
    pub duration_ms: Option<f64>,
    /// Cause of its first retransmission.
    pub cause: Cause,
    /// Retransmissions in it.
    pub retransmissions: u32,
}

/// The per-flow signatures.
#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    /// Flow number, in order of first packet.
    pub id: u32,
    /// Server address and port.
    pub server: String,
    /// Client address and port.
    pub client: String,
    /// First packet, ns (capture clock).
    pub start_ns: u64,
    /// First to last packet, ms.
    pub duration_ms: f64,
    /// How it ended.
    pub closed: Closed,
    /// SYN-ACK to the handshake's ACK (or SYN to SYN-ACK on the client side), ms.
    pub handshake_rtt_ms: Option<f64>,
    /// The server's RTT samples: minimum, smoothed (last), 95th percentile, ms.
    pub rtt_min_ms: Option<f64>,
    /// Smoothed RTT at the end, ms.
    pub srtt_ms: Option<f64>,
    /// 95th-percentile RTT sample, ms.
    pub rtt_p95_ms: Option<f64>,
    /// Packets, both directions.
    pub packets: u64,
    /// Server data packets (originals and retransmissions).
    pub data_packets: u64,
    /// Payload bytes of new data, server to client.
    pub bytes_to_client: u64,
    /// Payload bytes of new data, client to server.
    pub bytes_to_server: u64,
    /// The server's retransmissions by cause.
    pub retransmissions: CauseCounts,
    /// The client's retransmissions by cause (as far as the capture point allows).
    pub client_retransmissions: CauseCounts,
    /// SYN retransmissions (both ends).
    pub syn_retransmissions: u32,
    /// Duplicate ACKs from the client.
    pub dup_acks: u32,
    /// ACKs carrying SACK blocks from the client.
    pub sack_acks: u32,
    /// DSACKs from the client.
    pub dsacks: u32,
    /// Window updates from the client.
    pub window_updates: u32,
    /// Zero-window advertisements from the client.
    pub zero_windows: u32,
    /// Corrective packets (ENCODED).
    pub corrective: u32,
    /// Proactive copies.
    pub proactive_copies: u32,
    /// Fast start packets.
    pub fast_start: u32,
    /// Packets marked CE.
    pub ecn_ce: u32,
    /// Server bursts (§2).
    pub bursts: u32,
    /// Server transmissions lost (retransmitted and not shown unnecessary).
    pub losses: u32,
    /// Bursts with at least one loss.
    pub lossy_bursts: u32,
    /// Losses at the tail, repaired by a probe or a timeout.
    pub tail_losses: u32,
    /// Measured RTO over the smoothed RTT, for each timeout (Figure 2).
    pub rto_over_rtt: Vec<f64>,
    /// Reordering events: data acknowledged after later data was SACKed, never
    /// resent.
    pub reordering_events: u32,
    /// Largest reordering extent, segments.
    pub reordering_max: u32,
    /// 95th-percentile RTT over the minimum, ms.
    pub rtt_inflation_ms: Option<f64>,
    /// RTT inflation large enough to call bufferbloat.
    pub bufferbloat: bool,
    /// The flat delivery rate losses held the flow to, kbit/s, when it looks policed.
    pub policed_kbps: Option<f64>,
    /// Recovery episodes.
    pub recoveries: Vec<EpisodeReport>,
    /// Request/response exchanges.
    pub exchanges: Vec<Exchange>,
    /// Packets missing from the capture (sequence gaps).
    pub capture_gaps: u32,
    /// Frames captured twice, left out of the analysis ([`crate::copies`]).
    pub capture_copies: u32,
    /// The server's retransmissions one by one (kept with
    /// [`crate::Options::keep_retransmissions`]); `seq` counts from the first data
    /// byte as 0.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retransmission_log: Vec<crate::sender::Retransmission>,
    /// The client's retransmissions one by one, likewise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_retransmission_log: Vec<crate::sender::Retransmission>,
    /// Server and client ports.
    #[serde(skip)]
    pub ports: (u16, u16),
    /// Probe-or-timeout guesses the host's habits had not settled when the flow
    /// ended; the analyser settles them at the end of the capture.
    #[serde(skip)]
    pub unsettled: Vec<Unsettled>,
}

/// A lone segment's probe-or-timeout, guessed, and where the guess was counted.
#[derive(Clone, Copy, Debug)]
pub struct Unsettled {
    /// Index in the server's retransmissions (and the log, when kept).
    pub log: usize,
    /// The exchange it was counted in.
    pub exchange: Option<usize>,
    /// The recovery episode it began.
    pub episode: Option<usize>,
    /// The guess.
    pub guess: Cause,
    /// A fast retransmission on FACK's count alone (else a probe-or-timeout).
    pub fack: bool,
}

impl FlowReport {
    /// The retransmissions listed one by one (with
    /// [`crate::Options::keep_retransmissions`]): the server's, then the client's,
    /// each with whether it went to the client.
    pub fn logged_retransmissions(&self) -> impl Iterator<Item = (bool, &Retransmission)> {
        let srv = self.retransmission_log.iter().map(|r| (true, r));
        srv.chain(self.client_retransmission_log.iter().map(|r| (false, r)))
    }

    /// Settles the guesses by the host's habits: lone-segment timer retransmissions
    /// were probes or not (`probes`, if known); recoveries begun on FACK's count
    /// alone were fast if the host uses FACK, else early.
    pub fn settle(&mut self, probes: Option<bool>, uses_fack: bool) {
        for u in std::mem::take(&mut self.unsettled) {
            let to = match (u.fack, probes) {
                (true, _) if uses_fack => Cause::Fast,
                (true, _) => Cause::Early,
                (false, Some(true)) => Cause::Probe,
                (false, Some(false)) => Cause::Timeout,
                _ => continue,
            };
            if u.guess == to {
                continue;
            }
            self.retransmissions.revise(u.guess, to);
            if let Some(e) = u.exchange.and_then(|i| self.exchanges.get_mut(i)) {
                e.retransmissions.revise(u.guess, to);
            }
            if let Some(e) = u.episode.and_then(|i| self.recoveries.get_mut(i)) {
                e.cause = to;
            }
            if let Some(r) = self.retransmission_log.get_mut(u.log) {
                r.cause = to;
                r.ambiguous = false;
                r.fack_only = false;
            }
        }
    }
}

/// One flow under way.
#[derive(Debug)]
pub struct Flow {
    id: u32,
    server: SocketAddr,
    client: SocketAddr,
    start_ns: u64,
    last_ns: u64,
    srv: Sender,
    cli: Sender,
    packets: u64,
    data_packets: u64,
    frames_seen: crate::copies::Copies,
    capture_copies: u32,
    syn_retrans: u32,
    syn_seen: [bool; 2],
    /// A side's SYN came again and the other side has not sent its SYN since: the
    /// next SYN-ACK answers it.
    syn_repeated: [bool; 2],
    synack_ns: Option<u64>,
    syn_ns: Option<u64>,
    handshake_rtt: Option<u64>,
    fin: [Option<u64>; 2],
    rst: bool,
    dup_acks: u32,
    sack_acks: u32,
    dsacks: u32,
    window_updates: u32,
    zero_windows: u32,
    corrective: u32,
    copies: u32,
    fast_start: u32,
    ce: u32,
    pos: u16,
    burst_lens: Vec<u16>,
    last_srv_data_ns: Option<u64>,
    exchanges: Exchanges,
    /// The server's transmissions and RTT samples, for the policing signature.
    police: PoliceTrace,
    point: CapturePoint,
}

impl Flow {
    /// A flow whose first packet is at `t`.
    pub fn new(
        id: u32,
        server: SocketAddr,
        client: SocketAddr,
        t: u64,
        point: CapturePoint,
    ) -> Self {
        Flow {
            id,
            server,
            client,
            start_ns: t,
            last_ns: t,
            srv: Sender::far_from_capture(point == CapturePoint::Client),
            cli: Sender::far_from_capture(point == CapturePoint::Server),
            packets: 0,
            data_packets: 0,
            frames_seen: crate::copies::Copies::default(),
            capture_copies: 0,
            syn_retrans: 0,
            syn_seen: [false; 2],
            syn_repeated: [false; 2],
            synack_ns: None,
            syn_ns: None,
            handshake_rtt: None,
            fin: [None; 2],
            rst: false,
            dup_acks: 0,
            sack_acks: 0,
            dsacks: 0,
            window_updates: 0,
            zero_windows: 0,
            corrective: 0,
            copies: 0,
            fast_start: 0,
            ce: 0,
            pos: 0,
            burst_lens: Vec::new(),
            last_srv_data_ns: None,
            exchanges: Exchanges::default(),
            police: PoliceTrace::default(),
            point,
        }
    }

    /// The direction the near end (where the capture was taken) sends in.
    fn near_dir(&self) -> Dir {
        match self.point {
            CapturePoint::Server => Dir::ToClient,
            CapturePoint::Client => Dir::ToServer,
        }
    }

    /// The flow's number.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The relative sequence number of `seq` sent in direction `dir` (the ISN is 0,
    /// the first data byte 1).
    pub fn rel_seq(&self, dir: Dir, seq: u32) -> u64 {
        match dir {
            Dir::ToClient => self.srv.offset(seq) + 1,
            Dir::ToServer => self.cli.offset(seq) + 1,
        }
    }

    /// The time the flow last saw a packet.
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// Whether the flow has ended (both FINs acknowledged, or a reset).
    pub fn finished(&self) -> bool {
        self.rst
            || matches!(self.fin, [Some(a), Some(b)]
                if self.srv.una > a && self.cli.una > b)
    }

    /// One packet of this flow. Returns its tags and, for a retransmission, its
    /// cause.
    pub fn packet(
        &mut self,
        seg: &Segment,
        payload: &[u8],
        dir: Dir,
        habits: &mut HostHabits,
    ) -> (Tags, Option<Cause>) {
        self.last_ns = seg.ts_ns;
        self.packets += 1;
        let mut tags = Tags::default();
        let mut cause = None;
        if self
            .frames_seen
            .is_copy((dir == Dir::ToServer) as usize, seg, payload)
        {
            self.capture_copies += 1;
            tags.add(Tag::CaptureCopy);
            return (tags, None);
        }
        if seg.ecn == 3 {
            self.ce += 1;
            tags.add(Tag::Ce);
        }
        if seg.has(flags::RST) {
            self.rst = true;
            tags.add(Tag::Rst);
        }
        // Taken before the SYN's RTT samples: an ACK's shift is the path as known
        // up to this packet.
        let rx_shift = self.rx_shift(dir);
        if seg.has(flags::SYN) {
            cause = self.syn(seg, dir, &mut tags);
        }
        // The ACK side: what this packet says of the other direction's data.
        if seg.has(flags::ACK) {
            self.ack(seg, dir, rx_shift, &mut tags);
        }
        // The data side.
        if seg.has(flags::COPY) {
            self.copies += 1;
            tags.add(Tag::ProactiveCopy);
            return (tags, None);
        }
        if seg.has(flags::FAST_START) {
            self.fast_start += 1;
            tags.add(Tag::FastStart);
        }
        if seg.opts.corrective_encoded {
            self.corrective += 1;
            tags.add(Tag::Corrective);
            return (tags, None);
        }
        if let Some(c) = self.data(seg, payload, dir, habits, &mut tags) {
            cause = Some(c);
        }
        (tags, cause)
    }

    /// How long after the capture saw a packet going `dir` its receiver had it.
    /// The capture sees the near end's packets as it sends them, and the far end's
    /// as they arrive: an ACK from the near end reaches the far sender, and what it
    /// triggers comes back, about a minimum RTT after the capture saw it.
    fn rx_shift(&self, dir: Dir) -> u64 {
        if dir != self.near_dir() {
            return 0;
        }
        let far = match dir {
            Dir::ToClient => &self.cli,
            Dir::ToServer => &self.srv,
        };
        far.rtt.min_or(self.handshake_rtt.unwrap_or(0))
    }

    /// A SYN or SYN-ACK going `dir`: a repeated SYN, the MSS and SACK options, and
    /// on the client side the handshake's RTT. Returns a resent SYN's cause.
    fn syn(&mut self, seg: &Segment, dir: Dir, tags: &mut Tags) -> Option<Cause> {
        let t = seg.ts_ns;
        let mut cause = None;
        let (me, peer) = match dir {
            Dir::ToClient => (&mut self.srv, &mut self.cli),
            Dir::ToServer => (&mut self.cli, &mut self.srv),
        };
        let side = (dir == Dir::ToServer) as usize;
        tags.add(Tag::Syn);
        if self.syn_seen[side] {
            self.syn_retrans += 1;
            tags.add(Tag::SynRetransmission);
            // A SYN is resent on its timer (RFC 6298 §5.7, RFC 9293 §3.8.1),
            // unless it answers the peer's repeated SYN (Linux `tcp_check_req`
            // resends the SYN-ACK when the SYN comes again).
            if !(seg.has(flags::ACK) && self.syn_repeated[1 - side]) {
                cause = Some(Cause::Timeout);
            }
            self.syn_repeated[side] = !seg.has(flags::ACK);
        }
        self.syn_repeated[1 - side] = false;
        self.syn_seen[side] = true;
        me.on_syn(seg.seq);
        if let Some((v, _)) = seg.opts.ts {
            me.sent_with_tsval(t, v);
        }
        if let Some(m) = seg.opts.mss {
            me.on_mss_option(m);
            peer.on_mss_option(m);
        }
        if seg.has(flags::ACK) {
            self.synack_ns = Some(t);
            if self.point == CapturePoint::Client
                && self.handshake_rtt.is_none()
                && let Some(s) = self.syn_ns
            {
                // SYN out, SYN-ACK back: the path's RTT, both senders' first
                // sample.
                let r = t.saturating_sub(s);
                self.handshake_rtt = Some(r);
                me.rtt.sample(r);
                peer.rtt.sample(r);
            }
            // SACK is in use when the SYN-ACK permits it (RFC 2018 §2: only
            // in answer to a SYN that did).
            if seg.opts.sack_permitted {
                me.sack_ok = true;
                peer.sack_ok = true;
            }
        } else {
            self.syn_ns = Some(t);
        }
        cause
    }

    /// The ACK of a packet going `dir`, which its receiver had `rx_shift` after the
    /// capture saw it: the RTT, what the peer's sender learns, and the ACK's tags.
    fn ack(&mut self, seg: &Segment, dir: Dir, rx_shift: u64, tags: &mut Tags) {
        let t = seg.ts_ns;
        let to_far = dir == self.near_dir();
        let (me, peer) = match dir {
            Dir::ToClient => (&mut self.srv, &mut self.cli),
            Dir::ToServer => (&mut self.cli, &mut self.srv),
        };
        if self.point == CapturePoint::Server
            && dir == Dir::ToServer
            && self.handshake_rtt.is_none()
            && !seg.has(flags::SYN)
            && let Some(sa) = self.synack_ns
        {
            let r = t.saturating_sub(sa);
            self.handshake_rtt = Some(r);
            // The server's first RTT sample is its SYN-ACK's (Linux
            // `tcp_synack_rtt_meas`; RFC 6298 §2.2 allows it), and the path's
            // RTT is the client's too.
            peer.rtt.sample(r);
            me.rtt.sample(r);
        }
        let mut k: AckKind = peer.on_ack(
            t + rx_shift,
            seg.ack,
            seg.window,
            seg.len > 0,
            seg.opts.sack_blocks(),
            seg.opts.ts.map(|t| t.1),
        );
        if seg.has(flags::RST) {
            // A reset's window and ACK close the connection; they update and
            // duplicate nothing (RFC 9293 §3.10.7).
            k.window_update = false;
            k.duplicate = false;
        }
        if let Some((v, _)) = seg.opts.ts {
            if to_far {
                peer.receiver_ack(t, v, k.could_trigger());
            } else {
                me.sent_with_tsval(t, v);
            }
        }
        // The far end's ACK of the near end's data: a sample of the path's RTT,
        // the far sender's as much as the near one's.
        if let Some(r) = k.rtt_sample
            && !to_far
        {
            me.rtt.sample(r);
        }
        // A sample of the server's data: its own (the ACK going to it), or the
        // near end's, which the server's sender takes too.
        if let Some(r) = k.rtt_sample
            && (dir == Dir::ToServer || !to_far)
        {
            self.police.rtt(t, r);
        }
        ack_tags(&k, seg, tags);
        if dir == Dir::ToServer {
            self.dup_acks += k.duplicate as u32;
            self.sack_acks += k.sack as u32;
            self.dsacks += k.dsack as u32;
            self.window_updates += k.window_update as u32;
            self.zero_windows += tags.has(Tag::ZeroWindow) as u32;
            if k.advanced {
                self.on_server_progress(t);
            }
        }
    }

    /// The data or FIN of a packet going `dir` (none on a SYN): its place in the
    /// server's bursts, new or resent and why, and the application's bytes.
    /// Returns a retransmission's cause.
    fn data(
        &mut self,
        seg: &Segment,
        payload: &[u8],
        dir: Dir,
        habits: &mut HostHabits,
        tags: &mut Tags,
    ) -> Option<Cause> {
        let t = seg.ts_ns;
        let data_len = seg.len + seg.has(flags::FIN) as u32;
        if data_len == 0 || seg.has(flags::SYN) {
            return None;
        }
        if seg.has(flags::FIN) {
            let me = match dir {
                Dir::ToClient => &self.srv,
                Dir::ToServer => &self.cli,
            };
            let end = me.offset(seg.seq) + data_len as u64 - 1;
            self.fin[(dir == Dir::ToServer) as usize].get_or_insert(end);
            tags.add(Tag::Fin);
        }
        let (burst, pos) = if dir == Dir::ToClient {
            self.data_packets += 1;
            self.police.data(t, data_len);
            self.place_in_burst(t)
        } else {
            (0, 0)
        };
        let me = match dir {
            Dir::ToClient => &mut self.srv,
            Dir::ToServer => &mut self.cli,
        };
        let before = me.nxt;
        let kind = me.on_data(t, seg.seq, data_len, seg.opts.ts, burst, pos, habits);
        let new_bytes = me.nxt.saturating_sub(before);
        let cause = match kind {
            DataKind::Original => {
                tags.add(Tag::Original);
                None
            }
            DataKind::Retransmission(c) => {
                tags.add(Tag::Retransmission);
                Some(c)
            }
        };
        if seg.len > 0 {
            let payload_new = new_bytes.min(seg.len as u64);
            self.exchanges.data(dir, t, payload_new, payload);
        }
        cause
    }

    /// The server's data was acknowledged further at `t`.
    fn on_server_progress(&mut self, t: u64) {
        if self.srv.una >= self.srv.nxt {
            self.exchanges.response_acked(t);
        }
    }

    fn place_in_burst(&mut self, t: u64) -> (u32, u16) {
        let same = self
            .last_srv_data_ns
            .is_some_and(|l| t.saturating_sub(l) <= BURST_GAP_NS);
        self.last_srv_data_ns = Some(t);
        if same && !self.burst_lens.is_empty() {
            self.pos = self.pos.saturating_add(1);
            let b = self.burst_lens.len() - 1;
            self.burst_lens[b] = self.burst_lens[b].saturating_add(1);
        } else {
            self.burst_lens.push(1);
            self.pos = 1;
        }
        ((self.burst_lens.len() - 1) as u32, self.pos)
    }

    /// Ends the flow: computes its signatures and adds it to the figures; with
    /// `keep_log`, the report lists every server retransmission.
    pub fn finish(mut self, figs: &mut Figures, keep_log: bool, habits: HostHabits) -> FlowReport {
        self.srv.settle(habits);
        let (losses, lossy_bursts, tail_losses) = self.losses(figs);
        for &r in &self.srv.rto_over_rtt {
            figs.rto_over_rtt.push(r);
        }
        let rtt = self.rtt_signatures();
        let exchanges =
            std::mem::take(&mut self.exchanges).finish(&self.srv.retrans, &self.srv.episodes);
        let rtt_for_fig = rtt.min.or(self.handshake_rtt);
        for e in &exchanges {
            if let (Some(r), Some(l)) = (rtt_for_fig, e.response_ms) {
                figs.latency(ms(r), l, e.lossy());
            }
        }
        let unsettled = unsettled(&self.srv, &exchanges);
        let srv = &self.srv;
        let start = self.start_ns;
        FlowReport {
            id: self.id,
            server: self.server.to_string(),
            client: self.client.to_string(),
            start_ns: start,
            duration_ms: ms(self.last_ns.saturating_sub(start)),
            closed: self.closed(),
            handshake_rtt_ms: self.handshake_rtt.map(ms),
            rtt_min_ms: rtt.min.map(ms),
            srtt_ms: srv.rtt.known().then(|| ms(srv.rtt.srtt)),
            rtt_p95_ms: rtt.p95.map(ms),
            packets: self.packets,
            data_packets: self.data_packets,
            bytes_to_client: self.exchanges_bytes(true),
            bytes_to_server: self.exchanges_bytes(false),
            retransmissions: srv.counts,
            client_retransmissions: self.cli.counts,
            syn_retransmissions: self.syn_retrans,
            dup_acks: self.dup_acks,
            sack_acks: self.sack_acks,
            dsacks: self.dsacks,
            window_updates: self.window_updates,
            zero_windows: self.zero_windows,
            corrective: self.corrective,
            proactive_copies: self.copies,
            fast_start: self.fast_start,
            ecn_ce: self.ce,
            bursts: self.burst_lens.len() as u32,
            losses,
            lossy_bursts,
            tail_losses,
            rto_over_rtt: srv.rto_over_rtt.clone(),
            reordering_events: srv.reorder_events,
            reordering_max: srv.reorder_max,
            rtt_inflation_ms: rtt.inflation.map(ms),
            bufferbloat: rtt.bufferbloat,
            policed_kbps: rtt.policed_kbps,
            recoveries: self.recovery_reports(),
            exchanges,
            capture_gaps: srv.capture_gaps + self.cli.capture_gaps,
            capture_copies: self.capture_copies,
            retransmission_log: if keep_log {
                srv.retrans.clone()
            } else {
                Vec::new()
            },
            client_retransmission_log: if keep_log {
                self.cli.retrans.clone()
            } else {
                Vec::new()
            },
            ports: (self.server.port(), self.client.port()),
            unsettled,
        }
    }

    /// The server's losses — transmissions retransmitted and not shown unnecessary
    /// — by burst, into the figures. Returns the losses, the bursts with one, and
    /// the tail losses among them.
    fn losses(&self, figs: &mut Figures) -> (u32, u32, u32) {
        let srv = &self.srv;
        let mut per_burst: Vec<u16> = vec![0; self.burst_lens.len()];
        let (mut losses, mut tail) = (0u32, 0u32);
        for l in &srv.lost {
            if srv.retrans[l.record as usize].spurious.is_some() {
                continue;
            }
            losses += 1;
            tail += l.tail as u32;
            let (b, pos) = (l.burst, l.pos);
            if let (Some(n), Some(&len)) = (
                per_burst.get_mut(b as usize),
                self.burst_lens.get(b as usize),
            ) {
                *n += 1;
                figs.loss_at(len, pos);
            }
        }
        for (&len, &lost) in self.burst_lens.iter().zip(&per_burst) {
            figs.burst(len, lost);
        }
        let lossy_bursts = per_burst.iter().filter(|&&n| n > 0).count() as u32;
        (losses, lossy_bursts, tail)
    }

    /// The server's RTT samples and what they show (§2).
    fn rtt_signatures(&self) -> RttSignatures {
        let srv = &self.srv;
        let min = srv.rtt.min_checked();
        let p95 = srv.rtt.quantile(0.95);
        let inflation = min.zip(p95).map(|(m, p)| p.saturating_sub(m));
        let bufferbloat = min
            .zip(p95)
            // p ≥ 2m, without 2m overflowing on a capture's absurd times.
            .is_some_and(|(m, p)| p.saturating_sub(m) >= m.max(BLOAT_MIN_INFLATION_NS));
        let policed_kbps = min
            .and_then(|m| self.police.detect(&self.lost_transmissions(), m))
            .map(|p| p.rate_bps / 1e3);
        RttSignatures {
            min,
            p95,
            inflation,
            bufferbloat,
            policed_kbps,
        }
    }

    /// The indices of the server's lost transmissions (not shown unnecessary)
    /// among all its data transmissions, from their bursts and positions.
    fn lost_transmissions(&self) -> Vec<usize> {
        let mut first = Vec::with_capacity(self.burst_lens.len());
        let mut n = 0usize;
        for &len in &self.burst_lens {
            first.push(n);
            n += len as usize;
        }
        let srv = &self.srv;
        srv.lost
            .iter()
            .filter(|l| srv.retrans[l.record as usize].spurious.is_none())
            .filter_map(|&super::sender::Lost { burst: b, pos, .. }| {
                let len = *self.burst_lens.get(b as usize)?;
                // A burst of 65535 packets or more saturates its count.
                (pos >= 1 && pos <= len && len < u16::MAX)
                    .then(|| first[b as usize] + pos as usize - 1)
            })
            .collect()
    }

    /// How the flow ended, so far.
    fn closed(&self) -> Closed {
        if self.rst {
            Closed::Rst
        } else if self.finished() {
            Closed::Fin
        } else {
            Closed::Open
        }
    }

    /// The server's recovery episodes, timed from the flow's first packet.
    fn recovery_reports(&self) -> Vec<EpisodeReport> {
        let start = self.start_ns;
        self.srv
            .episodes
            .iter()
            .map(|e| EpisodeReport {
                start_ms: ms(e.start_ns.saturating_sub(start)),
                duration_ms: e.end_ns.map(|x| ms(x.saturating_sub(e.start_ns))),
                cause: e.cause,
                retransmissions: e.retransmissions,
            })
            .collect()
    }

    /// New payload bytes one way: the sequence space sent, less its FIN.
    fn exchanges_bytes(&self, to_client: bool) -> u64 {
        let (s, fin) = if to_client {
            (&self.srv, self.fin[0])
        } else {
            (&self.cli, self.fin[1])
        };
        s.nxt.saturating_sub(fin.map_or(0, |_| 1))
    }

    /// The server's retransmissions so far, for the ground-truth comparison.
    pub fn server_retransmissions(&self) -> &[crate::sender::Retransmission] {
        &self.srv.retrans
    }

    /// The flow's endpoints.
    pub fn endpoints(&self) -> (SocketAddr, SocketAddr) {
        (self.server, self.client)
    }
}

/// ns to ms.
fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The server's RTT signatures (§2).
struct RttSignatures {
    /// Smallest sample, ns.
    min: Option<u64>,
    /// 95th-percentile sample, ns.
    p95: Option<u64>,
    /// The 95th percentile over the minimum, ns.
    inflation: Option<u64>,
    /// Inflation large enough to call bufferbloat.
    bufferbloat: bool,
    /// The flat delivery rate losses held the flow to, kbit/s, when it looks policed.
    policed_kbps: Option<f64>,
}

/// The server's retransmissions whose cause the host's habits settle later, with
/// the exchange and the recovery episode each was counted in.
fn unsettled(srv: &Sender, exchanges: &[Exchange]) -> Vec<Unsettled> {
    srv.retrans
        .iter()
        .enumerate()
        .filter(|(_, r)| r.ambiguous || r.fack_only)
        .map(|(i, r)| Unsettled {
            log: i,
            exchange: exchanges
                .partition_point(|e| e.request_ns <= r.t_ns)
                .checked_sub(1),
            episode: srv.episodes.iter().position(|e| e.start_ns == r.t_ns),
            guess: r.cause,
            fack: r.fack_only && !r.ambiguous,
        })
        .collect()
}

/// The tags an ACK earns by what the sender made of it (`k`) and its window.
fn ack_tags(k: &AckKind, seg: &Segment, tags: &mut Tags) {
    if k.duplicate {
        tags.add(Tag::DupAck);
    }
    if k.sack {
        tags.add(Tag::Sack);
    }
    if k.dsack {
        tags.add(Tag::Dsack);
    }
    if k.window_update {
        tags.add(Tag::WindowUpdate);
    }
    if k.undid {
        tags.add(Tag::UndoesRetransmission);
    }
    if k.reordering.is_some() {
        tags.add(Tag::Reordering);
    }
    if seg.window == 0 && !seg.has(flags::SYN) && !seg.has(flags::RST) {
        tags.add(Tag::ZeroWindow);
    }
}
