//! The mechanics of `seal run`: private mount and PID namespaces, the masks,
//! and the command's process tree.
//!
//! The supervisor (this process) unshares a mount namespace with private
//! propagation (plus a user namespace when unprivileged) and a PID namespace,
//! applies the masks, forks the command's init *before* any FUSE thread
//! exists (so the child never runs code after `fork` in a multi-threaded
//! process), then mounts the sealed view and lets the child go. The init is
//! PID 1 of the new PID namespace: when it exits, the kernel kills whatever the
//! command left behind, and with `PR_SET_PDEATHSIG` it dies with the
//! supervisor. It forks the command, forwards signals that other processes
//! send, and exits with the command's status (128+N for a signal).

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::SignalFd;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Gid, Pid, Uid, fork};

use super::masks::{MaskKind, MaskState, Planned};

fn errno_io(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// Who the command runs as.
#[derive(Debug, Clone)]
pub struct Identity {
    pub uid: Uid,
    pub gid: Gid,
    pub groups: Vec<Gid>,
    /// Whether to switch to this identity (false when already it).
    pub switch: bool,
}

/// Enters a new mount namespace (and a user namespace mapping the caller to
/// itself when unprivileged), then makes every mount private so nothing done
/// here reaches the host.
pub fn enter_namespaces(unprivileged: bool) -> io::Result<()> {
    let uid = Uid::current();
    let gid = Gid::current();
    // The PID namespace is made for the child only (see `spawn`): a process
    // that unshares CLONE_NEWPID itself can no longer start threads.
    let mut flags = CloneFlags::CLONE_NEWNS;
    if unprivileged {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    unshare(flags).map_err(errno_io)?;
    if unprivileged {
        // The creator of a user namespace holds every capability in it until
        // it executes a program, which is enough to mount; the mapping keeps
        // files owned by the caller owned by the caller.
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(errno_io)
}

const MASK_FLAGS: MsFlags = MsFlags::MS_RDONLY
    .union(MsFlags::MS_NOSUID)
    .union(MsFlags::MS_NODEV)
    .union(MsFlags::MS_NOEXEC);

/// Applies every mask of the plan; the first failure is returned with the
/// location it concerns.
pub fn apply_masks(plan: &[Planned]) -> Result<usize, (PathBuf, io::Error)> {
    let mut masks: Vec<(&Path, MaskKind)> = plan
        .iter()
        .filter_map(|p| match &p.state {
            MaskState::Mask { target, kind } => Some((target.as_path(), *kind)),
            _ => None,
        })
        .collect();
    masks.sort_by(|a, b| a.0.cmp(b.0));
    let mut empty: Option<EmptyFile> = None;
    for (target, kind) in &masks {
        let applied = match kind {
            MaskKind::Dir => mount(
                Some("tmpfs"),
                *target,
                Some("tmpfs"),
                MASK_FLAGS,
                Some("size=4k,nr_inodes=1,mode=0555"),
            )
            .map_err(errno_io),
            MaskKind::File => {
                if empty.is_none() {
                    empty = Some(EmptyFile::new().map_err(|e| (target.to_path_buf(), e))?);
                }
                let source = &empty.as_ref().map(|e| e.path.clone()).unwrap_or_default();
                bind_read_only(source, target)
            }
        };
        applied.map_err(|e| (target.to_path_buf(), e))?;
    }
    if let Some(e) = empty {
        e.release();
    }
    Ok(masks.len())
}

fn bind_read_only(source: &Path, target: &Path) -> io::Result<()> {
    mount(
        Some(source),
        target,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(errno_io)?;
    mount(
        None::<&str>,
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MASK_FLAGS,
        None::<&str>,
    )
    .map_err(errno_io)
}

/// An empty read-only regular file on a private tmpfs, the source of every
/// file mask. The tmpfs is mounted on a fresh temporary directory of this
/// namespace and detached once the masks are bound (the binds keep it alive).
struct EmptyFile {
    dir: PathBuf,
    path: PathBuf,
}

impl EmptyFile {
    fn new() -> io::Result<EmptyFile> {
        let dir = tempfile_dir()?;
        mount(
            Some("tmpfs"),
            &dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("size=4k,mode=0755"),
        )
        .map_err(errno_io)?;
        let path = dir.join("empty");
        std::fs::write(&path, b"")?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o444))?;
        Ok(EmptyFile { dir, path })
    }

    fn release(self) {
        let _ = umount2(&self.dir, MntFlags::MNT_DETACH);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn tempfile_dir() -> io::Result<PathBuf> {
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let dir = base.join(format!(".seal-run-{}-{i}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary directory name"))
}

/// Everything the child needs, prepared before `fork` so that the child does
/// not allocate.
pub struct Launch {
    pub program: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    pub cwd: CString,
    pub identity: Identity,
    pub not_found_message: Vec<u8>,
}

impl Launch {
    pub fn new(
        command: &[std::ffi::OsString],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        cwd: &Path,
        identity: Identity,
    ) -> io::Result<Launch> {
        let cstr = |s: &OsStr| {
            CString::new(s.as_bytes()).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an argument contains a NUL byte",
                )
            })
        };
        let argv = command
            .iter()
            .map(|a| cstr(a))
            .collect::<io::Result<Vec<_>>>()?;
        let program = argv
            .first()
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no command given"))?;
        let envp = env
            .iter()
            .map(|(k, v)| {
                let mut b = k.as_bytes().to_vec();
                b.push(b'=');
                b.extend_from_slice(v.as_bytes());
                CString::new(b).map_err(|_| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "an environment variable contains a NUL byte",
                    )
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let mut not_found_message = b"seal: run: cannot execute ".to_vec();
        not_found_message
            .extend_from_slice(crate::core::escape::escaped_os(&command[0]).as_bytes());
        not_found_message.extend_from_slice(b"\n");
        Ok(Launch {
            program,
            argv,
            envp,
            cwd: cstr(cwd.as_os_str())?,
            identity,
            not_found_message,
        })
    }
}

/// The command's init process, waiting for the go signal.
pub struct Child {
    pub pid: Pid,
    go: OwnedFd,
}

impl Child {
    /// Lets the child start the command (the view is mounted).
    pub fn go(self) -> io::Result<Pid> {
        nix::unistd::write(&self.go, b"g").map_err(errno_io)?;
        Ok(self.pid)
    }
}

/// The signals the supervisor and the init handle through a signalfd.
pub fn handled_signals() -> SigSet {
    let mut set = SigSet::empty();
    for s in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGCHLD,
    ] {
        set.add(s);
    }
    set
}

/// Starts the init of a new PID namespace (PID 1 there). It waits until
/// [`Child::go`] (or exits quietly if the supervisor gives up first), then
/// runs the command.
///
/// Must be called while this process has a single thread.
pub fn spawn(launch: &Launch) -> io::Result<Child> {
    handled_signals().thread_block().map_err(errno_io)?;
    let (read_end, write_end) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(errno_io)?;
    let mut stack = vec![0u8; 1 << 20];
    let mut go = Some(read_end);
    let write_raw = write_end.as_raw_fd();
    let body = Box::new(move || {
        // The child's copy of the write end must go, or the child would keep
        // its own pipe open and never see the supervisor give up.
        let _ = nix::unistd::close(write_raw);
        match go.take() {
            Some(go) => init(launch, go) as isize,
            None => 125,
        }
    });
    // SAFETY: the caller guarantees this process is single-threaded here (no
    // FUSE or helper thread has been started yet), so the child — a copy of
    // this process in a new PID namespace, running `body` on `stack` — cannot
    // inherit a lock held by another thread. `stack` outlives the call (the
    // child has its own copy of this memory), and the child ends when `body`
    // returns, through the `exit` system call of the clone wrapper, without
    // running the supervisor's destructors.
    let pid = unsafe {
        nix::sched::clone(
            body,
            &mut stack,
            CloneFlags::CLONE_NEWPID,
            Some(libc::SIGCHLD),
        )
    }
    .map_err(errno_io)?;
    Ok(Child { pid, go: write_end })
}

/// PID 1 of the command's namespace.
fn init(launch: &Launch, go: OwnedFd) -> i32 {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let mut byte = [0u8; 1];
    match nix::unistd::read(go.as_fd(), &mut byte) {
        Ok(1) => {}
        _ => return 125,
    }
    drop(go);
    let Ok(signals) = SignalFd::new(&handled_signals()) else {
        return 125;
    };
    // SAFETY: the init is single-threaded (see `spawn`), so the forked
    // command process may run any code before it execs.
    let command = match unsafe { fork() } {
        Ok(ForkResult::Child) => exec_command(launch),
        Ok(ForkResult::Parent { child }) => child,
        Err(_) => return 125,
    };
    loop {
        let Ok(Some(info)) = signals.read_signal() else {
            continue;
        };
        if info.ssi_signo == Signal::SIGCHLD as u32 {
            loop {
                match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(pid, code)) if pid == command => return code,
                    Ok(WaitStatus::Signaled(pid, sig, _)) if pid == command => {
                        return 128 + sig as i32;
                    }
                    Ok(WaitStatus::StillAlive) | Err(_) => break,
                    Ok(_) => continue,
                }
            }
        } else if sent_by_a_process(info.ssi_code) {
            // A terminal's signal reaches the whole foreground process group
            // (the command included); only signals sent with kill() to us are
            // forwarded.
            if let Ok(sig) = Signal::try_from(info.ssi_signo as i32) {
                let _ = kill(command, sig);
            }
        }
    }
}

