//! The JSON facade of subagent signals and delegation (docs/protocol.md §17–§18): the pure
//! functions (`signalsParse`, `extractJson`, `signalsIngest`, `resumePrompt`,
//! `delegationMetrics`) and the readers of delegation ledgers and manifests handed in.

use serde_json::{json, Map, Value};

use crate::call::{pure, store};
use crate::delegation::{self, Delegation, DelegationLedger, Manifests};
use crate::error::ClarifyError;
use crate::input::{self, given};
use crate::signals::{self, Existing};
use crate::signing::Signers;

/// `resumePrompt`: the text that resumes the agent of a clarification or a delegation.
pub(super) fn resume(r: pure::Resume) -> Result<Value, ClarifyError> {
    let resume = match (
        given(r.clarification.as_ref()),
        given(r.delegation.as_ref()),
    ) {
        (Some(v), None) => {
            let (issue, record) = input::clarification(v)?;
            signals::resume_record(issue, &record)
        }
        (None, Some(v)) => {
            let (issue, d) = delegation_object(v)?;
            signals::resume_delegation(issue, &d)
        }
        _ => {
            return Err(ClarifyError::input(
                "give one of `clarification` or `delegation`",
            ))
        }
    };
    Ok(resume_value(&resume))
}

/// `delegationMetrics`: seed 003's metrics and gap scores over the ledgers given.
pub(super) fn metrics(m: &pure::Metrics) -> Result<Value, ClarifyError> {
    let (ledgers, _) = input::workspace(m.ledgers.as_ref(), m.files.as_ref())?;
    let (delegations, _) = delegation_ledgers(m.delegations.as_ref())?;
    let metrics = delegation::metrics(
        &ledgers,
        &delegations,
        &manifests(m.manifests.as_ref())?,
        m.since.map(|s| s.0),
    );
    Ok(json!({ "delegations": metrics }))
}

/// `signalsParse`: every block with its typed view (`signal`, null when it has problems) and
/// all its problems — syntax first, then missing or bad fields — and the output's problems.
pub fn parse_value(text: &str) -> Value {
    let parsed = signals::parse(text);
    let blocks: Vec<Value> = parsed
        .blocks
        .iter()
        .map(|b| {
            let mut v = serde_json::to_value(b).unwrap_or(Value::Null);
            let (signal, problems) = match b.signal() {
                Ok(s) => (serde_json::to_value(s).unwrap_or(Value::Null), Vec::new()),
                Err(problems) => (Value::Null, problems),
            };
            if let Value::Object(m) = &mut v {
                m.insert("signal".into(), signal);
                if !problems.is_empty() {
                    m.insert("problems".into(), json!(problems));
                }
            }
            v
        })
        .collect();
    json!({ "blocks": blocks, "problems": parsed.problems })
}

/// A resume text as `resumePrompt` and `signals resume-prompt --json` give it: its parts and
/// the text.
pub fn resume_value(resume: &signals::Resume) -> Value {
    json!({ "resume": resume, "text": resume.text() })
}

/// `signalsIngest`: the decisions of `signals ingest` on the ledgers given, and the ledgers to
/// write (null: unchanged).
pub(super) fn ingest(on: pure::OnIngest, input: store::Ingest) -> Result<Value, ClarifyError> {
    let config = input::config(on.config.as_ref())?;
    let (ctx, text) = input.context()?;
    let now = pure::now(on.now)?;
    let ledger = input::opt_ledger(on.ledger.as_ref(), ctx.issue)?;
    let delegations = opt_delegations(on.delegations.as_ref(), ctx.issue)?;
    let workflows = input::workflows(on.workflows.as_ref())?;
    let manifests = manifests(on.manifests.as_ref())?;
    let existing = Existing {
        ledger: ledger.as_ref(),
        delegations: delegations.as_ref(),
    };
    let parsed = signals::parse(&text);
    let executed = signals::ingest(
        &parsed,
        &ctx,
        &existing,
        signals::Rules {
            config: &config,
            workflows: &workflows,
            manifests: &manifests,
        },
        now,
        &Signers::default(),
    )?;
    let mut out = match serde_json::to_value(&executed) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    out.insert(
        "ledger".into(),
        executed
            .ledger
            .as_ref()
            .map_or(Value::Null, |l| l.to_value()),
    );
    out.insert(
        "delegations".into(),
        executed
            .delegations
            .as_ref()
            .map_or(Value::Null, DelegationLedger::to_value),
    );
    Ok(Value::Object(out))
}

