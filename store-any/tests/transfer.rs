//! Export and import between the file store and PostgreSQL (a real server): a file workspace
//! imported, exported, imported into another database and exported again gives identical
//! files; hash chains stay valid; import is idempotent and refuses to overwrite a document
//! that differs unless told to.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;

use agentx_clarify_command::{ask, hook, verify, HookEvent};
use agentx_clarify_core::{Action, NewRequest};
use agentx_clarify_store_any::transfer::{export, import};
use agentx_clarify_store_any::{location_with, open_at, AnyStore, DiskStore, Location, PgStore};
use agentx_clarify_tests::pg::fresh_database;

const NOW: i64 = 1_795_341_600_000;

fn request(issue: u64, n: usize) -> NewRequest {
    NewRequest {
        issue_number: issue,
        from: "engineer".into(),
        to: "architect".into(),
        topic: format!("Topic {n}"),
        question: format!("Which option for part {n}?"),
        blocking: true,
        workflow: None,
        step: None,
        field: Some("storage.cache".into()),
        suggestions: vec!["redis".into(), "lru".into()],
        idempotency_key: None,
        ..NewRequest::default()
    }
}

/// Every file under `root`, by relative path.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// A file workspace that has seen some work, a corrupt ledger, a delegation ledger, a stray
/// file, and a config naming the database.
fn file_workspace(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = DiskStore::new(dir.path());
    agentx_clarify_command::Store::init(&files).unwrap();
    for issue in [3u64, 12, 40] {
        for n in 0..3 {
            ask(&files, NOW + n as i64, &request(issue, n)).unwrap();
        }
    }
    agentx_clarify_command::act(
        &files,
        NOW + 10,
        "CLR-12-001",
        &Action::Answer {
            from: "architect".into(),
            body: "Redis.".into(),
        },
    )
    .unwrap();
    hook(&files, NOW + 20, HookEvent::Start, "engineer", Some(12)).unwrap();
    let clar = dir.path().join(".agentx/state/clarifications");
    std::fs::write(clar.join("issue-9.json"), "{ not json").unwrap();
    std::fs::write(clar.join("notes.txt"), "not a ledger").unwrap();
    let delegations = dir.path().join(".agentx/state/delegations");
    std::fs::create_dir_all(&delegations).unwrap();
    std::fs::write(
        delegations.join("issue-12.json"),
        "{\"issueNumber\": 12, \"delegations\": []}\n",
    )
    .unwrap();
    let config = dir.path().join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("\n[store]\nurl = \"{url}\"\n"));
    std::fs::write(config, text).unwrap();
    dir
}

/// Where the settings at `root` put the state (the workspace handle's reading of `[store] url`).
fn configured(root: &Path) -> Location {
    let bytes = std::fs::read(root.join(agentx_clarify_command::paths::CONFIG)).unwrap();
    let url = agentx_clarify_core::Config::store_url("config.toml", &bytes).unwrap();
    location_with(None, url.as_deref()).unwrap()
}

fn pg(root: &Path, url: &str) -> AnyStore {
    PgStore::init_schema(url).unwrap();
    open_at(root, Location::Postgres(url.to_owned())).unwrap()
}

#[test]
fn export_import_export_gives_identical_files() {
    let url = fresh_database("transfer");
    let src = file_workspace(&url);
    assert_eq!(
        configured(src.path()),
        Location::Postgres(url.clone()),
        "the config names the database"
    );
    let store = pg(src.path(), &url);
    // This workspace's own files into its database.
    let first = import(&store.state, src.path(), false).unwrap();
    assert_eq!(
        first.added.len(),
        6,
        "4 ledgers, 1 delegation ledger, the statuses"
    );
    let again = import(&store.state, src.path(), false).unwrap();
    assert_eq!(
        (again.added.len(), again.unchanged),
        (0, 6),
        "import is idempotent"
    );
    // Hash chains verify in the database as in the files.
    let files = DiskStore::new(src.path());
    let (in_files, in_db) = (verify(&files).unwrap(), verify(&store).unwrap());
    assert_eq!(in_files.problems, in_db.problems);
    assert!(
        in_db.problems.iter().all(|p| p.file == "issue-9.json"),
        "{:?}",
        in_db.problems
    );

    let one = tempfile::tempdir().unwrap();
    let out = export(store.files.root(), &store.state, one.path()).unwrap();
    assert_eq!(out.documents, 6);
    let exported = tree(one.path());
    for (rel, bytes) in tree(src.path()) {
        if rel.starts_with(".agentx/state/") && !rel.ends_with("notes.txt") {
            assert_eq!(exported.get(&rel), Some(&bytes), "{rel} is byte-identical");
        }
    }
    let config = String::from_utf8(exported[".agentx/config.toml"].clone()).unwrap();
    assert!(
        !config.contains("[store]"),
        "the export is a file workspace: {config}"
    );
    assert_eq!(configured(one.path()), Location::Files);
    assert!(verify(&DiskStore::new(one.path()))
        .unwrap()
        .problems
        .iter()
        .all(|p| p.file == "issue-9.json"));

    // Into another database and out again: the same files.
    let url2 = fresh_database("transfer2");
    let second = pg(one.path(), &url2);
    import(&second.state, one.path(), false).unwrap();
    let two = tempfile::tempdir().unwrap();
    export(second.files.root(), &second.state, two.path()).unwrap();
    assert_eq!(tree(two.path()), exported);
}

