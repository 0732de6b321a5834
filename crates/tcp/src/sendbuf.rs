//! The send buffer: bytes written by the application and not yet acknowledged,
//! held as shared [`Bytes`] chunks so segments can reference them without copying.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};

#[derive(Clone, Debug, Default)]
pub struct SendBuffer {
    chunks: VecDeque<Bytes>,
    /// Sequence offset of the first byte held.
    start: u64,
    len: u64,
}

impl SendBuffer {
    pub fn new(start: u64) -> Self {
        SendBuffer {
            chunks: VecDeque::new(),
            start,
            len: 0,
        }
    }
    /// The chunk queue's storage, emptied, for a new connection to reuse; this
    /// buffer is left without any.
    pub fn take_storage(&mut self) -> VecDeque<Bytes> {
        let mut q = std::mem::take(&mut self.chunks);
        q.clear();
        q
    }
    /// An empty buffer takes `q` (empty) as its storage.
    pub fn reuse(&mut self, q: VecDeque<Bytes>) {
        debug_assert!(self.chunks.is_empty() && q.is_empty());
        self.chunks = q;
    }
    /// Sequence offset one past the last byte written.
    pub fn end(&self) -> u64 {
        self.start + self.len
    }
    pub fn push(&mut self, data: Bytes) {
        if data.is_empty() {
            return;
        }
        self.len += data.len() as u64;
        self.chunks.push_back(data);
    }
    /// Drops bytes before `upto` (acknowledged).
    pub fn release(&mut self, upto: u64) {
        while upto > self.start {
            let Some(front) = self.chunks.front_mut() else {
                break;
            };
            let n = (upto - self.start).min(front.len() as u64) as usize;
            if n == front.len() {
                self.chunks.pop_front();
            } else {
                *front = front.slice(n..);
            }
            self.start += n as u64;
            self.len -= n as u64;
        }
    }
    /// The bytes `[seq, seq+len)`. Shares the buffer when they lie in one chunk,
    /// copies (allocates) only when they straddle a chunk boundary.
    pub fn slice(&self, seq: u64, len: usize) -> Bytes {
        if len == 0 {
            return Bytes::new();
        }
        debug_assert!(seq >= self.start && seq + len as u64 <= self.end());
        let mut off = (seq - self.start) as usize;
        let mut idx = 0;
        while idx < self.chunks.len() && off >= self.chunks[idx].len() {
            off -= self.chunks[idx].len();
            idx += 1;
        }
        let c = &self.chunks[idx];
        if off + len <= c.len() {
            return c.slice(off..off + len);
        }
        let mut out = BytesMut::with_capacity(len);
        let mut need = len;
        while need > 0 {
            let c = &self.chunks[idx];
            let take = (c.len() - off).min(need);
            out.extend_from_slice(&c[off..off + take]);
            need -= take;
            off = 0;
            idx += 1;
        }
        out.freeze()
    }
}
