//! What `seal init` (and a bulk `seal pin`) proposes to seal: discovery
//! patterns for every agent surface on disk, so that after init the sealed
//! view hides nothing that was there (SPEC §Authoring lets tools use
//! heuristics here, never in verification).
//!
//! The walk visits every directory the view shows as it is and, wherever a
//! name starts a surface of [`crate::surfaces`] (at any depth: a monorepo
//! package's `.claude/skills`, `.mcp.json`, `AGENTS.md`), proposes what the
//! table says: `X/*` for a row ending in a wildcard whose container exists,
//! the exact path of a row or an instruction file that exists, each entry of
//! an agent directory no row claims. Seal v1 has no `**`, so a nested surface
//! gets patterns of its own package (`packages/x/.claude/skills/*`).
//!
//! **Links.** A symlink where agents look is never pinned itself (SPEC: a
//! symlink root is a Mismatch and aborts a pin). What it leads to is pinned
//! instead, so that the view can show the link and decide everything read
//! through it where it lands ([`crate::links`]): for a link standing for one
//! artifact (`CLAUDE.md -> AGENTS.md`), the exact path it resolves to unless a
//! proposed root already covers it; for a link standing for a directory of
//! surfaces (`.claude/skills -> ../.agents/skills -> ../skills`), the same
//! patterns below where it resolves to as the table has below the link
//! (`skills/*`). A wildcard whose produce would include a symlink gives way
//! to the exact paths of what it produces, the symlinks among them treated as
//! links. Every link is reported ([`LinkNote`]), with how the view will judge
//! it once the proposal is sealed.
//!
//! Finally proposals another proposal covers are dropped (a linked agent
//! directory's `shared/claude/*` covers `shared/claude/skills/*`), and one
//! that would nest with another without being covered is left out, with why.

use std::collections::BTreeSet;
use std::os::fd::AsFd;

use crate::links::{Leads, LinkRule, SurfaceLink, judge};
use crate::place::{ViewPath, place_with};
use crate::surfaces::{Anchor, ExtraRows, SurfaceClass, SurfaceRule, anchors, classify};
use seal_core::discovery::{DiscoveryError, Listings, expand, has_trackable_entry};
use seal_core::fs::{EntryKind, nfc_name};
use seal_core::lockfile::Lockfile;
use seal_core::pattern::{Pattern, segment_matches};
pub use seal_core::plan::Proposal;

/// A symlink where agents look, and what the proposal did about it.
#[derive(Debug, Clone)]
pub struct LinkNote {
    pub path: ViewPath,
    /// How the view will judge it once the proposal is sealed (`None` when a
    /// pattern of `seal.json` produces the link itself: SPEC's Mismatch).
    pub judged: Option<SurfaceLink>,
    /// The patterns proposed for what it leads to.
    pub patterns: Vec<Pattern>,
}

/// The proposal, and every link at a surface path with what was proposed
/// for it.
#[derive(Debug, Default)]
pub struct Found {
    pub proposal: Proposal,
    pub links: Vec<LinkNote>,
}

/// Proposes discovery patterns for every agent surface present in the
/// project, on top of `lock` (init's is empty; a bulk pin's is `seal.json`)
/// and the machine policy's `extra` surfaces (each proposed as it is when it
/// produces something). `rule` places the project for following links.
pub fn propose(
    listings: &mut Listings<'_>,
    rule: &LinkRule,
    lock: &Lockfile,
    extra: &ExtraRows,
) -> Result<Found, DiscoveryError> {
    let mut p = Proposer {
        listings,
        lock,
        patterns: Vec::new(),
        skipped: Vec::new(),
        links: Vec::new(),
    };
    p.walk()?;
    for pattern in extra.patterns_parsed() {
        p.propose_checked(pattern.as_str(), false)?;
    }
    let notes = p.follow_links(rule, extra)?;
    p.drop_covered_and_nested();
    let mut after = lock.clone();
    after.discovery.extend(p.patterns.iter().cloned());
    after.discovery.sort();
    after.discovery.dedup();
    let root = p.listings.root();
    let links = notes
        .into_iter()
        .map(|(path, target, patterns)| {
            let place = place_with(&after, extra, &path);
            let judged = target.and_then(|t| judge(rule, root, &after, extra, &path, &place, &t));
            let patterns = patterns
                .into_iter()
                .filter(|q| p.patterns.contains(q))
                .collect();
            LinkNote {
                path,
                judged,
                patterns,
            }
        })
        .collect::<Vec<LinkNote>>();
    let mut links = links;
    links.sort_by_cached_key(|note| note.path.display());
    Ok(Found {
        proposal: Proposal {
            patterns: p.patterns,
            skipped: p.skipped,
        },
        links,
    })
}

