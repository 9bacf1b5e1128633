//! Fault injection on a PostgreSQL workspace (issue 50, docs/protocol.md §23): what `agentx
//! serve` does when the database goes away, freezes or is stopped under it, and when the
//! server itself is stopped or killed under load. Real PostgreSQL (a throwaway cluster of the
//! test's own where a test stops the server), real `agentx serve` processes, plain HTTP on
//! 127.0.0.1; the database is taken away by a Unix-socket proxy in front of it (`pg_proxy`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod chaos_load;
mod common;
mod notify_receiver;
mod pg_proxy;
mod serve_http;

use std::io::BufRead;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agentx_clarify_tests::pg::{fresh_database, psql, Cluster};
use common::*;
use notify_receiver::{Receiver, SECRET};
use pg_proxy::Proxy;
use serde_json::json;
use serve_http::*;

/// A workspace whose state is in the database at `url` (schema created), with `extra` added
/// to its config.
fn pg_workspace(url: &str, extra: &str) -> tempfile::TempDir {
    let dir = workspace();
    write_config(dir.path(), &format!("[store]\nurl = \"{url}\"\n{extra}"));
    let init = json_in(dir.path(), &["store", "init"]);
    assert_eq!(init.code, 0, "{init:#?}");
    dir
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `n` clients calling the API as `human` as fast as they can until `stop`: lists and
/// decisions on `ids`; the 2xx answers are counted in `ok`.
fn clients<'s>(
    s: &'s std::thread::Scope<'s, '_>,
    n: usize,
    port: u16,
    human: &'s str,
    ids: &'s [String],
    stop: &'s AtomicBool,
    ok: &'s AtomicUsize,
) {
    for c in 0..n {
        s.spawn(move || {
            let mut i = c;
            while !stop.load(Ordering::SeqCst) {
                let body = if i % 3 == 0 {
                    let id = &ids[i % ids.len()];
                    json!({"op": "decide", "input": {"id": id, "message": "ok"}})
                } else {
                    json!({"op": "list", "input": {}})
                }
                .to_string();
                let headers = vec![
                    ("Host".to_owned(), format!("127.0.0.1:{port}")),
                    ("Authorization".to_owned(), format!("Bearer {human}")),
                ];
                match try_request(port, "POST", "/api/v1/call", &headers, body.as_bytes()) {
                    Some(r) if (200..300).contains(&r.status) => {
                        ok.fetch_add(1, Ordering::SeqCst);
                    }
                    Some(_) => {}
                    None => std::thread::sleep(Duration::from_millis(5)),
                }
                i += n;
            }
        });
    }
}

