//! The integration tests of this crate, gathered into one test binary (one link,
//! not one per file): each module is a former test file, named as before.

mod cc_properties;
mod corrective;
mod corrective_decode;
mod delayed_ack;
mod dsack;
mod early_retransmit;
mod ecn;
mod fack;
mod fast_retransmit;
mod fast_start;
mod frto;
mod handshake;
mod limited_transmit;
mod loss_probe;
mod pair;
mod proactive;
mod prr_properties;
mod rack;
mod receive_window;
mod recovery_algorithms;
mod recovery_properties;
mod rto_backoff;
mod sack_generation;
mod script;
mod session;
mod timer_wheel;
mod transmit_into;
mod tso_psh;
mod undo;
mod wire;
mod zero_window;
