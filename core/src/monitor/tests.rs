use serde_json::json;

use super::*;
use crate::agents::{set_status, DONE, WORKING};
use crate::ledger::Status;
use crate::ops::{act, request, Action, NewRequest};
use crate::testkit::{MIN, T0};
use crate::workflow::Workflows;

fn open_workflows() -> Workflows {
    let mut w = Workflows::new();
    let mut text = String::new();
    for agent in [
        "product-manager",
        "architect",
        "engineer",
        "reviewer",
        "tester",
        "stranger",
    ] {
        text.push_str(&format!(
            "[[steps]]\nid = \"{agent}\"\nagent = \"{agent}\"\ncan_clarify = [\"product-manager\", \"architect\", \"engineer\", \"reviewer\", \"tester\", \"stranger\"]\nclarify_sla_minutes = 60\n"
        ));
    }
    w.insert_text("feature", &text);
    w
}

fn ask(
    ledger: Option<&Ledger>,
    from: &str,
    to: &str,
    topic: &str,
    blocking: bool,
    now: i64,
) -> Ledger {
    let req = NewRequest {
        issue_number: 42,
        from: from.into(),
        to: to.into(),
        topic: topic.into(),
        question: format!("{topic}?"),
        blocking,
        ..NewRequest::default()
    };
    request(ledger, &req, &Config::default(), &open_workflows(), now)
        .unwrap()
        .ledger
}

fn run(ledger: Ledger, statuses: &Statuses, now: i64) -> LedgerOutcome {
    monitor_ledger(ledger, statuses, &Config::default(), now)
}

#[test]
fn stale_then_retry_then_escalate() {
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let quiet = run(l.clone(), &Statuses::new(), T0 + 60 * MIN);
    assert!(!quiet.changed, "exactly at staleAfter is not stale");
    let first = run(l, &Statuses::new(), T0 + 60 * MIN + 1);
    assert_eq!(first.report.stale, vec!["CLR-42-001"]);
    assert_eq!(first.report.retried, vec!["CLR-42-001"]);
    let r = &first.ledger.clarifications[0];
    assert_eq!(r.status, Status::Pending);
    assert_eq!(r.thread[2].body, "retry 1 of 1");
    let again = run(first.ledger.clone(), &Statuses::new(), T0 + 60 * MIN + 1);
    assert!(
        !again.changed,
        "a second run at the same now changes nothing"
    );
    let second = run(first.ledger, &Statuses::new(), T0 + 121 * MIN);
    assert_eq!(
        second.report.escalated[0].reason,
        "SLA expired; retries used: 1 of 1"
    );
    assert_eq!(second.ledger.clarifications[0].status, Status::Escalated);
    let kinds: Vec<&str> = second
        .events
        .iter()
        .map(|e| {
            serde_json::to_value(e.kind)
                .unwrap()
                .as_str()
                .unwrap()
                .to_owned()
        })
        .map(|s| {
            if s.ends_with("stale") {
                "stale"
            } else {
                "escalated"
            }
        })
        .collect();
    assert_eq!(kinds, vec!["stale", "escalated"]);
}

#[test]
fn mutual_wait_is_broken_by_priority() {
    let l = ask(None, "architect", "engineer", "Schema", true, T0);
    let l = ask(Some(&l), "engineer", "architect", "Deploy", true, T0 + MIN);
    let out = run(l, &Statuses::new(), T0 + 2 * MIN);
    assert_eq!(out.report.deadlocks.len(), 1);
    let d = &out.report.deadlocks[0];
    assert_eq!(d.cycle, vec!["CLR-42-001", "CLR-42-002"]);
    assert_eq!(d.agents, vec!["architect", "engineer"]);
    assert_eq!(
        d.escalated, "CLR-42-002",
        "the engineer ranks below the architect"
    );
    assert_eq!(
        out.report.escalated[0].reason,
        "deadlock: CLR-42-001, CLR-42-002 between architect, engineer; engineer yields to a human, architect continues"
    );
}

