//! The forwarder's benchmark (`gentle bench`, as root): how fast it moves packets
//! and how exactly it keeps time.
//!
//! - **Throughput**: a kernel TCP bulk transfer between the two namespaces through
//!   a link with no rate limit, no delay and no loss, for a fixed time. Reported
//!   as goodput over the wall clock, and as the forwarder's packets and Mbit/s per
//!   second of its own thread's CPU time — what one core does, whatever the two
//!   kernels' stacks cost besides (they share the machine's cores).
//!   The same through a 1 Gbit/s link (1 ms each way), which the forwarder
//!   keeps up with: no TUN drops.
//! - **Delay accuracy**: the same transfer through a 100 Mbit/s link with 10 ms of
//!   delay each way: each packet's delivery time against the time the link model
//!   gave it (p50, p99, max).

use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpListener};
use std::time::{Duration, Instant};

use gentle_sim::link::{ChannelSpec, QueueDiscipline, QueueLimit};
use gentle_sim::rng;
use serde::Serialize;

use crate::endpoints::{self, SocketSettings};
use crate::flows::FlowNumbering;
use crate::forward::{self, DelayError, ForwarderSpec};
use crate::sysctl::KernelConfig;
use crate::topology::{CLIENT_ADDR, Pair, SERVER_ADDR};

/// One measured transfer.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Transfer {
    /// The link's rate, `None` for unlimited.
    pub rate_mbit: Option<f64>,
    pub delay_ms: f64,
    pub seconds: f64,
    pub bytes: u64,
    /// Goodput over the wall clock.
    pub goodput_mbit: f64,
    /// Packets the forwarder moved (both directions) ...
    pub packets: u64,
    /// ... of which full-size (1500-byte) data packets.
    pub full_packets: u64,
    /// CPU time of the forwarder's thread.
    pub forwarder_cpu_seconds: f64,
    /// Packets and wire Mbit/s per second of the forwarder's CPU time.
    pub packets_per_cpu_second: f64,
    pub mbit_per_cpu_second: f64,
    pub delay_error: DelayError,
    /// Packets the TUN devices dropped (the forwarder fell behind).
    pub tun_dropped: u64,
}

/// The benchmark's result.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ForwarderBench {
    /// The ceiling: TCP pushes until the forwarder's core is saturated (the TUN
    /// devices then drop what it cannot take, and TCP backs off).
    pub unlimited: Transfer,
    /// A 1 Gbit/s link with 1 ms each way: the forwarder keeps up.
    pub at_1gbit: Transfer,
    pub at_100mbit: Transfer,
}

/// Runs both transfers, `secs` seconds each.
pub fn run(secs: f64) -> Result<ForwarderBench, String> {
    crate::available()?;
    let unlimited = transfer(ChannelSpec::default(), secs)?;
    let at_1gbit = transfer(
        ChannelSpec {
            rate_bps: Some(1_000_000_000),
            delay: Duration::from_millis(1),
            queue: QueueDiscipline::DropTail(QueueLimit::Packets(1000)),
            ..Default::default()
        },
        secs,
    )?;
    let at_100mbit = transfer(
        ChannelSpec {
            rate_bps: Some(100_000_000),
            delay: Duration::from_millis(10),
            queue: QueueDiscipline::DropTail(QueueLimit::Packets(1000)),
            ..Default::default()
        },
        secs,
    )?;
    Ok(ForwarderBench {
        unlimited,
        at_1gbit,
        at_100mbit,
    })
}

fn transfer(spec: ChannelSpec, secs: f64) -> Result<Transfer, String> {
    let err = |e: std::io::Error| e.to_string();
    let kernel = KernelConfig {
        cc: "cubic".into(),
        sysctls: vec![],
    };
    let (pair, ends) = Pair::new(&kernel).map_err(err)?;
    let rate_mbit = spec.rate_bps.map(|b| b as f64 / 1e6);
    let delay_ms = spec.delay.as_secs_f64() * 1e3;
    let fwd = forward::spawn(ForwarderSpec {
        ends,
        channels: [
            (spec.clone(), rng::stream(1, rng::ids::LINK)),
            (spec, rng::stream(1, rng::ids::LINK + 1)),
        ],
        numbering: FlowNumbering::ClientPort { base: 40000 },
        messages: vec![],
        capture: false,
        spin: false,
    })
    .map_err(err)?;
    let listener = pair
        .server
        .run(|| TcpListener::bind(SocketAddrV4::new(SERVER_ADDR, 8080)))
        .map_err(err)?;
    let stop_at = Instant::now() + Duration::from_secs_f64(secs);
    let server = std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let buf = vec![7u8; 1 << 16];
        while Instant::now() < stop_at {
            if s.write_all(&buf).is_err() {
                return;
            }
        }
    });
    let settings = SocketSettings {
        cc: kernel.cc.clone(),
    };
    let client = pair
        .client
        .run(move || {
            endpoints::connect_from(
                SocketAddrV4::new(CLIENT_ADDR, 40000),
                SocketAddrV4::new(SERVER_ADDR, 8080),
                &settings,
                endpoints::now_ns() + 10_000_000_000,
            )
        })
        .map_err(err)?;
    let t0 = Instant::now();
    let mut c = client;
    c.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(err)?;
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes += n as u64,
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
    let _ = server.join();
    drop(c);
    std::thread::sleep(Duration::from_millis(50));
    let tun = pair.tun_stats().map_err(err)?;
    let r = fwd.stop().map_err(err)?;
    let packets = r.log.len() as u64;
    let full_packets = r.log.iter().filter(|e| e.payload >= 1448).count() as u64;
    let wire_bits: u64 = r.log.iter().map(|e| (e.payload as u64 + 52) * 8).sum();
    let cpu = r.cpu_ns as f64 / 1e9;
    Ok(Transfer {
        rate_mbit,
        delay_ms,
        seconds,
        bytes,
        goodput_mbit: bytes as f64 * 8.0 / seconds / 1e6,
        packets,
        full_packets,
        forwarder_cpu_seconds: cpu,
        packets_per_cpu_second: packets as f64 / cpu,
        mbit_per_cpu_second: wire_bits as f64 / cpu / 1e6,
        delay_error: r.delay_error,
        tun_dropped: tun.iter().map(|t| t.tx_dropped + t.rx_dropped).sum(),
    })
}
