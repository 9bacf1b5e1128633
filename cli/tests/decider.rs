//! The person who decides (issue 52), over real HTTP on loopback against a real `agentx serve`
//! and the CLI on the same workspace: the link in a notification opens the thread (the
//! server's own address by default), a signed-out deep link comes back after signing in and
//! never leads off-site, the start-up link is the machine user's, and a decision is what the
//! person chose on every door (`INVALID_ANSWER` for a note alone on a closed choice).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod notify_receiver;
mod serve_http;

use common::*;
use serde_json::{json, Value};
use serve_http::*;

fn set_cookies(r: &Reply) -> Vec<String> {
    r.headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, v)| v.clone())
        .collect()
}

fn form_post(server: &Server, body: &str, cookie: Option<&str>) -> Reply {
    let origin = server.origin();
    let mut headers = vec![
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", origin.as_str()),
    ];
    if let Some(c) = cookie {
        headers.push(("Cookie", c));
    }
    server.send("POST", "/login", &headers, body.as_bytes())
}

#[test]
fn a_deep_link_signed_out_comes_back_after_sign_in_and_never_leaves_the_server() {
    let dir = workspace();
    let root = dir.path();
    let id = escalated(root, 7, "Cache");
    let human = token(root, "--human", "alice");
    let server = Server::start(root, &["--no-worker"]);
    let thread = format!("/clarifications/{id}");

    // Signed out: to the sign-in page, told where to come back.
    let r = server.get(&thread, &[]);
    assert_eq!(r.status, 303);
    let location = r.header("location").unwrap().to_owned();
    assert_eq!(location, format!("/login?next=%2Fclarifications%2F{id}"));
    let page = server.get(&location, &[]);
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains(&format!("Sign in to open {thread}.")),
        "the page says why: {}",
        page.body
    );
    assert!(page
        .body
        .contains(&format!("name=\"next\" value=\"{thread}\"")));
    // The place is kept for a sign-in link opened next (10 minutes, this server's pages only).
    let kept = set_cookies(&page);
    assert!(
        kept.iter().any(|c| c.starts_with(&format!(
            "agentx-next=%2Fclarifications%2F{id}; Path=/; HttpOnly; SameSite=Lax; Max-Age=600"
        ))),
        "{kept:?}"
    );

    // A token typed in: back to the thread.
    let signed = form_post(
        &server,
        &format!("token={human}&next={}", thread.replace('/', "%2F")),
        None,
    );
    assert_eq!(signed.status, 303, "{signed:?}");
    assert_eq!(signed.header("location"), Some(thread.as_str()));

    // The one-time link with the kept place: back to the thread too.
    let next_cookie = format!("agentx-next=%2Fclarifications%2F{id}");
    let once = server.get(&server.once_path(), &[("Cookie", &next_cookie)]);
    assert_eq!(once.status, 303, "{once:?}");
    assert_eq!(once.header("location"), Some(thread.as_str()));
    assert!(set_cookies(&once)
        .iter()
        .any(|c| c.starts_with("agentx-next=; ") && c.contains("Max-Age=0")));

    // A foreign place is dropped: the inbox, never another site.
    for foreign in [
        "%2F%2Fevil.example%2Fx",
        "https%3A%2F%2Fevil.example%2F",
        "%2F%5Cevil.example",
        "javascript%3Aalert(1)",
        "%2Flogin",
    ] {
        let r = form_post(&server, &format!("token={human}&next={foreign}"), None);
        assert_eq!(r.status, 303, "{foreign}: {r:?}");
        assert_eq!(r.header("location"), Some("/"), "{foreign}");
        let page = server.get(&format!("/login?next={foreign}"), &[]);
        assert!(
            !page.body.contains("evil.example"),
            "{foreign}: {}",
            page.body
        );
        assert!(set_cookies(&page).is_empty(), "{foreign}: nothing kept");
    }

    // A cookie that is no session: the sign-in page says so.
    let r = server.get(&thread, &[("Cookie", "agentx=gone")]);
    let location = r.header("location").unwrap();
    assert_eq!(
        location,
        format!("/login?next=%2Fclarifications%2F{id}&why=unknown")
    );
    let page = server.get(location, &[]);
    assert!(
        page.body.contains("This server does not know your session"),
        "{}",
        page.body
    );
}

