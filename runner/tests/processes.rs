//! Real processes: the example agents of `examples/agents/` (and `sh`), run through the
//! runner: normal answers, timeouts that kill the whole group, crashes, signals, silence,
//! 5 MiB of chatter, children that never exit or that hold the pipes after their parent.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agentx_clarify_runner::{run, Exit, RunError, Spec, DRAIN_GRACE, OUTPUT_CAP};

fn agent(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/agents")
        .join(name)
}

fn spec(name: &str, timeout: Duration, env: &[(&str, &str)]) -> Spec {
    let mut s = Spec::new(agent(name), timeout);
    s.env = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    s
}

const CACHE_PROMPT: &str = "# Clarification request CLR-42-001\n\n- From: engineer\n- To: architect (you)\n- Topic: Cache layer\n";
const CACHE_ANSWER: &str = "Redis, with LRU eviction and a 15-minute TTL (ADR-7).\n";

/// A process is gone once it no longer exists or is a zombie nobody reaped yet.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
            !matches!(state, Some('Z' | 'X'))
        }
    }
}

/// SIGKILL is asynchronous: give the kernel a moment to finish the processes.
fn all_dead(pids: &[u32]) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if pids.iter().all(|p| !alive(*p)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// A spec whose agent appends the pids it starts to a file of a fresh directory.
struct Tracked {
    _dir: tempfile::TempDir,
    pidfile: PathBuf,
    spec: Spec,
}

impl Tracked {
    fn new(name: &str, timeout: Duration, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pids");
        let mut all = env.to_vec();
        all.push(("AGENT_PIDFILE", pidfile.to_str().unwrap()));
        let spec = spec(name, timeout, &all);
        Tracked {
            _dir: dir,
            pidfile,
            spec,
        }
    }

    /// Runs it: the output, how long it took, and the pids the agent noted.
    fn run(&self) -> (agentx_clarify_runner::RunOutput, Duration, Vec<u32>) {
        let started = Instant::now();
        let out = run(&self.spec).unwrap();
        (out, started.elapsed(), pids(&self.pidfile))
    }
}

#[test]
fn answers_a_prompt_from_stdin() {
    let mut s = spec("plain", Duration::from_secs(30), &[]);
    s.stdin = Some(CACHE_PROMPT.as_bytes().to_vec());
    let out = run(&s).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert!(out.exit.success() && !out.timed_out);
    assert_eq!(out.stdout_text(), CACHE_ANSWER);
    assert_eq!(out.stderr, b"");
    assert!(!out.stdout_truncated && !out.stderr_truncated);
    assert!(out.started_ms > 1_600_000_000_000 && out.started_ms <= out.ended_ms);
}

#[test]
fn answers_a_prompt_given_as_an_argument() {
    let mut s = spec("plain", Duration::from_secs(30), &[]);
    s.args = vec!["- Topic: Export scope".into()];
    let out = run(&s).unwrap();
    assert_eq!(
        out.stdout_text(),
        "CSV export is in scope for this release; PDF is not.\n"
    );
}

#[test]
fn env_and_cwd_reach_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let record = dir.path().join("record.json");
    let mut s = spec(
        "plain",
        Duration::from_secs(30),
        &[
            ("AGENT_ANSWER", "from the env: é"),
            ("AGENT_RECORD", record.to_str().unwrap()),
        ],
    );
    s.cwd = Some(work.clone());
    s.stdin = Some(b"line one\nline \"two\"\n".to_vec());
    let out = run(&s).unwrap();
    assert_eq!(out.stdout_text(), "from the env: é\n");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(
        seen["cwd"],
        work.canonicalize().unwrap().to_str().unwrap(),
        "the runner's cwd"
    );
    assert_eq!(seen["prompt"], "line one\nline \"two\"\n");
    assert_eq!(seen["args"], serde_json::json!([]));
}

#[test]
fn a_slow_agent_is_killed_at_the_timeout_with_its_group() {
    let t = Tracked::new(
        "claude",
        Duration::from_secs(1),
        &[("AGENT_MODE", "slow"), ("AGENT_SLEEP", "30")],
    );
    let (out, took, pids) = t.run();
    assert!(out.timed_out);
    assert_eq!(out.exit, Exit::Signal(9));
    assert_eq!(out.stdout, b"", "killed before it answered");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(pids.len(), 2, "the agent and its sleeping child: {pids:?}");
    assert!(all_dead(&pids), "a process of the group survived: {pids:?}");
}

