//! Where a workspace's state lives, relative to its root (docs/protocol.md §3), as every store names it:
//! the file store uses these as paths, the memory store as keys, reports as file names.

use agentx_clarify_core::defaults::{CONFIG_TOML, DEFAULT_WORKFLOWS};
use agentx_clarify_core::delegation::DEFAULT_MANIFESTS;
use agentx_clarify_core::ClarifyError;
use serde_json::Value;

use crate::file_map::FileMap;

pub const AGENTX_DIR: &str = ".agentx/";
pub const WORKFLOWS_DIR: &str = ".agentx/workflows/";
pub const STATE_DIR: &str = ".agentx/state/";
pub const CLARIFICATIONS_DIR: &str = ".agentx/state/clarifications/";
/// Capability manifests, `<agent>.toml` (docs/protocol.md §18).
pub const AGENTS_DIR: &str = ".agentx/agents/";
/// Delegation ledgers, `issue-<n>.json` (docs/protocol.md §18).
pub const DELEGATIONS_DIR: &str = ".agentx/state/delegations/";
pub const CONFIG: &str = ".agentx/config.toml";
/// The workspace's people and rotations (docs/protocol.md §37); absent: no people.
pub const PEOPLE: &str = agentx_clarify_core::people::PEOPLE_FILE;
pub const STATUS: &str = ".agentx/state/agent-status.json";
/// Signing keys (docs/protocol.md §16): `<agent>.pub` (public) and `<agent>.key` (private, mode 0600).
pub const KEYS_DIR: &str = ".agentx/keys/";
/// Keeps private keys out of git: `init` and `keys new` write it when it is missing.
pub const KEYS_GITIGNORE: &str = ".agentx/keys/.gitignore";
pub const KEYS_GITIGNORE_TEXT: &str = "# Private signing keys never leave this machine.\n*.key\n";
/// Keeps what stays on this machine out of git: `init`, the first run log and the first
/// state document write it when it is missing (docs/protocol.md §21, docs/security-serve.md).
pub const STATE_GITIGNORE: &str = ".agentx/state/.gitignore";
/// Run logs, and every state document (`<name>.json` beside the statuses file, whose names
/// are lowercase letters and `-`): the tokens' hashes, the sign-in sessions, the outbox,
/// GitHub Mode's cursors and any later one. Ledgers and the statuses file are shared.
pub const STATE_GITIGNORE_TEXT: &str =
    "# What stays on this machine: run logs (prompts and agents' output) and the state\n\
# documents (access tokens' hashes, sign-in sessions, the notification outbox, GitHub\n\
# Mode's cursors). Ledgers and agent-status.json are shared.\n\
runs/\n\
/*.json\n\
!/agent-status.json\n";
/// What an older `agentx` wrote there: replaced by [`STATE_GITIGNORE_TEXT`] when found
/// unchanged (it left the state documents tracked).
pub const STATE_GITIGNORE_OLD_TEXT: &str =
    "# Run logs hold prompts and agents' output: they stay on this machine.\nruns/\n";
/// The statuses file as reports name it.
pub const STATUS_FILE: &str = "agent-status.json";

/// The directories `init` creates, in order.
pub const INIT_DIRS: [&str; 6] = [
    AGENTX_DIR,
    WORKFLOWS_DIR,
    STATE_DIR,
    CLARIFICATIONS_DIR,
    AGENTS_DIR,
    KEYS_DIR,
];
/// The directories a ledger write needs.
pub const STATE_DIRS: [&str; 4] = [AGENTX_DIR, WORKFLOWS_DIR, STATE_DIR, CLARIFICATIONS_DIR];

/// `issue-<n>.json`.
pub fn ledger_name(issue: u32) -> String {
    format!("issue-{issue}.json")
}

/// `.agentx/state/clarifications/issue-<n>.json`.
pub fn ledger_path(issue: u32) -> String {
    format!("{CLARIFICATIONS_DIR}issue-{issue}.json")
}

/// A routing lease's file, next to the ledgers (`MemStore` and the file store alike).
pub fn lease_path(id: &str) -> String {
    format!("{CLARIFICATIONS_DIR}{id}.lease")
}

/// `.agentx/state/delegations/issue-<n>.json`.
pub fn delegation_path(issue: u32) -> String {
    format!("{DELEGATIONS_DIR}issue-{issue}.json")
}

