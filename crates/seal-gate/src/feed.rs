//! The change feed: proof from the kernel that nothing under a set of
//! watched inodes changed since the watches were placed.
//!
//! A [`Subscription`] places inotify watches on every directory and file it
//! is given (by descriptor, so the exact inode that was opened is watched)
//! and is *clean* until an event touches one of them: content written,
//! truncated, attributes or link count changed, an entry created, removed or
//! renamed in a watched directory, a watched inode removed or moved. The
//! kernel queues an event inside the system call that causes it, so after
//! [`Feed::drain`] has read the queue, every change that completed before
//! the drain has been seen.
//!
//! The feed may lose events: the queue can overflow, a watch can fail to be
//! placed (the watch limit), and a filesystem may not report changes made
//! elsewhere (a network filesystem, FUSE). Then nothing is proven: an
//! overflow makes every subscription dirty, a subscription with a watch that
//! could not be placed is dirty from the start, and a filesystem without
//! complete events gets no feed at all ([`Feed::for_project`]). What the feed
//! cannot see at all — writes through a shared writable mapping — is
//! documented in docs/SECURITY.md; the bytes served are snapshots either way.
//!
//! A decision must be current at the request that asked for it: every change
//! that completed before the request arrived must be seen. Any drain that
//! began after the arrival proves that, so one request (its thread marks it
//! with a [`RequestScope`]) drains at most once however many decisions it
//! makes, and not at all when another drain (the listener's, another
//! request's) began after it arrived and has finished.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// What every watch reports: any change to content, metadata, names, or
/// the inode's own place.
fn watch_mask() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// Filesystems whose changes all pass through this kernel's VFS, so that
/// inotify sees every one of them (`statfs` magic numbers).
const COMPLETE_FILESYSTEMS: &[i64] = &[
    0xEF53,      // ext2/3/4
    0x5846_5342, // xfs
    0x9123_683E, // btrfs
    0x0102_1994, // tmpfs
    0xF2F5_2010, // f2fs
    0x2FC1_2FC1, // zfs
    0x6165_6673, // bcachefs
];

#[derive(Default)]
struct Watched {
    /// How many subscriptions and entry watches hold this watch.
    holders: usize,
    /// Who is told, and for a directory watched for one name only, which.
    subscriptions: Vec<(Weak<SubState>, Option<OsString>)>,
    /// Entry watches: every event is passed on, with the name it concerns.
    entry_tags: Vec<u64>,
}

struct Registry {
    watches: HashMap<WatchDescriptor, Watched>,
    /// Notices for the listener, when one listens.
    notices: Option<Vec<Notice>>,
}

/// What the listener of a feed is told (so that it can keep the kernel's
/// caches true: it never decides anything).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Notice {
    /// The subscription tagged so has just become dirty.
    Dirty(u64),
    /// Something changed in the directory whose entry watch is tagged so:
    /// the entry `name`, or (none) the directory itself.
    Entry {
        tag: u64,
        name: Option<OsString>,
        change: EntryChange,
    },
    /// Events were lost: nothing cached can be trusted.
    Lost,
}

/// What an entry watch's event changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryChange {
    /// Content or attributes (of the entry named, or of the directory).
    Content,
    /// The directory's names: the entry named was created, removed, or
    /// renamed away or here (or, `Other`, its listing changed).
    Names(Naming),
    /// The watched directory itself was removed or moved away: its watch
    /// reports nothing more.
    Gone,
}

/// How a name changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Naming {
    Created,
    Removed,
    MovedFrom,
    MovedTo,
    Other,
}

