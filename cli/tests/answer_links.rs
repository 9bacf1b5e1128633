//! Answer links (docs/protocol.md §35, issue 44) over real HTTP on loopback: a real `agentx
//! serve` delivers to the notification receiver (`tests/notify/receiver.py`, every webhook
//! verified with the official Standard Webhooks library) as a webhook and as ntfy; the links
//! in what arrived are then fetched and posted as a phone, a mail scanner or a person would.
//! GETs change nothing, the first POST decides and every later one says who did, a link
//! refuses another record, a closed record, its expiry and a burst of wrong tokens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod mcp_session;
mod notify_receiver;
mod serve_http;

use std::time::{Duration, Instant};

use common::*;
use notify_receiver::{Receiver, SECRET};
use serde_json::{json, Value};
use serve_http::*;

/// A webhook ("team") and an ntfy topic ("phone") on the receiver, both with answer links;
/// `serve` is added to the file as the `[serve]` table's body.
fn configure(root: &std::path::Path, receiver: &Receiver, serve: &str) {
    write_config(
        root,
        &format!(
            "[serve]\n{serve}\n[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\nanswer_links = true\n\n\
             [[notify]]\nname = \"phone\"\nkind = \"ntfy\"\nurl = \"{}\"\nanswer_links = true\n",
            receiver.url("/hook"),
            receiver.url("/topic"),
        ),
    );
}

/// A single choice (Redis or in-process LRU, nothing else) escalated to a person.
fn choice(root: &std::path::Path, issue: u32) -> String {
    choice_asking(root, issue, "Which cache?")
}

fn choice_asking(root: &std::path::Path, issue: u32, question: &str) -> String {
    escalated_closed_choice(root, issue, "Cache", question, "a person decides")
}

/// What one record's escalation brought: the webhook's event (and its `webhook-id`) and the
/// ntfy publish's headers.
struct Arrived {
    event: Value,
    delivery: String,
    ntfy: Value,
}

fn arrivals(receiver: &mut Receiver, id: &str) -> Arrived {
    let (mut event, mut delivery, mut ntfy) = (None, None, None);
    while event.is_none() || ntfy.is_none() {
        let got = receiver.next();
        if got["path"] == "/hook" {
            assert_eq!(got["verified"], true, "{got}");
            let e: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
            if e["data"]["id"] == id {
                delivery = got["headers"]["webhook-id"].as_str().map(str::to_owned);
                event = Some(e);
            }
        } else if got["headers"]["x-sequence-id"] == id {
            ntfy = Some(got["headers"].clone());
        }
    }
    Arrived {
        event: event.unwrap(),
        delivery: delivery.unwrap(),
        ntfy: ntfy.unwrap(),
    }
}

/// The path (`/a/<token>`) of a link the server minted, checked to be on its own origin.
fn path_of(server: &Server, url: &str) -> String {
    let path = url
        .strip_prefix(&server.origin())
        .unwrap_or_else(|| panic!("{url} is not on {}", server.origin()));
    let token = path.strip_prefix("/a/").expect("an answer link");
    assert_eq!(token.len(), 43, "256 bits in base64url: {token}");
    path.to_owned()
}

fn post(server: &Server, path: &str, form: &str) -> Reply {
    server.send(
        "POST",
        path,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        form.as_bytes(),
    )
}

