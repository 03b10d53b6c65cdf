//! Reusing a bundle's last full verification while the kernel proves it
//! current: the cost of an open stops growing with its bundle.
//!
//! A full verification of a sealed root places change-feed watches on
//! everything it reads before it reads it ([`Watching`], its witness): each
//! directory on the way from the project root (for the one name on the
//! path), then, from the walk that hashes, every directory and file under the
//! root (keeping the bytes of every file while the bundle is small). Its
//! result is reused by later decisions about the same root for as long as
//!
//! * the subscription is clean (no event on any watched inode since before
//!   the verification began; the queue is read at every decision, so every
//!   change that completed before the decision is counted), and
//! * `seal.json` records the same entry for the root under the same policy.
//!
//! An open is then served from the snapshot the verification kept of that
//! file, or from a fresh read of that one file whose digest must equal the
//! one the verification saw (otherwise the bundle is verified again in
//! full). Bytes served are always bytes that were hashed and matched.
//!
//! Without a complete feed (see [`crate::feed`]) nothing is cached and every
//! decision verifies afresh, as `--rehash-every-open` asks.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::feed::{Feed, Subscription};
use crate::snapshot::Snapshot;
use seal_core::digest::Digest;
use seal_core::effort::Witness;
use seal_core::fs::{EntryKind, RawPath, list_fresh_dir, lstat_at, nfc_name, open_dir_at};
use seal_core::lockfile::{BundleEntry, Policy};
use seal_core::paths::{BundleKey, FilePath};

use super::Assessment;
use super::flight::Answer;

/// Every file's bytes are kept at a full verification while the bundle's
/// files so far number at most this many and hold at most this many bytes:
/// a small bundle's files can then be opened without reading the disk again.
const KEEP_ALL_FILES: usize = 4096;
const KEEP_ALL_BYTES: u64 = 64 << 20;
/// Kept bytes are released when a bundle has not been used for this long
/// (a burst of opens, as an agent loading a bundle makes, is served from
/// them; a later open reads its one file again), and its whole entry (with
/// its watches) a while later.
pub const KEEP_BYTES_FOR: Duration = Duration::from_secs(2);
const KEEP_ENTRY_FOR: Duration = Duration::from_secs(120);

/// What a verification's watches cover: the subscription, and where each
/// file is.
pub(crate) struct Watched {
    pub sub: Subscription,
    /// Each regular file under the root, by its path in the bundle.
    pub files: HashMap<FilePath, RawPath>,
}

/// Why a root is not watched (it is then verified in full at every
/// decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unwatchable {
    /// It has more entries than the feed may still watch.
    TooMany { room: usize },
    /// A name on its path is ambiguous, or something could not be read
    /// (the verification says what).
    Unclear,
}

/// The watches of one verification, placed as it reads (its [`Witness`]):
/// the names on the way to the root before it starts ([`watch_way`]), then
/// each directory under the root as the hashing walk opens it, before it is
/// listed, and each file as it is listed, before it is read. So the watches
/// cover exactly what the verification reads, placed by the walk that reads
/// it: whatever changes after is seen by the feed, whatever changed before
/// by the hash.
pub(crate) struct Watching {
    state: Mutex<WatchState>,
    /// Watches the feed may still place.
    room: usize,
}

struct WatchState {
    sub: Subscription,
    files: HashMap<FilePath, RawPath>,
    /// Files whose bytes are kept, and their bytes (by `lstat`).
    keep: std::collections::HashSet<FilePath>,
    kept_bytes: u64,
    /// Watches placed under the root.
    placed: usize,
    /// A watch the verification needs could not be placed.
    full: bool,
}

impl Watching {
    fn state(&self) -> MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the bytes of `path` are kept (every file while the bundle is
    /// small).
    pub(crate) fn keeps(&self, path: &FilePath) -> bool {
        self.state().keep.contains(path)
    }

    /// What the watches cover, once the verification is done.
    fn done(self) -> Result<Watched, Unwatchable> {
        let state = self.state.into_inner().unwrap_or_else(|e| e.into_inner());
        match state.full {
            true => Err(Unwatchable::TooMany { room: self.room }),
            false => Ok(Watched {
                sub: state.sub,
                files: state.files,
            }),
        }
    }
}

impl Witness for Watching {
    fn dir(&self, dir: BorrowedFd<'_>) {
        let mut state = self.state();
        state.placed += 1;
        match state.placed > self.room {
            true => state.full = true,
            false => state.sub.watch_fd(dir),
        }
    }

