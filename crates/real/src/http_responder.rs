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

use crate::endpoints::PATTERN;

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
    /// Bytes read and not yet parsed (after a request's head: its body).
    head: Vec<u8>,
    /// A request whose head has been read, waiting for the rest of its body.
    pending: Option<Request>,
    /// Body bytes of the pending request still to come (dropped as they arrive).
    body_left: u64,
    acking: Option<(usize, u64, Counters)>,
    close_after: bool,
    default_response: u64,
}

impl HttpServer {
    pub(crate) fn new(default_response: u64) -> Self {
        HttpServer {
            head: Vec::new(),
            pending: None,
            body_left: 0,
            acking: None,
            close_after: false,
            default_response,
        }
    }
}

/// A request's head, as the responder needs it.
#[derive(Clone, Debug, PartialEq)]
struct Request {
    method: String,
    path: String,
    /// The request line, as logged.
    line: String,
    /// The connection ends after the response (HTTP/1.0, `Connection: close`).
    close: bool,
    /// `Content-Length`: body bytes after the head.
    body: u64,
}

/// What the start of the bytes read holds.
#[derive(Debug, PartialEq)]
enum Parsed {
    /// Not yet a whole head.
    Partial,
    /// A request the responder cannot read: answered 400, the connection closed.
    Bad(String),
    /// A head of this many bytes.
    Head(Request, usize),
}

/// Parses a request head (RFC 9112 §2–§6) from the start of `buf`. Header names
/// and the `close` token are case-insensitive; a body is read by `Content-Length`
/// only (a chunked body is refused as bad).
fn parse_request(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let n = match req.parse(buf) {
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Ok(httparse::Status::Complete(n)) => n,
        Err(e) => return Parsed::Bad(e.to_string()),
    };
    let (method, path) = (req.method.unwrap_or(""), req.path.unwrap_or(""));
    let version = req.version.unwrap_or(1);
    let mut close = version == 0;
    let mut body = None;
    for h in req.headers.iter() {
        let value = String::from_utf8_lossy(h.value);
        if h.name.eq_ignore_ascii_case("connection") {
            close |= value
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("close"));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            match value.trim().parse::<u64>() {
                Ok(n) if body.is_none_or(|b| b == n) => body = Some(n),
                _ => return Parsed::Bad(format!("bad Content-Length {value:?}")),
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Parsed::Bad(format!("Transfer-Encoding {value:?} not supported"));
        }
    }
    let request = Request {
        method: method.to_string(),
        path: path.to_string(),
        line: format!("{method} {path} HTTP/1.{version}"),
        close,
        body: body.unwrap_or(0),
    };
    Parsed::Head(request, n)
}

/// Reads what arrived: the pending request's body is dropped, anything after it
/// kept, up to [`MAX_HEAD`] bytes (the rest waits in the connection).
fn fill(c: &mut Connection, s: &mut HttpServer) {
    loop {
        let k = s
            .head
            .len()
            .min(s.body_left.try_into().unwrap_or(usize::MAX));
        s.head.drain(..k);
        s.body_left -= k as u64;
        if s.head.len() >= MAX_HEAD {
            return;
        }
        match c.read() {
            Some(b) => s.head.extend_from_slice(&b),
            None => return,
        }
    }
}

