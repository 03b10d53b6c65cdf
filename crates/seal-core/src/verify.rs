//! Classifying bundles (SPEC §Verification Outcomes): the verification set is
//! the union of recorded keys and discovery matches; each member is Verified,
//! Unverified, Removed or Mismatch; the policy turns the set into one outcome.
//!
//! [`survey`] does the disk work (discovery, locating keys, hashing) and is
//! shared by `verify` and `pin`; [`classify`] and [`Outcome::of`] are pure.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use super::digest::Digest;
use super::discovery::{DiscoveryError, Listings, Located, expand, locate};
use super::effort::{Effort, HashProgress};
use super::fs::RawPath;
use super::hash::{
    Finish, KeepNothing, Keeper, Observed, Problem, observe_root, observe_root_with,
};
use super::lockfile::{BundleEntry, Lockfile, Policy};
use super::paths::{BundleKey, FilePath};

/// The state of one bundle of the verification set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BundleState {
    Verified,
    Unverified,
    Removed,
    Mismatch,
}

impl BundleState {
    pub fn as_str(self) -> &'static str {
        match self {
            BundleState::Verified => "Verified",
            BundleState::Unverified => "Unverified",
            BundleState::Removed => "Removed",
            BundleState::Mismatch => "Mismatch",
        }
    }
}

/// The overall result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Verified,
    Drift,
    Warning,
    Blocked,
}

impl Outcome {
    /// SPEC's table: Unverified or Mismatch decide by policy; Removed alone is
    /// Drift; otherwise Verified.
    pub fn of<'a>(states: impl IntoIterator<Item = &'a BundleState>, policy: Policy) -> Outcome {
        let (mut failing, mut removed) = (false, false);
        for state in states {
            match state {
                BundleState::Unverified | BundleState::Mismatch => failing = true,
                BundleState::Removed => removed = true,
                BundleState::Verified => {}
            }
        }
        match (failing, policy, removed) {
            (true, Policy::Block, _) => Outcome::Blocked,
            (true, Policy::Warn, _) => Outcome::Warning,
            (false, _, true) => Outcome::Drift,
            (false, _, false) => Outcome::Verified,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Verified => "Verified",
            Outcome::Drift => "Drift",
            Outcome::Warning => "Warning",
            Outcome::Blocked => "Blocked",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a member of the verification set is named: by its key, or (for a root
/// whose path is not UTF-8) by an escaped rendering that no key can equal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum RootName {
    Key(BundleKey),
    Unmappable(String),
}

impl RootName {
    /// The name as shown and as listed in `--json`.
    pub fn as_display(&self) -> String {
        match self {
            RootName::Key(k) => k.as_str().to_string(),
            RootName::Unmappable(s) => s.clone(),
        }
    }
}

/// What the disk holds for one member of the verification set.
#[derive(Debug)]
pub(crate) enum Presence<K> {
    /// Nothing at the key's path.
    Absent,
    /// Present and hashed.
    Hashed { observed: Observed<K> },
    /// Present but not hashed (an unrecorded root during `verify`).
    Unhashed,
    /// Present but impossible to verify without breaking a rule.
    Unverifiable { problem: Problem },
}

/// One member of the verification set.
#[derive(Debug)]
pub(crate) struct Surveyed<'l, K> {
    pub name: RootName,
    pub recorded: Option<&'l BundleEntry>,
    pub presence: Presence<K>,
}

/// Whether `survey` hashes roots that have no entry in the lockfile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HashUnrecorded {
    Yes,
    No,
}

