//! Hashing a sealed root (SPEC §What Gets Hashed, §Canonicalization Rules).
//!
//! A directory root is walked without following links ([`super::walk`]:
//! linear in its entries whatever its shape, with bounded descriptors); `.git`
//! is skipped at any depth and `seal.json` only when the root is the project
//! root itself. Every regular file is then opened relative to its directory's
//! descriptor with `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS` (a single name, so no
//! path as long as the depth is ever resolved), checked with `fstat` (a file
//! swapped for a FIFO or a link after the walk is caught here), read once and
//! hashed. Files are hashed in parallel on every core while the walk goes on.
//! A caller that must serve the verified bytes (the mount) passes a [`Keeper`]
//! that receives exactly the chunks that were hashed, so what is served is
//! what was verified.
//!
//! A caller that only needs a verdict passes an [`Effort`] and the recorded
//! files: the walk compares names against the record as it lists them, and
//! the run stops at the first proof that the root cannot be Verified (a name
//! the record cannot hold, a differing digest, a problem, a recorded file
//! missing) or when the [`Cancel`](super::effort::Cancel) fires, checked
//! between directories and between chunks.
//!
//! Anything that stops a file from being verified becomes a [`Problem`]:
//! `verify` turns problems into Mismatch, `pin` aborts on them.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};

use sha2::{Digest as _, Sha256};

use super::digest::Digest;
use super::discovery::{DiscoveryError, Listings, open_dirs};
use super::effort::{Effort, HashProgress, Stopper};
use super::expected::Expected;
use super::fs::{DirEntry, EntryKind, RawPath, fstat_fd, nfc_name, open_file_beneath};
use super::lockfile::LOCKFILE_NAME;
use super::paths::FilePath;
use super::walk::{DirFd, Flow, Gauge, Subdir, Visit, Walked, walk};

/// Why a file under a sealed root cannot be verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A symlink, FIFO, socket or device (SPEC: unsupported file types).
    Unsupported { path: String, kind: EntryKind },
    /// Opening or reading failed (SPEC: treated as a modified file).
    Unreadable { path: String, error: String },
    /// Two names under one directory normalise to the same NFC string.
    NfcTwins { path: String },
    /// A name that is not UTF-8 cannot be recorded in the lockfile.
    NotUtf8 { path: String },
    /// A UTF-8 name that a lockfile path cannot hold (a backslash in a file
    /// name; a backslash, CR or LF in a bundle root's name).
    BadName { path: String, reason: String },
    /// The root is reached through a symlinked directory.
    ThroughSymlink { path: String },
}

