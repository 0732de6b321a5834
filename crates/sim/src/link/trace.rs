//! Trace-driven capacity: a link direction that may send only at the delivery
//! opportunities of a recorded trace, in the format of the Mahimahi emulator
//! (Netravali et al., "Mahimahi: Accurate Record-and-Replay for HTTP", USENIX ATC
//! 2015; traces recorded by Winstein et al., NSDI 2013): each line is a time in
//! milliseconds from the trace's start and stands for one opportunity to send one
//! 1500-byte packet; a time repeated on several lines is several opportunities in
//! that millisecond; the trace repeats from its start when it runs out, every
//! `last time` milliseconds. As Mahimahi's `LinkQueue` does, an opportunity's 1500
//! bytes may carry several small packets, and a packet takes its bytes from as many
//! opportunities as it needs, leaving at the last; opportunities nobody uses are lost.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// A recorded trace of delivery opportunities.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkTrace {
    /// Where it was read from (for reports).
    pub name: String,
    /// The opportunities, ns from the start, non-decreasing.
    #[serde(skip)]
    pub times_ns: Arc<Vec<u64>>,
    /// The trace repeats every `period_ns` (its last time; at least 1 ms).
    #[serde(skip)]
    pub period_ns: u64,
}

impl LinkTrace {
    /// A trace from Mahimahi's text: one time in ms per line. An error names the
    /// line (from 1) and what is wrong.
    pub fn parse(name: &str, text: &str) -> Result<LinkTrace, (usize, String)> {
        let mut times = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() {
                continue;
            }
            let ms: u64 = l.parse().map_err(|_| {
                (
                    i + 1,
                    format!("`{l}` is not a whole number of milliseconds"),
                )
            })?;
            let ns = ms * 1_000_000;
            if times.last().is_some_and(|&p| ns < p) {
                return Err((i + 1, format!("{ms} ms is before the line above it")));
            }
            times.push(ns);
        }
        let last = *times
            .last()
            .ok_or((1, "the trace has no opportunity".to_string()))?;
        Ok(LinkTrace {
            name: name.to_string(),
            times_ns: Arc::new(times),
            period_ns: last.max(1_000_000),
        })
    }

    /// The time of opportunity `k` of the endlessly repeated trace.
    fn at(&self, k: u64) -> u64 {
        let n = self.times_ns.len() as u64;
        (k / n) * self.period_ns + self.times_ns[(k % n) as usize]
    }

    /// The first opportunity at or after `t`.
    fn first_at_or_after(&self, t: u64) -> u64 {
        let n = self.times_ns.len() as u64;
        let cycle = t / self.period_ns;
        let within = t - cycle * self.period_ns;
        let i = self.times_ns.partition_point(|&x| x < within) as u64;
        cycle * n + i
    }
}

/// Where the transmitter is in the trace.
#[derive(Clone, Debug, Default)]
pub struct TraceCursor {
    /// The next opportunity with bytes left, and how many.
    next: u64,
    left: u32,
    /// The trace's time at the trial's time 0: each trial starts somewhere else in
    /// the trace, so that trials sample its variation.
    offset_ns: u64,
}

impl TraceCursor {
    /// A cursor whose trial starts `offset_ns` into the trace.
    pub fn starting_at(offset_ns: u64) -> TraceCursor {
        TraceCursor {
            offset_ns,
            ..TraceCursor::default()
        }
    }

    /// When a packet of `bytes` that may start at `start` has left: at the
    /// opportunity that carries its last byte.
    pub fn depart(&mut self, trace: &LinkTrace, start: u64, bytes: u32) -> u64 {
        self.depart_in_trace(trace, start + self.offset_ns, bytes) - self.offset_ns
    }

    fn depart_in_trace(&mut self, trace: &LinkTrace, start: u64, bytes: u32) -> u64 {
        if self.left == 0 {
            // The first use.
            self.left = OPPORTUNITY_BYTES;
            self.next = trace.first_at_or_after(start);
        }
        if trace.at(self.next) < start {
            // Opportunities before `start` went unused.
            self.next = trace.first_at_or_after(start);
            self.left = OPPORTUNITY_BYTES;
        }
        let mut need = bytes.max(1);
        loop {
            let take = need.min(self.left);
            need -= take;
            self.left -= take;
            let t = trace.at(self.next);
            if self.left == 0 {
                self.next += 1;
                self.left = OPPORTUNITY_BYTES;
            }
            if need == 0 {
                return t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(text: &str) -> LinkTrace {
        LinkTrace::parse("t", text).unwrap()
    }

    #[test]
    fn packets_leave_at_opportunities_and_share_one_when_small() {
        let tr = trace("10\n10\n20\n40\n");
        let mut c = TraceCursor::default();
        let ms = |ns: u64| ns / 1_000_000;
        // Two full packets use the two opportunities at 10 ms.
        assert_eq!(ms(c.depart(&tr, 0, 1500)), 10);
        assert_eq!(ms(c.depart(&tr, 0, 1500)), 10);
        // Three ACKs share the one at 20 ms.
        assert_eq!(ms(c.depart(&tr, 0, 52)), 20);
        assert_eq!(ms(c.depart(&tr, 0, 52)), 20);
        assert_eq!(ms(c.depart(&tr, 0, 52)), 20);
        // A packet ready at 41 ms waits for the repeat: 40 + 10.
        assert_eq!(ms(c.depart(&tr, 41_000_000, 1500)), 50);
        // Idle for ten periods: the unused opportunities are lost.
        assert_eq!(ms(c.depart(&tr, 400_000_000, 1500)), 410);
        // A trial that starts 15 ms into the trace meets its 20 ms opportunity at 5.
        let mut c = TraceCursor::starting_at(15_000_000);
        assert_eq!(ms(c.depart(&tr, 0, 1500)), 5);
    }

    #[test]
    fn the_long_run_rate_is_the_traces() {
        // 4 opportunities every 40 ms (10, 10, 20, 40): 1.2 Mbit/s of 1500-byte
        // packets, so 3000 of them take 750 periods.
        let tr = trace("10\n10\n20\n40\n");
        let mut c = TraceCursor::default();
        let mut t = 0;
        for _ in 0..3000 {
            t = c.depart(&tr, 0, 1500);
        }
        assert_eq!(t, 30_000_000_000);
    }

    #[test]
    fn bad_traces_name_their_line() {
        assert_eq!(LinkTrace::parse("t", "5\n3\n").unwrap_err().0, 2);
        assert_eq!(LinkTrace::parse("t", "5\nx\n").unwrap_err().0, 2);
        assert!(LinkTrace::parse("t", "\n").is_err());
    }
}
