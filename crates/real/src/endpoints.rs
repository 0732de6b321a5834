//! Kernel TCP endpoints: the server and client applications of a trial, on std
//! sockets inside the namespaces, running the workload the scenario describes.
//!
//! The plan of a trial is fixed before it starts (sizes drawn from the seeded
//! workload streams): which connections open, from which client port (connection
//! k binds `CLIENT_PORT_BASE + k`, so the forwarder numbers connections without
//! looking at timing), and what each exchange sends. The server looks up the
//! plan of a connection by its client port, so nothing but the payload bytes the
//! scenario asks for crosses the link.
//!
//! Every socket pins the variant's congestion control and sets `TCP_NODELAY` (a
//! response is written at once, as Web servers do; Nagle would hold back its last
//! segment). Every blocking call is bounded by the trial's deadline.
//!
//! Times are measured by the applications on the monotonic clock: the client from
//! its first packet (connect, or the request write) to the last response byte read
//! (`client_ns`) and to the server's FIN (`fin_ns`); the server from the last
//! request byte read to the moment no byte is left unacknowledged (`SIOCOUTQ`
//! polled every 100 µs: `server_ns`). After each exchange the server samples
//! `TCP_INFO`.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, SockaddrIn, sockopt};
use serde::Serialize;

use crate::tcpinfo::{self, TcpInfo};
use crate::topology::{CLIENT_ADDR, SERVER_ADDR};

/// Client ports: connection k binds `CLIENT_PORT_BASE + k`.
pub const CLIENT_PORT_BASE: u16 = 20000;
/// Byte of the response pattern: every response byte is this one, whoever sends
/// it (these kernel endpoints, the engine host and its HTTP responder).
pub(crate) const PATTERN: u8 = b'g';
/// How often the server looks whether its response is all acknowledged.
const ACK_POLL: Duration = Duration::from_micros(100);
/// Longest a blocking call waits before looking at the stop flag.
const SLICE: Duration = Duration::from_millis(50);

/// The monotonic clock, ns.
pub fn now_ns() -> u64 {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("monotonic");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// One exchange of a connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExchangePlan {
    /// Its index within its workload.
    pub index: u32,
    pub request: u64,
    pub response: u64,
    /// When it starts, from the trial's start (`None`: `think` after the previous
    /// one ends, or at once for the first).
    pub at: Option<Duration>,
}

/// One connection of the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConnPlan {
    /// The connection index (its client port is `CLIENT_PORT_BASE + index`).
    pub index: u32,
    pub workload: u16,
    pub port: u16,
    pub exchanges: Vec<ExchangePlan>,
    /// The server closes after each response (HTTP/1.0 style).
    pub server_close: bool,
    /// Cross traffic: the server sends until the trial ends.
    pub endless: bool,
    /// The server is in the client namespace and the client in the server
    /// namespace (a workload the other way round).
    pub reversed: bool,
    /// The server writes these amounts at these offsets from the connection's
    /// establishment (scripted writes), instead of answering requests.
    pub writes: Vec<(Duration, u64)>,
}

/// A sequence of connections one client runs in turn, with think time between
/// exchanges (a fresh connection per exchange, or one persistent connection).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClientScript {
    pub workload: u16,
    pub start: Duration,
    pub think: Duration,
    /// The handshake counts in the first exchange's client time.
    pub fresh: bool,
    pub conns: Vec<ConnPlan>,
    /// Its records count in the report.
    pub measured: bool,
    /// A page: the scripts of one workload with the same `page` make one page load.
    pub page: Option<u16>,
}

