use super::*;
use crate::ledger::Severity;

fn refused(v: &Value) -> String {
    let e = Plan::parse(v).unwrap_err();
    assert_eq!(e.code(), "INVALID_INPUT", "{e}");
    e.to_string()
}

#[test]
fn reads_seed_001s_document() {
    let p = plan();
    assert_eq!(p.session_id.as_deref(), Some(SESSION));
    assert_eq!(p.agent_id.as_deref(), Some("wwa-scaffold-v1.0.0"));
    assert_eq!(p.gaps.len(), 3);
    let g = &p.gaps[0];
    assert_eq!(g.field, "compliance.jurisdiction");
    assert_eq!(g.severity, Severity::Block);
    assert_eq!(g.blocked_operations, vec!["planner", "developer", "build"]);
    assert_eq!(g.suggestions.len(), 3);
    assert_eq!(p.gaps[1].severity, Severity::Warn);
    assert_eq!(p.gaps[1].context, None);
    assert_eq!(p.gaps[2].to.as_deref(), Some("product-manager"));
    assert_eq!(Plan::parse_text(&plan_value().to_string()).unwrap(), p);
}

#[test]
fn bad_shapes_name_the_gap_and_the_field() {
    let with = |edit: &dyn Fn(&mut Value)| {
        let mut v = plan_value();
        edit(&mut v);
        refused(&v)
    };
    assert_eq!(
        with(&|v| {
            v.as_object_mut().unwrap().remove("gaps");
        }),
        "invalid input: the plan has no `gaps`: expected an array of gaps"
    );
    assert_eq!(
        with(&|v| v["gaps"] = json!({})),
        "invalid input: plan: `gaps` must be an array"
    );
    assert_eq!(
        with(&|v| {
            v["gaps"][1].as_object_mut().unwrap().remove("question");
        }),
        "invalid input: gap 'gap-002': `question` is required (a string)"
    );
    assert_eq!(
        with(&|v| v["gaps"][1]["severity"] = json!("CRITICAL")),
        "invalid input: gap 'gap-002': unknown severity 'CRITICAL'; allowed: BLOCK, WARN"
    );
    assert_eq!(
        with(&|v| v["gaps"][1]["severity"] = json!("block")),
        "invalid input: gap 'gap-002': unknown severity 'block'; allowed: BLOCK, WARN"
    );
    assert_eq!(
        with(&|v| {
            v["gaps"][0].as_object_mut().unwrap().remove("severity");
        }),
        "invalid input: gap 'gap-001': `severity` is required (a string)"
    );
    assert_eq!(
        with(&|v| {
            v["gaps"][2].as_object_mut().unwrap().remove("id");
        }),
        "invalid input: gaps[2]: `id` is required (a string)"
    );
    assert_eq!(
        with(&|v| v["gaps"][2]["id"] = json!("gap-001")),
        "invalid input: gap 'gap-001' appears twice (gaps[0] and gaps[2]); gap ids must be unique"
    );
    assert_eq!(
        with(&|v| v["gaps"][0]["blocked_operation"] = json!(["build"])),
        "invalid input: gap 'gap-001': unknown field `blocked_operation`; known: id, field, severity, question, context, suggestions, blocked_operations, to, answer_kind, options, allow_other, min_select, max_select"
    );
    assert_eq!(
        with(&|v| v["gaps"][0]["blocked_operations"] = json!("build")),
        "invalid input: gap 'gap-001': `blocked_operations` must be an array of strings"
    );
    assert_eq!(
        with(&|v| v["gaps"][0]["field"] = json!(7)),
        "invalid input: gap 'gap-001': `field` must be a string"
    );
    assert_eq!(
        with(&|v| v["gaps"][1] = json!("gap-002")),
        "invalid input: gaps[1] must be an object"
    );
    assert_eq!(
        with(&|v| v["session_id"] = json!("not-a-uuid")),
        "invalid input: plan session_id 'not-a-uuid' is not a UUID: expected 8-4-4-4-12 lowercase hex digits, e.g. 123e4567-e89b-42d3-a456-426614174000"
    );
    assert_eq!(
        with(&|v| v["session_id"] = json!(5)),
        "invalid input: plan: `session_id` must be a string"
    );
    assert_eq!(
        refused(&json!([1])),
        "invalid input: the plan must be a JSON object with `gaps`"
    );
    let e = Plan::parse_text("{gaps").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid input: the plan is not JSON: "),
        "{e}"
    );
    let e = Plan::parse(
        &json!({"gaps": [{"id": " ", "field": "f", "severity": "BLOCK", "question": "q"}]}),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "gaps[0] id is empty: at least 1 character is required"
    );
    let e = Plan::parse(&json!({"gaps": [{"id": "g".repeat(65), "field": "f", "severity": "BLOCK", "question": "q"}]})).unwrap_err();
    assert_eq!(
        e.to_string(),
        "gaps[0] id is too long: 65 characters, at most 64 allowed"
    );
}

#[test]
fn ten_thousand_gaps_are_over_the_limit() {
    let gap = |i: usize| json!({"id": format!("gap-{i}"), "field": "f", "severity": "WARN", "question": "q?"});
    let many: Vec<Value> = (0..10_000).map(gap).collect();
    assert_eq!(
        refused(&json!({"gaps": many})),
        "invalid input: the plan has 10000 gaps; at most 100 are allowed"
    );
    let most: Vec<Value> = (0..MAX_PLAN_GAPS).map(gap).collect();
    assert_eq!(
        Plan::parse(&json!({"gaps": most})).unwrap().gaps.len(),
        MAX_PLAN_GAPS
    );
}

#[test]
fn a_response_fed_back_is_a_plan() {
    let first = run_check(None, &plan(), T0);
    let fed = serde_json::to_value(&first.response).unwrap();
    let again = Plan::parse(&fed).unwrap();
    assert_eq!(again.gaps.len(), 3);
    assert_eq!(again.session_id.as_deref(), Some(SESSION));
    // Its gaps carry the target that was used and null context: the same requests.
    let second = run_check(Some(&first.ledger), &again, T0 + 1000);
    assert!(!second.changed);
}

#[test]
fn an_empty_plan_is_ready() {
    let p = Plan::parse(&json!({"gaps": []})).unwrap();
    let c = run_check(None, &p, T0);
    assert_eq!(c.response.status, "ready_to_proceed");
    assert_eq!(c.response.session_id, NEW_SESSION);
    assert!(!c.changed);
}
