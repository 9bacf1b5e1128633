//! The `[[notify]]` tables of `config.toml`: where people are told, and about what.
//!
//! Read strictly: a sink carries a URL and a secret, and a typo in one of its keys (`event =`
//! for `events =`, `secret_evn`) would quietly send everything, or nothing, to the wrong place.
//! So an unknown key is `CONFIG_INVALID` at `file:line:column`, naming the nearest known key.

use serde::{Deserialize, Serialize};
use toml::de::DeValue;

use crate::error::ClarifyError;
use crate::toml_read::{describe, Source, Value};

/// What a sink is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    /// A POST of the event, signed as Standard Webhooks 1.0 says.
    Webhook,
    /// A Slack incoming webhook (`text` and `blocks`, with the link).
    Slack,
    /// An ntfy topic URL (the text as body; title, priority, tags and click as headers).
    Ntfy,
    /// A program with the event JSON on stdin; exit 0 is delivered.
    Command,
    /// A mail over SMTP (STARTTLS or TLS): text and HTML, the options as answer links.
    Email,
    /// A Slack app (`chat.postMessage` with a bot token): Block Kit with a button per option,
    /// answered through `agentx serve`'s `/slack/interactions` (docs/notifications.md).
    #[serde(rename = "slack-app")]
    SlackApp,
}

impl SinkKind {
    pub const ALL: [SinkKind; 6] = [
        SinkKind::Webhook,
        SinkKind::Slack,
        SinkKind::Ntfy,
        SinkKind::Command,
        SinkKind::Email,
        SinkKind::SlackApp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SinkKind::Webhook => "webhook",
            SinkKind::Slack => "slack",
            SinkKind::Ntfy => "ntfy",
            SinkKind::Command => "command",
            SinkKind::Email => "email",
            SinkKind::SlackApp => "slack-app",
        }
    }
}

/// What happened to a record, as a sink subscribes to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventName {
    Escalated,
    Answered,
    Resolved,
    Stale,
    Deadlock,
    RouteFailed,
    Reminder,
    /// `agentx notify test`: never subscribed to, always sent when asked for.
    Test,
    /// GitHub Mode's comment of a record, created or edited (docs/github.md); not a sink's.
    Github,
}

impl EventName {
    /// The events a sink may name in `events`.
    pub const SUBSCRIBABLE: [EventName; 7] = [
        EventName::Escalated,
        EventName::Answered,
        EventName::Resolved,
        EventName::Stale,
        EventName::Deadlock,
        EventName::RouteFailed,
        EventName::Reminder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventName::Escalated => "escalated",
            EventName::Answered => "answered",
            EventName::Resolved => "resolved",
            EventName::Stale => "stale",
            EventName::Deadlock => "deadlock",
            EventName::RouteFailed => "route-failed",
            EventName::Reminder => "reminder",
            EventName::Test => "test",
            EventName::Github => "github",
        }
    }

    pub fn parse(text: &str) -> Option<EventName> {
        EventName::SUBSCRIBABLE
            .into_iter()
            .find(|e| e.as_str() == text)
    }
}

/// Where a sink's secret comes from. The secret itself never leaves the shell that reads it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SecretFrom {
    /// `secret_env`: the name of an environment variable.
    Env(String),
    /// `secret`: written in the file (allowed, but the file then holds a secret).
    Inline(#[serde(skip)] String),
}

