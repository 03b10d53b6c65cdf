//! Opens the kernel makes without asking (`seal mount --kernel-opens`: a
//! read-only view with a change feed): the view answers the first open with
//! `ENOSYS`, after which the kernel sends no open and no release again,
//! keeps each file's pages (`FOPEN_KEEP_CACHE`) and reads by inode (handle
//! 0). An open then costs what a native one does unless its path must be
//! looked up.
//!
//! What moves where:
//!
//! * **Bundle files are decided at lookup.** A lookup that shows one *pins*
//!   it: the inode is bound to the verified bytes the gate gave out (their
//!   digest and size, the bytes themselves kept a short while for the reads
//!   that follow). The inode reports the pinned size, whatever the disk's
//!   file has become, and every page the kernel caches for it comes from
//!   bytes of the pinned digest: one inode never mixes two versions. A later
//!   lookup reuses the pin (reading nothing) while the gate lets them be
//!   served again ([`Gate::ask`] with `Op::Reuse`: the verification run
//!   that allowed them is current, `seal.json` records the same digest);
//!   otherwise the gate decides again (`Op::Open`, which records an `allow`
//!   once per run and path). Bytes of another digest get a new
//!   inode. The entry is kept while the change feed proves the bundle
//!   current (`WATCHED_TTL`: opening it again reaches no one) and forgotten
//!   with the bundle's root at the first change the listener reads; an open
//!   in between serves the pinned bytes, which were approved.
//! * **Reads come by inode.** A pinned inode is read from its bytes (or,
//!   once they were let go, from bytes the gate gives out again,
//!   which must have the pinned digest: otherwise the read fails with
//!   `ESTALE` and never serves anything else). An ordinary file is read
//!   from the disk's file under its name at the time of the read.
//! * **The kernel's pages are kept true** by the directory feed (a change
//!   to a file drops its pages) and, where no feed watches, by
//!   `FUSE_AUTO_INVAL_DATA` (a changed mtime or size seen when attributes
//!   are refreshed, at most [`seal_gate::ATTR_TTL`] old, drops them). A
//!   change of `seal.json` makes the kernel forget every entry, so that
//!   every path is decided again under the new lockfile.
//!
//! Not the default: a file read while it is replaced on the disk can mix
//! versions once the kernel drops its pages, and large files read at the
//! speed of the FUSE page cache rather than through passthrough. Without
//! the option, with `--rehash-every-open`, without a complete change feed
//! and in the writable view (which registers each open's passthrough
//! backing), every open asks the view.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::View;
use crate::mount::error::FsError;
use seal_core::digest::Digest;
use seal_core::fs::open_file_beneath;
#[cfg(doc)]
use seal_gate::Gate;
use seal_gate::snapshot::Snapshot;
use seal_gate::{Op, Serve, Verdict, ViewPath, Who};

/// How long a pin keeps its bytes after their last use: the reads that
/// follow a lookup (an open, a program loading a bundle) are served from
/// them; a read after that takes them again from the gate.
const PIN_BYTES_FOR: Duration = Duration::from_secs(2);

/// How long the run a path's bytes were last given out under is
/// remembered (after that, or beyond [`GIVEN_MAX`] paths, the next lookup
/// records them again).
const GIVEN_FOR: Duration = Duration::from_secs(60);
const GIVEN_MAX: usize = 65_536;

/// The key of `path` in the record of what was given out: a 64-bit hash,
/// so that 20,000 paths cost a few hundred KiB (two paths that collide
/// share a record: one `allow` may go unrecorded, nothing else).
fn given_key(path: &ViewPath) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut hasher);
    hasher.finish()
}

/// The verified bytes an inode of a bundle file is bound to when the kernel
/// opens files itself (see `kernel_opens`).
pub(super) struct Pin {
    pub(super) digest: seal_core::digest::Digest,
    pub(super) size: u64,
    /// The bytes, while reads may follow (let go after a short while).
    bytes: Option<(Arc<Snapshot>, Instant)>,
    /// The disk's attributes when the inode was last looked up (what it
    /// shows, with the pinned size, once the file is gone from the disk).
    pub(super) stat: Option<nix::sys::stat::FileStat>,
    /// The verification run that allowed them (none: given out under
    /// `warn`, given out again at every lookup).
    run: Option<u64>,
}

/// The pins of one view and what was given out, each lock taken alone or
/// (the pins) while the inode table is held.
#[derive(Default)]
pub(super) struct Pins {
    /// Inodes of bundle files bound to verified bytes.
    pins: Mutex<HashMap<u64, Pin>>,
    /// The verification run under which each bundle file's bytes were last
    /// given out (and recorded), and when, by a hash of the path: the kernel
    /// forgetting an inode does not make the next lookup record them again
    /// under the same run.
    given: Mutex<HashMap<u64, (u64, Instant)>>,
}

