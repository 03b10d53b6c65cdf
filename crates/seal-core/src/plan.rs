//! Planning a change to `seal.json` (SPEC §Pin Scope and Semantics): what a
//! bulk pin, a targeted pin or `seal init` would write, every row of its
//! summary, and everything that forbids it. Planning never writes; the CLI
//! renders the plan, asks, and writes.
//!
//! * Bulk pin: every root the discovery patterns produce and every recorded
//!   key; `--prune` drops keys whose roots are gone. Agent artifacts no
//!   pattern covers (found by the caller, which knows the view) get patterns
//!   proposed from the built-in surface table, as `seal init` does (SPEC
//!   §Authoring leaves pattern choice to tool heuristics), and their roots
//!   join the plan as new bundles.
//! * Targeted pin: each argument resolved to the true case of the names on
//!   disk, never nested inside or around a recorded root, the narrowest exact
//!   discovery pattern added when none produces the key.
//! * Init: the discovery patterns the built-in surface table proposes for
//!   what is present, and every root they produce.
//!
//! Any root that cannot be pinned (a symlink, a FIFO, NFC twins, an
//! unreadable file, an empty bundle) blocks the whole plan: SPEC says a pin
//! aborts and leaves `seal.json` unmodified. A proposed pattern is a tool's
//! offer, not a request: one whose roots cannot be pinned is left out (and
//! said why) rather than blocking the pin the user asked for.
//!
//! Every plan also names the bundles it would pin that hold more than
//! [`LARGE_BUNDLE_BYTES`]: each later verification reads all of them.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::os::fd::AsFd;
use std::path::Path;

use super::discovery::{DiscoveryError, Listings, Located, expand, locate};
use super::effort::HashProgress;
use super::escape::{escaped, quoted};
use super::fs::{EntryKind, RawPath, lstat_at, nfc_name};
use super::hash::{KeepNothing, Observed, Problem, observe_root};
use super::lockfile::{BundleEntry, LOCKFILE_NAME, Lockfile, Policy};
use super::paths::{BundleKey, PathRule, normalize_user_path};
use super::pattern::{Pattern, PatternRule};
use super::verify::{HashUnrecorded, Presence, RootName, Surveyed, survey};

/// What a pin does to one bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinKind {
    New,
    Modified,
    Removed,
    Unchanged,
}

/// Above this size a bundle gets a warning before it is pinned (every
/// verification, and so every open of it in the sealed view, reads it all).
pub const LARGE_BUNDLE_BYTES: u64 = 100 * 1024 * 1024;

/// A bundle a plan would pin that holds more than [`LARGE_BUNDLE_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeBundle {
    pub key: String,
    pub bytes: u64,
}

/// The bundles of `sized` (key, bytes) above the threshold, by key.
fn large<'a>(sized: impl Iterator<Item = (&'a str, u64)>) -> Vec<LargeBundle> {
    let mut out: Vec<LargeBundle> = sized
        .filter(|(_, bytes)| *bytes > LARGE_BUNDLE_BYTES)
        .map(|(key, bytes)| LargeBundle {
            key: key.to_string(),
            bytes,
        })
        .collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// One row of a pin summary.
#[derive(Debug, Clone)]
pub struct PinRow {
    pub key: String,
    pub kind: PinKind,
    pub file_count: usize,
    /// The bytes its files hold as hashed now (0 when removed).
    pub bytes: u64,
}

/// What a pin would write.
#[derive(Debug)]
pub struct PinPlan {
    pub lockfile: Lockfile,
    pub rows: Vec<PinRow>,
    pub added_patterns: Vec<Pattern>,
    /// Whether `--prune` drops the Removed rows.
    pub prune: bool,
    /// Uncovered artifacts no pattern is offered for, with why (bulk pin).
    pub skipped: Vec<(String, String)>,
}

impl PinPlan {
    /// How many bundles the pin changes (Removed ones only with `--prune`).
    pub fn changes(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| match r.kind {
                PinKind::New | PinKind::Modified => true,
                PinKind::Removed => self.prune,
                PinKind::Unchanged => false,
            })
            .count()
    }

    /// True when writing would change nothing.
    pub fn is_noop(&self) -> bool {
        self.changes() == 0 && self.added_patterns.is_empty()
    }

    /// The new or modified bundles above [`LARGE_BUNDLE_BYTES`] (an
    /// unchanged one was warned about when it was pinned).
    pub fn large_bundles(&self) -> Vec<LargeBundle> {
        large(
            self.rows
                .iter()
                .filter(|r| matches!(r.kind, PinKind::New | PinKind::Modified))
                .map(|r| (r.key.as_str(), r.bytes)),
        )
    }
}

