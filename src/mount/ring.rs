//! FUSE over io_uring (Linux 6.14 and later, with the `fuse` module's
//! `enable_uring` on): rings per CPU, each served by a thread held to that
//! CPU. The kernel queues a request on the rings of the CPU that made it,
//! so it is answered there: no wake-up of another CPU, which is most of what a
//! classic round trip costs (docs/ARCHITECTURE.md, "Where FUSE is the
//! limit").
//!
//! `fuser` still mounts and answers `INIT` (asking `FUSE_OVER_IO_URING`),
//! and its own loop still serves what the kernel sends through `/dev/fuse`:
//! `FORGET` and `INTERRUPT`, and the requests made before every CPU's ring
//! was registered. Everything else comes here, decoded by [`wire`], served
//! by the same [`View`] as the classic loop; a request that may verify a
//! bundle is handed to a verification worker as there ([`Dispatch`]), and
//! its reply comes back to the ring's thread, which alone may submit.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::ThreadId;

use io_uring::{IoUring, cqueue, opcode, squeue, types};
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::backing::{DevBacking, Registrar};
use super::dispatch::Dispatch;
use super::error::FsError;
use super::view::{Entry, Mknod, ReadMode, View, file_type};
use super::wire::{self, Body, InHeader, Request};
use seal_gate::Who;

/// Rings per CPU, each served by its own thread with one entry, so that an
/// entry the kernel may hand a request to always has an idle thread behind
/// it: a request that blocks its thread (a listing of a huge directory, one
/// waiting for a verification in flight) leaves the CPU's other requests to
/// the other rings, as the classic loop's six threads do.
const RINGS_PER_CPU: usize = 4;
/// Requests each ring holds at first (see [`RINGS_PER_CPU`]).
const ENTRIES: usize = 1;
/// Entries a ring may grow to: a request handed to a verification worker
/// keeps its entry until the worker answers, so the ring registers a fresh
/// one meanwhile (the classic loop's thread is free again at once).
const MAX_ENTRIES: usize = 8;
/// `struct fuse_uring_req_header`: the in or out header (128 bytes), the
/// operation's fixed part (128), then `struct fuse_uring_ent_in_out`.
const HEADER_SIZE: usize = 288;
const OP_IN: usize = 128;
const ENT_IN_OUT: usize = 256;
/// `enum fuse_uring_cmd`.
const CMD_REGISTER: u32 = 1;
const CMD_COMMIT_AND_FETCH: u32 = 2;
/// The user data of the ring's read of its wake-up counter.
const WOKEN: u64 = u64::MAX;

/// What the rings serve with: the classic loop's view and registrar.
pub struct Shared {
    pub dispatch: Arc<Dispatch<View<DevBacking>>>,
    pub registrar: Registrar,
}

/// Whether this process can make the rings (io_uring with 128-byte
/// entries: off where `kernel.io_uring_disabled` says so, or in a sandbox
/// that filters it). Asked before the handshake agrees to the rings: once
/// it has, the kernel holds every request until each CPU's ring is
/// registered, so rings that cannot start would hang the view.
pub fn available() -> bool {
    IoUring::<squeue::Entry128, cqueue::Entry>::builder()
        .build(2)
        .is_ok()
        && possible_cpus_listed().is_some()
}

/// Starts [`RINGS_PER_CPU`] rings per possible CPU on the session's `device`, each with
/// entries of `payload` bytes (the kernel's largest request or reply body),
/// and returns once every ring has registered its entries, or the first
/// failure (the caller must not serve the view then: the kernel would hold
/// every request). Threads end when the session does.
pub fn start(device: OwnedFd, shared: Arc<Shared>, payload: usize) -> std::io::Result<()> {
    let device = Arc::new(device);
    let (started, reports) = channel();
    let queues = possible_cpus();
    for qid in 0..queues {
        for n in 0..RINGS_PER_CPU {
            let (device, shared, started) =
                (Arc::clone(&device), Arc::clone(&shared), started.clone());
            std::thread::Builder::new()
                .name(format!("seal-ring-{qid}-{n}"))
                .spawn(move || {
                    if let Err(e) = serve_queue(qid, &device, &shared, payload, started) {
                        tracing::warn!("FUSE ring {qid} ended: {e}");
                    }
                })?;
        }
    }
    for _ in 0..usize::from(queues) * RINGS_PER_CPU {
        match reports.recv_timeout(std::time::Duration::from_secs(5)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(std::io::Error::other("a ring did not register in 5 s")),
        }
    }
    Ok(())
}

