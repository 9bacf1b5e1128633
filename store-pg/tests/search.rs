//! The search index of `PgStore` (schema migration 10, `store-pg/src/search.rs`) against a
//! real PostgreSQL server: the same records in a `MemStore`, which scans, and in PostgreSQL,
//! which answers through its index, give the same hits (ids, scores, order, `supersededBy`)
//! and the same `related`, for many queries, filters and limits and for the search vectors;
//! the index is never behind a writer on another connection; a database migrated from
//! version 9 gets the rows of the ledgers it holds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use agentx_clarify_command::search::{related, search};
use agentx_clarify_command::{vector, MemStore, State as _};
use agentx_clarify_core::search::probe::Probe;
use agentx_clarify_core::search::{supersede, Filter, Hit, Query};
use agentx_clarify_core::{Config, NewRequest, Status};
use agentx_clarify_pg::documents::document_of;
use agentx_clarify_pg::{PgStore, PgWorkspace};
use agentx_clarify_tests::pg::{fresh_database, psql};
use agentx_clarify_tests::{load_all, materialize, now_ms};
use serde_json::{json, Value};

const T0: i64 = 1_795_341_600_000;
const MIN: i64 = 60_000;

/// A scanning `MemStore` and a `PgStore` workspace on a fresh database, written in step.
struct Pair {
    mem: MemStore,
    pg: PgWorkspace,
    url: String,
    _dir: tempfile::TempDir,
}

fn pair(prefix: &str) -> Pair {
    let url = fresh_database(prefix);
    PgStore::init_schema(&url).expect("create the schema");
    let dir = tempfile::tempdir().expect("tempdir");
    materialize(&Value::Null, dir.path()).expect("materialize");
    Pair {
        mem: MemStore::from_setup(&Value::Null).expect("memstore"),
        pg: agentx_clarify_pg::open_workspace(dir.path(), &url).expect("open"),
        url,
        _dir: dir,
    }
}

impl Pair {
    /// Plays one command on both stores; their results must be equal.
    fn play(&self, op: &str, args: &Value, now: i64) -> Value {
        let mem = vector::play(&self.mem, op, args, now, |_| None);
        let pg = vector::play(&self.pg, op, args, now, |_| None);
        assert_eq!(pg, mem, "{op} {args}");
        mem
    }

    /// The MemStore's state documents, imported into the database (stored whole).
    fn import(&self) {
        let docs: Vec<(String, Vec<u8>)> = self
            .mem
            .files()
            .into_iter()
            .filter(|(p, _)| document_of(p).is_some())
            .collect();
        self.pg.state.import_documents(&docs, true).expect("import");
    }

    /// `search` on both stores gives the same hits, and PostgreSQL answered by its index.
    fn same_search(&self, query: &Query<'_>, filter: &Filter) -> Vec<Hit> {
        assert!(self
            .mem
            .search_index(&Probe::search(query, filter))
            .is_none());
        let found = self.pg.search_index(&Probe::search(query, filter));
        assert!(found.is_some(), "no index answer for {query:?} {filter:?}");
        let mem = search(&self.mem, query, filter).expect("scan");
        let pg = search(&self.pg, query, filter).expect("index");
        assert_eq!(pg.hits, mem.hits, "{query:?} {filter:?}");
        mem.hits
    }

    /// `related` on both stores gives the same hits, PostgreSQL's by its index.
    fn same_related(&self, req: &NewRequest, issue: u32, min: u8) -> Vec<Hit> {
        let text = format!("{} {}", req.topic, req.question);
        let query = Query {
            text: &text,
            field: req.field.as_deref(),
        };
        assert!(self
            .pg
            .search_index(&Probe::related(&query, issue, min))
            .is_some());
        let config = Config {
            related_min_score: min,
            ..Config::default()
        };
        let (mut w1, mut w2) = (Vec::new(), Vec::new());
        let mem = related(&self.mem, req, issue, &config, &mut w1);
        let pg = related(&self.pg, req, issue, &config, &mut w2);
        assert_eq!(pg, mem, "related {text:?} on {issue}, min {min}");
        assert_eq!((w1.len(), w2.len()), (0, 0));
        mem
    }
}

