//! Reading `seal.json` and replacing it safely.
//!
//! Writers hold an exclusive `flock` on the project directory for the whole
//! read-decide-write cycle, so concurrent `seal pin` runs serialise instead of
//! overwriting each other's decisions (and no lock file is left in the
//! repository). The new bytes go to a temporary file in the same directory,
//! are fsynced, then renamed over `seal.json` (`RENAME_NOREPLACE` for `init`),
//! and the directory is fsynced: a crash leaves either the old or the new file,
//! never a torn one.

use std::ffi::OsStr;
use std::fmt;
use std::io::{self, Write};

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg, OFlag, RenameFlags, openat, renameat, renameat2};
use nix::sys::stat::{Mode, fchmod};
use nix::unistd::{UnlinkatFlags, fsync, unlinkat};

use super::fs::{EntryKind, fstat_fd, lstat_at};
use super::lockfile::LOCKFILE_NAME;

/// The largest `seal.json` that is read (64 MiB: a lockfile with some
/// 500,000 recorded files). A larger one is refused as invalid (fail closed)
/// without being read: the mount re-reads the lockfile whenever it changes,
/// and no decision may cost a gigabyte.
pub(crate) const MAX_LOCKFILE_BYTES: u64 = 64 << 20;

/// A failure to read or write `seal.json`.
#[derive(Debug)]
pub enum StoreError {
    Missing,
    NotRegular(EntryKind),
    TooLarge {
        size: u64,
    },
    AlreadyExists,
    Io {
        action: &'static str,
        source: io::Error,
    },
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Missing => write!(
                f,
                "{LOCKFILE_NAME} not found in the project directory; run 'seal init' first"
            ),
            StoreError::NotRegular(kind) => {
                write!(
                    f,
                    "{LOCKFILE_NAME} is {}; it must be a regular file",
                    kind.describe()
                )
            }
            StoreError::TooLarge { size } => write!(
                f,
                "{LOCKFILE_NAME} is {size} bytes, over the limit of {} MiB; refusing to read it",
                MAX_LOCKFILE_BYTES >> 20
            ),
            StoreError::AlreadyExists => write!(f, "{LOCKFILE_NAME} already exists"),
            StoreError::Io { action, source } => {
                write!(f, "cannot {action} {LOCKFILE_NAME}: {source}")
            }
        }
    }
}

impl std::error::Error for StoreError {}

fn io_error(action: &'static str) -> impl FnOnce(Errno) -> StoreError {
    move |e| StoreError::Io {
        action,
        source: io::Error::from(e),
    }
}

/// Opens `seal.json` for reading, never through a symlink and never blocking
/// (a FIFO named seal.json opens and reads empty).
fn open_lockfile(project: BorrowedFd<'_>) -> Result<OwnedFd, StoreError> {
    openat(
        project,
        LOCKFILE_NAME,
        OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| match e {
        Errno::ENOENT => StoreError::Missing,
        Errno::ELOOP => StoreError::NotRegular(EntryKind::Symlink),
        e => io_error("open")(e),
    })
}

/// Reads `seal.json` from the project directory (never through a symlink).
pub fn read_lockfile(project: BorrowedFd<'_>) -> Result<Vec<u8>, StoreError> {
    let fd = open_lockfile(project)?;
    let stat = fstat_fd(fd.as_fd()).map_err(|source| StoreError::Io {
        action: "read",
        source,
    })?;
    let kind = EntryKind::from_mode(stat.st_mode);
    if kind != EntryKind::File {
        return Err(StoreError::NotRegular(kind));
    }
    check_size(stat.st_size as u64)?;
    read_all(fd, stat.st_size as usize + 1)
}

/// Refuses a lockfile over [`MAX_LOCKFILE_BYTES`].
pub fn check_size(size: u64) -> Result<(), StoreError> {
    if size > MAX_LOCKFILE_BYTES {
        Err(StoreError::TooLarge { size })
    } else {
        Ok(())
    }
}

/// Reads an open `seal.json` to its end (never much over the limit).
pub fn read_open_lockfile(file: &std::fs::File, size_hint: usize) -> Result<Vec<u8>, StoreError> {
    let bytes = super::fs::read_to_end_at(file, size_hint, MAX_LOCKFILE_BYTES as usize).map_err(
        |source| StoreError::Io {
            action: "read",
            source,
        },
    )?;
    check_size(bytes.len() as u64)?;
    Ok(bytes)
}

/// Reads `seal.json` as quickly as possible for the mount, which re-reads it
/// for every decision: no `fstat` (a directory fails to read, a FIFO reads
/// empty; both then fail to parse, which fails closed).
pub fn read_lockfile_unchecked(
    project: BorrowedFd<'_>,
    size_hint: usize,
) -> Result<Vec<u8>, StoreError> {
    let fd = open_lockfile(project)?;
    read_all(fd, size_hint + 1)
}

/// Reads until end of file (no size probing).
fn read_all(fd: OwnedFd, capacity: usize) -> Result<Vec<u8>, StoreError> {
    read_open_lockfile(&std::fs::File::from(fd), capacity)
}

/// True when anything (even a dangling symlink) is named `seal.json`.
pub fn lockfile_exists(project: BorrowedFd<'_>) -> Result<bool, StoreError> {
    match lstat_at(project, OsStr::new(LOCKFILE_NAME)) {
        Ok(_) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(source) => Err(StoreError::Io {
            action: "inspect",
            source,
        }),
    }
}