#[test]
fn a_crash_is_exit_status_1_with_its_stderr() {
    let mut s = spec("codex", Duration::from_secs(30), &[("AGENT_MODE", "crash")]);
    s.args = vec!["exec".into(), "--json".into(), "-".into()];
    let out = run(&s).unwrap();
    assert_eq!(out.exit, Exit::Code(1));
    assert!(!out.timed_out);
    assert_eq!(
        out.stderr_text(),
        "fatal: the agent crashed while reading the repository\n"
    );
}

#[test]
fn the_example_codex_refuses_a_command_line_codex_would_refuse() {
    let out = run(&spec("codex", Duration::from_secs(30), &[])).unwrap();
    assert_eq!(out.exit, Exit::Code(2));
    assert!(out.stderr_text().contains("usage: codex exec"));
}

#[test]
fn a_signal_that_ends_the_agent_is_reported_as_such() {
    let out = run(&spec(
        "gemini",
        Duration::from_secs(30),
        &[("AGENT_MODE", "signal")],
    ))
    .unwrap();
    assert_eq!(out.exit, Exit::Signal(15));
    assert!(!out.timed_out && !out.exit.success());
    assert_eq!(out.exit.to_string(), "signal 15");
}

#[test]
fn a_silent_agent_gives_empty_output() {
    let out = run(&spec(
        "cursor-agent",
        Duration::from_secs(30),
        &[("AGENT_MODE", "silent")],
    ))
    .unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!((out.stdout.len(), out.stderr.len()), (0, 0));
}

#[test]
fn five_mib_of_chatter_is_capped_on_both_streams_without_deadlock() {
    let s = spec(
        "plain",
        Duration::from_secs(120),
        &[("AGENT_MODE", "chatty"), ("AGENT_ANSWER", "the answer")],
    );
    let out = run(&s).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert!(!out.timed_out);
    let written_out = 5 * 1024 * 1024 + 1 + "the answer\n".len();
    assert_eq!(out.stdout.len(), OUTPUT_CAP);
    assert!(out.stdout_truncated);
    assert_eq!(out.stdout_dropped as usize, written_out - OUTPUT_CAP);
    assert!(out.stdout.starts_with(b"ooo"));
    assert!(
        out.stdout.ends_with(b"ooo\nthe answer\n"),
        "the tail is kept: the answer comes last"
    );
    assert_eq!(out.stderr.len(), OUTPUT_CAP);
    assert!(out.stderr_truncated);
    assert_eq!(out.stderr_dropped as usize, 5 * 1024 * 1024 - OUTPUT_CAP);
    assert!(out.stderr.iter().all(|b| *b == b'e'));
}

#[test]
fn an_endless_writer_is_stopped_at_the_timeout() {
    // Four writers on one pipe: reading alone never catches up.
    let mut s = Spec::new("sh", Duration::from_millis(300));
    s.args = vec!["-c".into(), "yes & yes & yes & yes & wait".into()];
    let started = Instant::now();
    let out = run(&s).unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(out.timed_out);
    assert_eq!(out.exit, Exit::Signal(9));
    assert_eq!(out.stdout.len(), OUTPUT_CAP);
    assert!(out.stdout_dropped > 0 && out.stdout.starts_with(b"y\ny\n"));
}

#[test]
fn an_agent_that_never_exits_dies_with_all_its_children() {
    let t = Tracked::new("copilot", Duration::from_secs(1), &[("AGENT_MODE", "hang")]);
    let (out, took, pids) = t.run();
    assert_eq!(
        out.stderr_text(),
        "started everything\n",
        "read from pipes its children still held"
    );
    assert!(out.timed_out);
    assert_eq!(out.exit, Exit::Signal(9));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(
        pids.len(),
        4,
        "agent, child, child shell, grandchild: {pids:?}"
    );
    assert!(all_dead(&pids), "a process of the group survived: {pids:?}");
}

#[test]
fn children_left_holding_the_pipes_do_not_hold_the_run() {
    let mut t = Tracked::new(
        "plain",
        Duration::from_secs(60),
        &[("AGENT_MODE", "orphan")],
    );
    t.spec.stdin = Some(CACHE_PROMPT.as_bytes().to_vec());
    let (out, took, pids) = t.run();
    assert!(
        took < Duration::from_secs(10),
        "waited for the orphan: {took:?}"
    );
    assert!(!out.timed_out);
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(out.stdout_text(), CACHE_ANSWER);
    assert_eq!(pids.len(), 1);
    assert!(all_dead(&pids), "the helper left behind was not killed");
}

