//! `agentx people list|check` (issue 43, docs/protocol.md §37): who is on call at `--now`, and
//! the deciders lists that name nobody (exit 3).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use common::*;

const PEOPLE: &str = "[people.alice]\nroles = [\"architecture\", \"lead\"]\ngithub = \"alice-gh\"\n\n[people.bob]\nroles = [\"lead\"]\n\n[[rotations]]\nrole = \"lead\"\npeople = [\"alice\", \"bob\"]\nevery = \"7d\"\nstart = \"2026-11-16T09:00:00Z\"\n";

#[test]
fn list_says_who_is_on_call_either_side_of_a_handover() {
    let dir = workspace();
    let root = root_arg(dir.path());
    let none = run([root.as_str(), "people", "list"]);
    assert_eq!(none.code, 0, "{none:#?}");
    assert!(none.stdout.contains("no people defined"), "{none:#?}");

    std::fs::write(dir.path().join(".agentx/people.toml"), PEOPLE).unwrap();
    let at = |now: &str| {
        let out = run([root.as_str(), "--json", "--now", now, "people", "list"]);
        assert_eq!(out.code, 0, "{out:#?}");
        out.json()
    };
    let before = at("2026-11-23T08:59:00Z");
    assert_eq!(before["onCall"][0]["person"], "alice");
    assert_eq!(before["onCall"][0]["until"], "2026-11-23T09:00:00.000Z");
    assert_eq!(before["onCall"][0]["next"], "bob");
    assert_eq!(at("2026-11-23T09:01:00Z")["onCall"][0]["person"], "bob");
    assert_eq!(before["people"][0]["github"], "alice-gh");

    let text = run([
        root.as_str(),
        "--now",
        "2026-11-23T09:01:00Z",
        "people",
        "list",
    ]);
    assert!(
        text.stdout
            .contains("lead: bob until 2026-11-30T09:00:00.000Z, then alice"),
        "{text:#?}"
    );
}

#[test]
fn check_reports_a_role_nobody_holds() {
    let dir = workspace();
    let root = root_arg(dir.path());
    std::fs::write(dir.path().join(".agentx/people.toml"), PEOPLE).unwrap();
    let ok = run([root.as_str(), "people", "check"]);
    assert_eq!(ok.code, 0, "{ok:#?}");

    let config = dir.path().join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[people]\ndefault_deciders = [\"role:security\"]\n");
    std::fs::write(&config, text).unwrap();
    let bad = run([root.as_str(), "--json", "people", "check"]);
    assert_eq!(bad.code, 3, "{bad:#?}");
    assert_eq!(bad.code_str(), "CONFIG_INVALID");
    let problems = bad.json()["problems"].clone();
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .contains("role:security names a role nobody holds"),
        "{problems}"
    );

    // A person named like an agent is refused where the file says it, for every command.
    std::fs::write(
        dir.path().join(".agentx/people.toml"),
        "[people.engineer]\n",
    )
    .unwrap();
    let refused = run([root.as_str(), "--json", "people", "list"]);
    assert_eq!(refused.code, 3, "{refused:#?}");
    assert!(
        refused.json()["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with(".agentx/people.toml:1:9: 'engineer' is an agent"),
        "{refused:#?}"
    );
}

#[test]
fn only_the_assigned_person_decides_on_the_cli() {
    let dir = workspace();
    let root = root_arg(dir.path());
    std::fs::write(dir.path().join(".agentx/people.toml"), PEOPLE).unwrap();
    let now = ["--now", "2026-11-23T08:59:00Z"];
    let ask = run([
        root.as_str(),
        now[0],
        now[1],
        "--json",
        "clarify",
        "ask",
        "--issue",
        "42",
        "--from",
        "engineer",
        "--to",
        "architect",
        "--topic",
        "Cache",
        "--question",
        "Redis?",
    ]);
    assert_eq!(ask.code, 0, "{ask:#?}");
    let esc = run([
        root.as_str(),
        now[0],
        now[1],
        "--json",
        "clarify",
        "escalate",
        "CLR-42-001",
    ]);
    assert_eq!(esc.code, 0, "{esc:#?}");
    // No step names deciders for this record: every person is assigned.
    let thread = esc.json()["clarification"]["thread"].clone();
    assert_eq!(thread[1]["assigned"], serde_json::json!(["alice", "bob"]));
    let resolve = |who: Option<&str>| {
        let mut argv = vec![
            root.as_str(),
            "--json",
            "clarify",
            "resolve",
            "CLR-42-001",
            "-m",
            "Redis.",
        ];
        if let Some(who) = who {
            argv.extend(["--as", who]);
        }
        run(argv)
    };
    let nobody = resolve(None);
    assert_eq!(nobody.code, 4, "{nobody:#?}");
    assert_eq!(nobody.code_str(), "NOT_ALLOWED");
    let stranger = resolve(Some("mallory"));
    assert_eq!(stranger.code, 4, "{stranger:#?}");
    assert!(
        stranger.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("it is assigned to alice, bob"),
        "{stranger:#?}"
    );
    let alice = resolve(Some("alice"));
    assert_eq!(alice.code, 0, "{alice:#?}");
    let last = alice.json()["clarification"]["thread"][2].clone();
    assert_eq!(last["by"], "alice");
    assert_eq!(last["via"], "local");
}

