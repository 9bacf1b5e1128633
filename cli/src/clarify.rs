//! `agentx clarify …`: each clarify command from its flags to the command layer and back to
//! the terminal or `--json` (main.rs only dispatches to here).

use agentx_clarify_command as commands;
use agentx_clarify_core::listing::ListFilter;
use agentx_clarify_core::render::{text_list, text_stats, text_thread};
use agentx_clarify_core::{Action, ClarifyError, NewRequest, Severity};
use agentx_clarify_store::clock::{parse_now, system_now_ms};
use agentx_clarify_store::DiskStore;
use agentx_clarify_store_any::AnyStore as Workspace;
use serde_json::json;

use crate::args::{self, Clarify};
use crate::{
    exit, kinds, layer4, mutation, parse_issue_opt, previews, print, print_or, route, signals,
    Outcome,
};

pub fn run(ws: &Workspace, now: i64, fixed: bool, json: bool, cmd: Clarify) -> Outcome {
    // Routing reads the clock at each step (a run takes time), unless --now fixes it.
    let clock = move || if fixed { now } else { system_now_ms() };
    match cmd {
        Clarify::Ask(a) => {
            let a = *a;
            let issue = agentx_clarify_core::names::parse_issue(&a.issue)?;
            let req = NewRequest {
                issue_number: u64::from(issue),
                from: a.from,
                to: a.to,
                topic: a.topic,
                question: a.question,
                blocking: !a.non_blocking,
                workflow: a.workflow,
                step: a.step,
                field: a.field,
                suggestions: a.suggestions,
                idempotency_key: a.idempotency_key,
                severity: a
                    .severity
                    .map(|s| Severity::parse(&s).map_err(ClarifyError::input))
                    .transpose()?,
                context: a.context,
                blocked_operations: a.blocked_operations,
                session_id: a.session_id,
                gap_id: a.gap_id,
                answer: a.kinds.spec()?,
                ask_again: a.kinds.ask_again,
                extra: a
                    .asked_back_from
                    .map(|id| {
                        (
                            agentx_clarify_core::routing::ASKED_BACK.to_owned(),
                            id.into(),
                        )
                    })
                    .into_iter()
                    .collect(),
            };
            if a.route {
                return route::ask(ws, &clock, fixed.then_some(now), json, &req, a.wait);
            }
            mutation(json, &commands::ask(ws, now, &req)?)
        }
        Clarify::Route(a) => route::route(ws, &clock, json, a),
        Clarify::Reopen(a) if a.route => route::reopen(ws, &clock, json, a),
        Clarify::Reopen(a) => mutation(
            json,
            &commands::reopen(ws, now, &a.id, a.from.as_deref(), a.message.as_deref())?,
        ),
        Clarify::ResumePrompt { id } => signals::resume(ws, json, &id),
        Clarify::Answer {
            id,
            from,
            body,
            value,
        } => {
            let action = kinds::answer_action(ws, &id, from, body, &value)?;
            mutation(json, &commands::act(ws, now, &id, &action)?)
        }
        Clarify::FollowUp { id, from, question } => mutation(
            json,
            &commands::act(ws, now, &id, &Action::FollowUp { from, question })?,
        ),
        Clarify::Resolve(r) => {
            let c = r.close;
            let action = kinds::resolve_action(ws, &c.id, c.from, c.message, &r.value)?;
            mutation(json, &commands::act(ws, now, &c.id, &action)?)
        }
        Clarify::Escalate(c) => mutation(
            json,
            &commands::act(
                ws,
                now,
                &c.id,
                &Action::Escalate {
                    from: c.from,
                    message: c.message,
                },
            )?,
        ),
        Clarify::Abandon(c) => mutation(
            json,
            &commands::act(
                ws,
                now,
                &c.id,
                &Action::Abandon {
                    from: c.from,
                    message: c.message,
                },
            )?,
        ),
        Clarify::List { issue, status, all } => {
            let filter = ListFilter {
                issue: parse_issue_opt(issue.as_deref())?,
                statuses: status.into_iter().map(args::StatusArg::status).collect(),
                all,
            };
            let listed = commands::list(ws, &filter)?;
            print::report_errors(&listed.errors);
            if json {
                print::json(&listed.to_json());
            } else {
                let refs: Vec<_> = listed.records.iter().map(|(i, r)| (*i, r)).collect();
                print::text(&text_list(&refs, print::STYLE));
            }
            Ok(0)
        }
        Clarify::Show { id, issue } => {
            if let Some(id) = id {
                let (issue, record) = commands::show_id(ws, &id)?;
                if json {
                    print::json(&json!({"ok": true, "clarification": record.to_output(issue)}));
                } else {
                    print::text(&text_thread(issue, &record, print::STYLE));
                }
            } else {
                let issue =
                    agentx_clarify_core::names::parse_issue(issue.as_deref().unwrap_or(""))?;
                let ledger = commands::show_issue(ws, issue)?;
                if json {
                    print::json(&json!({"ok": true, "ledger": ledger.output()}));
                } else if ledger.clarifications.is_empty() {
                    print::text(&format!("issue #{issue} has no clarifications"));
                } else {
                    let threads: Vec<String> = ledger
                        .clarifications
                        .iter()
                        .map(|r| text_thread(issue, r, print::STYLE))
                        .collect();
                    print::text(&threads.join("\n\n"));
                }
            }
            Ok(0)
        }
        Clarify::Monitor {
            dry_run,
            route,
            no_route,
            jobs,
        } => {
            let wanted = (route || no_route).then_some(route);
            route::monitor(ws, &clock, json, dry_run, wanted, jobs)
        }
        Clarify::Check(a) => layer4::run_check(ws, now, json, a),
        Clarify::Audit(a) => layer4::run_audit(ws, json, &a),
        Clarify::Verify => {
            let outcome = commands::verify(ws)?;
            if !json {
                // Records written by another tool: `agentx migrate` upgrades them.
                for w in &outcome.warnings {
                    print::warn(&format!(
                        "{}  {}  {}",
                        w.file,
                        w.id.as_deref().unwrap_or("-"),
                        w.message
                    ));
                }
            }
            if json {
                print::json(&outcome.to_json());
            } else if outcome.problems.is_empty() {
                print::text(&format!(
                    "verified {} ledger file(s): no problems{}",
                    outcome.files,
                    if outcome.warnings.is_empty() {
                        String::new()
                    } else {
                        format!(", {} warning(s)", outcome.warnings.len())
                    }
                ));
            } else {
                for p in &outcome.problems {
                    print::text(&format!(
                        "{}  {}  {}",
                        p.file,
                        p.id.as_deref().unwrap_or("-"),
                        p.message
                    ));
                }
            }
            Ok(outcome.error().map_or(0, |e| {
                if !json {
                    print::error_line(&e);
                }
                exit::code(&e)
            }))
        }
        Clarify::Scope(a) => {
            let question = agentx_clarify_core::scope::Question {
                from: a.from.unwrap_or_default(),
                to: a.to.unwrap_or_default(),
                blocking: !a.non_blocking,
                workflow: a.workflow,
                step: a.step,
            };
            let issue = parse_issue_opt(a.issue.as_deref())?;
            let preview = commands::query::scope_preview(ws, &question, issue)?;
            let v = json!({"ok": true, "preview": preview});
            print_or(json, &v, || previews::scope_text(&question, &preview))
        }
        Clarify::Wakeup => {
            let monitor = commands::query::next_wakeup(ws, now)?;
            // A workspace with notification sinks: its outbox's next retry, ladder step
            // or reminder counts too (run `agentx notify send` at the wake-up as well).
            let notify = if DiskStore::new(ws.files.root()).notify_sinks()?.is_empty() {
                None
            } else {
                agentx_clarify_notify::home::Home::open(ws.files.root())?
                    .read_outbox()?
                    .next_due()
            };
            let wakeup = match (monitor, notify) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let mut v = json!({"ok": true, "wakeup": wakeup});
            if notify.is_some() {
                v["monitor"] = json!(monitor);
                v["notify"] = json!(notify);
            }
            print_or(json, &v, || previews::wakeup_text(wakeup, now))
        }
        Clarify::Graph { issue } => {
            let graphs = commands::query::wait_for_graphs(ws, parse_issue_opt(issue.as_deref())?)?;
            let v = json!({"ok": true, "graphs": graphs});
            print_or(json, &v, || previews::graph_text(&graphs))
        }
        Clarify::Stats { since } => {
            // Spelled as every surface spells the field (the vectors deep-equal the results).
            let since = since.as_deref().map(parse_now).transpose().map_err(|why| {
                ClarifyError::InvalidInput {
                    message: format!("`since`: {why}"),
                }
            })?;
            let outcome = commands::stats(ws, since)?;
            print::report_errors(&outcome.errors);
            if json {
                print::json(&outcome.to_json());
            } else {
                print::text(&text_stats(&outcome.stats));
            }
            Ok(0)
        }
    }
}
