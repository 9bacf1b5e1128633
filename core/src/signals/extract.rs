//! JSON out of mixed agent output (seed 004's strategies, docs/protocol.md §17), one pure function.
//!
//! The strategies, tried in this order; the first that yields a value wins:
//! 1. **plain**: the whole text (surrounding whitespace aside) is one JSON value;
//! 2. **fenced**: the *last* markdown fence tagged `json` (```` ```json ````, any case, `~~~`
//!    too) whose content is one JSON value; failing that, the last untagged fence that is;
//! 3. **after chatter**: a JSON object or array that starts at the beginning of a line (after
//!    indentation) and runs to the end of the text, tool chatter before it.
//!
//! Only one candidate of strategy 3 can succeed (a value running to the end cannot sit inside
//! another one that also does), so the order of trials only changes the cost. They run from
//! the end, where the answer usually is, under a budget of a few passes over the text: input
//! built to make every trial scan far gives up instead of taking quadratic time.

use serde::Serialize;
use serde_json::Value;

/// Which strategy found the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    Plain,
    JsonFence,
    Fence,
    AfterChatter,
}

/// A value found in mixed output, with where it starts (1-based line).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Extracted {
    pub value: Value,
    pub strategy: Strategy,
    pub line: usize,
}

/// The JSON value of mixed agent output, if any (see the module doc for which one).
pub fn extract_json(text: &str) -> Option<Value> {
    extract(text).map(|e| e.value)
}

/// Like [`extract_json`], saying which strategy found the value and where.
pub fn extract(text: &str) -> Option<Extracted> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let first = text.len() - text.trim_start().len();
        return Some(Extracted {
            value,
            strategy: Strategy::Plain,
            line: line_at(text, first),
        });
    }
    let lines = Lines::new(text);
    fenced(text, &lines).or_else(|| after_chatter(text, &lines))
}

/// Byte offsets of line starts.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { starts }
    }

    fn line<'a>(&self, text: &'a str, index: usize) -> &'a str {
        let start = self.starts.get(index).copied().unwrap_or(text.len());
        let end = self
            .starts
            .get(index + 1)
            .map_or(text.len(), |next| next - 1);
        text.get(start..end).unwrap_or("")
    }
}

fn line_at(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |t| t.matches('\n').count() + 1)
}

/// A fence's content: (first content line index, end line index exclusive, tagged json).
struct Fence {
    first: usize,
    end: usize,
    json: bool,
}

fn fences(text: &str, lines: &Lines) -> Vec<Fence> {
    let mut out = Vec::new();
    // (fence character, length, tagged json, first content line)
    let mut open: Option<(u8, usize, bool, usize)> = None;
    for i in 0..lines.starts.len() {
        let t = lines.line(text, i).trim();
        let Some(c) = t.bytes().next().filter(|c| *c == b'`' || *c == b'~') else {
            continue;
        };
        let run = t.bytes().take_while(|b| *b == c).count();
        if run < 3 {
            continue;
        }
        let info = t.get(run..).unwrap_or("").trim();
        match open {
            None => {
                let word = info.split_whitespace().next().unwrap_or("");
                open = Some((c, run, word.eq_ignore_ascii_case("json"), i + 1));
            }
            Some((oc, olen, json, first)) if c == oc && run >= olen && info.is_empty() => {
                out.push(Fence {
                    first,
                    end: i,
                    json,
                });
                open = None;
            }
            Some(_) => {}
        }
    }
    if let Some((_, _, json, first)) = open {
        out.push(Fence {
            first,
            end: lines.starts.len(),
            json,
        });
    }
    out
}

fn fenced(text: &str, lines: &Lines) -> Option<Extracted> {
    let all = fences(text, lines);
    for want_json in [true, false] {
        for f in all.iter().rev().filter(|f| f.json == want_json) {
            let start = lines.starts.get(f.first).copied().unwrap_or(text.len());
            let end = lines
                .starts
                .get(f.end)
                .map_or(text.len(), |s| s.saturating_sub(1));
            let Some(content) = text.get(start..end.max(start)) else {
                continue;
            };
            if let Ok(value) = serde_json::from_str::<Value>(content) {
                let lead = content.len() - content.trim_start().len();
                return Some(Extracted {
                    value,
                    strategy: if want_json {
                        Strategy::JsonFence
                    } else {
                        Strategy::Fence
                    },
                    line: line_at(text, start + lead),
                });
            }
        }
    }
    None
}

