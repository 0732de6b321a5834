//! Connection configuration: independent switches plus named profiles.
//!
//! Defaults follow Linux 3.x where the papers compare against it (`prr-imc11.txt`
//! Table 4; `gentle-aggression-sigcomm13.txt` §8.1): initial window 10, CUBIC,
//! SACK, DSACK, FACK, limited transmit, F-RTO, cwnd undo, RTO minimum 200 ms.
//!
//! Every switch is one row of the `config!` table below: its name, type, default,
//! the values a scenario file gives it ([`SwitchKind`]) and its documentation. The
//! struct, its `Default`, [`Config::SWITCHES`], [`Config::set_switch`] and
//! [`Config::switch_value`] are generated from the table, and every enum's names
//! (serde's, the scenario files', the README's) from its `named_enum!`, so they
//! cannot disagree.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::timer_wheel::KernelClock;

pub use crate::switch::{Switch, SwitchError, SwitchField, SwitchKind, SwitchValue};

/// An enum whose values have names: serde, scenario files and error messages use
/// them. `all = pairs` makes `ALL` a list of `(name, value)`, `all = values` a list
/// of values.
macro_rules! named_enum {
    (@all pairs $T:ident $($v:ident $n:literal)*) => {
        /// `(name, value)` pairs in declaration order.
        pub const ALL: &'static [(&'static str, $T)] = &[$(($n, $T::$v)),*];
    };
    (@all values $T:ident $($v:ident $n:literal)*) => {
        /// Every value in declaration order.
        pub const ALL: &'static [$T] = &[$($T::$v),*];
    };
    (
        $(#[doc = $doc:literal])*
        pub enum $T:ident ($what:literal, all = $all:ident) {
            $( $(#[doc = $vdoc:literal])* $v:ident => $n:literal, )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $T {
            $( $(#[doc = $vdoc])* #[serde(rename = $n)] $v, )*
        }

        impl $T {
            named_enum!(@all $all $T $($v $n)*);

            /// The names, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($n),*];

            /// The values a switch of this type takes.
            pub const KIND: SwitchKind = SwitchKind::Choice { what: $what, names: Self::NAMES };

            /// The name scenario files and serde use.
            pub fn name(self) -> &'static str {
                match self { $($T::$v => $n),* }
            }

            /// The value named `s`, if any.
            pub fn from_name(s: &str) -> Option<$T> {
                match s { $($n => Some($T::$v),)* _ => None }
            }
        }

        impl SwitchField for $T {
            fn from_value(v: SwitchValue<'_>) -> Option<Self> {
                match v { SwitchValue::Name(s) => Self::from_name(s), _ => None }
            }
            fn to_value(&self) -> SwitchValue<'static> {
                SwitchValue::Name(self.name())
            }
        }
    };
}

named_enum! {
    /// The congestion window a connection starts its transfer with after a lost SYN
    /// or SYN-ACK.
    pub enum SynLossWindow ("SYN-loss window", all = pairs) {
        /// The initial window, whatever happened in the handshake.
        Keep => "keep",
        /// One segment after this end's SYN or SYN-ACK was retransmitted by its timer
        /// (RFC 5681 §3.1: "the initial window used by a sender after a correctly
        /// transmitted SYN MUST be one segment").
        Rfc5681 => "rfc5681",
        /// One segment after more than one SYN or SYN-ACK retransmission, a SYN-ACK
        /// resent for a duplicate SYN counting too (Linux 3.1–5.1 `tcp_init_metrics`:
        /// `total_retrans > 1`, relaxed from RFC 5681 for RFC 6298's 1 s initial RTO).
        Linux => "linux",
        /// As `linux`, but only after the timer fired, and not when the peer's
        /// timestamp echo shows the first SYN or SYN-ACK arrived (Linux 5.2+
        /// `tcp_init_transfer`: `total_retrans > 1 && undo_marker`, with
        /// `tcp_try_undo_spurious_syn`).
        Linux52 => "linux-5.2",
    }
}

named_enum! {
    /// Congestion-avoidance algorithm.
    pub enum CcAlgorithm ("congestion control", all = pairs) {
        /// RFC 5681 slow start and congestion avoidance, halving on loss.
        Reno => "reno",
        /// RFC 9438 CUBIC (β = 0.7, C = 0.4) as in Linux 2.6.19+.
        Cubic => "cubic",
    }
}

named_enum! {
    /// When the sender counts as using its window, so that ACKs may grow it.
    pub enum CwndValidation ("cwnd-validation rule", all = pairs) {
        /// Linux 3.x: in flight within 3 segments of cwnd when the ACK arrives.
        InFlight => "in-flight",
        /// Linux 4.1+: blocked by cwnd in the current window, or in slow start below
        /// twice the most segments outstanding in it.
        MaxPacketsOut => "max-packets-out",
    }
}

named_enum! {
    /// Fast-recovery algorithm: how cwnd evolves while in Recovery.
    pub enum RecoveryAlgorithm ("recovery algorithm", all = pairs) {
        /// RFC 6675 §5: cwnd = ssthresh (from congestion control) on entry, send while
        /// pipe < cwnd.
        Rfc6675 => "rfc6675",
        /// RFC 3517 as `prr-imc11.txt` Algorithm 1: cwnd = ssthresh = FlightSize/2.
        Rfc3517 => "rfc3517",
        /// Linux 2.6 rate halving with the cwnd = pipe + 1 clamp (`prr-imc11.txt` §3.2).
        RateHalving => "rate-halving",
        /// PRR-SSRB, `prr-imc11.txt` Algorithm 2 (Linux 3.2+).
        Prr => "prr",
        /// PRR with RFC 6937's conservative reduction bound.
        PrrCrb => "prr-crb",
        /// PRR as RFC 9937 specifies it.
        PrrRfc9937 => "prr-rfc9937",
    }
}

named_enum! {
    /// Which connections share a TCP session (`fast-start-and-sessions.txt` §6).
    pub enum SessionMode ("session mode", all = pairs) {
        /// Every connection does its own congestion control and loss recovery.
        Off => "off",
        /// Connections between the same pair of hosts share one session (§6.1
        /// footnote 8: "we only consider integration at the granularity of host
        /// pairs").
        HostPair => "host-pair",
    }
}

named_enum! {
    /// Early Retransmit (RFC 5827) mode.
    pub enum EarlyRetransmit ("early-retransmit mode", all = pairs) {
        /// The duplicate threshold stays at `dupthresh`.
        Off => "off",
        /// Retransmit as soon as the lowered threshold is met.
        On => "on",
        /// Wait srtt/4 first (`prr-imc11.txt` §6 mitigation 2).
        Delayed => "delayed",
    }
}

named_enum! {
    /// How the tail-loss probe timeout is computed.
    pub enum TlpFlavour ("probe-timeout flavour", all = pairs) {
        /// `gentle-aggression-sigcomm13.txt` Algorithm 1 and the 2013 IETF draft.
        Draft2013 => "draft-2013",
        /// Linux 3.10 `tcp_schedule_loss_probe`.
        Linux310 => "linux-3.10",
        /// RFC 8985 §7.2.
        Rfc8985 => "rfc8985",
        /// Linux 4.11+ `tcp_schedule_loss_probe`: 2·SRTT plus 2 ms (`TCP_TIMEOUT_MIN`),
        /// or plus `rto_min` with one segment in flight; 1 s without an RTT sample;
        /// allowed in CWR as well as Open.
        Linux6 => "linux-6",
    }
}

impl TlpFlavour {
    /// Whether a probe that sends a segment again counts as a retransmission in
    /// `RetransSegs` (and `tcpi_total_retrans`). Linux 3.10's `tcp_send_loss_probe`
    /// sends it with `__tcp_retransmit_skb`, and only `tcp_retransmit_skb` counts
    /// (`TCP_MIB_RETRANSSEGS`, `total_retrans`); Linux 4.x moved the count into
    /// `__tcp_retransmit_skb`, so today's kernels count probes as the RFCs do.
    pub fn probe_counts_as_retransmission(self) -> bool {
        self != TlpFlavour::Linux310
    }
}

named_enum! {
    /// How a loss-probe episode decides whether a probe repaired a loss.
    pub enum TlpDetection ("loss-probe detection", all = pairs) {
        /// Count probe duplicate ACKs (basic SACK; the paper's footnote 4).
        Basic => "basic",
        /// A DSACK or a duplicate ACK shows the probe was unnecessary (Linux 3.10,
        /// RFC 8985 §7.4).
        Dsack => "dsack",
    }
}

named_enum! {
    /// When a receiver acknowledges data (see the engine's `ack_policy` module).
    pub enum ReceiverPolicy ("receiver policy", all = pairs) {
        /// Linux: quick-ACK mode and an adaptive delayed-ACK timeout (40–200 ms).
        Linux => "linux",
        /// Windows: a fixed 200 ms delayed-ACK timer, every second segment (whatever its
        /// size), and no timestamps unless set.
        Windows => "windows",
        /// The minimum RFC 1122 §4.2.3.2 and RFC 5681 §4.2 ask for: every second full
        /// segment, out-of-order and hole-filling data at once, the rest within 500 ms.
        Rfc => "rfc",
    }
}

/// Stores a switch's value: in the field, or through a setter that sets more.
macro_rules! store {
    ($c:ident . $f:ident = $x:expr) => {
        $c.$f = $x
    };
    ($c:ident . $f:ident = $x:expr, $setter:ident) => {
        $c.$setter($x)
    };
}

/// The switch table: `field: type = default => kind (, via setter)?;`, documented.
macro_rules! config {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident : $ty:ty = $default:expr => $kind:expr $(, via $setter:ident)? ;
    )*) => {
        /// All switches of a connection. Build one from a [`Profile`] and adjust fields.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        pub struct Config {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for Config {
            /// The `linux-2.6` baseline.
            fn default() -> Self {
                Config { $( $field: $default, )* }
            }
        }

        impl Config {
            /// Every field, in declaration order, with the values it takes
            /// ([`SwitchKind::Fixed`] for those a scenario does not set).
            pub const SWITCHES: &'static [Switch] = &[$(
                Switch {
                    name: stringify!($field),
                    kind: $kind,
                    doc: concat!($($doc, "\n"),*),
                },
            )*];

            /// Sets switch `name` to `v`, after checking `v` fits it.
            pub fn set_switch(&mut self, name: &str, v: SwitchValue<'_>) -> Result<(), SwitchError> {
                let sw = Self::switch(name).ok_or_else(|| SwitchError {
                    message: format!("no switch `{name}`"),
                    expected: "a switch".into(),
                    names: &[],
                })?;
                sw.check(v)?;
                if name == "timer_hz" && !matches!(v, SwitchValue::Int(0 | 100 | 250 | 300 | 1000)) {
                    return Err(SwitchError {
                        message: "not a Linux HZ".into(),
                        expected: "0 (exact timers) or 100, 250, 300, 1000".into(),
                        names: &[],
                    });
                }
                let wrong = || SwitchError {
                    message: "wrong type".into(),
                    expected: sw.expected(),
                    names: &[],
                };
                match name {
                    $( stringify!($field) => {
                        let x = <$ty as SwitchField>::from_value(v).ok_or_else(wrong)?;
                        store!(self.$field = x $(, $setter)?);
                    } )*
                    _ => return Err(wrong()),
                }
                Ok(())
            }

            /// The value of field `name`, in its switch's terms.
            pub fn switch_value(&self, name: &str) -> Option<SwitchValue<'static>> {
                let sw = Self::SWITCHES.iter().find(|s| s.name == name)?;
                let v = match name {
                    $( stringify!($field) => SwitchField::to_value(&self.$field), )*
                    _ => return None,
                };
                Some(sw.shape(v))
            }
        }
    };
}

