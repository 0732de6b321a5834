//! TCP sessions (`fast-start-and-sessions.txt` §6.1, §6.2, §7.3) at the engine
//! level: several server connections in one session control block, their clients,
//! and a path with a fixed one-way delay and a bottleneck spacing the data. The
//! tests pin the one window shared by the members, loss detection by later ACKs of
//! other connections, halving once per window, the session timeout, the weighted
//! round-robin order, and join and leave; every test checks that every byte
//! arrives, once and in order.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use gentle_tcp::session::Scb;
use gentle_tcp::session::scheduler::Wrr;
use gentle_tcp::{Config, Connection, Instant, Profile, Segment};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

const MSS: usize = 1000;
const ONE_WAY_NS: u64 = 50_000_000;
/// 1000-byte segments at 1.5 Mbit/s.
const SPACING_NS: u64 = 5_500_000;

fn cfg() -> Config {
    let mut c = Profile::Plain.config();
    c.mss = (MSS + 12) as u16;
    c.timestamps = true;
    c.initial_window = 2;
    c.delayed_ack = None;
    c
}

/// A data segment a server sent.
#[derive(Clone, Copy, Debug)]
struct Sent {
    member: usize,
    start: u64,
    t: Instant,
    /// 0 for the first transmission of the range, 1 for the first retransmission...
    nth: u32,
}

/// Server connections (in one session, or each alone) and their clients.
struct Net {
    now: Instant,
    scb: Option<Scb>,
    servers: Vec<Connection>,
    clients: Vec<Connection>,
    written: Vec<u64>,
    received: Vec<Vec<u8>>,
    link_free: u64,
    to_client: VecDeque<(u64, usize, Segment)>,
    to_server: VecDeque<(u64, usize, Segment)>,
    log: Vec<Sent>,
    nth: BTreeMap<(usize, u64), u32>,
    drop: Box<dyn FnMut(&Sent) -> bool>,
    /// Checked after every step: outstanding ≤ window (plus a forced retransmission).
    max_over_window: u32,
}

fn pattern(member: usize, off: u64, len: usize) -> Bytes {
    (0..len)
        .map(|i| ((off as usize + i) as u8).wrapping_mul(31) ^ member as u8)
        .collect::<Vec<u8>>()
        .into()
}

