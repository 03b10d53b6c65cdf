//! The FUSE adapter: translates kernel requests into gate decisions and disk
//! reads, and replies. No policy lives here; see [`crate::gate`].
//!
//! * Every lookup and readdir entry is asked of the gate; ordinary paths and
//!   containers get a one-second TTL, sealed and surface paths a zero TTL so
//!   that every walk reaches the gate again.
//! * An open of an ordinary file is served by the real file; an open in a
//!   sealed root by the gate's verified snapshot. Both go through FUSE
//!   passthrough when the kernel allows it (one backing per inode, as the
//!   kernel requires), else through `read` here (snapshots with direct I/O so
//!   that no page cache is shared between versions).
//! * A file whose backing changed while handles to the old one are open gets
//!   a new inode: the open answers `ESTALE`, the kernel looks the path up
//!   again, and the new lookup gets a fresh inode number.
//! * Every request that would change anything answers `EROFS`.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    AccessFlags, BackingId, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, InitFlags, KernelConfig, LockOwner, OpenAccMode, OpenFlags, RenameFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};
use nix::fcntl::{AtFlags, readlinkat};
use nix::sys::stat::{FileStat, fstatat};

use super::error::FsError;
use super::inodes::{Inodes, ROOT};
use crate::core::digest::Digest;
use crate::core::fs::{
    EntryKind, fstat_fd, list_dir, open_dir_beneath, open_dir_path_beneath, open_file_beneath,
};
use crate::gate::{Caching, Gate, OpenDecision, Place, ViewPath, Visibility, Who};
use crate::snapshot::Snapshot;

/// How long the kernel may cache ordinary entries and attributes.
const ORDINARY_TTL: Duration = Duration::from_secs(1);

/// How long the kernel may cache attributes, of every path. Attributes never
/// decide visibility (an entry with a zero TTL is looked up again on every
/// path walk, and that lookup returns fresh attributes); caching them spares
/// the GETATTR the kernel's permission check would send after each lookup.
const ATTR_TTL: Duration = Duration::from_secs(1);

fn ttl(caching: Caching) -> Duration {
    match caching {
        Caching::Cacheable => ORDINARY_TTL,
        Caching::Fresh => Duration::ZERO,
    }
}

/// What a passthrough backing file holds: a real file, or verified bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BackingOf {
    RealFile { dev: u64, ino: u64 },
    Verified(Digest),
}

struct Backing {
    id: BackingId,
}

/// An open file or directory.
enum Handle {
    /// An ordinary file (read here when not passed through; no file is kept
    /// when a kept backing serves it).
    Real {
        file: Option<File>,
        _backing: Option<Arc<Backing>>,
    },
    /// Verified bytes.
    Verified {
        snapshot: Arc<Snapshot>,
        _backing: Option<Arc<Backing>>,
    },
    /// A directory listing taken at opendir, already filtered by the gate.
    Dir { entries: Vec<DirItem> },
}

struct DirItem {
    name: OsString,
    kind: EntryKind,
    ino_hint: u64,
}

/// The state of the view, shared by the FUSE threads and the verification
/// workers.
pub struct View {
    gate: Arc<Gate>,
    inodes: Mutex<Inodes>,
    handles: Mutex<HashMap<u64, Arc<Handle>>>,
    next_fh: AtomicU64,
    /// Cleared when the kernel refuses passthrough (then everything is read here).
    passthrough: AtomicBool,
    backings: Mutex<HashMap<u64, (BackingOf, Weak<Backing>)>>,
    /// Backings of ordinary files kept after their handles close, so that
    /// reopening an unchanged file costs one `fstatat` (bounded; dropped when
    /// the kernel forgets the inode).
    kept_ordinary: Mutex<HashMap<u64, (BackingOf, Arc<Backing>)>>,
}

/// The filesystem: the shared view, and where requests that may verify a
/// bundle run. At most `FUSE_THREADS - 2` such requests run on FUSE threads
/// at once; more wait for a verification worker, so two FUSE threads always
/// remain for ordinary requests however many bundles are being hashed.
pub struct SealFs {
    view: Arc<View>,
    inline_busy: Arc<std::sync::atomic::AtomicUsize>,
    inline_max: usize,
    queue: std::sync::mpsc::Sender<Box<dyn FnOnce() + Send>>,
}

/// Threads that run the verifications the FUSE threads hand off.
const VERIFY_WORKERS: usize = 2;

