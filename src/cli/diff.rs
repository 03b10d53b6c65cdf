//! `seal diff [PATH...] [--base REV] [--json | --format json|markdown]`:
//! what changed in each bundle that is not Verified, against the approved
//! version; with `--base`, first what the approval itself changes between
//! REV's `seal.json` and the project's ([`super::approval::against_base`]).
//!
//! The approved version is what `seal.json` records: a SHA-256 per file.
//! Its bytes come from the project's git history: the newest commit (on the
//! first-parent history of HEAD, or of REV for the base's approval) that
//! wrote, at that path, a blob whose SHA-256 is the recorded one. Whatever
//! git says, a blob is used only when its SHA-256 matches, so a history
//! rewritten by anyone can at worst hide the approved bytes, never stand in
//! for them. Without git or history, the per-file hashes still say which
//! files differ.
//!
//! A changed text file gets a unified diff, a binary one its sizes and
//! hashes; an Unverified bundle shows as all added, a Removed one as all
//! removed; a recorded file that is gone while an added one has its exact
//! bytes is a rename. The states and file lists come from the verification
//! `seal verify` makes ([`super::status::assess`]), the file bytes from
//! verifying each shown bundle again while keeping what was hashed. Exit
//! codes are verify's, over the bundles shown.
//!
//! This is also the one diff mechanism of `seal pin` and `seal init`
//! ([`super::approval`]): [`review_key`] reads a bundle keeping what a
//! reviewer is shown, [`files_changed`] says how each file changed, with
//! line counts, against any approved version.
//!
//! git runs as a subprocess, as it is on every machine that has history:
//! no git library is linked for reading a few blobs. It runs with the
//! repository's own settings that could start programs (fsmonitor,
//! signature checks, pagers, external diffs) turned off: the repository is
//! the project's, and its `.git/config` is as untrusted as its files.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use sha2::{Digest as _, Sha256};

use super::approval::Approval;
use super::{CliError, Context, Done};
use seal_core::digest::Digest;
use seal_core::discovery::Listings;
use seal_core::escape::escaped;
use seal_core::hash::Keeper;
use seal_core::lockfile::{BundleEntry, Lockfile};
use seal_core::paths::{BundleKey, FilePath, normalize_user_path};
use seal_core::verify::{BundleReport, BundleState, Outcome, RootName, verify_key};

/// Files larger than this are compared by size and hash only (their bytes
/// are not kept, and a diff of them would not be read).
pub const DIFF_LIMIT: u64 = 1 << 20;

/// How long one file's line diff may take before it is approximated.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// How many first bytes of every file read are kept (a shebang line).
const HEAD_BYTES: usize = 1024;

/// `seal diff`'s machine formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The `--json` document (docs/JSON.md).
    Json,
    /// A Markdown summary for a pull request (a GitHub job summary).
    Markdown,
}

pub fn run(
    ctx: &Context,
    paths: &[OsString],
    format: Option<Format>,
    base: Option<&str>,
) -> Result<Done, CliError> {
    let mut listings = Listings::new(ctx.project.as_fd());
    let assessed = super::status::assess(ctx, &mut listings, format.is_none())?;
    let mut history = History::open(&ctx.dir);
    let approval = match (base, history.as_mut()) {
        (None, _) => None,
        (Some(rev), Ok(history)) => Some(super::approval::against_base(
            &mut listings,
            &assessed.lock,
            history,
            rev,
        )?),
        (Some(_), Err(why)) => {
            return Err(CliError::Refused(format!(
                "--base needs the project's git history: {}",
                escaped(why)
            )));
        }
    };
    if let (Some(a), Ok(history)) = (&approval, history.as_mut()) {
        history.also_search(a.base.commit.clone());
    }
    let shown = select(&assessed.report.bundles, paths, approval.as_ref())?;
    if let (Err(why), None) = (&history, format) {
        sayln!(
            "seal: diff: no git history ({}): the approved bytes are unknown, so changed files \
             are named by their recorded and current SHA-256 only",
            escaped(why)
        );
    }
    let bundles: Vec<BundleDiff> = shown
        .iter()
        .filter(|b| b.state != BundleState::Verified)
        .map(|b| bundle_diff(&mut listings, &assessed.lock, b, history.as_mut().ok()))
        .collect();
    let approval = approval.map(|mut a| {
        if !paths.is_empty() {
            a.bundles.retain(|c| {
                BundleKey::parse(&c.key).is_ok_and(|k| names_key(paths, &k).unwrap_or(false))
            });
        }
        a
    });
    let outcome = if assessed.implied {
        Outcome::Blocked
    } else {
        Outcome::of(shown.iter().map(|b| &b.state), assessed.report.policy)
    };
    let doc = Document {
        status: outcome.as_str(),
        policy: assessed.report.policy.as_str(),
        history: HistoryNote::of(&history),
        approval,
        bundles,
    };
    let text = match format {
        Some(Format::Json) => {
            let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            text.push('\n');
            text
        }
        Some(Format::Markdown) => super::formats::markdown_summary(&doc),
        None => {
            let mut out = String::new();
            if let Some(approval) = &doc.approval {
                out.push_str(&super::approval::render_against_base(approval));
            }
            for b in &doc.bundles {
                render_bundle(&mut out, b);
            }
            if doc.bundles.is_empty() && doc.approval.as_ref().is_none_or(Approval::is_empty) {
                sayln!("seal: diff: nothing to show: every bundle shown is verified");
            }
            out
        }
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(match outcome {
        Outcome::Blocked => Done::Blocked,
        Outcome::Verified | Outcome::Drift | Outcome::Warning => Done::Success,
    })
}

/// Whether the PATHs name `key`: its root, a path inside it, or a directory
/// above it; an error for a PATH that is not a project path.
fn names_key(paths: &[OsString], key: &BundleKey) -> Result<bool, CliError> {
    let key: Vec<&str> = key.segments().collect();
    for raw in paths {
        let segments = path_segments(raw)?;
        let n = key.len().min(segments.len());
        if key[..n] == segments[..n] {
            return Ok(true);
        }
    }
    Ok(false)
}

fn path_segments(raw: &OsString) -> Result<Vec<String>, CliError> {
    let shown = seal_core::escape::escaped_os(raw);
    let text = raw
        .to_str()
        .ok_or_else(|| CliError::Refused(format!("{shown}: not a bundle (not UTF-8)")))?;
    normalize_user_path(text)
        .map_err(|rule| CliError::Refused(format!("{shown}: not a project path: {rule}")))
}

/// The bundles of the verification set that `paths` name (all without
/// paths): a bundle is named by its root, by a path inside it, or by a
/// directory above it. A path that names none (and no bundle whose
/// approval changes) is an error.
fn select<'r>(
    bundles: &'r [BundleReport],
    paths: &[OsString],
    approval: Option<&Approval>,
) -> Result<Vec<&'r BundleReport>, CliError> {
    let mut sorted: Vec<&BundleReport> = bundles.iter().collect();
    sorted.sort_by_cached_key(|b| b.name.as_display());
    if paths.is_empty() {
        return Ok(sorted);
    }
    let mut wanted = Vec::new();
    for raw in paths {
        let one = std::slice::from_ref(raw);
        let mut named = Vec::new();
        for b in &sorted {
            if let RootName::Key(key) = &b.name
                && names_key(one, key)?
            {
                named.push(*b);
            }
        }
        let in_approval = approval.is_some_and(|a| {
            a.bundles.iter().any(|c| {
                BundleKey::parse(&c.key).is_ok_and(|k| names_key(one, &k).unwrap_or(false))
            })
        });
        if named.is_empty() && !in_approval {
            return Err(CliError::Refused(format!(
                "{}: no bundle is there, inside it or below it ('seal verify' lists them)",
                seal_core::escape::escaped_os(raw)
            )));
        }
        wanted.extend(named);
    }
    wanted.sort_by_cached_key(|b| b.name.as_display());
    wanted.dedup_by(|a, b| a.name == b.name);
    Ok(wanted)
}