/// The CPUs the kernel may have (`/sys/devices/system/cpu/possible`): it
/// makes a queue for each, and uses the rings once every one has entries.
fn possible_cpus() -> u16 {
    possible_cpus_listed().unwrap_or(1)
}

fn possible_cpus_listed() -> Option<u16> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").ok()?;
    let last = text.trim().rsplit([',', '-']).next()?;
    last.parse::<u16>().ok().map(|n| n + 1)
}

/// One entry of a ring: its header and payload buffers, and the iovecs
/// naming them (boxed, so their addresses hold while the kernel has them).
struct Slot {
    header: Box<[u8; HEADER_SIZE]>,
    payload: Vec<u8>,
    iov: Box<[libc::iovec; 2]>,
}

impl Slot {
    fn new(payload: usize) -> Slot {
        let mut header = Box::new([0u8; HEADER_SIZE]);
        let mut payload = vec![0u8; payload];
        let iov = Box::new([
            libc::iovec {
                iov_base: header.as_mut_ptr().cast(),
                iov_len: HEADER_SIZE,
            },
            libc::iovec {
                iov_base: payload.as_mut_ptr().cast(),
                iov_len: payload.len(),
            },
        ]);
        Slot {
            header,
            payload,
            iov,
        }
    }
}

/// A reply on its way to a ring entry, from whichever thread served it.
struct Done {
    slot: usize,
    error: i32,
    body: Vec<u8>,
}

/// Where a request's reply goes: back to its ring's thread. A reply
/// dropped unsent (its request's work panicked) answers `EIO`, so that the
/// ring entry is never lost.
struct Reply {
    slot: usize,
    ring_thread: ThreadId,
    done: Option<Sender<Done>>,
    wake: Arc<EventFd>,
}

impl Reply {
    fn send(mut self, answer: Result<Body, FsError>, op: &'static str) {
        let (error, body) = match answer {
            Ok(body) => (0, body.0),
            Err(e) => (-i32::from(e.reply(op)), Vec::new()),
        };
        self.deliver(error, body);
    }

    fn errno(mut self, errno: i32) {
        self.deliver(-errno, Vec::new());
    }

