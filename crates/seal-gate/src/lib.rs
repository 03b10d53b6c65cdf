//! The gate: what may a path of the project show, and what bytes may an open
//! of it serve? Pure decisions over the core; no FUSE types, so every rule is
//! tested without a mount (the mount only translates).
//!
//! Every path is one of the [`Place`]s: ordinary; the lockfile; a container
//! (a directory on the way to a sealed root or an agent surface); inside a
//! sealed root (a lockfile key or a root its discovery patterns produce);
//! inside an agent artifact that no sealed root covers (from
//! [`crate::surfaces`]). Every question about a path is one call,
//! [`Gate::ask`] ([`ask`]): it gathers what the decision needs — a
//! verification of a sealed root current at this moment ([`cache`] while
//! the change feed proves the last one current, else [`flight`]), an
//! assessment of an artifact ([`assess`]), the symlink rule ([`links`]) —,
//! asks the one decision table, [`decide`] (shown or not, and how long the
//! kernel may keep the answer), records the decision ([`audit`]) and, for an
//! open it allows inside a root, hands out the snapshot of the verified
//! bytes.
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

mod ask;
pub mod assess;
pub mod audit;
pub mod cache;
mod decision;
pub mod feed;
pub mod filters;
mod flight;
#[cfg(test)]
mod link_tests;
pub mod links;
pub mod live;
#[cfg(test)]
mod machine_tests;
pub mod memory;
mod place;
pub mod policy;
pub mod propose;
pub mod snapshot;
pub mod surfaces;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

use audit::AuditLog;
use flight::{Answer, Flights};
use links::LinkRule;
use live::{LiveLockfile, LockView};

pub use ask::{Op, Round, Serve, Survey, Verdict};
pub use assess::{SealedAssessment, assess_artifact, assess_sealed};
pub use decision::{
    ATTR_TTL, Asked, Change, ChangeReason, Decision, FED_TTL, Facts, Found, Guard, Keep, Kernel,
    ORDINARY_TTL, Reason, RootState, WATCHED_TTL, decide,
};
pub use place::{Place, ViewPath, place, place_with};

use crate::policy::{MachinePolicy, Protection, Source};
use crate::snapshot::{Snapshot, SnapshotKeeper};
use seal_core::discovery::Listings;
use seal_core::effort::{AfterProof, Cancel, Effort, Witness};
use seal_core::hash::{Finish, observe_root};
use seal_core::lockfile::{Lockfile, Policy};
use seal_core::paths::{BundleKey, FilePath};
use seal_core::verify::{BundleReport, BundleState};

/// Who asked: the process (for the audit log) and the credentials it made
/// the request with (changes in the writable view are made as them).
#[derive(Debug, Clone, Copy)]
pub struct Who {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
}

impl Who {
    /// This process, asking for itself (the commands that explain).
    pub fn this_process() -> Who {
        Who {
            pid: std::process::id(),
            uid: nix::unistd::getuid().as_raw(),
            gid: nix::unistd::getgid().as_raw(),
        }
    }
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
    /// Why the root could not be verified (it counts as a Mismatch).
    pub unverifiable: Option<String>,
    pub micros: u64,
    /// Which run this was: a number no other run of any gate has (the
    /// copies a run leaves in the cache and in its answers share it).
    pub run: u64,
}

