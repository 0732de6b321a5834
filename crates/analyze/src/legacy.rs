//! pcap files of format 2.2 and some of 2.3 (libpcap before 0.4, AIX's tcpdump):
//! their record headers hold the frame's original length before its captured
//! length, the other way round from format 2.4. Wireshark reads them by swapping the
//! two fields (`wiretap/libpcap.c`: for minor version 2 always, for 2.3 when the
//! captured length exceeds the original); this reader does the same to the byte
//! stream before `pcap-parser` sees it.

use std::io::{self, Read};

/// A pcap file header's length.
const FILE_HEADER: usize = 24;
/// A pcap record header's length.
const RECORD_HEADER: usize = 16;

/// Whether the file head `head` is a pcap file whose record lengths come swapped,
/// and its byte order (`true`: big-endian).
pub fn swapped_lengths(head: &[u8]) -> Option<bool> {
    let magic: [u8; 4] = head.get(..4)?.try_into().ok()?;
    let big = match magic {
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => true,
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => false,
        _ => return None,
    };
    let v = |i: usize| -> Option<u16> {
        let b: [u8; 2] = head.get(i..i + 2)?.try_into().ok()?;
        Some(if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    };
    (v(4)? == 2 && v(6)? <= 3).then_some(big)
}

/// Passes a pcap file through, swapping each record's two length fields as
/// Wireshark does for format 2.2 (always) and 2.3 (when they are out of order).
pub struct SwapLengths<R> {
    inner: R,
    big_endian: bool,
    minor: u16,
    buf: Vec<u8>,
    pos: usize,
    started: bool,
}

impl<R: Read> SwapLengths<R> {
    /// Wraps `inner`, a pcap file from its first byte.
    pub fn new(inner: R, big_endian: bool) -> Self {
        SwapLengths {
            inner,
            big_endian,
            minor: 2,
            buf: Vec::new(),
            pos: 0,
            started: false,
        }
    }

    fn u32_at(&self, b: &[u8]) -> u32 {
        let a: [u8; 4] = b.try_into().expect("four bytes");
        if self.big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    /// Reads up to `n` bytes onto the buffer; fewer only at the end of the file.
    fn take(&mut self, n: usize) -> io::Result<usize> {
        let start = self.buf.len();
        (&mut self.inner)
            .take(n as u64)
            .read_to_end(&mut self.buf)?;
        Ok(self.buf.len() - start)
    }

    /// The next piece: the file header, or a record with its lengths put right.
    fn refill(&mut self) -> io::Result<()> {
        self.buf.clear();
        self.pos = 0;
        if !self.started {
            self.started = true;
            if self.take(FILE_HEADER)? == FILE_HEADER {
                let m = [self.buf[6], self.buf[7]];
                self.minor = if self.big_endian {
                    u16::from_be_bytes(m)
                } else {
                    u16::from_le_bytes(m)
                };
            }
            return Ok(());
        }
        if self.take(RECORD_HEADER)? < RECORD_HEADER {
            return Ok(());
        }
        let (first, second) = (
            self.u32_at(&self.buf[8..12]),
            self.u32_at(&self.buf[12..16]),
        );
        if self.minor < 3 || first < second {
            // Wireshark's rule for 2.3: the captured length cannot exceed the
            // original, so fields that say so are the wrong way round.
            let (a, b) = self.buf[8..16].split_at_mut(4);
            a.swap_with_slice(b);
        }
        let caplen = self.u32_at(&self.buf[8..12]) as usize;
        self.take(caplen)?;
        Ok(())
    }
}

impl<R: Read> Read for SwapLengths<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.buf.len() {
            self.refill()?;
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
