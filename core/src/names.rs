//! Validation of everything a user names: issue numbers, agent names, workflow names,
//! clarification ids, and text limits (counted in Unicode scalar values).

use std::fmt;

use crate::error::ClarifyError;

/// Largest issue number (2^31 − 1); ledger file names are built only from validated numbers.
pub const MAX_ISSUE: u64 = 2_147_483_647;

/// Actors that may author entries but may never be asked.
pub const RESERVED_ACTORS: &[&str] = &["human", "monitor", "agent-x"];

pub const HUMAN: &str = "human";
pub const MONITOR: &str = "monitor";
pub const AGENT_X: &str = "agent-x";

/// Checks a numeric issue number.
pub fn check_issue(n: u64) -> Result<u32, ClarifyError> {
    if n <= MAX_ISSUE {
        u32::try_from(n).map_err(|_| ClarifyError::InvalidIssue {
            value: n.to_string(),
        })
    } else {
        Err(ClarifyError::InvalidIssue {
            value: n.to_string(),
        })
    }
}

/// Parses an issue number as typed by a user: `0` or a decimal without leading zeros,
/// at most 2^31 − 1. Anything path-like (`../1`, `1/2`, `-1`, `01`) is refused.
pub fn parse_issue(text: &str) -> Result<u32, ClarifyError> {
    let bad = || ClarifyError::InvalidIssue {
        value: text.to_owned(),
    };
    if !is_canonical_decimal(text) || text.len() > 10 {
        return Err(bad());
    }
    let n: u64 = text.parse().map_err(|_| bad())?;
    check_issue(n).map_err(|_| bad())
}

/// Decimal digits without a leading zero (`0` itself allowed).
pub(crate) fn is_canonical_decimal(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes {
        [] => false,
        [b'0'] => true,
        [b'0', ..] => false,
        _ => bytes.iter().all(u8::is_ascii_digit),
    }
}

/// `^[a-z0-9][a-z0-9-]{0,63}$`
pub fn check_agent(name: &str) -> Result<(), ClarifyError> {
    let why = if name.is_empty() {
        Some("it is empty")
    } else if name.len() > 64 {
        Some("it is longer than 64 characters")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        Some("only lowercase letters, digits and '-' are allowed")
    } else if name.starts_with('-') {
        Some("it must start with a letter or digit")
    } else {
        None
    };
    match why {
        Some(why) => Err(ClarifyError::InvalidAgent {
            name: name.to_owned(),
            why: why.to_owned(),
        }),
        None => Ok(()),
    }
}

pub fn is_reserved(name: &str) -> bool {
    RESERVED_ACTORS.contains(&name)
}

/// Workflow names: `^[a-z0-9][a-z0-9_-]{0,63}$`.
pub fn is_workflow_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['-', '_'])
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

pub fn check_workflow_name(name: &str) -> Result<(), ClarifyError> {
    if is_workflow_name(name) {
        Ok(())
    } else {
        Err(ClarifyError::InvalidWorkflow {
            name: name.to_owned(),
            why: String::from("is not a valid name: expected ^[a-z0-9][a-z0-9_-]{0,63}$"),
        })
    }
}

/// Operation names a record may block (docs/protocol.md §16): `^[a-z0-9][a-z0-9_.-]{0,63}$`.
pub fn is_operation_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['-', '_', '.'])
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        })
}

/// `INVALID_INPUT` unless `name` is an operation name.
pub fn check_operation(name: &str) -> Result<(), ClarifyError> {
    if is_operation_name(name) {
        Ok(())
    } else {
        Err(ClarifyError::input(format!(
            "invalid operation name '{}': expected ^[a-z0-9][a-z0-9_.-]{{0,63}}$",
            crate::error::shown(name)
        )))
    }
}

/// A UUID in its canonical text form (RFC 9562): 8-4-4-4-12 lowercase hex digits, any
/// version. One spelling only, since session ids are compared as text (idempotency keys).
pub fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        })
}

/// `INVALID_INPUT` unless `text` is a UUID; `field` names it.
pub fn check_uuid(field: &str, text: &str) -> Result<(), ClarifyError> {
    if is_uuid(text) {
        Ok(())
    } else {
        Err(ClarifyError::input(format!(
            "{field} '{}' is not a UUID: expected 8-4-4-4-12 lowercase hex digits, e.g. 123e4567-e89b-42d3-a456-426614174000",
            crate::error::shown(text)
        )))
    }
}

/// A parsed clarification id `CLR-<issue>-<seq>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClarificationId {
    pub issue: u32,
    pub seq: u64,
}