/// What `seal init` would write.
#[derive(Debug)]
pub struct InitPlan {
    pub lockfile: Lockfile,
    /// The proposed patterns in the surface table's fixed order (the
    /// lockfile holds them sorted).
    pub proposed: Vec<Pattern>,
    /// Names the surface table matched but no pattern can name, with why.
    pub skipped: Vec<(String, String)>,
    /// The bytes each bundle of `lockfile` holds as hashed.
    pub sizes: BTreeMap<BundleKey, u64>,
}

impl InitPlan {
    /// The bundles above [`LARGE_BUNDLE_BYTES`].
    pub fn large_bundles(&self) -> Vec<LargeBundle> {
        large(self.sizes.iter().map(|(k, b)| (k.as_str(), *b)))
    }
}

/// A root that cannot be pinned, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    /// Hashing found a problem under the root.
    Problem { root: String, problem: Problem },
    /// A named root does not exist.
    Missing { root: String },
    /// The root holds no trackable file (SPEC: a bundle needs one).
    Empty { root: String },
    /// A produced root no bundle key can name (`shown`: already escaped,
    /// as its raw bytes may not be UTF-8).
    Unmappable { shown: String, reason: String },
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::Problem { root, problem } => write!(f, "{}: {problem}", escaped(root)),
            Blocker::Missing { root } => write!(f, "{}: does not exist", escaped(root)),
            Blocker::Empty { root } => write!(
                f,
                "{}: holds no trackable file (a bundle needs at least one)",
                escaped(root)
            ),
            Blocker::Unmappable { shown, reason } => write!(f, "{shown}: {reason}"),
        }
    }
}

/// A targeted pin the request itself makes impossible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `--prune` with paths.
    PruneWithPaths,
    ArgumentNotUtf8 {
        arg: String,
    },
    BadPath {
        arg: String,
        rule: PathRule,
    },
    OutsideProject {
        arg: String,
    },
    NoSuchPath {
        arg: String,
    },
    AmbiguousName {
        arg: String,
    },
    NameNotUtf8 {
        arg: String,
    },
    NotSealable {
        arg: String,
        name: String,
        kind: EntryKind,
    },
    BadKey {
        arg: String,
        rule: PathRule,
    },
    TheLockfile,
    Nested {
        inner: BundleKey,
        outer: BundleKey,
    },
    InsideRecorded {
        key: BundleKey,
        recorded: BundleKey,
    },
    AroundRecorded {
        key: BundleKey,
        recorded: BundleKey,
    },
    NoPattern {
        key: BundleKey,
        rule: PatternRule,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::PruneWithPaths => {
                f.write_str("--prune applies to a bulk pin (no PATH arguments) only")
            }
            Refusal::ArgumentNotUtf8 { arg } => {
                write!(f, "{arg}: a path that is not UTF-8 cannot be a bundle key")
            }
            Refusal::BadPath { arg, rule } => write!(f, "{}: the path {rule}", quoted(arg)),
            Refusal::OutsideProject { arg } => write!(
                f,
                "{} is outside the project root; Seal pins project-local roots only",
                quoted(arg)
            ),
            Refusal::NoSuchPath { arg } => {
                write!(f, "{}: no such file or directory", quoted(arg))
            }
            Refusal::AmbiguousName { arg } => write!(
                f,
                "{}: more than one entry has this name after NFC normalisation",
                quoted(arg)
            ),
            Refusal::NameNotUtf8 { arg } => {
                write!(f, "{arg}: a name on the path is not UTF-8")
            }
            Refusal::NotSealable { arg, name, kind } => write!(
                f,
                "{}: {} is {}; only directories and regular files can be sealed roots, and \
                 symlinks are never followed",
                quoted(arg),
                escaped(name),
                kind.describe()
            ),
            Refusal::BadKey { arg, rule } => {
                write!(f, "{}: the bundle key {rule}", quoted(arg))
            }
            Refusal::TheLockfile => {
                f.write_str("./seal.json is the project lockfile; it cannot be sealed as a bundle")
            }
            Refusal::Nested { inner, outer } => write!(
                f,
                "{inner} is inside {outer}; pin one bundle boundary for that subtree"
            ),
            Refusal::InsideRecorded { key, recorded } => write!(
                f,
                "{key} is inside the recorded bundle {recorded}; re-pin {recorded} instead, or \
                 change the discovery boundary first"
            ),
            Refusal::AroundRecorded { key, recorded } => write!(
                f,
                "{key} contains the recorded bundle {recorded}; a bundle key cannot hold another \
                 (remove {recorded} from seal.json first if the boundary should move up)"
            ),
            Refusal::NoPattern { key, rule } => {
                write!(f, "cannot add a discovery pattern for {key}: it {rule}")
            }
        }
    }
}

