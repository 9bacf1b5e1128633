//! Ed25519 signatures as the Rust core makes them, written down for the other surfaces.
//!
//! `tests/fixtures/ed25519.json` holds fixed keys (from fixed seeds), a ledger written and
//! signed by the core through a Layer 4 check, every entry's hash and signature, and RFC 8032's
//! test vectors. This test checks that the core still produces exactly that file;
//! `tests/js/ed25519-cross.test.mjs` checks with `node:crypto` that the signatures verify and
//! that Node signs the same hashes byte for byte (the wasm and Node bindings will be checked
//! against the same file). After a deliberate change, regenerate it with
//! `AGENTX_BLESS=1 cargo test -p agentx-clarify-tests --test signatures`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use agentx_clarify_core::error::ErrorCode;
use agentx_clarify_core::layer4::{check, CheckArgs, Plan};
use agentx_clarify_core::ops::act_with;
use agentx_clarify_core::signing::{PublicKeys, SecretKey, Signers};
use agentx_clarify_core::verify::{check_ledger_with, verify_ledger};
use agentx_clarify_core::{Action, Config, Ledger, Workflows};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Value};

const T0: i64 = 1_795_341_600_000; // 2026-11-22T10:00:00Z
const MIN: i64 = 60_000;
const KEYS: [(&str, u8); 4] = [
    ("agent-x", 1),
    ("engineer", 2),
    ("architect", 3),
    ("product-manager", 4),
];

/// RFC 8032 §7.1, TEST 1–3: (secret seed, public key, message, signature), hex.
const RFC8032: [(&str, &str, &str, &str); 3] = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
];

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The raw bytes of `ed25519:<base64>`, in hex.
fn text_to_hex(text: &str) -> String {
    hex(&STANDARD
        .decode(text.strip_prefix("ed25519:").unwrap())
        .unwrap())
}

fn signers() -> Signers {
    let mut s = Signers::new();
    for (name, n) in KEYS {
        s.insert(name, SecretKey::from_seed(&[n; 32])).unwrap();
    }
    s
}

/// Issue 42: a Layer 4 check with two gaps (the engineer signs), the architect answers the
/// BLOCK gap and the engineer accepts it; the WARN gap is escalated and resolved by a human
/// (the hub key signs). The first question is dated at .940 s, for re-spelling tests.
fn scenario(signers: &Signers) -> Ledger {
    let plan = Plan::parse(&json!({
        "session_id": "5f0c6f9e-2d1b-4c8a-9e3f-7a6b5c4d3e2f",
        "agent_id": "wwa-scaffold-v1.0.0",
        "gaps": [
            {"id": "gap-001", "field": "compliance.jurisdiction", "severity": "BLOCK",
             "question": "JSP 440 or USWDS: which jurisdiction applies?",
             "suggestions": ["jsp-440-only", "uswds-only"], "blocked_operations": ["build"]},
            {"id": "gap-002", "field": "i18n.layout", "severity": "WARN",
             "question": "ar-sa without an RTL layout: add one? (naïve 🦀)",
             "to": "product-manager"}
        ]
    }))
    .unwrap();
    let args = CheckArgs {
        issue_number: 42,
        from: "engineer".into(),
        to: Some("architect".into()),
        workflow: None,
        step: None,
        new_session_id: String::new(),
    };
    let config = Config::default();
    let checked = check(
        None,
        &plan,
        &args,
        &config,
        &Workflows::defaults(),
        T0 + 940,
        signers,
    )
    .unwrap();
    let step = |l: &Ledger, id: &str, a: Action, at: i64| {
        act_with(l, id, &a, &config, at, signers).unwrap().ledger
    };
    let l = step(
        &checked.ledger,
        "CLR-42-001",
        Action::Answer {
            from: "architect".into(),
            body: "jsp-440-only".into(),
        },
        T0 + MIN,
    );
    let l = step(
        &l,
        "CLR-42-001",
        Action::Resolve {
            from: None,
            message: None,
        },
        T0 + 2 * MIN,
    );
    let l = step(
        &l,
        "CLR-42-002",
        Action::Escalate {
            from: None,
            message: Some("needs a product decision".into()),
        },
        T0 + 3 * MIN,
    );
    step(
        &l,
        "CLR-42-002",
        Action::Resolve {
            from: None,
            message: Some("RTL layout required".into()),
        },
        T0 + 4 * MIN,
    )
}