/// `manifests`: agent → manifest TOML text (a broken one is kept as its error, as a store
/// keeps it).
pub fn manifests(manifests: Option<&Value>) -> Result<Manifests, ClarifyError> {
    let mut out = Manifests::new();
    match given(manifests) {
        None => {}
        Some(Value::Object(items)) => {
            for (agent, text) in items {
                let text = text.as_str().ok_or_else(|| {
                    ClarifyError::input(format!("manifest `{agent}` must be TOML text"))
                })?;
                out.insert_text(agent, &format!("{agent}.toml"), text);
            }
        }
        Some(_) => {
            return Err(ClarifyError::input(
                "`manifests` must be an object of agent → TOML text",
            ))
        }
    }
    Ok(out)
}

fn delegation_ledger(
    file: &str,
    v: &Value,
    issue: Option<u32>,
) -> Result<DelegationLedger, ClarifyError> {
    match v {
        Value::String(text) => DelegationLedger::parse(file, text.as_bytes(), issue),
        other => {
            let bytes = serde_json::to_vec(other)
                .map_err(|e| ClarifyError::corrupt(file, e.to_string()))?;
            DelegationLedger::parse(file, &bytes, issue)
        }
    }
}

/// `delegations`: the issue's delegation ledger (an object or its file's text), if any.
pub fn opt_delegations(
    delegations: Option<&Value>,
    issue: u32,
) -> Result<Option<DelegationLedger>, ClarifyError> {
    let file = format!("delegations/issue-{issue}.json");
    given(delegations)
        .map(|v| delegation_ledger(&file, v, Some(issue)))
        .transpose()
}

/// `delegations`: every delegation ledger of a workspace (an array of objects or texts);
/// unreadable ones become report errors.
pub fn delegation_ledgers(
    delegations: Option<&Value>,
) -> Result<(Vec<DelegationLedger>, Vec<crate::monitor::ReportError>), ClarifyError> {
    let mut ledgers = Vec::new();
    let mut errors = Vec::new();
    match given(delegations) {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let file = format!("delegations[{i}]");
                match delegation_ledger(&file, item, None) {
                    Ok(l) => ledgers.push(l),
                    Err(e) => errors.push(crate::monitor::ReportError::new(file, &e)),
                }
            }
        }
        Some(_) => {
            return Err(ClarifyError::input(
                "`delegations` must be an array of delegation ledgers",
            ))
        }
    }
    Ok((ledgers, errors))
}