impl Problem {
    /// The sealed-root-relative (or project-relative) path concerned, as a
    /// plain string (escaped only when displayed).
    pub(crate) fn path(&self) -> &str {
        match self {
            Problem::Unsupported { path, .. }
            | Problem::Unreadable { path, .. }
            | Problem::NfcTwins { path }
            | Problem::NotUtf8 { path }
            | Problem::BadName { path, .. }
            | Problem::ThroughSymlink { path } => path,
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = crate::escape::escaped(self.path());
        match self {
            Problem::Unsupported { kind, .. } => {
                write!(
                    f,
                    "{path} is {} (only regular files and directories can be sealed)",
                    kind.describe()
                )
            }
            Problem::Unreadable { error, .. } => write!(f, "{path} cannot be read: {error}"),
            Problem::NfcTwins { .. } => {
                write!(
                    f,
                    "{path} exists under two names that are equal after Unicode NFC normalisation"
                )
            }
            Problem::NotUtf8 { .. } => write!(f, "{path} has a name that is not valid UTF-8"),
            Problem::BadName { reason, .. } => {
                write!(f, "{path} has a name seal.json cannot record: it {reason}")
            }
            Problem::ThroughSymlink { .. } => {
                write!(f, "{path} is a symlink on the way to the sealed root")
            }
        }
    }
}

/// Receives the bytes of chosen files while they are hashed.
pub trait Keeper: Sync {
    type Writer: Send;
    type Kept: Send;
    /// Whether the bytes of `path` must be kept.
    fn wants(&self, path: &FilePath) -> bool;
    fn begin(&self, path: &FilePath, size_hint: u64) -> io::Result<Self::Writer>;
    fn append(&self, writer: &mut Self::Writer, chunk: &[u8]) -> io::Result<()>;
    fn finish(&self, writer: Self::Writer) -> io::Result<Self::Kept>;
}

/// Keeps nothing: plain verification and pinning.
pub struct KeepNothing;

impl Keeper for KeepNothing {
    type Writer = ();
    type Kept = ();
    fn wants(&self, _: &FilePath) -> bool {
        false
    }
    fn begin(&self, _: &FilePath, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn append(&self, _: &mut (), _: &[u8]) -> io::Result<()> {
        Ok(())
    }
    fn finish(&self, _: ()) -> io::Result<()> {
        Ok(())
    }
}

/// How a run over a root ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// Every directory listed and every file found hashed: the observation
    /// (and so every list derived from it) is complete.
    Complete,
    /// Stopped after a proof that the root cannot be Verified: what was
    /// found is true, but lists derived from it are partial.
    Proven,
    /// Cancelled before any proof: nothing is proven either way.
    Cancelled,
}

/// What was found under one sealed root.
#[derive(Debug)]
pub struct Observed<K> {
    /// Hashes of every trackable file, by NFC root-relative path (`.` for a
    /// regular-file root).
    pub files: BTreeMap<FilePath, Digest>,
    /// Bytes kept by the [`Keeper`], by path.
    pub kept: BTreeMap<FilePath, K>,
    /// How many bytes the files in `files` hold (as hashed): what pinning
    /// the root commits every later verification to reading.
    pub bytes: u64,
    pub problems: Vec<Problem>,
    /// Files found whose bytes were not read because the run stopped early
    /// (sorted). Always empty when `finish` is `Complete`.
    pub unread: Vec<FilePath>,
    /// Whether every directory under the root was listed (if so, a recorded
    /// file not found is missing).
    pub listed_all: bool,
    pub finish: Finish,
}

impl<K> Observed<K> {
    fn new() -> Self {
        Observed {
            files: BTreeMap::new(),
            kept: BTreeMap::new(),
            bytes: 0,
            problems: Vec::new(),
            unread: Vec::new(),
            listed_all: true,
            finish: Finish::Complete,
        }
    }

