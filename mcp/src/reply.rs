//! Tool results: the store's `--json` envelope as structured content, with a short text a
//! model reads first. A refusal (`ok: false`) is a tool result with `isError: true`, text
//! `<CODE>: <message>` and structured `{code, message}` (plus the record when one was written
//! anyway, as with `MAX_ROUNDS_EXCEEDED`); protocol errors are left to malformed calls.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Map, Value};

/// A refusal the server decides itself (bad arguments, a missing default issue).
pub fn refusal(code: &str, message: &str) -> CallToolResult {
    refusal_with(code, message, Map::new())
}

fn refusal_with(code: &str, message: &str, mut extra: Map<String, Value>) -> CallToolResult {
    let mut body = Map::new();
    body.insert("code".into(), Value::from(code));
    body.insert("message".into(), Value::from(message));
    body.append(&mut extra);
    let mut result = CallToolResult::structured_error(Value::Object(body));
    result.content = vec![ContentBlock::text(format!("{code}: {message}"))];
    result
}

/// A refusal of the command layer (a typed call's error), as every tool reports one.
pub fn failure(e: &agentx_clarify_core::ClarifyError) -> CallToolResult {
    envelope(agentx_clarify_core::envelope::failure(e), |_| String::new())
}

/// `INVALID_INPUT` for arguments that do not fit the tool's schema.
pub fn invalid(message: &str) -> CallToolResult {
    refusal("INVALID_INPUT", message)
}

