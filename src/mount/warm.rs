//! Warming the kernel's entries of a view just mounted for a run: a thread
//! lists the project's ordinary directories through the view, so that the
//! kernel holds an entry (and the attributes) of every name in them before
//! the command asks.
//!
//! Why: the kernel's entries of a FUSE mount start empty, and a command that
//! `lstat`s what it already knows by name (a first `git status` checks every
//! file of the index; a build checks its inputs) costs one `LOOKUP` round
//! trip per name. A listing costs one `READDIRPLUS` per 64 KiB of entries
//! (about 400) and hands the kernel all of them at once. Natively those
//! entries are warm; here the listing makes them so, in the background,
//! while the run starts and its command runs.
//!
//! What it never does: list a directory whose listing, or the lookup of
//! which, may hash a bundle (a bundle, an artifact, a directory agents load
//! bundles from: the gate's [`Gate::may_hash`]), so warming verifies
//! nothing and reads no file; enter `.git` or a dependency tree
//! ([`NO_SCRATCH_BELOW`]); go past [`WARM_ENTRIES`] names. It serves
//! nothing the view would not serve to any lister: the entries it makes the
//! kernel keep are the view's answers to a listing, with their lifetimes.
//! It runs at the lowest priority the scheduler has, so that it takes only
//! CPU time the command leaves idle (its requests are answered on the CPU
//! that asks), and it stops when the run ends.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use seal_core::fs::{DirEntry, EntryKind, RawPath, lstat_at};
use seal_core::walk::{DirFd, Flow, Subdir, Visit, walk_at};
use seal_gate::surfaces::NO_SCRATCH_BELOW;
use seal_gate::{Gate, Hashing, ViewPath};

/// The most names one warming lists: beyond it the tree is left to the
/// command's own lookups. Each name costs the kernel an entry and an inode
/// (about a kilobyte) while the view is mounted, and about 2.5 µs to forget
/// at its unmount, when the run ends.
const WARM_ENTRIES: usize = 50_000;

/// The largest directory (its size in bytes, as the filesystem reports it)
/// a warming lists: about 40,000 names on ext4.
const LARGEST_DIRECTORY: u64 = 1 << 20;

/// A warming under way; dropping it stops the walk and waits for it (the
/// view must not be unmounted under it).
pub struct Warming {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Warming {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::warn!("the warming of the view's entries panicked");
        }
    }
}

/// Starts warming the view mounted at `mountpoint`, deciding with `gate`
/// (the view's own) which directories may be listed.
pub fn warm_entries(mountpoint: &Path, gate: Arc<Gate>) -> io::Result<Warming> {
    let root: OwnedFd = std::fs::File::open(mountpoint)?.into();
    let stop = Arc::new(AtomicBool::new(false));
    let thread = std::thread::Builder::new()
        .name("seal-warm".into())
        .spawn({
            let stop = Arc::clone(&stop);
            move || {
                let began = std::time::Instant::now();
                run_when_idle();
                let mut warm = Warm::new(&gate, &stop, WARM_ENTRIES);
                walk_at(
                    root.as_fd(),
                    &RawPath::default(),
                    ViewPath::root(),
                    &mut warm,
                );
                tracing::debug!("warming: {} names in {:?}", warm.listed, began.elapsed());
            }
        })?;
    Ok(Warming {
        stop,
        thread: Some(thread),
    })
}

/// The walk's visitor: enters the directories the gate lets it list.
struct Warm<'a> {
    gate: &'a Gate,
    stop: &'a AtomicBool,
    /// Names listed so far, and the most it may list.
    listed: usize,
    budget: usize,
    /// The directories listed, in order (for the tests).
    #[cfg(test)]
    dirs: Vec<String>,
}

impl<'a> Warm<'a> {
    fn new(gate: &'a Gate, stop: &'a AtomicBool, budget: usize) -> Warm<'a> {
        Warm {
            gate,
            stop,
            listed: 0,
            budget,
            #[cfg(test)]
            dirs: Vec::new(),
        }
    }
}

