//! The default workflows of docs/protocol.md §6.2, as the text `agentx init` writes.

pub const FEATURE_TOML: &str = r#"# Feature workflow: the architect designs, the engineer implements.
# Clarify fields (all optional):
#   can_clarify              agents this step may ask (default: nobody)
#   clarify_max_rounds       1-20 (default: 5 blocking / 6 non-blocking)
#   clarify_sla_minutes      1-10080 (default: 30)
#   clarify_blocking_allowed true/false (default: true)

[[steps]]
id = "architecture"
agent = "architect"
can_clarify = ["product-manager"]
clarify_max_rounds = 3
clarify_sla_minutes = 60
clarify_blocking_allowed = true

[[steps]]
id = "implement"
agent = "engineer"
can_clarify = ["architect", "product-manager"]
clarify_max_rounds = 3
clarify_sla_minutes = 60
clarify_blocking_allowed = true
"#;

pub const STORY_TOML: &str = r#"# Story workflow: the engineer implements a user story.

[[steps]]
id = "implement"
agent = "engineer"
can_clarify = ["architect", "product-manager"]
clarify_max_rounds = 3
clarify_sla_minutes = 60
clarify_blocking_allowed = true
"#;

pub const BUG_TOML: &str = r#"# Bug workflow: fixes move fast, so clarifications may not block.

[[steps]]
id = "fix"
agent = "engineer"
can_clarify = ["architect", "product-manager"]
clarify_max_rounds = 2
clarify_sla_minutes = 30
clarify_blocking_allowed = false
"#;

/// `(type, file text)` for every default workflow.
pub const DEFAULT_WORKFLOWS: [(&str, &str); 3] = [
    ("feature", FEATURE_TOML),
    ("story", STORY_TOML),
    ("bug", BUG_TOML),
];

/// The `config.toml` that `agentx init` writes: the defaults, commented.
pub const CONFIG_TOML: &str = r#"# AgentX Clarify settings. Every key is optional; these are the defaults.
[clarify]
# Deadlock breaking: earlier = higher priority; unknown agents rank lowest.
priority = ["product-manager", "architect", "ux-designer", "engineer", "reviewer",
            "devops", "devops-engineer", "data-scientist", "tester", "customer-coach"]
stuck_similarity = 0.8     # strictly greater counts as repetition
max_retries = 1            # automatic retries of a stale clarification before escalation
max_topic_chars = 200
max_body_chars = 2000
lock_timeout_ms = 5000
stale_lock_ms = 30000
default_workflow = "feature"

[audit]
# true: `verify` reports every unsigned ledger entry (keys: `agentx keys new <agent>`).
require_signatures = false
"#;