#[test]
fn a_persons_token_or_link_names_a_defined_person_once_there_are_people() {
    let dir = workspace();
    let root = dir.path();
    // Before people.toml: any name, as before.
    let early = json_in(root, &["tokens", "new", "--human", "carol"]);
    assert_eq!(early.code, 0, "{early:#?}");

    std::fs::write(root.join(".agentx/people.toml"), PEOPLE).unwrap();
    let refused = json_in(root, &["tokens", "new", "--human", "mallory"]);
    assert_eq!(refused.code, 3, "{refused:#?}");
    assert_eq!(refused.code_str(), "INVALID_INPUT");
    let why = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        why.contains("'mallory' is not a person of .agentx/people.toml (people: alice, bob)"),
        "{why}"
    );
    let link = json_in(
        root,
        &[
            "tokens",
            "link",
            "--human",
            "mallory",
            "--url",
            "http://127.0.0.1:1",
        ],
    );
    assert_eq!(link.code, 3, "{link:#?}");
    // A defined person's token, and an agent's (agents are not people), are made.
    assert_eq!(
        json_in(root, &["tokens", "new", "--human", "alice"]).code,
        0
    );
    assert_eq!(
        json_in(root, &["tokens", "new", "--agent", "engineer"]).code,
        0
    );

    // The early token keeps working and is listed as naming nobody defined.
    let listed = json_in(root, &["tokens", "list"]).json();
    let by_name = |n: &str| {
        listed["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("carol")["definedPerson"], false, "{listed}");
    assert_eq!(by_name("alice")["definedPerson"], true, "{listed}");
    assert!(
        by_name("engineer").get("definedPerson").is_none(),
        "{listed}"
    );
    let text = run([root_arg(root).as_str(), "tokens", "list"]);
    assert!(
        text.stdout.contains("carol") && text.stdout.contains("(not a defined person)"),
        "{text:#?}"
    );
}

#[test]
fn stats_per_person_count_a_decision_and_its_wait() {
    let dir = workspace();
    let root = root_arg(dir.path());
    std::fs::write(dir.path().join(".agentx/people.toml"), PEOPLE).unwrap();
    let at = |now: &'static str, args: &[&str]| {
        let mut argv = vec![root.as_str(), "--json", "--now", now, "clarify"];
        argv.extend(args);
        let out = run(argv);
        assert_eq!(out.code, 0, "{out:#?}");
        out
    };
    let ask = [
        "ask",
        "--issue",
        "42",
        "--from",
        "engineer",
        "--to",
        "architect",
        "--topic",
        "Cache",
        "--question",
        "Redis?",
    ];
    at("2026-11-23T08:58:00Z", &ask);
    at("2026-11-23T08:59:00Z", &["escalate", "CLR-42-001"]);
    // Half an hour after the escalation, alice decides it.
    let resolve = ["resolve", "CLR-42-001", "--as", "alice", "-m", "Redis."];
    at("2026-11-23T09:29:00Z", &resolve);

    let out = at("2026-11-23T09:30:00Z", &["stats", "--people"]).json();
    let people = out["people"].as_array().unwrap();
    assert_eq!(people.len(), 2, "{out}");
    assert_eq!(people[0]["name"], "alice");
    assert_eq!(people[0]["decisions"], 1);
    assert_eq!(people[0]["medianDecisionMs"], 1_800_000);
    assert_eq!(people[0]["openAssigned"], 0);
    assert_eq!(people[1]["name"], "bob");
    assert_eq!(people[1]["decisions"], 0);
    assert!(people[1]["medianDecisionMs"].is_null(), "{out}");
    // Without the flag the answer is as before.
    let plain = at("2026-11-23T09:30:00Z", &["stats"]).json();
    assert!(plain.get("people").is_none(), "{plain}");

    let text = run([root.as_str(), "clarify", "stats", "--people"]);
    assert_eq!(text.code, 0, "{text:#?}");
    assert!(
        text.stdout
            .contains("person  decisions  claims  median  open  holding\nalice           1       0     30m     0        0\nbob             0       0       —     0        0"),
        "{text:#?}"
    );
}

