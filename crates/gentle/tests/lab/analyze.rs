//! `gentle analyze`: the accuracy of its retransmission causes against the engine's
//! trace, its agreement with Wireshark's TCP analysis where the definitions
//! coincide, its outputs, and its errors. tshark is required (`.ci/run` installs
//! it).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{frontend_capture, gentle, record_offset};
use gentle_lab::programs::analyze_accuracy;

/// A fresh path for gentle to create, removed with its scratch directory.
fn tmp(name: &str) -> crate::common::Fresh {
    crate::common::fresh(name)
}

#[test]
fn retransmission_causes_match_the_engines_account() {
    let ms = analyze_accuracy::run(400);
    for m in &ms {
        let floor = if ["linux-2.6", "linux-3.10", "linux-6"].contains(&m.variant.as_str()) {
            99.0
        } else {
            98.0
        };
        assert!(
            m.accuracy() >= floor,
            "{}: {:.2}% of {} retransmissions (floor {floor}%)\n{}",
            m.variant,
            m.accuracy(),
            m.total(),
            analyze_accuracy::text(&ms, 400)
        );
        assert_eq!(m.false_alarms, 0, "{}", m.variant);
        assert!(m.total() >= 300, "{}: a corpus of {}", m.variant, m.total());
    }
    // Every cause occurs, so that each is tested: probes where there is a prober,
    // and in every profile fast, timeout and slow start.
    let by_name = |n: &str| ms.iter().find(|m| m.variant == n).expect("variant");
    for n in ["linux-2.6", "linux-3.10", "linux-6", "rfc", "plain"] {
        let m = by_name(n);
        for (i, c) in ["fast", "timeout", "slow-start"].iter().enumerate() {
            let row = [0, 2, 3][i];
            assert!(m.cells[row].iter().sum::<u64>() > 0, "{n}: no {c}");
        }
    }
    for n in ["linux-3.10", "linux-6"] {
        assert!(by_name(n).cells[4][4] > 10, "{n}: probes");
        assert!(by_name(n).cells[1][1] > 10, "{n}: early");
    }
    assert_eq!(by_name("linux-2.6").cells[4].iter().sum::<u64>(), 0);
}

