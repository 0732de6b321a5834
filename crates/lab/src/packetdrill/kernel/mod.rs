//! `gentle packetdrill --kernel`: a script against the host's kernel TCP, as
//! google/packetdrill runs one (`netdev.c`, `run.c`). The kernel runs in a network
//! namespace of its own, behind a TUN device `tun0` that offloads as an Ethernet
//! device does (`TUN_F_CSUM | TUN_F_TSO4`, so its TSO packets arrive whole, as
//! packetdrill sniffs them), with the address 192.168.0.2 and the script's peer at
//! 192.0.2.1 (packetdrill's defaults, `config.c`). Events happen at their script
//! times in real time: `<` packets are written into the TUN, `>` lines are matched
//! against what the kernel writes to it, syscalls act on real sockets (`calls`),
//! `sysctl` commands are written in the namespace, and `%{ }%` blocks are evaluated
//! on the socket's `TCP_INFO`. The script-space mapping, the matching and the
//! messages are the engine runner's (`run`, `packet`): both stacks are judged by
//! one copy of packetdrill's rules.

mod calls;
mod sniff;

use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gentle_real::netns::Netns;
use gentle_real::tun::{Tun, TunAddr, VNET_HDR_LEN};
use gentle_tcp::wire::Ecn;
use gentle_tcp::{Config, Instant, Segment};

use super::ast::{Action, Event, PacketSpec, Script, Time};
use super::run::{DUT_PORT, PEER_PORT, Runner, Step, Stop};
use super::sysctl::Sysctls;
use super::{Outcome, parser};

/// The kernel's address on `tun0` (in packetdrill's 192.168.0.0/16).
pub const LOCAL_IP: Ipv4Addr = Ipv4Addr::new(192, 168, 0, 2);
/// The script's peer (packetdrill's `live_remote_ip`).
pub const REMOTE_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// A new namespace copies the host's socket buffer limits, which hosts often
/// tune (the window scale a SYN offers follows `tcp_rmem`'s maximum); the
/// namespace gets Linux's own defaults instead (`tcp_init` on a machine of a few
/// GB and more: 6 MB of receive buffer at most, wscale 7), as the engine's
/// profiles have them. Every other TCP sysctl of a new namespace already starts
/// at the kernel's default (`tcp_sk_init`).
const LINUX_BUFFERS: [(&str, &str); 2] = [
    ("net/ipv4/tcp_rmem", "4096 131072 6291456"),
    ("net/ipv4/tcp_wmem", "4096 16384 4194304"),
];
/// How long past an outbound line's window (and its tolerance) the kernel may
/// still send the packet before the line fails for want of one.
const SNIFF_GRACE_US: i64 = 1_000_000;
/// How long a `>` line at time `*` waits.
const ANY_TIME_WAIT_US: i64 = 10_000_000;
/// The largest packet a TSO device takes, and the virtio header before it.
const PACKET_BUF: usize = VNET_HDR_LEN + 65_536;

/// Checks, before any script runs, that this process can make what `--kernel`
/// needs: a network namespace and a TUN device in it.
pub fn check_environment() -> Result<(), String> {
    let ns = Netns::new("packetdrill-check").map_err(|e| e.to_string())?;
    ns.run(|| {
        Tun::create_offloading("tun0", tun_addr())
            .map(drop)
            .map_err(|e| e.to_string())
    })
}

fn tun_addr() -> TunAddr {
    TunAddr {
        local: LOCAL_IP,
        peer: REMOTE_IP,
        mtu: 1500,
    }
}

/// For the length of a `--kernel` run, the congestion controls the scripts need
/// are allowed as a namespace's default (`net.ipv4.tcp_allowed_congestion_control`
/// is the host's, shared by every namespace; the suites' `defaults.sh` makes
/// CUBIC the default, which a host that defaults to BBR may not allow). What was
/// there is written back when this is dropped.
pub struct AllowedCc {
    before: Option<String>,
}

const ALLOWED_CC: &str = "net/ipv4/tcp_allowed_congestion_control";

impl AllowedCc {
    /// Adds those of `names` the host does not allow yet, saying so on stderr.
    pub fn ensure(names: &[&str]) -> Result<AllowedCc, String> {
        let before = gentle_real::sysctl::read(ALLOWED_CC).map_err(|e| e.to_string())?;
        let mut list: Vec<&str> = before.split_whitespace().collect();
        let mut missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !list.contains(n))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return Ok(AllowedCc { before: None });
        }
        list.extend(&missing);
        gentle_real::sysctl::write(ALLOWED_CC, &list.join(" ")).map_err(|e| e.to_string())?;
        eprintln!(
            "note: net.ipv4.tcp_allowed_congestion_control is `{}` for this run (was `{before}`; restored after)",
            list.join(" ")
        );
        Ok(AllowedCc {
            before: Some(before),
        })
    }
}