impl SealFs {
    pub fn new(gate: Arc<Gate>, fuse_threads: usize) -> SealFs {
        let (queue, jobs) = std::sync::mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let jobs = Arc::new(Mutex::new(jobs));
        for i in 0..VERIFY_WORKERS {
            let jobs = jobs.clone();
            let _ = std::thread::Builder::new()
                .name(format!("seal-verify-{i}"))
                .spawn(move || {
                    loop {
                        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => break,
                        }
                    }
                });
        }
        SealFs {
            view: Arc::new(View::new(gate)),
            inline_busy: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
            inline_max: fuse_threads.saturating_sub(2).max(1),
            queue,
        }
    }

    /// Runs `work` here, unless it may verify a bundle and the FUSE threads
    /// already doing so are at their limit: then on a verification worker.
    fn dispatch(&self, heavy: bool, work: impl FnOnce(&View) + Send + 'static) {
        if !heavy {
            return work(&self.view);
        }
        if self.inline_busy.fetch_add(1, Ordering::AcqRel) < self.inline_max {
            work(&self.view);
            self.inline_busy.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        self.inline_busy.fetch_sub(1, Ordering::AcqRel);
        let view = self.view.clone();
        if let Err(job) = self.queue.send(Box::new(move || work(&view))) {
            // No worker left (shutting down): run it here after all.
            (job.0)();
        }
    }
}

/// How many ordinary backings (open descriptors) are kept at most.
const KEPT_ORDINARY_MAX: usize = 4096;

impl View {
    fn new(gate: Arc<Gate>) -> View {
        View {
            gate,
            inodes: Mutex::new(Inodes::default()),
            handles: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            passthrough: AtomicBool::new(false),
            backings: Mutex::new(HashMap::new()),
            kept_ordinary: Mutex::new(HashMap::new()),
        }
    }

