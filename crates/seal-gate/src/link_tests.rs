//! Linked and nested surfaces decided by the gate on real temporary trees,
//! without a mount: each convention with its target untouched, tampered and
//! pointing out of the project (the kernel's part, following the link into
//! the view, is proved in tests/mount_surfaces.rs). The gate's view is
//! mounted at `/view`, elsewhere than the project.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Duration;

use super::tests::{WHO, gate, lookup, pin, served, vp, write};
use super::*;
use crate::links::LinkState;
use seal_core::fs::EntryKind;
use seal_core::lockfile::Policy;

fn link(root: &Path, target: &str, rel: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&p);
    std::os::unix::fs::symlink(target, p).unwrap();
}

/// The decision about the symlink at `rel` (its target read from disk), in
/// a directory the view's feeds watch and would tell the kernel about.
fn link_decision(g: &Gate, root: &Path, rel: &str) -> Verdict {
    let target = std::fs::read_link(root.join(rel)).unwrap();
    let op = Op::Lookup {
        on_disk: Some(EntryKind::Symlink),
        link_target: Some(target.as_os_str()),
        kernel: Kernel {
            told: true,
            dir_watched: true,
            volatile_attrs: false,
        },
    };
    g.ask(&vp(rel), op, WHO)
}

/// Whether the kernel keeps nothing of `d`: every lookup reaches the gate.
fn never_kept(d: &Verdict) -> bool {
    d.keep.entry == Duration::ZERO && !d.keep.settled
}

/// Whether the view may make `change` at `rel`.
fn may_change(g: &Gate, rel: &str, change: Change) -> bool {
    let op = Op::Change {
        change,
        op: "test",
        writable: true,
    };
    g.ask(&vp(rel), op, WHO).yes
}

/// What a readlink of `rel` through the view serves.
fn readlink(g: &Gate, root: &Path, rel: &str) -> Option<OsString> {
    let target = std::fs::read_link(root.join(rel)).unwrap();
    g.link_target(&vp(rel), target.into_os_string())
}

fn state(d: &Verdict) -> Option<LinkState> {
    match d.reason {
        Reason::SurfaceLink(s) => Some(s),
        _ => None,
    }
}

#[test]
fn an_instruction_file_linked_to_another_reads_the_verified_target_or_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, "AGENTS.md", "approved instructions");
    link(root, "AGENTS.md", "CLAUDE.md");
    link(root, "../AGENTS.md", "docs/GEMINI.md");
    pin(root, &["AGENTS.md"], Policy::Block);
    let g = gate(root);
    for rel in ["CLAUDE.md", "docs/GEMINI.md"] {
        let d = link_decision(&g, root, rel);
        assert!(d.yes, "{rel}: {d:?}");
        assert!(never_kept(&d), "never remembered by the kernel: {d:?}");
        assert_eq!(state(&d), Some(LinkState::Followed));
    }
    assert_eq!(readlink(&g, root, "CLAUDE.md").unwrap(), "AGENTS.md");
    assert_eq!(served(&g, "AGENTS.md").unwrap(), b"approved instructions");
    // Tampered: the link stays (it is decided where it leads), the target
    // does not open, so nothing is read through it.
    write(root, "AGENTS.md", "tampered");
    assert!(link_decision(&g, root, "CLAUDE.md").yes);
    assert!(served(&g, "AGENTS.md").is_none());
    // Pointing out of the project: hidden, and readlink refuses.
    link(root, "/etc/hostname", "CLAUDE.md");
    let d = link_decision(&g, root, "CLAUDE.md");
    assert!(!d.yes);
    assert_eq!(state(&d), Some(LinkState::Outside));
    assert_eq!(readlink(&g, root, "CLAUDE.md"), None);
    link(root, "../../../../../../../../etc/hostname", "CLAUDE.md");
    assert_eq!(
        state(&link_decision(&g, root, "CLAUDE.md")),
        Some(LinkState::Outside)
    );
}

