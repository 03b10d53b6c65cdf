//! The adapter between the kernel's requests and the [`View`], for both
//! transports: the classic loop on `/dev/fuse` (`device.rs`) and the rings
//! (`ring.rs`) decode a request with [`wire`], [`serve`] calls the view and
//! answers through a [`Reply`], which knows its way back. Nothing is decided
//! here; a request that may hash is scheduled by [`Dispatch`].
//! Locks (`flock`, POSIX, OFD) are left to the kernel, which keeps them for
//! every process using the view. `flush` is not implemented on purpose: the
//! kernel then stops sending it, and a close costs no round trip (writes
//! reach the disk as they come; nothing is buffered here).

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::thread::ThreadId;

use nix::sys::eventfd::EventFd;

use super::backing::{DevBacking, Registrar};
use super::dispatch::Dispatch;
use super::error::FsError;
use super::view::{Entry, Mknod, ReadMode, View, file_type};
use super::wire::{self, Body, InHeader, Plus, Request};
use seal_gate::{Hashing, Who};

/// What both transports serve with: the view (behind its dispatch) and
/// the registrar of passthrough backings.
pub struct Shared {
    pub dispatch: Arc<Dispatch<View<DevBacking>>>,
    pub registrar: Registrar,
}

/// A reply on its way to a ring entry, from whichever thread served it.
pub(super) struct Done {
    pub(super) slot: usize,
    pub(super) error: i32,
    pub(super) body: Vec<u8>,
}

/// Where a request's reply goes. A reply dropped unsent (its request's
/// work panicked) answers `EIO`, so that no request is left unanswered.
pub(super) struct Reply {
    to: Option<To>,
}

enum To {
    /// Written to the device the request was read from.
    Device { device: Arc<OwnedFd>, unique: u64 },
    /// Back to ring entry `slot`, whose thread alone may commit it (woken
    /// through `wake` when another thread answers).
    Ring {
        slot: usize,
        ring_thread: ThreadId,
        done: Sender<Done>,
        wake: Arc<EventFd>,
    },
}

impl Reply {
    /// The reply to request `unique`, read from `device`.
    pub(super) fn device(device: Arc<OwnedFd>, unique: u64) -> Reply {
        Reply {
            to: Some(To::Device { device, unique }),
        }
    }

    /// The reply to the request in ring entry `slot` of the ring served by
    /// this thread.
    pub(super) fn ring(slot: usize, done: Sender<Done>, wake: Arc<EventFd>) -> Reply {
        Reply {
            to: Some(To::Ring {
                slot,
                ring_thread: std::thread::current().id(),
                done,
                wake,
            }),
        }
    }

    fn on_ring(&self) -> bool {
        matches!(self.to, Some(To::Ring { .. }))
    }

    pub(super) fn send(mut self, answer: Result<Body, FsError>, op: &'static str) {
        let (error, body) = match answer {
            Ok(body) => (0, body.0),
            Err(e) => (-i32::from(e.reply(op)), Vec::new()),
        };
        self.deliver(error, body);
    }

    /// Answers a request whose success carries no body.
    fn done(self, done: Result<(), FsError>, op: &'static str) {
        self.send(done.map(|()| Body::default()), op);
    }

    /// Answers with a name's entry.
    fn entry(self, entry: Result<Entry, FsError>, op: &'static str) {
        self.send(entry.map(|e| entry_body(&e)), op);
    }

    /// Answers with attributes.
    fn attr(self, entry: Result<Entry, FsError>, op: &'static str) {
        let body = entry.map(|e| {
            let mut b = Body::default();
            b.attr_out(&e.attr, e.attr_ttl);
            b
        });
        self.send(body, op);
    }

    pub(super) fn errno(mut self, errno: i32) {
        self.deliver(-errno, Vec::new());
    }

    /// No reply: the request takes none (`FORGET`).
    fn none(mut self) {
        self.to = None;
    }

