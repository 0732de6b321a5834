//! The emulated path: a server namespace and a client namespace, each with one TUN
//! device whose other side is the forwarder. Fresh namespaces per trial, so no
//! trial inherits another's cached route metrics, TIME-WAIT sockets or sysctls.

use std::io;
use std::net::Ipv4Addr;

use crate::forward::{Device, End};
use crate::netns::Netns;
use crate::sysctl::{KernelConfig, KernelFacts};
use crate::tun::{IfStats, Tun, TunAddr};

/// The server namespace's address.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// The client namespace's address.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// The TUN device's name in both namespaces.
pub const TUN_NAME: &str = "gentle0";
/// The MTU: 1500 gives an MSS of 1448 with timestamps, as on Ethernet.
pub const MTU: u32 = 1500;

/// Two namespaces joined by the forwarder.
pub struct Pair {
    pub server: Netns,
    pub client: Netns,
}

fn side(name: &str, local: Ipv4Addr, peer: Ipv4Addr, k: &KernelConfig) -> io::Result<(Netns, Tun)> {
    let ns = Netns::new(name)?;
    let k = k.clone();
    let tun = ns.run(move || {
        k.apply()?;
        Tun::create(
            TUN_NAME,
            TunAddr {
                local,
                peer,
                mtu: MTU,
            },
        )
    })?;
    Ok((ns, tun))
}

impl Pair {
    /// Creates both namespaces with `kernel`'s sysctls, and their TUNs: the ends to
    /// hand the forwarder ([0] the server's, [1] the client's).
    pub fn new(kernel: &KernelConfig) -> io::Result<(Pair, [End; 2])> {
        let (server, st) = side("server", SERVER_ADDR, CLIENT_ADDR, kernel)?;
        let (client, ct) = side("client", CLIENT_ADDR, SERVER_ADDR, kernel)?;
        Ok((
            Pair { server, client },
            [
                End {
                    dev: Device::Tun(st),
                    addr: SERVER_ADDR,
                },
                End {
                    dev: Device::Tun(ct),
                    addr: CLIENT_ADDR,
                },
            ],
        ))
    }

    /// The TUN counters of both namespaces ([0] the server's).
    pub fn tun_stats(&self) -> io::Result<[IfStats; 2]> {
        let s = self.server.run(|| crate::tun::if_stats(TUN_NAME))?;
        let c = self.client.run(|| crate::tun::if_stats(TUN_NAME))?;
        Ok([s, c])
    }

    /// The kernel facts, with the server namespace's sysctls.
    pub fn facts(&self) -> KernelFacts {
        self.server.run(crate::sysctl::facts)
    }
}

/// Which end gentle's engine takes in place of a namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineEnd {
    /// The engine is the server (at `SERVER_ADDR`); the kernel namespace is the client's.
    Server,
    /// The engine is the client (at `CLIENT_ADDR`); the kernel namespace is the server's.
    Client,
}

/// One kernel namespace with `kernel`'s sysctls, joined by the forwarder to `host`
/// (gentle's engine) at the other end: the ends to hand the forwarder ([0] the
/// server's, [1] the client's).
pub fn with_host(
    kernel: &KernelConfig,
    engine: EngineEnd,
    host: Box<dyn crate::forward::Host>,
) -> io::Result<(Netns, [End; 2])> {
    let (ns, tun, kernel_addr, host_addr) = match engine {
        EngineEnd::Server => {
            let (ns, t) = side("client", CLIENT_ADDR, SERVER_ADDR, kernel)?;
            (ns, t, CLIENT_ADDR, SERVER_ADDR)
        }
        EngineEnd::Client => {
            let (ns, t) = side("server", SERVER_ADDR, CLIENT_ADDR, kernel)?;
            (ns, t, SERVER_ADDR, CLIENT_ADDR)
        }
    };
    let k = End {
        dev: Device::Tun(tun),
        addr: kernel_addr,
    };
    let h = End {
        dev: Device::Host(host),
        addr: host_addr,
    };
    let ends = match engine {
        EngineEnd::Server => [h, k],
        EngineEnd::Client => [k, h],
    };
    Ok((ns, ends))
}
