//! A TCP connection endpoint (RFC 9293) with the Linux 2.6/3.x loss-recovery
//! baseline. Read RFC 9293 §3.10 (event processing), RFC 6675 (SACK recovery) and
//! `prr-imc11.txt` §3.2 (Linux recovery) first; each submodule names its sources.
//!
//! - [`input`]: segment arrival (handshake, acceptability, data, FIN, RST).
//! - [`ack`]: the sender's ACK processing and Linux's congestion-state machine.
//! - [`ack_policy`]: when the receiver acknowledges (quick ACKs, delayed ACKs).
//! - [`output`]: what to send next.
//! - [`timers`]: retransmission timeout, F-RTO, delayed ACK, TIME-WAIT.
//! - [`persist`]: silly-window avoidance and zero-window probes.
//! - [`early_retransmit`]: RFC 5827 with the delay and reordering mitigations.
//! - [`loss_probe`]: the tail loss probe and its loss detection.
//! - [`rack`]: RACK time-based loss detection and its reorder timer.
//! - [`corrective`]: Corrective's negotiation, signals and fallback.

mod ack;
mod ack_policy;
mod corrective;
mod early_retransmit;
mod input;
mod loss_probe;
mod output;
mod persist;
mod rack;
mod timer_table;
mod timers;

use std::time::Duration;

use bytes::Bytes;
use rand_core::RngCore;

use crate::cc::{Cc, INFINITE_SSTHRESH, Window};
use crate::config::Config;
use crate::counters::Counters;
use crate::receive_window::ReceiveWindow;
use crate::receiver::Receiver;
use crate::recovery::Recovery;
use crate::rtt::RttEstimator;
use crate::scoreboard::Scoreboard;
use crate::sendbuf::SendBuffer;
use crate::time::Instant;
use crate::trace::{CaState, Event, State, Traced};
use crate::wire::Segment;
use timer_table::TimerTable;