/// One `[[notify]]` table, checked.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sink {
    pub name: String,
    pub kind: SinkKind,
    /// webhook, slack, ntfy: where to POST. Never printed whole (see [`display_url`]).
    #[serde(skip)]
    pub url: Option<String>,
    /// command: the program and its arguments.
    pub command: Vec<String>,
    /// webhook: the Standard Webhooks secret (`whsec_…`).
    #[serde(skip)]
    pub secret: Option<SecretFrom>,
    pub events: Vec<EventName>,
    /// Empty: every issue.
    pub issues: Vec<u32>,
    /// Empty: every agent; else the record's `from` or `to` must be one of them.
    pub agents: Vec<String>,
    pub after_minutes: u32,
    pub remind_every_minutes: u32,
    /// `answer_links = true`: the sink's messages carry answer links (docs/protocol.md §35),
    /// so whoever holds them may decide. Off by default: a shared sink's readers are many.
    pub answer_links: bool,
    /// How long an answer link lives, in hours: `[serve] answer_link_hours` (default 24),
    /// copied to each sink so the deliverer has it beside the sink's own settings.
    pub link_hours: f64,
    /// email: where and how the mail is sent.
    pub email: Option<Email>,
    /// slack-app: the channel, the bot token's and signing secret's variables, the API.
    pub slack: Option<SlackApp>,
    /// `people = ["role:lead", "alice"]` (docs/protocol.md §37): the sink speaks for these
    /// people only — an escalation assigned to others is not told to it. Empty: everyone's.
    pub people: Vec<String>,
    /// The names `people` reaches with the workspace's people (a role: whoever holds it or
    /// takes its shifts), filled by [`address`]; `None`: no `people`, everything is told.
    #[serde(skip)]
    pub reaches: Option<Vec<String>>,
    /// `then = "role:cto"` on a ladder step (`after_minutes`): an escalation nobody claimed by
    /// then is assigned to these people too (docs/protocol.md §37). Empty: no next step.
    pub then: Vec<String>,
    /// `per_person = true` with `people` (ntfy, email): one delivery per person reached, to
    /// their own contact — the ntfy topic after `url`, their email address.
    pub per_person: bool,
    /// The person one sink of a `per_person` sink is for (set by [`address`]): its answer
    /// links decide as them.
    #[serde(skip)]
    pub person: Option<String>,
}

/// `sinks` with their `people` expanded by the workspace's `people` (none defined: names as
/// written, roles reach nobody). Whom an escalation was assigned to already applied the
/// rotation at its instant, so a role here means every person who may hold it.
pub fn address(sinks: &[Sink], people: Option<&crate::people::People>) -> Vec<Sink> {
    let mut out = Vec::new();
    for sink in sinks {
        let mut s = sink.clone();
        if let Some(email) = s.email.as_mut() {
            email.to = mail_to(&email.to, people);
        }
        if s.people.is_empty() {
            out.push(s);
            continue;
        }
        let reached = reached(&s.people, people);
        match people.filter(|_| s.per_person) {
            Some(p) => out.extend(reached.iter().filter_map(|n| per_person(&s, n, p.get(n)?))),
            None => {
                s.reaches = Some(reached);
                out.push(s);
            }
        }
    }
    out
}

/// The sink of one person of a `per_person` sink: named `<sink>--<person>` (a sink name
/// itself), reaching only them, sent to their ntfy topic or email address; `None` when they
/// have no such contact.
fn per_person(sink: &Sink, name: &str, person: &crate::people::Person) -> Option<Sink> {
    let mut s = sink.clone();
    s.name = format!("{}--{name}", sink.name);
    s.reaches = Some(vec![name.to_owned()]);
    s.per_person = false;
    s.person = Some(name.to_owned());
    match sink.kind {
        SinkKind::Ntfy => {
            let base = sink.url.as_deref()?.trim_end_matches('/');
            s.url = Some(format!("{base}/{}", person.ntfy.as_deref()?));
        }
        SinkKind::Email => {
            let email = s.email.as_mut()?;
            email.to = vec![person.email.clone()?];
        }
        _ => return None,
    }
    Some(s)
}

/// An email sink's `to` with its people (`alice`, `role:lead`: whoever holds the role or takes
/// its shifts) as their `email` of `people.toml`; addresses as written. A person without an
/// address, or a name with no people defined, adds nobody.
fn mail_to(to: &[String], people: Option<&crate::people::People>) -> Vec<String> {
    let (addresses, names): (Vec<String>, Vec<String>) =
        to.iter().cloned().partition(|a| a.contains('@'));
    if names.is_empty() {
        return addresses;
    }
    let mut all = addresses;
    if let Some(p) = people {
        for name in reached(&names, Some(p)) {
            if let Some(email) = p.get(&name).and_then(|person| person.email.clone()) {
                if !all.contains(&email) {
                    all.push(email);
                }
            }
        }
    }
    all
}

fn reached(specs: &[String], people: Option<&crate::people::People>) -> Vec<String> {
    let mut names = Vec::new();
    for spec in specs {
        match spec.strip_prefix(crate::people::ROLE_PREFIX) {
            Some(role) => {
                if let Some(p) = people {
                    names.extend(p.with_role(role));
                    names.extend(
                        p.rotations
                            .iter()
                            .filter(|r| r.role == role)
                            .flat_map(|r| r.people.iter().cloned()),
                    );
                }
            }
            None => names.push(spec.clone()),
        }
    }
    crate::stable_sort::sort_dedup(&mut names);
    names
}

