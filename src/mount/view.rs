//! The view: everything the mount serves, without a kernel in the loop. It
//! owns the inode table, the open handles and the passthrough backings
//! ([`handles`]) and the kernel-cache bookkeeping ([`kernel_cache`]), asks
//! the gate about every path, and returns values (never replies), so that
//! tests drive it directly; [`super::fuse`] only translates.
//!
//! * Every lookup and listing entry is decided by the gate
//!   ([`Gate::ask`]); how long the kernel may keep the answer is the gate's
//!   too ([`Keep`]).
//! * An open of an ordinary file is served by the real file; an open inside a
//!   sealed root by the gate's verified snapshot. Both go through FUSE
//!   passthrough when the kernel allows it, else through [`View::read`]
//!   (snapshots with direct I/O so that no page cache is shared between
//!   versions).
//! * A file whose backing changed while handles to the old one are open gets
//!   a new inode: the open answers [`FsError::Stale`], the kernel looks the
//!   path up again, and the new lookup gets a fresh inode number.
//! * A read-only view refuses every change with [`FsError::ReadOnly`]; a
//!   writable one makes changes to ordinary paths on the real project, as
//!   the caller, and refuses the rest ([`write`]).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuser::{FileAttr, FileType, INodeNo};
use nix::fcntl::{AtFlags, readlinkat};
use nix::sys::stat::{FileStat, fstatat};

use super::backing::{Backing, BackingCache, BackingOf, Register};
use super::error::FsError;
use super::inodes::{Inodes, ROOT};
use seal_core::fs::{
    EntryKind, fstat_fd, list_dir, open_dir_beneath, open_dir_path_beneath, open_file_beneath,
    read_chunk_at,
};
use seal_gate::{Found, Gate, Hashing, Keep, Kernel, Op, Serve, ViewPath, Who};

mod handles;
mod kernel_cache;
mod kernel_dirs;
mod kernel_opens;
mod write;
use handles::{Handle, Handles};
pub use kernel_cache::Invalidate;
use kernel_cache::KernelCache;
pub use write::{Mknod, SetAttr, SetTime};

/// The set-user-ID and set-group-ID bits of a mode.
const SET_ID: u32 = libc::S_ISUID | libc::S_ISGID;

/// Whether the attributes of `attr` may change with no notice the view
/// could pass on: a file with several names may be a separate inode in the
/// view under some of them (a name in a sealed root, an artifact or a
/// protected path never shares its file's inode: see `Gate::shares_inodes`),
/// so a change through one name would leave the others' attributes stale;
/// and a write drops a set-ID bit on the disk (as the writer, see
/// `BackingOf::RealFile`) without the kernel's knowing, and a `stat` right
/// after must show it gone, as natively.
fn volatile(attr: &FileAttr) -> bool {
    let set_id = attr.kind == fuser::FileType::RegularFile && u32::from(attr.perm) & SET_ID != 0;
    (attr.kind != fuser::FileType::Directory && attr.nlink > 1) || set_id
}

/// A listing, and whether every entry in it (shown or hidden) is ordinary.
struct Listing {
    items: Vec<DirItem>,
    all_ordinary: bool,
}

/// One entry of a listing.
#[derive(Debug, Clone)]
pub struct DirItem {
    pub name: OsString,
    pub kind: EntryKind,
    /// The inode number the kernel knows the entry by, or the disk's.
    pub ino: u64,
}

/// A looked-up entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub attr: FileAttr,
    /// How long the kernel may keep the entry (name to inode).
    pub ttl: Duration,
    /// How long it may keep the attributes.
    pub attr_ttl: Duration,
}

impl Entry {
    /// An entry with the lifetimes the gate gave it.
    fn kept(attr: FileAttr, keep: Keep) -> Entry {
        Entry {
            attr,
            ttl: keep.entry,
            attr_ttl: keep.attrs,
        }
    }
}

/// An opened directory, and whether the kernel may keep its listing
/// (`cache`) and keep what it kept before (`keep`).
pub struct OpenedDir {
    pub fh: u64,
    pub cache: bool,
    pub keep: bool,
}

/// How an opened file is read.
pub enum ReadMode<Id> {
    /// The kernel reads the backing file itself.
    Passthrough(Arc<Backing<Id>>),
    /// Through [`View::read`], bypassing the page cache (snapshots: no page
    /// cache is ever shared between two versions of a file).
    Direct,
    /// Through [`View::read`], cached by the kernel.
    Cached,
    /// Not opened here: the kernel is told (`ENOSYS`) to open files itself
    /// from now on and to read them by inode ([`View::read_unopened`]).
    InKernel,
}

/// An opened file.
pub struct Opened<Id> {
    pub fh: u64,
    pub mode: ReadMode<Id>,
}

/// One entry of a `readdirplus` reply.
pub struct PlusEntry<'a> {
    pub ino: u64,
    /// The offset of the entry after this one.
    pub next_offset: u64,
    pub name: &'a OsStr,
    pub kind: FileType,
    /// Its attributes, or `None` for a name the kernel already knows,
    /// which the reply does not link again (see [`View::readdirplus`]).
    pub attr: Option<FileAttr>,
    pub ttl: Duration,
}