impl Drop for AllowedCc {
    fn drop(&mut self) {
        if let Some(b) = &self.before
            && let Err(e) = gentle_real::sysctl::write(ALLOWED_CC, b)
        {
            eprintln!(
                "error: could not restore net.ipv4.tcp_allowed_congestion_control to `{b}`: {e}"
            );
        }
    }
}

/// Runs the script at `path` against the kernel. `cfg` gives the congestion
/// control of its sockets (the profile's, as the engine runs it); every other
/// setting is the kernel's own default for a new namespace, then the script's
/// sysctls.
///
/// The congestion control is set on each socket as it is made (root may choose
/// any the kernel has): a new namespace inherits the host's default (BBR on many
/// hosts). A script's own `sysctl net.ipv4.tcp_congestion_control=NAME` line
/// names the congestion control of the sockets made after it.
pub fn run_script(path: &Path, cfg: &Config, ignore_psh: bool) -> Outcome {
    match std::fs::read_to_string(path) {
        Ok(src) => run_source(path, &src, cfg, ignore_psh),
        Err(e) => Outcome::Bad(0, 0, format!("cannot read: {e}")),
    }
}

/// Runs a script's text against the kernel (`path` names it, and its directory
/// is where its commands run).
pub fn run_source(path: &Path, src: &str, cfg: &Config, ignore_psh: bool) -> Outcome {
    let script = match parser::parse(src) {
        Ok(s) => s,
        Err(e) => return Outcome::Bad(e.line, e.col, e.msg),
    };
    let ns = match Netns::new("packetdrill") {
        Ok(ns) => ns,
        Err(e) => return Outcome::Skip(0, format!("no namespace for the kernel: {e}")),
    };
    let (path, cfg) = (path.to_path_buf(), cfg.clone());
    ns.run(move || run_in_namespace(&path, &script, &cfg, ignore_psh))
}

fn run_in_namespace(path: &Path, script: &Script, cfg: &Config, ignore_psh: bool) -> Outcome {
    realtime_priority();
    let setup = Tun::create_offloading("tun0", tun_addr()).and_then(|tun| {
        for (k, v) in LINUX_BUFFERS {
            gentle_real::sysctl::write(k, v)?;
        }
        Ok((tun, sniff::Sniffer::open("tun0")?))
    });
    let (tun, sniffer) = match setup {
        Ok(t) => t,
        Err(e) => return Outcome::Skip(0, format!("cannot set up the kernel's device: {e}")),
    };
    let mut k = KernelRun::new(path, tun, sniffer, cfg);
    k.r.ignore_psh = ignore_psh;
    let r = k.run(script);
    k.calls.shut_down();
    match r {
        Ok(()) => Outcome::Pass,
        Err(Stop::Fail(f)) => Outcome::Fail(f),
        Err(Stop::Skip(line, why)) => Outcome::Skip(line, why),
    }
}

/// Gives the calling thread, and the threads it starts (the blocking calls'),
/// real-time priority (`SCHED_FIFO`) where the host allows it. The kernel's
/// timers fire on time however busy the host is, but a runner that sleeps until
/// a script time would otherwise wake when the scheduler next has room: on a
/// loaded host an inbound packet went in milliseconds late, the kernel measured
/// the longer RTT, and its timers then missed the script's. The runner sleeps
/// between events, so it never holds a core; without the privilege the run goes
/// on at normal priority. The namespace's thread ends with the script.
fn realtime_priority() {
    /// Low among real-time priorities (1-99): above every normal thread, below
    /// the kernel's own real-time threads.
    const PRIORITY: libc::c_int = 10;
    let param = libc::sched_param {
        sched_priority: PRIORITY,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
}

/// One script's run against the kernel: the script's interpreter state (`r`,
/// without an engine), the device and the sockets.
struct KernelRun<'a> {
    r: Runner<'a>,
    tun: Tun,
    sniffer: sniff::Sniffer,
    /// Real time at script time 0, on the monotonic clock and on the clock of
    /// the packet socket's timestamps.
    start: std::time::Instant,
    start_wall: std::time::SystemTime,
    buf: Vec<u8>,
    /// The connection's ports: the kernel's and the script peer's.
    ports: (u16, u16),
    /// The congestion control new sockets get.
    cc: String,
    calls: calls::Calls,
    script_dir: PathBuf,
}