impl Visit for Warm<'_> {
    type Token = ViewPath;

    fn listed(
        &mut self,
        dir: &Arc<DirFd>,
        _rel: &str,
        path: &ViewPath,
        entries: Vec<DirEntry>,
        subdirs: &mut Vec<Subdir<ViewPath>>,
    ) -> Flow {
        #[cfg(test)]
        self.dirs.push(path.display());
        self.listed += entries.len();
        if self.listed >= self.budget {
            return Flow::Stop;
        }
        for entry in entries {
            if entry.kind != EntryKind::Dir || passed_over(&entry.name) {
                continue;
            }
            // A listing may hash wherever a lookup may, and in a container
            // too: one question covers both.
            let child = path.child(&entry.name);
            if self.gate.may_hash(&child, Hashing::Listing) {
                continue;
            }
            // A directory is listed whole before the budget is counted:
            // one too large for the budget is left alone. (Its size comes
            // with the listing just made: the kernel holds it.)
            match lstat_at(dir.as_fd(), &entry.name) {
                Ok(st) if (st.st_size as u64) <= LARGEST_DIRECTORY => {}
                _ => continue,
            }
            subdirs.push(Subdir {
                raw: entry.name,
                segment: String::new(),
                token: child,
            });
        }
        Flow::Continue
    }

    fn between(&mut self) -> Flow {
        if self.stop.load(Ordering::Relaxed) {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

/// Directories warming does not enter: git's own (its objects are opened
/// by name, never listed) and dependency trees.
fn passed_over(name: &std::ffi::OsStr) -> bool {
    name == ".git" || NO_SCRATCH_BELOW.iter().any(|n| name == *n)
}

/// Puts the calling thread under `SCHED_IDLE`: it runs only on a CPU with
/// nothing else to run.
fn run_when_idle() {
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a
    // valid sched_param; it touches no memory of ours beyond reading it.
    let param = libc::sched_param { sched_priority: 0 };
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if rc != 0 {
        tracing::debug!(
            "the warming keeps its priority: {}",
            io::Error::last_os_error()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seal_core::digest::Digest;
    use seal_core::lockfile::{BundleEntry, Lockfile, Policy};
    use seal_core::paths::{BundleKey, FilePath};
    use seal_core::pattern::Pattern;
    use seal_gate::GateConfig;
    use seal_gate::links::LinkRule;

    /// A project with a pinned skill, an ordinary tree, git's directory and
    /// a dependency tree; its gate (without a change feed, so a bundle is
    /// verified at every lookup: warming must never look one up).
    fn project() -> (tempfile::TempDir, Gate) {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ".claude/skills/a/SKILL.md",
            ".claude/skills/a/refs/more.md",
            ".claude/agents/x.md",
            "src/lib/deep/mod.rs",
            "src/main.rs",
            ".git/objects/ab/cdef",
            "node_modules/pkg/index.js",
            "docs/guide.md",
        ];
        for f in files {
            let path = dir.path().join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, f).unwrap();
        }
        let mut lock = Lockfile::empty(Policy::Block);
        lock.discovery = vec![Pattern::parse(".claude/skills/*").unwrap()];
        let digests = ["SKILL.md", "refs/more.md"]
            .iter()
            .map(|rel| {
                let bytes = format!(".claude/skills/a/{rel}");
                (FilePath::parse(rel).unwrap(), Digest::of(bytes.as_bytes()))
            })
            .collect();
        lock.bundles.insert(
            BundleKey::parse("./.claude/skills/a").unwrap(),
            BundleEntry::from_files(digests),
        );
        lock.check().unwrap();
        let bytes = lock.to_canonical_bytes();
        std::fs::write(dir.path().join("seal.json"), &bytes).unwrap();
        let gate = Gate::new(GateConfig {
            project: Arc::new(seal_core::fs::open_project(dir.path()).unwrap()),
            lockfile_bytes: bytes.clone(),
            lockfile: Lockfile::parse(&bytes).unwrap(),
            links: LinkRule::new(Path::new("/view"), &[dir.path().to_path_buf()]),
            audit: None,
            feed: None,
        });
        (dir, gate)
    }

    /// The directories a warming of `root` lists (on the host tree: the
    /// walk is the same through a view), with `budget` names at most.
    fn warmed(root: &Path, gate: &Gate, stop: bool, budget: usize) -> (Vec<String>, usize) {
        let stop = AtomicBool::new(stop);
        let mut warm = Warm::new(gate, &stop, budget);
        let fd = seal_core::fs::open_project(root).unwrap();
        walk_at(fd.as_fd(), &RawPath::default(), ViewPath::root(), &mut warm);
        let mut dirs = warm.dirs;
        dirs.sort();
        (dirs, warm.listed)
    }

    #[test]
    fn warming_lists_ordinary_directories_and_never_where_bundles_are() {
        let (dir, gate) = project();
        let (dirs, listed) = warmed(dir.path(), &gate, false, WARM_ENTRIES);
        // Not `.claude` or below (its listing or lookups would verify the
        // skill), not `.git`, not `node_modules`.
        assert_eq!(
            dirs,
            [".", "./docs", "./src", "./src/lib", "./src/lib/deep"]
        );
        // The root's 6 names, docs 1, src 2, src/lib 1, src/lib/deep 1.
        assert_eq!(listed, 11);
    }

    #[test]
    fn warming_leaves_a_directory_too_large_for_its_budget() {
        let (dir, gate) = project();
        let big = dir.path().join("src/big");
        std::fs::create_dir(&big).unwrap();
        // Names of 200 bytes: 6,000 of them are past a mebibyte on any
        // filesystem that counts a directory's size in its names' bytes.
        let long = "n".repeat(196);
        for i in 0..6_000 {
            std::fs::write(big.join(format!("{long}{i:04}")), "").unwrap();
        }
        let size = std::fs::metadata(&big).unwrap().len();
        assert!(size > LARGEST_DIRECTORY, "{size}");
        let (dirs, _) = warmed(dir.path(), &gate, false, WARM_ENTRIES);
        assert!(dirs.contains(&"./src/lib".to_string()), "{dirs:?}");
        assert!(!dirs.contains(&"./src/big".to_string()), "{dirs:?}");
    }

    #[test]
    fn warming_stops_at_its_budget_and_when_told() {
        let (dir, gate) = project();
        let (dirs, _) = warmed(dir.path(), &gate, false, 3);
        assert_eq!(dirs, ["."], "the root's 6 names are past a budget of 3");
        let (dirs, _) = warmed(dir.path(), &gate, true, WARM_ENTRIES);
        assert!(dirs.is_empty(), "{dirs:?}");
    }
}
