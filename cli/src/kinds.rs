//! The answer kind flags (docs/protocol.md §22): `ask --kind … --option value=Label … [--no-other]
//! [--min N --max N] [--ask-again]`, and `--value` on `answer` and `resolve`, turned into the
//! core's request fields and actions.

use agentx_clarify_command::{self as commands};
use agentx_clarify_core::kinds::{AnswerKind, AnswerOption, AnswerSpec};
use agentx_clarify_core::{Action, ClarifyError};
use agentx_clarify_store_any::AnyStore as Workspace;
use clap::Args;

#[derive(Args, Debug, Default)]
pub struct KindArgs {
    /// The answer kind: text (default), confirm, choice or multi_choice
    #[arg(long, value_name = "KIND")]
    pub kind: Option<String>,
    /// An option of a choice kind, `value` or `value=Label` (repeatable, 2–10)
    #[arg(long = "option", value_name = "VALUE[=LABEL]")]
    pub options: Vec<String>,
    /// A longer description of an option, `value=text` (repeatable; the value names an --option)
    #[arg(long = "describe", value_name = "VALUE=TEXT")]
    pub descriptions: Vec<String>,
    /// Choice kinds: accept only the options (no free-text answer)
    #[arg(long)]
    pub no_other: bool,
    /// multi_choice: the fewest options an answer may choose (default 1)
    #[arg(long = "min", value_name = "N")]
    pub min_select: Option<u32>,
    /// multi_choice: the most options an answer may choose (default: all)
    #[arg(long = "max", value_name = "N")]
    pub max_select: Option<u32>,
    /// Ask even when the issue already holds this question (no reuse)
    #[arg(long)]
    pub ask_again: bool,
}

impl KindArgs {
    /// The request's answer kind (checked with the request by the core).
    pub fn spec(&self) -> Result<AnswerSpec, ClarifyError> {
        let kind = match &self.kind {
            Some(k) => AnswerKind::parse(k)?,
            None => AnswerKind::Text,
        };
        let mut options: Vec<AnswerOption> = self
            .options
            .iter()
            .map(|o| {
                let (value, label) = match o.split_once('=') {
                    Some((v, l)) => (v, Some(l.to_owned())),
                    None => (o.as_str(), None),
                };
                AnswerOption {
                    value: value.to_owned(),
                    label,
                    description: None,
                }
            })
            .collect();
        for d in &self.descriptions {
            let Some((value, text)) = d.split_once('=') else {
                return Err(ClarifyError::input(format!(
                    "--describe takes VALUE=TEXT, e.g. --describe 'redis=Shared, needs ops'; found \"{}\"",
                    agentx_clarify_core::error::shown(d)
                )));
            };
            let option = options
                .iter_mut()
                .find(|o| o.value == value)
                .ok_or_else(|| {
                    ClarifyError::input(format!(
                        "--describe names no --option \"{}\"",
                        agentx_clarify_core::error::shown(value)
                    ))
                })?;
            option.description = Some(text.to_owned());
        }
        Ok(AnswerSpec {
            kind,
            options,
            allow_other: self.no_other.then_some(false),
            min_select: self.min_select,
            max_select: self.max_select,
        })
    }
}

/// The typed value `--value` words give for record `id`: its answer kind says how to read
/// them (yes/no, one option, several), so the record is read first.
fn value_of(ws: &Workspace, id: &str, texts: &[String]) -> Result<serde_json::Value, ClarifyError> {
    let (_, record) = commands::show_id(ws, id)?;
    record.answer.value_from_texts(texts)
}

/// `answer ID --from B [--body TEXT] [--value V]…`.
pub fn answer_action(
    ws: &Workspace,
    id: &str,
    from: String,
    body: Option<String>,
    values: &[String],
) -> Result<Action, ClarifyError> {
    if values.is_empty() {
        let body =
            body.ok_or_else(|| ClarifyError::input("an answer needs --body or --value (or both)"))?;
        return Ok(Action::Answer { from, body });
    }
    Ok(Action::AnswerValue {
        from,
        body,
        value: value_of(ws, id, values)?,
    })
}

/// `resolve ID [--from A] [-m TEXT] [--value V]…`.
pub fn resolve_action(
    ws: &Workspace,
    id: &str,
    from: Option<String>,
    message: Option<String>,
    values: &[String],
) -> Result<Action, ClarifyError> {
    if values.is_empty() {
        return Ok(Action::Resolve { from, message });
    }
    Ok(Action::ResolveValue {
        from,
        message,
        value: value_of(ws, id, values)?,
    })
}
