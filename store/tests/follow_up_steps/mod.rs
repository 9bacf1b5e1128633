//! The commands of the follow-up's property tests (shared by the file store's and
//! PostgreSQL's): three agents that may all ask each other, few texts, four issues.
#![allow(dead_code)]

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Value};

pub const T0: i64 = 1_795_341_600_000;
pub const MIN: i64 = 60_000;
pub const AGENTS: [&str; 3] = ["alpha", "bravo", "charlie"];
/// Few texts, so that repeated questions and answers (stuck) and flipped topics happen.
pub const TEXTS: [&str; 3] = [
    "Which cache should the sessions use?",
    "Which cache should the sessions use now?",
    "Is the export in scope?",
];

/// Everyone may ask everyone, blocking or not, with a 10-minute SLA.
pub fn workflow() -> String {
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

pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let wf = dir.path().join(".agentx/workflows");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(wf.join("feature.toml"), workflow()).unwrap();
    dir
}

#[derive(Clone, Debug)]
pub enum Step {
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
pub fn command(step: &Step) -> (&'static str, Value) {
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
pub fn state(root: &Path) -> Vec<(String, Vec<u8>)> {
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

/// The monitor's next wake-up found the slow, sure way: by reading every ledger of both kinds
/// (what a store without an index of due times answers).
pub fn wakeup_by_reading_everything<S: agentx_clarify_command::Store>(
    store: &S,
    now: i64,
) -> Option<i64> {
    let (ledgers, _) = agentx_clarify_command::query::read_all(store).unwrap();
    let clarifications = agentx_clarify_core::monitor::next_wakeup(&ledgers, now);
    let delegations = agentx_clarify_command::delegate::next_wakeup(store)
        .unwrap()
        .map(|t| t.max(now));
    clarifications.into_iter().chain(delegations).min()
}

/// What the follow-ups found, kind by kind, over a run.
#[derive(Debug, Default)]
pub struct Found {
    pub counts: std::collections::BTreeMap<&'static str, usize>,
}

impl Found {
    pub fn add(&mut self, out: &Value) {
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

pub fn step() -> impl Strategy<Value = Step> {
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

/// One run that gives every phase work: a request goes stale, is retried, then escalated; a
/// question repeated is stuck; two blocking requests deadlock; an agent that moves on
/// abandons its question; a delegation times out.
pub fn known_run() -> Vec<(i64, Step)> {
    let ask = |issue, from, to, text, blocking| Step::Ask {
        issue,
        from,
        to,
        text,
        blocking,
    };
    vec![
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
    ]
}

/// The kinds every follow-up report lists.
pub const KINDS: [&str; 7] = [
    "stale",
    "retried",
    "escalated",
    "stuck",
    "deadlocks",
    "abandoned",
    "timedOut",
];
