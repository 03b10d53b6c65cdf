//! Finding sealed roots on disk: expanding discovery patterns (SPEC §Standalone
//! Tool Verification Set) and locating the root of a recorded bundle key.
//!
//! Names are compared in NFC and exactly (case-sensitive), taken from directory
//! listings so that the true case and the true spelling on disk decide, never a
//! case-insensitive or normalising lookup by the OS. Symlinks are never
//! followed; directories are entered with `O_NOFOLLOW`.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::rc::Rc;

use super::fs::{DirEntry, EntryKind, RawPath, list_dir, list_fresh_dir, nfc_name, open_dir_at};
use super::paths::BundleKey;
use super::pattern::{Pattern, segment_matches};
use super::walk::{DirFd, Flow, Gauge, Subdir, Visit, walk};

/// A failure to read a directory that discovery needed to enumerate.
#[derive(Debug)]
pub struct DiscoveryError {
    pub dir: RawPath,
    pub source: io::Error,
}

impl std::fmt::Display for DiscoveryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot read directory {}: {}",
            self.dir.display(),
            self.source
        )
    }
}

/// The most directory descriptors a [`Listings`] keeps open at once.
const MAX_OPEN_DIRS: usize = 128;

/// A directory a [`Listings`] has met: a node of a tree of names, so that a
/// path is found by one lookup per name (no whole-path keys to hash or clone).
struct KnownDir {
    depth: u32,
    name: OsString,
    children: HashMap<OsString, u32>,
    /// Open while it may be needed to open a child; at most
    /// [`MAX_OPEN_DIRS`] are.
    fd: Option<OwnedFd>,
    listing: Option<Rc<Vec<DirEntry>>>,
}

/// Directory listings made during one operation. Each directory is read at most
/// once per operation; a new operation starts with an empty cache, so nothing
/// is reused across verifications.
pub struct Listings<'a> {
    root: BorrowedFd<'a>,
    /// `nodes[0]` is the project root (read through `root`).
    nodes: Vec<KnownDir>,
    /// Nodes holding a descriptor.
    open: Vec<u32>,
}

impl<'a> Listings<'a> {
    pub fn new(root: BorrowedFd<'a>) -> Listings<'a> {
        Listings {
            root,
            nodes: vec![KnownDir {
                depth: 0,
                name: OsString::new(),
                children: HashMap::new(),
                fd: None,
                listing: None,
            }],
            open: Vec::new(),
        }
    }

    pub fn root(&self) -> BorrowedFd<'a> {
        self.root
    }

    /// The node of each directory on `dir`, from the project root down.
    fn nodes_of(&mut self, dir: &RawPath) -> Vec<u32> {
        let mut path = Vec::with_capacity(dir.0.len() + 1);
        let mut id = 0u32;
        path.push(id);
        for name in &dir.0 {
            let next = self.nodes.len() as u32;
            let parent = &mut self.nodes[id as usize];
            let depth = parent.depth + 1;
            id = *parent.children.entry(name.clone()).or_insert(next);
            if id == next {
                self.nodes.push(KnownDir {
                    depth,
                    name: name.clone(),
                    children: HashMap::new(),
                    fd: None,
                    listing: None,
                });
            }
            path.push(id);
        }
        path
    }

    /// Opens the last directory of `path` (node ids from the root) from its
    /// nearest open ancestor, one name at a time with `O_NOFOLLOW`, keeping
    /// the descriptors of the directories on the way.
    fn ensure_open(&mut self, path: &[u32]) -> io::Result<()> {
        let from = (1..path.len())
            .rev()
            .find(|&i| self.nodes[path[i] as usize].fd.is_some())
            .unwrap_or(0);
        for i in from + 1..path.len() {
            self.make_room(path);
            let fd = {
                let parent = match &self.nodes[path[i - 1] as usize].fd {
                    _ if i == 1 => self.root,
                    Some(fd) => fd.as_fd(),
                    // make_room never closes the parent about to be used.
                    None => return Err(io::Error::other("a parent directory was closed")),
                };
                open_dir_at(parent, &self.nodes[path[i] as usize].name)?
            };
            self.nodes[path[i] as usize].fd = Some(fd);
            self.open.push(path[i]);
        }
        Ok(())
    }

