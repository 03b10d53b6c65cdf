//! `seal pin`: record the current state of bundles (SPEC §Pin Scope and
//! Semantics). Bulk mode covers every discovered root and recorded key;
//! targeted mode resolves each path to its true case and adds the narrowest
//! discovery pattern it needs. Nothing is written unless the whole result is a
//! valid lockfile and the user confirmed it; a run that changes nothing leaves
//! the file's bytes alone.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use super::output::{PinKind, PinRow, pin_summary};
use super::progress::ProgressLine;
use super::prompt::confirm;
use super::{CliError, Context, Done};
use crate::core::digest::Digest;
use crate::core::discovery::{Listings, Located, locate};
use crate::core::escape::{escaped, quoted};
use crate::core::fs::{EntryKind, RawPath, lstat_at, nfc_name};
use crate::core::hash::{HashProgress, KeepNothing, observe_root};
use crate::core::lockfile::{BundleEntry, Lockfile};
use crate::core::paths::{BundleKey, FilePath, normalize_user_path};
use crate::core::pattern::Pattern;
use crate::core::store::{Replace, WriteLock, read_lockfile, write_lockfile};
use crate::core::verify::{
    BundleReport, HashUnrecorded, Presence, RootName, Surveyed, classify, compare, survey,
};

pub fn run(
    ctx: &Context,
    paths: &[OsString],
    prune: bool,
    verbose: bool,
) -> Result<Done, CliError> {
    let project = ctx.project.as_fd();
    let write_lock = WriteLock::acquire(project, || {
        eprintln!("seal: pin: waiting for another seal process to finish writing seal.json...")
    })?;
    let original = read_lockfile(project)?;
    let lock = Lockfile::parse(&original)?;
    let plan = if paths.is_empty() {
        plan_bulk(ctx, &lock, prune, verbose)?
    } else {
        if prune {
            return Err(CliError::Refused(
                "--prune applies to a bulk pin (no PATH arguments) only".into(),
            ));
        }
        plan_targeted(ctx, &lock, paths)?
    };
    let changes = plan
        .rows
        .iter()
        .filter(|r| counts_as_change(r.kind, prune))
        .count();
    if changes == 0 && plan.added_patterns.is_empty() {
        if plan.show_summary_when_unchanged {
            eprint!("{}", pin_summary(&plan.rows, &[], verbose));
        }
        eprintln!("No changes");
        return Ok(Done::Success);
    }
    // SPEC: abort before writing when the result would not be a valid lockfile.
    plan.lockfile.check().map_err(|e| {
        CliError::Refused(format!(
            "the result would not be a valid lockfile, nothing was written:\n{e}"
        ))
    })?;
    let added: Vec<String> = plan
        .added_patterns
        .iter()
        .map(|p| p.as_str().to_string())
        .collect();
    eprint!("{}", pin_summary(&plan.rows, &added, verbose));
    if !confirm("Apply these pin changes?") {
        return Err(CliError::Declined { command: "pin" });
    }
    write_lockfile(
        project,
        &plan.lockfile.to_canonical_bytes(),
        Replace::Overwrite,
        &write_lock,
    )?;
    eprintln!("Pinned {changes} bundle(s)");
    Ok(Done::Success)
}

fn counts_as_change(kind: PinKind, prune: bool) -> bool {
    match kind {
        PinKind::New | PinKind::Modified => true,
        PinKind::Removed => prune,
        PinKind::Unchanged => false,
    }
}

/// What a pin would write, and the rows that describe it.
struct Plan {
    lockfile: Lockfile,
    rows: Vec<PinRow>,
    added_patterns: Vec<Pattern>,
    show_summary_when_unchanged: bool,
}

/// Collects every reason a surveyed root cannot be pinned.
fn pin_blockers(member: &Surveyed<'_, ()>, out: &mut Vec<String>) {
    let name = escaped(&member.name.as_display()).into_owned();
    match &member.presence {
        Presence::Unverifiable { problem } => out.push(format!("{name}: {problem}")),
        Presence::Hashed { observed, .. } => {
            for p in &observed.problems {
                out.push(format!("{name}: {p}"));
            }
            if observed.problems.is_empty() && observed.files.is_empty() {
                out.push(format!(
                    "{name}: holds no trackable file (a bundle needs at least one)"
                ));
            }
        }
        Presence::Absent | Presence::Unhashed { .. } => {}
    }
}

fn refuse_blockers(blockers: Vec<String>) -> Result<(), CliError> {
    if blockers.is_empty() {
        return Ok(());
    }
    Err(CliError::Refused(format!(
        "cannot pin, seal.json is unchanged:\n  {}",
        blockers.join("\n  ")
    )))
}

