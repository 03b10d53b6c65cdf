//! Mounting the sealed view: preflight checks, the FUSE session, and a clean
//! end on unmount or SIGINT/SIGTERM; detaching for mount(8) and fstab, and
//! readiness for systemd (`sd_notify`).

pub mod backing;
pub mod creds;
pub mod device;
pub mod dispatch;
pub mod error;
pub mod fuse;
pub mod inodes;
#[cfg(test)]
mod model_tests;
pub mod ring;
pub mod serve;
pub mod view;
pub(crate) mod warm;
pub mod wire;

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fuser::{Config, MountOption, Session, SessionACL};
use nix::sys::signal::{SigSet, Signal};

pub use error::MountError;

use seal_core::lockfile::Lockfile;
use seal_gate::audit::AuditLog;
use seal_gate::links::{LinkRule, normalize};
use seal_gate::{Gate, GateConfig};

/// FUSE worker threads. A verification runs on the thread that received the
/// request while fewer than `FUSE_THREADS - 2` do so, else on a verification
/// worker, so ordinary requests always find a free thread.
pub const FUSE_THREADS: usize = 6;

/// What to mount.
#[derive(Debug, Clone)]
pub struct MountRequest {
    /// The project directory as given.
    pub project_dir: PathBuf,
    /// Where the view appears (the project's own path under `seal run`).
    pub mountpoint: PathBuf,
    pub audit_log: Option<PathBuf>,
    pub allow_other: bool,
    /// Serve the writable view (`--writable`, `-o rw`): ordinary paths
    /// change the real project; extensions and `seal.json` stay immutable.
    pub writable: bool,
    /// Mount over a directory that is not empty (`-o nonempty`).
    pub nonempty: bool,
    /// Nothing in the view may be executed (`-o noexec`).
    pub noexec: bool,
    /// Verify a bundle in full at every decision, never reusing one the
    /// change feed proves current (`--rehash-every-open`).
    pub rehash_every_open: bool,
    /// Let the kernel open files itself (`--kernel-opens`; read-only views
    /// with a change feed only: see `view/kernel_opens.rs`).
    pub kernel_opens: bool,
}

/// Builds the gate for `project` (already opened): the lockfile must be
/// present and valid, or nothing is mounted — unless the machine policy
/// (read here, so that `seal mount` and `seal run` both obey it) requires
/// Seal, when a missing one is the empty lockfile. The policy's audit sinks
/// are added to the request's, and its `rehashEveryOpen` and `readOnly`
/// hold whatever the request says.
pub fn prepare_gate(
    project: OwnedFd,
    request: &MountRequest,
    view_root: &Path,
) -> Result<Arc<Gate>, MountError> {
    let machine = seal_gate::policy::machine().map_err(MountError::Policy)?;
    let (bytes, implied) = seal_gate::policy::lockfile_bytes(project.as_fd(), machine)
        .map_err(MountError::Lockfile)?;
    let lockfile = Lockfile::parse(&bytes).map_err(MountError::Invalid)?;
    let mut real = vec![absolute(&request.project_dir)];
    if let Ok(canonical) = std::fs::canonicalize(&request.project_dir) {
        real.push(canonical);
    }
    let audit = open_audit_sinks(request.audit_log.as_deref(), machine)?;
    if let Some(audit) = &audit {
        // What every record of this view carries; `seal run` names its
        // command on top.
        audit.set_session(seal_gate::audit::Session {
            project: Some(shown_path(&real[real.len() - 1])),
            lockfile_digest: (!implied).then(|| seal_core::digest::Digest::of(&bytes).to_string()),
            policy_digest: machine.digest.clone(),
            run_uid: Some(nix::unistd::getuid().as_raw()),
            run_command: std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            ..Default::default()
        });
    }
    let feed = if request.rehash_every_open || machine.rehash_every_open {
        tracing::info!(
            "every open verifies its bundle in full (rehash every open, asked by the {})",
            if machine.rehash_every_open {
                "machine policy"
            } else {
                "command line"
            }
        );
        None
    } else {
        match seal_gate::feed::Feed::for_project(project.as_fd()) {
            Ok(feed) => Some(feed),
            Err(why) => {
                tracing::info!("no change feed ({why}): every open verifies its bundle in full");
                None
            }
        }
    };
    raise_open_file_limit();
    seal_gate::memory::tune_heap();
    Ok(Arc::new(
        Gate::new(GateConfig {
            project: Arc::new(project),
            lockfile_bytes: bytes,
            lockfile,
            links: LinkRule::new(view_root, &real),
            audit,
            feed,
        })
        .with_machine(Arc::new(machine.clone()), implied),
    ))
}