/// Numbers runs (see [`Assessment::run`]).
static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(crate) fn next_run() -> u64 {
    RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Assessment {
    /// What the decision table gets from this run.
    pub(crate) fn found(&self) -> Found {
        if self.fail_closed.is_some() {
            Found::LockfileInvalid
        } else {
            Found::Root(self.state)
        }
    }
}

/// What a request that may hash does, for [`Gate::may_hash`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hashing {
    /// A lookup: it may verify the bundle it is in.
    Lookup,
    /// A listing: it may verify the bundles whose roots it lists.
    Listing,
    /// It serves a bundle file's bytes: an open, a read by inode, a lookup
    /// that pins them.
    Bytes,
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

    /// A gate that explains what the view of `project` would decide
    /// (through [`Gate::explaining`]): `lock` read as `seal.json` now
    /// (`implied`: the empty lockfile standing in for a missing one), under
    /// `machine`; no change feed, no audit log.
    pub fn for_explaining(
        project: BorrowedFd<'_>,
        lock: &Lockfile,
        machine: &MachinePolicy,
        implied: bool,
        links: LinkRule,
    ) -> std::io::Result<Gate> {
        let gate = Gate::new(GateConfig {
            project: Arc::new(project.try_clone_to_owned()?),
            lockfile_bytes: lock.to_canonical_bytes(),
            lockfile: lock.clone(),
            links,
            audit: None,
            feed: None,
        });
        Ok(gate.with_machine(Arc::new(machine.clone()), implied))
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
    #[cfg(test)]
    pub(crate) fn release_kept_bytes(&self) {
        self.cache.release_kept();
    }

    /// The audit log, when the view has one (for the records of a view's
    /// and a run's start and end).
    pub fn audit(&self) -> Option<&AuditLog> {
        self.audit.as_ref()
    }

    pub fn project_fd(&self) -> BorrowedFd<'_> {
        self.project.as_fd()
    }

    /// The lockfile now (re-read).
    pub(crate) fn lock_view(&self) -> LockView {
        self.live.current(self.project.as_fd())
    }

    /// The place of `path` on the lockfile as last read (no new read): for
    /// scheduling requests and caching hints, never for deciding them.
    pub fn cached_place(&self, path: &ViewPath) -> Place {
        self.place(self.live.last().patterns_source(), path)
    }

    /// Whether deciding `request` about `path` may hash (on the lockfile as
    /// last read): lookups and opens in a sealed root or an artifact, and
    /// listings of a container (they decide the roots inside it). It only
    /// steers where a request runs, never what it decides.
    ///
    /// A bundle whose verification the change feed proves current is light:
    /// its requests never wait behind the verification of another (a hostile
    /// tree being listed cannot hold up opens of an approved bundle). Unless
    /// the request serves a file's bytes and the gate no longer keeps them:
    /// then they are read and hashed again (`VerifiedCache::lookup`), which
    /// for a big file takes as long as a verification.
    pub fn may_hash(&self, path: &ViewPath, request: Hashing) -> bool {
        let last = self.live.last();
        match self.place(last.patterns_source(), path) {
            Place::Sealed { key, root_len } => match &last {
                LockView::Valid(lock) => {
                    let policy = self.policy_of(lock).0;
                    let file = match request {
                        Hashing::Bytes => path.rel_from(root_len),
                        Hashing::Lookup | Hashing::Listing => None,
                    };
                    !self.cache.serves_without_hashing(
                        &key,
                        lock.bundles.get(&key),
                        policy,
                        file.as_ref(),
                    )
                }
                LockView::Invalid { .. } => true,
            },
            Place::Artifact { .. } | Place::Unmappable { .. } => true,
            Place::Container => request == Hashing::Listing,
            Place::Ordinary | Place::Lockfile => false,
        }
    }

    /// The symlink at `path` (placed at `place` on `lock`) with target
    /// `target`, judged as a link at a surface path; `None` when `path` is
    /// not a surface path (see [`links::judge`]). What gathering finds for a
    /// lookup of such a link ([`Found::SurfaceLink`]).
    fn surface_link(
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
    /// decided it); a link at a surface path decided again on exactly these
    /// bytes (so a link changed since its lookup is never followed
    /// undecided; nothing recorded), an absolute target served as the
    /// equivalent relative one; `None` to refuse.
    pub fn link_target(&self, path: &ViewPath, target: OsString) -> Option<OsString> {
        let round = self.explaining(None);
        if !links::is_surface_link_place(&round.place(path), path) {
            return Some(target);
        }
        if !round
            .ask(path, Op::symlink(&target), Who::this_process())
            .yes
        {
            return None;
        }
        let dir = path.parent().map(|p| p.raw).unwrap_or_default();
        Some(self.links.relative_form(&dir, &target).unwrap_or(target))
    }

    /// Whether `path` may share an inode with other names of its file in
    /// the view (hard links): an ordinary path the machine policy and the
    /// built-in rules leave open, so that no request through it needs a decision
    /// of its own.
    pub fn shares_inodes(&self, path: &ViewPath) -> bool {
        matches!(self.cached_place(path), Place::Ordinary)
            && self.guard(path) == Guard::Open
            && self.built_in_guard(path) == Guard::Open
    }

    /// What the built-in rules (git's side doors, the agents' `.env` files)
    /// add to the write rules at `path`, where the machine policy does not
    /// lift them.
    pub(crate) fn built_in_guard(&self, path: &ViewPath) -> Guard {
        self.machine.built_in_guard(path.names())
    }

    /// What the machine policy adds to the write rules at `path`.
    pub(crate) fn guard(&self, path: &ViewPath) -> Guard {
        if self.machine.read_only {
            return Guard::ReadOnly;
        }
        match self.machine.protected_paths.protection(path.names()).0 {
            Protection::None => Guard::Open,
            Protection::OnTheWay => Guard::OnTheWay,
            Protection::Protected => Guard::Protected,
        }
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
        flight.fresh(want, |wanted| {
            let (assessment, kept, _) = self.verify_sealed(key, wanted, &Cancel::new());
            (assessment, kept)
        })
    }

    /// Verifies the recorded bundles now, as their first lookups would, on
    /// every core, until `budget` file bytes are read; each verification
    /// finished is kept for the view's reuse as a lookup's is. `seal run`
    /// asks this before its command starts, so that its summary and the
    /// command's first opens share one verification. The reports of the
    /// bundles finished; a bundle the budget cut short keeps nothing, and
    /// its first lookup verifies it.
    pub fn verify_ahead(&self, budget: u64) -> HashMap<BundleKey, BundleReport> {
        let keys: Vec<BundleKey> = match self.lock_view() {
            LockView::Valid(lock) => lock.bundles.keys().cloned().collect(),
            LockView::Invalid { .. } => return HashMap::new(),
        };
        let cancel = Cancel::new().with_byte_budget(budget);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let reports = std::sync::Mutex::new(HashMap::new());
        let workers = seal_core::hash::cores();
        std::thread::scope(|scope| {
            for _ in 0..workers.min(keys.len()) {
                scope.spawn(|| {
                    let take = || next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    while let Some(key) = keys.get(take()).filter(|_| !cancel.is_cancelled()) {
                        let (assessment, _, finish) = self.verify_sealed(key, &[], &cancel);
                        if let (Some(report), Finish::Complete | Finish::Proven) =
                            (assessment.report, finish)
                        {
                            let mut reports = reports.lock().unwrap_or_else(|e| e.into_inner());
                            reports.insert(key.clone(), report);
                        }
                    }
                });
            }
        });
        reports.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// One full verification run: places the change feed's watches, reads
    /// the lockfile as it is now, then the disk; keeps the result for reuse
    /// unless `cancel` cut it short (its finish says so).
    fn verify_sealed(
        &self,
        key: &BundleKey,
        wanted: &[FilePath],
        cancel: &Cancel,
    ) -> (Assessment, HashMap<FilePath, Arc<Snapshot>>, Finish) {
        let started = Instant::now();
        // Watches first (on the way to the root now, below it as the walk
        // reads): whatever changes after is seen by the feed, whatever
        // changed before is seen by the hash.
        let watching = self.cache.watch(self.project.as_fd(), key);
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
            unverifiable: None,
            micros: 0,
            run: next_run(),
        };
        let mut kept = HashMap::new();
        let mut digests = std::collections::BTreeMap::new();
        let mut finish = Finish::Complete;
        let entry = lock.bundles.get(key);
        if assessment.fail_closed.is_none() {
            let mut listings = Listings::new(self.project.as_fd());
            let wanted_fn =
                |p: &FilePath| wanted.contains(p) || watching.as_ref().is_some_and(|w| w.keeps(p));
            let keeper = SnapshotKeeper { wanted: &wanted_fn };
            // Under block a proof of a Mismatch ends the run (nothing of it
            // will be served); under warn what is wanted is hashed anyway.
            let effort = Effort {
                after_proof: match policy {
                    Policy::Block => AfterProof::Stop,
                    Policy::Warn => AfterProof::HashWanted,
                },
                cancel,
                progress: None,
                witness: watching.as_ref().map(|w| w as &dyn Witness),
            };
            match assess_sealed(&mut listings, key, entry, &keeper, effort) {
                Ok(found) => {
                    assessment.state = found.state;
                    assessment.report = found.report;
                    if let Some(observed) = found.observed {
                        finish = observed.finish;
                        kept = self.shared(observed.kept, &observed.files);
                        digests = observed.files;
                    }
                }
                // Cannot be verified: a Mismatch (fail closed).
                Err(e) => {
                    tracing::warn!("verification of {key} failed: {e}");
                    assessment.unverifiable = Some(e.to_string());
                }
            }
        }
        assessment.micros = started.elapsed().as_micros() as u64;
        let watched = match (watching, &assessment.fail_closed, finish) {
            (_, _, Finish::Cancelled) => None,
            (Some(watching), None, _) => self.cache.watched(key, watching),
            _ => None,
        };
        if let Some(watched) = watched {
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
        (assessment, kept, finish)
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
            unverifiable: None,
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
}
