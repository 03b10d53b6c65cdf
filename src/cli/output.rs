//! Rendering results as text: the human summaries on stderr and the
//! `verify --json` document on stdout, in the reference CLI's formats.
//! Every name is escaped for the terminal; JSON strings use Go escaping.

use std::collections::BTreeMap;
use std::fmt::Write;

use seal_core::escape::escaped;
use seal_core::json::{newline_indent, write_go_string, write_string_array};
pub use seal_core::plan::{LARGE_BUNDLE_BYTES, LargeBundle, PinKind, PinRow};
use seal_core::verify::{BundleReport, BundleState, ProjectReport};

/// `seal verify` human output (reference: tally, one line per bundle that is
/// not verified, `-v` file lists for mismatches, then the result line). The
/// lines are sorted by key.
pub fn verify_human(report: &ProjectReport, verbose: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} verified, {} unverified, {} removed, {} mismatch",
        report.count(BundleState::Verified),
        report.count(BundleState::Unverified),
        report.count(BundleState::Removed),
        report.count(BundleState::Mismatch),
    );
    for b in report.not_verified() {
        let _ = writeln!(
            out,
            "  {:<10} {}",
            b.state.as_str(),
            escaped(&b.name.as_display())
        );
        if verbose {
            file_lines(&mut out, b);
        }
    }
    let _ = writeln!(
        out,
        "Result: {} ({} mode)",
        report.outcome,
        report.policy.as_str()
    );
    out
}

/// The `modified:` / `added:` / `missing:` lines of one bundle, then any
/// problem that made it unverifiable.
pub fn file_lines(out: &mut String, b: &BundleReport) {
    for p in &b.modified {
        let _ = writeln!(out, "    modified: {}", escaped(p));
    }
    for p in &b.added {
        let _ = writeln!(out, "    added:    {}", escaped(p));
    }
    for p in &b.missing {
        let _ = writeln!(out, "    missing:  {}", escaped(p));
    }
    for p in &b.problems {
        let _ = writeln!(out, "    problem:  {p}");
    }
}

/// `seal verify --json`: `status`, then the four sorted arrays, two-space
/// indent, trailing newline (the reference's encoder output).
/// `extra` string members follow SPEC's (SPEC allows additional diagnostic
/// metadata; the machine policy adds its own).
pub fn verify_json(report: &ProjectReport, extra: &[(&str, String)]) -> String {
    let mut out = String::from("{");
    newline_indent(&mut out, 1);
    out.push_str("\"status\": ");
    write_go_string(&mut out, report.outcome.as_str());
    for (field, state) in [
        ("verified", BundleState::Verified),
        ("unverified", BundleState::Unverified),
        ("removed", BundleState::Removed),
        ("mismatch", BundleState::Mismatch),
    ] {
        out.push(',');
        newline_indent(&mut out, 1);
        let _ = write!(out, "\"{field}\": ");
        let names = report.names_in(state);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        write_string_array(&mut out, &refs, 1);
    }
    for (key, value) in extra {
        out.push(',');
        newline_indent(&mut out, 1);
        write_go_string(&mut out, key);
        out.push_str(": ");
        write_go_string(&mut out, value);
    }
    out.push_str("\n}\n");
    out
}

