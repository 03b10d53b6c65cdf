//! Assessing a root now: the facts the decision table needs about a sealed
//! root or an agent artifact, read from the disk. Shared by the gate (at every
//! decision, keeping the bytes an open asked for), `seal why` and `seal run
//! --dry-run`, so that all three feed [`super::decide`] the same state; and
//! the walk that finds the agent artifacts no discovery pattern covers
//! (shared by `seal run --dry-run`, `seal verify -v` and `seal pin`).

use std::os::fd::BorrowedFd;
use std::sync::Arc;

use seal_core::discovery::{DiscoveryError, Listings, has_trackable_entry};
use seal_core::effort::Effort;
use seal_core::fs::{DirEntry, EntryKind, RawPath};
use seal_core::hash::{Keeper, Observed};
use seal_core::lockfile::{BundleEntry, Lockfile};
use seal_core::paths::BundleKey;
use seal_core::verify::{BundleReport, BundleState, verify_key_with};
use seal_core::walk::{DirFd, Flow, Subdir, Visit, walk_at};

use super::decision::RootState;
use super::place::{Place, ViewPath};

/// What one assessment of a sealed root found.
#[derive(Debug)]
pub struct SealedAssessment<K> {
    pub state: RootState,
    /// The verification report, when the root was verified against an entry
    /// or found impossible to verify.
    pub report: Option<BundleReport>,
    /// What was hashed (and kept), when the root was hashed.
    pub observed: Option<Observed<K>>,
}

/// Assesses the sealed root of `key`, spending no more than `effort`: the
/// gate stops at the first proof of a Mismatch (or, under `warn`, hashes only
/// what it must serve), `seal why` verifies in full for complete lists. An
/// unrecorded root is Unverified as soon as it holds one trackable entry, not
/// a bundle when it holds none, absent when nothing is there.
pub fn assess_sealed<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keeper: &K,
    effort: Effort<'_>,
) -> Result<SealedAssessment<K::Kept>, DiscoveryError> {
    let check = verify_key_with(listings, key, entry, keeper, effort)?;
    let state = match (entry, check.report.state) {
        (None, BundleState::Removed) => RootState::Absent,
        (None, _) if check.is_empty_root() => RootState::NotABundle,
        (_, state) => RootState::Bundle(state),
    };
    Ok(SealedAssessment {
        state,
        report: Some(check.report),
        observed: check.observed,
    })
}

/// Assesses an agent artifact root (or a root whose name cannot be a key): it
/// can never be verified, so it is Unverified when it holds anything an agent
/// could load, not a bundle when it is an empty directory, absent when gone.
pub fn assess_artifact(listings: &mut Listings<'_>, root: &RawPath) -> RootState {
    match root_kind(listings, root) {
        None => RootState::Absent,
        Some(EntryKind::Dir) => match has_trackable_entry(listings, root) {
            Ok(false) => RootState::NotABundle,
            // A directory that cannot be read counts as holding something.
            Ok(true) | Err(_) => RootState::Bundle(BundleState::Unverified),
        },
        Some(_) => RootState::Bundle(BundleState::Unverified),
    }
}

/// An agent artifact root that no discovery pattern covers, placed and
/// assessed as the gate would.
#[derive(Debug, Clone)]
pub struct Uncovered {
    pub path: ViewPath,
    /// What it is on the disk.
    pub kind: EntryKind,
    /// Always a [`Place::Artifact`] whose root is `path`.
    pub place: Place,
    /// Always a [`RootState::Bundle`].
    pub state: RootState,
}

/// Every agent artifact root on disk (on the built-in surfaces and the
/// machine policy's `extra` ones) that no discovery pattern covers and that
/// holds something an agent could load (empty directories and an agent's
/// housekeeping are left out), sorted by path. The walk is [`walk_view`]'s;
/// a symlink at an artifact root is a linked surface
/// ([`crate::links::surface_links`]), not listed here. `seal verify -v`, the
/// dry run and a verify the machine policy requires all use it.
pub fn uncovered_artifacts(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    extra: &crate::surfaces::ExtraRows,
) -> Vec<Uncovered> {
    let mut out = Vec::new();
    walk_view(listings, lock, extra, |listings, path, place, kind| {
        if let Place::Artifact { root_len, rule } = &place
            && *root_len == path.depth()
            && kind != EntryKind::Symlink
            // An agent's housekeeping is never served: nothing to pin.
            && !matches!(rule, crate::surfaces::SurfaceRule::Housekeeping(_))
        {
            let state = assess_artifact(listings, &path.raw);
            if let RootState::Bundle(_) = state {
                out.push(Uncovered {
                    path,
                    kind,
                    place,
                    state,
                });
            }
        }
    });
    out.sort_by_cached_key(|u| u.path.display());
    out
}