#[test]
fn non_blocking_records_are_not_wait_edges() {
    let l = ask(None, "architect", "engineer", "Schema", true, T0);
    let l = ask(Some(&l), "engineer", "architect", "Deploy", false, T0 + MIN);
    assert!(run(l, &Statuses::new(), T0 + 2 * MIN)
        .report
        .deadlocks
        .is_empty());
}

#[test]
fn combined_case_escalates_each_record_once() {
    // Two mutual blocking requests with the same topic, both past their SLA with no retries left.
    let l = ask(
        None,
        "architect",
        "engineer",
        "Which cache do we use",
        true,
        T0,
    );
    let l = ask(
        Some(&l),
        "engineer",
        "architect",
        "Which cache do we use",
        true,
        T0,
    );
    let config = Config {
        max_retries: 0,
        ..Config::default()
    };
    let out = monitor_ledger(l, &Statuses::new(), &config, T0 + 61 * MIN);
    let ids: Vec<&str> = out.report.escalated.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, vec!["CLR-42-001", "CLR-42-002"]);
    assert!(
        out.report.deadlocks.is_empty(),
        "stale escalations already broke the wait"
    );
    let again = monitor_ledger(out.ledger, &Statuses::new(), &config, T0 + 61 * MIN);
    assert!(!again.changed);
}

#[test]
fn direction_flip_escalates_the_later_record() {
    let l = ask(
        None,
        "engineer",
        "architect",
        "Cache eviction policy",
        false,
        T0,
    );
    let l = ask(
        Some(&l),
        "architect",
        "engineer",
        "cache eviction policy",
        false,
        T0 + MIN,
    );
    let out = run(l, &Statuses::new(), T0 + 2 * MIN);
    assert_eq!(out.report.stuck, vec!["CLR-42-002"]);
    assert_eq!(
        out.report.escalated[0].reason,
        "circular: architect asks engineer what engineer asked architect in CLR-42-001"
    );
}

#[test]
fn a_flip_in_a_long_run_of_one_direction_names_its_earlier_record() {
    // Past 32 records the check takes its sorted path: forty asks one way, then two back.
    let mut l = ask(None, "engineer", "architect", "subject0 part0", false, T0);
    for i in 1..40 {
        let topic = format!("subject{i} part{i}");
        l = ask(
            Some(&l),
            "engineer",
            "architect",
            &topic,
            false,
            T0 + i * MIN,
        );
    }
    l = ask(
        Some(&l),
        "architect",
        "engineer",
        "unrelated matter",
        false,
        T0 + 41 * MIN,
    );
    l = ask(
        Some(&l),
        "architect",
        "engineer",
        "Subject7 part7",
        false,
        T0 + 42 * MIN,
    );
    let out = run(l, &Statuses::new(), T0 + 43 * MIN);
    assert_eq!(out.report.stuck, vec!["CLR-42-042"]);
    assert_eq!(
        out.report.escalated[0].reason,
        "circular: architect asks engineer what engineer asked architect in CLR-42-008"
    );
}

#[test]
fn repeated_questions_are_stuck() {
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let cfg = Config::default();
    let l = act(
        &l,
        "CLR-42-001",
        &Action::Answer {
            from: "architect".into(),
            body: "Redis.".into(),
        },
        &cfg,
        T0 + MIN,
    )
    .unwrap()
    .ledger;
    let l = act(
        &l,
        "CLR-42-001",
        &Action::FollowUp {
            from: "engineer".into(),
            question: "Cache?".into(),
        },
        &cfg,
        T0 + 2 * MIN,
    )
    .unwrap()
    .ledger;
    let out = run(l, &Statuses::new(), T0 + 3 * MIN);
    assert_eq!(out.report.stuck, vec!["CLR-42-001"]);
    assert_eq!(
        out.report.escalated[0].reason,
        "circular: the last two questions repeat each other"
    );
}