/// True for `SI_USER` and `SI_QUEUE` (a process called kill or sigqueue).
pub fn sent_by_a_process(code: i32) -> bool {
    code == libc::SI_USER || code == libc::SI_QUEUE
}

/// The command's process: drop privileges, restore signals, exec.
fn exec_command(launch: &Launch) -> ! {
    let fail = |msg: &[u8], code: i32| -> ! {
        let _ = nix::unistd::write(std::io::stderr(), msg);
        // SAFETY: `_exit` only ends this process (the forked command, which
        // failed before exec); it skips the destructors and atexit handlers
        // of the supervisor whose memory this process copied, which must not
        // run twice.
        unsafe { libc::_exit(code) }
    };
    let _ = SigSet::empty().thread_set_mask();
    if nix::unistd::chdir(launch.cwd.as_c_str()).is_err() {
        fail(b"seal: run: cannot enter the sealed view\n", 125);
    }
    let id = &launch.identity;
    if id.switch
        && (nix::unistd::setgroups(&id.groups).is_err()
            || nix::unistd::setresgid(id.gid, id.gid, id.gid).is_err()
            || nix::unistd::setresuid(id.uid, id.uid, id.uid).is_err())
    {
        fail(b"seal: run: cannot switch to the target user\n", 125);
    }
    let err = nix::unistd::execvpe(&launch.program, &launch.argv, &launch.envp).unwrap_err();
    let code = if err == Errno::ENOENT { 127 } else { 126 };
    fail(&launch.not_found_message, code)
}

/// Waits for the init while forwarding signals other processes send to the
/// supervisor; returns the exit code to use.
pub fn supervise(child: Pid) -> i32 {
    let Ok(signals) = SignalFd::new(&handled_signals()) else {
        return wait_plain(child);
    };
    loop {
        // A SIGCHLD may have arrived before the signalfd existed: poll first.
        match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, sig, _)) => return 128 + sig as i32,
            _ => {}
        }
        let Ok(Some(info)) = signals.read_signal() else {
            continue;
        };
        if info.ssi_signo != Signal::SIGCHLD as u32 && sent_by_a_process(info.ssi_code) {
            if let Ok(sig) = Signal::try_from(info.ssi_signo as i32) {
                let _ = kill(child, sig);
            }
        }
    }
}

fn wait_plain(child: Pid) -> i32 {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, sig, _)) => return 128 + sig as i32,
            Ok(_) => continue,
            Err(_) => return 125,
        }
    }
}
