//! The errors of the mount layer: why a request fails ([`FsError`], mapped to
//! an errno in one exhaustive match) and why a mount cannot start
//! ([`MountError`], mapped to exit code 2 by the CLI).

use std::fmt;
use std::io;
use std::path::PathBuf;

use fuser::Errno;

use seal_core::lockfile::LockfileError;
use seal_core::store::StoreError;

/// Why one FUSE request fails. The only source of errno values sent to the
/// kernel ([`FsError::errno`], one exhaustive match).
#[derive(Debug)]
pub enum FsError {
    /// The gate hides the path (or it does not exist).
    NotFound,
    /// An ordinary name that is not on the disk, in a directory the
    /// directory feed watches: the kernel may remember its absence for the
    /// duration (the feed makes it forget at the name's creation).
    Absent(std::time::Duration),
    /// Any attempt to change what the view protects (or, in a read-only
    /// view, anything).
    ReadOnly,
    /// The inode or handle is no longer what the kernel thinks: forgotten,
    /// never issued, or its content changed under open handles (the kernel
    /// then looks the path up again and gets a new inode).
    Stale,
    /// A non-directory was asked to behave as one.
    NotADirectory,
    /// A directory was asked to behave as a file.
    IsADirectory,
    /// A request the view does not support.
    Unsupported,
    /// What the disk said.
    Io(io::Error),
}

impl FsError {
    /// The errno sent to the kernel.
    pub fn errno(&self) -> Errno {
        match self {
            FsError::NotFound | FsError::Absent(_) => Errno::ENOENT,
            FsError::ReadOnly => Errno::EROFS,
            FsError::Stale => Errno::ESTALE,
            FsError::NotADirectory => Errno::ENOTDIR,
            FsError::IsADirectory => Errno::EISDIR,
            FsError::Unsupported => Errno::ENOTSUP,
            FsError::Io(e) => e.raw_os_error().map_or(Errno::EIO, Errno::from_i32),
        }
    }

    /// The errno for a failed reply to `op`, logged once at debug level: the
    /// one place where failures leave the view.
    pub fn reply(&self, op: &'static str) -> Errno {
        let errno = self.errno();
        tracing::debug!("{op} failed: {self:?} ({errno:?})");
        errno
    }

    /// An error of the disk while walking to a path below the project
    /// without crossing a symlink or a mount. A symlink (`ELOOP`) or a mount
    /// crossing (`EXDEV`) on the way means the path, as the gate sees it,
    /// does not exist: reporting anything else would tell what lies behind
    /// the link. A component gone or not a directory is likewise not found.
    pub fn from_walk(e: io::Error) -> FsError {
        match e.raw_os_error() {
            Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP | libc::EXDEV) => FsError::NotFound,
            _ => FsError::Io(e),
        }
    }
}

impl From<io::Error> for FsError {
    fn from(e: io::Error) -> Self {
        FsError::Io(e)
    }
}

impl From<rustix::io::Errno> for FsError {
    fn from(e: rustix::io::Errno) -> Self {
        FsError::Io(io::Error::from(e))
    }
}

impl From<nix::errno::Errno> for FsError {
    fn from(e: nix::errno::Errno) -> Self {
        FsError::Io(io::Error::from(e))
    }
}

