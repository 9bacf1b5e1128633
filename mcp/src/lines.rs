//! The stdio transport's lines, kept honest (docs/protocol.md §31). rmcp decodes each input line as a
//! JSON-RPC message; a line that is not JSON at all got no answer. Here every input line is
//! looked at before rmcp sees it: JSON passes through, anything else is dropped and answered
//! with a JSON-RPC `-32700` (parse error, `id: null`) quoting at most [`QUOTE_CHARS`]
//! characters of it; a line longer than the cap is skipped whole and answered the same way.
//!
//! Replies of both kinds go out through one queue, whole lines at a time, so a parse error
//! never lands in the middle of one of rmcp's messages: rmcp writes into [`LineSink`], which
//! queues complete lines, and a pump writes the queue to stdout.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

/// The most characters of any input an error message quotes.
pub const QUOTE_CHARS: usize = 200;

/// Lines queued for output at most (then writers wait: a client that reads nothing stops
/// the server's output, not its memory).
const QUEUE: usize = 64;

/// `text` cut to [`QUOTE_CHARS`] characters (with `…` when cut), for error messages and logs.
pub fn quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// A `-32700` reply for a line that is not JSON.
pub fn parse_error(line: &[u8], why: &str) -> Vec<u8> {
    let shown = quote(&String::from_utf8_lossy(line));
    let mut out = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": -32700,
            "message": format!("Parse error: {why}"),
            "data": { "line": shown },
        },
    })
    .to_string()
    .into_bytes();
    out.push(b'\n');
    out
}

/// The output queue: rmcp's side ([`LineSink`]), the filter's side, and the pump.
pub fn channel() -> (mpsc::Sender<Vec<u8>>, mpsc::Receiver<Vec<u8>>) {
    mpsc::channel(QUEUE)
}

/// Writes every queued line to `out` until every sender is gone.
pub async fn pump<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut out: W,
) -> std::io::Result<()> {
    while let Some(line) = rx.recv().await {
        out.write_all(&line).await?;
        out.flush().await?;
    }
    Ok(())
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the output is closed")
}

/// rmcp's writer: bytes are gathered into lines, and each complete line is queued whole.
pub struct LineSink {
    buf: Vec<u8>,
    tx: PollSender<Vec<u8>>,
}

impl LineSink {
    pub fn new(tx: mpsc::Sender<Vec<u8>>) -> Self {
        LineSink {
            buf: Vec::new(),
            tx: PollSender::new(tx),
        }
    }

    fn poll_lines(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while let Some(end) = self.buf.iter().position(|b| *b == b'\n') {
            ready!(self.tx.poll_reserve(cx)).map_err(|_| closed())?;
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            self.tx.send_item(line).map_err(|_| closed())?;
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for LineSink {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_lines(cx))?;
        this.buf.extend_from_slice(data);
        // Queue what is complete now; a line still waiting for room stays for the next call.
        let _ = this.poll_lines(cx)?;
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().poll_lines(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_lines(cx))?;
        this.tx.close();
        Poll::Ready(Ok(()))
    }
}

/// The input as rmcp reads it: JSON lines only; the rest answered with `-32700`.
pub struct JsonLines<R> {
    inner: R,
    /// Bytes of the line being read.
    line: Vec<u8>,
    /// Within a line longer than the cap: its rest is dropped up to the newline.
    skipping: bool,
    /// Lines passed on, not yet read by rmcp.
    out: VecDeque<u8>,
    /// Error replies not yet queued.
    replies: VecDeque<Vec<u8>>,
    tx: PollSender<Vec<u8>>,
    max: usize,
    eof: bool,
}

impl<R> JsonLines<R> {
    pub fn new(inner: R, tx: mpsc::Sender<Vec<u8>>, max: usize) -> Self {
        JsonLines {
            inner,
            line: Vec::new(),
            skipping: false,
            out: VecDeque::new(),
            replies: VecDeque::new(),
            tx: PollSender::new(tx),
            max,
            eof: false,
        }
    }

