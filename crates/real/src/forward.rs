//! The emulator's forwarder: gentle's link model ([`gentle_sim::link::Channel`],
//! the simulator's own code) applied in real time to the packets of two TUN
//! devices, each the only route out of a network namespace.
//!
//! One thread, one epoll loop over the two TUN descriptors and a timerfd on the
//! monotonic clock. A packet read from one end is placed in its connection
//! ([`crate::flows`]), offered to the direction's channel — loss model, queue at the
//! link rate (drop-tail, RED with ECN marking, priority drop, acks-first) — and
//! given its propagation delay (plus reordering, duplication); it is written into
//! the other end when that time comes, the timerfd armed for the earliest (or for
//! the moment a scheduled queue's transmitter starts its next packet). Packet
//! buffers come from a pool, so the loop does not allocate per packet once the
//! pool has grown to the packets in flight.
//!
//! The forwarder records the ground truth of a run: every packet's fate (the drop
//! and delay log), a pcap at each end as that end's interface saw the traffic, and
//! how late each delivery was against its due time (the one-way delay error).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gentle_sim::link::{Admit, Channel, ChannelSpec, ChannelStats};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use nix::time::clock_gettime;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::flows::{FlowNumbering, Flows};
use crate::tun::Tun;
use crate::wire;

/// Buffer size: an MTU-1500 packet with room to spare; longer reads are refused.
const BUF: usize = 2048;
/// Longest epoll wait, so that a stop request is seen promptly.
const TICK_MS: u16 = 10;
const TOKEN_TIMER: u64 = 2;
/// With [`ForwarderSpec::spin`], how close to a due time (or to the last packet
/// read) the loop stops sleeping. Measured on this machine (2 vCPUs): a timerfd
/// sleep of about 5 ms between bursts woke 0.3–13 ms late, so that a 100 Mbit/s
/// path delivered bursts of ACKs 2.5 ms late and the kernel's response times ran
/// 3–12 ms long; sleeps are rarely late by more than this.
pub const SPIN_NS: u64 = 20_000_000;

/// A host the forwarder drives itself in place of a TUN device (gentle's engine,
/// [`crate::engine_host`]): it takes the packets due at its end and gives the
/// packets it sends, on the forwarder's clock (ns since the forwarder started).
pub trait Host: Send {
    /// The forwarder starts: `base_ns` is its time 0 on the monotonic clock.
    fn start(&mut self, base_ns: u64);
    /// A packet arrives at `now_ns`.
    fn receive(&mut self, now_ns: u64, packet: &[u8]);
    /// The next packet to send, written into `buf`: its length.
    fn transmit(&mut self, now_ns: u64, buf: &mut [u8]) -> Option<usize>;
    /// When the host next wants [`on_timeout`](Self::on_timeout).
    fn next_timeout(&self) -> Option<u64>;
    fn on_timeout(&mut self, now_ns: u64);
}

/// What is at one end of the link.
pub enum Device {
    /// A namespace's TUN device: the kernel's TCP is behind it.
    Tun(Tun),
    /// A host run by the forwarder's loop.
    Host(Box<dyn Host>),
}

/// One end of the emulated link.
pub struct End {
    pub dev: Device,
    /// The end's address: packets from anything else are not forwarded.
    pub addr: Ipv4Addr,
}

/// What the forwarder is to do.
pub struct ForwarderSpec {
    /// [0]: the end of the first workload's server, [1]: the other (servers may
    /// be on either: the client of connection k binds port `base + k`).
    pub ends: [End; 2],
    /// The channel from end `i` to the other, and its random stream (seeded as the
    /// simulator seeds the same link direction).
    pub channels: [(ChannelSpec, ChaCha8Rng); 2],
    pub numbering: FlowNumbering,
    /// Response sizes per connection index, for the tail-drop loss model.
    pub messages: Vec<(u32, Vec<u64>)>,
    /// Keep the packets each end's interface saw.
    pub capture: bool,
    /// Poll without sleeping while a packet is due, or was read, within
    /// [`SPIN_NS`]: a sleeping thread of this machine's VM wakes up to a few ms
    /// late, and every such delay lands on the path under test. Costs a core
    /// while traffic flows; off where the forwarder's CPU time is measured.
    pub spin: bool,
}

