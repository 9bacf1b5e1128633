//! The run loop: one thread polls the child's pipes (and, on Linux, a pidfd that wakes it when
//! the child exits), feeds stdin, keeps output within its cap, and ends the run when the child
//! exits or the timeout passes — then kills the whole group and drains the pipes briefly.

use std::fs::File;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::capture::Capture;
use crate::spawn::{self, Started};
use crate::sys::{self, PollFd};
use crate::{Exit, RunError, RunOutput, Spec, DRAIN_GRACE};

/// Without a pidfd, how often the loop looks for the child's exit.
const EXIT_CHECK: Duration = Duration::from_millis(5);
const CHUNK: usize = 64 * 1024;
/// A program that writes as fast as it is read would keep one read loop busy forever: after
/// this many chunks the loop goes back to the clock.
const READS_PER_WAKE: usize = 16;

/// Runs `spec` to its end: exit, signal or timeout. Blocks the calling thread, which must be
/// the one that waits for the child (see `sys::new_session`).
pub fn run(spec: &Spec) -> Result<RunOutput, RunError> {
    let program = spec.program.display().to_string();
    let started_ms = now_ms();
    let started = Instant::now();
    let child = spawn::start(spec).map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    let mut group = Group {
        pid: child.pid,
        status: None,
        done: false,
    };
    let wait_error = |source| RunError::Wait {
        program: program.clone(),
        source,
    };
    let mut io = Pipes::new(child, spec).map_err(wait_error)?;
    let deadline = started + spec.timeout;
    let timed_out = io.until_exit(&mut group, deadline).map_err(wait_error)?;
    let status = group.finish().map_err(wait_error)?;
    io.drain(Instant::now() + DRAIN_GRACE).map_err(wait_error)?;
    let ended_ms = now_ms();
    let (stdout, stdout_dropped) = io.stdout.capture.finish();
    let (stderr, stderr_dropped) = io.stderr.capture.finish();
    Ok(RunOutput {
        exit: exit_of(status),
        timed_out,
        stdout,
        stderr,
        stdout_truncated: stdout_dropped > 0,
        stderr_truncated: stderr_dropped > 0,
        stdout_dropped,
        stderr_dropped,
        started_ms,
        ended_ms,
    })
}

/// The child and its process group: whatever happens, the group is killed and the child
/// reaped before the run returns.
struct Group {
    /// The child's pid, also its process group's id.
    pid: u32,
    /// How it ended, when a check reaped it already (not on Linux).
    status: Option<ExitStatus>,
    done: bool,
}

impl Group {
    fn pgid(&self) -> u32 {
        self.pid
    }

    fn has_exited(&mut self) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        {
            sys::has_exited(self.pgid())
        }
        #[cfg(not(target_os = "linux"))]
        {
            // Reaps: the group id could in theory be reused before the kill below.
            if self.status.is_none() {
                self.status = sys::wait(self.pid, false)?.map(ExitStatus::from_raw);
            }
            Ok(self.status.is_some())
        }
    }

    /// Kills what is left of the group (helpers the agent started, or everything after a
    /// timeout), then reaps the leader.
    fn finish(&mut self) -> io::Result<ExitStatus> {
        sys::kill_group(self.pgid())?;
        let status = match self.status.take() {
            Some(status) => status,
            None => ExitStatus::from_raw(
                sys::wait(self.pid, true)?.ok_or_else(|| io::Error::from(ErrorKind::Other))?,
            ),
        };
        self.done = true;
        Ok(status)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.done {
            let _ = sys::kill_group(self.pgid());
            if self.status.is_none() {
                let _ = sys::wait(self.pid, true);
            }
        }
    }
}

struct Stream {
    pipe: Option<File>,
    capture: Capture,
}

impl Stream {
    fn new(pipe: Option<OwnedFd>, cap: usize) -> io::Result<Self> {
        if let Some(fd) = &pipe {
            sys::set_nonblocking(fd.as_fd())?;
        }
        Ok(Stream {
            pipe: pipe.map(File::from),
            capture: Capture::new(cap),
        })
    }