    /// One complete line (its newline included, if any).
    fn take_line(&mut self, line: Vec<u8>) {
        let text = trim(&line);
        if text.is_empty() {
            return;
        }
        match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            Ok(_) => match long_method(text) {
                // rmcp would echo an unknown method's whole name: answered here, quoted.
                Some(reply) => self.replies.push_back(reply),
                None => self.out.extend(line),
            },
            Err(e) => {
                // Debug-quoted: control characters of the input never reach a terminal.
                tracing::warn!(
                    "input line is not JSON ({e}): {:?}",
                    quote(&String::from_utf8_lossy(text))
                );
                self.replies.push_back(parse_error(text, &e.to_string()));
            }
        }
    }

    fn take_bytes(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let (part, rest) = match newline {
                Some(at) => bytes.split_at(at + 1),
                None => (bytes, &[][..]),
            };
            bytes = rest;
            if self.skipping {
                if newline.is_some() {
                    self.skipping = false;
                }
                continue;
            }
            self.line.extend_from_slice(part);
            if self.line.len() > self.max {
                // Longer than any message may be: never buffered whole.
                let head = std::mem::take(&mut self.line);
                tracing::warn!(
                    "input line over the maximum line length ({} bytes) dropped",
                    self.max
                );
                self.replies.push_back(parse_error(
                    head.get(..self.max).unwrap_or(&head),
                    &format!("the line is longer than {} bytes", self.max),
                ));
                self.skipping = newline.is_none();
            } else if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                self.take_line(line);
            }
        }
    }

    /// Queues the pending replies; `Pending` while the queue is full.
    fn poll_replies(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        while let Some(reply) = self.replies.pop_front() {
            match self.tx.poll_reserve(cx) {
                Poll::Ready(Ok(())) => {
                    let _ = self.tx.send_item(reply);
                }
                // The output is gone: nobody to answer.
                Poll::Ready(Err(_)) => self.replies.clear(),
                Poll::Pending => {
                    self.replies.push_front(reply);
                    return Poll::Pending;
                }
            }
        }
        Poll::Ready(())
    }
}

/// A request whose method name or string id is longer than [`QUOTE_CHARS`] (no real one
/// is): its error reply with the text quoted, instead of rmcp's, which repeats it whole.
pub fn long_method(text: &[u8]) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize)]
    struct Probe {
        method: Option<String>,
        id: Option<serde_json::Value>,
    }
    if text.len() <= QUOTE_CHARS || text.first() != Some(&b'{') {
        return None;
    }
    let probe: Probe = serde_json::from_slice(text).ok()?;
    let long = |s: &str| s.chars().count() > QUOTE_CHARS;
    let reply = match (&probe.id, probe.method.as_deref()) {
        // Every reply repeats the id: one longer than a quote is refused without it.
        (Some(serde_json::Value::String(id)), _) if long(id) => json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32600, "message": format!("invalid request: an id of more than {QUOTE_CHARS} characters ({})", quote(id))},
        }),
        (Some(id), Some(method)) if long(method) => json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32601, "message": format!("method not found: {}", quote(method))},
        }),
        // A notification (no id) gets no reply; anything else is rmcp's.
        _ => return None,
    };
    let mut out = reply.to_string().into_bytes();
    out.push(b'\n');
    Some(out)
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    bytes.get(start..end).unwrap_or_default()
}

impl<R: AsyncRead + Unpin> AsyncRead for JsonLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            ready!(this.poll_replies(cx));
            if !this.out.is_empty() {
                let n = buf.remaining().min(this.out.len());
                let chunk: Vec<u8> = this.out.drain(..n).collect();
                buf.put_slice(&chunk);
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                if this.line.is_empty() || this.skipping {
                    return Poll::Ready(Ok(()));
                }
                // A last line without a newline.
                let line = std::mem::take(&mut this.line);
                this.take_line(line);
                continue;
            }
            let mut tmp = [0u8; 16 * 1024];
            let mut read = ReadBuf::new(&mut tmp);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            if read.filled().is_empty() {
                this.eof = true;
                continue;
            }
            let filled = read.filled().to_vec();
            this.take_bytes(&filled);
        }
    }
}

