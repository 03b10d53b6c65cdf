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
    RealFile { dev: u64, ino: u64 },
    Verified(Digest),
}

/// A registered backing; the registration ends when the last reference goes.
#[derive(Debug)]
pub struct Backing<Id> {
    pub id: Id,
}

/// The inode already has a live backing with other content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict;

/// How many ordinary backings (open descriptors) are kept at most.
const KEPT_ORDINARY_MAX: usize = 4096;

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

    /// The backing of inode `ino` for content `of`: the live one when it
    /// holds the same content, a new one when none is live, `Ok(None)` when
    /// passthrough is off (or the kernel refuses it now: then it stays off).
    pub fn backing_for(
        &self,
        ino: u64,
        of: BackingOf,
        fd: BorrowedFd<'_>,
        register: &dyn Register<Id = Id>,
    ) -> Result<Option<Arc<Backing<Id>>>, Conflict> {
        if !self.is_enabled() {
            return Ok(None);
        }
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((live_of, weak)) = live.get(&ino) {
            if let Some(backing) = weak.upgrade() {
                return if *live_of == of {
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
        if kept.len() >= KEPT_ORDINARY_MAX {
            kept.clear();
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
