//! Gate decisions under a machine policy (policy.rs), on real temporary
//! trees: strictest wins, extra surfaces, protected paths, forced read-only,
//! a required Seal, and what the audit log says about each.

use std::path::Path;
use std::sync::Arc;

use super::tests::{WHO, pin, project, served, shows, vp, write};
use super::*;
use crate::policy::{MachinePolicy, parse};
use seal_core::lockfile::{Lockfile, Policy};

fn machine(json: &str) -> Arc<MachinePolicy> {
    let mut m = parse(json.as_bytes(), Path::new("/etc/seal/policy.json")).unwrap();
    m.file = Some("/etc/seal/policy.json".into());
    Arc::new(m)
}

/// A gate under `machine` with an audit log at `log` (the lockfile from
/// the disk, or the implied empty one when there is none).
fn gate_under(root: &Path, machine: Arc<MachinePolicy>, log: &Path) -> Gate {
    let fd = seal_core::fs::open_project(root).unwrap();
    let (bytes, implied) = crate::policy::lockfile_bytes(fd.as_fd(), &machine).unwrap();
    Gate::new(GateConfig {
        project: Arc::new(fd),
        lockfile: Lockfile::parse(&bytes).unwrap(),
        lockfile_bytes: bytes,
        links: LinkRule::new(Path::new("/view"), &[root.to_path_buf()]),
        audit: Some(AuditLog::open(log).unwrap()),
        feed: None,
    })
    .with_machine(machine, implied)
}

