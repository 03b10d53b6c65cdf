//! What an approval changes, shown to whoever is asked to give it: per
//! bundle, the files added, removed and changed with line counts (from
//! [`super::diff`], the one diff mechanism), and apart from them what the
//! approval lets run ([`super::lets_run`]). `seal pin` and `seal init` show
//! it before they ask ([`review`]); `seal diff --base REV` shows it for the
//! change from REV's `seal.json` to the project's, as a pull request's
//! reviewer needs it ([`against_base`]).
//!
//! What is shown is what is approved: [`review`] reads each bundle again,
//! keeping what it shows, and a bundle whose files no longer hash to what
//! the plan would record stops the pin before the question ("changed while
//! seal was reading it"), so an agent cannot show the reviewer one version
//! and have the other recorded.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::CliError;
use super::diff::{
    self, DIFF_LIMIT, FileDiff, History, HistoryNote, KeepBytes, Lists, Seen, Version,
};
use super::lets_run::{self, Runnable};
use seal_core::digest::Digest;
use seal_core::discovery::Listings;
use seal_core::escape::escaped;
use seal_core::lockfile::{BundleEntry, LOCKFILE_NAME, Lockfile};
use seal_core::paths::{BundleKey, FilePath};

/// What an approval does to a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Approves {
    /// It approves a bundle not approved before.
    New,
    /// It approves other files for a bundle approved before.
    Modified,
    /// It withdraws a bundle's approval.
    Removed,
}

impl Approves {
    /// The marker and word of the bundle's row (the reference CLI's).
    fn row(self) -> (char, &'static str) {
        match self {
            Approves::New => ('+', "new"),
            Approves::Modified => ('~', "modified"),
            Approves::Removed => ('-', "removed"),
        }
    }
}

/// What approving one bundle changes (an element of `bundles` in the
/// documents of `seal pin --json`, `seal init --json` and `seal diff
/// --base`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleChange {
    pub key: String,
    pub change: Approves,
    /// How many files the approved version holds (0 when removed).
    pub file_count: usize,
    /// Every file that changes, sorted by path (every file of a new bundle,
    /// added; none for a removed one).
    pub files: Vec<FileDiff>,
    /// What the approved version lets run.
    pub lets_run: Vec<Runs>,
}

/// One thing an approved bundle lets run, and whether the version approved
/// before let it run.
#[derive(Debug, Serialize)]
pub struct Runs {
    #[serde(flatten)]
    pub runnable: Runnable,
    /// True when the version approved before did not let it run, false when
    /// it did; absent for a new bundle, or when the bytes approved before
    /// are unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<bool>,
}

/// What the approved files of a bundle let run, each marked against the
/// version approved before (`old`, None for a new bundle): a file approved
/// before with the same bytes runs nothing new; a changed one is compared
/// entry by entry with what its old bytes (`old_seen`, when known) ran.
fn marked_runs(
    key: &BundleKey,
    new: &BTreeMap<FilePath, Digest>,
    old: Option<&BTreeMap<FilePath, Digest>>,
    old_seen: &BTreeMap<FilePath, Seen>,
    mut runs_of: impl FnMut(&FilePath, &str) -> (Vec<Runnable>, u32),
) -> Vec<Runs> {
    let mut out = Vec::new();
    for (path, digest) in new {
        let at = diff::project_path(key, path);
        let (runs, mode) = runs_of(path, &at);
        let before: Option<Vec<Runnable>> = match old.map(|o| o.get(path)) {
            None => None,
            Some(None) => Some(Vec::new()),
            Some(Some(d)) if d == digest => {
                out.extend(runs.into_iter().map(|runnable| Runs {
                    runnable,
                    new: Some(false),
                }));
                continue;
            }
            Some(Some(_)) => old_seen
                .get(path)
                .map(|seen| lets_run::in_read(&at, seen.bytes.as_deref(), &seen.head, mode)),
        };
        out.extend(runs.into_iter().map(|runnable| Runs {
            new: before.as_ref().map(|b| !b.contains(&runnable)),
            runnable,
        }));
    }
    out
}

