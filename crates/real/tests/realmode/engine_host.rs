//! gentle's engine as a host on a TUN device, driven directly (no root needed):
//! what it sends is valid IPv4 and TCP with both checksums right, a SYN to its
//! HTTP port is answered and a request served, a segment for no connection gets a
//! reset (RFC 9293 §3.10.7.1), and IPv6, other protocols and damaged packets are
//! counted and dropped — thousands of mutated packets, none of which may panic.

use std::net::Ipv4Addr;

use bytes::Bytes;
use gentle_real::engine_host::{EngineHost, HostShared, Role};
use gentle_real::forward::Host;
use gentle_real::wire;
use gentle_tcp::wire::{Ecn, Flags, Options, ipv4_header_checksum};
use gentle_tcp::{Profile, Segment};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const HOST: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
const PEER: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);

fn host(shared: &HostShared) -> EngineHost {
    let mut h = EngineHost::new(
        HOST,
        PEER,
        Profile::Linux6.config(),
        ChaCha8Rng::seed_from_u64(1),
        Role::Server {
            ports: vec![80],
            plans: Vec::new(),
            default_response: 5000,
        },
        shared.clone(),
    );
    h.start(0);
    h
}

fn seg(sport: u16, dport: u16, seq: u32, ack: u32, flags: Flags, payload: &[u8]) -> Segment {
    let mut options = Options::default();
    if flags.syn() {
        options.mss = Some(1460);
        options.sack_permitted = true;
        options.window_scale = Some(7);
    }
    Segment {
        src_port: sport,
        dst_port: dport,
        seq,
        ack,
        flags,
        window: 65535,
        urgent: 0,
        options,
        payload: Bytes::copy_from_slice(payload),
        ecn: Ecn::NotEct,
    }
}

/// The peer's packet, as the kernel would write it.
fn packet(s: &Segment) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    let n = s
        .emit_ipv4(PEER.octets(), HOST.octets(), 7, &mut b)
        .expect("fits");
    b.truncate(n);
    b
}

/// Everything the host sends now, checked and parsed.
fn sent(h: &mut EngineHost, now: u64) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut b = [0u8; 2048];
    while let Some(n) = h.transmit(now, &mut b) {
        let p = &b[..n];
        assert_eq!(p[0], 0x45, "IPv4, 20-byte header");
        assert_eq!(ipv4_header_checksum(&p[..20]), 0, "IPv4 header checksum");
        assert_eq!(u16::from_be_bytes([p[2], p[3]]) as usize, n, "total length");
        let v = wire::parse(p).expect("IPv4 TCP");
        assert_eq!((v.src, v.dst), (HOST, PEER));
        let s = Segment::parse_checked(&p[20..n], HOST.octets(), PEER.octets())
            .expect("TCP checksum right");
        out.push(s);
    }
    out
}

#[test]
fn handshake_and_an_http_response_with_valid_checksums() {
    let shared = HostShared::default();
    let mut h = host(&shared);
    let isn = 1000u32;
    h.receive(1_000_000, &packet(&seg(40000, 80, isn, 0, Flags::SYN, b"")));
    let synack = sent(&mut h, 1_000_000);
    assert_eq!(synack.len(), 1);
    let sa = &synack[0];
    assert!(sa.flags.syn() && sa.flags.ack());
    assert_eq!(sa.ack, isn + 1);
    assert!(sa.options.sack_permitted, "SACK offered back");
    let req = b"GET /5000 HTTP/1.1\r\nHost: 10.77.0.1\r\n\r\n";
    let mut ack = seg(40000, 80, isn + 1, sa.seq + 1, Flags::ACK, b"");
    h.receive(2_000_000, &packet(&ack));
    ack.payload = Bytes::copy_from_slice(req);
    h.receive(2_000_000, &packet(&ack));
    let data = sent(&mut h, 2_000_000);
    let bytes: Vec<u8> = data.iter().flat_map(|s| s.payload.to_vec()).collect();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text:.80}");
    assert!(text.contains("Content-Length: 5000\r\n"));
    let body = &bytes[text.find("\r\n\r\n").unwrap() + 4..];
    // IW10 of 1448-byte segments (the peer offered no timestamps): all of it.
    assert_eq!(body.len(), 5000);
    assert!(body.iter().all(|&b| b == b'g'));
    let r = shared.report.lock().unwrap();
    assert_eq!(r.http.len(), 1);
    assert_eq!(r.http[0].request, "GET /5000 HTTP/1.1");
    assert_eq!((r.malformed, r.ignored, r.resets_sent), (0, 0, 0));
}

