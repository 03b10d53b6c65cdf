//! The symlink rules: for links outside sealed roots and surfaces, and for
//! links at surface paths.
//!
//! Inside a sealed root a symlink makes the bundle a Mismatch (SPEC), so it is
//! never served. Elsewhere a symlink is shown only when following it cannot
//! reach project content without passing the gate:
//!
//! * a target that resolves (lexically, from the link's place in the view)
//!   inside the view is shown: the kernel follows it through the mount, and
//!   every step of that walk is a gated lookup;
//! * a target inside the real project directory (when the view is mounted
//!   elsewhere) is hidden: it would reach the ungated tree (an absolute link to
//!   the project path, or `../project/...` from a sibling mountpoint);
//! * a target under `/proc` or `/dev/fd` is hidden: magic links such as
//!   `/proc/self/root/...` can re-enter any path;
//! * any other target (a system path such as `/usr/bin/python3`) is shown.
//!
//! Under `seal run` the view is mounted at the project's own path, so the
//! first case covers every link into the project. See docs/SECURITY.md.
//!
//! **Linked surfaces** ([`judge`]). A symlink where agents look (an
//! instruction file such as `CLAUDE.md -> AGENTS.md`, an agent directory, a
//! skills folder such as `.claude/skills -> ../.agents/skills`) is followed
//! here as the kernel would follow it ([`LinkRule::follow`]) and shown as the
//! link only when everything an agent could read through it is decided where
//! it lands: the target is a sealed root or an artifact (or lies inside one),
//! or, for a link standing for a directory of surfaces, every path the link
//! stands for lands on a sealed root or artifact too (the lockfile's patterns
//! or the surface table cover the target as they cover the link's path). The
//! kernel then follows the link into the view, where every step is decided at
//! the path it resolves to: the agent reads the verified target or nothing.
//! A link out of the project, a dangling link, a loop, or one to content no
//! sealed root covers is hidden. The view serves such a link's target as read
//! when deciding it, an absolute one rewritten to the equivalent relative
//! link ([`LinkRule::relative_form`]), so that it can never lead out of the
//! view to the raw project when the view is mounted elsewhere.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::place::{Place, ViewPath, place_with};
use crate::surfaces::ExtraRows;
use seal_core::fs::{EntryKind, RawPath};
use seal_core::lockfile::Lockfile;

/// Where the view is and where the real project is.
#[derive(Debug, Clone)]
pub struct LinkRule {
    view_root: PathBuf,
    /// Every absolute spelling of the real project known to us (as given and
    /// canonical).
    real_project: Vec<PathBuf>,
}

/// Lexical normalisation: `.` dropped, `..` pops (never above `/`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

impl LinkRule {
    pub fn new(view_root: &Path, real_project: &[PathBuf]) -> LinkRule {
        let mut real: Vec<PathBuf> = real_project.iter().map(|p| normalize(p)).collect();
        real.dedup();
        LinkRule {
            view_root: normalize(view_root),
            real_project: real,
        }
    }

    /// Whether a symlink in directory `link_dir` (project-relative) pointing
    /// at `target` may be shown.
    pub(crate) fn allows(&self, link_dir: &RawPath, target: &OsStr) -> bool {
        let target = Path::new(target);
        let absolute = if target.is_absolute() {
            normalize(target)
        } else {
            let mut p = self.view_root.clone();
            for name in &link_dir.0 {
                p.push(name);
            }
            normalize(&p.join(target))
        };
        let bytes = absolute.as_os_str().as_bytes();
        if bytes == b"/proc"
            || bytes.starts_with(b"/proc/")
            || bytes.starts_with(b"/dev/fd")
            || bytes.starts_with(b"/dev/std")
        {
            return false;
        }
        if absolute.starts_with(&self.view_root) {
            return true;
        }
        !self
            .real_project
            .iter()
            .any(|real| absolute.starts_with(real))
    }
}

/// How many links the kernel follows in one path walk before `ELOOP`.
const MAX_LINKS: usize = 40;

/// Where following a symlink leads, as the kernel would follow it from the
/// link's place in the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leads {
    /// To `path` inside the project (every link on the way followed), an
    /// entry of `kind`.
    Inside { path: RawPath, kind: EntryKind },
    /// Out of the project: an absolute path elsewhere, `..` above its root,
    /// `/proc` or `/dev/fd`.
    Outside,
    /// To nothing: a name on the way does not exist or is not a directory.
    Dangling,
    /// Through more than 40 links: a loop.
    Loop,
}