/// How an `email` sink reaches its SMTP server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Email {
    pub host: String,
    /// Default 587 (STARTTLS), 465 for `tls = "tls"`.
    pub port: u16,
    /// `starttls` (default: plain connection upgraded, refused without it) or `tls` (TLS from
    /// the first byte).
    pub tls: String,
    pub from: String,
    pub to: Vec<String>,
    /// The names of the variables holding the SMTP user and password (both or neither).
    pub username_env: Option<String>,
    #[serde(skip)]
    pub password_env: Option<String>,
    /// A PEM file of certificates trusted beside the public roots (a company's own CA).
    pub ca_file: Option<String>,
}

/// How a `slack-app` sink reaches Slack's Web API, and how its interactions are checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SlackApp {
    /// The channel the messages go to: an id (`C0123456789`) or `#name`.
    pub channel: String,
    /// The variable holding the bot token (`xoxb-…`).
    pub token_env: String,
    /// The variable holding the app's signing secret: `/slack/interactions` takes a request
    /// only when its `X-Slack-Signature` is this secret's.
    pub signing_secret_env: String,
    /// The Web API's base (default `https://slack.com/api`; a stand-in's in tests).
    pub api_url: String,
}

/// Slack's Web API, where a `slack-app` sink sends unless `api_url` says otherwise.
pub const SLACK_API: &str = "https://slack.com/api";

/// `[serve] answer_link_hours` when the file does not set it.
pub const DEFAULT_LINK_HOURS: f64 = 24.0;

impl Sink {
    /// Whether this sink speaks for someone an escalation entry names (`assigned`): always
    /// without `people`, or for an entry that names nobody (no people when it was written).
    pub fn reaches(&self, assigned: Option<&[String]>) -> bool {
        match (&self.reaches, assigned) {
            (Some(names), Some(assigned)) => assigned.iter().any(|a| names.contains(a)),
            _ => true,
        }
    }

    /// Whether this sink is told of `event` on a record of `issue` between `from` and `to`.
    pub fn wants(&self, event: EventName, issue: u32, from: &str, to: &str) -> bool {
        (event == EventName::Test || self.events.contains(&event))
            && (self.issues.is_empty() || self.issues.contains(&issue))
            && (self.agents.is_empty() || self.agents.iter().any(|a| a == from || a == to))
    }

    /// The sink's destination fit for output: scheme and host of a URL (paths and queries of
    /// incoming-webhook URLs are their secret), the program of a command.
    pub fn destination(&self) -> String {
        if let Some(email) = &self.email {
            return format!("smtp://{}:{}", email.host, email.port);
        }
        if let Some(slack) = &self.slack {
            return format!("{} {}", display_url(&slack.api_url), slack.channel);
        }
        match (&self.url, self.command.first()) {
            (Some(url), _) => display_url(url),
            (None, Some(program)) => program.clone(),
            (None, None) => String::new(),
        }
    }
}

/// `scheme://host[:port]/…` of a URL, without user, password, path or query: what may be
/// printed of a URL that may carry a credential anywhere else.
pub fn display_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return String::from("(not a URL)");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    let more = if rest.len() > authority.len() {
        "/…"
    } else {
        ""
    };
    format!("{scheme}://{host}{more}")
}

/// The keys a `[[notify]]` table may hold (the strict reader of `config.toml` checks them too).
pub(crate) const KEYS: &[&str] = &[
    "name",
    "kind",
    "url",
    "secret_env",
    "secret",
    "command",
    "events",
    "issues",
    "agents",
    "after_minutes",
    "remind_every_minutes",
    "answer_links",
    "host",
    "port",
    "tls",
    "from",
    "to",
    "username_env",
    "password_env",
    "ca_file",
    "people",
    "then",
    "per_person",
    "channel",
    "token_env",
    "signing_secret_env",
    "api_url",
];

/// The sinks of a `config.toml` (`file` names it in errors). No `[[notify]]`: none.
pub fn parse_sinks(file: &str, bytes: &[u8]) -> Result<Vec<Sink>, ClarifyError> {
    let text = crate::toml_read::toml_text(file, bytes)?;
    let src = Source { file, text };
    let doc = src.parse()?;
    let Some(value) = crate::toml_read::get(doc.get_ref(), "notify") else {
        return Ok(Vec::new());
    };
    let DeValue::Array(tables) = value.get_ref() else {
        return Err(src.error_at(
            &value.span(),
            format!(
                "notify must be an array of tables ([[notify]]), found {}",
                describe(value.get_ref())
            ),
        ));
    };
    let link_hours = link_hours(&src, doc.get_ref())?;
    let mut sinks: Vec<Sink> = Vec::with_capacity(tables.len());
    for table in tables {
        let mut sink = sink(&src, table)?;
        sink.link_hours = link_hours;
        if sinks.iter().any(|s| s.name == sink.name) {
            return Err(src.error_at(
                &table.span(),
                format!("notify.name \"{}\" is used by two sinks", sink.name),
            ));
        }
        sinks.push(sink);
    }
    Ok(sinks)
}

