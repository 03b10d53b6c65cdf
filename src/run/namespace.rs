//! The processes of `seal run` and the namespaces they live in.
//!
//! * The **supervisor** (this process) unshares a mount namespace with
//!   private propagation (plus a user namespace when unprivileged), serves
//!   the sealed view mounted at the project's own path there, and, at the
//!   end, merges the command's state back (see [`super::merge`]).
//! * The **init** is cloned into a new PID namespace while the supervisor is
//!   still single-threaded (so it never runs code after `fork` in a
//!   multi-threaded process). When the view is served it takes a mount
//!   namespace of its own (a copy, with the view in it), builds the run's
//!   root there ([`super::root`]), mounts the PID namespace's `/proc`,
//!   reports to the supervisor (with descriptors of the skeletons to merge
//!   back), and starts the command. It is PID 1: when it exits, the kernel
//!   kills whatever the command left behind; `PR_SET_PDEATHSIG` ties it to
//!   the supervisor. It forwards signals other processes send and exits with
//!   the command's status (128+N for a signal).
//! * The **command** is cloned into a new user namespace and a new mount
//!   namespace owned by it. Every mount it inherits therefore comes from a
//!   more privileged namespace and is locked: it cannot be unmounted to
//!   reveal what is beneath, nor made writable, even by a command that is
//!   root in its namespace. Before `exec` it clears its capability bounding,
//!   ambient and inheritable sets, switches to the target user, drops every
//!   capability and sets `no_new_privs`, so root callers too run the command
//!   without any capability.

use std::ffi::{CString, OsStr, OsString};
use std::io::{self, IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::SignalFd;
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, recvmsg,
    sendmsg, socketpair,
};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Gid, Pid, Uid};

use super::plan::Plan;
use super::root::{self, BuildError};

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
/// here reaches the host, and nothing the host does later reaches here.
pub fn enter_namespaces(unprivileged: bool) -> io::Result<()> {
    let uid = Uid::current();
    let gid = Gid::current();
    // The PID namespace is made for the init only (see `spawn_init`): a
    // process that unshares CLONE_NEWPID itself can no longer start threads.
    let mut flags = CloneFlags::CLONE_NEWNS;
    if unprivileged {
        flags |= CloneFlags::CLONE_NEWUSER;
    }
    wait_single_threaded();
    unshare(flags).map_err(io::Error::from)?;
    if unprivileged {
        // The creator of a user namespace holds every capability in it until
        // it executes a program, which is enough to mount; the mapping keeps
        // files owned by the caller owned by the caller.
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    make_private()
}

/// Waits (at most a second) until this process has one thread, which what
/// follows needs: a user namespace can only be made by a process that has
/// (`unshare` says EINVAL otherwise), and the init is cloned without
/// `fork`'s care for locks, so a thread still inside `free` at that moment
/// leaves the init a heap lock nobody releases (it hung in `calloc`). The
/// threads started before are the verifications' scoped workers, and a
/// scope ends when their closures return: each still runs its thread-local
/// destructors (freeing its read buffer) and then leaves the thread group.
fn wait_single_threaded() {
    let threads = || std::fs::read_dir("/proc/self/task").map_or(1, Iterator::count);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while threads() > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn make_private() -> io::Result<()> {
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(io::Error::from)
}

/// Everything the command process needs, prepared before any `fork` so that
/// it does not allocate.
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
        command: &[OsString],
        env: &[(OsString, OsString)],
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
        not_found_message.extend_from_slice(seal_core::escape::escaped_os(&command[0]).as_bytes());
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

/// What the init reports once the root is built.
pub enum Report {
    /// Built; the descriptors of the skeletons to merge back.
    Ready(Vec<OwnedFd>),
    Failed(BuildError),
}

/// The init process, seen from the supervisor.
pub struct Init {
    pub pid: Pid,
    sock: OwnedFd,
}

impl Init {
    /// Lets the init build the root: the view is served, and mounted on the
    /// device `view_dev` (so that the init binds the view and nothing else).
    pub fn go(&self, view_dev: u64) -> io::Result<()> {
        let mut msg = b"g".to_vec();
        msg.extend_from_slice(&view_dev.to_le_bytes());
        send(&self.sock, &msg, &[])
    }

    /// Waits for the init's report.
    pub fn report(&self) -> io::Result<Report> {
        let (msg, fds) = receive(&self.sock)?;
        match msg.first() {
            Some(b'R') => Ok(Report::Ready(fds)),
            Some(b'E') => {
                let body = &msg[1..];
                let (loc, reason) = match body.iter().position(|b| *b == 0) {
                    Some(i) => (&body[..i], &body[i + 1..]),
                    None => (body, &b""[..]),
                };
                Ok(Report::Failed(BuildError::At {
                    location: PathBuf::from(OsStr::from_bytes(loc)),
                    reason: String::from_utf8_lossy(reason).into_owned(),
                }))
            }
            Some(b'S') => Ok(Report::Failed(BuildError::Setup(
                String::from_utf8_lossy(&msg[1..]).into_owned(),
            ))),
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the run's init ended before reporting",
            )),
        }
    }

    /// Lets the init start the command.
    pub fn start(&self) -> io::Result<()> {
        send(&self.sock, b"c", &[])
    }
}

