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
//! A hard-linked ordinary file is one inode under all its names, as on the
//! disk: a lookup of a second name of a file whose inode lives (and holds
//! its first name) counts the name as another of that inode
//! ([`Inodes::share`]; the view decides when a name may share). One name is
//! the inode's path; removing or renaming a name moves only that name.
//!
//! A node stores only its parent's number and its own name (the full path is
//! rebuilt on demand), so the table stays small: the daemon's memory must not
//! grow with the depth of the paths the kernel remembers.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};

use seal_gate::ViewPath;

/// The root directory's inode number (FUSE_ROOT_ID).
pub const ROOT: u64 = 1;

/// Where the view's own numbers start: above the numbers disks give in
/// practice (a file whose disk number is not below gets one of these).
const COUNTED_FROM: u64 = 1 << 48;

struct Inode {
    parent: u64,
    name: OsString,
    lookups: u64,
    /// Live nodes whose parent this is (counted once per name a node has
    /// in it): a parent outlives its children, so that their paths can
    /// always be rebuilt.
    children: u64,
    /// The file's other names the kernel learned (hard links), besides
    /// `parent` and `name`: empty but for shared inodes.
    other_names: Vec<(u64, OsString)>,
    /// A digest of the attributes the view answered its last change of
    /// this inode's attributes with (0: none), see `View::setattr`.
    told: u64,
}

/// Inodes by number and by (parent, name).
pub struct Inodes {
    nodes: HashMap<u64, Inode>,
    by_name: HashMap<(u64, OsString), u64>,
    next: u64,
}

