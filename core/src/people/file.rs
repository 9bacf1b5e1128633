//! Reading `.agentx/people.toml` (docs/protocol.md §37). Every key is known — an unknown one
//! is `CONFIG_INVALID` at its file:line:column with the nearest known key, as the strict
//! tables of `config.toml` are (a typo in who decides is a governance hole) — and every
//! value is checked where it stands. Read by hand over toml's spanned tables, as the other
//! settings are (`toml_read`): the same located errors without serde's code in the wasm build.

use toml::de::{DeTable, DeValue};

use super::rotation::{parse_every, Override, Rotation};
use super::{is_role_name, person_name_refusal, People, Person};
use crate::error::ClarifyError;
use crate::nearest::hint;
use crate::toml_read::{describe, get, Source, Value};

const TOP_KEYS: &[&str] = &["people", "rotations"];
const PERSON_KEYS: &[&str] = &["roles", "github", "slack", "email", "ntfy"];
const ROTATION_KEYS: &[&str] = &["role", "people", "every", "start", "overrides"];
const OVERRIDE_KEYS: &[&str] = &["person", "from", "to"];

impl People {
    /// Parses `people.toml`; `agents` are the workspace's agent names, which no person may
    /// take. Rotations must name defined people.
    pub fn parse(file: &str, text: &str, agents: &[&str]) -> Result<People, ClarifyError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let src = Source { file, text };
        let root = src.parse()?;
        let root = root.get_ref();
        strict(&src, root, "people.toml", TOP_KEYS)?;
        let mut people = People::default();
        if let Some(v) = get(root, "people") {
            for (name, person) in src.table("people", v)?.iter() {
                if let Some(why) = person_name_refusal(name.get_ref(), agents) {
                    return Err(src.error_at(&name.span(), why));
                }
                let table = src.table(&format!("people.{}", name.get_ref()), person)?;
                people
                    .persons
                    .insert(name.get_ref().to_string(), read_person(&src, table)?);
            }
        }
        if let Some(v) = get(root, "rotations") {
            let DeValue::Array(items) = v.get_ref() else {
                return Err(src.error_at(
                    &v.span(),
                    "`rotations` must be an array of tables ([[rotations]])",
                ));
            };
            for item in items {
                let rotation = read_rotation(&src, item, &people)?;
                people.rotations.push(rotation);
            }
        }
        Ok(people)
    }

    /// [`People::parse`] of the file's bytes as read from disk: a BOM is skipped, bytes that
    /// are not UTF-8 are `CONFIG_INVALID` naming the byte offset.
    pub fn parse_bytes(file: &str, bytes: &[u8], agents: &[&str]) -> Result<People, ClarifyError> {
        People::parse(file, crate::toml_read::toml_text(file, bytes)?, agents)
    }
}

/// Every key of `table` is one of `keys`.
fn strict(
    src: &Source<'_>,
    table: &DeTable<'_>,
    name: &str,
    keys: &[&str],
) -> Result<(), ClarifyError> {
    match table
        .iter()
        .find(|(k, _)| !keys.contains(&k.get_ref().as_ref()))
    {
        Some((k, _)) => Err(src.error_at(
            &k.span(),
            format!(
                "unknown key '{}' in {name}; {}",
                k.get_ref(),
                hint(k.get_ref(), keys)
            ),
        )),
        None => Ok(()),
    }
}

fn read_person(src: &Source<'_>, table: &DeTable<'_>) -> Result<Person, ClarifyError> {
    strict(src, table, "[people.*]", PERSON_KEYS)?;
    let roles = match get(table, "roles") {
        Some(v) => src.strings(
            "roles",
            v,
            (
                "role names",
                "role names matching ^[a-z0-9][a-z0-9_-]{0,63}$",
            ),
            is_role_name,
        )?,
        None => Vec::new(),
    };
    let contact = |key: &str| -> Result<Option<String>, ClarifyError> {
        let Some(v) = get(table, key) else {
            return Ok(None);
        };
        let s = src.string(key, v)?;
        crate::names::check_line(key, &s, crate::config::MAX_SHORT_TEXT)
            .map_err(|e| src.error_at(&v.span(), e.to_string()))?;
        Ok(Some(s))
    };
    Ok(Person {
        roles,
        github: contact("github")?,
        slack: contact("slack")?,
        email: contact("email")?,
        ntfy: contact("ntfy")?,
    })
}

