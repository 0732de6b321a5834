//! Reading captures: pcap (with microsecond or nanosecond times, either byte order)
//! and pcapng (every interface with its own link type and time resolution), one record
//! at a time through `pcap-parser`, so memory does not grow with the file.
//!
//! A damaged file is an error naming the record and the byte offset where reading
//! stopped; the records before it have been delivered. A file that ends inside its
//! last record (tcpdump still writing, a copy cut short) is not damaged: its complete
//! records are read, and [`CaptureReader::cut_short`] says where it stopped, as
//! Wireshark warns that "the capture file appears to have been cut short in the
//! middle of a packet".

use std::fmt;
use std::io::Read;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{PcapBlockOwned, PcapError};

/// One captured frame, borrowed from the reader's buffer.
#[derive(Debug)]
pub struct Frame<'a> {
    /// 1-based record number in the file (pcapng counts packet blocks only).
    pub record: u64,
    /// Byte offset of the record in the file.
    pub offset: u64,
    /// Time, ns since the Unix epoch (or whatever epoch the capture used).
    pub ts_ns: u64,
    /// The link type of the frame's interface (`LINKTYPE_*`).
    pub linktype: i32,
    /// The captured bytes (`caplen` of them).
    pub data: &'a [u8],
    /// The frame's length on the wire.
    pub orig_len: u32,
}

/// Why a capture could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    /// The record being read (1-based); 0 for the file header.
    pub record: u64,
    /// Byte offset where reading stopped.
    pub offset: u64,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.record == 0 {
            write!(f, "byte {}: {}", self.offset, self.message)
        } else {
            write!(
                f,
                "record {} (byte {}): {}",
                self.record, self.offset, self.message
            )
        }
    }
}

impl std::error::Error for CaptureError {}

/// pcapng interface: link type and nanoseconds per timestamp unit (as a ratio).
#[derive(Clone, Copy, Debug)]
struct Iface {
    linktype: i32,
    /// Units per second.
    units: u64,
    offset_s: i64,
}

/// Streams the frames of a pcap or pcapng file.
pub struct CaptureReader<'r> {
    inner: Box<dyn PcapReaderIterator + Send + 'r>,
    /// Legacy pcap: link type and units per second.
    legacy: Option<(i32, u64)>,
    ifaces: Vec<Iface>,
    record: u64,
    offset: u64,
    /// Bytes of the block handed out last, consumed on the next call.
    pending: usize,
    /// The reader's buffer size now.
    capacity: usize,
    /// The current section's (or pcap file's) byte order, to read record lengths.
    big_endian: bool,
    /// Where the file ended inside a record, if it did.
    cut: Option<CaptureError>,
    done: bool,
}

/// The reader's buffer; a block larger than this (a 256 KiB jumbo record) still fits
/// because the buffer grows up to [`MAX_BLOCK`].
const BUFFER: usize = 1 << 18;
/// The largest record accepted: pcapng allows any length, but no link carries frames
/// near 16 MiB, so a larger length means a corrupt header.
const MAX_BLOCK: usize = 1 << 24;
/// A pcap file header's length; a pcapng section header block is at least 28 bytes.
const PCAP_HEADER: usize = 24;
/// The magic numbers of pcap (µs and ns, both byte orders; Kuznetzov's modified
/// format) and pcapng's section header block type, as the file's first four bytes.
const MAGICS: [[u8; 4]; 6] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0x34, 0xcd, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x0a, 0x0d, 0x0d, 0x0a],
];

