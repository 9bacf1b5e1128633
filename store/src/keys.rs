//! Keys on disk (docs/protocol.md §16): `.agentx/keys/<agent>.pub` and `<agent>.key`. A private key file
//! must be readable by its owner only (mode 0600, as `keys new` writes it): one that others
//! may read is refused by name, so a leaked key is noticed instead of used. Key files are
//! never followed through symlinks and never replaced.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use agentx_clarify_command::store::keys::key_error;
use agentx_clarify_command::store::keys::KeyHalf;
use agentx_clarify_core::ClarifyError;

use crate::io_error;
use crate::read::read_with_metadata;

/// 32 bytes from the operating system's random source: the seed of a new key.
pub fn random_seed() -> Result<[u8; 32], ClarifyError> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| ClarifyError::Io {
        message: format!("cannot draw random bytes for a key: {e}"),
    })?;
    Ok(seed)
}

/// A new random UUID v4 (RFC 9562), lowercase: a Layer 4 session id.
pub fn new_uuid_v4() -> Result<String, ClarifyError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| ClarifyError::Io {
        message: format!("cannot draw random bytes for a session id: {e}"),
    })?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

/// `check`'s JSON input with a new `newSessionId` when its plan names no session and none was
/// given, for the shells that call the JSON ops (the MCP server, the Node store); None: use
/// the input as it is.
pub fn with_new_session(op: &str, input: &serde_json::Value) -> Option<serde_json::Value> {
    let absent = |v: Option<&serde_json::Value>| v.is_none_or(serde_json::Value::is_null);
    let needs = op == "check"
        && absent(input.pointer("/plan/session_id"))
        && absent(input.get("newSessionId"));
    if !needs {
        return None;
    }
    let id = new_uuid_v4().ok()?;
    let mut out = input.clone();
    if let serde_json::Value::Object(m) = &mut out {
        m.insert("newSessionId".into(), serde_json::Value::from(id));
    }
    Some(out)
}

/// Creates `path` with `text` and `mode` (exclusively: an existing file is an error), synced.
pub(crate) fn create_new(path: &Path, text: &str, mode: u32) -> Result<(), ClarifyError> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| io_error("create", path, &e))?;
    // The umask may have taken bits the mode asked for; a private key needs none added.
    file.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| io_error("set the permissions of", path, &e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| io_error("write", path, &e))?;
    file.sync_all().map_err(|e| io_error("sync", path, &e))
}

/// A key file's bytes; a private one must be readable by its owner only.
pub(crate) fn read_key(path: &Path, agent: &str, half: KeyHalf) -> Result<Vec<u8>, ClarifyError> {
    let (bytes, meta) = read_with_metadata(path)?
        .ok_or_else(|| key_error(agent, half, "the file disappeared while the keys were read"))?;
    let mode = meta.permissions().mode() & 0o777;
    if half == KeyHalf::Secret && mode & 0o077 != 0 {
        return Err(key_error(
            agent,
            half,
            format!(
                "a private key must be readable by its owner only, but its mode is {mode:04o}; run `chmod 600 {}`",
                path.display()
            ),
        ));
    }
    Ok(bytes)
}
