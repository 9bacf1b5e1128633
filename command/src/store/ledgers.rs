//! Ledgers of both kinds through one document interface (docs/protocol.md §21). A state store
//! keeps one ledger per issue of each [`LedgerKind`] — clarifications (§3) and delegations
//! (§18) — and reads, updates and scans them through [`Ledgers<K>`], written once for both.
//!
//! What a kind *is* (where its files go, how its bytes parse and print, how reports name one)
//! is said here once. How a store *keeps* a kind is the store's: the file store indexes each
//! kind's markers its own way, and PostgreSQL keeps a clarification ledger as rows (one per
//! record, so a write moves only the records that changed) but a delegation ledger whole.
//! Each store names those differences in one small trait of its own beside its generic
//! implementation, never in a second copy of the read–decide–write path.

use agentx_clarify_core::delegation::DelegationLedger;
use agentx_clarify_core::monitor::ReportError;
use agentx_clarify_core::names::MAX_ISSUE;
use agentx_clarify_core::{ClarifyError, Config, Ledger};

use crate::store::{paths, Scope};

/// A kind of per-issue ledger.
pub trait LedgerKind: Send + Sync + 'static {
    /// The parsed ledger.
    type Ledger: Clone + Send + Sync + 'static;
    /// The workspace directory of its files (`.agentx/state/<kind>/`), ending in `/`.
    const DIR: &'static str;
    /// Its name: the directory's, and a database document's kind.
    const NAME: &'static str;

    /// How reports and errors name the ledger of `issue`.
    fn file(issue: u64) -> String;

    /// Parses a ledger's bytes; `file` names it in errors, `issue` is the number of its name.
    fn parse(file: &str, bytes: &[u8], issue: u32) -> Result<Self::Ledger, ClarifyError>;

    /// The bytes a file of it holds (pretty JSON, as every writer writes it).
    fn print(ledger: &Self::Ledger) -> String;

    /// The workspace path of the ledger of `issue`.
    fn path(issue: u32) -> String {
        format!("{}{}", Self::DIR, paths::ledger_name(issue))
    }

    /// Parses the ledger of `issue` from its bytes, named as reports name it.
    fn parse_issue(issue: u32, bytes: &[u8]) -> Result<Self::Ledger, ClarifyError> {
        Self::parse(&Self::file(u64::from(issue)), bytes, issue)
    }
}

/// Clarification ledgers (docs/protocol.md §3): `.agentx/state/clarifications/issue-<n>.json`.
pub enum Clarifications {}

/// Delegation ledgers (docs/protocol.md §18): `.agentx/state/delegations/issue-<n>.json`.
pub enum Delegations {}

impl LedgerKind for Clarifications {
    type Ledger = Ledger;
    const DIR: &'static str = paths::CLARIFICATIONS_DIR;
    const NAME: &'static str = "clarifications";

    fn file(issue: u64) -> String {
        format!("issue-{issue}.json")
    }

    fn parse(file: &str, bytes: &[u8], issue: u32) -> Result<Ledger, ClarifyError> {
        Ledger::parse(file, bytes, Some(issue))
    }

    fn print(ledger: &Ledger) -> String {
        ledger.to_pretty_json()
    }
}

impl LedgerKind for Delegations {
    type Ledger = DelegationLedger;
    const DIR: &'static str = paths::DELEGATIONS_DIR;
    const NAME: &'static str = "delegations";

    fn file(issue: u64) -> String {
        format!("delegations/issue-{issue}.json")
    }

    fn parse(file: &str, bytes: &[u8], issue: u32) -> Result<DelegationLedger, ClarifyError> {
        DelegationLedger::parse(file, bytes, Some(issue))
    }

    fn print(ledger: &DelegationLedger) -> String {
        ledger.to_pretty_json()
    }
}

/// When the ledgers of one kind fall due by time alone, as a store's index of due times keeps
/// them ([`Ledgers::due_times`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DueTimes {
    /// The store keeps no such index, or cannot trust it now: the caller reads the ledgers.
    #[default]
    Unknown,
    /// What the index says. `earliest`: the earliest due time of any ledger (`None`: none
    /// falls due by time alone), leaving out the ledgers keyed due *at once*, which are
    /// `at_once` by issue, ascending — a stale record (due now) and a ledger that could not
    /// be read (never due by time: it is reported instead) look alike in the index, so a
    /// caller that must tell them apart reads those few ledgers.
    Indexed {
        earliest: Option<i64>,
        at_once: Vec<u32>,
    },
}

