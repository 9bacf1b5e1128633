//! docs/protocol.md §31 as a property over random workspace trees: links (to a victim file, to a sentinel
//! directory, dangling into the outside, to `/dev/zero`) and FIFOs planted anywhere under
//! `.agentx/`, then every kind of command run against the tree. Whatever the tree, no command
//! writes outside the root (the victim's bytes and the outside's listing are unchanged, no
//! file appears through a dangling link), none hangs (each finishes within a few seconds),
//! none allocates without bound (each runs under a 2 GB address-space limit and must not die
//! of it or of anything else), none panics.
//!
//! Seeded (fastrand): a failure prints the seed and the planted tree; `SECURITY_TREE_SEEDS=n`
//! runs more trees.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{ask, snapshot, BIN, T0};

/// Directories a link may replace.
const DIRS: &[&str] = &[
    ".agentx",
    ".agentx/state",
    ".agentx/state/clarifications",
    ".agentx/state/delegations",
    ".agentx/state/runs",
    ".agentx/index",
    ".agentx/index/active",
    ".agentx/index/search",
    ".agentx/keys",
    ".agentx/workflows",
    ".agentx/agents",
    ".github/agents",
];

/// Files a link or a FIFO may replace.
const FILES: &[&str] = &[
    ".agentx/config.toml",
    ".agentx/state/agent-status.json",
    ".agentx/state/.gitignore",
    ".agentx/state/clarifications/issue-1.json",
    ".agentx/state/clarifications/issue-2.json",
    ".agentx/state/clarifications/issue-1.json.lock",
    ".agentx/state/clarifications/issue-2.json.lock",
    ".agentx/state/clarifications/CLR-1-001.lease",
    ".agentx/state/runs/CLR-1-001.r1.1.json",
    ".agentx/state/delegations/issue-1.json",
    ".agentx/index/.gitignore",
    ".agentx/index/stamp",
    ".agentx/index/lock",
    ".agentx/index/writers",
    ".agentx/index/search-journal",
    ".agentx/index/active/issue-1.json",
    ".agentx/index/active/issue-2.json",
    ".agentx/keys/.gitignore",
    ".agentx/keys/engineer.key",
    ".agentx/keys/engineer.pub",
    ".agentx/workflows/feature.toml",
    ".agentx/agents/architect.toml",
    ".github/agents/architect.agent.md",
];

/// The commands run against every tree.
const COMMANDS: &[&[&str]] = &[
    &["clarify", "list"],
    &["ready"],
    &["clarify", "monitor"],
    &["clarify", "monitor", "--dry-run"],
    &["clarify", "verify"],
    &[
        "clarify",
        "ask",
        "--issue=2",
        "--from=engineer",
        "--to=architect",
        "--topic=t",
        "--question=q",
        "--non-blocking",
    ],
    &[
        "clarify",
        "answer",
        "CLR-1-001",
        "--from=architect",
        "--body=Redis.",
    ],
    &["state", "--agent=engineer", "--status=working"],
    &["keys", "new", "engineer"],
    &["keys", "list"],
    &["clarify", "route", "CLR-1-001"],
    &["clarify", "route", "--all"],
    &["init"],
];

#[derive(Debug, Clone, Copy)]
enum Plant {
    LinkToVictim,
    LinkToSentinel,
    Dangling,
    LinkToZero,
    Fifo,
}

fn plant(root: &Path, outside: &Path, rel: &str, what: Plant) {
    let path = root.join(rel);
    // A planted link above this spot would make the plant land outside: skip it (the test
    // must not write outside itself).
    let mut here = root.to_path_buf();
    for part in Path::new(rel)
        .parent()
        .into_iter()
        .flat_map(Path::components)
    {
        here.push(part);
        match std::fs::symlink_metadata(&here) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return,
            Err(_) => break,
        }
    }
    if let Ok(meta) = std::fs::symlink_metadata(&path) {
        if meta.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    if let Some(parent) = path.parent() {
        // A parent may itself be a planted link: then this plant lands outside, which the
        // test must not do itself.
        std::fs::create_dir_all(parent).unwrap();
    }
    let link = |target: &Path| std::os::unix::fs::symlink(target, &path).unwrap();
    match what {
        Plant::LinkToVictim => link(&outside.join("victim")),
        Plant::LinkToSentinel => link(&outside.join("sentinel")),
        Plant::Dangling => link(&outside.join("created-through-a-link")),
        Plant::LinkToZero => link(Path::new("/dev/zero")),
        Plant::Fifo => {
            let ok = Command::new("mkfifo")
                .arg(&path)
                .status()
                .unwrap()
                .success();
            assert!(ok);
        }
    }
}

