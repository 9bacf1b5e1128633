//! `agentx completions SHELL`: the shell completion script of the whole grammar.

use std::io::Write;

use clap::{Args, CommandFactory};

use crate::cli::Cli;
use crate::exit::Outcome;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub fn run(a: &CompletionsArgs) -> Outcome {
    // Generated in memory: clap_complete panics when its writer fails, and a closed
    // pipe (`agentx completions bash | head`) must end the command quietly.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "agentx", &mut script);
    let _ = std::io::stdout().write_all(&script);
    Ok(0)
}