/// F-RTO progress (RFC 5682 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Frto {
    Off,
    /// Step 2: waiting for the first ACK after the RTO retransmission.
    AwaitFirst,
    /// Step 3: new data was sent; waiting for the second ACK.
    AwaitSecond,
}

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
    pub(crate) ca: CaState,
    pub(crate) local_port: u16,
    pub(crate) remote_port: u16,

    // ---- send side (offsets relative to ISS; the SYN is offset 0) ----
    pub(crate) iss: u32,
    pub(crate) snd_una: u64,
    pub(crate) snd_nxt: u64,
    pub(crate) sendbuf: SendBuffer,
    pub(crate) app_closed: bool,
    pub(crate) fin_sent: bool,
    pub(crate) snd_wnd: u64,
    pub(crate) snd_wl1: u64,
    pub(crate) snd_wl2: u64,
    /// Payload bytes per full segment (peer MSS less our per-segment option bytes).
    pub(crate) smss: u32,
    pub(crate) snd_wscale: u8,
    /// The advertised window and our window-scale shift.
    pub(crate) rwnd: ReceiveWindow,
    pub(crate) sack_ok: bool,
    pub(crate) ts_ok: bool,
    pub(crate) ws_ok: bool,
    pub(crate) sb: Scoreboard,
    pub(crate) w: Window,
    pub(crate) cc: Cc,
    pub(crate) rec: Recovery,
    pub(crate) rtt: RttEstimator,
    pub(crate) backoff: u32,
    /// Consecutive timeouts without progress.
    pub(crate) retransmits: u32,
    /// Recovery point (Linux `high_seq`, RFC 6675 `RecoveryPoint`).
    pub(crate) high_seq: u64,
    pub(crate) prior_cwnd: u32,
    pub(crate) prior_ssthresh: u32,
    pub(crate) undo_marker: Option<u64>,
    pub(crate) undo_retrans: i64,
    /// TSval of the first retransmission of the episode (Linux `retrans_stamp`).
    pub(crate) retrans_stamp: Option<u32>,
    pub(crate) reordering: u32,
    pub(crate) fack: bool,
    pub(crate) frto: Frto,
    /// The next retransmission in Loss is the timeout's own.
    pub(crate) loss_first_retrans: bool,
    /// Send the next lost segment even if cwnd is full (fast retransmit on entry).
    pub(crate) force_retransmit: bool,
    /// pipe when the current (or last) recovery began, before its loss marking.
    pub(crate) recovery_start_pipe: u32,
    pub(crate) last_data_sent: Instant,
    pub(crate) syn_sent_at: Instant,
    pub(crate) syn_retransmitted: bool,
    /// The copy of a redundant SYN is due next.
    pub(crate) syn_copy: bool,

    // ---- receive side (offsets relative to IRS) ----
    pub(crate) irs: u32,
    pub(crate) rcv: Receiver,
    pub(crate) rcv_mss: u32,
    pub(crate) ts_recent: u32,
    pub(crate) ts_offset: u32,
    /// When to acknowledge (quick ACKs, the adaptive timeout).
    pub(crate) acks: ack_policy::AckPolicy,
    /// The last TSecr seen on an ACK (for Eifel undo checks).
    pub(crate) last_tsecr: Option<u32>,

    // ---- control and timers ----
    pub(crate) syn_pending: bool,
    pub(crate) rst_pending: bool,
    pub(crate) syn_retries: u32,
    /// Every timer of the connection.
    pub(crate) timers: TimerTable,
    /// Early Retransmit turned off after reordering was seen.
    pub(crate) er_disabled: bool,
    /// The tail-loss probe due, probes in a row, and the episode.
    pub(crate) tlp_pending: bool,
    pub(crate) tlp_consecutive: u32,
    pub(crate) tlp_episode: Option<loss_probe::TlpEpisode>,
    /// A persist-timer probe is due.
    pub(crate) probe_pending: bool,
    /// Persist probes sent since the last ACK.
    pub(crate) probes_out: u32,
    /// Largest window the peer has offered (RFC 9293 §3.8.6.2.1 `Max(SND.WND)`).
    pub(crate) max_snd_wnd: u64,
    pub(crate) close_reason: Option<CloseReason>,

    /// RACK loss detection (RFC 8985 §6).
    pub(crate) rack: rack::Rack,

    /// Corrective (forward error correction) state.
    pub(crate) fec: corrective::Corrective,

    pub(crate) counters: Counters,
    pub(crate) events: std::collections::VecDeque<Traced>,
}

impl Connection {
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
        let w = Window {
            cwnd: cfg.initial_window.max(1),
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
        };
        Connection {
            state: State::Closed,
            ca: CaState::Open,
            local_port,
            remote_port,
            iss,
            snd_una: 0,
            snd_nxt: 0,
            sendbuf: SendBuffer::new(1),
            app_closed: false,
            fin_sent: false,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            smss: 536,
            snd_wscale: 0,
            rwnd: ReceiveWindow::new(rcv_wscale),
            sack_ok: false,
            ts_ok: false,
            ws_ok: false,
            sb: Scoreboard::with_capacity(64),
            w,
            cc: Cc::new(cfg.cc, cfg.hystart),
            rec: Recovery::new(cfg.recovery),
            rtt,
            backoff: 0,
            retransmits: 0,
            high_seq: 0,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: None,
            reordering: cfg.dupthresh,
            fack: cfg.fack && cfg.sack,
            frto: Frto::Off,
            loss_first_retrans: false,
            force_retransmit: false,
            recovery_start_pipe: 0,
            last_data_sent: now,
            syn_sent_at: now,
            syn_retransmitted: false,
            syn_copy: false,
            irs: 0,
            rcv: Receiver::new(0),
            rcv_mss: 536,
            ts_recent: 0,
            ts_offset,
            acks: ack_policy::AckPolicy::default(),
            last_tsecr: None,
            syn_pending: false,
            rst_pending: false,
            syn_retries: 0,
            timers: TimerTable::default(),
            er_disabled: false,
            tlp_pending: false,
            tlp_consecutive: 0,
            tlp_episode: None,
            probe_pending: false,
            probes_out: 0,
            max_snd_wnd: 0,
            close_reason: None,
            rack: rack::Rack::default(),
            fec: corrective::Corrective::default(),
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
        c.snd_nxt = 0;
        c.syn_pending = true;
        c.set_state(now, State::SynSent);
        c
    }

