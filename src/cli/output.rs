//! Rendering results as text: the human summaries on stderr and the
//! `verify --json` document on stdout, in the reference CLI's formats.
//! Every name is escaped for the terminal; JSON strings use Go escaping.

use std::fmt::Write;

use crate::core::escape::escaped;
use crate::core::json::{newline_indent, write_go_string, write_string_array};
pub use crate::core::plan::{PinKind, PinRow};
use crate::core::verify::{BundleReport, BundleState, ProjectReport};

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
    let mut rows: Vec<&BundleReport> = report
        .bundles
        .iter()
        .filter(|b| b.state != BundleState::Verified)
        .collect();
    // By the name as shown: a root that cannot be a key sorts among the keys.
    rows.sort_by_cached_key(|b| b.name.as_display());
    for b in rows {
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
/// `- removed` lines, then the unchanged tally.
pub fn pin_summary(rows: &[PinRow], added_patterns: &[String], verbose: bool) -> String {
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
    let mut unchanged = 0;
    for row in sorted {
        let (marker, label) = match row.kind {
            PinKind::New => ('+', "new"),
            PinKind::Modified => ('~', "modified"),
            PinKind::Removed => ('-', "removed"),
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
        if let (true, Some(detail)) = (verbose, &row.detail) {
            file_lines(&mut out, detail);
        }
    }
    let _ = writeln!(out, "\n{unchanged} unchanged");
    out
}

/// The `seal init` proposal (reference format).
pub fn init_summary(
    patterns: &[String],
    bundles: &[(String, Vec<String>)],
    verbose: bool,
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
        let _ = writeln!(out, "  + {}  ({} files)", escaped(key), files.len());
        if verbose {
            for f in files {
                let _ = writeln!(out, "    {}", escaped(f));
            }
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lockfile::Policy;
    use crate::core::paths::BundleKey;
    use crate::core::verify::{Outcome, RootName};

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
                detail: None,
            },
            PinRow {
                key: "./a".into(),
                kind: PinKind::New,
                file_count: 1,
                detail: None,
            },
            PinRow {
                key: "./c".into(),
                kind: PinKind::Removed,
                file_count: 0,
                detail: None,
            },
            PinRow {
                key: "./d".into(),
                kind: PinKind::Unchanged,
                file_count: 2,
                detail: None,
            },
        ];
        assert_eq!(
            pin_summary(&rows, &[], false),
            "  + new       ./a  (1 files)\n  ~ modified  ./b  (3 files)\n  - removed   ./c\n\n1 unchanged\n"
        );
    }
}