/// Why a plan cannot be made.
#[derive(Debug)]
pub enum PlanError {
    Discovery(DiscoveryError),
    /// Roots that cannot be pinned; nothing may be written.
    Blocked(Vec<Blocker>),
    Refused(Refusal),
}

impl From<DiscoveryError> for PlanError {
    fn from(e: DiscoveryError) -> Self {
        PlanError::Discovery(e)
    }
}

impl From<Refusal> for PlanError {
    fn from(r: Refusal) -> Self {
        PlanError::Refused(r)
    }
}

fn blocked(blockers: Vec<Blocker>) -> Result<(), PlanError> {
    if blockers.is_empty() {
        Ok(())
    } else {
        Err(PlanError::Blocked(blockers))
    }
}

/// The blockers of one hashed root (its problems, or being empty).
fn observed_blockers(root: &str, problems: &[Problem], files: usize, out: &mut Vec<Blocker>) {
    for problem in problems {
        out.push(Blocker::Problem {
            root: root.to_string(),
            problem: problem.clone(),
        });
    }
    if problems.is_empty() && files == 0 {
        out.push(Blocker::Empty {
            root: root.to_string(),
        });
    }
}

/// Every reason a surveyed root cannot be pinned.
fn member_blockers(member: &Surveyed<'_, ()>, out: &mut Vec<Blocker>) {
    let root = member.name.as_display();
    match &member.presence {
        Presence::Unverifiable { problem } => out.push(Blocker::Problem {
            root,
            problem: problem.clone(),
        }),
        Presence::Hashed { observed, .. } => {
            observed_blockers(&root, &observed.problems, observed.files.len(), out)
        }
        Presence::Absent | Presence::Unhashed => {}
    }
}