/// The state of the view, shared by the FUSE threads and the workers: the
/// gate it asks, the inode table, the open handles and their backings
/// ([`handles`]), the kernel-cache bookkeeping ([`kernel_cache`]), and what
/// the kernel keeps when it opens files and directories itself
/// ([`kernel_opens`], [`kernel_dirs`]).
///
/// Lock order: a thread holding the inode table may take the pins and the
/// served sizes, never the other way round; every other lock is taken
/// alone, except where the component that holds it says otherwise, and no
/// lock is held while the kernel is told to forget an entry.
pub struct View<Id> {
    gate: Arc<Gate>,
    inodes: Mutex<Inodes>,
    handles: Handles<Id>,
    kernel: KernelCache,
    /// Whether ordinary paths may be changed (`seal mount --writable`,
    /// `seal run` without `--read-only`).
    writable: bool,
    /// Whether the kernel may open files itself (`--kernel-opens`; see
    /// [`View::opens_in_kernel`]).
    kernel_opens: bool,
    pins: kernel_opens::Pins,
    listings: kernel_dirs::KernelListings,
}

impl<Id> View<Id> {
    pub fn new(gate: Arc<Gate>, writable: bool) -> View<Id> {
        View {
            gate,
            inodes: Mutex::new(Inodes::default()),
            handles: Handles::default(),
            kernel: KernelCache::default(),
            writable,
            kernel_opens: false,
            pins: kernel_opens::Pins::default(),
            listings: kernel_dirs::KernelListings::default(),
        }
    }

    /// Lets the kernel open files itself where the view allows it
    /// (`--kernel-opens`).
    pub fn letting_the_kernel_open(mut self, on: bool) -> View<Id> {
        self.kernel_opens = on;
        self
    }

    /// `lstat` of the inode `ino` at `path`, and whether the directory
    /// holding it is fed (see [`View::fed`]).
    fn lstat_fed(&self, ino: u64, path: &ViewPath) -> Result<(FileStat, bool), FsError> {
        let project = self.gate.project_fd();
        match (path.parent(), path.name()) {
            (Some(parent), Some(name)) => {
                let dir =
                    open_dir_path_beneath(project, &parent.raw).map_err(FsError::from_walk)?;
                let parent_ino = self.inodes().parent(ino);
                let fed = parent_ino.is_some_and(|p| self.kernel.fed(p, dir.as_fd()));
                Ok((lstat_in(dir.as_fd(), name)?, fed))
            }
            // The root's own attributes are not kept long: they are what
            // tells a stale mount (its daemon gone) from a live one.
            _ => Ok((fstat_fd(project)?, false)),
        }
    }

    /// What the view knows of how the kernel would keep an answer about a
    /// name whose directory the directory feed watches (`fed`) or not, with
    /// attributes `attr`.
    fn kernel(&self, fed: bool, attr: &FileAttr) -> Kernel {
        Kernel {
            told: self.kernel.told(),
            dir_watched: fed,
            volatile_attrs: volatile(attr),
        }
    }

    /// The entry of `path` with attributes `attr`, kept as the gate's
    /// lifetime column says for an answer already given (`fed`: its
    /// directory is watched by the directory feed).
    pub(super) fn kept(&self, path: &ViewPath, attr: FileAttr, fed: bool) -> Entry {
        let mut kernel = self.kernel(fed, &attr);
        if let Some(key) = self.root_key(path) {
            kernel.told &= self.registered(&key);
        }
        let keep = self.gate.keep(path, Found::Plain, kernel);
        Entry::kept(attr, keep)
    }

    /// Whether the listener knows which entry to make the kernel forget at
    /// the change of bundle `key`: one its lookup or a listing registered
    /// (a notice unregisters it). What the kernel keeps of a bundle (its
    /// root's answer, its directories' listings) is kept only while it does.
    fn registered(&self, key: &seal_core::paths::BundleKey) -> bool {
        self.kernel.watched_roots().contains_key(key)
    }

    /// Whether the kernel may keep the listing of `path`, a directory of a
    /// bundle: while the change feed proves the bundle's verification
    /// current and the bundle's root is registered for the listener's
    /// notices, whose notice for the bundle drops the listing of every
    /// directory below the root as it makes the kernel forget their entries.
    pub(super) fn bundle_listing_kept(&self, path: &ViewPath) -> bool {
        let seal_gate::Place::Sealed { key, .. } = self.gate.cached_place(path) else {
            return false;
        };
        let kernel = Kernel {
            told: self.kernel.told() && self.registered(&key),
            dir_watched: false,
            volatile_attrs: false,
        };
        self.gate.keep(path, Found::Plain, kernel).until_told()
    }

    /// The key of the sealed root `path` names, when it names one.
    fn root_key(&self, path: &ViewPath) -> Option<seal_core::paths::BundleKey> {
        match self.gate.cached_place(path) {
            seal_gate::Place::Sealed { key, root_len } if root_len == path.depth() => Some(key),
            _ => None,
        }
    }

