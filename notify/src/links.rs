//! Answer links (docs/protocol.md §35): `<public url>/a/<token>`, minted when a sink with
//! `answer_links = true` is told of a record a person may decide, and used by `agentx serve`.
//!
//! A token is 256 random bits; the store keeps only its SHA-256, in the `answer-links` state
//! document (a file of the state directory or a row of PostgreSQL, as the sessions are), bound
//! to one record, its round, the sink and delivery that carried it, and optionally one value
//! (a per-option link). Every change is a read–change–write under the document's lock, so
//! the first use of a link wins on every server at once.

use agentx_clarify_command::store::docs::{self, ANSWER_LINKS};
use agentx_clarify_command::store::State;
use agentx_clarify_core::kinds::AnswerKind;
use agentx_clarify_core::names::HUMAN;
use agentx_clarify_core::notify::Sink;
use agentx_clarify_core::ops::{who_may, Op};
use agentx_clarify_core::people::People;
use agentx_clarify_core::{ClarifyError, Config, Record, Status};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Who holds the lock while the links change (the file store's lock file names it).
const LOCK_OWNER: &str = "agentx-answer-links";
/// Links kept past their end, so a late tap still hears "expired" rather than "unknown".
const KEPT_AFTER_MS: i64 = 7 * 24 * 3_600_000;
/// The characters of a token a log line may show.
pub const SHOWN: usize = 6;

/// One link as the store keeps it: never the token, only its hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Link {
    pub sha256: String,
    pub record: String,
    pub issue: u32,
    /// The record's round when the link was made: a follow-up asks anew, and the link of the
    /// earlier question no longer decides.
    pub round: u32,
    pub sink: String,
    /// The sink's kind: the decision's `via` (`ntfy`, else `link`).
    pub kind: String,
    /// The event (delivery) id that carried it: with the sink, the decision's `ref`.
    pub delivery: String,
    /// A per-option link decides this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// Epoch ms.
    pub created: i64,
    /// Epoch ms.
    pub expires: i64,
    /// When it was used (epoch ms): used once, never again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used: Option<i64>,
    /// The person it was sent to, when the sink sends each person their own message
    /// (`per_person`, docs/protocol.md §37): the decision is theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// When it was revoked (epoch ms): its person's token was revoked
    /// (`agentx tokens revoke`), so whoever holds the person's message no longer decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<i64>,
}

impl Link {
    /// Who the decision is recorded as: the person a per-person sink sent it to, else
    /// whoever holds the sink's message, `<sink>-link` (a person's name is an agent-style
    /// name: no space).
    pub fn by(&self) -> String {
        self.person
            .clone()
            .unwrap_or_else(|| format!("{}-link", self.sink))
    }

    /// Whether the link may no longer decide for who it speaks for: it was revoked, or it
    /// was sent to a person `people` no longer defines (removed from `people.toml`), whose
    /// decision it would still record under their name.
    pub fn revoked_for(&self, people: &People) -> bool {
        self.revoked.is_some()
            || self
                .person
                .as_deref()
                .is_some_and(|p| people.get(p).is_none())
    }

    /// The decision's `via`.
    pub fn via(&self) -> String {
        if self.kind == "ntfy" {
            "ntfy".into()
        } else {
            "link".into()
        }
    }

    /// The decision's `ref`: the sink and the delivery that carried the link.
    pub fn reference(&self) -> String {
        format!("{}/{}", self.sink, self.delivery)
    }
}

/// The `answer-links` document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct LinksDoc {
    #[serde(default)]
    links: Vec<Link>,
}

/// One action of a notification: a label, the value it decides (per-option links) and its URL.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub label: String,
    pub value: Option<Value>,
    pub url: String,
}

impl Action {
    /// `{label, value?, url}`, as `data.actions` holds it.
    pub fn json(&self) -> Value {
        let mut v = json!({"label": self.label, "url": self.url});
        if let Some(value) = &self.value {
            v["value"] = value.clone();
        }
        v
    }
}

pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A token's first characters: all a log line ever shows of it.
pub fn shown(token: &str) -> String {
    token.chars().take(SHOWN).collect()
}

fn fresh_token() -> Result<String, ClarifyError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ClarifyError::Io {
        message: format!("cannot draw random bytes: {e}"),
    })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether a person may decide `record` now (the core's table, as the inbox's form asks):
/// resolve it, or take it (escalate) and resolve it.
pub fn decidable(record: &Record) -> bool {
    let status = record.current_status();
    let may = |op| {
        who_may(status, op, record.is_legacy_empty())
            .is_some_and(|who| who.admits(HUMAN, &record.from, &record.to))
    };
    may(Op::Resolve) || (status != Status::Escalated && may(Op::Escalate))
}

