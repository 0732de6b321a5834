//! The integration tests of this crate, gathered into one test binary (one link,
//! not one per file): each module is a former test file, named as before.

mod common;
mod corrective;
mod fast_start;
mod frontend;
mod hystart;
mod invariants;
mod loss_models;
mod network;
mod observe;
mod policer;
mod queues;
mod sessions;
mod smoke;
mod wire_fidelity;
