//! Classifying bundles (SPEC §Verification Outcomes): the verification set is
//! the union of recorded keys and discovery matches; each member is Verified,
//! Unverified, Removed or Mismatch; the policy turns the set into one outcome.
//!
//! [`survey`] does the disk work (discovery, locating keys, hashing) and is
//! shared by `verify` and `pin`; [`classify`] and [`Outcome::of`] are pure.

use std::collections::BTreeMap;
use std::fmt;

use super::digest::Digest;
use super::discovery::{DiscoveryError, Listings, Located, expand, locate};
use super::fs::{EntryKind, RawPath};
use super::hash::{HashProgress, KeepNothing, Keeper, Observed, Problem, observe_root};
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
pub enum Presence<K> {
    /// Nothing at the key's path.
    Absent,
    /// Present and hashed.
    Hashed {
        kind: EntryKind,
        observed: Observed<K>,
    },
    /// Present but not hashed (an unrecorded root during `verify`).
    Unhashed { kind: EntryKind },
    /// Present but impossible to verify without breaking a rule.
    Unverifiable { problem: Problem },
}

/// One member of the verification set.
#[derive(Debug)]
pub struct Surveyed<'l, K> {
    pub name: RootName,
    pub recorded: Option<&'l BundleEntry>,
    pub presence: Presence<K>,
}

/// Whether `survey` hashes roots that have no entry in the lockfile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashUnrecorded {
    Yes,
    No,
}

/// Builds the verification set of a whole project and hashes what is needed.
pub fn survey<'l>(
    listings: &mut Listings<'_>,
    lock: &'l Lockfile,
    hash_unrecorded: HashUnrecorded,
    progress: Option<&HashProgress>,
) -> Result<Vec<Surveyed<'l, ()>>, DiscoveryError> {
    let expansion = expand(listings, &lock.discovery)?;
    let mut out = Vec::new();
    for (key, entry) in &lock.bundles {
        let presence = presence_of_key(listings, key, &KeepNothing, progress)?;
        out.push(Surveyed {
            name: RootName::Key(key.clone()),
            recorded: Some(entry),
            presence,
        });
    }
    for (key, locations) in expansion.roots {
        if lock.bundles.contains_key(&key) {
            continue;
        }
        let presence = match locations.as_slice() {
            [(raw, kind)] if hash_unrecorded == HashUnrecorded::Yes => Presence::Hashed {
                kind: *kind,
                observed: observe_root(listings, raw, *kind, &KeepNothing, progress)?,
            },
            [(_, kind)] => Presence::Unhashed { kind: *kind },
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
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Locates the root of a recorded key and hashes it when present.
fn presence_of_key<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    keeper: &K,
    progress: Option<&HashProgress>,
) -> Result<Presence<K::Kept>, DiscoveryError> {
    Ok(match locate(listings, key)? {
        Located::Absent => Presence::Absent,
        Located::Found { raw, kind } => Presence::Hashed {
            kind,
            observed: observe_root(listings, &raw, kind, keeper, progress)?,
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
pub fn classify<K>(member: &Surveyed<'_, K>) -> BundleReport {
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
        (Presence::Hashed { .. } | Presence::Unhashed { .. }, None) => BundleState::Unverified,
        (Presence::Unhashed { .. }, Some(_)) => BundleState::Mismatch,
        (Presence::Hashed { observed, .. }, Some(entry)) => {
            compare(entry, &observed.files, &observed.problems, &mut report)
        }
    };
    report
}

/// Compares recorded and observed files; fills the report's lists.
pub fn compare(
    entry: &BundleEntry,
    observed: &BTreeMap<FilePath, Digest>,
    problems: &[Problem],
    report: &mut BundleReport,
) -> BundleState {
    for (path, digest) in observed {
        match entry.files.get(path) {
            Some(recorded) if recorded == digest => {}
            Some(_) => report.modified.push(path.as_str().to_string()),
            None => report.added.push(path.as_str().to_string()),
        }
    }
    for path in entry.files.keys() {
        if observed.contains_key(path) {
            continue;
        }
        // SPEC: a tracked file that cannot be read counts as modified.
        let unreadable = problems
            .iter()
            .any(|p| matches!(p, Problem::Unreadable { path: q, .. } if q == path.as_str()));
        if unreadable {
            report.modified.push(path.as_str().to_string());
        } else if !problems.iter().any(|p| p.path() == path.as_str()) {
            report.missing.push(path.as_str().to_string());
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

/// The report on one bundle and, when its root was hashed, what was observed.
pub type KeyVerification<K> = (BundleReport, Option<Observed<K>>);

/// Verifies one recorded bundle, keeping the bytes the keeper asks for. Used by
/// the mount at every open; nothing from earlier verifications is reused.
pub fn verify_key<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keeper: &K,
) -> Result<KeyVerification<K::Kept>, DiscoveryError> {
    let presence = presence_of_key(listings, key, keeper, None)?;
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
    Ok((report, observed))
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
