use serde_json::json;

use super::*;
use crate::config::Config;
use crate::testkit::{MIN, T0};

const RESEARCH: &str = "version = \"1\"\nrole = \"research\"\nexclusions = [\"content.script\"]\ncapabilities = [{name = \"research.context\", confidence = 0.9}]\n";

fn manifests() -> Manifests {
    let mut m = Manifests::new();
    m.insert_text("research-agent", "research-agent.toml", RESEARCH);
    m.insert_text("broken", "broken.toml", "version = ");
    m
}

fn new(to: &str, capability: Option<&str>) -> NewDelegation {
    NewDelegation {
        issue_number: 42,
        from: String::from("script-agent"),
        to: to.to_owned(),
        capability: capability.map(str::to_owned),
        objective: String::from("Expand depth on emerging API changes for Feature X"),
        context_slice: json!({"known_gaps": ["recent deprecations"]})
            .as_object()
            .cloned()
            .unwrap(),
        output_contract: json!({"expected_sections": ["Sources"]})
            .as_object()
            .cloned()
            .unwrap(),
        timeout_minutes: Some(15),
        ..NewDelegation::default()
    }
}

fn ask(ledger: Option<&DelegationLedger>, req: &NewDelegation, now: i64) -> Applied {
    request(ledger, req, &manifests(), &Config::default(), now).unwrap()
}

#[test]
fn a_request_is_an_envelope_with_a_hashed_thread() {
    let a = ask(
        None,
        &new("research-agent", Some("research.context.deepen")),
        T0,
    );
    assert_eq!((a.id.as_str(), a.status), ("DLG-42-001", Status::Requested));
    let d = a.ledger.find("DLG-42-001").unwrap();
    assert_eq!(d.created_at.as_ref().unwrap().ms(), T0);
    assert_eq!(d.chain_state(), ChainState::Intact);
    assert!(d.problems().is_empty(), "{:?}", d.problems());
    assert_eq!(d.thread[0].extra["to"], "research-agent");
    assert_eq!(d.thread[0].extra["timeoutMinutes"], 15);
    let e = serde_json::to_value(&a.events[0]).unwrap();
    assert_eq!(e["type"], "delegation-requested");
    assert_eq!(e["delegationId"], "DLG-42-001");
    assert_eq!(e["status"], "REQUESTED");
    let b = ask(Some(&a.ledger), &new("writer", None), T0 + MIN);
    assert_eq!(b.id, "DLG-42-002");
}

#[test]
fn a_target_without_the_capability_rejects_it_at_once() {
    let a = ask(
        None,
        &new("research-agent", Some("qa.verification.multi-claim")),
        T0,
    );
    assert_eq!(a.status, Status::RejectedCapability);
    let d = a.ledger.find(&a.id).unwrap();
    assert_eq!(d.thread[1].from, "agent-x");
    assert_eq!(
        d.thread[1].body,
        "the manifest of 'research-agent' does not list qa.verification.multi-claim"
    );
    assert_eq!(a.events.len(), 2);
    assert_eq!(
        a.events[1].reason.as_deref(),
        Some(d.thread[1].body.as_str())
    );
    let a = ask(
        None,
        &new("research-agent", Some("content.script.drafting")),
        T0,
    );
    assert_eq!(a.status, Status::RejectedCapability);
    assert_eq!(
        a.ledger.delegations[0].thread[1].body,
        "'research-agent' excludes content.script, which covers content.script.drafting"
    );
    // No manifest: not checked. No capability: nothing to check. A broken one: its error.
    assert_eq!(
        ask(None, &new("nobody", Some("x.y")), T0).status,
        Status::Requested
    );
    assert_eq!(
        ask(None, &new("research-agent", None), T0).status,
        Status::Requested
    );
    let e = request(
        None,
        &new("broken", Some("x.y")),
        &manifests(),
        &Config::default(),
        T0,
    )
    .unwrap_err();
    assert_eq!(e.code(), "CONFIG_INVALID");
}