    fn deliver(&mut self, error: i32, body: Vec<u8>) {
        let Some(done) = self.done.take() else { return };
        let _ = done.send(Done {
            slot: self.slot,
            error,
            body,
        });
        if std::thread::current().id() != self.ring_thread {
            // A worker's reply: wake the ring's thread to commit it.
            let _ = self.wake.write(1);
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        self.deliver(-libc::EIO, Vec::new());
    }
}

fn cmd(commit_id: u64, qid: u16) -> [u8; 80] {
    // `struct fuse_uring_cmd_req`: flags, commit_id, qid.
    let mut c = [0u8; 80];
    c[8..16].copy_from_slice(&commit_id.to_ne_bytes());
    c[16..18].copy_from_slice(&qid.to_ne_bytes());
    c
}

/// A ring command naming `slot`'s two buffers.
fn uring_cmd(device: &OwnedFd, op: u32, commit_id: u64, qid: u16, slot: &Slot) -> squeue::Entry128 {
    let entry = opcode::UringCmd80::new(types::Fd(device.as_raw_fd()), op)
        .cmd(cmd(commit_id, qid))
        .addr(Some(slot.iov.as_ptr() as u64))
        .build();
    with_iov_count(entry, 2)
}

/// Sets the entry's `len` (the number of iovecs), which `UringCmd80` leaves
/// at 0 and FUSE requires to be 2.
fn with_iov_count(entry: squeue::Entry128, count: u32) -> squeue::Entry128 {
    const _: () = assert!(std::mem::size_of::<squeue::Entry128>() == 128);
    // SAFETY: `Entry128` is a `repr(C)` `io_uring_sqe` followed by 64 bytes
    // of command, 128 bytes in all (checked above), every bit pattern of
    // which is a valid value; `len` is the u32 at byte 24 of the sqe.
    let mut raw: [u8; 128] = unsafe { std::mem::transmute(entry) };
    raw[24..28].copy_from_slice(&count.to_ne_bytes());
    // SAFETY: as above.
    unsafe { std::mem::transmute::<[u8; 128], squeue::Entry128>(raw) }
}

fn serve_queue(
    qid: u16,
    device: &OwnedFd,
    shared: &Arc<Shared>,
    payload: usize,
    started: Sender<std::io::Result<()>>,
) -> std::io::Result<()> {
    let mut cpu = nix::sched::CpuSet::new();
    if cpu.set(qid.into()).is_ok() {
        // Held to its CPU: the requests queued there are served there.
        if std::env::var_os("SEAL_RING_NOPIN").is_none() {
            let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &cpu);
        }
    }
    let wake = Arc::new(EventFd::from_value_and_flags(0, EfdFlags::EFD_CLOEXEC)?);
    // The buffers the kernel writes are made before the ring, so that the
    // ring (dropped first: its entries cancelled) never outlives them.
    let mut counter = Box::new([0u8; 8]);
    let (done_tx, done_rx): (Sender<Done>, Receiver<Done>) = channel();
    let mut slots: Vec<Slot> = (0..ENTRIES).map(|_| Slot::new(payload)).collect();
    let mut commit_ids = vec![0u64; ENTRIES];
    let mut ring: IoUring<squeue::Entry128, cqueue::Entry> =
        IoUring::builder().build((2 * MAX_ENTRIES + 2) as u32)?;
    let read_counter = |counter: &mut [u8; 8]| {
        opcode::Read::new(types::Fd(wake.as_fd().as_raw_fd()), counter.as_mut_ptr(), 8)
            .build()
            .user_data(WOKEN)
            .into()
    };
    {
        let mut sq = ring.submission();
        for (i, slot) in slots.iter().enumerate() {
            let entry = uring_cmd(device, CMD_REGISTER, 0, qid, slot).user_data(i as u64);
            // SAFETY: the slot's buffers and iovecs are heap allocations
            // that stay where they are and outlive the ring (made before it,
            // dropped after it).
            unsafe { sq.push(&entry) }.map_err(|_| std::io::Error::other("ring full"))?;
        }
        let read: squeue::Entry128 = read_counter(&mut counter);
        // SAFETY: the counter outlives the ring (made before it).
        unsafe { sq.push(&read) }.map_err(|_| std::io::Error::other("ring full"))?;
    }
    // A registration the kernel refuses completes at once: tell the mount,
    // which must not serve the view then.
    let mut pending: Vec<(u64, i32)> = match ring.submit() {
        Ok(_) => ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect(),
        Err(e) => {
            let _ = started.send(Err(std::io::Error::new(
                e.kind(),
                format!("ring {qid}: {e}"),
            )));
            return Err(e);
        }
    };
    if let Some(&(_, refused)) = pending
        .iter()
        .find(|&&(data, result)| data != WOKEN && result < 0)
    {
        let e = std::io::Error::from_raw_os_error(-refused);
        let _ = started.send(Err(std::io::Error::new(
            e.kind(),
            format!("ring {qid}: {e}"),
        )));
        return Err(e);
    }
    let _ = started.send(Ok(()));
    let ring_thread = std::thread::current().id();
    let mut live = ENTRIES;
    let mut answered: Vec<Done> = Vec::new();
    loop {
        if pending.is_empty() {
            match ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
        let completed: Vec<(u64, i32)> = std::mem::take(&mut pending)
            .into_iter()
            .chain(ring.completion().map(|c| (c.user_data(), c.result())))
            .collect();
        let mut rearm = false;
        for (data, result) in completed {
            if data == WOKEN {
                rearm = true;
                continue;
            }
            let i = data as usize;
            if result < 0 {
                match -result {
                    // The session ended.
                    libc::ENOTCONN | libc::ENODEV => return Ok(()),
                    // The kernel refused the registration (the classic
                    // loop serves everything then) or this entry's commit:
                    // the entry is lost, the others serve on.
                    errno => {
                        let e = std::io::Error::from_raw_os_error(errno);
                        tracing::warn!("FUSE ring {qid}, entry {i}: {e}");
                        live -= 1;
                        if live == 0 {
                            return Err(e);
                        }
                        continue;
                    }
                }
            }
            let slot = &slots[i];
            let ent = &slot.header[ENT_IN_OUT..];
            commit_ids[i] = u64::from_ne_bytes(ent[8..16].try_into().unwrap_or_default());
            let payload_len =
                u32::from_ne_bytes(ent[16..20].try_into().unwrap_or_default()) as usize;
            let reply = Reply {
                slot: i,
                ring_thread,
                done: Some(done_tx.clone()),
                wake: Arc::clone(&wake),
            };
            let Ok(h) = wire::header(&slot.header[..]) else {
                reply.errno(libc::EIO);
                continue;
            };
            let fixed = &slot.header[OP_IN..OP_IN + wire::fixed_size(h.opcode).min(OP_IN)];
            let rest = &slot.payload[..payload_len.min(slot.payload.len())];
            match wire::decode(&h, fixed, rest) {
                Ok(request) => {
                    // One line per request, as `fuser` logs those of the
                    // classic loop (the request counts of the tests and
                    // benchmarks read both).
                    tracing::debug!(
                        "FUSE({:3}) ino {:#018x} {}",
                        h.unique,
                        h.nodeid,
                        request.describe()
                    );
                    // A panic drops the reply, which answers EIO; the ring
                    // serves on.
                    let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        serve(shared, &h, request, reply)
                    }));
                    if served.is_err() {
                        tracing::error!("FUSE ring {qid}: a request's work panicked");
                    }
                    // Not answered here: a worker has it, and its entry
                    // until it answers. Register a fresh one meanwhile.
                    answered.extend(done_rx.try_iter());
                    let handed_off = !answered.iter().any(|d| d.slot == i);
                    if handed_off && slots.len() < MAX_ENTRIES {
                        let slot = Slot::new(payload);
                        let entry = uring_cmd(device, CMD_REGISTER, 0, qid, &slot)
                            .user_data(slots.len() as u64);
                        slots.push(slot);
                        commit_ids.push(0);
                        live += 1;
                        // SAFETY: as at registration.
                        unsafe { ring.submission().push(&entry) }
                            .map_err(|_| std::io::Error::other("ring full"))?;
                    }
                }
                Err(wire::Malformed) => reply.errno(libc::EIO),
            }
        }
        answered.extend(done_rx.try_iter());
        for done in answered.drain(..) {
            let slot = &mut slots[done.slot];
            let len = done.body.len().min(slot.payload.len());
            slot.payload[..len].copy_from_slice(&done.body[..len]);
            let unique = u64::from_ne_bytes(slot.header[8..16].try_into().unwrap_or_default());
            slot.header[..wire::OUT_HEADER]
                .copy_from_slice(&wire::out_header(unique, done.error, len));
            slot.header[ENT_IN_OUT + 16..ENT_IN_OUT + 20]
                .copy_from_slice(&(len as u32).to_ne_bytes());
            let entry = uring_cmd(
                device,
                CMD_COMMIT_AND_FETCH,
                commit_ids[done.slot],
                qid,
                slot,
            )
            .user_data(done.slot as u64);
            // SAFETY: as at registration.
            unsafe { ring.submission().push(&entry) }
                .map_err(|_| std::io::Error::other("ring full"))?;
        }
        if rearm {
            let read = read_counter(&mut counter);
            // SAFETY: as at registration.
            unsafe { ring.submission().push(&read) }
                .map_err(|_| std::io::Error::other("ring full"))?;
        }
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

