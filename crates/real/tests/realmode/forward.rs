//! The forwarder between two namespaces around kernel TCP: delay, loss, keyed
//! draws, TUN drops. Needs root: fails with the reason otherwise (GENTLE_SKIP_REAL=1 skips it knowingly).

use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gentle_real::flows::FlowNumbering;
use gentle_real::forward::{self, Fate, ForwarderSpec};
use gentle_real::sysctl::KernelConfig;
use gentle_real::topology::{CLIENT_ADDR, Pair, SERVER_ADDR};
use gentle_sim::link::ChannelSpec;
use gentle_sim::loss::LossModel;
use gentle_sim::rng;

/// Never a silent pass: where real mode is unavailable the test fails with the
/// reason, unless `GENTLE_SKIP_REAL=1` asks to skip it knowingly.
fn skip() -> bool {
    match gentle_real::available() {
        Ok(()) => false,
        Err(why) if std::env::var_os("GENTLE_SKIP_REAL").is_some() => {
            eprintln!("skipped (GENTLE_SKIP_REAL): {why}");
            true
        }
        Err(why) => panic!(
            "real mode is unavailable: {why}; set GENTLE_SKIP_REAL=1 to skip the tests that need it"
        ),
    }
}

/// One transfer through a forwarder at a time: two at once on a two-core host
/// measure each other's scheduling, not the forwarder.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn cubic() -> KernelConfig {
    KernelConfig {
        cc: "cubic".into(),
        sysctls: vec![],
    }
}

/// Sends `bytes` from the server to the client through a path with `spec` each
/// way; returns the forwarder's report, the bytes received and the wall time.
fn transfer(
    spec: ChannelSpec,
    bytes: usize,
    seed: u64,
) -> (
    forward::ForwarderReport,
    usize,
    Duration,
    [gentle_real::tun::IfStats; 2],
) {
    let _alone = one_at_a_time();
    let (pair, ends) = Pair::new(&cubic()).expect("namespaces");
    let fwd = forward::spawn(ForwarderSpec {
        ends,
        channels: [
            (spec.clone(), rng::stream(seed, rng::ids::LINK)),
            (spec, rng::stream(seed, rng::ids::LINK + 1)),
        ],
        numbering: FlowNumbering::ClientPort { base: 40000 },
        messages: vec![(0, vec![bytes as u64])],
        capture: true,
        spin: true,
    })
    .expect("forwarder");
    let listener = pair
        .server
        .run(|| TcpListener::bind(SocketAddrV4::new(SERVER_ADDR, 8080)))
        .expect("listen");
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        s.write_all(&vec![7u8; bytes]).unwrap();
    });
    let t0 = Instant::now();
    let mut got = 0;
    let client = pair.client.run(move || {
        let sock = nix::sys::socket::socket(
            nix::sys::socket::AddressFamily::Inet,
            nix::sys::socket::SockType::Stream,
            nix::sys::socket::SockFlag::empty(),
            None,
        )
        .unwrap();
        nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::ReuseAddr, &true).unwrap();
        let local = nix::sys::socket::SockaddrIn::from(SocketAddrV4::new(CLIENT_ADDR, 40000));
        nix::sys::socket::bind(std::os::fd::AsRawFd::as_raw_fd(&sock), &local).unwrap();
        let remote = nix::sys::socket::SockaddrIn::from(SocketAddrV4::new(SERVER_ADDR, 8080));
        nix::sys::socket::connect(std::os::fd::AsRawFd::as_raw_fd(&sock), &remote).unwrap();
        TcpStream::from(sock)
    });
    let mut c = client;
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut buf = vec![0u8; 65536];
    while got < bytes {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    let took = t0.elapsed();
    server.join().unwrap();
    drop(c);
    std::thread::sleep(Duration::from_millis(50));
    let drops = pair.tun_stats().unwrap();
    (fwd.stop().unwrap(), got, took, drops)
}

#[test]
fn delay_and_loss_through_the_forwarder() {
    if skip() {
        return;
    }
    let spec = ChannelSpec {
        delay: Duration::from_millis(25),
        loss: LossModel::Bernoulli { p: 0.02 },
        draws: gentle_sim::link::Draws::Position,
        ..Default::default()
    };
    let (r, got, took, drops) = transfer(spec, 300_000, 1);
    assert_eq!(got, 300_000);
    let handshake = &r.log[..2];
    // SYN then SYN-ACK, each 25 ms late by the link's delay.
    for e in handshake {
        assert!(e.due_ns - e.t_ns >= 25_000_000, "{e:?}");
    }
    let lost = r.log.iter().filter(|e| e.fate == Fate::DroppedLoss).count();
    assert!(lost > 0, "2% loss over ~200 packets dropped none");
    assert!(took >= Duration::from_millis(100), "{took:?}");
    eprintln!(
        "delay error p50 {:.0} µs p99 {:.0} µs max {:.0} µs over {}; lost {lost}; drops {drops:?}",
        r.delay_error.p50_us, r.delay_error.p99_us, r.delay_error.max_us, r.delay_error.samples
    );
    // Never early, and the report's error is the log's: delivery time − due time.
    let late_us: Vec<f64> = r
        .log
        .iter()
        .filter(|e| e.fate == Fate::Delivered && e.out_ns > 0)
        .map(|e| {
            assert!(e.out_ns >= e.due_ns, "delivered before its due time: {e:?}");
            (e.out_ns - e.due_ns) as f64 / 1e3
        })
        .collect();
    assert_eq!(late_us.len() as u64, r.delay_error.samples);
    let max = late_us.iter().copied().fold(0.0, f64::max);
    assert!(
        (max - r.delay_error.max_us).abs() < 1.0,
        "{max} {:?}",
        r.delay_error
    );
    // Typically on time: a forwarder that waited for its epoll tick (up to
    // 5 ms) instead of its timerfd would be late by milliseconds at the median.
    // The tail measures the host's load (CI shares two cores), so it is only
    // bounded loosely; `gentle emulate` warns when it matters.
    assert!(r.delay_error.p50_us < 1000.0, "{:?}", r.delay_error);
    assert!(r.delay_error.p99_us < 10_000.0, "{:?}", r.delay_error);
    assert_eq!(drops[0].tx_dropped + drops[1].tx_dropped, 0);
    assert_eq!(r.write_errors, 0);
    assert_eq!(r.foreign, 0, "IPv6 or other traffic reached the forwarder");
}

#[test]
fn a_policer_in_the_forwarder_drops_kernel_tcp_down_to_its_rate() {
    if skip() {
        return;
    }
    // 400 kB through a 2 Mbit/s policer with a 30 kB bucket: the first 30 kB pass
    // at once, the rest at the rate; the kernel's excess is dropped, never queued.
    let spec = ChannelSpec {
        delay: Duration::from_millis(10),
        policer: Some(gentle_sim::link::Policer {
            rate_bps: 2_000_000,
            burst_bytes: 30_000,
        }),
        ..Default::default()
    };
    let (r, got, took, _) = transfer(spec, 400_000, 1);
    assert_eq!(got, 400_000);
    let policed = r
        .log
        .iter()
        .filter(|e| e.fate == Fate::DroppedPolicer)
        .count();
    assert!(policed > 0, "the kernel never exceeded the rate");
    assert_eq!(
        r.stats[0].dropped_policer as usize, policed,
        "{:?}",
        r.stats[0]
    );
    let floor = Duration::from_secs_f64((400_000.0 - 30_000.0) * 8.0 / 2e6);
    assert!(took >= floor, "{took:?} for {floor:?} at the rate");
    assert!(took < floor * 3, "{took:?}: far below the rate");
}