fn fixture() -> Value {
    let signers = signers();
    let ledger = scenario(&signers);
    let keys: Vec<Value> = KEYS
        .iter()
        .map(|(name, n)| {
            let k = SecretKey::from_seed(&[*n; 32]);
            json!({"agent": name, "seed": k.to_text(), "public": k.public().to_text()})
        })
        .collect();
    let mut entries = Vec::new();
    for r in &ledger.clarifications {
        for (i, e) in r.thread.iter().enumerate() {
            entries.push(json!({
                "clarificationId": r.id, "index": i + 1, "from": e.from, "type": e.kind,
                "signer": e.signer, "hash": e.hash, "signature": e.signature,
            }));
        }
    }
    let rfc: Vec<Value> = RFC8032
        .iter()
        .map(|(seed, public, message, signature)| {
            json!({"seed": seed, "public": public, "message": message, "signature": signature})
        })
        .collect();
    json!({
        "description": "ed25519 signatures made by the Rust core (fixed seeds [n; 32]); every surface must verify them and sign the same hashes byte for byte",
        "regenerate": "AGENTX_BLESS=1 cargo test -p agentx-clarify-tests --test signatures",
        "rfc8032": rfc,
        "keys": keys,
        "entries": entries,
        "ledger": ledger.to_value(),
    })
}

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ed25519.json")
}

#[test]
fn the_core_signs_exactly_the_fixture() {
    let actual = fixture();
    let path = fixture_path();
    if std::env::var_os("AGENTX_BLESS").is_some() {
        let mut text = serde_json::to_string_pretty(&actual).unwrap();
        text.push('\n');
        std::fs::write(&path, text).unwrap();
    }
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        actual,
        stored,
        "the core no longer signs what {} holds; if that is deliberate, regenerate it",
        path.display()
    );
}

#[test]
fn the_fixture_ledger_verifies() {
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture_path()).unwrap()).unwrap();
    let ledger = Ledger::from_value("issue-42.json", &stored["ledger"], None).unwrap();
    let keys = signers().public_keys();
    let found = check_ledger_with("issue-42.json", &ledger, &keys, true);
    assert_eq!(
        (found.problems.as_slice(), found.error_code()),
        (&[][..], None)
    );
    // Without the keys, every signed entry names an unknown signer: SIGNATURE_INVALID.
    let unknown = verify_ledger("issue-42.json", &ledger);
    assert!(!unknown.is_empty());
    assert!(unknown
        .iter()
        .all(|p| p.code == Some(ErrorCode::SignatureInvalid)
            && p.message.ends_with("whose public key is unknown")));
    let without = check_ledger_with("issue-42.json", &ledger, &PublicKeys::new(), false);
    assert_eq!(without.error_code(), Some(ErrorCode::SignatureInvalid));
    let entries = stored["entries"].as_array().unwrap();
    let who: Vec<(&str, &str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["from"].as_str().unwrap(),
                e["type"].as_str().unwrap(),
                e["signer"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            ("engineer", "question", "engineer"),
            ("architect", "answer", "architect"),
            ("engineer", "resolution", "engineer"),
            ("engineer", "question", "engineer"),
            ("human", "escalation", "agent-x"),
            ("human", "resolution", "agent-x"),
        ]
    );
    assert!(entries.iter().all(|e| e["signature"].is_string()));
    assert!(
        stored["ledger"]["clarifications"][0]["thread"][0]["timestamp"]
            .as_str()
            .unwrap()
            .ends_with(".940Z")
    );
}

#[test]
fn rfc_8032_vectors() {
    for (seed, public, message, signature) in RFC8032 {
        let seed: [u8; 32] = unhex(seed).try_into().unwrap();
        let key = SecretKey::from_seed(&seed);
        assert_eq!(text_to_hex(&key.public().to_text()), public);
        let sig = key.sign(&unhex(message));
        assert_eq!(text_to_hex(&sig), signature);
        assert!(key.public().verify(&unhex(message), &sig).is_ok());
    }
}
