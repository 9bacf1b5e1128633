//! docs/protocol.md §31 on the binary: each finding of the attack on the workspace (issue 35), replayed
//! as an adversary would — a planted link, FIFO or device under `.agentx/`, a hostile setting
//! — asserting the refusal (at once, naming the file) and that nothing outside the workspace
//! changed: a victim file's bytes and a sentinel directory's listing compared before and after.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{
    agentx, ask, assert_fails, bytes, json_within, ledger_path, root_arg, run_within, snapshot,
    Out, T0,
};

/// What each command may take before it counts as hanging.
const LIMIT: Duration = Duration::from_secs(10);

/// `outer/ws` (an initialised workspace) beside `outer/outside` (a victim file and a
/// sentinel directory an attacker would like written).
struct Site {
    _outer: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    victim: PathBuf,
    before: Vec<(String, Option<Vec<u8>>)>,
}

impl Site {
    fn new() -> Site {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        let init = json_within(&root, T0, &["init"]);
        assert_eq!(init.code, 0, "{init:#?}");
        let outside = outer.path().join("outside");
        std::fs::create_dir_all(outside.join("sentinel")).unwrap();
        let victim = outside.join("victim");
        std::fs::write(&victim, "precious bytes\n").unwrap();
        std::fs::write(outside.join("sentinel/kept"), "kept\n").unwrap();
        let before = snapshot(&outside);
        Site {
            _outer: outer,
            root,
            outside,
            victim,
            before,
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Replaces `rel` (a directory under the root) by a link to the sentinel directory.
    fn link_dir(&self, rel: &str) {
        let path = self.path(rel);
        if path.exists() {
            std::fs::remove_dir_all(&path).unwrap();
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(self.outside.join("sentinel"), &path).unwrap();
    }

    /// Plants a link at `rel` to `target`.
    fn link(&self, rel: &str, target: &Path) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(target, &path).unwrap();
    }

    fn fifo(&self, rel: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&path);
        let status = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(status.success());
    }

    fn json(&self, args: &[&str]) -> Out {
        json_within(&self.root, T0 + 60_000, args)
    }

    fn text(&self, args: &[&str]) -> Out {
        let mut all = vec![root_arg(&self.root), format!("--now={}", T0 + 60_000)];
        all.extend(args.iter().map(|s| (*s).to_owned()));
        run_within(LIMIT, all)
    }

    /// Nothing outside the workspace changed: the victim's bytes and the sentinel's listing.
    fn assert_untouched(&self) {
        assert_eq!(
            bytes(&self.victim),
            b"precious bytes\n",
            "the victim was written"
        );
        assert_eq!(snapshot(&self.outside), self.before, "the outside changed");
    }
}

/// Fails with `code` and a message naming `named`.
fn refused(out: &Out, exit: i32, code: &str, named: &str) {
    let v = assert_fails(out, exit, code);
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(named), "{named} not named: {message}");
}

/// A runner for the architect: the example `plain` agent answering `answer`.
fn runner(extra: &str) -> String {
    // A bare name found on the runner's PATH: a program given as a path must be inside the
    // workspace (docs/protocol.md §31).
    let agents = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/agents");
    format!(
        "[agents.architect]\ncommand = [\"plain\"]\nanswer = \"text\"\nenv = {{ AGENT_ANSWER = \"Redis.\", PATH = {:?} }}\n{extra}",
        format!("{}:/usr/bin:/bin", agents.display())
    )
}

fn set_config(site: &Site, text: &str) {
    std::fs::write(site.path(".agentx/config.toml"), text).unwrap();
}

#[test]
fn a_planted_gitignore_link_in_the_index_is_refused_never_written_through() {
    // The finding: `.agentx/index/.gitignore` -> ../../../outside/victim truncated the victim
    // to `*` on `clarify list`, `ready`, `monitor --dry-run` (git keeps the link in a clone).
    let site = Site::new();
    ask(&site.root, T0, 1, "Cache", "Redis?");
    std::fs::remove_dir_all(site.path(".agentx/index")).unwrap();
    std::fs::create_dir(site.path(".agentx/index")).unwrap();
    site.link(
        ".agentx/index/.gitignore",
        Path::new("../../../outside/victim"),
    );
    for argv in [
        vec!["clarify", "list"],
        vec!["ready"],
        vec!["clarify", "monitor", "--dry-run"],
        vec![
            "clarify",
            "ask",
            "--issue=2",
            "--from=engineer",
            "--to=architect",
            "--topic=t",
            "--question=q",
            "--non-blocking",
        ],
    ] {
        let out = site.json(&argv);
        refused(&out, 1, "IO_ERROR", ".agentx/index/.gitignore");
        site.assert_untouched();
    }
    assert!(!ledger_path(&site.root, 2).exists());
}