    /// The kept backing of `ino` if the real file at its path is still the
    /// one it was made from.
    fn kept_ordinary_backing(&self, ino: u64, path: &ViewPath) -> Option<Arc<Backing>> {
        let (of, backing) = {
            let kept = self.kept_ordinary.lock().unwrap_or_else(|e| e.into_inner());
            kept.get(&ino).cloned()?
        };
        // A stat that followed a symlink on the way could only match the
        // identity of the file opened safely before, so it is safe to compare.
        let st = fstatat(
            self.gate.project_fd(),
            path.raw.to_os_string().as_os_str(),
            AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .ok()?;
        let now = BackingOf::RealFile {
            dev: st.st_dev,
            ino: st.st_ino,
        };
        (now == of && EntryKind::from_mode(st.st_mode) == EntryKind::File).then_some(backing)
    }

    fn keep_ordinary_backing(&self, ino: u64, backing: Arc<Backing>) {
        let of = {
            let backings = self.backings.lock().unwrap_or_else(|e| e.into_inner());
            match backings.get(&ino) {
                Some((of, _)) => *of,
                None => return,
            }
        };
        let mut kept = self.kept_ordinary.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= KEPT_ORDINARY_MAX {
            kept.clear();
        }
        kept.insert(ino, (of, backing));
    }

    fn inodes(&self) -> std::sync::MutexGuard<'_, Inodes> {
        self.inodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn handles(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Handle>>> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn path_of(&self, ino: INodeNo) -> Result<ViewPath, FsError> {
        self.inodes().path(ino.0).ok_or(FsError::Stale)
    }

    /// Whether a request about `path` may have to verify a bundle (decided
    /// on the last lockfile read; it only steers where the request runs,
    /// never what it decides). Listing a container decides about the sealed
    /// roots inside it.
    fn may_verify(&self, path: &ViewPath, listing: bool) -> bool {
        match self.gate.cached_place(path) {
            Place::Sealed { .. } | Place::Artifact { .. } | Place::Unmappable { .. } => true,
            Place::Container => listing,
            Place::Ordinary => false,
        }
    }

    /// `lstat` of a view path, never crossing a symlink.
    fn lstat(&self, path: &ViewPath) -> Result<FileStat, FsError> {
        let project = self.gate.project_fd();
        match path.parent() {
            None => Ok(fstat_fd(project)?),
            Some(parent) => {
                let dir = open_dir_path_beneath(project, &parent.raw).map_err(not_found_if_gone)?;
                let name = path.raw.0.last().ok_or(FsError::Stale)?;
                lstat_in(dir.as_fd(), name)
            }
        }
    }

    fn readlink_path(&self, path: &ViewPath) -> Result<OsString, FsError> {
        let parent = path.parent().ok_or(FsError::NotFound)?;
        let dir = open_dir_path_beneath(self.gate.project_fd(), &parent.raw)
            .map_err(not_found_if_gone)?;
        let name = path.raw.0.last().ok_or(FsError::Stale)?;
        readlinkat(dir.as_fd(), name.as_os_str())
            .map_err(|e| FsError::Io(io::Error::from_raw_os_error(e as i32)))
    }

    /// Looks up `name` in `parent` through the gate; counts the lookup.
    fn lookup_entry(
        &self,
        parent: INodeNo,
        path: &ViewPath,
        name: &OsStr,
        who: Who,
    ) -> Result<(FileAttr, Duration), FsError> {
        let st = self.lstat(path)?;
        let kind = EntryKind::from_mode(st.st_mode);
        let target = if kind == EntryKind::Symlink {
            self.readlink_path(path).ok()
        } else {
            None
        };
        let caching = match self.gate.lookup(path, kind, target.as_deref(), who) {
            Visibility::Hidden => return Err(FsError::NotFound),
            Visibility::Shown(c) => c,
        };
        let ino = self.inodes().remember(parent.0, name);
        Ok((attr_of(&st, ino, None), ttl(caching)))
    }

    fn open_file(
        &self,
        ino: INodeNo,
        path: &ViewPath,
        flags: OpenFlags,
        who: Who,
        reply: &ReplyOpen,
    ) -> Result<(u64, FopenFlags, Option<Arc<Backing>>), FsError> {
        if flags.acc_mode() != OpenAccMode::O_RDONLY {
            return Err(FsError::ReadOnly);
        }
        match self.gate.open(path, who) {
            OpenDecision::Deny => Err(FsError::NotFound),
            OpenDecision::Ordinary => {
                // A backing kept from an earlier open of the same real file
                // (same device and inode now) is reused without reopening.
                if let Some(backing) = self.kept_ordinary_backing(ino.0, path) {
                    let fh = self.add_handle(Handle::Real {
                        file: None,
                        _backing: Some(backing.clone()),
                    });
                    return Ok((fh, FopenFlags::FOPEN_PASSTHROUGH, Some(backing)));
                }
                let fd = open_file_beneath(self.gate.project_fd(), &path.raw.to_os_string())
                    .map_err(not_found_if_gone)?;
                let st = fstat_fd(fd.as_fd())?;
                if EntryKind::from_mode(st.st_mode) != EntryKind::File {
                    return Err(FsError::NotFound);
                }
                let of = BackingOf::RealFile {
                    dev: st.st_dev,
                    ino: st.st_ino,
                };
                let backing = self.backing_for(ino.0, of, &fd, reply)?;
                if let Some(b) = &backing {
                    self.keep_ordinary_backing(ino.0, b.clone());
                }
                let flags = if backing.is_some() {
                    FopenFlags::FOPEN_PASSTHROUGH
                } else {
                    FopenFlags::empty()
                };
                let fh = self.add_handle(Handle::Real {
                    file: Some(File::from(fd)),
                    _backing: backing.clone(),
                });
                Ok((fh, flags, backing))
            }
            OpenDecision::Snapshot(snapshot) => {
                // Every snapshot carries the digest its bytes were hashed to;
                // one without could never share a backing safely.
                let Some(digest) = snapshot.digest() else {
                    return Err(FsError::NotFound);
                };
                let backing =
                    self.backing_for(ino.0, BackingOf::Verified(digest), snapshot.file(), reply)?;
                let flags = if backing.is_some() {
                    FopenFlags::FOPEN_PASSTHROUGH
                } else {
                    FopenFlags::FOPEN_DIRECT_IO
                };
                let fh = self.add_handle(Handle::Verified {
                    snapshot,
                    _backing: backing.clone(),
                });
                Ok((fh, flags, backing))
            }
        }
    }

    /// The passthrough backing of inode `ino` for content `of`: the live one
    /// when it holds the same content, a new one when none is live. A live
    /// backing with other content means the file changed under open handles:
    /// the inode is retired and the open answers ESTALE so that the kernel
    /// looks the path up again (and gets a new inode).
    fn backing_for(
        &self,
        ino: u64,
        of: BackingOf,
        fd: impl AsFd,
        reply: &ReplyOpen,
    ) -> Result<Option<Arc<Backing>>, FsError> {
        if !self.passthrough.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let mut backings = self.backings.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((live_of, weak)) = backings.get(&ino) {
            if let Some(live) = weak.upgrade() {
                if *live_of == of {
                    return Ok(Some(live));
                }
                drop(backings);
                self.inodes().retire(ino);
                return Err(FsError::Io(io::Error::from_raw_os_error(libc::ESTALE)));
            }
        }
        match reply.open_backing(fd.as_fd()) {
            Ok(id) => {
                let backing = Arc::new(Backing { id });
                backings.insert(ino, (of, Arc::downgrade(&backing)));
                Ok(Some(backing))
            }
            Err(e) => {
                tracing::warn!(
                    "passthrough refused ({e}); serving reads from the daemon from now on"
                );
                self.passthrough.store(false, Ordering::Relaxed);
                Ok(None)
            }
        }
    }

    fn add_handle(&self, handle: Handle) -> u64 {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.handles().insert(fh, Arc::new(handle));
        fh
    }

    fn list(&self, ino: INodeNo, path: &ViewPath, who: Who) -> Result<Vec<DirItem>, FsError> {
        let dir = open_dir_beneath(self.gate.project_fd(), &path.raw).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOTDIR) {
                FsError::NotADirectory
            } else {
                not_found_if_gone(e)
            }
        })?;
        let parent_ino = self.inodes().parent(ino.0).unwrap_or(ROOT);
        let mut items = vec![
            DirItem {
                name: OsString::from("."),
                kind: EntryKind::Dir,
                ino_hint: ino.0,
            },
            DirItem {
                name: OsString::from(".."),
                kind: EntryKind::Dir,
                ino_hint: parent_ino,
            },
        ];
        // One lockfile read decides the whole listing.
        let view = self.gate.lock_view();
        for entry in list_dir(dir.as_fd())? {
            let child = path.child(&entry.name);
            let target = if entry.kind == EntryKind::Symlink {
                readlinkat(dir.as_fd(), entry.name.as_os_str()).ok()
            } else {
                None
            };
            if self
                .gate
                .lookup_in(&view, &child, entry.kind, target.as_deref(), who)
                .is_shown()
            {
                let ino_hint = self.inodes().peek(ino.0, &entry.name).unwrap_or(entry.ino);
                items.push(DirItem {
                    name: entry.name,
                    kind: entry.kind,
                    ino_hint,
                });
            }
        }
        Ok(items)
    }
}

