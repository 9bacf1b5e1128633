//! Colour control of human output and errors: `--color`, `NO_COLOR`, `CLICOLOR_FORCE`, and
//! never in `--json` output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

#[test]
fn colour_control() {
    let dir = workspace();
    let root = dir.path();
    ask(root, T0, 1, "Colour", "pending is yellow?");
    let list = |color: Option<&str>, env: &[(&str, &str)]| {
        let mut cmd = agentx();
        cmd.arg(root_arg(root));
        if let Some(c) = color {
            cmd.arg(format!("--color={c}"));
        }
        cmd.args(["clarify", "list"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = Out::from_output(&cmd.output().unwrap());
        assert_eq!(out.code, 0, "{out:#?}");
        assert!(out.stdout.contains("CLR-1-001"), "{out:#?}");
        out.stdout.contains('\u{1b}')
    };
    assert!(list(Some("always"), &[]), "--color always must colour");
    assert!(!list(Some("never"), &[]), "--color never must not colour");
    assert!(!list(None, &[]), "auto on a pipe must not colour");
    assert!(!list(None, &[("NO_COLOR", "1")]));
    assert!(!list(Some("auto"), &[("NO_COLOR", "1")]));
    assert!(!list(Some("never"), &[("CLICOLOR_FORCE", "1")]));
    // NO_COLOR wins over a forced colour in auto mode.
    assert!(
        list(None, &[("CLICOLOR_FORCE", "1")]),
        "CLICOLOR_FORCE colours in auto mode"
    );
    assert!(!list(None, &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]));
    // Errors on stderr follow the same rule.
    let err = |color: &str| {
        let out = run([
            root_arg(root),
            format!("--color={color}"),
            "clarify".into(),
            "show".into(),
            "CLR-1-009".into(),
        ]);
        assert_eq!(out.code, 5);
        out.stderr.contains('\u{1b}')
    };
    assert!(err("always"));
    assert!(!err("never"));
    let mut cmd = agentx();
    cmd.args([
        root_arg(root),
        "clarify".into(),
        "show".into(),
        "CLR-1-009".into(),
    ])
    .env("NO_COLOR", "1");
    assert!(!Out::from_output(&cmd.output().unwrap())
        .stderr
        .contains('\u{1b}'));
    // --json output never carries colour.
    let out = run([
        root_arg(root),
        "--json".into(),
        "--color=always".into(),
        "clarify".into(),
        "list".into(),
    ]);
    assert!(!out.stdout.contains('\u{1b}'), "{out:#?}");
    out.json();
}
