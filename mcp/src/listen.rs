//! `subscriptions/listen` (2026-07-28, docs/protocol.md §24): one open request per client
//! that carries `notifications/resources/updated` for the resources it named — an issue's
//! ledger, a clarification, the acting agent's inbox — until the client cancels it. What
//! changed is learnt as a wait learns it: the server's change feed (`agentx serve`), else the
//! store's own wake (file events, `NOTIFY`), else a look every 250 ms; an inbox is announced
//! only when its listing changed, not at every write elsewhere.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
};
use rmcp::service::SubscriptionContext;
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use crate::hub::{Hub, Version};
use crate::resources::{self, Target};

/// How often the resources are looked at when nothing signals changes.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// How a resource looked when last checked.
#[derive(PartialEq)]
enum Seen {
    Ledger(Version),
    /// Every ledger's version, and the inbox's listing then.
    Inbox(Version, Option<Value>),
}

struct Watched {
    uri: String,
    target: Target,
    seen: Seen,
}

async fn look(hub: &Hub, target: &Target, agent: Option<&Arc<str>>, last: Option<&Seen>) -> Seen {
    let version = hub.version_of(target.issue()).await;
    match target {
        Target::Inbox => {
            if let Some(Seen::Inbox(v, listed)) = last {
                if *v == version {
                    return Seen::Inbox(version, listed.clone());
                }
            }
            let listed = match agent {
                Some(a) => resources::inbox(hub, Arc::clone(a)).await.ok(),
                None => None,
            };
            Seen::Inbox(version, listed)
        }
        _ => Seen::Ledger(version),
    }
}

/// Sends the accepted resources' updates on `ctx` until it is cancelled or closed.
pub async fn follow(hub: &Hub, agent: Option<Arc<str>>, ctx: SubscriptionContext) {
    let uris = ctx
        .accepted()
        .resource_subscriptions
        .clone()
        .unwrap_or_default();
    let mut watched = Vec::with_capacity(uris.len());
    for uri in uris {
        if let Ok(target) = Target::parse(&uri) {
            let seen = look(hub, &target, agent.as_ref(), None).await;
            watched.push(Watched { uri, target, seen });
        }
    }
    let mut feed = hub.subscribe();
    let mut wake = hub.wake().await;
    let pause = if feed.is_some() || wake.is_some() {
        agentx_clarify_store::safety_tick()
    } else {
        LOOK_EVERY
    };
    loop {
        tokio::select! {
            () = ctx.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
            () = any_news(&mut feed) => {}
            () = any_signal(&mut wake) => {}
        }
        for w in &mut watched {
            let now = look(hub, &w.target, agent.as_ref(), Some(&w.seen)).await;
            if now == w.seen {
                continue;
            }
            w.seen = now;
            let update =
                ServerNotification::ResourceUpdatedNotification(ResourceUpdatedNotification::new(
                    ResourceUpdatedNotificationParam::new(w.uri.clone()),
                ));
            if ctx.sink().send(update).await.is_err() {
                return;
            }
        }
    }
}

/// Resolves at the feed's next news (any issue: each resource then looks); never without one.
async fn any_news(feed: &mut Option<tokio::sync::broadcast::Receiver<Vec<u32>>>) {
    let Some(rx) = feed else {
        return std::future::pending().await;
    };
    match rx.recv().await {
        Ok(_) | Err(RecvError::Lagged(_)) => {}
        Err(RecvError::Closed) => {
            *feed = None;
            std::future::pending::<()>().await;
        }
    }
}

/// Resolves at the store's next signal; never without a wake.
async fn any_signal(wake: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let Some(rx) = wake else {
        return std::future::pending().await;
    };
    if rx.changed().await.is_err() {
        *wake = None;
        std::future::pending::<()>().await;
    }
}
