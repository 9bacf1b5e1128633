//! Command-line grammar (docs/protocol.md §11.1), with an example in every command's help.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "agentx",
    version,
    about = "AgentX Clarify: agents ask instead of guessing, with an audit trail you can trust",
    after_help = "Examples:\n  agentx init\n  agentx clarify ask --issue 42 --from engineer --to architect --topic \"Cache layer\" --question \"Redis or in-process?\"\n  agentx clarify list\n  agentx demo"
)]
pub struct Cli {
    /// Workspace root (default: the nearest ancestor holding .agentx/, else the current directory)
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Machine output: one JSON document on stdout, nothing else there
    #[arg(long, global = true)]
    pub json: bool,
    /// The time of the operation: RFC 3339 or epoch milliseconds (for tests and replays)
    #[arg(long, global = true, env = "AGENTX_NOW", value_name = "TIME")]
    pub now: Option<String>,
    /// When to colour human output (NO_COLOR is respected in auto mode)
    #[arg(long, global = true, value_enum, default_value_t = ColorMode::Auto, value_name = "WHEN")]
    pub color: ColorMode,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorMode {
    Auto,
    Always,
    Never,
}

// `defer`: a subcommand's arguments are built only when it is the one invoked (and for
// help and completions), not on every start: building the whole tree was ~5 % of a
// route's CPU. Names, about and after-help texts stay eager, so the help lists are the same.
#[derive(Subcommand, Debug)]
#[command(defer = true)]
pub enum Command {
    /// Create .agentx/ with the default workflows and an empty state directory
    #[command(after_help = "Example:\n  agentx init\n  agentx --root ./my-project init")]
    Init,
    /// Ask, answer, follow up, resolve, escalate, abandon, inspect and monitor clarifications
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx clarify ask --issue 42 --from engineer --to architect --topic \"Cache layer\" --question \"Redis or in-process?\"\n  agentx clarify answer CLR-42-001 --from architect --body \"Redis, see ADR-7.\"\n  agentx clarify list --all"
    )]
    Clarify(Clarify),
    /// Act on the signal blocks of an agent's output ([CLARIFICATION_NEEDED], [STOP_WORK], …)
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx signals parse output.log\n  agentx signals ingest --issue 42 --agent researcher --parent coordinator output.log\n  agentx signals resume-prompt CLR-42-001"
    )]
    Signals(crate::signals::Signals),
    /// Delegate work between agents: request, accept, complete, reject, fail, show, list
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx delegate request --issue 42 --from engineer --to architect --capability architecture.design.system --objective \"Design the cache\"\n  agentx delegate accept DLG-42-001 --from architect\n  agentx delegate complete DLG-42-001 --from architect --summary \"Redis, see ADR-7\"\n  agentx delegate list"
    )]
    Delegate(crate::delegate::Delegate),
    /// Refuse, don't guess: exit 0 when no open BLOCK gap of the issue blocks the operation,
    /// else GATE_CLOSED (exit 4) listing the open gaps
    #[command(
        after_help = "Examples:\n  agentx gate --issue 42\n  agentx gate --issue 42 --operation deploy || exit 1\n  agentx gate --issue 42 --operation codegen --json\n\nA record blocks an operation when it is open (pending, stale, answered, escalated),\nits severity is BLOCK and its blocked operations are none (every one) or name it."
    )]
    Gate(crate::layer4::GateArgs),
    /// Signing keys: create an agent's ed25519 key pair, list the workspace's keys
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx keys new agent-x\n  agentx keys new engineer\n  agentx keys list"
    )]
    Keys(crate::layer4::Keys),
    /// Notification sinks ([[notify]] in .agentx/config.toml): send a test event
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx notify test team\n  agentx notify test desktop --json"
    )]
    Notify(crate::notify::Notify),
    /// GitHub Mode ([github] in .agentx/config.toml): take decisions commented on the issues
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx github sync\n  agentx github sync --json"
    )]
    Github(crate::github::Github),
    /// Report that an agent starts or finishes work (then runs the monitor)
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx hook start engineer 42\n  agentx hook finish engineer 42"
    )]
    Hook(Hook),
    /// Run the monitor, then show which issues are blocked by open clarifications
    #[command(
        after_help = "Examples:\n  agentx ready\n  agentx ready --no-escalated\n  agentx ready --json"
    )]
    Ready(ReadyArgs),
    /// Show agent statuses, or set one (--agent A --status S [--issue N])
    #[command(
        after_help = "Examples:\n  agentx state\n  agentx state --agent engineer --status working --issue 42"
    )]
    State(StateArgs),
    /// Where the state lives: create or migrate the PostgreSQL schema, export, import
    #[command(
        subcommand,
        after_help = "The state is in PostgreSQL when AGENTX_STORE or [store] url in .agentx/config.toml\nnames a postgres:// URL (the variable wins), else in .agentx/state/.\n\nExamples:\n  agentx store init\n  agentx store export ./backup\n  agentx store import .          # this workspace's files into the database"
    )]
    Store(StoreCmd),
    /// Upgrade ledgers written by another tool (AgentX, the reference CLI) and say what changed
    #[command(
        after_help = "Examples:\n  agentx migrate --dry-run\n  agentx migrate\n  agentx migrate --json | jq '.migrated[].file'\n\nEach ledger is upgraded under its lock: snapshots set from the thread, unhashed\nentries hashed in order, timestamps in canonical form, no BOM. Ledgers that do not\nparse are reported and left untouched. Afterwards `agentx clarify verify` shows no\nwarnings for them (but for records that never got a question)."
    )]
    Migrate {
        /// Report what would change without writing
        #[arg(long)]
        dry_run: bool,
    },
    /// Play a realistic story in a fresh workspace and print it as it happens
    #[command(after_help = "Examples:\n  agentx demo\n  agentx --root /tmp/demo demo")]
    Demo,
    /// Serve the hub to one agent over the Model Context Protocol (stdio)
    #[cfg(feature = "mcp")]
    #[command(
        after_help = "Examples:\n  agentx mcp --agent engineer --issue 42\n  claude mcp add clarify -- agentx mcp --agent engineer"
    )]
    Mcp {
        /// The agent every tool call acts as (default: the AGENTX_AGENT environment variable,
        /// so a project's shared MCP configuration can leave the name to each person)
        #[arg(long, env = "AGENTX_AGENT")]
        agent: String,
        /// The default issue of clarify_ask and clarify_show
        #[arg(long, value_name = "N")]
        issue: Option<String>,
    },
    /// Serve the hub over HTTP: the web inbox where people answer escalations, /api/v1
    #[cfg(feature = "serve")]
    #[command(
        after_help = "Examples:\n  agentx serve\n  agentx --root ./project serve --as alice\n  agentx serve --listen 0.0.0.0:7700 --tls-cert cert.pem --tls-key key.pem\n\nOn start it prints a one-time sign-in link (10 minutes). Logs go to stderr;\nSIGINT/SIGTERM end it cleanly."
    )]
    Serve(crate::serve::ServeArgs),
    /// Access tokens of `agentx serve`: new (printed once), list, revoke
    #[cfg(feature = "serve")]
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx tokens new --human alice\n  agentx tokens new --agent engineer\n  agentx tokens list --json\n  agentx tokens revoke alice"
    )]
    Tokens(crate::serve::Tokens),
    /// Print a shell completion script
    #[command(
        after_help = "Example:\n  agentx completions bash > ~/.local/share/bash-completion/completions/agentx"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in args.rs