    /// True when the root was listed in full and holds nothing trackable (no
    /// file, no problem): a directory that is not a bundle.
    pub(crate) fn is_empty(&self) -> bool {
        self.listed_all
            && self.files.is_empty()
            && self.problems.is_empty()
            && self.unread.is_empty()
    }
}

/// One file to hash: its directory, its name there, what it will be called,
/// and what the record says it must hash to.
struct Job {
    path: FilePath,
    dir: Arc<DirFd>,
    name: OsString,
    /// The keeper wants its bytes.
    wanted: bool,
    /// The recorded digest (`None`: not recorded, or no record to check).
    expect: Option<Digest>,
}

/// Hashes the sealed root at `raw_root` (project-relative), which the caller
/// found to be of `kind`: everything, in full.
pub fn observe_root<K: Keeper>(
    listings: &mut Listings<'_>,
    raw_root: &RawPath,
    kind: EntryKind,
    keeper: &K,
    progress: Option<&HashProgress>,
) -> Result<Observed<K::Kept>, DiscoveryError> {
    let effort = Effort {
        progress,
        ..Effort::full()
    };
    observe_root_with(listings, raw_root, kind, keeper, effort, None)
}

/// Hashes the sealed root at `raw_root` spending no more than `effort`. With
/// `recorded` (the bundle's `files`), names are checked against it as they
/// are listed, each digest as soon as it is known, and missing files once the
/// walk is complete; without it, any trackable entry proves the root cannot
/// be Verified (an unrecorded root). What happens after a proof is
/// `effort.after_proof`; the result says how the run ended
/// ([`Observed::finish`]).
pub fn observe_root_with<K: Keeper>(
    listings: &mut Listings<'_>,
    raw_root: &RawPath,
    kind: EntryKind,
    keeper: &K,
    effort: Effort<'_>,
    recorded: Option<&BTreeMap<FilePath, Digest>>,
) -> Result<Observed<K::Kept>, DiscoveryError> {
    let expected = recorded.map(Expected::new);
    let stopper = Stopper::new(effort);
    let pool = Pool {
        queue: Queue::new(),
        results: Mutex::new(Vec::new()),
        keeper,
        progress: effort.progress,
        stopper: &stopper,
    };
    let mut observed = Observed::new();
    let project = listings.root();
    match kind {
        EntryKind::File => {
            single_file(project, raw_root, &pool, expected.as_ref(), &mut observed);
        }
        EntryKind::Dir => {
            let walk = observe_dir(project, raw_root, &pool, expected.as_ref());
            observed.problems = walk.problems;
            observed.unread = walk.unread;
            observed.listed_all = walk.listed_all;
        }
        other => {
            stopper.prove();
            observed.problems.push(Problem::Unsupported {
                path: ".".to_string(),
                kind: other,
            });
        }
    }
    collect(
        pool.results.into_inner().unwrap_or_else(|e| e.into_inner()),
        &mut observed,
    );
    observed.finish = if observed.listed_all && observed.unread.is_empty() {
        Finish::Complete
    } else if stopper.proved() {
        Finish::Proven
    } else {
        Finish::Cancelled
    };
    Ok(observed)
}

/// Hashes a regular-file root: its parent is opened one name at a time with
/// `O_NOFOLLOW`, the file by its name there.
fn single_file<K: Keeper>(
    project: BorrowedFd<'_>,
    raw_root: &RawPath,
    pool: &Pool<'_, K>,
    expected: Option<&Expected<'_>>,
    observed: &mut Observed<K::Kept>,
) {
    let path = FilePath::single_file();
    let Some((name, parent)) = raw_root.0.split_last() else {
        return;
    };
    let expect = expected.and_then(|x| x.file(Expected::ROOT, path.as_str()).map(|i| x.digest(i)));
    if expected.is_none() || expect.is_none() {
        pool.stopper.prove();
    }
    let dir = match open_dirs(project, &RawPath(parent.to_vec())) {
        Ok(fd) => Gauge::default().wrap(fd),
        Err(e) => {
            pool.stopper.prove();
            observed.problems.push(Problem::Unreadable {
                path: path.as_str().to_string(),
                error: e.to_string(),
            });
            return;
        }
    };
    // The witness learns of the file whether or not it is read now, as in a
    // directory root's walk: a verification kept for reuse must know where
    // the file is, to read it when an open wants it (an unrecorded file
    // shown under `warn` is not read by a lookup's verification).
    if let Some(witness) = pool.stopper.witness() {
        witness.file(dir.as_fd(), name, &path, raw_root);
    }
    let wanted = pool.keeper.wants(&path);
    if pool.stopper.abandon(wanted) {
        observed.unread.push(path);
        return;
    }
    if let Some(p) = pool.progress {
        p.files_total.fetch_add(1, Ordering::Relaxed);
    }
    pool.hash_here(Job {
        path,
        dir,
        name: name.clone(),
        wanted,
        expect,
    });
}

/// What the walk of a directory root found besides hashes.
struct DirWalk {
    problems: Vec<Problem>,
    unread: Vec<FilePath>,
    listed_all: bool,
}

/// Walks a directory root and hashes its files at the same time: once the
/// walk has found [`PARALLEL_THRESHOLD_FILES`] files, `cores() - 1` threads
/// start hashing them while this thread keeps walking; when the walk is done
/// this thread hashes too. A root with fewer files is hashed on this thread
/// alone, after its names were all compared. Each file is read at most once.
fn observe_dir<K: Keeper>(
    project: BorrowedFd<'_>,
    raw_root: &RawPath,
    pool: &Pool<'_, K>,
    expected: Option<&Expected<'_>>,
) -> DirWalk {
    let mut out = DirWalk {
        problems: Vec::new(),
        unread: Vec::new(),
        listed_all: true,
    };
    let root = match open_dirs(project, raw_root) {
        Ok(fd) => fd,
        Err(e) => {
            // SPEC: a read failure makes the bundle a Mismatch (pin aborts
            // on it), never a fatal error, also when the root is unreadable.
            pool.stopper.prove();
            out.problems.push(Problem::Unreadable {
                path: ".".to_string(),
                error: e.to_string(),
            });
            return out;
        }
    };
    let gauge = Gauge::default();
    let region = match expected {
        Some(_) => Region::Recorded(Expected::ROOT),
        None => Region::Unrecorded,
    };
    // Where each directory is from the project root, for the witness only.
    let raw = pool.stopper.witness().map(|_| raw_root.clone());
    std::thread::scope(|scope| {
        let close = CloseOnDrop(&pool.queue);
        let start = || {
            for _ in 1..cores() {
                scope.spawn(move || pool.work());
            }
        };
        let mut collect = Collect {
            pool,
            start: &start,
            started: false,
            held: Vec::new(),
            gauge: gauge.clone(),
            root_is_project: raw_root.0.is_empty(),
            expected,
            seen: vec![false; expected.map_or(0, Expected::len)],
            problems: Vec::new(),
            unread: Vec::new(),
        };
        let walked = walk(root, (region, raw), &gauge, &mut collect);
        out.listed_all = walked == Walked::Complete;
        // A recorded file the complete walk did not find is missing: proven
        // before the last files are hashed.
        if out.listed_all && collect.seen.contains(&false) {
            pool.stopper.prove();
        }
        let mut held = std::mem::take(&mut collect.held);
        pool.queue.push_all(&mut held);
        drop(close);
        pool.work();
        out.problems = collect.problems;
        out.unread = collect.unread;
    });
    out
}

/// Where a directory is relative to the record.
#[derive(Debug, Clone, Copy)]
enum Region {
    /// This directory of the recorded tree.
    Recorded(u32),
    /// Outside it (or no record): any trackable entry is a proof.
    Unrecorded,
}

/// The visitor of a hashing walk: applies SPEC's rules to each listed entry,
/// compares names with the record, hands files to the pool.
struct Collect<'p, 'x, K: Keeper> {
    pool: &'p Pool<'p, K>,
    /// Starts the hashing threads.
    start: &'p dyn Fn(),
    started: bool,
    /// Jobs not yet handed to the pool.
    held: Vec<Job>,
    gauge: Gauge,
    root_is_project: bool,
    expected: Option<&'x Expected<'x>>,
    /// Recorded files found, by index.
    seen: Vec<bool>,
    problems: Vec<Problem>,
    unread: Vec<FilePath>,
}

/// At most this many directory descriptors of one walk stay open (the walk's
/// own and those held by queued jobs); beyond it, the walking thread hashes
/// queued files itself until some are released.
const MAX_OPEN_DIRS: usize = 64;

impl<K: Keeper> Collect<'_, '_, K> {
    fn problem(&mut self, problem: Problem) {
        self.pool.stopper.prove();
        self.problems.push(problem);
    }

