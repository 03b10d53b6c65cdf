//! Inode numbers for view paths. The view is path-based: an inode stands for
//! a name in its parent directory, is created by a lookup, counted per
//! lookup, and dropped when the kernel forgets it. An inode is numbered as
//! the disk numbers the file under its name, unless another live inode of
//! the view has that number (a second name of the same file, or a name
//! whose old inode lives on): then it gets a number of its own, counted
//! from 2^48, never reused. So a file keeps its number when the kernel
//! forgets it and looks it up again (tools such as git compare inode
//! numbers between runs), and a number is only ever reused once the kernel
//! has forgotten it, which is when FUSE allows it.
//!
//! A node stores only its parent's number and its own name (the full path is
//! rebuilt on demand), so the table stays small: the daemon's memory must not
//! grow with the depth of the paths the kernel remembers.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};

use crate::gate::ViewPath;

/// The root directory's inode number (FUSE_ROOT_ID).
pub const ROOT: u64 = 1;

/// Where the view's own numbers start: above the numbers disks give in
/// practice (a file whose disk number is not below gets one of these).
const COUNTED_FROM: u64 = 1 << 48;

struct Node {
    parent: u64,
    name: OsString,
    lookups: u64,
    /// Live nodes whose parent this is: a parent outlives its children, so
    /// that their paths can always be rebuilt.
    children: u64,
}

/// Inodes by number and by (parent, name).
pub struct Inodes {
    nodes: HashMap<u64, Node>,
    by_name: HashMap<(u64, OsString), u64>,
    next: u64,
}

impl Default for Inodes {
    fn default() -> Self {
        let mut nodes = HashMap::new();
        nodes.insert(
            ROOT,
            Node {
                parent: ROOT,
                name: OsString::new(),
                lookups: 1,
                children: 0,
            },
        );
        Inodes {
            nodes,
            by_name: HashMap::new(),
            next: COUNTED_FROM,
        }
    }
}

impl Inodes {
    /// The view path of `ino`.
    pub fn path(&self, ino: u64) -> Option<ViewPath> {
        let mut names: Vec<&OsStr> = Vec::new();
        let mut at = ino;
        while at != ROOT {
            let node = self.nodes.get(&at)?;
            names.push(&node.name);
            at = node.parent;
        }
        Some(ViewPath::from_names(names.into_iter().rev()))
    }

    /// The number of `name` in `parent`, if the kernel knows it.
    pub fn peek(&self, parent: u64, name: &OsStr) -> Option<u64> {
        self.by_name.get(&(parent, name.to_os_string())).copied()
    }

    /// The parent of `ino` (the root is its own parent).
    pub fn parent(&self, ino: u64) -> Option<u64> {
        self.nodes.get(&ino).map(|n| n.parent)
    }

    /// Counts one lookup of `name` in `parent`, creating its inode when new
    /// (numbered `disk`, the disk's inode number of the file, when free).
    pub fn remember(&mut self, parent: u64, name: &OsStr, disk: u64) -> u64 {
        let key = (parent, name.to_os_string());
        if let Some(&ino) = self.by_name.get(&key) {
            if let Some(node) = self.nodes.get_mut(&ino) {
                node.lookups += 1;
            }
            return ino;
        }
        let ino = self.number_for(disk);
        self.nodes.insert(
            ino,
            Node {
                parent,
                name: key.1.clone(),
                lookups: 1,
                children: 0,
            },
        );
        if let Some(p) = self.nodes.get_mut(&parent) {
            p.children += 1;
        }
        self.by_name.insert(key, ino);
        ino
    }

    /// The number of a new inode for the disk's inode `disk`.
    fn number_for(&mut self, disk: u64) -> u64 {
        if disk > ROOT && disk < COUNTED_FROM && !self.nodes.contains_key(&disk) {
            return disk;
        }
        let ino = self.next;
        self.next += 1;
        ino
    }

