//! Gate decisions on real temporary trees, without a mount.

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::snapshot::Snapshot;
use seal_core::discovery::{Listings, expand};
use seal_core::fs::EntryKind;
use seal_core::hash::{KeepNothing, observe_root};
use seal_core::lockfile::{BundleEntry, Lockfile, Policy};
use seal_core::pattern::Pattern;

pub(super) fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// Pins everything the patterns produce, as `seal pin` would.
pub(super) fn pin(root: &Path, patterns: &[&str], policy: Policy) -> Vec<u8> {
    let fd = seal_core::fs::open_project(root).unwrap();
    let mut listings = Listings::new(fd.as_fd());
    let mut lock = Lockfile::empty(policy);
    lock.discovery = patterns
        .iter()
        .map(|p| Pattern::parse(p).unwrap())
        .collect();
    lock.discovery.sort();
    let expansion = expand(&mut listings, &lock.discovery).unwrap();
    for (key, locs) in expansion.roots {
        let (raw, kind) = &locs[0];
        let o = observe_root(&mut listings, raw, *kind, &KeepNothing, None).unwrap();
        assert!(o.problems.is_empty());
        lock.bundles.insert(key, BundleEntry::from_files(o.files));
    }
    lock.check().unwrap();
    let bytes = lock.to_canonical_bytes();
    std::fs::write(root.join("seal.json"), &bytes).unwrap();
    bytes
}

pub(super) fn gate(root: &Path) -> Gate {
    gate_with(root, None)
}

/// A gate that reuses verifications while the change feed proves them current.
fn gate_with_feed(root: &Path) -> Gate {
    gate_with(root, Some(crate::feed::Feed::new().unwrap()))
}

fn gate_with(root: &Path, feed: Option<Arc<crate::feed::Feed>>) -> Gate {
    let bytes = std::fs::read(root.join("seal.json")).unwrap();
    let lock = Lockfile::parse(&bytes).unwrap();
    let fd = seal_core::fs::open_project(root).unwrap();
    Gate::new(GateConfig {
        project: Arc::new(fd),
        lockfile_bytes: bytes,
        lockfile: lock,
        links: LinkRule::new(Path::new("/view"), &[PathBuf::from(root)]),
        audit: None,
        feed,
    })
}

pub(super) fn vp(path: &str) -> ViewPath {
    let mut p = ViewPath::root();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        p = p.child(OsStr::new(seg));
    }
    p
}

pub(super) const WHO: Who = Who {
    pid: 0,
    uid: 0,
    gid: 0,
};

pub(super) fn shows(g: &Gate, path: &str) -> bool {
    let kind = if path.ends_with(".md") || path.ends_with(".txt") || path.ends_with(".sh") {
        EntryKind::File
    } else {
        EntryKind::Dir
    };
    lookup(g, path, kind, None)
}

/// A lookup of `path`, a `kind` on the disk (with its `target` when a
/// symlink).
pub(super) fn lookup(g: &Gate, path: &str, kind: EntryKind, target: Option<&OsStr>) -> bool {
    let op = Op::Lookup {
        on_disk: Some(kind),
        link_target: target,
        kernel: Kernel::default(),
    };
    g.ask(&vp(path), op, WHO).yes
}

/// An open of `path` for reading.
fn open(g: &Gate, path: &str) -> Serve {
    g.ask(&vp(path), Op::Open { recorded: None }, WHO).serve
}

pub(super) fn served(g: &Gate, path: &str) -> Option<Vec<u8>> {
    match open(g, path) {
        Serve::Bytes(s) => Some(s.read_at(0, 1 << 20).unwrap()),
        Serve::Disk => Some(b"<ordinary>".to_vec()),
        Serve::Nothing => None,
    }
}

pub(super) fn project() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    write(t.path(), ".claude/skills/review/SKILL.md", "approved");
    write(t.path(), ".claude/skills/review/scripts/run.sh", "echo ok");
    write(t.path(), "CLAUDE.md", "instructions");
    write(t.path(), "src/main.rs", "fn main() {}");
    t
}