    /// Passive open from a received SYN (the listener's job is only to demultiplex):
    /// negotiates options and queues a SYN-ACK. Returns `None` if `syn` is not a SYN.
    pub fn accept(cfg: Config, now: Instant, syn: &Segment, rng: &mut dyn RngCore) -> Option<Self> {
        if !syn.flags.syn() || syn.flags.ack() || syn.flags.rst() {
            return None;
        }
        let mut c = Connection::new(cfg, now, syn.dst_port, syn.src_port, rng);
        c.counters.segs_in += 1;
        c.irs = syn.seq;
        c.rcv = Receiver::new(1);
        c.negotiate(syn);
        if let Some(ts) = syn.options.timestamps {
            c.ts_recent = ts.val;
        }
        c.syn_pending = true;
        c.set_state(now, State::SynReceived);
        Some(c)
    }

    /// Applies the peer's SYN options (RFC 9293 §3.7.1, RFC 7323 §2.2, RFC 2018 §2).
    pub(crate) fn negotiate(&mut self, syn: &Segment) {
        let o = &syn.options;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        match (self.cfg.window_scale, o.window_scale) {
            (true, Some(s)) => {
                self.snd_wscale = s.min(14); // RFC 7323 §2.3: at most 14
                self.ws_ok = true;
            }
            _ => {
                self.snd_wscale = 0;
                self.rwnd.shift = 0;
            }
        }
        let peer_mss = o.mss.unwrap_or(536) as u32; // RFC 9293 §3.7.1 default
        let mss = peer_mss.min(self.cfg.mss as u32);
        self.smss = mss.saturating_sub(if self.ts_ok { 12 } else { 0 }).max(1);
        self.rcv_mss = self.initial_rcv_mss();
        if !self.sack_ok {
            self.fack = false;
        }
        self.corrective_negotiate(syn);
    }

    // ---------------------------------------------------------------- getters

