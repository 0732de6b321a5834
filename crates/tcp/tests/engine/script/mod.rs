//! Packet scripts: drive one engine (the device under test, "DUT") with segments a
//! scripted peer sends at given times, and check what the DUT sends back and when —
//! the style of packetdrill.
//!
//! Sequence numbers in scripts are relative, as packetdrill prints them: the DUT's
//! SYN is 0 and its first data byte 1; the peer's likewise. The peer's initial
//! sequence number sits just below 2³² so that every script also crosses the
//! sequence-number wrap. Every segment the DUT sends is serialised and parsed back
//! before it is checked, so scripts also exercise the wire format.
//!
//! Time is in milliseconds since the script began. [`Script::at`] moves time forward,
//! firing the DUT's timers on the way, each at its exact deadline.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use gentle_tcp::corrective::{CorrectiveOption, ENCODING_XOR};
use gentle_tcp::wire::{SackBlock, SackBlocks, Timestamps};
use gentle_tcp::{Config, Connection, Flags, Instant, Options, Segment};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

/// The peer's initial sequence number: data crosses 2³² after 4 KiB.
pub const PEER_ISS: u32 = 0xffff_f000;
pub const DUT_PORT: u16 = 80;
pub const PEER_PORT: u16 = 40000;
const DUT_IP: [u8; 4] = [10, 0, 0, 1];
const PEER_IP: [u8; 4] = [10, 0, 0, 2];

/// Relative sequence number of the DUT's `k`-th data segment (from 1) of `mss`
/// bytes: the numbering scripts use to name segments.
pub const fn seg(mss: u32, k: u32) -> u32 {
    1 + (k - 1) * mss
}

/// What the scripted peer offers in its SYN or SYN-ACK.
#[derive(Clone, Copy, Debug)]
pub struct PeerOpts {
    pub mss: Option<u16>,
    pub sack: bool,
    pub timestamps: bool,
    pub wscale: Option<u8>,
    /// Window the peer advertises (bytes, before scaling).
    pub window: u32,
    /// Round-trip time of the handshake, in ms.
    pub rtt: f64,
    /// The peer offers Corrective in its SYN and, once the DUT agrees, puts the
    /// option (flags 0 unless a packet says otherwise) on every later packet.
    pub corrective: bool,
    /// The peer sets ECN up in its SYN (ECE and CWR) or SYN-ACK (ECE), RFC 3168
    /// §6.1.1.
    pub ecn: bool,
}

impl Default for PeerOpts {
    fn default() -> Self {
        PeerOpts {
            mss: Some(1460),
            sack: true,
            timestamps: true,
            wscale: Some(7),
            window: 1 << 20,
            rtt: 100.0,
            corrective: false,
            ecn: false,
        }
    }
}

/// Converts script milliseconds to an engine instant.
pub fn t(ms: f64) -> Instant {
    Instant::from_nanos((ms * 1e6).round() as u64)
}

fn ms_of(i: Instant) -> f64 {
    i.as_nanos() as f64 / 1e6
}

/// A segment the scripted peer sends.
#[derive(Clone, Debug, Default)]
pub struct Pkt {
    pub flags: Flags,
    /// Relative peer sequence number; `None` is the peer's next (its snd.nxt).
    pub seq: Option<u32>,
    /// Relative acknowledgement of the DUT's sequence space.
    pub ack: u32,
    pub len: u32,
    /// SACK blocks, relative to the DUT's sequence space.
    pub sack: Vec<(u32, u32)>,
    /// Window in bytes (scaled down by the peer's shift); `None` uses the default.
    pub window: Option<u32>,
    /// Timestamp echo to send instead of the DUT's latest TSval.
    pub ecr: Option<u32>,
    pub options: Option<Options>,
    /// Payload bytes; `None` sends `len` bytes of `y`.
    pub payload: Option<Bytes>,
    /// The Corrective option to send instead of the default one.
    pub fec: Option<CorrectiveOption>,
    /// Send no Corrective option, as a middlebox that strips it would deliver.
    pub strip_fec: bool,
    /// The IP ECN field the segment arrives with.
    pub ecn: gentle_tcp::Ecn,
}