// ---------------------------------------------------------------------------
// What changed
// ---------------------------------------------------------------------------

/// One bundle's changes (an element of `bundles` in the `--json` document).
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleDiff {
    pub key: String,
    pub state: &'static str,
    /// Why the files cannot be listed, when they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub files: Vec<FileDiff>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

impl BundleDiff {
    /// Its state in words.
    pub fn what(&self) -> &'static str {
        match self.state {
            "Unverified" => "not in seal.json: every file is new",
            "Removed" => "recorded in seal.json, not on disk",
            _ => "changed since it was pinned",
        }
    }
}

/// How one file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Modified,
    Added,
    Removed,
    /// Gone under its recorded name, present with the same bytes under a
    /// new one.
    Renamed,
}

impl Change {
    pub fn word(self) -> &'static str {
        match self {
            Change::Modified => "modified",
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Renamed => "renamed",
        }
    }
}

/// One version of a file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Side {
    pub sha256: String,
    /// Unknown for approved bytes not found in history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The commit the approved bytes come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// One changed file (an element of `files` in the `--json` document).
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// Relative to the bundle root (`.` for a single-file bundle).
    pub path: String,
    /// The path in the project.
    pub project_path: String,
    pub change: Change,
    /// The recorded name of a renamed file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved: Option<Side>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<Side>,
    /// Either side is not UTF-8 text (or holds a NUL byte).
    pub binary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_added: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines_removed: Option<usize>,
    /// The unified diff, as `diff -u` writes it, raw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why there is no diff, when a text file has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The diff's lines, for the terminal.
    #[serde(skip)]
    lines: Vec<DiffLine>,
}

/// A line of a unified diff: the header and hunk lines, and the body lines
/// with their marker (' ', '-', '+'); `missing_newline` adds git's
/// "\ No newline at end of file".
#[derive(Debug, Clone)]
struct DiffLine {
    marker: Option<char>,
    text: String,
    missing_newline: bool,
}

/// What reading a file (from disk or from git) learnt of it, streamed:
/// its size, lines and whether it is text; its first bytes; and all its
/// bytes when they were kept.
#[derive(Debug, Clone)]
pub struct Seen {
    pub size: u64,
    /// Lines (a last line without a newline counts).
    lines: usize,
    /// UTF-8 with no NUL byte in its first 8000 bytes (git's test).
    text: bool,
    /// The first [`HEAD_BYTES`] bytes (for a shebang line).
    pub head: Vec<u8>,
    /// Every byte, when kept.
    pub bytes: Option<Vec<u8>>,
}

/// A version of a file as read: its digest and what reading it learnt.
#[derive(Debug, Clone)]
pub struct Blob {
    pub digest: Digest,
    pub seen: Seen,
}

/// What is known of one side of a change: the digest always (the record),
/// what reading it learnt when it was read, the commit it was found in, or
/// why its bytes are unknown.
#[derive(Debug, Clone)]
pub struct Version {
    pub digest: Digest,
    pub seen: Option<Seen>,
    pub commit: Option<String>,
    pub unknown: Option<String>,
}

impl Version {
    /// A version read now (from disk).
    pub fn read(blob: &Blob) -> Version {
        Version {
            digest: blob.digest,
            seen: Some(blob.seen.clone()),
            commit: None,
            unknown: None,
        }
    }

