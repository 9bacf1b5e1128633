//! Whether a runner's program can be started at all, before anything is written: a program
//! that is not installed (or not executable) is a configuration problem the user fixes, not an
//! agent error that escalates the question (docs/protocol.md, "Routing").
//!
//! The search is `execvp`'s, as the spawn does it: a program with a `/` is that path; a bare
//! name is looked up on the child's `PATH` (the runner's `env`, else the hub's, else
//! `/bin:/usr/bin`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::Spec;

/// glibc's `execvp` searches this when `PATH` is unset.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Why `spec`'s program cannot be started, naming it and where it was looked for; `None`
/// when an executable file is there.
pub fn unavailable(spec: &Spec) -> Option<String> {
    let program = &spec.program;
    if program.components().count() > 1 || program.is_absolute() {
        return match executable(program) {
            Found::Yes => None,
            Found::NotExecutable => Some(format!("{} is not executable", program.display())),
            Found::No => Some(format!("{} does not exist", program.display())),
        };
    }
    let path = spec
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    let mut not_executable: Option<PathBuf> = None;
    for dir in std::env::split_paths(&path) {
        // An empty entry is the current directory (the run's cwd), as for `execvp`.
        let dir = if dir.as_os_str().is_empty() {
            spec.cwd.clone().unwrap_or_default()
        } else {
            dir
        };
        let candidate = dir.join(program);
        match executable(&candidate) {
            Found::Yes => return None,
            Found::NotExecutable => {
                not_executable.get_or_insert(candidate);
            }
            Found::No => {}
        }
    }
    Some(match not_executable {
        Some(p) => format!("{} is not executable", p.display()),
        None => format!(
            "`{}` was not found on PATH ({})",
            program.display(),
            path.to_string_lossy()
        ),
    })
}

enum Found {
    Yes,
    NotExecutable,
    No,
}

fn executable(path: &Path) -> Found {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                if meta.permissions().mode() & 0o111 == 0 {
                    return Found::NotExecutable;
                }
            }
            Found::Yes
        }
        Ok(_) => Found::NotExecutable,
        Err(_) => Found::No,
    }
}
