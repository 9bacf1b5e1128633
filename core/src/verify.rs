//! `verify`: every ledger parses, ids are valid and unique, each snapshot equals the fold of
//! its thread, hash chains are intact and timestamps never decrease. What another tool's
//! writer left behind (docs/protocol.md §20) is a warning, not a problem.

use serde::{Deserialize, Serialize};

use crate::error::{ClarifyError, ErrorCode};
use crate::ledger::{entry_hash, misfiled_message, ChainState, Entry, Fold, Ledger, Record};
use crate::names::ClarificationId;
use crate::signing::{signer_for, PublicKeys};
use crate::time::Timestamp;

/// One problem found by `verify`; `id` is None for a file-level problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub file: String,
    pub id: Option<String>,
    pub message: String,
    /// The failure this problem stands for when it is not `verify`'s own
    /// (`LEDGER_INCONSISTENT`): `SIGNATURE_INVALID` for a signature. Absent from the JSON
    /// when none, so the problems of unsigned ledgers keep their shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
}

impl Problem {
    /// The code of the failure this problem makes `verify` report.
    pub fn failure_code(&self) -> ErrorCode {
        self.code.unwrap_or(ErrorCode::LedgerInconsistent)
    }
}

/// The issue number a ledger file name stands for (`issue-<n>.json`), if it is one.
pub fn issue_of_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("issue-")?.strip_suffix(".json")?;
    if crate::names::is_canonical_decimal(digits) {
        // Too many digits for a u64 fail here.
        digits.parse().ok()
    } else {
        None
    }
}

/// What `verify` found in one or more ledgers. `problems` make `verify` fail (exit 8);
/// `warnings` are listed and leave the exit code 0 (docs/protocol.md §20): the marks another tool's
/// writer left — legacy records without hashes, entries appended without a hash, snapshots
/// it did not keep — which `agentx migrate` (or the next write) upgrades.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl Verification {
    pub fn extend(&mut self, other: Verification) {
        self.problems.extend(other.problems);
        self.warnings.extend(other.warnings);
    }

    /// The code `verify` fails with, None without problems: `SIGNATURE_INVALID` when any
    /// problem is a signature's, else `LEDGER_INCONSISTENT`.
    pub fn error_code(&self) -> Option<ErrorCode> {
        failure_code(&self.problems)
    }
}

/// The code `verify` fails with for `problems` ([`Verification::error_code`]).
pub fn failure_code(problems: &[Problem]) -> Option<ErrorCode> {
    let signature = ErrorCode::SignatureInvalid;
    if problems.iter().any(|p| p.code == Some(signature)) {
        Some(signature)
    } else {
        (!problems.is_empty()).then_some(ErrorCode::LedgerInconsistent)
    }
}

/// Verifies raw ledger bytes as read from `file`: problems and warnings. Signatures are
/// checked with no keys: a signed entry names an unknown signer ([`check_file_with`]).
pub fn check_file(file: &str, bytes: &[u8]) -> Verification {
    check_file_with(file, bytes, &PublicKeys::new(), false)
}

/// [`check_file`] checking signatures against `keys`; with `require_signatures` an unsigned
/// entry is a problem too (`[audit] require_signatures`).
pub fn check_file_with(
    file: &str,
    bytes: &[u8],
    keys: &PublicKeys,
    require_signatures: bool,
) -> Verification {
    let issue = issue_of_file_name(file).and_then(|n| u32::try_from(n).ok());
    match Ledger::parse(file, bytes, issue) {
        Ok(ledger) => {
            let mut found = check_ledger_with(file, &ledger, keys, require_signatures);
            if bytes.starts_with(crate::encoding::BOM) {
                found.warnings.insert(
                    0,
                    Problem {
                        file: file.to_owned(),
                        id: None,
                        message: String::from(
                            "the file starts with a UTF-8 byte order mark (written by another tool); the next write drops it",
                        ),
                        code: None,
                    },
                );
            }
            found
        }
        Err(e) => Verification {
            problems: vec![Problem {
                file: file.to_owned(),
                id: None,
                message: e.to_string(),
                code: None,
            }],
            warnings: Vec::new(),
        },
    }
}