#[test]
fn bad_requests_are_refused_before_anything_is_written() {
    let config = Config::default();
    let cases: [(NewDelegation, &str, &str); 6] = [
        (
            new("script-agent", None),
            "INVALID_INPUT",
            "agent 'script-agent' cannot delegate to itself",
        ),
        (
            new("human", None),
            "INVALID_AGENT",
            "cannot be delegated to",
        ),
        (
            new("Bad", None),
            "INVALID_AGENT",
            "invalid agent name 'Bad'",
        ),
        (
            new("b", Some("research")),
            "INVALID_INPUT",
            "capability 'research' has one segment",
        ),
        (
            NewDelegation {
                timeout_minutes: Some(0),
                ..new("b", None)
            },
            "INVALID_INPUT",
            "timeoutMinutes must be from 1 to 10080, found 0",
        ),
        (
            NewDelegation {
                objective: String::from("  "),
                ..new("b", None)
            },
            "TEXT_EMPTY",
            "objective is empty",
        ),
    ];
    for (req, code, text) in cases {
        let e = request(None, &req, &manifests(), &config, T0).unwrap_err();
        assert_eq!(e.code(), code, "{e}");
        assert!(e.to_string().contains(text), "{e}");
    }
    let e = request(None, &new("b", None), &manifests(), &config, -1).unwrap_err();
    assert_eq!(e.code(), "INVALID_INPUT");
}

#[test]
fn the_same_signal_key_returns_the_same_envelope() {
    let req = NewDelegation {
        signal_key: Some(String::from("k1")),
        ..new("writer", None)
    };
    let a = ask(None, &req, T0);
    let again = ask(Some(&a.ledger), &req, T0 + MIN);
    assert!(again.idempotent);
    assert_eq!(again.id, a.id);
    assert_eq!(again.ledger, a.ledger);
    assert!(again.events.is_empty());
}

#[test]
fn accept_complete_and_what_each_status_allows() {
    let config = Config::default();
    let a = ask(None, &new("writer", None), T0);
    let e = act(
        &a.ledger,
        "DLG-42-001",
        &Action::accept("someone"),
        &config,
        T0,
    )
    .unwrap_err();
    assert_eq!(e.code(), "NOT_PARTICIPANT");
    assert_eq!(
        e.to_string(),
        "agent 'someone' cannot accept DLG-42-001: only the target 'writer' or 'human' may"
    );
    let b = act(
        &a.ledger,
        "DLG-42-001",
        &Action::accept("writer"),
        &config,
        T0 + MIN,
    )
    .unwrap();
    assert_eq!(b.status, Status::Accepted);
    let d = b.ledger.find("DLG-42-001").unwrap();
    assert_eq!(d.deadline.as_ref().unwrap().ms(), T0 + 16 * MIN);
    let e = act(
        &b.ledger,
        "DLG-42-001",
        &Action::accept("writer"),
        &config,
        T0,
    )
    .unwrap_err();
    assert_eq!(e.code(), "INVALID_TRANSITION");
    assert_eq!(
        e.to_string(),
        "cannot accept DLG-42-001: it is ACCEPTED; allowed: complete, reject (capability), reject (context), fail, time out"
    );
    let response = Response {
        artifact_path: Some(String::from("working/research/depth.md")),
        summary: String::from("Depth expansion complete: 7 sources, 1 pending."),
        metrics: json!({"sources": 7}).as_object().cloned().unwrap(),
        follow_up_recommended: vec![String::from("qa.verification.multi-claim")],
        unresolved: vec![String::from("Benchmark variance between v1.3 and v1.4")],
        extra: Map::new(),
    };
    // Clock skew: `now` before the last entry is clamped to it.
    let c = act(
        &b.ledger,
        "DLG-42-001",
        &Action::complete("writer", response.clone()),
        &config,
        T0,
    )
    .unwrap();
    let d = c.ledger.find("DLG-42-001").unwrap();
    assert_eq!(d.status, Status::Completed);
    assert_eq!(d.finished_at.as_ref().unwrap().ms(), T0 + MIN);
    assert_eq!(d.response.as_ref(), Some(&response));
    assert_eq!(d.thread[2].body, response.summary);
    assert_eq!(d.chain_state(), ChainState::Intact);
    let e = act(
        &c.ledger,
        "DLG-42-001",
        &Action::fail("writer", None),
        &config,
        T0,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .ends_with("allowed: none (the delegation is closed)"),
        "{e}"
    );
    // Errors in the order input → not found → transition.
    for (id, code) in [
        ("CLR-42-001", "INVALID_ID"),
        ("DLG-42-009", "NOT_FOUND"),
        ("DLG-7-001", "NOT_FOUND"),
    ] {
        let e = act(&a.ledger, id, &Action::accept("writer"), &config, T0).unwrap_err();
        assert_eq!(e.code(), code, "{id}");
    }
    // A human may close a delegation; a reject names why.
    let r = act(
        &a.ledger,
        "DLG-42-001",
        &Action::reject("human", false, None),
        &config,
        T0,
    )
    .unwrap();
    assert_eq!(r.status, Status::RejectedContext);
    assert_eq!(
        r.events[0].reason.as_deref(),
        Some("rejected by human: missing critical context")
    );
    let f = act(
        &a.ledger,
        "DLG-42-001",
        &Action::fail("writer", Some(String::from("tool crashed"))),
        &config,
        T0,
    )
    .unwrap();
    assert_eq!(f.status, Status::FailedExecution);
    // Only the monitor times out.
    let t = Action {
        op: Op::Timeout,
        ..Action::accept("writer")
    };
    let e = act(&b.ledger, "DLG-42-001", &t, &config, T0).unwrap_err();
    assert_eq!(e.code(), "NOT_PARTICIPANT");
}

