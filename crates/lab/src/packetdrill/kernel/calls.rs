//! Syscall lines on the kernel's real sockets (`run_system_call.c`). Calls that
//! can block (accept, connect, reads and writes) run on a thread of their own, as
//! packetdrill runs them: when that thread sleeps in the kernel the call is
//! blocked, the script goes on, and the call's result (and, for `…END` calls,
//! when it returned) is checked once it returns. Script descriptors map to live
//! ones; errors come back as the errno's name.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

use super::super::ast::{Event, Expr, SyscallSpec};
use super::super::run::{Runner, Step};
use super::{KernelRun, LOCAL_IP, REMOTE_IP};

/// How long a blocked call is awaited (packetdrill's `MAX_WAIT_SECS`).
const MAX_WAIT: Duration = Duration::from_secs(1);

/// A call's result: a value, or the errno.
type Raw = Result<i64, i32>;
/// What a worker sends back: the result, and when it returned.
type Done = (Raw, std::time::Instant);

/// The port packetdrill binds and connects to (`config.c`: `live_bind_port`,
/// `live_connect_port`).
const SCRIPT_PORT: u16 = 8080;

/// A call that blocked: the script's line, when it started and should end (µs),
/// where its result comes from, and the script descriptor an accept returns.
struct Blocked {
    call: SyscallSpec,
    line: usize,
    start: i64,
    end: Option<i64>,
    rx: Receiver<Done>,
    accept_as: Option<i32>,
}

/// The script's sockets on the kernel.
#[derive(Default)]
pub(super) struct Calls {
    fds: BTreeMap<i32, OwnedFd>,
    /// The socket `%{ }%` blocks read: the connection's, else the last made.
    under_test: Option<i32>,
    blocked: Option<Blocked>,
}

impl Calls {
    /// `TCP_INFO` of the socket under test.
    pub(super) fn tcp_info(&self) -> Result<Vec<(&'static str, i128)>, String> {
        let fd = self
            .under_test
            .and_then(|s| self.fds.get(&s))
            .ok_or("a %{ }% block with no socket")?;
        gentle_real::tcpinfo::tcp_info_fields(fd).map_err(|e| format!("TCP_INFO: {e}"))
    }

    /// Shuts every socket down (waking a blocked call) and closes them.
    pub(super) fn shut_down(&mut self) {
        for fd in self.fds.values() {
            // SAFETY: shutdown(2) on a descriptor we own.
            unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_RDWR) };
        }
        if let Some(b) = self.blocked.take() {
            let _ = b.rx.recv_timeout(Duration::from_millis(200));
        }
        self.fds.clear();
    }
}

