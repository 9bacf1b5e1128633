//! Property tests: random operation sequences, driven by a simulated clock, keep the
//! invariants — round ≤ maxRounds, terminal stays terminal, snapshot == fold (verify is
//! clean), the hash chain verifies, a JSON round trip is the identity, nothing panics — and
//! after a monitor run no blocking wait-for cycle remains and a second run changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use agentx_clarify_core::agents::{apply_events, set_status, Statuses};
use agentx_clarify_core::kinds::fingerprint;
use agentx_clarify_core::monitor::{find_cycle_breaks, may_act, monitor_ledger, WaitEdge};
use agentx_clarify_core::verify::verify_ledger;
use agentx_clarify_core::{act, request, Action, Config, Ledger, NewRequest, Status, Workflows};
use proptest::prelude::*;

const AGENTS: [&str; 5] = [
    "product-manager",
    "architect",
    "engineer",
    "reviewer",
    "human",
];
const TEXTS: [&str; 6] = [
    "Which cache do we use",
    "which cache do we use?",
    "Redis, see ADR-7",
    "café au lait",
    "Is export in scope for v1",
    "🦀 naïve résumé",
];
const T0: i64 = 1_795_341_600_000;

fn workflows() -> Workflows {
    let mut w = Workflows::new();
    let mut text = String::new();
    for (i, a) in AGENTS.iter().take(4).enumerate() {
        text.push_str(&format!(
            "[[steps]]\nid = \"s{i}\"\nagent = \"{a}\"\ncan_clarify = [\"product-manager\", \"architect\", \"engineer\", \"reviewer\"]\nclarify_sla_minutes = {}\n{}",
            10 + i * 7,
            if i == 3 { "clarify_max_rounds = 2\n" } else { "" }
        ));
    }
    w.insert_text("feature", &text);
    w
}

#[derive(Clone, Debug)]
enum Step {
    Request {
        from: usize,
        to: usize,
        blocking: bool,
        topic: usize,
        /// `askAgain` (docs/protocol.md §22): asked even when the issue holds the question.
        again: bool,
    },
    Answer {
        record: usize,
        actor: usize,
        text: usize,
    },
    FollowUp {
        record: usize,
        actor: usize,
        text: usize,
    },
    Resolve {
        record: usize,
        actor: Option<usize>,
    },
    Escalate {
        record: usize,
        actor: Option<usize>,
    },
    Abandon {
        record: usize,
        actor: Option<usize>,
    },
    Monitor,
    /// Time passes (minutes); negative values model a skewed clock on another machine.
    Tick(i64),
}

fn step() -> impl Strategy<Value = Step> {
    let a = 0..AGENTS.len();
    let t = 0..TEXTS.len();
    let r = 0..8usize;
    prop_oneof![
        3 => (a.clone(), a.clone(), any::<bool>(), t.clone(), proptest::bool::weighted(0.1)).prop_map(|(from, to, blocking, topic, again)| Step::Request { from, to, blocking, topic, again }),
        3 => (r.clone(), a.clone(), t.clone()).prop_map(|(record, actor, text)| Step::Answer { record, actor, text }),
        2 => (r.clone(), a.clone(), t.clone()).prop_map(|(record, actor, text)| Step::FollowUp { record, actor, text }),
        1 => (r.clone(), proptest::option::of(a.clone())).prop_map(|(record, actor)| Step::Resolve { record, actor }),
        1 => (r.clone(), proptest::option::of(a.clone())).prop_map(|(record, actor)| Step::Escalate { record, actor }),
        1 => (r.clone(), proptest::option::of(a.clone())).prop_map(|(record, actor)| Step::Abandon { record, actor }),
        1 => Just(Step::Monitor),
        2 => (-5i64..90).prop_map(Step::Tick),
    ]
}

fn id_of(ledger: &Ledger, record: usize) -> String {
    ledger
        .clarifications
        .get(record % ledger.clarifications.len().max(1))
        .map_or_else(|| String::from("CLR-42-001"), |r| r.id.clone())
}

fn check_invariants(before: &Ledger, after: &Ledger) {
    for r in &after.clarifications {
        assert!(
            r.round <= r.max_rounds,
            "{}: round {} > max {}",
            r.id,
            r.round,
            r.max_rounds
        );
    }
    for old in &before.clarifications {
        if old.status.is_terminal() {
            let new = after.find(&old.id).expect("records are never removed");
            // A re-ask answered from it notes its trace (docs/protocol.md §22); nothing else may change.
            let untraced = agentx_clarify_core::Record {
                reuses: old.reuses.clone(),
                ..new.clone()
            };
            assert_eq!(&untraced, old, "terminal record {} changed", old.id);
            assert!(new.reuses.count >= old.reuses.count);
        }
        let new = after.find(&old.id).expect("records are never removed");
        assert!(
            new.thread.starts_with(&old.thread),
            "{}: history was rewritten",
            old.id
        );
    }
    let problems = verify_ledger(&format!("issue-{}.json", after.issue_number), after);
    assert!(problems.is_empty(), "verify: {problems:?}");
    let text = after.to_pretty_json();
    let again = Ledger::parse("issue-42.json", text.as_bytes(), None).expect("own output parses");
    assert_eq!(&again, after, "JSON round trip is the identity");
}

