//! Packet lines: inbound ones built and injected, outbound ones matched against
//! what the engine sent (`run_packet.c`: `map_inbound_packet`,
//! `verify_outbound_live_packet`, and TSO/GSO aggregates as one burst).

use bytes::{Bytes, BytesMut};
use gentle_tcp::wire::{SackBlock, SackBlocks, Timestamps};
use gentle_tcp::{Connection, Ecn, Flags, Instant, Options, Segment};

use super::ast::{EcnSpec, PacketSpec, TcpOpt, Time};
use super::run::{DUT_PORT, Failure, PEER_ISN, PEER_PORT, Runner, Sent, Step, Stop, secs, us};
use super::sysctl::EcnMode;

/// The flags a script writes (`S`, `F`, `R`, `P`, `.` for ACK, `U`, `E`, `W`).
pub fn flags_of(s: &str) -> Flags {
    let mut f = Flags::empty();
    for c in s.chars() {
        f.insert(match c {
            'S' => Flags::SYN,
            'F' => Flags::FIN,
            'R' => Flags::RST,
            'P' => Flags::PSH,
            '.' => Flags::ACK,
            'U' => Flags::URG,
            'E' => Flags::ECE,
            'W' => Flags::CWR,
            _ => Flags::empty(),
        });
    }
    f
}

/// Flags as packetdrill prints them (`tcp_flags_to_string`).
pub fn flags_str(f: Flags) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (Flags::FIN, 'F'),
        (Flags::SYN, 'S'),
        (Flags::RST, 'R'),
        (Flags::PSH, 'P'),
        (Flags::ACK, '.'),
        (Flags::URG, 'U'),
        (Flags::ECE, 'E'),
        (Flags::CWR, 'W'),
    ] {
        if f.contains(bit) {
            s.push(c);
        }
    }
    s
}

const HEADER_FLAGS: u16 = 0xff;