    /// Detaches `ino` from its name: the next lookup of the name creates a
    /// new inode, while the old one lives on until the kernel forgets it.
    pub fn retire(&mut self, ino: u64) {
        if ino == ROOT {
            return;
        }
        if let Some(node) = self.nodes.get(&ino) {
            let key = (node.parent, node.name.clone());
            if self.by_name.get(&key) == Some(&ino) {
                self.by_name.remove(&key);
            }
        }
    }

    /// Follows a rename: the inode of `name` in `parent` now stands for
    /// `newname` in `newparent`; one that stood there loses its name (or,
    /// for an exchange, takes the old one).
    pub fn rename(
        &mut self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        exchange: bool,
    ) {
        let moving = self.by_name.remove(&(parent, name.to_os_string()));
        let displaced = self.by_name.remove(&(newparent, newname.to_os_string()));
        if let Some(ino) = moving {
            self.relink(ino, newparent, newname);
        }
        if let (true, Some(ino)) = (exchange, displaced) {
            self.relink(ino, parent, name);
        }
    }

    /// Gives `ino` a new place, keeping the child counts of both parents.
    fn relink(&mut self, ino: u64, parent: u64, name: &OsStr) {
        let Some(old_parent) = self.nodes.get(&ino).map(|n| n.parent) else {
            return;
        };
        if old_parent != parent {
            if let Some(p) = self.nodes.get_mut(&old_parent) {
                p.children = p.children.saturating_sub(1);
            }
            if let Some(p) = self.nodes.get_mut(&parent) {
                p.children += 1;
            }
        }
        if let Some(node) = self.nodes.get_mut(&ino) {
            node.parent = parent;
            node.name = name.to_os_string();
        }
        self.by_name.insert((parent, name.to_os_string()), ino);
        if old_parent != parent {
            self.collect(old_parent);
        }
    }

    /// Drops `n` lookups of `ino`; the inode goes away at zero (then returns
    /// true), once it has no live children.
    pub fn forget(&mut self, ino: u64, n: u64) -> bool {
        if ino == ROOT {
            return false;
        }
        let Some(node) = self.nodes.get_mut(&ino) else {
            return false;
        };
        node.lookups = node.lookups.saturating_sub(n);
        let gone = node.lookups == 0;
        self.collect(ino);
        crate::memory::shrink_if_sparse(&mut self.nodes);
        crate::memory::shrink_if_sparse(&mut self.by_name);
        gone
    }

    /// Removes `ino` if nothing holds it any more, then its parent likewise.
    fn collect(&mut self, mut ino: u64) {
        while ino != ROOT {
            let Some(node) = self.nodes.get(&ino) else {
                return;
            };
            if node.lookups > 0 || node.children > 0 {
                return;
            }
            let key = (node.parent, node.name.clone());
            let parent = node.parent;
            self.nodes.remove(&ino);
            if self.by_name.get(&key) == Some(&ino) {
                self.by_name.remove(&key);
            }
            match self.nodes.get_mut(&parent) {
                Some(p) => p.children = p.children.saturating_sub(1),
                None => return,
            }
            ino = parent;
        }
    }