pub enum StoreCmd {
    /// Create the PostgreSQL schema, or migrate it to this version (nothing to do for files)
    Init,
    /// Write the whole workspace, its state included, into DIR as a file workspace
    Export {
        /// A directory without an .agentx/ in it (created if missing)
        dir: PathBuf,
    },
    /// Read the state of the file workspace at DIR into the PostgreSQL store
    Import {
        /// A workspace root (holding .agentx/state/)
        dir: PathBuf,
        /// Overwrite documents the database holds with different content (else refused)
        #[arg(long)]
        replace: bool,
    },
}

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in args.rs
pub enum Clarify {
    /// Ask another agent a structured question
    #[command(
        after_help = "Examples:\n  agentx clarify ask --issue 42 --from engineer --to architect \\\n      --topic \"Cache layer\" --question \"Redis or in-process LRU?\" \\\n      --field storage.cache --suggest redis --suggest lru\n  agentx clarify ask --issue 42 --from engineer --to architect \\\n      --topic \"Cache layer\" --question \"Redis or in-process LRU?\" --route --wait\n  agentx clarify ask --issue 42 --from engineer --to architect \\\n      --topic \"Cache store\" --question \"Which cache?\" --kind choice \\\n      --option redis=Redis --option lru=\"In-process LRU\" \\\n      --describe redis=\"Shared across instances; one more service to run\" --no-other"
    )]
    Ask(Box<AskArgs>),
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
    Resolve(ResolveArgs),
    /// Hand a clarification to a human (default actor: human)
    #[command(
        after_help = "Example:\n  agentx clarify escalate CLR-42-001 -m \"Needs a product decision\""
    )]
    Escalate(CloseArgs),
    /// Withdraw a clarification (the requester or the monitor)
    #[command(
        after_help = "Example:\n  agentx clarify abandon CLR-42-001 --from engineer -m \"Found it in the ADR\""
    )]
    Abandon(CloseArgs),
    /// Send an escalated clarification back to its target, pending again (a human only)
    #[command(
        after_help = "Examples:\n  agentx clarify reopen CLR-42-001 -m \"The runner is fixed; please answer.\"\n  agentx clarify reopen CLR-42-001 --route"
    )]
    Reopen(ReopenArgs),
    /// List clarifications (default: open ones)
    #[command(
        after_help = "Examples:\n  agentx clarify list\n  agentx clarify list --issue 42 --all\n  agentx clarify list --status stale --status escalated --json"
    )]
    List {
        #[arg(long, value_name = "N")]
        issue: Option<String>,
        #[arg(long, value_enum, value_name = "STATUS")]
        status: Vec<StatusArg>,
        /// Include resolved and abandoned records
        #[arg(long)]
        all: bool,
    },
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
    Route(RouteArgs),
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
    Check(crate::layer4::CheckArgs),
    /// Layer 4's audit record of a clarification or an issue: every ask/answer round with its
    /// timestamps and signatures, verified
    #[command(
        after_help = "Examples:\n  agentx clarify audit CLR-42-001\n  agentx clarify audit --issue 42 --json\n\nExit 8 when the chain does not verify (SIGNATURE_INVALID or LEDGER_INCONSISTENT)."
    )]
    Audit(crate::layer4::AuditArgs),
    /// Analytics: totals, auto-resolution and escalation rates, time to first answer
    #[command(
        after_help = "Examples:\n  agentx clarify stats\n  agentx clarify stats --since 2026-11-01T00:00:00Z --json"
    )]
    Stats {
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
    },
    /// Whom an agent may ask, under which workflow and step, with which limits (scope preview)
    #[command(
        after_help = "Examples:\n  agentx clarify scope --from engineer\n  agentx clarify scope --from engineer --to architect --issue 42 --json"
    )]
    Scope(ScopeArgs),
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

