//! The change feed every state store has (docs/protocol.md §21): an opaque, monotone revision
//! and "what changed since revision R" — the issues whose ledgers (of either kind) changed,
//! and whether the agent statuses did. The MCP server's resource notifications, `agentx
//! serve`'s live pages and the VS Code views use it; nothing above the stores looks at the
//! state's files or tables to learn what changed.
//!
//! A reader holds a cursor ([`State::Cursor`](crate::store::State::Cursor)) at the revision it has seen; each
//! [`State::changes`](crate::store::State::changes) reports what was written after it, once, and moves it on. The memory
//! store counts its writes; the file store compares file stamps (any process's write shows);
//! PostgreSQL numbers every write from one sequence and signals it with `LISTEN/NOTIFY`, so a
//! write made on another machine reaches [`State::wait_changes`](crate::store::State::wait_changes) at once.

use agentx_clarify_core::verify::issue_of_file_name;
use serde::Serialize;

use crate::store::paths;

/// What changed after a cursor's revision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Changed {
    /// The revision the cursor moved to: above every revision reported before.
    pub revision: u64,
    /// The issues whose clarification or delegation ledger changed, ascending, each once.
    pub issues: Vec<u32>,
    /// The agent statuses changed.
    pub statuses: bool,
}

impl Changed {
    /// Adds what a write of the state file at `path` (relative to the workspace root)
    /// changed; files that are not state (settings, run logs) change nothing.
    pub fn add_path(&mut self, path: &str) {
        if path == paths::STATUS {
            self.statuses = true;
            return;
        }
        let name = [paths::CLARIFICATIONS_DIR, paths::DELEGATIONS_DIR]
            .iter()
            .find_map(|dir| path.strip_prefix(dir));
        if let Some(issue) = name
            .and_then(issue_of_file_name)
            .and_then(|n| u32::try_from(n).ok())
        {
            self.issues.push(issue);
        }
    }

    /// Sorts and dedups the issues; `None` when nothing changed.
    pub fn finish(mut self) -> Option<Changed> {
        self.issues.sort_unstable();
        self.issues.dedup();
        (self.statuses || !self.issues.is_empty()).then_some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemStore;
    use crate::store::State;
    use crate::store::Store;

    #[test]
    fn the_memory_store_reports_each_write_once_after_its_revision() {
        let store = MemStore::new();
        store.init().unwrap();
        store.put(&paths::ledger_path(1), Some(b"{}".to_vec()));
        let mut cursor = store.feed().unwrap();
        assert_eq!(store.changes(&mut cursor).unwrap(), None);
        let r0 = store.revision(&cursor);
        // Another writer of the same store (`put` is how one writes).
        store.put(&paths::ledger_path(3), Some(b"{}".to_vec()));
        store.put(
            ".agentx/state/delegations/issue-5.json",
            Some(b"{}".to_vec()),
        );
        store.put(".agentx/config.toml", Some(Vec::new()));
        let c = store.changes(&mut cursor).unwrap().unwrap();
        assert_eq!((c.issues, c.statuses), (vec![3, 5], false));
        assert!(c.revision > r0);
        assert_eq!(store.changes(&mut cursor).unwrap(), None);
        store.put(paths::STATUS, Some(b"{}".to_vec()));
        store.put(&paths::ledger_path(1), None);
        let d = store.changes(&mut cursor).unwrap().unwrap();
        assert_eq!((d.issues, d.statuses), (vec![1], true));
        assert!(d.revision > c.revision);
        assert_eq!(store.revision(&cursor), d.revision);
        assert_eq!(store.changes(&mut cursor).unwrap(), None);
    }

    #[test]
    fn state_paths_name_their_issue_or_the_statuses() {
        let mut c = Changed::default();
        c.add_path(".agentx/state/clarifications/issue-7.json");
        c.add_path(".agentx/state/delegations/issue-3.json");
        c.add_path(".agentx/state/clarifications/issue-7.json");
        c.add_path(".agentx/config.toml");
        c.add_path(".agentx/state/runs/CLR-7-001.r1.1.json");
        let c = c.finish().unwrap();
        assert_eq!(c.issues, vec![3, 7]);
        assert!(!c.statuses);
        let mut s = Changed::default();
        s.add_path(paths::STATUS);
        assert!(s.finish().unwrap().statuses);
        assert_eq!(Changed::default().finish(), None);
    }
}
