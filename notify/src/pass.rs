//! One delivery pass of the outbox (`agentx notify send`, the server's worker): what is owed
//! comes from the ledgers, what was tried from the outbox beside them (`home.rs`: the state
//! directory's `outbox.json`, or PostgreSQL's `agentx.state_docs`).

use agentx_clarify_command::Store;
use agentx_clarify_core::notify::outbox::{State, RENEW_MS};
use agentx_clarify_core::notify::Outbox;
use agentx_clarify_core::notify::{Delivery, Event, EventName, Sink};
use agentx_clarify_core::time::Timestamp;
use agentx_clarify_core::{ClarifyError, Ledger};
use agentx_clarify_workspace::{Workspace, WorkspaceStore};

use crate::home::Home;

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Deliveries newly owed.
    pub added: usize,
    pub delivered: usize,
    /// `(delivery, error)` of each failed try.
    pub failed: Vec<(String, String)>,
    /// Still pending afterwards (failing ones included), and dead.
    pub pending: usize,
    pub dead: usize,
    /// When the next pending delivery may be tried.
    pub next_due: Option<i64>,
}

/// Who holds a delivery while sending it: this process on this host.
pub fn deliverer() -> String {
    format!(
        "{}:{}",
        agentx_clarify_store::this_host(),
        std::process::id()
    )
}

/// One delivery pass over the workspace `ws`: plan what the ledgers owe, take what is due,
/// send it outside the outbox's lock, record each try. The CLI's `notify send` and the
/// server's worker run it, on the settings as the handle has them now (a watching handle's
/// edited `[[notify]]` is used by the next pass).
pub fn pass(ws: &Workspace, now: i64) -> Result<PassReport, ClarifyError> {
    pass_with(ws, now, None)
}

/// [`pass`] with the inbox's public URL (`agentx serve --public-url`, `notify send
/// --public-url`): each event's `url` is then its thread's page there.
pub fn pass_with(
    ws: &Workspace,
    now: i64,
    public_url: Option<&str>,
) -> Result<PassReport, ClarifyError> {
    let store = ws.store()?;
    let settings = store.files.settings();
    let sinks = &*addressed(&store, settings.sinks()?)?;
    // A sink seen for the first time is owed what happened since it was configured.
    let configured = store.files.disk().config_modified_ms();
    // GitHub Mode's comments are deliveries of this outbox too (docs/github.md).
    let github = settings.github()?;
    if sinks.is_empty() && github.is_none() {
        // Nothing to tell anyone: no ledger is read (a worker runs this often).
        return Ok(PassReport::default());
    }
    // The outbox beside the ledgers it follows: the state directory, or PostgreSQL.
    let home = Home(&*store);
    let mut ledgers = home.ledgers()?;
    // A ladder's next step (`then`) assigns more people first, so they are told in this pass.
    let (wrote, ladder_failed) = ladder(&store, sinks, &ledgers, now);
    if wrote {
        ledgers = home.ledgers()?;
    }
    let refs: Vec<&Ledger> = ledgers.iter().collect();
    let me = deliverer();
    // Plan and take what is due in one locked step; send outside the lock (a slow receiver
    // must not hold every other writer of the outbox); record the tries in a second step.
    let (added, taken) = home.update_outbox(&me, |outbox| {
        let mut added = outbox.plan(sinks, &refs, now, configured);
        if github.is_some() {
            added += agentx_clarify_core::github::plan(outbox, &refs, now);
        }
        outbox.prune(now);
        let mut taken = Vec::new();
        for key in outbox.due(now) {
            if outbox.lease(&key, &me, now) {
                if let Some(d) = outbox.deliveries.get(&key) {
                    taken.push((key.clone(), d.clone()));
                }
            }
        }
        (added, taken)
    })?;
    // The pass's clock: `now` as given, moved on by the time the pass has taken — a failed
    // try's backoff counts from the try, and leases are renewed as sending goes on.
    let started = std::time::Instant::now();
    let at = move || {
        now.saturating_add(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX))
    };
    let keys: Vec<String> = taken.iter().map(|(k, _)| k.clone()).collect();
    let sent = std::thread::scope(|s| {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        if !keys.is_empty() {
            let (home, me, keys, at) = (&home, &me, &keys, &at);
            s.spawn(move || renew_while_sending(home, me, keys, at, stopped));
        }
        let sent = send_all(&home, sinks, github, &ledgers, &taken, public_url, &at);
        drop(stop);
        sent
    });
    let Sent {
        results,
        defer,
        dropped,
    } = sent;
    let summary = home.update_outbox(&me, |outbox| {
        for (key, result, tried) in &results {
            outbox.settle(key, &me, result.clone(), *tried);
        }
        for (key, until) in &defer {
            outbox.defer(key, *until);
        }
        for key in &dropped {
            outbox.cancel(key, &me, now);
        }
        let pending = outbox
            .deliveries
            .values()
            .filter(|d| d.state == State::Pending)
            .count();
        let dead = outbox
            .deliveries
            .values()
            .filter(|d| d.state == State::Dead)
            .count();
        (pending, dead, outbox.next_due())
    })?;
    // The next ladder step is a wake-up too: nothing is owed for it until it assigns.
    let refs: Vec<&Ledger> = ledgers.iter().collect();
    let step = agentx_clarify_core::people::ladder_next(sinks, &refs, now);
    let summary = (
        summary.0,
        summary.1,
        summary.2.into_iter().chain(step).min(),
    );
    let (pending, dead, next) = summary;
    let delivered = results.iter().filter(|(_, r, _)| r.is_ok()).count();
    let failed = ladder_failed
        .into_iter()
        .chain(
            results
                .into_iter()
                .filter_map(|(k, r, _)| r.err().map(|e| (k, e))),
        )
        .collect();
    Ok(PassReport {
        added,
        delivered,
        failed,
        pending,
        dead,
        next_due: next,
    })
}