#[test]
fn abandonment_follows_the_requester() {
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let mut statuses = Statuses::new();
    set_status(&mut statuses, "engineer", WORKING, None, T0).unwrap();
    assert!(
        run(l.clone(), &statuses, T0 + MIN)
            .report
            .abandoned
            .is_empty(),
        "working with issue null"
    );
    set_status(&mut statuses, "engineer", WORKING, Some(42), T0).unwrap();
    assert!(run(l.clone(), &statuses, T0 + MIN)
        .report
        .abandoned
        .is_empty());
    set_status(&mut statuses, "engineer", WORKING, Some(7), T0 + 1).unwrap();
    let out = run(l.clone(), &statuses, T0 + MIN);
    assert_eq!(out.report.abandoned, vec!["CLR-42-001"]);
    assert_eq!(
        out.events[0].reason.as_deref(),
        Some("requester engineer moved to issue 7")
    );
    set_status(&mut statuses, "engineer", DONE, Some(42), T0 + 1).unwrap();
    assert_eq!(
        run(l, &statuses, T0 + MIN).report.abandoned,
        vec!["CLR-42-001"]
    );
}

#[test]
fn a_status_older_than_the_question_never_abandons() {
    // AgentX's `hook finish` left the engineer `done` before it asked again (docs/protocol.md §20).
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let mut statuses = Statuses::new();
    for (status, issue) in [(DONE, Some(42)), (WORKING, Some(7))] {
        for at in [T0 - MIN, T0] {
            set_status(&mut statuses, "engineer", status, issue, at).unwrap();
            assert!(
                run(l.clone(), &statuses, T0 + MIN)
                    .report
                    .abandoned
                    .is_empty(),
                "{status} at {at} is not after the question at {T0}"
            );
        }
    }
    // A status without a readable report shows no change after the question (docs/protocol.md §28),
    // however late its `lastActivity` (a clarification operation moved it).
    for reported_at in [None, Some(String::from("yesterday"))] {
        let slot = statuses.get_mut("engineer").unwrap();
        slot.reported_at = reported_at;
        slot.last_activity = Some(crate::time::format_ms(T0 + MIN));
        assert!(run(l.clone(), &statuses, T0 + MIN)
            .report
            .abandoned
            .is_empty());
    }
    // A retry counts as asking again: `done` between the question and the retry is older.
    let retried = run(l, &Statuses::new(), T0 + 61 * MIN).ledger;
    assert_eq!(retried.clarifications[0].folded_retries(), 1);
    set_status(&mut statuses, "engineer", DONE, Some(42), T0 + 30 * MIN).unwrap();
    assert!(run(retried.clone(), &statuses, T0 + 62 * MIN)
        .report
        .abandoned
        .is_empty());
    set_status(&mut statuses, "engineer", DONE, Some(42), T0 + 61 * MIN + 1).unwrap();
    assert_eq!(
        run(retried, &statuses, T0 + 62 * MIN).report.abandoned,
        vec!["CLR-42-001"]
    );
}

#[test]
fn a_legacy_record_without_a_question_is_escalated_not_retried() {
    // AgentX's router crashed between creating the record and writing its question.
    let v = json!({"issueNumber": 5, "clarifications": [{
        "id": "CLR-5-001", "issueNumber": 5, "from": "engineer", "to": "architect", "topic": "x",
        "blocking": true, "status": "pending", "round": 0, "maxRounds": 5,
        "created": "2026-11-22T10:00:00.000Z", "staleAfter": "2026-11-22T10:30:00.000Z",
        "resolvedAt": null, "thread": []
    }, {
        "id": "CLR-5-002", "from": "engineer", "to": "reviewer", "topic": "y", "status": "stale",
        "round": 0, "maxRounds": 5, "created": "2026-11-22T10:00:00.000Z",
        "staleAfter": "2026-11-22T12:00:00.000Z", "resolvedAt": null, "thread": []
    }]});
    let l = Ledger::from_value("issue-5.json", &v, None).unwrap();
    let before = run(l.clone(), &Statuses::new(), T0 + 30 * MIN);
    assert_eq!(
        before
            .report
            .escalated
            .iter()
            .map(|e| e.id.as_str())
            .collect::<Vec<_>>(),
        vec!["CLR-5-002"],
        "pending waits for its staleAfter; a stored stale is already past it"
    );
    let out = run(l, &Statuses::new(), T0 + 31 * MIN);
    assert!(out.report.stale.is_empty() && out.report.retried.is_empty());
    assert_eq!(out.report.escalated.len(), 2);
    for (record, escalated) in out.ledger.clarifications.iter().zip(&out.report.escalated) {
        assert_eq!(escalated.reason, "legacy record without a question");
        assert_eq!(record.current_status(), Status::Escalated);
        assert_eq!(record.thread.len(), 1);
        assert_eq!(record.thread[0].kind, EntryKind::Escalation);
        assert_eq!(record.thread[0].round, 0);
        assert_eq!(record.fold().round, 0);
    }
    let answer = Action::Answer {
        from: "architect".into(),
        body: "late".into(),
    };
    let err = act(
        &out.ledger,
        "CLR-5-001",
        &answer,
        &Config::default(),
        T0 + 32 * MIN,
    )
    .unwrap_err();
    assert_eq!(err.code(), "INVALID_TRANSITION");
    assert!(!run(out.ledger, &Statuses::new(), T0 + 90 * MIN).changed);
}

