//! What the kernel keeps of the view's answers, and telling it to forget
//! them: the only consumer of the change feeds' notices ([`View::apply`]).
//!
//! The kernel keeps entries, attributes, listings and (where it opens files
//! itself) pages for as long as the gate's lifetime column lets it; every
//! answer kept longer than a second is one this bookkeeping will make it
//! forget at the first change: bundle roots registered for their bundle's
//! notice ([`KernelCache::watched_roots`]), ordinary directories the
//! directory feed watches ([`KernelCache::fed`]), and the view's own changes
//! expected, so that their events tell the kernel nothing it knows.
//!
//! Locks: `watched_roots` may be held while the gate's cache is asked which
//! bundle a notice's tag stands for, and `dir_watches` while the directory
//! feed places a watch; neither is held while the inode table is taken, nor
//! while the kernel is told anything (telling it to forget an entry waits
//! for the directory's lock, which a lookup holds while it waits for a FUSE
//! thread that may need these).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::View;
use crate::mount::inodes::ROOT;
use seal_core::fs::fstat_fd;

/// Tells the kernel to forget what it remembers (the FUSE notify calls).
pub trait Invalidate: Send + Sync {
    /// Forget the entry `name` in directory `parent`.
    fn entry(&self, parent: u64, name: &OsStr);
    /// Forget the attributes of `ino`.
    fn inode(&self, ino: u64);
    /// Forget the attributes of file `ino` and every page of it the kernel
    /// keeps (files the kernel opens itself keep their pages).
    fn data(&self, ino: u64);
    /// Forget the attributes of directory `dir` and the listing of it the
    /// kernel keeps.
    fn listing(&self, dir: u64);
}

/// A directory the directory feed watches, for the inode the kernel knows
/// it by.
struct DirWatch {
    _watch: seal_gate::feed::EntryWatch,
    /// The directory watched (device, inode): its name may come to hold
    /// another one.
    disk: (u64, u64),
    /// Until when the kernel holds every entry of its last listing (a
    /// `readdirplus` from the start taught it them all, for
    /// [`seal_gate::FED_TTL`]),
    /// unless told to forget since.
    listed_until: Option<Instant>,
    /// Changes of names the view itself is making in it, whose events tell
    /// the kernel nothing it does not know (it keeps its own caches true
    /// for what it asked): the listener passes over one event for each.
    expected: Vec<Expected>,
}

/// A name change the view is making, recorded before it is made (so that
/// its event always finds it), with when.
struct Expected {
    name: OsString,
    naming: seal_gate::feed::Naming,
    since: Instant,
}

/// How long the listener waits for the event of a change the view made:
/// a record left over (a change the kernel reported no event for, such as
/// a rename onto another name of the same file) must not pass over
/// another's event for long.
const EXPECT_FOR: Duration = Duration::from_secs(1);

/// Expected changes kept per directory at most (beyond, events are acted
/// on: that only costs the kernel a lookup).
const EXPECTED_MAX: usize = 1024;

/// The kernel-cache bookkeeping of one view.
#[derive(Default)]
pub(super) struct KernelCache {
    /// Tells the kernel to forget (set once the session runs).
    invalidate: OnceLock<Box<dyn Invalidate>>,
    /// Bundle roots the kernel may remember, or is learning, by key: their
    /// entry (parent inode, name) and inode (0 while its lookup decides).
    watched_roots: Mutex<HashMap<seal_core::paths::BundleKey, (u64, OsString, u64)>>,
    /// The feed that watches ordinary directories for the kernel's caches
    /// (set with the invalidator, when the project's filesystem reports
    /// every change), and the directories it watches, by inode.
    dir_feed: OnceLock<Arc<seal_gate::feed::Feed>>,
    dir_watches: Mutex<HashMap<u64, DirWatch>>,
    /// How many times the kernel was told to drop a listing: a listing
    /// decided before a drop may have been stored by the kernel after it.
    listings_dropped: AtomicU64,
}

impl KernelCache {
    /// The kernel's notifier, once the session runs.
    pub(super) fn invalidator(&self) -> Option<&dyn Invalidate> {
        self.invalidate.get().map(|i| i.as_ref())
    }