/// A host path as audit records name it (lossy for names that are not UTF-8).
fn shown_path(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The audit sinks: the file the command line names, and those the machine
/// policy makes mandatory (the same file named twice is written once). Any
/// sink that cannot be opened stops the mount; a mandatory one says that
/// the machine policy requires it and where. `seal run` opens them before
/// it prints anything, so that a missing sink is the first and only thing
/// it says.
pub fn open_audit_sinks(
    requested: Option<&Path>,
    machine: &seal_gate::policy::MachinePolicy,
) -> Result<Option<AuditLog>, MountError> {
    let mandatory = &machine.audit;
    let mut log = AuditLog::default();
    if let Some(path) = requested {
        log.add_file(path).map_err(|source| MountError::AuditLog {
            path: path.to_path_buf(),
            source,
        })?;
    }
    let missing = |setting: &'static str, path: &Path, source| MountError::MandatorySink {
        policy: machine.shown_file(),
        setting,
        path: path.to_path_buf(),
        source,
    };
    if let Some(file) = mandatory.file.as_deref() {
        let same = requested.is_some_and(|r| {
            match (std::fs::canonicalize(r), std::fs::canonicalize(file)) {
                (Ok(a), Ok(b)) => a == b,
                _ => absolute(r) == absolute(file),
            }
        });
        if !same {
            log.add_file(file)
                .map_err(|source| missing("audit.file", file, source))?;
        }
    }
    if let Some(settings) = mandatory.syslog {
        let socket = seal_gate::policy::syslog_socket();
        log.add_syslog(&socket, settings)
            .map_err(|source| missing("audit.syslog", &socket, source))?;
    }
    Ok((!log.is_empty()).then_some(log))
}

/// Lets the daemon keep as many descriptors as it may: a kept snapshot and a
/// passthrough backing each hold one.
fn raise_open_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

/// How often the sweeper hands freed heap memory back to the system.
const TRIM_EVERY_SECONDS: u64 = 10;

/// Releases, every few seconds, what the gate and the view keep for bundles
/// nobody used lately, so that memory comes back when the load goes away.
/// The thread ends with the view, and never takes a termination signal
/// (those are for the thread that unmounts).
fn start_sweeper(view: &Arc<view::View<backing::DevBacking>>) {
    let weak = Arc::downgrade(view);
    without_termination_signals(|| {
        let _ = std::thread::Builder::new()
            .name("seal-sweep".into())
            .spawn(move || {
                for second in 1u64.. {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                    let Some(view) = weak.upgrade() else { return };
                    view.gate().sweep();
                    view.sweep_pins();
                    view.sweep_backings();
                    view.sweep_listings();
                    if second % TRIM_EVERY_SECONDS == 0 {
                        seal_gate::memory::give_memory_back();
                    }
                }
            });
    });
}

/// `path` made absolute (against the working directory) and normalised.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize(path)
    } else {
        normalize(
            &std::env::current_dir()
                .unwrap_or_else(|_| PathBuf::from("/"))
                .join(path),
        )
    }
}

