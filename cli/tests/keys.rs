//! Signing keys on disk (docs/protocol.md §16): `keys new|list`, private key files (0600, git-ignored,
//! never printed), unusable key files refused by name, and tampering with a signed ledger
//! found by `verify` through the binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// engineer asks architect on issue 42.
const ASK: &[&str] = &[
    "clarify",
    "ask",
    "--issue",
    "42",
    "--from",
    "engineer",
    "--to",
    "architect",
    "--topic",
    "Cache",
    "--question",
    "Redis?",
];

fn key_file(root: &Path, agent: &str, ext: &str) -> PathBuf {
    root.join(format!(".agentx/keys/{agent}.{ext}"))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The base64 of a private key file (what must never be shown).
fn secret_of(root: &Path, agent: &str) -> String {
    let text = std::fs::read_to_string(key_file(root, agent, "key")).unwrap();
    text.trim().trim_start_matches("ed25519-seed:").to_owned()
}

fn ok(root: &Path, now: i64, args: &[&str]) -> Value {
    let out = json_within(root, now, args);
    assert_eq!(out.code, 0, "{args:?}: {out:#?}");
    out.json()
}

/// An initialised workspace whose hub, engineer and architect hold keys.
fn keyed_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    ok(dir.path(), T0, &["init"]);
    for agent in ["agent-x", "engineer", "architect"] {
        ok(dir.path(), T0, &["keys", "new", agent]);
    }
    dir
}

#[test]
fn keys_new_writes_an_owner_only_key_and_never_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    ok(root, T0, &["init"]);
    let gitignore = std::fs::read_to_string(root.join(".agentx/keys/.gitignore")).unwrap();
    assert!(gitignore.lines().any(|l| l == "*.key"), "{gitignore}");

    let created = ok(root, T0, &["keys", "new", "engineer"]);
    let public = std::fs::read_to_string(key_file(root, "engineer", "pub")).unwrap();
    assert_eq!(created["key"]["publicKey"], public.trim());
    assert_eq!(mode(&key_file(root, "engineer", "key")), 0o600);
    assert_eq!(mode(&key_file(root, "engineer", "pub")) & 0o600, 0o600);
    let secret = secret_of(root, "engineer");
    assert_eq!(secret.len(), 44, "base64 of 32 bytes");

    // A human `keys new` too: a second key, its secret not printed either.
    let text = run([
        root_arg(root),
        "keys".into(),
        "new".into(),
        "architect".into(),
    ]);
    assert_eq!(text.code, 0, "{text:#?}");
    let architect = secret_of(root, "architect");

    // Nothing any command prints holds a private key: keys, writes, reads, verify, audit.
    let mut printed = vec![text.stdout, text.stderr, created.to_string()];
    for args in [
        vec!["keys", "list"],
        ASK.to_vec(),
        vec![
            "clarify",
            "answer",
            "CLR-42-001",
            "--from",
            "architect",
            "--body",
            "Yes",
        ],
        vec!["clarify", "show", "--issue", "42"],
        vec!["clarify", "verify"],
        vec!["clarify", "audit", "CLR-42-001"],
    ] {
        let out = json_within(root, T0 + MINUTE, &args);
        assert_eq!(out.code, 0, "{args:?}: {out:#?}");
        printed.extend([out.stdout, out.stderr]);
        let mut human = vec![root_arg(root), format!("--now={}", T0 + MINUTE)];
        human.extend(args.iter().map(|a| (*a).to_owned()));
        if args[0] != "clarify" || matches!(args[1], "show" | "verify" | "audit") {
            let out = run(human);
            printed.extend([out.stdout, out.stderr]);
        }
    }
    for text in &printed {
        assert!(
            !text.contains(&secret) && !text.contains(&architect),
            "{text}"
        );
        assert!(!text.contains("ed25519-seed:"), "{text}");
    }
    // The ledger carries signatures, never keys.
    let ledger =
        std::fs::read_to_string(root.join(".agentx/state/clarifications/issue-42.json")).unwrap();
    assert!(
        !ledger.contains(&secret) && ledger.contains("\"signer\": \"engineer\""),
        "{ledger}"
    );

    // Keys are never replaced.
    let before = snapshot(root);
    let out = json_within(root, T0, &["keys", "new", "engineer"]);
    assert_fails(&out, 3, "INVALID_INPUT");
    assert_eq!(snapshot(root), before);
    let out = json_within(root, T0, &["keys", "new", "Not An Agent"]);
    assert_fails(&out, 3, "INVALID_AGENT");
}

