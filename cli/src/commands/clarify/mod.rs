//! `agentx clarify …`: the grammar of the clarify family and its dispatch; each command's
//! flags go to the command layer in the module named for what it does (`ask`, `act`: the
//! mutations, through the JSON route; `query`; `route`; `layer4`).

mod act;
mod ask;
mod claim;
mod layer4;
mod query;
mod route;

use agentx_clarify_store::clock::system_now_ms;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Subcommand;

use super::signals;
use crate::exit::Outcome;

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in cli.rs
pub enum Clarify {
    /// Ask another agent a structured question
    #[command(
        after_help = "Examples:\n  agentx clarify ask --issue 42 --from engineer --to architect \\\n      --topic \"Cache layer\" --question \"Redis or in-process LRU?\" \\\n      --field storage.cache --suggest redis --suggest lru\n  agentx clarify ask --issue 42 --from engineer --to architect \\\n      --topic \"Cache layer\" --question \"Redis or in-process LRU?\" --route --wait\n  agentx clarify ask --issue 42 --from engineer --to architect \\\n      --topic \"Cache store\" --question \"Which cache?\" --kind choice \\\n      --option redis=Redis --option lru=\"In-process LRU\" \\\n      --describe redis=\"Shared across instances; one more service to run\" --no-other"
    )]
    Ask(Box<ask::AskArgs>),
    /// Answer a pending or stale clarification (only its target may)
    #[command(
        after_help = "Example:\n  agentx clarify answer CLR-42-001 --from architect --body \"Redis, see ADR-7.\""
    )]
    Answer {
        id: String,
        #[arg(long)]
        from: String,
        #[arg(long, required_unless_present = "value")]
        body: Option<String>,
        /// A typed answer (docs/protocol.md §22): yes/no, an option value; repeat for multi_choice
        #[arg(long = "value", value_name = "V")]
        value: Vec<String>,
    },
    /// Ask the next round of an answered clarification (only its requester may)
    #[command(
        name = "follow-up",
        after_help = "Example:\n  agentx clarify follow-up CLR-42-001 --from engineer --question \"Which eviction policy?\""
    )]
    FollowUp {
        id: String,
        #[arg(long)]
        from: String,
        #[arg(long)]
        question: String,
    },
    /// Close a clarification (the requester once answered; a human once escalated)
    #[command(
        after_help = "Examples:\n  agentx clarify resolve CLR-42-001\n  agentx clarify resolve CLR-42-001 -m \"Use Redis with LRU eviction.\""
    )]
    Resolve(act::ResolveArgs),
    /// Hand a clarification to a human (default actor: human)
    #[command(
        after_help = "Example:\n  agentx clarify escalate CLR-42-001 -m \"Needs a product decision\""
    )]
    Escalate(act::CloseArgs),
    /// Withdraw a clarification (the requester or the monitor)
    #[command(
        after_help = "Example:\n  agentx clarify abandon CLR-42-001 --from engineer -m \"Found it in the ADR\""
    )]
    Abandon(act::CloseArgs),
    /// Send an escalated clarification back to its target, pending again (a human only)
    #[command(
        after_help = "Examples:\n  agentx clarify reopen CLR-42-001 -m \"The runner is fixed; please answer.\"\n  agentx clarify reopen CLR-42-001 --route"
    )]
    Reopen(act::ReopenArgs),
    /// Take an escalated clarification: others see you are on it (a person of people.toml)
    #[command(
        after_help = "Examples:\n  agentx clarify claim CLR-42-001 --as alice\n  agentx clarify claim CLR-42-001 --as alice -m \"Looking at the ADRs first\""
    )]
    Claim(claim::ClaimArgs),
    /// Hand an escalated clarification, or every one you hold, to another person
    #[command(
        after_help = "Examples:\n  agentx clarify handoff CLR-42-001 --as alice --to bob -m \"Redis is likely; check the budget\"\n  agentx clarify handoff --all --from alice --to bob    # the end of a shift"
    )]
    Handoff(claim::HandoffArgs),
    /// Approve an escalated clarification's decision where several deciders must agree
    #[command(
        after_help = "Examples:\n  agentx clarify approve CLR-42-001 --as alice -m \"Redis, with LRU eviction\"\n  agentx clarify approve CLR-42-001 --as bob              # alice's decision, as written\n  agentx clarify approve CLR-42-002 --as bob --value redis"
    )]
    Approve(claim::ApproveArgs),
    /// List clarifications (default: open ones)
    #[command(
        after_help = "Examples:\n  agentx clarify list\n  agentx clarify list --issue 42 --all\n  agentx clarify list --status stale --status escalated --json"
    )]
    List {
        #[arg(long, value_name = "N")]
        issue: Option<String>,
        #[arg(long, value_enum, value_name = "STATUS")]
        status: Vec<query::StatusArg>,
        /// Include resolved and abandoned records
        #[arg(long)]
        all: bool,
    },
    /// Search every record (question, topic, field, context, answers, decisions): look before
    /// you ask. Same field first, then the words in common, then the newest
    #[command(
        after_help = "Examples:\n  agentx clarify search \"redis cache\"\n  agentx clarify search \"eviction policy\" --status resolved --limit 3\n  agentx clarify search \"cache\" --field storage.cache --issue 42 --json"
    )]
    Search(query::SearchArgs),
    /// Show one clarification's thread, or every thread of an issue
    #[command(
        after_help = "Examples:\n  agentx clarify show CLR-42-001\n  agentx clarify show --issue 42"
    )]
    Show {
        #[arg(required_unless_present = "issue", conflicts_with = "issue")]
        id: Option<String>,
        #[arg(long, value_name = "N")]
        issue: Option<String>,
    },
    /// Find stale, stuck, deadlocked and abandoned clarifications and act on them
    #[command(
        alias = "stale",
        after_help = "Examples:\n  agentx clarify monitor\n  agentx clarify stale --dry-run --json\n  agentx clarify monitor --route --jobs 4    # and run the agents of the records it retried"
    )]
    Monitor {
        /// Report what would be done without writing
        #[arg(long)]
        dry_run: bool,
        /// Route every record the monitor retried to its agent's runner (the default with
        /// `[clarify] route_on_retry = true`)
        #[arg(long, conflicts_with_all = ["dry_run", "no_route"])]
        route: bool,
        /// Do not route, whatever `route_on_retry` says
        #[arg(long)]
        no_route: bool,
        /// With routing: how many agents run at once
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        jobs: u32,
    },
    /// Run the target agent of a pending clarification (its [agents.<name>] runner) and record
    /// its answer, the question it asks back, or an escalation
    #[command(
        after_help = "Examples:\n  agentx clarify route CLR-42-001\n  agentx clarify route --all --jobs 4\n  agentx clarify route CLR-42-001 --print-prompt\n  agentx clarify route CLR-42-001 --interpret run.json --json\n\nRunners are configured in .agentx/config.toml, e.g.\n  [agents.architect]\n  preset = \"claude\"\n  timeout_seconds = 600\nSee docs/runners.md. Exit 9 (AGENT_ERROR): the agent failed and the record was escalated."
    )]
    Route(route::RouteArgs),
    /// Print the text that resumes the agent that asked (answers, resolution, what to do next)
    #[command(
        name = "resume-prompt",
        after_help = "Examples:\n  agentx clarify resume-prompt CLR-42-001\n  claude -p --resume \"$SESSION\" \"$(agentx clarify resume-prompt CLR-42-001)\"\n  agentx clarify resume-prompt CLR-42-001 --json"
    )]
    ResumePrompt { id: String },
    /// Check every ledger: parses, ids, snapshot = fold, hash chain, timestamp order, signatures
    #[command(after_help = "Example:\n  agentx clarify verify")]
    Verify,
    /// Layer 4: ask every gap of a plan (idempotent per session and gap) and print where
    /// each stands: needs_clarification or ready_to_proceed
    #[command(
        after_help = "Examples:\n  agentx clarify check --issue 42 --from engineer --to architect plan.json\n  agentx clarify check --issue 42 --from engineer --to architect plan.json --json | jq -r .status\n\nplan.json:\n  {\"session_id\": \"6f1c…\", \"gaps\": [{\"id\": \"gap-001\", \"field\": \"storage.cache\",\n    \"severity\": \"BLOCK\", \"question\": \"Redis or in-process?\", \"blocked_operations\": [\"deploy\"]}]}\nWithout session_id a new session is drawn (keep it in the plan to check again)."
    )]
    Check(layer4::CheckArgs),
    /// Layer 4's audit record of a clarification or an issue: every ask/answer round with its
    /// timestamps and signatures, verified
    #[command(
        after_help = "Examples:\n  agentx clarify audit CLR-42-001\n  agentx clarify audit --issue 42 --json\n\nExit 8 when the chain does not verify (SIGNATURE_INVALID or LEDGER_INCONSISTENT)."
    )]
    Audit(layer4::AuditArgs),
    /// Analytics: totals, auto-resolution and escalation rates, time to first answer
    #[command(
        after_help = "Examples:\n  agentx clarify stats\n  agentx clarify stats --since 2026-11-01T00:00:00Z --json\n  agentx clarify stats --people --since 2026-11-01T00:00:00Z"
    )]
    Stats {
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        /// Add a row per person: decisions, claims, median time to decide, open, holding
        #[arg(long)]
        people: bool,
    },
    /// Whom an agent may ask, under which workflow and step, with which limits (scope preview)
    #[command(
        after_help = "Examples:\n  agentx clarify scope --from engineer\n  agentx clarify scope --from engineer --to architect --issue 42 --json"
    )]
    Scope(query::ScopeArgs),
    /// When the monitor next has something to do by time alone (for schedulers)
    #[command(
        after_help = "Examples:\n  agentx clarify wakeup\n  sleep_until \"$(agentx clarify wakeup --json | jq -r .wakeup)\""
    )]
    Wakeup,
    /// Who waits on whom (blocking records pending or stale), and the cycles among them
    #[command(
        after_help = "Examples:\n  agentx clarify graph\n  agentx clarify graph --issue 42 --json"
    )]
    Graph {
        #[arg(long, value_name = "N")]
        issue: Option<String>,
    },
}

