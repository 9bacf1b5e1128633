use serde_json::json;

use super::*;
use crate::delegation::{self, Status as DlgStatus};
use crate::ledger::{EntryKind, Status};
use crate::signals::{parse, resume_delegation, resume_record, ResumeKind};
use crate::signing::Signers;
use crate::testkit::T0;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!("../../../../tests/fixtures/signals/", $name))
    };
}

fn ctx(agent: &str, parent: Option<&str>) -> Context {
    Context {
        issue: 42,
        agent: agent.to_owned(),
        parent: parent.map(str::to_owned),
    }
}

fn manifests() -> Manifests {
    let mut m = Manifests::new();
    for (agent, text) in delegation::DEFAULT_MANIFESTS {
        m.insert_text(agent, &format!("{agent}.toml"), text);
    }
    m
}

fn run(text: &str, c: &Context, existing: Existing<'_>, now: i64) -> Executed {
    ingest(
        &parse(text),
        c,
        &existing,
        Rules {
            config: &Config::default(),
            workflows: &Workflows::defaults(),
            manifests: &manifests(),
        },
        now,
        &Signers::default(),
    )
    .unwrap()
}

const ASK: &str = "[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: Session cache\nquestions:\n  - Redis or an in-process LRU?\n[/CLARIFICATION_NEEDED]\n";

#[test]
fn the_key_layout() {
    assert_eq!(
        block_key(
            42,
            "engineer",
            "[STOP_WORK]\nblocker_type: error\n[/STOP_WORK]"
        ),
        "b2859e14aaaf04e33b14e19c2af4086abe9269a8ce55b2e62514c0345852ec08"
    );
    assert_ne!(
        block_key(42, "engineer", "x"),
        block_key(43, "engineer", "x")
    );
    assert_ne!(
        block_key(42, "engineer", "x"),
        block_key(42, "architect", "x")
    );
}

#[test]
fn clarification_needed_asks_the_parent_and_is_idempotent() {
    let text = fixture!("seed002_clarification_needed.txt");
    let out = run(
        text,
        &ctx("engineer", Some("architect")),
        Existing::default(),
        T0,
    );
    let [b] = out.blocks.as_slice() else {
        panic!("{:?}", out.blocks)
    };
    assert_eq!((b.action, b.outcome), ("request", "created"));
    assert_eq!(b.id.as_deref(), Some("CLR-42-001"));
    assert_eq!(b.status.as_deref(), Some("pending"));
    assert_eq!(
        b.warnings,
        ["the block's agent_id 'bg-task-abc' differs from the ingesting agent 'engineer'; the block is attributed to 'engineer'"]
    );
    let ledger = out.ledger.as_ref().unwrap();
    let r = ledger.find("CLR-42-001").unwrap();
    assert_eq!((r.from.as_str(), r.to.as_str()), ("engineer", "architect"));
    assert_eq!(r.topic, "Which auth strategy to analyze");
    assert_eq!(
        r.thread[0].body,
        "1. Analyze OAuth2, JWT, or both?\n2. What depth?"
    );
    assert_eq!(r.idempotency_key, b.key);
    assert_eq!(r.extra["signal"]["block"], "CLARIFICATION_NEEDED");
    assert_eq!(r.extra["signal"]["agentId"], "bg-task-abc");
    assert_eq!(
        r.extra["signal"]["currentState"],
        "Checkpoint saved: step 1 completed"
    );
    assert_eq!(r.extra["signal"]["key"], json!(b.key));
    assert_eq!(ledger.workflow.as_deref(), Some("feature"));
    assert_eq!(out.events.len(), 1);
    assert!(out.delegations.is_none());

    // The same output again: nothing is created, nothing needs writing.
    let again = run(
        text,
        &ctx("engineer", Some("architect")),
        Existing {
            ledger: Some(ledger),
            delegations: None,
        },
        T0 + 1,
    );
    assert_eq!(
        (again.blocks[0].action, again.blocks[0].outcome),
        ("skip", "skipped")
    );
    assert_eq!(
        again.blocks[0].reason.as_deref(),
        Some("already ingested (CLR-42-001)")
    );
    assert!(again.ledger.is_none() && again.events.is_empty());
    // The same block twice in one output: the second repeats the first.
    let twice = run(
        &format!("{ASK}{ASK}"),
        &ctx("engineer", Some("architect")),
        Existing::default(),
        T0,
    );
    assert_eq!(
        twice.blocks[1].reason.as_deref(),
        Some("repeats the block at line 1")
    );
    assert_eq!(twice.ledger.unwrap().clarifications.len(), 1);
}

