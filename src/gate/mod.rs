//! The gate: what may a path of the project show, and what bytes may an open
//! of it serve? Pure decisions over the core; no FUSE types, so every rule is
//! tested without a mount (the FUSE adapter only translates).
//!
//! Every path is one of: ordinary; a container (a directory on the way to a
//! sealed root or an agent surface); inside a sealed root (a lockfile key or a
//! root its discovery patterns produce); inside an agent artifact that no
//! sealed root covers (an unverified artifact, from [`crate::surfaces`]).
//!
//! * Ordinary paths are shown and opened as they are (symlinks obey
//!   [`links::LinkRule`]).
//! * A sealed root shows up in lookup and readdir only after a fresh
//!   verification says so; every open inside it waits for a verification that
//!   started after the open arrived and is served from that verification's
//!   snapshot of the file ([`flight`]).
//! * Under `block`, Unverified and Mismatch bundles and unverified artifacts
//!   are absent; under `warn` they are visible and every load is logged.
//! * When `seal.json` is invalid or missing, every sealed and surface path is
//!   absent until it is valid again (fail closed).

pub mod audit;
pub mod flight;
pub mod links;
pub mod live;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use audit::{AuditLog, Event, Record};
use flight::{Flights, Run};
use links::LinkRule;
use live::{LiveLockfile, LockView};

use crate::core::discovery::{Listings, has_trackable_entry};
use crate::core::fs::{EntryKind, RawPath};
use crate::core::hash::observe_root;
use crate::core::lockfile::{Lockfile, Policy};
use crate::core::paths::{BundleKey, FilePath};
use crate::core::verify::{BundleReport, BundleState, verify_key};
use crate::snapshot::{Snapshot, SnapshotKeeper};
use crate::surfaces::{self, SurfaceClass, SurfaceRule};

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

    pub fn child(&self, name: &OsStr) -> ViewPath {
        let mut names = self.names.clone();
        let utf8 = self.utf8 && name.to_str().is_some();
        names.push(crate::core::paths::nfc(&name.to_string_lossy()));
        ViewPath {
            raw: self.raw.join(name),
            names,
            utf8,
        }
    }

    pub fn parent(&self) -> Option<ViewPath> {
        if self.names.is_empty() {
            return None;
        }
        let mut raw = self.raw.clone();
        raw.0.pop();
        let mut names = self.names.clone();
        names.pop();
        let utf8 = raw.0.iter().all(|n| n.to_str().is_some());
        Some(ViewPath { raw, names, utf8 })
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
    fn prefix(&self, n: usize) -> ViewPath {
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
    fn rel_from(&self, n: usize) -> Option<FilePath> {
        if self.names.len() == n {
            return Some(FilePath::single_file());
        }
        FilePath::parse(&self.names[n..].join("/")).ok()
    }
}

/// Where a path sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Ordinary,
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
    /// Inside (or at) a root a discovery pattern produces whose name is not
    /// UTF-8: it can have no key, so it is unverified.
    Unmappable {
        root_len: usize,
    },
}

impl Place {
    fn root_len(&self) -> Option<usize> {
        match self {
            Place::Sealed { root_len, .. }
            | Place::Artifact { root_len, .. }
            | Place::Unmappable { root_len } => Some(*root_len),
            Place::Ordinary | Place::Container => None,
        }
    }
}

/// Classifies `path` against the lockfile's patterns, then the built-in
/// surfaces (lockfile roots win: a key covers whatever surface it sits in).
pub fn place(lock: &Lockfile, path: &ViewPath) -> Place {
    // The project's own lockfile is never a sealed root (SPEC §What Gets
    // Hashed); it is shown read-only like any ordinary file.
    if path.depth() == 1 && path.raw.0[0] == crate::core::lockfile::LOCKFILE_NAME {
        return Place::Ordinary;
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
    match surfaces::classify(&names) {
        SurfaceClass::Outside => Place::Ordinary,
        SurfaceClass::Container => Place::Container,
        SurfaceClass::Artifact { root_len, rule } => Place::Artifact { root_len, rule },
    }
}

/// Who asked (for the audit log).
#[derive(Debug, Clone, Copy)]
pub struct Who {
    pub pid: u32,
}

/// What a verification run found about one root.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub state: RootState,
    pub report: Option<BundleReport>,
    pub policy: Policy,
    /// Set when the lockfile was invalid at the start of the run.
    pub fail_closed: Option<Arc<String>>,
    pub micros: u64,
}

