//! The file store's full-text index of records (docs/protocol.md §36, "Indexes"), under
//! `.agentx/index/search/`: a tantivy index kept in step with the ledger files at the time of
//! each search (`catch_up.rs`), so it sees every process's writes — a search after another
//! process wrote reads the changed ledgers into the index first. The core ranks: the index
//! only finds the best candidates by the core's key (`rank.rs`).
//!
//! Never needed for a correct answer: an index that is missing, of another format, corrupt,
//! or locked by another writer for longer than [`WRITER_WAIT`] is rebuilt or left aside, and
//! the search scans. Its commits are atomic and its writer lock is a kernel lock that dies
//! with its process, so a crash while indexing (kill -9) leaves the last commit, which the
//! next search brings up to date.

mod catch_up;
mod rank;
mod schema;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::index::INDEX_DIR;
use agentx_clarify_core::search::probe::{Candidates, Probe};
use tantivy::directory::MmapDirectory;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument};

use crate::DiskStore;
use schema::Fields;

/// How long a search waits for another process's catch-up before it scans instead.
const WRITER_WAIT: Duration = Duration::from_secs(2);

/// The writer's memory: tantivy's floor for one indexing thread.
const WRITER_MEMORY: usize = 15_000_000;

/// Why the index cannot answer now.
enum Unusable {
    /// Another process holds the writer: scan this time.
    Busy,
    /// It cannot be read or written: made anew.
    Broken,
}

impl From<tantivy::TantivyError> for Unusable {
    fn from(_: tantivy::TantivyError) -> Self {
        Unusable::Broken
    }
}

/// An open index.
struct Open {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

/// Where the index lives.
pub fn dir(store: &DiskStore) -> PathBuf {
    store.path(&format!("{INDEX_DIR}search"))
}

fn open_existing(path: &std::path::Path) -> tantivy::Result<Open> {
    let (schema, fields) = schema::schema();
    let index = Index::open(MmapDirectory::open(path)?)?;
    if index.schema() != schema {
        return Err(tantivy::TantivyError::SchemaError("another schema".into()));
    }
    let payload = index.load_metas()?.payload;
    if catch_up::format_of(payload.as_deref()) != Some(catch_up::FORMAT) {
        return Err(tantivy::TantivyError::SchemaError("another format".into()));
    }
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok(Open {
        index,
        reader,
        fields,
    })
}

/// A new, empty index in place of whatever is at `path`; its first catch-up reads every
/// ledger.
fn create(path: &std::path::Path) -> tantivy::Result<Open> {
    let io = tantivy::TantivyError::from;
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    std::fs::create_dir_all(path).map_err(io)?;
    let (schema, fields) = schema::schema();
    let index = Index::create_in_dir(path, schema)?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    Ok(Open {
        index,
        reader,
        fields,
    })
}

impl Open {
    fn is_current(&self, store: &DiskStore) -> bool {
        let payload = self.reader.searcher().index().load_metas().ok();
        catch_up::is_current(store, payload.and_then(|m| m.payload).as_deref())
    }

    /// The writer, waiting for another process's catch-up up to [`WRITER_WAIT`].
    fn writer(&self) -> Option<IndexWriter<TantivyDocument>> {
        let deadline = Instant::now() + WRITER_WAIT;
        loop {
            match self.index.writer_with_num_threads(1, WRITER_MEMORY) {
                Ok(w) => return Some(w),
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(_) => return None,
            }
        }
    }

    /// Brings the index up to date unless it is.
    fn up_to_date(&self, store: &DiskStore) -> Result<(), Unusable> {
        if self.is_current(store) {
            return Ok(());
        }
        let mut w = self.writer().ok_or(Unusable::Busy)?;
        self.reader.reload()?;
        // Another process may have caught up while this one waited for the lock.
        if !self.is_current(store) {
            let searcher = self.reader.searcher();
            catch_up::catch_up(store, &searcher, &mut w, &self.fields)?;
            w.wait_merging_threads()?;
            self.reader.reload()?;
        }
        Ok(())
    }
}

/// The index, opened or (missing, corrupt, another format) made anew.
fn open(store: &DiskStore) -> Option<Open> {
    let path = dir(store);
    open_existing(&path).or_else(|_| create(&path)).ok()
}

/// Runs `probe` on the index, brought up to date first; `None`: scan instead.
pub fn search(store: &DiskStore, probe: &Probe) -> Option<Candidates> {
    // One ledger is read faster than the index is opened, and its read error is the
    // search's, as in a scan.
    if probe.filter.issue.is_some() || probe.words.len() > rank::MAX_WORDS {
        return None;
    }
    // The library trusts its own files: a damaged segment can panic in it (a bound
    // overflows) rather than fail. Either way the next search starts from a new index.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let open = open(store).ok_or(Unusable::Broken)?;
        open.up_to_date(store)?;
        Ok(rank::run(&open.reader.searcher(), &open.fields, probe)?)
    }));
    match run {
        Ok(Ok(found)) => Some(found),
        Ok(Err(Unusable::Busy)) => None,
        Ok(Err(Unusable::Broken)) | Err(_) => {
            let _ = create(&dir(store));
            None
        }
    }
}
