//! One-time sign-in links for a named person (docs/protocol.md §23 "Signing in on a phone"):
//! `agentx tokens link --human alice`, or the inbox's "Sign-in link" button, mints one so a
//! lead can open the inbox on a phone from a link sent to themselves, without pasting a
//! 47-character token. A link works once, for 10 minutes, and is shown once: the store keeps
//! only the SHA-256 of its code, in the `sign-in-links` state document (a file owner-only, or
//! a row of PostgreSQL's `agentx.state_docs`), so every server on the store honours it and a
//! reader of the store can use none. Redeeming removes it under the store's lock: two servers
//! cannot both accept one code.

use std::path::Path;
use std::sync::Arc;

use agentx_clarify_command::store::docs;
use agentx_clarify_command::Files as _;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_workspace::Workspace;
use serde::{Deserialize, Serialize};

use crate::tokens::{random_text, same_secret, sha256_hex};

/// The state document of the links.
pub const LINKS: &str = "sign-in-links";
/// How long a link works.
pub const LINK_FOR_MS: i64 = 10 * 60 * 1000;
/// Who holds the lock while the links change.
const LOCK_OWNER: &str = "agentx-sign-in-links";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    sha256: String,
    human: String,
    /// Epoch ms.
    expires: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct LinksDoc {
    #[serde(default)]
    links: Vec<Stored>,
}

/// The sign-in links of a workspace, in whichever store holds its state.
pub struct Links {
    ws: Arc<Workspace>,
}

/// A link just minted: its code (to put in the URL once) and when it stops working.
pub struct Minted {
    pub code: String,
    pub expires: i64,
}

impl Links {
    /// The links of the workspace `ws` (the server's, or the one `agentx tokens link` opened).
    pub fn new(ws: Arc<Workspace>) -> Links {
        Links { ws }
    }

    /// The links of the workspace at `root`, for one command.
    pub fn open(root: &Path) -> Result<Links, ClarifyError> {
        Ok(Links::new(Arc::new(agentx_clarify_a2a::open_workspace(
            root,
        )?)))
    }

    fn update<T>(
        &self,
        change: impl FnOnce(&mut LinksDoc) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let store = self.ws.store()?;
        let config = store.load_config()?;
        docs::try_update_json(&*store, LINKS, &config, LOCK_OWNER, change)
    }

    /// A new link for `human`, working until `now + 10 min`; expired ones are swept.
    pub fn mint(&self, human: &str, now: i64) -> Result<Minted, ClarifyError> {
        agentx_clarify_core::names::check_agent(human)?;
        // The hub's own actors are nobody's to sign in as (issue 48).
        if agentx_clarify_core::names::is_reserved(human) {
            return Err(ClarifyError::input(format!(
                "'{human}' is reserved for the hub's own entries: nobody signs in as it"
            )));
        }
        let code = random_text(24)?;
        let expires = now + LINK_FOR_MS;
        let stored = Stored {
            sha256: sha256_hex(&code),
            human: human.to_owned(),
            expires,
        };
        self.update(|doc| {
            doc.links.retain(|l| l.expires > now);
            doc.links.push(stored);
            Ok(())
        })?;
        Ok(Minted { code, expires })
    }

    /// Uses `code`: the person it signs in, once (it is removed), `None` when it is unknown,
    /// used or expired.
    pub fn redeem(&self, code: &str, now: i64) -> Result<Option<String>, ClarifyError> {
        let hash = sha256_hex(code);
        self.update(|doc| {
            let found = doc
                .links
                .iter()
                .position(|l| same_secret(&l.sha256, &hash) && l.expires > now);
            let human = found.map(|i| doc.links.remove(i).human);
            doc.links.retain(|l| l.expires > now);
            Ok(human)
        })
    }
}

/// The URL of a link: `<origin>/login?once=<code>`.
pub fn url(origin: &str, code: &str) -> String {
    format!("{}/login?once={code}", origin.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_works_once_and_only_in_time() {
        let dir = std::env::temp_dir().join(format!("agentx-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".agentx/state")).unwrap_or_default();
        let Ok(links) = Links::open(&dir) else {
            unreachable!("a store opens on a fresh directory")
        };
        let t0 = 1_795_341_600_000;
        let a = links
            .mint("alice", t0)
            .unwrap_or_else(|e| unreachable!("{e}"));
        let b = links
            .mint("bob", t0)
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(
            links.redeem(&a.code, t0 + 1).ok().flatten().as_deref(),
            Some("alice")
        );
        assert_eq!(
            links.redeem(&a.code, t0 + 2).ok().flatten(),
            None,
            "single use"
        );
        assert_eq!(
            links.redeem(&b.code, t0 + LINK_FOR_MS).ok().flatten(),
            None,
            "expired"
        );
        assert_eq!(links.redeem("not-a-code", t0).ok().flatten(), None);
        assert!(links.mint("Not A Name", t0).is_err());
        // Only hashes are kept.
        let text = std::fs::read_to_string(dir.join(".agentx/state/sign-in-links.json"))
            .unwrap_or_default();
        assert!(!text.contains(&b.code));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