/// The envelope as a result: structured as is when `ok`, with `text` rendered from it;
/// a refusal otherwise.
pub fn envelope(value: Value, text: impl FnOnce(&Value) -> String) -> CallToolResult {
    if value.get("ok") == Some(&Value::Bool(true)) {
        let summary = text(&value);
        let mut result = CallToolResult::structured(value);
        result.content = vec![ContentBlock::text(summary)];
        return result;
    }
    let error = value.get("error");
    let field = |key: &str| {
        error
            .and_then(|e| e.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut extra = Map::new();
    // What a refusal is about: the record, a closed gate's open gaps, an audit's findings.
    for key in ["clarification", "open", "verified", "problems"] {
        if let Some(v) = value.get(key).filter(|v| !v.is_null()) {
            extra.insert(key.into(), v.clone());
        }
    }
    let code = field("code");
    let code = if code.is_empty() { "INTERNAL" } else { &code };
    refusal_with(code, &field("message"), extra)
}

/// Text of the core's markdown renderer for `view` over `key: value` ("" if it cannot).
pub fn markdown(view: &str, key: &str, value: &Value) -> String {
    let input = json!({ "view": view, key: value });
    let out = agentx_clarify_core::api::call("renderMarkdown", &input);
    out.get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `CLR-42-001 · issue #42 · pending · round 1/3 · engineer → architect: Cache layer`
pub fn status_line(record: &Value) -> String {
    format!(
        "{} · issue #{} · {} · round {}/{} · {} → {}: {}",
        str_of(record, "id"),
        record.get("issueNumber").unwrap_or(&Value::Null),
        str_of(record, "status"),
        record.get("round").unwrap_or(&Value::Null),
        record.get("maxRounds").unwrap_or(&Value::Null),
        str_of(record, "from"),
        str_of(record, "to"),
        str_of(record, "topic"),
    )
}

/// A mutation: the record's status line and its latest round, and what the monitor did.
pub fn mutation_text(v: &Value) -> String {
    let Some(record) = v.get("clarification").filter(|r| !r.is_null()) else {
        return String::from("done");
    };
    let mut out = status_line(record);
    if v.get("idempotent") == Some(&Value::Bool(true)) {
        out.push_str("\n(idempotent replay: the request already existed; nothing written)");
    }
    if v.get("reused") == Some(&Value::Bool(true)) {
        out.push_str("\n(asked before: this is the record that already holds the question; nothing new was asked — its answer, if any, is below; ask with askAgain: true only if it must be asked anew)");
    }
    let round = markdown("round", "clarification", record);
    if !round.is_empty() {
        out.push_str("\n\n");
        out.push_str(&round);
    }
    out.push_str(&monitor_note(v.get("monitor")));
    out.push_str(&notes(v));
    out
}

/// What a command reports beside its result (docs/protocol.md §20): `warnings` (it succeeded, something
/// after its write did not) and `errors` (ledgers it could not read), one line each.
pub fn notes(v: &Value) -> String {
    let mut out = String::new();
    let items = |key: &str| {
        v.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for w in items("warnings") {
        out.push_str(&format!("\nwarning: {}", w.as_str().unwrap_or_default()));
    }
    for e in items("errors") {
        out.push_str(&format!(
            "\n{} could not be read [{}]: {}",
            str_of(&e, "file"),
            str_of(&e, "code"),
            str_of(&e, "message")
        ));
    }
    out
}

/// The monitor's report when it did something, else nothing.
fn monitor_note(report: Option<&Value>) -> String {
    let Some(report) = report else {
        return String::new();
    };
    let busy = report.as_object().is_some_and(|m| {
        m.values()
            .any(|v| v.as_array().is_some_and(|a| !a.is_empty()))
    });
    if busy {
        format!("\n\n{}", markdown("report", "report", report))
    } else {
        String::new()
    }
}

/// A list of records: one line each.
/// `clarify_search`'s text: one line per hit, its decision when it has one.
pub fn hits_text(v: &Value) -> String {
    let hits = v
        .get("hits")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if hits.is_empty() {
        return "no record matches: nothing was decided on this before".to_owned();
    }
    format!("{} record(s), best first:{}", hits.len(), hit_lines(&hits))
}

/// An ask's `related` records, when it has any: decided before in other issues.
pub fn related_text(v: &Value) -> String {
    let related = v
        .get("related")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if related.is_empty() {
        return String::new();
    }
    format!(
        "\ndecided before in other issues (use one if it answers you, or wait for the answer):{}",
        hit_lines(&related)
    )
}

fn hit_lines(hits: &[Value]) -> String {
    let mut out = String::new();
    for h in hits {
        out.push_str(&format!(
            "\n- {} (#{}, {}, score {}): {}: {}",
            str_of(h, "id"),
            h.get("issue").and_then(Value::as_u64).unwrap_or_default(),
            str_of(h, "status"),
            h.get("score").and_then(Value::as_u64).unwrap_or_default(),
            str_of(h, "topic"),
            str_of(h, "question"),
        ));
        if let Some(d) = h.get("decision").filter(|d| d.is_object()) {
            out.push_str(&format!(
                "\n  decided by {} at {}: {}",
                str_of(d, "by"),
                str_of(d, "at"),
                str_of(d, "text")
            ));
        }
        if let Some(by) = h.get("supersededBy").and_then(Value::as_str) {
            out.push_str(&format!("\n  superseded by {by}"));
        }
    }
    out
}

pub fn list_text(records: &[Value], empty: &str) -> String {
    if records.is_empty() {
        return empty.to_owned();
    }
    let mut out = format!("{} clarification(s):", records.len());
    for r in records {
        out.push_str("\n- ");
        out.push_str(&status_line(r));
    }
    out
}

/// The newest entry of `kind` in a record's thread, if any.
pub fn latest_body<'a>(record: &'a Value, kinds: &[&str]) -> Option<&'a str> {
    record
        .get("thread")?
        .as_array()?
        .iter()
        .rev()
        .find(|e| kinds.contains(&str_of(e, "type")))
        .map(|e| str_of(e, "body"))
}

/// `show`: one thread, or every thread of an issue.
pub fn show_text(v: &Value) -> String {
    if let Some(record) = v.get("clarification") {
        return markdown("thread", "clarification", record);
    }
    let ledger = v.get("ledger").unwrap_or(&Value::Null);
    let records = ledger
        .get("clarifications")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let issue = ledger.get("issueNumber").cloned().unwrap_or(Value::Null);
    if records.is_empty() {
        return format!("issue #{issue} has no clarifications");
    }
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Value::Object(m) = &mut r {
                m.insert("issueNumber".into(), issue.clone());
            }
            markdown("thread", "clarification", &r)
        })
        .collect::<Vec<_>>()
        .join("\n\n---\n\n")
}

