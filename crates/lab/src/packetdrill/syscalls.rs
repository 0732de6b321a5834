//! Syscall lines acting on the engine endpoint (`run_system_call.c`): sockets,
//! options, connection setup and teardown, reads and writes. The engine is one
//! connection; each call's return value (and errno) is compared with the script's.

use std::time::Duration;

use bytes::Bytes;
use gentle_tcp::{CcAlgorithm, Connection, State};

use super::ast::{Expr, SyscallSpec};
use super::run::{DUT_PORT, PEER_PORT, Runner, Sock, SockState, Step, Stop};
use super::sysctl::EcnMode;

const O_RDWR: i64 = 2;
const O_NONBLOCK: i64 = 0o4000;

/// What a call returned: a value, or -1 and an errno name.
type Ret = Result<i64, &'static str>;

/// The value of a symbol scripts use as an argument.
fn symbol(w: &str) -> Option<i64> {
    Some(match w {
        "O_RDONLY" | "SHUT_RD" | "F_GETFD" | "SOL_IP" => 0,
        "O_WRONLY" | "SHUT_WR" => 1,
        "O_RDWR" | "SHUT_RDWR" => 2,
        "F_GETFL" => 3,
        "F_SETFL" => 4,
        "O_NONBLOCK" => O_NONBLOCK,
        "MSG_DONTWAIT" => 0x40,
        "MSG_MORE" => 0x8000,
        "MSG_PEEK" => 2,
        "MSG_NOSIGNAL" => 0x4000,
        _ => return None,
    })
}

