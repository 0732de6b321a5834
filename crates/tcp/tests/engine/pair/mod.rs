//! Two engines joined by a path: the shared two-engine driver of the tests that run a
//! whole transfer (the packet scripts in `script/` drive one engine instead).
//!
//! The client opens a connection to the server; segments cross in a fixed one-way
//! delay, and the server's data may be spaced by a bottleneck. The driver moves time
//! from event to event ([`Pair::next`]) and hands each event to the test, which
//! handles it — so a test can look at an engine between any two steps.

#![allow(dead_code)]

use std::collections::VecDeque;

use gentle_tcp::{Config, Connection, Instant, Segment};
use rand_chacha::rand_core::RngCore;

/// The next thing to happen.
pub enum Next {
    /// This segment reaches the client now.
    ToClient(Segment),
    /// This segment reaches the server now.
    ToServer(Segment),
    /// A timer of either engine is due now.
    Timers,
}

/// Two connected engines and the segments between them.
pub struct Pair {
    pub client: Connection,
    pub server: Connection,
    pub now: Instant,
    one_way_ns: u64,
    /// Time the bottleneck needs per data segment from the server, ns (0: none).
    spacing_ns: u64,
    link_free: u64,
    to_client: VecDeque<(u64, Segment)>,
    to_server: VecDeque<(u64, Segment)>,
    /// Output through `poll_transmit_into` (a reused buffer, checked untouched when
    /// nothing is sent) rather than `poll_transmit`.
    pub into: bool,
}

/// What a buffer holds before `poll_transmit_into` is asked to fill it: a segment
/// no engine sends.
fn sentinel() -> Segment {
    Segment {
        src_port: 7,
        dst_port: 7,
        seq: 0xdead_beef,
        window: 7,
        urgent: 7,
        payload: bytes::Bytes::from_static(b"sentinel"),
        ..Segment::default()
    }
}

/// The next segment `c` sends at `now`, by either entry point.
fn poll(c: &mut Connection, now: Instant, into: bool) -> Option<Segment> {
    if !into {
        return c.poll_transmit(now);
    }
    let mut out = sentinel();
    if c.poll_transmit_into(now, &mut out) {
        Some(out)
    } else {
        assert_eq!(
            out,
            sentinel(),
            "poll_transmit_into wrote a segment it did not send"
        );
        None
    }
}

impl Pair {
    /// The client (port 1000) sends its SYN; the server (port 80) accepts it at once.
    pub fn open(cfg: Config, rng: &mut dyn RngCore, one_way_ns: u64, spacing_ns: u64) -> Pair {
        let now = Instant::ZERO;
        let mut client = Connection::connect(cfg.clone(), now, 1000, 80, rng);
        let syn = client.poll_transmit(now).expect("a SYN");
        let server = Connection::accept(cfg, now, &syn, rng).expect("accepted");
        Pair {
            client,
            server,
            now,
            one_way_ns,
            spacing_ns,
            link_free: 0,
            to_client: VecDeque::with_capacity(1024),
            to_server: VecDeque::with_capacity(1024),
            into: false,
        }
    }

    /// Puts what the server has to send on the path; `drop` decides, for each data
    /// segment, whether the path loses it. Returns the data segments sent.
    pub fn server_output(&mut self, drop: &mut dyn FnMut(&Segment) -> bool) -> u64 {
        let mut sent = 0;
        while let Some(s) = poll(&mut self.server, self.now, self.into) {
            if !s.payload.is_empty() {
                sent += 1;
                if drop(&s) {
                    continue;
                }
            }
            self.link_free = self.link_free.max(self.now.as_nanos()) + self.spacing_ns;
            self.to_client
                .push_back((self.link_free + self.one_way_ns, s));
        }
        sent
    }

    /// Puts what the client has to send on the path.
    pub fn client_output(&mut self) {
        while let Some(s) = poll(&mut self.client, self.now, self.into) {
            self.to_server
                .push_back((self.now.as_nanos() + self.one_way_ns, s));
        }
    }

    /// Moves time to the next arrival or timer and returns it, or `None` when nothing
    /// is left to happen. Arrivals at the client come first, then at the server.
    pub fn next(&mut self) -> Option<Next> {
        let t = [
            self.to_client.front().map(|x| x.0),
            self.to_server.front().map(|x| x.0),
            self.server.poll_timeout().map(|t| t.as_nanos()),
            self.client.poll_timeout().map(|t| t.as_nanos()),
        ]
        .into_iter()
        .flatten()
        .min()?;
        self.now = Instant::from_nanos(t.max(self.now.as_nanos()));
        if self.to_client.front().is_some_and(|x| x.0 <= t) {
            return self.to_client.pop_front().map(|x| Next::ToClient(x.1));
        }
        if self.to_server.front().is_some_and(|x| x.0 <= t) {
            return self.to_server.pop_front().map(|x| Next::ToServer(x.1));
        }
        Some(Next::Timers)
    }

    /// Handles `next` the plain way: the segment to its engine, or both engines'
    /// timers.
    pub fn handle(&mut self, next: Next) {
        match next {
            Next::ToClient(s) => self.client.handle_segment(self.now, &s),
            Next::ToServer(s) => self.server.handle_segment(self.now, &s),
            Next::Timers => {
                self.server.handle_timeout(self.now);
                self.client.handle_timeout(self.now);
            }
        }
    }
}
