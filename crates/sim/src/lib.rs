//! `gentle-sim`: a deterministic packet-level discrete-event network simulator that
//! runs [`gentle_tcp`] endpoints over links with rates, delays, queues and loss
//! models, and measures what the papers measure.
//!
//! The simulator owns no clock, thread or socket: virtual time only, and all
//! randomness from seeded streams ([`rng`]).

#![forbid(unsafe_code)]

pub mod link;
pub mod loss;
pub mod packet;
pub mod pattern;
pub mod record;
pub mod rng;
mod sim;
pub mod workload;

pub use sim::capture_frame;
pub use sim::observe;
pub use sim::{
    Capture, DropReason, Observer, PacketEvent, PacketInfo, PacketView, Setup, SetupError, Sim,
    TraceLine, TraceRecorder, TraceWhat,
};