/// `ready`: one line per issue, then the monitor's report when it acted.
pub fn ready_text(v: &Value) -> String {
    let issues = v
        .get("issues")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut lines: Vec<String> = issues
        .iter()
        .map(|i| {
            let n = i.get("issueNumber").unwrap_or(&Value::Null);
            let blocked = i
                .get("blocked")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if blocked.is_empty() {
                format!("#{n}: ready")
            } else {
                let why: Vec<String> = blocked
                    .iter()
                    .map(|b| {
                        format!(
                            "{} (waiting on {})",
                            str_of(b, "id"),
                            str_of(b, "waitingOn")
                        )
                    })
                    .collect();
                format!("#{n}: blocked by {}", why.join(", "))
            }
        })
        .collect();
    if lines.is_empty() {
        lines.push(String::from("no issue has clarifications"));
    }
    lines.join("\n") + &monitor_note(v.get("monitor"))
}

/// `monitor`: the report as markdown.
pub fn monitor_text(v: &Value, dry: bool) -> String {
    let report = markdown("report", "report", v.get("report").unwrap_or(&Value::Null));
    if dry {
        format!("(dry run: nothing written)\n{report}")
    } else {
        report
    }
}

/// `clarify_check`: the session and its decision, then one line per gap.
pub fn check_text(v: &Value) -> String {
    let mut out = format!(
        "session {}: {} ({} accepted, {} blocking, {} warning)",
        str_of(v, "session_id"),
        str_of(v, "status"),
        v.get("accepted_gaps").unwrap_or(&Value::Null),
        v.get("blocking_gaps").unwrap_or(&Value::Null),
        v.get("warning_gaps").unwrap_or(&Value::Null),
    );
    for g in v
        .get("gaps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&format!(
            "\n[{}] {} {} → {} ({})",
            str_of(g, "severity"),
            str_of(g, "id"),
            str_of(g, "field"),
            str_of(g, "clarificationId"),
            str_of(g, "status"),
        ));
        if let Some(answer) = g.get("answer").and_then(Value::as_str) {
            out.push_str(&format!(": {answer}"));
        }
    }
    out.push_str(&notes(v));
    out
}

/// `clarify_audit`: one line per round, then the verdict.
pub fn audit_text(v: &Value) -> String {
    let mut out = String::new();
    for r in v
        .get("chain")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let signed = |key: &str| {
            if r.get(key).is_some_and(|s| !s.is_null()) {
                "signed"
            } else {
                "unsigned"
            }
        };
        out.push_str(&format!(
            "round {} {}: asked {} ({}), answered {} ({}){}\n",
            r.get("round").unwrap_or(&Value::Null),
            str_of(r, "clarificationId"),
            str_of(r, "ask_timestamp"),
            signed("ask_signature"),
            r.get("answer_timestamp")
                .and_then(Value::as_str)
                .unwrap_or("-"),
            signed("answer_signature"),
            if r.get("resolved") == Some(&Value::Bool(true)) {
                ", resolved"
            } else {
                ""
            },
        ));
    }
    out.push_str(&format!(
        "{} round(s); verified: the hash chains and signatures check out",
        v.get("total_rounds").unwrap_or(&Value::Null)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_and_unreadable_ledgers_reach_the_agent() {
        let v = serde_json::json!({"ok": true, "clarification": null,
            "warnings": ["issue-1.json was written, but agent-status.json was not updated: x"],
            "errors": [{"file": "issue-3.json", "code": "LEDGER_CORRUPT", "message": "torn"}]});
        assert_eq!(
            notes(&v),
            "\nwarning: issue-1.json was written, but agent-status.json was not updated: x\nissue-3.json could not be read [LEDGER_CORRUPT]: torn"
        );
        assert_eq!(notes(&serde_json::json!({"ok": true})), "");
    }
}