    fn file(&self, dir: BorrowedFd<'_>, name: &OsStr, path: &FilePath, raw: &RawPath) {
        let mut state = self.state();
        let (links, size) = lstat_at(dir, name).map_or((1, 0), |st| (st.st_nlink, st.st_size));
        // A directory's watch sees every entry made, removed or renamed in
        // it and every write to a file through it; a file with a second name
        // (which may be outside the bundle) needs a watch of its own, and
        // other files get one while half the room is left (it also sees
        // writes through a name the file is given later).
        if links > 1 || state.placed < self.room / 2 {
            state.placed += 1;
            match state.placed > self.room {
                true => state.full = true,
                false => state.sub.watch_at(dir, name),
            }
        }
        state.files.insert(path.clone(), raw.clone());
        let bytes = state.kept_bytes.saturating_add(size as u64);
        if state.keep.len() < KEEP_ALL_FILES && bytes <= KEEP_ALL_BYTES {
            state.keep.insert(path.clone());
            state.kept_bytes = bytes;
        }
    }
}

/// Places watches on the names on the way from the project root to `key`'s
/// root (the root itself included), before the verification lists them;
/// the verification's walk watches what is below ([`Watching`]).
pub(crate) fn watch_way(
    feed: &Arc<Feed>,
    project: BorrowedFd<'_>,
    key: &BundleKey,
    tag: u64,
) -> Result<Watching, Unwatchable> {
    let room = feed.watch_room();
    let mut sub = feed.subscribe_tagged(Some(tag));
    let segments: Vec<&str> = key.segments().collect();
    let mut dir: Option<OwnedFd> = None;
    for (i, segment) in segments.iter().enumerate() {
        let here = dir.as_ref().map_or(project, |d| d.as_fd());
        let entries = list_fresh_dir(reopen(here).ok_or(Unwatchable::Unclear)?.as_fd())
            .map_err(|_| Unwatchable::Unclear)?;
        let matches: Vec<_> = entries
            .iter()
            .filter(|e| nfc_name(&e.name).as_deref() == Some(*segment))
            .collect();
        match matches.as_slice() {
            // Absent: watch for it to appear.
            [] => {
                sub.watch_entry(here, OsStr::new(segment));
                break;
            }
            [entry] => {
                sub.watch_entry(here, &entry.name);
                // A symlink or a special file on the way: the verification
                // says Mismatch, and a change of the name is seen here.
                if i + 1 == segments.len() || entry.kind != EntryKind::Dir {
                    break;
                }
                dir = Some(open_dir_at(here, &entry.name).map_err(|_| Unwatchable::Unclear)?);
            }
            _ => return Err(Unwatchable::Unclear),
        }
    }
    let state = WatchState {
        sub,
        files: HashMap::new(),
        keep: Default::default(),
        kept_bytes: 0,
        placed: 0,
        full: false,
    };
    Ok(Watching {
        state: Mutex::new(state),
        room,
    })
}

/// Whether a verification made under `then` still answers for `now`.
fn same_pin(then: Option<&BundleEntry>, now: Option<&BundleEntry>) -> bool {
    match (then, now) {
        (Some(then), Some(now)) => then.pins_same_files(now),
        (None, None) => true,
        _ => false,
    }
}

/// A descriptor of the same directory for listing (a listing moves the
/// offset of the descriptor it reads).
fn reopen(dir: BorrowedFd<'_>) -> Option<OwnedFd> {
    open_dir_at(dir, std::ffi::OsStr::new(".")).ok()
}

/// One reusable verification.
pub(crate) struct Cached {
    sub: Subscription,
    /// What `seal.json` said of the root when it was verified.
    entry: Option<BundleEntry>,
    policy: Policy,
    pub assessment: Arc<Assessment>,
    /// Every file under the root: where it is and, when the verification
    /// hashed it, its digest.
    files: HashMap<FilePath, (RawPath, Option<Digest>)>,
    snapshots: Mutex<HashMap<FilePath, Arc<Snapshot>>>,
    /// Files being read again (their bytes were let go): an open of one
    /// waits for that read instead of making its own.
    refetching: Mutex<std::collections::HashSet<FilePath>>,
    refetched: std::sync::Condvar,
    /// Set when a file read again no longer had the bytes the verification
    /// saw: the requests that waited for that read verify afresh too.
    void: std::sync::atomic::AtomicBool,
    last_used: Mutex<Instant>,
}

/// What an open finds of a file's bytes in a cached verification.
enum KeptBytes {
    Kept(Arc<Snapshot>),
    /// Not kept: this request reads the file again (and ends with
    /// [`Cached::refetch_done`], whatever came of it).
    ReadAgain,
    /// The read another request made showed a change: verify afresh.
    Void,
}

impl Cached {
    pub fn new(
        watched: Watched,
        entry: Option<BundleEntry>,
        policy: Policy,
        assessment: Arc<Assessment>,
        digests: &std::collections::BTreeMap<FilePath, Digest>,
        kept: HashMap<FilePath, Arc<Snapshot>>,
    ) -> Cached {
        let files = watched
            .files
            .into_iter()
            .map(|(p, raw)| {
                let digest = digests.get(&p).copied();
                (p, (raw, digest))
            })
            .collect();
        Cached {
            sub: watched.sub,
            entry,
            policy,
            assessment,
            files,
            snapshots: Mutex::new(kept),
            refetching: Mutex::new(std::collections::HashSet::new()),
            refetched: std::sync::Condvar::new(),
            void: std::sync::atomic::AtomicBool::new(false),
            last_used: Mutex::new(Instant::now()),
        }
    }