struct Proposer<'l, 'a> {
    listings: &'l mut Listings<'a>,
    lock: &'l Lockfile,
    patterns: Vec<Pattern>,
    skipped: Vec<(String, String)>,
    /// Links found at surface paths, and whether each stands for a
    /// directory of surfaces (else for one artifact).
    links: Vec<(ViewPath, bool)>,
}

impl Proposer<'_, '_> {
    /// Whether a proposed pattern or one of `seal.json` makes `names` (part
    /// of) a sealed root.
    fn covered(&self, names: &[&str]) -> bool {
        self.patterns
            .iter()
            .chain(&self.lock.discovery)
            .any(|p| p.root_len_within(names.iter().copied()).is_some())
    }

    /// Every directory the view shows as it is, from the root down.
    fn walk(&mut self) -> Result<(), DiscoveryError> {
        let table = anchors();
        let mut stack = vec![ViewPath::root()];
        while let Some(dir) = stack.pop() {
            let entries = self.listings.list(&dir.raw)?;
            for entry in entries.iter() {
                if entry.name == ".git" {
                    continue;
                }
                let Some(name) = nfc_name(&entry.name) else {
                    continue;
                };
                let path = dir.child(&entry.name);
                if self.covered(&path.names().collect::<Vec<_>>()) {
                    continue;
                }
                if let Some(anchor) = table.by_name.get(name.as_str()) {
                    self.visit(anchor, &path, path.depth() - 1, entry.kind)?;
                } else if let Some((_, row, _)) = table
                    .glob_rows
                    .iter()
                    .find(|(_, row, _)| row.root_len_within([name.as_str()]).is_some())
                {
                    let wild = row.as_str().to_string();
                    self.propose_wild(&dir, &wild)?;
                }
                let names: Vec<&str> = path.names().collect();
                if entry.kind == EntryKind::Dir && !self.covered(&names) {
                    stack.push(path);
                }
            }
        }
        Ok(())
    }

    /// Proposes for the entry at `path` (of `kind`), where `anchor` stands
    /// at segment `k`: the row or instruction file it is, or what the rows
    /// and the agent directory rule say below it.
    fn visit(
        &mut self,
        anchor: &Anchor,
        path: &ViewPath,
        k: usize,
        kind: EntryKind,
    ) -> Result<(), DiscoveryError> {
        let names: Vec<String> = path.names().map(str::to_string).collect();
        let role: Vec<&str> = names[k..].iter().map(String::as_str).collect();
        let whole_row = anchor.rows.iter().any(|(p, _)| {
            p.depth() == role.len() && p.root_len_within(role.iter().copied()).is_some()
        });
        if anchor.instruction.is_some() || whole_row {
            return self.root(path, kind);
        }
        match kind {
            EntryKind::Symlink => {
                self.links.push((path.clone(), true));
                return Ok(());
            }
            EntryKind::Dir => {}
            _ => return Ok(()),
        }
        let below: BTreeSet<&str> = anchor
            .rows
            .iter()
            .filter(|(p, _)| p.passes_through(role.iter().copied()))
            .filter_map(|(p, _)| {
                let next = p.segments().nth(role.len())?;
                // A wildcard is proposed only where it is the last segment.
                (!next.contains('*') || p.depth() == role.len() + 1).then_some(next)
            })
            .collect();
        let entries = self.listings.list(&path.raw)?;
        for next in below {
            if next.contains('*') {
                self.propose_wild(path, next)?;
                continue;
            }
            let found = entries
                .iter()
                .find(|e| nfc_name(&e.name).as_deref() == Some(next));
            if let Some(e) = found {
                self.visit(anchor, &path.child(&e.name), k, e.kind)?;
            }
        }
        if anchor.agent_dir.is_none() || role.len() != 1 {
            return Ok(());
        }
        for entry in entries.iter() {
            let Some(name) = nfc_name(&entry.name) else {
                self.skipped.push((
                    format!(
                        "{}/{}",
                        names.join("/"),
                        seal_core::escape::escaped_os(&entry.name)
                    ),
                    "its name is not UTF-8".to_string(),
                ));
                continue;
            };
            let unclaimed = matches!(
                classify(&[role[0], name.as_str()]),
                SurfaceClass::Artifact {
                    rule: SurfaceRule::AgentDir(_),
                    ..
                }
            );
            if unclaimed {
                self.root(&path.child(&entry.name), entry.kind)?;
            }
        }
        Ok(())
    }

