//! The delegation ledger as read: strict about types and required fields (only this tool
//! writes it), keeping every unknown field. `normalise` builds the in-memory model.

use serde::de::{Deserializer, Error as _};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Delegation, DelegationLedger, Entry, Report, Response, Status};
use crate::error::ClarifyError;
use crate::keep_unknown::extensible_deserialize;
use crate::names::check_issue;
use crate::time::Timestamp;

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Status::parse(&text).ok_or_else(|| {
            D::Error::custom(format!(
                "unknown delegation status '{}'; allowed: {}",
                crate::error::shown(&text),
                Status::ALL.map(Status::as_str).join(", ")
            ))
        })
    }
}

#[derive(Default)]
struct RawLedger {
    issue_number: Option<u64>,
    delegations: Option<Vec<RawDelegation>>,
    reports: Option<Vec<RawReport>>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawLedger, required: [issue_number], fields: {
    issue_number => "issueNumber",
    delegations => "delegations",
    reports => "reports",
});

#[derive(Default)]
struct RawDelegation {
    id: Option<String>,
    from: Option<String>,
    to: Option<String>,
    capability: Option<String>,
    objective: Option<String>,
    context_slice: Option<Map<String, Value>>,
    output_contract: Option<Map<String, Value>>,
    timeout_minutes: Option<u32>,
    status: Option<Status>,
    created_at: Option<Timestamp>,
    accepted_at: Option<Timestamp>,
    deadline: Option<Timestamp>,
    finished_at: Option<Timestamp>,
    response: Option<RawResponse>,
    signal_key: Option<String>,
    thread: Option<Vec<RawEntry>>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawDelegation, required: [id, from, to, objective, status, thread], fields: {
    id => "id",
    from => "from",
    to => "to",
    capability => "capability",
    objective => "objective",
    context_slice => "contextSlice",
    output_contract => "outputContract",
    timeout_minutes => "timeoutMinutes",
    status => "status",
    created_at => "createdAt",
    accepted_at => "acceptedAt",
    deadline => "deadline",
    finished_at => "finishedAt",
    response => "response",
    signal_key => "signalKey",
    thread => "thread",
});

#[derive(Default)]
struct RawEntry {
    status: Option<Status>,
    from: Option<String>,
    body: Option<String>,
    timestamp: Option<Timestamp>,
    response: Option<RawResponse>,
    hash: Option<String>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawEntry, required: [status, from, body, timestamp], fields: {
    status => "status",
    from => "from",
    body => "body",
    timestamp => "timestamp",
    response => "response",
    hash => "hash",
});

#[derive(Default)]
pub(super) struct RawResponse {
    artifact_path: Option<String>,
    summary: Option<String>,
    metrics: Option<Map<String, Value>>,
    follow_up_recommended: Option<Vec<String>>,
    unresolved: Option<Vec<String>>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawResponse, required: [], fields: {
    artifact_path => "artifactPath",
    summary => "summary",
    metrics => "metrics",
    follow_up_recommended => "followUpRecommended",
    unresolved => "unresolved",
});

#[derive(Default)]
struct RawReport {
    agent: Option<String>,
    status: Option<String>,
    deliverables: Option<Vec<String>>,
    metrics_achieved: Option<String>,
    recommendations: Option<Vec<String>>,
    timestamp: Option<Timestamp>,
    signal_key: Option<String>,
    extra: Map<String, Value>,
}

extensible_deserialize!(RawReport, required: [agent, status, timestamp], fields: {
    agent => "agent",
    status => "status",
    deliverables => "deliverables",
    metrics_achieved => "metricsAchieved",
    recommendations => "recommendations",
    timestamp => "timestamp",
    signal_key => "signalKey",
});

pub(super) fn parse(
    file: &str,
    bytes: &[u8],
    issue: Option<u32>,
) -> Result<DelegationLedger, ClarifyError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes)
        .map_err(|e| ClarifyError::corrupt(file, format!("not UTF-8: {e}")))?;
    let raw: RawLedger =
        serde_json::from_str(text).map_err(|e| ClarifyError::corrupt(file, e.to_string()))?;
    let n = raw.issue_number.unwrap_or(0);
    let issue_number = check_issue(n)
        .map_err(|_| ClarifyError::corrupt(file, format!("issueNumber {n} is out of range")))?;
    if let Some(expected) = issue.filter(|i| *i != issue_number) {
        return Err(ClarifyError::corrupt(
            file,
            format!("issueNumber {issue_number} does not match the file's issue {expected}"),
        ));
    }
    Ok(DelegationLedger {
        issue_number,
        delegations: raw
            .delegations
            .unwrap_or_default()
            .into_iter()
            .map(RawDelegation::normalise)
            .collect(),
        reports: raw
            .reports
            .unwrap_or_default()
            .into_iter()
            .map(RawReport::normalise)
            .collect(),
        extra: raw.extra,
    })
}

impl RawResponse {
    pub(super) fn normalise(self) -> Response {
        Response {
            artifact_path: self.artifact_path,
            summary: self.summary.unwrap_or_default(),
            metrics: self.metrics.unwrap_or_default(),
            follow_up_recommended: self.follow_up_recommended.unwrap_or_default(),
            unresolved: self.unresolved.unwrap_or_default(),
            extra: self.extra,
        }
    }
}

impl RawDelegation {
    // Required fields were checked while reading: the fallbacks are never taken.
    fn normalise(self) -> Delegation {
        Delegation {
            id: self.id.unwrap_or_default(),
            from: self.from.unwrap_or_default(),
            to: self.to.unwrap_or_default(),
            capability: self.capability,
            objective: self.objective.unwrap_or_default(),
            context_slice: self.context_slice.unwrap_or_default(),
            output_contract: self.output_contract.unwrap_or_default(),
            timeout_minutes: self
                .timeout_minutes
                .unwrap_or(super::DEFAULT_TIMEOUT_MINUTES),
            status: self.status.unwrap_or(Status::Requested),
            created_at: self.created_at,
            accepted_at: self.accepted_at,
            deadline: self.deadline,
            finished_at: self.finished_at,
            response: self.response.map(RawResponse::normalise),
            signal_key: self.signal_key,
            thread: self
                .thread
                .unwrap_or_default()
                .into_iter()
                .map(|e| Entry {
                    status: e.status.unwrap_or(Status::Requested),
                    from: e.from.unwrap_or_default(),
                    body: e.body.unwrap_or_default(),
                    timestamp: e.timestamp.unwrap_or_else(|| Timestamp::from_ms(0)),
                    response: e.response.map(RawResponse::normalise),
                    hash: e.hash,
                    extra: e.extra,
                })
                .collect(),
            extra: self.extra,
        }
    }
}

impl RawReport {
    fn normalise(self) -> Report {
        Report {
            agent: self.agent.unwrap_or_default(),
            status: self.status.unwrap_or_default(),
            deliverables: self.deliverables.unwrap_or_default(),
            metrics_achieved: self.metrics_achieved,
            recommendations: self.recommendations.unwrap_or_default(),
            timestamp: self.timestamp.unwrap_or_else(|| Timestamp::from_ms(0)),
            signal_key: self.signal_key,
            extra: self.extra,
        }
    }
}
