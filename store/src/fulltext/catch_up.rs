//! Keeping the index in step with the ledger files. The index's commit carries the stamp of
//! the clarifications directory it was listed at; every write replaces a ledger by rename,
//! which moves that stamp, so one `stat` tells an index that is current. Otherwise the
//! directory is listed, each ledger's stamp compared with the one indexed, and only the
//! ledgers that changed are read again — the change feed's own look (`feed.rs`), kept on
//! disk between processes.
//!
//! Racy stamps, as git's index has them: a directory (or file) modified in the same clock
//! tick as the listing could be modified again in that tick without its stamp moving. A
//! listing less than [`RACY_NS`] after the directory's modification does not count as
//! current, and a ledger modified that close to its indexing is read again at the next
//! catch-up, until a quiet listing settles both.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use agentx_clarify_command::paths::CLARIFICATIONS_DIR;
use agentx_clarify_command::State as _;
use agentx_clarify_core::search::probe::indexed;
use agentx_clarify_core::verify::issue_of_file_name;
use serde_json::{json, Value};
use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::IndexRecordOption;
use tantivy::{IndexWriter, Searcher, TantivyDocument, Term};

use super::schema::{ledger_doc, record_doc, Fields, FileStamp, LEDGER, UNREADABLE};
use crate::DiskStore;

/// Bumped when what the index holds changes: an index of another format is rebuilt.
pub const FORMAT: u64 = 1;

/// How close to a modification a listing is racy: a generous clock tick (filesystems keep
/// coarse times; network filesystems, the server's).
const RACY_NS: u64 = 1_000_000_000;

fn ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The stamp of `path`, not following a link (a ledger that is a link is refused by the
/// reader; its stamp still says when it changes).
fn file_stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::symlink_metadata(path).ok()?;
    Some(FileStamp {
        ino: m.ino(),
        mtime: m.modified().map_or(0, ns),
        len: m.len(),
    })
}

/// The commit payload: the format, the directory's stamp and when it was listed.
pub fn payload(dir: FileStamp, listed_ns: u64) -> String {
    json!({"format": FORMAT, "dir": [dir.ino, dir.mtime, dir.len], "listedNs": listed_ns})
        .to_string()
}

/// Whether an index committed with `payload` is current for the directory as it is now.
pub fn is_current(store: &DiskStore, payload: Option<&str>) -> bool {
    let Some(p) = payload.and_then(|p| serde_json::from_str::<Value>(p).ok()) else {
        return false;
    };
    let Some(now) = file_stamp(&store.path(CLARIFICATIONS_DIR)) else {
        return false;
    };
    let dir = [now.ino, now.mtime, now.len];
    let listed = p.get("listedNs").and_then(Value::as_u64).unwrap_or(0);
    p.get("format").and_then(Value::as_u64) == Some(FORMAT)
        && p.get("dir") == Some(&json!(dir))
        && listed.saturating_sub(now.mtime) >= RACY_NS
}

/// The format an index was committed with (an older one is rebuilt).
pub fn format_of(payload: Option<&str>) -> Option<u64> {
    let p: Value = serde_json::from_str(payload?).ok()?;
    p.get("format").and_then(Value::as_u64)
}

/// Every ledger file's stamp, by issue.
fn listing(store: &DiskStore) -> std::io::Result<BTreeMap<u32, FileStamp>> {
    let dir = store.path(CLARIFICATIONS_DIR);
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(&dir)? {
        let e = e?;
        let name = e.file_name();
        let Some(issue) = name
            .to_str()
            .and_then(issue_of_file_name)
            .and_then(|n| u32::try_from(n).ok())
        else {
            continue;
        };
        if let Some(s) = file_stamp(&e.path()) {
            out.insert(issue, s);
        }
    }
    Ok(out)
}

/// The stamp each ledger had when it was indexed, and whether it was racy.
fn indexed_stamps(
    searcher: &Searcher,
    f: &Fields,
) -> tantivy::Result<BTreeMap<u32, (FileStamp, bool)>> {
    let mut out = BTreeMap::new();
    for kind in [LEDGER, UNREADABLE] {
        let q = TermQuery::new(
            Term::from_field_text(f.kind, kind),
            IndexRecordOption::Basic,
        );
        for addr in searcher.search(&q, &DocSetCollector)? {
            let seg = searcher.segment_reader(addr.segment_ord);
            let ff = seg.fast_fields();
            let get = |name: &str| ff.u64(name).ok().and_then(|c| c.first(addr.doc_id));
            let Some(issue) = get("issue").and_then(|n| u32::try_from(n).ok()) else {
                continue;
            };
            let stamp = FileStamp {
                ino: get("ino").unwrap_or(0),
                mtime: get("mtime").unwrap_or(0),
                len: get("len").unwrap_or(0),
            };
            out.insert(issue, (stamp, get("racy") == Some(1)));
        }
    }
    Ok(out)
}

/// Indexes ledger `issue` (its file stamped `stamp`, listed at `listed`) afresh.
fn reindex(
    store: &DiskStore,
    w: &IndexWriter<TantivyDocument>,
    f: &Fields,
    issue: u32,
    stamp: FileStamp,
    listed: u64,
) -> tantivy::Result<()> {
    let racy = listed.saturating_sub(stamp.mtime) < RACY_NS;
    match store.read_ledger(issue) {
        Ok(Some(l)) => {
            w.add_document(ledger_doc(f, issue, LEDGER, stamp, racy))?;
            for r in &l.clarifications {
                w.add_document(record_doc(f, &indexed(issue, r)))?;
            }
        }
        Ok(None) => {}
        Err(_) => {
            w.add_document(ledger_doc(f, issue, UNREADABLE, stamp, racy))?;
        }
    }
    Ok(())
}

/// Brings the index in step with the files and commits: the ledgers whose stamp moved (or
/// was racy) are indexed again, those gone are removed. Returns how many were read.
pub fn catch_up(
    store: &DiskStore,
    searcher: &Searcher,
    w: &mut IndexWriter<TantivyDocument>,
    f: &Fields,
) -> tantivy::Result<usize> {
    let io = |e: std::io::Error| tantivy::TantivyError::from(e);
    let dir = file_stamp(&store.path(CLARIFICATIONS_DIR)).unwrap_or_default();
    let listed = ns(SystemTime::now());
    let files = listing(store).map_err(io)?;
    let known = indexed_stamps(searcher, f)?;
    let mut read = 0;
    for (issue, stamp) in &files {
        let same = known
            .get(issue)
            .is_some_and(|(s, racy)| s == stamp && !racy);
        if !same {
            w.delete_term(Term::from_field_u64(f.issue, u64::from(*issue)));
            reindex(store, w, f, *issue, *stamp, listed)?;
            read += 1;
        }
    }
    for issue in known.keys().filter(|n| !files.contains_key(n)) {
        w.delete_term(Term::from_field_u64(f.issue, u64::from(*issue)));
    }
    let mut commit = w.prepare_commit()?;
    commit.set_payload(&payload(dir, listed));
    commit.commit()?;
    Ok(read)
}
