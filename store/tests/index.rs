//! The index of active records (docs/protocol.md §19): the monitor that follows a command reads only the
//! ledgers that can need action and the one just written; writers who keep no index (a new
//! file, a rename, an AgentX tool's locked write) are noticed; a lost, damaged or outdated
//! index is rebuilt; a full pass repairs it; concurrent writers keep it exact.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agentx_clarify_command::State;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use agentx_clarify_command::{run_monitor, Scope};
use agentx_clarify_core::monitor::may_act;
use agentx_clarify_core::{Config, Ledger};
use agentx_clarify_store::DiskStore;
use agentx_clarify_tests::fixtures::{ledger, Kind};

const NOW: i64 = 1_795_341_600_000;
/// A day later: every pending record of the fixtures is due (docs/protocol.md §29: a follow-up reads the
/// ledgers due by its `now`, so these tests look at the index when all of them are).
const LATE: i64 = NOW + 86_400_000;

fn clar(root: &Path) -> std::path::PathBuf {
    root.join(".agentx/state/clarifications")
}

/// A ledger written as another tool would (no index kept).
fn put(root: &Path, issue: u64, kind: Kind) {
    std::fs::create_dir_all(clar(root)).unwrap();
    std::fs::write(
        clar(root).join(format!("issue-{issue}.json")),
        ledger(issue, kind, NOW).to_pretty_json(),
    )
    .unwrap();
}

/// A ledger written through the store (index kept).
fn update(store: &DiskStore, issue: u32, kind: Kind) {
    store
        .update_ledger(issue, &Config::default(), "test", |_| {
            Ok((Some(ledger(u64::from(issue), kind, NOW)), ()))
        })
        .unwrap();
}

fn visited(store: &DiskStore, scope: Scope) -> BTreeSet<u64> {
    store
        .scan(scope, |r| r.issue)
        .unwrap()
        .into_iter()
        .collect()
}

fn follow_up(store: &DiskStore, written: Option<u32>) -> BTreeSet<u64> {
    visited(
        store,
        Scope::FollowUp {
            written,
            held: false,
            now: LATE,
            candidates: &[],
        },
    )
}

/// After a change behind the index: the next follow-up rebuilds it (reading everything, so
/// it sees the change), and the one after reads exactly `expected` again.
fn noticed(store: &DiskStore, expected: &[u64]) {
    let first = follow_up(store, None);
    assert!(
        first.is_superset(&set(expected)),
        "{first:?} misses some of {expected:?}"
    );
    assert_eq!(follow_up(store, None), set(expected));
}

fn set(items: &[u64]) -> BTreeSet<u64> {
    items.iter().copied().collect()
}

/// Past the filesystem's timestamp granularity, so a change made now shows in the
/// directory's modification time even if the index was stamped an instant ago.
fn tick() {
    std::thread::sleep(Duration::from_millis(30));
}

/// A workspace of 20 finished ledgers, two active (5, 7) and one corrupt (9), indexed.
fn workspace() -> (tempfile::TempDir, DiskStore) {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=20 {
        put(dir.path(), i, Kind::Finished);
    }
    put(dir.path(), 5, Kind::Clean);
    put(dir.path(), 7, Kind::Stale);
    std::fs::write(clar(dir.path()).join("issue-9.json"), "{ not json").unwrap();
    let store = DiskStore::new(dir.path());
    // No index yet: the first pass reads everything and builds it.
    assert_eq!(follow_up(&store, None).len(), 20);
    (dir, store)
}

#[test]
fn the_follow_up_reads_only_ledgers_that_can_need_action() {
    let (_dir, store) = workspace();
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9]));
    assert_eq!(
        follow_up(&store, Some(3)),
        set(&[3, 5, 7, 9]),
        "plus the one written"
    );
    update(&store, 12, Kind::Clean);
    assert_eq!(follow_up(&store, Some(12)), set(&[5, 7, 9, 12]));
    assert_eq!(
        visited(
            &store,
            Scope::FollowUp {
                written: Some(12),
                held: true,
                now: LATE,
                candidates: &[],
            }
        ),
        set(&[5, 7, 9]),
        "the one written is held by the command: not read"
    );
    update(&store, 5, Kind::Finished);
    assert_eq!(follow_up(&store, Some(5)), set(&[5, 7, 9, 12]));
    assert_eq!(follow_up(&store, None), set(&[7, 9, 12]));
    update(&store, 40, Kind::Clean);
    assert_eq!(follow_up(&store, None), set(&[7, 9, 12, 40]), "a new issue");
    // A full pass still reads every ledger.
    assert_eq!(visited(&store, Scope::All).len(), 21);
    assert_eq!(visited(&store, Scope::Monitor).len(), 21);
}