#[test]
fn no_target_or_a_refused_one_goes_to_a_human() {
    let out = run(ASK, &ctx("engineer", None), Existing::default(), T0);
    assert_eq!(
        (out.blocks[0].action, out.blocks[0].status.as_deref()),
        ("escalate", Some("escalated"))
    );
    let r = &out.ledger.as_ref().unwrap().clarifications[0];
    assert_eq!(r.to, "human");
    assert_eq!(r.thread.len(), 2);
    assert_eq!(r.thread[1].kind, EntryKind::Escalation);
    assert_eq!(r.thread[1].from, "agent-x");
    assert!(r.thread[1].body.starts_with("no agent to ask"));
    assert_eq!(out.events.len(), 2);
    // Resolving it is the human's answer.
    let resolved = crate::ops::act(
        out.ledger.as_ref().unwrap(),
        "CLR-42-001",
        &crate::ops::Action::Resolve {
            from: None,
            message: Some(String::from("Redis.")),
        },
        &Config::default(),
        T0 + 1,
    )
    .unwrap();
    let resume = resume_record(42, resolved.ledger.find("CLR-42-001").unwrap());
    assert_eq!(resume.decision.as_deref(), Some("Redis."));

    // engineer may not ask ux-designer in the feature workflow: escalated, reason kept.
    let text = ASK.replace("blocked_at", "to: ux-designer\nblocked_at");
    let out = run(
        &text,
        &ctx("engineer", Some("architect")),
        Existing::default(),
        T0,
    );
    let r = &out.ledger.as_ref().unwrap().clarifications[0];
    assert_eq!(
        (r.to.as_str(), r.current_status()),
        ("ux-designer", Status::Escalated)
    );
    assert_eq!(
        out.blocks[0].reason.as_deref(),
        Some("scope refused asking 'ux-designer': agent 'engineer' cannot clarify with 'ux-designer'; allowed: [architect, product-manager]")
    );
    // Asking oneself is refused, and nothing is written.
    let out = run(
        ASK,
        &ctx("engineer", Some("engineer")),
        Existing::default(),
        T0,
    );
    assert_eq!(out.blocks[0].outcome, "refused");
    assert_eq!(
        out.blocks[0].error.as_ref().unwrap().code(),
        "SELF_CLARIFICATION"
    );
    assert!(out.ledger.is_none());
}

#[test]
fn ingest_signs_with_the_keys_it_is_given() {
    let keys = crate::testkit::keyring();
    let ingest_with = |text: &str, parent: Option<&str>| {
        ingest(
            &parse(text),
            &ctx("engineer", parent),
            &Existing::default(),
            Rules {
                config: &Config::default(),
                workflows: &Workflows::defaults(),
                manifests: &manifests(),
            },
            T0,
            &keys,
        )
        .unwrap()
        .ledger
        .unwrap()
    };
    let signers = |l: &Ledger| -> Vec<Option<String>> {
        l.clarifications[0]
            .thread
            .iter()
            .map(|e| e.signer.clone())
            .collect()
    };
    // Asked of the parent: the question is the agent's, signed with its key.
    let asked = ingest_with(ASK, Some("architect"));
    assert_eq!(signers(&asked), [Some("engineer".to_owned())]);
    // Escalated at once (no target): the escalation is signed with the hub key.
    let escalated = ingest_with(ASK, None);
    assert_eq!(
        signers(&escalated),
        [Some("engineer".to_owned()), Some("agent-x".to_owned())]
    );
    let public = keys.public_keys();
    for l in [&asked, &escalated] {
        let found = crate::verify::check_ledger_with("issue-42.json", l, &public, true);
        assert_eq!(found.problems, []);
    }
    // Without keys, nothing is signed: what ingest wrote before signing existed.
    let unsigned = run(ASK, &ctx("engineer", None), Existing::default(), T0);
    assert_eq!(signers(unsigned.ledger.as_ref().unwrap()), [None, None]);
}

