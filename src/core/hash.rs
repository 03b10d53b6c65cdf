//! Hashing a sealed root (SPEC §What Gets Hashed, §Canonicalization Rules).
//!
//! A directory root is walked without following links; `.git` is skipped at
//! any depth and `seal.json` only when the root is the project root itself.
//! Every regular file is then opened below the project descriptor with
//! `RESOLVE_NO_SYMLINKS`, checked with `fstat` (a file swapped for a FIFO or a
//! link after the walk is caught here), read once and hashed. Files are hashed
//! in parallel on every core. A caller that must serve the verified bytes (the
//! mount) passes a [`Keeper`] that receives exactly the chunks that were
//! hashed, so what is served is what was verified.
//!
//! Anything that stops a file from being verified becomes a [`Problem`]:
//! `verify` turns problems into Mismatch, `pin` aborts on them.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::fmt;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use sha2::{Digest as _, Sha256};

use super::digest::Digest;
use super::discovery::{DiscoveryError, Listings};
use super::fs::{EntryKind, RawPath, fstat_fd, nfc_name, open_file_beneath};
use super::lockfile::LOCKFILE_NAME;
use super::paths::FilePath;

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
    pub fn path(&self) -> &str {
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
        let path = crate::core::escape::escaped(self.path());
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

/// Counters a progress display can poll while hashing runs.
#[derive(Debug, Default)]
pub struct HashProgress {
    pub files_done: AtomicU64,
    pub bytes_done: AtomicU64,
    pub files_total: AtomicU64,
}

/// What was found under one sealed root.
#[derive(Debug)]
pub struct Observed<K> {
    /// Hashes of every trackable file, by NFC root-relative path (`.` for a
    /// regular-file root).
    pub files: BTreeMap<FilePath, Digest>,
    /// Bytes kept by the [`Keeper`], by path.
    pub kept: BTreeMap<FilePath, K>,
    pub problems: Vec<Problem>,
}

impl<K> Observed<K> {
    fn new() -> Self {
        Observed {
            files: BTreeMap::new(),
            kept: BTreeMap::new(),
            problems: Vec::new(),
        }
    }
}

/// One file to hash: where it is and what it will be called.
struct Job {
    path: FilePath,
    raw: OsString,
}

/// Hashes the sealed root at `raw_root` (project-relative), which the caller
/// found to be of `kind`.
pub fn observe_root<K: Keeper>(
    listings: &mut Listings<'_>,
    raw_root: &RawPath,
    kind: EntryKind,
    keeper: &K,
    progress: Option<&HashProgress>,
) -> Result<Observed<K::Kept>, DiscoveryError> {
    let mut observed = Observed::new();
    let jobs = match kind {
        EntryKind::File => vec![Job {
            path: FilePath::single_file(),
            raw: raw_root.to_os_string(),
        }],
        EntryKind::Dir if cores() > 1 => {
            walk_and_hash(listings, raw_root, keeper, progress, &mut observed)?;
            return Ok(observed);
        }
        EntryKind::Dir => {
            let mut jobs = Vec::new();
            walk(listings, raw_root, &mut observed.problems, &mut |batch| {
                jobs.append(batch)
            })?;
            jobs
        }
        other => {
            observed.problems.push(Problem::Unsupported {
                path: ".".to_string(),
                kind: other,
            });
            return Ok(observed);
        }
    };
    if let Some(p) = progress {
        p.files_total
            .fetch_add(jobs.len() as u64, Ordering::Relaxed);
    }
    hash_jobs(listings.root(), jobs, keeper, progress, &mut observed);
    Ok(observed)
}

/// Collects the regular files under a directory root, recording problems for
/// everything that is neither a file nor a directory.
///
/// The files of each directory are handed to `emit` as soon as that directory
/// has been listed, so hashing can start while the walk goes on.
fn walk(
    listings: &mut Listings<'_>,
    raw_root: &RawPath,
    problems: &mut Vec<Problem>,
    emit: &mut dyn FnMut(&mut Vec<Job>),
) -> Result<(), DiscoveryError> {
    let root_is_project = raw_root.0.is_empty();
    let mut jobs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // (raw dir path, NFC path of that dir relative to the root)
    let mut stack: Vec<(RawPath, String)> = vec![(raw_root.clone(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        // SPEC: a read failure makes the bundle a Mismatch (pin aborts on
        // it), never a fatal error, also when the root itself is unreadable.
        let entries = match listings.list(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                problems.push(Problem::Unreadable {
                    path: display_rel(&rel),
                    error: e.source.to_string(),
                });
                continue;
            }
        };
        for entry in entries.iter() {
            if entry.name == ".git"
                || (root_is_project && rel.is_empty() && entry.name == LOCKFILE_NAME)
            {
                continue;
            }
            let Some(name) = nfc_name(&entry.name) else {
                problems.push(Problem::NotUtf8 {
                    path: join_lossy(&rel, &entry.name),
                });
                continue;
            };
            let child_rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // SPEC: recorded paths must not contain backslashes, so such a
            // file can be neither pinned nor verified.
            if child_rel.contains('\\') {
                problems.push(Problem::BadName {
                    path: child_rel,
                    reason: crate::core::paths::PathRule::Backslash.to_string(),
                });
                continue;
            }
            if !seen.insert(child_rel.clone()) {
                problems.push(Problem::NfcTwins { path: child_rel });
                continue;
            }
            let child_raw = dir.join(&entry.name);
            match entry.kind {
                EntryKind::Dir => stack.push((child_raw, child_rel)),
                EntryKind::File => jobs.push(Job {
                    path: FilePath::from_nfc_unchecked(child_rel),
                    raw: child_raw.to_os_string(),
                }),
                other => problems.push(Problem::Unsupported {
                    path: child_rel,
                    kind: other,
                }),
            }
        }
        emit(&mut jobs);
    }
    Ok(())
}

fn display_rel(rel: &str) -> String {
    if rel.is_empty() {
        ".".to_string()
    } else {
        rel.to_string()
    }
}

/// `rel/name` for a name that is not UTF-8 (invalid bytes shown as U+FFFD).
fn join_lossy(rel: &str, name: &std::ffi::OsStr) -> String {
    let name = name.to_string_lossy();
    if rel.is_empty() {
        name.into_owned()
    } else {
        format!("{rel}/{name}")
    }
}

/// Below this many files, hashing stays on the calling thread: starting
/// threads costs more than it saves for a small bundle (the mount verifies a
/// bundle at every open).
const PARALLEL_THRESHOLD_FILES: usize = 32;

/// The number of cores, read once (the std call reads cgroup files).
fn cores() -> usize {
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
}

/// Closes the queue however the walk ends, so no hashing thread waits forever.
struct CloseOnDrop<'q>(&'q Queue);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// Walks a directory root and hashes its files at the same time: once the
/// walk has found [`PARALLEL_THRESHOLD_FILES`] files, `cores() - 1` threads
/// start hashing them while this thread keeps walking; when the walk is done
/// this thread hashes too. A root with fewer files is hashed on this thread
/// alone. Each file is still read exactly once.
fn walk_and_hash<K: Keeper>(
    listings: &mut Listings<'_>,
    raw_root: &RawPath,
    keeper: &K,
    progress: Option<&HashProgress>,
    observed: &mut Observed<K::Kept>,
) -> Result<(), DiscoveryError> {
    let project = listings.root();
    let queue = Queue::new();
    let results: Mutex<Vec<(FilePath, FileResult<K::Kept>)>> = Mutex::new(Vec::new());
    let work = || {
        let mut local = Vec::new();
        BUFFER.with(|buf| {
            let buf = &mut buf.borrow_mut();
            while let Some(job) = queue.pop() {
                let result = hash_one(project, &job, keeper, buf, progress);
                local.push((job.path, result));
            }
        });
        results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(local);
    };
    let problems = &mut observed.problems;
    std::thread::scope(|scope| {
        let close = CloseOnDrop(&queue);
        let mut held = Vec::new();
        let mut started = false;
        walk(listings, raw_root, problems, &mut |batch| {
            if let Some(p) = progress {
                p.files_total
                    .fetch_add(batch.len() as u64, Ordering::Relaxed);
            }
            if started {
                queue.push_all(batch);
                return;
            }
            held.append(batch);
            if held.len() >= PARALLEL_THRESHOLD_FILES {
                queue.push_all(&mut held);
                for _ in 1..cores() {
                    scope.spawn(work);
                }
                started = true;
            }
        })?;
        queue.push_all(&mut held);
        drop(close);
        work();
        Ok::<(), DiscoveryError>(())
    })?;
    collect(
        results.into_inner().unwrap_or_else(|e| e.into_inner()),
        observed,
    );
    Ok(())
}

fn hash_jobs<K: Keeper>(
    project: BorrowedFd<'_>,
    jobs: Vec<Job>,
    keeper: &K,
    progress: Option<&HashProgress>,
    observed: &mut Observed<K::Kept>,
) {
    let hash = |job: &Job| {
        BUFFER.with(|buf| hash_one(project, job, keeper, &mut buf.borrow_mut(), progress))
    };
    let workers = cores().min(jobs.len());
    let results: Mutex<Vec<(FilePath, FileResult<K::Kept>)>> =
        Mutex::new(Vec::with_capacity(jobs.len()));
    if workers <= 1 || jobs.len() < PARALLEL_THRESHOLD_FILES {
        let mut out = results.lock().unwrap_or_else(|e| e.into_inner());
        out.extend(jobs.iter().map(|job| (job.path.clone(), hash(job))));
    } else {
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| {
                    let mut local = Vec::new();
                    while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                        local.push((job.path.clone(), hash(job)));
                    }
                    results
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(local);
                });
            }
        });
    }
    collect(
        results.into_inner().unwrap_or_else(|e| e.into_inner()),
        observed,
    );
}

