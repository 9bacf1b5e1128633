//! The prompt a routed agent receives (docs/protocol.md §14.2 step 3): the persona (when its CLI takes
//! none), who asks whom on which issue and workflow, the record's facts, the earlier rounds,
//! the question, and how to reply — the answer alone, or a `[CLARIFICATION_NEEDED]` block
//! (docs/protocol.md §17). Pure and deterministic: the same record gives the same bytes.

use std::fmt::Write;

use crate::kinds::{AnswerKind, AnswerSpec};
use crate::ledger::{EntryKind, Record};

/// Everything the prompt is built from.
#[derive(Clone, Copy, Debug)]
pub struct PromptInput<'a> {
    pub record: &'a Record,
    pub issue: u32,
    /// The ledger's workflow, when it has one.
    pub workflow: Option<&'a str>,
    /// Persona text to put at the head of the prompt: [`crate::routing::Invocation`]'s
    /// `prompt_persona` (`None` when the CLI took it as a system prompt).
    pub persona: Option<&'a str>,
    /// `max_body_chars`: a longer reply is refused, so the agent is told.
    pub max_answer_chars: u32,
    /// The questions this agent asked back about the record (records naming it in
    /// `askedBack`, [`crate::replies::replies`]): what it was told comes with the question.
    pub replies: &'a [&'a Record],
}

/// Builds the prompt.
pub fn build_prompt(input: &PromptInput<'_>) -> String {
    let r = input.record;
    let round = r.fold().round;
    let mut out = String::new();
    if let Some(persona) = input.persona {
        let _ = write!(out, "# Persona\n\n{}\n\n", persona.trim());
    }
    let workflow = input
        .workflow
        .map(|w| format!(" (workflow \"{w}\")"))
        .unwrap_or_default();
    let _ = write!(
        out,
        "# Clarification request {id}\n\n\
         The agent \"{from}\" asks you, the agent \"{to}\", a question on issue #{issue}{workflow}. \
         AgentX Clarify, the hub that keeps the issue's clarification ledger, routed it to you; \
         your reply is recorded in that ledger as your answer.\n\n",
        id = r.id,
        from = r.from,
        to = r.to,
        issue = input.issue,
    );
    facts(&mut out, input, round);
    earlier_rounds(&mut out, r, round);
    asked_back(&mut out, input.replies);
    let _ = write!(out, "## The question (round {round})\n\n");
    match r
        .thread
        .iter()
        .rev()
        .find(|e| e.kind == EntryKind::Question)
    {
        Some(q) => quote(&mut out, &q.body),
        None => out.push_str("> (no question text was recorded; the topic is the question)\n"),
    }
    reply_protocol(&mut out, input);
    out
}

fn facts(out: &mut String, input: &PromptInput<'_>, round: u32) {
    let r = input.record;
    let _ = writeln!(out, "- Clarification: {}", r.id);
    let _ = writeln!(out, "- Issue: #{}", input.issue);
    if let Some(w) = input.workflow {
        let _ = writeln!(out, "- Workflow: {w}");
    }
    let _ = writeln!(out, "- From: {}", r.from);
    let _ = writeln!(out, "- To: {} (you)", r.to);
    let _ = writeln!(out, "- Round: {round}/{}", r.max_rounds);
    let _ = writeln!(out, "- Topic: {}", one_line(&r.topic));
    if let Some(field) = &r.field {
        let _ = writeln!(out, "- Field: {}", one_line(field));
    }
    if !r.suggestions.is_empty() {
        out.push_str("- Acceptable answers:\n");
        for s in &r.suggestions {
            let _ = writeln!(out, "  - {}", one_line(s));
        }
    }
    kind_facts(out, &r.answer);
    out.push('\n');
}

/// The answer kind of a typed question (docs/protocol.md §22): the options, each value with its label and
/// description.
fn kind_facts(out: &mut String, spec: &AnswerSpec) {
    let what = match spec.kind {
        AnswerKind::Text => return,
        AnswerKind::Confirm => "yes or no",
        AnswerKind::Choice => "one of the options",
        AnswerKind::MultiChoice => "several of the options",
    };
    let _ = writeln!(out, "- Answer kind: {} ({what})", spec.kind.as_str());
    if spec.kind.has_options() {
        out.push_str("- Options (value: label):\n");
        for o in &spec.options {
            let _ = write!(out, "  - {}: {}", o.value, one_line(o.shown()));
            if let Some(d) = &o.description {
                let _ = write!(out, " — {}", one_line(d));
            }
            out.push('\n');
        }
    }
    if spec.kind == AnswerKind::MultiChoice {
        let _ = writeln!(out, "- Choose: {} to {}", spec.min(), spec.max());
    }
}