impl KernelRun<'_> {
    /// Runs a syscall line on the kernel.
    pub(super) fn syscall(&mut self, c: &SyscallSpec, ev: &Event, lo: i64) -> Step {
        if !matches!(
            c.name.as_str(),
            "accept"
                | "accept4"
                | "connect"
                | "write"
                | "send"
                | "sendto"
                | "read"
                | "recv"
                | "recvfrom"
        ) {
            let got = self.direct(c)?;
            return self.r.check_return(c, got.map_err(errno_name));
        }
        if self.calls.blocked.is_some() {
            self.await_blocked(
                "blocking system call while another blocking system call is already in progress",
            )?;
        }
        let (job, accept_as) = self.blocking_job(c)?;
        match run_on_worker(job) {
            Ok((raw, _)) => self.returned(c, raw, accept_as),
            Err(rx) => {
                self.calls.blocked = Some(Blocked {
                    call: c.clone(),
                    line: self.r.line,
                    start: lo,
                    end: c.end_time.map(|e| Runner::end_of_call(ev, lo, e)),
                    rx,
                    accept_as,
                });
                Ok(())
            }
        }
    }

    /// After an event: checks a blocked call that has returned since.
    pub(super) fn finish_blocked(&mut self) -> Step {
        let Some(b) = &self.calls.blocked else {
            return Ok(());
        };
        match b.rx.try_recv() {
            Ok(d) => self.check_blocked(d),
            Err(TryRecvError::Empty) => Ok(()),
            Err(TryRecvError::Disconnected) => {
                self.check_blocked((Err(libc::EIO), std::time::Instant::now()))
            }
        }
    }

    /// Waits a second at most for a blocked call to return (packetdrill's
    /// `await_idle_thread`: before another blocking call, and when the script
    /// ends), then checks it; one still blocked fails the script with `why`.
    pub(super) fn await_blocked(&mut self, why: &str) -> Step {
        let Some(b) = &self.calls.blocked else {
            return Ok(());
        };
        match b.rx.recv_timeout(MAX_WAIT) {
            Ok(d) => self.check_blocked(d),
            Err(_) => {
                let line = b.line;
                Err(self.r.fail(format!("{why} (the call of line {line})")))
            }
        }
    }

    /// Checks the blocked call's result and, for a `…END` call, when it returned.
    fn check_blocked(&mut self, (raw, when): Done) -> Step {
        let b = self.calls.blocked.take().expect("checked above");
        let at = when.saturating_duration_since(self.start).as_micros() as i64;
        let line = std::mem::replace(&mut self.r.line, b.line);
        self.returned(&b.call, raw, b.accept_as)?;
        if let Some(end) = b.end {
            self.r.check_return_time(b.start, end, at)?;
        }
        self.r.line = line;
        Ok(())
    }

    /// Checks a returned call; an accepted socket gets the script's descriptor.
    fn returned(&mut self, c: &SyscallSpec, raw: Raw, accept_as: Option<i32>) -> Step {
        let got = match (raw, accept_as) {
            (Ok(live), Some(script_fd)) => {
                // SAFETY: accept4 returned this descriptor; nothing else owns it.
                let fd = unsafe { OwnedFd::from_raw_fd(live as RawFd) };
                self.calls.fds.insert(script_fd, fd);
                self.calls.under_test = Some(script_fd);
                Ok(script_fd as i64)
            }
            (r, _) => r,
        };
        self.r.check_return(c, got.map_err(errno_name))
    }

    fn live(&self, c: &SyscallSpec) -> Step<RawFd> {
        let fd = self.r.int(self.r.arg(c, 0)?)? as i32;
        self.calls
            .fds
            .get(&fd)
            .map(AsRawFd::as_raw_fd)
            .ok_or_else(|| {
                self.r
                    .skip(format!("{}() on fd {fd}, not a socket", c.name))
            })
    }

    /// The descriptor a new socket gets in the script: the one it expects, else
    /// the lowest free one.
    fn script_fd(&self, c: &SyscallSpec) -> i32 {
        match c.result {
            Expr::Int(n) if n >= 0 && !self.calls.fds.contains_key(&(n as i32)) => n as i32,
            _ => (3..)
                .find(|n| !self.calls.fds.contains_key(n))
                .expect("a free fd"),
        }
    }

    /// A call that cannot block, run here.
    fn direct(&mut self, c: &SyscallSpec) -> Step<Raw> {
        match c.name.as_str() {
            "socket" => {
                if !matches!(self.r.arg(c, 1)?, Expr::Word(w) if w == "SOCK_STREAM") {
                    return Err(self.r.skip("only SOCK_STREAM sockets are supported"));
                }
                // SAFETY: socket(2) with constant arguments; the result is checked.
                let fd = unsafe {
                    libc::socket(
                        libc::AF_INET,
                        libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                        libc::IPPROTO_TCP,
                    )
                };
                let fd = match check(fd as i64) {
                    Ok(fd) => fd,
                    Err(e) => return Ok(Err(e)),
                };
                let script_fd = self.script_fd(c);
                // SAFETY: a descriptor socket(2) just returned.
                let owned = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
                gentle_real::tcpinfo::set_congestion(&owned, &self.cc)
                    .map_err(|e| self.r.fail(format!("socket(): {e}")))?;
                self.calls.fds.insert(script_fd, owned);
                self.calls.under_test = Some(script_fd);
                Ok(Ok(script_fd as i64))
            }
            "bind" => {
                let fd = self.live(c)?;
                let sa = sockaddr(LOCAL_IP, SCRIPT_PORT);
                // SAFETY: bind(2) with a sockaddr_in we own and its size.
                Ok(check(unsafe { libc::bind(fd, sa_ptr(&sa), SA_LEN) } as i64))
            }
            "listen" => {
                let fd = self.live(c)?;
                let backlog = self.r.int(self.r.arg(c, 1)?)? as i32;
                // SAFETY: listen(2) on a socket we own.
                Ok(check(unsafe { libc::listen(fd, backlog) } as i64))
            }
            "setsockopt" => self.setsockopt(c),
            "getsockopt" => self.getsockopt(c),
            "fcntl" => {
                let fd = self.live(c)?;
                let cmd = self.r.int(self.r.arg(c, 1)?)? as i32;
                let arg = match c.args.get(2) {
                    Some(e) => self.r.int(e)? as i32,
                    None => 0,
                };
                // SAFETY: fcntl(2) F_GETFL / F_SETFL with an integer argument.
                Ok(check(unsafe { libc::fcntl(fd, cmd, arg) } as i64))
            }
            "close" => {
                let fd = self.r.int(self.r.arg(c, 0)?)? as i32;
                Ok(match self.calls.fds.remove(&fd) {
                    Some(_) => Ok(0),
                    None => Err(libc::EBADF),
                })
            }
            "shutdown" => {
                let fd = self.live(c)?;
                let how = self.r.int(self.r.arg(c, 1)?)? as i32;
                // SAFETY: shutdown(2) on a socket we own.
                Ok(check(unsafe { libc::shutdown(fd, how) } as i64))
            }
            n => Err(self.r.skip(format!("syscall {n}() not supported"))),
        }
    }

    /// The work of a call that may block, for a worker thread; for accept, the
    /// script descriptor its socket will have.
    fn blocking_job(&mut self, c: &SyscallSpec) -> Step<(Job, Option<i32>)> {
        let fd = self.live(c)?;
        let null = matches!(c.args.get(1), Some(Expr::Word(w)) if w == "NULL")
            || matches!(c.args.get(1), Some(Expr::Int(0)));
        let flags = match (c.name.as_str(), c.args.get(3)) {
            ("send" | "sendto" | "recv" | "recvfrom", Some(e)) => self.r.int(e)? as i32,
            _ => 0,
        };
        Ok(match c.name.as_str() {
            "accept" | "accept4" => {
                let script_fd = self.script_fd(c);
                // SAFETY: accept4(2) without an address, on a socket we own.
                let job: Job = Box::new(move || {
                    check(unsafe {
                        libc::accept4(
                            fd,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            libc::SOCK_CLOEXEC,
                        )
                    } as i64)
                });
                (job, Some(script_fd))
            }
            "connect" => {
                self.calls.under_test = self.r.int(self.r.arg(c, 0)?).ok().map(|f| f as i32);
                let job: Job = Box::new(move || {
                    let sa = sockaddr(REMOTE_IP, SCRIPT_PORT);
                    // SAFETY: connect(2) with a sockaddr_in we own and its size.
                    check(unsafe { libc::connect(fd, sa_ptr(&sa), SA_LEN) } as i64)
                });
                (job, None)
            }
            name => {
                let n = self.r.int(self.r.arg(c, 2)?)?.max(0) as usize;
                let write = matches!(name, "write" | "send" | "sendto");
                let job: Job = Box::new(move || {
                    let mut buf = vec![0u8; n];
                    let p = if null {
                        std::ptr::null_mut()
                    } else {
                        buf.as_mut_ptr()
                    };
                    // SAFETY: send/recv of at most `n` bytes from/into `buf` (or
                    // NULL, which the kernel answers with EFAULT), on our socket.
                    // MSG_NOSIGNAL: a write to a reset connection returns EPIPE
                    // rather than killing gentle.
                    let r = unsafe {
                        if write {
                            libc::send(fd, p.cast(), n, flags | libc::MSG_NOSIGNAL)
                        } else {
                            libc::recv(fd, p.cast(), n, flags)
                        }
                    };
                    check(r as i64)
                });
                (job, None)
            }
        })
    }

    fn setsockopt(&mut self, c: &SyscallSpec) -> Step<Raw> {
        let fd = self.live(c)?;
        let (level, opt) = self.option(c)?;
        let bytes: Vec<u8> = match self.r.arg(c, 3)? {
            Expr::Str(s) => s.as_bytes().to_vec(),
            e => (self.r.int(e)? as i32).to_ne_bytes().to_vec(),
        };
        // SAFETY: setsockopt(2) reading `bytes`, which is that long.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                level,
                opt,
                bytes.as_ptr().cast(),
                bytes.len() as libc::socklen_t,
            )
        };
        Ok(check(rc as i64))
    }

    fn getsockopt(&mut self, c: &SyscallSpec) -> Step<Raw> {
        let fd = self.live(c)?;
        let (level, opt) = self.option(c)?;
        // `%{ }%` blocks read TCP_INFO; the call itself only has to succeed.
        let mut buf = [0u8; 256];
        let mut len = if opt == libc::TCP_INFO { 256 } else { 4 };
        // SAFETY: getsockopt(2) writing at most `len` bytes into `buf`.
        let rc = unsafe { libc::getsockopt(fd, level, opt, buf.as_mut_ptr().cast(), &mut len) };
        if rc < 0 || opt == libc::TCP_INFO {
            return Ok(check(rc as i64));
        }
        let got = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as i64;
        if let Some(Expr::List(v)) = c.args.get(3)
            && let [Expr::Int(w)] = v.as_slice()
            && *w != got
        {
            let name = self.r.arg(c, 2)?;
            return Err(self
                .r
                .fail(format!("getsockopt {name}: expected [{w}] but got [{got}]")));
        }
        Ok(Ok(0))
    }

    /// The level and number of a socket option a script names.
    fn option(&self, c: &SyscallSpec) -> Step<(i32, i32)> {
        let name = match self.r.arg(c, 2)? {
            Expr::Word(w) => w.as_str(),
            e => return Err(self.r.skip(format!("socket option `{e}` not supported"))),
        };
        let tcp = |o| (libc::IPPROTO_TCP, o);
        let sock = |o| (libc::SOL_SOCKET, o);
        Ok(match name {
            "SO_REUSEADDR" => sock(libc::SO_REUSEADDR),
            "SO_REUSEPORT" => sock(libc::SO_REUSEPORT),
            "SO_KEEPALIVE" => sock(libc::SO_KEEPALIVE),
            "SO_SNDBUF" => sock(libc::SO_SNDBUF),
            "SO_RCVBUF" => sock(libc::SO_RCVBUF),
            "SO_ERROR" => sock(libc::SO_ERROR),
            "TCP_NODELAY" => tcp(libc::TCP_NODELAY),
            "TCP_MAXSEG" => tcp(libc::TCP_MAXSEG),
            "TCP_CORK" => tcp(libc::TCP_CORK),
            "TCP_KEEPIDLE" => tcp(libc::TCP_KEEPIDLE),
            "TCP_KEEPINTVL" => tcp(libc::TCP_KEEPINTVL),
            "TCP_KEEPCNT" => tcp(libc::TCP_KEEPCNT),
            "TCP_SYNCNT" => tcp(libc::TCP_SYNCNT),
            "TCP_LINGER2" => tcp(libc::TCP_LINGER2),
            "TCP_WINDOW_CLAMP" => tcp(libc::TCP_WINDOW_CLAMP),
            "TCP_QUICKACK" => tcp(libc::TCP_QUICKACK),
            "TCP_CONGESTION" => tcp(libc::TCP_CONGESTION),
            "TCP_USER_TIMEOUT" => tcp(libc::TCP_USER_TIMEOUT),
            "TCP_NOTSENT_LOWAT" => tcp(libc::TCP_NOTSENT_LOWAT),
            "TCP_THIN_LINEAR_TIMEOUTS" => tcp(libc::TCP_THIN_LINEAR_TIMEOUTS),
            "TCP_INFO" => tcp(libc::TCP_INFO),
            n => return Err(self.r.skip(format!("socket option {n} not supported"))),
        })
    }
}

