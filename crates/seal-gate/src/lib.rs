//! The gate: what may a path of the project show, and what bytes may an open
//! of it serve? Pure decisions over the core; no FUSE types, so every rule is
//! tested without a mount (the mount only translates).
//!
//! Every path is one of the [`Place`]s: ordinary; the lockfile; a container
//! (a directory on the way to a sealed root or an agent surface); inside a
//! sealed root (a lockfile key or a root its discovery patterns produce);
//! inside an agent artifact that no sealed root covers (from
//! [`crate::surfaces`]). For each request the gate gathers the [`State`] the
//! decision needs — a fresh verification for a sealed root ([`flight`]), an
//! assessment of an artifact ([`assess`]), the symlink rule ([`links`]) — and
//! asks the one decision table, [`decide`]. It then records the decision
//! ([`audit`]) and, for an open it allows inside a root, hands out the
//! snapshot of the verified bytes.
//!
//! `seal.json` is re-read for every decision ([`live`]); when it is invalid
//! or missing, every sealed and surface path is absent until it is valid
//! again (fail closed).
//!
//! A machine policy ([`crate::policy`], through [`Gate::with_machine`]) only
//! ever makes decisions stricter: its minimum policy raises the project's,
//! its extra surfaces add artifacts, its protected paths and read-only rule
//! refuse more writes ([`Guard`]), and with `requireSeal` a missing
//! `seal.json` is the empty lockfile until one appears.

pub mod assess;
pub mod audit;
pub mod cache;
pub mod decision;
pub mod feed;
pub mod filters;
pub mod flight;
#[cfg(test)]
mod link_tests;
pub mod links;
pub mod live;
#[cfg(test)]
mod machine_tests;
pub mod memory;
pub mod place;
pub mod policy;
pub mod propose;
pub mod snapshot;
pub mod surfaces;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

use audit::{AuditLog, Event, Record};
use flight::{Answer, Flights};
use links::LinkRule;
use live::{LiveLockfile, LockView};

pub use assess::{SealedAssessment, assess_artifact, assess_sealed};
pub use decision::{
    Caching, Change, ChangeDecision, ChangeReason, Decision, Guard, Reason, RootState, State,
    decide, decide_change,
};
pub use place::{Place, ViewPath, place, place_with};

use crate::policy::{MachinePolicy, Protection, Source};
use crate::snapshot::{Snapshot, SnapshotKeeper};
use seal_core::discovery::Listings;
use seal_core::effort::{AfterProof, Cancel, Effort};
use seal_core::fs::EntryKind;
use seal_core::hash::observe_root;
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::paths::{BundleKey, FilePath, is_excluded_below_root};
use seal_core::verify::{BundleReport, BundleState};

/// Who asked: the process (for the audit log) and the credentials it made
/// the request with (changes in the writable view are made as them).
#[derive(Debug, Clone, Copy)]
pub struct Who {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
}

/// What one verification run of a root found (shared by the requests it
/// answers).
#[derive(Debug, Clone)]
pub struct Assessment {
    pub state: RootState,
    pub report: Option<BundleReport>,
    pub policy: Policy,
    /// Set when the lockfile was invalid at the start of the run.
    pub fail_closed: Option<Arc<String>>,
    pub micros: u64,
    /// Which run this was: a number no other run of any gate has (the
    /// copies a run leaves in the cache and in its answers share it).
    pub run: u64,
}