fn send(sock: &OwnedFd, msg: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let iov = [IoSlice::new(msg)];
    let cmsgs: Vec<ControlMessage> = if fds.is_empty() {
        Vec::new()
    } else {
        vec![ControlMessage::ScmRights(fds)]
    };
    sendmsg::<()>(sock.as_raw_fd(), &iov, &cmsgs, MsgFlags::empty(), None)
        .map(drop)
        .map_err(io::Error::from)
}

fn receive(sock: &OwnedFd) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut space = nix::cmsg_space!([RawFd; 253]);
    let (n, fds) = {
        let mut iov = [IoSliceMut::new(&mut buf)];
        let msg = loop {
            match recvmsg::<()>(
                sock.as_raw_fd(),
                &mut iov,
                Some(&mut space),
                MsgFlags::MSG_CMSG_CLOEXEC,
            ) {
                Err(Errno::EINTR) => continue,
                other => break other.map_err(io::Error::from)?,
            }
        };
        let mut fds = Vec::new();
        for c in msg.cmsgs().map_err(io::Error::from)? {
            if let ControlMessageOwned::ScmRights(raw) = c {
                for fd in raw {
                    // SAFETY: SCM_RIGHTS installed these descriptors in this
                    // process just now; nothing else owns them.
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        (msg.bytes, fds)
    };
    buf.truncate(n);
    Ok((buf, fds))
}

/// Starts the init of a new PID namespace (PID 1 there). It waits for
/// [`Init::go`] (or exits quietly if the supervisor gives up first).
///
/// Must be called while this process has a single thread.
pub fn spawn_init(plan: &Plan, launch: &Launch) -> io::Result<Init> {
    handled_signals().thread_block().map_err(io::Error::from)?;
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(io::Error::from)?;
    let mut stack = vec![0u8; 1 << 20];
    let ours_raw = ours.as_raw_fd();
    let theirs_raw = theirs.as_raw_fd();
    let body = Box::new(move || {
        // SAFETY: in the child, these numbers are its copies of the pair: the
        // supervisor's end is closed, the init's is owned from here on.
        let _ = nix::unistd::close(ours_raw);
        let sock = unsafe { OwnedFd::from_raw_fd(theirs_raw) };
        init(plan, launch, sock) as isize
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
    .map_err(io::Error::from)?;
    drop(theirs);
    Ok(Init { pid, sock: ours })
}

/// Closes every descriptor but 0, 1, 2 and `keep` (the project directory,
/// the audit log and the rest of the supervisor's stay out of the run).
fn close_others(keep: RawFd) {
    let close_range = |first: u32, last: u32| {
        // SAFETY: close_range only closes descriptors of this process; none
        // of those in the range is used after this point.
        unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    };
    let keep = keep as u32;
    if keep > 3 {
        close_range(3, keep - 1);
    }
    close_range(keep + 1, u32::MAX);
}

fn report_failure(sock: &OwnedFd, e: &BuildError) {
    let mut msg = Vec::new();
    match e {
        BuildError::At { location, reason } => {
            msg.push(b'E');
            msg.extend_from_slice(location.as_os_str().as_bytes());
            msg.push(0);
            msg.extend_from_slice(reason.as_bytes());
        }
        BuildError::Setup(reason) => {
            msg.push(b'S');
            msg.extend_from_slice(reason.as_bytes());
        }
    }
    msg.truncate(60 * 1024);
    let _ = send(sock, &msg, &[]);
}

/// PID 1 of the run.
fn init(plan: &Plan, launch: &Launch, sock: OwnedFd) -> i32 {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    close_others(sock.as_raw_fd());
    let view_dev = match receive(&sock) {
        Ok((m, _)) if m.len() == 9 && m[0] == b'g' => {
            u64::from_le_bytes(m[1..9].try_into().expect("8 bytes"))
        }
        _ => return 125,
    };
    let built = unshare(CloneFlags::CLONE_NEWNS)
        .map_err(|e| BuildError::Setup(format!("cannot create the run's mount namespace: {e}")))
        .and_then(|()| {
            make_private()
                .map_err(|e| BuildError::Setup(format!("cannot make mounts private: {e}")))
        })
        .and_then(|()| root::build(plan, view_dev));
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            report_failure(&sock, &e);
            return 125;
        }
    };
    // The command's process exists (in its own user and mount namespaces,
    // mapped) before the report, so that a kernel refusing a nested user
    // namespace stops the run before anything starts.
    let (command, release) = match spawn_command(launch) {
        Ok(c) => c,
        Err(reason) => {
            report_failure(&sock, &BuildError::Setup(reason));
            return 125;
        }
    };
    let raw: Vec<RawFd> = built.merge_fds.iter().map(|f| f.as_raw_fd()).collect();
    if send(&sock, b"R", &raw).is_err() {
        return 125;
    }
    drop(built);
    match receive(&sock) {
        Ok((m, _)) if m == b"c" => {}
        _ => return 125,
    }
    drop(sock);
    let Ok(signals) = SignalFd::new(&handled_signals()) else {
        return 125;
    };
    if nix::unistd::write(&release, b"g").is_err() {
        return 125;
    }
    drop(release);
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

/// The id maps of the command's user namespace: every id this namespace has,
/// mapped to itself, so that files look as they do outside and the command can
/// become the target user. (All ids when this is the initial namespace; the
/// caller's alone when `seal run` made this namespace; a container's range in
/// a container.)
fn identity_maps() -> io::Result<(String, String)> {
    let identity = |text: String| -> String {
        text.lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let inside = f.next()?;
                let _outside = f.next()?;
                let count = f.next()?;
                Some(format!("{inside} {inside} {count}\n"))
            })
            .collect()
    };
    Ok((
        identity(std::fs::read_to_string("/proc/self/uid_map")?),
        identity(std::fs::read_to_string("/proc/self/gid_map")?),
    ))
}

/// Clones the command into a new user namespace and a mount namespace owned
/// by it and writes its id maps; it waits until a byte is written to the
/// returned descriptor.
fn spawn_command(launch: &Launch) -> Result<(Pid, OwnedFd), String> {
    let (uid_map, gid_map) =
        identity_maps().map_err(|e| format!("cannot read this namespace's id maps: {e}"))?;
    let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| format!("cannot start the command: {e}"))?;
    let write_raw = write_end.as_raw_fd();
    let mut go = Some(read_end);
    let mut stack = vec![0u8; 1 << 20];
    let body = Box::new(move || {
        let _ = nix::unistd::close(write_raw);
        match go.take() {
            Some(go) => command(launch, go),
            None => 125,
        }
    });
    // SAFETY: the init is single-threaded, so the child cannot inherit a
    // lock held by another thread; `stack` outlives the call and the child
    // ends through `exec` or `_exit`.
    let pid = unsafe {
        nix::sched::clone(
            body,
            &mut stack,
            CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS,
            Some(libc::SIGCHLD),
        )
    }
    .map_err(|e| {
        format!(
            "cannot create the command's user namespace ({e}): the command must not hold the \
             privileges that built the run, and this kernel (or a seccomp profile, or \
             user.max_user_namespaces) refuses a nested user namespace"
        )
    })?;
    let maps = std::fs::write(format!("/proc/{pid}/uid_map"), &uid_map)
        .and_then(|()| std::fs::write(format!("/proc/{pid}/gid_map"), &gid_map));
    if let Err(e) = maps {
        let _ = kill(pid, Signal::SIGKILL);
        let _ = waitpid(pid, None);
        return Err(format!("cannot map the command's user namespace: {e}"));
    }
    Ok((pid, write_end))
}