impl EntryChange {
    fn of(mask: AddWatchFlags) -> EntryChange {
        if mask.intersects(
            AddWatchFlags::IN_IGNORED | AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF,
        ) {
            EntryChange::Gone
        } else if mask.contains(AddWatchFlags::IN_CREATE) {
            EntryChange::Names(Naming::Created)
        } else if mask.contains(AddWatchFlags::IN_DELETE) {
            EntryChange::Names(Naming::Removed)
        } else if mask.contains(AddWatchFlags::IN_MOVED_FROM) {
            EntryChange::Names(Naming::MovedFrom)
        } else if mask.contains(AddWatchFlags::IN_MOVED_TO) {
            EntryChange::Names(Naming::MovedTo)
        } else {
            EntryChange::Content
        }
    }
}

/// Stamps that order request arrivals and drain starts: one counter, so
/// that a drain stamped after an arrival began after it.
static STAMPS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The stamp of the request this thread serves, while a
    /// [`RequestScope`] lives.
    static ARRIVAL: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Marks this thread as serving one request (arrived when the scope began)
/// until dropped. Without one, every [`Feed::drain`] reads the queue.
#[must_use]
pub struct RequestScope {
    previous: Option<u64>,
}

impl RequestScope {
    /// A request arrives now.
    pub fn begin() -> RequestScope {
        RequestScope::resume(STAMPS.fetch_add(1, Ordering::SeqCst))
    }

    /// Serves on this thread (a worker's) a request that arrived at
    /// `arrival` ([`RequestScope::arrival`] on the thread that received it).
    pub fn resume(arrival: u64) -> RequestScope {
        RequestScope {
            previous: ARRIVAL.replace(Some(arrival)),
        }
    }

    /// The arrival of the request this thread serves, if any.
    pub fn arrival() -> Option<u64> {
        ARRIVAL.get()
    }
}

impl Drop for RequestScope {
    fn drop(&mut self) {
        ARRIVAL.set(self.previous);
    }
}

/// One inotify instance and what it watches.
pub struct Feed {
    inotify: Inotify,
    /// The stamp taken when the latest finished drain began.
    drained_from: AtomicU64,
    state: Mutex<Registry>,
    /// A pipe that wakes the listener when notices are queued by a drain
    /// it did not make (a decision's): (read end, write end), non-blocking.
    wake: (std::os::fd::OwnedFd, std::os::fd::OwnedFd),
    /// Events read so far (for tests and diagnostics).
    events: AtomicU64,
    /// How many watches this feed may hold at once (see [`watch_budget`]).
    budget: usize,
}

struct SubState {
    dirty: AtomicBool,
    /// Told (through [`Notice::Dirty`]) when the subscription becomes dirty.
    tag: Option<u64>,
}

/// A watch on a directory whose every event is passed on to the listener
/// (as [`Notice::Entry`]); dropped, it stops.
pub struct EntryWatch {
    feed: Arc<Feed>,
    wd: WatchDescriptor,
    tag: u64,
}

/// A set of watches that stays clean while nothing under them changes.
pub(crate) struct Subscription {
    feed: Arc<Feed>,
    state: Arc<SubState>,
    held: Vec<WatchDescriptor>,
}

impl Feed {
    pub fn new() -> io::Result<Arc<Feed>> {
        Feed::with_budget(watch_budget())
    }

