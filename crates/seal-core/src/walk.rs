//! Walking a directory tree in time linear in its entries, whatever its shape
//! (depth, fan-out, name lengths), with a bounded number of open descriptors.
//!
//! The walk is depth-first and keeps one frame per directory on the current
//! path: its pending subdirectories, its identity (device and inode) and, for
//! the deepest [`OPEN_FRAMES`] frames only, an open descriptor. A directory is
//! entered with `openat(parent, name, O_NOFOLLOW|O_DIRECTORY)` from its
//! parent's descriptor, never by a path from the top, so entering costs one
//! name, not the depth. Going deeper than the window closes the shallowest
//! open frame. Coming back to a directory whose descriptor was closed climbs
//! `..` from the deepest descriptor just left (one step per level left, and
//! each level is left once), then checks with `fstat` that it reached the same
//! directory; if the tree was moved under the walk it did not, and the
//! directory is reported unreadable instead of being read from elsewhere.
//! `..` is never a symlink, and the check makes a rename race harmless.
//!
//! The walker knows no rule of the spec: a [`Visit`] decides what each listed
//! entry means and which subdirectories to enter. Directory paths are kept in
//! one buffer that grows and shrinks with the walk (`rel`), so no full path is
//! copied per step.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;

use super::fs::{DirEntry, fstat_fd, list_fresh_dir, open_dir_at};

/// Frame descriptors kept open at once (the deepest frames of the path).
pub(crate) const OPEN_FRAMES: usize = 16;

/// An open directory of a walk. Shared (in an [`Arc`]) by the walk and the
/// hashing jobs of its files; the last holder closes it.
pub struct DirFd {
    fd: OwnedFd,
    gauge: Gauge,
}

