//! The commands people type in an issue comment (docs/github.md): `/resolve <id> <decision>`
//! and `/abandon <id> [reason]` on the comment's first line, and who may type them.

use serde_json::Value;

use crate::error::shown;
use crate::kinds::AnswerKind;
use crate::ledger::Record;
use crate::names::ClarificationId;

/// A command read from a comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// The decision is the rest of the first line and every line after it.
    Resolve {
        id: String,
        decision: String,
    },
    Abandon {
        id: String,
        reason: Option<String>,
    },
}

impl Command {
    pub fn id(&self) -> &str {
        match self {
            Command::Resolve { id, .. } | Command::Abandon { id, .. } => id,
        }
    }
}

/// The command of a comment: `None` when its first line is not one (the comment is not for
/// us), `Some(Err(reason))` when it is one but malformed.
pub fn parse_command(body: &str) -> Option<Result<Command, String>> {
    let body = body.trim_start_matches('\u{feff}').trim_start();
    let (first, rest) = body.split_once('\n').unwrap_or((body, ""));
    let first = first.trim();
    let (word, args) = first.split_once(char::is_whitespace).unwrap_or((first, ""));
    let resolve = match word {
        "/resolve" => true,
        "/abandon" => false,
        _ => return None,
    };
    let args = args.trim();
    let (id, tail) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    if id.is_empty() {
        return Some(Err(format!(
            "{word} needs a clarification id: {word} CLR-<issue>-<n> …"
        )));
    }
    if let Err(e) = ClarificationId::parse(id) {
        return Some(Err(e.to_string()));
    }
    let mut text = tail.trim().to_owned();
    let rest = rest.trim();
    if !rest.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(rest);
    }
    Some(if resolve {
        if text.is_empty() {
            Err(format!(
                "/resolve {id} needs a decision: /resolve {id} <decision>"
            ))
        } else {
            Ok(Command::Resolve {
                id: id.to_owned(),
                decision: text,
            })
        }
    } else {
        Ok(Command::Abandon {
            id: id.to_owned(),
            reason: (!text.is_empty()).then_some(text),
        })
    })
}

/// What a `/resolve` records on `record`: the message, and a value when the decision's first
/// word is one of the kind's answers (an option value; `yes`/`no`). Anything else is left to
/// the core's check of the answer, as from any other surface (free text where the kind
/// allows it, else `INVALID_ANSWER`).
pub fn decision_input(record: &Record, decision: &str) -> (String, Option<Value>) {
    let spec = &record.answer;
    if spec.kind == AnswerKind::Text {
        return (decision.to_owned(), None);
    }
    let first = decision.split_whitespace().next().unwrap_or("");
    let value = spec.match_reply(first);
    (decision.to_owned(), value)
}

/// Whether a user may act: their permission on the repository (`role_name`, e.g. `maintain`,
/// and the older `permission`, e.g. `write`) is in `answer_roles`.
pub fn permitted(role_name: Option<&str>, permission: Option<&str>, roles: &[String]) -> bool {
    [role_name, permission]
        .into_iter()
        .flatten()
        .any(|r| roles.iter().any(|allowed| allowed == r))
}

/// The name a GitHub login is recorded under (`by`): GitHub logins are case-insensitive, the
/// ledger's names are lower-case. `Err` for a login that is no person's name (`app[bot]`).
pub fn login_name(login: &str) -> Result<String, String> {
    let name = login.to_ascii_lowercase();
    crate::names::check_agent(&name)
        .map(|()| name)
        .map_err(|_| format!("'{}' cannot be recorded as a person", shown(login)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_read_from_the_first_line() {
        assert_eq!(parse_command("thanks!"), None);
        assert_eq!(parse_command("> /resolve CLR-1-001 x"), None);
        assert_eq!(
            parse_command("/resolve CLR-42-001 redis because\nit is there"),
            Some(Ok(Command::Resolve {
                id: "CLR-42-001".into(),
                decision: "redis because\nit is there".into()
            }))
        );
        assert_eq!(
            parse_command("  /abandon CLR-42-001"),
            Some(Ok(Command::Abandon {
                id: "CLR-42-001".into(),
                reason: None
            }))
        );
        assert!(matches!(parse_command("/resolve CLR-42-001"), Some(Err(_))));
        assert!(matches!(parse_command("/resolve"), Some(Err(_))));
        assert!(matches!(parse_command("/abandon CLR-x yes"), Some(Err(_))));
    }

    #[test]
    fn roles() {
        let roles = vec!["admin".to_owned(), "maintain".into(), "write".into()];
        assert!(permitted(Some("maintain"), Some("write"), &roles));
        assert!(permitted(None, Some("admin"), &roles));
        assert!(!permitted(Some("triage"), Some("read"), &roles));
        assert!(!permitted(None, None, &roles));
        assert_eq!(login_name("OctoCat").as_deref(), Ok("octocat"));
        assert!(login_name("dependabot[bot]").is_err());
    }
}