#[test]
fn verified_bundle_is_visible_and_served_from_the_snapshot() {
    let t = project();
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Block);
    let g = gate(t.path());
    assert!(shows(&g, ".claude"));
    assert!(shows(&g, ".claude/skills"));
    assert!(shows(&g, ".claude/skills/review"));
    assert!(shows(&g, ".claude/skills/review/SKILL.md"));
    assert_eq!(
        served(&g, ".claude/skills/review/SKILL.md").unwrap(),
        b"approved"
    );
    assert_eq!(served(&g, "CLAUDE.md").unwrap(), b"instructions");
    assert_eq!(served(&g, "src/main.rs").unwrap(), b"<ordinary>");
}

#[test]
fn an_open_snapshot_keeps_the_verified_bytes() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate(t.path());
    let Serve::Bytes(s) = open(&g, ".claude/skills/review/SKILL.md") else {
        panic!()
    };
    write(t.path(), ".claude/skills/review/SKILL.md", "EVIL!!!!");
    assert_eq!(s.read_at(0, 100).unwrap(), b"approved");
    assert!(
        served(&g, ".claude/skills/review/SKILL.md").is_none(),
        "the next open sees the change"
    );
}

#[test]
fn tampering_hides_the_bundle_under_block() {
    for change in ["modify", "add", "remove", "symlink", "fifo"] {
        let t = project();
        pin(t.path(), &[".claude/skills/*"], Policy::Block);
        let g = gate(t.path());
        let b = t.path().join(".claude/skills/review");
        match change {
            "modify" => write(t.path(), ".claude/skills/review/SKILL.md", "changed"),
            "add" => write(t.path(), ".claude/skills/review/extra.md", "new"),
            "remove" => std::fs::remove_file(b.join("scripts/run.sh")).unwrap(),
            "symlink" => std::os::unix::fs::symlink("/etc/hostname", b.join("link")).unwrap(),
            _ => nix::unistd::mkfifo(
                &b.join("fifo"),
                nix::sys::stat::Mode::from_bits_truncate(0o644),
            )
            .unwrap(),
        }
        assert!(
            !shows(&g, ".claude/skills/review"),
            "{change}: root still visible"
        );
        assert!(
            served(&g, ".claude/skills/review/SKILL.md").is_none(),
            "{change}: still served"
        );
        assert!(shows(&g, "src/main.rs"), "{change}: ordinary file hidden");
    }
}

#[test]
fn warn_shows_and_serves_what_is_there() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Warn);
    let g = gate(t.path());
    write(t.path(), ".claude/skills/review/SKILL.md", "changed");
    assert!(shows(&g, ".claude/skills/review"));
    assert_eq!(
        served(&g, ".claude/skills/review/SKILL.md").unwrap(),
        b"changed"
    );
    write(t.path(), ".claude/commands/new.md", "cmd");
    assert!(shows(&g, ".claude/commands/new.md"));
    assert_eq!(served(&g, ".claude/commands/new.md").unwrap(), b"cmd");
}

#[test]
fn unpinned_bundles_and_new_surface_artifacts_are_hidden() {
    let t = project();
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Block);
    let g = gate(t.path());
    write(t.path(), ".claude/skills/new/SKILL.md", "unpinned");
    write(t.path(), ".claude/commands/x.md", "cmd");
    write(t.path(), "docs/AGENTS.md", "nested");
    write(t.path(), "AGENTS.md", "root");
    write(t.path(), ".codex/config.toml", "x");
    assert!(!shows(&g, ".claude/skills/new"));
    assert!(served(&g, ".claude/skills/new/SKILL.md").is_none());
    assert!(!shows(&g, ".claude/commands/x.md"));
    assert!(served(&g, ".claude/commands/x.md").is_none());
    assert!(!shows(&g, "docs/AGENTS.md"));
    assert!(!shows(&g, "AGENTS.md"));
    assert!(!shows(&g, ".codex/config.toml"));
    assert!(shows(&g, ".claude/commands"), "containers stay");
    assert!(shows(&g, "docs"));
    // An empty directory under a surface is not an artifact.
    std::fs::create_dir_all(t.path().join(".claude/skills/empty")).unwrap();
    assert!(shows(&g, ".claude/skills/empty"));
}