    /// Whether the view tells the kernel to forget.
    pub(super) fn told(&self) -> bool {
        self.invalidate.get().is_some()
    }

    /// The directory feed, when the view has one.
    pub(super) fn dir_feed(&self) -> Option<&Arc<seal_gate::feed::Feed>> {
        self.dir_feed.get()
    }

    /// Until when the kernel holds every entry of the last listing of the
    /// watched directory `ino`.
    pub(super) fn listed_until(&self, ino: u64) -> Option<Instant> {
        self.dir_watches().get(&ino).and_then(|w| w.listed_until)
    }

    /// The kernel holds every entry of the listing of `ino` until `until`.
    pub(super) fn listed(&self, ino: u64, until: Instant) {
        if let Some(w) = self.dir_watches().get_mut(&ino) {
            w.listed_until = Some(until);
        }
    }

    /// The kernel forgot directory `ino`: its watch goes.
    pub(super) fn forget_dir(&self, ino: u64) {
        self.dir_watches().remove(&ino);
    }

    /// How many drops of a listing the kernel was told so far.
    pub(super) fn drops_told(&self) -> u64 {
        self.listings_dropped.load(Ordering::SeqCst)
    }

    fn dir_watches(&self) -> MutexGuard<'_, HashMap<u64, DirWatch>> {
        self.dir_watches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the directory feed watches directory `ino`, open as `dir`,
    /// placing the watch when it does not yet. Called before the caller
    /// reads the directory, so that no change after that read goes unseen.
    pub(super) fn fed(&self, ino: u64, dir: BorrowedFd<'_>) -> bool {
        let (Some(feed), Some(_)) = (self.dir_feed.get(), self.invalidate.get()) else {
            return false;
        };
        let Ok(st) = fstat_fd(dir) else {
            return false;
        };
        let disk = (st.st_dev, st.st_ino);
        let mut watches = self.dir_watches();
        if watches.get(&ino).is_some_and(|w| w.disk == disk) {
            return true;
        }
        // Another directory under the name now, or none yet.
        watches.remove(&ino);
        if feed.watch_room() == 0 {
            return false;
        }
        match feed.watch_entries(dir, ino) {
            Some(watch) => {
                watches.insert(
                    ino,
                    DirWatch {
                        _watch: watch,
                        disk,
                        listed_until: None,
                        expected: Vec::new(),
                    },
                );
                true
            }
            None => false,
        }
    }

    /// Tells the kernel to forget the attributes of `ino` (when the view
    /// can).
    pub(super) fn forget_attributes(&self, ino: u64) {
        if let Some(invalidate) = self.invalidate.get() {
            invalidate.inode(ino);
        }
    }

    /// Tells the kernel to drop its listing of directory `dir`, counted
    /// first: a listing decided before this may still be on its way to the
    /// kernel's cache, and the read that continues it then drops it again
    /// (see `kernel_dirs`).
    pub(super) fn drop_listing(&self, invalidate: &dyn Invalidate, dir: u64) {
        self.listings_dropped.fetch_add(1, Ordering::SeqCst);
        invalidate.listing(dir);
    }

    /// Records that the view is about to change `name` in directory `dir`
    /// (`naming`), when the directory feed watches `dir`.
    pub(super) fn expect(&self, dir: u64, name: &OsStr, naming: seal_gate::feed::Naming) {
        if let Some(w) = self.dir_watches().get_mut(&dir) {
            w.expected.retain(|e| e.since.elapsed() < EXPECT_FOR);
            if w.expected.len() < EXPECTED_MAX {
                w.expected.push(Expected {
                    name: name.to_os_string(),
                    naming,
                    since: Instant::now(),
                });
            }
        }
    }

    /// The change [`KernelCache::expect`]ed failed: its record goes, and since it
    /// may already have passed over another's event, the listener makes
    /// the kernel forget the name anyway.
    pub(super) fn expected_failed(&self, dir: u64, name: &OsStr, naming: seal_gate::feed::Naming) {
        let recorded = match self.dir_watches().get_mut(&dir) {
            Some(w) => {
                if let Some(i) = w
                    .expected
                    .iter()
                    .position(|e| e.name == name && e.naming == naming)
                {
                    w.expected.remove(i);
                }
                true
            }
            None => false,
        };
        if let (true, Some(feed)) = (recorded, self.dir_feed.get()) {
            feed.tell(seal_gate::feed::Notice::Entry {
                tag: dir,
                name: Some(name.to_os_string()),
                change: seal_gate::feed::EntryChange::Names(seal_gate::feed::Naming::Other),
            });
        }
    }