/// Verifies raw ledger bytes as read from `file`: the problems alone.
pub fn verify_file(file: &str, bytes: &[u8]) -> Vec<Problem> {
    check_file(file, bytes).problems
}

/// For each record, whether an earlier record of the ledger's issue has the same sequence
/// number. One sort through the shared `stable_sort` (stable: the first of equals stays first
/// and is not flagged) rather than a set of numbers, which costs the wasm package its own set
/// code.
fn repeated_ids(ledger: &Ledger) -> Vec<bool> {
    let mut seqs: Vec<(u64, usize)> = ledger
        .clarifications
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let id = ClarificationId::parse(&r.id).ok()?;
            (id.issue == ledger.issue_number).then_some((id.seq, i))
        })
        .collect();
    crate::stable_sort::sort_by_key(&mut seqs, |(seq, _)| *seq);
    let mut repeated = vec![false; ledger.clarifications.len()];
    for pair in seqs.windows(2) {
        if let [(a, _), (b, i)] = pair {
            if let Some(flag) = repeated.get_mut(*i).filter(|_| a == b) {
                *flag = true;
            }
        }
    }
    repeated
}

/// Verifies a parsed ledger: the problems alone.
pub fn verify_ledger(file: &str, ledger: &Ledger) -> Vec<Problem> {
    check_ledger(file, ledger).problems
}

/// Verifies a parsed ledger: problems and warnings (signatures checked with no keys).
pub fn check_ledger(file: &str, ledger: &Ledger) -> Verification {
    check_ledger_with(file, ledger, &PublicKeys::new(), false)
}

/// Verifies a parsed ledger, its signatures against `keys` ([`check_file_with`]).
pub fn check_ledger_with(
    file: &str,
    ledger: &Ledger,
    keys: &PublicKeys,
    require_signatures: bool,
) -> Verification {
    let mut found = Verification::default();
    if let Some(n) = issue_of_file_name(file) {
        if n != u64::from(ledger.issue_number) {
            // The same message `Ledger::parse` gives for the file's bytes.
            let expected = u32::try_from(n).unwrap_or(u32::MAX);
            let e = ClarifyError::corrupt(file, misfiled_message(expected, ledger.issue_number));
            found.problems.push(Problem {
                file: file.to_owned(),
                id: None,
                message: e.to_string(),
                code: None,
            });
        }
    }
    let repeated = repeated_ids(ledger);
    for (i, record) in ledger.clarifications.iter().enumerate() {
        let mut problem = |message: String| {
            found.problems.push(Problem {
                file: file.to_owned(),
                id: Some(record.id.clone()),
                message,
                code: None,
            });
        };
        match ClarificationId::parse(&record.id) {
            Err(e) => problem(e.to_string()),
            Ok(id) if id.issue != ledger.issue_number => {
                problem(format!(
                    "id {} belongs to issue {}, not {}",
                    record.id, id.issue, ledger.issue_number
                ));
            }
            Ok(_) => {
                if repeated.get(i).copied().unwrap_or(false) {
                    problem(format!("id {} is not unique in this ledger", record.id));
                }
            }
        }
        let (problems, warnings) = record_findings(record);
        let at = |message: String| Problem {
            file: file.to_owned(),
            id: Some(record.id.clone()),
            message,
            code: None,
        };
        found.problems.extend(problems.into_iter().map(at));
        found.warnings.extend(warnings.into_iter().map(at));
        let signatures = record_signature_problems(record, keys, require_signatures);
        found
            .problems
            .extend(signatures.into_iter().map(|message| Problem {
                code: Some(ErrorCode::SignatureInvalid),
                ..at(message)
            }));
    }
    found
}

/// Added to a snapshot mismatch found in a record another tool wrote (one with entries
/// without a hash): that tool did not keep the snapshot; commands act on the fold anyway.
const FOREIGN_SNAPSHOT: &str =
    "written by another tool; `agentx migrate` (or the next write) sets it from the thread";