impl BundleChange {
    /// A bundle whose approval is withdrawn.
    pub fn removed(key: &str) -> BundleChange {
        BundleChange {
            key: key.to_string(),
            change: Approves::Removed,
            file_count: 0,
            files: Vec::new(),
            lets_run: Vec::new(),
        }
    }
}

/// What each file of `key`'s bundle must keep when it is read: its bytes
/// when a configuration file (what it runs is read from them) or when it
/// is diffed, else what a reading learns of it (size, lines, first bytes).
fn keep_for<'a>(
    key: &'a BundleKey,
    diffed: impl Fn(&FilePath) -> bool + Sync + 'a,
) -> KeepBytes<'a> {
    KeepBytes::with(move |path: &FilePath| {
        if lets_run::config_reading(&diff::project_path(key, path)).is_some() {
            Some(lets_run::MAX_BYTES.max(DIFF_LIMIT))
        } else if diffed(path) {
            Some(DIFF_LIMIT)
        } else {
            None
        }
    })
}

/// Reads the bundle a pin or init would record as `planned` (recorded now
/// as `recorded`, if it is) and says what approving it changes: the diffs
/// are kept to be shown with `keep_text`, their line counts always. The
/// bytes shown are the bytes approved: files that no longer hash to
/// `planned` refuse the approval.
pub fn review(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    recorded: Option<&BundleEntry>,
    planned: &BundleEntry,
    history: Option<&mut History>,
    keep_text: bool,
) -> Result<BundleChange, CliError> {
    let modified: BTreeSet<&FilePath> = planned
        .files
        .iter()
        .filter(|(path, digest)| {
            recorded.is_some_and(|r| r.files.get(*path).is_some_and(|old| old != *digest))
        })
        .map(|(path, _)| path)
        .collect();
    let keep = keep_for(key, |path| keep_text || modified.contains(path));
    let shown = escaped(key.as_str()).into_owned();
    let reviewed = diff::review_key(listings, key, recorded, &keep, history, keep_text)
        .map_err(|e| CliError::Refused(format!("{shown}: cannot be read again: {e}")))?;
    let read: BTreeMap<&FilePath, Digest> = reviewed
        .current
        .iter()
        .map(|(path, blob)| (path, blob.digest))
        .collect();
    if read.len() != planned.files.len()
        || planned
            .files
            .iter()
            .any(|(path, digest)| read.get(path) != Some(digest))
    {
        return Err(CliError::Refused(format!(
            "{shown} changed while seal was reading it: nothing was written (run it again to \
             see what it holds now)"
        )));
    }
    let project = listings.root();
    let lets_run = marked_runs(
        key,
        &planned.files,
        recorded.map(|r| &r.files),
        &reviewed.approved,
        |path, at| {
            let mode = lets_run::mode_of(project, at);
            let Some(blob) = reviewed.current.get(path) else {
                return (Vec::new(), mode);
            };
            let runs = lets_run::in_read(at, blob.seen.bytes.as_deref(), &blob.seen.head, mode);
            (runs, mode)
        },
    );
    Ok(BundleChange {
        key: key.as_str().to_string(),
        change: if recorded.is_some() {
            Approves::Modified
        } else {
            Approves::New
        },
        file_count: planned.files.len(),
        files: reviewed.files,
        lets_run,
    })
}

// ---------------------------------------------------------------------------
// Against a base revision (a pull request)
// ---------------------------------------------------------------------------

/// What the project's `seal.json` approves that the base's did not (the
/// `approval` member of `seal diff --base`'s document).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub base: Base,
    /// The policy, when it changes (`from` is absent when the base has no
    /// valid `seal.json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyChange>,
    pub patterns_added: Vec<String>,
    pub patterns_removed: Vec<String>,
    /// The bundles whose approval changes, sorted by key.
    pub bundles: Vec<BundleChange>,
}

#[derive(Debug, Serialize)]
pub struct Base {
    /// The revision as given.
    pub revision: String,
    /// The commit it names.
    pub commit: String,
    pub lockfile: BaseLockfile,
    /// Why an invalid one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// What the base holds at `seal.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BaseLockfile {
    Present,
    /// None: every bundle is new.
    Missing,
    /// Not a valid lockfile: read as empty.
    Invalid,
}

