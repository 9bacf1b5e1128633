//! Logs on stderr that never stop the server (docs/protocol.md §31): a client that launches the server
//! and never reads its stderr fills the pipe, and a blocking write there would stall every
//! tool call. Records go through a bounded queue to a thread that writes them; when the queue
//! is full a record is dropped instead. Each record is cut to [`MAX_RECORD_BYTES`], so no log
//! line carries a long stretch of any input.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Records queued and not yet written.
static PENDING: AtomicUsize = AtomicUsize::new(0);

/// Records waiting for stderr at most.
const QUEUE: usize = 256;
/// The longest record written (a quote of input inside is at most 200 characters, plus the
/// words around it).
pub const MAX_RECORD_BYTES: usize = 600;

fn queue() -> Option<&'static SyncSender<Vec<u8>>> {
    static QUEUE_TX: OnceLock<Option<SyncSender<Vec<u8>>>> = OnceLock::new();
    QUEUE_TX
        .get_or_init(|| {
            let (tx, rx) = sync_channel::<Vec<u8>>(QUEUE);
            std::thread::Builder::new()
                .name(String::from("agentx-mcp-log"))
                .spawn(move || {
                    let mut err = std::io::stderr();
                    for record in rx {
                        let written = err.write_all(&record);
                        PENDING.fetch_sub(1, Ordering::Relaxed);
                        if written.is_err() {
                            break;
                        }
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// One record being formatted; queued (or dropped) when tracing is done with it.
pub struct Stderr {
    record: Vec<u8>,
}

impl Stderr {
    pub fn make() -> Stderr {
        Stderr { record: Vec::new() }
    }
}

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.record.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Stderr {
    fn drop(&mut self) {
        if self.record.is_empty() {
            return;
        }
        let mut record = std::mem::take(&mut self.record);
        if record.len() > MAX_RECORD_BYTES {
            // Cut on a character boundary.
            let text = String::from_utf8_lossy(&record);
            let mut cut: String = text.chars().take(MAX_RECORD_BYTES / 2).collect();
            cut.push_str("… (cut)\n");
            record = cut.into_bytes();
        }
        if let Some(tx) = queue() {
            // Full: the reader of stderr is not keeping up; the record is dropped.
            PENDING.fetch_add(1, Ordering::Relaxed);
            if tx.try_send(record).is_err() {
                PENDING.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

/// Lets the queued records reach stderr before the process exits — for at most `limit`: a
/// stderr nobody reads must not hold the exit either.
pub fn flush(limit: Duration) {
    let started = Instant::now();
    while PENDING.load(Ordering::Relaxed) > 0 && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(2));
    }
}
