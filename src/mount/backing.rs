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
//! Backings of ordinary files are kept after their last handle closes
//! (bounded, dropped when the kernel forgets the inode), so that reopening an
//! unchanged file costs one `fstatat` instead of an open and a registration.
//!
//! Registration is the kernel's business ([`Register`]); the cache itself is
//! kernel-free, so the view runs in tests with a fake registrar.

use std::collections::HashMap;
use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::core::digest::Digest;

/// Registers a file descriptor as a passthrough backing with the kernel.
pub trait Register {
    type Id;
    fn register(&self, fd: BorrowedFd<'_>) -> io::Result<Self::Id>;
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

/// The backings of one mount.
pub struct BackingCache<Id> {
    /// Cleared when the kernel refuses passthrough (then everything is read
    /// through the daemon).
    enabled: AtomicBool,
    live: Mutex<HashMap<u64, Live<Id>>>,
    kept: Mutex<HashMap<u64, Kept<Id>>>,
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
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let unused_by_another = kept.get(&ino).is_some_and(|(kept_of, backing)| {
            // The same file (it serves a reader), registered by another.
            kept_of.serves(&of, false)
                && !kept_of.serves(&of, true)
                && Arc::strong_count(backing) == 1
        });
        if unused_by_another {
            kept.remove(&ino);
        }
    }

    /// Keeps the backing of an ordinary file after its handles close.
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
        kept.insert(ino, (of, backing));
    }

    /// The kept backing of `ino`, if any, with the content it holds.
    pub fn kept(&self, ino: u64) -> Option<Kept<Id>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(&ino).map(|(of, b)| (*of, b.clone()))
    }

    /// The kernel forgot `ino`: drop what is kept for it.
    pub fn forget(&self, ino: u64) {
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.remove(&ino);
            crate::memory::shrink_if_sparse(&mut kept);
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live.get(&ino).is_some_and(|(_, w)| w.strong_count() == 0) {
            live.remove(&ino);
            crate::memory::shrink_if_sparse(&mut live);
        }
    }

    /// How many backings are kept (for tests and memory accounting).
    pub fn kept_len(&self) -> usize {
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
