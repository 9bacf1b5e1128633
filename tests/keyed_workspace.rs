//! Property test of signed workspaces through the command layer (docs/protocol.md §16): whatever a
//! workspace holding keys writes — random operations by random agents, the monitor's own
//! entries signed with the hub key — `verify` finds no problem; and any single-byte change to
//! a hashed field of any entry of the stored ledger is found.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agentx_clarify_command::{call, MemStore};
use proptest::prelude::*;
use serde_json::{json, Value};

const T0: i64 = 1_795_341_600_000;
const MINUTE: i64 = 60_000;
const AGENTS: [&str; 4] = ["agent-x", "engineer", "architect", "product-manager"];

/// The fixed keys of `tests/fixtures/ed25519.json` (seeds [n; 32]).
fn key_files(held: &[bool]) -> Value {
    let fixture: Value = serde_json::from_str(include_str!("fixtures/ed25519.json")).unwrap();
    let mut files = serde_json::Map::new();
    for k in fixture["keys"].as_array().unwrap() {
        let agent = k["agent"].as_str().unwrap();
        let i = AGENTS.iter().position(|a| *a == agent).unwrap();
        // Every public key is known; a private key only when held (the hub always).
        files.insert(format!("{agent}.pub"), k["public"].clone());
        if i == 0 || held.get(i).copied().unwrap_or(false) {
            files.insert(format!("{agent}.key"), k["seed"].clone());
        }
    }
    Value::Object(files)
}

#[derive(Clone, Debug)]
enum Step {
    Ask(usize, usize),
    Answer(usize),
    FollowUp(usize),
    Resolve(usize),
    Escalate(usize),
    Monitor(i64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1usize..4, 1usize..4).prop_map(|(a, b)| Step::Ask(a, b)),
        (0usize..6).prop_map(Step::Answer),
        (0usize..6).prop_map(Step::FollowUp),
        (0usize..6).prop_map(Step::Resolve),
        (0usize..6).prop_map(Step::Escalate),
        (1i64..3000).prop_map(Step::Monitor),
    ]
}

/// Plays `steps` (refusals are part of the game: a wrong actor, a closed record).
fn play(store: &MemStore, steps: &[Step]) -> i64 {
    let mut now = T0;
    let record = |n: usize| format!("CLR-42-{:03}", n + 1);
    let shown = |id: &str, now: i64| call(store, "show", &json!({"id": id}), now);
    for (i, s) in steps.iter().enumerate() {
        now += MINUTE;
        match s {
            Step::Ask(a, b) if a != b => {
                call(
                    store,
                    "ask",
                    &json!({"issueNumber": 42, "from": AGENTS[*a], "to": AGENTS[*b],
                    "topic": format!("Topic {i}"), "question": format!("Question {i}?")}),
                    now,
                );
            }
            Step::Ask(..) => {}
            Step::Answer(n) | Step::FollowUp(n) | Step::Resolve(n) => {
                let id = record(*n);
                let r = shown(&id, now);
                let (from, to) = (
                    r["clarification"]["from"].clone(),
                    r["clarification"]["to"].clone(),
                );
                let (op, input) = match s {
                    Step::Answer(_) => (
                        "answer",
                        json!({"id": id, "from": to, "body": format!("Answer {i}")}),
                    ),
                    Step::FollowUp(_) => (
                        "followUp",
                        json!({"id": id, "from": from, "question": format!("More {i}?")}),
                    ),
                    _ => ("resolve", json!({"id": id, "from": from})),
                };
                call(store, op, &input, now);
            }
            Step::Escalate(n) => {
                call(store, "escalate", &json!({"id": record(*n)}), now);
            }
            Step::Monitor(minutes) => {
                now += minutes * MINUTE;
                call(store, "monitor", &json!({}), now);
            }
        }
    }
    now
}

/// Changes one byte of the text of `value` (a different ASCII letter or digit in place of an
/// ASCII character), keeping it valid UTF-8 and JSON.
fn one_byte_changed(value: &Value, at: usize) -> Option<Value> {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let ascii: Vec<usize> = text
        .char_indices()
        .filter(|(_, c)| c.is_ascii_alphanumeric())
        .map(|(i, _)| i)
        .collect();
    let i = *ascii.get(at % ascii.len().max(1))?;
    let mut bytes = text.into_bytes();
    bytes[i] = match bytes[i] {
        b'0'..=b'8' => bytes[i] + 1,
        b'9' => b'0',
        b'a' => b'b',
        _ => b'a',
    };
    let changed = String::from_utf8(bytes).ok()?;
    Some(match value {
        Value::Number(_) => serde_json::from_str(&changed).ok()?,
        _ => Value::String(changed),
    })
}

const HASHED: [&str; 6] = ["from", "type", "body", "round", "timestamp", "signer"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn signed_workspaces_verify_and_any_byte_change_is_found(
        held in proptest::collection::vec(any::<bool>(), 4),
        steps in proptest::collection::vec(step(), 1..14),
        (pick_record, pick_entry, pick_field, pick_byte) in (any::<usize>(), any::<usize>(), 0usize..6, any::<usize>()),
    ) {
        let store = MemStore::from_setup(&json!({"keys": key_files(&held)})).unwrap();
        let first = json!({"issueNumber": 42, "from": "engineer", "to": "architect",
            "topic": "Cache", "question": "Redis or LRU?"});
        call(&store, "ask", &first, T0);
        let now = play(&store, &steps);
        let verified = call(&store, "verify", &json!({}), now);
        prop_assert_eq!(&verified["ok"], &json!(true), "{}", verified);

        // Every entry by an agent whose key is held (or by the hub's actors) is signed.
        let path = ".agentx/state/clarifications/issue-42.json";
        let bytes = store.file(path).unwrap();
        let ledger: Value = serde_json::from_slice(&bytes).unwrap();
        let records = ledger["clarifications"].as_array().unwrap();
        for r in records {
            for e in r["thread"].as_array().unwrap() {
                let from = e["from"].as_str().unwrap();
                let signer = if ["monitor", "human", "agent-x"].contains(&from) { "agent-x" } else { from };
                let i = AGENTS.iter().position(|a| *a == signer).unwrap();
                let held_key = i == 0 || held[i];
                prop_assert_eq!(e.get("signer").is_some(), held_key, "{}", e);
            }
        }

        // One byte of one hashed field of one entry.
        let r = pick_record % records.len();
        let thread = records[r]["thread"].as_array().unwrap();
        let n = pick_entry % thread.len();
        let field = HASHED[pick_field];
        let Some(original) = thread[n].get(field) else { return Ok(()) };
        let Some(changed) = one_byte_changed(original, pick_byte) else { return Ok(()) };
        let mut tampered = ledger.clone();
        tampered["clarifications"][r]["thread"][n][field] = changed.clone();
        store.put(path, Some(serde_json::to_vec_pretty(&tampered).unwrap()));
        let found = call(&store, "verify", &json!({}), now);
        prop_assert_eq!(&found["ok"], &json!(false),
            "{} of entry {} of record {} changed from {} to {} went unnoticed", field, n + 1, r + 1, original, changed);
    }
}
