//! The writable view: every change to an ordinary path goes to the real
//! project at the same place, made with the caller's credentials
//! ([`AsCaller`]); every change to a protected path (`seal.json`, sealed
//! roots, agent surfaces, existing or not) is refused with `EROFS` and
//! recorded, as the gate decides (`seal_gate::decide`, its write half).
//!
//! Operations name their target by a directory descriptor opened beneath the
//! project without crossing a symlink and the last name, with the no-follow
//! variant of every call, so a symlink swapped in on the disk is never
//! followed out of the project.
//!
//! Changes that arrive by inode alone (`fchmod`, `fchown`, `futimens`,
//! `fsetxattr` carry no file handle) reach the file at the inode's name only
//! while the inode holds that name. Once the name was given to another file
//! through the view (renamed over, or removed and made anew), they reach the
//! inode's open file itself, found among the open handles, or fail with
//! `ESTALE`: never the file that now has the name.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::SystemTime;

use nix::fcntl::{AT_FDCWD, AtFlags, FallocateFlags, FcntlArg, OFlag, RenameFlags};
use nix::sys::stat::{FchmodatFlags, Mode, SFlag, UtimensatFlags};
use nix::sys::time::TimeSpec;
use nix::unistd::{Gid, Uid, UnlinkatFlags};

use super::{Entry, Handle, Opened, ReadMode, SET_ID, View, attr_of, lstat_in, reopened};
use crate::mount::backing::{BackingOf, DAEMON, Register};
use crate::mount::creds::AsCaller;
use crate::mount::error::FsError;
use crate::mount::inodes::ROOT;
use seal_core::fs::{fstat_fd, open_dir_path_beneath, open_file_beneath, open_path_beneath};
use seal_gate::feed::Naming;
use seal_gate::{Change, Op, ViewPath, Who, assess::holds_protected};

/// A time to set, as `setattr` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetTime {
    Now,
    At(SystemTime),
}

/// The attributes a `setattr` asks to change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetAttr {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<SetTime>,
    pub mtime: Option<SetTime>,
}

/// What `mknod` makes.
#[derive(Debug, Clone, Copy)]
pub struct Mknod {
    pub mode: u32,
    pub rdev: u32,
}

fn timespec(t: Option<SetTime>) -> TimeSpec {
    match t {
        None => TimeSpec::UTIME_OMIT,
        Some(SetTime::Now) => TimeSpec::UTIME_NOW,
        Some(SetTime::At(t)) => {
            let (secs, nanos) = match t.duration_since(std::time::UNIX_EPOCH) {
                Ok(d) => (d.as_secs() as i64, d.subsec_nanos() as i64),
                Err(e) => {
                    let d = e.duration();
                    let (s, n) = (d.as_secs() as i64, d.subsec_nanos() as i64);
                    if n == 0 {
                        (-s, 0)
                    } else {
                        (-s - 1, 1_000_000_000 - n)
                    }
                }
            };
            TimeSpec::new(secs, nanos)
        }
    }
}

/// `/proc/self/fd/N/NAME`: a path the xattr calls reach `name` in the
/// directory `dir` by, without resolving anything else (with the no-follow
/// calls). Without a name it is the magic link to `dir` itself, which the
/// following calls must be given: the no-follow ones would act on the link
/// in /proc, and following it reaches exactly the file it holds.
fn proc_path(dir: BorrowedFd<'_>, name: Option<&OsStr>) -> OsString {
    use std::os::fd::AsRawFd;
    let mut p = OsString::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    if let Some(name) = name {
        p.push("/");
        p.push(name);
    }
    p
}

/// Whether `file` was opened to read only.
fn read_only(file: &File) -> Result<bool, FsError> {
    let flags = OFlag::from_bits_truncate(nix::fcntl::fcntl(file, FcntlArg::F_GETFL)?);
    Ok(flags & OFlag::O_ACCMODE == OFlag::O_RDONLY)
}

/// The file `file` holds, opened again for reading only, to register as its
/// passthrough backing; None when `file` is read-only already (or cannot be
/// reopened: then it is registered as it is). The kernel opens a file of its
/// own on the backing for each open, with that open's flags, so the
/// registered descriptor needs no write access; one that had it would keep
/// the file busy for exec(2) (ETXTBSY) for as long as the backing is kept,
/// long after every writer closed it.
fn for_backing(file: &File) -> Option<OwnedFd> {
    match read_only(file) {
        Ok(false) => reopened(file.as_fd(), libc::O_RDONLY)
            .ok()
            .map(OwnedFd::from),
        _ => None,
    }
}

