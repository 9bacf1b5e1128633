//! The people of a workspace as `agentx people list --json` and the pure facade's
//! `peopleList` show them (docs/protocol.md §37): each person with their roles and contacts,
//! and per rotation who is on call at `now`, until when, and who takes over then — the same
//! answer on every surface, the playground's included.

use serde_json::{json, Map, Value};

use super::{People, Rotation};
use crate::time::format_ms;

/// `{"people": [...], "onCall": [...]}` at `now_ms`.
pub fn view(people: &People, now_ms: i64) -> Value {
    let persons: Vec<Value> = people
        .persons
        .iter()
        .map(|(name, p)| {
            let mut m = Map::new();
            m.insert("name".into(), name.clone().into());
            m.insert("roles".into(), p.roles.clone().into());
            for (key, v) in [
                ("github", &p.github),
                ("slack", &p.slack),
                ("email", &p.email),
                ("ntfy", &p.ntfy),
            ] {
                if let Some(v) = v {
                    m.insert(key.into(), v.clone().into());
                }
            }
            Value::Object(m)
        })
        .collect();
    let on_call: Vec<Value> = people
        .rotations
        .iter()
        .map(|r| on_call(r, now_ms))
        .collect();
    json!({"people": persons, "onCall": on_call})
}

/// One rotation at `now`: who is on call, and (once it has started) the next handover.
fn on_call(r: &Rotation, now: i64) -> Value {
    let mut m = Map::new();
    m.insert("role".into(), r.role.clone().into());
    m.insert(
        "person".into(),
        r.on_call(now).map_or(Value::Null, |p| p.to_owned().into()),
    );
    if let Some(at) = r.next_handover(now) {
        m.insert("until".into(), format_ms(at).into());
        if let Some(next) = r.on_call(at) {
            m.insert("next".into(), next.to_owned().into());
        }
    }
    Value::Object(m)
}
