//! A TCP connection endpoint (RFC 9293) with the Linux 2.6/3.x loss-recovery
//! baseline. Read RFC 9293 §3.10 (event processing), RFC 6675 (SACK recovery) and
//! `prr-imc11.txt` §3.2 (Linux recovery) first; each submodule names its sources.
//!
//! [`Connection`] orchestrates three parts and keeps what they share (the sequence
//! space, the negotiated options, the timestamp clock, the control block, timers,
//! counters and trace):
//!
//! - [`sender`]: the [`Sender`] — scoreboard, window and congestion state, undo,
//!   F-RTO, loss detection, RTT, Early Retransmit, TLP, persist, fast start,
//!   session membership — and what acts on it: ACK processing, output, the
//!   retransmission timer, and a connection's side of a TCP session. Its fields are
//!   private to that module.
//! - [`receiver`]: the [`Receiver`] — reassembly, the receive window and the ACK
//!   policy — with segment arrival (handshake, acceptability, data, FIN, RST) and
//!   when to acknowledge (quick ACKs, delayed ACKs). Its fields are private to that
//!   module.
//! - [`extensions`]: the [`Extensions`] — Corrective (negotiation, signals,
//!   fallback), Proactive (copies and the receiver's filter) and ECN (RFC 3168) —
//!   each with its fields private, and the container's private to that module.
//! - [`timers`]: every timer's expiry, handed to its owner; [`syn_loss`]: the window
//!   after a lost SYN.

mod extensions;
mod receiver;
mod sender;
mod syn_loss;
mod timer_table;
mod timers;

use std::time::Duration;

use bytes::Bytes;
use rand_core::RngCore;

use crate::config::Config;
use crate::counters::Counters;
use crate::rtt::RttEstimator;
use crate::sendbuf::SendBuffer;
use crate::time::Instant;
use crate::trace::{Event, State, TimerKind, Traced};
use crate::wire::Segment;
pub(crate) use extensions::Extensions;
pub(crate) use receiver::Receiver;
pub use sender::PathMetrics;
pub(crate) use sender::{Fallback, Sender, decayed_cwnd, fast_start_cwnd};
use timer_table::TimerTable;

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// Both FINs exchanged and acknowledged.
    Normal,
    /// An RST arrived.
    Reset,
    /// Too many retransmissions.
    TimedOut,
    /// The application aborted.
    Aborted,
}

/// One TCP connection.
///
/// # Call contract
///
/// The engine is sans-IO: it never reads a clock, never draws randomness it was not
/// given, and never touches a socket. `now` must never go backwards between calls.
///
/// - **Constructors**: [`Connection::connect`] (active open: a SYN is queued) and
///   [`Connection::accept`] (passive open from a received SYN: a SYN-ACK is queued).
///   Both take a seeded random source, used for the initial sequence number and the
///   timestamp offset.
/// - **Input**: [`handle_segment`](Self::handle_segment) for every segment addressed
///   to this connection; [`handle_timeout`](Self::handle_timeout) when the deadline of
///   [`poll_timeout`](Self::poll_timeout) has passed (a spurious or early call is
///   harmless).
/// - **Output**: after any input or application call, call
///   [`poll_transmit`](Self::poll_transmit) until it returns `None`, and then
///   [`poll_timeout`](Self::poll_timeout) for the next deadline.
/// - **Application**: [`write`](Self::write), [`read`](Self::read), [`close`](Self::close),
///   [`abort`](Self::abort).
/// - **Getters**: [`state`](Self::state), [`ca_state`](Self::ca_state),
///   [`counters`](Self::counters), [`cwnd`](Self::cwnd), ...; trace events with
///   [`poll_event`](Self::poll_event) when `Config::trace` is on.
#[derive(Debug)]
pub struct Connection {
    pub(crate) cfg: Config,
    pub(crate) state: State,
    /// Sequence space, queue and window of the sending side.
    pub(crate) snd: SendState,
    /// What the handshake negotiated.
    pub(crate) opts: Negotiated,
    /// The RFC 7323 timestamp clock and echo.
    pub(crate) ts: TsClock,
    /// Ports, handshake, reset and close bookkeeping.
    pub(crate) ctl: Control,
    /// The sender's loss recovery and congestion state.
    pub(crate) tx: Sender,
    /// The receive side.
    pub(crate) rx: Receiver,
    /// Corrective, Proactive, ECN and session membership.
    pub(crate) ext: Extensions,
    /// Every timer of the connection.
    pub(crate) timers: TimerTable,
    pub(crate) counters: Counters,
    pub(crate) events: std::collections::VecDeque<Traced>,
}

