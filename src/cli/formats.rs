//! The machine formats for CI: `verify --format github` (workflow-command
//! annotations) and `--format sarif` (SARIF 2.1.0 for code scanning), and a
//! fatal error written in the format that was asked for (`--json`,
//! `--format`), so that a tool reading stdout never finds it empty.
//!
//! `seal diff --format markdown` writes the summary a pull request's
//! reviewer reads (a GitHub job summary, [`markdown_summary`]): what the
//! change approves, what that lets run, and the bundles that differ from
//! `seal.json`, every name in a code span that no name can close.
//!
//! Both CI formats place one finding per bundle that is not verified on the
//! file a reviewer should open: the first changed file of a mismatched bundle,
//! the root of an unverified one, and `seal.json` at the bundle's line for a
//! removed bundle or one that only lost files. Under `verify --strict`, an
//! agent artifact no discovery pattern covers is an unverified finding on
//! its own file, with the message `--strict` gives it (`uncovered`, by
//! name); without it the output is unchanged.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write;
use std::path::Path;

use seal_core::escape::escaped;
use seal_core::json::write_go_string;
use seal_core::lockfile::Policy;
use seal_core::verify::{BundleState, ProjectReport, RootName};

/// A machine format a fatal error can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machine {
    Json,
    Github,
    Sarif,
    Markdown,
}