#[derive(Args, Debug)]
pub struct ScopeArgs {
    /// The requester (without it: which agents may ask at all)
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long)]
    pub to: Option<String>,
    /// The issue (its ledger records the workflow of its first request)
    #[arg(long, value_name = "N")]
    pub issue: Option<String>,
    #[arg(long)]
    pub non_blocking: bool,
    #[arg(long)]
    pub workflow: Option<String>,
    #[arg(long)]
    pub step: Option<String>,
}

#[derive(Args, Debug)]
pub struct AskArgs {
    #[arg(long, value_name = "N")]
    pub issue: String,
    #[arg(long)]
    pub from: String,
    #[arg(long)]
    pub to: String,
    #[arg(long)]
    pub topic: String,
    #[arg(long)]
    pub question: String,
    /// Do not block the requester while waiting
    #[arg(long)]
    pub non_blocking: bool,
    #[arg(long)]
    pub workflow: Option<String>,
    #[arg(long)]
    pub step: Option<String>,
    /// The exact field the gap concerns (e.g. storage.cache)
    #[arg(long)]
    pub field: Option<String>,
    /// An answer the asker would accept (repeatable)
    #[arg(long = "suggest", value_name = "S")]
    pub suggestions: Vec<String>,
    /// Re-sending a request with the same key returns the original record
    #[arg(long, value_name = "K")]
    pub idempotency_key: Option<String>,
    /// BLOCK or WARN (Layer 4); sets blocking. Default: BLOCK, WARN with --non-blocking
    #[arg(long, value_name = "SEVERITY")]
    pub severity: Option<String>,
    /// Why the gap matters: what the asker knows so far
    #[arg(long, value_name = "TEXT")]
    pub context: Option<String>,
    /// An operation the record blocks while open, for `gate` (repeatable; none: every one)
    #[arg(long = "blocks", value_name = "OP")]
    pub blocked_operations: Vec<String>,
    /// The Layer 4 session (a UUID) the gap belongs to
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,
    /// The gap's id within its session
    #[arg(long, value_name = "ID")]
    pub gap_id: Option<String>,
    /// Ask back: answer the pending question <ID> (asked of --from by --to) with this one.
    /// Always in scope; takes that question's round limit and SLA
    #[arg(long, value_name = "ID")]
    pub asked_back_from: Option<String>,
    #[command(flatten)]
    pub kinds: crate::kinds::KindArgs,
    /// Then run the target's runner in the background (see `clarify route`); the command
    /// returns at once
    #[arg(long)]
    pub route: bool,
    /// With --route: wait for the outcome (bounded by the runner's timeout) and print it
    #[arg(long, requires = "route")]
    pub wait: bool,
}

