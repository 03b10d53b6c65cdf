//! Finding sealed roots on disk: expanding discovery patterns (SPEC §Standalone
//! Tool Verification Set) and locating the root of a recorded bundle key.
//!
//! Names are compared in NFC and exactly (case-sensitive), taken from directory
//! listings so that the true case and the true spelling on disk decide, never a
//! case-insensitive or normalising lookup by the OS. Symlinks are never
//! followed; directories are entered with `O_NOFOLLOW`.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use super::fs::{DirEntry, EntryKind, RawPath, list_dir, list_fresh_dir, nfc_name, open_dir_at};
use super::paths::BundleKey;
use super::pattern::{Pattern, segment_matches};

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

/// Directory listings made during one operation. Each directory is read at most
/// once per operation; a new operation starts with an empty cache, so nothing
/// is reused across verifications.
pub struct Listings<'a> {
    root: BorrowedFd<'a>,
    cache: HashMap<RawPath, std::rc::Rc<Vec<DirEntry>>>,
    /// Directories opened so far (each relative to its parent's descriptor,
    /// with `O_NOFOLLOW`), so that a deep path is opened one component at a
    /// time once, not from the root again for every listing.
    dirs: HashMap<RawPath, OwnedFd>,
}

impl<'a> Listings<'a> {
    pub fn new(root: BorrowedFd<'a>) -> Listings<'a> {
        Listings {
            root,
            cache: HashMap::new(),
            dirs: HashMap::new(),
        }
    }

    pub fn root(&self) -> BorrowedFd<'a> {
        self.root
    }

    /// Opens directory `dir` (and its parents) unless already open.
    fn ensure_open(&mut self, dir: &RawPath) -> io::Result<()> {
        let Some((name, parent)) = dir.0.split_last() else {
            return Ok(());
        };
        if self.dirs.contains_key(dir) {
            return Ok(());
        }
        let parent = RawPath(parent.to_vec());
        self.ensure_open(&parent)?;
        let parent_fd = match self.dirs.get(&parent) {
            Some(fd) => fd.as_fd(),
            None => self.root,
        };
        let fd = open_dir_at(parent_fd, name)?;
        self.dirs.insert(dir.clone(), fd);
        Ok(())
    }

    /// The entries of directory `dir` (a project-relative raw path).
    pub fn list(&mut self, dir: &RawPath) -> Result<std::rc::Rc<Vec<DirEntry>>, DiscoveryError> {
        if let Some(hit) = self.cache.get(dir) {
            return Ok(hit.clone());
        }
        // Keep the open descriptors bounded: a bundle with thousands of
        // directories must not run into RLIMIT_NOFILE (1024 by default).
        // Forgotten directories are reopened from their parents on demand.
        if !self.dirs.contains_key(dir) && self.dirs.len() >= MAX_OPEN_DIRS {
            self.dirs.clear();
        }
        let err = |source| DiscoveryError {
            dir: dir.clone(),
            source,
        };
        self.ensure_open(dir).map_err(err)?;
        // A directory this operation opened is read through its own
        // descriptor (fresh, offset 0); the project root's descriptor is
        // shared, so it is reopened for listing.
        let entries = match self.dirs.get(dir) {
            Some(fd) => list_fresh_dir(fd.as_fd()).map_err(err)?,
            None => list_dir(self.root).map_err(err)?,
        };
        let entries = std::rc::Rc::new(entries);
        self.cache.insert(dir.clone(), entries.clone());
        Ok(entries)
    }
}

/// Opens `path` below `root` one component at a time with `O_NOFOLLOW`.
pub fn open_dirs(root: BorrowedFd<'_>, path: &RawPath) -> io::Result<OwnedFd> {
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
    pub fn key_rule(&self) -> Option<super::paths::PathRule> {
        let text = self.raw.to_os_string().into_string().ok()?;
        BundleKey::parse(&format!("./{text}")).err()
    }

    /// Why no bundle key can name this root, for messages.
    pub fn reason(&self) -> String {
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
/// directory that cannot be listed counts as holding something.
pub fn has_trackable_entry(
    listings: &mut Listings<'_>,
    dir: &RawPath,
) -> Result<bool, DiscoveryError> {
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        // A directory that cannot be listed might hold files: count it as a
        // root (fail closed), so hashing reports the read error on it.
        let Ok(entries) = listings.list(&d) else {
            return Ok(true);
        };
        for entry in entries.iter() {
            if entry.name == ".git"
                || (d.0.is_empty() && entry.name == super::lockfile::LOCKFILE_NAME)
            {
                continue;
            }
            if entry.kind != EntryKind::Dir {
                return Ok(true);
            }
            stack.push(d.join(&entry.name));
        }
    }
    Ok(false)
}

/// Where the root of a recorded key is on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
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
pub fn locate(listings: &mut Listings<'_>, key: &BundleKey) -> Result<Located, DiscoveryError> {
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