impl Pkt {
    pub fn payload(mut self, b: Bytes) -> Self {
        self.len = b.len() as u32;
        self.payload = Some(b);
        self
    }
    /// Corrective option flags (and length) for this packet.
    pub fn fec(mut self, flags: u8, length: Option<u32>) -> Self {
        self.fec = Some(CorrectiveOption::Data { flags, length });
        self
    }
    /// The IP ECN field the segment arrives with (CE: a router marked it).
    pub fn ecn(mut self, e: gentle_tcp::Ecn) -> Self {
        self.ecn = e;
        self
    }
    pub fn strip_fec(mut self) -> Self {
        self.strip_fec = true;
        self
    }
    pub fn flags(mut self, f: Flags) -> Self {
        self.flags = f;
        self
    }
    pub fn sack(mut self, blocks: &[(u32, u32)]) -> Self {
        self.sack = blocks.to_vec();
        self
    }
    pub fn window(mut self, bytes: u32) -> Self {
        self.window = Some(bytes);
        self
    }
    pub fn ecr(mut self, ecr: u32) -> Self {
        self.ecr = Some(ecr);
        self
    }
    pub fn seq(mut self, seq: u32) -> Self {
        self.seq = Some(seq);
        self
    }
    pub fn fin(mut self) -> Self {
        self.flags.insert(Flags::FIN);
        self
    }
}

/// A pure ACK from the peer.
pub fn ack(ack: u32) -> Pkt {
    Pkt {
        flags: Flags::ACK,
        ack,
        ..Pkt::default()
    }
}

/// A data segment from the peer: `len` bytes at relative sequence `seq`, acknowledging `ack`.
pub fn data(seq: u32, len: u32, ack: u32) -> Pkt {
    Pkt {
        flags: Flags::ACK | Flags::PSH,
        seq: Some(seq),
        ack,
        len,
        ..Pkt::default()
    }
}

/// What the DUT is expected to send.
#[derive(Clone, Debug, Default)]
pub struct Exp {
    pub flags: Option<Flags>,
    pub seq: Option<u32>,
    pub len: Option<u32>,
    pub ack: Option<u32>,
    pub sack: Option<Vec<(u32, u32)>>,
    pub at: Option<f64>,
}

impl Exp {
    pub fn at(mut self, ms: f64) -> Self {
        self.at = Some(ms);
        self
    }
    pub fn ack(mut self, ack: u32) -> Self {
        self.ack = Some(ack);
        self
    }
    pub fn sack(mut self, blocks: &[(u32, u32)]) -> Self {
        self.sack = Some(blocks.to_vec());
        self
    }
    pub fn no_sack(self) -> Self {
        self.sack(&[])
    }
    pub fn flags(mut self, f: Flags) -> Self {
        self.flags = Some(f);
        self
    }
}

/// Expect a data segment of `len` bytes at relative sequence `seq`.
pub fn tx(seq: u32, len: u32) -> Exp {
    Exp {
        seq: Some(seq),
        len: Some(len),
        ..Exp::default()
    }
}

/// Expect a pure ACK of `ack`.
pub fn pure_ack(ack: u32) -> Exp {
    Exp {
        flags: Some(Flags::ACK),
        len: Some(0),
        ack: Some(ack),
        ..Exp::default()
    }
}

/// The SACK blocks of a DUT segment, relative to the peer's sequence space.
fn sack_rel(seg: &Segment) -> Vec<(u32, u32)> {
    seg.options
        .sack
        .as_slice()
        .iter()
        .map(|b| {
            (
                b.left.wrapping_sub(PEER_ISS),
                b.right.wrapping_sub(PEER_ISS),
            )
        })
        .collect()
}

pub struct Script {
    pub dut: Connection,
    now: Instant,
    out: VecDeque<(Instant, Segment)>,
    dut_iss: u32,
    peer: PeerOpts,
    /// The DUT's latest TSval, echoed by the peer.
    last_tsval: u32,
    /// The peer's next sequence number (relative), past everything it sent.
    peer_nxt: u32,
    buf: Vec<u8>,
}

