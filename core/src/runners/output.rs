//! Where a runner's answer is in its output, and how the output says the agent failed.
//!
//! This is data, not a parser: each preset states what its CLI documents (see
//! `docs/runners.md`), and the interpretation of a run reads stdout by these rules. A non-zero
//! exit, a signal or a timeout is a failure for every runner and is not repeated here.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// How to read one runner's stdout.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputSpec {
    /// Where the answer is.
    pub answer: AnswerAt,
    /// Values in the output that mean the agent failed even though it exited 0.
    pub errors: Vec<ErrorSignal>,
}

/// The location of the answer in stdout.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "format", rename_all = "lowercase")]
pub enum AnswerAt {
    /// All of stdout is the answer.
    Text,
    /// stdout (after any chatter, docs/protocol.md §17 extraction) is one JSON value; the answer is the
    /// string at `pointer` (RFC 6901).
    Json { pointer: String },
    /// stdout is JSON lines; the answer is the string at `pointer` in the last line that
    /// parses as JSON, has the pointer and passes every check of `when`.
    Jsonl { pointer: String, when: Vec<Check> },
}

/// A test on one JSON value (the document, or one line of JSON lines).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub pointer: String,
    pub test: Test,
}

/// What a [`Check`] asks of the value at its pointer.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "op", content = "value", rename_all = "camelCase")]
pub enum Test {
    /// The pointer resolves (to anything, `null` included).
    Present,
    /// The pointer resolves to this value.
    Equals(Value),
    /// The pointer resolves to a value other than this one (an absent value passes nothing).
    NotEquals(Value),
}

/// A failure reported inside the output: the value (JSON) or any line (JSON lines) passing
/// `check` means the agent failed; `message` points at its explanation in the same value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorSignal {
    pub check: Check,
    pub message: Option<String>,
}

impl Check {
    pub fn new(pointer: &str, test: Test) -> Self {
        Check {
            pointer: pointer.to_owned(),
            test,
        }
    }

    /// Whether `value` passes the check.
    pub fn passes(&self, value: &Value) -> bool {
        match (&self.test, value.pointer(&self.pointer)) {
            (Test::Present, found) => found.is_some(),
            (Test::Equals(want), Some(found)) => found == want,
            (Test::NotEquals(want), Some(found)) => found != want,
            (_, None) => false,
        }
    }
}

impl ErrorSignal {
    pub fn new(check: Check, message: Option<&str>) -> Self {
        ErrorSignal {
            check,
            message: message.map(str::to_owned),
        }
    }
}

/// The `answer` setting of a `command` runner: `text`, `json:<pointer>` or `jsonl:<pointer>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerFormat {
    Text,
    Json(String),
    Jsonl(String),
}

impl AnswerFormat {
    /// Parses the setting; the error says what is allowed.
    pub fn parse(text: &str) -> Result<AnswerFormat, String> {
        let pointer = |p: &str| check_pointer(p).map(|()| p.to_owned());
        if text == "text" {
            Ok(AnswerFormat::Text)
        } else if let Some(p) = text.strip_prefix("json:") {
            pointer(p).map(AnswerFormat::Json)
        } else if let Some(p) = text.strip_prefix("jsonl:") {
            pointer(p).map(AnswerFormat::Jsonl)
        } else {
            Err(format!(
                "must be \"text\", \"json:<JSON pointer>\" or \"jsonl:<JSON pointer>\", found \"{text}\""
            ))
        }
    }

    /// The output rules of a `command` runner answering this way.
    pub fn output(&self) -> OutputSpec {
        let answer = match self {
            AnswerFormat::Text => AnswerAt::Text,
            AnswerFormat::Json(p) => AnswerAt::Json { pointer: p.clone() },
            AnswerFormat::Jsonl(p) => AnswerAt::Jsonl {
                pointer: p.clone(),
                when: Vec::new(),
            },
        };
        OutputSpec {
            answer,
            errors: Vec::new(),
        }
    }
}

impl fmt::Display for AnswerFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnswerFormat::Text => f.write_str("text"),
            AnswerFormat::Json(p) => write!(f, "json:{p}"),
            AnswerFormat::Jsonl(p) => write!(f, "jsonl:{p}"),
        }
    }
}

impl Serialize for AnswerFormat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// RFC 6901: empty (the whole document) or `/`-separated tokens where `~` is only `~0`/`~1`.
fn check_pointer(p: &str) -> Result<(), String> {
    if !p.is_empty() && !p.starts_with('/') {
        return Err(format!(
            "JSON pointer \"{p}\" must be empty or start with '/' (RFC 6901), e.g. \"/result\""
        ));
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err(format!(
                "JSON pointer \"{p}\" has a '~' not followed by 0 or 1 (write ~0 for '~', ~1 for '/')"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answer_formats_parse_and_print_back() {
        for text in [
            "text",
            "json:/result",
            "json:",
            "jsonl:/item/text",
            "json:/a~1b~0c",
        ] {
            assert_eq!(AnswerFormat::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            AnswerFormat::parse("jsonl:/x").unwrap(),
            AnswerFormat::Jsonl("/x".into())
        );
        for (text, says) in [
            ("xml", "must be \"text\""),
            ("json:result", "must be empty or start with '/'"),
            ("jsonl:/a~2", "'~' not followed by 0 or 1"),
            ("json:/a~", "'~' not followed by 0 or 1"),
            ("JSON:/a", "must be \"text\""),
        ] {
            let e = AnswerFormat::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn checks_test_present_equal_and_different_values() {
        let v = json!({"is_error": true, "subtype": "error_max_turns", "n": null});
        assert!(Check::new("/is_error", Test::Equals(json!(true))).passes(&v));
        assert!(!Check::new("/is_error", Test::Equals(json!(false))).passes(&v));
        assert!(Check::new("/subtype", Test::NotEquals(json!("success"))).passes(&v));
        assert!(Check::new("/n", Test::Present).passes(&v));
        assert!(!Check::new("/missing", Test::Present).passes(&v));
        assert!(
            !Check::new("/missing", Test::NotEquals(json!("success"))).passes(&v),
            "an absent value differs from nothing"
        );
    }

    #[test]
    fn command_answers_become_output_rules() {
        assert_eq!(AnswerFormat::Text.output().answer, AnswerAt::Text);
        assert_eq!(
            AnswerFormat::Jsonl("/text".into()).output().answer,
            AnswerAt::Jsonl {
                pointer: "/text".into(),
                when: vec![]
            }
        );
        let json = serde_json::to_value(AnswerFormat::Json("/answer".into()).output()).unwrap();
        assert_eq!(
            json,
            json!({"answer": {"format": "json", "pointer": "/answer"}, "errors": []})
        );
    }
}
