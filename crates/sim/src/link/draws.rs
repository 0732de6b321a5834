//! Where a link's random draws come from (loss, reordering, duplication).
//!
//! - `Arrival` (the default): one seeded stream per link direction, drawn in the
//!   order packets arrive. A change in timing — a retransmission sent a few
//!   milliseconds earlier — shifts every later draw.
//! - `Position`: each packet's draws come from a stream keyed on (the direction's
//!   key, connection, position in the byte stream, transmission number): a data
//!   segment by its relative sequence number and length, a packet without payload by
//!   its relative acknowledgment number; the n-th transmission of the same position
//!   gets the n-th key. The same segment then meets the same fate whenever it is
//!   sent, which is what lets real mode's emulator — whose kernel endpoints never
//!   time a packet the same way twice — and the simulator see the same losses. The
//!   direction's key is the first draw of its `Arrival` stream, so the simulator and
//!   the emulator, which seed their links alike, key alike.

use std::collections::BTreeMap;

use rand::RngCore;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::packet::PacketMeta;
use crate::rng::mix64;

/// Where a link direction's draws come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Draws {
    #[default]
    Arrival,
    Position,
}

/// The transmission counts behind `Position` keys.
#[derive(Debug)]
pub struct PositionKeys {
    key: u64,
    /// (connection, has payload, position, length) → transmissions so far.
    sent: BTreeMap<(u32, bool, u64, u32), u32>,
}

impl PositionKeys {
    /// Keys for a direction whose `Arrival` stream is `rng` (its first draw becomes
    /// the direction's key).
    pub fn new(rng: &mut ChaCha8Rng) -> PositionKeys {
        PositionKeys {
            key: rng.next_u64(),
            sent: BTreeMap::new(),
        }
    }

    /// The stream of the packet `m` (counting it as one more transmission of its
    /// position).
    pub fn stream(&mut self, m: &PacketMeta) -> ChaCha8Rng {
        let data = m.payload > 0;
        let pos = if data { m.rel_seq } else { m.rel_ack };
        let n = self.sent.entry((m.flow, data, pos, m.payload)).or_insert(0);
        *n += 1;
        ChaCha8Rng::seed_from_u64(Self::key_of(self.key, m.flow, data, pos, m.payload, *n))
    }

    fn key_of(key: u64, flow: u32, data: bool, pos: u64, len: u32, tx: u32) -> u64 {
        let mut h = mix64(key ^ flow as u64);
        h = mix64(h ^ pos ^ ((data as u64) << 63));
        mix64(h ^ ((len as u64) << 32) ^ tx as u64)
    }
}