/// (problems, warnings) of one record.
fn record_findings(record: &Record) -> (Vec<String>, Vec<String>) {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    if record.thread.is_empty() {
        // A legacy record with no thread has no fold to compare (docs/protocol.md §3.1).
        warnings.push(format!(
            "legacy record without a question (round {}, empty thread): only escalate, abandon and the monitor act on it",
            record.round
        ));
        return (problems, warnings);
    }
    // A writer that hashes also writes the fold as the snapshot (this crate); one that does
    // not hash (AgentX) leaves both to be upgraded: its snapshot mismatches are warnings.
    let mut mismatches = Vec::new();
    let fold = record.fold();
    if record.has_missing_stale_entry() {
        // PowerShell AgentX marks a record stale without an entry (docs/protocol.md §3.1).
        warnings.push(String::from(
            "status is stale but the thread has no stale entry (marked by another tool); the monitor appends it",
        ));
    } else if record.status != fold.status {
        mismatches.push(format!(
            "status is {} but the thread says {}",
            record.status.as_str(),
            fold.status.as_str()
        ));
    }
    mismatches.extend(snapshot_mismatches(record, &fold));
    if record.thread.iter().any(|e| e.hash.is_none()) {
        warnings.extend(
            mismatches
                .into_iter()
                .map(|m| format!("{m} ({FOREIGN_SNAPSHOT})")),
        );
    } else {
        problems.extend(mismatches);
    }
    for pair in record.thread.windows(2) {
        if let [a, b] = pair {
            if b.timestamp.ms() < a.timestamp.ms() {
                problems.push(format!(
                    "timestamps go backwards: {} after {}",
                    b.timestamp, a.timestamp
                ));
                break;
            }
        }
    }
    chain_findings(record, &mut problems, &mut warnings);
    (problems, warnings)
}

/// The snapshot fields (beyond the status) that disagree with the thread's fold.
fn snapshot_mismatches(record: &Record, fold: &Fold) -> Vec<String> {
    let mut mismatches = Vec::new();
    if record.round != fold.round {
        mismatches.push(format!(
            "round is {} but the thread has {} question(s)",
            record.round, fold.round
        ));
    }
    if record.retries != fold.retries {
        mismatches.push(format!(
            "retries is {} but the thread has {} retry entries",
            record.retries, fold.retries
        ));
    }
    let same = |a: &Option<Timestamp>, b: &Option<Timestamp>| {
        a.as_ref().map(Timestamp::ms) == b.as_ref().map(Timestamp::ms)
    };
    if !same(&record.resolved_at, &fold.resolved_at) {
        mismatches.push(format!(
            "resolvedAt is {} but the thread says {}",
            show(&record.resolved_at),
            show(&fold.resolved_at)
        ));
    }
    if !same(&record.stale_after, &fold.stale_after) {
        mismatches.push(format!(
            "staleAfter is {} but the thread says {}",
            show(&record.stale_after),
            show(&fold.stale_after)
        ));
    }
    if !same(&record.created, &fold.created) {
        mismatches.push(format!(
            "created is {} but the first question is at {}",
            show(&record.created),
            show(&fold.created)
        ));
    }
    mismatches
}

/// What the hash chain says: unhashed entries from another writer are warnings (the next
/// write hashes them); a mixed or broken chain means history was edited.
fn chain_findings(record: &Record, problems: &mut Vec<String>, warnings: &mut Vec<String>) {
    let n = record.thread.len();
    match record.chain_state() {
        ChainState::Intact => {}
        ChainState::Unhashed => warnings.push(format!(
            "legacy record: none of its {n} entries has a hash (written by another tool); `agentx migrate` (or the next write) hashes them"
        )),
        ChainState::UnhashedTail(from) if from + 1 == n => warnings.push(format!(
            "entry {n} was appended without a hash (by a writer that does not hash); `agentx migrate` (or the next write) hashes it"
        )),
        ChainState::UnhashedTail(from) => warnings.push(format!(
            "entries {}–{n} were appended without a hash (by a writer that does not hash); `agentx migrate` (or the next write) hashes them",
            from + 1
        )),
        ChainState::Mixed => problems.push(String::from(
            "the thread mixes hashed and unhashed entries: an entry without a hash comes before a hashed one",
        )),
        ChainState::BrokenAt(i) => problems.push(format!(
            "hash chain broken at entry {} (history was edited)",
            i + 1
        )),
    }
}