fn sink(src: &Source<'_>, value: &Value<'_>) -> Result<Sink, ClarifyError> {
    let table = src.table("notify", value)?;
    for (key, _) in table.iter() {
        let key_text: &str = key.get_ref();
        if !KEYS.contains(&key_text) {
            return Err(src.error_at(&key.span(), unknown_key(key_text)));
        }
    }
    let get = |key: &str| crate::toml_read::get(table, key);
    let missing = |key: &str| src.error_at(&value.span(), format!("[[notify]] needs {key}"));

    let name_value = get("name").ok_or_else(|| missing("name"))?;
    let name = sink_name(src, name_value)?;
    let kind = sink_kind(src, get("kind").ok_or_else(|| missing("kind"))?)?;
    let url = get("url").map(|v| sink_url(src, v)).transpose()?;
    let command = match get("command") {
        Some(v) => src.strings(
            "notify.command",
            v,
            ("strings [program, args…]", "strings"),
            |_| true,
        )?,
        None => Vec::new(),
    };
    shape(src, value, &name, kind, url.is_some(), !command.is_empty())?;
    let email = if kind == SinkKind::Email {
        Some(email(src, value, &name, &get)?)
    } else {
        None
    };
    let slack = slack_app(src, value, &name, kind, &get)?;
    let secret = secret(src, get("secret_env"), get("secret"))?;
    if secret.is_some() && kind != SinkKind::Webhook {
        return Err(src.error_at(
            &value.span(),
            format!(
                "[[notify]] \"{name}\": only a webhook is signed (secret_env / secret); a {} sink takes none",
                kind.as_str()
            ),
        ));
    }
    let events = match get("events") {
        Some(v) => events(src, v)?,
        None => vec![EventName::Escalated],
    };
    let issues = match get("issues") {
        Some(v) => issues(src, v)?,
        None => Vec::new(),
    };
    let agents = match get("agents") {
        Some(v) => src.agents("notify.agents", v)?,
        None => Vec::new(),
    };
    let minutes = |key: &str| -> Result<u32, ClarifyError> {
        match get(key) {
            Some(v) => src
                .int(&format!("notify.{key}"), v, 0, 10_080)
                .map(|n| n as u32),
            None => Ok(0),
        }
    };
    let after_minutes = minutes("after_minutes")?;
    let remind_every_minutes = minutes("remind_every_minutes")?;
    let answer_links = match get("answer_links") {
        Some(v) => src.boolean("notify.answer_links", v)?,
        None => false,
    };
    let (people, then, per_person) = for_people(src, value, &name, kind, after_minutes, &get)?;
    Ok(Sink {
        name,
        kind,
        url,
        command,
        secret,
        events,
        issues,
        agents,
        after_minutes,
        remind_every_minutes,
        answer_links,
        link_hours: DEFAULT_LINK_HOURS,
        email,
        slack,
        people,
        reaches: None,
        then,
        per_person,
        person: None,
    })
}

/// The keys that address people (docs/protocol.md §37): `people`, a ladder step's `then`,
/// and `per_person` (ntfy and email, beside `people`).
fn for_people<'v>(
    src: &Source<'_>,
    value: &Value<'v>,
    name: &str,
    kind: SinkKind,
    after_minutes: u32,
    get: &dyn Fn(&str) -> Option<&'v Value<'v>>,
) -> Result<(Vec<String>, Vec<String>, bool), ClarifyError> {
    let people = match get("people") {
        Some(v) => crate::people::read_deciders(src, "notify.people", v)?,
        None => Vec::new(),
    };
    let per_person = match get("per_person") {
        Some(v) => src.boolean("notify.per_person", v)?,
        None => false,
    };
    if per_person && (people.is_empty() || !matches!(kind, SinkKind::Ntfy | SinkKind::Email)) {
        return Err(src.error_at(
            &value.span(),
            format!("[[notify]] \"{name}\": per_person sends to each person's own ntfy topic or email address: it needs people = [...] and kind ntfy or email"),
        ));
    }
    let then = match get("then") {
        Some(v) => then_of(src, v, name, after_minutes)?,
        None => Vec::new(),
    };
    Ok((people, then, per_person))
}