fn last_entry(root: &std::path::Path, id: &str) -> Value {
    let shown = json_in(root, &["clarify", "show", id]).json();
    shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

fn started(root: &std::path::Path, log: &std::path::Path) -> Server {
    let server = Server::start_logged(root, &[], &[], log);
    // The worker's first pass sees the sinks before anything is escalated.
    std::thread::sleep(Duration::from_millis(500));
    server
}

#[test]
fn gets_change_nothing_the_first_post_decides_and_the_next_say_who() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    configure(root, &receiver, "");
    let log = root.join("serve.log");
    let server = started(root, &log);
    let id = choice(root, 7);
    let got = arrivals(&mut receiver, &id);

    // data.actions: the answer page, then one per option.
    let actions = got.event["data"]["actions"].as_array().unwrap().clone();
    let labels: Vec<&str> = actions
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["Answer…", "Redis", "In-process LRU"],
        "{actions:?}"
    );
    assert!(actions[0].get("value").is_none());
    assert_eq!(
        (actions[1]["value"].clone(), actions[2]["value"].clone()),
        (json!("redis"), json!("lru"))
    );
    let page = path_of(&server, actions[0]["url"].as_str().unwrap());
    let redis = path_of(&server, actions[1]["url"].as_str().unwrap());
    let lru = path_of(&server, actions[2]["url"].as_str().unwrap());

    // Ten GETs of each (a mail scanner, an unfurl): the ledger and the links are untouched.
    let ledger = ledger_path(root, 7);
    let links = root.join(".agentx/state/answer-links.json");
    let (before, links_before) = (bytes(&ledger), bytes(&links));
    for _ in 0..10 {
        for path in [&page, &redis, &lru] {
            let r = server.get(path, &[]);
            assert_eq!(r.status, 200, "{r:?}");
            assert!(r.body.contains("Which cache?"), "{}", r.body);
        }
    }
    let r = server.get(&redis, &[]);
    assert!(
        r.body.contains("Confirm: Redis") && r.body.contains("method=\"post\""),
        "{}",
        r.body
    );
    assert!(server.get(&page, &[]).body.contains("In-process LRU"));
    assert_eq!(bytes(&ledger), before, "a GET never decides");
    assert_eq!(bytes(&links), links_before, "a GET never writes");

    // The first POST decides, as the sink's holder, through the command layer.
    let r = post(&server, &redis, "");
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.body.contains("Decided by team-link at") && r.body.contains("Redis"),
        "{}",
        r.body
    );
    let e = last_entry(root, &id);
    assert_eq!(e["type"], "resolution", "{e}");
    assert_eq!(e["value"], "redis");
    assert_eq!(
        (e["by"].as_str(), e["via"].as_str()),
        (Some("team-link"), Some("link"))
    );
    assert_eq!(e["ref"], format!("team/{}", got.delivery), "{e}");
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);

    // Every later POST, of this link or another of the record, says who decided; writes nothing.
    let decided = bytes(&ledger);
    for path in [&redis, &lru, &page] {
        let r = post(&server, path, "value=lru");
        assert_eq!(r.status, 409, "{r:?}");
        assert!(
            r.body.contains("Decided by team-link at") && r.body.contains(": Redis"),
            "{}",
            r.body
        );
    }
    assert_eq!(bytes(&ledger), decided);
    let r = server.get(&lru, &[]);
    assert_eq!(r.status, 409);
    assert!(r.body.contains("Decided by team-link"), "{}", r.body);

    // No token in full in the log, the links file or `notify status`: the first six only.
    let token = redis.trim_start_matches("/a/");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains(&format!("answer link {}…", &token[..6])),
        "{logged}"
    );
    assert!(!logged.contains(token), "{logged}");
    assert!(!std::fs::read_to_string(&links).unwrap().contains(token));
    let status = json_in(root, &["notify", "status"]);
    assert!(
        !status.stdout.contains(token) && !status.stdout.contains("/a/"),
        "{status:?}"
    );
}

#[test]
fn an_ntfy_action_post_decides_its_value_as_the_phone() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    configure(root, &receiver, "");
    let server = started(root, &root.join("serve.log"));
    let id = choice(root, 8);
    let got = arrivals(&mut receiver, &id);
    // Up to three `http` actions, one per option: what ntfy shows as buttons on the lock screen.
    let header = got.ntfy["actions"]
        .as_str()
        .expect("an Actions header")
        .to_owned();
    let actions: Vec<Vec<&str>> = header
        .split("; ")
        .map(|a| a.split(", ").collect())
        .collect();
    assert_eq!(actions.len(), 2, "{header}");
    for a in &actions {
        assert_eq!(
            (a[0], a[3], a[4]),
            ("http", "method=POST", "clear=true"),
            "{header}"
        );
    }
    assert_eq!((actions[0][1], actions[1][1]), ("Redis", "In-process LRU"));
    // The phone's POST: no body, no content type.
    let lru = path_of(&server, actions[1][2]);
    let r = server.send("POST", &lru, &[], b"");
    assert_eq!(r.status, 200, "{r:?}");
    let e = last_entry(root, &id);
    assert_eq!(e["value"], "lru", "{e}");
    assert_eq!(
        (e["by"].as_str(), e["via"].as_str()),
        (Some("phone-link"), Some("ntfy"))
    );
    assert!(e["ref"].as_str().unwrap().starts_with("phone/"), "{e}");
    let r = server.send("POST", &path_of(&server, actions[0][2]), &[], b"");
    assert_eq!(r.status, 409, "{r:?}");
    assert!(r.body.contains("Decided by phone-link at") && r.body.contains("In-process LRU"));
}

