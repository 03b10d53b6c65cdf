//! The classic transport: requests read from `/dev/fuse` by a few threads,
//! each on a clone of the session's device (the kernel hands each request
//! to one reader, and a clone has a processing queue of its own), decoded
//! by [`wire`] and served by [`serve`]; a reply is written to the device
//! its request came from. It serves every kernel; where the rings run
//! (`ring.rs`), it still serves what the kernel sends through the device:
//! `FORGET`, `INTERRUPT`, and the requests made before the rings registered.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::thread::JoinHandle;

use nix::errno::Errno;

use super::serve::{self, Reply, Shared};
use super::wire;

/// The largest request: a write of `fuser`'s largest `max_write` (which the
/// handshake offers the kernel) and its headers. The kernel refuses a read
/// into a buffer smaller than its `max_write` allows.
const BUFFER: usize = (16 << 20) + 4096;

// `FUSE_DEV_IOC_CLONE`: binds a new `/dev/fuse` descriptor to the session
// of the one named.
nix::ioctl_read!(clone_ioctl, 229, 0, u32);

/// Starts `threads` readers of the session's `device`, each on a clone of
/// it (the first on a duplicate), and returns them; each ends when the
/// session does (the view unmounted).
pub fn start(
    device: BorrowedFd<'_>,
    shared: Arc<Shared>,
    threads: usize,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut readers = Vec::with_capacity(threads);
    for i in 0..threads.max(1) {
        let fd = match i {
            0 => device.try_clone_to_owned()?,
            _ => clone_device(device)?,
        };
        let shared = Arc::clone(&shared);
        readers.push(
            std::thread::Builder::new()
                .name(format!("seal-fuse-{i}"))
                .spawn(move || {
                    let _end = super::serve::EndOnPanic;
                    if let Err(e) = read_requests(Arc::new(fd), &shared) {
                        tracing::warn!("FUSE reader {i} ended: {e}");
                    }
                })?,
        );
    }
    Ok(readers)
}

/// A new `/dev/fuse` descriptor bound to the session of `device`.
fn clone_device(device: BorrowedFd<'_>) -> std::io::Result<OwnedFd> {
    let clone = nix::fcntl::open(
        "/dev/fuse",
        nix::fcntl::OFlag::O_RDWR | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )?;
    let mut session = device.as_raw_fd() as u32;
    // SAFETY: `clone` is an open `/dev/fuse` descriptor and `session` a live
    // u32 the ioctl only reads (the number of the session's descriptor).
    unsafe { clone_ioctl(clone.as_raw_fd(), &mut session) }?;
    Ok(clone)
}

/// Reads and serves requests from `device` until the session ends.
fn read_requests(device: Arc<OwnedFd>, shared: &Shared) -> std::io::Result<()> {
    let mut buf = vec![0u8; BUFFER];
    loop {
        let size = match nix::unistd::read(device.as_fd(), &mut buf) {
            Ok(size) => size,
            // Interrupted, or a request withdrawn before it was read.
            Err(Errno::EINTR | Errno::EAGAIN | Errno::ENOENT) => continue,
            // Unmounted.
            Err(Errno::ENODEV) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let request = &buf[..size];
        let Ok(h) = wire::header(request) else {
            tracing::warn!("FUSE: a request shorter than its header ({size} bytes)");
            continue;
        };
        let reply = Reply::device(Arc::clone(&device), h.unique);
        let fixed_end = (wire::IN_HEADER + wire::fixed_size(h.opcode)).min(size);
        let fixed = &request[wire::IN_HEADER..fixed_end];
        let rest = &request[fixed_end..(h.len as usize).clamp(fixed_end, size)];
        serve::decode_and_serve(shared, &h, fixed, rest, reply);
    }
}
