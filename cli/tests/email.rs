//! The email sink (issue 44) against a real SMTP server on loopback (PyPI `aiosmtpd`,
//! `tests/notify/smtp_receiver.py`), STARTTLS required with a self-signed certificate the sink
//! trusts through `ca_file`: the mail arrives as `multipart/alternative`, parsed with Python's
//! `email` package; an option's answer link from it shows the confirm page (GET) and decides
//! (POST); with the server down the delivery is retried like every sink's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod serve_http;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;
use serve_http::*;

/// A test CA (trusted by the sink, `ca_file`) and the server's certificate for 127.0.0.1 and
/// localhost signed by it: (CA cert, server cert, server key). rustls takes no CA certificate
/// as a server's own, so the chain is a real one.
fn certificate(dir: &Path) -> (String, String, String) {
    let p = |name: &str| dir.join(name).display().to_string();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl runs (scripts/setup installs it)");
        assert!(out.status.success(), "{out:?}");
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=agentx test CA",
        "-keyout",
        &p("ca.key"),
        "-out",
        &p("ca.pem"),
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &p("smtp.key"),
        "-out",
        &p("smtp.csr"),
    ]);
    std::fs::write(
        dir.join("smtp.ext"),
        "basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        &p("smtp.csr"),
        "-CA",
        &p("ca.pem"),
        "-CAkey",
        &p("ca.key"),
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        &p("smtp.ext"),
        "-out",
        &p("smtp.pem"),
    ]);
    (p("ca.pem"), p("smtp.pem"), p("smtp.key"))
}

struct Smtp {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    port: u16,
}

impl Smtp {
    fn start(cert: &str, key: &str, port: Option<u16>) -> Smtp {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/notify/smtp_receiver.py");
        let mut cmd = Command::new("python3");
        cmd.arg(script).args([cert, key]);
        if let Some(p) = port {
            cmd.args(["--port", &p.to_string()]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the SMTP server (scripts/setup installs aiosmtpd)");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        let port = first
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the SMTP server did not start: {first:?}"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Smtp {
            child,
            lines: rx,
            port,
        }
    }

    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a mail within 30 s");
        serde_json::from_str(&line).unwrap()
    }
}

