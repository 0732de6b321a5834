//! Blocking system calls (`…END` before a call's name): packetdrill runs such a
//! call on a thread of its own while the script goes on (`run_system_call.c`), and
//! checks when it returned against `END` — relative to the same base as the call's
//! start for a relative time (`run.c`) — within the tolerance of the call's own span
//! (`verify_time` with the start as the last event). Here a `read` or `accept` that
//! would block waits, the later events run, and the call completes at the first
//! event after which it no longer would, its result and time checked then.

use gentle_tcp::State;

use super::ast::{Event, SyscallSpec, Time};
use super::run::{Blocked, Runner, Step, secs, us};

impl Runner<'_> {
    /// Whether `ev` is a blocking call that must wait now; if so it is held.
    pub(super) fn hold_if_blocking(&mut self, ev: &Event, c: &SyscallSpec, lo: i64) -> bool {
        let Some(end) = c.end_time else {
            return false;
        };
        if !self.would_block(c) {
            return false;
        }
        let end = Self::end_of_call(ev, lo, end);
        self.blocked = Some(Blocked {
            call: c.clone(),
            line: ev.line,
            start: lo,
            end,
        });
        true
    }

    /// A read with nothing to read, or an accept before a connection is ready, on
    /// a blocking socket.
    fn would_block(&mut self, c: &SyscallSpec) -> bool {
        let fd = match self.arg(c, 0).and_then(|e| self.int(e)) {
            Ok(fd) => fd as i32,
            Err(_) => return false,
        };
        if self.socks.get(&fd).is_none_or(|s| s.nonblock) {
            return false;
        }
        match c.name.as_str() {
            "read" | "recv" | "recvfrom" => {
                self.conn_fd == Some(fd)
                    && self.unread.is_empty()
                    && !self.rd_shut
                    && self
                        .conn
                        .as_ref()
                        .is_some_and(|k| k.readable() == 0 && !k.peer_closed())
            }
            "accept" | "accept4" => {
                self.listener == Some(fd)
                    && self.conn_fd.is_none()
                    && !self
                        .conn
                        .as_ref()
                        .is_some_and(|k| k.was_established() || k.state() == State::CloseWait)
            }
            _ => false,
        }
    }

    /// After an event: completes a held call that would no longer block, checking
    /// its result and when it returned.
    pub(super) fn resume_blocked(&mut self) -> Step {
        let Some(b) = self.blocked.take() else {
            return Ok(());
        };
        if self.would_block(&b.call) {
            self.blocked = Some(b);
            return Ok(());
        }
        let line = std::mem::replace(&mut self.line, b.line);
        self.syscall(&b.call)?;
        self.check_return_time(b.start, b.end, us(self.now))?;
        self.line = line;
        Ok(())
    }

    /// A blocking call started at `start` should have returned at `end` and did
    /// at `at` (µs): within the tolerance of its own span.
    pub(super) fn check_return_time(&self, start: i64, end: i64, at: i64) -> Step {
        let tol = self.tolerance_over(end - start);
        if (at - end).abs() > tol {
            return Err(self.fail(format!(
                "timing error: expected system call return at {} sec but happened at {} sec; tolerance {} sec",
                secs(end),
                secs(at),
                secs(tol)
            )));
        }
        Ok(())
    }

    /// A blocking call's end time (µs): `run.c` moves a relative call's end by
    /// the same base as its start.
    pub(super) fn end_of_call(ev: &Event, lo: i64, end: i64) -> i64 {
        match ev.time {
            Time::Relative(d) => lo - d + end,
            _ => end,
        }
    }
}