#[derive(Debug, Serialize)]
pub struct PolicyChange {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<&'static str>,
    pub to: &'static str,
}

impl Base {
    /// What a reader must know of the base's `seal.json` when it is not a
    /// valid one.
    pub fn note(&self) -> Option<String> {
        match self.lockfile {
            BaseLockfile::Present => None,
            BaseLockfile::Missing => Some("seal.json is new: the base has none".into()),
            BaseLockfile::Invalid => Some(format!(
                "the base's seal.json is invalid ({}): every bundle counts as new",
                self.why.as_deref().unwrap_or_default()
            )),
        }
    }
}

impl Approval {
    /// Whether the approval changes at all.
    pub fn is_empty(&self) -> bool {
        self.policy.is_none()
            && self.patterns_added.is_empty()
            && self.patterns_removed.is_empty()
            && self.bundles.is_empty()
    }
}

/// Compares the `seal.json` of `rev` (read from git, beside where the
/// project's is) with the project's `lock`: the bundles whose approval
/// changes, each file's change with line counts (the base's bytes from
/// `rev`'s history, the approved ones from disk when they hash to the
/// record, else from HEAD's history) and what each approved bundle lets run.
pub fn against_base(
    listings: &mut Listings<'_>,
    lock: &Lockfile,
    history: &mut History,
    rev: &str,
) -> Result<Approval, CliError> {
    let commit = history.commit_of(rev).map_err(CliError::Refused)?;
    let (base_lock, state, why) = match history.file_at(&commit, LOCKFILE_NAME) {
        Err(e) => {
            return Err(CliError::Refused(format!(
                "cannot read seal.json at {}: {e}",
                escaped(rev)
            )));
        }
        Ok(None) => (None, BaseLockfile::Missing, None),
        Ok(Some(bytes)) => match Lockfile::parse(&bytes) {
            Ok(base) => (Some(base), BaseLockfile::Present, None),
            Err(e) => (None, BaseLockfile::Invalid, Some(e.to_string())),
        },
    };
    let policy = match &base_lock {
        Some(base) if base.policy == lock.policy => None,
        other => Some(PolicyChange {
            from: other.as_ref().map(|b| b.policy.as_str()),
            to: lock.policy.as_str(),
        }),
    };
    let base = base_lock.unwrap_or_else(|| Lockfile::empty(lock.policy));
    let strings = |patterns: &[seal_core::pattern::Pattern],
                   other: &[seal_core::pattern::Pattern]| {
        patterns
            .iter()
            .filter(|p| !other.contains(p))
            .map(|p| p.as_str().to_string())
            .collect::<Vec<_>>()
    };
    let keys: BTreeSet<&BundleKey> = base.bundles.keys().chain(lock.bundles.keys()).collect();
    let history = RefCell::new(history);
    let mut bundles = Vec::new();
    for key in keys {
        let (old, new) = (base.bundles.get(key), lock.bundles.get(key));
        let change = match (old, new) {
            (None, Some(_)) => Approves::New,
            (Some(old), Some(new)) if !old.pins_same_files(new) => Approves::Modified,
            (Some(_), None) => Approves::Removed,
            _ => continue,
        };
        let Some(new) = new else {
            bundles.push(BundleChange::removed(key.as_str()));
            continue;
        };
        bundles.push(approved_against(
            listings, key, old, new, change, &history, &commit,
        ));
    }
    Ok(Approval {
        base: Base {
            revision: rev.to_string(),
            commit,
            lockfile: state,
            why,
        },
        policy,
        patterns_added: strings(&lock.discovery, &base.discovery),
        patterns_removed: strings(&base.discovery, &lock.discovery),
        bundles,
    })
}