/// Visits every entry of every directory the view shows as it is (ordinary
/// directories and containers), with its place and kind: never a sealed
/// root's or an artifact's inside, `.git`, or a symlink's target;
/// directories that cannot be listed are passed over. One walk
/// ([`seal_core::walk`]), each directory's token its view path.
pub(crate) fn walk_view(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    extra: &crate::surfaces::ExtraRows,
    visit: impl FnMut(&mut Listings<'_>, ViewPath, Place, EntryKind),
) {
    walk_view_entering(listings, lock, extra, |_| true, visit);
}

/// [`walk_view`], entering only the directories whose name `enter` accepts
/// (the entries of the others are still visited).
fn walk_view_entering(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    extra: &crate::surfaces::ExtraRows,
    enter: impl Fn(&str) -> bool,
    visit: impl FnMut(&mut Listings<'_>, ViewPath, Place, EntryKind),
) {
    struct ViewWalk<'a, 'l, E, F> {
        lock: &'a Lockfile,
        extra: &'a crate::surfaces::ExtraRows,
        listings: &'a mut Listings<'l>,
        enter: E,
        visit: F,
    }
    impl<E: Fn(&str) -> bool, F: FnMut(&mut Listings<'_>, ViewPath, Place, EntryKind)> Visit
        for ViewWalk<'_, '_, E, F>
    {
        type Token = ViewPath;

        fn listed(
            &mut self,
            _: &Arc<DirFd>,
            _: &str,
            dir: &ViewPath,
            entries: Vec<DirEntry>,
            subdirs: &mut Vec<Subdir<ViewPath>>,
        ) -> Flow {
            for entry in entries.into_iter().filter(|e| e.name != ".git") {
                let path = dir.child(&entry.name);
                let place = super::place_with(self.lock, self.extra, &path);
                if matches!(place, Place::Ordinary | Place::Container)
                    && entry.kind == EntryKind::Dir
                    && entry.name.to_str().is_none_or(&self.enter)
                {
                    subdirs.push(Subdir {
                        raw: entry.name,
                        segment: String::new(),
                        token: path.clone(),
                    });
                }
                (self.visit)(self.listings, path, place, entry.kind);
            }
            Flow::Continue
        }
    }
    let project = listings.root();
    let mut walk = ViewWalk {
        lock,
        extra,
        listings,
        enter,
        visit,
    };
    walk_at(project, &RawPath::default(), ViewPath::root(), &mut walk);
}

/// Every agent directory of [`crate::surfaces::SCRATCH_DIRS`] the view
/// shows, at any depth but below [`crate::surfaces::NO_SCRATCH_BELOW`], in
/// walk order: where `seal run` lays a scratch layer.
pub fn scratch_dirs(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    extra: &crate::surfaces::ExtraRows,
) -> Vec<RawPath> {
    let mut out = Vec::new();
    let enter = |name: &str| !crate::surfaces::NO_SCRATCH_BELOW.contains(&name);
    walk_view_entering(listings, lock, extra, enter, |_, path, place, kind| {
        let name = path.raw.0.last().and_then(|n| n.to_str());
        if matches!(place, Place::Container)
            && kind == EntryKind::Dir
            && name.and_then(crate::surfaces::scratch_dir).is_some()
        {
            out.push(path.raw);
        }
    });
    out
}

/// The kind of the entry at `raw` (by listing its parent), if it exists.
pub fn root_kind(listings: &mut Listings<'_>, raw: &RawPath) -> Option<EntryKind> {
    let (name, parent) = raw.0.split_last()?;
    let entries = listings.list(&RawPath(parent.to_vec())).ok()?;
    entries.iter().find(|e| &e.name == name).map(|e| e.kind)
}

/// Whether the directory at `dir` (below `project`) holds, at any depth, an
/// agent artifact that is one wherever it stands (an instruction file, a
/// nested agent directory's entry, a surface row's path below some package:
/// see [`crate::surfaces::classify`], taken relative to `dir`): moving the
/// directory would move it. A directory that cannot be read counts as
/// holding one.
pub fn holds_protected(project: BorrowedFd<'_>, dir: &RawPath) -> bool {
    /// Each directory's token: its NFC names relative to `dir`.
    struct Holds(bool);
    impl Visit for Holds {
        type Token = Vec<String>;
        fn listed(
            &mut self,
            _: &Arc<DirFd>,
            _: &str,
            names: &Vec<String>,
            entries: Vec<DirEntry>,
            subdirs: &mut Vec<Subdir<Vec<String>>>,
        ) -> Flow {
            for entry in entries {
                let mut path = names.clone();
                path.push(seal_core::paths::nfc(&entry.name.to_string_lossy()));
                let refs: Vec<&str> = path.iter().map(String::as_str).collect();
                if let crate::surfaces::SurfaceClass::Artifact { .. } =
                    crate::surfaces::classify(&refs)
                {
                    self.0 = true;
                    return Flow::Stop;
                }
                if entry.kind == EntryKind::Dir {
                    subdirs.push(Subdir {
                        raw: entry.name,
                        segment: String::new(),
                        token: path,
                    });
                }
            }
            Flow::Continue
        }
        fn unreadable(&mut self, _: &str, _: std::io::Error) -> Flow {
            self.0 = true;
            Flow::Stop
        }
    }
    let mut holds = Holds(false);
    walk_at(project, dir, Vec::new(), &mut holds);
    holds.0
}
