//! Builds the run's root filesystem from a [`Plan`], the way bubblewrap
//! builds a sandbox's: nothing of the host tree is patched.
//!
//! Runs in the init process, in a mount namespace of its own (a private copy
//! of the supervisor's, in which the sealed view is already mounted at the
//! project's path). A tmpfs mounted on `/tmp` becomes the root for the time
//! of the build, with the host tree moved under `/oldroot`; the run's root is
//! built at `/newroot`: each skeleton directory a tmpfs of its own (its
//! host's mode and owner; read-only unless the command may write the host
//! directory), holding a bind of every host entry that is not placed on
//! purpose (taken through a descriptor opened without following symlinks),
//! a copy of every symlink, and the placements. Then the host tree is
//! detached and `/newroot` becomes `/`.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat, openat2};
use nix::mount::{MntFlags, MsFlags, mount, umount2};
use nix::sys::stat::Mode;

mod scratch;

use super::plan::{Dir, FilteredFile, Node, Placement, Plan, read_only_system};
use seal_core::fs::EntryKind;

/// Why the root could not be built.
#[derive(Debug)]
pub enum BuildError {
    /// A placement (an extension location, a filtered file, the view, a
    /// bind) could not be made: the run is Blocked.
    At { location: PathBuf, reason: String },
    /// The scaffolding failed (namespace, tmpfs, pivot).
    Setup(String),
}

/// What the supervisor needs from the build: a descriptor of each skeleton
/// whose new entries are merged back, in [`Plan::merge_dirs`] order.
pub struct Built {
    pub merge_fds: Vec<OwnedFd>,
}

fn setup(what: &str, e: impl std::fmt::Display) -> BuildError {
    BuildError::Setup(format!("{what}: {e}"))
}

const STAGE: &str = "/tmp";
const OLD: &str = "/oldroot";
const NEW: &str = "/newroot";
/// A small tmpfs whose superblock is read-only, holding the empty directory
/// and file every placeholder is a bind of: one mount call per placeholder,
/// and no mount flag of the bind decides that it cannot be written.
const EMPTIES: &str = "/empties";
const EMPTY_DIR: &str = "/empties/dir";
const EMPTY_FILE: &str = "/empties/file";

/// Builds the root and makes it this process's (and this mount namespace's)
/// `/`. `view_dev` is the device of the sealed view, mounted at the project's
/// path: what is bound there must be it.
pub fn build(plan: &Plan, view_dev: u64) -> Result<Built, BuildError> {
    stage().map_err(|e| setup("cannot prepare a staging root", e))?;
    let old = nix::fcntl::open(
        OLD,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| setup("cannot open the host root", e))?;
    std::fs::create_dir(NEW).map_err(|e| setup("cannot create the new root", e))?;
    let mut builder = Builder {
        old,
        view_dev,
        merge_fds: Vec::new(),
    };
    builder.dir(&plan.root, Path::new(NEW))?;
    for (index, location) in plan.scratch.iter().enumerate() {
        // Without its layer the directory stays the view's, read-only: the
        // agent meets the error it would meet anyway.
        if let Err(e) = builder.scratch(location, index) {
            tracing::warn!(
                "no scratch layer over {}: {e}",
                seal_core::escape::escaped_os(location.as_os_str())
            );
        }
    }
    finish().map_err(|e| setup("cannot switch to the new root", e))?;
    Ok(Built {
        merge_fds: builder.merge_fds,
    })
}

/// A tmpfs at `/tmp` becomes the root, the host tree moves to `/oldroot`.
fn stage() -> io::Result<()> {
    mount(
        Some("tmpfs"),
        STAGE,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0700"),
    )
    .map_err(io::Error::from)?;
    std::env::set_current_dir(STAGE)?;
    std::fs::create_dir("oldroot")?;
    nix::unistd::pivot_root(".", "oldroot").map_err(io::Error::from)?;
    std::env::set_current_dir("/")?;
    std::fs::create_dir(EMPTIES)?;
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(
        Some("tmpfs"),
        EMPTIES,
        Some("tmpfs"),
        flags,
        Some("size=4k,nr_inodes=4,mode=0555"),
    )
    .map_err(io::Error::from)?;
    std::fs::create_dir(EMPTY_DIR)?;
    std::fs::set_permissions(EMPTY_DIR, std::fs::Permissions::from_mode(0o555))?;
    std::fs::write(EMPTY_FILE, b"")?;
    std::fs::set_permissions(EMPTY_FILE, std::fs::Permissions::from_mode(0o444))?;
    // The superblock itself read-only: a bind of it cannot be written
    // whatever its own flags, and the command cannot remount it.
    mount(
        None::<&str>,
        EMPTIES,
        None::<&str>,
        MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | flags,
        None::<&str>,
    )
    .map_err(io::Error::from)?;
    Ok(())
}

