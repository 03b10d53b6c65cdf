//! `seal diff [PATH...] [--json]`: what changed in each bundle that is not
//! Verified, against the approved version.
//!
//! The approved version is what `seal.json` records: a SHA-256 per file.
//! Its bytes come from the project's git history: the newest commit (on the
//! first-parent history of HEAD) that wrote, at that path, a blob whose
//! SHA-256 is the recorded one. Whatever git says, a blob is used only when
//! its SHA-256 matches, so a history rewritten by anyone can at worst hide
//! the approved bytes, never stand in for them. Without git or history,
//! the per-file hashes still say which files differ.
//!
//! A changed text file gets a unified diff, a binary one its sizes and
//! hashes; an Unverified bundle shows as all added, a Removed one as all
//! removed; a recorded file that is gone while an added one has its exact
//! bytes is a rename. The states and file lists come from the verification
//! `seal verify` makes ([`super::status::assess`]), the file bytes from
//! verifying each shown bundle again while keeping what was hashed. Exit
//! codes are verify's, over the bundles shown.
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

use super::{CliError, Context, Done};
use seal_core::digest::Digest;
use seal_core::discovery::Listings;
use seal_core::escape::escaped;
use seal_core::hash::Keeper;
use seal_core::lockfile::Lockfile;
use seal_core::paths::{BundleKey, FilePath, normalize_user_path};
use seal_core::verify::{BundleReport, BundleState, Outcome, RootName, verify_key};

/// Files larger than this are compared by size and hash only (their bytes
/// are not kept, and a diff of them would not be read).
pub const DIFF_LIMIT: u64 = 1 << 20;

/// How long one file's line diff may take before it is approximated.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

