//! Directories the kernel opens without asking: where the view has a
//! complete change feed, it answers the first `opendir` with `ENOSYS`, after
//! which the kernel sends no `opendir` and no `releasedir` again and may
//! keep every directory's listing (`FOPEN_CACHE_DIR`). A walk the kernel
//! has seen before then costs no request at all: before, each directory
//! cost two round trips (`git status` of a 20,000-file tree opens 300
//! directories).
//!
//! What moves where:
//!
//! * **A listing is decided when it is read** (a `readdir` at offset 0 with
//!   no handle), as an `opendir` decided it: a sealed or surface directory
//!   is listed only while the gate shows it, and each entry is decided on
//!   one read of the lockfile. The listing is kept by inode for the reads
//!   that continue it; their offsets carry its generation, so that a
//!   continuation never mixes two listings.
//! * **The kernel keeps a listing only where an `opendir` let it keep
//!   one**: a watched directory whose entries are all ordinary. Any other
//!   listing (a container of bundle roots, a directory holding an agent
//!   file, one the feed does not watch) is dropped again as soon as it is
//!   read: the next reader asks, and is decided afresh. Only a reader in
//!   the same instant gets the listing just decided.
//! * **A drop is told when the kernel holds what it drops.** The kernel
//!   stores a listing as its reader takes in each reply, after the reply
//!   left the view, and a drop told before that finds nothing to drop (the
//!   kernel keeps no version of it): the listing it then stores would be
//!   kept. So the drop is told at the read that continues the listing, by
//!   the thread that answers it: the kernel sends that read only after it
//!   has taken in the replies before, and it ends every listing with one
//!   (the read that finds no more entries).
//!   Likewise a listing decided before a drop the feed's listener told for
//!   another reason (a change on the disk, a bundle changed, a new
//!   `seal.json`) is dropped again at its continuation: it may hold what
//!   that drop was for.
//! * **Kept listings are kept true** as before: the directory feed makes
//!   the kernel drop a listing when a name in it changes on the disk, the
//!   kernel drops it itself when a name changes through the view, and a new
//!   `seal.json` (which may seal a name an ordinary listing holds) or a lost
//!   event makes the kernel forget every entry and listing.
//!
//! Without a complete change feed, and under `--rehash-every-open`, every
//! `opendir` still reaches the view.

use std::collections::HashMap;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::{DirItem, View};
use crate::mount::error::FsError;
use seal_gate::Who;

/// How long a listing is kept for the reads that continue it (they follow
/// within milliseconds; a reader that pauses longer gets a listing taken
/// again, from where it stopped).
const CONTINUE_FOR: Duration = Duration::from_secs(30);
/// At most this many directories' listings are kept for continuations.
const LISTINGS_MAX: usize = 4096;

/// Listings read without an `opendir`, by directory inode, kept for the
/// reads that continue them, and the generation of the next one (each lock
/// taken alone).
pub(super) struct KernelListings {
    by_dir: Mutex<HashMap<u64, KernelListing>>,
    generation: AtomicU32,
}

impl Default for KernelListings {
    fn default() -> Self {
        KernelListings {
            by_dir: Mutex::new(HashMap::new()),
            generation: AtomicU32::new(1),
        }
    }
}

impl KernelListings {
    pub(super) fn by_dir(&self) -> MutexGuard<'_, HashMap<u64, KernelListing>> {
        self.by_dir.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A listing served without an `opendir`, kept for its continuations.
pub(super) struct KernelListing {
    generation: u32,
    items: Arc<Vec<DirItem>>,
    taken: Instant,
    /// Whether the kernel may keep it, as long as no drop was told after
    /// it was decided (the count of drops then).
    kept: bool,
    drops_before: u64,
}

/// The offset that follows entry `index` of the listing of `generation`.
fn offset_after(generation: u32, index: usize) -> u64 {
    (u64::from(generation) << 32) | (index as u64 + 1)
}

impl<Id> View<Id> {
    /// Whether the kernel opens directories without asking (see the
    /// module): with a complete change feed, set before the first request.
    pub fn dirs_in_kernel(&self) -> bool {
        self.gate.reuses_verifications() && self.kernel.told() && self.kernel.dir_feed().is_some()
    }

