//! What a trial produces: one record per exchange, one per page load, and totals.

use std::sync::Arc;

use gentle_tcp::Counters;
use serde::Serialize;

use crate::link::ChannelStats;

/// One request/response exchange (or one object of a page, or one bulk transfer).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ExchangeRecord {
    pub trial: u64,
    pub workload: u16,
    /// Index of the exchange within its workload in this trial.
    pub index: u32,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// Finished within the trial's time limit.
    pub complete: bool,
    /// Server-side response time: server receives the request → server receives the
    /// ACK of the last response byte (`gentle-aggression-sigcomm13.txt` §8.1).
    pub server_ns: Option<u64>,
    /// Client-side response time: client's first packet → last response byte received.
    pub client_ns: Option<u64>,
    /// Client's first packet to the delivery of the server's FIN, when the server
    /// closed (`tlp-measurement-tum13.txt` t_total).
    pub fin_ns: Option<u64>,
    pub fast_retrans: u32,
    pub slow_start_retrans: u32,
    pub syn_retrans: u32,
    pub timeouts: u32,
    pub recoveries: u32,
    pub undos: u32,
    /// Segments both ends sent again, as a capture shows them (Linux 3.10's loss
    /// probes too, which its `RetransSegs` leaves out).
    pub retrans_segs: u32,
    /// The server end's retransmitted segments during the exchange (what a server's
    /// statistics and a capture at the server count; `retrans_segs` is both ends').
    #[serde(skip)]
    pub server_retrans_segs: u32,
    /// Payload bytes sent by both ends, retransmissions and redundancy included.
    pub bytes_sent: u64,
    /// Packets of this exchange's connection dropped by the network.
    pub packets_dropped: u32,
    /// `tlp-measurement-tum13.txt` §3.3, seen where the server's packets enter the
    /// network: the first retransmission of a dropped data segment minus that
    /// segment's drop time (`t_recover`) ...
    pub t_recover_ns: Option<u64>,
    /// ... and the first response segment sent to the FIN's delivery (`t_total`).
    pub t_total_ns: Option<u64>,
    /// Why the exchange did not finish, when it did not.
    pub unfinished: Option<Unfinished>,
}

/// Why an exchange did not finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unfinished {
    /// The client's SYN (or the server's SYN-ACK) went unanswered `syn_retries` times.
    SynRetries,
    /// Data went unacknowledged through every retransmission (`max_retries`): the
    /// connection was aborted.
    Retries,
    /// A reset closed the connection.
    Reset,
    /// The trial reached its time limit with the exchange still under way.
    TimeLimit,
}

impl Unfinished {
    pub const ALL: [Unfinished; 4] = [
        Unfinished::SynRetries,
        Unfinished::Retries,
        Unfinished::Reset,
        Unfinished::TimeLimit,
    ];
    pub fn describe(self) -> &'static str {
        match self {
            Unfinished::SynRetries => "SYN retries exhausted",
            Unfinished::Retries => "retransmissions exhausted (aborted)",
            Unfinished::Reset => "reset",
            Unfinished::TimeLimit => "time limit reached",
        }
    }
}

/// The few counters an exchange's record takes the difference of, summed over a
/// connection's ends: what an exchange keeps of [`Counters`] when it begins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExchangeCounts {
    pub fast_retrans: u64,
    pub slow_start_retrans: u64,
    pub syn_retrans: u64,
    pub timeouts: u64,
    pub recoveries: u64,
    pub undos: u64,
    /// Segments sent again ([`Counters::retransmissions_sent`]).
    pub retransmissions: u64,
    pub bytes_sent: u64,
}

impl ExchangeCounts {
    /// One end's counts.
    pub fn of(c: &Counters) -> Self {
        let mut x = ExchangeCounts::default();
        x.add(c);
        x
    }
    /// Adds one end's counters.
    pub fn add(&mut self, c: &Counters) {
        self.fast_retrans += c.fast_retrans;
        self.slow_start_retrans += c.slow_start_retrans;
        self.syn_retrans += c.syn_retrans;
        self.timeouts += c.timeouts;
        self.recoveries += c.recovery_episodes;
        self.undos += c.undos();
        self.retransmissions += c.retransmissions_sent();
        self.bytes_sent += c.bytes_sent;
    }
}