/// The sending side's sequence space (offsets relative to ISS; the SYN is offset 0)
/// and the peer's window (RFC 9293 §3.3.1).
#[derive(Debug)]
pub(crate) struct SendState {
    pub iss: u32,
    pub una: u64,
    pub nxt: u64,
    pub buf: SendBuffer,
    /// The application closed its side: a FIN follows the queued data.
    pub app_closed: bool,
    pub fin_sent: bool,
    pub wnd: u64,
    pub wl1: u64,
    pub wl2: u64,
    /// Largest window the peer has offered (RFC 9293 §3.8.6.2.1 `Max(SND.WND)`).
    pub max_wnd: u64,
    pub last_data_sent: Instant,
    /// End of the last segment shorter than the MSS sent (Linux `snd_sml`).
    pub sml: u64,
}

/// What the handshake negotiated (RFC 9293 §3.7.1, RFC 7323, RFC 2018).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Negotiated {
    pub sack: bool,
    pub ts: bool,
    pub ws: bool,
    pub snd_wscale: u8,
    /// Payload bytes per full segment (peer MSS less our per-segment option bytes).
    pub smss: u32,
    /// The receiver's estimate of the peer's segment size (Linux `rcv_mss`).
    pub rcv_mss: u32,
}

/// The RFC 7323 timestamp clock: our offset, the peer's value to echo, and the
/// last echo seen on an ACK (for Eifel undo checks, RFC 3522).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TsClock {
    pub offset: u32,
    pub recent: u32,
    pub last_ecr: Option<u32>,
}

impl TsClock {
    /// The current TSval (RFC 7323 §5.4: a millisecond clock with a random offset).
    pub(crate) fn val(&self, now: Instant) -> u32 {
        (now.as_millis() as u32).wrapping_add(self.offset)
    }
}

/// Ports, handshake, reset and close bookkeeping.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Control {
    /// Our port and the peer's.
    pub ports: (u16, u16),
    pub syn_pending: bool,
    /// The copy of a redundant SYN is due next.
    pub syn_copy: bool,
    pub syn_sent_at: Instant,
    pub syn_retransmitted: bool,
    pub syn_retries: u32,
    /// SYNs or SYN-ACKs sent again, by the timer or for a duplicate SYN (Linux
    /// `total_retrans` of the handshake, `req->num_retrans` on the passive side).
    pub syn_resent: u32,
    /// When a duplicate SYN was last answered with the SYN-ACK (Linux
    /// `last_oow_ack_time` of the request socket).
    pub dup_syn_answered: Option<Instant>,
    pub rst_pending: bool,
    pub close_reason: Option<CloseReason>,
    /// `TCP_USER_TIMEOUT` (RFC 9293 §3.8.3's USER TIMEOUT, RFC 5482).
    pub user_timeout: Option<Duration>,
    /// When the data outstanding was first retransmitted (Linux `retrans_stamp`).
    pub retrans_stamp: Option<Instant>,
    /// The application closed the socket: it reads no more.
    pub read_closed: bool,
    /// A reset answers a segment: its sequence offset (no ACK).
    pub rst_reply: Option<u64>,
}