    /// Closes one descriptor when [`MAX_OPEN_DIRS`] are open: the deepest
    /// that is not on `path` (a walk does not come back to a finished
    /// branch), else the shallowest on it (the farthest from the next open).
    fn make_room(&mut self, path: &[u32]) {
        if self.open.len() < MAX_OPEN_DIRS {
            return;
        }
        let on_path = |node: &KnownDir, id: u32| path.get(node.depth as usize) == Some(&id);
        let victim = self
            .open
            .iter()
            .enumerate()
            .max_by_key(|&(_, &id)| {
                let node = &self.nodes[id as usize];
                if on_path(node, id) {
                    (false, u32::MAX - node.depth)
                } else {
                    (true, node.depth)
                }
            })
            .map(|(i, _)| i);
        if let Some(i) = victim {
            let id = self.open.swap_remove(i);
            self.nodes[id as usize].fd = None;
        }
    }

    /// The entries of directory `dir` (a project-relative raw path).
    pub fn list(&mut self, dir: &RawPath) -> Result<Rc<Vec<DirEntry>>, DiscoveryError> {
        let path = self.nodes_of(dir);
        let id = *path.last().unwrap_or(&0) as usize;
        if let Some(hit) = &self.nodes[id].listing {
            return Ok(hit.clone());
        }
        let err = |source| DiscoveryError {
            dir: dir.clone(),
            source,
        };
        // A directory this operation opened is read through its own
        // descriptor (fresh, offset 0: descriptors are only ever used for
        // `*at` calls until their one listing); the project root's descriptor
        // is shared, so it is reopened for listing.
        let entries = if id == 0 {
            list_dir(self.root).map_err(err)?
        } else {
            self.ensure_open(&path).map_err(err)?;
            let fd = self.nodes[id].fd.as_ref().expect("opened just now");
            list_fresh_dir(fd.as_fd()).map_err(err)?
        };
        let entries = Rc::new(entries);
        self.nodes[id].listing = Some(entries.clone());
        Ok(entries)
    }
}

/// Opens `path` below `root` one component at a time with `O_NOFOLLOW`.
pub(crate) fn open_dirs(root: BorrowedFd<'_>, path: &RawPath) -> io::Result<OwnedFd> {
    let mut names = path.0.iter();
    let first = names
        .next()
        .map(|n| n.as_os_str())
        .unwrap_or(OsStr::new("."));
    let mut fd = open_dir_at(root, first)?;
    for name in names {
        fd = open_dir_at(fd.as_fd(), name)?;
    }
    Ok(fd)
}

/// A root produced by discovery that cannot be named by a bundle key (a name
/// on its path is not UTF-8). SPEC: such an artifact is unverified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmappableRoot {
    pub raw: RawPath,
}

impl UnmappableRoot {
    /// The key rule the path breaks when it is UTF-8 (a backslash, CR or LF in
    /// a name); `None` when a name on it is not UTF-8.
    pub(crate) fn key_rule(&self) -> Option<super::paths::PathRule> {
        let text = self.raw.to_os_string().into_string().ok()?;
        BundleKey::parse(&format!("./{text}")).err()
    }

    /// Why no bundle key can name this root, for messages.
    pub(crate) fn reason(&self) -> String {
        match self.key_rule() {
            Some(rule) => format!("its path {rule}, which a bundle key cannot hold"),
            None => "a name on its path is not valid UTF-8".to_string(),
        }
    }
}

/// What the discovery patterns produce on disk.
#[derive(Debug, Default)]
pub struct Expansion {
    /// Each produced key with every on-disk location that normalises to it
    /// (more than one location means NFC twins) and the kind of the root.
    pub roots: BTreeMap<BundleKey, Vec<(RawPath, EntryKind)>>,
    pub unmappable: Vec<UnmappableRoot>,
}

