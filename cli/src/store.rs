//! `agentx store init|export|import` (docs/protocol.md §19): where the state lives, and moving it.

use std::path::Path;

use agentx_clarify_store_any::{location, transfer, Location, PgStore};
use serde_json::json;

use crate::args::StoreCmd;
use crate::{print, Outcome};

pub fn run(root: &Path, json: bool, cmd: StoreCmd) -> Outcome {
    match cmd {
        StoreCmd::Init => init(root, json),
        StoreCmd::Export { dir } => {
            let store = agentx_clarify_store_any::open(root)?;
            let out = transfer::export(&store, &dir)?;
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
            let store = agentx_clarify_store_any::open(root)?;
            let out = transfer::import(&store, &dir, replace)?;
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

fn init(root: &Path, json: bool) -> Outcome {
    let Location::Postgres(url) = location(root)? else {
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
