//! The extensions beside standard TCP, each in its own module with its own
//! sources: [`corrective`] (Corrective, `corrective-conext13.txt`), [`proactive`]
//! (Proactive, every segment twice) and [`ecn`] (RFC 3168 §6.1).
//!
//! The [`Extensions`]' fields are private to this module and its submodules; the
//! rest of the connection reaches each extension's own methods through the
//! accessors below.

mod corrective;
mod ecn;
mod proactive;

use super::Connection;
use crate::config::Config;
use corrective::Corrective;
use ecn::Ecn;
use proactive::Proactive;

/// The extensions of one connection.
#[derive(Debug)]
pub(crate) struct Extensions {
    /// Corrective (forward error correction).
    corrective: Corrective,
    /// Proactive (every segment twice).
    proactive: Proactive,
    /// Explicit Congestion Notification.
    ecn: Ecn,
}

impl Extensions {
    /// As `cfg` configures them, before the handshake.
    pub fn new(cfg: &Config) -> Extensions {
        Extensions {
            corrective: Corrective::default(),
            proactive: Proactive::new(cfg.proactive),
            ecn: Ecn::default(),
        }
    }
    /// Corrective's state.
    pub fn corrective(&self) -> &Corrective {
        &self.corrective
    }
    /// Corrective's state, to change.
    pub fn corrective_mut(&mut self) -> &mut Corrective {
        &mut self.corrective
    }
    /// Proactive's state.
    pub fn proactive(&self) -> &Proactive {
        &self.proactive
    }
    /// ECN's state.
    pub fn ecn(&self) -> &Ecn {
        &self.ecn
    }
    /// ECN's state, to change.
    pub fn ecn_mut(&mut self) -> &mut Ecn {
        &mut self.ecn
    }
}