/// True for `SI_USER` and `SI_QUEUE` (a process called kill or sigqueue).
pub fn sent_by_a_process(code: i32) -> bool {
    code == libc::SI_USER || code == libc::SI_QUEUE
}

/// Clears every capability of this process, for good: the bounding set (so
/// that no `exec`, of a set-user-ID root program or as root, gets any back),
/// the ambient and inheritable sets, then the permitted and effective ones.
fn drop_capabilities() -> Result<(), Errno> {
    for cap in 0..64 {
        // SAFETY: PR_CAPBSET_DROP takes an integer and changes only this
        // thread's bounding set; EINVAL marks the end of the known caps.
        let r = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if r != 0 {
            let e = Errno::last();
            if e == Errno::EINVAL {
                break;
            }
            return Err(e);
        }
    }
    // SAFETY: as above, integer arguments, this thread only.
    if unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    } != 0
    {
        return Err(Errno::last());
    }
    Ok(())
}

fn clear_capability_sets() -> Result<(), Errno> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads one header and two data structs (version 3), both
    // valid for the duration of the call; it changes this thread only.
    let r = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    if r != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// The command's process: wait for the id maps, drop privileges, exec.
fn command(launch: &Launch, go: OwnedFd) -> isize {
    let fail = |msg: &[u8], code: i32| -> ! {
        let _ = nix::unistd::write(std::io::stderr(), msg);
        // SAFETY: `_exit` only ends this process (the command, which failed
        // before exec); it skips the destructors and atexit handlers of the
        // init whose memory this process copied, which must not run twice.
        unsafe { libc::_exit(code) }
    };
    let mut byte = [0u8; 1];
    match nix::unistd::read(go.as_fd(), &mut byte) {
        Ok(1) => {}
        _ => fail(b"", 125),
    }
    drop(go);
    let _ = SigSet::empty().thread_set_mask();
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    if drop_capabilities().is_err() {
        fail(b"seal: run: cannot drop the command's capabilities\n", 125);
    }
    let id = &launch.identity;
    if id.switch
        && (nix::unistd::setgroups(&id.groups).is_err()
            || nix::unistd::setresgid(id.gid, id.gid, id.gid).is_err()
            || nix::unistd::setresuid(id.uid, id.uid, id.uid).is_err())
    {
        fail(b"seal: run: cannot switch to the target user\n", 125);
    }
    if clear_capability_sets().is_err() || nix::sys::prctl::set_no_new_privs().is_err() {
        fail(b"seal: run: cannot drop the command's capabilities\n", 125);
    }
    if nix::unistd::chdir(launch.cwd.as_c_str()).is_err() {
        fail(b"seal: run: cannot enter the sealed view\n", 125);
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

/// Reaps the init (after a failed start).
pub fn wait_plain(child: Pid) -> i32 {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return code,
            Ok(WaitStatus::Signaled(_, sig, _)) => return 128 + sig as i32,
            Ok(_) => continue,
            Err(_) => return 125,
        }
    }
}
