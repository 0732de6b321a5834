//! A recursive-descent parser for packetdrill scripts, following the grammar of
//! google/packetdrill's `gtests/net/packetdrill/parser.y`: `script: opt_options
//! events`, `event: event_time action`, `tcp_packet_spec: packet_prefix
//! opt_ip_info flags seq opt_ack opt_window opt_urg_ptr opt_tcp_options`,
//! `syscall_spec: opt_end_time function_name function_arguments '=' expression
//! opt_errno opt_note`. Packet lines of other protocols (UDP, ICMP, tunnels) parse
//! as [`Action::Unsupported`], to be reported skipped rather than rejected.

use super::ast::*;
use super::lexer::{SyntaxError, Tok, Token, lex};
use super::options::{PACKETDRILL_OPTIONS, bad_option_value};

/// The system calls packetdrill runs (its `run_system_call.c`): a name outside
/// them is a mistake in the script, not something the engine lacks.
const SYSCALLS: &[&str] = &[
    "socket",
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "read",
    "readv",
    "recv",
    "recvfrom",
    "recvmsg",
    "write",
    "writev",
    "send",
    "sendto",
    "sendmsg",
    "sendfile",
    "fcntl",
    "ioctl",
    "close",
    "shutdown",
    "getsockopt",
    "setsockopt",
    "poll",
    "open",
    "splice",
    "epoll_create",
    "epoll_ctl",
    "epoll_wait",
    "pipe",
    "socketpair",
];

/// Parses a script's text.
pub fn parse(src: &str) -> Result<Script, SyntaxError> {
    let toks = lex(src)?;
    let mut p = Parser { t: &toks, i: 0 };
    p.script()
}

struct Parser<'a> {
    t: &'a [Token],
    i: usize,
}