#[test]
fn the_start_up_link_signs_in_the_machines_user_never_local() {
    let dir = workspace();
    let root = dir.path();
    let id = escalated(root, 7, "Cache");
    let server = Server::start_with_env(root, &["--no-worker"], &[("USER", "Jane.Doe")]);
    let (cookie, csrf) = server.sign_in();
    let page = server.get("/", &[("Cookie", &cookie)]);
    assert!(
        page.body.contains("<span class=\"who\">jane-doe</span>"),
        "{}",
        page.body
    );
    let r = server.send(
        "POST",
        "/api/v1/call",
        &[
            ("Cookie", &cookie),
            ("Origin", &server.origin()),
            ("X-CSRF-Token", &csrf),
            ("Content-Type", "application/json"),
        ],
        json!({"op": "decide", "input": {"id": id, "message": "Redis"}})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(r.status, 200, "{r:?}");
    let last = r.json()["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (last["by"].as_str(), last["via"].as_str()),
        (Some("jane-doe"), Some("web"))
    );
    // `--as` still names someone else.
    let other = Server::start(root, &["--no-worker", "--as", "alice"]);
    let (cookie, _) = other.sign_in();
    assert!(other
        .get("/", &[("Cookie", &cookie)])
        .body
        .contains("<span class=\"who\">alice</span>"));
}

#[test]
fn a_notifications_link_is_the_servers_own_address_by_default() {
    let dir = workspace();
    let root = dir.path();
    let mut receiver = notify_receiver::Receiver::start(&[]);
    write_config(
        root,
        &format!(
            "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{}\"\n",
            receiver.url("/h"),
            notify_receiver::SECRET
        ),
    );
    let server = Server::start(root, &[]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    let id = escalated(root, 9, "Cache");
    let got = receiver.next();
    assert_eq!(got["verified"], true, "{got}");
    let event: Value = serde_json::from_str(got["body"].as_str().unwrap()).unwrap();
    let url = format!("{}/clarifications/{id}", server.origin());
    assert_eq!(event["data"]["url"], url.as_str(), "{event}");
    // And it opens: the thread's page (for a person), the sign-in page on the way.
    let r = server.get(&format!("/clarifications/{id}"), &[]);
    assert_eq!(r.status, 303);
}

fn closed_choice(root: &std::path::Path, issue: u32) -> String {
    escalated_closed_choice(root, issue, "Cache", "Which cache?", "a person decides")
}

#[test]
fn a_note_alone_is_no_decision_on_a_closed_choice_on_any_door() {
    let dir = workspace();
    let root = dir.path();
    assert_eq!(json_in(root, &["keys", "new", "agent-x"]).code, 0);
    let id = closed_choice(root, 5);
    let human = token(root, "--human", "alice");
    let server = Server::start(root, &["--no-worker"]);
    let before = read_ledger(root, 5);

    // /api/v1 (what the inbox's form posts): refused, the ledger unchanged.
    let r = server.call_bearer(
        &human,
        "decide",
        json!({"id": id, "message": "whatever is faster"}),
    );
    assert_eq!(r.status, 400, "{r:?}");
    assert_eq!(r.json()["error"]["code"], "INVALID_ANSWER");
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("a note alone is not one"));
    // The CLI's resolve -m without --value: refused the same way.
    let cli = json_in(
        root,
        &["clarify", "resolve", &id, "-m", "whatever is faster"],
    );
    assert_eq!(cli.code, 3, "{cli:#?}");
    assert_eq!(cli.json()["error"]["code"], "INVALID_ANSWER");
    assert_eq!(read_ledger(root, 5), before, "nothing was written");

    // A choice with a note: both recorded, by the person.
    let r = server.call_bearer(
        &human,
        "decide",
        json!({"id": id, "value": "lru", "message": "see ADR-7"}),
    );
    assert_eq!(r.status, 200, "{r:?}");
    let last = r.json()["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (
            last["value"].as_str(),
            last["body"].as_str(),
            last["by"].as_str(),
            last["via"].as_str()
        ),
        (Some("lru"), Some("see ADR-7"), Some("alice"), Some("web"))
    );

    // The audit leads with it: who, the door, the value and its label, the note, the signer.
    let audit = json_in(root, &["clarify", "audit", &id]);
    assert_eq!(audit.code, 0, "{audit:#?}");
    let decided = &audit.json()["chain"][0]["decided"];
    assert_eq!(decided["from"], "human");
    assert_eq!(decided["by"], "alice");
    assert_eq!(decided["via"], "web");
    assert_eq!(decided["value"], "lru");
    assert_eq!(decided["label"], "In-process LRU");
    assert_eq!(decided["note"], "see ADR-7");
    assert_eq!(decided["signer"], "agent-x");
    assert!(decided["timestamp"].as_str().unwrap().ends_with('Z'));
    let text = run([root_arg(root).as_str(), "clarify", "audit", &id]);
    assert!(
        text.stdout.contains(
            "by alice (human via web), signed by agent-x: In-process LRU [lru] — see ADR-7"
        ),
        "{}",
        text.stdout
    );
}

#[test]
fn a_sign_in_link_for_a_person_works_once_on_any_server_of_the_store() {
    let dir = workspace();
    let root = dir.path();
    let a = Server::start(root, &["--no-worker"]);
    let b = Server::start(root, &["--no-worker"]);
    let minted = json_in(
        root,
        &["tokens", "link", "--human", "alice", "--url", &a.origin()],
    );
    assert_eq!(minted.code, 0, "{minted:#?}");
    let v = minted.json();
    let link = v["link"].as_str().unwrap();
    assert!(
        link.starts_with(&format!("{}/login?once=", a.origin())),
        "{v}"
    );
    assert!(v["expires"].as_str().unwrap().ends_with('Z'));
    let path = link.trim_start_matches(&a.origin()).to_owned();
    // Only the hash is kept.
    let code = path.trim_start_matches("/login?once=");
    let stored = std::fs::read_to_string(root.join(".agentx/state/sign-in-links.json")).unwrap();
    assert!(!stored.contains(code), "{stored}");
    // The other server of the same store honours it — once.
    let signed = b.get(&path, &[]);
    assert_eq!(signed.status, 303, "{signed:?}");
    let cookie = signed.cookie().unwrap();
    assert!(b
        .get("/", &[("Cookie", &cookie)])
        .body
        .contains("<span class=\"who\">alice</span>"));
    assert_eq!(a.get(&path, &[]).status, 401, "single use");
    // The inbox's button mints one for the signed-in person only.
    let (cookie, csrf) = a.sign_in();
    let r = a.send(
        "POST",
        "/login/link",
        &[
            ("Cookie", &cookie),
            ("Origin", &a.origin()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        format!("csrf={csrf}").as_bytes(),
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("/login?once="), "{}", r.body);
    let no_csrf = a.send(
        "POST",
        "/login/link",
        &[
            ("Cookie", &cookie),
            ("Origin", &a.origin()),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        b"csrf=wrong",
    );
    assert_eq!(no_csrf.status, 403, "{no_csrf:?}");
}