/// Set once a command has written its document on stdout (`seal pin
/// --json` prints its plan before it asks): a fatal error after it is not
/// written there as a second document; the exit code and stderr say it.
static DOCUMENT_WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records that this command's document is on stdout.
pub fn document_written() {
    DOCUMENT_WRITTEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

impl Machine {
    /// The machine format named on a command line that clap refused: `--json`
    /// or `--format X` before any `--` (what follows `--` belongs to the
    /// command `seal run` starts).
    pub fn requested_in(args: &[OsString]) -> Option<Machine> {
        let mut found = None;
        let mut iter = args.iter().map(|a| a.to_str().unwrap_or(""));
        while let Some(arg) = iter.next() {
            let value = match arg {
                "--" => break,
                "--json" => Some("json"),
                "--format" => iter.next(),
                other => other.strip_prefix("--format="),
            };
            found = match value {
                Some("json") => Some(Machine::Json),
                Some("github") => Some(Machine::Github),
                Some("sarif") => Some(Machine::Sarif),
                Some("markdown") => Some(Machine::Markdown),
                _ => found,
            };
        }
        found
    }
}

/// Writes a fatal error on stdout in `machine`'s format (nothing without one).
pub fn print_error(machine: Option<Machine>, message: &str, exit: u8) {
    if DOCUMENT_WRITTEN.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let text = match machine {
        None => return,
        Some(Machine::Markdown) => {
            format!("### seal failed (exit {exit})\n\n{}\n", md_code(message))
        }
        Some(Machine::Json) => error_json(message, exit),
        Some(Machine::Github) => format!(
            "::error title={}::{}\n",
            escape_property("seal failed"),
            escape_data(message)
        ),
        Some(Machine::Sarif) => error_sarif(message, exit),
    };
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// `{"error": "...", "exit": 2}` and a newline.
pub fn error_json(message: &str, exit: u8) -> String {
    let mut out = String::from("{\"error\": ");
    write_go_string(&mut out, message);
    let _ = writeln!(out, ", \"exit\": {exit}}}");
    out
}

/// Where the project lies inside the checkout, as a prefix for file paths
/// (`sub/dir/`), when `$GITHUB_WORKSPACE` is set and holds the project:
/// annotations and SARIF locations are relative to the repository root.
pub fn repo_prefix(project_dir: &Path) -> String {
    let Some(workspace) = std::env::var_os("GITHUB_WORKSPACE") else {
        return String::new();
    };
    let (Ok(ws), Ok(project)) = (
        std::fs::canonicalize(workspace),
        std::fs::canonicalize(project_dir),
    ) else {
        return String::new();
    };
    match project.strip_prefix(&ws) {
        Ok(rel) if rel.as_os_str().is_empty() => String::new(),
        Ok(rel) => format!("{}/", rel.to_string_lossy()),
        Err(_) => String::new(),
    }
}

/// GitHub's escaping of a workflow command's message (actions/toolkit
/// `escapeData`): `%`, CR and LF.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping of a workflow command's property value (`escapeProperty`):
/// as for data, plus `:` and `,`, which delimit properties.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Error,
    Warning,
}

/// One bundle that is not verified, placed on a file.
#[derive(Debug, Clone)]
struct Finding {
    state: BundleState,
    level: Level,
    /// Repository-relative path of the file the finding is placed on.
    file: String,
    /// 1-based line in that file, when known.
    line: Option<usize>,
    /// The bundle's key (or root name), as in `seal.json`.
    bundle: String,
    message: String,
    /// Found by `--strict`: an agent artifact no pattern covers.
    uncovered: bool,
}

/// The project-relative path of `file` inside the bundle `name` (`.` is the
/// single-file root itself).
fn file_in(name: &RootName, file: &str) -> String {
    let root = name.as_display();
    let root = root.strip_prefix("./").unwrap_or(&root).to_string();
    if file == "." {
        root
    } else {
        format!("{root}/{file}")
    }
}

/// The line of `seal.json` where `key` is recorded (1-based), if found.
fn key_line(lockfile: &str, key: &str) -> Option<usize> {
    let mut encoded = String::new();
    write_go_string(&mut encoded, key);
    let at = lockfile
        .find(&encoded)
        .or_else(|| lockfile.find(&format!("\"{key}\"")))?;
    Some(lockfile[..at].matches('\n').count() + 1)
}

fn joined(items: &[String]) -> String {
    items
        .iter()
        .map(|i| escaped(i).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One finding per bundle that is not verified, sorted by bundle name; the
/// `uncovered` ones (by name) carry their own message.
fn findings(
    report: &ProjectReport,
    prefix: &str,
    lockfile: &str,
    uncovered: &BTreeMap<String, String>,
) -> Vec<Finding> {
    let failing = match report.policy {
        Policy::Block => Level::Error,
        Policy::Warn => Level::Warning,
    };
    let mut out = Vec::new();
    for b in report.not_verified() {
        let key = b.name.as_display();
        let shown = escaped(&key).into_owned();
        let at_lockfile = || ("seal.json".to_string(), key_line(lockfile, &key));
        let (level, (file, line), mut message) = match b.state {
            BundleState::Verified => continue,
            BundleState::Unverified if uncovered.contains_key(&key) => (
                failing,
                (file_in(&b.name, "."), None),
                uncovered[&key].clone(),
            ),
            BundleState::Unverified => (
                failing,
                (file_in(&b.name, "."), None),
                format!(
                    "Unverified bundle {shown}: seal.json does not record it. Review it, then \
                     run 'seal pin {shown}' to seal it."
                ),
            ),
            BundleState::Removed => (
                Level::Warning,
                at_lockfile(),
                format!(
                    "Removed bundle {shown}: recorded in seal.json but not on disk. Run \
                     'seal pin --prune' to drop it."
                ),
            ),
            BundleState::Mismatch => {
                let place = match b.modified.first().or(b.added.first()) {
                    Some(f) => (file_in(&b.name, f), None),
                    None => at_lockfile(),
                };
                let mut m = format!(
                    "Mismatch in bundle {shown}: its files differ from what seal.json records."
                );
                for (label, list) in [
                    ("modified", &b.modified),
                    ("added", &b.added),
                    ("missing", &b.missing),
                ] {
                    if !list.is_empty() {
                        let _ = write!(m, "\n{label}: {}", joined(list));
                    }
                }
                (failing, place, m)
            }
        };
        for p in &b.problems {
            let _ = write!(message, "\nproblem: {p}");
        }
        // A name a terminal or log viewer would interpret is shown escaped
        // (the annotation then cannot attach to the file, but stays visible).
        let path = format!("{prefix}{file}");
        out.push(Finding {
            state: b.state,
            level,
            file: escaped(&path).into_owned(),
            line,
            uncovered: uncovered.contains_key(&key),
            bundle: key,
            message,
        });
    }
    out
}

/// `seal verify --format github`: one workflow command per bundle that is not
/// verified (`::error` when it makes the result fail, `::warning` otherwise),
/// then a `::notice` with the result line.
pub fn github_annotations(
    report: &ProjectReport,
    prefix: &str,
    lockfile: &str,
    uncovered: &BTreeMap<String, String>,
) -> String {
    let mut out = String::new();
    for f in findings(report, prefix, lockfile, uncovered) {
        let command = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        let _ = write!(out, "::{command} file={}", escape_property(&f.file));
        if let Some(line) = f.line {
            let _ = write!(out, ",line={line}");
        }
        let what = if f.uncovered {
            "agent artifact"
        } else {
            "bundle"
        };
        let title = format!("seal: {} {what} {}", f.state.as_str(), escaped(&f.bundle));
        let _ = writeln!(
            out,
            ",title={}::{}",
            escape_property(&title),
            escape_data(&f.message)
        );
    }
    let _ = writeln!(
        out,
        "::notice title={}::{}",
        escape_property("seal verify"),
        escape_data(&format!(
            "Result: {} ({} mode): {} verified, {} unverified, {} removed, {} mismatch",
            report.outcome,
            report.policy.as_str(),
            report.count(BundleState::Verified),
            report.count(BundleState::Unverified),
            report.count(BundleState::Removed),
            report.count(BundleState::Mismatch),
        ))
    );
    out
}

/// The SARIF rules, one per state that is reported.
const RULES: [(BundleState, &str, &str, &str); 3] = [
    (
        BundleState::Unverified,
        "seal/unverified-bundle",
        "An agent extension bundle that seal.json does not record",
        "An agent loads this bundle, but no seal.json entry pins its files, so nobody has \
         approved its contents. Review it, then run 'seal pin PATH'. Under policy block, \
         'seal mount' and 'seal run' hide it.",
    ),
    (
        BundleState::Mismatch,
        "seal/mismatched-bundle",
        "An agent extension bundle whose files differ from seal.json",
        "Files of this bundle were modified, added or removed since it was pinned, or it \
         holds something that cannot be sealed (a symlink, a special file). Review the \
         change, then run 'seal pin PATH'. Under policy block, 'seal mount' and 'seal run' \
         hide it.",
    ),
    (
        BundleState::Removed,
        "seal/removed-bundle",
        "A bundle recorded in seal.json that is not on disk",
        "The entry no longer matches anything; 'seal pin --prune' drops it.",
    ),
];

/// A relative path as a URI reference (RFC 3986): every byte outside the
/// unreserved set and `/` percent-encoded.
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The SARIF document's tool description.
fn sarif_driver() -> serde_json::Value {
    let rules: Vec<serde_json::Value> = RULES
        .iter()
        .map(|(state, id, short, full)| {
            serde_json::json!({
                "id": id,
                "name": format!("{}Bundle", state.as_str()),
                "shortDescription": { "text": short },
                "fullDescription": { "text": full },
                "help": { "text": full },
                "defaultConfiguration": {
                    "level": if *state == BundleState::Removed { "warning" } else { "error" }
                },
            })
        })
        .collect();
    serde_json::json!({
        "name": "seal",
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "informationUri": "https://github.com/SamyGhannad/seal-spec",
        "rules": rules,
    })
}

fn sarif_document(run: serde_json::Value) -> String {
    let doc = serde_json::json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
}

/// `seal verify --format sarif`: a SARIF 2.1.0 log with one result per
/// bundle that is not verified.
/// `extra`: run properties besides the status and the policy (the machine
/// policy's).
pub fn sarif_log(
    report: &ProjectReport,
    prefix: &str,
    lockfile: &str,
    exit: u8,
    extra: &[(&str, String)],
    uncovered: &BTreeMap<String, String>,
) -> String {
    let results: Vec<serde_json::Value> = findings(report, prefix, lockfile, uncovered)
        .into_iter()
        .map(|f| {
            let index = RULES.iter().position(|r| r.0 == f.state).unwrap_or(0);
            let mut physical = serde_json::json!({
                "artifactLocation": { "uri": uri_path(&f.file), "uriBaseId": "%SRCROOT%" },
            });
            if let Some(line) = f.line {
                physical["region"] = serde_json::json!({ "startLine": line });
            }
            serde_json::json!({
                "ruleId": RULES[index].1,
                "ruleIndex": index,
                "level": match f.level { Level::Error => "error", Level::Warning => "warning" },
                "message": { "text": f.message },
                "locations": [{ "physicalLocation": physical }],
                "partialFingerprints": { "sealBundle/v1": f.bundle },
            })
        })
        .collect();
    let mut properties = serde_json::json!({
        "status": report.outcome.as_str(),
        "policy": report.policy.as_str(),
    });
    for (key, value) in extra {
        properties[*key] = serde_json::Value::from(value.as_str());
    }
    sarif_document(serde_json::json!({
        "tool": { "driver": sarif_driver() },
        "invocations": [{ "executionSuccessful": true, "exitCode": exit }],
        "results": results,
        "properties": properties,
    }))
}

/// A SARIF log for a run that failed before producing results.
fn error_sarif(message: &str, exit: u8) -> String {
    sarif_document(serde_json::json!({
        "tool": { "driver": sarif_driver() },
        "invocations": [{
            "executionSuccessful": false,
            "exitCode": exit,
            "toolExecutionNotifications": [
                { "level": "error", "message": { "text": message } }
            ],
        }],
        "results": [],
    }))
}

// ---------------------------------------------------------------------------
// Markdown (a pull request's job summary)
// ---------------------------------------------------------------------------

/// How many changed files of a bundle the Markdown summary lists.
const MARKDOWN_FILES: usize = 50;

/// Untrusted text as a Markdown code span: control and bidi characters
/// made visible, and fenced by more backticks than it holds in a row, so
/// that nothing in it is read as Markdown or HTML and nothing closes it.
pub fn md_code(text: &str) -> String {
    let text = escaped(text);
    if text.is_empty() {
        return "(empty)".to_string();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick, or with a space at both
    // ends, is padded: CommonMark strips one space from each end.
    let pad = text.starts_with('`')
        || text.ends_with('`')
        || (text.starts_with(' ') && text.ends_with(' ') && !text.trim().is_empty());
    if pad {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// Text of ours that may carry a name, inline: every character that
/// starts inline Markdown or HTML (emphasis, code, links, images, tags,
/// entities, strikethrough, table cells) backslash-escaped, so CommonMark
/// reads it literally.
fn md_text(text: &str) -> String {
    let mut out = String::new();
    for c in escaped(text).chars() {
        if "\\`*_[]<>&!~|".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One list item per changed file (the first [`MARKDOWN_FILES`]).
fn md_files(out: &mut String, files: &[super::diff::FileDiff]) {
    for f in files.iter().take(MARKDOWN_FILES) {
        let name = match &f.from {
            Some(from) => format!("{} → {}", md_code(from), md_code(f.shown_path())),
            None => md_code(f.shown_path()),
        };
        let counts = super::diff::counts(f);
        let counts = if counts.is_empty() {
            String::new()
        } else {
            format!(" ({})", md_text(&counts))
        };
        let _ = writeln!(out, "- {} {name}{counts}", f.change.word());
    }
    if files.len() > MARKDOWN_FILES {
        let _ = writeln!(
            out,
            "- … and {} more files (`seal diff` lists them all)",
            files.len() - MARKDOWN_FILES
        );
    }
}

/// How many things one bundle lets run the Markdown summary lists (a job
/// summary holds 1 MiB at most); those not approved before come first.
const MARKDOWN_RUNS: usize = 100;

/// One list item per thing an approval lets run (the first
/// [`MARKDOWN_RUNS`]), those not approved before first and marked.
fn md_lets_run(out: &mut String, list: &[super::approval::Runs]) {
    use super::lets_run::Target;
    let mut sorted: Vec<&super::approval::Runs> = list.iter().collect();
    sorted.sort_by(|a, b| {
        let key = |r: &super::approval::Runs| {
            let n = &r.runnable;
            (r.new != Some(true), n.kind, n.file.clone(), n.name.clone())
        };
        key(a).cmp(&key(b))
    });
    for runs in sorted.iter().take(MARKDOWN_RUNS) {
        let r = &runs.runnable;
        let new = if runs.new == Some(true) {
            "**new:** "
        } else {
            ""
        };
        let name = if r.name.is_empty() {
            String::new()
        } else {
            format!(" {}", md_code(&r.name))
        };
        let target = match &r.target {
            Target::Command(c) => format!("runs {}", md_code(c)),
            Target::Url(u) => format!("connects to {}", md_code(u)),
            Target::Code(c) => format!("loads {}", md_code(c)),
            Target::Unknown(why) => format!("**unknown**: {}", md_text(why)),
        };
        let _ = writeln!(
            out,
            "- {new}**{}**{name} in {}: {target}",
            r.kind.word(),
            md_code(&r.file)
        );
    }
    if sorted.len() > MARKDOWN_RUNS {
        let _ = writeln!(
            out,
            "- … and {} more (`seal diff --base` lists them all)",
            sorted.len() - MARKDOWN_RUNS
        );
    }
}

/// `seal diff --format markdown`: with `--base`, the bundles whose approval
/// changes, their files with line counts and what each lets run; then every
/// bundle that is not verified with its changed files; then the result.
pub fn markdown_summary(doc: &super::diff::Document) -> String {
    use super::approval::Approves;
    let mut out = String::new();
    if let Some(a) = &doc.approval {
        let short = &a.base.commit[..a.base.commit.len().min(12)];
        let _ = writeln!(out, "### seal: what this change approves\n");
        let _ = writeln!(
            out,
            "Against `seal.json` at {} (commit `{short}`).\n",
            md_code(&a.base.revision)
        );
        if let Some(note) = a.base.note() {
            let _ = writeln!(out, "{}.\n", md_text(&note));
        }
        if a.is_empty() {
            out.push_str("No bundle's approval changes.\n\n");
        }
        if let Some(p) = &a.policy {
            let _ = writeln!(
                out,
                "**Policy:** `{}` → `{}`\n",
                p.from.unwrap_or("none"),
                p.to
            );
        }
        for (label, list) in [
            ("Discovery patterns added", &a.patterns_added),
            ("Discovery patterns removed", &a.patterns_removed),
        ] {
            if !list.is_empty() {
                let shown: Vec<String> = list.iter().map(|p| md_code(p)).collect();
                let _ = writeln!(out, "**{label}:** {}\n", shown.join(", "));
            }
        }
        for b in &a.bundles {
            let heading = match b.change {
                Approves::New => "New approval",
                Approves::Modified => "Approval changed",
                Approves::Removed => "Approval withdrawn",
            };
            let files = match b.change {
                Approves::Removed => String::new(),
                _ => format!(" ({} files)", b.file_count),
            };
            let _ = writeln!(out, "#### {heading}: {}{files}\n", md_code(&b.key));
            if b.change == Approves::Removed {
                continue;
            }
            md_files(&mut out, &b.files);
            out.push('\n');
            if b.lets_run.is_empty() {
                out.push_str(
                    "Lets run: no MCP server, hook, plugin, command or script was found.\n\n",
                );
            } else {
                let new = b.lets_run.iter().filter(|r| r.new == Some(true)).count();
                let new = match new {
                    0 => String::new(),
                    n => format!(", {n} not approved before"),
                };
                let _ = writeln!(out, "**Lets run ({}{new}):**\n", b.lets_run.len());
                md_lets_run(&mut out, &b.lets_run);
                out.push('\n');
            }
        }
    }
    if !doc.bundles.is_empty() {
        out.push_str("### seal: bundles that differ from seal.json\n\n");
        for b in &doc.bundles {
            let _ = writeln!(
                out,
                "#### {}: {} ({})\n",
                b.state,
                md_code(&b.key),
                b.what()
            );
            if let Some(note) = &b.note {
                let _ = writeln!(out, "{}\n", md_text(note));
            }
            for p in &b.problems {
                let _ = writeln!(out, "- problem: {}", md_text(p));
            }
            md_files(&mut out, &b.files);
            out.push('\n');
        }
    }
    let _ = writeln!(out, "**Result:** {} ({} mode)", doc.status, doc.policy);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use seal_core::paths::BundleKey;
    use seal_core::verify::{BundleReport, Outcome};

    fn bundle(key: &str, state: BundleState, modified: &[&str], missing: &[&str]) -> BundleReport {
        BundleReport {
            name: RootName::Key(BundleKey::parse(key).unwrap()),
            state,
            modified: modified.iter().map(|s| s.to_string()).collect(),
            added: vec![],
            missing: missing.iter().map(|s| s.to_string()).collect(),
            problems: vec![],
        }
    }

    fn report(bundles: Vec<BundleReport>, policy: Policy) -> ProjectReport {
        let outcome = Outcome::of(bundles.iter().map(|b| &b.state), policy);
        ProjectReport {
            policy,
            bundles,
            outcome,
        }
    }

    const LOCK: &str =
        "{\n  \"version\": 1,\n  \"bundles\": {\n    \"./gone\": {},\n    \"./m\": {}\n  }\n}\n";

    #[test]
    fn github_escaping_follows_the_toolkit() {
        assert_eq!(escape_data("a%b\r\nc:d,e"), "a%25b%0D%0Ac:d,e");
        assert_eq!(escape_property("a%b\r\nc:d,e"), "a%25b%0D%0Ac%3Ad%2Ce");
    }

    #[test]
    fn one_annotation_per_bundle_that_is_not_verified() {
        let r = report(
            vec![
                bundle("./ok", BundleState::Verified, &[], &[]),
                bundle("./m", BundleState::Mismatch, &["x,y:z.md"], &["gone.md"]),
                bundle("./new", BundleState::Unverified, &[], &[]),
                bundle("./gone", BundleState::Removed, &[], &[]),
                bundle("./only-missing", BundleState::Mismatch, &[], &["a"]),
            ],
            Policy::Block,
        );
        let text = github_annotations(&r, "sub/", LOCK, &BTreeMap::new());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(
            lines[0],
            "::warning file=sub/seal.json,line=4,title=seal%3A Removed bundle ./gone::Removed bundle ./gone: recorded in seal.json but not on disk. Run 'seal pin --prune' to drop it."
        );
        assert_eq!(
            lines[1],
            "::error file=sub/m/x%2Cy%3Az.md,title=seal%3A Mismatch bundle ./m::Mismatch in bundle ./m: its files differ from what seal.json records.%0Amodified: x,y:z.md%0Amissing: gone.md"
        );
        assert!(
            lines[2].starts_with("::error file=sub/new,title="),
            "{}",
            lines[2]
        );
        // Not in the lockfile text: no line.
        assert!(
            lines[3].starts_with("::error file=sub/seal.json,title="),
            "{}",
            lines[3]
        );
        assert_eq!(
            lines[4],
            "::notice title=seal verify::Result: Blocked (block mode): 1 verified, 1 unverified, 1 removed, 2 mismatch"
        );
    }

    #[test]
    fn warn_policy_gives_warnings_and_a_single_file_root_is_its_own_file() {
        let r = report(
            vec![bundle("./CLAUDE.md", BundleState::Mismatch, &["."], &[])],
            Policy::Warn,
        );
        let text = github_annotations(&r, "", "", &BTreeMap::new());
        assert!(
            text.starts_with("::warning file=CLAUDE.md,title="),
            "{text}"
        );
    }

    #[test]
    fn hostile_names_cannot_inject_commands() {
        let r = report(
            vec![bundle(
                "./a",
                BundleState::Mismatch,
                &["x\n::error::forged\r%0A"],
                &[],
            )],
            Policy::Block,
        );
        let text = github_annotations(&r, "", "", &BTreeMap::new());
        // Exactly the annotation and the notice: no forged command line.
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(!text.contains("\n::error::forged"), "{text}");
        assert!(text.contains("%250A"), "{text}");
    }

    #[test]
    fn sarif_has_rules_results_and_locations() {
        let r = report(
            vec![
                bundle("./m", BundleState::Mismatch, &["a b.md"], &[]),
                bundle("./gone", BundleState::Removed, &[], &[]),
            ],
            Policy::Block,
        );
        let doc: serde_json::Value =
            serde_json::from_str(&sarif_log(&r, "", LOCK, 1, &[], &BTreeMap::new())).unwrap();
        assert_eq!(doc["version"], "2.1.0");
        let run = &doc["runs"][0];
        assert_eq!(run["tool"]["driver"]["rules"].as_array().unwrap().len(), 3);
        assert_eq!(run["invocations"][0]["exitCode"], 1);
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["ruleId"], "seal/removed-bundle");
        assert_eq!(
            results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
            4
        );
        assert_eq!(results[1]["ruleId"], "seal/mismatched-bundle");
        assert_eq!(results[1]["level"], "error");
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "m/a%20b.md"
        );
        let rule =
            &run["tool"]["driver"]["rules"][results[1]["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], "seal/mismatched-bundle");
    }

    #[test]
    fn strict_findings_carry_their_own_message_on_the_artifact_file() {
        let r = report(
            vec![
                bundle("./pkg/.mcp.json", BundleState::Unverified, &[], &[]),
                bundle("./new", BundleState::Unverified, &[], &[]),
            ],
            Policy::Block,
        );
        let uncovered = BTreeMap::from([(
            "./pkg/.mcp.json".to_string(),
            "Agent artifact ./pkg/.mcp.json: no discovery pattern covers it".to_string(),
        )]);
        let text = github_annotations(&r, "", "", &uncovered);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "::error file=pkg/.mcp.json,title=seal%3A Unverified agent artifact ./pkg/.mcp.json::Agent artifact ./pkg/.mcp.json: no discovery pattern covers it"
        );
        assert!(
            lines[0].contains("title=seal%3A Unverified bundle ./new::"),
            "{}",
            lines[0]
        );
        let doc: serde_json::Value =
            serde_json::from_str(&sarif_log(&r, "", "", 1, &[], &uncovered)).unwrap();
        let results = doc["runs"][0]["results"].as_array().unwrap();
        assert_eq!(
            results[1]["message"]["text"],
            "Agent artifact ./pkg/.mcp.json: no discovery pattern covers it"
        );
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "pkg/.mcp.json"
        );
        // Without --strict (nothing uncovered) the output is the plain one.
        assert_eq!(
            github_annotations(&r, "", "", &BTreeMap::new())
                .lines()
                .count(),
            3
        );
    }

    #[test]
    fn machine_formats_are_found_before_the_double_dash_only() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            Machine::requested_in(&args(&["verify", "--json", "--yes"])),
            Some(Machine::Json)
        );
        assert_eq!(
            Machine::requested_in(&args(&["verify", "--format", "sarif"])),
            Some(Machine::Sarif)
        );
        assert_eq!(
            Machine::requested_in(&args(&["verify", "--format=github"])),
            Some(Machine::Github)
        );
        assert_eq!(
            Machine::requested_in(&args(&["run", "--", "x", "--json"])),
            None
        );
        assert_eq!(
            Machine::requested_in(&args(&["verify", "--format", "xml"])),
            None
        );
    }

    #[test]
    fn a_code_span_holds_any_text() {
        assert_eq!(md_code("plain"), "`plain`");
        assert_eq!(md_code("a`b``c"), "```a`b``c```");
        assert_eq!(md_code("`x`"), "`` `x` ``");
        assert_eq!(md_code(" x "), "`  x  `");
        assert_eq!(md_code("   "), "`   `");
        assert_eq!(md_code(""), "(empty)");
        assert_eq!(md_code("a\n# b\u{202e}"), "`a\\n# b\\u{202e}`");
        assert_eq!(
            md_text("a *b* <c> [d](e) `f`"),
            "a \\*b\\* \\<c\\> \\[d\\](e) \\`f\\`"
        );
    }

    #[test]
    fn error_documents() {
        assert_eq!(
            error_json("seal.json <missing>", 2),
            "{\"error\": \"seal.json \\u003cmissing\\u003e\", \"exit\": 2}\n"
        );
        let doc: serde_json::Value = serde_json::from_str(&error_sarif("bad", 2)).unwrap();
        let inv = &doc["runs"][0]["invocations"][0];
        assert_eq!(inv["executionSuccessful"], false);
        assert_eq!(
            inv["toolExecutionNotifications"][0]["message"]["text"],
            "bad"
        );
    }
}
