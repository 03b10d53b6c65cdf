//! Inode numbers for view paths. The view is path-based: an inode stands for a
//! project-relative path, is created by a lookup, counted per lookup, and
//! dropped when the kernel forgets it. Numbers are never reused during a
//! mount, so a forgotten number can never alias another path.

use std::collections::HashMap;

use crate::core::fs::RawPath;
use crate::gate::ViewPath;

/// The root directory's inode number (FUSE_ROOT_ID).
pub const ROOT: u64 = 1;

struct Node {
    path: ViewPath,
    lookups: u64,
}

/// Inodes by number and by path.
pub struct Inodes {
    nodes: HashMap<u64, Node>,
    by_path: HashMap<RawPath, u64>,
    next: u64,
}

impl Default for Inodes {
    fn default() -> Self {
        let mut nodes = HashMap::new();
        nodes.insert(
            ROOT,
            Node {
                path: ViewPath::root(),
                lookups: 1,
            },
        );
        let mut by_path = HashMap::new();
        by_path.insert(RawPath::default(), ROOT);
        Inodes {
            nodes,
            by_path,
            next: ROOT + 1,
        }
    }
}

impl Inodes {
    pub fn path(&self, ino: u64) -> Option<ViewPath> {
        self.nodes.get(&ino).map(|n| n.path.clone())
    }

    /// The number of `path` if the kernel knows it.
    pub fn peek(&self, path: &RawPath) -> Option<u64> {
        self.by_path.get(path).copied()
    }

    /// Counts one lookup of `path`, creating its inode when new.
    pub fn remember(&mut self, path: &ViewPath) -> u64 {
        if let Some(&ino) = self.by_path.get(&path.raw) {
            if let Some(node) = self.nodes.get_mut(&ino) {
                node.lookups += 1;
            }
            return ino;
        }
        let ino = self.next;
        self.next += 1;
        self.nodes.insert(
            ino,
            Node {
                path: path.clone(),
                lookups: 1,
            },
        );
        self.by_path.insert(path.raw.clone(), ino);
        ino
    }

    /// Detaches `ino` from its path: the next lookup of the path creates a new
    /// inode, while the old one lives on until the kernel forgets it.
    pub fn retire(&mut self, ino: u64) {
        if ino == ROOT {
            return;
        }
        if let Some(node) = self.nodes.get(&ino) {
            if self.by_path.get(&node.path.raw) == Some(&ino) {
                self.by_path.remove(&node.path.raw);
            }
        }
    }

    /// Drops `n` lookups of `ino`; the inode goes away at zero (then returns
    /// true).
    pub fn forget(&mut self, ino: u64, n: u64) -> bool {
        if ino == ROOT {
            return false;
        }
        let Some(node) = self.nodes.get_mut(&ino) else {
            return false;
        };
        node.lookups = node.lookups.saturating_sub(n);
        if node.lookups > 0 {
            return false;
        }
        let path = node.path.raw.clone();
        self.nodes.remove(&ino);
        if self.by_path.get(&path) == Some(&ino) {
            self.by_path.remove(&path);
        }
        true
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn lookups_are_counted_and_numbers_never_reused() {
        let mut t = Inodes::default();
        let a = ViewPath::root().child(OsStr::new("a"));
        let ino = t.remember(&a);
        assert_eq!(t.remember(&a), ino);
        t.forget(ino, 1);
        assert!(t.path(ino).is_some());
        t.forget(ino, 1);
        assert!(t.path(ino).is_none());
        let again = t.remember(&a);
        assert_ne!(again, ino);
        t.forget(ROOT, 100);
        assert!(t.path(ROOT).is_some());
    }
}