/// Plans a bulk pin: every discovered root and every recorded key, and
/// patterns (with their roots) for the `uncovered` agent artifact roots.
pub fn plan_bulk(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    prune: bool,
    uncovered: &[BundleKey],
    proposal: &Proposal,
    progress: Option<&HashProgress>,
) -> Result<PinPlan, PlanError> {
    let offer = offer_patterns(listings, lock, uncovered, proposal, progress)?;
    let members = survey(listings, lock, HashUnrecorded::Yes, progress)?;
    let mut blockers = Vec::new();
    for m in &members {
        member_blockers(m, &mut blockers);
    }
    blocked(blockers)?;
    let mut next = lock.clone();
    let mut rows = Vec::new();
    for m in &members {
        let RootName::Key(key) = &m.name else {
            continue;
        };
        let (kind, observed) = match (&m.presence, m.recorded) {
            (Presence::Absent, _) => (PinKind::Removed, None),
            (Presence::Hashed { observed, .. }, None) => (PinKind::New, Some(observed)),
            (Presence::Hashed { observed, .. }, Some(entry)) if entry.files == observed.files => {
                (PinKind::Unchanged, Some(observed))
            }
            (Presence::Hashed { observed, .. }, Some(_)) => (PinKind::Modified, Some(observed)),
            (Presence::Unverifiable { .. } | Presence::Unhashed, _) => continue,
        };
        let files = observed.map(|o| &o.files);
        match (kind, files) {
            (PinKind::New | PinKind::Modified, Some(files)) => {
                next.bundles
                    .insert(key.clone(), BundleEntry::from_files(files.clone()));
            }
            (PinKind::Removed, _) if prune => {
                next.bundles.remove(key);
            }
            _ => {}
        }
        rows.push(PinRow {
            key: key.as_str().to_string(),
            kind,
            file_count: files.map_or(0, BTreeMap::len),
            bytes: observed.map_or(0, |o| o.bytes),
        });
    }
    for (key, observed) in offer.roots {
        rows.push(PinRow {
            key: key.as_str().to_string(),
            kind: PinKind::New,
            file_count: observed.files.len(),
            bytes: observed.bytes,
        });
        next.bundles
            .insert(key, BundleEntry::from_files(observed.files));
    }
    next.discovery.extend(offer.patterns.iter().cloned());
    next.discovery.sort();
    Ok(PinPlan {
        lockfile: next,
        rows,
        added_patterns: offer.patterns,
        prune,
        skipped: offer.skipped,
    })
}

/// What a bulk pin offers for agent artifacts no discovery pattern covers:
/// the patterns, and the new roots they produce, hashed.
#[derive(Default)]
struct Offer {
    patterns: Vec<Pattern>,
    roots: BTreeMap<BundleKey, Observed<()>>,
    /// Uncovered roots left without a pattern, with why.
    skipped: Vec<(String, String)>,
}

/// Chooses a pattern for each uncovered root: the one the surface table
/// proposes (as `seal init` would), else the exact pattern of the root, the
/// first that nests with no pattern of `lock` nor one already chosen. A
/// wildcard pattern that would also produce a root that cannot be pinned
/// gives way to the exact patterns of the uncovered roots it was chosen for.
fn offer_patterns(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    uncovered: &[BundleKey],
    proposal: &Proposal,
    progress: Option<&HashProgress>,
) -> Result<Offer, PlanError> {
    let mut offer = Offer::default();
    if uncovered.is_empty() {
        return Ok(offer);
    }
    let mut chosen: Vec<(Pattern, Vec<&BundleKey>)> = Vec::new();
    for key in uncovered {
        if let Some((_, keys)) = chosen.iter_mut().find(|(p, _)| p.produces(key)) {
            keys.push(key);
            continue;
        }
        let fits = |p: &Pattern| {
            !lock
                .discovery
                .iter()
                .chain(chosen.iter().map(|(c, _)| c))
                .any(|q| q == p || q.can_nest_with(p))
        };
        let pick = proposal
            .patterns
            .iter()
            .filter(|p| p.produces(key))
            .cloned()
            .chain(Pattern::exact_for(key).ok())
            .find(|p| fits(p));
        match pick {
            Some(p) => chosen.push((p, vec![key])),
            None => offer.skipped.push((
                key.as_str().to_string(),
                "a discovery pattern for it would nest with one in seal.json".to_string(),
            )),
        }
    }
    let mut hashed = BTreeMap::new();
    let mut accepted: Vec<BundleKey> = Vec::new();
    for (pattern, keys) in chosen {
        let why = match offered_roots(listings, lock, &pattern, progress, &mut hashed)? {
            Ok(roots) => {
                accepted.extend(roots);
                offer.patterns.push(pattern);
                continue;
            }
            Err(why) => why,
        };
        for key in keys {
            // The wildcard fell through: each root on its own, when it can be.
            let exact = Pattern::exact_for(key)
                .ok()
                .filter(|_| pattern.has_wildcard());
            let own = match exact {
                Some(exact) => {
                    match offered_roots(listings, lock, &exact, progress, &mut hashed)? {
                        Ok(roots) => {
                            accepted.extend(roots);
                            offer.patterns.push(exact);
                            continue;
                        }
                        Err(own) => own,
                    }
                }
                None => why.clone(),
            };
            offer.skipped.push((key.as_str().to_string(), own));
        }
    }
    for key in accepted {
        if let Some(Ok(observed)) = hashed.remove(&key) {
            offer.roots.insert(key, observed);
        }
    }
    Ok(offer)
}

