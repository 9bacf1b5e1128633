//! Routing leases on disk (docs/protocol.md §14.2 step 2): `<clarifications>/<id>.lease`, created
//! atomically (create-new) and holding `{"pid", "hostname", "id", "taken", "expires"}` (epoch
//! ms, the system clock — never `--now`, like locks). A lease is live until its expiry, unless
//! its holder is a dead process on this host; a dead lease is broken the way a stale lock is
//! (only if it still holds the bytes judged, one breaker at a time), and the take retried.

use std::path::Path;
use std::path::PathBuf;

use agentx_clarify_command::route::LEASE_MARGIN_MS;
use agentx_clarify_core::names::ClarificationId;
use agentx_clarify_core::ClarifyError;
use serde_json::json;
use serde_json::Value;

use crate::clock::system_now_ms;
use crate::lock::age_ms;
use crate::lock::create_in_place;
use crate::lock::pid_alive;
use crate::lock::this_host;
use crate::read::read_with_metadata;
use crate::DiskStore;

/// A lease this process took: its file and exact bytes.
#[derive(Debug)]
pub struct DiskLease {
    pub(crate) path: PathBuf,
    pub(crate) content: Vec<u8>,
}

impl DiskStore {
    /// The lease file of record `id` (a validated id, so the path cannot escape).
    pub fn lease_path(&self, id: &str) -> Result<PathBuf, ClarifyError> {
        ClarificationId::parse(id)?;
        Ok(self.clarifications_dir().join(format!("{id}.lease")))
    }
}

/// What a lease file says about its holder.
pub(crate) enum Judged {
    Live {
        holder: String,
    },
    /// Dead or expired: these bytes may be broken.
    Dead(Vec<u8>),
    /// Gone meanwhile.
    Absent,
}

/// Reads through the one reader (docs/protocol.md §31): a FIFO or a link where a lease belongs is
/// `IO_ERROR` naming it at once, never a hang. Its age comes from the same `fstat`.
pub(crate) fn judge(path: &Path) -> Result<Judged, ClarifyError> {
    let Some((bytes, meta)) = read_with_metadata(path)? else {
        return Ok(Judged::Absent);
    };
    Ok(judge_bytes(bytes, age_ms(&meta)))
}

fn judge_bytes(bytes: Vec<u8>, age_ms: u64) -> Judged {
    let now = system_now_ms();
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        // Half-written by a holder that died between creating and writing it: judged by age.
        return if age_ms > LEASE_MARGIN_MS {
            Judged::Dead(bytes)
        } else {
            Judged::Live {
                holder: String::from("a router that is starting"),
            }
        };
    };
    let pid = v.get("pid").and_then(Value::as_u64);
    let host = v.get("hostname").and_then(Value::as_str).unwrap_or("");
    let expires = v.get("expires").and_then(Value::as_i64).unwrap_or(0);
    let dead = host == this_host() && pid.is_some_and(|p| !pid_alive(p));
    if dead || now > expires {
        return Judged::Dead(bytes);
    }
    Judged::Live {
        holder: format!(
            "pid {} on {host} until {}",
            pid.map_or_else(|| String::from("?"), |p| p.to_string()),
            agentx_clarify_core::time::format_ms(expires)
        ),
    }
}

/// Creates the lease file as a lock file is created (create-new, never through a link: a
/// link or a FIFO already there is judged, and refused by the reader); `None` if one exists.
pub(crate) fn create(path: &Path, id: &str, ttl_ms: u64) -> Result<Option<Vec<u8>>, ClarifyError> {
    let taken = system_now_ms();
    let content = serde_json::to_vec(&json!({
        "pid": std::process::id(),
        "hostname": this_host(),
        "id": id,
        "taken": taken,
        "expires": taken.saturating_add(i64::try_from(ttl_ms).unwrap_or(i64::MAX)),
    }))
    .unwrap_or_default();
    Ok(create_in_place(path, &content)?.then_some(content))
}
