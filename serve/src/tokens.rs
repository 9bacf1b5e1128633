//! Access tokens (docs/protocol.md §23): `axt_` + 32 random bytes (base64url), shown once; the state store
//! keeps only their SHA-256 with a name, a kind (`human` or `agent`), when it was made and when
//! it was last used. A presented token is hashed and compared in constant time with each
//! stored hash, so neither the comparison nor a lookup order leaks how much of it matched.
//!
//! They are the `tokens` state document (docs/protocol.md §21) of whichever store holds the
//! workspace's state — `.agentx/state/tokens.json` (owner-only, as every state document) or a
//! row of PostgreSQL's `agentx.state_docs` — read and changed through the store's `State`
//! side like the outbox, so this module decides only what a token is.

use std::path::Path;
use std::sync::Arc;

use agentx_clarify_command::store::docs::{self, TOKENS};
use agentx_clarify_command::{paths, Files as _};
use agentx_clarify_core::names::check_agent;
use agentx_clarify_core::time::format_ms;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store_any::AnyState;
use agentx_clarify_workspace::Workspace;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The prefix of every token (so a leaked one is recognisable by secret scanners).
pub const PREFIX: &str = "axt_";

/// Who a token speaks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A person: the inbox, `/api/v1`.
    Human,
    /// An agent: `/mcp`, A2A (never the inbox or `/api/v1`).
    Agent,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Human => "human",
            Kind::Agent => "agent",
        }
    }
}

/// One stored token: never the secret, only its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Token {
    pub id: String,
    pub name: String,
    pub kind: Kind,
    /// Lowercase hex SHA-256 of the whole token text.
    pub sha256: String,
    /// Epoch ms.
    pub created: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<i64>,
    /// The person who runs an agent's client (`tokens new --agent engineer --operator
    /// alice`, docs/protocol.md §37): MCP elicitation puts a record assigned to people to
    /// that client only when they are among its deciders, and records the decision as theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
}

impl Token {
    /// What `tokens list --json` shows (no hash either: it is useless to a reader).
    pub fn listed(&self) -> Value {
        let mut v = json!({
            "id": self.id,
            "name": self.name,
            "kind": self.kind.as_str(),
            "created": format_ms(self.created),
            "lastUsed": self.last_used.map(format_ms),
        });
        if let (Some(o), Some(m)) = (&self.operator, v.as_object_mut()) {
            m.insert("operator".into(), o.clone().into());
        }
        v
    }
}

/// The `tokens` document: `{"tokens": [...]}`, in the order they were made.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
struct TokensDoc {
    tokens: Vec<Token>,
}

/// Who holds the lock while the tokens change (the file store's lock file names it).
const LOCK_OWNER: &str = "agentx-tokens";

/// The tokens of a workspace, in whichever store holds its state.
pub struct Tokens {
    ws: Arc<Workspace>,
    /// The file store's tokens as last read, by the stamp of `tokens.json`: every request
    /// looks them up, and a `stat` is cheaper than a read and a parse (issue 42). Written
    /// only by replacing the file, so a change always moves its inode.
    cached: std::sync::Mutex<Option<(FileStamp, Vec<Token>)>>,
}

/// A file's inode, size and change time: what moves when it is replaced or written.
type FileStamp = (u64, u64, i64, i64);

fn file_stamp(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.ino(), m.len(), m.ctime(), m.ctime_nsec()))
}

impl Tokens {
    /// The tokens of the workspace `ws` (the server's, or the one `agentx tokens` opened).
    pub fn new(ws: Arc<Workspace>) -> Tokens {
        Tokens {
            ws,
            cached: std::sync::Mutex::new(None),
        }
    }