impl Net {
    /// `sizes[i]` bytes from server `i` to client `i`, with the session when
    /// `session`; `weights` per member.
    fn new(sizes: &[u64], weights: &[u32], session: bool) -> Net {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let now = Instant::ZERO;
        let mut servers = Vec::new();
        let mut clients = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            let mut scfg = cfg();
            scfg.session_weight = weights.get(i).copied().unwrap_or(1);
            let mut client = Connection::connect(cfg(), now, 1000 + i as u16, 80, &mut rng);
            let mut server = Connection::accelerated_open(&mut client, scfg, now, &mut rng);
            let mut off = 0;
            while off < size {
                let n = (size - off).min(4096) as usize;
                server.write(pattern(i, off, n));
                off += n as u64;
            }
            server.close();
            servers.push(server);
            clients.push(client);
        }
        let scb = session.then(|| {
            let mut scb = Scb::new(&cfg());
            for (i, s) in servers.iter_mut().enumerate() {
                scb.join(i as u32, s);
            }
            scb
        });
        Net {
            now,
            scb,
            servers,
            clients,
            written: sizes.to_vec(),
            received: vec![Vec::new(); sizes.len()],
            link_free: 0,
            to_client: VecDeque::new(),
            to_server: VecDeque::new(),
            log: Vec::new(),
            nth: BTreeMap::new(),
            drop: Box::new(|_| false),
            max_over_window: 0,
        }
    }

    fn put(&mut self, i: usize, s: Segment) {
        if !s.payload.is_empty() {
            let start = s.seq.wrapping_sub(self.servers[i].iss()) as u64;
            let nth = self.nth.entry((i, start)).or_insert(0);
            let sent = Sent {
                member: i,
                start,
                t: self.now,
                nth: *nth,
            };
            *nth += 1;
            self.log.push(sent);
            if (self.drop)(&sent) {
                return;
            }
            self.link_free = self.link_free.max(self.now.as_nanos()) + SPACING_NS;
        }
        let at = self.link_free.max(self.now.as_nanos()) + ONE_WAY_NS;
        self.to_client.push_back((at, i, s));
    }

    fn pump(&mut self) {
        let now = self.now;
        for i in 0..self.servers.len() {
            while let Some(s) = self.servers[i].poll_transmit(now) {
                self.put(i, s);
            }
        }
        if let Some(scb) = self.scb.as_mut() {
            let mut out = Vec::new();
            while let Some((i, s)) = scb.poll_transmit(now, &mut self.servers) {
                out.push((i as usize, s));
            }
            let over = scb.outstanding().saturating_sub(scb.cwnd());
            self.max_over_window = self.max_over_window.max(over);
            for (i, s) in out {
                self.put(i, s);
            }
        }
        for i in 0..self.clients.len() {
            while let Some(s) = self.clients[i].poll_transmit(now) {
                self.to_server
                    .push_back((now.as_nanos() + ONE_WAY_NS, i, s));
            }
        }
    }

    /// One event; false when nothing is left to happen.
    fn step(&mut self) -> bool {
        let mut t = [
            self.to_client.front().map(|x| x.0),
            self.to_server.front().map(|x| x.0),
            self.scb
                .as_ref()
                .and_then(|s| s.poll_timeout())
                .map(|t| t.as_nanos()),
        ]
        .into_iter()
        .flatten()
        .min();
        for c in self.servers.iter().chain(&self.clients) {
            if let Some(x) = c.poll_timeout() {
                t = Some(t.map_or(x.as_nanos(), |t| t.min(x.as_nanos())));
            }
        }
        let Some(t) = t else { return false };
        self.now = Instant::from_nanos(t.max(self.now.as_nanos()));
        let now = self.now;
        if self.to_client.front().is_some_and(|x| x.0 <= t) {
            let (_, i, s) = self.to_client.pop_front().unwrap();
            self.clients[i].handle_segment(now, &s);
            while let Some(b) = self.clients[i].read() {
                self.received[i].extend_from_slice(&b);
            }
        } else if self.to_server.front().is_some_and(|x| x.0 <= t) {
            let (_, i, s) = self.to_server.pop_front().unwrap();
            self.servers[i].handle_segment(now, &s);
            if let Some(scb) = self.scb.as_mut() {
                scb.on_ack(i as u32, now, &mut self.servers);
            }
        } else {
            if let Some(scb) = self.scb.as_mut() {
                scb.handle_timeout(now, &mut self.servers);
            }
            for c in self.servers.iter_mut().chain(self.clients.iter_mut()) {
                if c.poll_timeout().is_some_and(|x| x <= now) {
                    c.handle_timeout(now);
                }
            }
        }
        self.pump();
        true
    }

    /// Runs until every server's data is acknowledged (or 60 s pass).
    fn run(&mut self) {
        self.pump();
        while !self.servers.iter().all(|s| s.all_acked()) && self.now.as_nanos() < 60_000_000_000 {
            if !self.step() {
                break;
            }
        }
        self.check_delivery();
    }

    /// Every byte arrived, once and in order.
    fn check_delivery(&self) {
        for (i, r) in self.received.iter().enumerate() {
            assert_eq!(
                r.len() as u64,
                self.written[i],
                "member {i}: bytes received"
            );
            assert!(
                r.as_slice() == pattern(i, 0, r.len()).as_ref(),
                "member {i}: corrupt or reordered data"
            );
        }
    }

    fn scb(&self) -> &Scb {
        self.scb.as_ref().unwrap()
    }

    /// Sends of new data (first transmissions), in order.
    fn originals(&self) -> impl Iterator<Item = &Sent> {
        self.log.iter().filter(|s| s.nth == 0)
    }
}

#[test]
fn members_share_one_window() {
    let mut net = Net::new(&[20_000; 4], &[], true);
    net.pump();
    // The session's initial window (2 segments) covers all four connections: not
    // 2 each, as four independent connections would send.
    assert_eq!(net.log.len(), 2);
    let mut solo = Net::new(&[20_000; 4], &[], false);
    solo.pump();
    assert_eq!(solo.log.len(), 8);
    // Throughout, what all members have outstanding is what the session counts,
    // and never more than its window.
    net.pump();
    while net.step() {
        let pipe: u32 = net.servers.iter().map(|s| s.pipe()).sum();
        assert_eq!(pipe, net.scb().outstanding(), "at {:?}", net.now);
        if net.servers.iter().all(|s| s.all_acked()) {
            break;
        }
    }
    assert_eq!(net.max_over_window, 0);
    net.check_delivery();
    // Slow start grew the one window past the initial one.
    assert!(net.scb().cwnd() > 10, "cwnd {}", net.scb().cwnd());
}

