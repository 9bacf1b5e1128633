//! GitHub Mode (docs/github.md) against a local stand-in of GitHub's REST API
//! (tests/github/standin.py) that checks every request and response against GitHub's published
//! OpenAPI description (npm `@octokit/openapi`): once through the real `gh` program (Debian's
//! `gh`, pointed at the stand-in's Unix socket by `http_unix_socket`), once with `via = "api"`
//! (REST on 127.0.0.1 with a token from the environment). Every test ends by requiring that
//! the stand-in saw no mismatch, and that the token appears in no output and no file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod github_hub;

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use github_hub::*;
use serde_json::{json, Value};

fn out_one_comment_per_record_and_labels(way: Way, kept: Kept) {
    let env = Env::on(way, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 42, "Cache", &[]);
    let sent = env.send(t + 1000);
    assert_eq!(sent["delivered"], 1, "{sent}");
    let first = env.hub.marked(&id);
    assert_eq!(first.len(), 1, "one comment");
    let body = first[0]["body"].as_str().unwrap_or("");
    assert!(
        body.contains("What about Cache?") && body.contains(&format!("/resolve {id}")),
        "{body}"
    );
    assert_eq!(
        env.hub.labels(42),
        [LABEL],
        "an open BLOCK record labels its issue"
    );

    // Many updates: each one edits the same comment.
    let mut now = t + 2000;
    env.ok(
        now,
        &[
            "clarify",
            "answer",
            &id,
            "--from=architect",
            "--body=Redis, probably.",
        ],
    );
    env.send(now + 500);
    for round in 0..2 {
        now += 10_000;
        env.ok(
            now,
            &[
                "clarify",
                "follow-up",
                &id,
                "--from=engineer",
                &format!("--question=Which TTL, take {round}?"),
            ],
        );
        env.send(now + 500);
        now += 10_000;
        env.ok(
            now,
            &[
                "clarify",
                "answer",
                &id,
                "--from=architect",
                &format!("--body=TTL {round}0 s."),
            ],
        );
        env.send(now + 500);
    }
    let comments = env.hub.marked(&id);
    assert_eq!(comments.len(), 1, "still one comment after every update");
    assert!(comments[0]["body"]
        .as_str()
        .unwrap_or("")
        .contains("TTL 10 s."));
    assert_eq!(
        env.hub
            .requests("POST", "/repos/acme/app/issues/42/comments"),
        1,
        "created once"
    );
    assert!(
        env.hub.requests(
            "PATCH",
            &format!("/repos/acme/app/issues/comments/{}", comments[0]["id"])
        ) >= 5
    );
    // The deliveries are the outbox's (`notify status` lists the pending ones: see the crash
    // and rate-limit tests); all were delivered.
    let status = env.ok(now + 600, &["notify", "status"]);
    assert_eq!(status["deliveries"], json!([]), "{status}");

    // A second record on the issue: its own comment.
    let other = blocking_ask(&env, now + 1000, 42, "Queue", &["--non-blocking"]);
    env.send(now + 1500);
    assert_eq!(env.hub.marked(&other).len(), 1);
    assert_eq!(env.hub.marked(&id).len(), 1);

    // Closed: the label goes.
    env.ok(
        now + 2000,
        &[
            "clarify",
            "resolve",
            &id,
            "--from=engineer",
            "-m=Redis with a 10 s TTL.",
        ],
    );
    env.send(now + 2500);
    assert!(
        env.hub.labels(42).is_empty(),
        "no open BLOCK record: no label"
    );
    let body = env.hub.marked(&id)[0]["body"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        body.contains("resolved") && body.contains("commands on it are refused"),
        "{body}"
    );
    env.finish();
}