impl<'r> CaptureReader<'r> {
    /// Starts reading; fails if the file is neither pcap nor pcapng.
    pub fn new<R: Read + Send + 'r>(mut reader: R) -> Result<Self, CaptureError> {
        let header_error = |message: String| CaptureError {
            record: 0,
            offset: 0,
            message,
        };
        // The file's head, read here to name what is wrong with a file too short to be
        // a capture; `pcap-parser` reads it again from the front.
        let mut head = Vec::new();
        if let Err(e) = reader.by_ref().take(BUFFER as u64).read_to_end(&mut head) {
            return Err(header_error(format!("read failed: {e}")));
        }
        if head.is_empty() {
            return Err(header_error(
                "empty file: expected a pcap or pcapng header".into(),
            ));
        }
        let magic = head.len() >= 4 && MAGICS.iter().any(|m| head[..4] == m[..]);
        if head.len() < PCAP_HEADER {
            let short = format!(
                "{} bytes, too short to be a pcap or pcapng file (a pcap file header takes \
                 {PCAP_HEADER} bytes, a pcapng section header at least 28)",
                head.len()
            );
            return Err(header_error(if magic {
                short
            } else {
                format!("not a capture: {short}")
            }));
        }
        if !magic {
            return Err(header_error(
                "not a capture: expected the magic number of pcap or pcapng".into(),
            ));
        }
        let swapped = crate::legacy::swapped_lengths(&head);
        let reader = std::io::Cursor::new(head).chain(reader);
        let reader: Box<dyn Read + Send + 'r> = match swapped {
            Some(big_endian) => Box::new(crate::legacy::SwapLengths::new(reader, big_endian)),
            None => Box::new(reader),
        };
        let inner = pcap_parser::create_reader(BUFFER, reader).map_err(|e| {
            header_error(match e {
                PcapError::HeaderNotRecognized => {
                    "not a capture: a damaged pcap or pcapng file header".into()
                }
                PcapError::Incomplete(_) => "the file ends inside its pcapng section header".into(),
                e => format!("not a capture: {}", describe(&e)),
            })
        })?;
        Ok(CaptureReader {
            inner,
            legacy: None,
            ifaces: Vec::new(),
            record: 0,
            offset: 0,
            pending: 0,
            capacity: BUFFER,
            big_endian: false,
            cut: None,
            done: false,
        })
    }

    /// Where the file ended inside a record, once [`CaptureReader::next`] has returned
    /// `Ok(None)` for it: the record cut short, its offset, and how much of it is there.
    /// The records before it were read.
    pub fn cut_short(&self) -> Option<&CaptureError> {
        self.cut.as_ref()
    }

    fn error(&self, message: impl Into<String>) -> CaptureError {
        CaptureError {
            record: self.record + 1,
            offset: self.offset,
            message: message.into(),
        }
    }

    /// The next frame, `Ok(None)` at the end of the file.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        if self.pending > 0 {
            self.inner.consume(self.pending);
            self.offset += self.pending as u64;
            self.pending = 0;
        }
        loop {
            if self.done {
                return Ok(None);
            }
            // Decide what the next block is without holding the borrow across the
            // refill below.
            let step = match self.inner.next() {
                Ok((len, block)) => Step::Block(len, meta(self.legacy, &self.ifaces, &block)),
                Err(PcapError::Eof) => Step::End,
                // The block is incomplete: more is to be read, or the buffer is too
                // small for it, or the file ends inside it.
                Err(PcapError::Incomplete(_) | PcapError::UnexpectedEof) => Step::Refill(false),
                Err(PcapError::BufferTooSmall) => Step::Refill(true),
                Err(e) => Step::Fail(describe(&e)),
            };
            match step {
                Step::End => {
                    self.done = true;
                    return Ok(None);
                }
                Step::Refill(too_small) => {
                    if !self.refill(too_small)? {
                        self.done = true;
                        return Ok(None);
                    }
                }
                Step::Fail(msg) => return Err(self.error(format!("corrupt record: {msg}"))),
                Step::Block(len, meta) => match meta {
                    Meta::Skip => {
                        self.inner.consume(len);
                        self.offset += len as u64;
                    }
                    Meta::Legacy(lt, units, big_endian) => {
                        self.legacy = Some((lt, units));
                        self.big_endian = big_endian;
                        self.inner.consume(len);
                        self.offset += len as u64;
                    }
                    Meta::Section(big_endian) => {
                        self.ifaces.clear();
                        self.big_endian = big_endian;
                        self.inner.consume(len);
                        self.offset += len as u64;
                    }
                    Meta::Iface(i) => {
                        self.ifaces.push(i);
                        self.inner.consume(len);
                        self.offset += len as u64;
                    }
                    Meta::Fail(msg) => return Err(self.error(msg)),
                    Meta::Packet { ts_ns, linktype } => {
                        self.record += 1;
                        self.pending = len;
                        let offset = self.offset;
                        let record = self.record;
                        // Borrow the block again, now for the caller.
                        let Ok((_, block)) = self.inner.next() else {
                            unreachable!("the block parsed a moment ago")
                        };
                        let (data, orig_len) = packet_bytes(block);
                        return Ok(Some(Frame {
                            record,
                            offset,
                            ts_ns,
                            linktype,
                            data,
                            orig_len,
                        }));
                    }
                },
            }
        }
    }

    /// More bytes for an incomplete block, in a larger buffer if it is `too_small`:
    /// `Ok(false)` when the file ends inside the block (the file was cut short), an
    /// error when its length is implausible.
    fn refill(&mut self, too_small: bool) -> Result<bool, CaptureError> {
        if let Some(len) = self.claimed_len()
            && len > MAX_BLOCK as u64
        {
            return Err(self.error(format!(
                "implausible record length of {len} bytes (no link carries frames near \
                 16 MiB): a corrupt record header"
            )));
        }
        if self.inner.reader_exhausted() {
            let left = self.inner.data().len();
            self.cut = Some(self.error(format!(
                "the file ends inside a record ({left} bytes of it present): the capture \
                 appears to have been cut short in the middle of a packet"
            )));
            return Ok(false);
        }
        // The unread bytes fill the whole buffer and still hold no complete block:
        // the block is larger than the buffer.
        if (too_small || self.inner.data().len() >= self.capacity) && !self.grow() {
            return Err(self.error("a record longer than 16 MiB: corrupt length"));
        }
        if let Err(e) = self.inner.refill() {
            let msg = format!("read failed: {}", describe(&e));
            return Err(self.error(msg));
        }
        Ok(true)
    }

    /// The length the next record's header claims, once its length field is read: a
    /// pcap record's captured length plus its 16-byte header, or a pcapng block's
    /// total length.
    fn claimed_len(&self) -> Option<u64> {
        let d = self.inner.data();
        let (at, extra) = if self.legacy.is_some() {
            (8, 16)
        } else {
            (4, 0)
        };
        let b: [u8; 4] = d.get(at..at + 4)?.try_into().ok()?;
        let v = if self.big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        };
        Some(v as u64 + extra)
    }

    fn grow(&mut self) -> bool {
        let want = self.capacity * 2;
        if want > MAX_BLOCK || !self.inner.grow(want) {
            return false;
        }
        self.capacity = want;
        true
    }
}