#[test]
fn a_process_that_escaped_the_group_costs_only_the_drain_grace() {
    let mut t = Tracked::new(
        "plain",
        Duration::from_secs(60),
        &[("AGENT_MODE", "escape")],
    );
    t.spec.stdin = Some(CACHE_PROMPT.as_bytes().to_vec());
    let (out, took, escaped) = t.run();
    let still_there: Vec<u32> = escaped.iter().copied().filter(|p| alive(*p)).collect();
    for p in &escaped {
        let _ = std::process::Command::new("kill")
            .args(["-9", &p.to_string()])
            .status();
    }
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(out.stdout_text(), CACHE_ANSWER);
    assert!(!out.timed_out);
    assert!(
        took >= DRAIN_GRACE && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(
        still_there, escaped,
        "the sleeper is in a session of its own, out of the group's reach"
    );
}

#[test]
fn a_missing_program_is_a_spawn_error() {
    let e = run(&Spec::new(agent("no-such-agent"), Duration::from_secs(5))).unwrap_err();
    assert!(matches!(e, RunError::Spawn { .. }), "{e:?}");
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::NotFound);
    assert!(e.to_string().starts_with("could not start "), "{e}");
    let mut bad_cwd = spec("plain", Duration::from_secs(5), &[]);
    bad_cwd.cwd = Some(PathBuf::from("/nonexistent/dir"));
    assert!(matches!(run(&bad_cwd), Err(RunError::Spawn { .. })));
}

/// A bare name is found on the `PATH` the spec sets (before the hub's own); a script without
/// `#!` runs under `/bin/sh`, as `execvp` runs it; a file that is not executable is a spawn
/// error that says so.
#[test]
fn programs_are_found_and_started_as_execvp_starts_them() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let script = |name: &str, body: &str, mode: u32| {
        let path = bin.join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    script("shebang-less", "echo \"no shebang: $1 $AGENT_X\"\n", 0o755);
    script("not-executable", "#!/bin/sh\necho never\n", 0o644);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());

    let mut s = Spec::new("shebang-less", Duration::from_secs(30));
    s.args = vec!["arg".into()];
    s.env = vec![
        ("PATH".into(), path.clone()),
        ("AGENT_X".into(), "x".into()),
    ];
    let out = run(&s).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(out.stdout_text(), "no shebang: arg x\n");

    let mut s = Spec::new("not-executable", Duration::from_secs(30));
    s.env = vec![("PATH".into(), path)];
    let e = run(&s).unwrap_err();
    assert!(matches!(e, RunError::Spawn { .. }), "{e:?}");
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::PermissionDenied);

    let mut s = Spec::new("nul\0byte", Duration::from_secs(30));
    s.args = vec!["x".into()];
    let e = run(&s).unwrap_err();
    assert_eq!(e.io_error().kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn a_large_prompt_is_fed_while_output_is_read() {
    let prompt = vec![b'p'; 3 * 1024 * 1024];
    let mut s = Spec::new("sh", Duration::from_secs(60));
    // Reads everything, echoing it back: stdin and stdout are both busy at once.
    s.args = vec!["-c".into(), "cat; echo".into()];
    s.stdin = Some(prompt.clone());
    let out = run(&s).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(
        out.stdout_dropped as usize + out.stdout.len(),
        prompt.len() + 1
    );
    let mut count = Spec::new("sh", Duration::from_secs(60));
    count.args = vec!["-c".into(), "wc -c".into()];
    count.stdin = Some(prompt.clone());
    assert_eq!(run(&count).unwrap().stdout_text().trim(), "3145728");
}

#[test]
fn a_program_that_ignores_its_stdin_is_fine() {
    let mut s = Spec::new("sh", Duration::from_secs(30));
    s.args = vec!["-c".into(), "exec 0<&-; echo done".into()];
    s.stdin = Some(vec![b'x'; 1024 * 1024]);
    let out = run(&s).unwrap();
    assert_eq!(out.exit, Exit::Code(0));
    assert_eq!(out.stdout_text(), "done\n");
}