    /// The inode `name` in `parent` is known by (counting the lookup): the
    /// one it has, unless that inode serves verified bytes of another size
    /// than the disk's file now has (`st`), or is shared by names of
    /// another file: then the name gets a new inode and the old one keeps
    /// describing the bytes its handles serve. A new name of a file whose
    /// inode lives under another name may share it ([`View::second_name`]).
    fn entry_ino(&self, parent: u64, name: &OsStr, st: &FileStat) -> u64 {
        let size = st.st_size as u64;
        {
            let mut inodes = self.inodes();
            if let Some(ino) = inodes.peek(parent, name) {
                if self
                    .handles
                    .served_size(ino)
                    .is_some_and(|served| served != size)
                {
                    inodes.retire(ino);
                } else if ino != st.st_ino && inodes.is_shared(ino) {
                    // Replaced on the disk: the name leaves the shared inode.
                    inodes.unname(parent, name);
                } else {
                    return inodes.remember(parent, name, st.st_ino);
                }
            }
        }
        if let Some(ino) = self.second_name(parent, name, st) {
            return ino;
        }
        self.inodes().remember(parent, name, st.st_ino)
    }

    /// Counts `name` in `parent` (new to the table, its file `st`) as
    /// another name of the file's live inode, when the file is hard-linked,
    /// the inode still has a name that names the same file, and every name
    /// involved is ordinary and changeable (a sealed, artifact or protected
    /// name is always an inode of its own: the gate decides each request
    /// by the name it came through). Tools that recognise hard links by
    /// their inode numbers (`tar`, `du`, `cp -a`) then see them.
    fn second_name(&self, parent: u64, name: &OsStr, st: &FileStat) -> Option<u64> {
        let kind = seal_core::fs::EntryKind::from_mode(st.st_mode);
        if st.st_nlink < 2 || kind == seal_core::fs::EntryKind::Dir {
            return None;
        }
        let ino = st.st_ino;
        let (first, others) = {
            let inodes = self.inodes();
            if !inodes.is_live(ino) {
                return None;
            }
            (inodes.path(ino)?, inodes.other_names(ino))
        };
        let path = self.path_of(parent).ok()?.child(name);
        let names = [&path, &first]
            .into_iter()
            .chain(others.iter().map(|(_, _, p)| p));
        if !names.clone().all(|p| self.gate.shares_inodes(p)) {
            return None;
        }
        let same = self
            .lstat(&first)
            .is_ok_and(|now| now.st_ino == ino && now.st_dev == st.st_dev);
        (same && self.inodes().share(parent, name, ino)).then_some(ino)
    }

    pub fn is_writable(&self) -> bool {
        self.writable
    }

    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    pub fn backings(&self) -> &BackingCache<Id> {
        &self.handles.backings
    }

    fn inodes(&self) -> MutexGuard<'_, Inodes> {
        self.inodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn handle(&self, fh: u64) -> Result<Arc<Handle<Id>>, FsError> {
        self.handles.get(fh)
    }

    /// The view path of inode `ino`.
    pub fn path_of(&self, ino: u64) -> Result<ViewPath, FsError> {
        let (path, others) = {
            let inodes = self.inodes();
            let path = inodes.path(ino).ok_or(FsError::Stale)?;
            if !inodes.is_shared(ino) {
                return Ok(path);
            }
            (path, inodes.other_names(ino))
        };
        self.path_of_shared(ino, path, others)
    }

    /// The path of the shared inode `ino` (a hard-linked ordinary file, see
    /// [`View::second_name`]): the first of its names that still names its
    /// file. Should one of its names have stopped being ordinary (a new
    /// `seal.json` seals it), the inode stands for none of them any more
    /// ([`FsError::Stale`]; the kernel looks the names up again and each
    /// gets an inode of its own): a request through that name must be
    /// decided on that name.
    fn path_of_shared(
        &self,
        ino: u64,
        path: ViewPath,
        others: Vec<(u64, OsString, ViewPath)>,
    ) -> Result<ViewPath, FsError> {
        let all_ordinary = std::iter::once(&path)
            .chain(others.iter().map(|(_, _, p)| p))
            .all(|p| self.gate.shares_inodes(p));
        if !all_ordinary {
            tracing::debug!("inode {ino}: a name of it is no longer ordinary");
            self.inodes().retire(ino);
            return Err(FsError::Stale);
        }
        // A shared inode is numbered as the disk numbers its file.
        let names_it = |p: &ViewPath| self.lstat(p).is_ok_and(|st| st.st_ino == ino);
        if names_it(&path) {
            return Ok(path);
        }
        for (parent, name, other) in others {
            if names_it(&other) {
                self.inodes().make_path(ino, parent, &name);
                return Ok(other);
            }
        }
        Ok(path)
    }

    /// Whether a request about inode `ino` (`name` inside it for a lookup)
    /// may hash: verify a bundle, or read a bundle file's bytes again.
    /// Scheduling only ([`crate::mount::dispatch`]).
    pub fn may_hash(&self, ino: u64, name: Option<&OsStr>, request: Hashing) -> bool {
        match self.path_of(ino) {
            Ok(path) => {
                let path = match name {
                    Some(n) => path.child(n),
                    None => path,
                };
                let request = match request {
                    // Where the kernel opens files itself, a lookup pins a
                    // bundle file to its bytes.
                    Hashing::Lookup if self.opens_in_kernel() => Hashing::Bytes,
                    // A read of a pinned inode whose bytes the pin holds
                    // hashes nothing, whatever the gate keeps.
                    Hashing::Bytes if self.opens_in_kernel() && self.pin_holds_bytes(ino) => {
                        return false;
                    }
                    request => request,
                };
                self.gate.may_hash(&path, request)
            }
            Err(_) => false,
        }
    }

