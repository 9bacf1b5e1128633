//! Golden tests: the exact output of every view, in markdown, plain text and colour.

use serde_json::json;

use super::*;
use crate::ledger::Ledger;
use crate::monitor::{DeadlockReport, EscalatedReport, Report, ReportError};

fn fixture() -> Ledger {
    let v = json!({"issueNumber": 42, "workflow": "feature", "clarifications": [{
        "id": "CLR-42-001", "from": "engineer", "to": "architect", "topic": "Cache *layer*",
        "blocking": true, "status": "escalated", "round": 2, "maxRounds": 2, "slaMinutes": 60,
        "blockedOperations": ["planner", "build"],
        "created": "2026-11-22T10:00:00.000Z", "staleAfter": "2026-11-22T11:06:00.000Z",
        "retries": 0, "resolvedAt": null,
        "thread": [
            {"round": 1, "from": "engineer", "type": "question", "body": "Redis or in-process?\n# not a heading", "timestamp": "2026-11-22T10:00:00.000Z"},
            {"round": 1, "from": "architect", "type": "answer", "body": "Redis, see ADR-7.", "timestamp": "2026-11-22T10:04:10.000Z"},
            {"round": 2, "from": "engineer", "type": "question", "body": "Which eviction policy?", "timestamp": "2026-11-22T10:06:00.000Z"},
            {"round": 2, "from": "architect", "type": "answer", "body": "LRU \u{1b}[31m", "timestamp": "2026-11-22T10:09:00.000Z"},
            {"round": 2, "from": "agent-x", "type": "escalation", "body": "max rounds reached (2 of 2)", "timestamp": "2026-11-22T10:10:00.000Z"}
        ]
    }, {
        "id": "CLR-42-002", "from": "engineer", "to": "product-manager", "topic": "Scope | limits",
        "blocking": false, "status": "pending", "round": 1, "maxRounds": 6, "slaMinutes": 30,
        "created": "2026-11-22T10:20:00.000Z", "staleAfter": "2026-11-22T10:51:00.000Z",
        "retries": 1, "resolvedAt": null,
        "thread": [
            {"round": 1, "from": "engineer", "type": "question", "body": "Is export in scope?", "timestamp": "2026-11-22T10:20:00.000Z"},
            {"round": 1, "from": "monitor", "type": "stale", "body": "SLA expired", "timestamp": "2026-11-22T10:51:00.000Z"},
            {"round": 1, "from": "monitor", "type": "retry", "body": "retry 1 of 1", "timestamp": "2026-11-22T10:51:00.000Z"}
        ]
    }]});
    let mut l = Ledger::from_value("issue-42.json", &v, None).unwrap();
    l.seal();
    l
}

fn report() -> Report {
    Report {
        stale: vec!["CLR-42-002".into()],
        retried: vec!["CLR-42-002".into()],
        escalated: vec![EscalatedReport { id: "CLR-7-002".into(), reason: "deadlock: CLR-7-001, CLR-7-002 between architect, engineer; engineer yields to a human, architect continues".into() }],
        stuck: vec![],
        deadlocks: vec![DeadlockReport { cycle: vec!["CLR-7-001".into(), "CLR-7-002".into()], agents: vec!["architect".into(), "engineer".into()], escalated: "CLR-7-002".into() }],
        abandoned: vec![],
        timed_out: vec![],
        lapsed: vec![],
        errors: vec![ReportError { file: "issue-9.json".into(), code: "LEDGER_CORRUPT".into(), message: "ledger issue-9.json is corrupt: expected value at line 1 column 1".into() }],
    }
}

fn check(name: &str, actual: &str, golden: &str) {
    assert_eq!(
        actual,
        golden.trim_end_matches('\n'),
        "golden {name} differs; actual:\n{actual}"
    );
}

#[test]
fn markdown_thread_golden() {
    let l = fixture();
    check(
        "thread.md",
        &markdown_thread(42, &l.clarifications[0]),
        include_str!("golden/thread.md"),
    );
}

#[test]
fn markdown_round_golden() {
    let l = fixture();
    check(
        "round.md",
        &markdown_round(&l.clarifications[0], 1),
        include_str!("golden/round.md"),
    );
}

