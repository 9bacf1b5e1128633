//! What only the command line has: usage errors (exit 2, nothing on stdout), text passed
//! through argv untouched (even when it looks like a flag), the workspace found from the
//! current directory, and the clock from `--now` / `AGENTX_NOW`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;

#[test]
fn exit_2_usage_errors_print_nothing_on_stdout() {
    let dir = workspace();
    let root = dir.path();
    for argv in [
        vec!["--json", "clarify", "ask", "--bogus"],
        vec!["--json", "--bogus", "clarify", "list"],
        vec!["--json", "clarify", "list", "--unknown=1"],
        vec!["--json", "clarify", "ask", "--issue=1", "--from=engineer"],
        vec![
            "--json",
            "clarify",
            "answer",
            "CLR-1-001",
            "--from=architect",
        ],
        vec!["--json", "clarify", "nonsense"],
        vec!["--json", "frobnicate"],
        vec!["--json", "clarify", "list", "--status=done"],
        vec!["--json", "--color=sometimes", "clarify", "list"],
        vec!["--json", "--now=tomorrow", "clarify", "list"],
        vec!["--json", "--now=-5", "clarify", "list"],
        vec!["--json", "clarify", "show"],
        vec!["--json", "clarify", "show", "CLR-1-001", "--issue=1"],
        vec!["--json", "hook", "begin", "engineer"],
        vec!["--json"],
    ] {
        let mut full = vec![root_arg(root)];
        full.extend(argv.iter().map(|s| (*s).to_owned()));
        let out = run(&full);
        assert_eq!(out.code, 2, "{argv:?}: {out:#?}");
        assert!(
            out.stdout.is_empty(),
            "{argv:?}: stdout must be empty: {out:#?}"
        );
        assert!(!out.stderr.is_empty(), "{argv:?}: stderr must explain");
    }
    assert!(!ledger_path(root, 1).exists());
    assert!(!status_path(root).exists());
}

#[test]
fn state_needs_agent_and_status_together_and_a_known_status() {
    let dir = workspace();
    let root = dir.path();
    // Usage errors: --agent without --status, an unknown status value.
    assert_usage(&json_in(root, &["state", "--agent=engineer"]));
    assert_usage(&json_in(
        root,
        &["state", "--agent=engineer", "--status=sleeping"],
    ));
}