    /// Lets go of kept backings of verified bytes no open took lately: the
    /// sweeper calls this every second, so that a kept backing holds a
    /// snapshot's memory no longer than the gate keeps a bundle's bytes.
    pub fn sweep_backings(&self) {
        self.backings()
            .let_go_of_verified(seal_gate::cache::KEEP_BYTES_FOR);
    }

    /// `lstat` of a view path, never crossing a symlink.
    fn lstat(&self, path: &ViewPath) -> Result<FileStat, FsError> {
        let project = self.gate.project_fd();
        match (path.parent(), path.name()) {
            (Some(parent), Some(name)) => {
                let dir =
                    open_dir_path_beneath(project, &parent.raw).map_err(FsError::from_walk)?;
                lstat_in(dir.as_fd(), name)
            }
            _ => Ok(fstat_fd(project)?),
        }
    }

    fn readlink_path(&self, path: &ViewPath) -> Result<OsString, FsError> {
        let (Some(parent), Some(name)) = (path.parent(), path.name()) else {
            return Err(FsError::NotFound);
        };
        let dir = open_dir_path_beneath(self.gate.project_fd(), &parent.raw)
            .map_err(FsError::from_walk)?;
        Ok(readlinkat(dir.as_fd(), name)?)
    }

    /// Looks up `name` in `parent` through the gate; counts the lookup.
    pub fn lookup(&self, parent: u64, name: &OsStr, who: Who) -> Result<Entry, FsError> {
        let parent_path = self.path_of(parent)?;
        let path = parent_path.child(name);
        let dir = open_dir_path_beneath(self.gate.project_fd(), &parent_path.raw)
            .map_err(FsError::from_walk)?;
        let fed = self.kernel.fed(parent, dir.as_fd());
        let st = match lstat_in(dir.as_fd(), name) {
            Err(FsError::NotFound) => return Err(self.absent(&path, fed)),
            st => st?,
        };
        let kind = EntryKind::from_mode(st.st_mode);
        let target = if kind == EntryKind::Symlink {
            readlinkat(dir.as_fd(), name).ok()
        } else {
            None
        };
        // A bundle root is registered for the listener's notices before it
        // is decided: a change made while this lookup decides must make the
        // kernel forget the entry it is about to learn (see
        // `seal_gate::WATCHED_TTL`).
        // Its inode is not known yet (0: forget the entry only).
        let root_key = self.root_key(&path);
        if let Some(key) = &root_key {
            self.kernel
                .watched_roots()
                .entry(key.clone())
                .or_insert_with(|| (parent, name.to_os_string(), 0));
        }
        let op = Op::Lookup {
            on_disk: Some(kind),
            link_target: target.as_deref(),
            kernel: self.kernel(fed, &attr_of(&st, st.st_ino, None)),
        };
        let verdict = self.gate.ask(&path, op, who);
        if !verdict.yes {
            return Err(FsError::NotFound);
        }
        // Where the kernel opens files itself, a bundle file is decided
        // here and its inode bound to the bytes it shows.
        let in_kernel = self.opens_in_kernel();
        let pin = match in_kernel && kind == EntryKind::File && !verdict.keep.settled {
            true => self.pin_for(parent, name, &path, who)?,
            false => None,
        };
        if in_kernel {
            self.retire_if_repinned(parent, name, pin.as_ref().map(|p| &p.digest));
        }
        let size = pin.as_ref().map(|p| p.size);
        let ino = self.entry_ino(parent, name, &st);
        if let Some(mut pin) = pin {
            pin.stat = Some(st);
            self.set_pin(ino, pin);
        }
        if verdict.keep.until_told()
            && let Some(key) = root_key
        {
            self.kernel
                .watched_roots()
                .insert(key, (parent, name.to_os_string(), ino));
        }
        // A pinned file's entry is kept like any path of a bundle the feed
        // watches: its opens then reach no one, and serve the pinned pages,
        // until the listener makes the kernel forget the bundle at its first
        // change (an entry decided without that proof is looked up again at
        // every open). A pinned inode's attributes may be kept as any
        // others: its size is the pinned bytes', and it is bound to them.
        Ok(Entry::kept(attr_of(&st, ino, size), verdict.keep))
    }

    /// Why a lookup of `path` found nothing on the disk (`fed`: its
    /// directory is watched by the directory feed): [`FsError::Absent`]
    /// for as long as the gate's lifetime column lets the kernel keep the
    /// negative entry (its creation on the disk is an event that makes the
    /// kernel forget it), else plainly not found.
    fn absent(&self, path: &ViewPath, fed: bool) -> FsError {
        let kernel = Kernel {
            told: self.kernel.told(),
            dir_watched: fed,
            volatile_attrs: false,
        };
        match self.gate.keep(path, Found::Missing, kernel).entry {
            ttl if ttl.is_zero() => FsError::NotFound,
            ttl => FsError::Absent(ttl),
        }
    }