    /// The version recorded as `digest` at `path` in `key`, its bytes from
    /// the history of `rev` when there is one and it has them.
    pub fn from_history(
        key: &BundleKey,
        path: &FilePath,
        digest: Digest,
        history: Option<&mut History>,
        rev: &str,
    ) -> Version {
        let Some(history) = history else {
            return Version {
                digest,
                seen: None,
                commit: None,
                unknown: Some("no git history: the approved bytes are unknown".into()),
            };
        };
        match history.find(rev, &project_path(key, path), &digest, DIFF_LIMIT) {
            Some(found) => Version {
                digest,
                seen: Some(found.blob.seen),
                commit: Some(found.commit),
                unknown: None,
            },
            None => Version {
                digest,
                seen: None,
                commit: None,
                unknown: Some(format!(
                    "no commit on {}'s history has the approved bytes at this path",
                    if rev == "HEAD" { "HEAD" } else { "the base" }
                )),
            },
        }
    }

    fn side(&self) -> Side {
        Side {
            sha256: self.digest.to_string(),
            size: self.seen.as_ref().map(|s| s.size),
            commit: self.commit.clone(),
        }
    }
}

/// How the files of a bundle differ between two versions: by path, the
/// modified, the added and the missing ones.
#[derive(Debug, Default)]
pub struct Lists {
    pub modified: Vec<FilePath>,
    pub added: Vec<FilePath>,
    pub missing: Vec<FilePath>,
}

impl Lists {
    /// The differences between two recorded file maps.
    pub fn between(old: &BTreeMap<FilePath, Digest>, new: &BTreeMap<FilePath, Digest>) -> Lists {
        let mut lists = Lists::default();
        for (path, digest) in new {
            match old.get(path) {
                None => lists.added.push(path.clone()),
                Some(d) if d != digest => lists.modified.push(path.clone()),
                Some(_) => {}
            }
        }
        lists.missing = old
            .keys()
            .filter(|p| !new.contains_key(*p))
            .cloned()
            .collect();
        lists
    }
}