#[test]
fn the_monitor_times_out_accepted_delegations_past_their_deadline() {
    let config = Config::default();
    let a = ask(None, &new("writer", None), T0);
    let a = ask(Some(&a.ledger), &new("other", None), T0);
    assert_eq!(
        timeouts(&a.ledger, T0 + 100 * MIN),
        None,
        "requested ones never time out"
    );
    assert_eq!(next_wakeup(&a.ledger), None);
    let b = act(
        &a.ledger,
        "DLG-42-001",
        &Action::accept("writer"),
        &config,
        T0,
    )
    .unwrap();
    assert_eq!(next_wakeup(&b.ledger), Some(T0 + 15 * MIN));
    assert_eq!(timeouts(&b.ledger, T0 + 15 * MIN - 1), None);
    let t = timeouts(&b.ledger, T0 + 15 * MIN).unwrap();
    assert_eq!(t.ids, ["DLG-42-001"]);
    let d = t.ledger.find("DLG-42-001").unwrap();
    assert_eq!(d.status, Status::Timeout);
    assert_eq!(d.thread.last().unwrap().from, "monitor");
    assert!(d
        .thread
        .last()
        .unwrap()
        .body
        .starts_with("deadline 2026-11-22T10:15:00.000Z passed"));
    assert_eq!(t.events[0].kind, EventType::Timeout);
    assert_eq!(
        t.ledger.find("DLG-42-002").unwrap().status,
        Status::Requested
    );
    assert_eq!(next_wakeup(&t.ledger), None);
    assert_eq!(d.round_trip_sec(), Some(900.0));
}

#[test]
fn the_file_round_trips_with_unknown_fields_kept() {
    let config = Config::default();
    let a = ask(None, &new("writer", None), T0);
    let b = act(
        &a.ledger,
        "DLG-42-001",
        &Action::accept("writer"),
        &config,
        T0 + MIN,
    )
    .unwrap();
    let mut v = b.ledger.to_value();
    v["owner"] = json!("team-a");
    v["delegations"][0]["priority"] = json!(2);
    v["delegations"][0]["thread"][1]["note"] = json!("x");
    v["reports"] = json!([{"agent": "a", "status": "success", "timestamp": "2026-11-22T10:00:00Z", "extra": 1}]);
    let text = format!("\u{feff}{}", serde_json::to_string_pretty(&v).unwrap());
    let parsed = DelegationLedger::parse("issue-42.json", text.as_bytes(), Some(42)).unwrap();
    assert_eq!(parsed.extra["owner"], "team-a");
    assert_eq!(parsed.delegations[0].extra["priority"], 2);
    assert_eq!(parsed.reports[0].extra["extra"], 1);
    // The unknown entry field is covered by the hash: the chain now breaks at that entry.
    assert_eq!(parsed.delegations[0].chain_state(), ChainState::BrokenAt(1));
    let again = DelegationLedger::parse("f", parsed.to_pretty_json().as_bytes(), None).unwrap();
    assert_eq!(again, parsed);
    // Without edits, the bytes round-trip exactly.
    let text = b.ledger.to_pretty_json();
    let back = DelegationLedger::parse("f", text.as_bytes(), Some(42)).unwrap();
    assert_eq!(back.to_pretty_json(), text);
    assert!(back.delegations[0].problems().is_empty());
}

