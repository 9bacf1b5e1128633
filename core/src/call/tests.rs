use serde_json::{json, Value};

use super::pure::OnNew;
use super::store::{Ask, Nothing, OptionInput, Text};
use super::*;

fn refused<T: Input + std::fmt::Debug>(input: Value) -> String {
    let e = decode::<T>(&input).unwrap_err();
    assert_eq!(e.code(), "INVALID_INPUT", "{e}");
    e.to_string()
}

const ASK: &str = r#"{"issueNumber": 42, "from": "a", "to": "b", "topic": "t", "question": "q"}"#;

fn ask_with(key: &str, value: Value) -> Value {
    let mut v: Value = serde_json::from_str(ASK).unwrap();
    v[key] = value;
    v
}

#[test]
fn an_unknown_field_names_itself_and_the_nearest_known_one() {
    assert_eq!(
        refused::<Ask>(ask_with("blockng", json!(false))),
        "invalid input: unknown field `blockng`; did you mean `blocking`?"
    );
    assert_eq!(
        refused::<Ask>(ask_with("idempotencykey", json!("k"))),
        "invalid input: unknown field `idempotencykey`; did you mean `idempotencyKey`?"
    );
    // Nothing near: the known fields.
    assert_eq!(
        refused::<Text>(json!({"text": "x", "zzzzzz": 1})),
        "invalid input: unknown field `zzzzzz`; known fields: text"
    );
    assert_eq!(
        refused::<Nothing>(json!({"x": 1})),
        "invalid input: unknown field `x`; this input takes no fields"
    );
}

#[test]
fn a_nested_unknown_field_names_its_path() {
    let input = ask_with(
        "options",
        json!([{"value": "a"}, {"value": "b", "lable": "B"}]),
    );
    assert_eq!(
        refused::<Ask>(input),
        "invalid input: unknown field `options[1].lable`; did you mean `label`?"
    );
}

#[test]
fn missing_and_mistyped_fields_name_their_path() {
    let mut v: Value = serde_json::from_str(ASK).unwrap();
    v.as_object_mut().unwrap().remove("from");
    assert_eq!(refused::<Ask>(v), "invalid input: `from` is required");
    assert_eq!(
        refused::<Ask>(ask_with("to", json!(3))),
        "invalid input: `to` must be a string"
    );
    assert_eq!(
        refused::<Ask>(ask_with("options", json!([{"label": "x"}]))),
        "invalid input: `options[0].value` is required"
    );
    assert_eq!(
        refused::<Ask>(ask_with("options", json!([{"value": "a"}, 3]))),
        "invalid input: `options[1]` must be an object"
    );
    assert_eq!(
        refused::<Ask>(ask_with("options", json!({"value": "a"}))),
        "invalid input: `options` must be an array"
    );
    assert_eq!(
        refused::<Ask>(ask_with("minSelect", json!(1.5))),
        "invalid input: `minSelect` must be an integer"
    );
    assert_eq!(
        refused::<Ask>(json!([1])),
        "invalid input: the input must be an object"
    );
}

#[test]
fn null_is_absent_and_integral_floats_are_integers() {
    let ask: Ask = decode(&ask_with("blocking", Value::Null)).unwrap();
    assert_eq!(ask.blocking, None);
    let ask: Ask = decode(&ask_with("maxSelect", json!(3.0))).unwrap();
    assert_eq!(ask.max_select, Some(Integer(3)));
    let none: Nothing = decode(&Value::Null).unwrap();
    assert_eq!(none, Nothing {});
}

#[test]
fn a_struct_lists_its_fields_and_is_a_serde_input() {
    assert_eq!(OptionInput::FIELDS, ["value", "label", "description"]);
    assert!(Nothing::FIELDS.is_empty());
    // Any serde reader takes it, with the same refusals.
    let o: OptionInput = serde_json::from_str(r#"{"value": "a", "label": null}"#).unwrap();
    assert_eq!((o.value.as_str(), o.label), ("a", None));
    let e = serde_json::from_str::<OptionInput>(r#"{"valu": "a"}"#).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("unknown field `valu`; did you mean `value`?"),
        "{e}"
    );
}

#[test]
fn a_pair_splits_one_object_and_knows_both_sides_fields() {
    let input = ask_with("now", json!(5));
    let (on, ask): (OnNew, Ask) = decode_pair(&input).unwrap();
    assert_eq!(on.now, Some(Integer(5)));
    assert_eq!(ask.topic, "t");
    assert_eq!(
        decode_pair::<OnNew, Ask>(&ask_with("ledgr", json!({})))
            .unwrap_err()
            .to_string(),
        "invalid input: unknown field `ledgr`; did you mean `ledger`?"
    );
}

#[test]
fn times_are_epoch_ms_or_rfc_3339() {
    let (now, rest) = take_now(&json!({"now": "2026-11-22T10:00:00Z", "id": "x"})).unwrap();
    assert_eq!(now, Some(1_795_341_600_000));
    assert_eq!(rest, json!({"id": "x"}));
    assert_eq!(take_now(&json!({"now": 7})).unwrap().0, Some(7));
    assert_eq!(take_now(&json!({"now": null})).unwrap().0, None);
    let e = take_now(&json!({"now": "soon"})).unwrap_err().to_string();
    assert!(
        e.starts_with("invalid input: `now`: 'soon' is neither RFC 3339"),
        "{e}"
    );
    let e = take_now(&json!({"now": -1})).unwrap_err().to_string();
    assert!(e.contains("out of range"), "{e}");
}

#[test]
fn issue_numbers_keep_their_own_code() {
    assert_eq!(IssueArg::from("42").checked().unwrap(), 42);
    assert_eq!(IssueArg(json!(42.0)).checked().unwrap(), 42);
    for bad in [
        json!("042"),
        json!(-1),
        json!(1.5),
        json!(true),
        json!(2_147_483_648_u64),
    ] {
        let e = IssueArg(bad.clone()).checked().unwrap_err();
        assert_eq!(e.code(), "INVALID_ISSUE", "{bad}");
    }
}

#[test]
fn serde_own_refusals_name_the_nearest_field() {
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Derived {
        issue: Option<u32>,
        to: Option<String>,
    }
    let e = serde_json::from_value::<Derived>(json!({"isue": 1})).unwrap_err();
    assert_eq!(
        fields::serde_message(&e.to_string()),
        "unknown field `isue`; did you mean `issue`?"
    );
    let e = serde_json::from_value::<Derived>(json!({"zzzzzz": 1})).unwrap_err();
    assert_eq!(
        fields::serde_message(&e.to_string()),
        "unknown field `zzzzzz`; known fields: issue, to"
    );
    assert_eq!(
        fields::serde_message("missing field `to`"),
        "missing field `to`"
    );
}