/// Every changed file of `key`'s bundle, sorted by path: `lists` says how
/// each changed, `old` and `new` are the digests on each side (for finding
/// renames: a missing file whose exact bytes were added under a new name),
/// `old_version` and `new_version` give what is known of a side. With
/// `keep_text`, each text diff is kept to be shown; its line counts are
/// kept either way.
pub fn files_changed(
    key: &BundleKey,
    lists: Lists,
    old: &BTreeMap<FilePath, Digest>,
    new: &BTreeMap<FilePath, Digest>,
    mut old_version: impl FnMut(&FilePath, Digest) -> Version,
    mut new_version: impl FnMut(&FilePath) -> Option<Version>,
    keep_text: bool,
) -> Vec<FileDiff> {
    let Lists {
        modified,
        mut added,
        mut missing,
    } = lists;
    let mut renamed = Vec::new();
    missing.retain(|gone| {
        let Some(digest) = old.get(gone) else {
            return true;
        };
        match added.iter().position(|a| new.get(a) == Some(digest)) {
            Some(i) => {
                renamed.push((gone.clone(), added.remove(i)));
                false
            }
            None => true,
        }
    });
    let mut out = Vec::new();
    for path in &modified {
        let approved = old.get(path).map(|d| old_version(path, *d));
        let current = new_version(path);
        out.push(file_diff(
            key,
            path,
            Change::Modified,
            approved,
            current,
            keep_text,
        ));
    }
    for path in &added {
        let current = new_version(path);
        out.push(file_diff(
            key,
            path,
            Change::Added,
            None,
            current,
            keep_text,
        ));
    }
    for path in &missing {
        let approved = old.get(path).map(|d| old_version(path, *d));
        out.push(file_diff(
            key,
            path,
            Change::Removed,
            approved,
            None,
            keep_text,
        ));
    }
    for (from, to) in renamed {
        let mut file = FileDiff::new(key, &to, Change::Renamed);
        file.from = Some(from.as_str().to_string());
        file.current = new_version(&to).map(|v| v.side());
        file.note = Some("content unchanged".into());
        out.push(file);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// A bundle read now, against an approved version of it.
pub struct Reviewed {
    /// Its state against that version (verify's words).
    pub state: BundleState,
    pub problems: Vec<String>,
    /// Every file read, with what reading it learnt.
    pub current: BTreeMap<FilePath, Blob>,
    /// What was learnt of the approved version of each file that changed,
    /// when history had it.
    pub approved: BTreeMap<FilePath, Seen>,
    pub files: Vec<FileDiff>,
}

/// Reads `key`'s bundle now (keeping what `keep` asks for) and says how it
/// differs from `entry` (None: every file is added); the approved bytes
/// come from HEAD's history.
pub fn review_key(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keep: &KeepBytes<'_>,
    mut history: Option<&mut History>,
    keep_text: bool,
) -> Result<Reviewed, String> {
    let (fresh, current) = read_key(listings, key, entry, keep)?;
    let digests: BTreeMap<FilePath, Digest> =
        current.iter().map(|(p, b)| (p.clone(), b.digest)).collect();
    let parse = |v: &[String]| -> Vec<FilePath> {
        v.iter().filter_map(|p| FilePath::parse(p).ok()).collect()
    };
    let lists = match entry {
        Some(_) => Lists {
            modified: parse(&fresh.modified),
            added: parse(&fresh.added),
            missing: parse(&fresh.missing),
        },
        None => Lists {
            added: digests.keys().cloned().collect(),
            ..Lists::default()
        },
    };
    let empty = BTreeMap::new();
    let mut approved = BTreeMap::new();
    let files = files_changed(
        key,
        lists,
        entry.map_or(&empty, |e| &e.files),
        &digests,
        |path, digest| {
            let version = Version::from_history(key, path, digest, history.as_deref_mut(), "HEAD");
            if let Some(seen) = &version.seen {
                approved.insert(path.clone(), seen.clone());
            }
            version
        },
        |path| current.get(path).map(Version::read),
        keep_text,
    );
    Ok(Reviewed {
        state: fresh.state,
        problems: fresh.problems.iter().map(ToString::to_string).collect(),
        current,
        approved,
        files,
    })
}

/// Reads `key`'s bundle now, verified against `entry`, keeping what `keep`
/// asks for: the verification, and every file read.
pub fn read_key(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    entry: Option<&BundleEntry>,
    keep: &KeepBytes<'_>,
) -> Result<(BundleReport, BTreeMap<FilePath, Blob>), String> {
    let (fresh, observed) = verify_key(listings, key, entry, keep).map_err(|e| e.to_string())?;
    let mut current = BTreeMap::new();
    if let Some(mut observed) = observed {
        for (path, digest) in &observed.files {
            if let Some(seen) = observed.kept.remove(path) {
                current.insert(
                    path.clone(),
                    Blob {
                        digest: *digest,
                        seen,
                    },
                );
            }
        }
    }
    Ok((fresh, current))
}

fn bundle_diff(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    report: &BundleReport,
    mut history: Option<&mut History>,
) -> BundleDiff {
    let mut out = BundleDiff {
        key: report.name.as_display(),
        state: report.state.as_str(),
        note: None,
        files: Vec::new(),
        problems: Vec::new(),
    };
    let RootName::Key(key) = &report.name else {
        out.note = Some("a name on its path cannot be a bundle key".into());
        return out;
    };
    let entry = lock.bundles.get(key);
    match report.state {
        BundleState::Removed | BundleState::Verified => {
            let Some(entry) = entry else { return out };
            let lists = Lists {
                missing: entry.files.keys().cloned().collect(),
                ..Lists::default()
            };
            out.files = files_changed(
                key,
                lists,
                &entry.files,
                &BTreeMap::new(),
                |path, digest| {
                    Version::from_history(key, path, digest, history.as_deref_mut(), "HEAD")
                },
                |_| None,
                true,
            );
        }
        BundleState::Unverified | BundleState::Mismatch => {
            let keep = KeepBytes::all();
            // What is on disk now, with the bytes, verified again so that
            // the lists and the bytes belong together.
            match review_key(listings, key, entry, &keep, history, true) {
                Ok(reviewed) => {
                    out.state = reviewed.state.as_str();
                    out.problems = reviewed.problems;
                    out.files = reviewed.files;
                }
                Err(e) => out.note = Some(format!("cannot read it: {e}")),
            }
        }
    }
    out
}

/// `key`'s root joined with `path` (the root itself for a single file),
/// relative to the project, as git names it.
pub fn project_path(key: &BundleKey, path: &FilePath) -> String {
    if path.is_single_file() {
        key.rel_path().to_string()
    } else {
        format!("{}/{}", key.rel_path(), path.as_str())
    }
}

impl FileDiff {
    /// A change of `path` in `key`'s bundle, with nothing known yet.
    fn new(key: &BundleKey, path: &FilePath, change: Change) -> FileDiff {
        FileDiff {
            path: path.as_str().to_string(),
            project_path: project_path(key, path),
            change,
            from: None,
            approved: None,
            current: None,
            binary: false,
            lines_added: None,
            lines_removed: None,
            diff: None,
            note: None,
            lines: Vec::new(),
        }
    }

    /// The name a reviewer knows the file by: its path in the bundle, or
    /// the root's own name for a single-file bundle.
    pub fn shown_path(&self) -> &str {
        if self.path == FilePath::single_file().as_str() {
            self.project_path
                .rsplit('/')
                .next()
                .unwrap_or(&self.project_path)
        } else {
            &self.path
        }
    }

    /// The diff's lines escaped for a terminal (empty when not kept).
    pub fn terminal_diff(&self) -> String {
        render_lines(&self.lines, true)
    }
}

/// A modified, added or removed file: both sides, and the diff when both
/// are known text within the size limit (the added side of an added file
/// and the removed side of a removed one are empty). Without `keep_text`,
/// only the diff's line counts are kept.
fn file_diff(
    key: &BundleKey,
    path: &FilePath,
    change: Change,
    approved: Option<Version>,
    current: Option<Version>,
    keep_text: bool,
) -> FileDiff {
    let mut out = FileDiff::new(key, path, change);
    out.approved = approved.as_ref().map(Version::side);
    out.current = current.as_ref().map(Version::side);
    let old_seen = approved.as_ref().and_then(|v| v.seen.as_ref());
    let new_seen = current.as_ref().and_then(|v| v.seen.as_ref());
    out.binary = [old_seen, new_seen].into_iter().flatten().any(|s| !s.text);
    let too_large = [&out.approved, &out.current]
        .into_iter()
        .flatten()
        .any(|s| s.size.is_some_and(|n| n > DIFF_LIMIT));
    let unreadable_now = change != Change::Removed && current.is_none();
    out.note = match approved.as_ref().and_then(|a| a.unknown.clone()) {
        Some(why) => Some(why),
        None if unreadable_now => Some("it cannot be read now (see the problems)".into()),
        None if too_large => Some(format!("larger than {} MiB: not diffed", DIFF_LIMIT >> 20)),
        None if out.binary => Some("binary".into()),
        None => None,
    };
    // A whole file added or removed: its line count is known without its
    // bytes.
    if !out.binary {
        match (change, old_seen, new_seen) {
            (Change::Added, _, Some(new)) => out.lines_added = Some(new.lines),
            (Change::Removed, Some(old), _) => out.lines_removed = Some(old.lines),
            _ => {}
        }
    }
    if out.note.is_some() {
        return out;
    }
    // Each side's bytes: empty for the side that does not exist.
    let old: Option<&[u8]> = match &approved {
        None => Some(b""),
        Some(_) => old_seen.and_then(|s| s.bytes.as_deref()),
    };
    let new: Option<&[u8]> = match change {
        Change::Removed => Some(b""),
        _ => new_seen.and_then(|s| s.bytes.as_deref()),
    };
    let (Some(old), Some(new)) = (old, new) else {
        return out;
    };
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return out;
    };
    let old_name = match approved {
        Some(_) => format!("a/{}", out.project_path),
        None => "/dev/null".to_string(),
    };
    let new_name = match change {
        Change::Removed => "/dev/null".to_string(),
        _ => format!("b/{}", out.project_path),
    };
    let (lines, added, removed) = unified(old, new, &old_name, &new_name);
    // An added file adds lines only, a removed one removes them only.
    out.lines_added = (change != Change::Removed).then_some(added);
    out.lines_removed = (change != Change::Added).then_some(removed);
    if keep_text {
        out.diff = Some(render_lines(&lines, false));
        out.lines = lines;
    }
    out
}

/// Text: valid UTF-8 with no NUL byte in its first 8000 bytes (git's test).
#[cfg(test)]
fn is_text(bytes: &[u8]) -> bool {
    let mut reading = Reading::new(None, 0);
    reading.feed(bytes);
    reading.finish().text
}

/// A unified diff of `old` and `new` with three lines of context: its
/// lines, and how many lines it adds and removes.
fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> (Vec<DiffLine>, usize, usize) {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let header = |text: String| DiffLine {
        marker: None,
        text,
        missing_newline: false,
    };
    let mut lines = vec![
        header(format!("--- {old_name}")),
        header(format!("+++ {new_name}")),
    ];
    let (mut added, mut removed) = (0, 0);
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        lines.push(header(hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let marker = match change.tag() {
                ChangeTag::Equal => ' ',
                ChangeTag::Delete => {
                    removed += 1;
                    '-'
                }
                ChangeTag::Insert => {
                    added += 1;
                    '+'
                }
            };
            let value = change.value();
            lines.push(DiffLine {
                marker: Some(marker),
                text: value.strip_suffix('\n').unwrap_or(value).to_string(),
                missing_newline: change.missing_newline(),
            });
        }
    }
    (lines, added, removed)
}

/// The diff's lines as text: raw (`diff -u`'s bytes) or escaped for a
/// terminal (control and bidi characters made visible; tabs kept).
fn render_lines(lines: &[DiffLine], terminal: bool) -> String {
    let mut out = String::new();
    for line in lines {
        if let Some(marker) = line.marker {
            out.push(marker);
        }
        if terminal {
            out.push_str(&escape_content(&line.text));
        } else {
            out.push_str(&line.text);
        }
        out.push('\n');
        if line.missing_newline {
            out.push_str("\\ No newline at end of file\n");
        }
    }
    out
}

/// A line of untrusted content made safe for a terminal: every character
/// [`escaped`] escapes, except the tab, which a terminal only moves over
/// (and which diffs of Makefiles and Go are full of).
fn escape_content(line: &str) -> String {
    line.split('\t')
        .map(|part| escaped(part).into_owned())
        .collect::<Vec<_>>()
        .join("\t")
}

/// The human rendering of one bundle (stdout).
fn render_bundle(out: &mut String, b: &BundleDiff) {
    let _ = writeln!(out, "{} {}  ({})", b.state, escaped(&b.key), b.what());
    if let Some(note) = &b.note {
        let _ = writeln!(out, "  {}", escaped(note));
    }
    for p in &b.problems {
        let _ = writeln!(out, "  problem:  {p}");
    }
    for f in &b.files {
        let _ = writeln!(
            out,
            "  {:<9} {}  ({})",
            f.change.word(),
            match &f.from {
                Some(from) => format!("{} -> {}", escaped(from), escaped(f.shown_path())),
                None => escaped(f.shown_path()).into_owned(),
            },
            summary(f)
        );
        out.push_str(&render_lines(&f.lines, true));
    }
    out.push('\n');
}

/// What a file's summary line says after its name.
fn summary(f: &FileDiff) -> String {
    let mut parts = Vec::new();
    match (f.change, f.lines_added, f.lines_removed) {
        (Change::Added, Some(a), _) => parts.push(format!("+{a} lines")),
        (Change::Removed, _, Some(r)) => parts.push(format!("-{r} lines")),
        (_, Some(a), Some(r)) => parts.push(format!("+{a} -{r} lines")),
        _ => {}
    }
    if let Some(note) = &f.note {
        parts.push(note.clone());
    }
    let side = |label: &str, s: &Side| {
        let size = s.size.map(|n| format!("{n} bytes, ")).unwrap_or_default();
        let commit = s
            .commit
            .as_deref()
            .map(|c| format!(", from commit {}", &c[..c.len().min(12)]))
            .unwrap_or_default();
        format!("{label} {size}{}{commit}", s.sha256)
    };
    let diffed = f.diff.is_some();
    if let Some(a) = &f.approved {
        if diffed {
            if let Some(c) = &a.commit {
                parts.push(format!(
                    "approved bytes from commit {}",
                    &c[..c.len().min(12)]
                ));
            }
        } else {
            parts.push(side("approved", a));
        }
    }
    if let Some(c) = &f.current
        && !diffed
        && f.change != Change::Renamed
    {
        parts.push(side("now", c));
    }
    parts.join("; ")
}

/// The line counts of a change, or why there are none, in a few words (the
/// summary `seal pin` and `seal init` print under each bundle).
pub fn counts(f: &FileDiff) -> String {
    let size = |s: &Option<Side>| s.as_ref().and_then(|s| s.size);
    match (f.change, f.lines_added, f.lines_removed) {
        (Change::Renamed, _, _) => "content unchanged".to_string(),
        (Change::Added, Some(a), _) => format!("+{a} lines"),
        (Change::Removed, _, Some(r)) => format!("-{r} lines"),
        (_, Some(a), Some(r)) => format!("+{a} -{r} lines"),
        _ if f.binary => match (f.change, size(&f.approved), size(&f.current)) {
            (_, Some(old), Some(new)) => format!("binary, {old} -> {new} bytes"),
            (Change::Modified, None, Some(n)) => format!("binary, now {n} bytes"),
            (_, None, Some(n)) | (_, Some(n), None) => format!("binary, {n} bytes"),
            (_, None, None) => "binary".to_string(),
        },
        _ => f.note.clone().unwrap_or_default(),
    }
}

// ---------------------------------------------------------------------------
// Keeping what is read
// ---------------------------------------------------------------------------

/// Learns a file chunk by chunk: its size, lines, whether it is text, its
/// first bytes, and all its bytes up to a limit when asked to.
pub struct Reading {
    size: u64,
    newlines: usize,
    last: Option<u8>,
    /// A NUL byte in the first 8000 bytes, or invalid UTF-8, was seen.
    binary: bool,
    /// The start of a UTF-8 sequence the last chunk ended inside.
    carry: Vec<u8>,
    head: Vec<u8>,
    bytes: Option<Vec<u8>>,
    limit: u64,
}

impl Reading {
    /// A reading that keeps every byte when `keep_up_to` is at least the
    /// file's size (`size_hint`, checked again as bytes come).
    pub fn new(keep_up_to: Option<u64>, size_hint: u64) -> Reading {
        let limit = keep_up_to.unwrap_or(0);
        Reading {
            size: 0,
            newlines: 0,
            last: None,
            binary: false,
            carry: Vec::new(),
            head: Vec::new(),
            bytes: keep_up_to.filter(|l| size_hint <= *l).map(|_| Vec::new()),
            limit,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let start = self.size;
        self.size += chunk.len() as u64;
        self.newlines += chunk.iter().filter(|b| **b == b'\n').count();
        self.last = chunk.last().copied();
        if start < 8000 {
            let n = (8000 - start).min(chunk.len() as u64) as usize;
            self.binary |= chunk[..n].contains(&0);
        }
        if self.head.len() < HEAD_BYTES {
            let n = (HEAD_BYTES - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..n]);
        }
        if !self.binary {
            self.check_utf8(chunk);
        }
        if self.size > self.limit {
            self.bytes = None;
        } else if let Some(bytes) = &mut self.bytes {
            bytes.extend_from_slice(chunk);
        }
    }

    /// Checks `chunk` (after what the previous one left unfinished) as UTF-8.
    fn check_utf8(&mut self, chunk: &[u8]) {
        let joined;
        let data: &[u8] = if self.carry.is_empty() {
            chunk
        } else {
            joined = [std::mem::take(&mut self.carry).as_slice(), chunk].concat();
            &joined
        };
        if let Err(e) = std::str::from_utf8(data) {
            match e.error_len() {
                Some(_) => self.binary = true,
                None => self.carry = data[e.valid_up_to()..].to_vec(),
            }
        }
    }

    pub fn finish(self) -> Seen {
        let partial = self.last.is_some_and(|b| b != b'\n');
        Seen {
            size: self.size,
            lines: self.newlines + usize::from(partial),
            text: !self.binary && self.carry.is_empty(),
            head: self.head,
            bytes: self.bytes,
        }
    }
}

/// Keeps, of every file it hashes, what a [`Reading`] learns, with every
/// byte (up to the limit `keep` gives, none when it gives none) of the
/// files a reviewer is shown.
pub struct KeepBytes<'a> {
    keep: Box<KeepLimit<'a>>,
}