    fn file(&mut self, dir: &Arc<DirFd>, rel: &str, here: &Here, raw: OsString, name: &str) {
        let (region, raw_dir) = here;
        let path = FilePath::from_nfc_unchecked(join(rel, name));
        if let (Some(witness), Some(raw_dir)) = (self.pool.stopper.witness(), raw_dir) {
            witness.file(dir.as_fd(), &raw, &path, &raw_dir.join(&raw));
        }
        let expect = match (region, self.expected) {
            (Region::Recorded(d), Some(x)) => x.file(*d, name).map(|i| {
                self.seen[i as usize] = true;
                x.digest(i)
            }),
            _ => None,
        };
        if expect.is_none() {
            // Added (or in a root with no record): it cannot be Verified.
            self.pool.stopper.prove();
        }
        let wanted = self.pool.keeper.wants(&path);
        if self.pool.stopper.abandon(wanted) {
            self.unread.push(path);
            return;
        }
        if let Some(p) = self.pool.progress {
            p.files_total.fetch_add(1, Ordering::Relaxed);
        }
        self.held.push(Job {
            path,
            dir: dir.clone(),
            name: raw,
            wanted,
            expect,
        });
    }

    /// Hands the held jobs to the pool, starting its threads once there are
    /// enough files to be worth them.
    fn flush(&mut self) {
        if !self.started {
            if self.held.len() < PARALLEL_THRESHOLD_FILES || cores() < 2 {
                return;
            }
            self.started = true;
            (self.start)();
        }
        self.pool.queue.push_all(&mut self.held);
    }
}

/// A directory of a hashing walk: where it is in the record, and (for a
/// witness) where it is from the project root.
type Here = (Region, Option<RawPath>);

impl<K: Keeper> Visit for Collect<'_, '_, K> {
    type Token = Here;

