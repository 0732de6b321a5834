//! The kernel's TCP settings: per-namespace sysctls, the congestion control pinned
//! per socket, and the facts recorded with every run (release, HZ, the sysctls).
//!
//! `/proc/sys/net` shows the namespace of the thread that opens it, so a sysctl
//! written from a namespace's thread ([`crate::netns::Netns::run`]) changes that
//! namespace alone and never the host's. They are written before any socket exists.

use std::collections::BTreeMap;
use std::io::{self, Read};

use serde::Serialize;

/// The TCP sysctls recorded with every run (`net.ipv4.` omitted).
pub const RECORDED: &[&str] = &[
    "tcp_recovery",
    "tcp_early_retrans",
    "tcp_frto",
    "tcp_sack",
    "tcp_dsack",
    "tcp_timestamps",
    "tcp_window_scaling",
    "tcp_ecn",
    "tcp_rto_min_us",
    "tcp_no_metrics_save",
    "tcp_slow_start_after_idle",
    "tcp_reordering",
    "tcp_thin_linear_timeouts",
    "tcp_congestion_control",
];

/// Writes `value` to `/proc/sys/<path>` (the calling thread's namespace for
/// `net/...`).
pub fn write(path: &str, value: &str) -> io::Result<()> {
    std::fs::write(format!("/proc/sys/{path}"), value)
        .map_err(|e| io::Error::new(e.kind(), format!("sysctl {path} = {value}: {e}")))
}

/// Reads `/proc/sys/<path>`, trimmed.
pub fn read(path: &str) -> io::Result<String> {
    Ok(std::fs::read_to_string(format!("/proc/sys/{path}"))?
        .trim()
        .to_string())
}

/// A kernel TCP configuration: the congestion control pinned on every socket and
/// the namespace's `net.ipv4.tcp_*` sysctls.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelConfig {
    /// `TCP_CONGESTION` of every socket.
    pub cc: String,
    /// `net.ipv4.<name>` = value, in this order.
    pub sysctls: Vec<(String, String)>,
}

impl KernelConfig {
    /// Checks that this kernel has the congestion control and every sysctl, without
    /// changing anything.
    pub fn check(&self) -> Result<(), String> {
        let avail = read("net/ipv4/tcp_available_congestion_control").unwrap_or_default();
        if !avail.split_whitespace().any(|c| c == self.cc) {
            return Err(format!(
                "congestion control {:?} is not in this kernel (it has: {avail})",
                self.cc
            ));
        }
        for (k, v) in &self.sysctls {
            if !k.starts_with("tcp_") || k.contains('/') || k.contains("..") {
                return Err(format!(
                    "sysctl {k:?}: real mode sets net.ipv4.tcp_* sysctls only"
                ));
            }
            if read(&format!("net/ipv4/{k}")).is_err() {
                return Err(format!("sysctl net.ipv4.{k} does not exist in this kernel"));
            }
            if v.is_empty() || v.chars().any(|c| c.is_control()) {
                return Err(format!("sysctl net.ipv4.{k}: bad value {v:?}"));
            }
        }
        Ok(())
    }

    /// Writes the sysctls in the calling thread's namespace.
    pub fn apply(&self) -> io::Result<()> {
        for (k, v) in &self.sysctls {
            write(&format!("net/ipv4/{k}"), v)?;
        }
        Ok(())
    }
}

/// What the kernel is, recorded with every run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelFacts {
    /// `uname -r`.
    pub release: String,
    /// The timer frequency (`CONFIG_HZ`), when it can be found.
    pub hz: Option<u32>,
    /// [`RECORDED`] as set in the namespace.
    pub sysctls: BTreeMap<String, String>,
}

/// The release and HZ of the running kernel, and the sysctls of the calling
/// thread's namespace.
pub fn facts() -> KernelFacts {
    let release = read("kernel/osrelease").unwrap_or_default();
    let sysctls = RECORDED
        .iter()
        .filter_map(|k| Some((k.to_string(), read(&format!("net/ipv4/{k}")).ok()?)))
        .collect();
    KernelFacts {
        release,
        hz: config_hz(),
        sysctls,
    }
}

/// `CONFIG_HZ` from `/proc/config.gz`, if the kernel exposes its configuration.
fn config_hz() -> Option<u32> {
    let f = std::fs::File::open("/proc/config.gz").ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut text)
        .ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}