/// Runs `input` through [`JsonLines`] with a line cap of `max` bytes: what rmcp would read,
/// and the replies queued (for tests and the fuzz target).
pub async fn filter_all(input: &[u8], max: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    use tokio::io::AsyncReadExt;
    let (tx, mut rx) = channel();
    let mut reader = JsonLines::new(input, tx, max);
    let read = async move {
        let mut passed = Vec::new();
        let _ = reader.read_to_end(&mut passed).await;
        passed
    };
    let collect = async move {
        let mut replies = Vec::new();
        while let Some(line) = rx.recv().await {
            replies.push(line);
        }
        replies
    };
    tokio::join!(read, collect)
}

/// What [`filter_all`] must do with `input`: every line that is JSON passes whole and in
/// order (but a request with an overlong method or id, answered here), every other non-blank
/// line (or line over `max`) gets exactly one error reply of bounded size. Panics otherwise.
pub fn check_filtered(input: &[u8], max: usize, passed: &[u8], replies: &[Vec<u8>]) {
    let mut want_passed = Vec::new();
    let mut want_replies = 0usize;
    let mut skipping = false;
    let mut line = Vec::new();
    let mut lines: Vec<(Vec<u8>, bool)> = Vec::new();
    for &b in input {
        if skipping {
            if b == b'\n' {
                skipping = false;
            }
            continue;
        }
        line.push(b);
        if line.len() > max {
            lines.push((std::mem::take(&mut line), true));
            skipping = b != b'\n';
        } else if b == b'\n' {
            lines.push((std::mem::take(&mut line), false));
        }
    }
    if !line.is_empty() {
        lines.push((line, false));
    }
    for (l, too_long) in lines {
        if too_long {
            want_replies += 1;
            continue;
        }
        let text = trim(&l);
        if text.is_empty() {
            continue;
        }
        if serde_json::from_slice::<serde::de::IgnoredAny>(text).is_err()
            || long_method(text).is_some()
        {
            want_replies += 1;
        } else {
            want_passed.extend_from_slice(&l);
        }
    }
    assert_eq!(passed, want_passed.as_slice(), "what passed to rmcp");
    assert_eq!(replies.len(), want_replies, "one reply per bad line");
    for r in replies {
        let v: Option<serde_json::Value> = serde_json::from_slice(r).ok();
        let v = v.as_ref();
        let code = v.and_then(|v| v.pointer("/error/code"));
        assert!(
            [json!(-32700), json!(-32600), json!(-32601)]
                .iter()
                .any(|c| Some(c) == code),
            "{code:?}"
        );
        assert!(v.and_then(|v| v.get("id")).is_some());
        assert!(r.len() <= 2048, "a reply of {} bytes", r.len());
        assert_eq!(r.last(), Some(&b'\n'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn filtered(input: &[u8], max: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(filter_all(input, max))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn every_bad_line_gets_one_reply_and_json_passes_whole(
            parts in proptest::collection::vec(prop_oneof![
                Just(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".to_vec()),
                Just(b"[1, 2]".to_vec()),
                Just(b"not json".to_vec()),
                Just(b"   ".to_vec()),
                Just(b"{".repeat(300)),
                Just(format!("{{\"pad\":\"{}\"}}", "x".repeat(400)).into_bytes()),
                Just(format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"{}\"}}", "m".repeat(300)).into_bytes()),
                Just(format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{}\",\"method\":\"ping\"}}", "i".repeat(300)).into_bytes()),
                proptest::collection::vec(any::<u8>(), 0..120),
            ], 0..40),
            max in 64usize..512,
        ) {
            let mut input = Vec::new();
            for p in &parts {
                input.extend_from_slice(p);
                input.push(b'\n');
            }
            let (passed, replies) = filtered(&input, max);
            check_filtered(&input, max, &passed, &replies);
        }
    }

    #[test]
    fn quotes_are_cut_and_replies_are_json_rpc() {
        let long = "x".repeat(1000);
        assert_eq!(quote(&long).chars().count(), QUOTE_CHARS + 1);
        let reply = parse_error(long.as_bytes(), "expected value");
        let v: serde_json::Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(v["error"]["code"], -32700);
        assert_eq!(v["id"], serde_json::Value::Null);
        assert!(reply.len() < 400, "{}", reply.len());
        assert_eq!(reply.last(), Some(&b'\n'));
    }
}