    /// An artifact root at `path`: its exact pattern (a directory only when
    /// it holds something), or, for a symlink, a link standing for one.
    fn root(&mut self, path: &ViewPath, kind: EntryKind) -> Result<(), DiscoveryError> {
        match kind {
            EntryKind::Symlink => self.links.push((path.clone(), false)),
            EntryKind::Dir if !has_trackable_entry(self.listings, &path.raw)? => {}
            _ => self.exact(path),
        }
        Ok(())
    }

    fn exact(&mut self, path: &ViewPath) {
        let text = path.names().collect::<Vec<_>>().join("/");
        self.push_text(&text);
    }

    fn push_text(&mut self, text: &str) {
        match Pattern::parse(text) {
            Ok(p) => {
                if !self.patterns.contains(&p) {
                    self.patterns.push(p);
                }
            }
            Err(rule) => self
                .skipped
                .push((text.to_string(), format!("a pattern for it {rule}"))),
        }
    }

    /// `dir/wild` (a wildcard row's last segment below the directory `dir`),
    /// proposed even when it produces nothing yet.
    fn propose_wild(&mut self, dir: &ViewPath, wild: &str) -> Result<(), DiscoveryError> {
        let mut text = dir.names().collect::<Vec<_>>().join("/");
        if !text.is_empty() {
            text.push('/');
        }
        text.push_str(wild);
        self.propose_checked(&text, true)
    }

    /// Proposes the pattern `text` unless it would produce a symlink: then
    /// each root it produces on its own (the exact path, or the symlink as a
    /// link standing for one artifact). `keep_empty`: proposed even when it
    /// produces nothing.
    fn propose_checked(&mut self, text: &str, keep_empty: bool) -> Result<(), DiscoveryError> {
        let Ok(pattern) = Pattern::parse(text) else {
            self.push_text(text);
            return Ok(());
        };
        let expansion = expand(self.listings, std::slice::from_ref(&pattern))?;
        let links: Vec<ViewPath> = expansion
            .roots
            .values()
            .flatten()
            .filter(|(_, kind)| *kind == EntryKind::Symlink)
            .map(|(raw, _)| ViewPath::of(raw))
            .collect();
        if links.is_empty() {
            if keep_empty || !expansion.roots.is_empty() || !expansion.unmappable.is_empty() {
                self.push_text(text);
            }
            return Ok(());
        }
        for (raw, kind) in expansion.roots.values().flatten() {
            self.root(&ViewPath::of(raw), *kind)?;
        }
        Ok(())
    }

    /// Follows every link found (and those found while proposing for
    /// their targets), proposing what each leads to. Returns, per link, its
    /// target (none when it could not be read) and the patterns proposed
    /// for it.
    #[allow(clippy::type_complexity)]
    fn follow_links(
        &mut self,
        rule: &LinkRule,
        extra: &ExtraRows,
    ) -> Result<Vec<(ViewPath, Option<std::ffi::OsString>, Vec<Pattern>)>, DiscoveryError> {
        let root = self.listings.root();
        let mut seen = BTreeSet::new();
        let mut notes = Vec::new();
        let mut artifacts: Vec<(usize, ViewPath, EntryKind)> = Vec::new();
        let mut next = 0;
        while next < self.links.len() {
            let (path, container) = self.links[next].clone();
            next += 1;
            if !seen.insert(path.display()) {
                continue;
            }
            let target = read_link(root, &path);
            let before = self.patterns.len();
            if let Some(t) = &target
                && let Leads::Inside { path: at, kind } = rule.follow(root, &path.raw, t)
            {
                let at = ViewPath::of(&at);
                if !container {
                    artifacts.push((notes.len(), at, kind));
                } else if kind == EntryKind::Dir {
                    for rest in crate::links::remainders(self.lock, extra, &path) {
                        let mut names: Vec<&str> = at.names().collect();
                        names.extend(rest.iter().copied());
                        let text = names.join("/");
                        self.propose_checked(&text, true)?;
                    }
                }
            }
            notes.push((path, target, self.patterns[before..].to_vec()));
        }
        // A link standing for one artifact is covered when what it leads to
        // is (or, for a directory, every entry of it would be); only then
        // is its exact path proposed, once every other proposal is known.
        for (note, at, kind) in artifacts {
            let names: Vec<&str> = at.names().collect();
            let mut any = names.clone();
            any.push("\u{1}");
            if self.covered(&names) || (kind == EntryKind::Dir && self.covered(&any)) {
                continue;
            }
            let before = self.patterns.len();
            self.root(&at, kind)?;
            let added = self.patterns[before..].to_vec();
            notes[note].2.extend(added);
        }
        Ok(notes)
    }

