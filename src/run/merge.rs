//! The merge-back at the end of a run: the agent's state survives, its
//! extensions never do.
//!
//! What the command writes into a skeleton directory lives in the run's
//! memory (a tmpfs). When the command has ended, for every writable skeleton
//! the user owns on the host (`~`, `~/.claude`, `~/.codex`, ...):
//!
//! * a new entry (a file, a directory tree, a symlink) is copied to the host
//!   directory when the directory is in the write scope ([`super::scope`]),
//!   unless the host has an entry of that name by now (the host's wins), or
//!   the name is an extension location (never written back); a new
//!   configuration file of the filter table is written filtered; new entries
//!   outside the write scope (at the top of the home, say) are dropped;
//! * a writable filtered copy (`~/.claude.json`, `~/.codex/config.toml`) that
//!   the agent changed is merged into the host file entry by entry
//!   ([`super::filter::merge_back`]): extension entries are never taken from
//!   the run, and the host's stay.
//!
//! Writes happen with the target user's filesystem credentials (per thread),
//! through descriptors, never following a symlink, never overwriting.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, OpenHow, ResolveFlag, openat, openat2};
use nix::sys::stat::{Mode, fstatat, mkdirat};

use super::filter::{self, Merged};
use super::namespace::Identity;
use super::plan::{Dir, Node, Placement, Plan, State};
use seal_core::fs::EntryKind;

/// A skeleton to merge back: its plan, the run's tmpfs (kept alive by the
/// descriptor after the run's namespace is gone), and the names it held when
/// the command started.
pub struct MergeDir<'p> {
    pub dir: &'p Dir,
    pub fd: OwnedFd,
    pub start: HashSet<OsString>,
}

/// What the merge did, for the user.
#[derive(Debug, Default)]
pub struct MergeReport {
    pub done: Vec<String>,
    pub problems: Vec<String>,
    /// New entries outside the write scope, left behind with the run.
    pub dropped: Vec<std::path::PathBuf>,
}

fn shown(p: &Path) -> String {
    seal_core::escape::escaped_os(p.as_os_str())
}

/// Merges every directory back; runs on a thread of its own that takes the
/// target user's filesystem identity (so files are theirs, and permissions
/// are checked as theirs).
pub fn merge_back(plan: &Plan, dirs: Vec<MergeDir<'_>>, identity: &Identity) -> MergeReport {
    std::thread::scope(|s| {
        s.spawn(|| {
            if identity.switch {
                if let Err(e) = become_user(identity) {
                    return MergeReport {
                        dropped: Vec::new(),
                        done: Vec::new(),
                        problems: vec![format!(
                            "cannot take the user's identity to merge the agent's state back: {e}"
                        )],
                    };
                }
            }
            let mut out = MergeReport::default();
            for d in &dirs {
                merge_dir(plan, d, &mut out);
            }
            out
        })
        .join()
        .unwrap_or_default()
    })
}

/// Sets this thread's supplementary groups and filesystem uid/gid (the raw
/// system calls change the calling thread only, unlike the C library's
/// process-wide wrappers).
fn become_user(id: &Identity) -> io::Result<()> {
    let groups: Vec<libc::gid_t> = id.groups.iter().map(|g| g.as_raw()).collect();
    // SAFETY: setgroups reads `groups.len()` gids from a live buffer; the
    // raw system call affects this thread only.
    let r = unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: integer arguments; these change this thread's credentials only.
    unsafe {
        libc::syscall(libc::SYS_setfsgid, id.gid.as_raw());
        libc::syscall(libc::SYS_setfsuid, id.uid.as_raw());
    }
    Ok(())
}

/// Opens (creating when the run made it up) the host directory at `path`,
/// following no symlink.
fn host_dir(path: &Path, mode: u32, create: bool) -> io::Result<OwnedFd> {
    let how = || {
        OpenHow::new()
            .flags(OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC)
            .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS)
    };
    match openat2(nix::fcntl::AT_FDCWD, path, how()) {
        Ok(fd) => Ok(fd),
        Err(Errno::ENOENT) if create => {
            let parent = path.parent().unwrap_or(Path::new("/"));
            let pfd = host_dir(parent, mode, true)?;
            let name = path.file_name().unwrap_or_default();
            match mkdirat(pfd.as_fd(), name, Mode::from_bits_truncate(mode & 0o777)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(e) => return Err(io::Error::from(e)),
            }
            openat2(nix::fcntl::AT_FDCWD, path, how()).map_err(io::Error::from)
        }
        Err(e) => Err(io::Error::from(e)),
    }
}

fn exists_at(dir: BorrowedFd<'_>, name: &OsStr) -> bool {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).is_ok()
}

