//! The block grammar of docs/protocol.md §17, scanned line by line in one pass.
//!
//! A block opens with a line that is exactly `[NAME]` and closes with `[/NAME]` (whitespace
//! around the tag allowed, CRLF or LF line ends). Inside: `key: value` lines; `key:` followed
//! by `- item` lines (a list); `key: |` followed by more-indented lines (multi-line text).
//! Everything outside blocks is ignored. Each line is looked at a bounded number of times and
//! every structure is a vector or an ordered map, so hostile input costs linear time.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use crate::error::shown;

/// The four signal names (seed 002).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BlockName {
    ClarificationNeeded,
    StopWork,
    DelegateWork,
    CompletionReport,
}

impl BlockName {
    pub const ALL: [BlockName; 4] = [
        BlockName::ClarificationNeeded,
        BlockName::StopWork,
        BlockName::DelegateWork,
        BlockName::CompletionReport,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BlockName::ClarificationNeeded => "CLARIFICATION_NEEDED",
            BlockName::StopWork => "STOP_WORK",
            BlockName::DelegateWork => "DELEGATE_WORK",
            BlockName::CompletionReport => "COMPLETION_REPORT",
        }
    }

    pub fn parse(text: &str) -> Option<BlockName> {
        BlockName::ALL.into_iter().find(|n| n.as_str() == text)
    }
}

impl fmt::Display for BlockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for BlockName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A field's value: one text (a `key: value` line, a `key: |` text, or an empty value), or a
/// list (`key:` followed by `- item` lines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldValue {
    Text(String),
    List(Vec<String>),
}

impl Serialize for FieldValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FieldValue::Text(t) => s.serialize_str(t),
            FieldValue::List(items) => items.serialize(s),
        }
    }
}

/// One `key: …` of a block, with the line its key is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub key: String,
    pub value: FieldValue,
    pub line: usize,
}

/// Something wrong at a line (1-based) of the parsed text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub line: usize,
    pub message: String,
}

impl Problem {
    pub(crate) fn new(line: usize, message: impl Into<String>) -> Problem {
        Problem {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// One block as found in the text, well-formed or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub name: BlockName,
    /// Line of the opening tag (1-based).
    pub start_line: usize,
    /// Line of the closing tag; `None` when the block is not closed before the end.
    pub end_line: Option<usize>,
    /// The source lines from the opening to the closing tag, line ends normalised to `\n`
    /// (a trailing `\r` dropped), nothing else changed: what the idempotency key hashes.
    pub text: String,
    /// The fields in source order (a repeated key keeps its first value, and is a problem).
    pub fields: Vec<Field>,
    /// Syntax problems; a block with any is never acted on.
    pub problems: Vec<Problem>,
}

impl Block {
    /// Closed, and no syntax problem.
    pub fn is_well_formed(&self) -> bool {
        self.problems.is_empty()
    }

    pub fn field(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("block", &self.name)?;
        m.serialize_entry("startLine", &self.start_line)?;
        m.serialize_entry("endLine", &self.end_line)?;
        m.serialize_entry("wellFormed", &self.is_well_formed())?;
        m.serialize_entry("fields", &FieldsObject(&self.fields))?;
        m.serialize_entry("problems", &self.problems)?;
        m.serialize_entry("text", &self.text)?;
        m.end()
    }
}

/// The fields as one JSON object, in source order.
struct FieldsObject<'a>(&'a [Field]);

impl Serialize for FieldsObject<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for f in self.0 {
            m.serialize_entry(&f.key, &f.value)?;
        }
        m.end()
    }
}

/// What [`parse`] found: every block, and the problems outside any block (closing tags that
/// close nothing).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Parsed {
    pub blocks: Vec<Block>,
    pub problems: Vec<Problem>,
}

impl Parsed {
    /// The first block named `name`, well-formed or not.
    pub fn first(&self, name: BlockName) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }
}

/// At most this many problems are listed per block; the rest are counted in one more.
pub const MAX_PROBLEMS_PER_BLOCK: usize = 20;

/// Longest key accepted (longer `word:` prefixes are prose, not keys).
const MAX_KEY_LEN: usize = 64;

