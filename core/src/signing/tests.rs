use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::ledger::{entry_hash, EntryKind, Ledger};
use crate::ops::Action;
use crate::testkit::{apply, ask, keyring, plain, signed_ledger, MIN, T0};
use crate::verify::{check_ledger_with, verify_signatures};

const FILE: &str = "issue-42.json";

/// Every problem `verify` finds with `keys`, signatures included, as messages.
fn problems(ledger: &Ledger, keys: &PublicKeys, require: bool) -> Vec<String> {
    check_ledger_with(FILE, ledger, keys, require)
        .problems
        .into_iter()
        .map(|p| format!("{}: {}", p.id.unwrap_or_default(), p.message))
        .collect()
}

/// Asserts that one of the problems mentions `needle`.
fn assert_found(found: &[String], needle: &str) {
    assert!(
        found.iter().any(|p| p.contains(needle)),
        "no '{needle}' in {found:?}"
    );
}

/// The ledger's JSON, edited by `edit`, read back as a writer's file would be.
fn edited(ledger: &Ledger, edit: impl FnOnce(&mut Value)) -> Ledger {
    let mut v = ledger.to_value();
    edit(&mut v);
    Ledger::from_value(FILE, &v, None).unwrap()
}

fn entry(v: &mut Value, record: usize, entry: usize) -> &mut Value {
    &mut v["clarifications"][record]["thread"][entry]
}

#[test]
fn a_ledger_written_with_keys_verifies() {
    let signers = keyring();
    let l = signed_ledger(&signers);
    let keys = signers.public_keys();
    assert_eq!(problems(&l, &keys, true), Vec::<String>::new());
    for r in &l.clarifications {
        for e in &r.thread {
            let want = signer_for(&e.from);
            assert_eq!(e.signer.as_deref(), Some(want), "{} {:?}", r.id, e.kind);
            let bytes = hash_bytes(e.hash.as_deref().unwrap()).unwrap();
            assert!(keys
                .get(want)
                .unwrap()
                .verify(&bytes, e.signature.as_deref().unwrap())
                .is_ok());
        }
    }
    // The hub signed the monitor's and the human's entries.
    let r3 = &l.clarifications[2];
    assert_eq!(r3.thread[1].kind, EntryKind::Stale);
    assert_eq!(r3.thread[1].signer.as_deref(), Some("agent-x"));
    assert_eq!(l.clarifications[1].thread[1].from, "human");
    assert_eq!(
        l.clarifications[1].thread[1].signer.as_deref(),
        Some("agent-x")
    );
}

#[test]
fn signed_entries_survive_a_round_trip_byte_for_byte() {
    let l = signed_ledger(&keyring());
    let text = l.to_pretty_json();
    let again = Ledger::parse(FILE, text.as_bytes(), None).unwrap();
    assert_eq!(again.to_pretty_json(), text);
    assert!(text.contains("\"signer\": \"engineer\",\n"));
    // `signer` before `hash`, `signature` after it.
    let signer = text.find("\"signer\"").unwrap();
    let hash = text[signer..].find("\"hash\"").unwrap() + signer;
    assert!(text[hash..].find("\"signature\"").unwrap() < text[hash..].find('}').unwrap());
}

#[test]
fn without_keys_nothing_changes() {
    let l = signed_ledger(&Signers::default());
    let text = l.to_pretty_json();
    assert!(!text.contains("signer") && !text.contains("signature"));
    assert_eq!(
        problems(&l, &PublicKeys::new(), false),
        Vec::<String>::new()
    );
    // With signatures required, every entry is reported.
    let entries: usize = l.clarifications.iter().map(|r| r.thread.len()).sum();
    let required = verify_signatures(FILE, &l, &PublicKeys::new(), true);
    assert_eq!(required.len(), entries);
    assert!(
        required[0]
            .message
            .ends_with("not signed, and signatures are required"),
        "{}",
        required[0].message
    );
}