    fn snapshots(&self) -> MutexGuard<'_, HashMap<FilePath, Arc<Snapshot>>> {
        self.snapshots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The kept snapshot of `path`, once no other request is reading it
    /// again.
    fn kept_or_refetch(&self, path: &FilePath) -> KeptBytes {
        let mut refetching = self.refetching.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.void.load(Ordering::Acquire) {
                return KeptBytes::Void;
            }
            if let Some(s) = self.snapshots().get(path) {
                return KeptBytes::Kept(s.clone());
            }
            if refetching.insert(path.clone()) {
                return KeptBytes::ReadAgain;
            }
            refetching = self
                .refetched
                .wait(refetching)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    fn refetch_done(&self, path: &FilePath) {
        self.refetching
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(path);
        self.refetched.notify_all();
    }
}

/// Ends a refetch of one file however the read ends (an error, a panic).
struct Refetch<'a> {
    cached: &'a Cached,
    path: &'a FilePath,
}

impl Drop for Refetch<'_> {
    fn drop(&mut self) {
        self.cached.refetch_done(self.path);
    }
}

/// What the cache can tell about one decision.
pub(crate) enum Lookup {
    /// The answer, from a verification the feed proves current.
    Answer(Answer<Assessment>),
    /// Verify in full (nothing cached, or no longer current).
    Verify,
}

/// The cached verifications of one gate.
pub(crate) struct VerifiedCache {
    feed: Option<Arc<Feed>>,
    entries: Mutex<HashMap<BundleKey, Arc<Cached>>>,
    last_sweep: Mutex<Instant>,
    /// The tag of each bundle's subscriptions (told to the feed's listener
    /// when one becomes dirty), with the key it stands for.
    tags: Mutex<HashMap<BundleKey, u64>>,
    keys: Mutex<HashMap<u64, BundleKey>>,
    /// Bundles already warned about being too large to watch.
    warned: Mutex<std::collections::HashSet<BundleKey>>,
}

/// Tags of bundle subscriptions have this bit set (the mount's directory
/// watches use the others).
pub(crate) const BUNDLE_TAG: u64 = 1 << 63;