fn records(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn strictest_wins_against_every_project_policy() {
    let floors = [
        (r#"{"version": 1}"#, None),
        (
            r#"{"version": 1, "minimumPolicy": "warn"}"#,
            Some(Policy::Warn),
        ),
        (
            r#"{"version": 1, "minimumPolicy": "block"}"#,
            Some(Policy::Block),
        ),
    ];
    for (json, floor) in floors {
        for project_policy in [Policy::Warn, Policy::Block] {
            let t = project();
            let logs = tempfile::tempdir().unwrap();
            let log = logs.path().join("audit-strictest.jsonl");
            pin(t.path(), &[".claude/skills/*"], project_policy);
            let g = gate_under(t.path(), machine(json), &log);
            write(t.path(), ".claude/skills/review/SKILL.md", "tampered");
            let blocks = project_policy == Policy::Block || floor == Some(Policy::Block);
            let case = format!("machine {floor:?}, project {project_policy:?}");
            assert_eq!(shows(&g, ".claude/skills/review"), !blocks, "{case}");
            assert_eq!(
                served(&g, ".claude/skills/review/SKILL.md").is_some(),
                !blocks,
                "{case}"
            );
            let opened = records(&log);
            let last = opened.last().unwrap();
            assert_eq!(last["op"], "open", "{case}");
            assert_eq!(
                last["event"],
                if blocks { "hide" } else { "warn" },
                "{case}"
            );
            assert_eq!(
                last["policy"],
                if blocks { "block" } else { "warn" },
                "{case}"
            );
            let by_machine = project_policy == Policy::Warn && floor == Some(Policy::Block);
            assert_eq!(
                last["policy_source"],
                if by_machine { "machine" } else { "project" },
                "{case}"
            );
        }
    }
}

#[test]
fn extra_surfaces_are_artifacts_the_lockfile_must_cover() {
    let t = project();
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Block);
    write(t.path(), ".acme/prompts/deploy.md", "do things");
    write(t.path(), ".acme/notes.txt", "ordinary");
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("audit-surfaces.jsonl");
    let plain = gate_under(t.path(), machine(r#"{"version": 1}"#), &log);
    assert!(
        shows(&plain, ".acme/prompts/deploy.md"),
        "no policy: ordinary"
    );
    let g = gate_under(
        t.path(),
        machine(r#"{"version": 1, "extraSurfaces": [".acme/prompts/*"]}"#),
        &log,
    );
    assert!(shows(&g, ".acme"), "a container");
    assert!(shows(&g, ".acme/prompts"), "a container");
    assert!(shows(&g, ".acme/notes.txt"), "beside the surface: ordinary");
    assert!(!shows(&g, ".acme/prompts/deploy.md"));
    assert!(served(&g, ".acme/prompts/deploy.md").is_none());
    // Sealing it in seal.json makes it a verified bundle like any other.
    pin(
        t.path(),
        &[".claude/skills/*", "CLAUDE.md", ".acme/prompts/*"],
        Policy::Block,
    );
    assert_eq!(served(&g, ".acme/prompts/deploy.md").unwrap(), b"do things");
}

#[test]
fn protected_paths_refuse_writes_and_record_them() {
    let t = project();
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Block);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("audit-protected.jsonl");
    let g = gate_under(
        t.path(),
        machine(
            r#"{"version": 1, "protectedPaths": [".git/hooks/**", ".git/config",
                ".github/workflows/**", ".vscode/tasks.json"]}"#,
        ),
        &log,
    );
    let may = |path: &str, change: Change| {
        g.ask(
            &vp(path),
            Op::Change {
                change,
                op: "test",
                writable: true,
            },
            WHO,
        )
        .yes
    };
    let away = Change::MoveAway {
        holds_protected: false,
    };
    assert!(!may(".git/hooks/pre-commit", Change::Make));
    assert!(!may(".git/hooks/pre-commit", Change::Modify));
    assert!(!may(".git/hooks", Change::Remove));
    assert!(!may(".git/hooks", Change::MakeDir));
    assert!(!may(".git/config", Change::Modify));
    assert!(!may(".github/workflows/ci.yml", Change::Make));
    assert!(!may(".vscode/tasks.json", Change::Make));
    // On the way: may be a directory, never replaced or moved away (a new
    // `.git` is refused anyway, by the built-in git rule).
    assert!(may(".github", Change::MakeDir));
    assert!(!may(".git", Change::MakeDir));
    assert!(!may(".git", Change::Make));
    assert!(!may(".git", away));
    assert!(!may(".github", away));
    // Beside them: ordinary.
    assert!(may(".git/objects/ab", Change::Make));
    assert!(may(".vscode/settings.json", Change::Modify));
    assert!(may("src/main.rs", Change::Modify));
    // The built-in rules stay, with their own source.
    assert!(!may("seal.json", Change::Modify));
    let denied = records(&log);
    assert!(denied.iter().all(|r| r["event"] == "deny-write"));
    let hook = &denied[0];
    assert_eq!(hook["path"], "./.git/hooks/pre-commit");
    assert_eq!(hook["policy_source"], "machine");
    assert!(hook["outcome"].as_str().unwrap().contains("machine policy"));
    assert_eq!(denied.last().unwrap()["policy_source"], "built-in");
}

#[test]
fn forced_read_only_refuses_every_change() {
    let t = project();
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Block);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("audit-ro.jsonl");
    let g = gate_under(
        t.path(),
        machine(r#"{"version": 1, "readOnly": true}"#),
        &log,
    );
    for (path, change) in [
        ("src/main.rs", Change::Modify),
        ("src/new.rs", Change::Make),
        ("src", Change::MakeDir),
        ("src/main.rs", Change::Remove),
    ] {
        assert!(
            !g.ask(
                &vp(path),
                Op::Change {
                    change,
                    op: "test",
                    writable: true,
                },
                WHO
            )
            .yes,
            "{path} {change:?}"
        );
    }
    let denied = records(&log);
    assert_eq!(denied.len(), 4);
    assert!(
        denied
            .iter()
            .all(|r| r["event"] == "deny-write" && r["policy_source"] == "machine")
    );
}

#[test]
fn a_required_seal_treats_a_project_without_one_as_the_empty_lockfile() {
    let t = project();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("audit-required.jsonl");
    let g = gate_under(
        t.path(),
        machine(r#"{"version": 1, "requireSeal": true}"#),
        &log,
    );
    assert!(shows(&g, "src/main.rs"));
    assert!(shows(&g, ".claude"), "containers stay");
    assert!(!shows(&g, ".claude/skills/review"));
    assert!(!shows(&g, "CLAUDE.md"));
    assert!(served(&g, "CLAUDE.md").is_none());
    let hidden = records(&log);
    assert!(!hidden.is_empty());
    for r in &hidden {
        assert_eq!(r["event"], "hide", "{r}");
        assert_eq!(r["policy"], "block", "{r}");
        assert_eq!(r["policy_source"], "machine", "{r}");
    }
    // A seal.json written later is the project's from then on.
    pin(t.path(), &[".claude/skills/*", "CLAUDE.md"], Policy::Warn);
    assert_eq!(served(&g, "CLAUDE.md").unwrap(), b"instructions");
    // And removing it fails closed, as always.
    std::fs::remove_file(t.path().join("seal.json")).unwrap();
    assert!(!shows(&g, ".claude/skills/review"));
    assert_eq!(records(&log).last().unwrap()["event"], "fail-closed");
}