impl ExchangeRecord {
    pub fn had_loss(&self) -> bool {
        self.packets_dropped > 0
    }
    /// A record with the retransmission and timeout counters of an exchange:
    /// `now − snap` of the connection's counts (both ends) over it, and of the
    /// server end's retransmitted segments.
    pub fn deltas(
        now: &ExchangeCounts,
        snap: &ExchangeCounts,
        server_now: u64,
        server_snap: u64,
    ) -> Self {
        let sub = |x: u64, y: u64| (x - y.min(x)) as u32;
        ExchangeRecord {
            fast_retrans: sub(now.fast_retrans, snap.fast_retrans),
            slow_start_retrans: sub(now.slow_start_retrans, snap.slow_start_retrans),
            syn_retrans: sub(now.syn_retrans, snap.syn_retrans),
            timeouts: sub(now.timeouts, snap.timeouts),
            recoveries: sub(now.recoveries, snap.recoveries),
            undos: sub(now.undos, snap.undos),
            retrans_segs: sub(now.retransmissions, snap.retransmissions),
            server_retrans_segs: sub(server_now, server_snap),
            bytes_sent: now.bytes_sent.saturating_sub(snap.bytes_sent),
            ..Default::default()
        }
    }

    pub fn had_retransmission(&self) -> bool {
        self.retrans_segs > 0 || self.syn_retrans > 0
    }
}

/// One page load.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PageRecord {
    pub trial: u64,
    pub workload: u16,
    pub objects: u32,
    pub bytes: u64,
    pub complete: bool,
    /// First SYN to the last byte of the last object at the client.
    pub load_ns: Option<u64>,
}

/// One fast-recovery episode of a connection (`prr-imc11.txt` Tables 5–7), in
/// segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Episode {
    /// pipe − ssthresh as recovery starts: on its first ACK, after that ACK's loss
    /// marking, where PRR first chooses its part (Table 5).
    pub start_pipe_minus_ssthresh: i32,
    /// cwnd − ssthresh after the last ACK processed in recovery (Table 6).
    pub last_cwnd_minus_ssthresh: i32,
    /// cwnd once recovery ended (Table 7); `None` when a timeout ended it.
    pub cwnd_after: Option<u32>,
}

/// The counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    /// Index of the `[[link]]` (the setup's `links`).
    pub link: u32,
    /// The direction: from node ...
    pub from: Arc<str>,
    /// ... to node.
    pub to: Arc<str>,
    pub stats: ChannelStats,
}

/// Everything one trial produced.
#[derive(Clone, Debug, Default)]
pub struct TrialResult {
    pub trial: u64,
    pub exchanges: Vec<ExchangeRecord>,
    pub pages: Vec<PageRecord>,
    /// Engine counters summed over every connection of the trial.
    pub counters: Counters,
    /// ... and over the frontends' backend connections alone (both ends) ...
    pub backend: Counters,
    /// ... and over the server ends alone (what a server's MIB counts, and what
    /// `gentle analyze` reads from a capture at the server).
    pub server: Counters,
    /// The counters of every link direction added up ...
    pub links: ChannelStats,
    /// ... and of each, in the order of the setup's links (`a` → `b`, then `b` → `a`).
    pub per_link: Vec<LinkStats>,
    /// Events processed by the simulator.
    pub events: u64,
    /// Packets carrying payload handed to the network.
    pub data_packets: u64,
    /// All packets handed to the network.
    pub packets: u64,
    /// Bytes the applications received that differed from what was sent.
    pub corrupt_bytes: u64,
    /// Virtual time at which the trial ended, ns.
    pub end_ns: u64,
    /// The trial hit its time limit with measured work unfinished.
    pub timed_out: bool,
    /// Fast-recovery episodes of every data sender.
    pub episodes: Vec<Episode>,
}