/// Checks that the mountpoint is a usable directory outside the project:
/// neither the project, nor inside it, nor one of its parents (the view would
/// hide the tree it serves), not already a view of this tool (it would
/// stack), and empty unless `nonempty`. Returns its canonical path.
pub fn check_mountpoint(
    mountpoint: &Path,
    project_dir: &Path,
    nonempty: bool,
) -> Result<PathBuf, MountError> {
    // statfs always reaches a FUSE daemon (the kernel keeps no answer), so
    // a view whose daemon is gone shows here even while the kernel still
    // keeps the mountpoint's attributes.
    if nix::sys::statfs::statfs(mountpoint).err() == Some(nix::Error::ENOTCONN) {
        return Err(MountError::StaleMount(mountpoint.to_path_buf()));
    }
    match std::fs::metadata(mountpoint) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(MountError::MountpointNotDirectory(mountpoint.to_path_buf())),
        Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => {
            return Err(MountError::StaleMount(mountpoint.to_path_buf()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(MountError::MountpointMissing(mountpoint.to_path_buf()));
        }
        Err(e) => return Err(MountError::Mount(e)),
    }
    let canonical = std::fs::canonicalize(mountpoint).map_err(MountError::Mount)?;
    let project = std::fs::canonicalize(project_dir).map_err(|source| MountError::Project {
        dir: project_dir.to_path_buf(),
        source,
    })?;
    // Directories are compared by device and inode, not by path: a bind
    // mount of the project (`mount --bind /srv/p /alias`) is the project
    // under another path, and with shared propagation a view mounted at
    // /alias/empty appears at /srv/p/empty too, inside the tree it serves.
    let identity = |dir: &Path| {
        nix::sys::stat::stat(dir)
            .map(|st| (st.st_dev, st.st_ino))
            .map_err(|e| MountError::Mount(std::io::Error::from(e)))
    };
    let project_id = identity(&project)?;
    for dir in canonical.ancestors() {
        if identity(dir)? != project_id {
            continue;
        }
        return Err(if dir == canonical {
            MountError::MountpointIsProject(mountpoint.to_path_buf())
        } else {
            MountError::MountpointInsideProject(mountpoint.to_path_buf())
        });
    }
    let mountpoint_id = identity(&canonical)?;
    for dir in project.ancestors().skip(1) {
        if identity(dir)? == mountpoint_id {
            return Err(MountError::MountpointAboveProject {
                mountpoint: mountpoint.to_path_buf(),
                project,
            });
        }
    }
    if let Some(source) = seal_mount_at(&canonical) {
        return Err(MountError::AlreadyMounted {
            mountpoint: mountpoint.to_path_buf(),
            source,
        });
    }
    if !nonempty {
        let mut entries = std::fs::read_dir(&canonical).map_err(MountError::Mount)?;
        if entries.next().is_some() {
            return Err(MountError::MountpointNotEmpty(mountpoint.to_path_buf()));
        }
    }
    Ok(canonical)
}

/// The file system type of every view: `fuse.seal`, as `mount -t` and fstab
/// name it.
pub const FS_TYPE: &str = "fuse.seal";

/// The source of the view of this tool mounted at `path` (the topmost mount
/// there), per /proc/self/mountinfo; None when there is none.
pub fn seal_mount_at(path: &Path) -> Option<String> {
    let mounts = crate::run::mountinfo::read().ok()?;
    // Later lines are mounted on top of earlier ones: the last one wins.
    let top = mounts.iter().rev().find(|m| m.mountpoint == path)?;
    let ours = top.fstype == FS_TYPE || (top.fstype == "fuse" && top.source == "sealfs");
    ours.then(|| top.source.clone())
}

/// The setuid helper through which a user other than root mounts FUSE file
/// systems, found where the FUSE library looks for it (`$FUSERMOUNT_PATH`,
/// else fusermount3 or fusermount on `$PATH`, in /sbin or in /bin); None
/// when there is none.
pub fn fusermount_helper() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("FUSERMOUNT_PATH") {
        return Path::new(&path).is_file().then(|| PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain(["/sbin".into(), "/bin".into()]);
    dirs.flat_map(|d| [d.join("fusermount3"), d.join("fusermount")])
        .find(|p| p.is_file())
}

/// Checks that `/dev/fuse` can be opened.
pub fn check_fuse_device() -> Result<(), MountError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map(drop)
        .map_err(MountError::FuseUnavailable)
}

/// Mounts the view of `gate` at `mountpoint` (returns once the kernel has
/// completed the FUSE handshake). Used by `seal run`, whose view nobody
/// outside its namespace sees.
pub fn mount(
    gate: Arc<Gate>,
    mountpoint: &Path,
    allow_other: bool,
    writable: bool,
    kernel_opens: bool,
) -> Result<MountedView, MountError> {
    mount_with(
        gate,
        mountpoint,
        view_options(&fsname_of(mountpoint), writable, false),
        allow_other,
        writable,
        kernel_opens,
        None,
    )
}

/// The mount options of a view. The type is `fuse.seal` (the kernel takes
/// `subtype=` in the mount data; fusermount3 takes it as an option), and
/// `fsname` is the source /proc/mounts shows.
fn view_options(fsname: &str, writable: bool, noexec: bool) -> Vec<MountOption> {
    let mut options = vec![
        if writable {
            MountOption::RW
        } else {
            MountOption::RO
        },
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::DefaultPermissions,
        MountOption::FSName(fsname.to_string()),
        MountOption::CUSTOM("subtype=seal".to_string()),
    ];
    if noexec {
        options.push(MountOption::NoExec);
    }
    options
}

/// The source shown for a view of `project`: its canonical path. fusermount3
/// (the unprivileged path) splits options at commas and unescapes
/// backslashes, so those are escaped there; mount(2) takes the source as is.
fn fsname_of(project: &Path) -> String {
    let path = std::fs::canonicalize(project).unwrap_or_else(|_| absolute(project));
    let name = path.to_string_lossy().into_owned();
    if nix::unistd::geteuid().is_root() {
        name
    } else {
        name.replace('\\', "\\\\").replace(',', "\\,")
    }
}

/// Mounts the view `request` describes.
pub fn mount_request(
    gate: Arc<Gate>,
    request: &MountRequest,
    last_words: Option<fuse::LastWords>,
) -> Result<MountedView, MountError> {
    let options = view_options(
        &fsname_of(&request.project_dir),
        request.writable,
        request.noexec,
    );
    mount_with(
        gate,
        &request.mountpoint,
        options,
        request.allow_other,
        request.writable,
        request.kernel_opens,
        last_words,
    )
}

fn mount_with(
    gate: Arc<Gate>,
    mountpoint: &Path,
    options: Vec<MountOption>,
    allow_other: bool,
    writable: bool,
    kernel_opens: bool,
    last_words: Option<fuse::LastWords>,
) -> Result<MountedView, MountError> {
    if writable {
        // Modes arrive masked by the caller's umask; the daemon's own must
        // not mask them again.
        nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    }
    let mut config = Config::default();
    config.mount_options = options;
    config.acl = if allow_other {
        SessionACL::All
    } else {
        SessionACL::Owner
    };
    let feed = gate.feed().cloned();
    let mut fs = fuse::SealFs::new(gate, FUSE_THREADS, writable, kernel_opens);
    if let Some(last_words) = last_words {
        fs = fs.on_end(last_words);
    }
    let shared = fs.shared();
    let view = Arc::clone(shared.dispatch.shared());
    let rings = fs.rings();
    start_sweeper(&view);
    let session = Session::new(fs, mountpoint, &config).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOTCONN) {
            MountError::StaleMount(mountpoint.to_path_buf())
        } else if !nix::unistd::geteuid().is_root() && fusermount_helper().is_none() {
            MountError::NoFusermount(e)
        } else {
            MountError::Mount(e)
        }
    })?;
    match nix::unistd::dup(session.as_fd()) {
        Ok(device) => shared.registrar.set_device(device),
        Err(e) => tracing::warn!("no passthrough: cannot duplicate the FUSE device ({e})"),
    }
    view.set_invalidator(Box::new(session.notifier()));
    if let Some(feed) = feed {
        start_listener(feed, Arc::downgrade(&view));
    }
    match seal_gate::feed::Feed::for_project_directories(view.gate().project_fd()) {
        Ok(feed) => {
            view.watch_directories(feed.clone());
            start_listener(feed, Arc::downgrade(&view));
        }
        Err(why) => tracing::info!(
            "no directory feed ({why}): the kernel keeps ordinary entries for {} s",
            seal_gate::ORDINARY_TTL.as_secs()
        ),
    }
    // Last: the rings serve requests as soon as they are registered, and
    // every request must find the view as the classic loop would (its
    // invalidator and feeds set).
    if let Some(&payload) = rings.get() {
        let started = nix::unistd::dup(session.as_fd())
            .map_err(std::io::Error::from)
            .and_then(|device| {
                without_termination_signals(|| ring::start(device, Arc::clone(&shared), payload))
            });
        if let Err(e) = started {
            // The handshake agreed to the rings: the kernel holds every
            // request until each CPU's ring is registered, so a view without
            // them would hang whoever uses it. Dropping the session unmounts.
            drop(session);
            return Err(MountError::Mount(std::io::Error::other(format!(
                "the kernel agreed to FUSE over io_uring but its rings could not start ({e}); \
                 turn it off with `echo 0 > /sys/module/fuse/parameters/enable_uring`"
            ))));
        }
    }
    // Which transport serves (`SEAL_LOG=info`): whoever turned the rings
    // on sees that they took, and whoever has them off learns of them.
    match rings.get() {
        Some(_) => tracing::info!(
            "FUSE requests come through io_uring rings, {} per CPU",
            ring::RINGS_PER_CPU
        ),
        None if uring_off_in_kernel() => tracing::info!(
            "FUSE requests come through /dev/fuse: this kernel has FUSE over io_uring off \
             (`echo 1 > /sys/module/fuse/parameters/enable_uring` as root turns it on, \
             about a quarter off a session: README, Speed)"
        ),
        None => tracing::info!("FUSE requests come through /dev/fuse"),
    }
    if view.kernel_opens_asked() && !view.opens_in_kernel() {
        tracing::warn!(
            "--kernel-opens: every open still asks the view (it needs a read-only view, a \
             complete change feed and no --rehash-every-open)"
        );
    }
    Ok(MountedView { session, shared })
}