#[test]
fn any_text_is_stored_verbatim() {
    let dir = workspace();
    let root = dir.path();
    let topic = "-x --json \"quoted\" $HOME `id` ; rm -rf / café 日本 🚀";
    let question = "line one\nline two\t\"tab\" \\ back\\slash\n-- not a flag";
    let out = json_at(
        root,
        T0,
        &[
            "clarify",
            "ask",
            "--issue=0",
            "--from=engineer",
            "--to=architect",
            &format!("--topic={topic}"),
            &format!("--question={question}"),
            "--field=-field",
            "--suggest=-s",
            "--non-blocking",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let record = out.json()["clarification"].clone();
    assert_eq!(record["id"], "CLR-0-001");
    assert_eq!(record["topic"], topic);
    assert_eq!(record["thread"][0]["body"], question);
    assert_eq!(record["field"], "-field");
    assert_eq!(record["suggestions"], json!(["-s"]));
    let on_disk = read_ledger(root, 0);
    assert_eq!(on_disk["clarifications"][0]["topic"], topic);
}

#[test]
fn root_discovery_from_nested_directories_and_cwd_fallback() {
    let dir = workspace();
    let root = dir.path();
    let nested = root.join("src/deep/er");
    std::fs::create_dir_all(&nested).unwrap();
    let args = ask_args(11, "From below", "found the root?");
    let out = Out::from_output(
        &agentx()
            .current_dir(&nested)
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(&args)
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(
        ledger_path(root, 11).exists(),
        "the ledger must land in the ancestor workspace"
    );
    assert!(!nested.join(".agentx").exists());
    let out = Out::from_output(
        &agentx()
            .current_dir(&nested)
            .args(["--json", "clarify", "list"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.json()["clarifications"][0]["id"], "CLR-11-001");

    // No .agentx anywhere above: the current directory is the root.
    let bare = tempfile::tempdir().unwrap();
    if let Some(holder) = bare.path().ancestors().find(|d| d.join(".agentx").is_dir()) {
        eprintln!(
            "skipping the cwd-fallback half: {} holds .agentx",
            holder.display()
        );
        return;
    }
    // Without init there are no workflows: a request names the (empty) choice, and being
    // refused, it creates nothing (no stray .agentx/ that would capture later discovery).
    let out = Out::from_output(
        &agentx()
            .current_dir(bare.path())
            .arg("--json")
            .args(ask_args(1, "Here", "cwd?"))
            .output()
            .unwrap(),
    );
    assert_fails(&out, 3, "INVALID_WORKFLOW");
    assert_eq!(snapshot(bare.path()), vec![], "a refused ask created files");
    let out = Out::from_output(
        &agentx()
            .current_dir(bare.path())
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(["hook", "start", "engineer", "1"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(
        status_path(bare.path()).is_file(),
        "the status file lands in the cwd"
    );
    let other = tempfile::tempdir().unwrap();
    let out = Out::from_output(
        &agentx()
            .current_dir(other.path())
            .args(["--json", "init"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(other
        .path()
        .join(".agentx/workflows/feature.toml")
        .is_file());
    // --root wins over the current directory.
    let out = Out::from_output(
        &agentx()
            .current_dir(&nested)
            .args([
                root_arg(other.path()),
                "--json".into(),
                "clarify".into(),
                "list".into(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(out.json()["clarifications"], json!([]));
}

#[test]
fn now_comes_from_agentx_now() {
    let dir = workspace();
    let root = dir.path();
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "2030-01-02T03:04:05.678999Z")
            .arg(root_arg(root))
            .arg("--json")
            .args(ask_args(1, "Env", "now?"))
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:#?}");
    let r = out.json()["clarification"].clone();
    assert_eq!(
        r["created"], "2030-01-02T03:04:05.678Z",
        "truncated to whole ms"
    );
    // Epoch milliseconds work too, and --now wins over the environment.
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "1000")
            .arg(root_arg(root))
            .arg("--json")
            .arg(format!("--now={T0}"))
            .args(ask_args(2, "Flag", "now?"))
            .output()
            .unwrap(),
    );
    assert_eq!(
        out.json()["clarification"]["created"],
        "2026-11-22T10:00:00.000Z"
    );
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "86400000")
            .arg(root_arg(root))
            .arg("--json")
            .args(ask_args(3, "Epoch", "now?"))
            .output()
            .unwrap(),
    );
    assert_eq!(
        out.json()["clarification"]["created"],
        "1970-01-02T00:00:00.000Z"
    );
    // An invalid AGENTX_NOW is a usage error.
    let out = Out::from_output(
        &agentx()
            .env("AGENTX_NOW", "soon")
            .args([
                root_arg(root),
                "--json".into(),
                "clarify".into(),
                "list".into(),
            ])
            .output()
            .unwrap(),
    );
    assert_usage(&out);
}

#[test]
fn an_option_description_names_its_option() {
    let dir = workspace();
    let root = dir.path();
    let ask = |describe: &str| {
        json_in(
            root,
            &[
                "clarify",
                "ask",
                "--issue=7",
                "--from=engineer",
                "--to=architect",
                "--topic=Cache store",
                "--question=Which cache?",
                "--kind=choice",
                "--option=redis=Redis",
                "--option=lru=In-process LRU",
                describe,
            ],
        )
    };
    for (describe, said) in [
        (
            "--describe=memcached=Fast",
            "--describe names no --option \"memcached\"",
        ),
        ("--describe=no equals sign", "--describe takes VALUE=TEXT"),
    ] {
        let v = assert_fails(&ask(describe), 3, "INVALID_INPUT");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{message}");
    }
    assert!(!root
        .join(".agentx/state/clarifications/issue-7.json")
        .exists());
    let out = ask("--describe=redis=Shared across instances = one more service");
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(
        out.json()["clarification"]["options"][0]["description"],
        "Shared across instances = one more service"
    );
}

#[test]
fn answer_kind_is_an_alias_of_kind() {
    // Issue 49: MCP and JSON say `answerKind`; `--answer-kind` on the command line was a usage
    // error with no "did you mean --kind".
    let dir = workspace();
    let out = json_in(
        dir.path(),
        &[
            "clarify",
            "ask",
            "--issue=3",
            "--from=engineer",
            "--to=architect",
            "--topic=Ship",
            "--question=Ship on Friday?",
            "--answer-kind=confirm",
        ],
    );
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["clarification"]["answerKind"], "confirm");
    let help = run(["clarify", "ask", "--help"]);
    assert!(help.stdout.contains("answer-kind"), "{}", help.stdout);
}
