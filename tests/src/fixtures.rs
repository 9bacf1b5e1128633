//! Ledgers of the benchmarks' shape (issues 3 and 4): three records each — one resolved with
//! three entries, one answered after two rounds, one fresh pending — plus, in a mixed
//! workspace, 1 % stale, 1 % stuck (repeated question) and 0.5 % deadlocked (mutual wait); or
//! finished (every record resolved), the bulk of a workspace that has run for a while.
#![allow(clippy::unwrap_used)]

use agentx_clarify_core::{act, request, Action, Config, Ledger, NewRequest, Workflows};

const MIN: i64 = 60_000;

fn workflows() -> Workflows {
    let mut w = Workflows::new();
    w.insert_text(
        "feature",
        "[[steps]]\nid = \"e\"\nagent = \"engineer\"\ncan_clarify = [\"architect\", \"product-manager\"]\nclarify_sla_minutes = 60\n\
         [[steps]]\nid = \"a\"\nagent = \"architect\"\ncan_clarify = [\"engineer\", \"product-manager\"]\nclarify_sla_minutes = 60\n",
    );
    w
}

pub fn ask_blocking(
    l: Option<&Ledger>,
    issue: u64,
    from: &str,
    to: &str,
    topic: &str,
    q: &str,
    now: i64,
) -> Ledger {
    let req = NewRequest {
        issue_number: issue,
        from: from.into(),
        to: to.into(),
        topic: topic.into(),
        question: q.into(),
        ..NewRequest::default()
    };
    request(l, &req, &Config::default(), &workflows(), now)
        .unwrap()
        .ledger
}

/// A non-blocking engineer → architect request on `issue`: what the store tests and the
/// concurrent-writer benchmark ask, many times over.
pub fn engineer_asks(issue: u64, topic: String, question: String) -> NewRequest {
    NewRequest {
        issue_number: issue,
        from: "engineer".into(),
        to: "architect".into(),
        topic,
        question,
        blocking: false,
        ..NewRequest::default()
    }
}

fn step(l: &Ledger, id: &str, a: Action, now: i64) -> Ledger {
    act(l, id, &a, &Config::default(), now).unwrap().ledger
}

/// What a benchmark ledger holds besides its three ordinary records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Clean,
    Stale,
    Stuck,
    Deadlock,
    /// Every record resolved: finished work, which the monitor never needs to read.
    Finished,
}

/// One ledger of the benchmark's shape; `kind` adds the situation the monitor must find.
pub fn ledger(issue: u64, kind: Kind, now: i64) -> Ledger {
    let mut l = settled_records(issue, kind, now);
    let asked_at = match kind {
        Kind::Stale => now - 90 * MIN,
        _ => now - MIN,
    };
    l = ask_blocking(
        Some(&l),
        issue,
        "engineer",
        "product-manager",
        "Export scope",
        "Is CSV export of invoices in scope for v1?",
        asked_at,
    );
    match kind {
        Kind::Finished => finish_open(&l, issue, now),
        Kind::Deadlock => ask_each_other(&l, issue, now),
        _ => l,
    }
}

fn architect_answer(body: &str) -> Action {
    Action::Answer {
        from: "architect".into(),
        body: body.into(),
    }
}

const RESOLVE: Action = Action::Resolve {
    from: None,
    message: None,
};

/// Records 1 (resolved) and 2 (answered after a follow-up; `Stuck` asks the same question
/// twice, which the monitor must find).
fn settled_records(issue: u64, kind: Kind, now: i64) -> Ledger {
    let mut l = ask_blocking(
        None,
        issue,
        "engineer",
        "architect",
        "Session cache",
        "Redis or an in-process LRU for the session cache?",
        now - 50 * MIN,
    );
    let id1 = format!("CLR-{issue}-001");
    let redis = architect_answer("Redis: sessions must survive a deploy.");
    l = step(&l, &id1, redis, now - 49 * MIN);
    l = step(&l, &id1, RESOLVE, now - 48 * MIN);
    let second_question = match kind {
        Kind::Stuck => "Which eviction policy should the session keys use?",
        _ => "And the TTL for idle sessions, in hours?",
    };
    l = ask_blocking(
        Some(&l),
        issue,
        "engineer",
        "architect",
        "Eviction",
        "Which eviction policy should the session keys use?",
        now - 40 * MIN,
    );
    let id2 = format!("CLR-{issue}-002");
    l = step(&l, &id2, architect_answer("allkeys-lru."), now - 39 * MIN);
    let follow_up = Action::FollowUp {
        from: "engineer".into(),
        question: second_question.into(),
    };
    l = step(&l, &id2, follow_up, now - 38 * MIN);
    step(
        &l,
        &id2,
        architect_answer("24 hours, sliding."),
        now - 37 * MIN,
    )
}

