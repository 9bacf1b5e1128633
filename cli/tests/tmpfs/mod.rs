//! A tmpfs mounted for a test's life (mounting needs root), for the tests of full and
//! read-only filesystems (`mounts.rs`, `chaos.rs`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted for the test's life (lazily unmounted when dropped, also on panic).
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    pub fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                &dir.display().to_string(),
            ],
        );
        Tmpfs(dir.to_path_buf())
    }

    pub fn remount_read_only(&self) {
        sh(
            "mount",
            &["-o", "remount,ro", &self.0.display().to_string()],
        );
    }

    pub fn remount_read_write(&self) {
        sh(
            "mount",
            &["-o", "remount,rw", &self.0.display().to_string()],
        );
    }

    /// Removes what [`Tmpfs::fill_leaving`] wrote.
    pub fn unfill(&self) {
        let _ = std::fs::remove_file(self.0.join("filler"));
    }

    /// Free blocks and the block size (`stat -f`).
    pub fn free(&self) -> (u64, u64) {
        let out = Command::new("stat")
            .args(["-f", "-c", "%a %S"])
            .arg(&self.0)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut parts = text.split_whitespace().map(|p| p.parse::<u64>().unwrap());
        (parts.next().unwrap(), parts.next().unwrap())
    }

    /// Fills the filesystem until `blocks` blocks are left.
    pub fn fill_leaving(&self, blocks: u64) {
        let (free, size) = self.free();
        let filler = vec![0u8; usize::try_from((free - blocks) * size).unwrap()];
        std::fs::write(self.0.join("filler"), filler).unwrap();
        assert_eq!(self.free().0, blocks, "filled {:?}", self.0);
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

pub fn sh(cmd: &str, args: &[&str]) {
    let status = Command::new(cmd).args(args).status().unwrap();
    assert!(status.success(), "{cmd} {args:?}: {status}");
}