impl LinkRule {
    /// The project-relative names an absolute `target` stands for, when it
    /// lies in the view or in the real project (as spelt, or once `.` and
    /// `..` are taken lexically).
    fn within_project(&self, target: &Path) -> Option<Vec<OsString>> {
        let bytes = target.as_os_str().as_bytes();
        if bytes == b"/proc"
            || bytes.starts_with(b"/proc/")
            || bytes.starts_with(b"/dev/fd")
            || bytes.starts_with(b"/dev/std")
        {
            return None;
        }
        let roots = std::iter::once(&self.view_root).chain(&self.real_project);
        for candidate in [target.to_path_buf(), normalize(target)] {
            for root in roots.clone() {
                if let Ok(rest) = candidate.strip_prefix(root) {
                    return Some(rest.iter().map(OsStr::to_os_string).collect());
                }
            }
        }
        None
    }

    /// Follows the symlink at `link` (project-relative), whose target is
    /// `target`, through `project` as the kernel would: component by
    /// component, each further link followed where it stands, `..` taken
    /// from the directory actually reached. Reads the disk (only links at
    /// surface paths are followed here).
    pub fn follow(&self, project: BorrowedFd<'_>, link: &RawPath, target: &OsStr) -> Leads {
        let mut dir: Vec<OsString> = link.0[..link.0.len().saturating_sub(1)].to_vec();
        let mut pending: VecDeque<OsString> = VecDeque::new();
        let mut kind = EntryKind::Dir;
        let mut hops = 1;
        if !self.splice(&mut dir, &mut pending, Path::new(target)) {
            return Leads::Outside;
        }
        while let Some(name) = pending.pop_front() {
            match name.as_bytes() {
                b"" | b"." => continue,
                b".." => {
                    if kind != EntryKind::Dir {
                        return Leads::Dangling;
                    }
                    if dir.pop().is_none() {
                        return Leads::Outside;
                    }
                    continue;
                }
                _ => {}
            }
            if kind != EntryKind::Dir {
                return Leads::Dangling;
            }
            let parent = RawPath(dir.clone());
            let Ok(fd) = seal_core::fs::open_dir_path_beneath(project, &parent) else {
                return Leads::Dangling;
            };
            let Ok(st) = seal_core::fs::lstat_at(fd.as_fd(), &name) else {
                return Leads::Dangling;
            };
            match EntryKind::from_mode(st.st_mode) {
                EntryKind::Symlink => {
                    hops += 1;
                    if hops > MAX_LINKS {
                        return Leads::Loop;
                    }
                    let Ok(next) = nix::fcntl::readlinkat(fd.as_fd(), name.as_os_str()) else {
                        return Leads::Dangling;
                    };
                    if !self.splice(&mut dir, &mut pending, Path::new(&next)) {
                        return Leads::Outside;
                    }
                    kind = EntryKind::Dir;
                }
                found => {
                    dir.push(name);
                    kind = found;
                }
            }
        }
        Leads::Inside {
            path: RawPath(dir),
            kind,
        }
    }

    /// Puts the names of a link's `target` before `pending`; an absolute
    /// target restarts from the project root (false: it leads out of it).
    fn splice(
        &self,
        dir: &mut Vec<OsString>,
        pending: &mut VecDeque<OsString>,
        target: &Path,
    ) -> bool {
        let names: Vec<OsString> = if target.is_absolute() {
            let Some(rest) = self.within_project(target) else {
                return false;
            };
            dir.clear();
            rest
        } else {
            target
                .components()
                .map(|c| c.as_os_str().to_os_string())
                .collect()
        };
        for name in names.into_iter().rev() {
            pending.push_front(name);
        }
        true
    }

    /// The target to serve for a link in directory `link_dir` whose target
    /// is the absolute `target` inside the project: the equivalent relative
    /// link, so that it stays in the view wherever the view is mounted.
    /// `None` when `target` is relative or leads elsewhere.
    pub(crate) fn relative_form(&self, link_dir: &RawPath, target: &OsStr) -> Option<OsString> {
        let target = Path::new(target);
        if !target.is_absolute() {
            return None;
        }
        let rest = self.within_project(target)?;
        let mut out = PathBuf::new();
        for _ in &link_dir.0 {
            out.push("..");
        }
        for name in rest {
            out.push(name);
        }
        if out.as_os_str().is_empty() {
            out.push(".");
        }
        Some(out.into_os_string())
    }
}

