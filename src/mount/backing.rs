//! FUSE passthrough backings: which file the kernel reads an inode from.
//!
//! The kernel lets one inode have one backing file at a time, so the cache
//! hands out the live backing of an inode when it holds the same content,
//! registers a new one when none is live, and reports a [`Conflict`] when the
//! content changed while handles to the old one are open (the view then gives
//! the path a new inode). "Same content" is the real file's device and inode
//! number for ordinary files, and the SHA-256 the bytes were verified as for
//! snapshots.
//!
//! Backings are kept after their last handle closes (bounded, dropped when
//! the kernel forgets the inode), so that reopening a file costs no
//! registration: an ordinary file's until the table is full, so that
//! reopening it unchanged costs one `fstatat` instead of an open and a
//! registration; verified bytes' for as long as the gate keeps those bytes
//! after their last use ([`BackingCache::let_go_of_verified`]), so that a
//! backing never keeps a snapshot's memory longer than the gate would.
//!
//! Registration is the kernel's business ([`Register`]); the cache itself is
//! kernel-free, so the view runs in tests with a fake registrar.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use seal_core::digest::Digest;

/// Registers a file descriptor as a passthrough backing with the kernel.
pub trait Register {
    type Id;
    fn register(&self, fd: BorrowedFd<'_>) -> io::Result<Self::Id>;
}

/// A backing registered with the kernel through the session's device, by
/// whichever transport serves the open (the classic loop or a ring: the
/// registration is the device's, not a reply's); unregistered when dropped.
#[derive(Debug)]
pub struct DevBacking {
    /// The kernel's id of the backing, which an open's reply names.
    pub raw: u32,
    device: Arc<OwnedFd>,
}

nix::ioctl_write_ptr!(backing_close, 229, 2, u32);

impl Drop for DevBacking {
    fn drop(&mut self) {
        // SAFETY: `device` is an open /dev/fuse descriptor of the session
        // that registered `raw`, and the ioctl reads one u32 from the
        // pointer, which lives for the call.
        if let Err(e) = unsafe { backing_close(self.device.as_raw_fd(), &self.raw) } {
            tracing::debug!("closing backing {}: {e}", self.raw);
        }
    }
}

/// Registers backings through the session's device, once the session has
/// one (set right after the mount's handshake, before any open).
#[derive(Debug, Clone, Default)]
pub struct Registrar(Arc<OnceLock<Arc<OwnedFd>>>);

impl Registrar {
    /// The session's `/dev/fuse` (a duplicate of it: the registrar outlives
    /// the library's own descriptor).
    pub fn set_device(&self, device: OwnedFd) {
        let _ = self.0.set(Arc::new(device));
    }
}

impl Register for Registrar {
    type Id = DevBacking;
    fn register(&self, fd: BorrowedFd<'_>) -> io::Result<DevBacking> {
        let device = self
            .0
            .get()
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENODEV))?;
        let raw = fuser::BackingId::create_raw(device.as_fd(), fd)?;
        Ok(DevBacking {
            raw,
            device: Arc::clone(device),
        })
    }
}

/// What a passthrough backing file holds: a real file, or verified bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackingOf {
    /// A real file, registered with the credentials `by` (uid, gid): the
    /// kernel opens the backing file anew for each open of the inode, and
    /// writes it, with those credentials. An open to write registers as its
    /// caller, so that the disk drops set-ID bits as it would for that
    /// caller, and needs a backing registered by that caller (another's
    /// live one is a [`Conflict`]). An open to read registers as the daemon
    /// ([`DAEMON`]: no switch, nothing written) and is served by any
    /// backing of the same file.
    RealFile { dev: u64, ino: u64, by: (u32, u32) },
    /// Verified bytes (a sealed memfd: never written), registered by the
    /// daemon.
    Verified(Digest),
}

/// Who registers the backing of a file opened to read: the daemon.
pub const DAEMON: (u32, u32) = (0, 0);

