//! The client's end of input, as a signal. rmcp notices it too, but then gives running
//! handlers up to 5 s to finish; a `clarify_wait` would hold the process for that long after
//! its client left. The reader below fires a token at end of input so waits return at once.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// `inner`, cancelling `closed` when it reports end of input or fails.
pub struct SignalEof<R> {
    inner: R,
    closed: CancellationToken,
}

impl<R> SignalEof<R> {
    pub fn new(inner: R, closed: CancellationToken) -> Self {
        SignalEof { inner, closed }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for SignalEof<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if buf.filled().len() == before && buf.remaining() > 0 => {
                self.closed.cancel();
            }
            Poll::Ready(Err(_)) => self.closed.cancel(),
            _ => {}
        }
        polled
    }
}