impl Script {
    fn with(dut: Connection, peer: PeerOpts) -> Self {
        Script {
            dut,
            now: Instant::ZERO,
            out: VecDeque::new(),
            dut_iss: 0,
            peer,
            last_tsval: 0,
            peer_nxt: 1,
            buf: vec![0; 70_000],
        }
    }

    fn peer_syn_options(&self) -> Options {
        let p = &self.peer;
        Options {
            mss: p.mss,
            sack_permitted: p.sack,
            window_scale: p.wscale,
            timestamps: p.timestamps.then(|| Timestamps {
                val: self.peer_tsval(),
                ecr: self.last_tsval,
            }),
            experimental: p.corrective.then(|| {
                CorrectiveOption::Offer {
                    encoding: ENCODING_XOR,
                }
                .to_experimental()
            }),
            ..Options::default()
        }
    }

    fn peer_tsval(&self) -> u32 {
        // The peer's timestamp clock ticks in ms with an offset of its own.
        (self.now.as_millis() as u32).wrapping_add(7_000_000)
    }

    /// The DUT accepts a connection: the peer's SYN arrives at 0 and the SYN-ACK is
    /// checked; the peer's ACK arrives one RTT later.
    pub fn server(cfg: Config, peer: PeerOpts) -> Self {
        let ecn = cfg.ecn && peer.ecn;
        let mut s = Script::syn_received(cfg, peer);
        let synack = Flags::SYN | Flags::ACK;
        s.expect(
            Exp::default()
                .flags(if ecn { synack | Flags::ECE } else { synack })
                .at(0.0),
        );
        s.at(peer.rtt);
        s.send(ack(1));
        assert!(
            s.dut.is_established(),
            "DUT not established after the handshake"
        );
        s
    }

