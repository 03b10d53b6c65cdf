//! Hostile trees at the core level (issue 13, and issue 10's "no input makes
//! the daemon slow for everyone"): a deep chain verifies correctly with few
//! descriptors, a verification stops at the first proof without reading what
//! it does not need, and hashing can be cancelled between chunks. Work is
//! counted in bytes read ([`HashProgress`]), never timed.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::Ordering;

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, mkdirat};
use seal_core::digest::Digest;
use seal_core::discovery::{Listings, has_trackable_entry};
use seal_core::effort::{AfterProof, Cancel, Effort, HashProgress};
use seal_core::fs::{EntryKind, RawPath, open_project};
use seal_core::hash::{Finish, KeepNothing, Keeper, observe_root};
use seal_core::lockfile::BundleEntry;
use seal_core::paths::{BundleKey, FilePath};
use seal_core::verify::{BundleState, KeyCheck, verify_key, verify_key_with};

const KEY: &str = "./skills/b";

/// A scratch project, on tmpfs when there is one: these trees have thousands
/// of entries, and creating them on a busy disk is slow.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(t) = tempfile::tempdir_in(shm) {
            return t;
        }
    }
    tempfile::tempdir().unwrap()
}

/// A project with bundle `skills/b` holding `files`.
fn bundle(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = scratch();
    for (rel, body) in files {
        let p = t.path().join("skills/b").join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    t
}

/// The entry `seal pin` would record for the bundle as it is now.
fn record(root: &Path) -> BundleEntry {
    let fd = open_project(root).unwrap();
    let mut l = Listings::new(fd.as_fd());
    let raw = RawPath(vec![OsString::from("skills"), OsString::from("b")]);
    let o = observe_root(&mut l, &raw, EntryKind::Dir, &KeepNothing, None).unwrap();
    assert!(o.problems.is_empty(), "{:?}", o.problems);
    BundleEntry::from_files(o.files)
}

/// Verifies the bundle with `after_proof`, counting bytes read.
fn check(
    root: &Path,
    entry: Option<&BundleEntry>,
    after_proof: AfterProof,
    cancel: &Cancel,
    keeper: &impl Keeper,
) -> (KeyCheck<()>, u64) {
    let fd = open_project(root).unwrap();
    let mut l = Listings::new(fd.as_fd());
    let progress = HashProgress::default();
    let effort = Effort {
        after_proof,
        cancel,
        progress: Some(&progress),
        witness: None,
    };
    let key = BundleKey::parse(KEY).unwrap();
    let c = verify_key_with(&mut l, &key, entry, &Discard(keeper), effort).unwrap();
    (c, progress.bytes_done.load(Ordering::Relaxed))
}

/// [`check`] with nothing cancelled and nothing kept: the common case.
fn plain_check(
    root: &Path,
    entry: Option<&BundleEntry>,
    after_proof: AfterProof,
) -> (KeyCheck<()>, u64) {
    check(root, entry, after_proof, &Cancel::new(), &KeepNothing)
}

/// Passes `wants` and `append` through to an inner keeper, keeps nothing.
struct Discard<'k, K>(&'k K);

impl<K: Keeper> Keeper for Discard<'_, K> {
    type Writer = Option<K::Writer>;
    type Kept = ();
    fn wants(&self, path: &FilePath) -> bool {
        self.0.wants(path)
    }
    fn begin(&self, path: &FilePath, size: u64) -> io::Result<Self::Writer> {
        self.0.begin(path, size).map(Some)
    }
    fn append(&self, w: &mut Self::Writer, chunk: &[u8]) -> io::Result<()> {
        match w {
            Some(w) => self.0.append(w, chunk),
            None => Ok(()),
        }
    }
    fn finish(&self, _: Self::Writer) -> io::Result<()> {
        Ok(())
    }
}

/// A 20 GB file that takes no disk space.
fn sparse(path: &Path, size: u64) {
    fs::File::create(path).unwrap().set_len(size).unwrap();
}

const GB20: u64 = 20 << 30;

