//! Starting the agent: its own session (see [`crate::sys::new_session`] for why), its pipes,
//! and on Linux `PR_SET_PDEATHSIG`.
//!
//! On Linux the child is started the way `posix_spawn` starts one — `clone(CLONE_VM |
//! CLONE_VFORK)` on a small stack of its own, the parent suspended until the `exec` — instead
//! of the `fork` std falls back to for a `pre_exec` hook: a fork copies the hub's page tables,
//! write-protects its memory and lets parent and child race for the CPU, which cost the route
//! of an instant agent 1–7 ms more than the agent itself (docs/benchmarks.md, "Routing").
//! posix_spawn itself cannot set the parent-death signal, so the few steps between clone and
//! exec are written here, each a bare system call. Elsewhere std's `Command` does it.
#![allow(unsafe_code)]

use std::os::fd::OwnedFd;

/// A started child: its pid (also its session and process group id) and the hub's ends of
/// its pipes (no stdin pipe when the spec has no input: the child's stdin is `/dev/null`).
pub(crate) struct Started {
    pub pid: u32,
    pub stdin: Option<OwnedFd>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn start(spec: &crate::Spec) -> std::io::Result<Started> {
    use std::io;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    crate::sys::new_session(&mut cmd);
    let mut child = cmd.spawn()?;
    let missing = || io::Error::from(io::ErrorKind::BrokenPipe);
    // Dropping a `Child` neither kills nor reaps it: the run loop waits for the pid.
    Ok(Started {
        pid: child.id(),
        stdin: child.stdin.take().map(OwnedFd::from),
        stdout: child.stdout.take().map(OwnedFd::from).ok_or_else(missing)?,
        stderr: child.stderr.take().map(OwnedFd::from).ok_or_else(missing)?,
    })
}

#[cfg(target_os = "linux")]
pub(crate) use linux::start;

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::{CString, OsStr, OsString};
    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::ptr;

    use libc::{c_char, c_int, c_void};

    use super::Started;
    use crate::Spec;

    /// The child's stack: it only makes a dozen system calls.
    const STACK: usize = 64 * 1024;
    /// Signals are numbered 1..NSIG (65 on Linux, real-time ones included).
    const NSIG: c_int = 65;
    /// glibc's `execvp` searches this when `PATH` is unset.
    const DEFAULT_PATH: &str = "/bin:/usr/bin";

    /// Everything the child reads, prepared by the parent: the child allocates nothing.
    struct ChildArgs {
        /// Where to try the program, in `PATH` order (one entry for a path with a `/`).
        candidates: Vec<CString>,
        argv: Vec<*const c_char>,
        /// `/bin/sh <candidate> <args…>`, for a file the kernel cannot execute (a script
        /// without `#!`), as `execvp` does; slot 1 is filled by the child.
        sh_argv: Vec<*const c_char>,
        envp: Vec<*const c_char>,
        cwd: Option<CString>,
        stdin: c_int,
        stdout: c_int,
        stderr: c_int,
        parent: libc::pid_t,
        /// Set by the child when it could not start the program: the errno.
        error: c_int,
    }

