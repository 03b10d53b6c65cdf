//! The lockfile as the gate sees it: re-read for every decision, parsed only
//! when its bytes differ from the last read. When it turns invalid (or goes
//! missing) the gate fails closed, using the last valid lockfile only to know
//! which paths were sealed so that they can all be hidden.

use std::os::fd::BorrowedFd;
use std::sync::{Arc, Mutex};

use seal_core::lockfile::{Lockfile, LockfileError};
use std::fs::File;
use std::os::fd::AsFd;

use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{Mode, fstat, fstatat};

use crate::feed::{Feed, Subscription};
use seal_core::fs::EntryKind;
use seal_core::lockfile::LOCKFILE_NAME;
use seal_core::store::{StoreError, check_size, read_lockfile_unchecked, read_open_lockfile};

/// The tag of the lockfile's subscriptions: the feed's listener is told
/// when `seal.json` changes (every decision may change with it).
pub const LOCKFILE_TAG: u64 = u64::MAX;

/// What the current `seal.json` says.
#[derive(Debug, Clone)]
pub(crate) enum LockView {
    Valid(Arc<Lockfile>),
    /// Invalid or unreadable: fail closed. `last_valid` still tells which
    /// paths are sealed.
    Invalid {
        last_valid: Arc<Lockfile>,
        reason: Arc<String>,
    },
}

impl LockView {
    /// The lockfile whose patterns say which paths are sealed.
    pub(crate) fn patterns_source(&self) -> &Lockfile {
        match self {
            LockView::Valid(l) => l,
            LockView::Invalid { last_valid, .. } => last_valid,
        }
    }

    #[cfg(test)]
    pub(crate) fn is_valid(&self) -> bool {
        matches!(self, LockView::Valid(_))
    }
}

struct Cached {
    bytes: Vec<u8>,
    view: LockView,
}

/// Re-reads `seal.json` on every call; reparses only on change.
pub(crate) struct LiveLockfile {
    cached: Mutex<Cached>,
    /// The lockfile kept open between reads: while `seal.json` is still the
    /// same file (device and inode, checked by `fstatat` at every read), its
    /// bytes are read again with `pread` instead of being opened anew. An
    /// edit in place is seen by the next `pread`; a replacement by rename is
    /// seen by the identity check.
    open: Mutex<Option<(File, u64, u64)>>,
    feed: Option<Arc<Feed>>,
    /// Watches on the name `seal.json` in the project root and on the file
    /// last read, placed before that read: while they are clean, the file
    /// has not changed and is not read again.
    watch: Mutex<Option<Subscription>>,
    /// The empty lockfile that stands in for a missing `seal.json` when the
    /// machine policy requires Seal: valid while the file stays missing and
    /// this is the last valid lockfile (a real one that then disappears
    /// fails closed, as always).
    implied: Option<Arc<Lockfile>>,
}

impl LiveLockfile {
    /// Starts from a lockfile already read and validated; with a change
    /// feed, it is read again only when the feed reports a change.
    pub fn new(bytes: Vec<u8>, lock: Lockfile, feed: Option<Arc<Feed>>) -> LiveLockfile {
        LiveLockfile {
            cached: Mutex::new(Cached {
                bytes,
                view: LockView::Valid(Arc::new(lock)),
            }),
            open: Mutex::new(None),
            feed,
            watch: Mutex::new(None),
            implied: None,
        }
    }

    /// The lockfile this was made with stands in for a missing `seal.json`
    /// (see [`LiveLockfile::is_implied`]).
    pub(crate) fn imply_while_missing(&mut self) {
        let cached = self.cached.get_mut().unwrap_or_else(|e| e.into_inner());
        if let LockView::Valid(lock) = &cached.view {
            self.implied = Some(lock.clone());
        }
        // A file that appears is parsed, whatever its bytes.
        cached.bytes.clear();
    }

    /// Whether `lock` is the stand-in for a missing `seal.json`.
    pub(crate) fn is_implied(&self, lock: &Lockfile) -> bool {
        self.implied
            .as_ref()
            .is_some_and(|i| std::ptr::eq(Arc::as_ptr(i), lock))
    }

    /// The view from the last read, without reading again (for scheduling
    /// only: every decision uses [`LiveLockfile::current`]).
    pub(crate) fn last(&self) -> LockView {
        self.cached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .view
            .clone()
    }

    /// The current view: the last one while the change feed proves the
    /// file unchanged, else after reading it again.
    pub(crate) fn current(&self, project: BorrowedFd<'_>) -> LockView {
        let mut watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        if watch.as_ref().is_some_and(Subscription::is_clean) {
            return self.last();
        }
        *watch = self.feed.as_ref().map(|feed| {
            let mut sub = feed.subscribe_tagged(Some(LOCKFILE_TAG));
            let name = std::ffi::OsStr::new(LOCKFILE_NAME);
            sub.watch_entry(project, name);
            sub.watch_at(project, name);
            sub
        });
        drop(watch);
        let hint = self.cached.lock().map(|c| c.bytes.len()).unwrap_or(4096);
        let read = self.read(project, hint);
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        let last_valid = match &cached.view {
            LockView::Valid(l) => l.clone(),
            LockView::Invalid { last_valid, .. } => last_valid.clone(),
        };
        match read {
            Ok(bytes) if bytes == cached.bytes => {}
            Ok(bytes) => {
                cached.view = match Lockfile::parse(&bytes) {
                    Ok(lock) => LockView::Valid(Arc::new(lock)),
                    Err(e) => invalid(last_valid, &e),
                };
                cached.bytes = bytes;
            }
            Err(StoreError::Missing)
                if self
                    .implied
                    .as_ref()
                    .is_some_and(|i| Arc::ptr_eq(i, &last_valid)) =>
            {
                cached.bytes.clear();
                cached.view = LockView::Valid(last_valid);
            }
            Err(e) => {
                // Forget the bytes so that the same content coming back is
                // parsed (and accepted) again.
                cached.bytes.clear();
                cached.view = LockView::Invalid {
                    last_valid,
                    reason: Arc::new(match e {
                        StoreError::Missing => "seal.json is missing".to_string(),
                        other => other.to_string(),
                    }),
                };
            }
        }
        cached.view.clone()
    }
}