#[test]
fn only_the_keys_held_sign() {
    let mut hub_only = Signers::new();
    hub_only
        .insert("agent-x", SecretKey::from_seed(&[1; 32]))
        .unwrap();
    let l = signed_ledger(&hub_only);
    let r1 = &l.clarifications[0];
    assert!(
        r1.thread.iter().all(|e| e.signature.is_none()),
        "engineer and architect hold no key here"
    );
    let r2 = &l.clarifications[1];
    assert!(r2.thread[0].signer.is_none());
    assert!(r2.thread[1..]
        .iter()
        .all(|e| e.signer.as_deref() == Some("agent-x")));
    let keys = hub_only.public_keys();
    assert_eq!(problems(&l, &keys, false), Vec::<String>::new());
    assert_eq!(
        verify_signatures(FILE, &l, &keys, true).len(),
        5,
        "the agents' entries: 3 + 1 + 1 questions, answers, resolution"
    );
}

#[test]
fn tamper_edit_a_body() {
    let signers = keyring();
    let keys = signers.public_keys();
    let l = signed_ledger(&signers);
    let bad = edited(&l, |v| entry(v, 0, 1)["body"] = "Memcached.".into());
    let found = problems(&bad, &keys, false);
    assert_found(&found, "hash chain broken at entry 2");
    assert_found(
        &found,
        "entry 2 (answer by architect): signature by architect: the signature does not verify",
    );
    // A forger without the key who also recomputes every hash still fails on the signatures.
    let mut rehashed = bad.clone();
    for e in &mut rehashed.clarifications[0].thread {
        e.hash = None;
    }
    rehashed.seal();
    let found = problems(&rehashed, &keys, false);
    assert!(!found.iter().any(|p| p.contains("hash chain")), "{found:?}");
    assert_found(
        &found,
        "entry 2 (answer by architect): signature by architect: the signature does not verify",
    );
}

/// Depends on the canonical-instant hashing (docs/protocol.md §16, another change): the hash is taken over
/// the instant, so a foreign writer's shorter spelling of the same time breaks nothing.
#[test]
fn tamper_respelled_timestamp_still_verifies() {
    let signers = keyring();
    let keys = signers.public_keys();
    let req = plain(
        "engineer",
        "architect",
        "Cache layer",
        "Redis or in-process?",
    );
    let l = ask(None, &req, T0 + 940, &signers);
    let stamp = l.clarifications[0].thread[0].timestamp.as_str().to_owned();
    assert!(stamp.ends_with(":00.940Z"), "{stamp}");
    let respelled = edited(&l, |v| {
        entry(v, 0, 0)["timestamp"] = stamp.replace(".940Z", ".94Z").into();
        v["clarifications"][0]["created"] = stamp.replace(".940Z", ".94Z").into();
    });
    assert_eq!(
        respelled.clarifications[0].thread[0].timestamp.as_str(),
        stamp.replace(".940Z", ".94Z")
    );
    assert_eq!(problems(&respelled, &keys, true), Vec::<String>::new());
    // A change of the instant is still caught.
    let moved = edited(&l, |v| {
        entry(v, 0, 0)["timestamp"] = stamp.replace(".940Z", ".941Z").into()
    });
    assert!(!problems(&moved, &keys, true).is_empty());
}

#[test]
fn tamper_swap_a_signer() {
    let signers = keyring();
    let keys = signers.public_keys();
    let l = signed_ledger(&signers);
    // Naming another signer changes the hash (signer is hashed) and the signature fails.
    let bad = edited(&l, |v| entry(v, 0, 1)["signer"] = "engineer".into());
    let found = problems(&bad, &keys, false);
    assert_found(&found, "hash chain broken at entry 2");
    assert_found(
        &found,
        "entry 2 (answer by architect): signed by engineer; only architect may sign it",
    );
    // An agent that re-signs another's entry with its own key (and re-hashes) is refused too.
    let mut forged = l.clone();
    let engineer = SecretKey::from_seed(&[2; 32]);
    let thread = &mut forged.clarifications[0].thread;
    let mut prev = thread[0].hash.clone().unwrap();
    for e in thread.iter_mut().skip(1) {
        if e.from == "architect" {
            e.signer = Some("engineer".into());
        }
        let h = entry_hash("CLR-42-001", &prev, e);
        e.signature = sign_hash(&engineer, &h);
        e.hash = Some(h.clone());
        prev = h;
    }
    let found = problems(&forged, &keys, false);
    assert!(!found.iter().any(|p| p.contains("hash chain")), "{found:?}");
    assert_found(&found, "only architect may sign it");
}