/// How to reply to a typed question: the value on the first line.
fn kind_protocol(out: &mut String, spec: &AnswerSpec) {
    let values = spec
        .options
        .iter()
        .map(|o| o.value.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    match spec.kind {
        AnswerKind::Text => return,
        AnswerKind::Confirm => out.push_str(
            "Put `yes` or `no` alone on the first line of your reply; explain on the next lines if it helps.\n",
        ),
        AnswerKind::Choice => {
            let _ = writeln!(
                out,
                "Put the value of the option you choose alone on the first line of your reply (one of: {values}); explain on the next lines if it helps."
            );
        }
        AnswerKind::MultiChoice => {
            let _ = writeln!(
                out,
                "Put the values of the options you choose on the first line of your reply, separated by commas ({} to {} of: {values}); explain on the next lines if it helps.",
                spec.min(),
                spec.max()
            );
        }
    }
    if spec.allows_other() {
        out.push_str("If no option fits, reply with your answer in your own words instead.\n");
    } else {
        out.push_str("Only these options are accepted: a reply whose first line is none of them is refused.\n");
    }
}

/// Questions and answers of the rounds before the current one, in thread order.
fn earlier_rounds(out: &mut String, r: &Record, round: u32) {
    let earlier: Vec<_> = r
        .thread
        .iter()
        .filter(|e| e.round < round && matches!(e.kind, EntryKind::Question | EntryKind::Answer))
        .collect();
    if earlier.is_empty() {
        return;
    }
    out.push_str("## Earlier rounds\n");
    let mut shown = 0;
    for e in earlier {
        if e.round != shown {
            shown = e.round;
            let _ = write!(out, "\n### Round {shown}\n");
        }
        let what = if e.kind == EntryKind::Question {
            "Question"
        } else {
            "Answer"
        };
        let _ = write!(out, "\n{what} from {}:\n", e.from);
        quote(out, &e.body);
    }
    out.push('\n');
}

/// The questions asked back and what the agent was told.
fn asked_back(out: &mut String, replies: &[&Record]) {
    if replies.is_empty() {
        return;
    }
    out.push_str(
        "## What you asked back\n\nBefore answering, you asked these questions; here is what you were told.\n",
    );
    for reply in replies {
        let _ = write!(out, "\n### {} to {}\n", reply.id, reply.to);
        for e in &reply.thread {
            let what = match e.kind {
                EntryKind::Question => "Question",
                EntryKind::Answer => "Answer",
                _ => continue,
            };
            let _ = write!(out, "\n{what} from {}:\n", e.from);
            quote(out, &e.body);
        }
        if !reply.thread.iter().any(|e| e.kind == EntryKind::Answer) {
            out.push_str("\n(no answer yet)\n");
        }
    }
    out.push('\n');
}

fn reply_protocol(out: &mut String, input: &PromptInput<'_>) {
    let r = input.record;
    let _ = write!(
        out,
        "\n## How to reply\n\n\
         Reply with the answer alone: no greeting, no restating of the question, no sign-off. \
         Your whole reply is recorded as the answer, so keep it under {max} characters.\n",
        max = input.max_answer_chars,
    );
    if !r.suggestions.is_empty() {
        out.push_str("When one of the acceptable answers fits, begin with it.\n");
    }
    kind_protocol(out, &r.answer);
    let _ = write!(
        out,
        "\nIf you cannot answer without more information, reply with only this block, filled in:\n\n\
         [CLARIFICATION_NEEDED]\n\
         agent_id: {to}\n\
         blocked_at: {topic}\n\
         questions:\n\
         - <your first question>\n\
         - <another question, if you need one>\n\
         to: <the agent to ask; leave this line out to ask {from}>\n\
         [/CLARIFICATION_NEEDED]\n",
        to = r.to,
        topic = one_line(&r.topic),
        from = r.from,
    );
}

/// A body as a markdown quote: every line starts with `>`, so no line of it can open a
/// signal block or a heading of the prompt.
fn quote(out: &mut String, body: &str) {
    for line in body.trim_end().lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            let _ = writeln!(out, "> {line}");
        }
    }
}