/// An exclusive lock on the project for one read-decide-write cycle.
pub struct WriteLock {
    _lock: Flock<OwnedFd>,
}

impl WriteLock {
    /// Takes the lock, calling `on_wait` once if another writer holds it.
    pub fn acquire(
        project: BorrowedFd<'_>,
        on_wait: impl FnOnce(),
    ) -> Result<WriteLock, StoreError> {
        let dup = || {
            openat(
                project,
                ".",
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(io_error("lock the directory of"))
        };
        match Flock::lock(dup()?, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(WriteLock { _lock: lock }),
            Err((fd, Errno::EWOULDBLOCK)) => {
                on_wait();
                Flock::lock(fd, FlockArg::LockExclusive)
                    .map(|lock| WriteLock { _lock: lock })
                    .map_err(|(_, e)| io_error("lock the directory of")(e))
            }
            Err((_, e)) => Err(io_error("lock the directory of")(e)),
        }
    }
}

/// How the new file takes the place of the old one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replace {
    /// `seal.json` must not exist (init).
    CreateOnly,
    /// `seal.json` is replaced (pin).
    Overwrite,
}

/// Atomically writes `bytes` as `seal.json`. The caller holds a [`WriteLock`].
pub fn write_lockfile(
    project: BorrowedFd<'_>,
    bytes: &[u8],
    replace: Replace,
    _lock: &WriteLock,
) -> Result<(), StoreError> {
    let old_mode = match lstat_at(project, OsStr::new(LOCKFILE_NAME)) {
        Ok(st) => Some(st.st_mode & 0o7777),
        Err(_) => None,
    };
    let tmp_name = format!(".{LOCKFILE_NAME}.tmp.{}", std::process::id());
    let tmp = openat(
        project,
        tmp_name.as_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )
    .or_else(|e| {
        if e == Errno::EEXIST {
            // A crashed earlier run of this pid; ours to remove.
            let _ = unlinkat(project, tmp_name.as_str(), UnlinkatFlags::NoRemoveDir);
            openat(
                project,
                tmp_name.as_str(),
                OFlag::O_WRONLY
                    | OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o644),
            )
        } else {
            Err(e)
        }
    })
    .map_err(io_error("create a temporary file for"))?;
    let cleanup = |e: StoreError| {
        let _ = unlinkat(project, tmp_name.as_str(), UnlinkatFlags::NoRemoveDir);
        e
    };
    let result = (|| {
        if let Some(mode) = old_mode {
            fchmod(tmp.as_fd(), Mode::from_bits_truncate(mode))
                .map_err(io_error("keep the mode of"))?;
        }
        let mut file = std::fs::File::from(tmp.try_clone().map_err(|source| StoreError::Io {
            action: "write",
            source,
        })?);
        file.write_all(bytes).map_err(|source| StoreError::Io {
            action: "write",
            source,
        })?;
        fsync(tmp.as_fd()).map_err(io_error("flush"))?;
        match replace {
            Replace::Overwrite => renameat(project, tmp_name.as_str(), project, LOCKFILE_NAME)
                .map_err(io_error("replace")),
            Replace::CreateOnly => renameat2(
                project,
                tmp_name.as_str(),
                project,
                LOCKFILE_NAME,
                RenameFlags::RENAME_NOREPLACE,
            )
            .map_err(|e| {
                if e == Errno::EEXIST {
                    StoreError::AlreadyExists
                } else {
                    io_error("create")(e)
                }
            }),
        }
    })();
    drop(tmp);
    result.map_err(cleanup)?;
    // Make the rename itself durable.
    let _ = fsync(project);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read_and_create_only_refuses() {
        let t = tempfile::tempdir().unwrap();
        let fd = super::super::fs::open_project(t.path()).unwrap();
        assert!(matches!(
            read_lockfile(fd.as_fd()),
            Err(StoreError::Missing)
        ));
        let lock = WriteLock::acquire(fd.as_fd(), || {}).unwrap();
        write_lockfile(fd.as_fd(), b"one", Replace::CreateOnly, &lock).unwrap();
        assert_eq!(read_lockfile(fd.as_fd()).unwrap(), b"one");
        assert!(matches!(
            write_lockfile(fd.as_fd(), b"two", Replace::CreateOnly, &lock),
            Err(StoreError::AlreadyExists)
        ));
        write_lockfile(fd.as_fd(), b"three", Replace::Overwrite, &lock).unwrap();
        assert_eq!(read_lockfile(fd.as_fd()).unwrap(), b"three");
        let names: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            ["seal.json"],
            "no temporary or lock file is left behind"
        );
    }

    #[test]
    fn symlinked_lockfile_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("real.json"), "{}").unwrap();
        std::os::unix::fs::symlink("real.json", t.path().join("seal.json")).unwrap();
        let fd = super::super::fs::open_project(t.path()).unwrap();
        assert!(matches!(
            read_lockfile(fd.as_fd()),
            Err(StoreError::NotRegular(EntryKind::Symlink))
        ));
        assert!(lockfile_exists(fd.as_fd()).unwrap());
    }

    #[test]
    fn mode_is_kept() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let fd = super::super::fs::open_project(t.path()).unwrap();
        std::fs::write(t.path().join("seal.json"), "x").unwrap();
        std::fs::set_permissions(
            t.path().join("seal.json"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        let lock = WriteLock::acquire(fd.as_fd(), || {}).unwrap();
        write_lockfile(fd.as_fd(), b"y", Replace::Overwrite, &lock).unwrap();
        let mode = std::fs::metadata(t.path().join("seal.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
