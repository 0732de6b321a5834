//! gentle's real mode (Linux): gentle's links as a real-time forwarder between
//! network namespaces around the kernel's own TCP, and the measurements that come
//! back from it.
//!
//! - [`netns`]: anonymous network namespaces, one thread each;
//! - [`tun`]: TUN devices and interface settings by ioctl;
//! - [`sysctl`]: per-namespace TCP sysctls and the facts recorded with a run;
//! - [`tcpinfo`]: `TCP_INFO` and per-socket settings of kernel connections;
//! - [`wire`], [`flows`]: what the forwarder reads of a packet and its connection;
//! - [`forward`]: the forwarder, the simulator's link model in real time;
//! - [`engine_host`]: gentle's engine as a host on a TUN device, driven by the
//!   forwarder (`gentle serve`, `gentle connect`).
//!
//! Everything here needs root (namespaces, `/dev/net/tun`, sysctls):
//! [`available`] says whether this process can, and why not.

pub mod endpoints;
pub mod engine_host;
pub mod flows;
pub mod forward;
pub mod forward_bench;
pub mod http_responder;
pub mod jiffies;
pub mod netns;
pub mod sysctl;
pub mod tcpinfo;
pub mod topology;
pub mod tun;
pub mod wire;

/// Whether real mode can run here: effective uid 0 and `/dev/net/tun` opens.
/// `Err` says what is missing.
pub fn available() -> Result<(), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("real mode needs root (network namespaces, TUN devices, sysctls)".into());
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(|e| format!("real mode needs /dev/net/tun: {e}"))?;
    Ok(())
}