    pub(crate) fn start(spec: &Spec) -> io::Result<Started> {
        let (stdin_read, stdin_write) = match spec.stdin {
            Some(_) => {
                let (r, w) = std::io::pipe()?;
                (OwnedFd::from(r), Some(OwnedFd::from(w)))
            }
            None => (OwnedFd::from(std::fs::File::open("/dev/null")?), None),
        };
        let (stdout_read, stdout_write) = std::io::pipe()?;
        let (stderr_read, stderr_write) = std::io::pipe()?;
        // The child's ends must not be 0–2 themselves (a hub started with a closed stdio),
        // or one dup2 could overwrite another: `try_clone` duplicates to 3 or above.
        let child_in = above_stdio(stdin_read)?;
        let child_out = above_stdio(OwnedFd::from(stdout_write))?;
        let child_err = above_stdio(OwnedFd::from(stderr_write))?;

        let strings = Strings::new(spec)?;
        let mut args = ChildArgs {
            candidates: strings.candidates.clone(),
            argv: pointers(&strings.argv),
            sh_argv: {
                let mut v = vec![strings.sh.as_ptr(), ptr::null()];
                v.extend(strings.argv.iter().skip(1).map(|s| s.as_ptr()));
                v.push(ptr::null());
                v
            },
            envp: pointers(&strings.env),
            cwd: strings.cwd.clone(),
            stdin: child_in.as_raw_fd(),
            stdout: child_out.as_raw_fd(),
            stderr: child_err.as_raw_fd(),
            // SAFETY: getpid has no memory effects.
            parent: unsafe { libc::getpid() },
            error: 0,
        };
        let pid = clone_child(&mut args)?;
        drop((child_in, child_out, child_err));
        if args.error != 0 {
            // It never ran the program: reap it (it exited at once) and report why.
            let mut status = 0;
            // SAFETY: `status` is a valid out-pointer; the pid is our unreaped child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(io::Error::from_raw_os_error(args.error));
        }
        let pid = u32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        Ok(Started {
            pid,
            stdin: stdin_write,
            stdout: OwnedFd::from(stdout_read),
            stderr: OwnedFd::from(stderr_read),
        })
    }

    fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
        if fd.as_raw_fd() > 2 {
            Ok(fd)
        } else {
            fd.try_clone()
        }
    }

    fn pointers(strings: &[CString]) -> Vec<*const c_char> {
        strings
            .iter()
            .map(|s| s.as_ptr())
            .chain(std::iter::once(ptr::null()))
            .collect()
    }

    /// The C strings of one start (owned here; `ChildArgs` points into them).
    struct Strings {
        candidates: Vec<CString>,
        argv: Vec<CString>,
        env: Vec<CString>,
        cwd: Option<CString>,
        sh: CString,
    }

    impl Strings {
        fn new(spec: &Spec) -> io::Result<Strings> {
            let program = spec.program.as_os_str();
            // The inherited environment with the spec's variables added or replaced.
            let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
                .filter(|(k, _)| !spec.env.iter().any(|(name, _)| OsStr::new(name) == k))
                .collect();
            env.extend(
                spec.env
                    .iter()
                    .map(|(k, v)| (OsString::from(k), OsString::from(v))),
            );
            // A bare name is looked up on the child's PATH, as std's `Command` does when the
            // environment given sets one.
            let candidates = if program.as_bytes().contains(&b'/') {
                vec![c_string(program.to_os_string())?]
            } else if program.is_empty() {
                Vec::new()
            } else {
                let path = env
                    .iter()
                    .find(|(k, _)| k == "PATH")
                    .map_or_else(|| OsString::from(DEFAULT_PATH), |(_, v)| v.clone());
                std::env::split_paths(&path)
                    .map(|dir| {
                        let dir = if dir.as_os_str().is_empty() {
                            std::path::PathBuf::from(".")
                        } else {
                            dir
                        };
                        c_string(dir.join(program).into_os_string())
                    })
                    .collect::<io::Result<_>>()?
            };
            let mut argv = vec![c_string(program.to_os_string())?];
            for a in &spec.args {
                argv.push(c_string(OsString::from(a))?);
            }
            let env = env
                .into_iter()
                .map(|(k, v)| {
                    let mut kv = k;
                    kv.push("=");
                    kv.push(v);
                    c_string(kv)
                })
                .collect::<io::Result<_>>()?;
            let cwd = match &spec.cwd {
                Some(dir) => Some(c_string(dir.clone().into_os_string())?),
                None => None,
            };
            Ok(Strings {
                candidates,
                argv,
                env,
                cwd,
                sh: c_string(OsString::from("/bin/sh"))?,
            })
        }
    }

    fn c_string(s: OsString) -> io::Result<CString> {
        CString::new(s.into_vec()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "nul byte found in provided data",
            )
        })
    }

    /// Clones the child with every signal blocked (a handler of the hub must never run on
    /// the child's side of the shared memory) and returns its pid once it has exec'd or
    /// exited.
    fn clone_child(args: &mut ChildArgs) -> io::Result<libc::pid_t> {
        // SAFETY: a fresh anonymous private mapping, unmapped below; no Rust object lives in
        // it other than the child's frames.
        let stack = unsafe {
            libc::mmap(
                ptr::null_mut(),
                STACK,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if stack == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: sigset_t is a plain C struct; sigfillset initialises it.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid sigset pointers for the duration of the calls.
        unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        }
        // The stack grows down: the child starts at the top of the mapping.
        let top = stack.cast::<u8>().wrapping_add(STACK).cast::<c_void>();
        // SAFETY: CLONE_VFORK suspends this thread until the child has exec'd or exited, so
        // `args` (borrowed mutably for that long) and the stack outlive every use the child
        // makes of them; `child` allocates nothing, takes no lock and makes only system calls.
        let pid = unsafe {
            libc::clone(
                child,
                top,
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                std::ptr::from_mut(args).cast::<c_void>(),
            )
        };
        let cloned = if pid == -1 {
            Err(io::Error::last_os_error())
        } else {
            Ok(pid)
        };
        // SAFETY: restores this thread's mask; unmaps the stack the child no longer uses.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, ptr::null_mut());
            libc::munmap(stack, STACK);
        }
        cloned
    }

    /// The child, between clone and exec. It shares the hub's memory (the hub waits), so
    /// it only reads `ChildArgs` and makes system calls; on failure it leaves the errno in
    /// `error` and exits.
    extern "C" fn child(arg: *mut c_void) -> c_int {
        // SAFETY: `arg` is the `ChildArgs` the suspended parent passed to clone.
        let a = unsafe { &mut *arg.cast::<ChildArgs>() };
        // SAFETY: every call below is a system call wrapper on memory prepared by the
        // parent; `__errno_location` is this thread's (the parent thread's, which waits).
        unsafe {
            let fail = |a: &mut ChildArgs| -> ! {
                a.error = *libc::__errno_location();
                libc::_exit(127)
            };
            // The hub's handlers must not run here; SIGPIPE goes back to its default, which
            // Rust programs ignore (what std's `Command` does too). A signal already at its
            // default is left alone: setting it again changes nothing (exec clears the flags
            // and mask of every disposition it keeps), and it was ~60 of the 128 system calls
            // the hub waited for here.
            for sig in 1..NSIG {
                let mut act: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, ptr::null(), &mut act) != 0 {
                    continue;
                }
                if act.sa_sigaction == libc::SIG_DFL {
                    continue;
                }
                if sig == libc::SIGPIPE || act.sa_sigaction != libc::SIG_IGN {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &dfl, ptr::null_mut());
                }
            }
            if libc::setsid() == -1 {
                fail(a);
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                fail(a);
            }
            // The parent died between clone and prctl: the signal will never come.
            if libc::getppid() != a.parent {
                libc::_exit(1);
            }
            for (from, to) in [(a.stdin, 0), (a.stdout, 1), (a.stderr, 2)] {
                if libc::dup2(from, to) == -1 {
                    fail(a);
                }
            }
            if let Some(dir) = &a.cwd {
                if libc::chdir(dir.as_ptr()) == -1 {
                    fail(a);
                }
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, ptr::null_mut());
            // `execvp`'s search: the first candidate that runs; EACCES if any was found but
            // not executable, else the last error.
            let mut denied = false;
            let mut last = libc::ENOENT;
            for candidate in &a.candidates {
                libc::execve(candidate.as_ptr(), a.argv.as_ptr(), a.envp.as_ptr());
                let e = *libc::__errno_location();
                if e == libc::ENOEXEC {
                    if let Some(slot) = a.sh_argv.get_mut(1) {
                        *slot = candidate.as_ptr();
                    }
                    if let Some(sh) = a.sh_argv.first() {
                        libc::execve(*sh, a.sh_argv.as_ptr(), a.envp.as_ptr());
                    }
                    last = *libc::__errno_location();
                    break;
                }
                denied |= e == libc::EACCES;
                last = e;
                if !matches!(
                    e,
                    libc::ENOENT | libc::ENOTDIR | libc::EACCES | libc::ESTALE | libc::ELOOP
                ) {
                    break;
                }
            }
            a.error = if denied { libc::EACCES } else { last };
            libc::_exit(127)
        }
    }
}
