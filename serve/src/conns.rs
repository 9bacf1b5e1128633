//! How many connections the server holds (issue 48): at most [`Caps::total`] at once, at
//! most [`Caps::per_address`] from one client address, both below the open-file limit (raised
//! to its hard limit at start), so connections that never send a request cannot take every
//! descriptor and stop the server for everyone.
//!
//! At a cap the server sheds, it does not refuse: the oldest *idle* connection — one with no
//! request in flight (it never finished its headers, or waits between requests) — is closed
//! to make room for the new one (from the same address when that address is at its cap).
//! A request in flight, an open event stream included, is never cut; a new connection is
//! refused only when every connection is busy. So `/healthz` and a signed-in person's request
//! are served while an attacker's idle connections are shed, and reconnecting does not keep
//! the server down. Each shedding is logged (at most one line per [`LOG_EVERY`]).
//!
//! The pieces: [`Acceptor`] (wraps axum-server's acceptor: counts, sheds, refuses),
//! [`Tracked`] (the connection's stream, which ends when shed) and [`track`] (the middleware
//! that marks a connection busy from a request's head to the end of its response's body).

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// At most one log line about shedding per this long (an attack would flood the log).
pub const LOG_EVERY: Duration = Duration::from_secs(10);
/// Descriptors kept for everything else the server opens: ledgers, locks, the database,
/// runners' pipes.
const RESERVED_FILES: u64 = 128;
/// Connections held at most, whatever the open-file limit allows.
const CEILING: u64 = 4096;

/// The caps in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub total: usize,
    pub per_address: usize,
}

impl Caps {
    /// The caps under an open-file limit of `open_files`: below it by [`RESERVED_FILES`] (at
    /// least a quarter of it), at most [`CEILING`]; one address may hold half of them, or all
    /// behind a proxy (every client then shares the proxy's address).
    pub fn for_limit(open_files: u64, behind_proxy: bool) -> Caps {
        let reserve = RESERVED_FILES.max(open_files / 4);
        let total = open_files.saturating_sub(reserve).clamp(16, CEILING);
        let total = usize::try_from(total).unwrap_or(16);
        let per_address = if behind_proxy { total } else { total / 2 };
        Caps { total, per_address }
    }
}

/// One connection held.
struct Conn {
    /// The order it came in.
    seq: u64,
    /// Requests in flight on it (a response whose body is still being sent counts).
    busy: usize,
    shed: CancellationToken,
}

#[derive(Default)]
struct Book {
    next: u64,
    by_peer: HashMap<SocketAddr, Conn>,
    /// Connections shed or refused since the last log line.
    unlogged: u64,
    logged: Option<Instant>,
}

/// The connections the server holds, and its caps.
pub struct Conns {
    caps: Caps,
    held: Mutex<Book>,
}

impl Conns {
    pub fn new(caps: Caps) -> Arc<Conns> {
        Arc::new(Conns {
            caps,
            held: Mutex::default(),
        })
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Book> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes in a connection from `peer`: its number and the token it is shed by, or `None`
    /// when it must be refused (every connection in its way is busy).
    fn admit(&self, peer: SocketAddr) -> Option<(u64, CancellationToken)> {
        let mut held = self.held();
        let from_here = held.by_peer.keys().filter(|p| p.ip() == peer.ip()).count();
        let scope = if from_here >= self.caps.per_address {
            Some(peer.ip())
        } else if held.by_peer.len() >= self.caps.total {
            None
        } else {
            return Some(self.insert(&mut held, peer));
        };
        let victim = oldest_idle(&held.by_peer, scope);
        let admitted = match victim {
            Some(old) => {
                if let Some(conn) = held.by_peer.remove(&old) {
                    conn.shed.cancel();
                }
                Some(self.insert(&mut held, peer))
            }
            None => None,
        };
        self.note(&mut held, victim, scope, admitted.is_some());
        admitted
    }

    fn insert(&self, held: &mut Book, peer: SocketAddr) -> (u64, CancellationToken) {
        held.next += 1;
        let shed = CancellationToken::new();
        let conn = Conn {
            seq: held.next,
            busy: 0,
            shed: shed.clone(),
        };
        if let Some(stale) = held.by_peer.insert(peer, conn) {
            // The same address and port again: the old one is closed already.
            stale.shed.cancel();
        }
        (held.next, shed)
    }

    /// The log line of a shedding or a refusal, at most one per [`LOG_EVERY`].
    fn note(
        &self,
        held: &mut Book,
        victim: Option<SocketAddr>,
        scope: Option<IpAddr>,
        admitted: bool,
    ) {
        held.unlogged += 1;
        if held.logged.is_some_and(|t| t.elapsed() < LOG_EVERY) {
            return;
        }
        let cap = match scope {
            Some(ip) => format!("{} connections from {ip}", self.caps.per_address),
            None => format!("{} connections", self.caps.total),
        };
        let what = match (admitted, victim) {
            (true, Some(old)) => format!("closed the oldest idle one (from {})", old.ip()),
            _ => String::from("refused a new one: every connection in the way is busy"),
        };
        crate::log::line(&format!(
            "connection cap reached ({cap}): {what}; {} shed or refused since the last note",
            held.unlogged
        ));
        held.unlogged = 0;
        held.logged = Some(Instant::now());
    }

    /// Connection `seq` of `peer` closed (unless a newer one took its address and port).
    fn gone(&self, peer: SocketAddr, seq: u64) {
        let mut held = self.held();
        if held.by_peer.get(&peer).is_some_and(|c| c.seq == seq) {
            held.by_peer.remove(&peer);
        }
    }

    /// Marks the connection of `peer` busy until the returned guard is dropped.
    fn busy(self: &Arc<Self>, peer: SocketAddr) -> Busy {
        if let Some(conn) = self.held().by_peer.get_mut(&peer) {
            conn.busy += 1;
        }
        Busy {
            conns: Arc::clone(self),
            peer,
        }
    }
}

/// The oldest connection without a request in flight (among those from `ip` when given).
fn oldest_idle(all: &HashMap<SocketAddr, Conn>, ip: Option<IpAddr>) -> Option<SocketAddr> {
    all.iter()
        .filter(|(p, c)| c.busy == 0 && ip.is_none_or(|ip| p.ip() == ip))
        .min_by_key(|(_, c)| c.seq)
        .map(|(p, _)| *p)
}

/// A request in flight on a connection; dropped when its response's body is done.
pub struct Busy {
    conns: Arc<Conns>,
    peer: SocketAddr,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(conn) = self.conns.held().by_peer.get_mut(&self.peer) {
            conn.busy = conn.busy.saturating_sub(1);
        }
    }
}

