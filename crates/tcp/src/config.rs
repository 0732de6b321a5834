//! Connection configuration: independent switches plus named profiles.
//!
//! Defaults follow Linux 3.x where the papers compare against it (`prr-imc11.txt`
//! Table 4; `gentle-aggression-sigcomm13.txt` §8.1): initial window 10, CUBIC,
//! SACK, DSACK, FACK, limited transmit, F-RTO, cwnd undo, RTO minimum 200 ms.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Congestion-avoidance algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcAlgorithm {
    /// RFC 5681 slow start and congestion avoidance, halving on loss.
    Reno,
    /// RFC 9438 CUBIC (β = 0.7, C = 0.4) as in Linux 2.6.19+.
    Cubic,
}

/// Fast-recovery algorithm: how cwnd evolves while in Recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryAlgorithm {
    /// RFC 6675 §5: cwnd = ssthresh (from congestion control) on entry, send while
    /// pipe < cwnd.
    Rfc6675,
    /// RFC 3517 as `prr-imc11.txt` Algorithm 1: cwnd = ssthresh = FlightSize/2.
    Rfc3517,
    /// Linux 2.6 rate halving with the cwnd = pipe + 1 clamp (`prr-imc11.txt` §3.2).
    RateHalving,
    /// PRR-SSRB, `prr-imc11.txt` Algorithm 2 (Linux 3.2+).
    Prr,
    /// PRR with RFC 6937's conservative reduction bound.
    PrrCrb,
    /// PRR as RFC 9937 specifies it.
    PrrRfc9937,
}

impl RecoveryAlgorithm {
    pub const ALL: &'static [(&'static str, RecoveryAlgorithm)] = &[
        ("rfc6675", RecoveryAlgorithm::Rfc6675),
        ("rfc3517", RecoveryAlgorithm::Rfc3517),
        ("rate-halving", RecoveryAlgorithm::RateHalving),
        ("prr", RecoveryAlgorithm::Prr),
        ("prr-crb", RecoveryAlgorithm::PrrCrb),
        ("prr-rfc9937", RecoveryAlgorithm::PrrRfc9937),
    ];

    pub fn from_name(s: &str) -> Option<RecoveryAlgorithm> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|&(_, a)| a)
    }
}

/// Early Retransmit (RFC 5827) mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EarlyRetransmit {
    Off,
    /// Retransmit as soon as the lowered threshold is met.
    On,
    /// Wait srtt/4 first (`prr-imc11.txt` §6 mitigation 2).
    Delayed,
}

/// How the tail-loss probe timeout is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlpFlavour {
    /// `gentle-aggression-sigcomm13.txt` Algorithm 1 and the 2013 IETF draft.
    #[serde(rename = "draft-2013")]
    Draft2013,
    /// Linux 3.10 `tcp_schedule_loss_probe`.
    #[serde(rename = "linux-3.10")]
    Linux310,
    /// RFC 8985 §7.2.
    Rfc8985,
    /// Linux 4.11+ `tcp_schedule_loss_probe`: 2·SRTT plus 2 ms (`TCP_TIMEOUT_MIN`),
    /// or plus `rto_min` with one segment in flight; 1 s without an RTT sample;
    /// allowed in CWR as well as Open.
    #[serde(rename = "linux-6")]
    Linux6,
}

/// How a loss-probe episode decides whether a probe repaired a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlpDetection {
    /// Count probe duplicate ACKs (basic SACK; the paper's footnote 4).
    Basic,
    /// A DSACK or a duplicate ACK shows the probe was unnecessary (Linux 3.10,
    /// RFC 8985 §7.4).
    Dsack,
}

/// When a receiver acknowledges data (see the engine's `ack_policy` module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReceiverPolicy {
    /// Linux: quick-ACK mode and an adaptive delayed-ACK timeout (40–200 ms).
    Linux,
    /// Windows: a fixed 200 ms delayed-ACK timer, every second full segment, and no
    /// timestamps unless set.
    Windows,
    /// The minimum RFC 1122 §4.2.3.2 and RFC 5681 §4.2 ask for: every second full
    /// segment, out-of-order and hole-filling data at once, the rest within 500 ms.
    Rfc,
}

impl ReceiverPolicy {
    pub const ALL: &'static [(&'static str, ReceiverPolicy)] = &[
        ("linux", ReceiverPolicy::Linux),
        ("windows", ReceiverPolicy::Windows),
        ("rfc", ReceiverPolicy::Rfc),
    ];

    pub fn from_name(s: &str) -> Option<ReceiverPolicy> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|&(_, p)| p)
    }
}