#[derive(Args, Debug)]
pub struct RouteArgs {
    /// The clarification to route
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub id: Option<String>,
    /// Every pending or stale record whose target has a runner and no routing in progress
    #[arg(long)]
    pub all: bool,
    /// With --all: how many agents run at once
    #[arg(long, value_name = "N", default_value_t = 1, requires = "all", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Print the prompt (and, with --json, the runner) instead of running anything
    #[arg(long, conflicts_with_all = ["all", "interpret"])]
    pub print_prompt: bool,
    /// With --print-prompt: take the persona from this file instead of the runner's
    #[arg(long, value_name = "FILE", requires = "print_prompt")]
    pub persona: Option<PathBuf>,
    /// Show what routing would do with a run's output given as JSON ({"exit", "stdout",
    /// "stderr", "timedOut", "signal", …}, "-" for stdin); nothing runs, nothing is written
    #[arg(long, value_name = "FILE", conflicts_with = "all")]
    pub interpret: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ResolveArgs {
    #[command(flatten)]
    pub close: CloseArgs,
    /// The decision as a typed value (docs/protocol.md §22): yes/no, an option value; repeat for
    /// multi_choice
    #[arg(long = "value", value_name = "V")]
    pub value: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CloseArgs {
    pub id: String,
    #[arg(long)]
    pub from: Option<String>,
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReopenArgs {
    pub id: String,
    /// Only `human` may reopen (the default)
    #[arg(long)]
    pub from: Option<String>,
    /// Why it goes back, kept in the thread
    #[arg(short = 'm', long = "message", value_name = "TEXT")]
    pub message: Option<String>,
    /// Then route it to its target's runner again and print the outcome
    #[arg(long)]
    pub route: bool,
}

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in args.rs
pub enum Hook {
    /// The agent starts working (status working)
    #[command(after_help = "Example:\n  agentx hook start engineer 42")]
    Start {
        agent: String,
        issue: Option<String>,
    },
    /// The agent finished (status done)
    #[command(after_help = "Example:\n  agentx hook finish engineer 42")]
    Finish {
        agent: String,
        issue: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct ReadyArgs {
    /// Count escalated blocking records (their requester waits on a human): the default
    #[arg(long, conflicts_with = "no_escalated")]
    pub include_escalated: bool,
    /// Count only pending and stale records: an escalated one does not block its issue
    #[arg(long)]
    pub no_escalated: bool,
}

#[derive(Args, Debug)]
pub struct StateArgs {
    #[arg(long, requires = "status")]
    pub agent: Option<String>,
    #[arg(long, value_enum, requires = "agent")]
    pub status: Option<AgentStateArg>,
    #[arg(long, value_name = "N", requires = "agent")]
    pub issue: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusArg {
    Pending,
    Stale,
    Answered,
    Escalated,
    Resolved,
    Abandoned,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum AgentStateArg {
    Idle,
    Working,
    Clarifying,
    BlockedClarification,
    Done,
    Stuck,
}

impl AgentStateArg {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStateArg::Idle => "idle",
            AgentStateArg::Working => "working",
            AgentStateArg::Clarifying => "clarifying",
            AgentStateArg::BlockedClarification => "blocked-clarification",
            AgentStateArg::Done => "done",
            AgentStateArg::Stuck => "stuck",
        }
    }
}

impl StatusArg {
    pub fn status(self) -> agentx_clarify_core::Status {
        use agentx_clarify_core::Status;
        match self {
            StatusArg::Pending => Status::Pending,
            StatusArg::Stale => Status::Stale,
            StatusArg::Answered => Status::Answered,
            StatusArg::Escalated => Status::Escalated,
            StatusArg::Resolved => Status::Resolved,
            StatusArg::Abandoned => Status::Abandoned,
        }
    }
}