#[test]
fn stop_work_is_escalated_at_once_keeping_the_snapshot() {
    let out = run(
        fixture!("seed002_stop_work.txt"),
        &ctx("engineer", Some("architect")),
        Existing::default(),
        T0,
    );
    let r = &out.ledger.as_ref().unwrap().clarifications[0];
    assert_eq!(r.to, "architect");
    assert_eq!(r.topic, "stop work: external_dependency");
    assert_eq!(
        r.thread[0].body,
        "need npm install\n\nBlocked work: Task D\nTo resume: node_modules installed"
    );
    assert_eq!(r.thread[1].body, "stop work: external_dependency");
    assert_eq!(r.current_status(), Status::Escalated);
    assert_eq!(r.extra["signal"]["stateSnapshot"], "Completed tasks: [A, B, C]\nGenerated files: [file1, file2]\nWorking directory: /path/to/work\nNext task: Task D");
    // Without a parent the record is to `human`.
    let out = run(
        fixture!("seed002_stop_work_error.txt"),
        &ctx("engineer", None),
        Existing::default(),
        T0,
    );
    assert_eq!(out.ledger.unwrap().clarifications[0].to, "human");
}

#[test]
fn delegate_work_finds_its_target() {
    // `to` missing: the default manifests offer code.tests to engineer; ask from architect.
    let text = "[DELEGATE_WORK]\nnew_task_description: Write the cache tests\ncapability: code.tests.write\nindependence: blocks_current_work\ncoordination: tell me when done\nfiles:\n  - src/cache.rs\n[/DELEGATE_WORK]\n";
    let out = run(text, &ctx("architect", None), Existing::default(), T0);
    assert_eq!(
        (out.blocks[0].action, out.blocks[0].outcome),
        ("delegate", "created")
    );
    let dl = out.delegations.as_ref().unwrap();
    let d = dl.find("DLG-42-001").unwrap();
    assert_eq!(
        (d.from.as_str(), d.to.as_str(), d.status),
        ("architect", "engineer", DlgStatus::Requested)
    );
    assert_eq!(d.extra["coordination"], "tell me when done");
    assert_eq!(d.extra["independence"], "blocks_current_work");
    assert_eq!(d.context_slice["files"], json!(["src/cache.rs"]));
    assert_eq!(d.signal_key, out.blocks[0].key);
    let resume = resume_delegation(42, d);
    assert_eq!(resume.kind, ResumeKind::DelegationApproved);
    assert_eq!(
        resume.text(),
        "DELEGATION APPROVED\nDelegation: DLG-42-001 (issue #42)\nNew agent: engineer\nCapability: code.tests.write\nTask: Write the cache tests\nStatus: REQUESTED\nCoordination: tell me when done\n\nPause the work that depends on it until engineer reports completion; continue anything else."
    );
    // Replayed: skipped.
    let again = run(
        text,
        &ctx("architect", None),
        Existing {
            ledger: None,
            delegations: Some(dl),
        },
        T0,
    );
    assert_eq!(
        again.blocks[0].reason.as_deref(),
        Some("already ingested (DLG-42-001)")
    );
    // A named target whose manifest excludes the capability: rejected at once.
    let text = text.replace(
        "capability:",
        "to: engineer\ncapability: architecture.design.system\nx:",
    );
    let out = run(&text, &ctx("architect", None), Existing::default(), T0);
    assert_eq!(out.blocks[0].status.as_deref(), Some("REJECTED_CAPABILITY"));
    let d = &out.delegations.as_ref().unwrap().delegations[0];
    let resume = resume_delegation(42, d);
    assert_eq!(resume.kind, ResumeKind::DelegationRejected);
    assert!(resume.text().contains("\nReason: REJECTED_CAPABILITY: 'engineer' excludes architecture.design, which covers architecture.design.system\n"), "{}", resume.text());
    // Nobody to delegate to.
    let text = "[DELEGATE_WORK]\nnew_task_description: x\ncapability: nobody.offers.this\n[/DELEGATE_WORK]";
    let out = run(text, &ctx("architect", None), Existing::default(), T0);
    assert_eq!(
        out.blocks[0].error.as_ref().unwrap().code(),
        "INVALID_INPUT"
    );
    assert!(out.delegations.is_none());
    // The parent when nothing else names one.
    let out = run(
        text,
        &ctx("architect", Some("product-manager")),
        Existing::default(),
        T0,
    );
    assert_eq!(
        out.delegations.unwrap().delegations[0].to,
        "product-manager"
    );
}

