//! Help texts (every command shows an example), `--version`, and shell completions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[test]
fn every_help_shows_an_example() {
    let commands: &[&[&str]] = &[
        &[],
        &["init"],
        &["clarify"],
        &["clarify", "ask"],
        &["clarify", "answer"],
        &["clarify", "follow-up"],
        &["clarify", "resolve"],
        &["clarify", "escalate"],
        &["clarify", "abandon"],
        &["clarify", "list"],
        &["clarify", "show"],
        &["clarify", "monitor"],
        &["clarify", "stale"],
        &["clarify", "verify"],
        &["clarify", "stats"],
        &["hook"],
        &["hook", "start"],
        &["hook", "finish"],
        &["ready"],
        &["state"],
        &["demo"],
        &["people"],
        &["people", "list"],
        &["people", "check"],
        &["completions"],
    ];
    let mut missing = Vec::new();
    for path in commands {
        let mut argv: Vec<&str> = path.to_vec();
        argv.push("--help");
        let out = run(&argv);
        assert_eq!(out.code, 0, "{argv:?}: {out:#?}");
        if !out.stdout.contains("Example") {
            missing.push(path.join(" "));
        }
    }
    assert!(missing.is_empty(), "--help without an example: {missing:?}");
    let out = run(["--version"]);
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("agentx "), "{out:#?}");
}

#[test]
fn completions_for_bash() {
    let out = run(["completions", "bash"]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert!(out.stdout.contains("_agentx"), "no completion function");
    assert!(
        out.stdout.contains("complete "),
        "no `complete` registration"
    );
    assert!(out.stdout.contains("follow-up"), "subcommands missing");
    assert_usage(&run(["completions", "tcsh-9000"]));
}
