//! The demo's routed chapter (issue 14): the hub runs the target agent's CLI and records what
//! it said. The agents are `examples/agents/` — scripts that print exactly what the real CLIs
//! print in headless mode — written into the demo's workspace, so the story runs real
//! processes wherever the binary is.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use agentx_clarify_core::ClarifyError;
use agentx_clarify_store::DiskStore as Workspace;

const AGENT_SH: &str = include_str!("../../../../examples/agents/lib/agent.sh");
const CLAUDE: &str = include_str!("../../../../examples/agents/claude");
const GEMINI: &str = include_str!("../../../../examples/agents/gemini");

/// What the architect's agent answers (the stand-in takes it from its runner's `env`).
pub const ARCHITECT_ANSWER: &str =
    "A token bucket per API key: 100 requests per minute, bursts of 20. See ADR-9.";

fn io(what: &str, path: &Path, e: &std::io::Error) -> ClarifyError {
    ClarifyError::Io {
        message: format!("cannot {what} {}: {e}", path.display()),
    }
}

/// Writes the agent scripts under `.agentx/demo-agents/` and gives the architect a Claude Code
/// runner and the product manager a Gemini CLI runner that fails (exit 1, an error on stderr).
pub fn install_runners(ws: &Workspace) -> Result<(), ClarifyError> {
    let dir = ws.root().join(".agentx/demo-agents");
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).map_err(|e| io("create", &lib, &e))?;
    for (name, text) in [
        ("lib/agent.sh", AGENT_SH),
        ("claude", CLAUDE),
        ("gemini", GEMINI),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| io("write", &path, &e))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io("chmod", &path, &e))?;
    }
    // JSON string literals are TOML basic strings too (quotes and backslashes escaped).
    let quoted = |s: &str| serde_json::Value::from(s).to_string();
    // Relative to the root: a program given as a path is inside the workspace
    // (docs/protocol.md §31); the runner resolves it against the absolute root.
    let script = |name: &str| quoted(&format!(".agentx/demo-agents/{name}"));
    let tables = format!(
        "\n# The demo's runners (docs/runners.md): stand-in agent CLIs from examples/agents/.\n\
         [agents.architect]\npreset = \"claude\"\ncommand = [{}]\ntimeout_seconds = 30\n\
         env = {{ AGENT_ANSWER = {} }}\n\n\
         [agents.product-manager]\npreset = \"gemini\"\ncommand = [{}]\ntimeout_seconds = 30\n\
         env = {{ AGENT_MODE = \"error\" }}\n",
        script("claude"),
        quoted(ARCHITECT_ANSWER),
        script("gemini"),
    );
    let config = ws.root().join(".agentx/config.toml");
    let mut text = std::fs::read_to_string(&config).map_err(|e| io("read", &config, &e))?;
    text.push_str(&tables);
    std::fs::write(&config, text).map_err(|e| io("write", &config, &e))
}