/// Whether this kernel has FUSE over io_uring and has it off.
fn uring_off_in_kernel() -> bool {
    std::fs::read_to_string("/sys/module/fuse/parameters/enable_uring")
        .is_ok_and(|on| on.trim() == "N")
}

/// A mounted view: its `fuser` session (the mount, with the handshake
/// done, and the notifier that makes the kernel forget) and what its
/// transports serve with. Dropping it unmounts.
pub struct MountedView {
    session: Session<fuse::SealFs>,
    shared: Arc<serve::Shared>,
}

impl MountedView {
    /// Starts the classic loop's readers ([`device`]).
    fn serve(&self) -> std::io::Result<Vec<std::thread::JoinHandle<()>>> {
        without_termination_signals(|| {
            device::start(self.session.as_fd(), Arc::clone(&self.shared), FUSE_THREADS)
        })
    }

    /// Serves the view from threads of its own until the returned handle
    /// is dropped, which unmounts it.
    pub fn spawn(self) -> std::io::Result<ServedView> {
        self.serve()?;
        Ok(ServedView { _mounted: self })
    }
}

/// A view served in the background ([`MountedView::spawn`]); dropping it
/// unmounts the view, and its readers end with the session.
pub struct ServedView {
    _mounted: MountedView,
}

/// How long the feed's listener lets events gather after the first.
const LISTENER_BATCH: std::time::Duration = std::time::Duration::from_millis(5);

