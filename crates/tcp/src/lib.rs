//! `gentle-tcp`: a sans-IO TCP endpoint with the loss-recovery mechanisms of the
//! Linux 2.6/3.x era and the papers built on it.
//!
//! Start with [`Connection`] and its call contract; [`wire`] for the exact wire
//! format; [`config`] for the switches and profiles.
//!
//! Standards: RFC 9293 (TCP), RFC 2018/2883 (SACK, DSACK), RFC 6298 (RTO),
//! RFC 6675 (SACK recovery), RFC 5681 (congestion control), RFC 3042 (limited
//! transmit), RFC 5682 (F-RTO), RFC 7323 (timestamps, window scale), RFC 9438 (CUBIC).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cc;
pub mod config;
mod connection;
pub mod corrective;
pub mod counters;
pub(crate) mod receive_window;
pub mod receiver;
pub mod recovery;
pub(crate) mod rtt;
pub(crate) mod scoreboard;
pub(crate) mod sendbuf;
pub mod session;
pub mod switch;
pub mod time;
pub mod timer_wheel;
pub mod trace;
pub mod wire;

pub use config::{
    CcAlgorithm, Config, CwndValidation, EarlyRetransmit, Profile, ReceiverPolicy,
    RecoveryAlgorithm, SessionMode, SynLossWindow, TlpDetection, TlpFlavour,
};
pub use connection::{CloseReason, Connection, PathMetrics};
pub use counters::Counters;
pub use time::Instant;
pub use trace::{CaState, Event, RetransKind, State, Traced};
pub use wire::{Ecn, Flags, Options, Segment};