impl Runner<'_> {
    pub(super) fn int(&self, e: &Expr) -> Step<i64> {
        match e {
            Expr::Int(i) => Ok(*i),
            Expr::Word(w) => symbol(w).ok_or_else(|| self.skip(format!("symbol {w} not modelled"))),
            Expr::Binary('|', a, b) => Ok(self.int(a)? | self.int(b)?),
            Expr::List(v) if v.len() == 1 => self.int(&v[0]),
            _ => Err(self.skip(format!("argument `{e}` not modelled"))),
        }
    }

    pub(super) fn arg<'e>(&self, c: &'e SyscallSpec, i: usize) -> Step<&'e Expr> {
        c.args
            .get(i)
            .ok_or_else(|| self.skip(format!("{}() with {} arguments", c.name, c.args.len())))
    }

    fn sock(&mut self, c: &SyscallSpec) -> Step<(i32, &mut Sock)> {
        let fd = self.int(self.arg(c, 0)?)? as i32;
        match self.socks.get_mut(&fd) {
            Some(s) => Ok((fd, s)),
            None => Err(Stop::Skip(
                self.line,
                format!("{}() on fd {fd}, not a socket", c.name),
            )),
        }
    }

    /// Runs a syscall line and checks what it returned.
    pub(super) fn syscall(&mut self, c: &SyscallSpec) -> Step {
        let got = self.call(c)?;
        self.drain();
        self.check_return(c, got)
    }

    /// Compares what a call returned (a value, or -1 and an errno's name) with
    /// the script's line (`run_system_call.c`).
    pub(super) fn check_return(&self, c: &SyscallSpec, got: Result<i64, &str>) -> Step {
        let want_ret = match &c.result {
            Expr::Ellipsis => None,
            e => Some(self.int(e)?),
        };
        let (ret, errno) = match got {
            Ok(v) => (v, None),
            Err(e) => (-1, Some(e)),
        };
        let show = |r: i64, e: Option<&str>| match e {
            Some(e) => format!("{r} {e}"),
            None => r.to_string(),
        };
        if want_ret.is_some_and(|w| w != ret) || (ret == -1 && c.errno.as_deref() != errno) {
            let mut f = self.fail(format!(
                "runtime error in {} call: expected result {} but got {}",
                c.name,
                show(want_ret.unwrap_or(ret), c.errno.as_deref()),
                show(ret, errno)
            ));
            if let Stop::Fail(f) = &mut f {
                f.expected = Some(show(want_ret.unwrap_or(ret), c.errno.as_deref()));
                f.actual = Some(show(ret, errno));
            }
            return Err(f);
        }
        Ok(())
    }

    fn call(&mut self, c: &SyscallSpec) -> Step<Ret> {
        match c.name.as_str() {
            "socket" => {
                let ty = self.arg(c, 1)?;
                if !matches!(ty, Expr::Word(w) if w == "SOCK_STREAM") {
                    return Err(self.skip("only SOCK_STREAM sockets are modelled"));
                }
                let fd = self.new_fd(c);
                let mut cfg = self.sys.cfg.clone();
                // A Linux socket runs Nagle's algorithm until TCP_NODELAY is set.
                cfg.nagle = true;
                let s = Sock {
                    state: SockState::Fresh,
                    nonblock: false,
                    cfg,
                };
                self.socks.insert(fd, s);
                Ok(Ok(fd as i64))
            }
            "bind" => self.sock(c).map(|_| Ok(0)),
            "listen" => {
                let (fd, s) = self.sock(c)?;
                s.state = SockState::Listening;
                self.listener = Some(fd);
                Ok(Ok(0))
            }
            "accept" | "accept4" => self.accept(c),
            "connect" => self.connect(c),
            "setsockopt" => self.setsockopt(c),
            "getsockopt" => self.getsockopt(c),
            "fcntl" => self.fcntl(c),
            "write" | "send" | "sendto" => self.write(c),
            "read" | "recv" | "recvfrom" => self.read(c),
            "close" => self.close(c),
            "shutdown" => self.shutdown(c),
            n => Err(self.skip(format!("syscall {n}() not modelled"))),
        }
    }

    /// A new descriptor: the one the script expects (packetdrill maps script
    /// descriptors to live ones), else the lowest free one.
    fn new_fd(&mut self, c: &SyscallSpec) -> i32 {
        let fd = match c.result {
            Expr::Int(n) if n >= 0 && !self.socks.contains_key(&(n as i32)) => n as i32,
            _ => self.next_fd,
        };
        self.next_fd = self.next_fd.max(fd + 1);
        fd
    }

    /// The connection behind fd, once accepted or connected.
    fn conn_of(&mut self, c: &SyscallSpec) -> Step<(bool, &mut Connection)> {
        let (fd, s) = self.sock(c)?;
        let nb = s.nonblock;
        if self.conn_fd != Some(fd) {
            return Err(self.skip(format!("{}() on fd {fd} without a connection", c.name)));
        }
        let line = self.line;
        let conn = self
            .conn
            .as_mut()
            .ok_or(Stop::Skip(line, "no connection".into()))?;
        Ok((nb, conn))
    }

    fn accept(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let (_, s) = self.sock(c)?;
        let nb = s.nonblock;
        if s.state != SockState::Listening {
            return Ok(Err("EINVAL"));
        }
        let ready = self.conn_fd.is_none()
            && self
                .conn
                .as_ref()
                .is_some_and(|c| c.was_established() || c.state() == State::CloseWait);
        if !ready {
            if nb {
                return Ok(Err("EAGAIN"));
            }
            return Err(
                self.skip("a blocking accept() before the handshake completes not modelled")
            );
        }
        let fd = self.new_fd(c);
        let cfg = self.sys.cfg.clone();
        self.socks.insert(
            fd,
            Sock {
                state: SockState::Conn,
                nonblock: false,
                cfg,
            },
        );
        self.conn_fd = Some(fd);
        Ok(Ok(fd as i64))
    }

    fn connect(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let busy = self.conn.is_some();
        let (fd, s) = self.sock(c)?;
        if s.state != SockState::Fresh || busy {
            return Err(self.skip("a second connection not modelled"));
        }
        s.state = SockState::Conn;
        let nb = s.nonblock;
        let mut cfg = s.cfg.clone();
        cfg.ecn = self.sys.ecn == EcnMode::On;
        let conn = Connection::connect(cfg, self.now, PEER_PORT, DUT_PORT, &mut self.rng);
        self.dut_iss = conn.iss();
        self.conn = Some(conn);
        self.conn_fd = Some(fd);
        // A blocking connect returns once the handshake is done; the lines that
        // follow it in a script are that handshake.
        Ok(if nb { Err("EINPROGRESS") } else { Ok(0) })
    }

    fn setsockopt(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let name = match self.arg(c, 2)? {
            Expr::Word(w) => w.clone(),
            e => return Err(self.skip(format!("setsockopt option `{e}` not modelled"))),
        };
        let val = self.arg(c, 3)?.clone();
        let connected = {
            let (fd, _) = self.sock(c)?;
            self.conn_fd == Some(fd)
        };
        let v = match &val {
            Expr::Str(_) => 0,
            e => self.int(e)?,
        };
        let (_, s) = self.sock(c)?;
        match name.as_str() {
            "SO_REUSEADDR" | "SO_REUSEPORT" | "SO_KEEPALIVE" | "SO_SNDBUF" => {}
            "TCP_NODELAY" if !connected => s.cfg.nagle = v == 0,
            "SO_RCVBUF" if !connected => s.cfg.recv_buffer = (2 * v).clamp(536, 1 << 30) as u32,
            "TCP_MAXSEG" if !connected => s.cfg.mss = v.clamp(88, 65495) as u16,
            "TCP_CONGESTION" if !connected => match &val {
                Expr::Str(n) if n == "reno" => s.cfg.cc = CcAlgorithm::Reno,
                Expr::Str(n) if n == "cubic" => s.cfg.cc = CcAlgorithm::Cubic,
                _ => return Err(self.skip(format!("TCP_CONGESTION {val} not modelled"))),
            },
            // Setting it sends what Nagle held (`tcp_push_pending_frames`).
            "TCP_NODELAY" => self.conn.as_mut().expect("connected").set_nodelay(v != 0),
            // Milliseconds (RFC 5482's USER TIMEOUT; 0 restores tcp_retries2).
            "TCP_USER_TIMEOUT" if connected && v >= 0 => {
                let t = Duration::from_millis(v as u64);
                self.conn
                    .as_mut()
                    .expect("connected")
                    .set_user_timeout(Some(t));
            }
            n => return Err(self.skip(format!("setsockopt {n} {val} not modelled"))),
        }
        Ok(Ok(0))
    }

    fn getsockopt(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let name = match self.arg(c, 2)? {
            Expr::Word(w) => w.clone(),
            e => return Err(self.skip(format!("getsockopt option `{e}` not modelled"))),
        };
        let want = self.arg(c, 3)?.clone();
        let got = match name.as_str() {
            "SO_ERROR" => 0,
            "TCP_MAXSEG" => match &self.conn {
                Some(conn) => conn.smss() as i64,
                None => self.sock(c)?.1.cfg.mss as i64,
            },
            "TCP_INFO" => return Ok(Ok(0)),
            "TCP_USER_TIMEOUT" => self
                .conn
                .as_ref()
                .and_then(Connection::user_timeout)
                .map_or(0, |t| t.as_millis() as i64),
            n => return Err(self.skip(format!("getsockopt {n} not modelled"))),
        };
        if let Expr::List(v) = &want
            && let [Expr::Int(w)] = v.as_slice()
            && *w != got
        {
            return Err(self.fail(format!("getsockopt {name}: expected [{w}] but got [{got}]")));
        }
        Ok(Ok(0))
    }

    fn fcntl(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let cmd = self.int(self.arg(c, 1)?)?;
        let flags = match c.args.get(2) {
            Some(e) => Some(self.int(e)?),
            None => None,
        };
        let (_, s) = self.sock(c)?;
        match (cmd, flags) {
            (3, None) => Ok(Ok(O_RDWR | if s.nonblock { O_NONBLOCK } else { 0 })),
            (4, Some(f)) => {
                s.nonblock = f & O_NONBLOCK != 0;
                Ok(Ok(0))
            }
            _ => Err(self.skip("fcntl command not modelled")),
        }
    }

    fn write(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let n = self.int(self.arg(c, 2)?)?;
        if c.name != "write" && self.int(self.arg(c, 3)?)? & 0x8000 != 0 {
            return Err(self.skip("MSG_MORE not modelled"));
        }
        let (_, conn) = self.conn_of(c)?;
        if n <= 0 {
            return Ok(Ok(0));
        }
        // A NULL buffer: Linux's copy from user space fails at its first byte, and
        // tcp_sendmsg returns EFAULT having queued nothing.
        if null_buffer(c) {
            return Ok(Err("EFAULT"));
        }
        if !conn.write(Bytes::from(vec![0u8; n as usize])) {
            return Ok(Err("EPIPE"));
        }
        Ok(Ok(n))
    }

    fn read(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let n = self.int(self.arg(c, 2)?)?.max(0) as usize;
        let mut unread = std::mem::take(&mut self.unread);
        let (nb, conn) = self.conn_of(c)?;
        while unread.len() < n {
            let Some(b) = conn.read() else { break };
            unread.extend_from_slice(&b);
        }
        let eof = conn.peer_closed();
        let k = n.min(unread.len());
        // A NULL buffer: the copy to user space fails, and the data stays queued
        // (tcp_recvmsg returns EFAULT having consumed nothing).
        if k > 0 && null_buffer(c) {
            self.unread = unread;
            return Ok(Err("EFAULT"));
        }
        unread.drain(..k);
        self.unread = unread;
        if k > 0 || eof || self.rd_shut {
            return Ok(Ok(k as i64));
        }
        if nb {
            return Ok(Err("EAGAIN"));
        }
        Err(self.skip("a blocking read() with nothing to read not modelled"))
    }

    fn close(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let (fd, _) = self.sock(c)?;
        self.socks.remove(&fd);
        if self.listener == Some(fd) {
            self.listener = None;
            if self.conn_fd.is_none() && self.conn.is_some() {
                return Err(self.skip("closing a listener with a connection not accepted"));
            }
        }
        if self.conn_fd == Some(fd) {
            let unread = !self.unread.is_empty();
            let now = self.now;
            let conn = self.conn.as_mut().expect("connected fd has a connection");
            // tcp_close(): in SYN-SENT the socket just goes away; unread data
            // makes close() reset the connection.
            if conn.state() == State::SynSent {
                self.conn = None;
                self.conn_fd = None;
            } else if unread || conn.readable() > 0 {
                conn.abort(now);
            } else {
                conn.close_socket();
            }
        }
        Ok(Ok(0))
    }

    fn shutdown(&mut self, c: &SyscallSpec) -> Step<Ret> {
        let how = self.int(self.arg(c, 1)?)?;
        let (_, conn) = self.conn_of(c)?;
        if how != 0 {
            conn.close();
        }
        if how != 1 {
            self.rd_shut = true;
        }
        Ok(Ok(0))
    }
}

/// The call's buffer (its second argument) is `NULL`.
fn null_buffer(c: &SyscallSpec) -> bool {
    matches!(c.args.get(1), Some(Expr::Word(w)) if w == "NULL")
        || matches!(c.args.get(1), Some(Expr::Int(0)))
}
