//! Resources: `agentx://issues/<n>` (the ledger JSON), `agentx://clarifications/<id>`
//! (the thread as markdown) and `agentx://inbox` (what waits on the acting agent: the pending
//! and stale questions addressed to it, asked-back ones among them), and
//! `notifications/resources/updated` for subscribed ones whose ledger changes (the inbox: whose
//! listing changes) — whoever wrote it (this server, another agent's server, the CLI, the
//! extension). 2025-era clients subscribe with `resources/subscribe` (below), 2026-07-28
//! clients with `subscriptions/listen` (`crate::listen`). The watcher looks at the store's change feed (docs/protocol.md §21) every
//! 250 ms: file stamps when the state is in files, PostgreSQL's signalled revisions when it is
//! there.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentx_clarify_core::listing::ListFilter;
use agentx_clarify_core::names::{parse_issue, ClarificationId};
use agentx_clarify_core::{ClarifyError, Status};
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam,
};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{json, Value};

use crate::hub::{Hub, Version};
use crate::reply;

const ISSUES: &str = "agentx://issues/";
const CLARIFICATIONS: &str = "agentx://clarifications/";
/// The acting agent's inbox.
pub const INBOX: &str = "agentx://inbox";
/// How often subscribed resources are looked at when the store cannot signal.
const WATCH_EVERY: Duration = Duration::from_millis(250);
/// How often a subscription with a wake looks whether its client is gone (it looks at the
/// store only when woken, or after the feed's safety tick).
const CLIENT_CHECK: Duration = Duration::from_secs(5);

/// What a resource URI names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Issue(u32),
    Clarification(ClarificationId),
    Inbox,
}

impl Target {
    pub fn parse(uri: &str) -> Result<Target, ErrorData> {
        let bad = |why: String| {
            ErrorData::invalid_params(format!("{why}: '{}'", crate::lines::quote(uri)), None)
        };
        if uri == INBOX {
            return Ok(Target::Inbox);
        }
        if let Some(n) = uri.strip_prefix(ISSUES) {
            return parse_issue(n)
                .map(Target::Issue)
                .map_err(|e| bad(e.to_string()));
        }
        if let Some(id) = uri.strip_prefix(CLARIFICATIONS) {
            return ClarificationId::parse(id)
                .map(Target::Clarification)
                .map_err(|e| bad(e.to_string()));
        }
        Err(bad(format!(
            "unknown resource: expected {ISSUES}<n>, {CLARIFICATIONS}<id> or {INBOX}"
        )))
    }

    /// The issue whose ledger holds this resource; `None`: any ledger may change it (the
    /// inbox).
    pub fn issue(&self) -> Option<u32> {
        match self {
            Target::Issue(n) => Some(*n),
            Target::Clarification(id) => Some(id.issue),
            Target::Inbox => None,
        }
    }
}

/// Every issue's ledger and every clarification, ascending.
pub async fn list(hub: &Hub, viewer: Option<Arc<str>>) -> Result<ListResourcesResult, ErrorData> {
    let listed = ok(hub
        .call_seen_by(viewer, "list", json!({ "all": true }))
        .await)?;
    let records = listed
        .get("clarifications")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut issues = std::collections::BTreeSet::new();
    let mut out = Vec::with_capacity(records.len() * 2);
    for r in records {
        let text = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or_default();
        if let Some(n) = r.get("issueNumber").and_then(Value::as_u64) {
            issues.insert(n);
        }
        let resource = Resource::new(format!("{CLARIFICATIONS}{}", text("id")), text("id"))
            .with_title(format!("{} ({})", text("topic"), text("status")))
            .with_mime_type("text/markdown");
        out.push(resource);
    }
    let ledgers = issues.iter().map(|n| {
        Resource::new(format!("{ISSUES}{n}"), format!("issue-{n}"))
            .with_title(format!("Clarification ledger of issue #{n}"))
            .with_mime_type("application/json")
    });
    let inbox = Resource::new(INBOX, "inbox")
        .with_title("Questions waiting for your answer (JSON)")
        .with_mime_type("application/json");
    let mut all: Vec<Resource> = std::iter::once(inbox).chain(ledgers).collect();
    all.append(&mut out);
    Ok(ListResourcesResult::with_all_items(all))
}

pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{ISSUES}{{issue}}"), "issue-ledger")
            .with_title("An issue's clarification ledger (JSON)")
            .with_mime_type("application/json"),
        ResourceTemplate::new(format!("{CLARIFICATIONS}{{id}}"), "clarification")
            .with_title("One clarification's thread (markdown)")
            .with_mime_type("text/markdown"),
    ])
}

/// The pending and stale records addressed to `agent` (the `clarify_inbox` tool's listing).
pub async fn inbox(hub: &Hub, agent: Arc<str>) -> Result<Value, ClarifyError> {
    let filter = ListFilter {
        statuses: vec![Status::Pending, Status::Stale],
        ..ListFilter::default()
    };
    let mine = Arc::clone(&agent);
    let mut listed = hub
        .with_store("list", move |store, _| {
            let mut listed = agentx_clarify_command::list(store, &filter)?;
            listed.records.retain(|(_, r)| r.to.as_str() == &*mine);
            Ok(serde_json::to_value(listed.to_json()).unwrap_or(Value::Null))
        })
        .await?;
    if let Value::Object(m) = &mut listed {
        m.insert("agent".into(), Value::from(&*agent));
    }
    Ok(listed)
}

