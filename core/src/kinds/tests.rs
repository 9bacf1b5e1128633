use serde_json::json;

use super::*;

fn opt(value: &str, label: Option<&str>) -> AnswerOption {
    AnswerOption {
        value: value.into(),
        label: label.map(String::from),
        description: None,
    }
}

fn choice(kind: AnswerKind) -> AnswerSpec {
    AnswerSpec {
        kind,
        options: vec![
            opt("redis", Some("Redis")),
            opt("lru", Some("In-process LRU")),
            opt("none", None),
        ],
        ..AnswerSpec::default()
    }
}

fn code(r: Result<impl std::fmt::Debug, ClarifyError>) -> (String, String) {
    let e = r.unwrap_err();
    (e.code().to_owned(), e.to_string())
}

#[test]
fn request_shapes_are_checked() {
    let text_with_options = AnswerSpec {
        options: vec![opt("a", None), opt("b", None)],
        ..AnswerSpec::default()
    };
    assert_eq!(code(text_with_options.validate()).0, "INVALID_INPUT");
    let one = AnswerSpec {
        kind: AnswerKind::Choice,
        options: vec![opt("a", None)],
        ..AnswerSpec::default()
    };
    assert!(code(one.validate())
        .1
        .contains("needs 2 to 10 options, got 1"));
    let bad = AnswerSpec {
        kind: AnswerKind::Choice,
        options: vec![opt("a", None), opt("-b", None)],
        ..AnswerSpec::default()
    };
    assert!(code(bad.validate()).1.contains("invalid option value '-b'"));
    let dup = AnswerSpec {
        kind: AnswerKind::Choice,
        options: vec![opt("a", None), opt("a", None)],
        ..AnswerSpec::default()
    };
    assert!(code(dup.validate()).1.contains("listed twice"));
    let long = AnswerSpec {
        kind: AnswerKind::Choice,
        options: vec![opt("a", Some(&"x".repeat(101))), opt("b", None)],
        ..AnswerSpec::default()
    };
    assert_eq!(code(long.validate()).0, "TEXT_TOO_LONG");
    let confirm_other = AnswerSpec {
        kind: AnswerKind::Confirm,
        allow_other: Some(true),
        ..AnswerSpec::default()
    };
    assert_eq!(code(confirm_other.validate()).0, "INVALID_INPUT");
    let min_on_choice = AnswerSpec {
        min_select: Some(1),
        ..choice(AnswerKind::Choice)
    };
    assert_eq!(code(min_on_choice.validate()).0, "INVALID_INPUT");
    let min_over_max = AnswerSpec {
        min_select: Some(3),
        max_select: Some(2),
        ..choice(AnswerKind::MultiChoice)
    };
    assert!(code(min_over_max.validate())
        .1
        .contains("1 ≤ minSelect ≤ maxSelect ≤ 3"));
    assert!(choice(AnswerKind::MultiChoice).validate().is_ok());
    assert!(is_option_value(&"a".repeat(64)) && !is_option_value(&"a".repeat(65)));
    assert!(is_option_value("v1.2:x-y_z") && !is_option_value("") && !is_option_value("é"));
}

#[test]
fn values_are_checked_and_named() {
    let confirm = AnswerSpec {
        kind: AnswerKind::Confirm,
        ..AnswerSpec::default()
    };
    assert_eq!(confirm.check_value(&json!(true)).unwrap(), json!(true));
    assert_eq!(
        code(confirm.check_value(&json!("yes"))),
        (
            "INVALID_ANSWER".into(),
            "value 'yes' is not a yes/no; allowed: true (yes), false (no)".into()
        )
    );
    let c = choice(AnswerKind::Choice);
    assert_eq!(
        code(c.check_value(&json!("memcached"))).1,
        "'memcached' is not an option; allowed: redis (Redis), lru (In-process LRU), none, or free text"
    );
    let m = AnswerSpec {
        max_select: Some(2),
        ..choice(AnswerKind::MultiChoice)
    };
    // Option order, whatever the order given.
    assert_eq!(
        m.check_value(&json!(["lru", "redis"])).unwrap(),
        json!(["redis", "lru"])
    );
    assert_eq!(
        code(m.check_value(&json!(["redis", "lru", "none"]))).1,
        "3 options chosen; allowed: 1 to 2 of redis (Redis), lru (In-process LRU), none, or free text"
    );
    assert!(code(m.check_value(&json!([])))
        .1
        .starts_with("0 options chosen"));
    assert!(code(m.check_value(&json!(["redis", "redis"])))
        .1
        .contains("chosen twice"));
    assert_eq!(code(m.check_value(&json!("redis"))).0, "INVALID_ANSWER");
    assert_eq!(
        code(AnswerSpec::default().check_value(&json!("x"))).0,
        "INVALID_ANSWER"
    );
}