/// Why `seal mount` (or the mount inside `seal run`) cannot start.
#[derive(Debug)]
pub enum MountError {
    Project {
        dir: PathBuf,
        source: io::Error,
    },
    Lockfile(StoreError),
    Invalid(LockfileError),
    MountpointMissing(PathBuf),
    MountpointNotDirectory(PathBuf),
    MountpointInsideProject(PathBuf),
    MountpointIsProject(PathBuf),
    /// The mountpoint is a parent of the project: the view would hide the
    /// very tree it serves, for every process on the host.
    MountpointAboveProject {
        mountpoint: PathBuf,
        project: PathBuf,
    },
    /// A view of this tool is already mounted there (it would stack).
    AlreadyMounted {
        mountpoint: PathBuf,
        source: String,
    },
    /// The mountpoint has entries, which the view would hide.
    MountpointNotEmpty(PathBuf),
    /// Detaching (`--daemon`, the mount(8) helper) failed.
    Detach(io::Error),
    StaleMount(PathBuf),
    FuseUnavailable(io::Error),
    AuditLog {
        path: PathBuf,
        source: io::Error,
    },
    /// An audit sink the machine policy makes mandatory cannot be opened.
    MandatorySink {
        /// The policy file, as shown.
        policy: String,
        /// The policy's key that names the sink (`audit.syslog`).
        setting: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The machine policy file is refused.
    Policy(seal_gate::policy::PolicyError),
    /// A mount by a user other than root failed, and the setuid helper
    /// such mounts go through (fusermount3) is not installed.
    NoFusermount(io::Error),
    Mount(io::Error),
}

impl fmt::Display for MountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |p: &PathBuf| seal_core::escape::escaped_os(p.as_os_str());
        match self {
            MountError::Project { dir, source } => {
                write!(f, "cannot open project directory {}: {source}", shown(dir))
            }
            MountError::Lockfile(e) => write!(f, "{e} (refusing to mount)"),
            MountError::Invalid(e) => write!(
                f,
                "{e}\nrefusing to mount: an invalid lockfile fails closed"
            ),
            MountError::MountpointMissing(p) => write!(f, "mountpoint {} does not exist", shown(p)),
            MountError::MountpointNotDirectory(p) => {
                write!(f, "mountpoint {} is not a directory", shown(p))
            }
            MountError::MountpointInsideProject(p) => write!(
                f,
                "mountpoint {} is inside the project; mount the view outside it (or use 'seal run' to \
                 see it at the project's own path)",
                shown(p)
            ),
            MountError::MountpointIsProject(p) => write!(
                f,
                "mountpoint {} is the project directory itself; mount the view on an empty \
                 directory outside it (or use 'seal run' to see it at the project's own path)",
                shown(p)
            ),
            MountError::MountpointAboveProject {
                mountpoint,
                project,
            } => write!(
                f,
                "mountpoint {} is a parent directory of the project {}: the view would hide the \
                 project it serves, for every process on this host; mount it on an empty \
                 directory outside the project",
                shown(mountpoint),
                shown(project)
            ),
            MountError::AlreadyMounted { mountpoint, source } => write!(
                f,
                "{} is already a seal view (of {}); mounting again would stack a second view \
                 on it. Unmount it first: 'umount {0}'",
                shown(mountpoint),
                seal_core::escape::escaped(source)
            ),
            MountError::MountpointNotEmpty(p) => write!(
                f,
                "mountpoint {} is not empty: the view would hide what is there; use an empty \
                 directory, or pass '-o nonempty' to mount over it anyway",
                shown(p)
            ),
            MountError::Detach(e) => write!(f, "cannot detach into the background: {e}"),
            MountError::StaleMount(p) => write!(
                f,
                "{} is a stale FUSE mount left by a daemon that died; clear it with \
                 'fusermount3 -u {0}' (or 'umount -l {0}' as root), then mount again",
                shown(p)
            ),
            MountError::FuseUnavailable(e) => write!(
                f,
                "/dev/fuse is not usable ({e}); load the fuse module and make sure this user may \
                 open /dev/fuse (or run as root)"
            ),
            MountError::AuditLog { path, source } => {
                write!(f, "cannot open audit log {}: {source}", shown(path))
            }
            MountError::MandatorySink {
                policy,
                setting,
                path,
                source,
            } => {
                let (what, remedy) = if *setting == "audit.syslog" {
                    (
                        "the syslog socket",
                        "start the journal or a syslog daemon that listens there",
                    )
                } else {
                    ("the audit file", "make that file writable for seal")
                };
                write!(
                    f,
                    "the machine policy {policy} requires an audit sink that is missing: {what} \
                     {} cannot be opened ({source}). It is set by \"{setting}\" in {policy}; \
                     {remedy}, or have that policy changed",
                    shown(path)
                )
            }
            MountError::Policy(e) => write!(f, "{e} (refusing to mount)"),
            MountError::NoFusermount(e) => write!(
                f,
                "mount failed: {e}: a user other than root mounts FUSE file systems through \
                 fusermount3, the setuid helper of the fuse3 package, and it is not installed; \
                 install fuse3 (apt install fuse3, dnf install fuse3, pacman -S fuse3) or mount \
                 as root"
            ),
            MountError::Mount(e) => write!(f, "mount failed: {e}"),
        }
    }
}

impl std::error::Error for MountError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos() {
        assert_eq!(FsError::NotFound.errno(), Errno::ENOENT);
        assert_eq!(FsError::ReadOnly.errno(), Errno::EROFS);
        assert_eq!(
            FsError::Io(io::Error::from_raw_os_error(libc::EACCES)).errno(),
            Errno::EACCES
        );
        assert_eq!(FsError::Io(io::Error::other("x")).errno(), Errno::EIO);
        assert_eq!(FsError::IsADirectory.errno(), Errno::EISDIR);
        assert_eq!(FsError::Stale.errno(), Errno::ESTALE);
        for walked in [libc::ELOOP, libc::EXDEV, libc::ENOENT, libc::ENOTDIR] {
            assert_eq!(
                FsError::from_walk(io::Error::from_raw_os_error(walked)).errno(),
                Errno::ENOENT
            );
        }
        assert_eq!(
            FsError::from_walk(io::Error::from_raw_os_error(libc::EACCES)).errno(),
            Errno::EACCES
        );
    }
}