/// What a block means to the reader, decided before it is handed out.
fn meta(legacy: Option<(i32, u64)>, ifaces: &[Iface], block: &PcapBlockOwned<'_>) -> Meta {
    match block {
        PcapBlockOwned::LegacyHeader(h) => {
            let units = if h.is_nanosecond_precision() {
                1_000_000_000
            } else {
                1_000_000
            };
            Meta::Legacy(h.network.0, units, h.is_bigendian())
        }
        PcapBlockOwned::Legacy(b) => {
            let Some((lt, units)) = legacy else {
                return Meta::Fail("a packet before the file header".into());
            };
            let frac = b.ts_usec as u64;
            if frac >= units {
                return Meta::Fail(format!(
                    "timestamp fraction {frac} is not below one second ({units} units)"
                ));
            }
            Meta::Packet {
                ts_ns: b.ts_sec as u64 * 1_000_000_000 + frac * (1_000_000_000 / units),
                linktype: lt,
            }
        }
        PcapBlockOwned::NG(Block::SectionHeader(h)) => Meta::Section(h.big_endian()),
        PcapBlockOwned::NG(Block::InterfaceDescription(i)) => match ts_units(i.if_tsresol) {
            Some(units) if units > 0 => Meta::Iface(Iface {
                linktype: i.linktype.0,
                units,
                offset_s: i.ts_offset(),
            }),
            _ => Meta::Fail(format!(
                "interface {}: unusable time resolution (if_tsresol {})",
                ifaces.len(),
                i.if_tsresol
            )),
        },
        PcapBlockOwned::NG(Block::EnhancedPacket(p)) => {
            let Some(iface) = ifaces.get(p.if_id as usize) else {
                return Meta::Fail(format!(
                    "packet on interface {} but only {} described",
                    p.if_id,
                    ifaces.len()
                ));
            };
            let ts = ((p.ts_high as u64) << 32) | p.ts_low as u64;
            let secs = ts / iface.units;
            let frac = ts % iface.units;
            let ns = (frac as u128 * 1_000_000_000 / iface.units as u128) as u64;
            let secs = secs as i64 + iface.offset_s;
            Meta::Packet {
                ts_ns: (secs.max(0) as u64)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(ns),
                linktype: iface.linktype,
            }
        }
        PcapBlockOwned::NG(Block::SimplePacket(_)) => match ifaces.first() {
            // pcapng (draft-ietf-opsawg-pcapng §4.4): simple packets belong to
            // interface 0 and carry no time.
            Some(i) => Meta::Packet {
                ts_ns: 0,
                linktype: i.linktype,
            },
            None => Meta::Fail("a simple packet block with no interface".into()),
        },
        PcapBlockOwned::NG(_) => Meta::Skip,
    }
}