impl Pins {
    pub(super) fn table(&self) -> MutexGuard<'_, HashMap<u64, Pin>> {
        self.pins.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn given(&self) -> MutexGuard<'_, HashMap<u64, (u64, Instant)>> {
        self.given.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Pin {
    /// A pin of bytes the gate just gave out, allowed by verification run
    /// `run` (none under `warn`).
    fn of(snapshot: Arc<Snapshot>, run: Option<u64>) -> Result<Pin, FsError> {
        // Every snapshot carries the digest its bytes were hashed to; one
        // without could never be told apart from another version.
        let digest = snapshot.digest().ok_or(FsError::NotFound)?;
        Ok(Pin {
            digest,
            size: snapshot.len(),
            bytes: Some((snapshot, Instant::now())),
            run,
            stat: None,
        })
    }
}

impl<Id> View<Id> {
    /// Whether the kernel opens files without asking (see the module).
    /// Stable once the session runs: the invalidator and the directory feed
    /// are set before the first request.
    pub fn opens_in_kernel(&self) -> bool {
        self.kernel_opens
            && !self.writable
            && self.gate.reuses_verifications()
            && self.kernel.told()
            && self.kernel.dir_feed().is_some()
    }

    /// The pin a lookup of the bundle file `name` in `parent` (at `path`)
    /// shows it with: the pin its inode has while the gate still approves
    /// it, else the bytes the gate gives out now. `None`: the gate serves it
    /// as an ordinary file (a name never part of a bundle, such as `.git`).
    pub(super) fn pin_for(
        &self,
        parent: u64,
        name: &std::ffi::OsStr,
        path: &ViewPath,
        who: Who,
    ) -> Result<Option<Pin>, FsError> {
        let held = self.inodes().peek(parent, name).and_then(|ino| {
            let pins = self.pins.table();
            let pin = pins.get(&ino)?;
            let bytes = pin.bytes.as_ref().map(|(b, _)| b.clone());
            Some((pin.digest, pin.size, bytes, pin.run?))
        });
        if let Some((digest, size, bytes, run)) = held {
            // Reused under the verification run that allowed the bytes when
            // they were given out (the feed proves the file unchanged since,
            // so a `stat` reads nothing); after another run, the gate
            // decides (and records) again. Bytes still held are kept for the
            // reads that follow (whatever the disk does meanwhile); once let
            // go, a read takes them from the gate again.
            let again = Op::Reuse {
                digest: &digest,
                run,
            };
            if self.gate.ask(path, again, who).yes {
                return Ok(Some(Pin {
                    digest,
                    size,
                    bytes: bytes.map(|b| (b, Instant::now())),
                    run: Some(run),
                    stat: None,
                }));
            }
        }
        let given = self.give_out(path, who);
        match given.serve {
            Serve::Nothing => Err(FsError::NotFound),
            Serve::Disk => Ok(None),
            Serve::Bytes(snapshot) => Pin::of(snapshot, given.run).map(Some),
        }
    }

    /// An open's verdict for bytes the kernel will keep: an `allow` is
    /// recorded once per verification run and path.
    fn give_out(&self, path: &ViewPath, who: Who) -> Verdict {
        let key = given_key(path);
        let recorded = self.pins.given().get(&key).map(|(run, _)| *run);
        let verdict = self.gate.ask(path, Op::Open { recorded }, who);
        if let Some(run) = verdict.run {
            let mut given = self.pins.given();
            if given.len() >= GIVEN_MAX {
                given.clear();
            }
            given.insert(key, (run, Instant::now()));
        }
        verdict
    }

    /// Before a lookup counts `name` in `parent`: an inode pinned to other
    /// bytes than `pinned` (or pinned while the name is now ordinary, or the
    /// other way round) leaves the name, which then gets a new inode. The
    /// kernel's pages of the old one are never shown under the name again.
    pub(super) fn retire_if_repinned(
        &self,
        parent: u64,
        name: &std::ffi::OsStr,
        pinned: Option<&Digest>,
    ) {
        let mut inodes = self.inodes();
        let Some(ino) = inodes.peek(parent, name) else {
            return;
        };
        let held = self.pins.table().get(&ino).map(|p| p.digest);
        if held.as_ref() != pinned {
            inodes.retire(ino);
        }
    }

    /// Binds `ino` to `pin`, keeping bytes it already holds of the same
    /// digest.
    pub(super) fn set_pin(&self, ino: u64, pin: Pin) {
        let mut pins = self.pins.table();
        match pins.get_mut(&ino) {
            Some(held) if held.digest == pin.digest => {
                held.run = pin.run;
                if pin.stat.is_some() {
                    held.stat = pin.stat;
                }
                if pin.bytes.is_some() {
                    held.bytes = pin.bytes;
                }
            }
            _ => {
                pins.insert(ino, pin);
            }
        }
    }

    /// The attributes the pinned inode `ino` was last looked up with.
    pub(super) fn pinned_stat(&self, ino: u64) -> Option<nix::sys::stat::FileStat> {
        self.pins.table().get(&ino).and_then(|p| p.stat)
    }

    /// Whether `--kernel-opens` was asked for (it takes effect only where
    /// [`View::opens_in_kernel`]).
    pub fn kernel_opens_asked(&self) -> bool {
        self.kernel_opens
    }