#[test]
fn invalid_lockfile_fails_closed_until_fixed() {
    let t = project();
    let good = pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Warn);
    let g = gate(t.path());
    assert!(shows(&g, ".claude/skills/review"));
    std::fs::write(t.path().join("seal.json"), b"{\"version\": 2}").unwrap();
    assert!(!shows(&g, ".claude/skills/review"));
    assert!(!shows(&g, "CLAUDE.md"));
    assert!(served(&g, "CLAUDE.md").is_none());
    assert!(!shows(&g, ".claude/commands/x.md"));
    assert!(shows(&g, "src/main.rs"));
    std::fs::remove_file(t.path().join("seal.json")).unwrap();
    assert!(!shows(&g, "CLAUDE.md"));
    std::fs::write(t.path().join("seal.json"), &good).unwrap();
    assert!(shows(&g, ".claude/skills/review"));
    assert_eq!(served(&g, "CLAUDE.md").unwrap(), b"instructions");
}

#[test]
fn inside_a_verified_root_only_recorded_names_show() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate(t.path());
    assert!(shows(&g, ".claude/skills/review/scripts"));
    assert!(shows(&g, ".claude/skills/review/scripts/run.sh"));
    write(t.path(), ".claude/skills/review/scripts/other.sh", "x");
    assert!(!shows(&g, ".claude/skills/review/scripts/other.sh"));
}

#[test]
fn ordinary_symlinks_follow_the_link_rule() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate(t.path());
    let inside = t.path().join(".claude/skills/review/SKILL.md");
    let link = |target: &OsStr| lookup(&g, "docs/link", EntryKind::Symlink, Some(target));
    assert!(!link(inside.as_os_str()));
    assert!(link(OsStr::new("../.claude/skills/review")));
    assert!(link(OsStr::new("/usr/bin/env")));
}

#[test]
fn lockfile_changes_apply_at_the_next_decision() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate(t.path());
    assert!(
        !shows(&g, "CLAUDE.md"),
        "an unpinned instruction file is an artifact"
    );
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Block);
    assert!(shows(&g, "CLAUDE.md"));
}

#[test]
fn places() {
    let mut lock = Lockfile::empty(Policy::Block);
    lock.discovery = vec![
        Pattern::parse("prompts/*").unwrap(),
        Pattern::parse(".claude/skills/*").unwrap(),
    ];
    assert_eq!(place(&lock, &vp("src/x")), Place::Ordinary);
    assert_eq!(place(&lock, &vp("prompts")), Place::Container);
    assert!(matches!(
        place(&lock, &vp("prompts/a/b")),
        Place::Sealed { root_len: 2, .. }
    ));
    assert!(matches!(
        place(&lock, &vp(".claude/skills/a")),
        Place::Sealed { root_len: 3, .. }
    ));
    assert!(matches!(
        place(&lock, &vp(".claude/agents/a.md")),
        Place::Artifact { root_len: 2, .. }
    ));
    assert!(matches!(
        place(&lock, &vp("x/y/GEMINI.md")),
        Place::Artifact { root_len: 3, .. }
    ));
    lock.discovery.push(Pattern::parse("*").unwrap());
    assert_eq!(
        place(&lock, &vp("seal.json")),
        Place::Lockfile,
        "the lockfile is never sealed"
    );
    assert!(matches!(
        place(&lock, &vp("other.json")),
        Place::Sealed { .. }
    ));
    lock.discovery.pop();
    let bad = ViewPath::root()
        .child(OsStr::new("prompts"))
        .child(std::os::unix::ffi::OsStrExt::from_bytes(b"\xff"));
    assert_eq!(place(&lock, &bad), Place::Unmappable { root_len: 2 });
}

fn snapshot_of(g: &Gate, path: &str) -> Option<Arc<Snapshot>> {
    match open(g, path) {
        Serve::Bytes(s) => Some(s),
        _ => None,
    }
}