#[test]
fn markdown_escalation_golden() {
    let l = fixture();
    check(
        "escalation.md",
        &markdown_escalation(42, &l.clarifications[0]),
        include_str!("golden/escalation.md"),
    );
}

#[test]
fn markdown_list_golden() {
    let l = fixture();
    let records: Vec<(u32, &crate::Record)> = l.clarifications.iter().map(|r| (42, r)).collect();
    check(
        "list.md",
        &markdown_list(&records),
        include_str!("golden/list.md"),
    );
    assert_eq!(markdown_list(&[]), "No open clarifications.");
}

#[test]
fn markdown_report_golden() {
    check(
        "report.md",
        &markdown_report(&report()),
        include_str!("golden/report.md"),
    );
    assert_eq!(
        markdown_report(&Report::default()),
        "**Monitor report:** 0 stale, 0 retried, 0 escalated, 0 stuck, 0 deadlocks, 0 abandoned\n\nNothing is stale, stuck, deadlocked or abandoned."
    );
}

#[test]
fn text_goldens() {
    let l = fixture();
    let plain = Style { color: false };
    check(
        "thread.txt",
        &text_thread(42, &l.clarifications[0], plain),
        include_str!("golden/thread.txt"),
    );
    check(
        "round.txt",
        &text_round(42, &l.clarifications[1], 1, plain),
        include_str!("golden/round.txt"),
    );
    check(
        "escalation.txt",
        &text_escalation(42, &l.clarifications[0], plain),
        include_str!("golden/escalation.txt"),
    );
    let records: Vec<(u32, &crate::Record)> = l.clarifications.iter().map(|r| (42, r)).collect();
    check(
        "list.txt",
        &text_list(&records, plain),
        include_str!("golden/list.txt"),
    );
    check(
        "report.txt",
        &text_report(&report(), plain),
        include_str!("golden/report.txt"),
    );
}

#[test]
fn colour_goldens() {
    let l = fixture();
    let records: Vec<(u32, &crate::Record)> = l.clarifications.iter().map(|r| (42, r)).collect();
    let colour = Style { color: true };
    check(
        "list.ansi",
        &text_list(&records, colour),
        include_str!("golden/list.ansi"),
    );
    let plain = text_list(&records, Style { color: false });
    let stripped = text_list(&records, colour)
        .replace("\u{1b}[0m", "")
        .replace("\u{1b}[1m", "")
        .replace("\u{1b}[2m", "")
        .replace("\u{1b}[33m", "")
        .replace("\u{1b}[35m", "");
    assert_eq!(stripped, plain, "colour only adds SGR codes");
}

#[test]
fn hostile_text_stays_inside() {
    let l = fixture();
    let md = markdown_thread(42, &l.clarifications[0]);
    assert!(
        !md.contains("\n# not a heading"),
        "a body cannot open a heading"
    );
    let txt = text_thread(42, &l.clarifications[0], Style { color: false });
    assert!(
        !txt.contains('\u{1b}'),
        "a body cannot inject escape sequences"
    );
}

#[test]
fn severity_badges_and_blocked_operations() {
    let mut l = fixture();
    let colour = Style { color: true };
    // Absent severity follows `blocking`; the badge is coloured by severity.
    assert!(text_thread(42, &l.clarifications[0], colour).contains("\u{1b}[31m[BLOCK]\u{1b}[0m"));
    assert!(text_thread(42, &l.clarifications[1], colour).contains("\u{1b}[33m[WARN]\u{1b}[0m"));
    assert!(!text_thread(42, &l.clarifications[1], colour).contains("blocks:"));
    // A hand-edited ledger cannot break out of the code span or the line.
    l.clarifications[1].blocked_operations = vec!["a`b\n# x".into()];
    let md = markdown_round(&l.clarifications[1], 1);
    assert!(md.contains("| **WARN** | blocks: `ab# x`"), "{md}");
    let txt = text_thread(42, &l.clarifications[1], Style { color: false });
    assert!(txt.contains("  blocks: a`b # x\n"), "{txt}");
    assert!(!txt.contains("\n# x"), "{txt}");
}
