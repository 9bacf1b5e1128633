//! The monitor that follows a command reads only what is due or touched (SPEC §29), and the
//! follow-up passes, taken together, find exactly what full monitor passes find at the same
//! instants: two file workspaces run the same commands at the same instants — one with its
//! index (each follow-up reads the ledgers written, due, on a cycle, or asked by an agent
//! whose status may abandon them), one whose index is deleted before every command (each
//! follow-up then reads every ledger: a full pass) — and every command's output (its
//! follow-up's report and events included: stale, retried, escalated, stuck, deadlocks,
//! abandoned, timed out) and every ledger and status file afterwards are identical.

use std::path::Path;

use agentx_clarify_command::json::call;
use agentx_clarify_command::{run_monitor, Scope};
use agentx_clarify_core::Config;
use agentx_clarify_store::DiskStore;
use proptest::prelude::*;
use serde_json::{json, Value};

const T0: i64 = 1_795_341_600_000;
const MIN: i64 = 60_000;
const AGENTS: [&str; 3] = ["alpha", "bravo", "charlie"];
/// Few texts, so that repeated questions and answers (stuck) and flipped topics happen.
const TEXTS: [&str; 3] = [
    "Which cache should the sessions use?",
    "Which cache should the sessions use now?",
    "Is the export in scope?",
];

/// Everyone may ask everyone, blocking or not, with a 10-minute SLA.
fn workflow() -> String {
    AGENTS
        .iter()
        .map(|a| {
            let others: Vec<String> = AGENTS
                .iter()
                .filter(|o| *o != a)
                .map(|o| format!("\"{o}\""))
                .collect();
            format!(
                "[[steps]]\nid = \"{a}\"\nagent = \"{a}\"\ncan_clarify = [{}]\nclarify_max_rounds = 20\nclarify_sla_minutes = 10\n\n",
                others.join(", ")
            )
        })
        .collect()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join(".agentx/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(wf.join("feature.toml"), workflow()).unwrap();
    dir
}

#[derive(Clone, Debug)]
enum Step {
    Ask {
        issue: u32,
        from: usize,
        to: usize,
        text: usize,
        blocking: bool,
    },
    Answer {
        issue: u32,
        seq: u32,
        from: usize,
        text: usize,
    },
    FollowUp {
        issue: u32,
        seq: u32,
        from: usize,
        text: usize,
    },
    Resolve {
        issue: u32,
        seq: u32,
    },
    Hook {
        agent: usize,
        finish: bool,
        issue: Option<u32>,
    },
    Delegate {
        issue: u32,
        from: usize,
        to: usize,
    },
    Accept {
        issue: u32,
        seq: u32,
        agent: usize,
    },
}

/// The command of `step` as `(op, input)`.
fn command(step: &Step) -> (&'static str, Value) {
    let id = |issue: u32, seq: u32| format!("CLR-{issue}-{seq:03}");
    match step {
        Step::Ask {
            issue,
            from,
            to,
            text,
            blocking,
        } => (
            "ask",
            json!({"issueNumber": issue, "from": AGENTS[*from], "to": AGENTS[*to],
                   "topic": TEXTS[*text], "question": TEXTS[*text], "blocking": blocking}),
        ),
        Step::Answer {
            issue,
            seq,
            from,
            text,
        } => (
            "answer",
            json!({"id": id(*issue, *seq), "from": AGENTS[*from], "body": TEXTS[*text]}),
        ),
        Step::FollowUp {
            issue,
            seq,
            from,
            text,
        } => (
            "followUp",
            json!({"id": id(*issue, *seq), "from": AGENTS[*from], "question": TEXTS[*text]}),
        ),
        Step::Resolve { issue, seq } => ("resolve", json!({"id": id(*issue, *seq)})),
        Step::Hook {
            agent,
            finish,
            issue,
        } => (
            "hook",
            json!({"event": if *finish { "finish" } else { "start" }, "agent": AGENTS[*agent],
                   "issue": issue}),
        ),
        Step::Delegate { issue, from, to } => (
            "delegateRequest",
            json!({"issueNumber": issue, "from": AGENTS[*from], "to": AGENTS[*to],
                   "objective": "Benchmark the cache", "timeoutMinutes": 15}),
        ),
        Step::Accept { issue, seq, agent } => (
            "delegateAccept",
            json!({"id": format!("DLG-{issue}-{seq:03}"), "from": AGENTS[*agent]}),
        ),
    }
}

/// Every state file of a workspace (ledgers of both kinds, statuses), by path.
fn state(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["clarifications", "delegations"] {
        let d = root.join(".agentx/state").join(dir);
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                let name = e.file_name().into_string().unwrap();
                if name.ends_with(".json") {
                    out.push((format!("{dir}/{name}"), std::fs::read(e.path()).unwrap()));
                }
            }
        }
    }
    if let Ok(b) = std::fs::read(root.join(".agentx/state/agent-status.json")) {
        out.push(("agent-status.json".into(), b));
    }
    out.sort();
    out
}

/// What the follow-ups found, kind by kind, over a run.
#[derive(Debug, Default)]
struct Found {
    counts: std::collections::BTreeMap<&'static str, usize>,
}

impl Found {
    fn add(&mut self, out: &Value) {
        for report in [&out["monitor"], &out["monitor"]["report"]] {
            for kind in [
                "stale",
                "retried",
                "escalated",
                "stuck",
                "deadlocks",
                "abandoned",
                "timedOut",
            ] {
                if let Some(list) = report[kind].as_array() {
                    *self.counts.entry(kind).or_default() += list.len();
                }
            }
        }
    }
}