/// Never asked twice (docs/protocol.md §22): per fingerprint at most one record that is not abandoned,
/// unless a request with that fingerprint said askAgain.
fn one_record_per_question(ledger: &Ledger, asked_again: &std::collections::HashSet<String>) {
    let mut seen = std::collections::HashMap::new();
    for r in &ledger.clarifications {
        let f = r
            .fingerprint
            .clone()
            .expect("every new record has a fingerprint");
        if r.current_status() != Status::Abandoned && !asked_again.contains(&f) {
            if let Some(first) = seen.insert(f, r.id.clone()) {
                panic!("{first} and {} hold one question", r.id);
            }
        }
    }
}

fn cycles_left(ledger: &Ledger) -> usize {
    let mut names: Vec<&str> = Vec::new();
    let mut node = |n: &str| -> usize {
        match names.iter().position(|x| *x == n) {
            Some(i) => i,
            None => {
                names.push(Box::leak(n.to_owned().into_boxed_str()));
                names.len() - 1
            }
        }
    };
    let edges: Vec<WaitEdge> = ledger
        .clarifications
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.blocking && matches!(r.current_status(), Status::Pending | Status::Stale)
        })
        .map(|(i, r)| WaitEdge {
            from: node(&r.from),
            to: node(&r.to),
            record: i,
        })
        .collect();
    find_cycle_breaks(AGENTS.len(), &edges, |h| h[0]).len()
}