/// Resource `uri` as `viewer` may see it; the inbox is `agent`'s (the call's actor).
pub async fn read(
    hub: &Hub,
    viewer: Option<Arc<str>>,
    agent: Option<Arc<str>>,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let contents = match Target::parse(uri)? {
        Target::Inbox => {
            let agent = agent.ok_or_else(|| {
                ErrorData::invalid_params("the inbox is an agent's: send its token", None)
            })?;
            let listed = inbox(hub, agent)
                .await
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            let text = serde_json::to_string_pretty(&listed)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            ResourceContents::text(text, uri).with_mime_type("application/json")
        }
        Target::Issue(n) => {
            let shown = ok(hub
                .call_seen_by(viewer, "show", json!({ "issue": n }))
                .await)?;
            let ledger = shown.get("ledger").unwrap_or(&Value::Null);
            let text = serde_json::to_string_pretty(ledger)
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
            ResourceContents::text(text, uri).with_mime_type("application/json")
        }
        Target::Clarification(id) => {
            let shown = ok(hub
                .call_seen_by(viewer, "show", json!({ "id": id.to_string() }))
                .await)?;
            let text = reply::show_text(&shown);
            ResourceContents::text(text, uri).with_mime_type("text/markdown")
        }
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// The envelope when `ok`; its refusal as a protocol error otherwise (resources have no
/// `isError` result), by `errors.rs`'s table.
fn ok(envelope: Value) -> Result<Value, ErrorData> {
    if envelope.get("ok") == Some(&Value::Bool(true)) {
        return Ok(envelope);
    }
    Err(crate::errors::resource_error_of(&envelope))
}

/// Subscribed URIs, the issue whose ledger each depends on and how it looked when last
/// checked.
#[derive(Default)]
pub struct Watch {
    subscribed: Mutex<BTreeMap<String, (Option<u32>, Version)>>,
    running: Mutex<bool>,
}

impl Watch {
    /// Subscribes `uri` (checked by the caller) to changes of its issue's ledger, as it looks
    /// now; starts the watcher the first time, on the current runtime, telling `peer`.
    pub fn subscribe(
        self: &Arc<Self>,
        uri: String,
        seen: (Option<u32>, Version),
        hub: Hub,
        peer: Peer<RoleServer>,
    ) {
        self.lock().insert(uri, seen);
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if !*running {
            *running = true;
            tokio::spawn(run(Arc::clone(self), hub, peer));
        }
    }

    pub fn unsubscribe(&self, uri: &str) {
        self.lock().remove(uri);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (Option<u32>, Version)>> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// URIs whose ledger changed since the last check (their versions updated).
    async fn changed(&self, hub: &Hub) -> Vec<String> {
        let watched: Vec<(String, Option<u32>)> = self
            .lock()
            .iter()
            .map(|(uri, (issue, _))| (uri.clone(), *issue))
            .collect();
        let mut out = Vec::new();
        for (uri, issue) in watched {
            let now = hub.version_of(issue).await;
            if let Some((_, last)) = self.lock().get_mut(&uri) {
                if now != *last {
                    *last = now;
                    out.push(uri);
                }
            }
        }
        out
    }
}

/// Polls until the client goes away; the runtime drops it when the server stops.
async fn run(watch: Arc<Watch>, hub: Hub, peer: Peer<RoleServer>) {
    if let Some(feed) = hub.subscribe() {
        return follow(watch, feed, peer).await;
    }
    let mut wake = hub.wake().await;
    let tick = agentx_clarify_store::safety_tick();
    let mut since_look = tokio::time::Instant::now();
    loop {
        match &mut wake {
            // Woken by the store (file events, NOTIFY); the timer only checks the client and,
            // after the safety tick, looks anyway.
            Some(rx) => {
                let woke = tokio::select! {
                    changed = rx.changed() => changed.is_ok(),
                    () = tokio::time::sleep(CLIENT_CHECK.min(tick)) => false,
                };
                if rx.has_changed().is_err() {
                    // The store stopped signalling: look on the timer from now on.
                    wake = None;
                }
                if peer.is_transport_closed() {
                    return;
                }
                if !woke && since_look.elapsed() < tick {
                    continue;
                }
            }
            None => {
                tokio::time::sleep(WATCH_EVERY).await;
                if peer.is_transport_closed() {
                    return;
                }
            }
        }
        since_look = tokio::time::Instant::now();
        for uri in watch.changed(&hub).await {
            let param = ResourceUpdatedNotificationParam::new(uri);
            if peer.notify_resource_updated(param).await.is_err() {
                return;
            }
        }
    }
}

/// With a change feed (`agentx serve`): tells the client about the subscribed URIs of each
/// change's issues (every one when the feed lost track), until the client goes away.
async fn follow(
    watch: Arc<Watch>,
    mut feed: tokio::sync::broadcast::Receiver<Vec<u32>>,
    peer: Peer<RoleServer>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let news = tokio::select! {
            news = feed.recv() => news,
            // Looks now and then whether the client is gone although nothing changes.
            () = tokio::time::sleep(Duration::from_secs(5)) => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
        };
        let issues = match news {
            Ok(issues) => issues,
            Err(RecvError::Lagged(_)) => Vec::new(),
            Err(RecvError::Closed) => return,
        };
        let uris: Vec<String> = watch
            .lock()
            .iter()
            .filter(|(_, (issue, _))| {
                issues.is_empty() || issue.is_none_or(|n| issues.contains(&n))
            })
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in uris {
            let param = ResourceUpdatedNotificationParam::new(uri);
            if peer.notify_resource_updated(param).await.is_err() {
                return;
            }
        }
    }
}