#[test]
fn changes_behind_the_index_are_noticed() {
    let (dir, store) = workspace();
    let root = dir.path();
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9]));
    // A new ledger from another tool (or `git checkout`, or a copy).
    tick();
    put(root, 30, Kind::Clean);
    noticed(&store, &[5, 7, 9, 30]);
    // A finished ledger replaced by rename (`git checkout`, editors that save that way).
    tick();
    let tmp = clar(root).join("checkout.tmp");
    std::fs::write(&tmp, ledger(2, Kind::Stale, NOW).to_pretty_json()).unwrap();
    std::fs::rename(&tmp, clar(root).join("issue-2.json")).unwrap();
    noticed(&store, &[2, 5, 7, 9, 30]);
    // An AgentX tool rewriting a finished ledger in place under its lock file.
    tick();
    let lock = clar(root).join("issue-3.json.lock");
    std::fs::write(
        &lock,
        r#"{"agent":"engineer","created":"2026-11-22T10:00:00Z"}"#,
    )
    .unwrap();
    std::fs::write(
        clar(root).join("issue-3.json"),
        ledger(3, Kind::Clean, NOW).to_pretty_json(),
    )
    .unwrap();
    std::fs::remove_file(&lock).unwrap();
    noticed(&store, &[2, 3, 5, 7, 9, 30]);
    // A ledger deleted behind its back is neither read nor reported.
    tick();
    std::fs::remove_file(clar(root).join("issue-30.json")).unwrap();
    noticed(&store, &[2, 3, 5, 7, 9]);
}

#[test]
fn a_full_pass_repairs_what_an_in_place_edit_hid() {
    let (dir, store) = workspace();
    // An editor rewriting a finished ledger in place, without a lock, leaves the directory's
    // modification time alone: the next full pass (`clarify monitor`, `list`, `ready`) sees it.
    tick();
    std::fs::write(
        clar(dir.path()).join("issue-4.json"),
        ledger(4, Kind::Clean, NOW).to_pretty_json(),
    )
    .unwrap();
    assert!(visited(&store, Scope::Monitor).contains(&4));
    assert_eq!(follow_up(&store, None), set(&[4, 5, 7, 9]));
    // And a corrupt ledger fixed by hand loses its marker once a pass finds it finished.
    std::fs::write(
        clar(dir.path()).join("issue-9.json"),
        ledger(9, Kind::Finished, NOW).to_pretty_json(),
    )
    .unwrap();
    assert_eq!(follow_up(&store, None), set(&[4, 5, 7, 9]));
    assert_eq!(follow_up(&store, None), set(&[4, 5, 7]));
}

#[test]
fn a_lost_or_damaged_index_is_rebuilt() {
    let (dir, store) = workspace();
    let index = dir.path().join(".agentx/index");
    assert!(
        index.join(".gitignore").is_file(),
        "the index is never committed"
    );
    std::fs::remove_dir_all(&index).unwrap();
    assert_eq!(follow_up(&store, None).len(), 20, "no index: everything");
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9]));
    std::fs::write(index.join("stamp"), "garbage").unwrap();
    assert_eq!(
        follow_up(&store, None).len(),
        20,
        "a damaged stamp: everything"
    );
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9]));
    std::fs::write(index.join("stamp"), r#"{"format":99}"#).unwrap();
    assert_eq!(
        follow_up(&store, None).len(),
        20,
        "another format: everything"
    );
    // A key without a ledger that needs it (a writer died between the two) costs one read,
    // then it is gone.
    let due = index.join(format!("due/{}", NOW.div_euclid(1 << 22)));
    std::fs::create_dir_all(&due).unwrap();
    std::fs::write(due.join(format!("11.{NOW}")), "").unwrap();
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9, 11]));
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9]));
    // A key of a ledger that does not exist is dropped without being reported.
    std::fs::create_dir_all(index.join("cycle")).unwrap();
    std::fs::write(index.join("cycle/99"), "").unwrap();
    assert_eq!(follow_up(&store, None), set(&[5, 7, 9]));
    assert!(!index.join("cycle/99").exists());
}

