//! Loss models of one link direction.
//!
//! - Bernoulli(p): independent drops.
//! - Correlated (`gentle-aggression-sigcomm13.txt` §8.4.1): drop with probability p,
//!   raised to `p_after_loss` "if the previous packet in the burst was lost". With a
//!   `burst_gap`, a burst is what §2 defines — packets sent at most that long after
//!   the previous one (500 µs) — and a packet after a longer gap starts afresh at p;
//!   without one, every packet follows the previous one.
//! - Gilbert–Elliott: a two-state Markov chain (p = P(good→bad), r = P(bad→good)),
//!   with loss probabilities `loss_good` and `loss_bad` in each state.
//! - Drop list: drop the k-th data segment of each flow (1-based), counting either
//!   new segments (first transmissions, by sequence) or every data transmission.
//! - Tail drop (`tlp-measurement-tum13.txt` Algorithm 1, `tcpfilter`): drop the last
//!   N data-carrying segments of each response once; their retransmissions pass.
//! - Burst position (`gentle-aggression-sigcomm13.txt` §2, Figure 3): the later a
//!   data packet sits in a burst (packets of a flow sent at most 500 µs apart), the
//!   likelier it is lost: p·(1 + slope·(k − 1)) for the k-th packet. With
//!   `rest_of_burst`, the first loss of a burst takes every later packet of the
//!   burst with it with that probability — the tail-drop buffer the burst filled
//!   stays full for the rest of it, as §2 suggests — which gives the numbers lost
//!   per lossy burst that Figure 4 measures (about 35% of lossy bursts lose one
//!   packet, 10% two, the rest more). The model counts its lossy bursts of at most
//!   [`FIGURE4_MAX_BURST`] packets by the number they lost ([`BurstCounts`]).

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::packet::PacketMeta;

/// How the k-th segment of a drop list is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropCount {
    /// The k-th new data segment (first transmission of new sequence space).
    Segments,
    /// The k-th data-carrying transmission, retransmissions included.
    Transmissions,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "model")]
pub enum LossModel {
    None,
    Bernoulli {
        p: f64,
    },
    Correlated {
        p: f64,
        p_after_loss: f64,
        /// Longest gap between packets of one burst, ns; 0: no bursts, the raised
        /// probability follows any loss.
        burst_gap_ns: u64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        loss_good: f64,
        loss_bad: f64,
    },
    DropList {
        indices: Vec<u32>,
        count: DropCount,
    },
    TailDrop {
        n: u32,
    },
    BurstPosition {
        p: f64,
        slope: f64,
        /// The probability that a burst's first loss takes the rest of the burst
        /// with it; `None`: the position rule for every packet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rest_of_burst: Option<f64>,
    },
}

/// The longest burst Figure 4 of `gentle-aggression-sigcomm13.txt` counts ("for
/// bursts of at most 10 packets").
pub const FIGURE4_MAX_BURST: u32 = 10;

/// Lossy bursts of at most [`FIGURE4_MAX_BURST`] packets, by the number they lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BurstCounts {
    pub lossy: u64,
    pub lost_one: u64,
    pub lost_two: u64,
}

/// Packets of a flow sent at most this far apart form one burst
/// (`gentle-aggression-sigcomm13.txt` §2).
pub const BURST_GAP_NS: u64 = 500_000;

/// Which packets a loss model applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppliesTo {
    /// Every packet.
    #[default]
    All,
    /// Packets carrying payload.
    Data,
    /// Packets without payload (ACKs, SYNs, FINs).
    Control,
}

/// Per-flow state of the deterministic models.
#[derive(Clone, Debug, Default)]
struct FlowState {
    flow: u32,
    new_segments: u32,
    transmissions: u32,
    highest_end: u64,
    max_payload: u32,
    /// Sequence starts dropped once (their retransmissions pass).
    dropped: Vec<u64>,
    /// When the flow's last data packet was offered, and its position in the burst.
    last_ns: u64,
    position: u32,
    /// Packets of the current burst lost.
    lost_in_burst: u32,
    /// The current burst's first loss took the rest of it.
    losing_rest: bool,
}

/// A loss model with its state.
#[derive(Clone, Debug)]
pub struct Loss {
    model: LossModel,
    applies: AppliesTo,
    prev_lost: bool,
    /// When the previous packet was offered (Correlated's burst gap).
    prev_ns: u64,
    bad: bool,
    flows: Vec<FlowState>,
    bursts: BurstCounts,
}

impl Loss {
    pub fn new(model: LossModel, applies: AppliesTo) -> Self {
        Loss {
            model,
            applies,
            prev_lost: false,
            prev_ns: 0,
            bad: false,
            flows: Vec::new(),
            bursts: BurstCounts::default(),
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self.model, LossModel::None)
    }

    /// The lossy bursts counted so far, the bursts still open included.
    pub fn burst_counts(&self) -> BurstCounts {
        let mut c = self.bursts;
        for f in &self.flows {
            count_burst(&mut c, f);
        }
        c
    }
}