#[test]
fn bodies_are_rendered_from_values() {
    let m = choice(AnswerKind::MultiChoice);
    assert_eq!(m.render(&json!(["redis", "none"])), "Redis, none");
    assert_eq!(m.render(&json!(true)), "yes");
    assert_eq!(m.render(&json!(false)), "no");
    assert_eq!(
        m.decide(None, Some(&json!(["lru"]))).unwrap(),
        ("In-process LRU".into(), Some(json!(["lru"])))
    );
    assert_eq!(
        m.decide(Some("LRU, because"), Some(&json!(["lru"])))
            .unwrap(),
        ("LRU, because".into(), Some(json!(["lru"])))
    );
}

#[test]
fn replies_match_values_and_labels() {
    let c = choice(AnswerKind::Choice);
    assert_eq!(c.match_reply(" REDIS "), Some(json!("redis")));
    assert_eq!(c.match_reply("in-process lru"), Some(json!("lru")));
    assert_eq!(c.match_reply("memcached"), None);
    let m = choice(AnswerKind::MultiChoice);
    assert_eq!(m.match_reply("lru, Redis"), Some(json!(["redis", "lru"])));
    assert_eq!(m.match_reply("lru, memcached"), None);
    let confirm = AnswerSpec {
        kind: AnswerKind::Confirm,
        ..AnswerSpec::default()
    };
    assert_eq!(confirm.match_reply("Yes"), Some(json!(true)));
    assert_eq!(confirm.match_reply("no"), Some(json!(false)));
    // Free text: recorded without a value when other answers are allowed, refused otherwise.
    assert_eq!(
        c.decide(Some("memcached"), None).unwrap(),
        ("memcached".into(), None)
    );
    let closed = AnswerSpec {
        allow_other: Some(false),
        ..choice(AnswerKind::Choice)
    };
    assert_eq!(
        code(closed.decide(Some("memcached"), None)).1,
        "answer 'memcached' fits no option; allowed: redis (Redis), lru (In-process LRU), none"
    );
    assert_eq!(
        closed.decide(Some("Redis"), None).unwrap(),
        ("Redis".into(), Some(json!("redis")))
    );
    assert_eq!(
        code(confirm.decide(Some("maybe"), None)).0,
        "INVALID_ANSWER"
    );
}

#[test]
fn fingerprints_ignore_spelling_but_not_target_or_field() {
    // Pinned: computed independently (Python's unicodedata NFKC + hashlib).
    let pinned = "b99e0eebd90e082d468ea3e9a72bdb0902be556d94a6a1c300390514c0d7b1b1";
    for q in [
        "Redis or in-process?",
        "  REDIS   or\tin-process ?! ",
        "Ｒｅｄｉｓ\u{a0}or in-process？",
        "Redis or in-process.",
        "redis or in-process",
    ] {
        assert_eq!(
            fingerprint(42, "architect", Some("storage.cache"), q),
            pinned,
            "{q:?}"
        );
    }
    assert_eq!(
        fingerprint(42, "architect", None, "Redis or in-process?"),
        "27faefca9c86e59c10877a2e31aaf1a889b70af06a6ef2e583e03efa7a1f5c9b"
    );
    assert_eq!(
        fingerprint(42, "pm", Some("storage.cache"), "Redis or in-process?"),
        "19d0b53f491be52807ab0582ee43655a815f3f2fb0a0befe32d597dbea16d363"
    );
    assert_eq!(normalise_question(" Why?! ?"), "why");
}