impl LiveLockfile {
    /// The bytes of `seal.json` now.
    fn read(&self, project: BorrowedFd<'_>, hint: usize) -> Result<Vec<u8>, StoreError> {
        let st = match fstatat(project, LOCKFILE_NAME, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(nix::errno::Errno::ENOENT) => return Err(StoreError::Missing),
            Err(e) => {
                return Err(StoreError::Io {
                    action: "inspect",
                    source: std::io::Error::from_raw_os_error(e as i32),
                });
            }
        };
        let kind = EntryKind::from_mode(st.st_mode);
        if kind != EntryKind::File {
            return Err(StoreError::NotRegular(kind));
        }
        check_size(st.st_size as u64)?;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((file, dev, ino)) = open.as_ref() {
            if *dev == st.st_dev && *ino == st.st_ino {
                return read_open_lockfile(file, hint + 4096);
            }
        }
        *open = None;
        let bytes = read_lockfile_unchecked(project, hint)?;
        // Keep a descriptor of the file just read for the next time.
        if let Ok(fd) = nix::fcntl::openat(
            project,
            LOCKFILE_NAME,
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) {
            if let Ok(st) = fstat(fd.as_fd()) {
                if EntryKind::from_mode(st.st_mode) == EntryKind::File {
                    *open = Some((File::from(fd), st.st_dev, st.st_ino));
                }
            }
        }
        Ok(bytes)
    }
}

fn invalid(last_valid: Arc<Lockfile>, e: &LockfileError) -> LockView {
    LockView::Invalid {
        last_valid,
        reason: Arc::new(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seal_core::lockfile::Policy;
    use std::os::fd::AsFd;

    #[test]
    fn follows_the_file_and_fails_closed() {
        let t = tempfile::tempdir().unwrap();
        let fd = seal_core::fs::open_project(t.path()).unwrap();
        let good = Lockfile::empty(Policy::Block).to_canonical_bytes();
        std::fs::write(t.path().join("seal.json"), &good).unwrap();
        let live = LiveLockfile::new(good.clone(), Lockfile::empty(Policy::Block), None);
        assert!(live.current(fd.as_fd()).is_valid());
        std::fs::write(t.path().join("seal.json"), b"{ broken").unwrap();
        assert!(!live.current(fd.as_fd()).is_valid());
        std::fs::remove_file(t.path().join("seal.json")).unwrap();
        assert!(!live.current(fd.as_fd()).is_valid());
        std::fs::write(t.path().join("seal.json"), &good).unwrap();
        assert!(live.current(fd.as_fd()).is_valid());
        let warn = Lockfile::empty(Policy::Warn).to_canonical_bytes();
        std::fs::write(t.path().join("seal.json"), &warn).unwrap();
        match live.current(fd.as_fd()) {
            LockView::Valid(l) => assert_eq!(l.policy, Policy::Warn),
            other => panic!("{other:?}"),
        }
        // Replaced by rename (a new inode): the kept descriptor is not reused.
        std::fs::write(t.path().join("new.json"), &good).unwrap();
        std::fs::rename(t.path().join("new.json"), t.path().join("seal.json")).unwrap();
        match live.current(fd.as_fd()) {
            LockView::Valid(l) => assert_eq!(l.policy, Policy::Block),
            other => panic!("{other:?}"),
        }
        // Edited in place, same length: seen too.
        let block = std::fs::read(t.path().join("seal.json")).unwrap();
        let mut edited = block.clone();
        let at = edited.windows(6).position(|w| w == b"block\"").unwrap();
        edited[at..at + 6].copy_from_slice(b"warn\" ");
        std::fs::write(t.path().join("seal.json"), &edited).unwrap();
        match live.current(fd.as_fd()) {
            LockView::Valid(l) => assert_eq!(l.policy, Policy::Warn),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_implied_lockfile_holds_while_the_file_is_missing_and_not_after() {
        let t = tempfile::tempdir().unwrap();
        let fd = seal_core::fs::open_project(t.path()).unwrap();
        let empty = Lockfile::empty(Policy::Block);
        let mut live = LiveLockfile::new(empty.to_canonical_bytes(), empty.clone(), None);
        live.imply_while_missing();
        let LockView::Valid(first) = live.current(fd.as_fd()) else {
            panic!("a missing file under requireSeal is the empty lockfile")
        };
        assert!(live.is_implied(&first));
        // The same bytes written for real: a real lockfile now.
        std::fs::write(t.path().join("seal.json"), empty.to_canonical_bytes()).unwrap();
        let LockView::Valid(real) = live.current(fd.as_fd()) else {
            panic!("valid")
        };
        assert!(!live.is_implied(&real));
        // A real lockfile that disappears fails closed, as without a policy.
        std::fs::remove_file(t.path().join("seal.json")).unwrap();
        assert!(!live.current(fd.as_fd()).is_valid());
        // Without the policy, a missing file fails closed from the start.
        let plain = LiveLockfile::new(vec![], empty.clone(), None);
        assert!(!plain.current(fd.as_fd()).is_valid());
        assert!(!plain.is_implied(&empty));
    }
}