impl AsFd for DirFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for DirFd {
    fn drop(&mut self) {
        self.gauge.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts the directory descriptors of one walk that are still open, whether
/// the walk or a queued hashing job holds them, so that a caller can keep the
/// total bounded (a bundle with thousands of directories must run under
/// `RLIMIT_NOFILE` 256).
#[derive(Clone, Default)]
pub(crate) struct Gauge(Arc<AtomicUsize>);

impl Gauge {
    pub(crate) fn wrap(&self, fd: OwnedFd) -> Arc<DirFd> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Arc::new(DirFd {
            fd,
            gauge: self.clone(),
        })
    }

    /// Directory descriptors of this walk open right now.
    pub(crate) fn open(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// A subdirectory a visitor wants entered.
pub struct Subdir<T> {
    /// Its name exactly as listed.
    pub raw: OsString,
    /// What it adds to the path the visitor sees (its NFC name; anything for
    /// a visitor that does not use paths).
    pub segment: String,
    /// The visitor's own state for that directory.
    pub token: T,
}

/// Whether the walk goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// What the entries of a walk mean.
pub trait Visit {
    /// Per-directory state (e.g. where the directory is in a recorded tree).
    type Token;
    /// Directory `rel` (`""` for the walk's root) was listed; its descriptor
    /// is `dir`. Push onto `subdirs` the subdirectories to enter.
    fn listed(
        &mut self,
        dir: &Arc<DirFd>,
        rel: &str,
        token: &Self::Token,
        entries: Vec<DirEntry>,
        subdirs: &mut Vec<Subdir<Self::Token>>,
    ) -> Flow;
    /// Directory `rel` is open as `dir`, about to be listed.
    fn opened(&mut self, _dir: BorrowedFd<'_>) {}
    /// Directory `rel` could not be opened or listed (passed over unless
    /// the visitor says otherwise).
    fn unreadable(&mut self, _rel: &str, _error: io::Error) -> Flow {
        Flow::Continue
    }
    /// Called before each directory is entered: a place to stop (a proof was
    /// found, the work was cancelled) or to relieve descriptor pressure.
    fn between(&mut self) -> Flow {
        Flow::Continue
    }
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walked {
    /// Every directory the visitor asked for was listed (or reported).
    Complete,
    /// The visitor stopped it.
    Stopped,
}

struct Frame<T> {
    fd: Option<Arc<DirFd>>,
    /// Device and inode, to recognise the directory when climbing back.
    id: (u64, u64),
    subdirs: Vec<Subdir<T>>,
    /// Length of `rel` for this directory.
    rel_len: usize,
}

/// Walks the directory at `raw` below `project` (opened a name at a time,
/// crossing no symlink), depth-first; a directory that cannot be opened is
/// reported unreadable.
pub fn walk_at<V: Visit>(
    project: BorrowedFd<'_>,
    raw: &crate::fs::RawPath,
    token: V::Token,
    visitor: &mut V,
) -> Walked {
    match crate::discovery::open_dirs(project, raw) {
        Ok(root) => walk(root, token, &Gauge::default(), visitor),
        Err(e) => match visitor.unreadable("", e) {
            Flow::Continue => Walked::Complete,
            Flow::Stop => Walked::Stopped,
        },
    }
}

/// Walks the directory open as `root` (a fresh descriptor: its offset is
/// used for listing), depth-first.
pub(crate) fn walk<V: Visit>(
    root: OwnedFd,
    token: V::Token,
    gauge: &Gauge,
    visitor: &mut V,
) -> Walked {
    let mut rel = String::new();
    let mut stack: Vec<Frame<V::Token>> = Vec::new();
    if visitor.between() == Flow::Stop {
        return Walked::Stopped;
    }
    match enter(root, &rel, &token, gauge, visitor) {
        Entered::Frame(frame) => stack.push(frame),
        Entered::Skipped(Flow::Continue) => return Walked::Complete,
        Entered::Skipped(Flow::Stop) => return Walked::Stopped,
    }
    // stack[open_from..] hold descriptors; the frames below do not.
    let mut open_from = 0usize;
    // The descriptor of the deepest frame left since the last climb.
    let mut climber: Option<(usize, Arc<DirFd>)> = None;
    loop {
        if visitor.between() == Flow::Stop {
            return Walked::Stopped;
        }
        let Some(depth) = stack.len().checked_sub(1) else {
            return Walked::Complete;
        };
        let top = &mut stack[depth];
        let Some(sub) = top.subdirs.pop() else {
            let left = stack.pop().expect("a top frame");
            if let Some(fd) = left.fd {
                climber = Some((depth, fd));
            }
            open_from = open_from.min(stack.len());
            match stack.last() {
                Some(parent) => rel.truncate(parent.rel_len),
                None => return Walked::Complete,
            }
            continue;
        };
        let parent = match &top.fd {
            Some(fd) => fd.clone(),
            None => match climb(climber.take(), depth, top.id) {
                Ok(fd) => {
                    let fd = gauge.wrap(fd);
                    top.fd = Some(fd.clone());
                    open_from = depth;
                    fd
                }
                Err(e) => {
                    // The tree changed under the walk: this directory's
                    // remaining subdirectories are not read from elsewhere.
                    top.subdirs.clear();
                    if visitor.unreadable(&rel, e) == Flow::Stop {
                        return Walked::Stopped;
                    }
                    continue;
                }
            },
        };
        let parent_len = top.rel_len;
        push_segment(&mut rel, &sub.segment);
        let opened = open_dir_at(parent.as_fd(), &sub.raw);
        drop(parent);
        let entered = match opened {
            Ok(fd) => enter(fd, &rel, &sub.token, gauge, visitor),
            Err(e) => Entered::Skipped(visitor.unreadable(&rel, e)),
        };
        match entered {
            Entered::Frame(frame) => {
                stack.push(frame);
                while stack.len() - open_from > OPEN_FRAMES {
                    stack[open_from].fd = None;
                    open_from += 1;
                }
            }
            Entered::Skipped(flow) => {
                rel.truncate(parent_len);
                if flow == Flow::Stop {
                    return Walked::Stopped;
                }
            }
        }
    }
}

enum Entered<T> {
    Frame(Frame<T>),
    Skipped(Flow),
}

/// Lists a freshly opened directory and hands it to the visitor.
fn enter<V: Visit>(
    fd: OwnedFd,
    rel: &str,
    token: &V::Token,
    gauge: &Gauge,
    visitor: &mut V,
) -> Entered<V::Token> {
    visitor.opened(fd.as_fd());
    let listed = fstat_fd(fd.as_fd()).and_then(|st| Ok((st, list_fresh_dir(fd.as_fd())?)));
    let (st, entries) = match listed {
        Ok(x) => x,
        Err(e) => return Entered::Skipped(visitor.unreadable(rel, e)),
    };
    let fd = gauge.wrap(fd);
    let mut subdirs = Vec::new();
    if visitor.listed(&fd, rel, token, entries, &mut subdirs) == Flow::Stop {
        return Entered::Skipped(Flow::Stop);
    }
    Entered::Frame(Frame {
        fd: Some(fd),
        id: (st.st_dev, st.st_ino),
        subdirs,
        rel_len: rel.len(),
    })
}

/// Reopens the directory at `depth` whose identity is `id` by climbing `..`
/// from the deeper descriptor `from`.
fn climb(from: Option<(usize, Arc<DirFd>)>, depth: usize, id: (u64, u64)) -> io::Result<OwnedFd> {
    let moved = || io::Error::other("it was moved while it was being read");
    let Some((from_depth, fd)) = from.filter(|(d, _)| *d > depth) else {
        return Err(moved());
    };
    let up = |dir: BorrowedFd<'_>| {
        openat(
            dir,
            "..",
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| io::Error::from_raw_os_error(e as i32))
    };
    let mut cur = up(fd.as_fd())?;
    drop(fd);
    for _ in depth + 1..from_depth {
        cur = up(cur.as_fd())?;
    }
    let st = fstat_fd(cur.as_fd())?;
    if (st.st_dev, st.st_ino) != id {
        return Err(moved());
    }
    Ok(cur)
}

fn push_segment(rel: &mut String, segment: &str) {
    if !rel.is_empty() {
        rel.push('/');
    }
    rel.push_str(segment);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    /// Collects every directory path and the most descriptors seen open.
    struct All {
        dirs: Vec<String>,
        files: usize,
        gauge: Gauge,
        most_open: usize,
        unreadable: Vec<String>,
    }

    impl Visit for All {
        type Token = ();
        fn listed(
            &mut self,
            _: &Arc<DirFd>,
            rel: &str,
            _: &(),
            entries: Vec<DirEntry>,
            subdirs: &mut Vec<Subdir<()>>,
        ) -> Flow {
            self.dirs.push(rel.to_string());
            self.most_open = self.most_open.max(self.gauge.open());
            for e in entries {
                if e.kind == super::super::fs::EntryKind::Dir {
                    subdirs.push(Subdir {
                        segment: e.name.to_string_lossy().into_owned(),
                        raw: e.name,
                        token: (),
                    });
                } else {
                    self.files += 1;
                }
            }
            Flow::Continue
        }
        fn unreadable(&mut self, rel: &str, _: io::Error) -> Flow {
            self.unreadable.push(rel.to_string());
            Flow::Continue
        }
    }

    fn run(root: &Path) -> All {
        let fd = super::super::fs::open_project(root).unwrap();
        let gauge = Gauge::default();
        let mut all = All {
            dirs: Vec::new(),
            files: 0,
            gauge: gauge.clone(),
            most_open: 0,
            unreadable: Vec::new(),
        };
        assert_eq!(walk(fd, (), &gauge, &mut all), Walked::Complete);
        assert_eq!(gauge.open(), 0, "every descriptor is closed at the end");
        all
    }

    /// A comb: every level holds a leaf directory (visited after the deeper
    /// levels, so the walk must come back to every level) and the next level.
    #[test]
    fn a_deep_comb_is_walked_with_few_descriptors() {
        let t = tempfile::tempdir().unwrap();
        let mut p = t.path().to_path_buf();
        let depth = 300;
        for _ in 0..depth {
            fs::create_dir(p.join("leaf")).unwrap();
            fs::write(p.join("leaf/f"), "x").unwrap();
            p.push("d");
            fs::create_dir(&p).unwrap();
        }
        let all = run(t.path());
        assert!(all.unreadable.is_empty(), "{:?}", all.unreadable);
        assert_eq!(all.dirs.len(), 2 * depth + 1);
        assert_eq!(all.files, depth);
        assert!(all.most_open <= OPEN_FRAMES + 1, "{}", all.most_open);
        let deepest = all.dirs.iter().map(|d| d.split('/').count()).max();
        assert_eq!(deepest, Some(depth));
        assert!(all.dirs.contains(&"d/d/leaf".to_string()));
    }

    /// A directory moved away while the walk is below it is reported, not
    /// read from its new place.
    #[test]
    fn climbing_back_to_a_moved_directory_is_refused() {
        let fd = tempfile::tempdir().unwrap();
        let from = (
            5usize,
            Gauge::default().wrap(super::super::fs::open_project(fd.path()).unwrap()),
        );
        // Any identity other than the real parent's.
        let e = climb(Some(from), 4, (0, 0)).unwrap_err();
        assert!(e.to_string().contains("moved"), "{e}");
    }
}
