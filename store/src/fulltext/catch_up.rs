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

use std::collections::{BTreeMap, BTreeSet};
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
/// 2: every document has every fast field.
pub const FORMAT: u64 = 2;

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

/// What a commit says of itself (its payload): the directory's stamp and when it was listed;
/// how much of the journal it covers, and the active index's count of invalidations when
/// that stamp explained the directory (`None`: it did not).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    pub dir: [u64; 3],
    pub listed_ns: u64,
    pub journal: u64,
    pub invalidations: Option<u64>,
}

impl Committed {
    pub fn payload(&self) -> String {
        json!({
            "format": FORMAT,
            "dir": self.dir,
            "listedNs": self.listed_ns,
            "journal": self.journal,
            "invalidations": self.invalidations,
        })
        .to_string()
    }

    /// The payload of a commit of this format; `None` for any other.
    pub fn parse(payload: Option<&str>) -> Option<Committed> {
        let p: Value = serde_json::from_str(payload?).ok()?;
        if p.get("format").and_then(Value::as_u64) != Some(FORMAT) {
            return None;
        }
        let dir: Vec<u64> = p
            .get("dir")?
            .as_array()?
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        Some(Committed {
            dir: dir.try_into().ok()?,
            listed_ns: p.get("listedNs").and_then(Value::as_u64).unwrap_or(0),
            journal: p.get("journal").and_then(Value::as_u64).unwrap_or(u64::MAX),
            invalidations: p.get("invalidations").and_then(Value::as_u64),
        })
    }

    /// Whether the index is current for the directory as it is now.
    pub fn is_current(&self, store: &DiskStore) -> bool {
        let Some(now) = file_stamp(&store.path(CLARIFICATIONS_DIR)) else {
            return false;
        };
        self.dir == [now.ino, now.mtime, now.len]
            && self.listed_ns.saturating_sub(now.mtime) >= RACY_NS
    }
}

/// How far the journal goes (its length), 0 when there is none.
fn journal_len(store: &DiskStore) -> u64 {
    std::fs::symlink_metadata(store.index.journal_path()).map_or(0, |m| m.len())
}

/// What the journal says changed since a commit: the ledgers it names, where its complete
/// lines end, and the directory's stamp it explains.
pub struct Journalled {
    pub dirty: BTreeSet<u32>,
    pub end: u64,
    pub dir: FileStamp,
}

/// The ledgers journalled since commit `c` — `None` when the journal cannot say (no
/// explaining stamp, or another count of invalidations than the commit's: a change no
/// writer of this store journalled). The directory is stamped before and after the stamp's
/// check: a write after that shows as a directory unlike the one a commit names.
pub fn journalled_since(store: &DiskStore, c: &Committed) -> Option<Journalled> {
    use std::io::{Read as _, Seek as _};
    use std::os::unix::fs::OpenOptionsExt as _;
    let clar = store.path(CLARIFICATIONS_DIR);
    let dir = file_stamp(&clar)?;
    let k = store.index.explained()?;
    if c.invalidations != Some(k) || file_stamp(&clar) != Some(dir) {
        return None;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(store.index.journal_path())
        .ok()?;
    file.seek(std::io::SeekFrom::Start(c.journal)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(bytes.get(..complete)?).ok()?;
    Some(Journalled {
        dirty: text.lines().filter_map(|l| l.parse().ok()).collect(),
        end: c.journal + complete as u64,
        dir,
    })
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
    // Taken before the listing: what is journalled or changed after it is read again.
    let invalidations = store.index.explained();
    let journal = journal_len(store);
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
    let committed = Committed {
        dir: [dir.ino, dir.mtime, dir.len],
        listed_ns: listed,
        journal,
        invalidations,
    };
    commit(w, &committed)?;
    Ok(read)
}

fn commit(w: &mut IndexWriter<TantivyDocument>, c: &Committed) -> tantivy::Result<()> {
    let mut prepared = w.prepare_commit()?;
    prepared.set_payload(&c.payload());
    prepared.commit()?;
    Ok(())
}

/// Indexes again the ledgers the journal names since `c` and commits the index as current
/// for the directory the journal explained (`journalled_since`).
pub fn catch_up_journalled(
    store: &DiskStore,
    w: &mut IndexWriter<TantivyDocument>,
    f: &Fields,
    c: &Committed,
    j: &Journalled,
) -> tantivy::Result<()> {
    let (dir, listed) = (j.dir, ns(SystemTime::now()));
    for issue in &j.dirty {
        w.delete_term(Term::from_field_u64(f.issue, u64::from(*issue)));
        let path = store.path(&agentx_clarify_command::paths::ledger_path(*issue));
        if let Some(stamp) = file_stamp(&path) {
            reindex(store, w, f, *issue, stamp, listed)?;
        }
    }
    let committed = Committed {
        dir: [dir.ino, dir.mtime, dir.len],
        listed_ns: listed,
        journal: j.end,
        invalidations: c.invalidations,
    };
    commit(w, &committed)
}
