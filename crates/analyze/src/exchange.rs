//! Application exchanges (the talk's "per application entity" signatures): a request
//! from the client and the server's response, bounded by the HTTP/1.x request line
//! where the payload is visible and by changes of direction otherwise.
//!
//! The response time is the server-side one of `gentle-aggression-sigcomm13.txt` §8.1,
//! which `gentle run` also reports: from the request's first byte arriving to the ACK
//! of the response's last byte.

use serde::Serialize;

use crate::Dir;
use crate::cause::CauseCounts;
use crate::sender::{Episode, Retransmission};

/// One request and its response.
#[derive(Clone, Debug, Serialize)]
pub struct Exchange {
    /// Its number within the flow.
    pub index: u32,
    /// Request bytes (new data from the client).
    pub request_bytes: u64,
    /// Response bytes (new data from the server).
    pub response_bytes: u64,
    /// The request's first byte, ns (capture clock).
    pub request_ns: u64,
    /// Request in to the ACK of the response's last byte, ms.
    pub response_ms: Option<f64>,
    /// Request in to the response's first byte out, ms.
    pub first_byte_ms: Option<f64>,
    /// The server's retransmissions while it was under way.
    pub retransmissions: CauseCounts,
    /// Recovery episodes that began while it was under way.
    pub recoveries: u32,
    /// The HTTP request line's method and target, when visible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_request: Option<String>,
    /// The HTTP status code, when visible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

impl Exchange {
    /// The response saw a retransmission.
    pub fn lossy(&self) -> bool {
        self.retransmissions.total() > 0
    }
}

/// When all of a response that had been sent was acknowledged, and how long the
/// response was then.
type Acked = (u64, u64);

/// The exchanges of one flow.
#[derive(Debug, Default)]
pub struct Exchanges {
    done: Vec<Exchange>,
    /// The exchange under way, when its response began, and when all of it that
    /// had been sent was acknowledged.
    cur: Option<(Exchange, Option<u64>, Option<Acked>)>,
}

/// HTTP/1.x methods (RFC 9110 §9.3) that start a request line.
const METHODS: [&str; 9] = [
    "GET ", "POST ", "HEAD ", "PUT ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE ",
];

fn http_request_line(p: &[u8]) -> Option<String> {
    let m = METHODS.iter().find(|m| p.starts_with(m.as_bytes()))?;
    let rest = &p[m.len()..];
    let end = rest
        .iter()
        .position(|&b| b == b' ' || b == b'\r')
        .unwrap_or(rest.len());
    let target = String::from_utf8_lossy(&rest[..end.min(200)]);
    Some(format!("{}{}", m, target))
}

fn http_status(p: &[u8]) -> Option<u16> {
    // "HTTP/1.1 200 OK"
    if !p.starts_with(b"HTTP/1.") || p.len() < 12 {
        return None;
    }
    std::str::from_utf8(&p[9..12]).ok()?.parse().ok()
}

impl Exchanges {
    /// New data one way: `bytes` of it; `payload` is what was captured of the packet.
    pub fn data(&mut self, dir: Dir, t: u64, bytes: u64, payload: &[u8]) {
        match dir {
            Dir::ToServer => {
                if bytes == 0 {
                    return;
                }
                let http = http_request_line(payload);
                let new = match &self.cur {
                    None => true,
                    // A new request line, or the client speaking after the server.
                    Some((e, _, _)) => {
                        e.response_bytes > 0 || http.is_some() && e.request_bytes > 0
                    }
                };
                if new {
                    self.close();
                    self.open(t, http);
                }
                if let Some((e, _, _)) = &mut self.cur {
                    e.request_bytes += bytes;
                }
            }
            Dir::ToClient => {
                let Some((e, first, _)) = &mut self.cur else {
                    if bytes == 0 {
                        return;
                    }
                    // The server speaks first (or the request is before the capture).
                    self.open(t, None);
                    return self.data(dir, t, bytes, payload);
                };
                if bytes > 0 {
                    if first.is_none() {
                        *first = Some(t);
                        e.http_status = http_status(payload);
                    }
                    e.response_bytes += bytes;
                }
            }
        }
    }

    /// Starts an exchange whose request (if any) began at `t`.
    fn open(&mut self, t: u64, http_request: Option<String>) {
        self.cur = Some((
            Exchange {
                index: self.done.len() as u32,
                request_bytes: 0,
                response_bytes: 0,
                request_ns: t,
                response_ms: None,
                first_byte_ms: None,
                retransmissions: CauseCounts::default(),
                recoveries: 0,
                http_request,
                http_status: None,
            },
            None,
            None,
        ));
    }

    /// Everything the server sent has been acknowledged, at `t`. The response ends
    /// at the first such ACK after its last byte: a later one (of the FIN that
    /// closes an idle connection minutes on) does not move it.
    pub fn response_acked(&mut self, t: u64) {
        if let Some((e, _, acked)) = &mut self.cur
            && e.response_bytes > 0
            && acked.is_none_or(|(_, bytes)| bytes < e.response_bytes)
        {
            *acked = Some((t, e.response_bytes));
        }
    }

    fn close(&mut self) {
        if let Some((mut e, first, acked)) = self.cur.take() {
            let ms = |x: u64| x.saturating_sub(e.request_ns) as f64 / 1e6;
            e.first_byte_ms = first.map(ms);
            e.response_ms = acked.map(|(t, _)| ms(t));
            self.done.push(e);
        }
    }

    /// The exchanges, the last one closed at the end of the flow, each with the
    /// server's retransmissions and recovery episodes from its request to the next.
    pub fn finish(mut self, retrans: &[Retransmission], episodes: &[Episode]) -> Vec<Exchange> {
        self.close();
        let mut ex = self.done;
        for r in retrans {
            if let Some(i) = exchange_at(&ex, r.t_ns) {
                ex[i].retransmissions.add(r.cause);
                if r.spurious.is_some() {
                    ex[i].retransmissions.spurious += 1;
                }
            }
        }
        for e in episodes {
            if let Some(i) = exchange_at(&ex, e.start_ns) {
                ex[i].recoveries += 1;
            }
        }
        ex
    }
}

/// The exchange under way at `t_ns` (capture clock) among a flow's exchanges `ex`: the
/// last whose request came at or before it; none before the first request.
pub fn exchange_at(ex: &[Exchange], t_ns: u64) -> Option<usize> {
    ex.partition_point(|e| e.request_ns <= t_ns).checked_sub(1)
}