#[test]
fn sigterm_under_sixteen_clients_exits_0() {
    let url = fresh_database("chaos_term");
    let dir = pg_workspace(&url, "");
    let root = dir.path();
    let human = token(root, "--human", "alice");
    let ids: Vec<String> = (1..=16).map(|i| escalated(root, i, "Busy")).collect();
    let log = root.join("serve.log");
    let mut server = Server::start_logged(root, &[], &[], &log);
    let stop = AtomicBool::new(false);
    let ok = AtomicUsize::new(0);
    let (code, took) = std::thread::scope(|s| {
        clients(s, 16, server.port, &human, &ids, &stop, &ok);
        // Well under way: every client has had answers, others are in flight.
        let started = Instant::now();
        while ok.load(Ordering::SeqCst) < 64 && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let stopped = server.terminate();
        stop.store(true, Ordering::SeqCst);
        stopped
    });
    let text = log_lines(&log).join("\n");
    assert!(ok.load(Ordering::SeqCst) >= 64, "the clients got answers");
    assert_eq!(
        code,
        Some(0),
        "SIGTERM after concurrent use exits 0:\n{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    // Requests in flight get the grace period (10 s), the store calls the same again.
    assert!(took < Duration::from_secs(21), "{took:?}");
    let verified = json_in(root, &["clarify", "verify"]);
    assert_eq!(verified.code, 0, "{verified:#?}");
}

#[test]
fn while_the_database_is_down_the_feed_backs_off_and_says_so_twice() {
    let (proxy, url) = Proxy::new(&fresh_database("chaos_feed"));
    let dir = pg_workspace(&url, "");
    let root = dir.path();
    escalated(root, 1, "Outage");
    let log = root.join("serve.log");
    let server = Server::start_logged(root, &[], &[], &log);
    let (cookie, _) = server.sign_in();
    // The feed follows the database before it goes.
    let (mut events, _) = open_events(&server, &cookie, 30);

    let before = log_lines(&log).len();
    proxy.down();
    let cpu = server.cpu();
    std::thread::sleep(Duration::from_secs(10));
    let used = server.cpu() - cpu;
    let during: Vec<String> = log_lines(&log).split_off(before);
    proxy.up();
    // The figure issue 50's note reports (`--nocapture`).
    eprintln!(
        "a 10 s outage: {used:?} of CPU ({:.3} core), {} log lines",
        used.as_secs_f64() / 10.0,
        during.len()
    );

    // At most a tenth of a core, and a few lines (was: a full core, 109,117 lines).
    assert!(
        used <= Duration::from_millis(1000),
        "the server used {used:?} of CPU in a 10 s outage"
    );
    assert!(
        during.len() <= 20,
        "{} log lines in a 10 s outage:\n{}",
        during.len(),
        during.join("\n")
    );
    assert_eq!(
        during
            .iter()
            .filter(|l| l.contains("the store's change feed:"))
            .count(),
        1,
        "the outage is told once:\n{}",
        during.join("\n")
    );

    // Back within the longest backoff: a write after the return reaches the open stream.
    let started = Instant::now();
    escalated(root, 7, "Back");
    let mut line = String::new();
    loop {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line.starts_with("data:") && line.contains("[7]") {
            break;
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let after = log_lines(&log).join("\n");
    assert!(
        after.contains("the store's change feed is back"),
        "the return is told:\n{after}"
    );
}

/// The database goes away before the feed's first look (held back 4 s by the test hook):
/// the feed starts once the database answers, and live updates work — they stayed off until
/// a restart ("the store's change feed could not start"), seen when a loaded machine started
/// the feed late in the test above.
#[test]
fn a_feed_that_could_not_start_starts_when_the_database_returns() {
    let (proxy, url) = Proxy::new(&fresh_database("chaos_feed_start"));
    let dir = pg_workspace(&url, "");
    let root = dir.path();
    let log = root.join("serve.log");
    let started = Instant::now();
    let server = Server::start_logged(
        root,
        &[],
        &[("AGENTX_TEST_FEED_BASELINE_DELAY_MS", "4000")],
        &log,
    );
    let (cookie, _) = server.sign_in();
    let (mut events, _) = open_events(&server, &cookie, 30);
    proxy.down();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the database went away after the feed's first look ({:?})",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_secs(6));
    proxy.up();
    let back = Instant::now();
    while !log_lines(&log)
        .iter()
        .any(|l| l.contains("live updates are on"))
    {
        assert!(
            back.elapsed() < Duration::from_secs(10),
            "the feed did not start:\n{}",
            log_lines(&log).join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    escalated(root, 7, "Back");
    let mut line = String::new();
    loop {
        line.clear();
        assert!(events.read_line(&mut line).unwrap() > 0, "the stream ended");
        if line.starts_with("data:") && line.contains("[7]") {
            break;
        }
    }
    let all = log_lines(&log);
    assert_eq!(
        all.iter()
            .filter(|l| l.contains("the store's change feed:"))
            .count(),
        1,
        "the failed start is told once:\n{}",
        all.join("\n")
    );
    assert!(!all.iter().any(|l| l.contains("live updates are off")));
}

#[test]
fn a_retry_due_while_the_database_is_down_is_sent_within_5_s_of_its_return() {
    let (proxy, url) = Proxy::new(&fresh_database("chaos_retry"));
    // The first try is answered 500: the retry falls due 10 s later.
    let mut receiver = Receiver::start(&["--fail", "1"]);
    let dir = pg_workspace(
        &url,
        &format!(
            "\n[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\n",
            receiver.url("/h")
        ),
    );
    let root = dir.path();
    // The sink is seen now (a pass at the real time, as the server's worker sees it).
    assert_eq!(json_in(root, &["notify", "send"]).code, 0);
    escalated(root, 1, "Outage");
    let server = Server::start_logged(root, &[], &[], &root.join("serve.log"));
    let first = receiver.next();
    assert_eq!(first["status"], 500, "{first}");
    // The try is recorded, then the database is gone past the retry's due time. Nothing
    // else happens on this hub (no change to wake anyone).
    std::thread::sleep(Duration::from_millis(1500));
    proxy.down();
    std::thread::sleep(Duration::from_secs(14));
    proxy.up();
    let back = Instant::now();
    let retry = receiver.next();
    let after = back.elapsed();
    assert_eq!(retry["status"], 200, "{retry}");
    assert_eq!(retry["verified"], true, "{retry}");
    assert_eq!(
        retry["headers"]["webhook-id"],
        first["headers"]["webhook-id"]
    );
    assert!(
        after < Duration::from_secs(5),
        "sent {after:?} after the database came back (was: on the next unrelated write)"
    );
    drop(server);
}

#[test]
fn kill_9_under_load_loses_and_doubles_nothing() {
    let url = fresh_database("chaos_kill");
    let dir = pg_workspace(&url, "");
    let root = dir.path();
    let mut ids = Vec::new();
    for issue in 1..=16u32 {
        for n in 0..10 {
            let args = ask_args(issue, &format!("topic {n}"), &format!("question {n}?"));
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = json_in(root, &refs);
            assert_eq!(out.code, 0, "{out:#?}");
            ids.push(
                out.json()["clarification"]["id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    let human = token(root, "--human", "alice");
    let figures = chaos_load::kill_under_load(root, &human, &ids, 10, 16);
    eprintln!("PostgreSQL: {figures:?}");
    assert_eq!(figures.kills, 10);
    assert_eq!((figures.lost, figures.doubled), (0, 0), "{figures:?}");
    assert!(figures.acknowledged > 0, "{figures:?}");
    let verified = json_in(root, &["clarify", "verify"]);
    assert_eq!(verified.code, 0, "{verified:#?}");
    let open = json_in(root, &["clarify", "list"]).json();
    assert_eq!(
        open["clarifications"].as_array().map(Vec::len),
        Some(0),
        "every record was decided in the end: {open}"
    );
}

/// The processes of the PostgreSQL cluster serving `url`: its postmaster (from the data
/// directory's `postmaster.pid`) and every process it started.
fn cluster_pids(url: &str) -> Vec<String> {
    let data = psql(url, "SHOW data_directory");
    let pid_file = std::fs::read_to_string(Path::new(data.trim()).join("postmaster.pid")).unwrap();
    let postmaster = pid_file.lines().next().unwrap().trim().to_owned();
    let mut pids = vec![postmaster.clone()];
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let after_name = stat.rsplit_once(") ").map_or("", |(_, r)| r);
        if after_name.split_whitespace().nth(1) == Some(postmaster.as_str()) {
            pids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    pids
}

/// Sends `sig` to each of `pids`; the first (the postmaster) must take it, the others may
/// have ended meanwhile.
fn signal(pids: &[String], sig: &str) {
    for (n, pid) in pids.iter().enumerate() {
        let status = std::process::Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(pid)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(n > 0 || status.success(), "kill -{sig} {pid}");
    }
}

/// A frozen cluster, thawed when dropped (also when an assertion fails first).
struct Frozen(Vec<String>);

impl Frozen {
    fn freeze(url: &str) -> Frozen {
        let pids = cluster_pids(url);
        signal(&pids, "STOP");
        Frozen(pids)
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        signal(&self.0, "CONT");
    }
}

#[test]
fn a_frozen_database_is_a_503_within_the_timeout_that_writes_nothing() {
    // A cluster of the test's own: every one of its processes is stopped.
    let cluster = Cluster::start();
    let dir = pg_workspace(&cluster.url, "timeout_ms = 2000\n");
    let root = dir.path();
    let human = token(root, "--human", "alice");
    let id = escalated(root, 1, "Frozen");
    let server = Server::start(root, &["--no-worker"]);
    let (cookie, csrf) = server.sign_in();
    let as_person = |op: &str, input: serde_json::Value| {
        let body = json!({"op": op, "input": input}).to_string();
        server.send(
            "POST",
            "/api/v1/call",
            &[
                ("Cookie", &cookie),
                ("Origin", &server.origin()),
                ("X-CSRF-Token", &csrf),
            ],
            body.as_bytes(),
        )
    };
    assert_eq!(as_person("list", json!({})).status, 200);

    let frozen = Frozen::freeze(&cluster.url);
    // A decision as a signed-in person (the session's check, in the store, meets the freeze).
    let started = Instant::now();
    let decided = as_person("decide", json!({"id": id, "message": "Redis"}));
    let took = started.elapsed();
    // And a bearer token's check.
    let started = Instant::now();
    let listed = server.call_bearer(&human, "list", json!({}));
    let took_list = started.elapsed();
    drop(frozen);

    assert_eq!(decided.status, 503, "{decided:?}");
    assert_eq!(decided.json()["error"]["code"], "IO_ERROR", "{decided:?}");
    assert!(
        decided.body.contains("showed no progress for 2000 ms")
            && decided.body.contains("nothing was written"),
        "{}",
        decided.body
    );
    for t in [took, took_list] {
        assert!(
            (Duration::from_millis(1900)..Duration::from_millis(3500)).contains(&t),
            "answered after {t:?} (was: as long as the database stayed frozen)"
        );
    }
    assert_eq!(listed.status, 503, "{listed:?}");
    // The decision that was given up goes on when the database wakes up, and commits nothing.
    std::thread::sleep(Duration::from_secs(2));
    let shown = json_in(root, &["clarify", "show", &id]).json();
    assert_eq!(
        shown["clarification"]["status"], "escalated",
        "nothing was written: {shown}"
    );
    let again = as_person("decide", json!({"id": id, "message": "Redis"}));
    assert_eq!(again.status, 200, "{again:?}");
    drop(server);
}

#[test]
fn the_inbox_view_is_rebuilt_in_the_background_after_a_read_failed() {
    let (proxy, url) = Proxy::new(&fresh_database("chaos_view"));
    let dir = pg_workspace(&url, "");
    let root = dir.path();
    escalated(root, 1, "Before the outage");
    let log = root.join("serve.log");
    // Each change waits 4 s before the view reads it, and the database goes away as soon as
    // the view starts waiting (the mark), for 6 s: the view's read falls inside the outage.
    // (Guessing when the feed had read the change failed on a loaded CI machine, which read
    // it during the outage, so the view had nothing to fail on.)
    let mark = root.join("view-waits");
    let server = Server::start_logged(
        root,
        &["--no-worker"],
        &[
            ("AGENTX_TEST_OPEN_VIEW_DELAY_MS", "4000"),
            ("AGENTX_TEST_OPEN_VIEW_MARK", mark.to_str().unwrap()),
        ],
        &log,
    );
    let (cookie, _) = server.sign_in();
    // A write the feed's baseline already holds reaches the view in its first full read, not
    // as a change: so write again (a new issue) until the view holds one back, up to four.
    let mut written = 1;
    'taken: loop {
        let _ = std::fs::remove_file(&mark);
        written += 1;
        escalated(root, written, "Written as it went");
        let waiting = Instant::now();
        while waiting.elapsed() < Duration::from_secs(8) {
            if mark.exists() {
                break 'taken;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            written < 5,
            "the view never took a change:\n{}",
            log_lines(&log).join("\n")
        );
    }
    proxy.down();
    std::thread::sleep(Duration::from_secs(6));
    proxy.up();
    let back = Instant::now();
    let rebuilt = loop {
        let text = log_lines(&log).join("\n");
        if text.contains("the view of the open records is built again") {
            break text;
        }
        assert!(
            back.elapsed() < Duration::from_secs(15),
            "the view was never rebuilt (was: pages read every ledger until a restart):\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        rebuilt.contains(&format!("({written} open records")),
        "{rebuilt}"
    );
    let page = server.get("/", &[("Cookie", &cookie)]);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        page.body.contains("Before the outage") && page.body.contains("Written as it went"),
        "{}",
        page.body
    );
}
