//! The README's "Using it" works when pasted: every `sh` block of that section runs, in order,
//! in a fresh empty directory with the built `agentx` first on `PATH`, under `bash -e` (every
//! command must succeed), and exits 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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

/// The repository's own files: the README, `docs/` and every crate's sources.
fn documented_files() -> Vec<std::path::PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = vec![repo.join("README.md")];
    let mut dirs = vec![repo.join("docs")];
    for krate in [
        "core",
        "command",
        "store",
        "store-pg",
        "store-any",
        "runner",
        "a2a",
        "mcp",
        "notify",
        "serve",
        "cli",
    ] {
        dirs.push(repo.join(krate).join("src"));
    }
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md" || e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn every_section_of_the_protocol_that_is_referred_to_exists() {
    // Issue 49: docs/github.md pointed at a docs/protocol.md §26 that did not exist.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let protocol = std::fs::read_to_string(repo.join("docs/protocol.md")).expect("protocol");
    let headings: Vec<String> = protocol
        .lines()
        .filter(|l| l.starts_with("## §") || l.starts_with("### §"))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
        .collect();
    let mut missing = Vec::new();
    for file in documented_files() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (at, _) in text.match_indices("protocol.md") {
            let rest = text[at + "protocol.md".len()..].trim_start_matches(')');
            let Some(rest) = rest.strip_prefix(" §") else {
                continue;
            };
            let number: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let number = number.trim_end_matches('.');
            if !number.is_empty() && !headings.iter().any(|h| h == &format!("§{number}")) {
                missing.push(format!("{}: §{number}", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "sections that do not exist: {missing:#?}"
    );
}

#[test]
fn the_inspector_commands_are_pinned_to_the_version_the_tests_use() {
    // Issue 49: `npx @modelcontextprotocol/inspector` unpinned picks 0.15 on Node 20, which has
    // no `--header`.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let package = std::fs::read_to_string(repo.join("mcp/test/package.json")).expect("package");
    let package: serde_json::Value = serde_json::from_str(&package).expect("JSON");
    let pinned = package["devDependencies"]["@modelcontextprotocol/inspector"]
        .as_str()
        .expect("the tests' Inspector");
    let readme = std::fs::read_to_string(repo.join("README.md")).expect("README.md");
    let uses: Vec<&str> = readme
        .match_indices("@modelcontextprotocol/inspector")
        .map(|(at, _)| readme[at..].split_whitespace().next().unwrap_or(""))
        .collect();
    assert!(uses.len() >= 2, "{uses:?}");
    for used in uses {
        assert_eq!(
            used,
            format!("@modelcontextprotocol/inspector@{pinned}"),
            "the README's Inspector command is pinned"
        );
    }
}