/// Detaches the host tree and the staging root; `/newroot` becomes `/`.
fn finish() -> io::Result<()> {
    umount2(OLD, MntFlags::MNT_DETACH).map_err(io::Error::from)?;
    std::env::set_current_dir(NEW)?;
    nix::unistd::pivot_root(".", ".").map_err(io::Error::from)?;
    umount2(".", MntFlags::MNT_DETACH).map_err(io::Error::from)?;
    std::env::set_current_dir("/")
}

struct Builder {
    /// The host's root (under `/oldroot`).
    old: OwnedFd,
    view_dev: u64,
    merge_fds: Vec<OwnedFd>,
}

/// The flags a mount already has that a read-only remount must keep (in a
/// user namespace they are locked: leaving one out fails with EPERM).
fn kept_flags(path: &Path) -> MsFlags {
    use nix::sys::statvfs::FsFlags;
    let Ok(st) = nix::sys::statvfs::statvfs(path) else {
        return MsFlags::empty();
    };
    let f = st.flags();
    let mut out = MsFlags::empty();
    for (s, m) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if f.contains(s) {
            out |= m;
        }
    }
    out
}

fn remount_read_only(path: &Path) -> io::Result<()> {
    mount(
        None::<&str>,
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept_flags(path),
        None::<&str>,
    )
    .map_err(io::Error::from)
}

/// The run's mount table as it is now.
fn mounts_now() -> io::Result<Vec<super::mountinfo::MountEntry>> {
    let text = std::fs::read_to_string(format!("{OLD}/proc/self/mountinfo"))
        .or_else(|_| std::fs::read_to_string("/proc/self/mountinfo"))?;
    Ok(super::mountinfo::parse(&text))
}