impl Connection {
    // Inlined, so that `connect_here` and `accept_here` write the new connection
    // where the old one stood instead of building it aside and copying it in (a short
    // trial costs about 460 instructions more without).
    #[inline(always)]
    fn new(
        cfg: Config,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        rng: &mut dyn RngCore,
    ) -> Self {
        let iss = rng.next_u32();
        let ts_offset = if cfg.timestamps { rng.next_u32() } else { 0 };
        let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max);
        let rcv_wscale = if cfg.window_scale {
            window_shift(cfg.recv_buffer)
        } else {
            0
        };
        Connection {
            state: State::Closed,
            snd: SendState {
                iss,
                una: 0,
                nxt: 0,
                buf: SendBuffer::new(1),
                app_closed: false,
                fin_sent: false,
                wnd: 0,
                wl1: 0,
                wl2: 0,
                max_wnd: 0,
                last_data_sent: now,
                sml: 0,
            },
            opts: Negotiated {
                sack: false,
                ts: false,
                ws: false,
                snd_wscale: 0,
                smss: 536,
                rcv_mss: 536,
            },
            ts: TsClock {
                offset: ts_offset,
                recent: 0,
                last_ecr: None,
            },
            ctl: Control {
                ports: (local_port, remote_port),
                syn_pending: false,
                syn_copy: false,
                syn_sent_at: now,
                syn_retransmitted: false,
                syn_retries: 0,
                syn_resent: 0,
                dup_syn_answered: None,
                rst_pending: false,
                close_reason: None,
                user_timeout: None,
                retrans_stamp: None,
                read_closed: false,
                rst_reply: None,
            },
            tx: Sender::new(&cfg, rtt),
            rx: Receiver::new(rcv_wscale),
            ext: Extensions::new(&cfg),
            timers: TimerTable::new(cfg.kernel_clock()),
            counters: Counters::default(),
            events: std::collections::VecDeque::new(),
            cfg,
        }
    }

    /// Active open: queues a SYN to `remote_port`.
    pub fn connect(
        cfg: Config,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        rng: &mut dyn RngCore,
    ) -> Self {
        let mut c = Connection::new(cfg, now, local_port, remote_port, rng);
        c.queue_syn(now);
        c
    }

    /// [`connect`](Self::connect) in place of this connection, whatever it was (a
    /// table of connections reuses its slots without moving a connection in).
    pub fn connect_here(
        &mut self,
        cfg: Config,
        now: Instant,
        local_port: u16,
        remote_port: u16,
        rng: &mut dyn RngCore,
    ) {
        let kept = self.take_storage();
        *self = Connection::new(cfg, now, local_port, remote_port, rng);
        self.reuse(kept);
        self.queue_syn(now);
    }

    /// The storage of the queues a connection fills (its scoreboard's and its send
    /// buffer's), emptied, for the connection built in its place.
    fn take_storage(&mut self) -> Storage {
        Storage {
            scoreboard: self.tx.take_storage(),
            send: self.snd.buf.take_storage(),
        }
    }

    fn reuse(&mut self, kept: Storage) {
        self.tx.reuse(kept.scoreboard);
        self.snd.buf.reuse(kept.send);
    }

    fn queue_syn(&mut self, now: Instant) {
        self.snd.nxt = 0;
        self.ctl.syn_pending = true;
        self.set_state(now, State::SynSent);
    }

    /// Passive open from a received SYN (the listener's job is only to demultiplex):
    /// negotiates options and queues a SYN-ACK. Returns `None` if `syn` is not a SYN.
    pub fn accept(cfg: Config, now: Instant, syn: &Segment, rng: &mut dyn RngCore) -> Option<Self> {
        if !opens(syn) {
            return None;
        }
        let mut c = Connection::new(cfg, now, syn.dst_port, syn.src_port, rng);
        c.take_syn(now, syn);
        Some(c)
    }

    /// [`accept`](Self::accept) in place of this connection, whatever it was; `false`
    /// (and the connection untouched) if `syn` is not a SYN.
    pub fn accept_here(
        &mut self,
        cfg: Config,
        now: Instant,
        syn: &Segment,
        rng: &mut dyn RngCore,
    ) -> bool {
        if !opens(syn) {
            return false;
        }
        let kept = self.take_storage();
        *self = Connection::new(cfg, now, syn.dst_port, syn.src_port, rng);
        self.reuse(kept);
        self.take_syn(now, syn);
        true
    }

    fn take_syn(&mut self, now: Instant, syn: &Segment) {
        self.counters.segs_in += 1;
        self.rx.on_syn(syn.seq);
        self.negotiate(syn);
        if let Some(ts) = syn.options.timestamps {
            self.ts.recent = ts.val;
        }
        self.ctl.syn_pending = true;
        self.set_state(now, State::SynReceived);
    }

    /// A model of T/TCP's accelerated open (RFC 1644), as the one-way TCP agents of
    /// ns have it (`fast-start-and-sessions.txt` §4: "all the four protocol
    /// combinations in our experiments assume T/TCP-style accelerated open that
    /// avoids the RTT for connection setup"): `client`, a connection just made by
    /// [`connect`](Self::connect), and a server end with `server_cfg` agree on
    /// everything a handshake would — options, sequence numbers, windows — at
    /// `now`, without a packet on the network, and both are ESTABLISHED. Neither
    /// takes an RTT sample from it, nor counts its segments. Not a wire behaviour:
    /// real TCP has no such open (the switch `accelerated_open` asks for it).
    pub fn accelerated_open(
        client: &mut Connection,
        server_cfg: Config,
        now: Instant,
        rng: &mut dyn RngCore,
    ) -> Connection {
        let syn = client
            .poll_transmit(now)
            .expect("a connection just made sends its SYN");
        while client.poll_transmit(now).is_some() {} // a redundant SYN's copy
        let mut server =
            Connection::accept(server_cfg, now, &syn, rng).expect("a SYN opens a connection");
        let mut rounds = 0;
        while !(client.is_established() && server.is_established()) && rounds < 4 {
            while let Some(s) = server.poll_transmit(now) {
                client.handle_segment(now, &s);
            }
            while let Some(s) = client.poll_transmit(now) {
                server.handle_segment(now, &s);
            }
            rounds += 1;
        }
        for c in [&mut *client, &mut server] {
            let cfg = &c.cfg;
            c.tx.forget_rtt(cfg);
            c.counters = Counters::default();
            c.timers.clear();
            c.rx.cancel_ack();
        }
        server
    }

    /// Applies the peer's SYN options (RFC 9293 §3.7.1, RFC 7323 §2.2, RFC 2018 §2).
    pub(crate) fn negotiate(&mut self, syn: &Segment) {
        let o = &syn.options;
        self.opts.sack = self.cfg.sack && o.sack_permitted;
        self.opts.ts = self.cfg.timestamps && o.timestamps.is_some();
        match (self.cfg.window_scale, o.window_scale) {
            (true, Some(s)) => {
                self.opts.snd_wscale = s.min(14); // RFC 7323 §2.3: at most 14
                self.opts.ws = true;
            }
            _ => {
                self.opts.snd_wscale = 0;
                self.rx.no_scaling();
            }
        }
        let peer_mss = o.mss.unwrap_or(536) as u32; // RFC 9293 §3.7.1 default
        let mss = peer_mss.min(self.cfg.mss as u32);
        self.opts.smss = mss.saturating_sub(if self.opts.ts { 12 } else { 0 }).max(1);
        self.opts.rcv_mss = self.initial_rcv_mss();
        self.tx.negotiated(self.opts.sack);
        self.ecn_negotiate(syn);
        self.corrective_negotiate(syn);
    }

    // ---------------------------------------------------------------- getters

    /// The RFC 9293 connection state.
    pub fn state(&self) -> State {
        self.state
    }
    /// This connection's event counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// The switches this connection runs with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// Our port.
    pub fn local_port(&self) -> u16 {
        self.ctl.ports.0
    }
    /// The peer's port.
    pub fn remote_port(&self) -> u16 {
        self.ctl.ports.1
    }
    /// Payload bytes per full-sized segment sent (after options).
    pub fn smss(&self) -> u32 {
        self.opts.smss
    }
    /// Bytes written by the application and acknowledged by the peer.
    pub fn bytes_acked(&self) -> u64 {
        self.snd.una.saturating_sub(1)
    }
    /// Bytes written by the application so far.
    pub fn bytes_written(&self) -> u64 {
        self.snd.buf.end() - 1
    }
    /// Sequence offset of the next new byte to send (relative to ISS).
    pub fn snd_nxt(&self) -> u64 {
        self.snd.nxt
    }
    /// Sequence offset of the oldest unacknowledged byte (relative to ISS).
    pub fn snd_una(&self) -> u64 {
        self.snd.una
    }
    /// Our initial sequence number.
    pub fn iss(&self) -> u32 {
        self.snd.iss
    }
    /// SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.opts.sack
    }
    /// Timestamps were negotiated.
    pub fn timestamps_enabled(&self) -> bool {
        self.opts.ts
    }
    /// ECN was negotiated (RFC 3168 §6.1.1).
    pub fn ecn_enabled(&self) -> bool {
        self.ext.ecn().is_on()
    }
    /// Corrective was negotiated and is still in use.
    pub fn corrective_enabled(&self) -> bool {
        self.ext.corrective().is_on()
    }
    /// The handshake is complete and the connection not yet closed.
    pub fn is_established(&self) -> bool {
        !matches!(
            self.state,
            State::Closed | State::SynSent | State::SynReceived
        )
    }
    /// The connection is CLOSED.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    /// The handshake completed at some point (our SYN was acknowledged).
    pub fn was_established(&self) -> bool {
        self.snd.una > 0
    }
    /// Why the connection ended, once it has.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.ctl.close_reason
    }

    // ------------------------------------------------------------ application

    /// Queues bytes for sending. Returns false if the sending side is closed.
    pub fn write(&mut self, data: Bytes) -> bool {
        if self.snd.app_closed || matches!(self.state, State::Closed) {
            return false;
        }
        self.chrono_on_write(self.snd.buf.end() > self.snd.nxt);
        self.snd.buf.push(data);
        self.tso_new_round();
        true
    }

    /// Sets `TCP_USER_TIMEOUT`: once this long has passed since the first
    /// retransmission of the data outstanding, the next retransmission timeout
    /// aborts the connection, whatever the count of retransmissions (Linux
    /// `retransmits_timed_out`), and the timer never fires past that moment
    /// (`tcp_clamp_rto_to_user_timeout`). `None` restores `max_retries`.
    pub fn set_user_timeout(&mut self, timeout: Option<Duration>) {
        self.ctl.user_timeout = timeout.filter(|t| !t.is_zero());
    }

    /// `TCP_USER_TIMEOUT`, if set.
    pub fn user_timeout(&self) -> Option<Duration> {
        self.ctl.user_timeout
    }

    /// Sets `TCP_NODELAY`: on, short segments go at once; off, Nagle's algorithm
    /// holds them (the switch `nagle`).
    pub fn set_nodelay(&mut self, on: bool) {
        self.cfg.nagle = !on;
    }

    /// Closes the sending direction: a FIN follows the queued data.
    pub fn close(&mut self) {
        self.snd.app_closed = true;
    }

    /// The application closes the socket (`close(2)` with nothing unread): the
    /// sending direction as [`close`](Self::close), and the receiving one too —
    /// data that arrives later resets the connection (RFC 1122 §4.2.2.13).
    pub fn close_socket(&mut self) {
        self.close();
        self.ctl.read_closed = true;
    }

    /// Aborts: queues an RST and closes immediately.
    pub fn abort(&mut self, now: Instant) {
        if self.is_established() || self.state == State::SynReceived {
            self.ctl.rst_pending = true;
        }
        self.enter_closed(now, CloseReason::Aborted);
    }

    /// Next trace event, if tracing is on.
    pub fn poll_event(&mut self) -> Option<Traced> {
        self.events.pop_front()
    }

    // --------------------------------------------------------------- helpers

    pub(crate) fn trace(&mut self, now: Instant, event: Event) {
        if self.cfg.trace {
            self.events.push_back(Traced { time: now, event });
        }
    }

    /// A timer fired: traced by its name.
    pub(crate) fn trace_timer(&mut self, now: Instant, timer: TimerKind) {
        self.trace(now, Event::Timer { timer });
    }

    pub(crate) fn set_state(&mut self, now: Instant, to: State) {
        if self.state != to {
            let from = self.state;
            self.state = to;
            if to == State::Established && matches!(from, State::SynSent | State::SynReceived) {
                self.ack_policy_on_established(now);
            }
            self.trace(now, Event::State { from, to });
        }
    }

    pub(crate) fn enter_closed(&mut self, now: Instant, reason: CloseReason) {
        if self.ctl.close_reason.is_none() {
            self.ctl.close_reason = Some(reason);
        }
        self.timers.clear();
        self.ext.corrective_mut().stop_encoding();
        self.set_state(now, State::Closed);
    }

    /// The current TSval (RFC 7323 §5.4).
    pub(crate) fn tsval(&self, now: Instant) -> u32 {
        self.ts.val(now)
    }

    /// Wire sequence number for a send offset.
    pub(crate) fn wire_seq(&self, off: u64) -> u32 {
        self.snd.iss.wrapping_add(off as u32)
    }

    /// Send offset for a wire ACK number, taken as the value nearest to `snd_una`.
    pub(crate) fn ack_offset(&self, ack: u32) -> u64 {
        unwrap_near(ack.wrapping_sub(self.snd.iss), self.snd.una)
    }
}