    /// A feed that holds at most `budget` watches at once.
    pub(crate) fn with_budget(budget: usize) -> io::Result<Arc<Feed>> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        let wake =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_CLOEXEC)?;
        Ok(Arc::new(Feed {
            inotify,
            drained_from: AtomicU64::new(0),
            wake,
            state: Mutex::new(Registry {
                watches: HashMap::new(),
                notices: None,
            }),
            events: AtomicU64::new(0),
            budget,
        }))
    }

    /// How many more watches may be placed now: a root with more entries
    /// than this is not watched (it is verified in full at every decision).
    pub fn watch_room(&self) -> usize {
        self.budget.saturating_sub(self.state().watches.len())
    }

    /// The whole budget (for messages).
    pub(crate) fn watch_budget(&self) -> usize {
        self.budget
    }

    /// A feed for the project at `project`, or `None` (with why) when its
    /// filesystem does not report every change through this kernel.
    pub fn for_project(project: BorrowedFd<'_>) -> Result<Arc<Feed>, String> {
        complete_events(project)?;
        Feed::new().map_err(|e| format!("inotify: {e}"))
    }

    /// A second feed for the project at `project`, for the view's ordinary
    /// directories (a feed of its own, so that a burst of ordinary changes
    /// that overflows its queue never voids a bundle's verification), with
    /// half the budget of the first: a quarter of the user's watches.
    pub fn for_project_directories(project: BorrowedFd<'_>) -> Result<Arc<Feed>, String> {
        complete_events(project)?;
        Feed::with_budget(watch_budget() / 2).map_err(|e| format!("inotify: {e}"))
    }

    fn state(&self) -> MutexGuard<'_, Registry> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads every queued event and marks the subscriptions they touch
    /// dirty. After it returns, every change that completed before it was
    /// called (within a [`RequestScope`]: before the request arrived) has
    /// been accounted for.
    ///
    /// Within a [`RequestScope`], a drain that began after the request
    /// arrived and has finished already proves that much: then nothing is
    /// read.
    pub fn drain(&self) {
        let arrival = RequestScope::arrival();
        let proven = || arrival.is_some_and(|a| self.drained_from.load(Ordering::Acquire) > a);
        if proven() {
            return;
        }
        let mut state = self.state();
        // Another drain may have finished while this one waited for the lock.
        if proven() {
            return;
        }
        let began = STAMPS.fetch_add(1, Ordering::SeqCst);
        self.drain_locked(&mut state);
        self.drained_from.fetch_max(began, Ordering::Release);
        let queued = state.notices.as_ref().is_some_and(|q| !q.is_empty());
        drop(state);
        if queued {
            self.wake_listener();
        }
    }

    /// Wakes the listener (a full pipe means it is awake already).
    fn wake_listener(&self) {
        let _ = nix::unistd::write(&self.wake.1, b"w");
    }

    fn drain_locked(&self, state: &mut Registry) {
        loop {
            match self.inotify.read_events() {
                Ok(events) => {
                    self.events
                        .fetch_add(events.len() as u64, Ordering::Relaxed);
                    for event in events {
                        if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                            state.lose_everything();
                            continue;
                        }
                        state.event(event.wd, event.name.as_deref(), event.mask);
                        if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                            // The watch is gone (its inode was removed).
                            state.watches.remove(&event.wd);
                        }
                    }
                }
                Err(Errno::EAGAIN) => return,
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    // A feed that cannot be read proves nothing.
                    tracing::warn!(
                        "the change feed failed ({e}); every cached verification is void"
                    );
                    state.lose_everything();
                    return;
                }
            }
        }
    }

    /// From now on, keeps [`Notice`]s for a listener ([`Feed::take_notices`]).
    pub fn keep_notices(&self) {
        let mut state = self.state();
        if state.notices.is_none() {
            state.notices = Some(Vec::new());
        }
    }

    /// Queues a notice for the listener (when one listens).
    pub fn tell(&self, notice: Notice) {
        if let Some(queue) = self.state().notices.as_mut() {
            queue.push(notice);
        } else {
            return;
        }
        self.wake_listener();
    }

    /// The notices since the last call.
    pub fn take_notices(&self) -> Vec<Notice> {
        self.state()
            .notices
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Waits until events or notices are queued (or `timeout` passes).
    pub fn wait(&self, timeout: std::time::Duration) {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let mut fds = [
            PollFd::new(self.inotify.as_fd(), PollFlags::POLLIN),
            PollFd::new(self.wake.0.as_fd(), PollFlags::POLLIN),
        ];
        let ms = PollTimeout::try_from(timeout).unwrap_or(PollTimeout::MAX);
        let _ = poll(&mut fds, ms);
        let mut sink = [0u8; 64];
        while matches!(nix::unistd::read(&self.wake.0, &mut sink), Ok(n) if n > 0) {}
    }

    /// Passes every event on the directory `dir` (its entries' names, or
    /// the directory itself) to the listener, tagged `tag`. `None` when the
    /// watch cannot be placed.
    pub fn watch_entries(self: &Arc<Feed>, dir: BorrowedFd<'_>, tag: u64) -> Option<EntryWatch> {
        let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
        let mut state = self.state();
        let mask = watch_mask() - AddWatchFlags::IN_DONT_FOLLOW;
        let wd = self.inotify.add_watch(OsStr::new(&path), mask).ok()?;
        let watched = state.watches.entry(wd).or_default();
        watched.holders += 1;
        watched.entry_tags.push(tag);
        Some(EntryWatch {
            feed: self.clone(),
            wd,
            tag,
        })
    }

    /// A new, empty subscription (clean).
    #[cfg(test)]
    pub(crate) fn subscribe(self: &Arc<Feed>) -> Subscription {
        self.subscribe_tagged(None)
    }

    /// A new subscription whose becoming dirty is told to the listener as
    /// [`Notice::Dirty`]`(tag)`.
    pub(crate) fn subscribe_tagged(self: &Arc<Feed>, tag: Option<u64>) -> Subscription {
        Subscription {
            feed: self.clone(),
            state: Arc::new(SubState {
                dirty: AtomicBool::new(false),
                tag,
            }),
            held: Vec::new(),
        }
    }

    /// Drops one holder of watch `wd`, removing the watch with the last.
    fn release(&self, state: &mut Registry, wd: WatchDescriptor) {
        let Some(watched) = state.watches.get_mut(&wd) else {
            return;
        };
        watched.holders -= 1;
        if watched.holders == 0 {
            state.watches.remove(&wd);
            crate::memory::shrink_if_sparse(&mut state.watches);
            let _ = self.inotify.rm_watch(wd);
        }
    }

    /// How many events have been read (for tests).
    #[cfg(test)]
    pub(crate) fn events_seen(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }
}

