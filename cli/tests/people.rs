//! `agentx people list|check` (issue 43, docs/protocol.md §37): who is on call at `--now`, and
//! the deciders lists that name nobody (exit 3).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

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