fn read_rotation(
    src: &Source<'_>,
    item: &Value<'_>,
    people: &People,
) -> Result<Rotation, ClarifyError> {
    let table = src.table("a [[rotations]] entry", item)?;
    strict(src, table, "[[rotations]]", ROTATION_KEYS)?;
    let required = |key: &str| {
        get(table, key).ok_or_else(|| {
            src.error_at(
                &item.span(),
                format!("a [[rotations]] table is missing `{key}`"),
            )
        })
    };
    let role_v = required("role")?;
    let role = src.string("role", role_v)?;
    if !is_role_name(&role) {
        return Err(src.error_at(
            &role_v.span(),
            format!("role '{role}' must match ^[a-z0-9][a-z0-9_-]{{0,63}}$"),
        ));
    }
    let people_v = required("people")?;
    let names = src.strings("people", people_v, ("person names", "person names"), |_| {
        true
    })?;
    if names.is_empty() {
        return Err(src.error_at(&people_v.span(), "a rotation needs at least one person"));
    }
    if let Some(unknown) = names.iter().find(|n| people.get(n).is_none()) {
        return Err(src.error_at(&people_v.span(), undefined(unknown, people)));
    }
    let every_v = required("every")?;
    let every_ms = parse_every(&src.string("every", every_v)?)
        .map_err(|why| src.error_at(&every_v.span(), why))?;
    let start_ms = instant(src, "start", required("start")?)?;
    let overrides = match get(table, "overrides") {
        Some(v) => read_overrides(src, v, people)?,
        None => Vec::new(),
    };
    Ok(Rotation {
        role,
        people: names,
        every_ms,
        start_ms,
        overrides,
    })
}