/// Files the per-file results into `observed`; problems end up sorted by path.
fn collect<K>(results: Vec<(FilePath, FileResult<K>)>, observed: &mut Observed<K>) {
    for (path, result) in results {
        match result {
            Ok((digest, kept)) => {
                if let Some(kept) = kept {
                    observed.kept.insert(path.clone(), kept);
                }
                observed.files.insert(path, digest);
            }
            Err(problem) => observed.problems.push(problem),
        }
    }
    observed.problems.sort_by(|a, b| a.path().cmp(b.path()));
}

const BUF_SIZE: usize = 256 * 1024;

/// The digest of one file and the bytes kept of it, or why it failed.
type FileResult<K> = Result<(Digest, Option<K>), Problem>;

/// Opens, checks and hashes one file, feeding the keeper the same chunks.
fn hash_one<K: Keeper>(
    project: BorrowedFd<'_>,
    job: &Job,
    keeper: &K,
    buf: &mut [u8],
    progress: Option<&HashProgress>,
) -> FileResult<K::Kept> {
    let shown = || job.path.as_str().to_string();
    let unreadable = |e: io::Error| Problem::Unreadable {
        path: shown(),
        error: e.to_string(),
    };
    let fd = match open_file_beneath(project, &job.raw) {
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
    let mut writer = if keeper.wants(&job.path) {
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
    }
    if let Some(p) = progress {
        p.files_done.fetch_add(1, Ordering::Relaxed);
        p.bytes_done.fetch_add(total, Ordering::Relaxed);
    }
    let kept = match writer {
        Some(w) => Some(keeper.finish(w).map_err(unreadable)?),
        None => None,
    };
    Ok((Digest::from_hasher(hasher), kept))
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