#[test]
fn a_link_to_content_no_sealed_root_covers_is_hidden_until_it_is_sealed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, "docs/guide.md", "a guide");
    link(root, "docs/guide.md", "GEMINI.md");
    pin(root, &[], Policy::Block);
    let g = gate(root);
    let d = link_decision(&g, root, "GEMINI.md");
    assert!(!d.yes);
    assert_eq!(state(&d), Some(LinkState::Unsealed));
    let judged = link_decision(&g, root, "GEMINI.md").link.unwrap();
    assert_eq!(judged.missing, ["docs/guide.md"]);
    // Under warn too: what the link leads to is not an artifact at all.
    pin(root, &[], Policy::Warn);
    assert!(!link_decision(&gate(root), root, "GEMINI.md").yes);
    pin(root, &["docs/guide.md"], Policy::Block);
    assert!(link_decision(&gate(root), root, "GEMINI.md").yes);
}

#[test]
fn linked_skills_folders_are_decided_where_they_lead() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, "skills/review/SKILL.md", "approved skill");
    link(root, "../.agents/skills", ".claude/skills");
    link(root, "../skills", ".agents/skills");
    pin(root, &["skills/*"], Policy::Block);
    let g = gate(root);
    for rel in [".claude/skills", ".agents/skills"] {
        let d = link_decision(&g, root, rel);
        assert!(d.yes, "{rel}: {d:?}");
        assert!(never_kept(&d), "{rel}: {d:?}");
    }
    assert!(lookup(&g, "skills/review", EntryKind::Dir, None));
    assert_eq!(
        served(&g, "skills/review/SKILL.md").unwrap(),
        b"approved skill"
    );
    // A new skill added where the links lead is decided there: unverified.
    write(root, "skills/new/SKILL.md", "unpinned");
    assert!(!lookup(&g, "skills/new", EntryKind::Dir, None));
    // Tampered: the links stay, the skill is gone from the view.
    write(root, "skills/review/SKILL.md", "tampered");
    assert!(link_decision(&g, root, ".claude/skills").yes);
    assert!(!lookup(&g, "skills/review", EntryKind::Dir, None));
    // Without `skills/*` sealed the links are hidden: `.claude/skills/x`
    // must never become the ordinary `skills/x`.
    pin(root, &[], Policy::Block);
    let g = gate(root);
    for rel in [".claude/skills", ".agents/skills"] {
        let d = link_decision(&g, root, rel);
        assert_eq!(state(&d), Some(LinkState::Unsealed), "{rel}");
    }
    // Out of the project, to a file, dangling, in a loop.
    let cases = [
        ("/usr/share", LinkState::Outside),
        ("../skills/review/SKILL.md", LinkState::NotADirectory),
        ("../nowhere", LinkState::Dangling),
        ("skills", LinkState::Loop),
    ];
    pin(root, &["skills/*"], Policy::Block);
    let g = gate(root);
    for (target, want) in cases {
        link(root, target, ".claude/skills");
        let d = link_decision(&g, root, ".claude/skills");
        assert!(!d.yes, "{target}");
        assert_eq!(state(&d), Some(want), "{target}");
        assert_eq!(readlink(&g, root, ".claude/skills"), None, "{target}");
    }
}

#[test]
fn a_linked_agent_directory_needs_every_entry_of_its_target_sealed() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, "shared/claude/settings.json", "{}");
    write(root, "shared/claude/skills/s/SKILL.md", "s");
    link(root, "shared/claude", ".claude");
    // The skills alone are not enough: `.claude/notes.md` would be the
    // ordinary `shared/claude/notes.md`.
    pin(root, &["shared/claude/skills/*"], Policy::Block);
    assert_eq!(
        state(&link_decision(&gate(root), root, ".claude")),
        Some(LinkState::Unsealed)
    );
    pin(root, &["shared/claude/*"], Policy::Block);
    assert!(link_decision(&gate(root), root, ".claude").yes);
}

