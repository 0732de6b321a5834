//! `TCP_INFO` from kernel sockets, and the per-socket settings real mode pins
//! (`TCP_CONGESTION`, `TCP_NODELAY`).
//!
//! The layout is `struct tcp_info` of `include/uapi/linux/tcp.h` through
//! `tcpi_total_rto_time` (Linux 6.7+, 248 bytes). The kernel copies
//! min(its size, ours), so an older kernel leaves the newer fields zero.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

use nix::sys::socket::{getsockopt, setsockopt, sockopt};
use serde::Serialize;

/// `struct tcp_info` as Linux 6.7+ defines it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
    rcv_wnd: u32,
    rehash: u32,
    total_rto: u16,
    total_rto_recoveries: u16,
    total_rto_time: u32,
}

const _: () = assert!(std::mem::size_of::<RawTcpInfo>() == 248);

/// The kernel's congestion-avoidance states (`enum tcp_ca_state`).
pub const CA_STATES: [&str; 5] = {
    let a = gentle_tcp::CaState::ALL;
    [
        a[0].name(),
        a[1].name(),
        a[2].name(),
        a[3].name(),
        a[4].name(),
    ]
};

/// What real mode reads of a kernel connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TcpInfo {
    /// `enum tcp_ca_state`: 0 open … 4 loss ([`CA_STATES`]).
    pub ca_state: u8,
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Smoothed RTT and its variation, µs.
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    /// The retransmission timeout, µs.
    pub rto_us: u32,
    pub snd_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub reordering: u32,
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    pub segs_out: u32,
    pub data_segs_out: u32,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    /// Retransmission timeouts (SYN ones included) and recoveries from them.
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    /// The options negotiated: bit 0 timestamps, 1 SACK, 2 window scaling, 3 ECN.
    pub options: u8,
}

impl TcpInfo {
    /// The CA state's name.
    pub fn ca_state_name(&self) -> &'static str {
        CA_STATES
            .get(self.ca_state as usize)
            .copied()
            .unwrap_or("?")
    }
}

/// The socket's `struct tcp_info`, as far as [`RawTcpInfo`] goes.
fn raw_tcp_info(sock: &impl AsFd) -> io::Result<RawTcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = std::mem::size_of::<RawTcpInfo>() as libc::socklen_t;
    // libc: nix has no TCP_INFO option (its struct grows with the kernel; this is
    // the prefix gentle reads).
    // SAFETY: getsockopt writes at most `len` bytes into `raw`, which is that big.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut RawTcpInfo).cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(raw)
}

/// Reads `TCP_INFO` of a TCP socket.
pub fn tcp_info(sock: &impl AsFd) -> io::Result<TcpInfo> {
    let raw = raw_tcp_info(sock)?;
    Ok(TcpInfo {
        ca_state: raw.ca_state,
        cwnd: raw.snd_cwnd,
        ssthresh: raw.snd_ssthresh,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        min_rtt_us: raw.min_rtt,
        rto_us: raw.rto,
        snd_mss: raw.snd_mss,
        unacked: raw.unacked,
        sacked: raw.sacked,
        lost: raw.lost,
        reordering: raw.reordering,
        total_retrans: raw.total_retrans,
        segs_out: raw.segs_out,
        data_segs_out: raw.data_segs_out,
        bytes_acked: raw.bytes_acked,
        bytes_received: raw.bytes_received,
        bytes_retrans: raw.bytes_retrans,
        dsack_dups: raw.dsack_dups,
        reord_seen: raw.reord_seen,
        total_rto: raw.total_rto,
        total_rto_recoveries: raw.total_rto_recoveries,
        options: raw.options,
    })
}

/// Every field of the socket's `TCP_INFO` by its name in packetdrill's `%{ }%`
/// blocks (`tcpi_` and the field's name in `struct tcp_info`).
pub fn tcp_info_fields(sock: &impl AsFd) -> io::Result<Vec<(&'static str, i128)>> {
    let raw = raw_tcp_info(sock)?;
    macro_rules! fields {
        ($($f:ident),*) => {
            vec![$((concat!("tcpi_", stringify!($f)), i128::from(raw.$f))),*]
        };
    }
    let mut v = fields!(
        state,
        ca_state,
        retransmits,
        probes,
        backoff,
        options,
        rto,
        ato,
        snd_mss,
        rcv_mss,
        unacked,
        sacked,
        lost,
        retrans,
        fackets,
        last_data_sent,
        last_ack_sent,
        last_data_recv,
        last_ack_recv,
        pmtu,
        rcv_ssthresh,
        rtt,
        rttvar,
        snd_ssthresh,
        snd_cwnd,
        advmss,
        reordering,
        rcv_rtt,
        rcv_space,
        total_retrans,
        pacing_rate,
        max_pacing_rate,
        bytes_acked,
        bytes_received,
        segs_out,
        segs_in,
        notsent_bytes,
        min_rtt,
        data_segs_in,
        data_segs_out,
        delivery_rate,
        busy_time,
        rwnd_limited,
        sndbuf_limited,
        delivered,
        delivered_ce,
        bytes_sent,
        bytes_retrans,
        dsack_dups,
        reord_seen,
        rcv_ooopack,
        snd_wnd,
        rcv_wnd,
        rehash,
        total_rto,
        total_rto_recoveries,
        total_rto_time
    );
    // The bit fields of `tcpi_wscale` and `tcpi_flags`.
    v.push(("tcpi_snd_wscale", i128::from(raw.wscale & 0xf)));
    v.push(("tcpi_rcv_wscale", i128::from(raw.wscale >> 4)));
    v.push(("tcpi_delivery_rate_app_limited", i128::from(raw.flags & 1)));
    v.push((
        "tcpi_fastopen_client_fail",
        i128::from((raw.flags >> 1) & 3),
    ));
    Ok(v)
}

/// Pins the socket's congestion control (root may choose any the kernel has, even
/// one the namespace may not make its default: cubic here).
pub fn set_congestion(sock: &impl AsFd, cc: &str) -> io::Result<()> {
    setsockopt(sock, sockopt::TcpCongestion, &OsString::from(cc)).map_err(|e| {
        let e = io::Error::from(e);
        io::Error::new(e.kind(), format!("TCP_CONGESTION {cc}: {e}"))
    })
}

/// Reads the socket's congestion control.
pub fn congestion(sock: &impl AsFd) -> io::Result<String> {
    let cc = getsockopt(sock, sockopt::TcpCongestion)?;
    Ok(cc.to_string_lossy().into_owned())
}

/// The bytes written and not yet acknowledged (`SIOCOUTQ`).
pub fn unacked_bytes(sock: &impl AsFd) -> io::Result<u32> {
    nix::ioctl_read_bad!(outq, libc::TIOCOUTQ, libc::c_int);
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int.
    unsafe { outq(sock.as_fd().as_raw_fd(), &mut n) }?;
    Ok(n as u32)
}