    /// Every stored token, in the order they were made (none when none was ever made).
    pub fn load(&self) -> Result<Vec<Token>, ClarifyError> {
        let store = self.ws.store()?;
        // PostgreSQL's row is read each time: another server may have changed it, and no
        // stamp of it comes cheaper than the read.
        let stamp = match &store.state {
            AnyState::Disk(disk) => file_stamp(&disk.path(&docs::doc_path(TOKENS))),
            _ => None,
        };
        let mut cached = self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let (Some(now), Some((then, tokens))) = (stamp, cached.as_ref()) {
            if now == *then {
                return Ok(tokens.clone());
            }
        }
        let doc: TokensDoc = docs::read_json(&*store, TOKENS)?;
        // Stamped before the read: a write in between is kept under the older stamp, so the
        // next look reads again (stamped after, it would hide that write for good).
        *cached = stamp.map(|s| (s, doc.tokens.clone()));
        Ok(doc.tokens)
    }

    /// Read–change–write of the tokens under the store's exclusion (two servers or two
    /// `agentx tokens` never lose each other's change); nothing is written when `change`
    /// fails or leaves them as they were.
    pub fn update<T>(
        &self,
        change: impl FnOnce(&mut Vec<Token>) -> Result<T, ClarifyError>,
    ) -> Result<T, ClarifyError> {
        let store = self.ws.store()?;
        // The file store would make the state directory; a token for a workspace that does
        // not exist yet is a mistake worth naming instead.
        if let AnyState::Disk(disk) = &store.state {
            let dir = disk.path(paths::STATE_DIR);
            if !dir.is_dir() {
                return Err(ClarifyError::Io {
                    message: format!("{} does not exist: run `agentx init` first", dir.display()),
                });
            }
        }
        let config = store.load_config()?;
        docs::try_update_json(
            &*store,
            TOKENS,
            &config,
            LOCK_OWNER,
            |doc: &mut TokensDoc| change(&mut doc.tokens),
        )
    }

    /// Revokes the open answer links sent to the person `name`, in the same store.
    fn revoke_links(&self, name: &str, now: i64) -> Result<usize, ClarifyError> {
        let store = self.ws.store()?;
        let config = store.load_config()?;
        agentx_clarify_notify::links::revoke_person(&*store, &config, name, now)
    }
}