#[test]
fn a_differing_document_is_refused_unless_replaced() {
    let url = fresh_database("conflict");
    let src = file_workspace(&url);
    let store = pg(src.path(), &url);
    import(&store.state, src.path(), false).unwrap();
    let other = tempfile::tempdir().unwrap();
    export(store.files.root(), &store.state, other.path()).unwrap();
    let clar = other.path().join(".agentx/state/clarifications");
    std::fs::write(clar.join("issue-3.json"), "{ changed").unwrap();
    std::fs::copy(clar.join("issue-40.json"), clar.join("issue-41.json")).unwrap();
    let e = import(&store.state, other.path(), false).unwrap_err();
    assert_eq!(e.code(), "INVALID_INPUT");
    assert!(e.to_string().contains("issue-3.json"), "{e}");
    let db = match &store.state {
        agentx_clarify_store_any::AnyState::Pg(p) => p,
        agentx_clarify_store_any::AnyState::Disk(_) => unreachable!(),
    };
    assert!(
        db.document(".agentx/state/clarifications/issue-41.json")
            .unwrap()
            .is_none(),
        "nothing imported"
    );
    let done = import(&store.state, other.path(), true).unwrap();
    assert_eq!(
        done.replaced,
        vec![".agentx/state/clarifications/issue-3.json".to_owned()]
    );
    assert_eq!(
        done.added,
        vec![".agentx/state/clarifications/issue-41.json".to_owned()]
    );
    assert_eq!(
        db.document(".agentx/state/clarifications/issue-3.json")
            .unwrap()
            .unwrap(),
        b"{ changed"
    );
}

#[test]
fn ledgers_written_as_rows_export_as_files_and_import_over_them() {
    let url = fresh_database("rows");
    let src = file_workspace(&url);
    let store = pg(src.path(), &url);
    import(&store.state, src.path(), false).unwrap();
    // Commands store the ledgers they write as one row per record (schema 4).
    for n in 3..6 {
        ask(&store, NOW + 100 + n as i64, &request(3, n)).unwrap();
    }
    ask(&store, NOW + 200, &request(77, 0)).unwrap();
    let files = DiskStore::new(src.path());
    for n in 3..6 {
        ask(&files, NOW + 100 + n as i64, &request(3, n)).unwrap();
    }
    ask(&files, NOW + 200, &request(77, 0)).unwrap();
    // The export holds what the file store wrote for the same commands, byte for byte.
    let out = tempfile::tempdir().unwrap();
    export(store.files.root(), &store.state, out.path()).unwrap();
    let exported = tree(out.path());
    for issue in [3, 12, 40, 77] {
        let rel = format!(".agentx/state/clarifications/issue-{issue}.json");
        assert_eq!(exported.get(&rel), tree(src.path()).get(&rel), "{rel}");
    }
    // Importing that export over the database changes nothing: ledgers kept as rows compare
    // as the files they stand for.
    let again = import(&store.state, out.path(), false).unwrap();
    assert!(
        again.added.is_empty() && again.replaced.is_empty(),
        "{again:?}"
    );
    assert_eq!(
        again.unchanged, 7,
        "5 ledgers, 1 delegation ledger, the statuses"
    );
    // A changed one is refused, then replaced (kept whole from then on), and the next
    // command's write stores it as rows again, on what was imported.
    let clar = out.path().join(".agentx/state/clarifications");
    let other = tree(src.path())[".agentx/state/clarifications/issue-40.json"].clone();
    std::fs::write(clar.join("issue-3.json"), other).unwrap();
    let e = import(&store.state, out.path(), false).unwrap_err();
    assert!(e.to_string().contains("issue-3.json"), "{e}");
    let replaced = import(&store.state, out.path(), true).unwrap();
    assert_eq!(
        replaced.replaced,
        [".agentx/state/clarifications/issue-3.json"]
    );
    let e = ask(&store, NOW + 300, &request(3, 9)).unwrap_err();
    assert_eq!(
        e.code(),
        "LEDGER_CORRUPT",
        "issue 40's ledger under issue 3's name: {e}"
    );
    let two = tempfile::tempdir().unwrap();
    export(store.files.root(), &store.state, two.path()).unwrap();
    assert_eq!(tree(two.path()), tree(out.path()));
}