/// What one exchange measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ExchangeResult {
    pub workload: u16,
    pub index: u32,
    pub conn: u32,
    pub request: u64,
    pub response: u64,
    pub complete: bool,
    pub reset: bool,
    /// Client: first packet, last response byte, FIN, ns on the monotonic clock.
    pub client_start: u64,
    pub client_end: Option<u64>,
    pub fin_at: Option<u64>,
    /// Server: last request byte read, response acknowledged.
    pub server_start: Option<u64>,
    pub server_end: Option<u64>,
    /// The server's `TCP_INFO` before the exchange and once it was acknowledged.
    pub info_before: Option<TcpInfo>,
    pub info_after: Option<TcpInfo>,
    /// The engine's counters before the exchange and once it was acknowledged,
    /// when gentle's engine was the server (`gentle serve`).
    pub engine_before: Option<gentle_tcp::Counters>,
    pub engine_after: Option<gentle_tcp::Counters>,
}

/// Everything the endpoints of a trial measured.
#[derive(Debug, Default)]
pub struct Measured {
    pub exchanges: Vec<ExchangeResult>,
    /// Page loads: (workload, first SYN, last byte) per page.
    pub pages: Vec<(u16, u64, Option<u64>, u64)>,
}

/// The sockets' settings.
#[derive(Clone, Debug)]
pub struct SocketSettings {
    pub cc: String,
}

fn setup(sock: &impl AsFd, s: &SocketSettings) -> io::Result<()> {
    tcpinfo::set_congestion(sock, &s.cc)?;
    socket::setsockopt(sock, sockopt::TcpNoDelay, &true)?;
    Ok(())
}

/// A listening server for one port, in the calling thread's namespace (the server
/// namespace's): accepts until `stop`, serving each connection by its plan.
pub fn serve(
    addr: std::net::Ipv4Addr,
    port: u16,
    plans: Arc<Vec<ConnPlan>>,
    settings: SocketSettings,
    stop: Arc<AtomicBool>,
    out: Arc<Mutex<Measured>>,
) -> io::Result<std::thread::JoinHandle<()>> {
    let listener = TcpListener::bind(SocketAddrV4::new(addr, port))?;
    // Connections inherit the listener's congestion control.
    tcpinfo::set_congestion(&listener, &settings.cc)?;
    listener.set_nonblocking(true)?;
    std::thread::Builder::new()
        .name(format!("server-{port}"))
        .spawn(move || {
            let mut workers = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((s, peer)) => {
                        let k = peer.port().wrapping_sub(CLIENT_PORT_BASE) as u32;
                        let Some(plan) = plans
                            .iter()
                            .find(|p| p.index == k && p.port == port)
                            .cloned()
                        else {
                            continue; // not a connection of the plan: closed
                        };
                        let (stop, out, settings) = (stop.clone(), out.clone(), settings.clone());
                        workers.push(std::thread::spawn(move || {
                            let _ = serve_conn(s, &plan, &settings, &stop, &out);
                        }));
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(_) => break,
                }
            }
            for w in workers {
                let _ = w.join();
            }
        })
}