/// `file` for a change through an open handle (a truncate or an
/// allocation): as it is when it may write, else (a handle of a file passed
/// through keeps it read-only, see `open_real`) opened again for writing by
/// the daemon, whose kernel already checked that the handle's open may write.
/// Taken before switching to the caller, as the caller's own descriptor
/// would have been: a file the caller may no longer open for writing (made
/// read-only since) stays writable through a descriptor opened before.
fn for_writing(file: &File) -> Result<File, FsError> {
    match read_only(file)? {
        true => reopened(file.as_fd(), libc::O_WRONLY),
        false => Ok(file.try_clone()?),
    }
}

impl<Id> View<Id> {
    /// Refuses every change in a read-only view, and changes the gate
    /// protects in a writable one.
    pub(super) fn allow(
        &self,
        path: &ViewPath,
        change: Change,
        op: &'static str,
        who: Who,
    ) -> Result<(), FsError> {
        // A read-only view refuses what the kernel left to it (it is
        // mounted writable, or a file was opened before a remount): asked
        // all the same, so that the refusal is recorded.
        let op = Op::Change {
            change,
            op,
            writable: self.writable,
        };
        match self.gate.ask(path, op, who).yes {
            true => Ok(()),
            false => Err(FsError::ReadOnly),
        }
    }

    /// Asks the gate for a change that would make a set-ID program
    /// ([`Change::GrantSetId`], refused wherever the view is writable),
    /// which answers `EPERM` as a chmod without the right to it does.
    fn allow_set_id(&self, path: &ViewPath, op: &'static str, who: Who) -> Result<(), FsError> {
        self.allow(path, Change::GrantSetId, op, who)
            .map_err(|_| FsError::Io(std::io::Error::from_raw_os_error(libc::EPERM)))
    }

    /// The path of `name` in directory `parent`, with a descriptor on that
    /// directory (opened beneath the project, crossing no symlink).
    fn in_dir(&self, parent: u64, name: &OsStr) -> Result<(ViewPath, OwnedFd), FsError> {
        let dir = self.path_of(parent)?;
        let fd =
            open_dir_path_beneath(self.gate.project_fd(), &dir.raw).map_err(FsError::from_walk)?;
        Ok((dir.child(name), fd))
    }

    /// The parent directory's descriptor and the last name of `path`.
    fn located(&self, path: &ViewPath) -> Result<(OwnedFd, OsString), FsError> {
        let (Some(parent), Some(name)) = (path.parent(), path.name()) else {
            // The project root itself: never created, removed or renamed.
            return Err(FsError::ReadOnly);
        };
        let fd = open_dir_path_beneath(self.gate.project_fd(), &parent.raw)
            .map_err(FsError::from_walk)?;
        Ok((fd, name.to_os_string()))
    }

    /// Makes the change `op` of the names `names` (directory, name, how),
    /// telling the directory feed's listener to expect their events.
    fn changing<T>(
        &self,
        names: &[(u64, &OsStr, Naming)],
        op: impl FnOnce() -> Result<T, FsError>,
    ) -> Result<T, FsError> {
        for (dir, name, naming) in names {
            self.kernel.expect(*dir, name, *naming);
        }
        let done = op();
        if done.is_err() {
            for (dir, name, naming) in names {
                self.kernel.expected_failed(*dir, name, *naming);
            }
        }
        done
    }

    /// Looks up what was just made at `path`, `name` in `parent`
    /// (counted), kept as a lookup of it would be: the directory is
    /// watched (if it can be) before the name is looked at, so that any
    /// later change of it on the disk is reported.
    fn made(
        &self,
        path: &ViewPath,
        parent: u64,
        dir: BorrowedFd<'_>,
        name: &OsStr,
    ) -> Result<Entry, FsError> {
        let fed = self.kernel.fed(parent, dir);
        let st = lstat_in(dir, name)?;
        let ino = self.entry_ino(parent, name, &st);
        Ok(self.kept(path, attr_of(&st, ino, None), fed))
    }

    /// Whether `ino`, whose path is `path`, still stands for the name it
    /// was looked up by (the view gives a name a new inode when the file
    /// there is removed or replaced through it).
    pub(super) fn holds_its_name(&self, ino: u64, path: &ViewPath) -> bool {
        if ino == ROOT {
            return true;
        }
        let inodes = self.inodes();
        match (inodes.parent(ino), path.name()) {
            (Some(parent), Some(name)) => inodes.peek(parent, name) == Some(ino),
            _ => false,
        }
    }

