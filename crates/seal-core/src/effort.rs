//! How much work a verification may spend: when it stops after a proof that
//! the root cannot be Verified ([`AfterProof`]), and a [`Cancel`] that bounds
//! or abandons the work (a flag, a byte budget), checked between
//! directories and between the chunks of every file.
//!
//! The CLI verifies in full (its lists must be complete); the mount verifies a
//! bundle at every open and needs only the verdict, so one hostile bundle (a
//! 20 GB sparse file, a directory chain thousands deep) must not cost more than
//! it takes to prove it wrong.

use std::ffi::OsStr;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::fs::RawPath;
use crate::paths::FilePath;

/// What a verification does once it has proven that the root cannot be
/// Verified (a name the record cannot hold, a digest that differs, a problem,
/// a recorded file missing; for an unrecorded root, anything trackable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterProof {
    /// Go on: walk and hash everything, for complete lists (`seal verify -v`).
    Finish,
    /// Hash only the files the keeper wants (a
    /// `warn` view still serves the bytes of a Mismatch bundle); walk on to
    /// find them.
    HashWanted,
    /// Stop at once: the verdict is all that is needed (a `block` view).
    Stop,
}

/// Counters a progress display can poll while hashing runs (bytes are counted
/// chunk by chunk, so they also tell how much a run read).
#[derive(Debug, Default)]
pub struct HashProgress {
    pub files_done: AtomicU64,
    pub bytes_done: AtomicU64,
    pub files_total: AtomicU64,
}

/// A way to bound or abandon a verification from outside. Cancelled means:
/// the flag was set, or more bytes than the budget were read. Checked between directories and between chunks (256 KiB) of a file.
#[derive(Debug)]
pub struct Cancel {
    flag: AtomicBool,
    byte_budget: Option<u64>,
    bytes: AtomicU64,
}

impl Cancel {
    /// Never cancelled unless [`Cancel::cancel`] is called.
    pub const fn new() -> Cancel {
        Cancel {
            flag: AtomicBool::new(false),
            byte_budget: None,
            bytes: AtomicU64::new(0),
        }
    }

    /// Cancelled once more than `bytes` file bytes have been read.
    pub fn with_byte_budget(mut self, bytes: u64) -> Cancel {
        self.byte_budget = Some(bytes);
        self
    }

    /// Abandons the work (from any thread).
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        if self.flag.load(Ordering::Relaxed) {
            return true;
        }
        self.byte_budget
            .is_some_and(|budget| self.bytes.load(Ordering::Relaxed) > budget)
    }

    /// Counts bytes read against the budget.
    pub(crate) fn spend(&self, bytes: u64) {
        if self.byte_budget.is_some() {
            self.bytes.fetch_add(bytes, Ordering::Relaxed);
        }
    }
}

impl Default for Cancel {
    fn default() -> Cancel {
        Cancel::new()
    }
}

/// Told of every directory and file a verification reads, before it reads
/// them, from the thread that walks (the mount's change feed watches them:
/// whatever changes after is seen by the feed, whatever changed before by
/// the hash). Files are told as they are listed, whether or not they are
/// then read.
pub trait Witness: Sync {
    /// Directory `dir`, open, is about to be listed.
    fn dir(&self, dir: BorrowedFd<'_>);
    /// The regular file `name` of `dir` (the root's `path`, `raw` from the
    /// project root) is about to be read.
    fn file(&self, dir: BorrowedFd<'_>, name: &OsStr, path: &FilePath, raw: &RawPath);
}

/// The effort a verification may spend, and a meter to watch it.
#[derive(Clone, Copy)]
pub struct Effort<'c> {
    pub after_proof: AfterProof,
    pub cancel: &'c Cancel,
    /// Counters of files and bytes read (a progress line, or a test).
    pub progress: Option<&'c HashProgress>,
    /// Told of what is read before it is read.
    pub witness: Option<&'c dyn Witness>,
}

/// Never cancelled; the cancel of [`Effort::full`].
static NEVER: Cancel = Cancel::new();

impl Effort<'static> {
    /// Everything walked and hashed, never cancelled: the CLI's verification.
    pub fn full() -> Effort<'static> {
        Effort {
            after_proof: AfterProof::Finish,
            cancel: &NEVER,
            progress: None,
            witness: None,
        }
    }
}

/// The stop rule of one run, shared by the walking and hashing threads.
pub(crate) struct Stopper<'c> {
    effort: Effort<'c>,
    proved: AtomicBool,
}

impl<'c> Stopper<'c> {
    pub(crate) fn new(effort: Effort<'c>) -> Stopper<'c> {
        Stopper {
            effort,
            proved: AtomicBool::new(false),
        }
    }

    pub fn cancel(&self) -> &Cancel {
        self.effort.cancel
    }

    pub(crate) fn witness(&self) -> Option<&'c dyn Witness> {
        self.effort.witness
    }

    /// Records that the root cannot be Verified.
    pub(crate) fn prove(&self) {
        self.proved.store(true, Ordering::Relaxed);
    }

    pub(crate) fn proved(&self) -> bool {
        self.proved.load(Ordering::Relaxed)
    }

    /// Whether hashing a file (that the keeper does or does not want) must be
    /// abandoned now.
    pub(crate) fn abandon(&self, wanted: bool) -> bool {
        if self.effort.cancel.is_cancelled() {
            return true;
        }
        self.proved()
            && match self.effort.after_proof {
                AfterProof::Finish => false,
                AfterProof::HashWanted => !wanted,
                AfterProof::Stop => true,
            }
    }

    /// Whether the walk must stop now.
    pub(crate) fn stop_walk(&self) -> bool {
        self.effort.cancel.is_cancelled()
            || (self.proved() && self.effort.after_proof == AfterProof::Stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_and_flag_cancel() {
        let c = Cancel::new().with_byte_budget(10);
        c.spend(10);
        assert!(!c.is_cancelled());
        c.spend(1);
        assert!(c.is_cancelled());
        let c = Cancel::new();
        assert!(!c.is_cancelled());
        c.cancel();
        assert!(c.is_cancelled());
    }

    #[test]
    fn after_proof_decides_what_is_abandoned() {
        let never = Cancel::new();
        for (after, wanted, unwanted) in [
            (AfterProof::Finish, false, false),
            (AfterProof::HashWanted, false, true),
            (AfterProof::Stop, true, true),
        ] {
            let s = Stopper::new(Effort {
                after_proof: after,
                cancel: &never,
                witness: None,
                progress: None,
            });
            assert!(!s.abandon(true) && !s.abandon(false) && !s.stop_walk());
            s.prove();
            assert_eq!((s.abandon(true), s.abandon(false)), (wanted, unwanted));
            assert_eq!(s.stop_walk(), after == AfterProof::Stop);
        }
    }
}