/// Reads exactly `n` bytes, looking at `stop` between slices.
fn read_exact(
    s: &mut TcpStream,
    mut n: u64,
    stop: &AtomicBool,
    buf: &mut [u8],
) -> io::Result<bool> {
    while n > 0 {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let want = buf.len().min(n as usize);
        match s.read(&mut buf[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(k) => n -= k as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Writes `n` bytes of the pattern, looking at `stop` between slices.
fn write_n(s: &mut TcpStream, mut n: u64, stop: &AtomicBool, buf: &[u8]) -> io::Result<bool> {
    while n > 0 {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let k = buf.len().min(n as usize);
        match s.write(&buf[..k]) {
            Ok(w) => n -= w as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Waits until every byte written is acknowledged.
fn wait_acked(s: &TcpStream, stop: &AtomicBool) -> io::Result<bool> {
    loop {
        if tcpinfo::unacked_bytes(s)? == 0 {
            return Ok(true);
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        std::thread::sleep(ACK_POLL);
    }
}

fn serve_conn(
    mut s: TcpStream,
    plan: &ConnPlan,
    settings: &SocketSettings,
    stop: &AtomicBool,
    out: &Mutex<Measured>,
) -> io::Result<()> {
    setup(&s, settings)?;
    s.set_read_timeout(Some(SLICE))?;
    s.set_write_timeout(Some(SLICE))?;
    let mut buf = vec![0u8; 64 * 1024];
    let pattern = vec![PATTERN; 64 * 1024];
    if plan.endless {
        while write_n(&mut s, pattern.len() as u64, stop, &pattern)? {}
        return Ok(());
    }
    if !plan.writes.is_empty() {
        let t0 = now_ns();
        let before = tcpinfo::tcp_info(&s).ok();
        for &(at, n) in &plan.writes {
            let due = t0 + at.as_nanos() as u64;
            while now_ns() < due && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_nanos(
                    (due - now_ns()).min(SLICE.as_nanos() as u64),
                ));
            }
            if !write_n(&mut s, n, stop, &pattern)? {
                return Ok(());
            }
        }
        let acked = wait_acked(&s, stop)?;
        let mut m = out.lock().unwrap();
        m.exchanges.push(ExchangeResult {
            workload: plan.workload,
            index: plan.exchanges.first().map_or(0, |e| e.index),
            conn: plan.index,
            server_start: Some(t0),
            server_end: acked.then(now_ns),
            info_before: before,
            info_after: tcpinfo::tcp_info(&s).ok(),
            ..Default::default()
        });
        return Ok(());
    }
    for ex in &plan.exchanges {
        let before = tcpinfo::tcp_info(&s).ok();
        if ex.request > 0 && !read_exact(&mut s, ex.request, stop, &mut buf)? {
            return Ok(());
        }
        let start = now_ns();
        if !write_n(&mut s, ex.response, stop, &pattern)? {
            return Ok(());
        }
        if plan.server_close {
            s.shutdown(Shutdown::Write)?;
        }
        let acked = wait_acked(&s, stop)?;
        let end = acked.then(now_ns);
        out.lock().unwrap().exchanges.push(ExchangeResult {
            workload: plan.workload,
            index: ex.index,
            conn: plan.index,
            server_start: Some(start),
            server_end: end,
            info_before: before,
            info_after: tcpinfo::tcp_info(&s).ok(),
            ..Default::default()
        });
        if !acked {
            return Ok(());
        }
    }
    // Wait for the client's FIN, so that the server's side closes second.
    let _ = read_exact(&mut s, u64::MAX, stop, &mut buf);
    Ok(())
}

/// Opens a connection from `local` to `remote` in the calling thread's namespace,
/// with `settings`; `connect(2)` waits no longer than `deadline`.
pub fn connect_from(
    local: SocketAddrV4,
    remote: SocketAddrV4,
    settings: &SocketSettings,
    deadline: u64,
) -> io::Result<TcpStream> {
    let sock = socket::socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    socket::setsockopt(&sock, sockopt::ReuseAddr, &true)?;
    setup(&sock, settings)?;
    // connect(2) waits at most the send timeout.
    let left = Duration::from_nanos(deadline.saturating_sub(now_ns()).max(1_000_000));
    let tv = nix::sys::time::TimeVal::new(left.as_secs() as i64, left.subsec_micros() as i64);
    socket::setsockopt(&sock, sockopt::SendTimeout, &tv)?;
    socket::bind(sock.as_raw_fd(), &SockaddrIn::from(local))?;
    socket::connect(sock.as_raw_fd(), &SockaddrIn::from(remote))?;
    Ok(TcpStream::from(sock))
}

/// Opens connection `plan` from the client namespace (the calling thread's),
/// bounded by the trial's deadline.
fn connect(plan: &ConnPlan, settings: &SocketSettings, deadline: u64) -> io::Result<TcpStream> {
    let port = CLIENT_PORT_BASE + plan.index as u16;
    let (local, remote) = if plan.reversed {
        (SERVER_ADDR, CLIENT_ADDR)
    } else {
        (CLIENT_ADDR, SERVER_ADDR)
    };
    let s = connect_from(
        SocketAddrV4::new(local, port),
        SocketAddrV4::new(remote, plan.port),
        settings,
        deadline,
    )?;
    s.set_read_timeout(Some(SLICE))?;
    s.set_write_timeout(Some(SLICE))?;
    Ok(s)
}

/// Runs a client script in the calling thread (inside the client namespace).
pub fn run_client(
    script: &ClientScript,
    settings: &SocketSettings,
    t0: u64,
    deadline: u64,
    stop: &AtomicBool,
    out: &Mutex<Measured>,
) {
    let sleep_until = |t: u64| {
        while now_ns() < t && !stop.load(Ordering::Relaxed) && now_ns() < deadline {
            std::thread::sleep(Duration::from_nanos(
                (t - now_ns()).min(SLICE.as_nanos() as u64),
            ));
        }
    };
    sleep_until(t0 + script.start.as_nanos() as u64);
    let mut buf = vec![0u8; 64 * 1024];
    let req = vec![b'r'; 64 * 1024];
    let mut prev_end: Option<u64> = None;
    for plan in &script.conns {
        let mut conn: Option<TcpStream> = None;
        for (i, ex) in plan.exchanges.iter().enumerate() {
            match (ex.at, prev_end) {
                (Some(at), _) => sleep_until(t0 + at.as_nanos() as u64),
                (None, Some(e)) => sleep_until(e + script.think.as_nanos() as u64),
                (None, None) => {}
            }
            if stop.load(Ordering::Relaxed) || now_ns() >= deadline {
                return;
            }
            let start = now_ns();
            let mut r = ExchangeResult {
                workload: plan.workload,
                index: ex.index,
                conn: plan.index,
                request: ex.request,
                response: ex.response,
                client_start: start,
                ..Default::default()
            };
            if conn.is_none() {
                match connect(plan, settings, deadline) {
                    Ok(s) => conn = Some(s),
                    Err(_) => {
                        out.lock().unwrap().exchanges.push(r);
                        return;
                    }
                }
                if !(script.fresh && i == 0) {
                    r.client_start = now_ns();
                }
            }
            let s = conn.as_mut().expect("connected");
            let done = (|| -> io::Result<bool> {
                if ex.request > 0 && !write_n(s, ex.request, stop, &req)? {
                    return Ok(false);
                }
                if plan.endless {
                    while read_exact(s, buf.len() as u64, stop, &mut buf)? {}
                    return Ok(false);
                }
                let total = if plan.writes.is_empty() {
                    ex.response
                } else {
                    plan.writes.iter().map(|w| w.1).sum()
                };
                read_exact(s, total, stop, &mut buf)
            })();
            match done {
                Ok(true) => {
                    r.complete = true;
                    r.client_end = Some(now_ns());
                    prev_end = r.client_end;
                }
                Ok(false) => {}
                Err(e) => r.reset = e.kind() == io::ErrorKind::ConnectionReset,
            }
            let complete = r.complete;
            if complete && plan.server_close {
                // The FIN: a read of 0 bytes.
                let mut one = [0u8; 1];
                loop {
                    match s.read(&mut one) {
                        Ok(0) => {
                            r.fin_at = Some(now_ns());
                            break;
                        }
                        Ok(_) => {}
                        Err(e)
                            if matches!(
                                e.kind(),
                                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                            ) =>
                        {
                            if stop.load(Ordering::Relaxed) || now_ns() >= deadline {
                                break;
                            }
                        }
                        Err(_) => break,
                    }
                }
            }
            out.lock().unwrap().exchanges.push(r);
            if !complete {
                return;
            }
        }
        if let Some(s) = conn.take() {
            let _ = s.shutdown(Shutdown::Write);
        }
    }
}
