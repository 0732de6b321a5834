//! Reading captures: both file formats, every supported link type, IPv4 and IPv6,
//! frames cut by the snap length, and damaged files.

use std::net::IpAddr;

use etherparse::PacketBuilder;
use gentle_analyze::capture::CaptureReader;
use gentle_analyze::decode::{self, Decoded, linktype};
use gentle_analyze::{Analyzer, Options, analyze};

/// An IPv4 TCP packet (no link layer): seq 1000, 300 payload bytes, ACK, a SACK
/// block and timestamps.
fn ipv4_tcp(payload: usize) -> Vec<u8> {
    let mut out = Vec::new();
    PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(80, 40000, 1000, 500)
        .ack(77)
        .options(&[
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Timestamp(5, 6),
        ])
        .expect("options fit")
        .write(&mut out, &vec![0xab; payload])
        .expect("written");
    out
}

fn ipv6_tcp(payload: usize) -> Vec<u8> {
    let mut out = Vec::new();
    PacketBuilder::ipv6([0x20; 16], [0x21; 16], 64)
        .tcp(443, 50000, 7, 100)
        .ack(9)
        .write(&mut out, &vec![1; payload])
        .expect("written");
    out
}

fn ethernet(ip: &[u8], vlan: bool) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
    if vlan {
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
    }
    let et: u16 = if ip[0] >> 4 == 6 { 0x86dd } else { 0x0800 };
    f.extend_from_slice(&et.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

fn sll(ip: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend_from_slice(ip);
    f
}

fn sll2(ip: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
    f.extend_from_slice(ip);
    f
}

/// A legacy pcap file: `(time ns, frame, original length)`.
fn pcap(linktype: u32, nanos: bool, snaplen: u32, frames: &[(u64, Vec<u8>, u32)]) -> Vec<u8> {
    let mut v = Vec::new();
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    v.extend_from_slice(&magic.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&snaplen.to_le_bytes());
    v.extend_from_slice(&linktype.to_le_bytes());
    for (t, f, orig) in frames {
        let frac = if nanos {
            t % 1_000_000_000
        } else {
            t % 1_000_000_000 / 1000
        };
        v.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        v.extend_from_slice(&(frac as u32).to_le_bytes());
        v.extend_from_slice(&(f.len() as u32).to_le_bytes());
        v.extend_from_slice(&orig.to_le_bytes());
        v.extend_from_slice(f);
    }
    v
}

fn block(v: &mut Vec<u8>, kind: u32, body: &[u8]) {
    let pad = (4 - body.len() % 4) % 4;
    let len = (12 + body.len() + pad) as u32;
    v.extend_from_slice(&kind.to_le_bytes());
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(body);
    v.extend_from_slice(&vec![0; pad]);
    v.extend_from_slice(&len.to_le_bytes());
}

/// A pcapng file: interfaces `(linktype, if_tsresol)`, packets `(interface, time
/// units, frame)`.
fn pcapng(ifaces: &[(u16, Option<u8>)], packets: &[(u32, u64, Vec<u8>)]) -> Vec<u8> {
    let mut v = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    block(&mut v, 0x0a0d_0d0a, &shb);
    for &(lt, res) in ifaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&lt.to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&0u32.to_le_bytes());
        if let Some(r) = res {
            idb.extend_from_slice(&9u16.to_le_bytes());
            idb.extend_from_slice(&1u16.to_le_bytes());
            idb.extend_from_slice(&[r, 0, 0, 0]);
            idb.extend_from_slice(&[0, 0, 0, 0]);
        }
        block(&mut v, 1, &idb);
    }
    for (i, t, f) in packets {
        let mut epb = Vec::new();
        epb.extend_from_slice(&i.to_le_bytes());
        epb.extend_from_slice(&((t >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(*t as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(f.len() as u32).to_le_bytes());
        epb.extend_from_slice(f);
        epb.extend_from_slice(&vec![0; (4 - f.len() % 4) % 4]);
        block(&mut v, 6, &epb);
    }
    v
}

/// Every frame of a file: (record, time ns, link type, decoded seq and length).
fn read_all(bytes: &[u8]) -> Vec<(u64, u64, i32, u32, u32, IpAddr)> {
    let mut r = CaptureReader::new(bytes).expect("a capture");
    let mut out = Vec::new();
    while let Some(f) = r.next().expect("readable") {
        match decode::decode(f.linktype, f.ts_ns, f.data) {
            Decoded::Tcp(s, _) => out.push((f.record, f.ts_ns, f.linktype, s.seq, s.len, s.src)),
            other => panic!("record {}: {other:?}", f.record),
        }
    }
    out
}

#[test]
fn pcap_in_microseconds_and_nanoseconds_over_every_link_type() {
    let ip = ipv4_tcp(300);
    for (lt, frame) in [
        (linktype::RAW, ip.clone()),
        (linktype::ETHERNET, ethernet(&ip, false)),
        (linktype::ETHERNET, ethernet(&ip, true)),
        (linktype::LINUX_SLL, sll(&ip)),
        (linktype::LINUX_SLL2, sll2(&ip)),
    ] {
        for nanos in [false, true] {
            let t = 1_700_000_000_123_456_789u64;
            let file = pcap(
                lt as u32,
                nanos,
                65535,
                &[(t, frame.clone(), frame.len() as u32)],
            );
            let got = read_all(&file);
            let want_t = if nanos { t } else { t / 1000 * 1000 };
            assert_eq!(got.len(), 1, "link type {lt}");
            assert_eq!(got[0].1, want_t, "link type {lt}, nanos {nanos}");
            assert_eq!((got[0].3, got[0].4), (1000, 300), "link type {lt}");
            assert_eq!(got[0].5, IpAddr::from([10, 0, 0, 1]));
        }
    }
}

#[test]
fn pcapng_interfaces_keep_their_own_link_type_and_time_resolution() {
    let ip = ipv4_tcp(10);
    let v6 = ipv6_tcp(20);
    let file = pcapng(
        &[(1, None), (276, Some(9)), (229, Some(0x80 | 20))],
        &[
            (0, 5_000_000, ethernet(&v6, true)), // µs: 5 s
            (1, 6_000_000_001, sll2(&ip)),       // ns
            (2, 7 << 20, v6.clone()),            // 2^-20 s units: 7 s
        ],
    );
    let got = read_all(&file);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].1, 5_000_000_000);
    assert_eq!((got[0].2, got[0].4), (linktype::ETHERNET, 20));
    assert_eq!(got[0].5, IpAddr::from([0x20u8; 16]));
    assert_eq!(got[1].1, 6_000_000_001);
    assert_eq!((got[1].2, got[1].3), (linktype::LINUX_SLL2, 1000));
    assert_eq!(got[2].1, 7_000_000_000);
    assert_eq!(got[2].2, linktype::IPV6);
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn a_frame_cut_by_the_snap_length_keeps_its_length_from_the_ip_header() {
    let ip = ipv4_tcp(1400);
    let frame = ethernet(&ip, false);
    // 14 + 20 + 32 bytes of headers, then 10 bytes of payload captured.
    let cut = frame[..14 + 20 + 32 + 10].to_vec();
    let file = pcap(1, false, 76, &[(1_000, cut, frame.len() as u32)]);
    let got = read_all(&file);
    assert_eq!(got[0].4, 1400, "payload length from the IP header");
    // Cut inside the TCP options: malformed, counted, not a panic.
    let short = frame[..14 + 20 + 24].to_vec();
    let mut a = Analyzer::new(Options::default());
    a.frame(1, linktype::ETHERNET, 0, &short, &mut |_| {});
    assert_eq!(a.totals().malformed, 1);
}

#[test]
fn non_tcp_frames_are_skipped_and_a_capture_without_tcp_says_so() {
    let mut udp = Vec::new();
    PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(53, 53)
        .write(&mut udp, &[1, 2, 3])
        .expect("written");
    let arp = {
        let mut f = vec![0xff; 12];
        f.extend_from_slice(&[0x08, 0x06]);
        f.extend_from_slice(&[0; 28]);
        f
    };
    let file = pcap(
        1,
        false,
        65535,
        &[(0, ethernet(&udp, false), 45), (1, arp, 42)],
    );
    let a = analyze(&file[..], Options::default(), &mut |_| {}).expect("readable");
    assert_eq!(
        (a.totals.frames, a.totals.skipped, a.totals.tcp_packets),
        (2, 2, 0)
    );
    assert!(a.totals.unsupported_link_types.is_empty());
    // TCP on a link type gentle does not read (USER0, 147): skipped and named.
    let ip = ipv4_tcp(10);
    let file = pcap(147, false, 65535, &[(0, ip.clone(), 74), (1, ip, 74)]);
    let a = analyze(&file[..], Options::default(), &mut |_| {}).expect("readable");
    assert_eq!((a.totals.skipped, a.totals.tcp_packets), (2, 0));
    assert_eq!(a.totals.unsupported_link_types, [(147, 2)]);
    assert_eq!(linktype::describe(147), "147 (USER0)");
    assert_eq!(linktype::describe(105), "105 (IEEE802_11)");
    assert_eq!(linktype::describe(4242), "4242");
}

#[test]
fn a_file_cut_inside_its_last_record_yields_the_records_before_it() {
    let ip = ipv4_tcp(100);
    let frames: Vec<(u64, Vec<u8>, u32)> =
        (0..3).map(|i| (i, ip.clone(), ip.len() as u32)).collect();
    let file = pcap(101, false, 65535, &frames);
    let rec = 16 + ip.len();
    // Cut inside the third record's data, and inside its 16-byte header.
    for (cut, present) in [(24 + 2 * rec + 30, 30), (24 + 2 * rec + 10, 10)] {
        let mut r = CaptureReader::new(&file[..cut]).expect("header fine");
        assert!(r.cut_short().is_none());
        assert_eq!(r.next().expect("first").map(|f| f.record), Some(1));
        assert_eq!(r.next().expect("second").map(|f| f.record), Some(2));
        assert!(r.next().expect("the cut is not an error").is_none());
        assert!(r.next().expect("still the end").is_none());
        let e = r.cut_short().expect("says where it was cut");
        assert_eq!((e.record, e.offset), (3, (24 + 2 * rec) as u64));
        assert!(
            e.to_string().contains(&format!(
                "record 3 (byte {}): the file ends inside a record ({present} bytes of it present)",
                24 + 2 * rec
            )),
            "{e}"
        );
        assert!(
            e.message.contains("cut short in the middle of a packet"),
            "{e}"
        );
    }
    // pcapng, cut inside its second packet block.
    let ng = pcapng(&[(101, None)], &[(0, 1, ip.clone()), (0, 2, ip.clone())]);
    let mut r = CaptureReader::new(&ng[..ng.len() - 7]).expect("header fine");
    assert!(r.next().expect("first").is_some());
    assert!(r.next().expect("the cut is not an error").is_none());
    assert_eq!(r.cut_short().map(|e| e.record), Some(2));
    // The whole file has no cut.
    let a = analyze(&file[..], Options::default(), &mut |_| {}).expect("whole");
    assert_eq!(a.totals.frames, 3);
    let a = analyze(&file[..24 + 2 * rec + 30], Options::default(), &mut |_| {}).expect("cut");
    assert_eq!(a.totals.frames, 2);
}

#[test]
fn damaged_files_name_the_record_and_the_byte_offset() {
    let ip = ipv4_tcp(100);
    let frames: Vec<(u64, Vec<u8>, u32)> =
        (0..3).map(|i| (i, ip.clone(), ip.len() as u32)).collect();
    let rec = 16 + ip.len();
    // The third record claims 2 GB: a corrupt length, not a cut.
    for big_endian in [false, true] {
        let mut file = pcap(101, false, 65535, &frames);
        let at = 24 + 2 * rec + 8;
        if big_endian {
            // The same file written big-endian: magic and the fields read here.
            file[..4].copy_from_slice(&0xa1b2_c3d4u32.to_be_bytes());
            for k in [24 + 8, 24 + 12, 24 + rec + 8, 24 + rec + 12, at + 4] {
                file[k..k + 4].reverse();
            }
            file[20..24].copy_from_slice(&101u32.to_be_bytes());
            file[16..20].copy_from_slice(&65535u32.to_be_bytes());
        }
        let two_gb = 2_000_000_000u32;
        let bytes = if big_endian {
            two_gb.to_be_bytes()
        } else {
            two_gb.to_le_bytes()
        };
        file[at..at + 4].copy_from_slice(&bytes);
        let mut r = CaptureReader::new(&file[..]).expect("header fine");
        assert!(r.next().expect("first").is_some());
        assert!(r.next().expect("second").is_some());
        let e = r.next().expect_err("third is implausible");
        assert_eq!((e.record, e.offset), (3, (24 + 2 * rec) as u64));
        assert!(
            e.to_string().contains(&format!(
                "record 3 (byte {}): implausible record length of 2000000016 bytes",
                24 + 2 * rec
            )),
            "big-endian {big_endian}: {e}"
        );
        assert!(r.cut_short().is_none());
    }
    // A pcapng block claiming 2 GB.
    let mut ng = pcapng(&[(101, None)], &[(0, 1, ip.clone()), (0, 2, ip.clone())]);
    let second = ng.len() - (12 + 20 + ip.len().div_ceil(4) * 4);
    ng[second + 4..second + 8].copy_from_slice(&0x8000_0000u32.to_le_bytes());
    let mut r = CaptureReader::new(&ng[..]).expect("header fine");
    assert!(r.next().expect("first").is_some());
    let e = r.next().expect_err("implausible");
    assert_eq!((e.record, e.offset), (2, second as u64));
    assert!(
        e.message
            .contains("implausible record length of 2147483648 bytes"),
        "{e}"
    );
    // Ten bytes: shorter than any capture's header, whatever they hold.
    for (head, want) in [
        (&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0][..], ""),
        (b"0123456789", "not a capture: "),
    ] {
        let e = CaptureReader::new(head).err().expect("refused");
        assert_eq!(e.offset, 0);
        assert_eq!(
            e.message,
            format!(
                "{want}10 bytes, too short to be a pcap or pcapng file (a pcap file header \
                 takes 24 bytes, a pcapng section header at least 28)"
            )
        );
    }
    // Not a capture at all.
    let e = CaptureReader::new(&b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..])
        .err()
        .expect("refused");
    assert!(e.message.contains("not a capture"), "{e}");
    // Empty.
    let e = CaptureReader::new(&b""[..]).err().expect("refused");
    assert!(e.message.contains("empty"), "{e}");
    // A pcapng packet on an interface never described.
    let ng = pcapng(&[(101, None)], &[(3, 0, ip.clone())]);
    let mut r = CaptureReader::new(&ng[..]).expect("header fine");
    let e = r.next().expect_err("no interface 3");
    assert!(e.message.contains("interface 3"), "{e}");
}