    fn deliver(&mut self, error: i32, body: Vec<u8>) {
        match self.to.take() {
            None => {}
            Some(To::Device { device, unique }) => {
                let header = wire::out_header(unique, error, body.len());
                let parts = [std::io::IoSlice::new(&header), std::io::IoSlice::new(&body)];
                // ENOENT: the request was interrupted meanwhile, and the
                // kernel wants no answer any more.
                if let Err(e) = nix::sys::uio::writev(&*device, &parts) {
                    if e != nix::errno::Errno::ENOENT {
                        tracing::debug!("FUSE reply to {unique}: {e}");
                    }
                }
            }
            Some(To::Ring {
                slot,
                ring_thread,
                done,
                wake,
            }) => {
                let _ = done.send(Done { slot, error, body });
                if std::thread::current().id() != ring_thread {
                    // A worker's reply: wake the ring's thread to commit it.
                    let _ = wake.write(1);
                }
            }
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        self.deliver(-libc::EIO, Vec::new());
    }
}

/// Held by each thread that serves the view's requests. A panic that
/// unwinds out of one (outside a request's own work, which
/// [`decode_and_serve`] catches) ends the daemon, so that the kernel aborts
/// the connection and every request fails, rather than leaving the requests
/// queued for that thread unanswered for good: their callers would wait in
/// the kernel, where no signal but `SIGKILL` reaches them.
pub(super) struct EndOnPanic;

impl Drop for EndOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            std::process::abort();
        }
    }
}

/// Decodes request `h` (its fixed part and the rest, as its transport
/// hands them over), logs it and serves it; a request that does not parse
/// is answered `EIO`. A panic in its work drops the reply, which answers
/// `EIO`, and the transport's thread serves on.
pub(super) fn decode_and_serve(
    shared: &Shared,
    h: &InHeader,
    fixed: &[u8],
    rest: &[u8],
    reply: Reply,
) {
    match wire::decode(h, fixed, rest) {
        Ok(request) => {
            let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                log(h, &request, reply.on_ring());
                serve(shared, h, request, reply)
            }));
            if served.is_err() {
                tracing::error!("FUSE: the work of request {} panicked", h.unique);
            }
        }
        Err(wire::Malformed) => reply.errno(libc::EIO),
    }
}

/// Logs one line per request, which the tests and benchmarks count
/// (`SEAL_LOG=sealfs::requests=debug`; the target names the transport:
/// `sealfs::requests::device` or `sealfs::requests::ring`).
fn log(h: &InHeader, request: &Request<'_>, on_ring: bool) {
    // `describe` runs only when the line is logged (the macros check the
    // level first): it formats, which every request would pay otherwise.
    let (unique, ino) = (h.unique, h.nodeid);
    match on_ring {
        true => {
            tracing::debug!(target: "sealfs::requests::ring", "FUSE({unique:3}) ino {ino:#018x} {}", request.describe())
        }
        false => {
            tracing::debug!(target: "sealfs::requests::device", "FUSE({unique:3}) ino {ino:#018x} {}", request.describe())
        }
    }
}

/// Runs `work` on this thread or a worker ([`Dispatch`]): a ring's thread,
/// which alone serves its entries, hands off every request that may hash;
/// a thread of the classic loop keeps it while few do.
fn schedule(
    shared: &Shared,
    on_ring: bool,
    heavy: impl FnOnce(&View<DevBacking>) -> bool,
    work: impl FnOnce(&View<DevBacking>) + Send + 'static,
) {
    match on_ring {
        true => shared.dispatch.run_heavy_elsewhere(heavy, work),
        false => shared.dispatch.run(heavy, work),
    }
}

fn who(h: &InHeader) -> Who {
    Who {
        pid: h.pid,
        uid: h.uid,
        gid: h.gid,
    }
}

/// `fuse_open_out.open_flags`.
const FOPEN_DIRECT_IO: u32 = 1 << 0;
const FOPEN_KEEP_CACHE: u32 = 1 << 1;
const FOPEN_CACHE_DIR: u32 = 1 << 3;
const FOPEN_PASSTHROUGH: u32 = 1 << 7;

fn entry_body(e: &Entry) -> Body {
    let mut b = Body::default();
    b.entry(&e.attr, e.ttl, e.attr_ttl);
    b
}

