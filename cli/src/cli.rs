//! The command line's top level (docs/protocol.md §11.1): the global flags and the list of
//! commands, each family's own grammar beside its handler in `commands/`. Every command's help
//! has an example.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[cfg(feature = "mcp")]
use crate::commands::mcp;
#[cfg(feature = "serve")]
use crate::commands::serve;
use crate::commands::{
    clarify, completions, decisions, delegate, gate, github, keys, migrate, notify, people,
    signals, status, store,
};

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
    Clarify(clarify::Clarify),
    /// The decisions taken, listed or exported as architecture decision records
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx decisions list\n  agentx decisions export --format adr docs/adr"
    )]
    Decisions(decisions::Decisions),
    /// Act on the signal blocks of an agent's output ([CLARIFICATION_NEEDED], [STOP_WORK], …)
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx signals parse output.log\n  agentx signals ingest --issue 42 --agent researcher --parent coordinator output.log\n  agentx signals resume-prompt CLR-42-001"
    )]
    Signals(signals::Signals),
    /// Delegate work between agents: request, accept, complete, reject, fail, show, list
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx delegate request --issue 42 --from engineer --to architect --capability architecture.design.system --objective \"Design the cache\"\n  agentx delegate accept DLG-42-001 --from architect\n  agentx delegate complete DLG-42-001 --from architect --summary \"Redis, see ADR-7\"\n  agentx delegate list"
    )]
    Delegate(delegate::Delegate),
    /// Refuse, don't guess: exit 0 when no open BLOCK gap of the issue blocks the operation,
    /// else GATE_CLOSED (exit 4) listing the open gaps
    #[command(
        after_help = "Examples:\n  agentx gate --issue 42\n  agentx gate --issue 42 --operation deploy || exit 1\n  agentx gate --issue 42 --operation codegen --json\n\nA record blocks an operation when it is open (pending, stale, answered, escalated),\nits severity is BLOCK and its blocked operations are none (every one) or name it."
    )]
    Gate(gate::GateArgs),
    /// Signing keys: create an agent's ed25519 key pair, list the workspace's keys
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx keys new agent-x\n  agentx keys new engineer\n  agentx keys list"
    )]
    Keys(keys::Keys),
    /// People by name (.agentx/people.toml): who they are, who is on call, who decides
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx people list\n  agentx people check\n\n.agentx/people.toml:\n  [people.alice]\n  roles = [\"architecture\", \"lead\"]\n  github = \"alice-gh\"\n\n  [[rotations]]\n  role = \"lead\"\n  people = [\"alice\", \"bob\"]\n  every = \"7d\"\n  start = \"2026-01-05T09:00:00Z\""
    )]
    People(people::PeopleCmd),
    /// Notification sinks ([[notify]] in .agentx/config.toml): send a test event
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx notify test team\n  agentx notify test desktop --json"
    )]
    Notify(notify::Notify),
    /// GitHub Mode ([github] in .agentx/config.toml): take decisions commented on the issues
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx github sync\n  agentx github sync --json"
    )]
    Github(github::Github),
    /// Report that an agent starts or finishes work (then runs the monitor)
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx hook start engineer 42\n  agentx hook finish engineer 42"
    )]
    Hook(status::Hook),
    /// Run the monitor, then show which issues are blocked by open clarifications
    #[command(
        after_help = "Examples:\n  agentx ready\n  agentx ready --no-escalated\n  agentx ready --json"
    )]
    Ready(status::ReadyArgs),
    /// Show agent statuses, or set one (--agent A --status S [--issue N])
    #[command(
        after_help = "Examples:\n  agentx state\n  agentx state --agent engineer --status working --issue 42"
    )]
    State(status::StateArgs),
    /// Where the state lives: create or migrate the PostgreSQL schema, export, import
    #[command(
        subcommand,
        after_help = "The state is in PostgreSQL when AGENTX_STORE or [store] url in .agentx/config.toml\nnames a postgres:// URL (the variable wins), else in .agentx/state/.\n\nExamples:\n  agentx store init\n  agentx store export ./backup\n  agentx store import .          # this workspace's files into the database"
    )]
    Store(store::StoreCmd),
    /// Upgrade ledgers written by another tool (AgentX, the reference CLI) and say what changed
    #[command(
        after_help = "Examples:\n  agentx migrate --dry-run\n  agentx migrate\n  agentx migrate --json | jq '.migrated[].file'\n\nEach ledger is upgraded under its lock: snapshots set from the thread, unhashed\nentries hashed in order, timestamps in canonical form, no BOM. Ledgers that do not\nparse are reported and left untouched. Afterwards `agentx clarify verify` shows no\nwarnings for them (but for records that never got a question)."
    )]
    Migrate(migrate::MigrateArgs),
    /// Play a realistic story in a fresh workspace and print it as it happens
    #[command(after_help = "Examples:\n  agentx demo\n  agentx --root /tmp/demo demo")]
    Demo,
    /// Serve the hub to one agent over the Model Context Protocol (stdio)
    #[cfg(feature = "mcp")]
    #[command(
        after_help = "Examples:\n  agentx mcp --agent engineer --issue 42\n  claude mcp add clarify -- agentx mcp --agent engineer"
    )]
    Mcp(mcp::McpArgs),
    /// Serve the hub over HTTP: the web inbox where people answer escalations, /api/v1
    #[cfg(feature = "serve")]
    #[command(
        after_help = "Examples:\n  agentx serve\n  agentx --root ./project serve --as alice\n  agentx serve --listen 0.0.0.0:7700 --tls-cert cert.pem --tls-key key.pem\n\nOn start it prints a one-time sign-in link (10 minutes). Logs go to stderr;\nSIGINT/SIGTERM end it cleanly."
    )]
    Serve(serve::ServeArgs),
    /// Access tokens of `agentx serve`: new (printed once), list, revoke
    #[cfg(feature = "serve")]
    #[command(
        subcommand,
        after_help = "Examples:\n  agentx tokens new --human alice\n  agentx tokens new --agent engineer\n  agentx tokens new --agent engineer --operator alice\n  agentx tokens list --json\n  agentx tokens revoke alice"
    )]
    Tokens(serve::Tokens),
    /// Print a shell completion script
    #[command(
        after_help = "Example:\n  agentx completions bash > ~/.local/share/bash-completion/completions/agentx"
    )]
    Completions(completions::CompletionsArgs),
}