/// A delegation given as the outputs show it (with `issueNumber`).
fn delegation_object(value: &Value) -> Result<(u32, Delegation), ClarifyError> {
    let issue = value
        .get("issueNumber")
        .and_then(Value::as_u64)
        .or_else(|| {
            value
                .get("id")
                .and_then(Value::as_str)
                .and_then(|id| delegation::DelegationId::parse(id).ok())
                .map(|id| u64::from(id.issue))
        })
        .ok_or_else(|| ClarifyError::input("a delegation needs `issueNumber` or a valid `id`"))?;
    let issue = crate::names::check_issue(issue)?;
    let wrapped = json!({"issueNumber": issue, "delegations": [value]});
    let mut ledger = delegation_ledger("delegation", &wrapped, None)?;
    let d = ledger
        .delegations
        .pop()
        .ok_or_else(|| ClarifyError::input("`delegation` is empty"))?;
    Ok((issue, d))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::api::call;

    const T0: i64 = 1_795_341_600_000;

    fn ok(v: Value) -> Value {
        assert_eq!(v["ok"], true, "{v:#}");
        v
    }

    const ASK: &str = "chatter\n[CLARIFICATION_NEEDED]\nagent_id: engineer\nblocked_at: Cache\nquestions:\n  - Redis?\n[/CLARIFICATION_NEEDED]\n[DELEGATE_WORK]\nnew_task_description: Load-test it\ncapability: qa.load.test\n[/DELEGATE_WORK]\n";

    #[test]
    fn parse_gives_typed_views_and_problems() {
        let v = ok(call("signalsParse", &json!({"text": ASK})));
        assert_eq!(v["blocks"][0]["signal"]["questions"], json!(["Redis?"]));
        assert_eq!(v["blocks"][0]["problems"], json!([]));
        assert_eq!(v["blocks"][1]["block"], "DELEGATE_WORK");
        let bad = ok(call(
            "signalsParse",
            &json!({"text": "[STOP_WORK]\ndetails: x\n[/STOP_WORK]\n"}),
        ));
        assert_eq!(bad["blocks"][0]["wellFormed"], true);
        assert_eq!(bad["blocks"][0]["signal"], Value::Null);
        assert_eq!(bad["blocks"][0]["problems"][0]["line"], 1);
        let e = call("signalsParse", &json!({}));
        assert_eq!(e["error"]["code"], "INVALID_INPUT");
    }

    #[test]
    fn extract_json_says_how_it_found_the_value() {
        let v = ok(call(
            "extractJson",
            &json!({"text": "Tool call done.\n```json\n{\"a\": 1}\n```\n"}),
        ));
        assert_eq!(
            v["extracted"],
            json!({"value": {"a": 1}, "strategy": "json-fence", "line": 3})
        );
        let none = ok(call("extractJson", &json!({"text": "no json here"})));
        assert_eq!(none["extracted"], Value::Null);
    }

    #[test]
    fn ingest_decides_on_the_given_ledgers_and_returns_those_to_write() {
        let manifests = json!({"qa-agent": "version = \"1\"\nrole = \"qa\"\n[[capabilities]]\nname = \"qa.load\"\nconfidence = 0.8\n"});
        let input = json!({"issue": 42, "agent": "engineer", "parent": "architect", "text": ASK,
                           "manifests": manifests, "now": T0});
        let v = ok(call("signalsIngest", &input));
        assert_eq!(v["blocks"][0]["id"], "CLR-42-001");
        assert_eq!(v["blocks"][1]["id"], "DLG-42-001");
        assert_eq!(v["ledger"]["clarifications"][0]["to"], "architect");
        assert_eq!(v["delegations"]["delegations"][0]["to"], "qa-agent");
        assert_eq!(v["delegationEvents"][0]["type"], "delegation-requested");
        // The same output on the ledgers it produced: every block skipped, nothing to write.
        let mut again = input.clone();
        again["ledger"] = v["ledger"].clone();
        again["delegations"] = v["delegations"].clone();
        let w = ok(call("signalsIngest", &again));
        assert_eq!(w["blocks"][0]["outcome"], "skipped");
        assert_eq!(w["blocks"][1]["outcome"], "skipped");
        assert_eq!(
            (w["ledger"].clone(), w["delegations"].clone()),
            (Value::Null, Value::Null)
        );
        // A delegation ledger of another issue is corrupt for this one.
        let mut wrong = input;
        wrong["delegations"] = json!({"issueNumber": 7, "delegations": []});
        let e = call("signalsIngest", &wrong);
        assert_eq!(e["error"]["code"], "LEDGER_CORRUPT");
    }

    #[test]
    fn resume_prompts_from_records_and_delegations() {
        let v = ok(call(
            "signalsIngest",
            &json!({"issue": 42, "agent": "engineer", "parent": "architect", "text": ASK, "now": T0}),
        ));
        let record = &v["ledger"]["clarifications"][0];
        let mut shown = record.clone();
        shown["issueNumber"] = json!(42);
        let r = ok(call("resumePrompt", &json!({"clarification": shown})));
        assert_eq!(r["resume"]["kind"], "clarification-response");
        assert!(r["text"]
            .as_str()
            .unwrap()
            .starts_with("CLARIFICATION RESPONSE\n"));
        let d = &v["delegations"]["delegations"][0];
        let r = ok(call("resumePrompt", &json!({"delegation": d})));
        assert_eq!(r["resume"]["kind"], "delegation-approved");
        assert!(r["text"]
            .as_str()
            .unwrap()
            .contains("DLG-42-001 (issue #42)"));
        let e = call("resumePrompt", &json!({}));
        assert_eq!(e["error"]["code"], "INVALID_INPUT");
    }

    #[test]
    fn metrics_and_stats_take_delegation_ledgers() {
        let v = ok(call(
            "signalsIngest",
            &json!({"issue": 42, "agent": "engineer", "parent": "architect", "text": ASK, "now": T0}),
        ));
        let input = json!({"ledgers": [v["ledger"]], "delegations": [v["delegations"]]});
        let m = ok(call("delegationMetrics", &input));
        assert_eq!(m["delegations"]["total"], 1);
        assert_eq!(m["delegations"]["byStatus"]["REQUESTED"], 1);
        let s = ok(call("stats", &input));
        assert_eq!(s["stats"]["delegations"], m["delegations"]);
        let plain = ok(call("stats", &json!({"ledgers": [v["ledger"]]})));
        assert!(plain["stats"].get("delegations").is_none());
        let e = call("delegationMetrics", &json!({"delegations": {}}));
        assert_eq!(e["error"]["code"], "INVALID_INPUT");
    }
}