pub fn run(ctx: &Context, paths: &[OsString], json: bool) -> Result<Done, CliError> {
    let mut listings = Listings::new(ctx.project.as_fd());
    let assessed = super::status::assess(ctx, &mut listings, !json)?;
    let shown = select(&assessed.report.bundles, paths)?;
    let mut history = History::open(&ctx.dir);
    if let Err(why) = &history {
        eprintln!(
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
    let outcome = if assessed.implied {
        Outcome::Blocked
    } else {
        Outcome::of(shown.iter().map(|b| &b.state), assessed.report.policy)
    };
    if json {
        let doc = Document {
            status: outcome.as_str(),
            policy: assessed.report.policy.as_str(),
            history: match &history {
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
            },
            bundles,
        };
        let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        text.push('\n');
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    } else {
        let mut out = String::new();
        for b in &bundles {
            render_bundle(&mut out, b);
        }
        let _ = std::io::stdout().lock().write_all(out.as_bytes());
        if bundles.is_empty() {
            eprintln!("seal: diff: nothing to show: every bundle shown is verified");
        }
    }
    Ok(match outcome {
        Outcome::Blocked => Done::Blocked,
        Outcome::Verified | Outcome::Drift | Outcome::Warning => Done::Success,
    })
}

/// The bundles of the verification set that `paths` name (all without
/// paths): a bundle is named by its root, by a path inside it, or by a
/// directory above it. A path that names none is an error.
fn select<'r>(
    bundles: &'r [BundleReport],
    paths: &[OsString],
) -> Result<Vec<&'r BundleReport>, CliError> {
    let mut sorted: Vec<&BundleReport> = bundles.iter().collect();
    sorted.sort_by_cached_key(|b| b.name.as_display());
    if paths.is_empty() {
        return Ok(sorted);
    }
    let mut wanted = Vec::new();
    for raw in paths {
        let shown = seal_core::escape::escaped_os(raw);
        let text = raw
            .to_str()
            .ok_or_else(|| CliError::Refused(format!("{shown}: not a bundle (not UTF-8)")))?;
        let segments = normalize_user_path(text)
            .map_err(|rule| CliError::Refused(format!("{shown}: not a project path: {rule}")))?;
        let named: Vec<&BundleReport> = sorted
            .iter()
            .copied()
            .filter(|b| match &b.name {
                RootName::Key(key) => {
                    let key: Vec<&str> = key.segments().collect();
                    let n = key.len().min(segments.len());
                    key[..n] == segments[..n]
                }
                RootName::Unmappable(_) => false,
            })
            .collect();
        if named.is_empty() {
            return Err(CliError::Refused(format!(
                "{shown}: no bundle is there, inside it or below it ('seal verify' lists them)"
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
    key: String,
    state: &'static str,
    /// Why the files cannot be listed, when they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    files: Vec<FileDiff>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    problems: Vec<String>,
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
    fn word(self) -> &'static str {
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
    sha256: String,
    /// Unknown for approved bytes not found in history.
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    /// The commit the approved bytes come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

/// One changed file (an element of `files` in the `--json` document).
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// Relative to the bundle root (`.` for a single-file bundle).
    path: String,
    /// The path in the project.
    project_path: String,
    change: Change,
    /// The recorded name of a renamed file.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    approved: Option<Side>,
    #[serde(skip_serializing_if = "Option::is_none")]
    current: Option<Side>,
    /// Either side is not UTF-8 text (or holds a NUL byte).
    binary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines_added: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lines_removed: Option<usize>,
    /// The unified diff, as `diff -u` writes it, raw.
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
    /// Why there is no diff, when a text file has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
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

/// A version of a file as hashed: its digest and size, and its bytes up to
/// [`DIFF_LIMIT`].
#[derive(Debug, Clone)]
struct Blob {
    digest: Digest,
    size: u64,
    bytes: Option<Vec<u8>>,
}

fn bundle_diff(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    report: &BundleReport,
    history: Option<&mut History>,
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
    // What is on disk now, with the bytes, verified again so that the lists
    // and the bytes belong together.
    let mut current: BTreeMap<FilePath, Blob> = BTreeMap::new();
    let (mut modified, mut added, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    match report.state {
        BundleState::Removed | BundleState::Verified => {
            missing = entry
                .map(|e| e.files.keys().cloned().collect())
                .unwrap_or_default();
        }
        BundleState::Unverified | BundleState::Mismatch => {
            match verify_key(listings, key, entry, &KeepBytes) {
                Ok((fresh, observed)) => {
                    out.state = fresh.state.as_str();
                    out.problems = fresh.problems.iter().map(ToString::to_string).collect();
                    if let Some(observed) = observed {
                        for (path, digest) in &observed.files {
                            let kept = observed.kept.get(path);
                            current.insert(
                                path.clone(),
                                Blob {
                                    digest: *digest,
                                    size: kept.map_or(0, |k| k.size),
                                    bytes: kept.and_then(|k| k.bytes.clone()),
                                },
                            );
                        }
                    }
                    let parse = |v: &[String]| -> Vec<FilePath> {
                        v.iter().filter_map(|p| FilePath::parse(p).ok()).collect()
                    };
                    if entry.is_some() {
                        modified = parse(&fresh.modified);
                        added = parse(&fresh.added);
                        missing = parse(&fresh.missing);
                    } else {
                        added = current.keys().cloned().collect();
                    }
                }
                Err(e) => out.note = Some(format!("cannot read it: {e}")),
            }
        }
    }
    let recorded = |path: &FilePath| entry.and_then(|e| e.files.get(path)).copied();
    let mut history = history;
    // Renames first: a recorded file gone, and its exact bytes under a new
    // name.
    let mut renamed = Vec::new();
    missing.retain(|gone| {
        let Some(digest) = recorded(gone) else {
            return true;
        };
        match added
            .iter()
            .position(|a| current.get(a).is_some_and(|c| c.digest == digest))
        {
            Some(i) => {
                renamed.push((gone.clone(), added.remove(i)));
                false
            }
            None => true,
        }
    });
    for path in &modified {
        let approved = recorded(path).map(|d| approve(key, path, d, history.as_deref_mut()));
        out.files.push(file_diff(
            key,
            path,
            Change::Modified,
            approved,
            current.get(path),
        ));
    }
    for path in &added {
        out.files
            .push(file_diff(key, path, Change::Added, None, current.get(path)));
    }
    for path in &missing {
        let approved = recorded(path).map(|d| approve(key, path, d, history.as_deref_mut()));
        out.files
            .push(file_diff(key, path, Change::Removed, approved, None));
    }
    for (from, to) in renamed {
        let mut file = FileDiff::new(key, &to, Change::Renamed);
        file.from = Some(from.as_str().to_string());
        file.current = current.get(&to).map(Blob::side);
        file.note = Some("content unchanged".into());
        out.files.push(file);
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The approved version of `path`: its recorded digest, and its bytes and
/// commit when history has them.
struct Approved {
    digest: Digest,
    /// There is a history to search.
    searched: bool,
    found: Option<Found>,
}

fn approve(
    key: &BundleKey,
    path: &FilePath,
    digest: Digest,
    history: Option<&mut History>,
) -> Approved {
    let searched = history.is_some();
    let found = history.and_then(|h| h.find(&project_path(key, path), &digest));
    Approved {
        digest,
        searched,
        found,
    }
}

/// `key`'s root joined with `path` (the root itself for a single file),
/// relative to the project, as git names it.
fn project_path(key: &BundleKey, path: &FilePath) -> String {
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
}

impl Blob {
    fn side(&self) -> Side {
        Side {
            sha256: self.digest.to_string(),
            size: Some(self.size),
            commit: None,
        }
    }
}

/// A modified, added or removed file: both sides, and the diff when both
/// are known text within the size limit.
fn file_diff(
    key: &BundleKey,
    path: &FilePath,
    change: Change,
    approved: Option<Approved>,
    current: Option<&Blob>,
) -> FileDiff {
    let mut out = FileDiff::new(key, path, change);
    let found = approved.as_ref().and_then(|a| a.found.as_ref());
    out.approved = approved.as_ref().map(|a| Side {
        commit: a.found.as_ref().map(|f| f.commit.clone()),
        ..match &a.found {
            Some(f) => f.blob.side(),
            None => Side {
                sha256: a.digest.to_string(),
                size: None,
                commit: None,
            },
        }
    });
    out.current = current.map(Blob::side);
    // Each side's bytes: empty for the side that does not exist (an added
    // file's approved side, a removed file's current one); None when they
    // exist but are not known.
    let old: Option<&[u8]> = match &approved {
        None => Some(b""),
        Some(_) => found.and_then(|f| f.blob.bytes.as_deref()),
    };
    let new: Option<&[u8]> = match change {
        Change::Removed => Some(b""),
        _ => current.and_then(|c| c.bytes.as_deref()),
    };
    out.binary = [old, new].into_iter().flatten().any(|b| !is_text(b));
    let too_large = [&out.approved, &out.current]
        .into_iter()
        .flatten()
        .any(|s| s.size.is_some_and(|n| n > DIFF_LIMIT));
    out.note = match approved.as_ref().filter(|a| a.found.is_none()) {
        Some(a) if a.searched => {
            Some("no commit on HEAD's history has the approved bytes at this path".into())
        }
        Some(_) => Some("no git history: the approved bytes are unknown".into()),
        None if change != Change::Removed && current.is_none() => {
            Some("it cannot be read now (see the problems)".into())
        }
        None if too_large => Some(format!("larger than {} MiB: not diffed", DIFF_LIMIT >> 20)),
        None if out.binary => Some("binary".into()),
        None => None,
    };
    let (Some(old), Some(new), None) = (old, new, &out.note) else {
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
    out.diff = Some(render_lines(&lines, false));
    out.lines = lines;
    out.lines_added = Some(added);
    out.lines_removed = Some(removed);
    out
}

/// Text: valid UTF-8 with no NUL byte in its first 8000 bytes (git's test).
fn is_text(bytes: &[u8]) -> bool {
    !bytes[..bytes.len().min(8000)].contains(&0) && std::str::from_utf8(bytes).is_ok()
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
    let what = match b.state {
        "Unverified" => "not in seal.json: every file is new",
        "Removed" => "recorded in seal.json, not on disk",
        _ => "changed since it was pinned",
    };
    let _ = writeln!(out, "{} {}  ({what})", b.state, escaped(&b.key));
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
                Some(from) => format!("{} -> {}", escaped(from), escaped(&f.path)),
                None => escaped(&f.path).into_owned(),
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

// ---------------------------------------------------------------------------
// Keeping the bytes that are hashed
// ---------------------------------------------------------------------------

/// Keeps the bytes of every file it hashes, up to [`DIFF_LIMIT`] each.
struct KeepBytes;

#[derive(Debug, Clone)]
struct Kept {
    size: u64,
    bytes: Option<Vec<u8>>,
}

impl Keeper for KeepBytes {
    type Writer = Kept;
    type Kept = Kept;
    fn wants(&self, _: &FilePath) -> bool {
        true
    }
    fn begin(&self, _: &FilePath, size_hint: u64) -> std::io::Result<Kept> {
        Ok(Kept {
            size: 0,
            bytes: (size_hint <= DIFF_LIMIT).then(Vec::new),
        })
    }
    fn append(&self, kept: &mut Kept, chunk: &[u8]) -> std::io::Result<()> {
        kept.size += chunk.len() as u64;
        if kept.size > DIFF_LIMIT {
            kept.bytes = None;
        } else if let Some(bytes) = &mut kept.bytes {
            bytes.extend_from_slice(chunk);
        }
        Ok(())
    }
    fn finish(&self, kept: Kept) -> std::io::Result<Kept> {
        Ok(kept)
    }
}

// ---------------------------------------------------------------------------
// git history
// ---------------------------------------------------------------------------

/// Approved bytes found in history, and the commit that wrote them.
#[derive(Debug, Clone)]
struct Found {
    commit: String,
    blob: Blob,
}

/// The git history of the project: `git` run in the project directory.
pub struct History {
    dir: PathBuf,
    /// The repository's top directory.
    top: PathBuf,
    /// `git cat-file --batch`, started at the first blob asked for.
    blobs: Option<Blobs>,
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
        let ask = |args: &[&str]| {
            git_command(dir)
                .args(args)
                .output()
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => "git is not installed".to_string(),
                    _ => format!("cannot run git: {e}"),
                })
        };
        let out = ask(&["rev-parse", "--show-toplevel"])?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("git failed");
            return Err(first.trim_start_matches("fatal: ").to_string());
        }
        let top = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        if !ask(&["rev-parse", "--verify", "--quiet", "HEAD"])?
            .status
            .success()
        {
            return Err("the git repository has no commit yet".into());
        }
        Ok(History {
            dir: dir.to_path_buf(),
            top: PathBuf::from(top),
            blobs: None,
        })
    }

    /// The newest commit on HEAD's first-parent history that wrote, at
    /// `path` (relative to the project), a blob whose SHA-256 is `want`;
    /// with its bytes.
    fn find(&mut self, path: &str, want: &Digest) -> Option<Found> {
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
                "HEAD",
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
            if let Some(blob) = self.blob(&id)
                && blob.digest == *want
            {
                return Some(Found { commit, blob });
            }
        }
        None
    }

    /// The blob `id` (None when git does not have it).
    fn blob(&mut self, id: &str) -> Option<Blob> {
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
        match self.blobs.as_mut()?.read(id) {
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
    fn read(&mut self, id: &str) -> std::io::Result<Option<Blob>> {
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
        let mut bytes = (size <= DIFF_LIMIT).then(Vec::new);
        let mut rest = size;
        let mut buf = vec![0u8; 64 * 1024];
        while rest > 0 {
            let want = rest.min(buf.len() as u64) as usize;
            let n = self.output.read(&mut buf[..want])?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            hasher.update(&buf[..n]);
            if let Some(b) = &mut bytes {
                b.extend_from_slice(&buf[..n]);
            }
            rest -= n as u64;
        }
        let mut newline = [0u8; 1];
        self.output.read_exact(&mut newline)?;
        Ok(Some(Blob {
            digest: Digest::from_hasher(hasher),
            size,
            bytes,
        }))
    }
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
struct Document {
    /// The outcome over the bundles shown (verify's words).
    status: &'static str,
    policy: &'static str,
    history: HistoryNote,
    bundles: Vec<BundleDiff>,
}

#[derive(serde::Serialize)]
struct HistoryNote {
    /// `git`, or `none`.
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    repository: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<String>,
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
    fn text_is_utf8_without_nul() {
        assert!(is_text(b"plain\n"));
        assert!(!is_text(b"a\0b"));
        assert!(!is_text(&[0xff, 0xfe]));
    }
}