#[test]
fn tamper_drop_an_entry() {
    let signers = keyring();
    let keys = signers.public_keys();
    let l = signed_ledger(&signers);
    // Dropping the answer of CLR-42-001 breaks the chain at the resolution, whose signature
    // covered the dropped entry's hash.
    let bad = edited(&l, |v| {
        v["clarifications"][0]["thread"]
            .as_array_mut()
            .unwrap()
            .remove(1);
    });
    let found = problems(&bad, &keys, false);
    assert_found(&found, "hash chain broken at entry 2");
    assert_found(
        &found,
        "entry 2 (resolution by engineer): signature by engineer: the signature does not verify",
    );
    // Dropping the last entry leaves a valid prefix: the snapshot still says resolved.
    let cut = edited(&l, |v| {
        v["clarifications"][0]["thread"]
            .as_array_mut()
            .unwrap()
            .pop();
    });
    let found = problems(&cut, &keys, false);
    assert_found(&found, "status is resolved but the thread says answered");
}

#[test]
fn tamper_replace_a_public_key() {
    let signers = keyring();
    let l = signed_ledger(&signers);
    let mut keys = signers.public_keys();
    keys.insert("architect", SecretKey::from_seed(&[9; 32]).public())
        .unwrap();
    let found = problems(&l, &keys, false);
    assert_eq!(found, vec![String::from("CLR-42-001: entry 2 (answer by architect): signature by architect: the signature does not verify")]);
    // No key at all for a signer: reported as unknown.
    let mut keys = PublicKeys::new();
    keys.insert("agent-x", SecretKey::from_seed(&[1; 32]).public())
        .unwrap();
    keys.insert("engineer", SecretKey::from_seed(&[2; 32]).public())
        .unwrap();
    keys.insert("product-manager", SecretKey::from_seed(&[4; 32]).public())
        .unwrap();
    let found = problems(&l, &keys, false);
    assert_eq!(found, vec![String::from("CLR-42-001: entry 2 (answer by architect): signed by architect, whose public key is unknown")]);
}

#[test]
fn half_signed_entries_are_problems() {
    let signers = keyring();
    let keys = signers.public_keys();
    let l = signed_ledger(&signers);
    let stripped = edited(&l, |v| {
        entry(v, 0, 0).as_object_mut().unwrap().remove("signature");
    });
    let found = problems(&stripped, &keys, false);
    assert_eq!(found, vec![String::from("CLR-42-001: entry 1 (question by engineer): names signer engineer but carries no signature")]);
    let anonymous = edited(&l, |v| {
        entry(v, 0, 0).as_object_mut().unwrap().remove("signer");
    });
    let found = problems(&anonymous, &keys, false);
    assert!(
        found.iter().any(
            |p| p.contains("entry 1 (question by engineer): carries a signature but no signer")
        ),
        "{found:?}"
    );
    let garbage = edited(&l, |v| entry(v, 0, 0)["signature"] = "ed25519:AAAA".into());
    let found = problems(&garbage, &keys, false);
    assert_found(
        &found,
        "signature 'ed25519:AAAA' holds 3 bytes, expected 64",
    );
}

#[test]
fn hash_bytes_reads_hex() {
    assert_eq!(hash_bytes(&"ab".repeat(32)), Some([0xab; 32]));
    assert_eq!(hash_bytes(&"AB".repeat(32)), Some([0xab; 32]));
    assert_eq!(hash_bytes(&"ab".repeat(31)), None);
    assert_eq!(hash_bytes(&format!("{}zz", "ab".repeat(31))), None);
    assert_eq!(hash_bytes(&"é".repeat(32)), None);
}

