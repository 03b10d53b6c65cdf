//! The open handles of a view and the passthrough backings they hold
//! ([`BackingCache`]), with the size of the verified bytes each inode's
//! handles serve.
//!
//! Locks: the handle table and the served sizes are each taken alone (a
//! handle is taken out of the table before it is read); the served sizes
//! may be asked while the inode table is held, never the other way round.

use std::collections::HashMap;
use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::DirItem;
use crate::mount::backing::{Backing, BackingCache};
use crate::mount::error::FsError;
use seal_gate::Who;
use seal_gate::snapshot::Snapshot;

/// An open file or directory.
pub(super) enum Handle<Id> {
    /// An ordinary file opened through inode `ino` (read here when not
    /// passed through; no file is kept when a kept backing serves it).
    Real {
        ino: u64,
        file: Option<File>,
        _backing: Option<Arc<Backing<Id>>>,
    },
    /// Verified bytes, served under inode `ino`.
    Verified {
        snapshot: Arc<Snapshot>,
        _backing: Option<Arc<Backing<Id>>>,
        ino: u64,
    },
    /// Directory `ino` opened for `who`: its listing, already filtered by
    /// the gate, taken at opendir or (when the kernel was to serve its own)
    /// at the first read; `cached`: the kernel was told it may keep it.
    Dir {
        ino: u64,
        who: Who,
        listing: Mutex<Option<Vec<DirItem>>>,
        cached: bool,
    },
}

/// The open handles of one view.
pub(super) struct Handles<Id> {
    table: Mutex<HashMap<u64, Arc<Handle<Id>>>>,
    next_fh: AtomicU64,
    /// Inodes with open handles of verified bytes: their size, and how many
    /// handles. Such an inode describes those bytes; when the disk's file
    /// under its name changes size, the name gets a new inode.
    served: Mutex<HashMap<u64, (u64, usize)>>,
    pub(super) backings: BackingCache<Id>,
}

impl<Id> Default for Handles<Id> {
    fn default() -> Self {
        Handles {
            table: Mutex::new(HashMap::new()),
            next_fh: AtomicU64::new(1),
            served: Mutex::new(HashMap::new()),
            backings: BackingCache::default(),
        }
    }
}

impl<Id> Handles<Id> {
    fn table(&self) -> MutexGuard<'_, HashMap<u64, Arc<Handle<Id>>>> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn served(&self) -> MutexGuard<'_, HashMap<u64, (u64, usize)>> {
        self.served.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `handle`; its number.
    pub(super) fn add(&self, handle: Handle<Id>) -> u64 {
        if let Handle::Verified { snapshot, ino, .. } = &handle {
            let mut served = self.served();
            let held = served.entry(*ino).or_insert((snapshot.len(), 0));
            *held = (snapshot.len(), held.1 + 1);
        }
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        self.table().insert(fh, Arc::new(handle));
        fh
    }

    /// The open handle `fh` ([`FsError::Stale`] when there is none).
    pub(super) fn get(&self, fh: u64) -> Result<Arc<Handle<Id>>, FsError> {
        self.table().get(&fh).cloned().ok_or(FsError::Stale)
    }

    /// Every open handle.
    pub(super) fn all(&self) -> Vec<Arc<Handle<Id>>> {
        self.table().values().cloned().collect()
    }

    /// Closes handle `fh`. Dropping it drops its snapshot and backing
    /// reference; the memory goes with the last one.
    pub(super) fn release(&self, fh: u64) {
        let handle = self.table().remove(&fh);
        if let Some(Handle::Verified { ino, .. }) = handle.as_deref() {
            let mut served = self.served();
            if let Some(held) = served.get_mut(ino) {
                held.1 -= 1;
                if held.1 == 0 {
                    served.remove(ino);
                }
            }
        }
        drop(handle);
    }

    /// The size of the verified bytes open handles of `ino` serve.
    pub(super) fn served_size(&self, ino: u64) -> Option<u64> {
        self.served().get(&ino).map(|(size, _)| *size)
    }
}