#[test]
fn completion_reports_close_the_agents_open_delegations_oldest_first() {
    let config = Config::default();
    let mut dl = None;
    for _ in 0..2 {
        let req = delegation::NewDelegation {
            issue_number: 42,
            from: String::from("architect"),
            to: String::from("engineer"),
            objective: String::from("Implement the cache"),
            ..delegation::NewDelegation::default()
        };
        dl = Some(
            delegation::request(dl.as_ref(), &req, &manifests(), &config, T0)
                .unwrap()
                .ledger,
        );
    }
    let dl = dl.unwrap();
    let report = fixture!("seed002_completion_report.txt");
    let failed = "[COMPLETION_REPORT]\nstatus: failed\nmetrics_achieved: tests do not pass\n[/COMPLETION_REPORT]\n";
    let extra =
        "[COMPLETION_REPORT]\nstatus: partial\nunresolved:\n  - flaky test\n[/COMPLETION_REPORT]\n";
    let out = run(
        &format!("{report}{failed}{extra}"),
        &ctx("engineer", None),
        Existing {
            ledger: None,
            delegations: Some(&dl),
        },
        T0 + 60_000,
    );
    let actions: Vec<_> = out
        .blocks
        .iter()
        .map(|b| (b.action, b.outcome, b.id.as_deref()))
        .collect();
    assert_eq!(
        actions,
        [
            ("complete", "applied", Some("DLG-42-001")),
            ("fail", "applied", Some("DLG-42-002")),
            ("report", "created", None)
        ]
    );
    let written = out.delegations.as_ref().unwrap();
    let d1 = written.find("DLG-42-001").unwrap();
    assert_eq!(d1.status, DlgStatus::Completed);
    let r = d1.response.as_ref().unwrap();
    assert_eq!(r.artifact_path.as_deref(), Some("docs/auth-analysis.md"));
    assert_eq!(r.summary, "Both strategies analyzed in depth; 12 findings");
    assert_eq!(r.follow_up_recommended.len(), 2);
    assert_eq!(
        r.extra["deliverables"],
        json!(["docs/auth-analysis.md", "SHARED_FINDINGS.jsonl"])
    );
    assert_eq!(
        d1.thread.last().unwrap().extra["signalKey"],
        json!(out.blocks[0].key)
    );
    let d2 = written.find("DLG-42-002").unwrap();
    assert_eq!(
        (d2.status, d2.thread.last().unwrap().body.as_str()),
        (DlgStatus::FailedExecution, "tests do not pass")
    );
    assert_eq!(written.reports.len(), 1);
    assert_eq!(written.reports[0].status, "partial");
    let resume = resume_delegation(42, d1);
    assert!(resume.text().contains("\nResult: Both strategies analyzed in depth; 12 findings (artifact: docs/auth-analysis.md)\n"));
    assert!(resume
        .text()
        .ends_with("Use the result of engineer above and continue your work."));
    assert_eq!(resume_delegation(42, d2).kind, ResumeKind::DelegationFailed);
    // Replayed: every block is skipped, the report included.
    let again = run(
        &format!("{report}{failed}{extra}"),
        &ctx("engineer", None),
        Existing {
            ledger: None,
            delegations: Some(written),
        },
        T0 + 120_000,
    );
    assert!(
        again.blocks.iter().all(|b| b.outcome == "skipped"),
        "{:?}",
        again.blocks
    );
    assert!(again.delegations.is_none());
}

