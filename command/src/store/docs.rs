//! Named state documents (docs/protocol.md §21): one JSON value each — the notification outbox
//! (`outbox`), GitHub Mode's sync cursors (`github`), `agentx serve`'s access tokens
//! (`tokens`) and sign-in sessions (`sessions`) — kept by the [`State`] side beside the
//! ledgers, so a team whose state is in PostgreSQL shares them as it shares the ledgers. A
//! store keeps text (`.agentx/state/<name>.json`, a row of `agentx.state_docs`, a file in
//! memory); what the text means is read and written here once.

use agentx_clarify_core::{ClarifyError, Config};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::store::State;

/// The notification outbox (docs/protocol.md §25).
pub const OUTBOX: &str = "outbox";
/// GitHub Mode's sync cursors (docs/protocol.md §26).
pub const GITHUB: &str = "github";
/// The access tokens of `agentx serve`, as their hashes (docs/protocol.md §23).
pub const TOKENS: &str = "tokens";
/// The sign-in sessions of `agentx serve`, by the hashes of their cookies (docs/protocol.md
/// §23): every server on the store knows them, and they outlive a restart.
pub const SESSIONS: &str = "sessions";
/// The answer links of notifications, by the hashes of their tokens (docs/protocol.md §35):
/// every server on the store honours them, and the first use wins on all of them.
pub const ANSWER_LINKS: &str = "answer-links";
/// The messages a `slack-app` sink posted, by record: what a decision updates (`chat.update`),
/// on whichever server it was made.
pub const SLACK_MESSAGES: &str = "slack-messages";

/// Whether `name` may name a state document: lowercase letters and `-`, so it is a plain file
/// name in the state directory, never a path.
pub fn is_doc_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
}

/// `name` if it may name a state document, else `INVALID_INPUT`.
pub fn checked_doc(name: &str) -> Result<&str, ClarifyError> {
    if is_doc_name(name) {
        Ok(name)
    } else {
        Err(ClarifyError::input(format!(
            "'{name}' is not a state document's name (lowercase letters and '-')"
        )))
    }
}

/// The workspace path a state document has as a file.
pub fn doc_path(name: &str) -> String {
    format!("{}{name}.json", crate::store::paths::STATE_DIR)
}

fn corrupt(name: &str, e: &serde_json::Error) -> ClarifyError {
    ClarifyError::LedgerCorrupt {
        file: format!("{name}.json"),
        message: e.to_string(),
    }
}

/// State document `name` as a `D` (its default when it was never written). One that does not
/// parse is `LEDGER_CORRUPT` naming it.
pub fn read_json<D: DeserializeOwned + Default, S: State + ?Sized>(
    store: &S,
    name: &str,
) -> Result<D, ClarifyError> {
    match store.read_doc(name)? {
        Some(text) => serde_json::from_str(&text).map_err(|e| corrupt(name, &e)),
        None => Ok(D::default()),
    }
}

/// Read–change–write of state document `name` as a `D` under the store's exclusion; nothing
/// is written when `change` leaves it equal.
pub fn update_json<D, T, S>(
    store: &S,
    name: &str,
    config: &Config,
    agent: &str,
    change: impl FnOnce(&mut D) -> T,
) -> Result<T, ClarifyError>
where
    D: Serialize + DeserializeOwned + Default + Clone + PartialEq,
    S: State + ?Sized,
{
    try_update_json(store, name, config, agent, |doc| Ok(change(doc)))
}

/// [`update_json`] with a change that may refuse: when it fails, nothing is written (whatever
/// it did to the document) and its error is the result.
pub fn try_update_json<D, T, S>(
    store: &S,
    name: &str,
    config: &Config,
    agent: &str,
    change: impl FnOnce(&mut D) -> Result<T, ClarifyError>,
) -> Result<T, ClarifyError>
where
    D: Serialize + DeserializeOwned + Default + Clone + PartialEq,
    S: State + ?Sized,
{
    store.update_doc(name, config, agent, |text| {
        let mut doc: D = match text {
            Some(t) => serde_json::from_str(&t).map_err(|e| corrupt(name, &e))?,
            None => D::default(),
        };
        let before = doc.clone();
        let result = change(&mut doc)?;
        if doc == before {
            return Ok((None, result));
        }
        let text = serde_json::to_string_pretty(&doc).map_err(|e| ClarifyError::Internal {
            message: format!("{name}.json: {e}"),
        })?;
        Ok((Some(format!("{text}\n")), result))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemStore;

    #[test]
    fn a_document_is_written_only_when_it_changes_and_read_back() {
        let store = MemStore::new();
        let config = Config::default();
        let n: Vec<u32> = read_json(&store, "test-doc").unwrap();
        assert!(n.is_empty());
        update_json(&store, "test-doc", &config, "me", |v: &mut Vec<u32>| {
            v.push(7)
        })
        .unwrap();
        assert_eq!(store.file(&doc_path("test-doc")).unwrap(), b"[\n  7\n]\n");
        let before = store.files();
        update_json(&store, "test-doc", &config, "me", |_: &mut Vec<u32>| ()).unwrap();
        assert_eq!(store.files(), before);
        let back: Vec<u32> = read_json(&store, "test-doc").unwrap();
        assert_eq!(back, vec![7]);
        // A refused change writes nothing, even what it changed before refusing.
        let e = try_update_json(&store, "test-doc", &config, "me", |v: &mut Vec<u32>| {
            v.clear();
            Err::<(), _>(ClarifyError::input("no"))
        })
        .unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        assert_eq!(store.files(), before);
        store.put(&doc_path("test-doc"), Some(b"{".to_vec()));
        let e = read_json::<Vec<u32>, _>(&store, "test-doc").unwrap_err();
        assert_eq!(e.code(), "LEDGER_CORRUPT");
        assert!(!is_doc_name("../x") && !is_doc_name("") && is_doc_name("outbox"));
    }
}
