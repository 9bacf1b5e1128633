//! Answer links on PostgreSQL (docs/protocol.md §35): the links are the `answer-links` row of
//! `agentx.state_docs`, and two servers on one database honour each link once — two
//! simultaneous POSTs of one link, one to each server, make exactly one decision.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod notify_receiver;
mod serve_http;

use agentx_clarify_tests::pg::{fresh_database, psql};
use common::*;
use notify_receiver::{Receiver, SECRET};
use serde_json::Value;
use serve_http::*;

fn ask(root: &std::path::Path, issue: u32) -> String {
    escalated_closed_choice(root, issue, "Cache", "Which cache?", "a person decides")
}

#[test]
fn two_servers_two_simultaneous_posts_of_one_link_make_one_decision() {
    let url = fresh_database("answer_links");
    let dir = workspace();
    let root = dir.path();
    let mut receiver = Receiver::start(&[]);
    write_config(
        root,
        &format!(
            "[store]\nurl = \"{url}\"\n\n[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\nanswer_links = true\n",
            receiver.url("/hook")
        ),
    );
    assert_eq!(json_in(root, &["store", "init"]).code, 0);
    let one = Server::start(root, &["--no-worker"]);
    let two = Server::start(root, &["--no-worker"]);
    for issue in 1..=5 {
        let id = ask(root, issue);
        // Delivered by the CLI's pass with the first server as the public URL.
        let sent = json_in(root, &["notify", "send", "--public-url", &one.origin()]);
        assert_eq!(sent.code, 0, "{sent:#?}");
        // The decision of the round before is told too (its follow-up); this round's
        // escalation is the one with the links.
        let event = loop {
            let got = receiver.next();
            let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
            if event["data"]["id"] == id.as_str() {
                break event;
            }
            assert_eq!(event["type"], "clarification.resolved", "{event}");
        };
        assert_eq!(event["type"], "clarification.escalated");
        let link = event["data"]["actions"][1]["url"].as_str().unwrap();
        let path = link.strip_prefix(&one.origin()).unwrap().to_owned();
        // In the database, as a hash only.
        let stored = psql(
            &url,
            "SELECT body FROM agentx.state_docs WHERE name = 'answer-links'",
        );
        assert!(
            stored.contains(&id) && !stored.contains(&path[3..]),
            "{stored}"
        );
        assert!(!root.join(".agentx/state/answer-links.json").exists());

        let start = std::sync::Barrier::new(2);
        let (a, b) = std::thread::scope(|s| {
            let (start, path) = (&start, &path);
            let post = move |server: &Server| {
                start.wait();
                server.send("POST", path, &[], b"").status
            };
            let (one, two) = (&one, &two);
            let a = s.spawn(move || post(one));
            let b = s.spawn(move || post(two));
            (a.join().unwrap(), b.join().unwrap())
        });
        let mut statuses = [a, b];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "exactly one decision for {id}");
        let shown = json_in(root, &["clarify", "show", &id]).json();
        let thread = shown["clarification"]["thread"].as_array().unwrap();
        let decisions: Vec<&Value> = thread
            .iter()
            .filter(|e| e["type"] == "resolution")
            .collect();
        assert_eq!(decisions.len(), 1, "{thread:?}");
        assert_eq!(decisions[0]["by"], "team-link");
        assert_eq!(decisions[0]["value"], "redis");
    }
    assert_eq!(json_in(root, &["clarify", "verify"]).code, 0);
}