/// All switches of a connection. Build one from a [`Profile`] and adjust fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// MSS advertised in the SYN (bytes of payload without options; RFC 9293 §3.7.1).
    pub mss: u16,
    /// Initial congestion window in segments (RFC 6928; Linux 3.x default 10).
    pub initial_window: u32,
    pub cc: CcAlgorithm,
    /// CUBIC's hybrid slow start (Linux `tcp_cubic` `hystart = 1`, ACK-train and
    /// delay detection).
    pub hystart: bool,
    pub recovery: RecoveryAlgorithm,
    /// RACK time-based loss detection (RFC 8985 §6; Linux `tcp_recovery = 1`, 4.10+)
    /// in place of duplicate-ACK counting and FACK when SACK is in use.
    pub rack: bool,
    /// Offer and use SACK (RFC 2018).
    pub sack: bool,
    /// Generate and use DSACK (RFC 2883).
    pub dsack: bool,
    /// Linux FACK loss marking (`prr-imc11.txt` §3.2). Needs `sack`.
    pub fack: bool,
    /// Offer and use RFC 7323 timestamps.
    pub timestamps: bool,
    /// Offer and use RFC 7323 window scaling.
    pub window_scale: bool,
    /// Appropriate byte counting (RFC 3465): cwnd grows by the segments an ACK
    /// covers, as Linux does since 3.18. Off, it grows by at most one segment per
    /// ACK (RFC 5681 §3.1; Linux 2.6/3.x, `tcp_abc` = 0), so delayed ACKs slow it.
    pub abc: bool,
    /// Limited transmit (RFC 3042).
    pub limited_transmit: bool,
    /// F-RTO spurious RTO detection (RFC 5682).
    pub frto: bool,
    /// Undo cwnd reductions shown to be spurious by DSACK or timestamps (RFC 3522, RFC 3708).
    pub undo: bool,
    /// Early Retransmit (RFC 5827).
    pub er: EarlyRetransmit,
    /// Turn Early Retransmit off for good once reordering is detected
    /// (`prr-imc11.txt` §6 mitigation 1; Linux `tcp_disable_early_retrans`).
    pub er_reorder_disable: bool,
    /// Lower bound of the delayed-ER wait of srtt/4: Linux 3.5–3.10
    /// `tcp_pause_early_retransmit` uses 2 ms; the implementation `prr-imc11.txt` §6
    /// evaluated used 25 ms.
    pub er_delay_min: Duration,
    /// Upper bound of the delayed-ER wait: none in Linux; 500 ms in `prr-imc11.txt` §6.
    pub er_delay_max: Option<Duration>,
    /// Tail loss probe (`gentle-aggression-sigcomm13.txt` §4, RFC 8985 §7).
    pub tlp: bool,
    pub tlp_flavour: TlpFlavour,
    pub tlp_detection: TlpDetection,
    /// Consecutive probes without progress (the paper's deployment: 1).
    pub tlp_max_probes: u32,
    /// Worst-case delayed-ACK time added with one segment in flight (200 ms).
    pub tlp_wdt: Duration,
    /// Corrective: XOR forward error correction inside TCP
    /// (`gentle-aggression-sigcomm13.txt` §5), offered in the handshake and used when
    /// the peer offers it too.
    pub corrective: bool,
    /// Send every SYN and SYN-ACK twice (`gentle-aggression-sigcomm13.txt` §8.4.1,
    /// "transmitting all SYN packets twice").
    pub redundant_syn: bool,
    /// Duplicate-ACK threshold (RFC 5681 §3.2: 3).
    pub dupthresh: u32,
    /// Minimum RTO. Linux: `TCP_RTO_MIN` = 200 ms (RFC 6298 §2.4 says 1 s).
    pub rto_min: Duration,
    /// Maximum RTO. Linux: `TCP_RTO_MAX` = 120 s.
    pub rto_max: Duration,
    /// Initial RTO before any RTT sample (RFC 6298 §2.1: 1 s).
    pub rto_initial: Duration,
    /// The receiver's acknowledgement policy. Set it with [`Config::set_receiver`],
    /// which also sets the policy's defaults below.
    pub receiver: ReceiverPolicy,
    /// Delayed-ACK timeout; `None` acknowledges every segment at once. For the Linux
    /// policy the floor of the adaptive timeout (`TCP_ATO_MIN` = 40 ms); Windows
    /// 200 ms; RFC 500 ms.
    pub delayed_ack: Option<Duration>,
    /// Most quick ACKs per entry into Linux's quick-ACK mode (`TCP_MAX_QUICKACKS` =
    /// 16). 0 disables quick ACKs.
    pub quickack: u32,
    /// Receive buffer in bytes: the largest window advertised.
    pub recv_buffer: u32,
    /// SYN (and SYN-ACK) retransmissions before giving up (Linux `tcp_syn_retries` = 6).
    pub syn_retries: u32,
    /// Data retransmissions by timeout before the connection is aborted
    /// (Linux `tcp_retries2` = 15).
    pub max_retries: u32,
    /// Time spent in TIME-WAIT (RFC 9293: 2·MSL; Linux 60 s).
    pub time_wait: Duration,
    /// Reduce cwnd after an idle period longer than the RTO (RFC 2861 as Linux's
    /// `tcp_slow_start_after_idle` = 1 does).
    pub slow_start_after_idle: bool,
    /// Maximum reordering degree Linux tracks (`tcp_max_reordering`, 127 in 3.x).
    pub max_reordering: u32,
    /// Record an event trace (state changes, timers, retransmissions).
    pub trace: bool,
}