/// What a delivery pass at `now` would owe, without sending or writing anything: the outbox
/// as stored with the deliveries the ledgers owe that it does not hold yet (a sink configured
/// since the last pass included), for `agentx notify status`. The second value lists the
/// keys of those new deliveries.
pub fn preview(ws: &Workspace, now: i64) -> Result<(Outbox, Vec<String>), ClarifyError> {
    let store = ws.store()?;
    let sinks = &*addressed(&store, store.files.settings().sinks()?)?;
    let home = Home(&*store);
    let mut outbox = home.read_outbox()?;
    if sinks.is_empty() {
        return Ok((outbox, Vec::new()));
    }
    let ledgers = home.ledgers()?;
    let refs: Vec<&Ledger> = ledgers.iter().collect();
    let before: std::collections::BTreeSet<String> = outbox.deliveries.keys().cloned().collect();
    outbox.plan(sinks, &refs, now, store.files.disk().config_modified_ms());
    let new = outbox
        .deliveries
        .keys()
        .filter(|k| !before.contains(*k))
        .cloned()
        .collect();
    Ok((outbox, new))
}

/// What the sends of one pass came to.
struct Sent {
    /// Each try: the delivery, its result, when it ended.
    results: Vec<(String, Result<(), String>, i64)>,
    /// Deliveries GitHub's rate limit holds until its reset.
    defer: Vec<(String, i64)>,
    /// Deliveries no longer owed when their turn came (their record was decided).
    dropped: Vec<String>,
}

/// Sends every taken delivery in turn, outside the outbox's lock.
fn send_all(
    home: &Home<'_, WorkspaceStore>,
    sinks: &[Sink],
    github: Option<&agentx_clarify_core::github::GithubConfig>,
    ledgers: &[Ledger],
    taken: &[(String, Delivery)],
    public_url: Option<&str>,
    at: &impl Fn() -> i64,
) -> Sent {
    let mut sent = Sent {
        results: Vec::with_capacity(taken.len()),
        defer: Vec::new(),
        dropped: Vec::new(),
    };
    let mut client = None;
    for (key, d) in taken {
        // At send time, the record as it is now: a push for what is already decided is
        // dropped, never sent (docs/notifications.md, "Nothing stale is pushed").
        if d.sink != agentx_clarify_core::github::SINK && !still_owed_now(home, ledgers, d) {
            sent.dropped.push(key.clone());
            continue;
        }
        let result = if d.sink == agentx_clarify_core::github::SINK {
            match crate::github::deliver_owed(home, github, &mut client, ledgers, d, at()) {
                Err(crate::github::GhError::RateLimited { until }) => {
                    sent.defer.push((key.clone(), until));
                    Err(format!(
                        "rate limited by GitHub until {}",
                        Timestamp::from_ms(until)
                    ))
                }
                r => r.map(|_| ()).map_err(|e| e.to_string()),
            }
        } else {
            deliver(home, sinks, ledgers, d, public_url, at())
        };
        sent.results.push((key.clone(), result, at()));
    }
    sent
}

/// Renews this deliverer's leases on `keys` every `RENEW_MS` until `stopped` (the sends are
/// done), so a slow receiver or a long command never lets another deliverer take a delivery
/// that is still being sent. Best effort: a renewal that fails leaves the lease to run out
/// (another deliverer may then send it again — at least once, as a death would).
fn renew_while_sending<S: Store + Sync>(
    home: &Home<'_, S>,
    me: &str,
    keys: &[String],
    at: &(impl Fn() -> i64 + Sync),
    stopped: std::sync::mpsc::Receiver<()>,
) {
    let every = std::time::Duration::from_millis(RENEW_MS.unsigned_abs());
    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
        let _ = home.update_outbox(me, |outbox| outbox.renew(keys, me, at()));
    }
}