    pub fn state(&self) -> State {
        self.state
    }
    pub fn ca_state(&self) -> CaState {
        self.ca
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    pub fn local_port(&self) -> u16 {
        self.local_port
    }
    pub fn remote_port(&self) -> u16 {
        self.remote_port
    }
    /// Congestion window in segments.
    pub fn cwnd(&self) -> u32 {
        self.w.cwnd
    }
    pub fn ssthresh(&self) -> u32 {
        self.w.ssthresh
    }
    /// RFC 6675 pipe, in segments.
    pub fn pipe(&self) -> u32 {
        self.sb.pipe()
    }
    pub fn smss(&self) -> u32 {
        self.smss
    }
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    pub fn rto(&self) -> Duration {
        self.rtt.rto_backed_off(self.backoff)
    }
    /// Bytes written by the application and acknowledged by the peer.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1)
    }
    /// Bytes written by the application so far.
    pub fn bytes_written(&self) -> u64 {
        self.sendbuf.end() - 1
    }
    /// In-order bytes received (delivered or waiting to be read).
    pub fn bytes_received(&self) -> u64 {
        self.rcv
            .rcv_nxt
            .saturating_sub(1 + self.rcv.fin_received as u64)
    }
    /// Sequence offset of the next new byte to send (relative to ISS).
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn iss(&self) -> u32 {
        self.iss
    }
    pub fn irs(&self) -> u32 {
        self.irs
    }
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    pub fn timestamps_enabled(&self) -> bool {
        self.ts_ok
    }
    pub fn fack_enabled(&self) -> bool {
        self.fack
    }
    /// Corrective was negotiated and is still in use.
    pub fn corrective_enabled(&self) -> bool {
        self.fec.on
    }
    /// PRR's `(prr_delivered, prr_out)` in segments while in Recovery with a PRR
    /// algorithm.
    pub fn prr_counts(&self) -> Option<(u64, u64)> {
        if self.ca == CaState::Recovery {
            self.rec.prr_counts()
        } else {
            None
        }
    }
    /// pipe when the current (or last) fast recovery began, before that ACK's loss
    /// marking (where Linux's `tcp_enter_recovery` sees it).
    pub fn recovery_start_pipe(&self) -> u32 {
        self.recovery_start_pipe
    }
    pub fn reordering(&self) -> u32 {
        self.reordering
    }
    /// RACK's reordering window now (RFC 8985 §6.2 step 4), when RACK runs.
    pub fn rack_reo_wnd(&self) -> Option<Duration> {
        self.rack_on().then(|| self.reo_wnd())
    }
    pub fn is_established(&self) -> bool {
        !matches!(
            self.state,
            State::Closed | State::SynSent | State::SynReceived
        )
    }
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    /// The handshake completed at some point (our SYN was acknowledged).
    pub fn was_established(&self) -> bool {
        self.snd_una > 0
    }
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.close_reason
    }
    /// The peer's FIN has been received (end of its stream).
    pub fn peer_closed(&self) -> bool {
        self.rcv.fin_received
    }
    /// Everything written, including our FIN, has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.sb.is_empty() && self.snd_nxt == self.snd_una && self.snd_una >= self.sendbuf.end()
    }
    /// Bytes readable without blocking.
    pub fn readable(&self) -> usize {
        self.rcv.ready_bytes
    }

    // ------------------------------------------------------------ application

    /// Queues bytes for sending. Returns false if the sending side is closed.
    pub fn write(&mut self, data: Bytes) -> bool {
        if self.app_closed || matches!(self.state, State::Closed) {
            return false;
        }
        self.sendbuf.push(data);
        true
    }

    /// Takes the next chunk of in-order received bytes.
    pub fn read(&mut self) -> Option<Bytes> {
        let b = self.rcv.read()?;
        self.ack_on_read(b.len());
        Some(b)
    }

    /// Closes the sending direction: a FIN follows the queued data.
    pub fn close(&mut self) {
        self.app_closed = true;
    }

    /// Aborts: queues an RST and closes immediately.
    pub fn abort(&mut self, now: Instant) {
        if self.is_established() || self.state == State::SynReceived {
            self.rst_pending = true;
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

    pub(crate) fn set_state(&mut self, now: Instant, to: State) {
        if self.state != to {
            let from = self.state;
            self.state = to;
            self.trace(now, Event::State { from, to });
        }
    }

    pub(crate) fn set_ca(&mut self, now: Instant, to: CaState) {
        if self.ca != to {
            let from = self.ca;
            self.ca = to;
            let (cwnd, ssthresh, pipe) = (self.w.cwnd, self.w.ssthresh, self.sb.pipe());
            self.trace(
                now,
                Event::CaState {
                    from,
                    to,
                    cwnd,
                    ssthresh,
                    pipe,
                },
            );
        }
    }

    pub(crate) fn enter_closed(&mut self, now: Instant, reason: CloseReason) {
        if self.close_reason.is_none() {
            self.close_reason = Some(reason);
        }
        self.timers.clear();
        self.fec.enc = None;
        self.set_state(now, State::Closed);
    }

    /// The current TSval (RFC 7323 §5.4: a millisecond clock with a random offset).
    pub(crate) fn tsval(&self, now: Instant) -> u32 {
        (now.as_millis() as u32).wrapping_add(self.ts_offset)
    }

    /// Wire sequence number for a send offset.
    pub(crate) fn wire_seq(&self, off: u64) -> u32 {
        self.iss.wrapping_add(off as u32)
    }

    /// Send offset for a wire ACK number, taken as the value nearest to `snd_una`.
    pub(crate) fn ack_offset(&self, ack: u32) -> u64 {
        unwrap_near(ack.wrapping_sub(self.iss), self.snd_una)
    }
    /// Receive offset for a wire sequence number, nearest to `rcv_nxt`.
    pub(crate) fn rcv_offset(&self, seq: u32) -> u64 {
        unwrap_near(seq.wrapping_sub(self.irs), self.rcv.rcv_nxt)
    }
}

/// Unwraps a 32-bit sequence offset to the 64-bit value nearest to `near`.
pub(crate) fn unwrap_near(low: u32, near: u64) -> u64 {
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