/// Reads up to `size` bytes at `offset`, fewer only at end of file.
fn read_fully_at(file: &File, offset: u64, size: usize) -> Result<Vec<u8>, FsError> {
    let mut buf = vec![0u8; size];
    let mut filled = 0;
    while filled < size {
        match file.read_at(&mut buf[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FsError::Io(e)),
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

/// `lstat` of `name` in the directory `dir`.
fn lstat_in(dir: std::os::fd::BorrowedFd<'_>, name: &OsStr) -> Result<FileStat, FsError> {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(|e| match e {
        nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR => FsError::NotFound,
        e => FsError::Io(io::Error::from_raw_os_error(e as i32)),
    })
}

fn not_found_if_gone(e: io::Error) -> FsError {
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP | libc::EXDEV) => FsError::NotFound,
        _ => FsError::Io(e),
    }
}

fn file_type(kind: EntryKind) -> FileType {
    match kind {
        EntryKind::Dir => FileType::Directory,
        EntryKind::File => FileType::RegularFile,
        EntryKind::Symlink => FileType::Symlink,
        EntryKind::Fifo => FileType::NamedPipe,
        EntryKind::Socket => FileType::Socket,
        EntryKind::CharDevice => FileType::CharDevice,
        EntryKind::BlockDevice => FileType::BlockDevice,
    }
}

fn time(secs: i64, nsecs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs as u32)
    } else {
        UNIX_EPOCH - Duration::new(secs.unsigned_abs(), 0) + Duration::from_nanos(nsecs as u64)
    }
}