/// Frame numbers tshark's filter selects.
fn tshark(pcap: &Path, filter: &str) -> BTreeSet<u64> {
    let o = Command::new("tshark")
        .args([
            "-r",
            pcap.to_str().unwrap(),
            "-Y",
            filter,
            "-T",
            "fields",
            "-e",
            "frame.number",
        ])
        .output()
        .expect("tshark is required for this test (apt-get install tshark)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.trim().parse().expect("a frame number"))
        .collect()
}

/// The `--tags` CSV: (record, columns by name).
fn tags(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("tags written");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("a header").split(',').collect();
    lines
        .map(|l| {
            head.iter()
                .zip(l.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

#[test]
fn retransmissions_and_duplicate_acks_agree_with_tshark() {
    let dir = tmp("tshark");
    let pcap = frontend_capture(&dir, 0);
    // tshark writes the same capture as pcapng: both are read alike.
    let ng = dir.join("frontend.pcapng");
    let o = Command::new("tshark")
        .args([
            "-r",
            pcap.to_str().unwrap(),
            "-F",
            "pcapng",
            "-w",
            ng.to_str().unwrap(),
        ])
        .output()
        .expect("tshark");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut reports = Vec::new();
    for (i, cap) in [&pcap, &ng].into_iter().enumerate() {
        let t = dir.join(format!("tags{i}.csv"));
        let o = gentle(&[
            "analyze",
            cap.to_str().unwrap(),
            "--json",
            "--tags",
            t.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        reports.push((doc["totals"].clone(), tags(&t)));
    }
    assert_eq!(reports[0].0, reports[1].0, "pcap and pcapng read alike");
    let rows = &reports[0].1;
    let with = |tag: &str| -> BTreeSet<u64> {
        rows.iter()
            .filter(|r| r["tags"].split('|').any(|t| t == tag))
            .map(|r| r["record"].parse().unwrap())
            .collect()
    };
    // Wireshark calls a resent segment a retransmission, a fast retransmission, a
    // spurious retransmission, or — when it follows the segment it repeats closely —
    // out of order; gentle calls all of them retransmissions.
    let theirs: BTreeSet<u64> = tshark(
        &pcap,
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order",
    );
    let ours = with("retransmission");
    assert!(ours.len() > 50, "{} retransmissions", ours.len());
    assert_eq!(ours, theirs, "retransmissions");
    // Duplicate ACKs: RFC 5681 §2 also asks that data be outstanding, which
    // Wireshark does not; every ACK only tshark counts acknowledges everything.
    let theirs = tshark(&pcap, "tcp.analysis.duplicate_ack");
    let ours = with("dup-ack");
    assert!(ours.len() > 100);
    assert!(ours.is_subset(&theirs));
    let mut sent: std::collections::HashMap<String, u64> = Default::default();
    for r in rows {
        let flow = r["flow"].clone();
        if r["dir"] == "s>c" {
            let end = r["seq"].parse::<u64>().unwrap() + r["len"].parse::<u64>().unwrap();
            let e = sent.entry(flow).or_default();
            *e = (*e).max(end);
        } else if theirs.contains(&r["record"].parse().unwrap())
            && !ours.contains(&r["record"].parse().unwrap())
        {
            assert_eq!(
                r["ack"].parse::<u64>().unwrap(),
                sent[&flow],
                "record {}: a duplicate ACK with data outstanding that gentle missed",
                r["record"]
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_report_json_records_tags_and_figures() {
    let dir = tmp("outputs");
    let pcap = frontend_capture(&dir, 0);
    let out = dir.join("analysis");
    let t = dir.join("tags.csv");
    let o = gentle(&[
        "analyze",
        pcap.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--tags",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "retransmissions by cause",
        "Figure 1: mean response time",
        "Figure 2: RTO/RTT",
        "Figure 3: loss probability",
        "Figure 4: losses in lossy bursts",
        "in 40 flows",
    ] {
        assert!(text.contains(needle), "{needle}:\n{text}");
    }
    let stem = "analyze-frontend-trial0-linux-3.10";
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(format!("{stem}.json"))).unwrap())
            .unwrap();
    let flows = doc["flows"].as_array().expect("flows");
    assert_eq!(flows.len(), 40);
    let total: u64 = flows
        .iter()
        .map(|f| {
            ["fast", "early", "timeout", "slow-start", "probe"]
                .iter()
                .map(|c| f["retransmissions"][c].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    let totals = &doc["totals"]["retransmissions"];
    let sum: u64 = ["fast", "early", "timeout", "slow-start", "probe"]
        .iter()
        .map(|c| totals[c].as_u64().unwrap())
        .sum();
    assert_eq!(total, sum);
    assert!(total > 50);
    // Every exchange is a record with gentle run's columns; 40 clients × 10.
    let csv = std::fs::read_to_string(out.join(format!("{stem}-records.csv"))).unwrap();
    let header: Vec<&str> = gentle_lab::report::csv_columns().collect();
    assert!(csv.starts_with(&format!("{}\n", header.join(","))));
    assert_eq!(csv.lines().count(), 1 + 400);
    for ext in ["png", "svg"] {
        let p = out.join(format!("{stem}-figures.{ext}"));
        assert!(
            std::fs::metadata(&p).unwrap().len() > 10_000,
            "{}",
            p.display()
        );
    }
    // One tag row per frame.
    let frames = doc["totals"]["frames"].as_u64().unwrap();
    let rows = tags(&t);
    assert_eq!(rows.len() as u64, frames);
    // The tags give each retransmission the cause the report settled on (a lone
    // segment's probe-or-timeout is known only from the host's other flows), not
    // its first guess: per direction, the same counts by cause.
    for (dir, key) in [
        ("s>c", "retransmissions"),
        ("c>s", "client_retransmissions"),
    ] {
        for c in ["fast", "early", "timeout", "slow-start", "probe"] {
            let tagged = rows
                .iter()
                .filter(|r| r["dir"] == dir && r["cause"] == c)
                .count() as u64;
            let reported: u64 = flows.iter().map(|f| f[key][c].as_u64().unwrap()).sum();
            assert_eq!(tagged, reported, "{dir} {c}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_refused_with_its_place_and_nothing_is_written() {
    let dir = tmp("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("never");
    let t = dir.join("never.csv");
    let run = |file: &Path| {
        gentle(&[
            "analyze",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--tags",
            t.to_str().unwrap(),
        ])
    };
    let check = |o: Output, want: &str| {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "expected {want:?} in: {e}");
        assert!(!out.exists(), "--out left behind");
        assert!(!t.exists(), "--tags left behind");
        let stray: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            stray
                .iter()
                .all(|n| !n.to_string_lossy().contains("gentle-partial")),
            "{stray:?}"
        );
    };
    check(run(&dir.join("missing.pcap")), "missing.pcap");
    let text = dir.join("notes.txt");
    std::fs::write(&text, "GET / HTTP/1.1\r\n\r\n").unwrap();
    check(run(&text), "not a capture");
    // A directory given as the capture.
    check(run(&dir), &format!("{}: is a directory", dir.display()));
    // Ten bytes: too short to hold a capture's header.
    let short = dir.join("short.pcap");
    std::fs::write(&short, [0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0]).unwrap();
    check(
        run(&short),
        "short.pcap: byte 0: 10 bytes, too short to be a pcap or pcapng file",
    );
    let cap = frontend_capture(&dir.join("cap"), 0);
    let bytes = std::fs::read(&cap).unwrap();
    // gentle writes big-endian pcap with nanosecond times (magic a1b23c4d as written).
    assert_eq!(bytes[..4], [0xa1, 0xb2, 0x3c, 0x4d]);
    let off = record_offset(&bytes, 4);
    // The 5th record claims 2 GB.
    let mut big = bytes.clone();
    big[off + 8..off + 12].copy_from_slice(&0x8000_0000u32.to_be_bytes());
    let p = dir.join("big.pcap");
    std::fs::write(&p, &big).unwrap();
    check(
        run(&p),
        &format!("big.pcap: record 5 (byte {off}): implausible record length of 2147483664 bytes"),
    );
    // The same TCP frames on a link type gentle does not read (USER0).
    let mut user0 = bytes[..record_offset(&bytes, 3)].to_vec();
    user0[20..24].copy_from_slice(&147u32.to_be_bytes());
    let p = dir.join("user0.pcap");
    std::fs::write(&p, &user0).unwrap();
    check(
        run(&p),
        "user0.pcap: unsupported link type 147 (USER0) in 3 records",
    );
    // A capture of something other than TCP.
    let mut udp = bytes[..24].to_vec();
    let frame = [
        0x45u8, 0, 0, 31, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 0, 53, 0, 53, 0,
        11, 0, 0, 1, 2, 3,
    ];
    udp.extend_from_slice(&[0; 8]);
    udp.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    udp.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    udp.extend_from_slice(&frame);
    let u = dir.join("udp.pcap");
    std::fs::write(&u, &udp).unwrap();
    check(run(&u), "no TCP packets in 1 records");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_capture_cut_inside_its_last_record_is_analysed_with_a_warning() {
    let dir = tmp("cut");
    let cap = frontend_capture(&dir, 0);
    let bytes = std::fs::read(&cap).unwrap();
    // Cut 20 bytes into the 1001st record, as tcpdump leaves a file it is writing.
    let off = record_offset(&bytes, 1000);
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &bytes[..off + 20]).unwrap();
    let out = dir.join("analysis");
    let o = gentle(&[
        "analyze",
        cut.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "warning: {}: record 1001 (byte {off}): the file ends inside a record (20 bytes of it present): the capture appears to have been cut short in the middle of a packet; analysed the 1000 complete records before it",
            cut.display()
        )),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["totals"]["frames"], 1000);
    assert!(out.join("cut.json").exists());
    // The whole capture carries no warning.
    let o = gentle(&["analyze", cap.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("warning"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Analyses a capture in memory: its frames, and whether it was cut short.
fn analyze_bytes(b: &[u8]) -> Result<(u64, bool), gentle_analyze::CaptureError> {
    let mut r = gentle_analyze::CaptureReader::new(b)?;
    let mut a = gentle_analyze::Analyzer::new(Default::default());
    while let Some(f) = r.next()? {
        a.frame(f.record, f.linktype, f.ts_ns, f.data, &mut |_| {});
    }
    Ok((a.finish().totals.frames, r.cut_short().is_some()))
}

#[test]
fn mutated_captures_never_panic() {
    use rand::{Rng, SeedableRng};
    let dir = tmp("fuzz");
    let cap = frontend_capture(&dir, 0);
    let bytes = std::fs::read(&cap).unwrap();
    // The first few hundred records keep each run short.
    let base = bytes[..bytes.len().min(40_000)].to_vec();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for i in 0..3000u32 {
        let mut b = base.clone();
        match i % 4 {
            0 => {
                for _ in 0..rng.gen_range(1..8) {
                    let k = rng.gen_range(0..b.len());
                    b[k] ^= 1 << rng.gen_range(0..8);
                }
            }
            1 => b.truncate(rng.gen_range(0..b.len())),
            2 => {
                let k = rng.gen_range(0..b.len());
                let junk: Vec<u8> = (0..rng.gen_range(1..64)).map(|_| rng.r#gen()).collect();
                b.splice(k..k, junk);
            }
            _ => {
                let k = rng.gen_range(24..b.len());
                let n = rng.gen_range(1..16).min(b.len() - k);
                b[k..k + n].fill(0xff);
            }
        }
        match analyze_bytes(&b) {
            // No frame only for a file header alone, or a file that ends inside its
            // first record (said so).
            Ok((frames, cut)) => assert!(frames > 0 || cut || b.len() == 24, "mutation {i}"),
            Err(e) => assert!(!e.message.is_empty(), "mutation {i}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Kernel TCP on the loopback device, captured by tcpdump (pcap) and dumpcap
/// (pcapng): three HTTP/1.1 exchanges on one connection. Needs root to capture;
/// skipped with a reason otherwise (CI runs as root). Every wait is bounded.
#[test]
fn real_kernel_captures_from_tcpdump_and_dumpcap() {
    let root_user = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let have = |b: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {b}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ready = if root_user && have("tcpdump") && have("dumpcap") {
        Ok(())
    } else {
        Err("capturing on lo needs root, tcpdump and dumpcap".to_string())
    };
    if crate::common::skip_real(ready) {
        return;
    }
    let dir = tmp("kernel");
    std::fs::create_dir_all(&dir).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let pcap = dir.join("lo.pcap");
    let ng = dir.join("lo.pcapng");
    let capturers = Capturers::start(&pcap, &ng, &format!("tcp port {port}"));
    let response = three_http_exchanges(listener, port);
    capturers.stop();
    for cap in [&pcap, &ng] {
        check_loopback_capture(cap, port, response);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// tcpdump and dumpcap capturing on lo, each stopped within 30 s whatever happens.
struct Capturers {
    children: Vec<std::process::Child>,
    pids: Vec<String>,
}

impl Capturers {
    fn start(pcap: &Path, ng: &Path, filter: &str) -> Capturers {
        use std::process::Stdio;
        use std::time::Duration;
        let spawn = |cmd: &mut Command| {
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        };
        let children = vec![
            spawn(
                Command::new("tcpdump")
                    .args(["-i", "lo", "-U", "--immediate-mode", "-s", "128", "-w"])
                    .arg(pcap)
                    .arg(filter),
            ),
            spawn(
                Command::new("dumpcap")
                    .args(["-i", "lo", "-q", "-f", filter, "-w"])
                    .arg(ng),
            ),
        ];
        let pids: Vec<String> = children.iter().map(|c| c.id().to_string()).collect();
        // A watchdog: whatever happens, the capturers stop within 30 s.
        let watchdog = pids.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(30));
            for p in watchdog {
                let _ = Command::new("kill").args(["-9", &p]).status();
            }
        });
        for _ in 0..100 {
            if pcap.exists() && ng.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        Capturers { children, pids }
    }

    /// Lets the last packets in, then stops both as Ctrl-C would.
    fn stop(mut self) {
        std::thread::sleep(std::time::Duration::from_millis(500));
        for (p, pid) in self.children.iter_mut().zip(&self.pids) {
            let _ = Command::new("kill").args(["-INT", pid]).status();
            let _ = p.wait();
        }
    }
}

/// Three HTTP/1.1 GETs on one connection to a server on `listener`; the size of
/// each response.
fn three_http_exchanges(listener: std::net::TcpListener, port: u16) -> usize {
    use std::io::{Read, Write};
    use std::time::Duration;
    const BODY: usize = 200_000;
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {BODY}\r\n\r\n");
    let response = head.len() + BODY;
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 4096];
        for _ in 0..3 {
            let mut req = Vec::new();
            while !req.ends_with(b"\r\n\r\n") {
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0);
                req.extend_from_slice(&buf[..n]);
            }
            s.write_all(head.as_bytes()).unwrap();
            s.write_all(&vec![b'x'; BODY]).unwrap();
        }
    });
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = vec![0u8; 65536];
    for i in 0..3 {
        c.write_all(format!("GET /{i} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
            .unwrap();
        let mut got = 0;
        while got < response {
            let n = c.read(&mut buf).unwrap();
            assert!(n > 0);
            got += n;
        }
    }
    drop(c);
    server.join().unwrap();
    response
}

/// The capture holds the one connection with its three exchanges, none lost.
fn check_loopback_capture(cap: &Path, port: u16, response: usize) {
    let o = gentle(&["analyze", cap.to_str().unwrap(), "--json"]);
    assert!(
        o.status.success(),
        "{}: {}",
        cap.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &doc["totals"];
    assert_eq!(t["flows"], 1, "{}: {t}", cap.display());
    assert_eq!(t["malformed"], 0);
    let f = &doc["flows"][0];
    assert_eq!(f["server"], format!("127.0.0.1:{port}"));
    assert_eq!(f["closed"], "fin");
    let ex = f["exchanges"].as_array().unwrap();
    assert_eq!(ex.len(), 3, "{}: {ex:?}", cap.display());
    for (i, e) in ex.iter().enumerate() {
        assert_eq!(e["http_request"], format!("GET /{i}"));
        assert_eq!(e["http_status"], 200);
        assert_eq!(e["response_bytes"].as_u64().unwrap() as usize, response);
        assert!(e["response_ms"].as_f64().is_some());
    }
    assert_eq!(t["retransmissions"]["timeout"], 0);
}

/// A raw-IP frame (link type 101) of a TCP segment between 10.0.0.2:40000 (the
/// client) and 10.0.0.1:80; checksums are left zero (the analysis does not read them).
fn raw_tcp(to_server: bool, seq: u32, ack: u32, flags: u8, len: usize) -> Vec<u8> {
    let (src, dst, sport, dport) = if to_server {
        ([10, 0, 0, 2], [10, 0, 0, 1], 40000u16, 80u16)
    } else {
        ([10, 0, 0, 1], [10, 0, 0, 2], 80, 40000)
    };
    let mut f = vec![0x45, 0];
    f.extend_from_slice(&((40 + len) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&ack.to_be_bytes());
    f.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    f.resize(40 + len, b'x');
    f
}

/// A little-endian nanosecond pcap of raw-IP frames `(time ns, frame)`.
fn raw_pcap(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [0xa1b2_3c4du32, 0x0004_0002, 0, 0, 65535, 101] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for (t, f) in frames {
        for x in [
            (t / 1_000_000_000) as u32,
            (t % 1_000_000_000) as u32,
            f.len() as u32,
            f.len() as u32,
        ] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(f);
    }
    v
}

#[test]
fn sub_millisecond_rtts_print_with_their_digits_and_fill_the_lowest_bucket() {
    // A loopback exchange seen at the server: the client's packets come 62 µs after
    // the server's they answer.
    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    let (c, s) = (1000u32, 5000u32);
    let frames = vec![
        (0, raw_tcp(true, c, 0, SYN, 0)),
        (10_000, raw_tcp(false, s, c + 1, SYN | ACK, 0)),
        (72_000, raw_tcp(true, c + 1, s + 1, ACK, 0)),
        (100_000, raw_tcp(true, c + 1, s + 1, ACK, 100)),
        (120_000, raw_tcp(false, s + 1, c + 101, ACK, 1000)),
        (120_000, raw_tcp(false, s + 1001, c + 101, ACK, 1000)),
        (182_000, raw_tcp(true, c + 101, s + 2001, ACK, 0)),
    ];
    let dir = tmp("loopback");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("lo.pcap");
    std::fs::write(&p, raw_pcap(&frames)).unwrap();
    let o = gentle(&["analyze", p.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The flow's minimum RTT and SRTT, and the response time (request in at 0.1 ms,
    // its response acknowledged at 0.182 ms).
    let row = text
        .lines()
        .find(|l| l.contains("10.0.0.1:80"))
        .expect("a flow row");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[7..9], ["0.062", "0.062"], "{row}");
    assert!(text.contains("response time mean 0.082 ms"), "{text}");
    // Figure 1: the 0–1 ms bucket, its mean RTT 0.062 ms.
    let fig1: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Figure 1"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(fig1.len(), 1, "{text}");
    assert_eq!(
        fig1[0].split_whitespace().collect::<Vec<_>>(),
        ["0-1", "0.062", "0.082", "1", "-", "0"]
    );
    let a = gentle_lab::analyze::analyze_file(&p, Default::default()).expect("analysed");
    let pts = gentle_lab::analyze::figure1_points(&a.figures, false);
    assert_eq!(pts.len(), 1);
    assert!((pts[0].0 - 0.062).abs() < 1e-9, "drawn at its RTT: {pts:?}");
    assert_eq!(gentle_lab::analyze::fmt_ms(12.34), "12.3");
    assert_eq!(gentle_lab::analyze::fmt_ms(0.5), "0.50");
    assert_eq!(gentle_lab::analyze::fmt_ms(0.0041), "0.0041");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Figure data with no latency or RTO points, and the given curves.
fn figure_data(
    by_position: &[(usize, &[u64])],
    per_burst: &[(usize, f64, f64)],
) -> gentle_analyze::FigureData {
    use gentle_analyze::figures::{LossCount, PositionCurve};
    gentle_analyze::FigureData {
        latency_by_rtt: Vec::new(),
        rto_over_rtt_cdf: Vec::new(),
        rto_over_rtt_median: None,
        rto_over_rtt_p99: None,
        loss_by_position: by_position
            .iter()
            .map(|&(len, losses)| PositionCurve {
                burst_len: len,
                bursts: 100,
                relative: losses
                    .iter()
                    .map(|&n| (losses[0] > 0).then(|| n as f64 / losses[0] as f64))
                    .collect(),
                losses: losses.to_vec(),
            })
            .collect(),
        losses_per_burst: per_burst
            .iter()
            .map(|&(len, one, two)| LossCount {
                burst_len: len,
                lossy_bursts: 10,
                one,
                at_most_two: two,
            })
            .collect(),
        long_bursts: 0,
    }
}

#[test]
fn figure_3_draws_every_length_it_can_and_says_which() {
    use gentle_lab::analyze::figure3_lengths;
    let f = figure_data(
        &[
            (2, &[5, 1]),
            (3, &[1, 0, 2]),
            (4, &[0, 0, 0, 1]),
            (5, &[1, 0, 0, 0, 0]),
        ],
        &[],
    );
    let (drawn, note) = figure3_lengths(&f);
    assert_eq!(drawn, [2, 3, 5]);
    assert_eq!(
        note,
        "burst lengths drawn: 2, 3, 5; not 4: their first position lost nothing"
    );
    // More lengths than colours: the six with the most losses, and it says so.
    let many: Vec<(usize, Vec<u64>)> = (2..=9)
        .map(|l| {
            let mut v = vec![0u64; l];
            v[0] = l as u64;
            (l, v)
        })
        .collect();
    let many: Vec<(usize, &[u64])> = many.iter().map(|(l, v)| (*l, &v[..])).collect();
    let (drawn, note) = figure3_lengths(&figure_data(&many, &[]));
    assert_eq!(drawn, [4, 5, 6, 7, 8, 9]);
    assert_eq!(
        note,
        "burst lengths drawn: 4, 5, 6, 7, 8, 9 (the 6 with the most losses)"
    );
    // The text report says the same under its table.
    let a = gentle_analyze::Analysis {
        totals: Default::default(),
        flows: Vec::new(),
        figures: f,
    };
    let text = gentle_lab::analyze::figures_text(&a);
    assert!(
        text.contains("  in the figure: burst lengths drawn: 2, 3, 5; not 4: their first position lost nothing\n"),
        "{text}"
    );
}

#[test]
fn figure_4_lines_break_at_missing_burst_lengths() {
    use gentle_lab::analyze::figure4_points;
    let f = figure_data(&[], &[(1, 1.0, 1.0), (2, 0.5, 1.0), (5, 0.25, 0.75)]);
    let pts = figure4_points(&f, false);
    assert_eq!(pts.len(), 4, "{pts:?}");
    assert_eq!(&pts[..2], &[(1.0, 1.0), (2.0, 0.5)]);
    assert!(pts[2].1.is_nan(), "a break between 2 and 5: {pts:?}");
    assert_eq!(pts[3], (5.0, 0.25));
    let two = figure4_points(&f, true);
    assert_eq!(two[3], (5.0, 0.75));
    // Adjacent lengths only: no break.
    let f = figure_data(&[], &[(3, 1.0, 1.0), (4, 0.5, 1.0)]);
    assert!(figure4_points(&f, false).iter().all(|p| !p.1.is_nan()));
}

#[test]
fn a_tags_path_that_cannot_be_written_is_refused_before_the_analysis() {
    let dir = tmp("tags-paths");
    let pcap = frontend_capture(&dir, 0);
    std::fs::create_dir_all(dir.join("adir")).unwrap();
    for (tags, force, want) in [
        (dir.join("adir"), true, "is a directory"),
        (dir.join("missing/t.csv"), false, "does not exist"),
    ] {
        let mut args = vec![
            "analyze",
            pcap.to_str().unwrap(),
            "--tags",
            tags.to_str().unwrap(),
        ];
        if force {
            args.push("--force");
        }
        let o = gentle(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(want), "{want}: {e}");
        assert!(o.stdout.is_empty(), "analysed before refusing: {e}");
    }
}