/// One bundle approved as `new` that the base approved as `old` (or not at
/// all): its files' changes and what the approved bytes let run.
fn approved_against(
    listings: &mut Listings<'_>,
    key: &BundleKey,
    old: Option<&BundleEntry>,
    new: &BundleEntry,
    change: Approves,
    history: &RefCell<&mut History>,
    base_commit: &str,
) -> BundleChange {
    let keep = keep_for(key, |_| true);
    let current = diff::read_key(listings, key, Some(new), &keep)
        .map(|(_, current)| current)
        .unwrap_or_default();
    // The approved bytes: on disk when they hash to the record.
    let on_disk = |path: &FilePath| {
        current
            .get(path)
            .filter(|blob| new.files.get(path) == Some(&blob.digest))
    };
    let empty = BTreeMap::new();
    let old_files = old.map_or(&empty, |o| &o.files);
    let mut old_seen = BTreeMap::new();
    let files = diff::files_changed(
        key,
        Lists::between(old_files, &new.files),
        old_files,
        &new.files,
        |path, digest| {
            let mut history = history.borrow_mut();
            let version = Version::from_history(key, path, digest, Some(&mut history), base_commit);
            if let Some(seen) = &version.seen {
                old_seen.insert(path.clone(), seen.clone());
            }
            version
        },
        |path| {
            let digest = *new.files.get(path)?;
            Some(match on_disk(path) {
                Some(blob) => Version::read(blob),
                None => {
                    let mut history = history.borrow_mut();
                    Version::from_history(key, path, digest, Some(&mut history), "HEAD")
                }
            })
        },
        true,
    );
    let project = listings.root();
    let lets_run = marked_runs(
        key,
        &new.files,
        old.map(|o| &o.files),
        &old_seen,
        |path, at| {
            if let Some(blob) = on_disk(path) {
                let mode = lets_run::mode_of(project, at);
                let runs = lets_run::in_read(at, blob.seen.bytes.as_deref(), &blob.seen.head, mode);
                return (runs, mode);
            }
            let digest = new.files[path];
            let found = history
                .borrow_mut()
                .find("HEAD", at, &digest, lets_run::MAX_BYTES);
            let runs = match found {
                Some(found) => lets_run::in_read(
                    at,
                    found.blob.seen.bytes.as_deref(),
                    &found.blob.seen.head,
                    0,
                ),
                None if lets_run::config_reading(at).is_some() => vec![lets_run::unknown(
                    at,
                    "the approved bytes are neither on disk nor in HEAD's history",
                )],
                None => Vec::new(),
            };
            (runs, 0)
        },
    );
    BundleChange {
        key: key.as_str().to_string(),
        change,
        file_count: new.files.len(),
        files,
        lets_run,
    }
}

// ---------------------------------------------------------------------------
// Rendering for a terminal
// ---------------------------------------------------------------------------

/// How many changed files a bundle's summary lists before it counts the
/// rest (`-v` and `--diff` list them all).
pub const FILES_SHOWN: usize = 20;

/// The lines under a bundle's row: each changed file with its line counts
/// (the first `limit` of them), and its diff when `diffs`.
pub fn file_lines(change: &BundleChange, limit: Option<usize>, diffs: bool) -> String {
    let mut out = String::new();
    let shown = limit.map_or(change.files.len(), |l| l.min(change.files.len()));
    for f in &change.files[..shown] {
        let name = match &f.from {
            Some(from) => format!("{} -> {}", escaped(from), escaped(f.shown_path())),
            None => escaped(f.shown_path()).into_owned(),
        };
        let counts = diff::counts(f);
        let counts = if counts.is_empty() {
            String::new()
        } else {
            format!("  ({})", escaped(&counts))
        };
        let _ = writeln!(out, "    {:<9} {name}{counts}", f.change.word());
        if diffs {
            out.push_str(&f.terminal_diff());
        }
    }
    let rest = change.files.len() - shown;
    if rest > 0 {
        let _ = writeln!(out, "    ... and {rest} more files: -v lists them all");
    }
    out
}

/// What the approval lets run, apart and last before the question: every
/// entry of every new or modified bundle, or one line saying none was
/// found. Empty when nothing is approved.
pub fn lets_run_section(changes: &[BundleChange]) -> String {
    let approved: Vec<&BundleChange> = changes
        .iter()
        .filter(|c| c.change != Approves::Removed)
        .collect();
    if approved.is_empty() {
        return String::new();
    }
    let all: Vec<(&Runnable, bool)> = approved
        .iter()
        .flat_map(|c| c.lets_run.iter())
        .map(|r| (&r.runnable, r.new == Some(true)))
        .collect();
    if all.is_empty() {
        return "What this approval lets run: no MCP server, hook, plugin, command or script \
                was found (the text of its files still instructs the agent)\n"
            .to_string();
    }
    lets_run::render(&all)
}