/// Finds every signal block in `text` (docs/protocol.md §17). Never fails: what is wrong is reported in
/// the blocks' and the result's `problems`.
pub fn parse(text: &str) -> Parsed {
    let mut out = Parsed::default();
    let mut open: Option<OpenBlock<'_>> = None;
    let mut offset = 0usize;
    for (index, raw) in text.split('\n').enumerate() {
        let n = index + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let line_start = offset;
        offset += raw.len() + 1;
        let tag = tag_of(line);
        if let Some(block) = open.as_mut() {
            block.text_end = line_start + line.len();
        }
        match (open.as_mut(), tag) {
            (None, None) => {}
            (None, Some(Tag::Open(name))) => {
                open = Some(OpenBlock::new(name, n, line_start, line_start + line.len()));
            }
            (None, Some(Tag::Close(name))) => out
                .problems
                .push(Problem::new(n, format!("[/{name}] closes no open block"))),
            (Some(block), Some(Tag::Close(name))) if name == block.name => {
                if let Some(block) = open.take() {
                    out.blocks.push(block.finish(text, Some(n)));
                }
            }
            (Some(block), Some(tag)) => {
                let (outer, start) = (block.name, block.start);
                let message = match tag {
                    Tag::Close(name) => {
                        format!("[/{name}] does not close [{outer}] opened at line {start}")
                    }
                    Tag::Open(name) => format!(
                        "[{name}] is nested in [{outer}] opened at line {start}; blocks cannot nest"
                    ),
                };
                block.end_field();
                block.problem(n, message);
            }
            (Some(block), None) => block.body_line(n, line),
        }
    }
    if let Some(block) = open {
        out.blocks.push(block.finish(text, None));
    }
    out
}

enum Tag {
    Open(BlockName),
    Close(BlockName),
}

/// `[NAME]` or `[/NAME]` alone on the line (surrounding whitespace allowed).
fn tag_of(line: &str) -> Option<Tag> {
    // Most lines of agent output are not tags: reject on the first visible byte.
    let start = line.trim_start();
    if !start.starts_with('[') {
        return None;
    }
    let inner = start.trim_end().strip_prefix('[')?.strip_suffix(']')?;
    match inner.strip_prefix('/') {
        Some(name) => BlockName::parse(name).map(Tag::Close),
        None => BlockName::parse(inner).map(Tag::Open),
    }
}

/// The column after an indentation byte at `col`: a space is one column, a tab moves to the
/// next multiple of 8 (the terminal convention: agent output is terminal text). `None` for
/// any other byte.
fn advance(col: usize, b: u8) -> Option<usize> {
    match b {
        b' ' => Some(col + 1),
        b'\t' => Some((col / 8 + 1) * 8),
        _ => None,
    }
}

/// Indentation width of a line.
fn indent_width(line: &str) -> usize {
    let mut col = 0usize;
    for b in line.bytes() {
        match advance(col, b) {
            Some(next) => col = next,
            None => break,
        }
    }
    col
}

/// `line` without the leading whitespace that makes up the first `width` columns.
fn dedent(line: &str, width: usize) -> &str {
    let mut col = 0usize;
    for (i, b) in line.bytes().enumerate() {
        match advance(col, b) {
            Some(next) if col < width => col = next,
            _ => return line.get(i..).unwrap_or(""),
        }
    }
    ""
}

/// `key: value` (or `key:` alone): the key and the trimmed value.
fn key_line(text: &str) -> Option<(&str, &str)> {
    let colon = text.find(':')?;
    let key = text.get(..colon)?;
    let rest = text.get(colon + 1..)?;
    let mut bytes = key.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    let rest_ok = bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    let separated = rest.is_empty() || rest.starts_with([' ', '\t']);
    (first_ok && rest_ok && key.len() <= MAX_KEY_LEN && separated).then(|| (key, rest.trim()))
}

/// `- item` (or a lone `-`): the item's text.
fn item_text(text: &str) -> Option<&str> {
    if text == "-" {
        return Some("");
    }
    text.strip_prefix("- ")
        .or_else(|| text.strip_prefix("-\t"))
        .map(str::trim)
}

fn is_comment(text: &str) -> bool {
    text.starts_with('#')
}