fn plan_bulk(ctx: &Context, lock: &Lockfile, prune: bool, verbose: bool) -> Result<Plan, CliError> {
    let progress = ProgressLine::start("hashing");
    let mut listings = Listings::new(ctx.project.as_fd());
    let members = survey(
        &mut listings,
        lock,
        HashUnrecorded::Yes,
        progress.counters(),
    )?;
    drop(progress);
    let mut blockers = Vec::new();
    for m in &members {
        pin_blockers(m, &mut blockers);
    }
    refuse_blockers(blockers)?;
    let mut next = lock.clone();
    let mut rows = Vec::new();
    for m in &members {
        let RootName::Key(key) = &m.name else {
            continue;
        };
        let (kind, files) = match (&m.presence, m.recorded) {
            (Presence::Absent, _) => (PinKind::Removed, None),
            (Presence::Hashed { observed, .. }, None) => (PinKind::New, Some(&observed.files)),
            (Presence::Hashed { observed, .. }, Some(entry)) if entry.files == observed.files => {
                (PinKind::Unchanged, Some(&observed.files))
            }
            (Presence::Hashed { observed, .. }, Some(_)) => {
                (PinKind::Modified, Some(&observed.files))
            }
            (Presence::Unverifiable { .. } | Presence::Unhashed { .. }, _) => continue,
        };
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
            detail: (verbose && kind == PinKind::Modified).then(|| classify(m)),
        });
    }
    Ok(Plan {
        lockfile: next,
        rows,
        added_patterns: Vec::new(),
        show_summary_when_unchanged: true,
    })
}

fn plan_targeted(ctx: &Context, lock: &Lockfile, paths: &[OsString]) -> Result<Plan, CliError> {
    let mut listings = Listings::new(ctx.project.as_fd());
    let mut keys: Vec<BundleKey> = Vec::new();
    for arg in paths {
        let key = resolve_argument(ctx, &mut listings, arg)?;
        if key.rel_path() == crate::core::lockfile::LOCKFILE_NAME {
            return Err(CliError::Refused(
                "./seal.json is the project lockfile; it cannot be sealed as a bundle".into(),
            ));
        }
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            if a.is_ancestor_of(b) || b.is_ancestor_of(a) {
                let (outer, inner) = if a.is_ancestor_of(b) { (a, b) } else { (b, a) };
                return Err(CliError::Refused(format!(
                    "{inner} is inside {outer}; pin one bundle boundary for that subtree"
                )));
            }
        }
    }
    for key in &keys {
        for existing in lock.bundles.keys() {
            if existing.is_ancestor_of(key) {
                return Err(CliError::Refused(format!(
                    "{key} is inside the recorded bundle {existing}; re-pin {existing} instead, or \
                     change the discovery boundary first"
                )));
            }
            if key.is_ancestor_of(existing) {
                return Err(CliError::Refused(format!(
                    "{key} contains the recorded bundle {existing}; a bundle key cannot hold another \
                     (remove {existing} from seal.json first if the boundary should move up)"
                )));
            }
        }
    }
    let progress = ProgressLine::start("hashing");
    let mut next = lock.clone();
    let mut rows = Vec::new();
    let mut added_patterns = Vec::new();
    let mut blockers = Vec::new();
    for key in &keys {
        if !next.discovery.iter().any(|p| p.produces(key)) {
            let pattern = Pattern::exact_for(key).map_err(|rule| {
                CliError::Refused(format!(
                    "cannot add a discovery pattern for {key}: it {rule}"
                ))
            })?;
            added_patterns.push(pattern.clone());
            next.discovery.push(pattern);
            next.discovery.sort();
        }
        let files = hash_key(&mut listings, key, progress.counters(), &mut blockers)?;
        let Some(files) = files else { continue };
        let kind = match lock.bundles.get(key) {
            None => PinKind::New,
            Some(entry) if entry.files == files => PinKind::Unchanged,
            Some(_) => PinKind::Modified,
        };
        let detail = lock.bundles.get(key).map(|entry| {
            let mut r = BundleReport {
                name: RootName::Key(key.clone()),
                state: crate::core::verify::BundleState::Verified,
                modified: vec![],
                added: vec![],
                missing: vec![],
                problems: vec![],
            };
            r.state = compare(entry, &files, &[], &mut r);
            r
        });
        rows.push(PinRow {
            key: key.as_str().to_string(),
            kind,
            file_count: files.len(),
            detail,
        });
        if kind != PinKind::Unchanged {
            next.bundles
                .insert(key.clone(), BundleEntry::from_files(files));
        }
    }
    drop(progress);
    refuse_blockers(blockers)?;
    Ok(Plan {
        lockfile: next,
        rows,
        added_patterns,
        show_summary_when_unchanged: false,
    })
}

