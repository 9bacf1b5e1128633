//! Exit codes (docs/protocol.md §11.1): the one table from a failure's class to the code a shell sees.

use agentx_clarify_core::error::ErrorClass;
use agentx_clarify_core::ClarifyError;

/// What a command returns: its exit code, or the failure to report (with its own code).
pub type Outcome = Result<i32, ClarifyError>;

/// The exit code of a failure.
pub fn code(e: &ClarifyError) -> i32 {
    of_class(e.class())
}

/// 0 success; 1 I/O or internal; 2 usage (clap); 3 input; 4 policy; 5 not found;
/// 6 transition; 7 lock (or routing in progress); 8 corrupt or inconsistent; 9 agent error
/// (a routed agent failed and its record was escalated).
pub fn of_class(class: ErrorClass) -> i32 {
    match class {
        ErrorClass::Io | ErrorClass::Internal => 1,
        ErrorClass::Input => 3,
        ErrorClass::Policy => 4,
        ErrorClass::NotFound => 5,
        ErrorClass::Transition => 6,
        ErrorClass::Lock => 7,
        ErrorClass::Corrupt => 8,
        ErrorClass::Agent => 9,
    }
}