impl ClarificationId {
    pub fn new(issue: u32, seq: u64) -> Self {
        ClarificationId { issue, seq }
    }

    /// Parses `^CLR-(0|[1-9][0-9]*)-[0-9]{3,}$` with the issue part at most 2^31 − 1.
    pub fn parse(text: &str) -> Result<Self, ClarifyError> {
        let (issue, seq) = parse_seq_id(text, "CLR")?;
        Ok(ClarificationId { issue, seq })
    }
}

/// The next sequence number of `<prefix>-<issue>-<seq>` ids: max(existing) + 1 over the valid
/// ids of `issue` (never count + 1: ids may have gaps).
pub(crate) fn next_seq<'a>(ids: impl Iterator<Item = &'a str>, prefix: &str, issue: u32) -> u64 {
    ids.filter_map(|id| parse_seq_id(id, prefix).ok())
        .filter(|(i, _)| *i == issue)
        .map(|(_, seq)| seq)
        .max()
        .unwrap_or(0)
        .saturating_add(1)
}

/// Parses `^<prefix>-(0|[1-9][0-9]*)-[0-9]{3,}$` (issue at most 2^31 − 1) into (issue, seq).
pub(crate) fn parse_seq_id(text: &str, prefix: &str) -> Result<(u32, u64), ClarifyError> {
    let bad = |why: String| ClarifyError::InvalidId {
        id: text.to_owned(),
        why,
    };
    let shape = || {
        format!("expected {prefix}-<issue>-<seq> with a sequence of at least 3 digits, e.g. {prefix}-42-001")
    };
    let rest = text
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .ok_or_else(|| bad(shape()))?;
    let (issue, seq) = rest.split_once('-').ok_or_else(|| bad(shape()))?;
    if !is_canonical_decimal(issue) || seq.len() < 3 || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(shape()));
    }
    let issue = parse_issue(issue)
        .map_err(|_| bad(String::from("the issue part must be at most 2147483647")))?;
    let seq = seq
        .parse::<u64>()
        .map_err(|_| bad(String::from("the sequence number is too large")))?;
    Ok((issue, seq))
}

impl fmt::Display for ClarificationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CLR-{}-{:03}", self.issue, self.seq)
    }
}

/// Checks a required text (a question, an answer, a reason: a body): not empty after
/// trimming, at most `max` Unicode scalar values, no NUL or C0 control character but tab and
/// line breaks (docs/protocol.md §31: they break argv prompts and terminals downstream).
pub fn check_text(field: &str, text: &str, max: usize) -> Result<(), ClarifyError> {
    check_sized(field, text, max)?;
    check_controls(field, text, true)
}

/// Checks a required one-line text (a topic, a field, a suggestion, a key, an id): as
/// [`check_text`], with no control character at all (docs/protocol.md §31).
pub fn check_line(field: &str, text: &str, max: usize) -> Result<(), ClarifyError> {
    check_sized(field, text, max)?;
    check_controls(field, text, false)
}

/// `INVALID_INPUT` for the first NUL or C0 control character in `text`; tab, LF and CR
/// (a CRLF line end) are allowed in bodies.
pub fn check_controls(field: &str, text: &str, body: bool) -> Result<(), ClarifyError> {
    let allowed = |c: char| body && matches!(c, '\t' | '\n' | '\r');
    match text
        .chars()
        .enumerate()
        .find(|(_, c)| c.is_ascii_control() && *c != '\u{7f}' && !allowed(*c))
    {
        None => Ok(()),
        Some((at, c)) => Err(ClarifyError::input(format!(
            "{field} holds the control character U+{:04X} at character {}; {}",
            u32::from(c),
            at + 1,
            if body {
                "only tab and line breaks are allowed in it"
            } else {
                "it must be one line of text"
            }
        ))),
    }
}