/// Hashes the root of `key`, collecting reasons it cannot be pinned.
fn hash_key(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    progress: Option<&HashProgress>,
    blockers: &mut Vec<String>,
) -> Result<Option<BTreeMap<FilePath, Digest>>, CliError> {
    let (raw, kind) = match locate(listings, key)? {
        Located::Found { raw, kind } => (raw, kind),
        Located::Absent => {
            blockers.push(format!("{key}: does not exist"));
            return Ok(None);
        }
        Located::ThroughSymlink { at } => {
            blockers.push(format!("{key}: {} is a symlink", at.display()));
            return Ok(None);
        }
        Located::Twins { .. } => {
            blockers.push(format!(
                "{key}: exists under names that are equal after NFC normalisation"
            ));
            return Ok(None);
        }
    };
    let observed = observe_root(listings, &raw, kind, &KeepNothing, progress)?;
    let before = blockers.len();
    for p in &observed.problems {
        blockers.push(format!("{key}: {p}"));
    }
    if observed.problems.is_empty() && observed.files.is_empty() {
        blockers.push(format!(
            "{key}: holds no trackable file (a bundle needs at least one)"
        ));
    }
    Ok((blockers.len() == before).then_some(observed.files))
}

/// Turns a `seal pin` argument into a bundle key, resolving every segment to
/// the name the directory listing reports (SPEC: true-case path resolution;
/// never rely on a case-insensitive lookup by the OS).
fn resolve_argument(
    ctx: &Context,
    listings: &mut Listings<'_>,
    arg: &OsStr,
) -> Result<BundleKey, CliError> {
    let shown = crate::core::escape::escaped_os(arg);
    let Some(text) = arg.to_str() else {
        return Err(CliError::Refused(format!(
            "{shown}: a path that is not UTF-8 cannot be a bundle key"
        )));
    };
    let relative = relative_to_project(ctx, text)?;
    let segments = normalize_user_path(&relative)
        .map_err(|rule| CliError::Refused(format!("{}: the path {rule}", quoted(text))))?;
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
                // The OS may still find it (a case-insensitive directory): take
                // the listed name of the same inode.
                let dir_fd = crate::core::discovery::open_dirs(listings.root(), &dir).ok();
                let found = dir_fd
                    .as_ref()
                    .and_then(|fd| lstat_at(fd.as_fd(), OsStr::new(segment)).ok())
                    .and_then(|st| entries.iter().find(|e| e.ino == st.st_ino).cloned());
                match found {
                    Some(e) => e,
                    None => {
                        return Err(CliError::Refused(format!(
                            "{}: no such file or directory",
                            quoted(text)
                        )));
                    }
                }
            }
            _ => {
                return Err(CliError::Refused(format!(
                    "{}: more than one entry has this name after NFC normalisation",
                    quoted(text)
                )));
            }
        };
        let Some(name) = nfc_name(&entry.name) else {
            return Err(CliError::Refused(format!(
                "{shown}: a name on the path is not UTF-8"
            )));
        };
        let last = i + 1 == segments.len();
        match (entry.kind, last) {
            (EntryKind::Dir, _) | (EntryKind::File, true) => {}
            (kind, _) => {
                return Err(CliError::Refused(format!(
                    "{}: {} is {}; only directories and regular files can be sealed roots, and \
                     symlinks are never followed",
                    quoted(text),
                    escaped(&name),
                    kind.describe()
                )));
            }
        }
        dir = dir.join(&entry.name);
        true_names.push(name);
    }
    BundleKey::from_segments(&true_names)
        .map_err(|rule| CliError::Refused(format!("{}: the bundle key {rule}", quoted(text))))
}

/// A relative argument is relative to the project root; an absolute one must
/// lie inside the project.
fn relative_to_project(ctx: &Context, text: &str) -> Result<String, CliError> {
    if !text.starts_with('/') {
        return Ok(text.to_string());
    }
    let root = std::fs::canonicalize(&ctx.dir).map_err(|source| CliError::Project {
        dir: ctx.dir.clone(),
        source,
    })?;
    let root = root.as_os_str().as_bytes();
    let rest = text
        .as_bytes()
        .strip_prefix(root)
        .filter(|r| r.is_empty() || r.starts_with(b"/"));
    match rest {
        Some(rest) => Ok(String::from_utf8_lossy(rest)
            .trim_start_matches('/')
            .to_string()),
        None => Err(CliError::Refused(format!(
            "{} is outside the project root; Seal pins project-local roots only",
            quoted(text)
        ))),
    }
}