impl Default for Inodes {
    fn default() -> Self {
        let mut nodes = HashMap::new();
        nodes.insert(
            ROOT,
            Inode {
                parent: ROOT,
                name: OsString::new(),
                lookups: 1,
                children: 0,
                other_names: Vec::new(),
                told: 0,
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
            Inode {
                parent,
                name: key.1.clone(),
                lookups: 1,
                children: 0,
                other_names: Vec::new(),
                told: 0,
            },
        );
        if let Some(p) = self.nodes.get_mut(&parent) {
            p.children += 1;
        }
        self.by_name.insert(key, ino);
        ino
    }

    /// Records the digest of the attributes the kernel is given for `ino`
    /// in answer to a change of them.
    pub fn tell(&mut self, ino: u64, digest: u64) {
        if let Some(node) = self.nodes.get_mut(&ino) {
            node.told = digest;
        }
    }

    /// The digest of the attributes the kernel was given for `ino` in
    /// answer to the last change of them (0: none).
    pub fn told(&self, ino: u64) -> u64 {
        self.nodes.get(&ino).map_or(0, |n| n.told)
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

    /// Counts one lookup of `name` in `parent` as another name of the live
    /// inode `ino` (a hard link of its file). Nothing is counted (false)
    /// when `name` has an inode already, or `ino` is not live under its
    /// own name: a retired inode never takes a name again.
    pub fn share(&mut self, parent: u64, name: &OsStr, ino: u64) -> bool {
        let key = (parent, name.to_os_string());
        if ino == ROOT || self.by_name.contains_key(&key) || !self.nodes.contains_key(&parent) {
            return false;
        }
        let Some(node) = self.nodes.get_mut(&ino) else {
            return false;
        };
        if self.by_name.get(&(node.parent, node.name.clone())) != Some(&ino) {
            return false;
        }
        node.lookups += 1;
        node.other_names.push(key.clone());
        if let Some(p) = self.nodes.get_mut(&parent) {
            p.children += 1;
        }
        self.by_name.insert(key, ino);
        true
    }

    /// Whether `ino` is a live inode (of any kind).
    pub fn is_live(&self, ino: u64) -> bool {
        self.nodes.contains_key(&ino)
    }

    /// Whether `ino` has other names (a hard-linked file sharing it).
    pub fn is_shared(&self, ino: u64) -> bool {
        self.nodes
            .get(&ino)
            .is_some_and(|n| !n.other_names.is_empty())
    }

    /// The other names of a shared inode, with their paths (none for any
    /// other inode).
    pub fn other_names(&self, ino: u64) -> Vec<(u64, OsString, ViewPath)> {
        let Some(node) = self.nodes.get(&ino) else {
            return Vec::new();
        };
        node.other_names
            .iter()
            .filter_map(|(parent, name)| {
                let path = self.path(*parent)?.child(name);
                Some((*parent, name.clone(), path))
            })
            .collect()
    }

    /// Makes `name` in `parent`, one of the other names of `ino`, its path
    /// (the name it had is kept as another).
    pub fn make_path(&mut self, ino: u64, parent: u64, name: &OsStr) {
        let Some(node) = self.nodes.get_mut(&ino) else {
            return;
        };
        let Some(other) = node
            .other_names
            .iter_mut()
            .find(|(p, n)| *p == parent && n == name)
        else {
            return;
        };
        *other = (
            std::mem::replace(&mut node.parent, parent),
            std::mem::replace(&mut node.name, name.to_os_string()),
        );
    }

    /// Detaches `ino` from every name it has: the next lookup of any of
    /// them creates a new inode, while the old one lives on (with its path)
    /// until the kernel forgets it.
    pub fn retire(&mut self, ino: u64) {
        if ino == ROOT {
            return;
        }
        let Some(node) = self.nodes.get_mut(&ino) else {
            return;
        };
        let others = std::mem::take(&mut node.other_names);
        let key = (node.parent, node.name.clone());
        if self.by_name.get(&key) == Some(&ino) {
            self.by_name.remove(&key);
        }
        for other in others {
            if self.by_name.get(&other) == Some(&ino) {
                self.by_name.remove(&other);
            }
            self.leave(other.0);
        }
    }

    /// `name` in `parent` no longer names its inode's file (removed or
    /// replaced): an inode with other names keeps those (one becomes its
    /// path); one without lives on nameless, like a retired one.
    pub fn unname(&mut self, parent: u64, name: &OsStr) {
        let key = (parent, name.to_os_string());
        if let Some(ino) = self.by_name.remove(&key) {
            self.drop_name(ino, &key);
        }
    }

    /// Takes the name `key` (already out of `by_name`) from `ino`.
    fn drop_name(&mut self, ino: u64, key: &(u64, OsString)) {
        let Some(node) = self.nodes.get_mut(&ino) else {
            return;
        };
        let left = if node.parent == key.0 && node.name == key.1 {
            if node.other_names.is_empty() {
                // Nameless: its path stays what it was.
                return;
            }
            let (parent, name) = node.other_names.swap_remove(0);
            node.parent = parent;
            node.name = name;
            key.0
        } else if let Some(i) = node.other_names.iter().position(|k| k == key) {
            node.other_names.swap_remove(i);
            key.0
        } else {
            return;
        };
        self.leave(left);
    }

    /// A node's name left directory `dir`: one child fewer there.
    fn leave(&mut self, dir: u64) {
        if let Some(p) = self.nodes.get_mut(&dir) {
            p.children = p.children.saturating_sub(1);
        }
        self.collect(dir);
    }

    /// Follows a rename: the inode of `name` in `parent` now stands for
    /// `newname` in `newparent`; one that stood there loses its name (or,
    /// for an exchange, takes the old one). Two names of one shared inode
    /// stay as they are (rename(2) does nothing then).
    pub fn rename(
        &mut self,
        parent: u64,
        name: &OsStr,
        newparent: u64,
        newname: &OsStr,
        exchange: bool,
    ) {
        let from = (parent, name.to_os_string());
        let to = (newparent, newname.to_os_string());
        let moving = self.by_name.get(&from).copied();
        let displaced = self.by_name.get(&to).copied();
        if moving.is_some() && moving == displaced {
            return;
        }
        self.by_name.remove(&from);
        self.by_name.remove(&to);
        match (exchange, displaced) {
            (true, Some(ino)) => self.rename_name(ino, &to, parent, name),
            (false, Some(ino)) => self.drop_name(ino, &to),
            (_, None) => {}
        }
        if let Some(ino) = moving {
            self.rename_name(ino, &from, newparent, newname);
        }
    }

    /// Gives the name `old` of `ino` a new place, keeping the child counts
    /// of both parents.
    fn rename_name(&mut self, ino: u64, old: &(u64, OsString), parent: u64, name: &OsStr) {
        let Some(node) = self.nodes.get_mut(&ino) else {
            return;
        };
        let new = (parent, name.to_os_string());
        let old_parent = match node.other_names.iter_mut().find(|k| *k == old) {
            Some(other) => std::mem::replace(other, new.clone()).0,
            // Its path (or, should the table have lost track, taken as such).
            None => {
                let old_parent = node.parent;
                node.parent = parent;
                node.name = new.1.clone();
                old_parent
            }
        };
        self.by_name.insert(new, ino);
        if old_parent != parent {
            if let Some(p) = self.nodes.get_mut(&parent) {
                p.children += 1;
            }
            self.leave(old_parent);
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
        seal_gate::memory::shrink_if_sparse(&mut self.nodes);
        seal_gate::memory::shrink_if_sparse(&mut self.by_name);
        gone
    }

    /// Removes `ino` if nothing holds it any more, then its parents likewise.
    fn collect(&mut self, ino: u64) {
        let mut candidates = vec![ino];
        while let Some(ino) = candidates.pop() {
            if ino == ROOT {
                continue;
            }
            let Some(node) = self.nodes.get(&ino) else {
                continue;
            };
            if node.lookups > 0 || node.children > 0 {
                continue;
            }
            let Some(node) = self.nodes.remove(&ino) else {
                continue;
            };
            for key in std::iter::once((node.parent, node.name)).chain(node.other_names) {
                if self.by_name.get(&key) == Some(&ino) {
                    self.by_name.remove(&key);
                }
                if let Some(p) = self.nodes.get_mut(&key.0) {
                    p.children = p.children.saturating_sub(1);
                    candidates.push(key.0);
                }
            }
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

    /// How many inodes the table holds.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.nodes.len()
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

    #[test]
    fn hard_links_share_one_inode_and_each_name_goes_its_own_way() {
        let mut t = Inodes::default();
        let a = t.remember(ROOT, OsStr::new("a"), 0);
        let d = t.remember(ROOT, OsStr::new("d"), 0);
        let f = t.remember(a, OsStr::new("f"), 500);
        assert!(t.share(d, OsStr::new("g"), f), "a second name of the file");
        assert!(!t.share(d, OsStr::new("g"), f), "a name is counted once");
        assert_eq!(t.peek(d, OsStr::new("g")), Some(f));
        assert_eq!(t.path(f).unwrap().display(), "./a/f");
        assert_eq!(t.other_names(f).len(), 1);
        // The first name goes: the other becomes the path.
        t.unname(a, OsStr::new("f"));
        assert_eq!(t.peek(a, OsStr::new("f")), None);
        assert_eq!(t.path(f).unwrap().display(), "./d/g");
        assert!(t.other_names(f).is_empty());
        // Renamed, the remaining name moves; a name given back is shared again.
        t.rename(d, OsStr::new("g"), a, OsStr::new("h"), false);
        assert_eq!(t.path(f).unwrap().display(), "./a/h");
        assert!(t.share(d, OsStr::new("g"), f));
        // Renaming one name of the file onto another does nothing (rename(2)).
        t.rename(d, OsStr::new("g"), a, OsStr::new("h"), false);
        assert_eq!(t.peek(d, OsStr::new("g")), Some(f));
        assert_eq!(t.peek(a, OsStr::new("h")), Some(f));
        // A name of it moved over another file's: that one loses its name.
        let x = t.remember(ROOT, OsStr::new("x"), 0);
        t.rename(d, OsStr::new("g"), ROOT, OsStr::new("x"), false);
        assert_eq!(t.peek(ROOT, OsStr::new("x")), Some(f));
        assert_eq!(t.peek(d, OsStr::new("g")), None);
        assert_eq!(
            t.path(x).unwrap().display(),
            "./x",
            "the displaced keeps its path"
        );
        // An exchange swaps one name of it with another file's.
        let y = t.remember(d, OsStr::new("y"), 0);
        t.rename(ROOT, OsStr::new("x"), d, OsStr::new("y"), true);
        assert_eq!(t.peek(d, OsStr::new("y")), Some(f));
        assert_eq!(t.peek(ROOT, OsStr::new("x")), Some(y));
        assert_eq!(t.path(f).unwrap().display(), "./a/h");
        assert_eq!(t.other_names(f)[0].2.display(), "./d/y");
        // The other name becomes the path on request.
        t.make_path(f, d, OsStr::new("y"));
        assert_eq!(t.path(f).unwrap().display(), "./d/y");
        assert_eq!(t.other_names(f)[0].2.display(), "./a/h");
        // Everything is collected once the kernel forgets: the parents of
        // every name outlive the inode.
        t.forget(a, 1);
        t.forget(d, 1);
        t.forget(x, 1);
        t.forget(y, 1);
        assert!(t.path(a).is_some() && t.path(d).is_some());
        assert!(!t.forget(f, 2));
        assert!(t.forget(f, 1), "one lookup per name it was counted under");
        assert_eq!(t.len(), 1, "only the root is left");
        assert!(t.below(ROOT).is_empty());
    }

    #[test]
    fn a_retired_shared_inode_loses_every_name_and_takes_none_again() {
        let mut t = Inodes::default();
        let f = t.remember(ROOT, OsStr::new("f"), 500);
        assert!(t.share(ROOT, OsStr::new("g"), f));
        t.retire(f);
        assert_eq!(t.peek(ROOT, OsStr::new("f")), None);
        assert_eq!(t.peek(ROOT, OsStr::new("g")), None);
        assert!(
            !t.share(ROOT, OsStr::new("g"), f),
            "retired: never shared again"
        );
        assert_eq!(t.path(f).unwrap().display(), "./f", "it keeps its path");
        // Each name gets an inode of its own again.
        let g = t.remember(ROOT, OsStr::new("g"), 500);
        assert_ne!(g, f);
        // The root never shares.
        assert!(!t.share(ROOT, OsStr::new("r"), ROOT));
        // Forgotten under both names it was counted by, it is gone.
        assert!(t.forget(f, 2));
        assert!(t.path(f).is_none());
        assert_eq!(t.peek(ROOT, OsStr::new("g")), Some(g));
    }

    /// What the kernel does to the table, as the view passes it on.
    #[derive(Debug, Clone)]
    enum Op {
        /// A lookup of a file name (the disk's number `disk`): shared with
        /// a live inode of that number when it may, as the view does.
        Lookup {
            dir: usize,
            name: usize,
            disk: u64,
        },
        Unname {
            dir: usize,
            name: usize,
        },
        Rename {
            from: (usize, usize),
            to: (usize, usize),
            exchange: bool,
        },
        Retire {
            disk: u64,
        },
        Forget {
            pick: usize,
            n: u64,
        },
        MakePath {
            disk: u64,
            pick: usize,
        },
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let place = (0..3usize, 0..4usize);
        prop_oneof![
            4 => (0..3usize, 0..4usize, 500..504u64)
                .prop_map(|(dir, name, disk)| Op::Lookup { dir, name, disk }),
            1 => place.clone().prop_map(|(dir, name)| Op::Unname { dir, name }),
            2 => (place.clone(), place, any::<bool>())
                .prop_map(|(from, to, exchange)| Op::Rename { from, to, exchange }),
            1 => (500..504u64).prop_map(|disk| Op::Retire { disk }),
            2 => (0..64usize, 1..3u64).prop_map(|(pick, n)| Op::Forget { pick, n }),
            1 => (500..504u64, 0..4usize).prop_map(|(disk, pick)| Op::MakePath { disk, pick }),
        ]
    }

    /// Every name leads to an inode that has it; every inode's names lead
    /// back to it; each directory counts exactly the names of live inodes
    /// in it; every path can be rebuilt; lookups are the kernel's.
    fn check(t: &Inodes, kernel: &HashMap<u64, u64>) {
        for ((parent, name), ino) in &t.by_name {
            let node = t.nodes.get(ino).expect("a name of a gone inode");
            let key = (*parent, name.clone());
            assert!(
                (node.parent, node.name.clone()) == key || node.other_names.contains(&key),
                "{key:?} -> {ino} is none of its names"
            );
        }
        let mut children: HashMap<u64, u64> = HashMap::new();
        for (ino, node) in &t.nodes {
            if *ino == ROOT {
                continue;
            }
            *children.entry(node.parent).or_default() += 1;
            for key in &node.other_names {
                assert_eq!(t.by_name.get(key), Some(ino), "{key:?} of {ino}");
                *children.entry(key.0).or_default() += 1;
            }
            assert!(t.path(*ino).is_some(), "the path of {ino}");
            assert_eq!(node.lookups, kernel.get(ino).copied().unwrap_or(0), "{ino}");
        }
        for (ino, node) in &t.nodes {
            assert_eq!(
                node.children,
                children.get(ino).copied().unwrap_or(0),
                "{ino}"
            );
        }
        for (ino, n) in kernel {
            assert!(*n == 0 || t.nodes.contains_key(ino), "{ino} is held");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, failure_persistence: None, ..Default::default() })]

        #[test]
        fn the_table_stays_consistent_and_is_collected_once_forgotten(
            ops in proptest::collection::vec(op(), 1..60)
        ) {
            let mut t = Inodes::default();
            let mut kernel: HashMap<u64, u64> = HashMap::new();
            let a = t.remember(ROOT, OsStr::new("A"), 0);
            let b = t.remember(ROOT, OsStr::new("B"), 0);
            kernel.insert(a, 1);
            kernel.insert(b, 1);
            let dirs = [ROOT, a, b];
            let name = |i: usize| OsString::from(format!("n{i}"));
            for op in &ops {
                // The kernel reaches a directory only while it holds it.
                let gone = |d: usize| d != 0 && kernel.get(&dirs[d]).is_none_or(|n| *n == 0);
                match op.clone() {
                    Op::Lookup { dir, .. } | Op::Unname { dir, .. } if gone(dir) => continue,
                    Op::Rename { from, to, .. } if gone(from.0) || gone(to.0) => continue,
                    Op::Lookup { dir, name: n, disk } => {
                        let (dir, n) = (dirs[dir], name(n));
                        let ino = match t.peek(dir, &n) {
                            Some(_) => t.remember(dir, &n, disk),
                            None if t.share(dir, &n, disk) => disk,
                            None => t.remember(dir, &n, disk),
                        };
                        *kernel.entry(ino).or_default() += 1;
                    }
                    Op::Unname { dir, name: n } => t.unname(dirs[dir], &name(n)),
                    Op::Rename { from, to, exchange } => t.rename(
                        dirs[from.0],
                        &name(from.1),
                        dirs[to.0],
                        &name(to.1),
                        exchange,
                    ),
                    Op::Retire { disk } => t.retire(disk),
                    Op::Forget { pick, n } => {
                        let held: Vec<u64> = {
                            let mut v: Vec<u64> =
                                kernel.iter().filter(|(_, c)| **c > 0).map(|(i, _)| *i).collect();
                            v.sort();
                            v
                        };
                        if let Some(&ino) = held.get(pick % held.len().max(1)) {
                            let count = kernel.get_mut(&ino).unwrap();
                            let n = n.min(*count);
                            *count -= n;
                            t.forget(ino, n);
                        }
                    }
                    Op::MakePath { disk, pick } => {
                        if let Some((parent, n, _)) = t.other_names(disk).get(pick).cloned() {
                            t.make_path(disk, parent, &n);
                            proptest::prop_assert_eq!(t.path(disk).and_then(|p| p.name().map(OsStr::to_os_string)), Some(n));
                        }
                    }
                }
                check(&t, &kernel);
            }
            // The kernel forgets everything: nothing but the root is left.
            let held: Vec<(u64, u64)> = kernel.iter().map(|(i, n)| (*i, *n)).collect();
            for (ino, n) in held {
                t.forget(ino, n);
                kernel.insert(ino, 0);
                check(&t, &kernel);
            }
            proptest::prop_assert_eq!(t.len(), 1);
            proptest::prop_assert!(t.by_name.is_empty());
        }
    }
}