/// Builds the verification set of a whole project and hashes what is needed.
pub(crate) fn survey<'l>(
    listings: &mut Listings<'_>,
    lock: &'l Lockfile,
    hash_unrecorded: HashUnrecorded,
    progress: Option<&HashProgress>,
) -> Result<Vec<Surveyed<'l, ()>>, DiscoveryError> {
    let mut out = survey_unrecorded(listings, lock, hash_unrecorded, progress)?;
    for (key, entry) in &lock.bundles {
        let effort = Effort {
            progress,
            ..Effort::full()
        };
        let presence = presence_of_key(listings, key, Some(entry), &KeepNothing, effort)?;
        out.push(Surveyed {
            name: RootName::Key(key.clone()),
            recorded: Some(entry),
            presence,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The members of the verification set that have no entry in the lockfile:
/// discovery's matches (hashed when asked) and the roots no key can name.
fn survey_unrecorded<'l>(
    listings: &mut Listings<'_>,
    lock: &'l Lockfile,
    hash_unrecorded: HashUnrecorded,
    progress: Option<&HashProgress>,
) -> Result<Vec<Surveyed<'l, ()>>, DiscoveryError> {
    let expansion = expand(listings, &lock.discovery)?;
    let mut out = Vec::new();
    for (key, locations) in expansion.roots {
        if lock.bundles.contains_key(&key) {
            continue;
        }
        let presence = match locations.as_slice() {
            [(raw, kind)] if hash_unrecorded == HashUnrecorded::Yes => Presence::Hashed {
                observed: observe_root(listings, raw, *kind, &KeepNothing, progress)?,
            },
            [_] => Presence::Unhashed,
            many => Presence::Unverifiable {
                problem: Problem::NfcTwins {
                    path: many.first().map(|(r, _)| lossy(r)).unwrap_or_default(),
                },
            },
        };
        out.push(Surveyed {
            name: RootName::Key(key),
            recorded: None,
            presence,
        });
    }
    for root in expansion.unmappable {
        let path = lossy(&root.raw);
        let problem = match root.key_rule() {
            Some(rule) => Problem::BadName {
                path: path.clone(),
                reason: format!("{rule}, which a bundle key cannot hold"),
            },
            None => Problem::NotUtf8 { path: path.clone() },
        };
        out.push(Surveyed {
            name: RootName::Unmappable(format!("./{path}")),
            recorded: None,
            presence: Presence::Unverifiable { problem },
        });
    }
    Ok(out)
}

/// Locates the root of a key and hashes it when present, spending no more
/// than `effort` (checked against `entry` when the key is recorded).
fn presence_of_key<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keeper: &K,
    effort: Effort<'_>,
) -> Result<Presence<K::Kept>, DiscoveryError> {
    Ok(match locate(listings, key)? {
        Located::Absent => Presence::Absent,
        Located::Found { raw, kind } => Presence::Hashed {
            observed: observe_root_with(
                listings,
                &raw,
                kind,
                keeper,
                effort,
                entry.map(|e| &e.files),
            )?,
        },
        Located::ThroughSymlink { at } => Presence::Unverifiable {
            problem: Problem::ThroughSymlink { path: lossy(&at) },
        },
        Located::Twins { at } => Presence::Unverifiable {
            problem: Problem::NfcTwins {
                path: at.first().map(lossy).unwrap_or_default(),
            },
        },
    })
}

/// A project-relative raw path as a plain (lossy UTF-8) string.
fn lossy(raw: &RawPath) -> String {
    raw.to_os_string().to_string_lossy().into_owned()
}

/// The verdict on one bundle, with the file-level differences behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleReport {
    pub name: RootName,
    pub state: BundleState,
    pub modified: Vec<String>,
    pub added: Vec<String>,
    pub missing: Vec<String>,
    pub problems: Vec<Problem>,
}

/// Classifies one surveyed member (SPEC's state table).
pub(crate) fn classify<K>(member: &Surveyed<'_, K>) -> BundleReport {
    let mut report = BundleReport {
        name: member.name.clone(),
        state: BundleState::Verified,
        modified: Vec::new(),
        added: Vec::new(),
        missing: Vec::new(),
        problems: Vec::new(),
    };
    report.state = match (&member.presence, member.recorded) {
        (Presence::Absent, Some(_)) => BundleState::Removed,
        (Presence::Absent, None) => BundleState::Removed,
        (Presence::Unverifiable { problem }, recorded) => {
            report.problems.push(problem.clone());
            if recorded.is_some() {
                BundleState::Mismatch
            } else {
                BundleState::Unverified
            }
        }
        (Presence::Hashed { .. } | Presence::Unhashed, None) => BundleState::Unverified,
        (Presence::Unhashed, Some(_)) => BundleState::Mismatch,
        (Presence::Hashed { observed, .. }, Some(entry)) => {
            compare_observed(entry, observed, &mut report)
        }
    };
    report
}