type Job = Box<dyn FnOnce() -> Raw + Send>;

/// A syscall's return value, or its errno.
fn check(rc: i64) -> Raw {
    if rc < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(rc)
    }
}

/// Runs `job` on a thread of its own: its result if it returns, or, once the
/// thread sleeps in the kernel, where its result will come from.
fn run_on_worker(job: Job) -> Result<Done, Receiver<Done>> {
    let (tx, rx) = mpsc::channel();
    let (tid_tx, tid_rx) = mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: gettid(2) has no arguments and cannot fail.
        let _ = tid_tx.send(unsafe { libc::gettid() });
        let r = job();
        let _ = tx.send((r, std::time::Instant::now()));
    });
    let Ok(tid) = tid_rx.recv() else {
        return Ok((Err(libc::EIO), std::time::Instant::now()));
    };
    let mut asleep_seen = 0;
    loop {
        match rx.try_recv() {
            Ok(d) => return Ok(d),
            Err(TryRecvError::Disconnected) => {
                return Ok((Err(libc::EIO), std::time::Instant::now()));
            }
            Err(TryRecvError::Empty) => {}
        }
        // Asleep twice in a row, 50 µs apart: blocked (packetdrill looks for
        // the thread's state `S` in /proc the same way).
        asleep_seen = if sleeping(tid) { asleep_seen + 1 } else { 0 };
        if asleep_seen >= 2 {
            return Err(rx);
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// Whether thread `tid` of this process sleeps (`S` in its `stat`).
fn sleeping(tid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
        return false;
    };
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next())
        == Some('S')
}

const SA_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;

fn sockaddr(ip: std::net::Ipv4Addr, port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn sa_ptr(sa: &libc::sockaddr_in) -> *const libc::sockaddr {
    (sa as *const libc::sockaddr_in).cast()
}

/// The errno's name, as scripts write it.
fn errno_name(e: i32) -> &'static str {
    match e {
        libc::EAGAIN => "EAGAIN",
        libc::EINPROGRESS => "EINPROGRESS",
        libc::EALREADY => "EALREADY",
        libc::EPIPE => "EPIPE",
        libc::ECONNRESET => "ECONNRESET",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ECONNABORTED => "ECONNABORTED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOTCONN => "ENOTCONN",
        libc::EISCONN => "EISCONN",
        libc::EINVAL => "EINVAL",
        libc::EFAULT => "EFAULT",
        libc::EBADF => "EBADF",
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ENOPROTOOPT => "ENOPROTOOPT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::ENOBUFS => "ENOBUFS",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        _ => "an errno gentle does not name",
    }
}