/// A value on one `key: value` line: line breaks become spaces.
fn one_line(text: &str) -> String {
    text.split(['\r', '\n'])
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ledger::Ledger;

    fn ledger() -> Ledger {
        let v = json!({"issueNumber": 42, "workflow": "feature", "clarifications": [{
            "id": "CLR-42-003", "from": "engineer", "to": "architect", "topic": "Cache\nlayer",
            "blocking": true, "status": "pending", "round": 2, "maxRounds": 3, "slaMinutes": 30,
            "retries": 0, "resolvedAt": null, "field": "cache.backend",
            "suggestions": ["Redis", "in-process"],
            "thread": [
                {"round": 1, "from": "engineer", "type": "question", "body": "Redis or in-process?\n\n[CLARIFICATION_NEEDED]\n# not a heading", "timestamp": "2026-11-22T10:00:00.000Z"},
                {"round": 1, "from": "monitor", "type": "stale", "body": "SLA expired", "timestamp": "2026-11-22T10:31:00.000Z"},
                {"round": 1, "from": "architect", "type": "answer", "body": "Redis, see ADR-7.", "timestamp": "2026-11-22T10:34:10.000Z"},
                {"round": 2, "from": "engineer", "type": "question", "body": "Which eviction policy?\n", "timestamp": "2026-11-22T10:36:00.000Z"}
            ]
        }, {
            "id": "CLR-42-004", "from": "tester", "to": "product-manager", "topic": "Export scope",
            "blocking": false, "status": "stale", "round": 1, "maxRounds": 6, "slaMinutes": 30,
            "retries": 1, "resolvedAt": null,
            "thread": [
                {"round": 1, "from": "tester", "type": "question", "body": "Is CSV export in scope?", "timestamp": "2026-11-22T11:00:00.000Z"},
                {"round": 1, "from": "monitor", "type": "stale", "body": "SLA expired", "timestamp": "2026-11-22T11:31:00.000Z"},
                {"round": 1, "from": "monitor", "type": "retry", "body": "retry 1 of 1", "timestamp": "2026-11-22T11:31:00.000Z"}
            ]
        }]});
        Ledger::from_value("issue-42.json", &v, None).unwrap()
    }

    fn golden(name: &str, actual: &str, want: &str) {
        assert_eq!(actual, want, "golden {name} differs; actual:\n{actual}");
    }

    #[test]
    fn full_prompt_golden() {
        let l = ledger();
        let text = build_prompt(&PromptInput {
            record: l.find("CLR-42-003").unwrap(),
            issue: 42,
            workflow: l.workflow.as_deref(),
            persona: Some("You are the architect.\nYou own the ADRs.\n"),
            max_answer_chars: 2000,
            replies: &[],
        });
        golden("prompt.txt", &text, include_str!("golden/prompt.txt"));
    }

    #[test]
    fn first_round_prompt_golden() {
        let l = ledger();
        let text = build_prompt(&PromptInput {
            record: l.find("CLR-42-004").unwrap(),
            issue: 42,
            workflow: None,
            persona: None,
            max_answer_chars: 500,
            replies: &[],
        });
        golden(
            "prompt-first-round.txt",
            &text,
            include_str!("golden/prompt-first-round.txt"),
        );
    }

    #[test]
    fn the_prompt_is_deterministic_and_follows_the_record() {
        let l = ledger();
        let r = l.find("CLR-42-003").unwrap();
        let input = PromptInput {
            record: r,
            issue: 42,
            workflow: Some("feature"),
            persona: None,
            max_answer_chars: 2000,
            replies: &[],
        };
        assert_eq!(build_prompt(&input), build_prompt(&input));
        let mut other = r.clone();
        other.to = "ux-designer".into();
        let text = build_prompt(&PromptInput {
            record: &other,
            ..input
        });
        assert!(text.contains("- To: ux-designer (you)\n"));
        assert!(text.contains("agent_id: ux-designer\n"));
        assert!(text.starts_with("# Clarification request CLR-42-003\n"));
    }

    #[test]
    fn a_record_without_a_question_still_gets_a_prompt() {
        let mut l = ledger();
        let r = l.clarifications.get_mut(1).unwrap();
        r.thread.clear();
        let text = build_prompt(&PromptInput {
            record: r,
            issue: 42,
            workflow: None,
            persona: None,
            max_answer_chars: 10,
            replies: &[],
        });
        assert!(text.contains("> (no question text was recorded; the topic is the question)\n"));
        assert!(
            text.contains("- Round: 1/6\n"),
            "the stored round of a legacy record"
        );
    }
}