/// Unwraps a 32-bit sequence offset to the 64-bit value nearest to `near`: `near`
/// moved by the signed 32-bit difference of the low halves (RFC 1982 serial number
/// arithmetic), a tie going to the smaller value. Offsets are never negative nor
/// above 2^63; near those bounds the nearest value within them is searched for.
#[inline]
pub(crate) fn unwrap_near(low: u32, near: u64) -> u64 {
    let diff = low.wrapping_sub(near as u32) as i32 as i64;
    match near.checked_add_signed(diff) {
        Some(v) if v <= u64::MAX >> 1 => v,
        _ => unwrap_near_bounded(low, near),
    }
}

/// [`unwrap_near`] among the candidates at most 2^63: the low half put into the
/// 2^32 block of `near` and into the blocks either side.
#[cold]
fn unwrap_near_bounded(low: u32, near: u64) -> u64 {
    let base = near & !0xffff_ffff;
    let cands = [base.wrapping_sub(1 << 32), base, base + (1 << 32)];
    let mut best = base | low as u64;
    let mut dist = u64::MAX;
    for b in cands {
        let v = b | low as u64;
        let d = v.abs_diff(near);
        if d < dist && v <= u64::MAX >> 1 {
            dist = d;
            best = v;
        }
    }
    best
}