/// The MSS a connection advertises unless told otherwise: an Ethernet MTU of 1500
/// bytes less 40 of IPv4 and TCP headers.
pub const DEFAULT_MSS: u16 = 1460;

config! {
    /// MSS advertised in the SYN (bytes of payload without options; RFC 9293 §3.7.1).
    mss: u16 = DEFAULT_MSS => SwitchKind::Int { min: 88, max: 65495 };
    /// Initial congestion window in segments (RFC 6928; Linux 3.x default 10).
    initial_window: u32 = 10 => SwitchKind::Int { min: 1, max: 1000 };
    /// The window after a lost SYN or SYN-ACK: `keep`, `rfc5681` (1 segment after a
    /// retransmission by the timer), `linux` (1 after more than one SYN/SYN-ACK
    /// retransmission, Linux 3.1–5.1) or `linux-5.2` (as `linux`, unless the
    /// timestamps show the first one arrived).
    syn_loss_window: SynLossWindow = SynLossWindow::Linux => SynLossWindow::KIND;
    /// Congestion control: Reno (RFC 5681) or CUBIC (RFC 9438).
    cc: CcAlgorithm = CcAlgorithm::Cubic => CcAlgorithm::KIND;
    /// CUBIC's hybrid slow start (Linux `tcp_cubic` `hystart = 1`, ACK-train and
    /// delay detection).
    hystart: bool = false => SwitchKind::Flag;
    /// When ACKs may grow cwnd (RFC 7661 §4's question, Linux's
    /// `tcp_is_cwnd_limited`): `in-flight` (Linux 3.x: in flight within 3 segments
    /// of cwnd) or `max-packets-out` (Linux 4.1+: cwnd blocked the sender in this
    /// window, or in slow start cwnd is below twice the most segments outstanding).
    cwnd_validation: CwndValidation = CwndValidation::InFlight => CwndValidation::KIND;
    /// After a partial undo (the original filled the hole, `tcp_try_undo_partial`),
    /// leave Recovery at once once no retransmission is in flight (Linux 3.16+,
    /// `tcp_try_keep_open`); otherwise stay in Recovery until the recovery point.
    partial_undo_opens: bool = false => SwitchKind::Flag;
    /// Grow cwnd after loss detection has run on the ACK, when the state it leaves
    /// is neither Recovery nor CWR (Linux 4.9+ `tcp_cong_control`), instead of
    /// before it by the state the ACK found (Linux 3.x `tcp_ack`).
    late_cwnd_growth: bool = false => SwitchKind::Flag;
    /// Fast recovery: how cwnd evolves in Recovery (`prr-imc11.txt` Algorithms 1–2,
    /// §3.2; RFC 6675, RFC 6937, RFC 9937).
    recovery: RecoveryAlgorithm = RecoveryAlgorithm::RateHalving => RecoveryAlgorithm::KIND;
    /// RACK time-based loss detection (RFC 8985 §6; Linux `tcp_recovery = 1`, 4.10+)
    /// in place of duplicate-ACK counting and FACK when SACK is in use.
    rack: bool = false => SwitchKind::Flag;
    /// The kernel's timer clock for TCP's timers: 0 runs them to the nanosecond;
    /// a Linux `HZ` (100, 250, 300 or 1000) rounds each delay up to whole jiffies
    /// and runs the timer as Linux's timer wheel does, at the tick of its bucket
    /// (`timer_wheel`; at `HZ` 250 up to 32 ms late for delays of 252 ms–2 s).
    timer_hz: u32 = 0 => SwitchKind::Int { min: 0, max: 1000 };
    /// With `timer_hz`: how far into a jiffy time 0 falls, µs after its tick.
    timer_phase_us: u32 = 0 => SwitchKind::Int { min: 0, max: 10_000 };
    /// With `timer_hz`: `jiffies` during the jiffy that holds time 0, modulo 2^15
    /// (the wheel's buckets align to multiples of 8, 64, 512 and 4096 jiffies).
    timer_jiffies: u32 = 0 => SwitchKind::Int { min: 0, max: 32767 };
    /// Offer and use SACK (RFC 2018).
    sack: bool = true => SwitchKind::Flag;
    /// Generate and use DSACK (RFC 2883).
    dsack: bool = true => SwitchKind::Flag;
    /// Linux FACK loss marking (`prr-imc11.txt` §3.2). Needs `sack`.
    fack: bool = true => SwitchKind::Flag;
    /// Offer and use RFC 7323 timestamps.
    timestamps: bool = true => SwitchKind::Flag;
    /// Offer and use RFC 7323 window scaling.
    window_scale: bool = true => SwitchKind::Flag;
    /// Appropriate byte counting (RFC 3465): cwnd grows by the segments an ACK
    /// covers, as Linux does since 3.18. Off, it grows by at most one segment per
    /// ACK (RFC 5681 §3.1; Linux 2.6/3.x, `tcp_abc` = 0), so delayed ACKs slow it.
    abc: bool = false => SwitchKind::Flag;
    /// Limited transmit (RFC 3042).
    limited_transmit: bool = true => SwitchKind::Flag;
    /// The final FIN, in a segment of at most one MSS, goes whatever cwnd (Linux
    /// 3.x `tcp_cwnd_test`: "Don't be strict about the congestion window for the
    /// final FIN"). Off, cwnd holds it like data, as this machine's Linux 6.18 does
    /// (measured with packetdrill).
    final_fin_cwnd_exempt: bool = true => SwitchKind::Flag;
    /// An ACK of data not yet sent is answered with an ACK (RFC 9293 §3.10.7.4,
    /// RFC 5961 §5.2; Linux 6.18 does, measured with packetdrill). Off, it is
    /// discarded silently, as Linux 3.x's `tcp_ack` does. Its segment is dropped
    /// either way, and its timestamp not recorded.
    ack_unsent_answered: bool = false => SwitchKind::Flag;
    /// New data leaves in TSO packets of at most half of cwnd and Linux's
    /// autosized packet (`tcp_tso_autosize`), and the last segment of a packet of
    /// several carries PSH (Linux 4.9+ `__tcp_transmit_skb`, measured on Linux
    /// 6.18 with packetdrill). Off, PSH marks only where the queued data ends.
    tso_psh: bool = false => SwitchKind::Flag;
    /// Nagle's algorithm as Linux runs it (`tcp_nagle_check` with Minshall's
    /// variant): a segment shorter than the MSS waits while an earlier short one is
    /// unacknowledged, unless it carries the FIN — a socket without `TCP_NODELAY`.
    /// Off, as Web servers run (`TCP_NODELAY` set).
    nagle: bool = false => SwitchKind::Flag;
    /// With `tso_psh`: the fewest segments of a TSO packet (Linux
    /// `net.ipv4.tcp_min_tso_segs`, default 2).
    min_tso_segs: u32 = 2 => SwitchKind::Int { min: 1, max: 127 };
    /// F-RTO spurious RTO detection (RFC 5682).
    frto: bool = true => SwitchKind::Flag;
    /// Undo cwnd reductions shown to be spurious by DSACK or timestamps (RFC 3522, RFC 3708).
    undo: bool = true => SwitchKind::Flag;
    /// Early Retransmit (RFC 5827): off, on, or delayed by srtt/4 (`prr-imc11.txt` §6).
    er: EarlyRetransmit = EarlyRetransmit::Off => EarlyRetransmit::KIND;
    /// Turn Early Retransmit off for good once reordering is detected
    /// (`prr-imc11.txt` §6 mitigation 1; Linux `tcp_disable_early_retrans`).
    er_reorder_disable: bool = true => SwitchKind::Flag;
    /// Lower bound of the delayed-ER wait of srtt/4: Linux 3.5–3.10
    /// `tcp_pause_early_retransmit` uses 2 ms; the implementation `prr-imc11.txt` §6
    /// evaluated used 25 ms.
    er_delay_min: Duration = Duration::from_millis(2) => SwitchKind::Duration;
    /// Upper bound of the delayed-ER wait: none in Linux; 500 ms in `prr-imc11.txt` §6.
    er_delay_max: Option<Duration> = None => SwitchKind::DurationOrOff;
    /// Tail loss probe (`gentle-aggression-sigcomm13.txt` §4, RFC 8985 §7).
    tlp: bool = false => SwitchKind::OnOff;
    /// How the probe timeout is computed: the paper's draft, Linux 3.10, Linux 4.11+
    /// or RFC 8985.
    tlp_flavour: TlpFlavour = TlpFlavour::Draft2013 => TlpFlavour::KIND;
    /// How a probe episode decides the probe repaired a loss: probe duplicate ACKs
    /// (`basic`) or DSACKs.
    tlp_detection: TlpDetection = TlpDetection::Basic => TlpDetection::KIND;
    /// Consecutive probes without progress (the paper's deployment: 1).
    tlp_max_probes: u32 = 1 => SwitchKind::Int { min: 1, max: 2 };
    /// Worst-case delayed-ACK time added with one segment in flight (200 ms).
    tlp_wdt: Duration = Duration::from_millis(200) => SwitchKind::Duration;
    /// Corrective: XOR forward error correction inside TCP
    /// (`gentle-aggression-sigcomm13.txt` §5), offered in the handshake and used when
    /// the peer offers it too.
    corrective: bool = false => SwitchKind::OnOff;
    /// Send every SYN and SYN-ACK twice (`gentle-aggression-sigcomm13.txt` §8.4.1,
    /// "transmitting all SYN packets twice").
    redundant_syn: bool = false => SwitchKind::OnOff;
    /// Proactive (`gentle-aggression-sigcomm13.txt` §6): every data segment is sent
    /// twice, the copy marked by a reserved header bit, and the receiver filters
    /// copies so that they cause no duplicate ACKs.
    proactive: bool = false => SwitchKind::OnOff;
    /// With Proactive, copy SYN, SYN-ACK and pure ACK segments too (§6, "for an
    /// added level of resiliency").
    proactive_syn_ack: bool = false => SwitchKind::OnOff;
    /// Segmentation offload: frames per send (1: none). The copies of a send leave
    /// after all its frames, so K frames mean K originals then K copies (§6,
    /// Figure 8); Proactive's own choice is 1. Without Proactive it changes nothing.
    tso: u32 = 1 => SwitchKind::Int { min: 1, max: 64 };
    /// Explicit Congestion Notification (RFC 3168): offered in the handshake, used
    /// when the peer offers it too; new data is sent ECT(0), a CE mark is echoed with
    /// ECE until CWR, and ECE reduces cwnd once per window through CWR. Off by
    /// default, as on the papers' servers.
    ecn: bool = false => SwitchKind::OnOff;
    /// TCP fast start (`fast-start-and-sessions.txt` §3.4): after an idle period
    /// longer than the RTO, restart from the last window that went through without
    /// loss instead of slow start, pacing the first round trip and marking the
    /// segments past a normal restart low priority; also start new connections from
    /// the path state an earlier one left (§3.2).
    fast_start: bool = false => SwitchKind::OnOff;
    /// Most segments per paced burst during fast start (§3.4.3: 4).
    fast_start_maxburst: u32 = 4 => SwitchKind::Int { min: 1, max: 1000 };
    /// Set the fast start bit (low priority at routers with priority drop, §3.3) on
    /// fast-start segments.
    fast_start_mark: bool = true => SwitchKind::Flag;
    /// The fine-grained reset timer, `srtt + 4·rttvar`, in place of the
    /// retransmission timer while fast-start packets are outstanding (§3.4.4, §7.1).
    fast_start_reset_timer: bool = true => SwitchKind::Flag;
    /// When the reset timer resets: while any fast-start packet is outstanding
    /// (`false`, §7.1's BSD/OS implementation) or only when the earliest
    /// unacknowledged packet is one (`true`, §3.4.4's description).
    fast_start_reset_head: bool = false => SwitchKind::Flag;
    /// When the reset timer fires, slow start without penalty: restart window, the
    /// saved ssthresh, no back-off (§3.4.4). Off, it times out like the
    /// retransmission timer.
    fast_start_no_penalty: bool = true => SwitchKind::Flag;
    /// Without SACK, a partial new ACK in fast recovery during fast start aborts it
    /// to slow start without penalty (§3.4.4, "Recovery from multiple losses").
    fast_start_partial_abort: bool = true => SwitchKind::Flag;
    /// Granularity of the reset timer: BSD/OS checks it on the fast TCP timer,
    /// every 200 ms (§7.1); `"off"` fires it exactly.
    fast_start_tick: Option<Duration> = Some(Duration::from_millis(200)) => SwitchKind::DurationOrOff;
    /// TCP sessions (`fast-start-and-sessions.txt` §6, §7.3): `"host-pair"` joins
    /// every established connection to the same peer host into one session, whose
    /// single window (`session_cwnd`, starting at the first connection's initial
    /// window: 1 segment in the paper's ns runs) bounds the data outstanding on all of them, whose loss detection counts
    /// duplicate ACKs and the later ACKs of the other connections, and whose
    /// weighted round-robin scheduler interleaves their segments. The host keeps the
    /// session's state after its last connection closes, for the next one.
    session: SessionMode = SessionMode::Off => SessionMode::KIND;
    /// The connection's weight in its session's round-robin scheduler (§6.2): a
    /// connection of weight 2 sends two segments for every one of a weight-1
    /// connection while both have data.
    session_weight: u32 = 1 => SwitchKind::Int { min: 1, max: 1000 };
    /// RFC 9040 §4.3 temporal sharing, as Linux's `tcp_metrics` does it: a new
    /// connection to a host starts from the RTT estimate and ssthresh the last
    /// closed connection to that host left (its window still starts from
    /// `initial_window`).
    temporal_sharing: bool = false => SwitchKind::OnOff;
    /// A model, not TCP: the simulator opens the connection already ESTABLISHED on
    /// both sides, with no handshake on the network and no RTT sample from it — the
    /// T/TCP-style accelerated open of the ns simulations in
    /// `fast-start-and-sessions.txt` §4 (see `Connection::accelerated_open`).
    accelerated_open: bool = false => SwitchKind::OnOff;
    /// Duplicate-ACK threshold (RFC 5681 §3.2: 3).
    dupthresh: u32 = 3 => SwitchKind::Int { min: 1, max: 1000 };
    /// Minimum RTO. Linux: `TCP_RTO_MIN` = 200 ms (RFC 6298 §2.4 says 1 s).
    rto_min: Duration = Duration::from_millis(200) => SwitchKind::Duration;
    /// Maximum RTO. Linux: `TCP_RTO_MAX` = 120 s.
    rto_max: Duration = Duration::from_secs(120) => SwitchKind::Duration;
    /// Initial RTO before any RTT sample (RFC 6298 §2.1: 1 s).
    rto_initial: Duration = Duration::from_secs(1) => SwitchKind::Duration;
    /// The receiver's acknowledgement policy. Setting it (`Config::set_receiver`) also
    /// sets the policy's defaults: `delayed_ack`, `quickack`, and for Windows no
    /// timestamps.
    receiver: ReceiverPolicy = ReceiverPolicy::Linux => ReceiverPolicy::KIND, via set_receiver;
    /// Delayed-ACK timeout; `None` (`"off"`) acknowledges every segment at once. For the
    /// Linux policy the floor of the adaptive timeout (`TCP_ATO_MIN` = 40 ms); Windows
    /// 200 ms; RFC 500 ms.
    delayed_ack: Option<Duration> = Some(Duration::from_millis(40)) => SwitchKind::DurationOrOff;
    /// Most quick ACKs per entry into Linux's quick-ACK mode (`TCP_MAX_QUICKACKS` =
    /// 16). 0 disables quick ACKs.
    quickack: u32 = 16 => SwitchKind::Int { min: 0, max: 1000 };
    /// Receive buffer in bytes: the largest window advertised.
    recv_buffer: u32 = 6 * 1024 * 1024 => SwitchKind::Bytes { min: 536, max: 1 << 30 };
    /// SYN (and SYN-ACK) retransmissions before giving up (Linux `tcp_syn_retries` = 6).
    syn_retries: u32 = 6 => SwitchKind::Fixed;
    /// Data retransmissions by timeout before the connection is aborted
    /// (Linux `tcp_retries2` = 15).
    max_retries: u32 = 15 => SwitchKind::Fixed;
    /// Time spent in TIME-WAIT (RFC 9293: 2·MSL; Linux 60 s).
    time_wait: Duration = Duration::from_secs(60) => SwitchKind::Fixed;
    /// Reduce cwnd after an idle period longer than the RTO (RFC 2861 as Linux's
    /// `tcp_slow_start_after_idle` = 1 does).
    slow_start_after_idle: bool = true => SwitchKind::Flag;
    /// Maximum reordering degree Linux tracks (`tcp_max_reordering`, 127 in 3.x).
    max_reordering: u32 = 127 => SwitchKind::Fixed;
    /// Record an event trace (state changes, timers, retransmissions).
    trace: bool = false => SwitchKind::Fixed;
}

