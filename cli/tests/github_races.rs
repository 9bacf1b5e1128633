//! GitHub Mode with several deliverers and syncs at once (issue 50), against the stand-in
//! checked by GitHub's OpenAPI description (tests/github/standin.py), listing comments slowly
//! as GitHub does under load: one comment per clarification between two deliverers and
//! between a server and a cron `notify send`, on files and PostgreSQL; one reaction per
//! handled comment with two servers syncing at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod github_hub;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use github_hub::*;
use serde_json::{json, Value};

/// Every comment listing answers `seconds` late (the read done when asked).
fn slow_listing(env: &Env, seconds: f64) {
    env.hub.control(
        "POST",
        "/_standin/slow",
        &json!({"match": "GET /repos/acme/app/issues/", "seconds": seconds}),
    );
}

fn spawn(env: &Env, now: i64, args: &[&str]) -> Child {
    env.command(now, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agentx runs")
}

fn finish(child: Child) -> Out {
    Out::from_output(&child.wait_with_output().expect("wait"))
}

/// Waits until the stand-in has been asked for `n` comment listings in all.
fn wait_for_listings(env: &Env, n: usize) {
    // A bound against hanging, not a figure: a debug server starting beside seven other
    // tests' servers (and a build) took over 30 s to reach its first listing.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let listed = env.hub.state()["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .filter(|r| {
                r["method"] == "GET" && r["path"].as_str().is_some_and(|p| p.ends_with("/comments"))
            })
            .count();
        if listed >= n {
            return;
        }
        assert!(Instant::now() < deadline, "no listing started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Each record has exactly one comment, the hub's, and it shows the record's last answer.
fn assert_one_comment_each(env: &Env, ids: &[(u32, String)], answer: &str) {
    for (issue, id) in ids {
        let comments = env.hub.marked(id);
        assert_eq!(
            comments.len(),
            1,
            "{id}: one comment, not {}: {comments:#?}\ndeleted: {}",
            comments.len(),
            env.hub.state()["deleted"]
        );
        assert_eq!(comments[0]["login"], "tester");
        assert_eq!(comments[0]["issue"], *issue);
        let body = comments[0]["body"].as_str().unwrap_or("");
        assert!(body.contains(answer), "{id}: {body}");
    }
}

/// Records on four issues; deliverer A starts sending their first versions (its listings
/// slow), an answer makes each a second version, and deliverer B starts while A still sends:
/// without the record's comment held by one deliverer, both found no comment and both
/// created one.
fn two_deliverers(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let ids: Vec<(u32, String)> = (21..25)
        .map(|issue| (issue, blocking_ask(&env, t, issue, "Race", &[])))
        .collect();
    slow_listing(&env, 1.5);
    let a = spawn(&env, t + 100, &["notify", "send"]);
    wait_for_listings(&env, 1);
    for (i, (_, id)) in ids.iter().enumerate() {
        let at = t + 200 + i64::try_from(i).unwrap_or(0);
        env.ok(
            at,
            &[
                "clarify",
                "answer",
                id,
                "--from=architect",
                "--body=Answered.",
            ],
        );
    }
    let b = spawn(&env, t + 300, &["notify", "send"]);
    for out in [finish(a), finish(b)] {
        assert_eq!(out.code, 0, "{out:#?}");
    }
    // What is still owed (a version the first deliverer held back) goes out now.
    env.send(t + 400);
    assert_one_comment_each(&env, &ids, "Answered.");
    assert_eq!(
        env.hub.state()["deleted"],
        json!([]),
        "no copy was made to delete"
    );
    let status = env.ok(t + 500, &["notify", "status"]);
    assert_eq!(status["deliveries"], json!([]), "{status}");
    env.finish();
}

#[test]
fn two_deliverers_make_one_comment_per_record() {
    two_deliverers(Kept::Files);
}

#[test]
fn two_deliverers_make_one_comment_per_record_on_postgresql() {
    two_deliverers(Kept::Pg);
}

/// `agentx serve`'s deliverer and a cron `notify send` side by side: the server's first pass
/// lists the first record's comments (GitHub answering late) when an answer makes a second
/// version of it, and the cron starts sending that version while the server still waits.
/// (The server's sync lists the issue at start as well; it waits too.)
fn server_and_cron(kept: Kept) {
    let env = Env::on(Way::Api, kept);
    let t = now0();
    let ids: Vec<(u32, String)> = (31..34)
        .map(|issue| (issue, blocking_ask(&env, t, issue, "Cron", &[])))
        .collect();
    // The server's sync at start reads issue #31 too: both its first listings answer late.
    for _ in 0..2 {
        env.hub.control(
            "POST",
            "/_standin/hang",
            &json!({"match": "GET /repos/acme/app/issues/31/comments", "seconds": 8}),
        );
    }
    let mut server = env
        .command(t, &["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentx serve");
    wait_for_listings(&env, 2);
    // The server's clock, to the millisecond (now0() is whole seconds: a cron a moment
    // behind the server's first pass would find nothing due yet).
    let answer = |id: &str| {
        env.ok(
            wall_ms(),
            &[
                "clarify",
                "answer",
                id,
                "--from=architect",
                "--body=From cron.",
            ],
        );
    };
    let (_, first) = &ids[0];
    answer(first);
    let cron = spawn(&env, wall_ms(), &["notify", "send"]);
    for (_, id) in &ids[1..] {
        answer(id);
    }
    let cron = finish(cron);
    assert_eq!(cron.code, 0, "{cron:#?}");
    // At least the first answer's version; the answers written while the cron ran may be
    // owed to it as well (on a loaded machine its scan came after the second one).
    let added = cron.json()["added"].as_u64().unwrap_or(0);
    assert!(
        (1..=ids.len() as u64).contains(&added),
        "the cron owes the new version: {cron:#?}"
    );
    // The server sends every version in the end (its deliverer wakes when a hold ends), and
    // nothing is owed any more.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let shown = ids.iter().all(|(_, id)| {
            env.hub
                .marked(id)
                .iter()
                .any(|c| c["body"].as_str().is_some_and(|b| b.contains("From cron.")))
        });
        let owed = env.ok(now0(), &["notify", "status"])["deliveries"].clone();
        if shown && owed == json!([]) {
            break;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            panic!(
                "not every comment was sent: {:#?}",
                env.hub.state()["comments"]
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = server.kill();
    let _ = server.wait();
    assert_one_comment_each(&env, &ids, "From cron.");
    env.finish();
}

#[test]
fn a_server_and_a_cron_make_one_comment_per_record() {
    server_and_cron(Kept::Files);
}

#[test]
fn a_server_and_a_cron_make_one_comment_per_record_on_postgresql() {
    server_and_cron(Kept::Pg);
}

/// Two servers on one store sync at start, at once: each comment is answered once — one 👍
/// per acted comment, one 😕 and one reply per refused one — and acts once.
fn two_servers(way: Way, kept: Kept) {
    let env = Env::on(way, kept);
    let t = now0();
    env.hub.role("ann", "write");
    env.hub.role("rob", "read");
    let mut taken: Vec<(u32, String, Value)> = Vec::new();
    let mut refused: Vec<Value> = Vec::new();
    for issue in 41..45 {
        let id = blocking_ask(&env, t, issue, "Servers", &[]);
        env.ok(t + 10, &["clarify", "escalate", &id, "-m=Needs a person."]);
        refused.push(env.hub.comment(issue, "rob", &format!("/resolve {id} no")));
        let c = env
            .hub
            .comment(issue, "ann", &format!("/resolve {id} Ship it."));
        taken.push((issue, id, c));
    }
    // Both servers' syncs read the same comments at about the same time.
    slow_listing(&env, 1.0);
    let servers: Vec<Child> = (0..2)
        .map(|_| {
            env.command(t, &["serve", "--listen", "127.0.0.1:0"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("agentx serve")
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let answered = taken
            .iter()
            .all(|(_, _, c)| !env.hub.reactions(c).is_empty())
            && refused.iter().all(|c| !env.hub.reactions(c).is_empty());
        if answered {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not every comment was answered: {:#?}",
            env.hub.state()["reactions"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // A moment for a second server's late duplicate (and the replies) to show.
    std::thread::sleep(Duration::from_secs(5));
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    for (issue, id, c) in &taken {
        assert_eq!(env.hub.reaction_posts(c), 1, "{id}: one 👍 asked for");
        let record = env.record(*issue, id);
        assert_eq!(record["status"], "resolved");
        let from_comment = record["thread"]
            .as_array()
            .expect("thread")
            .iter()
            .filter(|e| e["ref"] == c["html_url"])
            .count();
        assert_eq!(from_comment, 1, "{id} acted once");
    }
    for (c, issue) in refused.iter().zip(41..45) {
        assert_eq!(env.hub.reaction_posts(c), 1, "one 😕 asked for");
        let replies = env
            .hub
            .comments_by(issue, "tester")
            .into_iter()
            .filter(|c| {
                c["body"]
                    .as_str()
                    .is_some_and(|b| b.starts_with("<!-- agentx:reply -->"))
            })
            .count();
        assert_eq!(replies, 1, "issue #{issue}: one reply");
    }
    env.finish();
}

#[test]
fn two_servers_answer_each_comment_once() {
    two_servers(Way::Api, Kept::Files);
}

#[test]
fn two_servers_answer_each_comment_once_on_postgresql() {
    two_servers(Way::Api, Kept::Pg);
}

/// Issue 51: GitHub Mode on PostgreSQL with two replicas through the real `gh` (against the
/// OpenAPI-checked stand-in), each comment acted on once.
#[test]
fn two_servers_answer_each_comment_once_through_gh_on_postgresql() {
    two_servers(Way::Gh, Kept::Pg);
}

/// Two syncs at once after a sync died between writing a decision and remembering it: both
/// find the comment's entry in the ledger; one gives it its 👍.
fn two_syncs_after_a_crash(kept: Kept) {
    let env = Env::on(Way::Api, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 13, "Crash", &[]);
    // Another open record: the issue is still read after the first is resolved.
    blocking_ask(&env, t + 1, 13, "Still open", &[]);
    env.ok(t + 10, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.hub.role("ann", "admin");
    let c = env.hub.comment(13, "ann", &format!("/resolve {id} Go."));
    let first = env.sync(t + 1000);
    assert_eq!(first["sync"]["acted"].as_array().map(Vec::len), Some(1));
    env.forget_sync_state();
    let before = env.hub.reaction_posts(&c);
    slow_listing(&env, 1.0);
    let children = [
        spawn(&env, t + 2000, &["github", "sync"]),
        spawn(&env, t + 2000, &["github", "sync"]),
    ];
    for child in children {
        let out = finish(child);
        assert_eq!(out.code, 0, "{out:#?}");
    }
    assert_eq!(
        env.hub.reaction_posts(&c) - before,
        1,
        "one of the two gives the reaction"
    );
    env.finish();
}

#[test]
fn two_syncs_after_a_crash_react_once() {
    two_syncs_after_a_crash(Kept::Files);
}

#[test]
fn two_syncs_after_a_crash_react_once_on_postgresql() {
    two_syncs_after_a_crash(Kept::Pg);
}