#[test]
fn long_files_and_records_larger_than_the_buffer_are_read_whole() {
    // 20 MB of ordinary frames, then one 600 kB record (beyond the reader's first
    // buffer), then one more frame.
    let ip = ipv4_tcp(1400);
    let mut frames: Vec<(u64, Vec<u8>, u32)> = (0..14_000)
        .map(|i| (i, ip.clone(), ip.len() as u32))
        .collect();
    let mut jumbo = ip.clone();
    jumbo.resize(600_000, 0);
    frames.push((14_000, jumbo, 600_000));
    frames.push((14_001, ip.clone(), ip.len() as u32));
    let file = pcap(101, false, 1 << 20, &frames);
    assert!(file.len() > 20_000_000);
    let mut r = CaptureReader::new(&file[..]).expect("a capture");
    let mut n = 0u64;
    let mut last = None;
    while let Some(f) = r.next().expect("readable") {
        n += 1;
        last = Some((f.record, f.data.len()));
        if f.record == 14_001 {
            assert_eq!(f.data.len(), 600_000);
        }
    }
    assert_eq!(n, 14_002);
    assert_eq!(last, Some((14_002, ip.len())));
}

/// A pcap file of format 2.2: each record's original length before its captured one.
fn pcap_2_2(frames: &[(u64, Vec<u8>, u32)]) -> Vec<u8> {
    let mut v = pcap(linktype::RAW as u32, false, 65535, frames);
    v[6..8].copy_from_slice(&2u16.to_le_bytes());
    let mut at = 24;
    for (_, f, _) in frames {
        let (a, b) = v[at + 8..at + 16].split_at_mut(4);
        a.swap_with_slice(b);
        at += 16 + f.len();
    }
    v
}