/// `seal diff --base`'s human account of the approval's changes, before
/// the bundles that are not verified.
pub fn render_against_base(a: &Approval) -> String {
    let mut out = String::new();
    let short = &a.base.commit[..a.base.commit.len().min(12)];
    let _ = write!(
        out,
        "Approval changes against {} (commit {short})",
        escaped(&a.base.revision)
    );
    if a.is_empty() {
        out.push_str(": none (seal.json approves what it approved there)\n\n");
        return out;
    }
    out.push_str(":\n");
    if let Some(note) = a.base.note() {
        let _ = writeln!(out, "  {}", escaped(&note));
    }
    if let Some(p) = &a.policy {
        let _ = writeln!(out, "  policy: {} -> {}", p.from.unwrap_or("none"), p.to);
    }
    for (marker, list) in [('+', &a.patterns_added), ('-', &a.patterns_removed)] {
        for p in list {
            let _ = writeln!(out, "  {marker} discovery pattern {}", escaped(p));
        }
    }
    for b in &a.bundles {
        let (marker, word) = b.change.row();
        match b.change {
            Approves::Removed => {
                let _ = writeln!(out, "  {marker} {word:<9} {}", escaped(&b.key));
            }
            _ => {
                let _ = writeln!(
                    out,
                    "  {marker} {word:<9} {}  ({} files)",
                    escaped(&b.key),
                    b.file_count
                );
            }
        }
        out.push_str(&file_lines(b, None, true));
    }
    let section = lets_run_section(&a.bundles);
    if !section.is_empty() {
        out.push('\n');
        out.push_str(&section);
    }
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------
// The plan as JSON (`seal pin --json`, `seal init --json`)
// ---------------------------------------------------------------------------

/// The document `seal pin --json` and `seal init --json` print on stdout
/// before they ask (docs/JSON.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanDocument<'a> {
    /// `pin` or `init`.
    pub command: &'static str,
    /// `--dry-run`: nothing is asked and nothing written.
    pub dry_run: bool,
    /// The policy of the `seal.json` that would be written.
    pub policy: &'static str,
    /// The discovery patterns that would be added.
    pub patterns: Vec<String>,
    /// The bundles whose approval would change, sorted by key.
    pub bundles: &'a [BundleChange],
    /// Bundles recorded and unchanged (pin).
    pub unchanged: usize,
    /// Recorded bundles not on disk that stay recorded (pin without
    /// `--prune`).
    pub kept_removed: usize,
    /// New or modified bundles over 100 MiB, with their size in bytes.
    pub large: Vec<Sized>,
    /// Agent artifacts no pattern is offered for, with why.
    pub not_proposing: Vec<Skipped>,
    pub history: HistoryNote,
}

#[derive(Serialize)]
pub struct Sized {
    pub key: String,
    pub bytes: u64,
}

#[derive(Serialize)]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

impl PlanDocument<'_> {
    /// Prints the document on stdout, at once (a tool reads it before it
    /// answers the question).
    pub fn print(&self) {
        use std::io::Write as _;
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
}

// ---------------------------------------------------------------------------
// Before the question
// ---------------------------------------------------------------------------

/// How `seal pin` and `seal init` show what they would approve.
#[derive(Debug, Clone, Copy)]
pub struct Show {
    /// `--diff`: every changed file's diff.
    pub diffs: bool,
    /// `--json`: the plan on stdout too.
    pub json: bool,
    /// `--dry-run`: show, then stop.
    pub dry_run: bool,
    /// Every changed file (`-v`, `--diff`), not the first [`FILES_SHOWN`].
    pub all_files: bool,
}

impl Show {
    /// The lines under each bundle's row, by key.
    pub fn details(&self, changes: &[BundleChange]) -> BTreeMap<String, String> {
        let limit = (!self.all_files).then_some(FILES_SHOWN);
        changes
            .iter()
            .map(|c| (c.key.clone(), file_lines(c, limit, self.diffs)))
            .collect()
    }