/// A quoted value without its quotes: `"…"` as a JSON string (escapes decoded), `'…'` with
/// `''` standing for `'`. Anything else, or quotes that do not enclose one string, verbatim.
fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        if let Ok(s) = serde_json::from_str::<String>(value) {
            return s;
        }
    } else if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        if !inner.replace("''", "").contains('\'') {
            return inner.replace("''", "'");
        }
    }
    value.to_owned()
}

/// A field being read; keys and values borrow from the input until the field ends.
struct Builder<'a> {
    key: &'a str,
    line: usize,
    indent: usize,
    /// A repeated key: read (so its lines are not errors) but not kept.
    repeated: bool,
    kind: Kind<'a>,
}

enum Kind<'a> {
    /// `key: value`, possibly folded with more-indented continuation lines.
    Scalar(Cow<'a, str>),
    /// `key:` with nothing yet: becomes a list, a text, or stays empty.
    Empty,
    /// `- item` lines; `dash` is the indentation of the first item.
    List {
        items: Vec<Cow<'a, str>>,
        dash: usize,
    },
    /// `key: |` (or `key:` followed by more-indented lines): `content` is the indentation of
    /// the first non-blank line, stripped from every line; blank lines wait in `blanks` until
    /// a later line shows they are inside the text.
    Text {
        text: String,
        content: Option<usize>,
        blanks: usize,
    },
}

impl Kind<'_> {
    fn text_line(text: &mut String, content: &mut Option<usize>, blanks: &mut usize, line: &str) {
        let started = content.is_some();
        let width = *content.get_or_insert_with(|| indent_width(line));
        if started {
            text.extend(std::iter::repeat_n('\n', *blanks + 1));
        }
        *blanks = 0;
        text.push_str(dedent(line, width));
    }
}

struct OpenBlock<'a> {
    name: BlockName,
    start: usize,
    /// Byte range of the block's lines in the input (the last one without its `\r`).
    text_start: usize,
    text_end: usize,
    fields: Vec<Field>,
    /// key → line of its first occurrence, once the block has many fields.
    seen: Option<BTreeMap<String, usize>>,
    current: Option<Builder<'a>>,
    problems: Vec<Problem>,
    unlisted: usize,
}