fn after_chatter(text: &str, lines: &Lines) -> Option<Extracted> {
    if !text.trim_end().ends_with(['}', ']']) {
        return None;
    }
    let mut budget = text.len().saturating_mul(4).saturating_add(4096);
    for i in (0..lines.starts.len()).rev() {
        let line = lines.line(text, i);
        let body = line.trim_start();
        if !body.starts_with(['{', '[']) {
            continue;
        }
        let start = lines.starts.get(i).copied().unwrap_or(0) + (line.len() - body.len());
        let rest = text.get(start..)?;
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let scanned = match stream.next() {
            Some(Ok(value)) => {
                let end = stream.byte_offset();
                if rest.get(end..).is_some_and(|tail| tail.trim().is_empty()) {
                    return Some(Extracted {
                        value,
                        strategy: Strategy::AfterChatter,
                        line: i + 1,
                    });
                }
                end
            }
            // The error's position, converted from (line, column) with the line table.
            Some(Err(e)) => lines
                .starts
                .get(i + e.line().saturating_sub(1))
                .map_or(rest.len(), |s| {
                    s.saturating_sub(start).saturating_add(e.column())
                }),
            None => rest.len(),
        };
        budget = budget.checked_sub(scanned.max(1))?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_json_wins_first() {
        let e = extract("  {\"a\": 1}\n").unwrap();
        assert_eq!(e.value, json!({"a": 1}));
        assert_eq!(e.strategy, Strategy::Plain);
        assert_eq!(extract_json("42"), Some(json!(42)));
        assert_eq!(extract_json("\"text\""), Some(json!("text")));
    }

    #[test]
    fn the_last_json_fence_wins_over_untagged_ones() {
        let text = "Here is an example:\n```json\n{\"example\": true}\n```\nand the result:\n```\n{\"untagged\": 1}\n```\n```JSON\n{\"result\": 2}\n```\nbye";
        let e = extract(text).unwrap();
        assert_eq!(e.value, json!({"result": 2}));
        assert_eq!(e.strategy, Strategy::JsonFence);
        assert_eq!(e.line, 10);
        // A json fence that does not parse falls back to an untagged one.
        let text = "```json\n{broken\n```\n~~~\n[1, 2]\n~~~\n";
        let e = extract(text).unwrap();
        assert_eq!(e.value, json!([1, 2]));
        assert_eq!(e.strategy, Strategy::Fence);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let e = extract("text\n```json\n{\"a\": [1]}\n").unwrap();
        assert_eq!(e.value, json!({"a": [1]}));
    }

    #[test]
    fn json_after_tool_chatter() {
        let text = "[2025-10-06T15:40:00] codex\n[exec] ls -la\nthinking...\n{\n  \"stage\": \"quality-gate-1\",\n  \"items\": [\n    {\"id\": 1},\n    {\"id\": 2}\n  ]\n}\n\n";
        let e = extract(text).unwrap();
        assert_eq!(e.strategy, Strategy::AfterChatter);
        assert_eq!(e.line, 4);
        assert_eq!(e.value["items"][1]["id"], json!(2));
        let e = extract("tokens used: 3\n  [1, {\"x\": null}]").unwrap();
        assert_eq!(e.value, json!([1, {"x": null}]));
    }

    #[test]
    fn nothing_when_no_value_runs_to_the_end() {
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("{\"a\": 1}\ntrailing words"), None);
        assert_eq!(extract_json("[INFO] starting\n[WARN] done"), None);
        assert_eq!(extract_json(""), None);
    }

    #[test]
    fn hostile_nesting_stays_within_the_budget() {
        // 100 candidate lines, each opening an array that runs (invalidly) to the end.
        let mut text = "[\n".repeat(100);
        text.push_str(&"1,\n".repeat(200_000));
        text.push(']');
        assert_eq!(extract_json(&text), None);
    }
}
