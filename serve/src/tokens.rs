//! Access tokens (docs/protocol.md §23): `axt_` + 32 random bytes (base64url), shown once; the state store
//! keeps only their SHA-256 with a name, a kind (`human` or `agent`), when it was made and when
//! it was last used. A presented token is hashed and compared in constant time with each
//! stored hash, so neither the comparison nor a lookup order leaks how much of it matched.

use std::path::{Path, PathBuf};

use agentx_clarify_core::names::check_agent;
use agentx_clarify_core::time::format_ms;
use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::{read_into, write_atomic, FileLock, LockPolicy};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Where the file store keeps the token hashes (mode 0600).
pub const TOKENS_FILE: &str = ".agentx/state/tokens.json";
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
}

impl Token {
    /// What `tokens list --json` shows (no hash either: it is useless to a reader).
    pub fn listed(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "kind": self.kind.as_str(),
            "created": format_ms(self.created),
            "lastUsed": self.last_used.map(format_ms),
        })
    }
}

#[derive(Default, Serialize, Deserialize)]
struct TokensFile {
    tokens: Vec<Token>,
}

/// Where tokens are kept: the file workspace's `tokens.json`, or PostgreSQL's
/// `agentx.tokens`.
pub trait TokenStore: Send + Sync {
    fn load(&self) -> Result<Vec<Token>, ClarifyError>;
    /// Read–change–write under the store's lock.
    fn update(
        &self,
        change: &mut dyn FnMut(&mut Vec<Token>) -> Result<(), ClarifyError>,
    ) -> Result<(), ClarifyError>;
}

/// `.agentx/state/tokens.json` under the workspace's lock discipline: the one reader (no
/// symlinks, regular files only), the cross-process lock, atomic replacement, mode 0600.
pub struct FileTokens {
    path: PathBuf,
}

impl FileTokens {
    pub fn new(root: &Path) -> Self {
        FileTokens {
            path: root.join(TOKENS_FILE),
        }
    }

    fn read(&self) -> Result<Vec<Token>, ClarifyError> {
        if std::fs::symlink_metadata(&self.path).is_err() {
            return Ok(Vec::new());
        }
        let mut buf = Vec::new();
        read_into(&self.path, &mut buf)?;
        let file: TokensFile = serde_json::from_slice(&buf).map_err(|e| ClarifyError::Io {
            message: format!("{} is not a tokens file: {e}", self.path.display()),
        })?;
        Ok(file.tokens)
    }

    fn write(&self, tokens: Vec<Token>) -> Result<(), ClarifyError> {
        let mut text = serde_json::to_string_pretty(&TokensFile { tokens }).map_err(|e| {
            ClarifyError::Internal {
                message: e.to_string(),
            }
        })?;
        text.push('\n');
        // A new file is created owner-only first: write_atomic keeps an existing file's mode.
        if std::fs::symlink_metadata(&self.path).is_err() {
            create_private(&self.path)?;
        }
        write_atomic(&self.path, text.as_bytes())?;
        set_private(&self.path)
    }
}

impl TokenStore for FileTokens {
    fn load(&self) -> Result<Vec<Token>, ClarifyError> {
        self.read()
    }

    fn update(
        &self,
        change: &mut dyn FnMut(&mut Vec<Token>) -> Result<(), ClarifyError>,
    ) -> Result<(), ClarifyError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(ClarifyError::Io {
                message: format!("{} does not exist: run `agentx init` first", dir.display()),
            });
        }
        let policy = LockPolicy {
            timeout_ms: 10_000,
            stale_ms: 30_000,
        };
        let _lock = FileLock::acquire(&self.path, "agentx-tokens", policy)?;
        let mut tokens = self.read()?;
        change(&mut tokens)?;
        self.write(tokens)
    }
}

/// The tokens of a workspace whose state is in PostgreSQL (`agentx.tokens`).
pub struct PgTokens {
    store: agentx_clarify_store_any::PgStore,
}

fn from_rows(rows: Vec<Value>) -> Result<Vec<Token>, ClarifyError> {
    rows.into_iter()
        .map(|v| {
            serde_json::from_value(v).map_err(|e| ClarifyError::Io {
                message: format!("a stored token is not a token entry: {e}"),
            })
        })
        .collect()
}

fn to_rows(tokens: &[Token]) -> Vec<Value> {
    tokens
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect()
}

impl TokenStore for PgTokens {
    fn load(&self) -> Result<Vec<Token>, ClarifyError> {
        from_rows(self.store.load_tokens()?)
    }