/// The fate of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fate {
    Delivered,
    DroppedLoss,
    DroppedQueue,
    /// The link's token-bucket policer dropped it.
    DroppedPolicer,
    /// Still in flight when the forwarder stopped.
    InFlight,
}

/// One line of the drop and delay log.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct LogEntry {
    /// When the forwarder read the packet, ns since it started.
    pub t_ns: u64,
    /// 0: from the server, 1: from the client.
    pub dir: u8,
    pub flow: u32,
    pub rel_seq: u64,
    pub rel_ack: u64,
    pub payload: u32,
    pub flags: u8,
    pub fate: Fate,
    /// When the link model said it should arrive ...
    pub due_ns: u64,
    /// ... and when it was written into the other end (0 if it was not).
    pub out_ns: u64,
    /// A duplicate made by the link.
    pub duplicate: bool,
}

/// A packet in flight.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pending {
    due_ns: u64,
    seq: u64,
    to: u8,
    buf: u32,
    len: u32,
    log: u32,
}

/// Percentiles of the one-way delay error (delivery time − due time), µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DelayError {
    pub samples: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// What a run of the forwarder saw.
#[derive(Debug, Default, Serialize)]
pub struct ForwarderReport {
    /// [0]: server → client, [1]: client → server.
    pub stats: [ChannelStats; 2],
    pub delay_error: DelayError,
    /// Packets that were not IPv4 TCP between the two addresses: never forwarded.
    pub foreign: u64,
    /// Writes into a TUN that failed.
    pub write_errors: u64,
    pub log: Vec<LogEntry>,
    /// Per end: (ns, packet) as its interface saw them.
    #[serde(skip)]
    pub captures: [Vec<(u64, Vec<u8>)>; 2],
    /// How long the forwarder ran, ns.
    pub ran_ns: u64,
    /// CPU time of the forwarder's thread, ns.
    pub cpu_ns: u64,
    /// The monotonic clock at the forwarder's time 0, ns: `t_ns` + `base_ns` is on
    /// the endpoints' clock.
    pub base_ns: u64,
}

/// A delivery later than this past its due time counts toward a stall
/// ([`ForwarderReport::stall_ns`]): above the forwarder's own jitter (with
/// [`ForwarderSpec::spin`], p90 15–60 µs on this machine).
pub const STALL_NS: u64 = 250_000;

impl ForwarderReport {
    /// How far the forwarder's stalls pushed the path's timeline back, up to its
    /// time `until_ns`: over each run of consecutive deliveries later than
    /// [`STALL_NS`] past their due time, the latest of them, summed. A stall (the
    /// thread or its vCPU not running) delays every packet due in it, and
    /// everything after is clocked from the late ones; so a response timed
    /// through the forwarder can end up to this much later than on the path as
    /// specified, never earlier.
    pub fn stall_ns(&self, until_ns: u64) -> u64 {
        let mut late: Vec<(u64, Reverse<u64>)> = self
            .log
            .iter()
            .filter(|e| e.fate == Fate::Delivered && e.out_ns <= until_ns)
            .map(|e| (e.out_ns, Reverse(e.out_ns.saturating_sub(e.due_ns))))
            .collect();
        // In order of delivery; at one instant, the late first (an on-time
        // packet written in the same instant does not end the stall).
        late.sort_unstable();
        let (mut sum, mut run) = (0, 0);
        for (_, Reverse(l)) in late {
            if l > STALL_NS {
                run = run.max(l);
            } else {
                sum += run;
                run = 0;
            }
        }
        sum + run
    }
}

/// A forwarder running on its own thread.
pub struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<io::Result<ForwarderReport>>>,
}