#[test]
fn the_chain_covers_values_and_old_ledgers_read_unchanged() {
    use crate::config::Config;
    use crate::ledger::{ChainState, Ledger};
    use crate::ops::{act, request, Action, NewRequest};
    use crate::workflow::Workflows;
    let t0 = 1_795_341_600_000;
    let req = NewRequest {
        issue_number: 42,
        from: "engineer".into(),
        to: "architect".into(),
        topic: "Queue".into(),
        question: "Which queue?".into(),
        answer: AnswerSpec {
            kind: AnswerKind::Choice,
            options: vec![
                AnswerOption {
                    value: "kafka".into(),
                    label: Some("Kafka".into()),
                    description: Some("the event bus we already run".into()),
                },
                opt("sqs", None),
            ],
            ..AnswerSpec::default()
        },
        ..NewRequest::default()
    };
    let config = Config::default();
    let asked = request(None, &req, &config, &Workflows::defaults(), t0).unwrap();
    let answer = Action::AnswerValue {
        from: "architect".into(),
        body: None,
        value: json!("kafka"),
    };
    let answered = act(&asked.ledger, &asked.id, &answer, &config, t0 + 1).unwrap();
    let text = answered.ledger.to_pretty_json();
    let read = Ledger::parse("issue-42.json", text.as_bytes(), Some(42)).unwrap();
    assert_eq!(read, answered.ledger);
    let record = &read.clarifications[0];
    assert_eq!(
        record.answer.options[0].description.as_deref(),
        Some("the event bus we already run")
    );
    assert_eq!(record.thread[1].value, Some(json!("kafka")));
    assert_eq!(record.thread[1].body, "Kafka");
    assert_eq!(record.chain_state(), ChainState::Intact);
    // Another value under the same hash is an edit of history.
    let tampered = text.replace("\"value\": \"kafka\"", "\"value\": \"sqs\"");
    assert_ne!(tampered, text);
    let read = Ledger::parse("issue-42.json", tampered.as_bytes(), Some(42)).unwrap();
    assert_eq!(
        read.clarifications[0].chain_state(),
        ChainState::BrokenAt(1)
    );
    // A ledger without kinds is written byte for byte as before: no new key appears.
    let plain = request(
        None,
        &NewRequest {
            answer: AnswerSpec::default(),
            ..req.clone()
        },
        &config,
        &Workflows::defaults(),
        t0,
    )
    .unwrap();
    let plain_text = plain.ledger.to_pretty_json();
    for key in [
        "answerKind",
        "options",
        "allowOther",
        "reuseCount",
        "\"value\"",
    ] {
        assert!(!plain_text.contains(key), "{key}");
    }
}