/// Expands every pattern against the project. Matched directories that hold no
/// trackable entry are left out (SPEC: empty directories, or directories
/// holding only excluded files, are ignored); symlinks and other non-regular
/// entries at a root position are kept, so that verification reports them
/// instead of silently skipping them.
pub fn expand(
    listings: &mut Listings<'_>,
    patterns: &[Pattern],
) -> Result<Expansion, DiscoveryError> {
    let mut out = Expansion::default();
    for pattern in patterns {
        let globs: Vec<&str> = pattern.segments().collect();
        // (raw path, NFC segments or None when a name is not UTF-8)
        let mut frontier: Vec<(RawPath, Option<Vec<String>>)> =
            vec![(RawPath::default(), Some(Vec::new()))];
        for (depth, glob) in globs.iter().enumerate() {
            let last = depth + 1 == globs.len();
            let mut next = Vec::new();
            for (dir, nfc) in frontier {
                for entry in listings.list(&dir)?.iter() {
                    let name_nfc = nfc_name(&entry.name);
                    let matched = match &name_nfc {
                        Some(n) => segment_matches(glob, n),
                        // A name that is not UTF-8 is matched in its lossy form:
                        // if it matches, it is reported as unmappable (and so
                        // unverified), never skipped.
                        None => segment_matches(glob, &entry.name.to_string_lossy()),
                    };
                    if !matched {
                        continue;
                    }
                    if !last && entry.kind != EntryKind::Dir {
                        continue;
                    }
                    // The project's own lockfile is never a sealed root (SPEC
                    // §What Gets Hashed: no circular hashing); `*` would
                    // otherwise produce ./seal.json, which no pin can satisfy.
                    if last && dir.0.is_empty() && entry.name == super::lockfile::LOCKFILE_NAME {
                        continue;
                    }
                    let raw = dir.join(&entry.name);
                    let nfc_path = match (&nfc, name_nfc) {
                        (Some(v), Some(n)) => {
                            let mut v = v.clone();
                            v.push(n);
                            Some(v)
                        }
                        _ => None,
                    };
                    if last {
                        record_root(listings, &mut out, raw, nfc_path, entry.kind)?;
                    } else {
                        next.push((raw, nfc_path));
                    }
                }
            }
            frontier = next;
        }
    }
    for locations in out.roots.values_mut() {
        locations.sort();
        locations.dedup();
    }
    Ok(out)
}

fn record_root(
    listings: &mut Listings<'_>,
    out: &mut Expansion,
    raw: RawPath,
    nfc_path: Option<Vec<String>>,
    kind: EntryKind,
) -> Result<(), DiscoveryError> {
    if kind == EntryKind::Dir && !has_trackable_entry(listings, &raw)? {
        return Ok(());
    }
    match nfc_path.and_then(|segments| BundleKey::from_segments(&segments).ok()) {
        Some(key) => out.roots.entry(key).or_default().push((raw, kind)),
        None => out.unmappable.push(UnmappableRoot { raw }),
    }
    Ok(())
}

/// True when the directory holds anything other than directories and `.git`
/// (at any depth): a file, or an entry that would make it a Mismatch. A
/// directory that cannot be listed counts as holding something. Stops at the
/// first such entry; linear in the directories walked, whatever their depth.
pub fn has_trackable_entry(
    listings: &mut Listings<'_>,
    dir: &RawPath,
) -> Result<bool, DiscoveryError> {
    // A directory that cannot be listed might hold files: count it as a
    // root (fail closed), so hashing reports the read error on it.
    let Ok(fd) = open_dirs(listings.root(), dir) else {
        return Ok(true);
    };
    let mut probe = Trackable {
        project_root: dir.0.is_empty(),
        found: false,
    };
    walk(fd, true, &Gauge::default(), &mut probe);
    Ok(probe.found)
}

/// The visitor of [`has_trackable_entry`]; its token says "the walk's root".
struct Trackable {
    project_root: bool,
    found: bool,
}

impl Visit for Trackable {
    type Token = bool;