/// How many bytes of a file to keep whole (None: only what a reading
/// learns).
type KeepLimit<'a> = dyn Fn(&FilePath) -> Option<u64> + Sync + 'a;

impl<'a> KeepBytes<'a> {
    /// The bytes of every file up to [`DIFF_LIMIT`].
    pub fn all() -> KeepBytes<'static> {
        KeepBytes::with(|_| Some(DIFF_LIMIT))
    }

    /// The bytes of each file up to the limit `keep` gives it.
    pub fn with(keep: impl Fn(&FilePath) -> Option<u64> + Sync + 'a) -> KeepBytes<'a> {
        KeepBytes {
            keep: Box::new(keep),
        }
    }
}

impl Keeper for KeepBytes<'_> {
    type Writer = Reading;
    type Kept = Seen;
    fn wants(&self, _: &FilePath) -> bool {
        true
    }
    fn begin(&self, path: &FilePath, size_hint: u64) -> std::io::Result<Reading> {
        Ok(Reading::new((self.keep)(path), size_hint))
    }
    fn append(&self, reading: &mut Reading, chunk: &[u8]) -> std::io::Result<()> {
        reading.feed(chunk);
        Ok(())
    }
    fn finish(&self, reading: Reading) -> std::io::Result<Seen> {
        Ok(reading.finish())
    }
}