fn read_at(dir: BorrowedFd<'_>, name: &OsStr, follow: bool) -> io::Result<Vec<u8>> {
    let mut flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    if !follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    let fd = openat(dir, name, flags, Mode::empty()).map_err(io::Error::from)?;
    let f = std::fs::File::from(fd);
    if !f.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    f.take(filter::MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Writes `bytes` as `name` in `dir` through a temporary file and a rename
/// (replacing whatever `name` is; the caller checked it is not a symlink).
fn write_replacing(dir: BorrowedFd<'_>, name: &OsStr, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".seal-merge.{}", std::process::id()));
    let fd = openat(
        dir,
        tmp.as_os_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(mode & 0o777),
    )
    .map_err(io::Error::from)?;
    let mut f = std::fs::File::from(fd);
    let written = f
        .write_all(bytes)
        .and_then(|()| f.sync_all())
        .and_then(|()| {
            nix::sys::stat::fchmod(&f, Mode::from_bits_truncate(mode & 0o777))
                .map_err(io::Error::from)
        });
    drop(f);
    let renamed = written.and_then(|()| {
        nix::fcntl::renameat(dir, tmp.as_os_str(), dir, name).map_err(io::Error::from)
    });
    if renamed.is_err() {
        let _ = nix::unistd::unlinkat(
            dir,
            tmp.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    renamed
}

/// Copies the new entry `name` from the run's `src` to the host's `dst`
/// (which has no such entry); returns how many objects it wrote.
fn copy_new(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    name: &OsStr,
    depth: usize,
) -> io::Result<usize> {
    if depth > 64 {
        return Err(io::Error::other("nested too deeply"));
    }
    let st = fstatat(src, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(io::Error::from)?;
    let mode = st.st_mode & 0o777;
    match EntryKind::from_mode(st.st_mode) {
        EntryKind::File => {
            let bytes = {
                let fd = openat(
                    src,
                    name,
                    OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )
                .map_err(io::Error::from)?;
                let mut v = Vec::new();
                std::fs::File::from(fd).read_to_end(&mut v)?;
                v
            };
            let fd = openat(
                dst,
                name,
                OFlag::O_WRONLY
                    | OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(mode),
            )
            .map_err(io::Error::from)?;
            let mut f = std::fs::File::from(fd);
            f.write_all(&bytes)?;
            nix::sys::stat::fchmod(&f, Mode::from_bits_truncate(mode)).map_err(io::Error::from)?;
            Ok(1)
        }
        EntryKind::Dir => {
            mkdirat(dst, name, Mode::from_bits_truncate(mode | 0o700)).map_err(io::Error::from)?;
            let open_dir = |d: BorrowedFd<'_>| {
                openat(
                    d,
                    name,
                    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                    Mode::empty(),
                )
                .map_err(io::Error::from)
            };
            let s = open_dir(src)?;
            let d = open_dir(dst)?;
            let mut n = 1;
            for e in seal_core::fs::list_dir(s.as_fd())? {
                n += copy_new(s.as_fd(), d.as_fd(), &e.name, depth + 1)?;
            }
            let _ = nix::sys::stat::fchmod(&d, Mode::from_bits_truncate(mode));
            Ok(n)
        }
        EntryKind::Symlink => {
            let target = nix::fcntl::readlinkat(src, name).map_err(io::Error::from)?;
            nix::unistd::symlinkat(target.as_os_str(), dst, name).map_err(io::Error::from)?;
            Ok(1)
        }
        other => Err(io::Error::other(format!(
            "a {} is not copied",
            other.describe()
        ))),
    }
}

/// The planned filter rule of a location the run did not show (a writable
/// configuration file that did not exist: the agent may create it).
fn absent_filter(plan: &Plan, location: &Path) -> Option<&'static seal_gate::surfaces::FilterRule> {
    plan.planned
        .iter()
        .find(|p| p.location == location)
        .and_then(|p| p.rule)
}

/// Whether `location` is an extension location the plan names (never written
/// back, even if the run somehow made it).
fn extension_location(plan: &Plan, location: &Path) -> bool {
    plan.planned.iter().any(|p| {
        p.location == location && p.rule.is_none() && !matches!(p.state, State::InsideProject)
    })
}

/// Opens the host directory of `d` once (creating it when the run made it
/// up and something must go there); false (with the problem noted) if it
/// cannot be.
fn ensure_host(host: &mut Option<OwnedFd>, d: &MergeDir<'_>, out: &mut MergeReport) -> bool {
    if host.is_none() {
        match host_dir(&d.dir.path, d.dir.mode, !d.dir.on_host) {
            Ok(fd) => *host = Some(fd),
            Err(e) => {
                out.problems.push(format!(
                    "cannot open {} to merge the agent's state back: {e}",
                    shown(&d.dir.path)
                ));
                return false;
            }
        }
    }
    true
}

fn merge_dir(plan: &Plan, d: &MergeDir<'_>, out: &mut MergeReport) {
    let entries = match seal_core::fs::list_dir(d.fd.as_fd()) {
        Ok(e) => e,
        Err(e) => {
            out.problems
                .push(format!("cannot read the run's {}: {e}", shown(&d.dir.path)));
            return;
        }
    };
    let mut host: Option<OwnedFd> = None;
    for e in entries {
        let location = d.dir.path.join(&e.name);
        if d.start.contains(&e.name) {
            if let Some(Node::Place(Placement::Filtered(f))) = d.dir.children.get(&e.name) {
                if f.rule.writable && f.original.is_some() {
                    let Ok(run) = read_at(d.fd.as_fd(), &e.name, false) else {
                        continue;
                    };
                    if run == f.filtered.bytes || !ensure_host(&mut host, d, out) {
                        continue;
                    }
                    let hfd = host.as_ref().expect("opened").as_fd();
                    merge_filtered(hfd, &e.name, f, &run, &location, out);
                }
            }
            continue;
        }
        let configuration = absent_filter(plan, &location);
        if !d.dir.entries_writable && configuration.is_none() {
            // Outside the write scope: it lived in the run's memory only.
            out.dropped.push(location);
            continue;
        }
        if extension_location(plan, &location) {
            out.problems.push(format!(
                "{} is an extension location: not written back",
                shown(&location)
            ));
            continue;
        }
        if !ensure_host(&mut host, d, out) {
            return;
        }
        let hfd = host.as_ref().expect("opened").as_fd();
        if exists_at(hfd, &e.name) {
            out.problems.push(format!(
                "{} appeared on the host meanwhile: the run's copy is dropped",
                shown(&location)
            ));
            continue;
        }
        if let Some(rule) = configuration {
            // A configuration file the agent created: written filtered.
            let Ok(bytes) = read_at(d.fd.as_fd(), &e.name, false) else {
                continue;
            };
            let filtered = filter::filter(rule, &bytes);
            if filtered.unparsed.is_some() {
                out.problems.push(format!(
                    "{} does not parse: not written back",
                    shown(&location)
                ));
                continue;
            }
            match write_replacing(hfd, &e.name, &filtered.bytes, 0o600) {
                Ok(()) => out.done.push(format!(
                    "wrote {}{}",
                    shown(&location),
                    removed_note(&filtered.removed)
                )),
                Err(err) => out
                    .problems
                    .push(format!("cannot write {}: {err}", shown(&location))),
            }
            continue;
        }
        match copy_new(d.fd.as_fd(), hfd, &e.name, 0) {
            Ok(n) => out
                .done
                .push(format!("copied {} ({n} entries)", shown(&location))),
            Err(err) => out
                .problems
                .push(format!("cannot copy {} back: {err}", shown(&location))),
        }
    }
}

fn removed_note(removed: &[String]) -> String {
    if removed.is_empty() {
        String::new()
    } else {
        format!(
            " (without {})",
            removed
                .iter()
                .map(|r| seal_core::escape::escaped(r).into_owned())
                .collect::<Vec<_>>()
                .join("; ")
        )
    }
}

fn merge_filtered(
    hfd: BorrowedFd<'_>,
    name: &OsStr,
    f: &super::plan::FilteredFile,
    run: &[u8],
    location: &Path,
    out: &mut MergeReport,
) {
    let is_link = fstatat(hfd, name, AtFlags::AT_SYMLINK_NOFOLLOW)
        .map(|st| EntryKind::from_mode(st.st_mode) == EntryKind::Symlink)
        .unwrap_or(false);
    if is_link {
        out.problems.push(format!(
            "{} is a symlink on the host: the agent's changes to it are dropped",
            shown(location)
        ));
        return;
    }
    let host_now = read_at(hfd, name, false).unwrap_or_default();
    let original = f.original.as_deref().unwrap_or_default();
    match filter::merge_back(f.rule, original, run, &host_now) {
        Ok(Merged::Unchanged) => {}
        Ok(Merged::Write { bytes, changed }) => match write_replacing(hfd, name, &bytes, f.mode) {
            Ok(()) => out.done.push(format!(
                "merged {} ({})",
                shown(location),
                changed
                    .iter()
                    .map(|c| seal_core::escape::escaped(c).into_owned())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Err(e) => out
                .problems
                .push(format!("cannot write {}: {e}", shown(location))),
        },
        Err(e) => out.problems.push(format!(
            "the agent's changes to {} are dropped: {e}",
            shown(location)
        )),
    }
}