    fn opened(&mut self, dir: BorrowedFd<'_>) {
        if let Some(witness) = self.pool.stopper.witness() {
            witness.dir(dir);
        }
    }

    fn listed(
        &mut self,
        dir: &Arc<DirFd>,
        rel: &str,
        here: &Here,
        entries: Vec<DirEntry>,
        subdirs: &mut Vec<Subdir<Here>>,
    ) -> Flow {
        let (region, raw_dir) = here;
        let at_root = rel.is_empty();
        let mut names = HashSet::with_capacity(entries.len());
        for entry in entries {
            if entry.name == ".git"
                || (self.root_is_project && at_root && entry.name == LOCKFILE_NAME)
            {
                continue;
            }
            let Some(name) = nfc_name(&entry.name) else {
                self.problem(Problem::NotUtf8 {
                    path: join(rel, &entry.name.to_string_lossy()),
                });
                continue;
            };
            // SPEC: recorded paths must not contain backslashes, so such a
            // file can be neither pinned nor verified.
            if name.contains('\\') {
                self.problem(Problem::BadName {
                    path: join(rel, &name),
                    reason: crate::paths::PathRule::Backslash.to_string(),
                });
                continue;
            }
            if !names.insert(name.clone()) {
                self.problem(Problem::NfcTwins {
                    path: join(rel, &name),
                });
                continue;
            }
            match entry.kind {
                EntryKind::Dir => {
                    let region = match (*region, self.expected) {
                        (Region::Recorded(d), Some(x)) => x
                            .subdir(d, &name)
                            .map_or(Region::Unrecorded, Region::Recorded),
                        _ => Region::Unrecorded,
                    };
                    let raw = raw_dir.as_ref().map(|r| r.join(&entry.name));
                    subdirs.push(Subdir {
                        raw: entry.name,
                        segment: name,
                        token: (region, raw),
                    });
                }
                EntryKind::File => self.file(dir, rel, here, entry.name, &name),
                other => self.problem(Problem::Unsupported {
                    path: join(rel, &name),
                    kind: other,
                }),
            }
        }
        if self.pool.stopper.stop_walk() {
            return Flow::Stop;
        }
        self.flush();
        Flow::Continue
    }

    fn unreadable(&mut self, rel: &str, error: io::Error) -> Flow {
        self.problem(Problem::Unreadable {
            path: display_rel(rel),
            error: error.to_string(),
        });
        if self.pool.stopper.stop_walk() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    fn between(&mut self) -> Flow {
        if self.pool.stopper.stop_walk() {
            return Flow::Stop;
        }
        // Keep descriptors bounded: hash here until queued jobs release some.
        while self.gauge.open() > MAX_OPEN_DIRS {
            let Some(job) = self.held.pop().or_else(|| self.pool.queue.try_pop()) else {
                break;
            };
            self.pool.hash_here(job);
        }
        Flow::Continue
    }
}

/// `rel/name`, or `name` at the root.
fn join(rel: &str, name: &str) -> String {
    if rel.is_empty() {
        name.to_string()
    } else {
        let mut s = String::with_capacity(rel.len() + 1 + name.len());
        s.push_str(rel);
        s.push('/');
        s.push_str(name);
        s
    }
}

fn display_rel(rel: &str) -> String {
    if rel.is_empty() {
        ".".to_string()
    } else {
        rel.to_string()
    }
}

/// Below this many files, hashing stays on the calling thread: starting
/// threads costs more than it saves for a small bundle (the mount verifies a
/// bundle at every open).
const PARALLEL_THRESHOLD_FILES: usize = 32;

/// The number of cores, read once (the std call reads cgroup files): how
/// many threads every parallel verification starts at most.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

thread_local! {
    /// One read buffer per thread, reused by every verification on it.
    static BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; BUF_SIZE]);
}

