//! `agentx keys new|list` (Layer 4, docs/protocol.md §16): an agent's signing key pair, drawn
//! here (the layers below draw no randomness), and the workspace's keys.

mod ignore;

use agentx_clarify_command::keys::{list_json, list_keys, new_key};
use agentx_clarify_store::random_seed;
use agentx_clarify_workspace::WorkspaceStore as Workspace;
use clap::Subcommand;

use crate::exit::Outcome;
use crate::print;

#[derive(Subcommand, Debug)]
#[command(defer = true)] // built when invoked: see `Command` in cli.rs
pub enum Keys {
    /// Create an agent's ed25519 key pair (.agentx/keys/<agent>.pub and the private .key, 0600)
    #[command(
        after_help = "Examples:\n  agentx keys new agent-x      # the hub key: signs monitor, agent-x and human entries\n  agentx keys new engineer\n\nFrom then on every entry by that agent written in this workspace is signed, and\n`agentx clarify verify` checks the signatures against the .pub files. The private\nkey is never printed; .agentx/keys/.gitignore keeps *.key out of git."
    )]
    New { agent: String },
    /// List the workspace's keys: public key, whether the private key is here
    #[command(after_help = "Examples:\n  agentx keys list\n  agentx keys list --json")]
    List,
}

pub fn run(ws: &Workspace, json: bool, cmd: Keys) -> Outcome {
    match cmd {
        Keys::New { agent } => {
            let created = new_key(ws, &agent, &random_seed()?)?;
            let private = created.files.get(1).map_or("", String::as_str);
            let ignored = ignore::check(ws.files.root(), private);
            if json {
                print::json(&created.to_json());
                if ignored == ignore::Ignored::No {
                    print::warn(&format!(
                        "{private} is NOT git-ignored: add `*.key` to .agentx/keys/.gitignore"
                    ));
                }
            } else {
                print::text(&format!(
                    "created the key of {}: {}\n  public  {}\n  private {private} ({})",
                    created.agent,
                    created.public_key,
                    created.files.first().map_or("", String::as_str),
                    ignore::describe(&ignored, private),
                ));
            }
        }
        Keys::List => {
            let keys = list_keys(ws)?;
            if json {
                print::json(&list_json(&keys));
            } else if keys.is_empty() {
                print::text("no keys: `agentx keys new <agent>` creates one");
            } else {
                for k in &keys {
                    let mut line = format!(
                        "{:<20} {}",
                        k.agent,
                        k.public_key.as_deref().unwrap_or("(no .pub file)")
                    );
                    if k.private {
                        line.push_str("  [private key here: signs]");
                    }
                    if k.mismatch {
                        line.push_str("  [MISMATCH: the .pub is not this private key's]");
                    }
                    print::text(&line);
                }
            }
        }
    }
    Ok(0)
}