#[test]
fn a_link_refuses_another_record_a_closed_one_and_wrong_tokens() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    configure(root, &receiver, "");
    let alice = token(root, "--human", "alice");
    let server = started(root, &root.join("serve.log"));
    let a = choice(root, 9);
    let got_a = arrivals(&mut receiver, &a);
    let b = choice_asking(root, 9, "Which cache for sessions?");
    let _ = arrivals(&mut receiver, &b);
    let page = path_of(
        &server,
        got_a.event["data"]["actions"][0]["url"].as_str().unwrap(),
    );
    let ledger = ledger_path(root, 9);
    let before = bytes(&ledger);

    // A's page posted with B's id (a page of one record drawn for another): refused.
    let r = post(&server, &page, &format!("id={b}&round=1&value=redis"));
    assert_eq!(r.status, 400, "{r:?}");
    assert!(
        r.body.contains(&format!("This link is for {a} only")),
        "{}",
        r.body
    );
    // A note alone is no decision on a closed choice: refused, and the link stays usable.
    let r = post(&server, &page, &format!("id={a}&round=1&message=hmm"));
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(bytes(&ledger), before);

    // Decided in the inbox meanwhile: the link says so and writes nothing.
    let r = server.call_bearer(&alice, "decide", json!({"id": a, "value": "lru"}));
    assert_eq!(r.status, 200, "{r:?}");
    let decided = bytes(&ledger);
    let r = post(&server, &page, &format!("id={a}&round=1&value=redis"));
    assert_eq!(r.status, 409, "{r:?}");
    assert!(
        r.body.contains("Decided by alice at") && r.body.contains("In-process LRU"),
        "{}",
        r.body
    );
    assert_eq!(bytes(&ledger), decided);
    assert_eq!(last_entry(root, &a)["value"], "lru");

    // Wrong tokens: unknown (404); ten with one prefix from one address, then refused (429).
    let guess = |n: usize| format!("/a/{}{:037}", &page[3..9], n);
    for n in 0..10 {
        let r = post(&server, &guess(n), "");
        assert_eq!(r.status, 404, "{r:?}");
    }
    assert_eq!(post(&server, &guess(99), "").status, 429);
    assert_eq!(server.get("/a/short", &[]).status, 404);
    assert_eq!(bytes(&ledger), decided);
}

#[test]
fn an_expired_link_is_refused_and_writes_nothing() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    // 0.001 h: 3.6 s.
    configure(root, &receiver, "answer_link_hours = 0.001");
    let server = started(root, &root.join("serve.log"));
    let id = choice(root, 10);
    let got = arrivals(&mut receiver, &id);
    let redis = path_of(
        &server,
        got.event["data"]["actions"][1]["url"].as_str().unwrap(),
    );
    let ledger = ledger_path(root, 10);
    let before = bytes(&ledger);
    std::thread::sleep(Duration::from_millis(4_000));
    let r = server.get(&redis, &[]);
    assert_eq!(r.status, 410, "{r:?}");
    let r = post(&server, &redis, "");
    assert_eq!(r.status, 410, "{r:?}");
    assert!(r.body.contains("expired"), "{}", r.body);
    assert_eq!(bytes(&ledger), before);
}

/// A waiting agent's `clarify_wait` (MCP over HTTP, `until: "decision"`) returns once a phone's
/// action POST decides: the time from the POST to the return, over five records (loopback).
#[test]
fn a_waiting_agent_hears_an_action_posts_decision() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    configure(root, &receiver, "");
    let engineer = token(root, "--agent", "engineer");
    let server = started(root, &root.join("serve.log"));
    let mut took = Vec::new();
    for issue in 20..25 {
        let id = choice(root, issue);
        let got = arrivals(&mut receiver, &id);
        let redis = path_of(
            &server,
            got.event["data"]["actions"][1]["url"].as_str().unwrap(),
        );
        let mut session = mcp_session::Session::open(&server, &engineer);
        let (posted_at, waited) = std::thread::scope(|s| {
            let waiting = s.spawn(|| {
                let r = session.call(
                    "clarify_wait",
                    json!({"id": id, "timeoutSeconds": 30, "until": "decision"}),
                );
                (Instant::now(), r)
            });
            std::thread::sleep(Duration::from_millis(400));
            let posted = Instant::now();
            let r = server.send("POST", &redis, &[], b"");
            assert_eq!(r.status, 200, "{r:?}");
            let (returned, (_, result)) = waiting.join().unwrap();
            (returned.duration_since(posted), result)
        });
        let result = waited.expect("a result");
        assert_eq!(
            result["structuredContent"]["status"], "resolved",
            "{result}"
        );
        took.push(posted_at);
    }
    took.sort();
    let p50 = took[took.len() / 2];
    eprintln!("answer link POST → clarify_wait returned: p50 {p50:?}, all {took:?}");
    // A functional bound only: the wait wakes on the decision, not at its 30 s timeout.
    assert!(p50 < Duration::from_secs(10), "{took:?}");
}