/// A small deterministic generator (an LCG), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from((self.0 >> 33) % n as u64).unwrap()
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.next(from.len())]
    }

    fn words(&mut self, from: &[&str], n: usize) -> String {
        (0..n)
            .map(|_| self.pick(from))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

const WORDS: &[&str] = &[
    "redis",
    "cache",
    "lru",
    "eviction",
    "sessions",
    "deploy",
    "postgres",
    "schema",
    "index",
    "queue",
    "kafka",
    "retry",
    "timeout",
    "auth",
    "token",
    "café",
    "Cache",
    "the",
    "or",
    "which",
    "should",
    "we",
    "use",
    "ttl",
    "memcached",
    "shard",
];
const FIELDS: &[&str] = &["storage.cache", "sessions.persistence", "queue.backend"];
const AGENTS: &[(&str, &str)] = &[
    ("engineer", "architect"),
    ("engineer", "product-manager"),
    ("architect", "engineer"),
];

/// Many records over a dozen issues, written through both stores in step (so PostgreSQL's
/// index is kept by its own writes): asks, answers, resolutions, some superseding earlier
/// decisions of their own or of other issues, several at the same instant (ties in recency),
/// and a question with a word too long for a lexeme. Returns the resolved ids.
fn scenario(p: &Pair, rng: &mut Rng, asks: usize) -> Vec<String> {
    let mut seqs = [0u32; 13];
    let mut resolved: Vec<String> = Vec::new();
    let long = "é".repeat(1100);
    for i in 0..asks {
        let issue = 1 + rng.next(12);
        let (from, to) = AGENTS[rng.next(AGENTS.len())];
        let n = 3 + rng.next(4);
        let mut question = format!("{}?", rng.words(WORDS, n));
        if i == 7 {
            question = format!("{question} {long}");
        }
        let mut args = json!({"issueNumber": issue, "from": from, "to": to,
            "topic": rng.words(WORDS, 2), "question": question});
        if rng.next(3) == 0 {
            args["field"] = json!(rng.pick(FIELDS));
        }
        // Two commands a minute: records share their last instant.
        let now = T0 + i64::try_from(i / 2).unwrap() * MIN;
        if p.play("request", &args, now)["ok"] != json!(true) {
            continue;
        }
        seqs[issue] += 1;
        let id = format!("CLR-{issue}-{:03}", seqs[issue]);
        if rng.next(3) == 0 {
            continue;
        }
        let n = 2 + rng.next(3);
        let body = format!("{}.", rng.words(WORDS, n));
        p.play("answer", &json!({"id": id, "from": to, "body": body}), now);
        if rng.next(4) == 0 {
            continue;
        }
        let mut resolve = json!({"id": id});
        if !resolved.is_empty() && rng.next(3) == 0 {
            let old = resolved[rng.next(resolved.len())].clone();
            resolve["supersedes"] = json!([old]);
        }
        if p.play("resolve", &resolve, now)["ok"] == json!(true) {
            resolved.push(id);
        }
    }
    resolved
}

fn queries(long: &str) -> Vec<(String, Option<&'static str>)> {
    let mut out: Vec<(String, Option<&'static str>)> = [
        "redis cache",
        "cache",
        "Which cache should we use?",
        "or the",
        "café",
        "kafka retry timeout",
        "nothing matches this",
        "",
        "lru eviction memcached shard ttl token auth",
    ]
    .iter()
    .map(|t| (t.to_string(), None))
    .collect();
    for f in FIELDS {
        out.push(("redis".into(), Some(f)));
        out.push((String::new(), Some(f)));
    }
    out.push((long.to_owned(), None));
    out.push((format!("{long} redis"), Some("storage.cache")));
    out
}

fn filters() -> Vec<Filter> {
    let mut out = Vec::new();
    for limit in [None, Some(1), Some(2), Some(3), Some(100)] {
        out.push(Filter {
            limit,
            ..Filter::default()
        });
    }
    out.push(Filter {
        statuses: vec![Status::Resolved],
        limit: Some(5),
        ..Filter::default()
    });
    out.push(Filter {
        statuses: vec![Status::Pending, Status::Answered],
        ..Filter::default()
    });
    out.push(Filter {
        field: Some("storage.cache".into()),
        ..Filter::default()
    });
    out.push(Filter {
        from: Some("architect".into()),
        to: Some("engineer".into()),
        ..Filter::default()
    });
    out.push(Filter {
        not_issue: Some(3),
        limit: Some(4),
        ..Filter::default()
    });
    out
}

#[test]
fn the_index_gives_the_scans_hits_and_related() {
    let p = pair("search_same");
    let mut rng = Rng(45);
    let resolved = scenario(&p, &mut rng, 160);
    assert!(resolved.len() > 20, "{resolved:?}");
    let long = "é".repeat(1100);
    // The long word is kept whole: not a lexeme, in `rest`.
    assert_eq!(
        psql(
            &p.url,
            "SELECT count(*) FROM agentx.search_records WHERE rest IS NOT NULL"
        ),
        "1"
    );
    let (mut searched, mut superseded) = (0, 0);
    for (text, field) in queries(&long) {
        let query = Query { text: &text, field };
        for filter in filters() {
            let hits = p.same_search(&query, &filter);
            searched += 1;
            superseded += hits.iter().filter(|h| h.superseded_by.is_some()).count();
        }
        for min in [0, 30, 60, 90] {
            for issue in [1, 5] {
                let req = NewRequest {
                    topic: String::from("Ask"),
                    question: text.clone(),
                    field: field.map(str::to_owned),
                    ..NewRequest::default()
                };
                p.same_related(&req, issue, min);
            }
        }
    }
    assert!(
        superseded > 0,
        "no hit was superseded in {searched} searches"
    );
    // An issue filter: every record of one issue. The scan reads only that issue's ledger
    // and so marks only the supersessions made in it; the index marks those made anywhere,
    // as the search without the filter does (command/src/search.rs: to be made alike).
    let (all, _) = agentx_clarify_command::query::read_all(&p.mem).expect("read");
    let by = supersede::superseded_by(&all);
    let mut crossed = 0;
    for issue in 1..=12 {
        let filter = Filter {
            issue: Some(issue),
            limit: Some(100),
            ..Filter::default()
        };
        let query = Query::default();
        assert!(p.pg.search_index(&Probe::search(&query, &filter)).is_some());
        let mut scan = search(&p.mem, &query, &filter).expect("scan").hits;
        let before = scan.clone();
        supersede::mark(&mut scan, &by);
        crossed += usize::from(scan != before);
        let pg = search(&p.pg, &query, &filter).expect("index").hits;
        assert_eq!(pg, scan, "issue {issue}");
        assert!(pg.iter().all(|h| h.issue == issue));
    }
    println!("{crossed} issues with a decision superseded from another issue");
    // The same records stored whole (an import) index the same.
    p.import();
    for (text, field) in queries(&long) {
        p.same_search(&Query { text: &text, field }, &Filter::default());
    }
}

/// The `search` arguments of a vector case as a probe (`None` for a limit out of range).
fn probe_of(args: &Value) -> Option<Probe> {
    let text = args["query"].as_str().unwrap_or_default();
    let limit = args["limit"].as_u64().map(|l| usize::try_from(l).unwrap());
    if limit.is_some_and(|l| !(1..=100).contains(&l)) {
        return None;
    }
    let filter = Filter {
        issue: args["issue"].as_u64().map(|n| u32::try_from(n).unwrap()),
        statuses: args["status"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| Status::parse(s.as_str().unwrap()).unwrap())
            .collect(),
        field: None,
        from: args["from"].as_str().map(str::to_owned),
        to: args["to"].as_str().map(str::to_owned),
        not_issue: None,
        limit,
    };
    let query = Query {
        text,
        field: args["field"].as_str(),
    };
    Some(Probe::search(&query, &filter))
}

#[test]
fn the_search_vectors_answer_alike_through_the_index() {
    let mut played = 0;
    for (file, v) in load_all().into_iter().filter(|(f, _)| f.contains("search")) {
        let p = pair("search_vectors");
        for case in v["cases"].as_array().expect("cases") {
            let op = case["op"].as_str().expect("op");
            let args = case.get("args").cloned().unwrap_or(Value::Null);
            p.play(op, &args, now_ms(&case["now"]));
            if op == "search" {
                if let Some(probe) = probe_of(&args) {
                    assert!(p.pg.search_index(&probe).is_some(), "{file}: {args}");
                    played += 1;
                }
            }
        }
    }
    assert!(played >= 9, "{played} searches in the vectors");
}

#[test]
fn a_writer_on_another_connection_is_seen_at_once() {
    let p = pair("search_writer");
    let url = p.url.clone();
    let dir = tempfile::tempdir().expect("tempdir");
    materialize(&Value::Null, dir.path()).expect("materialize");
    let writer = std::thread::spawn(move || {
        let store = agentx_clarify_pg::open_workspace(dir.path(), &url).expect("open");
        for n in 0..1000u64 {
            let req = agentx_clarify_tests::fixtures::engineer_asks(
                1 + n % 100,
                format!("Zebra {n}"),
                format!("Which stripe w{n} for the zebra?"),
            );
            agentx_clarify_command::ask(&store, T0, &req).expect("ask");
        }
        Instant::now()
    });
    // Searches while it writes: each one answers (by the index) and sees a prefix.
    while !writer.is_finished() {
        let hits = search(
            &p.pg,
            &Query {
                text: "zebra",
                field: None,
            },
            &Filter::default(),
        );
        assert!(hits.expect("search").errors.is_empty());
        std::thread::sleep(Duration::from_millis(50));
    }
    let finished = writer.join().expect("writer");
    for issue in 1..=100u32 {
        let filter = Filter {
            issue: Some(issue),
            limit: Some(100),
            ..Filter::default()
        };
        let probe = Probe::search(
            &Query {
                text: "zebra",
                field: None,
            },
            &filter,
        );
        let found = p.pg.search_index(&probe).expect("index");
        assert_eq!(found.records.len(), 10, "issue {issue}");
    }
    let one = search(
        &p.pg,
        &Query {
            text: "w999",
            field: None,
        },
        &Filter::default(),
    );
    assert_eq!(one.expect("search").hits[0].id, "CLR-100-010");
    let seen = finished.elapsed();
    println!("1,000 records by another connection, all seen {seen:?} after its last commit");
    assert!(seen < Duration::from_secs(1), "{seen:?}");
}

#[test]
fn a_version_9_database_is_indexed_by_the_migration() {
    let p = pair("search_migrated");
    let mut rng = Rng(9);
    scenario(&p, &mut rng, 60);
    // Half the ledgers stored whole (imported as compact JSON), and one that does not parse.
    let ledger = |n: u32| format!(".agentx/state/clarifications/issue-{n}.json");
    let compact = |b: Vec<u8>| serde_json::to_vec(&serde_json::from_slice::<Value>(&b).unwrap());
    let whole: Vec<(String, Vec<u8>)> = (1..=6)
        .filter_map(|n| {
            p.mem
                .file(&ledger(n))
                .map(|b| (ledger(n), compact(b).unwrap()))
        })
        .chain([(ledger(40), b"{ not json".to_vec())])
        .collect();
    p.pg.state.import_documents(&whole, true).expect("import");
    for (path, bytes) in &whole {
        p.mem.put(path, Some(bytes.clone()));
    }
    let stored_whole =
        "SELECT count(*) FROM agentx.documents WHERE kind = 'clarifications' AND records IS NULL";
    assert_eq!(psql(&p.url, stored_whole), "7");
    psql(
        &p.url,
        "DROP TABLE agentx.search_records; DELETE FROM agentx.migrations WHERE version >= 10",
    );
    let migrated = PgStore::init_schema(&p.url).expect("migrate");
    assert_eq!((migrated.from, migrated.to), (9, 11));
    assert_eq!(
        migrated.applied,
        [
            "10: the search index of clarification records",
            "11: held escalated records in the index of active records"
        ]
    );
    let rows = psql(&p.url, "SELECT count(*) FROM agentx.search_records");
    let records: usize = (1..=12)
        .filter_map(|n| p.mem.read_ledger(n).unwrap())
        .map(|l| l.clarifications.len())
        .sum();
    assert_eq!(rows, records.to_string());
    let store = agentx_clarify_pg::open_workspace(p._dir.path(), &p.url).expect("open");
    let long = "é".repeat(1100);
    for (text, field) in queries(&long) {
        let query = Query { text: &text, field };
        for filter in filters() {
            assert!(store
                .search_index(&Probe::search(&query, &filter))
                .is_some());
            let mem = search(&p.mem, &query, &filter).expect("scan");
            let pg = search(&store, &query, &filter).expect("index");
            assert_eq!(pg.hits, mem.hits, "{query:?} {filter:?}");
        }
    }
}
