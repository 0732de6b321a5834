//! Runs a parsed script against one engine endpoint in virtual time, as
//! google/packetdrill's `run.c` and `run_packet.c` run one against a kernel: events
//! happen at their script times (`+T` counts from when the previous event ended,
//! `adjust_relative_event_times`), inbound packets are mapped from script to live
//! sequence space and injected, outbound packets are mapped back (relative to the
//! engine's ISN) and checked field by field, TCP options in order, then the time
//! within `--tolerance_usecs` (default 4000 µs, `config.c`).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;
use std::path::Path;

use gentle_tcp::{Connection, Instant, Segment};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

use super::ast::{Action, Event, Script, SyscallSpec, Time};
use super::sysctl::Sysctls;

/// The script peer's initial sequence number (the live value of script seq 0).
pub const PEER_ISN: u32 = 0x8000_0000;
pub(super) const DUT_PORT: u16 = 8080;
pub(super) const PEER_PORT: u16 = 49152;

/// A check that did not hold, as packetdrill reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The script line.
    pub line: usize,
    /// What differed.
    pub msg: String,
    /// The script's packet or return value.
    pub expected: Option<String>,
    /// The engine's.
    pub actual: Option<String>,
    /// Virtual time of the event, µs since the script began.
    pub time_us: i64,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.msg)?;
        if let Some(e) = &self.expected {
            write!(f, "\n  script: {e}")?;
        }
        if let Some(a) = &self.actual {
            write!(f, "\n  actual: {a}")?;
        }
        Ok(())
    }
}

/// Why an event stopped the script.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// An expectation failed.
    Fail(Failure),
    /// The script needs something the engine does not model (line, reason).
    Skip(usize, String),
}

/// Short for a result of an event.
pub type Step<T = ()> = Result<T, Stop>;

/// What a socket descriptor is.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum SockState {
    Fresh,
    Listening,
    /// The connection's descriptor.
    Conn,
}

#[derive(Clone, Debug)]
pub(super) struct Sock {
    pub state: SockState,
    pub nonblock: bool,
    /// Socket options that shape the next connection (TCP_MAXSEG, SO_RCVBUF, …).
    pub cfg: gentle_tcp::Config,
}

/// A packet the stack sent: when, the segment, its options' wire bytes if known.
pub(super) type Sent = (Instant, Segment, Option<Vec<u8>>);

/// A blocking call waiting (`blocking`): the call, its line, when it started and
/// should end (µs).
#[derive(Clone, Debug)]
pub(super) struct Blocked {
    pub call: SyscallSpec,
    pub line: usize,
    pub start: i64,
    pub end: i64,
}

/// The interpreter's state: the endpoint, its sockets and the virtual clock.
pub struct Runner<'a> {
    pub(super) path: &'a Path,
    pub(super) sys: Sysctls,
    pub(super) tolerance_us: i64,
    /// `--tolerance_percent`: a timing check also allows this share of the time
    /// since the previous event (packetdrill's default 12.5, `config.c`: "the worst
    /// case inaccuracy" of Linux's timer wheel).
    pub(super) tolerance_percent: f64,
    /// The previous event's script time (µs).
    pub(super) last_event_us: Option<i64>,
    /// A blocking call waiting for what it needs.
    pub(super) blocked: Option<Blocked>,
    /// Variables `%{ }%` blocks assigned.
    pub(super) py_vars: HashMap<String, i128>,
    pub(super) now: Instant,
    /// When the current event happens (µs), for reports.
    pub(super) event_us: i64,
    pub(super) line: usize,
    pub(super) conn: Option<Connection>,
    /// The descriptor the connection was accepted or connected on.
    pub(super) conn_fd: Option<i32>,
    pub(super) listener: Option<i32>,
    pub(super) socks: BTreeMap<i32, Sock>,
    pub(super) next_fd: i32,
    /// What the stack sent, not yet matched: when, the segment, and its TCP
    /// options as they were on the wire when the stack is the kernel (the engine's
    /// are its own serialisation).
    pub(super) out: VecDeque<Sent>,
    pub(super) dut_iss: u32,
    /// Outbound TS val in script space → live, and the first pair (`run_packet.c`).
    pub(super) ts_map: HashMap<u32, u32>,
    pub(super) ts_first: Option<(u32, u32)>,
    /// `--tcp_ts_tick_usecs`: outbound TS vals are checked, one tick being this
    /// many µs (packetdrill leaves them unchecked without it).
    pub(super) ts_tick_us: Option<i64>,
    /// Bytes the application read from the engine but not yet from the script.
    pub(super) unread: Vec<u8>,
    pub(super) rd_shut: bool,
    pub(super) rng: ChaCha8Rng,
    /// Leave the PSH flag of outbound packets unchecked.
    pub ignore_psh: bool,
    /// Outbound (`>`) lines still to come: packetdrill finds a packet nobody
    /// expected only when a later `>` line sniffs it first.
    pub(super) outbound_left: usize,
    /// What runs the script, for messages: "engine" or "kernel".
    pub(super) stack: &'static str,
    /// Join contiguous outbound packets into a script's longer one whenever they
    /// were sent (packetdrill's aggregation, for a kernel's packets), not only
    /// those sent at one instant (the engine's segments of one TSO burst).
    pub(super) aggregate_across_time: bool,
    /// `tcp_info` of the kernel's socket at a `%{ }%` block (`tcpi_` name, value);
    /// `None` when the engine is the stack.
    pub(super) kernel_info: Option<Vec<(&'static str, i128)>>,
}