#[test]
fn concurrent_writers_keep_the_index_exact() {
    let (dir, _) = workspace();
    let root = dir.path().to_path_buf();
    std::thread::scope(|s| {
        for t in 0..8u32 {
            let root = &root;
            s.spawn(move || {
                // One store per thread, as separate processes would have.
                let store = DiskStore::new(root);
                for i in 0..25u32 {
                    let issue = 100 + t * 25 + i;
                    update(&store, issue, Kind::Clean);
                    if i % 2 == 0 {
                        update(&store, issue, Kind::Finished);
                    }
                }
            });
        }
    });
    let store = DiskStore::new(&root);
    let active: BTreeSet<u64> = visited(&store, Scope::All)
        .into_iter()
        .filter(|n| {
            let path = clar(&root).join(format!("issue-{n}.json"));
            let bytes = std::fs::read(path).unwrap();
            u32::try_from(*n)
                .ok()
                .and_then(|i| Ledger::parse("x", &bytes, Some(i)).ok())
                .is_none_or(|l| may_act(&l))
        })
        .collect();
    assert_eq!(active.len(), 3 + 8 * 12);
    // Every writer said what it did: the stamp still matches, no rebuild is needed.
    let stamp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(".agentx/index/stamp")).unwrap()).unwrap();
    assert_eq!(stamp["valid"], true, "{stamp}");
    assert_eq!(follow_up(&store, None), active);
}

/// Copies a workspace's ledgers into a fresh directory.
fn copy(from: &Path) -> tempfile::TempDir {
    let to = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(clar(to.path())).unwrap();
    for entry in std::fs::read_dir(clar(from)).unwrap().flatten() {
        std::fs::copy(entry.path(), clar(to.path()).join(entry.file_name())).unwrap();
    }
    to
}

#[test]
fn the_indexed_follow_up_acts_exactly_as_a_full_monitor() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = [
        Kind::Finished,
        Kind::Clean,
        Kind::Stale,
        Kind::Stuck,
        Kind::Deadlock,
    ];
    for i in 1..=60u64 {
        put(
            dir.path(),
            i,
            kinds[usize::try_from(i).unwrap() % kinds.len()],
        );
    }
    let (a, b) = (copy(dir.path()), copy(dir.path()));
    let (indexed, full) = (DiskStore::new(a.path()), DiskStore::new(b.path()));
    // Build the index without acting (a listing), then act an hour later.
    visited(&indexed, Scope::All);
    let config = Config::default();
    let later = NOW + 3_600_000;
    let one = run_monitor(
        &indexed,
        &config,
        later,
        false,
        Scope::FollowUp {
            written: None,
            held: false,
            now: later,
            candidates: &[],
        },
    )
    .unwrap();
    let two = run_monitor(&full, &config, later, false, Scope::All).unwrap();
    assert!(
        !one.report.is_quiet(),
        "the workspace gives the monitor work"
    );
    assert_eq!(one.report, two.report);
    assert_eq!(one.events, two.events);
    for i in 1..=60 {
        let name = format!("issue-{i}.json");
        assert_eq!(
            std::fs::read(clar(a.path()).join(&name)).unwrap(),
            std::fs::read(clar(b.path()).join(&name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_dry_run_writes_nothing_the_index_included() {
    // Issue 49 item 8: a dry run's full pass used to check (and repair) the index's markers
    // and keys against every ledger — a fifth of a 10,000-ledger pass — and `--dry-run`
    // promises no write. The next full pass repairs what needs it.
    let (dir, store) = workspace();
    let root = dir.path();
    std::fs::remove_dir_all(root.join(".agentx/index")).unwrap();
    let config = Config::default();
    let dry = run_monitor(&store, &config, LATE, true, Scope::Monitor).unwrap();
    assert!(
        !root.join(".agentx/index").exists(),
        "a dry run wrote the index"
    );
    assert_eq!(
        visited(&store, Scope::MonitorDryRun),
        visited(&store, Scope::Monitor),
        "it reads what a full pass reads"
    );
    assert!(
        root.join(".agentx/index").exists(),
        "a full pass repairs it"
    );
    let again = run_monitor(&store, &config, LATE, true, Scope::Monitor).unwrap();
    assert_eq!(dry.report, again.report);
}

/// Every file under `dir` with its bytes (what a pass may have written).
fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_reader_beside_the_writers_leaves_the_index_alone() {
    // Issue 50 item 5: the notification deliverer read every ledger through `Scope::All`
    // after each change, which repairs the index — a write of its stamp and markers that the
    // next writer invalidated again — and the server with its worker on fell to 4 decisions/s
    // at 20,000 ledgers. `Scope::Read` reads what `All` reads and writes nothing.
    let (dir, store) = workspace();
    let root = dir.path();
    visited(&store, Scope::All);
    // A ledger written behind the index: a repairing pass would write its marker and stamp.
    put(root, 90, Kind::Stuck);
    let index = root.join(".agentx/index");
    let before = snapshot(&index);
    assert_eq!(visited(&store, Scope::Read), visited(&store, Scope::All));
    let repaired = snapshot(&index);
    assert_ne!(before, repaired, "`All` repairs the index");
    put(root, 91, Kind::Stuck);
    let before = snapshot(&index);
    assert!(visited(&store, Scope::Read).contains(&91));
    assert_eq!(snapshot(&index), before, "`Read` wrote the index");
}