/// `.agentx/agents/<agent>.toml`.
pub fn manifest_path(agent: &str) -> String {
    format!("{AGENTS_DIR}{agent}.toml")
}

/// The files `init` writes when they are missing: the default workflows, the settings, then
/// the example capability manifests of the default agents.
pub fn init_files() -> Vec<(String, &'static str)> {
    let mut files: Vec<(String, &'static str)> = DEFAULT_WORKFLOWS
        .iter()
        .map(|(name, text)| (format!("{WORKFLOWS_DIR}{name}.toml"), *text))
        .collect();
    files.push((CONFIG.to_owned(), CONFIG_TOML));
    files.push((KEYS_GITIGNORE.to_owned(), KEYS_GITIGNORE_TEXT));
    files.push((STATE_GITIGNORE.to_owned(), STATE_GITIGNORE_TEXT));
    files.extend(
        DEFAULT_MANIFESTS
            .iter()
            .map(|(agent, text)| (manifest_path(agent), *text)),
    );
    files
}

/// The files of a conformance vector's `setup` (tests/vectors/README.md): the given workflows
/// (else the defaults of docs/protocol.md §6.2), the settings, the people, the ledgers (objects pretty-printed, strings
/// as their exact bytes) and the statuses.
pub fn setup_files(setup: &Value) -> Result<FileMap, ClarifyError> {
    let bad = |what: &str| ClarifyError::input(format!("setup: {what}"));
    let mut files = FileMap::new();
    match setup.get("workflows") {
        None | Some(Value::Null) => {
            for (name, text) in DEFAULT_WORKFLOWS {
                files.insert(
                    format!("{WORKFLOWS_DIR}{name}.toml"),
                    text.as_bytes().to_vec(),
                );
            }
        }
        Some(Value::Object(map)) => {
            for (name, text) in map {
                let text = text
                    .as_str()
                    .ok_or_else(|| bad(&format!("workflow `{name}` must be TOML text")))?;
                files.insert(
                    format!("{WORKFLOWS_DIR}{name}.toml"),
                    text.as_bytes().to_vec(),
                );
            }
        }
        Some(_) => return Err(bad("`workflows` must be an object of name → TOML text")),
    }
    match setup.get("config") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => {
            files.insert(CONFIG.to_owned(), text.as_bytes().to_vec());
        }
        Some(_) => return Err(bad("`config` must be TOML text")),
    }
    match setup.get("people") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => {
            files.insert(PEOPLE.to_owned(), text.as_bytes().to_vec());
        }
        Some(_) => return Err(bad("`people` must be TOML text")),
    }
    match setup.get("ledgers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, v) in map {
                files.insert(format!("{CLARIFICATIONS_DIR}{name}"), pretty_or_raw(v));
            }
        }
        Some(_) => return Err(bad("`ledgers` must be an object of file name → ledger")),
    }
    match setup.get("agents") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, text) in map {
                let text = text
                    .as_str()
                    .ok_or_else(|| bad(&format!("manifest `{name}` must be TOML text")))?;
                files.insert(manifest_path(name), text.as_bytes().to_vec());
            }
        }
        Some(_) => return Err(bad("`agents` must be an object of agent → manifest TOML")),
    }
    match setup.get("delegations") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, v) in map {
                files.insert(format!("{DELEGATIONS_DIR}{name}"), pretty_or_raw(v));
            }
        }
        Some(_) => {
            return Err(bad(
                "`delegations` must be an object of file name → delegation ledger",
            ))
        }
    }
    match setup.get("keys") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, text) in map {
                let text = text
                    .as_str()
                    .ok_or_else(|| bad(&format!("key file `{name}` must be text")))?;
                files.insert(format!("{KEYS_DIR}{name}"), text.as_bytes().to_vec());
            }
        }
        Some(_) => return Err(bad("`keys` must be an object of file name → key text")),
    }
    if let Some(statuses) = setup.get("statuses").filter(|v| !v.is_null()) {
        files.insert(STATUS.to_owned(), pretty_or_raw(statuses));
    }
    Ok(files)
}

/// A file given as a string is those bytes; anything else is pretty JSON with a newline.
fn pretty_or_raw(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => s.as_bytes().to_vec(),
        other => {
            let mut text = serde_json::to_string_pretty(other).unwrap_or_default();
            text.push('\n');
            text.into_bytes()
        }
    }
}