impl VerifiedCache {
    /// A cache that reuses verifications while `feed` proves them current
    /// (none: nothing is reused, as `--rehash-every-open` asks).
    pub(crate) fn with_feed(feed: Option<Arc<Feed>>) -> VerifiedCache {
        VerifiedCache {
            feed,
            entries: Mutex::new(HashMap::new()),
            last_sweep: Mutex::new(Instant::now()),
            tags: Mutex::new(HashMap::new()),
            keys: Mutex::new(HashMap::new()),
            warned: Mutex::new(std::collections::HashSet::new()),
        }
    }

    /// The tag of `key`'s subscriptions.
    fn tag_of(&self, key: &BundleKey) -> u64 {
        let mut tags = self.tags.lock().unwrap_or_else(|e| e.into_inner());
        let next = BUNDLE_TAG | tags.len() as u64;
        let tag = *tags.entry(key.clone()).or_insert(next);
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(tag, key.clone());
        tag
    }

    /// The bundle a tag stands for.
    pub(crate) fn key_of(&self, tag: u64) -> Option<BundleKey> {
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&tag)
            .cloned()
    }

    /// Whether a verification of `key` under `entry` and `policy` is cached
    /// and proven current now.
    pub(crate) fn is_current(
        &self,
        key: &BundleKey,
        entry: Option<&BundleEntry>,
        policy: Policy,
    ) -> bool {
        self.serves_without_hashing(key, entry, policy, None)
    }

    /// [`VerifiedCache::is_current`], and, for `file`, whether its bytes are
    /// at hand: serving a file its verification hashed but no longer keeps
    /// the bytes of reads and hashes it again.
    pub(crate) fn serves_without_hashing(
        &self,
        key: &BundleKey,
        entry: Option<&BundleEntry>,
        policy: Policy,
        file: Option<&FilePath>,
    ) -> bool {
        let Some(cached) = self.entries().get(key).cloned() else {
            return false;
        };
        same_pin(cached.entry.as_ref(), entry)
            && cached.policy == policy
            && cached.sub.is_clean()
            && file
                .is_none_or(|f| !cached.files.contains_key(f) || cached.snapshots().contains_key(f))
    }

    pub fn feed(&self) -> Option<&Arc<Feed>> {
        self.feed.as_ref()
    }

    fn entries(&self) -> MutexGuard<'_, HashMap<BundleKey, Arc<Cached>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Places the watches on the way to `key`'s root for a full
    /// verification about to start (none without a feed); the verification
    /// places the rest as it reads ([`Watching`]).
    pub(crate) fn watch(&self, project: BorrowedFd<'_>, key: &BundleKey) -> Option<Watching> {
        let feed = self.feed.as_ref()?;
        match watch_way(feed, project, key, self.tag_of(key)) {
            Ok(watching) => Some(watching),
            Err(why) => {
                self.warn_unwatchable(feed, key, why);
                None
            }
        }
    }

    /// What the watches of a finished verification of `key` cover, when
    /// they cover everything it read.
    pub(crate) fn watched(&self, key: &BundleKey, watching: Watching) -> Option<Watched> {
        let feed = self.feed.as_ref()?;
        watching
            .done()
            .map_err(|why| self.warn_unwatchable(feed, key, why))
            .ok()
    }

    /// Says once per bundle why it is verified in full at every open, when
    /// the user can do something about it.
    fn warn_unwatchable(&self, feed: &Feed, key: &BundleKey, why: Unwatchable) {
        let advice = match why {
            Unwatchable::TooMany { room } => format!(
                "it has more entries than the {room} the change feed may still watch \
                 (half of fs.inotify.max_user_watches, {} in all, less those in use); \
                 raise that sysctl to make its opens cheap",
                feed.watch_budget()
            ),
            Unwatchable::Unclear => return,
        };
        let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
        if warned.insert(key.clone()) {
            tracing::warn!(
                "bundle {} is verified in full at every open: {advice}",
                seal_core::escape::quoted(key.as_str())
            );
        }
    }

    /// Stores a full verification's result for reuse.
    pub(crate) fn store(&self, key: &BundleKey, cached: Cached) {
        self.entries().insert(key.clone(), Arc::new(cached));
    }

    /// Forgets what is cached for `key` (the listener is told, so that the
    /// kernel forgets what it remembered while the bundle was watched).
    pub(crate) fn forget(&self, key: &BundleKey) {
        if self.entries().remove(key).is_some() {
            self.tell_dropped(key);
        }
    }

    fn tell_dropped(&self, key: &BundleKey) {
        let tag = self
            .tags
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied();
        if let (Some(feed), Some(tag)) = (&self.feed, tag) {
            feed.tell(crate::feed::Notice::Dirty(tag));
        }
    }

    /// The answer for a decision about `key` (wanting the bytes of `want`)
    /// under `entry` and `policy`, when a cached verification is current.
    pub fn lookup(
        &self,
        project: BorrowedFd<'_>,
        key: &BundleKey,
        entry: Option<&BundleEntry>,
        policy: Policy,
        want: Option<&FilePath>,
    ) -> Lookup {
        self.sweep();
        let Some(cached) = self.entries().get(key).cloned() else {
            return Lookup::Verify;
        };
        if !same_pin(cached.entry.as_ref(), entry)
            || cached.policy != policy
            || !cached.sub.is_clean()
        {
            self.forget(key);
            return Lookup::Verify;
        }
        *cached.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        let verdict = cached.assessment.clone();
        let Some(path) = want else {
            return Lookup::Answer(Answer {
                verdict,
                snapshot: None,
            });
        };
        if let Some(s) = cached.snapshots().get(path) {
            return Lookup::Answer(Answer {
                verdict,
                snapshot: Some(s.clone()),
            });
        }
        let Some((raw, digest)) = cached.files.get(path) else {
            // Not a file the verification hashed (and nothing changed since):
            // nothing to serve.
            return Lookup::Answer(Answer {
                verdict,
                snapshot: None,
            });
        };
        // Kept, or read again by one request while the others wait for it.
        match cached.kept_or_refetch(path) {
            KeptBytes::Kept(s) => {
                return Lookup::Answer(Answer {
                    verdict,
                    snapshot: Some(s),
                });
            }
            KeptBytes::Void => return Lookup::Verify,
            KeptBytes::ReadAgain => {}
        }
        let _refetch = Refetch {
            cached: &cached,
            path,
        };
        let verified = cached.assessment.state
            == super::RootState::Bundle(seal_core::verify::BundleState::Verified);
        let fresh = Snapshot::of_file(project, raw);
        let serve = match (&fresh, digest) {
            // A Verified bundle serves only the bytes it was verified with.
            (Ok(s), Some(d)) => s.digest() == Some(*d),
            // A bundle shown under `warn` serves what is there now (the feed
            // proves it unchanged since the verification).
            (Ok(_), None) => !verified,
            (Err(_), _) => false,
        };
        match fresh {
            Ok(s) if serve => {
                let s = Arc::new(s);
                cached.snapshots().insert(path.clone(), s.clone());
                Lookup::Answer(Answer {
                    verdict,
                    snapshot: Some(s),
                })
            }
            // Changed (or unreadable) since: verify the bundle again.
            _ => {
                cached.void.store(true, Ordering::Release);
                self.forget(key);
                Lookup::Verify
            }
        }
    }

    /// Releases every kept snapshot now (later opens read their one file
    /// again, checked against the digest the verification saw).
    #[cfg(test)]
    pub(crate) fn release_kept(&self) {
        for cached in self.entries().values() {
            cached.snapshots().clear();
        }
    }

    /// Releases kept bytes of bundles not used lately, and then the
    /// entries themselves (and their watches).
    pub fn sweep(&self) {
        let now = Instant::now();
        {
            let mut last = self.last_sweep.lock().unwrap_or_else(|e| e.into_inner());
            if now.duration_since(*last) < Duration::from_millis(500) {
                return;
            }
            *last = now;
        }
        let mut dropped = Vec::new();
        self.entries().retain(|key, c| {
            let idle = now.duration_since(*c.last_used.lock().unwrap_or_else(|e| e.into_inner()));
            if idle > KEEP_BYTES_FOR {
                c.snapshots().clear();
            }
            let keep = idle <= KEEP_ENTRY_FOR;
            if !keep {
                dropped.push(key.clone());
            }
            keep
        });
        for key in dropped {
            self.tell_dropped(&key);
        }
    }
}