pub fn run(
    ws: &Workspace,
    runner: route::Run<'_>,
    now: i64,
    fixed: bool,
    json: bool,
    cmd: Clarify,
) -> Outcome {
    // Routing reads the clock at each step (a run takes time), unless --now fixes it.
    let clock = move || if fixed { now } else { system_now_ms() };
    match cmd {
        Clarify::Ask(a) => ask::run(ws, runner, now, &clock, fixed.then_some(now), json, &a),
        Clarify::Route(a) => route::route(ws, runner, &clock, json, a),
        Clarify::Reopen(a) if a.route => route::reopen(ws, runner, &clock, json, a),
        Clarify::Reopen(a) => act::reopen(ws, now, json, &a),
        Clarify::Claim(a) => claim::claim(ws, now, json, &a),
        Clarify::Handoff(a) => claim::handoff(ws, now, json, &a),
        Clarify::Approve(a) => claim::approve(ws, now, json, &a),
        Clarify::ResumePrompt { id } => signals::resume(ws, json, &id),
        Clarify::Answer {
            id,
            from,
            body,
            value,
        } => {
            let a = act::answer(ws, id, from, body, &value)?;
            let id = a.id.clone();
            act::run(ws, now, json, &id, &a.action()?, None)
        }
        Clarify::FollowUp { id, from, question } => {
            let f = act::follow_up(id, from, question);
            let id = f.id.clone();
            act::run(ws, now, json, &id, &f.action(), None)
        }
        Clarify::Resolve(r) => {
            let by = act::person(r.close.as_person.as_deref());
            let r = act::resolve(ws, r)?;
            let id = r.id.clone();
            let supersedes = r.supersedes.clone().unwrap_or_default();
            act::resolve_run(ws, now, json, &id, &r.action(), &supersedes, by.as_ref())
        }
        Clarify::Escalate(c) => {
            let by = act::person(c.as_person.as_deref());
            let c = act::close(c);
            let id = c.id.clone();
            act::run(ws, now, json, &id, &c.escalate(), by.as_ref())
        }
        Clarify::Abandon(c) => {
            let by = act::person(c.as_person.as_deref());
            let c = act::close(c);
            let id = c.id.clone();
            act::run(ws, now, json, &id, &c.abandon(), by.as_ref())
        }
        Clarify::List { issue, status, all } => {
            query::list(ws, json, &query::list_input(issue, &status, all))
        }
        Clarify::Show { id, issue } => query::show(ws, json, id, issue),
        Clarify::Search(a) => query::search(ws, json, query::search_input(a)),
        Clarify::Monitor {
            dry_run,
            route,
            no_route,
            jobs,
        } => {
            let wanted = (route || no_route).then_some(route);
            route::monitor(ws, runner, &clock, json, dry_run, wanted, jobs)
        }
        Clarify::Check(a) => layer4::run_check(ws, now, json, a),
        Clarify::Audit(a) => layer4::run_audit(ws, json, &a),
        Clarify::Verify => query::verify(ws, json),
        Clarify::Scope(a) => query::scope(ws, json, query::scope_input(&a)),
        Clarify::Wakeup => query::wakeup(ws, now, json),
        Clarify::Graph { issue } => query::graph(ws, json, issue.as_deref()),
        Clarify::Stats { since, people } => query::stats(ws, json, since.as_deref(), people),
    }
}
