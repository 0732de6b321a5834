//! TUN devices and the interface settings real mode needs, by ioctl: no `ip`
//! command, no netlink library.
//!
//! A TUN is opened `IFF_TUN | IFF_NO_PI` (without NO_PI every packet carries a 4-byte
//! header) and never with the vnet header, so reads are wire-sized IP packets with
//! full checksums. IPv6 is disabled on it before it comes up, or router
//! solicitations and multicast reports appear. It is not persistent: it goes away
//! when its descriptor closes. The device belongs to the network namespace of the
//! thread that opens it ([`crate::netns`]).

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;

/// Interface names are at most 15 bytes (IFNAMSIZ − 1).
const IFNAMSIZ: usize = 16;

// linux/if_tun.h
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
// TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN
const TUN_OFFLOADS: libc::c_ulong = 0x1 | 0x2 | 0x4 | 0x8;

/// Bytes of `struct virtio_net_hdr` before every packet of an offloading TUN.
pub const VNET_HDR_LEN: usize = 10;

/// A TUN device: its descriptor reads the packets the namespace sends through it
/// and writes packets into the namespace.
pub struct Tun {
    file: File,
    name: String,
}

fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    // SAFETY: ifreq is plain old data; all zeroes is a valid value.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    Ok(r)
}

fn check(rc: libc::c_int, what: &str, name: &str) -> io::Result<()> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("{what} on {name}: {e}")));
    }
    Ok(())
}

/// A datagram socket of the current namespace, for interface ioctls.
fn ctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) with constant arguments; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

fn sockaddr_in(a: Ipv4Addr) -> libc::sockaddr {
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(a).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sockaddr_in and sockaddr have the same size; the kernel reads the
    // family and interprets the rest.
    unsafe { std::mem::transmute::<libc::sockaddr_in, libc::sockaddr>(sin) }
}

/// Brings interface `name` of the current namespace up.
pub fn set_up(name: &str) -> io::Result<()> {
    let s = ctl_socket()?;
    let mut r = ifreq(name)?;
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write an ifreq we own.
    unsafe {
        check(
            libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS, &mut r),
            "SIOCGIFFLAGS",
            name,
        )?;
        r.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        check(
            libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &r),
            "SIOCSIFFLAGS",
            name,
        )
    }
}

/// A point-to-point link's settings.
#[derive(Clone, Copy, Debug)]
pub struct TunAddr {
    /// The namespace's own address.
    pub local: Ipv4Addr,
    /// The address at the other end: a /32 route to it comes with the address.
    pub peer: Ipv4Addr,
    pub mtu: u32,
}

impl Tun {
    /// Creates TUN `name` in the current thread's namespace, configures it and
    /// brings it up. Its descriptor is non-blocking.
    pub fn create(name: &str, addr: TunAddr) -> io::Result<Tun> {
        Tun::open(name, addr, false)
    }

    /// As [`Tun::create`], but the device offloads as a typical Ethernet device
    /// does (checksums, TSO), as packetdrill's `tun0` does (`netdev.c`): the
    /// kernel hands it whole TSO packets, and every packet read or written starts
    /// with a [`VNET_HDR_LEN`]-byte `virtio_net_hdr` (all zero on writes: the
    /// packet is complete, checksums included).
    pub fn create_offloading(name: &str, addr: TunAddr) -> io::Result<Tun> {
        Tun::open(name, addr, true)
    }

    fn open(name: &str, addr: TunAddr, offload: bool) -> io::Result<Tun> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| io::Error::new(e.kind(), format!("cannot open /dev/net/tun: {e}")))?;
        let mut r = ifreq(name)?;
        r.ifr_ifru.ifru_flags = IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 };
        // SAFETY: TUNSETIFF reads (and writes back) an ifreq we own.
        check(
            unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF, &mut r) },
            "TUNSETIFF",
            name,
        )?;
        if offload {
            // SAFETY: TUNSETOFFLOAD takes its flags by value.
            check(
                unsafe { libc::ioctl(file.as_raw_fd(), TUNSETOFFLOAD, TUN_OFFLOADS) },
                "TUNSETOFFLOAD",
                name,
            )?;
        }
        let tun = Tun {
            file,
            name: name.to_string(),
        };
        // No IPv6 at all on the device (router solicitations, MLD reports).
        crate::sysctl::write(&format!("net/ipv6/conf/{name}/disable_ipv6"), "1").ok();
        let s = ctl_socket()?;
        let set = |req: libc::c_ulong, what: &str, fill: &dyn Fn(&mut libc::ifreq)| {
            let mut r = ifreq(name)?;
            fill(&mut r);
            // SAFETY: an interface ioctl reading an ifreq we own.
            check(unsafe { libc::ioctl(s.as_raw_fd(), req, &r) }, what, name)
        };
        set(libc::SIOCSIFMTU, "SIOCSIFMTU", &|r| {
            r.ifr_ifru.ifru_mtu = addr.mtu as libc::c_int
        })?;
        set(libc::SIOCSIFADDR, "SIOCSIFADDR", &|r| {
            r.ifr_ifru.ifru_addr = sockaddr_in(addr.local)
        })?;
        set(libc::SIOCSIFNETMASK, "SIOCSIFNETMASK", &|r| {
            r.ifr_ifru.ifru_netmask = sockaddr_in(Ipv4Addr::BROADCAST)
        })?;
        set(libc::SIOCSIFDSTADDR, "SIOCSIFDSTADDR", &|r| {
            r.ifr_ifru.ifru_dstaddr = sockaddr_in(addr.peer)
        })?;
        set_up(name)?;
        Ok(tun)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reads one packet into `buf`; `Ok(None)` when none waits.
    #[inline]
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match (&self.file).read(buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Writes one packet into the namespace.
    #[inline]
    pub fn send(&self, pkt: &[u8]) -> io::Result<()> {
        (&self.file).write(pkt).map(|_| ())
    }
}

impl std::os::fd::AsFd for Tun {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl AsRawFd for Tun {
    fn as_raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

/// Packet counters of an interface of the current namespace
/// (`/proc/thread-self/net/dev`: the calling thread's namespace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct IfStats {
    pub rx_packets: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_dropped: u64,
}

/// The counters of interface `name` in the calling thread's namespace.
pub fn if_stats(name: &str) -> io::Result<IfStats> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    for line in text.lines() {
        let Some((n, rest)) = line.split_once(':') else {
            continue;
        };
        if n.trim() != name {
            continue;
        }
        let v: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if v.len() < 16 {
            break;
        }
        return Ok(IfStats {
            rx_packets: v[1],
            rx_dropped: v[3],
            tx_packets: v[9],
            tx_dropped: v[11],
        });
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("no interface {name} in /proc/thread-self/net/dev"),
    ))
}

/// Whether `name` is a usable interface name.
pub fn valid_name(name: &str) -> bool {
    CString::new(name).is_ok() && !name.is_empty() && name.len() < IFNAMSIZ
}
