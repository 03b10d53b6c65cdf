//! FUSE over io_uring (Linux 6.14 and later, with the `fuse` module's
//! `enable_uring` on): rings per CPU, each served by a thread held to that
//! CPU. The kernel queues a request on the rings of the CPU that made it,
//! so it is answered there: no wake-up of another CPU, which is most of what a
//! classic round trip costs (docs/ARCHITECTURE.md, "Where FUSE is the
//! limit").
//!
//! `fuser` still mounts and answers `INIT` (asking `FUSE_OVER_IO_URING`),
//! and the classic loop (`device.rs`) still serves what the kernel sends
//! through `/dev/fuse`: `FORGET` and `INTERRUPT`, and the requests made
//! before every CPU's ring was registered. Everything else comes here,
//! decoded by [`wire`] and served by [`serve`] as the classic loop's; a
//! request that may verify a bundle is always handed to a verification
//! worker, and its reply comes back to the ring's thread, which alone may
//! submit.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use io_uring::{IoUring, cqueue, opcode, squeue, types};
use nix::sys::eventfd::{EfdFlags, EventFd};

use super::serve::{self, Done, Reply, Shared};
use super::wire;

/// Rings per CPU, each served by its own thread with one entry, so that an
/// entry the kernel may hand a request to always has an idle thread behind
/// it: a request that blocks its thread (a listing of a huge directory, one
/// waiting for a verification in flight) leaves the CPU's other requests to
/// the other rings, as the classic loop's six threads do.
pub const RINGS_PER_CPU: usize = 4;
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
                    let _end = super::serve::EndOnPanic;
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
            let reply = Reply::ring(i, done_tx.clone(), Arc::clone(&wake));
            let Ok(h) = wire::header(&slot.header[..]) else {
                reply.errno(libc::EIO);
                continue;
            };
            let fixed = &slot.header[OP_IN..OP_IN + wire::fixed_size(h.opcode).min(OP_IN)];
            let rest = &slot.payload[..payload_len.min(slot.payload.len())];
            serve::decode_and_serve(shared, &h, fixed, rest, reply);
            // Not answered here: a worker has it, and its entry
            // until it answers. Register a fresh one meanwhile.
            answered.extend(done_rx.try_iter());
            let handed_off = !answered.iter().any(|d| d.slot == i);
            if handed_off && slots.len() < MAX_ENTRIES {
                let slot = Slot::new(payload);
                let entry =
                    uring_cmd(device, CMD_REGISTER, 0, qid, &slot).user_data(slots.len() as u64);
                slots.push(slot);
                commit_ids.push(0);
                live += 1;
                // SAFETY: as at registration.
                unsafe { ring.submission().push(&entry) }
                    .map_err(|_| std::io::Error::other("ring full"))?;
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