    /// The kernel dropped `n` lookups of `ino`.
    pub fn forget(&self, ino: u64, n: u64) {
        let mut inodes = self.inodes();
        if inodes.forget(ino, n) {
            // Under the table's lock: once it is released, a lookup may
            // give the number to a new inode and pin it.
            self.pins.table().remove(&ino);
            drop(inodes);
            self.backings().forget(ino);
            self.kernel.forget_dir(ino);
            self.listings.by_dir().remove(&ino);
        }
    }

    /// Attributes of `ino`; through an open handle of verified bytes, the
    /// size of those bytes.
    pub fn getattr(&self, ino: u64, fh: Option<u64>) -> Result<Entry, FsError> {
        let handle = fh.and_then(|fh| self.handles.get(fh).ok());
        // The attributes of an open file are its own, wherever it is: no
        // feed keeps them true.
        let (st, size, path, fed) = match handle.as_deref() {
            Some(Handle::Verified { snapshot, .. }) => (
                self.lstat(&self.path_of(ino)?)?,
                Some(snapshot.len()),
                ViewPath::root(),
                false,
            ),
            // The open file itself, even when its name is gone.
            Some(Handle::Real { file: Some(f), .. }) => {
                (fstat_fd(f.as_fd())?, None, ViewPath::root(), false)
            }
            _ => {
                let path = self.path_of(ino)?;
                // An inode whose name went (removed or replaced through the
                // view) describes its open file while one is open.
                let unnamed = match self.holds_its_name(ino, &path) {
                    true => None,
                    false => self.unnamed_file(ino, &path, fh).ok().flatten(),
                };
                let (st, fed) = match unnamed {
                    Some(f) => (fstat_fd(f.as_fd())?, false),
                    // A pinned inode describes its bytes even once the
                    // disk's file is gone (the kernel refreshes attributes
                    // before reading a file it opened itself).
                    None => match (self.lstat_fed(ino, &path), self.pinned_stat(ino)) {
                        (Err(_), Some(st)) => (st, false),
                        (found, _) => found?,
                    },
                };
                let size = self.handles.served_size(ino);
                (st, size.or_else(|| self.pinned_size(ino)), path, fed)
            }
        };
        Ok(self.kept(&path, attr_of(&st, ino, size), fed))
    }

    /// The target of the symlink `ino`, as the gate lets it be followed
    /// (a link at a surface path is judged again on the bytes served).
    pub fn readlink(&self, ino: u64) -> Result<OsString, FsError> {
        let path = self.path_of(ino)?;
        let target = self.readlink_path(&path)?;
        self.gate
            .link_target(&path, target)
            .ok_or(FsError::NotFound)
    }

    /// Opens the regular file `ino` with the open(2) `flags`, as the gate
    /// decides: for reading anywhere it may be shown, for writing only an
    /// ordinary file of a writable view.
    pub fn open(
        &self,
        ino: u64,
        flags: i32,
        who: Who,
        register: &dyn Register<Id = Id>,
    ) -> Result<Opened<Id>, FsError> {
        let path = self.path_of(ino)?;
        if flags & libc::O_ACCMODE == libc::O_RDONLY && self.opens_in_kernel() {
            self.admit(ino, who)?;
            return Ok(Opened {
                fh: 0,
                mode: ReadMode::InKernel,
            });
        }
        if flags & libc::O_ACCMODE != libc::O_RDONLY {
            self.allow(&path, seal_gate::Change::Modify, "open", who)?;
            return self.open_for_writing(ino, &path, flags, who, register);
        }
        match self.gate.ask(&path, Op::Open { recorded: None }, who).serve {
            Serve::Nothing => Err(FsError::NotFound),
            Serve::Disk => self.open_ordinary(ino, &path, register),
            Serve::Bytes(snapshot) => {
                // Every snapshot carries the digest its bytes were hashed to;
                // one without could never share a backing safely.
                let Some(digest) = snapshot.digest() else {
                    return Err(FsError::NotFound);
                };
                // A backing kept from an earlier open of the same bytes is
                // taken again (no registration); one of other bytes that no
                // handle holds makes way.
                let of = BackingOf::Verified(digest);
                self.backings().release_other_verified(ino, of);
                let backing =
                    self.backing_for(ino, of, false, snapshot.file().as_fd(), register)?;
                if let Some(b) = &backing {
                    self.backings().keep(ino, b.clone());
                }
                let mode = match &backing {
                    Some(b) => ReadMode::Passthrough(b.clone()),
                    None => ReadMode::Direct,
                };
                let fh = self.add_handle(Handle::Verified {
                    snapshot,
                    _backing: backing,
                    ino,
                });
                Ok(Opened { fh, mode })
            }
        }
    }

    fn open_ordinary(
        &self,
        ino: u64,
        path: &ViewPath,
        register: &dyn Register<Id = Id>,
    ) -> Result<Opened<Id>, FsError> {
        // The handle keeps the file it reads (`fstat` of the handle describes
        // it even once its name is gone); a backing kept from an earlier open
        // of the same file is reused. Read-only: the kernel opens the backing
        // anew with each open's own mode, and a writable descriptor held here
        // would keep the host from executing the file.
        let fd = open_file_beneath(self.gate.project_fd(), &path.raw.to_os_string())
            .map_err(FsError::from_walk)?;
        let st = regular(&fd)?;
        self.open_real(ino, File::from(fd), &st, None, register)
    }