/// Compares a record with an observation that may have stopped early: files
/// found but not read count as present (added when not recorded, neither
/// modified nor missing when recorded); missing files are known only when
/// every directory was listed. A cancelled observation proves nothing, so it
/// is never Verified (fail closed).
pub(crate) fn compare_observed<K>(
    entry: &BundleEntry,
    observed: &Observed<K>,
    report: &mut BundleReport,
) -> BundleState {
    let state = compare_lists(
        entry,
        &observed.files,
        &observed.unread,
        &observed.problems,
        observed.listed_all,
        report,
    );
    match observed.finish {
        Finish::Complete => state,
        Finish::Proven => {
            debug_assert_eq!(state, BundleState::Mismatch, "a proof is in the lists");
            BundleState::Mismatch
        }
        Finish::Cancelled => BundleState::Mismatch,
    }
}

fn compare_lists(
    entry: &BundleEntry,
    observed: &BTreeMap<FilePath, Digest>,
    unread: &[FilePath],
    problems: &[Problem],
    listed_all: bool,
    report: &mut BundleReport,
) -> BundleState {
    for (path, digest) in observed {
        match entry.files.get(path) {
            Some(recorded) if recorded == digest => {}
            Some(_) => report.modified.push(path.as_str().to_string()),
            None => report.added.push(path.as_str().to_string()),
        }
    }
    for path in unread {
        if !entry.files.contains_key(path) {
            report.added.push(path.as_str().to_string());
        }
    }
    report.added.sort();
    // Paths with a problem, and whether one of them is a read failure (one
    // pass, so the comparison stays linear however many problems there are).
    let mut problem_at: HashMap<&str, bool> = HashMap::with_capacity(problems.len());
    for p in problems {
        *problem_at.entry(p.path()).or_default() |= matches!(p, Problem::Unreadable { .. });
    }
    for path in entry.files.keys() {
        if observed.contains_key(path) || unread.binary_search(path).is_ok() {
            continue;
        }
        match problem_at.get(path.as_str()) {
            // SPEC: a tracked file that cannot be read counts as modified.
            Some(true) => report.modified.push(path.as_str().to_string()),
            Some(false) => {}
            // Missing is known only when every directory was listed.
            None if listed_all => report.missing.push(path.as_str().to_string()),
            None => {}
        }
    }
    report.problems.extend(problems.iter().cloned());
    report.modified.sort();
    if report.modified.is_empty()
        && report.added.is_empty()
        && report.missing.is_empty()
        && problems.is_empty()
    {
        BundleState::Verified
    } else {
        BundleState::Mismatch
    }
}

/// The full result of `seal verify`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectReport {
    pub policy: Policy,
    pub bundles: Vec<BundleReport>,
    pub outcome: Outcome,
}

impl ProjectReport {
    /// Names in one state, sorted.
    pub fn names_in(&self, state: BundleState) -> Vec<String> {
        let mut v: Vec<String> = self
            .bundles
            .iter()
            .filter(|b| b.state == state)
            .map(|b| b.name.as_display())
            .collect();
        v.sort();
        v
    }

    /// The bundles that are not Verified, sorted by their name as shown (a
    /// root that cannot be a key sorts among the keys).
    pub fn not_verified(&self) -> Vec<&BundleReport> {
        let mut rows: Vec<&BundleReport> = self
            .bundles
            .iter()
            .filter(|b| b.state != BundleState::Verified)
            .collect();
        rows.sort_by_cached_key(|b| b.name.as_display());
        rows
    }

    pub fn count(&self, state: BundleState) -> usize {
        self.bundles.iter().filter(|b| b.state == state).count()
    }
}

/// Verifies a whole project against a valid lockfile.
pub fn verify_project(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    progress: Option<&HashProgress>,
) -> Result<ProjectReport, DiscoveryError> {
    let members = survey(listings, lock, HashUnrecorded::No, progress)?;
    let bundles: Vec<BundleReport> = members.iter().map(classify).collect();
    let outcome = Outcome::of(bundles.iter().map(|b| &b.state), lock.policy);
    Ok(ProjectReport {
        policy: lock.policy,
        bundles,
        outcome,
    })
}