#[test]
fn with_the_feed_a_verification_is_reused_until_something_changes() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate_with_feed(t.path());
    assert!(g.reuses_verifications());
    let file = ".claude/skills/review/SKILL.md";
    let first = snapshot_of(&g, file).unwrap();
    let again = snapshot_of(&g, file).unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "the second open reused the verification"
    );
    // Any change under the root is seen at once.
    write(
        t.path(),
        ".claude/skills/review/scripts/run.sh",
        "echo evil",
    );
    assert!(snapshot_of(&g, file).is_none());
    assert!(!shows(&g, ".claude/skills/review"));
    write(t.path(), ".claude/skills/review/scripts/run.sh", "echo ok");
    let restored = snapshot_of(&g, file).unwrap();
    assert_eq!(restored.read_at(0, 100).unwrap(), b"approved");
    // A new file, a rename of the root, and a re-pin are changes too.
    write(t.path(), ".claude/skills/review/new.md", "x");
    assert!(!shows(&g, ".claude/skills/review"));
    std::fs::remove_file(t.path().join(".claude/skills/review/new.md")).unwrap();
    assert!(shows(&g, ".claude/skills/review"));
    std::fs::rename(
        t.path().join(".claude/skills/review"),
        t.path().join(".claude/skills/moved"),
    )
    .unwrap();
    assert!(snapshot_of(&g, file).is_none());
    std::fs::rename(
        t.path().join(".claude/skills/moved"),
        t.path().join(".claude/skills/review"),
    )
    .unwrap();
    assert!(snapshot_of(&g, file).is_some());
    write(t.path(), ".claude/skills/review/SKILL.md", "re-pinned");
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    assert_eq!(
        snapshot_of(&g, file).unwrap().read_at(0, 100).unwrap(),
        b"re-pinned"
    );
}

#[test]
fn a_change_the_feed_cannot_see_is_caught_by_the_digest_of_the_file_read() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate_with_feed(t.path());
    let file = ".claude/skills/review/SKILL.md";
    assert!(snapshot_of(&g, file).is_some());
    g.release_kept_bytes();
    overwrite_through_a_mapping(&t.path().join(file), b"EVILEVIL");
    assert!(
        snapshot_of(&g, file).is_none(),
        "served bytes the lockfile does not record"
    );
    assert!(!shows(&g, ".claude/skills/review"));
}

#[test]
fn a_verification_made_ahead_is_the_one_the_first_open_reuses() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate_with_feed(t.path());
    let key = BundleKey::parse("./.claude/skills/review").unwrap();
    let ahead = g.verify_ahead(u64::MAX);
    assert_eq!(
        ahead.get(&key).map(|r| r.state),
        Some(seal_core::verify::BundleState::Verified)
    );
    // A change the feed cannot see: a fresh verification would find it, so
    // a bundle still shown proves the lookup reused the one made ahead, and
    // the bytes served are the ones it verified.
    let file = ".claude/skills/review/SKILL.md";
    overwrite_through_a_mapping(&t.path().join(file), b"EVILEVIL");
    assert!(shows(&g, ".claude/skills/review"));
    assert_eq!(
        snapshot_of(&g, file).unwrap().read_at(0, 100).unwrap(),
        b"approved"
    );
    // A fresh gate verifies afresh and finds the change.
    let g = gate_with_feed(t.path());
    assert!(!shows(&g, ".claude/skills/review"));
}

#[test]
fn a_verification_the_budget_cut_short_is_neither_reported_nor_kept() {
    let t = project();
    std::fs::write(
        t.path().join(".claude/skills/review/big.bin"),
        vec![7u8; 4 << 20],
    )
    .unwrap();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate_with_feed(t.path());
    assert!(
        g.verify_ahead(1).is_empty(),
        "nothing is finished on one byte"
    );
    // Cut short is not a Mismatch: the first lookup verifies it in full.
    assert!(shows(&g, ".claude/skills/review"));
    assert_eq!(
        served(&g, ".claude/skills/review/SKILL.md").unwrap(),
        b"approved"
    );
}