/// Whether `d` is still worth sending, by its record as the store holds it now (read again:
/// the pass's ledgers were read before the lease, and a person may have decided since).
/// When the ledger cannot be read again, the pass's copy decides.
fn still_owed_now<S: Store>(home: &Home<'_, S>, ledgers: &[Ledger], d: &Delivery) -> bool {
    let fresh = home.read_ledger(d.issue).ok().flatten();
    let ledger = fresh
        .as_ref()
        .or_else(|| ledgers.iter().find(|l| l.issue_number == d.issue));
    match ledger.and_then(|l| l.clarifications.iter().find(|r| r.id == d.record)) {
        Some(record) => agentx_clarify_core::notify::outbox::still_owed(d, record),
        None => true,
    }
}

/// Sends one delivery: the event rebuilt from the record as it is now, with its actions (the
/// answer links of a sink that has them, minted for this try).
fn deliver(
    home: &Home<'_, WorkspaceStore>,
    sinks: &[Sink],
    ledgers: &[Ledger],
    d: &Delivery,
    public_url: Option<&str>,
    now: i64,
) -> Result<(), String> {
    let sink = sinks
        .iter()
        .find(|s| s.name == d.sink)
        .ok_or_else(|| format!("the sink \"{}\" is no longer configured", d.sink))?;
    let record = ledgers
        .iter()
        .find(|l| l.issue_number == d.issue)
        .and_then(|l| l.clarifications.iter().find(|r| r.id == d.record))
        .ok_or_else(|| format!("{} is no longer in its ledger", d.record))?;
    let at = match d.name {
        EventName::Reminder => d.due,
        _ => record
            .thread
            .get(d.entry)
            .map_or(d.due, |e| e.timestamp.ms()),
    };
    // The thread's page of the inbox, when its public URL is known (ids are [A-Z0-9-]).
    let url = public_url.map(|base| {
        format!(
            "{}/clarifications/{}",
            base.trim_end_matches('/'),
            record.id
        )
    });
    let mut event = Event::of_record(
        d.event.clone(),
        d.name,
        Timestamp::from_ms(at),
        d.issue,
        record,
        None,
        url.as_deref(),
    );
    if sink.kind == agentx_clarify_core::notify::SinkKind::SlackApp {
        // Slack's buttons decide through `/slack/interactions`, as the clicker's person.
        let store = home.0;
        let config =
            agentx_clarify_command::Files::load_config(store).map_err(|e| e.to_string())?;
        return crate::slack::deliver(store, &config, sink, &event, record, now);
    }
    let actions = match public_url {
        Some(base) if sink.answer_links => {
            let carrier = crate::links::Carrier {
                sink,
                record,
                issue: d.issue,
                delivery: &d.event,
                base,
            };
            let store = home.0;
            let config =
                agentx_clarify_command::Files::load_config(store).map_err(|e| e.to_string())?;
            crate::links::mint(store, &config, &carrier, now).map_err(|e| e.to_string())?
        }
        _ => Vec::new(),
    };
    if let Some(data) = event.data.as_object_mut() {
        let all = actions.iter().map(crate::links::Action::json).collect();
        data.insert("actions".into(), serde_json::Value::Array(all));
    }
    let secret =
        crate::secret_of(sink, |var| std::env::var(var).ok()).map_err(|e| e.to_string())?;
    let sent_at = agentx_clarify_store::clock::system_now_ms() / 1000;
    crate::send(sink, &event, secret.as_deref(), sent_at)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The sinks with their `people` expanded by the workspace's people (docs/protocol.md §37);
/// the sinks as they are when none says `people` (no settings read for it).
fn addressed<'s>(
    store: &agentx_clarify_workspace::WorkspaceStore,
    sinks: &'s [agentx_clarify_core::notify::Sink],
) -> Result<std::borrow::Cow<'s, [agentx_clarify_core::notify::Sink]>, ClarifyError> {
    use agentx_clarify_command::Files as _;
    let names_people = |s: &agentx_clarify_core::notify::Sink| {
        !s.people.is_empty()
            || s.email
                .as_ref()
                .is_some_and(|e| e.to.iter().any(|a| !a.contains('@')))
    };
    if !sinks.iter().any(names_people) {
        return Ok(std::borrow::Cow::Borrowed(sinks));
    }
    let config = store.load_config()?;
    let people = config.people.as_ref().map(|p| &p.people);
    Ok(std::borrow::Cow::Owned(
        agentx_clarify_core::notify::address(sinks, people),
    ))
}

/// Applies every ladder step due now (docs/protocol.md §37, `then`): whether one wrote, and
/// the steps that failed (reported with the pass's failures and tried again by the next
/// pass; the deliveries still go).
fn ladder(
    store: &WorkspaceStore,
    sinks: &[Sink],
    ledgers: &[Ledger],
    now: i64,
) -> (bool, Vec<(String, String)>) {
    let refs: Vec<&Ledger> = ledgers.iter().collect();
    let mut wrote = false;
    let mut failed = Vec::new();
    for due in agentx_clarify_core::people::ladder_due(sinks, &refs, now) {
        match agentx_clarify_command::claim::ladder_assign(store, now, &due) {
            Ok(written) => wrote |= written,
            Err(e) => failed.push((format!("ladder {}/{}", due.sink, due.id), e.to_string())),
        }
    }
    (wrote, failed)
}
