//! # agentx-clarify-store-any
//!
//! The one place that opens "the workspace's store" (docs/protocol.md §19), so no shell repeats the
//! choice: the CLI, the MCP server (through the function the CLI hands it) and the Node binding
//! all call [`open`]. A workspace's state is in PostgreSQL when `AGENTX_STORE` names a
//! `postgres://` URL, or else when `.agentx/config.toml` has `[store] url = "postgres://…"`;
//! otherwise in its files. The variable wins, so one checkout can be pointed at another
//! database (or, with `AGENTX_STORE=file`, at its files) without editing the shared config.
//!
//! [`AnyStore`] is the workspace directory's files joined to [`AnyState`], the state wherever
//! it is (as sqlx's `Any` picks a database driver at run time).
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

/// Where the state of the workspace at `root` lives: `AGENTX_STORE` (a `postgres://` URL, or
/// `file`), else `[store] url` of its config, else its files.
pub fn location(root: &Path) -> Result<Location, ClarifyError> {
    let location = location_with(root, std::env::var(STORE_ENV).ok().as_deref())?;
    if matches!(location, Location::Postgres(_)) {
        // `[store] timeout_ms` bounds this process's waits on the database (docs/protocol.md
        // §32): connecting, a write's statements, a server request.
        agentx_clarify_pg::set_timeout_ms(DiskStore::new(root).store_timeout_ms()?);
    }
    Ok(location)
}

/// [`location`] with the variable's value given (tests, and shells that read it themselves).
pub fn location_with(root: &Path, env: Option<&str>) -> Result<Location, ClarifyError> {
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
    Ok(match DiskStore::new(root).store_url()? {
        Some(url) => Location::Postgres(url),
        None => Location::Files,
    })
}

/// The store of the workspace at `root`.
pub fn open(root: &Path) -> Result<AnyStore, ClarifyError> {
    open_at(root, location(root)?)
}

/// The store of the workspace at `root`, its state at `location`.
pub fn open_at(root: &Path, location: Location) -> Result<AnyStore, ClarifyError> {
    let state = match location {
        Location::Files => AnyState::Disk(DiskStore::new(root)),
        Location::Postgres(url) => AnyState::Pg(PgStore::open(&url)?),
    };
    Ok(AnyStore {
        files: DiskStore::new(root),
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_clarify_command::paths;

    #[test]
    fn the_variable_wins_over_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(location_with(root, None).unwrap(), Location::Files);
        std::fs::create_dir_all(root.join(".agentx")).unwrap();
        std::fs::write(
            root.join(paths::CONFIG),
            "[store]\nurl = \"postgres://a@/hub?host=/tmp/x\"\n",
        )
        .unwrap();
        assert_eq!(
            location_with(root, None).unwrap(),
            Location::Postgres("postgres://a@/hub?host=/tmp/x".into())
        );
        assert_eq!(
            location_with(root, Some("")).unwrap(),
            location_with(root, None).unwrap()
        );
        assert_eq!(location_with(root, Some("file")).unwrap(), Location::Files);
        assert_eq!(
            location_with(root, Some("postgresql://b@db/hub")).unwrap(),
            Location::Postgres("postgresql://b@db/hub".into())
        );
        let e = location_with(root, Some("mysql://u:secret@x/db")).unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        assert!(!e.to_string().contains("secret"), "{e}");
        std::fs::write(root.join(paths::CONFIG), "[store]\nurl = 3\n").unwrap();
        assert_eq!(
            location_with(root, None).unwrap_err().code(),
            "CONFIG_INVALID"
        );
    }
}