#[test]
fn a_private_key_others_may_read_is_refused_and_nothing_is_written() {
    let dir = keyed_workspace();
    let root = dir.path();
    let path = key_file(root, "engineer", "key");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let before = snapshot(root);
    let out = json_within(root, T0, ASK);
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(".agentx/keys/engineer.key") && message.contains("0644"),
        "{message}"
    );
    assert!(message.contains("chmod 600"), "{message}");
    assert_eq!(snapshot(root), before, "a refused write changed files");
    assert_fails(
        &json_within(root, T0, &["keys", "list"]),
        3,
        "CONFIG_INVALID",
    );
    // Group-readable is as bad as world-readable.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_fails(
        &json_within(root, T0, &["keys", "list"]),
        3,
        "CONFIG_INVALID",
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(root, T0, &["keys", "list"]);
}

#[test]
fn garbage_key_files_are_refused_by_name_without_echoing_them() {
    let dir = keyed_workspace();
    let root = dir.path();
    let secret = key_file(root, "engineer", "key");
    let original = std::fs::read(&secret).unwrap();
    let garbage = "ed25519-seed:c2VjcmV0LWJ1dC10b28tc2hvcnQ=";
    std::fs::write(&secret, garbage).unwrap();
    let out = json_within(root, T0, ASK);
    let v = assert_fails(&out, 3, "CONFIG_INVALID");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains(".agentx/keys/engineer.key"), "{message}");
    assert!(
        !out.stdout.contains("c2VjcmV0") && !out.stderr.contains("c2VjcmV0"),
        "{out:#?}"
    );
    assert!(!root
        .join(".agentx/state/clarifications/issue-42.json")
        .exists());
    std::fs::write(&secret, &original).unwrap();

    // A damaged public key stops verify (it cannot check what it cannot read).
    ok(root, T0, ASK);
    std::fs::write(key_file(root, "architect", "pub"), "ed25519:????\n").unwrap();
    let v = assert_fails(
        &json_within(root, T0, &["clarify", "verify"]),
        3,
        "CONFIG_INVALID",
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("architect.pub"),
        "{v}"
    );
}

/// A signed, resolved record: question (engineer), answer (architect), resolution (engineer).
fn signed_ledger(root: &Path) -> PathBuf {
    ok(root, T0, ASK);
    ok(
        root,
        T0 + 1940,
        &[
            "clarify",
            "answer",
            "CLR-42-001",
            "--from",
            "architect",
            "--body",
            "Redis",
        ],
    );
    ok(
        root,
        T0 + 2 * MINUTE,
        &["clarify", "resolve", "CLR-42-001", "--from", "engineer"],
    );
    let v = ok(root, T0 + 3 * MINUTE, &["clarify", "verify"]);
    assert_eq!(v["problems"], serde_json::json!([]));
    root.join(".agentx/state/clarifications/issue-42.json")
}

