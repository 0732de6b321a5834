//! `%{ … }%` blocks: packetdrill runs them in Python with the socket's `TCP_INFO`
//! as `tcpi_…` variables (`code.c`). Here `assert` statements over the fields the
//! engine has are evaluated (comparisons, chains such as `a <= x <= b`,
//! arithmetic, `and`/`or`/`not`); any other Python, or a field the engine lacks,
//! makes the script SKIPPED.

use gentle_tcp::{Connection, Instant, State};

use super::run::{Runner, Step};

/// `struct tcp_info` fields the engine can fill (`include/uapi/linux/tcp.h`).
fn field(c: &Connection, now: Instant, name: &str) -> Option<i128> {
    let us = |d: std::time::Duration| d.as_micros() as i128;
    Some(match name {
        "tcpi_last_data_recv" => c.since_data_received(now).as_millis() as i128,
        "tcpi_busy_time" => us(c.busy_time(now)),
        "tcpi_rwnd_limited" => us(c.rwnd_limited_time(now)),
        // The engine's send buffer never fills.
        "tcpi_sndbuf_limited" => 0,
        "tcpi_snd_cwnd" => c.cwnd() as i128,
        // TCP_INFINITE_SSTHRESH before the first reduction.
        "tcpi_snd_ssthresh" => (c.ssthresh() as i128).min(0x7fff_ffff),
        "tcpi_ca_state" => c.ca_state() as i128,
        "tcpi_unacked" => c.packets_out() as i128,
        "tcpi_sacked" => c.sacked_out() as i128,
        "tcpi_lost" => c.lost_out() as i128,
        "tcpi_retrans" => c.retrans_out() as i128,
        "tcpi_total_retrans" => c.counters().retrans_segs as i128,
        "tcpi_reordering" => c.reordering() as i128,
        "tcpi_reord_seen" => c.reord_seen() as i128,
        "tcpi_rto" => us(c.rto()),
        "tcpi_rtt" => us(c.srtt()?),
        "tcpi_snd_mss" => c.smss() as i128,
        "tcpi_advmss" => c.config().mss as i128,
        "tcpi_backoff" => c.backoff() as i128,
        "tcpi_state" => match c.state() {
            State::Established => 1,
            State::SynSent => 2,
            State::SynReceived => 3,
            State::FinWait1 => 4,
            State::FinWait2 => 5,
            State::TimeWait => 6,
            State::Closed => 7,
            State::CloseWait => 8,
            State::LastAck => 9,
            State::Closing => 11,
        },
        _ => return None,
    })
}

fn constant(name: &str) -> Option<i128> {
    Some(match name {
        "TCP_CA_Open" => 0,
        "TCP_CA_Disorder" => 1,
        "TCP_CA_CWR" => 2,
        "TCP_CA_Recovery" => 3,
        "TCP_CA_Loss" => 4,
        "TCP_ESTABLISHED" => 1,
        "True" => 1,
        "False" => 0,
        _ => return None,
    })
}

#[derive(Clone, Debug, PartialEq)]
enum T {
    Num(i128),
    Name(String),
    Op(String),
}

fn tokens(s: &str) -> Result<Vec<T>, String> {
    let c: Vec<char> = s.chars().collect();
    let (mut i, mut v) = (0, Vec::new());
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_ascii_digit() {
            let st = i;
            while i < c.len() && (c[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let t: String = c[st..i].iter().collect();
            let n = match t.strip_prefix("0x") {
                Some(h) => i128::from_str_radix(h, 16),
                None => t.parse(),
            };
            v.push(T::Num(n.map_err(|_| format!("number {t}"))?));
        } else if ch.is_alphabetic() || ch == '_' {
            let st = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            v.push(T::Name(c[st..i].iter().collect()));
        } else {
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            let op = if ["==", "!=", "<=", ">=", "//"].contains(&two.as_str()) {
                two
            } else if "<>+-*/%()&|".contains(ch) {
                ch.to_string()
            } else {
                return Err(format!("`{ch}`"));
            };
            i += op.len();
            v.push(T::Op(op));
        }
    }
    Ok(v)
}

struct Eval<'a> {
    t: Vec<T>,
    i: usize,
    var: &'a dyn Fn(&str) -> Result<i128, String>,
}