    /// Reads what is there, up to [`READS_PER_WAKE`] chunks; closes the pipe at end of
    /// file.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let Some(pipe) = &mut self.pipe else {
            return Ok(());
        };
        for _ in 0..READS_PER_WAKE {
            match pipe.read(buf) {
                Ok(0) => {
                    self.pipe = None;
                    return Ok(());
                }
                Ok(n) => self.capture.push(buf.get(..n).unwrap_or_default()),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

struct Pipes<'a> {
    stdin: Option<File>,
    input: &'a [u8],
    stdout: Stream,
    stderr: Stream,
    exit: Option<OwnedFd>,
    buf: Vec<u8>,
}

impl<'a> Pipes<'a> {
    fn new(child: Started, spec: &'a Spec) -> io::Result<Self> {
        let stdin = child.stdin;
        if let Some(fd) = &stdin {
            sys::set_nonblocking(fd.as_fd())?;
        }
        let input = spec.stdin.as_deref().unwrap_or_default();
        let mut pipes = Pipes {
            stdin: stdin.map(File::from),
            input,
            stdout: Stream::new(Some(child.stdout), spec.cap)?,
            stderr: Stream::new(Some(child.stderr), spec.cap)?,
            exit: sys::pidfd_open(child.pid),
            buf: vec![0; CHUNK],
        };
        if pipes.input.is_empty() {
            pipes.stdin = None;
        }
        Ok(pipes)
    }

    /// Serves the pipes until the child exits (`false`) or the deadline passes (`true`).
    fn until_exit(&mut self, group: &mut Group, deadline: Instant) -> io::Result<bool> {
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(true);
            }
            let left = deadline - now;
            let slice = if self.exit.is_some() {
                left
            } else {
                left.min(EXIT_CHECK)
            };
            let exit_ready = self.poll(slice, true)?;
            if (exit_ready || self.exit.is_none()) && group.has_exited()? {
                return Ok(false);
            }
        }
    }

    /// Reads what remains after the group was killed, until both pipes end or `until`.
    fn drain(&mut self, until: Instant) -> io::Result<()> {
        self.stdin = None;
        while self.stdout.pipe.is_some() || self.stderr.pipe.is_some() {
            let now = Instant::now();
            if now >= until {
                break;
            }
            self.poll(until - now, false)?;
        }
        // Whatever still holds the pipes escaped the group: stop listening to it.
        self.stdout.pipe = None;
        self.stderr.pipe = None;
        Ok(())
    }

    /// One poll over the open pipes (and the exit descriptor when `watch_exit`); serves what
    /// is ready. Returns whether the exit descriptor fired.
    fn poll(&mut self, timeout: Duration, watch_exit: bool) -> io::Result<bool> {
        let mut fds: Vec<PollFd> = Vec::with_capacity(4);
        let mut slots = [None; 4];
        let mut add = |slot: usize, fd: Option<PollFd>, fds: &mut Vec<PollFd>| {
            if let (Some(fd), Some(s)) = (fd, slots.get_mut(slot)) {
                *s = Some(fds.len());
                fds.push(fd);
            }
        };
        let readable =
            |f: &Option<File>| f.as_ref().map(|f| sys::poll_fd(f.as_fd(), sys::READABLE));
        add(0, readable(&self.stdout.pipe), &mut fds);
        add(1, readable(&self.stderr.pipe), &mut fds);
        let stdin = self
            .stdin
            .as_ref()
            .map(|f| sys::poll_fd(f.as_fd(), sys::WRITABLE));
        add(2, stdin, &mut fds);
        let exit = if watch_exit {
            self.exit
                .as_ref()
                .map(|f| sys::poll_fd(f.as_fd(), sys::READABLE))
        } else {
            None
        };
        add(3, exit, &mut fds);
        sys::poll(&mut fds, millis(timeout))?;
        let fired = |slot: usize, mask| {
            slots
                .get(slot)
                .copied()
                .flatten()
                .and_then(|i| fds.get(i))
                .is_some_and(|fd| fd.revents & (mask | sys::DONE) != 0)
        };
        if fired(0, sys::READABLE) {
            self.stdout.read(&mut self.buf)?;
        }
        if fired(1, sys::READABLE) {
            self.stderr.read(&mut self.buf)?;
        }
        if fired(2, sys::WRITABLE) {
            self.feed();
        }
        Ok(fired(3, sys::READABLE))
    }

    /// Writes more of the prompt; a child that stops reading (closed stdin, exited) ends it.
    fn feed(&mut self) {
        let Some(stdin) = &mut self.stdin else {
            return;
        };
        loop {
            match stdin.write(self.input) {
                Ok(n) => {
                    self.input = self.input.get(n..).unwrap_or_default();
                    if self.input.is_empty() {
                        self.stdin = None;
                        return;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.stdin = None;
                    return;
                }
            }
        }
    }
}

fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        // Neither is possible for a process that ended; report it as killed.
        (None, None) => Exit::Signal(libc::SIGKILL),
    }
}

/// poll's timeout: rounded up, so a wait never spins at zero before the deadline.
fn millis(d: Duration) -> i32 {
    let ms = d.as_millis() + u128::from(!d.subsec_nanos().is_multiple_of(1_000_000));
    i32::try_from(ms).unwrap_or(i32::MAX)
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