#[test]
fn linked_directories_under_agentx_are_refused_by_name() {
    for dir in [
        ".agentx/state",
        ".agentx/state/clarifications",
        ".agentx/index",
        ".agentx/index/active",
        ".agentx/state/delegations",
    ] {
        let site = Site::new();
        site.link_dir(dir);
        for argv in [
            vec![
                "clarify",
                "ask",
                "--issue=1",
                "--from=engineer",
                "--to=architect",
                "--topic=t",
                "--question=q",
                "--non-blocking",
            ],
            vec!["clarify", "list"],
            vec!["clarify", "monitor"],
        ] {
            let out = site.json(&argv);
            refused(
                &out,
                1,
                "IO_ERROR",
                &format!("{dir}: it is a symbolic link"),
            );
            site.assert_untouched();
        }
    }
}

#[test]
fn keys_new_never_writes_through_a_linked_keys_directory() {
    // The finding: `keys new` wrote a key pair into the directory `.agentx/keys` linked to.
    let site = Site::new();
    site.link_dir(".agentx/keys");
    let out = site.json(&["keys", "new", "engineer"]);
    refused(&out, 1, "IO_ERROR", ".agentx/keys: it is a symbolic link");
    site.assert_untouched();
    // A linked .agentx/ is refused the same way.
    let site = Site::new();
    site.link_dir(".agentx");
    let out = site.json(&["keys", "new", "engineer"]);
    refused(&out, 1, "IO_ERROR", ".agentx: it is a symbolic link");
    site.assert_untouched();
}

#[test]
fn fifos_and_devices_where_index_files_belong_fail_at_once() {
    // The finding: the stamp as a FIFO hung `clarify list`; linked to /dev/zero it grew every
    // command to 2.6 GB.
    for plant in ["fifo", "zero"] {
        for file in [".agentx/index/stamp", ".agentx/index/writers"] {
            let site = Site::new();
            ask(&site.root, T0, 1, "Cache", "Redis?");
            match plant {
                "fifo" => site.fifo(file),
                _ => site.link(file, Path::new("/dev/zero")),
            }
            let out = site.json(&["clarify", "list"]);
            let what = if plant == "fifo" {
                "FIFO"
            } else {
                "symbolic link"
            };
            refused(&out, 1, "IO_ERROR", file);
            assert!(out.stdout.contains(what), "{plant} {file}: {}", out.stdout);
            site.assert_untouched();
        }
    }
}

#[test]
fn a_fifo_lease_fails_route_at_once_naming_it() {
    // The finding (and issue 36): a FIFO where a routing lease belongs hung `clarify route`
    // and `route --all` for ever.
    let site = Site::new();
    set_config(&site, &runner(""));
    ask(&site.root, T0, 1, "Cache", "Redis?");
    let ledger = bytes(&ledger_path(&site.root, 1));
    site.fifo(".agentx/state/clarifications/CLR-1-001.lease");
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    refused(&out, 1, "IO_ERROR", "CLR-1-001.lease");
    assert!(out.stdout.contains("FIFO"), "{}", out.stdout);
    assert_eq!(bytes(&ledger_path(&site.root, 1)), ledger);
    let out = site.json(&["clarify", "route", "--all"]);
    assert!(out.stdout.contains("CLR-1-001.lease"), "{out:#?}");
    assert_eq!(bytes(&ledger_path(&site.root, 1)), ledger);
    site.assert_untouched();
}

#[test]
fn personas_are_read_from_inside_the_workspace_only() {
    // The finding: `persona = "../../../../etc/passwd"`, an absolute path or a linked default
    // persona put an outside file into the prompt and the run log; /dev/zero ran out of
    // memory; a FIFO hung `route`.
    let site = Site::new();
    ask(&site.root, T0, 1, "Cache", "Redis?");
    let ledger = bytes(&ledger_path(&site.root, 1));
    for persona in [
        "../outside/victim",
        "/etc/passwd",
        "sub/../../outside/victim",
    ] {
        set_config(&site, &runner(&format!("persona = {persona:?}\n")));
        let out = site.json(&["clarify", "route", "CLR-1-001"]);
        refused(
            &out,
            3,
            "CONFIG_INVALID",
            "relative path inside the workspace",
        );
    }
    set_config(&site, &runner(""));
    let default = ".github/agents/architect.agent.md";
    for target in [site.victim.clone(), PathBuf::from("/dev/zero")] {
        site.link(default, &target);
        let out = site.json(&["clarify", "route", "CLR-1-001"]);
        refused(
            &out,
            1,
            "IO_ERROR",
            "architect.agent.md: it is a symbolic link",
        );
    }
    site.fifo(default);
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    refused(&out, 1, "IO_ERROR", "architect.agent.md: it is a FIFO");
    // A linked `.github/agents/` leads out too.
    std::fs::remove_dir_all(site.path(".github")).unwrap();
    std::fs::create_dir(site.path(".github")).unwrap();
    std::fs::create_dir(site.outside.join("agents")).unwrap();
    std::fs::write(site.outside.join("agents/architect.agent.md"), "OUTSIDE").unwrap();
    let before = snapshot(&site.outside);
    site.link(".github/agents", &site.outside.join("agents"));
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    refused(&out, 1, "IO_ERROR", ".github/agents: it is a symbolic link");
    assert_eq!(snapshot(&site.outside), before);
    // Nothing was routed, logged or escalated.
    assert_eq!(bytes(&ledger_path(&site.root, 1)), ledger);
    assert!(!site.path(".agentx/state/runs").exists());
}

