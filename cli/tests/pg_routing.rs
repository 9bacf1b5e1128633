//! Routing, signals and delegation with the state in PostgreSQL (a real server,
//! `agentx_clarify_tests::pg`): `clarify route` runs an example agent and records its answer
//! in the database, leases are rows that routers on other machines respect until they expire,
//! run logs stay in the files of the machine that ran the agent, and `delegate` and
//! `signals ingest` write both ledgers of an issue in the database — never a state file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use serde_json::Value;

const WORKFLOW: &str = "[[steps]]\nid = \"build\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\nclarify_max_rounds = 3\nclarify_sla_minutes = 60\n";

/// A workspace routing to the example `plain` agent, its state in a fresh database.
fn pg_workspace(prefix: &str) -> (tempfile::TempDir, String) {
    let url = fresh_database(prefix);
    let dir = workspace();
    let agents = common::install_agents(dir.path());
    std::fs::write(dir.path().join(".agentx/workflows/routing.toml"), WORKFLOW).unwrap();
    write_config(
        dir.path(),
        &format!(
            "[clarify]\ndefault_workflow = \"routing\"\n\n[store]\nurl = \"{url}\"\n\n[agents.architect]\ncommand = [\"{agents}/plain\"]\nanswer = \"text\"\n"
        ),
    );
    let init = json_in(dir.path(), &["store", "init"]);
    assert_eq!(init.code, 0, "{init:#?}");
    (dir, url)
}

fn ok(out: &Out) -> Value {
    assert_eq!(out.code, 0, "{out:#?}");
    out.json()
}

fn ask(root: &Path, topic: &str) -> String {
    let v = ok(&json_in(
        root,
        &[
            "clarify",
            "ask",
            "--issue=42",
            "--from=engineer",
            "--to=architect",
            &format!("--topic={topic}"),
            "--question=What do you decide?",
        ],
    ));
    v["clarification"]["id"].as_str().unwrap().to_owned()
}

/// No state file was written: clarification and delegation ledgers, statuses.
fn assert_no_state_files(root: &Path) {
    for dir in ["clarifications", "delegations"] {
        let names: Vec<String> = std::fs::read_dir(root.join(".agentx/state").join(dir))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(names.is_empty(), "{dir}: {names:?}");
    }
}

#[test]
fn route_answers_through_the_database_and_leases_are_rows() {
    let (dir, url) = pg_workspace("route");
    let root = dir.path();
    let id = ask(root, "Cache layer");

    // A router on another machine holds the record's lease: this one is turned away, naming it.
    psql(
        &url,
        &format!(
            "INSERT INTO agentx.leases VALUES ('{id}', 'elsewhere', 4242, 'ci-runner-7', 0, \
             (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 600000)"
        ),
    );
    let held = json_in(root, &["clarify", "route", &id]);
    assert_eq!(held.code, 7, "{held:#?}");
    assert_eq!(held.code_str(), "ROUTING_IN_PROGRESS");
    assert!(
        held.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pid 4242 on ci-runner-7"),
        "{held:#?}"
    );
    let skipped = ok(&json_in(root, &["clarify", "route", "--all"]));
    assert_eq!(skipped["skipped"][0]["id"], id.as_str(), "{skipped:#}");

    // Its time ran out (by the server's clock): the next router takes the lease over.
    psql(&url, "UPDATE agentx.leases SET expires_ms = 1");
    let routed = ok(&json_in(root, &["clarify", "route", &id]));
    assert_eq!(routed["outcome"], "answered", "{routed:#}");
    assert_eq!(psql(&url, "SELECT count(*) FROM agentx.leases").trim(), "0");

    // The answer is in the database; the run log in this machine's files.
    let shown = ok(&json_in(root, &["clarify", "show", &id]));
    let thread = shown["clarification"]["thread"].as_array().unwrap();
    let last = thread.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["from"].as_str()),
        (Some("answer"), Some("architect"))
    );
    let log = routed["run"]["log"].as_str().unwrap();
    assert!(log.starts_with(".agentx/state/runs/"), "{log}");
    let log: Value = serde_json::from_slice(&std::fs::read(root.join(log)).unwrap()).unwrap();
    assert_eq!(log["outcome"], "answered");
    assert_no_state_files(root);
}

#[test]
fn delegate_and_ingest_write_both_ledgers_in_the_database() {
    let (dir, url) = pg_workspace("delegate");
    let root = dir.path();
    let d = ok(&json_at(root, T0, &DELEGATE_REQUEST));
    assert_eq!(d["delegation"]["id"], "DLG-42-001", "{d:#}");
    ok(&json_at(
        root,
        T0 + MINUTE,
        &["delegate", "accept", "DLG-42-001", "--from=engineer"],
    ));
    // The subagent's output, with a question and a completion, piped into ingest.
    let output = "Working...\n[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: \"Session cache\"\nquestions:\n  - \"Redis or an in-process LRU?\"\ncurrent_state: \"step 1 done\"\n[/CLARIFICATION_NEEDED]\n";
    let mut child = agentx()
        .args([
            root_arg(root),
            "--json".to_owned(),
            format!("--now={}", T0 + 2 * MINUTE),
        ])
        .args([
            "signals",
            "ingest",
            "--issue=42",
            "--agent=engineer",
            "--parent=architect",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(output.as_bytes())
        .unwrap();
    let ingested = ok(&Out::from_output(&child.wait_with_output().unwrap()));
    let block = &ingested["blocks"][0];
    assert_eq!(
        (block["outcome"].as_str(), block["id"].as_str()),
        (Some("created"), Some("CLR-42-001")),
        "{ingested:#}"
    );
    let shown = ok(&json_in(root, &["delegate", "show", "DLG-42-001"]));
    assert_eq!(shown["delegation"]["status"], "ACCEPTED", "{shown:#}");
    // Both documents are rows; verify reads them back clean.
    let kinds = psql(
        &url,
        "SELECT kind || '/' || name FROM agentx.documents WHERE kind <> 'state' ORDER BY kind",
    );
    assert_eq!(
        kinds.lines().collect::<Vec<_>>(),
        ["clarifications/issue-42.json", "delegations/issue-42.json"]
    );
    let verified = ok(&json_in(root, &["clarify", "verify"]));
    assert_eq!(verified["problems"], Value::Array(Vec::new()));
    let stats = ok(&json_in(root, &["clarify", "stats"]));
    assert_eq!(stats["stats"]["delegations"]["total"], 1);
    assert_no_state_files(root);
}