impl BackingOf {
    /// Whether a backing holding `self` may serve an open for `wanted`
    /// (`writes`: the open may write): the same content, and for a writer
    /// the same registering caller.
    pub fn serves(&self, wanted: &BackingOf, writes: bool) -> bool {
        match (self, wanted) {
            (
                BackingOf::RealFile { dev, ino, by },
                BackingOf::RealFile {
                    dev: d,
                    ino: i,
                    by: b,
                },
            ) => dev == d && ino == i && (!writes || by == b),
            (held, wanted) => held == wanted,
        }
    }
}

/// A registered backing; the registration ends when the last reference goes.
#[derive(Debug)]
pub struct Backing<Id> {
    pub id: Id,
}

/// The inode already has a live backing with other content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict;

/// How many ordinary backings (open descriptors, two per backing with the
/// kernel's) are kept at most: a quarter of the descriptors the daemon may
/// open, and no more than a daemon that must give its memory back when the
/// load goes keeps well.
const KEPT_ORDINARY_BOUNDS: (usize, usize) = (256, 4096);

fn kept_ordinary_max() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
            .map_or(1024, |(soft, _)| soft);
        let quarter = usize::try_from(limit / 4).unwrap_or(usize::MAX);
        quarter.clamp(KEPT_ORDINARY_BOUNDS.0, KEPT_ORDINARY_BOUNDS.1)
    })
}

type Kept<Id> = (BackingOf, Arc<Backing<Id>>);
type Live<Id> = (BackingOf, Weak<Backing<Id>>);

/// A kept backing and when an open last took it.
struct KeptEntry<Id> {
    of: BackingOf,
    backing: Arc<Backing<Id>>,
    used: Instant,
}

/// The backings of one mount.
pub struct BackingCache<Id> {
    /// Cleared when the kernel refuses passthrough (then everything is read
    /// through the daemon).
    enabled: AtomicBool,
    live: Mutex<HashMap<u64, Live<Id>>>,
    kept: Mutex<HashMap<u64, KeptEntry<Id>>>,
}

impl<Id> Default for BackingCache<Id> {
    fn default() -> Self {
        BackingCache {
            enabled: AtomicBool::new(false),
            live: Mutex::new(HashMap::new()),
            kept: Mutex::new(HashMap::new()),
        }
    }
}

impl<Id> BackingCache<Id> {
    /// Passthrough is on once the kernel offered it at init.
    pub fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// The backing of inode `ino` for content `of` (for an open that may
    /// write, `writes`): the live one when it serves it
    /// ([`BackingOf::serves`]), a new one when none is live, `Ok(None)` when
    /// passthrough is off (or the kernel refuses it now: then it stays off).
    pub fn backing_for(
        &self,
        ino: u64,
        of: BackingOf,
        writes: bool,
        fd: BorrowedFd<'_>,
        register: &dyn Register<Id = Id>,
    ) -> Result<Option<Arc<Backing<Id>>>, Conflict> {
        if !self.is_enabled() {
            return Ok(None);
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((live_of, weak)) = live.get(&ino) {
            if let Some(backing) = weak.upgrade() {
                return if live_of.serves(&of, writes) {
                    Ok(Some(backing))
                } else {
                    Err(Conflict)
                };
            }
        }
        match register.register(fd) {
            Ok(id) => {
                let backing = Arc::new(Backing { id });
                live.insert(ino, (of, Arc::downgrade(&backing)));
                Ok(Some(backing))
            }
            Err(e) => {
                tracing::warn!(
                    "passthrough refused ({e}); serving reads from the daemon from now on"
                );
                self.enabled.store(false, Ordering::Relaxed);
                Ok(None)
            }
        }
    }

    /// Lets go of the kept backing of `ino` when it holds the file `of`
    /// names for another caller and no open handle holds it, so that the
    /// open asking registers its own (with its caller's credentials) instead
    /// of finding a [`Conflict`].
    pub fn release_other_callers(&self, ino: u64, of: BackingOf) {
        // The same file (it serves a reader), registered by another.
        self.release_unused_if(ino, |kept| {
            kept.serves(&of, false) && !kept.serves(&of, true)
        });
    }

    /// Lets go of the kept backing of `ino` when it holds verified bytes
    /// other than `of` and no open handle holds it (the bundle was pinned
    /// anew): the open asking registers its own bytes on the same inode, as
    /// it would had nothing been kept.
    pub fn release_other_verified(&self, ino: u64, of: BackingOf) {
        self.release_unused_if(ino, |kept| {
            matches!(kept, BackingOf::Verified(_)) && *kept != of
        });
    }

    /// Lets go of the kept backing of `ino` when no open handle holds it
    /// and what it holds makes way (`makes_way`).
    fn release_unused_if(&self, ino: u64, makes_way: impl Fn(&BackingOf) -> bool) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept
            .get(&ino)
            .is_some_and(|k| makes_way(&k.of) && Arc::strong_count(&k.backing) == 1)
        {
            kept.remove(&ino);
        }
    }

