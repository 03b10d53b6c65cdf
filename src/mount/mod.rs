//! Mounting the sealed view: preflight checks, the FUSE session, and a clean
//! end on unmount or SIGINT/SIGTERM.

pub mod backing;
pub mod creds;
pub mod dispatch;
pub mod error;
pub mod fuse;
pub mod inodes;
#[cfg(test)]
mod model_tests;
pub mod view;

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fuser::{Config, MountOption, Session, SessionACL};
use nix::sys::signal::{SigSet, Signal};

pub use error::{FsError, MountError};

use crate::core::lockfile::Lockfile;
use crate::core::store::read_lockfile;
use crate::gate::audit::AuditLog;
use crate::gate::links::{LinkRule, normalize};
use crate::gate::{Gate, GateConfig};

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
    /// Serve the writable view (ordinary paths change the real project;
    /// extensions and `seal.json` stay immutable).
    pub writable: bool,
}

/// Builds the gate for `project` (already opened): the lockfile must be
/// present and valid, or nothing is mounted.
pub fn prepare_gate(
    project: OwnedFd,
    request: &MountRequest,
    view_root: &Path,
) -> Result<Arc<Gate>, MountError> {
    let bytes = read_lockfile(project.as_fd()).map_err(MountError::Lockfile)?;
    let lockfile = Lockfile::parse(&bytes).map_err(MountError::Invalid)?;
    let mut real = vec![absolute(&request.project_dir)];
    if let Ok(canonical) = std::fs::canonicalize(&request.project_dir) {
        real.push(canonical);
    }
    let audit = match &request.audit_log {
        Some(path) => Some(AuditLog::open(path).map_err(|source| MountError::AuditLog {
            path: path.clone(),
            source,
        })?),
        None => None,
    };
    Ok(Arc::new(Gate::new(GateConfig {
        project: Arc::new(project),
        lockfile_bytes: bytes,
        lockfile,
        links: LinkRule::new(view_root, &real),
        audit,
    })))
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

/// Checks that the mountpoint is a usable directory outside the project.
/// Returns its canonical path.
pub fn check_mountpoint(mountpoint: &Path, project_dir: &Path) -> Result<PathBuf, MountError> {
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
    if canonical.starts_with(&project) {
        return Err(MountError::MountpointInsideProject(
            mountpoint.to_path_buf(),
        ));
    }
    Ok(canonical)
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
/// completed the FUSE handshake).
pub fn mount(
    gate: Arc<Gate>,
    mountpoint: &Path,
    allow_other: bool,
    writable: bool,
) -> Result<Session<fuse::SealFs>, MountError> {
    if writable {
        // Modes arrive masked by the caller's umask; the daemon's own must
        // not mask them again.
        nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    }
    let mut config = Config::default();
    config.mount_options = vec![
        if writable {
            MountOption::RW
        } else {
            MountOption::RO
        },
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::DefaultPermissions,
        MountOption::FSName("sealfs".to_string()),
        MountOption::Subtype("seal".to_string()),
    ];
    config.acl = if allow_other {
        SessionACL::All
    } else {
        SessionACL::Owner
    };
    config.n_threads = Some(FUSE_THREADS);
    config.clone_fd = true;
    Session::new(
        fuse::SealFs::new(gate, FUSE_THREADS, writable),
        mountpoint,
        &config,
    )
    .map_err(|e| {
        if e.raw_os_error() == Some(libc::ENOTCONN) {
            MountError::StaleMount(mountpoint.to_path_buf())
        } else {
            MountError::Mount(e)
        }
    })
}

/// Serves `session` until it is unmounted (by `umount`, `fusermount3 -u`) or
/// SIGINT / SIGTERM arrives, which unmounts it.
pub fn serve_until_unmounted(
    mut session: Session<fuse::SealFs>,
    signals: SigSet,
) -> Result<(), MountError> {
    let mut unmounter = session.unmount_callable();
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
    session.run().map_err(MountError::Mount)
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

/// Runs `seal mount`: checks, mounts, prints one readiness line, serves.
pub fn run_mount(
    request: &MountRequest,
    project: OwnedFd,
    on_ready: impl FnOnce(&Path),
) -> Result<(), MountError> {
    let view_root = check_mountpoint(&request.mountpoint, &request.project_dir)?;
    let gate = prepare_gate(project, request, &view_root)?;
    check_fuse_device()?;
    let signals = block_termination_signals()?;
    let session = mount(
        gate,
        &request.mountpoint,
        request.allow_other,
        request.writable,
    )?;
    on_ready(&view_root);
    serve_until_unmounted(session, signals)
}

/// What a view lets its users do, for the lines that announce it.
pub fn describe_mode(writable: bool) -> &'static str {
    if writable {
        "writable: ordinary files change the project; extensions and seal.json are read-only"
    } else {
        "read-only"
    }
}

/// The readiness line's escaped rendering of a path.
pub fn shown(path: &Path) -> String {
    crate::core::escape::escaped_os(OsStr::new(path.as_os_str()))
}