    /// The DUT has received the peer's SYN at 0; its SYN-ACK is queued, unchecked.
    pub fn syn_received(cfg: Config, peer: PeerOpts) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // A placeholder until the SYN is built: only the peer's side matters for it.
        let mut s = Script::with(
            Connection::connect(cfg.clone(), Instant::ZERO, 0, 0, &mut rng),
            peer,
        );
        let syn = s.to_segment(&Pkt {
            flags: if peer.ecn {
                Flags::SYN | Flags::ECE | Flags::CWR
            } else {
                Flags::SYN
            },
            seq: Some(0),
            options: Some(s.peer_syn_options()),
            ..Pkt::default()
        });
        s.dut = Connection::accept(cfg, Instant::ZERO, &syn, &mut rng).expect("accept");
        s.dut_iss = s.dut.iss();
        s.drain();
        s
    }

    /// The DUT opens a connection at 0; its SYN is queued, unchecked.
    pub fn connecting(cfg: Config, peer: PeerOpts) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let dut = Connection::connect(cfg, Instant::ZERO, DUT_PORT, PEER_PORT, &mut rng);
        let mut s = Script::with(dut, peer);
        s.dut_iss = s.dut.iss();
        s.drain();
        s
    }

    /// The DUT opens a connection: SYN at 0, the peer's SYN-ACK one RTT later, the
    /// DUT's ACK at once.
    pub fn client(cfg: Config, peer: PeerOpts) -> Self {
        let ecn = cfg.ecn;
        let mut s = Script::connecting(cfg, peer);
        let syn = if ecn {
            Flags::SYN | Flags::ECE | Flags::CWR
        } else {
            Flags::SYN
        };
        s.expect(Exp::default().flags(syn).seq(0).at(0.0));
        s.at(peer.rtt);
        let o = s.peer_syn_options();
        s.send(Pkt {
            flags: if peer.ecn {
                Flags::SYN | Flags::ACK | Flags::ECE
            } else {
                Flags::SYN | Flags::ACK
            },
            seq: Some(0),
            ack: 1,
            options: Some(o),
            ..Pkt::default()
        });
        s.expect(pure_ack(1).at(peer.rtt));
        assert!(s.dut.is_established());
        s
    }

    /// Current script time in ms.
    pub fn now(&self) -> f64 {
        ms_of(self.now)
    }

    /// Moves time forward to `ms`, firing every timer that falls due on the way at
    /// its own deadline.
    pub fn at(&mut self, ms: f64) -> &mut Self {
        let target = t(ms);
        assert!(target >= self.now, "script time goes backwards: {ms} ms");
        while let Some(d) = self.dut.poll_timeout() {
            if d > target {
                break;
            }
            self.now = self.now.max(d);
            self.dut.handle_timeout(self.now);
            self.drain();
        }
        self.now = target;
        self
    }

    /// The application on the DUT writes `data`.
    pub fn write_bytes(&mut self, data: Bytes) -> &mut Self {
        assert!(self.dut.write(data));
        self.drain();
        self
    }

    /// Everything the DUT's application can read now.
    pub fn read_bytes(&mut self) -> Vec<u8> {
        let mut v = Vec::new();
        while let Some(b) = self.dut.read() {
            v.extend_from_slice(&b);
        }
        self.drain();
        v
    }

    /// The application on the DUT writes `n` bytes.
    pub fn write(&mut self, n: usize) -> &mut Self {
        assert!(self.dut.write(Bytes::from(vec![b'x'; n])));
        self.drain();
        self
    }

    /// Collects what the DUT has to send after a direct call on `dut`.
    pub fn flush(&mut self) -> &mut Self {
        self.drain();
        self
    }

    /// The application on the DUT closes its side.
    pub fn close(&mut self) -> &mut Self {
        self.dut.close();
        self.drain();
        self
    }

    /// The application on the DUT reads everything readable; returns the byte count.
    pub fn read_all(&mut self) -> usize {
        let mut n = 0;
        while let Some(b) = self.dut.read() {
            n += b.len();
        }
        self.drain();
        n
    }

    fn to_segment(&self, p: &Pkt) -> Segment {
        let shift = self.peer.wscale.unwrap_or(0);
        let win = p.window.unwrap_or(self.peer.window);
        let window = if p.flags.syn() {
            win.min(65535)
        } else {
            (win >> shift).min(65535)
        } as u16;
        let mut options = p.options.unwrap_or_default();
        if p.options.is_none() {
            if self.peer.timestamps {
                options.timestamps = Some(Timestamps {
                    val: self.peer_tsval(),
                    ecr: p.ecr.unwrap_or(self.last_tsval),
                });
            }
            let mut blocks = SackBlocks::new();
            for &(a, b) in &p.sack {
                blocks.push(SackBlock {
                    left: self.dut_iss.wrapping_add(a),
                    right: self.dut_iss.wrapping_add(b),
                });
            }
            options.sack = blocks;
            let fec = match p.fec {
                Some(o) => Some(o),
                None if self.peer.corrective && !p.flags.syn() && self.dut.corrective_enabled() => {
                    Some(CorrectiveOption::Data {
                        flags: 0,
                        length: None,
                    })
                }
                None => None,
            };
            if !p.strip_fec {
                options.experimental = fec.map(|o| o.to_experimental());
            }
        }
        Segment {
            src_port: PEER_PORT,
            dst_port: DUT_PORT,
            seq: PEER_ISS.wrapping_add(p.seq.unwrap_or(self.peer_nxt)),
            ack: if p.flags.ack() {
                self.dut_iss.wrapping_add(p.ack)
            } else {
                0
            },
            flags: p.flags,
            window,
            urgent: 0,
            options,
            payload: p
                .payload
                .clone()
                .unwrap_or_else(|| Bytes::from(vec![b'y'; p.len as usize])),
            ecn: p.ecn,
        }
    }

    /// The peer's segment arrives at the DUT now.
    pub fn send(&mut self, p: Pkt) -> &mut Self {
        let seg = self.to_segment(&p);
        let end = seg.seq.wrapping_sub(PEER_ISS).wrapping_add(seg.seq_len());
        if seg.seq_len() > 0 && (end.wrapping_sub(self.peer_nxt) as i32) > 0 {
            self.peer_nxt = end;
        }
        self.dut.handle_segment(self.now, &seg);
        self.drain();
        self
    }

    /// Collects what the DUT sends now, checking each segment survives the wire.
    fn drain(&mut self) {
        while let Some(seg) = self.dut.poll_transmit(self.now) {
            let n = seg
                .emit(DUT_IP, PEER_IP, &mut self.buf)
                .expect("DUT emitted an unserialisable segment");
            let mut back = Segment::parse_checked(&self.buf[..n], DUT_IP, PEER_IP)
                .expect("DUT segment does not parse");
            back.ecn = seg.ecn; // the IP header's, not in the TCP bytes
            assert_eq!(back, seg, "wire round trip changed the segment");
            if let Some(ts) = seg.options.timestamps {
                self.last_tsval = ts.val;
            }
            self.out.push_back((self.now, seg));
        }
    }

    pub fn rel_seq(&self, seg: &Segment) -> u32 {
        seg.seq.wrapping_sub(self.dut_iss)
    }
    fn rel_ack(&self, seg: &Segment) -> u32 {
        seg.ack.wrapping_sub(PEER_ISS)
    }

    fn describe(&self, at: Instant, seg: &Segment) -> String {
        let sack = sack_rel(seg);
        format!(
            "{:.3} ms {:?} seq {} len {} ack {} sack {:?}",
            ms_of(at),
            seg.flags,
            self.rel_seq(seg),
            seg.payload.len(),
            self.rel_ack(seg),
            sack
        )
    }

    /// Takes the next segment the DUT sent (up to now) and checks it against `e`.
    #[track_caller]
    pub fn expect(&mut self, e: Exp) -> Segment {
        let Some((at, seg)) = self.out.pop_front() else {
            panic!(
                "at {:.3} ms: expected {e:?}, but the DUT sent nothing",
                self.now()
            );
        };
        let d = self.describe(at, &seg);
        if let Some(f) = e.flags {
            // PSH is the sender's choice; compare the rest.
            let mask = !Flags::PSH.0;
            assert_eq!(
                seg.flags.0 & mask,
                f.0 & mask,
                "flags of {d}; expected {e:?}"
            );
        }
        if let Some(s) = e.seq {
            assert_eq!(self.rel_seq(&seg), s, "seq of {d}; expected {e:?}");
        }
        if let Some(l) = e.len {
            assert_eq!(seg.payload.len() as u32, l, "length of {d}; expected {e:?}");
        }
        if let Some(a) = e.ack {
            assert!(seg.flags.ack(), "no ACK flag on {d}");
            assert_eq!(self.rel_ack(&seg), a, "ack of {d}; expected {e:?}");
        }
        if let Some(blocks) = &e.sack {
            let got = sack_rel(&seg);
            assert_eq!(&got, blocks, "SACK blocks of {d}");
        }
        if let Some(ms) = e.at {
            assert!(
                (ms_of(at) - ms).abs() < 1e-6,
                "time of {d}; expected {ms} ms"
            );
        }
        seg
    }

    /// Expects `n` full-sized data segments in a row starting at relative `seq`.
    #[track_caller]
    pub fn expect_burst(&mut self, seq: u32, n: u32, mss: u32, at: f64) -> u32 {
        for i in 0..n {
            self.expect(tx(seq + i * mss, mss).at(at));
        }
        seq + n * mss
    }

    /// Asserts the DUT has sent nothing not yet checked.
    #[track_caller]
    pub fn expect_quiet(&mut self) {
        if let Some((at, seg)) = self.out.front() {
            panic!(
                "at {:.3} ms: expected silence, but the DUT sent {}",
                self.now(),
                self.describe(*at, seg)
            );
        }
    }

    /// Number of segments sent but not yet checked.
    pub fn pending(&self) -> usize {
        self.out.len()
    }

    /// Discards everything sent so far.
    pub fn skip_all(&mut self) {
        self.out.clear();
    }

    /// The DUT's next deadline, in script ms.
    pub fn next_timeout(&self) -> Option<f64> {
        self.dut.poll_timeout().map(ms_of)
    }

    /// The DUT's current RTO.
    pub fn rto_ms(&self) -> f64 {
        self.dut.rto().as_secs_f64() * 1e3
    }

    pub fn last_tsval(&self) -> u32 {
        self.last_tsval
    }
}

impl Exp {
    pub fn seq(mut self, s: u32) -> Self {
        self.seq = Some(s);
        self
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
