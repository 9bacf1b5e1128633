//! Issue 49: `cargo install --locked --path cli` installs a working `agentx` with every default
//! feature (the server and MCP included), as the README's Install section says. The install
//! goes into a temporary `--root`, offline, against this build's own target directory, as a
//! debug build: Cargo finds every crate already compiled and only copies the binary (about
//! 20 s here, most of it copying a debug binary; a release install would build the world).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target directory this test binary was built in (`CARGO_TARGET_DIR` or the default).
fn target_dir() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_agentx"));
    // <target>/debug/agentx
    bin.parent()
        .and_then(Path::parent)
        .expect("the binary is in <target>/<profile>/")
        .to_path_buf()
}

/// Keeps `<target>/debug/agentx` as the tests built it while `cargo install` runs. The install
/// builds agentx-cli without its dev-dependencies into this same target directory, and so
/// replaced that file with an `agentx` lacking the server's test hooks: every test binary run
/// after this one (`pg_chaos`, `serve_ops`, ...) then spawned it, and the hook-driven tests
/// failed on every CI run. A second link to the file is taken first and moved back over the
/// install's (a rename: the install's own artifact under `deps/` is left as it was).
struct KeptBinary {
    bin: PathBuf,
    aside: PathBuf,
}

impl KeptBinary {
    fn keep() -> KeptBinary {
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_agentx"));
        let aside = bin.with_file_name("agentx.kept-during-install-test");
        let _ = std::fs::remove_file(&aside);
        std::fs::hard_link(&bin, &aside).expect("a second link to the tests' agentx");
        KeptBinary { bin, aside }
    }
}

impl Drop for KeptBinary {
    fn drop(&mut self) {
        if let Err(e) = std::fs::rename(&self.aside, &self.bin) {
            eprintln!("the tests' agentx was not put back: {e}");
        }
    }
}

#[test]
fn cargo_install_from_the_checkout_gives_a_working_agentx() {
    let kept = KeptBinary::keep();
    let before = inode(&kept.bin);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = tempfile::tempdir().expect("tempdir");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(&cargo)
        .args(["install", "--locked", "--offline", "--debug", "--path"])
        .arg(repo.join("cli"))
        .arg("--root")
        .arg(root.path())
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "cargo install failed:\n{stderr}");
    assert!(stderr.contains("Installed package `agentx-cli"), "{stderr}");
    let agentx = root.path().join("bin").join("agentx");
    assert!(agentx.is_file(), "{stderr}");

    let version = Command::new(&agentx).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("agentx "));
    // Every default feature: `serve` and `mcp` are there.
    for command in ["serve", "mcp", "tokens"] {
        let help = Command::new(&agentx)
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(
            help.status.success(),
            "agentx {command} --help: {}",
            String::from_utf8_lossy(&help.stderr)
        );
    }
    // And the demo plays, as the Quick start says.
    let demo_dir = tempfile::tempdir().expect("tempdir");
    let demo = Command::new(&agentx)
        .args(["--color", "never", "demo"])
        .current_dir(demo_dir.path())
        .env_remove("AGENTX_NOW")
        .env_remove("AGENTX_STORE")
        .output()
        .unwrap();
    assert!(
        demo.status.success(),
        "agentx demo: {}",
        String::from_utf8_lossy(&demo.stderr)
    );
    let text = String::from_utf8_lossy(&demo.stdout);
    assert!(text.contains("CLR-"), "{text}");
    // The binary the later tests run is the very file they were built with.
    let bin = kept.bin.clone();
    drop(kept);
    assert_eq!(
        inode(&bin),
        before,
        "the install left another agentx where the tests look for theirs"
    );
}

fn inode(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("the tests' agentx").ino()
}
