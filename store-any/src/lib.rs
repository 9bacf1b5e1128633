//! # agentx-clarify-store-any
//!
//! Where "the workspace's store" is (docs/protocol.md §19), decided in one place: in
//! PostgreSQL when `AGENTX_STORE` names a `postgres://` URL, or else when the settings' `[store]
//! url` does; otherwise in the workspace's files. The variable wins, so one checkout can be
//! pointed at another database (or, with `AGENTX_STORE=file`, at its files) without editing
//! the shared config. The settings themselves are read by the workspace handle
//! (`agentx-clarify-workspace`), which hands the configured URL to [`location_with`].
//!
//! [`AnyStore`] is a files side joined to [`AnyState`], the state wherever it is (as sqlx's
//! `Any` picks a database driver at run time).
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod any;
pub mod transfer;

use std::path::Path;
use std::sync::Arc;

use agentx_clarify_core::config::is_postgres_url;
use agentx_clarify_core::ClarifyError;

pub use agentx_clarify_pg::{describe, watch, PgStore};
pub use agentx_clarify_store::DiskStore;
pub use any::{AnyCursor, AnyLease, AnyState, AnyStore};

/// The environment variable that names the store, ahead of the config file.
pub const STORE_ENV: &str = "AGENTX_STORE";

/// Where a workspace's state lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// `.agentx/state/` under the workspace root.
    Files,
    /// A PostgreSQL database (libpq URL).
    Postgres(String),
}

/// The value of `AGENTX_STORE`, as [`location_with`] takes it.
pub fn store_env() -> Option<String> {
    std::env::var(STORE_ENV).ok()
}

/// Bounds this process's waits on PostgreSQL (`[store] timeout_ms`, docs/protocol.md §32).
pub fn set_pg_timeout_ms(ms: u64) {
    agentx_clarify_pg::set_timeout_ms(ms);
}

/// Where a workspace's state lives: `env` (the value of `AGENTX_STORE`: a `postgres://` URL,
/// or `file`), else `configured` (its settings' `[store] url`, already checked to be a
/// PostgreSQL URL), else its files.
pub fn location_with(
    env: Option<&str>,
    configured: Option<&str>,
) -> Result<Location, ClarifyError> {
    match env.map(str::trim) {
        None | Some("") => {}
        Some("file" | "files") => return Ok(Location::Files),
        Some(url) if is_postgres_url(url) => return Ok(Location::Postgres(url.to_owned())),
        Some(other) => {
            // Never echo the value: it may hold a password.
            let scheme = other.split(':').next().unwrap_or_default();
            return Err(ClarifyError::input(format!(
                "{STORE_ENV} must be a postgres:// or postgresql:// URL, or `file`; found a value starting '{}'",
                scheme.chars().take(12).collect::<String>()
            )));
        }
    }
    Ok(match configured {
        Some(url) => Location::Postgres(url.to_owned()),
        None => Location::Files,
    })
}

/// The state of the workspace at `root`, at `location`.
pub fn open_state(root: &Path, location: &Location) -> Result<AnyState, ClarifyError> {
    Ok(match location {
        Location::Files => AnyState::Disk(Arc::new(DiskStore::new(root))),
        Location::Postgres(url) => AnyState::Pg(Arc::new(PgStore::open(url)?)),
    })
}

/// The store of the workspace at `root`, its state at `location`, its files the directory's
/// own (tests and tools; the shells open the workspace handle, which reads the settings
/// once).
pub fn open_at(root: &Path, location: Location) -> Result<AnyStore, ClarifyError> {
    Ok(AnyStore {
        files: DiskStore::new(root),
        state: open_state(root, &location)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_over_the_settings() {
        let hub = "postgres://a@/hub?host=/tmp/x";
        assert_eq!(location_with(None, None).unwrap(), Location::Files);
        assert_eq!(
            location_with(None, Some(hub)).unwrap(),
            Location::Postgres(hub.into())
        );
        assert_eq!(
            location_with(Some(""), Some(hub)).unwrap(),
            Location::Postgres(hub.into())
        );
        assert_eq!(
            location_with(Some("file"), Some(hub)).unwrap(),
            Location::Files
        );
        assert_eq!(
            location_with(Some("postgresql://b@db/hub"), Some(hub)).unwrap(),
            Location::Postgres("postgresql://b@db/hub".into())
        );
        let e = location_with(Some("mysql://u:secret@x/db"), None).unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        assert!(!e.to_string().contains("secret"), "{e}");
    }
}
