//! GitHub Mode's commands and comments as people and other accounts meet them (docs/github.md),
//! with the real `gh` against the stand-in checked by GitHub's OpenAPI description
//! (tests/github/standin.py), on files and on PostgreSQL: `/abandon` on an open record, the
//! label when the last BLOCK record closes, one reply to a refused command, only the hub's own
//! comments taken as its own, only a comment's first version acting, mentions neutralised, and
//! the first sync of a workspace whose issues have no comments.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod github_hub;

use std::process::Stdio;

use common::*;
use github_hub::*;
use serde_json::{json, Value};

/// The replies the hub posted on issue `issue` (its comments that are no record's).
fn replies(env: &Env, issue: u32) -> Vec<Value> {
    env.hub
        .comments_by(issue, "tester")
        .into_iter()
        .filter(|c| {
            c["body"]
                .as_str()
                .is_some_and(|b| b.starts_with("<!-- agentx:reply -->"))
        })
        .collect()
}

/// `/abandon` by a person with an answer role acts on a record that is still pending (taken
/// first, as `/resolve` is); the label goes when the last BLOCK record closes; a refused
/// command gets one reply saying why, however many syncs read it, and one 😕.
fn abandon_and_refusals(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let first = blocking_ask(&env, t, 42, "Cache", &[]);
    let second = blocking_ask(&env, t + 10, 42, "Queue", &[]);
    env.send(t + 100);
    assert_eq!(env.hub.labels(42), [LABEL], "two open BLOCK records");
    env.hub.role("mia", "maintain");
    env.hub.role("rob", "read");

    // The hub's own comment offers /abandon for a pending record: it acts.
    let gone = env
        .hub
        .comment(42, "mia", &format!("/abandon {first} not needed any more"));
    let out = env.sync(t + 1000);
    assert_eq!(
        out["sync"]["acted"][0]["command"],
        format!("abandon {first}"),
        "{out}"
    );
    assert!(out["sync"]["refused"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(env.hub.reactions(&gone), ["+1"]);
    assert_eq!(env.hub.reaction_posts(&gone), 1);
    let record = env.record(42, &first);
    assert_eq!(record["status"], "abandoned", "{record}");
    let thread = record["thread"].as_array().expect("thread");
    let last_two = thread.get(thread.len() - 2..).expect("two entries");
    assert_eq!(
        (last_two[0]["type"].as_str(), last_two[0]["body"].as_str()),
        (Some("escalation"), Some("taken by mia"))
    );
    assert_eq!(last_two[1]["type"], "abandonment");
    assert_eq!(last_two[1]["by"], "mia");
    let body = env.hub.marked(&first)[0]["body"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(body.contains("(abandoned)"), "the comment says so: {body}");
    assert_eq!(
        env.hub.labels(42),
        [LABEL],
        "the second BLOCK record is open"
    );

    // A refused command: 😕 and one reply saying why, mentioning its author only.
    let refused = env
        .hub
        .comment(42, "rob", &format!("/resolve {second} ask @admins"));
    let out = env.sync(t + 2000);
    let reason = out["sync"]["refused"][0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(reason.contains("permission 'read'"), "{out}");
    assert_eq!(env.hub.reactions(&refused), ["confused"]);
    let said = replies(&env, 42);
    assert_eq!(said.len(), 1, "one reply: {said:#?}");
    let reply = said[0]["body"].as_str().unwrap_or("");
    assert!(reply.contains("@rob: not taken"), "{reply}");
    assert!(reply.contains("permission 'read'"), "{reply}");
    assert!(
        reply.contains(refused["html_url"].as_str().unwrap_or("?")),
        "{reply}"
    );
    // Syncs again, two at once, and after the comment was edited: no second reply.
    env.hub.control(
        "POST",
        "/_standin/edit",
        &json!({"id": refused["id"], "body": format!("/resolve {second} please")}),
    );
    let children: Vec<_> = (0..2)
        .map(|_| {
            env.command(t + 3000, &["github", "sync"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("agentx runs")
        })
        .collect();
    for child in children {
        let out = Out::from_output(&child.wait_with_output().expect("wait"));
        assert_eq!(out.code, 0, "{out:#?}");
    }
    env.sync(t + 4000);
    assert_eq!(replies(&env, 42).len(), 1, "at most once per command");
    assert_eq!(env.hub.reaction_posts(&refused), 1);

    // The last BLOCK record closes: the label goes.
    let last = env.hub.comment(42, "mia", &format!("/abandon {second}"));
    let out = env.sync(t + 5000);
    assert_eq!(
        out["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&last), ["+1"]);
    assert_eq!(env.record(42, &second)["status"], "abandoned");
    assert!(
        env.hub.labels(42).is_empty(),
        "no open BLOCK record: no label"
    );
    env.finish();
}

#[test]
fn abandon_on_an_open_record_acts_and_a_refusal_is_answered_once() {
    abandon_and_refusals(Kept::Files);
}

#[test]
fn abandon_on_an_open_record_acts_and_a_refusal_is_answered_once_on_postgresql() {
    abandon_and_refusals(Kept::Pg);
}

/// Only comments by the account the hub posts as are its own: a comment another account
/// starts with a record's marker is never edited or adopted (the hub makes its own), and the
/// sync notes it. The account is learnt once per process.
fn foreign_markers(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 8, "Cache", &[]);
    blocking_ask(&env, t + 1, 8, "Queue", &[]);
    blocking_ask(&env, t + 2, 8, "Logs", &[]);
    let fake_body = format!(
        "<!-- agentx:{id} -->\n### AgentX clarification {id} (resolved)\n\nDone, nothing to see."
    );
    let fake = env.hub.comment(8, "mallory", &fake_body);
    let sent = env.send(t + 100);
    assert_eq!(sent["delivered"], 3, "{sent}");
    let users_after_one_pass = env.hub.requests("GET", "/user");
    env.ok(
        t + 200,
        &[
            "clarify",
            "answer",
            &id,
            "--from=architect",
            "--body=Redis.",
        ],
    );
    env.send(t + 300);
    let ours: Vec<Value> = env
        .hub
        .marked(&id)
        .into_iter()
        .filter(|c| c["login"] == "tester")
        .collect();
    assert_eq!(ours.len(), 1, "the hub's own comment");
    assert!(
        ours[0]["body"].as_str().unwrap_or("").contains("Redis."),
        "{ours:?}"
    );
    let theirs: Vec<Value> = env
        .hub
        .marked(&id)
        .into_iter()
        .filter(|c| c["login"] == "mallory")
        .collect();
    assert_eq!(theirs.len(), 1, "left as it was");
    assert_eq!(theirs[0]["body"], fake_body.as_str());
    assert_eq!(
        env.hub.requests(
            "PATCH",
            &format!("/repos/acme/app/issues/comments/{}", fake["id"])
        ),
        0,
        "never edited"
    );
    assert_eq!(
        users_after_one_pass, 1,
        "the login is learnt once per process (three deliveries)"
    );
    let sync = env.sync(t + 400);
    let notes = sync["sync"]["notes"].as_array().expect("notes").clone();
    assert!(
        notes.iter().any(|n| {
            let n = n.as_str().unwrap_or("");
            n.contains(fake["html_url"].as_str().unwrap_or("?")) && n.contains("mallory")
        }),
        "{sync}"
    );
    env.finish();
}

#[test]
fn a_marker_in_another_accounts_comment_is_ignored_and_noted() {
    foreign_markers(Kept::Files);
}

#[test]
fn a_marker_in_another_accounts_comment_is_ignored_and_noted_on_postgresql() {
    foreign_markers(Kept::Pg);
}

/// Only a comment's first version acts: one that was no command when posted and was edited
/// into `/resolve` later does not (GitHub lets maintainers edit anyone's comment), nor does a
/// command edited before the sync read it; each is refused with its reason.
fn first_versions(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 6, "Cache", &[]);
    env.ok(t + 10, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.hub.role("ann", "admin");
    let chatter = env.hub.comment(6, "ann", "I would go with redis.");
    let read = env.sync(t + 1000);
    assert!(read["sync"]["acted"].as_array().is_some_and(Vec::is_empty));
    env.hub.control(
        "POST",
        "/_standin/edit",
        &json!({"id": chatter["id"], "body": format!("/resolve {id} redis")}),
    );
    let typo = env
        .hub
        .comment(6, "ann", &format!("/resolve {id} memcahced"));
    env.hub.control(
        "POST",
        "/_standin/edit",
        &json!({"id": typo["id"], "body": format!("/resolve {id} memcached")}),
    );
    let out = env.sync(t + 2000);
    assert!(
        out["sync"]["acted"].as_array().is_some_and(Vec::is_empty),
        "{out}"
    );
    let refused = out["sync"]["refused"].as_array().expect("refused").clone();
    assert_eq!(refused.len(), 2, "{out}");
    for r in &refused {
        assert!(
            r["reason"]
                .as_str()
                .unwrap_or("")
                .contains("edited after it was posted"),
            "{out}"
        );
    }
    assert_eq!(env.record(6, &id)["status"], "escalated", "nothing acted");
    assert_eq!(env.hub.reactions(&chatter), ["confused"]);
    assert_eq!(env.hub.reactions(&typo), ["confused"]);
    // Posted anew, it acts.
    let fresh = env.hub.comment(6, "ann", &format!("/resolve {id} redis"));
    let out = env.sync(t + 3000);
    assert_eq!(
        out["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&fresh), ["+1"]);
    assert_eq!(env.record(6, &id)["status"], "resolved");
    env.finish();
}

#[test]
fn only_a_comments_first_version_acts() {
    first_versions(Kept::Files);
}

#[test]
fn only_a_comments_first_version_acts_on_postgresql() {
    first_versions(Kept::Pg);
}

/// An agent's `@user` and `@org/team` in ledger text mention no one on the hub's comment
/// unless `[github] mentions = true`.
fn mentions(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let asked = env.ok(
        t,
        &[
            "clarify",
            "ask",
            "--issue=4",
            "--from=engineer",
            "--to=architect",
            "--topic=Cache",
            "--question=Should @alice or @acme/ops decide? Mail bob@example.com.",
        ],
    );
    let id = asked["clarification"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    env.send(t + 100);
    let body = env.hub.marked(&id)[0]["body"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        body.contains("@&#8203;alice") && body.contains("@&#8203;acme/ops"),
        "{body}"
    );
    assert!(!body.contains("@alice"), "{body}");
    assert!(body.contains("bob@example.com"), "{body}");
    // Asked for: kept as written.
    let config = env.root().join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str("mentions = true\n");
    std::fs::write(&config, text).expect("config");
    env.ok(
        t + 200,
        &[
            "clarify",
            "answer",
            &id,
            "--from=architect",
            "--body=Ask @carol.",
        ],
    );
    env.send(t + 300);
    let body = env.hub.marked(&id)[0]["body"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(body.contains("@alice") && body.contains("@carol"), "{body}");
    env.finish();
}

#[test]
fn mentions_in_ledger_text_are_neutralised() {
    mentions(Kept::Files);
}

#[test]
fn mentions_in_ledger_text_are_neutralised_on_postgresql() {
    mentions(Kept::Pg);
}

/// The first sync of a workspace whose issues have no comments (issue 51: on PostgreSQL it
/// left an empty `github` row, and every later sync was `LEDGER_CORRUPT`), then more syncs, a
/// delivery pass and the outbox's status, on both stores. GitHub refuses the first comment
/// (rate limit), so nothing but the sync itself touches the sync state before the second one.
fn empty_state(kept: Kept) {
    let env = Env::on(Way::Api, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 5, "Empty", &[]);
    env.hub.control(
        "POST",
        "/_standin/ratelimit",
        &json!({"count": 1, "reset": t / 1000, "match": "POST /repos/acme/app/issues/5/comments"}),
    );
    let first = env.run(t + 100, &["github", "sync"]);
    let v = first.json();
    assert_eq!(v["sync"]["comments"], 0, "{v}");
    assert_eq!(v["sync"]["errors"], json!([]), "{v}");
    assert_eq!(env.sync_state(), Value::Null, "nothing to remember yet");
    if let Some(url) = &env.pg {
        let rows = agentx_clarify_tests::pg::psql(
            url,
            "SELECT count(*) FROM agentx.state_docs WHERE name = 'github'",
        );
        assert_eq!(rows.trim(), "0", "no empty row");
    }
    // After the failed try's backoff (10 s).
    let second = env.run(t + 20_000, &["github", "sync"]);
    assert_eq!(second.code, 0, "the second sync: {second:#?}");
    let v = second.json();
    assert_eq!(v["sync"]["errors"], json!([]), "{v}");
    assert_eq!(v["delivered"], 1, "{v}");
    assert_eq!(env.hub.marked(&id).len(), 1, "the sync sent the comment");
    let status = env.ok(t + 20_100, &["notify", "status"]);
    assert_eq!(status["deliveries"], json!([]), "{status}");
    env.hub.role("ann", "write");
    env.ok(
        t + 20_200,
        &["clarify", "escalate", &id, "-m=Needs a person."],
    );
    env.hub.comment(5, "ann", &format!("/resolve {id} Done."));
    let out = env.sync(t + 20_300);
    assert_eq!(
        out["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    env.finish();
}

#[test]
fn the_first_sync_of_issues_without_comments() {
    empty_state(Kept::Files);
}

#[test]
fn the_first_sync_of_issues_without_comments_on_postgresql() {
    empty_state(Kept::Pg);
}

/// `/resolve` of a closed choice (`allowOther = false`) with a note alone is refused as the
/// web form and the CLI refuse it (issue 52: a note is not a decision between options), and
/// the ledger is left as it was; with an option first it records the value and the note.
fn closed_choices(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let id = blocking_ask(
        &env,
        t,
        42,
        "Cache",
        &[
            "--kind=choice",
            "--option=redis=Redis",
            "--option=lru=In-process LRU",
            "--no-other",
        ],
    );
    env.send(t + 100);
    env.hub.role("mia", "maintain");
    let before = env.record(42, &id);
    let note = env
        .hub
        .comment(42, "mia", &format!("/resolve {id} see ADR-7"));
    let out = env.sync(t + 1000);
    let reason = out["sync"]["refused"][0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(reason.contains("INVALID_ANSWER"), "{out}");
    assert_eq!(env.hub.reactions(&note), ["confused"]);
    assert_eq!(env.record(42, &id), before, "the ledger is unchanged");

    let chosen = env
        .hub
        .comment(42, "mia", &format!("/resolve {id} lru see ADR-7"));
    let out = env.sync(t + 2000);
    assert_eq!(
        out["sync"]["acted"][0]["command"],
        format!("resolve {id}"),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&chosen), ["+1"]);
    let record = env.record(42, &id);
    assert_eq!(record["status"], "resolved", "{record}");
    let last = record["thread"]
        .as_array()
        .and_then(|t| t.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["value"], "lru", "{last}");
    assert_eq!(last["by"], "mia", "{last}");
    assert!(
        last["body"]
            .as_str()
            .is_some_and(|b| b.contains("see ADR-7")),
        "the note is kept: {last}"
    );
    env.finish();
}

#[test]
fn a_note_alone_does_not_decide_a_closed_choice() {
    closed_choices(Kept::Files);
}

#[test]
fn a_note_alone_does_not_decide_a_closed_choice_on_postgresql() {
    closed_choices(Kept::Pg);
}

/// With people (docs/protocol.md §37): a commenter is the person whose `github =` is their
/// login, and needs both the repository permission and to be among the record's deciders; a
/// refusal's reply names who may decide. A login no person claims is refused, even one that
/// spells a person's name.
fn people_decide(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    std::fs::write(
        env.root().join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\ngithub = \"Alice-GH\"\n\n[people.bob]\ngithub = \"bob-gh\"\n",
    )
    .unwrap();
    let mut config = std::fs::read_to_string(env.root().join(".agentx/config.toml")).unwrap();
    config.push_str("\n[people]\ndefault_deciders = [\"role:lead\"]\n");
    std::fs::write(env.root().join(".agentx/config.toml"), config).unwrap();
    let id = blocking_ask(&env, t, 42, "Cache", &[]);
    let up = env.ok(
        t + 10,
        &["clarify", "escalate", &id, "-m", "a lead decides"],
    );
    assert_eq!(up["clarification"]["assigned"], json!(["alice"]), "{up}");
    env.send(t + 100);
    for login in ["alice-gh", "bob-gh", "alice"] {
        env.hub.role(login, "maintain");
    }

    // bob has the permission but is not a decider: refused, the reply names alice.
    let by_bob = env
        .hub
        .comment(42, "bob-gh", &format!("/resolve {id} redis"));
    let out = env.sync(t + 1000);
    let reason = out["sync"]["refused"][0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(reason.contains("NOT_ALLOWED"), "{out}");
    assert!(reason.contains("it is assigned to alice"), "{out}");
    assert_eq!(env.hub.reactions(&by_bob), ["confused"]);
    let said = replies(&env, 42);
    assert_eq!(said.len(), 1, "{said:#?}");
    let reply = said[0]["body"].as_str().unwrap_or("");
    assert!(reply.contains("only they may decide it"), "{reply}");

    // A login that spells a person's name is no proof of being them.
    let impostor = env.hub.comment(42, "alice", &format!("/resolve {id} lru"));
    let out = env.sync(t + 2000);
    let reason = out["sync"]["refused"][0]["reason"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        reason.contains("is no person of .agentx/people.toml"),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&impostor), ["confused"]);
    assert_eq!(env.record(42, &id)["status"], "escalated");

    // alice's login (any case) decides, as alice.
    let by_alice = env.hub.comment(
        42,
        "alice-gh",
        &format!("/resolve {id} redis, with LRU eviction"),
    );
    let out = env.sync(t + 3000);
    assert_eq!(
        out["sync"]["acted"][0]["command"],
        format!("resolve {id}"),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&by_alice), ["+1"]);
    let record = env.record(42, &id);
    assert_eq!(record["status"], "resolved", "{record}");
    let last = record["thread"]
        .as_array()
        .and_then(|t| t.last())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (last["by"].as_str(), last["via"].as_str()),
        (Some("alice"), Some("github"))
    );
    env.finish();
}

#[test]
fn with_people_a_login_maps_to_a_person_who_must_be_a_decider() {
    people_decide(Kept::Files);
}

#[test]
fn with_people_a_login_maps_to_a_person_who_must_be_a_decider_on_postgresql() {
    people_decide(Kept::Pg);
}
