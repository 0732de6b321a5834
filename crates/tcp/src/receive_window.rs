//! The window a receiver advertises, chosen as Linux chooses it
//! (`tcp_select_window` and `__tcp_select_window`, net/ipv4/tcp_output.c).
//!
//! - The window is the free receive space: the buffer less what is queued, in order
//!   or out of order.
//! - It is never shrunk (RFC 9293 §3.8.6.2.2: "the receiver SHOULD NOT shrink the
//!   window"; RFC 7323 §2.4): when the free space would offer less than the right
//!   edge already offered (`rcv_wup + rcv_wnd`), the old right edge is offered again,
//!   rounded up to the window-scale granularity. Out-of-order data therefore leaves
//!   the window of a duplicate ACK unchanged, as RFC 5681 §2's definition of a
//!   duplicate ACK needs.
//! - With window scaling the free space is rounded up to a multiple of the scale
//!   unit ("advertise enough space so that it won't get scaled away"); without it,
//!   to a multiple of the MSS, and an offer within one MSS of the free space is kept.
//! - Receiver silly-window avoidance (RFC 9293 §3.8.6.2.2, RFC 1122 §4.2.3.3): less
//!   than one MSS free, with the buffer more than half full, offers nothing new.
//! - The largest offer is `65535 << shift` (RFC 7323 §2.3; Linux clamps
//!   `window_clamp` to it in `tcp_select_initial_window`).
//!
//! - The offer is also capped by `rcv_ssthresh`, which starts at the SYN's window
//!   and grows by two segments for every segment received in order, up to the
//!   buffer (`tcp_grow_window`, for segments whose memory overhead is the usual
//!   one), so the window opens as a Linux receiver's does. gentle does not model
//!   receive-buffer autotuning: the buffer is `recv_buffer` from the start. Linux
//!   also grows the cap on out-of-order data with SACK, but only while the cap is
//!   below the free space of the still small initial buffer, which out-of-order data
//!   is filling; gentle does not, so the duplicate ACKs of a loss carry one window.

/// The window state of the receiving half.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReceiveWindow {
    /// Bytes offered by the last segment sent, from `rcv_wup` (Linux `rcv_wnd`).
    offered: u64,
    /// Our window-scale shift (RFC 7323 §2.2).
    shift: u8,
    /// The growing cap on the offer (Linux `rcv_ssthresh`).
    ssthresh: u64,
}

impl ReceiveWindow {
    pub fn new(shift: u8) -> Self {
        ReceiveWindow {
            offered: 0,
            shift,
            ssthresh: 0,
        }
    }

    /// Bytes offered by the last segment sent, from `rcv_wup`.
    pub fn offered(&self) -> u64 {
        self.offered
    }
    /// Our window-scale shift.
    pub fn shift(&self) -> u8 {
        self.shift
    }
    /// The peer does not scale windows: neither do we (RFC 7323 §2.2).
    pub fn no_scaling(&mut self) {
        self.shift = 0;
    }
    /// Our SYN or SYN-ACK offered `window` (unscaled, RFC 7323 §2.2): the offer
    /// and its cap start there.
    pub fn on_syn_sent(&mut self, window: u16) {
        self.offered = window as u64;
        self.ssthresh = window as u64;
    }

    /// Linux `tcp_grow_window` for a segment of `len` bytes: two of our segments
    /// (`advmss`), or twice the segment, more, while the cap is below the buffer.
    /// Segments under 128 bytes do not count (`tcp_event_data_recv`).
    pub fn grow(&mut self, len: u32, advmss: u32, buffer: u32) {
        let clamp = (buffer as u64).min(self.max_window());
        if len < 128 || self.ssthresh >= clamp {
            return;
        }
        let incr = (2 * advmss as u64).max(2 * len as u64);
        self.ssthresh = (self.ssthresh + incr).min(clamp);
    }

    /// Largest window the field can carry with this shift.
    pub fn max_window(&self) -> u64 {
        65535u64 << self.shift
    }

    /// The window the SYN or SYN-ACK offers (unscaled, RFC 7323 §2.2): the buffer,
    /// at most 65535, rounded down to a multiple of the MSS
    /// (`tcp_select_initial_window`).
    pub fn initial(buffer: u32, mss: u32) -> u64 {
        let space = (buffer as u64).min(65535);
        let mss = mss.max(1) as u64;
        if space > mss {
            space / mss * mss
        } else {
            space
        }
    }

    /// Linux `__tcp_select_window`: the window the free space allows now.
    ///
    /// `buffer` is the receive buffer, `free` the part of it not holding data, `mss`
    /// the peer's segment size as we measure it.
    pub fn free_space_window(&self, buffer: u64, free: u64, mss: u64) -> u64 {
        let full = buffer.min(self.max_window());
        let free = free.min(full);
        let mss = mss.clamp(1, full.max(1));
        if free < full / 2 && free < mss {
            return 0;
        }
        let free = free.min(self.ssthresh.max(mss));
        if self.shift > 0 {
            let unit = 1u64 << self.shift;
            free.div_ceil(unit) * unit
        } else {
            let window = self.offered;
            if window + mss <= free || window > free {
                free / mss * mss
            } else if mss == full && free > window + full / 2 {
                free
            } else {
                window
            }
        }
    }

    /// Linux `tcp_select_window`: the window (in bytes) to offer from `rcv_nxt`, given
    /// what the last segment offered from `rcv_wup`. Never less than what is left of
    /// the last offer.
    pub fn select(&self, rcv_nxt: u64, rcv_wup: u64, free_space_window: u64) -> u64 {
        let cur = (rcv_wup + self.offered).saturating_sub(rcv_nxt);
        let unit = 1u64 << self.shift;
        let w = if free_space_window < cur {
            cur.div_ceil(unit) * unit
        } else {
            free_space_window
        };
        w.min(self.max_window())
    }

    /// The window field for an offer of `bytes` (RFC 7323 §2.3).
    pub fn field(&self, bytes: u64) -> u16 {
        (bytes >> self.shift).min(65535) as u16
    }

    /// Records the offer a sent segment carried in its window field.
    pub fn on_sent(&mut self, field: u16) {
        self.offered = (field as u64) << self.shift;
    }
}