/// Overwrites the start of `path` with `bytes` through a shared mapping:
/// a write that raises no inotify event.
fn overwrite_through_a_mapping(path: &Path, bytes: &[u8]) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let len = f.metadata().unwrap().len() as usize;
    assert!(len >= bytes.len());
    // SAFETY: the mapping covers exactly the file's length, is written
    // through a byte slice of that length only, and is unmapped before the
    // file is touched again.
    unsafe {
        let map = nix::sys::mman::mmap(
            None,
            std::num::NonZeroUsize::new(len).unwrap(),
            nix::sys::mman::ProtFlags::PROT_READ | nix::sys::mman::ProtFlags::PROT_WRITE,
            nix::sys::mman::MapFlags::MAP_SHARED,
            &f,
            0,
        )
        .unwrap();
        std::slice::from_raw_parts_mut(map.as_ptr() as *mut u8, len)[..bytes.len()]
            .copy_from_slice(bytes);
        nix::sys::mman::munmap(map, len).unwrap();
    }
}

/// `READERS` opens of `file` at once; what each was served.
fn opens_at_once(g: &Gate, file: &str) -> Vec<Option<Arc<Snapshot>>> {
    const READERS: usize = 6;
    let start = std::sync::Barrier::new(READERS);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..READERS)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    snapshot_of(g, file)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn opens_of_a_file_whose_bytes_were_let_go_share_one_read_of_it() {
    // Once the gate has let go of a bundle's bytes, the next open reads
    // its one file again; opens that come together must share that read
    // (each reading and hashing a big file for itself would multiply the
    // cost by the number of readers: the kernel's readahead alone sends
    // several at once).
    let t = project();
    let big: Vec<u8> = (0..24u32 << 20).map(|i| (i % 253) as u8).collect();
    std::fs::write(t.path().join(".claude/skills/review/big.bin"), &big).unwrap();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate_with_feed(t.path());
    let file = ".claude/skills/review/big.bin";
    assert!(snapshot_of(&g, file).is_some());
    g.release_kept_bytes();
    let got: Vec<Arc<Snapshot>> = opens_at_once(&g, file)
        .into_iter()
        .map(|s| s.expect("an approved file"))
        .collect();
    for s in &got[1..] {
        assert!(
            Arc::ptr_eq(&got[0], s),
            "opens that came together read and copied the file each for itself"
        );
    }
    assert!(got[0].read_at(0, 64).unwrap() == big[..64]);
    drop(got);
    // The same, when the read shows a change no event told of: no open is
    // served, neither the one that read nor those that waited for it.
    g.release_kept_bytes();
    overwrite_through_a_mapping(&t.path().join(file), b"EVIL");
    let served = opens_at_once(&g, file)
        .iter()
        .filter(|s| s.is_some())
        .count();
    assert_eq!(served, 0, "served bytes the lockfile does not record");
}

/// A bundle of `files` files spread over `dirs` directories, pinned, under
/// a gate whose feed may hold `budget` watches.
fn wide_bundle_gate(files: usize, dirs: usize, budget: usize) -> (tempfile::TempDir, Gate) {
    let t = tempfile::tempdir().unwrap();
    for i in 0..files {
        write(t.path(), &wide_file(i, dirs), "x");
    }
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let feed = crate::feed::Feed::with_budget(budget).unwrap();
    let g = gate_with(t.path(), Some(feed));
    (t, g)
}

fn wide_file(i: usize, dirs: usize) -> String {
    format!(".claude/skills/wide/d{}/f{i}.md", i % dirs)
}

fn wide_is_current(t: &tempfile::TempDir, g: &Gate) -> bool {
    let key = BundleKey::parse("./.claude/skills/wide").unwrap();
    let lock = Lockfile::parse(&std::fs::read(t.path().join("seal.json")).unwrap()).unwrap();
    g.cache
        .is_current(&key, lock.bundles.get(&key), Policy::Block)
}

#[test]
fn a_bundle_within_the_watch_budget_is_reused_however_many_files_it_has() {
    // The budget, not a fixed count, says what may be watched: a bundle of
    // 300 files under a budget of 400 is verified once for all its opens.
    let (t, g) = wide_bundle_gate(300, 3, 400);
    let first = snapshot_of(&g, &wide_file(0, 3)).unwrap();
    for i in 1..300 {
        assert!(snapshot_of(&g, &wide_file(i, 3)).is_some());
    }
    assert!(
        wide_is_current(&t, &g),
        "the verification is cached and current"
    );
    let again = snapshot_of(&g, &wide_file(0, 3)).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
}