/// The roots `pattern` would add (those no pattern of `lock` produces), all
/// hashed into `hashed`; or why one of them cannot be pinned.
fn offered_roots(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    pattern: &Pattern,
    progress: Option<&HashProgress>,
    hashed: &mut BTreeMap<BundleKey, Result<Observed<()>, String>>,
) -> Result<Result<Vec<BundleKey>, String>, PlanError> {
    let expansion = expand(listings, std::slice::from_ref(pattern))?;
    if let Some(root) = expansion.unmappable.first() {
        return Ok(Err(format!(
            "{pattern} would also produce {}",
            unmappable(root)
        )));
    }
    let mut keys = Vec::new();
    for (key, locations) in expansion.roots {
        if lock.discovery.iter().any(|p| p.produces(&key)) {
            continue;
        }
        if !hashed.contains_key(&key) {
            let result = hash_produced(listings, &key, &locations, progress)?.map_err(|blockers| {
                blockers
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            });
            hashed.insert(key.clone(), result);
        }
        if let Some(Err(why)) = hashed.get(&key) {
            return Ok(Err(if pattern.has_wildcard() {
                format!("{pattern} would also produce {why}")
            } else {
                why.clone()
            }));
        }
        keys.push(key);
    }
    Ok(Ok(keys))
}

/// Plans a targeted pin of `keys` (already resolved, see [`resolve_target`]).
pub fn plan_targeted(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    keys: &[BundleKey],
    progress: Option<&HashProgress>,
) -> Result<PinPlan, PlanError> {
    let mut unique: Vec<BundleKey> = Vec::new();
    for key in keys {
        if key.rel_path() == LOCKFILE_NAME {
            return Err(Refusal::TheLockfile.into());
        }
        if !unique.contains(key) {
            unique.push(key.clone());
        }
    }
    for (i, a) in unique.iter().enumerate() {
        for b in &unique[i + 1..] {
            if a.is_ancestor_of(b) || b.is_ancestor_of(a) {
                let (outer, inner) = if a.is_ancestor_of(b) { (a, b) } else { (b, a) };
                return Err(Refusal::Nested {
                    inner: inner.clone(),
                    outer: outer.clone(),
                }
                .into());
            }
        }
    }
    for key in &unique {
        for recorded in lock.bundles.keys() {
            let refusal = if recorded.is_ancestor_of(key) {
                Refusal::InsideRecorded {
                    key: key.clone(),
                    recorded: recorded.clone(),
                }
            } else if key.is_ancestor_of(recorded) {
                Refusal::AroundRecorded {
                    key: key.clone(),
                    recorded: recorded.clone(),
                }
            } else {
                continue;
            };
            return Err(refusal.into());
        }
    }
    let mut next = lock.clone();
    let mut rows = Vec::new();
    let mut added_patterns = Vec::new();
    let mut blockers = Vec::new();
    for key in &unique {
        if !next.discovery.iter().any(|p| p.produces(key)) {
            let pattern = Pattern::exact_for(key).map_err(|rule| Refusal::NoPattern {
                key: key.clone(),
                rule,
            })?;
            added_patterns.push(pattern.clone());
            next.discovery.push(pattern);
            next.discovery.sort();
        }
        let Some(observed) = hash_key(listings, key, progress, &mut blockers)? else {
            continue;
        };
        let (files, bytes) = (observed.files, observed.bytes);
        let recorded = lock.bundles.get(key);
        let kind = match recorded {
            None => PinKind::New,
            Some(entry) if entry.files == files => PinKind::Unchanged,
            Some(_) => PinKind::Modified,
        };
        rows.push(PinRow {
            key: key.as_str().to_string(),
            kind,
            file_count: files.len(),
            bytes,
        });
        if kind != PinKind::Unchanged {
            next.bundles
                .insert(key.clone(), BundleEntry::from_files(files));
        }
    }
    blocked(blockers)?;
    Ok(PinPlan {
        lockfile: next,
        rows,
        added_patterns,
        prune: false,
        skipped: Vec::new(),
    })
}

