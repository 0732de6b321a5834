//! What the kernel sends on `tun0`, as packetdrill sniffs it (`packet_socket_linux.c`):
//! a packet socket bound to the device reads each outbound packet (a TSO packet
//! whole) with the kernel's own timestamp of its transmission, so that a `>`
//! line's time is when the kernel sent the packet, not when gentle woke to read
//! it. The TUN's queue is read too, and dropped, as packetdrill's
//! `local_netdev_read_queue` does: a full queue would drop the kernel's packets.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, SystemTime};

/// `ETH_P_ALL` in network order, as packet sockets take it.
const ALL: u16 = (libc::ETH_P_ALL as u16).to_be();

/// A packet socket on one device.
pub(super) struct Sniffer {
    fd: OwnedFd,
}

impl Sniffer {
    /// Opens a packet socket on `ifname` that stamps what it reads.
    pub(super) fn open(ifname: &str) -> io::Result<Sniffer> {
        // SAFETY: socket(2) with constant arguments; the result is checked.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                i32::from(ALL),
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor socket(2) just returned.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let name = std::ffi::CString::new(ifname).map_err(io::Error::other)?;
        // SAFETY: if_nametoindex reads a NUL-terminated name.
        let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if index == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: sockaddr_ll is plain old data; all zeroes is valid.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ALL;
        sll.sll_ifindex = index as i32;
        let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        let on: libc::c_int = 1;
        // SAFETY: bind(2) with a sockaddr_ll we own and its size; setsockopt(2)
        // reading one int.
        unsafe {
            if libc::bind(raw, (&sll as *const libc::sockaddr_ll).cast(), len) < 0
                || libc::setsockopt(
                    raw,
                    libc::SOL_SOCKET,
                    libc::SO_TIMESTAMPNS,
                    (&on as *const libc::c_int).cast(),
                    std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                ) < 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(Sniffer { fd })
    }

    /// The next packet the device sent (its IP packet in `buf`): its length and
    /// when the kernel sent it; `None` when none waits. Inbound packets (those
    /// gentle wrote) are skipped.
    pub(super) fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, SystemTime)>> {
        loop {
            // SAFETY: zeroed sockaddr_ll, iovec, msghdr and control buffer are
            // valid; recvmsg writes at most their lengths.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut iov = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            let mut control = [0u64; 8];
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            // SAFETY: as above.
            let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, 0) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::WouldBlock {
                    return Ok(None);
                }
                return Err(e);
            }
            if sll.sll_pkttype != libc::PACKET_OUTGOING {
                continue;
            }
            let at = timestamp(&msg).unwrap_or_else(SystemTime::now);
            return Ok(Some((n as usize, at)));
        }
    }
}

impl AsRawFd for Sniffer {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

/// The `SCM_TIMESTAMPNS` of a received message.
fn timestamp(msg: &libc::msghdr) -> Option<SystemTime> {
    // SAFETY: the CMSG macros walk the control buffer recvmsg filled, within
    // msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                let d = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
                return Some(SystemTime::UNIX_EPOCH + d);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}