// ---------------------------------------------------------------------------
// git history
// ---------------------------------------------------------------------------

/// Approved bytes found in history, and the commit that wrote them.
#[derive(Debug, Clone)]
pub struct Found {
    pub commit: String,
    pub blob: Blob,
}

/// The git history of the project: `git` run in the project directory.
pub struct History {
    dir: PathBuf,
    /// The repository's top directory.
    top: PathBuf,
    /// `git cat-file --batch`, started at the first blob asked for.
    blobs: Option<Blobs>,
    /// A commit searched when HEAD's history has no approved bytes (the
    /// base of `--base`: a shallow clone of a pull request may hold the
    /// base without HEAD's own history).
    fallback: Option<String>,
}

struct Blobs {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Drop for Blobs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl History {
    /// The history of the repository holding `dir`, or why there is none.
    pub fn open(dir: &Path) -> Result<History, String> {
        let out = git_output(dir, &["rev-parse", "--show-toplevel"])?;
        if !out.status.success() {
            return Err(git_error(&out));
        }
        let top = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        if !git_output(dir, &["rev-parse", "--verify", "--quiet", "HEAD"])?
            .status
            .success()
        {
            return Err("the git repository has no commit yet".into());
        }
        Ok(History {
            dir: dir.to_path_buf(),
            top: PathBuf::from(top),
            blobs: None,
            fallback: None,
        })
    }