/// What the view does with a symlink at a surface path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Everything read through it is decided where it lands: shown, and
    /// followed by the kernel into the view.
    Followed,
    /// It lands inside the project on content no sealed root or surface
    /// covers: hidden until the target is sealed.
    Unsealed,
    /// Where agents look for a directory, it leads to something else.
    NotADirectory,
    /// It leads out of the project.
    Outside,
    /// It leads to nothing.
    Dangling,
    /// It leads around in a loop.
    Loop,
}

impl LinkState {
    /// One line for people.
    pub fn describe(self) -> &'static str {
        match self {
            LinkState::Followed => {
                "a link inside the project: what is read through it is decided where it leads"
            }
            LinkState::Unsealed => {
                "a link to content no sealed root covers: hidden until what it leads to is sealed"
            }
            LinkState::NotADirectory => {
                "a link where agents look for a directory leads to something else"
            }
            LinkState::Outside => "a link out of the project: nothing outside it is sealed",
            LinkState::Dangling => "a link to nothing",
            LinkState::Loop => "a link that loops",
        }
    }

    /// The word `seal why` and `seal verify -v` print.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkState::Followed => "followed",
            LinkState::Unsealed => "unsealed",
            LinkState::NotADirectory => "not-a-directory",
            LinkState::Outside => "outside",
            LinkState::Dangling => "dangling",
            LinkState::Loop => "loop",
        }
    }
}

/// A symlink at a surface path, judged.
#[derive(Debug, Clone)]
pub struct SurfaceLink {
    /// The link's target as read.
    pub target: OsString,
    pub leads: Leads,
    pub state: LinkState,
    /// Patterns whose sealed roots would make it [`LinkState::Followed`],
    /// when it is [`LinkState::Unsealed`] (NFC text).
    pub missing: Vec<String>,
}

/// Whether a symlink at `path` (placed at `place`) is a link at a surface
/// path: a container on the way to surfaces or sealed roots (it stands for
/// a directory of them), or an artifact root (it stands for one).
pub(crate) fn is_surface_link_place(place: &Place, path: &ViewPath) -> bool {
    match place {
        Place::Container => true,
        Place::Artifact { root_len, .. } | Place::Unmappable { root_len } => {
            *root_len == path.depth()
        }
        Place::Ordinary | Place::Lockfile | Place::Sealed { .. } => false,
    }
}

/// A name no pattern names and every `*` matches: what a wildcard
/// remainder is checked with (a pattern that covers it covers every name).
const ANY_NAME: &str = "\u{1}";

/// Judges the symlink at `path` (placed at `place` on `lock` and `extra`),
/// whose target is `target`; `None` when `path` is not a surface path (see
/// [`is_surface_link_place`]).
pub fn judge(
    rule: &LinkRule,
    project: BorrowedFd<'_>,
    lock: &Lockfile,
    extra: &ExtraRows,
    path: &ViewPath,
    place: &Place,
    target: &OsStr,
) -> Option<SurfaceLink> {
    if !is_surface_link_place(place, path) {
        return None;
    }
    let leads = rule.follow(project, &path.raw, target);
    let judged = |state, missing| {
        Some(SurfaceLink {
            target: target.to_os_string(),
            leads: leads.clone(),
            state,
            missing,
        })
    };
    let (landed, kind) = match &leads {
        Leads::Inside { path, kind } => (ViewPath::of(path), *kind),
        Leads::Outside => return judged(LinkState::Outside, vec![]),
        Leads::Dangling => return judged(LinkState::Dangling, vec![]),
        Leads::Loop => return judged(LinkState::Loop, vec![]),
    };
    let gated = |names: &[&str]| {
        let probe = ViewPath::from_names(names.iter().map(OsStr::new));
        place_with(lock, extra, &probe).is_gated()
    };
    let at: Vec<&str> = landed.names().collect();
    let text = |rest: &[&str]| at.iter().chain(rest).copied().collect::<Vec<_>>().join("/");
    let missing: Vec<String> = if *place == Place::Container {
        if kind != EntryKind::Dir {
            return judged(LinkState::NotADirectory, vec![]);
        }
        remainders(lock, extra, path)
            .into_iter()
            .filter(|rest| {
                let probe: Vec<&str> = at
                    .iter()
                    .copied()
                    .chain(
                        rest.iter()
                            .map(|s| if s.contains('*') { ANY_NAME } else { s }),
                    )
                    .collect();
                !gated(&probe)
            })
            .map(|rest| text(&rest))
            .collect()
    } else {
        let mut all = at.clone();
        all.push(ANY_NAME);
        let covered = gated(&at) || (kind == EntryKind::Dir && gated(&all));
        if covered { vec![] } else { vec![text(&[])] }
    };
    if missing.is_empty() {
        judged(LinkState::Followed, missing)
    } else {
        judged(LinkState::Unsealed, missing)
    }
}