#[test]
fn renderers_show_the_options_with_the_chosen_one_marked() {
    use crate::config::Config;
    use crate::ops::{act, request, Action, NewRequest};
    use crate::render::{markdown_thread, text_thread, Style};
    use crate::workflow::Workflows;
    let t0 = 1_795_341_600_000;
    let req = NewRequest {
        issue_number: 42,
        from: "engineer".into(),
        to: "architect".into(),
        topic: "Cache".into(),
        question: "Which cache?".into(),
        answer: AnswerSpec {
            kind: AnswerKind::Choice,
            options: vec![
                AnswerOption {
                    value: "redis".into(),
                    label: Some("Redis *fast*".into()),
                    description: Some("survives a deploy".into()),
                },
                opt("lru", Some("In-process LRU")),
            ],
            allow_other: Some(false),
            ..AnswerSpec::default()
        },
        ..NewRequest::default()
    };
    let config = Config::default();
    let asked = request(None, &req, &config, &Workflows::defaults(), t0).unwrap();
    let answer = Action::AnswerValue {
        from: "architect".into(),
        body: None,
        value: json!("lru"),
    };
    let answered = act(&asked.ledger, &asked.id, &answer, &config, t0 + 1).unwrap();
    let record = &answered.ledger.clarifications[0];
    let md = markdown_thread(42, record);
    assert!(md.contains("*Answer: choice, only these*"), "{md}");
    assert!(
        md.contains(
            "- [ ] Redis \\*fast\\* (`redis`) — survives a deploy\n- [x] In-process LRU (`lru`)"
        ),
        "{md}"
    );
    let text = text_thread(42, record, Style { color: false });
    assert!(text.contains("  answer: choice, only these\n    [ ] redis  Redis *fast*\n    [x] lru  In-process LRU\n"), "{text}");
    // Before an answer nothing is marked; a text question shows no options.
    let md = markdown_thread(42, &asked.ledger.clarifications[0]);
    assert!(
        !md.contains("[x]") && md.contains("- [ ] In-process LRU"),
        "{md}"
    );
    // show says who re-asked and when.
    let mut reasked = record.clone();
    reasked.reuses.note("engineer", t0 + 60_000);
    let text = text_thread(42, &reasked, Style { color: false });
    assert!(
        text.contains("  re-asked 1 time(s), answered from this record: engineer 10:01\n"),
        "{text}"
    );
}

#[test]
fn a_persons_decision_is_what_they_chose() {
    let closed = AnswerSpec {
        allow_other: Some(false),
        ..choice(AnswerKind::Choice)
    };
    // A note alone is no option: refused, whatever it says.
    let (code_, message) = code(closed.decision(Some("go with whatever is faster"), None));
    assert_eq!(code_, "INVALID_ANSWER");
    assert!(
        message.starts_with("no option chosen: a decision on this question is one of its options; a note alone is not one"),
        "{message}"
    );
    assert!(message.ends_with("allowed: redis (Redis), lru (In-process LRU), none"));
    assert_eq!(code(closed.decision(None, None)).0, "INVALID_ANSWER");
    // An option with a note records both; without a note the label is the body.
    assert_eq!(
        closed
            .decision(Some(" Redis, see ADR-7 "), Some(&json!("redis")))
            .unwrap(),
        ("Redis, see ADR-7".into(), Some(json!("redis")))
    );
    assert_eq!(
        closed.decision(Some("  "), Some(&json!("lru"))).unwrap(),
        ("In-process LRU".into(), Some(json!("lru")))
    );
    // A note that is an option's label is that option (as from an agent).
    assert_eq!(
        closed.decision(Some("redis"), None).unwrap(),
        ("redis".into(), Some(json!("redis")))
    );
    // Free text instead of an option only where allowOther allows it.
    let open = choice(AnswerKind::Choice);
    assert_eq!(
        open.decision(Some("memcached"), None).unwrap(),
        ("memcached".into(), None)
    );
    // multi_choice: min/max on the server whatever the form sent.
    let multi = AnswerSpec {
        allow_other: Some(false),
        min_select: Some(2),
        ..choice(AnswerKind::MultiChoice)
    };
    assert!(code(multi.decision(None, Some(&json!(["redis"]))))
        .1
        .starts_with("1 options chosen"));
    assert!(code(multi.decision(Some("both"), None))
        .1
        .contains("a decision on this question is a choice of its options"));
    let confirm = AnswerSpec {
        kind: AnswerKind::Confirm,
        ..AnswerSpec::default()
    };
    assert!(code(confirm.decision(Some("sounds good"), None))
        .1
        .starts_with("no answer chosen: a decision on this question is yes or no"));
    assert_eq!(
        confirm
            .decision(Some("ship it"), Some(&json!(true)))
            .unwrap(),
        ("ship it".into(), Some(json!(true)))
    );
    // A free-text question: the note is the decision.
    assert_eq!(
        AnswerSpec::default()
            .decision(Some("One hour"), None)
            .unwrap(),
        ("One hour".into(), None)
    );
}