/// [`verify_project`] where each recorded bundle's report comes from
/// `recorded`: a verification the caller makes its own way (the mount's,
/// kept for its reuse, for `seal run`'s summary). A bundle for which
/// `recorded` has no report yet is left out of the report and its key
/// returned apart; the outcome is that of the bundles reported.
pub fn verify_project_by(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    mut recorded: impl FnMut(&BundleKey) -> Option<BundleReport>,
) -> Result<(ProjectReport, Vec<BundleKey>), DiscoveryError> {
    let members = survey_unrecorded(listings, lock, HashUnrecorded::No, None)?;
    let mut bundles: Vec<BundleReport> = members.iter().map(classify).collect();
    let mut pending = Vec::new();
    for key in lock.bundles.keys() {
        match recorded(key) {
            Some(report) => bundles.push(report),
            None => pending.push(key.clone()),
        }
    }
    bundles.sort_by(|a, b| a.name.cmp(&b.name));
    let outcome = Outcome::of(bundles.iter().map(|b| &b.state), lock.policy);
    let report = ProjectReport {
        policy: lock.policy,
        bundles,
        outcome,
    };
    Ok((report, pending))
}

/// The report on one bundle and, when its root was hashed, what was observed.
pub(crate) type KeyVerification<K> = (BundleReport, Option<Observed<K>>);

/// Verifies one bundle in full (complete lists), keeping the bytes the keeper
/// asks for; nothing from earlier verifications is reused. The same as
/// [`verify_key_with`] with [`Effort::full`].
pub fn verify_key<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keeper: &K,
) -> Result<KeyVerification<K::Kept>, DiscoveryError> {
    let check = verify_key_with(listings, key, entry, keeper, Effort::full())?;
    Ok((check.report, check.observed))
}

/// The result of [`verify_key_with`].
#[derive(Debug)]
pub struct KeyCheck<K> {
    pub report: BundleReport,
    /// What was found under the root, when it was walked.
    pub observed: Option<Observed<K>>,
    /// How the run ended: `Complete` (the report's lists are complete; also
    /// when there was nothing to walk), `Proven` (the state is certain, the
    /// lists are partial: they hold at least the proof, and `missing` is empty
    /// unless the walk was complete) or `Cancelled` (nothing proven; the state
    /// is Mismatch for a recorded bundle and Unverified otherwise, never
    /// Verified).
    pub finish: Finish,
}

impl<K> KeyCheck<K> {
    /// True for an unrecorded root that was listed in full and holds nothing
    /// trackable: a directory that is not a bundle.
    pub fn is_empty_root(&self) -> bool {
        self.report.state == BundleState::Unverified
            && self.observed.as_ref().is_some_and(Observed::is_empty)
    }
}

/// Verifies one bundle (recorded when `entry` is given), spending no more
/// than `effort`: with [`AfterProof::Stop`](super::effort::AfterProof::Stop)
/// it returns at the first proof that the bundle cannot be Verified (an entry
/// name the record cannot hold, a digest that differs, a problem, or, once
/// every directory is listed, a recorded file missing), before hashing
/// anything more; an unrecorded root is decided by its first trackable entry,
/// with nothing hashed. The cancel of `effort` bounds or abandons the rest.
/// Used by the mount at every open.
pub fn verify_key_with<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keeper: &K,
    effort: Effort<'_>,
) -> Result<KeyCheck<K::Kept>, DiscoveryError> {
    let presence = presence_of_key(listings, key, entry, keeper, effort)?;
    let member = Surveyed {
        name: RootName::Key(key.clone()),
        recorded: entry,
        presence,
    };
    let report = classify(&member);
    let observed = match member.presence {
        Presence::Hashed { observed, .. } => Some(observed),
        _ => None,
    };
    let finish = observed.as_ref().map_or(Finish::Complete, |o| o.finish);
    Ok(KeyCheck {
        report,
        observed,
        finish,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_table() {
        use BundleState::*;
        assert_eq!(Outcome::of(&[Verified], Policy::Block), Outcome::Verified);
        assert_eq!(Outcome::of(&[], Policy::Block), Outcome::Verified);
        assert_eq!(
            Outcome::of(&[Verified, Removed], Policy::Block),
            Outcome::Drift
        );
        assert_eq!(
            Outcome::of(&[Removed, Unverified], Policy::Block),
            Outcome::Blocked
        );
        assert_eq!(Outcome::of(&[Mismatch], Policy::Warn), Outcome::Warning);
        assert_eq!(
            Outcome::of(&[Removed, Mismatch], Policy::Warn),
            Outcome::Warning
        );
        assert_eq!(Outcome::of(&[Removed], Policy::Warn), Outcome::Drift);
    }
}