#[test]
fn files_beyond_the_watch_budget_are_watched_through_their_directories() {
    // 300 files in 3 directories under a budget of 100: the directories
    // and some files get watches, the rest are seen through the
    // directories; the verification is reused all the same.
    let (t, g) = wide_bundle_gate(300, 3, 100);
    let last = wide_file(299, 3);
    assert!(snapshot_of(&g, &last).is_some());
    assert!(wide_is_current(&t, &g));
    assert!(
        g.feed().unwrap().watch_room() < 60,
        "half the budget is used"
    );
    // A write to any file, with a watch of its own or not (most have
    // none), is seen: through its directory's watch.
    for i in (0..300).step_by(5) {
        write(t.path(), &wide_file(i, 3), "changed");
        assert!(!wide_is_current(&t, &g), "a write to file {i} is seen");
        assert!(snapshot_of(&g, &last).is_none());
        write(t.path(), &wide_file(i, 3), "x");
        assert!(snapshot_of(&g, &last).is_some());
        assert!(wide_is_current(&t, &g));
    }
    // A file with a second name outside the bundle is watched itself: a
    // write through that name is seen too.
    g.cache
        .forget(&BundleKey::parse("./.claude/skills/wide").unwrap());
    let outside = t.path().join("outside-link");
    std::fs::hard_link(t.path().join(&last), &outside).unwrap();
    assert!(snapshot_of(&g, &wide_file(0, 3)).is_some());
    assert!(wide_is_current(&t, &g));
    std::fs::write(&outside, "changed through the other name").unwrap();
    assert!(!wide_is_current(&t, &g));
    assert!(snapshot_of(&g, &wide_file(0, 3)).is_none());
}

#[test]
fn a_bundle_whose_directories_exceed_the_watch_budget_is_verified_in_full_at_every_open() {
    let (t, g) = wide_bundle_gate(300, 150, 100);
    let file = wide_file(7, 150);
    assert!(snapshot_of(&g, &file).is_some());
    assert!(!wide_is_current(&t, &g));
    // Nothing is proven, so every change is still seen at the next open.
    write(t.path(), &wide_file(299, 150), "changed");
    assert!(snapshot_of(&g, &file).is_none());
    write(t.path(), &wide_file(299, 150), "x");
    assert!(snapshot_of(&g, &file).is_some());
    // Only the lockfile's own watches are held: a root that does not fit
    // holds none.
    assert!(g.feed().unwrap().watch_room() >= 95);
}

/// A request that serves a bundle file's bytes may hash (and so runs where
/// hashing stalls no queue of requests) while the gate no longer keeps
/// them, even with the bundle's verification current: serving them reads
/// and hashes the file again. Not when they are kept, and never for a
/// request that does not serve them.
#[test]
fn serving_bytes_the_gate_no_longer_keeps_may_hash() {
    let t = project();
    pin(t.path(), &[".claude/skills/*"], Policy::Block);
    let g = gate_with_feed(t.path());
    let file = vp(".claude/skills/review/SKILL.md");
    assert!(g.may_hash(&file, Hashing::Lookup), "nothing verified yet");
    assert!(shows(&g, ".claude/skills/review"));
    // Verified, current, and (a small bundle) every file kept.
    assert!(!g.may_hash(&file, Hashing::Lookup));
    assert!(!g.may_hash(&file, Hashing::Bytes));
    g.release_kept_bytes();
    assert!(
        !g.may_hash(&file, Hashing::Lookup),
        "a lookup hashes nothing"
    );
    assert!(
        g.may_hash(&file, Hashing::Bytes),
        "an open reads and hashes again"
    );
    // The open reads them again, and they are kept.
    assert!(snapshot_of(&g, ".claude/skills/review/SKILL.md").is_some());
    assert!(!g.may_hash(&file, Hashing::Bytes));
}