#[test]
fn a_program_path_outside_the_workspace_is_config_invalid_and_never_runs() {
    // §31: a `command` program given as a path is inside the root. An absolute path, or a
    // relative one climbing out, is refused before anything runs or is written; the program
    // would have left a file in the outside directory had it run.
    let site = Site::new();
    let program = site.outside.join("agent");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh
touch {:?}
echo Redis.
",
            site.outside.join("ran").display().to_string()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let before = snapshot(&site.outside);
    ask(&site.root, T0, 1, "Cache", "Redis?");
    let ledger = bytes(&ledger_path(&site.root, 1));
    let relative = format!(
        "../{}/agent",
        site.outside.file_name().unwrap().to_string_lossy()
    );
    for path in [program.display().to_string(), relative] {
        set_config(
            &site,
            &format!("[agents.architect]\ncommand = [{path:?}]\nanswer = \"text\"\n"),
        );
        let out = site.json(&["clarify", "route", "CLR-1-001"]);
        refused(
            &out,
            3,
            "CONFIG_INVALID",
            "must be a path relative to the workspace root",
        );
    }
    assert_eq!(snapshot(&site.outside), before, "the outside program ran");
    assert_eq!(bytes(&ledger_path(&site.root, 1)), ledger);
    assert!(!site.path(".agentx/state/runs").exists());
}

#[test]
fn a_missing_or_outside_cwd_is_config_invalid_and_writes_nothing() {
    // The finding: `cwd = "/nonexistent"` was blamed on the agent and escalated the record.
    let site = Site::new();
    ask(&site.root, T0, 1, "Cache", "Redis?");
    let ledger = bytes(&ledger_path(&site.root, 1));
    set_config(&site, &runner("cwd = \"/nonexistent\"\n"));
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    refused(&out, 3, "CONFIG_INVALID", "agents.architect.cwd");
    set_config(&site, &runner("cwd = \"missing\"\n"));
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    refused(&out, 3, "CONFIG_INVALID", "\"missing\"");
    site.link("out", &site.outside);
    set_config(&site, &runner("cwd = \"out\"\n"));
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    refused(&out, 3, "CONFIG_INVALID", "outside the workspace");
    assert_eq!(bytes(&ledger_path(&site.root, 1)), ledger);
    assert!(!site.path(".agentx/state/runs").exists());
    site.assert_untouched();
}

#[test]
fn run_logs_are_private_and_git_ignored() {
    // The finding: run logs (prompt and output) were 0644 and not git-ignored.
    use std::os::unix::fs::PermissionsExt;
    let site = Site::new();
    set_config(&site, &runner(""));
    ask(&site.root, T0, 1, "Cache", "Redis?");
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let logs: Vec<_> = std::fs::read_dir(site.path(".agentx/state/runs"))
        .unwrap()
        .flatten()
        .map(|e| format!(".agentx/state/runs/{}", e.file_name().to_string_lossy()))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    let log = logs[0].clone();
    let mode = std::fs::metadata(site.path(&log))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{log}");
    assert!(
        std::fs::read_to_string(site.path(".agentx/state/.gitignore"))
            .unwrap()
            .lines()
            .any(|l| l == "runs/")
    );
    git(&site.root, &["init", "-q"]);
    let ignored = Command::new("git")
        .arg("-C")
        .arg(&site.root)
        .args(["check-ignore", "-q", &log])
        .status()
        .unwrap();
    assert!(ignored.success(), "git would track {log}");
    site.assert_untouched();
}

/// Whether git ignores `rel` in the repository at `root`.
fn ignored(root: &Path, rel: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["check-ignore", "-q", rel])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success()
}

