//! The recorded `files` of a bundle as a tree of names, so that a walk can ask
//! "may this directory hold this name?" in time proportional to the name, not
//! to its depth. Built once per verification, in time linear in the recorded
//! paths; used to stop a verification at the first name the record cannot
//! hold (`AfterProof`).

use std::collections::{BTreeMap, HashMap};

use super::digest::Digest;
use super::paths::FilePath;

/// A directory of the recorded tree.
#[derive(Default)]
struct Dir<'a> {
    subdirs: HashMap<&'a str, u32>,
    files: HashMap<&'a str, u32>,
}

/// The recorded tree of one bundle. A regular-file root is recorded as the
/// single file `.` of the root directory.
pub(crate) struct Expected<'a> {
    dirs: Vec<Dir<'a>>,
    digests: Vec<&'a Digest>,
}

impl<'a> Expected<'a> {
    /// The root directory.
    pub(crate) const ROOT: u32 = 0;

    pub(crate) fn new(files: &'a BTreeMap<FilePath, Digest>) -> Expected<'a> {
        let mut dirs = vec![Dir::default()];
        let mut digests = Vec::with_capacity(files.len());
        for (path, digest) in files {
            let mut dir = Self::ROOT;
            let mut segments = path.as_str().split('/');
            let last = segments.next_back().unwrap_or_default();
            for segment in segments {
                let next = dirs.len() as u32;
                dir = *dirs[dir as usize].subdirs.entry(segment).or_insert(next);
                if dir == next {
                    dirs.push(Dir::default());
                }
            }
            dirs[dir as usize].files.insert(last, digests.len() as u32);
            digests.push(digest);
        }
        Expected { dirs, digests }
    }

    /// The recorded subdirectory `name` of `dir`.
    pub(crate) fn subdir(&self, dir: u32, name: &str) -> Option<u32> {
        self.dirs[dir as usize].subdirs.get(name).copied()
    }

    /// The index of recorded file `name` of `dir`.
    pub(crate) fn file(&self, dir: u32, name: &str) -> Option<u32> {
        self.dirs[dir as usize].files.get(name).copied()
    }

    pub(crate) fn digest(&self, file: u32) -> Digest {
        *self.digests[file as usize]
    }

    /// Number of recorded files (indices are `0..len`).
    pub(crate) fn len(&self) -> usize {
        self.digests.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_by_directory() {
        let mut files = BTreeMap::new();
        for (p, b) in [("a/b/c", "1"), ("a/d", "2"), ("e", "3")] {
            files.insert(FilePath::parse(p).unwrap(), Digest::of(b.as_bytes()));
        }
        let x = Expected::new(&files);
        assert_eq!(x.len(), 3);
        let a = x.subdir(Expected::ROOT, "a").unwrap();
        let b = x.subdir(a, "b").unwrap();
        assert_eq!(x.digest(x.file(b, "c").unwrap()), Digest::of(b"1"));
        assert_eq!(x.digest(x.file(a, "d").unwrap()), Digest::of(b"2"));
        assert!(x.file(Expected::ROOT, "e").is_some());
        assert!(x.file(Expected::ROOT, "a").is_none());
        assert!(x.subdir(Expected::ROOT, "e").is_none());
        assert!(x.subdir(a, "B").is_none(), "exact case only");
    }

    #[test]
    fn a_single_file_root_is_the_file_dot() {
        let mut files = BTreeMap::new();
        files.insert(FilePath::single_file(), Digest::of(b"x"));
        let x = Expected::new(&files);
        assert!(x.file(Expected::ROOT, ".").is_some());
    }
}
