//! `agentx clarify verify`: every problem in every ledger (SPEC §7).

use agentx_clarify_core::api::error_value;
use agentx_clarify_core::verify::{verify_file, Problem};
use agentx_clarify_core::ClarifyError;
use serde_json::{json, Value};

use crate::store::Workspace;

#[derive(Clone, Debug)]
pub struct VerifyOutcome {
    pub files: usize,
    pub problems: Vec<Problem>,
}

impl VerifyOutcome {
    pub fn error(&self) -> Option<ClarifyError> {
        (!self.problems.is_empty()).then(|| ClarifyError::LedgerInconsistent {
            message: format!(
                "verify found {} problem(s) in {} ledger file(s)",
                self.problems.len(),
                self.files
            ),
        })
    }

    pub fn to_json(&self) -> Value {
        match self.error() {
            None => json!({"ok": true, "problems": []}),
            Some(e) => json!({"ok": false, "error": error_value(&e), "problems": self.problems}),
        }
    }
}

pub fn verify(ws: &Workspace) -> Result<VerifyOutcome, ClarifyError> {
    let raw = ws.read_all_raw()?;
    let files = raw.len();
    let mut problems = Vec::new();
    for (name, bytes) in raw {
        match bytes {
            Ok(bytes) => problems.extend(verify_file(&name, &bytes)),
            Err(e) => problems.push(Problem {
                file: name,
                id: None,
                message: e.to_string(),
            }),
        }
    }
    Ok(VerifyOutcome { files, problems })
}
