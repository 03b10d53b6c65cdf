//! Where a path of the view sits: ordinary, the project's lockfile, a
//! container on the way to sealed roots or surfaces, inside a sealed root, or
//! inside an agent artifact no sealed root covers. A pure function of the
//! lockfile's patterns and the path's names: it never reads the disk, so it
//! also classifies paths that do not exist yet (a file about to be created).

use std::ffi::OsStr;

use crate::surfaces::{self, ExtraRows, SurfaceClass, SurfaceRule};
use seal_core::fs::RawPath;
use seal_core::lockfile::Lockfile;
use seal_core::paths::{BundleKey, FilePath};

/// A path of the view: raw on-disk names, and their NFC (lossy) strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewPath {
    pub raw: RawPath,
    names: Vec<String>,
    /// False when a name is not UTF-8 (such a path can never be a bundle key).
    utf8: bool,
}

impl ViewPath {
    pub fn root() -> ViewPath {
        ViewPath {
            raw: RawPath::default(),
            names: Vec::new(),
            utf8: true,
        }
    }

    /// The view path of a project-relative raw path.
    pub fn of(raw: &RawPath) -> ViewPath {
        ViewPath::from_names(raw.0.iter().map(|n| n.as_os_str()))
    }

    /// The view path of `names`, from the project root down. Built in one
    /// pass: every request of the mount names its inode by this path, so
    /// building it name by name with [`ViewPath::child`] (a copy of the
    /// path so far at each step) would cost a quadratic number of copies.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a OsStr>) -> ViewPath {
        let names = names.into_iter();
        let room = names.size_hint().0;
        let mut path = ViewPath {
            raw: RawPath(Vec::with_capacity(room)),
            names: Vec::with_capacity(room),
            utf8: true,
        };
        for name in names {
            path.push(name);
        }
        path
    }

    pub fn child(&self, name: &OsStr) -> ViewPath {
        let mut raw = Vec::with_capacity(self.raw.0.len() + 1);
        raw.extend_from_slice(&self.raw.0);
        let mut names = Vec::with_capacity(self.names.len() + 1);
        names.extend_from_slice(&self.names);
        let mut path = ViewPath {
            raw: RawPath(raw),
            names,
            utf8: self.utf8,
        };
        path.push(name);
        path
    }

    /// Appends one name (the one place a raw name gets its NFC string).
    fn push(&mut self, name: &OsStr) {
        self.utf8 &= name.to_str().is_some();
        self.names
            .push(seal_core::paths::nfc(&name.to_string_lossy()));
        self.raw.0.push(name.to_os_string());
    }

    pub fn parent(&self) -> Option<ViewPath> {
        if self.names.is_empty() {
            return None;
        }
        Some(self.prefix(self.names.len() - 1))
    }

    /// The last name (none for the project root).
    pub fn name(&self) -> Option<&OsStr> {
        self.raw.0.last().map(|n| n.as_os_str())
    }

    pub fn depth(&self) -> usize {
        self.names.len()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.names.iter().map(String::as_str)
    }

    /// `./a/b` for logs (lossy for names that are not UTF-8).
    pub fn display(&self) -> String {
        if self.names.is_empty() {
            ".".to_string()
        } else {
            format!("./{}", self.names.join("/"))
        }
    }

    /// The first `n` segments.
    pub fn prefix(&self, n: usize) -> ViewPath {
        let raw = RawPath(self.raw.0[..n].to_vec());
        let utf8 = raw.0.iter().all(|x| x.to_str().is_some());
        ViewPath {
            raw,
            names: self.names[..n].to_vec(),
            utf8,
        }
    }

    /// The path below the first `n` segments as a tracked file path (`.` when
    /// the path is the root itself).
    pub(crate) fn rel_from(&self, n: usize) -> Option<FilePath> {
        if self.names.len() == n {
            return Some(FilePath::single_file());
        }
        FilePath::parse(&self.names[n..].join("/")).ok()
    }

    /// The names below the first `n` segments joined by `/` (empty at `n`).
    pub(crate) fn rel_text(&self, n: usize) -> String {
        self.names[n.min(self.names.len())..].join("/")
    }
}

/// Where a path sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Ordinary,
    /// The project's own `seal.json`: never a sealed root (SPEC §What Gets
    /// Hashed), always shown, never changed through the view.
    Lockfile,
    /// A directory on the way down to sealed roots or surfaces.
    Container,
    /// Inside (or at) the sealed root `key`, which is the first `root_len`
    /// segments of the path.
    Sealed {
        key: BundleKey,
        root_len: usize,
    },
    /// Inside (or at) an agent artifact no sealed root covers.
    Artifact {
        root_len: usize,
        rule: SurfaceRule,
    },
    /// Inside (or at) a root a discovery pattern produces whose name cannot
    /// be a bundle key: it is unverified.
    Unmappable {
        root_len: usize,
    },
}

impl Place {
    /// How many leading segments form the root, for places inside a root.
    pub fn root_len(&self) -> Option<usize> {
        match self {
            Place::Sealed { root_len, .. }
            | Place::Artifact { root_len, .. }
            | Place::Unmappable { root_len } => Some(*root_len),
            Place::Ordinary | Place::Lockfile | Place::Container => None,
        }
    }

    /// Whether the place belongs to a root that verification decides about.
    pub fn is_gated(&self) -> bool {
        self.root_len().is_some()
    }
}

/// Classifies `path` against the lockfile's patterns, then the built-in
/// surfaces (lockfile roots win: a key covers whatever surface it sits in).
pub fn place(lock: &Lockfile, path: &ViewPath) -> Place {
    place_with(lock, &ExtraRows::default(), path)
}

/// [`place`] with `extra` surface rows (a machine policy's) after the
/// built-in ones.
pub fn place_with(lock: &Lockfile, extra: &ExtraRows, path: &ViewPath) -> Place {
    if path.depth() == 1 && path.raw.0[0] == seal_core::lockfile::LOCKFILE_NAME {
        return Place::Lockfile;
    }
    for pattern in &lock.discovery {
        if let Some(root_len) = pattern.root_len_within(path.names()) {
            let root = path.prefix(root_len);
            if !root.utf8 {
                return Place::Unmappable { root_len };
            }
            return match BundleKey::from_segments(&path.names[..root_len]) {
                Ok(key) => Place::Sealed { key, root_len },
                Err(_) => Place::Unmappable { root_len },
            };
        }
    }
    if lock
        .discovery
        .iter()
        .any(|p| p.passes_through(path.names()))
    {
        return Place::Container;
    }
    let names: Vec<&str> = path.names().collect();
    match surfaces::classify_with(&names, extra) {
        SurfaceClass::Outside => Place::Ordinary,
        SurfaceClass::Container => Place::Container,
        SurfaceClass::Artifact { root_len, rule } => Place::Artifact { root_len, rule },
    }
}