fn crash_between_create_and_record(way: Way, kept: Kept) {
    let env = Env::on(way, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 7, "Schema", &[]);
    // The stand-in creates the comment, then holds the answer: the deliverer is killed after
    // its POST and before it could record the delivery.
    env.hub.control(
        "POST",
        "/_standin/hang",
        &json!({"match": "POST /repos/acme/app/issues/7/comments", "seconds": 8}),
    );
    let mut child = env
        .command(t + 1000, &["notify", "send"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentx runs");
    let deadline = Instant::now() + Duration::from_secs(20);
    while env.hub.marked(&id).is_empty() {
        assert!(Instant::now() < deadline, "the comment was not created");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill the deliverer");
    let _ = child.wait();
    let status = env.ok(t + 2000, &["notify", "status"]);
    assert!(
        status.to_string().contains("\"sink\":\"github\""),
        "{status}"
    );
    // Its lease runs out (2 min); the next deliverer finds the comment by its marker.
    let sent = env.send(t + 200_000);
    assert_eq!(sent["delivered"], 1, "{sent}");
    assert_eq!(env.hub.marked(&id).len(), 1, "never a second comment");
    assert_eq!(
        env.hub
            .requests("POST", "/repos/acme/app/issues/7/comments"),
        1
    );
    env.finish();
}

fn sync_resolve_abandon_permissions(way: Way, kept: Kept) {
    let env = Env::on(way, kept);
    let t = now0();
    let id = blocking_ask(
        &env,
        t,
        42,
        "Cache",
        &["--kind=choice", "--option=redis", "--option=memcached"],
    );
    let second = blocking_ask(&env, t + 10, 42, "Queue", &[]);
    env.ok(t + 100, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.send(t + 200);
    env.hub.role("ann", "write");
    env.hub.role("rob", "read");
    env.hub.role("mia", "maintain");

    let chatter = env.hub.comment(42, "rob", "Looks good to me");
    let refused = env
        .hub
        .comment(42, "rob", &format!("/resolve {id} memcached"));
    let wrong = env.hub.comment(42, "ann", "/resolve CLR-99-001 redis");
    let stranger = env.hub.comment(42, "zed", &format!("/resolve {id} redis"));
    let taken = env.hub.comment(
        42,
        "ann",
        &format!("/resolve {id} redis because it is already deployed"),
    );
    let sync = env.sync(t + 1000);
    let acted = sync["sync"]["acted"].as_array().expect("acted");
    let refusals = sync["sync"]["refused"].as_array().expect("refused");
    assert_eq!(acted.len(), 1, "{sync}");
    assert_eq!(acted[0]["login"], "ann");
    assert_eq!(refusals.len(), 3, "{sync}");
    assert!(
        refusals.iter().any(|r| r["login"] == "zed"
            && r["reason"]
                .as_str()
                .unwrap_or("")
                .contains("permission 'none'")),
        "not a collaborator (404): {sync}"
    );
    assert!(
        refusals.iter().any(|r| r["login"] == "rob"
            && r["reason"]
                .as_str()
                .unwrap_or("")
                .contains("permission 'read'")),
        "{sync}"
    );
    assert!(
        refusals
            .iter()
            .any(|r| r["reason"].as_str().unwrap_or("").contains("issue #99")),
        "{sync}"
    );
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    assert_eq!(env.hub.reactions(&refused), ["confused"]);
    assert_eq!(env.hub.reactions(&wrong), ["confused"]);
    assert_eq!(env.hub.reactions(&stranger), ["confused"]);
    assert!(env.hub.reactions(&chatter).is_empty());

    // The decision is ann's entry, through GitHub, with the comment's address.
    let record = env.record(42, &id);
    assert_eq!(record["status"], "resolved");
    let last = record["thread"]
        .as_array()
        .expect("thread")
        .last()
        .expect("entry")
        .clone();
    assert_eq!(last["from"], "human");
    assert_eq!(last["by"], "ann");
    assert_eq!(last["via"], "github");
    assert_eq!(last["ref"], taken["html_url"]);
    assert_eq!(last["value"], "redis");
    // The comment says so (the sync sent the update).
    let body = env.hub.marked(&id)[0]["body"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(body.contains("resolved"), "{body}");

    // Sync again: nothing acts twice, no reaction is added again.
    let reactions_before = env.hub.reaction_posts(&taken);
    assert_eq!(reactions_before, 1, "one reaction asked for");
    let again = env.sync(t + 2000);
    assert!(
        again["sync"]["acted"].as_array().expect("acted").is_empty(),
        "{again}"
    );
    assert!(
        again["sync"]["refused"]
            .as_array()
            .expect("refused")
            .is_empty(),
        "{again}"
    );
    assert_eq!(env.hub.reaction_posts(&taken), reactions_before);

    // Edited after it acted: nothing more happens.
    env.hub.control(
        "POST",
        "/_standin/edit",
        &json!({"id": taken["id"], "body": format!("/abandon {second} changed my mind")}),
    );
    let before = env.ledger(42);
    let edited = env.sync(t + 3000);
    assert!(
        edited["sync"]["acted"]
            .as_array()
            .expect("acted")
            .is_empty(),
        "{edited}"
    );
    assert_eq!(env.ledger(42), before, "the ledger did not change");

    // The core's rules hold as from any surface: a closed record refuses everything
    // (the issue is read while `second` is open).
    let late = env
        .hub
        .comment(42, "mia", &format!("/abandon {id} too late"));
    let out = env.sync(t + 3500);
    assert!(
        out["sync"]["refused"][0]["reason"]
            .as_str()
            .unwrap_or("")
            .starts_with("INVALID_TRANSITION"),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&late), ["confused"]);

    // /abandon by a maintainer, on a record still pending: taken first, as /resolve does.
    let gone = env
        .hub
        .comment(42, "mia", &format!("/abandon {second} not needed any more"));
    let out = env.sync(t + 4000);
    assert_eq!(
        out["sync"]["acted"][0]["command"],
        format!("abandon {second}"),
        "{out}"
    );
    assert_eq!(env.hub.reactions(&gone), ["+1"]);
    let record = env.record(42, &second);
    assert_eq!(record["status"], "abandoned");
    let thread = record["thread"].as_array().expect("thread");
    let last_two = thread.get(thread.len() - 2..).expect("two entries");
    assert_eq!(last_two[0]["body"], "taken by mia");
    assert_eq!(last_two[1]["body"], "not needed any more");
    for e in last_two {
        assert_eq!(
            (e["by"].as_str(), e["via"].as_str(), e["ref"].as_str()),
            (Some("mia"), Some("github"), gone["html_url"].as_str())
        );
    }
    env.finish();
}

fn pagination(way: Way, kept: Kept) {
    let env = Env::on(way, kept);
    env.hub
        .control("POST", "/_standin/pagesize", &json!({"size": 5}));
    for i in 0..12 {
        env.hub.comment(5, "rob", &format!("chatter {i}"));
    }
    let t = now0();
    let id = blocking_ask(&env, t, 5, "Paging", &[]);
    env.send(t + 100);
    env.ok(
        t + 200,
        &[
            "clarify",
            "answer",
            &id,
            "--from=architect",
            "--body=Page three.",
        ],
    );
    env.send(t + 300);
    // The comment is on the third page: found there, edited, never created twice.
    assert_eq!(env.hub.marked(&id).len(), 1);
    assert_eq!(
        env.hub
            .requests("POST", "/repos/acme/app/issues/5/comments"),
        1
    );
    env.hub.role("ann", "admin");
    for i in 0..4 {
        env.hub.comment(5, "rob", &format!("more chatter {i}"));
    }
    let taken = env
        .hub
        .comment(5, "ann", &format!("/resolve {id} Page three it is."));
    let sync = env.sync(t + 400);
    assert_eq!(sync["sync"]["comments"], 18, "every page read: {sync}");
    assert_eq!(
        sync["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{sync}"
    );
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    let pages: Vec<Value> = env.hub.state()["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .filter(|r| {
            r["method"] == "GET"
                && r["path"] == "/repos/acme/app/issues/5/comments"
                && r["query"]["page"] == "4"
        })
        .cloned()
        .collect();
    assert!(!pages.is_empty(), "the fourth page was asked for");
    env.finish();
}

fn rate_limited(way: Way, kept: Kept) {
    let env = Env::on(way, kept);
    let t = now0();
    let reset = t / 1000 + 600;
    env.hub.control(
        "POST",
        "/_standin/ratelimit",
        &json!({"count": 1, "reset": reset, "match": "POST /repos/acme/app/issues/9/comments"}),
    );
    let id = blocking_ask(&env, t, 9, "Limits", &[]);
    let first = env.send(t + 100);
    assert_eq!(first["delivered"], 0, "{first}");
    let status = env.ok(t + 200, &["notify", "status"]);
    let text = status.to_string();
    assert!(text.contains("rate limited"), "{text}");
    // Not tried before GitHub's reset time (the backoff alone would retry after 10 s).
    let requests = env.hub.state()["requests"].as_array().map(Vec::len);
    let early = env.send(t + 60_000);
    assert_eq!(early["delivered"], 0, "{early}");
    assert_eq!(
        env.hub.state()["requests"].as_array().map(Vec::len),
        requests,
        "no request before the reset"
    );
    let later = env.send(reset * 1000 + 1000);
    assert_eq!(later["delivered"], 1, "{later}");
    assert_eq!(env.hub.marked(&id).len(), 1);

    // The sync likewise: stopped by the limit, nothing lost, read after the reset.
    env.hub.role("ann", "write");
    let taken = env
        .hub
        .comment(9, "ann", &format!("/resolve {id} Raise the limit."));
    let reset2 = reset + 600;
    env.hub.control(
        "POST",
        "/_standin/ratelimit",
        &json!({"count": 1, "reset": reset2, "match": "GET /repos/acme/app/issues/9/comments"}),
    );
    let stopped = env.sync(reset * 1000 + 2000);
    assert!(
        stopped["sync"]["waitingUntil"].as_i64() == Some(reset2 * 1000),
        "{stopped}"
    );
    assert!(stopped["sync"]["acted"]
        .as_array()
        .expect("acted")
        .is_empty());
    let requests = env.hub.state()["requests"].as_array().map(Vec::len);
    let waiting = env.sync(reset * 1000 + 3000);
    assert_eq!(
        waiting["sync"]["waitingUntil"].as_i64(),
        Some(reset2 * 1000)
    );
    assert_eq!(
        env.hub.state()["requests"].as_array().map(Vec::len),
        requests,
        "no read before the reset"
    );
    let after = env.sync(reset2 * 1000 + 1000);
    assert_eq!(
        after["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{after}"
    );
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    env.finish();
}

#[test]
fn gh_one_comment_per_record_and_labels() {
    out_one_comment_per_record_and_labels(Way::Gh, Kept::Files);
}

#[test]
fn gh_one_comment_per_record_and_labels_on_postgresql() {
    out_one_comment_per_record_and_labels(Way::Gh, Kept::Pg);
}

#[test]
fn api_one_comment_per_record_and_labels() {
    out_one_comment_per_record_and_labels(Way::Api, Kept::Files);
}

#[test]
fn api_one_comment_per_record_and_labels_on_postgresql() {
    out_one_comment_per_record_and_labels(Way::Api, Kept::Pg);
}

#[test]
fn gh_crash_between_create_and_record_never_duplicates() {
    crash_between_create_and_record(Way::Gh, Kept::Files);
}

#[test]
fn gh_crash_between_create_and_record_never_duplicates_on_postgresql() {
    crash_between_create_and_record(Way::Gh, Kept::Pg);
}

#[test]
fn api_crash_between_create_and_record_never_duplicates() {
    crash_between_create_and_record(Way::Api, Kept::Files);
}

#[test]
fn api_crash_between_create_and_record_never_duplicates_on_postgresql() {
    crash_between_create_and_record(Way::Api, Kept::Pg);
}

#[test]
fn gh_sync_resolve_abandon_and_permissions() {
    sync_resolve_abandon_permissions(Way::Gh, Kept::Files);
}

#[test]
fn gh_sync_resolve_abandon_and_permissions_on_postgresql() {
    sync_resolve_abandon_permissions(Way::Gh, Kept::Pg);
}

#[test]
fn api_sync_resolve_abandon_and_permissions() {
    sync_resolve_abandon_permissions(Way::Api, Kept::Files);
}

#[test]
fn api_sync_resolve_abandon_and_permissions_on_postgresql() {
    sync_resolve_abandon_permissions(Way::Api, Kept::Pg);
}

#[test]
fn gh_pagination() {
    pagination(Way::Gh, Kept::Files);
}

#[test]
fn gh_pagination_on_postgresql() {
    pagination(Way::Gh, Kept::Pg);
}

#[test]
fn api_pagination() {
    pagination(Way::Api, Kept::Files);
}

#[test]
fn api_pagination_on_postgresql() {
    pagination(Way::Api, Kept::Pg);
}

#[test]
fn gh_rate_limited_is_retried_after_the_reset() {
    rate_limited(Way::Gh, Kept::Files);
}

#[test]
fn gh_rate_limited_is_retried_after_the_reset_on_postgresql() {
    rate_limited(Way::Gh, Kept::Pg);
}

#[test]
fn api_rate_limited_is_retried_after_the_reset() {
    rate_limited(Way::Api, Kept::Files);
}

#[test]
fn api_rate_limited_is_retried_after_the_reset_on_postgresql() {
    rate_limited(Way::Api, Kept::Pg);
}

/// The server's worker syncs on its own (at start, then every 60 s) and its deliverer sends the
/// comment: a decision typed on GitHub reaches the ledger with no `agentx github sync`.
#[test]
fn the_servers_worker_takes_decisions_from_github() {
    worker_takes_a_decision(Kept::Files, None);
}

#[test]
fn the_servers_worker_takes_decisions_from_github_on_postgresql() {
    worker_takes_a_decision(Kept::Pg, None);
}

/// The sync at start takes the decision before the feed has its baseline: the deliverer's
/// first pass must come after the baseline, or the write is in neither and the comment waits
/// for the next change (checked: this fails when the workers do not wait for the baseline).
#[test]
fn the_servers_worker_takes_decisions_from_github_when_the_feed_starts_late() {
    worker_takes_a_decision(Kept::Files, Some(1_500));
}

fn worker_takes_a_decision(kept: Kept, feed_late_ms: Option<u64>) {
    let env = Env::on(Way::Api, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 3, "Worker", &[]);
    env.ok(t + 10, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.hub.role("ann", "maintain");
    let taken = env
        .hub
        .comment(3, "ann", &format!("/resolve {id} Ship it."));
    let mut server = env.command(t, &["serve", "--listen", "127.0.0.1:0"]);
    if let Some(ms) = feed_late_ms {
        server.env("AGENTX_TEST_FEED_BASELINE_DELAY_MS", ms.to_string());
    }
    let mut server = server
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("agentx serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    let resolved = loop {
        let record = env.record(3, &id);
        let shown = env.hub.marked(&id);
        let comment_says = shown
            .first()
            .and_then(|c| c["body"].as_str())
            .is_some_and(|b| b.contains("(resolved)"));
        // The reaction follows the decision's write: the comment may be sent before it.
        let reacted = !env.hub.reactions(&taken).is_empty();
        if record["status"] == "resolved" && comment_says && reacted {
            break record;
        }
        if Instant::now() > deadline {
            let _ = server.kill();
            // What the sync kept, so a failure says which part stopped.
            let outbox = env.ok(now0(), &["notify", "status"]);
            panic!(
                "the worker did not take the decision: {record} {shown:?}\noutbox: {outbox}\ngithub: {}",
                env.sync_state()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = server.kill();
    let _ = server.wait();
    let last = resolved["thread"]
        .as_array()
        .expect("thread")
        .last()
        .expect("entry")
        .clone();
    assert_eq!(
        (last["by"].as_str(), last["via"].as_str()),
        (Some("ann"), Some("github"))
    );
    assert_eq!(last["ref"], taken["html_url"]);
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    assert_eq!(env.hub.reaction_posts(&taken), 1);
    env.finish();
}

/// The checker itself: a request or a response that GitHub's description does not allow is
/// recorded as a violation (so the other tests' empty lists mean something).
#[test]
fn the_stand_in_catches_what_github_would_not_accept_or_send() {
    let hub = StandIn::start();
    let raw = |method: &str, path: &str, body: &str| {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", hub.port)).expect("connect");
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token {TOKEN}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("read");
        out
    };
    let violations = || {
        hub.state()["violations"]
            .as_array()
            .expect("violations")
            .len()
    };
    assert_eq!(violations(), 0);
    raw(
        "POST",
        "/repos/acme/app/issues/1/comments",
        r#"{"bod": "x"}"#,
    );
    assert_eq!(violations(), 1, "a body without `body`");
    raw("GET", "/repos/acme/app/issues/1/comments?per_pag=5", "");
    assert_eq!(violations(), 2, "an undocumented query parameter");
    raw("PUT", "/repos/acme/app/issues/comments/1", "");
    assert_eq!(violations(), 3, "an operation GitHub does not have");
    raw("GET", "/repos/acme/app/issues/x/comments", "");
    assert_eq!(violations(), 4, "issue_number must be an integer");
    hub.comment(1, "ann", "hello");
    hub.control(
        "POST",
        "/_standin/corrupt",
        &json!({"match": "GET /repos/acme/app/issues/1/comments"}),
    );
    raw("GET", "/repos/acme/app/issues/1/comments", "");
    let state = hub.state();
    let last = state["violations"]
        .as_array()
        .expect("violations")
        .last()
        .cloned();
    assert!(
        last.as_ref()
            .and_then(Value::as_str)
            .is_some_and(|v| v.contains("html_url")),
        "a response without a required field: {last:?}"
    );
}

/// Setup mistakes are said plainly: GitHub Mode off, the token's variable unset, a bad table.
#[test]
fn setup_mistakes_are_said_plainly() {
    let ws = workspace();
    let out = json_in(ws.path(), &["github", "sync"]);
    let v = assert_fails(&out, 3, "INVALID_INPUT");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("[github]"),
        "{v}"
    );

    write_config(
        ws.path(),
        "[github]\nrepo = \"acme/app\"\nvia = \"api\"\ntoken_env = \"AGENTX_UNSET_GH_TOKEN\"\napi_url = \"http://127.0.0.1:9\"\n",
    );
    ask(ws.path(), now0(), 42, "Cache", "Redis?");
    let mut cmd = agentx();
    cmd.arg(root_arg(ws.path()))
        .args(["--json", "github", "sync"])
        .env_remove("AGENTX_UNSET_GH_TOKEN");
    let out = Out::from_output(&cmd.output().expect("agentx runs"));
    // The settings name a variable that is not set: the settings' fault (issue 49).
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("AGENTX_UNSET_GH_TOKEN"),
        "{v}"
    );

    write_config(
        ws.path(),
        "[github]\nrepo = \"acme/app\"\nanswer_role = [\"write\"]\n",
    );
    let out = json_in(ws.path(), &["github", "sync"]);
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("answer_roles"),
        "nearest key: {v}"
    );

    // A workspace whose state is in a PostgreSQL database that cannot be reached: the store's
    // error, naming the database (no GitHub server is asked).
    write_config(
        ws.path(),
        "[store]\nurl = \"postgresql://127.0.0.1:1/none\"\n\n[github]\nrepo = \"acme/app\"\n",
    );
    let out = json_in(ws.path(), &["github", "sync"]);
    let v = assert_fails(&out, 1, "IO_ERROR");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("127.0.0.1:1"),
        "{v}"
    );
}

/// GitHub Mode with the state in PostgreSQL: the comment goes out from the shared outbox, a
/// person's `/resolve` comes back in, the sync cursors are a row of `agentx.state_docs` (no
/// file), and a second sync acts on nothing.
#[test]
fn github_mode_with_the_state_in_postgresql() {
    let url = agentx_clarify_tests::pg::fresh_database("github");
    let env = Env::with_store(Way::Api, Some(&url));
    env.ok(now0(), &["store", "init"]);
    let t = now0();
    let id = blocking_ask(&env, t, 7, "Cache", &[]);
    env.ok(t + 100, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.send(t + 200);
    assert_eq!(env.hub.marked(&id).len(), 1, "one comment out");
    env.hub.role("ann", "write");
    let taken = env
        .hub
        .comment(7, "ann", &format!("/resolve {id} Use redis."));
    let sync = env.sync(t + 1000);
    assert_eq!(
        sync["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{sync}"
    );
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    let shown = env.ok(t + 1100, &["clarify", "show", &id]);
    let record = &shown["clarification"];
    assert_eq!(record["status"], "resolved", "{shown}");
    assert!(
        !env.root().join(".agentx/state/github.json").exists(),
        "the sync state is the database's"
    );
    let doc = agentx_clarify_tests::pg::psql(
        &url,
        "SELECT count(*) FROM agentx.state_docs WHERE name = 'github'",
    );
    assert_eq!(doc.trim(), "1", "{doc}");
    let again = env.sync(t + 2000);
    assert_eq!(
        again["sync"]["acted"].as_array().map(Vec::len),
        Some(0),
        "{again}"
    );
    env.finish();
}

/// Two syncs at once (a cron's and the server's) on the same comment: it acts once, and the
/// one that lost the race does not call it refused.
#[test]
fn two_syncs_at_once_act_once() {
    two_syncs_at_once(Kept::Files);
}

#[test]
fn two_syncs_at_once_act_once_on_postgresql() {
    two_syncs_at_once(Kept::Pg);
}

fn two_syncs_at_once(kept: Kept) {
    let env = Env::on(Way::Api, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 11, "Race", &[]);
    env.ok(t + 10, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.hub.role("ann", "write");
    let taken = env.hub.comment(11, "ann", &format!("/resolve {id} Go."));
    for round in 0..3 {
        let children: Vec<_> = (0..2)
            .map(|_| {
                env.command(t + 1000 + round, &["github", "sync"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("agentx runs")
            })
            .collect();
        let outs: Vec<Out> = children
            .into_iter()
            .map(|c| Out::from_output(&c.wait_with_output().expect("wait")))
            .collect();
        for out in &outs {
            assert_eq!(out.code, 0, "{out:#?}");
            let v = out.json();
            assert!(
                v["sync"]["refused"].as_array().is_some_and(Vec::is_empty),
                "{v}"
            );
        }
    }
    let ledger = env.ledger(11);
    let thread = ledger["clarifications"][0]["thread"]
        .as_array()
        .expect("thread")
        .clone();
    let from_comment = thread
        .iter()
        .filter(|e| e["ref"] == taken["html_url"])
        .count();
    assert_eq!(from_comment, 1, "one entry from the comment: {thread:#?}");
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    assert_eq!(env.hub.reaction_posts(&taken), 1, "one reaction asked for");
    env.finish();
}

/// A sync that died after writing the decision and before remembering the comment (its state
/// file lost): the next one finds the comment's `ref` in the ledger and does not act again.
#[test]
fn a_sync_that_died_before_remembering_does_not_act_twice() {
    died_before_remembering(Kept::Files);
}

#[test]
fn a_sync_that_died_before_remembering_does_not_act_twice_on_postgresql() {
    died_before_remembering(Kept::Pg);
}

fn died_before_remembering(kept: Kept) {
    let env = Env::on(Way::Gh, kept);
    let t = now0();
    let id = blocking_ask(&env, t, 12, "Crash", &[]);
    env.ok(t + 10, &["clarify", "escalate", &id, "-m=Needs a person."]);
    env.hub.role("ann", "admin");
    let taken = env.hub.comment(12, "ann", &format!("/resolve {id} Go."));
    let first = env.sync(t + 1000);
    assert_eq!(
        first["sync"]["acted"].as_array().map(Vec::len),
        Some(1),
        "{first}"
    );
    env.forget_sync_state();
    let ledger = env.ledger(12);
    let again = env.sync(t + 2000);
    assert!(
        again["sync"]["acted"].as_array().is_some_and(Vec::is_empty),
        "{again}"
    );
    assert!(
        again["sync"]["refused"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "{again}"
    );
    assert_eq!(env.ledger(12), ledger);
    assert_eq!(env.hub.reactions(&taken), ["+1"]);
    env.finish();
}

#[test]
fn without_gh_the_error_suggests_via_api() {
    // Issue 49: "could not start gh" left a newcomer without gh guessing what to do.
    let ws = workspace();
    write_config(ws.path(), "[github]\nrepo = \"acme/app\"\n");
    ask(ws.path(), now0(), 42, "Cache", "Redis?");
    let empty = tempfile::tempdir().expect("tempdir");
    let mut cmd = agentx();
    cmd.arg(root_arg(ws.path()))
        .args(["--json", "github", "sync"])
        .env("PATH", empty.path());
    let out = Out::from_output(&cmd.output().expect("agentx runs"));
    assert_ne!(out.code, 0, "{out:#?}");
    let v: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(v["ok"], false, "{v}");
    // The sync's error for the issue, and the comment delivery's.
    let message = v["sync"]["errors"][0].as_str().unwrap_or("");
    assert!(message.contains("could not start gh"), "{v}");
    let delivery = v["failed"][0]["error"].as_str().unwrap_or("");
    assert!(delivery.contains("via = \"api\""), "{v}");
    assert!(message.contains("via = \"api\""), "{v}");
    assert!(message.contains("GITHUB_TOKEN"), "{v}");
}