    fn update(
        &self,
        change: &mut dyn FnMut(&mut Vec<Token>) -> Result<(), ClarifyError>,
    ) -> Result<(), ClarifyError> {
        self.store.update_tokens(&mut |rows| {
            let mut tokens = from_rows(std::mem::take(rows))?;
            change(&mut tokens)?;
            *rows = to_rows(&tokens);
            Ok(())
        })
    }
}

/// The token store of the workspace at `root`: where its state is (files or PostgreSQL).
pub fn open(root: &Path) -> Result<Box<dyn TokenStore>, ClarifyError> {
    Ok(match agentx_clarify_store_any::location(root)? {
        agentx_clarify_store_any::Location::Files => Box::new(FileTokens::new(root)),
        agentx_clarify_store_any::Location::Postgres(url) => Box::new(PgTokens {
            store: agentx_clarify_store_any::PgStore::open(&url)?,
        }),
    })
}

fn create_private(path: &Path) -> Result<(), ClarifyError> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc_nofollow())
        .open(path)
        .map(|_| ())
        .map_err(|e| ClarifyError::Io {
            message: format!("cannot create {}: {e}", path.display()),
        })
}

/// `O_NOFOLLOW` on Linux and the BSDs (a link planted at the path is refused, docs/protocol.md §31).
fn libc_nofollow() -> i32 {
    #[cfg(target_os = "linux")]
    {
        0o400_000
    }
    #[cfg(not(target_os = "linux"))]
    {
        0x0100
    }
}

fn set_private(path: &Path) -> Result<(), ClarifyError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|e| {
        ClarifyError::Io {
            message: format!("cannot make {} private: {e}", path.display()),
        }
    })
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
    store: &dyn TokenStore,
    kind: Kind,
    name: &str,
    now: i64,
) -> Result<(Token, String), ClarifyError> {
    check_agent(name)?;
    let secret = format!("{PREFIX}{}", random_text(32)?);
    let id = format!("tok_{}", random_text(6)?);
    let token = Token {
        id,
        name: name.to_owned(),
        kind,
        sha256: sha256_hex(&secret),
        created: now,
        last_used: None,
    };
    let stored = token.clone();
    store.update(&mut |tokens| {
        if tokens.iter().any(|t| t.name == stored.name) {
            return Err(ClarifyError::input(format!(
                "a token named '{}' exists; revoke it first (`agentx tokens revoke {}`)",
                stored.name, stored.name
            )));
        }
        tokens.push(stored.clone());
        Ok(())
    })?;
    Ok((token, secret))
}

/// Removes the token with this id or name; `NOT_FOUND` when none has it.
pub fn revoke(store: &dyn TokenStore, which: &str) -> Result<Token, ClarifyError> {
    let mut removed = None;
    store.update(&mut |tokens| {
        if let Some(i) = tokens.iter().position(|t| t.id == which || t.name == which) {
            removed = Some(tokens.remove(i));
        }
        Ok(())
    })?;
    removed.ok_or_else(|| {
        ClarifyError::input(format!(
            "no token has the name or id '{}'",
            crate::shown(which)
        ))
    })
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
pub fn touch(store: &dyn TokenStore, id: &str, last_used: Option<i64>, now: i64) {
    if last_used.is_some_and(|t| now - t < 60_000) {
        return;
    }
    let _ = store.update(&mut |tokens| {
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
        std::fs::create_dir_all(dir.path().join(".agentx/state")).unwrap();
        let store = FileTokens::new(dir.path());
        let (t, secret) = new_token(&store, Kind::Human, "alice", 1_000).unwrap();
        assert!(secret.starts_with("axt_"));
        assert_eq!(secret.len(), 4 + 43);
        let text = std::fs::read_to_string(dir.path().join(TOKENS_FILE)).unwrap();
        assert!(!text.contains(&secret));
        assert!(text.contains(&t.sha256));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(TOKENS_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let all = store.load().unwrap();
        assert_eq!(find(&all, &secret).unwrap().name, "alice");
        assert!(find(&all, "axt_nope").is_none());
        assert_eq!(
            new_token(&store, Kind::Agent, "alice", 2)
                .unwrap_err()
                .code(),
            "INVALID_INPUT"
        );
        revoke(&store, "alice").unwrap();
        assert!(find(&store.load().unwrap(), &secret).is_none());
        assert_eq!(revoke(&store, "alice").unwrap_err().code(), "INVALID_INPUT");
    }
}