/// Makes `path` and every mount below it read-only. A mount that cannot
/// be made read-only (a FUSE mount of another user) must not stay
/// writable: fail.
fn remount_tree_read_only(path: &Path) -> io::Result<()> {
    remount_read_only(path)?;
    match remount_below_read_only(&[path]).pop() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Makes every mount strictly below one of `tops` read-only (each top is
/// made read-only by the caller) after one read of the mount table: for a
/// skeleton's entries, one read for all of them, where one per entry made
/// a directory of a few hundred entries (a project's parent) cost tens of
/// milliseconds of start-up. Returns the index of each top below which a
/// mount could not be made read-only (every top, when the table cannot be
/// read), with why.
fn remount_below_read_only(tops: &[&Path]) -> Vec<(usize, io::Error)> {
    if tops.is_empty() {
        return Vec::new();
    }
    let mounts = match mounts_now() {
        Ok(mounts) => mounts,
        Err(e) => {
            return (0..tops.len())
                .map(|i| (i, io::Error::new(e.kind(), e.to_string())))
                .collect();
        }
    };
    let index: std::collections::HashMap<&Path, usize> =
        tops.iter().enumerate().map(|(i, top)| (*top, i)).collect();
    // Each mount strictly below a top, parents before the mounts on them.
    let mut below: Vec<(usize, &Path)> = mounts
        .iter()
        .filter_map(|m| {
            let top = m
                .mountpoint
                .ancestors()
                .skip(1)
                .find_map(|a| index.get(a).copied())?;
            Some((top, m.mountpoint.as_path()))
        })
        .collect();
    below.sort_by_key(|(_, m)| m.as_os_str().len());
    below.dedup_by(|a, b| a.1 == b.1);
    let mut failed: Vec<(usize, io::Error)> = Vec::new();
    for (top, m) in below {
        if failed.iter().any(|(f, _)| *f == top) {
            continue;
        }
        if let Err(e) = remount_read_only(m) {
            failed.push((top, e));
        }
    }
    failed
}

/// Binds the object behind `fd` at `target` (recursively).
fn bind_fd(fd: &OwnedFd, target: &Path) -> io::Result<()> {
    let source = format!("{OLD}/proc/self/fd/{}", fd.as_raw_fd());
    mount(
        Some(source.as_str()),
        target,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(io::Error::from)
}

fn bind_path(source: &Path, target: &Path, recursive: bool) -> io::Result<()> {
    let mut flags = MsFlags::MS_BIND;
    if recursive {
        flags |= MsFlags::MS_REC;
    }
    mount(Some(source), target, None::<&str>, flags, None::<&str>).map_err(io::Error::from)
}

fn mkdir(path: &Path, mode: u32) -> io::Result<()> {
    std::fs::DirBuilder::new().mode(mode).create(path)
}

fn touch(path: &Path, mode: u32) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
}

/// The host path under the old root, relative to it (for `openat2`).
fn relative(path: &Path) -> &Path {
    path.strip_prefix("/").unwrap_or(path)
}

impl Builder {
    fn tmpfs(&self, d: &Dir, at: &Path) -> io::Result<()> {
        self.tmpfs_owned(at, d.mode, d.uid, d.gid)
    }

    /// A tmpfs at `at` whose root has this mode and owner.
    fn tmpfs_owned(&self, at: &Path, mode: u32, uid: u32, gid: u32) -> io::Result<()> {
        let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
        let with_owner = format!("mode={mode:o},uid={uid},gid={gid}");
        match mount(
            Some("tmpfs"),
            at,
            Some("tmpfs"),
            flags,
            Some(with_owner.as_str()),
        ) {
            Ok(()) => Ok(()),
            // An owner this user namespace does not map (unprivileged runs):
            // the directory stays ours, and read-only unless it is writable.
            Err(Errno::EINVAL) => mount(
                Some("tmpfs"),
                at,
                Some("tmpfs"),
                flags,
                Some(format!("mode={mode:o}").as_str()),
            )
            .map_err(io::Error::from),
            Err(e) => Err(io::Error::from(e)),
        }
    }

    /// An `O_PATH` descriptor of the host object at `path`, reached without
    /// following any symlink.
    fn open_beneath(&self, path: &Path, extra: OFlag) -> io::Result<OwnedFd> {
        let rel = relative(path);
        if rel.as_os_str().is_empty() {
            return Err(io::Error::other("cannot place anything at the root"));
        }
        let how = OpenHow::new()
            .flags(OFlag::O_PATH | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW | extra)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
        openat2(self.old.as_fd(), rel, how).map_err(io::Error::from)
    }

    /// Opens the host directory behind a skeleton without following any
    /// symlink (one put there since the plan was made is not followed).
    fn open_host_dir(&self, path: &Path) -> Option<OwnedFd> {
        let how = OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
        let rel = relative(path);
        if rel.as_os_str().is_empty() {
            return openat(
                self.old.as_fd(),
                ".",
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .ok();
        }
        openat2(self.old.as_fd(), rel, how).ok()
    }

    fn dir(&mut self, d: &Dir, at: &Path) -> Result<(), BuildError> {
        let failed = |e: io::Error| BuildError::At {
            location: d.path.clone(),
            reason: format!("cannot make its skeleton directory: {e}"),
        };
        self.tmpfs(d, at).map_err(failed)?;
        if d.merge {
            let fd = nix::fcntl::open(
                at,
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| failed(io::Error::from(e)))?;
            self.merge_fds.push(fd);
        }
        if d.on_host {
            if let Some(host) = self.open_host_dir(&d.path) {
                let entries = seal_core::fs::list_dir(host.as_fd()).map_err(failed)?;
                let mut read_only = Vec::new();
                for e in entries {
                    if d.children.contains_key(&e.name)
                        || (d.path == Path::new("/") && e.name == "proc")
                    {
                        continue;
                    }
                    let writable = d.entries_writable;
                    match self.entry(&host, &d.path, &e.name, e.kind, at, writable) {
                        Ok(Bound::ReadOnly) => {
                            read_only.push((d.path.join(&e.name), at.join(&e.name)));
                        }
                        Ok(Bound::Writable | Bound::Copied) => {}
                        Err(err) => warn(&d.path.join(&e.name), &err),
                    }
                }
                // A bind holding a mount that cannot be made read-only must
                // not stay writable: it is taken away whole.
                let tops: Vec<&Path> = read_only.iter().map(|(_, t)| t.as_path()).collect();
                for (i, err) in remount_below_read_only(&tops) {
                    let (location, target) = &read_only[i];
                    let _ = umount2(target.as_path(), MntFlags::MNT_DETACH);
                    warn(location, &err);
                }
            }
        }
        for (name, node) in &d.children {
            let target = at.join(name);
            let location = d.path.join(name);
            match node {
                Node::Dir(c) => {
                    mkdir(&target, 0o755).map_err(failed)?;
                    self.dir(c, &target)?;
                }
                // A writable place that cannot be bound is left out (the
                // command then cannot write there): never a failure.
                Node::Place(p @ Placement::Writable { .. }) => {
                    if let Err(e) = self.place(p, &location, &target) {
                        warn(&location, &e);
                    }
                }
                Node::Place(p) => self
                    .place(p, &location, &target)
                    .map_err(|e| placement_error(p, &location, e))?,
            }
        }
        if !d.writable {
            remount_read_only(at).map_err(failed)?;
        }
        Ok(())
    }

    /// One host entry of a skeleton, shown as it is: a bind (read-only
    /// outside the write scope and in system directories: the bind itself
    /// here, the mounts below it by the caller, for all entries at once), or
    /// a copy of a symlink. A bind that cannot be made read-only is taken
    /// away.
    fn entry(
        &self,
        host: &OwnedFd,
        dir: &Path,
        name: &OsStr,
        kind: EntryKind,
        at: &Path,
        writable: bool,
    ) -> io::Result<Bound> {
        let target = at.join(name);
        let copy_link = || {
            let link = nix::fcntl::readlinkat(host.as_fd(), name).map_err(io::Error::from)?;
            std::os::unix::fs::symlink(link, &target).map(|()| Bound::Copied)
        };
        if kind == EntryKind::Symlink {
            return copy_link();
        }
        let fd = openat(
            host.as_fd(),
            name,
            OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        let st = nix::sys::stat::fstat(&fd).map_err(io::Error::from)?;
        match EntryKind::from_mode(st.st_mode) {
            // Became a symlink since the listing: copy it.
            EntryKind::Symlink => return copy_link(),
            EntryKind::Dir => mkdir(&target, 0o755)?,
            _ => drop(touch(&target, 0o644)?),
        }
        bind_fd(&fd, &target)?;
        if writable && !read_only_system(&dir.join(name)) {
            return Ok(Bound::Writable);
        }
        if let Err(e) = remount_read_only(&target) {
            let _ = umount2(&target, MntFlags::MNT_DETACH);
            return Err(e);
        }
        Ok(Bound::ReadOnly)
    }

    fn place(&self, p: &Placement, location: &Path, target: &Path) -> io::Result<()> {
        match p {
            Placement::EmptyDir | Placement::Cover => {
                mkdir(target, 0o755)?;
                bind_path(Path::new(EMPTY_DIR), target, false)
            }
            Placement::EmptyFile => {
                drop(touch(target, 0o644)?);
                bind_path(Path::new(EMPTY_FILE), target, false)
            }
            Placement::Filtered(f) => self.filtered(f, target),
            Placement::View => {
                // Reached without following a symlink, and checked to be the
                // view: a directory on the way swapped for a symlink since the
                // view was mounted must not put anything else here.
                let fd = self.open_beneath(location, OFlag::O_DIRECTORY)?;
                let st = nix::sys::stat::fstat(&fd).map_err(io::Error::from)?;
                if st.st_dev != self.view_dev {
                    return Err(io::Error::other(
                        "the project path changed while the run was set up",
                    ));
                }
                mkdir(target, 0o755)?;
                bind_fd(&fd, target)
            }
            Placement::Private { uid, gid } => {
                mkdir(target, 0o700)?;
                self.tmpfs_owned(target, 0o700, *uid, *gid)
            }
            Placement::Writable { source } => self.bind_host(source, target, true),
            Placement::ReadOnly { source } => self.bind_host(source, target, false),
            Placement::Bind { source, writable } => self.bind_host(source, target, *writable),
            Placement::Proc => {
                mkdir(target, 0o555)?;
                mount(
                    Some("proc"),
                    target,
                    Some("proc"),
                    MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
                    None::<&str>,
                )
                .map_err(io::Error::from)
            }
        }
    }

    /// Binds the host object at `source` (reached without following any
    /// symlink) at `target`, read-only unless `writable`.
    fn bind_host(&self, source: &Path, target: &Path, writable: bool) -> io::Result<()> {
        let fd = self.open_beneath(source, OFlag::empty())?;
        let st = nix::sys::stat::fstat(&fd).map_err(io::Error::from)?;
        if EntryKind::from_mode(st.st_mode) == EntryKind::Dir {
            mkdir(target, 0o755)?;
        } else {
            drop(touch(target, 0o644)?);
        }
        bind_fd(&fd, target)?;
        if !writable {
            remount_tree_read_only(target)?;
        }
        Ok(())
    }

    /// A filtered copy: a file of the skeleton's tmpfs with the host file's
    /// mode and owner. A read-only one is also bound onto itself read-only,
    /// so that it cannot be written, replaced or renamed away.
    fn filtered(&self, f: &FilteredFile, target: &Path) -> io::Result<()> {
        let mut file = touch(target, f.mode & 0o777)?;
        file.write_all(&f.filtered.bytes)?;
        // An owner this user namespace does not map stays ours.
        let _ = nix::unistd::fchown(
            &file,
            Some(nix::unistd::Uid::from_raw(f.uid)),
            Some(nix::unistd::Gid::from_raw(f.gid)),
        );
        let _ = file.set_permissions(std::fs::Permissions::from_mode(f.mode & 0o7777));
        drop(file);
        if !f.rule.writable {
            bind_path(target, target, false)?;
            remount_read_only(target)?;
        }
        Ok(())
    }
}

/// How a skeleton's host entry was shown.
enum Bound {
    /// Bound, and the bind made read-only (not yet the mounts below it).
    ReadOnly,
    /// Bound writable.
    Writable,
    /// A copy of a symlink.
    Copied,
}

/// A placement that failed. An extension location that cannot be shown as
/// planned makes the run Blocked; the view, `/proc` or an extra bind failing
/// is a set-up error naming what failed.
fn placement_error(p: &Placement, location: &Path, e: io::Error) -> BuildError {
    let shown = |p: &Path| seal_core::escape::escaped_os(p.as_os_str());
    match p {
        Placement::EmptyDir
        | Placement::EmptyFile
        | Placement::Filtered(_)
        | Placement::Cover
        | Placement::Private { .. }
        | Placement::ReadOnly { .. } => BuildError::At {
            location: location.to_path_buf(),
            reason: e.to_string(),
        },
        Placement::View => BuildError::Setup(format!(
            "cannot place the sealed view at {}: {e}",
            shown(location)
        )),
        Placement::Bind { source, .. } | Placement::Writable { source } => BuildError::Setup(
            format!("cannot bind {} at {}: {e}", shown(source), shown(location)),
        ),
        Placement::Proc => BuildError::Setup(format!("cannot mount the run's own /proc: {e}")),
    }
}

/// An entry the run cannot show (typically one this user may not open, such
/// as another user's FUSE mount) is left out; that is only worth a log line.
fn warn(path: &Path, e: &io::Error) {
    tracing::info!(
        "{} is left out of the run: {e}",
        seal_core::escape::escaped_os(path.as_os_str())
    );
}

/// The names in a directory, for the merge-back's record of what was there at
/// the start.
pub fn names(fd: &OwnedFd) -> io::Result<Vec<OsString>> {
    Ok(seal_core::fs::list_dir(fd.as_fd())?
        .into_iter()
        .map(|e| e.name)
        .collect())
}