/// Attributes for inode `ino` from an `lstat`; `size` overrides the size (an
/// open snapshot's length).
fn attr_of(st: &FileStat, ino: u64, size: Option<u64>) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size: size.unwrap_or(st.st_size as u64),
        blocks: st.st_blocks as u64,
        atime: time(st.st_atime, st.st_atime_nsec),
        mtime: time(st.st_mtime, st.st_mtime_nsec),
        ctime: time(st.st_ctime, st.st_ctime_nsec),
        crtime: UNIX_EPOCH,
        kind: file_type(EntryKind::from_mode(st.st_mode)),
        perm: (st.st_mode & 0o7777) as u16,
        nlink: st.st_nlink as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        rdev: st.st_rdev as u32,
        blksize: st.st_blksize as u32,
        flags: 0,
    }
}

fn who(req: &Request) -> Who {
    Who { pid: req.pid() }
}

impl Filesystem for SealFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        let _ = config
            .add_capabilities(InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO);
        let _ = config.add_capabilities(InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP);
        let _ = config.add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS);
        if config.add_capabilities(InitFlags::FUSE_PASSTHROUGH).is_ok()
            && config.set_max_stack_depth(2).is_ok()
        {
            self.view.passthrough.store(true, Ordering::Relaxed);
        } else {
            tracing::info!("the kernel offers no FUSE passthrough; serving reads from the daemon");
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let who = who(req);
        let name = name.to_os_string();
        let path = match self.view.path_of(parent) {
            Ok(p) => p.child(&name),
            Err(e) => return reply.error(e.errno()),
        };
        let heavy = self.view.may_verify(&path, false);
        self.dispatch(heavy, move |view| {
            match view.lookup_entry(parent, &path, &name, who) {
                Ok((attr, ttl)) => reply.entry_with_ttls(&ATTR_TTL, &ttl, &attr, Generation(0)),
                Err(e) => reply.error(e.errno()),
            }
        });
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        if self.view.inodes().forget(ino.0, nlookup) {
            self.view
                .kept_ordinary
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&ino.0);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let result = (|| {
            let path = self.view.path_of(ino)?;
            let st = self.view.lstat(&path)?;
            let size = fh.and_then(|fh| match self.view.handles().get(&fh.0).map(|h| &**h) {
                Some(Handle::Verified { snapshot, .. }) => Some(snapshot.len()),
                _ => None,
            });
            Ok::<_, FsError>((attr_of(&st, ino.0, size), ATTR_TTL))
        })();
        match result {
            Ok((attr, ttl)) => reply.attr(&ttl, &attr),
            Err(e) => reply.error(e.errno()),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self
            .view
            .path_of(ino)
            .and_then(|p| self.view.readlink_path(&p))
        {
            Ok(target) => reply.data(std::os::unix::ffi::OsStrExt::as_bytes(target.as_os_str())),
            Err(e) => reply.error(e.errno()),
        }
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let who = who(req);
        let path = match self.view.path_of(ino) {
            Ok(p) => p,
            Err(e) => return reply.error(e.errno()),
        };
        let heavy = self.view.may_verify(&path, false);
        self.dispatch(heavy, move |view| {
            match view.open_file(ino, &path, flags, who, &reply) {
                Ok((fh, flags, Some(backing))) => {
                    reply.opened_passthrough(FileHandle(fh), flags, &backing.id)
                }
                Ok((fh, flags, None)) => reply.opened(FileHandle(fh), flags),
                Err(e) => reply.error(e.errno()),
            }
        });
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        // Take the handle out of the table before reading, so that one slow
        // read never holds the table's lock.
        let handle = self.view.handles().get(&fh.0).cloned();
        let result = match handle.as_deref() {
            Some(Handle::Verified { snapshot, .. }) => {
                snapshot.read_at(offset, size as usize).map_err(FsError::Io)
            }
            Some(Handle::Real {
                file: Some(file), ..
            }) => read_fully_at(file, offset, size as usize),
            // Passed through: the kernel reads the backing file itself.view.
            Some(Handle::Real { file: None, .. }) => Err(FsError::Unsupported),
            Some(Handle::Dir { .. }) => {
                Err(FsError::Io(io::Error::from_raw_os_error(libc::EISDIR)))
            }
            None => Err(FsError::Stale),
        };
        match result {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e.errno()),
        }
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        // Dropping the handle drops its snapshot and backing reference; the
        // memory goes with the last one.
        let handle = self.view.handles().remove(&fh.0);
        drop(handle);
        reply.ok();
    }

    fn opendir(&self, req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let who = who(req);
        let path = match self.view.path_of(ino) {
            Ok(p) => p,
            Err(e) => return reply.error(e.errno()),
        };
        let heavy = self.view.may_verify(&path, true);
        self.dispatch(heavy, move |view| match view.list(ino, &path, who) {
            Ok(entries) => {
                let fh = view.add_handle(Handle::Dir { entries });
                reply.opened(FileHandle(fh), FopenFlags::empty());
            }
            Err(e) => reply.error(e.errno()),
        });
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let handles = self.view.handles();
        let Some(Handle::Dir { entries }) = handles.get(&fh.0).map(|h| &**h) else {
            return reply.error(FsError::Stale.errno());
        };
        // Offsets: entry i of the listing (".", "..", then the names) is
        // followed by offset i + 1, in readdir and readdirplus alike.
        for (i, item) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(
                INodeNo(item.ino_hint),
                i as u64 + 1,
                file_type(item.kind),
                &item.name,
            ) {
                break;
            }
        }
        reply.ok();
    }

    fn readdirplus(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let Ok(dir) = self.view.path_of(ino) else {
            return reply.error(FsError::Stale.errno());
        };
        let names: Vec<(usize, OsString, u64)> = {
            let handles = self.view.handles();
            let Some(Handle::Dir { entries }) = handles.get(&fh.0).map(|h| &**h) else {
                return reply.error(FsError::Stale.errno());
            };
            entries
                .iter()
                .enumerate()
                .skip(offset as usize)
                .map(|(i, e)| (i, e.name.clone(), e.ino_hint))
                .collect()
        };
        // Stat every entry relative to one handle on the directory.
        let Ok(dir_fd) = open_dir_path_beneath(self.view.gate.project_fd(), &dir.raw) else {
            return reply.error(FsError::NotFound.errno());
        };
        for (i, name, ino_hint) in names {
            let dots = name == "." || name == "..";
            // The kernel takes no lookup reference for "." and "..".
            let (path, remember) = if dots {
                (dir.clone(), false)
            } else {
                (dir.child(&name), true)
            };
            let st = if dots {
                self.view.lstat(&path)
            } else {
                lstat_in(dir_fd.as_fd(), &name)
            };
            let Ok(st) = st else {
                continue;
            };
            // The opendir just read the lockfile to decide this listing.
            let caching = self.view.gate.cached_caching(&path);
            let child = if remember {
                self.view.inodes().remember(ino.0, &name)
            } else {
                ino_hint
            };
            let attr = attr_of(&st, child, None);
            if reply.add(
                INodeNo(child),
                i as u64 + 1,
                &name,
                &ttl(caching),
                &attr,
                Generation(0),
            ) {
                if remember {
                    // Not sent: give the lookup back.
                    self.view.inodes().forget(child, 1);
                }
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.view.handles().remove(&fh.0);
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match nix::sys::statvfs::fstatvfs(self.view.gate.project_fd()) {
            Ok(s) => reply.statfs(
                s.blocks(),
                s.blocks_free(),
                s.blocks_available(),
                s.files(),
                s.files_free(),
                s.block_size() as u32,
                s.name_max() as u32,
                s.fragment_size() as u32,
            ),
            Err(e) => reply.error(Errno::from_i32(e as i32)),
        }
    }

    fn access(&self, _req: &Request, _ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        if mask.contains(AccessFlags::W_OK) {
            reply.error(FsError::ReadOnly.errno());
        } else {
            reply.ok();
        }
    }

    fn getxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: ReplyXattr,
    ) {
        reply.error(Errno::ENODATA);
    }

    fn listxattr(&self, _req: &Request, _ino: INodeNo, size: u32, reply: ReplyXattr) {
        if size == 0 {
            reply.size(0)
        } else {
            reply.data(&[])
        }
    }

    // Everything below would change the view: refused.

    fn setattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn mknod(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn mkdir(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn unlink(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn rmdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn symlink(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _link_name: &OsStr,
        _target: &std::path::Path,
        reply: ReplyEntry,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn rename(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _newparent: INodeNo,
        _newname: &OsStr,
        _flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn link(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _newparent: INodeNo,
        _newname: &OsStr,
        reply: ReplyEntry,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        _data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn create(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _name: &OsStr,
        _mode: u32,
        _umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn setxattr(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _name: &OsStr,
        _value: &[u8],
        _flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn removexattr(&self, _req: &Request, _ino: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(FsError::ReadOnly.errno());
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        _length: u64,
        _mode: i32,
        reply: ReplyEmpty,
    ) {
        reply.error(FsError::ReadOnly.errno());
    }
}