impl<'a> OpenBlock<'a> {
    fn new(name: BlockName, start: usize, text_start: usize, text_end: usize) -> OpenBlock<'a> {
        OpenBlock {
            name,
            start,
            text_start,
            text_end,
            fields: Vec::with_capacity(8),
            seen: None,
            current: None,
            problems: Vec::new(),
            unlisted: 0,
        }
    }

    fn problem(&mut self, line: usize, message: String) {
        if self.problems.len() < MAX_PROBLEMS_PER_BLOCK {
            self.problems.push(Problem::new(line, message));
        } else {
            self.unlisted += 1;
        }
    }

    fn body_line(&mut self, n: usize, line: &'a str) {
        let start = line.trim_start_matches([' ', '\t']);
        let blank = start.trim().is_empty();
        let indent = indent_width(line);
        if let Some(b) = self.current.as_mut() {
            if continues(b, line, start, blank, indent) {
                return;
            }
        }
        if blank || is_comment(start) {
            return;
        }
        if let Some((key, value)) = key_line(start) {
            self.end_field();
            let repeated = match self.first_line_of(key, n) {
                Some(first) => {
                    let message = format!("key `{key}` repeats line {first}");
                    self.problem(n, message);
                    true
                }
                None => false,
            };
            let kind = match value {
                "" => Kind::Empty,
                "|" => Kind::Text {
                    text: String::new(),
                    content: None,
                    blanks: 0,
                },
                v => Kind::Scalar(Cow::Borrowed(v)),
            };
            self.current = Some(Builder {
                key,
                line: n,
                indent,
                repeated,
                kind,
            });
            return;
        }
        self.end_field();
        let message = if item_text(start).is_some() {
            String::from("`- item` outside a list: items follow a line `key:` with no value")
        } else {
            format!(
                "expected `key: value`, `key:` with `- item` lines, `key: |` with indented text, or [/{}]; found '{}'",
                self.name,
                shown(start.trim_end())
            )
        };
        self.problem(n, message);
    }

    /// The line where `key` first appeared in this block, or `None` (a new key). A few
    /// fields are searched where they are; a block with many gets a map, so hostile input
    /// stays O(n log n) without a map built and freed for every ordinary block.
    fn first_line_of(&mut self, key: &str, n: usize) -> Option<usize> {
        const SCAN: usize = 16;
        let seen = match &mut self.seen {
            Some(seen) => seen,
            None if self.fields.len() < SCAN => {
                return self.fields.iter().find(|f| f.key == key).map(|f| f.line);
            }
            None => {
                // Inserted last to first, so a key keeps its first line (no sort instantiated
                // for a collect).
                let mut seen = BTreeMap::new();
                for f in self.fields.iter().rev() {
                    seen.insert(f.key.clone(), f.line);
                }
                self.seen.insert(seen)
            }
        };
        match seen.get(key) {
            Some(first) => Some(*first),
            None => {
                seen.insert(key.to_owned(), n);
                None
            }
        }
    }

    fn end_field(&mut self) {
        let Some(b) = self.current.take() else {
            return;
        };
        if b.repeated {
            return;
        }
        let value = match b.kind {
            Kind::Scalar(s) => FieldValue::Text(unquote(&s)),
            Kind::Empty => FieldValue::Text(String::new()),
            Kind::List { items, .. } => {
                FieldValue::List(items.iter().map(|i| unquote(i)).collect())
            }
            Kind::Text { text, .. } => FieldValue::Text(text),
        };
        self.fields.push(Field {
            key: b.key.to_owned(),
            value,
            line: b.line,
        });
    }

    fn finish(mut self, input: &str, end: Option<usize>) -> Block {
        self.end_field();
        if end.is_none() {
            let message = format!(
                "[{}] opened at line {} is not closed by [/{}] before the end of the output",
                self.name, self.start, self.name
            );
            // Listed even past the cap: it is the problem that explains the others.
            self.problems.push(Problem::new(self.start, message));
        }
        if self.unlisted > 0 {
            let message = format!("{} more problems not listed", self.unlisted);
            self.problems.push(Problem::new(self.start, message));
        }
        let raw = input.get(self.text_start..self.text_end).unwrap_or("");
        let text = if raw.contains('\r') {
            raw.replace("\r\n", "\n")
        } else {
            raw.to_owned()
        };
        Block {
            name: self.name,
            start_line: self.start,
            end_line: end,
            text,
            fields: self.fields,
            problems: self.problems,
        }
    }
}

/// Whether `line` continues the field being read (and takes it in if so).
fn continues<'a>(
    b: &mut Builder<'a>,
    line: &'a str,
    start: &'a str,
    blank: bool,
    indent: usize,
) -> bool {
    match &mut b.kind {
        Kind::Text {
            text,
            content,
            blanks,
        } => {
            if blank {
                if content.is_some() {
                    *blanks += 1;
                }
                true
            } else if indent > b.indent {
                Kind::text_line(text, content, blanks, line);
                true
            } else {
                false
            }
        }
        Kind::Empty => {
            if blank {
                return true;
            }
            if let Some(item) = item_text(start) {
                if indent >= b.indent {
                    b.kind = Kind::List {
                        items: vec![Cow::Borrowed(item)],
                        dash: indent,
                    };
                    return true;
                }
                return false;
            }
            if indent > b.indent && !is_comment(start) {
                let (mut text, mut content, mut blanks) = (String::new(), None, 0);
                Kind::text_line(&mut text, &mut content, &mut blanks, line);
                b.kind = Kind::Text {
                    text,
                    content,
                    blanks,
                };
                return true;
            }
            false
        }
        Kind::List { items, dash } => {
            if blank || is_comment(start) {
                return true;
            }
            match item_text(start) {
                Some(item) if indent >= b.indent && indent <= *dash => {
                    items.push(Cow::Borrowed(item));
                    true
                }
                _ if indent > *dash => {
                    // A wrapped item (or a deeper list): folded into the item, as YAML folds
                    // a plain scalar's continuation lines.
                    if let Some(last) = items.last_mut() {
                        let last = last.to_mut();
                        last.push(' ');
                        last.push_str(start.trim_end());
                    }
                    true
                }
                _ => false,
            }
        }
        Kind::Scalar(s) => {
            if blank {
                return true;
            }
            if indent > b.indent && !is_comment(start) {
                let s = s.to_mut();
                s.push(' ');
                s.push_str(start.trim_end());
                return true;
            }
            false
        }
    }
}