    /// Opens an ordinary file for writing (the gate allowed it).
    fn open_for_writing(
        &self,
        ino: u64,
        path: &ViewPath,
        flags: i32,
        who: Who,
        register: &dyn Register<Id = Id>,
    ) -> Result<Opened<Id>, FsError> {
        let fd = open_file_beneath(self.gate.project_fd(), &path.raw.to_os_string())
            .map_err(FsError::from_walk)?;
        let st = regular(&fd)?;
        let append = flags & libc::O_APPEND;
        let file = reopened(fd.as_fd(), libc::O_RDWR | append)
            .or_else(|_| reopened(fd.as_fd(), (flags & libc::O_ACCMODE) | append))?;
        self.open_real(ino, file, &st, Some(who), register)
    }

    /// The passthrough backing of `ino` for content `of` (`writes`: for an
    /// open that may write); a live backing that cannot serve it retires the
    /// inode ([`FsError::Stale`]).
    fn backing_for(
        &self,
        ino: u64,
        of: BackingOf,
        writes: bool,
        fd: BorrowedFd<'_>,
        register: &dyn Register<Id = Id>,
    ) -> Result<Option<Arc<Backing<Id>>>, FsError> {
        self.backings()
            .backing_for(ino, of, writes, fd, register)
            .map_err(|_conflict| {
                self.inodes().retire(ino);
                FsError::Stale
            })
    }

    fn add_handle(&self, handle: Handle<Id>) -> u64 {
        self.handles.add(handle)
    }