/// Runs `steps` (each `(minutes later, step)`) on both workspaces and holds them equal.
fn run_both(steps: &[(i64, Step)]) -> Found {
    let (indexed, full) = (workspace(), workspace());
    let (a, b) = (DiskStore::new(indexed.path()), DiskStore::new(full.path()));
    let mut now = T0;
    let mut found = Found::default();
    for (n, (later, step)) in steps.iter().enumerate() {
        now += later * MIN;
        let (op, input) = command(step);
        // The full side's follow-up has no index to trust: it reads every ledger.
        let _ = std::fs::remove_dir_all(full.path().join(".agentx/index"));
        let one = call(&a, op, &input, now);
        let two = call(&b, op, &input, now);
        assert_eq!(one, two, "step {n} {step:?} at +{} min", (now - T0) / MIN);
        found.add(&one);
        assert_eq!(
            state(indexed.path()),
            state(full.path()),
            "after step {n} {step:?}"
        );
    }
    // And nothing is left that a full monitor at the last instant would find.
    let _ = std::fs::remove_dir_all(full.path().join(".agentx/index"));
    let config = Config::default();
    let one = run_monitor(&a, &config, now, true, Scope::Monitor).unwrap();
    let two = run_monitor(&b, &config, now, true, Scope::Monitor).unwrap();
    assert_eq!(one.report, two.report);
    found
}

fn step() -> impl Strategy<Value = Step> {
    let issue = 1u32..=4;
    let agent = 0usize..3;
    let seq = 1u32..=4;
    let text = 0usize..3;
    prop_oneof![
        4 => (issue.clone(), agent.clone(), agent.clone(), text.clone(), any::<bool>())
            .prop_filter("another agent", |(_, f, t, _, _)| f != t)
            .prop_map(|(issue, from, to, text, blocking)| Step::Ask { issue, from, to, text, blocking }),
        3 => (issue.clone(), seq.clone(), agent.clone(), text.clone())
            .prop_map(|(issue, seq, from, text)| Step::Answer { issue, seq, from, text }),
        1 => (issue.clone(), seq.clone(), agent.clone(), text.clone())
            .prop_map(|(issue, seq, from, text)| Step::FollowUp { issue, seq, from, text }),
        1 => (issue.clone(), seq.clone()).prop_map(|(issue, seq)| Step::Resolve { issue, seq }),
        2 => (agent.clone(), any::<bool>(), proptest::option::of(issue.clone()))
            .prop_map(|(agent, finish, issue)| Step::Hook { agent, finish, issue }),
        1 => (issue.clone(), agent.clone(), agent.clone())
            .prop_filter("another agent", |(_, f, t)| f != t)
            .prop_map(|(issue, from, to)| Step::Delegate { issue, from, to }),
        1 => (issue, seq, agent).prop_map(|(issue, seq, agent)| Step::Accept { issue, seq, agent }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random workspaces grown by random commands at random instants (0 to 25 minutes apart,
    /// so SLAs of 10 minutes and deadlines of 15 pass between some of them).
    #[test]
    fn the_follow_ups_find_exactly_what_full_passes_find(
        steps in proptest::collection::vec((0i64..=25, step()), 1..40)
    ) {
        run_both(&steps);
    }
}

/// One run that gives every phase work, so the comparison above is not between two idle
/// monitors: a request goes stale, is retried, then escalated; a question repeated is stuck;
/// two blocking requests deadlock; an agent that finishes abandons its question; a delegation
/// times out.
#[test]
fn every_phase_finds_work_in_a_known_run() {
    let ask = |issue, from, to, text, blocking| Step::Ask {
        issue,
        from,
        to,
        text,
        blocking,
    };
    let steps = [
        // Issue 1: stale, retried, then escalated (max_retries 1), with quiet commands on
        // another issue in between, so only the due index leads the follow-ups there.
        (0, ask(1, 0, 1, 2, false)),
        (11, ask(2, 2, 1, 2, false)),
        (11, ask(3, 2, 0, 2, false)),
        // Issue 2: a follow-up question that repeats the first one: stuck.
        (0, ask(2, 0, 2, 0, false)),
        (
            1,
            Step::Answer {
                issue: 2,
                seq: 2,
                from: 2,
                text: 2,
            },
        ),
        (
            1,
            Step::FollowUp {
                issue: 2,
                seq: 2,
                from: 0,
                text: 1,
            },
        ),
        // Issue 4: alpha and bravo block on each other.
        (1, ask(4, 0, 1, 2, true)),
        (1, ask(4, 1, 0, 0, true)),
        // Bravo answered on issue 3 is asked by charlie; charlie moves on to issue 2.
        (
            1,
            Step::Answer {
                issue: 3,
                seq: 1,
                from: 0,
                text: 2,
            },
        ),
        (
            1,
            Step::Hook {
                agent: 2,
                finish: false,
                issue: Some(2),
            },
        ),
        // A delegation accepted, then past its 15-minute deadline.
        (
            1,
            Step::Delegate {
                issue: 3,
                from: 0,
                to: 1,
            },
        ),
        (
            1,
            Step::Accept {
                issue: 3,
                seq: 1,
                agent: 1,
            },
        ),
        (20, ask(1, 2, 1, 2, false)),
    ];
    let found = run_both(&steps);
    for kind in [
        "stale",
        "retried",
        "escalated",
        "stuck",
        "deadlocks",
        "abandoned",
        "timedOut",
    ] {
        assert!(
            found.counts.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} in {:?}",
            found.counts
        );
    }
}
