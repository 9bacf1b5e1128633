use serde_json::{json, Value};

use super::*;
use crate::testkit::T0;

fn ok(v: Value) -> Value {
    assert_eq!(v["ok"], true, "{v:#}");
    v
}

fn ask(ledger: &Value, now: i64) -> Value {
    ok(call(
        "request",
        &json!({"ledger": ledger, "issueNumber": 42, "from": "engineer", "to": "architect",
                "topic": "Cache layer", "question": "Redis or in-process?", "now": now}),
    ))
}

#[test]
fn happy_path_through_the_facade() {
    let r = ask(&Value::Null, T0);
    assert_eq!(r["clarification"]["id"], "CLR-42-001");
    assert_eq!(r["clarification"]["issueNumber"], 42);
    assert_eq!(r["clarification"]["maxRounds"], 3);
    assert_eq!(r["clarification"]["staleAfter"], "2026-11-22T11:00:00.000Z");
    assert_eq!(r["ledger"]["workflow"], "feature");
    assert_eq!(r["events"][0]["type"], "clarification-requested");
    assert_eq!(r["statuses"]["engineer"]["status"], "blocked-clarification");
    assert_eq!(r["idempotent"], false);
    let a = ok(call(
        "answer",
        &json!({"ledger": r["ledger"], "statuses": r["statuses"], "id": "CLR-42-001", "from": "architect", "body": "Redis.", "now": T0 + 1000}),
    ));
    assert_eq!(a["clarification"]["status"], "answered");
    assert_eq!(a["statuses"]["engineer"]["status"], "working");
    let z = ok(call(
        "resolve",
        &json!({"ledger": a["ledger"], "id": "CLR-42-001", "now": T0 + 2000}),
    ));
    assert_eq!(z["clarification"]["status"], "resolved");
    assert_eq!(
        z["clarification"]["thread"][2]["body"],
        "resolved by engineer"
    );
    assert_eq!(z["clarification"]["resolvedAt"], "2026-11-22T10:00:02.000Z");
    let v = ok(call("verify", &json!({"ledgers": [z["ledger"]]})));
    assert_eq!(v["problems"], json!([]));
}

#[test]
fn refusals_are_envelopes() {
    let r = call(
        "answer",
        &json!({"ledger": {"issueNumber": 1, "clarifications": []}, "id": "CLR-1-001", "from": "x", "body": "y", "now": T0}),
    );
    assert_eq!(
        r,
        json!({"ok": false, "error": {"code": "NOT_FOUND", "message": "clarification CLR-1-001 not found"}})
    );
    let r = call(
        "request",
        &json!({"issueNumber": 1, "from": "engineer", "to": "architect", "topic": "t", "question": "q"}),
    );
    assert_eq!(r["error"]["code"], "INVALID_INPUT");
    assert_eq!(call("nope", &json!({}))["error"]["code"], "INVALID_INPUT");
    assert_eq!(call("version", &json!(7))["error"]["code"], "INVALID_INPUT");
    let r = call(
        "answer",
        &json!({"ledger": {"issueNumber": "x"}, "id": "CLR-1-001", "from": "x", "body": "y", "now": T0}),
    );
    assert_eq!(r["error"]["code"], "LEDGER_CORRUPT");
}