    /// Reads up to `size` bytes at `offset` of an open file that is not
    /// passed through.
    pub fn read(&self, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>, FsError> {
        // Take the handle out of the table before reading, so that one slow
        // read never holds the table's lock.
        match &*self.handle(fh)? {
            Handle::Verified { snapshot, .. } => Ok(snapshot.read_at(offset, size as usize)?),
            Handle::Real {
                file: Some(file), ..
            } => Ok(read_chunk_at(file, offset, size as usize)?),
            // Passed through: the kernel reads the backing file itself.
            Handle::Real { file: None, .. } => Err(FsError::Unsupported),
            Handle::Dir { .. } => Err(FsError::IsADirectory),
        }
    }

    /// Closes a file or directory handle. Dropping it drops its snapshot and
    /// backing reference; the memory goes with the last one.
    pub fn release(&self, fh: u64) {
        self.handles.release(fh);
    }

    /// Opens directory `ino`: lists it and asks the gate about every entry
    /// on one read of the lockfile.
    pub fn opendir(&self, ino: u64, who: Who) -> Result<OpenedDir, FsError> {
        let (path, dir, fed) = self.dir_to_list(ino, who)?;
        // The kernel keeps the listing it has only while it holds all its
        // entries (otherwise a walk would look up each entry it lists);
        // then it reads none, and none is taken unless it does.
        let keep = fed
            && self
                .kernel
                .listed_until(ino)
                .is_some_and(|until| Instant::now() < until);
        let listing = match keep {
            true => None,
            false => Some(self.list(ino, &path, dir.as_fd(), who)?),
        };
        // It may keep a listing only when nothing in it depends on a
        // verification (the feed's notices keep ordinary names true).
        let cache = keep || (fed && listing.as_ref().is_some_and(|l| l.all_ordinary));
        let fh = self.add_handle(Handle::Dir {
            ino,
            who,
            listing: Mutex::new(listing.map(|l| l.items)),
            cached: cache,
        });
        Ok(OpenedDir { fh, cache, keep })
    }

    /// Directory `ino` about to be listed (by an opendir, or a read the
    /// kernel makes without one): its path, a descriptor on it, and whether
    /// the directory feed watches it as an ordinary directory (its listing
    /// may then be kept while all its entries are ordinary).
    fn dir_to_list(
        &self,
        ino: u64,
        who: Who,
    ) -> Result<(ViewPath, std::os::fd::OwnedFd, bool), FsError> {
        let path = self.path_of(ino)?;
        // The kernel may reach a directory through an entry it remembers
        // (a watched bundle's root): listing it is decided afresh, like a
        // file's open.
        let gated = self.gate.cached_place(&path).is_gated();
        let op = Op::Lookup {
            on_disk: Some(EntryKind::Dir),
            link_target: None,
            kernel: Kernel::default(),
        };
        if gated && !self.gate.ask(&path, op, who).yes {
            return Err(FsError::NotFound);
        }
        let dir = open_dir_beneath(self.gate.project_fd(), &path.raw).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOTDIR) {
                FsError::NotADirectory
            } else {
                FsError::from_walk(e)
            }
        })?;
        // Watched before it is listed, so that no later change goes unseen.
        let fed = self.kernel.fed(ino, dir.as_fd()) && !gated;
        Ok((path, dir, fed))
    }

    /// The listing of directory `ino` at `path`, open as `dir`, as the gate
    /// shows it (on one read of the lockfile).
    fn list(
        &self,
        ino: u64,
        path: &ViewPath,
        dir: BorrowedFd<'_>,
        who: Who,
    ) -> Result<Listing, FsError> {
        let parent_ino = self.inodes().parent(ino).unwrap_or(ROOT);
        let mut items = vec![
            DirItem {
                name: OsString::from("."),
                kind: EntryKind::Dir,
                ino,
            },
            DirItem {
                name: OsString::from(".."),
                kind: EntryKind::Dir,
                ino: parent_ino,
            },
        ];
        let mut all_ordinary = true;
        let round = self.gate.round();
        for entry in list_dir(dir)? {
            let child = path.child(&entry.name);
            let target = if entry.kind == EntryKind::Symlink {
                readlinkat(dir, entry.name.as_os_str()).ok()
            } else {
                None
            };
            let op = Op::Lookup {
                on_disk: Some(entry.kind),
                link_target: target.as_deref(),
                kernel: Kernel::default(),
            };
            let verdict = round.ask(&child, op, who);
            all_ordinary &= verdict.keep.settled;
            if verdict.yes {
                let ino = self.inodes().peek(ino, &entry.name).unwrap_or(entry.ino);
                items.push(DirItem {
                    name: entry.name,
                    kind: entry.kind,
                    ino,
                });
            }
        }
        Ok(Listing {
            items,
            all_ordinary,
        })
    }

    /// The listing of an open directory, taken now if opendir took none
    /// (the kernel was to read its own, but dropped it since).
    fn listing_of(&self, handle: &Handle<Id>) -> Result<Vec<DirItem>, FsError> {
        let Handle::Dir {
            ino,
            who,
            listing,
            cached,
        } = handle
        else {
            return Err(FsError::NotADirectory);
        };
        let mut listing = listing.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(items) = listing.as_ref() {
            return Ok(items.clone());
        }
        let path = self.path_of(*ino)?;
        let dir =
            open_dir_beneath(self.gate.project_fd(), &path.raw).map_err(FsError::from_walk)?;
        let late = self.list(*ino, &path, dir.as_fd(), *who)?;
        if *cached && !late.all_ordinary {
            // The kernel will keep what it reads now: tell it to drop it.
            if let Some(feed) = self.kernel.dir_feed() {
                feed.tell(seal_gate::feed::Notice::Entry {
                    tag: *ino,
                    name: None,
                    change: seal_gate::feed::EntryChange::Names(seal_gate::feed::Naming::Other),
                });
            }
        }
        Ok(listing.insert(late.items).clone())
    }

    /// The entries of directory `ino` from `offset` on: of its open handle
    /// `fh` (entry `i` of the listing, `.` and `..` first, is followed by
    /// offset `i + 1`), or, with no handle (0: the kernel opened it
    /// itself), of a listing taken for the kernel (see `kernel_dirs`).
    pub fn readdir(
        &self,
        ino: u64,
        fh: u64,
        offset: u64,
        who: Who,
    ) -> Result<Vec<(u64, DirItem)>, FsError> {
        Ok(self.entries_from(ino, fh, offset, who)?.0)
    }

    /// [`View::readdir`], and whether the kernel keeps the listing.
    fn entries_from(
        &self,
        ino: u64,
        fh: u64,
        offset: u64,
        who: Who,
    ) -> Result<(Vec<(u64, DirItem)>, bool), FsError> {
        if fh == 0 {
            return self.kernel_listing(ino, offset, who);
        }
        let handle = self.handle(fh)?;
        let entries = self
            .listing_of(&handle)?
            .into_iter()
            .enumerate()
            .skip(offset as usize)
            .map(|(i, item)| (i as u64 + 1, item))
            .collect();
        Ok((entries, matches!(*handle, Handle::Dir { cached: true, .. })))
    }

    /// `readdirplus`: each entry from `offset` with its attributes, handed
    /// to `add` until it returns true (the reply is full). Every entry sent
    /// counts as a lookup; the one that did not fit is given back.
    pub fn readdirplus(
        &self,
        ino: u64,
        fh: u64,
        offset: u64,
        who: Who,
        add: &mut dyn FnMut(&PlusEntry<'_>) -> bool,
    ) -> Result<(), FsError> {
        let dir = self.path_of(ino)?;
        let (entries, kept) = self.entries_from(ino, fh, offset, who)?;
        // Stat every entry relative to one handle on the directory.
        let dir_fd =
            open_dir_path_beneath(self.gate.project_fd(), &dir.raw).map_err(FsError::from_walk)?;
        let fed = self.kernel.fed(ino, dir_fd.as_fd());
        if offset == 0 && fed && kept {
            // The kernel keeps this listing and every entry in it for
            // FED_TTL from about now (a second less, for the replies that
            // follow this one).
            let until = Instant::now() + seal_gate::FED_TTL - Duration::from_secs(1);
            self.kernel.listed(ino, until);
        }
        for (next_offset, item) in entries {
            // The kernel takes no lookup reference for "." and "..".
            let dots = item.name == "." || item.name == "..";
            let path = if dots {
                dir.clone()
            } else {
                dir.child(&item.name)
            };
            let root = self.root_key(&path).filter(|_| !dots);
            // A name the kernel already holds an inode for, in a directory
            // the feed watches (so the kernel is told when the name
            // changes), is listed without its attributes: a `git status`
            // lists directories whose every entry it has just looked up,
            // and each entry's `lstat` and bookkeeping cost as much as
            // its lookup did. The kernel keeps its entry as a `readdir`
            // would leave it. (A bundle root is registered below; a pinned
            // file is decided at its lookup.)
            let known = (!dots && fed && root.is_none() && !self.opens_in_kernel())
                .then(|| self.inodes().peek(ino, &item.name))
                .flatten();
            if let Some(known) = known {
                let full = add(&PlusEntry {
                    ino: known,
                    next_offset,
                    name: &item.name,
                    kind: file_type(item.kind),
                    attr: None,
                    ttl: Duration::ZERO,
                });
                if full {
                    break;
                }
                continue;
            }
            let st = if dots {
                self.lstat(&dir)
            } else {
                lstat_in(dir_fd.as_fd(), &item.name)
            };
            let Ok(st) = st else { continue };
            let child = if dots {
                item.ino
            } else {
                self.entry_ino(ino, &item.name, &st)
            };
            // A bundle root is registered for the listener's notices before
            // its entry is decided, as its lookup registers it: a change made
            // meanwhile makes the kernel forget the entry this reply gives it
            // (the kernel applies that notice once this listing is done with
            // the directory's lock).
            if let Some(key) = root {
                self.kernel
                    .watched_roots()
                    .insert(key, (ino, item.name.clone(), child));
            }
            // Decided when the listing was taken, which just read the
            // lockfile.
            let attr = attr_of(&st, child, self.pinned_size(child));
            let keep = self
                .gate
                .keep(&path, Found::Plain, self.kernel(fed && !dots, &attr));
            let mut entry = Entry::kept(attr, keep);
            // Where the kernel opens files itself, a bundle file is decided
            // (pinned to its verified bytes) at its lookup, which a kept
            // listing entry would spare: its reads would find no pin. A
            // directory has no bytes to pin; a bundle root is registered
            // above, as in every mode.
            if self.opens_in_kernel() && !keep.settled && entry.attr.kind != FileType::Directory {
                entry.ttl = Duration::ZERO;
            }
            let full = add(&PlusEntry {
                ino: child,
                next_offset,
                name: &item.name,
                kind: entry.attr.kind,
                // One timeout serves both: the shorter.
                ttl: entry.ttl.min(entry.attr_ttl),
                attr: Some(entry.attr),
            });
            if full {
                if !dots {
                    // Not sent: give the lookup back.
                    self.inodes().forget(child, 1);
                }
                break;
            }
        }
        Ok(())
    }

    /// `access(2)`: the kernel checks permissions (`default_permissions`);
    /// the view refuses writing where it would refuse a change.
    pub fn access(&self, ino: u64, write: bool, who: Who) -> Result<(), FsError> {
        if write {
            self.access_write(ino, who)
        } else {
            Ok(())
        }
    }
}

