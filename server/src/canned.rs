//! JSON bodies for the answers hyper writes on its own, before any handler runs: `400` for a request
//! it cannot parse, `414` for a target too long, `431` for headers too large. hyper writes them with an
//! empty body and closes the connection; every other error of the API is JSON (`{"error", "message"}`),
//! so these are rewritten to the same shape as they leave.
//!
//! [`JsonErrors`] wraps a connection's stream: a write that is a whole response head of one of those
//! statuses with `content-length: 0` (hyper's canned answer; the API's own errors always carry a body)
//! is replaced by the same head with a JSON body. Everything else passes through untouched.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A stream whose canned error answers get JSON bodies.
#[derive(Debug)]
pub struct JsonErrors<S> {
    inner: S,
    /// A rewritten answer still to write, and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
}

impl<S> JsonErrors<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            pending: None,
        }
    }
}

/// The error code and message for a status hyper answers on its own.
fn words(status: &[u8]) -> Option<(&'static str, &'static str)> {
    match status {
        b"400" => Some((
            "bad_request",
            "the request is not valid HTTP/1.1: it could not be read",
        )),
        b"414" => Some((
            "too_large",
            "the request's target (path and query) is too long",
        )),
        b"431" => Some((
            "too_large",
            "the request's headers are too large or too many",
        )),
        _ => None,
    }
}

/// The JSON answer for `buf` if it is hyper's canned answer, whole: one of the statuses above, its
/// head complete, with `content-length: 0` and nothing after the head.
fn rewrite(buf: &[u8]) -> Option<Vec<u8>> {
    let rest = buf.strip_prefix(b"HTTP/1.1 ")?;
    let (code, message) = words(rest.get(..3)?)?;
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    if end != buf.len() {
        return None;
    }
    let head = &buf[..end - 2];
    let lower = head.to_ascii_lowercase();
    let empty = lower
        .windows(b"\r\ncontent-length: 0\r\n".len())
        .any(|w| w == b"\r\ncontent-length: 0\r\n");
    if !empty {
        return None;
    }
    let body = serde_json::json!({"error": code, "message": message}).to_string();
    let mut out = Vec::with_capacity(buf.len() + body.len() + 64);
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() || line.to_ascii_lowercase().starts_with(b"content-length:") {
            continue;
        }
        out.extend_from_slice(line);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"content-type: application/json\r\n");
    out.extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body.as_bytes());
    Some(out)
}

impl<S: AsyncWrite + Unpin> JsonErrors<S> {
    /// Writes what is pending; `Ready(Ok)` once nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, written)) = &mut self.pending {
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    *written += n;
                    if *written == bytes.len() {
                        self.pending = None;
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonErrors<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        if let Some(json) = rewrite(buf) {
            // hyper's answer counts as written; the JSON one goes out in its place.
            this.pending = Some((json, 0));
            let _ = this.drain(cx)?;
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // A canned answer is one buffer; anything else is written as it comes.
        match bufs.iter().find(|b| !b.is_empty()) {
            Some(first) if bufs.iter().filter(|b| !b.is_empty()).count() == 1 => {
                let first: &[u8] = first;
                self.poll_write(cx, first)
            }
            _ => {
                let this = &mut *self;
                if this.drain(cx)?.is_pending() {
                    return Poll::Pending;
                }
                Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.drain(cx)?.is_pending() {
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn hypers_canned_431_gets_a_json_body_and_other_answers_pass_untouched() {
        let canned =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let out = String::from_utf8(rewrite(canned).expect("rewritten")).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 "), "{head}");
        assert!(head.contains("date: x"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"], "too_large");
        // An API answer with a body, an OK answer, a partial head: untouched.
        assert!(rewrite(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}").is_none());
        assert!(rewrite(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(rewrite(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n").is_none());
    }
}