impl Drop for Smtp {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn configure(root: &Path, port: u16, cert: &str) {
    write_config(
        root,
        &format!(
            "[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {port}\n\
             from = \"AgentX <agentx@example.com>\"\nto = [\"ops@example.com\"]\nca_file = \"{cert}\"\n\
             answer_links = true\n"
        ),
    );
}

fn escalated_choice(root: &Path, issue: u32) -> String {
    escalated_closed_choice(
        root,
        issue,
        "Cache <b>layer</b>",
        "Which cache?",
        "a person",
    )
}

#[test]
fn a_mail_over_starttls_carries_links_that_decide() {
    let dir = workspace();
    let root = dir.path();
    let (ca, cert, key) = certificate(root);
    let smtp = Smtp::start(&cert, &key, None);
    configure(root, smtp.port, &ca);
    let server = Server::start(root, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let id = escalated_choice(root, 5);
    let mail = smtp.next();
    assert_eq!(mail["tls"], true, "STARTTLS: {mail}");
    assert_eq!(mail["content_type"], "multipart/alternative");
    assert_eq!(mail["rcpt_to"][0], "ops@example.com");
    assert!(mail["subject"].as_str().unwrap().contains(&id), "{mail}");
    assert_eq!(mail["in_reply_to"], format!("<{id}@agentx-clarify>"));
    assert_eq!(mail["references"], mail["in_reply_to"]);
    let html = mail["html"].as_str().unwrap();
    assert!(
        html.contains("Cache &lt;b&gt;layer&lt;/b&gt;") && !html.contains("<b>layer"),
        "{html}"
    );
    // The text part: one line per link, "  Redis: <url>".
    let text = mail["text"].as_str().unwrap();
    let url = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Redis: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(html.contains(url), "the same link in both parts");
    let path = url.strip_prefix(&server.origin()).unwrap().to_owned();
    let before = bytes(&ledger_path(root, 5));
    let page = server.get(&path, &[]);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Confirm: Redis"), "{}", page.body);
    assert_eq!(bytes(&ledger_path(root, 5)), before);
    let r = server.send(
        "POST",
        &path,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"",
    );
    assert_eq!(r.status, 200, "{r:?}");
    let shown = json_in(root, &["clarify", "show", &id]).json();
    let last = shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (
            last["value"].as_str(),
            last["by"].as_str(),
            last["via"].as_str()
        ),
        (Some("redis"), Some("mail-link"), Some("link"))
    );
    // The decision's follow-up threads with the question's mail.
    let follow = smtp.next();
    assert_eq!(follow["in_reply_to"], mail["in_reply_to"]);
    assert_ne!(follow["message_id"], mail["message_id"]);
}

#[test]
fn with_the_smtp_server_down_the_mail_is_retried() {
    let dir = workspace();
    let root = dir.path();
    let (ca, cert, key) = certificate(root);
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    configure(root, port, &ca);
    let id = escalated_choice(root, 6);
    let sent = json_in(root, &["notify", "send"]);
    let v = sent.json();
    assert_eq!(v["delivered"], 0, "{v}");
    assert_eq!(v["failed"].as_array().map(Vec::len), Some(1), "{v}");
    let status = json_in(root, &["notify", "status"]).json();
    let text = status.to_string();
    assert!(
        text.contains(&id) && text.contains("SMTP 127.0.0.1"),
        "{text}"
    );
    // The server comes up; the next pass past the backoff delivers.
    let smtp = Smtp::start(&cert, &key, Some(port));
    let out = json_at(root, wall_ms() + 30 * 60_000, &["notify", "send"]);
    assert_eq!(out.json()["delivered"], 1, "{out:#?}");
    assert!(smtp.next()["subject"].as_str().unwrap().contains(&id));
}

/// A per-person email sink (docs/protocol.md §37): one sink for the leads writes each
/// escalation to the address of the person it is assigned to (people.toml's `email`), alone.
#[test]
fn a_per_person_mail_goes_to_the_assigned_persons_address() {
    let dir = workspace();
    let root = dir.path();
    let (ca, cert, key) = certificate(root);
    let smtp = Smtp::start(&cert, &key, None);
    std::fs::write(
        root.join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\nemail = \"alice@example.com\"\n\n[people.bob]\nemail = \"bob@example.com\"\n",
    )
    .unwrap();
    write_config(
        root,
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {}\n\
             from = \"AgentX <agentx@example.com>\"\nca_file = \"{ca}\"\npeople = [\"alice\", \"bob\"]\nper_person = true\n",
            smtp.port
        ),
    );
    assert_eq!(json_in(root, &["notify", "send"]).json()["delivered"], 0);
    let id = escalated_choice(root, 7);
    let sent = json_in(root, &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    let mail = smtp.next();
    assert_eq!(
        mail["rcpt_to"],
        serde_json::json!(["alice@example.com"]),
        "{mail}"
    );
    assert!(mail["subject"].as_str().unwrap().contains(&id), "{mail}");
    let status = json_in(root, &["notify", "status"]).json();
    assert_eq!(
        status["deliveries"],
        serde_json::json!([]),
        "bob was owed nothing: {status}"
    );
}

/// `to` may name people and roles of people.toml beside addresses: each reaches the person's
/// `email` (a role: whoever holds it or takes its shifts).
#[test]
fn to_names_people_and_roles_by_their_addresses() {
    let dir = workspace();
    let root = dir.path();
    let (ca, cert, key) = certificate(root);
    let smtp = Smtp::start(&cert, &key, None);
    std::fs::write(
        root.join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\nemail = \"alice@example.com\"\n\n[people.bob]\nemail = \"bob@example.com\"\n\n[people.carol]\nroles = [\"lead\"]\n",
    )
    .unwrap();
    write_config(
        root,
        &format!(
            "[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {}\n\
             from = \"AgentX <agentx@example.com>\"\nca_file = \"{ca}\"\nto = [\"ops@example.com\", \"role:lead\"]\n",
            smtp.port
        ),
    );
    assert_eq!(json_in(root, &["notify", "send"]).json()["delivered"], 0);
    escalated_choice(root, 3);
    let sent = json_in(root, &["notify", "send"]).json();
    assert_eq!(sent["delivered"], 1, "{sent}");
    let mail = smtp.next();
    // carol holds the role but has no address: nobody more.
    assert_eq!(
        mail["rcpt_to"],
        serde_json::json!(["ops@example.com", "alice@example.com"]),
        "{mail}"
    );
}

/// A per-person mail's answer link decides as that person (docs/protocol.md §37): the link in
/// alice's mail records `by: "alice"`, and her decision passes the decider check.
#[test]
fn a_per_person_mails_link_decides_as_that_person() {
    let dir = workspace();
    let root = dir.path();
    let (ca, cert, key) = certificate(root);
    let smtp = Smtp::start(&cert, &key, None);
    std::fs::write(
        root.join(".agentx/people.toml"),
        "[people.alice]\nroles = [\"lead\"]\nemail = \"alice@example.com\"\n\n[people.bob]\nemail = \"bob@example.com\"\n",
    )
    .unwrap();
    write_config(
        root,
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {}\n\
             from = \"AgentX <agentx@example.com>\"\nca_file = \"{ca}\"\npeople = [\"role:lead\"]\nper_person = true\nanswer_links = true\n",
            smtp.port
        ),
    );
    let server = Server::start(root, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let id = escalated_choice(root, 8);
    let mail = smtp.next();
    assert_eq!(
        mail["rcpt_to"],
        serde_json::json!(["alice@example.com"]),
        "{mail}"
    );
    let text = mail["text"].as_str().unwrap();
    let url = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Redis: "))
        .unwrap_or_else(|| panic!("{text}"));
    let path = url.strip_prefix(&server.origin()).unwrap().to_owned();
    let r = server.send(
        "POST",
        &path,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"",
    );
    assert_eq!(r.status, 200, "{r:?}");
    let shown = json_in(root, &["clarify", "show", &id]).json();
    let last = shown["clarification"]["thread"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        (
            last["type"].as_str(),
            last["value"].as_str(),
            last["by"].as_str(),
            last["via"].as_str()
        ),
        (
            Some("resolution"),
            Some("redis"),
            Some("alice"),
            Some("link")
        )
    );
}

/// A workspace whose leads' escalations go, with answer links, to each lead's own address:
/// the SMTP server, the serving hub, and alice's option link for a fresh escalation of
/// `issue` (its path on the hub) with the record's id.
fn alices_link(root: &Path, people: &str, issue: u32) -> (Smtp, Server, String, String) {
    let (ca, cert, key) = certificate(root);
    let smtp = Smtp::start(&cert, &key, None);
    std::fs::write(root.join(".agentx/people.toml"), people).unwrap();
    write_config(
        root,
        &format!(
            "[people]\ndefault_deciders = [\"role:lead\"]\n\n[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"127.0.0.1\"\nport = {}\n\
             from = \"AgentX <agentx@example.com>\"\nca_file = \"{ca}\"\npeople = [\"role:lead\"]\nper_person = true\nanswer_links = true\n",
            smtp.port
        ),
    );
    let server = Server::start(root, &[]);
    std::thread::sleep(Duration::from_millis(500));
    let id = escalated_choice(root, issue);
    let mail = smtp.next();
    assert_eq!(
        mail["rcpt_to"],
        serde_json::json!(["alice@example.com"]),
        "{mail}"
    );
    let text = mail["text"].as_str().unwrap();
    let url = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Redis: "))
        .unwrap_or_else(|| panic!("{text}"));
    let path = url.strip_prefix(&server.origin()).unwrap().to_owned();
    (smtp, server, path, id)
}

/// A refused link: GET and POST are 403 "Link revoked", showing nothing of the record, and
/// the ledger is byte for byte what it was.
fn assert_refused(root: &Path, server: &Server, path: &str, issue: u32) {
    let before = bytes(&ledger_path(root, issue));
    let page = server.get(path, &[]);
    assert_eq!(page.status, 403, "{page:?}");
    assert!(page.body.contains("Link revoked"), "{}", page.body);
    assert!(!page.body.contains("Which cache?"), "{}", page.body);
    let r = server.send(
        "POST",
        path,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        b"",
    );
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("Link revoked"), "{}", r.body);
    assert_eq!(bytes(&ledger_path(root, issue)), before, "nothing written");
}