impl Config {
    /// The kernel clock of `timer_hz`, `timer_phase_us` and `timer_jiffies`, if
    /// `timer_hz` is set (the phase taken modulo the tick).
    pub fn kernel_clock(&self) -> Option<KernelClock> {
        (self.timer_hz > 0).then(|| {
            let tick = 1_000_000_000 / u64::from(self.timer_hz);
            KernelClock {
                hz: self.timer_hz,
                phase_ns: u64::from(self.timer_phase_us) * 1000 % tick,
                jiffies: u64::from(self.timer_jiffies),
            }
        })
    }

    /// The switch a scenario sets by `name` (not the [`SwitchKind::Fixed`] fields).
    pub fn switch(name: &str) -> Option<&'static Switch> {
        Self::SWITCHES
            .iter()
            .find(|s| s.name == name && s.kind != SwitchKind::Fixed)
    }

    /// The switches a scenario sets, in the order to apply them: `receiver` first,
    /// since it sets defaults (`delayed_ack`, `quickack`, `timestamps`) that the
    /// others then override; the rest in declaration order.
    pub fn switches() -> impl Iterator<Item = &'static Switch> {
        let settable = |s: &&Switch| s.kind != SwitchKind::Fixed;
        let first = |s: &&Switch| s.name == "receiver";
        Self::SWITCHES.iter().filter(settable).filter(first).chain(
            Self::SWITCHES
                .iter()
                .filter(settable)
                .filter(move |s| !first(s)),
        )
    }

    /// Chooses the receiver policy and its defaults: the delayed-ACK timeout, the
    /// quick ACKs, and (Windows) no timestamps.
    pub fn set_receiver(&mut self, p: ReceiverPolicy) {
        self.receiver = p;
        match p {
            ReceiverPolicy::Linux => {
                self.delayed_ack = Some(Duration::from_millis(40));
                self.quickack = 16;
            }
            ReceiverPolicy::Windows => {
                self.delayed_ack = Some(Duration::from_millis(200));
                self.quickack = 0;
                self.timestamps = false;
            }
            ReceiverPolicy::Rfc => {
                self.delayed_ack = Some(Duration::from_millis(500));
                self.quickack = 0;
            }
        }
    }
}

