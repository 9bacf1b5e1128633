//! A pure, in-memory model of the `agentx` CLI: the same files (as text), the same order of
//! checks, the same rhythm (validate → read → decide → write → statuses → monitor) and the same
//! `--json` shapes. The core vector runner plays the vectors against it; the CLI runner plays
//! them against the binary; both must satisfy the same expectations.

use std::collections::BTreeMap;

use agentx_clarify_core::agents::{
    self, apply_events, parse_statuses, set_status, statuses_to_json, Statuses,
};
use agentx_clarify_core::api::error_value;
use agentx_clarify_core::monitor::{monitor, Report, ReportError};
use agentx_clarify_core::names::{parse_issue, ClarificationId, MAX_ISSUE};
use agentx_clarify_core::verify::{issue_of_file_name, verify_file, Problem};
use agentx_clarify_core::views::{self, ListFilter};
use agentx_clarify_core::{
    act, request, Action, ClarifyError, Config, Event, Ledger, NewRequest, Status, Workflows,
};
use serde_json::{json, Map, Value};

use crate::{now_ms, setup_ledgers, setup_workflows};

const STATUS_FILE: &str = "agent-status.json";

/// A workspace as files.
pub struct Model {
    /// `.agentx/state/clarifications/<name>` → text.
    files: BTreeMap<String, String>,
    /// `.agentx/state/agent-status.json`.
    statuses: Option<String>,
    workflows: Vec<(String, String)>,
    config: Option<String>,
}

type Res = Result<Value, ClarifyError>;

fn fail(e: &ClarifyError) -> Value {
    json!({"ok": false, "error": error_value(e)})
}

fn arg_str(args: &Value, key: &str) -> Option<String> {
    args.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// An issue argument as the CLI sees it: text.
fn arg_issue(args: &Value, key: &str) -> Option<String> {
    match args.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    }
}