/// `then`: one decider (`"role:cto"`) or a list of them, on a ladder step — a sink told at
/// once has no "unclaimed after" to follow.
fn then_of(
    src: &Source<'_>,
    v: &Value<'_>,
    name: &str,
    after_minutes: u32,
) -> Result<Vec<String>, ClarifyError> {
    if after_minutes == 0 {
        return Err(src.error_at(
            &v.span(),
            format!("[[notify]] \"{name}\": then names who is next after after_minutes; set after_minutes too"),
        ));
    }
    match v.get_ref() {
        DeValue::String(one) if crate::people::is_decider_spec(one) => Ok(vec![one.to_string()]),
        DeValue::String(_) => Err(src.error_at(
            &v.span(),
            "notify.then must be a person's name or role:<role>, e.g. \"role:cto\"",
        )),
        _ => crate::people::read_deciders(src, "notify.then", v),
    }
}

/// `notify.name`: a lowercase slug, unique among the sinks (checked by the caller).
fn sink_name(src: &Source<'_>, v: &Value<'_>) -> Result<String, ClarifyError> {
    let name = src.string("notify.name", v)?;
    if !is_sink_name(&name) {
        return Err(src.error_at(
            &v.span(),
            format!(
                "notify.name must match ^[a-z0-9][a-z0-9-]{{0,63}}$, found \"{}\"",
                crate::error::shown(&name)
            ),
        ));
    }
    Ok(name)
}

/// `notify.kind`: one of the kinds the deliverer knows.
fn sink_kind(src: &Source<'_>, v: &Value<'_>) -> Result<SinkKind, ClarifyError> {
    let kind_text = src.string("notify.kind", v)?;
    SinkKind::ALL
        .into_iter()
        .find(|k| k.as_str() == kind_text)
        .ok_or_else(|| {
            src.error_at(
                &v.span(),
                format!(
                    "notify.kind must be one of webhook, slack, slack-app, ntfy, command, email, found \"{}\"",
                    crate::error::shown(&kind_text)
                ),
            )
        })
}

/// `notify.url`: only http(s), so a `file:` or other scheme never reaches the HTTP client.
fn sink_url(src: &Source<'_>, v: &Value<'_>) -> Result<String, ClarifyError> {
    let url = src.string("notify.url", v)?;
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(src.error_at(&v.span(), "notify.url must start with https:// or http://"));
    }
    Ok(url)
}

/// Where a webhook's signing secret comes from: the environment or the file, never both
/// (two sources would leave unclear which one signs).
fn secret(
    src: &Source<'_>,
    env: Option<&Value<'_>>,
    inline: Option<&Value<'_>>,
) -> Result<Option<SecretFrom>, ClarifyError> {
    match (env, inline) {
        (Some(_), Some(v)) => Err(src.error_at(&v.span(), "give secret_env or secret, not both")),
        (Some(v), None) => Ok(Some(SecretFrom::Env(src.string("notify.secret_env", v)?))),
        (None, Some(v)) => Ok(Some(SecretFrom::Inline(src.string("notify.secret", v)?))),
        (None, None) => Ok(None),
    }
}

/// `notify.events`: the event names a sink is told about.
fn events(src: &Source<'_>, v: &Value<'_>) -> Result<Vec<EventName>, ClarifyError> {
    let names = src.strings(
        "notify.events",
        v,
        (
            "event names",
            "escalated, answered, resolved, stale, deadlock, route-failed or reminder",
        ),
        |s| EventName::parse(s).is_some(),
    )?;
    Ok(names.iter().filter_map(|s| EventName::parse(s)).collect())
}

/// `notify.issues`: the issue numbers a sink is limited to.
fn issues(src: &Source<'_>, v: &Value<'_>) -> Result<Vec<u32>, ClarifyError> {
    let DeValue::Array(items) = v.get_ref() else {
        return Err(src.error_at(
            &v.span(),
            format!(
                "notify.issues must be an array of issue numbers, found {}",
                describe(v.get_ref())
            ),
        ));
    };
    items
        .iter()
        .map(|i| src.int("notify.issues", i, 1, 999_999).map(|n| n as u32))
        .collect()
}