/// The change feed's listener: reads the feed as events come and tells the
/// kernel to forget what they make stale (a thread of its own: a FUSE
/// request thread must never tell the kernel to forget an entry, since the
/// kernel may hold the very directory lock that notification needs). Ends
/// with the view.
fn start_listener(
    feed: Arc<seal_gate::feed::Feed>,
    view: std::sync::Weak<view::View<backing::DevBacking>>,
) {
    feed.keep_notices();
    without_termination_signals(|| {
        let _ = std::thread::Builder::new()
            .name("seal-feed".into())
            .spawn(move || {
                run_ahead_of_load();
                loop {
                    feed.wait(std::time::Duration::from_secs(1));
                    // Events come in bursts (a build, a checkout): waiting a
                    // moment lets the kernel merge repeats and one wakeup
                    // take many, instead of one each on the cores the
                    // requests need.
                    std::thread::sleep(LISTENER_BATCH);
                    feed.drain();
                    let Some(view) = view.upgrade() else { return };
                    for notice in batch(feed.take_notices()) {
                        view.apply(&notice);
                    }
                }
            });
    });
}

/// The niceness of the feed's listener where the daemon may raise it.
const LISTENER_NICE: i32 = -10;

/// Raises the calling thread (the feed's listener) above ordinary work: on
/// a busy machine (a build, a test run, the agent itself) the notices that
/// make the kernel forget what a change made stale must not wait behind the
/// work that made the change. It is idle but for those notices. Only where
/// the daemon may (as root); elsewhere it stays as it is.
fn run_ahead_of_load() {
    let me = rustix::thread::gettid();
    if let Err(e) = rustix::process::setpriority_process(Some(me), LISTENER_NICE) {
        tracing::debug!("the feed's listener keeps its priority: {e}");
    }
}