pub(super) fn us(i: Instant) -> i64 {
    (i.as_nanos() / 1000) as i64
}

pub(super) fn secs(t_us: i64) -> String {
    format!("{:.6}", t_us as f64 / 1e6)
}

impl<'a> Runner<'a> {
    /// A runner for the script at `path` with `sys` as its starting switches.
    pub fn new(path: &'a Path, sys: Sysctls) -> Self {
        Runner {
            path,
            sys,
            tolerance_us: 4000,
            tolerance_percent: 12.5,
            last_event_us: None,
            blocked: None,
            py_vars: HashMap::new(),
            now: Instant::ZERO,
            event_us: 0,
            line: 0,
            conn: None,
            conn_fd: None,
            listener: None,
            socks: BTreeMap::new(),
            next_fd: 3,
            out: VecDeque::new(),
            dut_iss: 0,
            ts_map: HashMap::new(),
            ts_first: None,
            ts_tick_us: None,
            unread: Vec::new(),
            rd_shut: false,
            rng: ChaCha8Rng::seed_from_u64(1),
            ignore_psh: false,
            outbound_left: 0,
            stack: "engine",
            aggregate_across_time: false,
            kernel_info: None,
        }
    }

    pub(super) fn fail(&self, msg: impl Into<String>) -> Stop {
        Stop::Fail(Failure {
            line: self.line,
            msg: msg.into(),
            expected: None,
            actual: None,
            time_us: self.event_us,
        })
    }

    pub(super) fn skip(&self, why: impl Into<String>) -> Stop {
        Stop::Skip(self.line, why.into())
    }

    /// Applies the script's `--name=value` options.
    fn options(&mut self, s: &Script) -> Step {
        for (name, v, line) in &s.options {
            self.line = *line;
            match name.as_str() {
                "tolerance_usecs" => {
                    self.tolerance_us = v.parse().map_err(|_| self.skip("bad --tolerance_usecs"))?
                }
                // The engine's TS clock ticks once a millisecond, as Linux's.
                "tcp_ts_tick_usecs" if v == "1000" => self.ts_tick_us = Some(1000),
                // packetdrill's default: TS vals unchecked.
                "tcp_ts_tick_usecs" if v == "0" => self.ts_tick_us = None,
                "ip_version" if v == "ipv4" || v == "ipv4-mapped-ipv6" || v == "ipv6" => {}
                // The parser has checked it is a number from 0 to 100.
                "tolerance_percent" => {
                    self.tolerance_percent = v
                        .parse()
                        .map_err(|_| self.skip(format!("bad --tolerance_percent: {v}")))?
                }
                "mss" | "mtu" if v == "0" => {}
                _ if v.is_empty() => return Err(self.skip(format!("option --{name} not modelled"))),
                _ => return Err(self.skip(format!("option --{name}={v} not modelled"))),
            }
        }
        Ok(())
    }

    /// Before the first event, whichever stack runs the script: its options, and
    /// how many `>` lines it has.
    pub(super) fn start(&mut self, s: &Script) -> Step {
        self.options(s)?;
        self.outbound_left = s
            .events
            .iter()
            .filter(|e| matches!(&e.action, Action::Packet(p) if p.outbound))
            .count();
        Ok(())
    }