/// The open's reply for `opened` (`None`: the kernel opens files itself).
fn open_body(fh: u64, mode: &ReadMode<DevBacking>, b: &mut Body) -> Option<()> {
    let (flags, backing) = match mode {
        ReadMode::Passthrough(backing) => (FOPEN_PASSTHROUGH, backing.id.raw),
        ReadMode::Direct => (FOPEN_DIRECT_IO, 0),
        ReadMode::Cached => (0, 0),
        ReadMode::InKernel => return None,
    };
    b.open(fh, flags, backing);
    Some(())
}

/// Serves one request and answers it through `reply` (at once, or from
/// the worker that serves it).
fn serve(shared: &Shared, h: &InHeader, request: Request<'_>, reply: Reply) {
    // Every decision the request makes is current at its arrival, proven by
    // one read of the change feed (`seal_gate::feed::RequestScope`).
    let _request = seal_gate::feed::RequestScope::begin();
    let on_ring = reply.on_ring();
    let view = shared.dispatch.shared();
    let (ino, who) = (h.nodeid, who(h));
    match request {
        Request::Lookup { name } => {
            let heavy = |view: &View<DevBacking>| view.may_hash(ino, Some(name), Hashing::Lookup);
            let name = name.to_os_string();
            schedule(shared, on_ring, heavy, move |view| {
                let answer = match view.lookup(ino, &name, who) {
                    Ok(e) => Ok(entry_body(&e)),
                    Err(FsError::Absent(ttl)) => {
                        let mut b = Body::default();
                        b.entry(&absent_attr(), ttl, ttl);
                        Ok(b)
                    }
                    Err(e) => Err(e),
                };
                reply.send(answer, "lookup");
            });
        }
        Request::Forget { nlookup } => {
            view.forget(ino, nlookup);
            reply.none();
        }
        Request::BatchForget { forgets } => {
            for (node, nlookup) in forgets {
                view.forget(node, nlookup);
            }
            reply.none();
        }
        Request::Getattr { fh } => {
            reply.attr(view.getattr(ino, fh), "getattr");
        }
        Request::Setattr { fh, set } => {
            reply.attr(view.setattr(ino, fh, set, who), "setattr");
        }
        Request::Readlink => {
            let answer = view.readlink(ino).map(|target| {
                let mut b = Body::default();
                b.data(std::os::unix::ffi::OsStrExt::as_bytes(target.as_os_str()));
                b
            });
            reply.send(answer, "readlink");
        }
        Request::Open { flags } => {
            let heavy = |view: &View<DevBacking>| view.may_hash(ino, None, Hashing::Bytes);
            let registrar = shared.registrar.clone();
            schedule(shared, on_ring, heavy, move |view| {
                match view.open(ino, flags, who, &registrar) {
                    Ok(opened) => {
                        let mut b = Body::default();
                        match open_body(opened.fh, &opened.mode, &mut b) {
                            Some(()) => reply.send(Ok(b), "open"),
                            // The kernel opens this file and every later one itself.
                            None => reply.errno(libc::ENOSYS),
                        }
                    }
                    Err(e) => reply.send(Err(e), "open"),
                }
            });
        }
        Request::Read { fh, offset, size } => {
            if fh == 0 {
                let heavy = |view: &View<DevBacking>| view.may_hash(ino, None, Hashing::Bytes);
                schedule(shared, on_ring, heavy, move |view| {
                    let answer = view.read_unopened(ino, offset, size, who).map(Body);
                    reply.send(answer, "read");
                });
                return;
            }
            reply.send(view.read(fh, offset, size).map(Body), "read");
        }
        Request::Write { fh, offset, data } => {
            let answer = view.write(fh, offset, data, who).map(|n| {
                let mut b = Body::default();
                b.written(n);
                b
            });
            reply.send(answer, "write");
        }
        Request::Release { fh } | Request::Releasedir { fh } => {
            view.release(fh);
            reply.done(Ok(()), "release");
        }
        Request::Opendir => {
            if view.dirs_in_kernel() {
                // The kernel opens directories itself from now on.
                reply.errno(libc::ENOSYS);
                return;
            }
            let heavy = |view: &View<DevBacking>| view.may_hash(ino, None, Hashing::Listing);
            schedule(shared, on_ring, heavy, move |view| {
                let answer = view.opendir(ino, who).map(|dir| {
                    let mut flags = 0;
                    if dir.cache {
                        flags |= FOPEN_CACHE_DIR;
                    }
                    if dir.keep {
                        flags |= FOPEN_KEEP_CACHE;
                    }
                    let mut b = Body::default();
                    b.open(dir.fh, flags, 0);
                    b
                });
                reply.send(answer, "opendir");
            });
        }
        Request::Readdir { fh, offset, size } => {
            let heavy = |view: &View<DevBacking>| view.may_hash(ino, None, Hashing::Listing);
            schedule(shared, on_ring, heavy, move |view| {
                let answer = view.readdir(ino, fh, offset, who).map(|entries| {
                    let mut b = Body::default();
                    for (next, item) in entries {
                        if b.dirent(
                            size as usize,
                            Plus::No,
                            item.ino,
                            next,
                            file_type(item.kind),
                            &item.name,
                        ) {
                            break;
                        }
                    }
                    b
                });
                reply.send(answer, "readdir");
            });
        }
        Request::Readdirplus { fh, offset, size } => {
            // Any read of a listing, first or continued, may take the
            // listing again (the one kept for the kernel was dropped, or
            // opendir took none), and so verify: on a ring, whose thread
            // alone serves its entries, the requests queued behind it
            // waited a whole verification (tests/mount_resources.rs).
            let heavy = |view: &View<DevBacking>| view.may_hash(ino, None, Hashing::Listing);
            schedule(shared, on_ring, heavy, move |view| {
                let mut b = Body::default();
                let result = view.readdirplus(ino, fh, offset, who, &mut |e| {
                    let plus = match &e.attr {
                        Some(attr) => Plus::Entry(attr, e.ttl),
                        None => Plus::Unlinked,
                    };
                    b.dirent(size as usize, plus, e.ino, e.next_offset, e.kind, e.name)
                });
                reply.send(result.map(|()| b), "readdirplus");
            });
        }
        Request::Statfs => {
            let answer = nix::sys::statvfs::fstatvfs(view.gate().project_fd())
                .map(|s| {
                    let mut b = Body::default();
                    b.statfs(&s);
                    b
                })
                .map_err(FsError::from);
            reply.send(answer, "statfs");
        }
        Request::Access { mask } => {
            let write = mask & libc::W_OK as u32 != 0;
            reply.done(view.access(ino, write, who), "access");
        }
        Request::Getxattr { name, size } => {
            reply.send(
                view.getxattr(ino, name, size).map(|v| xattr_body(v, size)),
                "getxattr",
            );
        }
        Request::Listxattr { size } => {
            reply.send(
                view.listxattr(ino, size).map(|v| xattr_body(v, size)),
                "listxattr",
            );
        }
        Request::Setxattr { name, value, flags } => {
            reply.done(view.setxattr(ino, name, value, flags, who), "setxattr");
        }
        Request::Removexattr { name } => {
            reply.done(view.removexattr(ino, name, who), "removexattr");
        }
        Request::Mknod { name, mode, rdev } => {
            reply.entry(view.mknod(ino, name, Mknod { mode, rdev }, who), "mknod");
        }
        Request::Mkdir { name, mode } => {
            reply.entry(view.mkdir(ino, name, mode, who), "mkdir");
        }
        Request::Symlink { name, target } => {
            reply.entry(view.symlink(ino, name, target, who), "symlink");
        }
        Request::Link { oldnode, name } => {
            reply.entry(view.link(oldnode, ino, name, who), "link");
        }
        Request::Unlink { name } => {
            reply.done(view.unlink(ino, name, who), "unlink");
        }
        Request::Rmdir { name } => {
            reply.done(view.rmdir(ino, name, who), "rmdir");
        }
        Request::Rename {
            name,
            newdir,
            newname,
            flags,
        } => {
            let done = view.rename(ino, name, newdir, newname, flags, who);
            reply.done(done, "rename");
        }
        Request::Create { name, mode, flags } => {
            let answer = view.create(ino, name, mode, flags, who, &shared.registrar);
            match answer {
                Ok((entry, opened)) => {
                    let mut b = entry_body(&entry);
                    match open_body(opened.fh, &opened.mode, &mut b) {
                        Some(()) => reply.send(Ok(b), "create"),
                        // Only the read-only view opens in the kernel, and
                        // it creates nothing.
                        None => reply.errno(libc::EIO),
                    }
                }
                Err(e) => reply.send(Err(e), "create"),
            }
        }
        Request::Fsync { fh, datasync } => {
            reply.done(view.fsync(ino, fh, datasync), "fsync");
        }
        Request::Fsyncdir | Request::Destroy => reply.done(Ok(()), "fsyncdir"),
        Request::Fallocate {
            fh,
            offset,
            length,
            mode,
        } => {
            let done = view.fallocate(ino, fh, offset, length, mode, who);
            reply.done(done, "fallocate");
        }
        Request::Interrupt { .. } | Request::Other(_) => reply.errno(libc::ENOSYS),
    }
}

