//! `agentx init` (the workspace's own files) and `agentx store init|export|import`
//! (docs/protocol.md §19): where the state lives, and moving it.

use std::path::{Path, PathBuf};

use agentx_clarify_command::Store;
use agentx_clarify_store::DiskStore;
use agentx_clarify_store_any::{transfer, Location, PgStore};
use agentx_clarify_workspace::WorkspaceFiles;
use clap::Subcommand;
use serde_json::json;

use crate::exit::Outcome;
use crate::print;

/// `agentx init`: `.agentx/` with the default workflows and an empty state directory.
pub fn init_workspace(ws: &DiskStore, json: bool) -> Outcome {
    let created = ws.init()?;
    if json {
        print::json(&json!({"ok": true, "created": created}));
    } else if created.is_empty() {
        print::text(&format!(
            "{} is already initialised: nothing to create",
            ws.agentx_dir().display()
        ));
    } else {
        for path in &created {
            print::text(&format!("created {path}"));
        }
    }
    Ok(0)
}

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in cli.rs
pub enum StoreCmd {
    /// Create the PostgreSQL schema, or migrate it to this version (nothing to do for files)
    Init,
    /// Write the whole workspace, its state included, into DIR as a file workspace
    Export {
        /// A directory without an .agentx/ in it (created if missing)
        dir: PathBuf,
    },
    /// Read the state of the file workspace at DIR into the PostgreSQL store
    Import {
        /// A workspace root (holding .agentx/state/)
        dir: PathBuf,
        /// Overwrite documents the database holds with different content (else refused)
        #[arg(long)]
        replace: bool,
    },
}

pub fn run(root: &Path, json: bool, cmd: StoreCmd) -> Outcome {
    match cmd {
        StoreCmd::Init => init_schema(root, json),
        StoreCmd::Export { dir } => {
            let store = agentx_clarify_a2a::open_workspace(root)?.store()?;
            let out = transfer::export(root, &store.state, &dir)?;
            if json {
                print::json(&json!({
                    "ok": true,
                    "from": store.state.describe(),
                    "dir": dir.display().to_string(),
                    "files": out.files,
                    "documents": out.documents,
                }));
            } else {
                print::text(&format!(
                    "exported {} document(s) of {} and {} workspace file(s) into {}",
                    out.documents,
                    store.state.describe(),
                    out.files.len(),
                    dir.display()
                ));
            }
            Ok(0)
        }
        StoreCmd::Import { dir, replace } => {
            let store = agentx_clarify_a2a::open_workspace(root)?.store()?;
            let out = transfer::import(&store.state, &dir, replace)?;
            if json {
                print::json(&json!({
                    "ok": true,
                    "into": store.state.describe(),
                    "added": out.added.len(),
                    "replaced": out.replaced,
                    "unchanged": out.unchanged,
                }));
            } else {
                print::text(&format!(
                    "imported {} into {}: {} added, {} replaced, {} already there",
                    dir.display(),
                    store.state.describe(),
                    out.added.len(),
                    out.replaced.len(),
                    out.unchanged
                ));
            }
            Ok(0)
        }
    }
}

fn init_schema(root: &Path, json: bool) -> Outcome {
    // The settings alone: the schema is made before any state can be opened.
    let env = agentx_clarify_store_any::store_env();
    let Location::Postgres(url) = WorkspaceFiles::read(root, false)?.location(env.as_deref())?
    else {
        if json {
            print::json(&json!({"ok": true, "store": "files", "schema": null}));
        } else {
            print::text("the state is in the workspace's files: no schema to create");
        }
        return Ok(0);
    };
    let target = agentx_clarify_pg::describe(&url);
    let m = PgStore::init_schema(&url)?;
    if json {
        print::json(&json!({
            "ok": true,
            "store": target,
            "schema": {"from": m.from, "to": m.to, "applied": m.applied},
        }));
    } else if m.applied.is_empty() {
        print::text(&format!("{target}: schema version {} is current", m.to));
    } else {
        for step in &m.applied {
            print::text(&format!("{target}: applied migration {step}"));
        }
    }
    Ok(0)
}