/// The pin proposal (reference format): sorted `+ new`, `~ modified`,
/// `- removed` lines, each followed by its `details` (the lines of
/// [`super::approval::file_lines`], by key), then the unchanged tally.
/// Removed keys are listed only when `prune` drops them; otherwise one line
/// counts them and says how to drop them (the reference lists them either
/// way, which reads as if the pin removed them).
pub fn pin_summary(
    rows: &[PinRow],
    added_patterns: &[String],
    details: &BTreeMap<String, String>,
    prune: bool,
) -> String {
    let mut out = String::new();
    if !added_patterns.is_empty() {
        out.push_str("Discovery patterns to add:\n");
        for p in added_patterns {
            let _ = writeln!(out, "  + {}", escaped(p));
        }
        out.push('\n');
    }
    let mut sorted: Vec<&PinRow> = rows.iter().collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    let (mut unchanged, mut kept) = (0, 0);
    for row in sorted {
        let (marker, label) = match row.kind {
            PinKind::New => ('+', "new"),
            PinKind::Modified => ('~', "modified"),
            PinKind::Removed if prune => ('-', "removed"),
            PinKind::Removed => {
                kept += 1;
                continue;
            }
            PinKind::Unchanged => {
                unchanged += 1;
                continue;
            }
        };
        if row.kind == PinKind::Removed {
            let _ = writeln!(out, "  {marker} {label:<9} {}", escaped(&row.key));
        } else {
            let _ = writeln!(
                out,
                "  {marker} {label:<9} {}  ({} files)",
                escaped(&row.key),
                row.file_count
            );
        }
        if let Some(lines) = details.get(&row.key) {
            out.push_str(lines);
        }
    }
    let _ = writeln!(out, "\n{unchanged} unchanged");
    if kept > 0 {
        let _ = writeln!(
            out,
            "{kept} removed (not on disk, kept in seal.json): run with --prune to drop them"
        );
    }
    out
}

/// A size for people: bytes up to 1 KiB, then KiB, MiB or GiB with one
/// decimal (so that a count polled every 100 ms visibly moves at 1 MB/s).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The warning each bundle above the size threshold gets before a pin or
/// an init asks for confirmation.
pub fn large_warnings(command: &str, large: &[LargeBundle]) -> String {
    let mut out = String::new();
    for b in large {
        let _ = writeln!(
            out,
            "seal: {command}: warning: {} is {} (over {} MiB): every verification of it, and \
             every open in the sealed view, reads all of it",
            escaped(&b.key),
            human_bytes(b.bytes),
            LARGE_BUNDLE_BYTES >> 20,
        );
    }
    out
}

/// `seal: COMMAND: warning: not proposing NAME: WHY` lines (`NAME` raw,
/// escaped here; `WHY` already made safe by whoever wrote it).
pub fn not_proposing(command: &str, skipped: &[(String, String)]) -> String {
    let mut out = String::new();
    for (name, why) in skipped {
        let _ = writeln!(
            out,
            "seal: {command}: warning: not proposing {}: {why}",
            escaped(name)
        );
    }
    out
}