    /// Drops a proposal another covers (every root it produces lies inside
    /// one the other produces), then leaves out, with why, one that would
    /// still nest with another (the deeper of the two).
    fn drop_covered_and_nested(&mut self) {
        let all = self.patterns.clone();
        self.patterns
            .retain(|q| !all.iter().chain(&self.lock.discovery).any(|p| covers(p, q)));
        self.patterns.retain(|q| !self.lock.discovery.contains(q));
        let mut kept: Vec<Pattern> = Vec::new();
        let mut by_depth = self.patterns.clone();
        by_depth.sort_by_key(Pattern::depth);
        for q in by_depth {
            match kept.iter().find(|p| p.can_nest_with(&q)) {
                Some(p) => self.skipped.push((
                    q.as_str().to_string(),
                    format!("its roots would nest with those of {}", p.as_str()),
                )),
                None => kept.push(q),
            }
        }
        self.patterns.retain(|q| kept.contains(q));
    }
}

/// Whether every root `q` produces lies inside (or is) one `p` (another
/// pattern) produces.
fn covers(p: &Pattern, q: &Pattern) -> bool {
    p != q
        && p.depth() <= q.depth()
        && p.segments()
            .zip(q.segments())
            .all(|(a, b)| a == "*" || a == b || (!b.contains('*') && segment_matches(a, b)))
}