    /// The open file a change to `ino` (at `path`) must reach once `ino` no
    /// longer holds its name: the file of handle `fh`, else an open handle's
    /// file that is the same file (device and inode) the inode was last
    /// opened as. `Ok(None)` while the inode holds its name (the name leads
    /// to it); [`FsError::Stale`] when its file cannot be reached any more.
    pub(super) fn unnamed_file(
        &self,
        ino: u64,
        path: &ViewPath,
        fh: Option<u64>,
    ) -> Result<Option<File>, FsError> {
        if self.holds_its_name(ino, path) {
            return Ok(None);
        }
        if let Some(fh) = fh {
            if let Handle::Real { file: Some(f), .. } = &*self.handle(fh)? {
                return Ok(Some(f.try_clone()?));
            }
        }
        // The file of its kept backing, or (no backing: the daemon serves its
        // reads) of a handle opened through it.
        let kept = match self.backings().kept(ino) {
            Some((BackingOf::RealFile { dev, ino, .. }, _)) => Some((dev, ino)),
            _ => None,
        };
        for handle in self.handles.all() {
            if let Handle::Real {
                file: Some(f),
                ino: opened_as,
                ..
            } = &*handle
            {
                let same = match kept {
                    Some(disk) => {
                        fstat_fd(f.as_fd()).is_ok_and(|st| (st.st_dev, st.st_ino) == disk)
                    }
                    None => *opened_as == ino,
                };
                if same {
                    return Ok(Some(f.try_clone()?));
                }
            }
        }
        Err(FsError::Stale)
    }