    /// The full id of the commit `rev` names, or why there is none. A
    /// revision that looks like an option is refused (it would be one to
    /// git).
    pub fn commit_of(&self, rev: &str) -> Result<String, String> {
        if rev.starts_with('-') || rev.is_empty() {
            return Err(format!("{}: not a revision", escaped(rev)));
        }
        let spec = format!("{rev}^{{commit}}");
        let out = git_output(
            &self.dir,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
        )?;
        if !out.status.success() {
            return Err(format!(
                "{}: no such commit in this repository (a shallow clone has only what it \
                 fetched: fetch it, or check out with fetch-depth: 0)",
                escaped(rev)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The file at `path` (relative to the project) in `commit`: Ok(None)
    /// when it has none there.
    pub fn file_at(&mut self, commit: &str, path: &str) -> Result<Option<Vec<u8>>, String> {
        let out = git_output(
            &self.dir,
            &["ls-tree", "-z", "--full-name", commit, "--", path],
        )?;
        if !out.status.success() {
            return Err(git_error(&out));
        }
        // "<mode> blob <id>\t<path>\0"
        let listing = String::from_utf8_lossy(&out.stdout);
        let Some(id) = listing
            .split('\0')
            .filter_map(|entry| entry.split_once('\t').map(|(meta, _)| meta))
            .find_map(|meta| match meta.split(' ').collect::<Vec<_>>()[..] {
                [_, "blob", id] => Some(id.to_string()),
                _ => None,
            })
        else {
            return Ok(None);
        };
        self.blob(&id, super::lets_run::MAX_BYTES)
            .and_then(|b| b.seen.bytes)
            .map(Some)
            .ok_or_else(|| format!("{}: cannot be read from git", escaped(path)))
    }

    /// Searches `commit`'s history too when HEAD's has no approved bytes.
    pub fn also_search(&mut self, commit: String) {
        self.fallback = Some(commit);
    }

    /// The newest commit on `rev`'s first-parent history that wrote, at
    /// `path` (relative to the project), a blob whose SHA-256 is `want`;
    /// with what reading it learnt, its bytes kept up to `limit`. For HEAD,
    /// then the history [`History::also_search`] names.
    pub fn find(&mut self, rev: &str, path: &str, want: &Digest, limit: u64) -> Option<Found> {
        let found = self.find_in(rev, path, want, limit);
        match (&found, rev, self.fallback.clone()) {
            (None, "HEAD", Some(fallback)) => self.find_in(&fallback, path, want, limit),
            _ => found,
        }
    }

    fn find_in(&mut self, rev: &str, path: &str, want: &Digest, limit: u64) -> Option<Found> {
        if rev.starts_with('-') {
            return None;
        }
        let out = git_command(&self.dir)
            .args([
                "log",
                "--no-show-signature",
                "--format=%x01%H",
                "-z",
                "--raw",
                "--no-abbrev",
                "--no-renames",
                "--first-parent",
                "-m",
                rev,
                "--",
                path,
            ])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let mut seen = std::collections::HashSet::new();
        for (commit, id) in parse_log(&out.stdout) {
            if !seen.insert(id.clone()) {
                continue;
            }
            if let Some(blob) = self.blob(&id, limit)
                && blob.digest == *want
            {
                return Some(Found { commit, blob });
            }
        }
        None
    }

    /// The blob `id`, its bytes kept up to `limit` (None when git does not
    /// have it).
    fn blob(&mut self, id: &str, limit: u64) -> Option<Blob> {
        if self.blobs.is_none() {
            let mut child = git_command(&self.dir)
                .args(["cat-file", "--batch"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            let input = child.stdin.take()?;
            let output = BufReader::new(child.stdout.take()?);
            self.blobs = Some(Blobs {
                child,
                input,
                output,
            });
        }
        match self.blobs.as_mut()?.read(id, limit) {
            Ok(found) => found,
            Err(_) => {
                // The batch is out of step: start a new one next time.
                self.blobs = None;
                None
            }
        }
    }
}

impl Blobs {
    /// Asks `git cat-file --batch` for `id` and reads the answer, hashing
    /// it as it comes.
    fn read(&mut self, id: &str, limit: u64) -> std::io::Result<Option<Blob>> {
        writeln!(self.input, "{id}")?;
        self.input.flush()?;
        let mut header = String::new();
        self.output.read_line(&mut header)?;
        // "<id> blob <size>", or "<id> missing".
        let fields: Vec<&str> = header.split_whitespace().collect();
        let [_, "blob", size] = fields[..] else {
            return Ok(None);
        };
        let size: u64 = size.parse().map_err(std::io::Error::other)?;
        let mut hasher = Sha256::new();
        let mut reading = Reading::new(Some(limit), size);
        let mut rest = size;
        let mut buf = vec![0u8; 64 * 1024];
        while rest > 0 {
            let want = rest.min(buf.len() as u64) as usize;
            let n = self.output.read(&mut buf[..want])?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            hasher.update(&buf[..n]);
            reading.feed(&buf[..n]);
            rest -= n as u64;
        }
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline)?;
        Ok(Some(Blob {
            digest: Digest::from_hasher(hasher),
            seen: reading.finish(),
        }))
    }
}

/// Runs `git args` in `dir` (see [`git_command`]) and collects its output.
fn git_output(dir: &Path, args: &[&str]) -> Result<std::process::Output, String> {
    git_command(dir)
        .args(args)
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "git is not installed".to_string(),
            _ => format!("cannot run git: {e}"),
        })
}

/// The first line git wrote on stderr, without its `fatal: `.
fn git_error(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("git failed");
    first.trim_start_matches("fatal: ").to_string()
}

/// `git` in `dir`, with every setting of the repository that could start
/// a program turned off, no pager, no prompt, pathspecs taken literally.
fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--no-pager")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "log.showSignature=false",
            "-c",
            "core.pager=cat",
            "-c",
            "diff.external=",
            "-c",
            "log.decorate=false",
        ])
        .env("GIT_LITERAL_PATHSPECS", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_PAGER")
        .stdin(Stdio::null());
    cmd
}

/// (commit, blob) pairs, newest first, from `git log --format=%x01%H -z
/// --raw --no-abbrev` of one path; deletions (the all-zero blob) left out.
fn parse_log(bytes: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for record in bytes.split(|b| *b == 1).filter(|r| !r.is_empty()) {
        let mut fields = record.split(|b| *b == 0);
        let Some(commit) = fields.next().and_then(|c| std::str::from_utf8(c).ok()) else {
            continue;
        };
        // Then ":<mode> <mode> <old> <new> <status>", the path, and so on.
        for field in fields {
            let text = String::from_utf8_lossy(field);
            let Some(meta) = text.trim_start_matches('\n').strip_prefix(':') else {
                continue;
            };
            let parts: Vec<&str> = meta.split(' ').collect();
            if let [_, _, _, new, _] = parts[..]
                && !new.bytes().all(|b| b == b'0')
            {
                out.push((commit.trim().to_string(), new.to_string()));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The --json document
// ---------------------------------------------------------------------------

#[derive(serde::Serialize)]
pub struct Document {
    /// The outcome over the bundles shown (verify's words).
    pub status: &'static str,
    pub policy: &'static str,
    pub history: HistoryNote,
    /// With `--base`: what the approval changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    pub bundles: Vec<BundleDiff>,
}

#[derive(serde::Serialize)]
pub struct HistoryNote {
    /// `git`, or `none`.
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl HistoryNote {
    pub fn of(history: &Result<History, String>) -> HistoryNote {
        match history {
            Ok(h) => HistoryNote {
                source: "git",
                repository: Some(h.top.to_string_lossy().into_owned()),
                why: None,
            },
            Err(why) => HistoryNote {
                source: "none",
                repository: None,
                why: Some(why.clone()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_log_records_name_each_commit_and_its_new_blob() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let zero = "0".repeat(40);
        let one = "1".repeat(40);
        let log = format!(
            "\x01{a}\0\n:100644 000000 {one} {zero} D\0dir/x y.md\0\
             \x01{b}\0\n:100644 100644 {zero} {one} A\0dir/x y.md\0"
        );
        assert_eq!(parse_log(log.as_bytes()), vec![(b, one)]);
    }

    #[test]
    fn unified_diffs_count_lines_and_mark_a_missing_newline() {
        let (lines, added, removed) = unified("a\nb\nc\n", "a\nB\nc", "a/x", "b/x");
        assert_eq!((added, removed), (2, 2));
        let text = render_lines(&lines, false);
        assert_eq!(
            text,
            "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n+c\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn content_reaches_a_terminal_escaped_but_tabs_stay() {
        let (lines, _, _) = unified("", "\tok\x1b[2J\u{202e}x\n", "/dev/null", "b/x");
        let text = render_lines(&lines, true);
        assert!(text.ends_with("+\tok\\u{001b}[2J\\u{202e}x\n"), "{text}");
        assert!(render_lines(&lines, false).ends_with("+\tok\x1b[2J\u{202e}x\n"));
    }

    #[test]
    fn a_reading_in_chunks_learns_what_one_of_the_whole_does() {
        let samples: [&[u8]; 6] = [
            b"",
            b"one\ntwo",
            "caf\u{e9} \u{65e5}\u{672c}\n\u{1F600}\n".as_bytes(),
            b"bad \xff utf8\n",
            b"nul\0here\n",
            b"trailing\n\n",
        ];
        for bytes in samples {
            let whole = {
                let mut r = Reading::new(Some(DIFF_LIMIT), bytes.len() as u64);
                r.feed(bytes);
                r.finish()
            };
            for size in 1..4 {
                let mut r = Reading::new(None, 0);
                for chunk in bytes.chunks(size) {
                    r.feed(chunk);
                }
                let seen = r.finish();
                assert_eq!(
                    (seen.size, seen.lines, seen.text, &seen.head),
                    (whole.size, whole.lines, whole.text, &whole.head),
                    "{bytes:?} in chunks of {size}"
                );
                assert!(seen.bytes.is_none(), "nothing kept without a limit");
            }
            assert_eq!(whole.bytes.as_deref(), Some(bytes));
        }
        // Lines as a line diff counts them: a last line without a newline
        // counts.
        let lines = |b: &[u8]| {
            let mut r = Reading::new(None, 0);
            r.feed(b);
            r.finish().lines
        };
        assert_eq!(
            (lines(b""), lines(b"a"), lines(b"a\n"), lines(b"a\nb")),
            (0, 1, 1, 2)
        );
        // A NUL after the first 8000 bytes does not make a file binary
        // (git's test); bytes over the limit are dropped.
        let mut long = vec![b'a'; 9000];
        long.push(0);
        let mut r = Reading::new(Some(100), 0);
        r.feed(&long);
        let seen = r.finish();
        assert!(seen.text);
        assert!(seen.bytes.is_none());
        assert_eq!(seen.head.len(), HEAD_BYTES);
        // A UTF-8 sequence cut at the end is not text.
        let mut r = Reading::new(None, 0);
        r.feed("\u{65e5}".as_bytes().split_at(2).0);
        assert!(!r.finish().text);
    }

    #[test]
    fn text_is_utf8_without_nul() {
        assert!(is_text(b"plain\n"));
        assert!(!is_text(b"a\0b"));
        assert!(!is_text(&[0xff, 0xfe]));
    }
}