/// Every symlink at a surface path in the project (on `lock`'s patterns and
/// the `extra` surfaces), judged as the gate judges it, sorted by path: for
/// `seal verify -v`, `seal verify --strict` and `seal pin`.
pub fn surface_links(
    listings: &mut seal_core::discovery::Listings<'_>,
    rule: &LinkRule,
    lock: &Lockfile,
    extra: &ExtraRows,
) -> Vec<(ViewPath, SurfaceLink)> {
    let project = listings.root();
    let mut out = Vec::new();
    crate::assess::walk_view(listings, lock, extra, |_, path, place, kind| {
        if kind != EntryKind::Symlink || !is_surface_link_place(&place, &path) {
            return;
        }
        let (Some(parent), Some(name)) = (path.parent(), path.name()) else {
            return;
        };
        let Ok(dir) = seal_core::fs::open_dir_path_beneath(project, &parent.raw) else {
            return;
        };
        let Ok(target) = nix::fcntl::readlinkat(dir.as_fd(), name) else {
            return;
        };
        if let Some(link) = judge(rule, project, lock, extra, &path, &place, &target) {
            out.push((path, link));
        }
    });
    out.sort_by_cached_key(|(path, _)| path.display());
    out
}

/// The paths below the container `path` that are sealed roots or artifacts
/// by pattern (the lockfile's, the machine policy's, the surface table's),
/// relative to it, `*` standing for any name.
pub(crate) fn remainders<'a>(
    lock: &'a Lockfile,
    extra: &'a ExtraRows,
    path: &ViewPath,
) -> Vec<Vec<&'a str>> {
    let depth = path.depth();
    let mut out: Vec<Vec<&str>> = lock
        .discovery
        .iter()
        .chain(extra.patterns_parsed())
        .filter(|p| p.passes_through(path.names()))
        .map(|p| p.segments().skip(depth).collect())
        .collect();
    let names: Vec<&str> = path.names().collect();
    out.extend(crate::surfaces::remainders_below(&names));
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn dir(s: &str) -> RawPath {
        RawPath(
            s.split('/')
                .filter(|x| !x.is_empty())
                .map(OsString::from)
                .collect(),
        )
    }

    #[test]
    fn separate_mountpoint() {
        let rule = LinkRule::new(Path::new("/mnt/view"), &[PathBuf::from("/home/u/proj")]);
        // Into the real project: hidden, however spelled.
        assert!(!rule.allows(&dir("docs"), OsStr::new("/home/u/proj/.claude/skills/x")));
        assert!(!rule.allows(&dir("docs"), OsStr::new("/home/u/proj")));
        assert!(!rule.allows(&dir(""), OsStr::new("../../home/u/proj/CLAUDE.md")));
        assert!(!rule.allows(&dir("a"), OsStr::new("/home/u/other/../proj/x")));
        // Magic links.
        assert!(!rule.allows(&dir(""), OsStr::new("/proc/self/root/home/u/proj")));
        assert!(!rule.allows(&dir(""), OsStr::new("/dev/fd/3")));
        // Inside the view: gated by the mount itself.
        assert!(rule.allows(&dir("docs"), OsStr::new("../.claude/skills/x")));
        assert!(rule.allows(&dir("docs"), OsStr::new("/mnt/view/src")));
        // System paths.
        assert!(rule.allows(&dir(".venv/bin"), OsStr::new("/usr/bin/python3")));
        assert!(rule.allows(&dir(""), OsStr::new("../../usr/lib")));
    }

    #[test]
    fn view_at_the_project_path() {
        let rule = LinkRule::new(Path::new("/home/u/proj"), &[PathBuf::from("/home/u/proj")]);
        assert!(rule.allows(&dir("docs"), OsStr::new("/home/u/proj/.claude/skills/x")));
        assert!(rule.allows(&dir(""), OsStr::new("../proj/CLAUDE.md")));
        assert!(!rule.allows(&dir(""), OsStr::new("/proc/self/cwd")));
    }
}