/// axum-server's acceptor with the caps in front: `TCP_NODELAY` (a response written in
/// pieces must not wait for the client's delayed ACK), then [`Conns::admit`].
#[derive(Clone)]
pub struct Acceptor {
    pub conns: Arc<Conns>,
}

impl<S: Send + 'static> axum_server::accept::Accept<TcpStream, S> for Acceptor {
    type Stream = Tracked;
    type Service = S;
    type Future = std::future::Ready<io::Result<(Tracked, S)>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let admitted = stream.peer_addr().and_then(|peer| {
            stream.set_nodelay(true)?;
            match self.conns.admit(peer) {
                Some((seq, shed)) => Ok(Tracked {
                    inner: stream,
                    ended: Box::pin(shed.cancelled_owned()),
                    seq,
                    peer,
                    conns: Arc::clone(&self.conns),
                }),
                // Dropped here: closed at once.
                None => Err(io::Error::other("connection cap reached")),
            }
        });
        std::future::ready(admitted.map(|tracked| (tracked, service)))
    }
}

/// A held connection's stream: reads end (EOF) and writes fail once it is shed; it leaves the
/// count when dropped.
pub struct Tracked {
    inner: TcpStream,
    ended: Pin<Box<WaitForCancellationFutureOwned>>,
    seq: u64,
    peer: SocketAddr,
    conns: Arc<Conns>,
}

impl Tracked {
    fn is_shed(&mut self, cx: &mut Context<'_>) -> bool {
        self.ended.as_mut().poll(cx).is_ready()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.conns.gone(self.peer, self.seq);
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_shed(cx) {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.is_shed(cx) {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.is_shed(cx) {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The middleware: the request's connection is busy until its response's body is sent.
pub async fn track(
    State(conns): State<Arc<Conns>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let busy = conns.busy(peer);
    let response = next.run(request).await;
    response.map(|body| Body::new(BusyBody { body, _busy: busy }))
}

/// A response body that holds its connection busy until it is dropped.
struct BusyBody {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for BusyBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn caps_stay_below_the_open_file_limit() {
        assert_eq!(
            Caps::for_limit(1024, false),
            Caps {
                total: 768,
                per_address: 384
            }
        );
        assert_eq!(Caps::for_limit(1024, true).per_address, 768);
        assert_eq!(Caps::for_limit(20_000, false).total, 4096);
        assert_eq!(Caps::for_limit(100, false).total, 16);
    }

    #[test]
    fn at_a_cap_the_oldest_idle_connection_is_shed_and_a_busy_one_never() {
        let conns = Conns::new(Caps {
            total: 3,
            per_address: 3,
        });
        let first = conns.admit(peer(1)).unwrap().1;
        let second = conns.admit(peer(2)).unwrap().1;
        let _busy = conns.busy(peer(1));
        let third = conns.admit(peer(3)).unwrap().1;
        // Full: the oldest idle one (2, as 1 is busy) makes room.
        let fourth = conns.admit(peer(4)).unwrap().1;
        assert!(!first.is_cancelled() && second.is_cancelled() && !third.is_cancelled());
        let _b3 = conns.busy(peer(3));
        let _b4 = conns.busy(peer(4));
        // Every connection busy: the new one is refused, none cut.
        assert!(conns.admit(peer(5)).is_none());
        assert!(!first.is_cancelled() && !third.is_cancelled() && !fourth.is_cancelled());
    }

    #[test]
    fn an_address_at_its_cap_sheds_its_own_connections_only() {
        let conns = Conns::new(Caps {
            total: 10,
            per_address: 2,
        });
        let other = conns
            .admit(SocketAddr::from(([127, 0, 0, 2], 9)))
            .unwrap()
            .1;
        let a = conns.admit(peer(1)).unwrap().1;
        let _b = conns.admit(peer(2)).unwrap();
        let _c = conns.admit(peer(3)).unwrap();
        assert!(a.is_cancelled() && !other.is_cancelled());
    }
}