/// Timestamp units per second of an interface (pcapng §4.2 `if_tsresol`: 10^-n, or
/// 2^-n with the high bit set). pcap-parser 0.17's own reading refuses every
/// power-of-two resolution (it compares the byte with its flag bit still set).
fn ts_units(r: u8) -> Option<u64> {
    if r & 0x80 == 0 {
        10u64.checked_pow(r as u32)
    } else {
        1u64.checked_shl((r & 0x7f) as u32)
            .filter(|&u| u > 1 || r & 0x7f == 0)
    }
}

enum Step {
    Block(usize, Meta),
    End,
    /// Read more; `true` when the buffer must grow first.
    Refill(bool),
    Fail(String),
}

enum Meta {
    Skip,
    Legacy(i32, u64, bool),
    Section(bool),
    Iface(Iface),
    Packet { ts_ns: u64, linktype: i32 },
    Fail(String),
}

fn packet_bytes<'a>(block: PcapBlockOwned<'a>) -> (&'a [u8], u32) {
    match block {
        PcapBlockOwned::Legacy(b) => {
            let n = (b.caplen as usize).min(b.data.len());
            (&b.data[..n], b.origlen)
        }
        PcapBlockOwned::NG(Block::EnhancedPacket(p)) => {
            let n = (p.caplen as usize).min(p.data.len());
            (&p.data[..n], p.origlen)
        }
        PcapBlockOwned::NG(Block::SimplePacket(p)) => {
            let n = (p.origlen as usize).min(p.data.len());
            (&p.data[..n], p.origlen)
        }
        _ => (&[], 0),
    }
}

fn describe<I>(e: &PcapError<I>) -> String {
    match e {
        PcapError::Eof => "end of file".into(),
        PcapError::BufferTooSmall => "buffer too small".into(),
        PcapError::UnexpectedEof => "unexpected end of file".into(),
        PcapError::ReadError => "I/O error".into(),
        PcapError::Incomplete(n) => format!("{n} more bytes needed"),
        PcapError::HeaderNotRecognized => "header not recognised".into(),
        PcapError::NomError(_, k) | PcapError::OwnedNomError(_, k) => {
            format!("malformed block ({})", k.description())
        }
    }
}