/// Half the watches the kernel allows one user
/// (`fs.inotify.max_user_watches`): the other half is left to the user's
/// other programs (an editor, a file watcher in the agent's tools), which
/// would otherwise fail for want of watches the mount holds.
/// Whether every change to the filesystem of `project` passes through this
/// kernel (so that inotify sees it); why not, when not.
fn complete_events(project: BorrowedFd<'_>) -> Result<(), String> {
    let fs = nix::sys::statfs::fstatfs(project).map_err(|e| format!("statfs: {e}"))?;
    let magic = fs.filesystem_type().0 as i64;
    if COMPLETE_FILESYSTEMS.contains(&magic) {
        Ok(())
    } else {
        Err(format!(
            "the project's filesystem (type {magic:#x}) may change without this kernel seeing it"
        ))
    }
}

fn watch_budget() -> usize {
    const KERNEL_DEFAULT_FLOOR: usize = 8192;
    std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(KERNEL_DEFAULT_FLOOR)
        / 2
}

impl Registry {
    /// One event on watch `wd`, about the entry `name` (or the watched
    /// inode itself).
    fn event(&mut self, wd: WatchDescriptor, name: Option<&OsStr>, mask: AddWatchFlags) {
        let Some(watched) = self.watches.get(&wd) else {
            return;
        };
        let mut notices = Vec::new();
        for (sub, only) in &watched.subscriptions {
            let concerned = match (only, name) {
                (Some(only), Some(name)) => only.as_os_str() == name,
                _ => true,
            };
            if let (true, Some(sub)) = (concerned, sub.upgrade()) {
                if !sub.dirty.swap(true, Ordering::AcqRel) {
                    notices.extend(sub.tag.map(Notice::Dirty));
                }
            }
        }
        for tag in &watched.entry_tags {
            notices.push(Notice::Entry {
                tag: *tag,
                name: name.map(OsStr::to_os_string),
                change: EntryChange::of(mask),
            });
        }
        if let Some(queue) = self.notices.as_mut() {
            queue.extend(notices);
        }
    }