#[test]
fn legacy_stale_marker_gets_its_stale_entry() {
    let v = json!({"issueNumber": 5, "clarifications": [{
        "id": "CLR-5-001", "from": "engineer", "to": "architect", "topic": "x", "status": "stale",
        "round": 1, "maxRounds": 5, "created": "2026-11-22T10:00:00.000Z", "staleAfter": "2026-11-22T10:30:00.000Z",
        "resolvedAt": null,
        "thread": [{"round": 1, "from": "engineer", "type": "question", "body": "x?", "timestamp": "2026-11-22T10:00:00.000Z"}]
    }]});
    let l = Ledger::from_value("issue-5.json", &v, None).unwrap();
    let out = run(l, &Statuses::new(), T0 + 31 * MIN);
    assert_eq!(out.report.stale, vec!["CLR-5-001"]);
    assert_eq!(out.report.retried, vec!["CLR-5-001"]);
}

#[test]
fn workspace_report_is_ordered_and_lists_errors() {
    let a = ask(None, "engineer", "architect", "Cache", true, T0);
    let mut b = a.clone();
    b.issue_number = 7;
    for r in &mut b.clarifications {
        r.id = r.id.replace("CLR-42", "CLR-7");
    }
    let errors = vec![ReportError {
        file: "issue-9.json".into(),
        code: "LEDGER_CORRUPT".into(),
        message: "x".into(),
    }];
    let out = monitor(
        vec![a, b],
        errors,
        &Statuses::new(),
        &Config::default(),
        T0 + 61 * MIN,
    );
    assert_eq!(out.report.stale, vec!["CLR-7-001", "CLR-42-001"]);
    assert_eq!(out.changed, vec![7, 42]);
    assert_eq!(out.report.errors.len(), 1);
}

/// The architect asks the engineer back about CLR-42-001 at `now`.
fn ask_back(ledger: &Ledger, now: i64) -> Ledger {
    let mut req = NewRequest {
        issue_number: 42,
        from: "architect".into(),
        to: "engineer".into(),
        topic: "Cache".into(),
        question: "How many sessions at peak?".into(),
        blocking: true,
        ..NewRequest::default()
    };
    req.extra
        .insert(crate::replies::ASKED_BACK.into(), json!("CLR-42-001"));
    request(
        Some(ledger),
        &req,
        &Config::default(),
        &open_workflows(),
        now,
    )
    .unwrap()
    .ledger
}

/// How many escalations of `ledger` the notification sinks are told of.
fn notified_escalations(ledger: &Ledger) -> usize {
    ledger
        .clarifications
        .iter()
        .flat_map(crate::notify::outbox::events_of)
        .filter(|f| f.name == crate::notify::EventName::Escalated)
        .count()
}