    pub fn mkdir(&self, parent: u64, name: &OsStr, mode: u32, who: Who) -> Result<Entry, FsError> {
        let (path, dir) = self.in_dir(parent, name)?;
        self.allow(&path, Change::MakeDir, "mkdir", who)?;
        self.changing(&[(parent, name, Naming::Created)], || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::sys::stat::mkdirat(
                &dir,
                name,
                Mode::from_bits_truncate(mode),
            )?)
        })?;
        self.made(&path, parent, dir.as_fd(), name)
    }

    pub fn mknod(
        &self,
        parent: u64,
        name: &OsStr,
        node: Mknod,
        who: Who,
    ) -> Result<Entry, FsError> {
        let (path, dir) = self.in_dir(parent, name)?;
        self.allow(&path, Change::Make, "mknod", who)?;
        if is_set_id_program(node.mode) {
            self.allow_set_id(&path, "mknod", who)?;
        }
        self.changing(&[(parent, name, Naming::Created)], || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::sys::stat::mknodat(
                &dir,
                name,
                SFlag::from_bits_truncate(node.mode & libc::S_IFMT),
                Mode::from_bits_truncate(node.mode),
                node.rdev.into(),
            )?)
        })?;
        self.made(&path, parent, dir.as_fd(), name)
    }

    pub fn symlink(
        &self,
        parent: u64,
        name: &OsStr,
        target: &OsStr,
        who: Who,
    ) -> Result<Entry, FsError> {
        let (path, dir) = self.in_dir(parent, name)?;
        self.allow(&path, Change::Make, "symlink", who)?;
        self.changing(&[(parent, name, Naming::Created)], || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::unistd::symlinkat(target, &dir, name)?)
        })?;
        self.made(&path, parent, dir.as_fd(), name)
    }

    /// A hard link: the source must be changeable too (an alias of a
    /// protected file would let it be written).
    pub fn link(
        &self,
        ino: u64,
        newparent: u64,
        newname: &OsStr,
        who: Who,
    ) -> Result<Entry, FsError> {
        let source = self.path_of(ino)?;
        if !self.holds_its_name(ino, &source) {
            // A file without a name cannot get one back (link(2) says
            // ENOENT); the name leads to another file now.
            return Err(FsError::NotFound);
        }
        self.allow(&source, Change::Modify, "link", who)?;
        let (path, dir) = self.in_dir(newparent, newname)?;
        self.allow(&path, Change::Make, "link", who)?;
        let (src_dir, src_name) = self.located(&source)?;
        self.changing(&[(newparent, newname, Naming::Created)], || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::unistd::linkat(
                &src_dir,
                src_name.as_os_str(),
                &dir,
                newname,
                AtFlags::empty(),
            )?)
        })?;
        // The source's link count changed: what the kernel keeps of its
        // attributes is stale.
        self.kernel.forget_attributes(ino);
        let fed = self.kernel.fed(newparent, dir.as_fd());
        let st = lstat_in(dir.as_fd(), newname)?;
        // The new name is the source's file: it shares the source's inode
        // where both names are ordinary (as [`View::second_name`] decides
        // for a name looked up, without looking at the disk again).
        let shared = st.st_ino == ino
            && self.gate.shares_inodes(&source)
            && self.gate.shares_inodes(&path)
            && self.inodes().share(newparent, newname, ino);
        let ino = match shared {
            true => ino,
            false => self.entry_ino(newparent, newname, &st),
        };
        Ok(self.kept(&path, attr_of(&st, ino, None), fed))
    }

    pub fn unlink(&self, parent: u64, name: &OsStr, who: Who) -> Result<(), FsError> {
        self.remove(parent, name, who, "unlink", UnlinkatFlags::NoRemoveDir)
    }

    pub fn rmdir(&self, parent: u64, name: &OsStr, who: Who) -> Result<(), FsError> {
        self.remove(parent, name, who, "rmdir", UnlinkatFlags::RemoveDir)
    }

    fn remove(
        &self,
        parent: u64,
        name: &OsStr,
        who: Who,
        op: &'static str,
        flags: UnlinkatFlags,
    ) -> Result<(), FsError> {
        let (path, dir) = self.in_dir(parent, name)?;
        self.allow(&path, Change::Remove, op, who)?;
        self.changing(&[(parent, name, Naming::Removed)], || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::unistd::unlinkat(&dir, name, flags)?)
        })?;
        // The name is free: a new file there gets a new inode (the file's
        // other names keep theirs).
        self.inodes().unname(parent, name);
        Ok(())
    }

    /// Whether the directory at `path` holds paths that are protected
    /// wherever they go (agent instruction files, at any depth).
    fn moves_protected(&self, path: &ViewPath) -> bool {
        match self.lstat(path) {
            Ok(st)
                if seal_core::fs::EntryKind::from_mode(st.st_mode)
                    == seal_core::fs::EntryKind::Dir =>
            {
                holds_protected(self.gate.project_fd(), &path.raw)
            }
            _ => false,
        }
    }

    pub fn rename(
        &self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        flags: u32,
        who: Who,
    ) -> Result<(), FsError> {
        let flags = RenameFlags::from_bits(flags)
            .ok_or(FsError::Io(std::io::Error::from_raw_os_error(libc::EINVAL)))?;
        if flags.contains(RenameFlags::RENAME_WHITEOUT) {
            return Err(FsError::Unsupported);
        }
        let (from, from_dir) = self.in_dir(parent, name)?;
        let (to, to_dir) = self.in_dir(newparent, newname)?;
        let holds = self.moves_protected(&from);
        self.allow(
            &from,
            Change::MoveAway {
                holds_protected: holds,
            },
            "rename",
            who,
        )?;
        self.allow(&to, Change::Make, "rename", who)?;
        let exchange = flags.contains(RenameFlags::RENAME_EXCHANGE);
        if exchange {
            let holds = self.moves_protected(&to);
            self.allow(
                &to,
                Change::MoveAway {
                    holds_protected: holds,
                },
                "rename",
                who,
            )?;
            self.allow(&from, Change::Make, "rename", who)?;
        }
        let mut names = vec![
            (parent, name, Naming::MovedFrom),
            (newparent, newname, Naming::MovedTo),
        ];
        if exchange {
            names.push((newparent, newname, Naming::MovedFrom));
            names.push((parent, name, Naming::MovedTo));
        }
        self.changing(&names, || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::fcntl::renameat2(
                &from_dir, name, &to_dir, newname, flags,
            )?)
        })?;
        self.inodes()
            .rename(parent, name, newparent, newname, exchange);
        Ok(())
    }

    /// Creates and opens a regular file.
    pub fn create(
        &self,
        parent: u64,
        name: &OsStr,
        mode: u32,
        flags: i32,
        who: Who,
        register: &dyn Register<Id = Id>,
    ) -> Result<(Entry, Opened<Id>), FsError> {
        let (path, dir) = self.in_dir(parent, name)?;
        self.allow(&path, Change::Make, "create", who)?;
        if is_set_id_program(libc::S_IFREG | mode) {
            self.allow_set_id(&path, "create", who)?;
        }
        // Watched before the file is made: the entry is kept as a lookup's
        // would be, and a change of the new name on the disk from now on is
        // reported (the attributes below come from the descriptor).
        let fed = self.kernel.fed(parent, dir.as_fd());
        // The kernel sends a create only for a name it found absent; should a
        // file appear there meanwhile, O_EXCL fails and O_TRUNC empties it,
        // as the caller asked.
        let keep =
            OFlag::from_bits_truncate(flags) & (OFlag::O_EXCL | OFlag::O_APPEND | OFlag::O_TRUNC);
        // Read-write whatever the caller asked, so that the file can be a
        // passthrough backing for every later open (the kernel checks each
        // open's own access mode); a new file grants it. Made exclusively
        // first, so that the view knows whether it made the name.
        let how = OFlag::O_CREAT | OFlag::O_RDWR | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | keep;
        let made = self.changing(&[(parent, name, Naming::Created)], || {
            let _as = AsCaller::switch(who)?;
            Ok(nix::fcntl::openat(
                &dir,
                name,
                how | OFlag::O_EXCL,
                Mode::from_bits_truncate(mode),
            )?)
        });
        let fd = match made {
            Ok(fd) => fd,
            Err(FsError::Io(e))
                if e.raw_os_error() == Some(libc::EEXIST) && !keep.contains(OFlag::O_EXCL) =>
            {
                self.open_existing(&dir, name, how, mode, flags, who)?
            }
            Err(e) => return Err(e),
        };
        let st = fstat_fd(fd.as_fd())?;
        let ino = self.entry_ino(parent, name, &st);
        let entry = self.kept(&path, attr_of(&st, ino, None), fed);
        let opened = self.open_real(ino, File::from(fd), &st, Some(who), register)?;
        Ok((entry, opened))
    }

    /// Opens the file that appeared at `name` in `dir` between the kernel's
    /// lookup and its create, as the create asked (`how`: read-write; when
    /// the caller may not read it, its own access mode).
    fn open_existing(
        &self,
        dir: &OwnedFd,
        name: &OsStr,
        how: OFlag,
        mode: u32,
        flags: i32,
        who: Who,
    ) -> Result<OwnedFd, FsError> {
        let _as = AsCaller::switch(who)?;
        let mode = Mode::from_bits_truncate(mode);
        Ok(nix::fcntl::openat(dir, name, how, mode).or_else(|e| {
            let acc = OFlag::from_bits_truncate(flags & libc::O_ACCMODE);
            match e {
                nix::Error::EACCES => {
                    nix::fcntl::openat(dir, name, (how - OFlag::O_RDWR) | acc, mode)
                }
                e => Err(e),
            }
        })?)
    }

    /// Serves an opened real file: through a passthrough backing when the
    /// kernel allows it, else by the daemon. `writer`: the caller of an
    /// open that may write, whose credentials its backing is registered
    /// with (see [`BackingOf::RealFile`]); an open to read registers as
    /// the daemon.
    pub(super) fn open_real(
        &self,
        ino: u64,
        file: File,
        st: &nix::sys::stat::FileStat,
        writer: Option<Who>,
        register: &dyn Register<Id = Id>,
    ) -> Result<Opened<Id>, FsError> {
        let writes = writer.is_some();
        let of = BackingOf::RealFile {
            dev: st.st_dev,
            ino: st.st_ino,
            by: writer.map_or(DAEMON, |w| (w.uid, w.gid)),
        };
        let as_writer;
        let register = match writer {
            Some(who) => {
                as_writer = AsCallerRegister {
                    inner: register,
                    who,
                };
                &as_writer as &dyn Register<Id = Id>
            }
            None => register,
        };
        // A kept backing that serves the open is reused: nothing to register.
        let reused = self
            .backings()
            .kept(ino)
            .is_some_and(|(kept, _)| kept.serves(&of, writes));
        if !reused && writes {
            self.backings().release_other_callers(ino, of);
        }
        let read_only = match self.backings().is_enabled() {
            true => for_backing(&file),
            false => None,
        };
        let fd = read_only.as_ref().map_or(file.as_fd(), |f| f.as_fd());
        let backing = self.backing_for(ino, of, writes, fd, register)?;
        if let Some(b) = &backing {
            self.backings().keep(ino, b.clone());
        }
        // A file passed through is written by the kernel itself, so the
        // handle keeps it read-only (`for_writing` reopens it for a truncate
        // or an allocation through the handle). The release that drops the
        // handle is served after the caller's close returns: a writable
        // descriptor kept here would keep the file busy for exec(2) on the
        // disk (ETXTBSY) until then.
        let file = match (&backing, read_only) {
            (Some(_), Some(read_only)) => File::from(read_only),
            (_, _) => file,
        };
        let mode = match &backing {
            Some(b) => ReadMode::Passthrough(b.clone()),
            None => {
                // Read through the kernel's page cache, which stops at the
                // size it keeps: a change on the disk the directory feed's
                // notice has not yet reached must not cut the read short.
                // (Dropping attributes takes no lock a request may hold.)
                self.kernel.forget_attributes(ino);
                ReadMode::Cached
            }
        };
        let fh = self.add_handle(Handle::Real {
            ino,
            file: Some(file),
            _backing: backing,
        });
        Ok(Opened { fh, mode })
    }

    /// Changes attributes of `ino` (through the open handle `fh` for a size
    /// change when there is one). The target is held by an `O_PATH`
    /// descriptor and changed through it, so a symlink swapped in on the
    /// disk is never followed.
    pub fn setattr(
        &self,
        ino: u64,
        fh: Option<u64>,
        set: SetAttr,
        who: Who,
    ) -> Result<Entry, FsError> {
        let path = self.path_of(ino)?;
        self.allow(&path, Change::Modify, "setattr", who)?;
        let unnamed = self.unnamed_file(ino, &path, fh)?.map(OwnedFd::from);
        let target = match &unnamed {
            Some(file) => file.try_clone()?,
            None => {
                open_path_beneath(self.gate.project_fd(), &path.raw).map_err(FsError::from_walk)?
            }
        };
        let by_proc = proc_path(target.as_fd(), None);
        // The open file a truncate through a handle changes.
        let truncated = match (set.size, fh) {
            (Some(_), Some(fh)) => match &*self.handle(fh)? {
                Handle::Real { file: Some(f), .. } => Some(for_writing(f)?),
                _ => None,
            },
            _ => None,
        };
        let mut mode = set.mode;
        if let Some(wanted) = mode {
            let now = nix::sys::stat::fstat(&target)?.st_mode;
            if only_drops_set_id_bits(now, wanted) {
                // The kernel asks this when someone who is not the owner
                // writes to or truncates a set-user-ID or set-group-ID file
                // (as it would do itself on a local filesystem, whoever the
                // writer): it only takes rights away, and the caller, not
                // being the owner, could not ask it of chmod. Only a kernel
                // without FUSE_HANDLE_KILLPRIV_V2 asks it: with it, the
                // disk drops the bits itself as the writer.
                nix::sys::stat::fchmodat(
                    AT_FDCWD,
                    by_proc.as_os_str(),
                    Mode::from_bits_truncate(wanted),
                    FchmodatFlags::FollowSymlink,
                )?;
                mode = None;
            } else if is_set_id_program(now & libc::S_IFMT | wanted) && !is_set_id_program(now) {
                self.allow_set_id(&path, "setattr", who)?;
            }
        }
        {
            let _as = AsCaller::switch(who)?;
            if let Some(size) = set.size {
                match &truncated {
                    Some(f) => f.set_len(size)?,
                    None => {
                        // Reopened for writing, with the caller's rights.
                        let w = nix::fcntl::open(
                            by_proc.as_os_str(),
                            OFlag::O_WRONLY | OFlag::O_CLOEXEC,
                            Mode::empty(),
                        )?;
                        nix::unistd::ftruncate(&w, size as i64)?;
                    }
                }
            }
            if let Some(mode) = mode {
                nix::sys::stat::fchmodat(
                    AT_FDCWD,
                    by_proc.as_os_str(),
                    Mode::from_bits_truncate(mode),
                    FchmodatFlags::FollowSymlink,
                )?;
            }
            if set.uid.is_some() || set.gid.is_some() {
                nix::unistd::fchownat(
                    &target,
                    "",
                    set.uid.map(Uid::from_raw),
                    set.gid.map(Gid::from_raw),
                    AtFlags::AT_EMPTY_PATH,
                )?;
            }
            if set.atime.is_some() || set.mtime.is_some() {
                nix::sys::stat::utimensat(
                    AT_FDCWD,
                    by_proc.as_os_str(),
                    &timespec(set.atime),
                    &timespec(set.mtime),
                    UtimensatFlags::FollowSymlink,
                )?;
            }
        }
        let answer = match unnamed {
            // Its name leads elsewhere: the attributes of the file changed.
            Some(file) => {
                let attr = attr_of(&fstat_fd(file.as_fd())?, ino, None);
                self.kept(&path, attr, false)
            }
            None => self.getattr(ino, fh)?,
        };
        // The kernel takes a setattr's answer whatever it held (an answer
        // read from the disk before it is dropped), so the change's own
        // event tells it nothing while the disk still has these attributes
        // (`KernelCache`'s `holds_what_the_disk_has`): tar's chmod, chown
        // and utimes of each file it writes.
        self.inodes().tell(ino, super::told_digest(&answer.attr));
        Ok(answer)
    }

    /// Writes through the daemon (when the file is not passed through), as
    /// the caller: the disk drops set-ID bits as for a native write.
    pub fn write(&self, fh: u64, offset: u64, data: &[u8], who: Who) -> Result<u32, FsError> {
        use std::os::unix::fs::FileExt;
        if !self.writable {
            // A read-only view writes nothing, also through a file the
            // kernel opened itself (handle 0) on a mount that root
            // remounted read-write.
            return Err(FsError::ReadOnly);
        }
        match &*self.handle(fh)? {
            Handle::Real { file: Some(f), .. } => {
                let _as = AsCaller::switch(who)?;
                f.write_all_at(data, offset)?;
                Ok(data.len() as u32)
            }
            Handle::Dir { .. } => Err(FsError::IsADirectory),
            // Verified bytes are never written; a kept backing is written
            // by the kernel itself.
            _ => Err(FsError::ReadOnly),
        }
    }

    /// A descriptor of the real file behind an open handle (reopened by
    /// path when the handle serves a kept backing).
    fn real_file(&self, fh: u64, ino: u64) -> Result<File, FsError> {
        match &*self.handle(fh)? {
            Handle::Real { file: Some(f), .. } => Ok(f.try_clone()?),
            Handle::Real { file: None, .. } => {
                let path = self.path_of(ino)?;
                if !self.holds_its_name(ino, &path) {
                    return Err(FsError::Stale);
                }
                let fd = open_file_beneath(self.gate.project_fd(), &path.raw.to_os_string())
                    .map_err(FsError::from_walk)?;
                Ok(File::from(fd))
            }
            Handle::Dir { .. } => Err(FsError::IsADirectory),
            Handle::Verified { .. } => Err(FsError::Unsupported),
        }
    }

    pub fn fsync(&self, ino: u64, fh: u64, datasync: bool) -> Result<(), FsError> {
        let file = match self.real_file(fh, ino) {
            // Verified bytes are in memory: nothing to sync.
            Err(FsError::Unsupported) => return Ok(()),
            other => other?,
        };
        if datasync {
            file.sync_data()?;
        } else {
            file.sync_all()?;
        }
        Ok(())
    }

    pub fn fallocate(
        &self,
        ino: u64,
        fh: u64,
        offset: u64,
        length: u64,
        mode: i32,
        who: Who,
    ) -> Result<(), FsError> {
        let path = self.path_of(ino)?;
        self.allow(&path, Change::Modify, "fallocate", who)?;
        let file = for_writing(&self.real_file(fh, ino)?)?;
        let flags = FallocateFlags::from_bits(mode).ok_or(FsError::Io(
            std::io::Error::from_raw_os_error(libc::EOPNOTSUPP),
        ))?;
        let _as = AsCaller::switch(who)?;
        nix::fcntl::fallocate(&file, flags, offset as i64, length as i64)?;
        Ok(())
    }

    /// The directory descriptor and name the xattr calls reach `ino` by; no
    /// name when the descriptor is the target itself (the project root, or
    /// the open file of an inode whose name went away).
    fn xattr_path(&self, ino: u64) -> Result<(ViewPath, OwnedFd, Option<OsString>), FsError> {
        let path = self.path_of(ino)?;
        if let Some(file) = self.unnamed_file(ino, &path, None)? {
            return Ok((path, file.into(), None));
        }
        match (path.parent(), path.name()) {
            (Some(parent), Some(name)) => {
                let fd = open_dir_path_beneath(self.gate.project_fd(), &parent.raw)
                    .map_err(FsError::from_walk)?;
                let name = name.to_os_string();
                Ok((path, fd, Some(name)))
            }
            _ => {
                let fd = open_dir_path_beneath(self.gate.project_fd(), &path.raw)
                    .map_err(FsError::from_walk)?;
                Ok((path, fd, None))
            }
        }
    }

    /// `getxattr`: the value, or its size when `size` is 0.
    pub fn getxattr(&self, ino: u64, name: &OsStr, size: u32) -> Result<Vec<u8>, FsError> {
        let (_, dir, last) = self.xattr_path(ino)?;
        let p = proc_path(dir.as_fd(), last.as_deref());
        let mut buf = vec![0u8; if size == 0 { 64 * 1024 } else { size as usize }];
        let n = if last.is_some() {
            rustix::fs::lgetxattr(p.as_os_str(), name, &mut buf[..])?
        } else {
            rustix::fs::getxattr(p.as_os_str(), name, &mut buf[..])?
        };
        buf.truncate(n);
        Ok(buf)
    }

    /// `listxattr`: the names, NUL-separated.
    pub fn listxattr(&self, ino: u64, size: u32) -> Result<Vec<u8>, FsError> {
        let (_, dir, last) = self.xattr_path(ino)?;
        let p = proc_path(dir.as_fd(), last.as_deref());
        let mut buf = vec![0u8; if size == 0 { 64 * 1024 } else { size as usize }];
        let n = if last.is_some() {
            rustix::fs::llistxattr(p.as_os_str(), &mut buf[..])?
        } else {
            rustix::fs::listxattr(p.as_os_str(), &mut buf[..])?
        };
        buf.truncate(n);
        Ok(buf)
    }

    pub fn setxattr(
        &self,
        ino: u64,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        who: Who,
    ) -> Result<(), FsError> {
        let (path, dir, last) = self.xattr_path(ino)?;
        self.allow(&path, Change::Modify, "setxattr", who)?;
        let p = proc_path(dir.as_fd(), last.as_deref());
        let flags = rustix::fs::XattrFlags::from_bits_truncate(flags as u32);
        let _as = AsCaller::switch(who)?;
        if last.is_some() {
            rustix::fs::lsetxattr(p.as_os_str(), name, value, flags)?;
        } else {
            rustix::fs::setxattr(p.as_os_str(), name, value, flags)?;
        }
        Ok(())
    }

    pub fn removexattr(&self, ino: u64, name: &OsStr, who: Who) -> Result<(), FsError> {
        let (path, dir, last) = self.xattr_path(ino)?;
        self.allow(&path, Change::Modify, "removexattr", who)?;
        let p = proc_path(dir.as_fd(), last.as_deref());
        let _as = AsCaller::switch(who)?;
        if last.is_some() {
            rustix::fs::lremovexattr(p.as_os_str(), name)?;
        } else {
            rustix::fs::removexattr(p.as_os_str(), name)?;
        }
        Ok(())
    }

    /// `access(2)` for writing: refused where the view protects the path.
    pub fn access_write(&self, ino: u64, who: Who) -> Result<(), FsError> {
        let path = self.path_of(ino)?;
        self.allow(&path, Change::Modify, "access", who)
    }
}