/// Jobs handed from the walking thread to the hashing threads.
struct Queue {
    /// Pending jobs, and whether the walk has finished.
    state: Mutex<(VecDeque<Job>, bool)>,
    ready: Condvar,
}

impl Queue {
    fn new() -> Queue {
        Queue {
            state: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        }
    }

    fn push_all(&self, jobs: &mut Vec<Job>) {
        if jobs.is_empty() {
            return;
        }
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .extend(jobs.drain(..));
        self.ready.notify_all();
    }

    fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
        self.ready.notify_all();
    }

    /// The next job; `None` once the walk has finished and nothing is left.
    fn pop(&self) -> Option<Job> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(job) = state.0.pop_front() {
                return Some(job);
            }
            if state.1 {
                return None;
            }
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The next job if one is queued, without waiting.
    fn try_pop(&self) -> Option<Job> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .pop_front()
    }
}

/// Closes the queue however the walk ends, so no hashing thread waits forever.
struct CloseOnDrop<'q>(&'q Queue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The hashing side of one run: the queue, the results, and the rule that
/// says when to give up.
struct Pool<'a, K: Keeper> {
    queue: Queue,
    results: Mutex<Vec<(FilePath, Hashed<K::Kept>)>>,
    keeper: &'a K,
    progress: Option<&'a HashProgress>,
    stopper: &'a Stopper<'a>,
}

impl<K: Keeper> Pool<'_, K> {
    /// Hashes queued jobs until the queue is closed and empty.
    fn work(&self) {
        let mut local = Vec::new();
        BUFFER.with(|buf| {
            let buf = &mut buf.borrow_mut();
            while let Some(job) = self.queue.pop() {
                let result = self.hash(&job, buf);
                local.push((job.path, result));
            }
        });
        self.results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(local);
    }

    /// Hashes one job on this thread.
    fn hash_here(&self, job: Job) {
        let result = BUFFER.with(|buf| self.hash(&job, &mut buf.borrow_mut()));
        self.results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((job.path, result));
    }

    /// Hashes one job and records a proof when it cannot match.
    fn hash(&self, job: &Job, buf: &mut [u8]) -> Hashed<K::Kept> {
        let result = hash_one(job, self.keeper, buf, self.progress, self.stopper);
        match &result {
            Hashed::Done(digest, ..) if job.expect == Some(*digest) => {}
            Hashed::Done(..) | Hashed::Failed(_) => self.stopper.prove(),
            Hashed::Abandoned => {}
        }
        result
    }
}

/// Files the per-file results into `observed`; problems and unread files end
/// up sorted by path.
fn collect<K>(results: Vec<(FilePath, Hashed<K>)>, observed: &mut Observed<K>) {
    for (path, result) in results {
        match result {
            Hashed::Done(digest, size, kept) => {
                observed.bytes += size;
                if let Some(kept) = kept {
                    observed.kept.insert(path.clone(), kept);
                }
                observed.files.insert(path, digest);
            }
            Hashed::Failed(problem) => observed.problems.push(problem),
            Hashed::Abandoned => observed.unread.push(path),
        }
    }
    observed.problems.sort_by(|a, b| a.path().cmp(b.path()));
    observed.unread.sort();
}

const BUF_SIZE: usize = 256 * 1024;

/// The outcome of one file.
enum Hashed<K> {
    /// Its digest, its size as hashed, and its bytes if the keeper wanted
    /// them.
    Done(Digest, u64, Option<K>),
    Failed(Problem),
    /// Given up on (a proof elsewhere, or cancelled) before its end.
    Abandoned,
}