/// The tokens of the workspace at `root` for one command (`agentx tokens`): where its state
/// is (files or PostgreSQL), as its settings say.
pub fn open(root: &Path) -> Result<Tokens, ClarifyError> {
    Ok(Tokens::new(Arc::new(agentx_clarify_a2a::open_workspace(
        root,
    )?)))
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `n` random bytes from the OS, base64url without padding.
pub fn random_text(n: usize) -> Result<String, ClarifyError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| ClarifyError::Io {
        message: format!("cannot draw random bytes: {e}"),
    })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Constant-time equality of two texts (their lengths are not secret).
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Makes a token for `name`: stores its hash, returns the stored entry and the secret (to
/// print once).
pub fn new_token(
    store: &Tokens,
    kind: Kind,
    name: &str,
    operator: Option<&str>,
    now: i64,
) -> Result<(Token, String), ClarifyError> {
    check_agent(name)?;
    if let Some(o) = operator {
        check_agent(o)?;
        if kind != Kind::Agent {
            return Err(ClarifyError::input(
                "--operator names who runs an agent's client: it goes with --agent",
            ));
        }
    }
    // `human`, `monitor` and `agent-x` are the hub's own actors (docs/protocol.md §2): a
    // token acting as one would write entries nobody can tell from the hub's (issue 48).
    if agentx_clarify_core::names::is_reserved(name) {
        return Err(ClarifyError::input(format!(
            "'{name}' is reserved for the hub's own entries: a token cannot be named so"
        )));
    }
    let secret = format!("{PREFIX}{}", random_text(32)?);
    let id = format!("tok_{}", random_text(6)?);
    let token = Token {
        id,
        name: name.to_owned(),
        kind,
        sha256: sha256_hex(&secret),
        created: now,
        last_used: None,
        operator: operator.map(str::to_owned),
    };
    let stored = token.clone();
    store.update(|tokens| {
        if tokens.iter().any(|t| t.name == stored.name) {
            return Err(ClarifyError::input(format!(
                "a token named '{}' exists; revoke it first (`agentx tokens revoke {}`)",
                stored.name, stored.name
            )));
        }
        tokens.push(stored);
        Ok(())
    })?;
    Ok((token, secret))
}

/// What revoking a token did.
#[derive(Debug)]
pub struct Revoked {
    pub token: Token,
    /// A person's token: how many of their open answer links were revoked with it (none for
    /// an agent's token: no link is sent to an agent).
    pub links: Option<usize>,
}

/// Removes the token with this id or name (`INVALID_INPUT` when none has it); a person's
/// token takes their open answer links (docs/protocol.md §35) with it.
pub fn revoke(store: &Tokens, which: &str, now: i64) -> Result<Revoked, ClarifyError> {
    let missing = || {
        ClarifyError::input(format!(
            "no token has the name or id '{}'",
            agentx_clarify_core::error::shown(which)
        ))
    };
    let found = store
        .load()?
        .into_iter()
        .find(|t| t.id == which || t.name == which)
        .ok_or_else(missing)?;
    // The links go first: were the token removed first and the links' write then failed, a
    // retry would find no token left to name the person by, and their links would stay open.
    let links = match found.kind {
        Kind::Human => Some(store.revoke_links(&found.name, now)?),
        Kind::Agent => None,
    };
    let removed = store.update(|tokens| {
        Ok(tokens
            .iter()
            .position(|t| t.id == found.id)
            .map(|i| tokens.remove(i)))
    })?;
    let token = removed.ok_or_else(missing)?;
    Ok(Revoked { token, links })
}

/// The stored token a presented secret matches. Every stored hash is compared (constant
/// time each), so the time taken does not depend on which one matched.
pub fn find(tokens: &[Token], presented: &str) -> Option<Token> {
    if !presented.starts_with(PREFIX) {
        return None;
    }
    let hash = sha256_hex(presented);
    let mut found = None;
    for t in tokens {
        if same_secret(&t.sha256, &hash) {
            found = Some(t.clone());
        }
    }
    found
}

/// Records a use at most once a minute (a write per request would serialise requests).
pub fn touch(store: &Tokens, id: &str, last_used: Option<i64>, now: i64) {
    if last_used.is_some_and(|t| now - t < 60_000) {
        return;
    }
    let _ = store.update(|tokens| {
        if let Some(t) = tokens.iter_mut().find(|t| t.id == id) {
            t.last_used = Some(now);
        }
        Ok(())
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_stored_only_as_its_hash_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path()).unwrap();
        // No workspace: say what to do rather than make one.
        let e = new_token(&store, Kind::Human, "alice", None, 1_000).unwrap_err();
        assert!(e.to_string().contains("run `agentx init` first"), "{e}");
        assert!(!dir.path().join(".agentx").exists());
        std::fs::create_dir_all(dir.path().join(".agentx/state")).unwrap();
        let (t, secret) = new_token(&store, Kind::Human, "alice", None, 1_000).unwrap();
        assert!(secret.starts_with("axt_"));
        assert_eq!(secret.len(), 4 + 43);
        let path = dir.path().join(docs::doc_path(TOKENS));
        assert!(path.ends_with(".agentx/state/tokens.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&secret));
        assert!(text.contains(&t.sha256));
        // The file's shape is what it always was: `{"tokens": [...]}`, pretty, one newline.
        let expected = serde_json::to_string_pretty(&json!({"tokens": [t]})).unwrap() + "\n";
        assert_eq!(text, expected);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let all = store.load().unwrap();
        assert_eq!(find(&all, &secret).unwrap().name, "alice");
        assert!(find(&all, "axt_nope").is_none());
        assert_eq!(
            new_token(&store, Kind::Agent, "alice", None, 2)
                .unwrap_err()
                .code(),
            "INVALID_INPUT"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        touch(&store, &t.id, None, 5_000);
        assert_eq!(store.load().unwrap()[0].last_used, Some(5_000));
        let revoked = revoke(&store, "alice", 6_000).unwrap();
        assert_eq!((revoked.token.id, revoked.links), (t.id, Some(0)));
        assert!(find(&store.load().unwrap(), &secret).is_none());
        assert_eq!(
            revoke(&store, "alice", 6_000).unwrap_err().code(),
            "INVALID_INPUT"
        );
    }
}