fn show(t: &Option<Timestamp>) -> String {
    t.as_ref()
        .map_or_else(|| String::from("null"), |t| t.as_str().to_owned())
}

// ── signatures (docs/protocol.md §16): the checks that know ledgers ──

/// What is wrong with the signatures of `record`'s thread, one message per entry at most.
/// Each entry is checked against the hash its content gives (not the stored one), so an
/// edited entry fails here even when its `hash` was recomputed. With `require`, an unsigned
/// entry is a problem too.
pub fn record_signature_problems(record: &Record, keys: &PublicKeys, require: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut prev = "";
    for (i, entry) in record.thread.iter().enumerate() {
        let n = i + 1;
        if let Some(problem) = entry_problem(&record.id, prev, entry, keys, require) {
            out.push(format!(
                "entry {n} ({} by {}): {problem}",
                entry.kind.as_str(),
                entry.from
            ));
        }
        prev = entry.hash.as_deref().unwrap_or("");
    }
    out
}

/// What is wrong with the signature of entry `index` of `record`: `None` when it verifies or
/// carries none (an exported decision says which, `core/src/decisions/`).
pub fn entry_signature_problem(record: &Record, index: usize, keys: &PublicKeys) -> Option<String> {
    let entry = record.thread.get(index)?;
    let prev = index
        .checked_sub(1)
        .and_then(|i| record.thread.get(i))
        .and_then(|e| e.hash.as_deref())
        .unwrap_or("");
    entry_problem(&record.id, prev, entry, keys, false)
}

fn entry_problem(
    record_id: &str,
    prev: &str,
    entry: &Entry,
    keys: &PublicKeys,
    require: bool,
) -> Option<String> {
    let (signer, signature) = match (&entry.signer, &entry.signature) {
        (None, None) => {
            return require.then(|| String::from("not signed, and signatures are required"))
        }
        (None, Some(_)) => return Some(String::from("carries a signature but no signer")),
        (Some(s), None) => return Some(format!("names signer {s} but carries no signature")),
        (Some(signer), Some(signature)) => (signer, signature),
    };
    let allowed = signer_for(&entry.from);
    if signer != allowed {
        return Some(format!("signed by {signer}; only {allowed} may sign it"));
    }
    let Some(key) = keys.get(signer) else {
        return Some(format!("signed by {signer}, whose public key is unknown"));
    };
    // `entry_hash` always gives 64 hex digits; a failure here would be a bug, reported.
    let Some(bytes) = crate::signing::hash_bytes(&entry_hash(record_id, prev, entry)) else {
        return Some(String::from("its hash could not be computed"));
    };
    key.verify(&bytes, signature)
        .err()
        .map(|why| format!("signature by {signer}: {why}"))
}