#[test]
fn check_reports_a_rotation_gap_until_it_starts() {
    let dir = workspace();
    let root = root_arg(dir.path());
    std::fs::write(
        dir.path().join(".agentx/people.toml"),
        "[people.alice]\n[people.bob]\n\n[[rotations]]\nrole = \"night\"\npeople = [\"alice\", \"bob\"]\nevery = \"12h\"\nstart = \"2026-12-10T21:00:00Z\"\n",
    )
    .unwrap();
    let config = dir.path().join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[people]\ndefault_deciders = [\"role:night\"]\n");
    std::fs::write(&config, text).unwrap();
    let early = run([
        root.as_str(),
        "--json",
        "--now",
        "2026-12-01T00:00:00Z",
        "people",
        "check",
    ]);
    assert_eq!(early.code, 3, "{early:#?}");
    let problems = early.json()["problems"].clone();
    assert_eq!(problems.as_array().map(Vec::len), Some(1), "{problems}");
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .starts_with("role:night has nobody on call before 2026-12-10T21:00:00.000Z"),
        "{problems}"
    );
    let later = run([
        root.as_str(),
        "--now",
        "2026-12-11T00:00:00Z",
        "people",
        "check",
    ]);
    assert_eq!(later.code, 0, "covered once it starts: {later:#?}");
}

/// `/api/v1/call` acts as the token's person (docs/protocol.md §37): bob's token may not
/// claim or approve what is assigned to the leads, nor claim as someone else; alice's claims
/// it, and the quorum of two is met by alice and carol.
#[test]
fn the_api_acts_as_the_tokens_person() {
    let dir = workspace();
    let root = dir.path();
    std::fs::write(
        root.join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\n\n[people.bob]\n\n[people.carol]\nroles = [\"lead\"]\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".agentx/workflows/feature.toml"),
        "[[steps]]\nid = \"architecture\"\nagent = \"architect\"\ndeciders = [\"role:lead\"]\nquorum = 2\n\n[[steps]]\nid = \"implementation\"\nagent = \"engineer\"\ncan_clarify = [\"architect\"]\n",
    )
    .unwrap();
    let id = serve_http::escalated(root, 42, "Cache");
    let [alice, bob, carol] =
        ["alice", "bob", "carol"].map(|p| serve_http::token(root, "--human", p));
    let server = serve_http::Server::start(root, &[]);
    let call = |token: &str, op: &str, input: serde_json::Value| {
        let r = server.call_bearer(token, op, input);
        (r.status, r.json())
    };
    let (status, v) = call(&bob, "claim", serde_json::json!({"id": id}));
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (403, Some("NOT_ALLOWED")),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("assigned to alice, carol"),
        "{v}"
    );
    let (status, v) = call(&bob, "claim", serde_json::json!({"id": id, "as": "alice"}));
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("INVALID_INPUT")),
        "{v}"
    );
    let (status, v) = call(&alice, "claim", serde_json::json!({"id": id}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["clarification"]["claimedBy"]["person"], "alice");
    assert_eq!(v["clarification"]["thread"][2]["via"], "web");
    let (status, v) = call(
        &bob,
        "approve",
        serde_json::json!({"id": id, "message": "LRU."}),
    );
    assert_eq!(status, 403, "{v}");
    let (_, v) = call(
        &alice,
        "approve",
        serde_json::json!({"id": id, "message": "Redis."}),
    );
    assert_eq!(v["clarification"]["status"], "escalated", "{v}");
    assert_eq!(
        v["clarification"]["approvals"]["summary"],
        "1 of 2 approved (alice); waiting on carol"
    );
    let (_, v) = call(&carol, "approve", serde_json::json!({"id": id}));
    assert_eq!(v["clarification"]["status"], "resolved", "{v}");
    let last = v["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    assert_eq!(last["approvedBy"], serde_json::json!(["alice", "carol"]));
    assert_eq!(last["by"], "carol");
}