/// Whether a sink of `kind` has what it needs of `url` and `command` (one, never both).
fn shape(
    src: &Source<'_>,
    value: &Value<'_>,
    name: &str,
    kind: SinkKind,
    has_url: bool,
    has_command: bool,
) -> Result<(), ClarifyError> {
    match kind {
        SinkKind::Command if !has_command || has_url => {
            Err(src.error_at(
                &value.span(),
                format!(
                "[[notify]] \"{name}\" of kind command needs command = [program, args…] and no url"
            ),
            ))
        }
        SinkKind::Webhook | SinkKind::Slack | SinkKind::Ntfy
            if !has_url || has_command =>
        {
            Err(src.error_at(
                &value.span(),
                format!(
                    "[[notify]] \"{name}\" of kind {} needs url and no command",
                    kind.as_str()
                ),
            ))
        }
        SinkKind::SlackApp if has_url || has_command => {
            Err(src.error_at(
                &value.span(),
                format!("[[notify]] \"{name}\" of kind slack-app needs channel, token_env and signing_secret_env, and no url or command (api_url names a Web API other than Slack's)"),
            ))
        }
        SinkKind::Email if has_url || has_command => {
            Err(src.error_at(
                &value.span(),
                format!("[[notify]] \"{name}\" of kind email needs host, from and to, and no url or command"),
            ))
        }
        _ => Ok(()),
    }
}

/// A `slack-app` sink's settings; `None` for another kind, which may not name them.
fn slack_app<'v>(
    src: &Source<'_>,
    value: &Value<'v>,
    name: &str,
    kind: SinkKind,
    get: &dyn Fn(&str) -> Option<&'v Value<'v>>,
) -> Result<Option<SlackApp>, ClarifyError> {
    const OWN: [&str; 4] = ["channel", "token_env", "signing_secret_env", "api_url"];
    if kind != SinkKind::SlackApp {
        return match OWN.iter().find_map(|k| get(k).map(|v| (k, v))) {
            Some((key, v)) => Err(src.error_at(
                &v.span(),
                format!(
                    "[[notify]] \"{name}\": {key} is a slack-app sink's; this one is {}",
                    kind.as_str()
                ),
            )),
            None => Ok(None),
        };
    }
    let text = |key: &str| -> Result<Option<String>, ClarifyError> {
        get(key)
            .map(|v| src.string(&format!("notify.{key}"), v))
            .transpose()
    };
    let needs = |key: &str| {
        src.error_at(
            &value.span(),
            format!("[[notify]] \"{name}\" of kind slack-app needs {key}"),
        )
    };
    let api_url = match get("api_url") {
        Some(v) => sink_url(src, v)?.trim_end_matches('/').to_owned(),
        None => SLACK_API.to_owned(),
    };
    Ok(Some(SlackApp {
        channel: text("channel")?
            .ok_or_else(|| needs("channel (an id like C0123456789, or #name)"))?,
        token_env: text("token_env")?
            .ok_or_else(|| needs("token_env (the variable holding the bot token, xoxb-…)"))?,
        signing_secret_env: text("signing_secret_env")?.ok_or_else(|| {
            needs("signing_secret_env (the variable holding the app's signing secret)")
        })?,
        api_url,
    }))
}

/// An email sink's SMTP settings.
fn email<'v>(
    src: &Source<'_>,
    value: &Value<'v>,
    name: &str,
    get: &dyn Fn(&str) -> Option<&'v Value<'v>>,
) -> Result<Email, ClarifyError> {
    let missing = |key: &str| {
        src.error_at(
            &value.span(),
            format!("[[notify]] \"{name}\" of kind email needs {key}"),
        )
    };
    let text = |key: &str| -> Result<Option<String>, ClarifyError> {
        get(key)
            .map(|v| src.string(&format!("notify.{key}"), v))
            .transpose()
    };
    let host = text("host")?.ok_or_else(|| missing("host"))?;
    let from = text("from")?.ok_or_else(|| missing("from"))?;
    // A per-person sink sends to each person's own address (`people.toml`'s `email`).
    let per_person =
        get("per_person").is_some_and(|v| matches!(v.get_ref(), DeValue::Boolean(true)));
    let to = match get("to") {
        Some(v) => src.strings(
            "notify.to",
            v,
            (
                "addresses",
                "addresses like \"ops@example.com\", people or role:<role> of people.toml",
            ),
            |a| a.contains('@') || crate::people::is_decider_spec(a),
        )?,
        None if per_person => Vec::new(),
        None => return Err(missing("to")),
    };
    let tls = text("tls")?.unwrap_or_else(|| "starttls".into());
    if tls != "starttls" && tls != "tls" {
        return Err(src.error_at(
            &get("tls").map_or(value.span(), |v| v.span()),
            "notify.tls must be \"starttls\" or \"tls\"",
        ));
    }
    let port = match get("port") {
        Some(v) => u16::try_from(src.int("notify.port", v, 1, 65_535)?).unwrap_or(587),
        None if tls == "tls" => 465,
        None => 587,
    };
    let (username_env, password_env) = (text("username_env")?, text("password_env")?);
    if username_env.is_some() != password_env.is_some() {
        return Err(missing("username_env and password_env together"));
    }
    Ok(Email {
        host,
        port,
        tls,
        from,
        to,
        username_env,
        password_env,
        ca_file: text("ca_file")?,
    })
}