/// The HTTP/1.1 responder (RFC 9112): one request at a time on a connection.
pub(crate) fn http_step(
    c: &mut Connection,
    s: &mut HttpServer,
    mono: u64,
    log: &mut [HttpExchange],
) -> Option<HttpExchange> {
    fill(c, s);
    if let Some((i, start, before)) = s.acking {
        if !(c.all_acked() || s.close_after && c.is_closed()) {
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
    if s.pending.is_none() {
        match parse_request(&s.head) {
            Parsed::Head(req, n) => {
                s.head.drain(..n);
                s.body_left = req.body;
                s.pending = Some(req);
                fill(c, s);
            }
            Parsed::Bad(why) => {
                s.head.clear();
                let req = Request {
                    method: String::new(),
                    path: String::new(),
                    line: format!("(bad request: {why})"),
                    close: true,
                    body: 0,
                };
                return Some(respond(c, s, &req, Some((400, "Bad Request")), mono, log));
            }
            Parsed::Partial if s.head.len() >= MAX_HEAD => {
                s.head.clear();
                c.close();
                return None;
            }
            Parsed::Partial => {}
        }
    }
    if s.pending.is_none() || s.body_left > 0 {
        if c.peer_closed() {
            c.close();
        }
        return None;
    }
    let req = s.pending.take().expect("a request");
    Some(respond(c, s, &req, None, mono, log))
}

/// Writes the response to `req` (`status`, when given, instead of what it asks
/// for) and waits for it to be acknowledged.
fn respond(
    c: &mut Connection,
    s: &mut HttpServer,
    req: &Request,
    status: Option<(u16, &str)>,
    mono: u64,
    log: &[HttpExchange],
) -> HttpExchange {
    let method = req.method.as_str();
    let size = parse_size(req.path.trim_start_matches('/'), s.default_response);
    let (status, reason, body) = match (status, method, size) {
        (Some((status, reason)), _, _) => (status, reason, 0),
        (None, "GET" | "HEAD", Some(n)) if n <= MAX_HTTP_BODY => (200, "OK", n),
        (None, "GET" | "HEAD", Some(_)) => (413, "Content Too Large", 0),
        (None, "GET" | "HEAD", None) => (404, "Not Found", 0),
        _ => (405, "Method Not Allowed", 0),
    };
    let mut resp = format!(
        "HTTP/1.1 {status} {reason}\r\nServer: gentle\r\nContent-Type: application/octet-stream\r\nContent-Length: {body}\r\n"
    );
    if req.close {
        resp.push_str("Connection: close\r\n");
    }
    resp.push_str("\r\n");
    let mut bytes = resp.into_bytes();
    if method != "HEAD" {
        bytes.resize(bytes.len() + body as usize, PATTERN);
    }
    let before = *c.counters();
    c.write(Bytes::from(bytes));
    if req.close {
        c.close();
        s.close_after = true;
    }
    s.acking = Some((log.len(), mono, before));
    HttpExchange {
        peer_port: c.remote_port(),
        request: req.line.clone(),
        status,
        bytes: if method == "HEAD" { 0 } else { body },
        ..Default::default()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> (Request, usize) {
        match parse_request(text.as_bytes()) {
            Parsed::Head(r, n) => (r, n),
            other => panic!("{text:?}: {other:?}"),
        }
    }

    #[test]
    fn connection_close_is_a_case_insensitive_token() {
        for h in [
            "Connection: close",
            "connection:close",
            "CONNECTION:   Close  ",
            "Connection: keep-alive, close",
            "Connection: Upgrade,CLOSE",
        ] {
            let (r, _) = head(&format!("GET /1 HTTP/1.1\r\nHost: x\r\n{h}\r\n\r\n"));
            assert!(r.close, "{h}");
        }
        for h in [
            "Connection: keep-alive",
            "X-Connection: close",
            "Connection: closed",
        ] {
            let (r, _) = head(&format!("GET /1 HTTP/1.1\r\n{h}\r\n\r\n"));
            assert!(!r.close, "{h}");
        }
        let (r, _) = head("GET /1 HTTP/1.0\r\n\r\n");
        assert!(r.close, "HTTP/1.0 closes");
    }

    #[test]
    fn a_head_ends_where_its_body_begins() {
        let text = "POST /5 HTTP/1.1\r\ncontent-LENGTH: 11\r\n\r\nGET /2 HTTP/1.1";
        let (r, n) = head(text);
        assert_eq!(
            (r.method.as_str(), r.path.as_str(), r.body),
            ("POST", "/5", 11)
        );
        assert_eq!(&text[n..], "GET /2 HTTP/1.1");
        assert_eq!(r.line, "POST /5 HTTP/1.1");
        assert_eq!(
            parse_request(b"GET /1 HTTP/1.1\r\nHost: x\r\n"),
            Parsed::Partial
        );
    }

    #[test]
    fn bad_heads_are_refused() {
        for text in [
            "GET /1 HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            "GET /1 HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "GET /1 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /1 HTTP/1.1\r\nBad Header\r\n\r\n",
            "\x01\x02 nonsense\r\n\r\n",
        ] {
            assert!(
                matches!(parse_request(text.as_bytes()), Parsed::Bad(_)),
                "{text:?}"
            );
        }
    }
}