    /// Whether an event (`naming` of `name` in `dir`) is the one of a change
    /// the view made; its record is used up.
    fn take_expected(&self, dir: u64, name: &OsStr, naming: seal_gate::feed::Naming) -> bool {
        let mut watches = self.dir_watches();
        let Some(w) = watches.get_mut(&dir) else {
            return false;
        };
        match w
            .expected
            .iter()
            .position(|e| e.name == name && e.naming == naming && e.since.elapsed() < EXPECT_FOR)
        {
            Some(i) => {
                w.expected.remove(i);
                true
            }
            None => false,
        }
    }

    /// Bundle roots the kernel may remember (see the field).
    pub(super) fn watched_roots(
        &self,
    ) -> MutexGuard<'_, HashMap<seal_core::paths::BundleKey, (u64, OsString, u64)>> {
        self.watched_roots.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<Id> View<Id> {
    /// Lets the kernel keep ordinary entries and attributes long in the
    /// directories `feed` watches (the view places the watches as the
    /// kernel learns the directories; the feed's listener must pass its
    /// notices to [`View::apply`]).
    pub fn watch_directories(&self, feed: Arc<seal_gate::feed::Feed>) {
        let _ = self.kernel.dir_feed.set(feed);
    }

    /// Lets the view tell the kernel to forget (the session's notifier).
    pub fn set_invalidator(&self, invalidate: Box<dyn Invalidate>) {
        let _ = self.kernel.invalidate.set(invalidate);
    }

    /// Acts on a change-feed notice: the kernel forgets what the change
    /// makes stale (never decides anything: opens are checked anyway).
    pub fn apply(&self, notice: &seal_gate::feed::Notice) {
        use seal_gate::feed::Notice;
        let Some(invalidate) = self.kernel.invalidate.get() else {
            return;
        };
        let roots: Vec<(u64, OsString, u64)> = {
            let mut watched = self.kernel.watched_roots();
            match notice {
                // seal.json changed: any decision may have changed with it.
                Notice::Dirty(seal_gate::live::LOCKFILE_TAG) | Notice::Lost => {
                    watched.drain().map(|(_, v)| v).collect()
                }
                Notice::Dirty(tag) => match self.gate.bundle_of_tag(*tag) {
                    Some(key) => watched.remove(&key).into_iter().collect(),
                    None => Vec::new(),
                },
                Notice::Entry { tag, name, change } => {
                    drop(watched);
                    self.apply_entry(invalidate.as_ref(), *tag, name.as_deref(), *change);
                    return;
                }
            }
        };
        // Under a new seal.json every path must be looked up and decided
        // again: it may seal a name the kernel keeps as ordinary (an entry
        // kept ten minutes, a listing it reads without asking), and where
        // the kernel opens files itself nothing checks an open.
        let lockfile = *notice == Notice::Dirty(seal_gate::live::LOCKFILE_TAG);
        if *notice == Notice::Lost || lockfile {
            // Events of the directory feed were lost (nothing the kernel
            // keeps of the ordinary tree can be trusted), or every decision
            // may have changed.
            match lockfile {
                true => tracing::info!("seal.json changed: the kernel forgets what it kept"),
                false => tracing::info!(
                    "change feed events were lost (queue overflow): the kernel forgets what it kept"
                ),
            }
            for w in self.kernel.dir_watches().values_mut() {
                w.listed_until = None;
            }
            // Taken before the loop: the table's lock must not be held while
            // the kernel is told (telling it waits for the directory's lock,
            // which a lookup holds while it waits for a FUSE thread that
            // needs the table).
            let all = self.inodes().below(ROOT);
            for (parent, name, ino) in all.iter().rev() {
                invalidate.entry(*parent, name);
                self.kernel.drop_listing(invalidate.as_ref(), *ino);
            }
            self.kernel.drop_listing(invalidate.as_ref(), ROOT);
        }
        tracing::debug!("feed notice {notice:?}: forgetting {} roots", roots.len());
        for (parent, name, ino) in roots {
            // A root registered by a lookup still deciding (or one decided
            // without the feed's proof) has no inode recorded (0): the one
            // the view numbered for its name, if any, stands for it.
            let ino = match ino {
                0 => self.inodes().peek(parent, &name).unwrap_or(0),
                ino => ino,
            };
            if ino != 0 {
                // What the kernel remembers below the root goes too: an
                // entry held open keeps its directory's dentry alive, and
                // the next walk would find it again.
                let below = self.inodes().below(ino);
                for (p, n, i) in below.iter().rev() {
                    invalidate.entry(*p, n);
                    // Attributes and cached pages: for a directory of the
                    // bundle, the listing the kernel may keep.
                    self.kernel.drop_listing(invalidate.as_ref(), *i);
                }
            }
            invalidate.entry(parent, &name);
            // The listing of the directory holding the root shows it or
            // not: it goes too (where the kernel reads listings without an
            // opendir, it may hold one read a moment ago).
            self.kernel.drop_listing(invalidate.as_ref(), parent);
            if ino != 0 {
                self.kernel.drop_listing(invalidate.as_ref(), ino);
            }
        }
    }

    /// Acts on a change in the watched directory `dir`: the kernel forgets
    /// the entry `name` (when names changed), the attributes of what it
    /// names, and the directory's own.
    fn apply_entry(
        &self,
        invalidate: &dyn Invalidate,
        dir: u64,
        name: Option<&OsStr>,
        change: seal_gate::feed::EntryChange,
    ) {
        use seal_gate::feed::EntryChange;
        if let (EntryChange::Names(naming), Some(name)) = (change, name) {
            if self.kernel.take_expected(dir, name, naming) {
                return;
            }
        }
        let child = name.and_then(|n| self.inodes().peek(dir, n));
        match (change, name) {
            (EntryChange::Gone, _) => {
                // Its watch reports nothing more: the kernel may keep
                // nothing of it for long.
                self.kernel.dir_watches().remove(&dir);
                self.kernel.drop_listing(invalidate, dir);
            }
            (EntryChange::Names(_), name) => {
                if let Some(w) = self.kernel.dir_watches().get_mut(&dir) {
                    w.listed_until = None;
                }
                if let Some(name) = name {
                    invalidate.entry(dir, name);
                }
                self.kernel.drop_listing(invalidate, dir);
            }
            // The event of a change of attributes the view made itself
            // (tar's chmod, chown and utimes of each file and directory it
            // writes) tells the kernel nothing while the disk has what the
            // view answered: forgetting them would only cost the next
            // `stat` a round trip.
            (EntryChange::Content, Some(_)) => {}
            (EntryChange::Content, None) if self.holds_what_the_disk_has(dir, dir, None) => {}
            (EntryChange::Content, None) => invalidate.inode(dir),
        }
        match child {
            Some(child) if self.opens_in_kernel() => invalidate.data(child),
            Some(child)
                if change == EntryChange::Content
                    && self.holds_what_the_disk_has(child, dir, name) => {}
            Some(child) => invalidate.inode(child),
            None => {}
        }
    }

    /// Whether the kernel holds, for inode `ino`, `name` in directory `dir`
    /// (or `dir` itself), the attributes the disk has now: those the view answered
    /// its last change of them (`View::setattr`, which the kernel takes
    /// whatever it held; an answer read before it is dropped, one read after
    /// reads them) are those the view would answer now. Every change of a
    /// file sets its change time, so any change since shows here.
    fn holds_what_the_disk_has(&self, ino: u64, dir: u64, name: Option<&OsStr>) -> bool {
        let (told, path) = {
            let inodes = self.inodes();
            let told = inodes.told(ino);
            if told == 0 {
                return false;
            }
            let Some(dir_path) = inodes.path(dir) else {
                return false;
            };
            let path = match name {
                Some(name) => dir_path.child(name),
                None => dir_path,
            };
            (told, path)
        };
        let Ok(st) = self.lstat(&path) else {
            return false;
        };
        let size = self
            .handles
            .served_size(ino)
            .or_else(|| self.pinned_size(ino));
        super::told_digest(&super::attr_of(&st, ino, size)) == told
    }
}