#[test]
fn pcap_format_2_2_is_read_with_its_lengths_swapped_back() {
    let ip = ipv4_tcp(300);
    // Cut by the snap length, so that the two lengths differ.
    let cut = ip[..20 + 32 + 10].to_vec();
    let frames = vec![
        (1_000_000_000, cut.clone(), ip.len() as u32),
        (2_000_000_000, ip.clone(), ip.len() as u32),
        (3_000_000_000, cut, ip.len() as u32),
    ];
    let got = read_all(&pcap_2_2(&frames));
    assert_eq!(got.len(), 3);
    for g in &got {
        assert_eq!((g.3, g.4), (1000, 300));
    }
    assert_eq!(got[2].1, 3_000_000_000);
}

#[test]
fn ppp_and_fddi_frames_are_read() {
    let ip = ipv4_tcp(300);
    let ppp_hdlc = [&[0xff, 0x03, 0x00, 0x21][..], &ip].concat();
    let ppp_bare = [&[0x00, 0x21][..], &ip].concat();
    let mut fddi = vec![0x50];
    fddi.extend_from_slice(&[1; 12]);
    fddi.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00]);
    fddi.extend_from_slice(&ip);
    for (lt, frame) in [
        (linktype::PPP, ppp_hdlc),
        (linktype::PPP, ppp_bare),
        (linktype::FDDI, fddi),
    ] {
        let file = pcap(
            lt as u32,
            false,
            65535,
            &[(1_000, frame.clone(), frame.len() as u32)],
        );
        let got = read_all(&file);
        assert_eq!((got[0].3, got[0].4), (1000, 300), "link type {lt}");
    }
    // PPP carrying something else (LCP, 0xc021) is skipped, not malformed.
    let lcp = [&[0xff, 0x03, 0xc0, 0x21][..], &ip].concat();
    assert!(matches!(
        decode::decode(linktype::PPP, 0, &lcp),
        Decoded::Other
    ));
}