fn check_sized(field: &str, text: &str, max: usize) -> Result<(), ClarifyError> {
    if text.trim().is_empty() {
        return Err(ClarifyError::TextEmpty {
            field: field.to_owned(),
        });
    }
    let len = text.chars().count();
    if len > max {
        return Err(ClarifyError::TextTooLong {
            field: field.to_owned(),
            len,
            max,
            unit: "characters",
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_and_control_characters_are_invalid_input() {
        assert!(check_text("question", "line one\n\tline two\r\n", 100).is_ok());
        let e = check_text("question", "a\0b", 100).unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        assert!(e.to_string().contains("U+0000 at character 2"), "{e}");
        assert_eq!(
            check_text("answer", "\u{1b}[2J", 100).unwrap_err().code(),
            "INVALID_INPUT"
        );
        assert_eq!(
            check_line("topic", "a\nb", 100).unwrap_err().code(),
            "INVALID_INPUT"
        );
        assert_eq!(
            check_line("topic", "a\tb", 100).unwrap_err().code(),
            "INVALID_INPUT"
        );
        // Whitespace only is still empty first; other Unicode stays allowed.
        assert_eq!(
            check_line("topic", " \t\n ", 100).unwrap_err().code(),
            "TEXT_EMPTY"
        );
        assert!(check_line("topic", "Café \u{202e} ü", 100).is_ok());
    }

    #[test]
    fn issue_numbers() {
        assert_eq!(parse_issue("0").unwrap(), 0);
        assert_eq!(parse_issue("2147483647").unwrap(), 2_147_483_647);
        for bad in [
            "",
            "01",
            "-1",
            "+1",
            "2147483648",
            "../1",
            "1/2",
            "1.0",
            " 1",
            "99999999999",
        ] {
            assert_eq!(
                parse_issue(bad).unwrap_err().code(),
                "INVALID_ISSUE",
                "{bad}"
            );
        }
    }

    #[test]
    fn agent_names() {
        for ok in ["engineer", "product-manager", "a", "0x", &"a".repeat(64)] {
            assert!(check_agent(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "Engineer",
            "eng_ineer",
            "é",
            &"a".repeat(65),
            "a b",
        ] {
            assert_eq!(
                check_agent(bad).unwrap_err().code(),
                "INVALID_AGENT",
                "{bad}"
            );
        }
    }

    #[test]
    fn ids() {
        assert_eq!(
            ClarificationId::parse("CLR-42-001").unwrap(),
            ClarificationId::new(42, 1)
        );
        assert_eq!(ClarificationId::parse("CLR-7-1000").unwrap().seq, 1000);
        assert_eq!(ClarificationId::new(7, 5).to_string(), "CLR-7-005");
        assert_eq!(ClarificationId::new(7, 1234).to_string(), "CLR-7-1234");
        for bad in [
            "CLR-42-01",
            "CLR-042-001",
            "clr-42-001",
            "CLR-42",
            "CLR--001",
            "CLR-2147483648-001",
            "CLR-1-001x",
            "CLR-1-99999999999999999999999",
        ] {
            assert_eq!(
                ClarificationId::parse(bad).unwrap_err().code(),
                "INVALID_ID",
                "{bad}"
            );
        }
    }

    #[test]
    fn text_limits_count_scalars() {
        assert!(check_text("topic", &"é".repeat(200), 200).is_ok());
        assert!(check_text("topic", &"🦀".repeat(200), 200).is_ok());
        assert_eq!(
            check_text("topic", &"🦀".repeat(201), 200)
                .unwrap_err()
                .code(),
            "TEXT_TOO_LONG"
        );
        assert_eq!(
            check_text("topic", " \n\t", 200).unwrap_err().code(),
            "TEXT_EMPTY"
        );
    }

    #[test]
    fn operation_names() {
        for ok in ["build", "deploy.prod", "db_migrate-2", "0", &"a".repeat(64)] {
            assert!(check_operation(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".build",
            "-x",
            "_x",
            "Build",
            "a b",
            "é",
            &"a".repeat(65),
        ] {
            assert_eq!(
                check_operation(bad).unwrap_err().code(),
                "INVALID_INPUT",
                "{bad}"
            );
        }
    }

    #[test]
    fn uuids() {
        assert!(is_uuid("123e4567-e89b-42d3-a456-426614174000"));
        assert!(is_uuid("00000000-0000-0000-0000-000000000000"));
        for bad in [
            "123E4567-E89B-42D3-A456-426614174000",
            "123e4567e89b42d3a456426614174000",
            "{123e4567-e89b-42d3-a456-426614174000}",
            "123e4567-e89b-42d3-a456-42661417400g",
            "123e4567-e89b-42d3-a4560426614174000",
            "",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
        let e = check_uuid("session id", "nope").unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT");
        assert!(
            e.to_string().contains("session id 'nope' is not a UUID"),
            "{e}"
        );
    }

    #[test]
    fn workflow_names() {
        assert!(is_workflow_name("feature"));
        assert!(is_workflow_name("hot_fix-2"));
        assert!(!is_workflow_name("../feature"));
        assert!(!is_workflow_name("_x"));
        assert!(!is_workflow_name("Feature"));
    }
}