#[test]
fn invalid_blocks_and_contexts() {
    let text = format!("{}{}", fixture!("nested.txt"), fixture!("stray_close.txt"));
    let out = run(&text, &ctx("engineer", None), Existing::default(), T0);
    assert_eq!(out.blocks[0].outcome, "invalid");
    assert_eq!(out.blocks[0].problems.len(), 2);
    assert_eq!(out.blocks[0].key, None);
    assert_eq!(out.plan.problems[0].line, 10);
    let v = serde_json::to_value(&out).unwrap();
    assert_eq!(v["blocks"][0]["action"], "invalid");
    assert_eq!(v["blocks"][0]["problems"][0]["line"], 5);
    assert_eq!(
        v["problems"][0]["message"],
        "[/STOP_WORK] closes no open block"
    );
    assert_eq!(v["blocks"][1]["action"], "report");
    for bad in [
        ctx("Bad", None),
        ctx("engineer", Some("")),
        Context {
            issue: u32::MAX,
            ..ctx("a", None)
        },
    ] {
        let e = plan(
            &parse(ASK),
            &bad,
            &Existing::default(),
            &Config::default(),
            &Workflows::defaults(),
            &manifests(),
        );
        assert!(e.is_err(), "{bad:?}");
    }
    // 500 questions do not fit in one question body: refused, nothing written.
    let out = run(
        fixture!("list_500.txt"),
        &ctx("engineer", Some("architect")),
        Existing::default(),
        T0,
    );
    assert_eq!(
        out.blocks[0].error.as_ref().unwrap().code(),
        "TEXT_TOO_LONG"
    );
    assert!(out.ledger.is_none());
    // A `now` out of range refuses the blocks that would write.
    let out = run(
        ASK,
        &ctx("engineer", Some("architect")),
        Existing::default(),
        -5,
    );
    assert_eq!(
        out.blocks[0].error.as_ref().unwrap().code(),
        "INVALID_INPUT"
    );
}

#[test]
fn the_plan_serialises_for_a_dry_run() {
    let parsed = parse(&format!("{ASK}{}", fixture!("seed002_stop_work.txt")));
    let p = plan(
        &parsed,
        &ctx("engineer", Some("architect")),
        &Existing::default(),
        &Config::default(),
        &Workflows::defaults(),
        &manifests(),
    )
    .unwrap();
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["blocks"][0]["action"], "request");
    assert_eq!(v["blocks"][0]["to"], "architect");
    assert_eq!(v["blocks"][0]["topic"], "Session cache");
    assert_eq!(v["blocks"][1]["action"], "escalate");
    assert_eq!(v["blocks"][1]["reason"], "stop work: external_dependency");
    assert_eq!(v["blocks"][1]["key"].as_str().unwrap().len(), 64);
}