fn read_overrides(
    src: &Source<'_>,
    v: &Value<'_>,
    people: &People,
) -> Result<Vec<Override>, ClarifyError> {
    let DeValue::Array(items) = v.get_ref() else {
        return Err(src.error_at(
            &v.span(),
            format!(
                "overrides must be an array of {{ person, from, to }} tables, found {}",
                describe(v.get_ref())
            ),
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let t = src.table("an override", item)?;
        strict(src, t, "an override", OVERRIDE_KEYS)?;
        let field = |key: &str| {
            get(t, key).ok_or_else(|| {
                src.error_at(&item.span(), format!("an override is missing `{key}`"))
            })
        };
        let person_v = field("person")?;
        let person = src.string("person", person_v)?;
        if people.get(&person).is_none() {
            return Err(src.error_at(&person_v.span(), undefined(&person, people)));
        }
        let from_ms = instant(src, "from", field("from")?)?;
        let to_v = field("to")?;
        let to_ms = instant(src, "to", to_v)?;
        if to_ms <= from_ms {
            return Err(src.error_at(&to_v.span(), "an override's `to` must be after its `from`"));
        }
        out.push(Override {
            person,
            from_ms,
            to_ms,
        });
    }
    Ok(out)
}

/// An RFC 3339 instant with an offset, quoted or as a TOML datetime.
fn instant(src: &Source<'_>, key: &str, v: &Value<'_>) -> Result<i64, ClarifyError> {
    let text = match v.get_ref() {
        DeValue::String(s) => Some(s.to_string()),
        DeValue::Datetime(d) => Some(d.to_string()),
        _ => None,
    };
    text.as_deref()
        .and_then(crate::time::parse_ms)
        .ok_or_else(|| {
            src.error_at(
                &v.span(),
                format!(
                    "{key} must be an RFC 3339 instant with an offset, e.g. \"2026-01-05T09:00:00Z\", found {}",
                    describe(v.get_ref())
                ),
            )
        })
}

fn undefined(name: &str, people: &People) -> String {
    let names = people.names();
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    format!(
        "'{}' is not a person of [people.*]; {}",
        crate::error::shown(name),
        crate::nearest::nearest(name, &known).map_or_else(
            || format!("defined: [{}]", known.join(", ")),
            |n| format!("did you mean '{n}'?")
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const TEAM: &str = r#"
[people.alice]
roles = ["architecture", "lead"]
github = "alice-gh"
ntfy = "alice-alerts"

[people.bob]
roles = ["lead"]
slack = "U0BOB"

[people.carol]
roles = ["architecture"]
email = "carol@example.com"

[[rotations]]
role = "lead"
people = ["alice", "bob"]
every = "7d"
start = "2026-01-05T09:00:00Z"
overrides = [{ person = "carol", from = 2026-02-01T00:00:00Z, to = "2026-02-02T00:00:00Z" }]
"#;

    fn error(text: &str) -> String {
        let e = People::parse("people.toml", text, &["engineer"]).unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        e.to_string()
    }

    #[test]
    fn reads_people_and_rotations() {
        let p = People::parse("people.toml", TEAM, &["engineer"]).unwrap();
        assert_eq!(p.names(), ["alice", "bob", "carol"]);
        let alice = p.get("alice").unwrap();
        assert_eq!(alice.roles, ["architecture", "lead"]);
        assert_eq!(alice.github.as_deref(), Some("alice-gh"));
        assert_eq!(alice.ntfy.as_deref(), Some("alice-alerts"));
        assert_eq!(p.get("bob").unwrap().slack.as_deref(), Some("U0BOB"));
        assert_eq!(p.with_role("architecture"), ["alice", "carol"]);
        let r = &p.rotations[0];
        assert_eq!(r.every_ms, 7 * 86_400_000);
        assert_eq!(r.start_ms, 1_767_603_600_000);
        assert_eq!(r.overrides[0].person, "carol");
        assert_eq!(r.overrides[0].to_ms - r.overrides[0].from_ms, 86_400_000);
        assert!(!People::parse("people.toml", "", &[]).unwrap().is_defined());
    }

    #[test]
    fn unknown_keys_are_located_with_the_nearest() {
        assert_eq!(
            error("[people.alice]\nrole = [\"lead\"]\n"),
            "people.toml:2:1: unknown key 'role' in [people.*]; did you mean 'roles'?"
        );
        assert!(error("[peple.alice]\n").contains("did you mean 'people'?"));
        let e = error(
            "[people.a]\n[[rotations]]\nrole = \"x\"\npeople = [\"a\"]\nevery = \"1d\"\nstrat = \"2026-01-01T00:00:00Z\"\n",
        );
        assert!(
            e.starts_with("people.toml:6:1:") && e.contains("'start'"),
            "{e}"
        );
    }

    #[test]
    fn names_and_values_are_checked_where_they_stand() {
        assert!(error("[people.human]\n").starts_with("people.toml:1:9: 'human' is a reserved"));
        assert!(error("[people.engineer]\n").contains("is an agent of this workspace"));
        assert!(error("[people.Alice]\n").contains("only lowercase"));
        assert!(error("[people.a]\nroles = [\"Lead\"]\n").starts_with("people.toml:2:10:"));
        assert!(error("[people.a]\ngithub = 3\n").contains("github must be a string"));
        let rotation = |body: &str| format!("[people.a]\n[people.b]\n[[rotations]]\n{body}");
        let e = error(&rotation(
            "role = \"lead\"\npeople = [\"a\", \"zed\"]\nevery = \"1d\"\nstart = \"2026-01-01T00:00:00Z\"\n",
        ));
        assert!(e.contains("'zed' is not a person"), "{e}");
        let e = error(&rotation(
            "role = \"lead\"\npeople = [\"a\"]\nevery = \"1w\"\nstart = \"2026-01-01T00:00:00Z\"\n",
        ));
        assert!(e.starts_with("people.toml:6:9: every '1w'"), "{e}");
        let e = error(&rotation(
            "role = \"lead\"\npeople = [\"a\"]\nevery = \"1d\"\nstart = 2026-01-01T00:00:00\n",
        ));
        assert!(e.contains("with an offset"), "{e}");
        let e = error(&rotation(
            "role = \"lead\"\npeople = [\"a\"]\nevery = \"1d\"\n",
        ));
        assert!(e.contains("missing `start`"), "{e}");
        let e = error(&rotation(
            "role = \"lead\"\npeople = []\nevery = \"1d\"\nstart = \"2026-01-01T00:00:00Z\"\n",
        ));
        assert!(e.contains("at least one person"), "{e}");
        let e = error(&rotation(
            "role = \"lead\"\npeople = [\"a\"]\nevery = \"1d\"\nstart = \"2026-01-01T00:00:00Z\"\noverrides = [{ person = \"b\", from = \"2026-01-02T00:00:00Z\", to = \"2026-01-01T00:00:00Z\" }]\n",
        ));
        assert!(e.contains("`to` must be after its `from`"), "{e}");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_located() {
        let e =
            People::parse_bytes("people.toml", b"[people.a]\nslack = \"\xff\"\n", &[]).unwrap_err();
        assert_eq!(e.code(), "CONFIG_INVALID");
        assert!(
            e.to_string().starts_with("people.toml:2:10: invalid UTF-8"),
            "{e}"
        );
    }
}