    /// Events were lost: every subscription is dirty, and the listener is
    /// told that nothing cached can be trusted.
    fn lose_everything(&mut self) {
        for watched in self.watches.values() {
            for (sub, _) in &watched.subscriptions {
                if let Some(sub) = sub.upgrade() {
                    sub.dirty.store(true, Ordering::Release);
                }
            }
        }
        if let Some(queue) = self.notices.as_mut() {
            queue.push(Notice::Lost);
        }
    }
}

impl Subscription {
    /// Watches the inode `fd` refers to (a directory or a file, opened or
    /// `O_PATH`). A watch that cannot be placed makes the subscription
    /// dirty: it proves nothing.
    pub(crate) fn watch_fd(&mut self, fd: BorrowedFd<'_>) {
        // The magic link is followed to the inode the descriptor holds (a
        // symlink held by an O_PATH descriptor is watched itself).
        let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
        self.watch_path(
            OsStr::new(&path),
            watch_mask() - AddWatchFlags::IN_DONT_FOLLOW,
            None,
        );
    }

    /// Watches the directory `dir` for changes to its entry `name` only (and
    /// for the directory itself being removed or moved): an ancestor of
    /// what matters, whose other entries do not.
    pub(crate) fn watch_entry(&mut self, dir: BorrowedFd<'_>, name: &OsStr) {
        let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
        self.watch_path(
            OsStr::new(&path),
            watch_mask() - AddWatchFlags::IN_DONT_FOLLOW,
            Some(name.to_os_string()),
        );
    }

    /// Watches `name` in the directory `dir` (never following a symlink).
    pub(crate) fn watch_at(&mut self, dir: BorrowedFd<'_>, name: &OsStr) {
        let mut path = OsString::from(format!("/proc/self/fd/{}/", dir.as_raw_fd()));
        path.push(name);
        self.watch_path(&path, watch_mask(), None);
    }

    fn watch_path(&mut self, path: &OsStr, mask: AddWatchFlags, only: Option<OsString>) {
        let mut state = self.feed.state();
        match self.feed.inotify.add_watch(path, mask) {
            Ok(wd) => {
                let watched = state.watches.entry(wd).or_default();
                watched.holders += 1;
                watched
                    .subscriptions
                    .push((Arc::downgrade(&self.state), only));
                self.held.push(wd);
            }
            Err(e) => {
                tracing::debug!("cannot watch {}: {e}", path.to_string_lossy());
                self.state.dirty.store(true, Ordering::Release);
            }
        }
    }

    /// Whether nothing watched has changed (reads the queue first).
    pub(crate) fn is_clean(&self) -> bool {
        self.feed.drain();
        !self.state.dirty.load(Ordering::Acquire)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut state = self.feed.state();
        for wd in std::mem::take(&mut self.held) {
            if let Some(watched) = state.watches.get_mut(&wd) {
                watched
                    .subscriptions
                    .retain(|(s, _)| s.upgrade().is_some_and(|s| !Arc::ptr_eq(&s, &self.state)));
            }
            self.feed.release(&mut state, wd);
        }
    }
}

impl Drop for EntryWatch {
    fn drop(&mut self) {
        let mut state = self.feed.state();
        if let Some(watched) = state.watches.get_mut(&self.wd) {
            if let Some(i) = watched.entry_tags.iter().position(|t| *t == self.tag) {
                watched.entry_tags.swap_remove(i);
            }
        }
        self.feed.release(&mut state, self.wd);
    }
}

impl AsFd for Feed {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inotify.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn dir_fd(p: &std::path::Path) -> std::os::fd::OwnedFd {
        seal_core::fs::open_project(p).unwrap()
    }