impl Eval<'_> {
    fn op(&mut self, o: &str) -> bool {
        let hit = matches!(self.t.get(self.i), Some(T::Op(x) | T::Name(x)) if x == o);
        self.i += hit as usize;
        hit
    }
    fn or(&mut self) -> Result<i128, String> {
        let mut v = self.and()?;
        while self.op("or") {
            let r = self.and()?;
            v = (v != 0 || r != 0) as i128;
        }
        Ok(v)
    }
    fn and(&mut self) -> Result<i128, String> {
        let mut v = self.not()?;
        while self.op("and") {
            let r = self.not()?;
            v = (v != 0 && r != 0) as i128;
        }
        Ok(v)
    }
    fn not(&mut self) -> Result<i128, String> {
        if self.op("not") {
            return Ok((self.not()? == 0) as i128);
        }
        self.cmp()
    }
    /// Python's chained comparisons: `a < b < c` is `a < b and b < c`.
    fn cmp(&mut self) -> Result<i128, String> {
        let mut l = self.bits()?;
        let (mut ok, mut n) = (true, 0);
        while let Some(o) = ["==", "!=", "<=", ">=", "<", ">"]
            .into_iter()
            .find(|o| self.op(o))
        {
            let r = self.bits()?;
            n += 1;
            ok &= match o {
                "==" => l == r,
                "!=" => l != r,
                "<=" => l <= r,
                ">=" => l >= r,
                "<" => l < r,
                _ => l > r,
            };
            l = r;
        }
        Ok(if n > 0 { ok as i128 } else { l })
    }
    fn bits(&mut self) -> Result<i128, String> {
        let mut v = self.sum()?;
        loop {
            if self.op("&") {
                v &= self.sum()?;
            } else if self.op("|") {
                v |= self.sum()?;
            } else {
                return Ok(v);
            }
        }
    }
    fn sum(&mut self) -> Result<i128, String> {
        let mut v = self.prod()?;
        loop {
            if self.op("+") {
                v += self.prod()?;
            } else if self.op("-") {
                v -= self.prod()?;
            } else {
                return Ok(v);
            }
        }
    }
    fn prod(&mut self) -> Result<i128, String> {
        let mut v = self.unary()?;
        loop {
            let o = ["*", "//", "/", "%"].into_iter().find(|o| self.op(o));
            let Some(o) = o else { return Ok(v) };
            let r = self.unary()?;
            if o != "*" && r == 0 {
                return Err("division by zero".into());
            }
            v = match o {
                "*" => v * r,
                "%" => v.rem_euclid(r),
                _ => v.div_euclid(r),
            };
        }
    }
    fn unary(&mut self) -> Result<i128, String> {
        if self.op("-") {
            return Ok(-self.unary()?);
        }
        if self.op("(") {
            let v = self.or()?;
            if !self.op(")") {
                return Err("missing `)`".into());
            }
            return Ok(v);
        }
        match self.t.get(self.i).cloned() {
            Some(T::Num(n)) => {
                self.i += 1;
                Ok(n)
            }
            Some(T::Name(n)) => {
                self.i += 1;
                (self.var)(&n)
            }
            t => Err(format!("unexpected {t:?}")),
        }
    }
}

/// Splits at the first comma outside parentheses: `assert cond, message`.
fn split_message(s: &str) -> &str {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

/// `NAME = expression` (not `==`): a Python assignment.
fn py_assignment(stmt: &str) -> Option<(&str, &str)> {
    let (name, rhs) = stmt.split_once('=')?;
    let name = name.trim();
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident && !rhs.starts_with('=')).then_some((name, rhs.trim()))
}

impl Runner<'_> {
    /// A name in a `%{ }%` block: a constant, a variable the block set, or a
    /// `tcpi_` field of the connection now.
    fn py_var(&self, n: &str) -> Result<i128, String> {
        if let Some(v) = constant(n).or_else(|| self.py_vars.get(n).copied()) {
            return Ok(v);
        }
        if let Some(info) = &self.kernel_info {
            return info
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| *v)
                .ok_or_else(|| n.to_string());
        }
        self.conn
            .as_ref()
            .and_then(|c| field(c, self.now, n))
            .ok_or_else(|| n.to_string())
    }

    /// The value of a Python expression, or the script SKIPPED.
    fn py_value(&self, text: &str) -> Step<i128> {
        let t = tokens(text).map_err(|e| self.skip(format!("Python {e} not modelled")))?;
        let var = |n: &str| self.py_var(n);
        let mut ev = Eval { t, i: 0, var: &var };
        match ev.or() {
            Ok(v) if ev.i == ev.t.len() => Ok(v),
            Ok(_) => Err(self.skip(format!("Python `{text}` not modelled"))),
            Err(n) => Err(self.skip(format!("`{n}` in `{text}` not modelled"))),
        }
    }

    /// Runs a `%{ … }%` block's assertions against the connection's state.
    pub(super) fn code(&mut self, code: &str) -> Step {
        let joined = code.replace("\\\n", " ");
        for stmt in joined
            .split(['\n', ';'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            if stmt.starts_with('#') {
                continue;
            }
            if let Some((name, rhs)) = py_assignment(stmt) {
                let v = self.py_value(rhs)?;
                self.py_vars.insert(name.to_string(), v);
                continue;
            }
            let Some(cond) = stmt.strip_prefix("assert ") else {
                return Err(self.skip(format!("Python `{stmt}` not modelled")));
            };
            let cond = split_message(cond);
            let mut missing = None;
            let var = |n: &str| self.py_var(n);
            let t = tokens(cond).map_err(|e| self.skip(format!("Python {e} not modelled")))?;
            let mut ev = Eval { t, i: 0, var: &var };
            let v = match ev.or() {
                Ok(v) if ev.i == ev.t.len() => v,
                Ok(_) => return Err(self.skip(format!("Python `{cond}` not modelled"))),
                Err(n) => {
                    missing = Some(n);
                    0
                }
            };
            if let Some(n) = missing {
                return Err(self.skip(format!("`{n}` in `assert {cond}` not modelled")));
            }
            if v == 0 {
                let vals: Vec<String> =
                    ev.t.iter()
                        .filter_map(|t| match t {
                            T::Name(n) if n.starts_with("tcpi_") => {
                                var(n).ok().map(|v| format!("{n} = {v}"))
                            }
                            _ => None,
                        })
                        .collect();
                return Err(self.fail(format!(
                    "assertion failed: {cond} (actual: {})",
                    vals.join(", ")
                )));
            }
        }
        Ok(())
    }
}