/// The state of a root at verification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootState {
    Bundle(BundleState),
    /// A directory with nothing trackable in it: not a bundle, nothing to load.
    NotABundle,
}

impl Verdict {
    /// Whether the root may be shown and its files served.
    pub fn allows(&self) -> bool {
        if self.fail_closed.is_some() {
            return false;
        }
        match self.state {
            RootState::NotABundle | RootState::Bundle(BundleState::Verified) => true,
            RootState::Bundle(BundleState::Unverified | BundleState::Mismatch) => {
                self.policy == Policy::Warn
            }
            RootState::Bundle(BundleState::Removed) => false,
        }
    }

    fn outcome(&self) -> String {
        if let Some(reason) = &self.fail_closed {
            return format!("fail-closed: {reason}");
        }
        match self.state {
            RootState::Bundle(s) => s.as_str().to_string(),
            RootState::NotABundle => "empty".to_string(),
        }
    }
}

/// Whether the kernel may cache a lookup or attributes of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caching {
    /// Ordinary paths and containers: their visibility never depends on a
    /// verification.
    Cacheable,
    /// Sealed and surface paths: every lookup must reach the gate.
    Fresh,
}

/// The answer to a lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    Hidden,
    Shown(Caching),
}

impl Visibility {
    pub fn is_shown(self) -> bool {
        matches!(self, Visibility::Shown(_))
    }
}

impl Place {
    /// How long the kernel may remember answers about this place.
    pub fn caching(&self) -> Caching {
        match self {
            Place::Ordinary | Place::Container => Caching::Cacheable,
            Place::Sealed { .. } | Place::Artifact { .. } | Place::Unmappable { .. } => {
                Caching::Fresh
            }
        }
    }
}

/// What an open may do.
#[derive(Debug)]
pub enum OpenDecision {
    /// An ordinary file: open the real one.
    Ordinary,
    /// Serve these verified bytes.
    Snapshot(Arc<Snapshot>),
    /// Refuse: the path is hidden.
    Deny,
}

/// Settings of one gate.
pub struct GateConfig {
    pub project: Arc<OwnedFd>,
    pub lockfile_bytes: Vec<u8>,
    pub lockfile: Lockfile,
    pub links: LinkRule,
    pub audit: Option<AuditLog>,
}

/// The gate of one mounted project.
pub struct Gate {
    project: Arc<OwnedFd>,
    live: LiveLockfile,
    flights: Flights<Verdict>,
    links: LinkRule,
    audit: Option<AuditLog>,
}

impl Gate {
    pub fn new(config: GateConfig) -> Gate {
        Gate {
            project: config.project,
            live: LiveLockfile::new(config.lockfile_bytes, config.lockfile),
            flights: Flights::default(),
            links: config.links,
            audit: config.audit,
        }
    }