/// The status of an opened file, which must be a regular file.
fn regular(fd: &std::os::fd::OwnedFd) -> Result<FileStat, FsError> {
    let st = fstat_fd(fd.as_fd())?;
    match EntryKind::from_mode(st.st_mode) {
        EntryKind::File => Ok(st),
        EntryKind::Dir => Err(FsError::IsADirectory),
        _ => Err(FsError::NotFound),
    }
}

/// The file `fd` holds, opened again with `flags` through its
/// `/proc/self/fd` link (the same inode, whatever its name is now).
fn reopened(fd: BorrowedFd<'_>, flags: i32) -> Result<File, FsError> {
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let how = nix::fcntl::OFlag::from_bits_truncate(flags)
        | nix::fcntl::OFlag::O_CLOEXEC
        | nix::fcntl::OFlag::O_NONBLOCK;
    let fd = nix::fcntl::open(path.as_str(), how, nix::sys::stat::Mode::empty())?;
    Ok(File::from(fd))
}

/// `lstat` of `name` in the directory `dir`.
fn lstat_in(dir: BorrowedFd<'_>, name: &OsStr) -> Result<FileStat, FsError> {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW).map_err(|e| FsError::from_walk(e.into()))
}

pub fn file_type(kind: EntryKind) -> FileType {
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

/// A digest of the attributes the kernel keeps of `attr`, all but the
/// access time (which the kernel refreshes itself: it forgets it at every
/// read), keyed per daemon so that no file's attributes can be chosen to
/// match another's. Never 0 (which stands for none).
pub(super) fn told_digest(attr: &FileAttr) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    static KEY: std::sync::OnceLock<std::hash::RandomState> = std::sync::OnceLock::new();
    let mut h = KEY.get_or_init(std::hash::RandomState::new).build_hasher();
    let time = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default();
    (attr.size, attr.blocks, time(attr.mtime), time(attr.ctime)).hash(&mut h);
    (
        attr.kind, attr.perm, attr.nlink, attr.uid, attr.gid, attr.rdev,
    )
        .hash(&mut h);
    h.finish() | 1
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