#[test]
fn max_rounds_writes_and_fails() {
    let mut l = ask(&Value::Null, T0)["ledger"].clone();
    for round in 1..=3 {
        let body = format!("answer number {round}");
        l = ok(call(
            "answer",
            &json!({"ledger": l, "id": "CLR-42-001", "from": "architect", "body": body, "now": T0}),
        ))["ledger"]
            .clone();
        if round < 3 {
            let question = format!("question {round} different words {}", "x".repeat(round));
            l = ok(call("followUp", &json!({"ledger": l, "id": "CLR-42-001", "from": "engineer", "question": question, "now": T0})))["ledger"].clone();
        }
    }
    let r = call(
        "followUp",
        &json!({"ledger": l, "id": "CLR-42-001", "from": "engineer", "question": "again", "now": T0}),
    );
    assert_eq!(r["ok"], false);
    assert_eq!(r["error"]["code"], "MAX_ROUNDS_EXCEEDED");
    assert_eq!(r["clarification"]["status"], "escalated");
    let last = r["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["from"], "agent-x");
    assert_eq!(last["body"], "max rounds reached (3 of 3)");
    assert_eq!(r["events"][0]["type"], "clarification-escalated");
    // A person's resolution must say what was decided.
    let silent = call(
        "resolve",
        &json!({"ledger": r["ledger"], "id": "CLR-42-001", "now": T0}),
    );
    assert_eq!(silent["error"]["code"], "INVALID_INPUT");
    assert!(silent["error"]["message"]
        .as_str()
        .unwrap()
        .contains("a decision is needed"));
    let human = ok(call(
        "resolve",
        &json!({"ledger": r["ledger"], "id": "CLR-42-001", "now": T0, "message": "Use Redis."}),
    ));
    assert_eq!(human["clarification"]["thread"][7]["from"], "human");
}

#[test]
fn js_numbers_may_arrive_as_floats() {
    let r = call(
        "request",
        &json!({"issueNumber": 42.0, "from": "engineer", "to": "architect", "topic": "t", "question": "q", "now": 1_795_341_600_000.0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let r = call(
        "request",
        &json!({"issueNumber": 42.5, "from": "engineer", "to": "architect", "topic": "t", "question": "q", "now": T0}),
    );
    assert_eq!(r["error"]["code"], "INVALID_ISSUE");
}

#[test]
fn monitor_reports_corrupt_files_and_updates_statuses() {
    let r = ask(&Value::Null, T0);
    let m = ok(call(
        "monitor",
        &json!({"ledgers": [r["ledger"]], "files": {"issue-9.json": "{ nope", "issue-99999999999.json": "{}", "notes.txt": "x"},
                "statuses": r["statuses"], "now": T0 + 61 * 60_000}),
    ));
    assert_eq!(m["report"]["stale"], json!(["CLR-42-001"]));
    assert_eq!(m["report"]["retried"], json!(["CLR-42-001"]));
    assert_eq!(m["changed"], json!([42]));
    let files: Vec<&str> = m["report"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec!["issue-9.json", "issue-99999999999.json"]);
    assert_eq!(m["report"]["errors"][1]["code"], "INVALID_ISSUE");
}

#[test]
fn views_and_renderers() {
    let r = ask(&Value::Null, T0);
    let list = ok(call("list", &json!({"ledgers": [r["ledger"]]})));
    assert_eq!(list["clarifications"].as_array().unwrap().len(), 1);
    let ready = ok(call("ready", &json!({"ledgers": [r["ledger"]]})));
    assert_eq!(
        ready["issues"],
        json!([{"issueNumber": 42, "blocked": [{"id": "CLR-42-001", "waitingOn": "architect"}]}])
    );
    let md = ok(call(
        "renderMarkdown",
        &json!({"view": "thread", "clarification": r["clarification"]}),
    ));
    assert!(md["text"]
        .as_str()
        .unwrap()
        .contains("> Round 1/3 | CLR-42-001 | blocking"));
    let txt = ok(call(
        "renderText",
        &json!({"view": "list", "clarifications": list["clarifications"], "color": true}),
    ));
    assert!(txt["text"].as_str().unwrap().contains("\u{1b}[33m"));
    let show = ok(call(
        "show",
        &json!({"ledgers": [r["ledger"]], "issue": 42}),
    ));
    assert_eq!(show["ledger"]["issueNumber"], 42);
    assert_eq!(
        call("show", &json!({"ledgers": [], "id": "CLR-1-001"}))["error"]["code"],
        "NOT_FOUND"
    );
}

#[test]
fn every_function_answers() {
    for f in FUNCTIONS {
        let r = call(f, &json!({}));
        assert!(r["ok"].is_boolean(), "{f}: {r}");
    }
}

#[test]
fn verify_uses_real_file_names() {
    let text = r#"{"issueNumber": 36, "clarifications": []}"#;
    let v = ok(call("verify", &json!({"files": {"issue-35.json": text}})));
    assert_eq!(v["problems"][0]["file"], "issue-35.json");
    assert_eq!(v["problems"][0]["id"], Value::Null);
}

#[test]
fn transitions_spell_the_state_machine() {
    let t = ok(call("transitions", &json!({})));
    assert_eq!(
        t["transitions"],
        json!({
            "answer": {"pending": "target", "stale": "target"},
            "followUp": {"answered": "requester"},
            "resolve": {"answered": "requester", "escalated": "human"},
            "abandon": {"pending": "requesterOrMonitor", "stale": "requesterOrMonitor", "answered": "requesterOrMonitor", "escalated": "human"},
            "escalate": {"pending": "anyone", "stale": "anyone", "answered": "anyone"},
        })
    );
    assert_eq!(
        call("transitions", &json!(7))["error"]["code"],
        "INVALID_INPUT"
    );
}

#[test]
fn error_codes_list_every_code_with_its_class() {
    let v = ok(call("errorCodes", &json!({})));
    let codes = v["codes"].as_array().cloned().unwrap_or_default();
    assert_eq!(codes.len(), crate::error::ErrorCode::ALL.len());
    assert!(codes.contains(&json!({"code": "SCOPE_VIOLATION", "class": "policy"})));
    assert!(codes.contains(&json!({"code": "INVALID_ID", "class": "input"})));
    assert!(codes.contains(&json!({"code": "NOT_FOUND", "class": "not-found"})));
    assert!(codes.contains(&json!({"code": "LEDGER_CORRUPT", "class": "corrupt"})));
    assert_eq!(
        call("errorCodes", &json!(7))["error"]["code"],
        "INVALID_INPUT"
    );
}

#[test]
fn a_misfiled_ledger_is_corrupt_for_every_operation() {
    // `issueNumber` 7 inside issue 1's ledger: ask, answer and show all refuse it (docs/protocol.md §20).
    let misfiled = json!({"issueNumber": 7, "clarifications": [{
        "id": "CLR-1-001", "from": "engineer", "to": "architect", "topic": "t",
        "status": "pending", "round": 1, "maxRounds": 3, "resolvedAt": null,
        "thread": [{"round": 1, "from": "engineer", "type": "question", "body": "q?",
                    "timestamp": "2026-11-22T10:00:00.000Z"}]}]});
    let text = misfiled.to_string();
    for ledger in [misfiled, Value::from(text.clone())] {
        let calls = [
            (
                "request",
                json!({"ledger": ledger, "issueNumber": 1, "from": "engineer", "to": "architect",
                       "topic": "a", "question": "b", "now": T0}),
            ),
            (
                "answer",
                json!({"ledger": ledger, "id": "CLR-1-001", "from": "architect", "body": "x", "now": T0}),
            ),
        ];
        for (f, input) in calls {
            let r = call(f, &input);
            assert_eq!(r["error"]["code"], "LEDGER_CORRUPT", "{f}: {r}");
        }
    }
    for input in [
        json!({"files": {"issue-1.json": text}, "id": "CLR-1-001"}),
        json!({"files": {"issue-1.json": text}, "issue": 1}),
    ] {
        let r = call("show", &input);
        assert_eq!(r["error"]["code"], "LEDGER_CORRUPT", "{r}");
        assert_eq!(
            r["error"]["message"],
            "issue-1.json is corrupt (it holds the ledger of issue 7, not of issue 1); it was left untouched"
        );
    }
    // `verify` reports it once, with the same message.
    let v = ok(call("verify", &json!({"files": {"issue-1.json": text}})));
    assert_eq!(v["problems"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        v["problems"][0]["message"],
        "issue-1.json is corrupt (it holds the ledger of issue 7, not of issue 1); it was left untouched"
    );
}

#[test]
fn show_and_verify_report_what_another_tool_wrote() {
    // AgentX left `pending` on a record whose thread has its answer.
    let text = crate::testkit::AGENTX_TS;
    let shown = ok(call(
        "show",
        &json!({"files": {"issue-1.json": text}, "issue": 1}),
    ));
    assert_eq!(shown["ledger"]["clarifications"][0]["status"], "answered");
    let v = ok(call("verify", &json!({"files": {"issue-1.json": text}})));
    assert_eq!(v["problems"], json!([]), "{v:#}");
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("legacy record: none of its 2 entries")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("status is pending but the thread says answered")),
        "{warnings:?}"
    );
}