/// A request's body (here one that reads like a request) is not taken for the next
/// request, and `Connection: close` is seen in any case: a POST is refused with
/// its body dropped, the GET after it answered and the connection closed.
#[test]
fn a_request_body_is_not_read_as_a_request() {
    let shared = HostShared::default();
    let mut h = host(&shared);
    let isn = 1000u32;
    h.receive(1_000_000, &packet(&seg(40000, 80, isn, 0, Flags::SYN, b"")));
    let sa = sent(&mut h, 1_000_000).remove(0);
    let body = "GET /777 HTTP/1.1\r\n\r\n";
    let req = format!(
        "POST /1 HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}GET /3 HTTP/1.1\r\nCONNECTION: Close\r\n\r\n",
        body.len()
    );
    let ack = seg(40000, 80, isn + 1, sa.seq + 1, Flags::ACK, req.as_bytes());
    h.receive(2_000_000, &packet(&ack));
    let first = sent(&mut h, 2_000_000);
    let text: Vec<u8> = first.iter().flat_map(|s| s.payload.to_vec()).collect();
    let text = String::from_utf8_lossy(&text).into_owned();
    assert!(text.starts_with("HTTP/1.1 405 "), "{text}");
    // The response acknowledged, the next request is answered.
    let mut ack = seg(40000, 80, isn + 1 + req.len() as u32, 0, Flags::ACK, b"");
    ack.ack = sa.seq + 1 + text.len() as u32;
    h.receive(3_000_000, &packet(&ack));
    let second = sent(&mut h, 3_000_000);
    let bytes: Vec<u8> = second.iter().flat_map(|s| s.payload.to_vec()).collect();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.contains("Content-Length: 3\r\nConnection: close\r\n"),
        "{text}"
    );
    assert!(
        second.iter().any(|s| s.flags.fin()),
        "the connection closes"
    );
    let r = shared.report.lock().unwrap();
    let requests: Vec<&str> = r.http.iter().map(|x| x.request.as_str()).collect();
    assert_eq!(requests, ["POST /1 HTTP/1.1", "GET /3 HTTP/1.1"]);
}

#[test]
fn segments_for_no_connection_get_a_reset() {
    let shared = HostShared::default();
    let mut h = host(&shared);
    // A SYN to a port nobody listens on: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
    h.receive(0, &packet(&seg(40001, 81, 500, 0, Flags::SYN, b"")));
    let r = sent(&mut h, 0);
    assert_eq!(r.len(), 1);
    assert!(r[0].flags.rst() && r[0].flags.ack());
    assert_eq!((r[0].seq, r[0].ack), (0, 501));
    assert_eq!((r[0].src_port, r[0].dst_port), (81, 40001));
    // An ACK for no connection: <SEQ=SEG.ACK><CTL=RST>.
    h.receive(0, &packet(&seg(40002, 80, 9, 77, Flags::ACK, b"x")));
    let r = sent(&mut h, 0);
    assert_eq!(r.len(), 1);
    assert!(r[0].flags.rst() && !r[0].flags.ack());
    assert_eq!(r[0].seq, 77);
    // A reset is never answered.
    h.receive(0, &packet(&seg(40003, 80, 9, 0, Flags::RST, b"")));
    assert!(sent(&mut h, 0).is_empty());
    assert_eq!(shared.report.lock().unwrap().resets_sent, 2);
}

#[test]
fn foreign_and_damaged_packets_are_counted_and_dropped() {
    let shared = HostShared::default();
    let mut h = host(&shared);
    let good = packet(&seg(40000, 80, 1, 0, Flags::SYN, b""));
    // IPv6 (a router solicitation's first bytes), UDP, ICMP.
    let mut v6 = vec![0u8; 48];
    v6[0] = 0x60;
    h.receive(0, &v6);
    for proto in [17u8, 1] {
        let mut p = good.clone();
        p[9] = proto;
        h.receive(0, &p);
    }
    // TCP to another address.
    let mut other = good.clone();
    other[19] = 99;
    h.receive(0, &other);
    // A bad TCP checksum, a bad IP header checksum, a truncated header.
    let mut bad_tcp = good.clone();
    bad_tcp[20 + 16] ^= 0xff;
    h.receive(0, &bad_tcp);
    let mut bad_ip = good.clone();
    bad_ip[8] = 1; // TTL changed, checksum not
    h.receive(0, &bad_ip);
    h.receive(0, &good[..30]);
    assert!(sent(&mut h, 0).is_empty(), "nothing answered");
    let r = shared.report.lock().unwrap();
    assert_eq!(r.ignored, 4, "IPv6, UDP, ICMP, another address");
    assert_eq!(r.malformed, 3, "bad checksums and a truncated header");
    assert_eq!(r.connections, 0);
}

#[test]
fn mutated_packets_never_panic() {
    let shared = HostShared::default();
    let mut h = host(&shared);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut base = vec![packet(&seg(40000, 80, 1, 0, Flags::SYN, b""))];
    base.push(packet(&seg(
        40000,
        80,
        2,
        1,
        Flags::ACK,
        b"GET / HTTP/1.1\r\n\r\n",
    )));
    for i in 0..5000u64 {
        let mut p = base[(i % 2) as usize].clone();
        for _ in 0..rng.gen_range(1..6) {
            let k = rng.gen_range(0..p.len());
            p[k] = rng.r#gen();
        }
        if rng.gen_bool(0.2) {
            p.truncate(rng.gen_range(0..p.len()));
        }
        h.receive(i * 1000, &p);
        let _ = sent(&mut h, i * 1000);
        if let Some(t) = h.next_timeout() {
            h.on_timeout(t.max(i * 1000));
            let _ = sent(&mut h, t.max(i * 1000));
        }
    }
    let r = shared.report.lock().unwrap();
    assert_eq!(r.received, 5000);
    assert!(
        r.malformed > 1000,
        "most mutations are caught by a checksum: {}",
        r.malformed
    );
}