const LEADS: &str = "[people.alice]\nroles = [\"lead\"]\nemail = \"alice@example.com\"\n\n[people.bob]\nemail = \"bob@example.com\"\n";

/// Revoking a person's token revokes the answer links sent to them (docs/protocol.md §35):
/// the command says how many, and alice's mailed link no longer decides.
#[test]
fn revoking_a_persons_token_revokes_their_mailed_links() {
    let dir = workspace();
    let root = dir.path();
    assert_eq!(
        json_in(root, &["tokens", "new", "--human", "alice"]).code,
        0
    );
    let (_smtp, server, path, id) = alices_link(root, LEADS, 9);
    let out = run([
        root_arg(root),
        "tokens".into(),
        "revoke".into(),
        "alice".into(),
    ]);
    assert_eq!(out.code, 0, "{out:#?}");
    // Her mail carried three: the answer page, Redis, In-process LRU.
    assert!(
        out.stdout.starts_with("revoked human token 'alice' (")
            && out
                .stdout
                .trim_end()
                .ends_with("; 3 open answer links revoked"),
        "{out:#?}"
    );
    assert_refused(root, &server, &path, 9);
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(shown["clarification"]["status"], "escalated");
    // A second revocation of a new token of hers finds nothing open.
    assert_eq!(
        json_in(root, &["tokens", "new", "--human", "alice"]).code,
        0
    );
    let again = json_in(root, &["tokens", "revoke", "alice"]).json();
    assert_eq!(again["linksRevoked"], 0, "{again}");
}

/// A link sent to a person who is no longer in people.toml is refused at use: it would record
/// a decision in the name of someone the workspace no longer knows.
#[test]
fn a_link_of_a_person_removed_from_people_toml_is_refused() {
    let dir = workspace();
    let root = dir.path();
    let (_smtp, server, path, id) = alices_link(root, LEADS, 10);
    // The page still shows while alice is a person (and a GET writes nothing).
    assert_eq!(server.get(&path, &[]).status, 200);
    std::fs::write(
        root.join(".agentx/people.toml"),
        "[people.bob]\nroles = [\"lead\"]\nemail = \"bob@example.com\"\n",
    )
    .unwrap();
    assert_refused(root, &server, &path, 10);
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(shown["clarification"]["status"], "escalated");
}