#[test]
fn every_state_document_is_git_ignored_from_init_on() {
    // Issue 48: `tokens.json`, `outbox.json` and `github.json` were not git-ignored (only the
    // run logs were, once one was written): a `git add -A` committed the tokens' hashes and
    // the outbox's payloads. `init` writes `.agentx/state/.gitignore`, which covers every
    // state document (the names are lowercase letters and `-`) and keeps the shared files
    // tracked.
    let site = Site::new();
    git(&site.root, &["init", "-q"]);
    let ours = std::fs::read_to_string(site.path(".agentx/state/.gitignore")).unwrap();
    for doc in ["tokens", "outbox", "github", "sessions", "some-later-doc"] {
        let rel = format!(".agentx/state/{doc}.json");
        std::fs::write(site.path(&rel), "{}\n").unwrap();
        assert!(ignored(&site.root, &rel), "git would track {rel}");
    }
    assert!(ignored(
        &site.root,
        ".agentx/state/runs/CLR-1-001.r1.1.json"
    ));
    ask(&site.root, T0, 1, "Cache", "Redis?");
    for shared in [
        ".agentx/state/clarifications/issue-1.json",
        ".agentx/state/agent-status.json",
        ".agentx/config.toml",
    ] {
        assert!(!ignored(&site.root, shared), "git would not track {shared}");
    }
    // A workspace made by an older agentx: its `.gitignore` (run logs only) is brought up to
    // date by the first state document written; a user's own is left alone.
    let old = "# Run logs hold prompts and agents' output: they stay on this machine.\nruns/\n";
    std::fs::write(site.path(".agentx/state/.gitignore"), old).unwrap();
    std::fs::remove_file(site.path(".agentx/state/tokens.json")).unwrap();
    assert!(!ignored(&site.root, ".agentx/state/outbox.json"));
    let out = site.json(&["tokens", "new", "--human", "alice"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        std::fs::read_to_string(site.path(".agentx/state/.gitignore")).unwrap(),
        ours
    );
    assert!(ignored(&site.root, ".agentx/state/tokens.json"));
    let mine = "# mine\nruns/\n";
    std::fs::write(site.path(".agentx/state/.gitignore"), mine).unwrap();
    let out = site.json(&["tokens", "new", "--human", "bob"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        std::fs::read_to_string(site.path(".agentx/state/.gitignore")).unwrap(),
        mine
    );
    site.assert_untouched();
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn keys_new_says_git_ignored_only_when_git_agrees() {
    // The finding: an existing empty `.agentx/keys/.gitignore` was left alone and `keys new`
    // still said the key was git-ignored; `git status` listed it.
    let site = Site::new();
    git(&site.root, &["init", "-q"]);
    std::fs::write(site.path(".agentx/keys/.gitignore"), "").unwrap();
    let out = site.text(&["keys", "new", "engineer"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("NOT git-ignored"), "{}", out.stdout);
    assert!(git(
        &site.root,
        &["status", "--porcelain", "--untracked-files=all"]
    )
    .contains(".agentx/keys/engineer.key"));
    // With the default .gitignore, git agrees and so does the message.
    let site = Site::new();
    git(&site.root, &["init", "-q"]);
    let out = site.text(&["keys", "new", "engineer"]);
    assert!(
        out.stdout.contains("(mode 0600, git-ignored;"),
        "{}",
        out.stdout
    );
    assert!(!git(
        &site.root,
        &["status", "--porcelain", "--untracked-files=all"]
    )
    .contains("engineer.key"));
    // Outside a repository it says how to ignore it instead.
    let site = Site::new();
    let mut cmd = agentx();
    cmd.env("GIT_CEILING_DIRECTORIES", site.root.parent().unwrap());
    let out = cmd
        .args([
            root_arg(&site.root),
            "keys".into(),
            "new".into(),
            "engineer".into(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("not checked against git"), "{stdout}");
    assert!(stdout.contains("*.key"), "{stdout}");
}

#[test]
fn a_typo_in_a_security_table_is_config_invalid_with_the_nearest_key() {
    // The finding: `require_signature = true` in [audit] silently turned enforcement off.
    let site = Site::new();
    set_config(&site, "[audit]\nrequire_signature = true\n");
    let out = site.json(&["clarify", "list"]);
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("config.toml:2:1"), "{message}");
    assert!(
        message.contains("did you mean 'require_signatures'?"),
        "{message}"
    );
    set_config(&site, "[store]\nurl = \"\"\nurll = \"postgres://x\"\n");
    let out = site.json(&["clarify", "list"]);
    assert_fails(&out, 3, "CONFIG_INVALID");
}

#[test]
fn an_oversized_config_is_refused_at_once() {
    // The finding: a 52 MB config cost 2.4 GB on every command.
    let site = Site::new();
    let mut text = String::from("[clarify]\nmax_retries = 2\n");
    while text.len() <= 2 << 20 {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    set_config(&site, &text);
    let out = site.json(&["clarify", "list"]);
    refused(&out, 1, "IO_ERROR", "config.toml: it holds");
}

fn blocks(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "[CLARIFICATION_NEEDED]\nagent_id: engineer\nto: architect\nquestions:\n  - Question number {i}?\n[/CLARIFICATION_NEEDED]\n"
            )
        })
        .collect()
}

#[test]
fn signals_ingest_is_bounded_and_never_writes_as_a_reserved_actor() {
    // The findings: 20,000 blocks took 28 s (quadratic rewrites); `--agent agent-x` wrote
    // entries authored by the hub and signed with its key from text in a file.
    let site = Site::new();
    let file = site.outside.join("../blocks.txt");
    std::fs::write(&file, blocks(1001)).unwrap();
    let file_arg = file.display().to_string();
    let started = std::time::Instant::now();
    let out = site.json(&[
        "signals",
        "ingest",
        "--issue=5",
        "--agent=engineer",
        &file_arg,
    ]);
    refused(&out, 3, "INVALID_INPUT", "1001 signal blocks");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!ledger_path(&site.root, 5).exists());
    for reserved in ["agent-x", "human", "monitor"] {
        std::fs::write(&file, blocks(1)).unwrap();
        let out = site.json(&[
            "signals",
            "ingest",
            "--issue=5",
            &format!("--agent={reserved}"),
            &file_arg,
        ]);
        refused(&out, 3, "INVALID_INPUT", "is reserved");
        assert!(!ledger_path(&site.root, 5).exists());
    }
    // The cap itself is ingested, each ledger written once.
    std::fs::write(&file, blocks(1000)).unwrap();
    let started = std::time::Instant::now();
    let out = site.json(&[
        "signals",
        "ingest",
        "--issue=5",
        "--agent=engineer",
        &file_arg,
    ]);
    assert_eq!(out.code, 0, "{out:#?}");
    eprintln!("1,000 blocks ingested in {:?}", started.elapsed());
    site.assert_untouched();
}

#[test]
fn a_fifo_where_a_run_log_belongs_is_named_never_waited_on() {
    // Issue 36: a FIFO as a run log must not hang routing. The run log is the one file written
    // after the agent ran, so the answer is kept and the log's refusal is reported by name.
    let site = Site::new();
    set_config(&site, &runner(""));
    ask(&site.root, T0, 1, "Cache", "Redis?");
    site.fifo(".agentx/state/runs/CLR-1-001.r1.1.json");
    let out = site.json(&["clarify", "route", "CLR-1-001"]);
    assert_eq!(out.code, 0, "{out:#?}");
    let v = out.json();
    assert_eq!(v["clarification"]["status"], "answered", "{v}");
    assert_eq!(v["run"]["log"], serde_json::Value::Null, "{v}");
    let why = v["run"]["logError"].as_str().unwrap();
    assert!(why.contains("CLR-1-001.r1.1.json: it is a FIFO"), "{why}");
    assert!(
        std::fs::symlink_metadata(site.path(".agentx/state/runs/CLR-1-001.r1.1.json"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    site.assert_untouched();
}

#[test]
fn a_ledger_over_max_file_bytes_is_refused_by_name() {
    // docs/protocol.md §31: reads are capped; `[clarify] max_file_bytes` sets the ledgers' cap.
    let site = Site::new();
    ask(&site.root, T0, 1, "Cache", "Redis?");
    let path = ledger_path(&site.root, 1);
    let mut ledger: serde_json::Value = serde_json::from_slice(&bytes(&path)).unwrap();
    ledger["padding"] = serde_json::Value::from("x".repeat(100_000));
    std::fs::write(&path, ledger.to_string()).unwrap();
    set_config(&site, "[clarify]\nmax_file_bytes = 65536\n");
    let out = site.json(&["clarify", "show", "CLR-1-001"]);
    refused(&out, 1, "IO_ERROR", "issue-1.json: it holds");
    let out = site.json(&["clarify", "list"]);
    assert!(
        out.stdout.contains("more than the 65536 allowed"),
        "{out:#?}"
    );
    // Under the default cap (64 MiB) it reads.
    set_config(&site, "");
    let out = site.json(&["clarify", "show", "CLR-1-001"]);
    assert_eq!(out.code, 0, "{out:#?}");
}