named_enum! {
    /// Named baselines the papers compare against.
    pub enum Profile ("profile", all = values) {
        /// No SACK, NewReno recovery on duplicate ACKs, Reno congestion control.
        Plain => "plain",
        /// SACK with RFC 6675 loss detection and recovery, no FACK, Reno.
        Rfc => "rfc",
        /// SACK + FACK + rate halving + CUBIC: Linux 2.6 as `prr-imc11.txt` §3.2
        /// describes it.
        Linux26 => "linux-2.6",
        /// Linux 2.6 plus PRR, delayed Early Retransmit (`prr-imc11.txt` §4, §6) and the
        /// tail loss probe (`gentle-aggression-sigcomm13.txt` §4).
        Linux310 => "linux-3.10",
        /// Today's Linux (6.x, `tcp_recovery = 1`, `tcp_early_retrans = 3`): RACK-TLP
        /// (RFC 8985), PRR as RFC 9937, CUBIC with HyStart, F-RTO and DSACK undo, byte
        /// counting; no FACK (removed in 4.15) and no Early Retransmit (replaced by RACK
        /// in 4.11).
        Linux6 => "linux-6",
    }
}

impl Profile {
    /// The switches of this baseline.
    pub fn config(self) -> Config {
        let mut c = Config::default();
        match self {
            Profile::Plain => {
                c.syn_loss_window = SynLossWindow::Rfc5681;
                c.sack = false;
                c.dsack = false;
                c.fack = false;
                c.cc = CcAlgorithm::Reno;
                c.recovery = RecoveryAlgorithm::Rfc6675;
            }
            Profile::Rfc => {
                c.syn_loss_window = SynLossWindow::Rfc5681;
                c.fack = false;
                c.cc = CcAlgorithm::Reno;
                c.recovery = RecoveryAlgorithm::Rfc6675;
            }
            Profile::Linux26 => {}
            Profile::Linux310 => {
                c.recovery = RecoveryAlgorithm::Prr;
                c.er = EarlyRetransmit::Delayed;
                c.tlp = true;
                c.tlp_flavour = TlpFlavour::Linux310;
                c.tlp_detection = TlpDetection::Dsack;
            }
            Profile::Linux6 => {
                c.syn_loss_window = SynLossWindow::Linux52;
                c.fack = false;
                c.rack = true;
                c.recovery = RecoveryAlgorithm::PrrRfc9937;
                c.hystart = true;
                c.abc = true;
                c.cwnd_validation = CwndValidation::MaxPacketsOut;
                c.partial_undo_opens = true;
                c.late_cwnd_growth = true;
                c.er = EarlyRetransmit::Off;
                c.tlp = true;
                c.tlp_flavour = TlpFlavour::Linux6;
                c.tlp_detection = TlpDetection::Dsack;
                c.final_fin_cwnd_exempt = false;
                c.ack_unsent_answered = true;
                c.tso_psh = true;
            }
        }
        c
    }
}
