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
use catch_up::{Committed, Journalled};
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
    Open::new(index, fields)
}

/// A new, empty index in place of whatever is at `path`; its first catch-up reads every
/// ledger. The directory is the owner's alone (0700, whatever the umask: docs/protocol.md
/// §31), under `.agentx/index/` with its `.gitignore` (a local cache, never committed).
fn create(store: &DiskStore, path: &std::path::Path) -> tantivy::Result<Open> {
    let io = tantivy::TantivyError::from;
    let store_err = |e: agentx_clarify_core::ClarifyError| io(std::io::Error::other(e.to_string()));
    store.index.ensure().map_err(store_err)?;
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    let mut builder = std::fs::DirBuilder::new();
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path).map_err(io)?;
    let (schema, fields) = schema::schema();
    let index = Index::create_in_dir(path, schema)?;
    tighten(path);
    Open::new(index, fields)
}

/// Takes group and other write off the files the library made (it creates them 0666 before
/// the umask). Best effort: the directory itself admits nobody else.
fn tighten(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        let mode = meta.permissions().mode();
        if mode & 0o022 != 0 {
            let _ =
                std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode & !0o022));
        }
    }
}

/// What the index needs before it answers.
enum Plan {
    /// Nothing: it is current.
    Current,
    /// Only the ledgers the journal names since its commit are newer.
    Journalled(Committed, Journalled),
    /// A catch-up over the listing (no commit yet, or a change nobody journalled).
    CatchUp,
}

/// How many journalled ledgers a search reads itself rather than committing them first.
const FRESH_MAX: usize = 64;

impl Open {
    /// The index with a reader that reloads only when told (each search takes its snapshot).
    fn new(index: Index, fields: Fields) -> tantivy::Result<Open> {
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

    /// A searcher and the commit it reads, the two taken together (another process may
    /// commit between reading the metas and reloading).
    fn snapshot(&self) -> Result<(tantivy::Searcher, Option<Committed>), Unusable> {
        for attempt in 0..5 {
            let metas = self.index.load_metas()?;
            // The reader opened the segments a moment ago: reloaded only when they differ.
            if attempt > 0 {
                self.reader.reload()?;
            }
            let searcher = self.reader.searcher();
            let read: Vec<_> = searcher
                .segment_readers()
                .iter()
                .map(|r| (r.segment_id(), r.delete_opstamp()))
                .collect();
            let committed: Vec<_> = metas
                .segments
                .iter()
                .map(|m| (m.id(), m.delete_opstamp()))
                .collect();
            let mut a = read;
            let mut b = committed;
            a.sort();
            b.sort();
            if a == b {
                let committed = Committed::parse(metas.payload.as_deref());
                // Segments under a payload of another format (or none): an older index.
                if committed.is_none() && !a.is_empty() {
                    return Err(Unusable::Broken);
                }
                return Ok((searcher, committed));
            }
        }
        Err(Unusable::Busy)
    }

    fn plan(store: &DiskStore, committed: Option<Committed>) -> Plan {
        match committed {
            Some(c) if c.is_current(store) => Plan::Current,
            Some(c) => match catch_up::journalled_since(store, &c) {
                Some(j) => Plan::Journalled(c, j),
                None => Plan::CatchUp,
            },
            None => Plan::CatchUp,
        }
    }

    /// The writer, waiting for another process's catch-up up to [`WRITER_WAIT`].
    fn writer(&self) -> Option<IndexWriter<TantivyDocument>> {
        let deadline = Instant::now() + WRITER_WAIT;
        loop {
            match self.index.writer_with_num_threads(1, WRITER_MEMORY) {
                Ok(w) => return Some(w),
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return None,
            }
        }
    }

    /// Commits what the index lacks, under the writer, planned again once it is held
    /// (another process may have caught up meanwhile).
    fn commit_up_to_date(&self, store: &DiskStore) -> Result<(), Unusable> {
        let mut w = self.writer().ok_or(Unusable::Busy)?;
        let (searcher, committed) = self.snapshot()?;
        match Self::plan(store, committed) {
            Plan::Current => return Ok(()),
            Plan::Journalled(c, j) => {
                catch_up::catch_up_journalled(store, &mut w, &self.fields, &c, &j)?;
            }
            Plan::CatchUp => {
                catch_up::catch_up(store, &searcher, &mut w, &self.fields)?;
            }
        }
        w.wait_merging_threads()?;
        tighten(&dir(store));
        Ok(())
    }

    /// Answers `probe`: from the index as committed, with the few journalled ledgers read
    /// beside it, or after committing what it lacks.
    fn answer(&self, store: &DiskStore, probe: &Probe) -> Result<Candidates, Unusable> {
        let (searcher, committed) = self.snapshot()?;
        let fresh = match Self::plan(store, committed) {
            Plan::Current => rank::Fresh::default(),
            Plan::Journalled(_, j) if j.dirty.len() <= FRESH_MAX => fresh(store, j.dirty),
            Plan::Journalled(..) | Plan::CatchUp => {
                self.commit_up_to_date(store)?;
                let (searcher, _) = self.snapshot()?;
                return Ok(rank::run(
                    &searcher,
                    &self.fields,
                    probe,
                    &rank::Fresh::default(),
                )?);
            }
        };
        Ok(rank::run(&searcher, &self.fields, probe, &fresh)?)
    }
}

/// The journalled ledgers, read.
fn fresh(store: &DiskStore, issues: std::collections::BTreeSet<u32>) -> rank::Fresh {
    use agentx_clarify_command::State as _;
    let mut out = rank::Fresh::default();
    for n in &issues {
        match store.read_ledger(*n) {
            Ok(Some(l)) => out
                .records
                .extend(l.clarifications.into_iter().map(|r| (*n, r))),
            Ok(None) => {}
            Err(_) => out.unreadable.push(*n),
        }
    }
    out.issues = issues;
    out
}

/// The index, opened or (missing, corrupt, another format) made anew.
fn open(store: &DiskStore) -> Option<Open> {
    let path = dir(store);
    // A link planted in the index's place (a cloned repository may carry one) is never
    // followed: it is replaced by a new index (docs/protocol.md §31).
    if !matches!(crate::inside::check_dir(&path), Ok(true)) {
        return create(store, &path).ok();
    }
    open_existing(&path).or_else(|_| create(store, &path)).ok()
}

/// Runs `probe` on the index, brought up to date first; `None`: scan instead.
pub fn search(store: &DiskStore, probe: &Probe) -> Option<Candidates> {
    if probe.words.len() > rank::MAX_WORDS {
        return None;
    }
    // The library trusts its own files: a damaged segment can panic in it (a bound
    // overflows) rather than fail. Either way the next search starts from a new index.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let open = open(store).ok_or(Unusable::Broken)?;
        open.answer(store, probe)
    }));
    match run {
        Ok(Ok(found)) => Some(found),
        Ok(Err(Unusable::Busy)) => None,
        Ok(Err(Unusable::Broken)) | Err(_) => {
            let _ = create(store, &dir(store));
            None
        }
    }
}