/// Opens, checks and hashes one file, feeding the keeper the same chunks;
/// gives up between chunks when the stopper says so.
fn hash_one<K: Keeper>(
    job: &Job,
    keeper: &K,
    buf: &mut [u8],
    progress: Option<&HashProgress>,
    stopper: &Stopper<'_>,
) -> Hashed<K::Kept> {
    match hash_file(job, keeper, buf, progress, stopper) {
        Ok(Some((digest, size, kept))) => Hashed::Done(digest, size, kept),
        Ok(None) => Hashed::Abandoned,
        Err(problem) => Hashed::Failed(problem),
    }
}

type FileResult<K> = Result<Option<(Digest, u64, Option<K>)>, Problem>;

fn hash_file<K: Keeper>(
    job: &Job,
    keeper: &K,
    buf: &mut [u8],
    progress: Option<&HashProgress>,
    stopper: &Stopper<'_>,
) -> FileResult<K::Kept> {
    if stopper.abandon(job.wanted) {
        return Ok(None);
    }
    let shown = || job.path.as_str().to_string();
    let unreadable = |e: io::Error| Problem::Unreadable {
        path: shown(),
        error: e.to_string(),
    };
    let fd = match open_file_beneath(job.dir.as_fd(), &job.name) {
        Ok(fd) => fd,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Problem::Unsupported {
                path: shown(),
                kind: EntryKind::Symlink,
            });
        }
        Err(e) => return Err(unreadable(e)),
    };
    let stat = fstat_fd(fd.as_fd()).map_err(unreadable)?;
    let kind = EntryKind::from_mode(stat.st_mode);
    if kind != EntryKind::File {
        return Err(Problem::Unsupported {
            path: shown(),
            kind,
        });
    }
    let mut writer = if job.wanted {
        Some(
            keeper
                .begin(&job.path, stat.st_size as u64)
                .map_err(unreadable)?,
        )
    } else {
        None
    };
    let mut file = std::fs::File::from(fd);
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    // A regular file ends at the size `fstat` gave: stop there rather than
    // spend a read on confirming the end (a file that grows meanwhile is
    // hashed as it was at the `fstat`; the bytes kept are exactly the bytes
    // hashed either way). A size of 0 is confirmed by reading.
    let size = stat.st_size as u64;
    loop {
        let room = if size > 0 {
            let left = size.saturating_sub(total);
            if left == 0 {
                break;
            }
            left.min(buf.len() as u64) as usize
        } else {
            buf.len()
        };
        if total > 0 && stopper.abandon(job.wanted) {
            return Ok(None);
        }
        let n = match file.read(&mut buf[..room]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        };
        hasher.update(&buf[..n]);
        if let Some(w) = writer.as_mut() {
            keeper.append(w, &buf[..n]).map_err(unreadable)?;
        }
        total += n as u64;
        stopper.cancel().spend(n as u64);
        if let Some(p) = progress {
            p.bytes_done.fetch_add(n as u64, Ordering::Relaxed);
        }
    }
    if let Some(p) = progress {
        p.files_done.fetch_add(1, Ordering::Relaxed);
    }
    let kept = match writer {
        Some(w) => Some(keeper.finish(w).map_err(unreadable)?),
        None => None,
    };
    Ok(Some((Digest::from_hasher(hasher), total, kept)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn observe(root: &std::path::Path, rel: &[&str], kind: EntryKind) -> Observed<()> {
        let fd = super::super::fs::open_project(root).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let raw = RawPath(rel.iter().map(OsString::from).collect());
        observe_root(&mut l, &raw, kind, &KeepNothing, None).unwrap()
    }

    #[test]
    fn hashes_files_skipping_git_at_any_depth() {
        let t = tempfile::tempdir().unwrap();
        let b = t.path().join("b");
        fs::create_dir_all(b.join("sub/.git")).unwrap();
        fs::create_dir_all(b.join(".git")).unwrap();
        fs::write(b.join(".git/HEAD"), "x").unwrap();
        fs::write(b.join("sub/.git/HEAD"), "x").unwrap();
        fs::write(b.join("SKILL.md"), "test").unwrap();
        fs::write(b.join("sub/x"), "").unwrap();
        fs::write(b.join("seal.json"), "tracked inside a bundle").unwrap();
        let o = observe(t.path(), &["b"], EntryKind::Dir);
        assert!(o.problems.is_empty(), "{:?}", o.problems);
        let paths: Vec<&str> = o.files.keys().map(FilePath::as_str).collect();
        assert_eq!(paths, ["SKILL.md", "seal.json", "sub/x"]);
        assert_eq!(
            o.files[&FilePath::parse("SKILL.md").unwrap()],
            Digest::of(b"test")
        );
    }

    #[test]
    fn single_file_root_is_dot() {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("f.md"), "hello").unwrap();
        let o = observe(t.path(), &["f.md"], EntryKind::File);
        assert_eq!(o.files.len(), 1);
        assert_eq!(o.files[&FilePath::single_file()], Digest::of(b"hello"));
    }

    #[test]
    fn symlinks_fifos_and_twins_are_problems() {
        let t = tempfile::tempdir().unwrap();
        let b = t.path().join("b");
        fs::create_dir_all(&b).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", b.join("link")).unwrap();
        nix::unistd::mkfifo(
            &b.join("fifo"),
            nix::sys::stat::Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        fs::write(b.join("cafe\u{301}"), "1").unwrap();
        fs::write(b.join("caf\u{e9}"), "2").unwrap();
        let o = observe(t.path(), &["b"], EntryKind::Dir);
        let kinds: Vec<String> = o.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            kinds.iter().any(|p| p.contains("link is a symlink")),
            "{kinds:?}"
        );
        assert!(
            kinds.iter().any(|p| p.contains("fifo is a FIFO")),
            "{kinds:?}"
        );
        assert!(kinds.iter().any(|p| p.contains("NFC")), "{kinds:?}");
    }

    #[test]
    fn backslash_names_are_problems_not_recorded_paths() {
        let t = tempfile::tempdir().unwrap();
        let b = t.path().join("b");
        fs::create_dir_all(b.join("dir\\x")).unwrap();
        fs::write(b.join("dir\\x/inner"), "1").unwrap();
        fs::write(b.join("back\\slash"), "2").unwrap();
        fs::write(b.join("ok"), "3").unwrap();
        let o = observe(t.path(), &["b"], EntryKind::Dir);
        let paths: Vec<&str> = o.files.keys().map(FilePath::as_str).collect();
        assert_eq!(paths, ["ok"]);
        for p in &o.files {
            assert!(FilePath::parse(p.0.as_str()).is_ok());
        }
        let problems: Vec<String> = o.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            problems,
            [
                "back\\\\slash has a name seal.json cannot record: it contains a backslash (paths use forward slashes)",
                "dir\\\\x has a name seal.json cannot record: it contains a backslash (paths use forward slashes)",
            ]
        );
    }

    #[test]
    fn progress_counts_every_file_and_byte_once() {
        let t = tempfile::tempdir().unwrap();
        for d in 0..80 {
            let dir = t.path().join(format!("b/d{d}"));
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("f"), "12345").unwrap();
        }
        let fd = super::super::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let progress = HashProgress::default();
        let raw = RawPath(vec![OsString::from("b")]);
        let o = observe_root(&mut l, &raw, EntryKind::Dir, &KeepNothing, Some(&progress)).unwrap();
        assert_eq!(o.files.len(), 80);
        let load = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
        assert_eq!(load(&progress.files_total), 80);
        assert_eq!(load(&progress.files_done), 80);
        assert_eq!(load(&progress.bytes_done), 400);
        assert_eq!(o.bytes, 400);
    }

    #[test]
    fn many_files_hash_in_parallel_identically() {
        let t = tempfile::tempdir().unwrap();
        let b = t.path().join("b");
        fs::create_dir_all(&b).unwrap();
        for i in 0..50 {
            fs::write(b.join(format!("f{i}")), vec![i as u8; i * 1000]).unwrap();
        }
        let o = observe(t.path(), &["b"], EntryKind::Dir);
        assert_eq!(o.files.len(), 50);
        for i in 0..50 {
            let p = FilePath::parse(&format!("f{i}")).unwrap();
            assert_eq!(o.files[&p], Digest::of(&vec![i as u8; i * 1000]));
        }
    }
}