impl Model {
    pub fn new(setup: &Value) -> Model {
        Model {
            files: setup_ledgers(setup).into_iter().collect(),
            statuses: setup
                .get("statuses")
                .map(|s| format!("{}\n", serde_json::to_string_pretty(s).unwrap_or_default())),
            workflows: setup_workflows(setup),
            config: setup
                .get("config")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }

    /// Plays one case; returns the CLI-shaped result.
    pub fn run(&mut self, op: &str, args: &Value, now: i64) -> Value {
        let result = match op {
            "request" | "answer" | "followUp" | "resolve" | "escalate" | "abandon" => {
                return self.mutation(op, args, now)
            }
            "monitor" => self.monitor_cmd(args, now),
            "verify" => return self.verify(),
            "stats" => self.stats(args),
            "list" => self.list(args),
            "show" => self.show(args),
            "state" => self.state(args, now),
            "hook" => self.hook(args, now),
            "ready" => self.ready(args, now),
            "file" => Ok(self.file(args)),
            other => panic!("unknown op {other}"),
        };
        result.unwrap_or_else(|e| fail(&e))
    }

    fn config(&self) -> Result<Config, ClarifyError> {
        match &self.config {
            Some(text) => Config::parse("config.toml", text),
            None => Ok(Config::default()),
        }
    }

    fn workflow_set(&self) -> Workflows {
        let mut w = Workflows::new();
        for (name, text) in &self.workflows {
            w.insert_text(name, text);
        }
        w
    }

    fn read_statuses(&self) -> Result<Statuses, ClarifyError> {
        match &self.statuses {
            Some(text) => parse_statuses(STATUS_FILE, text.as_bytes()),
            None => Ok(Statuses::new()),
        }
    }

    fn write_statuses(&mut self, statuses: &Statuses) {
        self.statuses = Some(statuses_to_json(statuses));
    }

    fn ledger(&self, issue: u32) -> Result<Option<Ledger>, ClarifyError> {
        let name = format!("issue-{issue}.json");
        self.files
            .get(&name)
            .map(|text| Ledger::parse(&name, text.as_bytes(), Some(issue)))
            .transpose()
    }

    fn write_ledger(&mut self, ledger: &Ledger) {
        self.files.insert(
            format!("issue-{}.json", ledger.issue_number),
            ledger.to_pretty_json(),
        );
    }

    /// Ledger files in ascending issue order.
    fn ledger_files(&self) -> Vec<(u64, &String, &String)> {
        let mut out: Vec<_> = self
            .files
            .iter()
            .filter_map(|(name, text)| issue_of_file_name(name).map(|n| (n, name, text)))
            .collect();
        out.sort_by_key(|(n, _, _)| *n);
        out
    }

    fn all_ledgers(&self) -> (Vec<Ledger>, Vec<ReportError>) {
        let mut ledgers = Vec::new();
        let mut errors = Vec::new();
        for (n, name, text) in self.ledger_files() {
            if n > MAX_ISSUE {
                let e = ClarifyError::InvalidIssue {
                    value: n.to_string(),
                };
                errors.push(ReportError {
                    file: name.clone(),
                    code: e.code().into(),
                    message: e.to_string(),
                });
                continue;
            }
            match Ledger::parse(name, text.as_bytes(), u32::try_from(n).ok()) {
                Ok(l) => ledgers.push(l),
                Err(e) => errors.push(ReportError {
                    file: name.clone(),
                    code: e.code().into(),
                    message: e.to_string(),
                }),
            }
        }
        (ledgers, errors)
    }

    /// The monitor as every command runs it: writes changed ledgers, then statuses.
    fn run_monitor(&mut self, config: &Config, now: i64, dry_run: bool) -> (Report, Vec<Event>) {
        let (ledgers, errors) = self.all_ledgers();
        let statuses = self.read_statuses();
        let readable = statuses.clone().unwrap_or_default();
        let mut outcome = monitor(ledgers, errors, &readable, config, now);
        if let Err(e) = &statuses {
            outcome.report.errors.push(ReportError {
                file: STATUS_FILE.into(),
                code: e.code().into(),
                message: e.to_string(),
            });
            outcome.report.errors.sort_by(|a, b| a.file.cmp(&b.file));
        }
        if !dry_run {
            for ledger in outcome
                .ledgers
                .iter()
                .filter(|l| outcome.changed.contains(&l.issue_number))
            {
                let text = ledger.to_pretty_json();
                self.files
                    .insert(format!("issue-{}.json", ledger.issue_number), text);
            }
            if let Ok(mut s) = statuses {
                let before = s.clone();
                apply_events(&mut s, &outcome.events);
                if s != before {
                    self.write_statuses(&s);
                }
            }
        }
        (outcome.report, outcome.events)
    }

    fn mutation(&mut self, op: &str, args: &Value, now: i64) -> Value {
        match self.try_mutation(op, args, now) {
            Ok(v) => v,
            Err(e) => fail(&e),
        }
    }

    fn try_mutation(&mut self, op: &str, args: &Value, now: i64) -> Res {
        let config = self.config()?;
        let applied = if op == "request" {
            let issue_text = arg_issue(args, "issueNumber").unwrap_or_default();
            let issue = parse_issue(&issue_text)?;
            let req = NewRequest {
                issue_number: u64::from(issue),
                from: arg_str(args, "from").unwrap_or_default(),
                to: arg_str(args, "to").unwrap_or_default(),
                topic: arg_str(args, "topic").unwrap_or_default(),
                question: arg_str(args, "question").unwrap_or_default(),
                blocking: args
                    .get("blocking")
                    .and_then(Value::as_bool)
                    .unwrap_or(true),
                workflow: arg_str(args, "workflow"),
                step: arg_str(args, "step"),
                field: arg_str(args, "field"),
                suggestions: args
                    .get("suggestions")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
                idempotency_key: arg_str(args, "idempotencyKey"),
            };
            req.validate(&config)?;
            self.read_statuses()?;
            let ledger = self.ledger(issue)?;
            request(ledger.as_ref(), &req, &config, &self.workflow_set(), now)?
        } else {
            let id = arg_str(args, "id").unwrap_or_default();
            let from = arg_str(args, "from");
            let message = arg_str(args, "message");
            let action = match op {
                "answer" => Action::Answer {
                    from: from.unwrap_or_default(),
                    body: arg_str(args, "body").unwrap_or_default(),
                },
                "followUp" => Action::FollowUp {
                    from: from.unwrap_or_default(),
                    question: arg_str(args, "question").unwrap_or_default(),
                },
                "resolve" => Action::Resolve { from, message },
                "escalate" => Action::Escalate { from, message },
                _ => Action::Abandon { from, message },
            };
            let parsed = action.validate(&id, &config)?;
            self.read_statuses()?;
            let ledger = self
                .ledger(parsed.issue)?
                .ok_or(ClarifyError::NotFound { id: id.clone() })?;
            act(&ledger, &id, &action, &config, now)?
        };
        if !applied.idempotent {
            self.write_ledger(&applied.ledger);
        }
        if !applied.events.is_empty() {
            let mut statuses = self.read_statuses()?;
            apply_events(&mut statuses, &applied.events);
            self.write_statuses(&statuses);
        }
        let (report, monitor_events) = self.run_monitor(&config, now, false);
        let id = ClarificationId::parse(&applied.id)?;
        let clarification = self
            .ledger(id.issue)?
            .and_then(|l| l.find(&applied.id).map(|r| r.to_output(l.issue_number)))
            .unwrap_or(Value::Null);
        let mut events = applied.events;
        events.extend(monitor_events);
        let mut out = Map::new();
        match &applied.error {
            Some(e) => {
                out.insert("ok".into(), Value::Bool(false));
                out.insert("error".into(), error_value(e));
            }
            None => {
                out.insert("ok".into(), Value::Bool(true));
            }
        }
        out.insert("clarification".into(), clarification);
        out.insert("events".into(), json!(events));
        if applied.error.is_none() {
            out.insert("idempotent".into(), Value::Bool(applied.idempotent));
        }
        out.insert("monitor".into(), json!(report));
        Ok(Value::Object(out))
    }

    fn monitor_cmd(&mut self, args: &Value, now: i64) -> Res {
        let config = self.config()?;
        let dry = args.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
        let (report, events) = self.run_monitor(&config, now, dry);
        Ok(json!({"ok": true, "report": report, "events": events}))
    }

    fn verify(&self) -> Value {
        let files = self.ledger_files();
        let mut problems: Vec<Problem> = Vec::new();
        for (_, name, text) in &files {
            problems.extend(verify_file(name, text.as_bytes()));
        }
        if problems.is_empty() {
            json!({"ok": true, "problems": []})
        } else {
            let e = ClarifyError::LedgerInconsistent {
                message: format!(
                    "verify found {} problem(s) in {} ledger file(s)",
                    problems.len(),
                    files.len()
                ),
            };
            json!({"ok": false, "error": error_value(&e), "problems": problems})
        }
    }

    fn stats(&self, args: &Value) -> Res {
        let since = args.get("since").map(now_ms);
        let (ledgers, _) = self.all_ledgers();
        Ok(json!({"ok": true, "stats": agentx_clarify_core::stats::stats(&ledgers, since)}))
    }

    fn list(&self, args: &Value) -> Res {
        let issue = arg_issue(args, "issue")
            .map(|s| parse_issue(&s))
            .transpose()?;
        let statuses = args
            .get("status")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter_map(Status::parse)
                    .collect()
            })
            .unwrap_or_default();
        let filter = ListFilter {
            issue,
            statuses,
            all: args.get("all").and_then(Value::as_bool).unwrap_or(false),
        };
        let (ledgers, _) = self.all_ledgers();
        let records = views::list(&ledgers, &filter);
        Ok(json!({"ok": true, "clarifications": views::list_values(&records)}))
    }

    fn show(&self, args: &Value) -> Res {
        if let Some(id) = arg_str(args, "id") {
            let parsed = ClarificationId::parse(&id)?;
            let ledger = self
                .ledger(parsed.issue)?
                .ok_or(ClarifyError::NotFound { id: id.clone() })?;
            let record = ledger
                .find(&id)
                .ok_or(ClarifyError::NotFound { id: id.clone() })?;
            return Ok(json!({"ok": true, "clarification": record.to_output(ledger.issue_number)}));
        }
        let issue = parse_issue(&arg_issue(args, "issue").unwrap_or_default())?;
        let ledger = self
            .ledger(issue)?
            .ok_or(ClarifyError::NoLedger { issue })?;
        Ok(json!({"ok": true, "ledger": ledger.to_value()}))
    }

    fn state(&mut self, args: &Value, now: i64) -> Res {
        let mut statuses = self.read_statuses()?;
        if let (Some(agent), Some(status)) = (arg_str(args, "agent"), arg_str(args, "status")) {
            let issue = arg_issue(args, "issue")
                .map(|s| parse_issue(&s))
                .transpose()?;
            set_status(&mut statuses, &agent, &status, issue.map(u64::from), now)?;
            self.write_statuses(&statuses);
        }
        Ok(json!({"ok": true, "statuses": statuses}))
    }

    fn hook(&mut self, args: &Value, now: i64) -> Res {
        let config = self.config()?;
        let status = match arg_str(args, "event").as_deref() {
            Some("start") => agents::WORKING,
            Some("finish") => agents::DONE,
            other => panic!("hook event must be start or finish, found {other:?}"),
        };
        let agent = arg_str(args, "agent").unwrap_or_default();
        let issue = arg_issue(args, "issue")
            .map(|s| parse_issue(&s))
            .transpose()?;
        let mut statuses = self.read_statuses()?;
        let (written, _warning) =
            set_status(&mut statuses, &agent, status, issue.map(u64::from), now)?;
        self.write_statuses(&statuses);
        let (report, events) = self.run_monitor(&config, now, false);
        Ok(json!({"ok": true, "agent": written, "monitor": report, "events": events}))
    }

    fn ready(&mut self, args: &Value, now: i64) -> Res {
        let include_escalated = args.get("includeEscalated") == Some(&Value::Bool(true));
        let config = self.config()?;
        let (report, _) = self.run_monitor(&config, now, false);
        let (ledgers, _) = self.all_ledgers();
        Ok(
            json!({"ok": true, "issues": views::ready(&ledgers, include_escalated), "monitor": report}),
        )
    }

    fn file(&self, args: &Value) -> Value {
        let name = arg_str(args, "name").unwrap_or_default();
        let text = if name == STATUS_FILE {
            self.statuses.as_ref()
        } else {
            self.files.get(&name)
        };
        let content = match text {
            None => Value::Null,
            Some(t) => serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone())),
        };
        json!({"ok": true, "content": content})
    }
}