/// The values a per-option link is made for: yes and no, or each option of a single choice.
/// A multi-choice or a text answer is given on the link's page.
fn per_option(record: &Record) -> Vec<(String, Value)> {
    match record.answer.kind {
        AnswerKind::Confirm => vec![("Yes".into(), json!(true)), ("No".into(), json!(false))],
        AnswerKind::Choice => record
            .answer
            .options
            .iter()
            .map(|o| (o.shown().to_owned(), json!(o.value)))
            .collect(),
        AnswerKind::MultiChoice | AnswerKind::Text => Vec::new(),
    }
}

/// What a delivery carries links for.
pub struct Carrier<'a> {
    pub sink: &'a Sink,
    pub record: &'a Record,
    pub issue: u32,
    pub delivery: &'a str,
    /// The inbox's public URL (`https://hub.example.com`).
    pub base: &'a str,
}

/// The links of one delivery: the answer page first ("Answer…"), then one per option. A
/// retry of the delivery replaces the links of its earlier try. None when the sink has no
/// answer links or the record is not a person's to decide.
pub fn mint<S: State + ?Sized>(
    store: &S,
    config: &Config,
    c: &Carrier<'_>,
    now: i64,
) -> Result<Vec<Action>, ClarifyError> {
    if !c.sink.answer_links || !decidable(c.record) {
        return Ok(Vec::new());
    }
    #[allow(clippy::cast_possible_truncation)] // at most a week of ms
    let life = (c.sink.link_hours * 3_600_000.0) as i64;
    let base = c.base.trim_end_matches('/');
    let mut wanted: Vec<(String, Option<Value>)> = vec![("Answer…".into(), None)];
    wanted.extend(per_option(c.record).into_iter().map(|(l, v)| (l, Some(v))));
    let mut actions = Vec::with_capacity(wanted.len());
    let mut links = Vec::with_capacity(wanted.len());
    for (label, value) in wanted {
        let token = fresh_token()?;
        links.push(Link {
            sha256: sha256_hex(&token),
            record: c.record.id.clone(),
            issue: c.issue,
            round: c.record.folded_round(),
            sink: c.sink.name.clone(),
            kind: c.sink.kind.as_str().into(),
            delivery: c.delivery.to_owned(),
            value: value.clone(),
            created: now,
            expires: now.saturating_add(life),
            used: None,
            person: c.sink.person.clone(),
            revoked: None,
        });
        actions.push(Action {
            label,
            value,
            url: format!("{base}/a/{token}"),
        });
    }
    changed(store, config, |doc| {
        // A revoked link stays (until it would have been pruned) so its holder keeps
        // hearing "revoked", not "unknown".
        doc.links.retain(|l| {
            let replaced = l.sink == c.sink.name
                && l.delivery == c.delivery
                && l.used.is_none()
                && l.revoked.is_none();
            !replaced && l.expires.saturating_add(KEPT_AFTER_MS) > now
        });
        doc.links.extend(links);
        Ok(())
    })?;
    Ok(actions)
}

/// A read–change–write of the `answer-links` document under its lock: the first change on
/// any server wins, and nothing is written when `change` refuses or changes nothing.
fn changed<S: State + ?Sized, T>(
    store: &S,
    config: &Config,
    change: impl FnOnce(&mut LinksDoc) -> Result<T, ClarifyError>,
) -> Result<T, ClarifyError> {
    docs::try_update_json(store, ANSWER_LINKS, config, LOCK_OWNER, change)
}

/// The link whose token is `token`, as stored (read only: a GET never writes). Every stored
/// hash is compared in constant time.
pub fn find<S: State + ?Sized>(store: &S, token: &str) -> Result<Option<Link>, ClarifyError> {
    let doc: LinksDoc = docs::read_json(store, ANSWER_LINKS)?;
    let hash = sha256_hex(token);
    let mut found = None;
    for l in doc.links {
        if same(&l.sha256, &hash) {
            found = Some(l);
        }
    }
    Ok(found)
}

fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// What taking a link for a decision came to.
#[derive(Debug, PartialEq)]
pub enum Claim {
    /// This use is the first: the caller decides (and gives it back if the decision fails).
    Won(Link),
    /// Used already (at that time): nothing is written.
    Used(Link),
    /// Revoked, or its person is no longer defined ([`Link::revoked_for`]): nothing is written.
    Revoked(Link),
    Expired(Link),
    Unknown,
}