impl Running {
    /// Stops the forwarder and returns what it saw.
    pub fn stop(mut self) -> io::Result<ForwarderReport> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .expect("forwarder thread")
            .join()
            .map_err(|_| io::Error::other("the forwarder thread panicked"))?
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts the forwarder on a thread of its own.
pub fn spawn(spec: ForwarderSpec) -> io::Result<Running> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let thread = std::thread::Builder::new()
        .name("gentle-forwarder".into())
        .spawn(move || Forwarder::new(spec)?.run(&s))?;
    Ok(Running {
        stop,
        thread: Some(thread),
    })
}

fn monotonic_ns() -> u64 {
    let t = clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

struct Forwarder {
    ends: [End; 2],
    channels: [Channel; 2],
    flows: Flows,
    base_ns: u64,
    // Boxed: a buffer changes hands by pointer, never by copying its bytes.
    #[allow(clippy::vec_box)]
    pool: Vec<Box<[u8; BUF]>>,
    free: Vec<u32>,
    pending: BinaryHeap<Reverse<Pending>>,
    next_seq: u64,
    /// Packets waiting in a scheduled queue (priority drop, acks-first), by buffer
    /// (the queue's slot): (length, log line).
    queued: Vec<(u32, u32)>,
    /// When each direction's transmitter must start its next waiting packet.
    wake: [Option<u64>; 2],
    capture: bool,
    spin: bool,
    /// When the last packet was read from a TUN device.
    last_read_ns: Option<u64>,
    report: ForwarderReport,
    lateness_us: Vec<f64>,
}

impl Forwarder {
    fn new(spec: ForwarderSpec) -> io::Result<Forwarder> {
        let [(s0, r0), (s1, r1)] = spec.channels;
        let mut flows = Flows::new(spec.numbering);
        for (k, sizes) in &spec.messages {
            flows.declare_messages(*k, sizes);
        }
        Ok(Forwarder {
            ends: spec.ends,
            channels: [Channel::new(s0, 0, 1, r0), Channel::new(s1, 1, 0, r1)],
            flows,
            base_ns: monotonic_ns(),
            pool: Vec::new(),
            free: Vec::new(),
            pending: BinaryHeap::new(),
            next_seq: 0,
            queued: Vec::new(),
            wake: [None; 2],
            capture: spec.capture,
            spin: spec.spin,
            last_read_ns: None,
            report: ForwarderReport::default(),
            lateness_us: Vec::new(),
        })
    }

    fn now(&self) -> u64 {
        monotonic_ns() - self.base_ns
    }

    fn buffer(&mut self) -> u32 {
        match self.free.pop() {
            Some(i) => i,
            None => {
                self.pool.push(Box::new([0; BUF]));
                (self.pool.len() - 1) as u32
            }
        }
    }

    /// Lets every host end act at `now`: its timers, then what it sends.
    fn service_hosts(&mut self) {
        for i in 0..2 {
            let Device::Host(h) = &mut self.ends[i].dev else {
                continue;
            };
            let now = monotonic_ns() - self.base_ns;
            if h.next_timeout().is_some_and(|t| t <= now) {
                h.on_timeout(now);
            }
            self.pump(i);
        }
    }

    /// Takes every packet host end `i` has to send.
    fn pump(&mut self, i: usize) {
        loop {
            let b = self.buffer();
            let now = self.now();
            let Device::Host(h) = &mut self.ends[i].dev else {
                self.free.push(b);
                return;
            };
            match h.transmit(now, &mut self.pool[b as usize][..]) {
                Some(len) => self.admit(i, b, len, now),
                None => {
                    self.free.push(b);
                    return;
                }
            }
        }
    }

    /// When the timer is to wake the loop, and whether the loop polls without
    /// sleeping instead ([`ForwarderSpec::spin`]: something is due or was read
    /// within [`SPIN_NS`]; the timer then wakes it that long before the next due
    /// time).
    fn next_wake(&self) -> (Option<u64>, bool) {
        let next = [
            self.pending.peek().map(|p| p.0.due_ns),
            self.host_timeout(),
            self.wake[0],
            self.wake[1],
        ]
        .into_iter()
        .flatten()
        .min();
        if !self.spin {
            return (next, false);
        }
        let now = self.now();
        let soon = |t: u64| t <= now + SPIN_NS;
        if next.is_some_and(soon) || self.last_read_ns.is_some_and(|r| now < r + SPIN_NS) {
            return (None, true);
        }
        (next.map(|t| t - SPIN_NS), false)
    }

    fn host_timeout(&self) -> Option<u64> {
        self.ends
            .iter()
            .filter_map(|e| match &e.dev {
                Device::Host(h) => h.next_timeout(),
                Device::Tun(_) => None,
            })
            .min()
    }

    fn run(mut self, stop: &AtomicBool) -> io::Result<ForwarderReport> {
        for e in &mut self.ends {
            if let Device::Host(h) = &mut e.dev {
                h.start(self.base_ns);
            }
        }
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        let timer = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        for (i, e) in self.ends.iter().enumerate() {
            if let Device::Tun(t) = &e.dev {
                epoll.add(t.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, i as u64))?;
            }
        }
        epoll.add(
            timer.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, TOKEN_TIMER),
        )?;
        let mut events = [EpollEvent::empty(); 8];
        let mut armed: Option<u64> = None;
        while !stop.load(Ordering::Relaxed) {
            self.transmit_due();
            self.deliver_due();
            self.service_hosts();
            self.transmit_due();
            self.deliver_due();
            let (next, spinning) = self.next_wake();
            if next != armed {
                match next {
                    Some(due) => {
                        let abs = self.base_ns + due;
                        let ts = TimeSpec::new(
                            (abs / 1_000_000_000) as i64,
                            (abs % 1_000_000_000) as i64,
                        );
                        timer.set(
                            Expiration::OneShot(ts),
                            TimerSetTimeFlags::TFD_TIMER_ABSTIME,
                        )?;
                    }
                    None => timer.unset()?,
                }
                armed = next;
            }
            let wait = if spinning {
                EpollTimeout::ZERO
            } else {
                EpollTimeout::from(TICK_MS)
            };
            let n = match epoll.wait(&mut events, wait) {
                Ok(n) => n,
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            };
            for ev in &events[..n] {
                match ev.data() {
                    TOKEN_TIMER => {
                        // The 8-byte expiration count of the timerfd, read to rearm it.
                        let _ = nix::unistd::read(timer.as_fd(), &mut [0u8; 8]);
                        armed = None;
                    }
                    end => self.drain(end as usize)?,
                }
            }
        }
        self.finish();
        Ok(self.report)
    }

    /// Reads every packet waiting at end `from`.
    fn drain(&mut self, from: usize) -> io::Result<()> {
        loop {
            let b = self.buffer();
            let Device::Tun(tun) = &self.ends[from].dev else {
                self.free.push(b);
                return Ok(());
            };
            let got = tun.recv(&mut self.pool[b as usize][..])?;
            let Some(len) = got else {
                self.free.push(b);
                return Ok(());
            };
            let now = self.now();
            self.last_read_ns = Some(now);
            self.admit(from, b, len, now);
            self.deliver_due();
        }
    }

    /// Offers the packet in buffer `b`, read from end `from` at `now`, to its link.
    fn admit(&mut self, from: usize, b: u32, len: usize, now: u64) {
        let pkt = &self.pool[b as usize][..len];
        let to = 1 - from;
        let view = match wire::parse(pkt) {
            Some(v)
                if len < BUF && v.src == self.ends[from].addr && v.dst == self.ends[to].addr =>
            {
                v
            }
            _ => {
                self.report.foreign += 1;
                self.free.push(b);
                return;
            }
        };
        if self.capture {
            self.report.captures[from].push((now, pkt.to_vec()));
        }
        let from_server = self.flows.from_server(&view).unwrap_or(from == 0);
        let meta = self.flows.place(&view, from_server);
        let ch = &mut self.channels[from];
        let admit = if ch.managed() {
            // RED, priority drop, acks-first: the queue reads the segment's bits,
            // may mark it CE, and a scheduled queue keeps the buffer as its slot.
            let mut seg = wire::queue_segment(pkt, &view);
            let ecn = seg.ecn;
            let admit = ch.admit_managed(now, view.len as usize, &meta, &mut seg, b);
            if seg.ecn != ecn {
                wire::set_ecn(&mut self.pool[b as usize][..len], seg.ecn);
            }
            admit
        } else {
            ch.admit(now, view.len as usize, &meta)
        };
        let log = self.report.log.len() as u32;
        self.report.log.push(LogEntry {
            t_ns: now,
            dir: from as u8,
            flow: meta.flow,
            rel_seq: meta.rel_seq,
            rel_ack: meta.rel_ack,
            payload: meta.payload,
            flags: view.flags,
            fate: match admit {
                Admit::DroppedLoss => Fate::DroppedLoss,
                Admit::DroppedQueue => Fate::DroppedQueue,
                Admit::DroppedPolicer => Fate::DroppedPolicer,
                Admit::Queued { .. } | Admit::Waiting { .. } => Fate::InFlight,
            },
            due_ns: 0,
            out_ns: 0,
            duplicate: false,
        });
        // Packets priority drop pushed out of the queue to make room.
        while let Some(victim) = self.channels[from].pop_evicted() {
            let (_, line) = self.queued[victim as usize];
            self.report.log[line as usize].fate = Fate::DroppedQueue;
            self.free.push(victim);
        }
        match admit {
            Admit::Queued { depart_ns } => self.depart(from, b, len, log, depart_ns),
            Admit::Waiting { wake_ns } => {
                if self.queued.len() <= b as usize {
                    self.queued.resize(self.pool.len(), (0, 0));
                }
                self.queued[b as usize] = (len as u32, log);
                if wake_ns.is_some() {
                    self.wake[from] = wake_ns;
                }
            }
            Admit::DroppedLoss | Admit::DroppedQueue | Admit::DroppedPolicer => self.free.push(b),
        }
    }

    /// Starts the waiting packets of scheduled queues whose transmitter is free.
    /// The link's timeline is kept exact: a packet starts when the previous one
    /// ended (the wake-up time), however late the loop got to it.
    fn transmit_due(&mut self) {
        if self.wake == [None; 2] {
            return; // no scheduled queue waits (always so under drop-tail and RED)
        }
        let now = self.now();
        for from in 0..2 {
            while let Some(t) = self.wake[from].filter(|&t| t <= now) {
                self.wake[from] = None;
                let Some(s) = self.channels[from].next_tx(t) else {
                    break;
                };
                self.wake[from] = s.wake_ns;
                let (len, log) = self.queued[s.slot as usize];
                self.depart(from, s.slot, len as usize, log, s.depart_ns);
            }
        }
    }

    /// The packet in buffer `b` (log line `log`) leaves end `from`'s link at
    /// `depart`: its propagation delay (reordering, duplication) makes it due at
    /// the other end.
    fn depart(&mut self, from: usize, b: u32, len: usize, log: u32, depart: u64) {
        let to = 1 - from;
        let payload = self.report.log[log as usize].payload;
        let (due, _held_back, dup) = self.channels[from].propagation(payload, depart);
        self.report.log[log as usize].due_ns = due;
        self.push(log, to, b, len);
        if dup {
            let c = self.buffer();
            let (src, dst) = if c > b {
                let (lo, hi) = self.pool.split_at_mut(c as usize);
                (&lo[b as usize], &mut hi[0])
            } else {
                let (lo, hi) = self.pool.split_at_mut(b as usize);
                (&hi[0], &mut lo[c as usize])
            };
            dst[..len].copy_from_slice(&src[..len]);
            let mut copy = self.report.log[log as usize];
            copy.duplicate = true;
            self.report.log.push(copy);
            self.push(self.report.log.len() as u32 - 1, to, c, len);
        }
    }

    fn push(&mut self, log: u32, to: usize, b: u32, len: usize) {
        self.pending.push(Reverse(Pending {
            due_ns: self.report.log[log as usize].due_ns,
            seq: self.next_seq,
            to: to as u8,
            buf: b,
            len: len as u32,
            log,
        }));
        self.next_seq += 1;
    }

    /// Writes every packet whose time has come.
    fn deliver_due(&mut self) {
        loop {
            let Some(&Reverse(p)) = self.pending.peek() else {
                return;
            };
            let now = self.now();
            if p.due_ns > now {
                return;
            }
            self.pending.pop();
            let pkt = &self.pool[p.buf as usize][..p.len as usize];
            let sent = match &mut self.ends[p.to as usize].dev {
                Device::Tun(t) => t.send(pkt).is_ok(),
                Device::Host(h) => {
                    h.receive(now, pkt);
                    true
                }
            };
            if !sent {
                self.report.write_errors += 1;
            } else {
                self.channels[1 - p.to as usize].stats.bytes_delivered += p.len as u64;
                let e = &mut self.report.log[p.log as usize];
                e.fate = Fate::Delivered;
                e.out_ns = now;
                self.lateness_us.push((now - p.due_ns) as f64 / 1e3);
                if self.capture {
                    self.report.captures[p.to as usize].push((now, pkt.to_vec()));
                }
            }
            self.free.push(p.buf);
            if matches!(self.ends[p.to as usize].dev, Device::Host(_)) {
                self.pump(p.to as usize);
            }
        }
    }

    fn finish(&mut self) {
        let now = self.now();
        self.report.ran_ns = now;
        if let Ok(t) = clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID) {
            self.report.cpu_ns = t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64;
        }
        self.report.base_ns = self.base_ns;
        for (i, c) in self.channels.iter_mut().enumerate() {
            c.stats.observed_ns = now;
            self.report.stats[i] = c.stats;
        }
        let l = &mut self.lateness_us;
        l.sort_by(f64::total_cmp);
        let pct = |q: f64| l[((l.len() - 1) as f64 * q).round() as usize];
        if !l.is_empty() {
            self.report.delay_error = DelayError {
                samples: l.len() as u64,
                p50_us: pct(0.5),
                p99_us: pct(0.99),
                max_us: *l.last().unwrap(),
            };
        }
        self.report.stats[0].delivered = self.count(0, Fate::Delivered);
        self.report.stats[1].delivered = self.count(1, Fate::Delivered);
    }

    fn count(&self, dir: u8, fate: Fate) -> u64 {
        self.report
            .log
            .iter()
            .filter(|e| e.dir == dir && e.fate == fate)
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivered(due_ms: f64, late_us: u64) -> LogEntry {
        let due_ns = (due_ms * 1e6) as u64;
        LogEntry {
            t_ns: 0,
            dir: 0,
            flow: 0,
            rel_seq: 0,
            rel_ack: 0,
            payload: 0,
            flags: 0,
            fate: Fate::Delivered,
            due_ns,
            out_ns: due_ns + late_us * 1000,
            duplicate: false,
        }
    }

    #[test]
    fn a_stall_counts_once_at_its_latest_and_stalls_add_up() {
        let mut log = vec![
            delivered(1.0, 10),
            // A 3 ms stall: four packets due in it go out together, the first
            // 3 ms late.
            delivered(2.0, 3000),
            delivered(2.5, 2500),
            delivered(3.0, 2000),
            delivered(4.9, 100),
            // Another, 1 ms.
            delivered(10.0, 1000),
            delivered(10.2, 800),
            delivered(11.0, 20),
            // After the cut-off.
            delivered(20.0, 5000),
        ];
        // Dropped packets have no delivery.
        let mut lost = delivered(5.0, 9000);
        lost.fate = Fate::DroppedLoss;
        log.push(lost);
        log.swap(0, 6); // the log is in order of arrival, not of delivery
        let r = ForwarderReport {
            log,
            ..ForwarderReport::default()
        };
        assert_eq!(r.stall_ns(15_000_000), 4_000_000);
        assert_eq!(r.stall_ns(u64::MAX), 9_000_000);
        // A late delivery at the cut-off counts.
        assert_eq!(r.stall_ns(5_000_000), 3_000_000);
        // Lateness at or below STALL_NS is jitter, not a stall.
        let r = ForwarderReport {
            log: vec![delivered(1.0, 250), delivered(2.0, 200)],
            ..ForwarderReport::default()
        };
        assert_eq!(r.stall_ns(u64::MAX), 0);
    }
}