#[test]
fn later_acks_of_another_connection_detect_a_loss() {
    // A has a single segment, and loses it: alone, no duplicate ACK can come, and
    // only its retransmission timer (1 s before an RTT sample) repairs it.
    let lose_a = |s: &Sent| s.member == 0 && s.nth == 0;
    let mut solo = Net::new(&[1000, 30_000], &[], false);
    solo.drop = Box::new(lose_a);
    solo.run();
    let retrans = |net: &Net| {
        net.log
            .iter()
            .find(|s| s.member == 0 && s.nth == 1)
            .unwrap()
            .t
    };
    assert!(retrans(&solo).as_nanos() >= 1_000_000_000);
    assert_eq!(solo.servers[0].counters().timeouts, 1);

    // In a session, B's ACKs are later ACKs for A's segment: three of them, and A
    // retransmits — within a few round trips, without a timeout.
    let mut net = Net::new(&[1000, 30_000], &[], true);
    net.drop = Box::new(lose_a);
    net.run();
    let c = net.scb().counters();
    assert_eq!(c.session_loss_detected, 1);
    assert_eq!(c.session_later_ack_recoveries, 1);
    assert_eq!(c.session_timeouts, 0);
    assert_eq!(net.servers[0].counters().fast_retrans, 1);
    assert!(
        retrans(&net).as_nanos() < 400_000_000,
        "A retransmitted at {:?}",
        retrans(&net)
    );
}

#[test]
fn a_loss_halves_the_window_once_per_window() {
    // Two losses, on different members, in the same window.
    let mut net = Net::new(&[60_000; 3], &[], true);
    net.drop = Box::new(|s: &Sent| s.nth == 0 && s.member != 1 && s.start == 7001);
    net.pump();
    let mut before = None;
    while net.step() {
        let c = *net.scb().counters();
        if c.session_loss_detected == 0 {
            before = Some((net.scb().cwnd(), net.scb().outstanding()));
        } else if c.session_loss_detected == 1 && before.is_some() {
            let (cwnd, _) = before.take().unwrap();
            assert_eq!(net.scb().ssthresh(), net.scb().cwnd());
            assert!(
                net.scb().cwnd() * 2 <= cwnd + 1,
                "{} from {cwnd}",
                net.scb().cwnd()
            );
            assert!(net.scb().cwnd() >= 2);
        }
        if net.servers.iter().all(|s| s.all_acked()) {
            break;
        }
    }
    net.check_delivery();
    let c = net.scb().counters();
    assert_eq!(c.session_loss_detected, 2);
    assert_eq!(c.session_reductions, 1, "one halving for one window");
    assert_eq!(c.session_timeouts, 0);
}

#[test]
fn the_session_timer_restarts_from_one_segment() {
    // Everything sent in [300 ms, 700 ms) is lost: no ACK comes back for a whole
    // window, and only the session's timer can repair it.
    let mut net = Net::new(&[40_000; 2], &[], true);
    net.drop =
        Box::new(|s: &Sent| s.nth == 0 && (300..700).contains(&(s.t.as_nanos() / 1_000_000)));
    net.pump();
    let mut after = None;
    loop {
        let sent_before = net.log.len();
        if !net.step() {
            break;
        }
        if after.is_none() && net.scb().counters().session_timeouts == 1 {
            after = Some((net.scb().cwnd(), net.now, sent_before));
        }
        if net.servers.iter().all(|s| s.all_acked()) {
            break;
        }
    }
    net.check_delivery();
    let (cwnd, when, sent_before) = after.expect("a session timeout");
    assert_eq!(cwnd, 1);
    // The first segment after the timeout is a retransmission, sent at once.
    let first = net.log[sent_before];
    assert_eq!(first.t, when);
    assert!(first.nth >= 1);
    // Each member with data outstanding counts the timeout as its own.
    assert_eq!(net.scb().counters().session_timeouts, 1);
    let timeouts: u64 = net.servers.iter().map(|s| s.counters().timeouts).sum();
    assert_eq!(timeouts, 2);
    let slow: u64 = net
        .servers
        .iter()
        .map(|s| s.counters().slow_start_retrans)
        .sum();
    assert!(slow > 0, "the rest of the lost window goes in slow start");
}