/// Takes the link for one decision under the document's lock: the first caller on any server
/// wins, every later one hears [`Claim::Used`]. A link revoked (or whose person `people` no
/// longer defines) is refused here too, under the lock, so a revocation that lands between
/// the page's check and this POST still holds.
pub fn claim<S: State + ?Sized>(
    store: &S,
    config: &Config,
    people: &People,
    token: &str,
    now: i64,
) -> Result<Claim, ClarifyError> {
    let hash = sha256_hex(token);
    changed(store, config, |doc| {
        let Some(link) = doc.links.iter_mut().find(|l| same(&l.sha256, &hash)) else {
            return Ok(Claim::Unknown);
        };
        if link.revoked_for(people) {
            return Ok(Claim::Revoked(link.clone()));
        }
        if link.used.is_some() {
            return Ok(Claim::Used(link.clone()));
        }
        if link.expires <= now {
            return Ok(Claim::Expired(link.clone()));
        }
        link.used = Some(now);
        Ok(Claim::Won(link.clone()))
    })
}

/// Revokes every open link sent to `person` (their token revoked: `agentx tokens revoke`,
/// docs/protocol.md §35) and says how many. A link used, expired or revoked already is left
/// as it is, so a second revocation counts none; nothing is written when none is open.
pub fn revoke_person<S: State + ?Sized>(
    store: &S,
    config: &Config,
    person: &str,
    now: i64,
) -> Result<usize, ClarifyError> {
    changed(store, config, |doc| {
        let mut revoked = 0;
        for l in &mut doc.links {
            let open = l.used.is_none() && l.revoked.is_none() && l.expires > now;
            if open && l.person.as_deref() == Some(person) {
                l.revoked = Some(now);
                revoked += 1;
            }
        }
        Ok(revoked)
    })
}

/// Gives a won link back when its decision was refused (a note missing, the store failing):
/// it may be used again until it expires.
pub fn release<S: State + ?Sized>(
    store: &S,
    config: &Config,
    sha256: &str,
) -> Result<(), ClarifyError> {
    changed(store, config, |doc| {
        if let Some(l) = doc.links.iter_mut().find(|l| l.sha256 == sha256) {
            l.used = None;
        }
        Ok(())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use agentx_clarify_command::mem::MemStore;

    fn link(token: &str, person: Option<&str>, expires: i64) -> Link {
        Link {
            sha256: sha256_hex(token),
            record: "CLR-1-001".into(),
            issue: 1,
            round: 1,
            sink: "mail".into(),
            kind: "email".into(),
            delivery: "evt_1".into(),
            value: None,
            created: 0,
            expires,
            used: None,
            person: person.map(str::to_owned),
            revoked: None,
        }
    }

    #[test]
    fn revoking_a_person_revokes_their_open_links_only() {
        let store = MemStore::new();
        let config = Config::default();
        let mut used = link("used", Some("alice"), 1_000);
        used.used = Some(5);
        let all = vec![
            link("open", Some("alice"), 1_000),
            link("open2", Some("alice"), 1_000),
            link("gone", Some("alice"), 10),
            used,
            link("bobs", Some("bob"), 1_000),
            link("sinks", None, 1_000),
        ];
        docs::try_update_json(&store, ANSWER_LINKS, &config, "t", |d: &mut LinksDoc| {
            d.links = all;
            Ok(())
        })
        .unwrap();
        assert_eq!(revoke_person(&store, &config, "alice", 100).unwrap(), 2);
        // Once revoked, a second revocation finds none open.
        assert_eq!(revoke_person(&store, &config, "alice", 200).unwrap(), 0);
        let people = People::parse("people.toml", "[people.alice]\n\n[people.bob]\n", &[]).unwrap();
        let revoked = find(&store, "open").unwrap().unwrap();
        assert_eq!(revoked.revoked, Some(100));
        assert!(revoked.revoked_for(&people));
        assert!(matches!(
            claim(&store, &config, &people, "open", 150).unwrap(),
            Claim::Revoked(_)
        ));
        assert!(find(&store, "open").unwrap().unwrap().used.is_none());
        // Bob's link decides while bob is a person, and not once he is removed.
        let without_bob = People::parse("people.toml", "[people.alice]\n", &[]).unwrap();
        assert!(matches!(
            claim(&store, &config, &without_bob, "bobs", 150).unwrap(),
            Claim::Revoked(_)
        ));
        assert!(matches!(
            claim(&store, &config, &people, "bobs", 150).unwrap(),
            Claim::Won(_)
        ));
        // A sink's own link names no person: people do not revoke it.
        assert!(!find(&store, "sinks")
            .unwrap()
            .unwrap()
            .revoked_for(&without_bob));
    }
}