/// Numbers runs (see [`Assessment::run`]).
static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_run() -> u64 {
    RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Assessment {
    /// The state the decision table gets from this run.
    pub fn state(&self) -> State {
        if self.fail_closed.is_some() {
            State::LockfileInvalid
        } else {
            State::Root(self.state)
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
    /// The change feed that lets verifications be reused while it proves
    /// them current; `None` verifies afresh at every decision.
    pub feed: Option<Arc<crate::feed::Feed>>,
}

/// The gate of one mounted project.
pub struct Gate {
    project: Arc<OwnedFd>,
    live: LiveLockfile,
    flights: Flights<Assessment>,
    cache: cache::VerifiedCache,
    /// Live snapshots by the digest of their bytes (see [`Gate::shared`]).
    by_digest: std::sync::Mutex<HashMap<seal_core::digest::Digest, std::sync::Weak<Snapshot>>>,
    links: LinkRule,
    audit: Option<AuditLog>,
    /// The machine policy (none unless [`Gate::with_machine`] sets one).
    machine: Arc<MachinePolicy>,
}

impl Gate {
    pub fn new(config: GateConfig) -> Gate {
        Gate {
            project: config.project,
            live: LiveLockfile::new(config.lockfile_bytes, config.lockfile, config.feed.clone()),
            flights: Flights::default(),
            cache: cache::VerifiedCache::with_feed(config.feed),
            by_digest: std::sync::Mutex::new(HashMap::new()),
            links: config.links,
            audit: config.audit,
            machine: Arc::new(MachinePolicy::default()),
        }
    }

    /// Decides under `machine` too: its minimum policy, extra surfaces,
    /// protected paths and read-only rule. `implied`: the lockfile the gate
    /// was built with stands in for a missing `seal.json` (the policy
    /// requires Seal), and keeps doing so while the file stays missing.
    pub fn with_machine(mut self, machine: Arc<MachinePolicy>, implied: bool) -> Gate {
        if implied {
            self.live.imply_while_missing();
        }
        self.machine = machine;
        self
    }

    /// The place of `path` on `lock`, with the machine policy's surfaces.
    fn place(&self, lock: &Lockfile, path: &ViewPath) -> Place {
        place_with(lock, &self.machine.extra_surfaces, path)
    }

    /// The policy in force for `lock` (the strictest of the project's and
    /// the machine's) and who set it.
    pub fn policy_of(&self, lock: &Lockfile) -> (Policy, Source) {
        self.machine.policy_of(lock, self.live.is_implied(lock))
    }

    /// Whether verifications are reused while the change feed proves them
    /// current (else every decision verifies afresh).
    pub fn reuses_verifications(&self) -> bool {
        self.cache.feed().is_some()
    }

    /// Releases what the cache keeps for bundles not used lately (the mount
    /// calls it now and then, so memory comes back when the load goes).
    pub fn sweep(&self) {
        self.cache.sweep();
        let mut by_digest = self.by_digest.lock().unwrap_or_else(|e| e.into_inner());
        by_digest.retain(|_, s| s.strong_count() > 0);
        // Reading every file of a big bundle once fills it with one entry
        // per file; the room goes when they do.
        crate::memory::shrink_if_sparse(&mut by_digest);
    }

    /// The bundle whose subscriptions carry `tag` (see [`crate::feed::Notice`]).
    pub fn bundle_of_tag(&self, tag: u64) -> Option<BundleKey> {
        self.cache.key_of(tag)
    }

    /// The change feed, when verifications are reused.
    pub fn feed(&self) -> Option<&Arc<crate::feed::Feed>> {
        self.cache.feed()
    }

    /// Releases every snapshot the cache keeps (not those open handles hold).
    pub fn release_kept_bytes(&self) {
        self.cache.release_kept();
    }

    /// The audit log, when the view has one (for the records of a view's
    /// and a run's start and end).
    pub fn audit(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }

    /// Records a change the view refused without asking the table (a
    /// read-only view): a `deny-write` record.
    pub fn refused_in_read_only_view(&self, path: &ViewPath, op: &'static str, who: Who) {
        let place = self.cached_place(path);
        self.record_denied_write(op, &place, path, ChangeReason::ReadOnlyView, who);
    }

    pub fn project_fd(&self) -> BorrowedFd<'_> {
        self.project.as_fd()
    }

    /// The lockfile now (re-read).
    pub fn lock_view(&self) -> LockView {
        self.live.current(self.project.as_fd())
    }

    /// The place of `path` on the lockfile as last read (no new read): for
    /// scheduling requests and caching hints, never for deciding them.
    pub fn cached_place(&self, path: &ViewPath) -> Place {
        self.place(self.live.last().patterns_source(), path)
    }

    /// Whether deciding a request about `path` may verify a bundle (on the
    /// lockfile as last read): lookups and opens in a sealed root or an
    /// artifact, and listings of a container (they decide the roots inside
    /// it). It only steers where a request runs, never what it decides.
    ///
    /// A bundle whose verification the change feed proves current is light:
    /// its requests never wait behind the verification of another (a hostile
    /// tree being listed cannot hold up opens of an approved bundle).
    pub fn may_verify(&self, path: &ViewPath, listing: bool) -> bool {
        let last = self.live.last();
        match self.place(last.patterns_source(), path) {
            Place::Sealed { key, .. } => match &last {
                LockView::Valid(lock) => {
                    let policy = self.policy_of(lock).0;
                    !self.cache.is_current(&key, lock.bundles.get(&key), policy)
                }
                LockView::Invalid { .. } => true,
            },
            Place::Artifact { .. } | Place::Unmappable { .. } => true,
            Place::Container => listing,
            Place::Ordinary | Place::Lockfile => false,
        }
    }

    /// Decides whether the entry `path` (of `kind`, with `link_target` when
    /// it is a symlink) shows up in lookup and readdir, and for how long.
    pub fn lookup(
        &self,
        path: &ViewPath,
        kind: EntryKind,
        link_target: Option<&OsStr>,
        who: Who,
    ) -> Decision {
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
    ) -> Decision {
        let lock = view.patterns_source();
        let place = self.place(lock, path);
        let (state, assessment) = self.lookup_state(view, &place, path, kind, link_target);
        let policy = self.policy_of(lock).0;
        let mut decision = decide(&place, state, policy);
        if let (Place::Sealed { key, .. }, LockView::Valid(valid), true) =
            (&place, view, decision.shown)
        {
            // Shown on a verification the change feed keeps proving current:
            // the kernel may remember it (and is told when it changes).
            if self.cache.is_current(key, valid.bundles.get(key), policy) {
                decision.caching = Caching::Watched;
            }
        }
        let at_root = place.root_len() == Some(path.depth());
        // Lookups record what they hide at a root (and every fail-closed);
        // what they show is recorded when it is opened.
        if !decision.shown && (at_root || decision.event == Some(Event::FailClosed)) {
            self.record(
                "lookup",
                &place,
                path,
                &decision,
                assessment.as_deref(),
                view,
                who,
            );
        }
        decision
    }

    /// The state a lookup decides on, with the run that assessed it.
    fn lookup_state(
        &self,
        view: &LockView,
        place: &Place,
        path: &ViewPath,
        kind: EntryKind,
        link_target: Option<&OsStr>,
    ) -> (State, Option<Arc<Assessment>>) {
        if let (EntryKind::Symlink, Some(target), LockView::Valid(lock)) = (kind, link_target, view)
            && let Some(link) = self.surface_link(lock, place, path, target)
        {
            return (State::SurfaceLink(link.state), None);
        }
        if !place.is_gated() {
            if kind != EntryKind::Symlink {
                return (State::Plain, None);
            }
            let dir = path.parent().map(|p| p.raw).unwrap_or_default();
            let stays_behind_gate = link_target.is_some_and(|t| self.links.allows(&dir, t));
            return (State::Link { stays_behind_gate }, None);
        }
        let LockView::Valid(lock) = view else {
            return (State::LockfileInvalid, None);
        };
        let root_len = place.root_len().unwrap_or(0);
        if is_excluded_below_root(path.names().skip(root_len)) {
            return (State::Recorded(false), None);
        }
        match place {
            Place::Sealed { key, root_len } if *root_len == path.depth() => {
                let run = self.sealed_run(key, None).verdict;
                (run.state(), Some(run))
            }
            Place::Sealed { key, root_len } => {
                let rel = path.rel_text(*root_len);
                let recorded = lock
                    .bundles
                    .get(key)
                    .is_some_and(|entry| entry.records(&rel));
                (State::Recorded(recorded), None)
            }
            Place::Artifact { root_len, .. } | Place::Unmappable { root_len } => {
                let mut listings = Listings::new(self.project.as_fd());
                let root = path.prefix(*root_len);
                (State::Root(assess_artifact(&mut listings, &root.raw)), None)
            }
            Place::Ordinary | Place::Lockfile | Place::Container => (State::Plain, None),
        }
    }

    /// The symlink at `path` (placed at `place` on `lock`) with target
    /// `target`, judged as a link at a surface path; `None` when `path` is
    /// not a surface path (see [`links::judge`]).
    pub fn surface_link(
        &self,
        lock: &Lockfile,
        place: &Place,
        path: &ViewPath,
        target: &OsStr,
    ) -> Option<links::SurfaceLink> {
        links::judge(
            &self.links,
            self.project.as_fd(),
            lock,
            &self.machine.extra_surfaces,
            path,
            place,
            target,
        )
    }

    /// What a readlink of the symlink at `path`, whose target on disk is
    /// `target`, may return: an ordinary link's target as it is (its lookup
    /// decided it); a link at a surface path judged again on exactly these
    /// bytes (so a link changed since its lookup is never followed
    /// unjudged), an absolute target served as the equivalent relative one;
    /// `None` to refuse.
    pub fn link_target(
        &self,
        path: &ViewPath,
        target: std::ffi::OsString,
    ) -> Option<std::ffi::OsString> {
        let view = self.lock_view();
        let place = self.place(view.patterns_source(), path);
        if !links::is_surface_link_place(&place, path) {
            return Some(target);
        }
        let LockView::Valid(lock) = &view else {
            return None;
        };
        let link = self.surface_link(lock, &place, path, &target)?;
        if link.state != links::LinkState::Followed {
            return None;
        }
        let dir = path.parent().map(|p| p.raw).unwrap_or_default();
        Some(self.links.relative_form(&dir, &target).unwrap_or(target))
    }

    /// Decides an open of the regular file at `path`.
    pub fn open(&self, path: &ViewPath, who: Who) -> OpenDecision {
        self.open_once_per_run(path, who, None).0
    }

    /// [`Gate::open`], leaving out the `allow` record when the verification
    /// run that allows is `recorded` (the caller gave out the same file's
    /// bytes under that run before, and that was recorded). Answers with the
    /// decision and, when a Verified bundle allowed it, the run's number.
    pub fn open_once_per_run(
        &self,
        path: &ViewPath,
        who: Who,
        recorded: Option<u64>,
    ) -> (OpenDecision, Option<u64>) {
        let view = self.lock_view();
        let lock = view.patterns_source();
        let policy = self.policy_of(lock).0;
        let place = self.place(lock, path);
        let Some(root_len) = place.root_len() else {
            return (OpenDecision::Ordinary, None);
        };
        let Some(rel) = path.rel_from(root_len) else {
            return (OpenDecision::Deny, None);
        };
        if is_excluded_below_root(path.names().skip(root_len)) && view.is_valid() {
            // Never part of a bundle (`.git`): never hashed, never recorded,
            // so shown and read as on disk only where the policy lets
            // unrecorded names through.
            let decision = decide(&place, State::Recorded(false), policy);
            self.record("open", &place, path, &decision, None, &view, who);
            return match decision.shown {
                true => (OpenDecision::Ordinary, None),
                false => (OpenDecision::Deny, None),
            };
        }
        let answer = match (&view, &place) {
            (LockView::Invalid { .. }, _) => None,
            (LockView::Valid(_), Place::Sealed { key, .. }) => {
                Some(self.sealed_run(key, Some(&rel)))
            }
            // Opening a regular file inside an artifact proves the artifact
            // holds something loadable: it is Unverified. Its bytes are only
            // needed (hashed and kept) when the policy lets them through.
            (LockView::Valid(_), _) if policy == Policy::Warn => {
                let root = path.prefix(root_len);
                let flight = self.flights.get(&format!("artifact:{}", root.display()));
                Some(flight.fresh(Some(&rel), |wanted| self.observe_artifact(&root, wanted)))
            }
            (LockView::Valid(_), _) => None,
        };
        let state = match (&view, &answer) {
            (LockView::Invalid { .. }, _) => State::LockfileInvalid,
            (_, Some(a)) => a.verdict.state(),
            (_, None) => State::Root(RootState::Bundle(BundleState::Unverified)),
        };
        let policy = answer.as_ref().map_or(policy, |a| a.verdict.policy);
        let mut decision = decide(&place, state, policy);
        let verdict = answer.as_ref().map(|a| a.verdict.clone());
        let snapshot = answer.and_then(|a| a.snapshot);
        if decision.shown && snapshot.is_none() {
            // Allowed yet not captured: the file is not part of what was
            // verified (it appeared after the walk). Refuse.
            decision.shown = false;
            decision.event = Some(Event::Hide);
        }
        let verified_run = verdict
            .as_deref()
            .filter(|v| v.state() == State::Root(RootState::Bundle(BundleState::Verified)))
            .map(|v| v.run);
        let recorded_before = decision.event == Some(Event::Allow)
            && verified_run.is_some()
            && verified_run == recorded;
        if !recorded_before {
            self.record(
                "open",
                &place,
                path,
                &decision,
                verdict.as_deref(),
                &view,
                who,
            );
        }
        match snapshot {
            Some(s) if decision.shown => (OpenDecision::Snapshot(s), verified_run),
            _ => (OpenDecision::Deny, None),
        }
    }

    /// The verification run that approves, now, serving again the bytes of
    /// digest `digest` that [`Gate::open`] gave out for the bundle file
    /// `path`, without reading the file: its bundle is verified (by a full
    /// verification, or by the last one while the change feed proves it
    /// current) and `seal.json` still records `digest` for it. Cheap while
    /// the bundle is current; `None` for anything else, and the caller asks
    /// [`Gate::open_once_per_run`] (which decides, records and reads
    /// afresh). Records nothing.
    pub fn still_approves(
        &self,
        path: &ViewPath,
        digest: &seal_core::digest::Digest,
    ) -> Option<u64> {
        let view = self.lock_view();
        let LockView::Valid(lock) = &view else {
            return None;
        };
        let place = self.place(lock, path);
        let Place::Sealed { key, root_len } = &place else {
            return None;
        };
        let recorded = path
            .rel_from(*root_len)
            .and_then(|rel| lock.bundles.get(key)?.files.get(&rel).copied());
        if recorded.as_ref() != Some(digest) {
            return None;
        }
        let verdict = self.sealed_run(key, None).verdict;
        let verified = verdict.state() == State::Root(RootState::Bundle(BundleState::Verified));
        (verified && decide(&place, verdict.state(), verdict.policy).shown).then_some(verdict.run)
    }

    /// Decides whether the writable view may make `change` at `path`
    /// (existing or not); a refusal is recorded as a `deny-write` event.
    /// The places come from the last valid lockfile, so protection holds
    /// while `seal.json` is invalid too.
    pub fn may_change(&self, path: &ViewPath, change: Change, op: &'static str, who: Who) -> bool {
        let view = self.lock_view();
        let place = self.place(view.patterns_source(), path);
        let mut decision = decide_change(&place, change, self.guard(path));
        if decision.allowed {
            // The built-in git rules, which the machine policy may lift.
            decision = decide_change(&place, change, self.machine.git_guard(path.names()));
        }
        if !decision.allowed {
            self.record_denied_write(op, &place, path, decision.reason, who);
        }
        decision.allowed
    }

    /// Whether `path` may share an inode with other names of its file in
    /// the view (hard links): an ordinary path the machine policy leaves
    /// open, so that no request through it needs a decision of its own.
    pub fn shares_inodes(&self, path: &ViewPath) -> bool {
        matches!(self.cached_place(path), Place::Ordinary)
            && self.guard(path) == Guard::Open
            && self.machine.git_guard(path.names()) == Guard::Open
    }

    /// What the machine policy adds to the write rules at `path`.
    pub fn guard(&self, path: &ViewPath) -> Guard {
        if self.machine.read_only {
            return Guard::ReadOnly;
        }
        match self.machine.protected_paths.protection(path.names()).0 {
            Protection::None => Guard::Open,
            Protection::OnTheWay => Guard::OnTheWay,
            Protection::Protected => Guard::Protected,
        }
    }

    fn record_denied_write(
        &self,
        op: &'static str,
        place: &Place,
        path: &ViewPath,
        reason: ChangeReason,
        who: Who,
    ) {
        let shown = seal_core::escape::escaped(&path.display()).into_owned();
        tracing::info!("refused {op} of {shown}: {}", reason.describe());
        let Some(audit) = &self.audit else { return };
        let mut record = audit.record(Event::DenyWrite, op, who.pid, who.uid);
        record.key = key_of(place);
        record.path = path.display();
        record.outcome = reason.describe().to_string();
        record.policy_source = reason.source();
        audit.write(&record);
    }

    /// A verification of sealed root `key` current at this moment, keeping
    /// `want`'s bytes: a cached one the change feed proves current, or a
    /// fresh one (shared with concurrent requests that arrived before it
    /// started).
    fn sealed_run(&self, key: &BundleKey, want: Option<&FilePath>) -> Answer<Assessment> {
        if let LockView::Valid(lock) = self.lock_view() {
            let entry = lock.bundles.get(key);
            let policy = self.policy_of(&lock).0;
            let found = self
                .cache
                .lookup(self.project.as_fd(), key, entry, policy, want);
            if let cache::Lookup::Answer(answer) = found {
                return answer;
            }
        }
        let flight = self.flights.get(key.as_str());
        flight.fresh(want, |wanted| self.verify_sealed(key, wanted))
    }

    /// One full verification run: places the change feed's watches, reads
    /// the lockfile as it is now, then the disk; keeps the result for reuse.
    fn verify_sealed(
        &self,
        key: &BundleKey,
        wanted: &[FilePath],
    ) -> (Assessment, HashMap<FilePath, Arc<Snapshot>>) {
        let started = Instant::now();
        // Watches first: whatever changes after this is seen by the feed,
        // whatever changed before is seen by the hash.
        let watched = self.cache.watch(self.project.as_fd(), key);
        let keep_all = watched.as_ref().is_some_and(cache::Watched::keep_all);
        let view = self.lock_view();
        let lock = view.patterns_source();
        let policy = self.policy_of(lock).0;
        let mut assessment = Assessment {
            state: RootState::Bundle(BundleState::Mismatch),
            report: None,
            policy,
            fail_closed: match &view {
                LockView::Invalid { reason, .. } => Some(reason.clone()),
                LockView::Valid(_) => None,
            },
            micros: 0,
            run: next_run(),
        };
        let mut kept = HashMap::new();
        let mut digests = std::collections::BTreeMap::new();
        let entry = lock.bundles.get(key);
        if assessment.fail_closed.is_none() {
            let mut listings = Listings::new(self.project.as_fd());
            let wanted_fn = |p: &FilePath| keep_all || wanted.contains(p);
            let keeper = SnapshotKeeper { wanted: &wanted_fn };
            // Under block a proof of a Mismatch ends the run (nothing of it
            // will be served); under warn what is wanted is hashed anyway.
            let cancel = Cancel::new();
            let effort = Effort {
                after_proof: match policy {
                    Policy::Block => AfterProof::Stop,
                    Policy::Warn => AfterProof::HashWanted,
                },
                cancel: &cancel,
                progress: None,
            };
            match assess_sealed(&mut listings, key, entry, &keeper, effort) {
                Ok(found) => {
                    assessment.state = found.state;
                    assessment.report = found.report;
                    if let Some(observed) = found.observed {
                        kept = self.shared(observed.kept, &observed.files);
                        digests = observed.files;
                    }
                }
                // Cannot be verified: a Mismatch (fail closed).
                Err(e) => tracing::warn!("verification of {key} failed: {e}"),
            }
        }
        assessment.micros = started.elapsed().as_micros() as u64;
        if let (Some(watched), None) = (watched, &assessment.fail_closed) {
            let cached = cache::Cached::new(
                watched,
                entry.cloned(),
                assessment.policy,
                Arc::new(assessment.clone()),
                &digests,
                kept.clone(),
            );
            self.cache.store(key, cached);
        }
        (assessment, kept)
    }

    /// Hashes an artifact root (warn mode) keeping the wanted files.
    fn observe_artifact(
        &self,
        root: &ViewPath,
        wanted: &[FilePath],
    ) -> (Assessment, HashMap<FilePath, Arc<Snapshot>>) {
        let started = Instant::now();
        let mut listings = Listings::new(self.project.as_fd());
        let wanted_fn = |p: &FilePath| wanted.contains(p);
        let keeper = SnapshotKeeper { wanted: &wanted_fn };
        let kept = match assess::root_kind(&mut listings, &root.raw)
            .map(|k| observe_root(&mut listings, &root.raw, k, &keeper, None))
        {
            Some(Ok(observed)) => self.shared(observed.kept, &observed.files),
            _ => HashMap::new(),
        };
        let assessment = Assessment {
            state: RootState::Bundle(BundleState::Unverified),
            report: None,
            policy: Policy::Warn,
            fail_closed: None,
            micros: started.elapsed().as_micros() as u64,
            run: next_run(),
        };
        (assessment, kept)
    }

    /// Snapshots labelled with the digest their bytes were hashed to in the
    /// same read, each replaced by a live snapshot of the same digest when
    /// there is one: many handles (and bundles) of the same bytes share one
    /// copy. The mount shares a passthrough backing between handles only
    /// when these digests are equal, so an unlabelled snapshot never occurs.
    fn shared(
        &self,
        kept: std::collections::BTreeMap<FilePath, Snapshot>,
        files: &std::collections::BTreeMap<FilePath, seal_core::digest::Digest>,
    ) -> HashMap<FilePath, Arc<Snapshot>> {
        let mut by_digest = self.by_digest.lock().unwrap_or_else(|e| e.into_inner());
        kept.into_iter()
            .map(|(p, s)| {
                let digest = files.get(&p).copied();
                debug_assert!(digest.is_some(), "a kept file has no digest");
                let fresh = || Arc::new(s.verified_as(digest));
                let snapshot = match digest {
                    Some(d) => match by_digest.get(&d).and_then(std::sync::Weak::upgrade) {
                        Some(live) => live,
                        None => {
                            let made = fresh();
                            by_digest.insert(d, Arc::downgrade(&made));
                            made
                        }
                    },
                    None => fresh(),
                };
                (p, snapshot)
            })
            .collect()
    }

    /// Logs a decision and writes it to the audit log.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        op: &'static str,
        place: &Place,
        path: &ViewPath,
        decision: &Decision,
        assessment: Option<&Assessment>,
        view: &LockView,
        who: Who,
    ) {
        let Some(event) = decision.event else { return };
        let told = !matches!(event, Event::Allow | Event::DenyWrite);
        if !told && self.audit.is_none() {
            // Nothing to say and nowhere to write it: the common case of
            // an allowed open, spared formatting the outcome and the path.
            return;
        }
        let fail_closed = match (assessment.and_then(|a| a.fail_closed.as_ref()), view) {
            (Some(reason), _) | (None, LockView::Invalid { reason, .. }) => Some(reason.clone()),
            (None, LockView::Valid(_)) => None,
        };
        let outcome = match (&fail_closed, place) {
            (Some(reason), _) => format!("fail-closed: {reason}"),
            (None, Place::Artifact { rule, .. }) => {
                format!("unverified artifact: {}", rule.describe())
            }
            (None, Place::Unmappable { .. }) => {
                "unverified: a name on its path cannot be a bundle key".to_string()
            }
            (None, _) => assessment
                .map_or("Unverified", |a| a.state.as_str())
                .to_string(),
        };
        let shown = seal_core::escape::escaped(&path.display()).into_owned();
        match event {
            Event::Allow
            | Event::DenyWrite
            | Event::MountStart
            | Event::MountEnd
            | Event::RunStart
            | Event::RunEnd => {}
            Event::FailClosed => tracing::warn!("fail closed on {op} {shown}: {outcome}"),
            Event::Hide | Event::Warn => tracing::info!(
                "{} {op} {shown} ({outcome}; {})",
                if event == Event::Hide {
                    "hid"
                } else {
                    "warned on"
                },
                decision.reason.describe()
            ),
        }
        let Some(audit) = &self.audit else { return };
        let report = assessment.and_then(|a| a.report.as_ref());
        let list =
            |f: fn(&BundleReport) -> &Vec<String>| report.map(f).cloned().unwrap_or_default();
        let event = if fail_closed.is_some() {
            Event::FailClosed
        } else {
            event
        };
        let mut record: Record = audit.record(event, op, who.pid, who.uid);
        let (policy, source) = match assessment {
            Some(a) => (a.policy, self.policy_of(view.patterns_source()).1),
            None => self.policy_of(view.patterns_source()),
        };
        record.policy = Some(policy.as_str());
        // Failing closed is the same rule whatever any policy says.
        record.policy_source = if event == Event::FailClosed {
            Source::BuiltIn
        } else {
            source
        };
        record.key = key_of(place);
        record.path = path.display();
        record.outcome = outcome;
        record.modified = list(|r| &r.modified);
        record.added = list(|r| &r.added);
        record.missing = list(|r| &r.missing);
        record.problems = report
            .map(|r| r.problems.iter().map(|p| p.to_string()).collect())
            .unwrap_or_default();
        record.verify_us = assessment.map(|a| a.micros);
        audit.write(&record);
    }
}

/// The bundle key a record names: the sealed root's.
fn key_of(place: &Place) -> Option<String> {
    match place {
        Place::Sealed { key, .. } => Some(key.as_str().to_string()),
        _ => None,
    }
}