#[test]
fn an_option_running_past_the_header_keeps_the_options_before_it() {
    // NOP, NOP, then a timestamp option claiming 14 bytes where 10 remain.
    let mut ip = ipv4_tcp(0);
    assert_eq!(ip[20 + 22], 8, "the timestamp option's kind");
    ip[20 + 23] = 14;
    match decode::decode(linktype::RAW, 0, &ip) {
        Decoded::Tcp(s, _) => {
            assert!(s.opts.truncated);
            assert_eq!(s.opts.ts, None);
            assert_eq!(s.seq, 1000);
        }
        other => panic!("{other:?}"),
    }
    // An MSS option before the broken one is kept.
    let mut syn = Vec::new();
    PacketBuilder::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .tcp(80, 40000, 1000, 500)
        .syn()
        .ack(77)
        .options(&[
            etherparse::TcpOptionElement::MaximumSegmentSize(1430),
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Noop,
            etherparse::TcpOptionElement::Timestamp(5, 6),
        ])
        .expect("options fit")
        .write(&mut syn, &[])
        .expect("written");
    syn[20 + 27] = 40;
    match decode::decode(linktype::RAW, 0, &syn) {
        Decoded::Tcp(s, _) => assert_eq!(s.opts.mss, Some(1430)),
        other => panic!("{other:?}"),
    }
}
