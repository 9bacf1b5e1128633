//! Whether a new private key is really kept out of git (docs/protocol.md §31): `keys new` says so only
//! when `git check-ignore` agrees — an existing `.agentx/keys/.gitignore` is the user's and is
//! left as it is, even empty — and otherwise says how to ignore it.

use std::path::Path;
use std::process::{Command, Stdio};

/// What git says about the private key at `key` (relative to `root`).
#[derive(Debug, PartialEq, Eq)]
pub enum Ignored {
    /// `git check-ignore` says it is ignored.
    Yes,
    /// It is in a git work tree and git would track it.
    No,
    /// No git, or not a git work tree: nothing to say about it.
    Unknown,
}

pub fn check(root: &Path, key: &str) -> Ignored {
    let status = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["check-ignore", "-q", "--", key])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    // check-ignore: 0 ignored, 1 not ignored, 128 not a repository (or another fatal error).
    match status.map(|s| s.code()) {
        Ok(Some(0)) => Ignored::Yes,
        Ok(Some(1)) => Ignored::No,
        _ => Ignored::Unknown,
    }
}

/// The words `keys new` prints after the private key's path.
pub fn describe(ignored: &Ignored, key: &str) -> String {
    match ignored {
        Ignored::Yes => String::from("mode 0600, git-ignored; never share it"),
        Ignored::No => format!(
            "mode 0600; NOT git-ignored: `git status` would list it — add `*.key` to .agentx/keys/.gitignore (then check with `git check-ignore -v {key}`); never share it"
        ),
        Ignored::Unknown => format!(
            "mode 0600; not checked against git (no git, or not a repository) — in a repository keep it out with `*.key` in .agentx/keys/.gitignore (`git check-ignore -v {key}` confirms); never share it"
        ),
    }
}