/// One ledger as a workspace pass reads it.
#[derive(Debug)]
pub struct Read<L> {
    /// The issue number of its name (may exceed 2^31−1: such files are reported, not read).
    pub issue: u64,
    /// Its name as reports show it (`issue-<n>.json`, `delegations/issue-<n>.json`).
    pub file: String,
    /// The parsed ledger, or why it could not be read.
    pub ledger: Result<L, ReportError>,
}

/// The ledger of kind `K` named by `issue`, as a pass reads it: the number is checked, then
/// `parse` reads it (a store that keeps it as bytes parses them with [`read_bytes`]); either
/// failure becomes a report error naming the file.
pub fn read_by<K: LedgerKind>(
    issue: u64,
    parse: impl FnOnce(&str, u32) -> Result<K::Ledger, ClarifyError>,
) -> Read<K::Ledger> {
    let file = K::file(issue);
    let fail = |e: ClarifyError| ReportError::new(file.as_str(), &e);
    let ledger = match u32::try_from(issue)
        .ok()
        .filter(|n| u64::from(*n) <= MAX_ISSUE)
    {
        None => Err(fail(ClarifyError::InvalidIssue {
            value: issue.to_string(),
        })),
        Some(n) => parse(&file, n).map_err(fail),
    };
    Read {
        issue,
        file,
        ledger,
    }
}

/// [`read_by`] for a ledger kept as one file's bytes (or why they could not be read).
pub fn read_bytes<K: LedgerKind>(
    issue: u64,
    bytes: Result<&[u8], ClarifyError>,
) -> Read<K::Ledger> {
    read_by::<K>(issue, |file, n| bytes.and_then(|b| K::parse(file, b, n)))
}

/// The ledgers of kind `K` a state store keeps, one per issue. Every `update` is one atomic
/// read–decide–write excluding every other writer of that ledger (and of nothing else); the
/// closure gets the current value, freshly read, and may be called again if the store retries
/// (a database after a serialization failure), so it must be a pure function of its argument.
pub trait Ledgers<K: LedgerKind> {
    /// The ledger of `issue`, if there is one. One that does not parse is `LEDGER_CORRUPT`
    /// and is never overwritten.
    fn read(&self, issue: u32) -> Result<Option<K::Ledger>, ClarifyError>;

    /// Whether `issue` has a ledger, without reading it: a command that needs only this (an
    /// ask deciding whether to validate before its first write) must not pay for parsing a
    /// ledger of hundreds of records. Errors as `read`'s for what is at the path (a FIFO, a
    /// directory); a ledger that does not parse is found by the update.
    fn has(&self, issue: u32) -> Result<bool, ClarifyError> {
        Ok(self.read(issue)?.is_some())
    }

    /// Read–decide–write on the ledger of `issue`. `decide` returns what to write (if
    /// anything) and a result. `agent` names the holder in lock files.
    fn update<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<K::Ledger>) -> Result<(Option<K::Ledger>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    /// Read–decide–write on the ledger file's bytes as stored (for `migrate`, which must see
    /// what another tool wrote: a BOM, its layout, its spellings). `decide` gets the bytes
    /// (`None`: no file) and returns what to write; bytes that do not parse are kept as they
    /// are, as a pass that cannot read them reports them.
    fn update_bytes<T>(
        &self,
        issue: u32,
        config: &Config,
        agent: &str,
        decide: impl FnMut(Option<&[u8]>) -> Result<(Option<Vec<u8>>, T), ClarifyError>,
    ) -> Result<T, ClarifyError>;

    /// Visits the ledgers `scope` names (a store without an index visits all of them),
    /// ascending by issue number, and returns what `visit` made of each, in that order. A
    /// store may visit in parallel.
    fn scan_ledgers<R: Send>(
        &self,
        scope: Scope<'_>,
        visit: impl Fn(Read<K::Ledger>) -> R + Sync,
    ) -> Result<Vec<R>, ClarifyError>;

    /// When the ledgers of this kind fall due by time alone, from the index of due times the
    /// store keeps for the monitor that follows a command (docs/protocol.md §29: each
    /// ledger's `FollowKeys::due`), without reading a ledger: what a long-running worker
    /// plans its next wake-up from, so that planning costs the same at 100 ledgers and at
    /// 100,000. A store without such an index (or one it cannot trust now) says
    /// [`DueTimes::Unknown`], the default; the caller then reads the ledgers.
    fn due_times(&self) -> Result<DueTimes, ClarifyError> {
        Ok(DueTimes::Unknown)
    }
}