/// Applies `edit` to the thread of CLR-42-001 in the ledger file, runs `verify`, restores.
fn verify_after(root: &Path, ledger: &Path, edit: impl FnOnce(&mut Vec<Value>)) -> Out {
    let original = std::fs::read(ledger).unwrap();
    let mut v: Value = serde_json::from_slice(&original).unwrap();
    let thread = v["clarifications"][0]["thread"].as_array_mut().unwrap();
    edit(thread);
    std::fs::write(ledger, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let out = json_within(root, T0 + 3 * MINUTE, &["clarify", "verify"]);
    std::fs::write(ledger, original).unwrap();
    out
}

fn messages(v: &Value) -> String {
    v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["message"].as_str().unwrap_or("").to_owned())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[test]
fn tampering_with_a_signed_ledger_is_found() {
    let dir = keyed_workspace();
    let root = dir.path();
    let ledger = signed_ledger(root);

    // Edit a body: the hash and the signature no longer cover it.
    let out = verify_after(root, &ledger, |t| t[1]["body"] = "Memcached".into());
    let v = assert_fails(&out, 8, "SIGNATURE_INVALID");
    assert!(
        messages(&v).contains("entry 2 (answer by architect)"),
        "{v}"
    );

    // Re-spell a timestamp (same instant, as PowerShell writes it): still verifies.
    let out = verify_after(root, &ledger, |t| {
        assert_eq!(t[1]["timestamp"], "2026-11-22T10:00:01.940Z");
        t[1]["timestamp"] = "2026-11-22T10:00:01.94Z".into();
    });
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.json()["problems"], serde_json::json!([]));
    // …but another instant does not.
    let out = verify_after(root, &ledger, |t| {
        t[1]["timestamp"] = "2026-11-22T10:00:01.941Z".into()
    });
    assert_fails(&out, 8, "SIGNATURE_INVALID");

    // Swap a signer: the architect's entry claimed by the engineer.
    let out = verify_after(root, &ledger, |t| t[1]["signer"] = "engineer".into());
    let v = assert_fails(&out, 8, "SIGNATURE_INVALID");
    assert!(messages(&v).contains("only architect may sign it"), "{v}");
    // Swap whole signatures between entries.
    let out = verify_after(root, &ledger, |t| {
        let (a, b) = (t[0]["signature"].clone(), t[2]["signature"].clone());
        t[0]["signature"] = b;
        t[2]["signature"] = a;
    });
    assert_fails(&out, 8, "SIGNATURE_INVALID");

    // Drop an entry: the chain breaks.
    let out = verify_after(root, &ledger, |t| {
        t.remove(1);
    });
    assert_eq!(out.code, 8, "{out:#?}");
    assert!(!out.json()["problems"].as_array().unwrap().is_empty());

    // Strip a signature: half-signed is a problem.
    let out = verify_after(root, &ledger, |t| {
        t[2].as_object_mut().unwrap().remove("signature");
    });
    assert_fails(&out, 8, "SIGNATURE_INVALID");

    // Replace a public key: what the old key signed no longer verifies.
    let architect = key_file(root, "architect", "pub");
    let engineer = std::fs::read(key_file(root, "engineer", "pub")).unwrap();
    std::fs::write(&architect, engineer).unwrap();
    let v = assert_fails(
        &json_within(root, T0, &["clarify", "verify"]),
        8,
        "SIGNATURE_INVALID",
    );
    assert!(messages(&v).contains("signature by architect"), "{v}");
    let listed = ok(root, T0, &["keys", "list"]);
    let row = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["agent"] == "architect")
        .cloned()
        .unwrap();
    assert_eq!(row["mismatch"], true, "{listed}");
    let audit = json_within(root, T0, &["clarify", "audit", "CLR-42-001"]);
    let v = assert_fails(&audit, 8, "SIGNATURE_INVALID");
    assert_eq!(v["verified"], false);
}

#[test]
fn the_hub_key_signs_the_monitors_entries() {
    let dir = keyed_workspace();
    let root = dir.path();
    ok(root, T0, ASK);
    // Long past the stale threshold: the monitor writes a retry (or an escalation).
    let v = ok(root, T0 + 48 * 60 * MINUTE, &["clarify", "monitor"]);
    assert!(!v["events"].as_array().unwrap().is_empty(), "{v}");
    let shown = ok(
        root,
        T0 + 48 * 60 * MINUTE,
        &["clarify", "show", "CLR-42-001"],
    );
    let thread = shown["clarification"]["thread"].as_array().unwrap();
    let by_monitor: Vec<&Value> = thread.iter().filter(|e| e["from"] == "monitor").collect();
    assert!(!by_monitor.is_empty(), "{shown}");
    for entry in by_monitor {
        assert_eq!(entry["signer"], "agent-x", "{entry}");
        assert!(entry["signature"].as_str().unwrap().starts_with("ed25519:"));
    }
    let v = ok(root, T0 + 48 * 60 * MINUTE, &["clarify", "verify"]);
    assert_eq!(v["problems"], serde_json::json!([]));
}