/// A `getxattr`/`listxattr` reply: the size alone when asked with size 0.
fn xattr_body(value: Vec<u8>, size: u32) -> Body {
    let mut b = Body::default();
    if size == 0 {
        b.xattr_size(value.len() as u32);
    } else {
        b.data(&value);
    }
    b
}

/// The attributes of a negative entry: node 0, which the kernel takes as
/// "no such name" kept for the entry's TTL (nothing else is read).
fn absent_attr() -> fuser::FileAttr {
    fuser::FileAttr {
        ino: fuser::INodeNo(0),
        size: 0,
        blocks: 0,
        atime: std::time::SystemTime::UNIX_EPOCH,
        mtime: std::time::SystemTime::UNIX_EPOCH,
        ctime: std::time::SystemTime::UNIX_EPOCH,
        crtime: std::time::SystemTime::UNIX_EPOCH,
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

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::eventfd::EfdFlags;
    use std::sync::mpsc::channel;

    fn reply(done: Sender<Done>) -> Reply {
        let wake = EventFd::from_value_and_flags(0, EfdFlags::EFD_NONBLOCK).unwrap();
        Reply::ring(3, done, Arc::new(wake))
    }

    #[test]
    fn a_reply_dropped_unsent_answers_eio_and_a_sent_one_answers_once() {
        let (tx, rx) = channel();
        drop(reply(tx.clone()));
        let done = rx.try_recv().expect("a dropped reply still answers");
        assert_eq!((done.slot, done.error), (3, -libc::EIO));
        reply(tx.clone()).send(Ok(Body(vec![1, 2])), "test");
        let done = rx.try_recv().unwrap();
        assert_eq!((done.error, done.body), (0, vec![1, 2]));
        assert!(rx.try_recv().is_err(), "answered twice");
    }

    #[test]
    fn a_worker_s_reply_wakes_the_ring_s_thread() {
        let (tx, rx) = channel();
        let r = reply(tx);
        let Some(To::Ring { wake, .. }) = &r.to else {
            unreachable!()
        };
        let wake = Arc::clone(wake);
        std::thread::spawn(move || r.errno(libc::ENOENT))
            .join()
            .unwrap();
        assert_eq!(rx.try_recv().unwrap().error, -libc::ENOENT);
        assert_eq!(wake.read().unwrap(), 1, "the counter was not woken");
    }

    /// What was written to the pipe standing for the device.
    fn written(pipe: &OwnedFd) -> Vec<u8> {
        let mut buf = vec![0u8; 256];
        match nix::unistd::read(pipe, &mut buf) {
            Ok(n) => buf[..n].to_vec(),
            Err(_) => Vec::new(),
        }
    }

    #[test]
    fn a_device_reply_is_one_write_of_header_and_body_and_a_forget_gets_none() {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK).unwrap();
        let device = Arc::new(write);
        Reply::device(Arc::clone(&device), 7).send(Ok(Body(vec![9, 8, 7])), "test");
        assert_eq!(
            written(&read),
            [&wire::out_header(7, 0, 3)[..], &[9, 8, 7]].concat()
        );
        drop(Reply::device(Arc::clone(&device), 8));
        assert_eq!(written(&read), wire::out_header(8, -libc::EIO, 0));
        Reply::device(Arc::clone(&device), 9).none();
        assert!(written(&read).is_empty(), "a forget was answered");
    }
}