/// The target of the symlink at `path`.
fn read_link(root: std::os::fd::BorrowedFd<'_>, path: &ViewPath) -> Option<std::ffi::OsString> {
    let parent = path.parent()?;
    let dir = seal_core::fs::open_dir_path_beneath(root, &parent.raw).ok()?;
    nix::fcntl::readlinkat(dir.as_fd(), path.name()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree(tempfile::TempDir);

    impl Tree {
        fn new(files: &[&str], dirs: &[&str], links: &[(&str, &str)]) -> Tree {
            let t = tempfile::tempdir().unwrap();
            for d in dirs {
                std::fs::create_dir_all(t.path().join(d)).unwrap();
            }
            for f in files {
                let p = t.path().join(f);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "x").unwrap();
            }
            for (link, target) in links {
                let p = t.path().join(link);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink(target, p).unwrap();
            }
            Tree(t)
        }

        fn found(&self) -> Found {
            let fd = seal_core::fs::open_project(self.0.path()).unwrap();
            let mut l = Listings::new(fd.as_fd());
            let rule = LinkRule::new(self.0.path(), &[self.0.path().to_path_buf()]);
            let lock = Lockfile::empty(seal_core::lockfile::Policy::Block);
            propose(&mut l, &rule, &lock, &ExtraRows::default()).unwrap()
        }

        fn patterns(&self) -> Vec<String> {
            let mut v: Vec<String> = self
                .found()
                .proposal
                .patterns
                .iter()
                .map(|p| p.as_str().to_string())
                .collect();
            v.sort();
            v
        }
    }

    fn sorted(v: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn proposals_cover_every_surface_present() {
        let t = Tree::new(
            &[
                ".claude/skills/a/SKILL.md",
                ".claude/settings.json",
                ".claude/notes.md",
                ".claude/CLAUDE.md",
                "CLAUDE.md",
                "src/AGENTS.md",
                ".claude/skills/a/CLAUDE.md",
                ".git/CLAUDE.md",
                ".github/workflows/ci.yml",
            ],
            &[".agents/skills", ".claude/emptydir"],
            &[],
        );
        assert_eq!(
            t.patterns(),
            sorted(&[
                ".claude/skills/*",
                ".claude/settings.json",
                ".agents/skills/*",
                ".claude/CLAUDE.md",
                ".claude/notes.md",
                "CLAUDE.md",
                "src/AGENTS.md",
            ])
        );
    }

    #[test]
    fn empty_project_proposes_nothing() {
        assert!(
            Tree::new(&["README.md", "src/lib.rs"], &[], &[])
                .patterns()
                .is_empty()
        );
    }

    #[test]
    fn nested_surfaces_get_patterns_of_their_own_package() {
        let t = Tree::new(
            &[
                "packages/a/.claude/skills/s/SKILL.md",
                "packages/a/.mcp.json",
                "packages/a/AGENTS.md",
                "packages/b/.claude/settings.json",
                "packages/b/.claude/notes.md",
                "tools/bot/.gemini/agents/x.md",
                "extensions/cli/.continue/agents/y.md",
                "plugins/p/.claude-plugin/plugin.json",
                ".claude-plugin/marketplace.json",
                "pkg/QWEN.md",
                "pkg/.qwen/settings.json",
                "web/.vscode/mcp.json",
                "web/.vscode/settings.json",
            ],
            &[],
            &[],
        );
        assert_eq!(
            t.patterns(),
            sorted(&[
                "packages/a/.claude/skills/*",
                "packages/a/.mcp.json",
                "packages/a/AGENTS.md",
                "packages/b/.claude/settings.json",
                "packages/b/.claude/notes.md",
                "tools/bot/.gemini/agents/*",
                "extensions/cli/.continue/agents",
                "plugins/p/.claude-plugin",
                ".claude-plugin",
                "pkg/QWEN.md",
                "pkg/.qwen/settings.json",
                "web/.vscode/mcp.json",
            ])
        );
    }

    #[test]
    fn links_pin_what_they_lead_to() {
        let t = Tree::new(
            &["AGENTS.md", "skills/a/SKILL.md", "docs/guide.md"],
            &[".claude", ".agents"],
            &[
                ("CLAUDE.md", "AGENTS.md"),
                ("GEMINI.md", "docs/guide.md"),
                (".claude/skills", "../.agents/skills"),
                (".agents/skills", "../skills"),
                ("QWEN.md", "/etc/passwd"),
                (".mcp.json", "nowhere.json"),
            ],
        );
        assert_eq!(
            t.patterns(),
            sorted(&["AGENTS.md", "docs/guide.md", "skills/*"])
        );
        let found = t.found();
        let state = |p: &str| {
            found
                .links
                .iter()
                .find(|n| n.path.display() == format!("./{p}"))
                .and_then(|n| n.judged.as_ref())
                .map(|j| j.state)
        };
        use crate::links::LinkState;
        assert_eq!(state("CLAUDE.md"), Some(LinkState::Followed));
        assert_eq!(state("GEMINI.md"), Some(LinkState::Followed));
        assert_eq!(state(".claude/skills"), Some(LinkState::Followed));
        assert_eq!(state(".agents/skills"), Some(LinkState::Followed));
        assert_eq!(state("QWEN.md"), Some(LinkState::Outside));
        assert_eq!(state(".mcp.json"), Some(LinkState::Dangling));
        assert_eq!(found.links.len(), 6);
    }

    #[test]
    fn a_linked_agent_directory_is_sealed_entry_by_entry_where_it_leads() {
        let t = Tree::new(
            &[
                "shared/claude/skills/s/SKILL.md",
                "shared/claude/settings.json",
            ],
            &[],
            &[(".claude", "shared/claude")],
        );
        assert_eq!(t.patterns(), sorted(&["shared/claude/*"]));
    }

    #[test]
    fn a_wildcard_over_a_link_gives_way_to_exact_paths() {
        // `.claude/skills/*` would produce the link `.claude/skills/b`
        // (a Mismatch): its other entries are proposed one by one, the link
        // pins what it leads to.
        let t = Tree::new(
            &[".claude/skills/a/SKILL.md", "shared/b/SKILL.md"],
            &[],
            &[(".claude/skills/b", "../../shared/b")],
        );
        assert_eq!(t.patterns(), sorted(&[".claude/skills/a", "shared/b"]));
        let found = t.found();
        assert_eq!(
            found.links[0].judged.as_ref().map(|j| j.state),
            Some(crate::links::LinkState::Followed)
        );
    }

    #[test]
    fn covered_proposals_are_dropped() {
        let p = |s: &str| Pattern::parse(s).unwrap();
        assert!(covers(&p("shared/claude/*"), &p("shared/claude/skills/*")));
        assert!(covers(&p("a/*"), &p("a/b")));
        assert!(!covers(&p("a/b*"), &p("a/*/c")));
        assert!(!covers(&p("a/b"), &p("a/b")));
    }
}
