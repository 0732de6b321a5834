//! Workloads: what the applications on the hosts do.
//!
//! - Request/response exchanges over a fresh connection each (handshake included)
//!   or over one persistent connection, with think time between exchanges. A
//!   request of 0 bytes makes the server push the response (on/off bursts).
//! - Bulk transfers (finite, or endless cross traffic with a capped window).
//! - Scripted writes: the server writes given amounts at given times.
//! - Web pages: N objects fetched over M parallel persistent connections.

use std::time::Duration;

use gentle_tcp::{Config, ReceiverPolicy};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// A size (bytes), fixed or drawn per exchange.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Size {
    Fixed(u64),
    Uniform {
        lo: u64,
        hi: u64,
    },
    Exponential {
        mean: f64,
    },
    LogNormal {
        median: f64,
        sigma: f64,
    },
    /// Weighted choice among sizes.
    Choice(Vec<(u64, f64)>),
}

impl Size {
    /// [`Self::sample`] from a stream made on its first draw: a fixed size draws
    /// nothing.
    pub fn sample_lazy(&self, rng: &mut crate::rng::Lazy) -> u64 {
        match self {
            Size::Fixed(n) => *n,
            _ => self.sample(rng.get()),
        }
    }

    pub fn sample(&self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            Size::Fixed(n) => *n,
            Size::Uniform { lo, hi } => rng.gen_range(*lo..=*hi),
            Size::Exponential { mean } => {
                let u: f64 = rng.gen_range(f64::EPSILON..1.0);
                (-u.ln() * mean).round().max(1.0) as u64
            }
            Size::LogNormal { median, sigma } => {
                // Box–Muller from two uniforms (no libm-dependent special functions
                // beyond ln/sqrt/cos, which are correctly rounded on IEEE targets).
                let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
                let u2: f64 = rng.gen_range(0.0..1.0);
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (median * (sigma * z).exp()).round().max(1.0) as u64
            }
            Size::Choice(items) => {
                let total: f64 = items.iter().map(|(_, w)| w).sum();
                let mut x = rng.gen_range(0.0..total);
                for (n, w) in items {
                    if x < *w {
                        return *n;
                    }
                    x -= w;
                }
                items.last().map_or(0, |(n, _)| *n)
            }
        }
    }
}

/// How exchanges use connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionMode {
    /// A new connection per exchange; the response time includes the handshake.
    Fresh,
    /// One connection, established before the first exchange starts.
    Persistent,
}

/// What a workload does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum WorkloadKind {
    Exchanges {
        request: Size,
        response: Size,
        exchanges: u32,
        mode: ConnectionMode,
        think: Duration,
        /// The server closes right after writing each response (HTTP/1.0 style: the
        /// FIN rides on the last segment).
        server_close: bool,
    },
    Bulk {
        /// Bytes to send; `None` sends until the trial ends (cross traffic).
        bytes: Option<u64>,
    },
    /// The server application writes these byte counts at these times (from the
    /// first write, which happens when the connection is established) — the
    /// scripted senders of `prr-imc11.txt` §4.1. One record covers all of them.
    Writes { writes: Vec<(Duration, u64)> },
    Page {
        objects: u32,
        object: Size,
        request: Size,
        connections: u32,
    },
}

/// One workload: a kind between a client and a server node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub name: String,
    pub client: String,
    pub server: String,
    pub port: u16,
    pub kind: WorkloadKind,
    /// When the workload starts.
    pub start: Duration,
    /// Uniform random extra start delay in `[0, jitter)`, per trial.
    pub jitter: Duration,
    /// Whether its records count in the report (cross traffic does not).
    pub measure: bool,
    /// TCP configuration of the client side (the server side uses the variant's).
    pub client_config: Option<Config>,
    /// Receive buffer of the client (caps the window of a bulk transfer).
    pub max_window: Option<u32>,
    /// The client's acknowledgement policy, when it is not the variant's: the
    /// clients a server serves (`prr-imc11.txt` Table 1: mostly Windows).
    #[serde(default)]
    pub client_receiver: Option<ReceiverPolicy>,
    /// Whether the client offers SACK and sends DSACKs, when not as the variant's
    /// (`prr-imc11.txt` §2: 96% of connections negotiate SACK, and "some Web
    /// clients don't generate DSACKs").
    #[serde(default)]
    pub client_sack: Option<bool>,
    #[serde(default)]
    pub client_dsack: Option<bool>,
    /// A multi-stage service (`gentle-aggression-sigcomm13.txt` Figure 5): the server
    /// is a frontend that relays each request to this backend and streams its
    /// response back (`Exchanges` workloads only).
    #[serde(default)]
    pub backend: Option<Backend>,
    /// The first `warmup` exchanges run but are not recorded: they build the state
    /// the measured ones start from (`fast-start-and-sessions.txt` §4.1 measures the
    /// second of two bursts).
    #[serde(default)]
    pub warmup: u32,
    /// The TCP configuration of the server side of this workload's connections,
    /// when it is not the variant's (the variant's switches, then the workload's).
    #[serde(default)]
    pub server_config: Option<Config>,
    /// Exchanges on a schedule instead of `think` after the previous one: exchange
    /// k ≥ 1 begins `k · period` after `start` (before `jitter`), plus a uniform
    /// draw in `[0, period_jitter)` — the "hot spot" of `fast-start-and-sessions.txt`
    /// §4.4, where second bursts spread over 10 s begin again within 1 s.
    #[serde(default)]
    pub period: Option<(Duration, Duration)>,
}

/// The backend behind a frontend: a pool of persistent connections from the
/// frontend, each carrying one request at a time; requests wait for a free one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Backend {
    /// The backend node.
    pub node: String,
    /// The port it listens on.
    pub port: u16,
    /// Persistent frontend→backend connections, opened when the workload starts.
    pub pool: u32,
    /// The size of the request the frontend forwards.
    pub request: Size,
    /// The backend leg's configuration (both its ends); `None`: the variant's.
    pub config: Option<Config>,
}