/// Whether `mode` (type and permissions) is a program that runs with its
/// owner's or group's rights: set-user-ID and executable by someone, or
/// set-group-ID and group-executable (without group execute, Linux reads
/// the set-group-ID bit as a locking mark). A directory never is.
fn is_set_id_program(mode: u32) -> bool {
    mode & libc::S_IFMT != libc::S_IFDIR
        && ((mode & libc::S_ISUID != 0 && mode & 0o111 != 0)
            || (mode & libc::S_ISGID != 0 && mode & libc::S_IXGRP != 0))
}

/// Whether changing a file's mode from `now` to `wanted` only clears its
/// set-user-ID or set-group-ID bit (and changes nothing else).
fn only_drops_set_id_bits(now: u32, wanted: u32) -> bool {
    let changed = (now ^ wanted) & 0o7777;
    // Something changes, only set-ID bits change, and each is cleared.
    changed != 0 && changed & !SET_ID == 0 && wanted & changed == 0
}

/// Registers passthrough backings with the caller's credentials (see
/// [`BackingOf::RealFile`]): the kernel keeps the credentials of the thread
/// that registers, and writes the backing file with them. Registered as the
/// daemon (root), a write by another user would keep a file's set-ID bits,
/// since the view lets the filesystem drop them
/// (`FUSE_HANDLE_KILLPRIV_V2`).
struct AsCallerRegister<'a, Id> {
    inner: &'a dyn Register<Id = Id>,
    who: Who,
}

impl<Id> Register for AsCallerRegister<'_, Id> {
    type Id = Id;
    fn register(&self, fd: BorrowedFd<'_>) -> std::io::Result<Id> {
        // Should the switch ever fail, the cache turns passthrough off and
        // the daemon serves reads and writes (writes as the caller, which
        // then fail the same way): slower, never a write as root.
        let _as = AsCaller::switch(self.who)?;
        self.inner.register(fd)
    }
}