    pub fn project_fd(&self) -> BorrowedFd<'_> {
        self.project.as_fd()
    }

    /// The lockfile now (re-read).
    pub fn lock_view(&self) -> LockView {
        self.live.current(self.project.as_fd())
    }

    /// [`Gate::caching`] on the lockfile as last read (no new read): for
    /// scheduling requests, never for deciding them.
    pub fn cached_caching(&self, path: &ViewPath) -> Caching {
        self.cached_place(path).caching()
    }

    /// The place of `path` on the lockfile as last read (no new read): for
    /// scheduling requests, never for deciding them.
    pub fn cached_place(&self, path: &ViewPath) -> Place {
        place(self.live.last().patterns_source(), path)
    }

    /// Whether the kernel may cache answers about `path`.
    pub fn caching(&self, path: &ViewPath) -> Caching {
        place(self.lock_view().patterns_source(), path).caching()
    }

    /// Whether the entry `path` (of `kind`, with `link_target` when it is a
    /// symlink) shows up in lookup and readdir, and for how long.
    pub fn lookup(
        &self,
        path: &ViewPath,
        kind: EntryKind,
        link_target: Option<&OsStr>,
        who: Who,
    ) -> Visibility {
        self.lookup_in(&self.lock_view(), path, kind, link_target, who)
    }

    /// [`Gate::lookup`] against a lockfile view the caller read for this
    /// request (a directory listing decides all its entries on one read).
    pub fn lookup_in(
        &self,
        view: &LockView,
        path: &ViewPath,
        kind: EntryKind,
        link_target: Option<&OsStr>,
        who: Who,
    ) -> Visibility {
        let place = place(view.patterns_source(), path);
        if self.decide_visible(view, &place, path, kind, link_target, who) {
            Visibility::Shown(place.caching())
        } else {
            Visibility::Hidden
        }
    }

    /// [`Gate::lookup`] as a yes or no.
    pub fn visible(
        &self,
        path: &ViewPath,
        kind: EntryKind,
        link_target: Option<&OsStr>,
        who: Who,
    ) -> bool {
        self.lookup(path, kind, link_target, who).is_shown()
    }

    fn decide_visible(
        &self,
        view: &LockView,
        place: &Place,
        path: &ViewPath,
        kind: EntryKind,
        link_target: Option<&OsStr>,
        who: Who,
    ) -> bool {
        match place {
            Place::Ordinary | Place::Container => {
                if kind == EntryKind::Symlink {
                    let dir = path.parent().map(|p| p.raw).unwrap_or_default();
                    return link_target.is_some_and(|t| self.links.allows(&dir, t));
                }
                return true;
            }
            Place::Sealed { .. } | Place::Artifact { .. } | Place::Unmappable { .. } => {}
        }
        let lock = match view {
            LockView::Invalid { reason, .. } => {
                self.record_fail_closed("lookup", place, path, reason, who);
                return false;
            }
            LockView::Valid(lock) => lock,
        };
        match place {
            Place::Sealed { key, root_len } if *root_len == path.depth() => {
                let verdict = self.sealed_run(key, None);
                let allowed = verdict.verdict.allows();
                if !allowed {
                    self.record(
                        Event::Hide,
                        "lookup",
                        Some(key),
                        path,
                        &verdict.verdict,
                        who,
                    );
                }
                allowed
            }
            Place::Sealed { key, root_len } => match lock.policy {
                Policy::Warn => true,
                // Inside a root the kernel reached through a fresh lookup of
                // the root: show what the lockfile records (files and the
                // directories holding them); the open decides the bytes.
                Policy::Block => lock.bundles.get(key).is_some_and(|entry| {
                    let rel = path.names[*root_len..].join("/");
                    entry.files.keys().any(|f| {
                        f.as_str() == rel
                            || crate::core::paths::is_segment_ancestor(&rel, f.as_str())
                    })
                }),
            },
            Place::Artifact { root_len, .. } | Place::Unmappable { root_len } => {
                match lock.policy {
                    Policy::Warn => true,
                    Policy::Block => {
                        let shown = self.artifact_is_empty(&path.prefix(*root_len));
                        if !shown && *root_len == path.depth() {
                            self.record_artifact(
                                Event::Hide,
                                "lookup",
                                place,
                                path,
                                lock.policy,
                                None,
                                who,
                            );
                        }
                        shown
                    }
                }
            }
            Place::Ordinary | Place::Container => true,
        }
    }

    /// Decides an open of the regular file at `path`.
    pub fn open(&self, path: &ViewPath, who: Who) -> OpenDecision {
        let view = self.lock_view();
        let place = place(view.patterns_source(), path);
        let Some(root_len) = place.root_len() else {
            return OpenDecision::Ordinary;
        };
        if let LockView::Invalid { reason, .. } = &view {
            self.record_fail_closed("open", &place, path, reason, who);
            return OpenDecision::Deny;
        }
        let policy = view.patterns_source().policy;
        let Some(rel) = path.rel_from(root_len) else {
            return OpenDecision::Deny;
        };
        match &place {
            Place::Sealed { key, .. } => {
                let run = self.sealed_run(key, Some(&rel));
                let verdict = &run.verdict;
                if !verdict.allows() {
                    self.record(Event::Hide, "open", Some(key), path, verdict, who);
                    return OpenDecision::Deny;
                }
                let Some(snapshot) = run.take_snapshot(&rel) else {
                    // Allowed yet not captured: the file is not part of what
                    // was verified (it appeared after the walk). Refuse.
                    self.record(Event::Hide, "open", Some(key), path, verdict, who);
                    return OpenDecision::Deny;
                };
                let event = if verdict.state == RootState::Bundle(BundleState::Verified) {
                    Event::Allow
                } else {
                    Event::Warn
                };
                self.record(event, "open", Some(key), path, verdict, who);
                OpenDecision::Snapshot(snapshot)
            }
            Place::Artifact { .. } | Place::Unmappable { .. } => {
                if policy == Policy::Block {
                    self.record_artifact(Event::Hide, "open", &place, path, policy, None, who);
                    return OpenDecision::Deny;
                }
                let root = path.prefix(root_len);
                let flight = self.flights.get(&format!("artifact:{}", root.display()));
                let run = flight.fresh(Some(&rel), |wanted| self.observe_artifact(&root, wanted));
                let snapshot = run.take_snapshot(&rel);
                self.record_artifact(
                    Event::Warn,
                    "open",
                    &place,
                    path,
                    policy,
                    Some(run.verdict.micros),
                    who,
                );
                match snapshot {
                    Some(s) => OpenDecision::Snapshot(s),
                    None => OpenDecision::Deny,
                }
            }
            Place::Ordinary | Place::Container => OpenDecision::Ordinary,
        }
    }

    /// A fresh verification of sealed root `key` (shared with concurrent
    /// requests that arrived before it started), keeping `want`'s bytes.
    fn sealed_run(&self, key: &BundleKey, want: Option<&FilePath>) -> Arc<Run<Verdict>> {
        let flight = self.flights.get(key.as_str());
        flight.fresh(want, |wanted| self.verify_sealed(key, wanted))
    }

    /// One verification run: reads the lockfile as it is now, then the disk.
    fn verify_sealed(
        &self,
        key: &BundleKey,
        wanted: &[FilePath],
    ) -> (Verdict, HashMap<FilePath, Arc<Snapshot>>) {
        let started = Instant::now();
        let view = self.lock_view();
        let lock = view.patterns_source();
        let mut verdict = Verdict {
            state: RootState::Bundle(BundleState::Unverified),
            report: None,
            policy: lock.policy,
            fail_closed: match &view {
                LockView::Invalid { reason, .. } => Some(reason.clone()),
                LockView::Valid(_) => None,
            },
            micros: 0,
        };
        let mut kept = HashMap::new();
        if verdict.fail_closed.is_none() {
            let entry = lock.bundles.get(key);
            let mut listings = Listings::new(self.project.as_fd());
            let wanted_fn = |p: &FilePath| wanted.contains(p);
            match verify_key(
                &mut listings,
                key,
                entry,
                &SnapshotKeeper { wanted: &wanted_fn },
            ) {
                Ok((report, observed)) => {
                    verdict.state = RootState::Bundle(report.state);
                    if let Some(observed) = observed {
                        if entry.is_none()
                            && observed.files.is_empty()
                            && observed.problems.is_empty()
                        {
                            verdict.state = RootState::NotABundle;
                        }
                        kept = with_digests(observed.kept, &observed.files);
                    }
                    verdict.report = Some(report);
                }
                Err(e) => {
                    tracing::warn!("verification of {key} failed: {e}");
                    verdict.state = RootState::Bundle(BundleState::Mismatch);
                }
            }
        }
        verdict.micros = started.elapsed().as_micros() as u64;
        (verdict, kept)
    }

    /// Hashes an artifact root (warn mode) keeping the wanted files.
    fn observe_artifact(
        &self,
        root: &ViewPath,
        wanted: &[FilePath],
    ) -> (Verdict, HashMap<FilePath, Arc<Snapshot>>) {
        let started = Instant::now();
        let mut listings = Listings::new(self.project.as_fd());
        let wanted_fn = |p: &FilePath| wanted.contains(p);
        let keeper = SnapshotKeeper { wanted: &wanted_fn };
        let kept = match root_kind(&mut listings, &root.raw)
            .map(|k| observe_root(&mut listings, &root.raw, k, &keeper, None))
        {
            Some(Ok(observed)) => with_digests(observed.kept, &observed.files),
            _ => HashMap::new(),
        };
        let verdict = Verdict {
            state: RootState::Bundle(BundleState::Unverified),
            report: None,
            policy: Policy::Warn,
            fail_closed: None,
            micros: started.elapsed().as_micros() as u64,
        };
        (verdict, kept)
    }

    /// True when an artifact root is a directory with nothing trackable (not
    /// something an agent could load).
    fn artifact_is_empty(&self, root: &ViewPath) -> bool {
        let mut listings = Listings::new(self.project.as_fd());
        match root_kind(&mut listings, &root.raw) {
            Some(EntryKind::Dir) => !has_trackable_entry(&mut listings, &root.raw).unwrap_or(true),
            Some(_) => false,
            None => true,
        }
    }

    fn record(
        &self,
        event: Event,
        op: &'static str,
        key: Option<&BundleKey>,
        path: &ViewPath,
        verdict: &Verdict,
        who: Who,
    ) {
        if event == Event::Hide || event == Event::Warn {
            tracing::info!(
                "{} {op} {} ({})",
                if event == Event::Hide {
                    "hid"
                } else {
                    "warned on"
                },
                crate::core::escape::escaped(&path.display()),
                verdict.outcome()
            );
        }
        let Some(audit) = &self.audit else { return };
        let report = verdict.report.as_ref();
        audit.write(&Record {
            time: audit::rfc3339(SystemTime::now()),
            event: if verdict.fail_closed.is_some() {
                Event::FailClosed
            } else {
                event
            },
            op,
            key: key.map(|k| k.as_str().to_string()),
            path: path.display(),
            outcome: verdict.outcome(),
            modified: report.map(|r| r.modified.clone()).unwrap_or_default(),
            added: report.map(|r| r.added.clone()).unwrap_or_default(),
            missing: report.map(|r| r.missing.clone()).unwrap_or_default(),
            problems: report
                .map(|r| r.problems.iter().map(|p| p.to_string()).collect())
                .unwrap_or_default(),
            pid: who.pid,
            comm: audit::command_name(who.pid),
            verify_us: Some(verdict.micros),
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn record_artifact(
        &self,
        event: Event,
        op: &'static str,
        place: &Place,
        path: &ViewPath,
        policy: Policy,
        micros: Option<u64>,
        who: Who,
    ) {
        let why = match place {
            Place::Artifact { rule, .. } => format!("unverified artifact: {}", rule.describe()),
            _ => "unverified: a name is not UTF-8".to_string(),
        };
        tracing::info!(
            "{event:?} {op} {} ({why}, {} mode)",
            crate::core::escape::escaped(&path.display()),
            policy.as_str()
        );
        let Some(audit) = &self.audit else { return };
        audit.write(&Record {
            time: audit::rfc3339(SystemTime::now()),
            event,
            op,
            key: None,
            path: path.display(),
            outcome: why,
            modified: vec![],
            added: vec![],
            missing: vec![],
            problems: vec![],
            pid: who.pid,
            comm: audit::command_name(who.pid),
            verify_us: micros,
        });
    }

    fn record_fail_closed(
        &self,
        op: &'static str,
        place: &Place,
        path: &ViewPath,
        reason: &str,
        who: Who,
    ) {
        tracing::warn!(
            "fail closed on {}: {reason}",
            crate::core::escape::escaped(&path.display())
        );
        let Some(audit) = &self.audit else { return };
        audit.write(&Record {
            time: audit::rfc3339(SystemTime::now()),
            event: Event::FailClosed,
            op,
            key: match place {
                Place::Sealed { key, .. } => Some(key.as_str().to_string()),
                _ => None,
            },
            path: path.display(),
            outcome: format!("fail-closed: {reason}"),
            modified: vec![],
            added: vec![],
            missing: vec![],
            problems: vec![],
            pid: who.pid,
            comm: audit::command_name(who.pid),
            verify_us: None,
        });
    }
}

/// Snapshots labelled with the digest their bytes were hashed to in the same
/// read: the FUSE layer shares a passthrough backing between handles only
/// when these digests are equal, so an unlabelled snapshot must never occur.
fn with_digests(
    kept: std::collections::BTreeMap<FilePath, Snapshot>,
    files: &std::collections::BTreeMap<FilePath, crate::core::digest::Digest>,
) -> HashMap<FilePath, Arc<Snapshot>> {
    kept.into_iter()
        .map(|(p, s)| {
            let digest = files.get(&p).copied();
            debug_assert!(digest.is_some(), "a kept file has no digest");
            (p, Arc::new(s.verified_as(digest)))
        })
        .collect()
}

/// The kind of the entry at `raw` (by listing its parent), if it exists.
fn root_kind(listings: &mut Listings<'_>, raw: &RawPath) -> Option<EntryKind> {
    let (name, parent) = raw.0.split_last()?;
    let entries = listings.list(&RawPath(parent.to_vec())).ok()?;
    entries.iter().find(|e| &e.name == name).map(|e| e.kind)
}