/// One change of one byte of a hashed field of one entry, as a foreign writer might make it.
#[derive(Clone, Debug)]
enum Change {
    Body(usize),
    From,
    Signer,
    Round,
    Kind,
    Timestamp,
}

fn change_strategy() -> impl Strategy<Value = (usize, Change)> {
    (
        any::<usize>(),
        prop_oneof![
            any::<usize>().prop_map(Change::Body),
            Just(Change::From),
            Just(Change::Signer),
            Just(Change::Round),
            Just(Change::Kind),
            Just(Change::Timestamp),
        ],
    )
}

/// Replaces one ASCII character of `s` (the `at`-th, modulo) with another; a text without
/// ASCII gets its first character replaced.
fn flip_one(s: &str, at: usize) -> String {
    let ascii: Vec<usize> = s
        .char_indices()
        .filter(|(_, c)| c.is_ascii())
        .map(|(i, _)| i)
        .collect();
    let Some(&i) = ascii.get(at % ascii.len().max(1)) else {
        let mut chars = s.chars();
        chars.next();
        return format!("x{}", chars.as_str());
    };
    let mut bytes = s.as_bytes().to_vec();
    bytes[i] = if bytes[i] == b'a' { b'b' } else { b'a' };
    String::from_utf8(bytes).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn keyed_ledgers_verify_and_any_change_is_caught(
        question in "\\PC{1,40}",
        answer in "\\PC{1,40}",
        rounds in 1usize..3,
        hold in proptest::collection::vec(any::<bool>(), 4),
        (pick, change) in change_strategy(),
    ) {
        // A random subset of the keys (the hub always: the monitor's entries need it).
        let all = keyring();
        let mut signers = Signers::new();
        for (name, held) in ["agent-x", "engineer", "architect", "product-manager"].iter().zip(&hold) {
            if *held || *name == "agent-x" {
                let (_, key) = all.for_author(name).unwrap();
                signers.insert(name, key.clone()).unwrap();
            }
        }
        let req = plain("engineer", "architect", "Cache layer", &question);
        let mut l = ask(None, &req, T0, &signers);
        let mut now = T0;
        for round in 0..rounds {
            now += MIN;
            let a = Action::Answer { from: "architect".into(), body: format!("{answer} {round}") };
            l = apply(&l, "CLR-42-001", a, now, &signers);
            now += MIN;
            let f = Action::FollowUp { from: "engineer".into(), question: format!("{question} {round}") };
            l = apply(&l, "CLR-42-001", f, now, &signers);
        }
        let keys = signers.public_keys();
        prop_assert_eq!(problems(&l, &keys, false), Vec::<String>::new());

        let n = l.clarifications[0].thread.len();
        let index = pick % n;
        let original = l.clarifications[0].thread[index].clone();
        let bad = edited(&l, |v| {
            let e = entry(v, 0, index);
            match &change {
                Change::Body(at) => e["body"] = flip_one(&original.body, *at).into(),
                Change::From => e["from"] = flip_one(&original.from, 0).into(),
                Change::Signer => e["signer"] = match &original.signer {
                    Some(s) => flip_one(s, 0).into(),
                    None => "engineer".into(),
                },
                Change::Round => e["round"] = (original.round + 1).into(),
                Change::Kind => e["type"] = if original.kind == EntryKind::Answer { "question" } else { "answer" }.into(),
                // The last digit of the milliseconds: another instant.
                Change::Timestamp => e["timestamp"] = original.timestamp.as_str().replace("0Z", "1Z").into(),
            }
        });
        let found = problems(&bad, &keys, false);
        prop_assert!(
            found.iter().any(|p| p.contains("hash chain broken") || p.contains("signature")),
            "{:?} at entry {} went unnoticed: {:?}", change, index + 1, found
        );
    }
}