/// Adds the burst `f` is in (or has just ended) to `c`, if it lost packets and was
/// short enough for Figure 4.
fn count_burst(c: &mut BurstCounts, f: &FlowState) {
    if f.lost_in_burst == 0 || f.position > FIGURE4_MAX_BURST {
        return;
    }
    c.lossy += 1;
    match f.lost_in_burst {
        1 => c.lost_one += 1,
        2 => c.lost_two += 1,
        _ => {}
    }
}

fn flow_state(flows: &mut Vec<FlowState>, flow: u32) -> &mut FlowState {
    let i = match flows.iter().position(|f| f.flow == flow) {
        Some(i) => i,
        None => {
            flows.push(FlowState {
                flow,
                ..Default::default()
            });
            flows.len() - 1
        }
    };
    &mut flows[i]
}

impl Loss {
    /// The model drops nothing and draws nothing (`LossModel::None`).
    pub fn never_drops(&self) -> bool {
        matches!(self.model, LossModel::None)
    }

    /// Decides whether the packet described by `m` is dropped (models that depend on
    /// time see every packet at time 0).
    pub fn drop(&mut self, m: &PacketMeta, rng: &mut ChaCha8Rng) -> bool {
        self.drop_at(m, 0, rng)
    }

    /// Decides whether the packet described by `m`, offered at `now_ns`, is dropped.
    #[inline(always)]
    pub fn drop_at(&mut self, m: &PacketMeta, now_ns: u64, rng: &mut ChaCha8Rng) -> bool {
        let applies = match self.applies {
            AppliesTo::All => true,
            AppliesTo::Data => m.payload > 0,
            AppliesTo::Control => m.payload == 0,
        };
        if !applies {
            return false;
        }
        match &self.model {
            LossModel::None => false,
            &LossModel::Bernoulli { p } => rng.gen_bool(p),
            &LossModel::Correlated {
                p,
                p_after_loss,
                burst_gap_ns,
            } => {
                let in_burst =
                    burst_gap_ns == 0 || now_ns.saturating_sub(self.prev_ns) <= burst_gap_ns;
                let q = if self.prev_lost && in_burst {
                    p_after_loss
                } else {
                    p
                };
                let lost = rng.gen_bool(q);
                self.prev_lost = lost;
                self.prev_ns = now_ns;
                lost
            }
            &LossModel::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                let lost = rng.gen_bool(if self.bad { loss_bad } else { loss_good });
                let flip = rng.gen_bool(if self.bad { r } else { p });
                if flip {
                    self.bad = !self.bad;
                }
                lost
            }
            LossModel::DropList { indices, count } => {
                if m.payload == 0 {
                    return false;
                }
                let f = flow_state(&mut self.flows, m.flow);
                f.transmissions += 1;
                let end = m.rel_seq + m.payload as u64;
                let is_new = end > f.highest_end;
                if is_new {
                    f.highest_end = end;
                    f.new_segments += 1;
                }
                match *count {
                    DropCount::Transmissions => indices.contains(&f.transmissions),
                    DropCount::Segments => is_new && indices.contains(&f.new_segments),
                }
            }
            &LossModel::BurstPosition {
                p,
                slope,
                rest_of_burst,
            } => {
                if m.payload == 0 {
                    return false;
                }
                let f = flow_state(&mut self.flows, m.flow);
                if f.position > 0 && now_ns.saturating_sub(f.last_ns) <= BURST_GAP_NS {
                    f.position += 1;
                } else {
                    count_burst(&mut self.bursts, f);
                    f.position = 1;
                    f.lost_in_burst = 0;
                    f.losing_rest = false;
                }
                f.last_ns = now_ns;
                let lost = f.losing_rest
                    || rng.gen_bool((p * (1.0 + slope * (f.position - 1) as f64)).clamp(0.0, 1.0));
                if lost && f.lost_in_burst == 0 {
                    f.losing_rest = rest_of_burst.is_some_and(|r| rng.gen_bool(r));
                }
                f.lost_in_burst += u32::from(lost);
                lost
            }
            &LossModel::TailDrop { n } => {
                if m.payload == 0 {
                    return false;
                }
                let Some((msg_start, msg_end)) = m.message else {
                    return false;
                };
                let f = flow_state(&mut self.flows, m.flow);
                f.max_payload = f.max_payload.max(m.payload);
                if f.dropped.contains(&m.rel_seq) {
                    return false; // retransmission of a segment dropped once
                }
                let is_new = m.rel_seq + m.payload as u64 > f.highest_end;
                f.highest_end = f.highest_end.max(m.rel_seq + m.payload as u64);
                if !is_new {
                    return false;
                }
                let mss = f.max_payload.max(1) as u64;
                let len = msg_end - msg_start;
                if len == 0 || n == 0 {
                    return false;
                }
                let partial = (len - 1) % mss + 1;
                let tail = partial + (n as u64 - 1) * mss;
                let drop = m.rel_seq >= msg_start && m.rel_seq >= msg_end.saturating_sub(tail);
                if drop {
                    f.dropped.push(m.rel_seq);
                }
                drop
            }
        }
    }
}
