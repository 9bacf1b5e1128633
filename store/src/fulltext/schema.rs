//! The documents of the full-text index: one per record (what a search matches and ranks by)
//! and one per ledger file (the file's stamp when it was indexed, so a catch-up reads only
//! the ledgers that changed). Words are the core's own tokens, each a raw term: no tokenizer
//! of the library's may split or fold them differently from the scan.

use agentx_clarify_core::search::probe::Indexed;
use tantivy::schema::{Field, Schema, FAST, INDEXED, STORED, STRING};
use tantivy::TantivyDocument;

/// The kind of a document (`kind`).
pub const RECORD: &str = "record";
pub const LEDGER: &str = "ledger";
/// A ledger file that could not be read when it was indexed: search reports it.
pub const UNREADABLE: &str = "unreadable";

/// The fields, looked up once per open index.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    pub kind: Field,
    pub issue: Field,
    pub seq: Field,
    pub id: Field,
    pub status: Field,
    pub field: Field,
    pub from: Field,
    pub to: Field,
    pub all: Field,
    pub asked: Field,
    pub asked_len: Field,
    pub last_ms: Field,
    pub supersedes: Field,
    /// `<old id> <resolution ms>` per superseded record (stored only).
    pub superseded_at: Field,
    pub ino: Field,
    pub mtime: Field,
    pub len: Field,
    pub racy: Field,
}

/// The schema and its fields.
pub fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let fields = Fields {
        kind: b.add_text_field("kind", STRING),
        issue: b.add_u64_field("issue", FAST | INDEXED | STORED),
        seq: b.add_u64_field("seq", FAST | STORED),
        id: b.add_text_field("id", STRING | STORED),
        status: b.add_text_field("status", STRING),
        field: b.add_text_field("field", STRING),
        from: b.add_text_field("from", STRING),
        to: b.add_text_field("to", STRING),
        all: b.add_text_field("all", STRING),
        asked: b.add_text_field("asked", STRING),
        asked_len: b.add_u64_field("asked_len", FAST),
        last_ms: b.add_i64_field("last_ms", FAST),
        supersedes: b.add_text_field("supersedes", STRING),
        superseded_at: b.add_text_field("superseded_at", STORED),
        ino: b.add_u64_field("ino", FAST),
        mtime: b.add_u64_field("mtime", FAST),
        len: b.add_u64_field("len", FAST),
        racy: b.add_u64_field("racy", FAST),
    };
    (b.build(), fields)
}

/// The document of one record.
pub fn record_doc(f: &Fields, r: &Indexed) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(f.kind, RECORD);
    d.add_u64(f.issue, u64::from(r.issue));
    d.add_u64(f.seq, r.seq);
    d.add_text(f.id, &r.id);
    d.add_text(f.status, r.status.as_str());
    if let Some(field) = &r.field {
        d.add_text(f.field, field);
    }
    d.add_text(f.from, &r.from);
    d.add_text(f.to, &r.to);
    for w in &r.all {
        d.add_text(f.all, w);
    }
    for w in &r.asked {
        d.add_text(f.asked, w);
    }
    d.add_u64(f.asked_len, r.asked.len() as u64);
    d.add_i64(f.last_ms, r.last_ms);
    for (old, at) in &r.supersedes {
        d.add_text(f.supersedes, old);
        d.add_text(f.superseded_at, format!("{old} {at}"));
    }
    // Every document has every fast field: a column with a value per document is read
    // without the rank lookup an optional one needs (half a search's instructions).
    for field in [f.ino, f.mtime, f.len, f.racy] {
        d.add_u64(field, 0);
    }
    d
}

/// A ledger file's stamp: inode, modification time (ns) and length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStamp {
    pub ino: u64,
    pub mtime: u64,
    pub len: u64,
}

/// The document of one ledger file (`kind` [`LEDGER`] or [`UNREADABLE`]); `racy`: written
/// too close to when it was indexed for its stamp to tell a later write in the same tick.
pub fn ledger_doc(f: &Fields, issue: u32, kind: &str, s: FileStamp, racy: bool) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(f.kind, kind);
    d.add_u64(f.issue, u64::from(issue));
    d.add_u64(f.ino, s.ino);
    d.add_u64(f.mtime, s.mtime);
    d.add_u64(f.len, s.len);
    d.add_u64(f.racy, u64::from(racy));
    d.add_u64(f.seq, 0);
    d.add_u64(f.asked_len, 0);
    d.add_i64(f.last_ms, 0);
    d
}