#[test]
fn an_added_huge_file_is_a_mismatch_without_reading_it() {
    let t = bundle(&[("SKILL.md", "skill"), ("lib/a.js", "a"), ("lib/b.js", "b")]);
    let entry = record(t.path());
    sparse(&t.path().join("skills/b/lib/huge.bin"), GB20);
    let (c, read) = plain_check(t.path(), Some(&entry), AfterProof::Stop);
    assert_eq!(c.report.state, BundleState::Mismatch);
    assert_eq!(c.finish, Finish::Proven);
    assert_eq!(c.report.added, ["lib/huge.bin"]);
    // Nothing but names was needed: no file at all was read.
    assert_eq!(read, 0);
    // Even a keeper that wants the huge file does not get it read.
    let (c, read) = check(
        t.path(),
        Some(&entry),
        AfterProof::Stop,
        &Cancel::new(),
        &Wants("lib/huge.bin"),
    );
    assert_eq!((c.report.state, read), (BundleState::Mismatch, 0));
}

/// Wants one path.
struct Wants(&'static str);

impl Keeper for Wants {
    type Writer = ();
    type Kept = ();
    fn wants(&self, path: &FilePath) -> bool {
        path.as_str() == self.0
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

#[test]
fn hash_wanted_reads_only_the_wanted_file_after_a_proof() {
    let big = "x".repeat(100_000);
    let t = bundle(&[
        ("SKILL.md", "skill"),
        ("big.txt", &big),
        ("other.txt", &big),
    ]);
    let entry = record(t.path());
    fs::write(t.path().join("skills/b/added"), "new").unwrap();
    let (c, read) = check(
        t.path(),
        Some(&entry),
        AfterProof::HashWanted,
        &Cancel::new(),
        &Wants("SKILL.md"),
    );
    assert_eq!(c.report.state, BundleState::Mismatch);
    assert_eq!(c.finish, Finish::Proven);
    assert_eq!(read, 5, "only SKILL.md was read");
    let observed = c.observed.unwrap();
    assert!(
        observed
            .files
            .contains_key(&FilePath::parse("SKILL.md").unwrap())
    );
}

#[test]
fn the_full_verification_still_lists_everything() {
    let t = bundle(&[("a", "1"), ("b", "2"), ("c", "3"), ("d/e", "4")]);
    let entry = record(t.path());
    fs::write(t.path().join("skills/b/a"), "changed").unwrap();
    fs::remove_file(t.path().join("skills/b/c")).unwrap();
    fs::write(t.path().join("skills/b/new1"), "n").unwrap();
    fs::write(t.path().join("skills/b/d/new2"), "n").unwrap();
    let fd = open_project(t.path()).unwrap();
    let mut l = Listings::new(fd.as_fd());
    let key = BundleKey::parse(KEY).unwrap();
    let (report, _) = verify_key(&mut l, &key, Some(&entry), &KeepNothing).unwrap();
    assert_eq!(report.state, BundleState::Mismatch);
    assert_eq!(report.modified, ["a"]);
    assert_eq!(report.added, ["d/new2", "new1"]);
    assert_eq!(report.missing, ["c"]);
    // The verdict-only run agrees on the state and says its lists are partial.
    let (c, _) = plain_check(t.path(), Some(&entry), AfterProof::Stop);
    assert_eq!(c.report.state, BundleState::Mismatch);
    assert_eq!(c.finish, Finish::Proven);
    assert!(!c.report.added.is_empty() || !c.report.modified.is_empty());
}

#[test]
fn a_missing_file_is_proven_once_the_walk_is_complete_without_hashing() {
    let body = "y".repeat(50_000);
    let t = bundle(&[("a", &body), ("b", &body), ("sub/c", &body)]);
    let entry = record(t.path());
    fs::remove_file(t.path().join("skills/b/sub/c")).unwrap();
    let (c, read) = plain_check(t.path(), Some(&entry), AfterProof::Stop);
    assert_eq!(c.report.state, BundleState::Mismatch);
    assert_eq!(c.report.missing, ["sub/c"]);
    assert_eq!(read, 0);
}

#[test]
fn an_intact_bundle_is_verified_by_every_effort() {
    let t = bundle(&[("a", "1"), ("d/b", "2"), ("d/e/c", "3")]);
    let entry = record(t.path());
    fs::create_dir_all(t.path().join("skills/b/empty/deeper")).unwrap();
    fs::create_dir_all(t.path().join("skills/b/.git")).unwrap();
    fs::write(t.path().join("skills/b/.git/HEAD"), "x").unwrap();
    for after in [AfterProof::Finish, AfterProof::HashWanted, AfterProof::Stop] {
        let (c, read) = plain_check(t.path(), Some(&entry), after);
        assert_eq!(c.report.state, BundleState::Verified, "{after:?}");
        assert_eq!((c.finish, read), (Finish::Complete, 3), "{after:?}");
    }
}

#[test]
fn a_changed_recorded_file_is_abandoned_when_cancelled_between_chunks() {
    let t = bundle(&[("SKILL.md", "skill"), ("data.bin", "small")]);
    let entry = record(t.path());
    // The recorded file grows to 20 GB: only hashing can tell it changed.
    sparse(&t.path().join("skills/b/data.bin"), GB20);
    let budget = 4 << 20;
    let cancel = Cancel::new().with_byte_budget(budget);
    let (c, read) = check(
        t.path(),
        Some(&entry),
        AfterProof::Stop,
        &cancel,
        &KeepNothing,
    );
    assert_eq!(c.finish, Finish::Cancelled);
    assert_eq!(c.report.state, BundleState::Mismatch, "never Verified");
    // The budget is checked between 256 KiB chunks.
    assert!(
        (budget + 1..=budget + (256 << 10)).contains(&read),
        "{read}"
    );
}

/// Cancels through the flag from inside the work, after `after` bytes.
struct CancelAfter<'c> {
    cancel: &'c Cancel,
    after: u64,
    seen: std::sync::atomic::AtomicU64,
}

impl Keeper for CancelAfter<'_> {
    type Writer = ();
    type Kept = ();
    fn wants(&self, _: &FilePath) -> bool {
        true
    }
    fn begin(&self, _: &FilePath, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn append(&self, _: &mut (), chunk: &[u8]) -> io::Result<()> {
        let total = self.seen.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
        if total >= self.after {
            self.cancel.cancel();
        }
        Ok(())
    }
    fn finish(&self, _: ()) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_cancel_flag_stops_hashing_at_the_next_chunk() {
    let t = bundle(&[("a", "1"), ("huge", "small")]);
    let entry = record(t.path());
    sparse(&t.path().join("skills/b/huge"), GB20);
    let cancel = Cancel::new();
    let keeper = CancelAfter {
        cancel: &cancel,
        after: 1 << 20,
        seen: Default::default(),
    };
    // Hashing everything for complete lists: only the flag can stop it.
    let (c, read) = check(t.path(), Some(&entry), AfterProof::Finish, &cancel, &keeper);
    assert_eq!(c.finish, Finish::Cancelled);
    assert_eq!(c.report.state, BundleState::Mismatch, "never Verified");
    // At most one more 256 KiB chunk after the flag (and the 1-byte file).
    assert!(
        (1 << 20..=(1 << 20) + (256 << 10) + 1).contains(&read),
        "{read}"
    );
    // Cancelled before anything is found, an unrecorded root is not empty.
    let cancelled = Cancel::new();
    cancelled.cancel();
    let (c, read) = check(t.path(), None, AfterProof::Finish, &cancelled, &KeepNothing);
    assert_eq!((c.finish, read), (Finish::Cancelled, 0));
    assert_eq!(c.report.state, BundleState::Unverified);
    assert!(!c.is_empty_root());
}

#[test]
fn an_unrecorded_root_is_decided_by_its_first_trackable_entry() {
    let body = "z".repeat(10_000);
    let files: Vec<(String, &str)> = (0..200).map(|i| (format!("f{i}"), body.as_str())).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    let t = bundle(&refs);
    let (c, read) = plain_check(t.path(), None, AfterProof::Stop);
    assert_eq!(c.report.state, BundleState::Unverified);
    assert_eq!(c.finish, Finish::Proven);
    assert!(!c.is_empty_root());
    assert_eq!(read, 0);
    // Directories and .git only: not a bundle, and said so.
    let e = scratch();
    fs::create_dir_all(e.path().join("skills/b/x/y/z")).unwrap();
    fs::create_dir_all(e.path().join("skills/b/.git")).unwrap();
    fs::write(e.path().join("skills/b/.git/HEAD"), "x").unwrap();
    let (c, _) = plain_check(e.path(), None, AfterProof::Stop);
    assert_eq!(c.finish, Finish::Complete);
    assert!(c.is_empty_root());
}

/// Makes `depth` nested directories named `name` under `base`, through
/// descriptors (the path is longer than PATH_MAX), with file `f` (holding
/// its level) every `every` levels and at the bottom.
fn chain(base: &Path, depth: usize, name: &str, every: usize) {
    fs::create_dir_all(base).unwrap();
    let mode = Mode::from_bits_truncate(0o755);
    let mut dir: OwnedFd = open_project(base).unwrap();
    for level in 1..=depth {
        mkdirat(dir.as_fd(), name, mode).unwrap();
        dir = openat(
            dir.as_fd(),
            name,
            OFlag::O_DIRECTORY | OFlag::O_RDONLY,
            Mode::empty(),
        )
        .unwrap();
        if level % every == 0 || level == depth {
            let f = openat(
                dir.as_fd(),
                "f",
                OFlag::O_CREAT | OFlag::O_WRONLY,
                Mode::from_bits_truncate(0o644),
            )
            .unwrap();
            nix::unistd::write(&f, level.to_string().as_bytes()).unwrap();
        }
    }
}

/// `rm -rf` handles trees deeper than PATH_MAX.
fn remove(t: tempfile::TempDir) {
    let status = std::process::Command::new("rm")
        .arg("-rf")
        .arg(t.path())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_chain_3000_deep_verifies_under_a_low_open_file_limit() {
    let t = scratch();
    chain(&t.path().join("skills/b"), 3000, "d", 100);
    let entry = record(t.path());
    assert_eq!(entry.files.len(), 30);
    let deepest = entry.files.keys().map(|p| p.as_str().len()).max().unwrap();
    assert!(
        deepest > 4096,
        "the paths are longer than PATH_MAX: {deepest}"
    );
    // Every descriptor beyond 100 would fail with EMFILE (a read error,
    // so a Mismatch): the walk keeps far fewer open at any depth.
    let verdicts = with_nofile_limit(100, || {
        let mut states = Vec::new();
        for after in [AfterProof::Finish, AfterProof::Stop] {
            let (c, read) = plain_check(t.path(), Some(&entry), after);
            states.push((c.report.state, c.finish, read > 0));
        }
        // A trackable file at the bottom is found without running out.
        let fd = open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let raw = RawPath(vec![OsString::from("skills"), OsString::from("b")]);
        (states, has_trackable_entry(&mut l, &raw).unwrap())
    });
    let (states, trackable) = verdicts;
    for s in &states {
        assert_eq!(*s, (BundleState::Verified, Finish::Complete, true));
    }
    assert!(trackable);
    // One changed byte at the bottom is still found.
    let mut files: BTreeMap<FilePath, Digest> = entry.files.clone();
    let bottom = files
        .keys()
        .max_by_key(|p| p.as_str().len())
        .unwrap()
        .clone();
    files.insert(bottom.clone(), Digest::of(b"something else"));
    let changed = BundleEntry::from_files(files);
    let (c, _) = plain_check(t.path(), Some(&changed), AfterProof::Stop);
    assert_eq!(c.report.state, BundleState::Mismatch);
    assert_eq!(c.report.modified, [bottom.as_str()]);
    remove(t);
}

/// Runs `f` with the soft limit on open files lowered to `limit`.
fn with_nofile_limit<T>(limit: u64, f: impl FnOnce() -> T) -> T {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, limit, hard).unwrap();
    let out = f();
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    out
}

#[test]
fn long_names_deeper_than_path_max_verify() {
    let t = scratch();
    let name = "n".repeat(255);
    chain(&t.path().join("skills/b"), 40, &name, 10);
    let entry = record(t.path());
    assert_eq!(entry.files.len(), 4);
    let (c, _) = plain_check(t.path(), Some(&entry), AfterProof::Stop);
    assert_eq!(
        (c.report.state, c.finish),
        (BundleState::Verified, Finish::Complete)
    );
    remove(t);
}

#[test]
fn a_wide_directory_with_a_stray_name_stops_at_the_listing() {
    let t = scratch();
    let b = t.path().join("skills/b");
    fs::create_dir_all(&b).unwrap();
    for i in 0..5000 {
        fs::write(b.join(format!("f{i:05}")), "0123456789").unwrap();
    }
    let entry = record(t.path());
    let (c, read) = plain_check(t.path(), Some(&entry), AfterProof::Stop);
    assert_eq!((c.report.state, read), (BundleState::Verified, 50_000));
    std::os::unix::fs::symlink("/etc/passwd", b.join("zz-link")).unwrap();
    let (c, read) = plain_check(t.path(), Some(&entry), AfterProof::Stop);
    assert_eq!(c.report.state, BundleState::Mismatch);
    assert_eq!(c.report.problems.len(), 1, "{:?}", c.report.problems);
    // The proof came with the listing, before any file was handed out.
    assert_eq!(read, 0);
}
