//! `verify` and `audit` as pure functions (docs/protocol.md §16): a ledger handed in as JSON or as its
//! file's text, checked against public keys handed in too, so a browser or a Node script can
//! audit a ledger offline with no workspace and no key files.

use serde_json::Value;

use crate::call::pure;
use crate::error::ClarifyError;
use crate::input;
use crate::layer4::{audit, AuditScope};
use crate::ledger::Ledger;
use crate::names::ClarificationId;
use crate::signing::PublicKeys;
use crate::verify::Verification;
use crate::verify::{check_file_with, check_ledger_with, issue_of_file_name, Problem};

/// How signatures are checked: `publicKeys` (`{agent: "ed25519:<base64>"}`; a signed entry
/// whose signer has no key here is a problem) and `requireSignatures` (or the `config`'s
/// `[audit] require_signatures`: unsigned entries are problems too).
struct SignatureCheck {
    keys: PublicKeys,
    require: bool,
}

impl SignatureCheck {
    fn new(
        public_keys: Option<&Value>,
        require_signatures: Option<bool>,
        config: Option<&Value>,
    ) -> Result<SignatureCheck, ClarifyError> {
        let mut keys = PublicKeys::new();
        match public_keys {
            None | Some(Value::Null) => {}
            Some(Value::Object(given)) => {
                for (agent, text) in given {
                    let text = text.as_str().ok_or_else(|| {
                        ClarifyError::input(format!(
                            "`publicKeys.{}` must be a string \"ed25519:<base64>\"",
                            crate::error::shown(agent)
                        ))
                    })?;
                    keys.insert_text(agent, text)?;
                }
            }
            Some(_) => {
                return Err(ClarifyError::input(
                    "`publicKeys` must be an object of agent → \"ed25519:<base64>\"",
                ))
            }
        }
        let require = match require_signatures {
            Some(given) => given,
            None => input::config(config)?.audit.require_signatures,
        };
        Ok(SignatureCheck { keys, require })
    }
}

/// `verify`: raw files under their own names (a misnamed ledger is a problem), ledger objects
/// under the name their issue number gives them.
pub(super) fn verify(v: &pure::Verify) -> Result<Verification, ClarifyError> {
    let check = SignatureCheck::new(
        v.public_keys.as_ref(),
        v.require_signatures,
        v.config.as_ref(),
    )?;
    let mut found = Verification::default();
    if let Some(files) = input::given(v.files.as_ref()) {
        let Value::Object(files) = files else {
            return Err(ClarifyError::input(
                "`files` must be an object of file name → text",
            ));
        };
        let mut named: Vec<(u64, &String, &Value)> = files
            .iter()
            .filter_map(|(name, text)| issue_of_file_name(name).map(|n| (n, name, text)))
            .collect();
        crate::stable_sort::sort_by_key(&mut named, |(n, _, _)| *n);
        for (_, name, text) in named {
            let text = text
                .as_str()
                .ok_or_else(|| ClarifyError::input(format!("file `{name}` must be a string")))?;
            found.extend(check_file_with(
                name,
                text.as_bytes(),
                &check.keys,
                check.require,
            ));
        }
    }
    // The files were verified above, byte by byte: only the ledger objects are left.
    let (ledgers, errors) = input::object_ledgers(v.ledgers.as_ref())?;
    found.problems.extend(errors.into_iter().map(|e| Problem {
        file: e.file,
        id: None,
        message: e.message,
        code: None,
    }));
    for l in &ledgers {
        found.extend(check_ledger_with(
            &format!("issue-{}.json", l.issue_number),
            l,
            &check.keys,
            check.require,
        ));
    }
    Ok(found)
}

/// `audit`: Layer 4's audit record of the record `id` names, or of the whole `ledger` (an
/// object, or its file's text: a ledger that does not parse is `LEDGER_CORRUPT`).
pub(super) fn audit_value(a: pure::Audit) -> Result<Value, ClarifyError> {
    let check = SignatureCheck::new(
        a.public_keys.as_ref(),
        a.require_signatures,
        a.config.as_ref(),
    )?;
    let id = a.id;
    // An id names its issue; a ledger of another issue does not hold it.
    let issue = match &id {
        Some(id) => Some(ClarificationId::parse(id)?.issue),
        None => None,
    };
    let ledger = ledger(a.ledger.as_ref(), issue)?;
    let scope = match &id {
        Some(id) => AuditScope::Record(id),
        None => AuditScope::Issue,
    };
    let record = audit(&ledger, scope, &check.keys, check.require)?;
    serde_json::to_value(record).map_err(|e| ClarifyError::Internal {
        message: e.to_string(),
    })
}

fn ledger(ledger: Option<&Value>, issue: Option<u32>) -> Result<Ledger, ClarifyError> {
    let file = match issue {
        Some(n) => format!("issue-{n}.json"),
        None => String::from("ledger"),
    };
    match ledger {
        None | Some(Value::Null) => Err(ClarifyError::input(
            "`ledger` is required (a ledger object or its file's text)",
        )),
        Some(Value::String(text)) => Ledger::parse(&file, text.as_bytes(), issue),
        Some(v) => Ledger::from_value(&file, v, issue),
    }
}