/// Hashes the root of `key`, collecting reasons it cannot be pinned.
fn hash_key(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    progress: Option<&HashProgress>,
    blockers: &mut Vec<Blocker>,
) -> Result<Option<Observed<()>>, PlanError> {
    let root = key.as_str().to_string();
    let problem = |problem| Blocker::Problem {
        root: root.clone(),
        problem,
    };
    let (raw, kind) = match locate(listings, key)? {
        Located::Found { raw, kind } => (raw, kind),
        Located::Absent => {
            blockers.push(Blocker::Missing { root });
            return Ok(None);
        }
        Located::ThroughSymlink { at } => {
            blockers.push(problem(Problem::ThroughSymlink { path: lossy(&at) }));
            return Ok(None);
        }
        Located::Twins { at } => {
            let path = at.first().map(lossy).unwrap_or_default();
            blockers.push(problem(Problem::NfcTwins { path }));
            return Ok(None);
        }
    };
    let observed = observe_root(listings, &raw, kind, &KeepNothing, progress)?;
    let before = blockers.len();
    observed_blockers(&root, &observed.problems, observed.files.len(), blockers);
    Ok((blockers.len() == before).then_some(observed))
}

fn lossy(raw: &RawPath) -> String {
    raw.to_os_string().to_string_lossy().into_owned()
}

/// Turns a `seal pin` argument into a bundle key, resolving every segment to
/// the name the directory listing reports (SPEC: true-case path resolution;
/// never rely on a case-insensitive lookup by the OS). A relative argument is
/// relative to the project root; an absolute one must lie inside
/// `project_root` (the project's canonical path).
pub fn resolve_target(
    listings: &mut Listings<'_>,
    project_root: &Path,
    arg: &OsStr,
) -> Result<BundleKey, PlanError> {
    let Some(text) = arg.to_str() else {
        return Err(Refusal::ArgumentNotUtf8 {
            arg: super::escape::escaped_os(arg),
        }
        .into());
    };
    let relative = relative_to_project(project_root, text)?;
    let segments = normalize_user_path(&relative).map_err(|rule| Refusal::BadPath {
        arg: text.to_string(),
        rule,
    })?;
    let mut dir = RawPath::default();
    let mut true_names = Vec::new();
    for (i, segment) in segments.iter().enumerate() {
        let entries = listings.list(&dir)?;
        let exact: Vec<_> = entries
            .iter()
            .filter(|e| nfc_name(&e.name).as_deref() == Some(segment.as_str()))
            .collect();
        let entry = match exact.as_slice() {
            [one] => (*one).clone(),
            [] => {
                // The OS may still find it (a case-insensitive directory):
                // take the listed name of the same inode.
                let dir_fd = super::discovery::open_dirs(listings.root(), &dir).ok();
                let found = dir_fd
                    .as_ref()
                    .and_then(|fd| lstat_at(fd.as_fd(), OsStr::new(segment)).ok())
                    .and_then(|st| entries.iter().find(|e| e.ino == st.st_ino).cloned());
                found.ok_or_else(|| Refusal::NoSuchPath {
                    arg: text.to_string(),
                })?
            }
            _ => {
                return Err(Refusal::AmbiguousName {
                    arg: text.to_string(),
                }
                .into());
            }
        };
        let Some(name) = nfc_name(&entry.name) else {
            return Err(Refusal::NameNotUtf8 {
                arg: super::escape::escaped_os(arg),
            }
            .into());
        };
        let last = i + 1 == segments.len();
        match (entry.kind, last) {
            (EntryKind::Dir, _) | (EntryKind::File, true) => {}
            (kind, _) => {
                return Err(Refusal::NotSealable {
                    arg: text.to_string(),
                    name,
                    kind,
                }
                .into());
            }
        }
        dir = dir.join(&entry.name);
        true_names.push(name);
    }
    BundleKey::from_segments(&true_names).map_err(|rule| {
        Refusal::BadKey {
            arg: text.to_string(),
            rule,
        }
        .into()
    })
}