#[test]
fn resume_texts_of_records() {
    let config = Config::default();
    let out = run(
        ASK,
        &ctx("engineer", Some("architect")),
        Existing::default(),
        T0,
    );
    let l = out.ledger.unwrap();
    let r = l.find("CLR-42-001").unwrap();
    assert_eq!(
        resume_record(42, r).text(),
        "CLARIFICATION RESPONSE\nClarification: CLR-42-001\nIssue: #42\nFrom: engineer\nTo: architect\nTopic: Session cache\n\nQ1: Redis or an in-process LRU?\nA1: (no answer yet)\n\nDo not continue the blocked work yet: the question waits for an answer from architect."
    );
    let act = |l: &crate::ledger::Ledger, a: crate::ops::Action, t: i64| {
        crate::ops::act(l, "CLR-42-001", &a, &config, t)
            .unwrap()
            .ledger
    };
    let l = act(
        &l,
        crate::ops::Action::Answer {
            from: String::from("architect"),
            body: String::from("Redis:\nsessions survive a deploy."),
        },
        T0 + 1,
    );
    let l = act(
        &l,
        crate::ops::Action::FollowUp {
            from: String::from("engineer"),
            question: String::from("Which eviction?"),
        },
        T0 + 2,
    );
    let l = act(
        &l,
        crate::ops::Action::Answer {
            from: String::from("architect"),
            body: String::from("LRU."),
        },
        T0 + 3,
    );
    let l = act(
        &l,
        crate::ops::Action::Resolve {
            from: None,
            message: None,
        },
        T0 + 4,
    );
    let resume = resume_record(42, l.find("CLR-42-001").unwrap());
    assert_eq!(
        resume.text(),
        "CLARIFICATION RESPONSE\nClarification: CLR-42-001\nIssue: #42\nFrom: engineer\nTo: architect\nTopic: Session cache\n\nQ1: Redis or an in-process LRU?\nA1: Redis:\n    sessions survive a deploy.\nQ2: Which eviction?\nA2: LRU.\n\nResolution: resolved by engineer\n\nContinue your work from your last checkpoint with these answers."
    );
    let v = serde_json::to_value(&resume).unwrap();
    assert_eq!(v["kind"], "clarification-response");
    assert_eq!(
        v["rounds"][1],
        json!({"round": 2, "question": "Which eviction?", "answer": "LRU."})
    );
    assert_eq!(
        v["header"][4],
        json!({"label": "Topic", "value": "Session cache"})
    );
    assert_eq!(v["waitsForHuman"], false);

    // Escalated and undecided: it says the question waits for a human.
    let escalated = run(ASK, &ctx("engineer", None), Existing::default(), T0)
        .ledger
        .unwrap();
    let resume = resume_record(42, &escalated.clarifications[0]);
    assert!(resume.waits_for_human);
    assert!(resume.text().contains("\n\nEscalated: no agent to ask: the block names no target and there is no parent, so a human answers; the question waits for a human decision\n\nDo not continue the blocked work until a human decides"), "{}", resume.text());
    // Decided: the human's decision.
    let decided = act(
        &escalated,
        crate::ops::Action::Resolve {
            from: None,
            message: Some(String::from("Use Redis.")),
        },
        T0 + 5,
    );
    let resume = resume_record(42, decided.find("CLR-42-001").unwrap());
    assert!(!resume.waits_for_human);
    assert_eq!(resume.decision.as_deref(), Some("Use Redis."));
    assert!(resume.text().ends_with("A1: (not answered: a person decided instead, below)\n\nHuman decision: Use Redis.\n\nContinue your work from your last checkpoint, following the human decision."), "{}", resume.text());
}

#[test]
fn blocker_resolved_restores_the_state() {
    let out = run(
        fixture!("seed002_stop_work.txt"),
        &ctx("engineer", None),
        Existing::default(),
        T0,
    );
    let l = out.ledger.unwrap();
    let r = l.find("CLR-42-001").unwrap();
    // Not resolved yet: the waiting text, with the snapshot among the parts.
    let waiting = resume_record(42, r);
    assert_eq!(waiting.kind, ResumeKind::ClarificationResponse);
    assert!(waiting.state_restoration.is_some());
    let resolved = crate::ops::act(
        &l,
        "CLR-42-001",
        &crate::ops::Action::Resolve {
            from: None,
            message: Some(String::from("ran npm install; node_modules present")),
        },
        &Config::default(),
        T0 + 1,
    )
    .unwrap();
    let resume = resume_record(42, resolved.ledger.find("CLR-42-001").unwrap());
    assert_eq!(resume.kind, ResumeKind::BlockerResolved);
    assert_eq!(
        resume.text(),
        "BLOCKER RESOLVED\nClarification: CLR-42-001 (issue #42)\nIssue: external_dependency: need npm install\nResolution: ran npm install; node_modules present\n\nSTATE RESTORATION\nCompleted tasks: [A, B, C]\nGenerated files: [file1, file2]\nWorking directory: /path/to/work\nNext task: Task D\n\nRESUME INSTRUCTIONS\nRestore your state from the snapshot above, then continue with: Task D\nWhat you required to resume: node_modules installed"
    );
}