#[test]
fn an_absolute_link_into_the_project_is_served_as_the_equivalent_relative_one() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, "AGENTS.md", "a");
    write(root, "skills/s/SKILL.md", "s");
    link(
        root,
        &root.join("AGENTS.md").display().to_string(),
        "CLAUDE.md",
    );
    link(
        root,
        &root.join("skills").display().to_string(),
        ".claude/skills",
    );
    // Through the mountpoint's own path as well.
    link(root, "/view/AGENTS.md", "pkg/GEMINI.md");
    pin(root, &["AGENTS.md", "skills/*"], Policy::Block);
    let g = gate(root);
    assert!(link_decision(&g, root, "CLAUDE.md").yes);
    assert_eq!(readlink(&g, root, "CLAUDE.md").unwrap(), "AGENTS.md");
    assert_eq!(readlink(&g, root, ".claude/skills").unwrap(), "../skills");
    assert_eq!(readlink(&g, root, "pkg/GEMINI.md").unwrap(), "../AGENTS.md");
    // An ordinary link keeps its target as it is.
    link(root, "../AGENTS.md", "src/notes");
    assert_eq!(readlink(&g, root, "src/notes").unwrap(), "../AGENTS.md");
}

#[test]
fn a_symlink_inside_a_sealed_root_is_still_a_mismatch() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, ".claude/skills/x/SKILL.md", "x");
    pin(root, &[".claude/skills/*"], Policy::Block);
    link(root, "SKILL.md", ".claude/skills/x/link.md");
    let g = gate(root);
    assert!(!lookup(&g, ".claude/skills/x", EntryKind::Dir, None));
    // A pattern producing a link itself: SPEC's Mismatch, not a linked
    // surface.
    std::fs::remove_file(root.join(".claude/skills/x/link.md")).unwrap();
    link(root, "x", ".claude/skills/y");
    let d = link_decision(&g, root, ".claude/skills/y");
    assert!(!d.yes);
    assert!(state(&d).is_none(), "{d:?}");
}

#[test]
fn nested_surfaces_are_gated_and_protected_at_any_depth() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    write(root, "packages/a/.claude/skills/s/SKILL.md", "s");
    write(root, "packages/a/.mcp.json", "{}");
    write(root, "tools/bot/.gemini/agents/x.md", "x");
    write(root, "extensions/cli/.continue/agents/y.md", "y");
    write(root, "packages/a/src/lib.rs", "");
    pin(root, &[], Policy::Block);
    let g = gate(root);
    for rel in [
        "packages/a/.claude/skills/s",
        "tools/bot/.gemini/agents/x.md",
        "extensions/cli/.continue/agents",
    ] {
        assert!(!lookup(&g, rel, EntryKind::Dir, None), "{rel}");
    }
    assert!(!lookup(&g, "packages/a/.mcp.json", EntryKind::File, None));
    assert!(lookup(&g, "packages/a/.claude", EntryKind::Dir, None));
    assert!(lookup(&g, "packages/a/src", EntryKind::Dir, None));
    // The writable view: nothing may be made at a nested surface, existing
    // or not; the directories on the way may be made.
    for rel in [
        "packages/b/.claude/skills/new",
        "packages/b/.mcp.json",
        "packages/b/.vscode/mcp.json",
        "packages/b/.github/extensions/e",
        "packages/b/QWEN.md",
        "packages/b/.roo/rules/r.md",
    ] {
        assert!(!may_change(&g, rel, Change::Make), "{rel}");
    }
    assert!(may_change(&g, "packages/b/.claude", Change::MakeDir));
    // Moving a package would move its surfaces.
    let fd = seal_core::fs::open_project(root).unwrap();
    let raw = |s: &str| vp(s).raw;
    assert!(assess::holds_protected(fd.as_fd(), &raw("packages")));
    assert!(assess::holds_protected(fd.as_fd(), &raw("tools")));
    write(root, "plain/.github/workflows/ci.yml", "");
    assert!(!assess::holds_protected(fd.as_fd(), &raw("plain")));
    // Sealed per package, it shows.
    pin(
        root,
        &[
            "packages/a/.claude/skills/*",
            "packages/a/.mcp.json",
            "tools/bot/.gemini/agents/*",
            "extensions/cli/.continue/agents",
        ],
        Policy::Block,
    );
    let g = gate(root);
    assert_eq!(
        served(&g, "packages/a/.claude/skills/s/SKILL.md").unwrap(),
        b"s"
    );
    assert_eq!(served(&g, "tools/bot/.gemini/agents/x.md").unwrap(), b"x");
}
