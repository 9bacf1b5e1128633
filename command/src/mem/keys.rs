//! Keys in a [`MemStore`]: the same files a `DiskStore` holds (`.agentx/keys/<agent>.pub`,
//! `.agentx/keys/<agent>.key`), kept as bytes. Memory has no file modes: a private key is
//! private to the process that holds the store.

use agentx_clarify_core::ClarifyError;

use crate::mem::MemStore;
use crate::paths::{KEYS_DIR, KEYS_GITIGNORE, KEYS_GITIGNORE_TEXT};
use crate::store_keys::{key_agent, key_path, KeyFile, KeyHalf, KeyStore};

impl KeyStore for MemStore {
    fn key_files(&self, half: KeyHalf) -> Result<Vec<KeyFile>, ClarifyError> {
        Ok(self
            .files_in(KEYS_DIR)
            .into_iter()
            .filter_map(|(name, bytes)| Some((key_agent(&name, half)?.to_owned(), Ok(bytes))))
            .collect())
    }

    fn create_key_pair(&self, agent: &str, public: &str, secret: &str) -> Result<(), ClarifyError> {
        let (pub_path, secret_path) = (
            key_path(agent, KeyHalf::Public),
            key_path(agent, KeyHalf::Secret),
        );
        if let Some(existing) = [&pub_path, &secret_path]
            .into_iter()
            .find(|p| self.file(p).is_some())
        {
            return Err(ClarifyError::input(format!(
                "{existing} exists: keys are never replaced (remove both files of '{agent}' to make a new pair)"
            )));
        }
        if self.file(KEYS_GITIGNORE).is_none() {
            self.put(
                KEYS_GITIGNORE,
                Some(KEYS_GITIGNORE_TEXT.as_bytes().to_vec()),
            );
        }
        self.put(&secret_path, Some(format!("{secret}\n").into_bytes()));
        self.put(&pub_path, Some(format!("{public}\n").into_bytes()));
        Ok(())
    }
}