#[test]
fn a_question_asked_back_and_unanswered_escalates_the_pair_once() {
    // Issue 49: the engineer waits on CLR-42-001, the architect asked back CLR-42-002, the
    // engineer never answers it; both ran out of time and the lead got two pushes saying only
    // "SLA expired".
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let l = ask_back(&l, T0 + 10 * MIN);
    let none = Statuses::new();
    let l = run(l, &none, T0 + 61 * MIN).ledger; // CLR-42-001 retried
    let l = run(l, &none, T0 + 71 * MIN).ledger; // CLR-42-002 retried
    let first = run(l, &none, T0 + 122 * MIN);
    assert_eq!(first.report.escalated.len(), 1, "{:?}", first.report);
    assert_eq!(first.report.escalated[0].id, "CLR-42-001");
    assert_eq!(
        first.report.escalated[0].reason,
        "waits on CLR-42-002, asked back and unanswered by engineer"
    );
    let second = run(first.ledger, &none, T0 + 132 * MIN);
    let r2 = &second.ledger.clarifications[1];
    assert_eq!(r2.status, Status::Escalated);
    assert!(
        r2.thread
            .last()
            .unwrap()
            .body
            .starts_with("escalated with CLR-42-001"),
        "{:?}",
        r2.thread.last()
    );
    assert_eq!(
        notified_escalations(&second.ledger),
        1,
        "one push for the pair"
    );
    // Neither stays due: nothing more to do, and time alone wakes nobody.
    let later = run(second.ledger.clone(), &none, T0 + 500 * MIN);
    assert!(!later.changed);
    assert_eq!(next_wakeup([&second.ledger], T0 + 500 * MIN), None);
}

#[test]
fn a_question_asked_back_that_runs_out_first_escalates_its_original_with_it() {
    // CLR-42-001 was answered, then followed up (a new round, a new SLA); CLR-42-002, asked
    // back in round 1, runs out of time first: the original goes to a person with it.
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let l = ask_back(&l, T0 + 10 * MIN);
    let config = Config::default();
    let answer = Action::Answer {
        from: "architect".into(),
        body: "Redis, if the peak allows.".into(),
    };
    let l = act(&l, "CLR-42-001", &answer, &config, T0 + 20 * MIN)
        .unwrap()
        .ledger;
    let follow = Action::FollowUp {
        from: "engineer".into(),
        question: "And the eviction policy?".into(),
    };
    let l = act(&l, "CLR-42-001", &follow, &config, T0 + 30 * MIN)
        .unwrap()
        .ledger;
    let none = Statuses::new();
    let l = run(l, &none, T0 + 71 * MIN).ledger; // CLR-42-002 retried
    let l = run(l, &none, T0 + 91 * MIN).ledger; // CLR-42-001 retried
    let out = run(l, &none, T0 + 132 * MIN);
    let escalated: Vec<(&str, &str)> = out
        .report
        .escalated
        .iter()
        .map(|e| (e.id.as_str(), e.reason.as_str()))
        .collect();
    assert_eq!(escalated.len(), 2, "{escalated:?}");
    assert!(escalated.contains(&(
        "CLR-42-001",
        "waits on CLR-42-002, asked back and unanswered by engineer"
    )));
    assert!(escalated
        .iter()
        .any(|(id, why)| *id == "CLR-42-002" && why.starts_with("escalated with CLR-42-001")));
    assert_eq!(notified_escalations(&out.ledger), 1);
    assert!(!run(out.ledger, &none, T0 + 133 * MIN).changed);
}

#[test]
fn the_waiter_is_woken_by_the_question_that_waits_on_it() {
    let l = ask(None, "engineer", "architect", "Cache", true, T0);
    let awaited = l.clarifications[0].clone();
    assert!(crate::replies::waits_on_waiter(&l, &awaited, "engineer").is_none());
    let l = ask_back(&l, T0 + MIN);
    let awaited = l.clarifications[0].clone();
    let back = crate::replies::waits_on_waiter(&l, &awaited, "engineer").unwrap();
    assert_eq!(back.id, "CLR-42-002");
    assert!(crate::replies::waits_on_waiter(&l, &awaited, "architect").is_none());
    // The architect, waiting on its question back, is not woken by the question it asked
    // back about.
    let reply = l.clarifications[1].clone();
    assert!(crate::replies::waits_on_waiter(&l, &reply, "architect").is_none());
}
