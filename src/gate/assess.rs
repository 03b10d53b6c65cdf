//! Assessing a root now: the facts the decision table needs about a sealed
//! root or an agent artifact, read from the disk. Shared by the gate (at every
//! decision, keeping the bytes an open asked for), `seal why` and `seal run
//! --dry-run`, so that all three feed [`super::decide`] the same state.

use crate::core::discovery::{DiscoveryError, Listings, Located, has_trackable_entry, locate};
use crate::core::fs::{EntryKind, RawPath};
use crate::core::hash::{Keeper, Observed};
use crate::core::lockfile::BundleEntry;
use crate::core::paths::BundleKey;
use crate::core::verify::{BundleReport, BundleState, verify_key};

use super::decision::RootState;

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

/// Assesses the sealed root of `key`. A recorded root is verified in full
/// (hashed, keeping what `keeper` wants). An unrecorded one is Unverified as
/// soon as it holds one trackable entry, and not a bundle when it holds none;
/// it is hashed only when `keeper` must keep bytes of it (`keep_bytes`: an
/// open under `warn` serves what is there).
pub fn assess_sealed<K: Keeper>(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keeper: &K,
    keep_bytes: bool,
) -> Result<SealedAssessment<K::Kept>, DiscoveryError> {
    if entry.is_none() && !keep_bytes {
        let state = match locate(listings, key)? {
            Located::Absent => RootState::Absent,
            Located::Found {
                raw,
                kind: EntryKind::Dir,
            } => {
                if has_trackable_entry(listings, &raw)? {
                    RootState::Bundle(BundleState::Unverified)
                } else {
                    RootState::NotABundle
                }
            }
            Located::Found { .. } | Located::ThroughSymlink { .. } | Located::Twins { .. } => {
                RootState::Bundle(BundleState::Unverified)
            }
        };
        return Ok(SealedAssessment {
            state,
            report: None,
            observed: None,
        });
    }
    let (report, observed) = verify_key(listings, key, entry, keeper)?;
    let state = match (&observed, entry, report.state) {
        (_, None, BundleState::Removed) => RootState::Absent,
        (Some(o), None, _) if o.files.is_empty() && o.problems.is_empty() => RootState::NotABundle,
        (_, _, state) => RootState::Bundle(state),
    };
    Ok(SealedAssessment {
        state,
        report: Some(report),
        observed,
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

/// The kind of the entry at `raw` (by listing its parent), if it exists.
pub fn root_kind(listings: &mut Listings<'_>, raw: &RawPath) -> Option<EntryKind> {
    let (name, parent) = raw.0.split_last()?;
    let entries = listings.list(&RawPath(parent.to_vec())).ok()?;
    entries.iter().find(|e| &e.name == name).map(|e| e.kind)
}

/// Whether the directory at `dir` holds, at any depth, a name that is
/// protected wherever it stands (an agent instruction file: see
/// [`crate::surfaces::INSTRUCTION_FILES`]): moving the directory would move
/// it. A directory that cannot be read counts as holding one.
pub fn holds_protected(listings: &mut Listings<'_>, dir: &RawPath) -> bool {
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = listings.list(&d) else {
            return true;
        };
        for entry in entries.iter() {
            let named = entry
                .name
                .to_str()
                .map(crate::core::paths::nfc)
                .is_some_and(|n| crate::surfaces::INSTRUCTION_FILES.contains(&n.as_str()));
            if named {
                return true;
            }
            if entry.kind == EntryKind::Dir {
                stack.push(d.join(&entry.name));
            }
        }
    }
    false
}
