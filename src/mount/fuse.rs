//! The FUSE adapter: each operation calls the [`View`], maps a failure to its
//! errno (logged once, in [`FsError::reply`]) and replies. Nothing is decided
//! here; requests that may verify a bundle are scheduled by [`Dispatch`].
//! Locks (`flock`, POSIX, OFD) are left to the kernel, which keeps them for
//! every process using the view. `flush` is not implemented on purpose: the
//! kernel then stops sending it, and a close costs no round trip (writes
//! reach the disk as they come; nothing is buffered here).

use std::ffi::OsStr;
use std::io;
use std::sync::Arc;
use std::time::SystemTime;

use fuser::{
    AccessFlags, FileAttr, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use super::backing::{DevBacking, Registrar};
use super::dispatch::Dispatch;
use super::error::FsError;
use super::view::{Entry, Mknod, Opened, ReadMode, SetAttr, SetTime, View, file_type};
use seal_gate::{Gate, Who};

/// In a debug build, set: no FUSE passthrough (the mount tests' mode matrix).
const NO_PASSTHROUGH_VAR: &str = "SEAL_TEST_NO_PASSTHROUGH";

/// In a debug build, set: no io_uring rings (the mount tests' mode matrix).
const NO_RINGS_VAR: &str = "SEAL_TEST_NO_RINGS";

/// The payload of a ring entry: the kernel's largest read or write (256
/// pages) and a page for the arguments around it.
const RING_PAYLOAD: usize = (1 << 20) + 4096;

/// Threads that run the verifications the FUSE threads hand off.
const VERIFY_WORKERS: usize = 2;

/// The session's notifier tells the kernel to forget.
impl super::view::Invalidate for fuser::Notifier {
    fn entry(&self, parent: u64, name: &OsStr) {
        if let Err(e) = self.inval_entry(INodeNo(parent), name) {
            tracing::debug!("inval_entry: {e}");
        }
    }
    fn inode(&self, ino: u64) {
        // Attributes only: a negative offset leaves cached pages alone.
        if let Err(e) = self.inval_inode(INodeNo(ino), -1, 0) {
            tracing::debug!("inval_inode: {e}");
        }
    }
    fn data(&self, ino: u64) {
        // Offset 0, length 0: attributes and every cached page.
        if let Err(e) = self.inval_inode(INodeNo(ino), 0, 0) {
            tracing::debug!("inval_inode: {e}");
        }
    }
    fn listing(&self, dir: u64) {
        // Offset 0, length 0: every cached page, which for a directory is
        // its cached listing.
        if let Err(e) = self.inval_inode(INodeNo(dir), 0, 0) {
            tracing::debug!("inval_inode: {e}");
        }
    }
}

/// What `seal mount` does when the session has ended (see [`SealFs::on_end`]).
pub type LastWords = Box<dyn FnOnce() + Send + Sync>;

/// The filesystem: the shared view, and where its requests run.
pub struct SealFs {
    dispatch: Arc<Dispatch<View<DevBacking>>>,
    /// Whether the kernel agreed to serve requests through io_uring rings
    /// (`ring.rs`), and the size of their payload buffers.
    rings: Arc<std::sync::OnceLock<usize>>,
    /// Registers passthrough backings through the session's device.
    registrar: Registrar,
    last_words: Option<LastWords>,
}

impl SealFs {
    /// At most `fuse_threads - 2` requests that may verify a bundle run on
    /// FUSE threads at once, so two always remain for ordinary requests.
    pub fn new(
        gate: std::sync::Arc<Gate>,
        fuse_threads: usize,
        writable: bool,
        kernel_opens: bool,
    ) -> SealFs {
        SealFs {
            dispatch: Arc::new(Dispatch::new(
                Arc::new(View::new(gate, writable).letting_the_kernel_open(kernel_opens)),
                fuse_threads.saturating_sub(2),
                VERIFY_WORKERS,
            )),
            rings: Arc::default(),
            last_words: None,
            registrar: Registrar::default(),
        }
    }

    /// Where backings are registered (its device is set once the session
    /// has one).
    pub fn registrar(&self) -> Registrar {
        self.registrar.clone()
    }

    /// What the rings serve with, and the size of their payload buffers,
    /// once the handshake has agreed to them (`None`: the classic loop
    /// serves everything).
    pub fn rings(
        &self,
    ) -> (
        Arc<crate::mount::ring::Shared>,
        Arc<std::sync::OnceLock<usize>>,
    ) {
        let shared = crate::mount::ring::Shared {
            dispatch: Arc::clone(&self.dispatch),
            registrar: self.registrar.clone(),
        };
        (Arc::new(shared), Arc::clone(&self.rings))
    }

    /// Runs `last_words` once the session has ended (every FUSE thread is
    /// done) and before the FUSE library tears the mount down. `seal mount`
    /// exits there: the library's teardown unmounts the mountpoint path
    /// again, which, after an external `umount`, may by then be a new mount.
    pub fn on_end(mut self, last_words: LastWords) -> SealFs {
        self.last_words = Some(last_words);
        self
    }

    fn view(&self) -> &View<DevBacking> {
        self.dispatch.shared()
    }

    /// The shared view (for the mount's change-feed listener).
    pub fn view_handle(&self) -> std::sync::Arc<View<DevBacking>> {
        self.dispatch.shared().clone()
    }
}

fn who(req: &Request) -> Who {
    Who {
        pid: req.pid(),
        uid: req.uid(),
        gid: req.gid(),
    }
}

fn reply_opened(reply: ReplyOpen, opened: Opened<DevBacking>) {
    let fh = FileHandle(opened.fh);
    match opened.mode {
        ReadMode::Passthrough(backing) => {
            // SAFETY: the id is registered with this session and stays so
            // while `backing` lives, past the reply; `into_raw` leaves its
            // unregistering to `backing`.
            let id = unsafe { reply.wrap_backing(backing.id.raw) };
            reply.opened_passthrough(fh, FopenFlags::FOPEN_PASSTHROUGH, &id);
            id.into_raw();
        }
        ReadMode::Direct => reply.opened(fh, FopenFlags::FOPEN_DIRECT_IO),
        ReadMode::Cached => reply.opened(fh, FopenFlags::empty()),
        // The kernel opens this file and every later one itself.
        ReadMode::InKernel => reply.error(fuser::Errno::ENOSYS),
    }
}

/// Marks the request this thread now serves as arrived: every decision it
/// makes is current at that moment, proven by one read of the change feed
/// (`seal_gate::feed::RequestScope`).
fn arrived() -> seal_gate::feed::RequestScope {
    seal_gate::feed::RequestScope::begin()
}

impl Filesystem for SealFs {
    fn destroy(&mut self) {
        if let Some(last_words) = self.last_words.take() {
            last_words();
        }
    }

    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        let _ = config
            .add_capabilities(InitFlags::FUSE_DO_READDIRPLUS | InitFlags::FUSE_READDIRPLUS_AUTO);
        let _ = config.add_capabilities(InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP);
        let _ = config.add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS);
        // Without it the kernel asks for `security.capability` before every
        // write, a round trip each (a 1 GiB write in 1 MiB writes: 1,024),
        // to learn whether the write must drop set-ID bits and capabilities.
        // With it the filesystem drops them, and the disk does: every change
        // the view makes runs with the caller's credentials (on the serving
        // thread; passthrough writes with those of the backing's
        // registration, made as the caller: `BackingOf::RealFile`), so the
        // disk applies the rules of a native write.
        let _ = config.add_capabilities(InitFlags::FUSE_HANDLE_KILLPRIV_V2);
        // Asked for, not `View::opens_in_kernel`: the handshake runs while
        // the session is made, before the view has its invalidator and
        // directory feed (`mount_with` warns if the kernel will not open
        // files itself after all; cached reads then refresh attributes).
        if self.view().kernel_opens_asked() && !self.view().is_writable() {
            // Files the kernel opens itself keep their pages: a change of
            // mtime or size, seen when their attributes are refreshed, must
            // drop them (where the directory feed does not tell at once).
            let _ = config.add_capabilities(InitFlags::FUSE_AUTO_INVAL_DATA);
        }
        // Requests through rings per CPU, where the kernel offers them (a
        // debug build keeps the classic loop when the test matrix asks).
        let no_rings = cfg!(debug_assertions) && std::env::var_os(NO_RINGS_VAR).is_some();
        if !no_rings
            && config
                .capabilities()
                .contains(InitFlags::FUSE_OVER_IO_URING)
            && crate::mount::ring::available()
        {
            // A ring entry holds the largest request or reply body: keep it
            // at 1 MiB (the kernel's largest read and write in pages).
            let max_write = config
                .set_max_write(RING_PAYLOAD as u32)
                .map_or_else(|max| max, |_| RING_PAYLOAD as u32);
            if config
                .add_capabilities(InitFlags::FUSE_OVER_IO_URING)
                .is_ok()
            {
                let _ = self.rings.set((max_write as usize).max(RING_PAYLOAD));
            }
        }
        // A debug build serves every read from the daemon when the test
        // matrix asks (as where the kernel refuses passthrough).
        let refused = cfg!(debug_assertions) && std::env::var_os(NO_PASSTHROUGH_VAR).is_some();
        if !refused
            && config.add_capabilities(InitFlags::FUSE_PASSTHROUGH).is_ok()
            && config.set_max_stack_depth(2).is_ok()
        {
            self.view().backings().enable();
        } else {
            tracing::info!("the kernel offers no FUSE passthrough; serving reads from the daemon");
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let _request = arrived();
        let who = who(req);
        let heavy = |view: &View<DevBacking>| view.may_verify(parent.0, Some(name), false);
        let name = name.to_os_string();
        self.dispatch
            .run(heavy, move |view| match view.lookup(parent.0, &name, who) {
                Ok(e) => reply.entry_with_ttls(&e.attr_ttl, &e.ttl, &e.attr, Generation(0)),
                // Node 0: the kernel keeps a negative entry for the TTL.
                Err(FsError::Absent(ttl)) => {
                    reply.entry_with_ttls(&ttl, &ttl, &absent_attr(), Generation(0))
                }
                Err(e) => reply.error(e.reply("lookup")),
            });
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        self.view().forget(ino.0, nlookup);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let _request = arrived();
        match self.view().getattr(ino.0, fh.map(|f| f.0)) {
            Ok(e) => reply.attr(&e.attr_ttl, &e.attr),
            Err(e) => reply.error(e.reply("getattr")),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.view().readlink(ino.0) {
            Ok(target) => reply.data(std::os::unix::ffi::OsStrExt::as_bytes(target.as_os_str())),
            Err(e) => reply.error(e.reply("readlink")),
        }
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let _request = arrived();
        let who = who(req);
        let heavy = |view: &View<DevBacking>| view.may_verify(ino.0, None, false);
        let registrar = self.registrar.clone();
        self.dispatch.run(heavy, move |view| {
            match view.open(ino.0, flags.0, who, &registrar) {
                Ok(opened) => reply_opened(reply, opened),
                Err(e) => reply.error(e.reply("open")),
            }
        });
    }

    fn read(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let _request = arrived();
        if fh.0 == 0 {
            // An open the kernel made itself: read by inode (which may take
            // the bytes of a bundle file from the gate again).
            let who = who(req);
            let heavy = |view: &View<DevBacking>| view.may_verify(ino.0, None, false);
            self.dispatch.run(heavy, move |view| {
                match view.read_unopened(ino.0, offset, size, who) {
                    Ok(data) => reply.data(&data),
                    Err(e) => reply.error(e.reply("read")),
                }
            });
            return;
        }
        match self.view().read(fh.0, offset, size) {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e.reply("read")),
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
        self.view().release(fh.0);
        reply.ok();
    }

    fn opendir(&self, req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if self.view().dirs_in_kernel() {
            // From now on the kernel opens directories itself and reads
            // them without a handle (see `view/kernel_dirs.rs`).
            reply.error(fuser::Errno::ENOSYS);
            return;
        }
        let _request = arrived();
        let who = who(req);
        let heavy = |view: &View<DevBacking>| view.may_verify(ino.0, None, true);
        self.dispatch
            .run(heavy, move |view| match view.opendir(ino.0, who) {
                Ok(dir) => {
                    let mut flags = FopenFlags::empty();
                    if dir.cache {
                        flags |= FopenFlags::FOPEN_CACHE_DIR;
                    }
                    if dir.keep {
                        flags |= FopenFlags::FOPEN_KEEP_CACHE;
                    }
                    reply.opened(FileHandle(dir.fh), flags)
                }
                Err(e) => reply.error(e.reply("opendir")),
            });
    }

    fn readdir(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let _request = arrived();
        let who = who(req);
        // Without a handle, a read from the start takes the listing, as an
        // opendir did: it may verify the bundles it holds.
        let heavy = |view: &View<DevBacking>| {
            fh.0 == 0 && offset == 0 && view.may_verify(ino.0, None, true)
        };
        self.dispatch.run(heavy, move |view| {
            match view.readdir(ino.0, fh.0, offset, who) {
                Ok(entries) => {
                    for (next, item) in entries {
                        if reply.add(INodeNo(item.ino), next, file_type(item.kind), &item.name) {
                            break;
                        }
                    }
                    reply.ok();
                }
                Err(e) => reply.error(e.reply("readdir")),
            }
        });
    }

    fn readdirplus(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let _request = arrived();
        let who = who(req);
        let heavy = |view: &View<DevBacking>| {
            fh.0 == 0 && offset == 0 && view.may_verify(ino.0, None, true)
        };
        self.dispatch.run(heavy, move |view| {
            let result = view.readdirplus(ino.0, fh.0, offset, who, &mut |e| {
                reply.add(
                    INodeNo(e.ino),
                    e.next_offset,
                    e.name,
                    &e.ttl,
                    &e.attr,
                    Generation(0),
                )
            });
            match result {
                Ok(()) => reply.ok(),
                Err(e) => reply.error(e.reply("readdirplus")),
            }
        });
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.view().release(fh.0);
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match nix::sys::statvfs::fstatvfs(self.view().gate().project_fd()) {
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
            Err(e) => reply.error(FsError::from(e).reply("statfs")),
        }
    }

    fn access(&self, req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        match self
            .view()
            .access(ino.0, mask.contains(AccessFlags::W_OK), who(req))
        {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e.reply("access")),
        }
    }

    fn getxattr(&self, _req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        match self.view().getxattr(ino.0, name, size) {
            Ok(value) if size == 0 => reply.size(value.len() as u32),
            Ok(value) => reply.data(&value),
            Err(e) => reply.error(e.reply("getxattr")),
        }
    }

    fn listxattr(&self, _req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        match self.view().listxattr(ino.0, size) {
            Ok(names) if size == 0 => reply.size(names.len() as u32),
            Ok(names) => reply.data(&names),
            Err(e) => reply.error(e.reply("listxattr")),
        }
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let time = |t: Option<TimeOrNow>| {
            t.map(|t| match t {
                TimeOrNow::Now => SetTime::Now,
                TimeOrNow::SpecificTime(t) => SetTime::At(t),
            })
        };
        let set = SetAttr {
            mode,
            uid,
            gid,
            size,
            atime: time(atime),
            mtime: time(mtime),
        };
        match self.view().setattr(ino.0, fh.map(|f| f.0), set, who(req)) {
            Ok(e) => reply.attr(&e.attr_ttl, &e.attr),
            Err(e) => reply.error(e.reply("setattr")),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let node = Mknod { mode, rdev };
        reply_entry(
            reply,
            "mknod",
            self.view().mknod(parent.0, name, node, who(req)),
        );
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        reply_entry(
            reply,
            "mkdir",
            self.view().mkdir(parent.0, name, mode, who(req)),
        );
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(
            reply,
            "unlink",
            self.view().unlink(parent.0, name, who(req)),
        );
    }

    fn rmdir(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(reply, "rmdir", self.view().rmdir(parent.0, name, who(req)));
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &std::path::Path,
        reply: ReplyEntry,
    ) {
        let made = self
            .view()
            .symlink(parent.0, link_name, target.as_os_str(), who(req));
        reply_entry(reply, "symlink", made);
    }

    fn rename(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let done = self
            .view()
            .rename(parent.0, name, newparent.0, newname, flags.bits(), who(req));
        reply_empty(reply, "rename", done);
    }

    fn link(
        &self,
        req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let made = self.view().link(ino.0, newparent.0, newname, who(req));
        reply_entry(reply, "link", made);
    }

    fn write(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.view().write(fh.0, offset, data, who(req)) {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e.reply("write")),
        }
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, "fsync", self.view().fsync(ino.0, fh.0, datasync));
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // Directory changes are made with the disk's own calls, which the
        // disk orders; the project directory is synced by its own fsync.
        reply.ok();
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        match self
            .view()
            .create(parent.0, name, mode, flags, who(req), &self.registrar)
        {
            Ok((entry, opened)) => {
                let fh = FileHandle(opened.fh);
                match opened.mode {
                    ReadMode::Passthrough(backing) => {
                        // SAFETY: as in `reply_opened`.
                        let id = unsafe { reply.wrap_backing(backing.id.raw) };
                        reply.created_passthrough(
                            &entry.ttl,
                            &entry.attr,
                            Generation(0),
                            fh,
                            FopenFlags::FOPEN_PASSTHROUGH,
                            &id,
                        );
                        id.into_raw();
                    }
                    ReadMode::Direct => reply.created(
                        &entry.ttl,
                        &entry.attr,
                        Generation(0),
                        fh,
                        FopenFlags::FOPEN_DIRECT_IO,
                    ),
                    ReadMode::Cached => reply.created(
                        &entry.ttl,
                        &entry.attr,
                        Generation(0),
                        fh,
                        FopenFlags::empty(),
                    ),
                    // Only the read-only view opens in the kernel, and it
                    // creates nothing.
                    ReadMode::InKernel => reply.error(fuser::Errno::EIO),
                }
            }
            Err(e) => reply.error(e.reply("create")),
        }
    }

    fn setxattr(
        &self,
        req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        let done = self.view().setxattr(ino.0, name, value, flags, who(req));
        reply_empty(reply, "setxattr", done);
    }

    fn removexattr(&self, req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(
            reply,
            "removexattr",
            self.view().removexattr(ino.0, name, who(req)),
        );
    }

    fn fallocate(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let done = self
            .view()
            .fallocate(ino.0, fh.0, offset, length, mode, who(req));
        reply_empty(reply, "fallocate", done);
    }
}

fn reply_entry(reply: ReplyEntry, op: &'static str, made: Result<Entry, FsError>) {
    match made {
        Ok(e) => reply.entry_with_ttls(&e.attr_ttl, &e.ttl, &e.attr, Generation(0)),
        Err(e) => reply.error(e.reply(op)),
    }
}

fn reply_empty(reply: ReplyEmpty, op: &'static str, done: Result<(), FsError>) {
    match done {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(e.reply(op)),
    }
}

/// The attributes of a negative entry: node 0, which the kernel takes as
/// "no such name" kept for the entry's TTL (nothing else is read).
pub(super) fn absent_attr() -> FileAttr {
    FileAttr {
        ino: INodeNo(0),
        size: 0,
        blocks: 0,
        atime: SystemTime::UNIX_EPOCH,
        mtime: SystemTime::UNIX_EPOCH,
        ctime: SystemTime::UNIX_EPOCH,
        crtime: SystemTime::UNIX_EPOCH,
        kind: fuser::FileType::RegularFile,
        perm: 0,
        nlink: 0,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: 0,
        flags: 0,
    }
}