#[test]
fn round_robin_follows_the_weights_and_their_changes() {
    let mut net = Net::new(&[400_000; 2], &[1, 3], true);
    net.pump();
    while net.originals().count() < 80 {
        assert!(net.step());
    }
    let first: Vec<usize> = net.originals().take(80).map(|s| s.member).collect();
    let b = first.iter().filter(|&&m| m == 1).count();
    assert!((59..=61).contains(&b), "weight 3 of 4 took {b} of 80");
    // Each connection counts its share, as the session does.
    for m in 0..2 {
        assert_eq!(
            net.servers[m].counters().session_segs,
            net.scb().sent_by(m as u32)
        );
    }
    // Per packet: the weight-1 member is never kept waiting more than 3 segments.
    let longest_b_run = first.split(|&m| m == 0).map(|run| run.len()).max().unwrap();
    assert!(longest_b_run <= 3, "{first:?}");
    // Weights change at run time.
    assert!(net.scb.as_mut().unwrap().set_weight(0, 3));
    let mark = net.originals().count();
    while net.originals().count() < mark + 80 {
        assert!(net.step());
    }
    let later: Vec<usize> = net
        .originals()
        .skip(mark)
        .take(80)
        .map(|s| s.member)
        .collect();
    let a = later.iter().filter(|&&m| m == 0).count();
    assert!((38..=42).contains(&a), "equal weights: {a} of 80");
    net.run();
}

#[test]
fn wrr_order() {
    let mut w = Wrr::default();
    w.add(10, 1);
    w.add(20, 3);
    let order: Vec<u32> = (0..8).map(|_| w.pick(|_| true).unwrap()).collect();
    assert_eq!(order, [20, 10, 20, 20, 20, 10, 20, 20]);
    // A member with nothing to send is skipped and earns no credit.
    let order: Vec<u32> = (0..3).map(|_| w.pick(|id| id == 10).unwrap()).collect();
    assert_eq!(order, [10, 10, 10]);
    assert_eq!(w.pick(|_| false), None);
}

#[test]
fn join_and_leave() {
    let mut net = Net::new(&[30_000; 3], &[], true);
    assert_eq!(net.scb().len(), 3);
    assert!(net.servers.iter().all(|s| s.in_session()));
    net.pump();
    while net.scb().outstanding() < 6 {
        assert!(net.step());
    }
    // Member 1 leaves (as when it closes): its outstanding segments stop counting,
    // and it is no longer scheduled.
    let mine = net.scb().transmissions().filter(|t| t.0 == 1).count() as u32;
    assert!(mine > 0);
    let before = net.scb().outstanding();
    let scb = net.scb.as_mut().unwrap();
    scb.leave(1, &mut net.servers[1]);
    assert_eq!(scb.len(), 2);
    assert_eq!(scb.outstanding(), before - mine);
    assert!(!net.servers[1].in_session());
    assert!(scb.members().all(|m| m != 1));
}

#[test]
fn members_give_up_when_the_path_dies() {
    // Everything after 300 ms is lost: the session's timer backs off, and after
    // `max_retries` timeouts the members with data outstanding abort with a reset,
    // as a lone connection does.
    let mut net = Net::new(&[40_000; 2], &[], false);
    let mut cfg3 = cfg();
    cfg3.max_retries = 3;
    net.scb = Some({
        let mut scb = Scb::new(&cfg3);
        for (i, s) in net.servers.iter_mut().enumerate() {
            scb.join(i as u32, s);
        }
        scb
    });
    net.drop = Box::new(|s: &Sent| s.t.as_nanos() >= 300_000_000);
    net.pump();
    while net.step() {}
    assert_eq!(net.scb().counters().session_timeouts, 3);
    for s in &net.servers {
        assert!(s.is_closed());
        assert_eq!(s.close_reason(), Some(gentle_tcp::CloseReason::TimedOut));
        assert_eq!(s.counters().aborts, 1);
    }
    assert!(net.scb().poll_timeout().is_none());
}
