//! Signing keys with the state in PostgreSQL: keys stay files of the workspace on each machine
//! (`.agentx/keys/`). A private key belongs to the machine whose agent signs with it and never
//! travels through the database; the public halves are shared as the settings are, through
//! git (`init` ignores only `*.key`), so every machine verifies every signer
//! (docs/decisions.md "Scale").

use agentx_clarify_command::store_keys::{KeyFile, KeyHalf, KeyStore};
use agentx_clarify_core::ClarifyError;

use crate::PgStore;

impl KeyStore for PgStore {
    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        self.files.key_files(half)
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        self.files.create_key_pair(agent, public, secret)
    }
}