/// `[serve] answer_link_hours`: a number of hours above 0, at most a week (a fraction is
/// allowed: a link may be meant for the next few minutes only).
fn link_hours(src: &Source<'_>, root: &toml::de::DeTable<'_>) -> Result<f64, ClarifyError> {
    let Some(section) = crate::toml_read::get(root, "serve") else {
        return Ok(DEFAULT_LINK_HOURS);
    };
    let serve = src.table("serve", section)?;
    match crate::toml_read::get(serve, "answer_link_hours") {
        Some(v) => {
            let hours = src.float("answer_link_hours", v, 0.0, 168.0, "0 to 168")?;
            if hours > 0.0 {
                Ok(hours)
            } else {
                Err(src.error_at(&v.span(), "answer_link_hours must be above 0"))
            }
        }
        None => Ok(DEFAULT_LINK_HOURS),
    }
}

fn is_sink_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The message for an unknown key, with the nearest known one when it is close (the same
/// words as every strict table's, `crate::config_strict`).
fn unknown_key(key: &str) -> String {
    format!(
        "unknown key '{}' in [[notify]]; {}",
        crate::error::shown(key),
        crate::nearest::hint(key, KEYS)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Sink>, String> {
        parse_sinks("config.toml", text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn an_email_sink_and_answer_links_are_read_and_checked() {
        let sinks = parse(
            "[serve]\nanswer_link_hours = 0.5\n\n[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"smtp.example.com\"\nfrom = \"a@example.com\"\nto = [\"ops@example.com\"]\nanswer_links = true\n",
        )
        .unwrap_or_default();
        let mail = &sinks[0];
        assert!(mail.answer_links);
        assert!((mail.link_hours - 0.5).abs() < f64::EPSILON);
        let email = mail.email.clone().unwrap_or_else(|| unreachable!());
        assert_eq!((email.port, email.tls.as_str()), (587, "starttls"));
        assert_eq!(mail.destination(), "smtp://smtp.example.com:587");
        let base = "[[notify]]\nname = \"mail\"\nkind = \"email\"\nhost = \"h\"\nfrom = \"a@example.com\"\n";
        assert!(parse(base).unwrap_err().contains("needs to"));
        let bad = format!("{base}to = [\"no body\"]\n");
        assert!(parse(&bad).unwrap_err().contains("addresses"));
        let half = format!("{base}to = [\"o@example.com\"]\nusername_env = \"U\"\n");
        assert!(parse(&half).unwrap_err().contains("together"));
        let tls = format!("{base}to = [\"o@example.com\"]\ntls = \"none\"\n");
        assert!(parse(&tls).unwrap_err().contains("starttls"));
        let zero = "[serve]\nanswer_link_hours = 0\n[[notify]]\nname = \"n\"\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/t\"\n";
        assert!(parse(zero).unwrap_err().contains("above 0"));
        let plain =
            parse("[[notify]]\nname = \"n\"\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/t\"\n")
                .unwrap_or_default();
        assert!(!plain[0].answer_links, "off by default");
        assert!((plain[0].link_hours - DEFAULT_LINK_HOURS).abs() < f64::EPSILON);
    }

    #[test]
    fn reads_every_kind_with_defaults() {
        let sinks = parse(
            "[clarify]\nmax_retries = 1\n\n[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"https://hooks.example.com/agentx\"\nsecret_env = \"TEAM_SECRET\"\n\n[[notify]]\nname = \"desktop\"\nkind = \"command\"\ncommand = [\"notify-send\", \"AgentX\"]\nevents = [\"escalated\", \"reminder\"]\nissues = [42]\nagents = [\"engineer\"]\nafter_minutes = 60\nremind_every_minutes = 30\n",
        )
        .unwrap_or_default();
        assert_eq!(sinks.len(), 2);
        let team = &sinks[0];
        assert_eq!(team.kind, SinkKind::Webhook);
        assert_eq!(team.events, [EventName::Escalated]);
        assert_eq!(team.secret, Some(SecretFrom::Env("TEAM_SECRET".into())));
        assert_eq!(team.destination(), "https://hooks.example.com/…");
        let desktop = &sinks[1];
        assert_eq!(desktop.command, ["notify-send", "AgentX"]);
        assert_eq!(desktop.after_minutes, 60);
        assert!(desktop.wants(EventName::Reminder, 42, "engineer", "architect"));
        assert!(!desktop.wants(EventName::Reminder, 43, "engineer", "architect"));
        assert!(!desktop.wants(EventName::Reminder, 42, "pm", "architect"));
        assert!(!desktop.wants(EventName::Answered, 42, "engineer", "architect"));
    }

    #[test]
    fn refuses_typos_and_mistakes_with_their_place() {
        let cases = [
            (
                "[[notify]]\nname = \"team\"\nkind = \"webhook\"\nurl = \"https://x.test/\"\nsecret_evn = \"S\"\n",
                "config.toml:5:1: unknown key 'secret_evn' in [[notify]]; did you mean 'secret_env'?",
            ),
            (
                "[[notify]]\nname = \"team\"\nkind = \"webhok\"\nurl = \"https://x.test/\"\n",
                "config.toml:3:8: notify.kind must be one of webhook, slack, slack-app, ntfy, command, email, found \"webhok\"",
            ),
            (
                "[[notify]]\nname = \"team\"\nkind = \"slack\"\n",
                "needs url and no command",
            ),
            (
                "[[notify]]\nname = \"team\"\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/x\"\nsecret = \"whsec_AAAA\"\n",
                "only a webhook is signed",
            ),
            (
                "[[notify]]\nname = \"a\"\nkind = \"command\"\ncommand = [\"true\"]\nevents = [\"escalate\"]\n",
                "config.toml:5:11: notify.events must hold escalated, answered, resolved, stale, deadlock, route-failed or reminder, found string \"escalate\"",
            ),
            (
                "[[notify]]\nname = \"a\"\nkind = \"command\"\ncommand = [\"true\"]\n[[notify]]\nname = \"a\"\nkind = \"command\"\ncommand = [\"true\"]\n",
                "is used by two sinks",
            ),
            (
                "[[notify]]\nname = \"Team\"\nkind = \"command\"\ncommand = [\"true\"]\n",
                "notify.name must match",
            ),
            (
                "[[notify]]\nname = \"a\"\nkind = \"webhook\"\nurl = \"ftp://x\"\n",
                "must start with https:// or http://",
            ),
        ];
        for (text, message) in cases {
            let err = parse(text).err().unwrap_or_default();
            assert!(err.contains(message), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_slack_app_sink_names_its_channel_token_and_secret() {
        let ok = "[[notify]]\nname = \"s\"\nkind = \"slack-app\"\nchannel = \"#d\"\ntoken_env = \"B\"\nsigning_secret_env = \"S\"\n";
        let sinks = parse_sinks("config.toml", ok.as_bytes()).unwrap();
        let slack = sinks[0].slack.as_ref().unwrap();
        assert_eq!(
            (slack.api_url.as_str(), slack.channel.as_str()),
            (SLACK_API, "#d")
        );
        assert_eq!(sinks[0].destination(), "https://slack.com/… #d");
        let without = ok.replace("signing_secret_env = \"S\"\n", "");
        let e = parse_sinks("config.toml", without.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs signing_secret_env"), "{e}");
        let with_url = format!("{ok}url = \"https://x.test/\"\n");
        assert!(parse_sinks("config.toml", with_url.as_bytes()).is_err());
        let other = "[[notify]]\nname = \"s\"\nkind = \"webhook\"\nurl = \"https://x.test/\"\nchannel = \"#d\"\n";
        let e = parse_sinks("config.toml", other.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("channel is a slack-app sink's"), "{e}");
    }

    #[test]
    fn urls_are_shown_without_their_secrets() {
        assert_eq!(
            display_url("https://user:pw@hooks.slack.com/services/T0/B0/XYZ?x=1"),
            "https://hooks.slack.com/…"
        );
        assert_eq!(
            display_url("http://127.0.0.1:9000"),
            "http://127.0.0.1:9000"
        );
        assert_eq!(display_url("nonsense"), "(not a URL)");
    }
}
