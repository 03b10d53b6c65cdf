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

struct Watched {
    /// How many subscriptions hold this watch.
    holders: usize,
    /// Who is told, and for a directory watched for one name only, which.
    subscriptions: Vec<(Weak<SubState>, Option<OsString>)>,
}

struct State {
    watches: HashMap<WatchDescriptor, Watched>,
}

/// One inotify instance and what it watches.
pub struct Feed {
    inotify: Inotify,
    state: Mutex<State>,
    /// Events read so far (for tests and diagnostics).
    events: AtomicU64,
}

struct SubState {
    dirty: AtomicBool,
}

/// A set of watches that stays clean while nothing under them changes.
pub struct Subscription {
    feed: Arc<Feed>,
    state: Arc<SubState>,
    held: Vec<WatchDescriptor>,
}

impl Feed {
    pub fn new() -> io::Result<Arc<Feed>> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        Ok(Arc::new(Feed {
            inotify,
            state: Mutex::new(State {
                watches: HashMap::new(),
            }),
            events: AtomicU64::new(0),
        }))
    }

    /// A feed for the project at `project`, or `None` (with why) when its
    /// filesystem does not report every change through this kernel.
    pub fn for_project(project: BorrowedFd<'_>) -> Result<Arc<Feed>, String> {
        let fs = nix::sys::statfs::fstatfs(project).map_err(|e| format!("statfs: {e}"))?;
        let magic = fs.filesystem_type().0 as i64;
        if !COMPLETE_FILESYSTEMS.contains(&magic) {
            return Err(format!(
                "the project's filesystem (type {magic:#x}) may change without this kernel seeing it"
            ));
        }
        Feed::new().map_err(|e| format!("inotify: {e}"))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads every queued event and marks the subscriptions they touch
    /// dirty. After it returns, every change that completed before it was
    /// called has been accounted for.
    pub fn drain(&self) {
        let mut state = self.state();
        loop {
            match self.inotify.read_events() {
                Ok(events) => {
                    self.events
                        .fetch_add(events.len() as u64, Ordering::Relaxed);
                    for event in events {
                        if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                            // Events were lost: nothing is proven any more.
                            for watched in state.watches.values() {
                                mark_dirty(&watched.subscriptions, None);
                            }
                            continue;
                        }
                        if let Some(watched) = state.watches.get(&event.wd) {
                            mark_dirty(&watched.subscriptions, event.name.as_deref());
                        }
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
                    for watched in state.watches.values() {
                        mark_dirty(&watched.subscriptions, None);
                    }
                    return;
                }
            }
        }
    }

    /// A new, empty subscription (clean).
    pub fn subscribe(self: &Arc<Feed>) -> Subscription {
        Subscription {
            feed: self.clone(),
            state: Arc::new(SubState {
                dirty: AtomicBool::new(false),
            }),
            held: Vec::new(),
        }
    }

    /// How many events have been read (for tests).
    pub fn events_seen(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }
}

/// Marks dirty every subscription an event about `name` (none: about the
/// watched inode itself, or about everything) concerns.
fn mark_dirty(subs: &[(Weak<SubState>, Option<OsString>)], name: Option<&OsStr>) {
    for (sub, only) in subs {
        let concerned = match (only, name) {
            (Some(only), Some(name)) => only.as_os_str() == name,
            _ => true,
        };
        if let (true, Some(sub)) = (concerned, sub.upgrade()) {
            sub.dirty.store(true, Ordering::Release);
        }
    }
}

impl Subscription {
    /// Watches the inode `fd` refers to (a directory or a file, opened or
    /// `O_PATH`). A watch that cannot be placed makes the subscription
    /// dirty: it proves nothing.
    pub fn watch_fd(&mut self, fd: BorrowedFd<'_>) {
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
    pub fn watch_entry(&mut self, dir: BorrowedFd<'_>, name: &OsStr) {
        let path = format!("/proc/self/fd/{}", dir.as_raw_fd());
        self.watch_path(
            OsStr::new(&path),
            watch_mask() - AddWatchFlags::IN_DONT_FOLLOW,
            Some(name.to_os_string()),
        );
    }

    /// Watches `name` in the directory `dir` (never following a symlink).
    pub fn watch_at(&mut self, dir: BorrowedFd<'_>, name: &OsStr) {
        let mut path = OsString::from(format!("/proc/self/fd/{}/", dir.as_raw_fd()));
        path.push(name);
        self.watch_path(&path, watch_mask(), None);
    }

    fn watch_path(&mut self, path: &OsStr, mask: AddWatchFlags, only: Option<OsString>) {
        let mut state = self.feed.state();
        match self.feed.inotify.add_watch(path, mask) {
            Ok(wd) => {
                let watched = state.watches.entry(wd).or_insert_with(|| Watched {
                    holders: 0,
                    subscriptions: Vec::new(),
                });
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
    pub fn is_clean(&self) -> bool {
        self.feed.drain();
        !self.state.dirty.load(Ordering::Acquire)
    }

    /// How many watches it holds.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut state = self.feed.state();
        for wd in self.held.drain(..) {
            let Some(watched) = state.watches.get_mut(&wd) else {
                continue;
            };
            watched.holders -= 1;
            watched
                .subscriptions
                .retain(|(s, _)| s.upgrade().is_some_and(|s| !Arc::ptr_eq(&s, &self.state)));
            if watched.holders == 0 {
                state.watches.remove(&wd);
                let _ = self.feed.inotify.rm_watch(wd);
            }
        }
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
        crate::core::fs::open_project(p).unwrap()
    }

    #[test]
    fn a_subscription_sees_every_kind_of_change() {
        type Change = fn(&std::path::Path);
        let changes: [(&str, Change); 8] = [
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
            let t = tempfile::tempdir().unwrap();
            let d = t.path().join("bundle");
            fs::create_dir_all(d.join("sub")).unwrap();
            fs::write(d.join("f"), "approved").unwrap();
            let feed = Feed::new().unwrap();
            let mut sub = feed.subscribe();
            let dir = dir_fd(&d);
            sub.watch_fd(dir.as_fd());
            sub.watch_at(dir.as_fd(), OsStr::new("f"));
            sub.watch_at(dir.as_fd(), OsStr::new("sub"));
            assert!(sub.is_clean(), "{what}: dirty before any change");
            change(&d);
            assert!(!sub.is_clean(), "{what}: not seen");
        }
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
    fn a_watch_that_cannot_be_placed_proves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let feed = Feed::new().unwrap();
        let mut sub = feed.subscribe();
        let d = dir_fd(t.path());
        sub.watch_at(d.as_fd(), OsStr::new("missing"));
        assert!(!sub.is_clean());
    }
}