    /// Lets go of kept backings of verified bytes that no open took for
    /// `unused_for` and no handle holds (the sweeper calls this every
    /// second, with the time the gate keeps a bundle's bytes).
    pub fn let_go_of_verified(&self, unused_for: Duration) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|_, k| {
            !matches!(k.of, BackingOf::Verified(_))
                || k.used.elapsed() < unused_for
                || Arc::strong_count(&k.backing) > 1
        });
        seal_gate::memory::shrink_if_sparse(&mut kept);
    }

    /// Keeps the backing of a file after its handles close (an open took
    /// it now).
    pub fn keep(&self, ino: u64, backing: Arc<Backing<Id>>) {
        let of = {
            let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            match live.get(&ino) {
                Some((of, _)) => *of,
                None => return,
            }
        };
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let max = kept_ordinary_max();
        if kept.len() >= max && !kept.contains_key(&ino) {
            // Full: an eighth goes, whichever the table yields first (a
            // program that reads more files than fit in a cycle still finds
            // most of them kept; dropping all would find none).
            let evicted: Vec<u64> = kept.keys().take(max / 8 + 1).copied().collect();
            for ino in evicted {
                kept.remove(&ino);
            }
        }
        kept.insert(
            ino,
            KeptEntry {
                of,
                backing,
                used: Instant::now(),
            },
        );
    }

    /// The kept backing of `ino`, if any, with the content it holds.
    pub fn kept(&self, ino: u64) -> Option<Kept<Id>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(&ino).map(|k| (k.of, k.backing.clone()))
    }

    /// The kernel forgot `ino`: drop what is kept for it.
    pub fn forget(&self, ino: u64) {
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.remove(&ino);
            seal_gate::memory::shrink_if_sparse(&mut kept);
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live.get(&ino).is_some_and(|(_, w)| w.strong_count() == 0) {
            live.remove(&ino);
            seal_gate::memory::shrink_if_sparse(&mut live);
        }
    }

    /// How many backings are kept.
    #[cfg(test)]
    fn kept_len(&self) -> usize {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(std::sync::atomic::AtomicU64);

    impl Register for Counting {
        type Id = u64;
        fn register(&self, _fd: BorrowedFd<'_>) -> io::Result<u64> {
            Ok(self.0.fetch_add(1, Ordering::Relaxed))
        }
    }

    /// A cache with passthrough on, a counting registrar, and a descriptor
    /// to register (any will do for it).
    fn enabled() -> (BackingCache<u64>, Counting, std::fs::File) {
        let cache = BackingCache::<u64>::default();
        cache.enable();
        let register = Counting(std::sync::atomic::AtomicU64::new(0));
        (cache, register, std::fs::File::open("/").unwrap())
    }

    #[test]
    fn a_writer_gets_a_backing_of_its_own_caller_and_readers_take_any() {
        let (cache, register, fd) = enabled();
        let fd = std::os::fd::AsFd::as_fd(&fd);
        let by = |uid| BackingOf::RealFile {
            dev: 1,
            ino: 7,
            by: (uid, uid),
        };
        // A reader registered as the daemon; kept, no handle holds it.
        let read = cache.backing_for(9, by(0), false, fd, &register);
        let read = read.unwrap().unwrap();
        cache.keep(9, read.clone());
        drop(read);
        // A writer's open registers its own (written with its credentials)
        // in place of the kept one.
        cache.release_other_callers(9, by(1000));
        let written = cache.backing_for(9, by(1000), true, fd, &register);
        let written = written.unwrap().unwrap();
        assert_ne!(written.id, 0, "a new registration");
        cache.keep(9, written.clone());
        // A reader of any caller is served by it.
        let reader = cache.backing_for(9, by(0), false, fd, &register);
        assert_eq!(reader.unwrap().unwrap().id, written.id);
        // While a handle holds it, another caller's writer conflicts (the
        // view then gives the name a new inode) and nothing kept is dropped.
        cache.release_other_callers(9, by(0));
        let other = cache.backing_for(9, by(0), true, fd, &register);
        assert_eq!(other.unwrap_err(), Conflict);
        assert_eq!(cache.kept(9).map(|(of, _)| of), Some(by(1000)));
        // The same caller's next writer reuses it.
        let again = cache.backing_for(9, by(1000), true, fd, &register);
        assert_eq!(again.unwrap().unwrap().id, written.id);
    }

    #[test]
    fn verified_bytes_keep_their_backing_while_the_gate_would_keep_them() {
        let (cache, register, fd) = enabled();
        let fd = std::os::fd::AsFd::as_fd(&fd);
        let v1 = BackingOf::Verified(Digest::of(b"one"));
        let v2 = BackingOf::Verified(Digest::of(b"two"));
        // Opened, kept, closed: the next open of the same bytes registers
        // nothing.
        let first = cache
            .backing_for(5, v1, false, fd, &register)
            .unwrap()
            .unwrap();
        cache.keep(5, first.clone());
        let first_id = first.id;
        drop(first);
        let again = cache
            .backing_for(5, v1, false, fd, &register)
            .unwrap()
            .unwrap();
        assert_eq!(again.id, first_id, "reused, not registered again");
        // Other bytes while a handle holds the kept ones: a conflict (the
        // view gives the name a new inode); nothing is let go.
        cache.release_other_verified(5, v2);
        assert_eq!(
            cache.backing_for(5, v2, false, fd, &register).unwrap_err(),
            Conflict
        );
        drop(again);
        // No handle holds it: it makes way for the new bytes.
        cache.release_other_verified(5, v2);
        let new = cache
            .backing_for(5, v2, false, fd, &register)
            .unwrap()
            .unwrap();
        assert_ne!(new.id, first_id);
        cache.keep(5, new.clone());
        // An ordinary file's kept backing is not let go by time.
        let real = BackingOf::RealFile {
            dev: 1,
            ino: 6,
            by: DAEMON,
        };
        let ordinary = cache
            .backing_for(6, real, false, fd, &register)
            .unwrap()
            .unwrap();
        cache.keep(6, ordinary);
        // Held by a handle: kept past its time. Let go once unused.
        cache.let_go_of_verified(Duration::ZERO);
        assert!(cache.kept(5).is_some(), "a held backing was let go");
        drop(new);
        cache.let_go_of_verified(Duration::from_secs(60));
        assert!(cache.kept(5).is_some(), "let go before its time");
        cache.let_go_of_verified(Duration::ZERO);
        assert!(
            cache.kept(5).is_none(),
            "verified bytes kept past their time"
        );
        assert!(
            cache.kept(6).is_some(),
            "an ordinary backing let go by time"
        );
    }

    #[test]
    fn a_cycle_over_more_files_than_are_kept_still_finds_most_kept() {
        let (cache, register, fd) = enabled();
        let files = kept_ordinary_max() + kept_ordinary_max() / 4;
        let mut found = 0;
        for round in 0..2 {
            for ino in 0..files as u64 {
                let of = BackingOf::RealFile {
                    dev: 1,
                    ino,
                    by: (0, 0),
                };
                if round == 1 && cache.kept(ino).is_some_and(|(kept, _)| kept == of) {
                    found += 1;
                }
                let backing = cache
                    .backing_for(ino, of, false, std::os::fd::AsFd::as_fd(&fd), &register)
                    .unwrap()
                    .unwrap();
                cache.keep(ino, backing);
            }
        }
        assert!(cache.kept_len() <= kept_ordinary_max());
        // Dropping everything when full would find none on the second round.
        assert!(
            found > files / 2,
            "{found} of {files} found kept on the second round"
        );
    }
}