    #[test]
    fn a_subscription_sees_every_kind_of_change() {
        type Mutation = fn(&std::path::Path);
        let changes: [(&str, Mutation); 8] = [
            ("write", |d| fs::write(d.join("f"), "changed").unwrap()),
            ("append", |d| {
                use std::io::Write;
                let mut f = fs::OpenOptions::new()
                    .append(true)
                    .open(d.join("f"))
                    .unwrap();
                f.write_all(b"x").unwrap();
            }),
            ("truncate", |d| {
                fs::OpenOptions::new()
                    .write(true)
                    .open(d.join("f"))
                    .unwrap()
                    .set_len(0)
                    .unwrap()
            }),
            ("create", |d| fs::write(d.join("new"), "n").unwrap()),
            ("remove", |d| fs::remove_file(d.join("f")).unwrap()),
            ("rename over", |d| {
                fs::write(d.join("tmp"), "t").unwrap();
                fs::rename(d.join("tmp"), d.join("f")).unwrap()
            }),
            ("hard link elsewhere", |d| {
                fs::hard_link(d.join("f"), d.parent().unwrap().join("alias")).unwrap()
            }),
            ("subdir entry", |d| fs::write(d.join("sub/g"), "g").unwrap()),
        ];
        for (what, change) in changes {
            let (_t, d, _feed, sub) = watched_bundle(true);
            assert!(sub.is_clean(), "{what}: dirty before any change");
            change(&d);
            assert!(!sub.is_clean(), "{what}: not seen");
        }
    }

    /// A directory `bundle` holding `f` (and `sub/` when `with_sub`), and a
    /// subscription of a new feed watching it, `f` and `sub`.
    fn watched_bundle(
        with_sub: bool,
    ) -> (
        tempfile::TempDir,
        std::path::PathBuf,
        Arc<Feed>,
        Subscription,
    ) {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("bundle");
        fs::create_dir(&d).unwrap();
        if with_sub {
            fs::create_dir(d.join("sub")).unwrap();
        }
        fs::write(d.join("f"), "approved").unwrap();
        let feed = Feed::new().unwrap();
        let sub = watch_bundle(&feed, &d, with_sub);
        (t, d, feed, sub)
    }

    fn watch_bundle(feed: &Arc<Feed>, d: &std::path::Path, with_sub: bool) -> Subscription {
        let mut sub = feed.subscribe();
        let dir = dir_fd(d);
        sub.watch_fd(dir.as_fd());
        sub.watch_at(dir.as_fd(), OsStr::new("f"));
        if with_sub {
            sub.watch_at(dir.as_fd(), OsStr::new("sub"));
        }
        sub
    }

    #[test]
    fn a_request_sees_every_change_made_before_it_arrived_and_drains_once() {
        let (_t, d, feed, sub) = watched_bundle(false);
        // A drain outside any request (the listener's), then a change, then
        // a request: the earlier drain proves nothing about it.
        feed.drain();
        fs::write(d.join("f"), "tampered").unwrap();
        {
            let _request = RequestScope::begin();
            assert!(!sub.is_clean(), "a change before the request went unseen");
        }
        // A request whose first decision drained: its later decisions read
        // nothing (a change after it arrived is the next request's).
        let clean = watch_bundle(&feed, &d, false);
        let read_before = feed.events_seen();
        {
            let _request = RequestScope::begin();
            assert!(clean.is_clean());
            fs::write(d.join("f"), "again").unwrap();
            assert!(clean.is_clean(), "a second drain within one request");
            assert_eq!(feed.events_seen(), read_before);
            // A worker resuming an earlier request's arrival is bound the
            // same way; a request that arrived later is not.
            std::thread::scope(|s| {
                let arrival = RequestScope::arrival().unwrap();
                let clean = &clean;
                s.spawn(move || {
                    let _resumed = RequestScope::resume(arrival);
                    assert!(clean.is_clean());
                });
            });
        }
        assert_eq!(RequestScope::arrival(), None, "the scope outlived itself");
        let _request = RequestScope::begin();
        assert!(
            !clean.is_clean(),
            "a change before this request went unseen"
        );
    }