/// Serves one request: the classic loop's `fuse.rs`, on the wire.
fn serve(shared: &Arc<Shared>, h: &InHeader, request: Request<'_>, reply: Reply) {
    let _request = seal_gate::feed::RequestScope::begin();
    let view = shared.dispatch.shared();
    let (ino, who) = (h.nodeid, who(h));
    match request {
        Request::Lookup { name } => {
            let heavy = |view: &View<DevBacking>| view.may_verify(ino, Some(name), false);
            let name = name.to_os_string();
            shared.dispatch.run_heavy_elsewhere(heavy, move |view| {
                let answer = match view.lookup(ino, &name, who) {
                    Ok(e) => Ok(entry_body(&e)),
                    Err(FsError::Absent(ttl)) => {
                        let mut b = Body::default();
                        b.entry(&super::fuse::absent_attr(), ttl, ttl);
                        Ok(b)
                    }
                    Err(e) => Err(e),
                };
                reply.send(answer, "lookup");
            });
        }
        Request::Forget { nlookup } => view.forget(ino, nlookup),
        Request::BatchForget { forgets } => {
            for (node, nlookup) in forgets {
                view.forget(node, nlookup);
            }
        }
        Request::Getattr { fh } => {
            let answer = view.getattr(ino, fh).map(|e| {
                let mut b = Body::default();
                b.attr_out(&e.attr, e.attr_ttl);
                b
            });
            reply.send(answer, "getattr");
        }
        Request::Setattr { fh, set } => {
            let answer = view.setattr(ino, fh, set, who).map(|e| {
                let mut b = Body::default();
                b.attr_out(&e.attr, e.attr_ttl);
                b
            });
            reply.send(answer, "setattr");
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
            let heavy = |view: &View<DevBacking>| view.may_verify(ino, None, false);
            let registrar = shared.registrar.clone();
            shared.dispatch.run_heavy_elsewhere(heavy, move |view| {
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
                let heavy = |view: &View<DevBacking>| view.may_verify(ino, None, false);
                shared.dispatch.run_heavy_elsewhere(heavy, move |view| {
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
            reply.send(Ok(Body::default()), "release");
        }
        Request::Opendir => {
            if view.dirs_in_kernel() {
                // The kernel opens directories itself from now on.
                reply.errno(libc::ENOSYS);
                return;
            }
            let heavy = |view: &View<DevBacking>| view.may_verify(ino, None, true);
            shared.dispatch.run_heavy_elsewhere(heavy, move |view| {
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
            let heavy = |view: &View<DevBacking>| {
                fh == 0 && offset == 0 && view.may_verify(ino, None, true)
            };
            shared.dispatch.run_heavy_elsewhere(heavy, move |view| {
                let answer = view.readdir(ino, fh, offset, who).map(|entries| {
                    let mut b = Body::default();
                    for (next, item) in entries {
                        if b.dirent(
                            size as usize,
                            None,
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
            let heavy = |view: &View<DevBacking>| {
                fh == 0 && offset == 0 && view.may_verify(ino, None, true)
            };
            shared.dispatch.run_heavy_elsewhere(heavy, move |view| {
                let mut b = Body::default();
                let result = view.readdirplus(ino, fh, offset, who, &mut |e| {
                    b.dirent(
                        size as usize,
                        Some((&e.attr, e.ttl)),
                        e.ino,
                        e.next_offset,
                        e.attr.kind,
                        e.name,
                    )
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
            let answer = view
                .access(ino, mask & libc::W_OK as u32 != 0, who)
                .map(|()| Body::default());
            reply.send(answer, "access");
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
            let answer = view
                .setxattr(ino, name, value, flags, who)
                .map(|()| Body::default());
            reply.send(answer, "setxattr");
        }
        Request::Removexattr { name } => {
            reply.send(
                view.removexattr(ino, name, who).map(|()| Body::default()),
                "removexattr",
            );
        }
        Request::Mknod { name, mode, rdev } => {
            reply.send(
                view.mknod(ino, name, Mknod { mode, rdev }, who)
                    .map(|e| entry_body(&e)),
                "mknod",
            );
        }
        Request::Mkdir { name, mode } => {
            reply.send(
                view.mkdir(ino, name, mode, who).map(|e| entry_body(&e)),
                "mkdir",
            );
        }
        Request::Symlink { name, target } => {
            reply.send(
                view.symlink(ino, name, target, who).map(|e| entry_body(&e)),
                "symlink",
            );
        }
        Request::Link { oldnode, name } => {
            reply.send(
                view.link(oldnode, ino, name, who).map(|e| entry_body(&e)),
                "link",
            );
        }
        Request::Unlink { name } => {
            reply.send(
                view.unlink(ino, name, who).map(|()| Body::default()),
                "unlink",
            );
        }
        Request::Rmdir { name } => {
            reply.send(
                view.rmdir(ino, name, who).map(|()| Body::default()),
                "rmdir",
            );
        }
        Request::Rename {
            name,
            newdir,
            newname,
            flags,
        } => {
            let done = view.rename(ino, name, newdir, newname, flags, who);
            reply.send(done.map(|()| Body::default()), "rename");
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
            reply.send(
                view.fsync(ino, fh, datasync).map(|()| Body::default()),
                "fsync",
            );
        }
        Request::Fsyncdir | Request::Destroy => reply.send(Ok(Body::default()), "fsyncdir"),
        Request::Fallocate {
            fh,
            offset,
            length,
            mode,
        } => {
            let done = view.fallocate(ino, fh, offset, length, mode, who);
            reply.send(done.map(|()| Body::default()), "fallocate");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(done: Sender<Done>) -> Reply {
        Reply {
            slot: 3,
            ring_thread: std::thread::current().id(),
            done: Some(done),
            wake: Arc::new(EventFd::from_value_and_flags(0, EfdFlags::EFD_NONBLOCK).unwrap()),
        }
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
        let wake = Arc::clone(&r.wake);
        std::thread::spawn(move || r.errno(libc::ENOENT))
            .join()
            .unwrap();
        assert_eq!(rx.try_recv().unwrap().error, -libc::ENOENT);
        assert_eq!(wake.read().unwrap(), 1, "the counter was not woken");
    }
}
