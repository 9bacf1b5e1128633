//! Plays every conformance vector through the command layer over a `PgStore` on a real
//! PostgreSQL server (`agentx_clarify_tests::pg`): per vector file, a workspace directory with
//! its settings and workflows, its ledgers and statuses imported into an emptied database; each
//! case's result must deep-equal the command layer's over a `MemStore` playing the same
//! scenario in step, and so must every file a `file` case reads. Afterwards the database
//! holds exactly the MemStore's state files, byte for byte.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agentx_clarify_command::{vector, MemStore};
use agentx_clarify_pg::documents::document_of;
use agentx_clarify_pg::PgStore;
use agentx_clarify_tests::pg::{fresh_database, psql};
use agentx_clarify_tests::{load_all, materialize, now_ms, subset_match};
use serde_json::Value;

#[test]
fn every_vector_through_the_postgres_store() {
    let url = fresh_database("vectors");
    PgStore::init_schema(&url).expect("create the schema");
    let vectors = load_all();
    assert!(!vectors.is_empty(), "no vectors found");
    let (mut failures, mut cases) = (Vec::new(), 0usize);
    let started = std::time::Instant::now();
    for (file, v) in &vectors {
        psql(&url, "TRUNCATE agentx.documents CASCADE");
        let setup = v.get("setup").cloned().unwrap_or(Value::Null);
        let dir = tempfile::tempdir().expect("tempdir");
        materialize(&setup, dir.path()).unwrap_or_else(|e| panic!("{file}: materialize: {e}"));
        let reference = MemStore::from_setup(&setup).unwrap_or_else(|e| panic!("{file}: {e}"));
        let state: Vec<(String, Vec<u8>)> = reference
            .files()
            .into_iter()
            .filter(|(p, _)| document_of(p).is_some())
            .collect();
        let store = agentx_clarify_pg::open_workspace(dir.path(), &url).expect("open the store");
        store
            .state
            .import_documents(&state, false)
            .unwrap_or_else(|e| panic!("{file}: import: {e}"));
        for case in v["cases"].as_array().expect("cases") {
            cases += 1;
            let name = case["name"].as_str().unwrap_or("?");
            let op = case["op"].as_str().expect("op");
            let args = case.get("args").cloned().unwrap_or(Value::Null);
            let now = now_ms(&case["now"]);
            let expected = vector::play(&reference, op, &args, now, |p| reference.file(p));
            // State documents come from the database; any other file (a stray file a case
            // reads) is the workspace directory's, as it would be beside the database.
            let actual = vector::play(&store, op, &args, now, |p| match document_of(p) {
                Some(_) => store.state.document(p).expect("read a document"),
                None => std::fs::read(dir.path().join(p)).ok(),
            });
            if let Err(why) = subset_match(&case["expect"], &actual) {
                failures.push(format!("{file} / {name}: {why}"));
            }
            if actual != expected {
                failures.push(format!(
                    "{file} / {name}: differs from the MemStore's:\n  postgres: {}\n  memstore: {}",
                    short(&actual),
                    short(&expected)
                ));
            }
        }
        // The database holds exactly the MemStore's state documents, byte for byte.
        let mut exported = Vec::new();
        store
            .state
            .export_documents(|p, b| {
                exported.push((p.to_owned(), b.to_vec()));
                Ok(())
            })
            .expect("export");
        exported.sort();
        let mut want: Vec<(String, Vec<u8>)> = reference
            .files()
            .into_iter()
            .filter(|(p, _)| document_of(p).is_some())
            .collect();
        want.sort();
        if exported != want {
            failures.push(format!(
                "{file}: the database's documents differ from the MemStore's files"
            ));
        }
    }
    println!(
        "{} vector files, {cases} cases through PostgreSQL in {:.1?}: {} failures",
        vectors.len(),
        started.elapsed(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(600).collect()
}