fn relative_to_project(root: &Path, text: &str) -> Result<String, Refusal> {
    if !text.starts_with('/') {
        return Ok(text.to_string());
    }
    let root = std::os::unix::ffi::OsStrExt::as_bytes(root.as_os_str());
    let rest = text
        .as_bytes()
        .strip_prefix(root)
        .filter(|r| r.is_empty() || r.starts_with(b"/"));
    match rest {
        Some(rest) => Ok(String::from_utf8_lossy(rest)
            .trim_start_matches('/')
            .to_string()),
        None => Err(Refusal::OutsideProject {
            arg: text.to_string(),
        }),
    }
}

/// The discovery patterns proposed for a project (by the caller, from what
/// it knows of where agents load extensions), and the names it had to leave
/// out, with why, so that the caller can warn about them.
#[derive(Debug, Default)]
pub struct Proposal {
    pub patterns: Vec<Pattern>,
    pub skipped: Vec<(String, String)>,
}

/// Plans `seal init`: the `proposal`'s patterns and every root they produce.
pub fn plan_init(
    listings: &mut Listings<'_>,
    policy: Policy,
    proposal: Proposal,
    progress: Option<&HashProgress>,
) -> Result<InitPlan, PlanError> {
    let mut lock = Lockfile::empty(policy);
    lock.discovery = proposal.patterns.clone();
    lock.discovery.sort();
    let expansion = expand(listings, &lock.discovery)?;
    let mut blockers: Vec<Blocker> = expansion.unmappable.iter().map(unmappable).collect();
    let mut sizes = BTreeMap::new();
    for (key, locations) in &expansion.roots {
        match hash_produced(listings, key, locations, progress)? {
            Ok(observed) => {
                sizes.insert(key.clone(), observed.bytes);
                lock.bundles
                    .insert(key.clone(), BundleEntry::from_files(observed.files));
            }
            Err(found) => blockers.extend(found),
        }
    }
    blocked(blockers)?;
    Ok(InitPlan {
        lockfile: lock,
        proposed: proposal.patterns,
        skipped: proposal.skipped,
        sizes,
    })
}

/// The blocker of a produced root no bundle key can name.
fn unmappable(root: &crate::discovery::UnmappableRoot) -> Blocker {
    Blocker::Unmappable {
        shown: format!("./{}", root.raw.display()),
        reason: root.reason(),
    }
}

/// Hashes a root a pattern produced (at `locations`: more than one means NFC
/// twins), or says why it cannot be pinned.
fn hash_produced(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    locations: &[(RawPath, EntryKind)],
    progress: Option<&HashProgress>,
) -> Result<Result<Observed<()>, Vec<Blocker>>, PlanError> {
    let root = key.as_str().to_string();
    let [(raw, kind)] = locations else {
        let path = locations.first().map(|(r, _)| lossy(r)).unwrap_or_default();
        return Ok(Err(vec![Blocker::Problem {
            root,
            problem: Problem::NfcTwins { path },
        }]));
    };
    let observed = observe_root(listings, raw, *kind, &KeepNothing, progress)?;
    let mut blockers = Vec::new();
    observed_blockers(
        &root,
        &observed.problems,
        observed.files.len(),
        &mut blockers,
    );
    Ok(if blockers.is_empty() {
        Ok(observed)
    } else {
        Err(blockers)
    })
}
