//! The engine's HTTP/1.1 responder (RFC 9112 §2–§9, the little of it a test
//! client needs): what `curl` talks to on `gentle serve`. One request at a time
//! on a connection: `GET /N` (`/100k`, `/2M` too) answers N bytes of the pattern,
//! `GET /` the workload's response size, `HEAD` the same without a body; other
//! methods get 405 and unparseable sizes 404. Responses carry `Content-Length`;
//! the connection stays open unless the request says `Connection: close` or is
//! HTTP/1.0. The exchange's server time runs from the request's last byte to the
//! response acknowledged (engine counters give its retransmissions).

use bytes::Bytes;
use gentle_tcp::{Connection, Counters};
use serde::Serialize;

use crate::engine_host::PATTERN;

/// Longest HTTP request head the responder accepts.
const MAX_HEAD: usize = 16 * 1024;
/// Largest HTTP response the responder makes.
const MAX_HTTP_BODY: u64 = 1 << 30;

/// One HTTP exchange the responder answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HttpExchange {
    /// The connection's client port.
    pub peer_port: u16,
    /// The request line.
    pub request: String,
    pub status: u16,
    /// Body bytes sent.
    pub bytes: u64,
    /// Last request byte read to the response acknowledged, ns (`None`: never).
    pub server_ns: Option<u64>,
    /// Retransmissions and timeouts during it (engine counters).
    pub retrans_segs: u64,
    pub timeouts: u64,
}

/// One connection's responder state.
pub(crate) struct HttpServer {
    head: Vec<u8>,
    acking: Option<(usize, u64, Counters)>,
    close_after: bool,
    default_response: u64,
}

impl HttpServer {
    pub(crate) fn new(default_response: u64) -> Self {
        HttpServer {
            head: Vec::new(),
            acking: None,
            close_after: false,
            default_response,
        }
    }
}

/// The HTTP/1.1 responder (RFC 9112): one request at a time on a connection.
pub(crate) fn http_step(
    c: &mut Connection,
    s: &mut HttpServer,
    mono: u64,
    log: &mut Vec<HttpExchange>,
) -> Option<HttpExchange> {
    while let Some(b) = c.read() {
        if s.head.len() + b.len() <= MAX_HEAD {
            s.head.extend_from_slice(&b);
        } else {
            s.head.clear();
            c.close();
        }
    }
    if let Some((i, start, before)) = s.acking {
        if !c.all_acked() && !(s.close_after && c.is_closed()) {
            return None;
        }
        s.acking = None;
        let after = c.counters();
        let x = &mut log[i];
        x.server_ns = Some(mono - start);
        x.retrans_segs = after.retrans_segs - before.retrans_segs;
        x.timeouts = after.timeouts - before.timeouts;
    }
    if s.acking.is_some() || s.close_after {
        return None;
    }
    let Some(end) = s.head.windows(4).position(|w| w == b"\r\n\r\n") else {
        if c.peer_closed() {
            c.close();
        }
        return None;
    };
    let head = String::from_utf8_lossy(&s.head[..end]).into_owned();
    s.head.drain(..end + 4);
    let line = head.lines().next().unwrap_or("").to_string();
    let mut parts = line.split_whitespace();
    let (method, path, version) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    let wants_close = version == "HTTP/1.0"
        || head
            .lines()
            .any(|l| l.to_ascii_lowercase().replace(' ', "") == "connection:close");
    let size = parse_size(path.trim_start_matches('/'), s.default_response);
    let (status, reason, body) = match (method, size) {
        ("GET" | "HEAD", Some(n)) if n <= MAX_HTTP_BODY => (200, "OK", n),
        ("GET" | "HEAD", Some(_)) => (413, "Content Too Large", 0),
        ("GET" | "HEAD", None) => (404, "Not Found", 0),
        _ => (405, "Method Not Allowed", 0),
    };
    let mut resp = format!(
        "HTTP/1.1 {status} {reason}\r\nServer: gentle\r\nContent-Type: application/octet-stream\r\nContent-Length: {body}\r\n"
    );
    if wants_close {
        resp.push_str("Connection: close\r\n");
    }
    resp.push_str("\r\n");
    let mut bytes = resp.into_bytes();
    if method != "HEAD" {
        bytes.resize(bytes.len() + body as usize, PATTERN);
    }
    let before = *c.counters();
    c.write(Bytes::from(bytes));
    if wants_close {
        c.close();
        s.close_after = true;
    }
    s.acking = Some((log.len(), mono, before));
    Some(HttpExchange {
        peer_port: c.remote_port(),
        request: line.clone(),
        status,
        bytes: if method == "HEAD" { 0 } else { body },
        ..Default::default()
    })
}

/// `N`, `Nk`, `NK`, `NM`: a size; empty: `default`.
fn parse_size(s: &str, default: u64) -> Option<u64> {
    let s = s.split(['?', '#']).next().unwrap_or("");
    if s.is_empty() {
        return Some(default);
    }
    let (num, mult) = match s.as_bytes()[s.len() - 1] {
        b'k' | b'K' => (&s[..s.len() - 1], 1000),
        b'M' => (&s[..s.len() - 1], 1_000_000),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}