/// Smallest window-scale shift that lets `buf` be advertised (RFC 7323 §2.3).
fn window_shift(buf: u32) -> u8 {
    let mut s = 0;
    while s < 14 && (buf >> s) > 65535 {
        s += 1;
    }
    s
}

/// Emptied queues one connection leaves to the next built in its place.
struct Storage {
    scoreboard: std::collections::VecDeque<crate::scoreboard::TxSeg>,
    send: std::collections::VecDeque<bytes::Bytes>,
}

/// A segment that opens a connection: a SYN without ACK or RST.
fn opens(syn: &Segment) -> bool {
    syn.flags.syn() && !syn.flags.ack() && !syn.flags.rst()
}

#[cfg(test)]
mod unwrap_tests {
    use super::{unwrap_near, unwrap_near_bounded};
    use proptest::prelude::*;

    proptest! {
        /// The constant-time unwrap picks what the search over every candidate
        /// picks, near 0, near a 2^32 boundary, at ties and anywhere.
        #[test]
        fn unwrap_is_the_nearest_candidate(
            low in any::<u32>(),
            block in prop_oneof![Just(0u64), 0u64..8, Just((1u64 << 31) - 1), any::<u32>().prop_map(u64::from)],
            near_low in prop_oneof![any::<u32>(), Just(0u32), Just(u32::MAX), Just(1 << 31)],
        ) {
            let near = (block << 32) | near_low as u64;
            prop_assert_eq!(unwrap_near(low, near), unwrap_near_bounded(low, near));
        }
    }

    #[test]
    fn a_tie_goes_to_the_smaller_value() {
        assert_eq!(unwrap_near(0, 5 << 32 | 1 << 31), 5 << 32);
        assert_eq!(unwrap_near(u32::MAX, 3), u32::MAX as u64);
    }
}
