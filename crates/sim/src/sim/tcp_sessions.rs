//! TCP sessions on the hosts (`fast-start-and-sessions.txt` §6, §7.3): one session
//! control block ([`Scb`]) per (host, peer host), made when the host's first
//! connection with `session = "host-pair"` to that peer reaches ESTABLISHED, and
//! kept after its last member leaves, as the place that remembers the path for the
//! next ones (§7.3: the SCB "provides a convenient location to cache the
//! information needed for fast start in the future").
//!
//! A member's ACKs go to the session after the connection handled them
//! (`session_input`); a member's sends come from the session's scheduler
//! (`session_output`); the session's retransmission timer is an event of its own.

use gentle_tcp::session::{Members, Scb};
use gentle_tcp::{Connection, Instant, SessionMode, State};

use super::{ConnSlot, Ev, Sim};

/// A host's session with one peer host.
pub(crate) struct HostSession {
    pub scb: Scb,
    timer_at: Option<Instant>,
}

/// The host's connections, lent to a session by slot index.
struct Slots<'a>(&'a mut [ConnSlot]);

impl Members for Slots<'_> {
    fn conn(&mut self, id: u32) -> &mut Connection {
        &mut self.0[id as usize].conn
    }
}

impl Sim<'_> {
    /// Connection `c` joins its host's session with its peer once ESTABLISHED, and
    /// leaves it once closed (or in TIME-WAIT). Returns the session it is (or just
    /// was) a member of.
    pub(super) fn session_membership(&mut self, c: u32) -> Option<u32> {
        let slot = &mut self.conns[c as usize];
        if let Some(k) = slot.scb {
            if matches!(slot.conn.state(), State::Closed | State::TimeWait) {
                slot.scb = None;
                self.host_sessions[k as usize]
                    .scb
                    .leave(c, &mut self.conns[c as usize].conn);
            }
            return Some(k);
        }
        if slot.conn.config().session != SessionMode::HostPair
            || !matches!(slot.conn.state(), State::Established | State::CloseWait)
        {
            return None;
        }
        let node = slot.node;
        let peer = {
            let s = &self.app_conns[slot.session as usize];
            if slot.is_server { s.client } else { s.server }
        };
        let k = match self.host_session_of.get(&(node, peer)) {
            Some(&k) => k,
            None => {
                let k = self.host_sessions.len() as u32;
                self.host_sessions.push(HostSession {
                    scb: Scb::new(slot.conn.config()),
                    timer_at: None,
                });
                self.host_session_of.insert((node, peer), k);
                k
            }
        };
        slot.scb = Some(k);
        self.host_sessions[k as usize].scb.join(c, &mut slot.conn);
        Some(k)
    }

    /// After member `c` handled a segment: the session reads its ACK (§7.3
    /// `session_input`).
    pub(super) fn session_input(&mut self, c: u32) {
        let Some(k) = self.conns[c as usize].scb else {
            return;
        };
        let now = self.now;
        self.host_sessions[k as usize]
            .scb
            .on_ack(c, now, &mut Slots(&mut self.conns));
    }

    /// Sends what session `k`'s window and scheduler allow (§7.3 `session_output`).
    pub(super) fn session_output(&mut self, k: u32) {
        let now = self.now;
        loop {
            let out = self.host_sessions[k as usize]
                .scb
                .poll_transmit(now, &mut Slots(&mut self.conns));
            let Some((c, seg)) = out else { break };
            self.transmit(c, seg);
        }
        let h = &mut self.host_sessions[k as usize];
        if let Some(t) = h.scb.poll_timeout()
            && h.timer_at.is_none_or(|at| t < at)
        {
            h.timer_at = Some(t);
            self.push(t.as_nanos(), Ev::SessionTimer { scb: k });
        }
    }

    pub(super) fn on_session_timer(&mut self, k: u32, time: u64) {
        let h = &mut self.host_sessions[k as usize];
        if h.timer_at != Some(Instant::from_nanos(time)) {
            return; // superseded
        }
        h.timer_at = None;
        let now = self.now;
        h.scb.handle_timeout(now, &mut Slots(&mut self.conns));
        self.session_output(k);
    }
}