    fn listed(
        &mut self,
        _: &std::sync::Arc<DirFd>,
        _: &str,
        at_root: &bool,
        entries: Vec<DirEntry>,
        subdirs: &mut Vec<Subdir<bool>>,
    ) -> Flow {
        for entry in entries {
            if entry.name == ".git"
                || (self.project_root && *at_root && entry.name == super::lockfile::LOCKFILE_NAME)
            {
                continue;
            }
            if entry.kind != EntryKind::Dir {
                self.found = true;
                return Flow::Stop;
            }
            subdirs.push(Subdir {
                raw: entry.name,
                segment: String::new(),
                token: false,
            });
        }
        Flow::Continue
    }

    fn unreadable(&mut self, _: &str, _: io::Error) -> Flow {
        self.found = true;
        Flow::Stop
    }
}

/// Where the root of a recorded key is on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Located {
    /// No entry spells the key's path (in exact case and NFC), or a parent on
    /// the way is not a directory: the bundle is Removed.
    Absent,
    /// Exactly one entry at every step.
    Found { raw: RawPath, kind: EntryKind },
    /// A directory on the way is a symlink: the root cannot be verified
    /// without following it.
    ThroughSymlink { at: RawPath },
    /// Two or more entries normalise to the same name at some step.
    Twins { at: Vec<RawPath> },
}

