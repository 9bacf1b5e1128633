//! The README's "Using it" works when pasted: every `sh` block of that section runs, in order,
//! in a fresh empty directory with the built `agentx` first on `PATH`, under `bash -e` (every
//! command must succeed), and exits 0.

use std::path::Path;
use std::process::Command;

/// The `sh` blocks of the README section titled `title`, in order.
fn shell_blocks(readme: &str, title: &str) -> Vec<String> {
    let heading = format!("## {title}\n");
    let start = readme.find(&heading).expect("the README has the section");
    let rest = &readme[start + heading.len()..];
    let section = rest.find("\n## ").map_or(rest, |end| &rest[..end]);
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), text) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn every_shell_block_of_using_it_runs_in_a_fresh_workspace() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README.md");
    let blocks = shell_blocks(&readme, "Using it");
    assert!(blocks.len() >= 3, "found {} blocks", blocks.len());
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_agentx"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, block) in blocks.iter().enumerate() {
        let out = Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", block])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env_remove("AGENTX_NOW")
            .env_remove("AGENTX_STORE")
            .env_remove("AGENTX_AGENT")
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "block {} of \"Using it\" failed ({:?}):\n{block}\nstdout:\n{}\nstderr:\n{}",
            i + 1,
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
