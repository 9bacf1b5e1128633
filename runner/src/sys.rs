//! The few system calls std does not wrap. Every `unsafe` block of the crate is here, each
//! with the reason it is sound.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child the leader of a new session, hence of a new process group whose id is its
/// pid, without a controlling terminal: a CLI that tries to prompt on `/dev/tty` fails at
/// once instead of stopping on SIGTTIN, and the user's Ctrl-C reaches the hub, not the agent.
///
/// On Linux the child also receives SIGKILL when the thread that started it ends (a router
/// killed mid-run leaves no agent working for nobody): the caller must wait for the child on
/// the thread that spawned it, as [`crate::run`] does.
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub(crate) fn new_session(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: setsid, prctl, getppid and _exit are, and it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                    return Err(io::Error::last_os_error());
                }
                // The parent died between fork and prctl: the signal will never come.
                if u32::try_from(libc::getppid()).ok() != Some(parent) {
                    libc::_exit(1);
                }
            }
            Ok(())
        });
    }
}

/// Reaps child `pid` (blocking, or `None` while it runs): its raw wait status.
pub(crate) fn wait(pid: u32, block: bool) -> io::Result<Option<i32>> {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid out-pointer for the duration of the call.
        let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
        match rc {
            -1 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            0 => return Ok(None),
            _ => return Ok(Some(status)),
        }
    }
}

/// SIGKILL to every process of the group `pgid`. A group already gone is not an error.
pub(crate) fn kill_group(pgid: u32) -> io::Result<()> {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    // SAFETY: kill has no memory effects; a negative pid names the process group.
    let rc = unsafe { libc::kill(-pgid, libc::SIGKILL) };
    if rc == -1 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ESRCH) {
            return Err(e);
        }
    }
    Ok(())
}

/// Puts a pipe end in non-blocking mode, so one poll loop serves every pipe.
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let fd = fd.as_raw_fd();
    // SAFETY: fcntl on a descriptor the caller keeps open; F_GETFL/F_SETFL touch no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(crate) type PollFd = libc::pollfd;

pub(crate) fn poll_fd(fd: BorrowedFd<'_>, events: libc::c_short) -> PollFd {
    libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    }
}

pub(crate) const READABLE: libc::c_short = libc::POLLIN;
pub(crate) const WRITABLE: libc::c_short = libc::POLLOUT;
/// Events that end a pipe's wait even without data: hang-up and error.
pub(crate) const DONE: libc::c_short = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;

/// Waits until one of `fds` is ready or `timeout_ms` passes; an interrupted wait counts as a
/// timeout (the caller loops).
pub(crate) fn poll(fds: &mut [PollFd], timeout_ms: i32) -> io::Result<()> {
    let Ok(n) = libc::nfds_t::try_from(fds.len()) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    // SAFETY: the pointer and length describe `fds`, which outlives the call.
    let rc = unsafe { libc::poll(fds.as_mut_ptr(), n, timeout_ms) };
    if rc == -1 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// A descriptor that becomes readable when the process exits (Linux 5.3+); `None` where the
/// kernel has none, and the caller polls in short slices instead.
#[cfg(target_os = "linux")]
pub(crate) fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = libc::c_int::try_from(fd).ok().filter(|fd| *fd >= 0)?;
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn pidfd_open(_pid: u32) -> Option<std::os::fd::OwnedFd> {
    None
}

/// Whether the child has exited, without reaping it: while it is an unreaped zombie its pid
/// (the group id) cannot be reused, so killing the group afterwards cannot hit a stranger.
#[cfg(target_os = "linux")]
pub(crate) fn has_exited(pid: u32) -> io::Result<bool> {
    // id_t is u32 on Linux: every pid fits.
    let pid: libc::id_t = pid;
    // SAFETY: an all-zero siginfo_t is a valid value of this plain C struct.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid, writable siginfo_t for the duration of the call.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: waitid filled `info` (or left it zeroed: si_pid 0 means "not yet").
    Ok(unsafe { info.si_pid() } != 0)
}

/// Raises this process's soft limit of open files to its hard limit (a server holding many
/// connections must not stop at the usual soft 1024, issue 48); returns the limit in force
/// afterwards. An unlimited hard limit raises the soft one to what the kernel allows
/// (`fs.nr_open`), never to infinity.
pub fn raise_open_files() -> io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == -1 {
        return Err(io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let mut raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        if raised.rlim_cur == libc::RLIM_INFINITY {
            raised.rlim_cur = std::fs::read_to_string("/proc/sys/fs/nr_open")
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(1 << 20);
        }
        // SAFETY: `raised` is a valid rlimit; setrlimit only reads it.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = raised.rlim_cur;
        }
    }
    Ok(limit.rlim_cur)
}