/// Runs the binary under an address-space limit; the exit code, or a panic when it hangs.
fn run(root: &Path, args: &[&str], limit: Duration) -> (i32, String) {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 2000000; exec \"$0\" \"$@\"")
        .arg(BIN)
        .arg(format!("--root={}", root.display()))
        .arg("--json")
        .arg(format!("--now={}", T0 + 60_000))
        .args(args)
        .env_remove("AGENTX_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            return (status.code().unwrap_or(-1), err);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agentx {args:?} still ran after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn runner_config() -> String {
    // A bare name found on the runner's PATH (a program path must be inside the workspace).
    let agents = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/agents");
    format!(
        "[agents.architect]\ncommand = [\"plain\"]\nanswer = \"text\"\ntimeout_seconds = 5\nenv = {{ PATH = {:?} }}\n",
        format!("{}:/usr/bin:/bin", agents.display())
    )
}

fn one_tree(seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let outer = tempfile::tempdir().unwrap();
    let outer_path = outer.path().canonicalize().unwrap();
    let root = outer_path.join("ws");
    let outside = outer_path.join("outside");
    std::fs::create_dir_all(outside.join("sentinel")).unwrap();
    std::fs::write(outside.join("victim"), "precious bytes\n").unwrap();
    std::fs::write(outside.join("sentinel/kept"), "kept\n").unwrap();
    std::fs::create_dir(&root).unwrap();
    let (code, err) = run(&root, &["init"], Duration::from_secs(10));
    assert_eq!(code, 0, "{err}");
    std::fs::write(root.join(".agentx/config.toml"), runner_config()).unwrap();
    ask(&root, T0, 1, "Cache", "Redis?");
    let before = snapshot(&outside);
    let mut planted = Vec::new();
    for _ in 0..rng.usize(1..=4) {
        let what = match rng.u8(0..5) {
            0 => Plant::LinkToVictim,
            1 => Plant::LinkToSentinel,
            2 => Plant::Dangling,
            3 => Plant::LinkToZero,
            _ => Plant::Fifo,
        };
        let rel = if rng.u8(0..4) == 0 {
            DIRS[rng.usize(0..DIRS.len())]
        } else {
            FILES[rng.usize(0..FILES.len())]
        };
        plant(&root, &outside, rel, what);
        planted.push((rel, what));
    }
    for args in COMMANDS {
        let (code, err) = run(&root, args, Duration::from_secs(8));
        let context = format!("seed {seed}, planted {planted:?}, agentx {args:?}");
        // 0 or one of the §9 exit codes; never a panic (101), a signal or an abort (-1, 134).
        assert!((0..=9).contains(&code), "{context}: exit {code}\n{err}");
        assert!(!err.contains("panicked"), "{context}: {err}");
        assert!(!err.contains("memory allocation"), "{context}: {err}");
        assert_eq!(
            std::fs::read(outside.join("victim")).unwrap(),
            b"precious bytes\n",
            "{context}: the victim was written"
        );
        assert_eq!(snapshot(&outside), before, "{context}: the outside changed");
        let mut beside: Vec<PathBuf> = std::fs::read_dir(&outer_path)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        beside.sort();
        assert_eq!(
            beside,
            vec![outside.clone(), root.clone()],
            "{context}: a file appeared beside the workspace"
        );
    }
}

#[test]
fn no_command_writes_outside_hangs_or_floods_whatever_is_planted_under_agentx() {
    let seeds: u64 = std::env::var("SECURITY_TREE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    for seed in 0..seeds {
        one_tree(seed);
    }
}