/// Every agent `done` since `at`: the statuses under which abandonment acts most.
fn everyone_done(at: i64) -> Statuses {
    let mut statuses = Statuses::new();
    for agent in AGENTS {
        set_status(&mut statuses, agent, "done", None, at).expect("a valid status");
    }
    statuses
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_the_invariants(steps in proptest::collection::vec(step(), 1..60)) {
        let config = Config::default();
        let workflows = workflows();
        let mut ledger = Ledger::new(42);
        let mut statuses = Statuses::new();
        let mut now = T0;
        // Fingerprints some request asked with askAgain: only they may have two open records.
        let mut asked_again = std::collections::HashSet::new();
        for s in steps {
            let before = ledger.clone();
            let result = match s {
                Step::Tick(minutes) => { now = (now + minutes * 60_000).max(0); continue; }
                Step::Monitor => {
                    if !may_act(&ledger) {
                        // The index of active records (docs/protocol.md §19) skips such a ledger: no pass
                        // may change it, however late and whoever has moved on.
                        let (later, moved) = (now + 30 * 24 * 3_600_000, everyone_done(now + 1));
                        let out = monitor_ledger(ledger.clone(), &moved, &config, later);
                        prop_assert!(!out.changed && out.events.is_empty() && out.report.is_quiet(), "a ledger without active records changed: {:?}", out.report);
                    }
                    let out = monitor_ledger(ledger.clone(), &statuses, &config, now);
                    apply_events(&mut statuses, &out.events);
                    assert_eq!(cycles_left(&out.ledger), 0, "a wait-for cycle survived the monitor");
                    let again = monitor_ledger(out.ledger.clone(), &statuses, &config, now);
                    assert!(!again.changed, "a second monitor run at the same now changed something");
                    check_invariants(&before, &out.ledger);
                    ledger = out.ledger;
                    continue;
                }
                Step::Request { from, to, blocking, topic, again } => {
                    let req = NewRequest {
                        issue_number: 42, from: AGENTS[from].into(), to: AGENTS[to].into(),
                        topic: TEXTS[topic].into(), question: TEXTS[(topic + 1) % TEXTS.len()].into(),
                        blocking, ask_again: again, ..NewRequest::default()
                    };
                    if again {
                        asked_again.insert(fingerprint(42, &req.to, None, &req.question));
                    }
                    request(Some(&ledger), &req, &config, &workflows, now)
                }
                Step::Answer { record, actor, text } => act(&ledger, &id_of(&ledger, record), &Action::Answer { from: AGENTS[actor].into(), body: TEXTS[text].into() }, &config, now),
                Step::FollowUp { record, actor, text } => act(&ledger, &id_of(&ledger, record), &Action::FollowUp { from: AGENTS[actor].into(), question: TEXTS[text].into() }, &config, now),
                Step::Resolve { record, actor } => act(&ledger, &id_of(&ledger, record), &Action::Resolve { from: actor.map(|a| AGENTS[a].into()), message: None }, &config, now),
                Step::Escalate { record, actor } => act(&ledger, &id_of(&ledger, record), &Action::Escalate { from: actor.map(|a| AGENTS[a].into()), message: None }, &config, now),
                Step::Abandon { record, actor } => act(&ledger, &id_of(&ledger, record), &Action::Abandon { from: actor.map(|a| AGENTS[a].into()), message: None }, &config, now),
            };
            match result {
                Ok(applied) => {
                    if applied.error.is_some() {
                        prop_assert_eq!(applied.error.as_ref().map(|e| e.code()), Some("MAX_ROUNDS_EXCEEDED"));
                        prop_assert_eq!(applied.ledger.find(&applied.id).map(|r| r.status), Some(Status::Escalated));
                    }
                    apply_events(&mut statuses, &applied.events);
                    check_invariants(&before, &applied.ledger);
                    one_record_per_question(&applied.ledger, &asked_again);
                    ledger = applied.ledger;
                }
                Err(e) => {
                    // A refusal is the caller's input or policy, never a bug or a storage failure.
                    use agentx_clarify_core::error::ErrorClass;
                    prop_assert!(
                        matches!(e.class(), ErrorClass::Input | ErrorClass::Policy | ErrorClass::NotFound | ErrorClass::Transition),
                        "unexpected failure {}: {e}", e.code()
                    );
                }
            }
        }
    }

    /// docs/protocol.md §28: only an agent's own report (`hook`/`state`) after a question can abandon it.
    /// Statuses that reported before the first question (leftover `done`, `working` on other
    /// issues) or never reported at all (AgentX's files), then any sequence of clarification
    /// operations and monitor runs, never abandon a record.
    #[test]
    fn clarification_operations_alone_never_abandon(
        steps in proptest::collection::vec(step(), 1..60),
        reported in proptest::collection::vec((0..3usize, any::<bool>()), AGENTS.len()),
    ) {
        let config = Config::default();
        let workflows = workflows();
        let mut ledger = Ledger::new(42);
        let mut statuses = Statuses::new();
        for (agent, (shape, with_report)) in AGENTS.iter().zip(&reported) {
            let (status, issue) = [("done", Some(42)), ("working", Some(7)), ("done", None)][*shape];
            // Before any question: ticks go back at most 5 minutes × 60 steps.
            set_status(&mut statuses, agent, status, issue, T0 - 6 * 3_600_000).expect("a valid status");
            if !with_report {
                // As AgentX writes it: a status and a lastActivity, no report time.
                if let Some(slot) = statuses.get_mut(*agent) { slot.reported_at = None; }
            }
        }
        let mut now = T0;
        for s in steps {
            let result = match s {
                Step::Tick(minutes) => { now = (now + minutes * 60_000).max(0); continue; }
                Step::Monitor => {
                    let out = monitor_ledger(ledger.clone(), &statuses, &config, now);
                    prop_assert!(out.report.abandoned.is_empty(), "abandoned by the monitor: {:?}", out.report.abandoned);
                    apply_events(&mut statuses, &out.events);
                    ledger = out.ledger;
                    continue;
                }
                // Abandoning by hand is an abandonment on purpose, not the monitor's.
                Step::Abandon { .. } => continue,
                Step::Request { from, to, blocking, topic, .. } => {
                    let req = NewRequest {
                        issue_number: 42, from: AGENTS[from].into(), to: AGENTS[to].into(),
                        topic: TEXTS[topic].into(), question: TEXTS[(topic + 1) % TEXTS.len()].into(),
                        blocking, ..NewRequest::default()
                    };
                    request(Some(&ledger), &req, &config, &workflows, now)
                }
                Step::Answer { record, actor, text } => act(&ledger, &id_of(&ledger, record), &Action::Answer { from: AGENTS[actor].into(), body: TEXTS[text].into() }, &config, now),
                Step::FollowUp { record, actor, text } => act(&ledger, &id_of(&ledger, record), &Action::FollowUp { from: AGENTS[actor].into(), question: TEXTS[text].into() }, &config, now),
                Step::Resolve { record, actor } => act(&ledger, &id_of(&ledger, record), &Action::Resolve { from: actor.map(|a| AGENTS[a].into()), message: None }, &config, now),
                Step::Escalate { record, actor } => act(&ledger, &id_of(&ledger, record), &Action::Escalate { from: actor.map(|a| AGENTS[a].into()), message: Some(String::from("a decision")) }, &config, now),
            };
            if let Ok(applied) = result {
                apply_events(&mut statuses, &applied.events);
                ledger = applied.ledger;
            }
            // The follow-up monitor of every command, as the shells run it.
            let out = monitor_ledger(ledger.clone(), &statuses, &config, now);
            prop_assert!(out.report.abandoned.is_empty(), "abandoned after a clarification operation: {:?}", out.report.abandoned);
            apply_events(&mut statuses, &out.events);
            ledger = out.ledger;
        }
        prop_assert!(ledger.clarifications.iter().all(|r| r.current_status() != Status::Abandoned));
    }

    #[test]
    fn arbitrary_json_never_panics(text in ".{0,400}") {
        let _ = Ledger::parse("issue-1.json", text.as_bytes(), Some(1));
        let _ = agentx_clarify_core::api::call("request", &serde_json::Value::String(text.clone()));
    }

    #[test]
    fn arbitrary_toml_never_panics(text in "[\\[\\]a-z_= \"0-9\n.,#-]{0,300}") {
        let _ = agentx_clarify_core::Workflow::parse("w.toml", &text);
        let _ = Config::parse("config.toml", &text);
    }
}