    /// The entries of directory `ino` from `offset` on, for a read without
    /// an `opendir` (entry `i` is followed by [`offset_after`]`(generation,
    /// i)`), and whether the kernel may keep the listing.
    pub(super) fn kernel_listing(
        &self,
        ino: u64,
        offset: u64,
        who: Who,
    ) -> Result<(Vec<(u64, DirItem)>, bool), FsError> {
        let generation = (offset >> 32) as u32;
        let from = (offset & u64::from(u32::MAX)) as usize;
        if offset != 0 {
            let held = self
                .listings
                .by_dir()
                .get(&ino)
                .filter(|l| l.generation == generation)
                .map(|l| {
                    (
                        l.items.clone(),
                        l.kept && l.drops_before == self.drops_told(),
                    )
                });
            if let Some((items, still_kept)) = held {
                // The kernel has taken in every reply before this read.
                if !still_kept {
                    self.drop_stored_listing(ino);
                }
                return Ok((numbered(&items, generation, from), false));
            }
        }
        // Counted before the listing is decided: a drop told while it is
        // decided may be for something it holds.
        let drops_before = self.drops_told();
        let (items, kept) = self.take_listing(ino, who)?;
        let generation = self
            .listings
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let items = Arc::new(items);
        {
            let mut listings = self.listings.by_dir();
            if listings.len() >= LISTINGS_MAX {
                listings.retain(|_, l| l.taken.elapsed() < Duration::from_secs(1));
            }
            listings.insert(
                ino,
                KernelListing {
                    generation,
                    items: items.clone(),
                    taken: Instant::now(),
                    kept,
                    drops_before,
                },
            );
        }
        if offset != 0 {
            // A continuation whose listing is gone starts where it stopped
            // in a listing taken now (as a reader of a changing directory
            // may see), and what the kernel stores of it mixes two: dropped.
            self.drop_stored_listing(ino);
        }
        Ok((numbered(&items, generation, from), kept))
    }

    /// Takes the listing of directory `ino` now, decided as an `opendir`
    /// decides it, and whether the kernel may keep it.
    fn take_listing(&self, ino: u64, who: Who) -> Result<(Vec<DirItem>, bool), FsError> {
        let (path, dir, fed) = self.dir_to_list(ino, who)?;
        let listing = self.list(ino, &path, std::os::fd::AsFd::as_fd(&dir), who)?;
        let kept = (fed && listing.all_ordinary) || self.bundle_listing_kept(&path);
        Ok((listing.items, kept))
    }

    fn drops_told(&self) -> u64 {
        self.kernel.drops_told()
    }

    /// Makes the kernel drop the listing of directory `ino` it has stored,
    /// at a read that continues it. Told from the request thread itself:
    /// the drop takes no lock the reader holds while it waits for this
    /// reply (a listing's pages are locked only while a reply is stored in
    /// them), and unlike a drop the feed's listener tells, it cannot wait
    /// behind a busy machine's other work.
    fn drop_stored_listing(&self, ino: u64) {
        if let Some(invalidate) = self.kernel.invalidator() {
            invalidate.listing(ino);
        }
    }

    /// Lets go of listings no read continued lately (the sweeper calls this
    /// every second).
    pub fn sweep_listings(&self) {
        let mut listings = self.listings.by_dir();
        listings.retain(|_, l| l.taken.elapsed() < CONTINUE_FOR);
        seal_gate::memory::shrink_if_sparse(&mut listings);
    }
}

/// The entries of `items` from index `from`, each with the offset after it.
fn numbered(items: &[DirItem], generation: u32, from: usize) -> Vec<(u64, DirItem)> {
    items
        .iter()
        .enumerate()
        .skip(from)
        .map(|(i, item)| (offset_after(generation, i), item.clone()))
        .collect()
}