type R<T> = Result<T, SyntaxError>;

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.t.get(self.i + k).map(|t| &t.tok)
    }
    fn pos(&self) -> (usize, usize) {
        match self.t.get(self.i).or(self.t.last()) {
            Some(t) if self.i < self.t.len() => (t.line, t.col),
            Some(t) => (t.line, t.col + 1),
            None => (1, 1),
        }
    }
    fn err<T>(&self, msg: impl Into<String>) -> R<T> {
        let (line, col) = self.pos();
        Err(SyntaxError {
            line,
            col,
            msg: msg.into(),
        })
    }
    fn unexpected<T>(&self, wanted: &str) -> R<T> {
        match self.peek() {
            Some(t) => self.err(format!("syntax error: expected {wanted}, found {t}")),
            None => self.err(format!("syntax error: expected {wanted}, found the end")),
        }
    }
    fn bump(&mut self) -> Option<Tok> {
        let t = self.t.get(self.i).map(|t| t.tok.clone());
        self.i += 1;
        t
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> R<()> {
        if self.eat(c) {
            Ok(())
        } else {
            self.unexpected(&format!("`{c}`"))
        }
    }
    fn word_is(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(x)) if x == w)
    }
    fn int(&mut self, what: &str) -> R<i64> {
        match self.peek() {
            Some(Tok::Int(i) | Tok::Hex(i)) => {
                let i = *i;
                self.i += 1;
                Ok(i)
            }
            _ => self.unexpected(what),
        }
    }
    fn uint(&mut self, what: &str, max: u64) -> R<u64> {
        let at = self.i;
        let v = self.int(what)?;
        if v < 0 || v as u64 > max {
            self.i = at;
            return self.err(format!("{what} out of range: {v} (0 to {max})"));
        }
        Ok(v as u64)
    }

    fn script(&mut self) -> R<Script> {
        let mut s = Script::default();
        while let Some(Tok::Opt(name)) = self.peek() {
            let name = name.clone();
            let line = self.pos().0;
            if !PACKETDRILL_OPTIONS.contains(&name.as_str()) {
                return self.err(format!("unknown option `--{name}`"));
            }
            self.i += 1;
            // `option: option_flag '=' option_value | option_flag`.
            let v = if self.peek() == Some(&Tok::Punct('=')) {
                self.i += 1;
                self.option_value()?
            } else {
                String::new()
            };
            if let Some(what) = bad_option_value(&name, &v) {
                self.i -= 1;
                return self.err(format!("bad --{name}: `{v}` ({what})"));
            }
            s.options.push((name, v, line));
        }
        while self.peek().is_some() {
            s.events.push(self.event()?);
        }
        Ok(s)
    }

    /// `option_value`: a number, word or string, or `WORD=WORD` / `WORD="..."`
    /// (`--define=CC="reno"`).
    fn option_value(&mut self) -> R<String> {
        let v = match self.bump() {
            Some(Tok::Int(i) | Tok::Hex(i)) => i.to_string(),
            Some(Tok::Float(f)) => f.to_string(),
            Some(Tok::Word(w) | Tok::Str(w)) => w,
            _ => {
                self.i -= 1;
                return self.unexpected("an option value");
            }
        };
        if self.peek() != Some(&Tok::Punct('=')) {
            return Ok(v);
        }
        self.i += 1;
        match self.bump() {
            Some(Tok::Word(w)) => Ok(format!("{v}={w}")),
            Some(Tok::Str(w)) => Ok(format!("{v}=\"{w}\"")),
            _ => {
                self.i -= 1;
                self.unexpected("a word or string after `=`")
            }
        }
    }

    /// `time` in seconds, as µs (`parser.y`: FLOAT × 1e6, INTEGER × 1e6).
    fn time(&mut self) -> R<i64> {
        match self.peek() {
            Some(Tok::Float(f)) if *f >= 0.0 => {
                let f = *f;
                self.i += 1;
                Ok((f * 1e6).round() as i64)
            }
            Some(Tok::Int(i)) if *i >= 0 => {
                let i = *i;
                self.i += 1;
                Ok(i * 1_000_000)
            }
            Some(Tok::Float(_) | Tok::Int(_)) => self.err("negative time"),
            _ => self.unexpected("a time"),
        }
    }

    fn event_time(&mut self) -> R<Time> {
        if self.eat('*') {
            return Ok(Time::Any);
        }
        if self.eat('+') {
            let a = self.time()?;
            if self.eat('~') {
                self.expect('+')?;
                let b = self.time()?;
                return Ok(Time::RelativeRange(a, b));
            }
            return Ok(Time::Relative(a));
        }
        let a = self.time()?;
        if self.eat('~') {
            let b = self.time()?;
            return Ok(Time::AbsoluteRange(a, b));
        }
        Ok(Time::Absolute(a))
    }

    fn event(&mut self) -> R<Event> {
        let (line, col) = self.pos();
        // `opt_init_command` and `opt_cleanup_command`: a command without a time.
        if let Some(Tok::Command(c)) = self.peek() {
            let action = Action::Command(c.clone());
            self.i += 1;
            let time = Time::Relative(0);
            return Ok(Event {
                line,
                col,
                time,
                action,
            });
        }
        let time = self.event_time()?;
        if let Time::AbsoluteRange(a, b) | Time::RelativeRange(a, b) = time
            && b < a
        {
            return Err(SyntaxError {
                line,
                col,
                msg: "time range is backwards".into(),
            });
        }
        let action = match self.peek() {
            Some(Tok::Punct('<')) => self.packet(false, line)?,
            Some(Tok::Punct('>')) => self.packet(true, line)?,
            Some(Tok::Command(c)) => {
                let c = c.clone();
                self.i += 1;
                Action::Command(c)
            }
            Some(Tok::Code(c)) => {
                let c = c.clone();
                self.i += 1;
                Action::Code(c)
            }
            Some(Tok::Word(_) | Tok::Ellipsis) => Action::Syscall(self.syscall()?),
            _ => return self.unexpected("a packet, a syscall, a `command` or %{ code }%"),
        };
        let outbound = matches!(&action, Action::Packet(p) if p.outbound);
        if !outbound && !matches!(action, Action::Unsupported(_)) {
            let what = match time {
                Time::Any => Some("event time <star>"),
                Time::AbsoluteRange(..) | Time::RelativeRange(..) => Some("event time range"),
                _ => None,
            };
            if let Some(w) = what {
                return Err(SyntaxError {
                    line,
                    col,
                    msg: format!("{w} can only be used with outbound packets"),
                });
            }
        }
        Ok(Event {
            line,
            col,
            time,
            action,
        })
    }

    /// Skips the rest of `line`: a construct parsed only to be reported unsupported.
    fn rest_of_line(&mut self, line: usize) {
        while self.t.get(self.i).is_some_and(|t| t.line == line) {
            self.i += 1;
        }
    }

    fn packet(&mut self, outbound: bool, line: usize) -> R<Action> {
        self.i += 1;
        if let Some(Tok::Word(w)) = self.peek()
            && matches!(
                w.as_str(),
                "udp" | "icmp" | "ipv4" | "ipv6" | "gre" | "GREv0" | "mpls" | "encap"
            )
        {
            let w = w.clone();
            self.rest_of_line(line);
            return Ok(Action::Unsupported(format!("`{w}` packets")));
        }
        let ecn = self.ip_info()?;
        if self.word_is("encap") || self.word_is("flowlabel") || self.word_is("ttl") {
            self.rest_of_line(line);
            return Ok(Action::Unsupported(
                "IP header fields other than ECN".into(),
            ));
        }
        let flags = self.flags()?;
        let at = self.i;
        let seq = self.uint("a start sequence number", u32::MAX as u64)? as u32;
        self.expect(':')?;
        let end = self.uint("an end sequence number", u32::MAX as u64)? as u32;
        self.expect('(')?;
        let len = self.uint("a payload length", u16::MAX as u64)? as u32;
        self.expect(')')?;
        if end != seq.wrapping_add(len) {
            self.i = at;
            return self.err(format!(
                "inconsistent TCP sequence numbers and payload size: {seq}:{end}({len})"
            ));
        }
        let mut spec = PacketSpec {
            outbound,
            ecn,
            flags,
            seq,
            len,
            ack: None,
            win: None,
            options: Some(Vec::new()),
        };
        if self.word_is("ack") {
            self.i += 1;
            spec.ack = Some(self.uint("an ack number", u32::MAX as u64)? as u32);
        }
        if self.word_is("win") {
            self.i += 1;
            spec.win = Some(self.uint("a window", u16::MAX as u64)? as u32);
        }
        if self.word_is("urg") {
            self.rest_of_line(line);
            return Ok(Action::Unsupported("the urgent pointer".into()));
        }
        if self.eat('<') {
            spec.options = self.tcp_options()?;
        }
        if !outbound && spec.win.is_none() {
            self.i = at;
            return self.err("window must be specified for inbound packets");
        }
        Ok(Action::Packet(spec))
    }

    fn ip_info(&mut self) -> R<Option<EcnSpec>> {
        let close = match self.peek() {
            Some(Tok::Punct('[')) => ']',
            Some(Tok::Punct('(')) => ')',
            _ => return Ok(None),
        };
        self.i += 1;
        let e = match self.bump() {
            Some(Tok::Word(w)) => match w.as_str() {
                "noecn" => EcnSpec::NotEct,
                "ect0" => EcnSpec::Ect0,
                "ect1" => EcnSpec::Ect1,
                "ect01" => EcnSpec::Ect01,
                "ce" => EcnSpec::Ce,
                _ => {
                    self.i -= 1;
                    return self.unexpected("noecn, ect0, ect1, ect01 or ce");
                }
            },
            _ => {
                self.i -= 1;
                return self.unexpected("noecn, ect0, ect1, ect01 or ce");
            }
        };
        self.expect(close)?;
        Ok(Some(e))
    }

    /// `flags: WORD opt_ack_flag | '.' | '-'`, with letters after the `.` (`S.E`).
    fn flags(&mut self) -> R<String> {
        let mut f = String::new();
        match self.peek() {
            Some(Tok::Punct('-')) => {
                self.i += 1;
                return Ok(f);
            }
            Some(Tok::Word(w)) => {
                f.push_str(w);
                self.i += 1;
                if self.eat('.') {
                    f.push('.');
                }
            }
            Some(Tok::Punct('.')) => {
                self.i += 1;
                f.push('.');
            }
            _ => return self.unexpected("TCP flags"),
        }
        if f.ends_with('.')
            && let Some(Tok::Word(w)) = self.peek()
            && w.chars().all(|c| "EWU".contains(c))
        {
            f.push_str(w);
            self.i += 1;
        }
        if let Some(c) = f.chars().find(|c| !"SFRP.EWU".contains(*c)) {
            return self.err(format!("bad TCP flag `{c}`"));
        }
        Ok(f)
    }

    fn tcp_options(&mut self) -> R<Option<Vec<TcpOpt>>> {
        if self.peek() == Some(&Tok::Ellipsis) {
            self.i += 1;
            self.expect('>')?;
            return Ok(None);
        }
        let mut v = vec![self.tcp_option()?];
        while self.eat(',') {
            v.push(self.tcp_option()?);
        }
        self.expect('>')?;
        Ok(Some(v))
    }

    fn tcp_option(&mut self) -> R<TcpOpt> {
        let Some(Tok::Word(w)) = self.peek() else {
            return self.unexpected("a TCP option");
        };
        let w = w.clone();
        self.i += 1;
        Ok(match w.as_str() {
            "nop" => TcpOpt::Nop,
            "eol" => TcpOpt::Eol,
            "mss" => TcpOpt::Mss(self.uint("an MSS", u16::MAX as u64)? as u16),
            "wscale" => TcpOpt::WScale(self.uint("a window scale", u8::MAX as u64)? as u8),
            "sackOK" => TcpOpt::SackOk,
            "sack" => {
                let mut blocks = Vec::new();
                while matches!(self.peek(), Some(Tok::Int(_))) {
                    let a = self.uint("a SACK block edge", u32::MAX as u64)? as u32;
                    self.expect(':')?;
                    let b = self.uint("a SACK block edge", u32::MAX as u64)? as u32;
                    blocks.push((a, b));
                }
                if blocks.is_empty() {
                    return self.unexpected("a SACK block a:b");
                }
                TcpOpt::Sack(blocks)
            }
            "TS" => {
                if !self.word_is("val") {
                    return self.unexpected("`val`");
                }
                self.i += 1;
                let v = self.uint("a TS val", u32::MAX as u64)? as u32;
                if !self.word_is("ecr") {
                    return self.unexpected("`ecr`");
                }
                self.i += 1;
                let e = self.uint("a TS ecr", u32::MAX as u64)? as u32;
                TcpOpt::Ts(v, e)
            }
            "FO" | "FOEXP" | "md5" | "ECN" | "exp" => {
                while !matches!(self.peek(), Some(Tok::Punct(',' | '>')) | None) {
                    self.i += 1;
                }
                TcpOpt::Unsupported(w)
            }
            _ => {
                self.i -= 1;
                return self.unexpected("a TCP option (nop, eol, mss, wscale, sackOK, sack, TS)");
            }
        })
    }

    fn syscall(&mut self) -> R<SyscallSpec> {
        let mut end_time = None;
        if self.peek() == Some(&Tok::Ellipsis) {
            self.i += 1;
            end_time = Some(self.time()?);
        }
        let Some(Tok::Word(name)) = self.peek() else {
            return self.unexpected("a syscall name");
        };
        let name = name.clone();
        if !SYSCALLS.contains(&name.as_str()) {
            return self.err(format!(
                "unknown syscall `{name}`: packetdrill knows {}",
                SYSCALLS.join(", ")
            ));
        }
        self.i += 1;
        self.expect('(')?;
        let args = self.expr_list(')')?;
        self.expect('=')?;
        let result = self.expr()?;
        let mut errno = None;
        if let Some(Tok::Word(w)) = self.peek() {
            errno = Some(w.clone());
            self.i += 1;
        }
        if self.peek() == Some(&Tok::Punct('(')) {
            self.note()?;
        }
        Ok(SyscallSpec {
            name,
            args,
            result,
            errno,
            end_time,
        })
    }

    /// `note: '(' word_list ')'`: skipped, nested parentheses included.
    fn note(&mut self) -> R<()> {
        let mut depth = 0;
        loop {
            match self.bump() {
                Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct(')')) => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some(_) => {}
                None => return self.err("unterminated note"),
            }
        }
    }

    fn expr_list(&mut self, close: char) -> R<Vec<Expr>> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(self.expr()?);
            if self.eat(close) {
                return Ok(v);
            }
            if !self.eat(',') {
                return self.unexpected(&format!("`,` or `{close}`"));
            }
        }
    }

    fn expr(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        while let Some(Tok::Punct(c @ ('|' | '='))) = self.peek() {
            let c = *c;
            // `= result` ends a syscall's argument list; inside `{}` it names a field.
            if c == '=' && !matches!(e, Expr::Word(_) | Expr::Call(..)) {
                break;
            }
            if c == '=' && self.peek_at(1) == Some(&Tok::Punct('=')) {
                break;
            }
            self.i += 1;
            let r = self.primary()?;
            e = Expr::Binary(c, Box::new(e), Box::new(r));
        }
        Ok(e)
    }

    fn primary(&mut self) -> R<Expr> {
        let Some(t) = self.bump() else {
            return self.unexpected("an expression");
        };
        Ok(match t {
            Tok::Ellipsis => Expr::Ellipsis,
            Tok::Int(i) | Tok::Hex(i) => Expr::Int(i),
            Tok::Str(s) => {
                if self.peek() == Some(&Tok::Ellipsis) {
                    self.i += 1;
                }
                Expr::Str(s)
            }
            Tok::Word(w) if self.peek() == Some(&Tok::Punct('(')) => {
                self.i += 1;
                Expr::Call(w, self.expr_list(')')?)
            }
            Tok::Word(w) => Expr::Word(w),
            Tok::Punct('[') => Expr::List(self.expr_list(']')?),
            Tok::Punct('{') => Expr::Struct(self.expr_list('}')?),
            _ => {
                self.i -= 1;
                return self.unexpected("an expression");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_with_and_without_values() {
        // parser.y: `option_flag '=' option_value | option_flag`, and values such as
        // `WORD=STRING` and IPv6 addresses.
        let s = parse(
            "--strict_segments\n--ip_version=ipv6\n--local_ip=fd::1\n--define=CC=\"reno\"\n\
             --remote_ip=192.0.2.1 --gateway_ip=2001:db8::1\n\
             0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n",
        )
        .unwrap();
        let opts: Vec<(&str, &str)> = s
            .options
            .iter()
            .map(|(n, v, _)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            opts,
            [
                ("strict_segments", ""),
                ("ip_version", "ipv6"),
                ("local_ip", "fd::1"),
                ("define", "CC=\"reno\""),
                ("remote_ip", "192.0.2.1"),
                ("gateway_ip", "2001:db8::1"),
            ]
        );
        assert_eq!(s.events.len(), 1);
    }

    #[test]
    fn unknown_options_and_bad_values_are_refused_at_their_place() {
        // packetdrill's getopt refuses an option it does not know, and config.c a
        // bad tolerance: a script with either is a bad script, not a skipped one.
        let e = parse("--foo_bar=1\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 1));
        assert!(e.msg.contains("unknown option `--foo_bar`"), "{}", e.msg);
        let e = parse("--tolerance_percent=120\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n")
            .unwrap_err();
        assert_eq!((e.line, e.col), (1, 21));
        assert!(e.msg.contains("0 to 100"), "{}", e.msg);
        let e = parse("--tcp_ts_tick_usecs=abc\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n")
            .unwrap_err();
        assert!(e.msg.contains("whole number"), "{}", e.msg);
    }

    #[test]
    fn packets_syscalls_and_times() {
        let s = parse(
            "--tolerance_usecs=10000\n\
             0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
             +.1 < S 0:0(0) win 32792 <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>\n\
             0.2~0.3 > [ect0] P. 1:5841(5840) ack 1 <...>\n\
             +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n\
             +0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n\
             * > S.E 0:0(0) ack 1 <sack 1:2 3:4>\n",
        )
        .unwrap();
        assert_eq!(
            s.options,
            vec![("tolerance_usecs".into(), "10000".into(), 1)]
        );
        assert_eq!(s.events[1].time, Time::Relative(100_000));
        let Action::Packet(p) = &s.events[2].action else {
            panic!()
        };
        assert_eq!(
            (p.flags.as_str(), p.seq, p.len, p.ack),
            ("P.", 1, 5840, Some(1))
        );
        assert_eq!((p.ecn, p.options.is_none()), (Some(EcnSpec::Ect0), true));
        assert_eq!(s.events[2].time, Time::AbsoluteRange(200_000, 300_000));
        let Action::Syscall(c) = &s.events[3].action else {
            panic!()
        };
        assert_eq!(
            (c.result.clone(), c.errno.as_deref()),
            (Expr::Int(-1), Some("EINPROGRESS"))
        );
        let Action::Packet(p) = &s.events[5].action else {
            panic!()
        };
        assert_eq!(p.flags, "S.E");
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S. 0:1(0)\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 9));
        assert!(e.msg.contains("inconsistent"), "{}", e.msg);
        let e = parse("+0 write(4, ..., 10) = 10\n+0 < P 1:11(10) ack 1 win x\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 27));
        let e = parse("+0 < . 1:1(0) ack 1\n").unwrap_err();
        assert!(e.msg.contains("window must be specified"), "{}", e.msg);
        let e = parse("0.2~0.1 > . 1:1(0) ack 1\n").unwrap_err();
        assert!(e.msg.contains("backwards"));
        let e = parse("+0 wirte(4, ..., 10) = 10\n").unwrap_err();
        assert_eq!((e.line, e.col), (1, 4));
        assert!(e.msg.contains("unknown syscall `wirte`"), "{}", e.msg);
    }
}