/// `Finished`: record 3 answered, then 2 and 3 resolved.
fn finish_open(l: &Ledger, issue: u64, now: i64) -> Ledger {
    let id3 = format!("CLR-{issue}-003");
    let pm_answer = Action::Answer {
        from: "product-manager".into(),
        body: "Yes, CSV only.".into(),
    };
    let mut l = step(l, &id3, pm_answer, now - 30 * MIN);
    for id in [format!("CLR-{issue}-002"), id3] {
        l = step(&l, &id, RESOLVE, now - 29 * MIN);
    }
    l
}

/// `Deadlock`: engineer and architect each wait on the other.
fn ask_each_other(l: &Ledger, issue: u64, now: i64) -> Ledger {
    let l = ask_blocking(
        Some(l),
        issue,
        "engineer",
        "architect",
        "Schema",
        "Is the orders schema final?",
        now - MIN,
    );
    ask_blocking(
        Some(&l),
        issue,
        "architect",
        "engineer",
        "Migrations",
        "Which migrations ran in staging?",
        now - MIN,
    )
}

/// The kind of ledger `i` in a workspace; `mixed` makes 1 % stale, 1 % stuck and 0.5 %
/// deadlocked.
pub fn kind_of(i: u64, mixed: bool) -> Kind {
    match (mixed, i % 200) {
        (true, 0 | 1) => Kind::Stale,
        (true, 2 | 3) => Kind::Stuck,
        (true, 4) => Kind::Deadlock,
        _ => Kind::Clean,
    }
}

/// `n` in-memory ledgers (renumbered copies of four templates; their hashes are not
/// recomputed, which the monitor never looks at).
pub fn workspace(n: u64, mixed: bool, now: i64) -> Vec<Ledger> {
    let templates = [
        ledger(1, Kind::Clean, now),
        ledger(1, Kind::Stale, now),
        ledger(1, Kind::Stuck, now),
        ledger(1, Kind::Deadlock, now),
    ];
    (0..n)
        .map(|i| {
            let kind = kind_of(i, mixed) as usize;
            // Renumbered copies: ids follow the issue (hashes are irrelevant to the monitor).
            let mut l = templates[kind].clone();
            l.issue_number = u32::try_from(i).unwrap();
            for r in &mut l.clarifications {
                r.id = r.id.replacen("CLR-1-", &format!("CLR-{i}-"), 1);
            }
            l
        })
        .collect()
}

/// What a delegation of issue `issue` is left at by [`delegate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delegated {
    /// Requested, not accepted: nothing can time out.
    Requested,
    /// Accepted at `now`: it times out 60 minutes later.
    Accepted,
    /// Accepted, then failed by its target: finished.
    Failed,
}

/// Opens a delegation engineer → tester on `issue` through the command layer (as the CLI
/// writes one) and takes it to `to`; returns its id.
pub fn delegate<S: agentx_clarify_command::Store>(
    store: &S,
    issue: u64,
    to: Delegated,
    now: i64,
) -> String {
    use agentx_clarify_command::delegate;
    use agentx_clarify_core::delegation::{Action as Op, NewDelegation};
    let req = NewDelegation {
        issue_number: issue,
        from: "engineer".into(),
        to: "tester".into(),
        objective: format!("run the suite for issue {issue}"),
        ..NewDelegation::default()
    };
    let id = delegate::request(store, now, &req).unwrap().id;
    if to != Delegated::Requested {
        delegate::act(store, now, &id, &Op::accept("tester")).unwrap();
    }
    if to == Delegated::Failed {
        delegate::act(store, now, &id, &Op::fail("tester", None)).unwrap();
    }
    id
}

/// The issues of the delegation ledgers a store's pass over `scope` reads, ascending.
pub fn scanned_delegations<S: agentx_clarify_command::Store>(
    store: &S,
    scope: agentx_clarify_command::Scope,
) -> Vec<u64> {
    store
        .scan_delegations(scope)
        .unwrap()
        .into_iter()
        .map(|r| r.issue)
        .collect()
}