/// Finds the root of `key`, one listed directory at a time.
pub(crate) fn locate(
    listings: &mut Listings<'_>,
    key: &BundleKey,
) -> Result<Located, DiscoveryError> {
    let segments: Vec<&str> = key.segments().collect();
    let mut dir = RawPath::default();
    for (i, segment) in segments.iter().enumerate() {
        let entries = listings.list(&dir)?;
        let matches: Vec<&DirEntry> = entries
            .iter()
            .filter(|e| nfc_name(&e.name).as_deref() == Some(*segment))
            .collect();
        let entry = match matches.as_slice() {
            [] => return Ok(Located::Absent),
            [one] => *one,
            many => {
                return Ok(Located::Twins {
                    at: many.iter().map(|e| dir.join(&e.name)).collect(),
                });
            }
        };
        let here = dir.join(&entry.name);
        if i + 1 == segments.len() {
            return Ok(Located::Found {
                raw: here,
                kind: entry.kind,
            });
        }
        match entry.kind {
            EntryKind::Dir => dir = here,
            EntryKind::Symlink => return Ok(Located::ThroughSymlink { at: here }),
            _ => return Ok(Located::Absent),
        }
    }
    Ok(Located::Absent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::ffi::OsStrExt;

    fn project() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn touch(root: &std::path::Path, rel: &str) {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, rel).unwrap();
    }

    fn keys(root: &std::path::Path, patterns: &[&str]) -> Vec<String> {
        let fd = super::super::fs::open_project(root).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let patterns: Vec<Pattern> = patterns
            .iter()
            .map(|p| Pattern::parse(p).unwrap())
            .collect();
        expand(&mut l, &patterns)
            .unwrap()
            .roots
            .keys()
            .map(|k| k.as_str().to_string())
            .collect()
    }

    #[test]
    fn expands_directories_files_and_hidden_names() {
        let t = project();
        touch(t.path(), "skills/a/SKILL.md");
        touch(t.path(), "skills/.hidden/SKILL.md");
        touch(t.path(), "skills/single.md");
        fs::create_dir_all(t.path().join("skills/empty/sub")).unwrap();
        touch(t.path(), "skills/gitonly/.git/HEAD");
        assert_eq!(
            keys(t.path(), &["skills/*"]),
            ["./skills/.hidden", "./skills/a", "./skills/single.md"]
        );
        assert_eq!(keys(t.path(), &["skills"]), ["./skills"]);
        assert!(keys(t.path(), &["skills/?"]).is_empty());
    }

    #[test]
    fn does_not_descend_through_files_or_symlinks() {
        let t = project();
        touch(t.path(), "real/x/f");
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).unwrap();
        touch(t.path(), "file");
        assert_eq!(keys(t.path(), &["*/x"]), ["./real/x"]);
        // A symlink at the root position is reported, not skipped.
        assert_eq!(keys(t.path(), &["link"]), ["./link"]);
    }

    #[test]
    fn exact_case_only() {
        let t = project();
        touch(t.path(), "Skills/a/f");
        assert!(keys(t.path(), &["skills/*"]).is_empty());
        let fd = super::super::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let key = BundleKey::parse("./skills/a").unwrap();
        assert_eq!(locate(&mut l, &key).unwrap(), Located::Absent);
    }

    #[test]
    fn nfd_directory_names_produce_nfc_keys() {
        let t = project();
        touch(t.path(), "skills/cafe\u{301}/SKILL.md");
        assert_eq!(keys(t.path(), &["skills/*"]), ["./skills/caf\u{e9}"]);
        let fd = super::super::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let key = BundleKey::parse("./skills/caf\u{e9}").unwrap();
        assert!(matches!(
            locate(&mut l, &key).unwrap(),
            Located::Found {
                kind: EntryKind::Dir,
                ..
            }
        ));
    }

    #[test]
    fn nfc_twins_are_reported() {
        let t = project();
        touch(t.path(), "skills/cafe\u{301}/a");
        touch(t.path(), "skills/caf\u{e9}/a");
        let fd = super::super::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let p = Pattern::parse("skills/*").unwrap();
        let e = expand(&mut l, &[p]).unwrap();
        assert_eq!(e.roots.len(), 1);
        assert_eq!(e.roots.values().next().unwrap().len(), 2);
        let key = BundleKey::parse("./skills/caf\u{e9}").unwrap();
        assert!(matches!(
            locate(&mut l, &key).unwrap(),
            Located::Twins { .. }
        ));
    }

    #[test]
    fn the_project_lockfile_is_never_a_root() {
        let t = project();
        touch(t.path(), "seal.json");
        touch(t.path(), "a/f");
        touch(t.path(), "s/seal.json");
        assert_eq!(keys(t.path(), &["*"]), ["./a", "./s"]);
        assert!(keys(t.path(), &["seal.json"]).is_empty());
        // Only the one at the project root: elsewhere it is ordinary content.
        assert_eq!(keys(t.path(), &["s/*"]), ["./s/seal.json"]);
    }

    #[test]
    fn unmappable_roots_say_why() {
        let t = project();
        touch(t.path(), "s/cr\rname/f");
        touch(t.path(), "s/back\\slash/f");
        std::fs::create_dir_all(t.path().join(std::ffi::OsStr::from_bytes(b"s/\xff"))).unwrap();
        std::fs::write(t.path().join(std::ffi::OsStr::from_bytes(b"s/\xff/f")), "x").unwrap();
        let fd = super::super::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let e = expand(&mut l, &[Pattern::parse("s/*").unwrap()]).unwrap();
        let mut reasons: Vec<String> = e.unmappable.iter().map(UnmappableRoot::reason).collect();
        reasons.sort();
        assert_eq!(
            reasons,
            [
                "a name on its path is not valid UTF-8",
                "its path contains a backslash (paths use forward slashes), which a bundle key cannot hold",
                "its path contains a carriage return or line feed, which a bundle key cannot hold",
            ]
        );
    }

    #[test]
    fn locate_reports_symlinked_parents_and_file_parents() {
        let t = project();
        touch(t.path(), "real/x/f");
        touch(t.path(), "plain");
        std::os::unix::fs::symlink("real", t.path().join("link")).unwrap();
        let fd = super::super::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(fd.as_fd());
        let k = |s| BundleKey::parse(s).unwrap();
        assert!(matches!(
            locate(&mut l, &k("./link/x")).unwrap(),
            Located::ThroughSymlink { .. }
        ));
        assert_eq!(locate(&mut l, &k("./plain/x")).unwrap(), Located::Absent);
        assert!(matches!(
            locate(&mut l, &k("./plain")).unwrap(),
            Located::Found {
                kind: EntryKind::File,
                ..
            }
        ));
    }
}