    /// Runs every event; `Ok` when the script passed.
    pub fn run(&mut self, s: &Script) -> Step {
        self.start(s)?;
        for ev in &s.events {
            self.line = ev.line;
            self.event(ev)?;
            self.resume_blocked()?;
        }
        // As packetdrill (`run_script`), what the engine sends after the last `>`
        // line is not checked; a call still blocked is awaited a second
        // (`syscalls_free`, `await_idle_thread`) and fails the script if it
        // does not return.
        if let Some(b) = &self.blocked {
            let line = b.line;
            self.advance(self.now + std::time::Duration::from_secs(1));
            self.resume_blocked()?;
            if self.blocked.is_some() {
                return Err(self.fail(format!(
                    "exiting while a blocking system call is in progress (the call of line {line})"
                )));
            }
        }
        Ok(())
    }

    /// The event's nominal time and its window `[lo, hi]` (µs, tolerance not added).
    pub(super) fn when(&self, t: Time) -> (i64, i64) {
        let now = us(self.now);
        match t {
            Time::Absolute(a) => (a, a),
            Time::Relative(d) => (now + d, now + d),
            Time::AbsoluteRange(a, b) => (a, b),
            Time::RelativeRange(a, b) => (now + a, now + b),
            Time::Any => (now, i64::MAX / 4),
        }
    }

    fn event(&mut self, ev: &Event) -> Step {
        let (lo, hi) = self.when(ev.time);
        self.event_us = lo;
        let r = self.event_at(ev, lo, hi);
        self.last_event_us = Some(lo);
        r
    }

    /// The timing tolerance of an event at `lo` (µs): `--tolerance_usecs`, or the
    /// share `--tolerance_percent` of the time since the previous event if larger
    /// (packetdrill `verify_time`).
    pub(super) fn tolerance_at(&self, lo: i64) -> i64 {
        self.tolerance_over(self.last_event_us.map_or(0, |prev| lo - prev))
    }

    /// `--tolerance_usecs`, or the share `--tolerance_percent` of `span` (µs) if
    /// larger.
    pub(super) fn tolerance_over(&self, span: i64) -> i64 {
        let dynamic = (span as f64 * self.tolerance_percent / 100.0) as i64;
        self.tolerance_us.max(dynamic)
    }

    fn event_at(&mut self, ev: &Event, lo: i64, hi: i64) -> Step {
        if let Action::Packet(p) = &ev.action
            && p.outbound
        {
            self.outbound_left -= 1;
            return self.outbound(p, ev.time, lo, hi);
        }
        // What the engine sends before this event (timers on the way included)
        // waits for the next `>` line, which takes it first and fails unless it
        // matches (packetdrill `sniff_outbound_live_packet`: a packet sent early
        // is checked against that line's time and tolerance).
        self.advance(Instant::from_nanos(lo.max(0) as u64 * 1000));
        match &ev.action {
            Action::Packet(p) => self.inbound(p),
            Action::Syscall(c) if self.hold_if_blocking(ev, c, lo) => Ok(()),
            Action::Syscall(c) => self.syscall(c),
            Action::Command(c) => {
                let path = self.path;
                self.sys.command(c, path).map_err(|r| self.skip(r))
            }
            Action::Code(c) => self.code(c),
            Action::Unsupported(what) => Err(self.skip(format!("{what} not modelled"))),
        }
    }

    /// Collects what the engine sends now.
    pub(super) fn drain(&mut self) {
        let now = self.now;
        if let Some(c) = self.conn.as_mut() {
            while let Some(seg) = c.poll_transmit(now) {
                self.out.push_back((now, seg, None));
            }
        }
    }

    /// Moves time to `target`, firing timers at their deadlines on the way.
    pub(super) fn advance(&mut self, target: Instant) {
        while let Some(d) = self.conn.as_ref().and_then(|c| c.poll_timeout()) {
            if d > target {
                break;
            }
            self.now = self.now.max(d);
            let now = self.now;
            if let Some(c) = self.conn.as_mut() {
                c.handle_timeout(now);
            }
            self.drain();
        }
        self.now = self.now.max(target);
    }

    /// Moves time on until the engine sends something or `limit` passes.
    pub(super) fn advance_until_sent(&mut self, limit: Instant) {
        while self.out.is_empty() {
            match self.conn.as_ref().and_then(|c| c.poll_timeout()) {
                Some(d) if d <= limit => {
                    self.now = self.now.max(d);
                    let now = self.now;
                    if let Some(c) = self.conn.as_mut() {
                        c.handle_timeout(now);
                    }
                    self.drain();
                }
                _ => return,
            }
        }
    }
}
