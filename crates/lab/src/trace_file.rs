//! A line of a `gentle run --trace` file (JSON lines), as `gentle plot tsg` and
//! `gentle view` read it back: when, what, where, the packet or the engine event.
//! Fields a reader does not need default; fields it does not know are ignored.

use serde::Deserialize;

/// One line of a trace file.
#[derive(Deserialize)]
pub(crate) struct TraceLine {
    pub t_ns: u64,
    /// `send`, `recv`, `drop`, `engine`, …
    pub what: String,
    #[serde(default)]
    pub node: String,
    #[serde(default)]
    pub scenario: String,
    #[serde(default)]
    pub variant: String,
    pub packet: Option<TracePacket>,
    /// The engine event's name (`ca-state`, `rto`, …).
    pub event: Option<String>,
    pub conn: Option<u32>,
    /// A `ca-state` event's states and window.
    pub from: Option<String>,
    pub to: Option<String>,
    pub cwnd: Option<u64>,
    pub ssthresh: Option<u64>,
    pub pipe: Option<u64>,
}

/// The packet of a `send`, `recv` or `drop` line.
#[derive(Deserialize, Clone)]
pub(crate) struct TracePacket {
    pub flow: u32,
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub flags: String,
    #[serde(default)]
    pub seq: u64,
    #[serde(default)]
    pub len: u64,
    #[serde(default)]
    pub ack: u64,
    #[serde(default)]
    pub win: u64,
    pub ts: Option<[u32; 2]>,
    #[serde(default)]
    pub sack: Vec<[u64; 2]>,
    /// A Proactive copy, not a retransmission.
    #[serde(default)]
    pub copy: bool,
}
