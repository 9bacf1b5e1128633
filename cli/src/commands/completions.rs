//! `agentx completions SHELL`: the shell completion script of the whole grammar.

use std::io::Write;

use clap::Args;

use crate::exit::Outcome;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `grammar` is the whole command line's (`Cli::command()`, handed down by `main`).
pub fn run(a: &CompletionsArgs, mut grammar: clap::Command) -> Outcome {
    // Generated in memory: clap_complete panics when its writer fails, and a closed
    // pipe (`agentx completions bash | head`) must end the command quietly.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut grammar, "agentx", &mut script);
    let _ = std::io::stdout().write_all(&script);
    Ok(0)
}