#[test]
fn corrupt_files_say_why() {
    let cases = [
        (r#"{"delegations": []}"#, "missing field `issue_number`"),
        (
            r#"{"issueNumber": 7, "delegations": []}"#,
            "issueNumber 7 does not match the file's issue 42",
        ),
        (
            r#"{"issueNumber": 42, "delegations": [{"id": "DLG-42-001", "from": "a", "to": "b", "objective": "o", "status": "DONE", "thread": []}]}"#,
            "unknown delegation status 'DONE'; allowed: REQUESTED, ACCEPTED",
        ),
        (
            r#"{"issueNumber": 42, "delegations": [{"id": "DLG-42-001", "from": "a", "to": "b", "status": "REQUESTED", "thread": []}]}"#,
            "missing field `objective`",
        ),
    ];
    let invalid_utf8: &[u8] = b"{\"issueNumber\": 42, \"x\": \"\xff\"}";
    for (bytes, want) in cases
        .iter()
        .map(|(t, w)| (t.as_bytes(), *w))
        .chain([(invalid_utf8, "not UTF-8")])
    {
        let e = DelegationLedger::parse("issue-42.json", bytes, Some(42)).unwrap_err();
        assert_eq!(e.code(), "LEDGER_CORRUPT");
        assert!(e.to_string().contains(want), "{e}");
    }
}

#[test]
fn tampering_is_found() {
    let a = ask(None, &new("writer", None), T0);
    let mut l = a.ledger.clone();
    l.delegations[0].objective = String::from("something else");
    assert_eq!(
        l.delegations[0].problems(),
        ["DLG-42-001: the envelope differs from its REQUESTED entry"]
    );
    let mut l = a.ledger.clone();
    l.delegations[0].thread[0].body = String::from("something else");
    let p = l.delegations[0].problems();
    assert_eq!(
        p[0],
        "DLG-42-001: the hash chain breaks at entry 0 (0-based)"
    );
    let mut l = a.ledger;
    l.delegations[0].status = Status::Completed;
    assert_eq!(
        l.delegations[0].problems(),
        ["DLG-42-001: stored status COMPLETED but the thread says REQUESTED"]
    );
}

/// Seed 003 §8.3's worked example: rejection 0.33, latency penalty 1.9 (clamped to 1 in the
/// score), clarification cycles 0.62 → a score of 0.62, above the 0.55 threshold.
#[test]
fn gap_score_reproduces_the_seed_example() {
    use crate::ops::{act as clarify, request as ask_clarification, Action as Clarify, NewRequest};
    use crate::workflow::Workflows;
    let config = Config::default();
    let clarification = "clarification.input.disambiguation";
    let research = "research.context.deepen";
    let mut manifests = Manifests::new();
    manifests.insert_text(
        "research-agent",
        "research-agent.toml",
        "version = \"1\"\nrole = \"research\"\ncapabilities = [{name = \"research.context\", confidence = 0.9}]\n",
    );
    let delegate = |l: Option<&DelegationLedger>,
                    issue: u64,
                    to: &str,
                    cap: &str,
                    at: i64,
                    took: Option<i64>| {
        let req = NewDelegation {
            issue_number: issue,
            from: String::from("script-agent"),
            to: to.to_owned(),
            capability: Some(cap.to_owned()),
            objective: String::from("work"),
            ..NewDelegation::default()
        };
        let a = request(l, &req, &manifests, &config, at).unwrap();
        let Some(took) = took else { return a.ledger };
        let b = act(&a.ledger, &a.id, &Action::accept(to), &config, at).unwrap();
        let response = Response {
            summary: String::from("done"),
            unresolved: if cap == research && at == T0 {
                vec![String::from("one open point")]
            } else {
                Vec::new()
            },
            ..Response::default()
        };
        act(
            &b.ledger,
            &a.id,
            &Action::complete(to, response),
            &config,
            at + took,
        )
        .unwrap()
        .ledger
    };
    // Issue 100: 21 delegations of the clarification capability: 7 to an agent whose manifest
    // lacks it (rejected at once), 14 completed by an agent without a manifest in 290 s.
    let mut l100: Option<DelegationLedger> = None;
    for i in 0..21 {
        let at = T0 + i * 1000 * 1000;
        l100 = Some(if i % 3 == 0 {
            delegate(
                l100.as_ref(),
                100,
                "research-agent",
                clarification,
                at,
                None,
            )
        } else {
            delegate(
                l100.as_ref(),
                100,
                "writer-agent",
                clarification,
                at,
                Some(290_000),
            )
        });
    }
    // Issue 200: 5 research delegations completed in 100 s (the rest of the team).
    let mut l200: Option<DelegationLedger> = None;
    for i in 0..5 {
        l200 = Some(delegate(
            l200.as_ref(),
            200,
            "research-agent",
            research,
            T0 + i * 1000 * 1000,
            Some(100_000),
        ));
    }
    // Issue 100 also needed 13 clarification rounds: records of 3, 3, 3, 2 and 2 rounds.
    let workflows = Workflows::defaults();
    let mut ledger = None;
    for (n, rounds) in [3, 3, 3, 2, 2].into_iter().enumerate() {
        let req = NewRequest {
            issue_number: 100,
            from: String::from("engineer"),
            to: String::from("architect"),
            topic: format!("Ambiguity {n}"),
            question: format!("Which one ({n})?"),
            blocking: true,
            ..NewRequest::default()
        };
        let mut l = ask_clarification(ledger.as_ref(), &req, &config, &workflows, T0).unwrap();
        for r in 1..=rounds {
            let answer = Clarify::Answer {
                from: String::from("architect"),
                body: format!("answer {r}"),
            };
            l = clarify(&l.ledger, &l.id, &answer, &config, T0).unwrap();
            if r < rounds {
                let follow = Clarify::FollowUp {
                    from: String::from("engineer"),
                    question: format!("and {r}?"),
                };
                l = clarify(&l.ledger, &l.id, &follow, &config, T0).unwrap();
            }
        }
        ledger = Some(l.ledger);
    }
    let ledgers = [ledger.unwrap()];
    let dls = [l100.unwrap(), l200.unwrap()];
    let m = metrics(&ledgers, &dls, &manifests, None);

    assert_eq!(m.total, 26);
    assert_eq!(m.count(Status::Completed), 19);
    assert_eq!(m.count(Status::RejectedCapability), 7);
    assert_eq!(m.delegation_success_rate, Some(19.0 / 26.0));
    assert_eq!(m.avg_round_trip_sec, Some(240.0)); // (14·290 + 5·100) / 19
    assert_eq!(m.clarification_rework_ratio, Some(0.5)); // 13 rounds / 26 delegations
    assert_eq!(m.unresolved_carryover, Some(1.0 / 19.0));
    assert_eq!(m.unresolved_items, 1);

    let gap = &m.gaps[0];
    assert_eq!(gap.capability, clarification);
    assert_eq!((gap.delegations, gap.rejected_capability), (21, 7));
    assert!((gap.rejection_rate - 1.0 / 3.0).abs() < 1e-12);
    assert!((gap.latency_penalty_ratio - 1.9).abs() < 1e-9);
    assert!((gap.clarification_cycles_ratio - 13.0 / 21.0).abs() < 1e-12);
    let expected = 0.4 / 3.0 + 0.3 * 1.0 + 0.3 * 13.0 / 21.0;
    assert!((gap.score - expected).abs() < 1e-12);
    assert!(gap.score >= GAP_THRESHOLD);
    let other = &m.gaps[1];
    assert_eq!(other.capability, research);
    assert_eq!(
        (
            other.latency_penalty_ratio,
            other.clarification_cycles_ratio,
            other.score
        ),
        (0.0, 0.0, 0.0)
    );

    let [s] = m.suggestions.as_slice() else {
        panic!("{:?}", m.suggestions)
    };
    let v = serde_json::to_value(s).unwrap();
    assert_eq!(
        v,
        json!({
            "suggestion_id": "gap-clarification-agent-2026-11-22-01",
            "proposed_agent": "clarification-agent",
            "capabilities": [clarification],
            "justification": {
                "rejection_rate": 0.33,
                "latency_penalty_ratio": 1.9,
                "clarification_cycles_ratio": 0.62,
                "score": 0.62
            },
            "impact_expectation": s.impact_expectation,
            "rfc_reference": null,
            "submitted_by": "script-agent"
        })
    );
    assert!(
        s.impact_expectation.contains("33% of its delegations"),
        "{}",
        s.impact_expectation
    );
    let text = m.text_lines().join("\n");
    assert!(text.contains("clarification.input.disambiguation: score 0.62 (rejection 0.33, latency 1.90, cycles 0.62)  ← gap"), "{text}");
    assert!(
        text.contains("suggestion gap-clarification-agent-2026-11-22-01: add clarification-agent"),
        "{text}"
    );

    // `since` leaves out what came before; no delegation at all, no metric.
    let later = metrics(&ledgers, &dls, &manifests, Some(T0 + 10 * 1000 * 1000));
    assert_eq!(later.total, 11);
    let none = metrics(&ledgers, &[], &manifests, None);
    assert_eq!(
        (none.total, none.delegation_success_rate, none.gaps.len()),
        (0, None, 0)
    );
}