    /// Every named entry below `ino`, at any depth: (parent, name, inode),
    /// parents before their children.
    pub fn below(&self, ino: u64) -> Vec<(u64, OsString, u64)> {
        let mut children: HashMap<u64, Vec<(&OsString, u64)>> = HashMap::new();
        for ((parent, name), child) in &self.by_name {
            children.entry(*parent).or_default().push((name, *child));
        }
        let mut out = Vec::new();
        let mut stack = vec![ino];
        while let Some(dir) = stack.pop() {
            for (name, child) in children.get(&dir).into_iter().flatten() {
                out.push((dir, (*name).clone(), *child));
                stack.push(*child);
            }
        }
        out
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

    #[test]
    fn a_file_keeps_its_disk_number_unless_another_live_inode_has_it() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 500);
        assert_eq!(a, 500);
        // A second name of the same file, while the first lives.
        let b = t.remember(ROOT, OsStr::new("b"), 500);
        assert!(b >= COUNTED_FROM, "{b}");
        assert!(t.forget(a, 1));
        // Forgotten and looked up again: the same number.
        assert_eq!(t.remember(ROOT, OsStr::new("a"), 500), 500);
        // A name whose old inode lives on gets another.
        t.retire(500);
        let fresh = t.remember(ROOT, OsStr::new("a"), 500);
        assert_ne!(fresh, 500);
        // The root's number and numbers beyond the disk's range are never
        // taken from the disk.
        assert!(t.remember(ROOT, OsStr::new("c"), ROOT) >= COUNTED_FROM);
        assert!(t.remember(ROOT, OsStr::new("d"), COUNTED_FROM + 7) >= COUNTED_FROM);
    }

    #[test]
    fn lookups_are_counted_and_counted_numbers_are_never_reused() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 0);
        assert_eq!(t.remember(ROOT, OsStr::new("a"), 0), a);
        t.forget(a, 1);
        assert!(t.path(a).is_some());
        assert!(t.forget(a, 1));
        assert!(t.path(a).is_none());
        let again = t.remember(ROOT, OsStr::new("a"), 0);
        assert_ne!(again, a);
        t.forget(ROOT, 100);
        assert!(t.path(ROOT).is_some());
    }

    #[test]
    fn paths_are_rebuilt_and_parents_outlive_children() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 0);
        let b = t.remember(a, OsStr::new("b"), 0);
        let c = t.remember(b, OsStr::new("c.md"), 0);
        assert_eq!(t.path(c).unwrap().display(), "./a/b/c.md");
        // The kernel forgets the parents first: they stay while c lives.
        t.forget(a, 1);
        t.forget(b, 1);
        assert_eq!(t.path(c).unwrap().display(), "./a/b/c.md");
        assert_eq!(t.len(), 4);
        t.forget(c, 1);
        assert_eq!(t.len(), 1, "everything collected once the child went");
    }

    #[test]
    fn renames_move_inodes_and_exchanges_swap_them() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 0);
        let d = t.remember(ROOT, OsStr::new("d"), 0);
        let x = t.remember(a, OsStr::new("x"), 0);
        let y = t.remember(d, OsStr::new("y"), 0);
        t.rename(a, OsStr::new("x"), d, OsStr::new("y"), false);
        assert_eq!(t.path(x).unwrap().display(), "./d/y");
        assert_eq!(t.peek(d, OsStr::new("y")), Some(x));
        assert_eq!(t.peek(a, OsStr::new("x")), None);
        assert_eq!(
            t.path(y).unwrap().display(),
            "./d/y",
            "the displaced keeps its path"
        );
        let z = t.remember(a, OsStr::new("z"), 0);
        t.rename(a, OsStr::new("z"), d, OsStr::new("y"), true);
        assert_eq!(t.path(z).unwrap().display(), "./d/y");
        assert_eq!(t.path(x).unwrap().display(), "./a/z");
        // Parents are collected once their moved children go.
        t.forget(a, 1);
        t.forget(x, 1);
        assert!(t.path(a).is_none());
    }

    #[test]
    fn below_lists_every_descendant_parents_first() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 0);
        let f = t.remember(ROOT, OsStr::new("f"), 0);
        let b = t.remember(a, OsStr::new("b"), 0);
        // A lower-numbered inode moved under a higher-numbered directory.
        t.rename(ROOT, OsStr::new("f"), b, OsStr::new("f"), false);
        let below = t.below(a);
        let inos: Vec<u64> = below.iter().map(|(_, _, i)| *i).collect();
        assert_eq!(inos, [b, f]);
        assert!(t.below(f).is_empty());
    }

    #[test]
    fn retired_inodes_keep_their_path_but_lose_their_name() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 0);
        t.retire(a);
        let fresh = t.remember(ROOT, OsStr::new("a"), 0);
        assert_ne!(fresh, a);
        assert_eq!(t.path(a).unwrap().display(), "./a");
        assert_eq!(t.peek(ROOT, OsStr::new("a")), Some(fresh));
        t.forget(a, 1);
        assert!(t.path(a).is_none());
        assert_eq!(
            t.peek(ROOT, OsStr::new("a")),
            Some(fresh),
            "the retired one does not take the new one's name"
        );
    }
}