    /// What follows the summary: the list of what the approval lets run
    /// (on stderr, after a blank line unless the summary ends with one
    /// already, and before one), the `warnings`, the plan (on stdout, with
    /// `--json`); then whether to ask (not on a dry run, which says so).
    pub fn before_question(
        &self,
        changes: &[BundleChange],
        doc: &PlanDocument<'_>,
        after_blank: bool,
        warnings: &str,
    ) -> bool {
        let section = lets_run_section(changes);
        if !section.is_empty() {
            let before = if after_blank { "" } else { "\n" };
            sayln!("{before}{section}");
        }
        say!("{warnings}");
        if self.json {
            doc.print();
            super::formats::document_written();
        }
        if self.dry_run {
            sayln!("Dry run: nothing was asked and nothing written");
        }
        !self.dry_run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// A project holding `.claude/skills/s` with `SKILL.md` and `.mcp.json`.
    fn project() -> (tempfile::TempDir, std::os::fd::OwnedFd, BundleKey) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(".claude/skills/s");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("SKILL.md"), "one\ntwo\n").unwrap();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"s": {"command": "srv"}}}"#,
        )
        .unwrap();
        let fd = seal_core::fs::open_project(dir.path()).unwrap();
        (dir, fd, BundleKey::parse("./.claude/skills/s").unwrap())
    }

    fn entry(files: &[(&str, &[u8])]) -> BundleEntry {
        BundleEntry::from_files(
            files
                .iter()
                .map(|(p, b)| (FilePath::parse(p).unwrap(), Digest::of(b)))
                .collect(),
        )
    }

    #[test]
    fn what_is_shown_is_what_the_plan_records_or_nothing_is_approved() {
        let (_dir, fd, key) = project();
        let mcp: &[u8] = br#"{"mcpServers": {"s": {"command": "srv"}}}"#;
        let planned = entry(&[("SKILL.md", b"one\ntwo\n"), (".mcp.json", mcp)]);
        let mut listings = Listings::new(fd.as_fd());
        let change = review(&mut listings, &key, None, &planned, None, false).unwrap();
        assert_eq!(change.change, Approves::New);
        assert_eq!(change.files.len(), 2);
        assert_eq!(change.lets_run.len(), 1);
        assert_eq!(change.lets_run[0].new, None, "a new bundle marks nothing");
        // The plan hashed other bytes than are there now (the files changed
        // between the plan and the review): refused, nothing to ask about.
        let planned = entry(&[("SKILL.md", b"one\n"), (".mcp.json", mcp)]);
        let mut listings = Listings::new(fd.as_fd());
        match review(&mut listings, &key, None, &planned, None, false) {
            Err(CliError::Refused(why)) => assert!(
                why.contains("./.claude/skills/s changed while seal was reading it"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        // A file more or less than the plan counts too.
        let planned = entry(&[("SKILL.md", b"one\ntwo\n")]);
        let mut listings = Listings::new(fd.as_fd());
        assert!(review(&mut listings, &key, None, &planned, None, false).is_err());
    }

    #[test]
    fn a_modified_bundle_marks_what_its_unchanged_files_ran_as_approved() {
        let (_dir, fd, key) = project();
        let mcp: &[u8] = br#"{"mcpServers": {"s": {"command": "srv"}}}"#;
        let recorded = entry(&[("SKILL.md", b"one\n"), (".mcp.json", mcp)]);
        let planned = entry(&[("SKILL.md", b"one\ntwo\n"), (".mcp.json", mcp)]);
        let mut listings = Listings::new(fd.as_fd());
        let change = review(&mut listings, &key, Some(&recorded), &planned, None, false).unwrap();
        assert_eq!(change.change, Approves::Modified);
        assert_eq!(change.lets_run[0].new, Some(false));
        // Without history, the modified file's old bytes are unknown.
        assert_eq!(change.files.len(), 1);
        assert_eq!(
            change.files[0].note.as_deref(),
            Some("no git history: the approved bytes are unknown")
        );
    }
}