    /// Whether the inode `ino` is pinned with its bytes at hand (a read of
    /// it then hashes nothing).
    pub(super) fn pin_holds_bytes(&self, ino: u64) -> bool {
        self.pins
            .table()
            .get(&ino)
            .is_some_and(|p| p.bytes.is_some())
    }

    /// The size the inode `ino` shows when it is pinned.
    pub(super) fn pinned_size(&self, ino: u64) -> Option<u64> {
        self.pins.table().get(&ino).map(|p| p.size)
    }

    /// The first opens, before the kernel learns it may open by itself:
    /// decided as a lookup decides (a bundle file is pinned).
    pub(super) fn admit(&self, ino: u64, who: Who) -> Result<(), FsError> {
        let path = self.path_of(ino)?;
        let given = self.give_out(&path, who);
        match given.serve {
            Serve::Nothing => Err(FsError::NotFound),
            Serve::Disk if self.pins.table().contains_key(&ino) => Err(FsError::Stale),
            Serve::Disk => Ok(()),
            Serve::Bytes(snapshot) => {
                let pin = Pin::of(snapshot, given.run)?;
                // The lookup that led here pinned the inode; pinned to
                // other bytes (or not at all, looked up while the path was
                // ordinary), the name must be looked up again and gets a
                // new inode.
                let held = self.pins.table().get(&ino).map(|p| p.digest);
                if held != Some(pin.digest) {
                    tracing::debug!("open of inode {ino}: pinned {held:?}, now {:?}", pin.digest);
                    return Err(FsError::Stale);
                }
                self.set_pin(ino, pin);
                Ok(())
            }
        }
    }

    /// Reads `size` bytes at `offset` of the inode `ino` for an open the
    /// kernel made itself (see the module).
    pub fn read_unopened(
        &self,
        ino: u64,
        offset: u64,
        size: u32,
        who: Who,
    ) -> Result<Vec<u8>, FsError> {
        let held = {
            let mut pins = self.pins.table();
            pins.get_mut(&ino).map(|pin| {
                let bytes = pin.bytes.as_mut().map(|(snapshot, used)| {
                    *used = Instant::now();
                    snapshot.clone()
                });
                (pin.digest, bytes)
            })
        };
        let snapshot = match held {
            Some((_, Some(snapshot))) => snapshot,
            Some((digest, None)) => self.bytes_again(ino, &digest, who)?,
            None => return self.read_ordinary(ino, offset, size, who),
        };
        Ok(snapshot.read_at(offset, size as usize)?)
    }

    /// The pinned bytes of `ino` once more, from the gate: only bytes of
    /// the pinned digest, never others.
    fn bytes_again(&self, ino: u64, digest: &Digest, who: Who) -> Result<Arc<Snapshot>, FsError> {
        let path = self.path_of(ino)?;
        let given = self.give_out(&path, who);
        match given.serve {
            Serve::Bytes(snapshot) if snapshot.digest().as_ref() == Some(digest) => {
                self.set_pin(ino, Pin::of(snapshot.clone(), given.run)?);
                Ok(snapshot)
            }
            _ => {
                tracing::debug!("read of inode {ino}: its pinned bytes are no longer given out");
                Err(FsError::Stale)
            }
        }
    }

    /// A read of an unpinned inode: the disk's file under its name, as long
    /// as the gate still calls the path ordinary.
    fn read_ordinary(
        &self,
        ino: u64,
        offset: u64,
        size: u32,
        who: Who,
    ) -> Result<Vec<u8>, FsError> {
        let path = self.path_of(ino)?;
        let verdict = self.gate.ask(&path, Op::Open { recorded: None }, who);
        if !matches!(verdict.serve, Serve::Disk) {
            // Looked up before `seal.json` sealed it; the kernel was told to
            // forget the name, and the new lookup pins it.
            return Err(FsError::Stale);
        }
        let fd = open_file_beneath(self.gate.project_fd(), &path.raw.to_os_string())
            .map_err(FsError::from_walk)?;
        let file = std::fs::File::from(fd);
        Ok(seal_core::fs::read_chunk_at(&file, offset, size as usize)?)
    }

    /// Lets go of pinned bytes unused for [`PIN_BYTES_FOR`] (the sweeper
    /// calls this every second): the kernel keeps the pages it read.
    pub fn sweep_pins(&self) {
        self.let_go_of_pinned_bytes(PIN_BYTES_FOR);
        seal_gate::memory::shrink_if_sparse(&mut self.pins.table());
        let mut given = self.pins.given();
        given.retain(|_, (_, when)| when.elapsed() < GIVEN_FOR);
        seal_gate::memory::shrink_if_sparse(&mut given);
    }

    /// Lets go of pinned bytes unused for `unused_for`.
    pub(in crate::mount) fn let_go_of_pinned_bytes(&self, unused_for: Duration) {
        let mut pins = self.pins.table();
        for pin in pins.values_mut() {
            if pin
                .bytes
                .as_ref()
                .is_some_and(|(_, used)| used.elapsed() >= unused_for)
            {
                pin.bytes = None;
            }
        }
    }
}