impl Config {
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

/// Named baselines the papers compare against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// No SACK, NewReno recovery on duplicate ACKs, Reno congestion control.
    Plain,
    /// SACK with RFC 6675 loss detection and recovery, no FACK, Reno.
    Rfc,
    /// SACK + FACK + rate halving + CUBIC: Linux 2.6 as `prr-imc11.txt` §3.2
    /// describes it.
    #[serde(rename = "linux-2.6")]
    Linux26,
    /// Linux 2.6 plus PRR, delayed Early Retransmit (`prr-imc11.txt` §4, §6) and the
    /// tail loss probe (`gentle-aggression-sigcomm13.txt` §4).
    #[serde(rename = "linux-3.10")]
    Linux310,
    /// Today's Linux (6.x, `tcp_recovery = 1`, `tcp_early_retrans = 3`): RACK-TLP
    /// (RFC 8985), PRR as RFC 9937, CUBIC with HyStart, F-RTO and DSACK undo, byte
    /// counting; no FACK (removed in 4.15) and no Early Retransmit (replaced by RACK
    /// in 4.11).
    #[serde(rename = "linux-6")]
    Linux6,
}

impl Profile {
    pub const ALL: &'static [Profile] = &[
        Profile::Plain,
        Profile::Rfc,
        Profile::Linux26,
        Profile::Linux310,
        Profile::Linux6,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Plain => "plain",
            Profile::Rfc => "rfc",
            Profile::Linux26 => "linux-2.6",
            Profile::Linux310 => "linux-3.10",
            Profile::Linux6 => "linux-6",
        }
    }

    pub fn from_name(s: &str) -> Option<Profile> {
        Profile::ALL.iter().copied().find(|p| p.name() == s)
    }

    pub fn config(self) -> Config {
        let mut c = Config::default();
        match self {
            Profile::Plain => {
                c.sack = false;
                c.dsack = false;
                c.fack = false;
                c.cc = CcAlgorithm::Reno;
                c.recovery = RecoveryAlgorithm::Rfc6675;
            }
            Profile::Rfc => {
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
                c.fack = false;
                c.rack = true;
                c.recovery = RecoveryAlgorithm::PrrRfc9937;
                c.hystart = true;
                c.abc = true;
                c.er = EarlyRetransmit::Off;
                c.tlp = true;
                c.tlp_flavour = TlpFlavour::Linux6;
                c.tlp_detection = TlpDetection::Dsack;
            }
        }
        c
    }
}

impl Default for Config {
    /// The `linux-2.6` baseline.
    fn default() -> Self {
        Config {
            mss: 1460,
            initial_window: 10,
            cc: CcAlgorithm::Cubic,
            hystart: false,
            recovery: RecoveryAlgorithm::RateHalving,
            rack: false,
            sack: true,
            dsack: true,
            fack: true,
            timestamps: true,
            window_scale: true,
            abc: false,
            limited_transmit: true,
            frto: true,
            undo: true,
            er: EarlyRetransmit::Off,
            er_reorder_disable: true,
            er_delay_min: Duration::from_millis(2),
            er_delay_max: None,
            tlp: false,
            tlp_flavour: TlpFlavour::Draft2013,
            tlp_detection: TlpDetection::Basic,
            tlp_max_probes: 1,
            tlp_wdt: Duration::from_millis(200),
            corrective: false,
            redundant_syn: false,
            dupthresh: 3,
            rto_min: Duration::from_millis(200),
            rto_max: Duration::from_secs(120),
            rto_initial: Duration::from_secs(1),
            receiver: ReceiverPolicy::Linux,
            delayed_ack: Some(Duration::from_millis(40)),
            quickack: 16,
            recv_buffer: 6 * 1024 * 1024,
            syn_retries: 6,
            max_retries: 15,
            time_wait: Duration::from_secs(60),
            slow_start_after_idle: true,
            max_reordering: 127,
            trace: false,
        }
    }
}
