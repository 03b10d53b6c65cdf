//! The lockfile as the gate sees it: re-read for every decision, parsed only
//! when its bytes differ from the last read. When it turns invalid (or goes
//! missing) the gate fails closed, using the last valid lockfile only to know
//! which paths were sealed so that they can all be hidden.

use std::os::fd::BorrowedFd;
use std::sync::{Arc, Mutex};

use crate::core::lockfile::{Lockfile, LockfileError};
use crate::core::store::{StoreError, read_lockfile_unchecked};

/// What the current `seal.json` says.
#[derive(Debug, Clone)]
pub enum LockView {
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
    pub fn patterns_source(&self) -> &Lockfile {
        match self {
            LockView::Valid(l) => l,
            LockView::Invalid { last_valid, .. } => last_valid,
        }
    }

    pub fn is_valid(&self) -> bool {
        matches!(self, LockView::Valid(_))
    }
}

struct Cached {
    bytes: Vec<u8>,
    view: LockView,
}

/// Re-reads `seal.json` on every call; reparses only on change.
pub struct LiveLockfile {
    cached: Mutex<Cached>,
}

impl LiveLockfile {
    /// Starts from a lockfile already read and validated.
    pub fn new(bytes: Vec<u8>, lock: Lockfile) -> LiveLockfile {
        LiveLockfile {
            cached: Mutex::new(Cached {
                bytes,
                view: LockView::Valid(Arc::new(lock)),
            }),
        }
    }

    /// The view from the last read, without reading again (for scheduling
    /// only: every decision uses [`LiveLockfile::current`]).
    pub fn last(&self) -> LockView {
        self.cached
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .view
            .clone()
    }

    /// The current view, after reading the file again.
    pub fn current(&self, project: BorrowedFd<'_>) -> LockView {
        let hint = self.cached.lock().map(|c| c.bytes.len()).unwrap_or(4096);
        let read = read_lockfile_unchecked(project, hint);
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

fn invalid(last_valid: Arc<Lockfile>, e: &LockfileError) -> LockView {
    LockView::Invalid {
        last_valid,
        reason: Arc::new(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lockfile::Policy;
    use std::os::fd::AsFd;

    #[test]
    fn follows_the_file_and_fails_closed() {
        let t = tempfile::tempdir().unwrap();
        let fd = crate::core::fs::open_project(t.path()).unwrap();
        let good = Lockfile::empty(Policy::Block).to_canonical_bytes();
        std::fs::write(t.path().join("seal.json"), &good).unwrap();
        let live = LiveLockfile::new(good.clone(), Lockfile::empty(Policy::Block));
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
    }
}
