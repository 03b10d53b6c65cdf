//! The FUSE adapter: each operation calls the [`View`], maps a failure to its
//! errno (logged once, in [`FsError::reply`]) and replies. Nothing is decided
//! here; requests that may verify a bundle are scheduled by [`Dispatch`].

use std::ffi::OsStr;
use std::io;
use std::os::fd::BorrowedFd;
use std::time::SystemTime;

use fuser::{
    AccessFlags, BackingId, Errno, FileHandle, Filesystem, FopenFlags, Generation, INodeNo,
    InitFlags, KernelConfig, LockOwner, OpenAccMode, OpenFlags, RenameFlags, ReplyAttr,
    ReplyCreate, ReplyData, ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen,
    ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use super::backing::Register;
use super::dispatch::Dispatch;
use super::error::FsError;
use super::view::{Opened, ReadMode, View, file_type};
use crate::gate::{Gate, Who};

/// Threads that run the verifications the FUSE threads hand off.
const VERIFY_WORKERS: usize = 2;

/// The kernel registers passthrough backings through the open's reply.
impl Register for ReplyOpen {
    type Id = BackingId;
    fn register(&self, fd: BorrowedFd<'_>) -> io::Result<BackingId> {
        self.open_backing(fd)
    }
}

/// The filesystem: the shared view, and where its requests run.
pub struct SealFs {
    dispatch: Dispatch<View<BackingId>>,
}

impl SealFs {
    /// At most `fuse_threads - 2` requests that may verify a bundle run on
    /// FUSE threads at once, so two always remain for ordinary requests.
    pub fn new(gate: std::sync::Arc<Gate>, fuse_threads: usize) -> SealFs {
        SealFs {
            dispatch: Dispatch::new(
                std::sync::Arc::new(View::new(gate)),
                fuse_threads.saturating_sub(2),
                VERIFY_WORKERS,
            ),
        }
    }

    fn view(&self) -> &View<BackingId> {
        self.dispatch.shared()
    }
}

fn who(req: &Request) -> Who {
    Who { pid: req.pid() }
}

fn reply_opened(reply: ReplyOpen, opened: Opened<BackingId>) {
    let fh = FileHandle(opened.fh);
    match opened.mode {
        ReadMode::Passthrough(backing) => {
            reply.opened_passthrough(fh, FopenFlags::FOPEN_PASSTHROUGH, &backing.id)
        }
        ReadMode::Direct => reply.opened(fh, FopenFlags::FOPEN_DIRECT_IO),
        ReadMode::Cached => reply.opened(fh, FopenFlags::empty()),
    }
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
            self.view().backings().enable();
        } else {
            tracing::info!("the kernel offers no FUSE passthrough; serving reads from the daemon");
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let who = who(req);
        let name = name.to_os_string();
        let heavy = self.view().may_verify(parent.0, Some(&name), false);
        self.dispatch
            .run(heavy, move |view| match view.lookup(parent.0, &name, who) {
                Ok(e) => {
                    reply.entry_with_ttls(&super::view::ATTR_TTL, &e.ttl, &e.attr, Generation(0))
                }
                Err(e) => reply.error(e.reply("lookup")),
            });
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        self.view().forget(ino.0, nlookup);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.view().getattr(ino.0, fh.map(|f| f.0)) {
            Ok(e) => reply.attr(&e.ttl, &e.attr),
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
        let who = who(req);
        let write = flags.acc_mode() != OpenAccMode::O_RDONLY;
        let heavy = self.view().may_verify(ino.0, None, false);
        self.dispatch.run(heavy, move |view| {
            match view.open(ino.0, write, who, &reply) {
                Ok(opened) => reply_opened(reply, opened),
                Err(e) => reply.error(e.reply("open")),
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
        let who = who(req);
        let heavy = self.view().may_verify(ino.0, None, true);
        self.dispatch
            .run(heavy, move |view| match view.opendir(ino.0, who) {
                Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
                Err(e) => reply.error(e.reply("opendir")),
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
        match self.view().readdir(fh.0, offset) {
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
    }

    fn readdirplus(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let result = self.view().readdirplus(ino.0, fh.0, offset, &mut |e| {
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

    fn access(&self, _req: &Request, _ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        match self.view().access(mask.contains(AccessFlags::W_OK)) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e.reply("access")),
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
        reply.error(FsError::ReadOnly.reply("setattr"));
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
        reply.error(FsError::ReadOnly.reply("mknod"));
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
        reply.error(FsError::ReadOnly.reply("mkdir"));
    }

    fn unlink(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(FsError::ReadOnly.reply("unlink"));
    }

    fn rmdir(&self, _req: &Request, _parent: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(FsError::ReadOnly.reply("rmdir"));
    }

    fn symlink(
        &self,
        _req: &Request,
        _parent: INodeNo,
        _link_name: &OsStr,
        _target: &std::path::Path,
        reply: ReplyEntry,
    ) {
        reply.error(FsError::ReadOnly.reply("symlink"));
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
        reply.error(FsError::ReadOnly.reply("rename"));
    }

    fn link(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _newparent: INodeNo,
        _newname: &OsStr,
        reply: ReplyEntry,
    ) {
        reply.error(FsError::ReadOnly.reply("link"));
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
        reply.error(FsError::ReadOnly.reply("write"));
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
        reply.error(FsError::ReadOnly.reply("create"));
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
        reply.error(FsError::ReadOnly.reply("setxattr"));
    }

    fn removexattr(&self, _req: &Request, _ino: INodeNo, _name: &OsStr, reply: ReplyEmpty) {
        reply.error(FsError::ReadOnly.reply("removexattr"));
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
        reply.error(FsError::ReadOnly.reply("fallocate"));
    }
}