fn ecn_name(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "noecn",
        Ecn::Ect0 => "ect0",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

fn opts_str(o: &[TcpOpt]) -> String {
    let v: Vec<String> = o
        .iter()
        .map(|o| match o {
            TcpOpt::Nop => "nop".into(),
            TcpOpt::Eol => "eol".into(),
            TcpOpt::Mss(m) => format!("mss {m}"),
            TcpOpt::WScale(w) => format!("wscale {w}"),
            TcpOpt::SackOk => "sackOK".into(),
            TcpOpt::Sack(b) => {
                let b: Vec<String> = b.iter().map(|(l, r)| format!("{l}:{r}")).collect();
                format!("sack {}", b.join(" "))
            }
            TcpOpt::Ts(v, e) => format!("TS val {v} ecr {e}"),
            TcpOpt::Unsupported(n) => n.clone(),
        })
        .collect();
    format!("<{}>", v.join(","))
}

/// A packet line as packetdrill prints one.
pub fn spec_str(p: &PacketSpec, t_us: i64) -> String {
    let mut s = secs(t_us);
    if let Some(e) = p.ecn {
        s += &format!(" [{e:?}]").to_lowercase();
    }
    let flags = if p.flags.is_empty() { "-" } else { &p.flags };
    s += &format!(
        " {flags} {}:{}({})",
        p.seq,
        p.seq.wrapping_add(p.len),
        p.len
    );
    if let Some(a) = p.ack {
        s += &format!(" ack {a}");
    }
    if let Some(w) = p.win {
        s += &format!(" win {w}");
    }
    match &p.options {
        None => s += " <...>",
        Some(o) if o.is_empty() => {}
        Some(o) => s += &format!(" {}", opts_str(o)),
    }
    s
}

impl Runner<'_> {
    /// The outbound options of `seg` in wire order, mapped into script space.
    fn wire_options(&self, seg: &Segment, raw: Option<&[u8]>) -> Vec<TcpOpt> {
        if let Some(raw) = raw {
            return self.options_of(raw);
        }
        let mut buf = vec![0u8; 60 + seg.payload.len()];
        let Ok(n) = seg.emit([10, 0, 0, 1], [10, 0, 0, 2], &mut buf) else {
            return vec![TcpOpt::Unsupported("unserialisable".into())];
        };
        let hl = ((buf[12] >> 4) as usize * 4).min(n);
        self.options_of(&buf[20..hl])
    }

    /// TCP options' wire bytes, in script space.
    fn options_of(&self, o: &[u8]) -> Vec<TcpOpt> {
        let mut i = 0;
        let mut v = Vec::new();
        let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        while i < o.len() {
            match o[i] {
                0 => {
                    v.push(TcpOpt::Eol);
                    i += 1;
                    continue;
                }
                1 => {
                    v.push(TcpOpt::Nop);
                    i += 1;
                    continue;
                }
                _ => {}
            }
            let len = o.get(i + 1).copied().unwrap_or(2).max(2) as usize;
            let d = &o[(i + 2).min(o.len())..(i + len).min(o.len())];
            v.push(match (o[i], d.len()) {
                (2, 2) => TcpOpt::Mss(u16::from_be_bytes([d[0], d[1]])),
                (3, 1) => TcpOpt::WScale(d[0]),
                (4, 0) => TcpOpt::SackOk,
                (5, _) => TcpOpt::Sack(
                    d.chunks_exact(8)
                        .map(|c| {
                            let l = be32(&c[..4]).wrapping_sub(PEER_ISN);
                            (l, be32(&c[4..]).wrapping_sub(PEER_ISN))
                        })
                        .collect(),
                ),
                (8, 8) => {
                    let val = match self.ts_first {
                        Some((s, a)) => s.wrapping_add(be32(d).wrapping_sub(a)),
                        None => be32(d),
                    };
                    TcpOpt::Ts(val, be32(&d[4..]))
                }
                (k, _) => TcpOpt::Unsupported(format!("kind {k}")),
            });
            i += len;
        }
        v
    }

    /// The engine's segment as packetdrill prints a live packet, in script space.
    pub(super) fn seg_str(&self, at: Instant, seg: &Segment, raw: Option<&[u8]>) -> String {
        let mut s = secs(us(at));
        if seg.ecn != Ecn::NotEct {
            s += &format!(" [{}]", ecn_name(seg.ecn));
        }
        let f = flags_str(Flags(seg.flags.0 & HEADER_FLAGS));
        let seq = seg.seq.wrapping_sub(self.dut_iss);
        let len = seg.payload.len() as u32;
        s += &format!(
            " {} {seq}:{}({len})",
            if f.is_empty() { "-" } else { &f },
            seq + len
        );
        if seg.flags.ack() {
            s += &format!(" ack {}", seg.ack.wrapping_sub(PEER_ISN));
        }
        s += &format!(" win {}", seg.window);
        let o = self.wire_options(seg, raw);
        if !o.is_empty() {
            s += &format!(" {}", opts_str(&o));
        }
        s
    }

    /// Builds the live segment of an inbound line.
    pub(super) fn inbound_segment(&self, p: &PacketSpec) -> Step<Segment> {
        let flags = flags_of(&p.flags);
        let mut o = Options::default();
        for opt in p.options.iter().flatten() {
            match opt {
                TcpOpt::Nop | TcpOpt::Eol => {}
                TcpOpt::Mss(m) => o.mss = Some(*m),
                TcpOpt::WScale(w) => o.window_scale = Some(*w),
                TcpOpt::SackOk => o.sack_permitted = true,
                TcpOpt::Sack(b) => {
                    let mut blocks = SackBlocks::new();
                    for &(l, r) in b {
                        blocks.push(SackBlock {
                            left: self.dut_iss.wrapping_add(l),
                            right: self.dut_iss.wrapping_add(r),
                        });
                    }
                    o.sack = blocks;
                }
                TcpOpt::Ts(val, ecr) => {
                    let ecr = match (self.ts_map.get(ecr), self.ts_first) {
                        (Some(live), _) => *live,
                        (None, Some((s, a))) if *ecr != 0 => a.wrapping_add(ecr.wrapping_sub(s)),
                        _ => *ecr,
                    };
                    o.timestamps = Some(Timestamps { val: *val, ecr });
                }
                TcpOpt::Unsupported(n) => {
                    return Err(self.skip(format!("inbound TCP option `{n}` not modelled")));
                }
            }
        }
        let (local, remote) = match &self.conn {
            Some(c) => (c.local_port(), c.remote_port()),
            None => (DUT_PORT, PEER_PORT),
        };
        Ok(Segment {
            src_port: remote,
            dst_port: local,
            seq: PEER_ISN.wrapping_add(p.seq),
            ack: if flags.ack() {
                self.dut_iss.wrapping_add(p.ack.unwrap_or(0))
            } else {
                0
            },
            flags,
            window: p.win.unwrap_or(0) as u16,
            urgent: 0,
            options: o,
            payload: Bytes::from(vec![0u8; p.len as usize]),
            ecn: match p.ecn {
                None | Some(EcnSpec::NotEct) => Ecn::NotEct,
                Some(EcnSpec::Ect0 | EcnSpec::Ect01) => Ecn::Ect0,
                Some(EcnSpec::Ect1) => Ecn::Ect1,
                Some(EcnSpec::Ce) => Ecn::Ce,
            },
        })
    }

    /// Injects an inbound packet: into the connection, or a SYN into a listener.
    pub(super) fn inbound(&mut self, p: &PacketSpec) -> Step {
        let seg = self.inbound_segment(p)?;
        let now = self.now;
        if let Some(c) = self.conn.as_mut()
            && !c.is_closed()
        {
            c.handle_segment(now, &seg);
            self.drain();
            return Ok(());
        }
        let Some(l) = self.listener.filter(|_| self.conn.is_none()) else {
            self.reset_reply(&seg);
            return Ok(());
        };
        let mut cfg = self.socks[&l].cfg.clone();
        cfg.ecn = self.sys.ecn != EcnMode::Off;
        match Connection::accept(cfg, now, &seg, &mut self.rng) {
            Some(c) => {
                self.dut_iss = c.iss();
                self.conn = Some(c);
                self.drain();
                Ok(())
            }
            None => Err(self.skip("a non-SYN packet to a listener (its RST) not modelled")),
        }
    }

    /// The kernel's answer to a segment for no connection (RFC 9293 §3.10.7.1,
    /// Linux `tcp_v4_send_reset`): RST at the segment's ACK, or RST-ACK of it.
    fn reset_reply(&mut self, seg: &Segment) {
        if seg.flags.rst() {
            return;
        }
        let (seq, ack, flags) = if seg.flags.ack() {
            (seg.ack, 0, Flags::RST)
        } else {
            let len = seg.seq_len();
            (
                0,
                seg.seq.wrapping_add(len),
                Flags(Flags::RST.0 | Flags::ACK.0),
            )
        };
        let rst = Segment {
            src_port: seg.dst_port,
            dst_port: seg.src_port,
            seq,
            ack,
            flags,
            ..Segment::default()
        };
        self.out.push_back((self.now, rst, None));
    }

    /// Takes the engine's next segment, joined with the segments sent right after
    /// it at the same instant while the script's packet is longer: what a kernel
    /// with TSO/GSO would have sent as one packet.
    fn take_aggregate(&mut self, want: u32) -> Option<Sent> {
        let (t, mut seg, raw) = self.out.pop_front()?;
        // The last segment may carry the FIN: Linux's `tcp_send_fin` sets it on the
        // tail skb when that is not sent yet, so data and FIN leave as one packet.
        let rest = |s: &Segment| s.flags.0 & !(Flags::PSH.0 | Flags::FIN.0);
        let same = |a: &Segment, b: &Segment| rest(a) == rest(b);
        while (seg.payload.len() as u32) < want && !seg.flags.fin() {
            let Some((t2, next, _)) = self.out.front() else {
                break;
            };
            let contiguous = next.seq == seg.seq.wrapping_add(seg.payload.len() as u32);
            let same_time = *t2 == t || self.aggregate_across_time;
            if !same_time || !contiguous || next.ack != seg.ack || !same(&seg, next) {
                break;
            }
            let (_, next, _) = self.out.pop_front().expect("front exists");
            let mut b = BytesMut::from(&seg.payload[..]);
            b.extend_from_slice(&next.payload);
            seg.payload = b.freeze();
            // packetdrill's `aggregate_packets` takes the headers of the last
            // packet (the sequence number and CWR of the first).
            seg.flags = Flags(
                (seg.flags.0 & !(Flags::PSH.0 | Flags::FIN.0))
                    | (next.flags.0 & (Flags::PSH.0 | Flags::FIN.0)),
            );
        }
        Some((t, seg, raw))
    }

    /// Checks the next outbound packet against `p`, expected in `[lo, hi]` (µs).
    pub(super) fn outbound(&mut self, p: &PacketSpec, time: Time, lo: i64, hi: i64) -> Step {
        let tol = self.tolerance_us;
        let limit = hi.saturating_add(tol).saturating_add(600_000_000);
        self.advance_until_sent(Instant::from_nanos(limit.max(0) as u64 * 1000));
        let Some((at, seg, raw)) = self.take_aggregate(p.len) else {
            return Err(Stop::Fail(Failure {
                line: self.line,
                msg: format!(
                    "expected an outbound packet, but the {} sent none",
                    self.stack
                ),
                expected: Some(spec_str(p, lo)),
                actual: None,
                time_us: lo,
            }));
        };
        let r = self
            .compare(p, &seg, raw.as_deref())
            .and_then(|()| self.check_time(time, lo, hi, us(at)));
        if let Err(msg) = r {
            return Err(Stop::Fail(Failure {
                line: self.line,
                msg,
                expected: Some(spec_str(p, lo)),
                actual: Some(self.seg_str(at, &seg, raw.as_deref())),
                time_us: us(at),
            }));
        }
        self.remember_ts(p, &seg);
        self.now = self.now.max(at);
        self.burst_goes_on(at, &seg)
    }

    /// After the last `>` line nothing more is checked (as packetdrill), but data
    /// sent at the same instant right after the line's packet belongs to the same
    /// burst — what a kernel with TSO sends as one packet, longer than the line's.
    fn burst_goes_on(&self, at: Instant, seg: &Segment) -> Step {
        let Some((t, next, raw)) = self.out.front() else {
            return Ok(());
        };
        let end = seg.seq.wrapping_add(seg.payload.len() as u32);
        // A packet ends where PSH is: a TSO packet's last segment, or the end of
        // the data written (`tso_psh`).
        if self.outbound_left > 0
            || *t != at
            || next.payload.is_empty()
            || next.seq != end
            || seg.flags.contains(Flags::PSH)
        {
            return Ok(());
        }
        Err(Stop::Fail(Failure {
            line: self.line,
            msg: "unexpected outbound packet: the burst goes on past the line's packet".into(),
            expected: None,
            actual: Some(self.seg_str(*t, next, raw.as_deref())),
            time_us: us(*t),
        }))
    }

    fn check_time(&self, t: Time, lo: i64, hi: i64, actual: i64) -> Result<(), String> {
        let tol = self.tolerance_at(lo);
        if matches!(t, Time::Any) || (lo - tol <= actual && actual <= hi + tol) {
            return Ok(());
        }
        let when = if lo == hi {
            format!("at {} sec", secs(lo))
        } else {
            format!("in time range {}~{} sec", secs(lo), secs(hi))
        };
        Err(format!(
            "error handling packet: timing error: expected outbound packet {when} but happened at {} sec; tolerance {} sec",
            secs(actual),
            secs(tol)
        ))
    }

    /// Header fields, then options (`verify_outbound_live_headers`, `…_tcp_options`).
    fn compare(&self, p: &PacketSpec, seg: &Segment, raw: Option<&[u8]>) -> Result<(), String> {
        let field = |name: &str, e: i64, a: i64| {
            if e == a {
                Ok(())
            } else {
                Err(format!(
                    "error handling packet: live packet field {name}: expected: {e} ({e:#x}) vs actual: {a} ({a:#x})"
                ))
            }
        };
        let mask = if self.ignore_psh {
            HEADER_FLAGS & !Flags::PSH.0
        } else {
            HEADER_FLAGS
        };
        let want = Flags(flags_of(&p.flags).0 & mask);
        let got = Flags(seg.flags.0 & mask);
        if want != got {
            return Err(format!(
                "error handling packet: live packet field tcp_flags: expected: {} vs actual: {}",
                flags_str(want),
                flags_str(got)
            ));
        }
        field(
            "tcp_seq",
            p.seq as i64,
            seg.seq.wrapping_sub(self.dut_iss) as i64,
        )?;
        let len = seg.payload.len() as i64;
        if p.len as i64 != len {
            return Err(format!(
                "error handling packet: live packet payload: expected {} bytes vs actual {len} bytes",
                p.len
            ));
        }
        if want.ack() {
            field(
                "tcp_ack_seq",
                p.ack.unwrap_or(0) as i64,
                seg.ack.wrapping_sub(PEER_ISN) as i64,
            )?;
        }
        if let Some(w) = p.win {
            field("tcp_window", w as i64, seg.window as i64)?;
        }
        if let Some(e) = p.ecn {
            let ok = match e {
                EcnSpec::NotEct => seg.ecn == Ecn::NotEct,
                EcnSpec::Ect0 => seg.ecn == Ecn::Ect0,
                EcnSpec::Ect1 => seg.ecn == Ecn::Ect1,
                EcnSpec::Ect01 => matches!(seg.ecn, Ecn::Ect0 | Ecn::Ect1),
                EcnSpec::Ce => seg.ecn == Ecn::Ce,
            };
            if !ok {
                return Err(format!(
                    "error handling packet: live packet field ip_ecn: expected: {e:?} vs actual: {}",
                    ecn_name(seg.ecn)
                ));
            }
        }
        let Some(want) = &p.options else {
            return Ok(());
        };
        let got = self.wire_options(seg, raw);
        if want.len() != got.len()
            || want
                .iter()
                .zip(&got)
                .any(|(w, g)| std::mem::discriminant(w) != std::mem::discriminant(g))
        {
            return Err("error handling packet: bad outbound TCP options".into());
        }
        for (w, g) in want.iter().zip(&got) {
            if let (TcpOpt::Ts(script, _), TcpOpt::Ts(live, _)) = (w, g) {
                self.check_ts_val(*script, *live)?;
            }
            if !matches!(w, TcpOpt::Ts(..)) && w != g {
                return Err(format!(
                    "error handling packet: bad value in outbound TCP option: expected: {} actual: {}",
                    opts_str(std::slice::from_ref(w)),
                    opts_str(std::slice::from_ref(g))
                ));
            }
        }
        Ok(())
    }

    /// With `--tcp_ts_tick_usecs`, the live TS val (in script space, from the first
    /// outbound pair) within the tolerance of the script's: `--tolerance_usecs`, or
    /// `--tolerance_percent` of the time since the script began if larger
    /// (`verify_outbound_tcp_option`).
    fn check_ts_val(&self, script: u32, live: u32) -> Result<(), String> {
        // The first outbound TS val is the baseline of the mapping.
        let (Some(tick), Some(_)) = (self.ts_tick_us, self.ts_first) else {
            return Ok(());
        };
        let off = i64::from((live.wrapping_sub(script) as i32).unsigned_abs());
        // The share of the whole script's time so far, not of the last step's.
        let tol = self.tolerance_over(self.event_us);
        if off * tick > tol {
            return Err(format!(
                "error handling packet: bad outbound TCP timestamp value, tolerance {tol} us (expected TS val {script}, actual {live})"
            ));
        }
        Ok(())
    }

    /// Records the script's TS val for the live one (`set_outbound_ts_val_mapping`).
    fn remember_ts(&mut self, p: &PacketSpec, seg: &Segment) {
        let (Some(live), Some(opts)) = (seg.options.timestamps, &p.options) else {
            return;
        };
        if let Some(TcpOpt::Ts(script, _)) = opts.iter().find(|o| matches!(o, TcpOpt::Ts(..))) {
            self.ts_map.insert(*script, live.val);
            self.ts_first.get_or_insert((*script, live.val));
        }
    }
}