impl<'a> KernelRun<'a> {
    fn new(path: &'a Path, tun: Tun, sniffer: sniff::Sniffer, cfg: &Config) -> Self {
        let mut r = Runner::new(path, Sysctls::new(cfg.clone()));
        r.stack = "kernel";
        r.aggregate_across_time = true;
        KernelRun {
            r,
            tun,
            sniffer,
            start: std::time::Instant::now(),
            start_wall: std::time::SystemTime::now(),
            buf: vec![0; PACKET_BUF],
            ports: (DUT_PORT, PEER_PORT),
            cc: cfg.cc.name().to_ascii_lowercase(),
            calls: calls::Calls::default(),
            script_dir: match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            },
        }
    }

    /// Script time now (µs).
    fn now_us(&self) -> i64 {
        self.start.elapsed().as_micros() as i64
    }

    fn run(&mut self, s: &Script) -> Step {
        self.r.start(s)?;
        // packetdrill's init command: the commands before the first timed event
        // run before the script's clock starts.
        let init = s
            .events
            .iter()
            .take_while(|e| {
                matches!(e.action, Action::Command(_))
                    && matches!(e.time, Time::Relative(0) | Time::Absolute(0))
            })
            .count();
        for ev in &s.events[..init] {
            self.r.line = ev.line;
            if let Action::Command(c) = &ev.action {
                self.command(c)?;
            }
        }
        self.start = start_time();
        let ahead = self
            .start
            .saturating_duration_since(std::time::Instant::now());
        self.start_wall = std::time::SystemTime::now() + ahead;
        let mut last_inbound = None;
        for ev in &s.events[init..] {
            self.r.line = ev.line;
            // `adjust_relative_event_times`: a relative time counts from the
            // previous event's script time when both are inbound packets, and
            // from now otherwise.
            let inbound = matches!(&ev.action, Action::Packet(p) if !p.outbound);
            let base = match last_inbound {
                Some(t) if inbound => t,
                _ => self.now_us(),
            };
            self.r.now = instant(base);
            let (lo, hi) = self.r.when(ev.time);
            last_inbound = inbound.then_some(lo);
            self.r.event_us = lo;
            let r = self.event(ev, lo, hi);
            self.r.last_event_us = Some(lo);
            r?;
            self.finish_blocked()?;
        }
        self.await_blocked("exiting while a blocking system call is in progress")
    }

    fn event(&mut self, ev: &Event, lo: i64, hi: i64) -> Step {
        if let Action::Packet(p) = &ev.action
            && p.outbound
        {
            self.r.outbound_left -= 1;
            let limit = match ev.time {
                Time::Any => self.now_us().max(lo) + ANY_TIME_WAIT_US,
                _ => hi + self.r.tolerance_at(lo) + SNIFF_GRACE_US,
            };
            self.sniff_until(limit, Some(p.len))?;
            return self.r.outbound(p, ev.time, lo, hi);
        }
        self.sniff_until(lo, None)?;
        self.r.now = self.r.now.max(instant(lo));
        match &ev.action {
            Action::Packet(p) => self.inject(p),
            Action::Syscall(c) => self.syscall(c, ev, lo),
            Action::Command(c) => self.command(c),
            Action::Code(c) => {
                let info = self.calls.tcp_info().map_err(|e| self.r.fail(e))?;
                self.r.kernel_info = Some(info);
                self.r.code(c)
            }
            Action::Unsupported(what) => Err(self.r.skip(format!("{what} not supported"))),
        }
    }

    /// Reads what the kernel sends until script time `limit_us`, or, with
    /// `want`, until it has sent a packet and, from the first unmatched one on,
    /// `want` bytes of payload.
    fn sniff_until(&mut self, limit_us: i64, want: Option<u32>) -> Step {
        loop {
            while let Some((n, sent)) = self.sniffer.recv(&mut self.buf).map_err(|e| {
                self.r
                    .fail(format!("reading the kernel's packets on tun0: {e}"))
            })? {
                let at = match sent.duration_since(self.start_wall) {
                    Ok(d) => d.as_micros() as i64,
                    Err(e) => -(e.duration().as_micros() as i64),
                };
                self.take_packet(n, at);
            }
            // The device's own queue, read and dropped.
            while let Ok(Some(_)) = self.tun.recv(&mut self.buf) {}
            if let Some(w) = want {
                let sent: u32 = self.r.out.iter().map(|s| s.1.payload.len() as u32).sum();
                if !self.r.out.is_empty() && sent >= w {
                    return Ok(());
                }
            }
            let left = limit_us - self.now_us();
            if left <= 0 {
                return Ok(());
            }
            wait_readable(&self.sniffer, Duration::from_micros(left as u64));
        }
    }

    /// Files one packet the kernel sent (`n` bytes in `buf`, an IP packet),
    /// stamped `at` (script µs). Anything but IPv4 TCP to the peer (IPv6, ICMP)
    /// is not the script's and is dropped.
    fn take_packet(&mut self, n: usize, at: i64) {
        let ip = &self.buf[..n];
        if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 6 || ip[16..20] != REMOTE_IP.octets() {
            return;
        }
        let ihl = (ip[0] & 0xf) as usize * 4;
        let total = (u16::from_be_bytes([ip[2], ip[3]]) as usize).min(ip.len());
        let Some(tcp) = ip.get(ihl..total) else {
            return;
        };
        let Ok(mut seg) = Segment::parse(tcp) else {
            return;
        };
        seg.ecn = Ecn::from_bits(ip[1]);
        let doff = (tcp[12] >> 4) as usize * 4;
        let raw = tcp.get(20..doff).map(<[u8]>::to_vec);
        if seg.flags.syn() {
            // The kernel's ISN, and its port when it connects.
            self.r.dut_iss = seg.seq;
            self.ports = (seg.src_port, seg.dst_port);
        }
        self.r.out.push_back((instant(at), seg, raw));
    }

    /// Writes an inbound line's packet into the TUN.
    fn inject(&mut self, p: &PacketSpec) -> Step {
        let mut seg = self.r.inbound_segment(p)?;
        (seg.dst_port, seg.src_port) = self.ports;
        let mut pkt = vec![0u8; VNET_HDR_LEN + 20 + seg.wire_len()];
        let ident = self.r.line as u16;
        seg.emit_ipv4(
            REMOTE_IP.octets(),
            LOCAL_IP.octets(),
            ident,
            &mut pkt[VNET_HDR_LEN..],
        )
        .map_err(|e| self.r.fail(format!("cannot build the packet: {e}")))?;
        self.tun
            .send(&pkt)
            .map_err(|e| self.r.fail(format!("writing the packet into tun0: {e}")))
    }

    /// A back-quoted command: `sysctl` settings are written in the namespace,
    /// anything else runs in `sh` from the script's directory (packetdrill runs
    /// them with `system`), inside the namespace.
    fn command(&mut self, cmd: &str) -> Step {
        let joined = cmd.replace("\\\n", " ");
        let sysctls: Option<Vec<(String, String)>> = sysctl_settings(&joined);
        if let Some(settings) = sysctls {
            for (k, v) in settings {
                if k == "net.ipv4.tcp_congestion_control" {
                    self.cc = v;
                    continue;
                }
                gentle_real::sysctl::write(&k.replace('.', "/"), &v)
                    .map_err(|e| self.r.fail(format!("command `{}`: {e}", cmd.trim())))?;
            }
            return Ok(());
        }
        // `-e`: a line that fails (a qdisc this kernel lacks) fails the command
        // there, rather than the script later for want of what it set up.
        let out = std::process::Command::new("sh")
            .arg("-e")
            .arg("-c")
            .arg(&joined)
            .current_dir(&self.script_dir)
            // The suites' scripts name their restore files after it.
            .env("PACKETDRILL_PID", std::process::id().to_string())
            .output()
            .map_err(|e| self.r.fail(format!("command `{}`: {e}", cmd.trim())))?;
        if !out.status.success() {
            return Err(self.r.fail(format!(
                "command `{}` failed ({}): {}",
                cmd.trim(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(())
    }
}

/// `sysctl [-q] [-w] key=value…` lines only: their settings; `None` for any
/// other command.
fn sysctl_settings(cmd: &str) -> Option<Vec<(String, String)>> {
    let mut v = Vec::new();
    for line in cmd.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut words = line.split_whitespace();
        if words.next()? != "sysctl" {
            return None;
        }
        for w in words {
            if w.starts_with('-') {
                if w != "-q" && w != "-w" {
                    return None;
                }
                continue;
            }
            let (k, val) = w.split_once('=')?;
            v.push((k.to_string(), val.trim_matches('"').to_string()));
        }
    }
    Some(v)
}

/// When the script's clock starts: as packetdrill's `schedule_start_time_usecs`,
/// just after the tenth tick of the process clock (`times`, 100 Hz) and 250 µs
/// past it, so that the script's events sit at the same place between the
/// kernel's timer ticks run after run.
fn start_time() -> std::time::Instant {
    const TICKS: u32 = 10;
    const OFFSET: Duration = Duration::from_micros(250);
    // SAFETY: times(2) accepts a null buffer and returns the clock.
    let clock = || unsafe { libc::times(std::ptr::null_mut()) };
    let (mut last, mut ticks) = (clock(), 0);
    let mut at = std::time::Instant::now();
    while ticks < TICKS {
        let now = clock();
        if now != last {
            at = std::time::Instant::now();
            ticks += 1;
        }
        last = now;
    }
    at + OFFSET
}

fn instant(us: i64) -> Instant {
    Instant::from_nanos(us.max(0) as u64 * 1000)
}

/// Waits until `fd` has a packet to read or `d` passes (`ppoll`: the wait is
/// as fine as the kernel's high-resolution timers, not whole milliseconds).
fn wait_readable(fd: &impl AsRawFd, d: Duration) {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one pollfd we own, a timespec we own, no signal mask.
    unsafe {
        libc::ppoll(&mut pfd, 1, &ts, std::ptr::null());
    }
}