/// Signature problems of every record of `ledger`, each with the code `SIGNATURE_INVALID`:
/// the signature part of [`check_ledger_with`], which runs the other checks
/// too.
pub fn verify_signatures(
    file: &str,
    ledger: &Ledger,
    keys: &PublicKeys,
    require: bool,
) -> Vec<Problem> {
    let mut out = Vec::new();
    for record in &ledger.clarifications {
        for message in record_signature_problems(record, keys, require) {
            out.push(Problem {
                file: file.to_owned(),
                id: Some(record.id.clone()),
                message,
                code: Some(ErrorCode::SignatureInvalid),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(issue_of_file_name("issue-42.json"), Some(42));
        assert_eq!(issue_of_file_name("issue-0.json"), Some(0));
        assert_eq!(issue_of_file_name("issue-042.json"), None);
        assert_eq!(issue_of_file_name("issue-42.json.lock"), None);
        assert_eq!(issue_of_file_name("issue-.json"), None);
    }

    use serde_json::{json, Value};

    /// A record as AgentX's TypeScript writes it: no hashes, `created` 2 ms before the
    /// question, `staleAfter` from `created`; its stored status agrees with the thread.
    fn agentx_record() -> Value {
        let mut r = crate::testkit::agentx_ts()["clarifications"][0].take();
        r["status"] = json!("answered");
        r
    }

    fn check(records: Vec<Value>) -> Verification {
        let v = json!({"issueNumber": 1, "clarifications": records});
        check_file("issue-1.json", v.to_string().as_bytes())
    }

    fn messages(found: &[Problem]) -> Vec<&str> {
        found.iter().map(|p| p.message.as_str()).collect()
    }

    fn sealed(mut record: Value) -> Value {
        let v = json!({"issueNumber": 1, "clarifications": [record.take()]});
        let mut l = Ledger::from_value("issue-1.json", &v, Some(1)).unwrap();
        l.seal();
        l.to_value()["clarifications"][0].clone()
    }

    #[test]
    fn repeated_ids_are_flagged_from_their_second_occurrence() {
        let record = |id: &str| {
            let mut r = agentx_record();
            r["id"] = json!(id);
            r
        };
        let ids = [
            "CLR-1-002",
            "CLR-1-001",
            "CLR-1-002",
            "CLR-1-003",
            "CLR-1-002",
        ];
        let found = check(ids.iter().map(|id| record(id)).collect());
        let repeated: Vec<(Option<&str>, &str)> = found
            .problems
            .iter()
            .filter(|p| p.message.contains("not unique"))
            .map(|p| (p.id.as_deref(), p.message.as_str()))
            .collect();
        let message = "id CLR-1-002 is not unique in this ledger";
        assert_eq!(
            repeated,
            vec![(Some("CLR-1-002"), message), (Some("CLR-1-002"), message)]
        );
        // Which records: the third and the fifth, each once, in ledger order.
        let l = Ledger::from_value(
            "issue-1.json",
            &json!({"issueNumber": 1, "clarifications": ids.map(record)}),
            Some(1),
        )
        .unwrap();
        assert_eq!(repeated_ids(&l), vec![false, false, true, false, true]);
    }

    #[test]
    fn freshly_migrated_agentx_ledgers_have_warnings_not_problems() {
        // created/staleAfter 2 ms off the thread, a stored `pending` with an answer in the
        // thread, a stored `stale` whose entry is missing, a legacy record without question.
        let mut pending = agentx_record();
        pending["status"] = json!("pending");
        pending["id"] = json!("CLR-1-002");
        let mut stale = agentx_record();
        stale["status"] = json!("stale");
        stale["id"] = json!("CLR-1-003");
        stale["thread"].as_array_mut().unwrap().pop();
        let empty = json!({"id": "CLR-1-004", "from": "engineer", "to": "architect",
            "topic": "Crash", "status": "pending", "round": 0, "maxRounds": 5,
            "created": "2026-11-22T10:00:00.000Z", "resolvedAt": null, "thread": []});
        let found = check(vec![agentx_record(), pending, stale, empty]);
        assert_eq!(found.problems, vec![], "{:#?}", found.warnings);
        let w = messages(&found.warnings);
        let suffix = "(written by another tool; `agentx migrate` (or the next write) sets it from the thread)";
        assert!(w.contains(&format!("created is 2026-11-22T10:00:00.940Z but the first question is at 2026-11-22T10:00:00.942Z {suffix}").as_str()), "{w:#?}");
        assert!(w.contains(&format!("staleAfter is 2026-11-22T10:30:00.940Z but the thread says 2026-11-22T10:30:00.942Z {suffix}").as_str()), "{w:#?}");
        assert!(
            w.contains(
                &format!("status is pending but the thread says answered {suffix}").as_str()
            ),
            "{w:#?}"
        );
        assert!(w.contains(&"status is stale but the thread has no stale entry (marked by another tool); the monitor appends it"), "{w:#?}");
        assert!(w.contains(&"legacy record: none of its 2 entries has a hash (written by another tool); `agentx migrate` (or the next write) hashes them"), "{w:#?}");
        assert!(w.contains(&"legacy record without a question (round 0, empty thread): only escalate, abandon and the monitor act on it"), "{w:#?}");
    }

    #[test]
    fn entries_appended_without_a_hash_are_warnings() {
        let mut record = sealed(agentx_record());
        record["thread"].as_array_mut().unwrap().push(json!({
            "round": 1, "from": "engineer", "type": "resolution", "body": "Thanks.",
            "timestamp": "2026-11-22T10:05:00.000Z"}));
        // AgentX's resolve also sets the snapshot: no mismatch but the missing hash.
        record["status"] = json!("resolved");
        record["resolvedAt"] = json!("2026-11-22T10:05:00.000Z");
        let found = check(vec![record.clone()]);
        assert_eq!(found.problems, vec![]);
        assert_eq!(
            messages(&found.warnings),
            vec!["entry 3 was appended without a hash (by a writer that does not hash); `agentx migrate` (or the next write) hashes it"]
        );
        record["thread"].as_array_mut().unwrap().push(json!({
            "round": 1, "from": "monitor", "type": "abandonment", "body": "x",
            "timestamp": "2026-11-22T10:06:00.000Z"}));
        let found = check(vec![record.clone()]);
        assert!(messages(&found.warnings)
            .iter()
            .any(|w| w.starts_with("entries 3–4 were appended")));
        // A hash removed before a hashed entry is a problem; so is a broken hashed prefix.
        let mut removed = record.clone();
        removed["thread"][0].as_object_mut().unwrap().remove("hash");
        removed["thread"][3]["hash"] = removed["thread"][1]["hash"].clone();
        assert!(messages(&check(vec![removed]).problems)
            .contains(&"the thread mixes hashed and unhashed entries: an entry without a hash comes before a hashed one"));
        let mut edited = record;
        edited["thread"][1]["body"] = json!("No.");
        assert_eq!(
            messages(&check(vec![edited]).problems),
            vec!["hash chain broken at entry 2 (history was edited)"]
        );
    }

    #[test]
    fn snapshot_mismatches_of_hashed_records_stay_problems() {
        let mut record = sealed(agentx_record());
        assert_eq!(check(vec![record.clone()]), Verification::default());
        record["status"] = json!("pending");
        let found = check(vec![record]);
        assert_eq!(
            messages(&found.problems),
            vec!["status is pending but the thread says answered"]
        );
        assert!(found.warnings.is_empty());
    }

    #[test]
    fn a_problems_code_shows_only_when_set_and_picks_the_failure() {
        let plain = Problem {
            file: "issue-1.json".into(),
            id: None,
            message: "m".into(),
            code: None,
        };
        let signed = Problem {
            code: Some(ErrorCode::SignatureInvalid),
            ..plain.clone()
        };
        let v = serde_json::to_value([&plain, &signed]).unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"file": "issue-1.json", "id": null, "message": "m"},
                {"file": "issue-1.json", "id": null, "message": "m", "code": "SIGNATURE_INVALID"}
            ])
        );
        let back: Vec<Problem> = serde_json::from_value(v).unwrap();
        assert_eq!(back, [plain.clone(), signed.clone()]);
        assert!(serde_json::from_value::<Problem>(serde_json::json!(
            {"file": "f", "id": null, "message": "m", "code": "NOPE"}
        ))
        .is_err());
        let found = |problems: Vec<Problem>| Verification {
            problems,
            warnings: Vec::new(),
        };
        assert_eq!(found(vec![]).error_code(), None);
        assert_eq!(
            found(vec![plain.clone()]).error_code(),
            Some(ErrorCode::LedgerInconsistent)
        );
        assert_eq!(
            found(vec![plain, signed]).error_code(),
            Some(ErrorCode::SignatureInvalid)
        );
    }

    #[test]
    fn a_bom_is_a_warning() {
        let mut bytes = crate::encoding::BOM.to_vec();
        bytes.extend_from_slice(br#"{"issueNumber": 1, "clarifications": []}"#);
        let found = check_file("issue-1.json", &bytes);
        assert!(found.problems.is_empty());
        assert_eq!(found.warnings.len(), 1);
        assert!(found.warnings[0].message.contains("byte order mark"));
    }

    #[test]
    fn a_misfiled_ledger_is_one_problem() {
        let text = br#"{"issueNumber": 7, "clarifications": []}"#;
        let from_bytes = verify_file("issue-1.json", text);
        assert_eq!(from_bytes.len(), 1);
        let ledger = Ledger::parse("x", text, None).unwrap();
        assert_eq!(verify_ledger("issue-1.json", &ledger), from_bytes);
    }

    #[test]
    fn reports_unparseable_files() {
        let p = verify_file("issue-1.json", b"[1,2");
        assert_eq!(p.len(), 1);
        assert!(p[0].id.is_none());
    }
}