/// The notices of one drain in the order they are acted on: each once, and
/// the directories that are gone first (so that no entry notice of the
/// batch is followed by a lookup that still trusts a gone watch).
fn batch(notices: Vec<seal_gate::feed::Notice>) -> Vec<seal_gate::feed::Notice> {
    use seal_gate::feed::{EntryChange, Notice};
    let mut seen = std::collections::HashSet::new();
    let mut unique: Vec<Notice> = notices
        .into_iter()
        .filter(|n| seen.insert(n.clone()))
        .collect();
    unique.sort_by_key(|n| {
        !matches!(
            n,
            Notice::Entry {
                change: EntryChange::Gone,
                ..
            }
        )
    });
    unique
}

/// Runs `start` (which starts a thread) with SIGINT, SIGTERM and SIGHUP
/// blocked, so that the new thread never takes them: they are for the
/// thread that unmounts.
fn without_termination_signals<T>(start: impl FnOnce() -> T) -> T {
    let mut termination = SigSet::empty();
    for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        termination.add(s);
    }
    let previous = termination.thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK);
    let started = start();
    if let Ok(previous) = previous {
        let _ = previous.thread_set_mask();
    }
    started
}

/// Serves `session` until it is unmounted (by `umount`, `fusermount3 -u`) or
/// SIGINT / SIGTERM arrives, which unmounts it.
pub fn serve_until_unmounted(mut mounted: MountedView, signals: SigSet) -> Result<(), MountError> {
    let mut unmounter = mounted.session.unmount_callable();
    std::thread::Builder::new()
        .name("seal-signals".into())
        .spawn(move || {
            if let Ok(signal) = signals.wait() {
                tracing::info!("{signal:?} received, unmounting");
                if let Err(e) = unmounter.unmount() {
                    tracing::warn!("unmount failed: {e}");
                }
            }
        })
        .map_err(MountError::Mount)?;
    for reader in mounted.serve().map_err(MountError::Mount)? {
        let _ = reader.join();
    }
    // The session's end: `seal mount`'s last words run here, before the
    // library would unmount the mountpoint path again (`SealFs::on_end`).
    drop(mounted);
    Ok(())
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread, so that every thread
/// started afterwards (FUSE and verification threads) inherits the mask and
/// only [`serve_until_unmounted`]'s waiter receives them. Call it before
/// [`mount`].
pub fn block_termination_signals() -> Result<SigSet, MountError> {
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGINT);
    signals.add(Signal::SIGTERM);
    signals.add(Signal::SIGHUP);
    signals
        .thread_block()
        .map_err(|e| MountError::Mount(std::io::Error::from_raw_os_error(e as i32)))?;
    Ok(signals)
}

/// Runs `seal mount`: checks, mounts, prints one readiness line (through
/// `on_ready`), tells systemd and a waiting parent ([`Detached`]) that the
/// view is ready, serves until unmounted.
pub fn run_mount(
    request: &MountRequest,
    project: OwnedFd,
    detached: Option<Detached>,
    on_ready: impl FnOnce(&Path),
) -> Result<(), MountError> {
    let view_root = check_mountpoint(&request.mountpoint, &request.project_dir, request.nonempty)?;
    let gate = prepare_gate(project, request, &view_root)?;
    check_fuse_device()?;
    let signals = block_termination_signals()?;
    // When the session ends, this process is done: it says so and exits
    // before the FUSE library would unmount the mountpoint path a second
    // time (after an external umount that path may already hold a new
    // mount, which must be left alone).
    let last_words: fuse::LastWords = Box::new(|| {
        notify_systemd("STOPPING=1");
        std::process::exit(0);
    });
    let ended = Arc::clone(&gate);
    let last_words: fuse::LastWords = Box::new(move || {
        if let Some(audit) = ended.audit() {
            audit.lifecycle(seal_gate::audit::Event::MountEnd, "unmounted", None);
        }
        last_words()
    });
    let started = Arc::clone(&gate);
    let session = mount_request(gate, request, Some(last_words))?;
    if let Some(audit) = started.audit() {
        audit.lifecycle(
            seal_gate::audit::Event::MountStart,
            describe_mode(request.writable, request.kernel_opens),
            None,
        );
    }
    on_ready(&view_root);
    notify_systemd(&format!("READY=1\nMAINPID={}", std::process::id()));
    if let Some(detached) = detached {
        detached.ready();
    }
    let result = serve_until_unmounted(session, signals);
    if let Some(audit) = started.audit() {
        audit.lifecycle(seal_gate::audit::Event::MountEnd, "unmounted", None);
    }
    notify_systemd("STOPPING=1");
    result
}

