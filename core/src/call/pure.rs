//! The inputs of the pure facade's functions (docs/api.md "Operations"): what a function
//! decides on — ledgers, settings and statuses handed in, the clock reading — and, for the
//! functions that are a command layer operation on given ledgers, that operation's own input
//! ([`super::store`]) beside it in the same object (`request` = [`OnNew`] + `store::Ask`).
//!
//! The ledgers, settings and statuses are accepted as objects or as their files' text, so
//! they stay JSON values here and are read by [`crate::input`]'s readers (a file that does not
//! parse is `LEDGER_CORRUPT` or `CONFIG_INVALID` with the same message on every surface).

use serde_json::Value;

use super::{Integer, IssueArg};
use crate::error::ClarifyError;

/// `now`, which a pure function cannot read itself.
pub fn now(now: Option<Integer>) -> Result<i64, ClarifyError> {
    let Integer(n) =
        now.ok_or_else(|| ClarifyError::input("`now` is required (epoch milliseconds)"))?;
    crate::ops::check_now(n)?;
    Ok(n)
}

crate::input! {
    /// What a new request (`request`, with `store::Ask`'s fields) is decided on.
    #[ts(rename = "OnNewRecord")]
    pub struct OnNew {
        /// The issue's ledger (object or raw file text); absent for a new issue.
        #[ts(optional, type = "Ledger | string | null")]
        pub ledger: Option<Value> = "ledger",
        #[ts(optional, type = "Workflows")]
        pub workflows: Option<Value> = "workflows",
        /// `.agentx/config.toml` as TOML text or a parsed config.
        #[ts(optional, type = "string | Partial<Config>")]
        pub config: Option<Value> = "config",
        /// `agent-status.json` as an object or raw text.
        #[ts(optional, type = "Statuses | string")]
        pub statuses: Option<Value> = "statuses",
        /// Epoch milliseconds.
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// What an operation on an existing record (`answer`, `followUp`, `resolve`, `escalate`,
    /// `abandon`) is decided on.
    #[ts(rename = "OnRecord")]
    pub struct OnRecord {
        #[ts(optional = false, type = "Ledger | string")]
        pub ledger: Option<Value> = "ledger",
        #[ts(optional, type = "string | Partial<Config>")]
        pub config: Option<Value> = "config",
        #[ts(optional, type = "Statuses | string")]
        pub statuses: Option<Value> = "statuses",
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// A workspace's ledgers: `ledgers` (objects) and `files` (raw texts by file name).
    #[ts(rename = "LedgersInput")]
    pub struct Ledgers {
        #[ts(optional, type = "Ledger[]")]
        pub ledgers: Option<Value> = "ledgers",
        /// Raw ledger files by name (`issue-<n>.json`).
        #[ts(optional, type = "Record<string, string>")]
        pub files: Option<Value> = "files",
    }
}

crate::input! {
    /// `monitor` on a workspace handed in.
    #[ts(rename = "MonitorInput")]
    pub struct Monitor {
        #[ts(optional, type = "Ledger[]")]
        pub ledgers: Option<Value> = "ledgers",
        #[ts(optional, type = "Record<string, string>")]
        pub files: Option<Value> = "files",
        #[ts(optional, type = "string | Partial<Config>")]
        pub config: Option<Value> = "config",
        #[ts(optional, type = "Statuses | string")]
        pub statuses: Option<Value> = "statuses",
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// How the pure `verify` and `audit` check signatures.
    #[ts(rename = "VerifyInput")]
    pub struct Verify {
        #[ts(optional, type = "Ledger[]")]
        pub ledgers: Option<Value> = "ledgers",
        #[ts(optional, type = "Record<string, string>")]
        pub files: Option<Value> = "files",
        /// Public keys by agent, `ed25519:<base64>`; a signed entry whose signer is not here is
        /// SIGNATURE_INVALID.
        #[ts(optional, type = "Record<string, string>")]
        pub public_keys: Option<Value> = "publicKeys",
        /// Unsigned entries are problems too; default: the `config`'s `[audit] require_signatures`.
        pub require_signatures: Option<bool> = "requireSignatures",
        #[ts(optional, type = "string | Partial<Config>")]
        pub config: Option<Value> = "config",
    }
}

crate::input! {
    /// `audit`: one record's chain (`id`), or every record of the ledger.
    #[ts(rename = "AuditInput")]
    pub struct Audit {
        /// A ledger object, or its file's text (a text that does not parse is LEDGER_CORRUPT).
        #[ts(optional = false, type = "Ledger | string")]
        pub ledger: Option<Value> = "ledger",
        pub id: Option<String> = "id",
        #[ts(optional, type = "Record<string, string>")]
        pub public_keys: Option<Value> = "publicKeys",
        pub require_signatures: Option<bool> = "requireSignatures",
        #[ts(optional, type = "string | Partial<Config>")]
        pub config: Option<Value> = "config",
    }
}

crate::input! {
    /// `stats` and `delegationMetrics`: the ledgers of both kinds and the manifests.
    #[ts(rename = "MetricsInput")]
    pub struct Metrics {
        #[ts(optional, type = "Ledger[]")]
        pub ledgers: Option<Value> = "ledgers",
        #[ts(optional, type = "Record<string, string>")]
        pub files: Option<Value> = "files",
        #[ts(optional, type = "(DelegationLedger | string)[]")]
        pub delegations: Option<Value> = "delegations",
        /// Agent → manifest TOML text (`.agentx/agents/<agent>.toml`).
        #[ts(optional, type = "Record<string, string>")]
        pub manifests: Option<Value> = "manifests",
        /// Epoch milliseconds: only records created since then.
        pub since: Option<Integer> = "since",
    }
}

crate::input! {
    /// `ready` on a workspace handed in.
    #[ts(rename = "ReadyInput")]
    pub struct Ready {
        #[ts(optional, type = "Ledger[]")]
        pub ledgers: Option<Value> = "ledgers",
        #[ts(optional, type = "Record<string, string>")]
        pub files: Option<Value> = "files",
        /// Default true: an escalated blocking record holds its issue too (`waitingOn: "human"`).
        pub include_escalated: Option<bool> = "includeEscalated",
    }
}

crate::input! {
    /// `setStatus`: one agent's entry of `agent-status.json`.
    #[ts(rename = "SetStatusInput")]
    pub struct SetStatus {
        #[ts(optional, type = "Statuses | string")]
        pub statuses: Option<Value> = "statuses",
        pub agent: String = "agent",
        #[ts(type = "AgentState")]
        pub status: String = "status",
        pub issue: Option<IssueArg> = "issue",
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// `parseWorkflow`, `parseConfig`: a file's text, and its name for the messages.
    #[ts(rename = "ParseInput")]
    pub struct Parse {
        pub text: String = "text",
        pub file: Option<String> = "file",
    }
}

crate::input! {
    /// `peopleList` (docs/protocol.md §37): `.agentx/people.toml`'s text, and the instant.
    #[ts(rename = "PeopleListInput")]
    pub struct PeopleList {
        pub text: String = "text",
        pub file: Option<String> = "file",
        /// Epoch milliseconds.
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// `peopleDeciders` (docs/protocol.md §37): whom a deciders list names at an instant.
    #[ts(rename = "PeopleDecidersInput")]
    pub struct PeopleDeciders {
        pub text: String = "text",
        pub file: Option<String> = "file",
        /// Person names and `role:<role>`, as a step's `deciders` lists them.
        pub deciders: Vec<String> = "deciders",
        /// Epoch milliseconds.
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// `renderMarkdown`, `renderText`: a view of records or a report.
    #[ts(rename = "RenderInput")]
    pub struct Render {
        #[ts(type = "'thread' | 'round' | 'escalation' | 'list' | 'report'")]
        pub view: String = "view",
        #[ts(optional, type = "Clarification")]
        pub clarification: Option<Value> = "clarification",
        /// `round`: which one (default the latest).
        pub round: Option<Integer> = "round",
        #[ts(optional, type = "Clarification[]")]
        pub clarifications: Option<Value> = "clarifications",
        #[ts(optional, type = "MonitorReport")]
        pub report: Option<Value> = "report",
    }
}

crate::input! {
    /// `renderText`'s own field (with [`Render`]'s).
    #[ts(rename = "ColorInput")]
    pub struct Color {
        /// ANSI colours.
        pub color: Option<bool> = "color",
    }
}

crate::input! {
    /// What the pure `signalsIngest` (with `store::Ingest`'s fields) decides on.
    #[ts(rename = "OnIngestLedgers")]
    pub struct OnIngest {
        #[ts(optional, type = "Ledger | string | null")]
        pub ledger: Option<Value> = "ledger",
        #[ts(optional, type = "DelegationLedger | string | null")]
        pub delegations: Option<Value> = "delegations",
        /// Agent → manifest TOML text (`.agentx/agents/<agent>.toml`).
        #[ts(optional, type = "Record<string, string>")]
        pub manifests: Option<Value> = "manifests",
        #[ts(optional, type = "Workflows")]
        pub workflows: Option<Value> = "workflows",
        #[ts(optional, type = "string | Partial<Config>")]
        pub config: Option<Value> = "config",
        #[ts(optional = false, type = "number")]
        pub now: Option<Integer> = "now",
    }
}

crate::input! {
    /// `resumePrompt`: give one of a clarification or a delegation (as the outputs show them).
    #[ts(rename = "ResumePromptInput")]
    pub struct Resume {
        #[ts(optional, type = "Clarification")]
        pub clarification: Option<Value> = "clarification",
        #[ts(optional, type = "Delegation")]
        pub delegation: Option<Value> = "delegation",
    }
}