    #[test]
    fn reads_do_not_dirty_and_other_subscriptions_are_independent() {
        let t = tempfile::tempdir().unwrap();
        for n in ["a", "b"] {
            fs::create_dir(t.path().join(n)).unwrap();
            fs::write(t.path().join(n).join("f"), "x").unwrap();
        }
        let feed = Feed::new().unwrap();
        let (a, b) = (dir_fd(&t.path().join("a")), dir_fd(&t.path().join("b")));
        let mut sa = feed.subscribe();
        sa.watch_fd(a.as_fd());
        let mut sb = feed.subscribe();
        sb.watch_fd(b.as_fd());
        // The same inode watched twice shares one watch.
        let mut sa2 = feed.subscribe();
        sa2.watch_fd(a.as_fd());
        let _ = fs::read(t.path().join("a/f")).unwrap();
        let _ = fs::read_dir(t.path().join("a")).unwrap().count();
        assert!(sa.is_clean() && sb.is_clean() && sa2.is_clean());
        fs::write(t.path().join("a/f"), "y").unwrap();
        assert!(!sa.is_clean());
        assert!(!sa2.is_clean());
        assert!(sb.is_clean());
        drop(sa);
        fs::write(t.path().join("a/f"), "z").unwrap();
        assert!(
            sb.is_clean(),
            "a dropped subscription's watch does not leak events"
        );
        assert!(!sa2.is_clean());
    }

    #[test]
    fn an_ancestor_is_watched_for_one_name() {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir(t.path().join("skill")).unwrap();
        let feed = Feed::new().unwrap();
        let mut sub = feed.subscribe();
        let d = dir_fd(t.path());
        sub.watch_entry(d.as_fd(), OsStr::new("skill"));
        fs::write(t.path().join("README.md"), "other entries do not matter").unwrap();
        fs::create_dir(t.path().join("other")).unwrap();
        assert!(sub.is_clean());
        fs::rename(t.path().join("skill"), t.path().join("moved")).unwrap();
        assert!(!sub.is_clean(), "the watched name moved away");
    }

    #[test]
    fn the_listener_is_told_what_became_dirty_and_what_changed_in_a_directory() {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir(t.path().join("b")).unwrap();
        fs::write(t.path().join("b/f"), "x").unwrap();
        let feed = Feed::new().unwrap();
        feed.keep_notices();
        let mut sub = feed.subscribe_tagged(Some(7));
        let b = dir_fd(&t.path().join("b"));
        sub.watch_fd(b.as_fd());
        let root = dir_fd(t.path());
        let entries = feed.watch_entries(root.as_fd(), 3).unwrap();
        fs::write(t.path().join("b/f"), "y").unwrap();
        fs::write(t.path().join("new"), "n").unwrap();
        feed.drain();
        let notices = feed.take_notices();
        assert!(notices.contains(&Notice::Dirty(7)), "{notices:?}");
        assert!(
            notices.contains(&Notice::Entry {
                tag: 3,
                name: Some("new".into()),
                change: EntryChange::Names(Naming::Created),
            }),
            "{notices:?}"
        );
        // Dirty is told once.
        fs::write(t.path().join("b/f"), "z").unwrap();
        feed.drain();
        assert!(!feed.take_notices().contains(&Notice::Dirty(7)));
        drop(entries);
        fs::write(t.path().join("other"), "o").unwrap();
        feed.drain();
        assert!(
            feed.take_notices().is_empty(),
            "a dropped entry watch is silent"
        );
    }

    #[test]
    fn a_watch_that_cannot_be_placed_proves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let feed = Feed::new().unwrap();
        let mut sub = feed.subscribe();
        let d = dir_fd(t.path());
        sub.watch_at(d.as_fd(), OsStr::new("missing"));
        assert!(!sub.is_clean());
    }
}
