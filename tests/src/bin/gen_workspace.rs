//! Writes a benchmark workspace:
//! `agentx-gen-workspace DIR N [--mixed | --finished | --due PCT | --open PCT]`
//! creates `DIR/.agentx/` (default workflows) and N ledgers of the benchmarks' shape (about
//! 3 KB each, real hash chains), timed so that a monitor run at the current time finds what
//! `--mixed` planted. `--finished`: every record resolved (a workspace of finished work);
//! `--due PCT`: PCT % of the ledgers hold a record past its SLA, the rest are finished;
//! `--open PCT`: PCT % of the ledgers hold open work that is not due (an answered record
//! nobody resolved, a question asked a minute ago), the rest are finished (issue 27).
//! `--vocab`: each ledger's topics and questions also name two of 60 subjects (by its
//! number), so a search for one subject matches about 3 % of the ledgers while the
//! template's own words match them all (issue 45's search benchmark; the entry hashes are
//! not recomputed, which search never checks).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use agentx_clarify_tests::fixtures::{kind_of, ledger, Kind};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(n)) = (args.get(1), args.get(2).and_then(|n| n.parse::<u64>().ok()))
    else {
        eprintln!(
            "usage: agentx-gen-workspace DIR N [--mixed | --finished | --due PCT | --open PCT]"
        );
        std::process::exit(2);
    };
    let mixed = args.iter().any(|a| a == "--mixed");
    let vocab = args.iter().any(|a| a == "--vocab");
    let finished = args.iter().any(|a| a == "--finished");
    let due: Option<u64> = args
        .iter()
        .position(|a| a == "--due")
        .and_then(|i| args.get(i + 1))
        .and_then(|p| p.parse().ok());
    let open: Option<u64> = args
        .iter()
        .position(|a| a == "--open")
        .and_then(|i| args.get(i + 1))
        .and_then(|p| p.parse().ok());
    // Ledger i is due (or open) when it falls in the first PCT of every hundred.
    let kind = |i: u64| match (due, open) {
        (Some(pct), _) if i % 100 < pct => Kind::Stale,
        (None, Some(pct)) if i % 100 < pct => Kind::Clean,
        (Some(_), _) | (None, Some(_)) => Kind::Finished,
        (None, None) if finished => Kind::Finished,
        (None, None) => kind_of(i, mixed),
    };
    let root = PathBuf::from(dir);
    let clar = root.join(".agentx/state/clarifications");
    std::fs::create_dir_all(&clar).expect("create the workspace");
    std::fs::create_dir_all(root.join(".agentx/workflows")).expect("create the workflows dir");
    for (name, text) in agentx_clarify_core::defaults::DEFAULT_WORKFLOWS {
        std::fs::write(root.join(format!(".agentx/workflows/{name}.toml")), text)
            .expect("write a workflow");
    }
    let now = i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let mut bytes = 0usize;
    for i in 1..=n {
        let mut l = ledger(i, kind(i), now);
        if vocab {
            with_subjects(&mut l, i);
        }
        let text = l.to_pretty_json();
        bytes += text.len();
        std::fs::write(clar.join(format!("issue-{i}.json")), text).expect("write a ledger");
    }
    println!(
        "{} ledgers, {} bytes ({} bytes per ledger) in {}",
        n,
        bytes,
        bytes / usize::try_from(n.max(1)).unwrap(),
        clar.display()
    );
}

/// The subjects of `--vocab`.
const SUBJECTS: [&str; 60] = [
    "redis",
    "postgres",
    "kafka",
    "csv",
    "billing",
    "retention",
    "auth",
    "sso",
    "oauth",
    "saml",
    "graphql",
    "grpc",
    "webhook",
    "cron",
    "s3",
    "cdn",
    "dns",
    "tls",
    "jwt",
    "rbac",
    "audit",
    "gdpr",
    "invoice",
    "refund",
    "tax",
    "currency",
    "locale",
    "timezone",
    "pagination",
    "search",
    "upload",
    "thumbnail",
    "video",
    "email",
    "sms",
    "push",
    "slack",
    "teams",
    "jira",
    "github",
    "terraform",
    "helm",
    "kubernetes",
    "docker",
    "nginx",
    "envoy",
    "prometheus",
    "grafana",
    "sentry",
    "datadog",
    "feature",
    "flag",
    "rollout",
    "canary",
    "migration",
    "backfill",
    "sharding",
    "replica",
    "failover",
    "backup",
];

/// Names subjects `i % 60` and `i / 60 % 60` in ledger `l`'s topics and questions.
fn with_subjects(l: &mut agentx_clarify_core::Ledger, i: u64) {
    let a = SUBJECTS[usize::try_from(i % 60).unwrap()];
    let b = SUBJECTS[usize::try_from(i / 60 % 60).unwrap()];
    for r in &mut l.clarifications {
        r.topic = format!("{a} {}", r.topic);
        for e in &mut r.thread {
            if e.kind == agentx_clarify_core::ledger::EntryKind::Question {
                e.body = format!("{} ({b})", e.body);
            }
        }
    }
}
