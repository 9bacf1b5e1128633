//! Routing groundwork (docs/protocol.md §14): the runner tables of `.agentx/config.toml`, the exact
//! command line each preset runs, where its answer is, and the prompt an agent receives.
//! Pure like the rest of the core: starting the process belongs to the `runner` crate.
//!
//! The flow: [`crate::Config::parse_with_runners`] reads the runners; [`Runners::for_agent`] finds the target's runner (none: `NO_RUNNER`); the shell
//! reads its [`RunnerSpec::persona_file`]; [`Invocation::resolve`] gives the process to
//! start; [`build_prompt`] the text to send, bound with [`Invocation::argv`] and
//! [`Invocation::stdin`]; [`Invocation::output`] says where the answer will be. After the
//! run, [`interpret`] reads its [`RunResult`] into an [`Interpretation`], and [`decide`]
//! (under the ledger's lock) turns that into what to write and the [`Outcome`].

mod decide;
mod interpret;
mod invocation;
mod presets;
mod prompt;

// The runner tables and the asked-back link live below `config` and `monitor` (which use
// them); re-exported here so their public paths stay `routing::…`.
pub use crate::replies::{asked_back_from, awaiting_reply, linked, replies, ASKED_BACK};
pub use crate::runners::{
    default_persona_path, AnswerAt, AnswerFormat, Check, ErrorSignal, OutputSpec, PersonaFile,
    Preset, PromptMode, RunnerSpec, Runners, Test, DEFAULT_TABLE, DEFAULT_TIMEOUT_SECONDS,
    PROMPT_PLACEHOLDER,
};
pub use decide::{
    asked_back_request, decide, fit_to_kind, still_routable, Decision, Outcome, RunOf,
    NO_OPTION_FITS,
};
pub use interpret::{interpret, Interpretation, RunResult, MAX_CAUSE_CHARS};
pub use invocation::{persona_text, Invocation};
pub use presets::{PersonaVia, GEMINI_INSTRUCTION};
pub use prompt::{build_prompt, PromptInput};