/// Sends `state` to systemd's notification socket when `$NOTIFY_SOCKET` is
/// set (a `Type=notify` service), as `sd_notify(3)` does: one datagram to a
/// path, or to an abstract socket when the name starts with `@`. Failures
/// are logged, never fatal: the view works without systemd.
pub fn notify_systemd(state: &str) {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram};
    let Some(target) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let bytes = target.as_encoded_bytes();
    let sent = UnixDatagram::unbound().and_then(|socket| match bytes.strip_prefix(b"@") {
        Some(name) => SocketAddr::from_abstract_name(name)
            .and_then(|a| socket.send_to_addr(state.as_bytes(), &a)),
        None => socket.send_to(state.as_bytes(), &target),
    });
    if let Err(e) = sent {
        tracing::warn!(
            "cannot notify systemd at {}: {e}",
            shown(Path::new(&target))
        );
    }
}

/// The detached daemon's end of the readiness pipe (see [`detach`]).
#[derive(Debug)]
pub struct Detached {
    ready: OwnedFd,
}

impl Detached {
    /// Tells the waiting parent that the view is mounted (it exits 0), then
    /// leaves the caller's terminal and working directory: standard streams
    /// go to /dev/null (the audit log is the daemon's record) and the working
    /// directory becomes `/`, so the daemon keeps no file system busy.
    pub fn ready(self) {
        let _ = nix::unistd::write(&self.ready, b"R");
        drop(self.ready);
        if let Ok(null) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
        {
            let _ = nix::unistd::dup2_stdin(&null);
            let _ = nix::unistd::dup2_stdout(&null);
            let _ = nix::unistd::dup2_stderr(&null);
        }
        let _ = std::env::set_current_dir("/");
    }
}

/// Detaches into the background for mount(8) and fstab: forks; the parent
/// waits until the child reports the view ready (then exits 0) or exits
/// (then exits with the child's code, the child having printed why). Returns
/// in the child only, which is the leader of a new session (no terminal, so
/// no SIGHUP when the caller's terminal closes). Must run before any thread
/// is started.
pub fn detach() -> Result<Detached, MountError> {
    use nix::sys::wait::{WaitStatus, waitpid};
    use nix::unistd::{ForkResult, fork, pipe, read, setsid};
    let threads = std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count());
    if threads != 1 {
        return Err(MountError::Detach(std::io::Error::other(format!(
            "{threads} threads are running; detach must come first"
        ))));
    }
    let errno = |e: nix::Error| MountError::Detach(std::io::Error::from_raw_os_error(e as i32));
    let (read_end, write_end) = pipe().map_err(errno)?;
    // SAFETY: the process is single-threaded (checked above), so the child
    // inherits no lock held by another thread; both sides go on with
    // ordinary code.
    match unsafe { fork() }.map_err(errno)? {
        ForkResult::Parent { child } => {
            drop(write_end);
            let mut byte = [0u8; 1];
            let ready = loop {
                match read(&read_end, &mut byte) {
                    Err(nix::Error::EINTR) => continue,
                    Ok(1) => break true,
                    _ => break false,
                }
            };
            if ready {
                std::process::exit(0);
            }
            let code = loop {
                match waitpid(child, None) {
                    Ok(WaitStatus::Exited(_, code)) => break code,
                    Ok(WaitStatus::Signaled(_, signal, _)) => break 128 + signal as i32,
                    Err(nix::Error::EINTR) | Ok(_) => continue,
                    Err(_) => break 2,
                }
            };
            std::process::exit(code);
        }
        ForkResult::Child => {
            drop(read_end);
            setsid().map_err(errno)?;
            Ok(Detached { ready: write_end })
        }
    }
}

/// What a view lets its users do, for the lines that announce it.
pub fn describe_mode(writable: bool, kernel_opens: bool) -> &'static str {
    match (writable, kernel_opens) {
        (true, _) => {
            "writable: ordinary files change the project; extensions and seal.json are read-only"
        }
        (false, true) => "read-only; the kernel opens files itself",
        (false, false) => "read-only",
    }
}

/// The readiness line's escaped rendering of a path.
pub fn shown(path: &Path) -> String {
    seal_core::escape::escaped_os(OsStr::new(path.as_os_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_that_is_no_mountpoint_is_no_seal_view() {
        let dir = std::env::temp_dir();
        assert_eq!(seal_mount_at(&dir.join("surely-not-a-mountpoint")), None);
    }
}