/// The `seal init` proposal (reference format): the patterns, then each
/// bundle (key, file count) followed by its `details` (the lines of
/// [`super::approval::file_lines`], by key).
pub fn init_summary(
    patterns: &[String],
    bundles: &[(String, usize)],
    details: &BTreeMap<String, String>,
) -> String {
    let mut out = String::from("Discovery patterns to add:\n");
    if patterns.is_empty() {
        out.push_str("  (none)\n");
    }
    for p in patterns {
        let _ = writeln!(out, "  + {}", escaped(p));
    }
    let _ = writeln!(out, "\nBundles to add ({}):", bundles.len());
    for (key, files) in bundles {
        let _ = writeln!(out, "  + {}  ({files} files)", escaped(key));
        if let Some(lines) = details.get(key) {
            out.push_str(lines);
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use seal_core::lockfile::Policy;
    use seal_core::paths::BundleKey;
    use seal_core::verify::{Outcome, RootName};

    fn report(states: &[(&str, BundleState)], policy: Policy) -> ProjectReport {
        let bundles: Vec<BundleReport> = states
            .iter()
            .map(|(k, s)| BundleReport {
                name: RootName::Key(BundleKey::parse(k).unwrap()),
                state: *s,
                modified: vec!["a".into()],
                added: vec![],
                missing: vec!["gone\u{1b}".into()],
                problems: vec![],
            })
            .collect();
        let outcome = Outcome::of(bundles.iter().map(|b| &b.state), policy);
        ProjectReport {
            policy,
            bundles,
            outcome,
        }
    }

    #[test]
    fn human_verify_output() {
        let r = report(
            &[
                ("./z", BundleState::Unverified),
                ("./a", BundleState::Verified),
                ("./m\u{202e}x", BundleState::Mismatch),
                ("./r", BundleState::Removed),
            ],
            Policy::Block,
        );
        assert_eq!(
            verify_human(&r, false),
            "1 verified, 1 unverified, 1 removed, 1 mismatch\n  Mismatch   ./m\\u{202e}x\n  Removed    ./r\n  Unverified ./z\nResult: Blocked (block mode)\n"
        );
        let v = verify_human(&r, true);
        assert!(
            v.contains("    modified: a\n    missing:  gone\\u{001b}\n"),
            "{v}"
        );
    }

    #[test]
    fn human_lines_are_sorted_by_name_whatever_the_kind_of_name() {
        let mut r = report(
            &[
                ("./s/d", BundleState::Unverified),
                ("./s/b", BundleState::Unverified),
            ],
            Policy::Block,
        );
        r.bundles.push(BundleReport {
            name: RootName::Unmappable("./s/cr\rname".into()),
            state: BundleState::Unverified,
            modified: vec![],
            added: vec![],
            missing: vec![],
            problems: vec![],
        });
        assert_eq!(
            verify_human(&r, false),
            "0 verified, 3 unverified, 0 removed, 0 mismatch\n  Unverified ./s/b\n  Unverified ./s/cr\\rname\n  Unverified ./s/d\nResult: Blocked (block mode)\n"
        );
    }

    #[test]
    fn json_verify_output() {
        let r = report(
            &[
                ("./b", BundleState::Verified),
                ("./a", BundleState::Verified),
                ("./<x>", BundleState::Removed),
            ],
            Policy::Warn,
        );
        assert_eq!(
            verify_json(&r, &[]),
            "{\n  \"status\": \"Drift\",\n  \"verified\": [\n    \"./a\",\n    \"./b\"\n  ],\n  \"unverified\": [],\n  \"removed\": [\n    \"./\\u003cx\\u003e\"\n  ],\n  \"mismatch\": []\n}\n"
        );
    }

    #[test]
    fn pin_summary_format() {
        let rows = vec![
            PinRow {
                key: "./b".into(),
                kind: PinKind::Modified,
                file_count: 3,
                bytes: 0,
            },
            PinRow {
                key: "./a".into(),
                kind: PinKind::New,
                file_count: 1,
                bytes: 0,
            },
            PinRow {
                key: "./c".into(),
                kind: PinKind::Removed,
                file_count: 0,
                bytes: 0,
            },
            PinRow {
                key: "./d".into(),
                kind: PinKind::Unchanged,
                file_count: 2,
                bytes: 0,
            },
        ];
        assert_eq!(
            pin_summary(&rows, &[], &BTreeMap::new(), true),
            "  + new       ./a  (1 files)\n  ~ modified  ./b  (3 files)\n  - removed   ./c\n\n1 unchanged\n"
        );
        assert_eq!(
            pin_summary(&rows, &[], &BTreeMap::new(), false),
            "  + new       ./a  (1 files)\n  ~ modified  ./b  (3 files)\n\n1 unchanged\n1 removed (not on \
             disk, kept in seal.json): run with --prune to drop them\n"
        );
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(100 * 1024 * 1024), "100.0 MiB");
        // A tenth of a MiB is visible: a large file's progress moves.
        assert_ne!(human_bytes(5 << 20), human_bytes((5 << 20) + (1 << 17)));
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(5000 << 30), "5000.0 GiB");
    }

    #[test]
    fn large_bundle_warning_names_the_bundle_and_its_size() {
        let w = large_warnings(
            "pin",
            &[LargeBundle {
                key: "./big\u{1b}".into(),
                bytes: 150 << 20,
            }],
        );
        assert_eq!(
            w,
            "seal: pin: warning: ./big\\u{001b} is 150.0 MiB (over 100 MiB): every verification \
             of it, and every open in the sealed view, reads all of it\n"
        );
    }
}
